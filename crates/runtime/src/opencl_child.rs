//! OpenCL devices driven from a child process: every device but a GPU (see
//! [`OpenClDevice`](crate::OpenClDevice)). A CPU platform such as PoCL runs kernels on
//! threads of the process that calls OpenCL, so a kernel that crashes (a foreign function
//! dereferencing null, `abort`) would end that process; in a child, it is an error.
//!
//! The child is forked from this process and runs the same Rust code as an in-process
//! device ([`LocalDevice`], [`LocalProgram`]) on requests that come through a pipe (`wire`
//! frames, `opencl_messages`): list the devices, open one, build a program, run a launch
//! sequence (the buffers go there and back in the messages; kernels are timed in the
//! child), release a program.
//! Every request gets one answer, an `Ok` with its results or an `Err` with a
//! [`RuntimeError`]. A child that ends instead of answering makes that call return
//! [`RuntimeError::OpenClProcessEnded`] (the signal or the exit status, and what it printed on
//! stderr); the next call forks a fresh child, which rebuilds the programs it needs.
//! A hanging kernel is not stopped (no call has a time limit).
//!
//! PoCL starts worker threads when its devices are first listed, and a child forked after
//! that has none of them and hangs. So this process never lists devices itself: the first
//! listing happens in a child (its answer is kept for the process), and a GPU is opened here
//! by listing the devices of its own platform only. The children are forked from one thread
//! that lives as long as the process (`PR_SET_PDEATHSIG` follows the forking thread), close
//! every inherited file but their pipes, die with this process, and are killed on
//! SIGINT/SIGTERM/SIGHUP (`cleanup`); their stderr goes to a file, forwarded to this
//! process's stderr after each answer.

use std::collections::HashSet;
use std::fs::File;
use std::io::Write;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::fs::FileExt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{mpsc, Arc, Mutex, OnceLock};

use crate::opencl::{Candidate, Facts, LocalDevice, LocalProgram, Sequence, Times};
use crate::opencl_messages::{
    get_candidate, get_error, get_sequence, get_times, put_candidate, put_error, put_sequence,
};
use crate::wire::{self, Reader, Writer};
use crate::{Buffer, OpenClLaunch, RuntimeError};

/// The kinds of request.
const LIST: u64 = 1;
const OPEN: u64 = 2;
const BUILD: u64 = 3;
const EXECUTE: u64 = 4;
const RELEASE: u64 = 5;

/// The first word of an answer: the results follow, or an error.
const OK: u64 = 0;
const ERR: u64 = 1;

/// At most this much of what a child printed on stderr goes into an error (the end of it).
const STDERR_TAIL: usize = 8000;

/// The devices of every platform, listed in a child process the first time and kept for the
/// process; the child that listed them, if this call forked one (it has the platforms
/// started, so opening one of its devices there costs nothing more).
pub(crate) fn candidates() -> Result<(Vec<Candidate>, Option<Process>), RuntimeError> {
    static LISTED: OnceLock<Vec<Candidate>> = OnceLock::new();
    if let Some(listed) = LISTED.get() {
        return Ok((listed.clone(), None));
    }
    let mut process = Process::spawn()?;
    let mut request = Writer::new();
    request.u64(LIST);
    let mut reader = match process.call(&request) {
        Ok(answer) => answer?,
        Err(failure) => {
            return Err(failure.error(process, "the OpenCL platforms", "listing the devices"))
        }
    };
    let count = reader.count(8).map_err(malformed_answer)?;
    let listed = (0..count)
        .map(|_| get_candidate(&mut reader))
        .collect::<std::io::Result<Vec<_>>>()
        .map_err(malformed_answer)?;
    let _ = LISTED.set(listed.clone());
    Ok((listed, Some(process)))
}

/// A device opened in a child process, and the child (forked again when it ended).
pub(crate) struct Server {
    candidate: Candidate,
    state: Mutex<State>,
}

/// The running child of a [`Server`], if any, and the programs built in it.
#[derive(Default)]
struct State {
    process: Option<Process>,
    built: HashSet<u64>,
}

