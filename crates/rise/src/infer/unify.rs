//! Unification over all kinds, with a solver for equations between naturals.
//!
//! The state holds the metavariables (unification variables) created during
//! inference and their solutions. Nat equations are solved with
//! [`Nat::solve_for`] when a metavariable occurs linearly (`?m*32 = 1024` gives
//! `?m = 32`, `?n + 3 = m + 2` gives `?n = m - 1`); equations that cannot be
//! solved yet (`?m * ?n = 1024`) are deferred and retried when more is known.

use crate::constraints::SizeConstraint;
use crate::expr::NameGen;
use crate::span::{Diagnostic, Span};
use crate::types::*;
use arith::{Nat, Var};
use std::collections::{BTreeSet, HashMap};

/// The kind of a metavariable: a type-level kind, or "any type" (functions included).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum MetaKind {
    Kind(Kind),
    Type,
}

/// Unification state: metavariables, their solutions, deferred nat equations.
#[derive(Default)]
pub(crate) struct Unifier {
    pub names: NameGen,
    pub metas: HashMap<Name, MetaKind>,
    nats: HashMap<Name, Nat>,
    datas: HashMap<Name, DataType>,
    types: HashMap<Name, Type>,
    pub deferred: Vec<(Nat, Nat, Span)>,
    /// The size constraints met so far, over metavariables and rigid variables.
    pub obligations: Vec<Obligation>,
}

/// A size constraint that the definition being checked must satisfy.
#[derive(Clone, Debug)]
pub(crate) struct Obligation {
    /// The constraint.
    pub constraint: SizeConstraint,
    /// Where it arises.
    pub span: Span,
    /// The definition whose constraint it is an instance of, if any.
    pub origin: Option<Origin>,
}

/// A constraint of a definition, instantiated where the definition is used.
#[derive(Clone, Debug)]
pub(crate) struct Origin {
    /// The definition.
    pub def: Name,
    /// Its constraint, over its own size parameters.
    pub constraint: SizeConstraint,
    /// The sizes its parameters were instantiated with.
    pub args: Vec<(Name, Nat)>,
}

/// Why two types did not unify: the innermost pair that differed.
struct Clash(String);

impl Unifier {
    /// A fresh metavariable name of a kind (`?n_3`).
    pub fn fresh(&mut self, kind: MetaKind) -> Name {
        let base = match kind {
            MetaKind::Kind(Kind::Nat) => "?n",
            MetaKind::Kind(Kind::Data) => "?d",
            MetaKind::Kind(Kind::AddrSpace) => "?a",
            MetaKind::Kind(Kind::NatToNat) => "?f",
            MetaKind::Kind(Kind::NatToData) => "?g",
            MetaKind::Type => "?t",
        };
        let name = self.names.fresh(base);
        self.metas.insert(name.clone(), kind);
        name
    }

    /// A fresh metavariable as a type-level value of `kind`.
    pub fn fresh_arg(&mut self, kind: Kind) -> TypeArg {
        let name = self.fresh(MetaKind::Kind(kind));
        TypeArg::var(&name, kind)
    }

    /// A fresh type metavariable (any type).
    pub fn fresh_type(&mut self) -> Type {
        Type::Var(self.fresh(MetaKind::Type))
    }

    /// Whether a name is an (unsolved or solved) metavariable.
    pub fn is_meta(&self, name: &str) -> bool {
        self.metas.contains_key(name)
    }

    // ---- zonking: applying the solutions found so far ------------------------

    /// The natural with all solved metavariables replaced.
    pub fn zonk_nat(&self, n: &Nat) -> Nat {
        subst_nat(n, self)
    }

    /// The data type with all solved metavariables replaced.
    pub fn zonk_data(&self, d: &DataType) -> DataType {
        subst_data(d, self)
    }

    /// The type with all solved metavariables replaced.
    pub fn zonk(&self, t: &Type) -> Type {
        subst_type(t, self)
    }

