//! Run-time values of the interpreter and their conversions.
//!
//! Values mirror the data types of ICFP'20 Fig. 4 (scalars, `natType`, `idx[n]`,
//! arrays `n.t`, pairs `(s, t)`, vectors `vec[t, n]`) plus functions. Arrays, pairs
//! and vectors share their contents (`Arc`), so cloning a value is cheap and the
//! data-layout primitives (`split`, `join`, `zip`, ...) only copy pointers.
//!
//! For the command line, [`Value::from_flat`] and [`Value::to_flat`] convert between
//! values and flat, row-major buffers of one scalar type with a shape (the layout of
//! NumPy `.npy` files); [`Value::check`] checks a value against a concrete data type.

use super::machine::{Env, PrimApp};
use super::scalar::Scalar;
use super::EvalError;
use crate::expr::Expr;
use crate::types::{Binder, DataType, Name, ScalarType};
use arith::Nat;
use std::fmt;
use std::sync::Arc;

/// A run-time value.
#[derive(Clone)]
pub enum Value {
    /// A scalar.
    Scalar(Scalar),
    /// A natural number of data type `natType`.
    Nat(i64),
    /// An index of data type `idx[bound]`: `0 <= index < bound`.
    Index {
        /// The index.
        index: i64,
        /// The size of the array it indexes.
        bound: i64,
    },
    /// An array (shared).
    Array(Arc<[Value]>),
    /// A pair (shared).
    Pair(Arc<(Value, Value)>),
    /// A vector `vec[t, n]` of `n` lanes (shared).
    Vector(Arc<[Value]>),
    /// A function: a closure, a dependent closure or a partially applied primitive.
    Fun(Function),
    /// A failed scalar, `natType` value or index: the error of the operation that
    /// computed it (an integer division by zero, an index out of range, ...). Failed
    /// values propagate through every operation that reads them and vanish where they
    /// are discarded; only the leaves of data values fail (a failed array is an array
    /// of failed elements), and a program's result that contains one is that error
    /// ([`Value::failure`]).
    Failed(Arc<EvalError>),
}

/// A function value. Opaque: apply it with [`super::apply`].
#[derive(Clone)]
pub struct Function(pub(crate) Arc<FunKind>);

/// The kinds of function values.
pub(crate) enum FunKind {
    /// `fun x => body` closed over an environment.
    Closure { param: Name, body: Expr, env: Env },
    /// `fun (x: kind) => body` closed over an environment.
    DepClosure {
        binder: Binder,
        body: Expr,
        env: Env,
    },
    /// A primitive applied to fewer arguments than it takes.
    Prim(PrimApp),
    /// A foreign function applied to fewer arguments than it takes, with the evaluator
    /// installed where it was evaluated.
    Foreign(super::machine::ForeignApp),
}

/// A flat, row-major buffer of scalars of one type with a shape: the layout of an
/// array value in a NumPy `.npy` file.
#[derive(Clone, Debug, PartialEq)]
pub struct Flat {
    /// The scalar type of the elements.
    pub elem: ScalarType,
    /// The extent of each dimension, outermost first (empty for a scalar).
    pub shape: Vec<usize>,
    /// The elements, row-major; `data.len()` is the product of `shape`.
    pub data: Vec<Scalar>,
}

impl Flat {
    /// The elements' bytes in native byte order, row-major, as generated code lays
    /// them out (`bool` as one byte, `int` as 32 bits, `f16` and `bf16` as their 16 bits).
    pub fn to_ne_bytes(&self) -> Vec<u8> {
        let mut bytes = Vec::new();
        for s in &self.data {
            match *s {
                Scalar::Bool(b) => bytes.push(b as u8),
                Scalar::Int(x) | Scalar::I32(x) => bytes.extend(x.to_ne_bytes()),
                Scalar::I8(x) => bytes.extend(x.to_ne_bytes()),
                Scalar::I16(x) => bytes.extend(x.to_ne_bytes()),
                Scalar::I64(x) => bytes.extend(x.to_ne_bytes()),
                Scalar::U8(x) => bytes.push(x),
                Scalar::U16(x) => bytes.extend(x.to_ne_bytes()),
                Scalar::U32(x) => bytes.extend(x.to_ne_bytes()),
                Scalar::U64(x) => bytes.extend(x.to_ne_bytes()),
                Scalar::F32(x) => bytes.extend(x.to_ne_bytes()),
                Scalar::F64(x) => bytes.extend(x.to_ne_bytes()),
                Scalar::F16(x) => bytes.extend(x.to_ne_bytes()),
                Scalar::Bf16(x) => bytes.extend(x.to_ne_bytes()),
            }
        }
        bytes
    }
}

