//! The error of every stage of the pipeline, as a value: diagnostics with spans in the source
//! they point into, or a message with no place in a source. It renders as the command line
//! prints it (`error: ...`, or the diagnostic with its source excerpt).

use crate::{Phrase, Setting, SourceFile};
use rise::{Diagnostic, Span};
use std::fmt;

/// The stage of the pipeline an error comes from: what a caller branches on (a search counts
/// its failed candidates by stage, the Python package raises one exception class per stage).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Stage {
    /// Reading and checking the program: parse and type errors, an unknown definition.
    Check,
    /// Loading the strategy and applying it: errors in the strategy file or expression, a
    /// strategy that fails or runs out of budget.
    Rewrite,
    /// Translating the rewritten program and generating code: what the strategy left open.
    Codegen,
    /// Fitting the inputs and sizes to the definition: shapes, dtypes, size constraints,
    /// memory, options that do not suit the target.
    Input,
    /// Building the generated code: the C compiler, the OpenCL build, NVRTC.
    Build,
    /// Running the built code: a data-dependent error of the program, a crash, a launch.
    Run,
    /// Comparing with the reference interpreter (and the interpreter's own errors there).
    Verify,
    /// Writing results.
    Output,
    /// A panic inside the library, caught: a bug of shine, not of its input.
    Internal,
    /// An error no stage was given to.
    Other,
}

impl Stage {
    /// The stage's name in lower case (`check`, `rewrite`, ...).
    pub fn name(self) -> &'static str {
        match self {
            Stage::Check => "check",
            Stage::Rewrite => "rewrite",
            Stage::Codegen => "codegen",
            Stage::Input => "input",
            Stage::Build => "build",
            Stage::Run => "run",
            Stage::Verify => "verify",
            Stage::Output => "output",
            Stage::Internal => "internal",
            Stage::Other => "other",
        }
    }
}

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
    /// An error with no place in a source text that names settings of the pipeline: shown
    /// with the library's names, and by a front end with its own ([`Error::render`]).
    Phrased(Phrase),
    /// An error and a note, shown after it, on what may resolve it.
    Noted {
        /// The error.
        error: Box<Error>,
        /// The note, without its `note: ` prefix.
        note: Phrase,
    },
    /// An error of a known stage of the pipeline ([`Error::at`]); shown as the error itself.
    Staged {
        /// The stage it comes from.
        stage: Stage,
        /// The error.
        error: Box<Error>,
    },
}

impl Error {
    /// This error, from `stage` unless it already has a stage (the innermost stage given
    /// stays: a failed input check inside a run is an input error).
    pub fn at(self, stage: Stage) -> Error {
        match self.stage() {
            Stage::Other => Error::Staged {
                stage,
                error: Box::new(self),
            },
            _ => self,
        }
    }

    /// The error itself, without its stage: what to match on (a diagnostic in a source, a
    /// message, a noted error).
    pub fn unstaged(&self) -> &Error {
        match self {
            Error::Staged { error, .. } => error.unstaged(),
            other => other,
        }
    }

    /// The stage of the pipeline this error comes from ([`Stage::Other`] when none was given).
    pub fn stage(&self) -> Stage {
        match self {
            Error::Staged { stage, .. } => *stage,
            Error::Noted { error, .. } => error.stage(),
            Error::InSource { .. } | Error::Message(_) | Error::Phrased(_) => Stage::Other,
        }
    }

    /// This error with `note` shown after it.
    pub fn with_note(self, note: impl Into<Phrase>) -> Error {
        Error::Noted {
            error: Box::new(self),
            note: note.into(),
        }
    }

    /// The settings of the pipeline the error's messages and notes name, in order.
    pub fn settings(&self) -> Vec<&Setting> {
        match self {
            Error::Phrased(p) => p.settings().collect(),
            Error::Noted { error, note } => {
                let mut all = error.settings();
                all.extend(note.settings());
                all
            }
            Error::Staged { error, .. } => error.settings(),
            Error::InSource { .. } | Error::Message(_) => Vec::new(),
        }
    }

    /// The error as `Display` shows it, each [`Setting`] it names spelled by `spell`: how a
    /// front end shows it in its own terms (the command line's flags, Python's keywords).
    pub fn render(&self, spell: &dyn Fn(&Setting) -> String) -> String {
        Rendered { error: self, spell }.to_string()
    }
}

impl From<Phrase> for Error {
    fn from(message: Phrase) -> Error {
        Error::Phrased(message)
    }
}

/// An error shown with its settings spelled by `spell`.
struct Rendered<'a> {
    error: &'a Error,
    spell: &'a dyn Fn(&Setting) -> String,
}

impl<'a> fmt::Display for Rendered<'a> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let inner = |error: &'a Error| Rendered {
            error,
            spell: self.spell,
        };
        match self.error {
            Error::InSource { file, diagnostics } => write_diagnostics(f, file, diagnostics),
            Error::Message(message) => write!(f, "error: {message}"),
            Error::Phrased(message) => write!(f, "error: {}", message.render(self.spell)),
            Error::Noted { error, note } => {
                write!(f, "{}\nnote: {}", inner(error), note.render(self.spell))
            }
            Error::Staged { error, .. } => write!(f, "{}", inner(error)),
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
        f.write_str(&self.render(&Setting::library_name))
    }
}

