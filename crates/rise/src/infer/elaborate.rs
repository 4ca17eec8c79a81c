//! Inference for expressions, with elaboration.
//!
//! Besides computing types, inference makes the program explicit where the
//! surface syntax is not: an argument of an explicit dependent parameter
//! (`split 32`, `toMem private`, `reorder (fun i => ...)`) is turned from an
//! expression into a type-level value (`DepApp`); a nat variable used as a value
//! becomes a `natType` literal. Every node of the result carries its type.
//! Implicit parameters (`{n: nat}`) are instantiated with fresh metavariables at
//! every use of a primitive or definition.

use super::unify::{MetaKind, Origin, Unifier};
use super::Global;
use crate::expr::{Expr, ExprKind, Literal};
use crate::primitives::{MathFn, Prim};
use crate::span::{Diagnostic, Span};
use crate::types::*;
use arith::{Nat, Var};
use std::collections::HashMap;

/// What a name in scope stands for.
#[derive(Clone, Debug)]
pub(crate) enum Binding {
    /// A value of this type.
    Value(Type),
    /// A rigid type-level variable of this kind.
    TypeLevel(Kind),
}

/// The inference context for one definition.
pub(crate) struct Elaborator<'g> {
    pub u: Unifier,
    /// Type schemes (and size constraints) of the definitions checked so far.
    pub globals: &'g HashMap<Name, Global>,
    /// Names in scope, innermost last.
    pub scope: Vec<(Name, Binding)>,
    /// Whether already typed nodes are taken as they are (for rewriting).
    pub keep_typed: bool,
    /// The typed nodes taken as they are.
    pub kept: super::local::Kept,
}

type R<T> = Result<T, Diagnostic>;

impl<'g> Elaborator<'g> {
    pub fn new(globals: &'g HashMap<Name, Global>) -> Self {
        Elaborator {
            u: Unifier::default(),
            globals,
            scope: Vec::new(),
            keep_typed: false,
            kept: Default::default(),
        }
    }

    fn lookup(&self, name: &str) -> Option<&Binding> {
        self.scope
            .iter()
            .rev()
            .find(|(n, _)| &**n == name)
            .map(|(_, b)| b)
    }

    /// Replaces every implicit binder in the leading chain of dependent binders
    /// by a fresh metavariable; explicit binders stay.
    pub fn instantiate(&mut self, t: &Type) -> Type {
        match t {
            Type::DepFun {
                binder,
                implicit: true,
                body,
            } => {
                let arg = self.u.fresh_arg(binder.kind);
                let body = body.instantiate(binder, &arg);
                self.instantiate(&body)
            }
            Type::DepFun {
                binder,
                implicit: false,
                body,
            } => Type::dep_fun(binder.clone(), false, self.instantiate(body)),
            _ => t.clone(),
        }
    }

    /// Applies a typed expression to fresh metavariables for each implicit binder
    /// its type starts with: `DepApp(DepApp(e, ?n), ?t)`. (Primitives are not
    /// wrapped: their implicit arguments live in their node's type, see
    /// [`Elaborator::instantiate`].)
    pub fn instantiate_expr(&mut self, mut e: Expr) -> Expr {
        loop {
            let t = self.u.zonk(e.ty().expect("typed"));
            let Type::DepFun {
                binder,
                implicit: true,
                body,
            } = &t
            else {
                return e;
            };
            // A binder already renamed to a metavariable (see `use_global`) is
            // instantiated with that metavariable.
            let arg = if self.u.is_meta(&binder.name) {
                TypeArg::var(&binder.name, binder.kind)
            } else {
                self.u.fresh_arg(binder.kind)
            };
            let ty = body.instantiate(binder, &arg);
            let span = e.span();
            e = Expr::typed(ExprKind::DepApp(e, arg), ty, span);
        }
    }

