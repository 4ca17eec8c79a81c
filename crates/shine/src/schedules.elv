// shine's built-in schedules: generic strategies that compile any well-typed RISE
// program, on every target. Without --strategy, `shine compile` and `shine run`
// apply the default of the target (c: blisProducts, else storeEveryStage; openmp:
// blisProductsPar, else storeEveryStagePar; opencl and cuda: tiledProducts, else the row
// reductions, else storeEveryStageGpu: the first that compiles the definition); `--apply NAME` without --strategy applies
// any definition of this file. Print it with `shine strategies --show`; copy it to
// start a schedule of your own.
//
// The store-every-stage schedules are Halide's `compute_root` on every stage: an
// array computed by a map is computed where it is read (fused into its reader),
// unless its elements need a loop or memory of their own (a reduction, a scan, an
// iteration); then it is a *stage* and is stored, at the outermost level where it
// does not change: outside every loop whose variable it does not mention
// (storeInMemory places it at the outermost node at which everything it mentions is
// bound). atax's `A·x` is stored once, before the loop over the result, not once
// per element of the result.

// What a map computed where it is read cannot contain: a loop that needs memory.
def needsMemory = isReduce <+ applied(scanSeq) <+ applied(iterate) <+ isToMem

// A stage: a map (not yet lowered: lowerToC leaves only the maps that are read) whose
// function needs memory.
def stage = applied(map) ; (needsMemory @ topDown) @ argument @ function

// A `generate` whose function needs memory (a histogram: `generate (fun i => reduce ...)`)
// cannot be a view: it becomes a map over the indices, a stage like any other.
def generatesWithLoops = normalize((applied(generate) ; (needsMemory @ topDown) @ argument) ; generateToMap)

// Every stage stored, outermost first; each is lowered as the program's result is.
def storeStages = normalize(storeInMemory(stage, lowerToC))

// s on every outermost loop: on a loop, s where it applies (and nothing inside);
// anywhere else, the same in every part.
def outermostLoops(s) = isLoop ; try(s) <+ all(outermostLoops(s))

// A `scatter` whose result a map reads (`map f (scatter is xs)`: the final scatters of the
// PPCG stencils in examples/stencils.rise) is no view: stored where it stands.
def storeReadScatters =
  normalize(isApp(isApp(isMap)) ; argument(applied(scatter) ; storeInMemory(applied(scatter), lowerToC)))

// A sequential scan or an iteration: a loop that writes its whole result to memory.
def scanOrIterate = applied(scanSeq) <+ applied(iterate)

// A `scanSeq` or `iterate` whose result is read (an argument of anything but `toMem`:
// `map f (scanSeq g init xs)`, a time loop read by a stencil) is stored where it stands.
def storeReadLoops =
  normalize(isApp(not(isPrim(toMem))) ; argument(scanOrIterate ; storeInMemory(scanOrIterate, lowerToC)))

// Every value computed once: a reduction that a mapped function computes without its
// argument (a row's sum in `map (fun x => x / sum row) row`) bound once outside the map,
// a value a function computes twice bound once, and an array bound so that it is read
// more than once (softmax's `exp (x - max)`, read by the sum and by the division) stored.
// Only values that cannot fail are moved (no integer division, cast to an integer, index from data...).
def computeOnce = normalize(hoistInvariant) ; normalize(shareRepeated) ; normalize(storeShared)

// s on every node outside the function of every map and reduction (in a loop's input, a
// let's value, an iteration's step, the program's body), wherever it applies.
def outsideLoops(s) = try(s) ; ((isLoop ; argument(outsideLoops(s))) <+ all(outsideLoops(s)))

// The padded array a stencil's `slide` reads (`padClamp2 2 2 img |> slide2 5 1`: the slide
// of the rows of the pad, or of the pad itself), outside every map and reduction, copied
// with its border (storePadded, then `copy` on the stored `toMem global c (fun v => v)`): the
// stencil then reads it at affine indices, without a clamp or a test per read, which the
// C compiler vectorizes.
def paddedOfSlide(copy) = (storePadded ; copy) <+ (isApp(isApp(isMap)) ; argument(paddedOfSlide(copy)))
def storeStencilInputs(copy) = outsideLoops(isApp(isPrim(slide)) ; argument(paddedOfSlide(copy)))

// The copy's outer loop (of `toMem global c (fun v => v)`) in parallel.
def parallelCopy = ((toMap ; parallel) @ function @ function) @ argument @ function

