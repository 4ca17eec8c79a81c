// GPU strategies (issue 6): OpenCL and CUDA through the same lowered programs
// (mapWorkGroup/mapLocal compile to CUDA blocks/threads, mapGlobal to all threads).
//
//   shine run examples/gpu_reduce.rise --def dotPartial --strategy examples/gpu.elv \
//     --apply reduceWorkGroup --target opencl --nat n=64 --random 1 --verify

// A work-group per chunk and a tree reduction in local memory (the LIFT/Shine
// OpenCL `dot` and `asum`): the chunks become work-groups, the first stage's
// sequential reduction is fused with its map and spread over the work-items, its
// results are stored in local memory (`toMem local` on iterate's input, which also
// puts iterate's double buffers in local memory), and every step of the tree is a
// mapLocal; barriers separate the steps.
def reduceWorkGroup = DFNF ;
  toMapWorkGroup(0)  @ outermost(isMap) ;;
  fuseReduceMap      @ outermost(appliedReduce) ;;
  toMapLocal(0)      @ outermost(isMap) ;;
  toMapLocal(0)      @ outermost(isMap) ;;
  toMem(local) @ argument @ outermost(function(argOf(iterate, id))) ;;
  lowerToC

// Every point of a 2-D grid by its own work-item: the rows over dimension 1 of
// the global work-items, the columns over dimension 0 (neighbouring work-items
// read neighbouring memory). For the 5-point Jacobi stencil of stencil2d.rise.
// Every work-item computes one element of the outermost map (a row of a
// scan, say); what it computes inside is sequential.
def global1d = DFNF ; toMapGlobal(0) @ outermost(isMap) ;; lowerToC

def global2d = DFNF ;
  toMapGlobal(1) @ outermost(isMap) ;;
  toMapGlobal(0) @ outermost(isMap) ;;
  lowerToC

// global2d with vectors: every work-item computes 4 neighbouring points of a row
// as one float4 (the columns vectorized by 4, then spread over dimension 0). The
// rows above and below and the point's own row are read with one vector load
// each (OpenCL `vload4`, CUDA an aligned `float4` load); the left and right
// neighbours are 4 elements one off (OpenCL `vload4` at any element, CUDA
// `make_float4` of the elements), clamped lane by lane at the borders. For
// jacobi2d5 of stencil2d.rise with m a multiple of 4.
//
//   shine compile examples/stencil2d.rise --def jacobi2d5 --strategy examples/gpu.elv \
//     --apply global2dVec --target cuda
def global2dVec = DFNF ;
  toMapGlobal(1) @ outermost(isMap) ;;
  vectorize(4)   @ innermost(appliedMap) ;;
  toMapGlobal(0) @ innermost(isMap) ;;
  lowerToC

// Every point of a 3-D grid by its own work-item (dimensions 2, 1, 0 from the
// outermost), for the 7-point heat stencil of heat3d.rise.
def global3d = DFNF ;
  toMapGlobal(2) @ outermost(isMap) ;;
  toMapGlobal(1) @ outermost(isMap) ;;
  toMapGlobal(0) @ outermost(isMap) ;;
  lowerToC

// global3d with vectors, as global2dVec: every work-item computes 4 neighbouring
// points of a row as one float4 (the innermost map vectorized by 4, then spread
// over dimension 0). The point's own row and the rows above and below, in its
// plane and in the planes before and after, are one vector load each (OpenCL
// `vload4`, CUDA an aligned `float4` load); the left and right neighbours are 4
// elements one off, clamped lane by lane at the borders. For heat3d.rise's heat3d
// and stencils.rise's j3d7ptClamped with m a multiple of 4 (other sizes are
// refused: `4 divides m`).
//
//   shine compile examples/heat3d.rise --def heat3d --strategy examples/gpu.elv \
//     --apply global3dVec --target cuda
def global3dVec = DFNF ;
  toMapGlobal(2) @ outermost(isMap) ;;
  toMapGlobal(1) @ outermost(isMap) ;;
  vectorize(4)   @ innermost(appliedMap) ;;
  toMapGlobal(0) @ innermost(isMap) ;;
  lowerToC

