//! Rewrite rules written as patterns in RISE syntax, `lhs ↦ rhs` (egg's
//! `rewrite!("name"; "lhs" => "rhs")` is the model): the purely structural rules
//! of the table ([`crate::rules::RULES`]) are one such text each, which is also
//! their equation, so equality saturation can read them too.
//!
//! ```text
//! transpose (map (map' f) xs) ↦ map (map' f) (transpose xs)
//! map f (map g xs)            ↦ map (fun x => f (g x)) xs
//! id (e : m.n.t)              ↦ transpose (transpose e)
//! ```
//!
//! Both sides are parsed by RISE's own expression parser
//! ([`rise::syntax::parse_expr`]), and in them:
//!
//! * **Pattern variables** are the plain names that are neither primitives nor
//!   bound by a `fun` of the pattern (`f`, `xs`); a name may end in primes
//!   (`f'`). A variable matches any term that mentions no variable bound by a
//!   lambda of the pattern (so `fun x => f x` needs `x ∉ fv(f)`); one that occurs
//!   twice must match terms equal up to renaming of bound variables (types are
//!   ignored).
//! * **Type-level variables**: the arguments of a primitive's explicit
//!   type-level parameters (`n` in `split n`, `n s` in `slide n s`) are nat
//!   variables (or constants, `split 2`), matched against the typed term's
//!   dependent application; so are the sizes in a type annotation.
//! * **Maps**: `map` stands for any map, high-level or lowered (`mapSeq`,
//!   `mapPar`, `mapGlobal(0)`, ...), and so do `map'`, `map''`: each is a
//!   variable over the kinds of map, so `map f (map g xs)` needs both maps of the
//!   same kind while `map (map' f) xs` allows different ones. The right-hand side
//!   writes the kind matched (a `map` not on the left is the primitive `map`).
//!   Other primitives, `mapSeq` included, match only themselves.
//! * **Lambdas** match lambdas up to the name of their parameter.
//! * **η**: an argument that is neither a variable nor a lambda also matches its
//!   η-expansion: `map (map' f) xs` matches `map (fun r => mapSeq g r) xs`.
//! * **Type annotations** (`(e : m.n.t)`, left-hand side only) match the type of
//!   the term: arrays of nat variables or constants, data-type variables and
//!   scalars; `id (e : m.n.t)` matches only arrays of two or more dimensions.
//!
//! The right-hand side is built as a template of new, untyped nodes around the
//! matched terms, typed by [`crate::term::finish`] ([`rule`]); its lambdas get
//! fresh parameter names from the rule's [`NameGen`], which also avoid every
//! free variable of the matched terms, so nothing is captured.
//!
//! Side conditions beyond these stay Rust closures (the rules of
//! [`crate::rules`] that are not patterns).

use crate::term::{eta_reduced, occurs};
use crate::S;
use arith::Nat;
use rise::builder::{app, dep_app, lambda, lit, prim, var};
use rise::expr::Arg;
use rise::types::Name;
use rise::{DataType, Expr, ExprKind, Kind, Literal, NameGen, Prim, Type, TypeArg};
use std::sync::Arc;

/// How a prime of a name is spelled for the RISE lexer, which has no `'`.
const PRIME: &str = "__prime";

/// A rule `lhs ↦ rhs` compiled from its text.
#[derive(Clone, Debug)]
pub struct Rewrite {
    lhs: Pattern,
    rhs: Pat,
    /// Whether the right-hand side has lambdas (which need fresh names).
    binds: bool,
}

/// A compiled left-hand side: matches typed terms.
#[derive(Clone, Debug)]
pub struct Pattern {
    pat: Pat,
    vars: Arc<Vars>,
}

/// What the variables of a pattern matched ([`Pattern::matches`]).
#[derive(Clone, Debug)]
pub struct Bindings {
    vars: Arc<Vars>,
    terms: Vec<Option<Expr>>,
    types: Vec<Option<TypeArg>>,
    maps: Vec<Option<Prim>>,
}

/// The variables of a pattern, by kind; a variable is its index in its list.
#[derive(Clone, Debug, Default)]
struct Vars {
    terms: Vec<Name>,
    types: Vec<(Name, Kind)>,
    maps: Vec<Name>,
}

