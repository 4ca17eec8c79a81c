//! The semantics of every primitive (ICFP'20 §3 and Fig. 4; thesis §4.3 for pad
//! and slide; RISE & Shine §VI for iterate).
//!
//! Each function here is named in the semantics column of the primitive table
//! ([`crate::primitives`]) and receives a saturated [`PrimCall`]: the explicit
//! type-level arguments (concrete), the value arguments and, on demand, the node's
//! type with every size evaluated. Low-level primitives share their high-level
//! form's function.
//!
//! Conventions where the papers are silent:
//! * `reduce`, `reduceSeq`: a left fold `f(...f(f(init, x0), x1)..., x(n-1))`, so the
//!   result is deterministic.
//! * `scanSeq f init xs`: an inclusive scan, `acc_i = f(x_i, acc_(i-1))` with
//!   `acc_(-1) = init`; the result is `[acc_0, ..., acc_(n-1)]`.
//! * pads (numpy's `np.pad` modes): `padCst` = `constant`, `padClamp` = `edge`,
//!   `padMirror` = `symmetric` (the edge element is repeated:
//!   `padMirror 2 2 [a b c d] = [b a | a b c d | d c]`), `padWrap` = `wrap`; pads
//!   wider than the array keep mirroring/wrapping periodically. Padding an empty
//!   array other than with a constant is an error.
//! * `slide sz sp xs`: window `i` is `xs[i*sp .. i*sp+sz]`.
//! * `iterate k f xs`: applies `f` `k` times; each time `l` is the current length
//!   divided by `n`.
//! * `reorder f finv xs`: element `i` of the result is `xs[f i]` (`finv` is unused).
//! * `scatter is xs`: `result[is[j]] = xs[j]`; two writes to one position, a position
//!   out of range or one never written fails every element of the result.
//! * Data-dependent errors (an integer division by zero, an index out of range, ...) are
//!   failed values ([`PrimCall::fail`], [`Value::Failed`]) unless the evaluation is strict.
//! * `asVector n`: groups `n` consecutive scalars into a vector.
//!
//! This module holds [`PrimCall`], what every function receives; the functions are in
//! `scalar_ops.rs` (arithmetic, comparisons, casts), `arrays.rs` (construction, access,
//! pairs, pads, vectors) and `patterns.rs` (binding, `map`, `reduce`, `iterate`, ...), all
//! re-exported here.

mod arrays;
mod patterns;
mod scalar_ops;
mod tensor;

pub use arrays::*;
pub use patterns::*;
pub use scalar_ops::*;
pub use tensor::*;

use super::machine::{Machine, PrimApp, TypeEnv};
use super::scalar::Scalar;
use super::value::{const_nat, Value, MAX_ARRAY_LEN};
use super::EvalError;
use crate::expr::Expr;
use crate::primitives::Prim;
use crate::span::Span;
use crate::types::{DataType, NatToNat, Type, TypeArg};
use std::sync::Arc;

/// The semantics of a primitive: computes the result of a saturated application.
pub type Semantics = fn(&mut Machine, &PrimCall) -> Result<Value, EvalError>;

/// A saturated application of a primitive.
pub struct PrimCall {
    /// The primitive.
    pub prim: Prim,
    /// The span of the application (for errors).
    pub span: Span,
    /// The explicit type-level arguments, in order, with concrete sizes.
    pub targs: Vec<TypeArg>,
    /// The value arguments, in order.
    pub args: Vec<Value>,
    node: Expr,
    tenv: TypeEnv,
    /// Whether data-dependent errors end the evaluation ([`crate::interp::ErrorMode`]).
    strict: bool,
}

type R<T> = Result<T, EvalError>;

impl PrimCall {
    pub(crate) fn new(app: PrimApp, strict: bool) -> PrimCall {
        PrimCall {
            prim: app.prim,
            span: app.span,
            targs: app.targs,
            args: app.args,
            node: app.node,
            tenv: app.tenv,
            strict,
        }
    }

    /// A data-dependent error of this application (an integer division by zero, an index
    /// out of range, ...): `Err` in strict mode, otherwise the error to put into failed
    /// values ([`Value::Failed`]).
    pub fn data_error(&self, msg: impl std::fmt::Display) -> R<Arc<EvalError>> {
        let e = self.error(msg);
        if self.strict {
            Err(e)
        } else {
            Ok(Arc::new(e))
        }
    }

    /// A failed scalar (or `natType` value, or index) for a data-dependent error; `Err`
    /// in strict mode.
    pub fn fail(&self, msg: impl std::fmt::Display) -> R<Value> {
        Ok(Value::Failed(self.data_error(msg)?))
    }

    /// A value every leaf of which fails with `err`: of the shape of `like` where there is
    /// a value of the right shape, otherwise of the type `ty` picks out of the result type.
    fn failed_value(
        &self,
        err: &Arc<EvalError>,
        like: Option<&Value>,
        ty: impl FnOnce(DataType) -> Option<DataType>,
    ) -> R<Value> {
        if let Some(v) = like {
            return Ok(Value::failed_like(v, err));
        }
        let result = self.result_type()?;
        let t = ty(result.clone())
            .ok_or_else(|| self.error(format!("unexpected result type {result}")))?;
        Value::failed_of_type(&t, err).map_err(|m| self.error(m))
    }

