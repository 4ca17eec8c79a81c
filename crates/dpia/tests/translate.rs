//! Translation of the example programs under the example strategies.

use elevate::Ctx;
use rise::infer::prepare_def;
use rise::NameGen;

fn lowered(file: &str, def: &str, elv: &str, strategy: &str) -> (rise::Expr, rise::Type) {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/");
    let src = std::fs::read_to_string(format!("{root}{file}")).unwrap();
    let checked = rise::infer::check_source(&src).unwrap();
    let p = prepare_def(&checked, def).unwrap();
    let registry = rewrite::library::registry();
    let elv_src = std::fs::read_to_string(format!("{root}{elv}")).unwrap();
    let module = elv::load(&elv_src, &registry).unwrap();
    let s = module.expression(strategy).unwrap();
    let mut ctx = Ctx::new(NameGen::avoiding(&p.body));
    let out = ctx.run(&s, &p.body).unwrap();
    (out, p.scheme)
}

#[test]
fn mm_baseline_translates() {
    let (e, scheme) = lowered("mm.rise", "mm", "mm.elv", "baseline ; lowerToC");
    let p = dpia::translate("mm", &e, &scheme).unwrap();
    let text = p.body.to_string();
    // Listing 8's loop nest: two mapSeq loops and the fused reduction, with a private accumulator.
    assert_eq!(text.matches("// mapSeq").count(), 2, "{text}");
    assert_eq!(text.matches("// reduceSeq").count(), 1, "{text}");
    assert!(text.contains("new private acc"), "{text}");
    assert!(text.contains("output[i0][i1] := acc"), "{text}");
    assert_eq!(p.sizes.len(), 3);
    assert_eq!(p.inputs.len(), 2);
}

#[test]
fn a_map_that_is_not_lowered_is_rejected_with_the_rule_to_use() {
    let (e, scheme) = lowered("mm.rise", "mm", "mm.elv", "id");
    let err = dpia::translate("mm", &e, &scheme).unwrap_err();
    assert!(err.message.contains("not lowered"), "{err}");
    assert!(
        err.help.as_deref().unwrap_or("").contains("mapSeq"),
        "{err}"
    );
}

#[test]
fn a_computed_array_that_is_read_but_never_stored_is_rejected() {
    // mapSeq says "a sequential loop writing memory", but nothing says where.
    let (e, scheme) = lowered(
        "dot.rise",
        "dot",
        "mm.elv",
        "DFNF ; toMapSeq @ topDown ; toReduceSeq @ topDown",
    );
    match dpia::translate("dot", &e, &scheme) {
        Err(err) => assert!(err.message.contains("not stored"), "{err}\n{e}"),
        Ok(p) => panic!("translated:\n{}\n{e}", p.body),
    }
}

#[test]
fn every_matmul_version_translates() {
    for v in [
        "baseline",
        "blocking",
        "vectorization",
        "loopPermutation",
        "arrayPacking",
        "cacheBlocks",
        "parallelization",
    ] {
        let (e, scheme) = lowered("mm.rise", "mm", "mm.elv", &format!("{v} ; lowerToC"));
        match dpia::translate("mm", &e, &scheme) {
            Ok(p) => println!("== {v}\n{}", p.body),
            Err(err) => panic!("{v}: {err}\n{e}"),
        }
    }
}

/// The blocked versions reduce each row of the 32x32 accumulator in place: the
/// inner reduction's initial value is the row it writes, so that row is its
/// accumulator (no second accumulator, no copies in and out).
#[test]
fn rows_of_an_array_accumulator_are_reduced_in_place() {
    for version in ["loopPermutation", "cacheBlocks", "parallelization"] {
        let (e, scheme) = lowered("mm.rise", "mm", "mm.elv", &format!("{version} ; lowerToC"));
        let p = dpia::translate("mm", &e, &scheme).unwrap();
        let text = p.body.to_string();
        assert_eq!(text.matches("new private").count(), 1, "{version}:\n{text}");
        // the only copies: zeroing the accumulator and writing it out
        assert_eq!(text.matches("// copy").count(), 4, "{version}:\n{text}");
    }
}

