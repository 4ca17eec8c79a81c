//! Index-remapping views compiled through `dpia::View` (issue 15): `reorder` was
//! added as one variant with its equation, one translation arm and these tests.
//! Every case runs on C, OpenMP and OpenCL (PoCL) against the interpreter at sizes
//! 0, 1 and 7; an index function that may leave the array is refused. A `reorder` of a
//! constant number of elements whose `finv` is checked, element by element, to be the
//! inverse of `f` is written through `finv` (inside a `map` too).

use shine::rise::interp::Scalar;
use shine::rise::ScalarType;
use std::process::Command;

mod support;

const PROGRAM: &str = "
def reverseRead : {n: nat} -> n.f32 -> n.f32 =
  fun xs => xs |> reorder (fun i => n - 1 - i) (fun i => n - 1 - i) |> map (fun x => x * 2.0f)
def reverseWrite : {n: nat} -> n.f32 -> n.f32 =
  fun xs => xs |> map (fun x => x + 1.0f) |> reorder (fun i => n - 1 - i) (fun i => n - 1 - i)
def reversePairs : {n: nat} -> n.f32 -> n.i32 -> n.f32 =
  fun xs ys => zip (reorder (fun i => n - 1 - i) (fun i => n - 1 - i) xs) ys
    |> map (fun p => fst p * 2.0f + (cast (snd p) : f32))
def swizzleWrite : {n: nat} -> (n*32).f32 -> (n*32).f32 =
  fun xs => xs |> split 32 |> mapSeq (fun b => b |> mapSeq (fun x => x + 1.0f)
    |> reorder (fun p => (p / 8) * 8 + (p % 8 + 8 - p / 8) % 8) (fun i => (i / 8) * 8 + (i % 8 + i / 8) % 8))
    |> join
def wrongInverseWrite : {n: nat} -> (n*8).f32 -> (n*8).f32 =
  fun xs => xs |> split 8 |> mapSeq (fun b => b |> mapSeq (fun x => x + 1.0f)
    |> reorder (fun i => (i + 1) % 8) (fun i => i))
    |> join
def xorSwizzleRead : {n: nat} -> (n*64).f32 -> (n*64).f32 =
  fun xs => xs |> split 64 |> map (fun b => b
    |> reorder (fun p => (p / 8) * 8 + ((p % 8) ^ ((p / 8) % 8))) (fun p => (p / 8) * 8 + ((p % 8) ^ ((p / 8) % 8)))
    |> map (fun x => x * 2.0f)) |> join
def xorSwizzleWrite : {n: nat} -> (n*64).f32 -> (n*64).f32 =
  fun xs => xs |> split 64 |> mapSeq (fun b => b |> mapSeq (fun x => x + 1.0f)
    |> reorder (fun p => (p / 8) * 8 + ((p % 8) ^ ((p / 8) % 8))) (fun p => (p / 8) * 8 + ((p % 8) ^ ((p / 8) % 8))))
    |> join
def xorTable : 16.i32 -> 16.i32 = fun xs => xs |> reorder (fun p => p ^ 5) (fun p => p ^ 5)
def xorSize : {n: nat} -> xor(n, 3).f32 -> xor(n, 3).f32 = fun xs => xs |> map (fun x => x + 1.0f)
def shiftOut : {n: nat} -> n.f32 -> n.f32 =
  fun xs => xs |> reorder (fun i => i + 1) (fun i => i - 1) |> map (fun x => x * 2.0f)
";

fn files() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("views.rise"), PROGRAM).unwrap();
    std::fs::write(dir.path().join("views.elv"), "def s = lowerToC\n").unwrap();
    dir
}

fn run(dir: &tempfile::TempDir, def: &str, target: &str, n: u32) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_shine"))
        .current_dir(dir.path())
        .args([
            "run",
            "views.rise",
            "--def",
            def,
            "--strategy",
            "views.elv",
            "--apply",
            "s",
        ])
        .args([
            "--target",
            target,
            "--nat",
            &format!("n={n}"),
            "--random",
            "3",
            "--verify",
        ])
        .output()
        .expect("shine runs")
}

#[test]
fn reorder_reads_and_writes_agree_with_the_interpreter() {
    let dir = files();
    // the blocks of `swizzleWrite` are written through `finv` (checked to be the inverse
    // of `f` element by element)
    for def in [
        "reverseRead",
        "reverseWrite",
        "reversePairs",
        "swizzleWrite",
        "xorSwizzleRead",
        "xorSwizzleWrite",
        "xorSize",
    ] {
        for target in ["c", "openmp", "opencl"] {
            for n in [0, 1, 7] {
                let out = run(&dir, def, target, n);
                let text = format!(
                    "{}{}",
                    String::from_utf8_lossy(&out.stdout),
                    String::from_utf8_lossy(&out.stderr)
                );
                assert!(
                    out.status.success() && text.contains("verified against the interpreter"),
                    "{def} --target {target} n={n}: {text}"
                );
            }
        }
    }
}

#[test]
fn reorder_out_of_range_is_refused_at_compile_time() {
    let dir = files();
    let out = Command::new(env!("CARGO_BIN_EXE_shine"))
        .current_dir(dir.path())
        .args([
            "compile",
            "views.rise",
            "--def",
            "shiftOut",
            "--strategy",
            "views.elv",
            "--apply",
            "s",
        ])
        .output()
        .expect("shine runs");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("cannot prove that the index function"),
        "{err}"
    );
}

#[test]
fn a_write_through_a_wrong_inverse_is_not_trusted() {
    // `finv` is not the inverse of `f`: the blocks are not written through it; the
    // block must be stored first and copied through `f`, and without that it is refused
    let dir = files();
    let out = run(&dir, "wrongInverseWrite", "c", 3);
    let text = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && text.contains("is read but not stored anywhere"),
        "{text}"
    );
}

#[test]
fn xor_in_an_index_function_is_the_bitwise_exclusive_or() {
    // element p of the result is xs[p xor 5]: the interpreter's table, and the
    // compiled code's (verified against it)
    let dir = files();
    let input = support::write_scalars(
        dir.path(),
        "table.npy",
        ScalarType::I32,
        (0..16).map(|i| Scalar::I32(i * 10)).collect(),
    );
    let out = Command::new(env!("CARGO_BIN_EXE_shine"))
        .current_dir(dir.path())
        .args(["eval", "views.rise", "--def", "xorTable", "--input", &input])
        .output()
        .expect("shine runs");
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    let want: Vec<String> = (0..16).map(|p: i32| ((p ^ 5) * 10).to_string()).collect();
    assert!(
        text.contains(&format!("[{}]", want.join(", "))),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
