//! Hopper's warp-group multiplies (issue 26): `examples/tensor.rise`'s `mmHopper` compiles
//! to `wgmma.mma_async` on descriptors of its 128-byte swizzled tiles in local memory (the
//! layout proven element by element), with its accumulators in registers; with
//! `SHINE_TEST_GPU=1` on an H100 it verifies against the interpreter (f16 and bf16, one tile
//! and odd and prime tile counts). A tile in another layout, a `wgmma` outside a
//! `mapWarpGroup` loop and other targets are refused with messages.

mod support;

use std::path::Path;
use support::{shine_on, test_gpu};

fn root() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
}

/// examples/tensor.rise with its 16-bit element type `f16` replaced by `t`, and `edit`
/// applied to `mmHopper`'s text.
fn hopper_program(t: &str, edit: &dyn Fn(&str) -> String) -> String {
    let text = std::fs::read_to_string(root().join("examples/tensor.rise")).expect("example");
    let at = text.find("def mmHopper").expect("mmHopper");
    let end = text[at..].find("\n\n").map_or(text.len(), |e| at + e);
    let hopper = edit(&text[at..end]).replace(".f16", &format!(".{t}"));
    format!("{}{hopper}{}", &text[..at], &text[end..])
}

fn compile_hopper(program: &str, target: &str) -> (bool, String) {
    shine_on(
        program,
        &["compile", "--def", "mmHopper", "--target", target],
    )
}

#[test]
fn mm_hopper_multiplies_by_warp_groups_on_swizzled_tiles() {
    let (ok, text) = compile_hopper(&hopper_program("f16", &|s| s.to_string()), "cuda");
    assert!(ok, "{text}");
    let kernel = &text[text.find("extern \"C\"").expect("a kernel")..];
    // four k16 steps per 64-wide tile, each one instruction per warp group, B MN-major,
    // fenced before the first and waited for after the last
    assert_eq!(
        kernel.matches("shine_wgmma_m64n256k16_f16_bmn(").count(),
        4,
        "{kernel}"
    );
    assert!(text.contains("wgmma.mma_async.sync.aligned.m64n256k16.f32.f16.f16"));
    assert_eq!(
        kernel.matches("shine_wgmma_fence_128(&acc12[0]);").count(),
        1,
        "{kernel}"
    );
    assert_eq!(
        kernel
            .matches("shine_wgmma_commit_wait_128(&acc12[0]);")
            .count(),
        1,
        "{kernel}"
    );
    // A: rows of 128 bytes in 1024-byte atoms, the k16 steps 32 bytes apart; B: 64-column
    // atoms 8 KiB apart, 8 k-rows 1 KiB apart
    assert!(
        kernel.contains("[(i33 % 3) * 1024 + group_2 * 512 + 2])[0], 16, 1024, (void *)stage24)"),
        "{kernel}"
    );
    assert!(
        kernel.contains("[(i33 % 3) * 2048 + 128])[0], 8192, 1024, (void *)stage25)"),
        "{kernel}"
    );
    // three stages of both tiles (144 KiB) in dynamic shared memory, each tile at a
    // 1024-byte boundary; the copies are fenced for the async proxy
    assert!(
        text.contains("extern __shared__ __align__(1024) unsigned char shine_smem[];"),
        "{text}"
    );
    assert!(kernel.contains("(uint4 *)(shine_smem + 49152)"), "{kernel}");
    assert!(kernel.contains("shine_cp_async_16(&stage24["), "{kernel}");
    assert_eq!(
        kernel.matches("shine_fence_proxy_async();\n").count(),
        kernel.matches("__syncthreads();").count(),
        "{kernel}"
    );
    // each thread keeps its 128 accumulators of the 64x256 tile of its warp group
    assert!(kernel.contains("float acc12[128];"), "{kernel}");
    assert!(kernel.contains("threadIdx.x / 128"), "{kernel}");
    assert!(kernel.contains("threadIdx.x / 32 % 4"), "{kernel}");
}

#[test]
fn mm_hopper_verifies_on_cuda() {
    if !test_gpu() {
        return;
    }
    for t in ["f16", "bf16"] {
        let program = hopper_program(t, &|s| s.to_string());
        for (m, n, k) in [(1, 1, 1), (2, 1, 3), (1, 3, 5), (3, 2, 7)] {
            let sizes = [format!("m={m}"), format!("n={n}"), format!("k={k}")];
            let (ok, text) = shine_on(
                &program,
                &[
                    "run", "--def", "mmHopper", "--target", "cuda", "--nat", &sizes[0], "--nat",
                    &sizes[1], "--nat", &sizes[2], "--random", "7", "--verify",
                ],
            );
            assert!(
                ok && text.contains("verified against the interpreter"),
                "mmHopper {t} m={m} n={n} k={k}:\n{text}"
            );
        }
    }
}

/// `mmHopper` with `A`'s tile stored in plain rows (its reorders the identity).
fn unswizzled_a(s: &str) -> String {
    let swizzle = "reorder (fun p => (p / 8) * 8 + ((p % 8) ^ ((p / 8) % 8)))\n                                     (fun v => (v / 8) * 8 + ((v % 8) ^ ((v / 8) % 8)))";
    let read = "reorder (fun v => (v / 8) * 8 + ((v % 8) ^ ((v / 8) % 8)))\n                                      (fun p => (p / 8) * 8 + ((p % 8) ^ ((p / 8) % 8)))";
    assert!(
        s.contains(swizzle) && s.contains(read),
        "the example changed"
    );
    s.replace(swizzle, "reorder (fun p => p) (fun v => v)")
        .replace(read, "reorder (fun v => v) (fun p => p)")
}

#[test]
fn a_tile_the_descriptor_cannot_describe_is_refused_naming_an_element() {
    let program = hopper_program("f16", &unswizzled_a);
    // the same program computes the same product in the interpreter
    let (ok, text) = compile_hopper(&program, "cuda");
    assert!(!ok, "compiled:\n{text}");
    assert!(
        text.contains("`wgmma` reads its tile `A` from local memory in a layout")
            && text.contains(
                "element (1, 0) is 128 bytes after element (0, 0), where a 128-byte swizzled \
                 layout would put it 144 bytes after"
            ),
        "{text}"
    );
}

#[test]
fn wgmma_outside_a_warp_group_loop_and_on_other_targets_is_refused() {
    let program = hopper_program("f16", &|s| {
        s.replacen("|> mapWarpGroup (fun g =>", "|> map (fun g =>", 1)
    });
    let (ok, text) = compile_hopper(&program, "cuda");
    assert!(
        !ok && text.contains("outside every `mapWarpGroup` loop"),
        "{text}"
    );
    let program = hopper_program("f16", &|s| s.to_string());
    for target in ["opencl", "c"] {
        let (ok, text) = compile_hopper(&program, target);
        assert!(!ok && text.contains("CUDA"), "{target}:\n{text}");
    }
}

#[test]
fn wgmma_on_f32_tiles_is_a_type_error() {
    let program = "def p : 64.16.f32 -> 16.8.f32 -> 4.32.1.4.f32 -> 4.32.1.4.f32 = \
                   fun a b c => wgmma a b c\n";
    let (ok, text) = shine_on(program, &["check"]);
    assert!(!ok && text.contains("f16 or bf16"), "{text}");
}
