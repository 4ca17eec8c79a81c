//! `shine.compile`, the `Kernel` it returns, and `shine.eval`.

use crate::cache;
use crate::convert;
use crate::device::{self, CudaCall, Place};
use crate::errors::{raise, Stage};
use crate::fast::{FastPlan, Outcome};
use pyo3::exceptions::PyRuntimeWarning;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyTuple};
use shine::inputs::Given;
use shine::{
    schedules, Artifact, Built, Code, Executable, Inputs, Options, RunOptions, SourceFile,
    StrategySource, Target,
};
use std::sync::{Arc, OnceLock};

/// A compiled definition, called like a function on numpy arrays.
#[pyclass(module = "shine", frozen)]
pub struct Kernel {
    /// How the artifact is made: the general path needs it; a kernel from the cache makes
    /// it on first use.
    recipe: Recipe,
    artifact: OnceLock<Artifact>,
    /// The definition's name, type and generated code.
    def: String,
    scheme: String,
    source: String,
    options: RunOptions,
    /// The strategy that lowered the definition and where it comes from (`--explain`).
    explanation: String,
    /// The code built once: C as a library or a module, GPU kernels on their first call.
    built: Option<Built>,
    /// The fast path: C code loaded in this process whose parameters are plain arrays.
    fast: Option<FastPlan>,
}

/// What the front end is run on.
struct Recipe {
    program: SourceFile,
    def: String,
    strategy: StrategySource,
    origin: Origin,
    target: Target,
    options: Options,
}

impl Recipe {
    /// The artifact: the front end and the code generator.
    fn compile(&self) -> Result<Artifact, shine::Error> {
        shine::compile(
            &self.program,
            &self.def,
            Some(&self.strategy),
            self.target,
            &self.options,
        )
        .map_err(|e| noted(e, &self.strategy, &self.origin, self.target))
    }

    /// The key of the front end's result in the cache.
    fn key(&self) -> String {
        cache::front_end_key(&[
            &self.program.text,
            &self.def,
            &self.strategy.file.text,
            &self.strategy.apply,
            self.target.name(),
            &self.options.budget.to_string(),
            &self.options.unchecked_indices.to_string(),
        ])
    }
}

/// Where the strategy comes from, as the command line tells it.
enum Origin {
    File,
    BuiltIn,
    Default,
}

/// `shine.compile(source_or_path, def_name, strategy=None, target="c", *, strategy_file=None,
/// fast_math=False, cflags=None, cc="gcc", budget=None, unchecked_indices=False)`.
#[pyfunction]
#[pyo3(signature = (source, def_name, strategy=None, target="c", *, strategy_file=None,
    fast_math=false, cflags=None, cc="gcc", budget=None, unchecked_indices=false))]
#[allow(clippy::too_many_arguments)]
pub fn compile(
    py: Python<'_>,
    source: &Bound<'_, PyAny>,
    def_name: &str,
    strategy: Option<String>,
    target: &str,
    strategy_file: Option<&Bound<'_, PyAny>>,
    fast_math: bool,
    cflags: Option<String>,
    cc: &str,
    budget: Option<u64>,
    unchecked_indices: bool,
) -> PyResult<Kernel> {
    let target: Target = target
        .parse()
        .map_err(|e: String| raise(Stage::Compile, format!("error: {e}")))?;
    let program = source_file(source, "rise", "<source>")?;
    let strategy_file = strategy_file
        .map(|f| source_file(f, "elv", "<strategy>"))
        .transpose()?;
    let options = Options {
        budget: budget.unwrap_or(Options::default().budget),
        unchecked_indices,
    };
    let (strategy, origin) = match (strategy_file, strategy) {
        (Some(file), Some(apply)) => (StrategySource { file, apply }, Origin::File),
        (Some(_), None) => {
            return Err(raise(
                Stage::Compile,
                "error: strategy_file= needs strategy=, the name or expression to apply",
            ))
        }
        (None, Some(apply)) => (schedules::strategy(&apply), Origin::BuiltIn),
        (None, None) => (
            schedules::default_compiling(&program, def_name, target, &options),
            Origin::Default,
        ),
    };
    let run_options = RunOptions {
        cc: cc.to_string(),
        cflags,
        fast_math,
        ..RunOptions::default()
    };
    let recipe = Recipe {
        program,
        def: def_name.to_string(),
        strategy,
        origin,
        target,
        options,
    };
    kernel_of(py, recipe, run_options)
}

