// Fireiron's decompositions (Hagedorn et al., PACT'20) as ELEVATE strategies (issue 26): a
// matrix product taken down, one scheduling step at a time, to the warp-level tensor-core
// multiply `mma.sync` (`mmaSync`, m16n8k16), from the plain product of half.rise.
//
//   shine compile examples/half.rise --def mmHalf --strategy examples/fireiron.elv \
//     --apply mmaWarps --target cuda
//   shine run examples/half.rise --def mmHalf --strategy examples/fireiron.elv \
//     --apply mmaWarps --target cuda --nat m=48 --nat n=32 --nat k=80 --random 1 --verify
//   shine run examples/half.rise --def mmHalf --strategy examples/fireiron.elv \
//     --apply mmaWarpTiles --target cuda --nat m=192 --nat n=64 --nat k=80 --random 1 --verify
//   shine run examples/half.rise --def mmHalf --strategy examples/fireiron.elv \
//     --apply mmaShared --target cuda --nat m=128 --nat n=192 --nat k=224 --random 1 --verify
//   shine run examples/half.rise --def mmHalf --strategy examples/fireiron.elv \
//     --apply mmaLarge --target cuda --nat m=256 --nat n=384 --nat k=224 --random 1 --verify
//   shine run examples/half.rise --def mmHalf --strategy examples/fireiron.elv \
//     --apply mmaWide --target cuda --nat m=256 --nat n=768 --nat k=224 --random 1 --verify
//
// The vocabulary, each step at the focus (the whole definition), in the order they compose:
// the result's tiles, the warps' columns of a tile, the reduction's split, the levels that
// run the loops, the tensor-core multiply, the epilog; for mmaShared also the work-group's and
// the warps' splits of k and move(operand, local); for mmaLarge also move's refinements, the
// copies' vector width and the tiles' swizzled layouts in local memory, and for mmaWide the
// copies of the next step in flight (prefetch). A product whose sizes
// the tiles do not divide is refused when it runs (`16 must divide m`); a tile the tensor
// cores cannot multiply is refused by `mma` with the reason.

// The result in r x c tiles: loops 0 and 1 over the tiles (rows, columns), 2 and 3 over a
// tile's rows and columns.
def tileResult(r, c) = tile(r, c) @ outermost(mapNest(2))

// Every tile's columns in groups of w, the groups outside the rows: loop 2 over the groups
// (a warp each), 3 over the rows, 4 over a group's columns.
def warpColumns(w) = split(w) @ atLoop(3) ;; interchange(2)

// The reduction over k in steps of s, and the steps outside the rows and columns of a
// warp's tile: a reduction over the steps whose accumulator is the warp's whole tile, each
// step a tile accumulate (acc + a·bᵀ of an r x s tile of `a` and an s x w one of `b`).
def splitK(s) = blockReduceZip(s) @ outermost(appliedReduce) ;;
  reduceOuter @ innermost(mapNest(2))

// `to(level) @ atLoop(d)`: the loop at depth d runs at the level (toMapWorkGroup(d),
// toMapWarp); the lanes are implied by the fragments.
def to(level) = level @ function @ function

// The tensor cores: every 16x8 tile accumulate with k 16 is one mmaSync on the tiles'
// fragments (any other tile or element type is refused with the reason), the accumulator
// of the steps is kept as its fragment, and its initial zeros are zeros in every lane.
def mma = mmaTile @ topDown ;
  fragmentAccumulator @ topDown ;
  constantFragment @ topDown

// The lanes' copies of the accumulator's fragment: the zeros into registers before the
// steps, the result out after them (each lane its 4 elements), then the views β-reduced and
// the rest lowered.
def epilog = laneCopy @ argument @ function @ outermost(appliedReduce) ;
  laneCopy @ argument @ body @ argument @ function @ outermost(applied(mapWarp)) ;
  DFNF ; lowerToC

// At a fragment: every lane copies its own row (`mapLane (mapSeq (fun x => x))`).
def laneCopy = copyArray ;
  toMapLane @ function @ function ;
  (copyArray @ body ; toMapSeq @ function @ function @ body) @ argument @ function

// A work-group per r x c tile of the result, a warp per 16 x w columns of it, k walked in
// steps of s with the warp's accumulator in registers; the tiles of `a` and `b` are read from
// global memory. The tensor cores need r = 16, w = 8 and s = 16 (mma refuses the rest); c a
// multiple of w (c / w warps per work-group).
def warpMma(r, c, w, s) = DFNF ; fuseReduceMap @ topDown ;;
  tileResult(r, c) ;;
  warpColumns(w) ;;
  splitK(s) ;;
  to(toMapWorkGroup(1)) @ atLoop(0) ;;
  to(toMapWorkGroup(0)) @ atLoop(1) ;;
  to(toMapWarp) @ atLoop(2) ;
  mma ;
  epilog