/// The diagnostics of `file`, each with its source excerpt; past [`MAX_SHOWN`], counted.
fn write_diagnostics(
    f: &mut fmt::Formatter<'_>,
    file: &SourceFile,
    diagnostics: &[Diagnostic],
) -> fmt::Result {
    for (i, d) in diagnostics.iter().take(MAX_SHOWN).enumerate() {
        if i > 0 {
            f.write_str("\n")?;
        }
        write_diagnostic(f, file, d)?;
    }
    if diagnostics.len() > MAX_SHOWN {
        write!(
            f,
            "\nerror: {} more errors in {} (the first {MAX_SHOWN} are shown)",
            diagnostics.len() - MAX_SHOWN,
            file.name
        )?;
    }
    Ok(())
}

/// The most diagnostics of one source shown with their excerpts: the rest are counted. Each
/// excerpt is found by scanning the source, and a mangled file can have an error on every
/// line (100,000 stray `=>` in a strategy file took minutes to print).
pub(crate) const MAX_SHOWN: usize = 20;

/// A diagnostic with its source excerpt, or as one line and its notes when it has no span.
/// A line longer than [`MAX_EXCERPT_LINE`] bytes is not shown: the place is named instead.
fn write_diagnostic(f: &mut fmt::Formatter<'_>, file: &SourceFile, d: &Diagnostic) -> fmt::Result {
    if d.span == Span::default() {
        write!(f, "error: {}", d.message)?;
    } else if let Some((line, column)) = long_line(&file.text, d.span) {
        write!(
            f,
            "error: {}\n  --> {}:{line}:{column}",
            d.message, file.name
        )?;
        if let Some(label) = &d.label {
            write!(f, "\n  label: {label}")?;
        }
        write!(
            f,
            "\n  note: the line is not shown (longer than {MAX_EXCERPT_LINE} bytes)"
        )?;
    } else {
        return f.write_str(&d.render(&file.name, &file.text));
    }
    for note in &d.notes {
        write!(f, "\n  note: {note}")?;
    }
    Ok(())
}

/// The longest source line shown in an excerpt (a mangled file can be one line of a
/// megabyte, which each of its errors would print again).
pub(crate) const MAX_EXCERPT_LINE: usize = 1000;

/// The line and column (from 1, the column in characters) where `span` starts, if that line
/// is longer than [`MAX_EXCERPT_LINE`] bytes.
fn long_line(text: &str, span: Span) -> Option<(usize, usize)> {
    let mut start = (span.start as usize).min(text.len());
    while !text.is_char_boundary(start) {
        start -= 1;
    }
    let line_start = text[..start].rfind('\n').map_or(0, |i| i + 1);
    let line_end = text[start..].find('\n').map_or(text.len(), |i| start + i);
    if line_end - line_start <= MAX_EXCERPT_LINE {
        return None;
    }
    let line = 1 + text[..line_start].matches('\n').count();
    let column = 1 + text[line_start..start].chars().count();
    Some((line, column))
}

impl std::error::Error for Error {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_innermost_stage_stays_and_is_not_shown() {
        let error = Error::from("bad shape".to_string()).at(Stage::Input);
        let noted = error.clone().with_note("give another file").at(Stage::Run);
        assert_eq!(noted.stage(), Stage::Input);
        assert_eq!(
            noted.to_string(),
            "error: bad shape\nnote: give another file"
        );
        assert_eq!(Error::from("x".to_string()).stage(), Stage::Other);
    }

    #[test]
    fn many_diagnostics_show_the_first_ones_and_count_the_rest() {
        let text = "x\n".repeat(MAX_SHOWN + 5);
        let diagnostics = (0..MAX_SHOWN + 5)
            .map(|i| Diagnostic::new(Span::new(2 * i, 2 * i + 1), format!("bad {i}")))
            .collect();
        let error = Error::InSource {
            file: Box::new(SourceFile::new("f.elv", text)),
            diagnostics,
        };
        let shown = error.to_string();
        assert!(shown.contains("bad 0") && shown.contains(&format!("bad {}", MAX_SHOWN - 1)));
        assert!(!shown.contains(&format!("bad {MAX_SHOWN}")), "{shown}");
        assert!(
            shown.ends_with("error: 5 more errors in f.elv (the first 20 are shown)"),
            "{shown}"
        );
    }

    #[test]
    fn a_very_long_line_is_named_not_shown() {
        let long = format!("def a = 1\ndef b = {}é >\n", "x ".repeat(MAX_EXCERPT_LINE));
        let at = long.rfind('>').unwrap();
        let error = Error::InSource {
            file: Box::new(SourceFile::new("f.elv", long.clone())),
            diagnostics: vec![
                Diagnostic::new(Span::new(at, at + 1), "unexpected `>`").with_note("a note")
            ],
        };
        let shown = error.to_string();
        let column = 11 + 2 * MAX_EXCERPT_LINE;
        assert_eq!(
            shown,
            format!(
                "error: unexpected `>`\n  --> f.elv:2:{column}\n  note: the line is not shown \
                 (longer than {MAX_EXCERPT_LINE} bytes)\n  note: a note"
            )
        );
        // a short line is shown with its excerpt
        let error = Error::InSource {
            file: Box::new(SourceFile::new("f.elv", "def a = 1 >\n")),
            diagnostics: vec![Diagnostic::new(Span::new(10, 11), "unexpected `>`")],
        };
        assert!(error.to_string().contains("def a = 1 >"), "{error}");
    }
}
