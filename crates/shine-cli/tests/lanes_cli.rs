//! The lanes of a vector (issue 14 item 5): `lane k v` reads lane `k`, `makeVector n x1
//! ... xn` builds a vector (`examples/lanes.rise`: float4 particles as molecular dynamics
//! keeps them). Each definition runs on C, OpenMP and OpenCL (PoCL) at sizes 1, 7 and 13
//! with `--verify`, and its result is compared with a reference computed here from the
//! inputs; a vector kept in private memory is read lane by lane in each target's
//! spelling; a lane at or beyond the vector's width is a type error pointing at it, and
//! one that depends on a size is a constraint checked when the size is known. Vectors cross
//! the boundary: `forcesVec` takes the particles as `n.vec[f32, 4]` from the `n x 4` file
//! `forces` takes and writes its float4 results as an `n x 4` file; (position, velocity)
//! pairs of float4 come as a structured array with two `(4,)` fields or as `n x 8`.
//!
//! Without any OpenCL platform the OpenCL runs FAIL, as the runtime's tests do; set
//! `SHINE_SKIP_OPENCL=1` to skip them. With `SHINE_TEST_GPU=1` (a GPU machine,
//! scripts/gpu-tests.sh) they run on CUDA too.

use shine::rise::interp::Scalar;
use shine::rise::ScalarType;
use shine::Array;
use std::path::Path;

mod support;
use support::{shine_in as shine, targets_with_strategies as targets};

const STRATEGIES: &str = "
def cpu = DFNF ; lowerToC
def omp = DFNF ; try(parallel @ function @ function @ outermost(appliedMap)) ;; lowerToC
def gpu = DFNF ; try(toMapGlobal(0) @ outermost(isMap)) ;; lowerToC
";

/// A vector stored in private memory, then read lane by lane.
const PRIVATE: &str = "
def spread : {n: nat} -> n.4.f32 -> n.f32 =
  fun ps => ps |> join |> asVector 4
    |> map (fun p => toMem private (p * p) (fun q => lane 0 q + lane 3 q))

// the vector's width is a size: `2 < w` is checked when `w` is known
def wide : {m w: nat} -> (m*w).f32 -> m.f32 =
  fun xs => xs |> asVector w |> map (fun v => lane 2 v)
";

fn dir() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let example = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/lanes.rise");
    std::fs::copy(example, dir.path().join("lanes.rise")).unwrap();
    std::fs::write(dir.path().join("lanes.elv"), STRATEGIES).unwrap();
    std::fs::write(dir.path().join("private.rise"), PRIVATE).unwrap();
    dir
}

/// `n` particles (x, y, z, mass) as an `n x 4` array, from `seed`.
fn particles(n: usize, seed: usize) -> Vec<[f32; 4]> {
    (0..n)
        .map(|i| {
            let v = |k: usize| ((i * 37 + k * 11 + seed * 5) % 29) as f32 / 7.0 - 2.0;
            [v(0), v(1), v(2), 0.5 + v(3).abs()]
        })
        .collect()
}

fn write(dir: &Path, name: &str, ps: &[[f32; 4]]) {
    let array = Array {
        elem: shine::rise::DataType::Scalar(ScalarType::F32),
        shape: vec![ps.len(), 4],
        data: ps.iter().flatten().map(|&v| Scalar::F32(v)).collect(),
    };
    shine::npy::write(&dir.join(name), &array).unwrap();
}

fn read(path: &Path) -> Vec<f64> {
    let array = shine::npy::read(path).unwrap();
    array
        .data
        .iter()
        .map(|v| match v {
            Scalar::F32(x) => f64::from(*x),
            other => panic!("expected f32 results, got {other:?}"),
        })
        .collect()
}

/// `shine run` of `def` of `program` on `target` under `strategy`, with these inputs,
/// verified against the interpreter; its result.
fn run_verified(
    dir: &Path,
    program: &str,
    def: &str,
    (target, strategy): (&str, &str),
    inputs: &[&str],
) -> Vec<f64> {
    let mut args = vec!["run", program, "--def", def, "--strategy", "lanes.elv"];
    args.extend(["--apply", strategy, "--target", target, "--verify"]);
    for i in inputs {
        args.extend(["--input", i]);
    }
    args.extend(["--output", "out.npy"]);
    let (out, text) = shine(dir, &args);
    let case = format!("{def} on {target} ({inputs:?})");
    assert!(out.status.success(), "{case}: {text}");
    assert!(
        text.contains("verified against the interpreter"),
        "{case}: {text}"
    );
    read(&dir.join("out.npy"))
}

fn assert_close(got: &[f64], want: &[f64], what: &str) {
    assert_eq!(got.len(), want.len(), "{what}: {got:?} vs {want:?}");
    let scale = want.iter().fold(1.0f64, |m, w| m.max(w.abs()));
    for (g, w) in got.iter().zip(want) {
        assert!(
            (g - w).abs() <= 1e-4 * scale,
            "{what}: {got:?}\nwant {want:?}"
        );
    }
}

