//! `shine bench cpu`: shine's generated C/OpenMP code against the CPU anchors
//! (numpy/OpenBLAS sgemm, TVM's GEMM tutorial schedules, Halide's blur schedules), timed in
//! one run on this machine, interleaved, with medians and ratios (DESIGN.md, "Conventions").
//!
//! The cases are data (`bench/cpu_cases.json`): each maps a RISE definition, a strategy and
//! sizes to an anchor and an independent reference. For every thread count the command starts
//! two workers, both with the thread count in their environment before any threading runtime
//! loads: a `shine bench cpu-worker` child (OpenMP reads `OMP_NUM_THREADS` once, when libgomp
//! is loaded into it) and the Python anchor worker `bench/cpu_anchors.py` (`OMP_NUM_THREADS`,
//! `OPENBLAS_NUM_THREADS`, `TVM_NUM_THREADS`, `HL_NUM_THREADS`). Both answer JSON-line requests
//! and stay alive for all cases of that thread count. Per case: shine's code is compiled,
//! run once and its result checked against numpy (or, with `--no-anchors`, against the
//! interpreter); the anchor is built on the same inputs (`.npy` files) and checked; then the
//! two sides alternate in rounds (ABBA order) until each has its runs. Only one side runs
//! at a time; the other waits on its standard input.

use crate::bench_row::{table, Row, ShineSpec, SideTimes};
use crate::cli::{emit, parse_nat_binding, CliError};
use clap::{Args, Subcommand};
use serde_json::{json, Map, Value};
use shine::{Executable, Inputs, Options, RunOptions, SourceFile, StrategySource, Target};
use std::collections::{BTreeMap, HashMap};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::{Duration, Instant};

/// The benchmarks of `shine bench`.
#[derive(Subcommand, Debug)]
pub enum BenchCommand {
    /// shine's generated CPU code against numpy/OpenBLAS, TVM and Halide, interleaved.
    Cpu(Box<CpuArgs>),
    /// The shine side of `bench cpu` (JSON lines on stdin and stdout; internal).
    #[command(hide = true)]
    CpuWorker,
}

/// Arguments of `shine bench cpu`.
#[derive(Args, Debug)]
pub struct CpuArgs {
    /// Run only these cases: a case name, or a prefix of names (`mm_`, `binomial_f32`);
    /// repeatable. A case named here runs even when `--quick` would skip it.
    #[arg(long = "case", value_name = "NAME")]
    pub cases: Vec<String>,
    /// The thread counts, each in its own pair of worker processes.
    #[arg(long, value_name = "N,N", value_delimiter = ',', default_values_t = [1usize, 2])]
    pub threads: Vec<usize>,
    /// A smoke test: the cases marked quick, fewer runs, two rounds.
    #[arg(long)]
    pub quick: bool,
    /// Time shine's code only (no virtualenv needed); verify against the interpreter.
    #[arg(long)]
    pub no_anchors: bool,
    /// Write every row as one JSON object to this file.
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// Override a size of every selected case that has it, e.g. `--nat n=256` (repeatable).
    #[arg(long = "nat", value_name = "NAME=VALUE", value_parser = parse_nat_binding)]
    pub nats: Vec<(String, i64)>,
    /// List the cases and exit.
    #[arg(long)]
    pub list: bool,
    /// The case table (default: ROOT/bench/cpu_cases.json).
    #[arg(long = "cases", value_name = "FILE")]
    pub cases_file: Option<PathBuf>,
    /// The repository root that the case table's paths are relative to (default: the current
    /// directory if it holds bench/cpu_cases.json, else the source tree shine was built from).
    #[arg(long, value_name = "DIR")]
    pub root: Option<PathBuf>,
    /// The anchors' virtualenv, created on first use (default: ROOT/.venv-bench).
    #[arg(long, value_name = "DIR")]
    pub venv: Option<PathBuf>,
    /// The Python that creates the virtualenv.
    #[arg(long, value_name = "PYTHON", default_value = "python3")]
    pub python: String,
    /// Seconds of timed runs per side and case (default 3, quick 0.5); runs are this over
    /// the time of one run, within --min-runs and --max-runs.
    #[arg(long, value_name = "SECONDS")]
    pub budget: Option<f64>,
    /// Rounds per case: the timed runs of each side are split into this many chunks, and
    /// the chunks of the two sides alternate (default 5, quick 2).
    #[arg(long, value_name = "N")]
    pub rounds: Option<usize>,
    /// The fewest timed runs per side and case (default 3, quick 2).
    #[arg(long, value_name = "N")]
    pub min_runs: Option<usize>,
    /// The most timed runs per side and case (default 200, quick 50).
    #[arg(long, value_name = "N")]
    pub max_runs: Option<usize>,
    /// Pause between the two sides, so that spinning idle threads of one (OpenMP, OpenBLAS,
    /// TVM) have gone to sleep before the other runs.
    #[arg(long, value_name = "MS", default_value_t = 100)]
    pub settle_ms: u64,
    /// The C compiler for shine's code.
    #[arg(long, value_name = "CC", default_value = "gcc")]
    pub cc: String,
    /// Flags for the C compiler (default `-O3 -march=native -fopenmp`: IEEE floats).
    #[arg(long = "cflags", value_name = "FLAGS", allow_hyphen_values = true)]
    pub cflags: Option<String>,
    /// Build shine's code with `-ffast-math` (results may differ from IEEE; the report
    /// says so in its settings).
    #[arg(long)]
    pub fast_math: bool,
}

