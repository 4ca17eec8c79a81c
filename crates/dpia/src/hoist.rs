//! Allocation hoisting: moving `new` out of loops (RISE & Shine §V-C; the OpenCL
//! code of Listing 11 keeps only registers inside its loops).
//!
//! On a GPU, where memory lives decides where it may be allocated:
//! * **global** memory is allocated by the host before the kernels run, so every
//!   global `new` moves to the top of the program;
//! * **local** (shared) memory is declared at the outermost scope of a kernel;
//! * **private** arrays are declared once per thread, at the top of the kernel,
//!   rather than in every iteration of the loops around them.
//!
//! Moving an allocation out of a loop whose iterations run *at the same time* in
//! the same memory would make them share it: such a loop **expands** the
//! allocation into an array with one element per iteration, and the body uses its
//! own element (`mem` becomes `mem[i]`). Which loops expand depends on the address
//! space: global memory is expanded by every parallel loop (`mapGlobal`,
//! `mapWorkGroup`, `mapLocal`), local memory by the loops over the threads of a
//! work-group (`mapLocal`; every work-group has its own local memory), private
//! memory by none (every thread has its own). Sequential loops never expand: their
//! iterations reuse the memory one after another, and each iteration writes what
//! it reads (`toMem` fills its memory before the rest reads it).
//!
//! An allocation whose size depends on the variable of a loop it leaves cannot be
//! hoisted; that is an error, as is local memory inside a `mapGlobal` loop (there
//! is no work-group to share it).

use crate::error::GpuError;
use crate::imperative::*;
use crate::query::free_in_type;
use crate::walk::{map_acc_children, map_exp_children};
use arith::{Nat, Var};
use rise::{AddrSpace, DataType};

/// What to do with an allocation found inside a loop of some kind.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Expand {
    /// The loop's iterations share the memory one after another: hoist as it is.
    No,
    /// The loop's iterations run at once: one element per iteration.
    Yes,
}

/// An enclosing loop.
#[derive(Clone)]
struct Loop {
    var: Var,
    count: Nat,
    kind: LoopKind,
    origin: &'static str,
}

/// Takes every allocation `select` accepts out of `c`; returns them (outermost
/// first, with their possibly expanded types) and the body without them.
///
/// `expand` says, for the kind of an enclosing loop and the address space, whether
/// the loop expands the allocation, or why it cannot be hoisted out of it.
pub(crate) fn hoist(
    c: Comm,
    select: &dyn Fn(&Ident, &AddrSpace) -> bool,
    expand: &dyn Fn(LoopKind, &AddrSpace, &str) -> Result<Expand, GpuError>,
) -> Result<(Vec<(Ident, AddrSpace)>, Comm), GpuError> {
    let mut found = Vec::new();
    let body = walk(c, &mut Vec::new(), select, expand, &mut found)?;
    Ok((found, body))
}

