//! Type-directed generation of random, well-typed RISE definitions: pick a result type,
//! build an expression of it from the productions below, inventing inputs where a leaf
//! array is needed. The productions of issue 14's primitives (gather, scatter, run-time
//! indices, vectors, foreign functions) are in [`prims`].

mod casts;
mod effects;
mod prims;

pub use effects::calls_c_only;
pub use prims::Foreign;

use crate::ast::Node;
use crate::size::Size;
use crate::ty::{Scalar, Ty};
use splitmix::SplitMix64;

/// A variable (or a projection of one) usable as a leaf.
#[derive(Clone, Debug)]
struct Entry {
    text: String,
    ty: Ty,
    uses: Vec<String>,
}

/// A generated definition.
#[derive(Clone, Debug)]
pub struct Def {
    /// The size variables it declares (indices into [`crate::size::VARS`]).
    pub vars: Vec<u8>,
    /// The input parameters: names and types.
    pub inputs: Vec<(String, Ty)>,
    /// The body.
    pub body: Node,
    /// The foreign functions it declares (before the definition).
    pub foreign: Vec<Foreign>,
}

impl Def {
    /// The definition as RISE source, named `name`.
    pub fn source(&self, name: &str) -> String {
        let mut sig = String::new();
        if !self.vars.is_empty() {
            let names: Vec<&str> = self
                .vars
                .iter()
                .map(|&v| crate::size::VARS[v as usize])
                .collect();
            sig.push_str(&format!("{{{}: nat}} -> ", names.join(" ")));
        }
        for (_, t) in &self.inputs {
            sig.push_str(&format!("{t} -> "));
        }
        let params: Vec<&str> = self.inputs.iter().map(|(n, _)| n.as_str()).collect();
        let mut body = self.body.print();
        let mut foreign = String::new();
        for f in &self.foreign {
            // named after the definition, so that a batch of many cases' code (one C module,
            // one OpenCL program) holds each case's functions under names of their own
            let unique = format!("{name}{}", f.name);
            body = body.replace(&format!("({} ", f.name), &format!("({unique} "));
            let renamed = Foreign {
                name: unique,
                ..f.clone()
            };
            foreign.push_str(&renamed.declaration());
        }
        format!(
            "{foreign}def {name} : {sig}{} =\n  fun {} =>\n  {body}\n",
            self.body.ty,
            params.join(" "),
        )
    }
}

/// The generator's state for one definition.
pub struct Gen<'r> {
    rng: &'r mut SplitMix64,
    symbolic: bool,
    inputs: Vec<(String, Ty)>,
    fresh: usize,
    /// The foreign functions declared so far.
    foreign: Vec<Foreign>,
    /// The size variables that program text mentions outside any type (`natType`
    /// expressions of sizes).
    text_vars: Vec<u8>,
}

const MAX_INPUTS: usize = 4;

impl<'r> Gen<'r> {
    /// Generates a definition.
    pub fn def(rng: &'r mut SplitMix64) -> Def {
        let symbolic = rng.chance(70);
        let mut g = Gen {
            rng,
            symbolic,
            inputs: vec![],
            fresh: 0,
            foreign: vec![],
            text_vars: vec![],
        };
        let result = g.result_type();
        let depth = g.rng.range(2, 5) as u32;
        let body = g.gen(&result, &[], depth);
        if g.inputs.is_empty() {
            let t = Ty::S(Scalar::F32);
            g.inputs.push(("x0".into(), t));
        }
        let mut vars: Vec<u8> = g
            .inputs
            .iter()
            .map(|(_, t)| t)
            .chain(std::iter::once(&body.ty))
            .flat_map(|t| {
                t.sizes()
                    .into_iter()
                    .flat_map(|s| s.vars().collect::<Vec<_>>())
            })
            .collect();
        collect_body_vars(&body, &mut vars);
        vars.extend(&g.text_vars);
        vars.sort_unstable();
        vars.dedup();
        Def {
            vars,
            inputs: g.inputs,
            body,
            foreign: g.foreign,
        }
    }