fn sq_length(ps: &[[f32; 4]]) -> Vec<f64> {
    ps.iter()
        .map(|p| p[..3].iter().map(|&x| f64::from(x) * f64::from(x)).sum())
        .collect()
}

fn advance(pos: &[[f32; 4]], vel: &[[f32; 4]]) -> Vec<f64> {
    pos.iter()
        .zip(vel)
        .flat_map(|(p, v)| {
            let moved = |k: usize| f64::from(p[k]) + 0.01 * f64::from(v[k]);
            [moved(0), moved(1), moved(2), f64::from(p[3])]
        })
        .collect()
}

fn forces(ps: &[[f32; 4]]) -> Vec<f64> {
    let f = |x: f32| f64::from(x);
    ps.iter()
        .flat_map(|pi| {
            let mut sum = [0.0f64; 4];
            for pj in ps {
                let d: Vec<f64> = (0..3).map(|k| f(pj[k]) - f(pi[k])).collect();
                let inv = 1.0 / (d.iter().map(|x| x * x).sum::<f64>() + 0.01);
                let s = f(pj[3]) * inv * inv.sqrt();
                for k in 0..3 {
                    sum[k] += s * d[k];
                }
            }
            sum
        })
        .collect()
}

#[test]
fn float4_particles_agree_with_the_interpreter_and_a_reference() {
    let dir = dir();
    let d = dir.path();
    for n in [1usize, 7, 13] {
        let (pos, vel) = (particles(n, 1), particles(n, 2));
        write(d, "pos.npy", &pos);
        write(d, "vel.npy", &vel);
        let cases: [(&str, &[&str], Vec<f64>); 3] = [
            ("sqLength", &["pos.npy"], sq_length(&pos)),
            ("advance", &["pos.npy", "vel.npy"], advance(&pos, &vel)),
            ("forces", &["pos.npy"], forces(&pos)),
        ];
        for target in targets() {
            for (def, inputs, want) in &cases {
                let got = run_verified(d, "lanes.rise", def, target, inputs);
                assert_close(&got, want, &format!("{def} on {} at n={n}", target.0));
            }
        }
    }
}

/// (position, velocity) pairs of float4 as `n.(vec[f32, 4], vec[f32, 4])`: a structured array
/// with two fields of shape `(4,)` (`structured`) or a plain `n x 8` array.
fn write_pairs(dir: &Path, name: &str, pos: &[[f32; 4]], vel: &[[f32; 4]], structured: bool) {
    let data: Vec<Scalar> = pos
        .iter()
        .zip(vel)
        .flat_map(|(p, v)| p.iter().chain(v).map(|&x| Scalar::F32(x)))
        .collect();
    let f32x4 = shine::rise::DataType::vector(shine::rise::DataType::f32(), 4);
    let (elem, shape) = if structured {
        (
            shine::rise::DataType::pair(f32x4.clone(), f32x4),
            vec![pos.len()],
        )
    } else {
        (shine::rise::DataType::f32(), vec![pos.len(), 8])
    };
    let array = Array { elem, shape, data };
    shine::npy::write(&dir.join(name), &array).unwrap();
}

fn kinetic(pos: &[[f32; 4]], vel: &[[f32; 4]]) -> Vec<f64> {
    pos.iter()
        .zip(vel)
        .map(|(p, v)| {
            let v2: f64 = v[..3].iter().map(|&x| f64::from(x) * f64::from(x)).sum();
            0.5 * f64::from(p[3]) * v2
        })
        .collect()
}

#[test]
fn float4_particles_given_as_vectors_agree_with_the_arrays_and_a_reference() {
    let dir = dir();
    let d = dir.path();
    for n in [1usize, 7, 13] {
        let (pos, vel) = (particles(n, 4), particles(n, 5));
        write(d, "pos.npy", &pos);
        write_pairs(d, "pv.npy", &pos, &vel, true);
        write_pairs(d, "pv8.npy", &pos, &vel, false);
        let want_forces = forces(&pos);
        for target in targets() {
            let case = |def: &str| format!("{def} on {} at n={n}", target.0);
            // the file `forces` takes, as vectors: the same sums, an n x 4 result
            let got = run_verified(d, "lanes.rise", "forcesVec", target, &["pos.npy"]);
            assert_close(&got, &want_forces, &case("forcesVec"));
            let arrays = run_verified(d, "lanes.rise", "forces", target, &["pos.npy"]);
            assert_close(&got, &arrays, &case("forcesVec against forces"));
            for file in ["pv.npy", "pv8.npy"] {
                let got = run_verified(d, "lanes.rise", "advanceVec", target, &[file]);
                assert_close(&got, &advance(&pos, &vel), &case("advanceVec"));
                let got = run_verified(d, "lanes.rise", "kinetic", target, &[file]);
                assert_close(&got, &kinetic(&pos, &vel), &case("kinetic"));
            }
        }
        // the interpreter reads the files alike
        let (out, text) = shine(
            d,
            &[
                "eval",
                "lanes.rise",
                "--def",
                "forcesVec",
                "--input",
                "pos.npy",
            ],
        );
        assert!(out.status.success(), "{text}");
        assert_eq!(text.matches('<').count(), n, "n float4 values: {text}");
        let (out, text) = shine(
            d,
            &[
                "eval",
                "lanes.rise",
                "--def",
                "kinetic",
                "--input",
                "pv.npy",
                "--output",
                "k.npy",
            ],
        );
        assert!(out.status.success(), "{text}");
        assert_close(
            &read(&d.join("k.npy")),
            &kinetic(&pos, &vel),
            "eval kinetic",
        );
    }
}

