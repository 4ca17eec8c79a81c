//! The default simplification never makes a program do more work: the named
//! programs of issue 17 (softmax, a tanh layer's loss with its derivative and
//! gradient, ‖M·x‖, a sigmoid layer's derivative, the identity example, the
//! gradients of dot and of the sum of squares) and every example, each
//! measured with the cost model ([`fsmooth::cost`]) before and after and
//! compared with the interpreter.

use fsmooth::cost::{cost, cost_at_sizes, Cost};
use fsmooth::verify::check_equivalent;
use fsmooth::{
    check_program, diff_program, gradient_program, parse_program, simplify_program, Program,
};

fn example(name: &str) -> Program {
    let path = format!(
        "{}/../../examples/fsmooth/{name}.fsmooth",
        env!("CARGO_MANIFEST_DIR")
    );
    parse_program(&std::fs::read_to_string(&path).unwrap()).unwrap()
}

/// Simplifies `p`, checks values, type and cost, and returns (before, after).
fn simplified_no_dearer(what: &str, p: &Program) -> (Program, Cost, Cost) {
    let s = simplify_program(p, false, fsmooth::default_budget(p))
        .unwrap_or_else(|f| panic!("{what}: {}", f.message));
    let after = s.rewritten.program;
    assert_eq!(
        check_program(&after).unwrap(),
        check_program(p).unwrap(),
        "{what}"
    );
    let c =
        check_equivalent(p, &after, 20, 1, Some(1e-9)).unwrap_or_else(|e| panic!("{what}: {e}"));
    assert!(c.compared >= 5, "{what}: {c:?}");
    // Measured at other sizes than the ones simplify_program chooses with.
    let sizes = [2, 5, 9];
    let before = cost_at_sizes(p, &sizes).unwrap();
    let now = cost_at_sizes(&after, &sizes).unwrap();
    assert!(
        now.no_more_than(&before),
        "{what}: {before} -> {now}\n{after}"
    );
    let ratios: Vec<String> = now
        .ratios(&before)
        .iter()
        .map(|(n, r)| format!("n={n}: {r:.2}"))
        .collect();
    println!(
        "{what:32} [{}] via {}: {before} -> {now}",
        ratios.join(", "),
        s.strategy
    );
    (after, before, now)
}

fn derivative(p: &Program) -> Program {
    diff_program(p).unwrap()
}

/// The programs issue 17 names.
const NAMED: [&str; 7] = [
    "softmax",
    "tanh_layer_loss",
    "matvec_norm",
    "sigmoid_layer",
    "vector_eye",
    "dot",
    "sum_of_squares",
];

#[test]
fn named_programs_cost_no_more_after_simplification() {
    for name in NAMED {
        let p = example(name);
        simplified_no_dearer(name, &p);
        simplified_no_dearer(&format!("{name} (derivative)"), &derivative(&p));
    }
    let tanh = example("tanh_layer_loss");
    simplified_no_dearer(
        "tanh_layer_loss (gradient in x)",
        &gradient_program(&tanh, "x").unwrap(),
    );
}

#[test]
fn every_example_costs_no_more_after_simplification() {
    let dir = format!("{}/../../examples/fsmooth", env!("CARGO_MANIFEST_DIR"));
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_stem().unwrap().to_string_lossy().to_string();
        if path.extension().is_none_or(|e| e != "fsmooth") || NAMED.contains(&name.as_str()) {
            continue;
        }
        let p = example(&name);
        simplified_no_dearer(&name, &p);
        simplified_no_dearer(&format!("{name} (derivative)"), &derivative(&p));
    }
}

/// `cost(12) / cost(3)` well below `(12/3)² = 16`: linear, not quadratic.
fn grows_linearly(what: &str, c: &Cost) {
    let c = cost_at_sizes_of(c);
    assert!(
        c.1 * 10 < c.0 * 16 * 10 / 2,
        "{what}: {c:?} grows faster than linearly"
    );
}

