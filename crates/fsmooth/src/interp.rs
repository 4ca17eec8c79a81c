//! The F-smooth reference interpreter: call-by-value, with a step budget so
//! that no program runs away, and errors (index out of bounds, integer
//! overflow, division by zero) as values rather than panics.
//!
//! Every rewrite rule and the differentiation are tested against it: a
//! rewritten term must evaluate to the same value as the original wherever the
//! original evaluates without error.

use crate::expr::{Expr, ExprKind, Name, Prim};
use crate::types::Type;
use crate::Program;
use diagnostics::Span;
use std::fmt;
use std::sync::Arc;

/// The default budget of evaluation steps.
pub const DEFAULT_FUEL: u64 = 50_000_000;

/// A run-time value.
#[derive(Clone)]
pub enum Value {
    /// A `Double`.
    Double(f64),
    /// An `Index`.
    Index(i64),
    /// A `Bool`.
    Bool(bool),
    /// An array.
    Array(Arc<[Value]>),
    /// A pair.
    Pair(Arc<(Value, Value)>),
    /// A function value.
    Closure(Arc<Closure>),
}

/// A function value: a lambda with the values of its free variables.
pub struct Closure {
    param: Name,
    body: Expr,
    scope: Scope,
}

/// A persistent list of variable bindings.
#[derive(Clone, Default)]
struct Scope(Option<Arc<Binding>>);

struct Binding {
    name: Name,
    value: Value,
    next: Scope,
}

impl Scope {
    fn bind(&self, name: Name, value: Value) -> Scope {
        Scope(Some(Arc::new(Binding {
            name,
            value,
            next: self.clone(),
        })))
    }

    fn lookup(&self, x: &str) -> Option<&Value> {
        let mut s = &self.0;
        while let Some(b) = s {
            if b.name.as_ref() == x {
                return Some(&b.value);
            }
            s = &b.next.0;
        }
        None
    }
}

/// Why evaluation stopped.
#[derive(Clone, Debug, PartialEq)]
pub struct EvalError {
    /// What went wrong.
    pub message: String,
    /// Where (may be `Span::default()` in rewritten terms).
    pub span: Span,
}

impl fmt::Display for EvalError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.message)
    }
}

impl std::error::Error for EvalError {}

fn err<T>(e: &Expr, message: impl Into<String>) -> Result<T, EvalError> {
    Err(EvalError {
        message: message.into(),
        span: e.span(),
    })
}

/// Evaluates `e` with the given values of its free variables.
pub fn eval(e: &Expr, inputs: &[(Name, Value)]) -> Result<Value, EvalError> {
    eval_with_fuel(e, inputs, DEFAULT_FUEL)
}

/// Evaluates `e` with at most `fuel` steps.
pub fn eval_with_fuel(e: &Expr, inputs: &[(Name, Value)], fuel: u64) -> Result<Value, EvalError> {
    let mut scope = Scope::default();
    for (x, v) in inputs {
        scope = scope.bind(x.clone(), v.clone());
    }
    Machine { fuel, ops: 0 }.eval(e, &scope)
}

/// Evaluates `e` and counts the operations it performs (the cost model of
/// [`crate::cost`]): every built-in applied, every function call, every
/// conditional and every iteration of `build` and `ifold`. Variables,
/// literals, `let` and `fun` are free.
pub fn eval_counting(e: &Expr, inputs: &[(Name, Value)]) -> Result<(Value, u64), EvalError> {
    let mut scope = Scope::default();
    for (x, v) in inputs {
        scope = scope.bind(x.clone(), v.clone());
    }
    let mut m = Machine {
        fuel: DEFAULT_FUEL,
        ops: 0,
    };
    let v = m.eval(e, &scope)?;
    Ok((v, m.ops))
}

/// Evaluates a program's body on values for its inputs, in declaration order.
/// The differentiation constructs (`deriv`, `grad`, `jacob`) are first
/// expanded into forward-mode code ([`crate::derivatives`]).
pub fn eval_program(p: &Program, inputs: &[Value]) -> Result<Value, EvalError> {
    let p = expanded(p)?;
    eval(&p.body, &bind_inputs(&p, inputs)?)
}

