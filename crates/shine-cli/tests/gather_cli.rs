//! Indices read from data compile (issue 14, item 3): `gather`, `scatter` (a
//! permutation), `idx` with a run-time index inside a map (a lookup table) and inside a
//! reduction (a sparse matrix-vector product), and `natAsIndex` of run-time values
//! (`examples/gather.rise`). Each runs on C, OpenMP and OpenCL (PoCL) at sizes 1, 7 and
//! 13 with `--verify`, and its result is compared with a reference computed here from
//! the inputs; an index out of range and a repeated `scatter` position stop the program
//! with a clear error on each target; `--unchecked-indices` leaves the checks out.
//!
//! Without any OpenCL platform the OpenCL runs FAIL, as the runtime's tests do; set
//! `SHINE_SKIP_OPENCL=1` to skip them.

use shine::rise::interp::Scalar;
use shine::rise::{DataType, ScalarType};
use shine::Array;
use std::path::Path;
use std::process::Output;

mod support;
use support::{shine_in as shine, targets_with_strategies as targets};

const STRATEGIES: &str = "
def cpu = DFNF ; lowerToC
def omp = DFNF ; try(parallel @ function @ function @ outermost(appliedMap)) ;; lowerToC
def gpu = DFNF ; try(toMapGlobal(0) @ outermost(isMap)) ;; lowerToC
";

fn dir() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let example = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/gather.rise");
    std::fs::copy(example, dir.path().join("gather.rise")).unwrap();
    std::fs::write(dir.path().join("gather.elv"), STRATEGIES).unwrap();
    dir
}

fn write(dir: &Path, name: &str, elem: ScalarType, shape: Vec<usize>, data: Vec<Scalar>) {
    let array = Array {
        elem: DataType::Scalar(elem),
        shape,
        data,
    };
    shine::npy::write(&dir.join(name), &array).unwrap();
}

fn ints(dir: &Path, name: &str, shape: Vec<usize>, values: &[i64]) {
    let data = values.iter().map(|&v| Scalar::I64(v)).collect();
    write(dir, name, ScalarType::I64, shape, data);
}

fn floats(dir: &Path, name: &str, values: &[f32]) {
    let data = values.iter().map(|&v| Scalar::F32(v)).collect();
    write(dir, name, ScalarType::F32, vec![values.len()], data);
}

/// `shine run` of `def` on `target` under `strategy` with these inputs and extra arguments.
fn run(dir: &Path, def: &str, (target, strategy): (&str, &str), args: &[&str]) -> (Output, String) {
    let mut all = vec![
        "run",
        "gather.rise",
        "--def",
        def,
        "--strategy",
        "gather.elv",
    ];
    all.extend(["--apply", strategy, "--target", target]);
    all.extend(args);
    shine(dir, &all)
}

/// The result as `shine run` prints it.
fn printed(values: &[f32]) -> String {
    let items: Vec<String> = values.iter().map(|v| format!("{v:?}")).collect();
    format!("[{}]", items.join(", "))
}

/// A permutation of `0..n` (5 is prime to 1, 7 and 13).
fn permutation(n: usize) -> Vec<i64> {
    (0..n).map(|j| ((j * 5 + 3) % n) as i64).collect()
}

