//! Random inputs and random well-typed terms, for checking rewrites against
//! the interpreter (the property tests, `shine fsmooth simplify --verify`).
//!
//! Everything is driven by a small deterministic generator ([`Rng`]), so a
//! seed reproduces a case exactly. Term generation picks bound-variable names
//! from a small pool (`x`, `y`, `i`, `j`, `a`) so that shadowing and potential
//! variable capture are common: the situations substitution must get right.

use crate::expr::{Expr, Name, Prim};
use crate::interp::Value;
use crate::types::Type;
use std::sync::Arc;

/// A small, fast, deterministic random generator (SplitMix64).
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    /// A generator from a seed.
    pub fn new(seed: u64) -> Rng {
        Rng(seed ^ 0x853c_49e6_748f_ea9b)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A number in `0..n` (`0` when `n == 0`).
    pub fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            0
        } else {
            (self.next_u64() % n as u64) as usize
        }
    }

    /// A number in `lo..=hi`.
    pub fn between(&mut self, lo: i64, hi: i64) -> i64 {
        lo + self.below((hi - lo + 1).max(1) as usize) as i64
    }

    /// A `Double` in `[lo, hi)`.
    pub fn double(&mut self, lo: f64, hi: f64) -> f64 {
        let unit = (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
        lo + (hi - lo) * unit
    }

    /// `true` with probability `p`.
    pub fn chance(&mut self, p: f64) -> bool {
        self.double(0.0, 1.0) < p
    }

    /// One of the items.
    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
}

/// How random input values look.
#[derive(Clone, Debug)]
pub struct ValueShape {
    /// The shortest array.
    pub min_len: usize,
    /// The longest array.
    pub max_len: usize,
    /// `Double`s are drawn from `[-range, range)`.
    pub range: f64,
    /// `Index` values are drawn from `0..=max_index`.
    pub max_index: i64,
}

impl Default for ValueShape {
    fn default() -> Self {
        ValueShape {
            min_len: 1,
            max_len: 4,
            range: 2.0,
            max_index: 3,
        }
    }
}

/// The lengths of nested arrays, chosen once per value so that matrices are
/// rectangular (every row of an `Array<Array<T>>` has the same length).
enum Shape {
    Leaf,
    Array(usize, Box<Shape>),
    Pair(Box<Shape>, Box<Shape>),
}

fn shape(ty: &Type, rng: &mut Rng, s: &ValueShape) -> Option<Shape> {
    Some(match ty {
        Type::Double | Type::Index | Type::Bool => Shape::Leaf,
        Type::Array(t) => Shape::Array(
            rng.between(s.min_len as i64, s.max_len.max(s.min_len) as i64) as usize,
            Box::new(shape(t, rng, s)?),
        ),
        Type::Pair(a, b) => Shape::Pair(Box::new(shape(a, rng, s)?), Box::new(shape(b, rng, s)?)),
        Type::Fun(..) => return None,
    })
}

fn fill(ty: &Type, sh: &Shape, rng: &mut Rng, s: &ValueShape) -> Value {
    match (ty, sh) {
        (Type::Double, _) => Value::Double(rng.double(-s.range, s.range)),
        (Type::Index, _) => Value::Index(rng.between(0, s.max_index)),
        (Type::Bool, _) => Value::Bool(rng.chance(0.5)),
        (Type::Array(t), Shape::Array(n, inner)) => {
            Value::Array((0..*n).map(|_| fill(t, inner, rng, s)).collect())
        }
        (Type::Pair(a, b), Shape::Pair(x, y)) => {
            Value::Pair(Arc::new((fill(a, x, rng, s), fill(b, y, rng, s))))
        }
        // Shapes are made from the same type, so the other cases do not occur.
        _ => Value::Index(0),
    }
}

/// A random value of a first-order type (`None` for types with functions).
pub fn random_value(ty: &Type, rng: &mut Rng, s: &ValueShape) -> Option<Value> {
    let sh = shape(ty, rng, s)?;
    Some(fill(ty, &sh, rng, s))
}

/// A random value with the same array lengths as `like` (a tangent for it).
pub fn random_like(like: &Value, rng: &mut Rng, range: f64) -> Value {
    match like {
        Value::Double(_) => Value::Double(rng.double(-range, range)),
        Value::Array(a) => Value::Array(a.iter().map(|v| random_like(v, rng, range)).collect()),
        Value::Pair(p) => Value::Pair(Arc::new((
            random_like(&p.0, rng, range),
            random_like(&p.1, rng, range),
        ))),
        other => other.clone(),
    }
}

/// The names bound variables get: few, so that shadowing is common.
const BINDERS: &[&str] = &["x", "y", "i", "j", "a"];

/// A generator of random well-typed terms over variables of given types.
pub struct TermGen<'r> {
    /// The random source.
    pub rng: &'r mut Rng,
    scope: Vec<(Name, Type)>,
}

