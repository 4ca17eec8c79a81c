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

use super::sem::PrimCall;
use super::value::{FunKind, Function, Value};
use super::EvalError;
use crate::expr::{Arg, Expr, ExprKind, Literal};
use crate::primitives::Prim;
use crate::span::Span;
use crate::types::{subst_arg, Kind, Name, NatToNat, Type, TypeArg};
use arith::{Nat, Var};
use std::sync::Arc;

/// The deepest nesting of evaluations (expression depth plus function calls).
pub const MAX_DEPTH: usize = 20_000;

/// The value and type environments of an expression being evaluated.
#[derive(Clone, Default)]
pub(crate) struct Env {
    vals: Option<Arc<ValNode>>,
    types: TypeEnv,
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
    pub(crate) fn with_nats<'a>(nats: impl IntoIterator<Item = (&'a str, i64)>) -> Env {
        let mut env = Env::default();
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
    /// The rest of the primitive's scheme: what it expects next.
    rest: &'static Type,
    /// The type of the primitive node, if inferred.
    pub(crate) node_ty: Option<Type>,
    /// The type environment where the node was evaluated.
    pub(crate) tenv: TypeEnv,
    pub(crate) targs: Vec<TypeArg>,
    pub(crate) args: Vec<Value>,
    /// `makeArray n` takes `n` values.
    values_wanted: Option<usize>,
    pub(crate) span: Span,
}

/// What a partially applied primitive expects next.
enum Want {
    Value,
    Type(Kind),
    Nothing,
}

impl PrimApp {
    fn new(prim: Prim, node_ty: Option<Type>, tenv: TypeEnv, span: Span) -> PrimApp {
        PrimApp {
            prim,
            rest: prim.scheme(),
            node_ty,
            tenv,
            targs: Vec::new(),
            args: Vec::new(),
            values_wanted: None,
            span,
        }
    }

    fn skip_implicit(&mut self) {
        while let Type::DepFun {
            implicit: true,
            body,
            ..
        } = self.rest
        {
            self.rest = body;
        }
    }

    fn want(&mut self) -> Want {
        if let Some(n) = self.values_wanted {
            return if self.args.len() < n {
                Want::Value
            } else {
                Want::Nothing
            };
        }
        self.skip_implicit();
        match self.rest {
            Type::Fun(..) => Want::Value,
            Type::DepFun { binder, .. } => Want::Type(binder.kind),
            _ => Want::Nothing,
        }
    }

    fn saturated(&mut self) -> bool {
        matches!(self.want(), Want::Nothing)
    }