// 2.5-D blocking of a 3-D stencil (issue 27): every work-item owns a column (y, x)
// of the grid and walks it along z, keeping the neighbourhoods of the planes z-1, z
// and z+1 in its registers: each step drops the oldest plane's, reads the next
// plane's (its 3x3 neighbourhood of (y, x); the compiler drops what the stencil
// does not read, the corners for a 7-point stencil) and computes one point, so
// every input element is read by a work-item once per column instead of three
// times. Derived by rules from the stencil as written (`padClamp3`, `slide3`,
// `map3`): the maps fused into one over the z windows (mapFusion), the z windows
// moved inside the y loop and then inside the x loop (slideInward, twice: the
// transposes of `slide3` become transposes of the input and of the result), the
// y and x loops over global dimensions 1 and 0, and the z loop over the windows
// computed in order (toSlideSeq: `slideSeq 3`, its window in private memory).
// streamColumns is the reordering alone; stream3dPar runs the same columns on CPU
// threads (C, OpenMP). For heat3d.rise's heat3d and stencils.rise's j3d7ptClamped.
//
//   shine compile examples/heat3d.rise --def heat3d --strategy examples/gpu.elv \
//     --apply stream3d --target cuda
def streamColumns = DFNF ; repeat(mapFusion @ topDown ; DFNF) ;
  slideInward @ topDown ;; slideInward @ topDown
def stream3d = streamColumns ;;
  toMapGlobal(1) @ outermost(isMap) ;;
  toMapGlobal(0) @ outermost(isMap) ;;
  toSlideSeq @ topDown ;;
  lowerToC
def stream3dPar = streamColumns ;;
  parallel @ outermost(isMap) ;;
  toSlideSeq @ topDown ;;
  lowerToC

// stream3d with vectors: every work-item walks 4 neighbouring columns together
// (vectorizeColumns(4): the x loop over groups of 4 columns, the window's values
// float4, the stencil's arithmetic on vectors), so each step reads the next plane's
// rows as float4 (the centre rows by aligned vector loads, the x neighbours 4
// elements one off, clamped lane by lane) and writes one float4. m must be a
// multiple of 4 (other sizes are refused: `4 divides m`). stream3dVecPar is the
// same on CPU threads (C, OpenMP).
//
//   shine compile examples/heat3d.rise --def heat3d --strategy examples/gpu.elv \
//     --apply stream3dVec --target cuda
def stream3dVec = streamColumns ;;
  toMapGlobal(1) @ outermost(isMap) ;;
  toMapGlobal(0) @ outermost(isMap) ;;
  vectorizeColumns(4) @ topDown ;;
  toSlideSeq @ topDown ;;
  lowerToC
def stream3dVecPar = streamColumns ;;
  parallel @ outermost(isMap) ;;
  vectorizeColumns(4) @ topDown ;;
  toSlideSeq @ topDown ;;
  lowerToC

// mv with the CUDA names of the same levels (blocks and threads): Listing 3's
// strategy, compiling to the same kernel.
def mvBlocks = DFNF ;
  splitJoinMap(32)   @ outermost(appliedMap) ;;
  toMapBlock(0)      @ outermost(isMap) ;;
  toMapThread(0)     @ outermost(isMap) ;;
  fuseReduceMap      @ outermost(appliedReduce) ;;
  lowerToC

// reduceWorkGroup for the partial results, which go to global memory; the sum of
// the partial results is a second kernel (the end of the first is where every
// work-group has finished).
def reduceTwoKernels = reduceWorkGroup ;
  toMem(global) @ argument @ outermost(appliedReduce)

// A reduction at copy bandwidth in two kernels, derived by rules (issue 27): the
// first kernel's g work-groups of b work-items each reduce a chunk of ⌈n/g⌉
// consecutive elements, work-item i of a chunk its elements i, i+b, i+2b, ...
// (partialReduceStrided: neighbouring work-items read neighbouring memory), then
// the work-group's b partial results in local memory by a tree (treeReduce: log2 b
// halving steps, barriers between them). The g partial results go to global
// memory; the second kernel is one work-group of b work-items doing the same
// over them (a third launch of one work-item adds the work-group's one result to
// the initial value). Any n: the rules pad with the operator's neutral element (a
// guarded read). For reductions whose operator is add, mul, min or max with its
// neutral element (dot, asum, sum); b a power of two.
//
//   shine run examples/dot.rise --def dot --strategy examples/gpu.elv \
//     --apply "reduceBlocks(1024, 256)" --target cuda --nat n=1000003 --random 1 --verify
def reduceBlocks(g, b) = DFNF ;
  blockPartials(g, b) @ outermost(appliedReduce) ;;
  toMem(global)       @ argument @ outermost(appliedReduce) ;;
  blockPartials(1, b) @ outermost(appliedReduce) ;;
  toMem(global)       @ argument @ outermost(appliedReduce) ;;
  lowerToC

// At a `reduce f z xs`: the reduction of g partial results, one per work-group, each
// the tree reduction of its b work-items' strided partial results (reduceBlocks).
def blockPartials(g, b) = partialReduce(g) ;;
  partialReduceStrided(b) @ body @ argument @ function @ argument ;;
  treeReduce              @ argument ;;
  workGroupTree           @ argument @ argument

