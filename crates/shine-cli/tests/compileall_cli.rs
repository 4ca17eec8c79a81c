//! Programs ported from PolyBench and PyTorch shapes compile with no `--strategy` (issue 28):
//! a Jacobi time loop whose step pads and slides, also with a count `t` given at run time,
//! a histogram (`generate` of a reduction), pooling with stride 2 that drops the remainder,
//! and private arrays of a run-time size on GPUs. Each runs against the interpreter
//! (`--verify`) on C, OpenMP, OpenCL (PoCL) and, with `SHINE_TEST_GPU=1`, CUDA, at sizes
//! 1, 7, 13 and a large odd one (pooling: 3 for 1, smaller than a window, an error).

mod support;

/// The sizes of the tests.
const SIZES: [u32; 4] = [1, 7, 13, 1001];

/// The programs.
const PROGRAM: &str = "
def jacobiStep : (l: nat) -> l.f32 -> l.f32 = fun (l: nat) => padClamp 1 1 >>> slide 3 1 >>> map (fun w => reduce add 0.0f w / 3.0f)
def jacobi20 : {n: nat} -> n.f32 -> n.f32 = fun xs => xs |> iterate 20 jacobiStep
def jacobi100 : {n: nat} -> n.f32 -> n.f32 = fun xs =>
  xs |> iterate 100 (fun (l: nat) => fun ys => ys |> padClamp 1 1 |> slide 3 1
     |> map (fun w => (w |> reduce add 0.0f) / 3.0f))
def jacobi100Scaled : {n: nat} -> n.f32 -> n.f32 = fun xs =>
  xs |> iterate 100 (fun (l: nat) => padCst 1 1 0.0f >>> slide 3 1 >>> map (reduce add 0.0f))
     |> map (fun y => y * 0.5f)
def jacobiT : {n t: nat} -> n.f32 -> n.f32 = fun xs => xs |> iterate t jacobiStep
def jacobiTScaled : {n t: nat} -> n.f32 -> n.f32 = fun xs => xs |> iterate t jacobiStep |> map (fun y => y * 2.0f)
def treeSumT : {n t: nat} -> (n*2^t).f32 -> n.f32 = fun xs =>
  xs |> iterate t (fun (l: nat) => fun ys => ys |> split 2 |> map (reduce add 0.0f))
def maxPool : {h: nat} -> h.f32 -> ((h-2)/2+1).f32 = fun xs =>
  xs |> take ((h-2)/2*2+2) |> slide 2 2 |> map (reduce (fun a b => fmax a b) (-inff))
def avgPool3 : {h: nat} -> h.h.f32 -> ((h-3)/2+1).((h-3)/2+1).f32 = fun img =>
  img |> take ((h-3)/2*2+3) |> map (take ((h-3)/2*2+3)) |> slide2 3 2
      |> map2 (fun w => (w |> join |> reduce add 0.0f) / 9.0f)
def columnSums : {n m: nat} -> m.n.f32 -> n.f32 = fun a =>
  a |> reduceSeq (fun acc row => zip acc row |> map (fun p => fst p + snd p)) (generate (fun i => 0.0f))
def rowRecurrences : {n m: nat} -> m.n.f32 -> m.f32 = fun a => a |> map (fun row =>
  row |> reduceSeq (fun acc x => zip acc row |> map (fun p => fst p * 0.5f + snd p * x)) (generate (fun i => 0.0f))
      |> reduce add 0.0f)
def trisolv : {n: nat} -> n.n.f32 -> n.f32 -> n.f32 = fun l b =>
  zip l b |> zip (generate (fun i => i)) |> reduceSeq (fun x r =>
    generate (fun j => select (indexAsNat j == indexAsNat (fst r))
      ((snd (snd r) - reduce add 0.0f (zip (fst (snd r)) x |> map (fun p => fst p * snd p)))
         / idx (fst r) (fst (snd r)))
      (idx j x))) (generate (fun i => 0.0f))
def histogram : {n: nat} -> n.i32 -> 8.i32 = fun xs =>
  generate (fun i => reduce add 0i32 (map (fun x => select (x == (cast (indexAsNat i) : i32)) 1i32 0i32) xs))
def histogramScaled : {n: nat} -> n.i32 -> 8.i32 = fun xs =>
  generate (fun i => xs |> map (fun x => select (x <= (cast (indexAsNat i) : i32)) 1i32 0i32) |> reduce add 0i32)
    |> map (fun c => c * 2i32)
def rowHistograms : {n: nat} -> 3.n.i32 -> 3.4.i32 = fun rows =>
  rows |> map (fun xs => generate (fun i => reduce add 0i32 (map (fun x => select (x == (cast (indexAsNat i) : i32)) 1i32 0i32) xs)))
";

/// A directory holding the programs as `p.rise`.
fn program_dir() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("temporary directory");
    std::fs::write(dir.path().join("p.rise"), PROGRAM).expect("program written");
    dir
}

/// `shine run` of `def` at the sizes `nats` (`n=7`, ...) on `target` with no strategy,
/// verified: whether it succeeded, and its output.
fn run(dir: &tempfile::TempDir, def: &str, target: &str, nats: &[String]) -> (bool, String) {
    let mut args = vec!["run", "p.rise", "--def", def, "--target", target];
    for nat in nats {
        args.extend(["--nat", nat]);
    }
    args.extend(["--random", "3", "--verify"]);
    let (out, text) = support::shine_in(dir.path(), &args);
    (out.status.success(), text)
}

