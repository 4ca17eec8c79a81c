//! The pipeline from RISE source to code (ARCHITECTURE.md: `compile(program, strategy, target)`).
//!
//! ```text
//! program text ─parse, check─▶ definition ─strategy─▶ lowered ─DPIA─▶ imperative ─codegen─▶ Artifact
//! ╰─────────────────────────────── lower (every target) ──────────────────────────╯
//! ```
//!
//! [`lower`] is the front end, the same for every target: the program is parsed and
//! type-checked, the definition rewritten by the strategy (when there is one) and translated to
//! imperative DPIA, with the size constraints of the definition as lowered. [`compile`] then
//! runs the code generator of the target: C or OpenMP ([`codegen::generate`]), OpenCL or CUDA
//! ([`codegen::generate_gpu`]). The [`Artifact`] holds the code and what running it needs;
//! [`Executable`](crate::Executable) runs it and [`verify`](crate::verify) compares it with the
//! interpreter.
//!
//! ```no_run
//! use shine::{compile, Options, SourceFile, StrategySource, Target};
//! # fn main() -> Result<(), shine::Error> {
//! let program = SourceFile::new("scal.rise", "def scal : ...");
//! let strategy = StrategySource {
//!     file: SourceFile::new("scal.elv", "def lower = ..."),
//!     apply: "lower".into(),
//! };
//! let artifact = compile(&program, "scal", Some(&strategy), Target::OpenMp, &Options::default())?;
//! println!("{}", artifact.code.source());
//! # Ok(()) }
//! ```

use crate::{Error, Phrase, Setting, SourceFile, Stage};
use elevate::Ctx;
use rise::infer::{prepare_def, CheckedProgram};
use rise::{NameGen, SizeConstraint, Type};

/// The code a program is compiled to: the compiler's one target enum ([`codegen::Target`]).
pub use codegen::Target;

/// How the pipeline runs.
#[derive(Clone, Debug)]
pub struct Options {
    /// Stop rewriting after this many strategy applications.
    pub budget: u64,
    /// Indices read from data are used without checks ([`codegen::Options`]; the CLI's
    /// `--unchecked-indices`).
    pub unchecked_indices: bool,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            budget: elevate::DEFAULT_BUDGET,
            unchecked_indices: false,
        }
    }
}

/// A strategy: an ELEVATE strategy file (`.elv`) and what to apply, a definition of the file
/// or an expression over its definitions (`"blocking ; lowerToC"`).
#[derive(Clone, Debug)]
pub struct StrategySource {
    /// The strategy file.
    pub file: SourceFile,
    /// The strategy to apply.
    pub apply: String,
}

impl StrategySource {
    /// The strategy to apply, with errors in the file or in the expression as diagnostics.
    pub fn parse(&self) -> Result<elevate::Strategy<rise::Expr>, Error> {
        Ok(self.load()?.strategy)
    }

    /// The strategy to apply and where its parts were written, for [`Self::failure`].
    pub fn load(&self) -> Result<LoadedStrategy, Error> {
        let registry = rewrite::library::registry();
        let module = elv::load(&self.file.text, &registry).map_err(|ds| self.file.errors(ds))?;
        let strategy = if module.definitions().any(|(n, _)| n == self.apply) {
            module
                .strategy(&self.apply)
                .map_err(|d| self.file.error(d))?
        } else {
            module
                .expression(&self.apply)
                .map_err(|ds| self.inline().errors(ds))?
        };
        Ok(LoadedStrategy {
            strategy,
            origins: module.origins(),
        })
    }

    /// The expression to apply as a source (named `<strategy>` in diagnostics).
    fn inline(&self) -> SourceFile {
        SourceFile::new("<strategy>", self.apply.as_str())
    }

    /// The error of a strategy that failed on `what` (`` `mm` ``, "the program"): the sub-strategy that
    /// failed as the user wrote it, shown at its place in the strategy file (or in the
    /// expression applied), with its desugared form in a note; the desugared form alone
    /// where the failing strategy was not written by the user (a part of a builtin). A note
    /// names the innermost step that failed and the term it failed on, inside the rules
    /// that applied it ([`elevate::Explanation`]).
    pub fn failure(
        &self,
        failure: &elevate::Failure<rise::Expr>,
        loaded: &LoadedStrategy,
        what: &str,
    ) -> Error {
        let head = format!("the strategy `{}` failed on {what}", self.apply);
        let written = failure.strategy().and_then(|s| {
            let origin = loaded.origins.of(s)?;
            let source = if origin.in_expression {
                self.inline()
            } else {
                self.file.clone()
            };
            let text = one_line(source.text.get(origin.span.range())?);
            Some((source, origin.span, text, s.short()))
        });
        match written {
            Some((source, span, text, desugared)) => {
                let at = failure
                    .location()
                    .map(|l| format!(" at {l}"))
                    .unwrap_or_default();
                let mut d =
                    rise::Diagnostic::new(span, format!("{head}: `{text}` is not applicable{at}"))
                        .with_label(format!("not applicable{at}"));
                if desugared != text {
                    d = d.with_note(format!("as applied: `{desugared}`"));
                }
                if let Some(why) = failure.explanation() {
                    d = d.with_note(why.render());
                }
                source.error(d)
            }
            None => match failure.explanation() {
                Some(why) => Error::from(format!("{head}: {failure}\n  note: {}", why.render())),
                None => Error::from(format!("{head}: {failure}")),
            },
        }
    }
}

