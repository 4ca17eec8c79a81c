//! The acceptor and continuation translation (RISE & Shine §V-C, Listings 8–9).
//!
//! A low-level RISE expression `E` is translated in one of two modes:
//! * **acceptor** `A(E)(out)`: a command that writes the value of `E` to `out`;
//! * **continuation** `C(E)(k)`: a command that computes `E` and passes an
//!   expression for its value (a memory read or a view) to `k`.
//!
//! Loops come only from the lowered patterns (`mapSeq`, `mapSeqUnroll`, `mapPar`,
//! `reduceSeq`, `reduceSeqUnroll`, and the GPU maps `mapGlobal(d)`,
//! `mapWorkGroup(d)`/`mapBlock(d)`, `mapLocal(d)`/`mapThread(d)`, which become
//! `parFor` loops of a [`ParLevel`] as Listing 8's `mapWorkGroup` case shows),
//! memory only from `toMem` (with its address space), from the accumulator of a
//! sequential reduction (private) and from `iterate`'s double buffers (in the
//! address space its input is stored in when that is local or private, so that a
//! work-group's tree reduction stays in local memory; global otherwise). Anything that leaves
//! a decision open is an error naming the sub-expression and what would resolve it
//! (§V-B): a `map` or `reduce` not lowered, a `toMem` without an address space, a
//! computed array read where no memory holds it, `mapVec` of a function that is
//! not a scalar expression.
//!
//! Copies: writing a *view* (a rearrangement of existing data) to memory is
//! done element by element in sequential loops (origin `copy`), since a view has
//! no loop of its own. Array accumulators of `reduceSeq` are updated in place.

use crate::imperative::*;
use crate::query::exp_reads;
use crate::view::{PathElem, View};
use crate::walk::exp_children;
use arith::{Nat, Var};
use diagnostics::{Diagnostic, Span};
use rise::expr::Arg;
use rise::types::Name;
use rise::{AddrSpace, DataType, Expr, ExprKind, Prim, Type, TypeArg};
use std::cell::{Cell, RefCell};
use std::rc::Rc;

mod lookback;
mod loops;
mod pipeline;
mod places;
mod prims;
mod tensor;
mod vectorize;
mod warp;

use loops::{check_unrolled, is_loop_app_under_views, Steps};
use places::{acc_place, same_place, updates_in_place_safely};
use vectorize::vectorized;

/// Why a program cannot be translated: the sub-expression and the decision it lacks.
#[derive(Clone, Debug, PartialEq)]
pub struct TranslateError {
    /// Where (the source span of the sub-expression; empty for generated nodes).
    pub span: Span,
    /// What is wrong, naming the sub-expression.
    pub message: String,
    /// What would resolve it (a rule or primitive to use).
    pub help: Option<String>,
}

impl TranslateError {
    fn at(e: &Expr, message: impl Into<String>, help: Option<&str>) -> TranslateError {
        TranslateError {
            span: e.span(),
            message: format!("{}: `{}`", message.into(), excerpt(e)),
            help: help.map(str::to_string),
        }
    }

    /// The error as a diagnostic to render against the program's source.
    pub fn to_diagnostic(&self) -> Diagnostic {
        let d = Diagnostic::new(self.span, self.message.clone());
        match &self.help {
            Some(h) => d.with_note(h.clone()),
            None => d,
        }
    }
}

impl std::fmt::Display for TranslateError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)?;
        if let Some(h) = &self.help {
            write!(f, "\n  help: {h}")?;
        }
        Ok(())
    }
}

impl std::error::Error for TranslateError {}

/// The sub-expression, on one line and shortened.
fn excerpt(e: &Expr) -> String {
    let text: String = e
        .to_string()
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    if text.chars().count() > 100 {
        format!("{}...", text.chars().take(97).collect::<String>())
    } else {
        text
    }
}

type R<T> = Result<T, TranslateError>;

