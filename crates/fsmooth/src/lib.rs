//! F-smooth rewritten by ELEVATE (thesis §5.7, "Case study: automatic
//! differentiation"; the language is from Shaikhha et al., "Efficient
//! differentiable programming in a functional array-processing language",
//! ICFP 2019).
//!
//! ELEVATE is not tied to RISE: this crate implements a second, unrelated
//! language and rewrites it with the *unchanged* `elevate` crate, whose
//! combinators and traversals are generic over the program type.
//!
//! * [`Expr`]: F-smooth terms — `build`, indexing, `length`, `ifold`, `let`,
//!   lambdas, scalar operations, pairs; vectors and matrices are arrays.
//!   Immutable and shared, with cached free variables ([`expr`]).
//! * [`parse_program`] reads the text syntax (`input M : Matrix` lines, then an
//!   expression); [`check_program`] infers types; [`interp`] evaluates.
//! * [`diff_program`] is forward-mode differentiation producing F-smooth, with
//!   dual numbers as pairs ([`diff`]); `deriv`, `grad` and `jacob` are
//!   constructs in programs, expanded by forward mode ([`derivatives`]).
//! * [`rules`] are the F-smooth simplification rules as ELEVATE strategies
//!   (`buildGet`, `lenBuild`, `letPartialEval`, `letApp`, `funToLet`, fusion,
//!   partial evaluation, loop and algebraic rules); [`strategies`] composes them
//!   (`simplify`, and `fig5_13`, the strategy that rewrites the doubly
//!   transposed matrix of thesis Figure 5.13); [`traverse`] has the F-smooth
//!   traversals and locations (`child(generator, s)`, `outermost(is(ifold), s)`).
//! * [`library`] registers all of them for the `.elv` strategy language
//!   (shared with RISE): strategies are written inline
//!   ([`library::parse_strategy`]) or in files of definitions ([`library::load`]).
//! * [`verify`] checks rewrites and derivatives against the interpreter on
//!   random inputs.
//!
//! ```
//! use fsmooth::{parse_program, rewrite, strategies};
//! let p = parse_program(
//!     "input M : Matrix
//!      let MT = build (length M[0]) (fun i -> build (length M) (fun j -> M[j][i])) in
//!      build (length MT[0]) (fun i -> build (length MT) (fun j -> MT[j][i]))",
//! ).unwrap();
//! let r = rewrite(&p, &strategies::fig_5_13(), true).unwrap();
//! assert_eq!(
//!     r.program.body.to_string(),
//!     "build (length M) (fun i -> build (length M[0]) (fun j -> M[i][j]))"
//! );
//! assert_eq!(r.rule_applications(), 12);
//! ```
#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod check;
pub mod cost;
pub mod derivatives;
pub mod diff;
pub mod expr;
pub mod interp;
pub mod lexer;
pub mod library;
pub mod parser;
mod print;
pub mod random;
pub mod rules;
mod sharing;
pub mod strategies;
pub mod traverse;
pub mod types;
pub mod verify;

pub use check::{check_program, elaborate, infer_expr};
pub use derivatives::expand_derivatives;
pub use diagnostics::{Diagnostic, Span};
pub use diff::{diff_program, gradient_program};
pub use expr::{Env, Expr, ExprKind, Name, Prim};
pub use parser::{parse_expr, parse_program, parse_type};
pub use types::Type;

use elevate::{Ctx, Strategy, TraceEntry};

/// A declared input of a program: `input NAME : TYPE`.
#[derive(Clone, Debug, PartialEq)]
pub struct Input {
    /// Its name.
    pub name: Name,
    /// Its type.
    pub ty: Type,
    /// Where it is declared.
    pub span: Span,
}

/// An F-smooth program: typed inputs and a body that may mention them.
#[derive(Clone, Debug, PartialEq)]
pub struct Program {
    /// The inputs, in declaration order.
    pub inputs: Vec<Input>,
    /// The expression computed from them.
    pub body: Expr,
}

impl Program {
    /// The inputs' names and types.
    pub fn scope(&self) -> Vec<(Name, Type)> {
        self.inputs
            .iter()
            .map(|i| (i.name.clone(), i.ty.clone()))
            .collect()
    }

    /// The same inputs with another body.
    pub fn with_body(&self, body: Expr) -> Program {
        Program {
            inputs: self.inputs.clone(),
            body,
        }
    }
}

/// The outcome of rewriting a program with a strategy.
pub struct Rewritten {
    /// The rewritten program.
    pub program: Program,
    /// ELEVATE's step count: every successful rule application, `id` (also
    /// the `id` inside `try`, `repeat` and `normalize`) and successful
    /// traversal step.
    pub steps: u64,
    /// Every rule application, when a trace was asked for (the first
    /// [`elevate::MAX_TRACE`] of them).
    pub trace: Option<Vec<TraceEntry>>,
    /// How many rules applied, traced or not.
    pub rules_applied: u64,
}

impl Rewritten {
    /// How many rules applied (traced or not).
    pub fn rule_applications(&self) -> u64 {
        self.rules_applied
    }
}

/// Rewrites the body of `p` with `s`, optionally recording a trace. A strategy
/// that fails or exhausts the step budget gives an error message.
pub fn rewrite(p: &Program, s: &Strategy<Expr>, trace: bool) -> Result<Rewritten, String> {
    rewrite_with(p, s, trace, default_budget(p)).map_err(|f| f.message)
}

