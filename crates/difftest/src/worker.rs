//! Running a list of cases on targets, batched, reporting one line per event on a writer:
//! `B idx target` before compiled code runs (so a crash can be attributed) and
//! `R idx target kind detail` for every result.

use crate::case::Case;
use crate::exec::{self, Front, Outcome};
use crate::sched::{self, Target};
use codegen::abi::IndexWidth;
use runtime::GpuProgram;
use std::io::Write;

/// One result line.
pub fn result_line(idx: u64, t: Target, o: &Outcome) -> String {
    let detail: String = o.detail().replace(['\n', '\t'], " ");
    let detail: String = detail.chars().take(600).collect();
    format!("R\t{idx}\t{}\t{}\t{detail}", t.name(), o.kind())
}

/// Runs `cases` on `targets`; case `idx` with target at or before `skip` (in
/// [`sched::TARGETS`] order) is not run again (a resumed chunk after a crash or a restart).
/// Returns `false` when it stopped after a result because the device may be unusable for
/// the cases after it (a CUDA fault): the worker then exits with [`RESTART`].
pub fn run_cases(
    cases: &[(u64, Case)],
    targets: &[Target],
    skip: Option<(u64, Target)>,
    out: &mut dyn Write,
) -> bool {
    let fronts: Vec<Result<Front, Outcome>> = cases.iter().map(|(_, c)| exec::front(c)).collect();
    for &t in sched::TARGETS.iter().filter(|t| targets.contains(t)) {
        let todo: Vec<usize> = (0..cases.len())
            .filter(|&i| !done(skip, cases[i].0, t))
            .collect();
        let go_on = match t {
            Target::C | Target::OpenMp => {
                run_c(cases, &fronts, &todo, t, out);
                true
            }
            Target::OpenCl => run_gpu::<OpenCl>(cases, &fronts, &todo, out),
            Target::Cuda => run_gpu::<Cuda>(cases, &fronts, &todo, out),
        };
        if !go_on {
            return false;
        }
    }
    true
}

/// Whether case `idx` on target `t` ran before the resumption point `skip`: the targets run
/// one after the other ([`sched::TARGETS`] order), each on the cases in order.
fn done(skip: Option<(u64, Target)>, idx: u64, t: Target) -> bool {
    skip.is_some_and(|(k, st)| (t, idx) <= (st, k))
}

fn elv_of(case: &Case, t: Target) -> String {
    let steps = case.steps_for(t);
    if case.def.is_none() {
        // read from files: the one step is the whole module
        return steps.first().cloned().unwrap_or_default();
    }
    sched::elv(steps)
}

/// The outcome when the compiled code cannot be built or run, given the reference.
fn before_run(front: &Result<Front, Outcome>) -> Result<&Front, Outcome> {
    front.as_ref().map_err(Clone::clone)
}

fn refused_or(front: &Front, o: Outcome) -> Outcome {
    match (&front.expected, o) {
        (Err(m), Outcome::Refused(_)) => Outcome::InterpRefused(m.clone()),
        (_, o) => o,
    }
}

fn judge(front: &Front, got: Result<Vec<u8>, runtime::RuntimeError>) -> Outcome {
    use runtime::RuntimeError as E;
    match (&front.expected, got) {
        (Ok(want), Ok(bytes)) => exec::compare(want, &bytes),
        // the compiled code stops on a program error in a value the result does not need,
        // which the strict interpreter stops at too: it computes ahead, not a bug
        (Ok(_), Err(e @ E::ProgramStatus { .. })) => match front.strict_error() {
            Some(strict) => Outcome::StoppedAhead(format!(
                "the interpreter computes (strict: {strict}); the compiled code {e}"
            )),
            None => Outcome::Crash(format!("the interpreter computes; the compiled code {e}")),
        },
        // the interpreter computes a result, the compiled code stops (a crash, an exit): a
        // bug, unless the strict interpreter stops at a foreign function's crash or exit too
        // (a failed foreign call is a failed value, which the compiled code computed ahead)
        (
            Ok(_),
            Err(
                e @ (E::ProgramFailed { .. }
                | E::ProgramKilled { .. }
                | E::ExitedEarly { .. }
                | E::OpenClProcessEnded { .. }
                | E::SanitizerRunFailed { .. }),
            ),
        ) => match front.strict_error() {
            Some(strict) if strict.contains("foreign function") => Outcome::StoppedAhead(format!(
                "the interpreter computes (strict: {strict}); the compiled code {e}"
            )),
            _ => Outcome::Crash(format!("the interpreter computes; the compiled code {e}")),
        },
        (Ok(_), Err(e)) => Outcome::Refused(format!("run: {e}")),
        (Err(m), Ok(_)) => Outcome::Unchecked(format!(
            "the interpreter refuses ({m}); the compiled code ran"
        )),
        (Err(m), Err(e)) => both_stopped(m, &e),
    }
}