/// Evaluates a program's body on values for its inputs and counts its
/// operations (see [`eval_counting`]); the operations of a differentiation
/// construct are those of its forward-mode expansion.
pub fn eval_program_counting(p: &Program, inputs: &[Value]) -> Result<(Value, u64), EvalError> {
    let p = expanded(p)?;
    eval_counting(&p.body, &bind_inputs(&p, inputs)?)
}

/// `p` with its differentiation constructs expanded (borrowed where it has none).
fn expanded(p: &Program) -> Result<std::borrow::Cow<'_, Program>, EvalError> {
    if !crate::derivatives::contains_derivatives(&p.body) {
        return Ok(std::borrow::Cow::Borrowed(p));
    }
    crate::derivatives::expand_derivatives(p)
        .map(std::borrow::Cow::Owned)
        .map_err(|d| EvalError {
            message: d.message,
            span: d.span,
        })
}

fn bind_inputs(p: &Program, inputs: &[Value]) -> Result<Vec<(Name, Value)>, EvalError> {
    if inputs.len() != p.inputs.len() {
        return err(
            &p.body,
            format!(
                "the program has {} inputs, {} given",
                p.inputs.len(),
                inputs.len()
            ),
        );
    }
    Ok(p.inputs
        .iter()
        .zip(inputs)
        .map(|(i, v)| (i.name.clone(), v.clone()))
        .collect())
}

struct Machine {
    fuel: u64,
    /// Operations performed so far (see [`eval_counting`]).
    ops: u64,
}

impl Machine {
    fn eval(&mut self, e: &Expr, scope: &Scope) -> Result<Value, EvalError> {
        use ExprKind::*;
        if self.fuel == 0 {
            return err(e, "evaluation stopped: the step budget is used up");
        }
        self.fuel -= 1;
        match e.kind() {
            Var(x) => match scope.lookup(x) {
                Some(v) => Ok(v.clone()),
                None => err(e, format!("unbound variable `{x}`")),
            },
            Double(v) => Ok(Value::Double(*v)),
            Index(v) => Ok(Value::Index(*v)),
            Bool(v) => Ok(Value::Bool(*v)),
            Lam(x, _, b) => Ok(Value::Closure(Arc::new(Closure {
                param: x.clone(),
                body: b.clone(),
                scope: scope.clone(),
            }))),
            App(f, a) => {
                self.ops += 1;
                let fv = self.eval(f, scope)?;
                let av = self.eval(a, scope)?;
                self.call(e, &fv, av)
            }
            Let(x, e0, e1) => {
                let v = self.eval(e0, scope)?;
                self.eval(e1, &scope.bind(x.clone(), v))
            }
            If(c, a, b) => {
                self.ops += 1;
                match self.eval(c, scope)? {
                    Value::Bool(true) => self.eval(a, scope),
                    Value::Bool(false) => self.eval(b, scope),
                    _ => err(c, "the condition is not a boolean"),
                }
            }
            Prim(op, args) => {
                self.ops += 1;
                self.prim(e, *op, args, scope)
            }
        }
    }

    fn call(&mut self, at: &Expr, f: &Value, a: Value) -> Result<Value, EvalError> {
        match f {
            Value::Closure(c) => {
                let scope = c.scope.bind(c.param.clone(), a);
                self.eval(&c.body, &scope)
            }
            _ => err(at, "applying a value that is not a function"),
        }
    }