fn cost_at_sizes_of(c: &Cost) -> (u64, u64) {
    (c.at[0].1, c.at[1].1)
}

#[test]
fn gradients_of_dot_and_sum_of_squares_stay_linear() {
    for (name, wrt) in [("dot", "u"), ("sum_of_squares", "v")] {
        let g = gradient_program(&example(name), wrt).unwrap();
        let s = simplify_program(&g, false, fsmooth::default_budget(&g)).unwrap();
        let c = cost(&s.rewritten.program).unwrap();
        println!("gradient of {name}: {}\n  {c}", s.rewritten.program.body);
        grows_linearly(name, &c);
        // Unsimplified, forward mode is quadratic.
        let raw = cost(&g).unwrap();
        assert!(!raw.no_more_than(&c), "{raw} vs {c}");
    }
}

fn random_program(seed: u64) -> Program {
    use fsmooth::random::{Rng, TermGen};
    use fsmooth::{Input, Name, Span, Type};
    let inputs: Vec<(Name, Type)> = vec![
        ("x".into(), Type::Double),
        ("k".into(), Type::Index),
        ("v".into(), Type::vector()),
        ("M".into(), Type::matrix()),
    ];
    let mut rng = Rng::new(seed);
    let ty = match rng.below(3) {
        0 | 1 => Type::Double,
        _ => Type::vector(),
    };
    let body = TermGen::new(&mut rng, &inputs).term(&ty, 5);
    let inputs = inputs
        .into_iter()
        .map(|(name, ty)| Input {
            name,
            ty,
            span: Span::default(),
        })
        .collect();
    Program { inputs, body }
}

/// Checks that `s`, the simplification of `q`, has its values and costs no more at
/// `sizes`: `None` where `q` does not evaluate there, else whether `s` is cheaper.
fn same_value_no_more_cost(
    q: &Program,
    s: &Program,
    sizes: &[usize],
    seed: u64,
    what: &str,
) -> Option<bool> {
    check_equivalent(q, s, 4, seed, Some(1e-9))
        .unwrap_or_else(|e| panic!("seed {seed} {what}: {e}\n{q}\n  ~> {s}"));
    let before = cost_at_sizes(q, sizes)?;
    let after = cost_at_sizes(s, sizes).unwrap_or_else(|| {
        panic!("seed {seed} {what}: the simplified program fails\n{q}\n  ~> {s}")
    });
    assert!(
        after.no_more_than(&before),
        "seed {seed} {what}: {before} -> {after}\n{q}\n  ~> {s}"
    );
    Some(after != before)
}

/// The `simplify` strategy by itself (not the cost-guarded choice of
/// `simplify_program`) never costs more on random programs and their
/// derivatives, wherever the original evaluates; values are preserved.
#[test]
fn simplify_never_costs_more_on_random_programs() {
    use fsmooth::{rewrite_with, strategies};
    let (mut measured, mut cheaper) = (0, 0);
    for seed in 0..1000u64 {
        let p = random_program(seed);
        for (what, q) in [("program", p.clone()), ("derivative", derivative(&p))] {
            let s = rewrite_with(
                &q,
                &strategies::simplify(),
                false,
                fsmooth::default_budget(&q),
            )
            .unwrap_or_else(|f| panic!("seed {seed}: {}\n{q}", f.message))
            .program;
            if let Some(less) = same_value_no_more_cost(&q, &s, &[2, 5], seed, what) {
                measured += 1;
                cheaper += usize::from(less);
            }
        }
    }
    println!("{measured} measured, {cheaper} made cheaper");
    assert!(
        measured > 1000 && cheaper > 400,
        "{measured} measured, {cheaper} cheaper"
    );
}