impl Server {
    /// Opens `candidate` in `process` (a child that listed the devices) or in a fresh child.
    pub(crate) fn open(
        candidate: &Candidate,
        process: Option<Process>,
    ) -> Result<(Server, Facts), RuntimeError> {
        let server = Server {
            candidate: candidate.clone(),
            state: Mutex::new(State::default()),
        };
        let facts = {
            let mut state = server.lock();
            state.process = process;
            server.start(&mut state)?
        };
        Ok((server, facts))
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        // A panic while holding the lock leaves at worst a child that is killed on drop.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Opens the device in the running child, or in a fresh one when none runs.
    fn start(&self, state: &mut State) -> Result<Facts, RuntimeError> {
        if state.process.is_none() {
            state.process = Some(Process::spawn()?);
            state.built.clear();
        }
        let mut request = Writer::new();
        request.u64(OPEN);
        put_candidate(&mut request, &self.candidate);
        let opened = self
            .call(state, "opening the device", &request)
            .and_then(|mut reader| {
                let facts = (|| {
                    Ok::<_, std::io::Error>(Facts {
                        version: reader.string()?,
                        max_work_group_size: reader.usize()?,
                        local_mem_bytes: reader.u64()?,
                        extensions: reader.string()?,
                    })
                })();
                facts.map_err(malformed_answer)
            });
        if opened.is_err() {
            // a child without the device open serves nothing: the next call forks another
            state.process = None;
        }
        opened
    }

    /// Sends `request` to the child (started, with the device open, if none runs) and reads
    /// its answer: the results, or the error it answered, or, when the child ended instead,
    /// [`RuntimeError::OpenClProcessEnded`] naming `operation`.
    fn call(
        &self,
        state: &mut State,
        operation: &str,
        request: &Writer,
    ) -> Result<Reader<'static>, RuntimeError> {
        if state.process.is_none() {
            self.start(state)?;
        }
        let process = state.process.as_mut().expect("started above");
        match process.call(request) {
            Ok(answer) => answer,
            Err(failure) => {
                let process = state.process.take().expect("running");
                state.built.clear();
                Err(failure.error(process, &self.candidate.to_string(), operation))
            }
        }
    }

    /// Builds `program` in the running child (forked and opened first when none runs): the
    /// kernels' names.
    fn build(
        &self,
        state: &mut State,
        program: &ChildProgram,
    ) -> Result<Vec<String>, RuntimeError> {
        let mut request = Writer::new();
        request
            .u64(BUILD)
            .u64(program.id)
            .str(&program.source)
            .str(&program.options);
        let mut reader = self.call(state, "building a program", &request)?;
        let count = reader.count(8).map_err(malformed_answer)?;
        let names = (0..count)
            .map(|_| reader.string())
            .collect::<std::io::Result<Vec<_>>>()
            .map_err(malformed_answer)?;
        state.built.insert(program.id);
        Ok(names)
    }
}

/// A program of a [`Server`]'s device: built in its child, under an id, and built again in
/// a fresh child when the one it was built in ended. Released there when dropped.
pub(crate) struct ChildProgram {
    server: Arc<Server>,
    id: u64,
    source: String,
    options: String,
}

impl ChildProgram {
    /// Builds OpenCL C `source` with `options` in the child of `server`; the program and the
    /// names of its kernels.
    pub(crate) fn build(
        server: &Arc<Server>,
        source: &str,
        options: &str,
    ) -> Result<(ChildProgram, Vec<String>), RuntimeError> {
        static NEXT_ID: AtomicU64 = AtomicU64::new(1);
        let program = ChildProgram {
            server: server.clone(),
            id: NEXT_ID.fetch_add(1, Ordering::Relaxed),
            source: source.to_string(),
            options: options.to_string(),
        };
        let names = server.build(&mut server.lock(), &program)?;
        Ok((program, names))
    }

