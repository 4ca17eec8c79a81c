//! Every rule and strategy keeps the meaning of a program it applies to: the
//! interpreter gives equal results before and after, on random inputs
//! (several seeds, several sizes); and every rule of the table
//! (`rewrite::rules::RULES`) applies in at least one of these cases.

mod common;

use common::Case;

/// (strategy, program, sizes)
// Known limitation: `tile` needs the inner map's input to be independent of
// the outer element (as in mm) or the element itself; `map (fun r => map f r)`
// after blocking (`split n r`) is neither, so tiling it is not supported yet.
const CASES: &[Case] = &[
    ("addId @ topDown", "def f : {n: nat} -> n.f32 -> n.f32 = fun xs => map (fun x => x * 2.0f) xs", &[("n", 6)]),
    ("DFNF ; body(addId ; idToTranspose)", "def f : {n m: nat} -> n.m.f32 -> n.m.f32 = fun xs => xs", &[("n", 3), ("m", 5)]),
    ("DFNF ; transposeMove @ topDown", "def f : {n m: nat} -> n.m.f32 -> m.n.f32 = fun xs => map (map (fun x => x + 1.0f)) (transpose xs)", &[("n", 3), ("m", 4)]),
    ("DFNF ; splitJoin(4) @ outermost(appliedMap)", "def f : {n: nat} -> (n*4).f32 -> (n*4).f32 = fun xs => map (fun x => x * x) xs", &[("n", 3)]),
    ("DFNF ; mapFusion @ topDown", "def f : {n: nat} -> n.f32 -> n.f32 = fun xs => map (fun x => x + 1.0f) (map (fun x => x * 3.0f) xs)", &[("n", 7)]),
    ("generateToMap @ topDown", "def f : {n: nat} -> n.i32 -> 5.i32 = fun xs => generate (fun i => xs |> map (fun x => select (x < (cast (indexAsNat i) : i32)) 1i32 0i32) |> reduce add 0i32)", &[("n", 9)]),
    ("DFNF ; mapFission @ topDown", "def f : {n: nat} -> n.f32 -> n.f32 = fun xs => map (fun x => neg (x * 3.0f)) xs", &[("n", 7)]),
    ("DFNF ; fuseReduceMap @ topDown", "def f : {n: nat} -> n.f32 -> f32 = fun xs => reduce add 0.0f (map (fun x => x * x) xs)", &[("n", 9)]),
    ("DFNF ; fissionReduceMap @ topDown", "def f : {n: nat} -> n.f32 -> f32 = fun xs => reduceSeq (fun acc x => acc + x * x) 1.0f xs", &[("n", 9)]),
    ("DFNF ; split(3) @ outermost(appliedReduce)", "def f : {n: nat} -> n.f32 -> f32 = fun xs => reduce add 2.0f xs", &[("n", 9)]),
    ("DFNF ; mapReduceInterchange @ topDown", "def f : {n m: nat} -> n.m.f32 -> n.f32 = fun xs => map (fun r => reduce add 1.0f r) xs", &[("n", 3), ("m", 5)]),
    ("DFNF ; mapMapInterchange @ topDown", "def f : {n m: nat} -> n.f32 -> m.f32 -> n.m.f32 = fun xs ys => map (fun x => map (fun y => x - y) ys) xs", &[("n", 3), ("m", 4)]),
    ("DFNF ; mapMapInterchange @ topDown", "def f : {n m: nat} -> n.m.f32 -> n.m.f32 = fun xs => map (fun r => map (fun x => x * 2.0f) r) xs", &[("n", 3), ("m", 4)]),
    ("DFNF ; vectorize(4) @ innermost(appliedMap)", "def f : {n: nat} -> n.f32 -> n.f32 = fun xs => map (fun x => x * x) xs", &[("n", 8)]),
    ("DFNF ; vectorize(4) @ innermost(appliedMap)", "def f : {n: nat} -> n.f32 -> n.f32 -> n.f32 = fun a b => zip a b |> map (fun p => fst p * snd p + fst p)", &[("n", 8)]),
    ("toReduceSeq @ topDown ; parallel @ topDown ; toMapSeq @ topDown ; unroll @ topDown", "def f : {n m: nat} -> n.m.f32 -> n.f32 = fun xs => map (fun r => reduce add 0.0f (map (fun x => x) r)) (map (fun r => r) xs)", &[("n", 3), ("m", 4)]),
    ("DFNF ; lowerToC ; toMap @ topDown ; parallel @ topDown", "def f : {n m: nat} -> n.m.f32 -> n.f32 = fun xs => map (fun r => reduce add 0.0f r) xs", &[("n", 3), ("m", 4)]),
    ("toMapGlobal(0) @ topDown ; toMapWorkGroup(1) @ topDown ; toMapLocal(2) @ topDown ; toMapBlock(0) @ topDown ; toMapThread(1) @ topDown ; toMapWarp @ topDown ; toMapLane @ topDown ; toMapWarpGroup @ topDown", "def f : {n: nat} -> n.f32 -> n.f32 = fun xs => xs |> map id |> map id |> map id |> map id |> map id |> map id |> map id |> map id", &[("n", 4)]),
    ("toMem(private) @ outermost(appliedReduce)", "def f : {n: nat} -> n.f32 -> f32 = fun xs => reduce add 0.0f xs + 1.0f", &[("n", 5)]),
    ("DFNF ; transposeAfterMap @ topDown", "def f : {n m: nat} -> n.m.f32 -> m.n.f32 = fun xs => transpose (map (map (fun x => x + 1.0f)) xs)", &[("n", 3), ("m", 4)]),
    ("transposeAfterMap @ topDown", "def f : {n m: nat} -> n.m.f32 -> m.n.f32 = fun xs => transpose (mapPar (mapSeq (fun x => x + 1.0f)) xs)", &[("n", 3), ("m", 4)]),
    ("mapFusion @ topDown", "def f : {n: nat} -> n.f32 -> n.f32 = fun xs => mapSeq (fun x => x + 1.0f) (mapSeq (fun x => x * 3.0f) xs)", &[("n", 7)]),
    ("splitAfterMap @ topDown", "def f : {n: nat} -> n.f32 -> (n /^ 2).2.f32 = fun xs => split 2 (map (fun x => x * 2.0f) xs)", &[("n", 8)]),
    ("DFNF ; joinBeforeMap @ topDown", "def f : {n m: nat} -> n.m.f32 -> (n*m).f32 = fun xs => map (fun x => x * 2.0f) (join xs)", &[("n", 3), ("m", 2)]),
    ("slideAfterMap @ topDown", "def f : {n: nat} -> (n+2).f32 -> (n+1).2.f32 = fun xs => slide 2 1 (map (fun x => x * 2.0f) xs)", &[("n", 6)]),
    ("splitBeforeMap @ topDown", "def f : {n: nat} -> (n*2).f32 -> n.2.f32 = fun xs => map (map (fun x => x * 2.0f + 1.0f)) (split 2 xs)", &[("n", 4)]),
    ("DFNF ; splitBeforeMap @ topDown", "def f : {n: nat} -> (n*3).f32 -> n.3.f32 = fun xs => map (fun r => map (fun x => x - 0.5f) r) (split 3 xs)", &[("n", 3)]),
    ("joinAfterMap @ topDown", "def f : {n m: nat} -> n.m.f32 -> (n*m).f32 = fun xs => join (map (map (fun x => x * x)) xs)", &[("n", 3), ("m", 2)]),
    ("DFNF ; joinAfterMap @ topDown", "def f : {n m: nat} -> n.m.f32 -> (n*m).f32 = fun xs => join (map (fun r => map (fun x => x + 3.0f) r) xs)", &[("n", 2), ("m", 4)]),
    ("slideBeforeMap @ topDown", "def f : {n: nat} -> (n+2).f32 -> (n+1).2.f32 = fun xs => map (map (fun x => x * 2.0f)) (slide 2 1 xs)", &[("n", 6)]),
    ("DFNF ; slideBeforeMap @ topDown", "def f : {n: nat} -> (2*n+3).f32 -> (n+1).3.f32 = fun xs => map (fun w => map (fun x => x - 1.0f) w) (slide 3 2 xs)", &[("n", 4)]),
    ("layoutFission @ topDown", "def f : {n m k: nat} -> n.m.k.f32 -> n.(m*k).f32 = fun xs => map (fun r => join (map (map (fun x => x * 2.0f)) r)) xs", &[("n", 2), ("m", 3), ("k", 2)]),
    ("DFNF ; copyArray @ argument @ function @ outermost(appliedReduce)", "def f : {n m: nat} -> n.m.f32 -> m.f32 -> m.f32 = fun xs z => reduce (fun acc r => map (fun p => fst p + snd p) (zip acc r)) z xs", &[("n", 3), ("m", 4)]),
    ("DFNF ; copyArray @ outermost(appliedMap) ;; copyArray @ body @ argument @ function @ outermost(appliedMap)", "def f : {n m: nat} -> n.m.f32 -> n.m.f32 = fun xs => map (map (fun x => x * 2.0f)) xs", &[("n", 2), ("m", 5)]),
    ("DFNF ; viewFission @ topDown", "def f : {n m k j: nat} -> n.m.k.j.f32 -> n.k.j.m.f32 = fun xs => map (fun r => map transpose (transpose (map (map (map (fun x => x * 2.0f))) r))) xs", &[("n", 2), ("m", 3), ("k", 2), ("j", 2)]),
    ("DFNF ; repeat(viewFission @ outermost(appliedMap))", "def f : {n m k: nat} -> n.m.k.f32 -> n.(k*m).f32 = fun xs => map (fun r => join (transpose (map (map (fun x => x * 2.0f)) r))) xs", &[("n", 2), ("m", 3), ("k", 4)]),
    ("DFNF ; overlappedTiling(6) @ outermost(appliedMap)", "def f : {n: nat} -> (n*4+6).f32 -> (n*4+4).f32 = fun xs => xs |> slide 3 1 |> map (fun nbh => reduce add 0.0f nbh)", &[("n", 4)]),
    ("DFNF ; overlappedTiling2(6) @ outermost(appliedMap)", "def f : {n m: nat} -> (n*4+6).(m*4+6).f32 -> (n*4+4).(m*4+4).f32 = fun g => g |> slide2 3 1 |> map2 (fun nbh => reduce add 0.0f (join nbh))", &[("n", 2), ("m", 3)]),
    ("DFNF ; storePadded @ topDown", "def f : {n m: nat} -> n.m.u8 -> n.m.u16 = fun g => g |> padClamp2 1 1 |> slide2 3 1 |> map2 (fun nbh => nbh |> join |> map (fun x => (cast x : u16)) |> reduce add 0u16)", &[("n", 3), ("m", 4)]),
    ("DFNF ; storePadded @ topDown", "def f : {n: nat} -> n.f32 -> n.f32 = fun xs => xs |> padCst 1 1 2.0f |> slide 3 1 |> map (fun w => reduce add 0.0f w)", &[("n", 5)]),
    ("DFNF ; storePadded @ topDown", "def f : {n m k: nat} -> n.m.k.f32 -> n.m.k.f32 = fun g => g |> padClamp3 1 1 |> slide3 3 1 |> map3 (fun c => reduce add 0.0f (join (join c)))", &[("n", 2), ("m", 3), ("k", 4)]),
    ("DFNF ; slideInward @ topDown", "def f : {n m: nat} -> (n+2).m.f32 -> n.m.f32 = fun xs => xs |> slide 3 1 |> map (fun w => map (fun r => idx (natAsIndex 3 (0 : natType)) r - 2.0f * idx (natAsIndex 3 (2 : natType)) r) (transpose w))", &[("n", 5), ("m", 7)]),
    ("DFNF ; slideInward @ topDown", "def f : {n m k: nat} -> (2*n+3).m.k.f32 -> (n+1).m.k.f32 = fun xs => xs |> slide 3 2 |> map (fun w => mapSeq (fun r => map (fun c => reduce add 0.0f c) (transpose r)) (transpose w))", &[("n", 1), ("m", 3), ("k", 2)]),
    ("DFNF ; slideInward @ topDown", "def f : {n m k: nat} -> (n+2).m.k.f32 -> n.k.f32 = fun xs => xs |> slide 3 1 |> map (fun w => map (fun r => reduce add 0.0f (join r)) (transpose (map transpose w)))", &[("n", 7), ("m", 2), ("k", 3)]),
    // the derivation of gpu.elv's streamColumns and stream3d, on a 7-point stencil
    ("DFNF ; repeat(mapFusion @ topDown ; DFNF) ; slideInward @ topDown ;; slideInward @ topDown ;; toSlideSeq @ topDown", "def f : {o n m: nat} -> o.n.m.f32 -> o.n.m.f32 = fun g => g |> padClamp3 1 1 |> slide3 3 1 |> map3 (fun c => 0.5f * at 1 (at 1 (at 0 c)) - at 0 (at 1 (at 1 c)) + 2.0f * at 2 (at 1 (at 1 c)) + at 1 (at 2 (at 1 c)) * at 1 (at 1 (at 2 c)))", &[("o", 5), ("n", 3), ("m", 2)]),
    ("DFNF ; vectorizeColumns(4) @ topDown", "def f : {o k: nat} -> (k*4).(o+2).3.f32 -> (k*4).(o+1).f32 = fun xs => map (fun c => map (fun w => 0.5f * idx (natAsIndex 2 (0 : natType)) (idx (natAsIndex 3 (1 : natType)) (transpose w)) - idx (natAsIndex 2 (1 : natType)) (idx (natAsIndex 3 (2 : natType)) (transpose w)) * 3.0f) (slide 2 1 c)) xs", &[("o", 3), ("k", 2)]),
    ("DFNF ; toSlideSeq @ topDown", "def f : {n: nat} -> (n+3).f32 -> (n+1).f32 = fun xs => xs |> slide 3 1 |> map (fun w => reduce (fun a b => a * 0.5f + b) 1.0f w)", &[("n", 6)]),
    ("toSlideSeq @ topDown", "def f : {n m: nat} -> (n+2).m.f32 -> (n+1).m.f32 = fun xs => mapSeq (fun w => mapSeq (fun p => fst p - snd p) (zip (idx (natAsIndex 2 (0 : natType)) w) (idx (natAsIndex 2 (1 : natType)) w))) (slide 2 1 xs)", &[("n", 0), ("m", 3)]),
    ("DFNF ; lowerToC ; unrollShort(9) @ topDown", "def f : {n: nat} -> n.3.3.i32 -> n.i32 = fun xs => map (fun w => reduce add 1i32 (join w)) xs", &[("n", 4)]),
    ("DFNF ; reorder([2, 1])", "def f : {n m: nat} -> n.f32 -> m.f32 -> n.m.f32 = fun xs ys => map (fun x => map (fun y => x * y) ys) xs", &[("n", 3), ("m", 5)]),
    ("storeInMemory(isApp(isTranspose), permuteB(2)) @ inLambda", "def f : {n m: nat} -> n.m.f32 -> m.f32 = fun xs => map (fun c => reduce add 0.0f c) (transpose xs)", &[("n", 3), ("m", 4)]),
    ("DFNF ; padMap(4) @ outermost(appliedMap) ; splitJoin(4) @ outermost(appliedMap)", "def f : {n: nat} -> n.f32 -> n.f32 = fun xs => map (fun x => x * 3.0f) xs", &[("n", 7)]),
    ("DFNF ; padMap(4) @ outermost(appliedMap) @ body @ argument @ function @ outermost(appliedMap) ; layoutFission @ outermost(appliedMap) ; padMap(3) @ argument @ outermost(appliedMap)", "def f : {n m: nat} -> n.f32 -> m.f32 -> n.m.f32 = fun xs ys => map (fun x => map (fun y => x - y) ys) xs", &[("n", 5), ("m", 1)]),
    ("DFNF ; peelReduce(4) @ outermost(appliedReduce) ; split(4) @ innermost(appliedReduce)", "def f : {n: nat} -> n.f32 -> f32 = fun xs => reduce (fun a x => a * 0.5f + x) 1.0f xs", &[("n", 11)]),
    ("DFNF ; peelReduce(3) @ outermost(appliedReduce)", "def f : {n: nat} -> n.f32 -> f32 = fun xs => reduceSeq (fun a x => a - x) 2.0f xs", &[("n", 2)]),
    ("DFNF ; peelFirst @ outermost(appliedReduce)", "def f : {n: nat} -> n.f32 -> f32 = fun xs => reduce (fun a x => a * 0.5f - x) 2.0f xs", &[("n", 1)]),
    ("DFNF ; peelFirst @ outermost(appliedReduce) ; betaReduction @ topDown", "def f : {n m: nat} -> n.m.f32 -> m.f32 = fun xs => reduceSeq (fun acc r => map (fun p => fst p * 0.5f + snd p) (zip acc r)) (generate (fun i => 1.0f)) xs", &[("n", 5), ("m", 3)]),
    ("DFNF ; transposeAccumulator(1) @ outermost(appliedReduce)", "def f : {n m k: nat} -> n.m.k.f32 -> m.k.f32 = fun xs => reduce (fun acc r => map (fun p => map (fun q => fst q * 0.5f + snd q) (zip (fst p) (snd p))) (zip acc r)) (generate (fun i => generate (fun j => 1.0f))) xs", &[("n", 3), ("m", 2), ("k", 4)]),
    ("DFNF ; transposeAccumulator(2) @ outermost(appliedReduce) ;; transposeAccumulator(1) @ outermost(appliedReduce)", "def f : {n m k j: nat} -> n.m.k.j.f32 -> m.k.j.f32 = fun xs => reduceSeq (fun acc r => map (fun p => map (fun q => map (fun s => fst s - snd s) (zip (fst q) (snd q))) (zip (fst p) (snd p))) (zip acc r)) (generate (fun i => generate (fun j => generate (fun l => 2.0f)))) xs", &[("n", 2), ("m", 3), ("k", 2), ("j", 3)]),
    ("betaReduction @ topDown", "def f : {n: nat} -> n.f32 -> n.f32 = fun xs => (fun ys => map (fun y => neg y) ys) xs", &[("n", 3)]),
    ("etaReduction @ topDown", "def f : {n: nat} -> n.f32 -> n.f32 = fun xs => map (fun y => neg y) xs", &[("n", 3)]),
    ("etaAbstraction @ outermost(isLambda ; body(function(function(isMap))))", "def f : {n: nat} -> n.f32 -> n.f32 = fun xs => map neg xs", &[("n", 3)]),
];

