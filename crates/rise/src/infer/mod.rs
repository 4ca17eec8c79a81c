//! Type inference: constraint-based unification over all kinds with a solver for
//! natural-number equations (ICFP'20 §3.1; the typing rules of Atkey et al. 2017).
//!
//! * [`check_program`] infers the type of every definition in order. A definition
//!   with a type annotation is checked against it (its implicit binders are rigid
//!   inside the body); one without is generalized: the sizes and data types left
//!   open become implicit parameters, so top-level definitions are polymorphic.
//! * [`instantiate_def`] prepares one definition for evaluation: the definitions it
//!   uses are inlined, its parameters are unified with the given input types, and
//!   every size left must be fixed (`--nat n=V`), so that the result is a closed,
//!   fully typed expression the interpreter (and later the compiler) can run.
//!
//! The prelude ([`PRELUDE`]) defines the multi-dimensional helpers (`map2`,
//! `slide2`, `padClamp2`, ...) as ordinary RISE definitions composed of 1-D
//! primitives (thesis §4.3.4); it is checked before every program.

mod domains;
mod elaborate;
mod local;
mod steps;
mod unify;

pub use local::{prepare_def, type_local, Prepared};

#[cfg(test)]
mod tests;

use crate::constraints::{SizeConstraint, Violation};
use crate::expr::{substitute_closed, Def, Expr, ExprKind, Program};
use crate::span::{Diagnostic, Span};
use crate::types::*;
use arith::Nat;
use elaborate::{Binding, Elaborator};
use std::collections::HashMap;
use std::sync::OnceLock;
use unify::{MetaKind, Obligation};

/// The prelude of multi-dimensional helpers, in RISE.
pub const PRELUDE: &str = include_str!("prelude.rise");

/// A definition after type checking.
#[derive(Clone, Debug)]
pub struct CheckedDef {
    /// Its name.
    pub name: Name,
    /// Its (generalized) type.
    pub ty: Type,
    /// What its sizes must satisfy beyond being naturals, over the binders of
    /// `ty` (`32 divides n`): checked where the sizes become known
    /// ([`CheckedDef::check_sizes`]).
    pub constraints: Vec<SizeConstraint>,
    /// The body, with a type on every node.
    pub body: Expr,
    /// Whether it comes from the prelude.
    pub from_prelude: bool,
}

/// A type-checked program: the prelude's and the user's definitions, in order.
#[derive(Clone, Debug)]
pub struct CheckedProgram {
    /// All definitions, prelude first.
    pub defs: Vec<CheckedDef>,
    /// The untyped definitions (used to inline them for evaluation).
    pub source: Vec<Def>,
    /// The foreign functions the program declares (their types are their signatures).
    pub foreign: Vec<std::sync::Arc<crate::foreign::ForeignFun>>,
}

impl CheckedDef {
    /// Tests the size constraints against the values of the size parameters.
    pub fn check_sizes(&self, sizes: &[(Name, i64)]) -> Result<(), Violation> {
        crate::constraints::check_all(&self.constraints, sizes)
    }
}

/// What a use of a definition needs: its scheme and its size constraints.
#[derive(Clone, Debug)]
pub(crate) struct Global {
    pub ty: Type,
    pub constraints: Vec<SizeConstraint>,
}

impl CheckedProgram {
    /// The checked definition with this name.
    pub fn def(&self, name: &str) -> Option<&CheckedDef> {
        self.defs.iter().rev().find(|d| &*d.name == name)
    }

    /// The user's definitions (not the prelude's).
    pub fn user_defs(&self) -> impl Iterator<Item = &CheckedDef> {
        self.defs.iter().filter(|d| !d.from_prelude)
    }
}

/// The prelude, parsed once.
pub fn prelude() -> &'static Program {
    static P: OnceLock<Program> = OnceLock::new();
    P.get_or_init(|| {
        crate::syntax::parse_program(PRELUDE)
            .unwrap_or_else(|e| panic!("the prelude does not parse: {e}"))
    })
}

