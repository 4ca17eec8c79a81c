//! The worker processes of `shine bench cpu`, which answer JSON-line requests: a
//! `shine bench cpu-worker` child and the Python anchor worker, each with its thread count in
//! its environment; and the anchors' virtualenv.

use super::{err, progress};
use crate::cli::CliError;
use serde_json::{json, Value};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};

/// A child process answering JSON-line requests.
pub(super) struct Worker {
    name: String,
    child: Child,
    stdin: Option<ChildStdin>,
    stdout: BufReader<ChildStdout>,
}

impl Worker {
    fn spawn(name: &str, mut command: Command) -> Result<Worker, CliError> {
        // a worker stopped with its parent cleans up after itself (found by shine-clifuzz:
        // a worker outlived `shine bench` stopped by SIGTERM and ran on for minutes)
        runtime::die_with_parent(&mut command, libc::SIGTERM);
        let mut child = command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .map_err(|e| err(format!("cannot start the {name}: {e}")))?;
        let stdin = child.stdin.take();
        let stdout = child.stdout.take().map(BufReader::new);
        let Some(stdout) = stdout else {
            return Err(err(format!("the {name} has no standard output")));
        };
        Ok(Worker {
            name: name.to_string(),
            child,
            stdin,
            stdout,
        })
    }

    pub(super) fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Sends a request and waits for the answer; an answer with `"ok": false` is an error.
    pub(super) fn request(&mut self, request: &Value) -> Result<Value, String> {
        let stdin = self.stdin.as_mut().ok_or("the worker's input is closed")?;
        writeln!(stdin, "{request}")
            .and_then(|()| stdin.flush())
            .map_err(|e| format!("the {} stopped: {e}", self.name))?;
        let mut line = String::new();
        let n = self
            .stdout
            .read_line(&mut line)
            .map_err(|e| format!("reading from the {}: {e}", self.name))?;
        if n == 0 {
            return Err(format!("the {} exited (see its messages above)", self.name));
        }
        let answer: Value = serde_json::from_str(&line)
            .map_err(|e| format!("the {} answered `{}`: {e}", self.name, line.trim()))?;
        if answer.get("ok").and_then(Value::as_bool) == Some(true) {
            Ok(answer)
        } else {
            let message = answer
                .get("error")
                .and_then(Value::as_str)
                .unwrap_or("no message");
            Err(message.to_string())
        }
    }
}

impl Drop for Worker {
    fn drop(&mut self) {
        if let Some(mut stdin) = self.stdin.take() {
            let _ = writeln!(stdin, "{}", json!({"op": "quit"}));
        } // closing stdin ends the worker's loop
        let _ = self.child.wait();
    }
}

pub(super) fn shine_worker(threads: usize) -> Result<Worker, CliError> {
    let exe = std::env::current_exe()
        .map_err(|e| err(format!("cannot find the shine executable: {e}")))?;
    let mut command = Command::new(exe);
    command
        .args(["bench", "cpu-worker"])
        .env("OMP_NUM_THREADS", threads.to_string());
    Worker::spawn("shine worker", command)
}

pub(super) fn anchor_worker(
    python: &Path,
    script: &Path,
    threads: usize,
) -> Result<Worker, CliError> {
    let mut command = Command::new(python);
    command.arg(script);
    for var in [
        "OMP_NUM_THREADS",
        "OPENBLAS_NUM_THREADS",
        "TVM_NUM_THREADS",
        "HL_NUM_THREADS",
    ] {
        command.env(var, threads.to_string());
    }
    Worker::spawn("anchor worker", command)
}

/// The virtualenv's Python, after creating the virtualenv and installing
/// `bench/requirements.txt` into it when that has not been done (or the file changed).
pub(super) fn ensure_venv(root: &Path, venv: &Path, python: &str) -> Result<PathBuf, CliError> {
    let requirements = root.join("bench/requirements.txt");
    let wanted = std::fs::read_to_string(&requirements)
        .map_err(|e| err(format!("cannot read `{}`: {e}", requirements.display())))?;
    let venv_python = venv.join("bin/python");
    let stamp = venv.join(".shine-bench-requirements");
    if venv_python.is_file() && std::fs::read_to_string(&stamp).ok().as_deref() == Some(&wanted) {
        return Ok(venv_python);
    }
    let to_stderr = || Stdio::from(std::io::stderr());
    if !venv_python.is_file() {
        progress(&format!(
            "creating the anchors' virtualenv {} (numpy, apache-tvm, halide; a few minutes)",
            venv.display()
        ));
        let status = Command::new(python)
            .args(["-m", "venv"])
            .arg(venv)
            .stdout(to_stderr())
            .status()
            .map_err(|e| err(format!("cannot run `{python} -m venv`: {e}")))?;
        if !status.success() {
            return Err(err(format!("`{python} -m venv {}` failed", venv.display())));
        }
    }
    progress(&format!(
        "installing {} into {}",
        requirements.display(),
        venv.display()
    ));
    let status = Command::new(&venv_python)
        .args(["-m", "pip", "install", "--disable-pip-version-check", "-r"])
        .arg(&requirements)
        .stdout(to_stderr())
        .status()
        .map_err(|e| err(format!("cannot run pip: {e}")))?;
    if !status.success() {
        return Err(err(format!(
            "pip could not install `{}` (see above); --no-anchors times shine alone",
            requirements.display()
        )));
    }
    shine::files::write_whole(&stamp, wanted.as_bytes()).map_err(err)?;
    Ok(venv_python)
}
