//! How much a program may expand into (`dpia::limits`): an unrolled loop over a billion
//! elements is refused at once, within a 4 GB address space, with a message saying what to
//! write instead (it grew `shine compile` to 22 GB); an unroll at the limit compiles and
//! agrees with the interpreter; nested unrolls past the code budget are refused before they
//! are expanded; and a long chain of definitions is checked and compiled in time linear in
//! its length.

use std::path::Path;
use std::process::Output;
use std::time::{Duration, Instant};

mod support;

/// `shine ARGS` in `dir` under `ulimit -v 4000000` (about 4 GB of address space): its
/// output and the time it took.
fn shine_limited(dir: &Path, args: &[&str]) -> (Output, Duration) {
    let started = Instant::now();
    let out = std::process::Command::new("sh")
        .current_dir(dir)
        .arg("-c")
        .arg("ulimit -v 4000000; exec \"$0\" \"$@\"")
        .arg(env!("CARGO_BIN_EXE_shine"))
        .args(args)
        .output()
        .expect("sh runs");
    (out, started.elapsed())
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// Fails unless `out` is an error (exit 1, no panic) whose message holds every `needle`.
fn refused_with(out: &Output, needles: &[&str]) {
    let text = stderr(out);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(!text.contains("panicked"), "{text}");
    for needle in needles {
        assert!(text.contains(needle), "`{needle}` not in: {text}");
    }
}

const UNROLLED: &str = "\
def unrHuge : 1000000000.f32 -> f32 = fun xs => xs |> reduceSeqUnroll add 0.0f
def unrMapHuge : 100000.f32 -> 100000.f32 = fun xs => xs |> mapSeqUnroll (fun x => x + 1.0f)
def unrAtLimit : 4096.f32 -> f32 = fun xs => xs |> reduceSeqUnroll add 0.0f
def unrNested : 4096.4096.f32 -> 4096.4096.f32 =
  fun xs => xs |> mapSeqUnroll (mapSeqUnroll (fun x => x + 1.0f))
def unrSplit : 1000000.f32 -> f32 =
  fun xs => xs |> split 4 |> reduceSeq (fun acc v => acc + (v |> reduceSeqUnroll add 0.0f)) 0.0f
";

fn write_unrolled(dir: &Path) {
    std::fs::write(dir.join("unrolled.rise"), UNROLLED).unwrap();
}

#[test]
fn an_unrolled_billion_is_refused_at_once_within_4_gb() {
    let dir = tempfile::tempdir().unwrap();
    write_unrolled(dir.path());
    for def in ["unrHuge", "unrMapHuge"] {
        let (out, took) = shine_limited(dir.path(), &["compile", "unrolled.rise", "--def", def]);
        refused_with(
            &out,
            &["would be unrolled into", "more than the 4096", "split"],
        );
        assert!(took < Duration::from_secs(5), "{def}: {took:?}");
    }
    let (out, _) = shine_limited(
        dir.path(),
        &["compile", "unrolled.rise", "--def", "unrHuge"],
    );
    refused_with(
        &out,
        &["`reduceSeqUnroll`", "1000000000 iterations", "reduceSeq"],
    );
}

#[test]
fn nested_unrolls_past_the_code_budget_are_refused_before_expanding() {
    let dir = tempfile::tempdir().unwrap();
    write_unrolled(dir.path());
    let (out, took) = shine_limited(
        dir.path(),
        &["compile", "unrolled.rise", "--def", "unrNested"],
    );
    refused_with(
        &out,
        &[
            "unrolling `mapSeqUnroll`",
            "nodes of C code",
            "more than the limit of 250000",
        ],
    );
    assert!(took < Duration::from_secs(5), "{took:?}");
}

#[test]
fn an_unroll_at_the_limit_compiles_and_agrees_with_the_interpreter() {
    let dir = tempfile::tempdir().unwrap();
    write_unrolled(dir.path());
    let args = [
        "run",
        "unrolled.rise",
        "--def",
        "unrAtLimit",
        "--random",
        "1",
        "--verify",
    ];
    let (out, _) = shine_limited(dir.path(), &args);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("verified against the interpreter"),
        "{}",
        stderr(&out)
    );
    let (out, _) = shine_limited(
        dir.path(),
        &["compile", "unrolled.rise", "--def", "unrAtLimit"],
    );
    let code = String::from_utf8_lossy(&out.stdout);
    assert!(code.contains("(unrolled: 4096 iterations)"), "{code}");
}

#[test]
fn a_large_loop_unrolled_in_small_pieces_compiles_and_agrees() {
    let dir = tempfile::tempdir().unwrap();
    write_unrolled(dir.path());
    let args = [
        "run",
        "unrolled.rise",
        "--def",
        "unrSplit",
        "--random",
        "2",
        "--verify",
    ];
    let (out, _) = shine_limited(dir.path(), &args);
    assert!(out.status.success(), "{}", stderr(&out));
}

/// `def fK = fun xs => f(K-1) xs |> map (fun x => x + 1.0f)` for K < `n`, with `main` of a
/// fixed size applying the last.
fn chain(n: usize) -> String {
    let mut program = String::from("def f0 = fun xs => xs |> map (fun x => x + 1.0f)\n");
    for k in 1..n {
        program.push_str(&format!(
            "def f{k} = fun xs => f{} xs |> map (fun x => x + 1.0f)\n",
            k - 1
        ));
    }
    program.push_str(&format!(
        "def main : 16.f32 -> 16.f32 = fun xs => f{} xs\n",
        n - 1
    ));
    program
}

/// The scalar chain `def fK = fun x => f(K-1) x + 1.0f`, compiled as written.
fn scalar_chain(n: usize) -> String {
    let mut program = String::from("def f0 = fun x => x + 1.0f\n");
    for k in 1..n {
        program.push_str(&format!("def f{k} = fun x => f{} x + 1.0f\n", k - 1));
    }
    program.push_str(&format!("def main : f32 -> f32 = fun x => f{} x\n", n - 1));
    program
}

/// 2,000 chained definitions are parsed, inferred and inlined in time linear in their
/// number (about 2 s in a debug build); the bound is generous for a loaded machine.
#[test]
fn two_thousand_chained_definitions_check_and_compile_in_time() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("chain.rise"), chain(2000)).unwrap();
    std::fs::write(d.join("scalar.rise"), scalar_chain(2000)).unwrap();
    let (out, took) = shine_limited(d, &["check", "chain.rise"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(String::from_utf8_lossy(&out.stdout).contains("main : 16.f32 -> 16.f32"));
    assert!(took < Duration::from_secs(20), "check: {took:?}");
    let compile = ["compile", "scalar.rise", "--def", "main", "--apply", "id"];
    let (out, took) = shine_limited(d, &compile);
    assert!(out.status.success(), "{}", stderr(&out));
    let code = String::from_utf8_lossy(&out.stdout);
    assert_eq!(code.matches("+ 1.0f").count(), 2000, "{code}");
    assert!(took < Duration::from_secs(20), "compile: {took:?}");
}