    fn push(&mut self, arg: ArgValue) -> Result<(), EvalError> {
        match (self.want(), arg) {
            (Want::Value, ArgValue::Value(v)) => {
                if self.values_wanted.is_none() {
                    if let Type::Fun(_, rest) = self.rest {
                        self.rest = rest;
                    }
                }
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
                if let Type::DepFun { body, .. } = self.rest {
                    self.rest = body;
                }
                if self.prim == Prim::MakeArray {
                    if let TypeArg::Nat(n) = &a {
                        let n = n.as_cst().and_then(|n| usize::try_from(n).ok());
                        self.values_wanted = n;
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

/// An evaluated argument of an application.
pub(crate) enum ArgValue {
    Value(Value),
    Type(TypeArg),
}

/// The interpreter state passed to the semantics of primitives: the recursion
/// depth (there is no other mutable state).
pub struct Machine {
    depth: usize,
    max_depth: usize,
}

impl Default for Machine {
    fn default() -> Self {
        Machine::new()
    }
}

impl Machine {
    /// A fresh interpreter.
    pub fn new() -> Machine {
        Machine {
            depth: 0,
            max_depth: MAX_DEPTH,
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
            ExprKind::Prim(p) => Ok(Value::Fun(Function(Arc::new(FunKind::Prim(PrimApp::new(
                *p,
                e.ty().cloned(),
                env.types.clone(),
                e.span(),
            )))))),
            ExprKind::Annot(inner, _) => self.eval(inner, env),
            ExprKind::App(..) | ExprKind::DepApp(..) => {
                let (head, spine) = e.spine();
                let mut args = Vec::with_capacity(spine.len());
                for a in spine {
                    args.push(match a {
                        Arg::Value(x) => ArgValue::Value(self.eval(x, env)?),
                        Arg::Type(t) => ArgValue::Type(
                            env.types
                                .concretize(t)
                                .map_err(|m| EvalError::new(e.span(), m))?,
                        ),
                    });
                }
                if let ExprKind::Prim(p) = head.kind() {
                    // Skip building the intermediate function value.
                    let app = PrimApp::new(*p, head.ty().cloned(), env.types.clone(), head.span());
                    return self.apply_prim(app, args, e.span());
                }
                let f = self.eval(head, env)?;
                self.apply_args(f, args, e.span())
            }
        }
    }

    /// Applies a function to arguments, one after another.
    pub(crate) fn apply_args(
        &mut self,
        f: Value,
        args: Vec<ArgValue>,
        span: Span,
    ) -> Result<Value, EvalError> {
        let mut f = f;
        let mut args = args.into_iter();
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
                FunKind::Prim(p) => {
                    // Hand the primitive as many arguments as it takes at once.
                    let app = p.clone();
                    let wanted = app.remaining_hint();
                    let mut taken = vec![arg];
                    while taken.len() < wanted {
                        match args.next() {
                            Some(a) => taken.push(a),
                            None => break,
                        }
                    }
                    self.apply_prim(app, taken, span)?
                }
            };
        }
        Ok(f)
    }

    /// Feeds arguments to a primitive; runs its semantics once saturated and applies
    /// the result to the arguments left over.
    fn apply_prim(
        &mut self,
        mut app: PrimApp,
        args: Vec<ArgValue>,
        span: Span,
    ) -> Result<Value, EvalError> {
        let mut args = args.into_iter();
        for a in args.by_ref() {
            app.push(a)?;
            if app.saturated() {
                break;
            }
        }
        let result = if app.saturated() {
            app.span = span;
            self.enter(span)?;
            let r = (app.prim.semantics())(self, &PrimCall::new(app));
            self.depth -= 1;
            r?
        } else {
            return Ok(Value::Fun(Function(Arc::new(FunKind::Prim(app)))));
        };
        let rest: Vec<ArgValue> = args.collect();
        if rest.is_empty() {
            Ok(result)
        } else {
            self.apply_args(result, rest, span)
        }
    }

    /// Applies a function value to value arguments.
    pub fn apply(&mut self, f: &Value, args: Vec<Value>, span: Span) -> Result<Value, EvalError> {
        self.apply_args(
            f.clone(),
            args.into_iter().map(ArgValue::Value).collect(),
            span,
        )
    }

    /// Applies a function value to one value argument.
    pub fn apply1(&mut self, f: &Value, x: Value, span: Span) -> Result<Value, EvalError> {
        self.apply_args(f.clone(), vec![ArgValue::Value(x)], span)
    }

    /// Applies a function value to a type-level argument (which must be concrete).
    pub fn apply_type(&mut self, f: &Value, arg: TypeArg, span: Span) -> Result<Value, EvalError> {
        self.apply_args(f.clone(), vec![ArgValue::Type(arg)], span)
    }
}

impl PrimApp {
    /// An upper bound of the number of arguments still wanted (for batching).
    fn remaining_hint(&self) -> usize {
        if let Some(n) = self.values_wanted {
            return n.saturating_sub(self.args.len());
        }
        let mut t = self.rest;
        let mut k = 0;
        loop {
            match t {
                Type::Fun(_, b) => {
                    k += 1;
                    t = b;
                }
                Type::DepFun { implicit, body, .. } => {
                    if !implicit {
                        k += 1;
                    }
                    t = body;
                }
                _ => return k.max(1),
            }
        }
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
