//! The productions of the primitives of issue 14: `gather` (indices from inputs, computed
//! with `natAsIndex` and modular arithmetic, or any generated index array), `scatter`
//! (positions distinct by construction: an input permutation, a rotation, a reversal; and
//! now and then positions that collide, the error path), `idx` with an index computed at
//! run time, `natType` arithmetic, vectors (`makeVector`, elementwise arithmetic,
//! `vectorFromScalar`, `lane`, arrays of vectors through `map`), and foreign functions
//! declared by the program (C bodies over their arguments: arithmetic, a conditional,
//! `fmax`, statements).

use super::{Entry, Gen, MAX_INPUTS};
use crate::ast::Node;
use crate::size::Size;
use crate::ty::{Scalar, Ty};

/// At most this many foreign functions per program.
const MAX_FOREIGN: usize = 2;

/// A foreign function a program declares: `foreign NAME (x: T) [(y: T)] : T { BODY }`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Foreign {
    /// Its name (`ff1`, `ff2`; a program names it after its definition, `dt7zff1`).
    pub name: String,
    /// The parameters' types (named `x` and `y` in the body).
    pub params: Vec<Scalar>,
    /// The result type.
    pub result: Scalar,
    /// The C body, between the braces.
    pub body: String,
}

impl Foreign {
    /// The declaration in RISE's surface syntax.
    pub fn declaration(&self) -> String {
        let params: String = self
            .params
            .iter()
            .zip(["x", "y"])
            .map(|(t, x)| format!(" ({x}: {})", t.name()))
            .collect();
        format!(
            "foreign {}{params} : {} {{ {} }}\n",
            self.name,
            self.result.name(),
            self.body
        )
    }
}

/// The C type of a scalar type (as foreign functions see their parameters).
pub fn c_type(s: Scalar) -> &'static str {
    match s {
        Scalar::Bool => "bool",
        Scalar::Int => "int",
        Scalar::I8 => "int8_t",
        Scalar::I16 => "int16_t",
        Scalar::I32 => "int32_t",
        Scalar::I64 => "int64_t",
        Scalar::U8 => "uint8_t",
        Scalar::U16 => "uint16_t",
        Scalar::U32 => "uint32_t",
        Scalar::U64 => "uint64_t",
        Scalar::F32 => "float",
        Scalar::F64 => "double",
    }
}

/// A C literal of a float type: `v / 4`.
fn c_float(s: Scalar, v: u64) -> String {
    let x = v as f64 / 4.0;
    if s == Scalar::F32 {
        format!("{x:?}f")
    } else {
        format!("{x:?}")
    }
}