    fn prim(
        &mut self,
        e: &Expr,
        op: Prim,
        args: &[Expr],
        scope: &Scope,
    ) -> Result<Value, EvalError> {
        // The short-circuit operators evaluate their second operand only when needed.
        if matches!(op, Prim::And | Prim::Or) {
            let a = self.eval(&args[0], scope)?;
            return match (op, a) {
                (Prim::And, Value::Bool(false)) => Ok(Value::Bool(false)),
                (Prim::Or, Value::Bool(true)) => Ok(Value::Bool(true)),
                (_, Value::Bool(_)) => match self.eval(&args[1], scope)? {
                    Value::Bool(b) => Ok(Value::Bool(b)),
                    _ => err(e, "`&&`/`||` on a value that is not a boolean"),
                },
                _ => err(e, "`&&`/`||` on a value that is not a boolean"),
            };
        }
        let mut vs = Vec::with_capacity(args.len());
        for a in args {
            vs.push(self.eval(a, scope)?);
        }
        let bad = |what: &str| err(e, format!("`{}` applied to {what}", op.name()));
        match op {
            Prim::Build => {
                let (Value::Index(n), f) = (&vs[0], &vs[1]) else {
                    return bad("a non-index size");
                };
                if *n < 0 {
                    return err(e, format!("`build` with a negative size {n}"));
                }
                if *n as u64 > self.fuel {
                    return err(e, "evaluation stopped: the step budget is used up");
                }
                let mut out = Vec::with_capacity(*n as usize);
                for i in 0..*n {
                    self.ops += 1;
                    out.push(self.call(e, f, Value::Index(i))?);
                }
                Ok(Value::Array(out.into()))
            }
            Prim::Get => match (&vs[0], &vs[1]) {
                (Value::Array(a), Value::Index(i)) => {
                    match usize::try_from(*i).ok().and_then(|i| a.get(i)) {
                        Some(v) => Ok(v.clone()),
                        None => err(
                            e,
                            format!(
                                "index {i} is out of bounds for an array of length {}",
                                a.len()
                            ),
                        ),
                    }
                }
                _ => bad("a non-array or a non-index"),
            },
            Prim::Length => match &vs[0] {
                Value::Array(a) => Ok(Value::Index(a.len() as i64)),
                _ => bad("a non-array"),
            },
            Prim::IFold => {
                let Value::Index(n) = vs[2] else {
                    return bad("a non-index count");
                };
                let f = vs[0].clone();
                let mut acc = vs[1].clone();
                for i in 0..n.max(0) {
                    if self.fuel == 0 {
                        return err(e, "evaluation stopped: the step budget is used up");
                    }
                    self.fuel -= 1;
                    self.ops += 1;
                    let g = self.call(e, &f, acc)?;
                    acc = self.call(e, &g, Value::Index(i))?;
                }
                Ok(acc)
            }
            Prim::Pair => {
                let mut it = vs.into_iter();
                match (it.next(), it.next()) {
                    (Some(a), Some(b)) => Ok(Value::Pair(Arc::new((a, b)))),
                    _ => bad("too few values"),
                }
            }
            Prim::Fst | Prim::Snd => match &vs[0] {
                Value::Pair(p) => Ok(if op == Prim::Fst {
                    p.0.clone()
                } else {
                    p.1.clone()
                }),
                _ => bad("a non-pair"),
            },
            Prim::Neg => match vs[0] {
                Value::Double(a) => Ok(Value::Double(-a)),
                Value::Index(a) => match a.checked_neg() {
                    Some(v) => Ok(Value::Index(v)),
                    None => err(e, "integer overflow in `-`"),
                },
                _ => bad("a non-number"),
            },
            Prim::Not => match vs[0] {
                Value::Bool(b) => Ok(Value::Bool(!b)),
                _ => bad("a non-boolean"),
            },
            Prim::ToDouble => match vs[0] {
                Value::Index(i) => Ok(Value::Double(i as f64)),
                _ => bad("a non-index"),
            },
            op if op.is_derivative() => err(
                e,
                format!(
                    "`{}` is evaluated through its forward-mode expansion \
                     (`fsmooth::derivatives::expand_derivatives`, which `eval_program` runs)",
                    op.name()
                ),
            ),
            op if op.is_scalar_fn() => match vs[0] {
                Value::Double(a) => Ok(Value::Double(scalar_fn(op, a))),
                _ => bad("a non-Double"),
            },
            _ => match binary(op, &vs[0], &vs[1]) {
                Ok(v) => Ok(v),
                Err(m) => err(e, m),
            },
        }
    }
}

/// `sin`, `cos`, `exp`, `log`, `sqrt` on a `Double`.
pub fn scalar_fn(op: Prim, a: f64) -> f64 {
    match op {
        Prim::Sin => a.sin(),
        Prim::Cos => a.cos(),
        Prim::Exp => a.exp(),
        Prim::Log => a.ln(),
        _ => a.sqrt(),
    }
}

