//! Arithmetic operators and conversions.

use std::ops::{Add, AddAssign, Mul, MulAssign, Sub, SubAssign};

use crate::{Nat, Var};

macro_rules! binop {
    ($tr:ident, $m:ident, $f:ident) => {
        impl $tr<&Nat> for &Nat {
            type Output = Nat;
            fn $m(self, o: &Nat) -> Nat {
                self.$f(o)
            }
        }
        impl $tr<Nat> for Nat {
            type Output = Nat;
            fn $m(self, o: Nat) -> Nat {
                (&self).$f(&o)
            }
        }
        impl $tr<&Nat> for Nat {
            type Output = Nat;
            fn $m(self, o: &Nat) -> Nat {
                (&self).$f(o)
            }
        }
        impl $tr<Nat> for &Nat {
            type Output = Nat;
            fn $m(self, o: Nat) -> Nat {
                self.$f(&o)
            }
        }
        impl $tr<i64> for Nat {
            type Output = Nat;
            fn $m(self, o: i64) -> Nat {
                (&self).$f(&Nat::cst(o))
            }
        }
        impl $tr<i64> for &Nat {
            type Output = Nat;
            fn $m(self, o: i64) -> Nat {
                self.$f(&Nat::cst(o))
            }
        }
        impl $tr<Nat> for i64 {
            type Output = Nat;
            fn $m(self, o: Nat) -> Nat {
                Nat::cst(self).$f(&o)
            }
        }
        impl $tr<&Nat> for i64 {
            type Output = Nat;
            fn $m(self, o: &Nat) -> Nat {
                Nat::cst(self).$f(o)
            }
        }
    };
}

binop!(Add, add, add_nat);
binop!(Sub, sub, sub_nat);
binop!(Mul, mul, mul_nat);

macro_rules! assignop {
    ($tr:ident, $m:ident, $f:ident) => {
        impl $tr<Nat> for Nat {
            fn $m(&mut self, o: Nat) {
                *self = self.$f(&o);
            }
        }
        impl $tr<&Nat> for Nat {
            fn $m(&mut self, o: &Nat) {
                *self = self.$f(o);
            }
        }
        impl $tr<i64> for Nat {
            fn $m(&mut self, o: i64) {
                *self = self.$f(&Nat::cst(o));
            }
        }
    };
}

assignop!(AddAssign, add_assign, add_nat);
assignop!(SubAssign, sub_assign, sub_nat);
assignop!(MulAssign, mul_assign, mul_nat);

impl std::iter::Sum for Nat {
    fn sum<I: Iterator<Item = Nat>>(it: I) -> Nat {
        it.fold(Nat::zero(), |a, b| a.add_nat(&b))
    }
}

impl std::iter::Product for Nat {
    fn product<I: Iterator<Item = Nat>>(it: I) -> Nat {
        it.fold(Nat::one(), |a, b| a.mul_nat(&b))
    }
}

impl From<i64> for Nat {
    fn from(c: i64) -> Nat {
        Nat::cst(c)
    }
}

impl From<&Var> for Nat {
    fn from(v: &Var) -> Nat {
        Nat::var(v)
    }
}

impl From<Var> for Nat {
    fn from(v: Var) -> Nat {
        Nat::var(&v)
    }
}

impl Default for Nat {
    /// The constant `0`.
    fn default() -> Nat {
        Nat::zero()
    }
}

impl std::fmt::Display for Nat {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&crate::print::print(self, crate::print::Mode::Rise))
    }
}