    /// Runs `sequence` in the child as [`LocalProgram::execute`] does here: the outputs are
    /// copied back into `outputs`.
    pub(crate) fn execute(
        &self,
        sequence: &Sequence,
        outputs: &mut [Buffer],
        inputs: &[&Buffer],
    ) -> Result<Times, RuntimeError> {
        let server = &self.server;
        let mut state = server.lock();
        if state.process.is_none() || !state.built.contains(&self.id) {
            server.build(&mut state, self)?;
        }
        let mut request = Writer::new();
        request.u64(EXECUTE).u64(self.id);
        put_sequence(&mut request, sequence);
        request.usize(outputs.len());
        for output in outputs.iter() {
            request.bytes(output.as_bytes());
        }
        request.usize(inputs.len());
        for input in inputs {
            request.bytes(input.as_bytes());
        }
        let operation = running(sequence.launches);
        let mut reader = server.call(&mut state, &operation, &request)?;
        get_times(&mut reader, outputs).map_err(malformed_answer)
    }
}

impl Drop for ChildProgram {
    fn drop(&mut self) {
        let mut state = self.server.lock();
        if state.built.remove(&self.id) {
            let mut request = Writer::new();
            request.u64(RELEASE).u64(self.id);
            // a child that ended here is replaced by the next call that needs one
            let _ = self
                .server
                .call(&mut state, "releasing a program", &request);
        }
    }
}

/// What a run of `launches` is called in errors: `running kernel `a``, `running kernels `a`, `b``.
fn running(launches: &[OpenClLaunch]) -> String {
    let mut names: Vec<&str> = Vec::new();
    for launch in launches {
        if !names.contains(&launch.kernel.as_str()) {
            names.push(&launch.kernel);
        }
    }
    let plural = if names.len() == 1 { "" } else { "s" };
    let names: Vec<String> = names.iter().map(|n| format!("`{n}`")).collect();
    format!("running kernel{plural} {}", names.join(", "))
}

/// The error of an answer that does not decode.
fn malformed_answer(error: std::io::Error) -> RuntimeError {
    RuntimeError::Gpu {
        api: "OpenCL",
        operation: "reading the answer of the OpenCL process".into(),
        message: error.to_string(),
    }
}

/// A child process and the ends of its pipes.
pub(crate) struct Process {
    pid: libc::pid_t,
    requests: File,
    answers: File,
    /// Where the child's stderr goes, and how much of it was read.
    stderr: File,
    stderr_seen: u64,
    reaped: bool,
}

/// Why a call got no answer: the child ended (or the pipe broke, or it answered nonsense).
struct Failure(std::io::Error);

impl Failure {
    /// The error of `process` ending while doing `operation` on `device`.
    fn error(self, mut process: Process, device: &str, operation: &str) -> RuntimeError {
        let (ended, stderr) = process.finish(&self.0);
        RuntimeError::OpenClProcessEnded {
            device: device.to_string(),
            operation: operation.to_string(),
            ended,
            stderr,
        }
    }
}

impl Process {
    /// Forks a child that serves requests (on the forking thread, see the module doc).
    fn spawn() -> Result<Process, RuntimeError> {
        type Reply = mpsc::SyncSender<std::io::Result<Process>>;
        static FORKER: OnceLock<Result<Mutex<mpsc::Sender<Reply>>, String>> = OnceLock::new();
        let forker = FORKER.get_or_init(|| {
            let (sender, requests) = mpsc::channel::<Reply>();
            std::thread::Builder::new()
                .name("shine-opencl-fork".into())
                .spawn(move || {
                    for reply in requests {
                        let _ = reply.send(fork_child());
                    }
                })
                .map(|_| Mutex::new(sender))
                .map_err(|e| e.to_string())
        });
        let context = "starting a process for OpenCL";
        let forker = forker.as_ref().map_err(|message| RuntimeError::Io {
            context: context.into(),
            source: std::io::Error::other(message.clone()),
        })?;
        let (reply, answer) = mpsc::sync_channel(1);
        let sent = forker.lock().unwrap_or_else(|e| e.into_inner()).send(reply);
        let forked = match sent {
            Ok(()) => answer.recv().map_err(std::io::Error::other),
            Err(e) => Err(std::io::Error::other(e.to_string())),
        };
        forked
            .and_then(|result| result)
            .map_err(RuntimeError::io(context))
    }

