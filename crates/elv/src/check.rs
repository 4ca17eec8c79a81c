//! The checker: resolves names, checks arities and infers and checks kinds,
//! all before anything is evaluated.
//!
//! Parameters carry no annotations. Each parameter of a definition, and each
//! definition's result, is a kind variable that starts unknown and is set once,
//! by propagation to a fixpoint in two phases:
//!
//! 1. *uses*: a parameter takes the kind its uses in the body ask for (operand
//!    of `;` or `<+`: strategy; right of `@`: traversal; argument of a builtin:
//!    that parameter's kind; applied `t(s)`: traversal), and a definition's
//!    result the kind of its body;
//! 2. *calls*: what is still unknown is taken from call sites (the kinds of the
//!    arguments, the kind the context expects of the result, and partial
//!    applications, which make the last parameter and the result strategies).
//!
//! Results still unknown then (definitions defined only through themselves)
//! default to strategies; parameters still unknown are never used in a way that
//! needs a kind, and accept any value. A final pass reports every conflict,
//! unknown name and arity error. Only strategies may be recursive: a strategy
//! definition is unfolded lazily, anything else is computed eagerly.

use crate::ast::{Def, Expr, ExprKind, Op};
use crate::registry::{Builtin, Kind, Registry};
use diagnostics::suggest::did_you_mean;
use diagnostics::{Diagnostic, Span};
use elevate::Program;
use std::collections::HashMap;
use std::sync::Arc;

/// The kinds of a definition's parameters and result (`None`: not known).
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Sig {
    pub params: Vec<Option<Kind>>,
    pub result: Option<Kind>,
}

/// What an identifier refers to, other than a parameter.
pub(crate) enum Target<'a, P: Program> {
    Def(usize),
    Builtin(&'a Arc<Builtin<P>>),
}

/// The names visible in a file: its definitions and the registry's builtins.
pub(crate) struct Scope<'a, P: Program> {
    pub defs: &'a [Def],
    pub index: &'a HashMap<String, usize>,
    pub registry: &'a Registry<P>,
}

impl<'a, P: Program> Scope<'a, P> {
    /// Definitions shadow nothing: a definition may not take a builtin's name.
    pub fn resolve(&self, name: &str) -> Option<Target<'a, P>> {
        match self.index.get(name) {
            Some(&d) => Some(Target::Def(d)),
            None => self.registry.get(name).map(Target::Builtin),
        }
    }

    fn param(&self, cur: Option<usize>, name: &str) -> Option<(usize, usize)> {
        let d = cur?;
        Some((d, self.defs.get(d)?.param(name)?))
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    Uses,
    Calls,
    Report,
}

struct Checker<'a, P: Program> {
    scope: Scope<'a, P>,
    source: &'a str,
    sigs: Vec<Sig>,
    mode: Mode,
    changed: bool,
    errors: Vec<Diagnostic>,
    /// For each definition, the definitions its body refers to.
    refs: Vec<Vec<usize>>,
}

/// Checks the definitions of a file and returns their signatures.
pub(crate) fn check_file<P: Program>(
    scope: Scope<'_, P>,
    source: &str,
) -> Result<Vec<Sig>, Vec<Diagnostic>> {
    let defs = scope.defs;
    let mut c = Checker {
        sigs: defs
            .iter()
            .map(|d| Sig {
                params: vec![None; d.params.len()],
                result: None,
            })
            .collect(),
        refs: vec![Vec::new(); defs.len()],
        scope,
        source,
        mode: Mode::Uses,
        changed: false,
        errors: Vec::new(),
    };
    c.declarations();
    c.fixpoint(Mode::Uses);
    c.fixpoint(Mode::Calls);
    for sig in &mut c.sigs {
        sig.result.get_or_insert(Kind::Strategy);
    }
    c.fixpoint(Mode::Calls);
    c.mode = Mode::Report;
    for d in 0..defs.len() {
        c.body(d);
    }
    c.recursion();
    if c.errors.is_empty() {
        Ok(c.sigs)
    } else {
        Err(c.errors)
    }
}

/// Checks an expression in the scope of a checked file: it must be a strategy.
pub(crate) fn check_expression<P: Program>(
    scope: Scope<'_, P>,
    sigs: &[Sig],
    source: &str,
    e: &Expr,
) -> Vec<Diagnostic> {
    let mut c = Checker {
        refs: vec![Vec::new(); scope.defs.len()],
        scope,
        source,
        sigs: sigs.to_vec(),
        mode: Mode::Report,
        changed: false,
        errors: Vec::new(),
    };
    c.expr(e, Some(Kind::Strategy), None);
    c.errors
}

