//! A helper process that runs functions of a standalone C program on request: how the
//! interpreter calls foreign functions (user C code) without letting a fault of that code
//! end this process.
//!
//! The program ([`ForeignHelper::compile`]) is written by the caller: a `main` that reads
//! requests from stdin and answers on stdout, in native byte order,
//!
//! ```text
//! request:  u32 function, u32 count, count * (the function's argument bytes)
//! answer:   count * (the function's result bytes)
//! ```
//!
//! flushing after each answer. The process is started on the first call and kept for the
//! next ones; a call that does not get its answer within its time limit kills it, and one
//! whose process ends (a signal, an exit) reports how it ended. Either way the next call
//! starts a fresh process. The process dies with this one and is killed on SIGINT/SIGTERM
//! (see `cleanup`).

use std::io::{Read, Write};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{channel, Receiver, RecvTimeoutError, Sender};
use std::time::Duration;

use crate::cleanup::TempDir;
use crate::{CompilerConfig, RuntimeError};

/// A compiled helper program and, once called, its running process.
pub struct ForeignHelper {
    executable: PathBuf,
    /// What errors name the program by.
    name: String,
    running: Option<Running>,
    _dir: TempDir,
}

/// A running helper: its stdin, and a thread reading its answers.
struct Running {
    child: Child,
    stdin: ChildStdin,
    /// Asks the reader thread for an answer of this many bytes.
    want: Sender<usize>,
    answers: Receiver<std::io::Result<Vec<u8>>>,
}

impl ForeignHelper {
    /// Compiles the C program `source` (a `main` speaking the protocol above) with
    /// `config`'s compiler at `-O2` (none of `config`'s flags: the interpreter's results must
    /// not depend on `-ffast-math` and friends). `name` names it in errors.
    pub fn compile(
        source: &str,
        name: &str,
        config: &CompilerConfig,
    ) -> Result<ForeignHelper, RuntimeError> {
        let dir = TempDir::new()?;
        let source_path = dir.path().join("foreign.c");
        std::fs::write(&source_path, source).map_err(RuntimeError::io(format!(
            "writing {}",
            source_path.display()
        )))?;
        let executable = dir.path().join("foreign");
        let mut command = Command::new(&config.compiler);
        command
            .env("TMPDIR", dir.path())
            .args(["-O2", "-o"])
            .arg(&executable)
            .arg(&source_path)
            .arg("-lm");
        let result =
            crate::cleanup::output(&mut command).map_err(|source| match source.kind() {
                std::io::ErrorKind::NotFound => RuntimeError::CompilerNotFound {
                    compiler: config.compiler.clone(),
                    source,
                },
                _ => RuntimeError::Io {
                    context: format!("starting the C compiler `{}`", config.compiler),
                    source,
                },
            })?;
        if !result.status.success() {
            return Err(RuntimeError::CompilationFailed {
                command: format!("{} -O2 -o foreign foreign.c -lm", config.compiler),
                stderr: String::from_utf8_lossy(&result.stderr).into_owned(),
                source_path: None,
            });
        }
        Ok(ForeignHelper {
            executable,
            name: name.to_string(),
            running: None,
            _dir: dir,
        })
    }

    /// Calls function `function` `count` times on `args` (the argument bytes of each call,
    /// one after another) and returns the `answer_len` bytes of the results; waits at most
    /// `limit` for them.
    pub fn call(
        &mut self,
        function: u32,
        count: u32,
        args: &[u8],
        answer_len: usize,
        limit: Duration,
    ) -> Result<Vec<u8>, RuntimeError> {
        if self.running.is_none() {
            self.running = Some(self.start()?);
        }
        let running = self.running.as_mut().expect("started above");
        let mut request = Vec::with_capacity(8 + args.len());
        request.extend_from_slice(&function.to_ne_bytes());
        request.extend_from_slice(&count.to_ne_bytes());
        request.extend_from_slice(args);
        let sent = running.want.send(answer_len).is_ok()
            && running.stdin.write_all(&request).is_ok()
            && running.stdin.flush().is_ok();
        let answer = if sent {
            running.answers.recv_timeout(limit)
        } else {
            Err(RecvTimeoutError::Disconnected)
        };
        match answer {
            Ok(Ok(bytes)) => Ok(bytes),
            Ok(Err(_)) | Err(RecvTimeoutError::Disconnected) => Err(self.ended()),
            Err(RecvTimeoutError::Timeout) => {
                self.stop();
                Err(RuntimeError::TimedOut {
                    entry: self.name.clone(),
                    seconds: limit.as_secs_f64(),
                })
            }
        }
    }