#[test]
fn every_rule_preserves_meaning_on_random_inputs() {
    common::check_all(CASES);
}

/// The GPU rules (crates/rewrite/src/rules/gpu.rs).
const GPU_CASES: &[Case] = &[
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
    (
        "DFNF ; reduceOuter @ topDown",
        "def f : {n m k: nat} -> n.k.4.f32 -> m.k.4.f32 -> n.m.2.2.f32 = fun a b => map (fun r => map (fun c => split 2 (zip r c |> reduceSeq (fun s p => zip s (zip (fst p) (snd p)) |> map (fun q => fst q * 0.5f + fst (snd q) * snd (snd q))) (generate (fun i => 1.0f)))) b) a",
        &[("n", 3), ("m", 2), ("k", 5)],
    ),
    (
        "DFNF ; reduceOuter @ topDown",
        "def f : {n m k: nat} -> n.k.2.f32 -> m.k.2.f32 -> (n*m).2.f32 = fun a b => join (map (fun r => map (fun c => zip r c |> reduceSeq (fun s p => zip s (zip (fst p) (snd p)) |> map (fun q => fst q - fst (snd q) * snd (snd q))) (generate (fun i => 0.0f))) b) a)",
        &[("n", 1), ("m", 3), ("k", 7)],
    ),
    (
        "DFNF ; blockReduceZip(2) @ innermost(appliedReduce) ;; reduceOuter @ topDown",
        "def f : {n m k: nat} -> n.m.f32 -> n.(k*2).f32 -> m.(k*2).f32 -> n.m.f32 = fun acc a b => zip acc a |> map (fun ar => zip (fst ar) b |> map (fun ac => zip (snd ar) (snd ac) |> reduceSeq (fun s p => s * 0.5f + fst p * snd p) (fst ac)))",
        &[("n", 3), ("m", 2), ("k", 5)],
    ),
    (
        "copyByThreads(8) @ inLambda",
        "def f : 6.4.f32 -> 6.4.f32 = fun xs => xs",
        &[],
    ),
    (
        "copyByThreads(5) @ inLambda",
        "def f : 3.5.i32 -> 3.5.i32 = fun xs => map (map (fun x => x * 2i32)) xs",
        &[],
    ),
    (
        "copyByThreads(1) @ inLambda",
        "def f : 1.1.f32 -> 1.1.f32 = fun xs => xs",
        &[],
    ),
    (
        "storeLocal(isApp(isFst), copyByThreads(6)) @ body @ body @ argument @ function @ function @ outermost(appliedReduce)",
        "def f : {k: nat} -> k.3.4.f32 -> k.4.f32 -> 3.4.f32 = fun xs ys => zip xs ys |> reduceSeq (fun acc y => zip acc (fst y) |> map (fun p => zip (fst p) (snd p) |> map (fun q => fst q + snd q * 2.0f)) |> map (fun r => zip r (snd y) |> map (fun q => fst q - snd q))) (generate (fun i => generate (fun j => 0.0f)))",
        &[("k", 3)],
    ),
];

#[test]
fn every_gpu_rule_preserves_meaning_on_random_inputs() {
    common::check_all(GPU_CASES);
}

/// The tensor-core rules (crates/rewrite/src/rules/tensor.rs), on f16 and bf16 tiles: a
/// 16x8 tile accumulate as `reduceOuter` leaves it, alone and within the derivation from a
/// plain product (several tiles, several k steps); the accumulator kept as a fragment; a
/// fragment of one value.
const TENSOR_CASES: &[Case] = &[
    ("DFNF ; mmaTile @ topDown", "def f : 16.8.f32 -> 16.16.f16 -> 8.16.f16 -> 16.8.f32 = fun acc a b => zip acc a |> map (fun ar => zip (fst ar) b |> map (fun ac => zip (snd ar) (snd ac) |> reduceSeq (fun s p => s + (cast (fst p) : f32) * (cast (snd p) : f32)) (fst ac)))", &[]),
    ("DFNF ; mmaTile @ topDown", "def f : 16.8.f32 -> 16.16.bf16 -> 8.16.bf16 -> 16.8.f32 = fun acc a b => zip acc a |> map (fun ar => zip (fst ar) b |> map (fun ac => zip (snd ar) (snd ac) |> reduceSeq (fun s p => (cast (snd p) : f32) * (cast (fst p) : f32) + s) (fst ac)))", &[]),
    ("fragmentAccumulator @ topDown", "def f : {n: nat} -> n.16.16.f16 -> n.8.16.f16 -> 16.8.f32 -> 16.8.f32 = fun as bs z => zip as bs |> reduceSeq (fun acc t => unfragC (mmaSync (fragA (fst t)) (fragB (transpose (snd t))) (fragC acc))) z", &[("n", 3)]),
    ("constantFragment @ topDown", "def f : 16.16.f16 -> 8.16.f16 -> 16.8.f32 = fun a b => unfragC (mmaSync (fragA a) (fragB (transpose b)) (fragC (generate (fun i => generate (fun j => 0.5f)))))", &[]),
    ("constantFragment @ topDown", "def f : 16.16.bf16 -> 16.8.bf16 -> 16.8.f32 = fun a b => unfragC (mmaSync (fragA a) (fragB b) (fragC (map (fun r => map (fun c => 1.0f) (transpose b)) a)))", &[]),
    ("fragmentAccumulator @ topDown", "def f : {n: nat} -> n.2.16.16.f16 -> n.4.8.16.f16 -> 2.4.16.8.f32 -> 2.4.16.8.f32 = fun as bs z => zip as bs |> reduceSeq (fun acc t => zip acc (fst t) |> map (fun ar => zip (fst ar) (snd t) |> map (fun ac => unfragC (mmaSync (fragA (snd ar)) (fragB (transpose (snd ac))) (fragC (fst ac)))))) z", &[("n", 2)]),
    ("fragmentAccumulator @ topDown ; constantFragment @ topDown", "def f : {n: nat} -> n.3.16.16.bf16 -> 16.8.bf16 -> 3.16.8.f32 = fun as b => as |> reduceSeq (fun acc t => zip acc t |> map (fun p => unfragC (mmaSync (fragA (snd p)) (fragB b) (fragC (fst p))))) (generate (fun i => generate (fun r => generate (fun c => 0.25f))))", &[("n", 3)]),
    ("lanesOutermost @ topDown", "def f : {n: nat} -> n.2.3.32.4.f32 -> 2.3.32.4.f32 -> 2.3.32.4.f32 = fun xs z => xs |> reduceSeq (fun acc x => zip acc x |> map (fun p => zip (fst p) (snd p) |> map (fun q => zip (fst q) (snd q) |> map (fun r => zip (fst r) (snd r) |> map (fun s => fst s * 0.5f + snd s))))) z", &[("n", 3)]),
    ("lanesOutermost @ topDown", "def f : {n: nat} -> n.32.4.f32 -> 5.32.4.f32 -> 5.32.4.f32 = fun xs z => xs |> reduceSeq (fun acc x => acc |> map (fun f => zip f x |> map (fun q => zip (fst q) (snd q) |> map (fun r => fst r - snd r)))) z", &[("n", 2)]),
    ("DFNF ; flattenMapNest @ topDown", "def f : {n m: nat} -> n.f32 -> m.f32 -> n.m.f32 = fun xs ys => map (fun x => map (fun y => x - y * 2.0f) ys) xs", &[("n", 3), ("m", 4)]),
    ("DFNF ; flattenMapNest @ topDown", "def f : {n m: nat} -> n.f32 -> m.2.f32 -> n.2.m.f32 = fun xs ys => map (fun x => transpose (map (fun y => map (fun e => x * e) y) ys)) xs", &[("n", 3), ("m", 5)]),
    ("fragmentAccumulator @ topDown", "def f : {n m: nat} -> n.2.m.16.16.f16 -> n.2.m.8.16.f16 -> 2.16.8.f32 -> 2.16.8.f32 = fun as bs z => zip as bs |> reduceSeq (fun acc t => zip acc (zip (fst t) (snd t)) |> map (fun w => zip (fst (snd w)) (snd (snd w)) |> reduceSeq (fun a s => unfragC (mmaSync (fragA (fst s)) (fragB (transpose (snd s))) (fragC a))) (fst w))) z", &[("n", 3), ("m", 2)]),
    ("fragmentAccumulator @ topDown ; constantFragment @ topDown", "def f : {n: nat} -> n.4.16.16.bf16 -> n.4.3.2.8.16.bf16 -> 2.2.f32 -> 4.2.16.8.f32 = fun as bs u => zip as bs |> reduceSeq (fun acc t => zip acc (zip (fst t) (snd t)) |> map (fun w => snd (snd w) |> reduceSeq (fun a s => zip a s |> map (fun q => unfragC (mmaSync (fragA (fst (snd w))) (fragB (transpose (snd q))) (fragC (fst q))))) (fst w))) (join (map (fun row => map (fun x => generate (fun f => generate (fun r => generate (fun c => 0.5f)))) row) u))", &[("n", 1)]),
    ("lanesInWarps @ topDown", "def f : {n m: nat} -> n.2.m.3.32.4.f32 -> 2.3.32.4.f32 -> 2.3.32.4.f32 = fun xs z => xs |> reduceSeq (fun acc y => zip acc y |> map (fun w => snd w |> reduceSeq (fun a x => zip a x |> map (fun q => zip (fst q) (snd q) |> map (fun r => zip (fst r) (snd r) |> map (fun s => fst s * 0.5f + snd s)))) (fst w))) z", &[("n", 3), ("m", 2)]),
    ("lanesInWarps @ topDown", "def f : {n: nat} -> n.3.2.1.32.2.f32 -> 3.1.32.2.f32 = fun xs => xs |> reduceSeq (fun acc y => zip acc y |> map (fun w => snd w |> reduceSeq (fun a x => zip a x |> map (fun r => zip (fst r) (snd r) |> map (fun s => zip (fst s) (snd s) |> map (fun t => fst t - snd t * 0.5f)))) (fst w))) (generate (fun w => generate (fun f => generate (fun l => generate (fun e => 1.0f)))))", &[("n", 1)]),
    ("flattenAccumulatorNest @ topDown", "def f : {n: nat} -> n.2.4.f32 -> n.3.4.f32 -> 2.3.f32 -> 2.3.f32 = fun as bs z => zip as bs |> reduceSeq (fun accs y => zip accs (fst y) |> map (fun ar => zip (fst ar) (snd y) |> map (fun ac => zip (snd ar) (snd ac) |> reduceSeq (fun s p => s + fst p * snd p) (fst ac)))) z", &[("n", 3)]),
    ("DFNF ; flattenAccumulatorNest @ topDown", "def f : {n k: nat} -> n.1.k.f32 -> n.5.k.f32 -> 1.5.f32 = fun as bs => zip as bs |> reduceSeq (fun accs y => zip accs (fst y) |> map (fun ar => zip (fst ar) (snd y) |> map (fun ac => fst ac - (reduce add 0.0f (snd ar)) * (reduce add 0.0f (snd ac))))) (generate (fun i => generate (fun j => 0.5f)))", &[("n", 2), ("k", 7)]),
];

