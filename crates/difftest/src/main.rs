//! `shine-difftest`: the differential-testing driver (see the crate's README).
//!
//! ```text
//! shine-difftest run --seed S --cases N [--start K] [--targets c,openmp,opencl,cuda]
//!                    [--chunk C] [--out DIR] [--shrink]
//! shine-difftest worker --seed S --from A --to B --targets T [--skip IDX:TARGET]
//! shine-difftest replay STEM      (STEM.rise, STEM.elv, STEM.sizes)
//! ```

use difftest::case::Case;
use difftest::exec::Outcome;
use difftest::sched::{self, Target};
use difftest::worker;
use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};
use std::time::Instant;

fn flag(args: &[String], name: &str) -> Option<String> {
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .cloned()
}

fn num(args: &[String], name: &str, default: u64) -> Result<u64, String> {
    flag(args, name).map_or(Ok(default), |v| {
        v.parse().map_err(|e| format!("{name} {v}: {e}"))
    })
}

fn targets(args: &[String]) -> Result<Vec<Target>, String> {
    flag(args, "--targets")
        .unwrap_or_else(|| "c,openmp,opencl".into())
        .split(',')
        .map(|t| {
            sched::parse_target(t)
                .ok_or_else(|| format!("unknown target `{t}` ({})", sched::target_names()))
        })
        .collect()
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = match args.first().map(String::as_str) {
        Some("run") => run(&args),
        Some("worker") => worker_cmd(&args),
        Some("replay") => replay(&args),
        Some("show") => show(&args),
        Some("shrink") => shrink_cmd(&args),
        _ => Err("usage: shine-difftest run --seed S --cases N [--targets c,openmp,opencl,cuda] [--out DIR] [--shrink] | replay STEM".into()),
    };
    match result {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::from(1),
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(2)
        }
    }
}

fn on_big_stack<T>(f: impl FnOnce() -> T) -> Result<T, String> {
    deep::run_caught("the worker", f)
}

fn worker_cmd(args: &[String]) -> Result<bool, String> {
    let seed = num(args, "--seed", 1)?;
    let (from, to) = (num(args, "--from", 0)?, num(args, "--to", 1)?);
    let targets = targets(args)?;
    let skip = flag(args, "--skip").and_then(|s| {
        let (i, t) = s.split_once(':')?;
        Some((i.parse().ok()?, sched::parse_target(t)?))
    });
    let channel = protocol_channel()?;
    let finished = on_big_stack(move || {
        let cases: Vec<(u64, Case)> = (from..to).map(|i| (i, Case::generate(seed, i))).collect();
        let mut out = std::io::BufWriter::new(channel);
        let finished = worker::run_cases(&cases, &targets, skip, &mut out);
        let _ = out.flush();
        finished
    })?;
    if !finished {
        // the device may be unusable: the driver goes on in a fresh worker
        std::process::exit(worker::RESTART);
    }
    Ok(true)
}

/// The worker's result lines go to its standard output as it started, moved to a
/// descriptor of their own (closed in child processes); descriptor 1 then goes where
/// standard error goes, so that what else writes there (a kernel's `printf` of a foreign
/// function, on the device or in the OpenCL child process) cannot enter a result line.
fn protocol_channel() -> Result<std::fs::File, String> {
    use std::os::fd::FromRawFd;
    // SAFETY: `fcntl` and `dup2` on this process's own standard descriptors; the new
    // descriptor is owned by the returned file alone.
    unsafe {
        let fd = libc::fcntl(1, libc::F_DUPFD_CLOEXEC, 3);
        if fd < 0 || libc::dup2(2, 1) < 0 {
            return Err(format!(
                "cannot set up the worker's output: {}",
                std::io::Error::last_os_error()
            ));
        }
        Ok(std::fs::File::from_raw_fd(fd))
    }
}