#[derive(Clone, Debug)]
enum Pat {
    /// A term variable.
    Var(usize),
    /// The variable bound by the pattern's `k`-th enclosing lambda, outermost first.
    Bound(usize),
    Prim(Prim),
    /// A variable over the kinds of map.
    Map(usize),
    Lit(Literal),
    App(Box<Pat>, Box<Pat>),
    DepApp(Box<Pat>, NatPat),
    Lambda(Name, Box<Pat>),
    /// `(p : t)`: `p`, of a type that matches `t`.
    Typed(Box<Pat>, TyPat),
}

#[derive(Clone, Debug)]
enum NatPat {
    Var(usize),
    Cst(i64),
}

#[derive(Clone, Debug)]
enum TyPat {
    Array(NatPat, Box<TyPat>),
    Var(usize),
    Exact(DataType),
}

impl Rewrite {
    /// Compiles `lhs ↦ rhs`; the message says what is wrong with the text.
    pub fn parse(text: &str) -> Result<Rewrite, String> {
        let (l, r) = text
            .split_once('↦')
            .ok_or_else(|| format!("`{text}`: a rule is `lhs ↦ rhs`"))?;
        let mut vars = Vars::default();
        let lhs = compile(l, &mut vars, true)?;
        let rhs = compile(r, &mut vars, false)?;
        let binds = rhs.has_lambda();
        let lhs = Pattern {
            pat: lhs,
            vars: Arc::new(vars),
        };
        Ok(Rewrite { lhs, rhs, binds })
    }

    /// The left-hand side.
    pub fn lhs(&self) -> &Pattern {
        &self.lhs
    }

    /// The right-hand side for `e`, untyped around the matched terms, or `None`
    /// if the left-hand side does not match.
    pub fn apply(&self, e: &Expr, names: &mut NameGen) -> Option<Expr> {
        let b = self.lhs.matches(e)?;
        let mut avoid = Vec::new();
        if self.binds {
            for t in b.terms.iter().flatten() {
                avoid.extend(t.free_vars());
            }
        }
        let mut cx = Build {
            b: &b,
            names,
            avoid: &avoid,
            env: Vec::new(),
        };
        cx.build(&self.rhs)
    }
}

impl Pattern {
    /// Compiles a left-hand side on its own.
    pub fn parse(text: &str) -> Result<Pattern, String> {
        let mut vars = Vars::default();
        let pat = compile(text, &mut vars, true)?;
        Ok(Pattern {
            pat,
            vars: Arc::new(vars),
        })
    }

    /// What its variables match in `e`, if it matches.
    pub fn matches(&self, e: &Expr) -> Option<Bindings> {
        let mut b = Bindings {
            vars: self.vars.clone(),
            terms: vec![None; self.vars.terms.len()],
            types: vec![None; self.vars.types.len()],
            maps: vec![None; self.vars.maps.len()],
        };
        b.matches(&self.pat, e, false, &mut Vec::new()).then_some(b)
    }
}

/// The rule `name` rewriting with `rw` (its result typed by [`crate::term::finish`]).
pub fn rule(name: impl Into<Arc<str>>, rw: Arc<Rewrite>) -> S {
    crate::rules::rise_rule(name, move |e, names| rw.apply(e, names))
}

impl Bindings {
    /// The term the variable `name` matched.
    pub fn term(&self, name: &str) -> Option<&Expr> {
        let i = self
            .vars
            .terms
            .iter()
            .position(|v| **v == *mangle_name(name))?;
        self.terms[i].as_ref()
    }

    /// The type-level value the variable `name` matched (`n` in `split n`).
    pub fn type_arg(&self, name: &str) -> Option<&TypeArg> {
        let name = mangle_name(name);
        let i = self.vars.types.iter().position(|v| *v.0 == *name)?;
        self.types[i].as_ref()
    }

    /// The map that the map variable `name` (`map`, `map'`) matched.
    pub fn map(&self, name: &str) -> Option<Prim> {
        let i = self
            .vars
            .maps
            .iter()
            .position(|v| **v == *mangle_name(name))?;
        self.maps[i]
    }