/// A strategy ready to apply, with where its parts were written ([`StrategySource::load`]).
#[derive(Clone)]
pub struct LoadedStrategy {
    /// The strategy.
    pub strategy: elevate::Strategy<rise::Expr>,
    /// Where the parts of the strategy were written.
    pub origins: std::sync::Arc<elv::Origins<rise::Expr>>,
}

/// `text` on one line, its runs of white space (and comments' line breaks) one space.
fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// A definition through the front end: checked, lowered by the strategy and translated to
/// imperative DPIA.
#[derive(Clone, Debug)]
pub struct Lowered {
    /// The program's source, for rendering errors of later stages (the interpreter's).
    pub program: SourceFile,
    /// The checked program.
    pub checked: CheckedProgram,
    /// The definition's name.
    pub def: String,
    /// The definition's type scheme (its sizes and parameter types).
    pub scheme: Type,
    /// What the definition as lowered needs of its sizes: the checked definition's
    /// constraints and those the strategy added (`32 divides m` after a `split 32`), over the
    /// sizes of `scheme`. The code is only run on sizes that satisfy them.
    pub constraints: Vec<SizeConstraint>,
    /// The definition as the strategy lowered it (RISE), which `--explain` describes
    /// ([`crate::explain`]).
    pub rise: rise::Expr,
    /// The lowered definition in imperative DPIA.
    pub dpia: dpia::Program,
}

/// Generated code and what running it needs.
#[derive(Clone, Debug)]
pub struct Artifact {
    /// The target the code is for.
    pub target: Target,
    /// The definition the code computes, through the front end.
    pub lowered: Lowered,
    /// The generated code.
    pub code: Code,
}

impl Artifact {
    /// The definition's name.
    pub fn def(&self) -> &str {
        &self.lowered.def
    }

    /// The size parameters of the code, in the order its entry point or kernels take them.
    pub fn sizes(&self) -> &[arith::Var] {
        match &self.code {
            Code::C(_) => &self.lowered.dpia.sizes,
            Code::Gpu(module) => &module.sizes,
        }
    }
}

/// The generated code of an [`Artifact`].
#[derive(Clone, Debug)]
pub enum Code {
    /// A C module (C or OpenMP) with its entry point.
    C(codegen::CModule),
    /// GPU kernels (OpenCL or CUDA) and the host's plan: launches, temporaries, sizes.
    Gpu(codegen::GpuModule),
}

impl Code {
    /// The source text: the C module, or the kernels with the host plan as their first comment.
    pub fn source(&self) -> &str {
        match self {
            Code::C(module) => &module.source,
            Code::Gpu(module) => &module.source,
        }
    }
}

/// Compiles the definition `def` of `program` for `target`: [`lower`], then the target's code
/// generator. Every pass recurses on the depth of the program, so the whole of it runs with a
/// deep stack (`deep::run`): a caller on a thread with a small stack (a worker of a pool, a
/// Python thread) compiles what the command line compiles.
pub fn compile(
    program: &SourceFile,
    def: &str,
    strategy: Option<&StrategySource>,
    target: Target,
    options: &Options,
) -> Result<Artifact, Error> {
    deep::run(|| {
        let lowered = lower(program, def, strategy, options)?;
        let codegen_options = codegen::Options {
            unchecked_indices: options.unchecked_indices,
        };
        let code = generate(&lowered.dpia, target, codegen_options)
            .map_err(|e| Error::from(format!("code generation failed: {e}")).at(Stage::Codegen))?;
        Ok(Artifact {
            target,
            lowered,
            code,
        })
    })
}

/// The front end, the same for every target: parses and checks `program`, applies the
/// strategy to the definition `def` (without one, the definition is compiled as written) and
/// translates it to imperative DPIA (with a deep stack, as [`compile`]).
pub fn lower(
    program: &SourceFile,
    def: &str,
    strategy: Option<&StrategySource>,
    options: &Options,
) -> Result<Lowered, Error> {
    deep::run(|| {
        let checked = program.check().map_err(|e| e.at(Stage::Check))?;
        let prepared = prepare_def(&checked, def).map_err(|d| program.error(d).at(Stage::Check))?;
        let lowered = match strategy {
            Some(s) => {
                let rewrite = RewriteOptions {
                    budget: options.budget,
                    trace: false,
                };
                apply_strategy(s, &format!("`{def}`"), &prepared.body, &rewrite)?.body
            }
            None => prepared.body.clone(),
        };
        let mut dpia = dpia::translate(def, &lowered, &prepared.scheme).map_err(|e| {
            let error = program.error(e.to_diagnostic()).at(Stage::Codegen);
            match strategy {
                Some(_) => error,
                None => error.with_note(
                    Phrase::from("no strategy was given (")
                        .then(Setting::Strategy)
                        .then("); the definition is compiled as written"),
                ),
            }
        })?;
        // the constraints of the type, and those of the program's views after translation
        // (inside `iterate` steps, say); the generated C entry point checks them too
        let mut constraints =
            rise::constraints::of_lowered(&checked, def, &lowered, &prepared.scheme);
        constraints.extend(std::mem::take(&mut dpia.constraints));
        let constraints = rise::constraints::simplify_all(constraints);
        dpia.constraints = constraints.clone();
        Ok(Lowered {
            program: program.clone(),
            checked,
            def: def.to_string(),
            scheme: prepared.scheme,
            constraints,
            rise: lowered,
            dpia,
        })
    })
}

