//! `shine bench cpu`: shine's generated C/OpenMP code against the CPU anchors
//! (numpy/OpenBLAS sgemm, TVM's GEMM tutorial schedules, Halide's blur schedules), timed in
//! one run on this machine, interleaved, with medians and ratios (ARCHITECTURE.md, "Conventions").
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
//!
//! The parts: the case table (`cases.rs`), how long each side is timed (`settings.rs`), the
//! worker processes and the anchors' virtualenv (`workers.rs`), one case at one thread count
//! (`session.rs`), the load of other processes while it ran (`noise.rs`), and the shine side
//! of the protocol, `shine bench cpu-worker` (`cpu_worker.rs`).

mod cases;
mod cpu_worker;
mod noise;
mod peak;
mod session;
mod settings;
mod workers;

use crate::bench_row::{table, Row};
use crate::cli::{emit, parse_nat_binding, CliError};
use cases::{absolute, find_root, load_cases, select_cases, user_case, Case};
use clap::{Args, Subcommand};
use serde_json::{json, Map, Value};
use session::Session;
use settings::Settings;
use std::io::Write;
use std::path::PathBuf;
use std::process::Command;
use workers::{anchor_worker, ensure_venv, shine_worker};

/// The benchmarks of `shine bench`.
#[derive(Subcommand, Debug)]
pub enum BenchCommand {
    /// shine's generated CPU code against numpy/OpenBLAS, TVM and Halide, interleaved.
    ///
    /// The exit status is non-zero when any case fails (an error of either side, or a
    /// result that is not verified); the table and the --json report are written first.
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
    /// Override a size of every selected case that has it, e.g. `--nat n=256` (repeatable);
    /// with --program, every size of the program.
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
    /// Benchmark this program instead of the case table (with --def, --nat for every size,
    /// and --numpy for an anchor).
    #[arg(long, value_name = "P.rise", requires = "def", conflicts_with_all = ["cases", "cases_file", "list"])]
    pub program: Option<PathBuf>,
    /// The definition of --program.
    #[arg(long, value_name = "NAME", requires = "program")]
    pub def: Option<String>,
    /// The strategy file for --program (with --apply); without it, --apply names a built-in
    /// schedule, and without both the default schedule of --target openmp applies.
    #[arg(long, value_name = "S.elv", requires = "apply")]
    pub strategy: Option<PathBuf>,
    /// The strategy to apply to --program.
    #[arg(long, value_name = "STRATEGY", requires = "program")]
    pub apply: Option<String>,
    /// The anchor and reference of --program: a numpy expression over its inputs `x0, x1,
    /// ...` (`np` is numpy), e.g. `'x0 @ x1'`; the reference evaluates it in float64.
    /// Without it, shine's code is timed alone and verified against the interpreter.
    #[arg(long, value_name = "EXPR", requires = "program")]
    pub numpy: Option<String>,
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
        BenchCommand::CpuWorker => cpu_worker::run(),
    }
}

fn err(s: impl Into<String>) -> CliError {
    CliError::from(s.into())
}

fn progress(s: &str) {
    let _ = writeln!(std::io::stderr().lock(), "{s}");
}

