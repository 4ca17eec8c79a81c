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
mod tests {
    use super::*;
    use rise::syntax::parse_expr;

    /// The body of `def f : ty = fun p1 .. pk => body`, typed, under its `k` parameters.
    fn typed(ty: &str, params: usize, body: &str) -> Expr {
        let src = format!("def f : {ty} = {body}");
        let checked = rise::infer::check_source(&src).unwrap_or_else(|e| panic!("{src}: {e}"));
        let mut e = rise::infer::prepare_def(&checked, "f").unwrap().body;
        while let ExprKind::DepLambda(_, b) = e.kind() {
            e = b.clone();
        }
        for _ in 0..params {
            let ExprKind::Lambda(_, _, b) = e.kind() else {
                panic!("{src}: fewer than {params} parameters")
            };
            e = b.clone();
        }
        e
    }

    fn parse(src: &str) -> Expr {
        parse_expr(src).unwrap_or_else(|e| panic!("{src}: {e}"))
    }

    fn pattern(src: &str) -> Pattern {
        Pattern::parse(src).unwrap_or_else(|e| panic!("{e}"))
    }

    #[test]
    fn lambdas_match_up_to_renaming_of_their_parameters() {
        let first = pattern("fun a b => a");
        assert!(first.matches(&parse("fun x y => x")).is_some());
        assert!(first.matches(&parse("fun y x => y")).is_some());
        assert!(first.matches(&parse("fun x y => y")).is_none());
        // The inner `x` shadows the outer one.
        assert!(first.matches(&parse("fun x x => x")).is_none());
        assert!(pattern("fun a b => b")
            .matches(&parse("fun x x => x"))
            .is_some());

        let e = typed(
            "{n: nat} -> n.f32 -> n.f32",
            1,
            "fun xs => map (fun y => neg y) xs",
        );
        let b = pattern("map (fun a => f a) xs")
            .matches(&e)
            .expect("matches");
        assert_eq!(b.term("f"), Some(&parse("neg")));
        assert_eq!(b.term("xs"), Some(&parse("xs")));
    }

    #[test]
    fn variables_cannot_match_terms_with_variables_bound_in_the_pattern() {
        let eta = pattern("fun x => f x");
        assert!(eta.matches(&parse("fun y => add y y")).is_none());
        let b = eta.matches(&parse("fun y => add z y")).expect("matches");
        assert_eq!(b.term("f"), Some(&parse("add z")));
    }

    #[test]
    fn repeated_variables_match_equal_terms() {
        let twice = pattern("zip xs xs");
        assert!(twice.matches(&parse("zip a a")).is_some());
        assert!(twice.matches(&parse("zip a b")).is_none());
        let fused = pattern("map f (map f xs)");
        let same = parse("map (fun x => neg x) (map (fun y => neg y) xs)");
        assert!(fused.matches(&same).is_some());
        let other = parse("map (fun x => neg x) (map (fun y => y) xs)");
        assert!(fused.matches(&other).is_none());
    }

    #[test]
    fn nat_arguments_are_variables_or_constants() {
        let e = typed(
            "{n: nat} -> (n*4).f32 -> n.4.f32",
            1,
            "fun xs => split 4 xs",
        );
        let b = pattern("split n xs").matches(&e).expect("matches");
        assert_eq!(b.type_arg("n"), Some(&TypeArg::Nat(Nat::cst(4))));
        assert!(pattern("split 4 xs").matches(&e).is_some());
        assert!(pattern("split 2 xs").matches(&e).is_none());

        let slide = |sz: i64, sp: i64| {
            let ty = format!("{{n: nat}} -> ({sp}*n+{sz}).f32 -> (n+1).{sz}.f32");
            typed(&ty, 1, &format!("fun xs => slide {sz} {sp} xs"))
        };
        let square = pattern("slide n n xs");
        assert!(square.matches(&slide(3, 3)).is_some());
        assert!(square.matches(&slide(3, 1)).is_none());
        let b = pattern("slide n s xs")
            .matches(&slide(3, 1))
            .expect("matches");
        assert_eq!(b.type_arg("s"), Some(&TypeArg::Nat(Nat::cst(1))));
    }