/// The largest number of elements the interpreter builds in one array.
pub const MAX_ARRAY_LEN: i64 = 1 << 28;

impl Value {
    /// A scalar value.
    pub fn scalar(s: Scalar) -> Value {
        Value::Scalar(s)
    }
    /// An `f32` value.
    pub fn f32(x: f32) -> Value {
        Value::Scalar(Scalar::F32(x))
    }
    /// An `f64` value.
    pub fn f64(x: f64) -> Value {
        Value::Scalar(Scalar::F64(x))
    }
    /// An `int` value.
    pub fn int(x: i32) -> Value {
        Value::Scalar(Scalar::Int(x))
    }
    /// A `bool` value.
    pub fn bool(b: bool) -> Value {
        Value::Scalar(Scalar::Bool(b))
    }
    /// An array value.
    pub fn array(elems: Vec<Value>) -> Value {
        Value::Array(elems.into())
    }
    /// A pair value.
    pub fn pair(a: Value, b: Value) -> Value {
        Value::Pair(Arc::new((a, b)))
    }
    /// A vector value with the given lanes.
    pub fn vector(lanes: Vec<Value>) -> Value {
        Value::Vector(lanes.into())
    }
    /// An array of `f32` values.
    pub fn f32s(xs: &[f32]) -> Value {
        Value::array(xs.iter().map(|&x| Value::f32(x)).collect())
    }

    /// The scalar, if this is one.
    pub fn as_scalar(&self) -> Option<Scalar> {
        match self {
            Value::Scalar(s) => Some(*s),
            _ => None,
        }
    }
    /// The elements, if this is an array.
    pub fn as_array(&self) -> Option<&Arc<[Value]>> {
        match self {
            Value::Array(a) => Some(a),
            _ => None,
        }
    }
    /// The components, if this is a pair.
    pub fn as_pair(&self) -> Option<(&Value, &Value)> {
        match self {
            Value::Pair(p) => Some((&p.0, &p.1)),
            _ => None,
        }
    }
    /// The lanes, if this is a vector.
    pub fn as_vector(&self) -> Option<&Arc<[Value]>> {
        match self {
            Value::Vector(v) => Some(v),
            _ => None,
        }
    }
    /// The number, if this is a `natType` value.
    pub fn as_nat(&self) -> Option<i64> {
        match self {
            Value::Nat(n) => Some(*n),
            _ => None,
        }
    }
    /// The index and its bound, if this is an index.
    pub fn as_index(&self) -> Option<(i64, i64)> {
        match self {
            Value::Index { index, bound } => Some((*index, *bound)),
            _ => None,
        }
    }
    /// Whether this is a function.
    pub fn is_function(&self) -> bool {
        matches!(self, Value::Fun(_))
    }

    /// The error of the first failed leaf of this value in row-major order (arrays and
    /// vectors element by element, pairs first component first), if there is one.
    pub fn failure(&self) -> Option<&Arc<EvalError>> {
        match self {
            Value::Failed(e) => Some(e),
            Value::Array(xs) | Value::Vector(xs) => xs.iter().find_map(Value::failure),
            Value::Pair(p) => p.0.failure().or_else(|| p.1.failure()),
            Value::Scalar(_) | Value::Nat(_) | Value::Index { .. } | Value::Fun(_) => None,
        }
    }

    /// `Err` with the error of [`Value::failure`] if this value contains a failed leaf,
    /// otherwise the value: what a program's result means.
    pub fn into_result(self) -> Result<Value, EvalError> {
        match self.failure() {
            Some(e) => Err(EvalError::clone(e)),
            None => Ok(self),
        }
    }

    /// A value of the shape of `like` whose every data leaf (scalar, `natType` value,
    /// index) fails with `err`: what an operation that fails yields in place of a value
    /// of that shape.
    pub fn failed_like(like: &Value, err: &Arc<EvalError>) -> Value {
        match like {
            Value::Array(xs) => {
                Value::Array(xs.iter().map(|x| Value::failed_like(x, err)).collect())
            }
            Value::Vector(xs) => {
                Value::Vector(xs.iter().map(|x| Value::failed_like(x, err)).collect())
            }
            Value::Pair(p) => {
                Value::pair(Value::failed_like(&p.0, err), Value::failed_like(&p.1, err))
            }
            Value::Fun(_) => like.clone(),
            Value::Scalar(_) | Value::Nat(_) | Value::Index { .. } | Value::Failed(_) => {
                Value::Failed(err.clone())
            }
        }
    }