/// Gradients as one vector program agree with finite differences, before and
/// after simplification.
#[test]
fn gradients_match_finite_differences() {
    use fsmooth::verify::check_gradient;
    for (name, wrt) in [
        ("dot", "u"),
        ("sum_of_squares", "v"),
        ("norm", "v"),
        ("tanh_layer_loss", "x"),
        ("matvec_norm", "x"),
        ("umv", "v"),
    ] {
        let p = example(name);
        let g = gradient_program(&p, wrt).unwrap();
        let s = simplify_program(&g, false, fsmooth::default_budget(&g))
            .unwrap()
            .rewritten
            .program;
        for (what, q) in [("raw", &g), ("simplified", &s)] {
            let c = check_gradient(&p, q, wrt, 8, 3, 1e-5)
                .unwrap_or_else(|e| panic!("{name} {what}: {e}\n{q}"));
            assert!(c.compared >= 3, "{name} {what}: {c:?}");
        }
    }
    // Refusals: not a scalar program, not a vector input.
    assert!(gradient_program(&example("vector_add"), "u").is_err());
    assert!(gradient_program(&example("dot"), "w").is_err());
}

/// The default simplification (`simplify_program`, what `shine fsmooth
/// simplify` runs: the cheaper of `simplify` and `inlineAll`, chosen by costs
/// at n = 3 and 12) costs no more on random programs and their derivatives,
/// measured at other sizes (n = 2, 5, 9); values are preserved.
#[test]
fn the_default_simplification_never_costs_more_on_random_programs() {
    let (mut measured, mut cheaper) = (0, 0);
    for seed in 0..300u64 {
        let p = random_program(seed);
        for (what, q) in [("program", p.clone()), ("derivative", derivative(&p))] {
            let s = simplify_program(&q, false, fsmooth::default_budget(&q))
                .unwrap_or_else(|f| panic!("seed {seed} {what}: {}\n{q}", f.message));
            let s = s.rewritten.program;
            if let Some(less) = same_value_no_more_cost(&q, &s, &[2, 5, 9], seed, what) {
                measured += 1;
                cheaper += usize::from(less);
            }
        }
    }
    println!("{measured} measured, {cheaper} made cheaper");
    assert!(
        measured > 300 && cheaper > 150,
        "{measured} measured, {cheaper} cheaper"
    );
}

/// `letInline` alone never makes a program do more work: it inlines a value
/// used once only outside loop bodies and functions. On the identity example
/// (`vector_eye`), the old rule inlined the identity matrix into the loop that
/// reads it (1,414 evaluation steps became 29,079); here the cost stays.
#[test]
fn let_inline_never_costs_more() {
    use fsmooth::{library::parse_strategy, rewrite_with};
    let s = parse_strategy("normalize(letInline)").unwrap();
    let inline = |q: &Program| rewrite_with(q, &s, false, fsmooth::default_budget(q));
    let eye = example("vector_eye");
    for (what, q) in [
        ("vector_eye", eye.clone()),
        ("D[vector_eye]", derivative(&eye)),
    ] {
        let after = inline(&q).unwrap().program;
        let sizes = [2, 5, 9];
        let (b, a) = (
            cost_at_sizes(&q, &sizes).unwrap(),
            cost_at_sizes(&after, &sizes).unwrap(),
        );
        println!("{what}: {b} -> {a}\n  {}", after.body);
        assert!(a.no_more_than(&b), "{what}: {b} -> {a}\n{after}");
    }
    // The identity matrix is read inside the loop: it stays bound outside.
    let after = inline(&eye).unwrap().program;
    assert!(
        after.body.to_string().starts_with("let I = build"),
        "{after}"
    );
    let mut measured = 0;
    for seed in 0..400u64 {
        let p = random_program(seed);
        for q in [p.clone(), derivative(&p)] {
            let after = inline(&q).unwrap().program;
            let sizes = [2, 5];
            let Some(before) = cost_at_sizes(&q, &sizes) else {
                continue;
            };
            let now = cost_at_sizes(&after, &sizes).unwrap();
            assert!(
                now.no_more_than(&before),
                "seed {seed}: {before} -> {now}\n{q}\n  ~> {after}"
            );
            measured += 1;
        }
    }
    assert!(measured > 400, "{measured}");
}
