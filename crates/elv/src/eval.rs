//! The evaluator: checked expressions to values.
//!
//! Applying a strategy definition gives `elevate::named(name, args, body)`. Its
//! body is built at once, so that errors (a builtin refusing its arguments)
//! surface when the file is loaded, except where that would not terminate: a
//! definition applied inside its own body (directly or through others) is
//! built lazily, when the rewrite first applies it, so recursion guarded by a
//! combinator (`myRepeat(s) = try(s ; myRepeat(s))`) terminates. Integers,
//! lists and traversals are computed eagerly; the checker has made sure that
//! they do not refer to themselves.

use crate::ast::{Expr, ExprKind, Op};
use crate::check::{line_col, Target};
use crate::module::Shared;
use crate::registry::{Kind, TravRepr, Traversal, Value};
use diagnostics::{Diagnostic, Span};
use elevate::{Failure, Program, Strategy};
use std::collections::HashMap;
use std::sync::Arc;

/// The deepest evaluation (nested expressions and definition bodies) allowed.
const MAX_DEPTH: usize = 4096;
/// Beyond this depth, strategy definitions are built lazily rather than at once.
const EAGER_DEPTH: usize = 1024;
/// Beyond this depth, other definitions are not built: their bodies (at most
/// [`crate::parser::MAX_DEPTH`] deep) might not fit below [`MAX_DEPTH`].
const VALUE_DEPTH: usize = MAX_DEPTH - 2 * crate::parser::MAX_DEPTH;

type EResult<P> = Result<Value<P>, Diagnostic>;

pub(crate) struct Eval<'a, P: Program> {
    shared: &'a Arc<Shared<P>>,
    /// Which definitions' bodies are being built.
    building: Vec<bool>,
    /// How many are.
    nested: usize,
    depth: usize,
    /// Values of parameterless definitions computed so far.
    pub memo: HashMap<usize, Value<P>>,
    /// Errors of parameterless definitions met so far.
    failed: HashMap<usize, Diagnostic>,
    /// Whether the expression at the top (outside any definition) comes from
    /// the module's source; if not, errors inside definitions are reported at
    /// the call in that expression.
    top_in_module: bool,
}

/// `name(args)`, or `name` without arguments.
fn print_call<P: Program>(name: &str, args: &[Value<P>]) -> String {
    if args.is_empty() {
        return name.to_string();
    }
    let args: Vec<String> = args.iter().map(ToString::to_string).collect();
    format!("{name}({})", args.join(", "))
}

fn internal(span: Span, what: &str) -> Diagnostic {
    Diagnostic::new(
        span,
        format!("internal error in the strategy language: {what}"),
    )
}

/// A strategy that stops the rewrite with `message`.
fn abort<P: Program>(message: String) -> Strategy<P> {
    elevate::rule("buildError", move |_: &P, _: &mut elevate::Ctx<P>| {
        Err(Failure::Aborted(message.clone()))
    })
}

/// Definition `d` applied to `args`, with its body built when first applied.
/// An error while building it aborts that rewrite with the message.
pub(crate) fn lazy<P: Program>(
    shared: Arc<Shared<P>>,
    d: usize,
    args: Vec<Value<P>>,
) -> Strategy<P> {
    let name = shared
        .defs
        .get(d)
        .map_or("?", |def| def.name.as_str())
        .to_string();
    let printed = args.iter().map(ToString::to_string).collect();
    elevate::named(name.clone(), printed, move || {
        let mut ev = Eval::new(&shared, true);
        match ev.body(d, &args) {
            Ok(Value::Strategy(s)) => s,
            Ok(v) => abort(format!(
                "`{}` is {}, not a strategy",
                print_call(&name, &args),
                v.kind().article()
            )),
            Err(e) => abort(format!(
                "could not build `{}`: {} ({} of the strategy file)",
                print_call(&name, &args),
                e.message,
                line_col(&shared.source, e.span)
            )),
        }
    })
}

