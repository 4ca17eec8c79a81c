//! Size constraints: what a definition's type needs of its sizes beyond being
//! natural numbers.
//!
//! RISE types say `split 32 : (m*32).t -> m.32.t`; on an `n`-element array the
//! checker solves `m = n /^ 32`, which is a size only when 32 divides `n`.
//! Likewise `take 10` on `n` elements leaves `n - 10`, a size only when
//! `n >= 10`, a constant index `at 3` needs `3 < n`, and `padClamp 1 1` needs an
//! element to repeat. The type checker collects these conditions
//! (`crate::infer`): those it can decide (all sizes constant) are type errors,
//! the others are kept with the definition's scheme
//! ([`crate::infer::CheckedDef::constraints`]) and printed by `shine check` as
//! `where 32 divides n`. Where the sizes become known (`shine run`, `shine eval`,
//! the generated entry points) [`SizeConstraint::check`] tells whether they hold,
//! before anything is computed.
//!
//! Each constraint is a relation between two [`Nat`]s over the definition's size
//! parameters, so that another back end can test it too ([`SizeConstraint::to_c`]).

use crate::expr::{Arg, Expr, ExprKind, Literal};
use crate::primitives::Prim;
use crate::types::{DataType, Name, Type, TypeArg};
use arith::{Nat, Var};
use std::collections::BTreeSet;
use std::fmt;

/// A condition on sizes, over the size parameters of a definition.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum SizeConstraint {
    /// `divisor` divides `value` exactly (`split`, `asVector`, the step of `slide`).
    Divides {
        /// The divisor (`32`).
        divisor: Nat,
        /// The value it must divide (`n`).
        value: Nat,
    },
    /// `value >= bound` (`take`, `drop`, `slide`, the pads that repeat elements).
    AtLeast {
        /// The size that must be large enough (`n`).
        value: Nat,
        /// Its lower bound (`10`).
        bound: Nat,
    },
    /// `index < size`: a constant index into an array (`at 3 xs`), a lane of a
    /// vector (`lane k v`).
    InBounds {
        /// The index (`3`).
        index: Nat,
        /// The array's size (`n`).
        size: Nat,
    },
}

/// A constraint that the given sizes do not satisfy.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Violation {
    /// The constraint, over the size parameters.
    pub constraint: SizeConstraint,
    /// The values of the sizes it mentions, by name.
    pub values: Vec<(Name, i64)>,
    /// A size it mentions that has no value (the constraint could not be tested).
    pub unknown: Option<Name>,
    /// A size it computes from the values does not fit in 64 bits (the constraint could
    /// not be tested: `n + 2^63`).
    pub overflows: bool,
}

impl SizeConstraint {
    /// The conditions under which `size`, computed by the checker, is a natural
    /// number: `n /^ 32` needs `32 divides n`, `n - 10` needs `n >= 10`. Conditions
    /// that hold for every value of the variables are left out.
    pub fn natural(size: &Nat) -> Vec<SizeConstraint> {
        let (num, den) = size.as_fraction();
        let (pos, neg) = num.sign_parts();
        let candidates = [
            SizeConstraint::AtLeast {
                value: pos,
                bound: neg,
            },
            SizeConstraint::Divides {
                divisor: den,
                value: num,
            },
        ];
        candidates
            .into_iter()
            .filter(|c| c.decide() != Some(true))
            .collect()
    }

    /// The two sizes it relates.
    pub fn operands(&self) -> [&Nat; 2] {
        match self {
            SizeConstraint::Divides { divisor, value } => [divisor, value],
            SizeConstraint::AtLeast { value, bound } => [value, bound],
            SizeConstraint::InBounds { index, size } => [index, size],
        }
    }

    /// The same constraint with `f` applied to both sizes.
    pub fn map(&self, f: impl Fn(&Nat) -> Nat) -> SizeConstraint {
        match self {
            SizeConstraint::Divides { divisor, value } => SizeConstraint::Divides {
                divisor: f(divisor),
                value: f(value),
            },
            SizeConstraint::AtLeast { value, bound } => SizeConstraint::AtLeast {
                value: f(value),
                bound: f(bound),
            },
            SizeConstraint::InBounds { index, size } => SizeConstraint::InBounds {
                index: f(index),
                size: f(size),
            },
        }
    }