/// `permuteB` packs B as TVM does, `(n/32).k.32`: the layout views on top of
/// the packing (`join`, `map transpose`) are read views of the stored value.
#[test]
fn b_is_packed_in_32_wide_column_panels() {
    let (e, scheme) = lowered("mm.rise", "mm", "mm.elv", "arrayPacking ; lowerToC");
    let p = dpia::translate("mm", &e, &scheme).unwrap();
    let text = p.body.to_string();
    assert!(
        text.contains("new global mem0: (n /^ 32).k.32.f32"),
        "{text}"
    );
}

/// A definition of `examples/gather.rise` lowered with `lowerToC`, translated.
fn gather_example(def: &str) -> Result<dpia::Program, dpia::TranslateError> {
    let (e, scheme) = lowered("gather.rise", def, "cpu.elv", "sequential");
    dpia::translate(def, &e, &scheme)
}

#[test]
fn indices_read_from_data_are_accesses_at_run_time_indices() {
    // gather: element j of the result is xs at the index is[j] holds
    let p = gather_example("permute").unwrap();
    let text = p.body.to_string();
    assert!(text.contains("generate(i2 => x1[at x0[i2]])"), "{text}");
    // scatter: each position claimed in a zeroed marker, and n >= n is no constraint
    let p = gather_example("place").unwrap();
    let text = p.body.to_string();
    assert!(text.contains("new global written"), "{text}");
    assert!(text.contains(":= Int(0, Int)"), "{text}");
    assert!(text.contains("output[at x0[i"), "{text}");
    assert!(text.contains(", once in written"), "{text}");
    assert!(p.constraints.is_empty(), "{:?}", p.constraints);
    // natAsIndex of a run-time value: checked like an index read from data
    let text = gather_example("pick").unwrap().body.to_string();
    assert!(
        text.contains("xs[at generate(i1 => i1)[at ks[i0]]]"),
        "{text}"
    );
    // idx inside a reduction
    let text = gather_example("spmv").unwrap().body.to_string();
    assert!(text.contains("// reduceSeq"), "{text}");
    assert!(text.contains("[at "), "{text}");
}

/// `def` of the RISE source `src` lowered with `lowerToC` and translated.
fn translated_source(src: &str, def: &str) -> Result<dpia::Program, dpia::TranslateError> {
    let checked = rise::infer::check_source(src).unwrap();
    let p = prepare_def(&checked, def).unwrap();
    let registry = rewrite::library::registry();
    let module = elv::load("def s = lowerToC", &registry).unwrap();
    let s = module.expression("s").unwrap();
    let mut ctx = Ctx::new(NameGen::avoiding(&p.body));
    let e = ctx.run(&s, &p.body).unwrap();
    dpia::translate(def, &e, &p.scheme)
}

/// A smoothing step that keeps the size, iterated `k` times.
fn smoothing(k: u32) -> String {
    format!(
        "def f : {{n: nat}} -> n.f32 -> n.f32 = fun xs => xs |> iterate {k} (fun (l: nat) => \
         fun ys => ys |> padCst 1 1 0.0f |> (fun p => zip (take l p) (drop 2 p)) \
         |> map (fun w => fst w + snd w))"
    )
}

#[test]
fn a_long_iterate_of_a_step_that_keeps_the_size_is_a_loop_over_two_buffers() {
    for (k, copies, pairs) in [(10, 4, 4), (11, 5, 4), (500, 4, 249)] {
        let text = translated_source(&smoothing(k), "f")
            .unwrap()
            .body
            .to_string();
        assert_eq!(text.matches("// mapSeq").count(), copies, "{text}");
        assert_eq!(text.matches("// iterate").count(), 1, "{text}");
        assert!(text.contains(&format!("< {pairs}")), "{text}");
        assert_eq!(text.matches("new global buf").count(), 2, "{text}");
    }
}

#[test]
fn short_and_size_changing_iterates_stay_expanded() {
    let text = translated_source(&smoothing(8), "f")
        .unwrap()
        .body
        .to_string();
    assert_eq!(text.matches("// mapSeq").count(), 8, "{text}");
    assert!(!text.contains("// iterate"), "{text}");
    let halving = "def f : {m: nat} -> (m*512).f32 -> m.f32 = fun xs => xs |> iterate 9 \
                   (fun (l: nat) => fun ys => ys |> split 2 |> map (reduce add 0.0f))";
    let text = translated_source(halving, "f").unwrap().body.to_string();
    assert_eq!(text.matches("// reduceSeq").count(), 9, "{text}");
    assert!(!text.contains("// iterate"), "{text}");
}