    fn name(&mut self, p: &str) -> String {
        self.fresh += 1;
        format!("{p}v{}", self.fresh)
    }

    fn scalar(&mut self) -> Scalar {
        self.rng.weighted(&Scalar::NUMERIC)
    }

    fn size(&mut self) -> Size {
        if !self.symbolic || self.rng.chance(25) {
            return Size::cst(self.rng.range(1, 6));
        }
        let v = Size::var(if self.rng.chance(70) { 0 } else { 1 });
        match self.rng.range(0, 5) {
            0 => v.add(&Size::cst(self.rng.range(1, 3))),
            1 => v.mul(&Size::cst(2)),
            _ => v,
        }
    }

    fn result_type(&mut self) -> Ty {
        let s = Ty::S(self.scalar());
        match self.rng.range(0, 9) {
            0 | 1 => s,
            2..=6 => Ty::arr(self.size(), s),
            _ => Ty::arr(self.size(), Ty::arr(self.size(), s)),
        }
    }

    /// A random element type for intermediate arrays.
    fn elem(&mut self) -> Ty {
        let s = Ty::S(self.scalar());
        match self.rng.range(0, 10) {
            0 => Ty::pair(s, Ty::S(self.scalar())),
            1 => Ty::arr(Size::cst(self.rng.range(1, 4)), s),
            2 => self.vec_ty(),
            _ => s,
        }
    }

    fn leaves(env: &[Entry], t: &Ty) -> Vec<Node> {
        env.iter()
            .filter(|e| e.ty == *t)
            .map(|e| Node::leaf(t.clone(), e.text.clone(), e.uses.clone()))
            .collect()
    }

    /// An expression of type `t`.
    fn gen(&mut self, t: &Ty, env: &[Entry], depth: u32) -> Node {
        let leaves = Self::leaves(env, t);
        if depth == 0 || (!leaves.is_empty() && self.rng.chance(20)) {
            return self.leaf(t, env, &leaves);
        }
        let d = depth - 1;
        match t {
            Ty::S(s) => self.gen_scalar(*s, t, env, d),
            Ty::Pair(a, b) => self.gen_pair(a, b, t, env, d),
            Ty::Arr(n, e) => self.gen_array(n, e, t, env, d),
            Ty::Idx(k) => self.gen_index(k, env, d),
            Ty::Nat => self.gen_nat(env, d),
            Ty::Vec(s, k) => self.gen_vec(*s, *k, env, d),
        }
    }

    fn leaf(&mut self, t: &Ty, env: &[Entry], leaves: &[Node]) -> Node {
        if !leaves.is_empty() && (self.rng.chance(85) || !t.is_flat()) {
            // Prefer the innermost binders (the latest entries).
            let i = leaves.len() - 1 - (self.rng.range(0, leaves.len() as i64 - 1) as usize / 2);
            return leaves[i].clone();
        }
        match t {
            Ty::S(s) if !t.is_flat() || self.rng.chance(70) || self.inputs.len() >= MAX_INPUTS => {
                Node::leaf(t.clone(), self.literal(*s), vec![])
            }
            Ty::Pair(a, b) => {
                let x = self.gen(a, env, 0);
                let y = self.gen(b, env, 0);
                Node::op(t.clone(), "($0, $1)", vec![x, y])
            }
            Ty::Idx(k) => Node::leaf(t.clone(), format!("(natAsIndex {k} (0 : natType))"), vec![]),
            Ty::Nat if self.rng.chance(10) => self.big_nat(),
            Ty::Nat => Node::leaf(
                t.clone(),
                format!("({} : natType)", self.rng.range(0, 4)),
                vec![],
            ),
            Ty::Vec(s, k) => self.vec_literal(*s, *k),
            _ if t.is_flat() && self.inputs.len() < MAX_INPUTS => {
                let name = format!("x{}", self.inputs.len());
                self.inputs.push((name.clone(), t.clone()));
                Node::leaf(t.clone(), name.clone(), vec![name])
            }
            Ty::Arr(n, e) => {
                let i = self.name("i");
                let body = self.gen(e, env, 0);
                self.generate(t, n, &i, body)
            }
            Ty::S(s) => Node::leaf(t.clone(), self.literal(*s), vec![]),
        }
    }

