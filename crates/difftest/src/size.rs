//! Array sizes as polynomials over the definition's size variables, with non-negative
//! coefficients, so that the generator knows which sizes are equal (as the checker's
//! canonical forms do) and which divisions and subtractions are exact for every value.

use std::collections::BTreeMap;
use std::fmt;

/// The names of the size variables, by index.
pub const VARS: [&str; 2] = ["n", "m"];

/// A polynomial: monomials (sorted variable indices, the empty one for the constant) to
/// their positive coefficients.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Size(BTreeMap<Vec<u8>, i64>);

impl Size {
    /// The constant `c`.
    pub fn cst(c: i64) -> Size {
        let mut m = BTreeMap::new();
        if c != 0 {
            m.insert(Vec::new(), c);
        }
        Size(m)
    }

    /// The variable with index `v`.
    pub fn var(v: u8) -> Size {
        Size(BTreeMap::from([(vec![v], 1)]))
    }

    /// The constant part.
    pub fn constant(&self) -> i64 {
        self.0.get(&Vec::new()).copied().unwrap_or(0)
    }

    /// Whether the size has no variable.
    pub fn is_constant(&self) -> bool {
        self.0.keys().all(|k| k.is_empty())
    }

    /// `self + other`.
    pub fn add(&self, other: &Size) -> Size {
        let mut m = self.0.clone();
        for (k, c) in &other.0 {
            *m.entry(k.clone()).or_insert(0) += c;
        }
        Size(m)
    }

    /// `self * other`.
    pub fn mul(&self, other: &Size) -> Size {
        let mut m: BTreeMap<Vec<u8>, i64> = BTreeMap::new();
        for (a, x) in &self.0 {
            for (b, y) in &other.0 {
                let mut k: Vec<u8> = a.iter().chain(b).copied().collect();
                k.sort_unstable();
                *m.entry(k).or_insert(0) += x * y;
            }
        }
        Size(m)
    }

    /// `self - c`, when the constant part is at least `c` (so it is a size for every value
    /// of the variables).
    pub fn sub_const(&self, c: i64) -> Option<Size> {
        let k = self.constant();
        (k >= c).then(|| {
            let mut m = self.0.clone();
            if k == c {
                m.remove(&Vec::new());
            } else {
                m.insert(Vec::new(), k - c);
            }
            Size(m)
        })
    }

    /// `self / k`, when `k` divides every coefficient.
    pub fn div_const(&self, k: i64) -> Option<Size> {
        (k > 0 && self.0.values().all(|c| c % k == 0))
            .then(|| Size(self.0.iter().map(|(m, c)| (m.clone(), c / k)).collect()))
    }

    /// The value at the given values of the variables.
    pub fn eval(&self, vals: &[i64]) -> i64 {
        self.0
            .iter()
            .map(|(m, c)| c * m.iter().map(|&v| vals[v as usize]).product::<i64>())
            .sum()
    }

    /// The smallest value for variables of at least 1.
    pub fn min_value(&self) -> i64 {
        self.0.values().sum()
    }

    /// The size as a `natType` expression (`(n + (2 : natType))`): in an expression an
    /// integer literal is an `int`, so every constant is annotated.
    pub fn nat_expr(&self) -> String {
        let terms: Vec<String> = self
            .0
            .iter()
            .rev()
            .map(|(m, c)| {
                let mut factors: Vec<String> =
                    m.iter().map(|&v| VARS[v as usize].to_string()).collect();
                if *c != 1 || factors.is_empty() {
                    factors.insert(0, format!("({c} : natType)"));
                }
                factors.join(" * ")
            })
            .collect();
        match terms.len() {
            0 => "(0 : natType)".into(),
            1 if !terms[0].contains(" * ") => terms[0].clone(),
            _ => format!("({})", terms.join(" + ")),
        }
    }

    /// The indices of the variables it uses.
    pub fn vars(&self) -> impl Iterator<Item = u8> + '_ {
        self.0.keys().flatten().copied()
    }
}

impl fmt::Display for Size {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0.is_empty() {
            return write!(f, "0");
        }
        let terms: Vec<String> = self
            .0
            .iter()
            .rev()
            .map(|(m, c)| {
                let vars: Vec<&str> = m.iter().map(|&v| VARS[v as usize]).collect();
                match (vars.is_empty(), *c) {
                    (true, c) => c.to_string(),
                    (false, 1) => vars.join("*"),
                    (false, c) => format!("{c}*{}", vars.join("*")),
                }
            })
            .collect();
        if terms.len() == 1 && self.0.len() == 1 && self.0.keys().all(|k| k.len() <= 1) {
            let only = &terms[0];
            if !only.contains('*') {
                return write!(f, "{only}");
            }
        }
        write!(f, "({})", terms.join("+"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arithmetic_and_printing() {
        let n = Size::var(0);
        let m = Size::var(1);
        let s = n.mul(&Size::cst(4)).add(&Size::cst(3));
        assert_eq!(s.to_string(), "(4*n+3)");
        assert_eq!(s.eval(&[5, 0]), 23);
        assert_eq!(
            s.sub_const(3).unwrap().div_const(2).unwrap().to_string(),
            "(2*n)"
        );
        assert_eq!(s.sub_const(4), None);
        assert_eq!(s.div_const(2), None);
        assert_eq!(n.mul(&m).add(&n).to_string(), "(n*m+n)");
        assert_eq!(n.to_string(), "n");
        assert_eq!(Size::cst(7).to_string(), "7");
        assert_eq!(n.mul(&m).min_value(), 1);
        assert_eq!(n.nat_expr(), "n");
        assert_eq!(Size::cst(3).nat_expr(), "(3 : natType)");
        assert_eq!(Size::cst(0).nat_expr(), "(0 : natType)");
        assert_eq!(s.nat_expr(), "((4 : natType) * n + (3 : natType))");
        assert_eq!(n.mul(&m).add(&n).nat_expr(), "(n * m + n)");
    }
}
