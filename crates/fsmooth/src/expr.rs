//! F-smooth terms (thesis §5.7; Shaikhha et al., ICFP 2019, §3): immutable,
//! shared behind an `Arc`, each node caching its free variables so that the
//! side conditions of rewrite rules (`x ∉ fv(e)`) cost a binary search.
//!
//! Built-in operations ([`Prim`]) are always *saturated*: `build n f` is one
//! node with two arguments, which is how the rules of the F-smooth paper match
//! them (`(build e0 e1)[e2]`, `length (build e0 e1)`).

use crate::types::Type;
use diagnostics::Span;
use std::cmp::Ordering;
use std::sync::Arc;

/// A variable name.
pub type Name = Arc<str>;

/// The built-in operations of F-smooth, always applied to all their arguments.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Prim {
    /// `build n f : Array<M>` for `n : Card`, `f : Index => M`.
    Build,
    /// `a[i]` (also written `get a i`).
    Get,
    /// `length a : Card`.
    Length,
    /// `ifold f z n`: `z`, then `f acc i` for `i = 0 .. n-1`.
    IFold,
    /// `(a, b)`.
    Pair,
    /// `fst p`.
    Fst,
    /// `snd p`.
    Snd,
    /// `a + b` on numbers.
    Add,
    /// `a - b`.
    Sub,
    /// `a * b`.
    Mul,
    /// `a / b`.
    Div,
    /// `-a`.
    Neg,
    /// `a < b`.
    Lt,
    /// `a <= b`.
    Le,
    /// `a > b`.
    Gt,
    /// `a >= b`.
    Ge,
    /// `a == b`.
    Eq,
    /// `a != b`.
    Ne,
    /// `a && b` (short-circuit).
    And,
    /// `a || b` (short-circuit).
    Or,
    /// `!a`.
    Not,
    /// `sin a`.
    Sin,
    /// `cos a`.
    Cos,
    /// `exp a`.
    Exp,
    /// `log a`.
    Log,
    /// `sqrt a`.
    Sqrt,
    /// `toDouble i`: an `Index` as a `Double`.
    ToDouble,
    /// `deriv f x : T` for `f : Double => T`, `x : Double`: the derivative of
    /// `f` at `x` (forward mode; [`crate::derivatives`]).
    Deriv,
    /// `grad f v : Vector` for `f : Vector => Double`, `v : Vector`: the
    /// gradient of `f` at `v` (forward mode, one vector program).
    Grad,
    /// `jacob f v : Matrix` for `f : Vector => Vector`, `v : Vector`: the
    /// Jacobian of `f` at `v`, row `i` the gradient of component `i`.
    Jacob,
}

/// The built-ins written as functions (`build n f`), with their surface names.
pub const FUNCTION_PRIMS: &[(&str, Prim)] = &[
    ("build", Prim::Build),
    ("get", Prim::Get),
    ("length", Prim::Length),
    ("ifold", Prim::IFold),
    ("fst", Prim::Fst),
    ("snd", Prim::Snd),
    ("sin", Prim::Sin),
    ("cos", Prim::Cos),
    ("exp", Prim::Exp),
    ("log", Prim::Log),
    ("sqrt", Prim::Sqrt),
    ("toDouble", Prim::ToDouble),
    ("deriv", Prim::Deriv),
    ("grad", Prim::Grad),
    ("jacob", Prim::Jacob),
];

impl Prim {
    /// How many arguments it takes.
    pub fn arity(self) -> usize {
        use Prim::*;
        match self {
            IFold => 3,
            Build | Get | Pair | Add | Sub | Mul | Div | Lt | Le | Gt | Ge | Eq | Ne | And | Or
            | Deriv | Grad | Jacob => 2,
            Length | Fst | Snd | Neg | Not | Sin | Cos | Exp | Log | Sqrt | ToDouble => 1,
        }
    }

