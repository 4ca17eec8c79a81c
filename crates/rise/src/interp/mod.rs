//! The reference interpreter of RISE: the meaning of every well-typed closed
//! program, high- and low-level alike.
//!
//! The semantics follows the primitives of ICFP'20 §3 (Fig. 4), the stencil
//! primitives `pad`/`slide` of the thesis (§4.3.2) and `iterate` of RISE & Shine
//! (§VI). Low-level primitives (`mapSeq`, `mapGlobal(0)`, `reduceSeq`, ...) mean what
//! their high-level form means: they only record implementation decisions, which is
//! why the interpreter can check every rewritten program against the original.
//!
//! * [`Value`] ([`value`]): scalars held exactly in their type ([`Scalar`]), run-time
//!   naturals, indices, shared arrays, pairs, vectors, functions and failed values; conversions
//!   to and from flat row-major buffers ([`Value::from_flat`], [`Value::to_flat`]),
//!   checking against a data type ([`Value::check`]), [`Value::approx_eq`].
//! * [`eval`] evaluates a closed, typed expression; [`apply`] applies a function
//!   value to arguments.
//! * [`sem`]: one function per primitive, named by the primitive table
//!   ([`crate::primitives`], `Prim::semantics`).
//! * [`special`]: the math functions Rust's standard library lacks (`erf`, `erfc`)
//!   or computes inaccurately (`asinh`, `acosh`, `atanh`), in double precision.
//!
//! The interpreter reads the types of primitive nodes (for sizes it cannot see in
//! the values, such as `n` of `generate`) and evaluates the sizes in them under the
//! natural numbers bound by enclosing dependent lambdas. Errors in user programs
//! are [`EvalError`]s carrying the span of the expression where they happened;
//! nothing panics on user data. Evaluation runs on a thread of its own with a large
//! stack, and its nesting depth is bounded.
//!
//! **A data-dependent error is an error of the program only when the program's result
//! depends on the failed value.** Such errors (an integer division or remainder by zero,
//! a float-to-integer `cast` out of range, a `natType` computation leaving the naturals,
//! `natAsIndex`, a run-time `idx` or `gather` index out of range, a `scatter` whose
//! positions repeat, fall outside or leave one unwritten) make failed values
//! ([`Value::Failed`]) instead of ending the evaluation: an operation that reads a failed
//! scalar, `natType` value or index fails with it, data-layout primitives move failed
//! elements like any other, and a value that is discarded (by `take`, `drop`, the other
//! branch of `select`, `fst`, an element `gather` never reads, ...) takes its error with it.
//! A failed `scatter` fails every element of its result. The public entry points
//! ([`eval`], [`apply`], ...) answer the error of the first failed value of the result in
//! row-major order ([`Value::into_result`]), with the message and span it had where it
//! happened. This is what generated code does: it computes only what the result needs.
//! [`ErrorMode::Strict`] raises such errors where they happen instead (the semantics
//! before; [`eval_with_mode`], [`apply_with_mode`]). Errors that do not depend on data stay
//! errors wherever they happen: sizes (a `split` that does not divide, a constraint),
//! values of the wrong shape and foreign functions that fail (the evaluator of foreign
//! functions crashes, hangs or answers nonsense).

pub mod halfs;
mod machine;
pub mod scalar;
pub mod sem;
pub mod special;
pub mod value;

#[cfg(test)]
mod tests;

pub use machine::{Machine, MAX_DEPTH};
pub use scalar::{BinOp, BitOp, Scalar};
pub use sem::{PrimCall, Semantics};
pub use value::{flat_layout, Flat, Function, Value, MAX_ARRAY_LEN};

use crate::expr::Expr;
use crate::foreign::ForeignEvaluator;
use crate::span::{Diagnostic, Span};
use crate::types::TypeArg;
use machine::{ArgValue, Env};
use std::fmt;
use std::sync::Arc;

/// An error during evaluation: a message and the span of the expression where it
/// happened (`Span::default()` when it concerns no expression).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EvalError {
    /// What went wrong.
    pub message: String,
    /// Where.
    pub span: Span,
    /// Further explanations.
    pub notes: Vec<String>,
}

impl EvalError {
    /// An error at a span.
    pub fn new(span: Span, message: impl Into<String>) -> EvalError {
        EvalError {
            message: message.into(),
            span,
            notes: Vec::new(),
        }
    }

    /// An error that concerns no expression (e.g. about an input value).
    pub fn msg(message: impl Into<String>) -> EvalError {
        EvalError::new(Span::default(), message)
    }

    /// Adds a note.
    pub fn with_note(mut self, note: impl Into<String>) -> EvalError {
        self.notes.push(note.into());
        self
    }
}

