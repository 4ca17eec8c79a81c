//! What the views of a translated program require of its sizes.
//!
//! The front end finds the constraints of a definition's type ([`rise::constraints`]),
//! but only those in terms of the definition's sizes: a `split 3` inside `iterate`'s
//! step function, whose size is the step's own `l`, says nothing there. Translation
//! instantiates every such size (`iterate` unrolls its steps), so the views of the
//! imperative program are in terms of the program's sizes and constants only, and each
//! view that divides or shortens an array states its requirement again here:
//! `split n` and `asVector n` of `m` elements need `n | m`, `slide sz sp` needs
//! `m >= sz` and `sp | m - sz`, `take n` and `drop n` need `m >= n`.

use crate::imperative::{AccKind, ExpKind, Program};
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
            ExpKind::Split(n, a) | ExpKind::AsVector(n, a) => {
                if let Some(m) = length(&a.ty) {
                    add(divides(n, m));
                }
            }
            ExpKind::Slide(size, step, a) => {
                if let Some(m) = length(&a.ty) {
                    add(at_least(m, size));
                    add(divides(step, &(m.clone() - size.clone())));
                }
            }
            ExpKind::Take(n, a) | ExpKind::Drop(n, a) => {
                if let Some(m) = length(&a.ty) {
                    add(at_least(m, n));
                }
            }
            _ => {}
        },
        Node::Acc(acc) => match &*acc.kind {
            AccKind::Split(n, a) | AccKind::AsVector(n, a) => {
                if let Some(m) = length(&a.ty) {
                    add(divides(n, m));
                }
            }
            AccKind::Drop(n, a) => {
                if let Some(m) = length(&a.ty) {
                    add(at_least(m, n));
                }
            }
            _ => {}
        },
        Node::Comm(_) => {}
    });
    out
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
