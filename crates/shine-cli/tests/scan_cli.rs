//! `scanSeq` compiles (issue 14): a sequential loop over a private accumulator
//! that writes every intermediate value. Each case runs on C, OpenMP and OpenCL
//! (PoCL) against the interpreter at sizes 0, 1 and 7: scalar, pair and array
//! accumulators, scans inside a map, and a scan whose result is read (stored by
//! the strategy first).

use shine::rise::interp::Scalar;
use shine::rise::{DataType, ScalarType};
use shine::Array;
use std::process::Command;

mod support;

const PROGRAM: &str = "
def prefixSum : {n: nat} -> n.f32 -> n.f32 = fun xs => xs |> scanSeq (fun x a => a + x) 0.0f
def rowScans : {n: nat} -> n.5.int -> n.5.int =
  fun xss => xss |> map (fun row => row |> scanSeq (fun x a => a * 3 + x) 1)
def vectorScan : {n: nat} -> n.3.f32 -> n.3.f32 =
  fun xs => xs |> scanSeq (fun x a => zip x a |> map (fun p => fst p + snd p)) (generate (fun i => 0.0f))
def scanThenMap : {n: nat} -> n.f32 -> n.f32 =
  fun xs => xs |> scanSeq (fun x a => a + x) 0.0f |> map (fun y => y * 2.0f)
def minMaxSpread : {n: nat} -> n.f32 -> n.f32 =
  fun xs => xs
    |> scanSeq (fun x acc => makePair (select (lt x (fst acc)) x (fst acc)) (select (gt x (snd acc)) x (snd acc)))
         (makePair 1000.0f (0.0f - 1000.0f))
    |> map (fun p => snd p - fst p)
";

const STRATEGIES: &str = "
def s = lowerToC
def storeScan = DFNF ; storeInMemory(applied(scanSeq), lowerToC) @ argument @ outermost(appliedMap) ;; lowerToC
";

fn run(dir: &tempfile::TempDir, def: &str, strategy: &str, target: &str, n: u32) -> String {
    let n = format!("n={n}");
    let (out, text) = support::shine_in(
        dir.path(),
        &[
            "run",
            "scan.rise",
            "--def",
            def,
            "--strategy",
            "scan.elv",
            "--apply",
            strategy,
            "--target",
            target,
            "--nat",
            &n,
            "--random",
            "5",
            "--verify",
        ],
    );
    assert!(
        out.status.success() && text.contains("verified against the interpreter"),
        "{def} ({strategy}) --target {target} {n}: {text}"
    );
    text
}

#[test]
fn scans_agree_with_the_interpreter_on_every_cpu_target() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("scan.rise"), PROGRAM).unwrap();
    std::fs::write(dir.path().join("scan.elv"), STRATEGIES).unwrap();
    let cases = [
        ("prefixSum", "s"),
        ("rowScans", "s"),
        ("vectorScan", "s"),
        ("scanThenMap", "storeScan"),
        ("minMaxSpread", "storeScan"),
    ];
    for (def, strategy) in cases {
        for target in ["c", "openmp", "opencl"] {
            for n in [0, 1, 7] {
                run(&dir, def, strategy, target, n);
            }
        }
    }
}

#[test]
fn a_prefix_sum_is_the_running_total() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("scan.rise"), PROGRAM).unwrap();
    std::fs::write(dir.path().join("scan.elv"), STRATEGIES).unwrap();
    let xs = Array {
        elem: DataType::Scalar(ScalarType::F32),
        shape: vec![4],
        data: [1.0, 2.0, 3.0, 4.0].map(Scalar::F32).to_vec(),
    };
    shine::npy::write(&dir.path().join("xs.npy"), &xs).unwrap();
    // on 1, 2, 3, 4 the compiled scan prints 1, 3, 6, 10 (the interpreter agrees: --verify)
    let out = Command::new(env!("CARGO_BIN_EXE_shine"))
        .current_dir(dir.path())
        .args([
            "run",
            "scan.rise",
            "--def",
            "prefixSum",
            "--strategy",
            "scan.elv",
        ])
        .args([
            "--apply", "s", "--target", "c", "--input", "xs.npy", "--verify",
        ])
        .output()
        .expect("shine runs");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(text.contains("[1.0, 3.0, 6.0, 10.0]"), "{text}");
}
