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
//!   naturals, indices, shared arrays, pairs, vectors and functions; conversions
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
//! (an index out of bounds, an integer division by zero, a `natAsIndex` out of range,
//! a `scatter` collision, ...) are [`EvalError`]s carrying the span of the
//! expression where they happened; nothing panics on user data. Evaluation runs on a
//! thread of its own with a large stack, and its nesting depth is bounded.

mod machine;
pub mod scalar;
pub mod sem;
pub mod special;
pub mod value;

#[cfg(test)]
mod tests;

pub use machine::{Machine, MAX_DEPTH};
pub use scalar::{BinOp, Scalar};
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
    if let Some((name, v)) = nats.iter().find(|(_, v)| *v < 0) {
        return Err(EvalError::msg(format!(
            "the natural number {name} = {v} is negative"
        )));
    }
    let env = Env::with_nats(nats.iter().copied(), foreign);
    on_big_stack(move || Machine::new().eval(e, &env))
}

/// Applies a function value to value arguments.
pub fn apply(f: &Value, args: Vec<Value>) -> Result<Value, EvalError> {
    on_big_stack(move || Machine::new().apply(f, args, Span::default()))
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
    on_big_stack(move || Machine::new().apply_iter(f.clone(), args.into_iter(), Span::default()))
}