fn walk(
    c: Comm,
    loops: &mut Vec<Loop>,
    select: &dyn Fn(&Ident, &AddrSpace) -> bool,
    expand: &dyn Fn(LoopKind, &AddrSpace, &str) -> Result<Expand, GpuError>,
    found: &mut Vec<(Ident, AddrSpace)>,
) -> Result<Comm, GpuError> {
    Ok(match c {
        Comm::Seq(cs) => Comm::Seq(
            cs.into_iter()
                .map(|c| walk(c, loops, select, expand, found))
                .collect::<Result<_, _>>()?,
        ),
        Comm::For {
            var,
            count,
            kind,
            origin,
            body,
        } => {
            loops.push(Loop {
                var: var.clone(),
                count: count.clone(),
                kind,
                origin,
            });
            let body = walk(*body, loops, select, expand, found);
            loops.pop();
            Comm::For {
                var,
                count,
                kind,
                origin,
                body: Box::new(body?),
            }
        }
        Comm::New { ident, addr, body } if select(&ident, &addr) => {
            if let Some(l) = loops
                .iter()
                .find(|l| free_in_type(&ident.ty).contains(&l.var))
            {
                return Err(GpuError::new(
                    format!(
                        "the size of `{}` ({} memory of type {}) depends on the variable of the \
                         enclosing `{}` loop, so it cannot be allocated outside that loop",
                        ident.name, addr, ident.ty, l.origin
                    ),
                    Some("store a value whose size does not change from one iteration to the next"),
                ));
            }
            let mut expanding = Vec::new();
            for l in loops.iter() {
                if expand(l.kind, &addr, l.origin)? == Expand::Yes {
                    expanding.push(l.clone());
                }
            }
            let ty = expanding
                .iter()
                .rev()
                .fold(ident.ty.clone(), |t, l| DataType::array(l.count.clone(), t));
            let hoisted = Ident {
                name: ident.name.clone(),
                ty,
            };
            let body = if expanding.is_empty() {
                *body
            } else {
                let indices: Vec<Nat> = expanding.iter().map(|l| Nat::var(&l.var)).collect();
                replace_comm(&body, &ident.name, &hoisted, &indices)
            };
            found.push((hoisted, addr));
            walk(body, loops, select, expand, found)?
        }
        Comm::New { ident, addr, body } => Comm::New {
            ident,
            addr,
            body: Box::new(walk(*body, loops, select, expand, found)?),
        },
        Comm::IfLess { lhs, rhs, body } => Comm::IfLess {
            lhs,
            rhs,
            body: Box::new(walk(*body, loops, select, expand, found)?),
        },
        Comm::AsyncCopy(body) => {
            Comm::AsyncCopy(Box::new(walk(*body, loops, select, expand, found)?))
        }
        Comm::NatLet { var, value, body } => Comm::NatLet {
            var,
            value,
            body: Box::new(walk(*body, loops, select, expand, found)?),
        },
        c @ (Comm::Skip
        | Comm::Assign(..)
        | Comm::Barrier { .. }
        | Comm::AsyncCommit
        | Comm::AsyncWait(_)) => c,
    })
}

/// `c` with the memory `name` replaced by the element `indices` of `by`.
fn replace_comm(c: &Comm, name: &str, by: &Ident, indices: &[Nat]) -> Comm {
    match c {
        Comm::Skip | Comm::Barrier { .. } | Comm::AsyncCommit | Comm::AsyncWait(_) => c.clone(),
        Comm::IfLess { lhs, rhs, body } => Comm::IfLess {
            lhs: lhs.clone(),
            rhs: rhs.clone(),
            body: Box::new(replace_comm(body, name, by, indices)),
        },
        Comm::AsyncCopy(body) => Comm::AsyncCopy(Box::new(replace_comm(body, name, by, indices))),
        Comm::NatLet { var, value, body } => Comm::NatLet {
            var: var.clone(),
            value: replace_exp(value, name, by, indices),
            body: Box::new(replace_comm(body, name, by, indices)),
        },
        Comm::Seq(cs) => Comm::Seq(
            cs.iter()
                .map(|c| replace_comm(c, name, by, indices))
                .collect(),
        ),
        Comm::Assign(a, e) => Comm::Assign(
            replace_acc(a, name, by, indices),
            replace_exp(e, name, by, indices),
        ),
        Comm::New { ident, addr, body } => Comm::New {
            ident: ident.clone(),
            addr: addr.clone(),
            body: Box::new(replace_comm(body, name, by, indices)),
        },
        Comm::For {
            var,
            count,
            kind,
            origin,
            body,
        } => Comm::For {
            var: var.clone(),
            count: count.clone(),
            kind: *kind,
            origin,
            body: Box::new(replace_comm(body, name, by, indices)),
        },
    }
}

/// The element `indices` of the expanded memory, of the original type.
fn element_types(by: &Ident, indices: &[Nat]) -> Vec<DataType> {
    let mut tys = vec![by.ty.clone()];
    for _ in indices {
        let next = match tys.last() {
            Some(DataType::Array(_, e)) => (**e).clone(),
            Some(t) => t.clone(),
            None => by.ty.clone(),
        };
        tys.push(next);
    }
    tys
}

fn replace_exp(e: &Exp, name: &str, by: &Ident, indices: &[Nat]) -> Exp {
    map_exp(e, &|x| match &*x.kind {
        ExpKind::Var(id) if id.name == name => {
            let tys = element_types(by, indices);
            let mut r = Exp::new(ExpKind::Var(by.clone()), by.ty.clone());
            for (k, i) in indices.iter().enumerate() {
                r = Exp::new(ExpKind::Idx(r, i.clone()), tys[k + 1].clone());
            }
            Some(r)
        }
        _ => None,
    })
}

