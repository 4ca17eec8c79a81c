//! The evaluator: environments, closures and the application of functions.
//!
//! Evaluation is call-by-value over the typed expression tree. A value environment
//! maps lambda parameters to values; a type environment maps the binders of
//! enclosing dependent lambdas (`fun (l: nat) => ...`) to the concrete type-level
//! values they were applied to, so that sizes in the types of primitive nodes can be
//! evaluated. Both are persistent linked lists shared by closures.
//!
//! A primitive applied to fewer arguments than its type asks for is a value
//! ([`PrimApp`]); once all explicit type-level arguments and value arguments are
//! there, its semantics function (from the primitive table) runs.

use super::scalar::Scalar;
use super::sem::PrimCall;
use super::value::{FunKind, Function, Value};
use super::{ErrorMode, EvalError};
use crate::expr::{Arg, Expr, ExprKind, Literal};
use crate::foreign::{ForeignEvaluator, ForeignFun};
use crate::primitives::Prim;
use crate::span::Span;
use crate::types::{subst_arg, Kind, Name, NatToNat, Type, TypeArg};
use arith::{Nat, Var};
use std::sync::{Arc, OnceLock};

/// The deepest nesting of evaluations (expression depth plus function calls).
pub const MAX_DEPTH: usize = 20_000;

/// The value and type environments of an expression being evaluated.
#[derive(Clone, Default)]
pub(crate) struct Env {
    vals: Option<Arc<ValNode>>,
    types: TypeEnv,
    /// What runs foreign functions (closures keep it with their environment).
    foreign: Option<Arc<dyn ForeignEvaluator>>,
}

struct ValNode {
    name: Name,
    value: Value,
    next: Option<Arc<ValNode>>,
}

/// The type-level values bound by enclosing dependent lambdas.
#[derive(Clone, Default)]
pub(crate) struct TypeEnv(Option<Arc<TypeNode>>);

struct TypeNode {
    name: Name,
    arg: TypeArg,
    next: Option<Arc<TypeNode>>,
}

impl Env {
    fn bind(&self, name: Name, value: Value) -> Env {
        Env {
            vals: Some(Arc::new(ValNode {
                name,
                value,
                next: self.vals.clone(),
            })),
            types: self.types.clone(),
            foreign: self.foreign.clone(),
        }
    }

    fn bind_type(&self, name: Name, arg: TypeArg) -> Env {
        Env {
            vals: self.vals.clone(),
            types: TypeEnv(Some(Arc::new(TypeNode {
                name,
                arg,
                next: self.types.0.clone(),
            }))),
            foreign: self.foreign.clone(),
        }
    }

    fn lookup(&self, name: &str) -> Option<&Value> {
        let mut node = self.vals.as_deref();
        while let Some(n) = node {
            if &*n.name == name {
                return Some(&n.value);
            }
            node = n.next.as_deref();
        }
        None
    }

    /// An environment binding natural-number variables only.
    pub(crate) fn with_nats<'a>(
        nats: impl IntoIterator<Item = (&'a str, i64)>,
        foreign: Option<Arc<dyn ForeignEvaluator>>,
    ) -> Env {
        let mut env = Env {
            foreign,
            ..Env::default()
        };
        for (name, v) in nats {
            env = env.bind_type(name.into(), TypeArg::Nat(Nat::cst(v)));
        }
        env
    }
}

impl TypeEnv {
    /// The value bound to a type-level variable of this kind.
    pub(crate) fn lookup(&self, name: &str, kind: Kind) -> Option<&TypeArg> {
        let mut node = self.0.as_deref();
        while let Some(n) = node {
            if &*n.name == name {
                return (n.arg.kind() == kind).then_some(&n.arg);
            }
            node = n.next.as_deref();
        }
        None
    }

    /// Whether no type-level variable is bound.
    pub(crate) fn is_empty(&self) -> bool {
        self.0.is_none()
    }

