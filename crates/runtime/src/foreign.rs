//! A helper process that runs functions of a standalone C program on request: how the
//! interpreter calls foreign functions (user C code) without letting a fault of that code
//! end this process.
//!
//! The program ([`ForeignHelper::compile`]) is written by the caller: a `main` that reads
//! requests from file descriptor [`REQUEST_FD`] and answers on [`ANSWER_FD`] (a private pair
//! of pipes: its stdin is `/dev/null`, and what it prints on stdout or stderr goes to this
//! process's stderr, so that a `printf` of user code never reaches the protocol), in native
//! byte order,
//!
//! ```text
//! request:  u32 function, u32 count, u64 limit (microseconds per call; 0: none),
//!           count * (the function's argument bytes)
//! answer:   count * (the function's result bytes), then u32 ANSWER_END
//! ```
//!
//! The program stops each call that runs past the limit (`setitimer` arms `SIGALRM` around
//! it, whose default action ends the process); an answer without its end marker (the
//! process called `exit`) is an error. The process is started on the first call and kept
//! for the next ones; a call that does not get its answer within `count` times its limit
//! (and a second) kills it, and one whose process ends (a signal, an exit) reports how it
//! ended. Either way the next call starts a fresh process. The process dies with this one
//! and is killed on SIGINT/SIGTERM (see `cleanup`).