#[test]
fn gathers_scatters_and_lookups_agree_with_the_interpreter_and_a_reference() {
    let dir = dir();
    let d = dir.path();
    for n in [1usize, 7, 13] {
        let is = permutation(n);
        let xs: Vec<f32> = (0..n).map(|j| 10.0 * j as f32).collect();
        ints(d, "is.npy", vec![n], &is);
        ints(d, "ks.npy", vec![n], &is);
        floats(d, "xs.npy", &xs);
        // spmv: 3 non-zeros per row, columns (3i + 2t) mod n, values t + 1, x = xs
        let k = 3;
        let cols: Vec<i64> = (0..n * k)
            .map(|p| ((3 * (p / k) + 2 * (p % k)) % n) as i64)
            .collect();
        let vals: Vec<f32> = (0..n * k).map(|p| (p % k) as f32 + 1.0).collect();
        ints(d, "cols.npy", vec![n, k], &cols);
        write(
            d,
            "vals.npy",
            ScalarType::F32,
            vec![n, k],
            vals.iter().map(|&v| Scalar::F32(v)).collect(),
        );
        let gathered: Vec<f32> = is.iter().map(|&i| xs[i as usize]).collect();
        let mut placed = vec![0.0; n];
        for (j, &i) in is.iter().enumerate() {
            placed[i as usize] = xs[j];
        }
        let looked_up: Vec<f32> = gathered.iter().map(|v| v * 2.0).collect();
        let spmv: Vec<f32> = (0..n)
            .map(|r| {
                (0..k)
                    .map(|t| vals[r * k + t] * xs[cols[r * k + t] as usize])
                    .sum()
            })
            .collect();
        let cases: [(&str, &[&str], &[f32]); 5] = [
            ("permute", &["is.npy", "xs.npy"], &gathered),
            ("place", &["is.npy", "xs.npy"], &placed),
            ("lookupScaled", &["is.npy", "xs.npy"], &looked_up),
            ("spmv", &["cols.npy", "vals.npy", "xs.npy"], &spmv),
            ("pick", &["ks.npy", "xs.npy"], &gathered),
        ];
        for (def, inputs, want) in cases {
            let mut args = vec!["--verify"];
            for i in inputs {
                args.extend(["--input", i]);
            }
            for t in targets() {
                let (out, text) = run(d, def, t, &args);
                assert!(
                    out.status.success() && text.contains("verified against the interpreter"),
                    "{def} --target {} n={n}: {text}",
                    t.0
                );
                assert!(
                    text.contains(&printed(want)),
                    "{def} --target {} n={n}: expected {}, got {text}",
                    t.0,
                    printed(want)
                );
            }
        }
    }
}

#[test]
fn an_index_out_of_range_or_a_repeated_position_stops_the_program() {
    let dir = dir();
    let d = dir.path();
    // natAsIndex 8 of 12: outside 0..8
    ints(d, "ks.npy", vec![3], &[0, 12, 3]);
    floats(d, "xs8.npy", &[1.0; 8]);
    // two values for position 1 (and none for 2)
    ints(d, "dup.npy", vec![3], &[1, 0, 1]);
    floats(d, "xs3.npy", &[1.0, 2.0, 3.0]);
    for t in targets() {
        let (out, text) = run(d, "pick", t, &["--input", "ks.npy", "--input", "xs8.npy"]);
        assert!(!out.status.success(), "pick --target {}: {text}", t.0);
        assert!(
            text.contains("`pick`: an index read from data is outside the range of its type"),
            "pick --target {}: {text}",
            t.0
        );
        let (out, text) = run(d, "place", t, &["--input", "dup.npy", "--input", "xs3.npy"]);
        assert!(!out.status.success(), "place --target {}: {text}", t.0);
        assert!(
            text.contains("`place`: `scatter` writes two values to one position"),
            "place --target {}: {text}",
            t.0
        );
    }
}

/// A `scatter` position out of range (`natAsIndex` of 5 into 3 positions) is reported as
/// out of range, as the interpreter reports it, not as the duplicate position that reading
/// the failed position as 0 makes (a duplicate is reported only where nothing else failed).
#[test]
fn an_out_of_range_scatter_position_is_reported_as_out_of_range() {
    let dir = dir();
    let d = dir.path();
    std::fs::write(
        d.join("gather.rise"),
        "def placeAt : {n: nat} -> n.natType -> n.f32 -> n.f32 =\n  \
         fun ks xs => scatter (ks |> map (fun k => natAsIndex n k)) xs\n",
    )
    .unwrap();
    floats(d, "xs3.npy", &[1.0, 2.0, 3.0]);
    for (positions, eval_says) in [
        (&[5, 0, 1], "5 is not an index into 3 elements"),
        (&[0, 1, 7], "7 is not an index into 3 elements"),
    ] {
        ints(d, "ks.npy", vec![3], positions);
        let inputs = ["--input", "ks.npy", "--input", "xs3.npy"];
        let mut eval = vec!["eval", "gather.rise", "--def", "placeAt"];
        eval.extend(inputs);
        let (out, text) = shine(d, &eval);
        assert!(!out.status.success() && text.contains(eval_says), "{text}");
        // each target's default schedule
        for (t, _) in targets() {
            let mut run = vec!["run", "gather.rise", "--def", "placeAt", "--target", t];
            run.extend(inputs);
            let (out, text) = shine(d, &run);
            assert!(!out.status.success(), "{positions:?} on {t}: {text}");
            assert!(
                text.contains("`placeAt`: an index read from data is outside the range"),
                "{positions:?} on {t}: {text}"
            );
        }
    }
}