// At `map (fun c => iterate k step (map r xs)) cs` (after treeReduce): a work-group
// per chunk, its work-items computing the partial results (`map r`) into local
// memory, then every step of the tree (iterate's buffers in local memory too).
def workGroupTree = toMapWorkGroup(0) @ outermost(isMap) ;;
  toMapLocal(0) @ outermost(isMap) @ body @ argument @ function ;;
  toMapLocal(0) @ outermost(isMap) @ body @ argument @ function ;;
  toMem(local)  @ argument @ outermost(function(argOf(iterate, id))) @ body @ argument @ function

// reduceBlocks with the last steps in registers (issue 27): within a work-group of b
// work-items (b a multiple of 32, at most 1024), every warp reduces its 32 lanes'
// strided partial results by shuffles (reduceWarp: `__shfl_xor_sync` in the
// interpreter's butterfly order; each lane computes its own partial result first),
// the b/32 results of the warps go to local memory, and one warp reduces those (padded
// with the neutral element to 32): one barrier instead of log2 b. The second kernel
// does the same over the g partial results. CUDA only (OpenCL would need sub-groups).
//
//   shine run examples/dot.rise --def dot --strategy examples/gpu.elv \
//     --apply "reduceBlocksWarp(1024, 256)" --target cuda --nat n=1000003 --random 1 --verify
def reduceBlocksWarp(g, b) = DFNF ;
  blockWarpPartials(g, b) @ outermost(appliedReduce) ;;
  toMem(global)           @ argument @ outermost(appliedReduce) ;;
  blockWarpPartials(1, b) @ outermost(appliedReduce) ;;
  toMem(global)           @ argument @ outermost(appliedReduce) ;;
  lowerToC

// At a `reduce f z xs`: the reduction of g partial results, one per work-group, each
// reduced by the warps of its b work-items (reduceBlocksWarp).
def blockWarpPartials(g, b) = partialReduce(g) ;;
  partialReduceStrided(b) @ body @ argument @ function @ argument ;;
  reduceByWarps           @ argument ;;
  workGroupWarps          @ argument @ argument

// At `map (fun c => map W2 (split 32 (padCst 0 p z (map W1 (split 32 ys))))) cs` (after
// reduceByWarps): a work-group per chunk, its warps reducing 32 values each (W1), their
// results in local memory, then one warp over those (W2).
def workGroupWarps = toMapWorkGroup(0) @ outermost(isMap) ;;
  toMapWarp @ outermost(isMap) @ body @ argument @ function ;;
  toMapWarp @ outermost(isMap) @ body @ argument @ function ;;
  toMem(local) @ argument @ outermost(applied(padCst)) @ body @ argument @ function

// A parallel prefix scan derived by rules (issue 27), reduce-then-scan in four kernels:
// partialScan(g) splits `scanSeq f init xs` into g chunks of ⌈n/g⌉ consecutive elements
// (the last padded with f's neutral element); the first kernel reduces every chunk (one
// work-item each), a second of one work-item scans the g sums one behind (chunk j's
// offset), a third scans every chunk from its offset (one work-item each) into a padded
// buffer, and a fourth copies the n results out (mapCopy; no copy kernel when n is a
// constant multiple of g). For scans whose operator is add, mul, min, max, fmin or fmax
// (inclusive, or exclusive as a scan of the input shifted right); integers exact, floats
// regrouped within the verification tolerance. Any n; OpenCL and CUDA.
//
//   shine run examples/scan.rise --def prefixSum --strategy examples/gpu.elv \
//     --apply "scanChunks(4096)" --target opencl --nat n=1000003 --random 1 --verify
def scanChunks(g) = DFNF ;
  partialScan(g) @ outermost(applied(scanSeq)) ;;
  try(applied(take) ; mapCopy ; toMem(global) @ argument @ argument) @ body ;;
  toMem(global)  @ argument @ argument @ function @ outermost(applied(zip)) ;;
  toMem(global)  @ argument @ outermost(applied(padCst)) ;;
  toMapGlobal(0) @ outermost(isMap) ;;
  toMapGlobal(0) @ outermost(isMap) ;;
  toMapGlobal(0) @ outermost(isMap) ;;
  lowerToC