    fn start(&self) -> Result<Running, RuntimeError> {
        let mut command = Command::new(&self.executable);
        command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = crate::cleanup::spawn_registered(&mut command).map_err(
            RuntimeError::io(format!("starting {}", self.executable.display())),
        )?;
        let stdin = child.stdin.take().expect("piped");
        let mut stdout = child.stdout.take().expect("piped");
        let (want, wanted) = channel::<usize>();
        let (answer, answers) = channel();
        std::thread::Builder::new()
            .name("shine-foreign".into())
            .spawn(move || {
                for len in wanted {
                    let mut buf = vec![0u8; len];
                    let r = stdout.read_exact(&mut buf).map(|()| buf);
                    let failed = r.is_err();
                    if answer.send(r).is_err() || failed {
                        break;
                    }
                }
            })
            .map_err(RuntimeError::io(
                "starting the reader of the foreign helper",
            ))?;
        Ok(Running {
            child,
            stdin,
            want,
            answers,
        })
    }

    /// The error of a process that ended (or closed its output) before answering.
    fn ended(&mut self) -> RuntimeError {
        use std::os::unix::process::ExitStatusExt;
        let Some(mut running) = self.running.take() else {
            return RuntimeError::InvalidArgument("the foreign helper is not running".into());
        };
        drop(running.stdin);
        let mut stderr = String::new();
        if let Some(mut e) = running.child.stderr.take() {
            let _ = e.read_to_string(&mut stderr);
        }
        let status = running.child.wait();
        crate::cleanup::unregister_child(running.child.id());
        let entry = self.name.clone();
        match status {
            Ok(s) if s.signal().is_some() => RuntimeError::ProgramKilled {
                entry,
                signal: crate::error::signal_name(s.signal().unwrap_or_default()),
                stderr,
            },
            Ok(s) => RuntimeError::ProgramFailed {
                entry,
                status: s.to_string(),
                stderr,
            },
            Err(e) => RuntimeError::Io {
                context: format!("waiting for {}", self.executable.display()),
                source: e,
            },
        }
    }

    /// Kills the running process, if any.
    fn stop(&mut self) {
        if let Some(mut running) = self.running.take() {
            let _ = running.child.kill();
            let _ = running.child.wait();
            crate::cleanup::unregister_child(running.child.id());
        }
    }
}

impl Drop for ForeignHelper {
    fn drop(&mut self) {
        self.stop();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Function 0 doubles an `int`; function 1 divides by zero; function 2 never answers.
    const SOURCE: &str = r#"
#include <stdio.h>
#include <stdint.h>
int main(void) {
  uint32_t head[2];
  while (fread(head, 4, 2, stdin) == 2) {
    for (uint32_t k = 0; k < head[1]; k++) {
      int x;
      if (fread(&x, 4, 1, stdin) != 1) return 1;
      volatile int zero = 0;
      volatile int forever = 1;
      if (head[0] == 1) x = x / zero;
      if (head[0] == 2) while (forever) {}
      x = 2 * x;
      fwrite(&x, 4, 1, stdout);
    }
    fflush(stdout);
  }
  return 0;
}
"#;

    fn ints(xs: &[i32]) -> Vec<u8> {
        xs.iter().flat_map(|x| x.to_ne_bytes()).collect()
    }

    #[test]
    fn calls_crashes_and_hangs() {
        let config = CompilerConfig::default();
        let mut h = ForeignHelper::compile(SOURCE, "helper", &config).unwrap();
        let second = Duration::from_secs(5);
        let out = h.call(0, 3, &ints(&[1, 2, -5]), 12, second).unwrap();
        assert_eq!(out, ints(&[2, 4, -10]));
        let err = h.call(1, 1, &ints(&[7]), 4, second).unwrap_err();
        assert!(err.to_string().contains("SIGFPE"), "{err}");
        // a fresh process answers again
        assert_eq!(h.call(0, 1, &ints(&[4]), 4, second).unwrap(), ints(&[8]));
        let err = h
            .call(2, 1, &ints(&[1]), 4, Duration::from_millis(300))
            .unwrap_err();
        assert!(err.to_string().contains("0.3 s"), "{err}");
        assert_eq!(h.call(0, 1, &ints(&[5]), 4, second).unwrap(), ints(&[10]));
    }

    #[test]
    fn a_missing_compiler_is_an_error() {
        let config = CompilerConfig::default().with_compiler("/nonexistent/cc");
        let err = ForeignHelper::compile(SOURCE, "helper", &config)
            .err()
            .expect("no compiler");
        assert!(
            matches!(err, RuntimeError::CompilerNotFound { .. }),
            "{err}"
        );
    }
}