/// Type-checks a program (after the prelude).
pub fn check_program(program: &Program) -> Result<CheckedProgram, Diagnostic> {
    crate::stack::on_big_stack(
        "type checking",
        || check_program_here(program),
        internal_error,
    )
}

fn internal_error(message: String) -> Diagnostic {
    Diagnostic::new(Span::default(), message)
}

fn check_program_here(program: &Program) -> Result<CheckedProgram, Diagnostic> {
    let mut globals: HashMap<Name, Global> = HashMap::new();
    let mut defs = Vec::new();
    let mut source = Vec::new();
    let prelude_names: Vec<Name> = prelude().defs.iter().map(|d| d.name.clone()).collect();
    if let Some(f) = program
        .foreign
        .iter()
        .find(|f| prelude_names.contains(&f.name))
    {
        return Err(Diagnostic::new(
            f.span,
            format!(
                "the foreign function `{}` has the name of a definition of the prelude",
                f.name
            ),
        )
        .with_note("a foreign function must not shadow a primitive or a definition; rename it"));
    }
    for (def, from_prelude) in prelude()
        .defs
        .iter()
        .map(|d| (d, true))
        .chain(program.defs.iter().map(|d| (d, false)))
    {
        if !from_prelude {
            if let Some(prev) = source
                .iter()
                .find(|d: &&Def| d.name == def.name && !prelude_names.contains(&d.name))
            {
                return Err(Diagnostic::new(
                    def.name_span,
                    format!("`{}` is defined twice", def.name),
                )
                .with_note(format!(
                    "the first definition is at bytes {}..{}",
                    prev.span.start, prev.span.end
                )));
            }
        }
        let checked = check_def(def, &globals).and_then(|(ty, body, obligations)| {
            let obligations = steps::at_iterate_sizes(&body, obligations);
            let constraints = settle(&def.name, &ty, obligations)?;
            Ok((ty, body, constraints))
        });
        let (ty, body, constraints) = checked.map_err(|e| {
            if from_prelude {
                Diagnostic::new(
                    Span::default(),
                    format!("internal error in the prelude: {e}"),
                )
            } else {
                e
            }
        })?;
        globals.insert(
            def.name.clone(),
            Global {
                ty: ty.clone(),
                constraints: constraints.clone(),
            },
        );
        defs.push(CheckedDef {
            name: def.name.clone(),
            ty,
            constraints,
            body,
            from_prelude,
        });
        source.push(def.clone());
    }
    Ok(CheckedProgram {
        defs,
        source,
        foreign: program.foreign.clone(),
    })
}

/// Infers (or checks) the type of one definition and generalizes it. Also
/// returns the size constraints met on the way, over the scheme's binders.
fn check_def(
    def: &Def,
    globals: &HashMap<Name, Global>,
) -> Result<(Type, Expr, Vec<Obligation>), Diagnostic> {
    let mut el = Elaborator::new(globals);
    if let Some(annot) = &def.annot {
        // The implicit binders are rigid inside the body.
        let mut t = annot;
        while let Type::DepFun {
            binder,
            implicit: true,
            body,
        } = t
        {
            el.scope
                .push((binder.name.clone(), Binding::TypeLevel(binder.kind)));
            t = body;
        }
        el.check_scoped(t, def.name_span)?;
        let body = el.check(&def.body, t)?;
        el.u.solve_deferred()?;
        report_stuck(&el)?;
        let body = zonk_expr(&el.u, &body);
        domains::check_math_domains(&body)?;
        let obligations = zonk_obligations(&el.u, &el.u);
        return Ok((annot.clone(), body, obligations));
    }
    let body = el.infer(&def.body)?;
    el.u.solve_deferred()?;
    report_stuck(&el)?;
    let ty = el.u.zonk(body.ty().expect("inferred"));
    let body = zonk_expr(&el.u, &body);
    domains::check_math_domains(&body)?;
    // Generalize: the metavariables left in the type become implicit parameters.
    let mut metas = Vec::new();
    el.u.free_metas(&ty, &mut metas);
    let mut taken: Vec<String> = Vec::new();
    unify::collect_type(&ty, &mut |n, _| taken.push(n.to_string()));
    binder_names(&ty, &mut taken);
    let mut renaming: HashMap<String, TypeArg> = HashMap::new();
    let mut binders = Vec::new();
    for (meta, kind) in &metas {
        let kind = match kind {
            MetaKind::Kind(k) => *k,
            MetaKind::Type => Kind::Data,
        };
        let name = nice_name(kind, &taken);
        taken.push(name.clone());
        let name: Name = name.into();
        renaming.insert(meta.to_string(), TypeArg::var(&name, kind));
        binders.push(Binder::new(name, kind));
    }
    let rename = |n: &str, _k: Kind| renaming.get(n).cloned();
    let obligations = zonk_obligations(&el.u, &rename);
    let ty = subst_type(&ty, &rename);
    let body = crate::expr::map_types(&body, &rename);
    let scheme = binders
        .into_iter()
        .rev()
        .fold(ty, |t, b| Type::dep_fun(b, true, t));
    Ok((scheme, body, obligations))
}