// Row reductions at bandwidth (issue 27): `map (fun row => reduce f z (...row...)) rows`
// (mv's dot products) with every row read coalesced. A work-group of b work-items per
// row, work-item i summing the row's elements i, i+b, ... (partialReduceStrided), the b
// sums reduced by a tree in local memory (workGroupTree). Any row length (the tail is
// padded with the neutral element); b a power of two; OpenCL and CUDA.
//
//   shine run examples/mv.rise --def mv --strategy examples/gpu.elv \
//     --apply "rowsByWorkGroups(256)" --target opencl --nat n=7 --nat m=1001 --random 1 --verify
def rowsByWorkGroups(b) = DFNF ;
  partialReduceStrided(b) @ outermost(appliedReduce) ;;
  treeReduce              @ outermost(appliedMap) ;;
  workGroupTree           @ argument @ body @ body ;;
  lowerToC

// rowsByWorkGroups with the b sums reduced by warp shuffles (reduceByWarps: each warp
// its 32 lanes, then one warp the b/32 results through local memory); b a multiple of
// 32 up to 1024. CUDA only.
def rowsByWarps(b) = DFNF ;
  partialReduceStrided(b) @ outermost(appliedReduce) ;;
  reduceByWarps           @ outermost(appliedMap) ;;
  workGroupWarps          @ argument @ body @ body ;;
  lowerToC

// A warp per row, w rows per work-group: lane l sums the row's elements l, l+32, ...
// and the warp's 32 sums meet by shuffles (reduceToWarp); no local memory, no barrier.
// The number of rows a multiple of w (refused otherwise); CUDA only.
def rowPerWarp(w) = DFNF ;
  partialReduceStrided(32) @ outermost(appliedReduce) ;;
  reduceToWarp             @ outermost(appliedReduce) ;;
  splitJoinMap(w)          @ outermost(appliedMap) ;;
  toMapWorkGroup(0)        @ outermost(isMap) ;;
  toMapWarp                @ outermost(isMap) ;;
  lowerToC

// mvT's columns (`map (fun col => reduce ...) (transpose mat)`) with the reduction split
// in p chunks of consecutive rows (partialReduce): a first kernel of n x p work-items, the
// columns over dimension 0 (neighbouring work-items read neighbouring elements of a row),
// the chunks over dimension 1, their partial sums stored in global memory (mapFission,
// toMem); a second kernel sums each column's p partial sums. Any size.
//
//   shine run examples/mv.rise --def mvT --strategy examples/gpu.elv \
//     --apply "columnsSplitK(32)" --target opencl --nat m=1031 --nat n=7 --random 1 --verify
def columnsSplitK(p) = DFNF ;
  partialReduce(p) @ outermost(appliedReduce) ;;
  mapFission       @ outermost(appliedMap) ;;
  toMem(global)    @ argument @ outermost(appliedMap) ;;
  // the second kernel's map, then the columns, then the chunks
  toMapGlobal(0)   @ outermost(isMap) ;;
  toMapGlobal(0)   @ outermost(isMap) ;;
  toMapGlobal(1)   @ outermost(isMap) ;;
  lowerToC

// Row normalizations at bandwidth (issue 27): softmax, layer norm and RMS norm of
// norms.rise with a work-group per row. The default schedules' `let`s (computeOnce: the
// row's maximum, mean or sum of squares bound once; softmax's exponentials stored)
// stay; every reduction a `let` binds becomes b strided partial results and a tree in
// local memory (letTree), whose one result every work-item then reads; the row's
// elementwise maps are spread over the work-items. Any row length; b a power of two.
//
//   shine run examples/norms.rise --def softmax --strategy examples/gpu.elv \
//     --apply "rowsNorm(256)" --target opencl --nat m=7 --nat n=1001 --random 1 --verify
def rowsNorm(b) = DFNF ; computeValuesOnce ;
  toMapWorkGroup(0)  @ outermost(isMap) ;;
  letTree(b)         @ outermost(applied(let)) ;;
  try(letTree(b)     @ outermost(applied(let))) ;;
  lowerToC

// rowsNorm with a warp per row (issue 27), w rows per work-group: every reduction a `let`
// binds is the warp's (warpReduceLet: lane l reduces the row's elements l, l+32, ...,
// the 32 results meet by shuffles and every lane gets the value), and the row's
// elementwise maps are spread over the lanes (mapLane: lane l computes the elements l,
// l+32, ..., coalesced). No local memory; a value the lanes store and read back (softmax's
// exponentials) is separated by a warp barrier (`__syncwarp`), not a work-group one. Any
// row length; the number of rows a multiple of w (refused otherwise); CUDA only.
//
//   shine run examples/norms.rise --def softmax --strategy examples/gpu.elv \
//     --apply "rowsNormWarp(8)" --target cuda --nat m=64 --nat n=1001 --random 1 --verify
def rowsNormWarp(w) = DFNF ; computeValuesOnce ;
  splitJoinMap(w)    @ outermost(appliedMap) ;;
  toMapWorkGroup(0)  @ outermost(isMap) ;;
  toMapWarp          @ outermost(isMap) ;;
  letWarp            @ outermost(applied(let)) ;;
  try(letWarp        @ outermost(applied(let))) ;;
  lowerToC

