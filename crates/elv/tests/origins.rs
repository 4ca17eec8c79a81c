//! A strategy that fails is found where the user wrote it ([`elv::Origins`]): the failing
//! part of a rewrite, even one a builtin desugared (`topDown` of `outermost`), maps back to
//! the span of the expression in the file or in an expression given apart from it.

mod common;

use common::*;
use elevate::Failure;

/// The failing strategy of applying `s` to `p`.
fn failing(s: &elevate::Strategy<E>, p: &E) -> elevate::Strategy<E> {
    match s.apply(p) {
        Err(Failure::NotApplicable {
            strategy: Some(f), ..
        }) => f,
        other => panic!("expected a failure naming a strategy, got {other:?}"),
    }
}

#[test]
fn a_failing_part_of_a_definition_maps_to_its_text_in_the_file() {
    let src = "def simplify = addZero @ topDown\ndef both = id ; mulOne @ topDown";
    let module = elv::load(src, &registry()).expect("loads");
    let s = module.strategy("both").expect("a strategy");
    let f = failing(&s, &add(var("x"), num(2)));
    let origin = module.origins().of(&f).expect("recorded");
    assert!(!origin.in_expression);
    assert_eq!(&src[origin.span.range()], "mulOne @ topDown");
}

#[test]
fn a_failing_part_of_an_expression_maps_to_the_expression() {
    let src = "def simplify = addZero @ topDown";
    let module = elv::load(src, &registry()).expect("loads");
    let expr = "simplify ; commute @ left";
    let s = module.expression(expr).expect("a strategy");
    // `simplify` applies (x + 0 ↦ x), then `commute @ left` fails on `x`
    let f = failing(&s, &add(var("x"), num(0)));
    let origin = module.origins().of(&f).expect("recorded");
    assert!(origin.in_expression);
    assert_eq!(&expr[origin.span.range()], "commute @ left");
}