    /// A value of the concrete data type `ty` whose every leaf fails with `err`.
    pub fn failed_of_type(ty: &DataType, err: &Arc<EvalError>) -> Result<Value, String> {
        Ok(match ty {
            DataType::Array(n, t) | DataType::Vector(n, t) => {
                let n = const_nat(n)?;
                if !(0..=MAX_ARRAY_LEN).contains(&n) {
                    return Err(format!(
                        "an array of {n} elements is beyond what the interpreter builds (at most {MAX_ARRAY_LEN})"
                    ));
                }
                let elem = Value::failed_of_type(t, err)?;
                let xs: Arc<[Value]> = (0..n).map(|_| elem.clone()).collect();
                if matches!(ty, DataType::Array(..)) {
                    Value::Array(xs)
                } else {
                    Value::Vector(xs)
                }
            }
            DataType::Pair(a, b) => Value::pair(
                Value::failed_of_type(a, err)?,
                Value::failed_of_type(b, err)?,
            ),
            DataType::Scalar(_) | DataType::NatType | DataType::Index(_) => {
                Value::Failed(err.clone())
            }
            other => return Err(format!("{other} is not a concrete data type")),
        })
    }

    /// The data type of this value, where the value determines it: `None` for
    /// functions, empty arrays and arrays whose elements have different types.
    pub fn data_type(&self) -> Option<DataType> {
        Some(match self {
            Value::Scalar(s) => DataType::Scalar(s.ty()),
            Value::Nat(_) => DataType::NatType,
            Value::Index { bound, .. } => DataType::Index(Nat::cst(*bound)),
            Value::Array(xs) | Value::Vector(xs) => {
                let t = xs.first()?.data_type()?;
                if xs
                    .iter()
                    .skip(1)
                    .any(|x| x.data_type().as_ref() != Some(&t))
                {
                    return None;
                }
                let n = Nat::cst(xs.len() as i64);
                if matches!(self, Value::Array(_)) {
                    DataType::Array(n, Arc::new(t))
                } else {
                    DataType::Vector(n, Arc::new(t))
                }
            }
            Value::Pair(p) => DataType::pair(p.0.data_type()?, p.1.data_type()?),
            Value::Fun(_) | Value::Failed(_) => return None,
        })
    }

    /// What kind of value this is, for error messages (`an f32`, `an array of 4`, ...).
    pub fn describe(&self) -> String {
        match self {
            Value::Scalar(s) => format!("a scalar of type {}", s.ty().name()),
            Value::Nat(_) => "a natType value".into(),
            Value::Index { bound, .. } => format!("an idx[{bound}]"),
            Value::Array(a) => format!("an array of {} elements", a.len()),
            Value::Pair(_) => "a pair".into(),
            Value::Vector(v) => format!("a vector of {} lanes", v.len()),
            Value::Fun(_) => "a function".into(),
            Value::Failed(e) => format!("a failed value ({})", e.message),
        }
    }

    /// Builds an array (or, for an empty shape, a scalar) from a flat row-major
    /// buffer of scalars of type `elem`.
    pub fn from_flat(
        elem: ScalarType,
        shape: &[usize],
        data: Vec<Scalar>,
    ) -> Result<Value, EvalError> {
        let total = shape
            .iter()
            .try_fold(1usize, |acc, &d| acc.checked_mul(d))
            .ok_or_else(|| EvalError::msg(format!("the shape {shape:?} is too large")))?;
        if total != data.len() {
            return Err(EvalError::msg(format!(
                "the shape {shape:?} needs {total} elements but {} were given",
                data.len()
            )));
        }
        if let Some((i, s)) = data.iter().enumerate().find(|(_, s)| s.ty() != elem) {
            return Err(EvalError::msg(format!(
                "element {i} has type {} but the buffer has type {}",
                s.ty().name(),
                elem.name()
            )));
        }
        fn build(shape: &[usize], data: &[Scalar]) -> Value {
            match shape.split_first() {
                None => Value::Scalar(data[0]),
                Some((&n, rest)) => {
                    let chunk: usize = rest.iter().product();
                    Value::array(
                        (0..n)
                            .map(|i| build(rest, &data[i * chunk..(i + 1) * chunk]))
                            .collect(),
                    )
                }
            }
        }
        if shape.contains(&0) {
            // Nested empty arrays: build the outer dimensions up to the first zero.
            let outer = shape
                .iter()
                .take_while(|&&d| d > 0)
                .try_fold(1usize, |acc, &d| acc.checked_mul(d))
                .filter(|&n| n as u64 <= MAX_ARRAY_LEN as u64);
            if outer.is_none() {
                return Err(EvalError::msg(format!("the shape {shape:?} is too large")));
            }
            fn empty(shape: &[usize]) -> Value {
                match shape.split_first() {
                    Some((&n, rest)) if n > 0 => {
                        Value::array((0..n).map(|_| empty(rest)).collect())
                    }
                    _ => Value::array(Vec::new()),
                }
            }
            return Ok(empty(shape));
        }
        Ok(build(shape, &data))
    }