// The structure of tensor.rise's hand-written mmWarps: a 16x32 tile per work-group, 4 warps
// of 16x8, k in steps of 16. m, n and k multiples of 16, 32 and 16.
def mmaWarps = warpMma(16, 32, 8, 16)

// A copy of an array whose loop runs at `level` (toMapLane, toMapSeq), and `s` on the
// function it applies to every element.
def copyAt(level) = copyArray ; level @ function @ function
def inElements(s) = s @ body @ argument @ function

// At an accumulator of fragments kept lane by lane (32.2.4.4): every lane copies its own
// registers (`mapLane (mapSeq (mapSeq (mapSeq (fun x => x))))`).
def laneCopy3 = copyAt(toMapLane) ;
  inElements(copyAt(toMapSeq) ; inElements(copyAt(toMapSeq) ; inElements(copyAt(toMapSeq))))

// The tensor cores over a warp's fragments: every 16x8 tile accumulate is one mmaSync, the
// accumulator of the steps (the warp's tile of fragments) kept as its fragments, lane by lane
// (each lane's part of all of them one private array), its initial zeros zeros in every lane.
def mmaFragments = mmaTile @ topDown ;
  fragmentAccumulator @ topDown ;
  constantFragment @ topDown ;
  lanesOutermost @ topDown

// The loops of a k step over the warp's rows and columns of fragments (loops 4 and 5, inside
// the reduction at 3) unrolled: the fragments of `a` read once per row, those of `b` once per
// column.
def unrollFragments = to(unroll) @ atLoop(4) ; to(unroll) @ atLoop(5)

// The lanes' copies of the accumulator of fragments: the result out of the registers, the
// zeros into them, then the views β-reduced and the rest lowered.
def fragmentsEpilog = laneCopy3 @ outermost(appliedReduce) ;
  laneCopy3 @ argument @ function @ outermost(appliedReduce) ;
  DFNF ; lowerToC

// A work-group per r x c tile of the result, a warp per wr x wc tile of it (the 2-D grid of
// warps flattened into one warp loop), each warp's tile in fr x fc fragments, k walked in steps
// of s with the reduction outside the fragments: each step reads a fragment of `a` per row of
// fragments and one of `b` per column, and multiplies every pair. The tensor cores need
// fr = 16, fc = 8 and s = 16 (mma refuses the rest).
def warpTileMma(r, c, wr, wc, fr, fc, s) = DFNF ; fuseReduceMap @ topDown ;;
  tileResult(r, c) ;;
  tile(wr, wc) @ atLoop(2) ;;
  tile(fr, fc) @ atLoop(4) ;;
  splitK(s) ;;
  reduceOuter @ atLoop(4) ;;
  flattenMapNest @ atLoop(2) ;;
  to(toMapWorkGroup(1)) @ atLoop(0) ;;
  to(toMapWorkGroup(0)) @ atLoop(1) ;;
  to(toMapWarp) @ atLoop(2) ;
  mmaFragments ;;
  unrollFragments ;
  fragmentsEpilog

// The structure of tensor.rise's hand-written mmWarpTiles: a 64x64 tile per work-group, 2x2
// warps of 32x32, each 2x4 fragments of 16x8, k in steps of 16. m, n and k multiples of 64,
// 64 and 16.
def mmaWarpTiles = warpTileMma(64, 64, 32, 32, 16, 8, 16)


// Fireiron's move(operand, local), mmShared's structure: a work-group walks k in steps of kb
// with the warps' accumulators in registers across the steps; each step its threads copy the
// step's tile of `a` and of `b` into local memory, and the warps read their fragments there.

// The reduction over k in steps of kb, moved outside the loops of the fragments' elements, of
// the fragments and of the warps: one reduction of the work-group whose accumulator is the
// warps' tiles of fragments, each step a tile accumulate of the work-group's whole tile.
def workGroupK(kb) = blockReduceZip(kb) @ outermost(appliedReduce) ;;
  reduceOuter @ innermost(mapNest(2)) ;;
  reduceOuter @ atLoop(4) ;;
  reduceOuter @ atLoop(2)

