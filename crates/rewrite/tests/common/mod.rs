//! What the rule tests share: a strategy applied to a program must change it and keep
//! its meaning (equal interpreter results before and after, on random inputs); and
//! which rules the cases apply, for the test that every rule has one.

use elevate::Ctx;
use rise::infer::{check_source, prepare_def};
use std::collections::BTreeSet;

/// (strategy, program defining `f`, sizes)
pub type Case = (&'static str, &'static str, &'static [(&'static str, i64)]);

/// How `strategy` (an expression over the built-in rules) fails on the definition `f` of
/// `program`: the failure and its explanation, rendered (empty where it has none).
pub fn refusal(program: &str, strategy: &str) -> (elevate::Failure<rise::Expr>, String) {
    let registry = rewrite::library::registry();
    let module = elv::load("", &registry).expect("the empty file loads");
    let s = module.expression(strategy).expect("the strategy parses");
    let checked = check_source(program).expect("the program checks");
    let p = prepare_def(&checked, "f").expect("f is defined");
    let mut ctx = Ctx::new(rise::NameGen::avoiding(&p.body));
    let failure = ctx
        .run(&s, &p.body)
        .expect_err("the strategy fails on the program");
    let why = failure
        .explanation()
        .map(|e| e.render())
        .unwrap_or_default();
    (failure, why)
}

/// Checks every case (all of them, reporting every failure at once).
pub fn check_all(cases: &[Case]) {
    let registry = rewrite::library::registry();
    let module = elv::load("", &registry).expect("the empty file loads");
    let mut failures = Vec::new();
    for (strategy, program, sizes) in cases {
        if let Err(e) = check_case(&module, strategy, program, sizes) {
            failures.push(e);
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

fn check_case(
    module: &elv::Module<rise::Expr>,
    strategy: &str,
    program: &str,
    sizes: &[(&str, i64)],
) -> Result<(), String> {
    let checked = check_source(program).map_err(|e| format!("{program}: {e}"))?;
    let p = prepare_def(&checked, "f").map_err(|e| e.to_string())?;
    let s = module
        .expression(strategy)
        .map_err(|e| format!("{strategy}: {e:?}"))?;
    let mut ctx = Ctx::new(rise::NameGen::avoiding(&p.body));
    let out = ctx
        .run(&s, &p.body)
        .map_err(|e| format!("{strategy} on {program}: {e}"))?;
    if out.alpha_eq(&p.body) {
        return Err(format!("{strategy} changed nothing"));
    }
    for seed in 1..=4 {
        rewrite::check::same_results(&p.body, &out, &p.scheme, sizes, seed).map_err(|e| {
            format!(
                "{strategy}, seed {seed}: {e}\nbefore: {}\nafter: {out}",
                p.body
            )
        })?;
    }
    Ok(())
}

/// The rules that apply, by name without arguments (`splitJoin` for
/// `splitJoin(4)`), when each case's strategy rewrites its program.
///
/// # Panics
/// If a case does not load or its strategy fails (what [`check_all`] reports).
pub fn rules_applied(cases: &[Case]) -> BTreeSet<String> {
    let registry = rewrite::library::registry();
    let module = elv::load("", &registry).expect("the empty file loads");
    let mut applied = BTreeSet::new();
    for (strategy, program, _) in cases {
        let checked = check_source(program).unwrap_or_else(|e| panic!("{program}: {e}"));
        let p = prepare_def(&checked, "f").unwrap_or_else(|e| panic!("{program}: {e}"));
        let s = module
            .expression(strategy)
            .unwrap_or_else(|e| panic!("{strategy}: {e:?}"));
        let mut ctx = Ctx::new(rise::NameGen::avoiding(&p.body)).with_trace();
        ctx.run(&s, &p.body)
            .unwrap_or_else(|e| panic!("{strategy} on {program}: {e}"));
        for entry in ctx.trace().unwrap_or_default() {
            let name = entry.rule.split('(').next().unwrap_or_default();
            applied.insert(name.to_string());
        }
    }
    applied
}