#[test]
fn every_tensor_rule_preserves_meaning_on_random_inputs() {
    common::check_all(TENSOR_CASES);
}

/// A 16x8 tile accumulate over tiles of `t` whose reduction's step is `step`.
fn tile_accumulate(t: &str, rows: usize, cols: usize, k: usize, step: &str) -> String {
    format!(
        "def f : {rows}.{cols}.f32 -> {rows}.{k}.{t} -> {cols}.{k}.{t} -> {rows}.{cols}.f32 = \
         fun acc a b => zip acc a |> map (fun ar => zip (fst ar) b |> map (fun ac => \
         zip (snd ar) (snd ac) |> reduceSeq ({step}) (fst ac)))"
    )
}

/// `mmaTile` on f16 and bf16 tiles whose values use every bit of their mantissa: the
/// interpreter's `mmaSync` sums the 16 exact products with the accumulator and rounds once,
/// the sequential reduction rounds at every step, and the two agree within the tolerance
/// of the reassociating reduction rules (`rewrite::check::same_results_on`).
#[test]
fn mma_tile_agrees_within_the_tolerance_on_fractional_values() {
    let registry = rewrite::library::registry();
    let module = elv::load("", &registry).expect("the empty file loads");
    let s = module
        .expression("DFNF ; mmaTile @ topDown")
        .expect("the strategy parses");
    let step = "fun s p => s + (cast (fst p) : f32) * (cast (snd p) : f32)";
    for t in ["f16", "bf16"] {
        let program = tile_accumulate(t, 16, 8, 16, step);
        let checked = rise::infer::check_source(&program).expect("the program checks");
        let p = rise::infer::prepare_def(&checked, "f").expect("f is defined");
        let mut ctx = elevate::Ctx::new(rise::NameGen::avoiding(&p.body));
        let out = ctx.run(&s, &p.body).expect("mmaTile applies");
        assert!(out.to_string().contains("mmaSync"), "{out}");
        let params = rewrite::check::parameters(&p.scheme, &[]).expect("concrete types");
        for seed in 1..=16 {
            let mut rng = rewrite::check::seeded_rng(seed);
            let inputs = params
                .iter()
                .map(|d| rewrite::check::random_fraction(d, &mut rng))
                .collect::<Result<Vec<_>, _>>()
                .expect("random inputs");
            rewrite::check::same_results_on(&p.body, &out, &inputs, &[])
                .unwrap_or_else(|e| panic!("{t}, seed {seed}: {e}"));
        }
    }
}

/// `mmaTile` refuses, with the reason, a tile accumulate the tensor cores cannot compute:
/// f32 tiles, tiles of two types, other shapes, another step.
#[test]
fn mma_tile_refuses_other_tiles_with_the_reason() {
    let step = "fun s p => s + (cast (fst p) : f32) * (cast (snd p) : f32)";
    let f32_step = "fun s p => s + fst p * snd p";
    let refusals = [
        (tile_accumulate("f32", 16, 8, 16, f32_step), "mma.sync multiplies f16 or bf16 tiles"),
        (tile_accumulate("f16", 16, 16, 16, step), "the tile accumulate is 16x16 with 16 products per element"),
        (tile_accumulate("bf16", 16, 8, 32, step), "the tile accumulate is 16x8 with 32 products per element"),
        (tile_accumulate("f16", 8, 8, 16, step), "split the reduction by 16"),
        (tile_accumulate("f16", 16, 8, 16, "fun s p => s - (cast (fst p) : f32) * (cast (snd p) : f32)"), "is not `fun s p => s + cast (fst p) * cast (snd p)`"),
        (tile_accumulate("f16", 16, 8, 16, "fun s p => s + (cast (fst p) : f32) * (cast (fst p) : f32)"), "which is what the tensor cores compute"),
        ("def f : 16.8.f32 -> 16.16.f16 -> 8.16.bf16 -> 16.8.f32 = fun acc a b => zip acc a |> map (fun ar => zip (fst ar) b |> map (fun ac => zip (snd ar) (snd ac) |> reduceSeq (fun s p => s + (cast (fst p) : f32) * (cast (snd p) : f32)) (fst ac)))".to_string(), "the tiles hold f16 and bf16"),
    ];
    for (program, want) in refusals {
        let (_, why) = common::refusal(&program, "DFNF ; mmaTile @ topDown");
        assert!(
            why.contains("mmaTile") && why.contains(want),
            "{program}: expected `{want}` in {why}"
        );
    }
}

/// `fragmentAccumulator` refuses a step that reads its accumulator other than through
/// `fragC` (here also directly), with the reason.
#[test]
fn fragment_accumulator_refuses_other_reads_of_the_accumulator() {
    let program = "def f : {n: nat} -> n.16.16.f16 -> n.8.16.f16 -> 16.8.f32 -> 16.8.f32 = fun as bs z => zip as bs |> reduceSeq (fun acc t => unfragC (mmaSync (fragA (fst t)) (fragB (transpose (snd t))) (fragC (zip acc acc |> map (fun p => fst p))))) z";
    let (_, why) = common::refusal(program, "fragmentAccumulator @ topDown");
    assert!(why.contains("other than as `fragC acc`"), "{why}");
}

/// `fragmentAccumulator` refuses an accumulator of tiles whose step reads a tile other than
/// through `fragC` (here also directly), with the reason.
#[test]
fn fragment_accumulator_refuses_other_reads_of_a_tile_of_the_accumulator() {
    let program = "def f : {n: nat} -> n.2.16.16.f16 -> 16.8.f16 -> 2.16.8.f32 -> 2.16.8.f32 = fun as b z => as |> reduceSeq (fun acc t => zip acc t |> map (fun p => unfragC (mmaSync (fragA (snd p)) (fragB b) (fragC (fst p |> map (fun r => r)))))) z";
    let (_, why) = common::refusal(program, "fragmentAccumulator @ topDown");
    assert!(why.contains("other than as `fragC fst p`"), "{why}");
}

/// `copyByThreads(p)` refuses a tile whose elements `p` threads do not share evenly, and one
/// of a size not known, with the reason.
#[test]
fn copy_by_threads_refuses_tiles_the_threads_do_not_share_with_the_reason() {
    let (_, why) = common::refusal(
        "def f : 3.5.f32 -> 3.5.f32 = fun xs => xs",
        "copyByThreads(4) @ inLambda",
    );
    assert!(
        why.contains("the tile is 3x5, 15 elements, which 4 threads do not share evenly"),
        "{why}"
    );
    let (_, why) = common::refusal(
        "def f : {n: nat} -> n.4.f32 -> n.4.f32 = fun xs => xs",
        "copyByThreads(4) @ inLambda",
    );
    assert!(why.contains("not of a constant size"), "{why}");
}

/// Fireiron's refinements of a moved tile (crates/rewrite/src/rules/refine.rs): copies of
/// vectors in blocks of rows, the stored layouts (transposed, rows rotated), the reduction
/// whose copies run ahead; tiles of one element, of odd and prime sizes.
const REFINE_CASES: &[Case] = &[
    ("copyVectorsByThreads(4, 2, 1) @ inLambda", "def f : 6.4.f32 -> 6.4.f32 = fun xs => xs", &[]),
    ("copyVectorsByThreads(3, 2, 3) @ inLambda", "def f : 3.6.i32 -> 3.6.i32 = fun xs => map (map (fun x => x * 3i32)) xs", &[]),
    ("copyVectorsByThreads(5, 8, 5) @ inLambda", "def f : 5.8.f16 -> 5.8.f16 = fun xs => xs", &[]),
    ("copyVectorsByThreads(1, 1, 1) @ inLambda", "def f : 1.1.f32 -> 1.1.f32 = fun xs => xs", &[]),
    ("(copyByThreads(5) ; storeTransposed) @ inLambda", "def f : 5.3.f32 -> 5.3.f32 = fun xs => xs", &[]),
    ("(copyVectorsByThreads(7, 2, 7) ; storeTransposed @ argument) @ inLambda", "def f : 7.4.bf16 -> 7.4.bf16 = fun xs => xs", &[]),
    ("(toMem(private) ; storeTransposed) @ inLambda", "def f : 1.1.i32 -> 1.1.i32 = fun xs => xs", &[]),
    ("(copyByThreads(4) ; storeRotated(3)) @ inLambda", "def f : 5.4.i32 -> 5.4.i32 = fun xs => xs", &[]),
    ("(copyByThreads(7) ; storeRotated(7)) @ inLambda", "def f : 3.7.f32 -> 3.7.f32 = fun xs => map (map (fun x => x - 1.0f)) xs", &[]),
    ("(copyVectorsByThreads(9, 2, 1) ; storeRotated(8) @ argument) @ inLambda", "def f : 9.16.f16 -> 9.16.f16 = fun xs => xs", &[]),
    ("(toMem(local) ; storeRotated(1)) @ inLambda", "def f : 1.1.f32 -> 1.1.f32 = fun xs => xs", &[]),
    (
        "storeLocal(isApp(isFst), copyByThreads(6)) @ body @ body @ argument @ function @ function @ outermost(appliedReduce) ; pipelineCopies(2) @ outermost(appliedReduce)",
        "def f : {k: nat} -> k.3.4.f32 -> k.4.f32 -> 3.4.f32 = fun xs ys => zip xs ys |> reduceSeq (fun acc y => zip acc (fst y) |> map (fun p => zip (fst p) (snd p) |> map (fun q => fst q + snd q * 2.0f)) |> map (fun r => zip r (snd y) |> map (fun q => fst q - snd q))) (generate (fun i => generate (fun j => 0.0f)))",
        &[("k", 5)],
    ),
    (
        "storeLocal(isApp(isFst), copyVectorsByThreads(3, 2, 3) ; storeRotated(2) @ argument) @ body @ body @ argument @ function @ function @ outermost(appliedReduce) ; pipelineCopies(3) @ outermost(appliedReduce)",
        "def f : {k: nat} -> k.3.4.f32 -> k.4.f32 -> 3.4.f32 = fun xs ys => zip xs ys |> reduceSeq (fun acc y => zip acc (fst y) |> map (fun p => zip (fst p) (snd p) |> map (fun q => fst q + snd q * 2.0f)) |> map (fun r => zip r (snd y) |> map (fun q => fst q - snd q))) (generate (fun i => generate (fun j => 0.0f)))",
        &[("k", 1)],
    ),
    (
        "pipelineCopies(4) @ outermost(appliedReduce)",
        "def f : {k: nat} -> k.5.i32 -> 5.i32 = fun xs => xs |> reduceSeq (fun acc x => toMem local (mapSeq (fun y => y) x) (fun t => zip acc t |> map (fun q => fst q + snd q))) (generate (fun i => 1i32))",
        &[("k", 7)],
    ),
];

