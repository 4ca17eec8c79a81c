//! Running a case: in its own directory, as a child process in its own process group, under
//! a wall-clock timeout and an address-space limit, with `TMPDIR` pointing into the
//! directory; then classifying what happened.

use crate::case::Case;
use std::ffi::OsString;
use std::fs::File;
use std::io::Read;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

/// The bounds a case runs under.
#[derive(Clone, Debug)]
pub struct Limits {
    /// Wall-clock time before the case counts as a hang.
    pub timeout: Duration,
    /// The address-space limit (RLIMIT_AS) of `shine` and what it starts (the C compiler,
    /// the module's process), in bytes.
    pub memory: u64,
}

/// What a case ended with. The first three are allowed by the command-line contract; the
/// others are bugs.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Kind {
    /// Exit 0.
    Success,
    /// Exit 1 with a message.
    Error,
    /// Exit 2 with a message (a usage error from the argument parser).
    Usage,
    /// A panic: exit 101 or a panic message.
    Panic,
    /// The allocator failed (the memory limit was reached in `shine` itself).
    OutOfMemory,
    /// A thread overflowed its stack.
    StackOverflow,
    /// Killed by a signal (abort, segmentation fault, ...).
    Signal(i32),
    /// Still running at the timeout.
    Hang,
    /// An exit code the contract does not have.
    BadExit(i32),
    /// An error exit with nothing on stderr.
    Silent,
    /// Files left in the temporary directory.
    Leak,
    /// Processes of the case still alive after `shine` ended.
    Orphan,
}

impl Kind {
    /// Whether this outcome breaks the contract.
    pub fn is_bug(&self) -> bool {
        !matches!(self, Kind::Success | Kind::Error | Kind::Usage)
    }

    /// A short name for summaries and directory names.
    pub fn name(&self) -> String {
        match self {
            Kind::Success => "ok".into(),
            Kind::Error => "error".into(),
            Kind::Usage => "usage".into(),
            Kind::Panic => "panic".into(),
            Kind::OutOfMemory => "out-of-memory".into(),
            Kind::StackOverflow => "stack-overflow".into(),
            Kind::Signal(s) => format!("signal-{s}"),
            Kind::Hang => "hang".into(),
            Kind::BadExit(c) => format!("exit-{c}"),
            Kind::Silent => "silent-error".into(),
            Kind::Leak => "temp-leak".into(),
            Kind::Orphan => "orphan-process".into(),
        }
    }
}

/// The result of running a case.
#[derive(Clone, Debug)]
pub struct Outcome {
    pub kind: Kind,
    pub elapsed: Duration,
    /// The end of its standard error (for reports).
    pub stderr_tail: String,
    /// What was left in the temporary directory.
    pub leftovers: Vec<String>,
}

/// Runs `case` with `shine` in `dir` (emptied first), with `env` added to its environment;
/// `scratch` names the worker's files for standard input and error, outside `dir`.
pub fn run(
    shine: &Path,
    case: &Case,
    dir: &Path,
    scratch: &Path,
    limits: &Limits,
    env: &[(String, OsString)],
) -> Outcome {
    let started = Instant::now();
    let setup = prepare(case, dir, scratch);
    let spawned = setup.and_then(|(stdin, stderr)| {
        let mut command = Command::new(shine);
        command.envs(env.iter().map(|(k, v)| (k, v)));
        spawn(command, case, dir, stdin, stderr, limits)
    });
    let (status, timed_out, orphans) = match spawned {
        Ok(child) => wait(child, limits.timeout),
        Err(e) => {
            return Outcome {
                kind: Kind::BadExit(-1),
                elapsed: started.elapsed(),
                stderr_tail: format!("clifuzz could not start the case: {e}"),
                leftovers: Vec::new(),
            }
        }
    };
    let stderr = read_bounded(&scratch.with_extension("err"));
    let leftovers = leftovers(&dir.join("tmp"));
    let kind = classify(status, timed_out, orphans, &stderr, &leftovers);
    Outcome {
        kind,
        elapsed: started.elapsed(),
        stderr_tail: tail(&stderr, 4000),
        leftovers,
    }
}

/// The case's directory with its files and a private `tmp/`; the files for standard input
/// and error.
fn prepare(case: &Case, dir: &Path, scratch: &Path) -> std::io::Result<(Stdio, File)> {
    if dir.exists() {
        std::fs::remove_dir_all(dir)?;
    }
    std::fs::create_dir_all(dir.join("tmp"))?;
    for (name, bytes) in &case.files {
        let path = dir.join(name);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)?;
        }
        std::fs::write(path, bytes)?;
    }
    let stdin = match &case.stdin {
        Some(bytes) => {
            let path = scratch.with_extension("in");
            std::fs::write(&path, bytes)?;
            Stdio::from(File::open(path)?)
        }
        None => Stdio::null(),
    };
    let stderr = File::create(scratch.with_extension("err"))?;
    Ok((stdin, stderr))
}