    /// The built-in called `name` in function syntax (`build`, `fst`, ...).
    pub fn from_name(name: &str) -> Option<Prim> {
        FUNCTION_PRIMS
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, p)| *p)
    }

    /// The surface name: `build`, `+`, `<=`, ...
    pub fn name(self) -> &'static str {
        use Prim::*;
        match self {
            Build => "build",
            Get => "get",
            Length => "length",
            IFold => "ifold",
            Pair => "pair",
            Fst => "fst",
            Snd => "snd",
            Add => "+",
            Sub => "-",
            Mul => "*",
            Div => "/",
            Neg => "-",
            Lt => "<",
            Le => "<=",
            Gt => ">",
            Ge => ">=",
            Eq => "==",
            Ne => "!=",
            And => "&&",
            Or => "||",
            Not => "!",
            Sin => "sin",
            Cos => "cos",
            Exp => "exp",
            Log => "log",
            Sqrt => "sqrt",
            ToDouble => "toDouble",
            Deriv => "deriv",
            Grad => "grad",
            Jacob => "jacob",
        }
    }

    /// Whether it is a construct of the differentiation API (`deriv`, `grad`,
    /// `jacob`), which [`crate::derivatives::expand_derivatives`] replaces by
    /// forward-mode code.
    pub fn is_derivative(self) -> bool {
        matches!(self, Prim::Deriv | Prim::Grad | Prim::Jacob)
    }

    /// Whether it is an arithmetic operation on numbers (`+ - * /`, unary `-`).
    pub fn is_arith(self) -> bool {
        matches!(
            self,
            Prim::Add | Prim::Sub | Prim::Mul | Prim::Div | Prim::Neg
        )
    }

    /// Whether it compares two numbers.
    pub fn is_comparison(self) -> bool {
        matches!(
            self,
            Prim::Lt | Prim::Le | Prim::Gt | Prim::Ge | Prim::Eq | Prim::Ne
        )
    }

    /// Whether it is a scalar function `Double => Double` (`sin`, `exp`, ...).
    pub fn is_scalar_fn(self) -> bool {
        matches!(
            self,
            Prim::Sin | Prim::Cos | Prim::Exp | Prim::Log | Prim::Sqrt
        )
    }

    /// The label of argument `i` in locations (`build.size`, `get.index`).
    pub fn arg_label(self, i: usize) -> &'static str {
        use Prim::*;
        match (self, i) {
            (Build, 0) => "size",
            (Build, _) => "generator",
            (Get, 0) => "array",
            (Get, _) => "index",
            (IFold, 0) => "step",
            (IFold, 1) => "init",
            (IFold, _) => "count",
            (Pair, 0) => "first",
            (Pair, _) => "second",
            (Deriv | Grad | Jacob, 0) => "function",
            (Deriv | Grad | Jacob, _) => "point",
            (_, 0) if self.arity() == 1 => "operand",
            (_, 0) => "left",
            _ => "right",
        }
    }
}

/// The shapes of F-smooth terms.
#[derive(Clone, Debug)]
pub enum ExprKind {
    /// A variable.
    Var(Name),
    /// A `Double` literal (`1.0`, `2.5e-3`).
    Double(f64),
    /// An `Index` (or `Card`) literal (`0`, `3`).
    Index(i64),
    /// `true` or `false`.
    Bool(bool),
    /// `fun x -> e`, optionally annotated `fun (x: T) -> e`.
    Lam(Name, Option<Type>, Expr),
    /// Application `f e`.
    App(Expr, Expr),
    /// `let x = e0 in e1`.
    Let(Name, Expr, Expr),
    /// `if c then e1 else e2`.
    If(Expr, Expr, Expr),
    /// A built-in applied to all its arguments.
    Prim(Prim, Vec<Expr>),
}

struct Node {
    kind: ExprKind,
    span: Span,
    /// Free variables, sorted and without duplicates.
    free: Box<[Name]>,
    /// The length of the longest path to a leaf (a leaf has depth 1).
    depth: u32,
}