    /// Resolves a type variable at the top only.
    pub fn shallow(&self, t: &Type) -> Type {
        match t {
            Type::Var(x) => match self.types.get(x) {
                Some(s) => self.shallow(s),
                None => t.clone(),
            },
            Type::Data(DataType::Var(x)) => match self.datas.get(x) {
                Some(d) => self.shallow(&Type::Data(d.clone())),
                None => t.clone(),
            },
            _ => t.clone(),
        }
    }

    /// The unsolved metavariables occurring in a type, in order of occurrence.
    pub fn free_metas(&self, t: &Type, out: &mut Vec<(Name, MetaKind)>) {
        let t = self.zonk(t);
        collect_type(&t, &mut |name, kind| {
            if let Some(k) = self.metas.get(name) {
                if *k == kind && !out.iter().any(|(n, _)| &**n == name) {
                    out.push((name.into(), kind));
                }
            }
        });
    }

    // ---- unification -----------------------------------------------------------

    /// Unifies the type `expected` with the type `found` of the expression at `span`.
    pub fn unify(&mut self, expected: &Type, found: &Type, span: Span) -> Result<(), Diagnostic> {
        self.unify_types(expected, found, span)
            .map_err(|Clash(why)| {
                let (raw_e, raw_f) = (
                    self.zonk(expected).to_string(),
                    self.zonk(found).to_string(),
                );
                let e = exact_division_as_slash(&unknowns_as_blanks(&raw_e));
                let f = exact_division_as_slash(&unknowns_as_blanks(&raw_f));
                let why = exact_division_as_slash(&unknowns_as_blanks(&why));
                let mut d =
                    Diagnostic::new(span, format!("type mismatch: expected `{e}`, found `{f}`"))
                        .with_label(format!("this has type `{f}`"));
                if why != format!("`{e}` and `{f}`") {
                    d = d.with_note(format!("cannot unify {why}"));
                }
                if unknowns_as_blanks(&raw_e) != raw_e || unknowns_as_blanks(&raw_f) != raw_f {
                    d = d.with_note("`_` is a size or type not known at this point");
                }
                if raw_e.contains(EXACT_DIVISION) || raw_f.contains(EXACT_DIVISION) {
                    d = d.with_note(EXACT_DIVISION_NOTE);
                }
                d
            })
    }

    fn unify_types(&mut self, a: &Type, b: &Type, span: Span) -> Result<(), Clash> {
        let a = self.shallow(a);
        let b = self.shallow(b);
        match (&a, &b) {
            (Type::Var(x), Type::Var(y)) if x == y => Ok(()),
            (Type::Var(x), t) | (t, Type::Var(x)) if self.is_meta(x) => {
                let t = self.zonk(t);
                if type_mentions(&t, x) {
                    return Err(Clash(format!("`{x}` with `{t}` (infinite type)")));
                }
                self.types.insert(x.clone(), t);
                Ok(())
            }
            (Type::Data(d1), Type::Data(d2)) => self.unify_data(d1, d2, span),
            (Type::Fun(a1, b1), Type::Fun(a2, b2)) => {
                self.unify_types(a1, a2, span)?;
                self.unify_types(b1, b2, span)
            }
            // Implicitness is a matter of elaboration, not of the type's meaning.
            (
                Type::DepFun {
                    binder: x,
                    body: b1,
                    ..
                },
                Type::DepFun {
                    binder: y,
                    body: b2,
                    ..
                },
            ) if x.kind == y.kind => {
                let (b1, b2) = (self.zonk(b1), self.zonk(b2));
                let fresh = self.names.fresh(&x.name);
                let arg = TypeArg::var(&fresh, x.kind);
                let b1 = b1.instantiate(x, &arg);
                let b2 = b2.instantiate(y, &arg);
                self.unify_types(&b1, &b2, span)
            }
            _ => Err(Clash(format!(
                "`{}` and `{}`",
                self.zonk(&a),
                self.zonk(&b)
            ))),
        }
    }