/// `shine bench ...`
pub fn run(cmd: &BenchCommand) -> Result<(), CliError> {
    match cmd {
        BenchCommand::Cpu(args) => cpu(args),
        BenchCommand::CpuWorker => worker(),
    }
}

fn err(s: impl Into<String>) -> CliError {
    CliError::from(s.into())
}

fn progress(s: &str) {
    let _ = writeln!(std::io::stderr().lock(), "{s}");
}

// ---------------------------------------------------------------------------------------------
// The case table

/// One benchmark case: a shine program (or none yet) against one anchor.
#[derive(Clone, Debug)]
struct Case {
    name: String,
    group: String,
    /// The program, definition, strategy file and strategy expression; `None`: no shine
    /// program exists for this case yet (the anchor still runs).
    shine: Option<ShineSpec>,
    nats: Vec<(String, i64)>,
    /// The independent reference (computed by numpy in the anchor worker).
    reference: Option<String>,
    anchor: Option<String>,
    quick: bool,
    seed: u64,
    note: Option<String>,
}

fn load_cases(path: &Path) -> Result<Vec<Case>, CliError> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| err(format!("cannot read `{}`: {e}", path.display())))?;
    let doc: Value = serde_json::from_str(&text)
        .map_err(|e| err(format!("`{}` is not JSON: {e}", path.display())))?;
    let cases = doc
        .get("cases")
        .and_then(Value::as_array)
        .ok_or_else(|| err(format!("`{}` has no `cases` list", path.display())))?;
    cases
        .iter()
        .enumerate()
        .map(|(i, c)| parse_case(c).map_err(|m| err(format!("{}: case {i}: {m}", path.display()))))
        .collect()
}

fn parse_case(c: &Value) -> Result<Case, String> {
    let text = |key: &str| c.get(key).and_then(Value::as_str).map(str::to_string);
    let name = text("name").ok_or("no `name`")?;
    let shine = match text("program") {
        Some(program) => Some(ShineSpec {
            program,
            def: text("def").ok_or(format!("`{name}` has a program but no `def`"))?,
            strategy_file: text("strategy_file"),
            strategy: text("strategy"),
        }),
        None => None,
    };
    if let Some(s) = &shine {
        if s.strategy_file.is_some() != s.strategy.is_some() {
            return Err(format!(
                "`{name}`: give both `strategy_file` and `strategy`, or neither"
            ));
        }
    }
    let mut nats = Vec::new();
    if let Some(map) = c.get("nats").and_then(Value::as_object) {
        for (k, v) in map {
            let v = v
                .as_i64()
                .filter(|v| *v >= 0)
                .ok_or(format!("`{name}`: the size `{k}` is not a natural number"))?;
            nats.push((k.clone(), v));
        }
    }
    Ok(Case {
        group: text("group").unwrap_or_default(),
        shine,
        nats,
        reference: text("reference"),
        anchor: text("anchor"),
        quick: c.get("quick").and_then(Value::as_bool).unwrap_or(false),
        seed: c.get("seed").and_then(Value::as_u64).unwrap_or(1),
        note: text("note"),
        name,
    })
}

