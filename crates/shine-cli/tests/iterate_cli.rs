//! Time loops compile with the default schedules (issue 28): a `scanSeq` or `iterate`
//! whose result is read is stored first, and `iterate k` with a step that keeps the size
//! is a run-time loop over two buffers for k > 8 (small code at 500 steps). Each case
//! runs with no `--strategy` against the interpreter (`--verify`) on C, OpenMP, OpenCL
//! (PoCL) and, with `SHINE_TEST_GPU=1`, CUDA. OpenCL and CUDA launch one kernel per
//! step and run no loops on the host: over 64 such steps they refuse with an error.

mod support;

/// The iteration counts of the tests.
const COUNTS: [u32; 5] = [1, 2, 9, 100, 500];

/// The sizes of the tests.
const SIZES: [u32; 4] = [1, 7, 13, 1000];

/// A three-point Jacobi smoothing step (zero boundary), written with `take`/`drop`
/// so that its type puts no constraint on the step's size `l`.
const JACOBI_STEP: &str = "(fun (l: nat) => fun ys => ys |> padCst 1 1 0.0f
  |> (fun p => zip (take l p) (zip (p |> drop 1 |> take l) (drop 2 p)))
  |> map (fun w => (fst w + fst (snd w) + snd (snd w)) / 3.0f))";

/// The scans: a prefix sum read by a map, and an IIR blur (a forward then a backward
/// first-order recursive filter).
const SCANS: &str = "
def prefixThenScale : {n: nat} -> n.f32 -> n.f32 =
  fun xs => xs |> scanSeq (fun x a => a + x) 0.0f |> map (fun y => y * 2.0f)
def iirBlur : {n: nat} -> n.f32 -> n.f32 = fun xs =>
  xs |> scanSeq (fun x a => 0.25f * x + 0.75f * a) 0.0f
     |> reorder (fun i => n - 1 - i) (fun i => n - 1 - i)
     |> scanSeq (fun x a => 0.25f * x + 0.75f * a) 0.0f
     |> reorder (fun i => n - 1 - i) (fun i => n - 1 - i)
";

/// For every count `k`: `jacobiK` (the time loop is the result) and `jacobiScaledK`
/// (its result read by a map), then the scans.
fn program() -> String {
    let mut text = String::new();
    for k in COUNTS {
        text += &format!(
            "def jacobi{k} : {{n: nat}} -> n.f32 -> n.f32 = fun xs => xs |> iterate {k} {JACOBI_STEP}\n\
             def jacobiScaled{k} : {{n: nat}} -> n.f32 -> n.f32 = fun xs => xs |> iterate {k} {JACOBI_STEP} \
             |> map (fun y => y * 2.0f)\n"
        );
    }
    text + SCANS
}

/// A directory holding the program as `it.rise`.
fn program_dir() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("temporary directory");
    std::fs::write(dir.path().join("it.rise"), program()).expect("program written");
    dir
}

/// `shine run` of `def` at size `n` on `target` with no strategy, verified: its output.
fn run(dir: &tempfile::TempDir, def: &str, target: &str, n: u32) -> (bool, String) {
    let n = format!("n={n}");
    let args = [
        "run", "it.rise", "--def", def, "--target", target, "--nat", &n, "--random", "3",
        "--verify",
    ];
    let (out, text) = support::shine_in(dir.path(), &args);
    (out.status.success(), text)
}

/// Asserts that `def` verifies at size `n` on `target`.
fn verifies(dir: &tempfile::TempDir, def: &str, target: &str, n: u32) {
    let (ok, text) = run(dir, def, target, n);
    assert!(
        ok && text.contains("verified against the interpreter"),
        "{def} --target {target} n={n}: {text}"
    );
}

/// Whether `target` compiles `def`, an `iterate` of `k` steps: OpenCL and CUDA refuse
/// `jacobiK` over 64 steps (one kernel per step, as its steps are parallel loops); in
/// `jacobiScaledK` the loop is a stored stage, computed by one work-item.
fn compiles(target: &str, def: &str, k: u32) -> bool {
    let gpu = matches!(target, "opencl" | "cuda");
    !gpu || k <= 64 || def.starts_with("jacobiScaled")
}

/// Every Jacobi count at every size on `target`; a GPU over 64 steps refuses clearly.
fn jacobi_on(target: &str) {
    let dir = program_dir();
    for k in COUNTS {
        for def in [format!("jacobi{k}"), format!("jacobiScaled{k}")] {
            for n in SIZES {
                if compiles(target, &def, k) {
                    verifies(&dir, &def, target, n);
                    continue;
                }
                let (ok, text) = run(&dir, &def, target, n);
                assert!(
                    !ok && text.contains("`iterate` of more than 64 steps"),
                    "{def} --target {target}: {text}"
                );
            }
        }
    }
}

#[test]
fn jacobi_time_loops_verify_on_c() {
    jacobi_on("c");
}

#[test]
fn jacobi_time_loops_verify_on_openmp() {
    jacobi_on("openmp");
}

#[test]
fn jacobi_time_loops_verify_on_gpu_targets_or_are_refused_over_64_steps() {
    for target in support::targets() {
        if matches!(target, "opencl" | "cuda") {
            jacobi_on(target);
        }
    }
}

#[test]
fn scans_whose_result_is_read_verify_on_every_target() {
    let dir = program_dir();
    for target in support::targets() {
        for def in ["prefixThenScale", "iirBlur"] {
            for n in SIZES {
                verifies(&dir, def, target, n);
            }
        }
    }
}

/// The C code of `def` compiled for `target` with no strategy.
fn code(dir: &tempfile::TempDir, def: &str, target: &str) -> String {
    let args = ["compile", "it.rise", "--def", def, "--target", target];
    let (out, text) = support::shine_in(dir.path(), &args);
    assert!(out.status.success(), "{def} --target {target}: {text}");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn a_500_step_loop_is_a_loop_not_500_copies() {
    let dir = program_dir();
    for target in ["c", "openmp"] {
        let long = code(&dir, "jacobi500", target);
        assert!(long.len() < 20_000, "{} bytes:\n{long}", long.len());
        assert!(
            long.contains("< 249;"),
            "a loop of 249 double steps:\n{long}"
        );
        // the loop's code does not grow with the count
        let short = code(&dir, "jacobi100", target);
        let short = short
            .replace("jacobi100", "jacobi500")
            .replace("< 49;", "< 249;");
        assert_eq!(short, long);
    }
}

#[test]
fn small_counts_stay_unrolled() {
    let dir = program_dir();
    let two = code(&dir, "jacobi2", "c");
    assert!(
        !two.contains("< 0;") && two.matches("for (").count() == 2,
        "{two}"
    );
}