/// The size parameters of a definition's type: the binders of its dependent
/// function types along the spine (`{n: nat}`, and `(k: nat)` also after value
/// parameters), those its uses instantiate, not those of function parameters.
pub fn size_params(scheme: &Type) -> Vec<Name> {
    match scheme {
        Type::DepFun { binder, body, .. } => {
            let mut out = vec![binder.name.clone()];
            out.extend(size_params(body));
            out
        }
        Type::Fun(_, result) => size_params(result),
        Type::Data(_) | Type::Var(_) => Vec::new(),
    }
}

/// The obligations met so far, with the solutions applied, then `rename`.
fn zonk_obligations(u: &unify::Unifier, rename: &dyn TypeSubst) -> Vec<Obligation> {
    let apply = |n: &Nat| subst_nat(&u.zonk_nat(n), rename);
    u.obligations
        .iter()
        .map(|o| Obligation {
            constraint: o.constraint.map(apply),
            span: o.span,
            origin: o.origin.as_ref().map(|g| unify::Origin {
                def: g.def.clone(),
                constraint: g.constraint.clone(),
                args: g.args.iter().map(|(b, n)| (b.clone(), apply(n))).collect(),
            }),
        })
        .collect()
}

/// The size constraints of the definition `name` of type `scheme`: the
/// obligations met in its body that hold for every size are dropped, those
/// that fail for every size are type errors, and those left must be over the
/// scheme's size parameters, where they are checked when the sizes are known.
fn settle(
    name: &str,
    scheme: &Type,
    obligations: Vec<Obligation>,
) -> Result<Vec<SizeConstraint>, Diagnostic> {
    let params = size_params(scheme);
    let mut kept: Vec<SizeConstraint> = Vec::new();
    for o in obligations {
        match o.constraint.decide() {
            Some(true) => continue,
            Some(false) => return Err(violated(&o)),
            None => {}
        }
        if let Some(v) = o
            .constraint
            .free_vars()
            .into_iter()
            .find(|v| !params.iter().any(|p| **p == *v.name()))
        {
            return Err(Diagnostic::new(
                o.span,
                format!(
                    "the size constraint `{}` here is on `{}`, which is not a size parameter of `{name}`",
                    o.constraint,
                    v.name()
                ),
            )
            .with_note(
                "give the definition a type whose sizes determine it, or make the size a parameter",
            ));
        }
        kept.push(o.constraint);
    }
    Ok(crate::constraints::simplify_all(kept))
}

/// The type error for an obligation that fails whatever the sizes, with the
/// constraint of the definition it comes from, if any, and its sizes there.
fn violated(o: &Obligation) -> Diagnostic {
    let plain = Violation {
        constraint: o.constraint.clone(),
        values: Vec::new(),
        unknown: None,
        overflows: false,
    };
    let Some(g) = &o.origin else {
        return Diagnostic::new(o.span, format!("size constraint does not hold: {plain}"));
    };
    let mentioned = g.constraint.free_vars();
    let args: Vec<String> = g
        .args
        .iter()
        .filter(|(b, _)| mentioned.iter().any(|v| v.name() == &**b))
        .map(|(b, n)| format!("{b} = {n}"))
        .collect();
    Diagnostic::new(
        o.span,
        format!("size constraint of `{}` does not hold: {plain}", g.def),
    )
    .with_note(format!(
        "`{}` requires `{}` of its sizes, here with {}",
        g.def,
        g.constraint,
        args.join(", ")
    ))
}