#[test]
fn every_refinement_preserves_meaning_on_random_inputs() {
    common::check_all(REFINE_CASES);
}

/// The refinements refuse what they cannot do, with the reason: vectors or blocks of rows
/// that do not divide the tile, threads that do not share its vectors, a tile of a size not
/// known, a rotation wider than the rows, a step that does not begin with a copy into
/// local memory, stages other than 2, 3 and 4.
#[test]
fn refinements_refuse_with_the_reason() {
    let reduction = "def f : {k: nat} -> k.5.f32 -> 5.f32 = fun xs => xs |> reduceSeq (fun acc x => zip acc x |> map (fun q => fst q + snd q)) (generate (fun i => 0.0f))";
    for (program, strategy, want) in [
        ("def f : 3.6.f32 -> 3.6.f32 = fun xs => xs", "copyVectorsByThreads(3, 4, 1) @ inLambda", "the tile's rows of 6 are not vectors of 4"),
        ("def f : 3.6.f32 -> 3.6.f32 = fun xs => xs", "copyVectorsByThreads(3, 2, 2) @ inLambda", "the tile's 3 rows are not blocks of 2"),
        ("def f : 3.6.f32 -> 3.6.f32 = fun xs => xs", "copyVectorsByThreads(4, 2, 1) @ inLambda", "the tile is 3x6, 9 vectors of 2, which 4 threads do not share evenly"),
        ("def f : {n: nat} -> n.4.f32 -> n.4.f32 = fun xs => xs", "copyVectorsByThreads(4, 2, 1) @ inLambda", "not of a constant size"),
        ("def f : 3.4.f32 -> 3.4.f32 = fun xs => xs", "(copyByThreads(4) ; storeRotated(5)) @ inLambda", "rows of 4 cannot be rotated by up to 5 places"),
        (reduction, "pipelineCopies(2) @ outermost(appliedReduce)", "the step does not begin with a copy into local memory"),
        ("def f : {k: nat} -> k.5.f32 -> 5.f32 = fun xs => xs |> reduceSeq (fun acc x => toMem private (mapSeq (fun y => y) x) (fun t => zip acc t |> map (fun q => fst q + snd q))) (generate (fun i => 0.0f))", "pipelineCopies(2) @ outermost(appliedReduce)", "the step's first copy is not into local memory or reads the accumulator"),
        ("def f : {k: nat} -> k.5.f32 -> 5.f32 = fun xs => xs |> reduceSeq (fun acc x => toMem local (zip acc x |> mapSeq (fun q => fst q * snd q)) (fun t => zip acc t |> map (fun q => fst q + snd q))) (generate (fun i => 0.0f))", "pipelineCopies(3) @ outermost(appliedReduce)", "the step's first copy is not into local memory or reads the accumulator"),
        (reduction, "pipelineCopies(5) @ outermost(appliedReduce)", "pipelineCopies(5): 2, 3 or 4 stages are supported"),
    ] {
        let (_, why) = common::refusal(program, strategy);
        assert!(why.contains(want), "{strategy}: {why}");
    }
}

/// The parallel-reduction rules (crates/rewrite/src/rules/reduction.rs), at sizes that
/// are multiples of the parts and at sizes that are not (padded with the neutral element).
const REDUCTION_CASES: &[Case] = &[
    ("DFNF ; partialReduce(4) @ outermost(appliedReduce)", "def f : {n: nat} -> n.f32 -> f32 = fun xs => reduce add 0.0f xs", &[("n", 12)]),
    ("DFNF ; partialReduce(4) @ outermost(appliedReduce)", "def f : {n: nat} -> n.f32 -> f32 = fun xs => reduce add 0.0f xs", &[("n", 7)]),
    ("DFNF ; partialReduce(3) @ outermost(appliedReduce)", "def f : {n: nat} -> n.f32 -> f32 = fun xs => reduce (fun a b => b * a) 1.0f xs", &[("n", 1)]),
    ("DFNF ; partialReduceStrided(4) @ outermost(appliedReduce)", "def f : {n: nat} -> n.f32 -> f32 = fun xs => reduce add 0.0f xs", &[("n", 13)]),
    ("DFNF ; partialReduceStrided(8) @ outermost(appliedReduce)", "def f : {n: nat} -> n.int -> int = fun xs => reduce max (-2147483648) xs", &[("n", 21)]),
    ("DFNF ; partialReduceStrided(5) @ outermost(appliedReduce)", "def f : {n: nat} -> n.f32 -> n.f32 -> f32 = fun xs ys => zip xs ys |> map (fun p => fst p * snd p) |> reduce add 0.0f", &[("n", 1000)]),
    ("DFNF ; partialReduce(4) @ outermost(appliedReduce) ; partialReduceStrided(8) @ innermost(appliedReduce)", "def f : {n: nat} -> n.f32 -> f32 = fun xs => reduce (fun a b => a + b) 0.0f xs", &[("n", 37)]),
    ("DFNF ; vectorizeReduce(4) @ outermost(appliedReduce)", "def f : {n: nat} -> (n*4).f32 -> f32 = fun xs => reduce add 0.0f xs", &[("n", 5)]),
    ("DFNF ; vectorizeReduce(8) @ outermost(appliedReduce)", "def f : 8.f32 -> f32 = fun xs => reduce (fun a b => b * a) 1.0f xs", &[]),
    ("DFNF ; (peelReduce(8) ; vectorizeReduce(8) @ argument @ function) @ outermost(appliedReduce)", "def f : {n: nat} -> n.f32 -> f32 = fun xs => reduce fmax (-inff) xs", &[("n", 1)]),
    ("DFNF ; (peelReduce(8) ; vectorizeReduce(8) @ argument @ function) @ outermost(appliedReduce)", "def f : {n: nat} -> n.f32 -> f32 = fun xs => reduce fmin inff xs", &[("n", 23)]),
    ("DFNF ; (peelReduce(4) ; vectorizeReduce(4) @ argument @ function) @ outermost(appliedReduce)", "def f : {n: nat} -> n.i32 -> i32 = fun xs => reduce max (-2147483648i32) xs", &[("n", 7)]),
    ("DFNF ; (peelReduce(16) ; vectorizeReduce(16) @ argument @ function) @ outermost(appliedReduce)", "def f : {n: nat} -> n.f32 -> n.f32 -> f32 = fun xs ys => zip xs ys |> map (fun p => fst p * snd p) |> reduce add 0.0f", &[("n", 1000)]),
    ("DFNF ; (peelReduce(32) ; (partialReduce(4) ; vectorizeReduce(8) @ body @ argument @ function @ argument) @ argument @ function) @ outermost(appliedReduce)", "def f : {n: nat} -> n.f32 -> f32 = fun xs => xs |> map abs |> reduce add 0.0f", &[("n", 1003)]),
    ("DFNF ; vectorizeReduce(4) @ outermost(appliedReduce) @ body @ argument @ function @ outermost(appliedMap)", "def f : {m n: nat} -> m.(n*4).f32 -> m.f32 = fun xs => map (fun r => reduce max (-inff) r) xs", &[("m", 3), ("n", 2)]),
    ("DFNF ; treeReduce @ outermost(appliedMap)", "def f : {n: nat} -> n.8.f32 -> n.f32 = fun xs => map (fun r => reduce add 0.0f r) xs", &[("n", 3)]),
    ("DFNF ; partialReduce(2) @ outermost(appliedReduce) ; treeReduce @ outermost(appliedMap)", "def f : 32.f32 -> f32 = fun xs => reduce mul 1.0f xs", &[]),
    ("DFNF ; treeReduceLet @ outermost(applied(let))", "def f : {n: nat} -> n.8.f32 -> n.8.f32 = fun xs => map (fun r => let (reduce fmax (-inff) r + 1.0f) (fun m => map (fun x => x - m) r)) xs", &[("n", 3)]),
    ("DFNF ; partialReduceStrided(4) @ outermost(appliedReduce) ; treeReduceLet @ outermost(applied(let))", "def f : {n: nat} -> n.f32 -> n.f32 = fun xs => let (reduce add 0.0f xs) (fun s => map (fun x => x / s) xs)", &[("n", 13)]),
    ("DFNF ; reduceToWarp @ outermost(appliedReduce)", "def f : {n: nat} -> n.32.f32 -> n.f32 = fun xs => map (fun w => reduce (fun a b => b + a) 0.0f w) xs", &[("n", 3)]),
    ("DFNF ; warpReduceLet @ outermost(applied(let))", "def f : {m n: nat} -> m.n.f32 -> m.n.f32 = fun xs => map (fun r => let (reduce fmax (-inff) r + 1.0f) (fun h => map (fun x => x - h) r)) xs", &[("m", 3), ("n", 45)]),
    ("DFNF ; warpReduceLet @ outermost(applied(let))", "def f : {n: nat} -> n.f32 -> n.f32 = fun xs => let (reduce add 0.0f (map (fun x => x * x) xs) / 3.0f) (fun s => map (fun x => x / s) xs)", &[("n", 1)]),
    ("DFNF ; warpReduceLet @ outermost(applied(let))", "def f : 64.i32 -> i32 = fun xs => let (reduce min 2147483647i32 xs) (fun s => s + 1i32)", &[]),
    ("DFNF ; reduceByWarps @ outermost(appliedMap)", "def f : {n: nat} -> n.96.f32 -> n.f32 = fun xs => map (fun r => reduce add 0.0f r) xs", &[("n", 2)]),
    ("DFNF ; reduceByWarps @ outermost(appliedMap)", "def f : {n: nat} -> n.32.i32 -> n.i32 = fun xs => map (fun r => reduce max (-2147483648i32) r) xs", &[("n", 3)]),
    ("DFNF ; partialReduceStrided(64) @ outermost(appliedReduce) ; partialReduce(1) @ outermost(appliedReduce) ; reduceByWarps @ outermost(appliedMap)", "def f : {n: nat} -> n.f32 -> f32 = fun xs => reduce add 0.0f xs", &[("n", 100)]),
];

#[test]
fn every_reduction_rule_preserves_meaning_on_random_inputs() {
    common::check_all(REDUCTION_CASES);
}