/// A binary arithmetic operation or comparison on two numbers.
pub fn binary(op: Prim, a: &Value, b: &Value) -> Result<Value, String> {
    use Prim::*;
    match (a, b) {
        (Value::Double(a), Value::Double(b)) => {
            let (a, b) = (*a, *b);
            Ok(match op {
                Add => Value::Double(a + b),
                Sub => Value::Double(a - b),
                Mul => Value::Double(a * b),
                Div => Value::Double(a / b),
                Lt => Value::Bool(a < b),
                Le => Value::Bool(a <= b),
                Gt => Value::Bool(a > b),
                Ge => Value::Bool(a >= b),
                Eq => Value::Bool(a == b),
                Ne => Value::Bool(a != b),
                _ => return Err(format!("`{}` is not a binary operation", op.name())),
            })
        }
        (Value::Index(a), Value::Index(b)) => {
            let (a, b) = (*a, *b);
            let arith = |r: Option<i64>| match r {
                Some(v) => Ok(Value::Index(v)),
                None if op == Div && b == 0 => Err("integer division by zero".to_string()),
                None => Err(format!("integer overflow in `{}`", op.name())),
            };
            match op {
                Add => arith(a.checked_add(b)),
                Sub => arith(a.checked_sub(b)),
                Mul => arith(a.checked_mul(b)),
                Div => arith(a.checked_div(b)),
                Lt => Ok(Value::Bool(a < b)),
                Le => Ok(Value::Bool(a <= b)),
                Gt => Ok(Value::Bool(a > b)),
                Ge => Ok(Value::Bool(a >= b)),
                Eq => Ok(Value::Bool(a == b)),
                Ne => Ok(Value::Bool(a != b)),
                _ => Err(format!("`{}` is not a binary operation", op.name())),
            }
        }
        _ => Err(format!(
            "`{}` applied to operands of different types",
            op.name()
        )),
    }
}

impl Value {
    /// Equality of first-order values; doubles compare with `==` (so `0.0 ==
    /// -0.0`), or within `tolerance` (relative to their magnitude) when given.
    /// Functions are never equal.
    pub fn equals(&self, other: &Value, tolerance: Option<f64>) -> bool {
        match (self, other) {
            (Value::Double(a), Value::Double(b)) => match tolerance {
                None => a == b || (a.is_nan() && b.is_nan()),
                Some(t) => (a - b).abs() <= t * (1.0 + a.abs().max(b.abs())) || a == b,
            },
            (Value::Index(a), Value::Index(b)) => a == b,
            (Value::Bool(a), Value::Bool(b)) => a == b,
            (Value::Array(a), Value::Array(b)) => {
                a.len() == b.len() && a.iter().zip(b.iter()).all(|(x, y)| x.equals(y, tolerance))
            }
            (Value::Pair(a), Value::Pair(b)) => {
                a.0.equals(&b.0, tolerance) && a.1.equals(&b.1, tolerance)
            }
            _ => false,
        }
    }
}

impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Double(v) => write!(f, "{v:?}"),
            Value::Index(v) => write!(f, "{v}"),
            Value::Bool(v) => write!(f, "{v}"),
            Value::Array(a) => {
                write!(f, "[")?;
                for (i, v) in a.iter().enumerate() {
                    if i > 0 {
                        write!(f, ", ")?;
                    }
                    write!(f, "{v}")?;
                }
                write!(f, "]")
            }
            Value::Pair(p) => write!(f, "({}, {})", p.0, p.1),
            Value::Closure(_) => write!(f, "<function>"),
        }
    }
}

impl fmt::Debug for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{self}")
    }
}

/// Dual numbers for forward-mode differentiation: the value of type `D⟦ty⟧`
/// that pairs each `Double` of `x` with the matching tangent of `dx`.
pub fn dual(ty: &Type, x: &Value, dx: &Value) -> Option<Value> {
    Some(match (ty, x, dx) {
        (Type::Double, Value::Double(_), Value::Double(_)) => {
            Value::Pair(Arc::new((x.clone(), dx.clone())))
        }
        (Type::Index | Type::Bool, _, _) => x.clone(),
        (Type::Array(t), Value::Array(a), Value::Array(b)) if a.len() == b.len() => {
            let v: Option<Vec<Value>> =
                a.iter().zip(b.iter()).map(|(x, d)| dual(t, x, d)).collect();
            Value::Array(v?.into())
        }
        (Type::Pair(s, t), Value::Pair(a), Value::Pair(b)) => {
            Value::Pair(Arc::new((dual(s, &a.0, &b.0)?, dual(t, &a.1, &b.1)?)))
        }
        _ => return None,
    })
}

