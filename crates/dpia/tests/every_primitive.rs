//! Every primitive of the table either translates to DPIA or is refused with
//! "cannot be compiled yet" (issue 15): a lowered program using it is translated,
//! and the outcome must be what its row's back-end column says. A primitive
//! added to the table without a case here fails `every_primitive_has_a_case`.

use rise::primitives::Backend;
use rise::Prim;

/// A program that uses the primitive, already lowered (every map a loop, every
/// reduction sequential, computed arrays stored), as RISE source.
const CASES: &[(&str, &str)] = &[
    ("id", "{n: nat} -> n.f32 -> n.f32 = fun xs => xs |> mapSeq (fun x => id x)"),
    ("neg", "{n: nat} -> n.f32 -> n.f32 = fun xs => xs |> mapSeq (fun x => neg x)"),
    ("add", "{n: nat} -> n.f32 -> n.f32 = fun xs => xs |> mapSeq (fun x => add x 1.0f)"),
    ("sub", "{n: nat} -> n.f32 -> n.f32 = fun xs => xs |> mapSeq (fun x => sub x 1.0f)"),
    ("mul", "{n: nat} -> n.f32 -> n.f32 = fun xs => xs |> mapSeq (fun x => mul x 2.0f)"),
    ("div", "{n: nat} -> n.f32 -> n.f32 = fun xs => xs |> mapSeq (fun x => div x 2.0f)"),
    ("mod", "{n: nat} -> n.int -> n.int = fun xs => xs |> mapSeq (fun x => mod x 3)"),
    ("select", "{n: nat} -> n.f32 -> n.f32 = fun xs => xs |> mapSeq (fun x => select (gt x 0.0f) x 0.0f)"),
    ("not", "{n: nat} -> n.f32 -> n.f32 = fun xs => xs |> mapSeq (fun x => select (not (lt x 0.0f)) x 0.0f)"),
    ("gt", "{n: nat} -> n.f32 -> n.bool = fun xs => xs |> mapSeq (fun x => gt x 0.0f)"),
    ("lt", "{n: nat} -> n.f32 -> n.bool = fun xs => xs |> mapSeq (fun x => lt x 0.0f)"),
    ("equal", "{n: nat} -> n.f32 -> n.bool = fun xs => xs |> mapSeq (fun x => equal x 0.0f)"),
    ("le", "{n: nat} -> n.f32 -> n.bool = fun xs => xs |> mapSeq (fun x => le x 0.0f)"),
    ("ge", "{n: nat} -> n.f32 -> n.bool = fun xs => xs |> mapSeq (fun x => ge x 0.0f)"),
    ("notEqual", "{n: nat} -> n.f32 -> n.bool = fun xs => xs |> mapSeq (fun x => notEqual x 0.0f)"),
    ("and", "{n: nat} -> n.f32 -> n.bool = fun xs => xs |> mapSeq (fun x => and (lt x 1.0f) (gt x 0.0f))"),
    ("or", "{n: nat} -> n.f32 -> n.bool = fun xs => xs |> mapSeq (fun x => or (lt x 1.0f) (gt x 0.0f))"),
    ("bitAnd", "{n: nat} -> n.i32 -> n.i32 = fun xs => xs |> mapSeq (fun x => bitAnd x 7i32)"),
    ("bitOr", "{n: nat} -> n.i32 -> n.i32 = fun xs => xs |> mapSeq (fun x => bitOr x 7i32)"),
    ("bitXor", "{n: nat} -> n.i32 -> n.i32 = fun xs => xs |> mapSeq (fun x => bitXor x 7i32)"),
    ("bitNot", "{n: nat} -> n.u8 -> n.u8 = fun xs => xs |> mapSeq (fun x => bitNot x)"),
    ("shl", "{n: nat} -> n.i32 -> n.i32 = fun xs => xs |> mapSeq (fun x => shl x x)"),
    ("shr", "{n: nat} -> n.i64 -> n.i64 = fun xs => xs |> mapSeq (fun x => shr x 3i64)"),
    ("cast", "{n: nat} -> n.f32 -> n.f64 = fun xs => xs |> mapSeq (fun x => cast x)"),
    ("indexAsNat", "{n: nat} -> n.f32 -> n.f32 = fun xs => generate (fun i => idx (natAsIndex n (indexAsNat i)) xs) |> mapSeq id"),
    ("natAsIndex", "{n: nat} -> n.f32 -> n.f32 = fun xs => generate (fun i => idx (natAsIndex n (indexAsNat i)) xs) |> mapSeq id"),
    ("let", "{n: nat} -> n.f32 -> n.f32 = fun xs => xs |> mapSeq (fun x => let (x + 1.0f) (fun y => y * y))"),
    ("toMem", "{n: nat} -> n.f32 -> n.f32 = fun xs => toMem global (xs |> mapSeq (fun x => x + 1.0f)) (fun ys => ys |> mapSeq id)"),
    ("generate", "{n: nat} -> n.f32 -> n.f32 = fun xs => generate (fun i => 1.0f) |> mapSeq id"),
    ("idx", "{n: nat} -> n.f32 -> n.f32 = fun xs => generate (fun i => idx i xs) |> mapSeq id"),
    ("take", "{n: nat} -> (n+2).f32 -> n.f32 = fun xs => xs |> take n |> mapSeq id"),
    ("drop", "{n: nat} -> (n+2).f32 -> n.f32 = fun xs => xs |> drop 2 |> mapSeq id"),
    ("concat", "{n: nat} -> n.f32 -> (n+n).f32 = fun xs => concat xs xs |> mapSeq id"),
    ("split", "{n: nat} -> (4*n).f32 -> n.4.f32 = fun xs => xs |> split 4 |> mapSeq (mapSeq id)"),
    ("join", "{n: nat} -> n.4.f32 -> (n*4).f32 = fun xs => xs |> join |> mapSeq id"),
    ("slide", "{n: nat} -> (n+2).f32 -> n.f32 = fun xs => xs |> slide 3 1 |> mapSeq (reduceSeq add 0.0f)"),
    ("transpose", "{n m: nat} -> n.m.f32 -> m.n.f32 = fun xs => xs |> transpose |> mapSeq (mapSeq id)"),
    ("zip", "{n: nat} -> n.f32 -> n.f32 -> n.f32 = fun xs ys => zip xs ys |> mapSeq (fun p => fst p + snd p)"),
    ("unzip", "{n: nat} -> n.(f32, f32) -> n.f32 = fun ps => fst (unzip ps) |> mapSeq id"),
    ("makePair", "{n: nat} -> n.f32 -> n.(f32, f32) = fun xs => xs |> mapSeq (fun x => makePair x x)"),
    ("fst", "{n: nat} -> n.(f32, f32) -> n.f32 = fun ps => ps |> mapSeq (fun p => fst p)"),
    ("snd", "{n: nat} -> n.(f32, f32) -> n.f32 = fun ps => ps |> mapSeq (fun p => snd p)"),
    ("mapFst", "{n: nat} -> n.(f32, f32) -> n.(f32, f32) = fun ps => ps |> mapSeq (fun p => mapFst (fun a => a * 2.0f) p)"),
    ("mapSnd", "{n: nat} -> n.(f32, f32) -> n.(f32, f32) = fun ps => ps |> mapSeq (fun p => mapSnd (fun b => b * 2.0f) p)"),
    ("padCst", "{n: nat} -> n.f32 -> (1+n+1).f32 = fun xs => xs |> padCst 1 1 0.0f |> mapSeq id"),
    ("padClamp", "{n: nat} -> n.f32 -> (1+n+1).f32 = fun xs => xs |> padClamp 1 1 |> mapSeq id"),
    ("padMirror", "{n: nat} -> n.f32 -> (1+n+1).f32 = fun xs => xs |> padMirror 1 1 |> mapSeq id"),
    ("padWrap", "{n: nat} -> n.f32 -> (1+n+1).f32 = fun xs => xs |> padWrap 1 1 |> mapSeq id"),
    ("map", "{n: nat} -> n.f32 -> n.f32 = fun xs => xs |> map (fun x => x + 1.0f) |> mapSeq id"),
    ("reduce", "{n: nat} -> n.f32 -> f32 = fun xs => xs |> reduce add 0.0f"),
    ("scanSeq", "{n: nat} -> n.f32 -> n.f32 = fun xs => xs |> scanSeq add 0.0f"),
    ("slideSeq", "{n: nat} -> (n+3).f32 -> (n+1).f32 = fun xs => xs |> slideSeq 3 (reduceSeq add 0.0f)"),
    ("scanLookback", "{n: nat} -> n.i32 -> n.i32 = fun xs => xs |> scanLookback 4 8 add 0i32 0i32 (fun t => t |> split 2 |> mapLocal(0) (scanSeq add 0i32) |> join)"),
    ("iterate", "{m: nat} -> (m*4).f32 -> m.f32 = fun xs => xs |> iterate 2 (fun (l: nat) => fun ys => ys |> split 2 |> mapSeq (reduceSeq add 0.0f))"),
    ("gather", "{n m: nat} -> m.idx[n] -> n.f32 -> m.f32 = fun is xs => gather is xs |> mapSeq id"),
    ("scatter", "{n m: nat} -> n.idx[m] -> n.f32 -> m.f32 = fun is xs => scatter is (xs |> mapSeq id)"),
    ("reorder", "{n: nat} -> n.f32 -> n.f32 = fun xs => xs |> reorder (fun i => n - 1 - i) (fun i => n - 1 - i) |> mapSeq id"),
    ("asVector", "{n: nat} -> (n*4).f32 -> n.vec[f32, 4] = fun xs => xs |> asVector 4 |> mapSeq id"),
    ("asScalar", "{n: nat} -> n.vec[f32, 4] -> (n*4).f32 = fun xs => xs |> asScalar |> mapSeq id"),
    ("vectorFromScalar", "{n: nat} -> n.f32 -> n.vec[f32, 4] = fun xs => xs |> mapSeq (fun x => vectorFromScalar x)"),
    ("lane", "{n: nat} -> n.vec[f32, 4] -> n.f32 = fun vs => vs |> mapSeq (fun v => lane 0 v + lane 3 v)"),
    ("makeVector", "{n: nat} -> n.f32 -> n.vec[f32, 4] = fun xs => xs |> mapSeq (fun x => makeVector 4 x 1.0f (x * x) 0.0f)"),
    ("makeArray", "{n: nat} -> n.f32 -> n.3.f32 = fun xs => xs |> mapSeq (fun x => makeArray 3 x x x |> mapSeq id)"),
    ("mapSeq", "{n: nat} -> n.f32 -> n.f32 = fun xs => xs |> mapSeq id"),
    ("mapSeqUnroll", "{n: nat} -> n.4.f32 -> n.4.f32 = fun xs => xs |> mapSeq (mapSeqUnroll id)"),
    ("mapPar", "{n: nat} -> n.f32 -> n.f32 = fun xs => xs |> mapPar id"),
    ("mapVec", "{n: nat} -> n.vec[f32, 4] -> n.vec[f32, 4] = fun xs => xs |> mapSeq (mapVec (fun x => x * 2.0f))"),
    ("reduceSeq", "{n: nat} -> n.f32 -> f32 = fun xs => xs |> reduceSeq add 0.0f"),
    ("reduceSeqUnroll", "{n: nat} -> n.4.f32 -> n.f32 = fun xs => xs |> mapSeq (reduceSeqUnroll add 0.0f)"),
    ("reduceSeqPipelined(2)", "{n k: nat} -> k.(n*64).f32 -> (n*64).f32 = fun a => a |> map (split 64) |> transpose |> mapWorkGroup(0) (fun cols => cols |> reduceSeqPipelined(2) (fun acc row => toMem local (row |> mapLocal(0) id) (fun tile => zip acc tile |> mapLocal(0) (fun p => fst p + snd p))) (generate (fun i => 0.0f) |> mapLocal(0) id) |> mapLocal(0) id) |> join"),
    ("reduceSeqPipelined(3)", "{n k: nat} -> k.(n*64).f32 -> (n*64).f32 = fun a => a |> map (split 64) |> transpose |> mapWorkGroup(0) (fun cols => cols |> reduceSeqPipelined(3) (fun acc row => toMem local (row |> mapLocal(0) id) (fun tile => zip acc tile |> mapLocal(0) (fun p => fst p + snd p))) (generate (fun i => 0.0f) |> mapLocal(0) id) |> mapLocal(0) id) |> join"),
    ("reduceSeqPipelined(4)", "{n k: nat} -> k.(n*64).f32 -> (n*64).f32 = fun a => a |> map (split 64) |> transpose |> mapWorkGroup(0) (fun cols => cols |> reduceSeqPipelined(4) (fun acc row => toMem local (row |> mapLocal(0) id) (fun tile => zip acc tile |> mapLocal(0) (fun p => fst p + snd p))) (generate (fun i => 0.0f) |> mapLocal(0) id) |> mapLocal(0) id) |> join"),
    ("mapGlobal(0)", "{n: nat} -> n.f32 -> n.f32 = fun xs => xs |> mapGlobal(0) id"),
    ("mapGlobal(1)", "{n m: nat} -> n.m.f32 -> n.m.f32 = fun xs => xs |> mapGlobal(1) (mapGlobal(0) id)"),
    ("mapGlobal(2)", "{n: nat} -> n.f32 -> n.f32 = fun xs => xs |> mapGlobal(2) id"),
    ("mapWorkGroup(0)", "{n: nat} -> n.8.f32 -> n.8.f32 = fun xs => xs |> mapWorkGroup(0) (mapLocal(0) id)"),
    ("mapWorkGroup(1)", "{n: nat} -> n.8.f32 -> n.8.f32 = fun xs => xs |> mapWorkGroup(1) (mapLocal(1) id)"),
    ("mapWorkGroup(2)", "{n: nat} -> n.8.f32 -> n.8.f32 = fun xs => xs |> mapWorkGroup(2) (mapLocal(2) id)"),
    ("mapLocal(0)", "{n: nat} -> n.8.f32 -> n.8.f32 = fun xs => xs |> mapWorkGroup(0) (mapLocal(0) id)"),
    ("mapLocal(1)", "{n: nat} -> n.8.f32 -> n.8.f32 = fun xs => xs |> mapWorkGroup(1) (mapLocal(1) id)"),
    ("mapLocal(2)", "{n: nat} -> n.8.f32 -> n.8.f32 = fun xs => xs |> mapWorkGroup(2) (mapLocal(2) id)"),
    ("mapBlock(0)", "{n: nat} -> n.8.f32 -> n.8.f32 = fun xs => xs |> mapBlock(0) (mapThread(0) id)"),
    ("mapBlock(1)", "{n: nat} -> n.8.f32 -> n.8.f32 = fun xs => xs |> mapBlock(1) (mapThread(1) id)"),
    ("mapBlock(2)", "{n: nat} -> n.8.f32 -> n.8.f32 = fun xs => xs |> mapBlock(2) (mapThread(2) id)"),
    ("mapThread(0)", "{n: nat} -> n.8.f32 -> n.8.f32 = fun xs => xs |> mapBlock(0) (mapThread(0) id)"),
    ("mapThread(1)", "{n: nat} -> n.8.f32 -> n.8.f32 = fun xs => xs |> mapBlock(1) (mapThread(1) id)"),
    ("mapThread(2)", "{n: nat} -> n.8.f32 -> n.8.f32 = fun xs => xs |> mapBlock(2) (mapThread(2) id)"),
    ("mapWarp", "{n: nat} -> n.32.f32 -> n.32.f32 = fun xs => xs |> mapWarp (mapLane id)"),
    ("reduceWarp", "{n: nat} -> n.32.f32 -> n.f32 = fun xs => xs |> mapWarp (fun w => reduceWarp add w)"),
    ("scanWarp", "{n: nat} -> n.32.i32 -> n.32.i32 = fun xs => xs |> mapWarp (fun w => scanWarp add w)"),
    ("mapWarpGroup", "{n: nat} -> n.128.f32 -> n.128.f32 = fun xs => xs |> mapWarpGroup (fun g => g |> split 32 |> mapWarp (mapLane id) |> join)"),
    ("wgmma", "64.16.f16 -> 16.256.f16 -> 4.32.32.4.f32 -> 4.32.32.4.f32 = fun a b c => wgmma a b c |> mapSeq (mapSeq (mapSeq (mapSeq id)))"),
    ("mmaSync", "{n: nat} -> n.32.8.f16 -> n.32.4.f16 -> n.32.4.f32 = fun a b => zip a b |> mapWarp (fun p => mmaSync (fst p) (snd p) (generate (fun l => generate (fun i => 0.0f))) |> mapLane (mapSeq id))"),
    ("mapLane", "{n: nat} -> n.32.f32 -> n.32.f32 = fun xs => xs |> mapSeq (mapLane id)"),
    ("sqrt", "{n: nat} -> n.f32 -> n.f32 = fun xs => xs |> mapSeq (fun x => sqrt x)"),
    ("rsqrt", "{n: nat} -> n.f64 -> n.f64 = fun xs => xs |> mapSeq (fun x => rsqrt x)"),
    ("exp", "{n: nat} -> n.vec[f32, 4] -> n.vec[f32, 4] = fun xs => xs |> mapSeq (fun v => exp v)"),
    ("exp2", "{n: nat} -> n.f32 -> n.f32 = fun xs => xs |> mapSeq (fun x => exp2 x)"),
    ("log", "{n: nat} -> n.f32 -> f32 = fun xs => xs |> reduceSeq (fun acc x => acc + log x) 0.0f"),
    ("log2", "{n: nat} -> n.f64 -> n.f64 = fun xs => xs |> mapSeq (fun x => log2 x)"),
    ("pow", "{n: nat} -> n.f32 -> n.f32 -> n.f32 = fun xs ys => zip xs ys |> mapSeq (fun p => pow (fst p) (snd p))"),
    ("sin", "{n: nat} -> n.vec[f32, 4] -> n.vec[f32, 4] = fun xs => xs |> mapSeq (mapVec (fun x => sin x))"),
    ("cos", "{n: nat} -> n.f32 -> n.f32 = fun xs => xs |> mapSeq (fun x => cos x)"),
    ("tan", "{n: nat} -> n.f32 -> n.f32 = fun xs => xs |> mapSeq (fun x => tan x)"),
    ("tanh", "{n: nat} -> n.f32 -> n.f32 = fun xs => xs |> mapSeq (fun x => tanh x)"),
    ("atan2", "{n: nat} -> n.f32 -> n.f32 = fun xs => xs |> mapSeq (fun x => atan2 x 1.0f)"),
    ("fabs", "{n: nat} -> n.f32 -> n.f32 = fun xs => xs |> mapSeq (fun x => fabs x)"),
    ("floor", "{n: nat} -> n.f32 -> n.int = fun xs => xs |> mapSeq (fun x => cast (floor x))"),
    ("ceil", "{n: nat} -> n.f32 -> n.f32 = fun xs => xs |> mapSeq (fun x => ceil x)"),
    ("fmin", "{n: nat} -> n.f32 -> n.f32 = fun xs => xs |> mapSeq (fun x => fmin x 0.0f)"),
    ("fmax", "{n: nat} -> n.f32 -> n.f32 = fun xs => xs |> mapSeq (fun x => fmax x 0.0f)"),
    ("fma", "{n: nat} -> n.f32 -> n.f32 = fun xs => xs |> mapSeq (fun x => fma x x 1.0f)"),
    ("min", "{n: nat} -> n.int -> n.int = fun xs => xs |> mapSeq (fun x => min x 0)"),
    ("max", "{n: nat} -> n.u8 -> n.u8 = fun xs => xs |> mapSeq (fun x => max x 3u8)"),
    ("abs", "{n: nat} -> n.i64 -> n.i64 = fun xs => xs |> mapSeq (fun x => abs x)"),
    ("cbrt", "{n: nat} -> n.f64 -> n.f64 = fun xs => xs |> mapSeq (fun x => cbrt x)"),
    ("expm1", "{n: nat} -> n.f32 -> n.f32 = fun xs => xs |> mapSeq (fun x => expm1 x)"),
    ("log10", "{n: nat} -> n.f32 -> n.f32 = fun xs => xs |> mapSeq (fun x => log10 x)"),
    ("log1p", "{n: nat} -> n.vec[f32, 4] -> n.vec[f32, 4] = fun xs => xs |> mapSeq (fun v => log1p v)"),
    ("asin", "{n: nat} -> n.f32 -> n.f32 = fun xs => xs |> mapSeq (fun x => asin x)"),
    ("acos", "{n: nat} -> n.f32 -> n.f32 = fun xs => xs |> mapSeq (fun x => acos x)"),
    ("atan", "{n: nat} -> n.f64 -> n.f64 = fun xs => xs |> mapSeq (fun x => atan x)"),
    ("sinh", "{n: nat} -> n.f32 -> n.f32 = fun xs => xs |> mapSeq (fun x => sinh x)"),
    ("cosh", "{n: nat} -> n.f32 -> f32 = fun xs => xs |> reduceSeq (fun acc x => acc + cosh x) 0.0f"),
    ("asinh", "{n: nat} -> n.f32 -> n.f32 = fun xs => xs |> mapSeq (fun x => asinh x)"),
    ("acosh", "{n: nat} -> n.f32 -> n.f32 = fun xs => xs |> mapSeq (fun x => acosh x)"),
    ("atanh", "{n: nat} -> n.f32 -> n.f32 = fun xs => xs |> mapSeq (fun x => atanh x)"),
    ("erf", "{n: nat} -> n.f32 -> n.f32 = fun xs => xs |> mapSeq (fun x => erf x)"),
    ("erfc", "{n: nat} -> n.f64 -> n.f64 = fun xs => xs |> mapSeq (fun x => erfc x)"),
    ("hypot", "{n: nat} -> n.f32 -> n.f32 -> n.f32 = fun xs ys => zip xs ys |> mapSeq (fun p => hypot (fst p) (snd p))"),
    ("round", "{n: nat} -> n.f32 -> n.int = fun xs => xs |> mapSeq (fun x => cast (round x))"),
    ("trunc", "{n: nat} -> n.f32 -> n.f32 = fun xs => xs |> mapSeq (fun x => trunc x)"),
    ("copysign", "{n: nat} -> n.f32 -> n.f32 = fun xs => xs |> mapSeq (fun x => copysign 1.0f x)"),
    ("fmod", "{n: nat} -> n.f64 -> n.f64 = fun xs => xs |> mapSeq (fun x => fmod x 2.0)"),
];