/// An F-smooth term: immutable and cheap to clone.
#[derive(Clone)]
pub struct Expr(Arc<Node>);

impl Expr {
    /// A term of the given shape, with no source position.
    pub fn new(kind: ExprKind) -> Expr {
        Expr::spanned(kind, Span::default())
    }

    /// A term of the given shape at a source position.
    pub fn spanned(kind: ExprKind, span: Span) -> Expr {
        let free = free_of(&kind);
        let depth = 1 + kind_children(&kind)
            .iter()
            .map(|c| c.0.depth)
            .max()
            .unwrap_or(0);
        Expr(Arc::new(Node {
            kind,
            span,
            free,
            depth,
        }))
    }

    /// The same position, another shape (what rules use to keep spans).
    pub fn with_kind(&self, kind: ExprKind) -> Expr {
        Expr::spanned(kind, self.span())
    }

    /// The shape.
    pub fn kind(&self) -> &ExprKind {
        &self.0.kind
    }

    /// The source position (`Span::default()` for terms built by rewriting).
    pub fn span(&self) -> Span {
        self.0.span
    }

    /// The free variables, sorted.
    pub fn free_vars(&self) -> &[Name] {
        &self.0.free
    }

    /// Whether `x` occurs free.
    pub fn has_free(&self, x: &str) -> bool {
        self.0.free.binary_search_by(|n| n.as_ref().cmp(x)).is_ok()
    }