/// Every name bound by a dependent function type anywhere in `t`.
fn binder_names(t: &Type, out: &mut Vec<String>) {
    match t {
        Type::DepFun { binder, body, .. } => {
            out.push(binder.name.to_string());
            binder_names(body, out);
        }
        Type::Fun(a, b) => {
            binder_names(a, out);
            binder_names(b, out);
        }
        Type::Data(_) | Type::Var(_) => {}
    }
}

fn nice_name(kind: Kind, taken: &[String]) -> String {
    let bases: &[&str] = match kind {
        Kind::Nat => &["n", "m", "k", "l", "o", "p", "q"],
        Kind::Data => &["t", "s", "u", "v", "w"],
        Kind::AddrSpace => &["a", "b"],
        Kind::NatToNat => &["f", "g"],
        Kind::NatToData => &["h"],
    };
    for i in 0.. {
        for b in bases {
            let name = if i == 0 {
                b.to_string()
            } else {
                format!("{b}{i}")
            };
            if !taken.contains(&name) {
                return name;
            }
        }
    }
    unreachable!("an unbounded search finds a free name")
}

/// An error for nat equations that stayed unsolved.
fn report_stuck(el: &Elaborator) -> Result<(), Diagnostic> {
    match el.u.deferred.first() {
        None => Ok(()),
        Some((a, b, span)) => Err(Diagnostic::new(
            *span,
            format!("cannot infer sizes from the equation `{a} = {b}`"),
        )
        .with_note("add a type annotation that fixes one of the sizes")),
    }
}

/// Applies the solutions to every type in a typed expression.
fn zonk_expr(u: &unify::Unifier, e: &Expr) -> Expr {
    crate::expr::map_types(e, u)
}

/// A definition prepared for evaluation: closed, monomorphic, fully typed.
#[derive(Clone, Debug)]
pub struct Instance {
    /// The definition's body with every definition it uses inlined.
    pub expr: Expr,
    /// Its type (concrete): value parameters, then the result.
    pub ty: Type,
    /// The types of the value parameters, in order.
    pub params: Vec<DataType>,
    /// The result type.
    pub result: Type,
    /// The values chosen for the definition's size parameters.
    pub nats: Vec<(Name, i64)>,
}

/// Prepares the definition `name` for evaluation on inputs of the given types,
/// with sizes fixed by `nats` (`--nat n=V`) where the inputs do not determine them.
pub fn instantiate_def(
    program: &CheckedProgram,
    name: &str,
    inputs: &[DataType],
    nats: &[(String, i64)],
) -> Result<Instance, Diagnostic> {
    crate::stack::on_big_stack(
        "type checking",
        || instantiate_def_here(program, name, inputs, nats),
        internal_error,
    )
}

/// The error for a definition `name` that `program` lacks: the closest names, and the
/// names it has.
pub(crate) fn no_definition(program: &CheckedProgram, name: &str) -> Diagnostic {
    let names: Vec<&str> = program.user_defs().map(|d| &*d.name).collect();
    let mut d = Diagnostic::new(Span::default(), format!("no definition named `{name}`"));
    if let Some(note) = diagnostics::suggest::did_you_mean(name, names.iter().copied()) {
        d = d.with_note(note);
    }
    d.with_note(format!("the program defines: {}", names.join(", ")))
}