    fn generate(&mut self, t: &Ty, _n: &Size, i: &str, body: Node) -> Node {
        Node::op(
            t.clone(),
            format!("(generate (fun {i} => $0) : {t})"),
            vec![body],
        )
        .binding(&[i])
    }

    fn literal(&mut self, s: Scalar) -> String {
        let v = match self.rng.range(0, 9) {
            0 => s.max_literal(),
            1 => s.max_literal() / 2 + 1,
            _ => self.rng.range(0, 9) as u64,
        };
        s.literal(v.min(s.max_literal()))
    }

    /// An environment entry for a new binder `name: t`, with its projections.
    fn bind(env: &[Entry], name: &str, t: &Ty) -> Vec<Entry> {
        let mut out = env.to_vec();
        push_projections(
            &mut out,
            name.to_string(),
            t.clone(),
            vec![name.to_string()],
            2,
        );
        out
    }

    /// A bitwise operator or a shift on the integer type `s`: shift amounts are literals
    /// below the width, and now and then any value of the type (which may stop the program).
    fn bit_op(&mut self, s: Scalar, t: &Ty, env: &[Entry], d: u32) -> Node {
        let a = self.gen(t, env, d);
        match self.rng.range(0, 6) {
            0 => Node::op(t.clone(), "(~$0)", vec![a]),
            1..=3 => {
                let b = self.gen(t, env, d);
                let op = *self.rng.pick(&["&", "|", "^"]);
                Node::op(t.clone(), format!("($0 {op} $1)"), vec![a, b])
            }
            _ => {
                let op = *self.rng.pick(&["<<", ">>"]);
                if self.rng.chance(15) {
                    let b = self.gen(t, env, d);
                    return Node::op(t.clone(), format!("($0 {op} $1)"), vec![a, b]);
                }
                let amount = s.literal(self.rng.range(0, s.bits() - 1) as u64);
                Node::op(t.clone(), format!("($0 {op} {amount})"), vec![a])
            }
        }
    }