// A reduction over at most 32 elements, a constant number (a 5x5 window), unrolled: its
// indices (`/5`, `%5` of a joined window) and the elements of a literal array it reads
// (the weights) become constants.
def unrollShortReductions = normalize(unrollShort(32))

// Every stage stored (storeEveryStage's steps after `pre`), short reductions unrolled.
def storeEveryStageAfter(pre) = DFNF ; pre ; generatesWithLoops ; computeOnce ; lowerToC ; storeStages ; storeReadScatters ; storeReadLoops ; lowerToC ; unrollShortReductions

// Sequential: every loop that writes memory a sequential loop, every stage stored, the
// padded inputs of stencils stored.
def storeEveryStage = storeEveryStageAfter(storeStencilInputs(id))

// OpenMP: storeEveryStage with the outermost loop of every stage, of the copy of a
// stencil's padded input and of the result in parallel (`parallel for`); loops inside
// them stay sequential.
def storeEveryStagePar = storeEveryStageAfter(storeStencilInputs(parallelCopy)) ;
  outermostLoops((toMap ; parallel) @ function @ function)

// At a lowered loop `mapSeq f xs`: its iterations over the global work-items of dimension d.
def overGlobal(d) = (toMap ; toMapGlobal(d)) @ function @ function

// At a loop whose function's body is directly a map loop (`mapSeq (fun row => mapSeq g
// ys) rows`: matmul's rows and columns, an element-wise 2-D stage, a stencil's rows), s on
// that inner loop. A stage stored per row (`fun row => toMem ...`, or an input `ys` that
// stores one: every work-item of the row would write it) is no such loop.
def innerMapLoop(s) =
  (isLoop ; appliedMap ; not((isToMem <+ isLoop) @ topDown) @ argument ; s) @ body @ argument @ function

// A loop over the global work-items: a nest of two maps over two dimensions, the inner
// over dimension 0 (consecutive work-items along the contiguous inner dimension: their
// writes, and matmul's reads of b, coalesced), the outer over dimension 1; any other loop
// over dimension 0.
def overGlobalNest = (innerMapLoop(overGlobal(0)) ; overGlobal(1)) <+ overGlobal(0)

// OpenCL and CUDA: storeEveryStage, the padded inputs of stencils left views (a clamp is
// cheap beside a global read), with every element of the outermost loop of every stage
// and of the result computed by its own global work-item (each stage its own kernel),
// over two dimensions where that loop's function is itself a map (overGlobalNest);
// loops inside them stay sequential.
def storeEveryStageGpu = storeEveryStageAfter(id) ; outermostLoops(overGlobalNest)

// Row reductions on a GPU (issue 27's strategies, tried first by the defaults of OpenCL and
// CUDA; where one does not compile a definition, storeEveryStageGpu does): a program
// `map (fun row => ... reduce f z row ...) rows` (softmax, layer norm, RMS norm, row sums,
// mv) with every row read coalesced by many work-items instead of one.

// OpenCL: a work-group of 64 work-items per row: every reduction a `let` binds (a row's
// maximum, mean, sum of squares) computed by all of them and a tree in local memory, the
// row's elementwise maps spread over them (rowsNorm); else, where a row's function is a
// reduction (mv, row sums), a row reduced by its work-group (rowsByWorkGroups). Any row
// length; rows as longRows says.
def rowReductionsByWorkGroups = longRows ; (rowsNorm(64) <+ (rowIsReduction ; rowsByWorkGroups(64)))

// CUDA: a warp per row, one per block: every reduction a `let` binds by the warp's
// shuffles, the row's elementwise maps spread over its lanes (rowsNormWarp); else, where a
// row's function is a reduction, a row reduced by its warp (rowPerWarp). Any row length and
// number of rows; rows as longRows says.
def rowReductionsByWarps = longRows ; (rowsNormWarp(1) <+ (rowIsReduction ; rowPerWarp(1)))

// The outermost loop is a map over rows laid out in memory (no `transpose` in its input:
// mvT's columns, which a work-item each already reads coalesced) whose function reduces no
// window of at most 32 elements (a stencil's, a tree's pairs: short rows, a work-item each).
def longRows = DFNF ;
  (appliedMap ; not(isTranspose @ topDown) @ argument ; not(unrollShort(32) @ topDown) @ argument @ function) @ atLoop(0)

// The outermost map's function is a reduction: `map (fun row => reduce f z ...) rows` (not
// matmul's `map (fun row => map (fun col => reduce ...) cols) rows`, whose rows are better
// over two dimensions).
def rowIsReduction = DFNF ; (appliedMap ; appliedReduce @ body @ argument @ function) @ atLoop(0)

