//! What the views of a translated program require of its sizes.
//!
//! The front end finds the constraints of a definition's type ([`rise::constraints`]),
//! but only those in terms of the definition's sizes: a `split 3` inside `iterate`'s
//! step function, whose size is the step's own `l`, says nothing there. Translation
//! instantiates every such size (`iterate` unrolls its steps), so the views of the
//! imperative program are in terms of the program's sizes and constants only, and each
//! view that divides or shortens an array states its requirement again here
//! ([`View::requirements`]; `asVector n` needs what `split n` needs), and a `scatter`
//! of `n` values into `m` positions needs `n >= m` (every position written).

use crate::imperative::{AccKind, ExpKind, Program};
use crate::view::{Requirement, View};
use crate::walk::Node;
use arith::Nat;
use rise::constraints::SizeConstraint;
use rise::DataType;

/// The requirements of every view of `program` (in terms of its sizes and constants),
/// in the order found, duplicates removed.
pub fn of_views(program: &Program) -> Vec<SizeConstraint> {
    let mut out: Vec<SizeConstraint> = Vec::new();
    let mut add = |c: SizeConstraint| {
        if !out.contains(&c) {
            out.push(c);
        }
    };
    Node::Comm(&program.body).visit(&mut |node| match node {
        Node::Exp(e) => match &*e.kind {
            ExpKind::View(v, a) => requirements(v, &a.ty).into_iter().for_each(&mut add),
            ExpKind::AsVector(n, a) => requirements(&View::Split(n.clone()), &a.ty)
                .into_iter()
                .for_each(&mut add),
            _ => {}
        },
        Node::Acc(acc) => match &*acc.kind {
            AccKind::View(v, a) => requirements(v, &a.ty).into_iter().for_each(&mut add),
            AccKind::AsVector(n, a) => requirements(&View::Split(n.clone()), &a.ty)
                .into_iter()
                .for_each(&mut add),
            // `scatter`: `n` values, each to a distinct one of `m` positions, write every
            // position when `n >= m` (more values find a position written twice)
            AccKind::Map(_, inner) => {
                if let AccKind::At(a, _, Some(_)) = &*inner.kind {
                    if let (Some(n), Some(m)) = (length(&acc.ty), length(&a.ty)) {
                        add(at_least(n, m));
                    }
                }
            }
            _ => {}
        },
        Node::Comm(_) => {}
    });
    out
}

/// The requirements of view `v` on an operand of type `ty`, as size constraints.
fn requirements(v: &View, ty: &DataType) -> Vec<SizeConstraint> {
    let Some(len) = length(ty) else {
        return vec![];
    };
    v.requirements(len)
        .into_iter()
        .map(|r| match r {
            Requirement::Divides(d, n) => divides(&d, &n),
            Requirement::AtLeast(a, b) => at_least(&a, &b),
        })
        .collect()
}

/// The number of elements of an array type.
fn length(ty: &DataType) -> Option<&Nat> {
    match ty {
        DataType::Array(n, _) => Some(n),
        _ => None,
    }
}

fn divides(divisor: &Nat, value: &Nat) -> SizeConstraint {
    SizeConstraint::Divides {
        divisor: divisor.simplify(),
        value: value.simplify(),
    }
}

fn at_least(value: &Nat, bound: &Nat) -> SizeConstraint {
    SizeConstraint::AtLeast {
        value: value.simplify(),
        bound: bound.simplify(),
    }
}