    #[test]
    fn map_variables_match_every_kind_of_map() {
        let ty = "{n m: nat} -> n.m.f32 -> m.n.f32";
        let e = typed(ty, 1, "fun xs => transpose (mapPar (mapSeq neg) xs)");
        let rw = Rewrite::parse("transpose (map (map' f) xs) ↦ map (map' f) (transpose xs)")
            .expect("compiles");
        let b = rw.lhs().matches(&e).expect("matches");
        assert_eq!(
            (b.map("map"), b.map("map'")),
            (Some(Prim::MapPar), Some(Prim::MapSeq))
        );
        let out = rw.apply(&e, &mut NameGen::new()).expect("applies");
        assert_eq!(out, parse("mapPar (mapSeq neg) (transpose xs)"));

        // One variable, one kind.
        let fused = pattern("map f (map g xs)");
        let ty = "{n: nat} -> n.f32 -> n.f32";
        let same = typed(ty, 1, "fun xs => mapSeq neg (mapSeq neg xs)");
        let mixed = typed(ty, 1, "fun xs => mapSeq neg (mapPar neg xs)");
        assert_eq!(
            fused.matches(&same).and_then(|b| b.map("map")),
            Some(Prim::MapSeq)
        );
        assert!(fused.matches(&mixed).is_none());
        // Other primitives match only themselves.
        assert!(pattern("mapSeq f xs")
            .matches(&typed(ty, 1, "fun xs => map neg xs"))
            .is_none());
        assert!(pattern("map f xs")
            .matches(&typed(
                ty,
                1,
                "fun xs => reduceSeq add 0.0f xs |> fun s => generate (fun i => s)"
            ))
            .is_none());
    }

    #[test]
    fn arguments_match_their_eta_expansion() {
        let ty = "{n m: nat} -> n.m.f32 -> n.m.f32";
        let e = typed(ty, 1, "fun xs => map (fun r => mapSeq neg r) xs");
        let b = pattern("map (map' f) xs").matches(&e).expect("matches");
        assert_eq!(b.term("f"), Some(&parse("neg")));
        assert_eq!(b.map("map'"), Some(Prim::MapSeq));
        // A variable takes the argument as it is.
        let b = pattern("map f xs").matches(&e).expect("matches");
        assert_eq!(b.term("f"), Some(&parse("fun r => mapSeq neg r")));
        // Not when the parameter is used elsewhere.
        let e = typed(
            "{n: nat} -> n.n.f32 -> n.n.f32",
            1,
            "fun xs => map (fun r => map (fun x => x) r) xs",
        );
        assert!(pattern("map (map' f) xs").matches(&e).is_some());
        let e = typed(
            "{n: nat} -> n.n.f32 -> n.n.n.f32",
            1,
            "fun xs => map (fun r => map (fun x => r) r) xs",
        );
        assert!(pattern("map (map' f) xs").matches(&e).is_none());
    }

    #[test]
    fn type_annotations_match_the_type_of_the_term() {
        let two_d = pattern("id (e : m.n.t)");
        let e = typed("{n: nat} -> n.3.f32 -> n.3.f32", 1, "fun xs => id xs");
        let b = two_d.matches(&e).expect("matches");
        assert_eq!(b.type_arg("n"), Some(&TypeArg::Nat(Nat::cst(3))));
        assert_eq!(b.type_arg("t"), Some(&TypeArg::Data(DataType::f32())));
        let three_d = typed("{n: nat} -> n.3.2.f32 -> n.3.2.f32", 1, "fun xs => id xs");
        assert!(two_d.matches(&three_d).is_some());
        let one_d = typed("{n: nat} -> n.f32 -> n.f32", 1, "fun xs => id xs");
        assert!(two_d.matches(&one_d).is_none());
        assert!(pattern("id (e : n.f32)").matches(&one_d).is_some());
        assert!(pattern("id (e : n.i32)").matches(&one_d).is_none());
        // Untyped terms do not match an annotation.
        assert!(two_d.matches(&parse("id xs")).is_none());
    }