/// Prints case `--index` of `--seed`: its program, schedules and sizes.
fn show(args: &[String]) -> Result<bool, String> {
    let case = Case::generate(num(args, "--seed", 1)?, num(args, "--index", 0)?);
    let mut text = format!("{}\n", case.program);
    for t in sched::TARGETS {
        text.push_str(&format!(
            "-- {}\n{}\n",
            case.sizes_file(t),
            difftest::sched::elv(case.steps_for(t))
        ));
    }
    // a closed pipe (`show | head`) is no error
    let _ = std::io::stdout().lock().write_all(text.as_bytes());
    Ok(true)
}

fn read_stem(stem: &str) -> Result<(Case, Target), String> {
    let read = |ext: &str| {
        std::fs::read_to_string(format!("{stem}.{ext}")).map_err(|e| format!("{stem}.{ext}: {e}"))
    };
    Case::from_files(&read("rise")?, &read("elv")?, &read("sizes")?)
}

fn replay(args: &[String]) -> Result<bool, String> {
    let stem = args.get(1).ok_or("replay needs a file stem")?.clone();
    let (case, target) = read_stem(&stem)?;
    let lines = on_big_stack(move || {
        let mut buf = Vec::new();
        worker::run_cases(&[(0, case)], &[target], None, &mut buf);
        String::from_utf8_lossy(&buf).into_owned()
    })?;
    let result = lines
        .lines()
        .find(|l| l.starts_with("R\t"))
        .unwrap_or("")
        .to_string();
    println!("{result}");
    let kind = result.split('\t').nth(3).unwrap_or("");
    Ok(matches!(
        kind,
        "pass"
            | "refused"
            | "interp-refused"
            | "strategy-failed"
            | "stopped-ahead"
            | "both-failed"
            | "foreign-failed"
            | "foreign-c-only"
    ))
}

/// Results of a run.
#[derive(Default)]
struct Summary {
    by_target: BTreeMap<(String, String), u64>,
    causes: BTreeMap<String, u64>,
    bugs: Vec<(u64, Target, Outcome)>,
}

fn parse_outcome(kind: &str, detail: String) -> Outcome {
    match kind {
        "pass" => Outcome::Pass,
        "ill-typed" => Outcome::IllTyped(detail),
        "interp-refused" => Outcome::InterpRefused(detail),
        "strategy-failed" => Outcome::StrategyFailed(detail),
        "refused" => Outcome::Refused(detail),
        "code-does-not-compile" => Outcome::CodeDoesNotCompile(detail),
        "mismatch" => Outcome::Mismatch(detail),
        "unchecked" => Outcome::Unchecked(detail),
        "stopped-ahead" => Outcome::StoppedAhead(detail),
        "both-failed" => Outcome::BothFailed(detail),
        "foreign-failed" => Outcome::ForeignFailed(detail),
        "foreign-c-only" => Outcome::ForeignCOnly(detail),
        "panic" => Outcome::Panic(detail),
        _ => Outcome::Crash(detail),
    }
}

impl Summary {
    fn add(&mut self, idx: u64, t: Target, o: Outcome) {
        *self
            .by_target
            .entry((t.name().into(), o.kind().into()))
            .or_default() += 1;
        if o != Outcome::Pass {
            *self.causes.entry(o.cause()).or_default() += 1;
        }
        if o.is_bug() {
            self.bugs.push((idx, t, o));
        }
    }

    fn total(&self) -> u64 {
        self.by_target.values().sum()
    }

    fn report(&self, elapsed: f64) -> String {
        let mut r = format!("== {} cases in {elapsed:.0} s\n", self.total());
        for ((t, k), n) in &self.by_target {
            r.push_str(&format!("  {t:7} {k:22} {n}\n"));
        }
        r.push_str("== causes (not passing)\n");
        let mut causes: Vec<_> = self.causes.iter().collect();
        causes.sort_by(|a, b| b.1.cmp(a.1));
        for (c, n) in causes.iter().take(40) {
            r.push_str(&format!("  {n:7}  {c}\n"));
        }
        r.push_str(&format!(
            "== {} bugs (mismatches, crashes, panics, code that does not compile, unchecked)\n",
            self.bugs.len()
        ));
        r
    }
}