impl<'r> TermGen<'r> {
    /// A generator for terms whose free variables have the given types.
    pub fn new(rng: &'r mut Rng, scope: &[(Name, Type)]) -> TermGen<'r> {
        TermGen {
            rng,
            scope: scope.to_vec(),
        }
    }

    /// Runs `f` with `x : ty` in scope.
    pub fn with_var<R>(&mut self, x: &Name, ty: &Type, f: impl FnOnce(&mut Self) -> R) -> R {
        self.scope.push((x.clone(), ty.clone()));
        let r = f(self);
        self.scope.pop();
        r
    }

    /// A binder name from the small pool.
    pub fn binder(&mut self) -> Name {
        (*self.rng.pick(BINDERS)).into()
    }

    /// The visible variables of type `ty`.
    fn vars_of(&self, ty: &Type) -> Vec<Name> {
        let mut seen: Vec<&Name> = Vec::new();
        let mut out = Vec::new();
        for (x, t) in self.scope.iter().rev() {
            if seen.contains(&x) {
                continue;
            }
            seen.push(x);
            if t == ty {
                out.push(x.clone());
            }
        }
        out
    }

    /// Visible function variables returning `ty`, with their argument types.
    fn functions_to(&self, ty: &Type) -> Vec<(Name, Type)> {
        let mut seen: Vec<&Name> = Vec::new();
        let mut out = Vec::new();
        for (x, t) in self.scope.iter().rev() {
            if seen.contains(&x) {
                continue;
            }
            seen.push(x);
            if let Type::Fun(a, r) = t {
                if **r == *ty {
                    out.push((x.clone(), (**a).clone()));
                }
            }
        }
        out
    }

    /// A small random type for `let`-bound values.
    pub fn small_type(&mut self) -> Type {
        match self.rng.below(8) {
            0 | 1 => Type::Double,
            2 => Type::Index,
            3 => Type::Bool,
            4 => Type::vector(),
            5 => Type::pair(Type::Double, Type::Double),
            6 => Type::matrix(),
            _ => Type::fun(Type::Double, Type::Double),
        }
    }

    /// A small index: a literal `0..=2` or an `Index` variable.
    pub fn index(&mut self) -> Expr {
        let vars = self.vars_of(&Type::Index);
        if !vars.is_empty() && self.rng.chance(0.5) {
            Expr::var(self.rng.pick(&vars).clone())
        } else {
            Expr::index(self.rng.between(0, 2))
        }
    }

    /// A random term of type `ty` with at most `depth` levels of constructs.
    pub fn term(&mut self, ty: &Type, depth: u32) -> Expr {
        if depth == 0 || self.rng.chance(0.25) {
            if let Some(e) = self.leaf(ty) {
                return e;
            }
        }
        if depth == 0 {
            return self.specific(ty, 0);
        }
        let d = depth - 1;
        // Constructs that work at every type.
        match self.rng.below(12) {
            0 => {
                let c = self.term(&Type::Bool, d);
                let a = self.term(ty, d);
                let b = self.term(ty, d);
                return Expr::if_(c, a, b);
            }
            1 => {
                let t = self.small_type();
                let v = self.term(&t, d);
                let x = self.binder();
                let body = self.with_var(&x, &t, |g| g.term(ty, d));
                return Expr::let_(x, v, body);
            }
            2 => {
                let t = self.small_type();
                if !matches!(t, Type::Fun(..)) {
                    let x = self.binder();
                    let arg = self.term(&t, d);
                    let body = self.with_var(&x, &t, |g| g.term(ty, d));
                    let ann = self.rng.chance(0.5).then(|| t.clone());
                    return Expr::app(Expr::lam(x, ann, body), arg);
                }
            }
            3 => {
                let fs = self.functions_to(ty);
                if !fs.is_empty() {
                    let (f, a) = self.rng.pick(&fs).clone();
                    let arg = self.term(&a, d);
                    return Expr::app(Expr::var(f), arg);
                }
            }
            4 => {
                // A projection of a pair.
                let other = self.small_type();
                if !matches!(other, Type::Fun(..)) {
                    let first = self.rng.chance(0.5);
                    let pt = if first {
                        Type::pair(ty.clone(), other)
                    } else {
                        Type::pair(other, ty.clone())
                    };
                    if ty.is_first_order() {
                        let p = self.term(&pt, d);
                        return if first { Expr::fst(p) } else { Expr::snd(p) };
                    }
                }
            }
            5 if ty.is_first_order() => {
                // An element of an array.
                let a = self.term(&Type::array(ty.clone()), d);
                let i = self.index();
                return Expr::get(a, i);
            }
            6 if ty.is_first_order() => {
                // A loop.
                let a = self.binder();
                let i = self.binder();
                let z = self.term(ty, d);
                let body =
                    self.with_var(&a, ty, |g| g.with_var(&i, &Type::Index, |g| g.term(ty, d)));
                let n = Expr::index(self.rng.between(0, 3));
                let f = Expr::lam(a, None, Expr::lam(i, None, body));
                return Expr::ifold(f, z, n);
            }
            _ => {}
        }
        self.specific(ty, d)
    }

    fn leaf(&mut self, ty: &Type) -> Option<Expr> {
        let vars = self.vars_of(ty);
        if !vars.is_empty() && self.rng.chance(0.7) {
            return Some(Expr::var(self.rng.pick(&vars).clone()));
        }
        match ty {
            Type::Double => Some(Expr::double(
                *self.rng.pick(&[0.0, 1.0, 0.5, -1.5, 2.0, 3.25, 1.0, 0.0]),
            )),
            Type::Index => Some(Expr::index(self.rng.between(0, 3))),
            Type::Bool => Some(Expr::boolean(self.rng.chance(0.5))),
            _ => vars.first().map(|x| Expr::var(x.clone())),
        }
    }

    /// Constructs specific to the type.
    fn specific(&mut self, ty: &Type, d: u32) -> Expr {
        match ty {
            Type::Double => match self.rng.below(9) {
                0..=2 => {
                    let op = *self.rng.pick(&[Prim::Add, Prim::Sub, Prim::Mul]);
                    Expr::bin(op, self.term(ty, d), self.term(ty, d))
                }
                3 => Expr::un(Prim::Neg, self.term(ty, d)),
                4 => Expr::un(*self.rng.pick(&[Prim::Sin, Prim::Cos]), self.term(ty, d)),
                5 => Expr::un(Prim::ToDouble, self.term(&Type::Index, d)),
                6 => Expr::bin(Prim::Div, self.term(ty, d), Expr::double(2.0)),
                _ => self.leaf(ty).unwrap_or_else(|| Expr::double(1.0)),
            },
            Type::Index => match self.rng.below(5) {
                0 => Expr::bin(Prim::Add, self.term(ty, d), self.term(ty, d)),
                1 => Expr::bin(
                    Prim::Mul,
                    self.term(ty, d),
                    Expr::index(self.rng.between(0, 2)),
                ),
                2 => {
                    let elem = if self.rng.chance(0.5) {
                        Type::Double
                    } else {
                        Type::vector()
                    };
                    Expr::length(self.term(&Type::array(elem), d))
                }
                _ => self.index(),
            },
            Type::Bool => match self.rng.below(6) {
                0 => {
                    let op = *self.rng.pick(&[Prim::Lt, Prim::Le, Prim::Gt, Prim::Ge]);
                    Expr::bin(op, self.term(&Type::Double, d), self.term(&Type::Double, d))
                }
                1 => {
                    let op = *self.rng.pick(&[Prim::Lt, Prim::Eq, Prim::Ne, Prim::Ge]);
                    Expr::bin(op, self.term(&Type::Index, d), self.term(&Type::Index, d))
                }
                2 => Expr::bin(
                    *self.rng.pick(&[Prim::And, Prim::Or]),
                    self.term(ty, d),
                    self.term(ty, d),
                ),
                3 => Expr::un(Prim::Not, self.term(ty, d)),
                _ => Expr::boolean(self.rng.chance(0.5)),
            },
            Type::Array(t) => {
                let vars = self.vars_of(ty);
                if !vars.is_empty() && self.rng.chance(0.3) {
                    return Expr::var(self.rng.pick(&vars).clone());
                }
                let n = if self.rng.chance(0.3) {
                    let arrays = self.vars_of(&Type::vector());
                    match arrays.first() {
                        Some(a) => Expr::length(Expr::var(a.clone())),
                        None => Expr::index(self.rng.between(1, 3)),
                    }
                } else {
                    Expr::index(self.rng.between(1, 3))
                };
                let i = self.binder();
                let body = self.with_var(&i, &Type::Index, |g| g.term(t, d));
                Expr::build(n, Expr::lam(i, None, body))
            }
            Type::Pair(a, b) => Expr::pair(self.term(a, d), self.term(b, d)),
            Type::Fun(a, r) => {
                let x = self.binder();
                let body = self.with_var(&x, a, |g| g.term(r, d));
                Expr::lam(x, None, body)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::check::infer_expr;

    #[test]
    fn generated_terms_have_the_requested_type() {
        let scope: Vec<(Name, Type)> = vec![
            ("v".into(), Type::vector()),
            ("x".into(), Type::Double),
            ("k".into(), Type::Index),
        ];
        let types = [
            Type::Double,
            Type::Index,
            Type::Bool,
            Type::vector(),
            Type::matrix(),
            Type::pair(Type::Double, Type::vector()),
        ];
        for seed in 0..300 {
            let mut rng = Rng::new(seed);
            let ty = types[seed as usize % types.len()].clone();
            let e = TermGen::new(&mut rng, &scope).term(&ty, 4);
            let t = infer_expr(&scope, &e).unwrap_or_else(|d| panic!("{e}: {}", d.message));
            assert_eq!(t, ty, "{e}");
        }
    }

    #[test]
    fn matrices_are_rectangular() {
        let mut rng = Rng::new(7);
        for _ in 0..50 {
            let Some(Value::Array(rows)) =
                random_value(&Type::matrix(), &mut rng, &ValueShape::default())
            else {
                panic!("not an array")
            };
            let lens: Vec<usize> = rows
                .iter()
                .map(|r| match r {
                    Value::Array(a) => a.len(),
                    _ => 0,
                })
                .collect();
            assert!(lens.windows(2).all(|w| w[0] == w[1]));
        }
    }
}
