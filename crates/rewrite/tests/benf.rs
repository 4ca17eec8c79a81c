//! `BENF` in one pass takes the rewrites `normalize(betaReduction <+ etaReduction)` takes,
//! in the same order: the same program, fresh names included, also where a rewrite makes a
//! node above it a redex (β at the parent, η one, two or more levels up).

use elevate::{Ctx, Program};
use rise::infer::{check_source, prepare_def};

/// `f` of `program` under `strategy`, in a fresh context.
fn rewritten(strategy: &str, program: &str) -> rise::Expr {
    let registry = rewrite::library::registry();
    let module = elv::load("", &registry).expect("the empty file loads");
    let checked = check_source(program).unwrap_or_else(|e| panic!("{program}: {e}"));
    let p = prepare_def(&checked, "f").expect("f is defined");
    let s = module.expression(strategy).expect("the strategy parses");
    let mut ctx = Ctx::new(rise::NameGen::avoiding(&p.body));
    ctx.run(&s, &p.body)
        .unwrap_or_else(|e| panic!("{strategy} on {program}: {e}"))
}

/// `BENF` and its definition give the very same program.
fn agrees(program: &str, expected: &str) {
    let pass = rewritten("BENF", program);
    let definition = rewritten("normalize(betaReduction <+ etaReduction)", program);
    assert!(
        pass.same(&definition),
        "{program}:\n{pass}\nnot\n{definition}"
    );
    assert_eq!(pass.to_string().trim(), expected, "{program}");
}

#[test]
fn nested_definitions_are_reduced_as_the_definition_reduces_them() {
    agrees(
        "def g = fun xs => xs |> map (fun x => x + 1.0f)
         def h = fun xs => g xs |> map (fun x => x * 2.0f)
         def f : 8.f32 -> 8.f32 = fun xs => h xs |> map (fun x => neg x)",
        "fun xs => xs |> map (fun x => x + 1.0f) |> map (fun x => x * 2.0f) |> map neg",
    );
}

#[test]
fn a_function_that_becomes_a_lambda_is_applied_at_once() {
    agrees(
        "def f : f32 -> f32 = fun y => (fun g => g) (fun x => neg x) y",
        "neg",
    );
}

#[test]
fn a_body_that_becomes_an_application_to_the_parameter_is_eta_reduced() {
    agrees("def f : f32 -> f32 = fun x => (fun g => g x) neg", "neg");
}

#[test]
fn an_argument_that_becomes_the_parameter_is_eta_reduced_two_levels_up() {
    agrees("def f : f32 -> f32 = fun x => neg ((fun z => z) x)", "neg");
}

#[test]
fn a_parameter_a_rewrite_removes_from_the_function_is_eta_reduced_far_above() {
    agrees(
        "def f : 4.f32 -> 4.f32 = fun xs => map ((fun a => fun y => neg y) xs) xs",
        "map neg",
    );
}

#[test]
fn captured_names_are_renamed_with_the_same_fresh_names() {
    agrees(
        "def f : f32 -> f32 -> f32 = fun y => (fun x => fun y => y + x) (neg y)",
        "fun y y_0 => y_0 + -y",
    );
}
