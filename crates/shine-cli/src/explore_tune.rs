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
    cause_of, check_set_names, compile_candidate, count_cause, emit_err, first_line, method_named,
    methods_of, out_of_budget, parse_set, plot, progress_bar, time_candidate, ExploreArgs,
    PlotPoint,
};
use crate::explore_log::{header, read, record, Log};
use explore::params::{
    names, substitute, Assignment, ParamSearch, ParamSpace, Stop, ENUMERATION_LIMIT, RAW_LIMIT,
};
use explore::search::Method;
use explore::tuning::Bindings;
use serde_json::{json, Value};
use shine::{Artifact, Inputs, RunOptions, SourceFile};
use std::collections::BTreeMap;
use std::time::{Duration, Instant};

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
        let cause = |e: &shine::Error| format!("{}: {}", cause_of(e), first_line(&e.to_string()));
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

/// What the search found so far, over every method: the best candidate per time set,
/// the best on every set, the failures by cause and the points of the plot.
struct Tally {
    bests: Vec<Option<Best>>,
    /// The best candidate that applies to every set (its `ms`: the total).
    best_all: Option<Best>,
    /// The first time found per set: the scores of the evolutionary search are relative
    /// to them.
    norms: Vec<Option<f64>>,
    causes: BTreeMap<String, usize>,
    points: Vec<PlotPoint>,
}

/// One candidate, new or from the log: what it is and what happened to it.
struct Evaluated<'a> {
    method: &'static str,
    assignment: &'a Assignment,
    strategy: &'a str,
    ev: &'a Evaluation,
    elapsed: f64,
}

impl Tally {
    fn new(sets: usize) -> Tally {
        Tally {
            bests: vec![None; sets],
            best_all: None,
            norms: vec![None; sets],
            causes: BTreeMap::new(),
            points: Vec::new(),
        }
    }

    /// Counts a candidate, in the tally and in `mine` (its method's best per set);
    /// returns its score for the search (`None`: it failed).
    fn record(&mut self, mine: &mut [Option<Best>], c: &Evaluated) -> Option<f64> {
        let best = |ms: f64| Best {
            ms,
            assignment: c.assignment.clone(),
            method: c.method,
            strategy: c.strategy.to_string(),
        };
        let mut score = 0.0;
        for (k, ms) in c.ev.ms.iter().enumerate() {
            let Some(ms) = *ms else { continue };
            let norm = *self.norms[k].get_or_insert(ms);
            score += norm / ms;
            for b in [&mut mine[k], &mut self.bests[k]] {
                if b.as_ref().is_none_or(|b| ms < b.ms) {
                    *b = Some(best(ms));
                }
            }
        }
        if let Some(total) = c.ev.ms.iter().copied().sum::<Option<f64>>() {
            if self.best_all.as_ref().is_none_or(|b| total < b.ms) {
                self.best_all = Some(best(total));
            }
        }
        for f in
            c.ev.failure
                .iter()
                .chain(c.ev.set_failures.iter().flatten())
        {
            count_cause(&mut self.causes, f);
        }
        self.points.push((c.method, c.elapsed, sum_of(mine)));
        c.ev.failure.is_none().then_some(score)
    }
}

/// A candidate of the log (`--resume`): its method, assignment, strategy, evaluation
/// and time into the search.
struct Resumed {
    method: &'static str,
    assignment: Assignment,
    strategy: String,
    ev: Evaluation,
    elapsed: f64,
}

impl Resumed {
    fn evaluated(&self) -> Evaluated<'_> {
        Evaluated {
            method: self.method,
            assignment: &self.assignment,
            strategy: &self.strategy,
            ev: &self.ev,
            elapsed: self.elapsed,
        }
    }
}

/// A record of the log as a candidate of `space` timed at `sets` size sets.
fn resumed(v: &Value, space: &ParamSpace, sets: usize) -> Result<Resumed, CliError> {
    let bad = |what: &str| CliError::from(format!("a record of the log has {what}: {v}"));
    let assignment: Assignment = space
        .params
        .iter()
        .map(|p| {
            v["params"][p.name()]
                .as_i64()
                .map(|x| (p.name().to_string(), x))
                .ok_or_else(|| bad(&format!("no value of `{}`", p.name())))
        })
        .collect::<Result<_, _>>()?;
    let texts = |key: &str| -> Vec<Option<String>> {
        v[key]
            .as_array()
            .map(|a| a.iter().map(|x| x.as_str().map(String::from)).collect())
            .unwrap_or_default()
    };
    let ms: Vec<Option<f64>> = v["ms_per_set"]
        .as_array()
        .map(|a| a.iter().map(Value::as_f64).collect())
        .unwrap_or_default();
    let set_failures = texts("set_failures");
    if ms.len() != sets || set_failures.len() != sets {
        return Err(bad(&format!("not one time per size set ({sets})")));
    }
    Ok(Resumed {
        method: method_named(v["method"].as_str().unwrap_or(""))?.name(),
        assignment,
        strategy: v["strategy"].as_str().unwrap_or("").to_string(),
        ev: Evaluation {
            failure: v["failure"].as_str().map(String::from),
            ms,
            set_failures,
        },
        elapsed: v["elapsed_s"].as_f64().unwrap_or(0.0),
    })
}