/// What translation must do with a primitive, by its row.
fn expected(p: Prim) -> Expected {
    match p.backend() {
        Backend::NotYet(_) => Expected::NotYet,
        Backend::Lower(_) => Expected::NotLowered,
        Backend::Own | Backend::MapLoop(_) | Backend::ReduceLoop(_) | Backend::View(_) => {
            Expected::Translates
        }
    }
}

#[derive(Debug, PartialEq)]
enum Expected {
    Translates,
    NotYet,
    NotLowered,
}

fn translate(name: &str, src: &str) -> Result<(), String> {
    let program = format!("def t : {src}\n");
    let checked = rise::infer::check_source(&program)
        .map_err(|e| format!("the case of `{name}` does not type-check: {}", e.message))?;
    let p = rise::infer::prepare_def(&checked, "t")
        .map_err(|e| format!("the case of `{name}`: {}", e.message))?;
    dpia::translate("t", &p.body, &p.scheme)
        .map(|_| ())
        .map_err(|e| {
            format!(
                "{}{}",
                e.message,
                e.help.map(|h| format!(" ({h})")).unwrap_or_default()
            )
        })
}

#[test]
fn every_primitive_has_a_case() {
    let missing: Vec<&str> = Prim::ALL
        .iter()
        .map(|p| p.name())
        .filter(|n| !CASES.iter().any(|(c, _)| c == n))
        .collect();
    assert!(missing.is_empty(), "no translation case for: {missing:?}");
    for (name, src) in CASES {
        assert!(
            Prim::from_name(name).is_some(),
            "`{name}` is not a primitive"
        );
        let mentioned = src.contains(&format!("{name} ")) || src.contains(&format!("{name})"));
        assert!(mentioned, "the case of `{name}` does not use it: {src}");
    }
}