/// The outcome where the interpreter stops with `m` and the compiled code with `e`: both
/// on a data-dependent error ([`Outcome::BothFailed`], naming the two errors' kinds), both
/// in a foreign function ([`Outcome::ForeignFailed`]), or a refusal of the interpreter
/// (bad inputs, sizes) that the compiled code refuses too.
fn both_stopped(m: &str, e: &runtime::RuntimeError) -> Outcome {
    use runtime::RuntimeError as E;
    let foreign = m.contains("foreign function `");
    match e {
        E::ProgramStatus { status, .. } if status_kind(*status) != "size-constraint" => {
            Outcome::BothFailed(format!(
                "interpreter {}, compiled code {}: {m}",
                interp_error_kind(m),
                status_kind(*status)
            ))
        }
        E::ProgramKilled { .. }
        | E::ProgramFailed { .. }
        | E::ExitedEarly { .. }
        | E::OpenClProcessEnded { .. }
            if foreign =>
        {
            Outcome::ForeignFailed(format!("{m}; the compiled code {e}"))
        }
        _ => Outcome::InterpRefused(m.to_string()),
    }
}

/// The kind of a status of generated code ([`codegen::EntryStatus`]), as a word.
fn status_kind(status: i32) -> &'static str {
    use codegen::EntryStatus as S;
    match S::from_code(status) {
        Some(S::DivisionByZero) => "division-by-zero",
        Some(S::RemainderByZero) => "remainder-by-zero",
        Some(S::SizeConstraint) => "size-constraint",
        Some(S::IndexOutOfRange) => "index-out-of-range",
        Some(S::DuplicatePosition) => "duplicate-position",
        Some(S::CastOutOfRange) => "cast-out-of-range",
        Some(S::NotNatural) => "not-natural",
        Some(S::ShiftOutOfRange) => "shift-out-of-range",
        Some(S::Computed) | None => "unknown-status",
    }
}

/// The kind of an error of the interpreter, in the words of [`status_kind`] (`other` for
/// errors generated code has no status for, such as a foreign function's).
fn interp_error_kind(m: &str) -> &'static str {
    if m.contains("foreign function `") {
        "foreign-function"
    } else if m.contains("division by zero") {
        "division-by-zero"
    } else if m.contains("remainder by zero") {
        "remainder-by-zero"
    } else if m.contains("is not a natural number") {
        "not-natural"
    } else if m.contains("cast") || m.contains("natType") {
        "cast-out-of-range"
    } else if m.contains("scatter") {
        "duplicate-position"
    } else if m.contains("index") {
        "index-out-of-range"
    } else {
        "other"
    }
}

/// The input buffers of a run (indices `width` wide) and its output buffer, filled
/// with the marker of [`exec::output_for`]: as large as the result type says also where the
/// interpreter has no result (the code may write all of it before it stops on an error).
/// An input the buffers cannot hold refuses the run.
fn run_buffers(
    front: &Front,
    width: IndexWidth,
) -> Result<(Vec<runtime::Buffer>, runtime::Buffer), Outcome> {
    let inputs = front
        .inputs
        .iter()
        .map(|i| Ok(runtime::Buffer::from_bytes(&i.bytes(width)?)))
        .collect::<Result<_, String>>()
        .map_err(Outcome::Refused)?;
    let len = match &front.expected {
        Ok(e) => exec::to_bytes(e).map_err(Outcome::Refused)?.len(),
        Err(_) => front.output_bytes,
    };
    Ok((inputs, exec::output_for(len)))
}

fn emit(out: &mut dyn Write, line: String) {
    let _ = writeln!(out, "{line}");
    let _ = out.flush();
}