// A work-group of b work-items per row, work-item i reducing the row's elements i, i+b, ...
// (partialReduceStrided: neighbouring work-items read neighbouring memory), the b results
// reduced by a tree in local memory (workGroupTree; the program's body, inside its
// parameters, is `join (map ...)` after treeReduce). b a power of two.
def rowsByWorkGroups(b) = DFNF ;
  partialReduceStrided(b) @ outermost(appliedReduce) ;;
  treeReduce              @ outermost(appliedMap) ;;
  workGroupTree           @ argument @ inLambda ;;
  lowerToC

// At `map (fun c => iterate k step (map r xs)) cs` (after treeReduce): a work-group
// per chunk, its work-items computing the partial results (`map r`) into local memory,
// then every step of the tree (iterate's buffers in local memory too).
def workGroupTree = toMapWorkGroup(0) @ outermost(isMap) ;;
  toMapLocal(0) @ outermost(isMap) @ body @ argument @ function ;;
  toMapLocal(0) @ outermost(isMap) @ body @ argument @ function ;;
  toMem(local)  @ argument @ outermost(function(argOf(iterate, id))) @ body @ argument @ function

// A warp per row, w rows per work-group: lane l reduces the row's elements l, l+32, ...
// and the warp's 32 results meet by shuffles (reduceToWarp). The number of rows a multiple
// of w; CUDA only.
def rowPerWarp(w) = DFNF ;
  partialReduceStrided(32) @ outermost(appliedReduce) ;;
  reduceToWarp             @ outermost(appliedReduce) ;;
  splitJoinMap(w)          @ outermost(appliedMap) ;;
  toMapWorkGroup(0)        @ outermost(isMap) ;;
  toMapWarp                @ outermost(isMap) ;;
  lowerToC

// Row normalizations with a work-group per row: computeOnce's `let`s stay; every reduction
// a `let` binds becomes b strided partial results and a tree in local memory (letTree),
// whose one result every work-item then reads; the row's elementwise maps are spread over
// the work-items. b a power of two.
def rowsNorm(b) = DFNF ; computeOnce ;
  toMapWorkGroup(0)  @ outermost(isMap) ;;
  letTree(b)         @ outermost(applied(let)) ;;
  try(letTree(b)     @ outermost(applied(let))) ;;
  lowerToC

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

// Row normalizations with a warp per row, w rows per work-group: every reduction a `let`
// binds is the warp's (warpReduceLet: lane l reduces the row's elements l, l+32, ..., the
// 32 results meet by shuffles and every lane gets the value), and the row's elementwise
// maps are spread over the lanes (lane l computes the elements l, l+32, ...: coalesced).
// The number of rows a multiple of w; CUDA only.
def rowsNormWarp(w) = DFNF ; computeOnce ;
  splitJoinMap(w)    @ outermost(appliedMap) ;;
  toMapWorkGroup(0)  @ outermost(isMap) ;;
  toMapWarp          @ outermost(isMap) ;;
  letWarp            @ outermost(applied(let)) ;;
  try(letWarp        @ outermost(applied(let))) ;;
  lowerToC

// At `let C[reduce f z xs] (fun h => B)`: the reduction by the warp (warpReduceLet), and
// B's map spread over the lanes.
def letWarp = warpReduceLet ;; try(toMapLane @ function @ function) @ body @ argument

// Matrix products on a GPU (issue 28; tried first by the defaults of OpenCL and CUDA; where
// it does not compile a definition, the next default does): a definition whose outermost
// loop nest is a matrix product, `map (fun r => map (fun c => reduce ... (zip r c)) cs) rs`
// with the reduction a sum of products (mm, mmHalf), computed by tiles as examples/gpu.elv's
// `mmTiledRect(128, 128, 8, 8, 8, 16, 16)` does: a work-group of 16 x 16 work-items per
// 128 x 128 tile of the result, every work-item an 8 x 8 block of it in registers, k walked in
// steps of 8, the two tiles of a step copied into local memory by the whole work-group (coalesced)
// and read from there by all its work-items.
//
// At any size: the rows of a and the columns of b are padded to multiples of 128 by
// repeating the last one (`padMap`, as examples/mm.elv's `anySize`: the extra results are
// computed into a padded buffer and not copied out); the reduction is padded to a multiple
// of 8 with zeros (rule `padDotZeros`). Repeating elements would add products that are not
// there; zeros add `0 * 0`, which leaves a sum unchanged exactly (bitwise: the padded sum is
// the same left fold), and only a sum of products from `+0` is such a reduction, so
// `padDotZeros` refuses any other (a `max`-plus product, a dot with an `exp` inside) with
// the reason, and the next default compiles it. A fixed k for the step would not do: the
// default is chosen once, at a symbolic k, which no step but 1 is known to divide. The
// padded result is copied out by its own kernel, a work-item per element (dimensions 1, 0).
def tiledProducts = DFNF ;
  padRowsAndColumns(128) ;;
  padDotZeros(8) @ outermost(appliedReduce) ;;
  paddedProduct(mmTiledSteps(128, 128, 8, 8, 8, 16, 16)) ;;
  paddedProduct(toMem(global)) ;;
  copyOutOverGlobal ;;
  lowerToC