    fn gen_scalar(&mut self, s: Scalar, t: &Ty, env: &[Entry], d: u32) -> Node {
        if s == Scalar::Bool {
            if self.rng.chance(20) {
                // logical operators (short-circuit on every target)
                let a = self.gen(t, env, d);
                if self.rng.chance(25) {
                    return Node::op(t.clone(), "(!$0)", vec![a]);
                }
                let b = self.gen(t, env, d);
                let op = *self.rng.pick(&["($0 && $1)", "($0 || $1)"]);
                return Node::op(t.clone(), op, vec![a, b]);
            }
            let c = Ty::S(self.scalar());
            let a = self.gen(&c, env, d);
            let b = self.gen(&c, env, d);
            let op = *self.rng.pick(&[
                "($0 < $1)",
                "($0 > $1)",
                "($0 == $1)",
                "($0 <= $1)",
                "($0 >= $1)",
                "($0 != $1)",
            ]);
            return Node::op(t.clone(), op, vec![a, b]);
        }
        if s.is_int() && self.rng.chance(8) {
            return self.bit_op(s, t, env, d);
        }
        match self.rng.range(0, 25) {
            0..=5 => {
                let a = self.gen(t, env, d);
                if self.rng.chance(15) {
                    let lit =
                        s.literal(self.rng.range(1, 9) as u64 * if s.is_float() { 4 } else { 1 });
                    let op = if s.is_int() && self.rng.chance(50) {
                        "%"
                    } else {
                        "/"
                    };
                    return Node::op(t.clone(), format!("($0 {op} {lit})"), vec![a]);
                }
                let b = self.gen(t, env, d);
                let op = *self.rng.pick(&["+", "-", "*", "+"]);
                Node::op(t.clone(), format!("($0 {op} $1)"), vec![a, b])
            }
            6 | 7 => {
                let c = self.gen(&Ty::S(Scalar::Bool), env, d);
                let a = self.gen(t, env, d);
                let b = self.gen(t, env, d);
                Node::op(t.clone(), "(select $0 $1 $2)", vec![c, a, b])
            }
            8 | 9 | 18 => self.cast_to(s, env, d),
            10 => {
                let other = Ty::S(self.scalar());
                let first = self.rng.chance(50);
                let p = if first {
                    Ty::pair(t.clone(), other)
                } else {
                    Ty::pair(other, t.clone())
                };
                let a = self.gen(&p, env, d);
                Node::op(
                    t.clone(),
                    if first { "(fst $0)" } else { "(snd $0)" },
                    vec![a],
                )
            }
            11..=15 => self.reduction(t, env, d),
            16 => {
                let n = self.size();
                let k = self.rng.range(0, n.min_value() - 1);
                let a = self.gen(&Ty::arr(n, t.clone()), env, d);
                Node::op(t.clone(), format!("(at {k} $0)"), vec![a])
            }
            // math functions: those whose results stay close under the last-bit
            // differences between targets (not sin/cos/tan of large values, floor, ...)
            19 | 20 => {
                let f = match (s.is_float(), self.rng.range(0, 4)) {
                    (true, 0) => "(fmin $0 $1)",
                    (true, 1) => "(fmax $0 $1)",
                    (true, 2) => "(tanh (exp $0))",
                    (true, _) => "(sqrt (fabs $0))",
                    (false, 0) => "(abs $0)",
                    (false, 1) => "(min $0 $1)",
                    (false, _) => "(max $0 $1)",
                };
                let kids = (0..1 + usize::from(f.contains("$1")))
                    .map(|_| self.gen(t, env, d))
                    .collect();
                Node::op(t.clone(), f, kids)
            }
            21 => self.lane(s, env, d),
            22 => self.run_time_idx(t, env, d),
            17 | 23 => match self.foreign_call(s, env, d) {
                Some(call) => call,
                None => self.gen(t, env, d.saturating_sub(1)),
            },
            _ => self.gen(t, env, d.saturating_sub(1)),
        }
    }

    /// `reduceSeq` or `reduce` to a value of type `t` (scalar, pair or array accumulator).
    fn reduction(&mut self, t: &Ty, env: &[Entry], d: u32) -> Node {
        let n = self.size();
        if matches!(t, Ty::S(_)) && self.rng.chance(30) {
            let xs = self.gen(&Ty::arr(n, t.clone()), env, d);
            let zero = self.literal_zero(t);
            return Node::op(t.clone(), format!("($0 |> reduce add {zero})"), vec![xs]);
        }
        let e = self.elem();
        let xs = self.gen(&Ty::arr(n, e.clone()), env, d);
        let init = self.gen(t, env, d.min(1));
        let (a, x) = (self.name("a"), self.name("x"));
        let inner = Self::bind(&Self::bind(env, &a, t), &x, &e);
        let body = self.gen(t, &inner, d);
        Node::op(
            t.clone(),
            format!("($0 |> reduceSeq (fun {a} {x} => $2) $1)"),
            vec![xs, init, body],
        )
        .binding(&[&a, &x])
    }

    fn literal_zero(&self, t: &Ty) -> String {
        match t {
            Ty::S(s) => s.literal(0),
            _ => "0".into(),
        }
    }