/// Starts `command` (`shine` with its environment) on `case`.
fn spawn(
    mut command: Command,
    case: &Case,
    dir: &Path,
    stdin: Stdio,
    stderr: File,
    limits: &Limits,
) -> std::io::Result<std::process::Child> {
    command
        .args(&case.args)
        .current_dir(dir)
        .env("TMPDIR", dir.join("tmp"))
        .env("OMP_NUM_THREADS", "1")
        .env_remove("RUST_BACKTRACE")
        .env_remove("RUST_LIB_BACKTRACE")
        .stdin(stdin)
        .stdout(Stdio::null())
        .stderr(stderr);
    let memory = limits.memory;
    // SAFETY: between fork and exec only async-signal-safe calls (setpgid, setrlimit) run,
    // on values that live on this stack.
    unsafe {
        command.pre_exec(move || {
            libc::setpgid(0, 0);
            let limit = libc::rlimit {
                rlim_cur: memory,
                rlim_max: memory,
            };
            libc::setrlimit(libc::RLIMIT_AS, &limit);
            let none = libc::rlimit {
                rlim_cur: 0,
                rlim_max: 0,
            };
            libc::setrlimit(libc::RLIMIT_CORE, &none);
            Ok(())
        });
    }
    command.spawn()
}

/// Waits for `child` up to `timeout` (then SIGTERM, and SIGKILL two seconds later); returns
/// its status, whether it timed out, and whether processes of its group outlived it. A thread
/// blocks in `wait` for the child, so the case ends the moment the child does (polling with
/// sleeps overshot the end of a short case by up to half its time).
fn wait(mut child: std::process::Child, timeout: Duration) -> (Option<ExitStatus>, bool, bool) {
    let group = child.id() as libc::pid_t;
    let (tx, rx) = std::sync::mpsc::channel();
    let waiter = std::thread::Builder::new()
        .name("clifuzz-wait".into())
        .stack_size(64 << 10)
        .spawn(move || {
            let _ = tx.send(child.wait().ok());
        });
    if waiter.is_err() {
        // no thread: kill the case rather than wait without a bound
        signal_group(group, libc::SIGKILL);
        return (None, false, false);
    }
    let (status, timed_out) = match rx.recv_timeout(timeout) {
        Ok(status) => (status, false),
        Err(_) => {
            signal_group(group, libc::SIGTERM);
            let status = match rx.recv_timeout(Duration::from_secs(2)) {
                Ok(status) => status,
                Err(_) => {
                    signal_group(group, libc::SIGKILL);
                    rx.recv().ok().flatten()
                }
            };
            (status, true)
        }
    };
    // Anything of the group still alive after a grace period outlived shine.
    let mut orphans = group_alive(group);
    for _ in 0..20 {
        if !orphans {
            break;
        }
        std::thread::sleep(Duration::from_millis(25));
        orphans = group_alive(group);
    }
    signal_group(group, libc::SIGKILL);
    (status, timed_out, orphans && !timed_out)
}

/// Whether a process of the group `group` exists.
fn group_alive(group: libc::pid_t) -> bool {
    // SAFETY: signal 0 only checks that the group exists.
    unsafe { libc::kill(-group, 0) == 0 }
}

/// Sends `signal` to the process group `group` (this case's `shine` and its children).
fn signal_group(group: libc::pid_t, signal: i32) {
    // SAFETY: `kill` has no memory effects; the group is the one the case's child leads.
    unsafe {
        libc::kill(-group, signal);
    }
}

/// The outcome from what was observed.
fn classify(
    status: Option<ExitStatus>,
    timed_out: bool,
    orphans: bool,
    stderr: &str,
    leftovers: &[String],
) -> Kind {
    if timed_out {
        return Kind::Hang;
    }
    let Some(status) = status else {
        return Kind::BadExit(-1);
    };
    if stderr.contains("memory allocation of") && stderr.contains("failed") {
        return Kind::OutOfMemory;
    }
    if stderr.contains("has overflowed its stack") {
        return Kind::StackOverflow;
    }
    if status.code() == Some(101)
        || stderr.contains("panicked at")
        || stderr.contains("RUST_BACKTRACE")
        || stderr.contains("fatal runtime error")
    {
        return Kind::Panic;
    }
    if let Some(signal) = status.signal() {
        return Kind::Signal(signal);
    }
    let kind = match status.code() {
        Some(0) => Kind::Success,
        Some(1 | 2) if stderr.trim().is_empty() => Kind::Silent,
        Some(1) => Kind::Error,
        Some(2) => Kind::Usage,
        Some(c) => Kind::BadExit(c),
        None => Kind::BadExit(-1),
    };
    if kind.is_bug() {
        kind
    } else if !leftovers.is_empty() {
        // nothing stays behind, not even the source of a module the C compiler rejected
        // (`shine compile -o FILE.c` writes it)
        Kind::Leak
    } else if orphans {
        Kind::Orphan
    } else {
        kind
    }
}

