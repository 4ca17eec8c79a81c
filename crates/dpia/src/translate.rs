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
use crate::view::{PathElem, View};
use crate::walk::exp_children;
use arith::{Nat, Var};
use diagnostics::{Diagnostic, Span};
use rise::expr::Arg;
use rise::types::Name;
use rise::{AddrSpace, DataType, Expr, ExprKind, Prim, Type, TypeArg};
use std::cell::{Cell, RefCell};
use std::rc::Rc;

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

    fn prim(&self, p: Prim, e: &Expr, args: &[Arg], env: &Env, out: Out) -> R<Comm> {
        use Prim::*;
        let nats = nat_args(args);
        let vals = value_args(args);
        let arity = p.value_arity();
        if p == MakeArray && vals.len() > 1 {
            return self.literal_array(e, &vals, env, out);
        }
        if vals.len() < arity {
            return Err(TranslateError::at(
                e,
                format!("`{}` is not applied to all its arguments", p.name()),
                None,
            ));
        }
        if vals.len() > arity {
            return Err(TranslateError::at(
                e,
                format!(
                    "`{}` returns a function here; this cannot be compiled",
                    p.name()
                ),
                None,
            ));
        }
        let ty = data_type(e)?;
        let view = |kind: ExpKind| Exp::new(kind, ty.clone());
        match p {
            // ---- scalar operations --------------------------------------------
            Id => self.tr(&vals[0], env, out),
            Neg | Not => self.data(&vals, env, out, &|xs| {
                let op = if p == Neg { UnOp::Neg } else { UnOp::Not };
                Ok(view(ExpKind::Unary(op, xs[0].clone())))
            }),
            Add | Sub | Mul | Div | Mod | Gt | Lt | Equal => self.data(&vals, env, out, &|xs| {
                let op = match p {
                    Add => BinOp::Add,
                    Sub => BinOp::Sub,
                    Mul => BinOp::Mul,
                    Div => BinOp::Div,
                    Mod => BinOp::Mod,
                    Gt => BinOp::Gt,
                    Lt => BinOp::Lt,
                    _ => BinOp::Eq,
                };
                Ok(view(ExpKind::Binary(op, xs[0].clone(), xs[1].clone())))
            }),
            Select => self.data(&vals, env, out, &|xs| {
                Ok(view(ExpKind::Select(
                    xs[0].clone(),
                    xs[1].clone(),
                    xs[2].clone(),
                )))
            }),
            Cast => self.data(&vals, env, out, &|xs| {
                Ok(view(ExpKind::Cast(xs[0].clone())))
            }),
            IndexAsNat | NatAsIndex => self.data(&vals, env, out, &|xs| {
                Ok(Exp::new((*xs[0].kind).clone(), ty.clone()))
            }),
            VectorFromScalar => self.data(&vals, env, out, &|xs| {
                Ok(view(ExpKind::VectorFromScalar(xs[0].clone())))
            }),
            // ---- binding and memory ---------------------------------------------
            Let => self.tr(
                &vals[0],
                env,
                Out::Con(&|x| self.call(&vals[1], env, vec![Value::Data(x)], out)),
            ),
            ToMem => {
                let addr = match args.iter().find_map(|a| match a {
                    Arg::Type(TypeArg::AddrSpace(a)) => Some(a.clone()),
                    _ => None,
                }) {
                    Some(AddrSpace::Var(_)) | None => {
                        let v = v_name(args);
                        return Err(TranslateError::at(
                            e,
                            format!("`toMem` without an address space{v}"),
                            Some("give the address space: `toMem global`, `toMem private`, ... (storeInMemory inserts `toMem global`)"),
                        ));
                    }
                    Some(a) => a,
                };
                let t = data_type(&vals[0])?;
                let ident = Ident {
                    name: self.fresh("mem"),
                    ty: t.clone(),
                };
                self.spaces
                    .borrow_mut()
                    .insert(ident.name.clone(), addr.clone());
                let acc = Acc::new(AccKind::Var(ident.clone()), t.clone());
                let read = Exp::new(ExpKind::Var(ident.clone()), t);
                let fill = self.tr(&vals[0], env, Out::Acc(&acc))?;
                let rest = self.call(&vals[1], env, vec![Value::Data(read)], out)?;
                Ok(Comm::New {
                    ident,
                    addr,
                    body: Box::new(Comm::Seq(vec![fill, rest])),
                })
            }
            // ---- lowered patterns: loops -----------------------------------------
            MapSeq | MapSeqUnroll | MapPar | MapGlobal0 | MapGlobal1 | MapGlobal2
            | MapWorkGroup0 | MapWorkGroup1 | MapWorkGroup2 | MapLocal0 | MapLocal1 | MapLocal2
            | MapBlock0 | MapBlock1 | MapBlock2 | MapThread0 | MapThread1 | MapThread2 => {
                let Out::Acc(acc) = out else {
                    return Err(TranslateError::at(
                        e,
                        format!("the result of `{}` is read but not stored anywhere", p.name()),
                        Some("write it to memory first: `toMem global (...)`, e.g. with storeInMemory, or fuse it into its consumer (mapFusion, fuseReduceMap)"),
                    ));
                };
                let kind = match p {
                    MapSeq => LoopKind::Seq,
                    MapSeqUnroll => LoopKind::Unroll,
                    MapPar => LoopKind::Par,
                    MapGlobal0 => LoopKind::Gpu(ParLevel::Global(0)),
                    MapGlobal1 => LoopKind::Gpu(ParLevel::Global(1)),
                    MapGlobal2 => LoopKind::Gpu(ParLevel::Global(2)),
                    MapWorkGroup0 | MapBlock0 => LoopKind::Gpu(ParLevel::WorkGroup(0)),
                    MapWorkGroup1 | MapBlock1 => LoopKind::Gpu(ParLevel::WorkGroup(1)),
                    MapWorkGroup2 | MapBlock2 => LoopKind::Gpu(ParLevel::WorkGroup(2)),
                    MapLocal0 | MapThread0 => LoopKind::Gpu(ParLevel::Local(0)),
                    MapLocal1 | MapThread1 => LoopKind::Gpu(ParLevel::Local(1)),
                    _ => LoopKind::Gpu(ParLevel::Local(2)),
                };
                let (n, elem) = array_of(&vals[1])?;
                let f = &vals[0];
                self.tr(
                    &vals[1],
                    env,
                    Out::Con(&|xs| {
                        let i = self.loop_var(&n);
                        let iv = Nat::var(&i);
                        let x = Exp::new(ExpKind::Idx(xs, iv.clone()), elem.clone());
                        let (_, out_elem) = array_dt(&acc.ty, e)?;
                        let o = Acc::new(AccKind::Idx(acc.clone(), iv), out_elem);
                        let body = self.call(f, env, vec![Value::Data(x)], Out::Acc(&o))?;
                        Ok(Comm::For {
                            var: i,
                            count: n.clone(),
                            kind,
                            origin: p.name(),
                            body: Box::new(body),
                        })
                    }),
                )
            }
            ReduceSeq | ReduceSeqUnroll => {
                let kind = if p == ReduceSeq {
                    LoopKind::Seq
                } else {
                    LoopKind::Unroll
                };
                let (n, elem) = array_of(&vals[2])?;
                let f = &vals[0];
                if is_loop_app(&vals[1]) {
                    return self.reduce_computed_init(p, kind, &vals, env, out, (&ty, &n, &elem));
                }
                // An array reduced in place: the initial value is read where the
                // result is written (`acc[i] = reduceSeq f acc[i] xs`), so that
                // memory is the accumulator and nothing is copied in or out.
                let in_place = match out {
                    Out::Acc(a) if matches!(ty, DataType::Array(..)) => Some(a),
                    _ => None,
                };
                let reduce = |k: K| {
                    self.tr(
                        &vals[2],
                        env,
                        Out::Con(&|xs| {
                            self.tr(
                                &vals[1],
                                env,
                                Out::Con(&|init| {
                                    let reduce_loop = |read: Exp, acc: &Acc| {
                                        self.reduce_loop(
                                            p,
                                            kind,
                                            f,
                                            env,
                                            &xs,
                                            (&n, &elem),
                                            read,
                                            acc,
                                        )
                                    };
                                    if let Some(a) = in_place.filter(|a| same_place(&init, a)) {
                                        return reduce_loop(init.clone(), a);
                                    }
                                    let ident = Ident {
                                        name: self.fresh("acc"),
                                        ty: ty.clone(),
                                    };
                                    let acc = Acc::new(AccKind::Var(ident.clone()), ty.clone());
                                    let read = Exp::new(ExpKind::Var(ident.clone()), ty.clone());
                                    let lp = reduce_loop(read.clone(), &acc)?;
                                    Ok(Comm::New {
                                        ident,
                                        addr: AddrSpace::Private,
                                        body: Box::new(Comm::Seq(vec![
                                            self.assign(&acc, &init),
                                            lp,
                                            k(read)?,
                                        ])),
                                    })
                                }),
                            )
                        }),
                    )
                };
                match out {
                    Out::Con(k) => reduce(k),
                    Out::Acc(a) => reduce(&|r| Ok(self.assign(a, &r))),
                }
            }
            MapVec => {
                let Some(DataType::Vector(n, _)) = Some(&ty) else {
                    return Err(TranslateError::at(e, "mapVec of a non-vector", None));
                };
                let n = n.clone();
                let f = &vals[0];
                self.data(&vals[1..], env, out, &|xs| {
                    let body = self.pure(
                        f,
                        env,
                        vec![Value::Data(xs[0].clone())],
                        "the function of mapVec",
                    )?;
                    vectorized(&body, &n).ok_or_else(|| {
                        TranslateError::at(
                            e,
                            "the function of mapVec is not a scalar function",
                            Some("vectorize only functions on scalars"),
                        )
                    })
                })
            }
            // ---- views --------------------------------------------------------------
            Map => {
                let (n, elem) = array_of(&vals[1])?;
                if let Out::Acc(a) = out {
                    // Written to memory: through the view's acceptor, element by element.
                    let i = self.loop_var(&n);
                    let (_, out_elem) = array_dt(&a.ty, e)?;
                    let o = Acc::new(AccKind::Idx(a.clone(), Nat::var(&i)), out_elem);
                    if !vals[0].is_view_function() {
                        return Err(TranslateError::at(
                            e,
                            "this `map` computes a result that is written to memory, but it is not lowered: code generation does not choose how to run it",
                            Some("lower it: mapSeq, mapPar or mapSeqUnroll (e.g. with lowerToC, parallel, unroll)"),
                        ));
                    }
                    if let Some(x_acc) = self.acceptor_of_param(&vals[0], env, &o) {
                        let acc = Acc::new(AccKind::Map(i, x_acc), data_type(&vals[1])?);
                        return self.tr(&vals[1], env, Out::Acc(&acc));
                    }
                }
                // Read: each element is computed where it is read (fused into the reader).
                let f = &vals[0];
                self.data(&vals[1..], env, out, &|xs| {
                    let i = self.loop_var(&n);
                    let x = Exp::new(ExpKind::Idx(xs[0].clone(), Nat::var(&i)), elem.clone());
                    let body = self.pure(
                        f,
                        env,
                        vec![Value::Data(x)],
                        "the function of a map that is read (computed where it is read, fused into its reader)",
                    )?;
                    Ok(view(ExpKind::Generate(i, body)))
                })
            }
            Generate => {
                let (n, _) = array_dt(&ty, e)?;
                let i = self.loop_var(&n);
                let index = Exp::new(ExpKind::Nat(Nat::var(&i)), DataType::Index(n.clone()));
                let body = self.pure(
                    &vals[0],
                    env,
                    vec![Value::Data(index)],
                    "the function of generate",
                )?;
                self.give(view(ExpKind::Generate(i, body)), out)
            }
            MakeArray => {
                let (n, _) = array_dt(&ty, e)?;
                self.data(&vals, env, out, &|xs| {
                    Ok(view(ExpKind::Generate(self.loop_var(&n), xs[0].clone())))
                })
            }
            Idx => self.data(&vals, env, out, &|xs| match &*xs[0].kind {
                ExpKind::Nat(i) => Ok(view(ExpKind::Idx(xs[1].clone(), i.clone()))),
                _ => Err(TranslateError::at(
                    e,
                    "`idx` with an index computed at run time is not supported yet",
                    None,
                )),
            }),
            Split => match out {
                Out::Acc(a) => self.tr(&vals[0], env, Out::Acc(&join_acc(a, &vals[0])?)),
                Out::Con(_) => self.data(&vals, env, out, &|xs| {
                    Ok(view(ExpKind::View(
                        View::Split(nats[0].clone()),
                        xs[0].clone(),
                    )))
                }),
            },
            Join => match out {
                Out::Acc(a) => {
                    let (_, inner) = array_of(&vals[0])?;
                    let (m, _) = array_dt(&inner, e)?;
                    let acc = Acc::new(
                        AccKind::View(View::Split(m), a.clone()),
                        data_type(&vals[0])?,
                    );
                    self.tr(&vals[0], env, Out::Acc(&acc))
                }
                Out::Con(_) => self.data(&vals, env, out, &|xs| {
                    let (_, inner) = array_dt(&xs[0].ty, e)?;
                    let (m, _) = array_dt(&inner, e)?;
                    Ok(view(ExpKind::View(View::Join(m), xs[0].clone())))
                }),
            },
            Transpose => match out {
                Out::Acc(a) => {
                    let acc = Acc::new(
                        AccKind::View(View::Transpose, a.clone()),
                        data_type(&vals[0])?,
                    );
                    self.tr(&vals[0], env, Out::Acc(&acc))
                }
                Out::Con(_) => self.data(&vals, env, out, &|xs| {
                    Ok(view(ExpKind::View(View::Transpose, xs[0].clone())))
                }),
            },
            AsScalar => match out {
                Out::Acc(a) => {
                    let (_, v) = array_of(&vals[0])?;
                    let DataType::Vector(n, _) = v else {
                        return Err(TranslateError::at(
                            e,
                            "asScalar of a non-vector array",
                            None,
                        ));
                    };
                    let acc = Acc::new(AccKind::AsVector(n, a.clone()), data_type(&vals[0])?);
                    self.tr(&vals[0], env, Out::Acc(&acc))
                }
                Out::Con(_) => self.data(&vals, env, out, &|xs| {
                    let (_, v) = array_dt(&xs[0].ty, e)?;
                    let DataType::Vector(n, _) = v else {
                        return Err(TranslateError::at(
                            e,
                            "asScalar of a non-vector array",
                            None,
                        ));
                    };
                    Ok(view(ExpKind::View(View::AsScalar(n), xs[0].clone())))
                }),
            },
            AsVector => match out {
                Out::Acc(a) => {
                    let acc = Acc::new(
                        AccKind::View(View::AsScalar(nats[0].clone()), a.clone()),
                        data_type(&vals[0])?,
                    );
                    self.tr(&vals[0], env, Out::Acc(&acc))
                }
                Out::Con(_) => self.data(&vals, env, out, &|xs| {
                    Ok(view(ExpKind::AsVector(nats[0].clone(), xs[0].clone())))
                }),
            },
            Zip | MakePair => match out {
                Out::Acc(a) => {
                    let (first, second) = if p == Zip {
                        (AccKind::Zip1(a.clone()), AccKind::Zip2(a.clone()))
                    } else {
                        (AccKind::Pair1(a.clone()), AccKind::Pair2(a.clone()))
                    };
                    let c1 = self.tr(
                        &vals[0],
                        env,
                        Out::Acc(&Acc::new(first, data_type(&vals[0])?)),
                    )?;
                    let c2 = self.tr(
                        &vals[1],
                        env,
                        Out::Acc(&Acc::new(second, data_type(&vals[1])?)),
                    )?;
                    Ok(Comm::Seq(vec![c1, c2]))
                }
                Out::Con(_) => self.data(&vals, env, out, &|xs| {
                    let kind = if p == Zip {
                        ExpKind::Zip(xs[0].clone(), xs[1].clone())
                    } else {
                        ExpKind::Pair(xs[0].clone(), xs[1].clone())
                    };
                    Ok(view(kind))
                }),
            },
            Unzip => match out {
                Out::Acc(a) => {
                    let acc = Acc::new(AccKind::Unzip(a.clone()), data_type(&vals[0])?);
                    self.tr(&vals[0], env, Out::Acc(&acc))
                }
                Out::Con(_) => {
                    let (n, elem) = array_of(&vals[0])?;
                    let DataType::Pair(s, t) = elem.clone() else {
                        return Err(TranslateError::at(
                            e,
                            "unzip of an array of non-pairs",
                            None,
                        ));
                    };
                    self.data(&vals, env, out, &|xs| {
                        let side = |second: bool, c: &DataType| {
                            let i = self.loop_var(&n);
                            let x =
                                Exp::new(ExpKind::Idx(xs[0].clone(), Nat::var(&i)), elem.clone());
                            let part = if second {
                                ExpKind::Snd(x)
                            } else {
                                ExpKind::Fst(x)
                            };
                            Exp::new(
                                ExpKind::Generate(i, Exp::new(part, c.clone())),
                                DataType::Array(n.clone(), std::sync::Arc::new(c.clone())),
                            )
                        };
                        Ok(view(ExpKind::Pair(side(false, &s), side(true, &t))))
                    })
                }
            },
            Fst | Snd => self.data(&vals, env, out, &|xs| {
                Ok(view(if p == Fst {
                    ExpKind::Fst(xs[0].clone())
                } else {
                    ExpKind::Snd(xs[0].clone())
                }))
            }),
            Slide => self.data(&vals, env, out, &|xs| {
                Ok(view(ExpKind::View(
                    View::Slide(nats[0].clone(), nats[1].clone()),
                    xs[0].clone(),
                )))
            }),
            Take => self.data(&vals, env, out, &|xs| {
                Ok(view(ExpKind::View(
                    View::Take(nats[0].clone()),
                    xs[0].clone(),
                )))
            }),
            Drop => self.data(&vals, env, out, &|xs| {
                Ok(view(ExpKind::View(
                    View::Drop(nats[0].clone()),
                    xs[0].clone(),
                )))
            }),
            Reorder => {
                let f = reorder_function(e, args, &array_of(&vals[0])?.0)?;
                self.data(&vals, env, out, &|xs| {
                    Ok(view(ExpKind::View(f.clone(), xs[0].clone())))
                })
            }
            Concat => self.data(&vals, env, out, &|xs| {
                Ok(view(ExpKind::Concat(xs[0].clone(), xs[1].clone())))
            }),
            PadCst => self.data(&vals, env, out, &|xs| {
                Ok(view(ExpKind::Pad(
                    nats[0].clone(),
                    nats[1].clone(),
                    PadMode::Cst(xs[0].clone()),
                    xs[1].clone(),
                )))
            }),
            PadClamp | PadMirror | PadWrap => self.data(&vals, env, out, &|xs| {
                let mode = match p {
                    PadClamp => PadMode::Clamp,
                    PadMirror => PadMode::Mirror,
                    _ => PadMode::Wrap,
                };
                Ok(view(ExpKind::Pad(
                    nats[0].clone(),
                    nats[1].clone(),
                    mode,
                    xs[0].clone(),
                )))
            }),
            Iterate => {
                let Out::Acc(acc) = out else {
                    return Err(TranslateError::at(
                        e,
                        "the result of `iterate` is read but not stored anywhere",
                        Some("write it to memory first: `toMem global (...)`, e.g. with storeInMemory"),
                    ));
                };
                self.iterate(e, &nats[0], &vals, env, acc)
            }
            // ---- decisions not made -------------------------------------------------
            Reduce => Err(TranslateError::at(
                e,
                "this `reduce` is not lowered: code generation does not choose how to run it",
                Some("lower it to reduceSeq (e.g. with lowerToC or toReduceSeq)"),
            )),
            MapWarp | MapLane => Err(TranslateError::at(
                e,
                format!("`{}` cannot be compiled yet", p.name()),
                Some("distribute the map over threads with mapThread / mapLocal instead"),
            )),
            _ => Err(TranslateError::at(
                e,
                format!("`{}` cannot be compiled yet", p.name()),
                None,
            )),
        }
    }

    /// `iterate k f xs` written to `out`, with double buffering (RISE & Shine
    /// §VI, Listings 12–14): iteration `i` applies `f` at `l = n^(k-1-i) * m`,
    /// reading the previous iteration's result and writing into one of two
    /// buffers, alternately; the first iteration reads `xs` where it is and the
    /// last writes straight into `out`, so nothing is copied. The number of
    /// iterations must be a constant: the iterations are expanded here, which
    /// resolves Listing 12's pointer swap at compile time (iteration `i` writes
    /// buffer `i mod 2`) and gives every iteration constant sizes.
    fn iterate(&self, e: &Expr, k: &Nat, vals: &[Expr], env: &Env, out: &Acc) -> R<Comm> {
        let Some(k) = k.as_cst().filter(|k| (0..=64).contains(k)) else {
            return Err(TranslateError::at(
                e,
                format!(
                    "`iterate {k}`: the number of iterations must be a constant between 0 and 64"
                ),
                None,
            ));
        };
        if k == 0 {
            return self.tr(&vals[1], env, Out::Acc(out));
        }
        let (m, elem) = array_dt(&out.ty, e)?;
        let n = iterate_factor(&vals[0])?;
        let len = |i: i64| n.pow(&Nat::cst(k - 1 - i)) * m.clone();
        self.tr(
            &vals[1],
            env,
            Out::Con(&|input| {
                // The buffers live where the input is stored when that is local or
                // private memory (a work-group's tree reduction stays in local memory:
                // `toMem local` on iterate's input says so), in global memory otherwise.
                let addr = match self.space_of(&input) {
                    Some(a @ (AddrSpace::Local | AddrSpace::Private)) => a,
                    _ => AddrSpace::Global,
                };
                // buffer b holds the results of the iterations i with i mod 2 = b (but the last)
                let buffers: Vec<Ident> = (0..(k - 1).min(2))
                    .map(|b| Ident {
                        name: self.fresh("buf"),
                        ty: DataType::array(len(b), elem.clone()),
                    })
                    .collect();
                let mut steps = Vec::new();
                let mut current = input;
                for i in 0..k {
                    let l = len(i);
                    let slice = DataType::array(l.clone(), elem.clone());
                    let (target, result) = if i == k - 1 {
                        (out.clone(), None)
                    } else {
                        let buf = &buffers[(i % 2) as usize];
                        let write = Acc::new(AccKind::Var(buf.clone()), buf.ty.clone());
                        let read = Exp::new(ExpKind::Var(buf.clone()), buf.ty.clone());
                        (
                            Acc::new(AccKind::View(View::Take(l.clone()), write), slice.clone()),
                            Some(Exp::new(ExpKind::View(View::Take(l.clone()), read), slice)),
                        )
                    };
                    steps.push(self.call_at_nat(
                        &vals[0],
                        env,
                        &l,
                        vec![Value::Data(current.clone())],
                        Out::Acc(&target),
                    )?);
                    if let Some(r) = result {
                        current = r;
                    }
                }
                Ok(buffers
                    .iter()
                    .rev()
                    .fold(Comm::Seq(steps), |body, buf| Comm::New {
                        ident: buf.clone(),
                        addr: addr.clone(),
                        body: Box::new(body),
                    }))
            }),
        )
    }

    /// `reduceSeq f init xs` whose initial value is computed by a loop (a `mapLocal`
    /// over the threads that own the parts of the accumulator, say): the initial
    /// value is written into the accumulator, as Listing 9's `accT(init, accumAcc)`
    /// does, rather than computed elsewhere and copied.
    /// The loop of `reduceSeq f _ xs` (`p` and `kind` say which): every element of `xs`
    /// (`n` of `elem`) is combined by `f` with the accumulator, read as `read` and written
    /// through `acc`.
    #[allow(clippy::too_many_arguments)]
    fn reduce_loop(
        &self,
        p: Prim,
        kind: LoopKind,
        f: &Expr,
        env: &Env,
        xs: &Exp,
        (n, elem): (&Nat, &DataType),
        read: Exp,
        acc: &Acc,
    ) -> R<Comm> {
        let i = self.loop_var(n);
        let x = Exp::new(ExpKind::Idx(xs.clone(), Nat::var(&i)), elem.clone());
        let args = |read: &Exp| vec![Value::Data(read.clone()), Value::Data(x.clone())];
        let mut step = self.call(f, env, args(&read), Out::Acc(acc))?;
        let in_place = acc_place(acc, Vec::new())
            .is_some_and(|(name, _)| updates_in_place_safely(&step, &name));
        if !in_place {
            // the new value is computed aside, then copied over the accumulator
            let ident = Ident {
                name: self.fresh("next"),
                ty: acc.ty.clone(),
            };
            let next = Acc::new(AccKind::Var(ident.clone()), acc.ty.clone());
            let computed = self.call(f, env, args(&read), Out::Acc(&next))?;
            let next_read = Exp::new(ExpKind::Var(ident.clone()), acc.ty.clone());
            step = Comm::New {
                ident,
                addr: AddrSpace::Private,
                body: Box::new(Comm::Seq(vec![computed, self.assign(acc, &next_read)])),
            };
        }
        Ok(Comm::For {
            var: i,
            count: n.clone(),
            kind,
            origin: p.name(),
            body: Box::new(step),
        })
    }

    fn reduce_computed_init(
        &self,
        p: Prim,
        kind: LoopKind,
        vals: &[Expr],
        env: &Env,
        out: Out,
        (ty, n, elem): (&DataType, &Nat, &DataType),
    ) -> R<Comm> {
        let ident = Ident {
            name: self.fresh("acc"),
            ty: ty.clone(),
        };
        let acc = Acc::new(AccKind::Var(ident.clone()), ty.clone());
        let read = Exp::new(ExpKind::Var(ident.clone()), ty.clone());
        let init = self.tr(&vals[1], env, Out::Acc(&acc))?;
        let reduce = |k: K| {
            self.tr(
                &vals[2],
                env,
                Out::Con(&|xs| {
                    let lp = self.reduce_loop(
                        p,
                        kind,
                        &vals[0],
                        env,
                        &xs,
                        (n, elem),
                        read.clone(),
                        &acc,
                    )?;
                    Ok(Comm::Seq(vec![lp, k(read.clone())?]))
                }),
            )
        };
        let rest = match out {
            Out::Con(k) => reduce(k)?,
            Out::Acc(a) => reduce(&|r| Ok(self.assign(a, &r)))?,
        };
        Ok(Comm::New {
            ident,
            addr: AddrSpace::Private,
            body: Box::new(Comm::Seq(vec![init, rest])),
        })
    }

    /// The address space of the memory `x` reads, when it reads exactly one memory
    /// that `toMem` allocated (through views).
    fn space_of(&self, x: &Exp) -> Option<AddrSpace> {
        let mut names = Vec::new();
        exp_vars(x, &mut names);
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

/// Whether `e` is a lowered map applied to its data (a loop that writes memory).
fn is_loop_app(e: &Expr) -> bool {
    use Prim::*;
    let (head, args) = e.spine();
    let ExprKind::Prim(p) = head.kind() else {
        return false;
    };
    let lowered = matches!(
        p,
        MapSeq
            | MapSeqUnroll
            | MapPar
            | MapGlobal0
            | MapGlobal1
            | MapGlobal2
            | MapWorkGroup0
            | MapWorkGroup1
            | MapWorkGroup2
            | MapLocal0
            | MapLocal1
            | MapLocal2
            | MapBlock0
            | MapBlock1
            | MapBlock2
            | MapThread0
            | MapThread1
            | MapThread2
    );
    lowered && value_args(&args).len() == 2
}

/// The names of the memory identifiers an expression reads.
pub(crate) fn exp_vars(x: &Exp, out: &mut Vec<String>) {
    match &*x.kind {
        ExpKind::Var(id) => out.push(id.name.clone()),
        _ => exp_children(x).into_iter().for_each(|c| exp_vars(c, out)),
    }
}

/// Whether `step`, which writes an accumulator in memory `name` while reading it,
/// reads and writes one and the same part of it, wherever it touches it (as
/// `acc[i] = acc[i] + x[i]` does, or an inner reduction that reads `acc[i]` into
/// its own accumulator and writes it back to `acc[i]`). Then every part is read
/// before it is written and it may be updated in place; otherwise a part could be
/// read after it was overwritten (`(snd acc + x, fst acc)`, a rotation of an array).
fn updates_in_place_safely(step: &Comm, name: &str) -> bool {
    fn touched(c: &Comm, name: &str, out: &mut Vec<Option<Vec<PathElem>>>) {
        match c {
            Comm::Skip | Comm::Barrier { .. } => {}
            Comm::Seq(cs) => cs.iter().for_each(|c| touched(c, name, out)),
            Comm::New { body, .. } | Comm::For { body, .. } => touched(body, name, out),
            Comm::Assign(a, e) => {
                places_read(e, name, out);
                if crate::barriers::acc_root(a) == name {
                    out.push(acc_place(a, Vec::new()).map(|(_, at)| at));
                }
            }
        }
    }
    let mut places = Vec::new();
    touched(step, name, &mut places);
    match places.split_first() {
        None => true,
        Some((first, rest)) => first.is_some() && rest.iter().all(|p| p == first),
    }
}

/// The places of memory `name` that `x` reads (`None`: a read whose place the
/// views do not show).
fn places_read(x: &Exp, name: &str, out: &mut Vec<Option<Vec<PathElem>>>) {
    reads(
        x,
        Some(Vec::new()),
        &std::collections::HashMap::new(),
        name,
        out,
    )
}

/// [`places_read`] below a path into `x`'s value (a stack, as in [`exp_place`];
/// `None` where it is not known), with `env` the indices `generate` variables
/// stand for.
fn reads(
    x: &Exp,
    path: Option<Vec<PathElem>>,
    env: &std::collections::HashMap<Var, Nat>,
    name: &str,
    out: &mut Vec<Option<Vec<PathElem>>>,
) {
    // pops `n` indices off a known path
    fn indices(path: &mut Option<Vec<PathElem>>, n: usize) -> Option<Vec<Nat>> {
        let p = path.as_mut()?;
        let mut is = Vec::new();
        for _ in 0..n {
            match p.pop()? {
                PathElem::Idx(i) => is.push(i),
                _ => return None,
            }
        }
        Some(is)
    }
    let mut path = path;
    let mut go = |e: &Exp, p: Option<Vec<PathElem>>| reads(e, p, env, name, out);
    let push = |mut p: Option<Vec<PathElem>>, s: PathElem| {
        if let Some(v) = p.as_mut() {
            v.push(s);
        }
        p
    };
    match &*x.kind {
        ExpKind::Var(id) if id.name == name => out.push(path.map(|mut p| {
            p.reverse();
            p
        })),
        ExpKind::Var(_) | ExpKind::Lit(_) | ExpKind::Nat(_) => {}
        ExpKind::Idx(a, i) => go(a, push(path, PathElem::Idx(i.substitute_all(env)))),
        ExpKind::Fst(a) => go(a, push(path, PathElem::Fst)),
        ExpKind::Snd(a) => go(a, push(path, PathElem::Snd)),
        ExpKind::Zip(a, b) | ExpKind::Pair(a, b) => {
            let zip = matches!(&*x.kind, ExpKind::Zip(..));
            let i = if zip {
                indices(&mut path, 1)
            } else {
                Some(vec![])
            };
            let component = i.and_then(|i| Some((i, path.as_mut()?.pop()?)));
            match component {
                Some((i, c @ (PathElem::Fst | PathElem::Snd))) => {
                    let p = i.into_iter().fold(path, |p, i| push(p, PathElem::Idx(i)));
                    go(if c == PathElem::Fst { a } else { b }, p)
                }
                _ => {
                    go(a, None);
                    go(b, None)
                }
            }
        }
        ExpKind::View(v, a) => go(a, path.and_then(|p| reindex_stack(v, p, env))),
        // vector j of `asVector n a` is the place of element j*n of `a` (as on the write side)
        ExpKind::AsVector(n, a) => match indices(&mut path, 1) {
            Some(j) => go(
                a,
                push(path, PathElem::Idx(j[0].clone() * n.substitute_all(env))),
            ),
            None => go(a, None),
        },
        ExpKind::Generate(v, body) => match indices(&mut path, 1) {
            Some(i) => {
                let mut env = env.clone();
                env.insert(v.clone(), i[0].clone());
                reads(body, path, &env, name, out)
            }
            None => reads(body, None, env, name, out),
        },
        // operators read whole scalars (or vectors) of their operands
        ExpKind::Unary(..) | ExpKind::Binary(..) | ExpKind::Select(..) | ExpKind::Cast(_) => {
            let whole = path.filter(|p| p.is_empty());
            exp_children(x)
                .into_iter()
                .for_each(|c| go(c, whole.clone()))
        }
        _ => exp_children(x).into_iter().for_each(|c| go(c, None)),
    }
}

/// The view of `reorder f finv` on `n` elements: its index function `f`, once
/// proven to map `0..n` into itself (the read side needs only `f`; `finv` is not
/// trusted, a write of the view copies through `f`).
fn reorder_function(e: &Expr, args: &[Arg], n: &Nat) -> R<View> {
    let f = args.iter().find_map(|a| match a {
        Arg::Type(TypeArg::NatToNat(rise::types::NatToNat::Lambda(v, body))) => {
            Some((v.clone(), body.clone()))
        }
        _ => None,
    });
    let Some((v, body)) = f else {
        return Err(TranslateError::at(
            e,
            "`reorder` needs its index function written as `fun i => ...`",
            None,
        ));
    };
    let i = Var::with_range(v.name(), Nat::cst(0), n.clone());
    let at = body.substitute(&v, &Nat::var(&i));
    if !(at.prove_nonneg() && at.prove_lt(n)) {
        return Err(TranslateError::at(
            e,
            format!("cannot prove that the index function `{v} => {body}` of `reorder` maps 0..{n} into 0..{n}"),
            Some("an index out of range would read outside the array; the interpreter checks it at run time"),
        ));
    }
    Ok(View::Reorder(v, body))
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

/// The `n` of `iterate`'s function `(l: nat) -> (l*n).t -> l.t`: its input length at `l = 1`.
fn iterate_factor(f: &Expr) -> R<Nat> {
    if let Some(Type::DepFun { binder, body, .. }) = f.ty() {
        if let Type::Fun(a, _) = &**body {
            if let Some(DataType::Array(len, _)) = a.as_data() {
                let name = binder.name.clone();
                let one = move |x: &str, kind: rise::Kind| {
                    (x == &*name && kind == rise::Kind::Nat).then(|| TypeArg::Nat(Nat::cst(1)))
                };
                return Ok(rise::types::subst_nat(len, &one));
            }
        }
    }
    Err(TranslateError::at(
        f,
        "the function given to `iterate` does not have the type `(l: nat) -> (l*n).t -> l.t`",
        None,
    ))
}

/// A path kept as a stack (its top is the first step) seen through a view:
/// [`View::reindex`] with the view's sizes under `env`.
fn reindex_stack(
    v: &View,
    stack: Vec<PathElem>,
    env: &std::collections::HashMap<Var, Nat>,
) -> Option<Vec<PathElem>> {
    let mut forward = stack;
    forward.reverse();
    let mut p = v
        .map_nats(|n| n.substitute_all(env))
        .reindex(&forward)
        .ok()?;
    p.reverse();
    Some(p)
}

/// Whether the expression reads exactly the memory the acceptor writes (the
/// same identifier at the same element), as far as the views show.
fn same_place(x: &Exp, a: &Acc) -> bool {
    let env = std::collections::HashMap::new();
    match (exp_place(x, Vec::new(), &env), acc_place(a, Vec::new())) {
        (Some((i, p)), Some((j, q))) => i == j && p == q,
        _ => false,
    }
}

/// The memory an expression reads and where in it. `path` is a stack: its
/// top is the first step taken into the expression's value; `env` gives the
/// indices that `generate` variables stand for.
fn exp_place(
    x: &Exp,
    mut path: Vec<PathElem>,
    env: &std::collections::HashMap<Var, Nat>,
) -> Option<(String, Vec<PathElem>)> {
    let idx = |path: &mut Vec<PathElem>| match path.pop() {
        Some(PathElem::Idx(i)) => Some(i),
        _ => None,
    };
    match &*x.kind {
        ExpKind::Var(id) => {
            path.reverse();
            Some((id.name.clone(), path))
        }
        ExpKind::Idx(a, i) => {
            path.push(PathElem::Idx(i.substitute_all(env)));
            exp_place(a, path, env)
        }
        ExpKind::Fst(a) => {
            path.push(PathElem::Fst);
            exp_place(a, path, env)
        }
        ExpKind::Snd(a) => {
            path.push(PathElem::Snd);
            exp_place(a, path, env)
        }
        // component c of element i of `zip a b` is element i of a or b
        ExpKind::Zip(a, b) => {
            let i = idx(&mut path)?;
            let c = path.pop()?;
            path.push(PathElem::Idx(i));
            match c {
                PathElem::Fst => exp_place(a, path, env),
                PathElem::Snd => exp_place(b, path, env),
                PathElem::Idx(_) | PathElem::Lane(_) => None,
            }
        }
        ExpKind::Pair(a, b) => match path.pop()? {
            PathElem::Fst => exp_place(a, path, env),
            PathElem::Snd => exp_place(b, path, env),
            PathElem::Idx(_) | PathElem::Lane(_) => None,
        },
        // the whole of `generate(v => x[v])` is `x`
        ExpKind::Generate(v, body) if path.is_empty() => {
            let (id, steps) = exp_place(body, path, env)?;
            let (last, rest) = steps.split_last()?;
            let mentions = |s: &PathElem| matches!(s, PathElem::Idx(n) if n.contains_var(v));
            (*last == PathElem::Idx(Nat::var(v)) && !rest.iter().any(mentions))
                .then(|| (id, rest.to_vec()))
        }
        ExpKind::Generate(v, body) => {
            let i = idx(&mut path)?;
            let mut env = env.clone();
            env.insert(v.clone(), i);
            exp_place(body, path, &env)
        }
        ExpKind::View(v, a) => exp_place(a, reindex_stack(v, path, env)?, env),
        _ => None,
    }
}

/// The memory an acceptor writes and where in it.
fn acc_place(a: &Acc, mut path: Vec<PathElem>) -> Option<(String, Vec<PathElem>)> {
    match &*a.kind {
        AccKind::Var(id) => {
            path.reverse();
            Some((id.name.clone(), path))
        }
        AccKind::Idx(b, i) => {
            path.push(PathElem::Idx(i.clone()));
            acc_place(b, path)
        }
        AccKind::Pair1(b) => {
            path.push(PathElem::Fst);
            acc_place(b, path)
        }
        AccKind::Pair2(b) => {
            path.push(PathElem::Snd);
            acc_place(b, path)
        }
        AccKind::View(v, b) => acc_place(
            b,
            reindex_stack(v, path, &std::collections::HashMap::new())?,
        ),
        AccKind::AsVector(n, b) => match path.pop() {
            Some(PathElem::Idx(j)) => {
                path.push(PathElem::Idx(j * n.clone()));
                acc_place(b, path)
            }
            _ => None,
        },
        _ => None,
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

/// `joinAcc` for writing `split n e` into `a`: accepts `e`'s type.
fn join_acc(a: &Acc, e: &Expr) -> R<Acc> {
    let (_, inner) = array_dt(&a.ty, e)?;
    let (m, _) = array_dt(&inner, e)?;
    Ok(Acc::new(
        AccKind::View(View::Join(m), a.clone()),
        data_type(e)?,
    ))
}

/// The expression of a scalar function applied to a vector, with every
/// operation lifted to vectors of `n` lanes; `None` if it is not scalar.
fn vectorized(x: &Exp, n: &Nat) -> Option<Exp> {
    fn lift(x: &Exp, n: &Nat) -> Option<(Exp, bool)> {
        let vec_of = |t: &DataType| match t {
            DataType::Scalar(_) => {
                Some(DataType::Vector(n.clone(), std::sync::Arc::new(t.clone())))
            }
            _ => None,
        };
        let broadcast = |e: Exp| -> Option<Exp> {
            if matches!(e.ty, DataType::Vector(..)) {
                return Some(e);
            }
            let t = vec_of(&e.ty)?;
            Some(Exp::new(ExpKind::VectorFromScalar(e), t))
        };
        Some(match &*x.kind {
            ExpKind::Unary(op, a) => {
                let (a, v) = lift(a, n)?;
                if !v {
                    return Some((x.clone(), false));
                }
                (Exp::new(ExpKind::Unary(*op, a.clone()), a.ty.clone()), true)
            }
            ExpKind::Binary(op, a, b) => {
                let (a, va) = lift(a, n)?;
                let (b, vb) = lift(b, n)?;
                if !(va || vb) {
                    return Some((x.clone(), false));
                }
                let t = match x.ty {
                    DataType::Scalar(_) => vec_of(&x.ty)?,
                    _ => return None,
                };
                (
                    Exp::new(ExpKind::Binary(*op, broadcast(a)?, broadcast(b)?), t),
                    true,
                )
            }
            ExpKind::Select(c, a, b) => {
                let (c, vc) = lift(c, n)?;
                let (a, va) = lift(a, n)?;
                let (b, vb) = lift(b, n)?;
                if vc {
                    return None; // lane-wise conditions are not supported
                }
                if !(va || vb) {
                    return Some((x.clone(), false));
                }
                let t = vec_of(&x.ty)?;
                (
                    Exp::new(ExpKind::Select(c, broadcast(a)?, broadcast(b)?), t),
                    true,
                )
            }
            ExpKind::Cast(a) => {
                let (a, v) = lift(a, n)?;
                if !v {
                    return Some((x.clone(), false));
                }
                (Exp::new(ExpKind::Cast(a), vec_of(&x.ty)?), true)
            }
            // a pair built in the body and taken apart again: the component
            ExpKind::Fst(p) | ExpKind::Snd(p) if matches!(&*p.kind, ExpKind::Pair(..)) => {
                let ExpKind::Pair(a, b) = &*p.kind else {
                    unreachable!("matched above")
                };
                lift(
                    if matches!(&*x.kind, ExpKind::Fst(_)) {
                        a
                    } else {
                        b
                    },
                    n,
                )?
            }
            _ => {
                let v = matches!(x.ty, DataType::Vector(..));
                // The argument was substituted with its scalar type kept around it: a
                // scalar node over a vector is an operation not lifted above, whose
                // lanes would be lost.
                if !v && (!matches!(x.ty, DataType::Scalar(_)) || mentions_vector(x)) {
                    return None;
                }
                (x.clone(), v)
            }
        })
    }
    fn mentions_vector(x: &Exp) -> bool {
        exp_children(x)
            .into_iter()
            .any(|c| matches!(c.ty, DataType::Vector(..)) || mentions_vector(c))
    }
    let (e, v) = lift(x, n)?;
    if v {
        Some(e)
    } else {
        let t = DataType::Vector(n.clone(), std::sync::Arc::new(e.ty.clone()));
        matches!(e.ty, DataType::Scalar(_)).then(|| Exp::new(ExpKind::VectorFromScalar(e), t))
    }
}