// rowsNormWarp with the row in registers (issue 27): each lane first copies its elements
// l, l+32, ... of the row into private memory `32.(n/32)` (laneRegisters: `transpose (split
// 32 row)`, the lane its outer dimension), and every pass (the reductions, the elementwise
// maps, the normalized write) reads that copy: the row is read from global memory once and
// written once. A stored array the lanes compute (softmax's exponentials) is kept by them
// in private memory too (storeByLanes), and the maps run over the lanes' own rows
// (laneRows). CUDA keeps each lane's n/32 values in registers (`float r[n/32]`, its loops
// unrolled). For a constant row length n, a multiple of 32 of at most 2048 (a definition
// of norms.rise with n fixed: softmax1024); any other row is refused with the reason; the
// number of rows a multiple of w; CUDA only.
//
//   shine run examples/norms.rise --def softmax1024 --strategy examples/gpu.elv \
//     --apply "rowsNormWarpRegs(8)" --target cuda --nat m=64 --random 1 --verify
def rowsNormWarpRegs(w) = DFNF ; computeValuesOnce ;
  splitJoinMap(w)    @ outermost(appliedMap) ;;
  toMapWorkGroup(0)  @ outermost(isMap) ;;
  toMapWarp          @ outermost(isMap) ;;
  laneRegisters      @ argument @ function @ outermost(applied(mapWarp)) ;;
  letWarp            @ outermost(applied(let)) ;;
  try(letWarp        @ outermost(applied(let))) ;;
  normalize(laneRows) ;;
  normalize(storeByLanes) ;;
  normalize(laneRows) ;;
  lowerToC

// rowsNorm with the row in the work-group's registers (issue 27; rows too long for a warp's
// registers): a work-group of b work-items per row, work-item i (warp ⌊i/32⌋, lane i mod
// 32) first copies its elements i, i+b, ... of the row into private memory
// `(b/32).32.(n/b)` (groupRegisters: `split 32 (transpose (split b row))`), and every
// pass reads that copy: the row is read from global memory once and written once.
// Every reduction a `let` binds is the work-group's (groupReduceLet): each work-item
// reduces its own values, each warp its 32 results by shuffles into local memory, then
// every warp the b/32 warps' results by shuffles (one barrier per reduction, no tree,
// every work-item gets the value). The elementwise maps run over the work-items' own
// rows (groupRows), and a stored array they compute (softmax's exponentials) stays in
// their registers (storeByGroup). CUDA keeps each work-item's n/b values in registers
// (`float r[n/b]`, its loops unrolled). For a constant row length n, a multiple of b of
// at most 64·b (norms.rise's softmax8192, layerNorm32768, ...), b a multiple of 32 of at
// most 1024; any other row is refused with the reason; CUDA only (warp shuffles).
//
//   shine run examples/norms.rise --def softmax8192 --strategy examples/gpu.elv \
//     --apply "rowsNormGroupRegs(1024)" --target cuda --nat m=64 --random 1 --verify
def rowsNormGroupRegs(b) = DFNF ; computeValuesOnce ;
  groupRegisters(b)  @ argument @ function @ outermost(appliedMap) ;;
  toMapWorkGroup(0)  @ outermost(isMap) ;;
  normalize(letGroup(b)) ;;
  normalize(groupRows) ;;
  normalize(storeByGroup) ;;
  normalize(groupRows) ;;
  lowerToC

// At `let C[reduce f z xs] (fun h => B)`: the reduction by the work-group of b work-items
// (groupReduceLet), and B's map spread over the work-items (groupRows makes it theirs).
def letGroup(b) = groupReduceLet(b) ;; try(toMapLocal(0) @ function @ function) @ body @ argument

// At `let C[reduce f z xs] (fun h => B)`: the reduction by the warp (warpReduceLet), and
// B's map spread over the lanes.
def letWarp = warpReduceLet ;; try(toMapLane @ function @ function) @ body @ argument

// The default schedules' computeOnce (`shine strategies --show`).
def computeValuesOnce = normalize(hoistInvariant) ; normalize(shareRepeated) ; normalize(storeShared)