fn select_cases(all: Vec<Case>, args: &CpuArgs) -> Result<Vec<Case>, CliError> {
    for pattern in &args.cases {
        if !all.iter().any(|c| c.name.starts_with(pattern.as_str())) {
            let names: Vec<&str> = all.iter().map(|c| c.name.as_str()).collect();
            return Err(err(format!(
                "no case matches `{pattern}`; the cases are: {}",
                names.join(", ")
            )));
        }
    }
    let mut cases: Vec<Case> = all
        .into_iter()
        .filter(|c| {
            if args.cases.is_empty() {
                !args.quick || c.quick
            } else {
                args.cases.iter().any(|p| c.name.starts_with(p.as_str()))
            }
        })
        .collect();
    for case in &mut cases {
        for (name, value) in &args.nats {
            if let Some(slot) = case.nats.iter_mut().find(|(n, _)| n == name) {
                slot.1 = *value;
            }
        }
    }
    Ok(cases)
}

/// The repository root: `--root`, the current directory when it holds the case table, or the
/// source tree this binary was built from.
fn find_root(arg: Option<&Path>) -> PathBuf {
    if let Some(root) = arg {
        return root.to_path_buf();
    }
    if Path::new("bench/cpu_cases.json").is_file() {
        return PathBuf::from(".");
    }
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
}

fn absolute(path: PathBuf) -> PathBuf {
    std::fs::canonicalize(&path).unwrap_or(path)
}

// ---------------------------------------------------------------------------------------------
// Settings

struct Settings {
    budget_s: f64,
    rounds: usize,
    min_runs: usize,
    max_runs: usize,
    settle: Duration,
}

impl Settings {
    fn of(args: &CpuArgs) -> Result<Settings, CliError> {
        let (budget, rounds, min_runs, max_runs) = if args.quick {
            (0.5, 2, 2, 50)
        } else {
            (3.0, 5, 3, 200)
        };
        let s = Settings {
            budget_s: args.budget.unwrap_or(budget),
            rounds: args.rounds.unwrap_or(rounds).max(1),
            min_runs: args.min_runs.unwrap_or(min_runs).max(1),
            max_runs: args.max_runs.unwrap_or(max_runs),
            settle: Duration::from_millis(args.settle_ms),
        };
        if s.max_runs < s.min_runs || s.budget_s.is_nan() || s.budget_s < 0.0 {
            return Err(err(
                "--max-runs must be at least --min-runs, --budget not negative",
            ));
        }
        Ok(s)
    }

    /// Timed runs for a side whose single run took `first_ms`.
    fn runs_for(&self, first_ms: f64) -> usize {
        let n = (self.budget_s * 1e3 / first_ms.max(1e-3)).ceil();
        (n.min(self.max_runs as f64) as usize).clamp(self.min_runs, self.max_runs)
    }

    /// Untimed runs before each chunk: one for fast code (caches, page faults, waking
    /// threads after the other side ran), none when a run is long anyway.
    fn warmup_for(&self, first_ms: f64) -> usize {
        usize::from(first_ms < 200.0)
    }
}

/// `total` runs split into `rounds` chunks as evenly as possible.
fn chunks(total: usize, rounds: usize) -> Vec<usize> {
    (0..rounds)
        .map(|i| total / rounds + usize::from(i < total % rounds))
        .collect()
}

// ---------------------------------------------------------------------------------------------
// Workers

/// A child process answering JSON-line requests.
struct Worker {
    name: String,
    child: Child,
    stdin: Option<ChildStdin>,
    stdout: BufReader<ChildStdout>,
}

