//! The 3-D stencils on GPUs (issue 27): heat3d.rise's `heat3d` and stencils.rise's
//! `j3d7ptClamped` under examples/gpu.elv's `global3d`, `global3dVec` (float4 rows) and
//! `stream3d` (every work-item walks a column along z, the window of three planes in its
//! registers: `slideSeq`). Each is verified against the interpreter on OpenCL (PoCL here),
//! and on CUDA where there is a GPU (`SHINE_TEST_GPU=1`), at sizes 1, odd and prime, the
//! three sizes independent; the printed OpenCL and CUDA are checked for the vector loads and
//! the register window.

mod support;
use support::{fails_with, gpu_targets, repo_root, run_gpu_strategy_at, shine_in};

/// The programs and definitions of the 3-D stencils.
const STENCILS: [(&str, &str); 2] = [
    ("examples/heat3d.rise", "heat3d"),
    ("examples/stencils.rise", "j3d7ptClamped"),
];

/// `shine run` of `def` under `strategy` of examples/gpu.elv on `target` at `o x n x m`,
/// random inputs, verified against the interpreter.
fn verified(program: &str, def: &str, strategy: &str, target: &str, (o, n, m): (i64, i64, i64)) {
    let sizes = [("o", o), ("n", n), ("m", m)];
    let (ok, text) = run_gpu_strategy_at(target, program, def, strategy, &sizes);
    assert!(
        ok && text.contains("verified against the interpreter"),
        "{def} under {strategy} on {target} at {sizes:?}\n{text}"
    );
}