#[test]
fn a_vector_in_private_memory_is_read_lane_by_lane_on_every_target() {
    let dir = dir();
    let d = dir.path();
    for n in [1usize, 7, 13] {
        let ps = particles(n, 3);
        write(d, "ps.npy", &ps);
        let want: Vec<f64> = ps
            .iter()
            .map(|p| f64::from(p[0] * p[0]) + f64::from(p[3] * p[3]))
            .collect();
        for target in targets() {
            let got = run_verified(d, "private.rise", "spread", target, &["ps.npy"]);
            assert_close(&got, &want, &format!("spread on {} at n={n}", target.0));
        }
    }
    // each target's spelling of a lane and of a vector built from lanes (compiled only)
    let spellings = [
        ("c", "private.rise", "spread", "mem1[0] + mem1[3]"),
        ("opencl", "private.rise", "spread", "mem1.s0 + mem1.s3"),
        ("cuda", "private.rise", "spread", "mem1.x + mem1.w"),
        (
            "c",
            "lanes.rise",
            "advance",
            "= (float4){pos[i0 * 4] + 0.01f * vel[i0 * 4], ",
        ),
        (
            "opencl",
            "lanes.rise",
            "advance",
            "vstore4((float4)(pos[gid0 * 4]",
        ),
        (
            "cuda",
            "lanes.rise",
            "advance",
            "= make_float4(pos[gid0 * 4]",
        ),
    ];
    for (target, program, def, want) in spellings {
        let strategy = if target == "c" { "cpu" } else { "gpu" };
        let (out, text) = shine(
            d,
            &[
                "compile",
                program,
                "--def",
                def,
                "--strategy",
                "lanes.elv",
                "--apply",
                strategy,
                "--target",
                target,
            ],
        );
        assert!(out.status.success(), "{def} on {target}: {text}");
        assert!(
            text.contains(want),
            "{def} on {target}: no `{want}` in\n{text}"
        );
    }
}

#[test]
fn a_lane_beyond_the_width_is_a_type_error_and_a_symbolic_one_a_size_constraint() {
    let dir = dir();
    let d = dir.path();
    let bad = "def bad : {n: nat} -> (n*4).f32 -> n.f32 =\n  fun xs => xs |> asVector 4 |> map (fun v => lane 4 v)\n";
    std::fs::write(d.join("bad.rise"), bad).unwrap();
    let (out, text) = shine(d, &["check", "bad.rise"]);
    assert!(!out.status.success(), "{text}");
    assert!(
        text.contains("the index 4 must be below the size 4"),
        "{text}"
    );
    assert!(
        text.contains("bad.rise:2:"),
        "no position of the lane: {text}"
    );
    assert!(!text.contains("panicked"), "{text}");
    // a width known only from the sizes: listed by `check`, tested when they are given
    let (out, text) = shine(d, &["check", "private.rise"]);
    assert!(out.status.success(), "{text}");
    assert!(text.contains("where 2 < w"), "{text}");
    let xs = |name: &str, len: usize| {
        let array = Array {
            elem: shine::rise::DataType::Scalar(ScalarType::F32),
            shape: vec![len],
            data: (0..len).map(|i| Scalar::F32(i as f32)).collect(),
        };
        shine::npy::write(&d.join(name), &array).unwrap();
    };
    xs("x6.npy", 6);
    xs("x12.npy", 12);
    let eval = |w: &str, input: &str| {
        shine(
            d,
            &[
                "eval",
                "private.rise",
                "--def",
                "wide",
                "--nat",
                "m=3",
                "--nat",
                w,
                "--input",
                input,
            ],
        )
    };
    let (out, text) = eval("w=2", "x6.npy");
    assert!(!out.status.success(), "{text}");
    assert!(
        text.contains("size constraint of `wide` does not hold: the index 2 must be below the size w, but w = 2"),
        "{text}"
    );
    let (out, text) = eval("w=4", "x12.npy");
    assert!(out.status.success(), "{text}");
    assert!(text.contains("[2.0, 6.0, 10.0]"), "{text}");
}