/// Runs cases `from..to` in child workers, restarting after a crash.
fn run_chunk(
    exe: &Path,
    seed: u64,
    from: u64,
    to: u64,
    targets: &str,
    summary: &mut Summary,
) -> Result<(), String> {
    let mut skip: Option<String> = None;
    loop {
        let mut cmd = Command::new(exe);
        cmd.args([
            "worker",
            "--seed",
            &seed.to_string(),
            "--from",
            &from.to_string(),
            "--to",
            &to.to_string(),
            "--targets",
            targets,
        ]);
        if let Some(s) = &skip {
            cmd.args(["--skip", s]);
        }
        let mut child = cmd
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| e.to_string())?;
        let stdout = child.stdout.take().ok_or("no stdout")?;
        // read on a thread as it comes: a worker that prints much on stderr (foreign
        // functions that print, run by the interpreter) would block on a full pipe
        let stderr = child
            .stderr
            .take()
            .map(|e| std::thread::spawn(move || tail_of(e)));
        let mut begun: Option<(u64, Target)> = None;
        let mut last: Option<(u64, Target)> = None;
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            let f: Vec<&str> = line.splitn(5, '\t').collect();
            let (Some(idx), Some(t)) = (
                f.get(1).and_then(|i| i.parse().ok()),
                f.get(2).and_then(|t| sched::parse_target(t)),
            ) else {
                continue;
            };
            match f[0] {
                "B" => begun = Some((idx, t)),
                "R" => {
                    begun = None;
                    last = Some((idx, t));
                    summary.add(
                        idx,
                        t,
                        parse_outcome(f.get(3).unwrap_or(&""), f.get(4).unwrap_or(&"").to_string()),
                    );
                }
                _ => {}
            }
        }
        let err = stderr.and_then(|h| h.join().ok()).unwrap_or_default();
        let status = child.wait().map_err(|e| e.to_string())?;
        if status.success() {
            return Ok(());
        }
        if let (Some(worker::RESTART), None, Some((idx, t))) = (status.code(), begun, last) {
            // stopped after the result of (idx, t), its device possibly unusable
            skip = Some(format!("{idx}:{}", t.name()));
            continue;
        }
        let tail: String = err.lines().rev().take(6).collect::<Vec<_>>().join(" | ");
        let Some((idx, t)) = begun else {
            return Err(format!(
                "a worker failed outside generated code ({status}): {tail}"
            ));
        };
        summary.add(idx, t, Outcome::Crash(format!("{status} {tail}")));
        skip = Some(format!("{idx}:{}", t.name()));
    }
}

/// The last lines (at most [`STDERR_TAIL`] bytes) of what `r` gives until its end.
fn tail_of(r: impl std::io::Read) -> String {
    let mut tail: std::collections::VecDeque<String> = std::collections::VecDeque::new();
    let mut bytes = 0;
    for line in BufReader::new(r).lines().map_while(Result::ok) {
        bytes += line.len();
        tail.push_back(line);
        while bytes > STDERR_TAIL && tail.len() > 1 {
            bytes -= tail.pop_front().map_or(0, |l| l.len());
        }
    }
    Vec::from(tail).join("\n")
}

/// How much of a worker's stderr the driver keeps (for the message of a crash).
const STDERR_TAIL: usize = 64 * 1024;