    /// Whether the two are the same node in memory (a fast equality test).
    pub fn ptr_eq(&self, other: &Expr) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }

    /// `x`
    pub fn var(x: impl Into<Name>) -> Expr {
        Expr::new(ExprKind::Var(x.into()))
    }
    /// A `Double` literal.
    pub fn double(v: f64) -> Expr {
        Expr::new(ExprKind::Double(v))
    }
    /// An `Index` literal.
    pub fn index(v: i64) -> Expr {
        Expr::new(ExprKind::Index(v))
    }
    /// A `Bool` literal.
    pub fn boolean(v: bool) -> Expr {
        Expr::new(ExprKind::Bool(v))
    }
    /// `fun x -> body`
    pub fn lam(x: impl Into<Name>, ty: Option<Type>, body: Expr) -> Expr {
        Expr::new(ExprKind::Lam(x.into(), ty, body))
    }
    /// `f a`
    pub fn app(f: Expr, a: Expr) -> Expr {
        Expr::new(ExprKind::App(f, a))
    }
    /// `let x = e0 in e1`
    pub fn let_(x: impl Into<Name>, e0: Expr, e1: Expr) -> Expr {
        Expr::new(ExprKind::Let(x.into(), e0, e1))
    }
    /// `if c then a else b`
    pub fn if_(c: Expr, a: Expr, b: Expr) -> Expr {
        Expr::new(ExprKind::If(c, a, b))
    }
    /// A built-in applied to its arguments.
    pub fn prim(op: Prim, args: Vec<Expr>) -> Expr {
        Expr::new(ExprKind::Prim(op, args))
    }
    /// `build n f`
    pub fn build(n: Expr, f: Expr) -> Expr {
        Expr::prim(Prim::Build, vec![n, f])
    }
    /// `a[i]`
    pub fn get(a: Expr, i: Expr) -> Expr {
        Expr::prim(Prim::Get, vec![a, i])
    }
    /// `length a`
    pub fn length(a: Expr) -> Expr {
        Expr::prim(Prim::Length, vec![a])
    }
    /// `ifold f z n`
    pub fn ifold(f: Expr, z: Expr, n: Expr) -> Expr {
        Expr::prim(Prim::IFold, vec![f, z, n])
    }
    /// `(a, b)`
    pub fn pair(a: Expr, b: Expr) -> Expr {
        Expr::prim(Prim::Pair, vec![a, b])
    }
    /// `fst p`
    pub fn fst(p: Expr) -> Expr {
        Expr::prim(Prim::Fst, vec![p])
    }
    /// `snd p`
    pub fn snd(p: Expr) -> Expr {
        Expr::prim(Prim::Snd, vec![p])
    }
    /// A binary built-in `a op b`.
    pub fn bin(op: Prim, a: Expr, b: Expr) -> Expr {
        Expr::prim(op, vec![a, b])
    }
    /// A unary built-in `op a`.
    pub fn un(op: Prim, a: Expr) -> Expr {
        Expr::prim(op, vec![a])
    }

    /// The arguments, if this is the built-in `op`.
    pub fn as_prim(&self, op: Prim) -> Option<&[Expr]> {
        match self.kind() {
            ExprKind::Prim(p, args) if *p == op => Some(args),
            _ => None,
        }
    }

    /// The name, if this is a variable.
    pub fn as_var(&self) -> Option<&Name> {
        match self.kind() {
            ExprKind::Var(x) => Some(x),
            _ => None,
        }
    }

    /// Whether this is the variable `x`.
    pub fn is_var(&self, x: &str) -> bool {
        matches!(self.kind(), ExprKind::Var(y) if y.as_ref() == x)
    }

    /// Whether this is the number zero (`0` or `0.0`).
    pub fn is_zero(&self) -> bool {
        match self.kind() {
            ExprKind::Double(v) => *v == 0.0,
            ExprKind::Index(v) => *v == 0,
            _ => false,
        }
    }

    /// Whether this is the number one (`1` or `1.0`).
    pub fn is_one(&self) -> bool {
        match self.kind() {
            ExprKind::Double(v) => *v == 1.0,
            ExprKind::Index(v) => *v == 1,
            _ => false,
        }
    }

    /// Whether this is a literal (number or boolean).
    pub fn is_literal(&self) -> bool {
        matches!(
            self.kind(),
            ExprKind::Double(_) | ExprKind::Index(_) | ExprKind::Bool(_)
        )
    }

    /// The immediate sub-terms, in evaluation order.
    pub fn children(&self) -> Vec<&Expr> {
        kind_children(self.kind())
    }

    /// How many nodes the term has.
    pub fn size(&self) -> usize {
        let mut n = 0;
        let mut stack = vec![self];
        while let Some(e) = stack.pop() {
            n += 1;
            stack.extend(e.children());
        }
        n
    }

    /// The length of the longest path from the root to a leaf (a leaf has depth 1).
    pub fn depth(&self) -> usize {
        self.0.depth as usize
    }

    /// How often `x` occurs free.
    pub fn count_free(&self, x: &str) -> usize {
        if !self.has_free(x) {
            return 0;
        }
        match self.kind() {
            ExprKind::Var(_) => 1,
            _ => self.children().iter().map(|c| c.count_free(x)).sum(),
        }
    }

    /// Equality up to the names of bound variables (α-equivalence).
    pub fn alpha_eq(&self, other: &Expr) -> bool {
        alpha(self, other, &mut Vec::new(), &mut Vec::new())
    }
}

fn kind_children(kind: &ExprKind) -> Vec<&Expr> {
    use ExprKind::*;
    match kind {
        Var(_) | Double(_) | Index(_) | Bool(_) => vec![],
        Lam(_, _, b) => vec![b],
        App(f, a) => vec![f, a],
        Let(_, e0, e1) => vec![e0, e1],
        If(c, a, b) => vec![c, a, b],
        Prim(_, args) => args.iter().collect(),
    }
}

fn merge(a: &[Name], b: &[Name]) -> Vec<Name> {
    let mut out = Vec::with_capacity(a.len() + b.len());
    let (mut i, mut j) = (0, 0);
    while i < a.len() && j < b.len() {
        match a[i].cmp(&b[j]) {
            Ordering::Less => {
                out.push(a[i].clone());
                i += 1;
            }
            Ordering::Greater => {
                out.push(b[j].clone());
                j += 1;
            }
            Ordering::Equal => {
                out.push(a[i].clone());
                i += 1;
                j += 1;
            }
        }
    }
    out.extend_from_slice(&a[i..]);
    out.extend_from_slice(&b[j..]);
    out
}