    /// Sends `request` and reads the answer; the error the child answered is `Ok(Err(..))`.
    fn call(&mut self, request: &Writer) -> Result<Result<Reader<'static>, RuntimeError>, Failure> {
        self.stderr_seen = self.stderr_len();
        request.send(&mut self.requests).map_err(Failure)?;
        let frame = match wire::receive(&mut self.answers) {
            Ok(Some(frame)) => frame,
            Ok(None) => return Err(Failure(std::io::ErrorKind::UnexpectedEof.into())),
            Err(e) => return Err(Failure(e)),
        };
        self.forward_stderr();
        // the answers are few and small next to the work behind them: leaking one frame
        // per call would not be, so the reader owns it
        let mut reader = Reader::owned(frame);
        match reader.u64().map_err(Failure)? {
            OK => Ok(Ok(reader)),
            ERR => Ok(Err(get_error(&mut reader).map_err(Failure)?)),
            _ => Err(Failure(wire::malformed("an unknown answer"))),
        }
    }

    fn stderr_len(&self) -> u64 {
        self.stderr.metadata().map_or(0, |m| m.len())
    }

    /// What the child printed on stderr since the current call started.
    fn new_stderr(&self) -> Vec<u8> {
        let len = self.stderr_len().saturating_sub(self.stderr_seen);
        let mut bytes = vec![0u8; usize::try_from(len).unwrap_or(0)];
        match self.stderr.read_exact_at(&mut bytes, self.stderr_seen) {
            Ok(()) => bytes,
            Err(_) => Vec::new(),
        }
    }

    /// Copies what the child printed during a call that it answered to this process's stderr
    /// (PoCL's warnings, as when it ran in this process).
    fn forward_stderr(&mut self) {
        let bytes = self.new_stderr();
        if !bytes.is_empty() {
            let _ = std::io::stderr().write_all(&bytes);
        }
        self.stderr_seen += bytes.len() as u64;
    }

    /// Reaps the child after `failure` (it is killed first unless the failure says that it
    /// is ending: its pipe closed): how it ended, and what it printed on stderr.
    fn finish(&mut self, failure: &std::io::Error) -> (String, String) {
        let closed = matches!(
            failure.kind(),
            std::io::ErrorKind::UnexpectedEof | std::io::ErrorKind::BrokenPipe
        );
        if !closed {
            self.kill();
        }
        let ended = match self.wait() {
            Some(status) => ended(status),
            None => format!("could not be waited for ({failure})"),
        };
        let stderr = String::from_utf8_lossy(&self.new_stderr()).into_owned();
        let tail = match stderr.char_indices().rev().nth(STDERR_TAIL) {
            Some((at, _)) => format!("...{}", &stderr[at..]),
            None => stderr,
        };
        (ended, tail)
    }

    fn kill(&self) {
        // SAFETY: `kill` has no memory effects; the pid is our child, not yet reaped.
        unsafe { libc::kill(self.pid, libc::SIGKILL) };
    }

    /// Waits for the child to end: its wait status.
    fn wait(&mut self) -> Option<libc::c_int> {
        if self.reaped {
            return None;
        }
        let mut status = 0;
        loop {
            // SAFETY: `waitpid` writes the status into a live local.
            let pid = unsafe { libc::waitpid(self.pid, &mut status, 0) };
            if pid == self.pid {
                break;
            }
            if std::io::Error::last_os_error().kind() != std::io::ErrorKind::Interrupted {
                return None;
            }
        }
        self.reaped = true;
        crate::cleanup::unregister_child(self.pid as u32);
        Some(status)
    }
}

impl Drop for Process {
    fn drop(&mut self) {
        if !self.reaped {
            self.kill();
            self.wait();
        }
    }
}

/// How a child with wait status `status` ended.
fn ended(status: libc::c_int) -> String {
    if libc::WIFSIGNALED(status) {
        let signal = crate::error::signal_name(libc::WTERMSIG(status));
        format!("was killed by {signal}")
    } else if libc::WIFEXITED(status) {
        format!("exited with status {}", libc::WEXITSTATUS(status))
    } else {
        format!("ended (wait status {status})")
    }
}

/// A pipe: its read end and its write end, closed on exec.
fn pipe() -> std::io::Result<(OwnedFd, OwnedFd)> {
    let mut fds = [0 as RawFd; 2];
    // SAFETY: `pipe2` writes two descriptors into the array it is given.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: both descriptors were just opened and are owned by nothing else.
    Ok(unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) })
}