    /// Flattens a value of the concrete data type `ty` (nested arrays of scalars,
    /// vectors counting as an innermost dimension) to a row-major buffer.
    pub fn to_flat(&self, ty: &DataType) -> Result<Flat, EvalError> {
        let (shape, elem) = flat_layout(ty)?;
        self.check(ty)?;
        let mut data = Vec::with_capacity(shape.iter().product());
        fn walk(v: &Value, out: &mut Vec<Scalar>) {
            match v {
                Value::Scalar(s) => out.push(*s),
                Value::Array(xs) | Value::Vector(xs) => xs.iter().for_each(|x| walk(x, out)),
                _ => {}
            }
        }
        walk(self, &mut data);
        Ok(Flat { elem, shape, data })
    }

    /// Checks that this value has the concrete data type `ty`, with an error that
    /// says where (`at [3].0`) and what differs.
    pub fn check(&self, ty: &DataType) -> Result<(), EvalError> {
        let mut path = String::new();
        check(self, ty, &mut path).map_err(|m| {
            let at = if path.is_empty() {
                String::new()
            } else {
                format!(" at {path}")
            };
            EvalError::msg(format!("value does not have type {ty}{at}: {m}"))
        })
    }

    /// Equality up to a tolerance on floats: `|a - b| <= abs_tol + rel_tol * |b|`
    /// (two NaNs are equal here); everything else must be equal exactly. Functions
    /// and failed values are never equal.
    pub fn approx_eq(&self, other: &Value, rel_tol: f64, abs_tol: f64) -> bool {
        match (self, other) {
            (Value::Scalar(a), Value::Scalar(b)) => {
                if a.ty() != b.ty() {
                    return false;
                }
                if a.ty().is_float() {
                    let (x, y) = (a.as_f64(), b.as_f64());
                    (x.is_nan() && y.is_nan())
                        || x == y
                        || (x - y).abs() <= abs_tol + rel_tol * y.abs()
                } else {
                    a == b
                }
            }
            (Value::Array(a), Value::Array(b)) | (Value::Vector(a), Value::Vector(b)) => {
                a.len() == b.len()
                    && a.iter()
                        .zip(b.iter())
                        .all(|(x, y)| x.approx_eq(y, rel_tol, abs_tol))
            }
            (Value::Pair(a), Value::Pair(b)) => {
                a.0.approx_eq(&b.0, rel_tol, abs_tol) && a.1.approx_eq(&b.1, rel_tol, abs_tol)
            }
            (Value::Nat(a), Value::Nat(b)) => a == b,
            (Value::Index { index: a, bound: n }, Value::Index { index: b, bound: m }) => {
                a == b && n == m
            }
            _ => false,
        }
    }

    /// Exact structural equality of data values (`equal` on non-scalars; floats
    /// compare with IEEE `==`; a failed value equals nothing). `None` when a function
    /// is involved.
    pub fn data_eq(&self, other: &Value) -> Option<bool> {
        Some(match (self, other) {
            (Value::Scalar(a), Value::Scalar(b)) => {
                a.ty() == b.ty() && a.compare(*b).ok()? == Some(std::cmp::Ordering::Equal)
            }
            (Value::Array(a), Value::Array(b)) | (Value::Vector(a), Value::Vector(b)) => {
                if a.len() != b.len() {
                    return Some(false);
                }
                let mut all = true;
                for (x, y) in a.iter().zip(b.iter()) {
                    all &= x.data_eq(y)?;
                }
                all
            }
            (Value::Pair(a), Value::Pair(b)) => a.0.data_eq(&b.0)? & a.1.data_eq(&b.1)?,
            (Value::Nat(a), Value::Nat(b)) => a == b,
            (Value::Index { index: a, .. }, Value::Index { index: b, .. }) => a == b,
            (Value::Fun(_), _) | (_, Value::Fun(_)) => return None,
            _ => false,
        })
    }
}