    /// The value of a natural-number variable.
    fn nat(&self, v: &Var) -> Option<i64> {
        match self.lookup(v.name(), Kind::Nat) {
            Some(TypeArg::Nat(n)) => n.as_cst(),
            _ => None,
        }
    }

    /// Evaluates a natural number under this environment.
    pub(crate) fn eval_nat(&self, n: &Nat) -> Result<i64, String> {
        if let Some(c) = n.as_cst() {
            return Ok(c);
        }
        n.eval(&|v| self.nat(v))
            .map_err(|e| format!("the size {n} cannot be evaluated: {e}"))
    }

    /// A type-level argument with every bound variable replaced by its value and
    /// every closed natural number evaluated.
    pub(crate) fn concretize(&self, a: &TypeArg) -> Result<TypeArg, String> {
        Ok(match a {
            TypeArg::Nat(n) => {
                let v = self.eval_nat(n)?;
                if v < 0 {
                    return Err(format!("the natural number {n} is negative ({v})"));
                }
                TypeArg::Nat(Nat::cst(v))
            }
            other if self.is_empty() => other.clone(),
            other => subst_arg(other, &|name: &str, kind| self.lookup(name, kind).cloned()),
        })
    }

    /// A type with every bound variable replaced by its value.
    pub(crate) fn subst(&self, t: &Type) -> Type {
        if self.is_empty() {
            return t.clone();
        }
        crate::types::subst_type(t, &|name: &str, kind| self.lookup(name, kind).cloned())
    }
}

/// A primitive together with the arguments it has received so far.
#[derive(Clone)]
pub(crate) struct PrimApp {
    pub(crate) prim: Prim,
    /// The explicit parameters of the primitive's scheme, in order.
    params: &'static [Want],
    /// How many of them have been supplied.
    pos: usize,
    /// The primitive node (for its type, if inferred).
    pub(crate) node: Expr,
    /// The type environment where the node was evaluated.
    pub(crate) tenv: TypeEnv,
    pub(crate) targs: Vec<TypeArg>,
    pub(crate) args: Vec<Value>,
    /// `makeArray n` and `makeVector n` take `n` values.
    values_wanted: Option<usize>,
    pub(crate) span: Span,
}

/// What a partially applied primitive expects next.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Want {
    Value,
    Type(Kind),
    Nothing,
}

/// The explicit parameters of a primitive (value parameters and explicit
/// type-level ones, in order), read once from its scheme.
fn params_of(prim: Prim) -> &'static [Want] {
    static TABLE: OnceLock<Vec<Vec<Want>>> = OnceLock::new();
    let table = TABLE.get_or_init(|| {
        Prim::ALL
            .iter()
            .map(|p| {
                let mut out = Vec::new();
                let mut t = p.scheme();
                loop {
                    match t {
                        Type::Fun(_, b) => {
                            out.push(Want::Value);
                            t = b;
                        }
                        Type::DepFun {
                            binder,
                            implicit,
                            body,
                        } => {
                            if !implicit {
                                out.push(Want::Type(binder.kind));
                            }
                            t = body;
                        }
                        _ => break out,
                    }
                }
            })
            .collect()
    });
    table.get(prim as usize).map_or(&[], |v| v.as_slice())
}

impl PrimApp {
    fn new(prim: Prim, node: &Expr, tenv: TypeEnv, capacity: usize) -> PrimApp {
        PrimApp {
            prim,
            params: params_of(prim),
            pos: 0,
            node: node.clone(),
            tenv,
            targs: Vec::new(),
            args: Vec::with_capacity(capacity),
            values_wanted: None,
            span: node.span(),
        }
    }

    fn into_value(self) -> Value {
        Value::Fun(Function(Arc::new(FunKind::Prim(self))))
    }

    fn want(&self) -> Want {
        match self.values_wanted {
            Some(n) if self.args.len() < n => Want::Value,
            Some(_) => Want::Nothing,
            None => self.params.get(self.pos).copied().unwrap_or(Want::Nothing),
        }
    }