    fn matches(&mut self, p: &Pat, t: &Expr, arg: bool, env: &mut Vec<Name>) -> bool {
        use ExprKind as E;
        let eta = arg && !matches!(p, Pat::Var(_) | Pat::Lambda(..) | Pat::Typed(..));
        let t = if eta { eta_reduced(t) } else { t };
        match (p, t.kind()) {
            (Pat::Var(i), _) => {
                !env.iter().any(|x| occurs(x, t)) && bind(&mut self.terms[*i], t.clone())
            }
            (Pat::Bound(k), E::Var(y)) => env.iter().rposition(|x| x == y) == Some(*k),
            (Pat::Prim(p), E::Prim(q)) => p == q,
            (Pat::Map(i), E::Prim(q)) => q.is_map() && bind(&mut self.maps[*i], *q),
            (Pat::Lit(l), E::Lit(m)) => l == m,
            (Pat::App(f, a), E::App(g, b)) => {
                self.matches(f, g, false, env) && self.matches(a, b, true, env)
            }
            (Pat::DepApp(f, n), E::DepApp(g, TypeArg::Nat(m))) => {
                self.matches(f, g, false, env) && self.nat(n, m)
            }
            (Pat::Lambda(_, body), E::Lambda(y, _, b)) => {
                env.push(y.clone());
                let ok = self.matches(body, b, false, env);
                env.pop();
                ok
            }
            (Pat::Typed(p, ty), _) => {
                matches!(t.ty(), Some(Type::Data(d)) if self.data(ty, d))
                    && self.matches(p, t, arg, env)
            }
            _ => false,
        }
    }

    fn nat(&mut self, p: &NatPat, n: &Nat) -> bool {
        match p {
            NatPat::Cst(c) => n.as_cst() == Some(*c),
            NatPat::Var(i) => bind(&mut self.types[*i], TypeArg::Nat(n.clone())),
        }
    }

    fn data(&mut self, p: &TyPat, d: &DataType) -> bool {
        match (p, d) {
            (TyPat::Array(n, p), DataType::Array(m, d)) => self.nat(n, m) && self.data(p, d),
            (TyPat::Var(i), _) => bind(&mut self.types[*i], TypeArg::Data(d.clone())),
            (TyPat::Exact(e), _) => e == d,
            _ => false,
        }
    }
}

/// Binds an unbound variable, or checks that a bound one is equal
/// (terms: up to renaming of bound variables, types ignored).
fn bind<T: PartialEq>(slot: &mut Option<T>, v: T) -> bool {
    match slot {
        Some(old) => *old == v,
        None => {
            *slot = Some(v);
            true
        }
    }
}

/// Instantiating a right-hand side.
struct Build<'a> {
    b: &'a Bindings,
    names: &'a mut NameGen,
    /// Free variables of the matched terms, which new binders must not capture.
    avoid: &'a [Name],
    /// The names given to the enclosing lambdas of the right-hand side.
    env: Vec<Name>,
}

impl Build<'_> {
    fn build(&mut self, p: &Pat) -> Option<Expr> {
        Some(match p {
            Pat::Var(i) => self.b.terms[*i].clone()?,
            Pat::Bound(k) => var(&self.env[*k]),
            Pat::Prim(p) => prim(*p),
            Pat::Map(i) => prim(self.b.maps[*i]?),
            Pat::Lit(l) => lit(l.clone()),
            Pat::App(f, a) => app(self.build(f)?, self.build(a)?),
            Pat::DepApp(f, n) => {
                let n = match n {
                    NatPat::Cst(c) => TypeArg::Nat(Nat::cst(*c)),
                    NatPat::Var(i) => self.b.types[*i].clone()?,
                };
                dep_app(self.build(f)?, n)
            }
            Pat::Lambda(x, body) => {
                let base = x.replace(PRIME, "");
                let x = loop {
                    let x = self.names.fresh(&base);
                    if !self.avoid.contains(&x) {
                        break x;
                    }
                };
                self.env.push(x.clone());
                let body = self.build(body);
                self.env.pop();
                lambda(&x, body?)
            }
            // Refused by `compile` on right-hand sides.
            Pat::Typed(..) => return None,
        })
    }
}

