//! Read-only questions about imperative phrases, asked by the passes (translation,
//! hoisting, barriers, the kernel split) and the code generators: which memories a
//! phrase reads or writes, which variables a type's sizes mention, whether a command
//! has GPU loops. Each is a fold over [`crate::walk`]'s children, so that the passes
//! import these and not each other.

use std::collections::BTreeSet;

use crate::imperative::{Acc, AccKind, Comm, Exp, ExpKind, LoopKind};
use crate::walk::{acc_child, exp_children, Node};
use arith::Var;
use rise::DataType;

/// The names of the memory identifiers an expression reads, in source order (a name
/// once per read).
pub fn exp_reads(e: &Exp, out: &mut Vec<String>) {
    match &*e.kind {
        ExpKind::Var(id) => out.push(id.name.clone()),
        _ => exp_children(e).into_iter().for_each(|c| exp_reads(c, out)),
    }
}

/// The memory an acceptor writes.
pub fn acc_root(a: &Acc) -> &str {
    match (&*a.kind, acc_child(a)) {
        (AccKind::Var(id), _) => &id.name,
        (_, Some(viewed)) => acc_root(viewed),
        // every acceptor but a variable views another (see `acc_child`)
        (_, None) => "",
    }
}

/// The memories an acceptor reads besides the one it writes: those its indices read from
/// data read, and the markers of `scatter` (read and written: see [`AccKind::At`]).
pub fn acc_reads(a: &Acc, out: &mut Vec<String>) {
    Node::Acc(a).visit(&mut |n| {
        if let Node::Acc(b) = n {
            if let AccKind::At(_, i, marker) = &*b.kind {
                exp_reads(i, out);
                out.extend(marker.iter().map(|m| acc_root(m).to_string()));
            }
        }
    });
}

/// The names of the memories a command reads or writes.
pub fn memories_used(c: &Comm) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    Node::Comm(c).visit(&mut |n| {
        if let Node::Comm(Comm::Assign(a, e)) = n {
            out.insert(acc_root(a).to_string());
            let mut reads = Vec::new();
            exp_reads(e, &mut reads);
            acc_reads(a, &mut reads);
            out.extend(reads);
        }
    });
    out
}

/// Whether some node of a command (itself, a command, expression or acceptor inside it)
/// satisfies `pred`.
pub fn any(c: &Comm, pred: impl Fn(&Node) -> bool) -> bool {
    let mut found = false;
    Node::Comm(c).visit(&mut |n| found |= pred(&n));
    found
}

/// Whether a command has a GPU loop.
pub fn has_gpu_loop(c: &Comm) -> bool {
    any(c, |n| {
        matches!(
            n,
            Node::Comm(Comm::For {
                kind: LoopKind::Gpu(_),
                ..
            })
        )
    })
}

/// The variables a data type's sizes mention.
pub fn free_in_type(t: &DataType) -> Vec<Var> {
    let mut out = Vec::new();
    fn go(t: &DataType, out: &mut Vec<Var>) {
        match t {
            DataType::Array(n, e) | DataType::Vector(n, e) => {
                out.extend(n.free_vars());
                go(e, out);
            }
            DataType::Index(n) => out.extend(n.free_vars()),
            DataType::Pair(a, b) => {
                go(a, out);
                go(b, out);
            }
            _ => {}
        }
    }
    go(t, &mut out);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::imperative::{Ident, ParLevel};
    use arith::Nat;

    fn ident(name: &str, ty: DataType) -> Ident {
        Ident {
            name: name.into(),
            ty,
        }
    }

    /// `out[at(idx[i])] := xs[i] + ys[i]` inside a `mapGlobal` loop over `i`.
    fn scatter_like() -> Comm {
        let f32 = DataType::f32();
        let n = Nat::cst(4);
        let arr = |name| ident(name, DataType::array(n.clone(), f32.clone()));
        let i = Var::new("i");
        let read = |name| {
            let id = arr(name);
            Exp::new(
                ExpKind::Idx(Exp::new(ExpKind::Var(id.clone()), id.ty), Nat::var(&i)),
                f32.clone(),
            )
        };
        let sum = Exp::new(
            ExpKind::Binary(crate::BinOp::Add, read("xs"), read("ys")),
            f32.clone(),
        );
        let out = arr("out");
        let write = Acc::new(
            AccKind::At(
                Acc::new(AccKind::Var(out.clone()), out.ty.clone()),
                read("idx"),
                None,
            ),
            f32.clone(),
        );
        Comm::For {
            var: i,
            count: n,
            kind: LoopKind::Gpu(ParLevel::Global(0)),
            origin: "mapGlobal(0)",
            body: Box::new(Comm::Assign(write, sum)),
        }
    }

    #[test]
    fn reads_and_writes_of_a_command() {
        let c = scatter_like();
        let Comm::For { body, .. } = &c else {
            panic!("a loop")
        };
        let Comm::Assign(a, e) = &**body else {
            panic!("an assignment")
        };
        assert_eq!(acc_root(a), "out");
        let mut reads = Vec::new();
        exp_reads(e, &mut reads);
        assert_eq!(reads, ["xs", "ys"]);
        let mut reads = Vec::new();
        acc_reads(a, &mut reads);
        assert_eq!(reads, ["idx"]);
        let used: Vec<String> = memories_used(&c).into_iter().collect();
        assert_eq!(used, ["idx", "out", "xs", "ys"]);
        assert!(has_gpu_loop(&c));
        assert!(!has_gpu_loop(body));
    }

    #[test]
    fn free_variables_of_sizes() {
        let (n, m) = (Var::new("n"), Var::new("m"));
        let t = DataType::pair(
            DataType::array(Nat::var(&n), DataType::f32()),
            DataType::Index(Nat::var(&m) + 1),
        );
        assert_eq!(free_in_type(&t), [n, m]);
        assert!(free_in_type(&DataType::f32()).is_empty());
    }
}