/// `partialScan(p)` (crates/rewrite/src/rules/scan.rs): inclusive and exclusive scans of
/// sums (floats within the tolerance, wrapping integers exactly), products, minima and
/// maxima, with and without padding, more chunks than elements, an initial value that is
/// not the neutral element, and the rule applied again to a chunk's scan.
const SCAN_CASES: &[Case] = &[
    ("DFNF ; partialScan(4) @ outermost(applied(scanSeq))", "def f : {n: nat} -> n.f32 -> n.f32 = fun xs => scanSeq (fun x a => a + x) 0.0f xs", &[("n", 13)]),
    ("DFNF ; partialScan(4) @ outermost(applied(scanSeq))", "def f : {n: nat} -> n.f32 -> n.f32 = fun xs => scanSeq add 0.0f xs", &[("n", 12)]),
    ("DFNF ; partialScan(4) @ outermost(applied(scanSeq))", "def f : {n: nat} -> n.f32 -> n.f32 = fun xs => scanSeq add 0.0f xs", &[("n", 1)]),
    ("DFNF ; partialScan(8) @ outermost(applied(scanSeq))", "def f : {n: nat} -> n.i32 -> n.i32 = fun xs => scanSeq (fun x a => a + x) 0i32 xs", &[("n", 1025)]),
    ("DFNF ; partialScan(3) @ outermost(applied(scanSeq))", "def f : {n: nat} -> n.i32 -> n.i32 = fun xs => scanSeq mul 1i32 xs", &[("n", 20)]),
    ("DFNF ; partialScan(3) @ outermost(applied(scanSeq))", "def f : {n: nat} -> n.f32 -> n.f32 = fun xs => scanSeq fmax (-inff) xs", &[("n", 7)]),
    ("DFNF ; partialScan(5) @ outermost(applied(scanSeq))", "def f : {n: nat} -> n.f32 -> n.f32 = fun xs => scanSeq (fun x a => max a x) 0.25f xs", &[("n", 23)]),
    ("DFNF ; partialScan(2) @ outermost(applied(scanSeq))", "def f : {n: nat} -> n.i32 -> n.i32 = fun xs => xs |> padCst 1 0 0i32 |> take n |> scanSeq add 0i32", &[("n", 9)]),
    ("DFNF ; partialScan(4) @ outermost(applied(scanSeq)) ; partialScan(2) @ innermost(applied(scanSeq))", "def f : {n: nat} -> n.i32 -> n.i32 = fun xs => scanSeq add 5i32 xs", &[("n", 31)]),
    ("DFNF ; partialScan(4) @ outermost(applied(scanSeq)) ;; mapCopy @ outermost(applied(take))", "def f : {n: nat} -> n.f32 -> n.f32 = fun xs => scanSeq add 0.0f xs", &[("n", 9)]),
    ("DFNF ; partialScan(4) @ body @ argument @ function @ outermost(appliedMap)", "def f : {m n: nat} -> m.n.f32 -> m.n.f32 = fun xss => map (fun row => scanSeq add 0.0f row) xss", &[("m", 3), ("n", 10)]),
    ("DFNF ; scanTiled(4, 2) @ outermost(applied(scanSeq))", "def f : {n: nat} -> n.f32 -> n.f32 = fun xs => scanSeq (fun x a => a + x) 0.0f xs", &[("n", 13)]),
    ("DFNF ; scanTiled(4, 2) @ outermost(applied(scanSeq))", "def f : {n: nat} -> n.i32 -> n.i32 = fun xs => scanSeq add 5i32 xs", &[("n", 16)]),
    ("DFNF ; scanTiled(3, 3) @ outermost(applied(scanSeq))", "def f : {n: nat} -> n.i32 -> n.i32 = fun xs => xs |> padCst 1 0 0i32 |> take n |> scanSeq add 0i32", &[("n", 1)]),
    ("DFNF ; scanTiled(2, 2) @ outermost(applied(scanSeq))", "def f : {n: nat} -> n.f32 -> n.f32 = fun xs => scanSeq fmax (-inff) xs", &[("n", 11)]),
    ("DFNF ; scanTiled(4, 2) @ outermost(applied(scanSeq)) ;; workGroupScan(4) @ outermost(applied(scanSeq))", "def f : {n: nat} -> n.i32 -> n.i32 = fun xs => scanSeq (fun x a => a + x) 0i32 xs", &[("n", 21)]),
    ("DFNF ; workGroupScan(8) @ outermost(applied(scanSeq))", "def f : 24.f32 -> 24.f32 = fun xs => scanSeq (fun x a => max a x) (-inff) xs", &[]),
    ("DFNF ; workGroupScan(5) @ outermost(applied(scanSeq))", "def f : 15.i32 -> 15.i32 = fun xs => scanSeq mul 1i32 xs", &[]),
    ("DFNF ; workGroupScan(8) @ outermost(applied(scanSeq))", "def f : 64.i32 -> 64.i32 = fun xs => scanSeq add 0i32 xs", &[]),
    ("DFNF ; workGroupScan(32) @ outermost(applied(scanSeq))", "def f : 512.f32 -> 512.f32 = fun xs => scanSeq fmin inff xs", &[]),
    ("DFNF ; singlePassScan(4, 2) @ outermost(applied(scanSeq))", "def f : {n: nat} -> n.f32 -> n.f32 = fun xs => scanSeq (fun x a => a + x) 0.0f xs", &[("n", 13)]),
    ("DFNF ; singlePassScan(4, 2) @ outermost(applied(scanSeq))", "def f : {n: nat} -> n.i32 -> n.i32 = fun xs => scanSeq add 5i32 xs", &[("n", 16)]),
    ("DFNF ; singlePassScan(3, 3) @ outermost(applied(scanSeq))", "def f : {n: nat} -> n.i32 -> n.i32 = fun xs => xs |> padCst 1 0 0i32 |> take n |> scanSeq add 0i32", &[("n", 1)]),
    ("DFNF ; singlePassScan(2, 2) @ outermost(applied(scanSeq))", "def f : {n: nat} -> n.u32 -> n.u32 = fun xs => scanSeq mul 1u32 xs", &[("n", 11)]),
    ("DFNF ; singlePassScan(4, 2) @ outermost(applied(scanSeq)) ;; workGroupScan(4) @ topDown", "def f : {n: nat} -> n.f32 -> n.f32 = fun xs => scanSeq fmax (-inff) xs", &[("n", 23)]),
    ("DFNF ; workGroupScanInLocal(8) @ outermost(applied(scanSeq))", "def f : 64.i32 -> 64.i32 = fun xs => scanSeq add 0i32 xs", &[]),
    ("DFNF ; workGroupScanInLocal(5) @ outermost(applied(scanSeq))", "def f : 15.f32 -> 15.f32 = fun xs => scanSeq (fun x a => max a x) (-inff) xs", &[]),
    ("DFNF ; singlePassScan(8, 4) @ outermost(applied(scanSeq)) ;; workGroupScanInLocal(8) @ topDown", "def f : {n: nat} -> n.i32 -> n.i32 = fun xs => scanSeq add 0i32 xs", &[("n", 101)]),
    ("DFNF ; workGroupScanWarps(32) @ outermost(applied(scanSeq))", "def f : 32.i32 -> 32.i32 = fun xs => scanSeq add 0i32 xs", &[]),
    ("DFNF ; workGroupScanWarps(64) @ outermost(applied(scanSeq))", "def f : 192.f32 -> 192.f32 = fun xs => scanSeq (fun x a => max a x) (-inff) xs", &[]),
    ("DFNF ; workGroupScanWarps(96) @ outermost(applied(scanSeq))", "def f : 480.f32 -> 480.f32 = fun xs => scanSeq add 0.0f xs", &[]),
    ("DFNF ; workGroupScanWarps(32) @ outermost(applied(scanSeq))", "def f : 64.u32 -> 64.u32 = fun xs => scanSeq mul 1u32 xs", &[]),
    ("DFNF ; singlePassScan(64, 3) @ outermost(applied(scanSeq)) ;; workGroupScanWarps(64) @ topDown", "def f : {n: nat} -> n.i32 -> n.i32 = fun xs => scanSeq add 7i32 xs", &[("n", 1009)]),
    ("DFNF ; workGroupScanWarpsDirect(32) @ outermost(applied(scanSeq))", "def f : 96.i32 -> 96.i32 = fun xs => scanSeq add 0i32 xs", &[]),
    ("DFNF ; workGroupScanWarpsDirect(64) @ outermost(applied(scanSeq))", "def f : 128.f32 -> 128.f32 = fun xs => xs |> map (fun x => x * 2.0f) |> scanSeq fmax (-inff)", &[]),
    ("DFNF ; singlePassScan(32, 8) @ outermost(applied(scanSeq)) ;; workGroupScanWarpsDirect(32) @ topDown", "def f : {n: nat} -> n.f32 -> n.f32 = fun xs => scanSeq add 0.0f xs", &[("n", 997)]),
];

#[test]
fn every_scan_rule_preserves_meaning_on_random_inputs() {
    common::check_all(SCAN_CASES);
}

/// A scan whose operator is not known to be associative and commutative, or whose neutral
/// element the rule does not know, is refused with the reason (an ordinary failure).
#[test]
fn partial_scan_refuses_other_operators_with_the_reason() {
    let refusals = [
        (
            "def f : {n: nat} -> n.f32 -> n.f32 = fun xs => scanSeq (fun x a => a - x) 0.0f xs",
            "not known to be associative and commutative",
        ),
        (
            "def f : {n: nat} -> n.f32 -> n.f32 = fun xs => scanSeq (fun x a => 0.5f * a + x) 0.0f xs",
            "not known to be associative and commutative",
        ),
        (
            "def f : {n: nat} -> n.u64 -> n.u64 = fun xs => scanSeq min 7u64 xs",
            "no neutral element of `min` on `u64`",
        ),
    ];
    for (program, reason) in refusals {
        let strategy = "DFNF ; partialScan(4) @ outermost(applied(scanSeq))";
        let (failure, why) = common::refusal(program, strategy);
        assert!(
            !failure.is_abort(),
            "an ordinary failure: `<+` may fall back"
        );
        let message = format!("{failure}: {why}");
        assert!(message.contains("partialScan(4)"), "{message}");
        assert!(message.contains(reason), "{program}: {message}");
    }
}

/// `singlePassScan` refuses what `scanTiled` refuses, and elements wider than the 32 value
/// bits of a look-back descriptor, with the reason.
#[test]
fn single_pass_scan_refuses_with_the_reason() {
    let refusals = [
        (
            "def f : {n: nat} -> n.f32 -> n.f32 = fun xs => scanSeq (fun x a => a - x) 0.0f xs",
            "not known to be associative and commutative",
        ),
        (
            "def f : {n: nat} -> n.f64 -> n.f64 = fun xs => scanSeq add 0.0 xs",
            "the value must be a 32-bit scalar",
        ),
        (
            "def f : {n: nat} -> n.i64 -> n.i64 = fun xs => scanSeq add 0i64 xs",
            "the value must be a 32-bit scalar",
        ),
    ];
    for (program, reason) in refusals {
        let strategy = "DFNF ; singlePassScan(256, 8) @ outermost(applied(scanSeq))";
        let (failure, why) = common::refusal(program, strategy);
        assert!(
            !failure.is_abort(),
            "an ordinary failure: `<+` may fall back"
        );
        let message = format!("{failure}: {why}");
        assert!(message.contains("singlePassScan(256, 8)"), "{message}");
        assert!(message.contains(reason), "{program}: {message}");
    }
    let (_, why) = common::refusal(
        "def f : {n: nat} -> n.f32 -> n.f32 = fun xs => scanSeq add 0.0f xs",
        "DFNF ; singlePassScan(512, 32) @ outermost(applied(scanSeq))",
    );
    assert!(why.contains("more than 8192"), "{why}");
}

/// `workGroupScanWarps(b)` refuses work-groups that are no whole number of warps, scans from
/// another value than the neutral element and tiles that are no multiple of `b`, with the
/// reason.
#[test]
fn work_group_scan_warps_refuses_with_the_reason() {
    let refusals = [
        (
            48,
            "def f : 96.i32 -> 96.i32 = fun xs => scanSeq add 0i32 xs",
            "no whole number of warps",
        ),
        (
            2048,
            "def f : 2048.i32 -> 2048.i32 = fun xs => scanSeq add 0i32 xs",
            "no whole number of warps",
        ),
        (
            32,
            "def f : 64.i32 -> 64.i32 = fun xs => scanSeq add 1i32 xs",
            "not the neutral element",
        ),
        (
            32,
            "def f : 48.i32 -> 48.i32 = fun xs => scanSeq add 0i32 xs",
            "not a constant multiple of the 32",
        ),
        (
            32,
            "def f : 64.f32 -> 64.f32 = fun xs => scanSeq (fun x a => a - x) 0.0f xs",
            "not known to be associative",
        ),
    ];
    for (b, program, reason) in refusals {
        let strategy = format!("DFNF ; workGroupScanWarps({b}) @ outermost(applied(scanSeq))");
        let direct = format!("DFNF ; workGroupScanWarpsDirect({b}) @ outermost(applied(scanSeq))");
        let (_, why_direct) = common::refusal(program, &direct);
        assert!(why_direct.contains(reason), "{program}: {why_direct}");
        let (failure, why) = common::refusal(program, &strategy);
        assert!(
            !failure.is_abort(),
            "an ordinary failure: `<+` may fall back"
        );
        let message = format!("{failure}: {why}");
        assert!(
            message.contains(&format!("workGroupScanWarps({b})")),
            "{message}"
        );
        assert!(message.contains(reason), "{program}: {message}");
    }
}

/// A reduction whose operator is not known to be associative and commutative, or
/// whose initial value is not its neutral element, is refused with the reason (an ordinary
/// failure that explains itself, so that `<+` can fall back).
#[test]
fn reduction_rules_refuse_other_operators_with_the_reason() {
    let refusals = [
        (
            "partialReduce(4)",
            "reduce (fun a b => a - b) 0.0f xs",
            "not known to be associative and commutative",
        ),
        (
            "partialReduceStrided(4)",
            "reduce add 1.0f xs",
            "not the neutral element of `add`",
        ),
        (
            "vectorizeReduce(8)",
            "reduce add 0.0f xs",
            "not known to be a multiple of 8 (peel the rest first: peelReduce(8))",
        ),
        (
            "vectorizeReduce(4)",
            "reduce fmax 0.0f xs",
            "not the neutral element of `fmax`",
        ),
        (
            "reduceToWarp",
            "reduce (fun a b => a * b + 1.0f) 1.0f xs",
            "reduceToWarp: the operator",
        ),
    ];
    for (strategy, body, reason) in refusals {
        let program = format!("def f : {{n: nat}} -> n.f32 -> f32 = fun xs => {body}");
        let located = format!("DFNF ; {strategy} @ outermost(appliedReduce)");
        let (failure, why) = common::refusal(&program, &located);
        assert!(
            !failure.is_abort(),
            "an ordinary failure: `<+` may try another strategy"
        );
        let message = format!("{failure}: {why}");
        assert!(
            message.contains(strategy.split('(').next().unwrap_or_default()),
            "{message}"
        );
        assert!(message.contains(reason), "{strategy} on {body}: {message}");
    }
}

/// `treeReduceLet` refuses a `let` whose result is no array (the tree's one result is
/// mapped over and joined), saying so.
#[test]
fn tree_reduce_let_refuses_a_scalar_result() {
    let program = "def f : 8.f32 -> f32 = fun xs => let (reduce add 0.0f xs) (fun s => s * 2.0f)";
    let (failure, why) = common::refusal(program, "DFNF ; treeReduceLet @ outermost(applied(let))");
    assert!(
        why.contains("treeReduceLet: the `let`'s result is no array"),
        "{failure}: {why}"
    );
}