fn without(a: &[Name], x: &str) -> Vec<Name> {
    a.iter().filter(|n| n.as_ref() != x).cloned().collect()
}

fn free_of(kind: &ExprKind) -> Box<[Name]> {
    use ExprKind::*;
    let v: Vec<Name> = match kind {
        Var(x) => vec![x.clone()],
        Double(_) | Index(_) | Bool(_) => vec![],
        Lam(x, _, b) => without(b.free_vars(), x),
        App(f, a) => merge(f.free_vars(), a.free_vars()),
        Let(x, e0, e1) => merge(e0.free_vars(), &without(e1.free_vars(), x)),
        If(c, a, b) => merge(&merge(c.free_vars(), a.free_vars()), b.free_vars()),
        Prim(_, args) => args
            .iter()
            .fold(Vec::new(), |acc, e| merge(&acc, e.free_vars())),
    };
    v.into_boxed_slice()
}

fn lookup(stack: &[Name], x: &str) -> Option<usize> {
    stack.iter().rposition(|n| n.as_ref() == x)
}

fn alpha(a: &Expr, b: &Expr, la: &mut Vec<Name>, lb: &mut Vec<Name>) -> bool {
    use ExprKind::*;
    let under =
        |x: &Name, y: &Name, ea: &Expr, eb: &Expr, la: &mut Vec<Name>, lb: &mut Vec<Name>| {
            la.push(x.clone());
            lb.push(y.clone());
            let r = alpha(ea, eb, la, lb);
            la.pop();
            lb.pop();
            r
        };
    match (a.kind(), b.kind()) {
        (Var(x), Var(y)) => match (lookup(la, x), lookup(lb, y)) {
            (None, None) => x == y,
            (Some(i), Some(j)) => i == j,
            _ => false,
        },
        (Double(x), Double(y)) => x.to_bits() == y.to_bits(),
        (Index(x), Index(y)) => x == y,
        (Bool(x), Bool(y)) => x == y,
        (Lam(x, tx, bx), Lam(y, ty, by)) => tx == ty && under(x, y, bx, by, la, lb),
        (App(f, x), App(g, y)) => alpha(f, g, la, lb) && alpha(x, y, la, lb),
        (Let(x, x0, x1), Let(y, y0, y1)) => alpha(x0, y0, la, lb) && under(x, y, x1, y1, la, lb),
        (If(c, x, y), If(d, u, v)) => {
            alpha(c, d, la, lb) && alpha(x, u, la, lb) && alpha(y, v, la, lb)
        }
        (Prim(p, xs), Prim(q, ys)) => {
            p == q && xs.len() == ys.len() && xs.iter().zip(ys).all(|(x, y)| alpha(x, y, la, lb))
        }
        _ => false,
    }
}

impl PartialEq for Expr {
    /// Structural equality (names included, source positions ignored).
    fn eq(&self, other: &Expr) -> bool {
        use ExprKind::*;
        if self.ptr_eq(other) {
            return true;
        }
        if self.free_vars() != other.free_vars() {
            return false;
        }
        match (self.kind(), other.kind()) {
            (Var(x), Var(y)) => x == y,
            (Double(x), Double(y)) => x.to_bits() == y.to_bits(),
            (Index(x), Index(y)) => x == y,
            (Bool(x), Bool(y)) => x == y,
            (Lam(x, tx, bx), Lam(y, ty, by)) => x == y && tx == ty && bx == by,
            (App(f, x), App(g, y)) => f == g && x == y,
            (Let(x, x0, x1), Let(y, y0, y1)) => x == y && x0 == y0 && x1 == y1,
            (If(c, x, y), If(d, u, v)) => c == d && x == u && y == v,
            (Prim(p, xs), Prim(q, ys)) => p == q && xs == ys,
            _ => false,
        }
    }
}

