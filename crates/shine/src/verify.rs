//! The interpreter check (DESIGN.md, principle 3): compiled code, on any target, against the
//! reference interpreter on the original definition and the same inputs.
//!
//! Floats are compared with a tolerance for their precision ([`runtime::Tolerance`]),
//! integers and booleans exactly.

use crate::{Artifact, Error, Executable, Inputs, RunOptions, SourceFile};
use rise::infer::Instance;
use rise::interp::{self, Flat, Value};
use rise::ScalarType;

/// Runs `artifact` once on `inputs` (and the sizes `nats`) and compares the result with the
/// interpreter's; the result when they agree.
pub fn verify(
    artifact: &Artifact,
    inputs: Inputs,
    nats: &[(String, i64)],
    options: &RunOptions,
) -> Result<Flat, Error> {
    let options = RunOptions {
        verify: true,
        ..options.clone()
    };
    let mut executable = Executable::new(artifact, inputs, nats, &options)?;
    let result = executable.run()?;
    executable.verify(&result)?;
    Ok(result)
}

/// The reference result: the interpreter on the instantiated definition (errors are rendered
/// against `program`).
pub(crate) fn interpret(
    program: &SourceFile,
    instance: &Instance,
    inputs: &[Flat],
) -> Result<Flat, Error> {
    let values = inputs
        .iter()
        .map(|f| {
            Value::from_flat(f.elem, &f.shape, f.data.clone()).map_err(|e| Error::from(e.message))
        })
        .collect::<Result<Vec<_>, _>>()?;
    let function = interp::eval(&instance.expr).map_err(|e| program.error(e.into()))?;
    let result = if values.is_empty() {
        function
    } else {
        interp::apply(&function, values).map_err(|e| program.error(e.into()))?
    };
    let rise::Type::Data(t) = &instance.result else {
        return Err("the result is not data".to_string().into());
    };
    result
        .to_flat(t)
        .map_err(|e| Error::from(format!("interpreter result: {}", e.message)))
}

/// Compares the compiled code's `result` (of element type `elem`) with the `expected` one.
pub(crate) fn compare(expected: &Flat, result: &Flat, elem: ScalarType) -> Result<(), Error> {
    let tolerance = match elem {
        ScalarType::F64 => runtime::Tolerance::for_f64(),
        t if t.is_float() => runtime::Tolerance::for_f32(),
        _ => runtime::Tolerance::exact(),
    };
    let want: Vec<f64> = expected.data.iter().map(|s| s.as_f64()).collect();
    let got: Vec<f64> = result.data.iter().map(|s| s.as_f64()).collect();
    runtime::compare(&want, &got, tolerance).map_err(|m| {
        Error::from(format!(
            "verification failed: the generated code and the interpreter differ: {m}"
        ))
    })
}