/// The same rules and scheduling functions on programs with sibling sub-terms (two maps
/// under one zip, two reductions side by side) and repeated ones (the same array read
/// twice, the same term twice, a look-alike under a binder that shadows its variable).
const SIBLING_CASES: &[Case] = &[
    ("DFNF ; storeInMemory(isApp(isApp(isMap)), lowerToC) @ argument @ outermost(appliedMap)", "def f : {n: nat} -> n.f32 -> n.f32 -> n.f32 = fun xs ys => zip (map (fun x => x * 2.0f) xs) (map (fun y => y * 3.0f) ys) |> map (fun p => fst p + snd p)", &[("n", 5)]),
    ("DFNF ; storeInMemory(isApp(isApp(isMap)), lowerToC) @ argument @ outermost(appliedMap)", "def f : {n: nat} -> n.f32 -> n.f32 = fun xs => zip (map (fun x => x * 2.0f) xs) (map (fun x => x * 2.0f) xs) |> map (fun p => fst p * snd p)", &[("n", 5)]),
    ("DFNF ; storeInMemory(isApp(isApp(isMap)), lowerToC) @ argument @ outermost(appliedMap)", "def f : {n: nat} -> n.f32 -> n.n.f32 -> n.f32 = fun xs yss => zip (map (fun x => x * 2.0f) xs) (map (fun xs => reduce add 0.0f (map (fun x => x * 2.0f) xs)) yss) |> map (fun p => fst p + snd p)", &[("n", 4)]),
    ("storeInMemory(isApp(isApp(isMap)), lowerToC) @ argument @ outermost(appliedMap)", "def f : {n: nat} -> n.n.f32 -> n.n.f32 = fun xss => map (fun xs => map (fun x => x + 1.0f) (map (fun x => x * 2.0f) xs)) xss", &[("n", 3)]),
    ("betaReduction @ topDown", "def f : {n: nat} -> n.f32 -> n.f32 = fun xs => (fun ys => zip ys ys |> map (fun p => fst p * snd p)) (map (fun x => x + 1.0f) xs)", &[("n", 5)]),
    ("DFNF ; normalize(mapFusion)", "def f : {n: nat} -> n.f32 -> n.f32 = fun xs => zip (map (fun x => x + 1.0f) (map (fun x => x * 3.0f) xs)) (map (fun x => x * 3.0f) xs) |> map (fun p => fst p - snd p)", &[("n", 6)]),
    ("DFNF ; normalize(fuseReduceMap)", "def f : {n: nat} -> n.f32 -> f32 = fun xs => reduce add 0.0f (map (fun x => x * x) xs) + reduce add 1.0f (map (fun x => x + 1.0f) xs)", &[("n", 7)]),
    ("DFNF ; split(2) @ outermost(appliedReduce)", "def f : {n: nat} -> (2*n).f32 -> (2*n).f32 -> f32 = fun xs ys => reduce add 0.0f xs * reduce add 1.0f ys", &[("n", 3)]),
    ("DFNF ; vectorize(4) @ innermost(appliedMap)", "def f : {n: nat} -> n.f32 -> n.f32 = fun xs => zip xs xs |> map (fun p => fst p * snd p - fst p)", &[("n", 8)]),
    ("storeInMemory(appliedReduce, lowerToC) @ outermost(appliedMap)", "def f : {n: nat} -> n.f32 -> n.f32 = fun xs => xs |> map (fun x => x + reduce add 0.0f xs)", &[("n", 4)]),
    ("DFNF ; lowerToC", "def f : {n: nat} -> n.f32 -> n.f32 -> n.f32 = fun xs ys => zip (map (fun x => x * 2.0f) xs) (map (fun y => y * 3.0f) ys) |> map (fun p => fst p + snd p)", &[("n", 5)]),
    ("DFNF ; tile(2, 2) @ outermost(mapNest(2))", "def f : {n: nat} -> n.n.f32 -> n.n.f32 = fun a => map (fun r => map (fun c => reduce add 0.0f (zip r c |> map (fun p => fst p * snd p))) (transpose a)) a", &[("n", 4)]),
    ("DFNF ; reorder([2, 1])", "def f : {n: nat} -> n.f32 -> n.n.f32 = fun xs => map (fun x => map (fun y => x - y) xs) xs", &[("n", 5)]),
    ("DFNF ; parallel @ outermost(isMap) ;; lowerToC", "def f : {n: nat} -> n.f32 -> n.n.f32 = fun xs => map (fun x => map (fun y => x * y) xs) xs", &[("n", 5)]),
];

#[test]
fn rules_preserve_meaning_with_sibling_and_repeated_subterms() {
    common::check_all(SIBLING_CASES);
}

/// `padDotZeros(n)` (crates/rewrite/src/rules/dot_padding.rs): sums of products padded
/// with zeros to a multiple of `n`, mapped or fused (the operator adding the product on
/// either side), of floats, of casts of 16-bit floats, of wrapping integers, at a length
/// below `n`, and followed by `blockReduceZip(n)` (what the padding is for) and by the steps
/// of a tiled matrix product at sizes that no tile divides.
const DOT_PADDING_CASES: &[Case] = &[
    ("DFNF ; padDotZeros(4) @ outermost(appliedReduce)", "def f : {k: nat} -> k.f32 -> k.f32 -> f32 = fun a b => zip a b |> map (fun p => fst p * snd p) |> reduce add 0.0f", &[("k", 7)]),
    ("DFNF ; padDotZeros(16) @ outermost(appliedReduce)", "def f : {k: nat} -> k.f32 -> k.f32 -> f32 = fun a b => zip a b |> map (fun p => snd p * fst p) |> reduce (fun x y => y + x) 0.0f", &[("k", 1)]),
    ("DFNF ; padDotZeros(4) @ outermost(appliedReduce)", "def f : {k: nat} -> k.f16 -> k.f16 -> f32 = fun a b => zip a b |> map (fun p => (cast (fst p) : f32) * (cast (snd p) : f32)) |> reduce add 0.0f", &[("k", 5)]),
    ("DFNF ; padDotZeros(3) @ outermost(appliedReduce)", "def f : {k: nat} -> k.i32 -> k.i32 -> i32 = fun a b => zip a b |> reduceSeq (fun s p => fst p * snd p + s) 0i32", &[("k", 10)]),
    ("DFNF ; fuseReduceMap @ topDown ;; padDotZeros(4) @ outermost(appliedReduce) ;; blockReduceZip(4) @ outermost(appliedReduce)", "def f : {k: nat} -> k.f32 -> k.f32 -> f32 = fun a b => zip a b |> map (fun p => fst p * snd p) |> reduce add 0.0f", &[("k", 13)]),
    ("DFNF ; padMap(4) @ outermost(appliedMap) @ body @ argument @ function @ outermost(appliedMap) ;; layoutFission @ outermost(appliedMap) ;; padMap(4) @ argument @ outermost(appliedMap) ;; padDotZeros(2) @ outermost(appliedReduce) ;; fuseReduceMap @ topDown ;; tile(4, 4) @ outermost(mapNest(2)) ;; blockReduceZip(2) @ atLoop(4) ;; reduceOuter @ atLoop(2)", "def f : {m n k: nat} -> m.k.f32 -> k.n.f32 -> m.n.f32 = fun a b => map (fun r => map (fun c => zip r c |> map (fun p => fst p * snd p) |> reduce add 0.0f) (transpose b)) a", &[("m", 5), ("n", 3), ("k", 7)]),
];

#[test]
fn dot_padding_preserves_meaning_on_random_inputs() {
    common::check_all(DOT_PADDING_CASES);
}

/// `padDotZeros(4)` refuses, with the reason, every reduction over a zip that the products
/// of zeros could change: a maximum of sums (a `max`-plus product), a product with an `exp`
/// inside, a sum from another initial value (`1`, or `-0`, which `+0` would turn into `+0`),
/// a difference; an ordinary failure, so that the next default schedule is tried. At a
/// length it knows to be a multiple of 4 it pads nothing and leaves any reduction as it is.
#[test]
fn dot_padding_refuses_what_zeros_could_change_with_the_reason() {
    let refusals = [
        (
            "zip a b |> map (fun p => fst p + snd p) |> reduce max (-inff)",
            "not a sum of products",
        ),
        (
            "zip a b |> map (fun p => exp (fst p) * snd p) |> reduce add 0.0f",
            "not a sum of products",
        ),
        (
            "zip a b |> map (fun p => fst p * snd p) |> reduce add 1.0f",
            "is not the literal zero",
        ),
        (
            "zip a b |> map (fun p => fst p * snd p) |> reduce add (-0.0f)",
            "is not the literal zero",
        ),
        (
            "zip a b |> reduceSeq (fun s p => s - fst p * snd p) 0.0f",
            "not a sum of products",
        ),
        (
            "zip a b |> reduceSeq (fun s p => s + fst p * s) 0.0f",
            "not a sum of products",
        ),
    ];
    let registry = rewrite::library::registry();
    let module = elv::load("", &registry).expect("the empty file loads");
    let run = |strategy: &str, program: &str| {
        let s = module.expression(strategy).expect("the strategy parses");
        let checked = rise::infer::check_source(program).expect("the program checks");
        let p = rise::infer::prepare_def(&checked, "f").expect("f is defined");
        let mut ctx = elevate::Ctx::new(rise::NameGen::avoiding(&p.body));
        ctx.run(&s, &p.body)
    };
    let pad = "DFNF ; padDotZeros(4) @ outermost(appliedReduce)";
    for (body, reason) in refusals {
        let program = format!("def f : {{k: nat}} -> k.f32 -> k.f32 -> f32 = fun a b => {body}");
        let (failure, why) = common::refusal(&program, pad);
        assert!(
            !failure.is_abort(),
            "an ordinary failure: `<+` may fall back"
        );
        let message = format!("{failure}: {why}");
        assert!(message.contains("padDotZeros(4)"), "{message}");
        assert!(message.contains(reason), "{body}: {message}");
    }
    let whole = "def f : 8.f32 -> 8.f32 -> f32 = fun a b => zip a b |> map (fun p => fst p + snd p) |> reduce max (-inff)";
    let out = run(pad, whole).expect("nothing to pad");
    let before = run("DFNF", whole).expect("DFNF applies");
    assert!(out.alpha_eq(&before), "{out}");
}

/// Every row of the rule table applies in some case above (which checks its meaning).
#[test]
fn every_rule_has_a_case() {
    let all = [
        CASES,
        GPU_CASES,
        DOT_PADDING_CASES,
        REDUCTION_CASES,
        SIBLING_CASES,
        SHARING_CASES,
        LANE_CASES,
        GROUP_CASES,
        SCAN_CASES,
        TENSOR_CASES,
        REFINE_CASES,
    ]
    .concat();
    let applied = common::rules_applied(&all);
    let uncovered: Vec<String> = rewrite::rules::RULES
        .iter()
        .filter(|r| !applied.contains(r.name))
        .map(|r| r.signature())
        .collect();
    assert!(
        uncovered.is_empty(),
        "rules that no case in tests/rules.rs applies: {}",
        uncovered.join(", ")
    );
}

/// A refusal is not an abort: `partialReduce(4) <+ id` keeps a reduction it cannot
/// reassociate as it is.
#[test]
fn a_refused_reduction_falls_back_with_left_choice() {
    let registry = rewrite::library::registry();
    let module = elv::load("", &registry).expect("the empty file loads");
    let program = "def f : {n: nat} -> n.f32 -> f32 = fun xs => reduce (fun a b => a - b) 0.0f xs";
    let checked = rise::infer::check_source(program).expect("the program checks");
    let p = rise::infer::prepare_def(&checked, "f").expect("f is defined");
    let s = module
        .expression("DFNF ; (partialReduce(4) <+ id) @ outermost(appliedReduce)")
        .expect("the strategy parses");
    let mut ctx = elevate::Ctx::new(rise::NameGen::avoiding(&p.body));
    let kept = ctx.run(&s, &p.body).expect("the fallback applies");
    assert!(!kept.to_string().contains("split"), "{kept}");
}

/// The rules that compute a value once (crates/rewrite/src/rules/sharing.rs): a row's
/// reduction bound outside the map over the row, a value computed twice bound once, an
/// array read twice stored; at sizes 1 and more.
const SHARING_CASES: &[Case] = &[
    ("DFNF ; hoistInvariant @ topDown", "def f : {m n: nat} -> m.n.f32 -> m.n.f32 = fun xs => map (fun row => map (fun x => x / reduce add 0.0f row) row) xs", &[("m", 3), ("n", 5)]),
    ("DFNF ; normalize(hoistInvariant)", "def f : {m n: nat} -> m.n.f32 -> m.n.f32 = fun xs => map (fun row => map (fun x => (x - reduce fmax (-inff) row) * rsqrt (reduce add 1.0f (map (fun y => y * y) row) / (cast n : f32))) row) xs", &[("m", 2), ("n", 1)]),
    ("DFNF ; normalize(hoistInvariant)", "def f : {n m: nat} -> n.f32 -> m.f32 -> n.m.f32 = fun xs ys => map (fun x => map (fun y => x * y + reduce add 0.0f ys) ys) xs", &[("n", 3), ("m", 4)]),
    ("DFNF ; normalize(shareRepeated)", "def f : {n: nat} -> n.f32 -> n.f32 = fun xs => zip (map (fun x => exp x) xs) (map (fun x => exp x) xs) |> map (fun p => fst p * snd p)", &[("n", 5)]),
    ("DFNF ; normalize(shareRepeated)", "def f : {m n: nat} -> m.n.f32 -> m.f32 = fun xs => map (fun row => reduce add 0.0f row * reduce add 0.0f row - reduce add 0.0f (map (fun x => x * x) row)) xs", &[("m", 3), ("n", 4)]),
    ("DFNF ; normalize(storeShared)", "def f : {n: nat} -> n.f32 -> n.f32 = fun xs => let (map (fun x => exp x) xs) (fun es => map (fun e => e / reduce add 0.0f es) es)", &[("n", 6)]),
    ("DFNF ; normalize(hoistInvariant) ; normalize(shareRepeated) ; normalize(storeShared) ; lowerToC", "def f : {m n: nat} -> m.n.f32 -> m.n.f32 = fun xs => map (fun row => map (fun e => e / reduce add 0.0f (map (fun x => exp (x - reduce fmax (-inff) row)) row)) (map (fun x => exp (x - reduce fmax (-inff) row)) row)) xs", &[("m", 2), ("n", 7)]),
];