fn run_c(
    cases: &[(u64, Case)],
    fronts: &[Result<Front, Outcome>],
    todo: &[usize],
    t: Target,
    out: &mut dyn Write,
) {
    let target = if t == Target::C {
        codegen::Target::C
    } else {
        codegen::Target::OpenMp
    };
    let mut ready: Vec<(usize, (codegen::CModule, Vec<i64>))> = Vec::new();
    for &i in todo {
        let (idx, case) = &cases[i];
        let built = before_run(&fronts[i]).and_then(|f| {
            exec::lower(case, f, &elv_of(case, t))
                .and_then(|p| {
                    let values = exec::size_values(case, &p.sizes)?;
                    let m = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                        codegen::generate(&p, target)
                    }))
                    .map_err(|_| Outcome::Panic("code generation panicked".into()))?
                    .map_err(|e| Outcome::Refused(format!("codegen: {e}")))?;
                    Ok((m, values))
                })
                .map_err(|o| refused_or(f, o))
        });
        match built {
            Ok(m) => ready.push((i, m)),
            Err(o) => emit(out, result_line(*idx, t, &o)),
        }
    }
    if ready.is_empty() {
        return;
    }
    let config = exec::c_config();
    let all: Vec<&codegen::CModule> = ready.iter().map(|(_, (m, _))| m).collect();
    let batch = runtime::Module::compile(&exec::c_batch(&all), "difftest_dispatch", &config);
    type Slot<'a> = (
        usize,
        &'a (codegen::CModule, Vec<i64>),
        Result<std::sync::Arc<runtime::Module>, String>,
        usize,
    );
    let modules: Vec<Slot> = match batch {
        Ok(m) => {
            let m = std::sync::Arc::new(m);
            ready
                .iter()
                .enumerate()
                .map(|(slot, (i, c))| (*i, c, Ok(m.clone()), slot))
                .collect()
        }
        Err(_) => ready
            .iter()
            .map(|(i, c)| {
                let one =
                    runtime::Module::compile(&exec::c_batch(&[&c.0]), "difftest_dispatch", &config)
                        .map(std::sync::Arc::new)
                        .map_err(|e| e.to_string());
                (*i, c, one, 0)
            })
            .collect(),
    };
    for (i, m, module, slot) in modules {
        let idx = &cases[i].0;
        let Ok(front) = &fronts[i] else { continue };
        let outcome = match module {
            Err(e) => Outcome::CodeDoesNotCompile(e),
            Ok(module) => run_one_c(front, &m.1, &module, slot, *idx, t, out),
        };
        emit(out, result_line(*idx, t, &outcome));
    }
}

fn run_one_c(
    front: &Front,
    values: &[i64],
    module: &runtime::Module,
    slot: usize,
    idx: u64,
    t: Target,
    out: &mut dyn Write,
) -> Outcome {
    let mut sizes = vec![slot as i64];
    sizes.extend(values);
    // C indices are 64 bits wide
    let (buffers, mut output) = match run_buffers(front, IndexWidth::Bits64) {
        Ok(buffers) => buffers,
        Err(refused) => return refused,
    };
    let refs: Vec<&runtime::Buffer> = buffers.iter().collect();
    emit(out, format!("B\t{idx}\t{}", t.name()));
    let got = module
        .run(&mut output, &refs, &sizes)
        .map(|()| output.as_bytes().to_vec());
    judge(front, got)
}

/// A GPU runtime the worker runs batches on: its device, how it builds a program, and how
/// many threads a work-group (block) may have.
trait GpuBackend: Sized {
    /// The runtime's program.
    type Program: GpuProgram<Launch = Self::Launch>;
    /// The runtime's launch.
    type Launch: shine::gpu::FromLaunchDims;
    /// The compared target.
    const TARGET: Target;
    /// The device of the runs.
    fn open() -> Result<Self, runtime::RuntimeError>;
    /// Builds `source`.
    fn build(&self, source: &str) -> Result<Self::Program, runtime::RuntimeError>;
    /// The most threads of a work-group (block).
    fn max_threads(&self) -> usize;
    /// Whether `e`, an error of a run, may leave the device unusable for the cases after it
    /// (a CUDA fault is sticky: the context fails every later call).
    fn poisons(e: &runtime::RuntimeError) -> bool;
}

/// The build options of the batched GPU programs of `target`: shine's
/// ([`shine::gpu::build_options`]) for 32-bit indices, without fast math.
fn build_options(target: Target) -> String {
    shine::gpu::build_options(target, false, codegen::gpu::IndexWidth::Bits32)
}