fn replace_acc(a: &Acc, name: &str, by: &Ident, indices: &[Nat]) -> Acc {
    match &*a.kind {
        AccKind::Var(id) if id.name == name => {
            let tys = element_types(by, indices);
            let mut r = Acc::new(AccKind::Var(by.clone()), by.ty.clone());
            for (k, i) in indices.iter().enumerate() {
                r = Acc::new(AccKind::Idx(r, i.clone()), tys[k + 1].clone());
            }
            r
        }
        _ => map_acc_children(a, &mut |x| replace_acc(x, name, by, indices), &mut |i| {
            replace_exp(i, name, by, indices)
        }),
    }
}

/// `e` with every sub-expression for which `f` returns a replacement replaced
/// (top-down: a replaced node is not visited further).
pub(crate) fn map_exp(e: &Exp, f: &dyn Fn(&Exp) -> Option<Exp>) -> Exp {
    f(e).unwrap_or_else(|| map_exp_children(e, &mut |x| map_exp(x, f)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use rise::DataType;

    fn f32() -> DataType {
        DataType::f32()
    }

    /// `for i (par) { new global m: 4.f32 { m[0] := 1 ; out[i] := m[0] } }`
    #[test]
    fn global_memory_in_a_parallel_loop_is_expanded() {
        let n = Nat::var(&Var::new("n"));
        let i = Var::with_range("i", Nat::cst(0), n.clone());
        let out = Ident {
            name: "out".into(),
            ty: DataType::array(n.clone(), f32()),
        };
        let m = Ident {
            name: "m".into(),
            ty: DataType::array(4, f32()),
        };
        let m_acc = Acc::new(AccKind::Var(m.clone()), m.ty.clone());
        let m_exp = Exp::new(ExpKind::Var(m.clone()), m.ty.clone());
        let write = Comm::Assign(
            Acc::new(AccKind::Idx(m_acc, Nat::cst(0)), f32()),
            Exp::new(
                ExpKind::Lit(rise::Literal::Float(1.0, rise::ScalarType::F32)),
                f32(),
            ),
        );
        let read = Comm::Assign(
            Acc::new(
                AccKind::Idx(
                    Acc::new(AccKind::Var(out.clone()), out.ty.clone()),
                    Nat::var(&i),
                ),
                f32(),
            ),
            Exp::new(ExpKind::Idx(m_exp, Nat::cst(0)), f32()),
        );
        let prog = Comm::For {
            var: i.clone(),
            count: n.clone(),
            kind: LoopKind::Gpu(ParLevel::Global(0)),
            origin: "mapGlobal(0)",
            body: Box::new(Comm::New {
                ident: m,
                addr: AddrSpace::Global,
                body: Box::new(Comm::Seq(vec![write, read])),
            }),
        };
        let (found, body) = hoist(prog, &|_, a| *a == AddrSpace::Global, &|k, _, _| {
            Ok(if matches!(k, LoopKind::Gpu(_)) {
                Expand::Yes
            } else {
                Expand::No
            })
        })
        .unwrap();
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].0.ty.to_string(), "n.4.f32");
        let text = body.to_string();
        assert!(text.contains("m[i][0] := "), "{text}");
        assert!(text.contains("out[i] := m[i][0]"), "{text}");
        assert!(!text.contains("new"), "{text}");
    }

    #[test]
    fn a_size_depending_on_the_loop_is_an_error() {
        let n = Nat::var(&Var::new("n"));
        let i = Var::with_range("i", Nat::cst(0), n.clone());
        let m = Ident {
            name: "m".into(),
            ty: DataType::array(Nat::var(&i) + 1, f32()),
        };
        let prog = Comm::For {
            var: i,
            count: n,
            kind: LoopKind::Seq,
            origin: "mapSeq",
            body: Box::new(Comm::New {
                ident: m,
                addr: AddrSpace::Private,
                body: Box::new(Comm::Skip),
            }),
        };
        let err = hoist(prog, &|_, _| true, &|_, _, _| Ok(Expand::No)).unwrap_err();
        assert!(err.to_string().contains("depends on the variable"), "{err}");
    }
}
