//! `mapVec`: a scalar function lifted to vectors.

use super::*;

/// The expression of a scalar function applied to a vector, with every
/// operation lifted to vectors of `n` lanes; `None` if it is not scalar.
pub(super) fn vectorized(x: &Exp, n: &Nat) -> Option<Exp> {
    fn lift(x: &Exp, n: &Nat) -> Option<(Exp, bool)> {
        let vec_of = |t: &DataType| match t {
            DataType::Scalar(_) => {
                Some(DataType::Vector(n.clone(), std::sync::Arc::new(t.clone())))
            }
            _ => None,
        };
        let broadcast = |e: Exp| -> Option<Exp> {
            if matches!(e.ty, DataType::Vector(..)) {
                return Some(e);
            }
            let t = vec_of(&e.ty)?;
            Some(Exp::new(ExpKind::VectorFromScalar(e), t))
        };
        Some(match &*x.kind {
            ExpKind::Unary(op, a) => {
                let (a, v) = lift(a, n)?;
                if !v {
                    return Some((x.clone(), false));
                }
                (Exp::new(ExpKind::Unary(*op, a.clone()), a.ty.clone()), true)
            }
            ExpKind::Binary(op, a, b) => {
                let (a, va) = lift(a, n)?;
                let (b, vb) = lift(b, n)?;
                if !(va || vb) {
                    return Some((x.clone(), false));
                }
                let t = match x.ty {
                    DataType::Scalar(_) => vec_of(&x.ty)?,
                    _ => return None,
                };
                (
                    Exp::new(ExpKind::Binary(*op, broadcast(a)?, broadcast(b)?), t),
                    true,
                )
            }
            ExpKind::Math(f, xs) => {
                let lifted = xs.iter().map(|a| lift(a, n)).collect::<Option<Vec<_>>>()?;
                if !lifted.iter().any(|(_, v)| *v) {
                    return Some((x.clone(), false));
                }
                let t = vec_of(&x.ty)?;
                let xs = lifted
                    .into_iter()
                    .map(|(a, _)| broadcast(a))
                    .collect::<Option<Vec<_>>>()?;
                (Exp::new(ExpKind::Math(*f, xs), t), true)
            }
            ExpKind::Select(c, a, b) => {
                let (c, vc) = lift(c, n)?;
                let (a, va) = lift(a, n)?;
                let (b, vb) = lift(b, n)?;
                if vc {
                    return None; // lane-wise conditions are not supported
                }
                if !(va || vb) {
                    return Some((x.clone(), false));
                }
                let t = vec_of(&x.ty)?;
                (
                    Exp::new(ExpKind::Select(c, broadcast(a)?, broadcast(b)?), t),
                    true,
                )
            }
            ExpKind::Cast(a) => {
                let (a, v) = lift(a, n)?;
                if !v {
                    return Some((x.clone(), false));
                }
                (Exp::new(ExpKind::Cast(a), vec_of(&x.ty)?), true)
            }
            // a pair built in the body and taken apart again: the component
            ExpKind::Fst(p) | ExpKind::Snd(p) if matches!(&*p.kind, ExpKind::Pair(..)) => {
                let ExpKind::Pair(a, b) = &*p.kind else {
                    unreachable!("matched above")
                };
                lift(
                    if matches!(&*x.kind, ExpKind::Fst(_)) {
                        a
                    } else {
                        b
                    },
                    n,
                )?
            }
            _ => {
                let v = matches!(x.ty, DataType::Vector(..));
                // The argument was substituted with its scalar type kept around it: a
                // scalar node over a vector is an operation not lifted above, whose
                // lanes would be lost.
                if !v && (!matches!(x.ty, DataType::Scalar(_)) || mentions_vector(x)) {
                    return None;
                }
                (x.clone(), v)
            }
        })
    }
    fn mentions_vector(x: &Exp) -> bool {
        exp_children(x)
            .into_iter()
            .any(|c| matches!(c.ty, DataType::Vector(..)) || mentions_vector(c))
    }
    let (e, v) = lift(x, n)?;
    if v {
        Some(e)
    } else {
        let t = DataType::Vector(n.clone(), std::sync::Arc::new(e.ty.clone()));
        matches!(e.ty, DataType::Scalar(_)).then(|| Exp::new(ExpKind::VectorFromScalar(e), t))
    }
}