    /// Infers the type of `e` and checks it against `expected`.
    pub fn check(&mut self, e: &Expr, expected: &Type) -> R<Expr> {
        // Propagate expected parameter types into unannotated lambdas.
        let already_typed = self.keep_typed && e.ty().is_some();
        if let (ExprKind::Lambda(x, None, body), Type::Fun(p, r), false) =
            (e.kind(), &self.u.shallow(expected), already_typed)
        {
            self.scope.push((x.clone(), Binding::Value((**p).clone())));
            let body = self.check(body, r);
            self.scope.pop();
            let body = body?;
            return Ok(Expr::typed(
                ExprKind::Lambda(x.clone(), None, body),
                Type::Fun(p.clone(), r.clone()),
                e.span(),
            ));
        }
        // Likewise check a dependent lambda against an expected dependent
        // function type, under the lambda's own binder: sizes solved in its
        // body (an unannotated parameter's) then mention that binder, not a
        // variable of the unifier that is bound nowhere.
        if let (
            ExprKind::DepLambda(b, body),
            Type::DepFun {
                binder: y,
                body: want,
                ..
            },
            false,
        ) = (e.kind(), &self.u.zonk(expected), already_typed)
        {
            let mut free = Vec::new();
            super::unify::collect_type(want, &mut |n, _| free.push(n.to_string()));
            if b.kind == y.kind && (b.name == y.name || !free.iter().any(|n| **n == *b.name)) {
                let want = want.instantiate(y, &TypeArg::var(&b.name, b.kind));
                self.scope
                    .push((b.name.clone(), Binding::TypeLevel(b.kind)));
                let body = self.check(body, &want);
                self.scope.pop();
                let body = body?;
                let t = Type::dep_fun(b.clone(), false, body.ty().expect("inferred").clone());
                return Ok(Expr::typed(
                    ExprKind::DepLambda(b.clone(), body),
                    t,
                    e.span(),
                ));
            }
        }
        let typed = self.infer(e)?;
        self.u
            .unify(expected, typed.ty().expect("inferred"), e.span())?;
        Ok(typed)
    }

    /// Infers the type of `e`, returning the typed, elaborated expression.
    pub fn infer(&mut self, e: &Expr) -> R<Expr> {
        if self.keep_typed && e.ty().is_some() {
            self.kept.insert(e.addr());
            return Ok(e.clone());
        }
        let span = e.span();
        match e.kind() {
            ExprKind::Lit(l) => {
                check_literal_range(l, span)?;
                Ok(Expr::typed(e.kind().clone(), literal_type(l), span))
            }
            ExprKind::Var(x) => self.infer_var(x, span),
            ExprKind::Prim(p) => {
                let t = self.instantiate(p.scheme());
                Ok(Expr::typed(e.kind().clone(), t, span))
            }
            ExprKind::Foreign(f) => Ok(Expr::typed(e.kind().clone(), f.ty(), span)),
            ExprKind::Lambda(x, annot, body) => {
                let param = match annot {
                    Some(t) => {
                        self.check_scoped(t, span)?;
                        t.clone()
                    }
                    None => self.u.fresh_type(),
                };
                self.scope.push((x.clone(), Binding::Value(param.clone())));
                let body = self.infer(body);
                self.scope.pop();
                let body = body?;
                let t = Type::fun(param, body.ty().expect("inferred").clone());
                Ok(Expr::typed(
                    ExprKind::Lambda(x.clone(), annot.clone(), body),
                    t,
                    span,
                ))
            }
            ExprKind::DepLambda(b, body) => {
                self.scope
                    .push((b.name.clone(), Binding::TypeLevel(b.kind)));
                let body = self.infer(body);
                self.scope.pop();
                let body = body?;
                let t = Type::dep_fun(b.clone(), false, body.ty().expect("inferred").clone());
                Ok(Expr::typed(ExprKind::DepLambda(b.clone(), body), t, span))
            }
            ExprKind::App(f, a) => {
                let f = self.infer(f)?;
                self.apply(f, a, span)
            }
            ExprKind::DepApp(f, arg) => {
                let f = self.infer(f)?;
                self.dep_apply(f, arg.clone(), span)
            }
            ExprKind::Annot(inner, t) => {
                self.check_scoped(t, span)?;
                // An unsuffixed integer literal ascribed `natType` is a natural.
                if let (
                    ExprKind::Lit(Literal::Int(v, ScalarType::Int)),
                    Type::Data(DataType::NatType),
                ) = (inner.kind(), t)
                {
                    let lit = ExprKind::Lit(Literal::Nat(Nat::cst(*v)));
                    return Ok(Expr::typed(lit, t.clone(), span));
                }
                let inner = self.check(inner, t)?;
                let annotated = Expr::typed(ExprKind::Annot(inner, t.clone()), t.clone(), span);
                Ok(self.instantiate_expr(annotated))
            }
        }
    }