impl Worker {
    fn spawn(name: &str, mut command: Command) -> Result<Worker, CliError> {
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

    fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Sends a request and waits for the answer; an answer with `"ok": false` is an error.
    fn request(&mut self, request: &Value) -> Result<Value, String> {
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

fn shine_worker(threads: usize) -> Result<Worker, CliError> {
    let exe = std::env::current_exe()
        .map_err(|e| err(format!("cannot find the shine executable: {e}")))?;
    let mut command = Command::new(exe);
    command
        .args(["bench", "cpu-worker"])
        .env("OMP_NUM_THREADS", threads.to_string());
    Worker::spawn("shine worker", command)
}

fn anchor_worker(python: &Path, script: &Path, threads: usize) -> Result<Worker, CliError> {
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
fn ensure_venv(root: &Path, venv: &Path, python: &str) -> Result<PathBuf, CliError> {
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
    std::fs::write(&stamp, wanted)
        .map_err(|e| err(format!("cannot write `{}`: {e}", stamp.display())))?;
    Ok(venv_python)
}

// ---------------------------------------------------------------------------------------------
// Noise: how busy the machine was with other processes while a case ran

/// Busy time of all CPUs and of our processes, in clock ticks, from /proc.
struct CpuSnapshot {
    at: Instant,
    busy_all: u64,
    busy_ours: u64,
}

/// Clock ticks per second of /proc figures (USER_HZ, 100 on Linux).
const USER_HZ: f64 = 100.0;

fn snapshot(pids: &[u32]) -> Option<CpuSnapshot> {
    let stat = std::fs::read_to_string("/proc/stat").ok()?;
    let cpu: Vec<u64> = stat
        .lines()
        .next()?
        .split_whitespace()
        .skip(1)
        .map(|x| x.parse().unwrap_or(0))
        .collect();
    // user nice system idle iowait irq softirq steal ...
    let busy_all = cpu.first()? + cpu.get(1)? + cpu.get(2)? + cpu.get(5)? + cpu.get(6)?;
    let mut busy_ours = 0;
    for pid in pids {
        let s = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
        // fields after the command name (which may hold spaces): state is field 3, utime 14
        let rest = &s[s.rfind(')')? + 1..];
        let f: Vec<u64> = rest
            .split_whitespace()
            .map(|x| x.parse().unwrap_or(0))
            .collect();
        busy_ours += f.get(11)? + f.get(12)?;
    }
    Some(CpuSnapshot {
        at: Instant::now(),
        busy_all,
        busy_ours,
    })
}

/// CPUs' worth of time spent by other processes between two snapshots.
fn foreign_cpus(a: &CpuSnapshot, b: &CpuSnapshot) -> f64 {
    let wall = b.at.duration_since(a.at).as_secs_f64();
    let all = b.busy_all.saturating_sub(a.busy_all) as f64 / USER_HZ;
    let ours = b.busy_ours.saturating_sub(a.busy_ours) as f64 / USER_HZ;
    if wall > 0.0 {
        ((all - ours) / wall).max(0.0)
    } else {
        0.0
    }
}

// ---------------------------------------------------------------------------------------------
// `shine bench cpu`

/// Running state shared by the cases of one thread count.
struct Session<'a> {
    settings: &'a Settings,
    shine: Worker,
    anchors: Option<Worker>,
    dir: &'a Path,
    args: &'a CpuArgs,
    root: &'a Path,
    next_id: u64,
}

fn cpu(args: &CpuArgs) -> Result<(), CliError> {
    let root = absolute(find_root(args.root.as_deref()));
    let cases_file = args
        .cases_file
        .clone()
        .unwrap_or_else(|| root.join("bench/cpu_cases.json"));
    let cases = select_cases(load_cases(&cases_file)?, args)?;
    if args.list {
        for c in &cases {
            let shine = match &c.shine {
                Some(s) => format!(
                    "{} {} [{}]",
                    s.program,
                    s.def,
                    s.strategy.as_deref().unwrap_or("as written")
                ),
                None => c.note.clone().unwrap_or("no shine program".into()),
            };
            let anchor = c.anchor.as_deref().unwrap_or("-");
            emit(&format!("{:28} {shine}  vs  {anchor}", c.name));
        }
        return Ok(());
    }
    if cases.is_empty() {
        return Err(err("no case selected"));
    }
    if args.threads.is_empty() || args.threads.contains(&0) {
        return Err(err("--threads takes thread counts of 1 or more"));
    }
    let cases: Vec<Case> = if args.no_anchors {
        cases.into_iter().filter(|c| c.shine.is_some()).collect()
    } else {
        cases
    };
    if cases.is_empty() {
        return Err(err("no case with a shine program selected (--no-anchors)"));
    }
    let settings = Settings::of(args)?;
    let python = if args.no_anchors {
        None
    } else {
        let venv = args
            .venv
            .clone()
            .unwrap_or_else(|| root.join(".venv-bench"));
        Some(ensure_venv(&root, &venv, &args.python)?)
    };
    let dir = tempfile::Builder::new()
        .prefix("shine-bench-")
        .tempdir()
        .map_err(|e| err(format!("cannot create a temporary directory: {e}")))?;
    let started = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);

    let mut rows: Vec<(usize, Row)> = Vec::new();
    let mut hellos = Map::new();
    let total = cases.len() * args.threads.len();
    let mut done = 0;
    for &threads in &args.threads {
        let shine = shine_worker(threads)?;
        let anchors = match &python {
            Some(py) => {
                let script = root.join("bench/cpu_anchors.py");
                let mut w = anchor_worker(py, &script, threads)?;
                let hello = w
                    .request(&json!({"op": "hello"}))
                    .map_err(|e| err(format!("the anchor worker does not start: {e}")))?;
                hellos.insert(threads.to_string(), hello);
                Some(w)
            }
            None => None,
        };
        let mut session = Session {
            settings: &settings,
            shine,
            anchors,
            dir: dir.path(),
            args,
            root: &root,
            next_id: 0,
        };
        for (index, case) in cases.iter().enumerate() {
            done += 1;
            progress(&format!(
                "[{done}/{total}] {} at {threads} thread(s)",
                case.name
            ));
            let row = session.run_case(case, threads);
            progress(&format!("    {}", row.summary_line()));
            rows.push((index, row));
        }
    }
    rows.sort_by_key(|(index, row)| (*index, row.threads));
    let rows: Vec<Row> = rows.into_iter().map(|(_, r)| r).collect();
    emit(&table(&rows));
    if let Some(path) = &args.json {
        let report = json!({
            "bench": "cpu",
            "started_unix_s": started,
            "quick": args.quick,
            "anchors": !args.no_anchors,
            "threads": args.threads,
            "settings": {
                "budget_s": settings.budget_s,
                "rounds": settings.rounds,
                "min_runs": settings.min_runs,
                "max_runs": settings.max_runs,
                "settle_ms": settings.settle.as_millis() as u64,
                "cc": args.cc,
                "cflags": args.cflags,
                "fast_math": args.fast_math,
            },
            "machine": machine_info(),
            "anchor_workers": hellos,
            "rows": rows,
        });
        let text = serde_json::to_string_pretty(&report).unwrap_or_default();
        std::fs::write(path, text + "\n")
            .map_err(|e| err(format!("cannot write `{}`: {e}", path.display())))?;
        progress(&format!("wrote {}", path.display()));
    }
    Ok(())
}

/// What a side of a case has ready to time.
struct Side {
    id: u64,
    runs: usize,
    warmup: usize,
    samples: Vec<f64>,
}

impl Side {
    /// The statistics of the samples and the warm-up runs per round.
    fn times(self) -> SideTimes {
        SideTimes {
            timing: runtime::Timing::from_samples(self.samples),
            warmup_per_round: self.warmup,
        }
    }
}

impl Session<'_> {
    fn fresh_id(&mut self) -> u64 {
        self.next_id += 1;
        self.next_id
    }

    fn run_case(&mut self, case: &Case, threads: usize) -> Row {
        let nats: BTreeMap<String, i64> = case.nats.iter().cloned().collect();
        let mut row = Row {
            case: case.name.clone(),
            group: case.group.clone(),
            threads,
            nats: nats.clone(),
            shine: case.shine.clone(),
            anchor: case.anchor.clone(),
            note: case.note.clone(),
            ..Row::default()
        };

        // The shine side: compile, run once, verify.
        let case_dir = self.dir.join(format!("{}-{threads}", case.name));
        let _ = std::fs::create_dir_all(&case_dir);
        let mut shine_side = None;
        let mut shine_io: Option<(Value, Value)> = None;
        if let Some(spec) = &case.shine {
            let id = self.fresh_id();
            let path = |p: &str| self.root.join(p).display().to_string();
            let request = json!({
                "op": "prepare", "id": id,
                "program": path(&spec.program), "def": spec.def,
                "strategy_file": spec.strategy_file.as_deref().map(path),
                "strategy": spec.strategy,
                "nats": nats, "seed": case.seed,
                "dir": if self.anchors.is_some() { Some(case_dir.display().to_string()) } else { None },
                "verify_interpreter": self.anchors.is_none(),
                "cc": self.args.cc, "cflags": self.args.cflags,
                "fast_math": self.args.fast_math,
            });
            match self.shine.request(&request) {
                Ok(answer) => {
                    let first_ms = answer["first_ms"].as_f64().unwrap_or(1.0);
                    row.shine_first_ms = Some(first_ms);
                    row.shine_compile_s = answer["compile_s"].as_f64();
                    if self.anchors.is_none() {
                        row.verified = answer["verified"].as_bool();
                        row.verified_by = Some("interpreter".into());
                        row.verify_error = answer["verify_error"].as_str().map(str::to_string);
                    }
                    shine_io = Some((answer["inputs"].clone(), answer["output"].clone()));
                    shine_side = Some(Side {
                        id,
                        runs: self.settings.runs_for(first_ms),
                        warmup: self.settings.warmup_for(first_ms),
                        samples: Vec::new(),
                    });
                }
                Err(e) => row.error = Some(e),
            }
        }

        // The anchor side: check shine's result, build the anchor on the same inputs.
        let mut anchor_side = None;
        let anchor_id = self.fresh_id();
        if let Some(anchors) = self.anchors.as_mut() {
            if let (Some((inputs, output)), Some(reference)) = (&shine_io, &case.reference) {
                let request = json!({"op": "verify", "reference": reference,
                                     "inputs": inputs, "output": output});
                match anchors.request(&request) {
                    Ok(a) => {
                        row.verified = a["verified"].as_bool();
                        row.verified_by = Some(format!("numpy:{reference}"));
                        row.max_abs_err = Some(a["max_abs_err"].clone());
                    }
                    Err(e) => row.verify_error = Some(e),
                }
            }
            if let Some(anchor) = &case.anchor {
                let id = anchor_id;
                let inputs = shine_io.as_ref().map(|(i, _)| i.clone());
                let request = json!({"op": "prepare", "id": id, "anchor": anchor,
                                     "inputs": inputs, "nats": nats,
                                     "reference": case.reference});
                match anchors.request(&request) {
                    Ok(a) => {
                        let first_ms = a["first_ms"].as_f64().unwrap_or(1.0);
                        row.anchor_first_ms = Some(first_ms);
                        row.anchor_verified = Some(a["anchor_verified"].clone());
                        row.anchor_max_abs_err = Some(a["anchor_max_abs_err"].clone());
                        row.anchor_info = Some(a["info"].clone());
                        anchor_side = Some(Side {
                            id,
                            runs: self.settings.runs_for(first_ms),
                            warmup: self.settings.warmup_for(first_ms),
                            samples: Vec::new(),
                        });
                    }
                    Err(e) => row.anchor_error = Some(e),
                }
            }
        }
        let _ = std::fs::remove_dir_all(&case_dir);

        // Interleaved rounds.
        let pids: Vec<u32> = std::iter::once(std::process::id())
            .chain(Some(self.shine.pid()))
            .chain(self.anchors.as_ref().map(Worker::pid))
            .collect();
        let before = snapshot(&pids);
        let rounds = self
            .settings
            .rounds
            .min(
                shine_side
                    .as_ref()
                    .map_or(0, |s| s.runs)
                    .max(anchor_side.as_ref().map_or(0, |s| s.runs)),
            )
            .max(1);
        let shine_chunks = chunks(shine_side.as_ref().map_or(0, |s| s.runs), rounds);
        let anchor_chunks = chunks(anchor_side.as_ref().map_or(0, |s| s.runs), rounds);
        let mut last_side = None;
        'rounds: for r in 0..rounds {
            let order = if r % 2 == 0 { [0, 1] } else { [1, 0] };
            for side in order {
                let (worker, state, n) = if side == 0 {
                    (Some(&mut self.shine), shine_side.as_mut(), shine_chunks[r])
                } else {
                    (
                        self.anchors.as_mut(),
                        anchor_side.as_mut(),
                        anchor_chunks[r],
                    )
                };
                let (Some(worker), Some(state)) = (worker, state) else {
                    continue;
                };
                if n == 0 {
                    continue;
                }
                if last_side.is_some_and(|l| l != side) {
                    std::thread::sleep(self.settings.settle);
                }
                last_side = Some(side);
                let request = json!({"op": "time", "id": state.id, "runs": n,
                                     "warmup": state.warmup});
                match worker.request(&request) {
                    Ok(a) => state.samples.extend(
                        a["samples_ms"]
                            .as_array()
                            .into_iter()
                            .flatten()
                            .filter_map(Value::as_f64),
                    ),
                    Err(e) => {
                        if side == 0 {
                            row.error = Some(e);
                        } else {
                            row.anchor_error = Some(e);
                        }
                        break 'rounds;
                    }
                }
            }
        }
        // /proc counts in 10 ms ticks: too coarse for a window shorter than half a second.
        row.foreign_cpus = match (before, snapshot(&pids)) {
            (Some(a), Some(b)) if b.at.duration_since(a.at) >= Duration::from_millis(500) => {
                let f = foreign_cpus(&a, &b);
                Some((f * 100.0).round() / 100.0)
            }
            _ => None,
        };
        for (worker, side) in [
            (Some(&mut self.shine), &shine_side),
            (self.anchors.as_mut(), &anchor_side),
        ] {
            if let (Some(w), Some(s)) = (worker, side) {
                let _ = w.request(&json!({"op": "release", "id": s.id}));
            }
        }
        if let Some(side) = shine_side {
            row.set_shine_times(side.times());
        }
        if let Some(side) = anchor_side {
            row.set_anchor_times(side.times());
        }
        row.set_ratio();
        row.rounds = rounds;
        row
    }
}