fn instantiate_def_here(
    program: &CheckedProgram,
    name: &str,
    inputs: &[DataType],
    nats: &[(String, i64)],
) -> Result<Instance, Diagnostic> {
    let Some(def) = program.def(name) else {
        return Err(no_definition(program, name));
    };
    let (closed, annot) = inline_globals(program, name)?;
    let globals = HashMap::new();
    let mut el = Elaborator::new(&globals);
    // Instantiate the scheme's implicit binders with metavariables we can name.
    let mut params: Vec<(Name, TypeArg)> = Vec::new();
    let mut body = match annot.as_ref().filter(|t| has_binders(t)) {
        // An annotated definition's body may use its binders (`natAsIndex n i`):
        // bind them with dependent lambdas and apply those to the metavariables.
        Some(scheme) => {
            let mut applied = wrap_in_binders(&closed, scheme);
            let mut t = scheme;
            while let Type::DepFun {
                binder,
                implicit: true,
                body,
            } = t
            {
                let arg = el.u.fresh_arg(binder.kind);
                params.push((binder.name.clone(), arg.clone()));
                applied = Expr::new(ExprKind::DepApp(applied, arg), closed.span());
                t = body;
            }
            el.infer(&applied)?
        }
        None => {
            let mut t = def.ty.clone();
            while let Type::DepFun {
                binder,
                implicit: true,
                body,
            } = &t
            {
                let arg = el.u.fresh_arg(binder.kind);
                params.push((binder.name.clone(), arg.clone()));
                t = body.instantiate(binder, &arg);
            }
            el.check(&closed, &t)?
        }
    };
    let span = Span::default();
    // Explicit nat parameters of the definition take their value from `nats`.
    let mut used = vec![false; nats.len()];
    let mut ty = el.u.zonk(body.ty().expect("inferred"));
    while let Type::DepFun {
        binder,
        implicit: false,
        ..
    } = &ty
    {
        let Some(pos) = nats.iter().position(|(n, _)| **n == *binder.name) else {
            return Err(Diagnostic::new(
                span,
                format!(
                    "`{name}` takes the size parameter `{}`: give it with --nat {}=VALUE",
                    binder.name, binder.name
                ),
            ));
        };
        used[pos] = true;
        if binder.kind != Kind::Nat {
            return Err(Diagnostic::new(
                span,
                format!(
                    "`{name}` takes a parameter of kind {}; only nat parameters can be given",
                    binder.kind
                ),
            ));
        }
        let arg = TypeArg::Nat(Nat::cst(nats[pos].1));
        let applied_ty = match &ty {
            Type::DepFun { binder, body, .. } => body.instantiate(binder, &arg),
            _ => unreachable!("matched above"),
        };
        body = Expr::typed(ExprKind::DepApp(body, arg), applied_ty.clone(), span);
        ty = applied_ty;
    }
    // Value parameters meet the inputs.
    let mut param_types = Vec::new();
    let mut rest = ty.clone();
    for input in inputs {
        match el.u.shallow(&rest) {
            Type::Fun(p, r) => {
                el.u.unify(&p, &Type::Data(input.clone()), span)
                    .map_err(|e| {
                        Diagnostic::new(
                            span,
                            format!(
                                "input {} does not fit parameter {} of `{name}`: {}",
                                param_types.len() + 1,
                                param_types.len() + 1,
                                e.message
                            ),
                        )
                    })?;
                param_types.push(input.clone());
                rest = (*r).clone();
            }
            _ => {
                return Err(Diagnostic::new(
                    span,
                    format!(
                        "`{name}` takes {} value parameter(s), but {} input(s) were given",
                        param_types.len(),
                        inputs.len()
                    ),
                ))
            }
        }
    }
    if let Type::Fun(..) = el.u.shallow(&rest) {
        let mut count = inputs.len();
        let mut r = el.u.shallow(&rest);
        while let Type::Fun(_, next) = r {
            count += 1;
            r = el.u.shallow(&next);
        }
        return Err(Diagnostic::new(
            span,
            format!(
                "`{name}` takes {count} value parameter(s), but {} input(s) were given",
                inputs.len()
            ),
        ));
    }
    // Sizes given on the command line.
    let explicit: Vec<(Name, i64)> = nats
        .iter()
        .zip(&used)
        .filter(|(_, u)| **u)
        .map(|((n, v), _)| (n.as_str().into(), *v))
        .collect();
    for (i, (n, v)) in nats.iter().enumerate() {
        if used[i] {
            continue;
        }
        match params.iter().find(|(p, _)| **p == **n) {
            Some((_, TypeArg::Nat(meta))) => {
                el.u.unify_nat_at(meta, &Nat::cst(*v), span).map_err(|_| {
                    Diagnostic::new(
                        span,
                        format!(
                            "--nat {n}={v} contradicts the sizes of the inputs ({n} = {})",
                            el.u.zonk_nat(meta)
                        ),
                    )
                })?
            }
            _ => {
                let sizes: Vec<&str> = params
                    .iter()
                    .filter(|(_, a)| a.kind() == Kind::Nat)
                    .map(|(p, _)| &**p)
                    .collect();
                return Err(
                    Diagnostic::new(span, format!("`{name}` has no size parameter `{n}`"))
                        .with_note(if sizes.is_empty() {
                            format!("`{name}` has no implicit size parameters")
                        } else {
                            format!("its size parameters are: {}", sizes.join(", "))
                        }),
                );
            }
        }
    }
    // The constraints on the sizes known so far, before the solver meets them.
    check_size_constraints(def, &known_sizes(&el, &params, &explicit), false)?;
    el.u.solve_deferred()?;
    report_stuck(&el)?;
    // Every size must now be known.
    let mut nat_values = Vec::new();
    for (p, arg) in &params {
        if let TypeArg::Nat(meta) = arg {
            let v = el.u.zonk_nat(meta);
            match v.as_cst() {
                Some(c) => nat_values.push((p.clone(), c)),
                None => {
                    return Err(Diagnostic::new(
                        span,
                        format!(
                        "the size `{p}` of `{name}` is not determined by the inputs (it is `{v}`)"
                    ),
                    )
                    .with_note(format!("give it with --nat {p}=VALUE")))
                }
            }
        }
    }
    check_size_constraints(def, &known_sizes(&el, &params, &explicit), true)?;
    let body = zonk_expr(&el.u, &body);
    if let Some((span, what)) = first_open_type(&body, &el) {
        return Err(Diagnostic::new(
            span,
            format!("cannot determine the type of this expression: `{what}`"),
        )
        .with_note("a size or type here is not fixed by the inputs; add an annotation"));
    }
    domains::check_math_domains(&body)?;
    let result = el.u.zonk(&rest);
    Ok(Instance {
        ty: el.u.zonk(body.ty().expect("inferred")),
        expr: body,
        params: param_types,
        result,
        nats: nat_values,
    })
}

