//! The GPU rules (crates/rewrite/src/rules/gpu.rs) keep the meaning of the programs
//! they apply to (the interpreter gives equal results before and after, on random
//! inputs), and `mmTiled` of examples/gpu.elv derives the tiled matrix multiplication
//! from `mm` with the intended structure.

mod common;

use common::Case;
use elevate::Ctx;
use rise::infer::{check_source, prepare_def};

/// (strategy, program, sizes)
const CASES: &[Case] = &[
    (
        "DFNF ; fuseReduceMap @ topDown ; reduceOuter @ topDown",
        "def f : {n m k: nat} -> n.k.f32 -> m.k.f32 -> n.m.f32 = fun a b => map (fun r => map (fun c => zip r c |> map (fun p => fst p * snd p) |> reduce add 0.0f) b) a",
        &[("n", 3), ("m", 4), ("k", 5)],
    ),
    (
        "DFNF ; reduceOuter @ topDown",
        "def f : {n m k: nat} -> n.k.f32 -> (m*2).k.f32 -> n.(m*2).f32 = fun a b => map (fun r => map (fun c => zip (map neg r) c |> reduceSeq (fun s p => s + fst p - snd p) 1.0f) b |> split 2 |> join) a",
        &[("n", 2), ("m", 3), ("k", 4)],
    ),
    (
        "DFNF ; reduceOuter @ topDown",
        "def f : {n m k: nat} -> n.m.f32 -> n.k.f32 -> m.k.f32 -> n.m.f32 = fun acc a b => zip acc a |> map (fun ar => zip (fst ar) b |> map (fun ac => zip (snd ar) (snd ac) |> reduceSeq (fun s p => s * 0.5f + fst p * snd p) (fst ac)))",
        &[("n", 3), ("m", 2), ("k", 4)],
    ),
    (
        "DFNF ; blockReduceZip(3) @ topDown",
        "def f : {n: nat} -> (n*3).f32 -> (n*3).f32 -> f32 = fun xs ys => zip xs ys |> reduceSeq (fun s p => s * 0.5f + fst p - snd p) 1.0f",
        &[("n", 4)],
    ),
    (
        "copyLocal(2, 3) @ inLambda",
        "def f : {n: nat} -> (n*3).4.f32 -> (n*3).4.f32 = fun xs => xs",
        &[("n", 2)],
    ),
    (
        "copyByWorkItems @ inLambda",
        "def f : {n m: nat} -> n.m.2.f32 -> n.m.2.f32 = fun xs => xs",
        &[("n", 3), ("m", 2)],
    ),
    (
        "joinSplit @ inLambda",
        "def f : {n m: nat} -> n.m.f32 -> n.m.f32 = fun xs => map (map neg) xs",
        &[("n", 3), ("m", 2)],
    ),
    (
        "storeLocal(isApp(isFst), (addId ; idToTranspose) ; toMem(local) @ argument) @ body @ body @ argument @ function @ function @ outermost(appliedReduce)",
        "def f : {n m k: nat} -> k.n.m.f32 -> k.n.m.f32 -> n.m.f32 = fun xs ys => zip xs ys |> reduceSeq (fun acc y => zip acc (fst y) |> map (fun p => zip (fst p) (snd p) |> map (fun q => fst q + snd q * 2.0f))) (generate (fun i => generate (fun j => 0.0f)))",
        &[("n", 3), ("m", 2), ("k", 3)],
    ),
];

#[test]
fn every_gpu_rule_preserves_meaning_on_random_inputs() {
    common::check_all(CASES);
}

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