/// `shine bench cpu`: every selected case at every thread count, then the table and the report.
fn cpu(args: &CpuArgs) -> Result<(), CliError> {
    let root = absolute(find_root(args.root.as_deref()));
    let cases_file = args
        .cases_file
        .clone()
        .unwrap_or_else(|| root.join("bench/cpu_cases.json"));
    let cases = match &args.program {
        Some(program) => vec![user_case(program, args)?],
        None => select_cases(load_cases(&cases_file)?, args)?,
    };
    // a program without --numpy has no anchor: it is timed alone
    let no_anchors = args.no_anchors || (args.program.is_some() && args.numpy.is_none());
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
    let cases: Vec<Case> = if no_anchors {
        cases.into_iter().filter(|c| c.shine.is_some()).collect()
    } else {
        cases
    };
    if cases.is_empty() {
        return Err(err("no case with a shine program selected (--no-anchors)"));
    }
    let settings = Settings::of(args)?;
    let python = if no_anchors {
        None
    } else {
        let venv = args
            .venv
            .clone()
            .unwrap_or_else(|| root.join(".venv-bench"));
        Some(ensure_venv(&root, &venv, &args.python)?)
    };
    // private, and removed on SIGINT, SIGTERM and SIGHUP too (found by shine-clifuzz:
    // `bench` stopped by SIGTERM left its directory behind)
    let dir = runtime::TempDir::new()
        .map_err(|e| err(format!("cannot create a temporary directory: {e}")))?;
    let started = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);

    let mut rows: Vec<(usize, Row)> = Vec::new();
    let mut hellos = Map::new();
    let mut peaks = Map::new();
    let peak_exe = peak::build(dir.path(), &args.cc);
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
        let peak = measure_peak(&peak_exe, threads);
        peaks.insert(threads.to_string(), peak_json(&peak));
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
            let mut row = session.run_case(case, threads);
            set_peak_fraction(&mut row, case, &peak);
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
            "anchors": !no_anchors,
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
            "peak_fma": peaks,
            "rows": rows,
        });
        let text = serde_json::to_string_pretty(&report).unwrap_or_default();
        shine::files::write_whole(path, (text + "\n").as_bytes()).map_err(err)?;
        progress(&format!("wrote {}", path.display()));
    }
    failed_cases(&rows)
}

/// The machine's peak at `threads` threads (see [`peak`]), with a progress line.
fn measure_peak(exe: &Result<PathBuf, String>, threads: usize) -> Result<Vec<peak::Peak>, String> {
    let peaks = exe.clone().and_then(|exe| peak::measure(&exe, threads));
    match &peaks {
        Ok(ps) => {
            let each: Vec<String> = ps
                .iter()
                .map(|p| format!("{} {:.1} GFLOP/s", p.isa, p.gflops))
                .collect();
            progress(&format!(
                "peak FMA throughput at {threads} thread(s): {}",
                if each.is_empty() {
                    "no AVX2 or AVX-512".to_string()
                } else {
                    each.join(", ")
                }
            ));
        }
        Err(e) => progress(&format!("peak FMA throughput at {threads} thread(s): {e}")),
    }
    peaks
}

fn peak_json(peak: &Result<Vec<peak::Peak>, String>) -> Value {
    match peak {
        Ok(ps) => serde_json::to_value(ps).unwrap_or(Value::Null),
        Err(e) => json!({ "error": e }),
    }
}

/// Shine's GFLOP/s and its fraction of the peak, for a case that gives its `flops`.
fn set_peak_fraction(row: &mut Row, case: &Case, peak: &Result<Vec<peak::Peak>, String>) {
    let (Some(formula), Some(median_ms)) = (&case.flops, row.shine_median_ms) else {
        return;
    };
    match peak::flops(formula, &case.nats) {
        Ok(flops) => {
            let gflops = flops / (median_ms * 1e6);
            row.shine_gflops = Some(gflops);
            if let Some(p) = peak.as_ref().ok().and_then(|ps| peak::widest(ps)) {
                row.peak_gflops = Some(p.gflops);
                row.peak_fraction = Some(gflops / p.gflops);
            }
        }
        Err(e) => row.error = Some(e),
    }
}

/// An error naming the rows that failed: an error of either side, or a result not verified.
fn failed_cases(rows: &[Row]) -> Result<(), CliError> {
    let failed: Vec<String> = rows
        .iter()
        .filter(|r| {
            r.error.is_some()
                || r.anchor_error.is_some()
                || r.verify_error.is_some()
                || r.verified == Some(false)
                || r.anchor_verified.as_ref() == Some(&Value::Bool(false))
        })
        .map(|r| format!("{} at {} thread(s)", r.case, r.threads))
        .collect();
    if failed.is_empty() {
        return Ok(());
    }
    Err(err(format!(
        "{} of {} case runs failed or were not verified: {}",
        failed.len(),
        rows.len(),
        failed.join(", ")
    )))
}

/// The machine the report was taken on: its CPU model, CPU count and C compiler.
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
