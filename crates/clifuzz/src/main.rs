//! `shine-clifuzz`: runs generated invocations of `shine` in parallel and reports every one
//! that breaks the command-line contract (a panic, a crash, a hang, an error without a
//! message, a temporary file left behind).
//!
//! ```text
//! shine-clifuzz --shine target/release/shine --examples examples --seed 1 --cases 1000000 --jobs 16
//! shine-clifuzz ... --seed 1 --start 4711 --cases 1          (replay one case)
//! shine-clifuzz ... --seed 1 --start 4711 --cases 1 --show   (print it without running)
//! ```

use clap::Parser;
use clifuzz::case::Case;
use clifuzz::cc_cache;
use clifuzz::corpus::Corpus;
use clifuzz::exec::{self, Limits, Outcome};
use clifuzz::gen;
use clifuzz::report::{write_reproducer, Summary};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// Fuzzes the shine command line (see crates/clifuzz/README.md).
#[derive(Parser, Debug)]
#[command(name = "shine-clifuzz", version)]
struct Args {
    /// The shine binary to fuzz.
    #[arg(long, value_name = "PATH", default_value = "target/release/shine")]
    shine: PathBuf,
    /// The examples directory (its .rise, .elv, fsmooth/ and data/ files are mutated).
    #[arg(long, value_name = "DIR", default_value = "examples")]
    examples: PathBuf,
    /// The seed of the run.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// How many cases to run.
    #[arg(long, default_value_t = 1000)]
    cases: u64,
    /// The index of the first case.
    #[arg(long, default_value_t = 0)]
    start: u64,
    /// Cases run at the same time.
    #[arg(long, default_value_t = 1)]
    jobs: usize,
    /// Where reproducers of bugs and the summary go.
    #[arg(long, value_name = "DIR", default_value = "clifuzz-out")]
    out: PathBuf,
    /// Where the cases run (default: a fresh directory under $TMPDIR, removed at the end).
    #[arg(long, value_name = "DIR")]
    work: Option<PathBuf>,
    /// Seconds after which a case is a hang (the contract: every input ends in seconds).
    #[arg(long, default_value_t = 30)]
    timeout_s: u64,
    /// The address-space limit of a case (shine and what it starts), in MiB.
    #[arg(long, default_value_t = 4096)]
    memory_mb: u64,
    /// Seconds between progress lines (0: none).
    #[arg(long, default_value_t = 10)]
    progress_s: u64,
    /// Print the cases (arguments and files) instead of running them.
    #[arg(long)]
    show: bool,
    /// Compile every C module with the real compiler, not through the run's cache of
    /// compilations (see `cc_cache`).
    #[arg(long)]
    no_cc_cache: bool,
    /// Write one line per case here: index, command, quality, outcome, milliseconds, and
    /// the first line of its standard error.
    #[arg(long, value_name = "FILE")]
    log: Option<PathBuf>,
}

fn main() -> ExitCode {
    if let Some(compiler) = cc_cache::invoked_as_compiler() {
        std::process::exit(cc_cache::main(&compiler));
    }
    let args = Args::parse();
    match fuzz(&args) {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::from(1),
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(2)
        }
    }
}

/// Runs the cases; `Ok(false)` when there were bugs.
fn fuzz(args: &Args) -> Result<bool, String> {
    let shine = std::fs::canonicalize(&args.shine)
        .map_err(|e| format!("--shine {}: {e}", args.shine.display()))?;
    let corpus = Corpus::load(&args.examples, &shine)?;
    let range = args.start..args.start.saturating_add(args.cases);
    if args.show {
        for index in range {
            show(&gen::generate(&corpus, args.seed, index));
        }
        return Ok(true);
    }
    let limits = Limits {
        timeout: Duration::from_secs(args.timeout_s),
        memory: args.memory_mb << 20,
    };
    let work = match &args.work {
        Some(w) => w.clone(),
        None => std::env::temp_dir().join(format!("clifuzz-{}", std::process::id())),
    };
    std::fs::create_dir_all(&work).map_err(|e| format!("{}: {e}", work.display()))?;
    std::fs::create_dir_all(&args.out).map_err(|e| format!("{}: {e}", args.out.display()))?;
    let env = if args.no_cc_cache {
        Vec::new()
    } else {
        cc_cache::install(&work)?
    };
    let started = Instant::now();
    let summary = run_all(args, &corpus, &shine, &work, &limits, &env, range, started);
    let (hits, misses) = cc_cache::hits_and_misses(&work);
    let _ = std::fs::remove_dir_all(&work);
    let mut text = summary.text(
        args.seed,
        args.start,
        started.elapsed().as_secs_f64(),
        args.jobs,
    );
    if hits + misses > 0 {
        text.push_str(&format!(
            "== C compilations: {hits} of {} replayed from the run's cache\n",
            hits + misses
        ));
    }
    print!("{text}");
    let _ = std::fs::write(args.out.join("summary.txt"), &text);
    Ok(summary.bugs.is_empty())
}