#[test]
fn every_primitive_translates_or_cannot_be_compiled_yet() {
    let mut wrong = Vec::new();
    for (name, src) in CASES {
        let p = Prim::from_name(name).unwrap();
        let outcome = translate(name, src);
        let ok = match (expected(p), &outcome) {
            (Expected::Translates, Ok(())) => true,
            (Expected::NotYet, Err(m)) => m.contains("cannot be compiled yet"),
            (Expected::NotLowered, Err(m)) => m.contains("is not lowered"),
            _ => false,
        };
        if !ok {
            wrong.push(format!(
                "`{name}` (expected {:?}): {outcome:?}",
                expected(p)
            ));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// The DPIA expressions of the translation of definition `t` of `src`, printed.
fn expressions(src: &str) -> Vec<String> {
    let checked = rise::infer::check_source(src).unwrap();
    let p = rise::infer::prepare_def(&checked, "t").unwrap();
    let program = dpia::translate("t", &p.body, &p.scheme).unwrap();
    let mut found = Vec::new();
    dpia::walk::Node::Comm(&program.body).visit(&mut |n| {
        if let dpia::walk::Node::Exp(e) = n {
            found.push(e.to_string());
        }
    });
    found
}

#[test]
fn lanes_are_read_as_views_and_vectors_built_from_their_lanes() {
    let case = |name: &str| {
        let src = CASES.iter().find(|c| c.0 == name).unwrap().1;
        expressions(&format!("def t : {src}"))
    };
    let lanes = case("lane");
    for k in [0, 3] {
        let read = format!(".lane[{k}]");
        assert!(lanes.iter().any(|e| e.ends_with(&read)), "{lanes:?}");
    }
    let built = case("makeVector");
    assert!(
        built
            .iter()
            .any(|e| e.starts_with("vector(xs[i0], Float(1.0, F32), Mul(")
                && e.ends_with(", Float(0.0, F32))")),
        "{built:?}"
    );
}

#[test]
fn a_math_function_is_one_node_lifted_to_vectors_by_map_vec() {
    let src = "def t : {n: nat} -> n.vec[f32, 4] -> n.vec[f32, 4] = fun xs => xs |> mapSeq (mapVec (fun x => fma x x (sqrt x)))";
    let checked = rise::infer::check_source(src).unwrap();
    let p = rise::infer::prepare_def(&checked, "t").unwrap();
    let program = dpia::translate("t", &p.body, &p.scheme).unwrap();
    let mut found = Vec::new();
    dpia::walk::Node::Comm(&program.body).visit(&mut |n| {
        if let dpia::walk::Node::Exp(e) = n {
            if let dpia::ExpKind::Math(f, xs) = &*e.kind {
                found.push((f.name(), e.ty.to_string(), xs.len()));
            }
        }
    });
    found.sort();
    assert_eq!(
        found,
        [
            ("fma", "vec[f32, 4]".to_string(), 3),
            ("sqrt", "vec[f32, 4]".to_string(), 1)
        ]
    );
}
