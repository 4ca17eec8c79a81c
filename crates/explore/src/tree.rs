//! The `map` nesting tree of a typed RISE program (CC'22 §4.2, Table 3, Fig. 3b).
//!
//! A `map` is *concrete* when it writes memory: it is in a write position (the
//! definition's result, a `toMem`'s stored value, or the body of a concrete `map`'s
//! function, through layout views such as `join`). A `map` in a read position (the
//! input of a `reduce`, of `zip`, of another `map`) is computed on the fly by the
//! consumer and has no loop of its own, so it has no choice of parallelism.
//!
//! Every concrete `map` is found with its *location*: the steps (`body`, `function`,
//! `argument`) from the root of the program to its `map` primitive, so that a
//! strategy can rewrite exactly that primitive (`toMapGlobal(0) @ function @ ...`).

use arith::Nat;
use rise::expr::Arg;
use rise::types::Name;
use rise::{AddrSpace, DataType, Expr, ExprKind, Prim, Type, TypeArg};

/// One step of a location, as the ELEVATE traversal of the same name.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Step {
    /// The body of a lambda.
    Body,
    /// The function of an application.
    Function,
    /// The argument of an application.
    Argument,
}

impl Step {
    /// The traversal's name in `.elv` files.
    pub fn name(self) -> &'static str {
        match self {
            Step::Body => "body",
            Step::Function => "function",
            Step::Argument => "argument",
        }
    }
}

/// A concrete `map` of the program.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MapNode {
    /// The steps from the root to the `map` primitive.
    pub path: Vec<Step>,
    /// The innermost concrete `map` whose function contains this one.
    pub parent: Option<usize>,
    /// Perfectly nested: the parent's function is `fun x => map f x` with this map.
    pub perfectly_nested: bool,
    /// It writes or reads private memory (a `toMem private` value).
    pub uses_private: bool,
    /// It writes or reads local memory (a `toMem local` value).
    pub uses_local: bool,
    /// A short name for messages: `m0`, `m1`, ... in program order.
    pub name: String,
    /// Applied to its array (`map f x`), not only to its function (`map f`).
    pub applied: bool,
    /// Its number of iterations, when the types say.
    pub count: Option<Nat>,
}

impl MapNode {
    /// The location of the applied map `map f x` (for rewrites of the whole loop).
    pub fn applied_path(&self) -> Option<&[Step]> {
        self.applied
            .then(|| &self.path[..self.path.len().saturating_sub(2)])
    }
}

/// The length of the array a map of type `t` (applied or not) produces.
fn map_count(t: Option<&Type>) -> Option<Nat> {
    match t? {
        Type::Data(DataType::Array(n, _)) => Some(n.clone()),
        Type::Fun(_, r) => map_count(Some(r)),
        _ => None,
    }
}

/// The nesting tree (Table 3's contextual functions).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct MapTree {
    /// The concrete maps, outer maps before the maps nested in them.
    pub maps: Vec<MapNode>,
    /// `MapNestingChains`: for every place that writes memory, the concrete maps
    /// around it from the outermost in; distinct and non-empty.
    pub chains: Vec<Vec<usize>>,
}

impl MapTree {
    /// `OuterMaps(m)`: the maps wrapping `m`, outermost first.
    pub fn outer(&self, m: usize) -> Vec<usize> {
        let mut out = Vec::new();
        let mut p = self.maps[m].parent;
        while let Some(q) = p {
            out.push(q);
            p = self.maps[q].parent;
        }
        out.reverse();
        out
    }

    /// `NestedMaps(m)`: all maps nested in `m`, directly or not.
    pub fn nested(&self, m: usize) -> Vec<usize> {
        (0..self.maps.len())
            .filter(|&i| self.outer(i).contains(&m))
            .collect()
    }

    /// The outermost map around `m` (or `m`): maps with different roots are in
    /// different kernels.
    pub fn root(&self, m: usize) -> usize {
        self.outer(m).first().copied().unwrap_or(m)
    }
}

/// Why a program's maps cannot be addressed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TreeError(pub String);

impl std::fmt::Display for TreeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for TreeError {}

/// Builds the nesting tree of a typed (e.g. DFNF) RISE expression.
pub fn extract(e: &Expr) -> Result<MapTree, TreeError> {
    let mut w = Walker::default();
    w.walk(
        e,
        &mut Vec::new(),
        Ctx {
            writes: true,
            mem: None,
        },
    )?;
    let mut tree = MapTree {
        maps: w.maps,
        chains: Vec::new(),
    };
    for c in w.chains {
        if !c.is_empty() && !tree.chains.contains(&c) {
            tree.chains.push(c);
        }
    }
    Ok(tree)
}

#[derive(Clone)]
struct Ctx {
    /// Whether the value computed here is written to memory.
    writes: bool,
    /// The memory it is written to, when a `toMem` says.
    mem: Option<AddrSpace>,
}

#[derive(Default)]
struct Walker {
    maps: Vec<MapNode>,
    chains: Vec<Vec<usize>>,
    stack: Vec<usize>,
    /// Variables bound to values stored by `toMem` in private or local memory.
    bound: Vec<(Name, AddrSpace)>,
    /// The memory a `toMem` continuation that is a partially applied map reads
    /// (`toMem local e (map f)`, eta-reduced by DFNF).
    partial_input: Option<AddrSpace>,
}

fn is_map(p: Prim) -> bool {
    p == Prim::Map
}

/// The expression under layout views (`join (split 4 x)` is `x`).
fn peel_views(e: &Expr) -> &Expr {
    let (head, args) = e.spine();
    match (head.kind(), args.last()) {
        (ExprKind::Prim(p), Some(Arg::Value(x))) if p.is_layout() => peel_views(x),
        _ => e,
    }
}

