//! The children of the imperative IR, defined once: a [`Node`] is a command, an
//! expression or an acceptor, and [`Node::children`] lists the nodes directly
//! below it. Passes that only look at every node are folds over [`Node::visit`].

use crate::imperative::{Acc, AccKind, Comm, Exp, ExpKind, PadMode};

/// A node of the imperative IR.
#[derive(Clone, Copy, Debug)]
pub enum Node<'a> {
    /// A command.
    Comm(&'a Comm),
    /// An expression (a value or a view of memory to read).
    Exp(&'a Exp),
    /// An acceptor (a view of memory to write).
    Acc(&'a Acc),
}

impl<'a> Node<'a> {
    /// The nodes directly below this one, in source order (a pad's constant before
    /// the padded array; an assignment's acceptor before its expression).
    pub fn children(self) -> Vec<Node<'a>> {
        match self {
            Node::Comm(c) => match c {
                Comm::Skip | Comm::Barrier { .. } => vec![],
                Comm::Seq(cs) => cs.iter().map(Node::Comm).collect(),
                Comm::Assign(a, e) => vec![Node::Acc(a), Node::Exp(e)],
                Comm::New { body, .. } | Comm::For { body, .. } => vec![Node::Comm(body)],
            },
            Node::Exp(e) => exp_children(e).into_iter().map(Node::Exp).collect(),
            Node::Acc(a) => {
                let mut nodes: Vec<Node<'a>> = acc_child(a).into_iter().map(Node::Acc).collect();
                if let AccKind::At(_, i, _) = &*a.kind {
                    nodes.push(Node::Exp(i));
                }
                nodes
            }
        }
    }

    /// Calls `f` on this node and every node below it, parents first.
    pub fn visit(self, f: &mut dyn FnMut(Node<'a>)) {
        f(self);
        for c in self.children() {
            c.visit(f);
        }
    }
}

/// The sub-expressions of an expression (a pad's constant included).
pub fn exp_children(x: &Exp) -> Vec<&Exp> {
    use ExpKind::*;
    match &*x.kind {
        Var(_) | Lit(_) | Nat(_) => vec![],
        Unary(_, a)
        | Cast(a)
        | Idx(a, _)
        | View(_, a)
        | Fst(a)
        | Snd(a)
        | Generate(_, a)
        | AsVector(_, a)
        | VectorFromScalar(a)
        | Shuffle(a, _)
        | Lane(a, _) => vec![a],
        Pad(_, _, PadMode::Cst(c), a) => vec![c, a],
        Pad(_, _, _, a) => vec![a],
        Binary(_, a, b) | Concat(a, b) | Zip(a, b) | Pair(a, b) | At(a, b) => vec![a, b],
        Select(c, a, b) => vec![c, a, b],
        Math(_, xs) | MakeVector(xs) => xs.iter().collect(),
        Foreign(_, args) => args.iter().collect(),
    }
}

/// The acceptor an acceptor views (none for a variable; an index read from data,
/// [`AccKind::At`], is a child of the acceptor's [`Node`] but not an acceptor).
pub fn acc_child(a: &Acc) -> Option<&Acc> {
    use AccKind::*;
    match &*a.kind {
        Var(_) => None,
        Idx(a, _)
        | View(_, a)
        | Zip1(a)
        | Zip2(a)
        | Unzip(a)
        | Pair1(a)
        | Pair2(a)
        | AsVector(_, a)
        | Map(_, a)
        | At(a, _, _) => Some(a),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::imperative::{Ident, LoopKind};
    use arith::{Nat, Var};
    use rise::{AddrSpace, DataType};

    #[test]
    fn visit_reaches_every_node_parents_first() {
        let f32 = DataType::f32();
        let xs = Ident {
            name: "xs".into(),
            ty: DataType::array(4, f32.clone()),
        };
        let out = Ident {
            name: "out".into(),
            ty: DataType::array(4, f32.clone()),
        };
        let i = Var::new("i");
        let read = Exp::new(
            ExpKind::Idx(
                Exp::new(ExpKind::Var(xs.clone()), xs.ty.clone()),
                Nat::var(&i),
            ),
            f32.clone(),
        );
        let write = Acc::new(
            AccKind::Idx(
                Acc::new(AccKind::Var(out.clone()), out.ty.clone()),
                Nat::var(&i),
            ),
            f32.clone(),
        );
        let body = Comm::For {
            var: i,
            count: Nat::cst(4),
            kind: LoopKind::Seq,
            origin: "mapSeq",
            body: Box::new(Comm::Assign(write, read)),
        };
        let program = Comm::New {
            ident: Ident {
                name: "tmp".into(),
                ty: f32,
            },
            addr: AddrSpace::Private,
            body: Box::new(Comm::Seq(vec![Comm::Skip, body])),
        };
        let mut seen = Vec::new();
        Node::Comm(&program).visit(&mut |n| {
            seen.push(match n {
                Node::Comm(Comm::New { .. }) => "new",
                Node::Comm(Comm::Seq(_)) => "seq",
                Node::Comm(Comm::Skip) => "skip",
                Node::Comm(Comm::For { .. }) => "for",
                Node::Comm(Comm::Assign(..)) => "assign",
                Node::Comm(_) => "other",
                Node::Acc(a) if matches!(*a.kind, AccKind::Var(_)) => "out",
                Node::Acc(_) => "out[i]",
                Node::Exp(e) if matches!(*e.kind, ExpKind::Var(_)) => "xs",
                Node::Exp(_) => "xs[i]",
            })
        });
        assert_eq!(
            seen,
            ["new", "seq", "skip", "for", "assign", "out[i]", "out", "xs[i]", "xs"]
        );
    }
}
