//! Index-remapping views, defined once.
//!
//! A [`View`] rearranges an array without moving data: reading the view at a
//! *path* (array indices, pair components and vector lanes, outermost first)
//! reads its operand at another path, [`View::reindex`]. The same equation
//! serves both directions: a read of `View(v, e)` at `p` reads `e` at
//! `v.reindex(p)`, and a write through `View(v, a)` at `p` lands in `a` at
//! `v.reindex(p)` (the write view accepts the view's type, so `splitAcc n`
//! writing `m.n.t` into `(m*n).t` and a read of `split n` share the view
//! `Split(n)`). The place analyses of the translation use it too, so the
//! equation of a view is written here and nowhere else.
//!
//! Views whose reads are not a re-indexing stay constructs of their own:
//! pads, `concat`, `zip`, `generate` and `asVector` (a whole vector) on the
//! read side, `map` and `asVector` on the write side.
//!
//! Adding an index-remapping view: a variant with its equation in
//! [`View::reindex`], its size requirement in [`View::requirements`], the arm
//! that builds it in the translation, and a test below.

use arith::{Nat, Var};
use std::fmt;

/// One step of a path into data.
#[derive(Clone, Debug, PartialEq)]
pub enum PathElem {
    /// An array index.
    Idx(Nat),
    /// The first component of a pair.
    Fst,
    /// The second component of a pair.
    Snd,
    /// A lane of a vector.
    Lane(Nat),
}

/// An index-remapping view; `i`, `j` are array indices, `p` the rest of a path.
#[derive(Clone, Debug, PartialEq)]
pub enum View {
    /// `split n`: `(m*n).t → m.n.t`; `i :: j :: p` is `i*n + j :: p`.
    Split(Nat),
    /// `join` of an operand `n.m.t` (holding `m`): `→ (n*m).t`; `i :: p` is
    /// `i / m :: i % m :: p`.
    Join(Nat),
    /// `transpose`: `n.m.t → m.n.t`; `i :: j :: p` is `j :: i :: p`.
    Transpose,
    /// `slide size step`; `i :: j :: p` is `i*step + j :: p`.
    Slide(Nat, Nat),
    /// `take n`; `i :: p` is `i :: p`.
    Take(Nat),
    /// `drop n`; `i :: p` is `i + n :: p`.
    Drop(Nat),
    /// `asScalar` of an operand `m.vec[t, n]` (holding `n`): `→ (m*n).t`;
    /// `i :: p` is `i / n :: Lane(i % n) :: p`.
    AsScalar(Nat),
    /// `reorder f` with `f = fun v => body`; `i :: p` is `f(i) :: p`.
    Reorder(Var, Nat),
}

/// A path that does not start as a view needs: what it needs.
#[derive(Clone, Debug, PartialEq)]
pub struct BadPath(pub &'static str);

impl View {
    /// The path into the operand that `path` into the view reads or writes.
    pub fn reindex(&self, path: &[PathElem]) -> Result<Vec<PathElem>, BadPath> {
        use PathElem::{Idx, Lane};
        let at = |front: Vec<PathElem>, rest: &[PathElem]| {
            let mut p = front;
            p.extend_from_slice(rest);
            p
        };
        match (self, path) {
            (View::Split(n), [Idx(i), Idx(j), rest @ ..]) => Ok(at(vec![Idx(i * n + j)], rest)),
            (View::Slide(_, sp), [Idx(i), Idx(j), rest @ ..]) => {
                Ok(at(vec![Idx(i * sp + j)], rest))
            }
            (View::Transpose, [Idx(i), Idx(j), rest @ ..]) => {
                Ok(at(vec![Idx(j.clone()), Idx(i.clone())], rest))
            }
            (View::Split(_) | View::Slide(..) | View::Transpose, _) => Err(BadPath("two indices")),
            (View::Join(m), [Idx(i), rest @ ..]) => {
                Ok(at(vec![Idx(i.floor_div(m)), Idx(i.modulo(m))], rest))
            }
            (View::Take(_), [Idx(_), ..]) => Ok(path.to_vec()),
            (View::Drop(n), [Idx(i), rest @ ..]) => Ok(at(vec![Idx(i + n)], rest)),
            (View::AsScalar(n), [Idx(i), rest @ ..]) => {
                Ok(at(vec![Idx(i.floor_div(n)), Lane(i.modulo(n))], rest))
            }
            (View::Reorder(v, f), [Idx(i), rest @ ..]) => {
                Ok(at(vec![Idx(f.substitute(v, i))], rest))
            }
            _ => Err(BadPath("an index")),
        }
    }

    /// The view that writes the operand when the result is written (the
    /// acceptor of the operand's type over memory of the view's type): `split n`
    /// and `join` (of rows of `n`) are each other's, `transpose` its own; the
    /// others have none (an `asScalar` result is written through `asVector`, a
    /// separate acceptor; `slide`, `take`, `drop` and `reorder` are computed and copied).
    pub fn inverse(&self) -> Option<View> {
        match self {
            View::Split(n) => Some(View::Join(n.clone())),
            View::Join(m) => Some(View::Split(m.clone())),
            View::Transpose => Some(View::Transpose),
            View::Slide(..)
            | View::Take(_)
            | View::Drop(_)
            | View::AsScalar(_)
            | View::Reorder(..) => None,
        }
    }

    /// What the view requires of its operand's outer length `len`.
    pub fn requirements(&self, len: &Nat) -> Vec<Requirement> {
        match self {
            View::Split(n) => vec![Requirement::Divides(n.clone(), len.clone())],
            View::Slide(size, step) => vec![
                Requirement::AtLeast(len.clone(), size.clone()),
                Requirement::Divides(step.clone(), len.clone() - size.clone()),
            ],
            View::Take(n) | View::Drop(n) => vec![Requirement::AtLeast(len.clone(), n.clone())],
            // the translation proves that `f` maps `0..len` into itself
            View::Join(_) | View::Transpose | View::AsScalar(_) | View::Reorder(..) => vec![],
        }
    }

    /// The view with `f` applied to its sizes.
    pub fn map_nats(&self, f: impl Fn(&Nat) -> Nat) -> View {
        match self {
            View::Split(n) => View::Split(f(n)),
            View::Join(m) => View::Join(f(m)),
            View::Transpose => View::Transpose,
            View::Slide(sz, sp) => View::Slide(f(sz), f(sp)),
            View::Take(n) => View::Take(f(n)),
            View::Drop(n) => View::Drop(f(n)),
            View::AsScalar(n) => View::AsScalar(f(n)),
            View::Reorder(v, body) => View::Reorder(v.clone(), f(body)),
        }
    }

    /// The name of the view as RISE spells it.
    pub fn name(&self) -> &'static str {
        match self {
            View::Split(_) => "split",
            View::Join(_) => "join",
            View::Transpose => "transpose",
            View::Slide(..) => "slide",
            View::Take(_) => "take",
            View::Drop(_) => "drop",
            View::AsScalar(_) => "asScalar",
            View::Reorder(..) => "reorder",
        }
    }

    /// Writes `name(args, operand)` (read side) or `nameAcc(args, operand)`
    /// (write side), as the DPIA printer shows views.
    pub fn fmt_applied(
        &self,
        f: &mut fmt::Formatter<'_>,
        acc: bool,
        operand: &dyn fmt::Display,
    ) -> fmt::Result {
        let suffix = if acc { "Acc" } else { "" };
        let name = self.name();
        match self {
            View::Split(n) | View::Drop(n) => write!(f, "{name}{suffix}({n}, {operand})"),
            View::Take(n) if !acc => write!(f, "{name}({n}, {operand})"),
            View::Slide(sz, sp) => write!(f, "{name}{suffix}({sz}, {sp}, {operand})"),
            View::Reorder(v, body) => write!(f, "{name}{suffix}({v} => {body}, {operand})"),
            _ => write!(f, "{name}{suffix}({operand})"),
        }
    }
}