/// OpenCL: the device `SHINE_OPENCL_DEVICE` names, or any; built with shine's options.
struct OpenCl(runtime::OpenClDevice, String);

impl GpuBackend for OpenCl {
    type Program = runtime::OpenClProgram;
    type Launch = runtime::OpenClLaunch;
    const TARGET: Target = Target::OpenCl;
    fn open() -> Result<OpenCl, runtime::RuntimeError> {
        let options = build_options(Target::OpenCl);
        runtime::OpenClDevice::from_env().map(|d| OpenCl(d, options))
    }
    fn build(&self, source: &str) -> Result<runtime::OpenClProgram, runtime::RuntimeError> {
        runtime::OpenClProgram::build(&self.0, source, &self.1)
    }
    fn max_threads(&self) -> usize {
        self.0.max_work_group_size()
    }
    fn poisons(_: &runtime::RuntimeError) -> bool {
        // a fault of a kernel on a CPU platform ends the runtime's OpenCL child process
        // (`OpenClProcessEnded`), and the next run starts a fresh one
        false
    }
}

/// CUDA: device 0, NVRTC with shine's options (the runtime adds the device's architecture
/// unless they name one).
struct Cuda(runtime::CudaDevice, String);

impl GpuBackend for Cuda {
    type Program = runtime::CudaProgram;
    type Launch = runtime::CudaLaunch;
    const TARGET: Target = Target::Cuda;
    fn open() -> Result<Cuda, runtime::RuntimeError> {
        let options = build_options(Target::Cuda);
        runtime::CudaDevice::open(0).map(|d| Cuda(d, options))
    }
    fn build(&self, source: &str) -> Result<runtime::CudaProgram, runtime::RuntimeError> {
        runtime::CudaProgram::build(&self.0, source, &self.1)
    }
    fn max_threads(&self) -> usize {
        shine::gpu::CUDA_MAX_THREADS
    }
    fn poisons(e: &runtime::RuntimeError) -> bool {
        matches!(e, runtime::RuntimeError::Gpu { .. })
    }
}

/// The exit status of a worker that stopped after a result because the device may be
/// unusable: the driver starts a fresh worker after that result.
pub const RESTART: i32 = 75;

/// The GPU code of each case of `todo` for target `t`, or its outcome when there is none.
fn gpu_modules(
    cases: &[(u64, Case)],
    fronts: &[Result<Front, Outcome>],
    todo: &[usize],
    t: Target,
    out: &mut dyn Write,
) -> Vec<(usize, codegen::GpuModule)> {
    let mut ready = Vec::new();
    for &i in todo {
        let (idx, case) = &cases[i];
        let built = before_run(&fronts[i]).and_then(|f| {
            exec::lower(case, f, &elv_of(case, t))
                .and_then(|p| {
                    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                        codegen::generate_gpu_with(&p, t, codegen::Options::default())
                    }))
                    .map_err(|_| Outcome::Panic("GPU code generation panicked".into()))?
                    .map_err(|e| Outcome::Refused(format!("codegen: {e}")))
                })
                .map_err(|o| refused_or(f, o))
        });
        match built {
            Ok(m) => ready.push((i, m)),
            Err(o) => emit(out, result_line(*idx, t, &o)),
        }
    }
    ready
}

/// One GPU program of many cases' kernels (their names are unique: each starts with its
/// case's definition name, `dt{index}z`): shared items once, as [`exec::combine`].
pub fn gpu_batch(modules: &[&codegen::GpuModule]) -> String {
    exec::combine(modules.iter().map(|m| m.source.as_str()))
}