    fn gen_pair(&mut self, a: &Ty, b: &Ty, t: &Ty, env: &[Entry], d: u32) -> Node {
        match self.rng.range(0, 9) {
            0..=4 => {
                let x = self.gen(a, env, d);
                let y = self.gen(b, env, d);
                Node::op(t.clone(), "($0, $1)", vec![x, y])
            }
            5..=7 => self.reduction(t, env, d),
            _ => {
                let c = self.gen(&Ty::S(Scalar::Bool), env, d);
                let x = self.gen(t, env, d);
                let y = self.gen(t, env, d);
                Node::op(t.clone(), "(select $0 $1 $2)", vec![c, x, y])
            }
        }
    }

    fn gen_array(&mut self, n: &Size, e: &Ty, t: &Ty, env: &[Entry], d: u32) -> Node {
        for _ in 0..8 {
            if let Some(node) = self.try_array(n, e, t, env, d) {
                return node;
            }
        }
        let leaves = Self::leaves(env, t);
        self.leaf(t, env, &leaves)
    }

    fn map_over(&mut self, xs: Node, e: &Ty, env: &[Entry], d: u32, t: &Ty) -> Node {
        let Ty::Arr(_, from) = &xs.ty else {
            unreachable!("map over an array")
        };
        let x = self.name("x");
        let inner = Self::bind(env, &x, &from.clone());
        let body = self.gen(e, &inner, d);
        Node::op(
            t.clone(),
            format!("($0 |> map (fun {x} => $1))"),
            vec![xs, body],
        )
        .binding(&[&x])
    }