/// The rules that keep a warp's row in its lanes (crates/rewrite/src/rules/lanes.rs): the
/// row copied as `32.k` and read back, maps over the lanes' rows, stored arrays kept by the
/// lanes; rows of 32 and 224 elements (k = 1 and the prime 7).
const LANE_CASES: &[Case] = &[
    ("DFNF ; laneRegisters @ argument @ function @ outermost(appliedMap)", "def f : {m: nat} -> m.224.f32 -> m.f32 = fun xs => map (fun row => reduce add 0.0f (map (fun x => x * x) row) + reduce fmax (-inff) row) xs", &[("m", 3)]),
    ("DFNF ; laneRegisters @ argument @ function @ outermost(appliedMap) ; laneRows @ topDown", "def f : {m: nat} -> m.32.f32 -> m.32.f32 = fun xs => map (fun row => mapLane (fun x => x * 2.0f) row) xs", &[("m", 2)]),
    ("DFNF ; laneRegisters @ argument @ function @ outermost(appliedMap) ; laneRows @ topDown ; storeByLanes @ topDown", "def f : {m: nat} -> m.224.f32 -> m.224.f32 = fun xs => map (fun row => toMem global (let (reduce fmax (-inff) row) (fun h => mapLane (fun x => exp (x - h)) row)) (fun es => map (fun e => e / reduce add 0.0f es) es)) xs", &[("m", 3)]),
];

#[test]
fn lane_rules_preserve_meaning_on_random_inputs() {
    common::check_all(LANE_CASES);
}

/// The rules that keep a work-group's row in its work-items' registers
/// (crates/rewrite/src/rules/lanes.rs, and groupReduceLet in reduction.rs): the row copied
/// as `(b/32).32.k` and read back, maps over the work-items' rows, stored arrays kept by
/// them, a `let`'s reduction by the work-group's warps; work-groups of one, two and three
/// warps (b = 96: the warps' results padded to 32) and of 32 (none padded), rows of one
/// element per work-item and of the prime 7, rows shorter than the work-group and not a
/// multiple of it (padded).
const GROUP_CASES: &[Case] = &[
    ("DFNF ; groupRegisters(32) @ argument @ function @ outermost(appliedMap)", "def f : {m: nat} -> m.64.f32 -> m.f32 = fun xs => map (fun row => reduce add 0.0f (map (fun x => x * x) row) + reduce fmax (-inff) row) xs", &[("m", 3)]),
    ("DFNF ; groupRegisters(96) @ argument @ function @ outermost(appliedMap)", "def f : {m: nat} -> m.96.f32 -> m.96.f32 = fun xs => map (fun row => map (fun x => x - reduce add 0.0f row) row) xs", &[("m", 1)]),
    ("DFNF ; groupRegisters(64) @ argument @ function @ outermost(appliedMap) ; groupRows @ topDown", "def f : {m: nat} -> m.448.f32 -> m.448.f32 = fun xs => map (fun row => mapLocal(0) (fun x => x * 2.0f) row) xs", &[("m", 2)]),
    ("DFNF ; groupRegisters(96) @ argument @ function @ outermost(appliedMap) ; groupRows @ topDown ; storeByGroup @ topDown", "def f : {m: nat} -> m.672.f32 -> m.672.f32 = fun xs => map (fun row => toMem global (let (reduce fmax (-inff) row) (fun h => mapLocal(0) (fun x => exp (x - h)) row)) (fun es => map (fun e => e / reduce add 0.0f es) es)) xs", &[("m", 3)]),
    ("DFNF ; groupReduceLet(64) @ outermost(applied(let))", "def f : {m n: nat} -> m.n.f32 -> m.n.f32 = fun xs => map (fun r => let (reduce fmax (-inff) r + 1.0f) (fun h => map (fun x => x - h) r)) xs", &[("m", 3), ("n", 45)]),
    ("DFNF ; groupReduceLet(96) @ outermost(applied(let))", "def f : {n: nat} -> n.f32 -> n.f32 = fun xs => let (reduce add 0.0f (map (fun x => x * x) xs) / 3.0f) (fun s => map (fun x => x / s) xs)", &[("n", 1)]),
    ("DFNF ; groupReduceLet(1024) @ outermost(applied(let))", "def f : {n: nat} -> n.f32 -> n.f32 = fun xs => let (reduce add 0.0f xs) (fun s => map (fun x => x - s) xs)", &[("n", 2053)]),
    ("DFNF ; groupReduceLet(32) @ outermost(applied(let))", "def f : 64.i32 -> i32 = fun xs => let (reduce min 2147483647i32 xs) (fun s => s + 1i32)", &[]),
];

#[test]
fn group_rules_preserve_meaning_on_random_inputs() {
    common::check_all(GROUP_CASES);
}

/// `groupRegisters(b)` refuses a row whose length is not a constant multiple of b (at
/// most 64·b), and a work-group that is not whole warps of at most 1024 work-items, with
/// the reason; `groupReduceLet(b)` the same work-groups.
#[test]
fn group_rules_refuse_other_rows_and_work_groups_with_the_reason() {
    let registers = "DFNF ; groupRegisters(B) @ argument @ function @ outermost(appliedMap)";
    for (row, b, reason) in [
        ("n", 32, "not a constant multiple of 32 of at most 2048"),
        ("100", 32, "not a constant multiple of 32"),
        ("4096", 32, "not a constant multiple of 32 of at most 2048"),
        ("96", 48, "not a whole number of warps"),
        ("4096", 2048, "not a whole number of warps"),
    ] {
        let program = format!(
            "def f : {{n: nat}} -> 3.{row}.f32 -> 3.f32 = fun xs => map (fun r => reduce add 0.0f r) xs"
        );
        let strategy = registers.replace('B', &b.to_string());
        let (failure, why) = common::refusal(&program, &strategy);
        assert!(
            why.contains(&format!("groupRegisters({b})")) && why.contains(reason),
            "{row} {b}: {failure}: {why}"
        );
    }
    let program = "def f : {n: nat} -> n.f32 -> n.f32 = fun xs => let (reduce add 0.0f xs) (fun s => map (fun x => x - s) xs)";
    for b in [16, 48, 2048] {
        let strategy = format!("DFNF ; groupReduceLet({b}) @ outermost(applied(let))");
        let (failure, why) = common::refusal(program, &strategy);
        assert!(
            why.contains(&format!("groupReduceLet({b})"))
                && why.contains("not a whole number of warps"),
            "{b}: {failure}: {why}"
        );
    }
}

/// `laneRegisters` refuses a row whose length is not a constant multiple of 32 (at most
/// 2048), with the reason.
#[test]
fn lane_registers_refuses_other_rows_with_the_reason() {
    for row in ["n", "33", "4096"] {
        let program = format!(
            "def f : {{n: nat}} -> 3.{row}.f32 -> 3.f32 = fun xs => map (fun r => reduce add 0.0f r) xs"
        );
        let strategy = "DFNF ; laneRegisters @ argument @ function @ outermost(appliedMap)";
        let (failure, why) = common::refusal(&program, strategy);
        assert!(
            why.contains("laneRegisters") && why.contains("not a constant multiple of 32"),
            "{row}: {failure}: {why}"
        );
    }
}

#[test]
fn sharing_rules_preserve_meaning_on_random_inputs() {
    common::check_all(SHARING_CASES);
}

/// The sharing rules leave alone what they must not move: a value that can fail (an
/// integer division, a cast to an integer, a foreign call), which computed ahead of need
/// would stop a program that gives a result; a value that depends on the mapped element;
/// an array nobody reads twice; a view.
#[test]
fn default_schedule_rules_refuse_what_they_must_not_touch() {
    let refusals = [
        ("hoistInvariant", "def f : {n: nat} -> n.int -> n.int -> n.int = fun xs ys => map (fun x => select (x > 0) (x / reduce (fun a b => a / b) 1 ys) 0) xs"),
        ("hoistInvariant", "def f : {n: nat} -> n.int -> n.int -> n.int = fun xs ys => map (fun x => x + reduce add 0 (map (fun y => 7 / y) ys)) xs"),
        ("hoistInvariant", "def f : {n: nat} -> n.f32 -> n.f32 -> n.i32 = fun xs ys => map (fun x => reduce add 0i32 (map (fun y => (cast y : i32)) ys)) xs"),
        ("hoistInvariant", "def f : {n: nat} -> n.f32 -> n.f32 = fun xs => map (fun x => reduce add x xs) xs"),
        ("hoistInvariant", "def f : {n: nat} -> n.f32 -> n.n.f32 = fun xs => map (fun x => map (fun y => y * 2.0f) xs) xs"),
        ("shareRepeated", "def f : {n: nat} -> n.int -> int = fun xs => reduce add 0 (map (fun x => 7 / x) xs) + reduce add 0 (map (fun x => 7 / x) xs)"),
        ("shareRepeated", "def f : {n: nat} -> n.f32 -> n.f32 = fun xs => zip (take n xs) (take n xs) |> map (fun p => fst p + snd p)"),
        ("storeShared", "def f : {n: nat} -> n.f32 -> n.f32 = fun xs => let (map (fun x => exp x) xs) (fun es => map (fun e => e * 2.0f) es)"),
        ("storeShared", "def f : {n: nat} -> n.f32 -> n.f32 = fun xs => let (take n xs) (fun ys => zip ys ys |> map (fun p => fst p * snd p))"),
        // rows padded, not their elements: a column stencil's inner reads need no clamp
        ("storePadded", "def f : {n m: nat} -> n.m.f32 -> n.m.f32 = fun g => g |> padClamp 1 1 |> slide 3 1 |> map (fun rows => transpose rows |> map (fun c => reduce add 0.0f c))"),
        // elements that are pairs: no copy of scalars
        ("storePadded", "def f : {n: nat} -> n.f32 -> n.f32 -> n.f32 = fun a b => zip a b |> padClamp 1 1 |> slide 3 1 |> map (fun w => reduceSeq (fun s p => s + fst p * snd p) 0.0f w)"),
        // a window of 33 elements is no short reduction
        ("unrollShort(32)", "def f : {n: nat} -> n.33.f32 -> n.f32 = fun xs => map (fun r => reduce add 0.0f r) xs"),
    ];
    let registry = rewrite::library::registry();
    let module = elv::load("", &registry).expect("the empty file loads");
    for (rule, program) in refusals {
        let checked = rise::infer::check_source(program).expect("the program checks");
        let p = rise::infer::prepare_def(&checked, "f").expect("f is defined");
        let s = module
            .expression(&format!("DFNF ; {rule} @ topDown"))
            .expect("the strategy parses");
        let mut ctx = elevate::Ctx::new(rise::NameGen::avoiding(&p.body));
        let result = ctx.run(&s, &p.body);
        assert!(
            result.is_err(),
            "{rule} applied to {program}: {}",
            result.map(|e| e.to_string()).unwrap_or_default()
        );
    }
}

/// `vectorizeReduce(v)` after `peelReduce(v)`, alone or in `p` chunks
/// (`partialReduce(p)` after `peelReduce(p*v)`, the CPU strategies of
/// examples/reduce.elv), keeps the interpreter's result at any length, for sums
/// (within the tolerance) and minima and maxima (exactly), on random inputs.
mod vectorize_reduce_property {
    use proptest::prelude::*;

    const OPERATORS: &[(&str, &str)] = &[
        ("add", "0.0f"),
        ("fmax", "(-inff)"),
        ("fmin", "inff"),
        ("(fun a b => a + b)", "0.0f"),
    ];

    fn strategy(p: i64, v: i64) -> String {
        if p == 1 {
            return format!(
                "DFNF ; (peelReduce({v}) ; vectorizeReduce({v}) @ argument @ function) @ outermost(appliedReduce)"
            );
        }
        format!(
            "DFNF ; (peelReduce({pv}) ; (partialReduce({p}) ; vectorizeReduce({v}) @ body @ argument @ function @ argument) @ argument @ function) @ outermost(appliedReduce)",
            pv = p * v
        )
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(32))]
        #[test]
        fn keeps_the_result_at_any_length(
            op in 0..OPERATORS.len(),
            v in prop::sample::select(vec![2i64, 4, 8, 16]),
            p in 1i64..5,
            n in 1i64..200,
            seed in 1u64..1000,
        ) {
            let (f, z) = OPERATORS[op];
            let program =
                format!("def f : {{n: nat}} -> n.f32 -> f32 = fun xs => reduce {f} {z} (map abs xs)");
            let checked = rise::infer::check_source(&program).expect("the program checks");
            let def = rise::infer::prepare_def(&checked, "f").expect("f is defined");
            let registry = rewrite::library::registry();
            let module = elv::load("", &registry).expect("the empty file loads");
            let s = module.expression(&strategy(p, v)).expect("the strategy parses");
            let mut ctx = elevate::Ctx::new(rise::NameGen::avoiding(&def.body));
            let out = ctx.run(&s, &def.body).expect("the strategy applies");
            let same = rewrite::check::same_results(&def.body, &out, &def.scheme, &[("n", n)], seed);
            prop_assert!(same.is_ok(), "{}: {:?}\nafter: {}", strategy(p, v), same, out);
        }
    }
}

/// `partialScan(p)` keeps the interpreter's inclusive and exclusive scans at any length and
/// any number of chunks: integer sums exactly, float sums within the tolerance, maxima
/// exactly, on random inputs.
mod partial_scan_property {
    use proptest::prelude::*;

