//! Thesis Figure 5.13: the doubly transposed matrix rewrites to the
//! non-transposed form with
//! `normalize(buildGet <+ lenBuild <+ letPartialEval <+ letApp <+ funToLet)`.

use fsmooth::{parse_program, rewrite, strategies, verify};

const SOURCE: &str = include_str!("../../../examples/fsmooth/transpose_twice.fsmooth");

#[test]
fn figure_5_13_rewrites_to_the_non_transposed_form() {
    let p = parse_program(SOURCE).unwrap();
    let s = strategies::fig_5_13();
    assert_eq!(
        s.to_string(),
        "normalize(buildGet <+ lenBuild <+ letPartialEval <+ letApp <+ funToLet)"
    );
    let r = rewrite(&p, &s, true).unwrap();
    let expected =
        fsmooth::parse_expr("build (length M) (fun i -> build (length M[0]) (fun j -> M[i][j]))")
            .unwrap();
    assert!(r.program.body.alpha_eq(&expected), "got {}", r.program.body);
    // Even the bound names come out as in the figure.
    assert_eq!(r.program.body, expected);
    let trace = r.trace.as_ref().unwrap();
    for (k, t) in trace.iter().enumerate() {
        println!(
            "{:2}. {:<15} at {:<40} {}  ~>  {}",
            k + 1,
            t.rule,
            t.location.to_string(),
            t.before,
            t.after
        );
    }
    println!(
        "rule applications: {}, ELEVATE steps: {}",
        trace.len(),
        r.steps
    );
    // The thesis reports 12 rewrite steps: the 12 rule applications.
    assert_eq!(r.rule_applications(), 12);
    let rules: Vec<&str> = trace.iter().map(|t| t.rule.as_str()).collect();
    assert_eq!(
        rules,
        [
            "letPartialEval",
            "buildGet",
            "funToLet",
            "letPartialEval",
            "lenBuild",
            "lenBuild",
            "buildGet",
            "funToLet",
            "letPartialEval",
            "buildGet",
            "funToLet",
            "letPartialEval",
        ]
    );
    let checked = verify::check_equivalent(&p, &r.program, 200, 1, None).unwrap();
    assert_eq!(checked.compared, 200);
}

/// The same strategy written in the example strategy file, from named parts,
/// takes the same 12 rule applications to the same program.
#[test]
fn the_example_strategy_file_spells_figure_5_13() {
    let file = include_str!("../../../examples/fsmooth/strategies.elv");
    let m = fsmooth::library::load(file).unwrap();
    let p = parse_program(SOURCE).unwrap();
    let ours = rewrite(&p, &m.strategy("figure5_13").unwrap(), false).unwrap();
    let thesis = rewrite(&p, &strategies::fig_5_13(), false).unwrap();
    assert_eq!(ours.program.body, thesis.program.body);
    assert_eq!(ours.rule_applications(), 12);
    // `unroll(n) ; tidy` removes a loop of n iterations.
    let looped = parse_program("input x : Double\nifold (fun s i -> s + x) 0.0 3").unwrap();
    let s = m.expression("unroll(3) ; tidy").unwrap();
    let r = rewrite(&looped, &s, false).unwrap();
    assert_eq!(r.program.body.to_string(), "x + x + x");
    assert!(m.strategy("generators").is_ok());
}