    fn infer_var(&mut self, x: &Name, span: Span) -> R<Expr> {
        match self.lookup(x) {
            Some(Binding::Value(t)) => Ok(Expr::typed(ExprKind::Var(x.clone()), t.clone(), span)),
            Some(Binding::TypeLevel(Kind::Nat)) => {
                let n = Nat::var(&Var::new(x.clone()));
                Ok(Expr::typed(
                    ExprKind::Lit(Literal::Nat(n)),
                    Type::Data(DataType::NatType),
                    span,
                ))
            }
            Some(Binding::TypeLevel(k)) => Err(Diagnostic::new(
                span,
                format!("`{x}` is a type-level variable of kind {k}, not a value"),
            )),
            None => match self.globals.get(x) {
                Some(global) => Ok(self.use_global(x, global, span)),
                None => Err(unknown_name(x, span)),
            },
        }
    }

    /// A use of the definition `x`: its scheme instantiated, and its size
    /// constraints required of the sizes it is instantiated with. For that, the
    /// scheme's binders are renamed to metavariables, which the implicit
    /// arguments (`instantiate_expr`) and the explicit ones (`dep_apply`) solve.
    fn use_global(&mut self, x: &Name, global: &Global, span: Span) -> Expr {
        let mut args = Vec::new();
        let scheme = if global.constraints.is_empty() {
            global.ty.clone()
        } else {
            self.binders_to_metas(&global.ty, &mut args)
        };
        let by_meta: HashMap<Var, Nat> = args
            .iter()
            .map(|(b, m)| (Var::new(b.clone()), m.clone()))
            .collect();
        for constraint in &global.constraints {
            let instance = constraint.map(|n| n.substitute_all(&by_meta));
            let origin = Origin {
                def: x.clone(),
                constraint: constraint.clone(),
                args: args.clone(),
            };
            self.u.require(instance, span, Some(origin));
        }
        let var = Expr::typed(ExprKind::Var(x.clone()), scheme, span);
        self.instantiate_expr(var)
    }

    /// `t` with every dependent binder along its spine renamed to a fresh
    /// metavariable; the nat binders and their metavariables go to `args`.
    fn binders_to_metas(&mut self, t: &Type, args: &mut Vec<(Name, Nat)>) -> Type {
        match t {
            Type::DepFun {
                binder,
                implicit,
                body,
            } => {
                let meta = self.u.fresh(MetaKind::Kind(binder.kind));
                let body = body.instantiate(binder, &TypeArg::var(&meta, binder.kind));
                if binder.kind == Kind::Nat {
                    args.push((binder.name.clone(), Nat::var(&Var::new(meta.clone()))));
                }
                let body = self.binders_to_metas(&body, args);
                Type::dep_fun(Binder::new(meta, binder.kind), *implicit, body)
            }
            Type::Fun(a, b) => Type::fun((**a).clone(), self.binders_to_metas(b, args)),
            Type::Data(_) | Type::Var(_) => t.clone(),
        }
    }

    /// Elaborates the application of the typed `f` to the (untyped) argument `a`.
    fn apply(&mut self, f: Expr, a: &Expr, span: Span) -> R<Expr> {
        let tf = self.u.shallow(f.ty().expect("inferred"));
        match &tf {
            Type::DepFun {
                binder,
                implicit: false,
                ..
            } => {
                let arg = self.type_level_arg(a, binder.kind)?;
                self.dep_apply(f, arg, span)
            }
            Type::Fun(param, result) => {
                let a = self
                    .check(a, param)
                    .map_err(|d| shift_of_functions_hint(&f, d))?;
                if let Some(need) = crate::constraints::of_application(&f, param, &a) {
                    self.u.require(need, span, None);
                }
                Ok(Expr::typed(ExprKind::App(f, a), (**result).clone(), span))
            }
            Type::Var(_) => {
                let a = self.infer(a)?;
                let result = self.u.fresh_type();
                let want = Type::fun(a.ty().expect("inferred").clone(), result.clone());
                self.u.unify(&want, &tf, f.span())?;
                Ok(Expr::typed(ExprKind::App(f, a), result, span))
            }
            other => Err(Diagnostic::new(
                f.span(),
                format!(
                    "this is not a function: it has type `{}`",
                    self.u.zonk(other)
                ),
            )
            .with_label("applied to an argument here")),
        }
    }