/// The values of the size parameters known so far: the explicit ones given, and
/// the implicit ones that the inputs and `--nat` fixed.
fn known_sizes(
    el: &Elaborator,
    params: &[(Name, TypeArg)],
    explicit: &[(Name, i64)],
) -> Vec<(Name, i64)> {
    let implicit = params.iter().filter_map(|(p, arg)| match arg {
        TypeArg::Nat(meta) => el.u.zonk_nat(meta).as_cst().map(|c| (p.clone(), c)),
        _ => None,
    });
    explicit.iter().cloned().chain(implicit).collect()
}

/// Tests the size constraints of `def` on `sizes`; unless `complete`, those
/// on a size not known yet are left for later.
fn check_size_constraints(
    def: &CheckedDef,
    sizes: &[(Name, i64)],
    complete: bool,
) -> Result<(), Diagnostic> {
    for c in &def.constraints {
        match c.check(sizes) {
            Err(v) if complete || v.unknown.is_none() => {
                return Err(Diagnostic::new(
                    Span::default(),
                    format!("size constraint of `{}` does not hold: {v}", def.name),
                )
                .with_note(format!(
                    "`{}` requires `{c}` of its sizes (see `shine check`)",
                    def.name
                )))
            }
            _ => {}
        }
    }
    Ok(())
}