/// Why a rewrite stopped: the message, and the rule applications before it
/// (when a trace was asked for).
#[derive(Clone, Debug)]
pub struct RewriteFailure {
    /// What went wrong.
    pub message: String,
    /// The rule applications up to the failure.
    pub trace: Vec<TraceEntry>,
}

/// The strategy-application budget for rewriting `p` when none is given: the
/// ELEVATE default, scaled up for large programs (a normal form of a term of
/// `n` nodes can take a number of applications growing like `n²`).
pub fn default_budget(p: &Program) -> u64 {
    let n = p.body.size() as u64;
    elevate::DEFAULT_BUDGET.max(n.saturating_mul(n).saturating_mul(2_000))
}

/// How long one rewrite of [`rewrite_with`] may run before it stops as not terminating.
/// ELEVATE's default (20 s) was reached by `inlineAll` on a tanh layer's gradient in an
/// unoptimized build on a busy machine, which made [`simplify_program`] keep the other,
/// costlier result: the budget of strategy applications is what bounds the work, the time
/// only a program that would run for minutes.
pub const REWRITE_TIME_LIMIT: std::time::Duration = std::time::Duration::from_secs(300);

/// [`rewrite`] with a budget of strategy applications. The rewrite runs with
/// the types of the program's inputs in its [`Env`] (for rules that need types).
pub fn rewrite_with(
    p: &Program,
    s: &Strategy<Expr>,
    trace: bool,
    budget: u64,
) -> Result<Rewritten, RewriteFailure> {
    let mut ctx: Ctx<Expr> = Ctx::new(Env::with_scope(p.scope()))
        .with_budget(budget)
        .with_time_limit(REWRITE_TIME_LIMIT);
    if trace {
        ctx = ctx.with_trace();
    }
    match ctx.run(s, &p.body) {
        Ok(body) => Ok(Rewritten {
            program: p.with_body(body),
            steps: ctx.steps(),
            trace: ctx.trace().map(<[TraceEntry]>::to_vec),
            rules_applied: ctx.rules_applied(),
        }),
        Err(f) => {
            let mut message = format!("the strategy `{}` failed: {f}", s.short());
            if f.is_abort() && message.contains("does not seem to terminate") {
                message.push_str(&format!(
                    "; the budget was {budget} strategy applications: raise it with `--budget N`"
                ));
            }
            Err(RewriteFailure {
                message,
                trace: ctx.trace().map(<[TraceEntry]>::to_vec).unwrap_or_default(),
            })
        }
    }
}

/// The outcome of [`simplify_program`].
pub struct Simplified {
    /// The simplified program, with its trace.
    pub rewritten: Rewritten,
    /// The named strategy whose result was kept (`"none"`: the input itself).
    pub strategy: &'static str,
    /// The cost of the input ([`cost::cost`]; `None` where it cannot be
    /// measured: function inputs, or evaluation fails at the measured sizes).
    pub before: Option<cost::Cost>,
    /// The cost of the result.
    pub after: Option<cost::Cost>,
}

/// The default simplification: the [`strategies::simplify`] strategy (built
/// from rules that never add work) and [`strategies::inline_all`] (the
/// paper's, which inlines every `let` and so may repeat work, but also fuses
/// `let`-bound arrays into their uses) are both run, and the cheaper result
/// under the cost model ([`cost`]) is kept, provided it costs no more than
/// the input at any measured size; if neither does, the input is kept. Where
/// costs cannot be measured, the result of `simplify` is kept. The
/// differentiation constructs (`deriv`, `grad`, `jacob`) are expanded first
/// ([`derivatives`]).
pub fn simplify_program(
    p: &Program,
    trace: bool,
    budget: u64,
) -> Result<Simplified, RewriteFailure> {
    let p = &expand_derivatives(p).map_err(|d| RewriteFailure {
        message: d.message,
        trace: Vec::new(),
    })?;
    let before = cost::cost(p);
    let main = rewrite_with(p, &strategies::simplify(), trace, budget)?;
    let main_cost = cost::cost(&main.program);
    let Some(limit) = before.clone() else {
        return Ok(Simplified {
            rewritten: main,
            strategy: "simplify",
            before,
            after: main_cost,
        });
    };
    let mut best: Option<(Rewritten, &'static str, cost::Cost)> = None;
    let mut consider = |r: Rewritten, name: &'static str, c: Option<cost::Cost>| {
        if let Some(c) = c.filter(|c| c.no_more_than(&limit)) {
            if best
                .as_ref()
                .is_none_or(|(_, _, b)| c.largest() < b.largest())
            {
                best = Some((r, name, c));
            }
        }
    };
    consider(main, "simplify", main_cost);
    if let Ok(all) = rewrite_with(p, &strategies::inline_all(), trace, budget) {
        let c = cost::cost(&all.program);
        consider(all, "inlineAll", c);
    }
    Ok(match best {
        Some((rewritten, strategy, c)) => Simplified {
            rewritten,
            strategy,
            before,
            after: Some(c),
        },
        None => Simplified {
            rewritten: Rewritten {
                program: p.clone(),
                steps: 0,
                trace: trace.then(Vec::new),
                rules_applied: 0,
            },
            strategy: "none",
            after: before.clone(),
            before,
        },
    })
}