    /// Elaborates the dependent application of `f` to a type-level value.
    fn dep_apply(&mut self, f: Expr, arg: TypeArg, span: Span) -> R<Expr> {
        // Zonk fully: solutions found inside a dependent lambda may mention its
        // binder, which the instantiation below must replace.
        let tf = self.u.zonk(f.ty().expect("inferred"));
        let Type::DepFun {
            binder,
            implicit: false,
            body,
        } = &tf
        else {
            return Err(Diagnostic::new(
                span,
                format!(
                    "this takes no type-level argument here: it has type `{}`",
                    self.u.zonk(&tf)
                ),
            ));
        };
        if arg.kind() != binder.kind {
            return Err(Diagnostic::new(
                span,
                format!(
                    "expected a {} argument, found a {}",
                    binder.kind,
                    arg.kind()
                ),
            ));
        }
        // A definition's binder renamed by `use_global` takes the argument's value.
        if let (true, TypeArg::Nat(n)) = (self.u.is_meta(&binder.name), &arg) {
            let meta = Nat::var(&Var::new(binder.name.clone()));
            self.u.unify_nat_at(&meta, n, span)?;
        }
        let head_prim = f.spine().0.as_prim();
        let t = body.instantiate(binder, &arg);
        if head_prim.is_none() {
            let applied = Expr::typed(ExprKind::DepApp(f, arg), t, span);
            return Ok(self.instantiate_expr(applied));
        }
        let t = match f.as_prim() {
            Some(p) if p.takes_n_values() => self.make_array_type(p, &arg, &t, span)?,
            _ => self.instantiate(&t),
        };
        Ok(Expr::typed(ExprKind::DepApp(f, arg), t, span))
    }

    /// `makeArray n : {t: data} -> t -> ... (n times) -> n.t`, and
    /// `makeVector n : {t: data} -> t -> ... (n times) -> vec[t, n]`.
    fn make_array_type(
        &mut self,
        prim: Prim,
        n: &TypeArg,
        table_type: &Type,
        span: Span,
    ) -> R<Type> {
        let count = match n {
            TypeArg::Nat(n) => self.u.zonk_nat(n).as_cst(),
            _ => None,
        };
        let Some(count) = count.filter(|c| (1..=4096).contains(c)) else {
            return Err(Diagnostic::new(
                span,
                format!(
                    "{} needs a constant number of elements between 1 and 4096",
                    prim.name()
                ),
            ));
        };
        // The element type the primitive's node was instantiated with (`t -> n.t`).
        let Type::Fun(elem, _) = table_type else {
            unreachable!("the table's schemes of makeArray and makeVector are `(n: nat) -> {{t: data}} -> t -> ...`")
        };
        let Type::Data(t) = &**elem else {
            unreachable!("the element of makeArray and makeVector is a data type")
        };
        let mut ty = Type::Data(if prim == Prim::MakeVector {
            DataType::vector(t.clone(), count)
        } else {
            DataType::array(count, t.clone())
        });
        for _ in 0..count {
            ty = Type::fun(Type::Data(t.clone()), ty);
        }
        Ok(ty)
    }