/// Runs the cases of `todo` on the GPU runtime `B`: one build of all their kernels (each
/// case built alone where that fails), then each case; returns `false` when the worker
/// must stop because the device may be unusable ([`GpuBackend::poisons`]).
fn run_gpu<B: GpuBackend>(
    cases: &[(u64, Case)],
    fronts: &[Result<Front, Outcome>],
    todo: &[usize],
    out: &mut dyn Write,
) -> bool {
    let t = B::TARGET;
    let ready = gpu_modules(cases, fronts, todo, t, out);
    if ready.is_empty() {
        return true;
    }
    let dev = match B::open() {
        Ok(d) => d,
        Err(e) => {
            for (i, _) in &ready {
                let o = Outcome::Refused(format!("no {} device: {e}", t.name()));
                emit(out, result_line(cases[*i].0, t, &o));
            }
            return true;
        }
    };
    // cases whose foreign functions call what GPU code lacks are built alone
    let c_only = |i: usize| crate::gen::calls_c_only(&cases[i].1.program);
    let all: Vec<&codegen::GpuModule> = ready
        .iter()
        .filter(|(i, _)| !c_only(*i))
        .map(|(_, m)| m)
        .collect();
    let shared = dev.build(&gpu_batch(&all)).ok();
    for (i, m) in &ready {
        let (idx, case) = &cases[*i];
        let Ok(front) = &fronts[*i] else { continue };
        let own;
        let program = match &shared {
            Some(p) if !c_only(*i) => p,
            _ => match dev.build(&m.source) {
                Ok(p) => {
                    own = p;
                    &own
                }
                Err(e) => {
                    let o = if c_only(*i) {
                        Outcome::ForeignCOnly(format!(
                            "a foreign function calls the C library: {e}"
                        ))
                    } else {
                        Outcome::CodeDoesNotCompile(e.to_string())
                    };
                    emit(out, result_line(*idx, t, &o));
                    continue;
                }
            },
        };
        let mut poisoned = false;
        let outcome = (|| {
            let values = exec::size_values(case, &m.sizes)?;
            let plan =
                exec::gpu_plan::<B::Launch>(m, &values, front.inputs.len(), dev.max_threads())?;
            // 32-bit indices (gpu_plan refuses others): index inputs are 4 bytes
            let (buffers, mut output) = run_buffers(front, IndexWidth::Bits32)?;
            let refs: Vec<&runtime::Buffer> = buffers.iter().collect();
            emit(out, format!("B\t{idx}\t{}", t.name()));
            let got = run_program(program, m, &plan, &mut output, &refs);
            poisoned = got.as_ref().is_err_and(B::poisons);
            Ok(match (got, &front.expected) {
                // the code faulted on the device where the interpreter computes: a bug
                (Err(e), Ok(_)) if poisoned => {
                    Outcome::Crash(format!("the interpreter computes; the compiled code {e}"))
                }
                (got, _) => judge(front, got),
            })
        })();
        let outcome = match outcome {
            Ok(o) => o,
            Err(o) => refused_or(front, o),
        };
        emit(out, result_line(*idx, t, &outcome));
        if poisoned {
            return false;
        }
    }
    true
}