/// Asserts that `def` verifies at the sizes `nats` on `target`.
fn verifies(dir: &tempfile::TempDir, def: &str, target: &str, nats: &[String]) {
    let (ok, text) = run(dir, def, target, nats);
    assert!(
        ok && text.contains("verified against the interpreter"),
        "{def} --target {target} {nats:?}: {text}"
    );
}

/// Asserts that each of `defs` verifies at every size on every target of `targets`.
fn verify_all(defs: &[&str], targets: &[&str]) {
    let dir = program_dir();
    for target in targets {
        for def in defs {
            for n in SIZES {
                verifies(&dir, def, target, &[format!("n={n}")]);
            }
        }
    }
}

/// The run-time counts of the tests: none, one step, an even and an odd number of double
/// steps, and a long time loop.
const RUN_TIME_COUNTS: [u32; 5] = [0, 1, 2, 7, 100];

/// Asserts that `def` (sizes `n` and `t`) verifies at every size and count on `target`.
fn verify_counts(dir: &tempfile::TempDir, def: &str, target: &str) {
    for n in SIZES {
        for t in RUN_TIME_COUNTS {
            verifies(dir, def, target, &[format!("n={n}"), format!("t={t}")]);
        }
    }
}

#[test]
fn an_iterate_count_known_at_run_time_verifies_on_c_and_openmp() {
    let dir = program_dir();
    for target in ["c", "openmp"] {
        for def in ["jacobiT", "jacobiTScaled"] {
            verify_counts(&dir, def, target);
        }
    }
}

#[test]
fn an_iterate_count_known_at_run_time_runs_in_one_gpu_kernel_or_is_refused() {
    let dir = program_dir();
    for target in support::targets() {
        if !matches!(target, "opencl" | "cuda") {
            continue;
        }
        verify_counts(&dir, "jacobiTScaled", target);
        let (ok, text) = run(&dir, "jacobiT", target, &["n=7".into(), "t=3".into()]);
        assert!(
            !ok && text.contains("known only at run time") && text.contains("OpenCL or CUDA"),
            "jacobiT --target {target}: {text}"
        );
    }
}

#[test]
fn a_run_time_count_of_a_step_that_changes_the_size_is_refused() {
    let dir = program_dir();
    let args = ["compile", "p.rise", "--def", "treeSumT", "--target", "c"];
    let (out, text) = support::shine_in(dir.path(), &args);
    assert!(
        !out.status.success() && text.contains("needs a step that keeps the size"),
        "{text}"
    );
}

/// Pooling with stride 2 over odd sizes (PyTorch's `(h - k) / s + 1` windows); an input
/// smaller than a window is a size error, as in PyTorch.
#[test]
fn pooling_that_drops_the_remainder_verifies_on_every_target() {
    let dir = program_dir();
    for target in support::targets() {
        for def in ["maxPool", "avgPool3"] {
            for h in [3, 7, 13, 201] {
                verifies(&dir, def, target, &[format!("h={h}")]);
            }
            let (ok, text) = run(&dir, def, target, &["h=1".into()]);
            assert!(!ok && text.contains("size constraint"), "{def} h=1: {text}");
        }
    }
}

/// Accumulators of `n` elements (a size known only at run time): private arrays on C and
/// OpenMP, global scratch allocated by the host, one part per work-item, on GPUs.
#[test]
fn accumulators_of_a_run_time_size_verify_on_every_target() {
    let dir = program_dir();
    // the interpreter takes n^3 (trisolv) and m*n^2 steps: 101 is their large odd size
    for target in support::targets() {
        for n in [1, 7, 13, 101] {
            verifies(&dir, "trisolv", target, &[format!("n={n}")]);
            for def in ["columnSums", "rowRecurrences"] {
                verifies(&dir, def, target, &[format!("n={n}"), "m=5".into()]);
            }
        }
    }
}

#[test]
fn a_gpu_accumulator_of_a_run_time_size_is_scratch_the_host_allocates() {
    let dir = program_dir();
    let args = [
        "compile",
        "p.rise",
        "--def",
        "rowRecurrences",
        "--target",
        "opencl",
    ];
    let (out, text) = support::shine_in(dir.path(), &args);
    assert!(out.status.success(), "{text}");
    assert!(text.contains("temporaries `acc"), "{text}");
    assert!(
        text.contains("[gid0 * n + "),
        "one part per work-item:\n{text}"
    );
}

/// The C code of `def` with no strategy.
fn c_code(dir: &tempfile::TempDir, def: &str) -> String {
    let args = ["compile", "p.rise", "--def", def, "--target", "c"];
    let (out, text) = support::shine_in(dir.path(), &args);
    assert!(out.status.success(), "{def}: {text}");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn a_run_time_count_is_a_loop_of_t_over_2_double_steps() {
    let code = c_code(&program_dir(), "jacobiT");
    assert!(code.contains("< t / 2;"), "{code}");
    assert!(code.contains("< t % 2;"), "{code}");
}

#[test]
fn jacobi_steps_that_pad_and_slide_verify_on_every_target() {
    verify_all(&["jacobi20", "jacobi100Scaled"], &support::targets());
}

#[test]
fn a_100_step_jacobi_that_pads_and_slides_verifies_on_c_and_openmp() {
    verify_all(&["jacobi100"], &["c", "openmp"]);
}

#[test]
fn histograms_generate_of_a_reduction_verify_on_every_target() {
    verify_all(
        &["histogram", "histogramScaled", "rowHistograms"],
        &support::targets(),
    );
}