/// The value of a closed natural number.
pub(crate) fn const_nat(n: &Nat) -> Result<i64, String> {
    n.eval(&|_| None)
        .map_err(|e| format!("the size {n} cannot be evaluated: {e}"))
}

/// The shape and scalar type of a data type that flattens to a buffer.
pub fn flat_layout(ty: &DataType) -> Result<(Vec<usize>, ScalarType), EvalError> {
    let mut shape = Vec::new();
    let mut t = ty;
    loop {
        match t {
            DataType::Array(n, e) | DataType::Vector(n, e) => {
                let n = const_nat(n).map_err(EvalError::msg)?;
                shape.push(
                    usize::try_from(n)
                        .map_err(|_| EvalError::msg(format!("negative size {n} in {ty}")))?,
                );
                t = e;
            }
            DataType::Scalar(s) => return Ok((shape, *s)),
            other => {
                return Err(EvalError::msg(format!(
                    "{ty} cannot be stored as a flat buffer of scalars (it contains {other})"
                )))
            }
        }
    }
}

fn check(v: &Value, ty: &DataType, path: &mut String) -> Result<(), String> {
    let len = |n: &Nat| const_nat(n);
    match (v, ty) {
        (Value::Scalar(s), DataType::Scalar(t)) if s.ty() == *t => Ok(()),
        (Value::Nat(n), DataType::NatType) if *n >= 0 => Ok(()),
        (Value::Index { index, bound }, DataType::Index(n)) => {
            let n = len(n)?;
            if *bound != n {
                Err(format!("an index into {bound} elements, expected idx[{n}]"))
            } else if *index < 0 || index >= bound {
                Err(format!("the index {index} is out of its range 0..{n}"))
            } else {
                Ok(())
            }
        }
        (Value::Array(xs), DataType::Array(n, t)) | (Value::Vector(xs), DataType::Vector(n, t)) => {
            let n = len(n)?;
            if xs.len() as i64 != n {
                return Err(format!("{} elements, expected {n}", xs.len()));
            }
            for (i, x) in xs.iter().enumerate() {
                let before = path.len();
                path.push_str(&format!("[{i}]"));
                check(x, t, path)?;
                path.truncate(before);
            }
            Ok(())
        }
        (Value::Pair(p), DataType::Pair(a, b)) => {
            let before = path.len();
            path.push_str(".0");
            check(&p.0, a, path)?;
            path.truncate(before);
            path.push_str(".1");
            check(&p.1, b, path)?;
            path.truncate(before);
            Ok(())
        }
        (Value::Failed(e), _) => Err(format!("a failed value: {}", e.message)),
        (_, DataType::Var(_) | DataType::NatToDataApp(..)) => {
            Err(format!("{ty} is not a concrete data type"))
        }
        (v, ty) => Err(format!("found {}, expected {ty}", v.describe())),
    }
}

impl fmt::Display for Value {
    /// Compact: `1.5`, `[1, 2]`, `(a, b)`, `<1.0, 2.0>` (vectors), `3:idx[4]`,
    /// `5:nat`, `<function>`, `<failed: message>`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let list = |f: &mut fmt::Formatter<'_>, xs: &[Value], open: &str, close: &str| {
            f.write_str(open)?;
            for (i, x) in xs.iter().enumerate() {
                if i > 0 {
                    f.write_str(", ")?;
                }
                write!(f, "{x}")?;
            }
            f.write_str(close)
        };
        match self {
            Value::Scalar(s) => write!(f, "{s}"),
            Value::Nat(n) => write!(f, "{n}:nat"),
            Value::Index { index, bound } => write!(f, "{index}:idx[{bound}]"),
            Value::Array(xs) => list(f, xs, "[", "]"),
            Value::Vector(xs) => list(f, xs, "<", ">"),
            Value::Pair(p) => write!(f, "({}, {})", p.0, p.1),
            Value::Fun(func) => write!(f, "{func:?}"),
            Value::Failed(e) => write!(f, "<failed: {}>", e.message),
        }
    }
}

impl fmt::Debug for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

impl fmt::Debug for Function {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &*self.0 {
            FunKind::Closure { param, .. } => write!(f, "<fun {param}>"),
            FunKind::DepClosure { binder, .. } => {
                write!(f, "<fun ({}: {})>", binder.name, binder.kind)
            }
            FunKind::Prim(p) => write!(f, "<{}>", p.describe()),
            FunKind::Foreign(app) => write!(f, "<foreign {}>", app.fun.name),
        }
    }
}

impl From<Scalar> for Value {
    fn from(s: Scalar) -> Value {
        Value::Scalar(s)
    }
}
