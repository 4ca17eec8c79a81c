//! Symbolic natural-number arithmetic for array sizes and indices.
//!
//! RISE types track array sizes symbolically (`n*32`, `n /^ 32`), and code
//! generation produces index expressions such as `(i*m + j) / m`. This crate
//! provides [`Nat`], a symbolic expression over named [`Var`]iables that is
//! **always kept in a canonical normal form**, plus range reasoning that
//! removes `/` and `%` where the variables' ranges prove it possible.
//!
//! # Design
//!
//! * **Normal form** ([`nat`](crate::Nat)): a sum of terms, each a rational
//!   coefficient times a product of *atoms* (variables, `/`, `%`, `min`,
//!   `max`, symbolic powers) with integer exponents. Every constructor and
//!   operator normalises eagerly: sums are flattened and sorted, constants
//!   folded, like terms collected, products distributed over sums, powers
//!   merged. Equal polynomials are therefore structurally equal (`==`).
//! * **Exact division** `a /^ d` multiplies by `d^-1`: a constant divisor
//!   becomes a rational coefficient (`n /^ 32` is `(1/32)*n`, and
//!   `(n /^ 32) * 32` is `n` again), a monomial divisor a negative power
//!   (`(n*m) /^ m = n`), and a sum divisor is first tried by exact polynomial
//!   division before being kept as a negative power of the sum.
//! * **Range reasoning** (`bounds`): symbolic bounds by eliminating
//!   variables and atoms one at a time through monotonicity, innermost range
//!   first, so symbolic ranges cancel (`i*k + j < n*k` for `i < n`, `j < k`).
//!   All proofs are sound: `false`/`None` only means "could not prove".
//! * **Simplification** (`simplify`): `/`, `%`, `min`, `max` are built by
//!   constructors that apply algebraic and range-based rules eagerly, e.g.
//!   `(i*k + j) / k = i` and `(i*k + j) % k = j` when `0 <= j < k`.
//! * **Evaluation** uses C semantics (truncating `/` and `%`) with checked
//!   arithmetic; printing produces RISE syntax ([`std::fmt::Display`]) or C
//!   ([`Nat::to_c`]).
//!
//! There is no global state; all reasoning is bounded by a per-query budget.
//!
//! # Modules
//!
//! `nat` (representation, invariants), `algebra` (products, exact division,
//! powers), `simplify` (`/`, `%`, `min`, `max` constructors and their rules),
//! `bounds` (range reasoning), `subst` (substitution, re-normalisation),
//! `solve` (linear equations), `eval` (C semantics), `print` (RISE and C
//! syntax), `ops` (operators), `rat` (checked rationals), `var`.
//!
//! # Assumptions and caveats
//!
//! * Variables denote naturals within their ranges; simplifications that use
//!   ranges are only valid for such assignments.
//! * An exact division `a /^ d` asserts that `d` divides `a`; in particular a
//!   range bound such as `i in [0, n /^ 32)` lets the simplifier use that
//!   `n /^ 32` is an integer.
//! * Variables are identified by name; use one range per name.
//! * Division by zero (`x /^ 0`, `x / 0`) yields one canonical undefined
//!   value, printed `1 /^ 0`, whose evaluation fails.
//! * `Nat: Ord`, so on an **owned** receiver `a.min(&b)` is the trait method
//!   [`Ord::min`] (a type error with `&b`, and structural order with `b`):
//!   write `Nat::min(&a, &b)` / `Nat::max(&a, &b)` or `(&a).min(&b)`.
//!
//! ```
//! use arith::{Nat, Var};
//! let (n, k) = (Var::new("n"), Var::new("k"));
//! let i = Var::with_range("i", Nat::cst(0), Nat::var(&n));
//! let j = Var::with_range("j", Nat::cst(0), Nat::var(&k));
//! let idx = Nat::var(&i) * Nat::var(&k) + Nat::var(&j);
//! assert_eq!(idx.floor_div(&Nat::var(&k)), Nat::var(&i));
//! assert_eq!(idx.modulo(&Nat::var(&k)), Nat::var(&j));
//! assert!(idx.prove_lt(&(Nat::var(&n) * Nat::var(&k))));
//! assert_eq!(idx.to_string(), "i*k+j");
//! assert_eq!(Nat::var(&n).div_exact(&Nat::cst(32)) * 32, Nat::var(&n));
//! ```
#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod algebra;
mod bounds;
mod eval;
mod nat;
mod ops;
mod parts;
mod print;
mod rat;
mod simplify;
mod solve;
mod subst;
mod var;

use std::collections::{BTreeSet, HashMap};

pub use eval::EvalError;
pub use nat::Nat;
pub use var::Var;

use bounds::{int_bound, Dir};

impl Nat {
    /// Exact division `self /^ d`, valid only where `d` divides `self` (as
    /// in `split`): `(n /^ 32) * 32 == n`, `(n*32) /^ 32 == n`,
    /// `1024 /^ 32 == 32`. Common factors cancel (`(4*n + 8) /^ 4 = n + 2`).
    pub fn div_exact(&self, d: &Nat) -> Nat {
        self.div_exact_nat(d)
    }

    /// C-like division `self / d` (floor for non-negative operands).
    pub fn floor_div(&self, d: &Nat) -> Nat {
        simplify::floor_div(self, d)
    }