    fn unify_data(&mut self, a: &DataType, b: &DataType, span: Span) -> Result<(), Clash> {
        let a = self.resolve_data(a);
        let b = self.resolve_data(b);
        match (&a, &b) {
            (DataType::Var(x), DataType::Var(y)) if x == y => Ok(()),
            (DataType::Var(x), d) | (d, DataType::Var(x)) if self.is_meta(x) => {
                let d = self.zonk_data(d);
                if data_mentions(&d, x) {
                    return Err(Clash(format!("`{x}` with `{d}` (infinite type)")));
                }
                self.datas.insert(x.clone(), d);
                Ok(())
            }
            (DataType::Scalar(s), DataType::Scalar(t)) if s == t => Ok(()),
            (DataType::NatType, DataType::NatType) => Ok(()),
            (DataType::Index(n), DataType::Index(m)) => self.unify_nat(n, m, span),
            (DataType::Array(n, s), DataType::Array(m, t)) => {
                self.unify_nat(n, m, span)?;
                self.unify_data(s, t, span)
            }
            (DataType::Vector(n, s), DataType::Vector(m, t)) => {
                self.unify_nat(n, m, span)?;
                self.unify_data(s, t, span)
            }
            (DataType::Pair(a1, b1), DataType::Pair(a2, b2)) => {
                self.unify_data(a1, a2, span)?;
                self.unify_data(b1, b2, span)
            }
            (DataType::NatToDataApp(f, n), DataType::NatToDataApp(g, m)) if f == g => {
                self.unify_nat(n, m, span)
            }
            _ => Err(Clash(format!(
                "`{}` and `{}`",
                self.zonk_data(&a),
                self.zonk_data(&b)
            ))),
        }
    }

    fn resolve_data(&self, d: &DataType) -> DataType {
        match d {
            DataType::Var(x) => match self.datas.get(x) {
                Some(s) => self.resolve_data(s),
                None => d.clone(),
            },
            _ => d.clone(),
        }
    }

    /// Unifies two naturals, solving for a metavariable or deferring the equation.
    fn unify_nat(&mut self, a: &Nat, b: &Nat, span: Span) -> Result<(), Clash> {
        match self.solve_nat(a, b, span) {
            NatEq::Solved => Ok(()),
            NatEq::Stuck(a, b) => {
                self.deferred.push((a, b, span));
                Ok(())
            }
            NatEq::Impossible(a, b) => Err(Clash(format!(
                "the sizes {} and {}",
                shown_size(&a),
                shown_size(&b)
            ))),
        }
    }

    /// Tries to make `a = b` hold by solving one metavariable. A solution that is
    /// a natural number only under conditions (`n /^ 32`, `n - 10`) records them.
    fn solve_nat(&mut self, a: &Nat, b: &Nat, span: Span) -> NatEq {
        let a = self.zonk_nat(a);
        let b = self.zonk_nat(b);
        if a == b || (a.clone() - b.clone()).as_cst() == Some(0) {
            return NatEq::Solved;
        }
        let metas: BTreeSet<Var> = a
            .free_vars()
            .into_iter()
            .chain(b.free_vars())
            .filter(|v| self.metas.get(v.name()) == Some(&MetaKind::Kind(Kind::Nat)))
            .collect();
        if metas.is_empty() {
            return NatEq::Impossible(a, b);
        }
        for v in &metas {
            // `c*v + rest = 0` gives `v = -rest /^ c`, and the constraint `c | rest` that
            // comes with it rules out `c = 0` unless `rest` is 0 too. Where `rest` is 0 and
            // `c` mentions another metavariable (`(?b/3 - 1) * ?a = 0`), `c` may be 0 and
            // the equation says nothing about `v`: wait for the other instead of `v = 0`.
            let diff = a.clone() - b.clone();
            let rest = diff.substitute(v, &Nat::cst(0));
            let coefficient = diff.substitute(v, &Nat::cst(1)) - rest.clone();
            if rest.as_cst() == Some(0) && coefficient.free_vars().iter().any(|w| metas.contains(w))
            {
                continue;
            }
            if let Some(sol) = Nat::solve_for(&a, &b, v) {
                // A constant that is not a whole number (`10 /^ 4`) has no solution.
                if sol.free_vars().is_empty() && sol.as_cst().is_none_or(|c| c < 0) {
                    return NatEq::Impossible(a, b);
                }
                if !sol.contains_var(v) {
                    for constraint in SizeConstraint::natural(&sol) {
                        self.require(constraint, span, None);
                    }
                    self.nats.insert(v.name().into(), sol);
                    return NatEq::Solved;
                }
            }
        }
        NatEq::Stuck(a, b)
    }

