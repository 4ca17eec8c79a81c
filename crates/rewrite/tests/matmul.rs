//! The seven matmul strategies of ICFP'20 §6.1 (`examples/mm.elv`) on
//! `examples/mm.rise`: each rewrites, keeps the program's meaning (checked by
//! the interpreter on random inputs) and has the intended structure.

use elevate::Ctx;
use rewrite::schedule::loop_nest;
use rise::infer::{check_source, prepare_def, Prepared};
use rise::Expr;

const VERSIONS: [&str; 7] = [
    "baseline",
    "blocking",
    "vectorization",
    "loopPermutation",
    "arrayPacking",
    "cacheBlocks",
    "parallelization",
];

fn file(name: &str) -> String {
    let path = format!("{}/../../examples/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn mm() -> Prepared {
    let checked = check_source(&file("mm.rise")).unwrap();
    prepare_def(&checked, "mm").unwrap()
}

fn rewrite_with(expr: &str, p: &Prepared) -> Result<(Expr, u64), String> {
    let registry = rewrite::library::registry();
    let module = elv::load(&file("mm.elv"), &registry).map_err(|e| format!("{e:?}"))?;
    let s = module.expression(expr).map_err(|e| format!("{e:?}"))?;
    let mut ctx = Ctx::new(rise::NameGen::avoiding(&p.body));
    let out = ctx.run(&s, &p.body).map_err(|e| e.to_string())?;
    Ok((out, ctx.steps()))
}

fn uses(e: &Expr, name: &str) -> bool {
    e.to_string().contains(name)
}

#[test]
fn every_version_keeps_the_meaning_of_mm() {
    let p = mm();
    for v in VERSIONS {
        let (out, steps) = rewrite_with(&format!("{v} ; lowerToC"), &p).unwrap();
        assert!(steps > 0);
        // Square and non-square sizes (multiples of the 32x32 tiles, k of the split by 4).
        for (sizes, seed) in [
            ([("m", 64), ("n", 64), ("k", 8)], 1),
            ([("m", 32), ("n", 96), ("k", 12)], 2),
        ] {
            rewrite::check::same_results(&p.body, &out, &p.scheme, &sizes, seed)
                .unwrap_or_else(|e| panic!("{v} {sizes:?}: {e}"));
        }
        // Lowered: no high-level reduce is left. Maps that stay are views or
        // read where they are computed (fused into their reader); that each
        // version translates to imperative code is checked in crates/dpia.
        let text = out.to_string();
        for high in ["reduce add", "|> reduce "] {
            assert!(!text.contains(high), "{v} still has `{high}`:\n{text}");
        }
    }
}

#[test]
fn tiling_gives_the_loop_order_m_n_mtile_ntile_k() {
    let p = mm();
    let (out, _) = rewrite_with("baseline ;; tile(32, 32) @ outermost(mapNest(2))", &p).unwrap();
    assert_eq!(
        loop_nest(&out),
        [
            "map m /^ 32",
            "map n /^ 32",
            "map 32",
            "map 32",
            "reduceSeq k"
        ]
    );
}

#[test]
fn blocking_orders_the_loops_as_listing_10() {
    let p = mm();
    let (out, _) = rewrite_with("blocking", &p).unwrap();
    let nest = loop_nest(&out);
    assert_eq!(nest.len(), 6, "{nest:?}");
    // M/32, N/32, K/4, 4, 32, 32
    assert!(
        nest[0].starts_with("map") && nest[0].contains('m'),
        "{nest:?}"
    );
    assert!(
        nest[1].starts_with("map") && nest[1].contains('n'),
        "{nest:?}"
    );
    assert!(
        nest[2].starts_with("reduce") && nest[2].contains('k'),
        "{nest:?}"
    );
    assert!(
        nest[3].starts_with("reduce") && nest[3].ends_with(" 4"),
        "{nest:?}"
    );
    assert!(
        nest[4].starts_with("map") && nest[4].ends_with(" 32"),
        "{nest:?}"
    );
    assert!(
        nest[5].starts_with("map") && nest[5].ends_with(" 32"),
        "{nest:?}"
    );
}

#[test]
fn versions_have_their_features() {
    let p = mm();
    let get = |v: &str| rewrite_with(&format!("{v} ; lowerToC"), &p).unwrap().0;
    assert!(uses(&get("vectorization"), "asVector 32"));
    assert!(uses(&get("loopPermutation"), "asVector 32"));
    let packed = get("arrayPacking");
    assert!(uses(&packed, "toMem global"), "{packed}");
    assert!(uses(&get("cacheBlocks"), "reduceSeqUnroll"));
    let par = get("parallelization");
    assert!(uses(&par, "mapPar"), "{par}");
    // The computation's outermost loop (inside the toMem) is parallel.
    let text = par.to_string();
    let body = &text[text.find("(fun mem").expect("the toMem body")..];
    let first_map = body.find("map").expect("a map");
    assert!(body[first_map..].starts_with("mapPar"), "{body}");
}

#[test]
fn a_failing_strategy_names_the_sub_strategy_and_the_location() {
    let p = mm();
    let err = rewrite_with("baseline ;; vectorize(32) @ outermost(isReduce)", &p).unwrap_err();
    assert!(err.contains("not applicable"), "{err}");
    assert!(err.contains("topDown(isReduce ; vectorize(32))"), "{err}");
    let err = rewrite_with("DFNF ; body(body(body(id)))", &p).unwrap_err();
    assert_eq!(err, "`body(id)` is not applicable at body.body");
}
