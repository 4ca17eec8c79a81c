//! `shine explore --param ...`: tuning the numeric parameters of a strategy template.
//!
//! The `--apply` expression names parameters (`mmSplitK(tm, tn, rm, rn, kb, wm, wn)`);
//! `--param` gives their values or derives them, `--require` restricts them
//! (`explore::params`). Parameters the expression does not name are sizes of the
//! program (the number of chunks a reduction is split into, say) and are passed as
//! `--nat`. Every candidate is compiled once, verified against the interpreter at the
//! first verification size set its size constraints admit (give the cheapest
//! first; a candidate no set admits is a failure), then timed at every
//! `--time-nat` set it admits: the best candidate is kept per set (a layer of a
//! network gets its own tiles), and the sum of the per-set bests is the figure of the
//! search. Several methods run one after the other with the same budget.

use crate::cli::{emit, CliError};
use crate::explore_cmd::{
    cause_of, compile_candidate, emit_err, first_line, open_log, out_of_budget, parse_set, plot,
    progress_bar, time_candidate, ExploreArgs, PlotPoint,
};
use explore::params::{names, substitute, Assignment, ParamSearch, ParamSpace};
use explore::search::Method;
use explore::tuning::Bindings;
use serde_json::json;
use shine::{Artifact, Inputs, RunOptions, SourceFile};
use std::io::Write;
use std::time::Instant;

/// What happened to a candidate.
struct Evaluation {
    /// Why it failed as a whole (not compiled, not verified), if it did.
    failure: Option<String>,
    /// Its time per time set: `None` where it does not apply or failed there.
    ms: Vec<Option<f64>>,
    /// Why it failed at a set it applies to.
    set_failures: Vec<Option<String>>,
}

/// The best candidate found for one time set.
#[derive(Clone)]
struct Best {
    ms: f64,
    assignment: Assignment,
    method: &'static str,
    strategy: String,
}

struct Tuner<'a> {
    args: &'a ExploreArgs,
    program: SourceFile,
    user: String,
    template: String,
    /// Parameters that are sizes of the program.
    sizes: Vec<String>,
    verify_sets: Vec<Bindings>,
    time_sets: Vec<Bindings>,
    counter: usize,
}

/// Whether an error says that sizes do not satisfy the code's constraints.
fn not_applicable(e: &shine::Error) -> bool {
    e.to_string().contains("size constraint of")
}

fn show(set: &Bindings) -> String {
    set.iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join(",")
}

impl Tuner<'_> {
    fn strategy(&self, a: &Assignment) -> String {
        format!("def candidate = {}", substitute(&self.template, a))
    }

    /// `set` with the size parameters of `a`.
    fn sizes(&self, set: &Bindings, a: &Assignment) -> Bindings {
        let mut out = set.clone();
        out.extend(a.iter().filter(|(k, _)| self.sizes.contains(k)).cloned());
        out
    }

    fn compile(&mut self, defs: &str) -> Result<Artifact, shine::Error> {
        self.counter += 1;
        let file = SourceFile::new(
            format!("candidate{}.elv", self.counter),
            format!("{}\n{defs}\n", self.user),
        );
        compile_candidate(self.args, &self.program, file)
    }

    fn evaluate(&mut self, a: &Assignment) -> Evaluation {
        let n = self.time_sets.len();
        let failed = |why: String| Evaluation {
            failure: Some(why),
            ms: vec![None; n],
            set_failures: vec![None; n],
        };
        let cause = |e: &shine::Error| {
            let m = e.to_string();
            format!("{}: {}", cause_of(&m), first_line(&m))
        };
        let artifact = match self.compile(&self.strategy(a)) {
            Ok(x) => x,
            Err(e) => return failed(cause(&e)),
        };
        let mut verified = false;
        for set in &self.verify_sets {
            let inputs = Inputs::Random {
                seed: self.args.seed,
            };
            match shine::verify(
                &artifact,
                inputs,
                &self.sizes(set, a),
                &RunOptions::default(),
            ) {
                Ok(_) => {
                    verified = true;
                    break;
                }
                Err(e) if not_applicable(&e) => {}
                Err(e) => return failed(cause(&e)),
            }
        }
        if !verified {
            return failed(
                "not verified: no verification size set satisfies its size constraints \
                 (add one with --verify-nat)"
                    .into(),
            );
        }
        let mut ev = Evaluation {
            failure: None,
            ms: vec![None; n],
            set_failures: vec![None; n],
        };
        for (k, set) in self.time_sets.iter().enumerate() {
            match time_candidate(self.args, &artifact, &self.sizes(set, a)) {
                Ok(ms) => ev.ms[k] = Some(ms),
                Err(e) if not_applicable(&e) => {}
                Err(e) => ev.set_failures[k] = Some(cause(&e)),
            }
        }
        if ev.ms.iter().all(|m| m.is_none()) {
            ev.failure = Some(
                ev.set_failures
                    .iter()
                    .flatten()
                    .next()
                    .cloned()
                    .unwrap_or_else(|| {
                        "not applicable: no time set satisfies its size constraints".into()
                    }),
            );
        }
        ev
    }
}

