//! `shine explore --param ...`: tuning the numeric parameters of a strategy template,
//! the command line of [`explore::tune`]. The best candidate is kept per time set; the
//! table, `-o` (a strategy file of the best per set) and the JSON summary are written
//! from the engine's result.

use crate::cli::{emit, CliError};
use crate::explore_cmd::{emit_err, plot, summary_json, Bars, ExploreArgs, PlotPoint};
use explore::engine::{show, Run};
use explore::tune::{Tuning, TuningResult};
use explore::tuning::Bindings;
use serde_json::json;

/// `shine explore ... --param ...`
pub(crate) fn tune(args: &ExploreArgs, run: Run, time_nats: Vec<Bindings>) -> Result<(), CliError> {
    let template = args.apply.clone().ok_or_else(|| {
        CliError::from("--param tunes the parameters of the --apply strategy: give one".to_string())
    })?;
    let verify_nats: Vec<Bindings> = args
        .verify_nats
        .iter()
        .map(|s| crate::explore_cmd::parse_set(s))
        .collect::<Result<_, _>>()?;
    let tuning = Tuning {
        run,
        template,
        params: args.params.clone(),
        requires: args.requires.clone(),
        nats: args.nats.clone(),
        verify_nats,
        time_nats,
    };
    if args.check_constraints {
        explore::params::ParamSpace::parse(&tuning.params, &tuning.requires)
            .map_err(CliError::from)?;
        return Err("--check-constraints is not supported with --param"
            .to_string()
            .into());
    }
    let mut bars = Bars::new(args.budget);
    let result = explore::tune::run(&tuning, &mut bars)?;
    drop(bars);
    report(args, &tuning, &result)
}

/// The table, `-o`, `--plot` and the JSON summary of a tuning.
fn report(args: &ExploreArgs, tuning: &Tuning, result: &TuningResult) -> Result<(), CliError> {
    let bests = &result.bests;
    let best_all = result.best_on_every_set.as_ref();
    let mut table =
        String::from("set  sizes                          best ms    method        parameters\n");
    for (k, b) in bests.iter().enumerate() {
        let sizes = show(&result.time_sets[k]);
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
    let total = result.sum_of_set_bests();
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
            tuning.run.user_strategy(),
            args.def,
            args.target,
            total
                .map(|t| format!(" ({t:.4} ms in all)"))
                .unwrap_or_default()
        );
        for (k, b) in bests.iter().enumerate() {
            let Some(b) = b else { continue };
            let sizes = result.sizes_of(k).unwrap_or_default();
            let nats: String = sizes
                .iter()
                .map(|(n, v)| format!(" --nat {n}={v}"))
                .collect();
            text.push_str(&format!(
                "// set {} ({:.4} ms, {}): shine run {} --def {} --strategy THIS --apply best_{}{nats}\n{}\n",
                k + 1,
                b.ms,
                b.method.name(),
                args.program.display(),
                args.def,
                k + 1,
                b.definition(&format!("best_{}", k + 1))
            ));
        }
        match best_all {
            Some(b) => text.push_str(&format!(
                "// the best on every set ({:.4} ms in all){}\n{}\n",
                b.ms,
                if result.size_params.is_empty() {
                    String::new()
                } else {
                    format!(", with {}", show(&result.size_values(&b.assignment)))
                },
                b.definition("best")
            )),
            None => text.push_str("// no candidate applies to every set: `best` is not defined\n"),
        }
        shine::files::write_whole(path, text.as_bytes())?;
    }
    if let Some(path) = &args.plot {
        let points: Vec<PlotPoint> = result
            .points
            .iter()
            .map(|p| (p.method.name(), p.elapsed_s, p.best_ms))
            .collect();
        shine::files::write_whole(path, plot(&points).as_bytes())?;
    }
    let per_set: Vec<serde_json::Value> = bests
        .iter()
        .enumerate()
        .map(|(k, b)| {
            json!({
                "sizes": show(&result.time_sets[k]),
                "best_ms": b.as_ref().map(|b| b.ms),
                "params": b.as_ref().map(|b| show(&b.assignment)),
                "method": b.as_ref().map(|b| b.method.name()),
            })
        })
        .collect();
    let summaries: Vec<serde_json::Value> = result
        .methods
        .iter()
        .map(|s| summary_json(s, "sum_of_set_bests_ms"))
        .collect();
    let mut summary = json!({
        "raw_assignments": result.raw_assignments.to_string(),
        "valid_assignments": result.valid_assignments,
        "methods": summaries,
        "failures_by_cause": result.failures_by_cause,
        "timed": result.timed,
        "from_database": result.from_database,
        "reference_evaluations": result.reference_evaluations,
    });
    summary["per_set"] = json!(per_set);
    summary["sum_of_set_bests_ms"] = json!(total);
    summary["best_on_every_set_ms"] = json!(best_all.map(|b| b.ms));
    emit(&summary.to_string());
    Ok(())
}
