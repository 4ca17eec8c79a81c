//! The error of every stage of the pipeline, as a value: diagnostics with spans in the source
//! they point into, or a message with no place in a source. It renders as the command line
//! prints it (`error: ...`, or the diagnostic with its source excerpt).

use crate::SourceFile;
use rise::{Diagnostic, Span};
use std::fmt;

/// What went wrong in [`compile`](crate::compile), [`verify`](crate::verify) or a run.
#[derive(Clone, Debug)]
pub enum Error {
    /// Diagnostics in a source text: the program, the strategy file or the strategy
    /// expression. A diagnostic without a span is shown without an excerpt.
    InSource {
        /// The text the diagnostics point into.
        file: Box<SourceFile>,
        /// The diagnostics, shown one after the other.
        diagnostics: Vec<Diagnostic>,
    },
    /// An error with no place in a source text.
    Message(String),
    /// An error and a note, shown after it, on what may resolve it.
    Noted {
        /// The error.
        error: Box<Error>,
        /// The note, without its `note: ` prefix.
        note: String,
    },
}

impl Error {
    /// This error with `note` shown after it.
    pub fn with_note(self, note: impl Into<String>) -> Error {
        Error::Noted {
            error: Box::new(self),
            note: note.into(),
        }
    }
}

impl From<String> for Error {
    fn from(message: String) -> Error {
        Error::Message(message)
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::InSource { file, diagnostics } => {
                for (i, d) in diagnostics.iter().enumerate() {
                    if i > 0 {
                        f.write_str("\n")?;
                    }
                    write_diagnostic(f, file, d)?;
                }
                Ok(())
            }
            Error::Message(message) => write!(f, "error: {message}"),
            Error::Noted { error, note } => write!(f, "{error}\nnote: {note}"),
        }
    }
}

/// A diagnostic with its source excerpt, or as one line and its notes when it has no span.
fn write_diagnostic(f: &mut fmt::Formatter<'_>, file: &SourceFile, d: &Diagnostic) -> fmt::Result {
    if d.span == Span::default() {
        write!(f, "error: {}", d.message)?;
        for note in &d.notes {
            write!(f, "\n  note: {note}")?;
        }
        Ok(())
    } else {
        f.write_str(&d.render(&file.name, &file.text))
    }
}

impl std::error::Error for Error {}