    fn saturated(&self) -> bool {
        self.want() == Want::Nothing
    }

    fn push(&mut self, arg: ArgValue) -> Result<(), EvalError> {
        match (self.want(), arg) {
            (Want::Value, ArgValue::Value(v)) => {
                self.pos += 1;
                self.args.push(v);
                Ok(())
            }
            (Want::Type(kind), ArgValue::Type(a)) => {
                if a.kind() != kind {
                    return Err(EvalError::new(
                        self.span,
                        format!(
                            "`{}` expects a type-level argument of kind {kind}, got one of kind {}",
                            self.prim.name(),
                            a.kind()
                        ),
                    ));
                }
                self.pos += 1;
                if self.prim.takes_n_values() {
                    // `makeArray n` takes `n` values (its type has `n` value parameters).
                    if let TypeArg::Nat(n) = &a {
                        self.values_wanted = n.as_cst().and_then(|n| usize::try_from(n).ok());
                    }
                }
                self.targs.push(a);
                Ok(())
            }
            (Want::Type(kind), ArgValue::Value(v)) => Err(EvalError::new(
                self.span,
                format!(
                    "`{}` expects a type-level argument of kind {kind} here, got {}",
                    self.prim.name(),
                    v.describe()
                ),
            )),
            (Want::Value, ArgValue::Type(a)) => Err(EvalError::new(
                self.span,
                format!(
                    "`{}` expects a value here, got the type-level argument {a:?}",
                    self.prim.name()
                ),
            )),
            (Want::Nothing, _) => Err(EvalError::new(
                self.span,
                format!("`{}` applied to too many arguments", self.prim.name()),
            )),
        }
    }

    /// `map`, `split 4`, ... for printing.
    pub(crate) fn describe(&self) -> String {
        let mut s = format!("primitive {}", self.prim.name());
        for a in &self.targs {
            match a {
                TypeArg::Nat(n) => s.push_str(&format!(" {n}")),
                TypeArg::AddrSpace(a) => s.push_str(&format!(" {a}")),
                TypeArg::NatToNat(f) => s.push_str(&format!(" {f}")),
                TypeArg::Data(d) => s.push_str(&format!(" {d}")),
                TypeArg::NatToData(f) => s.push_str(&format!(" {f}")),
            }
        }
        if !self.args.is_empty() {
            s.push_str(&format!(" (+{} arguments)", self.args.len()));
        }
        s
    }
}

/// A foreign function with the scalar arguments it has received so far.
#[derive(Clone)]
pub(crate) struct ForeignApp {
    pub(crate) fun: Arc<ForeignFun>,
    args: Vec<Scalar>,
    /// The first failed argument: the call is not made, its result fails with it.
    failed: Option<Arc<EvalError>>,
    /// What runs it (`None`: it cannot be run here).
    evaluator: Option<Arc<dyn ForeignEvaluator>>,
    span: Span,
}

impl ForeignApp {
    fn into_value(self) -> Value {
        Value::Fun(Function(Arc::new(FunKind::Foreign(self))))
    }