fn machine_info() -> Value {
    let mut info = Map::new();
    if let Ok(cpuinfo) = std::fs::read_to_string("/proc/cpuinfo") {
        if let Some(model) = cpuinfo.lines().find(|l| l.starts_with("model name")) {
            let name = model.split(':').nth(1).unwrap_or("").trim();
            info.insert("cpu".into(), name.into());
        }
    }
    if let Ok(n) = std::thread::available_parallelism() {
        info.insert("cpus".into(), n.get().into());
    }
    if let Ok(out) = Command::new("gcc").arg("--version").output() {
        let text = String::from_utf8_lossy(&out.stdout);
        info.insert("gcc".into(), text.lines().next().unwrap_or("").into());
    }
    Value::Object(info)
}

// ---------------------------------------------------------------------------------------------
// `shine bench cpu-worker`: the shine side

fn worker() -> Result<(), CliError> {
    let stdin = std::io::stdin();
    let mut programs: HashMap<u64, Executable> = HashMap::new();
    for line in stdin.lock().lines() {
        let line = line.map_err(|e| err(format!("reading a request: {e}")))?;
        if line.trim().is_empty() {
            continue;
        }
        let (answer, quit) = match serde_json::from_str::<Value>(&line) {
            Ok(request) => {
                let quit = request["op"] == "quit";
                let answer = match handle(&request, &mut programs) {
                    Ok(mut a) => {
                        a.insert("ok".into(), true.into());
                        Value::Object(a)
                    }
                    Err(e) => json!({"ok": false, "error": e.0}),
                };
                (answer, quit)
            }
            Err(e) => (
                json!({"ok": false, "error": format!("bad request: {e}")}),
                false,
            ),
        };
        emit(&answer.to_string());
        if quit {
            break;
        }
    }
    Ok(())
}

