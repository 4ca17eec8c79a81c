//! Source texts with the names messages give them: the program, the strategy file, the
//! strategy expression given inline.

use crate::Error;
use rise::infer::{check_program, CheckedProgram};
use rise::Diagnostic;
use std::path::Path;

/// A source text and its name (a path, or `<strategy>` for an expression given inline).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SourceFile {
    /// How messages name it.
    pub name: String,
    /// Its text.
    pub text: String,
}

impl SourceFile {
    /// A source that is not read from a file.
    pub fn new(name: impl Into<String>, text: impl Into<String>) -> SourceFile {
        SourceFile {
            name: name.into(),
            text: text.into(),
        }
    }

    /// Reads a file (at most [`MAX_SOURCE_BYTES`](crate::limits::MAX_SOURCE_BYTES)), named by
    /// its path.
    pub fn read(path: &Path) -> Result<SourceFile, Error> {
        let text = crate::limits::read_source(path)?;
        Ok(SourceFile::new(path.display().to_string(), text))
    }

    /// The error of a diagnostic in this source.
    pub fn error(&self, diagnostic: Diagnostic) -> Error {
        self.errors(vec![diagnostic])
    }

    /// The error of several diagnostics in this source, shown one after the other.
    pub fn errors(&self, diagnostics: Vec<Diagnostic>) -> Error {
        Error::InSource {
            file: Box::new(self.clone()),
            diagnostics,
        }
    }

    /// The parser's warnings about the text (a definition that shadows a primitive),
    /// rendered with their source excerpts; none where the text does not parse.
    pub fn warnings(&self) -> Vec<String> {
        match rise::syntax::parse_program(&self.text) {
            Ok(program) => program
                .warnings
                .iter()
                .map(|w| w.render_warning(&self.name, &self.text))
                .collect(),
            Err(_) => Vec::new(),
        }
    }

    /// Parses and type-checks the text as a RISE program.
    pub fn check(&self) -> Result<CheckedProgram, Error> {
        let program = rise::syntax::parse_program(&self.text).map_err(|d| self.error(d))?;
        check_program(&program).map_err(|d| self.error(d))
    }
}