impl Walker {
    fn memory_of(&self, e: &Expr) -> Option<AddrSpace> {
        match peel_views(e).kind() {
            ExprKind::Var(x) => self
                .bound
                .iter()
                .rev()
                .find(|(n, _)| n == x)
                .map(|(_, a)| a.clone()),
            _ => None,
        }
    }

    fn leaf(&mut self, ctx: Ctx) {
        if ctx.writes {
            self.chains.push(self.stack.clone());
        }
    }

    fn walk(&mut self, e: &Expr, path: &mut Vec<Step>, ctx: Ctx) -> Result<(), TreeError> {
        match e.kind() {
            ExprKind::Lambda(_, _, b) | ExprKind::DepLambda(_, b) => {
                return self.at(b, path, Step::Body, ctx);
            }
            ExprKind::Annot(..) => return Err(TreeError(
                "a type annotation inside the program hides its maps; normalize it first (DFNF)"
                    .into(),
            )),
            _ => {}
        }
        let (head, args) = e.spine();
        let k = args.len();
        // The location of the i-th argument of the spine, relative to `e`.
        let arg_path = |i: usize| -> Vec<Step> {
            let mut p = vec![Step::Function; k - 1 - i];
            p.push(Step::Argument);
            p
        };
        let values: Vec<(usize, &Expr)> = args
            .iter()
            .enumerate()
            .filter_map(|(i, a)| match a {
                Arg::Value(v) => Some((i, *v)),
                Arg::Type(_) => None,
            })
            .collect();
        let read = Ctx {
            writes: false,
            mem: None,
        };
        match head.kind() {
            ExprKind::Prim(p) if is_map(*p) && !values.is_empty() => {
                let (fi, f) = values[0];
                let input = values.get(1).map(|(_, x)| *x);
                let mut pushed = false;
                if ctx.writes {
                    let input_mem = match input {
                        Some(x) => self.memory_of(x),
                        None => self.partial_input.take(),
                    };
                    let uses = |a: AddrSpace| ctx.mem.as_ref() == Some(&a) || input_mem == Some(a);
                    let parent = self.stack.last().copied();
                    let perfectly_nested = parent.is_some_and(|q| {
                        let outer = &self.maps[q].path;
                        let mut body = outer[..outer.len().saturating_sub(2)].to_vec();
                        body.extend([Step::Function, Step::Argument, Step::Body]);
                        *path == body && input.is_some_and(|x| matches!(x.kind(), ExprKind::Var(_)))
                    });
                    let mut map_path = path.clone();
                    map_path.extend(std::iter::repeat_n(Step::Function, k));
                    self.maps.push(MapNode {
                        path: map_path,
                        parent,
                        perfectly_nested,
                        uses_private: uses(AddrSpace::Private),
                        uses_local: uses(AddrSpace::Local),
                        name: format!("m{}", self.maps.len()),
                        applied: input.is_some(),
                        count: map_count(e.ty()),
                    });
                    self.stack.push(self.maps.len() - 1);
                    pushed = true;
                }
                let inner = Ctx {
                    writes: ctx.writes,
                    mem: if ctx.writes { ctx.mem.clone() } else { None },
                };
                self.at_path(f, path, &arg_path(fi), inner)?;
                if pushed {
                    self.stack.pop();
                }
                for &(i, x) in &values[1..] {
                    self.at_path(x, path, &arg_path(i), read.clone())?;
                }
                Ok(())
            }
            ExprKind::Prim(Prim::ToMem) if values.len() == 2 => {
                let addr = args.iter().find_map(|a| match a {
                    Arg::Type(TypeArg::AddrSpace(a)) => Some(a.clone()),
                    _ => None,
                });
                let (si, stored) = values[0];
                let (ki, k_fn) = values[1];
                self.at_path(
                    stored,
                    path,
                    &arg_path(si),
                    Ctx {
                        writes: true,
                        mem: addr.clone(),
                    },
                )?;
                let bound = match (k_fn.kind(), &addr) {
                    (
                        ExprKind::Lambda(x, _, _),
                        Some(a @ (AddrSpace::Private | AddrSpace::Local)),
                    ) => {
                        self.bound.push((x.clone(), a.clone()));
                        true
                    }
                    _ => false,
                };
                if !matches!(k_fn.kind(), ExprKind::Lambda(..)) {
                    self.partial_input = addr.filter(|a| *a != AddrSpace::Global);
                }
                self.at_path(k_fn, path, &arg_path(ki), ctx.clone())?;
                self.partial_input = None;
                if bound {
                    self.bound.pop();
                }
                Ok(())
            }
            ExprKind::Prim(p) if p.is_layout() && !values.is_empty() => {
                let last = values.len() - 1;
                for (j, &(i, x)) in values.iter().enumerate() {
                    let c = if j == last { ctx.clone() } else { read.clone() };
                    self.at_path(x, path, &arg_path(i), c)?;
                }
                Ok(())
            }
            _ => {
                self.leaf(ctx);
                for &(i, x) in &values {
                    self.at_path(x, path, &arg_path(i), read.clone())?;
                }
                Ok(())
            }
        }
    }

    fn at(
        &mut self,
        e: &Expr,
        path: &mut Vec<Step>,
        step: Step,
        ctx: Ctx,
    ) -> Result<(), TreeError> {
        path.push(step);
        let r = self.walk(e, path, ctx);
        path.pop();
        r
    }

    fn at_path(
        &mut self,
        e: &Expr,
        path: &mut Vec<Step>,
        rel: &[Step],
        ctx: Ctx,
    ) -> Result<(), TreeError> {
        let n = path.len();
        path.extend_from_slice(rel);
        let r = self.walk(e, path, ctx);
        path.truncate(n);
        r
    }
}