// At `map (fun r => map (fun c => ...) cs) rs`: the columns padded to a multiple of t, then
// the rows; `take n` of every row and `take m` of the rows read the result out of the
// padded one (`map (take n) (take m (PRODUCT))`).
def padRowsAndColumns(t) =
  padMap(t)     @ outermost(appliedMap) @ body @ argument @ function @ outermost(appliedMap) ;;
  layoutFission @ outermost(appliedMap) ;;
  padMap(t)     @ argument @ outermost(appliedMap)

// s at the padded product (PRODUCT of padRowsAndColumns).
def paddedProduct(s) = s @ argument @ argument @ outermost(appliedMap)

// `map (take n) (take m mem)`, the copy of the result out of the padded one, over the global
// work-items: the rows over dimension 1, the elements of a row over dimension 0.
def copyOutOverGlobal =
  (toMapGlobal(1) @ function @ function ;;
   (copyArray ; toMapGlobal(0) @ function @ function) @ body @ argument @ function) @ outermost(appliedMap)

// The steps of examples/gpu.elv's mmTiledRect at the focus (the first loop nest below it is
// the matrix product's): tiles of tm x tn, blocks of rm x rn in them, k in steps of kb;
// work-groups for the tiles, wm x wn work-items for the blocks (wm = tm / rm, wn = tn / rn),
// the block's loops unrolled (its accumulators in registers); the two tiles of every step
// through local memory (tileA, tileB). m a multiple of tm, n of tn, k of kb.
def mmTiledSteps(tm, tn, rm, rn, kb, wm, wn) = fuseReduceMap @ topDown ;;
  tile(tm, tn)      @ outermost(mapNest(2)) ;;
  tile(rm, rn)      @ atLoop(2) ;;
  blockReduceZip(kb) @ atLoop(6) ;;
  // the reductions over k become reductions of outer products: of the block of a
  // work-item (for every step of kb, then within it), then of the tile
  reduceOuter       @ atLoop(4) ;;
  reduceOuter       @ atLoop(5) ;;
  reduceOuter       @ atLoop(2) ;;
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
  storeLocal(isApp(isFst), tileA(wm, wn)) @ reduceBody @ atLoop(2) ;;
  storeLocal(isApp(isSnd), tileB(wm, wn)) @ body @ argument @ reduceBody @ atLoop(2) ;;
  copyByWorkItems   @ atLoop(2)

// The body of a reduction's operator: `reduce (fun acc y => BODY) init xs`.
def reduceBody(s) = s @ body @ body @ argument @ function @ function

// A tile `e : (tm/rm).rm.kb` of a's rows stored k-major (kb.tm: a work-item's rm values for
// one k are consecutive), read back as `split rm (transpose mem)`; copied in a's order by
// wm x wn work-items, written transposed.
def tileA(wm, wn) = joinSplit ;
  (addId ; idToTranspose) @ argument ;
  copyLocal(wm, wn) @ argument @ argument @ argument ;
  toMem(local)      @ argument @ argument

// The same for a tile of b's columns, copied in the stored order.
def tileB(wm, wn) = joinSplit ;
  (addId ; idToTranspose) @ argument ;
  copyLocal(wm, wn) @ argument @ argument ;
  toMem(local)      @ argument @ argument

