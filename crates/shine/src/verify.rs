//! The interpreter check (ARCHITECTURE.md, rule 3): compiled code, on any target, against the
//! reference interpreter on the original definition and the same inputs.
//!
//! Floats are compared with a tolerance for their precision ([`runtime::Tolerance`]),
//! integers, booleans and indices exactly ([`scalars_agree`], the rule every comparison with
//! the interpreter uses); a result that is a tuple part by part, an array of tuples or
//! vectors component by component and lane by lane.

use crate::boundary::{self, Array, Output};
use crate::inputs::{fit_inputs, random_inputs};
use crate::sum_bound::SumBounds;
use crate::{Artifact, Error, Executable, Inputs, Phrase, RunOptions, Setting, SourceFile, Stage};
use rise::infer::Instance;
use rise::infer::{instantiate_def, prepare_def};
use rise::interp::{self, Scalar};
use rise::ScalarType;
use runtime::Tolerance;

/// Runs `artifact` once on `inputs` (and the sizes `nats`) and compares the result with the
/// interpreter's; the result when they agree.
pub fn verify(
    artifact: &Artifact,
    inputs: Inputs,
    nats: &[(String, i64)],
    options: &RunOptions,
) -> Result<Output, Error> {
    let options = RunOptions {
        verify: true,
        ..options.clone()
    };
    let mut executable = Executable::new(artifact, inputs, nats, &options)?;
    let result = executable.run()?;
    executable.verify(&result)?;
    Ok(result)
}

/// The reference interpreter on the definition `def` of `program` (what `shine eval`
/// computes): the inputs fitted to its parameters as a run fits them
/// ([`fit_inputs`](crate::inputs::fit_inputs)), or random ones from a seed as a run makes
/// them ([`random_inputs`](crate::inputs::random_inputs): every size given in `nats`), the
/// sizes `nats`, foreign functions compiled by `cc`. Errors of checking are [`Stage::Check`],
/// of fitting the inputs [`Stage::Input`], of the interpreter [`Stage::Run`].
pub fn evaluate(
    program: &SourceFile,
    def: &str,
    inputs: Inputs,
    nats: &[(String, i64)],
    cc: &str,
) -> Result<Output, Error> {
    let checked = program.check().map_err(|e| e.at(Stage::Check))?;
    let inputs = match (checked.def(def), inputs) {
        (Some(d), Inputs::Arrays(given)) => {
            fit_inputs(&d.ty, def, given, nats).map_err(|e| e.at(Stage::Input))?
        }
        (Some(_), Inputs::Random { seed }) => {
            let prepared =
                prepare_def(&checked, def).map_err(|d| program.error(d).at(Stage::Check))?;
            random_inputs(&prepared.scheme, nats, seed).map_err(|e| e.at(Stage::Input))?
        }
        // instantiating names the definitions there are
        (None, _) => Vec::new(),
    };
    let types: Vec<_> = inputs.iter().map(Array::data_type).collect();
    // an unknown definition is the program's error, a mismatch the inputs'
    let stage = match checked.def(def) {
        Some(_) => Stage::Input,
        None => Stage::Check,
    };
    let instance =
        instantiate_def(&checked, def, &types, nats).map_err(|d| program.error(d).at(stage))?;
    if !matches!(instance.result, rise::Type::Data(_)) {
        return Err(Error::from(format!(
            "the result of `{def}` is a function (`{}`), not data; give all its inputs",
            instance.result
        ))
        .at(Stage::Input));
    }
    // the values hold the data now
    let values = values_of(&inputs).map_err(|e| e.at(Stage::Input))?;
    drop(inputs);
    interpret_values(program, &instance, values, cc).map_err(|e| e.at(Stage::Run))
}

/// The reference result: the interpreter on the instantiated definition (errors are rendered
/// against `program`); foreign functions run compiled by `cc` ([`crate::foreign`]).
pub(crate) fn interpret(
    program: &SourceFile,
    instance: &Instance,
    inputs: &[Array],
    cc: &str,
) -> Result<Output, Error> {
    interpret_values(program, instance, values_of(inputs)?, cc)
}

/// The interpreter's values of `inputs`.
fn values_of(inputs: &[Array]) -> Result<Vec<interp::Value>, Error> {
    inputs
        .iter()
        .map(|a| a.to_value().map_err(Error::from))
        .collect()
}