/// Forks a child that serves requests until its request pipe closes (this runs on the
/// forking thread, see [`Process::spawn`]).
fn fork_child() -> std::io::Result<Process> {
    let (request_read, request_write) = pipe()?;
    let (answer_read, answer_write) = pipe()?;
    let stderr = tempfile::tempfile()?;
    // SAFETY: `getpid` cannot fail.
    let parent = unsafe { libc::getpid() };
    // no thread of this process is half-way through listing devices when it forks, so the
    // child finds the lock free (and the ICD loader's state whole)
    let guard = crate::opencl::enumeration_guard();
    // SAFETY: the child runs only this thread: it takes no lock that another thread of this
    // process may have held at the fork but the enumeration lock, released just below, and
    // glibc's malloc, stdio and dynamic loader locks, which glibc resets in the child. It
    // never returns from `serve_in_child` (it ends with `_exit`).
    let pid = unsafe { libc::fork() };
    drop(guard);
    match pid {
        -1 => Err(std::io::Error::last_os_error()),
        0 => serve_in_child(parent, request_read, answer_write, &stderr),
        pid => {
            crate::cleanup::register_child(pid as u32);
            drop((request_read, answer_write));
            Ok(Process {
                pid,
                requests: File::from(request_write),
                answers: File::from(answer_read),
                stderr,
                stderr_seen: 0,
                reaped: false,
            })
        }
    }
}

/// The child's life: it dies with `parent`, keeps only its pipes, stdout (redirected to the
/// parent's stderr) and stderr (redirected to `stderr`), serves requests, and exits (with status 101 if serving panicked).
fn serve_in_child(parent: libc::pid_t, requests: OwnedFd, answers: OwnedFd, stderr: &File) -> ! {
    // SAFETY: plain system calls on this process's own state and descriptors.
    unsafe {
        libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
        if libc::getppid() != parent {
            libc::_exit(1);
        }
        for signal in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
            libc::signal(signal, libc::SIG_DFL);
        }
        // what kernels print (`printf` of a foreign function) goes where the caller's
        // stderr goes, never into the caller's stdout (its printed results)
        libc::dup2(libc::STDERR_FILENO, libc::STDOUT_FILENO);
        libc::dup2(stderr.as_raw_fd(), libc::STDERR_FILENO);
    }
    close_inherited(&[0, 1, 2, requests.as_raw_fd(), answers.as_raw_fd()]);
    let served = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        serve(File::from(requests), File::from(answers));
    }));
    // SAFETY: ends the child without running this process's exit handlers or destructors.
    unsafe { libc::_exit(if served.is_ok() { 0 } else { 101 }) }
}

/// Closes every descriptor but `keep`: the child holds no end of another child's pipes or
/// of a pipe some thread of the parent reads to its end.
fn close_inherited(keep: &[RawFd]) {
    let Ok(entries) = std::fs::read_dir("/proc/self/fd") else {
        return;
    };
    let open: Vec<RawFd> = entries
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse().ok())
        .collect();
    for fd in open.into_iter().filter(|fd| !keep.contains(fd)) {
        // SAFETY: closes a descriptor this child inherited and does not use (the one of the
        // listing above is closed already: closing it fails harmlessly).
        unsafe { libc::close(fd) };
    }
}

/// The device and programs of a child.
#[derive(Default)]
struct Served {
    device: Option<LocalDevice>,
    programs: std::collections::HashMap<u64, LocalProgram>,
}

/// Answers requests until the request pipe closes or an answer cannot be written.
fn serve(mut requests: File, mut answers: File) {
    let mut served = Served::default();
    while let Ok(Some(frame)) = wire::receive(&mut requests) {
        let mut answer = Writer::new();
        match served.handle(&frame) {
            Ok(results) => {
                answer.u64(OK);
                answer.append(&results);
            }
            Err(error) => {
                answer.u64(ERR);
                put_error(&mut answer, &error);
            }
        }
        if answer.send(&mut answers).is_err() {
            return;
        }
    }
}