    /// Adds an argument; the result once all are there. A call that fails (a crash, an exit,
    /// a time limit of the C code) is a failed value unless `strict`: a data-dependent error,
    /// an error of the program only where its result needs the value.
    fn push(mut self, arg: ArgValue, span: Span, strict: bool) -> Result<Value, EvalError> {
        let name = &self.fun.name;
        let scalar = match arg {
            ArgValue::Value(Value::Scalar(s)) => s,
            ArgValue::Value(Value::Failed(e)) => {
                self.failed.get_or_insert(e);
                // a stand-in of the parameter's type; the call is not made
                let ty = self.fun.params.get(self.args.len()).map(|p| p.1);
                ty.map_or(Scalar::Bool(false), Scalar::zero)
            }
            ArgValue::Value(v) => {
                return Err(EvalError::new(
                    span,
                    format!(
                        "the foreign function `{name}` takes scalars, got {}",
                        v.describe()
                    ),
                ))
            }
            ArgValue::Type(a) => {
                return Err(EvalError::new(
                    span,
                    format!(
                    "the foreign function `{name}` takes values, got the type-level argument {a:?}"
                ),
                ))
            }
        };
        self.args.push(scalar);
        if self.args.len() < self.fun.params.len() {
            return Ok(self.into_value());
        }
        if let Some(e) = self.failed {
            return Ok(Value::Failed(e));
        }
        match call_foreign(&self.fun, self.evaluator.as_deref(), &[self.args], span) {
            Ok(mut results) => Ok(Value::Scalar(results.remove(0))),
            Err(e) if strict => Err(e),
            Err(e) => Ok(Value::Failed(Arc::new(e))),
        }
    }
}

/// Calls a foreign function once per argument list through `evaluator`; checks that the
/// arguments and the results have the types of its signature.
fn call_foreign(
    f: &ForeignFun,
    evaluator: Option<&dyn ForeignEvaluator>,
    calls: &[Vec<Scalar>],
    span: Span,
) -> Result<Vec<Scalar>, EvalError> {
    let name = &f.name;
    let Some(evaluator) = evaluator else {
        return Err(EvalError::new(
            span,
            format!("foreign function `{name}` cannot be evaluated here"),
        )
        .with_note("no evaluator of foreign functions is installed (`shine eval` and `shine run --verify` install one)"));
    };
    for args in calls {
        let types_match = args.len() == f.params.len()
            && args.iter().zip(&f.params).all(|(a, (_, t))| a.ty() == *t);
        if !types_match {
            let got: Vec<_> = args.iter().map(|a| a.ty().name()).collect();
            return Err(EvalError::new(
                span,
                format!(
                    "the foreign function `{name}` is called with arguments of types ({})",
                    got.join(", ")
                ),
            )
            .with_note(format!("its type is `{}`", f.ty())));
        }
    }
    let results = evaluator
        .call(f, calls)
        .map_err(|m| EvalError::new(span, m))?;
    if results.len() != calls.len() || results.iter().any(|r| r.ty() != f.result) {
        return Err(EvalError::new(
            span,
            format!(
                "the evaluator of foreign functions answered {} results for {} calls of `{name}`, or results of another type than {}",
                results.len(),
                calls.len(),
                f.result.name()
            ),
        ));
    }
    Ok(results)
}

/// The most calls of a failed batch run one by one ([`one_by_one`]): a body that fails on
/// every element (or stops at its time limit on each) is not run that many times again.
const MAX_SINGLE_CALLS_AFTER_A_FAILURE: usize = 64;

/// Calls `f` once per argument list, each alone: a failed call is a failed value. After
/// [`MAX_SINGLE_CALLS_AFTER_A_FAILURE`] calls, the calls not yet made fail with the last
/// error (a value the result needs is then an error of the program, as it would be if the
/// failing call were needed; compiled code may compute it: a refusal, never another value).
fn one_by_one(
    f: &ForeignFun,
    evaluator: Option<&dyn ForeignEvaluator>,
    calls: &[Vec<Scalar>],
    span: Span,
) -> Vec<Value> {
    let mut last_error: Option<Arc<EvalError>> = None;
    calls
        .iter()
        .enumerate()
        .map(|(k, call)| {
            if let (true, Some(e)) = (k >= MAX_SINGLE_CALLS_AFTER_A_FAILURE, &last_error) {
                return Value::Failed(e.clone());
            }
            match call_foreign(f, evaluator, std::slice::from_ref(call), span) {
                Ok(mut r) => Value::Scalar(r.remove(0)),
                Err(e) => {
                    let e = Arc::new(e);
                    last_error = Some(e.clone());
                    Value::Failed(e)
                }
            }
        })
        .collect()
}