/// The first node whose type still has a metavariable.
fn first_open_type(e: &Expr, el: &Elaborator) -> Option<(Span, Type)> {
    if let Some(t) = e.ty() {
        let mut open = false;
        unify::collect_type(t, &mut |n, _| open |= el.u.is_meta(n));
        if open {
            // Report the innermost offending node.
            let inner = e
                .children()
                .into_iter()
                .find_map(|c| first_open_type(c, el));
            return inner.or_else(|| Some((e.span(), t.clone())));
        }
    }
    e.children()
        .into_iter()
        .find_map(|c| first_open_type(c, el))
}

/// The body of `name` with every definition it uses inlined (definitions refer
/// only to earlier ones, so this terminates), and its annotation.
fn inline_globals(
    program: &CheckedProgram,
    name: &str,
) -> Result<(Expr, Option<Type>), Diagnostic> {
    let mut done: HashMap<Name, Expr> = HashMap::new();
    let idx = program
        .source
        .iter()
        .rposition(|d| &*d.name == name)
        .ok_or_else(|| Diagnostic::new(Span::default(), format!("no definition named `{name}`")))?;
    check_inlined_size(&program.source[..=idx])?;
    for d in &program.source[..idx] {
        let body = substitute_closed(&d.body, &done);
        let inlinable = match &d.annot {
            // Keep the annotation, with its binders bound, so that the inlined
            // body is checked (and instantiated) as the definition was.
            Some(t) => Expr::new(
                ExprKind::Annot(wrap_in_binders(&body, t), t.clone()),
                body.span(),
            ),
            None => body,
        };
        done.insert(d.name.clone(), inlinable);
    }
    let def = &program.source[idx];
    Ok((substitute_closed(&def.body, &done), def.annot.clone()))
}

/// The most nodes a definition may have once the definitions it uses are inlined: a
/// definition that uses the previous one twice doubles it (`f20` would be a million nodes,
/// which checking and rewriting would take minutes and gigabytes over).
pub const MAX_INLINED_NODES: u64 = 200_000;

/// Refuses the last of `defs` if inlining the definitions it uses makes it larger than
/// [`MAX_INLINED_NODES`] (sizes computed per definition, without inlining anything).
fn check_inlined_size(defs: &[Def]) -> Result<(), Diagnostic> {
    fn size(e: &Expr, sizes: &HashMap<Name, u64>) -> u64 {
        match e.kind() {
            ExprKind::Var(x) => sizes.get(x).copied().unwrap_or(1),
            _ => e
                .children()
                .into_iter()
                .fold(1u64, |n, c| n.saturating_add(size(c, sizes))),
        }
    }
    let mut sizes: HashMap<Name, u64> = HashMap::new();
    for d in defs {
        let n = size(&d.body, &sizes);
        sizes.insert(d.name.clone(), n);
    }
    let Some(last) = defs.last() else {
        return Ok(());
    };
    let n = sizes[&last.name];
    if n > MAX_INLINED_NODES {
        return Err(Diagnostic::new(
            last.name_span,
            format!(
                "`{}` is {n} nodes once the definitions it uses are inlined, more than the \
                 {MAX_INLINED_NODES} shine handles",
                last.name
            ),
        )
        .with_note(
            "each use of a definition inlines a copy of it: a definition that uses another \
             twice doubles its size",
        ));
    }
    Ok(())
}

/// `fun (n: nat) => ... => (body : t)` for a scheme `{n: nat} -> ... -> t`.
fn wrap_in_binders(body: &Expr, scheme: &Type) -> Expr {
    match scheme {
        Type::DepFun {
            binder,
            implicit: true,
            body: rest,
        } => Expr::new(
            ExprKind::DepLambda(binder.clone(), wrap_in_binders(body, rest)),
            body.span(),
        ),
        t => Expr::new(ExprKind::Annot(body.clone(), t.clone()), body.span()),
    }
}

fn has_binders(t: &Type) -> bool {
    matches!(t, Type::DepFun { .. })
}

/// Convenience: parse and check a program.
pub fn check_source(source: &str) -> Result<CheckedProgram, Diagnostic> {
    check_program(&crate::syntax::parse_program(source)?)
}