impl<P: Program> Checker<'_, P> {
    /// Duplicate definitions and parameters, and definitions named like builtins.
    fn declarations(&mut self) {
        let defs = self.scope.defs;
        for (i, def) in defs.iter().enumerate() {
            if let Some(&first) = self.scope.index.get(&def.name) {
                if first != i {
                    let at = line_col(self.source, defs[first].name_span);
                    self.errors.push(
                        Diagnostic::new(def.name_span, format!("`{}` is defined twice", def.name))
                            .with_label("second definition")
                            .with_note(format!("the first definition is at {at}")),
                    );
                }
            }
            if self.scope.registry.get(&def.name).is_some() {
                self.errors.push(
                    Diagnostic::new(
                        def.name_span,
                        format!("`{}` is already a builtin", def.name),
                    )
                    .with_label("choose another name for this definition"),
                );
            }
            for (j, (p, span)) in def.params.iter().enumerate() {
                if def.params[..j].iter().any(|(q, _)| q == p) {
                    self.errors.push(
                        Diagnostic::new(*span, format!("duplicate parameter `{p}`"))
                            .with_label(format!("`{}` already has a parameter `{p}`", def.name)),
                    );
                }
            }
        }
    }

    fn fixpoint(&mut self, mode: Mode) {
        self.mode = mode;
        // Alternating directions, so that chains of definitions referring to
        // later ones and chains referring to earlier ones settle in few passes.
        let n = self.scope.defs.len();
        for pass in 0.. {
            self.changed = false;
            for i in 0..n {
                self.body(if pass % 2 == 0 { i } else { n - 1 - i });
            }
            if !self.changed {
                break;
            }
        }
    }

    fn body(&mut self, d: usize) {
        let defs = self.scope.defs;
        let want = self.sigs[d].result;
        let got = self.expr(&defs[d].body, want, Some(d));
        if let Some(k) = got {
            self.set_result(d, k, Mode::Uses);
        }
    }

    /// Whether the current pass may record what it learned in `phase`.
    fn may(&self, phase: Mode) -> bool {
        match self.mode {
            Mode::Uses => phase == Mode::Uses,
            Mode::Calls => true,
            Mode::Report => false,
        }
    }

    fn set_param(&mut self, d: usize, i: usize, k: Kind, phase: Mode) {
        if self.may(phase) && self.sigs[d].params[i].is_none() {
            self.sigs[d].params[i] = Some(k);
            self.changed = true;
        }
    }

    fn set_result(&mut self, d: usize, k: Kind, phase: Mode) {
        if self.may(phase) && self.sigs[d].result.is_none() {
            self.sigs[d].result = Some(k);
            self.changed = true;
        }
    }

    fn report(&mut self, d: Diagnostic) {
        if self.mode == Mode::Report {
            self.errors.push(d);
        }
    }

    /// The source text of a span on one line, shortened, for messages.
    fn text(&self, span: Span) -> String {
        let raw = self.source.get(span.range()).unwrap_or("");
        let one_line = raw.split_whitespace().collect::<Vec<_>>().join(" ");
        if one_line.chars().count() > 40 {
            let cut: String = one_line.chars().take(37).collect();
            format!("{cut}...")
        } else {
            one_line
        }
    }

    /// Walks `e`, which the context wants to be of kind `want`; returns its kind.
    fn expr(&mut self, e: &Expr, want: Option<Kind>, cur: Option<usize>) -> Option<Kind> {
        crate::with_stack(|| self.expr_inner(e, want, cur))
    }

    fn expr_inner(&mut self, e: &Expr, want: Option<Kind>, cur: Option<usize>) -> Option<Kind> {
        let got = match &e.kind {
            ExprKind::Int(_) => Some(Kind::Int),
            ExprKind::List(items) => {
                for item in items {
                    self.expr(item, None, cur);
                }
                Some(Kind::List)
            }
            ExprKind::Name(name) => self.name(e, name, want, cur),
            ExprKind::Call { callee, args } => self.call(e, callee, args, want, cur),
            ExprKind::Binary {
                op,
                op_span,
                left,
                right,
            } => {
                if *op == Op::NfSeq && self.scope.registry.normal_form().is_none() {
                    self.report(
                        Diagnostic::new(
                            *op_span,
                            "`;;` needs a normal form, but none is registered for this language",
                        )
                        .with_label("`s ;; t` means `s ; NF ; t` for the language's normal form NF")
                        .with_note("write `;` instead"),
                    );
                }
                let right_kind = match op {
                    Op::At => Kind::Traversal,
                    _ => Kind::Strategy,
                };
                self.expr(left, Some(Kind::Strategy), cur);
                self.expr(right, Some(right_kind), cur);
                Some(Kind::Strategy)
            }
        };
        self.expect(e, want, got);
        got
    }

    /// Reports `e` being of kind `got` where `want` is expected.
    fn expect(&mut self, e: &Expr, want: Option<Kind>, got: Option<Kind>) {
        let (Some(want), Some(got)) = (want, got) else {
            return;
        };
        if want == got || self.mode != Mode::Report {
            return;
        }
        let t = self.text(e.span);
        let d = match (want, got) {
            (Kind::Strategy, Kind::Traversal) => Diagnostic::new(
                e.span,
                format!("`{t}` is a traversal; apply it to a strategy: `s @ {t}` or `{t}(s)`"),
            )
            .with_label("a strategy is expected here"),
            (Kind::Traversal, Kind::Strategy) => Diagnostic::new(
                e.span,
                format!("`{t}` is a strategy, but a traversal is expected here"),
            )
            .with_label("expected a traversal")
            .with_note(
                "a traversal is a function from strategy to strategy, such as `topDown`, or a \
                 builtin or definition whose last parameter is a strategy, applied to all other \
                 arguments (`argOf(map)`)",
            ),
            (Kind::Symbol, _) => Diagnostic::new(
                e.span,
                format!(
                    "expected a name of the object language (such as `map`), found {} `{t}`",
                    got.article()
                ),
            )
            .with_label("expected a symbol"),
            _ => Diagnostic::new(
                e.span,
                format!("expected {}, found {} `{t}`", want.article(), got.article()),
            )
            .with_label(format!("expected {}", want.article())),
        };
        self.errors.push(d);
    }

    fn name(
        &mut self,
        e: &Expr,
        name: &str,
        want: Option<Kind>,
        cur: Option<usize>,
    ) -> Option<Kind> {
        if let Some((d, i)) = self.scope.param(cur, name) {
            if let Some(w) = want {
                self.set_param(d, i, w, Mode::Uses);
            }
            return self.sigs[d].params[i];
        }
        if want == Some(Kind::Symbol) {
            return Some(Kind::Symbol);
        }
        self.apply(e, name, e.span, &[], want, cur)
    }

    fn call(
        &mut self,
        e: &Expr,
        callee: &Expr,
        args: &[Expr],
        want: Option<Kind>,
        cur: Option<usize>,
    ) -> Option<Kind> {
        let Some(name) = callee.as_name() else {
            self.expr(callee, Some(Kind::Traversal), cur);
            return self.traversal_argument(e, args, cur);
        };
        if let Some((d, i)) = self.scope.param(cur, name) {
            self.set_param(d, i, Kind::Traversal, Mode::Uses);
            if let Some(k) = self.sigs[d].params[i].filter(|&k| k != Kind::Traversal) {
                self.report(
                    Diagnostic::new(
                        callee.span,
                        format!("`{name}` is {}, not a traversal", k.article()),
                    )
                    .with_label("only traversals can be applied to an argument"),
                );
            }
            return self.traversal_argument(e, args, cur);
        }
        self.apply(e, name, callee.span, args, want, cur)
    }

    /// The argument of a traversal value applied with `t(s)`.
    fn traversal_argument(&mut self, e: &Expr, args: &[Expr], cur: Option<usize>) -> Option<Kind> {
        if let [arg] = args {
            self.expr(arg, Some(Kind::Strategy), cur);
            return Some(Kind::Strategy);
        }
        self.report(Diagnostic::new(
            e.span,
            format!(
                "a traversal takes one argument, a strategy, but {} were given",
                args.len()
            ),
        ));
        for a in args {
            self.expr(a, None, cur);
        }
        None
    }

    /// A definition or builtin called `name` applied to `args` (none: a bare name).
    fn apply(
        &mut self,
        e: &Expr,
        name: &str,
        name_span: Span,
        args: &[Expr],
        want: Option<Kind>,
        cur: Option<usize>,
    ) -> Option<Kind> {
        let Some(target) = self.scope.resolve(name) else {
            self.unknown(name, name_span, cur);
            for a in args {
                self.expr(a, None, cur);
            }
            return None;
        };
        let (def, params, result) = match &target {
            Target::Def(d) => {
                if let Some(c) = cur.filter(|_| self.mode == Mode::Report) {
                    self.refs[c].push(*d);
                }
                (Some(*d), self.sigs[*d].params.clone(), self.sigs[*d].result)
            }
            Target::Builtin(b) => (
                None,
                b.params.iter().map(|&k| Some(k)).collect(),
                Some(Kind::Strategy),
            ),
        };
        let (n, m) = (params.len(), args.len());
        let is_strategy = |k: Option<Kind>| matches!(k, None | Some(Kind::Strategy));
        if m == n {
            self.arguments(def, &params, args, cur);
            return match def {
                Some(d) => {
                    if let Some(w) = want {
                        self.set_result(d, w, Mode::Calls);
                    }
                    self.sigs[d].result
                }
                None => result,
            };
        }
        if m + 1 == n && is_strategy(params[m]) && is_strategy(result) {
            if let Some(d) = def {
                self.set_param(d, m, Kind::Strategy, Mode::Calls);
                self.set_result(d, Kind::Strategy, Mode::Calls);
            }
            self.arguments(def, &params[..m], args, cur);
            return Some(Kind::Traversal);
        }
        if m == n + 1 && result == Some(Kind::Traversal) {
            self.arguments(def, &params, &args[..n], cur);
            self.expr(&args[n], Some(Kind::Strategy), cur);
            return Some(Kind::Strategy);
        }
        self.arity(e.span, name, &params, result, m);
        for a in args {
            self.expr(a, None, cur);
        }
        None
    }

    /// Checks arguments against parameter kinds, learning unknown parameter
    /// kinds of the definition `def` from the arguments.
    fn arguments(
        &mut self,
        def: Option<usize>,
        params: &[Option<Kind>],
        args: &[Expr],
        cur: Option<usize>,
    ) {
        for (i, (a, &k)) in args.iter().zip(params).enumerate() {
            let got = self.expr(a, k, cur);
            if let (Some(d), None, Some(g)) = (def, k, got) {
                self.set_param(d, i, g, Mode::Calls);
            }
        }
    }

    fn arity(
        &mut self,
        span: Span,
        name: &str,
        params: &[Option<Kind>],
        result: Option<Kind>,
        given: usize,
    ) {
        let n = params.len();
        let sig: Vec<String> = params
            .iter()
            .map(|k| k.map_or_else(|| "_".to_string(), |k| k.to_string()))
            .collect();
        let sig = format!("`{name}({})`", sig.join(", "));
        let plural = |k: usize| if k == 1 { "" } else { "s" };
        let were = if given == 1 { "was" } else { "were" };
        let message = if n == 0 {
            format!("`{name}` takes no arguments, but {given} {were} given")
        } else if given == 0 {
            format!("`{name}` needs {n} argument{}: {sig}", plural(n))
        } else {
            format!(
                "`{name}` takes {n} argument{} ({sig}), but {given} {were} given",
                plural(n)
            )
        };
        let mut d = Diagnostic::new(span, message);
        if given + 1 == n {
            d = d.with_note(format!(
                "{sig} cannot be used as a traversal: only a definition or builtin whose last \
                 parameter is a strategy, and that makes a strategy, can leave that argument out"
            ));
        } else if n == 0 && result == Some(Kind::Strategy) {
            d = d.with_note(format!(
                "`{name}` is a strategy; it is used without arguments"
            ));
        }
        self.report(d);
    }

    fn unknown(&mut self, name: &str, span: Span, cur: Option<usize>) {
        if self.mode != Mode::Report {
            return;
        }
        let params = cur
            .and_then(|d| self.scope.defs.get(d))
            .map(|d| d.params.iter().map(|p| p.0.as_str()).collect::<Vec<_>>())
            .unwrap_or_default();
        let candidates = params
            .into_iter()
            .chain(self.scope.defs.iter().map(|d| d.name.as_str()))
            .chain(self.scope.registry.names().map(|b| b.0));
        let mut d = Diagnostic::new(span, format!("unknown name `{name}`"))
            .with_label("not a parameter, definition or builtin");
        if let Some(note) = did_you_mean(name, candidates) {
            d = d.with_note(note);
        }
        self.errors.push(d);
    }

    /// Reports definitions that are not strategies but refer to themselves.
    fn recursion(&mut self) {
        for (d, def) in self.scope.defs.iter().enumerate() {
            let kind = self.sigs[d].result.unwrap_or(Kind::Strategy);
            if kind == Kind::Strategy || !self.reaches(d, d) {
                continue;
            }
            let name = &def.name;
            self.errors.push(
                Diagnostic::new(
                    def.name_span,
                    format!("`{name}` refers to itself, but only strategies may be recursive"),
                )
                .with_label(format!("`{name}` is {}", kind.article()))
                .with_note("its value would be computed forever"),
            );
        }
    }

    fn reaches(&self, from: usize, to: usize) -> bool {
        let mut seen = vec![false; self.refs.len()];
        let mut todo = vec![from];
        while let Some(d) = todo.pop() {
            for &e in &self.refs[d] {
                if e == to {
                    return true;
                }
                if !seen[e] {
                    seen[e] = true;
                    todo.push(e);
                }
            }
        }
        false
    }
}

/// `line:column` (1-based) of the start of a span.
pub(crate) fn line_col(source: &str, span: Span) -> String {
    let start = (span.start as usize).min(source.len());
    let before = source.get(..start).unwrap_or("");
    let line = before.matches('\n').count() + 1;
    let col = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    format!("line {line}, column {col}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_and_column() {
        let src = "def a = id\ndef b = fail";
        assert_eq!(line_col(src, Span::new(12, 13)), "line 2, column 2");
    }
}
