//! Forward-mode differentiation on random programs: the derivative's value
//! part is the program's value, its tangent part matches central finite
//! differences, and simplifying the derivative preserves its values.

use fsmooth::random::{Rng, TermGen};
use fsmooth::verify::{check_derivative, check_equivalent};
use fsmooth::{check_program, diff_program, rewrite, strategies, Input, Name, Program, Span, Type};
use proptest::prelude::*;

fn random_program(seed: u64) -> Program {
    let inputs: Vec<(Name, Type)> = vec![
        ("x".into(), Type::Double),
        ("y".into(), Type::Double),
        ("k".into(), Type::Index),
        ("v".into(), Type::vector()),
        ("M".into(), Type::matrix()),
        ("p".into(), Type::pair(Type::Double, Type::vector())),
    ];
    let mut rng = Rng::new(seed);
    let ty = match rng.below(4) {
        0 | 1 => Type::Double,
        2 => Type::vector(),
        _ => Type::pair(Type::Double, Type::vector()),
    };
    let body = TermGen::new(&mut rng, &inputs).term(&ty, 5);
    Program {
        inputs: inputs
            .into_iter()
            .map(|(name, ty)| Input {
                name,
                ty,
                span: Span::default(),
            })
            .collect(),
        body,
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn derivatives_match_finite_differences(seed in any::<u64>()) {
        let p = random_program(seed);
        let t = check_program(&p).unwrap();
        let d = diff_program(&p).unwrap();
        prop_assert_eq!(check_program(&d).unwrap(), t.dual(), "{}", d);
        let c = check_derivative(&p, &d, 6, seed, 1e-5).map_err(|e| TestCaseError::fail(format!("{p}\n{e}")))?;
        prop_assume!(c.compared > 0);
    }

    #[test]
    fn simplifying_derivatives_preserves_values(seed in any::<u64>()) {
        let p = random_program(seed);
        let d = diff_program(&p).unwrap();
        let s = rewrite(&d, &strategies::simplify(), false).unwrap().program;
        prop_assert_eq!(check_program(&s).unwrap(), check_program(&d).unwrap());
        check_equivalent(&d, &s, 6, seed, Some(1e-9)).map_err(|e| TestCaseError::fail(format!("{d}\n  ~> {s}\n{e}")))?;
        check_derivative(&p, &s, 6, seed, 1e-5).map_err(|e| TestCaseError::fail(format!("{p}\n{e}")))?;
    }
}

#[test]
fn derivative_of_a_scalar_function_by_hand() {
    // d/dx (x * sin x) = sin x + x cos x, seeded with dx = 1.
    let p = fsmooth::parse_program("input x : Double\nx * sin x").unwrap();
    let d = rewrite(&diff_program(&p).unwrap(), &strategies::simplify(), false)
        .unwrap()
        .program;
    assert_eq!(
        d.body.to_string(),
        "let d2 = sin (fst x) in (fst x * d2, snd x * d2 + fst x * (snd x * cos (fst x)))"
    );
    let x = 0.7_f64;
    let v = fsmooth::interp::eval_program(
        &d,
        &[fsmooth::interp::Value::Pair(std::sync::Arc::new((
            fsmooth::interp::Value::Double(x),
            fsmooth::interp::Value::Double(1.0),
        )))],
    )
    .unwrap();
    let expected = format!("({:?}, {:?})", x * x.sin(), x.sin() + x * x.cos());
    assert_eq!(v.to_string(), expected);
}
