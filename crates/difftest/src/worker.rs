//! Running a list of cases on targets, batched, reporting one line per event on a writer:
//! `B idx target` before compiled code runs (so a crash can be attributed) and
//! `R idx target kind detail` for every result.

use crate::case::Case;
use crate::exec::{self, Front, Outcome};
use crate::sched::{self, Target};
use runtime::GpuProgram;
use std::io::Write;

/// One result line.
pub fn result_line(idx: u64, t: Target, o: &Outcome) -> String {
    let detail: String = o.detail().replace(['\n', '\t'], " ");
    let detail: String = detail.chars().take(600).collect();
    format!("R\t{idx}\t{}\t{}\t{detail}", t.name(), o.kind())
}

/// Runs `cases` on `targets`; case `idx` with target at or before `skip` (in
/// [`sched::TARGETS`] order) is not run again (a resumed chunk after a crash).
pub fn run_cases(
    cases: &[(u64, Case)],
    targets: &[Target],
    skip: Option<(u64, Target)>,
    out: &mut dyn Write,
) {
    let fronts: Vec<Result<Front, Outcome>> = cases.iter().map(|(_, c)| exec::front(c)).collect();
    for &t in sched::TARGETS.iter().filter(|t| targets.contains(t)) {
        let todo: Vec<usize> = (0..cases.len())
            .filter(|&i| !matches!(skip, Some((k, st)) if cases[i].0 < k || (cases[i].0 == k && t <= st)))
            .collect();
        match t {
            Target::C | Target::OpenMp => run_c(cases, &fronts, &todo, t, out),
            Target::OpenCl => run_opencl(cases, &fronts, &todo, out),
            // not among the compared targets (sched::TARGETS): no GPU here
            Target::Cuda => {}
        }
    }
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
        // the interpreter computes a result, the compiled code stops: a bug
        (
            Ok(_),
            Err(
                e @ (E::ProgramStatus { .. }
                | E::ProgramFailed { .. }
                | E::ProgramKilled { .. }
                | E::SanitizerRunFailed { .. }),
            ),
        ) => Outcome::Crash(format!("the interpreter computes; the compiled code {e}")),
        (Ok(_), Err(e)) => Outcome::Refused(format!("run: {e}")),
        (Err(m), Ok(_)) => Outcome::Unchecked(format!(
            "the interpreter refuses ({m}); the compiled code ran"
        )),
        (Err(m), Err(_)) => Outcome::InterpRefused(m.clone()),
    }
}

/// The input buffers of a run (indices `index_bytes` wide) and its output buffer, filled
/// with the marker of [`exec::output_for`]: as large as the result type says also where the
/// interpreter has no result (the code may write all of it before it stops on an error).
fn run_buffers(front: &Front, index_bytes: usize) -> (Vec<runtime::Buffer>, runtime::Buffer) {
    let inputs = front
        .inputs
        .iter()
        .map(|i| runtime::Buffer::from_bytes(&i.bytes(index_bytes)))
        .collect();
    let len = match &front.expected {
        Ok(e) => exec::to_bytes(e).len(),
        Err(_) => front.output_bytes,
    };
    let output = exec::output_for(len);
    (inputs, output)
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
            exec::lower(case, f, t, &elv_of(case, t))
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
    let (buffers, mut output) = run_buffers(front, 8);
    let refs: Vec<&runtime::Buffer> = buffers.iter().collect();
    emit(out, format!("B\t{idx}\t{}", t.name()));
    let got = module
        .run(&mut output, &refs, &sizes)
        .map(|()| output.as_bytes().to_vec());
    judge(front, got)
}

fn run_opencl(
    cases: &[(u64, Case)],
    fronts: &[Result<Front, Outcome>],
    todo: &[usize],
    out: &mut dyn Write,
) {
    let t = Target::OpenCl;
    let mut ready: Vec<(usize, codegen::GpuModule)> = Vec::new();
    for &i in todo {
        let (idx, case) = &cases[i];
        let built = before_run(&fronts[i]).and_then(|f| {
            exec::lower(case, f, t, &elv_of(case, t))
                .and_then(|p| {
                    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                        codegen::generate_gpu(&p, codegen::Target::OpenCl)
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
    if ready.is_empty() {
        return;
    }
    let dev = match runtime::OpenClDevice::from_env() {
        Ok(d) => d,
        Err(e) => {
            for (i, _) in &ready {
                emit(
                    out,
                    result_line(
                        cases[*i].0,
                        t,
                        &Outcome::Refused(format!("no OpenCL device: {e}")),
                    ),
                );
            }
            return;
        }
    };
    let options = "-cl-mad-enable";
    let source = exec::combine(ready.iter().map(|(_, m)| m.source.as_str()));
    let shared = runtime::OpenClProgram::build(&dev, &source, options).ok();
    for (i, m) in &ready {
        let (idx, case) = &cases[*i];
        let Ok(front) = &fronts[*i] else { continue };
        let own;
        let program = match &shared {
            Some(p) => p,
            None => match runtime::OpenClProgram::build(&dev, &m.source, options) {
                Ok(p) => {
                    own = p;
                    &own
                }
                Err(e) => {
                    emit(
                        out,
                        result_line(*idx, t, &Outcome::CodeDoesNotCompile(e.to_string())),
                    );
                    continue;
                }
            },
        };
        let outcome = (|| {
            let values = exec::size_values(case, &m.sizes)?;
            let (launches, temps) =
                exec::opencl_plan(m, &values, front.inputs.len(), dev.max_work_group_size())?;
            // built without SHINE_INDEX_64: 32-bit indices
            let (buffers, mut output) = run_buffers(front, 4);
            let refs: Vec<&runtime::Buffer> = buffers.iter().collect();
            emit(out, format!("B\t{idx}\t{}", t.name()));
            // the status flag, where the kernels have one, is the last temporary
            let got = if m.uses_status() {
                program
                    .run_with_status(
                        &launches,
                        std::slice::from_mut(&mut output),
                        &refs,
                        &temps,
                        temps.len() - 1,
                    )
                    .and_then(|status| match status {
                        0 => Ok(output.as_bytes().to_vec()),
                        status => Err(runtime::RuntimeError::ProgramStatus {
                            entry: m
                                .kernels
                                .first()
                                .map_or_else(String::new, |k| k.name.clone()),
                            status,
                        }),
                    })
            } else {
                program
                    .run(&launches, std::slice::from_mut(&mut output), &refs, &temps)
                    .map(|()| output.as_bytes().to_vec())
            };
            Ok(judge(front, got))
        })();
        let outcome = match outcome {
            Ok(o) => o,
            Err(o) => refused_or(front, o),
        };
        emit(out, result_line(*idx, t, &outcome));
    }
}
