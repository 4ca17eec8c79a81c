//! Nothing left behind: the runtime's temporary directories are private (0700) and named after
//! the process (`shine-PID-…`); they are removed with their module, on SIGINT, SIGTERM and
//! SIGHUP (once [`install_signal_cleanup`] ran), and, after a process was killed outright, by the
//! next run ([`TempDir::new`] sweeps directories whose process is gone). Child processes (the C
//! compiler, modules) are killed on those signals, and die with their parent (`PDEATHSIG`).

use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::{Mutex, Once};

use crate::RuntimeError;

/// What a signal must clean up: directories to remove, child processes to kill.
#[derive(Default)]
struct Registry {
    dirs: Vec<PathBuf>,
    children: Vec<u32>,
}

static REGISTRY: Mutex<Registry> = Mutex::new(Registry {
    dirs: Vec::new(),
    children: Vec::new(),
});

fn registry() -> std::sync::MutexGuard<'static, Registry> {
    REGISTRY
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// The prefix of this process's temporary directories.
fn prefix() -> &'static str {
    static PREFIX: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    PREFIX.get_or_init(|| format!("shine-{}-", std::process::id()))
}

/// A builder of private (0700) directories named `shine-PID-…`.
pub(crate) fn private_builder() -> tempfile::Builder<'static, 'static> {
    let mut builder = tempfile::Builder::new();
    builder
        .prefix(prefix())
        .permissions(std::fs::Permissions::from_mode(0o700));
    builder.clone()
}

/// A private temporary directory, removed when dropped or on a signal.
pub struct TempDir(Option<tempfile::TempDir>);

impl TempDir {
    /// A fresh directory in the system's temporary directory.
    pub fn new() -> Result<TempDir, RuntimeError> {
        static SWEEP: Once = Once::new();
        SWEEP.call_once(|| sweep_stale(&std::env::temp_dir()));
        let dir = private_builder()
            .tempdir()
            .map_err(RuntimeError::io("creating a temporary directory"))?;
        registry().dirs.push(dir.path().to_path_buf());
        Ok(TempDir(Some(dir)))
    }

    /// The directory's path.
    pub fn path(&self) -> &Path {
        self.0.as_ref().expect("present until dropped").path()
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        if let Some(dir) = self.0.take() {
            unregister_dir(dir.path());
        }
    }
}

fn unregister_dir(path: &Path) {
    registry().dirs.retain(|d| d != path);
}

/// Runs `command` to completion like [`Command::output`], registered to be killed on a signal
/// and set to die with this process.
pub(crate) fn output(command: &mut Command) -> std::io::Result<Output> {
    command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    die_with_parent(command, libc::SIGKILL);
    let child = command.spawn()?;
    let pid = child.id();
    registry().children.push(pid);
    let result = child.wait_with_output();
    registry().children.retain(|&c| c != pid);
    result
}

/// Starts `command`, registered to be killed on a signal (until [`unregister_child`]) and set
/// to die with this process.
pub(crate) fn spawn_registered(command: &mut Command) -> std::io::Result<std::process::Child> {
    die_with_parent(command, libc::SIGKILL);
    let child = command.spawn()?;
    registry().children.push(child.id());
    Ok(child)
}

/// Registers a child process started otherwise (forked) to be killed on a signal, until
/// [`unregister_child`].
pub(crate) fn register_child(pid: u32) {
    registry().children.push(pid);
}

/// Forgets a child of [`spawn_registered`] or [`register_child`] once it has been reaped.
pub(crate) fn unregister_child(pid: u32) {
    registry().children.retain(|&c| c != pid);
}

/// Makes the process `command` starts receive `signal` when this process ends, however it
/// ends (Linux `PR_SET_PDEATHSIG`): a child is never left running on its own. SIGTERM lets
/// a child that is a `shine` clean up after itself; SIGKILL suits compilers and modules.
pub fn die_with_parent(command: &mut Command, signal: i32) {
    // SAFETY: the closure runs in the child between fork and exec, and calls only `prctl`,
    // which is async-signal-safe; it touches no memory of the parent.
    unsafe {
        command.pre_exec(move || {
            libc::prctl(libc::PR_SET_PDEATHSIG, signal);
            Ok(())
        });
    }
}