/// A kernel of `strategy_file`'s definition `apply` applied to `def_name` of `program`, with
/// the library's default options (`shine.explore`'s best candidates).
pub(crate) fn compile_from_strategy(
    py: Python<'_>,
    program: SourceFile,
    def_name: &str,
    strategy_file: SourceFile,
    apply: &str,
    target: Target,
) -> PyResult<Kernel> {
    let recipe = Recipe {
        program,
        def: def_name.to_string(),
        strategy: StrategySource {
            file: strategy_file,
            apply: apply.to_string(),
        },
        origin: Origin::File,
        target,
        options: Options::default(),
    };
    kernel_of(py, recipe, RunOptions::default())
}

/// The kernel of a recipe: the front end's result from the cache or compiled, then built.
fn kernel_of(py: Python<'_>, recipe: Recipe, run_options: RunOptions) -> PyResult<Kernel> {
    let target = recipe.target;
    let fast_math = run_options.fast_math;
    let explanation = explain(&recipe.strategy, &recipe.origin, target);
    let mut warnings = Vec::new();
    // C and OpenMP code that may run in this process: the front end's result may be cached
    let key = (!target.is_gpu() && !fast_math).then(|| recipe.key());
    let cached = key
        .as_ref()
        .and_then(|k| cache::read_front_end(k, &mut warnings));
    let kernel = match cached {
        Some(front) => from_front_end(py, recipe, front, run_options, explanation, &mut warnings)?,
        None => {
            let artifact = py
                .detach(|| recipe.compile())
                .map_err(|e| raise(Stage::Compile, e))?;
            let (built, fast) = build(py, &artifact, &run_options, &mut warnings)?;
            if let (Some(key), Some(Built::Library(_)), Code::C(module)) =
                (&key, &built, &artifact.code)
            {
                store_front_end(key, &artifact, module);
            }
            Kernel {
                def: artifact.def().to_string(),
                scheme: artifact.lowered.scheme.to_string(),
                source: artifact.code.source().to_string(),
                artifact: OnceLock::from(artifact),
                recipe,
                options: run_options,
                explanation,
                built,
                fast,
            }
        }
    };
    warn(py, &warnings)?;
    Ok(kernel)
}

/// A kernel of C code from the front end's cached result: its library from the cache too, the
/// artifact made only if the general path needs it.
fn from_front_end(
    py: Python<'_>,
    recipe: Recipe,
    front: cache::FrontEnd,
    options: RunOptions,
    explanation: String,
    warnings: &mut Vec<String>,
) -> PyResult<Kernel> {
    let config = options
        .compiler_config()
        .map_err(|e| raise(Stage::Compile, e))?;
    let target = recipe.target.name();
    let cached = py
        .detach(|| cache::library(&front.source, &front.entry, target, &config))
        .map_err(|e| raise(Stage::Compile, format!("error: {e}")))?;
    warnings.extend(cached.warnings);
    let fast = rise::syntax::parse_type(&front.scheme)
        .ok()
        .and_then(|scheme| FastPlan::of(&front.def, &scheme, &front.sizes));
    Ok(Kernel {
        recipe,
        artifact: OnceLock::new(),
        def: front.def,
        scheme: front.scheme,
        source: front.source,
        options,
        explanation,
        built: Some(Built::Library(cached.library)),
        fast,
    })
}