    fn try_array(&mut self, n: &Size, e: &Ty, t: &Ty, env: &[Entry], d: u32) -> Option<Node> {
        let k = self.rng.range(0, 33);
        Some(match k {
            0..=6 => {
                let from = self.elem();
                let xs = self.gen(&Ty::arr(n.clone(), from), env, d);
                self.map_over(xs, e, env, d, t)
            }
            7..=10 => {
                // zip of two (often sibling or identical) computations
                let (e1, e2) = (self.elem(), self.elem());
                let a = self.gen(&Ty::arr(n.clone(), e1.clone()), env, d);
                let b = match self.rng.range(0, 2) {
                    0 if e1 == e2 => a.clone(),
                    1 => {
                        let src = self.gen(&Ty::arr(n.clone(), e1.clone()), env, 0);
                        self.map_over(src, &e2, env, d, &Ty::arr(n.clone(), e2.clone()))
                    }
                    _ => self.gen(&Ty::arr(n.clone(), e2.clone()), env, d),
                };
                let b_ty = b.ty.clone();
                let Ty::Arr(_, e2) = &b_ty else {
                    unreachable!()
                };
                let p = self.name("p");
                let inner = Self::bind(env, &p, &Ty::pair(e1, (**e2).clone()));
                let body = self.gen(e, &inner, d);
                Node::op(
                    t.clone(),
                    format!("(zip $0 $1 |> map (fun {p} => $2))"),
                    vec![a, b, body],
                )
                .binding(&[&p])
            }
            11 => {
                let i = self.name("i");
                let mut inner = env.to_vec();
                inner.push(Entry {
                    text: i.clone(),
                    ty: Ty::Idx(n.clone()),
                    uses: vec![i.clone()],
                });
                for en in env {
                    if let Ty::Arr(m, el) = &en.ty {
                        if m == n {
                            let mut uses = en.uses.clone();
                            uses.push(i.clone());
                            push_projections(
                                &mut inner,
                                format!("(idx {i} {})", en.text),
                                (**el).clone(),
                                uses,
                                1,
                            );
                        }
                    }
                }
                if let Ty::S(s) = e {
                    if *s != Scalar::Bool {
                        let text = format!("(cast (indexAsNat {i}) : {})", s.name());
                        inner.push(Entry {
                            text,
                            ty: e.clone(),
                            uses: vec![i.clone()],
                        });
                    }
                }
                let body = self.gen(e, &inner, d);
                self.generate(t, n, &i, body)
            }
            12 | 13 => {
                let c = n.constant();
                if c < 1 {
                    return None;
                }
                let l = self.rng.range(0, c);
                let r = self.rng.range(0, c - l);
                let inner_n = n.sub_const(l + r)?;
                if inner_n.min_value() < 1 {
                    return None;
                }
                let xs = self.gen(&Ty::arr(inner_n, e.clone()), env, d);
                match self.rng.range(0, 3) {
                    0 => {
                        let v = self.gen(e, env, 0);
                        Node::op(t.clone(), format!("(padCst {l} {r} $1 $0)"), vec![xs, v])
                    }
                    k => {
                        let p = ["padClamp", "padMirror", "padWrap"][k as usize - 1];
                        Node::op(t.clone(), format!("({p} {l} {r} $0)"), vec![xs])
                    }
                }
            }
            14 => {
                let j = if self.symbolic && self.rng.chance(30) {
                    Size::var(0)
                } else {
                    Size::cst(self.rng.range(1, 3))
                };
                let xs = self.gen(&Ty::arr(n.add(&j), e.clone()), env, d);
                Node::op(t.clone(), format!("(take {n} $0)"), vec![xs])
            }
            15 => {
                let j = self.rng.range(1, 3);
                let xs = self.gen(&Ty::arr(n.add(&Size::cst(j)), e.clone()), env, d);
                Node::op(t.clone(), format!("(drop {j} $0)"), vec![xs])
            }
            16 => {
                let c = n.constant();
                let (a, b) = if c >= 1 && (n.is_constant() || self.rng.chance(50)) {
                    let k = self.rng.range(1, c);
                    (n.sub_const(k)?, Size::cst(k))
                } else {
                    return None;
                };
                if a.min_value() < 1 {
                    return None;
                }
                let xs = self.gen(&Ty::arr(a, e.clone()), env, d);
                let ys = self.gen(&Ty::arr(b, e.clone()), env, d);
                Node::op(t.clone(), "(concat $0 $1)", vec![xs, ys])
            }
            17 | 18 => {
                let k = *self.rng.pick(&[2, 3, 4]);
                let q = n.div_const(k)?;
                let (o, i) = if self.rng.chance(50) {
                    (q, Size::cst(k))
                } else {
                    (Size::cst(k), q)
                };
                let xs = self.gen(&Ty::arr(o, Ty::arr(i, e.clone())), env, d);
                Node::op(t.clone(), "(join $0)", vec![xs])
            }
            19 => {
                let Ty::Arr(k, inner) = e else { return None };
                if !k.is_constant() {
                    return None;
                }
                let xs = self.gen(&Ty::arr(n.mul(k), (**inner).clone()), env, d);
                Node::op(t.clone(), format!("(split {k} $0)"), vec![xs])
            }
            20 => {
                let Ty::Arr(b, inner) = e else { return None };
                let xs = self.gen(
                    &Ty::arr(b.clone(), Ty::arr(n.clone(), (**inner).clone())),
                    env,
                    d,
                );
                Node::op(t.clone(), "(transpose $0)", vec![xs])
            }
            21 => {
                let Ty::Arr(sz, inner) = e else { return None };
                if !sz.is_constant() {
                    return None;
                }
                let sz = sz.constant();
                let sp = self.rng.range(1, sz);
                let len = n.mul(&Size::cst(sp)).add(&Size::cst(sz - sp));
                let xs = self.gen(&Ty::arr(len, (**inner).clone()), env, d);
                Node::op(t.clone(), format!("(slide {sz} {sp} $0)"), vec![xs])
            }
            22..=24 => {
                // a stencil: windows of a (usually padded) array, each reduced
                let sz = self.rng.range(1, 3) * 2 - 1;
                let from = Ty::S(self.scalar());
                let xs = self.gen(&Ty::arr(n.add(&Size::cst(sz - 1)), from.clone()), env, d);
                let w = self.name("w");
                let inner = Self::bind(env, &w, &Ty::arr(Size::cst(sz), from));
                let body = self.gen(e, &inner, d);
                Node::op(
                    t.clone(),
                    format!("($0 |> slide {sz} 1 |> map (fun {w} => $1))"),
                    vec![xs, body],
                )
                .binding(&[&w])
            }
            25 => {
                let Ty::S(s) = e else { return None };
                if *s == Scalar::Bool {
                    return None;
                }
                let k = self.rng.range(1, 2);
                let xs = self.gen(&Ty::arr(n.mul(&Size::cst(1 << k)), e.clone()), env, d);
                let (l, y, q) = (self.name("l"), self.name("y"), self.name("q"));
                let step = if self.rng.chance(50) {
                    format!("reduce add {}", s.literal(0))
                } else {
                    format!("fun {q} => at 0 {q} * at 1 {q}")
                };
                Node::op(
                    t.clone(),
                    format!("($0 |> iterate {k} (fun ({l}: nat) => fun {y} => {y} |> split 2 |> map ({step})))"),
                    vec![xs],
                )
            }
            26 | 27 => self.reduction(t, env, d),
            29 | 30 => self.gather(n, e, t, env, d),
            31 | 32 => self.scatter(n, e, t, env, d),
            28 => {
                let Ty::S(_) = e else { return None };
                let from = self.elem();
                let xs = self.gen(&Ty::arr(n.clone(), from.clone()), env, d);
                let init = self.gen(e, env, 0);
                let (x, a) = (self.name("x"), self.name("a"));
                let inner = Self::bind(&Self::bind(env, &x, &from), &a, e);
                let body = self.gen(e, &inner, d);
                Node::op(
                    t.clone(),
                    format!("($0 |> scanSeq (fun {x} {a} => $2) $1)"),
                    vec![xs, init, body],
                )
                .binding(&[&x, &a])
            }
            _ => {
                if !n.is_constant() || n.constant() > 4 {
                    return None;
                }
                let kids: Vec<Node> = (0..n.constant())
                    .map(|_| self.gen(e, env, d.min(1)))
                    .collect();
                let holes: Vec<String> = (0..kids.len()).map(|i| format!("${i}")).collect();
                Node::op(
                    t.clone(),
                    format!("(makeArray {} {})", n, holes.join(" ")),
                    kids,
                )
            }
        })
    }
}

