//! Loaded strategy files.

use crate::ast::Def;
use crate::check::{check_expression, check_file, Scope, Sig};
use crate::eval::Eval;
use crate::lexer::lex;
use crate::origin::Origins;
use crate::parser::{parse_expression, parse_file};
use crate::registry::{Kind, Registry, Value};
use diagnostics::suggest::did_you_mean;
use diagnostics::{Diagnostic, Span};
use elevate::{Program, Strategy};
use std::collections::HashMap;
use std::sync::Arc;

/// What the definitions of a module need when they are applied, possibly long
/// after loading: shared by the module and the strategies it made.
pub(crate) struct Shared<P: Program> {
    pub source: String,
    pub defs: Vec<Def>,
    pub index: HashMap<String, usize>,
    pub sigs: Vec<Sig>,
    pub registry: Registry<P>,
    /// Where the strategies built from the file and its expressions were written.
    pub origins: Arc<Origins<P>>,
}

impl<P: Program> Shared<P> {
    pub(crate) fn scope(&self) -> Scope<'_, P> {
        Scope {
            defs: &self.defs,
            index: &self.index,
            registry: &self.registry,
        }
    }
}

/// A loaded and checked strategy file.
pub struct Module<P: Program> {
    shared: Arc<Shared<P>>,
    /// The values of the parameterless definitions.
    values: HashMap<usize, Value<P>>,
}

impl<P: Program> Clone for Module<P> {
    fn clone(&self) -> Self {
        Module {
            shared: self.shared.clone(),
            values: self.values.clone(),
        }
    }
}

/// Parses and checks a strategy file against the builtins of `registry`, and
/// builds its parameterless definitions. Every error in the file is reported
/// (in source order), each with the span it concerns.
pub fn load<P: Program>(
    source: &str,
    registry: &Registry<P>,
) -> Result<Module<P>, Vec<Diagnostic>> {
    // Parse errors right after a character the lexer skipped would only repeat
    // its error, so the parser runs on files that lex.
    let (tokens, mut errors) = lex(source);
    if !errors.is_empty() {
        return Err(errors);
    }
    let (defs, parse_errors) = parse_file(&tokens, source.len());
    if !parse_errors.is_empty() {
        return Err(sorted(parse_errors));
    }
    let mut index = HashMap::new();
    for (i, d) in defs.iter().enumerate() {
        index.entry(d.name.clone()).or_insert(i);
    }
    let scope = Scope {
        defs: &defs,
        index: &index,
        registry,
    };
    let sigs = check_file(scope, source).map_err(sorted)?;
    let shared = Arc::new(Shared {
        source: source.to_string(),
        defs,
        index,
        sigs,
        registry: registry.clone(),
        origins: Origins::new(),
    });
    let mut ev = Eval::new(&shared, true);
    for d in 0..shared.defs.len() {
        if shared.defs[d].params.is_empty() {
            if let Err(e) = ev.top(d) {
                errors.push(e);
            }
        }
    }
    if !errors.is_empty() {
        return Err(sorted(errors));
    }
    let values = std::mem::take(&mut ev.memo);
    Ok(Module { shared, values })
}

/// In source order, without repetitions.
fn sorted(mut errors: Vec<Diagnostic>) -> Vec<Diagnostic> {
    errors.sort_by_key(|d| (d.span.start, d.span.end));
    errors.dedup_by(|a, b| a.span == b.span && a.message == b.message);
    errors
}

impl<P: Program> Module<P> {
    /// The strategy defined by the parameterless definition `name`. An unknown
    /// name gives an error (with an empty span) that lists the file's definitions.
    pub fn strategy(&self, name: &str) -> Result<Strategy<P>, Diagnostic> {
        let Some(&d) = self.shared.index.get(name) else {
            let names = self.shared.defs.iter().map(|d| d.name.as_str());
            let mut diag = Diagnostic::new(
                Span::default(),
                format!("the strategy file has no definition `{name}`"),
            );
            if let Some(note) = did_you_mean(name, names) {
                diag = diag.with_note(note);
            }
            let listed: Vec<String> = self
                .definitions()
                .map(|(n, arity)| match arity {
                    0 => n.to_string(),
                    _ => format!("{n} ({arity} parameters)"),
                })
                .collect();
            return Err(diag.with_note(if listed.is_empty() {
                "the file defines nothing".to_string()
            } else {
                format!("it defines: {}", listed.join(", "))
            }));
        };
        let def = &self.shared.defs[d];
        if !def.params.is_empty() {
            let params: Vec<&str> = def.params.iter().map(|p| p.0.as_str()).collect();
            return Err(Diagnostic::new(
                def.name_span,
                format!(
                    "`{name}` has parameters ({}); apply it in an expression such as `{name}({})`",
                    params.join(", "),
                    params.join(", ")
                ),
            ));
        }
        match self.values.get(&d) {
            Some(Value::Strategy(s)) => Ok(s.clone()),
            Some(Value::Traversal(_)) => Err(Diagnostic::new(
                def.name_span,
                format!(
                    "`{name}` is a traversal; apply it to a strategy: `s @ {name}` or `{name}(s)`"
                ),
            )),
            Some(v) => Err(Diagnostic::new(
                def.name_span,
                format!("`{name}` is {}, not a strategy", v.kind().article()),
            )),
            None => Err(Diagnostic::new(
                def.name_span,
                format!("`{name}` was not built"),
            )),
        }
    }

    /// Where the strategies of this module were written: a failing strategy of a rewrite
    /// is found there to be reported in the user's words ([`Origins::of`]).
    pub fn origins(&self) -> Arc<Origins<P>> {
        self.shared.origins.clone()
    }

    /// The file's definitions in source order, with their numbers of parameters.
    pub fn definitions(&self) -> impl Iterator<Item = (&str, usize)> + '_ {
        self.shared
            .defs
            .iter()
            .map(|d| (d.name.as_str(), d.params.len()))
    }

    /// The kinds inferred for the parameters of definition `name` (`None`: a
    /// parameter that accepts anything) and of its result.
    pub fn signature(&self, name: &str) -> Option<(Vec<Option<Kind>>, Kind)> {
        let sig = self.shared.sigs.get(*self.shared.index.get(name)?)?;
        Some((sig.params.clone(), sig.result.unwrap_or(Kind::Strategy)))
    }

    /// Evaluates a strategy expression (from a command-line flag, say) in the
    /// scope of the module: it may use the file's definitions and the builtins.
    /// Spans in the errors refer to `expr_source`.
    pub fn expression(&self, expr_source: &str) -> Result<Strategy<P>, Vec<Diagnostic>> {
        let (tokens, errors) = lex(expr_source);
        if !errors.is_empty() {
            return Err(errors);
        }
        let e = parse_expression(&tokens, expr_source.len()).map_err(|e| vec![e])?;
        let errors = check_expression(self.shared.scope(), &self.shared.sigs, expr_source, &e);
        if !errors.is_empty() {
            return Err(sorted(errors));
        }
        let mut ev = Eval::new(&self.shared, false);
        ev.memo = self.values.clone();
        match ev.eval(&e, &[], None) {
            Ok(Value::Strategy(s)) => Ok(s),
            Ok(v) => Err(vec![Diagnostic::new(
                e.span,
                format!("expected a strategy, found {}", v.kind().article()),
            )]),
            Err(d) => Err(vec![d]),
        }
    }
}