/// Translates a prepared, lowered definition (`rise::infer::prepare_def`, then
/// rewritten) to an imperative program writing its result to `output`.
/// `scheme` is the definition's type scheme: its implicit `nat` binders are the
/// program's sizes.
pub fn translate(name: &str, body: &Expr, scheme: &Type) -> R<Program> {
    let sizes = size_params(scheme, body)?;
    let tr = Translator::default();
    let mut env = Env::default();
    let mut inputs = Vec::new();
    let mut e = body;
    while let ExprKind::Lambda(x, _, b) = e.kind() {
        let Some(Type::Fun(a, _)) = e.ty() else {
            return Err(TranslateError::at(e, "untyped parameter", None));
        };
        let Some(dt) = a.as_data() else {
            return Err(TranslateError::at(
                e,
                "a function-typed parameter cannot be passed to compiled code",
                None,
            ));
        };
        let ident = Ident {
            name: tr.unique(&c_name(x)),
            ty: dt.clone(),
        };
        env = env.bind(
            x,
            Value::Data(Exp::new(ExpKind::Var(ident.clone()), dt.clone())),
        );
        inputs.push(ident);
        e = b;
    }
    // A body that is a function without parameters (eta-reduced, as BENF leaves
    // `fun xs => map f xs`) is applied to fresh inputs.
    let mut e = e.clone();
    while let Some(Type::Fun(a, b)) = e.ty().cloned() {
        let Some(dt) = a.as_data() else {
            return Err(TranslateError::at(
                &e,
                "a function-typed parameter cannot be passed to compiled code",
                None,
            ));
        };
        let name: Name = tr.fresh("%in").into();
        let ident = Ident {
            name: tr.unique(&format!("x{}", inputs.len())),
            ty: dt.clone(),
        };
        env = env.bind(
            &name,
            Value::Data(Exp::new(ExpKind::Var(ident.clone()), dt.clone())),
        );
        inputs.push(ident);
        let var = Expr::typed(ExprKind::Var(name), (*a).clone(), e.span());
        e = Expr::typed(ExprKind::App(e.clone(), var), (*b).clone(), e.span());
    }
    let e = &e;
    let out_ty = data_type(e)?;
    let output = Ident {
        name: tr.unique("output"),
        ty: out_ty.clone(),
    };
    let out = Acc::new(AccKind::Var(output.clone()), out_ty);
    let comm = tr.tr(e, &env, Out::Acc(&out))?;
    let mut program = Program {
        name: c_name(name),
        sizes,
        output,
        inputs,
        body: comm,
        constraints: Vec::new(),
    };
    program.constraints = view_constraints(&program, e)?;
    Ok(program)
}

/// The requirements of the program's views ([`crate::constraints::of_views`]) in terms of
/// its sizes, simplified; an error where one fails whatever the sizes (`split 3` of 2
/// elements inside an `iterate` step).
fn view_constraints(program: &Program, e: &Expr) -> R<Vec<rise::constraints::SizeConstraint>> {
    let mut kept = Vec::new();
    for c in crate::constraints::of_views(program) {
        if c.decide() == Some(false) {
            return Err(TranslateError::at(
                e,
                format!("a view of this definition can never be computed: {c} is false"),
                Some("a `split`, `asVector`, `slide`, `take` or `drop` does not fit the size of its array"),
            ));
        }
        if c.free_vars().iter().all(|v| program.sizes.contains(v)) {
            kept.push(c);
        }
    }
    Ok(rise::constraints::simplify_all(kept))
}

/// The implicit `nat` binders of the scheme.
fn size_params(scheme: &Type, body: &Expr) -> R<Vec<Var>> {
    let mut sizes = Vec::new();
    let mut t = scheme;
    while let Type::DepFun {
        binder,
        implicit,
        body: inner,
    } = t
    {
        if !implicit || binder.kind != rise::Kind::Nat {
            return Err(TranslateError::at(
                body,
                format!(
                    "the parameter `{}: {}` of the definition cannot be compiled",
                    binder.name, binder.kind
                ),
                Some(
                    "compiled definitions take implicit sizes `{n: nat}` and data parameters only",
                ),
            ));
        }
        sizes.push(Var::new(&*binder.name));
        t = inner;
    }
    Ok(sizes)
}

