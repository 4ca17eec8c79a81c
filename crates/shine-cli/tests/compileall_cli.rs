//! Programs ported from PolyBench and PyTorch shapes compile with no `--strategy` (issue 28):
//! a Jacobi time loop whose step pads and slides, a histogram (`generate` of a reduction),
//! and the cases below. Each runs against the interpreter (`--verify`) on C, OpenMP,
//! OpenCL (PoCL) and, with `SHINE_TEST_GPU=1`, CUDA, at sizes 1, 7, 13 and a large odd one.

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

/// `shine run` of `def` at size `n` on `target` with no strategy, verified: whether it
/// succeeded, and its output.
fn run(dir: &tempfile::TempDir, def: &str, target: &str, n: u32) -> (bool, String) {
    let n = format!("n={n}");
    let args = [
        "run", "p.rise", "--def", def, "--target", target, "--nat", &n, "--random", "3", "--verify",
    ];
    let (out, text) = support::shine_in(dir.path(), &args);
    (out.status.success(), text)
}

/// Asserts that each of `defs` verifies at every size on every target of `targets`.
fn verify_all(defs: &[&str], targets: &[&str]) {
    let dir = program_dir();
    for target in targets {
        for def in defs {
            for n in SIZES {
                let (ok, text) = run(&dir, def, target, n);
                assert!(
                    ok && text.contains("verified against the interpreter"),
                    "{def} --target {target} n={n}: {text}"
                );
            }
        }
    }
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
