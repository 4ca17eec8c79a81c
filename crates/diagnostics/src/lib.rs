//! Source spans and diagnostics, shared by the front ends (RISE, ELEVATE strategy
//! files, F-smooth).
//!
//! Every error the front end reports (lexing, parsing, type inference, evaluation
//! of user programs) is a [`Diagnostic`]: a message, the byte span it points at and
//! optional notes. [`Diagnostic::render`] prints it with the surrounding source.

#![forbid(unsafe_code)]

pub mod suggest;

use std::fmt;
use std::ops::Range;

/// A half-open byte range `start..end` into a source text.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Span {
    /// First byte.
    pub start: u32,
    /// One past the last byte.
    pub end: u32,
}

impl Span {
    /// The span `start..end`.
    pub fn new(start: usize, end: usize) -> Span {
        Span {
            start: start as u32,
            end: end as u32,
        }
    }

    /// The smallest span covering both.
    pub fn to(self, other: Span) -> Span {
        if self == Span::default() {
            return other;
        }
        if other == Span::default() {
            return self;
        }
        Span {
            start: self.start.min(other.start),
            end: self.end.max(other.end),
        }
    }

    /// The span as a `Range<usize>`.
    pub fn range(self) -> Range<usize> {
        self.start as usize..self.end as usize
    }
}

/// An error (or warning) about user input, pointing at a source span.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Diagnostic {
    /// One-line summary.
    pub message: String,
    /// Where in the source the problem is.
    pub span: Span,
    /// The label shown at the span (defaults to the message).
    pub label: Option<String>,
    /// Further explanations, printed after the source excerpt.
    pub notes: Vec<String>,
}

impl Diagnostic {
    /// A diagnostic with a message at a span.
    pub fn new(span: Span, message: impl Into<String>) -> Diagnostic {
        Diagnostic {
            message: message.into(),
            span,
            label: None,
            notes: Vec::new(),
        }
    }

    /// Adds the label shown under the span.
    pub fn with_label(mut self, label: impl Into<String>) -> Diagnostic {
        self.label = Some(label.into());
        self
    }

    /// Adds a note.
    pub fn with_note(mut self, note: impl Into<String>) -> Diagnostic {
        self.notes.push(note.into());
        self
    }

    /// Renders the diagnostic with the source excerpt it points at, without colours.
    pub fn render(&self, file_name: &str, source: &str) -> String {
        self.render_as(ariadne::ReportKind::Error, file_name, source)
    }

    /// Renders the diagnostic as a warning (`Warning: ...`), with its source excerpt.
    pub fn render_warning(&self, file_name: &str, source: &str) -> String {
        self.render_as(ariadne::ReportKind::Warning, file_name, source)
    }

    fn render_as(&self, kind: ariadne::ReportKind, file_name: &str, source: &str) -> String {
        use ariadne::{Config, Label, Report, Source};
        let len = source.len();
        let start = (self.span.start as usize).min(len);
        let end = (self.span.end as usize).clamp(start, len);
        let mut report = Report::build(kind, (file_name, start..end))
            .with_config(Config::default().with_color(false))
            .with_message(&self.message)
            .with_label(
                Label::new((file_name, start..end))
                    .with_message(self.label.as_deref().unwrap_or(&self.message)),
            );
        for note in &self.notes {
            report = report.with_note(note);
        }
        let mut out = Vec::new();
        let written = report
            .finish()
            .write((file_name, Source::from(source)), &mut out);
        match written {
            Ok(()) => String::from_utf8_lossy(&out).into_owned(),
            Err(_) => format!("error: {}", self),
        }
    }
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.message)?;
        for note in &self.notes {
            write!(f, "\n  note: {note}")?;
        }
        Ok(())
    }
}

impl std::error::Error for Diagnostic {}