impl std::fmt::Debug for Expr {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{self}")
    }
}

/// The names that are keywords or built-ins and so cannot be bound.
pub fn is_reserved(name: &str) -> bool {
    matches!(
        name,
        "fun" | "let" | "in" | "if" | "then" | "else" | "true" | "false" | "input"
    ) || Prim::from_name(name).is_some()
}

/// The language's state during a rewrite: a counter for fresh names, and the
/// types of the program's inputs (what rules that need types, such as
/// `subSelf`, give the type checker). Names are `stem` + counter (`j1`, `a2`),
/// chosen to avoid the names a caller says are taken, so output is
/// deterministic and needs no global state.
#[derive(Clone, Debug, Default)]
pub struct Env {
    next: u64,
    scope: Arc<[(Name, Type)]>,
}

impl Env {
    /// An environment for rewriting a program whose inputs have these types.
    pub fn with_scope(scope: Vec<(Name, Type)>) -> Env {
        Env {
            next: 0,
            scope: scope.into(),
        }
    }

    /// The program's inputs and their types (empty if not given).
    pub fn scope(&self) -> &[(Name, Type)] {
        &self.scope
    }

    /// A name like `base` that `taken` does not reject.
    pub fn fresh(&mut self, base: &str, taken: impl Fn(&str) -> bool) -> Name {
        let stem = base.trim_end_matches(|c: char| c.is_ascii_digit());
        let stem = if stem.is_empty() { "x" } else { stem };
        loop {
            self.next += 1;
            let name = format!("{stem}{}", self.next);
            if !taken(&name) && !is_reserved(&name) {
                return name.into();
            }
        }
    }
}

/// Capture-avoiding substitution `e[x := v]`: bound variables of `e` that
/// would capture free variables of `v` are renamed with fresh names from `env`.
pub fn subst(e: &Expr, x: &str, v: &Expr, env: &mut Env) -> Expr {
    use ExprKind::*;
    if !e.has_free(x) {
        return e.clone();
    }
    match e.kind() {
        Var(_) => v.clone(),
        Double(_) | Index(_) | Bool(_) => e.clone(),
        Lam(y, t, b) => {
            let (y, b) = under_binder(y, b, x, v, env);
            e.with_kind(Lam(y, t.clone(), b))
        }
        Let(y, e0, e1) => {
            let e0 = subst(e0, x, v, env);
            let (y, e1) = if y.as_ref() == x || !e1.has_free(x) {
                (y.clone(), e1.clone())
            } else {
                under_binder(y, e1, x, v, env)
            };
            e.with_kind(Let(y, e0, e1))
        }
        App(f, a) => e.with_kind(App(subst(f, x, v, env), subst(a, x, v, env))),
        If(c, a, b) => e.with_kind(If(
            subst(c, x, v, env),
            subst(a, x, v, env),
            subst(b, x, v, env),
        )),
        Prim(op, args) => e.with_kind(Prim(
            *op,
            args.iter().map(|a| subst(a, x, v, env)).collect(),
        )),
    }
}

/// `body[x := v]` under the binder `y` (`y ≠ x`, `x` free in `body`),
/// renaming `y` when `v` mentions it.
fn under_binder(y: &Name, body: &Expr, x: &str, v: &Expr, env: &mut Env) -> (Name, Expr) {
    if v.has_free(y) {
        let fresh = env.fresh(y, |n| v.has_free(n) || body.has_free(n) || n == x);
        let renamed = subst(body, y, &Expr::var(fresh.clone()), env);
        (fresh, subst(&renamed, x, v, env))
    } else {
        (y.clone(), subst(body, x, v, env))
    }
}