/// [`interpret`] on the inputs' values.
fn interpret_values(
    program: &SourceFile,
    instance: &Instance,
    values: Vec<interp::Value>,
    cc: &str,
) -> Result<Output, Error> {
    let evaluator = crate::foreign::CEvaluator::shared_for_expr(&instance.expr, cc);
    let foreign = evaluator
        .clone()
        .map(|e| e as std::sync::Arc<dyn rise::foreign::ForeignEvaluator>);
    // a foreign function's failure, with how to choose a C compiler where none was found
    let failed = |e: interp::EvalError| {
        let error = program.error(e.into());
        match &evaluator {
            Some(c) if c.compiler_missing() => error
                .with_note(Phrase::from("choose another C compiler with ").then(Setting::Compiler)),
            _ => error,
        }
    };
    let function = interp::eval_with_foreign(&instance.expr, &[], foreign).map_err(failed)?;
    let result = if values.is_empty() {
        function
    } else {
        interp::apply(&function, values).map_err(failed)?
    };
    let rise::Type::Data(t) = &instance.result else {
        return Err("the result is not data".to_string().into());
    };
    Output::from_value(&result, t).map_err(|e| Error::from(format!("interpreter result: {e}")))
}

/// How `--verify` compared a result's floats.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FloatCheck {
    /// Within the tolerance of their precision ([`scalars_agree`]).
    Tolerance,
    /// Within the bound for reassociated sums of products (`2·γ_m·Σ|terms|`; the program
    /// computes its floats only by `+`, `-`, `*` and negation; docs/semantics.md).
    SumBound,
}

/// Compares the compiled code's `result` with the `expected` one, part by part and, for
/// arrays of tuples, component by component: every float within the tolerance or, where
/// `bounds` gives its element one, within that bound.
pub(crate) fn compare(
    expected: &Output,
    result: &Output,
    bounds: Option<&SumBounds>,
) -> Result<(), Error> {
    let fail = |m: String| {
        Error::from(format!(
            "verification failed: the generated code and the interpreter differ: {m}"
        ))
    };
    if expected.parts.len() != result.parts.len() {
        return Err(fail(format!(
            "{} parts, expected {}",
            result.parts.len(),
            expected.parts.len()
        )));
    }
    let several = expected.parts.len() > 1;
    for (k, (want, got)) in expected.parts.iter().zip(&result.parts).enumerate() {
        let part = if several {
            format!("part {k} (`{}`): ", want.data_type())
        } else {
            String::new()
        };
        if want.shape != got.shape || want.elem != got.elem {
            return Err(fail(format!(
                "{part}the code's result is `{}`, the interpreter's `{}`",
                got.data_type(),
                want.data_type()
            )));
        }
        let leaves = want.leaves().map_err(Error::from)?;
        for j in 0..leaves.len() {
            let n = leaves.len();
            let (want_column, got_column) = (column(want, j, n), column(got, j, n));
            let allowed = bounds.map_or_else(Vec::new, |b| b.column(k, j, n));
            compare_column(want_column, got_column, &allowed).map_err(|m| {
                let component = if leaves.len() > 1 {
                    format!("{}: ", boundary::leaf_place(&want.elem, j))
                } else {
                    String::new()
                };
                fail(format!("{part}{component}{m}"))
            })?;
        }
    }
    Ok(())
}

/// Component `j` of the `n` of each element of `a`.
fn column(a: &Array, j: usize, n: usize) -> impl Iterator<Item = &Scalar> {
    a.data.iter().skip(j).step_by(n)
}

/// Whether the compiled code's scalar `got` agrees with the interpreter's `expected`: floats
/// within the tolerance of their precision (`f64`: [`Tolerance::for_f64`], `f32` and `f16`:
/// [`Tolerance::for_f32`]; schedules reorder reductions, compilers fuse `a * b + c`), NaN
/// with NaN and an infinity only with itself; integers, booleans and indices exactly (64-bit
/// integers as integers, not as doubles). The rule of [`verify`] and of `shine-difftest`.
pub fn scalars_agree(expected: Scalar, got: Scalar) -> bool {
    let ty = expected.ty();
    if ty.is_float() && got.ty() == ty {
        tolerance(ty).accepts(expected.as_f64(), got.as_f64())
    } else {
        expected == got
    }
}

/// The tolerance of [`scalars_agree`] for scalars of type `ty`.
fn tolerance(ty: ScalarType) -> Tolerance {
    match ty {
        ScalarType::F64 => Tolerance::for_f64(),
        t if t.is_float() => Tolerance::for_f32(),
        _ => Tolerance::exact(),
    }
}