impl fmt::Display for EvalError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.message)?;
        for n in &self.notes {
            write!(f, "\n  note: {n}")?;
        }
        Ok(())
    }
}

impl std::error::Error for EvalError {}

impl From<EvalError> for Diagnostic {
    fn from(e: EvalError) -> Diagnostic {
        let mut d = Diagnostic::new(e.span, format!("evaluation failed: {}", e.message));
        d.notes = e.notes;
        d
    }
}

/// How the interpreter treats data-dependent errors (an integer division by zero, an
/// index out of range, a `scatter` collision, ...).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ErrorMode {
    /// They make failed values ([`Value::Failed`]), errors of the program only when its
    /// result contains one (the semantics of RISE: what generated code computes).
    #[default]
    Poison,
    /// They end the evaluation where they happen, whether or not the result needs the
    /// failed value: for finding where a program first computes one.
    Strict,
}

/// Runs `f` on a thread with a large stack, so that deeply nested programs hit the
/// depth limit ([`MAX_DEPTH`]) rather than the end of the stack.
fn on_big_stack<T: Send>(f: impl FnOnce() -> Result<T, EvalError> + Send) -> Result<T, EvalError> {
    crate::stack::on_big_stack("the interpreter", f, EvalError::msg)
}

/// Evaluates a closed, type-checked expression.
pub fn eval(e: &Expr) -> Result<Value, EvalError> {
    eval_with_nats(e, &[])
}

/// Evaluates a type-checked expression whose types may mention the given natural
/// number variables (e.g. the implicit size parameters of a definition, set on the
/// command line).
pub fn eval_with_nats(e: &Expr, nats: &[(&str, i64)]) -> Result<Value, EvalError> {
    eval_with_foreign(e, nats, None)
}

/// [`eval_with_nats`] with an evaluator of foreign functions
/// ([`crate::foreign::ForeignEvaluator`]): the function values it makes (closures, foreign
/// functions) keep it, so that [`apply`] runs their foreign calls with it too.
pub fn eval_with_foreign(
    e: &Expr,
    nats: &[(&str, i64)],
    foreign: Option<Arc<dyn ForeignEvaluator>>,
) -> Result<Value, EvalError> {
    eval_with_mode(e, nats, foreign, ErrorMode::Poison)
}

/// [`eval_with_foreign`] treating data-dependent errors as `mode` says (a function
/// value it returns keeps no mode: [`apply_with_mode`] gives one to its application).
pub fn eval_with_mode(
    e: &Expr,
    nats: &[(&str, i64)],
    foreign: Option<Arc<dyn ForeignEvaluator>>,
    mode: ErrorMode,
) -> Result<Value, EvalError> {
    if let Some((name, v)) = nats.iter().find(|(_, v)| *v < 0) {
        return Err(EvalError::msg(format!(
            "the natural number {name} = {v} is negative"
        )));
    }
    let env = Env::with_nats(nats.iter().copied(), foreign);
    on_big_stack(move || Machine::with_mode(mode).eval(e, &env)?.into_result())
}

/// Applies a function value to value arguments.
pub fn apply(f: &Value, args: Vec<Value>) -> Result<Value, EvalError> {
    apply_with_mode(f, args, ErrorMode::Poison)
}

/// [`apply`] treating data-dependent errors as `mode` says.
pub fn apply_with_mode(f: &Value, args: Vec<Value>, mode: ErrorMode) -> Result<Value, EvalError> {
    on_big_stack(move || {
        Machine::with_mode(mode)
            .apply(f, args, Span::default())?
            .into_result()
    })
}

/// An argument of [`apply_args`]: a value or a concrete type-level value.
#[derive(Clone, Debug)]
pub enum Argument {
    /// A value argument.
    Value(Value),
    /// A type-level argument with concrete sizes (e.g. `TypeArg::Nat(Nat::cst(32))`).
    Type(TypeArg),
}

/// Applies a function value to value and type-level arguments, in order (for
/// functions with explicit dependent parameters, `(n: nat) -> ...`).
pub fn apply_args(f: &Value, args: Vec<Argument>) -> Result<Value, EvalError> {
    let tenv = machine::TypeEnv::default();
    let args = args
        .into_iter()
        .map(|a| match a {
            Argument::Value(v) => Ok(ArgValue::Value(v)),
            Argument::Type(t) => tenv
                .concretize(&t)
                .map(ArgValue::Type)
                .map_err(EvalError::msg),
        })
        .collect::<Result<Vec<_>, _>>()?;
    on_big_stack(move || {
        Machine::new()
            .apply_iter(f.clone(), args.into_iter(), Span::default())?
            .into_result()
    })
}
