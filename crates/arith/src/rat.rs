//! Exact rational numbers over `i128` with checked arithmetic.
//!
//! Coefficients of normal-form terms are rationals so that exact division
//! (`n /^ 32`) can be represented as the coefficient `1/32`. Every operation
//! is checked: `None` means overflow, and callers keep the expression
//! symbolic instead of panicking.

/// A reduced rational number `num / den` with `den > 0`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) struct Rat {
    pub(crate) num: i128,
    pub(crate) den: i128,
}

pub(crate) fn gcd(a: i128, b: i128) -> i128 {
    let (mut a, mut b) = (a.unsigned_abs(), b.unsigned_abs());
    while b != 0 {
        let t = a % b;
        a = b;
        b = t;
    }
    i128::try_from(a).unwrap_or(i128::MAX)
}

impl Rat {
    pub(crate) const ZERO: Rat = Rat { num: 0, den: 1 };
    pub(crate) const ONE: Rat = Rat { num: 1, den: 1 };

    pub(crate) fn int(v: i128) -> Rat {
        Rat { num: v, den: 1 }
    }

    /// Builds `num / den` in lowest terms; `None` on a zero denominator or overflow.
    pub(crate) fn new(num: i128, den: i128) -> Option<Rat> {
        if den == 0 {
            return None;
        }
        let g = gcd(num, den).max(1);
        let (mut n, mut d) = (num / g, den / g);
        if d < 0 {
            n = n.checked_neg()?;
            d = d.checked_neg()?;
        }
        Some(Rat { num: n, den: d })
    }

    pub(crate) fn is_zero(self) -> bool {
        self.num == 0
    }

    pub(crate) fn is_int(self) -> bool {
        self.den == 1
    }

    pub(crate) fn add(self, o: Rat) -> Option<Rat> {
        let g = gcd(self.den, o.den);
        let l = (self.den / g).checked_mul(o.den)?;
        let a = self.num.checked_mul(l / self.den)?;
        let b = o.num.checked_mul(l / o.den)?;
        Rat::new(a.checked_add(b)?, l)
    }

    pub(crate) fn neg(self) -> Option<Rat> {
        Some(Rat {
            num: self.num.checked_neg()?,
            den: self.den,
        })
    }

    pub(crate) fn sub(self, o: Rat) -> Option<Rat> {
        self.add(o.neg()?)
    }

    pub(crate) fn mul(self, o: Rat) -> Option<Rat> {
        let g1 = gcd(self.num, o.den).max(1);
        let g2 = gcd(o.num, self.den).max(1);
        let n = (self.num / g1).checked_mul(o.num / g2)?;
        let d = (self.den / g2).checked_mul(o.den / g1)?;
        Rat::new(n, d)
    }

    pub(crate) fn recip(self) -> Option<Rat> {
        Rat::new(self.den, self.num)
    }

    /// `self ^ e` for any integer exponent (negative exponents invert).
    pub(crate) fn powi(self, e: i64) -> Option<Rat> {
        let base = if e < 0 { self.recip()? } else { self };
        let mut e = e.unsigned_abs();
        if e == 0 {
            return Some(Rat::ONE);
        }
        if base.is_zero() || base == Rat::ONE {
            return Some(base);
        }
        if base == Rat::int(-1) {
            return Some(if e & 1 == 0 { Rat::ONE } else { base });
        }
        let (mut acc, mut sq) = (Rat::ONE, base);
        loop {
            if e & 1 == 1 {
                acc = acc.mul(sq)?;
            }
            e >>= 1;
            if e == 0 {
                return Some(acc);
            }
            sq = sq.mul(sq)?;
        }
    }

    /// Largest integer `<= self`.
    pub(crate) fn floor(self) -> i128 {
        self.num.div_euclid(self.den)
    }

    /// Smallest integer `>= self`.
    pub(crate) fn ceil(self) -> i128 {
        -((-self.num).div_euclid(self.den))
    }

    /// Numeric comparison (the derived `Ord` is only structural).
    pub(crate) fn cmp_num(self, o: Rat) -> std::cmp::Ordering {
        match self.sub(o) {
            Some(d) => d.num.cmp(&0),
            None => (self.num as f64 / self.den as f64)
                .partial_cmp(&(o.num as f64 / o.den as f64))
                .unwrap_or(std::cmp::Ordering::Equal),
        }
    }
}