/// Compares one column of a result (a component of its elements) with the interpreter's:
/// how many elements disagree and the first of them. Element `i` agrees by
/// [`scalars_agree`], or within `bounds[i]` where that is a bound ([`within_bound`]).
fn compare_column<'a>(
    want: impl Iterator<Item = &'a Scalar>,
    got: impl Iterator<Item = &'a Scalar>,
    bounds: &[Option<f64>],
) -> Result<(), String> {
    let mut len = 0;
    let mut first = None;
    let mut count = 0;
    for (index, (&w, &g)) in want.zip(got).enumerate() {
        len += 1;
        let bound = bounds.get(index).copied().flatten();
        let agree = scalars_agree(w, g) || bound.is_some_and(|b| within_bound(w, g, b));
        if !agree {
            count += 1;
            first.get_or_insert((index, w, g, bound));
        }
    }
    let Some((index, w, g, bound)) = first else {
        return Ok(());
    };
    Err(match bound {
        Some(b) => format!(
            "{count} of {len} values differ by more than the bound for reassociated sums \
             (2·γ_m·Σ|terms|); the first at index {index}: expected {}, got {}, bound {b:e}",
            w.as_f64(),
            g.as_f64()
        ),
        None => runtime::Mismatch::Values {
            index,
            expected: w.as_f64(),
            actual: g.as_f64(),
            count,
            len,
            tolerance: tolerance(w.ty()),
        }
        .to_string(),
    })
}

/// Whether the float `got` is within `bound` of `expected` (NaN with NaN, an infinity only
/// with itself).
fn within_bound(expected: Scalar, got: Scalar, bound: f64) -> bool {
    let (e, g) = (expected.as_f64(), got.as_f64());
    got.ty() == expected.ty()
        && (e == g
            || (e.is_nan() && g.is_nan())
            || (e.is_finite() && g.is_finite() && (g - e).abs() <= bound))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn floats_agree_within_their_tolerance_integers_exactly() {
        assert!(scalars_agree(Scalar::F32(1.0), Scalar::F32(1.0001)));
        assert!(!scalars_agree(Scalar::F32(1.0), Scalar::F32(1.01)));
        assert!(!scalars_agree(Scalar::F64(1.0), Scalar::F64(1.0001)));
        assert!(scalars_agree(Scalar::F64(f64::NAN), Scalar::F64(f64::NAN)));
        assert!(!scalars_agree(
            Scalar::F32(f32::INFINITY),
            Scalar::F32(f32::MAX)
        ));
        // 2^60 and 2^60 + 1 are one double, not one integer
        let big = 1i64 << 60;
        assert!(!scalars_agree(Scalar::I64(big), Scalar::I64(big + 1)));
        assert!(scalars_agree(Scalar::I64(big), Scalar::I64(big)));
        assert!(!scalars_agree(Scalar::Bool(true), Scalar::Bool(false)));
    }

    #[test]
    fn a_column_names_its_first_disagreement_and_counts_them() {
        let want = [Scalar::I32(1), Scalar::I32(2), Scalar::I32(3)];
        let got = [Scalar::I32(1), Scalar::I32(5), Scalar::I32(4)];
        let m = compare_column(want.iter(), got.iter(), &[]).unwrap_err();
        assert_eq!(
            m.to_string(),
            "2 of 3 values differ (rtol 0, atol 0); the first at index 1: expected 2, got 5"
        );
        assert_eq!(compare_column(want.iter(), want.iter(), &[]), Ok(()));
    }

    #[test]
    fn a_bound_accepts_what_the_tolerance_refuses() {
        let want = [Scalar::F32(0.0), Scalar::F32(1.0)];
        let got = [Scalar::F32(0.002), Scalar::F32(1.0005)];
        // the tolerance refuses 0.002 at 0 (atol 1e-4), a bound of 0.01 accepts it
        assert!(compare_column(want.iter(), got.iter(), &[]).is_err());
        assert_eq!(
            compare_column(want.iter(), got.iter(), &[Some(0.01), None]),
            Ok(())
        );
        // a tight bound takes nothing from the tolerance (1.0005 at 1 is within it)
        assert_eq!(
            compare_column(want.iter(), got.iter(), &[Some(0.01), Some(1e-6)]),
            Ok(())
        );
        // a value outside both is refused, naming the bound
        let m = compare_column(want.iter(), got.iter(), &[Some(1e-3), None]).unwrap_err();
        assert!(
            m.starts_with("1 of 2 values differ by more than the bound"),
            "{m}"
        );
    }
}