/// The entries of the temporary directory.
fn leftovers(tmp: &Path) -> Vec<String> {
    std::fs::read_dir(tmp)
        .map(|entries| {
            entries
                .filter_map(|e| Some(e.ok()?.file_name().to_string_lossy().into_owned()))
                .collect()
        })
        .unwrap_or_default()
}

/// A file's text, its first and last MiB when it is larger.
fn read_bounded(path: &PathBuf) -> String {
    const PART: u64 = 1 << 20;
    let Ok(mut file) = File::open(path) else {
        return String::new();
    };
    let len = file.metadata().map(|m| m.len()).unwrap_or(0);
    let mut bytes = Vec::new();
    if len <= 2 * PART {
        let _ = file.read_to_end(&mut bytes);
    } else {
        use std::io::{Seek, SeekFrom};
        let _ = (&mut file).take(PART).read_to_end(&mut bytes);
        bytes.extend(b"\n[...]\n");
        let _ = file.seek(SeekFrom::End(-(PART as i64)));
        let _ = file.read_to_end(&mut bytes);
    }
    String::from_utf8_lossy(&bytes).into_owned()
}

/// The last `n` bytes of `text` (at a character boundary).
fn tail(text: &str, n: usize) -> String {
    let mut start = text.len().saturating_sub(n);
    while !text.is_char_boundary(start) {
        start += 1;
    }
    text[start..].to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn status(raw: i32) -> Option<ExitStatus> {
        Some(ExitStatus::from_raw(raw))
    }

    #[test]
    fn the_contract_allows_success_and_reported_errors() {
        assert_eq!(classify(status(0), false, false, "", &[]), Kind::Success);
        assert_eq!(
            classify(status(1 << 8), false, false, "error: x", &[]),
            Kind::Error
        );
        assert_eq!(
            classify(status(2 << 8), false, false, "usage", &[]),
            Kind::Usage
        );
    }

    #[test]
    fn panics_crashes_hangs_and_silence_are_bugs() {
        let panic = "thread 'shine' panicked at src/x.rs:1:1:\nboom";
        assert_eq!(
            classify(status(1 << 8), false, false, panic, &[]),
            Kind::Panic
        );
        assert_eq!(
            classify(status(101 << 8), false, false, "", &[]),
            Kind::Panic
        );
        assert_eq!(
            classify(status(libc::SIGSEGV), false, false, "", &[]),
            Kind::Signal(11)
        );
        let oom = "memory allocation of 8589934592 bytes failed\n";
        assert_eq!(
            classify(status(libc::SIGABRT), false, false, oom, &[]),
            Kind::OutOfMemory
        );
        assert_eq!(classify(None, true, false, "", &[]), Kind::Hang);
        assert_eq!(
            classify(status(1 << 8), false, false, " \n", &[]),
            Kind::Silent
        );
        assert_eq!(
            classify(status(3 << 8), false, false, "x", &[]),
            Kind::BadExit(3)
        );
        let left = ["shine-1-a".to_string()];
        assert_eq!(
            classify(status(1 << 8), false, false, "error", &left),
            Kind::Leak
        );
        let named = "error: compiling /tmp/shine-1-a/module.c failed";
        assert_eq!(
            classify(status(1 << 8), false, false, named, &left),
            Kind::Leak
        );
        assert_eq!(classify(status(0), false, true, "", &[]), Kind::Orphan);
    }

    #[test]
    fn a_case_runs_in_its_directory_under_its_limits() {
        let work = std::env::temp_dir().join(format!("clifuzz-exec-{}", std::process::id()));
        let case = Case {
            index: 0,
            command: "misc",
            quality: crate::case::Quality::Valid,
            args: vec!["-c".into(), "cat in.txt >&2; ulimit -v >&2; exit 1".into()],
            files: vec![("in.txt".into(), b"hello".to_vec())],
            stdin: None,
        };
        std::fs::create_dir_all(&work).unwrap();
        let limits = Limits {
            timeout: Duration::from_secs(10),
            memory: 1 << 30,
        };
        let out = run(
            Path::new("/bin/sh"),
            &case,
            &work.join("case"),
            &work.join("w0"),
            &limits,
            &[],
        );
        assert_eq!(out.kind, Kind::Error, "{out:?}");
        assert!(out.stderr_tail.contains("hello1048576"), "{out:?}");
        let slow = Case {
            args: vec!["-c".into(), "sleep 30".into()],
            ..case
        };
        let limits = Limits {
            timeout: Duration::from_millis(200),
            ..limits
        };
        let out = run(
            Path::new("/bin/sh"),
            &slow,
            &work.join("case"),
            &work.join("w0"),
            &limits,
            &[],
        );
        assert_eq!(out.kind, Kind::Hang);
        assert!(out.elapsed < Duration::from_secs(5), "{out:?}");
        std::fs::remove_dir_all(&work).unwrap();
    }
}
