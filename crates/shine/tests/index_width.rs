//! Which index width GPU code is built with for a run's sizes (`GpuModule::index_width`): 32
//! bits unless an index the kernels compute can pass 2^30, and then 64. A view's whole
//! element count is not such an index (the windows of `slide3` over 512^3 points are 27 *
//! 2^27 elements, which made heat 3-D 31 % slower with 64-bit indices); flattening a view
//! with `join` is.

use codegen::gpu::IndexWidth;
use shine::{compile, Code, Options, SourceFile, StrategySource, Target};
use std::path::Path;

fn example(name: &str) -> SourceFile {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../examples")
        .join(name);
    SourceFile::read(&path).expect("the example reads")
}

/// The width `def` of `program` under `strategy` of `gpu.elv` gets at `sizes` (in the order
/// of the module's sizes, named).
fn width(program: SourceFile, def: &str, strategy: &str, sizes: &[(&str, i64)]) -> IndexWidth {
    let strategy = StrategySource {
        file: example("gpu.elv"),
        apply: strategy.into(),
    };
    let artifact = compile(
        &program,
        def,
        Some(&strategy),
        Target::OpenCl,
        &Options::default(),
    )
    .unwrap_or_else(|e| panic!("{def} compiles: {e}"));
    let Code::Gpu(module) = &artifact.code else {
        panic!("{def} is GPU code")
    };
    let values: Vec<i64> = module
        .sizes
        .iter()
        .map(|v| {
            sizes
                .iter()
                .find(|(n, _)| *n == v.name())
                .unwrap_or_else(|| panic!("no value for {}", v.name()))
                .1
        })
        .collect();
    module.index_width(&values)
}

#[test]
fn a_stencil_over_half_a_billion_points_keeps_32_bit_indices() {
    let heat = |o, n, m| {
        width(
            example("heat3d.rise"),
            "heat3d",
            "global3d",
            &[("o", o), ("n", n), ("m", m)],
        )
    };
    assert_eq!(heat(512, 512, 512), IndexWidth::Bits32);
    assert_eq!(heat(1024, 1024, 1024), IndexWidth::Bits32);
    // 1100 * 1000 * 1000 points are more than 2^30: the grid itself needs 64 bits
    assert_eq!(heat(1100, 1000, 1000), IndexWidth::Bits64);
    // the float4 rows and the columns walked along z (the window's planes clamped) alike
    for strategy in ["global3dVec", "stream3d", "stream3dVec"] {
        let at = |o, n, m| {
            width(
                example("heat3d.rise"),
                "heat3d",
                strategy,
                &[("o", o), ("n", n), ("m", m)],
            )
        };
        assert_eq!(at(512, 512, 512), IndexWidth::Bits32, "{strategy}");
        assert_eq!(at(1100, 1000, 1000), IndexWidth::Bits64, "{strategy}");
    }
}

#[test]
fn a_view_flattened_by_join_counts_whole() {
    let program = SourceFile::new(
        "windows.rise",
        "def windows : {n: nat} -> n.f32 -> (n*3).f32 =
           fun xs => xs |> padClamp 1 1 |> slide 3 1 |> join |> map (fun x => x * 2.0f)",
    );
    let at = |n| width(program.clone(), "windows", "global1d", &[("n", n)]);
    assert_eq!(at(1 << 20), IndexWidth::Bits32);
    // 3 * 2^29 positions of the joined windows: above 2^30
    assert_eq!(at(1 << 29), IndexWidth::Bits64);
    let repeat = SourceFile::new(
        "repeat.rise",
        "def repeatSum : {n: nat} -> n.i64 -> n.i64 =
           fun xs => generate (fun (i: idx[n]) => xs) |> join |> split n |> map (reduceSeq add 0i64)",
    );
    let at = |n| width(repeat.clone(), "repeatSum", "global1d", &[("n", n)]);
    assert_eq!(at(1000), IndexWidth::Bits32);
    assert_eq!(at(47_000), IndexWidth::Bits64);
}

/// A natural number computed from a loop variable (`indexAsNat i + 5` for `i < n`) is
/// bounded by the loop's range, not refused for naming a variable that is no size.
#[test]
fn values_of_loop_variables_are_bounded_by_their_ranges() {
    let program = SourceFile::new(
        "shift.rise",
        "def shift : {n: nat} -> n.f32 -> n.natType =
           fun xs => generate (fun (i: idx[n]) => indexAsNat i + (5 : natType)) |> map (fun v => v)",
    );
    let at = |n| width(program.clone(), "shift", "global1d", &[("n", n)]);
    assert_eq!(at(1000), IndexWidth::Bits32);
    assert_eq!(at(1 << 31), IndexWidth::Bits64);
}