fn write_case(
    dir: &Path,
    stem: &str,
    case: &Case,
    t: Target,
    note: &str,
) -> Result<PathBuf, String> {
    std::fs::create_dir_all(dir).map_err(|e| e.to_string())?;
    let p = dir.join(stem);
    let w = |ext: &str, text: &str| {
        std::fs::write(p.with_extension(ext), text).map_err(|e| e.to_string())
    };
    w("rise", &case.program)?;
    let elv = if case.def.is_some() {
        difftest::sched::elv(case.steps_for(t))
    } else {
        case.steps_for(t).concat()
    };
    w("elv", &elv)?;
    w("sizes", &case.sizes_file(t))?;
    w("txt", note)?;
    Ok(p)
}

/// Whether the case written at `stem` still fails with `kind` (run in a child process).
fn still_fails(exe: &Path, dir: &Path, case: &Case, t: Target, kind: &str) -> bool {
    let Ok(p) = write_case(dir, "candidate", case, t, "") else {
        return false;
    };
    let out = Command::new(exe).arg("replay").arg(&p).output();
    match out {
        Ok(o) if o.status.code() == Some(1) => {
            String::from_utf8_lossy(&o.stdout).contains(&format!("\t{kind}\t"))
        }
        Ok(o) => kind == "crash" && o.status.code().is_none(),
        Err(_) => false,
    }
}

fn run(args: &[String]) -> Result<bool, String> {
    if args.iter().any(|a| a == "--no-blocking") {
        // read by this process and inherited by its workers; set before any thread starts
        std::env::set_var(difftest::sched::NO_BLOCKING, "1");
    }
    let seed = num(args, "--seed", 1)?;
    let start = num(args, "--start", 0)?;
    let cases = num(args, "--cases", 300)?;
    let chunk = num(args, "--chunk", 150)?.max(1);
    let targets = targets(args)?;
    if targets.contains(&Target::Cuda) {
        // asked for explicitly and with nothing to fall back on: no run without a GPU
        // (the device is closed again; each worker opens its own)
        runtime::CudaDevice::open(0).map_err(|e| format!("--targets cuda: {e}"))?;
    }
    let tnames: Vec<&str> = targets.iter().map(|t| t.name()).collect();
    let targ = tnames.join(",");
    let out = PathBuf::from(flag(args, "--out").unwrap_or_else(|| "target/difftest".into()));
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    std::fs::create_dir_all(&out).map_err(|e| format!("{}: {e}", out.display()))?;
    let began = Instant::now();
    let mut summary = Summary::default();
    let mut from = start;
    while from < start + cases {
        let to = (from + chunk).min(start + cases);
        let known = summary.bugs.len();
        run_chunk(&exe, seed, from, to, &targ, &mut summary)?;
        let bugs = summary.bugs.len();
        for (idx, t, o) in &summary.bugs[known..] {
            let case = Case::generate(seed, *idx);
            let note = format!(
                "seed {seed} case {idx} target {}\n{}: {}\n",
                t.name(),
                o.kind(),
                o.detail()
            );
            write_case(
                &out.join("failures"),
                &format!("{idx}-{}", t.name()),
                &case,
                *t,
                &note,
            )?;
            eprintln!("  bug: case {idx} {} {}", t.name(), o.cause());
        }
        let report = summary.report(began.elapsed().as_secs_f64());
        std::fs::write(out.join("summary.txt"), report).map_err(|e| e.to_string())?;
        eprintln!(
            "[{:.0} s] programs {}..{}: {} cases, {} passed, {} bugs",
            began.elapsed().as_secs_f64(),
            start,
            to,
            summary.total(),
            summary
                .by_target
                .iter()
                .filter(|((_, k), _)| k == "pass")
                .map(|(_, n)| n)
                .sum::<u64>(),
            bugs
        );
        from = to;
    }
    eprint!("{}", summary.report(began.elapsed().as_secs_f64()));
    let mut signatures = BTreeMap::new();
    for (idx, t, o) in &summary.bugs {
        let sig = format!("{} {}", t.name(), o.cause());
        signatures
            .entry(sig)
            .or_insert_with(|| (*idx, *t, o.clone()));
        let _ = std::io::stderr().flush();
    }
    eprintln!("== distinct failure signatures: {}", signatures.len());
    for (sig, (idx, _, o)) in &signatures {
        eprintln!(
            "  case {idx}: {sig}\n      {}",
            o.detail().chars().take(300).collect::<String>()
        );
    }
    if args.iter().any(|a| a == "--shrink") {
        let budget = num(args, "--shrink-budget", 300)?;
        for (sig, (idx, t, o)) in &signatures {
            shrink_case(&exe, &out, seed, *idx, *t, o.kind(), budget, sig)?;
        }
    }
    Ok(summary.bugs.is_empty())
}