/// Stores what the front end produced for `artifact`, if its type prints as it parses (the
/// fast path's plan is made from the type again).
fn store_front_end(key: &str, artifact: &Artifact, module: &codegen::CModule) {
    let scheme = artifact.lowered.scheme.to_string();
    if rise::syntax::parse_type(&scheme).ok().as_ref() != Some(&artifact.lowered.scheme) {
        return;
    }
    cache::write_front_end(
        key,
        &cache::FrontEnd {
            def: artifact.def().to_string(),
            entry: module.entry.clone(),
            sizes: artifact
                .sizes()
                .iter()
                .map(|v| v.name().to_string())
                .collect(),
            scheme,
            source: module.source.clone(),
        },
    );
}

/// Shows `warnings` as Python `RuntimeWarning`s.
fn warn(py: Python<'_>, warnings: &[String]) -> PyResult<()> {
    for warning in warnings {
        let text = std::ffi::CString::new(warning.as_str()).unwrap_or_default();
        PyErr::warn(py, &py.get_type::<PyRuntimeWarning>(), &text, 1)?;
    }
    Ok(())
}

/// The C code of `artifact` built: in this process (from the cache) unless it calls foreign
/// functions or uses fast math (those run as a child process), with the fast path's plan.
fn build(
    py: Python<'_>,
    artifact: &Artifact,
    options: &RunOptions,
    warnings: &mut Vec<String>,
) -> PyResult<(Option<Built>, Option<FastPlan>)> {
    let Code::C(module) = &artifact.code else {
        // GPU kernels: built by the device's compiler on the first call, kept for the next
        return Ok((Some(Built::Gpu(Arc::default())), None));
    };
    let compile_error = |e: shine::Error| raise(Stage::Compile, e);
    let foreign = !artifact.lowered.checked.foreign.is_empty();
    if foreign || options.fast_math {
        let built = py
            .detach(|| Built::module(artifact, options))
            .map_err(compile_error)?;
        return Ok((Some(built), None));
    }
    let config = options.compiler_config().map_err(compile_error)?;
    let target = artifact.target.name();
    let cached = py
        .detach(|| cache::library(&module.source, &module.entry, target, &config))
        .map_err(|e| raise(Stage::Compile, format!("error: {e}")))?;
    warnings.extend(cached.warnings);
    let sizes: Vec<String> = artifact
        .sizes()
        .iter()
        .map(|v| v.name().to_string())
        .collect();
    let fast = FastPlan::of(artifact.def(), &artifact.lowered.scheme, &sizes);
    Ok((Some(Built::Library(cached.library)), fast))
}

/// The program or strategy file `x`: a path (`os.PathLike`, or a string naming a `.EXT`
/// file on one line), or the text itself (called `unnamed` in messages).
pub(crate) fn source_file(x: &Bound<'_, PyAny>, ext: &str, unnamed: &str) -> PyResult<SourceFile> {
    let read =
        |path: std::path::PathBuf| SourceFile::read(&path).map_err(|e| raise(Stage::Compile, e));
    if let Ok(text) = x.extract::<String>() {
        let is_path = !text.contains('\n') && text.trim_end().ends_with(&format!(".{ext}"));
        return if is_path {
            read(text.trim_end().into())
        } else {
            Ok(SourceFile::new(unnamed, text))
        };
    }
    read(x.extract::<std::path::PathBuf>()?)
}

/// The strategy and where it comes from, as `shine compile --explain` says it.
fn explain(strategy: &StrategySource, origin: &Origin, target: Target) -> String {
    let (from, show) = match origin {
        Origin::File => (format!("from `{}`", strategy.file.name), ""),
        Origin::BuiltIn => ("built in".to_string(), SHOW),
        Origin::Default => (
            format!(
                "the default schedule for --target {} (no --strategy given)",
                target.name()
            ),
            SHOW,
        ),
    };
    format!("strategy: `{}`, {from}{show}", strategy.apply)
}

const SHOW: &str = "; `shine strategies --show` prints its definition, to read or copy";

