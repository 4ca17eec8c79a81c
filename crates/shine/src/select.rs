//! Which sub-terms a location picks (`shine rewrite --select LOC`): where `s @ LOC` would
//! apply `s`, shown before an author writes `s`.
//!
//! The location is applied to a marker strategy that succeeds everywhere, leaving the term
//! as it is, and records the path and the sub-term of every place it is applied at. A
//! location that applies its strategy once (`outermost(p)`, `body`) picks one sub-term; one
//! that applies it everywhere (`allTopDown`) picks them all.

use crate::{on_big_stack, Error, Phrase, Setting, SourceFile};
use elevate::{Ctx, Strategy};
use rise::{Expr, NameGen};
use std::sync::{Arc, Mutex};

/// The name the marker strategy has in the expression `MARKER @ LOC`.
const MARKER: &str = "__selected";

/// A sub-term a location picked.
#[derive(Clone, Debug)]
pub struct Selected {
    /// Where it is: the labels of the positions taken from the root (`body.argument`),
    /// `the root` for the whole term.
    pub path: String,
    /// The sub-term.
    pub term: Expr,
}

/// The sub-terms of `term` that `location` (a traversal, as after `@` in a strategy:
/// `outermost(mapNest(2))`, `argument @ body`) picks, in the order it picks them; empty when
/// it picks none. `file` is a strategy file whose definitions the location may use.
pub fn select(
    file: &SourceFile,
    location: &str,
    term: &Expr,
    budget: u64,
) -> Result<Vec<Selected>, Error> {
    let picked: Arc<Mutex<Vec<Selected>>> = Arc::default();
    let strategy = located_marker(file, location, marker(picked.clone()))?;
    let term = term.clone();
    let outcome = on_big_stack(move || {
        let mut ctx = Ctx::new(NameGen::avoiding(&term)).with_budget(budget);
        ctx.apply(&strategy, &term).map(|_| ())
    })?;
    let picked = std::mem::take(&mut *picked.lock().map_err(|_| poisoned())?);
    match outcome {
        Ok(()) => Ok(dedup(picked)),
        Err(f) if f.is_abort() => Err(Error::from(
            Phrase::from(Setting::Selection).then(format!(" `{location}`: {f}")),
        )),
        Err(_) => Ok(Vec::new()),
    }
}

/// The strategy `MARKER @ location`, with the marker as a builtin next to the file's
/// definitions; errors in `location` are shown in it.
fn located_marker(
    file: &SourceFile,
    location: &str,
    marker: Strategy<Expr>,
) -> Result<Strategy<Expr>, Error> {
    let mut registry = rewrite::library::registry();
    registry.set_group("selection");
    registry.add(MARKER, &[], "marks where it is applied", move |_| {
        Ok(elv::Value::Strategy(marker.clone()))
    });
    let module = elv::load(&file.text, &registry).map_err(|ds| file.errors(ds))?;
    let prefix = format!("{MARKER} @ ");
    module
        .expression(&format!("{prefix}{location}"))
        .map_err(|ds| {
            let shifted = ds.into_iter().map(|d| without_prefix(d, prefix.len()));
            SourceFile::new("<location>", location).errors(shifted.collect())
        })
}

/// A diagnostic on `MARKER @ LOC` as one on `LOC`: its span moved back by the prefix's
/// length (a span in the prefix points at the start of `LOC`).
fn without_prefix(mut d: elv::Diagnostic, prefix: usize) -> elv::Diagnostic {
    let prefix = u32::try_from(prefix).unwrap_or(u32::MAX);
    d.span.start = d.span.start.saturating_sub(prefix);
    d.span.end = d.span.end.saturating_sub(prefix).max(d.span.start);
    d
}

/// A strategy that succeeds without changing the term and records where it was applied.
fn marker(picked: Arc<Mutex<Vec<Selected>>>) -> Strategy<Expr> {
    elevate::rule("selected", move |p: &Expr, ctx| {
        if let Ok(mut list) = picked.lock() {
            list.push(Selected {
                path: ctx.location().to_string(),
                term: p.clone(),
            });
        }
        Ok(p.clone())
    })
}

/// The picks without a second pick of the same place (a location that tries a place again
/// after backtracking).
fn dedup(picked: Vec<Selected>) -> Vec<Selected> {
    let mut seen = std::collections::HashSet::new();
    picked
        .into_iter()
        .filter(|s| seen.insert(s.path.clone()))
        .collect()
}

fn poisoned() -> Error {
    Error::from("internal error: the selection's record was poisoned".to_string())
}