    /// Retries deferred nat equations until no more progress is made. Returns the
    /// first equation that is now known to be false, if any.
    pub fn solve_deferred(&mut self) -> Result<(), Diagnostic> {
        loop {
            let pending = std::mem::take(&mut self.deferred);
            let before = pending.len();
            for (a, b, span) in pending {
                match self.solve_nat(&a, &b, span) {
                    NatEq::Solved => {}
                    NatEq::Stuck(a, b) => self.deferred.push((a, b, span)),
                    NatEq::Impossible(a, b) => {
                        return Err(Diagnostic::new(
                            span,
                            format!(
                                "type mismatch: the sizes {} and {} differ",
                                shown_size(&a),
                                shown_size(&b)
                            ),
                        ))
                    }
                }
            }
            if self.deferred.len() == before {
                return Ok(());
            }
        }
    }

    /// Records a size constraint to be settled at the end of the definition.
    pub fn require(&mut self, constraint: SizeConstraint, span: Span, origin: Option<Origin>) {
        self.obligations.push(Obligation {
            constraint,
            span,
            origin,
        });
    }

    /// Binds a nat metavariable directly (used for `--nat` values).
    pub fn unify_nat_at(&mut self, a: &Nat, b: &Nat, span: Span) -> Result<(), Diagnostic> {
        self.unify_nat(a, b, span).map_err(|Clash(why)| {
            Diagnostic::new(span, format!("type mismatch: cannot unify {why}"))
        })
    }
}

enum NatEq {
    Solved,
    Stuck(Nat, Nat),
    Impossible(Nat, Nat),
}

impl TypeSubst for Unifier {
    fn lookup(&self, name: &str, kind: Kind) -> Option<TypeArg> {
        match kind {
            Kind::Nat => self.nats.get(name).map(|n| TypeArg::Nat(self.zonk_nat(n))),
            Kind::Data => self
                .datas
                .get(name)
                .map(|d| TypeArg::Data(self.zonk_data(d))),
            // Metavariables of the other kinds never arise: the primitives take
            // address spaces and index functions as explicit arguments.
            Kind::AddrSpace | Kind::NatToNat | Kind::NatToData => None,
        }
    }

    fn lookup_type(&self, name: &str) -> Option<Type> {
        match self.types.get(name) {
            Some(t) => Some(self.zonk(t)),
            None => self.datas.get(name).map(|d| Type::Data(self.zonk_data(d))),
        }
    }
}

/// Calls `f(name, kind)` for every type-level variable occurring free in a type.
pub(crate) fn collect_type(t: &Type, f: &mut dyn FnMut(&str, MetaKind)) {
    match t {
        Type::Var(x) => f(x, MetaKind::Type),
        Type::Data(d) => collect_data(d, f),
        Type::Fun(a, b) => {
            collect_type(a, f);
            collect_type(b, f);
        }
        Type::DepFun { binder, body, .. } => collect_type(body, &mut |n, k| {
            if n != &*binder.name {
                f(n, k)
            }
        }),
    }
}

pub(crate) fn collect_nat(n: &Nat, f: &mut dyn FnMut(&str, MetaKind)) {
    for v in n.free_vars() {
        f(v.name(), MetaKind::Kind(Kind::Nat));
    }
}