fn sum_of(bests: &[Option<Best>]) -> Option<f64> {
    bests.iter().map(|b| b.as_ref().map(|b| b.ms)).sum()
}

/// `shine explore ... --param ...`
pub(crate) fn tune(
    args: &ExploreArgs,
    program: SourceFile,
    user: String,
    verify_set: Bindings,
    time_sets: Vec<Bindings>,
) -> Result<(), CliError> {
    let template = args.apply.clone().ok_or_else(|| {
        CliError::from("--param tunes the parameters of the --apply strategy: give one".to_string())
    })?;
    let space = ParamSpace::parse(&args.params, &args.requires).map_err(CliError::from)?;
    if args.resume.is_some() || args.check_constraints {
        return Err(
            "--resume and --check-constraints are not supported with --param"
                .to_string()
                .into(),
        );
    }
    if args.budget.is_none() && args.time.is_none() {
        return Err(
            "give a budget (--budget N candidates) or a time (--time SECONDS)"
                .to_string()
                .into(),
        );
    }
    let sizes: Vec<String> = space
        .params
        .iter()
        .map(|p| p.name().to_string())
        .filter(|n| !names(&template, n))
        .collect();
    let mut verify_sets: Vec<Bindings> = Vec::new();
    if !verify_set.is_empty() {
        verify_sets.push(verify_set);
    }
    for s in &args.verify_nats {
        verify_sets.push(parse_set(s)?);
    }
    if verify_sets.is_empty() {
        return Err("give sizes to verify candidates at (--nat or --verify-nat)"
            .to_string()
            .into());
    }
    for set in verify_sets.iter().chain(&time_sets) {
        if let Some((k, _)) = set.iter().find(|(k, _)| sizes.contains(k)) {
            return Err(
                format!("`{k}` is both a tuned parameter and a size given in a set").into(),
            );
        }
    }
    let valid = space.valid();
    let valid_count = valid.len();
    emit_err(&format!(
        "{} parameters ({} of them sizes of the program: {}), {} raw assignments, {} valid",
        space.params.len(),
        sizes.len(),
        sizes.join(", "),
        space.raw_count(),
        valid_count
    ));
    if valid_count == 0 {
        return Err("no assignment of the parameters meets the requirements"
            .to_string()
            .into());
    }
    let mut tuner = Tuner {
        args,
        program,
        user,
        template,
        sizes,
        verify_sets,
        time_sets,
        counter: 0,
    };
    let methods: Vec<Method> = if args.search.is_empty() {
        vec![Method::Solver]
    } else {
        args.search.iter().map(|m| m.method()).collect()
    };
    let mut log = open_log(args)?;
    let sets = tuner.time_sets.len();
    let mut bests: Vec<Option<Best>> = vec![None; sets];
    // the best candidate that applies to every set (its `ms`: the total)
    let mut best_all: Option<Best> = None;
    let mut norms: Vec<Option<f64>> = vec![None; sets];
    let mut causes = std::collections::BTreeMap::<String, usize>::new();
    let (mut summaries, mut points) = (Vec::new(), Vec::<PlotPoint>::new());
    for method in methods {
        let mut search = ParamSearch::new(&space, &valid, method, args.seed);
        let mut mine: Vec<Option<Best>> = vec![None; sets];
        let bar = progress_bar(args, method);
        let start = Instant::now();
        let (mut done, mut valid) = (0usize, 0usize);
        loop {
            if out_of_budget(args, done, start) {
                break;
            }
            let Some(a) = search.propose() else { break };
            let ev = tuner.evaluate(&a);
            done += 1;
            let strategy = tuner.strategy(&a);
            let mut score = 0.0;
            for (k, ms) in ev.ms.iter().enumerate() {
                let Some(ms) = *ms else { continue };
                let norm = *norms[k].get_or_insert(ms);
                score += norm / ms;
                let candidate = Best {
                    ms,
                    assignment: a.clone(),
                    method: method.name(),
                    strategy: strategy.clone(),
                };
                for b in [&mut mine[k], &mut bests[k]] {
                    if b.as_ref().is_none_or(|b| ms < b.ms) {
                        *b = Some(candidate.clone());
                    }
                }
            }
            if let Some(total) = ev.ms.iter().copied().sum::<Option<f64>>() {
                if best_all.as_ref().is_none_or(|b| total < b.ms) {
                    best_all = Some(Best {
                        ms: total,
                        assignment: a.clone(),
                        method: method.name(),
                        strategy: strategy.clone(),
                    });
                }
            }
            search.report(&a, (ev.failure.is_none()).then_some(score));
            valid += ev.failure.is_none() as usize;
            for c in ev.failure.iter().chain(ev.set_failures.iter().flatten()) {
                *causes
                    .entry(c.split(':').next().unwrap_or("").to_string())
                    .or_default() += 1;
            }
            let elapsed = start.elapsed().as_secs_f64();
            let so_far = sum_of(&mine);
            points.push((method.name(), elapsed, so_far));
            let line = json!({
                "method": method.name(),
                "params": a.iter().map(|(k, v)| (k.clone(), json!(v))).collect::<serde_json::Map<_, _>>(),
                "ms_per_set": ev.ms,
                "failure": ev.failure,
                "set_failures": ev.set_failures,
                "elapsed_s": elapsed,
                "strategy": strategy,
            });
            if let Some(f) = log.as_mut() {
                let _ = writeln!(f, "{line}");
            }
            bar.set_position(done as u64);
            bar.set_message(format!(
                "valid {valid}, sum of per-set bests {}",
                so_far.map_or("-".into(), |t| format!("{t:.4} ms"))
            ));
        }
        bar.finish_and_clear();
        let secs = start.elapsed().as_secs_f64();
        let final_sum = sum_of(&mine);
        let t90 = final_sum.and_then(|f| {
            points
                .iter()
                .filter(|p| p.0 == method.name())
                .find(|p| p.2.is_some_and(|s| s <= f / 0.9))
                .map(|p| p.1)
        });
        let mut summary = json!({
            "method": method.name(),
            "candidates": done,
            "valid": valid,
            "sum_of_set_bests_ms": final_sum,
            "seconds": secs,
            "candidates_per_s": done as f64 / secs.max(1e-9),
            "time_to_90pct_best_s": t90,
        });
        if method == Method::Random && search.draws > 0 {
            summary["raw_draws"] = search.draws.into();
            summary["valid_fraction"] = (search.valid_draws as f64 / search.draws as f64).into();
        }
        emit_err(&format!("{summary}"));
        summaries.push(summary);
    }
    let summary = json!({
        "raw_assignments": space.raw_count().to_string(),
        "valid_assignments": valid_count,
        "methods": summaries,
        "failures_by_cause": causes,
    });
    report(&tuner, &bests, best_all.as_ref(), summary, &points)
}