/// An evaluated argument of an application.
pub(crate) enum ArgValue {
    Value(Value),
    Type(TypeArg),
}

/// The interpreter state passed to the semantics of primitives: the recursion
/// depth (there is no other mutable state) and how data-dependent errors are treated.
pub struct Machine {
    depth: usize,
    max_depth: usize,
    mode: ErrorMode,
}

impl Default for Machine {
    fn default() -> Self {
        Machine::new()
    }
}

impl Machine {
    /// A fresh interpreter whose data-dependent errors are failed values
    /// ([`ErrorMode::Poison`]).
    pub fn new() -> Machine {
        Machine::with_mode(ErrorMode::Poison)
    }

    /// A fresh interpreter treating data-dependent errors as `mode` says.
    pub fn with_mode(mode: ErrorMode) -> Machine {
        Machine {
            depth: 0,
            max_depth: MAX_DEPTH,
            mode,
        }
    }

    fn enter(&mut self, span: Span) -> Result<(), EvalError> {
        if self.depth >= self.max_depth {
            return Err(EvalError::new(
                span,
                format!("evaluation nested more than {} levels deep", self.max_depth),
            ));
        }
        self.depth += 1;
        Ok(())
    }

    /// Evaluates an expression in an environment.
    pub(crate) fn eval(&mut self, e: &Expr, env: &Env) -> Result<Value, EvalError> {
        self.enter(e.span())?;
        let r = self.eval_inner(e, env);
        self.depth -= 1;
        r
    }