// At `let C[reduce f z xs] (fun h => B)`: the reduction of b strided partial results
// (their work-items in dimension 0), a tree of log2 b steps in local memory, its one
// result `r` bound for the value (`join (mapSeq (fun r => let C[r] (fun h => B)) tree)`),
// and B's map spread over the work-items.
def letTree(b) =
  partialReduceStrided(b) @ outermost(appliedReduce) @ argument @ function ;;
  treeReduceLet ;;
  // the one-element map over the tree's result
  toMapSeq      @ function @ function @ argument ;;
  // the partial results, then every step of the tree; both in local memory
  toMapLocal(0) @ function @ function @ argument @ argument @ argument ;;
  toMapLocal(0) @ outermost(isMap) @ argument @ function @ argument @ argument ;;
  toMem(local)  @ argument @ argument @ argument ;;
  toMem(local)  @ argument @ argument ;;
  // B, where it is a map
  try(toMapLocal(0) @ function @ function) @ body @ argument @ body @ argument @ function @ argument

// Matrix multiplication with 2-D register blocking (the register blocking of
// LIFT's CGO'17 matmul, without its local-memory tiles): the result is tiled in
// 4x4 blocks, the reduction over k moved outside the block's loops so that its
// accumulator is a 4x4 block, and every work-item computes one block, its
// accumulator in private memory (registers), the block's loops unrolled.
// For mm in mm.rise (m and n multiples of 4).
def mmRegisterBlocks = mmBlocks(4)

// The same with blocks of b x b (m and n multiples of b).
def mmBlocks(b) = DFNF ; fuseReduceMap @ topDown ;;
  tile(b, b)       @ outermost(mapNest(2)) ;;
  fissionReduceMap @ outermost(appliedReduce) ;;
  reorder([1, 2, 5, 3, 4]) ;;
  toMapGlobal(1)   @ function @ function @ atLoop(0) ;;
  toMapGlobal(0)   @ function @ function @ atLoop(1) ;;
  unroll           @ function @ function @ atLoop(3) ;;
  unroll           @ function @ function @ atLoop(4) ;;
  lowerToC

// For programs written with the GPU primitives already (gpu_mm.rise): only what is
// left, sequentially.
def lowered = lowerToC

// Matrix multiplication with local-memory tiles and register blocks, derived from
// `mm` in mm.rise (the structure of LIFT's CGO'17 matmul and Shine's `mmNVIDIA`;
// the hand-written low-level RISE of gpu_mm.rise, here from a strategy): every
// work-group computes a t x t tile of the result with w x w work-items (w = t / r),
// every work-item an r x r block of it, its accumulators in registers; k is walked
// in steps of kb, the kb columns of a's tile and kb rows of b's copied into local
// memory by the whole work-group first (coalesced), so that every element read from
// global memory is used by w work-items. For m and n multiples of t, k of kb.
//
//   shine run examples/mm.rise --def mm --strategy examples/gpu.elv \
//     --apply "mmTiled(128, 8, 8, 16)" --target cuda --nat m=256 --nat n=256 --nat k=64 --random 1 --verify
def mmTiled(t, r, kb, w) = mmTiledRect(t, t, r, r, kb, w, w)

// mmTiled with rectangular tiles and blocks: a work-group computes a tm x tn tile of
// the result (tm rows of a, tn columns of b) with wm x wn work-items (wm = tm / rm in
// dimension 1, wn = tn / rn in dimension 0), every work-item an rm x rn block. The
// copies of the two tiles into local memory are shared by all wm * wn work-items, so
// tm * kb and tn * kb must be multiples of wm * wn. For m a multiple of tm, n of tn,
// k of kb (the convolution layers of vgg.rise as matrix products, whose sizes are
// rarely multiples of one square tile).
def mmTiledRect(tm, tn, rm, rn, kb, wm, wn) = DFNF ; mmTiledSteps(tm, tn, rm, rn, kb, wm, wn) ;; lowerToC

// The steps of mmTiledRect, at the focus: the first loop nest below it is the matrix
// product's (mmSplitK applies them inside a map).
def mmTiledSteps(tm, tn, rm, rn, kb, wm, wn) = fuseReduceMap @ topDown ;;
  // the loops: tiles of tm x tn, blocks of rm x rn in them, k in steps of kb
  tile(tm, tn)      @ outermost(mapNest(2)) ;;
  tile(rm, rn)      @ atLoop(2) ;;
  blockReduceZip(kb) @ atLoop(6) ;;
  // the reductions over k become reductions of outer products: of the block of a
  // work-item (for every step of kb, then within it), then of the tile
  reduceOuter       @ atLoop(4) ;;
  reduceOuter       @ atLoop(5) ;;
  reduceOuter       @ atLoop(2) ;;
  // the levels: work-groups for the tiles, work-items for the blocks, the block's
  // loops unrolled (its accumulators stay in registers)
  toMapWorkGroup(1) @ function @ function @ atLoop(0) ;;
  toMapWorkGroup(0) @ function @ function @ atLoop(1) ;;
  toMapLocal(1)     @ function @ function @ atLoop(3) ;;
  toMapLocal(0)     @ function @ function @ atLoop(4) ;;
  unroll            @ function @ function @ function @ atLoop(5) ;;
  unroll            @ function @ function @ atLoop(6) ;;
  unroll            @ function @ function @ atLoop(7) ;;
  // every work-item initialises and writes out its own block
  toMapLocal(1)     @ function @ function @ argument @ function @ atLoop(2) ;;
  toMapLocal(0)     @ outermost(isMap) @ argument @ function @ atLoop(2) ;;
  // the two tiles of every step through local memory, k-major (see tileA, tileB)
  storeLocal(isApp(isFst), tileA(wm, wn)) @ reduceBody @ atLoop(2) ;;
  storeLocal(isApp(isSnd), tileB(wm, wn)) @ body @ argument @ reduceBody @ atLoop(2) ;;
  copyByWorkItems   @ atLoop(2)