/// The code generator of `target` on the imperative program.
fn generate(
    program: &dpia::Program,
    target: Target,
    options: codegen::Options,
) -> Result<Code, codegen::CodegenError> {
    Ok(if target.is_gpu() {
        Code::Gpu(codegen::generate_gpu_with(program, target, options)?)
    } else {
        Code::C(codegen::generate_with(program, target, options)?)
    })
}

/// What [`rewrite`] does: a budget of strategy applications, and whether to keep a trace.
#[derive(Clone, Debug)]
pub struct RewriteOptions {
    /// Stop after this many strategy applications (0 is an error).
    pub budget: u64,
    /// Keep every step (rule, location, before and after) in [`Rewritten::trace`].
    pub trace: bool,
}

impl Default for RewriteOptions {
    fn default() -> RewriteOptions {
        RewriteOptions {
            budget: elevate::DEFAULT_BUDGET,
            trace: false,
        }
    }
}

/// A program rewritten by a strategy ([`rewrite`], [`rewrite_body`]).
#[derive(Clone, Debug)]
pub struct Rewritten {
    /// The rewritten body.
    pub body: rise::Expr,
    /// Rewrite steps taken.
    pub steps: u64,
    /// Strategy applications (what the budget counts).
    pub applications: u64,
    /// The time the strategy took.
    pub time: std::time::Duration,
    /// Every step, when [`RewriteOptions::trace`] asked for them.
    pub trace: Vec<elevate::TraceEntry>,
}

/// Checks `program` and applies `strategy` to its definition `def` (with a deep stack): the
/// definition's type scheme (rewriting preserves it) and the rewritten body, or why the
/// strategy failed ([`Stage::Check`], [`Stage::Rewrite`]).
pub fn rewrite(
    program: &SourceFile,
    def: &str,
    strategy: &StrategySource,
    options: &RewriteOptions,
) -> Result<(Type, Rewritten), Error> {
    let checked = program.check().map_err(|e| e.at(Stage::Check))?;
    let prepared = prepare_def(&checked, def).map_err(|d| program.error(d).at(Stage::Check))?;
    let rewritten = apply_strategy(strategy, &format!("`{def}`"), &prepared.body, options)?;
    Ok((prepared.scheme, rewritten))
}

/// Applies `strategy` to the expression `body` (with a deep stack), or says why it failed
/// ([`Stage::Rewrite`]); what explore's candidates do to a definition's body.
pub fn rewrite_body(
    strategy: &StrategySource,
    body: &rise::Expr,
    options: &RewriteOptions,
) -> Result<Rewritten, Error> {
    apply_strategy(strategy, "the program", body, options)
}

/// Loads `source` and applies it to `body`, which failures call `what` ([`Stage::Rewrite`]).
fn apply_strategy(
    source: &StrategySource,
    what: &str,
    body: &rise::Expr,
    options: &RewriteOptions,
) -> Result<Rewritten, Error> {
    let rewrite_error = |e: Error| e.at(Stage::Rewrite);
    if options.budget == 0 {
        return Err(rewrite_error(Error::from(
            "a budget of 0 allows no strategy application; give a positive budget (the \
             default is what most strategies need)"
                .to_string(),
        )));
    }
    let loaded = source.load().map_err(rewrite_error)?;
    let (budget, trace) = (options.budget, options.trace);
    let (result, steps, applications, time, log) = on_big_stack(|| {
        let mut ctx = Ctx::new(NameGen::avoiding(body)).with_budget(budget);
        if trace {
            ctx = ctx.with_trace();
        }
        let start = std::time::Instant::now();
        let result = ctx.run(&loaded.strategy, body);
        let log = ctx.trace().map(|t| t.to_vec()).unwrap_or_default();
        (
            result,
            ctx.steps(),
            ctx.applications(),
            start.elapsed(),
            log,
        )
    })
    .map_err(rewrite_error)?;
    let body = result.map_err(|f| rewrite_error(source.failure(&f, &loaded, what)))?;
    Ok(Rewritten {
        body,
        steps,
        applications,
        time,
        trace: log,
    })
}

/// Runs `f` with a deep stack (the `deep` crate: grown on demand, no thread): rewriting
/// recurses over the program. A panic in `f` is an internal error ([`Stage::Internal`]).
pub fn on_big_stack<T>(f: impl FnOnce() -> T) -> Result<T, Error> {
    deep::run_caught("rewriting", f).map_err(|m| Error::from(m).at(Stage::Internal))
}