fn handle(
    request: &Value,
    programs: &mut HashMap<u64, Executable>,
) -> Result<Map<String, Value>, CliError> {
    let mut answer = Map::new();
    let id = request["id"].as_u64().unwrap_or(0);
    match request["op"].as_str().unwrap_or("") {
        "hello" => {
            let threads = std::env::var("OMP_NUM_THREADS").ok();
            answer.insert("omp_num_threads".into(), threads.into());
        }
        "prepare" => {
            let text = |k: &str| request[k].as_str().map(str::to_string);
            let start = Instant::now();
            let mut exe = compile_case(request)?;
            answer.insert("compile_s".into(), start.elapsed().as_secs_f64().into());
            let first = exe.bench(1, 0)?;
            answer.insert("first_ms".into(), first.code.median_ms.into());
            let result = exe.result()?;
            if let Some(dir) = text("dir") {
                let dir = PathBuf::from(dir);
                let mut inputs = Vec::new();
                for (i, input) in exe.inputs().iter().enumerate() {
                    let path = dir.join(format!("input{i}.npy"));
                    shine::npy::write(&path, input)?;
                    inputs.push(path.display().to_string());
                }
                let output = dir.join("output.npy");
                shine::npy::write(&output, &result)?;
                answer.insert("inputs".into(), inputs.into());
                answer.insert("output".into(), output.display().to_string().into());
            }
            if request["verify_interpreter"].as_bool() == Some(true) {
                match exe.verify(&result) {
                    Ok(()) => answer.insert("verified".into(), true.into()),
                    Err(e) => {
                        answer.insert("verify_error".into(), e.to_string().into());
                        answer.insert("verified".into(), false.into())
                    }
                };
            }
            programs.insert(id, exe);
        }
        "time" => {
            let exe = programs
                .get_mut(&id)
                .ok_or_else(|| err(format!("no program {id}")))?;
            let runs = request["runs"].as_u64().unwrap_or(1) as usize;
            let warmup = request["warmup"].as_u64().unwrap_or(0) as usize;
            let t = exe.bench(runs, warmup)?;
            answer.insert("samples_ms".into(), t.code.samples_ms.into());
        }
        "release" => {
            programs.remove(&id);
        }
        "quit" => {}
        other => return Err(err(format!("unknown request `{other}`"))),
    }
    Ok(answer)
}