/// An error of the pipeline, with the command line's note on a schedule the user did not
/// write.
fn noted(
    e: shine::Error,
    strategy: &StrategySource,
    origin: &Origin,
    target: Target,
) -> shine::Error {
    match origin {
        Origin::File => e,
        Origin::BuiltIn => e.with_note(format!(
            "`{}` is a built-in schedule (`shine strategies --show` prints them)",
            strategy.apply
        )),
        Origin::Default => e.with_note(format!(
            "no strategy was given: `{}` is the default schedule for target {} (`shine \
             strategies --show` prints it); give a strategy of your own with strategy= (and \
             strategy_file=)",
            strategy.apply,
            target.name()
        )),
    }
}

#[pymethods]
impl Kernel {
    /// `k(*arrays, out=None, **sizes)`: runs the definition on the arrays.
    #[pyo3(signature = (*arrays, out=None, **sizes))]
    fn __call__<'py>(
        &self,
        arrays: &Bound<'py, PyTuple>,
        out: Option<&Bound<'py, PyAny>>,
        sizes: Option<&Bound<'py, PyDict>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let py = arrays.py();
        let nats = nats(sizes)?;
        if device::place(arrays, out, self.recipe.target, &self.def)? == Place::Cuda {
            return self.call_on_device(arrays, out, &nats);
        }
        let inputs = arrays
            .iter()
            .enumerate()
            .map(|(i, x)| convert::as_ndarray(&x, i + 1))
            .collect::<PyResult<Vec<_>>>()?;
        if let (Some(plan), Some(Built::Library(library))) = (&self.fast, &self.built) {
            if let Outcome::Done(result) = plan.call(library, &inputs, &nats, out)? {
                return Ok(result);
            }
        }
        let given = givens(&inputs)?;
        let result = self.run_general(py, given, &nats)?;
        match out {
            Some(out) => convert::copy_into(&result, out),
            None => Ok(result),
        }
    }

    /// The generated code: C, or the GPU kernels with the host's plan as their first comment.
    #[getter]
    fn source(&self) -> &str {
        &self.source
    }

    /// The definition's type, as `shine check` prints it.
    #[getter]
    fn r#type(&self) -> &str {
        &self.scheme
    }

    /// The definition's name.
    #[getter]
    fn def_name(&self) -> &str {
        &self.def
    }

    /// The target's name.
    #[getter]
    fn target(&self) -> &str {
        self.recipe.target.name()
    }

    /// Whether calls run the code in this process (C and OpenMP without foreign functions
    /// or fast math), rather than in a child process or on a GPU device.
    #[getter]
    fn in_process(&self) -> bool {
        matches!(self.built, Some(Built::Library(_)))
    }

    /// How many times the GPU kernels were built by the device's compiler (0 for C, and
    /// before the first call; then one per index width the calls' sizes needed, 32 or 64
    /// bits): calls reuse the build.
    #[getter]
    fn device_builds(&self) -> usize {
        match &self.built {
            Some(Built::Gpu(builds)) => builds.count(),
            _ => 0,
        }
    }

    /// The schedule: which strategy lowered the definition and where it comes from (what
    /// `shine compile --explain` prints).
    fn explain(&self) -> &str {
        &self.explanation
    }

    fn __repr__(&self) -> String {
        let how = match self.built {
            Some(Built::Library(_)) => "in process",
            Some(Built::Module(_)) => "child process",
            Some(Built::Gpu(_)) | None => "device",
        };
        format!(
            "<shine.Kernel {} ({}, {how})>",
            self.def,
            self.recipe.target.name()
        )
    }
}

impl Kernel {
    /// The artifact, made by the front end on first use for a kernel from the cache.
    fn artifact(&self, py: Python<'_>) -> PyResult<&Artifact> {
        if let Some(artifact) = self.artifact.get() {
            return Ok(artifact);
        }
        let artifact = py
            .detach(|| self.recipe.compile())
            .map_err(|e| raise(Stage::Compile, e))?;
        Ok(self.artifact.get_or_init(|| artifact))
    }

