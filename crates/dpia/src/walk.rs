//! The children of the imperative IR, defined once: a [`Node`] is a command, an
//! expression or an acceptor, and [`Node::children`] lists the nodes directly
//! below it. Passes that only look at every node are folds over [`Node::visit`]
//! (the queries of [`crate::query`]); passes that rebuild expressions or acceptors
//! replace their children with [`map_exp_children`] and [`map_acc_children`].

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
                Comm::Skip | Comm::Barrier { .. } | Comm::AsyncCommit | Comm::AsyncWait(_) => {
                    vec![]
                }
                Comm::Seq(cs) => cs.iter().map(Node::Comm).collect(),
                Comm::Assign(a, e) => vec![Node::Acc(a), Node::Exp(e)],
                Comm::New { body, .. }
                | Comm::For { body, .. }
                | Comm::IfLess { body, .. }
                | Comm::AsyncCopy(body) => vec![Node::Comm(body)],
                Comm::NatLet { value, body, .. } => vec![Node::Exp(value), Node::Comm(body)],
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
        | Ticket(a)
        | Lane(a, _) => vec![a],
        Pad(_, _, PadMode::Cst(c), a) => vec![c, a],
        Pad(_, _, _, a) => vec![a],
        Binary(_, a, b) | Concat(a, b) | Zip(a, b) | Pair(a, b) | At(a, b) => vec![a, b],
        Select(c, a, b) => vec![c, a, b],
        Math(_, xs) | MakeVector(xs) | Mma(xs) | Wgmma(xs) => xs.iter().collect(),
        Foreign(_, args) => args.iter().collect(),
        LookBack(l) => l.operands().to_vec(),
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

/// `x` with each sub-expression `c` (those of [`exp_children`]) replaced by `f(c)`;
/// a leaf is `x` itself.
pub fn map_exp_children(x: &Exp, f: &mut dyn FnMut(&Exp) -> Exp) -> Exp {
    use ExpKind as K;
    let kind = match &*x.kind {
        K::Var(_) | K::Lit(_) | K::Nat(_) => return x.clone(),
        K::Unary(op, a) => K::Unary(*op, f(a)),
        K::Binary(op, a, b) => K::Binary(*op, f(a), f(b)),
        K::Select(c, a, b) => K::Select(f(c), f(a), f(b)),
        K::Math(m, xs) => K::Math(*m, xs.iter().map(&mut *f).collect()),
        K::Cast(a) => K::Cast(f(a)),
        K::Idx(a, k) => K::Idx(f(a), k.clone()),
        K::View(v, a) => K::View(v.clone(), f(a)),
        K::Pad(l, r, mode, a) => {
            let mode = match mode {
                PadMode::Cst(c) => PadMode::Cst(f(c)),
                other => other.clone(),
            };
            K::Pad(l.clone(), r.clone(), mode, f(a))
        }
        K::Concat(a, b) => K::Concat(f(a), f(b)),
        K::Zip(a, b) => K::Zip(f(a), f(b)),
        K::Pair(a, b) => K::Pair(f(a), f(b)),
        K::Fst(a) => K::Fst(f(a)),
        K::Snd(a) => K::Snd(f(a)),
        K::Generate(v, a) => K::Generate(v.clone(), f(a)),
        K::AsVector(n, a) => K::AsVector(n.clone(), f(a)),
        K::VectorFromScalar(a) => K::VectorFromScalar(f(a)),
        K::Lane(a, k) => K::Lane(f(a), k.clone()),
        K::MakeVector(xs) => K::MakeVector(xs.iter().map(&mut *f).collect()),
        K::At(a, i) => K::At(f(a), f(i)),
        K::Foreign(fun, args) => K::Foreign(fun.clone(), args.iter().map(&mut *f).collect()),
        K::Shuffle(a, s) => K::Shuffle(f(a), *s),
        K::Mma(xs) => K::Mma(xs.iter().map(&mut *f).collect()),
        K::Wgmma(xs) => K::Wgmma(xs.iter().map(&mut *f).collect()),
        K::Ticket(a) => K::Ticket(f(a)),
        K::LookBack(l) => K::LookBack(Box::new(l.map_operands(f))),
    };
    Exp::new(kind, x.ty.clone())
}

/// `a` with the acceptors below it (the one it views and a `scatter` marker) replaced by
/// `fa` of them and an index read from data by `fe` of it; a variable is `a` itself.
pub fn map_acc_children(
    a: &Acc,
    fa: &mut dyn FnMut(&Acc) -> Acc,
    fe: &mut dyn FnMut(&Exp) -> Exp,
) -> Acc {
    use AccKind as A;
    let kind = match &*a.kind {
        A::Var(_) => return a.clone(),
        A::Idx(x, k) => A::Idx(fa(x), k.clone()),
        A::View(v, x) => A::View(v.clone(), fa(x)),
        A::Zip1(x) => A::Zip1(fa(x)),
        A::Zip2(x) => A::Zip2(fa(x)),
        A::Unzip(x) => A::Unzip(fa(x)),
        A::Pair1(x) => A::Pair1(fa(x)),
        A::Pair2(x) => A::Pair2(fa(x)),
        A::AsVector(n, x) => A::AsVector(n.clone(), fa(x)),
        A::Map(v, x) => A::Map(v.clone(), fa(x)),
        A::At(x, i, marker) => A::At(fa(x), fe(i), marker.as_ref().map(&mut *fa)),
    };
    Acc::new(kind, a.ty.clone())
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

    #[test]
    fn map_children_replaces_only_the_children() {
        let f32 = DataType::f32();
        let var = |name: &str, ty: &DataType| {
            let id = Ident {
                name: name.into(),
                ty: ty.clone(),
            };
            (Exp::new(ExpKind::Var(id.clone()), ty.clone()), id)
        };
        let (x, _) = var("x", &f32);
        let (y, _) = var("y", &f32);
        let sum = Exp::new(
            ExpKind::Binary(crate::BinOp::Add, x.clone(), x.clone()),
            f32.clone(),
        );
        let renamed = map_exp_children(&sum, &mut |_| y.clone());
        assert_eq!(renamed.to_string(), "Add(y, y)");
        assert_eq!(map_exp_children(&x, &mut |_| y.clone()), x);

        let arr = DataType::array(4, f32.clone());
        let (_, out) = var("out", &arr);
        let (idx, _) = var("idx", &DataType::Index(Nat::cst(4)));
        let write = Acc::new(
            AccKind::At(Acc::new(AccKind::Var(out), arr.clone()), idx, None),
            f32.clone(),
        );
        let (_, tmp) = var("tmp", &arr);
        let mut indices = Vec::new();
        let moved = map_acc_children(
            &write,
            &mut |_| Acc::new(AccKind::Var(tmp.clone()), arr.clone()),
            &mut |i| {
                indices.push(i.to_string());
                i.clone()
            },
        );
        assert_eq!(indices, ["idx"]);
        let AccKind::At(root, _, None) = &*moved.kind else {
            panic!("still a scatter: {moved}")
        };
        assert!(matches!(&*root.kind, AccKind::Var(id) if id.name == "tmp"));
    }
}