    /// Reads an expression as a type-level value of `kind` (the argument of an
    /// explicit dependent parameter).
    fn type_level_arg(&mut self, a: &Expr, kind: Kind) -> R<TypeArg> {
        match kind {
            Kind::Nat => Ok(TypeArg::Nat(self.expr_to_nat(a)?)),
            Kind::AddrSpace => match a.kind() {
                ExprKind::Var(x) => match AddrSpace::from_name(x) {
                    Some(s) => Ok(TypeArg::AddrSpace(s)),
                    None => match self.lookup(x) {
                        Some(Binding::TypeLevel(Kind::AddrSpace)) => {
                            Ok(TypeArg::AddrSpace(AddrSpace::Var(x.clone())))
                        }
                        _ => Err(expected_arg(
                            a,
                            "an address space (global, local, private, constant)",
                        )),
                    },
                },
                _ => Err(expected_arg(
                    a,
                    "an address space (global, local, private, constant)",
                )),
            },
            Kind::NatToNat => match a.kind() {
                ExprKind::Lambda(x, _, body)
                | ExprKind::DepLambda(Binder { name: x, .. }, body) => {
                    self.scope.push((x.clone(), Binding::TypeLevel(Kind::Nat)));
                    let body = self.expr_to_nat(body);
                    self.scope.pop();
                    Ok(TypeArg::NatToNat(NatToNat::Lambda(
                        Var::new(x.clone()),
                        body?,
                    )))
                }
                ExprKind::Var(x)
                    if matches!(self.lookup(x), Some(Binding::TypeLevel(Kind::NatToNat))) =>
                {
                    Ok(TypeArg::NatToNat(NatToNat::Var(x.clone())))
                }
                _ => Err(expected_arg(
                    a,
                    "a function on naturals, such as `fun i => i * 2`",
                )),
            },
            Kind::Data => match a.kind() {
                ExprKind::Var(x) => {
                    if let Some(s) = ScalarType::from_name(x) {
                        return Ok(TypeArg::Data(DataType::Scalar(s)));
                    }
                    match self.lookup(x) {
                        Some(Binding::TypeLevel(Kind::Data)) => {
                            Ok(TypeArg::Data(DataType::Var(x.clone())))
                        }
                        _ => Err(expected_arg(a, "a data type")),
                    }
                }
                _ => Err(expected_arg(
                    a,
                    "a data type (a scalar type name or a data variable)",
                )),
            },
            Kind::NatToData => Err(Diagnostic::new(
                a.span(),
                "arguments of kind `nat -> data` cannot be written in the surface syntax yet",
            )),
        }
    }

    /// Reads an expression as a natural number: literals, nat variables in scope,
    /// `+ - * / %` and `^` (bitwise exclusive or, `xor(a, b)` in types).
    fn expr_to_nat(&mut self, a: &Expr) -> R<Nat> {
        match a.kind() {
            ExprKind::Lit(Literal::Int(v, _)) if *v >= 0 => Ok(Nat::cst(*v)),
            ExprKind::Lit(Literal::Nat(n)) => Ok(n.clone()),
            ExprKind::Var(x) => match self.lookup(x) {
                Some(Binding::TypeLevel(Kind::Nat)) => Ok(Nat::var(&Var::new(x.clone()))),
                _ => Err(expected_arg(
                    a,
                    "a natural number (a literal or a nat variable)",
                )),
            },
            ExprKind::Annot(inner, _) => self.expr_to_nat(inner),
            ExprKind::App(f, rhs) => match f.kind() {
                ExprKind::App(op, lhs) => {
                    let op = op.as_prim();
                    let (l, r) = (self.expr_to_nat(lhs)?, self.expr_to_nat(rhs)?);
                    match op {
                        Some(Prim::Add) => Ok(l + r),
                        Some(Prim::Sub) => Ok(l - r),
                        Some(Prim::Mul) => Ok(l * r),
                        Some(Prim::Div) => Ok(l.floor_div(&r)),
                        Some(Prim::Mod) => Ok(l.modulo(&r)),
                        Some(Prim::BitXor) => Ok(l.xor(&r)),
                        _ => Err(expected_arg(a, "a natural number")),
                    }
                }
                _ => Err(expected_arg(a, "a natural number")),
            },
            _ => Err(expected_arg(a, "a natural number")),
        }
    }

    /// Checks that every type-level variable of an annotation is in scope.
    pub fn check_scoped(&self, t: &Type, span: Span) -> R<()> {
        let mut missing: Option<String> = None;
        super::unify::collect_type(t, &mut |name, kind| {
            if missing.is_some() || self.u.is_meta(name) {
                return;
            }
            let ok = match self.lookup(name) {
                Some(Binding::TypeLevel(k)) => match kind {
                    MetaKind::Kind(want) => *k == want,
                    MetaKind::Type => *k == Kind::Data,
                },
                _ => false,
            };
            if !ok {
                missing = Some(name.to_string());
            }
        });
        if let Some(bad) = invalid_size(t) {
            return Err(Diagnostic::new(
                span,
                format!("`{bad}` is not a valid array size in this type annotation"),
            )
            .with_note("sizes are natural numbers: non-negative, with no division by zero"));
        }
        match missing {
            None => Ok(()),
            Some(name) => Err(Diagnostic::new(
                span,
                format!("unknown type-level variable `{name}` in this type annotation"),
            )
            .with_note(
                "bind it in the definition's type, e.g. `def f : {n: nat} -> n.f32 -> f32 = ...`",
            )),
        }
    }
}