pub(crate) fn collect_data(d: &DataType, f: &mut dyn FnMut(&str, MetaKind)) {
    match d {
        DataType::Scalar(_) | DataType::NatType => {}
        DataType::Index(n) => collect_nat(n, f),
        DataType::Array(n, t) | DataType::Vector(n, t) => {
            collect_nat(n, f);
            collect_data(t, f);
        }
        DataType::Pair(a, b) => {
            collect_data(a, f);
            collect_data(b, f);
        }
        DataType::Var(x) => f(x, MetaKind::Kind(Kind::Data)),
        DataType::NatToDataApp(g, n) => {
            if let NatToData::Var(x) = g {
                f(x, MetaKind::Kind(Kind::NatToData));
            }
            collect_nat(n, f);
        }
    }
}

fn type_mentions(t: &Type, x: &str) -> bool {
    let mut found = false;
    collect_type(t, &mut |n, _| found |= n == x);
    found
}

fn data_mentions(d: &DataType, x: &str) -> bool {
    let mut found = false;
    collect_data(d, &mut |n, _| found |= n == x);
    found
}

/// How the printer writes an exact division (`n /^ 2`, the size of `split 2` or of the
/// windows of `slide k 2`): valid only where the divisor divides the dividend.
const EXACT_DIVISION: &str = " /^ ";

/// What a type error says of the exact divisions it shows as `/`.
const EXACT_DIVISION_NOTE: &str = "a size `a/b` of `split b` or `slide k b` is a whole number \
    only where `b` divides `a` (`shine check` lists such constraints); to drop the remainder, \
    as PyTorch's pooling does with `(h - k) / s + 1` windows, take the windows' span first: \
    `xs |> take ((h-k)/s*s+k) |> slide k s` (docs/language.md)";

/// `text` with every exact division written `/`, as a user writes sizes: where the
/// division is exact (which the type's constraints require), it is C's `/`.
fn exact_division_as_slash(text: &str) -> String {
    text.replace(EXACT_DIVISION, "/")
}

/// A size as messages show it: quoted, its value computed where it is a constant (`2*3+4`
/// is `10`), and a constant that is not a whole number (`7 /^ 2`, an exact division whose
/// divisor does not divide its dividend) said to be one, with its value as a fraction.
pub(crate) fn shown_size(n: &Nat) -> String {
    if !n.free_vars().is_empty() {
        return format!("`{}`", exact_division_as_slash(&n.to_string()));
    }
    match n.eval(&|_| None) {
        Ok(v) => format!("`{v}`"),
        Err(arith::EvalError::InexactDivision {
            numerator,
            denominator,
        }) => format!(
            "`{numerator}/{denominator}`, not a whole number (a `split` or strided `slide` needs \
             its divisor to divide the size)"
        ),
        Err(_) => format!("`{}`", exact_division_as_slash(&n.to_string())),
    }
}

/// `text` with the inference's unknowns (`?n_4`, `?d_12`) written `_`, as a user reads a
/// type that is not known yet (`expected `_._`, found `f32``).
fn unknowns_as_blanks(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        let rest = &text[i..];
        let is_unknown = c == '?'
            && rest[1..].starts_with(|k: char| k.is_ascii_alphabetic())
            && rest[1..]
                .trim_start_matches(|k: char| k.is_ascii_alphabetic())
                .starts_with('_');
        if !is_unknown {
            out.push(c);
            continue;
        }
        // skip the letters, the `_` and the digits
        while chars
            .peek()
            .is_some_and(|&(_, k)| k.is_ascii_alphanumeric() || k == '_')
        {
            chars.next();
        }
        out.push('_');
    }
    out
}

#[cfg(test)]
mod blank_tests {
    #[test]
    fn unknowns_print_as_blanks() {
        assert_eq!(super::unknowns_as_blanks("?n_0.?d_12"), "_._");
        assert_eq!(super::unknowns_as_blanks("(n+?n_4).f32"), "(n+_).f32");
        assert_eq!(super::unknowns_as_blanks("n_4.f32 ?"), "n_4.f32 ?");
    }
}