    /// An error of this application.
    pub fn error(&self, msg: impl std::fmt::Display) -> EvalError {
        EvalError::new(self.span, format!("`{}`: {msg}", self.prim.name()))
    }

    /// Value argument `i`.
    pub fn arg(&self, i: usize) -> R<&Value> {
        self.args
            .get(i)
            .ok_or_else(|| self.error(format!("missing argument {i}")))
    }

    /// Value argument `i`, which must be an array.
    pub fn array(&self, i: usize) -> R<&Arc<[Value]>> {
        let v = self.arg(i)?;
        v.as_array()
            .ok_or_else(|| self.error(format!("expected an array, got {}", v.describe())))
    }

    /// Value argument `i`, which must be a pair.
    pub fn pair(&self, i: usize) -> R<(&Value, &Value)> {
        let v = self.arg(i)?;
        v.as_pair()
            .ok_or_else(|| self.error(format!("expected a pair, got {}", v.describe())))
    }

    /// Value argument `i`, which must be a boolean.
    pub fn bool(&self, i: usize) -> R<bool> {
        match self.arg(i)? {
            Value::Scalar(Scalar::Bool(b)) => Ok(*b),
            v => Err(self.error(format!("expected a bool, got {}", v.describe()))),
        }
    }

    /// Explicit type-level argument `i`, which must be a natural number.
    pub fn nat(&self, i: usize) -> R<i64> {
        match self.targs.get(i) {
            Some(TypeArg::Nat(n)) => match const_nat(n) {
                Ok(v) if v >= 0 => Ok(v),
                Ok(v) => Err(self.error(format!("the natural number {n} is negative ({v})"))),
                Err(m) => Err(self.error(m)),
            },
            _ => Err(self.error(format!("missing natural-number argument {i}"))),
        }
    }

    /// Explicit type-level argument `i`, which must be a `nat -> nat` function.
    pub fn nat_to_nat(&self, i: usize) -> R<&NatToNat> {
        match self.targs.get(i) {
            Some(TypeArg::NatToNat(f)) => Ok(f),
            _ => Err(self.error(format!("missing nat -> nat argument {i}"))),
        }
    }

    /// The node's type with the explicit type-level arguments substituted and the
    /// variables of enclosing dependent lambdas replaced by their values:
    /// the types of the value parameters and of the result.
    pub fn signature(&self) -> R<(Vec<Type>, Type)> {
        let ty = self.node.ty().ok_or_else(|| {
            self.error("the primitive has no type (the interpreter needs a type-checked program)")
        })?;
        let mut t = self.tenv.subst(ty);
        let mut params = Vec::new();
        let mut targs = self.targs.iter();
        loop {
            match t {
                Type::DepFun {
                    binder,
                    implicit: false,
                    body,
                } => {
                    let a = targs.next().ok_or_else(|| {
                        self.error("its type has more explicit parameters than arguments")
                    })?;
                    t = body.instantiate(&binder, a);
                }
                Type::DepFun { body, .. } => t = (*body).clone(),
                Type::Fun(a, b) if params.len() < self.args.len() => {
                    params.push((*a).clone());
                    t = (*b).clone();
                }
                other => return Ok((params, other)),
            }
        }
    }

    /// The data type of the result (from the node's type).
    pub fn result_type(&self) -> R<DataType> {
        match self.signature()?.1 {
            Type::Data(d) => Ok(d),
            other => Err(self.error(format!("its result type {other} is not a data type"))),
        }
    }

    /// The outermost size of the result type (`n` of `n.t` or `vec[t, n]`).
    fn result_len(&self) -> R<i64> {
        match self.result_type()? {
            DataType::Array(n, _) | DataType::Vector(n, _) => {
                let n = const_nat(&n).map_err(|m| self.error(m))?;
                self.check_len(n)
            }
            other => Err(self.error(format!("its result type {other} is not an array"))),
        }
    }

    fn check_len(&self, n: i64) -> R<i64> {
        if !(0..=MAX_ARRAY_LEN).contains(&n) {
            return Err(self.error(format!(
                "an array of {n} elements is beyond what the interpreter builds (at most {MAX_ARRAY_LEN})"
            )));
        }
        Ok(n)
    }

    /// The position an index value denotes in an array of `len` elements: `Ok(Ok(i))`;
    /// `Ok(Err(e))` for a failed index or one out of range (a data-dependent error, `Err`
    /// in strict mode); `Err` for a value that is no index.
    fn index(&self, v: &Value, len: usize) -> R<Result<usize, Arc<EvalError>>> {
        match v {
            Value::Index { index, .. } if *index >= 0 && (*index as u64) < len as u64 => {
                Ok(Ok(*index as usize))
            }
            Value::Index { index, .. } => Ok(Err(self.data_error(format!(
                "index {index} out of bounds for an array of {len} elements"
            ))?)),
            Value::Failed(e) => Ok(Err(e.clone())),
            other => Err(self.error(format!("expected an index, got {}", other.describe()))),
        }
    }
}

/// The element type of an array type.
fn elem_type(t: DataType) -> Option<DataType> {
    match t {
        DataType::Array(_, e) => Some((*e).clone()),
        _ => None,
    }
}