/// Runs the launches of one case planned as `plan`, then reads its status flag; the
/// output's bytes.
fn run_program<P: GpuProgram>(
    program: &P,
    m: &codegen::GpuModule,
    plan: &shine::gpu::HostPlan<P::Launch>,
    output: &mut runtime::Buffer,
    inputs: &[&runtime::Buffer],
) -> Result<Vec<u8>, runtime::RuntimeError> {
    let entry = m.kernels.first().map_or("", |k| k.name.as_str());
    plan.run(program, std::slice::from_mut(output), inputs, entry)?;
    Ok(output.as_bytes().to_vec())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    /// Cases of seed 7 with GPU code (the OpenCL schedule), their fronts and modules.
    type Built = (Vec<(u64, Case)>, Vec<Result<Front, Outcome>>);

    fn gpu_cases(t: Target, n: u64) -> (Built, Vec<(usize, codegen::GpuModule)>) {
        let cases: Vec<(u64, Case)> = (0..n).map(|i| (i, Case::generate(7, i))).collect();
        let fronts: Vec<_> = cases.iter().map(|(_, c)| exec::front(c)).collect();
        let todo: Vec<usize> = (0..cases.len()).collect();
        let ready = gpu_modules(&cases, &fronts, &todo, t, &mut Vec::new());
        ((cases, fronts), ready)
    }

    #[test]
    fn cuda_batch_has_every_kernel_once_under_a_unique_name() {
        let (_, ready) = gpu_cases(Target::Cuda, 40);
        assert!(
            ready.len() >= 3,
            "only {} cases with CUDA code",
            ready.len()
        );
        let all: Vec<&codegen::GpuModule> = ready.iter().map(|(_, m)| m).collect();
        let batch = gpu_batch(&all);
        let mut names = HashSet::new();
        for m in &all {
            assert_eq!(m.target, Target::Cuda);
            for k in &m.kernels {
                assert!(names.insert(k.name.clone()), "kernel `{}` twice", k.name);
                let head = format!("extern \"C\" __global__ void {}(", k.name);
                assert_eq!(batch.matches(&head).count(), 1, "`{head}` in\n{batch}");
            }
        }
        // the index type once, whole, before the kernels
        assert_eq!(batch.matches("#ifdef SHINE_INDEX_64").count(), 1, "{batch}");
        assert_eq!(batch.matches("typedef int shine_index;").count(), 1);
        assert!(batch.find("#endif") < batch.find("__global__"), "{batch}");
    }

    #[test]
    fn opencl_batch_builds_as_one_program() {
        let (_, ready) = gpu_cases(Target::OpenCl, 40);
        let all: Vec<&codegen::GpuModule> = ready.iter().map(|(_, m)| m).collect();
        assert!(all.len() >= 3, "only {} cases with OpenCL code", all.len());
        let dev = OpenCl::open().expect("an OpenCL device (PoCL)");
        if let Err(e) = dev.build(&gpu_batch(&all)) {
            panic!("the batch does not build: {e}");
        }
    }

    #[test]
    fn opencl_and_cuda_plans_agree() {
        let (built, ready) = gpu_cases(Target::Cuda, 40);
        let mut planned = 0;
        for (i, m) in &ready {
            let (case, front) = (&built.0[*i].1, built.1[*i].as_ref().expect("a front"));
            let values = exec::size_values(case, &m.sizes).expect("size values");
            let plan = |max| {
                let cl =
                    exec::gpu_plan::<runtime::OpenClLaunch>(m, &values, front.inputs.len(), max);
                let cu = exec::gpu_plan::<runtime::CudaLaunch>(m, &values, front.inputs.len(), max);
                (cl, cu)
            };
            let (Ok(cl), Ok(cu)) = plan(shine::gpu::CUDA_MAX_THREADS) else {
                continue;
            };
            planned += 1;
            assert_eq!(cl.temporaries, cu.temporaries);
            assert_eq!(cl.status, cu.status);
            let (cl, cu) = (cl.launches, cu.launches);
            assert_eq!(cl.len(), m.kernels.len());
            for (a, b) in cl.iter().zip(&cu) {
                assert_eq!(a.kernel, b.kernel);
                assert_eq!(a.args, b.args);
                let n = a.global.len();
                let global: Vec<usize> =
                    (0..n).map(|d| (b.grid[d] * b.block[d]) as usize).collect();
                let block: Vec<usize> = b.block[..n].iter().map(|&t| t as usize).collect();
                assert_eq!(a.global, global, "{}", a.kernel);
                assert_eq!(a.local.as_ref(), Some(&block), "{}", a.kernel);
                assert!(b.block.iter().product::<u32>() as usize <= shine::gpu::CUDA_MAX_THREADS);
            }
        }
        assert!(planned >= 3, "only {planned} plans");
    }

    #[test]
    fn a_missing_cuda_driver_is_a_result_line_per_case() {
        let cases: Vec<(u64, Case)> = (0..20).map(|i| (i, Case::generate(7, i))).collect();
        let mut out = Vec::new();
        let finished = run_cases(&cases, &[Target::Cuda], None, &mut out);
        assert!(finished);
        let text = String::from_utf8(out).expect("text");
        let results: Vec<&str> = text.lines().filter(|l| l.starts_with("R\t")).collect();
        assert_eq!(results.len(), cases.len(), "{text}");
        for (idx, _) in &cases {
            let head = format!("R\t{idx}\tcuda\t");
            assert!(
                results.iter().any(|l| l.starts_with(&head)),
                "{head}: {text}"
            );
        }
        if !runtime::CudaDevice::libraries_present() {
            // nothing ran; the cases with CUDA code say why
            assert!(!text.contains("B\t"), "{text}");
            let refused = results
                .iter()
                .filter(|l| l.contains("\trefused\tno cuda device: CUDA driver"))
                .count();
            assert!(refused >= 1, "{text}");
        }
    }

    #[test]
    fn a_resumed_worker_skips_what_ran_before() {
        let skip = Some((5, Target::OpenCl));
        // the targets run one after the other, each on the cases in order
        assert!(done(skip, 9, Target::C));
        assert!(done(skip, 9, Target::OpenMp));
        assert!(done(skip, 4, Target::OpenCl));
        assert!(done(skip, 5, Target::OpenCl));
        assert!(!done(skip, 6, Target::OpenCl));
        assert!(!done(skip, 0, Target::Cuda));
        assert!(!done(None, 0, Target::C));
    }
}