/// A size without variables that does not evaluate to a natural number.
fn invalid_size(t: &Type) -> Option<Nat> {
    fn nat(n: &Nat) -> Option<Nat> {
        let bad = n.free_vars().is_empty() && !matches!(n.eval(&|_| None), Ok(c) if c >= 0);
        bad.then(|| n.clone())
    }
    fn data(d: &DataType) -> Option<Nat> {
        match d {
            DataType::Index(n) => nat(n),
            DataType::Array(n, t) | DataType::Vector(n, t) => nat(n).or_else(|| data(t)),
            DataType::Pair(a, b) => data(a).or_else(|| data(b)),
            DataType::NatToDataApp(_, n) => nat(n),
            DataType::Scalar(_) | DataType::NatType | DataType::Var(_) => None,
        }
    }
    match t {
        Type::Data(d) => data(d),
        Type::Fun(a, b) => invalid_size(a).or_else(|| invalid_size(b)),
        Type::DepFun { body, .. } => invalid_size(body),
        Type::Var(_) => None,
    }
}

/// Integer literals must fit their type (`int` is 32 bits). Unsuffixed
/// literals are also read as naturals (`split 32`); only their use as a value
/// is checked here.
fn check_literal_range(l: &Literal, span: Span) -> R<()> {
    let Literal::Int(v, t) = l else {
        return Ok(());
    };
    let Some((lo, hi)) = t.int_range() else {
        return Ok(());
    };
    if (lo..=hi).contains(&i128::from(*v)) {
        Ok(())
    } else {
        Err(Diagnostic::new(
            span,
            format!(
                "the literal {v} does not fit in {} ({lo} to {hi})",
                t.name()
            ),
        ))
    }
}

fn literal_type(l: &Literal) -> Type {
    Type::Data(match l {
        Literal::Bool(_) => DataType::Scalar(ScalarType::Bool),
        Literal::Int(_, s) | Literal::Float(_, s) => DataType::Scalar(*s),
        Literal::Nat(_) => DataType::NatType,
    })
}

fn unknown_name(x: &str, span: Span) -> Diagnostic {
    let mut d = Diagnostic::new(span, format!("unknown name `{x}`"));
    if AddrSpace::from_name(x).is_some() {
        d = d.with_note(format!("`{x}` is an address space: it can only be the argument of a primitive that takes one, such as `toMem {x}`"));
    } else if let Some(p) = Prim::ALL.iter().find(|p| p.name().eq_ignore_ascii_case(x)) {
        d = d.with_note(format!("did you mean the primitive `{}`?", p.name()));
    } else if MISSING_MATH_FUNCTIONS.contains(&x) {
        let have: Vec<&str> = MathFn::ALL.iter().map(|f| f.name()).collect();
        d = d.with_note(format!(
            "`{x}` is a C math function that RISE does not have; its math functions are {}",
            have.join(", ")
        ));
    }
    d
}

/// C99/OpenCL math functions users reach for that are not primitives (yet).
const MISSING_MATH_FUNCTIONS: &[&str] = &[
    "tgamma", "lgamma", "exp10", "rint", "fdim", "ldexp", "frexp", "sqrtf", "expf", "logf", "powf",
    "sinf", "cosf", "fabsf", "fminf", "fmaxf",
];

fn expected_arg(a: &Expr, what: &str) -> Diagnostic {
    Diagnostic::new(a.span(), format!("expected {what} as this argument"))
        .with_label("this argument is given to an explicit type-level parameter")
}

/// A type error in an operand of `<<` or `>>` that is a function gets a note: they shift
/// integers, and `>>>` composes functions (it was `>>` before the shifts existed).
fn shift_of_functions_hint(f: &Expr, d: Diagnostic) -> Diagnostic {
    let mut head = f;
    while let ExprKind::App(g, _) | ExprKind::DepApp(g, _) = head.kind() {
        head = g;
    }
    let is_shift = matches!(head.kind(), ExprKind::Prim(Prim::Shl | Prim::Shr));
    let found_function = d
        .message
        .rsplit_once("found `")
        .is_some_and(|(_, found)| found.contains("->"));
    if is_shift && found_function {
        d.with_note("`<<` and `>>` shift integers; `f >>> g` composes functions")
    } else {
        d
    }
}
