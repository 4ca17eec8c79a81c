//! The rewrite rules, one row each in [`RULES`]: the name a strategy file calls
//! it by, its parameters, its equation and the module that implements it,
//! grouped by the paper section it comes from. The public constructors
//! ([`map_fusion`], [`split_join`], ...), their docs and the `.elv` registry
//! ([`crate::library`]) are all made from these rows, so a rule's name and
//! equation are written once. Every row has a case in `tests/rules.rs` that
//! applies it and compares the interpreter's results before and after; a test
//! there fails naming any rule without one.
//!
//! Left-hand sides are matched on typed terms, right-hand sides are built as
//! templates and typed by [`crate::term::finish`]. A purely structural rule is a
//! `pattern` row: its equation, in RISE syntax, is the rule ([`crate::pattern`]:
//! `map` there stands for any kind of map, `map'` for a second one). The others
//! match and build in Rust, with the builder DSL.
//!
//! Adding a rule: a row here; unless it is a pattern, a function in the
//! implementing module taking the rule's printed name first and its parameters
//! after, returning the strategy (usually through [`rise_rule`]); a case in
//! `tests/rules.rs`.

#[macro_use]
mod table;
mod algorithmic;
mod dot_padding;
mod gpu;
mod lambda;
mod lanes;
mod lowering;
mod movement;
mod reduction;
mod refine;
mod scan;
mod sharing;
mod stencil;
mod tensor;

use table::{next_arg, printed_name};
pub use table::{Dim, Param, RuleInfo, Size, Space, Strat};

use crate::term::finish;
use crate::S;
use elevate::{rule, Failure};
use rise::{Expr, NameGen};