/// The parameters of `space` that are sizes of the program (not named by `template`);
/// an error if one is no size of the definition either.
fn size_parameters(
    args: &ExploreArgs,
    space: &ParamSpace,
    template: &str,
    program_sizes: &[String],
) -> Result<Vec<String>, CliError> {
    let sizes: Vec<String> = space
        .params
        .iter()
        .map(|p| p.name().to_string())
        .filter(|n| !names(template, n))
        .collect();
    match sizes.iter().find(|n| !program_sizes.contains(n)) {
        None => Ok(sizes),
        Some(n) => Err(format!(
            "--param `{n}` names neither a parameter of the --apply strategy `{template}` nor \
             a size of `{}` (its sizes: {})",
            args.def,
            if program_sizes.is_empty() {
                "none".to_string()
            } else {
                program_sizes.join(", ")
            }
        )
        .into()),
    }
}

/// The size sets candidates are verified at: `--nat`, then every `--verify-nat`.
fn verification_sets(
    args: &ExploreArgs,
    verify_set: &Bindings,
    program_sizes: &[String],
) -> Result<Vec<Bindings>, CliError> {
    let mut sets: Vec<Bindings> = Vec::new();
    if !verify_set.is_empty() {
        sets.push(verify_set.clone());
    }
    for s in &args.verify_nats {
        let set = parse_set(s)?;
        check_set_names(args, "--verify-nat", &set, program_sizes)?;
        sets.push(set);
    }
    if sets.is_empty() {
        return Err("give sizes to verify candidates at (--nat or --verify-nat)"
            .to_string()
            .into());
    }
    Ok(sets)
}

/// The valid assignments of `space`, enumerated within [`RAW_LIMIT`] raw ones and the
/// time of `--time`; says on stderr how far the enumeration went.
fn valid_assignments(
    args: &ExploreArgs,
    space: &ParamSpace,
    sizes: &[String],
) -> Result<Vec<Assignment>, CliError> {
    let deadline = args
        .time
        .and_then(|t| Duration::try_from_secs_f64(t).ok())
        .and_then(|t| Instant::now().checked_add(t));
    let e = space.enumerate(RAW_LIMIT, deadline);
    let raw = space.raw_count();
    emit_err(&format!(
        "{} parameters ({} of them sizes of the program: {}), {raw} raw assignments, {} valid{}",
        space.params.len(),
        sizes.len(),
        if sizes.is_empty() {
            "none".to_string()
        } else {
            sizes.join(", ")
        },
        e.valid.len(),
        if e.stop.is_some() { " found" } else { "" }
    ));
    let why = match e.stop {
        None => None,
        Some(Stop::ValidLimit) => Some(format!("the first {ENUMERATION_LIMIT} valid ones")),
        Some(Stop::RawLimit) => Some(format!("the limit of {RAW_LIMIT} raw assignments")),
        Some(Stop::Deadline) => Some("the time of --time".to_string()),
    };
    if let (Some(why), false) = (&why, e.valid.is_empty()) {
        emit_err(&format!(
            "the enumeration stopped after {} of {raw} raw assignments ({why}): the search \
             proposes from the valid ones found",
            e.examined
        ));
    }
    if e.valid.is_empty() {
        return Err(match why {
            None => "no assignment of the parameters meets the requirements".to_string(),
            Some(why) => format!(
                "none of the {} raw assignments examined ({why}) meets the requirements",
                e.examined
            ),
        }
        .into());
    }
    Ok(e.valid)
}

