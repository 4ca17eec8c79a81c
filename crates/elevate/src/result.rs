//! The outcome of applying a strategy (ICFP'20 §4.2): success with the new
//! program, or a failure that names the strategy that failed and where.

use crate::{Program, Strategy};
use std::fmt;
use std::sync::Arc;

/// Where in the program a strategy was applied: the labels of the sub-program
/// positions taken from the root (`body.argument.function`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Location(pub Vec<&'static str>);

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0.is_empty() {
            write!(f, "the root")
        } else {
            write!(f, "{}", self.0.join("."))
        }
    }
}

/// Why a strategy did not produce a program.
#[derive(Clone)]
pub enum Failure<P: Program> {
    /// The strategy does not apply here (an ordinary outcome: `<+` tries the next one).
    NotApplicable {
        /// The strategy that failed; `None` until the engine fills it in.
        strategy: Option<Strategy<P>>,
        /// Where it was applied (recorded only when locations are tracked).
        location: Option<Location>,
        /// The innermost step that failed, the term it failed on and the rules it was
        /// applied inside ([`crate::Ctx::run`] records it with the locations).
        explanation: Option<Arc<Explanation<P>>>,
    },
    /// Rewriting stopped: the step budget ran out, or a rule met an internal
    /// inconsistency. No combinator recovers from this.
    Aborted(String),
}

/// Success with the rewritten program, or a [`Failure`].
pub type RewriteResult<P> = Result<P, Failure<P>>;

impl<P: Program> Failure<P> {
    /// The failure a rule returns when it does not match (the engine records
    /// which strategy failed and where).
    pub fn not_applicable() -> Failure<P> {
        Failure::NotApplicable {
            strategy: None,
            location: None,
            explanation: None,
        }
    }

    /// The failure of a rule that does not apply here for a reason worth telling (an
    /// operator the rule cannot reassociate, say): an ordinary failure (`<+` tries the next
    /// strategy), and the reason appears in the explanation when nothing else applies.
    pub fn not_applicable_because(reason: impl Into<String>) -> Failure<P> {
        Failure::NotApplicable {
            strategy: None,
            location: None,
            explanation: Some(Arc::new(Explanation {
                within: Vec::new(),
                step: String::new(),
                term: None,
                reason: Some(reason.into()),
            })),
        }
    }

    /// The innermost step that failed and the term it failed on, if recorded.
    pub fn explanation(&self) -> Option<&Explanation<P>> {
        match self {
            Failure::NotApplicable { explanation, .. } => explanation.as_deref(),
            Failure::Aborted(_) => None,
        }
    }

    /// Whether rewriting was aborted rather than a strategy not applying.
    pub fn is_abort(&self) -> bool {
        matches!(self, Failure::Aborted(_))
    }

    /// The strategy that failed, if recorded.
    pub fn strategy(&self) -> Option<&Strategy<P>> {
        match self {
            Failure::NotApplicable { strategy, .. } => strategy.as_ref(),
            Failure::Aborted(_) => None,
        }
    }

    /// Where it failed, if recorded.
    pub fn location(&self) -> Option<&Location> {
        match self {
            Failure::NotApplicable { location, .. } => location.as_ref(),
            Failure::Aborted(_) => None,
        }
    }
}

impl<P: Program> fmt::Display for Failure<P> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Failure::Aborted(message) => write!(f, "{message}"),
            Failure::NotApplicable {
                strategy, location, ..
            } => {
                match strategy {
                    Some(s) => write!(f, "`{}` is not applicable", s.short())?,
                    None => write!(f, "a strategy is not applicable")?,
                }
                if let Some(l) = location {
                    write!(f, " at {l}")?;
                }
                Ok(())
            }
        }
    }
}

impl<P: Program> fmt::Debug for Failure<P> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

impl<P: Program> PartialEq for Failure<P> {
    fn eq(&self, other: &Self) -> bool {
        match (self, other) {
            (Failure::Aborted(a), Failure::Aborted(b)) => a == b,
            (
                Failure::NotApplicable {
                    strategy: s,
                    location: l,
                    ..
                },
                Failure::NotApplicable {
                    strategy: t,
                    location: m,
                    ..
                },
            ) => s == t && l == m,
            _ => false,
        }
    }
}

/// Why a strategy failed, beyond which strategy and where: the innermost step that failed,
/// the term it failed on, and the rules that applied it (a rule such as `storeInMemory(what,
/// how)` applies strategies itself and fails when they do).
#[derive(Clone)]
pub struct Explanation<P: Program> {
    /// The rules being applied when the step failed, outermost first, each with where it
    /// was applied.
    pub within: Vec<(String, Location)>,
    /// The innermost step that failed, as it prints ([`Strategy::short`]).
    pub step: String,
    /// The term it failed on, when known.
    pub term: Option<P>,
    /// Why it does not apply there, when the rule says ([`Failure::not_applicable_because`]).
    pub reason: Option<String>,
}

/// The most characters of a term an explanation shows.
const TERM_CHARS: usize = 160;

impl<P: Program> Explanation<P> {
    /// One line: "while applying `A` at L, `B` at M: `step` is not applicable to `term`".
    pub fn render(&self) -> String {
        let mut out = String::new();
        if !self.within.is_empty() {
            let rules: Vec<String> = self
                .within
                .iter()
                .map(|(rule, at)| format!("`{rule}` at {at}"))
                .collect();
            out.push_str(&format!("while applying {}: ", rules.join(", then ")));
        }
        out.push_str(&format!("`{}` is not applicable", self.step));
        if let Some(term) = &self.term {
            out.push_str(&format!(" to `{}`", abbreviated(&term.to_string())));
        }
        if let Some(reason) = &self.reason {
            out.push_str(&format!(": {reason}"));
        }
        out
    }
}

/// `text` on one line, cut at [`TERM_CHARS`] characters.
pub(crate) fn abbreviated(text: &str) -> String {
    let line = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if line.chars().count() <= TERM_CHARS {
        return line;
    }
    let cut: String = line.chars().take(TERM_CHARS).collect();
    format!("{cut} …")
}