/// Runs the cases of `range` on `args.jobs` workers, with `env` added to their environment;
/// collects and reports their outcomes.
#[allow(clippy::too_many_arguments)]
fn run_all(
    args: &Args,
    corpus: &Corpus,
    shine: &Path,
    work: &Path,
    limits: &Limits,
    env: &[(String, std::ffi::OsString)],
    range: std::ops::Range<u64>,
    started: Instant,
) -> Summary {
    let next = AtomicU64::new(range.start);
    let (tx, rx) = mpsc::channel::<(Case, Outcome)>();
    let mut summary = Summary::default();
    let mut log = args
        .log
        .as_ref()
        .and_then(|p| std::fs::File::create(p).ok());
    std::thread::scope(|s| {
        for job in 0..args.jobs.max(1) {
            let tx = tx.clone();
            let (next, end) = (&next, range.end);
            s.spawn(move || {
                let dir = work.join(format!("case-{job}"));
                let scratch = work.join(format!("job-{job}"));
                loop {
                    let index = next.fetch_add(1, Ordering::Relaxed);
                    if index >= end {
                        break;
                    }
                    let case = gen::generate(corpus, args.seed, index);
                    let outcome = exec::run(shine, &case, &dir, &scratch, limits, env);
                    if tx.send((case, outcome)).is_err() {
                        break;
                    }
                }
            });
        }
        drop(tx);
        let mut last = Instant::now();
        for (case, outcome) in rx {
            summary.add(&case, &outcome);
            if let Some(file) = log.as_mut() {
                use std::io::Write;
                let first = outcome.stderr_tail.lines().find(|l| !l.trim().is_empty());
                let _ = writeln!(
                    file,
                    "{}\t{}\t{:?}\t{}\t{:.0}\t{}",
                    case.index,
                    case.command,
                    case.quality,
                    outcome.kind.name(),
                    outcome.elapsed.as_secs_f64() * 1e3,
                    first.unwrap_or("").chars().take(200).collect::<String>()
                );
            }
            if outcome.kind.is_bug() {
                let path = write_reproducer(&args.out, args.seed, &case, &outcome, limits)
                    .unwrap_or_else(|e| PathBuf::from(format!("(not written: {e})")));
                eprintln!(
                    "[clifuzz] BUG case {} ({}): {} -> {}",
                    case.index,
                    case.command,
                    outcome.kind.name(),
                    path.display()
                );
                summary
                    .bugs
                    .push((case.index, case.command, outcome.kind.clone(), path));
            }
            if args.progress_s > 0 && last.elapsed().as_secs() >= args.progress_s {
                last = Instant::now();
                let done = summary.cases();
                let secs = started.elapsed().as_secs_f64();
                eprintln!(
                    "[clifuzz] {done}/{} cases, {:.1} cases/s, {} bugs, {secs:.0} s",
                    range.end - range.start,
                    done as f64 / secs,
                    summary.bugs.len()
                );
            }
        }
    });
    summary
}

/// Prints a case: its arguments and files.
fn show(case: &Case) {
    println!(
        "== case {} ({}, {:?}): shine {:?}",
        case.index, case.command, case.quality, case.args
    );
    for (name, bytes) in &case.files {
        if name == "empty" || name == "dir/.keep" {
            continue;
        }
        let text = String::from_utf8_lossy(bytes);
        let shown: String = text.chars().take(400).collect();
        println!("-- {name} ({} bytes)\n{shown}", bytes.len());
    }
    if let Some(stdin) = &case.stdin {
        println!("-- stdin\n{}", String::from_utf8_lossy(stdin));
    }
}