/// The shine program of a `prepare` request, compiled for OpenMP with the request's C compiler
/// and flags and loaded on random inputs of its sizes.
fn compile_case(request: &Value) -> Result<Executable, CliError> {
    let text = |k: &str| request[k].as_str().map(str::to_string);
    let nats: Vec<(String, i64)> = request["nats"]
        .as_object()
        .map(|m| {
            m.iter()
                .filter_map(|(k, v)| Some((k.clone(), v.as_i64()?)))
                .collect()
        })
        .unwrap_or_default();
    let program = text("program").ok_or_else(|| err("no program"))?;
    let def = text("def").ok_or_else(|| err("no def"))?;
    let program = SourceFile::read(Path::new(&program))?;
    let strategy = match (text("strategy_file"), text("strategy")) {
        (Some(file), Some(apply)) => Some(StrategySource {
            file: SourceFile::read(Path::new(&file))?,
            apply,
        }),
        _ => None,
    };
    let artifact = shine::compile(
        &program,
        &def,
        strategy.as_ref(),
        Target::OpenMp,
        &Options::default(),
    )?;
    let options = RunOptions {
        cc: text("cc").unwrap_or("gcc".into()),
        cflags: text("cflags"),
        fast_math: request["fast_math"].as_bool().unwrap_or(false),
        ..RunOptions::default()
    };
    let seed = request["seed"].as_u64().unwrap_or(1);
    Ok(Executable::new(
        &artifact,
        Inputs::Random { seed },
        &nats,
        &options,
    )?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunks_split_evenly() {
        assert_eq!(chunks(7, 3), vec![3, 2, 2]);
        assert_eq!(chunks(2, 5), vec![1, 1, 0, 0, 0]);
        assert_eq!(chunks(0, 2), vec![0, 0]);
    }

    #[test]
    fn runs_stay_within_bounds() {
        let s = Settings {
            budget_s: 3.0,
            rounds: 5,
            min_runs: 3,
            max_runs: 200,
            settle: Duration::ZERO,
        };
        assert_eq!(s.runs_for(7000.0), 3);
        assert_eq!(s.runs_for(100.0), 30);
        assert_eq!(s.runs_for(0.001), 200);
    }

    #[test]
    fn the_case_table_parses() {
        let path = Path::new(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../bench/cpu_cases.json"
        ));
        let cases = load_cases(path).expect("the case table loads");
        assert!(cases.iter().any(|c| c.name.starts_with("mm_")));
        for c in &cases {
            assert!(c.anchor.is_some() || c.shine.is_some(), "{}", c.name);
        }
    }
}