impl<'a, P: Program> Eval<'a, P> {
    pub(crate) fn new(shared: &'a Arc<Shared<P>>, top_in_module: bool) -> Eval<'a, P> {
        Eval {
            shared,
            building: vec![false; shared.defs.len()],
            nested: 0,
            depth: 0,
            memo: HashMap::new(),
            failed: HashMap::new(),
            top_in_module,
        }
    }

    /// The value of a parameterless definition, with errors at their own spans.
    pub(crate) fn top(&mut self, d: usize) -> EResult<P> {
        let span = self
            .shared
            .defs
            .get(d)
            .map_or_else(Span::default, |def| def.name_span);
        self.call_def(d, Vec::new(), span, Some(d))
    }

    /// Evaluates `e`; `env` holds the values of the parameters of definition `cur`.
    pub(crate) fn eval(&mut self, e: &Expr, env: &[Value<P>], cur: Option<usize>) -> EResult<P> {
        if self.depth >= MAX_DEPTH {
            return Err(Diagnostic::new(
                e.span,
                format!("strategy nested too deeply to build (more than {MAX_DEPTH} levels)"),
            ));
        }
        self.depth += 1;
        let r = crate::with_stack(|| self.eval_inner(e, env, cur));
        self.depth -= 1;
        if let Ok(Value::Strategy(s)) = &r {
            let origin = crate::Origin {
                span: e.span,
                in_expression: cur.is_none() && !self.top_in_module,
            };
            self.shared.origins.record(s, origin);
        }
        r
    }

    fn param(&self, cur: Option<usize>, name: &str) -> Option<usize> {
        self.shared.defs.get(cur?)?.param(name)
    }

    fn eval_inner(&mut self, e: &Expr, env: &[Value<P>], cur: Option<usize>) -> EResult<P> {
        match &e.kind {
            ExprKind::Int(n) => Ok(Value::Int(*n)),
            ExprKind::List(items) => {
                let mut values = Vec::with_capacity(items.len());
                for item in items {
                    values.push(self.eval(item, env, cur)?);
                }
                Ok(Value::List(values))
            }
            ExprKind::Name(name) => match self.param(cur, name) {
                Some(i) => env
                    .get(i)
                    .cloned()
                    .ok_or_else(|| internal(e.span, "missing parameter value")),
                None => self.apply(name, &[], e.span, env, cur),
            },
            ExprKind::Call { callee, args } => {
                let traversal = match callee.as_name() {
                    Some(name) if self.param(cur, name).is_none() => {
                        return self.apply(name, args, e.span, env, cur)
                    }
                    _ => self.eval(callee, env, cur)?,
                };
                let [arg] = args.as_slice() else {
                    return Err(internal(e.span, "a traversal applied to several arguments"));
                };
                let s = self.eval(arg, env, cur)?;
                self.apply_traversal(&traversal, s, e.span, cur)
            }
            ExprKind::Binary {
                op, left, right, ..
            } => {
                let l = self.eval(left, env, cur)?;
                let r = self.eval(right, env, cur)?;
                if *op == Op::At {
                    return self.apply_traversal(&r, l, e.span, cur);
                }
                let (Value::Strategy(l), Value::Strategy(r)) = (l, r) else {
                    return Err(internal(e.span, "an operand is not a strategy"));
                };
                let s = match op {
                    Op::Seq => elevate::seq(l, r),
                    Op::Choice => elevate::lchoice(l, r),
                    _ => match self.shared.registry.normal_form() {
                        Some((_, nf)) => elevate::seq(l, elevate::seq(nf.clone(), r)),
                        None => return Err(internal(e.span, "`;;` without a normal form")),
                    },
                };
                Ok(Value::Strategy(s))
            }
        }
    }

    /// The definition or builtin `name` applied to `args` (a bare name: none).
    fn apply(
        &mut self,
        name: &str,
        args: &[Expr],
        span: Span,
        env: &[Value<P>],
        cur: Option<usize>,
    ) -> EResult<P> {
        let scope = self.shared.scope();
        let Some(target) = scope.resolve(name) else {
            return Err(internal(span, &format!("unknown name `{name}`")));
        };
        let params: Vec<Option<Kind>> = match &target {
            Target::Def(d) => self
                .shared
                .sigs
                .get(*d)
                .map(|s| s.params.clone())
                .unwrap_or_default(),
            Target::Builtin(b) => b.params.iter().map(|&k| Some(k)).collect(),
        };
        let mut values = Vec::with_capacity(args.len());
        for (i, a) in args.iter().enumerate() {
            let kind = params.get(i).copied().flatten();
            let v = match a.as_name() {
                // A name in a symbol position is the symbol itself.
                Some(sym) if kind == Some(Kind::Symbol) && self.param(cur, sym).is_none() => {
                    Value::Symbol(sym.to_string())
                }
                _ => self.eval(a, env, cur)?,
            };
            values.push(v);
        }
        let (n, m) = (params.len(), values.len());
        if m == n {
            return self.full(&target, values, span, cur);
        }
        if m + 1 == n {
            let repr = match target {
                Target::Def(def) => TravRepr::User {
                    module: self.shared.clone(),
                    def,
                    args: values,
                },
                Target::Builtin(b) => TravRepr::Builtin {
                    builtin: b.clone(),
                    args: values,
                },
            };
            let args = match &repr {
                TravRepr::User { args, .. } | TravRepr::Builtin { args, .. } => args,
            };
            let name = print_call(name, args);
            return Ok(Value::Traversal(Traversal { name, repr }));
        }
        if m == n + 1 {
            if let Some(s) = values.pop() {
                let t = self.full(&target, values, span, cur)?;
                return self.apply_traversal(&t, s, span, cur);
            }
        }
        Err(internal(
            span,
            &format!("`{name}` applied to {m} arguments"),
        ))
    }

    /// A traversal value applied to a strategy value.
    fn apply_traversal(
        &mut self,
        t: &Value<P>,
        s: Value<P>,
        span: Span,
        cur: Option<usize>,
    ) -> EResult<P> {
        let Value::Traversal(t) = t else {
            return Err(internal(span, "applying something that is not a traversal"));
        };
        match &t.repr {
            TravRepr::Builtin { builtin, args } => {
                let mut all = args.clone();
                all.push(s);
                self.full(&Target::Builtin(builtin), all, span, cur)
            }
            TravRepr::User { module, def, args } => {
                let mut all = args.clone();
                all.push(s);
                if Arc::ptr_eq(module, self.shared) {
                    self.call_def(*def, all, span, cur)
                } else {
                    Ok(Value::Strategy(lazy(module.clone(), *def, all)))
                }
            }
        }
    }

    /// A definition or builtin applied to all its arguments.
    fn full(
        &mut self,
        target: &Target<'_, P>,
        args: Vec<Value<P>>,
        span: Span,
        cur: Option<usize>,
    ) -> EResult<P> {
        let b = match target {
            Target::Def(d) => return self.call_def(*d, args, span, cur),
            Target::Builtin(b) => b,
        };
        let kinds_ok =
            args.len() == b.params.len() && args.iter().zip(&b.params).all(|(a, &k)| a.kind() == k);
        if !kinds_ok {
            return Err(internal(
                span,
                &format!("ill-kinded arguments for `{}`", b.name),
            ));
        }
        match (b.run)(&args) {
            Ok(Value::Strategy(s)) => Ok(Value::Strategy(s)),
            Ok(other) => Err(Diagnostic::new(span, b.not_a_strategy(&other))),
            Err(message) => {
                Err(Diagnostic::new(span, message)
                    .with_label(format!("in this use of `{}`", b.name)))
            }
        }
    }

    /// Definition `d` applied to `args` at `span` (inside definition `cur`).
    /// Parameterless definitions are built once, successfully or not.
    fn call_def(
        &mut self,
        d: usize,
        args: Vec<Value<P>>,
        span: Span,
        cur: Option<usize>,
    ) -> EResult<P> {
        if !args.is_empty() {
            return self.build(d, args, span, cur);
        }
        if let Some(v) = self.memo.get(&d) {
            return Ok(v.clone());
        }
        if let Some(e) = self.failed.get(&d) {
            return Err(e.clone());
        }
        let r = self.build(d, args, span, cur);
        match &r {
            Ok(v) => {
                self.memo.insert(d, v.clone());
            }
            Err(e) => {
                self.failed.insert(d, e.clone());
            }
        }
        r
    }

    fn build(
        &mut self,
        d: usize,
        args: Vec<Value<P>>,
        span: Span,
        cur: Option<usize>,
    ) -> EResult<P> {
        let shared = self.shared;
        let (Some(def), Some(sig)) = (shared.defs.get(d), shared.sigs.get(d)) else {
            return Err(internal(span, "unknown definition"));
        };
        let building = self.building.get(d).copied().unwrap_or(false);
        let value = if sig.result == Some(Kind::Strategy) {
            if building || self.depth >= EAGER_DEPTH {
                Value::Strategy(lazy(shared.clone(), d, args.clone()))
            } else {
                let body = match self.body(d, &args) {
                    Ok(Value::Strategy(s)) => s,
                    Ok(_) => return Err(internal(span, "a strategy definition made no strategy")),
                    Err(e) => return Err(self.boundary(d, &args, span, cur, e)),
                };
                let printed = args.iter().map(ToString::to_string).collect();
                Value::Strategy(elevate::named(def.name.clone(), printed, move || {
                    body.clone()
                }))
            }
        } else {
            if building {
                return Err(Diagnostic::new(
                    span,
                    format!(
                        "`{}` refers to itself, but only strategies may be recursive",
                        def.name
                    ),
                ));
            }
            if self.depth >= VALUE_DEPTH {
                return Err(Diagnostic::new(
                    span,
                    format!(
                        "definitions nested too deeply: `{}` is used inside {} others",
                        def.name, self.nested
                    ),
                ));
            }
            match self.body(d, &args) {
                Ok(v) => v,
                Err(e) => return Err(self.boundary(d, &args, span, cur, e)),
            }
        };
        Ok(value)
    }

    /// The body of definition `d` with its parameters bound to `args`.
    fn body(&mut self, d: usize, args: &[Value<P>]) -> EResult<P> {
        let shared = self.shared;
        let Some(def) = shared.defs.get(d) else {
            return Err(internal(Span::default(), "unknown definition"));
        };
        let was = std::mem::replace(&mut self.building[d], true);
        self.nested += 1;
        self.depth += 1;
        let r = self.eval(&def.body, args, Some(d));
        self.depth -= 1;
        self.nested -= 1;
        self.building[d] = was;
        r
    }

    /// An error `e` inside the body of `d`, applied to `args` at `span`: inside
    /// the module it stays where it is, with a note naming the call; from an
    /// expression given separately it moves to the call.
    fn boundary(
        &self,
        d: usize,
        args: &[Value<P>],
        span: Span,
        cur: Option<usize>,
        e: Diagnostic,
    ) -> Diagnostic {
        let name = self.shared.defs.get(d).map_or("?", |def| def.name.as_str());
        let call = print_call(name, args);
        let source = &self.shared.source;
        if cur == Some(d) && args.is_empty() {
            // The definition itself, evaluated at the top.
            return e;
        }
        if cur.is_some() || self.top_in_module {
            // The innermost calls explain the error; a long chain would bury it.
            let chain = e
                .notes
                .iter()
                .filter(|n| n.starts_with("while building"))
                .count();
            return match chain {
                0..=2 => e.with_note(format!(
                    "while building `{call}` ({})",
                    line_col(source, span)
                )),
                3 => e.with_note("while building ... (further definitions)"),
                _ => e,
            };
        }
        let mut moved = Diagnostic::new(span, e.message.clone())
            .with_label(format!("while building `{call}`"))
            .with_note(format!(
                "the error is in the definition of `{name}`, at {} of the strategy file",
                line_col(source, e.span)
            ));
        moved.notes.extend(e.notes);
        moved
    }
}
