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
//! * `scatter is xs`: `result[is[j]] = xs[j]`; two writes to one position, or a
//!   position never written, is an error.
//! * `asVector n`: groups `n` consecutive scalars into a vector.

use super::machine::{apply_nat_to_nat, Machine, PrimApp, TypeEnv};
use super::scalar::{BinOp, Scalar};
use super::value::{const_nat, Value, MAX_ARRAY_LEN};
use super::EvalError;
use crate::expr::Expr;
use crate::primitives::Prim;
use crate::span::Span;
use crate::types::{DataType, NatToNat, Type, TypeArg};
use std::cmp::Ordering;
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
}

type R<T> = Result<T, EvalError>;

impl PrimCall {
    pub(crate) fn new(app: PrimApp) -> PrimCall {
        PrimCall {
            prim: app.prim,
            span: app.span,
            targs: app.targs,
            args: app.args,
            node: app.node,
            tenv: app.tenv,
        }
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

    fn index(&self, v: &Value, len: usize) -> R<usize> {
        match v {
            Value::Index { index, .. } if *index >= 0 && (*index as u64) < len as u64 => {
                Ok(*index as usize)
            }
            Value::Index { index, .. } => Err(self.error(format!(
                "index {index} out of bounds for an array of {len} elements"
            ))),
            other => Err(self.error(format!("expected an index, got {}", other.describe()))),
        }
    }
}

fn collect(m: &mut Machine, c: &PrimCall, f: &Value, xs: &[Value]) -> R<Vec<Value>> {
    let mut out = Vec::with_capacity(xs.len());
    for x in xs {
        out.push(m.apply1(f, x.clone(), c.span)?);
    }
    Ok(out)
}

// ---- scalar operations ---------------------------------------------------------

/// `id x = x`.
pub fn id(_: &mut Machine, c: &PrimCall) -> R<Value> {
    c.arg(0).cloned()
}

/// `neg x`, lane-wise on vectors.
pub fn neg(_: &mut Machine, c: &PrimCall) -> R<Value> {
    fn go(c: &PrimCall, v: &Value) -> R<Value> {
        match v {
            Value::Scalar(s) => s.negate().map(Value::Scalar).map_err(|m| c.error(m)),
            Value::Vector(xs) => Ok(Value::Vector(
                xs.iter().map(|x| go(c, x)).collect::<R<Vec<_>>>()?.into(),
            )),
            other => Err(c.error(format!("not defined on {}", other.describe()))),
        }
    }
    go(c, c.arg(0)?)
}

fn arith(c: &PrimCall, op: BinOp, a: &Value, b: &Value) -> R<Value> {
    match (a, b) {
        (Value::Scalar(x), Value::Scalar(y)) => {
            x.binary(op, *y).map(Value::Scalar).map_err(|m| c.error(m))
        }
        (Value::Vector(xs), Value::Vector(ys)) if xs.len() == ys.len() => Ok(Value::Vector(
            xs.iter()
                .zip(ys.iter())
                .map(|(x, y)| arith(c, op, x, y))
                .collect::<R<Vec<_>>>()?
                .into(),
        )),
        (Value::Nat(x), Value::Nat(y)) => {
            let r = match op {
                BinOp::Add => x.checked_add(*y),
                BinOp::Sub => x.checked_sub(*y).filter(|r| *r >= 0),
                BinOp::Mul => x.checked_mul(*y),
                BinOp::Div => x.checked_div(*y),
                BinOp::Mod => x.checked_rem(*y),
            };
            r.map(Value::Nat)
                .ok_or_else(|| c.error(format!("{x} {} {y} is not a natural number", op.name())))
        }
        (a, b) => Err(c.error(format!(
            "not defined on {} and {}",
            a.describe(),
            b.describe()
        ))),
    }
}

fn binary(c: &PrimCall, op: BinOp) -> R<Value> {
    arith(c, op, c.arg(0)?, c.arg(1)?)
}

/// `add x y` (`+`), lane-wise on vectors.
pub fn add(_: &mut Machine, c: &PrimCall) -> R<Value> {
    binary(c, BinOp::Add)
}
/// `sub x y` (`-`), lane-wise on vectors.
pub fn sub(_: &mut Machine, c: &PrimCall) -> R<Value> {
    binary(c, BinOp::Sub)
}
/// `mul x y` (`*`), lane-wise on vectors.
pub fn mul(_: &mut Machine, c: &PrimCall) -> R<Value> {
    binary(c, BinOp::Mul)
}
/// `div x y` (`/`), lane-wise on vectors; integer division truncates; dividing an
/// integer by zero is an error.
pub fn div(_: &mut Machine, c: &PrimCall) -> R<Value> {
    binary(c, BinOp::Div)
}
/// `mod x y` (`%`): C's `%` on integers, `fmod` on floats.
pub fn modulo(_: &mut Machine, c: &PrimCall) -> R<Value> {
    binary(c, BinOp::Mod)
}

/// `select cond a b`.
pub fn select(_: &mut Machine, c: &PrimCall) -> R<Value> {
    Ok(if c.bool(0)? {
        c.arg(1)?.clone()
    } else {
        c.arg(2)?.clone()
    })
}

/// `not b`.
pub fn not(_: &mut Machine, c: &PrimCall) -> R<Value> {
    Ok(Value::bool(!c.bool(0)?))
}

fn compare(c: &PrimCall) -> R<Option<Ordering>> {
    match (c.arg(0)?, c.arg(1)?) {
        (Value::Scalar(x), Value::Scalar(y)) => x.compare(*y).map_err(|m| c.error(m)),
        (Value::Nat(x), Value::Nat(y)) => Ok(Some(x.cmp(y))),
        (Value::Index { index: x, .. }, Value::Index { index: y, .. }) => Ok(Some(x.cmp(y))),
        (a, b) => Err(c.error(format!(
            "cannot compare {} and {}",
            a.describe(),
            b.describe()
        ))),
    }
}

/// `gt x y` (`>`); false when a NaN is involved.
pub fn gt(_: &mut Machine, c: &PrimCall) -> R<Value> {
    Ok(Value::bool(compare(c)? == Some(Ordering::Greater)))
}

/// `lt x y` (`<`); false when a NaN is involved.
pub fn lt(_: &mut Machine, c: &PrimCall) -> R<Value> {
    Ok(Value::bool(compare(c)? == Some(Ordering::Less)))
}

/// `equal x y` (`==`): IEEE equality on floats, structural on arrays, pairs, vectors.
pub fn equal(_: &mut Machine, c: &PrimCall) -> R<Value> {
    let (a, b) = (c.arg(0)?, c.arg(1)?);
    a.data_eq(b)
        .map(Value::bool)
        .ok_or_else(|| c.error("functions cannot be compared"))
}

/// `cast x`: C conversion to the scalar type of the result (lane-wise on vectors;
/// `natType` and indices convert like 64-bit integers; integers convert to `natType`
/// when non-negative).
pub fn cast(_: &mut Machine, c: &PrimCall) -> R<Value> {
    fn go(c: &PrimCall, v: &Value, to: &DataType) -> R<Value> {
        let as_scalar = |v: &Value| match v {
            Value::Scalar(s) => Some(*s),
            Value::Nat(n) | Value::Index { index: n, .. } => Some(Scalar::I64(*n)),
            _ => None,
        };
        match (v, to) {
            (Value::Vector(xs), DataType::Vector(_, t)) => Ok(Value::Vector(
                xs.iter()
                    .map(|x| go(c, x, t))
                    .collect::<R<Vec<_>>>()?
                    .into(),
            )),
            (v, DataType::Scalar(t)) => match as_scalar(v) {
                Some(s) => s.cast(*t).map(Value::Scalar).map_err(|m| c.error(m)),
                None => Err(c.error(format!("cannot cast {} to {}", v.describe(), t.name()))),
            },
            (v, DataType::NatType) => match as_scalar(v).and_then(|s| s.as_i128()) {
                Some(n) if (0..=i64::MAX as i128).contains(&n) => Ok(Value::Nat(n as i64)),
                _ => Err(c.error(format!("cannot cast {v} to natType"))),
            },
            (v, t) => Err(c.error(format!("cannot cast {} to {t}", v.describe()))),
        }
    }
    let to = c.result_type()?;
    go(c, c.arg(0)?, &to)
}

/// `indexAsNat i`.
pub fn index_as_nat(_: &mut Machine, c: &PrimCall) -> R<Value> {
    match c.arg(0)? {
        Value::Index { index, .. } => Ok(Value::Nat(*index)),
        v => Err(c.error(format!("expected an index, got {}", v.describe()))),
    }
}

/// `natAsIndex n x`: the index `x` into `n` elements; an error unless `x < n`.
pub fn nat_as_index(_: &mut Machine, c: &PrimCall) -> R<Value> {
    let n = c.nat(0)?;
    match c.arg(0)? {
        Value::Nat(x) if (0..n).contains(x) => Ok(Value::Index {
            index: *x,
            bound: n,
        }),
        Value::Nat(x) => Err(c.error(format!("{x} is not an index into {n} elements"))),
        v => Err(c.error(format!("expected a natType value, got {}", v.describe()))),
    }
}

// ---- binding and memory -----------------------------------------------------------

/// `let v f = f v`.
pub fn let_(m: &mut Machine, c: &PrimCall) -> R<Value> {
    m.apply1(c.arg(1)?, c.arg(0)?.clone(), c.span)
}

/// `toMem a v f = f v` (memory is not observable in the interpreter).
pub fn to_mem(m: &mut Machine, c: &PrimCall) -> R<Value> {
    m.apply1(c.arg(1)?, c.arg(0)?.clone(), c.span)
}

// ---- array construction and access -------------------------------------------------

/// `generate f = [f 0, ..., f (n-1)]`, `n` from the result type.
pub fn generate(m: &mut Machine, c: &PrimCall) -> R<Value> {
    let n = c.result_len()?;
    let f = c.arg(0)?;
    let mut out = Vec::with_capacity(n.min(1 << 16) as usize);
    for i in 0..n {
        out.push(m.apply1(f, Value::Index { index: i, bound: n }, c.span)?);
    }
    Ok(Value::array(out))
}

/// `idx i xs = xs[i]`.
pub fn idx(_: &mut Machine, c: &PrimCall) -> R<Value> {
    let xs = c.array(1)?;
    let i = c.index(c.arg(0)?, xs.len())?;
    Ok(xs[i].clone())
}

fn prefix_len(c: &PrimCall, xs: &[Value]) -> R<usize> {
    let n = c.nat(0)?;
    if n as u64 > xs.len() as u64 {
        return Err(c.error(format!(
            "{n} elements requested from an array of {}",
            xs.len()
        )));
    }
    Ok(n as usize)
}

/// `take n xs`: the first `n` elements.
pub fn take(_: &mut Machine, c: &PrimCall) -> R<Value> {
    let xs = c.array(0)?;
    let n = prefix_len(c, xs)?;
    Ok(Value::Array(xs[..n].into()))
}

/// `drop n xs`: all but the first `n` elements.
pub fn drop(_: &mut Machine, c: &PrimCall) -> R<Value> {
    let xs = c.array(0)?;
    let n = prefix_len(c, xs)?;
    Ok(Value::Array(xs[n..].into()))
}

/// `concat xs ys`.
pub fn concat(_: &mut Machine, c: &PrimCall) -> R<Value> {
    let (xs, ys) = (c.array(0)?, c.array(1)?);
    Ok(Value::Array(xs.iter().chain(ys.iter()).cloned().collect()))
}

/// Chunks of `n` (arrays or vectors); `n = 0` takes the number of chunks from the type.
fn chunks(c: &PrimCall, n: i64, xs: &[Value], vector: bool) -> R<Value> {
    let wrap = |v: &[Value]| {
        if vector {
            Value::Vector(v.into())
        } else {
            Value::Array(v.into())
        }
    };
    if n == 0 {
        if !xs.is_empty() {
            return Err(c.error(format!(
                "cannot split {} elements into chunks of 0",
                xs.len()
            )));
        }
        let m = c.result_len()?;
        return Ok(Value::array((0..m).map(|_| wrap(&[])).collect()));
    }
    let n = n as usize;
    if !xs.len().is_multiple_of(n) {
        return Err(c.error(format!(
            "{} elements cannot be split into chunks of {n}",
            xs.len()
        )));
    }
    Ok(Value::array(xs.chunks(n).map(wrap).collect()))
}

/// `split n xs`: chunks of `n` consecutive elements.
pub fn split(_: &mut Machine, c: &PrimCall) -> R<Value> {
    chunks(c, c.nat(0)?, c.array(0)?, false)
}

/// `join xss`: the concatenation of the rows.
pub fn join(_: &mut Machine, c: &PrimCall) -> R<Value> {
    let xss = c.array(0)?;
    let mut out = Vec::new();
    for row in xss.iter() {
        match row {
            Value::Array(r) => out.extend(r.iter().cloned()),
            v => {
                return Err(c.error(format!(
                    "expected an array of arrays, found {}",
                    v.describe()
                )))
            }
        }
    }
    Ok(Value::array(out))
}

/// `slide sz sp xs`: the windows `xs[i*sp .. i*sp+sz]`.
pub fn slide(_: &mut Machine, c: &PrimCall) -> R<Value> {
    let (sz, sp) = (c.nat(0)?, c.nat(1)?);
    let xs = c.array(0)?;
    let len = xs.len() as i64;
    let windows = if sp == 0 {
        c.result_len()?
    } else if len < sz || (len - sz) % sp != 0 {
        return Err(c.error(format!(
            "{len} elements cannot be covered by windows of {sz} every {sp} elements"
        )));
    } else {
        (len - sz) / sp + 1
    };
    if sp == 0 && len < sz {
        return Err(c.error(format!("window of {sz} larger than the array of {len}")));
    }
    let (sz, sp) = (sz as usize, sp as usize);
    Ok(Value::array(
        (0..windows as usize)
            .map(|i| Value::Array(xs[i * sp..i * sp + sz].into()))
            .collect(),
    ))
}

/// `transpose xss`: swaps the outer two dimensions.
pub fn transpose(_: &mut Machine, c: &PrimCall) -> R<Value> {
    let xss = c.array(0)?;
    let rows: Vec<&Arc<[Value]>> = xss
        .iter()
        .map(|r| {
            r.as_array().ok_or_else(|| {
                c.error(format!(
                    "expected an array of arrays, found {}",
                    r.describe()
                ))
            })
        })
        .collect::<R<_>>()?;
    let m = match rows.first() {
        Some(r) => r.len(),
        None => c.result_len()? as usize,
    };
    if let Some(r) = rows.iter().find(|r| r.len() != m) {
        return Err(c.error(format!("rows of different lengths ({m} and {})", r.len())));
    }
    Ok(Value::array(
        (0..m)
            .map(|j| Value::array(rows.iter().map(|r| r[j].clone()).collect()))
            .collect(),
    ))
}

/// `zip xs ys`: pairs of elements at the same position.
pub fn zip(_: &mut Machine, c: &PrimCall) -> R<Value> {
    let (xs, ys) = (c.array(0)?, c.array(1)?);
    if xs.len() != ys.len() {
        return Err(c.error(format!(
            "arrays of different lengths ({} and {})",
            xs.len(),
            ys.len()
        )));
    }
    Ok(Value::array(
        xs.iter()
            .zip(ys.iter())
            .map(|(x, y)| Value::pair(x.clone(), y.clone()))
            .collect(),
    ))
}

/// `unzip ps`: a pair of arrays.
pub fn unzip(_: &mut Machine, c: &PrimCall) -> R<Value> {
    let ps = c.array(0)?;
    let mut a = Vec::with_capacity(ps.len());
    let mut b = Vec::with_capacity(ps.len());
    for p in ps.iter() {
        let (x, y) = p.as_pair().ok_or_else(|| {
            c.error(format!(
                "expected an array of pairs, found {}",
                p.describe()
            ))
        })?;
        a.push(x.clone());
        b.push(y.clone());
    }
    Ok(Value::pair(Value::array(a), Value::array(b)))
}

/// `makePair a b`.
pub fn make_pair(_: &mut Machine, c: &PrimCall) -> R<Value> {
    Ok(Value::pair(c.arg(0)?.clone(), c.arg(1)?.clone()))
}

/// `fst p`.
pub fn fst(_: &mut Machine, c: &PrimCall) -> R<Value> {
    Ok(c.pair(0)?.0.clone())
}

/// `snd p`.
pub fn snd(_: &mut Machine, c: &PrimCall) -> R<Value> {
    Ok(c.pair(0)?.1.clone())
}

/// `mapFst f (a, b) = (f a, b)`.
pub fn map_fst(m: &mut Machine, c: &PrimCall) -> R<Value> {
    let (a, b) = c.pair(1)?;
    Ok(Value::pair(
        m.apply1(c.arg(0)?, a.clone(), c.span)?,
        b.clone(),
    ))
}

/// `mapSnd f (a, b) = (a, f b)`.
pub fn map_snd(m: &mut Machine, c: &PrimCall) -> R<Value> {
    let (a, b) = c.pair(1)?;
    Ok(Value::pair(
        a.clone(),
        m.apply1(c.arg(0)?, b.clone(), c.span)?,
    ))
}

/// Pads by an index function from `-l .. n+r` into `0 .. n`.
fn pad_by(c: &PrimCall, xs: &[Value], reindex: fn(i64, i64) -> i64) -> R<Value> {
    let (l, r) = (c.nat(0)?, c.nat(1)?);
    let n = xs.len() as i64;
    if n == 0 && l + r > 0 {
        return Err(c.error("cannot pad an empty array with its own elements"));
    }
    c.check_len(l.saturating_add(n).saturating_add(r))?;
    Ok(Value::array(
        (-l..n + r)
            .map(|i| xs[reindex(i, n) as usize].clone())
            .collect(),
    ))
}

/// `padCst l r x xs`: `l` copies of `x`, `xs`, `r` copies of `x`.
pub fn pad_cst(_: &mut Machine, c: &PrimCall) -> R<Value> {
    let (l, r) = (c.nat(0)?, c.nat(1)?);
    let x = c.arg(0)?;
    let xs = c.array(1)?;
    c.check_len(l.saturating_add(xs.len() as i64).saturating_add(r))?;
    let mut out = Vec::with_capacity((l + r) as usize + xs.len());
    out.extend((0..l).map(|_| x.clone()));
    out.extend(xs.iter().cloned());
    out.extend((0..r).map(|_| x.clone()));
    Ok(Value::array(out))
}

/// `padClamp l r xs`: repeats the boundary elements (numpy `edge`).
pub fn pad_clamp(_: &mut Machine, c: &PrimCall) -> R<Value> {
    pad_by(c, c.array(0)?, |i, n| i.clamp(0, n - 1))
}

/// `padMirror l r xs`: mirrors at the boundary, repeating the edge element
/// (numpy `symmetric`): `padMirror 2 2 [a b c d] = [b a | a b c d | d c]`.
pub fn pad_mirror(_: &mut Machine, c: &PrimCall) -> R<Value> {
    pad_by(c, c.array(0)?, |i, n| {
        let j = i.rem_euclid(2 * n);
        if j < n {
            j
        } else {
            2 * n - 1 - j
        }
    })
}

/// `padWrap l r xs`: wraps around (numpy `wrap`): `padWrap 2 2 [a b c] = [b c | a b c | a b]`.
pub fn pad_wrap(_: &mut Machine, c: &PrimCall) -> R<Value> {
    pad_by(c, c.array(0)?, |i, n| i.rem_euclid(n))
}

// ---- patterns ----------------------------------------------------------------------

/// `map f xs = [f x0, ..., f x(n-1)]` (every map variant).
pub fn map(m: &mut Machine, c: &PrimCall) -> R<Value> {
    let xs = c.array(1)?;
    Ok(Value::array(collect(m, c, c.arg(0)?, xs)?))
}

/// `mapVec f v`: `f` on every lane.
pub fn map_vec(m: &mut Machine, c: &PrimCall) -> R<Value> {
    let v = c.arg(1)?;
    let lanes = v
        .as_vector()
        .ok_or_else(|| c.error(format!("expected a vector, got {}", v.describe())))?;
    Ok(Value::Vector(collect(m, c, c.arg(0)?, lanes)?.into()))
}

/// `reduce f init xs` (and `reduceSeq`, `reduceSeqUnroll`): the left fold
/// `f(...f(f(init, x0), x1)..., x(n-1))`.
pub fn reduce(m: &mut Machine, c: &PrimCall) -> R<Value> {
    let f = c.arg(0)?;
    let mut acc = c.arg(1)?.clone();
    for x in c.array(2)?.iter() {
        acc = m.apply2(f, acc, x.clone(), c.span)?;
    }
    Ok(acc)
}

/// `scanSeq f init xs`: the inclusive scan `acc_i = f x_i acc_(i-1)`, `acc_(-1) = init`.
pub fn scan_seq(m: &mut Machine, c: &PrimCall) -> R<Value> {
    let f = c.arg(0)?;
    let mut acc = c.arg(1)?.clone();
    let xs = c.array(2)?;
    let mut out = Vec::with_capacity(xs.len());
    for x in xs.iter() {
        acc = m.apply2(f, x.clone(), acc, c.span)?;
        out.push(acc.clone());
    }
    Ok(Value::array(out))
}

/// `iterate k f xs`: applies the dependent function `f` `k` times, each time to
/// `l` = the current length divided by `n` (`n` from the type of `f`).
pub fn iterate(m: &mut Machine, c: &PrimCall) -> R<Value> {
    let k = c.nat(0)?;
    let (params, _) = c.signature()?;
    let n = match params.first() {
        Some(Type::DepFun { binder, body, .. }) => match &**body {
            Type::Fun(a, _) => match &**a {
                Type::Data(DataType::Array(len, _)) => len
                    .eval(&|v| (v.name() == &*binder.name).then_some(1))
                    .map_err(|e| {
                        c.error(format!(
                            "the size {len} of the input of `f` cannot be evaluated: {e}"
                        ))
                    })?,
                other => return Err(c.error(format!("unexpected type of `f`'s input: {other}"))),
            },
            other => return Err(c.error(format!("unexpected type of `f`: {other}"))),
        },
        other => return Err(c.error(format!("unexpected type of `f`: {other:?}"))),
    };
    let f = c.arg(0)?;
    let mut cur = c.arg(1)?.clone();
    for _ in 0..k {
        let len = cur
            .as_array()
            .ok_or_else(|| c.error(format!("expected an array, got {}", cur.describe())))?
            .len() as i64;
        if n <= 0 || len % n != 0 {
            return Err(c.error(format!(
                "an array of {len} elements cannot be divided by n = {n}"
            )));
        }
        let l = len / n;
        let g = m.apply_type(f, TypeArg::Nat(arith::Nat::cst(l)), c.span)?;
        cur = m.apply1(&g, cur, c.span)?;
    }
    Ok(cur)
}

/// `gather is xs = [xs[is 0], ...]`.
pub fn gather(_: &mut Machine, c: &PrimCall) -> R<Value> {
    let (is, xs) = (c.array(0)?, c.array(1)?);
    Ok(Value::array(
        is.iter()
            .map(|i| c.index(i, xs.len()).map(|i| xs[i].clone()))
            .collect::<R<_>>()?,
    ))
}

/// `scatter is xs`: `result[is j] = xs[j]`; the positions must be distinct and cover
/// the result (`m` from the result type).
pub fn scatter(_: &mut Machine, c: &PrimCall) -> R<Value> {
    let (is, xs) = (c.array(0)?, c.array(1)?);
    if is.len() != xs.len() {
        return Err(c.error(format!("{} positions for {} values", is.len(), xs.len())));
    }
    let mlen = c.result_len()? as usize;
    let mut out: Vec<Option<Value>> = vec![None; mlen];
    for (j, (i, x)) in is.iter().zip(xs.iter()).enumerate() {
        let i = c.index(i, mlen)?;
        if out[i].is_some() {
            return Err(c.error(format!(
                "two values are written to position {i} (the second from position {j})"
            )));
        }
        out[i] = Some(x.clone());
    }
    let out = out
        .into_iter()
        .enumerate()
        .map(|(i, v)| v.ok_or_else(|| c.error(format!("no value is written to position {i}"))))
        .collect::<R<Vec<_>>>()?;
    Ok(Value::array(out))
}

/// `reorder f finv xs`: element `i` of the result is `xs[f i]`.
pub fn reorder(_: &mut Machine, c: &PrimCall) -> R<Value> {
    let f = c.nat_to_nat(0)?;
    let xs = c.array(0)?;
    let n = xs.len() as i64;
    let mut out = Vec::with_capacity(xs.len());
    for i in 0..n {
        let j = apply_nat_to_nat(f, i).map_err(|m| c.error(m))?;
        if !(0..n).contains(&j) {
            return Err(c.error(format!(
                "the index function maps {i} to {j}, outside 0..{n}"
            )));
        }
        out.push(xs[j as usize].clone());
    }
    Ok(Value::array(out))
}

// ---- vectors -----------------------------------------------------------------------

/// `asVector n xs`: groups `n` consecutive scalars into a vector.
pub fn as_vector(_: &mut Machine, c: &PrimCall) -> R<Value> {
    chunks(c, c.nat(0)?, c.array(0)?, true)
}

/// `asScalar vs`: the lanes of the vectors, in order.
pub fn as_scalar(_: &mut Machine, c: &PrimCall) -> R<Value> {
    let vs = c.array(0)?;
    let mut out = Vec::new();
    for v in vs.iter() {
        match v {
            Value::Vector(lanes) => out.extend(lanes.iter().cloned()),
            v => {
                return Err(c.error(format!(
                    "expected an array of vectors, found {}",
                    v.describe()
                )))
            }
        }
    }
    Ok(Value::array(out))
}

/// `vectorFromScalar x`: every lane is `x` (`n` from the result type).
pub fn vector_from_scalar(_: &mut Machine, c: &PrimCall) -> R<Value> {
    let n = c.result_len()?;
    let x = c.arg(0)?;
    Ok(Value::Vector((0..n).map(|_| x.clone()).collect()))
}

/// `makeArray n x1 ... xn`.
pub fn make_array(_: &mut Machine, c: &PrimCall) -> R<Value> {
    let n = c.nat(0)?;
    if c.args.len() as i64 != n {
        return Err(c.error(format!("{} values for an array of {n}", c.args.len())));
    }
    Ok(Value::array(c.args.clone()))
}