    /// The variables it mentions.
    pub fn free_vars(&self) -> BTreeSet<Var> {
        let [a, b] = self.operands();
        let mut vars = a.free_vars();
        vars.extend(b.free_vars());
        vars
    }

    /// Whether it holds for the sizes given by `env`; `Err` names a size without a
    /// value.
    pub fn holds(&self, env: &dyn Fn(&Var) -> Option<i64>) -> Result<bool, arith::EvalError> {
        let eval = |n: &Nat| n.eval(env);
        Ok(match self {
            SizeConstraint::Divides { divisor, value } => {
                let (d, v) = (eval(divisor)?, eval(value)?);
                if d == 0 {
                    v == 0
                } else {
                    v.checked_rem(d) == Some(0)
                }
            }
            SizeConstraint::AtLeast { value, bound } => eval(value)? >= eval(bound)?,
            SizeConstraint::InBounds { index, size } => eval(index)? < eval(size)?,
        })
    }

    /// `Some(answer)` when the answer does not depend on the sizes' values: a
    /// constraint over constants, or one that holds for all naturals
    /// (`n + 1 >= 1`, `1 divides n`).
    pub fn decide(&self) -> Option<bool> {
        if self.free_vars().is_empty() {
            return self.holds(&|_| None).ok();
        }
        let always = match self {
            SizeConstraint::Divides { divisor, value } => {
                value.as_cst() == Some(0)
                    || value.div_exact(divisor).as_fraction().1.as_cst() == Some(1)
            }
            SizeConstraint::AtLeast { value, bound } => bound.prove_le(value),
            SizeConstraint::InBounds { index, size } => index.prove_lt(size),
        };
        always.then_some(true)
    }

    /// Tests it against the values of the sizes, by name.
    pub fn check(&self, sizes: &[(Name, i64)]) -> Result<(), Violation> {
        let value = |v: &Var| sizes.iter().find(|(n, _)| **n == *v.name()).map(|p| p.1);
        let mut values = Vec::new();
        for v in self.free_vars() {
            match value(&v) {
                Some(x) => values.push((Name::from(v.name()), x)),
                None => {
                    return Err(Violation {
                        constraint: self.clone(),
                        values,
                        unknown: Some(v.name().into()),
                        overflows: false,
                    })
                }
            }
        }
        match self.holds(&value) {
            Ok(true) => Ok(()),
            result => Err(Violation {
                constraint: self.clone(),
                values,
                unknown: None,
                overflows: matches!(result, Err(arith::EvalError::Overflow)),
            }),
        }
    }

    /// A C condition that is true when it holds (sizes by name, as in the
    /// generated code; an exact division prints as `/`).
    pub fn to_c(&self) -> String {
        match self {
            SizeConstraint::Divides { divisor, value } => {
                let (d, v) = (divisor.to_c(), value.to_c());
                format!("(({d}) == 0 ? ({v}) == 0 : ({v}) % ({d}) == 0)")
            }
            SizeConstraint::AtLeast { value, bound } => {
                format!("({}) >= ({})", value.to_c(), bound.to_c())
            }
            SizeConstraint::InBounds { index, size } => {
                format!("({}) < ({})", index.to_c(), size.to_c())
            }
        }
    }

    /// What it requires, as a sentence (`32 must divide n`).
    fn requirement(&self) -> String {
        match self {
            SizeConstraint::Divides { divisor, value } => format!("{divisor} must divide {value}"),
            SizeConstraint::AtLeast { value, bound } => format!("{value} must be at least {bound}"),
            SizeConstraint::InBounds { index, size } => {
                format!("the index {index} must be below the size {size}")
            }
        }
    }
}