fn report(
    tuner: &Tuner,
    bests: &[Option<Best>],
    best_all: Option<&Best>,
    mut summary: serde_json::Value,
    points: &[PlotPoint],
) -> Result<(), CliError> {
    let args = tuner.args;
    let mut table =
        String::from("set  sizes                          best ms    method        parameters\n");
    for (k, b) in bests.iter().enumerate() {
        let sizes = show(&tuner.time_sets[k]);
        match b {
            Some(b) => table.push_str(&format!(
                "{:<4} {sizes:<30} {:<10.4} {:<13} {}\n",
                k + 1,
                b.ms,
                b.method,
                show(&b.assignment)
            )),
            None => table.push_str(&format!("{:<4} {sizes:<30} none applies\n", k + 1)),
        }
    }
    let total = sum_of(bests);
    if let Some(t) = total {
        let gf = args
            .flops
            .map(|f| format!(" ({:.1} GFLOP/s)", f / t / 1e6))
            .unwrap_or_default();
        table.push_str(&format!("sum of the per-set bests: {t:.4} ms{gf}\n"));
    }
    if let Some(b) = best_all {
        table.push_str(&format!(
            "best on every set: {:.4} ms ({})\n",
            b.ms,
            show(&b.assignment)
        ));
    }
    emit_err(&table);
    if let Some(path) = &args.output {
        let mut text = format!(
            "{}\n// shine explore --param: {} on {}, the best candidate per size set{}\n",
            tuner.user,
            args.def,
            args.target,
            total
                .map(|t| format!(" ({t:.4} ms in all)"))
                .unwrap_or_default()
        );
        for (k, b) in bests.iter().enumerate() {
            let Some(b) = b else { continue };
            let sizes = tuner.sizes(&tuner.time_sets[k], &b.assignment);
            let nats: String = sizes
                .iter()
                .map(|(n, v)| format!(" --nat {n}={v}"))
                .collect();
            text.push_str(&format!(
                "// set {} ({:.4} ms, {}): shine run {} --def {} --strategy THIS --apply best_{}{nats}\n{}\n",
                k + 1,
                b.ms,
                b.method,
                args.program.display(),
                args.def,
                k + 1,
                b.strategy.replacen("def candidate", &format!("def best_{}", k + 1), 1)
            ));
        }
        match best_all {
            Some(b) => text.push_str(&format!(
                "// the best on every set ({:.4} ms in all){}\n{}\n",
                b.ms,
                if tuner.sizes.is_empty() {
                    String::new()
                } else {
                    format!(", with {}", show(&tuner.sizes(&Vec::new(), &b.assignment)))
                },
                b.strategy.replacen("def candidate", "def best", 1)
            )),
            None => text.push_str("// no candidate applies to every set: `best` is not defined\n"),
        }
        std::fs::write(path, text)
            .map_err(|e| CliError::from(format!("cannot write `{}`: {e}", path.display())))?;
    }
    if let Some(path) = &args.plot {
        std::fs::write(path, plot(points))
            .map_err(|e| CliError::from(format!("cannot write `{}`: {e}", path.display())))?;
    }
    let per_set: Vec<serde_json::Value> = bests
        .iter()
        .enumerate()
        .map(|(k, b)| {
            json!({
                "sizes": show(&tuner.time_sets[k]),
                "best_ms": b.as_ref().map(|b| b.ms),
                "params": b.as_ref().map(|b| show(&b.assignment)),
                "method": b.as_ref().map(|b| b.method),
            })
        })
        .collect();
    summary["per_set"] = json!(per_set);
    summary["sum_of_set_bests_ms"] = json!(total);
    summary["best_on_every_set_ms"] = json!(best_all.map(|b| b.ms));
    emit(&summary.to_string());
    Ok(())
}