    fn eval_inner(&mut self, e: &Expr, env: &Env) -> Result<Value, EvalError> {
        match e.kind() {
            ExprKind::Var(x) => env.lookup(x).cloned().ok_or_else(|| {
                EvalError::new(e.span(), format!("unbound variable `{x}`")).with_note(
                    "definitions must be inlined and the program closed before evaluation",
                )
            }),
            ExprKind::Lit(l) => literal(l, &env.types).map_err(|m| EvalError::new(e.span(), m)),
            ExprKind::Lambda(x, _, body) => Ok(Value::Fun(Function(Arc::new(FunKind::Closure {
                param: x.clone(),
                body: body.clone(),
                env: env.clone(),
            })))),
            ExprKind::DepLambda(b, body) => {
                Ok(Value::Fun(Function(Arc::new(FunKind::DepClosure {
                    binder: b.clone(),
                    body: body.clone(),
                    env: env.clone(),
                }))))
            }
            ExprKind::Prim(p) => Ok(PrimApp::new(*p, e, env.types.clone(), 0).into_value()),
            ExprKind::Foreign(f) => Ok(ForeignApp {
                fun: f.clone(),
                args: Vec::with_capacity(f.params.len()),
                failed: None,
                evaluator: env.foreign.clone(),
                span: e.span(),
            }
            .into_value()),
            ExprKind::Annot(inner, _) => self.eval(inner, env),
            ExprKind::App(..) | ExprKind::DepApp(..) => {
                // The spine `head a1 ... an`, without allocating for short ones.
                let mut inline: [Option<Arg<'_>>; SPINE_INLINE] = [None; SPINE_INLINE];
                let mut spilled: Vec<Option<Arg<'_>>> = Vec::new();
                let (head, spine): (&Expr, &[Option<Arg<'_>>]) = match collect_spine(e, &mut inline)
                {
                    Some((head, n)) => {
                        inline[..n].reverse();
                        (head, &inline[..n])
                    }
                    None => {
                        let (head, args) = e.spine();
                        spilled.extend(args.into_iter().map(Some));
                        (head, &spilled)
                    }
                };
                let span = e.span();
                let eval_arg = |m: &mut Machine, a: &Arg<'_>| -> Result<ArgValue, EvalError> {
                    Ok(match a {
                        Arg::Value(x) => ArgValue::Value(m.eval(x, env)?),
                        Arg::Type(t) => ArgValue::Type(
                            env.types
                                .concretize(t)
                                .map_err(|msg| EvalError::new(span, msg))?,
                        ),
                    })
                };
                let mut spine = spine.iter().flatten();
                let f = if let ExprKind::Prim(p) = head.kind() {
                    // Feed the primitive directly, without building a function value first.
                    let mut app = PrimApp::new(*p, head, env.types.clone(), spine.clone().count());
                    for a in spine.by_ref() {
                        app.push(eval_arg(self, a)?)?;
                        if app.saturated() {
                            break;
                        }
                    }
                    if !app.saturated() {
                        app.span = span;
                        return Ok(app.into_value());
                    }
                    self.call_prim(app, span)?
                } else {
                    self.eval(head, env)?
                };
                let rest = spine
                    .map(|a| eval_arg(self, a))
                    .collect::<Result<Vec<_>, _>>()?;
                if rest.is_empty() {
                    return Ok(f);
                }
                self.apply_iter(f, rest.into_iter(), span)
            }
        }
    }

    /// Applies a function to arguments, one after another.
    pub(crate) fn apply_iter(
        &mut self,
        f: Value,
        mut args: impl Iterator<Item = ArgValue>,
        span: Span,
    ) -> Result<Value, EvalError> {
        let mut f = f;
        while let Some(arg) = args.next() {
            let func = match &f {
                Value::Fun(func) => func.clone(),
                other => {
                    return Err(EvalError::new(
                        span,
                        format!(
                            "cannot apply {} to an argument: it is not a function",
                            other.describe()
                        ),
                    ))
                }
            };
            f = match &*func.0 {
                FunKind::Closure { param, body, env } => match arg {
                    ArgValue::Value(v) => {
                        let env = env.bind(param.clone(), v);
                        self.eval(body, &env)?
                    }
                    ArgValue::Type(a) => {
                        return Err(EvalError::new(
                            span,
                            format!("the function of `{param}` expects a value, got the type-level argument {a:?}"),
                        ))
                    }
                },
                FunKind::DepClosure { binder, body, env } => match arg {
                    ArgValue::Type(a) if a.kind() == binder.kind => {
                        let env = env.bind_type(binder.name.clone(), a);
                        self.eval(body, &env)?
                    }
                    ArgValue::Type(a) => {
                        return Err(EvalError::new(
                            span,
                            format!(
                                "the dependent function of `{}` expects an argument of kind {}, got one of kind {}",
                                binder.name,
                                binder.kind,
                                a.kind()
                            ),
                        ))
                    }
                    ArgValue::Value(v) => {
                        return Err(EvalError::new(
                            span,
                            format!(
                                "the dependent function of `{}: {}` expects a type-level argument, got {}",
                                binder.name,
                                binder.kind,
                                v.describe()
                            ),
                        ))
                    }
                },
                FunKind::Foreign(app) => {
                    let at = if app.span == Span::default() { span } else { app.span };
                    app.clone().push(arg, at, self.mode == ErrorMode::Strict)?
                }
                FunKind::Prim(p) => {
                    let mut app = p.clone();
                    app.push(arg)?;
                    while !app.saturated() {
                        match args.next() {
                            Some(a) => app.push(a)?,
                            None => break,
                        }
                    }
                    if app.saturated() {
                        // Errors point at the partial application (`div 1` in
                        // `map (div 1) xs`) where there is one.
                        let at = if app.span == Span::default() { span } else { app.span };
                        self.call_prim(app, at)?
                    } else {
                        app.into_value()
                    }
                }
            };
        }
        Ok(f)
    }

    /// Runs the semantics of a saturated primitive; a primitive strict in its operands
    /// ([`strict_in_operands`]) applied to a failed value is that failed value.
    fn call_prim(&mut self, mut app: PrimApp, span: Span) -> Result<Value, EvalError> {
        if strict_in_operands(app.prim) {
            if let Some(failed) = app.args.iter().find(|a| matches!(a, Value::Failed(_))) {
                return Ok(failed.clone());
            }
        }
        app.span = span;
        self.enter(span)?;
        let strict = self.mode == ErrorMode::Strict;
        let r = (app.prim.semantics())(self, &PrimCall::new(app, strict));
        self.depth -= 1;
        r
    }

    /// Applies a function value to value arguments.
    pub fn apply(&mut self, f: &Value, args: Vec<Value>, span: Span) -> Result<Value, EvalError> {
        self.apply_iter(f.clone(), args.into_iter().map(ArgValue::Value), span)
    }

    /// `f x` for every `x` of `xs` in one batch when `f` is a foreign function (or a lambda
    /// whose body calls one on its parameter, variables and literals) missing one scalar
    /// argument, so that an evaluator running out of process is asked once; `None` when
    /// `f` is not of that form.
    pub(crate) fn apply_batch(
        &mut self,
        f: &Value,
        xs: &[Value],
        span: Span,
    ) -> Option<Result<Vec<Value>, EvalError>> {
        let Value::Fun(func) = f else { return None };
        let mut calls = Vec::with_capacity(xs.len());
        // per element: `None` for a call in `calls`, `Some` for a failed argument
        let mut failed: Vec<Option<Value>> = Vec::with_capacity(xs.len());
        let (fun, evaluator, at) = match &*func.0 {
            FunKind::Foreign(app) if app.args.len() + 1 == app.fun.params.len() => {
                for x in xs {
                    if let Some(e) = &app.failed {
                        failed.push(Some(Value::Failed(e.clone())));
                        continue;
                    }
                    if let Value::Failed(_) = x {
                        failed.push(Some(x.clone()));
                        continue;
                    }
                    let mut args = app.args.clone();
                    args.push(x.as_scalar()?);
                    calls.push(args);
                    failed.push(None);
                }
                let at = if app.span == Span::default() {
                    span
                } else {
                    app.span
                };
                (app.fun.clone(), app.evaluator.clone(), at)
            }
            FunKind::Closure { param, body, env } => {
                let (head, args) = body.spine();
                let ExprKind::Foreign(fun) = head.kind() else {
                    return None;
                };
                let simple = args.len() == fun.params.len()
                    && args.iter().all(|a| {
                        matches!(a, Arg::Value(v) if matches!(v.kind(), ExprKind::Var(_) | ExprKind::Lit(_)))
                    });
                if !simple {
                    return None;
                }
                for x in xs {
                    let env = env.bind(param.clone(), x.clone());
                    let mut scalars = Vec::with_capacity(args.len());
                    let mut failure = None;
                    for a in &args {
                        let Arg::Value(v) = a else { return None };
                        match self.eval(v, &env) {
                            Ok(Value::Scalar(s)) => scalars.push(s),
                            Ok(v @ Value::Failed(_)) => {
                                failure.get_or_insert(v);
                            }
                            Ok(_) => return None,
                            Err(e) => return Some(Err(e)),
                        }
                    }
                    if failure.is_none() {
                        calls.push(scalars);
                    }
                    failed.push(failure);
                }
                (fun.clone(), env.foreign.clone(), body.span())
            }
            _ => return None,
        };
        let results = if calls.is_empty() && !failed.is_empty() {
            Ok(Vec::new()) // every argument failed: nothing to call
        } else {
            match call_foreign(&fun, evaluator.as_deref(), &calls, at) {
                Ok(rs) => Ok(rs.into_iter().map(Value::Scalar).collect()),
                Err(e) if self.mode == ErrorMode::Strict => Err(e),
                // a failed call is a failed value, as a single call is (`ForeignApp::push`)
                Err(e) if calls.len() == 1 => Ok(vec![Value::Failed(Arc::new(e))]),
                // a call of the batch failed (a crash, an exit, a time limit): the calls one by
                // one, so that only those that fail are failed values (an element the result
                // does not need must not fail the program)
                Err(_) => Ok(one_by_one(&fun, evaluator.as_deref(), &calls, at)),
            }
        };
        // one result per call
        Some(results.map(|rs| {
            let mut rs = rs.into_iter();
            failed
                .into_iter()
                .filter_map(|f| f.or_else(|| rs.next()))
                .collect()
        }))
    }

    /// Applies a function value to one value argument.
    pub fn apply1(&mut self, f: &Value, x: Value, span: Span) -> Result<Value, EvalError> {
        self.apply_iter(f.clone(), std::iter::once(ArgValue::Value(x)), span)
    }

    /// Applies a function value to two value arguments.
    pub fn apply2(
        &mut self,
        f: &Value,
        x: Value,
        y: Value,
        span: Span,
    ) -> Result<Value, EvalError> {
        self.apply_iter(f.clone(), [x, y].into_iter().map(ArgValue::Value), span)
    }

    /// Applies a function value to a type-level argument (which must be concrete).
    pub fn apply_type(&mut self, f: &Value, arg: TypeArg, span: Span) -> Result<Value, EvalError> {
        self.apply_iter(f.clone(), std::iter::once(ArgValue::Type(arg)), span)
    }
}

/// Whether a primitive reads the scalars, `natType` values or indices it is applied to
/// (arithmetic, comparisons, casts, math, `natAsIndex`, ...), so that a failed operand
/// fails its result. Lane-wise operations on vectors see failed lanes in their
/// semantics; `select`, `idx`, `gather`, `scatter`, `equal`, `notEqual`, `and` and `or` handle failed values
/// themselves; every other primitive only moves values.
fn strict_in_operands(prim: Prim) -> bool {
    use Prim::*;
    prim.math().is_some()
        || matches!(
            prim,
            Neg | Add
                | Sub
                | Mul
                | Div
                | Mod
                | Not
                | Gt
                | Lt
                | Le
                | Ge
                | BitAnd
                | BitOr
                | BitXor
                | BitNot
                | Shl
                | Shr
                | Cast
                | IndexAsNat
                | NatAsIndex
        )
}

/// How many arguments of an application spine are collected without allocating.
const SPINE_INLINE: usize = 8;

/// Collects the arguments of `e = head a1 ... an` (last first) into `buf`; `None`
/// when there are more than `buf` holds.
fn collect_spine<'a>(
    e: &'a Expr,
    buf: &mut [Option<Arg<'a>>; SPINE_INLINE],
) -> Option<(&'a Expr, usize)> {
    let mut head = e;
    let mut n = 0;
    loop {
        let (f, arg) = match head.kind() {
            ExprKind::App(f, a) => (f, Arg::Value(a)),
            ExprKind::DepApp(f, a) => (f, Arg::Type(a)),
            _ => return Some((head, n)),
        };
        *buf.get_mut(n)? = Some(arg);
        n += 1;
        head = f;
    }
}

/// The value of a literal.
fn literal(l: &Literal, tenv: &TypeEnv) -> Result<Value, String> {
    use super::scalar::Scalar;
    Ok(match l {
        Literal::Bool(b) => Value::bool(*b),
        Literal::Int(x, t) => Value::Scalar(Scalar::from_int(*t, *x)?),
        Literal::Float(x, t) => Value::Scalar(Scalar::from_float(*t, *x)?),
        Literal::Nat(n) => {
            let v = tenv.eval_nat(n)?;
            if v < 0 {
                return Err(format!("the natural number {n} is negative ({v})"));
            }
            Value::Nat(v)
        }
    })
}

/// Applies a `nat -> nat` function to a number.
pub(crate) fn apply_nat_to_nat(f: &NatToNat, x: i64) -> Result<i64, String> {
    match f {
        NatToNat::Lambda(v, body) => body
            .eval(&|w| (w == v).then_some(x))
            .map_err(|e| format!("applying {f} to {x}: {e}")),
        NatToNat::Var(name) => Err(format!(
            "the nat -> nat function `{name}` is unknown at run time"
        )),
    }
}