#[test]
fn scatter_of_fewer_values_than_positions_is_refused_before_it_runs() {
    let dir = dir();
    std::fs::write(
        dir.path().join("short.rise"),
        "def short : {n: nat} -> n.idx[n+1] -> n.f32 -> (n+1).f32 = fun is xs => scatter is xs\n",
    )
    .unwrap();
    ints(dir.path(), "is.npy", vec![2], &[0, 1]);
    floats(dir.path(), "xs.npy", &[1.0, 2.0]);
    let (out, text) = shine(
        dir.path(),
        &[
            "run",
            "short.rise",
            "--def",
            "short",
            "--input",
            "is.npy",
            "--input",
            "xs.npy",
        ],
    );
    assert!(!out.status.success(), "{text}");
    assert!(
        text.contains("`scatter` of n values into n+1 positions leaves positions unwritten"),
        "{text}"
    );
}

#[test]
fn unchecked_indices_leave_the_checks_out() {
    let dir = dir();
    let d = dir.path();
    for target in ["c", "openmp", "opencl", "cuda"] {
        for def in ["place", "spmv", "pick"] {
            let args = [
                "compile",
                "gather.rise",
                "--def",
                def,
                "--strategy",
                "gather.elv",
            ];
            let strategy = if matches!(target, "opencl" | "cuda") {
                "gpu"
            } else {
                "cpu"
            };
            let base: Vec<&str> = args
                .into_iter()
                .chain(["--apply", strategy, "--target", target])
                .collect();
            let (out, checked) = shine(d, &base);
            assert!(out.status.success(), "{def} {target}: {checked}");
            assert!(
                checked.contains("shine_in_range("),
                "{def} {target}: {checked}"
            );
            assert_eq!(
                def == "place",
                checked.contains("shine_claim("),
                "{checked}"
            );
            let mut unchecked_args = base.clone();
            unchecked_args.push("--unchecked-indices");
            let (out, unchecked) = shine(d, &unchecked_args);
            assert!(out.status.success(), "{def} {target}: {unchecked}");
            assert!(
                !unchecked.contains("shine_in_range"),
                "{def} {target}: {unchecked}"
            );
            assert!(
                !unchecked.contains("shine_claim"),
                "{def} {target}: {unchecked}"
            );
            assert!(!unchecked.contains("status"), "{def} {target}: {unchecked}");
        }
    }
    // and the unchecked code computes the same result
    let n = 7;
    ints(d, "is.npy", vec![n], &permutation(n));
    floats(d, "xs.npy", &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0]);
    for t in targets() {
        for def in ["permute", "place"] {
            let args = [
                "--input",
                "is.npy",
                "--input",
                "xs.npy",
                "--verify",
                "--unchecked-indices",
            ];
            let (out, text) = run(d, def, t, &args);
            assert!(
                out.status.success() && text.contains("verified against the interpreter"),
                "{def} --target {}: {text}",
                t.0
            );
        }
    }
}

/// `scatter` of rows: a position is claimed once for its whole row (the duplicate check
/// fired at the second element of every row: found by porting the CGO'18 stencils).
#[test]
fn a_scatter_of_rows_claims_each_row_once() {
    let dir = dir();
    let d = dir.path();
    let xs: Vec<Scalar> = (0..6).map(|v| Scalar::F32(v as f32)).collect();
    write(d, "rows.npy", ScalarType::F32, vec![3, 2], xs);
    ints(d, "perm.npy", vec![3], &[2, 0, 1]);
    ints(d, "dup.npy", vec![3], &[2, 0, 2]);
    for t in targets() {
        let (out, text) = run(
            d,
            "placeRows",
            t,
            &["--input", "perm.npy", "--input", "rows.npy", "--verify"],
        );
        assert!(
            out.status.success() && text.contains("[[2.0, 3.0], [4.0, 5.0], [0.0, 1.0]]"),
            "placeRows --target {}: {text}",
            t.0
        );
        let (out, text) = run(
            d,
            "placeRows",
            t,
            &["--input", "dup.npy", "--input", "rows.npy"],
        );
        assert!(
            !out.status.success() && text.contains("`scatter` writes two values to one position"),
            "placeRows --target {}: {text}",
            t.0
        );
    }
}