/// Pushes `text: t` and, for pairs, its projections (to `depth` levels).
fn push_projections(env: &mut Vec<Entry>, text: String, t: Ty, uses: Vec<String>, depth: u32) {
    if let (Ty::Pair(a, b), true) = (&t, depth > 0) {
        push_projections(
            env,
            format!("(fst {text})"),
            (**a).clone(),
            uses.clone(),
            depth - 1,
        );
        push_projections(
            env,
            format!("(snd {text})"),
            (**b).clone(),
            uses.clone(),
            depth - 1,
        );
    }
    env.push(Entry { text, ty: t, uses });
}

fn collect_body_vars(n: &Node, out: &mut Vec<u8>) {
    out.extend(
        n.ty.sizes()
            .into_iter()
            .flat_map(|s| s.vars().collect::<Vec<_>>()),
    );
    for k in &n.kids {
        collect_body_vars(k, out);
    }
}

#[cfg(test)]
mod math_tests {
    /// The generator reaches the math functions, on floats and on integers.
    #[test]
    fn generated_programs_use_math_functions() {
        let programs: Vec<String> = (0..300)
            .map(|i| crate::case::Case::generate(7, i).program)
            .collect();
        for f in [
            "(fmin ",
            "(fmax ",
            "(tanh (exp ",
            "(sqrt (fabs ",
            "(abs ",
            "(min ",
            "(max ",
        ] {
            assert!(
                programs.iter().any(|p| p.contains(f)),
                "no program uses {f}"
            );
        }
    }
}