impl fmt::Display for SizeConstraint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SizeConstraint::Divides { divisor, value } => write!(f, "{divisor} divides {value}"),
            SizeConstraint::AtLeast { value, bound } => write!(f, "{value} >= {bound}"),
            SizeConstraint::InBounds { index, size } => write!(f, "{index} < {size}"),
        }
    }
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.constraint.requirement())?;
        if let Some(v) = &self.unknown {
            return write!(f, ", but the size `{v}` is not known");
        }
        let values: Vec<String> = self
            .values
            .iter()
            .map(|(n, v)| format!("{n} = {v}"))
            .collect();
        match (values.is_empty(), self.overflows) {
            (true, false) => {}
            (false, false) => write!(f, ", but {}", values.join(", "))?,
            (true, true) => f.write_str(", but a size it computes does not fit in 64 bits")?,
            (false, true) => write!(
                f,
                ", but with {} a size it computes does not fit in 64 bits",
                values.join(", ")
            )?,
        }
        Ok(())
    }
}

/// The constraints in a simpler, equivalent form: each lower bound with the
/// terms common to both sides cancelled (`n+2 >= 3` is `n >= 1`), duplicates
/// and the bounds another one implies dropped (`2 < n` makes `0 < n` redundant),
/// in their first order otherwise.
pub fn simplify_all(constraints: Vec<SizeConstraint>) -> Vec<SizeConstraint> {
    let normal: Vec<SizeConstraint> = constraints
        .into_iter()
        .map(|c| match c {
            SizeConstraint::AtLeast { value, bound } => {
                let (value, bound) = (value - bound).sign_parts();
                SizeConstraint::AtLeast { value, bound }
            }
            c => c,
        })
        .collect();
    let mut kept: Vec<SizeConstraint> = Vec::new();
    for (i, c) in normal.iter().enumerate() {
        let redundant = normal
            .iter()
            .enumerate()
            .any(|(j, d)| j != i && d.implies(c) && (!c.implies(d) || j < i));
        if !redundant && c.decide() != Some(true) {
            kept.push(c.clone());
        }
    }
    kept
}

impl SizeConstraint {
    /// For a lower bound, the expression that must be non-negative
    /// (`value - bound`, `size - index - 1`).
    fn slack(&self) -> Option<Nat> {
        match self {
            SizeConstraint::AtLeast { value, bound } => Some(value - bound),
            SizeConstraint::InBounds { index, size } => Some(size - index - Nat::cst(1)),
            SizeConstraint::Divides { .. } => None,
        }
    }

    /// Whether `self` implies `other` whatever the sizes (as far as shown).
    fn implies(&self, other: &SizeConstraint) -> bool {
        if self == other {
            return true;
        }
        match (self.slack(), other.slack()) {
            (Some(a), Some(b)) => (b - a).prove_nonneg(),
            _ => false,
        }
    }
}

/// Tests every constraint against the sizes; the first that fails.
pub fn check_all(constraints: &[SizeConstraint], sizes: &[(Name, i64)]) -> Result<(), Violation> {
    constraints.iter().try_for_each(|c| c.check(sizes))
}

/// What a primitive needs of its sizes beyond its type, for the application of
/// `f` to its argument `a` of type `param`: a constant index below the size
/// (`natAsIndex n 3`), a lane below the vector's width (`lane k`), an element to repeat for the pads that repeat elements
/// (`padClamp l r` on `n` elements: `n >= min(l+r, 1)`).
pub(crate) fn of_application(f: &Expr, param: &Type, a: &Expr) -> Option<SizeConstraint> {
    let (head, args) = f.spine();
    let nat_arg = |i: usize| match args.get(i) {
        Some(Arg::Type(TypeArg::Nat(n))) => Some(n.clone()),
        _ => None,
    };
    match head.as_prim()? {
        Prim::NatAsIndex if args.len() == 1 => match a.kind() {
            ExprKind::Lit(Literal::Nat(i)) => Some(SizeConstraint::InBounds {
                index: i.clone(),
                size: nat_arg(0)?,
            }),
            _ => None,
        },
        // `lane k` on a vector of `n` lanes: `k < n`
        Prim::Lane if args.len() == 1 => {
            let Type::Data(DataType::Vector(n, _)) = param else {
                return None;
            };
            Some(SizeConstraint::InBounds {
                index: nat_arg(0)?,
                size: n.clone(),
            })
        }
        Prim::PadClamp | Prim::PadMirror | Prim::PadWrap if args.len() == 2 => {
            let Type::Data(DataType::Array(n, _)) = param else {
                return None;
            };
            let pad = nat_arg(0)? + nat_arg(1)?;
            Some(SizeConstraint::AtLeast {
                value: n.clone(),
                bound: Nat::min(&pad, &Nat::cst(1)),
            })
        }
        _ => None,
    }
}