    const SCANS: &[&str] = &[
        "scanSeq (fun x a => a + x) 0i32 xs",
        "xs |> padCst 1 0 0i32 |> take n |> scanSeq add 0i32",
        "scanSeq add 3i32 xs",
        "scanSeq max (-2147483648i32) xs",
        "map (fun x => (cast x : f32) * 0.5f) xs |> scanSeq add 0.0f",
    ];

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(32))]
        #[test]
        fn keeps_the_result_at_any_length(
            scan in 0..SCANS.len(),
            p in 1i64..40,
            n in 1i64..300,
            seed in 1u64..1000,
        ) {
            let program = format!(
                "def f : {{n: nat}} -> n.i32 -> n.{} = fun xs => {}",
                if SCANS[scan].contains("f32") { "f32" } else { "i32" },
                SCANS[scan]
            );
            let checked = rise::infer::check_source(&program).expect("the program checks");
            let def = rise::infer::prepare_def(&checked, "f").expect("f is defined");
            let registry = rewrite::library::registry();
            let module = elv::load("", &registry).expect("the empty file loads");
            let strategy = format!("DFNF ; partialScan({p}) @ outermost(applied(scanSeq))");
            let s = module.expression(&strategy).expect("the strategy parses");
            let mut ctx = elevate::Ctx::new(rise::NameGen::avoiding(&def.body));
            let out = ctx.run(&s, &def.body).expect("the strategy applies");
            let same = rewrite::check::same_results(&def.body, &out, &def.scheme, &[("n", n)], seed);
            prop_assert!(same.is_ok(), "{strategy} on {program}: {same:?}\nafter: {out}");
        }
    }
}

/// `singlePassScan(b, k)` then `workGroupScanInLocal(b)` (as `scanLookback` in
/// examples/gpu.elv does) or `workGroupScan(b)` keep the interpreter's inclusive and
/// exclusive scans at any length and tile shape: integer sums and maxima exactly, float sums
/// within the tolerance, on random inputs.
mod single_pass_scan_property {
    use proptest::prelude::*;

    const SCANS: &[&str] = &[
        "scanSeq (fun x a => a + x) 0i32 xs",
        "xs |> padCst 1 0 0i32 |> take n |> scanSeq add 0i32",
        "scanSeq add 3i32 xs",
        "scanSeq max (-2147483648i32) xs",
        "map (fun x => (cast x : f32) * 0.5f) xs |> scanSeq add 0.0f",
    ];

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(32))]
        #[test]
        fn keeps_the_result_at_any_length(
            scan in 0..SCANS.len(),
            b in prop_oneof![1i64..12, Just(32i64), Just(64i64)],
            k in 1i64..5,
            n in 1i64..200,
            seed in 1u64..1000,
            in_local in proptest::bool::ANY,
        ) {
            let program = format!(
                "def f : {{n: nat}} -> n.i32 -> n.{} = fun xs => {}",
                if SCANS[scan].contains("f32") { "f32" } else { "i32" },
                SCANS[scan]
            );
            let checked = rise::infer::check_source(&program).expect("the program checks");
            let def = rise::infer::prepare_def(&checked, "f").expect("f is defined");
            let registry = rewrite::library::registry();
            let module = elv::load("", &registry).expect("the empty file loads");
            let tile_scan = if in_local { "workGroupScanInLocal" } else { "workGroupScan" };
            let strategy = format!(
                "DFNF ; singlePassScan({b}, {k}) @ outermost(applied(scanSeq)) ;; \
                 {tile_scan}({b}) @ topDown"
            );
            let s = module.expression(&strategy).expect("the strategy parses");
            let mut ctx = elevate::Ctx::new(rise::NameGen::avoiding(&def.body));
            let out = ctx.run(&s, &def.body).expect("the strategy applies");
            let same = rewrite::check::same_results(&def.body, &out, &def.scheme, &[("n", n)], seed);
            prop_assert!(same.is_ok(), "{strategy} on {program}: {same:?}\nafter: {out}");
        }
    }
}

/// `singlePassScan(b, k)` then `workGroupScanWarps(b)` or `workGroupScanWarpsDirect(b)` (as
/// `scanLookbackWarp` and `scanLookbackWarpDirect` in examples/gpu.elv do) keep the
/// interpreter's inclusive and exclusive scans at any length and tile shape (one warp or
/// several, k odd and even: the plain and the xor layout), on random inputs: integer sums
/// and maxima exactly, float sums within the tolerance.
mod warp_scan_property {
    use proptest::prelude::*;

    const SCANS: &[&str] = &[
        "scanSeq (fun x a => a + x) 0i32 xs",
        "xs |> padCst 1 0 0i32 |> take n |> scanSeq add 0i32",
        "scanSeq add 3i32 xs",
        "scanSeq max (-2147483648i32) xs",
        "map (fun x => (cast x : f32) * 0.5f) xs |> scanSeq add 0.0f",
    ];

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(24))]
        #[test]
        fn keeps_the_result_at_any_length(
            scan in 0..SCANS.len(),
            b in prop_oneof![Just(32i64), Just(64i64), Just(96i64), Just(256i64)],
            k in 1i64..5,
            n in 1i64..700,
            seed in 1u64..1000,
            direct in proptest::bool::ANY,
        ) {
            let program = format!(
                "def f : {{n: nat}} -> n.i32 -> n.{} = fun xs => {}",
                if SCANS[scan].contains("f32") { "f32" } else { "i32" },
                SCANS[scan]
            );
            let checked = rise::infer::check_source(&program).expect("the program checks");
            let def = rise::infer::prepare_def(&checked, "f").expect("f is defined");
            let registry = rewrite::library::registry();
            let module = elv::load("", &registry).expect("the empty file loads");
            let tile_scan = if direct { "workGroupScanWarpsDirect" } else { "workGroupScanWarps" };
            let strategy = format!(
                "DFNF ; singlePassScan({b}, {k}) @ outermost(applied(scanSeq)) ;; \
                 {tile_scan}({b}) @ topDown"
            );
            let s = module.expression(&strategy).expect("the strategy parses");
            let mut ctx = elevate::Ctx::new(rise::NameGen::avoiding(&def.body));
            let out = ctx.run(&s, &def.body).expect("the strategy applies");
            prop_assert!(out.to_string().contains("scanWarp"), "{out}");
            let same = rewrite::check::same_results(&def.body, &out, &def.scheme, &[("n", n)], seed);
            prop_assert!(same.is_ok(), "{strategy} on {program}: {same:?}\nafter: {out}");
        }
    }
}

/// `scanTiled(b, k)` then `workGroupScan(b)`, with the tiles' totals scanned by
/// `scanTiled(b, k)` and `workGroupScan(b)` again (as `scanTiles` in examples/gpu.elv does),
/// keep the interpreter's inclusive and exclusive scans at any length and any tile shape (the
/// work-group's Hillis-Steele steps for any number of work-items, a power of two or not; the
/// tile in local memory in the plain and in the xor layout): integer sums exactly, maxima
/// exactly, float sums within the tolerance, on random inputs.
mod tiled_scan_property {
    use proptest::prelude::*;

    const SCANS: &[&str] = &[
        "scanSeq (fun x a => a + x) 0i32 xs",
        "xs |> padCst 1 0 0i32 |> take n |> scanSeq add 0i32",
        "scanSeq add 3i32 xs",
        "scanSeq max (-2147483648i32) xs",
        "map (fun x => (cast x : f32) * 0.5f) xs |> scanSeq add 0.0f",
    ];

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(32))]
        #[test]
        fn keeps_the_result_at_any_length(
            scan in 0..SCANS.len(),
            b in prop_oneof![1i64..12, Just(32i64), Just(64i64)],
            k in 1i64..5,
            n in 1i64..200,
            seed in 1u64..1000,
        ) {
            let program = format!(
                "def f : {{n: nat}} -> n.i32 -> n.{} = fun xs => {}",
                if SCANS[scan].contains("f32") { "f32" } else { "i32" },
                SCANS[scan]
            );
            let checked = rise::infer::check_source(&program).expect("the program checks");
            let def = rise::infer::prepare_def(&checked, "f").expect("f is defined");
            let registry = rewrite::library::registry();
            let module = elv::load("", &registry).expect("the empty file loads");
            let strategy = format!(
                "DFNF ; scanTiled({b}, {k}) @ outermost(applied(scanSeq)) ;; \
                 scanTiled({b}, {k}) @ argument @ function @ body @ argument @ outermost(applied(let)) ;; \
                 workGroupScan({b}) @ topDown ;; workGroupScan({b}) @ topDown"
            );
            let s = module.expression(&strategy).expect("the strategy parses");
            let mut ctx = elevate::Ctx::new(rise::NameGen::avoiding(&def.body));
            let out = ctx.run(&s, &def.body).expect("the strategy applies");
            let same = rewrite::check::same_results(&def.body, &out, &def.scheme, &[("n", n)], seed);
            prop_assert!(same.is_ok(), "{strategy} on {program}: {same:?}\nafter: {out}");
        }
    }
}

/// `slideInward` and `toSlideSeq`, alone and as gpu.elv's `streamColumns` then `toSlideSeq`
/// (`stream3d`'s derivation), keep the interpreter's results of 3-D stencils padded and slid
/// as heat3d is, at any sizes (1 included, each independent of the others), window sizes
/// and steps, on random inputs.
mod stream_property {
    use proptest::prelude::*;

    /// (program, strategy): 3-D stencils with windows of 3 and of 5 (padded by 1 and 2),
    /// a plain slide by 1 and by 2.
    const CASES: &[(&str, &str)] = &[
        (
            "def f : {o n m: nat} -> o.n.m.f32 -> o.n.m.f32 = fun g => g |> padClamp3 1 1 |> slide3 3 1 |> map3 (fun c => 0.125f * (at 1 (at 1 (at 0 c)) + at 1 (at 1 (at 2 c)) + at 1 (at 0 (at 1 c)) + at 1 (at 2 (at 1 c)) + at 0 (at 1 (at 1 c)) + at 2 (at 1 (at 1 c))) + 0.25f * at 1 (at 1 (at 1 c)))",
            "DFNF ; repeat(mapFusion @ topDown ; DFNF) ; slideInward @ topDown ;; slideInward @ topDown ;; toSlideSeq @ topDown",
        ),
        (
            "def f : {o n m: nat} -> o.n.m.f32 -> o.n.m.f32 = fun g => g |> padClamp3 2 2 |> slide3 5 1 |> map3 (fun c => at 0 (at 2 (at 2 c)) - 0.5f * at 4 (at 2 (at 2 c)) + at 2 (at 0 (at 2 c)) * at 2 (at 4 (at 2 c)) + at 2 (at 2 (at 0 c)) + at 2 (at 2 (at 4 c)) + at 3 (at 1 (at 2 c)))",
            "DFNF ; repeat(mapFusion @ topDown ; DFNF) ; slideInward @ topDown ;; slideInward @ topDown ;; toSlideSeq @ topDown",
        ),
        (
            "def f : {o n m: nat} -> (o+2).n.m.f32 -> o.m.f32 = fun xs => xs |> slide 3 1 |> map (fun w => map (fun r => reduce add 0.0f (join r)) (transpose (map transpose w)))",
            "DFNF ; slideInward @ topDown ;; toSlideSeq @ topDown",
        ),
        (
            "def f : {o n m: nat} -> (2*o+3).n.m.f32 -> (o+1).n.m.f32 = fun xs => xs |> slide 3 2 |> map (fun w => map (fun r => map (fun c => reduce add 0.0f c) (transpose r)) (transpose w))",
            "DFNF ; slideInward @ topDown",
        ),
        // stream3dVec's derivation: m is 4 times the size drawn
        (
            "def f : {o n m: nat} -> o.n.(m*4).f32 -> o.n.(m*4).f32 = fun g => g |> padClamp3 1 1 |> slide3 3 1 |> map3 (fun c => 0.161f * at 2 (at 1 (at 1 c)) + 0.162f * at 0 (at 1 (at 1 c)) + 0.163f * at 1 (at 2 (at 1 c)) + 0.164f * at 1 (at 0 (at 1 c)) + 0.165f * at 1 (at 1 (at 2 c)) + 0.166f * at 1 (at 1 (at 0 c)) - 1.67f * at 1 (at 1 (at 1 c)))",
            "DFNF ; repeat(mapFusion @ topDown ; DFNF) ; slideInward @ topDown ;; slideInward @ topDown ;; vectorizeColumns(4) @ topDown ;; toSlideSeq @ topDown",
        ),
    ];

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(40))]
        #[test]
        fn keeps_the_result_at_any_size(
            case in 0..CASES.len(),
            o in 1i64..9,
            n in 1i64..8,
            m in 1i64..8,
            seed in 1u64..1000,
        ) {
            let (program, strategy) = CASES[case];
            let checked = rise::infer::check_source(program).expect("the program checks");
            let def = rise::infer::prepare_def(&checked, "f").expect("f is defined");
            let registry = rewrite::library::registry();
            let module = elv::load("", &registry).expect("the empty file loads");
            let s = module.expression(strategy).expect("the strategy parses");
            let mut ctx = elevate::Ctx::new(rise::NameGen::avoiding(&def.body));
            let out = ctx.run(&s, &def.body).expect("the strategy applies");
            prop_assert!(!out.alpha_eq(&def.body));
            let sizes = [("o", o), ("n", n), ("m", m)];
            let same = rewrite::check::same_results(&def.body, &out, &def.scheme, &sizes, seed);
            prop_assert!(same.is_ok(), "{strategy} on {program}: {same:?}\nafter: {out}");
        }
    }
}