/// `shine explore ... --param ...`
pub(crate) fn tune(
    args: &ExploreArgs,
    program: SourceFile,
    user: String,
    program_sizes: &[String],
    verify_set: Bindings,
    time_sets: Vec<Bindings>,
) -> Result<(), CliError> {
    let template = args.apply.clone().ok_or_else(|| {
        CliError::from("--param tunes the parameters of the --apply strategy: give one".to_string())
    })?;
    let space = ParamSpace::parse(&args.params, &args.requires).map_err(CliError::from)?;
    if args.check_constraints {
        return Err("--check-constraints is not supported with --param"
            .to_string()
            .into());
    }
    if args.budget.is_none() && args.time.is_none() {
        return Err(
            "give a budget (--budget N candidates) or a time (--time SECONDS)"
                .to_string()
                .into(),
        );
    }
    let sizes = size_parameters(args, &space, &template, program_sizes)?;
    let verify_sets = verification_sets(args, &verify_set, program_sizes)?;
    for set in verify_sets.iter().chain(&time_sets) {
        if let Some((k, _)) = set.iter().find(|(k, _)| sizes.contains(k)) {
            return Err(
                format!("`{k}` is both a tuned parameter and a size given in a set").into(),
            );
        }
    }
    let header = header(
        args,
        &program.text,
        &user,
        json!({
            "search": "parameters",
            "params": args.params,
            "requires": args.requires,
            "nats": verify_set,
            "verify_nats": verify_sets,
            "time_nats": time_sets,
        }),
    );
    let sets = time_sets.len();
    let previous: Vec<Resumed> = match &args.resume {
        Some(p) => read(p, &header)?
            .iter()
            .map(|v| resumed(v, &space, sets))
            .collect::<Result<_, _>>()?,
        None => Vec::new(),
    };
    let mut log = Log::open(args, &header)?;
    let valid = valid_assignments(args, &space, &sizes)?;
    let valid_count = valid.len();
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
    let methods = methods_of(args);
    let mut tally = Tally::new(sets);
    let mut summaries = Vec::new();
    for &method in &methods {
        let mut search = ParamSearch::new(&space, &valid, method, args.seed);
        let mut mine: Vec<Option<Best>> = vec![None; sets];
        let (mut done, mut valid, mut offset) = (0usize, 0usize, 0.0f64);
        for r in previous.iter().filter(|r| r.method == method.name()) {
            let score = tally.record(&mut mine, &r.evaluated());
            search.report(&r.assignment, score);
            done += 1;
            valid += score.is_some() as usize;
            offset = offset.max(r.elapsed);
        }
        let resumed_count = done;
        let bar = progress_bar(args, method);
        bar.set_position(done as u64);
        let start = Instant::now();
        let stopped = loop {
            if out_of_budget(args, done, start) {
                break None;
            }
            let Some(a) = search.propose() else {
                break None;
            };
            let ev = tuner.evaluate(&a);
            done += 1;
            let strategy = tuner.strategy(&a);
            let elapsed = offset + start.elapsed().as_secs_f64();
            let score = tally.record(
                &mut mine,
                &Evaluated {
                    method: method.name(),
                    assignment: &a,
                    strategy: &strategy,
                    ev: &ev,
                    elapsed,
                },
            );
            search.report(&a, score);
            valid += score.is_some() as usize;
            let line = json!({
                "method": method.name(),
                "params": a.iter().map(|(k, v)| (k.clone(), json!(v))).collect::<serde_json::Map<_, _>>(),
                "ms_per_set": ev.ms,
                "failure": ev.failure,
                "set_failures": ev.set_failures,
                "elapsed_s": elapsed,
                "strategy": strategy,
            });
            if let Err(e) = record(&mut log, &line) {
                break Some(e);
            }
            bar.set_position(done as u64);
            bar.set_message(format!(
                "valid {valid}, sum of per-set bests {}",
                sum_of(&mine).map_or("-".into(), |t| format!("{t:.4} ms"))
            ));
        };
        bar.finish_and_clear();
        if let Some(e) = stopped {
            return Err(e);
        }
        let secs = start.elapsed().as_secs_f64();
        let evaluated = done - resumed_count;
        let final_sum = sum_of(&mine);
        let t90 = final_sum.and_then(|f| {
            tally
                .points
                .iter()
                .filter(|p| p.0 == method.name())
                .find(|p| p.2.is_some_and(|s| s <= f / 0.9))
                .map(|p| p.1)
        });
        let mut summary = json!({
            "method": method.name(),
            "candidates": evaluated,
            "resumed": resumed_count,
            "valid": valid,
            "sum_of_set_bests_ms": final_sum,
            "seconds": secs,
            "candidates_per_s": evaluated as f64 / secs.max(1e-9),
            "time_to_90pct_best_s": t90,
        });
        if method == Method::Random && search.draws > 0 {
            summary["raw_draws"] = search.draws.into();
            summary["valid_fraction"] = (search.valid_draws as f64 / search.draws as f64).into();
        }
        emit_err(&format!("{summary}"));
        summaries.push(summary);
    }
    // the log's candidates of methods not run now are ranked too
    let mut others: Vec<Option<Best>> = vec![None; sets];
    for r in previous
        .iter()
        .filter(|r| !methods.iter().any(|m| m.name() == r.method))
    {
        tally.record(&mut others, &r.evaluated());
    }
    let summary = json!({
        "raw_assignments": space.raw_count().to_string(),
        "valid_assignments": valid_count,
        "methods": summaries,
        "failures_by_cause": tally.causes,
    });
    report(
        &tuner,
        &tally.bests,
        tally.best_all.as_ref(),
        summary,
        &tally.points,
    )
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
        if bests.iter().all(Option::is_none) {
            return Err(format!(
                "no candidate compiled, verified and ran: `{}` is not written",
                path.display()
            )
            .into());
        }
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
        shine::files::write_whole(path, text.as_bytes())?;
    }
    if let Some(path) = &args.plot {
        shine::files::write_whole(path, plot(points).as_bytes())?;
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