rules_table! {
    "β and η (ICFP'20 §4.8)" in lambda {
        betaReduction = beta_reduction(): "(fun x => b) a ↦ b[a/x]   (capture-avoiding; likewise a dependent lambda applied to a type-level value)",
        etaReduction = eta_reduction(): "fun x => f x ↦ f   (x ∉ fv(f))",
        etaAbstraction = eta_abstraction(): "f ↦ fun x => f x   (f of a function type)",
    }
    "algorithmic (ICFP'20 Fig. 6, §5.1, §5.3)" in algorithmic {
        addId = add_id(): pattern "e ↦ id e",
        idToTranspose = id_to_transpose(): pattern "id (e : m.n.t) ↦ transpose (transpose e)",
        transposeMove = transpose_move(): pattern "map (map' f) (transpose e) ↦ transpose (map (map' f) e)",
        splitJoin = split_join(n: Size): "map f ↦ split n >> map (map f) >> join;  map f xs ↦ join (map (map f) (split n xs))",
        blockedReduce = blocked_reduce(n: Size): "reduceX op init xs ↦ reduceSeq (fun a y => reduceX op a y) init (split n xs)",
        padMap = pad_map(n: Size): "map f (xs : m.t) ↦ take m (map f (padClamp 0 (⌈m/n⌉·n − m) xs))   (m ≥ 1: the padding repeats the last element)",
        peelReduce = peel_reduce(n: Size): "reduceX op init (xs : k.t) ↦ reduceSeq op (reduceX op init (take (⌊k/n⌋·n) xs)) (drop (⌊k/n⌋·n) xs)",
        peelFirst = peel_first(): "reduceX op init (xs : k.t) ↦ reduceSeq op (op init (idx 0 xs)) (drop 1 xs)   (k ≥ 1: the first step computed from init, e.g. a register block started from zero, the loop over the rest continuing from it)",
        transposeAccumulator = transpose_accumulator(d: Size): "reduceX op init xs ↦ T (reduceSeq (fun acc y => T (op (T acc) y)) (T init) xs)   (T = map^(d−1) transpose, its own inverse: the accumulator stored with its dimensions d and d+1 swapped (counted from 1), e.g. a blocked result in the row-major layout of its rows)",
        generateToMap = generate_to_map(): pattern "generate f ↦ map f (generate (fun i => i))",
        mapFusion = map_fusion(): pattern "map f (map g xs) ↦ map (fun x => f (g x)) xs",
        mapFission = map_fission(): "map (fun x => f (g x)) ↦ map g >> map f;  map (fun x => f (g x)) xs ↦ map f (map (fun x => g x) xs)   (x ∉ fv(f), x ∈ fv(g x), g x not x)",
        fuseReduceMap = fuse_reduce_map(): "reduceX op init (map f xs) ↦ reduceSeq (fun acc y => op acc (f y)) init xs",
        fissionReduceMap = fission_reduce_map(): "reduceX (fun acc y => op acc e) init xs ↦ reduceY op init (map (fun y => e) xs)   (acc, y ∉ fv(op), acc ∉ fv(e), e not y; reduceY is reduce for reduceSeq with op : t -> t -> t, reduceX otherwise)",
        mapReduceInterchange = map_reduce_interchange(): "map (fun x => reduceX op i e) xs ↦ reduceX (fun acc y => map (fun p => op (fst p) (snd p)) (zip acc y)) (map (fun x => i) xs) (transpose (map (fun x => e) xs))   (x ∉ fv(op))",
        mapMapInterchange = map_map_interchange(): "map (fun x => map (fun y => b) ys) xs ↦ transpose (map (fun y => map (fun x => b) xs) ys)   (x ∉ fv(ys));  map (fun x => map f x) xs ↦ transpose (map (map f) (transpose xs))   (x ∉ fv(f))",
        vectorize = vectorize(n: Size): "map f xs ↦ asScalar (map (mapVec f) (asVector n xs))   (f on scalars);  map f (zip a b) ↦ asScalar (map f (zip (asVector n a) (asVector n b)))   (f on pairs of scalars, typed again on vectors);  map f xs ↦ asScalar (map (mapVec (fun x => x)) (asVector n (map f xs)))   (any other f with a scalar result)",
    }
    "movement (ICFP'20 Fig. 6 transposeMove; its split, join and slide analogues)" in movement {
        transposeAfterMap = transpose_after_map(): pattern "transpose (map (map' f) xs) ↦ map (map' f) (transpose xs)",
        splitBeforeMap = split_before_map(): pattern "map (map' f) (split n xs) ↦ split n (map' f xs)",
        splitAfterMap = split_after_map(): pattern "split n (map f xs) ↦ map (map f) (split n xs)",
        joinBeforeMap = join_before_map(): pattern "map f (join xs) ↦ join (map (map f) xs)",
        joinAfterMap = join_after_map(): pattern "join (map (map' f) xs) ↦ map' f (join xs)",
        slideBeforeMap = slide_before_map(): pattern "map (map' f) (slide n s xs) ↦ slide n s (map' f xs)",
        slideAfterMap = slide_after_map(): pattern "slide n s (map f xs) ↦ map (map f) (slide n s xs)",
        layoutFission = layout_fission(): "map (fun x => L e) xs ↦ map L (map (fun x => e) xs)   (L one of join, transpose, split n, slide n s, asScalar, asVector n, take n, drop n; x ∉ fv(L))",
        viewFission = view_fission(): "map (fun x => V e) xs ↦ map V (map (fun x => e) xs)   (V a view function: layout primitives and maps of them; e computes; x ∉ fv(V))",
    }
    "array packing (ICFP'20 §5.3, Listing 15)" in movement {
        permuteB = permute_b(n: Size): "(e : k.m.t) ↦ join (map transpose (map (fun b => map (fun r => map (fun x => x) r) (transpose b)) (split n e)))",
    }
    "overlapped tiling (thesis §4.4.1)" in stencil {
        overlappedTiling = overlapped_tiling(u: Size): "map f (slide n s xs) ↦ join (map (fun tile => map f (slide n s tile)) (slide u v xs))   (u - v = n - s)",
        overlappedTiling2 = overlapped_tiling_2d(u: Size): "map2 f (slide2 n s xs) ↦ map join (join (map transpose (map2 (fun tile => map2 f (slide2 n s tile)) (slide2 u v xs))))   (u - v = n - s)",
    }
    "streaming stencils (issue 27: 2.5-D blocking, a window moved along a dimension)" in stencil {
        slideInward = slide_inward(): "map (fun w => map' h (transpose w)) (slide n s xs) ↦ transpose (map' (fun c => map h (slide n s c)) (transpose xs));  map (fun w => map' h (transpose (map'' g w))) (slide n s xs) ↦ transpose (map' (fun c => map h (slide n s c)) (transpose (map'' g xs)))   (w ∉ fv(h, g): the windows taken along the dimension inside the next one, e.g. a 3-D neighbourhood's z window inside the y loop; g rearranges the window's elements, as a neighbourhood's transposes do)",
        toSlideSeq = to_slide_seq(): "map f (slide sz 1 xs) ↦ slideSeq sz f xs   (map or mapSeq, sz a constant: the windows computed in order, the window in private memory moved on by one element per step, every element of xs read once)",
        vectorizeColumns = vectorize_columns(v: Size): "map (fun c => map' f (slide n s c)) (xs : (k·v).N.A1...Ad.t) ↦ join (map (fun r => transpose (split v (asScalar r))) (map (fun c => map' f' (slide n s c)) (B (map^(d+1) (asVector v) (F xs)))))   (c ∉ fv(f), t a scalar, f's result a t; F moves the columns' dimension innermost (F xs : N.A1...Ad.(k·v).t, by transposes), B moves the vectors' dimension back outermost, f' is f on vectors, its literals of type t each vectorFromScalar: v neighbouring columns walked together, each step's values vectors of v lanes)",
    }
    "stencils and short reductions in the default schedules (issue 28)" in stencil {
        storePadded = store_padded(): "pad xs ↦ toMem global (mapSeq (fun r => ... mapSeq (fun x => x) r) (pad xs)) (fun v => v)   (pad one of padClamp l r, padCst l r c, applied, that pads the innermost dimension (padClamp2 does, a pad of rows alone does not); its elements scalars: the padded array copied once, element by element, so that a stencil reads it without a clamp or a test per read)",
        unrollShort = unroll_short(n: Size): "reduceX op init (xs : k.t) ↦ reduceSeqUnroll op init xs   (reduceX reduce or reduceSeq, k a constant, 1 ≤ k ≤ n)",
    }
    "lowering (ICFP'20 §5.1; RISE & Shine §III-C)" in lowering {
        parallel = parallel(): "map ↦ mapPar",
        toMapSeq = to_map_seq(): "map ↦ mapSeq",
        toMap = to_map(): "mapSeq ↦ map   (the loop is lowered again, by parallel, toMapGlobal(d), ...)",
        toReduceSeq = to_reduce_seq(): "reduce ↦ reduceSeq",
        unroll = unroll(): "map, mapSeq ↦ mapSeqUnroll;  reduce, reduceSeq ↦ reduceSeqUnroll",
        toMem = to_mem(a: Space): "e ↦ toMem a e (fun x => x)",
        copyArray = copy_array(): "(e : n.t) ↦ map (fun x => x) e   (an explicit copy loop, which later rules vectorize or unroll)",
    }
    "computing a value once (the default schedules; values that cannot fail: no integer division, shift, natType arithmetic, cast to an integer, index read from data, scatter or foreign call)" in sharing {
        hoistInvariant = hoist_invariant(): "map (fun x => B[e]) xs ↦ let e (fun v => map (fun x => B[v]) xs)   (e the first sub-expression of B, top-down, that mentions neither x nor a variable bound in B, holds a reduction, is no array and cannot fail; every occurrence of e replaced)",
        shareRepeated = share_repeated(): "fun x => B[e, e] ↦ fun x => let e (fun v => B[v, v])   (e the first sub-expression of B, top-down, that occurs twice or more, mentions no variable bound in B, is no view, holds a reduction or a map that computes, and cannot fail)",
        storeShared = store_shared(): "let e (fun v => b) ↦ toMem global e (fun v => b)   (e an array that is no view, v read twice or more in b, or once inside a function a loop calls)",
    }
    "GPU parallelism (RISE & Shine §III-C; CC'22)" in lowering {
        toMapGlobal = to_map_global(d: Dim): "map ↦ mapGlobal(d)",
        toMapWorkGroup = to_map_work_group(d: Dim): "map ↦ mapWorkGroup(d)",
        toMapLocal = to_map_local(d: Dim): "map ↦ mapLocal(d)",
        toMapBlock = to_map_block(d: Dim): "map ↦ mapBlock(d)",
        toMapThread = to_map_thread(d: Dim): "map ↦ mapThread(d)",
        toMapWarp = to_map_warp(): "map ↦ mapWarp",
        toMapLane = to_map_lane(): "map ↦ mapLane",
        toMapWarpGroup = to_map_warp_group(): "map ↦ mapWarpGroup",
    }
    "GPU matrix multiplication (LIFT CGO'17; Remmelg et al., GPGPU'16)" in gpu {
        joinSplit = join_split(): pattern "(e : n.m.t) ↦ split m (join e)",
        blockReduceZip = block_reduce_zip(n: Size): "reduceX op init (zip a b) ↦ reduceSeq (fun acc ab => reduceX op acc (zip (fst ab) (snd ab))) init (zip (split n a) (split n b))",
        reduceOuter = reduce_outer(): "map (fun r => V (map (fun c => W (reduceX op init (zip (F r) (G c)))) cs)) rs ↦ map (fun x => V (map W x)) (reduceX (outer op) (map (fun r => map (fun c => init) cs) rs) (zip (transpose (map F rs)) (transpose (map G cs))));  zip accs0 rs |> map (fun ar => zip (fst ar) cs |> map (fun ac => reduceX op (fst ac) (zip (F (snd ar)) (G (snd ac))))) ↦ reduceX (outer op) accs0 (zip (transpose (map F rs)) (transpose (map G cs)))   (outer op = fun accs y => zip accs (fst y) |> map (fun ar => zip (fst ar) (snd y) |> map (fun ac => op (fst ac) (snd ar, snd ac))); r ∉ fv(G c, cs, V, W), c ∉ fv(F r, W), r, c ∉ fv(op); V, W chains of layout primitives (none: the identity), W on every result (a tile whose reduction a step below moved outside its loops); in the accumulator form F and G chains of layout primitives too, e.g. split s as blockReduceZip(s) leaves them)",
        copyLocal = copy_local(n1: Size, n0: Size): "(e : a.b.t) ↦ e |> join |> split (n1*n0) |> transpose |> split n0 |> mapLocal(1) (mapLocal(0) (mapSeq (fun x => x))) |> join |> transpose |> join |> split b   (t a scalar)",
        copyByThreads = copy_by_threads(p: Size): "(e : n.c.t) ↦ toMem local (e |> join |> split p |> transpose |> mapLocal(0) (mapSeq (fun x => x)) |> transpose |> join |> split c) (fun s => s)   (t a scalar, p dividing n·c, constants: a tile copied into local memory by the p work-items of a 1-D work-group, work-item i copying the elements i, i+p, ... in row-major order, neighbouring work-items neighbouring elements; Fireiron's move(operand, local))",
        copyByWorkItems = copy_by_work_items(): "(e : n1.n0.t) ↦ mapLocal(1) (mapLocal(0) (fun x => x)) e",
        storeLocal = store_local(what: Strat, how: Strat): "b[e] ↦ toMem a s (fun m => b[R(m)/e])   (e the first sub-expression of b, top-down, that what holds for and that mentions nothing bound in b; how rewrites e to R(toMem a s (fun x => x)))",
    }
    "a matrix product at any size (issue 28)" in dot_padding {
        padDotZeros = pad_dot_zeros(n: Size): "reduceX op z (map f (zip a b)) ↦ reduceX op z (map f (zip (padCst 0 p 0 a) (padCst 0 p 0 b)));  reduceX op z (zip a b) ↦ reduceX op z (zip (padCst 0 p 0 a) (padCst 0 p 0 b))   (a, b : k.t, t a number, p = ⌈k/n⌉·n − k: the operands padded with zeros to a multiple of n; only a sum of products, which the products 0·0 leave unchanged: op `add` over f = fun q => X·Y, or op = fun acc y => acc + X·Y, X and Y each an element of the pair or a cast of one, z the literal +0 or integer 0; any other reduction refused with the reason; nothing padded when n divides k)",
    }
    "parallel reductions (RISE & Shine §VI; LIFT partialReduce; op associative and commutative, init its neutral element: floats reassociate within the verification tolerance, min and max exact)" in reduction {
        partialReduce = partial_reduce(p: Size): "reduce f z (xs : n.t) ↦ reduce f z (map (fun c => reduce f z c) (split ⌈n/p⌉ (padCst 0 (⌈n/p⌉·p − n) z xs)))   (p chunks of consecutive elements; no padCst when p divides n)",
        partialReduceStrided = partial_reduce_strided(p: Size): "reduce f z (xs : n.t) ↦ reduce f z (map (fun c => reduce f z c) (transpose (split p (padCst 0 (⌈n/p⌉·p − n) z xs))))   (part i is xs[i], xs[i+p], ...: coalesced reads when the parts are work-items)",
        vectorizeReduce = vectorize_reduce(v: Size): "reduce f z (xs : (m·v).t) ↦ reduceSeq f z (asScalar (makeArray 1 (reduceSeq f (vectorFromScalar z) (asVector v xs))))   (t a scalar: v independent accumulators, lane i reducing xs[i], xs[i+v], ...; v must divide the length: peelReduce(v) first)",
        treeReduce = tree_reduce(): "map (fun b => reduce f z (e : 2^k.t)) xs ↦ join (map (fun b => iterate k (fun (l: nat) => fun ys => map (fun c => reduce f z c) (split 2 ys)) e) xs)   (k ≥ 1)",
        treeReduceLet = tree_reduce_let(): "let C[reduce f z (e : 2^k.t)] (fun h => B) ↦ join (map (fun r => let C[r] (fun h => B)) (iterate k (fun (l: nat) => fun ys => map (fun c => reduce f z c) (split 2 ys)) e))   (the first reduce of the value, top-down and under no lambda; the let's result an array; k ≥ 1)",
        warpReduceLet = warp_reduce_let(): "let C[reduce f z (xs : n.t)] (fun h => B) ↦ let C[reduceWarp f (map (fun c => reduce f z c) (transpose (split 32 (padCst 0 (⌈n/32⌉·32 − n) z xs))))] (fun h => B)   (the first reduce of the value, top-down and under no lambda: lane l reduces xs[l], xs[l+32], ..., the warp combines the 32 results by shuffles and every lane gets the value)",
        groupReduceLet = group_reduce_let(b: Size): "let C[reduce f z (xs : n.t)] (fun h => B) ↦ let C[toMem local (mapWarp (fun w => reduceWarp f (map (fun c => reduce f z c) w)) (split 32 (transpose (split b (padCst 0 (⌈n/b⌉·b − n) z xs))))) (fun s => reduceWarp f (padCst 0 (32 − b/32) z s))] (fun h => B)   (the first reduce of the value, top-down and under no lambda; b a multiple of 32 of at most 1024: work-item i reduces xs[i], xs[i+b], ..., each warp combines its 32 results by shuffles into local memory, then every warp combines the b/32 warps' results by shuffles, so that every work-item gets the value)",
        reduceToWarp = reduce_to_warp(): "reduce f z (xs : 32.t) ↦ reduceWarp f xs   (a warp's 32 lanes combine their values by shuffles)",
        reduceByWarps = reduce_by_warps(): "map (fun c => reduce f z (e : b.t)) xs ↦ join (map (fun c => map (fun w => reduceWarp f w) (split 32 (padCst 0 (32 − b/32) z (map (fun w => reduceWarp f w) (split 32 e))))) xs)   (b a multiple of 32 up to 1024; for e = map g ys the first warps reduce map g w over split 32 ys: each lane computes g of its element)",
    }
    "parallel scans (issue 27; reduce-then-scan: op associative and commutative with a known neutral element e; integers exact, floats regrouped within the verification tolerance)" in scan {
        partialScan = partial_scan(p: Size): "scanSeq f init (xs : n.t) ↦ take n (join (map (fun q => scanSeq f (fst q) (snd q)) (zip (take p (scanSeq f init (padCst 1 0 e (map (fun c => reduce op e c) C)))) C)))   (C = split ⌈n/p⌉ (padCst 0 (⌈n/p⌉·p − n) e xs): p chunks of consecutive elements, each reduced, the sums scanned one behind from init (chunk j's offset), each chunk scanned from its offset; no padCst nor take when p divides n)",
        mapCopy = map_copy(): pattern "(e : n.t) ↦ map (fun x => x) e",
        scanTiled = scan_tiled(b: Size, k: Size): "scanSeq f init (xs : n.t) ↦ let (map (fun c => scanSeq f e c) T) (fun s => let (scanSeq f init (padCst 1 0 e (take (g−1) (join (map (drop (t−1)) s))))) (fun o => map (fun p => op (fst p) (snd p)) (zip (take n (join s)) (take n (join (map (fun o1 => generate (fun i => o1) : t.τ) o))))))   (t = b·k at most 8192, b at most 1024; T = split t (padCst 0 (g·t − n) e xs): g = ⌈n/t⌉ tiles of consecutive elements, each scanned from e; tile j's offset o_j the fold of init and the totals (last elements) of the tiles before it; every element combined with its tile's offset; no padCst nor take when t divides n)",
        singlePassScan = single_pass_scan(b: Size, k: Size): "scanSeq f init (xs : n.t) ↦ scanLookback b t f init e (fun c => scanSeq f e c) xs   (t = b·k at most 8192, b at most 1024; t a 32-bit scalar: i32, u32, int or f32; tiles of t consecutive elements, the last padded with e, each scanned from e (by workGroupScan(b) next); tile j's offset o_j the fold of init and the totals of the tiles before it, found in one pass by decoupled look-back on a GPU)",
        workGroupScan = work_group_scan(b: Size): "scanSeq f e (xs : (b·k).t) ↦ toMem local (C xs) (fun l => toMem local (mapLocal(0) (fun r => reduce op e r) (split k l)) (fun s0 => toMem local (H 1 s0) (fun s1 => ... toMem local (H 2^(m−1) s(m−1)) (fun sm => toMem local (mapLocal(0) (fun q => scanSeq f (fst q) (snd q)) (zip (padCst 1 0 e (take (b−1) sm)) (split k l))) (fun rows => C (join rows))))))   (e the neutral element; m = ⌈log2 b⌉; H d s = mapLocal(0) (fun p => op (fst p) (snd p)) (zip s (padCst d 0 e (take (b−d) s))), a Hillis-Steele step; C ys = join (transpose (mapLocal(0) (fun c => mapSeq (fun x => x) c) (transpose (split b ys)))), work-item i copying the elements i, i+b, ...: a work-group of b work-items scans a tile in local memory, every global access coalesced)",
        workGroupScanInLocal = work_group_scan_in_local(b: Size): "scanSeq f e (xs : (b·k).t) ↦ workGroupScan(b)'s right-hand side without its last copy: ... (fun rows => join rows)   (the scanned tile left in the local memory it was scanned into, read where it lies by a reader of the same work-group: scanLookback's tile scan)",
        workGroupScanWarps = work_group_scan_warps(b: Size): "scanSeq f e (xs : (b·k).t) ↦ toMem local (C xs) (fun l => toMem local (join (mapWarp (fun w => scanWarp op (mapLane (fun r => reduce op e r) w)) (split 32 (split k l)))) (fun s => toMem local (join (mapWarp (fun v => scanWarp op v) (split 32 (padCst 0 (32 − b/32) e (join (map (drop 31) (split 32 s))))))) (fun ws => toMem local (mapLocal(0) (fun q => scanSeq f (fst q) (snd q)) (zip (map (fun p => op (fst p) (snd p)) (zip (join (map (fun w => padCst 1 0 e (take 31 w)) (split 32 s))) (join (map (fun o => generate (fun i => o) : 32.τ) (take (b/32) (padCst 1 0 e ws)))))) (split k l))) (fun rows => join rows))))   (b a multiple of 32 up to 1024; e the neutral element; C as in workGroupScan: work-item i reduces its k consecutive elements, each warp scans its 32 sums by shuffles (scanWarp), one warp scans the warps' totals, work-item i's offset is the fold of its warp's sums before it and the totals of the warps before its warp, and it scans its elements from there; the scanned tile left in local memory like workGroupScanInLocal's: scanLookbackWarp's tile scan, CUDA only)",
        workGroupScanWarpsDirect = work_group_scan_warps_direct(b: Size): "scanSeq f e (xs : (b·k).t) ↦ workGroupScanWarps(b)'s right-hand side with split k xs in place of split k l and no copy in: toMem local (join (mapWarp (fun w => scanWarp op (mapLane (fun r => reduce op e r) w)) (split 32 (split k xs)))) (fun s => ... (zip ... (split k xs)) ...)   (every work-item reads its k consecutive elements where they lie, twice: for its sum and for its scan; the scanned tile is the only copy in local memory)",
    }
    "tensor cores (issue 26; Fireiron, PACT'20: a matrix product decomposed down to the warp's mma.sync m16n8k16)" in tensor {
        mmaTile = mma_tile(): "map (fun ar => map (fun ac => reduceX (fun s p => s + cast (fst p) * cast (snd p)) (fst ac) (zip (snd ar) (snd ac))) (zip (fst ar) b)) (zip acc a) ↦ unfragC (mmaSync (fragA a) (fragB (transpose b)) (fragC acc))   (acc : 16.8.f32, a : 16.16.t, b : 8.16.t, t f16 or bf16, the casts to f32: a 16x8 tile accumulate acc + a·bᵀ, as reduceOuter leaves a k step of 16, on the tensor cores, which sum in an order of their own (within the f32 tolerance); any other shape, type or step refused with the reason)",
        fragmentAccumulator = fragment_accumulator(): "reduceX (fun acc y => unfragC E[fragC acc]) z xs ↦ unfragC (reduceSeq (fun f y => E[f]) (fragC z) xs);  reduceX (fun acc y => map (fun p => ... unfragC E[fragC (fst p)]) (zip acc ys)) z xs ↦ map (map unfragC) (reduceSeq (fun acc y => map (fun p => ... E[fst p]) (zip acc ys)) (map (map fragC) z) xs)   (d nested maps over the accumulator zipped with the step's values, as reduceOuter leaves them: an array of tiles kept as the array of their fragments; the accumulator read only through fragC, as fragC (unfragC f) = f: in the lanes' registers)",
        lanesOutermost = lanes_outermost(): "reduceSeq f (z : n1...nd.32.k.t) xs ↦ M⁻¹ (reduceSeq (fun acc y => M (f (M⁻¹ acc) y)) (M z) xs)   (d ≥ 1, t a scalar: an accumulator of fragments kept lane by lane, 32.n1...nd.k.t, each lane's part one private array; M = transpose for d = 1, transpose ∘ map M' for d + 1)",
        lanesInWarps = lanes_in_warps(): "reduceSeq (fun acc y => zip acc Y |> map (fun w => reduceX g (fst w) X)) (z : n.n1...nd.32.k.t) xs ↦ map M⁻¹ (reduceSeq (fun acc y => zip acc Y |> map (fun w => reduceSeq (fun a v => M (g (M⁻¹ a) v)) (fst w) X)) (map M z) xs)   (d ≥ 1, t a scalar, M lanesOutermost's move of the elements' dimensions n1...nd.32 (lanes outermost); acc ∉ fv(Y, g, X), w ∉ fv(g), X reads w only as snd w: the warps' accumulators of a work-group, each handed to its warp's reduction, kept as w.32.n1...nd.k.t, each lane's part of its warp's one private array updated in place)",
        flattenMapNest = flatten_map_nest(): "map (fun x => V (map (fun y => b) ys)) xs ↦ map V (split n (map (fun p => b[fst p/x, snd p/y]) (join (map (fun x => map (fun y => (x, y)) ys) xs))))   (ys : n.t, x ∉ fv(ys, V), V a chain of layout primitives: a 2-D grid as one loop, as the one warp loop of a GPU)",
        flattenAccumulatorNest = flatten_accumulator_nest(): "reduceX (fun accs y => zip accs Y1 |> map (fun ar => zip (fst ar) Y2 |> map (fun ac => B))) z xs ↦ split n (reduceX (fun acc y => zip acc (join (map (fun r => map (fun c => (r, c)) Y2) Y1)) |> map (fun w => B[fst w/fst ac, fst (snd w)/snd ar, snd (snd w)/snd ac])) (join z) xs)   (Y2 : n.t; accs ∉ fv(Y1, Y2, B), ar ∉ fv(Y2), B reads ar only as snd ar: a 2-D nest of tile accumulates, as reduceOuter leaves the warps' tiles of a work-group, as one map over the accumulators row by row, each with its row of Y1 and column of Y2, the one warp loop of a GPU)",
        constantFragment = constant_fragment(): "fragC (map (fun r => map (fun c => z) cs) rs) ↦ generate (fun l => generate (fun i => z))   (likewise fragC of generate (fun r => generate (fun c => z)); r, c ∉ fv(z))",
    }
    "Fireiron's refinements of a moved tile (issue 26; PACT'20: vector width, swizzle, prefetch)" in refine {
        copyVectorsByThreads = copy_vectors_by_threads(p: Size, v: Size, r: Size): "(e : n.c.t) ↦ map asScalar (toMem local (e |> map (asVector v) |> O |> split p |> transpose |> mapLocal(0) (mapSeq (fun x => x)) |> transpose |> join |> O⁻¹) (fun s => s))   (t a scalar, n and c constants, v dividing c, r dividing n, p dividing n·c/v; O = split r |> map transpose |> join |> join, the tile in blocks of r rows, a block's columns of vectors one after the other, O⁻¹ = split r |> split (c/v) |> map transpose |> join; for r = 1 O = join, O⁻¹ = split (c/v): copyByThreads(p) moving v elements at a time, 16 bytes of f16 for v = 8)",
        storeTransposed = store_transposed(): "toMem a (e : n.m.t) (fun s => s) ↦ transpose (toMem a (transpose e) (fun s => s))   (the value stored column by column, read back transposed: a tile of vectors of 8 consecutive k stored [k/8][row])",
        storeRotated = store_rotated(r: Size): "toMem a (e : n.w.t) (fun s => s) ↦ split w (reorder g f (toMem a (reorder f g (join e)) (fun s => s)))   (w a constant, r ≤ w; f p = (p/w)·w + (p mod w + w − (p/w) mod r) mod w, g i = (i/w)·w + (i mod w + (i/w) mod r) mod w: row q stored rotated right by q mod r places, read back through the inverse)",
        pipelineCopies = pipeline_copies(s: Size): "reduceSeq (fun acc x => toMem local E (fun m => B)) init xs ↦ reduceSeqPipelined(s) (fun acc x => toMem local E (fun m => B)) init xs   (s 2, 3 or 4, acc ∉ fv(E): the same reduction, whose copies of element i+s−1 into local memory run while element i computes; Fireiron's prefetch)",
    }
    "a warp's row kept by its lanes (issue 27; rows of 32·k elements, k a constant of at most 64)" in lanes {
        laneRegisters = lane_registers(): "fun row => B ↦ fun row => toMem private (mapLane (fun p => mapSeq (fun x => x) p) (transpose (split 32 row))) (fun r => B[join (transpose r)/row])   (row : (32·k).t: lane l copies the elements l, l+32, ... once)",
        laneRows = lane_rows(): "mapLane f (join (transpose (xs : 32.k.t))) ↦ join (transpose (mapLane (fun p => mapSeq f p) xs))   (lane l computes the elements l, l+32, ... from its own row of xs)",
        storeByLanes = store_by_lanes(): "toMem a C[join (transpose (xs : 32.k.t))] (fun v => B) ↦ toMem private C[xs] (fun w => B[join (transpose w)/v])   (C a chain of let bodies: each lane keeps its own row)",
    }
    "a work-group's row kept by its work-items (issue 27; rows of b·k elements, b a multiple of 32 of at most 1024, k a constant of at most 64)" in lanes {
        groupRegisters = group_registers(b: Size): "fun row => B ↦ fun row => toMem private (mapWarp (fun ws => mapLane (fun p => mapSeq (fun x => x) p) ws) (split 32 (transpose (split b row)))) (fun r => B[join (transpose (join r))/row])   (row : (b·k).t: work-item i, warp ⌊i/32⌋ and lane i mod 32, copies the elements i, i+b, ... once)",
        groupRows = group_rows(): "mapLocal(0) f (join (transpose (join (xs : w.32.k.t)))) ↦ join (transpose (join (mapWarp (fun ws => mapLane (fun p => mapSeq f p) ws) xs)))   (work-item i computes the elements i, i+32w, ... from its own row of xs)",
        storeByGroup = store_by_group(): "toMem a C[join (transpose (join (xs : w.32.k.t)))] (fun v => B) ↦ toMem private C[xs] (fun u => B[join (transpose (join u))/v])   (C a chain of let bodies: each work-item keeps its own row)",
    }
}

/// The rule called `name`.
pub fn rule_info(name: &str) -> Option<&'static RuleInfo> {
    RULES.iter().find(|r| r.name == name)
}

/// A rule named `name` whose right-hand side `rhs` builds (or `None`: no match).
pub fn rise_rule(
    name: impl Into<std::sync::Arc<str>>,
    rhs: impl Fn(&Expr, &mut NameGen) -> Option<Expr> + Send + Sync + 'static,
) -> S {
    rule(name, move |e: &Expr, ctx| match rhs(e, &mut ctx.env) {
        Some(t) => finish(t, e),
        None => Err(Failure::not_applicable()),
    })
}