use std::fs::File;
use std::io::{Read, Write};
use std::os::fd::{AsFd, AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{channel, Receiver, RecvTimeoutError, Sender};
use std::time::Duration;

use crate::cleanup::TempDir;
use crate::{CompilerConfig, RuntimeError};

/// The file descriptor the helper reads requests from.
pub const REQUEST_FD: i32 = 3;
/// The file descriptor the helper writes answers to.
pub const ANSWER_FD: i32 = 4;
/// The word that ends every answer (`"END!"` in ASCII, native order).
pub const ANSWER_END: u32 = 0x2144_4e45;

/// A compiled helper program and, once called, its running process.
pub struct ForeignHelper {
    executable: PathBuf,
    /// What errors name the program by.
    name: String,
    running: Option<Running>,
    _dir: TempDir,
}

/// A running helper: the pipe of its requests, and a thread reading its answers.
struct Running {
    child: Child,
    requests: File,
    /// Asks the reader thread for an answer of this many bytes (before the end marker).
    want: Sender<usize>,
    answers: Receiver<std::io::Result<Vec<u8>>>,
}

impl ForeignHelper {
    /// Compiles the C translation units `sources` (together, one `main` speaking the
    /// protocol above) with `config`'s compiler at `-O2` (none of `config`'s flags: the
    /// interpreter's results must not depend on `-ffast-math` and friends). `name` names it
    /// in errors.
    pub fn compile(
        sources: &[&str],
        name: &str,
        config: &CompilerConfig,
    ) -> Result<ForeignHelper, RuntimeError> {
        let dir = TempDir::new()?;
        let mut paths = Vec::new();
        for (k, source) in sources.iter().enumerate() {
            let path = dir.path().join(format!("foreign{k}.c"));
            std::fs::write(&path, source)
                .map_err(RuntimeError::io(format!("writing {}", path.display())))?;
            paths.push(path);
        }
        let executable = dir.path().join("foreign");
        let mut command = Command::new(&config.compiler);
        command
            .env("TMPDIR", dir.path())
            .args(["-O2", "-o"])
            .arg(&executable)
            .args(&paths)
            .arg("-lm");
        crate::cc::run(&mut command, &config.compiler)?;
        Ok(ForeignHelper {
            executable,
            name: name.to_string(),
            running: None,
            _dir: dir,
        })
    }

    /// Calls function `function` `count` times on `args` (the argument bytes of each call,
    /// one after another) and returns the `answer_len` bytes of the results; each call may
    /// take at most `limit`.
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
        let limit_us = u64::try_from(limit.as_micros()).unwrap_or(u64::MAX);
        let mut request = Vec::with_capacity(16 + args.len());
        request.extend_from_slice(&function.to_ne_bytes());
        request.extend_from_slice(&count.to_ne_bytes());
        request.extend_from_slice(&limit_us.to_ne_bytes());
        request.extend_from_slice(args);
        let sent = running.want.send(answer_len).is_ok()
            && running.requests.write_all(&request).is_ok()
            && running.requests.flush().is_ok();
        // the helper stops a call past its limit itself; this is the backstop
        let batch = limit
            .saturating_mul(count.max(1))
            .saturating_add(Duration::from_secs(1));
        let answer = if sent {
            running.answers.recv_timeout(batch)
        } else {
            Err(RecvTimeoutError::Disconnected)
        };
        match answer {
            Ok(Ok(bytes)) => Ok(bytes),
            Ok(Err(_)) | Err(RecvTimeoutError::Disconnected) => Err(self.ended(limit)),
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
        let io = |what: &str| RuntimeError::io(format!("{what} for {}", self.executable.display()));
        let (request_read, requests) = pipe().map_err(io("creating a pipe"))?;
        let (mut answer_read, answer_write) = pipe().map_err(io("creating a pipe"))?;
        // what the helper prints goes to this process's stderr
        let stdout = std::io::stderr()
            .as_fd()
            .try_clone_to_owned()
            .map_err(io("duplicating stderr"))?;
        let mut command = Command::new(&self.executable);
        command
            .stdin(Stdio::null())
            .stdout(Stdio::from(stdout))
            .stderr(Stdio::inherit());
        let (from, to) = (request_read.as_raw_fd(), answer_write.as_raw_fd());
        // SAFETY: the closure runs in the child between fork and exec and calls only `dup2`,
        // which is async-signal-safe; `from` and `to` are at least 10 (see `pipe`), so the
        // first `dup2` cannot overwrite the second's source.
        unsafe {
            command.pre_exec(move || {
                if libc::dup2(from, REQUEST_FD) < 0 || libc::dup2(to, ANSWER_FD) < 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
        let child = crate::cleanup::spawn_registered(&mut command).map_err(RuntimeError::io(
            format!("starting {}", self.executable.display()),
        ))?;
        // the child's ends: closed here, so that its end is seen as the end of the pipes
        drop((request_read, answer_write));
        let (want, wanted) = channel::<usize>();
        let (answer, answers) = channel();
        std::thread::Builder::new()
            .name("shine-foreign".into())
            .spawn(move || {
                for len in wanted {
                    let r = read_answer(&mut answer_read, len);
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
            requests: File::from(requests),
            want,
            answers,
        })
    }

    /// The error of a process that ended (or closed its answers) before answering: a call
    /// stopped at its time `limit` (`SIGALRM`), another signal, or an exit.
    fn ended(&mut self, limit: Duration) -> RuntimeError {
        use std::os::unix::process::ExitStatusExt;
        let Some(mut running) = self.running.take() else {
            return RuntimeError::InvalidArgument("the foreign helper is not running".into());
        };
        drop(running.requests);
        let status = running.child.wait();
        crate::cleanup::unregister_child(running.child.id());
        let entry = self.name.clone();
        match status {
            Ok(s) if s.signal() == Some(libc::SIGALRM) => RuntimeError::TimedOut {
                entry,
                seconds: limit.as_secs_f64(),
            },
            Ok(s) if s.signal().is_some() => RuntimeError::ProgramKilled {
                entry,
                signal: crate::error::signal_name(s.signal().unwrap_or_default()),
                stderr: String::new(),
            },
            Ok(s) => RuntimeError::ExitedEarly {
                entry,
                status: s.to_string(),
                stderr: String::new(),
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

/// An answer of `len` bytes and its end marker; an error when the pipe ends first or the
/// marker is missing (the answer is not the helper's).
fn read_answer(answers: &mut File, len: usize) -> std::io::Result<Vec<u8>> {
    let mut buf = vec![0u8; len + 4];
    answers.read_exact(&mut buf)?;
    let end = buf.split_off(len);
    if end != ANSWER_END.to_ne_bytes() {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            "an answer without its end marker",
        ));
    }
    Ok(buf)
}

/// A pipe (read end, write end), both close-on-exec and numbered 10 or more (clear of the
/// descriptors the child gets).
fn pipe() -> std::io::Result<(File, OwnedFd)> {
    let mut fds = [0; 2];
    // SAFETY: `fds` has room for the two descriptors `pipe2` writes.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: `pipe2` just opened both; each is owned once, here.
    let (read, write) = unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
    let high = |fd: OwnedFd| -> std::io::Result<OwnedFd> {
        // SAFETY: `fcntl` duplicates a valid descriptor; the copy is owned once, here.
        let copy = unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_DUPFD_CLOEXEC, 10) };
        if copy < 0 {
            return Err(std::io::Error::last_os_error());
        }
        Ok(unsafe { OwnedFd::from_raw_fd(copy) })
    };
    Ok((File::from(high(read)?), high(write)?))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Function 0 doubles an `int`; function 1 divides by zero; function 2 never returns;
    /// function 3 prints on stdout first; function 4 calls `exit(0)`; function 5 doubles
    /// after sleeping 100 ms.
    const SOURCE: &str = r#"
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>
static int get(void *p, size_t n) {
  char *c = p;
  while (n) { ssize_t k = read(3, c, n); if (k <= 0) return 0; c += k; n -= k; }
  return 1;
}
int main(void) {
  struct { uint32_t f, count; uint64_t limit_us; } head;
  while (get(&head, sizeof head)) {
    int out[64];
    for (uint32_t k = 0; k < head.count; k++) {
      int x;
      if (!get(&x, 4)) return 1;
      struct itimerval t;
      memset(&t, 0, sizeof t);
      t.it_value.tv_sec = head.limit_us / 1000000;
      t.it_value.tv_usec = head.limit_us % 1000000;
      setitimer(ITIMER_REAL, &t, NULL);
      volatile int zero = 0;
      volatile int forever = 1;
      if (head.f == 1) x = x / zero;
      if (head.f == 2) while (forever) {}
      if (head.f == 3) { printf("%d garbage\n", x); fflush(stdout); }
      if (head.f == 4) exit(0);
      struct timespec nap = {0, 100000000};
      if (head.f == 5) nanosleep(&nap, NULL);
      out[k] = 2 * x;
    }
    uint32_t end = 0x21444e45u;
    if (write(4, out, 4 * head.count) < 0 || write(4, &end, 4) < 0) return 1;
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
        let mut h = ForeignHelper::compile(&[SOURCE], "helper", &config).unwrap();
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
        // what the program prints never reaches the answers
        assert_eq!(
            h.call(3, 2, &ints(&[1, 2]), 8, second).unwrap(),
            ints(&[2, 4])
        );
        let err = h.call(4, 1, &ints(&[1]), 4, second).unwrap_err();
        assert!(
            matches!(err, RuntimeError::ExitedEarly { ref status, .. } if status.contains('0')),
            "{err}"
        );
    }

    #[test]
    fn the_time_limit_is_per_call() {
        let config = CompilerConfig::default();
        let mut h = ForeignHelper::compile(&[SOURCE], "helper", &config).unwrap();
        // 12 calls of 100 ms each: more than the limit together, each within it
        let limit = Duration::from_millis(300);
        let out = h.call(5, 12, &ints(&[1; 12]), 48, limit).unwrap();
        assert_eq!(out, ints(&[2; 12]));
        let start = std::time::Instant::now();
        let err = h.call(2, 12, &ints(&[1; 12]), 48, limit).unwrap_err();
        assert!(matches!(err, RuntimeError::TimedOut { .. }), "{err}");
        assert!(err.to_string().contains("0.3 s"), "{err}");
        assert!(
            start.elapsed() < Duration::from_secs(3),
            "{:?}",
            start.elapsed()
        );
    }

    #[test]
    fn a_missing_compiler_is_an_error() {
        let config = CompilerConfig::default().with_compiler("/nonexistent/cc");
        let err = ForeignHelper::compile(&[SOURCE], "helper", &config)
            .err()
            .expect("no compiler");
        assert!(
            matches!(err, RuntimeError::CompilerNotFound { .. }),
            "{err}"
        );
    }
}