/// `shine compile` of `def` under `strategy` for `target`: the printed code.
fn compiled(program: &str, def: &str, strategy: &str, target: &str) -> String {
    let args = [
        "compile",
        program,
        "--def",
        def,
        "--strategy",
        "examples/gpu.elv",
        "--apply",
        strategy,
        "--target",
        target,
    ];
    let (out, text) = shine_in(repo_root(), &args);
    assert!(out.status.success(), "shine {}\n{text}", args.join(" "));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// `global3dVec`: the centre row and the rows of the four neighbours in the y and z
/// directions are whole vector loads (OpenCL `vload4` by vector index, CUDA an aligned
/// `float4` load), the result one vector store; the x neighbours are 4 elements one off.
#[test]
fn global3d_vec_loads_and_stores_float4_rows() {
    for (program, def) in STENCILS {
        let cl = compiled(program, def, "global3dVec", "opencl");
        // z - 1, z + 1, y - 1, y + 1 and the centre: 5 aligned vector loads
        assert_eq!(
            cl.matches(", grid)").count() + cl.matches(", input)").count(),
            5,
            "{cl}"
        );
        assert!(cl.contains("vstore4("), "{cl}");
        assert!(cl.contains("gid0 * 4 - 1 >= 0 ? vload4(0, &"), "{cl}");
        let cu = compiled(program, def, "global3dVec", "cuda");
        assert!(
            cu.contains("*(float4 *)&output[gid2 * m * n + gid1 * m + gid0 * 4] = "),
            "{cu}"
        );
        assert_eq!(cu.matches("*(const float4 *)&").count(), 5, "{cu}");
        assert!(cu.contains("at least m / 4 x n x o work-items"), "{cu}");
    }
}

/// The grid sizes the GPU strategies are verified at: 1, odd and prime, each size
/// independent of the others; `m` a multiple of 4 for the vectorized ones.
const SIZES: [(i64, i64, i64); 5] = [(1, 1, 1), (3, 5, 7), (7, 13, 11), (13, 1, 3), (2, 7, 13)];
const VEC_SIZES: [(i64, i64, i64); 5] = [(1, 1, 4), (3, 5, 8), (7, 13, 12), (13, 1, 4), (5, 3, 20)];

#[test]
fn global3d_and_global3d_vec_verify_at_odd_and_prime_sizes() {
    for target in gpu_targets() {
        for (program, def) in STENCILS {
            for sizes in SIZES {
                verified(program, def, "global3d", target, sizes);
            }
            for sizes in VEC_SIZES {
                verified(program, def, "global3dVec", target, sizes);
            }
        }
    }
}

/// A row that is no whole number of vectors is refused with the constraint.
#[test]
fn global3d_vec_and_stream3d_vec_refuse_rows_that_are_no_multiple_of_4() {
    for strategy in ["global3dVec", "stream3dVec"] {
        refused_at_m_7(strategy);
    }
}

fn refused_at_m_7(strategy: &str) {
    let args = [
        "run",
        "examples/heat3d.rise",
        "--def",
        "heat3d",
        "--strategy",
        "examples/gpu.elv",
        "--apply",
        strategy,
        "--target",
        "opencl",
        "--nat",
        "o=3",
        "--nat",
        "n=5",
        "--nat",
        "m=7",
        "--random",
        "1",
    ];
    fails_with(&shine_in(repo_root(), &args), "4 must divide m, but m = 7");
}

/// `stream3d`: one work-item per column (y, x), a loop over z inside it, the window of
/// three planes' neighbourhoods (3x3x3 values) in a private array moved on by one plane
/// per step, and the one new plane read per step.
#[test]
fn stream3d_walks_columns_with_the_window_in_registers() {
    for (program, def) in STENCILS {
        for target in ["opencl", "cuda"] {
            let code = compiled(program, def, "stream3d", target);
            assert!(code.contains("at least m x n work-items"), "{code}");
            assert!(code.contains("float window"), "{code}");
            assert!(code.contains("[27];"), "{code}");
            assert!(code.contains("// slideSeq"), "{code}");
            assert!(code.contains(" < o; "), "{code}");
            // the window moves on by a plane: slot 0 takes slot 9's value, ...
            assert!(code.contains("[0] = window"), "{code}");
            assert!(code.contains("[9];"), "{code}");
            // no loop over work-items in z: dimension 2 is not used
            assert!(!code.contains("gid2"), "{code}");
        }
        let c = compiled(program, def, "stream3dPar", "openmp");
        assert!(c.contains("#pragma omp parallel for"), "{c}");
        assert!(c.contains("// slideSeq"), "{c}");
    }
}

/// `stream3dVec`: a work-item walks 4 neighbouring columns, the window's values float4,
/// the rows of the next plane read as vectors (aligned loads for the centre rows) and the
/// result stored as one.
#[test]
fn stream3d_vec_walks_four_columns_with_float4_windows() {
    for (program, def) in STENCILS {
        let cu = compiled(program, def, "stream3dVec", "cuda");
        assert!(cu.contains("float4 window"), "{cu}");
        assert!(cu.contains("at least m / 4 x n work-items"), "{cu}");
        // the centre rows of the planes' 3x3 neighbourhoods, aligned: 6 before the walk
        // (the first two planes), 3 per step
        assert_eq!(cu.matches("] = *(const float4 *)&").count(), 9, "{cu}");
        assert!(
            cu.contains("*(float4 *)&output[gid1 * m + gid0 * 4 + "),
            "{cu}"
        );
        let cl = compiled(program, def, "stream3dVec", "opencl");
        assert!(cl.contains("float4 window"), "{cl}");
        assert!(cl.contains("vstore4("), "{cl}");
        let c = compiled(program, def, "stream3dVecPar", "openmp");
        assert!(c.contains("#pragma omp parallel for"), "{c}");
    }
}

#[test]
fn stream3d_verifies_at_odd_and_prime_sizes() {
    for target in gpu_targets() {
        for (program, def) in STENCILS {
            for sizes in SIZES {
                verified(program, def, "stream3d", target, sizes);
            }
        }
    }
    for target in ["c", "openmp"] {
        for (program, def) in STENCILS {
            for sizes in SIZES {
                verified(program, def, "stream3dPar", target, sizes);
            }
        }
    }
}

#[test]
fn stream3d_vec_verifies_at_odd_and_prime_sizes() {
    for target in gpu_targets() {
        for (program, def) in STENCILS {
            for sizes in VEC_SIZES {
                verified(program, def, "stream3dVec", target, sizes);
            }
        }
    }
    for target in ["c", "openmp"] {
        for (program, def) in STENCILS {
            for sizes in VEC_SIZES {
                verified(program, def, "stream3dVecPar", target, sizes);
            }
        }
    }
}

/// `slideSeq` is compiled with a constant window and a result that is written; other uses
/// are errors that say what to do, and `toSlideSeq` leaves a slide by more than 1 alone.
#[test]
fn slide_seq_refuses_what_it_cannot_compile() {
    let window_of_k = "def f : {n k: nat} -> (n+k).f32 -> (n+1).f32 = fun xs => \
                       slideSeq k (reduceSeq add 0.0f) xs";
    let (ok, text) = support::shine_on(window_of_k, &["compile", "--def", "f", "--target", "c"]);
    assert!(
        !ok && text.contains("the window must be a constant"),
        "{text}"
    );
    assert!(!text.contains("panicked"), "{text}");
    let read = "def f : {n: nat} -> (n+3).f32 -> f32 = fun xs => \
                reduceSeq add 0.0f (slideSeq 3 (reduceSeq add 0.0f) xs)";
    let (ok, text) = support::shine_on(read, &["compile", "--def", "f", "--target", "c"]);
    assert!(
        !ok && text.contains("the result of `slideSeq` is read but not stored"),
        "{text}"
    );
    let step_2 = "def f : {n: nat} -> (2*n+3).f32 -> (n+1).f32 = fun xs => \
                  mapSeq (reduceSeq add 0.0f) (slide 3 2 xs)";
    let (ok, text) = support::shine_on(
        step_2,
        &["rewrite", "--def", "f", "--apply", "toSlideSeq @ topDown"],
    );
    assert!(!ok && text.contains("not applicable"), "{text}");
}