// Matrix products on the CPU (issues 28 and 30; tried first by the defaults of C and
// OpenMP; where it does not compile a definition, the next default does): a definition
// whose outermost loop nest is a matrix product, `map (fun r => map (fun c => reduce ...
// (zip r c)) (transpose b)) rs`, computed as examples/mm.elv's `blis(6, 64)` (BLIS-like): b
// packed into panels of 64 columns (k x 64 each), a into slivers of 6 rows stored k-major
// (k x 6 each), and a 6 x 64 block of the result in registers (24 vectors of 16), computed
// as k rank-1 updates (6 broadcast elements of a sliver times 4 vectors of a panel); the
// panels the outer loop (a panel stays in the L2 cache while the slivers stream past it).
//
// At any size: the rows of a and the columns of b are padded to multiples of 6 and 64 by
// repeating the last one (`padMap`; the extra results are computed into a padded buffer and
// not copied out), and k is neither padded nor split, so any k works. Every element of the
// result is the reduction over its row and column in k's order, unchanged: the reduction
// need not be a sum of products (a `max`-plus product is computed as it is written). Not
// blocked for the caches along k (examples/mm.elv's `blisKC` needs k a multiple of its chunk).
def blisProducts = blisSteps(6, 64, id) ; lowerToC

// OpenMP: blisProducts with both packs and the loop over the panels `parallel for`.
def blisProductsPar = blisSteps(6, 64, parallel) ; lowerToC

// The steps of examples/mm.elv's `blis(mr, nr)`, with `par` at its parallel loops (the
// outer loops of both packs and the loop over the panels): the matrix product's rows and
// columns padded to multiples of mr and nr (padBlocks), b packed into panels (packPanels),
// a into slivers (packSlivers), the computation in mr x nr register blocks (registerBlocks)
// into the padded result (computeIntoPadded).
def blisSteps(mr, nr, par) = DFNF ; fuseReduceMap @ topDown ;;
  padBlocks(mr, nr) ;; packPanels(nr, par) ;;
  underMem(packSlivers(mr, par)) ;;
  underMem(registerBlocks(mr, nr) @ argument @ outermost(isToMem)) ;;
  underMem(computeIntoPadded) ;;
  underMem(par @ outermost(isMap) @ argument @ body @ argument @ outermost(isToMem))

// The body of the function a toMem passes its stored value to.
def underMem(s) = s @ body @ argument @ outermost(isToMem)

// At `map (fun r => map (fun c => ...) cs) rs`: the columns padded to a multiple of nr,
// then the rows to a multiple of mr (as padRowsAndColumns, with two sizes).
def padBlocks(mr, nr) =
  padMap(nr)    @ outermost(appliedMap) @ body @ argument @ function @ outermost(appliedMap) ;;
  layoutFission @ outermost(appliedMap) ;;
  padMap(mr)    @ argument @ outermost(appliedMap)

// b's padded columns (`padClamp (transpose b)`) stored as panels of nr columns, k x nr
// each (`permuteB`), the copy's rows vectors of 16, `par` at its outer loop.
def packPanels(nr, par) = storeInMemory(applied(padClamp) ; isApp(isTranspose) @ argument,
    permuteB(nr) ;;
    vectorize(16) @ innermost(appliedMap) ;;
    par           @ outermost(isMap) @ argument @ argument) @ inLambda

// a's padded rows stored as slivers of mr rows, k x mr each (k-major: the mr elements of a
// step of k consecutive), the copy along k with the mr elements of a step unrolled, `par`
// at its outer loop.
def packSlivers(mr, par) = storeInMemory(applied(padClamp),
    permuteB(mr) ;; par @ outermost(isMap) @ argument @ argument ;;
    (toMapSeq @ function @ function ;; unroll @ function @ function @ body @ argument @ function)
      @ body @ argument @ function @ argument @ argument)

// At the computation (below both packs): columns outside rows, blocks of nr columns and mr
// rows, the reduction over k outside the block's rows and columns, the block's rows and
// vectors of 16 unrolled (its accumulators scalars to the C compiler: registers).
def registerBlocks(mr, nr) =
  interchange(0) ;;
  tile(nr, mr)     @ outermost(mapNest(2)) ;;
  fissionReduceMap @ outermost(appliedReduce) ;;
  reorder([1, 2, 4, 3, 5]) ;;
  reorder([1, 2, 5, 3, 4]) ;;
  vectorize(16)    @ innermost(appliedMap) ;;
  unroll @ function @ function @ innermost(appliedMap) @ reduceOp @ innermost(appliedReduce) ;;
  unroll @ function @ function @ outermost(appliedMap) @ reduceOp @ innermost(appliedReduce)

// The operator of a reduction `reduce op init xs`.
def reduceOp(s) = s @ argument @ function @ function

// The product computed into a padded buffer of its own (`toMem global`), which the result
// is read out of.
def computeIntoPadded =
  toMem(global) @ argument @ argument @ outermost(appliedMap) @ body @ argument @ outermost(isToMem)
