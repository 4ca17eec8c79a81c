//! Evaluation with C semantics.

use crate::nat::Atom;
use crate::rat::Rat;
use crate::{Nat, Var};

/// Why [`Nat::eval`] failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EvalError {
    /// The environment has no value for this variable.
    UnboundVar(String),
    /// A `/`, `%` or `/^` by zero (or a zero raised to a negative power).
    DivisionByZero,
    /// An exact division `/^` whose dividend is not a multiple of the divisor
    /// (or an integer operation applied to such a value). The fields are the
    /// offending value as a reduced fraction, saturated to `i64`.
    InexactDivision {
        /// Numerator of the non-integer value.
        numerator: i64,
        /// Denominator of the non-integer value.
        denominator: i64,
    },
    /// A value does not fit the integer range used for evaluation.
    Overflow,
    /// `xor(a, b)` of a negative value: defined for naturals only.
    NegativeXor,
}

impl std::fmt::Display for EvalError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            EvalError::UnboundVar(v) => write!(f, "unbound variable `{v}`"),
            EvalError::DivisionByZero => write!(f, "division by zero"),
            EvalError::InexactDivision {
                numerator,
                denominator,
            } => {
                write!(
                    f,
                    "inexact exact division: value {numerator}/{denominator} is not an integer"
                )
            }
            EvalError::Overflow => write!(f, "arithmetic overflow"),
            EvalError::NegativeXor => write!(f, "`xor` of a negative value"),
        }
    }
}

impl std::error::Error for EvalError {}

type Env<'a> = &'a dyn Fn(&Var) -> Option<i64>;

fn sat(v: i128) -> i64 {
    i64::try_from(v).unwrap_or(if v < 0 { i64::MIN } else { i64::MAX })
}

fn integer(r: Rat) -> Result<i128, EvalError> {
    if r.is_int() {
        Ok(r.num)
    } else {
        Err(EvalError::InexactDivision {
            numerator: sat(r.num),
            denominator: sat(r.den),
        })
    }
}

fn pow(b: Rat, e: i64) -> Result<Rat, EvalError> {
    if b.is_zero() && e < 0 {
        return Err(EvalError::DivisionByZero);
    }
    b.powi(e).ok_or(EvalError::Overflow)
}

/// Exact (rational) value of `n`.
pub(crate) fn eval_rat(n: &Nat, env: Env<'_>) -> Result<Rat, EvalError> {
    let mut sum = Rat::ZERO;
    for t in n.terms() {
        let mut p = t.coeff;
        for (a, e) in &t.factors {
            let v = pow(eval_atom(a, env)?, *e)?;
            p = p.mul(v).ok_or(EvalError::Overflow)?;
        }
        sum = sum.add(p).ok_or(EvalError::Overflow)?;
    }
    Ok(sum)
}

fn eval_int(n: &Nat, env: Env<'_>) -> Result<i128, EvalError> {
    integer(eval_rat(n, env)?)
}

fn eval_atom(a: &Atom, env: Env<'_>) -> Result<Rat, EvalError> {
    Ok(match a {
        Atom::Var(v) => Rat::int(
            env(v)
                .ok_or_else(|| EvalError::UnboundVar(v.name().to_string()))?
                .into(),
        ),
        Atom::Div(x, d) | Atom::Mod(x, d) => {
            let (x, d) = (eval_int(x, env)?, eval_int(d, env)?);
            if d == 0 {
                return Err(EvalError::DivisionByZero);
            }
            let v = if matches!(a, Atom::Div(..)) {
                x.checked_div(d)
            } else {
                x.checked_rem(d)
            };
            Rat::int(v.ok_or(EvalError::Overflow)?)
        }
        Atom::Min(x, y) | Atom::Max(x, y) => {
            let (x, y) = (eval_rat(x, env)?, eval_rat(y, env)?);
            let x_le_y = x.cmp_num(y).is_le();
            if x_le_y == matches!(a, Atom::Min(..)) {
                x
            } else {
                y
            }
        }
        Atom::Pow(b, e) => {
            let b = eval_rat(b, env)?;
            let e = i64::try_from(eval_int(e, env)?).map_err(|_| EvalError::Overflow)?;
            pow(b, e)?
        }
        Atom::Xor(x, y) => {
            let (x, y) = (eval_int(x, env)?, eval_int(y, env)?);
            if x < 0 || y < 0 {
                return Err(EvalError::NegativeXor);
            }
            Rat::int(x ^ y)
        }
        Atom::Poly(p) => eval_rat(p, env)?,
        Atom::Cst(c) => *c,
    })
}

/// Integer value of `n`, fitting `i64`.
pub(crate) fn eval(n: &Nat, env: Env<'_>) -> Result<i64, EvalError> {
    i64::try_from(eval_int(n, env)?).map_err(|_| EvalError::Overflow)
}

#[cfg(test)]
mod tests {
    use super::EvalError;
    use crate::{Nat, Var};

    #[test]
    fn evaluation_with_c_semantics() {
        let x = Var::new("x");
        let n = Nat::var(&x);
        let env = |v: &Var| (v.name() == "x").then_some(7);
        let neg = Nat::cst(0) - &n;
        assert_eq!((&neg * 2 + 1).eval(&env), Ok(-13));
        assert_eq!(neg.floor_div(&Nat::cst(2)).eval(&env), Ok(-3));
        assert_eq!(neg.modulo(&Nat::cst(2)).eval(&env), Ok(-1));
        assert_eq!(Nat::min(&neg, &Nat::cst(0)).eval(&env), Ok(-7));
    }

    #[test]
    fn evaluation_errors() {
        let x = Var::new("x");
        let n = Nat::var(&x);
        let env = |v: &Var| (v.name() == "x").then_some(6);
        assert_eq!(
            Nat::var(&Var::new("y")).eval(&env),
            Err(EvalError::UnboundVar("y".into()))
        );
        assert_eq!(
            Nat::cst(1).floor_div(&(&n - 6)).eval(&env),
            Err(EvalError::DivisionByZero)
        );
        assert_eq!(
            n.div_exact(&Nat::cst(0)).eval(&env),
            Err(EvalError::DivisionByZero)
        );
        assert_eq!(
            n.div_exact(&Nat::cst(4)).eval(&env),
            Err(EvalError::InexactDivision {
                numerator: 3,
                denominator: 2
            })
        );
        assert_eq!(n.div_exact(&Nat::cst(3)).eval(&env), Ok(2));
        assert_eq!((&n * i64::MAX).eval(&env), Err(EvalError::Overflow));
        assert!(!EvalError::Overflow.to_string().is_empty());
    }
}