impl Gen<'_> {
    /// A new input of type `t`, or `None` when the definition has as many as it may.
    pub(super) fn new_input(&mut self, t: &Ty) -> Option<Node> {
        if self.inputs.len() >= MAX_INPUTS {
            return None;
        }
        let name = format!("x{}", self.inputs.len());
        self.inputs.push((name.clone(), t.clone()));
        Some(Node::leaf(t.clone(), name.clone(), vec![name]))
    }

    /// A vector width: mostly 2 and 4, sometimes 3 and 8.
    pub(super) fn vec_width(&mut self) -> i64 {
        self.rng.weighted(&[(2, 3), (4, 4), (3, 1), (8, 1)])
    }

    /// A vector type for intermediate values.
    pub(super) fn vec_ty(&mut self) -> Ty {
        let s = self.rng.weighted(&[
            (Scalar::F32, 6),
            (Scalar::Int, 2),
            (Scalar::I32, 1),
            (Scalar::F64, 1),
            (Scalar::U8, 1),
            (Scalar::I16, 1),
        ]);
        Ty::Vec(s, self.vec_width())
    }

    /// The bound of an index: one of an index in scope (mostly), or a random size.
    fn index_size(&mut self, env: &[Entry]) -> Size {
        let bounds: Vec<Size> = env
            .iter()
            .filter_map(|e| match &e.ty {
                Ty::Idx(k) => Some(k.clone()),
                _ => None,
            })
            .collect();
        if !bounds.is_empty() && self.rng.chance(70) {
            return self.rng.pick(&bounds).clone();
        }
        self.size()
    }

    /// A `natType` expression.
    pub(super) fn gen_nat(&mut self, env: &[Entry], d: u32) -> Node {
        let t = Ty::Nat;
        match self.rng.range(0, 10) {
            0..=2 => {
                let k = self.index_size(env);
                let i = self.gen(&Ty::Idx(k), env, d);
                Node::op(t, "(indexAsNat $0)", vec![i])
            }
            3 | 4 => {
                let op = *self.rng.pick(&["+", "*"]);
                let a = self.gen(&t, env, d);
                let b = self.gen(&t, env, d);
                Node::op(t, format!("($0 {op} $1)"), vec![a, b])
            }
            // data as a natural number (negative and float values have none)
            5 => self.nat_of_data(env, d),
            6 => {
                let n = self.size();
                self.text_vars.extend(n.vars());
                Node::leaf(t, n.nat_expr(), vec![])
            }
            7 | 8 => {
                let op = *self.rng.pick(&["/", "%"]);
                let c = self.rng.range(1, 4);
                let a = self.gen(&t, env, d);
                Node::op(t, format!("($0 {op} ({c} : natType))"), vec![a])
            }
            9 if self.rng.chance(40) => self.big_nat(),
            _ => Node::leaf(t, format!("({} : natType)", self.rng.range(0, 9)), vec![]),
        }
    }

    /// An index below `k`: `natAsIndex k` of a computed natural number, reduced modulo `k`
    /// (now and then not, so that the range check runs; not where the number is a constant,
    /// which the type checker checks).
    pub(super) fn gen_index(&mut self, k: &Size, env: &[Entry], d: u32) -> Node {
        let t = Ty::Idx(k.clone());
        let nat = self.gen(&Ty::Nat, env, d);
        if self.rng.chance(8) && !nat.free().is_empty() {
            return Node::op(t, format!("(natAsIndex {k} $0)"), vec![nat]);
        }
        Node::op(
            t,
            format!("(natAsIndex {k} ($0 % {}))", k.nat_expr()),
            vec![nat],
        )
    }

    /// `n` indices below `k` for `gather`: an input (values in range), `(a*i + b) mod k`
    /// over a `generate`, or any generated index array.
    fn index_array(&mut self, n: &Size, k: &Size, env: &[Entry], d: u32) -> Node {
        let t = Ty::arr(n.clone(), Ty::Idx(k.clone()));
        match self.rng.range(0, 9) {
            0..=3 => {
                if let Some(input) = self.new_input(&t) {
                    return input;
                }
            }
            4..=6 => {
                let i = self.name("i");
                let (a, b) = (self.rng.range(0, 4), self.rng.range(0, 5));
                return Node::leaf(
                    t.clone(),
                    format!(
                        "(generate (fun {i} => natAsIndex {k} ((indexAsNat {i} * ({a} : natType) \
                         + ({b} : natType)) % {})) : {t})",
                        k.nat_expr()
                    ),
                    vec![],
                );
            }
            _ => {}
        }
        self.gen(&t, env, d)
    }

    /// `n` distinct positions below `n` for `scatter`: an input (inputs `k.idx[k]` are
    /// permutations), a rotation or a reversal computed with `generate`; now and then
    /// `i / 2`, which repeats positions for `n >= 2` (the error path).
    fn positions(&mut self, n: &Size) -> Node {
        let t = Ty::arr(n.clone(), Ty::Idx(n.clone()));
        let pick = self.rng.range(0, 19);
        if pick <= 5 {
            if let Some(input) = self.new_input(&t) {
                return input;
            }
        }
        let i = self.name("i");
        let ne = n.nat_expr();
        let body = match pick {
            0..=11 => {
                let r = self.rng.range(0, 4);
                format!("natAsIndex {n} ((indexAsNat {i} + ({r} : natType)) % {ne})")
            }
            12..=17 => format!("natAsIndex {n} (({ne} - (1 : natType)) - indexAsNat {i})"),
            _ => format!("natAsIndex {n} (indexAsNat {i} / (2 : natType))"),
        };
        Node::leaf(
            t.clone(),
            format!("(generate (fun {i} => {body}) : {t})"),
            vec![],
        )
    }

    /// `gather is xs : n.e`.
    pub(super) fn gather(&mut self, n: &Size, e: &Ty, t: &Ty, env: &[Entry], d: u32) -> Node {
        let k = self.size();
        let is = self.index_array(n, &k, env, d);
        let xs = self.gen(&Ty::arr(k, e.clone()), env, d);
        Node::op(t.clone(), "(gather $0 $1)", vec![is, xs])
    }

    /// `scatter is xs : n.e` with distinct positions (or, now and then, colliding ones).
    pub(super) fn scatter(&mut self, n: &Size, e: &Ty, t: &Ty, env: &[Entry], d: u32) -> Node {
        let is = self.positions(n);
        let xs = self.gen(&Ty::arr(n.clone(), e.clone()), env, d);
        Node::op(t.clone(), "(scatter $0 $1)", vec![is, xs])
    }

    /// `idx i xs : t` with an index computed at run time.
    pub(super) fn run_time_idx(&mut self, t: &Ty, env: &[Entry], d: u32) -> Node {
        let k = self.index_size(env);
        let i = self.gen(&Ty::Idx(k.clone()), env, d);
        let xs = self.gen(&Ty::arr(k, t.clone()), env, d);
        Node::op(t.clone(), "(idx $0 $1)", vec![i, xs])
    }

    /// `lane j v : s`, of a vector in scope (mostly, where there is one) or a generated one.
    pub(super) fn lane(&mut self, s: Scalar, env: &[Entry], d: u32) -> Node {
        let widths: Vec<i64> = env
            .iter()
            .filter_map(|e| match e.ty {
                Ty::Vec(vs, k) if vs == s => Some(k),
                _ => None,
            })
            .collect();
        let k = if !widths.is_empty() && self.rng.chance(60) {
            *self.rng.pick(&widths)
        } else {
            self.vec_width()
        };
        let v = self.gen(&Ty::Vec(s, k), env, d);
        let j = self.rng.range(0, k - 1);
        Node::op(Ty::S(s), format!("(lane {j} $0)"), vec![v])
    }

    /// A vector of `k` lanes of `s`.
    pub(super) fn gen_vec(&mut self, s: Scalar, k: i64, env: &[Entry], d: u32) -> Node {
        let t = Ty::Vec(s, k);
        match self.rng.range(0, 9) {
            0..=3 => {
                let depth = if k > 4 { d.min(1) } else { d };
                let lanes: Vec<Node> = (0..k).map(|_| self.gen(&Ty::S(s), env, depth)).collect();
                let holes: Vec<String> = (0..lanes.len()).map(|i| format!("${i}")).collect();
                Node::op(t, format!("(makeVector {k} {})", holes.join(" ")), lanes)
            }
            4 | 5 => {
                let op = *self.rng.pick(&["+", "-", "*"]);
                let a = self.gen(&t, env, d);
                let b = self.gen(&t, env, d);
                Node::op(t, format!("($0 {op} $1)"), vec![a, b])
            }
            6 => {
                let x = self.gen(&Ty::S(s), env, d);
                Node::op(t.clone(), format!("(vectorFromScalar $0 : {t})"), vec![x])
            }
            7 => {
                let f = match (s.is_float(), self.rng.chance(50)) {
                    (true, true) => "(fmax $0 $1)",
                    (true, false) => "(fmin $0 $1)",
                    (false, true) => "(max $0 $1)",
                    (false, false) => "(min $0 $1)",
                };
                let a = self.gen(&t, env, d);
                let b = self.gen(&t, env, d);
                Node::op(t, f, vec![a, b])
            }
            _ => self.reduction(&t, env, d),
        }
    }

    /// A vector of literals (a leaf).
    pub(super) fn vec_literal(&mut self, s: Scalar, k: i64) -> Node {
        let lanes: Vec<String> = (0..k).map(|_| self.literal(s)).collect();
        Node::leaf(
            Ty::Vec(s, k),
            format!("(makeVector {k} {})", lanes.join(" ")),
            vec![],
        )
    }

    /// A call of a foreign function of the program returning `s` (declared here the first
    /// time, at most [`MAX_FOREIGN`] per program); `None` when no more may be declared.
    pub(super) fn foreign_call(&mut self, s: Scalar, env: &[Entry], d: u32) -> Option<Node> {
        let index = match self.foreign.iter().position(|f| f.result == s) {
            Some(i) => i,
            None if self.foreign.len() < MAX_FOREIGN => {
                let arity = self.rng.range(1, 2) as usize;
                let name = format!("ff{}", self.foreign.len() + 1);
                let body = self.foreign_effect(&name, s) + &self.foreign_body(s, arity);
                self.foreign.push(Foreign {
                    name,
                    params: vec![s; arity],
                    result: s,
                    body,
                });
                self.foreign.len() - 1
            }
            None => return None,
        };
        let f = self.foreign[index].clone();
        let args: Vec<Node> = f
            .params
            .iter()
            .map(|&p| self.gen(&Ty::S(p), env, d))
            .collect();
        let holes: Vec<String> = (0..args.len()).map(|i| format!("${i}")).collect();
        Some(Node::op(
            Ty::S(s),
            format!("({} {})", f.name, holes.join(" ")),
            args,
        ))
    }

    /// A C body over `x` (and `y` when `arity` is 2) computing a `s`: arithmetic, a
    /// conditional, the larger one (`fmaxf`, `fmax`), or statements (a local and an `if`). Integer
    /// arithmetic is unsigned (wrap-around is defined) and converted back.
    fn foreign_body(&mut self, s: Scalar, arity: usize) -> String {
        let c = c_type(s);
        let (x, y) = ("x", if arity == 2 { "y" } else { "x" });
        let shape = self.rng.range(0, 3);
        if s.is_float() {
            let a = c_float(s, self.rng.range(1, 8) as u64);
            let b = c_float(s, self.rng.range(0, 8) as u64);
            // `<math.h>`'s `float` function for `f32` (OpenCL code maps it to `fmax`)
            let max = if s == Scalar::F32 { "fmaxf" } else { "fmax" };
            match shape {
                0 => format!("return {x} * {y} + {a};"),
                1 => format!("return {x} < {y} ? {y} - {x} : {x} * {a};"),
                2 => format!("return {max}({x}, {y}) + {b};"),
                _ => format!("{c} t = {x} * {a}; if (t > {y}) return t - {y}; return {y} + {b};"),
            }
        } else {
            let w = if matches!(s, Scalar::I64 | Scalar::U64) {
                "uint64_t"
            } else {
                "uint32_t"
            };
            let a = self.rng.range(1, 9);
            match shape {
                0 => format!("return ({c})(({w}){x} * ({w}){y} + ({w}){a});"),
                1 => format!("return {x} < {y} ? {y} : ({c})(({w}){x} - ({w}){y});"),
                2 => format!("return {x} > {y} ? {x} : {y};"),
                _ => format!(
                    "{w} t = ({w}){x} * ({w}){a}; if (t > ({w}){y}) return ({c})(t - ({w}){y}); \
                     return ({c})t;"
                ),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::case::Case;

    fn programs(seed: u64, count: u64) -> Vec<String> {
        (0..count)
            .map(|i| Case::generate(seed, i).program)
            .collect()
    }

    /// The generator reaches every production of this module.
    #[test]
    fn generated_programs_use_the_new_primitives() {
        let programs = programs(7, 400);
        for needle in [
            "(gather x",                   // indices from an input
            "(gather (generate",           // indices computed with natAsIndex
            "(scatter x",                  // an input permutation
            "(scatter (generate",          // a rotation or a reversal
            "(1 : natType)) - indexAsNat", // a reversal
            "/ (2 : natType))",            // colliding positions (the error path)
            "(idx (natAsIndex",            // idx with a run-time index
            "(cast ",                      // ... of data (cast to natType)
            "(lane ",
            "(makeVector ",
            "(vectorFromScalar ",
            ".vec[", // arrays of vectors
            "ff1 (x: ",
            "? ",       // a conditional in a foreign body
            "fmax(",    // fmax in a foreign body
            "if (t > ", // statements in a foreign body
        ] {
            assert!(
                programs.iter().any(|p| p.contains(needle)),
                "no program has `{needle}`"
            );
        }
        assert!(programs
            .iter()
            .any(|p| p.contains(": natType)") && p.contains("zff")));
    }

    /// Generated programs parse and type-check (the generator's types are RISE's).
    #[test]
    fn generated_programs_type_check() {
        let mut bad = Vec::new();
        for (i, p) in programs(11, 400).iter().enumerate() {
            if let Err(d) = rise::infer::check_source(p) {
                bad.push(format!("case {i}: {}\n{p}", d.render("gen.rise", p)));
            }
        }
        assert!(
            bad.is_empty(),
            "{} ill-typed:\n{}",
            bad.len(),
            bad.join("\n")
        );
    }
}