// Within a step, every fragment's k in steps of s, and that reduction moved outside the
// fragment's elements and the warp's fragments: each warp's reduction over the step, from the
// work-group's accumulator (loop 2, the warps 3 and 4, a warp's fragments 5 and 6).
def warpK(s) = blockReduceZip(s) @ innermost(appliedReduce) ;;
  reduceOuter @ atLoop(7) ;;
  reduceOuter @ atLoop(5)

// The tensor cores over the warps' fragments in a work-group's reduction: mmaFragments, its
// accumulator (every warp's tile of fragments) kept as fragments, each warp's lane by lane.
def mmaWarpFragments = mmaTile @ topDown ;
  fragmentAccumulator @ topDown ;
  constantFragment @ topDown ;;
  lanesInWarps @ atLoop(2)

// The body of a reduction's operator: `reduce (fun acc y => BODY) init xs`.
def reduceBody(s) = s @ body @ body @ argument @ function @ function

// A step's operand `e : n1.n2.r.c` (a tile's rows as its warps' and fragments' rows) read
// as the rows of one tile, `split n2 (split r T)`, and `s` on the tile T (n1·n2·r x c).
def asRows(s) = joinSplit ; (joinSplit ; s @ argument) @ argument

// The same for an operand of columns (b's, as rows of `transpose b`): `s` on the tile's
// transpose, the rows of `b` (`transpose (transpose T)`, the inner one a tile of b's rows).
def asColumns(s) = asRows((addId ; idToTranspose) ; s @ argument)

// move(operand, local): the step's `operand` (its tile of `a`, `fst`, or of `b`, `snd`)
// copied into local memory at the top of the step by the work-group's p threads, neighbouring
// threads copying neighbouring elements (`layout` puts the tile in the order of its rows in
// global memory), and read from there.
def move(operand, layout, p) = storeLocal(operand, layout(copyByThreads(p)))
def moveOperands(p) = move(isApp(isFst), asRows, p) @ reduceBody ;;
  move(isApp(isSnd), asColumns, p) @ body @ argument @ reduceBody

// At the warps' accumulators: every warp's lanes copy their own registers.
def warpLaneCopy = copyAt(toMapWarp) ; inElements(laneCopy3)

// The warps' copies of their accumulators: the result out of the registers, the zeros into
// them, then the views β-reduced and the rest lowered.
def warpsEpilog = warpLaneCopy @ outermost(appliedReduce) ;
  warpLaneCopy @ argument @ function @ outermost(appliedReduce) ;
  DFNF ; lowerToC

// A work-group per r x c tile of the result with p threads (a warp per wr x wc tile of it,
// p = 32 · (r/wr) · (c/wc)), each warp's tile in fr x fc fragments; k walked in steps of kb,
// each step's kb-wide tile of `a` and kb-high tile of `b` copied into local memory by the
// work-group (move), the warps reading their fragments there in steps of s, their
// accumulators (the work-group's reduction's) in registers across the steps. The tensor cores
// need fr = 16, fc = 8 and s = 16 (mma refuses the rest); p threads must share each tile's
// elements evenly (copyByThreads refuses the rest).
def sharedTileMma(r, c, wr, wc, fr, fc, kb, s, p) = sharedTileLoops(r, c, wr, wc, fr, fc, kb, s) ;;
  // move(operand, local) for both tiles of every step of the work-group's reduction
  moveOperands(p) @ atLoop(2) ;;
  warpsEpilog

// sharedTileMma's loops, levels and tensor cores, before the tiles are moved: the loop at
// depth 2 is the work-group's reduction over its steps of kb.
def sharedTileLoops(r, c, wr, wc, fr, fc, kb, s) = DFNF ; fuseReduceMap @ topDown ;;
  // the loops: tiles, warps' tiles, fragments; k in steps of kb for the work-group, of s
  // for the warps
  tileResult(r, c) ;;
  tile(wr, wc) @ atLoop(2) ;;
  tile(fr, fc) @ atLoop(4) ;;
  workGroupK(kb) ;;
  warpK(s) ;;
  // the warps as one loop inside the work-group's reduction, the levels, the tensor cores
  flattenAccumulatorNest @ atLoop(2) ;;
  to(toMapWorkGroup(1)) @ atLoop(0) ;;
  to(toMapWorkGroup(0)) @ atLoop(1) ;;
  to(toMapWarp) @ atLoop(3) ;
  mmaWarpFragments ;;
  // a warp's steps of s and its fragments unrolled (the accumulators stay in registers)
  unroll @ function @ function @ function @ atLoop(4) ;;
  to(unroll) @ atLoop(5) ;;
  to(unroll) @ atLoop(6)