/// Shrinks case `idx` of `seed` on `t` while it fails with `kind`; writes it to DIR/shrunk.
#[allow(clippy::too_many_arguments)]
fn shrink_case(
    exe: &Path,
    out: &Path,
    seed: u64,
    idx: u64,
    t: Target,
    kind: &str,
    budget: u64,
    sig: &str,
) -> Result<(), String> {
    let case = Case::generate(seed, idx);
    let scratch = out.join("scratch");
    let small = difftest::shrink::shrink(&case, t, budget as usize, &mut |c| {
        still_fails(exe, &scratch, c, t, kind)
    });
    let note = format!("shrunk from seed {seed} case {idx}\n{sig}\n");
    let p = write_case(
        &out.join("shrunk"),
        &format!("{idx}-{}", t.name()),
        &small,
        t,
        &note,
    )?;
    eprintln!(
        "shrunk case {idx} ({sig}) to {}:\n{}{}",
        p.display(),
        small.program,
        difftest::sched::elv(small.steps_for(t))
    );
    Ok(())
}

/// `shrink --seed S --index I --target T --kind K [--no-blocking]`: shrinks one failure.
fn shrink_cmd(args: &[String]) -> Result<bool, String> {
    if args.iter().any(|a| a == "--no-blocking") {
        std::env::set_var(difftest::sched::NO_BLOCKING, "1");
    }
    let t = flag(args, "--target")
        .and_then(|t| sched::parse_target(&t))
        .ok_or("--target c|openmp|opencl|cuda")?;
    let kind = flag(args, "--kind").unwrap_or_else(|| "mismatch".into());
    let out = PathBuf::from(flag(args, "--out").unwrap_or_else(|| "target/difftest".into()));
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    let (seed, idx) = (num(args, "--seed", 1)?, num(args, "--index", 0)?);
    shrink_case(
        &exe,
        &out,
        seed,
        idx,
        t,
        &kind,
        num(args, "--shrink-budget", 300)?,
        &kind,
    )?;
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(a: &[&str]) -> Vec<String> {
        a.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn targets_parse_with_cuda() {
        let t = targets(&args(&["run", "--targets", "c,cuda"])).expect("targets");
        assert_eq!(t, [Target::C, Target::Cuda]);
        assert_eq!(
            targets(&args(&["run"])).expect("default"),
            [Target::C, Target::OpenMp, Target::OpenCl]
        );
        let e = targets(&args(&["run", "--targets", "c,ptx"])).expect_err("unknown");
        assert!(e.contains("`ptx`") && e.contains("cuda"), "{e}");
    }

    #[test]
    fn a_cuda_run_without_a_driver_stops_with_a_message() {
        if runtime::CudaDevice::open(0).is_ok() {
            return; // a GPU machine: the run would go ahead
        }
        let out = std::env::temp_dir().join(format!("difftest-nocuda-{}", std::process::id()));
        let out = out.display().to_string();
        let a = args(&["run", "--cases", "2", "--targets", "c,cuda", "--out", &out]);
        let e = run(&a).expect_err("no CUDA driver here");
        assert!(e.starts_with("--targets cuda: "), "{e}");
        assert!(!Path::new(&out).exists(), "it started: {out}");
    }
}