/// The constraints of definition `def` of `checked` as a strategy lowered it to
/// `lowered` (of type `scheme`): the checked definition's own and those the
/// lowered expression adds (a strategy's `split 32` adds `32 divides n`).
pub fn of_lowered(
    checked: &crate::infer::CheckedProgram,
    def: &str,
    lowered: &Expr,
    scheme: &Type,
) -> Vec<SizeConstraint> {
    let params = crate::infer::size_params(scheme);
    let mut all = checked
        .def(def)
        .map(|d| d.constraints.clone())
        .unwrap_or_default();
    all.extend(of_expr(lowered, &params));
    simplify_all(all)
}

/// The size constraints of a typed expression over the size parameters
/// `params`: every size in a node's type must be a natural number (`m /^ 32` in
/// the type of a `split 32` that a strategy introduced needs `32 divides m`),
/// and the primitives' own needs ([`of_application`]). Constraints that hold for
/// every size are left out, and so are those on sizes bound inside the
/// expression (the size parameter of a function given to `iterate`), which no
/// caller can test.
pub fn of_expr(e: &Expr, params: &[Name]) -> Vec<SizeConstraint> {
    let mut out = Vec::new();
    collect_expr(e, &mut out);
    out.retain(|c| {
        c.free_vars()
            .iter()
            .all(|v| params.iter().any(|p| **p == *v.name()))
    });
    simplify_all(out)
}

fn collect_expr(e: &Expr, out: &mut Vec<SizeConstraint>) {
    if let Some(t) = e.ty() {
        collect_type(t, out);
    }
    match e.kind() {
        ExprKind::Var(_) | ExprKind::Lit(_) | ExprKind::Prim(_) | ExprKind::Foreign(_) => {}
        ExprKind::Lambda(_, _, b)
        | ExprKind::DepLambda(_, b)
        | ExprKind::DepApp(b, _)
        | ExprKind::Annot(b, _) => collect_expr(b, out),
        ExprKind::App(f, a) => {
            if let Some(Type::Fun(param, _)) = f.ty() {
                out.extend(of_application(f, param, a));
            }
            collect_expr(f, out);
            collect_expr(a, out);
        }
    }
}

fn collect_type(t: &Type, out: &mut Vec<SizeConstraint>) {
    match t {
        Type::Data(d) => collect_data(d, out),
        Type::Fun(a, b) => {
            collect_type(a, out);
            collect_type(b, out);
        }
        Type::DepFun { body, .. } => collect_type(body, out),
        Type::Var(_) => {}
    }
}

