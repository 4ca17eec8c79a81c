//! The interpreter check (ARCHITECTURE.md, rule 3): compiled code, on any target, against the
//! reference interpreter on the original definition and the same inputs.
//!
//! Floats are compared with a tolerance for their precision ([`runtime::Tolerance`]),
//! integers, booleans and indices exactly; a result that is a tuple part by part, an array of
//! tuples or vectors component by component and lane by lane.

use crate::boundary::{self, Array, Leaf, Output};
use crate::inputs::{fit_inputs, Given};
use crate::{Artifact, Error, Executable, Inputs, RunOptions, SourceFile, Stage};
use rise::infer::instantiate_def;
use rise::infer::Instance;
use rise::interp::{self};
use rise::ScalarType;

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
/// ([`fit_inputs`](crate::inputs::fit_inputs)), the sizes `nats`, foreign functions compiled
/// by `cc`. Errors of checking are [`Stage::Check`], of fitting the inputs [`Stage::Input`],
/// of the interpreter [`Stage::Run`].
pub fn evaluate(
    program: &SourceFile,
    def: &str,
    given: Vec<Given>,
    nats: &[(String, i64)],
    cc: &str,
) -> Result<Output, Error> {
    let checked = program.check().map_err(|e| e.at(Stage::Check))?;
    let inputs = match checked.def(def) {
        Some(d) => fit_inputs(&d.ty, def, given, nats).map_err(|e| e.at(Stage::Input))?,
        // instantiating names the definitions there are
        None => Vec::new(),
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
    interpret(program, &instance, &inputs, cc).map_err(|e| e.at(Stage::Run))
}

/// The reference result: the interpreter on the instantiated definition (errors are rendered
/// against `program`); foreign functions run compiled by `cc` ([`crate::foreign`]).
pub(crate) fn interpret(
    program: &SourceFile,
    instance: &Instance,
    inputs: &[Array],
    cc: &str,
) -> Result<Output, Error> {
    let values = inputs
        .iter()
        .map(|a| a.to_value().map_err(Error::from))
        .collect::<Result<Vec<_>, _>>()?;
    let foreign = crate::foreign::CEvaluator::for_expr(&instance.expr, cc);
    let function = interp::eval_with_foreign(&instance.expr, &[], foreign)
        .map_err(|e| program.error(e.into()))?;
    let result = if values.is_empty() {
        function
    } else {
        interp::apply(&function, values).map_err(|e| program.error(e.into()))?
    };
    let rise::Type::Data(t) = &instance.result else {
        return Err("the result is not data".to_string().into());
    };
    Output::from_value(&result, t).map_err(|e| Error::from(format!("interpreter result: {e}")))
}

/// Compares the compiled code's `result` with the `expected` one, part by part and, for
/// arrays of tuples, component by component.
pub(crate) fn compare(expected: &Output, result: &Output) -> Result<(), Error> {
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
        for (j, leaf) in leaves.iter().enumerate() {
            let tolerance = match leaf {
                Leaf::Scalar(ScalarType::F64) => runtime::Tolerance::for_f64(),
                Leaf::Scalar(t) if t.is_float() => runtime::Tolerance::for_f32(),
                _ => runtime::Tolerance::exact(),
            };
            let column = |a: &Array| -> Vec<f64> {
                a.data
                    .iter()
                    .skip(j)
                    .step_by(leaves.len())
                    .map(|s| s.as_f64())
                    .collect()
            };
            runtime::compare(&column(want), &column(got), tolerance).map_err(|m| {
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