// The structure of tensor.rise's hand-written mmShared: a 64x64 tile per work-group of 128
// threads, 2x2 warps of 32x32, each 2x4 fragments of 16x8; k in steps of 32 through local
// memory (64x32 of `a`, 32x64 of `b`), each warp two steps of 16 per step. m, n and k
// multiples of 64, 64 and 32.
def mmaShared = sharedTileMma(64, 64, 32, 32, 16, 8, 32, 16, 128)


// Fireiron's refinements of move (mmLarge's and mmWide's structure): the vector width of the
// copies, a swizzled layout in local memory, the copies of the next step in flight.

// move(operand, local) with the copies v elements wide: the work-group's p threads copy the
// step's tile v elements (16 bytes of f16 for v = 8) at a time, walking it in blocks of r
// rows, and `swizzle` at the copy chooses the layout in local memory (id: the tile's own).
def moveVectors(operand, layout, p, v, r, swizzle) =
  storeLocal(operand, layout(copyVectorsByThreads(p, v, r) ; swizzle @ argument))

// Fireiron's swizzle for the tensor cores, both tiles copied 8 elements (16 bytes) at a time:
// `a`'s tile kept in chunks of 8 consecutive k ([k/8][row] vectors: storeTransposed), which
// the threads copy in blocks of 8 rows (a warp reads 8 rows' 64 bytes each and writes 4 runs
// of 8 consecutive vectors), so that the rows of 16 bytes a fragment is loaded from lie in
// different banks; `b`'s tile kept row by row, row q rotated by q mod 8 vectors
// (storeRotated(8)), so that the 8 rows of 16 bytes an `ldmatrix .trans` loads lie in 8
// different banks. The code generator chooses the loads (docs/gpu.md, "Tensor cores").
def moveSwizzled(p) = moveVectors(isApp(isFst), asRows, p, 8, 8, storeTransposed) @ reduceBody ;;
  moveVectors(isApp(isSnd), asColumns, p, 8, 1, storeRotated(8)) @ body @ argument @ reduceBody

// Fireiron's prefetch: the work-group's reduction (its step begins with the moves) in `stages`
// stages, the copies of step i+stages-1 issued (cp.async) while step i computes.
def prefetch(stages) = pipelineCopies(stages) @ atLoop(2)

// A work-group of p threads per r x c tile of the result, a warp per wr x wc tile of it in
// fragments of 16x8; k in steps of 32 through local memory, moved swizzled (moveSwizzled),
// each warp two steps of 16 per step; p = 32 · (r/wr) · (c/wc).
def swizzledTileMma(r, c, wr, wc, p) = sharedTileLoops(r, c, wr, wc, 16, 8, 32, 16) ;;
  moveSwizzled(p) @ atLoop(2) ;;
  warpsEpilog

// The same with the copies of the next steps in flight (prefetch(stages)): each stage holds
// both tiles, so the local memory grows with the stages.
def prefetchedTileMma(r, c, wr, wc, p, stages) = sharedTileLoops(r, c, wr, wc, 16, 8, 32, 16) ;;
  moveSwizzled(p) @ atLoop(2) ;;
  prefetch(stages) ;;
  warpsEpilog

// The structure of tensor.rise's hand-written mmLarge: a 128x128 tile per work-group of 256
// threads, 4x2 warps of 32x64, each 2x8 fragments of 16x8; k in steps of 32 through local
// memory in mmLarge's layouts. m, n and k multiples of 128, 128 and 32.
def mmaLarge = swizzledTileMma(128, 128, 32, 64, 256)

// The structure of tensor.rise's hand-written mmWide: a 128x256 tile per work-group of 256
// threads, 2x4 warps of 64x64, each 4x8 fragments of 16x8 (128 f32 accumulators per lane);
// k in steps of 32 through local memory in mmWide's layouts, the copies of step i+1 in flight
// (cp.async) while step i computes: 2 stages of both tiles, 48 KiB. m, n and k multiples of
// 128, 256 and 32.
def mmaWide = prefetchedTileMma(128, 256, 64, 64, 256, 2)

// prefetch on a low-level program: the first reduction whose step begins with copies into
// local memory (tensor.rise's split-K products: their chunks' k loop) in `stages` stages.
//
//   shine run examples/tensor.rise --def mmLargeSplitK --strategy examples/fireiron.elv \
//     --apply "prefetchSteps(4)" --target cuda --nat m=1 --nat n=1 --nat k=4 --nat s=8 \
//     --random 1 --verify
def prefetchSteps(stages) = pipelineCopies(stages) @ outermost(applied(reduceSeq)) ; lowerToC
