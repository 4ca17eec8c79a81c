//! Tensor cores (issue 26): `mmaSync` in `examples/tensor.rise`'s `mmWarps` runs on CUDA
//! (with `SHINE_TEST_GPU=1`: f16 and bf16, at sizes of one tile and of odd and prime tile
//! counts, verified against the interpreter), and every place it cannot run is refused
//! with a message: outside a `mapWarp` loop, inside a `mapLane` loop, on C and OpenCL.

mod support;

use std::path::Path;
use support::{shine_in, test_gpu};

fn root() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
}

/// The definitions of examples/tensor.rise at the element type `t` (f16 or bf16).
fn tensor_example_at(t: &str) -> String {
    let text = std::fs::read_to_string(root().join("examples/tensor.rise")).expect("example");
    text.replace(".f16", &format!(".{t}"))
}

/// `shine` on `program` (written to a temporary directory) with `args`.
fn shine_on(program: &str, args: &[&str]) -> (bool, String) {
    let dir = tempfile::tempdir().expect("a temporary directory");
    std::fs::write(dir.path().join("p.rise"), program).expect("written");
    let mut all = vec![args[0], "p.rise"];
    all.extend_from_slice(&args[1..]);
    let (out, text) = shine_in(dir.path(), &all);
    (out.status.success(), text)
}

#[test]
fn mm_warps_verifies_on_cuda() {
    if !test_gpu() {
        return;
    }
    for t in ["f16", "bf16"] {
        let program = tensor_example_at(t);
        for (def, (m, n, k)) in [
            ("mmWarps", (1, 1, 1)),
            ("mmWarps", (3, 2, 5)),
            ("mmWarps", (2, 3, 17)),
            ("mmWarps", (8, 4, 64)),
            ("mmWarpTiles", (1, 1, 1)),
            ("mmWarpTiles", (3, 2, 5)),
            ("mmWarpTiles", (2, 1, 17)),
            ("mmShared", (1, 1, 1)),
            ("mmShared", (3, 2, 5)),
            ("mmShared", (2, 1, 17)),
        ] {
            let sizes = [format!("m={m}"), format!("n={n}"), format!("k={k}")];
            let (ok, text) = shine_on(
                &program,
                &[
                    "run", "--def", def, "--target", "cuda", "--nat", &sizes[0], "--nat",
                    &sizes[1], "--nat", &sizes[2], "--random", "5", "--verify",
                ],
            );
            assert!(
                ok && text.contains("verified against the interpreter"),
                "{def} {t} m={m} n={n} k={k}:\n{text}"
            );
        }
    }
}

/// A fragment tile multiply of each of `n` warps' fragments, placed by `body`.
fn placed(body: &str) -> String {
    format!(
        "def p : {{n: nat}} -> n.32.8.f16 -> n.32.4.f16 -> n.32.4.f32 -> n.32.4.f32 =\n  \
         fun a b c => zip a (zip b c) |> {body}\n"
    )
}

fn compile_fails(program: &str, target: &str, want: &str) {
    let (ok, text) = shine_on(program, &["compile", "--def", "p", "--target", target]);
    assert!(!ok, "{program} compiled for {target}:\n{text}");
    assert!(
        text.contains(want),
        "{program} ({target}): expected `{want}` in\n{text}"
    );
}

#[test]
fn mma_outside_a_warp_loop_is_refused() {
    let program = placed(
        "mapWorkGroup(0) (fun t => mmaSync (fst t) (fst (snd t)) (snd (snd t)) \
         |> mapLocal(0) (mapSeq id))",
    );
    compile_fails(&program, "cuda", "a tensor-core multiply (`mmaSync`)");
}

#[test]
fn mma_inside_a_lane_loop_is_refused() {
    let program = placed(
        "mapWorkGroup(0) (fun t => generate (fun w: idx[1] => t) |> mapWarp (fun t => \
         generate (fun l: idx[32] => mmaSync (fst t) (fst (snd t)) (snd (snd t))) \
         |> mapLane (fun d => idx l d |> mapSeq id)))",
    );
    let (ok, text) = shine_on(&program, &["compile", "--def", "p", "--target", "cuda"]);
    assert!(!ok, "compiled:\n{text}");
}

#[test]
fn c_refuses_mma() {
    let program = placed(
        "mapSeq (fun t => mmaSync (fst t) (fst (snd t)) (snd (snd t)) |> mapSeq (mapSeq id))",
    );
    compile_fails(&program, "c", "`mmaSync` runs on NVIDIA tensor cores");
    compile_fails(&program, "opencl", "`mmaSync`");
}

#[test]
fn mma_on_f32_tiles_is_a_type_error() {
    let program = "def p : 16.16.f32 -> 16.8.f32 -> 16.8.f32 -> 16.8.f32 = fun a b c =>\n  \
                   unfragC (mmaSync (fragA a) (fragB b) (fragC c))\n";
    let (ok, text) = shine_on(program, &["check"]);
    assert!(
        !ok && text.contains("`mmaSync` multiplies f16 or bf16 tiles"),
        "{text}"
    );
}