/// The primal (`first == true`) or tangent part of a value of type `D⟦ty⟧`.
/// Non-differentiable parts (`Index`, `Bool`) are returned as they are.
pub fn split_dual(ty: &Type, v: &Value, first: bool) -> Option<Value> {
    Some(match (ty, v) {
        (Type::Double, Value::Pair(p)) => {
            if first {
                p.0.clone()
            } else {
                p.1.clone()
            }
        }
        (Type::Index | Type::Bool, _) => v.clone(),
        (Type::Array(t), Value::Array(a)) => {
            let v: Option<Vec<Value>> = a.iter().map(|x| split_dual(t, x, first)).collect();
            Value::Array(v?.into())
        }
        (Type::Pair(s, t), Value::Pair(p)) => Value::Pair(Arc::new((
            split_dual(s, &p.0, first)?,
            split_dual(t, &p.1, first)?,
        ))),
        _ => return None,
    })
}

/// `x + h * dx` on the `Double`s of a value (other parts are kept from `x`).
pub fn axpy(x: &Value, h: f64, dx: &Value) -> Value {
    match (x, dx) {
        (Value::Double(a), Value::Double(d)) => Value::Double(a + h * d),
        (Value::Array(a), Value::Array(b)) if a.len() == b.len() => {
            Value::Array(a.iter().zip(b.iter()).map(|(x, d)| axpy(x, h, d)).collect())
        }
        (Value::Pair(a), Value::Pair(b)) => {
            Value::Pair(Arc::new((axpy(&a.0, h, &b.0), axpy(&a.1, h, &b.1))))
        }
        _ => x.clone(),
    }
}

/// `f(a, b)` on the matching `Double`s of two values of the same shape (other
/// parts are kept from `a`).
pub fn zip_doubles(a: &Value, b: &Value, f: &dyn Fn(f64, f64) -> f64) -> Value {
    match (a, b) {
        (Value::Double(x), Value::Double(y)) => Value::Double(f(*x, *y)),
        (Value::Array(x), Value::Array(y)) if x.len() == y.len() => Value::Array(
            x.iter()
                .zip(y.iter())
                .map(|(p, q)| zip_doubles(p, q, f))
                .collect(),
        ),
        (Value::Pair(x), Value::Pair(y)) => Value::Pair(Arc::new((
            zip_doubles(&x.0, &y.0, f),
            zip_doubles(&x.1, &y.1, f),
        ))),
        _ => a.clone(),
    }
}

/// `(a - b) / d` on the `Double`s of two values of the same shape (other parts
/// are kept from `a`): a finite difference.
pub fn difference_quotient(a: &Value, b: &Value, d: f64) -> Value {
    zip_doubles(a, b, &|x, y| (x - y) / d)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse_expr;

    fn run(src: &str) -> Result<Value, EvalError> {
        eval(&parse_expr(src).unwrap(), &[])
    }

    #[test]
    fn evaluates_arrays_folds_and_closures() {
        let v = run(
            "let v = build 4 (fun i -> toDouble i) in ifold (fun a i -> a + v[i]) 0.5 (length v)",
        )
        .unwrap();
        assert!(v.equals(&Value::Double(6.5), None));
        let v = run("(fun x y -> (x, y)) 1 true").unwrap();
        assert_eq!(v.to_string(), "(1, true)");
        let v = run("build 2 (fun i -> build 3 (fun j -> i * 3 + j))").unwrap();
        assert_eq!(v.to_string(), "[[0, 1, 2], [3, 4, 5]]");
    }

    #[test]
    fn errors_are_values_not_panics() {
        assert!(run("(build 2 (fun i -> i))[2]")
            .unwrap_err()
            .message
            .contains("out of bounds"));
        assert!(run("1 / 0")
            .unwrap_err()
            .message
            .contains("division by zero"));
        assert!(run("9223372036854775807 + 1")
            .unwrap_err()
            .message
            .contains("overflow"));
        assert!(run("build (0 - 1) (fun i -> i)")
            .unwrap_err()
            .message
            .contains("negative"));
        let e = parse_expr("ifold (fun a i -> a + 1) 0 1000000").unwrap();
        assert!(eval_with_fuel(&e, &[], 1000)
            .unwrap_err()
            .message
            .contains("budget"));
        assert!(run("false && (build 1 (fun i -> true))[5]").is_ok());
    }
}