fn collect_data(d: &DataType, out: &mut Vec<SizeConstraint>) {
    match d {
        DataType::Index(n) | DataType::NatToDataApp(_, n) => out.extend(SizeConstraint::natural(n)),
        DataType::Array(n, t) | DataType::Vector(n, t) => {
            out.extend(SizeConstraint::natural(n));
            collect_data(t, out);
        }
        DataType::Pair(a, b) => {
            collect_data(a, out);
            collect_data(b, out);
        }
        DataType::Scalar(_) | DataType::NatType | DataType::Var(_) => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn n() -> Nat {
        Nat::var(&Var::new("n"))
    }

    #[test]
    fn a_computed_size_needs_divisibility_and_a_lower_bound() {
        let split = SizeConstraint::natural(&n().div_exact(&Nat::cst(32)));
        assert_eq!(split.len(), 1);
        assert_eq!(split[0].to_string(), "32 divides n");
        let take = SizeConstraint::natural(&(n() - Nat::cst(10)));
        assert_eq!(take.len(), 1);
        assert_eq!(take[0].to_string(), "n >= 10");
        let slide = SizeConstraint::natural(&(n() - Nat::cst(3)).div_exact(&Nat::cst(2)));
        let shown: Vec<String> = slide.iter().map(|c| c.to_string()).collect();
        assert_eq!(shown, ["n >= 3", "2 divides n-3"]);
        assert!(SizeConstraint::natural(&(n() + Nat::cst(1))).is_empty());
    }

    #[test]
    fn a_size_past_64_bits_is_named_not_compared() {
        // `n + 2^62 + 2^62 >= 0` holds for the naturals but cannot be computed in 64 bits
        let big = Nat::cst(1 << 62);
        let c = SizeConstraint::AtLeast {
            value: n() + big.clone() + big,
            bound: Nat::cst(0),
        };
        let err = c.check(&[("n".into(), 4)]).unwrap_err();
        assert!(err.overflows);
        assert!(
            err.to_string()
                .ends_with("but with n = 4 a size it computes does not fit in 64 bits"),
            "{err}"
        );
        // an ordinary violation does not say so
        let small = SizeConstraint::AtLeast {
            value: n(),
            bound: Nat::cst(5),
        };
        let err = small.check(&[("n".into(), 4)]).unwrap_err();
        assert!(!err.overflows);
        assert_eq!(err.to_string(), "n must be at least 5, but n = 4");
    }

    #[test]
    fn check_names_the_constraint_and_the_values() {
        let c = &SizeConstraint::natural(&n().div_exact(&Nat::cst(32)))[0];
        assert_eq!(c.check(&[("n".into(), 64)]), Ok(()));
        let err = c.check(&[("n".into(), 40)]).unwrap_err();
        assert_eq!(err.to_string(), "32 must divide n, but n = 40");
        let err = c.check(&[]).unwrap_err();
        assert_eq!(
            err.to_string(),
            "32 must divide n, but the size `n` is not known"
        );
        let idx = SizeConstraint::InBounds {
            index: Nat::cst(3),
            size: Nat::cst(2),
        };
        assert_eq!(idx.decide(), Some(false));
        assert_eq!(
            idx.check(&[]).unwrap_err().to_string(),
            "the index 3 must be below the size 2"
        );
    }

    #[test]
    fn simplify_all_cancels_and_drops_implied_bounds() {
        let at = |i: i64| SizeConstraint::InBounds {
            index: Nat::cst(i),
            size: n(),
        };
        let shifted = SizeConstraint::AtLeast {
            value: n() + Nat::cst(2),
            bound: Nat::cst(3),
        };
        let all = vec![at(0), shifted, at(2), at(1), at(2)];
        let shown: Vec<String> = simplify_all(all).iter().map(|c| c.to_string()).collect();
        assert_eq!(shown, ["2 < n"]);
        let two = vec![
            SizeConstraint::AtLeast {
                value: n() + Nat::cst(2),
                bound: Nat::cst(3),
            },
            SizeConstraint::Divides {
                divisor: Nat::cst(32),
                value: n(),
            },
        ];
        let shown: Vec<String> = simplify_all(two).iter().map(|c| c.to_string()).collect();
        assert_eq!(shown, ["n >= 1", "32 divides n"]);
    }

    #[test]
    fn decide_knows_what_holds_for_every_size() {
        let ok = SizeConstraint::AtLeast {
            value: n() + Nat::cst(1),
            bound: Nat::cst(1),
        };
        assert_eq!(ok.decide(), Some(true));
        let open = SizeConstraint::AtLeast {
            value: n(),
            bound: Nat::cst(1),
        };
        assert_eq!(open.decide(), None);
        assert_eq!(open.to_c(), "(n) >= (1)");
    }
}