impl Pat {
    fn has_lambda(&self) -> bool {
        match self {
            Pat::Lambda(..) => true,
            Pat::App(f, a) => f.has_lambda() || a.has_lambda(),
            Pat::DepApp(f, _) | Pat::Typed(f, _) => f.has_lambda(),
            _ => false,
        }
    }
}

/// `name` as the lexer reads it: primes spelled [`PRIME`].
fn mangle_name(name: &str) -> String {
    name.replace('\'', PRIME)
}

/// A pattern as the RISE parser reads it; primes may only end a name.
fn mangle(text: &str) -> Result<String, String> {
    let mut out = String::new();
    let mut prev = ' ';
    for c in text.chars() {
        if c == '\'' {
            if !(prev.is_alphanumeric() || prev == '_' || prev == '\'') {
                return Err(format!("`{text}`: a prime `'` may only end a name"));
            }
            out.push_str(PRIME);
        } else {
            out.push(c);
        }
        prev = c;
    }
    Ok(out)
}

fn compile(text: &str, vars: &mut Vars, lhs: bool) -> Result<Pat, String> {
    let text = text.trim();
    let side = if lhs { "left" } else { "right" };
    let fail = |m: String| format!("{side}-hand side `{text}`: {}", m.replace(PRIME, "'"));
    let e = rise::syntax::parse_expr(&mangle(text)?).map_err(|d| fail(d.message))?;
    let mut c = Compiler {
        vars,
        lhs,
        binders: Vec::new(),
    };
    c.expr(&e).map_err(fail)
}

struct Compiler<'a> {
    vars: &'a mut Vars,
    lhs: bool,
    /// The parameters of the enclosing lambdas of the pattern, outermost first.
    binders: Vec<Name>,
}

