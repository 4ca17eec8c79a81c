//! `mmTiled` of examples/gpu.elv derives the tiled matrix multiplication from `mm`
//! with the intended structure (the GPU rules themselves are checked one by one in
//! tests/rules.rs).

use elevate::Ctx;
use rise::infer::{check_source, prepare_def};

fn file(name: &str) -> String {
    let path = format!("{}/../../examples/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// `mmTiled` keeps the meaning of `mm` and produces the structure of Shine's
/// `mmNVIDIA`: work-groups over tiles, a sequential walk over k whose tiles go
/// through local memory, work-items over register blocks, the block unrolled.
#[test]
fn mm_tiled_derives_the_tiled_matmul() {
    let checked = check_source(&file("mm.rise")).unwrap();
    let p = prepare_def(&checked, "mm").unwrap();
    let registry = rewrite::library::registry();
    let module = elv::load(&file("gpu.elv"), &registry).expect("gpu.elv loads");
    for (strategy, sizes) in [
        ("mmTiled(8, 2, 2, 4)", [("m", 16), ("n", 8), ("k", 6)]),
        ("mmTiled(4, 2, 3, 2)", [("m", 8), ("n", 12), ("k", 9)]),
    ] {
        let s = module.expression(strategy).unwrap();
        let mut ctx = Ctx::new(rise::NameGen::avoiding(&p.body));
        let out = ctx.run(&s, &p.body).unwrap();
        let text = out.to_string();
        for want in [
            "mapWorkGroup(1)",
            "mapWorkGroup(0)",
            "toMem local",
            "mapLocal(1)",
            "mapLocal(0)",
            "reduceSeqUnroll",
            "mapSeqUnroll",
        ] {
            assert!(text.contains(want), "{strategy}: no {want} in\n{text}");
        }
        assert_eq!(text.matches("toMem local").count(), 2, "{text}");
        assert!(!text.contains("reduce ("), "{text}");
        for seed in 1..=3 {
            rewrite::check::same_results(&p.body, &out, &p.scheme, &sizes, seed)
                .unwrap_or_else(|e| panic!("{strategy} {sizes:?}: {e}"));
        }
    }
}