/// Renames the binder `x` of a scope `body` so that it avoids the names `taken`
/// rejects (and the free variables of `body`); returns the new name and body.
pub fn rename_away(
    x: &Name,
    body: &Expr,
    env: &mut Env,
    taken: impl Fn(&str) -> bool,
) -> (Name, Expr) {
    if !taken(x) {
        return (x.clone(), body.clone());
    }
    let fresh = env.fresh(x, |n| taken(n) || body.has_free(n));
    let body = subst(body, x, &Expr::var(fresh.clone()), env);
    (fresh, body)
}

/// Replaces every occurrence of `target` in `e` by the closed term `by`, except
/// under binders that rebind a free variable of `target` (where the occurrence
/// means something else). Returns the new term and the number of replacements.
pub fn replace(e: &Expr, target: &Expr, by: &Expr) -> (Expr, usize) {
    use ExprKind::*;
    if e == target {
        return (by.clone(), 1);
    }
    // `target` can only occur where all its free variables occur.
    if !target.free_vars().iter().all(|x| e.has_free(x)) {
        return (e.clone(), 0);
    }
    let shadows = |y: &Name| target.has_free(y);
    let mut n = 0;
    let mut go = |c: &Expr| {
        let (c, k) = replace(c, target, by);
        n += k;
        c
    };
    let kind = match e.kind() {
        Var(_) | Double(_) | Index(_) | Bool(_) => return (e.clone(), 0),
        Lam(y, t, b) => {
            if shadows(y) {
                return (e.clone(), 0);
            }
            Lam(y.clone(), t.clone(), go(b))
        }
        Let(y, e0, e1) => {
            let e0 = go(e0);
            let e1 = if shadows(y) { e1.clone() } else { go(e1) };
            Let(y.clone(), e0, e1)
        }
        App(f, a) => App(go(f), go(a)),
        If(c, a, b) => If(go(c), go(a), go(b)),
        Prim(op, args) => Prim(*op, args.iter().map(&mut go).collect()),
    };
    if n == 0 {
        (e.clone(), 0)
    } else {
        (e.with_kind(kind), n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(x: &str) -> Expr {
        Expr::var(x)
    }

    #[test]
    fn free_variables_are_sorted_and_respect_binders() {
        let e = Expr::lam(
            "x",
            None,
            Expr::bin(Prim::Add, v("x"), Expr::let_("y", v("z"), v("y"))),
        );
        let fv: Vec<&str> = e.free_vars().iter().map(|n| n.as_ref()).collect();
        assert_eq!(fv, vec!["z"]);
        assert!(e.has_free("z") && !e.has_free("x") && !e.has_free("y"));
    }

    #[test]
    fn substitution_avoids_capture() {
        // (fun j -> i + j)[i := j]  =  fun j1 -> j + j1
        let e = Expr::lam("j", None, Expr::bin(Prim::Add, v("i"), v("j")));
        let mut env = Env::default();
        let r = subst(&e, "i", &v("j"), &mut env);
        let expected = Expr::lam("j1", None, Expr::bin(Prim::Add, v("j"), v("j1")));
        assert_eq!(r, expected);
        assert!(!r.alpha_eq(&e));
    }

    #[test]
    fn alpha_equivalence_ignores_bound_names_only() {
        let a = Expr::lam("x", None, v("x"));
        let b = Expr::lam("y", None, v("y"));
        let c = Expr::lam("y", None, v("x"));
        assert!(a.alpha_eq(&b));
        assert!(!a.alpha_eq(&c));
        assert!(!v("x").alpha_eq(&v("y")));
    }

    #[test]
    fn replace_stops_at_shadowing_binders() {
        let target = Expr::bin(Prim::Lt, v("i"), v("n"));
        let e = Expr::pair(target.clone(), Expr::lam("i", None, target.clone()));
        let (r, n) = replace(&e, &target, &Expr::boolean(true));
        assert_eq!(n, 1);
        assert_eq!(
            r,
            Expr::pair(Expr::boolean(true), Expr::lam("i", None, target))
        );
    }
}