    /// C-like remainder `self % d`.
    pub fn modulo(&self, d: &Nat) -> Nat {
        simplify::modulo(self, d)
    }

    /// Bitwise exclusive or of two naturals, `xor(self, o)`: folded where both are
    /// constants, `xor(x, 0) = x` and `xor(x, x) = 0`; otherwise kept as it is (its
    /// range: below the power of two above both arguments' upper bounds).
    pub fn xor(&self, o: &Nat) -> Nat {
        simplify::xor(self, o)
    }

    /// Power `self ^ e`; small constant exponents are expanded.
    pub fn pow(&self, e: &Nat) -> Nat {
        self.pow_nat(e)
    }

    /// `min(self, o)`, removed when the ranges order the arguments.
    ///
    /// Call as `Nat::min(&a, &b)` on owned values: `a.min(b)` would resolve
    /// to [`Ord::min`].
    pub fn min(&self, o: &Nat) -> Nat {
        simplify::min_max(self, o, true)
    }

    /// `max(self, o)`, removed when the ranges order the arguments.
    ///
    /// Call as `Nat::max(&a, &b)` on owned values: `a.max(b)` would resolve
    /// to [`Ord::max`].
    pub fn max(&self, o: &Nat) -> Nat {
        simplify::min_max(self, o, false)
    }

    /// The variables occurring in the expression (not those only occurring
    /// in the ranges of these variables).
    pub fn free_vars(&self) -> BTreeSet<Var> {
        let mut out = BTreeSet::new();
        subst::collect_vars(self, &mut out);
        out
    }

    /// Does `v` occur in the expression?
    pub fn contains_var(&self, v: &Var) -> bool {
        self.free_vars().contains(v)
    }

    /// Replaces `v` by `by` and re-normalises.
    pub fn substitute(&self, v: &Var, by: &Nat) -> Nat {
        if !self.contains_var(v) {
            return self.clone();
        }
        subst::rebuild(self, &|w| (w == v).then(|| by.clone()))
    }

    /// Replaces all variables of `map` simultaneously and re-normalises.
    pub fn substitute_all(&self, map: &HashMap<Var, Nat>) -> Nat {
        if map.is_empty() {
            return self.clone();
        }
        subst::rebuild(self, &|w| map.get(w).cloned())
    }

    /// Evaluates with C semantics for `/` and `%` (truncation). Errors on an
    /// unbound variable, a division by zero, an inexact `/^` or overflow.
    pub fn eval(&self, env: &dyn Fn(&Var) -> Option<i64>) -> Result<i64, EvalError> {
        eval::eval(self, env)
    }

    /// A valid C expression (fully parenthesised, variables by name; exact
    /// division prints as `/`).
    pub fn to_c(&self) -> String {
        print::print(self, print::Mode::C)
    }

    /// Solves `lhs == rhs` for `v` when `v` occurs linearly (`a*v + rest`):
    /// returns `(rhs - rest) /^ a`. `None` when `v` does not occur, occurs
    /// non-linearly or under `/`, `%`, `min`, `max` or a power.
    pub fn solve_for(lhs: &Nat, rhs: &Nat, v: &Var) -> Option<Nat> {
        solve::solve_for(lhs, rhs, v)
    }

    /// A proven constant lower bound, using the variables' ranges
    /// (a variable without range is only known to be `>= 0`).
    pub fn lower_bound(&self) -> Option<i64> {
        int_bound(self, Dir::Lo)
    }

    /// A proven symbolic upper bound: an expression `B` with `self <= B` for every value of
    /// the variables within their ranges, with ranged variables eliminated where the
    /// reasoning can (the expression itself when it cannot).
    pub fn upper_bound_expr(&self) -> Nat {
        bounds::bound(self, Dir::Hi, &mut bounds::Ctx::new())
    }

    /// A proven constant (inclusive) upper bound, if any.
    pub fn upper_bound(&self) -> Option<i64> {
        int_bound(self, Dir::Hi)
    }

    /// Proves `self < o` for all values of the variables within their
    /// ranges; `false` means "could not prove".
    pub fn prove_lt(&self, o: &Nat) -> bool {
        o.sub_nat(self).lower_bound().is_some_and(|l| l >= 1)
    }

    /// Proves `self <= o`; `false` means "could not prove".
    pub fn prove_le(&self, o: &Nat) -> bool {
        o.sub_nat(self).lower_bound().is_some_and(|l| l >= 0)
    }

    /// Proves `self >= 0`; `false` means "could not prove".
    pub fn prove_nonneg(&self) -> bool {
        self.lower_bound().is_some_and(|l| l >= 0)
    }

    /// Range-aware simplification: rebuilds the expression bottom-up through
    /// the normalising constructors, which remove `/`, `%`, `min` and `max`
    /// where the variables' ranges allow. Expressions built with this crate's
    /// constructors are already simplified, so this is mostly a no-op.
    pub fn simplify(&self) -> Nat {
        subst::rebuild(self, &|_| None)
    }
}

/// Constructors shared by the unit tests of every module.
#[cfg(test)]
mod test_support {
    use crate::{Nat, Var};

    /// An unbounded variable.
    pub fn v(name: &str) -> Nat {
        Nat::var(&Var::new(name))
    }

    /// A variable with the range `lo <= name < hi`.
    pub fn ranged(name: &str, lo: Nat, hi: Nat) -> Nat {
        Nat::var(&Var::with_range(name, lo, hi))
    }
}