/// A C-safe name from a RISE name.
fn c_name(name: &str) -> String {
    let mut s: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
    if s.is_empty() || s.starts_with(|c: char| c.is_ascii_digit()) {
        s.insert(0, 'v');
    }
    s
}

/// The value a RISE variable stands for during translation.
#[derive(Clone)]
enum Value {
    /// Data: an expression to read.
    Data(Exp),
    /// A function: its RISE term and the environment it was defined in.
    Fun(Expr, Env),
    /// The parameter of a view function whose acceptor is being computed
    /// ([`Translator::acceptor_of_param`]): records the acceptor that reaches it.
    Hole(Rc<RefCell<Option<Acc>>>),
}

/// A persistent environment from RISE variables to values.
#[derive(Clone, Default)]
struct Env(Option<Rc<(Name, Value, Env)>>);

impl Env {
    fn bind(&self, x: &Name, v: Value) -> Env {
        Env(Some(Rc::new((x.clone(), v, self.clone()))))
    }

    fn lookup(&self, x: &Name) -> Option<&Value> {
        let mut cur = self;
        while let Some(node) = &cur.0 {
            if &node.0 == x {
                return Some(&node.1);
            }
            cur = &node.2;
        }
        None
    }
}

/// A continuation: what to do with the expression for a value.
type K<'a> = &'a dyn Fn(Exp) -> R<Comm>;

