//! The exceptions of the package: `shine.Error` and one subclass per stage. Each carries the
//! rendered diagnostic, as the command line prints it (with its source excerpt).

use pyo3::create_exception;
use pyo3::exceptions::PyException;
use pyo3::prelude::*;

create_exception!(
    shine,
    Error,
    PyException,
    "A failure of shine: the message is the rendered diagnostic, as the command line prints it."
);
create_exception!(
    shine,
    CompileError,
    Error,
    "The program, the strategy, the code generator or the C compiler failed."
);
create_exception!(
    shine,
    InputError,
    Error,
    "The inputs do not fit the definition's parameters (shapes, dtypes, sizes, `out=`)."
);
create_exception!(
    shine,
    ExecutionError,
    Error,
    "The code (or the interpreter) stopped on an error: a division by zero, an index out of range."
);

/// Where an error happened, which picks its exception class.
#[derive(Clone, Copy, Debug)]
pub enum Stage {
    /// Parsing, checking, rewriting, generating or building code.
    Compile,
    /// Fitting the inputs to the parameters.
    Input,
    /// Running the code or the interpreter.
    Execution,
    /// A stage the library's error does not tell (`shine.Error` itself).
    Unknown,
}

/// The Python exception of a library error at `stage`.
pub fn raise(stage: Stage, error: impl std::fmt::Display) -> PyErr {
    let message = error.to_string();
    match stage {
        Stage::Compile => CompileError::new_err(message),
        Stage::Input => InputError::new_err(message),
        Stage::Execution => ExecutionError::new_err(message),
        Stage::Unknown => Error::new_err(message),
    }
}

/// Adds the exception classes to the module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("Error", py.get_type::<Error>())?;
    m.add("CompileError", py.get_type::<CompileError>())?;
    m.add("InputError", py.get_type::<InputError>())?;
    m.add("ExecutionError", py.get_type::<ExecutionError>())?;
    Ok(())
}