impl Served {
    /// The results of one request.
    fn handle(&mut self, frame: &[u8]) -> Result<Writer, RuntimeError> {
        let mut reader = Reader::new(frame);
        let bad = |e: std::io::Error| RuntimeError::InvalidArgument(e.to_string());
        let mut results = Writer::new();
        match reader.u64().map_err(bad)? {
            LIST => {
                let candidates = crate::opencl::candidates()?;
                results.usize(candidates.len());
                for candidate in &candidates {
                    put_candidate(&mut results, candidate);
                }
            }
            OPEN => {
                let candidate = get_candidate(&mut reader).map_err(bad)?;
                let (device, facts) = LocalDevice::open(&candidate)?;
                self.device = Some(device);
                self.programs.clear();
                results
                    .str(&facts.version)
                    .usize(facts.max_work_group_size)
                    .u64(facts.local_mem_bytes)
                    .str(&facts.extensions);
            }
            BUILD => {
                let id = reader.u64().map_err(bad)?;
                let source = reader.string().map_err(bad)?;
                let options = reader.string().map_err(bad)?;
                let program = LocalProgram::build(self.device()?, &source, &options)?;
                results.usize(program.kernel_names().len());
                for name in program.kernel_names() {
                    results.str(name);
                }
                self.programs.insert(id, program);
            }
            EXECUTE => self.execute(&mut reader, &mut results)?,
            RELEASE => {
                let id = reader.u64().map_err(bad)?;
                self.programs.remove(&id);
            }
            other => {
                return Err(RuntimeError::InvalidArgument(format!(
                    "unknown request {other}"
                )))
            }
        }
        Ok(results)
    }

    fn device(&self) -> Result<&LocalDevice, RuntimeError> {
        self.device
            .as_ref()
            .ok_or_else(|| RuntimeError::InvalidArgument("no device is open".into()))
    }

    /// Runs a launch sequence on the buffers of the request; the outputs and times.
    fn execute(&self, reader: &mut Reader, results: &mut Writer) -> Result<(), RuntimeError> {
        let bad = |e: std::io::Error| RuntimeError::InvalidArgument(e.to_string());
        let id = reader.u64().map_err(bad)?;
        let (launches, temporaries, status, warmup, runs) = get_sequence(reader).map_err(bad)?;
        let mut buffers = || -> std::io::Result<Vec<Buffer>> {
            let count = reader.count(8)?;
            (0..count)
                .map(|_| reader.bytes().map(Buffer::from_bytes))
                .collect()
        };
        let mut outputs = buffers().map_err(bad)?;
        let inputs = buffers().map_err(bad)?;
        let inputs: Vec<&Buffer> = inputs.iter().collect();
        let program = self
            .programs
            .get(&id)
            .ok_or_else(|| RuntimeError::InvalidArgument(format!("no program {id} is built")))?;
        let sequence = Sequence {
            launches: &launches,
            temporaries: &temporaries,
            status,
            warmup,
            runs,
        };
        let (kernel_ms, wall_ms, flag) =
            program.execute(self.device()?, &sequence, &mut outputs, &inputs)?;
        results.usize(outputs.len());
        for output in &outputs {
            results.bytes(output.as_bytes());
        }
        results
            .floats(&kernel_ms)
            .floats(&wall_ms)
            .i64(i64::from(flag));
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn devices_and_programs_can_be_shared_between_threads() {
        fn send_sync<T: Send + Sync>() {}
        send_sync::<crate::OpenClDevice>();
        send_sync::<crate::OpenClProgram>();
    }

    #[test]
    fn operations_name_the_kernels() {
        let a = OpenClLaunch::new("a", &[1]);
        let b = OpenClLaunch::new("b", &[1]);
        assert_eq!(running(std::slice::from_ref(&a)), "running kernel `a`");
        assert_eq!(running(&[a.clone(), b, a]), "running kernels `a`, `b`");
    }

    #[test]
    fn endings_are_named() {
        // a wait status of a child killed by SIGSEGV, and of one that exited with 3
        assert!(ended(libc::SIGSEGV).starts_with("was killed by SIGSEGV"));
        assert_eq!(ended(3 << 8), "exited with status 3");
    }
}