impl Compiler<'_> {
    fn expr(&mut self, e: &Expr) -> Result<Pat, String> {
        use ExprKind as E;
        Ok(match e.kind() {
            E::Var(x) => match self.binders.iter().rposition(|b| b == x) {
                Some(k) => Pat::Bound(k),
                None if x.strip_prefix("map").is_some_and(is_primes) => self.map(x)?,
                None => Pat::Var(self.term(x)?),
            },
            E::Prim(Prim::Map) => self.map("map")?,
            E::Prim(p) => Pat::Prim(*p),
            E::Lit(l) => Pat::Lit(l.clone()),
            E::Foreign(f) => {
                return Err(format!(
                    "the foreign function `{}` cannot appear in a rule's pattern",
                    f.name
                ))
            }
            E::App(..) => {
                let (head, args) = e.spine();
                let explicit = match head.kind() {
                    E::Prim(p) => explicit_params(*p),
                    _ => Vec::new(),
                };
                let mut pat = self.expr(head)?;
                for (i, a) in args.into_iter().enumerate() {
                    let Arg::Value(a) = a else {
                        return Err("type-level applications are written as arguments".into());
                    };
                    pat = match explicit.get(i) {
                        Some(Kind::Nat) => Pat::DepApp(Box::new(pat), self.nat_arg(a)?),
                        Some(k) => {
                            return Err(format!(
                                "type-level arguments of kind {k:?} are not supported in patterns"
                            ))
                        }
                        None => Pat::App(Box::new(pat), Box::new(self.expr(a)?)),
                    };
                }
                pat
            }
            E::Lambda(x, None, body) => {
                self.binders.push(x.clone());
                let body = self.expr(body);
                self.binders.pop();
                Pat::Lambda(x.clone(), Box::new(body?))
            }
            E::Lambda(x, Some(_), _) => {
                return Err(format!(
                    "the parameter `{x}` has a type; annotate the term instead, `(e : t)`"
                ))
            }
            E::Annot(e, t) if self.lhs => {
                let Type::Data(d) = t else {
                    return Err(format!("`{t}`: only data types are matched"));
                };
                Pat::Typed(Box::new(self.expr(e)?), self.data(d)?)
            }
            E::Annot(..) => return Err("type annotations are matched, not built".into()),
            E::DepLambda(..) | E::DepApp(..) => {
                return Err("dependent lambdas are not supported in patterns".into())
            }
        })
    }

    /// A term variable, new on the left-hand side.
    fn term(&mut self, x: &Name) -> Result<usize, String> {
        if self.vars.types.iter().any(|t| t.0 == *x) {
            return Err(format!("`{x}` is a type-level variable, used as a term"));
        }
        self.index(|v| &mut v.terms, x)
    }

    /// A map variable; a `map` that the left-hand side does not have is the primitive.
    fn map(&mut self, x: &str) -> Result<Pat, String> {
        let x: Name = x.into();
        if x.as_ref() == "map" && !self.lhs && !self.vars.maps.contains(&x) {
            return Ok(Pat::Prim(Prim::Map));
        }
        Ok(Pat::Map(self.index(|v| &mut v.maps, &x)?))
    }

    fn index(
        &mut self,
        list: impl Fn(&mut Vars) -> &mut Vec<Name>,
        x: &Name,
    ) -> Result<usize, String> {
        let lhs = self.lhs;
        let list = list(self.vars);
        if let Some(i) = list.iter().position(|v| v == x) {
            return Ok(i);
        }
        if !lhs {
            return Err(format!("`{x}` is not a variable of the left-hand side"));
        }
        list.push(x.clone());
        Ok(list.len() - 1)
    }

    /// A type-level variable of kind `kind`, new on the left-hand side.
    fn type_var(&mut self, x: &str, kind: Kind) -> Result<usize, String> {
        if self.vars.terms.iter().any(|t| **t == *x) {
            return Err(format!(
                "`{x}` is a term variable, used as a type-level one"
            ));
        }
        match self.vars.types.iter().position(|v| *v.0 == *x) {
            Some(i) if self.vars.types[i].1 == kind => Ok(i),
            Some(_) => Err(format!("`{x}` is used with two kinds")),
            None if self.lhs => {
                self.vars.types.push((x.into(), kind));
                Ok(self.vars.types.len() - 1)
            }
            None => Err(format!("`{x}` is not a variable of the left-hand side")),
        }
    }

    /// The argument of an explicit nat parameter: a variable or a constant.
    fn nat_arg(&mut self, a: &Expr) -> Result<NatPat, String> {
        match a.kind() {
            ExprKind::Var(x) if !self.binders.contains(x) => {
                Ok(NatPat::Var(self.type_var(x, Kind::Nat)?))
            }
            ExprKind::Lit(Literal::Int(c, _)) if *c >= 0 => Ok(NatPat::Cst(*c)),
            _ => Err("the argument of a nat parameter must be a variable or a constant".into()),
        }
    }

    fn nat(&mut self, n: &Nat) -> Result<NatPat, String> {
        if let Some(c) = n.as_cst() {
            return Ok(NatPat::Cst(c));
        }
        let v = n
            .as_var()
            .ok_or_else(|| format!("the size `{n}` must be a variable or a constant"))?;
        Ok(NatPat::Var(self.type_var(v.name(), Kind::Nat)?))
    }

    fn data(&mut self, d: &DataType) -> Result<TyPat, String> {
        Ok(match d {
            DataType::Array(n, d) => TyPat::Array(self.nat(n)?, Box::new(self.data(d)?)),
            DataType::Var(t) => TyPat::Var(self.type_var(t, Kind::Data)?),
            DataType::Scalar(_) | DataType::NatType => TyPat::Exact(d.clone()),
            _ => return Err(format!("the type `{d}` is not supported in patterns")),
        })
    }
}

/// Whether `s` is one or more primes (as the lexer reads them).
fn is_primes(s: &str) -> bool {
    !s.is_empty() && s.split(PRIME).all(str::is_empty)
}

/// The kinds of a primitive's explicit type-level parameters, in order.
fn explicit_params(p: Prim) -> Vec<Kind> {
    let mut t = p.scheme();
    let mut out = Vec::new();
    while let Type::DepFun {
        binder,
        implicit,
        body,
    } = t
    {
        if !implicit {
            out.push(binder.kind);
        }
        t = body;
    }
    out
}

#[cfg(test)]
mod tests;