/// A requirement a view puts on its operand's length.
#[derive(Clone, Debug, PartialEq)]
pub enum Requirement {
    /// The first divides the second.
    Divides(Nat, Nat),
    /// The first is at least the second.
    AtLeast(Nat, Nat),
}

#[cfg(test)]
mod tests {
    use super::*;
    use PathElem::{Fst, Idx, Lane};

    fn n(c: i64) -> Nat {
        Nat::cst(c)
    }

    fn idx(c: i64) -> PathElem {
        Idx(n(c))
    }

    /// `reorder (fun v => len - 1 - v)`.
    fn reverse(len: i64) -> View {
        let v = Var::new("v");
        View::Reorder(v.clone(), n(len - 1) - Nat::var(&v))
    }

    /// Each view's equation on constant paths, with a rest that is kept.
    #[test]
    fn reindex_follows_each_equation() {
        let cases: Vec<(View, Vec<PathElem>, Vec<PathElem>)> = vec![
            (
                View::Split(n(4)),
                vec![idx(2), idx(3), Fst],
                vec![idx(11), Fst],
            ),
            (View::Join(n(5)), vec![idx(12)], vec![idx(2), idx(2)]),
            (View::Transpose, vec![idx(1), idx(7)], vec![idx(7), idx(1)]),
            (View::Slide(n(3), n(2)), vec![idx(4), idx(1)], vec![idx(9)]),
            (View::Take(n(3)), vec![idx(2), Fst], vec![idx(2), Fst]),
            (View::Drop(n(3)), vec![idx(2)], vec![idx(5)]),
            (View::AsScalar(n(4)), vec![idx(9)], vec![idx(2), Lane(n(1))]),
            (reverse(5), vec![idx(1), Fst], vec![idx(3), Fst]),
        ];
        for (v, path, want) in cases {
            let got = v.reindex(&path).unwrap();
            let got: Vec<PathElem> = got
                .into_iter()
                .map(|p| match p {
                    Idx(i) => Idx(i.simplify()),
                    Lane(l) => Lane(l.simplify()),
                    p => p,
                })
                .collect();
            assert_eq!(got, want, "{v:?} at {path:?}");
        }
    }

    /// Views compose: `split n (join xs)` (with rows of `n`) is `xs` at every index.
    #[test]
    fn split_of_join_is_the_identity() {
        for i in 0..6 {
            for j in 0..4 {
                let flat = View::Split(n(4)).reindex(&[idx(i), idx(j)]).unwrap();
                let back = View::Join(n(4)).reindex(&flat).unwrap();
                let back: Vec<i64> = back
                    .iter()
                    .map(|p| match p {
                        Idx(k) => k.eval(&|_| None).unwrap(),
                        _ => panic!("not an index: {p:?}"),
                    })
                    .collect();
                assert_eq!(back, vec![i, j]);
            }
        }
    }

    #[test]
    fn a_short_path_is_refused_with_what_it_needs() {
        assert_eq!(
            View::Transpose.reindex(&[idx(1)]),
            Err(BadPath("two indices"))
        );
        assert_eq!(View::Drop(n(1)).reindex(&[Fst]), Err(BadPath("an index")));
    }
}