    /// A call on arrays in CUDA device memory, used in place ([`crate::device`]).
    fn call_on_device<'py>(
        &self,
        arrays: &Bound<'py, PyTuple>,
        out: Option<&Bound<'py, PyAny>>,
        nats: &[(String, i64)],
    ) -> PyResult<Bound<'py, PyAny>> {
        let Some(Built::Gpu(builds)) = &self.built else {
            return Err(raise(
                Stage::Input,
                format!("error: `{}` has no GPU kernels (internal error)", self.def),
            ));
        };
        let call = CudaCall {
            artifact: self.artifact(arrays.py())?,
            builds,
            fast_math: self.options.fast_math,
        };
        call.call(arrays, out, nats)
    }

    /// The general path: the inputs fitted and bound by the library, the code run through
    /// an [`Executable`], the result converted part by part.
    fn run_general<'py>(
        &self,
        py: Python<'py>,
        given: Vec<Given>,
        nats: &[(String, i64)],
    ) -> PyResult<Bound<'py, PyAny>> {
        let artifact = self.artifact(py)?;
        let mut executable = py
            .detach(|| {
                Executable::with_built(
                    artifact,
                    Inputs::Arrays(given),
                    nats,
                    &self.options,
                    self.built.clone(),
                )
                .map(Detached)
            })
            .map_err(|e| raise(Stage::Input, e))?;
        let job = Detached(&mut executable.0);
        let output = py
            .detach(move || job.into_inner().run().map(Detached))
            .map_err(|e| raise(Stage::Execution, e))?;
        convert::output(py, &output.0)
    }
}

/// A value moved across `Python::detach`, which asks for `Send`: the executable and its
/// result stay on this thread, only the GIL is released.
struct Detached<T>(T);

// SAFETY: `detach` runs the closure on the calling thread; the value never changes threads.
unsafe impl<T> Send for Detached<T> {}

impl<T> Detached<T> {
    /// The value (a method, so that a closure captures the whole wrapper, not its field).
    fn into_inner(self) -> T {
        self.0
    }
}

/// The sizes given as keyword arguments: natural numbers.
fn nats(sizes: Option<&Bound<'_, PyDict>>) -> PyResult<Vec<(String, i64)>> {
    let Some(sizes) = sizes else {
        return Ok(Vec::new());
    };
    sizes
        .iter()
        .map(|(k, v)| {
            let name: String = k.extract()?;
            let value: i64 = v.extract().map_err(|_| {
                raise(
                    Stage::Input,
                    format!("error: the size {name}={v} is not a natural number"),
                )
            })?;
            if value < 0 {
                return Err(raise(
                    Stage::Input,
                    format!("error: `{value}` is negative; sizes are natural numbers"),
                ));
            }
            Ok((name, value))
        })
        .collect()
}

/// The inputs as the library reads `.npy` files, named `input 1`, `input 2`, ...
fn givens(inputs: &[Bound<'_, PyAny>]) -> PyResult<Vec<Given>> {
    inputs
        .iter()
        .enumerate()
        .map(|(i, a)| convert::given(a, &format!("input {}", i + 1)))
        .collect()
}

/// `shine.eval(source_or_path, def_name, *arrays, cc="gcc", **sizes)`: the reference
/// interpreter.
#[pyfunction]
#[pyo3(signature = (source, def_name, *arrays, cc="gcc", **sizes))]
pub fn eval<'py>(
    source: &Bound<'py, PyAny>,
    def_name: &str,
    arrays: &Bound<'py, PyTuple>,
    cc: &str,
    sizes: Option<&Bound<'py, PyDict>>,
) -> PyResult<Bound<'py, PyAny>> {
    let py = source.py();
    let program = source_file(source, "rise", "<source>")?;
    py.detach(|| program.check().map(drop))
        .map_err(|e| raise(Stage::Compile, e))?;
    let inputs = arrays
        .iter()
        .enumerate()
        .map(|(i, x)| convert::as_ndarray(&x, i + 1))
        .collect::<PyResult<Vec<_>>>()?;
    let given = givens(&inputs)?;
    let nats = nats(sizes)?;
    let def = def_name.to_string();
    let output = py
        .detach(|| shine::evaluate(&program, &def, shine::Inputs::Arrays(given), &nats, cc))
        .map_err(|e| raise(Stage::Unknown, e))?;
    convert::output(py, &output)
}
