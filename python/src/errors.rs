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

/// An error to raise: a message, or a library error that knows its pipeline stage.
pub trait Raisable: std::fmt::Display {
    /// The stage the error says it comes from, if it says.
    fn stage(&self) -> Option<Stage> {
        None
    }

    /// The message of the exception.
    fn message(&self) -> String {
        self.to_string()
    }
}

impl Raisable for String {}
impl Raisable for &str {}

impl Raisable for shine::Error {
    fn stage(&self) -> Option<Stage> {
        use shine::Stage as S;
        match shine::Error::stage(self) {
            S::Check | S::Rewrite | S::Codegen | S::Build => Some(Stage::Compile),
            S::Input => Some(Stage::Input),
            S::Run | S::Verify => Some(Stage::Execution),
            _ => None,
        }
    }

    /// The rendered error, the settings it names as the package's keywords.
    fn message(&self) -> String {
        self.render(&keyword_of)
    }
}

/// A setting the library names, as the package's functions take it.
pub fn keyword_of(setting: &shine::Setting) -> String {
    use shine::Setting;
    match setting {
        Setting::Size(n) => format!("`{n}=V`"),
        Setting::InputArrays => "an array argument".into(),
        Setting::RandomInputs => "random inputs".into(),
        Setting::CFlags => "`cflags=`".into(),
        Setting::Compiler => "`cc=`".into(),
        Setting::Strategy => "`strategy=`".into(),
        Setting::GeneratedSource => "the kernel's `source` is the generated source".into(),
        Setting::SearchBudget => "`budget=`".into(),
        Setting::SearchTime => "`time=`".into(),
        Setting::SearchSizes | Setting::VerifySizes => "`verify_sizes=`".into(),
        Setting::TimeSizes => "`time_sizes=`".into(),
        Setting::Parameter(n) => format!("`params[\"{n}\"]`"),
        Setting::Template => "the template".into(),
        Setting::TuningDatabase => "`db=`".into(),
        Setting::Jobs => "`jobs=`".into(),
        Setting::Devices => "`devices=`".into(),
        other => other.library_name(),
    }
}

/// The Python exception of `error`: the class of the stage the library's error names, or of
/// `stage` (where the call happened) when it names none.
pub fn raise(stage: Stage, error: impl Raisable) -> PyErr {
    let message = error.message();
    match error.stage().unwrap_or(stage) {
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