/// Installs handlers of SIGINT, SIGTERM and SIGHUP that kill the registered children, remove
/// the registered directories, then end the process as the signal would have. Call it once,
/// early (the `shine` tool does); without it, directories are still removed on normal exits.
pub fn install_signal_cleanup() -> Result<(), RuntimeError> {
    use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
    let mut signals = signal_hook::iterator::Signals::new([SIGINT, SIGTERM, SIGHUP])
        .map_err(RuntimeError::io("installing signal handlers"))?;
    std::thread::Builder::new()
        .name("shine-signals".into())
        .spawn(move || {
            if let Some(signal) = signals.forever().next() {
                clean_up_now();
                let _ = signal_hook::low_level::emulate_default_handler(signal);
                std::process::exit(128 + signal);
            }
        })
        .map_err(RuntimeError::io("starting the signal thread"))?;
    Ok(())
}

/// Kills every registered child and removes every registered directory.
fn clean_up_now() {
    let registry = registry();
    for &pid in &registry.children {
        if let Ok(pid) = libc::pid_t::try_from(pid) {
            // SAFETY: `kill` has no memory effects. The pid is a child of ours, registered
            // until just after it was reaped (a window too short for its pid to be reused).
            unsafe { libc::kill(pid, libc::SIGKILL) };
        }
    }
    for dir in &registry.dirs {
        let _ = std::fs::remove_dir_all(dir);
    }
}

/// Removes directories `shine-PID-…` in `tmp` that belong to this user and whose process is
/// gone (killed outright, with no chance to clean up).
fn sweep_stale(tmp: &Path) {
    use std::os::unix::fs::MetadataExt;
    let Ok(entries) = std::fs::read_dir(tmp) else {
        return;
    };
    // SAFETY: `getuid` cannot fail and has no memory effects.
    let uid = unsafe { libc::getuid() };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name
            .to_str()
            .and_then(|n| n.strip_prefix("shine-"))
            .and_then(|rest| rest.split_once('-'))
            .and_then(|(pid, _)| pid.parse::<libc::pid_t>().ok())
        else {
            continue;
        };
        let Ok(meta) = std::fs::symlink_metadata(entry.path()) else {
            continue;
        };
        if !meta.is_dir() || meta.uid() != uid || pid <= 0 || is_alive(pid) {
            continue;
        }
        let _ = std::fs::remove_dir_all(entry.path());
    }
}

/// Whether a process `pid` exists.
fn is_alive(pid: libc::pid_t) -> bool {
    // SAFETY: signal 0 only checks that the process exists; `kill` has no memory effects.
    let found = unsafe { libc::kill(pid, 0) } == 0;
    found || std::io::Error::last_os_error().raw_os_error() != Some(libc::ESRCH)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn directories_are_private_and_registered() {
        let dir = TempDir::new().unwrap();
        let path = dir.path().to_path_buf();
        let mode = std::fs::metadata(&path).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o700);
        assert!(path
            .file_name()
            .unwrap()
            .to_string_lossy()
            .starts_with(prefix()));
        assert!(registry().dirs.contains(&path));
        drop(dir);
        assert!(!path.exists());
        assert!(!registry().dirs.contains(&path));
    }

    #[test]
    fn stale_directories_of_dead_processes_are_swept() {
        let tmp = tempfile::tempdir().unwrap();
        // a process that has exited: its pid is gone once reaped
        let mut child = Command::new("true").spawn().unwrap();
        let dead = child.id();
        child.wait().unwrap();
        let stale = tmp.path().join(format!("shine-{dead}-abc"));
        let live = tmp.path().join(format!("shine-{}-abc", std::process::id()));
        let other = tmp.path().join("shine-notapid-abc");
        for d in [&stale, &live, &other] {
            std::fs::create_dir(d).unwrap();
        }
        sweep_stale(tmp.path());
        assert!(!stale.exists() && live.exists() && other.exists());
    }
}