/// The mode of translation.
#[derive(Clone, Copy)]
enum Out<'a> {
    /// Write the value here.
    Acc(&'a Acc),
    /// Pass the value's expression on.
    Con(K<'a>),
}

#[derive(Default)]
struct Translator {
    next: Cell<u32>,
    used: RefCell<std::collections::HashSet<String>>,
    /// The address space of each memory `toMem` allocated (by identifier name).
    spaces: RefCell<std::collections::HashMap<String, AddrSpace>>,
}

impl Translator {
    /// A fresh name `base<N>`.
    fn fresh(&self, base: &str) -> String {
        loop {
            let n = self.next.get();
            self.next.set(n + 1);
            let name = format!("{base}{n}");
            if self.used.borrow_mut().insert(name.clone()) {
                return name;
            }
        }
    }

    /// `base` itself if unused, else a fresh variant.
    fn unique(&self, base: &str) -> String {
        if self.used.borrow_mut().insert(base.to_string()) {
            base.to_string()
        } else {
            self.fresh(&format!("{base}_"))
        }
    }

    /// A fresh loop variable ranging over `0 <= i < n`.
    fn loop_var(&self, n: &Nat) -> Var {
        Var::with_range(self.fresh("i"), Nat::cst(0), n.clone())
    }

    fn tr(&self, e: &Expr, env: &Env, out: Out) -> R<Comm> {
        let (head, args) = e.spine();
        match head.kind() {
            ExprKind::Var(x) => match env.lookup(x) {
                Some(Value::Data(d)) if args.is_empty() => self.give(d.clone(), out),
                Some(Value::Fun(f, fenv)) => {
                    let (f, fenv) = (f.clone(), fenv.clone());
                    self.values(&value_args(&args), env, &|vals| {
                        self.call(&f, &fenv, vals, out)
                    })
                }
                Some(Value::Hole(slot)) if args.is_empty() => match out {
                    Out::Acc(a) if slot.borrow().is_none() => {
                        *slot.borrow_mut() = Some(a.clone());
                        Ok(Comm::Skip)
                    }
                    _ => Err(TranslateError::at(e, "no acceptor for this view", None)),
                },
                Some(Value::Data(_) | Value::Hole(_)) => {
                    Err(TranslateError::at(e, "data applied as a function", None))
                }
                None => Err(TranslateError::at(
                    e,
                    format!("unbound variable `{x}`"),
                    None,
                )),
            },
            ExprKind::Lambda(..) if !args.is_empty() => {
                let head = head.clone();
                self.values(&value_args(&args), env, &|vals| {
                    self.call(&head, env, vals, out)
                })
            }
            ExprKind::Lit(rise::Literal::Nat(n)) if args.is_empty() => {
                self.give(Exp::new(ExpKind::Nat(n.clone()), data_type(e)?), out)
            }
            ExprKind::Lit(l) if args.is_empty() => {
                self.give(Exp::new(ExpKind::Lit(l.clone()), data_type(e)?), out)
            }
            ExprKind::Prim(p) => self.prim(*p, e, &args, env, out),
            ExprKind::Foreign(f) if value_args(&args).len() == f.params.len() => {
                let f = f.clone();
                let ty = data_type(e)?;
                self.data(&value_args(&args), env, out, &|xs| {
                    Ok(Exp::new(ExpKind::Foreign(f.clone(), xs.to_vec()), ty.clone()))
                })
            }
            ExprKind::Foreign(f) => Err(TranslateError::at(
                e,
                format!(
                    "the foreign function `{}` is applied to {} of its {} arguments where data is expected",
                    f.name,
                    value_args(&args).len(),
                    f.params.len()
                ),
                None,
            )),
            ExprKind::Annot(inner, _) if args.is_empty() => self.tr(inner, env, out),
            ExprKind::Lambda(..) => Err(TranslateError::at(
                e,
                "a function where data is expected",
                None,
            )),
            _ => Err(TranslateError::at(
                e,
                "this construct cannot be compiled",
                None,
            )),
        }
    }

    /// Hands a value's expression to the output: the continuation, or an
    /// assignment to the acceptor.
    fn give(&self, x: Exp, out: Out) -> R<Comm> {
        match out {
            Out::Con(k) => k(x),
            Out::Acc(a) => Ok(self.assign(a, &x)),
        }
    }

    /// `out := x`, expanded into loops and component assignments for arrays and pairs.
    fn assign(&self, out: &Acc, x: &Exp) -> Comm {
        match &out.ty {
            DataType::Array(n, elem) => {
                let i = self.loop_var(n);
                let iv = Nat::var(&i);
                let body = self.assign(
                    &Acc::new(AccKind::Idx(out.clone(), iv.clone()), (**elem).clone()),
                    &Exp::new(ExpKind::Idx(x.clone(), iv), (**elem).clone()),
                );
                Comm::For {
                    var: i,
                    count: n.clone(),
                    kind: LoopKind::Seq,
                    origin: "copy",
                    body: Box::new(body),
                }
            }
            DataType::Pair(s, t) => Comm::Seq(vec![
                self.assign(
                    &Acc::new(AccKind::Pair1(out.clone()), (**s).clone()),
                    &Exp::new(ExpKind::Fst(x.clone()), (**s).clone()),
                ),
                self.assign(
                    &Acc::new(AccKind::Pair2(out.clone()), (**t).clone()),
                    &Exp::new(ExpKind::Snd(x.clone()), (**t).clone()),
                ),
            ]),
            _ => Comm::Assign(out.clone(), x.clone()),
        }
    }

    /// Evaluates arguments to values (data through the continuation
    /// translation, functions as closures), then runs `then`.
    fn values(&self, args: &[Expr], env: &Env, then: &dyn Fn(Vec<Value>) -> R<Comm>) -> R<Comm> {
        self.values_from(args, env, Vec::new(), then)
    }

    fn values_from(
        &self,
        args: &[Expr],
        env: &Env,
        done: Vec<Value>,
        then: &dyn Fn(Vec<Value>) -> R<Comm>,
    ) -> R<Comm> {
        let Some((first, rest)) = args.split_first() else {
            return then(done);
        };
        if matches!(first.ty(), Some(t) if t.as_data().is_none()) {
            let mut done = done;
            done.push(Value::Fun(first.clone(), env.clone()));
            return self.values_from(rest, env, done, then);
        }
        self.tr(
            first,
            env,
            Out::Con(&|x| {
                let mut done = done.clone();
                done.push(Value::Data(x));
                self.values_from(rest, env, done, then)
            }),
        )
    }

    /// Applies the function `f` (defined in `fenv`) to values.
    fn call(&self, f: &Expr, fenv: &Env, vals: Vec<Value>, out: Out) -> R<Comm> {
        if vals.is_empty() {
            return self.tr(f, fenv, out);
        }
        match f.kind() {
            ExprKind::Lambda(x, _, body) => {
                let env = fenv.bind(x, vals[0].clone());
                self.call(body, &env, vals[1..].to_vec(), out)
            }
            ExprKind::Var(x) => match fenv.lookup(x) {
                Some(Value::Fun(g, genv)) => self.call(&g.clone(), &genv.clone(), vals, out),
                _ => Err(TranslateError::at(f, "not a function", None)),
            },
            _ => {
                // A partial application such as `add` or `mapSeq g`: name the
                // values and apply the term to the names.
                let mut env = fenv.clone();
                let mut app = f.clone();
                for v in vals {
                    let Some(Type::Fun(a, b)) = app.ty() else {
                        return Err(TranslateError::at(f, "too many arguments", None));
                    };
                    let (a, b) = ((**a).clone(), (**b).clone());
                    let name: Name = self.fresh("%arg").into();
                    env = env.bind(&name, v);
                    let var = Expr::typed(ExprKind::Var(name), a, f.span());
                    app = Expr::typed(ExprKind::App(app, var), b, f.span());
                }
                self.tr(&app, &env, out)
            }
        }
    }

    /// For a view function `f` and an acceptor `out` for `f x`: the acceptor for
    /// `x` (`join` gives `splitAcc`), if the view can be written through.
    fn acceptor_of_param(&self, f: &Expr, env: &Env, out: &Acc) -> Option<Acc> {
        let slot = Rc::new(RefCell::new(None));
        let comm = self
            .call(f, env, vec![Value::Hole(slot.clone())], Out::Acc(out))
            .ok()?;
        let acc = slot.borrow_mut().take();
        matches!(comm, Comm::Skip).then_some(acc).flatten()
    }

    /// The expression of a function applied to data, which must be pure (no
    /// command): the bodies of views (`generate`, view `map`s) and `mapVec`.
    fn pure(&self, f: &Expr, env: &Env, vals: Vec<Value>, what: &str) -> R<Exp> {
        let slot = RefCell::new(None);
        let comm = self.call(
            f,
            env,
            vals,
            Out::Con(&|x| {
                *slot.borrow_mut() = Some(x);
                Ok(Comm::Skip)
            }),
        )?;
        match (comm, slot.into_inner()) {
            (Comm::Skip, Some(x)) => Ok(x),
            _ => Err(TranslateError::at(
                f,
                format!("{what} must be an expression without loops or memory"),
                Some("store the array it computes (storeInMemory / toMem with mapSeq or mapPar), or fuse its reader into it (mapFusion, fuseReduceMap)"),
            )),
        }
    }

    /// The address space of the memory `x` reads, when it reads exactly one memory
    /// that `toMem` allocated (through views).
    fn space_of(&self, x: &Exp) -> Option<AddrSpace> {
        let mut names = Vec::new();
        exp_reads(x, &mut names);
        let spaces = self.spaces.borrow();
        let mut found = names.iter().map(|n| spaces.get(n).cloned());
        let first = found.next()??;
        found.all(|s| s.as_ref() == Some(&first)).then_some(first)
    }

    /// Applies a function of a `nat` (`fun (l: nat) => ...`) to `l`, then to values.
    fn call_at_nat(&self, f: &Expr, fenv: &Env, l: &Nat, vals: Vec<Value>, out: Out) -> R<Comm> {
        match f.kind() {
            ExprKind::DepLambda(b, body) if b.kind == rise::Kind::Nat => {
                let name = b.name.clone();
                let body = rise::expr::map_types(body, &|x: &str, kind: rise::Kind| {
                    (x == &*name && kind == rise::Kind::Nat).then(|| TypeArg::Nat(l.clone()))
                });
                self.call(&body, fenv, vals, out)
            }
            ExprKind::Var(x) => match fenv.lookup(x) {
                Some(Value::Fun(g, genv)) => self.call_at_nat(&g.clone(), &genv.clone(), l, vals, out),
                _ => Err(TranslateError::at(f, "not a function of a `nat`", None)),
            },
            _ => Err(TranslateError::at(
                f,
                "the function given to `iterate` cannot be compiled: write it as `fun (l: nat) => fun xs => ...`",
                None,
            )),
        }
    }

    /// `makeArray n x0 ... x(n-1)`: element `i` is `x_i`, chosen by comparing
    /// the index with each position (constant once the index is known).
    fn literal_array(&self, e: &Expr, vals: &[Expr], env: &Env, out: Out) -> R<Comm> {
        let ty = data_type(e)?;
        let (n, elem) = array_dt(&ty, e)?;
        if n.as_cst() != Some(vals.len() as i64) {
            return Err(TranslateError::at(
                e,
                "makeArray with a wrong number of elements",
                None,
            ));
        }
        self.data(vals, env, out, &|xs| {
            let i = self.loop_var(&n);
            let index = Exp::new(ExpKind::Nat(Nat::var(&i)), DataType::NatType);
            let mut body = xs[xs.len() - 1].clone();
            for (k, x) in xs.iter().enumerate().rev().skip(1) {
                let at = Exp::new(ExpKind::Nat(Nat::cst(k as i64)), DataType::NatType);
                let cond = Exp::new(
                    ExpKind::Binary(BinOp::Eq, index.clone(), at),
                    DataType::Scalar(rise::ScalarType::Bool),
                );
                body = Exp::new(ExpKind::Select(cond, x.clone(), body), elem.clone());
            }
            Ok(Exp::new(ExpKind::Generate(i, body), ty.clone()))
        })
    }

    /// Evaluates data arguments through the continuation translation, builds an
    /// expression from them and hands it to the output.
    fn data(
        &self,
        args: &[Expr],
        env: &Env,
        out: Out,
        build: &dyn Fn(&[Exp]) -> R<Exp>,
    ) -> R<Comm> {
        self.values(args, env, &|vals| {
            let xs: Vec<Exp> = vals
                .into_iter()
                .filter_map(|v| match v {
                    Value::Data(x) => Some(x),
                    Value::Fun(..) | Value::Hole(_) => None,
                })
                .collect();
            self.give(build(&xs)?, out)
        })
    }
}

/// The data type of a typed node.
fn data_type(e: &Expr) -> R<DataType> {
    match e.ty() {
        Some(Type::Data(d)) => Ok(d.clone()),
        Some(_) => Err(TranslateError::at(
            e,
            "a function where data is expected",
            None,
        )),
        None => Err(TranslateError::at(
            e,
            "untyped expression (internal error)",
            None,
        )),
    }
}

/// Length and element type of an array-typed node.
fn array_of(e: &Expr) -> R<(Nat, DataType)> {
    array_dt(&data_type(e)?, e)
}

fn array_dt(t: &DataType, e: &Expr) -> R<(Nat, DataType)> {
    match t {
        DataType::Array(n, elem) => Ok((n.clone(), (**elem).clone())),
        _ => Err(TranslateError::at(
            e,
            format!("expected an array, found `{t}`"),
            None,
        )),
    }
}

/// The value arguments of a spine.
fn value_args(args: &[Arg]) -> Vec<Expr> {
    args.iter()
        .filter_map(|a| match a {
            Arg::Value(v) => Some((*v).clone()),
            Arg::Type(_) => None,
        })
        .collect()
}

/// The explicit `nat` arguments of a spine (`split 32`, `slide 3 1`).
fn nat_args(args: &[Arg]) -> Vec<Nat> {
    args.iter()
        .filter_map(|a| match a {
            Arg::Type(TypeArg::Nat(n)) => Some(n.clone()),
            _ => None,
        })
        .collect()
}

fn v_name(args: &[Arg]) -> String {
    args.iter()
        .find_map(|a| match a {
            Arg::Type(TypeArg::AddrSpace(AddrSpace::Var(v))) => {
                Some(format!(" (`{v}` is a variable)"))
            }
            _ => None,
        })
        .unwrap_or_default()
}