    #[test]
    fn other_shapes_do_not_match() {
        let ty = "{n m: nat} -> n.m.f32 -> (n*m).f32";
        let e = typed(ty, 1, "fun xs => join xs");
        assert!(pattern("transpose xs").matches(&e).is_none());
        assert!(pattern("join (map f xs)").matches(&e).is_none());
        assert!(pattern("join xs").matches(&e).is_some());
        assert!(pattern("fun x => f x").matches(&e).is_none());
        assert!(pattern("3").matches(&parse("2")).is_none());
    }

    #[test]
    fn right_hand_side_binders_are_fresh_and_capture_nothing() {
        let fusion = Rewrite::parse("map f (map g xs) ↦ map (fun x => f (g x)) xs").unwrap();
        let e = parse("map (fun y => add y x_0) (map neg xs)");
        let out = fusion.apply(&e, &mut NameGen::new()).expect("applies");
        // `x_0` is free in `f`: the new parameter is another name.
        let expected = parse("map (fun z => (fun y => add y x_0) (neg z)) xs");
        assert_eq!(out, expected);
        assert!(out.free_vars().iter().any(|v| &**v == "x_0"));

        let e = parse("map (fun y => add y x) (map neg xs)");
        let out = fusion.apply(&e, &mut NameGen::new()).expect("applies");
        assert_eq!(out, parse("map (fun z => (fun y => add y x) (neg z)) xs"));
        let ExprKind::App(f, _) = out.kind() else {
            panic!("{out:?}")
        };
        let ExprKind::App(_, lam) = f.kind() else {
            panic!("{out:?}")
        };
        assert!(matches!(lam.kind(), ExprKind::Lambda(x, ..) if &**x == "x_0"));
    }

    #[test]
    fn nat_variables_are_rebuilt_as_type_level_arguments() {
        let e = typed(
            "{n: nat} -> (n*4).f32 -> n.4.f32",
            1,
            "fun xs => split 4 (map neg xs)",
        );
        let rw = Rewrite::parse("split n (map f xs) ↦ map (map f) (split n xs)").unwrap();
        let out = rw.apply(&e, &mut NameGen::new()).expect("applies");
        let expected = rise::builder::app(
            rise::builder::map(rise::builder::map(parse("neg"))),
            rise::builder::app(rise::builder::split(4), parse("xs")),
        );
        assert_eq!(out, expected);
    }

    #[test]
    fn bad_patterns_are_reported() {
        for (text, says) in [
            ("map f xs", "lhs ↦ rhs"),
            ("f ↦ g", "`g` is not a variable of the left-hand side"),
            ("e ↦ (e : n.t)", "matched, not built"),
            ("split (n + 1) xs ↦ xs", "variable or a constant"),
            ("'f ↦ f", "prime"),
            ("split n xs ↦ n", "type-level variable, used as a term"),
            (
                "map f xs ↦ map' f xs",
                "`map'` is not a variable of the left-hand side",
            ),
            ("fun (x: f32) => x ↦ id", "has a type"),
            ("map f ↦ map (", "right-hand side `map (`: expected"),
        ] {
            let err = Rewrite::parse(text).expect_err(text);
            assert!(err.contains(says), "{text}: {err}");
        }
    }

    #[test]
    fn every_pattern_row_of_the_rule_table_compiles() {
        let rows: Vec<_> = crate::rules::RULES.iter().filter(|r| r.pattern).collect();
        assert!(!rows.is_empty());
        for r in rows {
            assert!(r.params.is_empty(), "{}", r.name);
            if let Err(e) = Rewrite::parse(r.equation) {
                panic!("{}: {e}", r.name);
            }
        }
    }
}
