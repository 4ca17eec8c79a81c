//! Long chains of definitions compile with the default schedule in time about linear in
//! their length: BENF rewrites each redex once instead of searching the program again
//! from its root after each (quadratic), and `storeInMemory` remembers where it found
//! nothing instead of searching every sub-program again (quadratic).

use std::path::Path;
use std::time::{Duration, Instant};

mod support;

/// `def fK = fun xs => f(K-1) xs |> map (fun x => x + 1.0f)`, `n` of them, and `main`.
fn chain(n: usize) -> String {
    let mut program = String::from("def f0 = fun xs => xs |> map (fun x => x + 1.0f)\n");
    for k in 1..n {
        program.push_str(&format!(
            "def f{k} = fun xs => f{} xs |> map (fun x => x + 1.0f)\n",
            k - 1
        ));
    }
    program.push_str(&format!("def main : 16.f32 -> 16.f32 = f{}\n", n - 1));
    program
}

/// `shine compile` of the chain of `n` definitions with the default schedule of C: the
/// time it took; fails unless the code adds 1 `n` times.
fn compile_chain(dir: &Path, n: usize) -> Duration {
    let file = format!("chain{n}.rise");
    std::fs::write(dir.join(&file), chain(n)).unwrap();
    let started = Instant::now();
    let (out, text) = support::shine_in(dir, &["compile", &file, "--def", "main", "--target", "c"]);
    let took = started.elapsed();
    assert!(out.status.success(), "{text}");
    let code = String::from_utf8_lossy(&out.stdout);
    assert_eq!(code.matches("+ 1.0f").count(), n, "{code}");
    took
}

/// 1,000 definitions take less than four times what 500 take (a quadratic pass takes
/// four times, a linear one twice), with slack for a loaded machine; 2,000 compile (they
/// hit the 50M-application budget of the rewrite before).
#[test]
fn chained_definitions_compile_in_about_linear_time() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    compile_chain(d, 100);
    let half = compile_chain(d, 500);
    let full = compile_chain(d, 1000);
    let slack = Duration::from_secs(2);
    assert!(
        full < half * 4 + slack,
        "500 definitions: {half:?}, 1,000: {full:?}"
    );
    let two_thousand = compile_chain(d, 2000);
    assert!(
        two_thousand < Duration::from_secs(120),
        "2,000 definitions: {two_thousand:?}"
    );
}