// Split-K matrix products (vggGemmSplitK of vgg.rise: `toMem global (map (fun chunk =>
// MM) chunks) (fun partials => SUMS)`): the product of every chunk of the reduction is
// tiled as in mmTiledRect, the chunks spread over dimension 2 of the work-groups, their
// partial results stored in global memory; a second kernel sums them, one work-item
// per result element (dimensions 1 and 0).
def mmSplitK(tm, tn, rm, rn, kb, wm, wn) = DFNF ;
  mmTiledSteps(tm, tn, rm, rn, kb, wm, wn) @ body @ argument @ function @ argument @ function @ body @ body ;;
  toMapWorkGroup(2) @ function @ function @ argument @ function @ body @ body ;;
  toMapGlobal(1)    @ outermost(isMap) @ body @ argument @ body @ body ;;
  toMapGlobal(0)    @ outermost(isMap) @ body @ argument @ body @ body ;;
  lowerToC

// The body of a reduction's operator: `reduce (fun acc y => BODY) init xs`.
def reduceBody(s) = s @ body @ body @ argument @ function @ function

// A tile `e : (tm/rm).rm.kb` of a's rows stored k-major (kb.tm: a work-item's rm
// values for one k are consecutive) and read back as `split rm (transpose mem)`;
// copied in a's order (kb consecutive elements of a row, then the next row) by
// wm x wn work-items, and written transposed.
def tileA(wm, wn) = joinSplit ;
  (addId ; idToTranspose) @ argument ;
  copyLocal(wm, wn) @ argument @ argument @ argument ;
  toMem(local)      @ argument @ argument

// The same for a tile of b's columns, copied in the stored order (a row of b's
// tile, consecutive in b, then the next row).
def tileB(wm, wn) = joinSplit ;
  (addId ; idToTranspose) @ argument ;
  copyLocal(wm, wn) @ argument @ argument ;
  toMem(local)      @ argument @ argument

// A parallel prefix scan at bandwidth (issue 27), five kernels, every global access of the
// n elements coalesced: scanTiled(b, k) splits `scanSeq f init xs` into tiles of b·k
// consecutive elements (the last padded with f's neutral element); the first kernel scans
// every tile with a work-group of b work-items in local memory (workGroupScan(b): work-item
// i copies the elements i, i+b, ... in, reduces its k consecutive elements, the b sums are
// scanned by ⌈log2 b⌉ Hillis-Steele steps with barriers between them, each work-item scans
// its k elements from its offset, and the tile is copied out as it came in). The tiles'
// totals, scanned one behind from init (tile j's offset), are scanned by scanTiled(b, k)
// again: a second kernel scans them by tiles of b·k, a third (one work-item) the n/(b·k)²
// totals of those, a fourth adds those offsets to the tiles' totals; a fifth combines every
// element with its tile's offset (one work-item per element). For scans whose operator is
// add, mul, min, max, fmin or fmax (inclusive, or exclusive as a scan of the input shifted
// right); integers exact, floats regrouped. Any n; b at most 1024, b·k at most 8192
// (refused otherwise); OpenCL and CUDA.
//
//   shine run examples/scan.rise --def prefixSumI32 --strategy examples/gpu.elv \
//     --apply "scanTiles(256, 8)" --target opencl --nat n=1000003 --random 1 --verify
def scanTiles(b, k) = DFNF ;
  scanTiled(b, k)   @ outermost(applied(scanSeq)) ;;
  scanTiled(b, k)   @ argument @ function @ body @ argument @ outermost(applied(let)) ;;
  workGroupScan(b)  @ topDown ;;
  workGroupScan(b)  @ topDown ;;
  toMapWorkGroup(0) @ outermost(isMap) ;;
  toMapWorkGroup(0) @ outermost(isMap) ;;
  storeShared       @ outermost(applied(let)) ;;
  storeShared       @ outermost(applied(let)) ;;
  toMem(global)     @ argument @ function @ innermost(applied(let)) ;;
  toMapGlobal(0)    @ function @ function @ body @ argument @ innermost(applied(let)) ;;
  toMem(global)     @ argument @ function @ outermost(applied(let)) ;;
  toMapGlobal(0)    @ function @ function @ body @ argument @ outermost(applied(let)) ;;
  lowerToC

// A single-pass prefix scan (issue 27): Merrill and Garland's decoupled look-back, every
// element read from and written to global memory once (2n accesses, against scanTiles' 4n).
// singlePassScan(b, k) turns `scanSeq f init xs` into scanLookback over tiles of b·k
// consecutive elements (the last padded with f's neutral element), each scanned from the
// neutral element by workGroupScanInLocal(b) in local memory (workGroupScan's steps, the
// scanned tile read where it lies, not copied out). A first kernel zeroes the tiles'
// descriptors and a counter; in the second, every work-group takes its tile's number from
// the counter (atomically: tiles are numbered in the order the work-groups start, so a
// work-group only ever waits for tiles of work-groups already running), scans its tile,
// publishes the tile's aggregate in the tile's descriptor (status and value in one 64-bit
// word, written atomically), looks back over its predecessors' descriptors (waiting while
// one has nothing yet, adding aggregates until an inclusive prefix; on CUDA the first warp
// looks at 32 predecessors at once: a vote for the nearest inclusive prefix, shuffles to
// fold the window; on OpenCL one work-item, one at a time), publishes its own inclusive
// prefix and writes its tile, every element combined with the tile's exclusive prefix.
// For add, mul, min, max, fmin or fmax scans of 32-bit elements (i32, u32, int, f32;
// refused otherwise), inclusive or exclusive; integers exact, floats regrouped. Any n; b at
// most 1024, b·k at most 8192 (above 4096 f32 elements the two copies of the tile take
// 64 KiB of local memory: CUDA's dynamic shared memory; an OpenCL device with less refuses).
// CUDA, and OpenCL devices with 64-bit atomics (cl_khr_int64_base_atomics; PoCL has them);
// C and OpenMP refuse it. scanLookbackWarp(b, k) and scanLookbackWarpDirect(b, k) below scan
// the tile by warps (CUDA only).
//
//   shine run examples/scan.rise --def prefixSumI32 --strategy examples/gpu.elv \
//     --apply "scanLookback(256, 8)" --target opencl --nat n=1000003 --random 1 --verify
def scanLookback(b, k) = DFNF ;
  singlePassScan(b, k)    @ outermost(applied(scanSeq)) ;;
  workGroupScanInLocal(b) @ topDown ;;
  lowerToC

// scanLookback(b, k) with the tile scanned by warps (workGroupScanWarps(b), CUDA only: b a
// multiple of 32): every work-item reduces its k consecutive elements, each warp scans its
// 32 sums by shuffles (scanWarp: __shfl_up_sync), one warp scans the warps' totals, and
// every work-item scans its elements from the fold of the sums before it: three local
// buffers and barriers where workGroupScanInLocal's Hillis-Steele steps take one per step.
// OpenCL refuses warps (mapWarp, scanWarp): use scanLookback there.
//
//   shine run examples/scan.rise --def prefixSumI32 --strategy examples/gpu.elv \
//     --apply "scanLookbackWarp(256, 8)" --target cuda --nat n=1000003 --random 1 --verify
def scanLookbackWarp(b, k) = DFNF ;
  singlePassScan(b, k)  @ outermost(applied(scanSeq)) ;;
  workGroupScanWarps(b) @ topDown ;;
  lowerToC

// scanLookbackWarp(b, k) with one copy of the tile in local memory (workGroupScanWarpsDirect(b),
// CUDA only): every work-item reads its k consecutive elements from global memory itself,
// once for its sum and once for its scan (the second read finds them in the caches), and
// only the scanned tile is kept in local memory: tiles of b·k up to 8192 f32 elements in
// 32 KiB of static shared memory, where scanLookbackWarp's two copies take 64 KiB of dynamic
// shared memory.
//
//   shine run examples/scan.rise --def prefixSumI32 --strategy examples/gpu.elv \
//     --apply "scanLookbackWarpDirect(256, 32)" --target cuda --nat n=1000003 --random 1 --verify
def scanLookbackWarpDirect(b, k) = DFNF ;
  singlePassScan(b, k)        @ outermost(applied(scanSeq)) ;;
  workGroupScanWarpsDirect(b) @ topDown ;;
  lowerToC
