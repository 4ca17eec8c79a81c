// The seven matrix-multiplication versions of ICFP'20 §6.1 (Listings 8-16) for
// `mm` in examples/mm.rise, written with the TVM-like scheduling strategies.
// Each version stops before lowering; apply it as `VERSION ; lowerToC`.
//
//   shine rewrite examples/mm.rise --def mm --strategy examples/mm.elv --apply "blocking ; lowerToC"

// Listing 8: fuse the dot product's map into its reduction.
def baseline = DFNF ; fuseReduceMap @ topDown

// Listing 10: 32x32 tiles, the reduction split by 4, loops M.N.K/4.4.32.32.
def blocking = baseline ;;
  tile(32, 32)     @ outermost(mapNest(2)) ;;
  fissionReduceMap @ outermost(appliedReduce) ;;
  split(4)         @ innermost(appliedReduce) ;;
  reorder([1, 2, 5, 6, 3, 4])

// TVM's "vectorization": blocking, with the innermost loop vectorized.
def vectorization = blocking ;; vectorize(32) @ innermost(appliedMap)

// Listing 12: loop order M.N.K/4.32.4.32, innermost loop vectorized.
def loopPermutation = baseline ;;
  tile(32, 32)     @ outermost(mapNest(2)) ;;
  fissionReduceMap @ outermost(appliedReduce) ;;
  split(4)         @ innermost(appliedReduce) ;;
  reorder([1, 2, 5, 3, 6, 4]) ;;
  vectorize(32)    @ innermost(appliedMap)

// Listing 14: B is packed into 32-wide column panels, by a vectorized,
// parallel copy; the loop permutation version then runs on the packed B
// (inside the `toMem` that stores it).
def packB = storeInMemory(isApp(isTranspose),
    permuteB(32) ;;
    vectorize(32) @ innermost(appliedMap) ;;
    parallel      @ outermost(isMap) @ argument @ argument
  ) @ inLambda
def arrayPacking = packB ;; loopPermutation @ argument @ outermost(isToMem)

// TVM's "cache blocks": the inner reduction unrolled (the accumulator of a
// reduction is always explicit in RISE, so no separate cache is needed).
def cacheBlocks = arrayPacking ;;
  unroll @ function @ function @ function @ innermost(appliedReduce)

// Listing 16: the outermost loop of the computation in parallel.
def parallelization = cacheBlocks ;;
  parallel @ outermost(isMap) @ argument @ outermost(isToMem)

// Any size (issue 13): the versions above need 32 to divide m and n and 4 to
// divide k, and refuse other sizes. `anySize` pads the rows of A and the
// columns of B to multiples of 32 by repeating the last one (`padMap`), packs
// the padded B into 32-wide panels as `arrayPacking` does, runs the tiles in
// the order M/32.N/32.K.32.32 with the innermost loop vectorized (k is not
// split, so any k works), computes into a padded buffer and copies the m x n
// result out (the extra rows and columns are computed and thrown away).
def padOutput =
  padMap(32) @ outermost(appliedMap) @ body @ argument @ function @ outermost(appliedMap) ;;
  layoutFission @ outermost(appliedMap) ;;
  padMap(32) @ argument @ outermost(appliedMap)
def packPaddedB = storeInMemory(applied(padClamp) ; isApp(isTranspose) @ argument,
    permuteB(32) ;; vectorize(32) @ innermost(appliedMap)) @ inLambda
def paddedTiles =
  tile(32, 32)     @ outermost(mapNest(2)) ;;
  fissionReduceMap @ outermost(appliedReduce) ;;
  reorder([1, 2, 5, 3, 4]) ;;
  vectorize(32)    @ innermost(appliedMap)
def computeIntoPadded =
  toMem(global) @ argument @ argument @ outermost(appliedMap) @ body @ argument @ outermost(isToMem)
def anySize = baseline ;; padOutput ;; packPaddedB ;;
  paddedTiles @ argument @ outermost(isToMem) ;; computeIntoPadded
// `anySize` with the row tiles in parallel.
def anySizeParallel = anySize ;;
  parallel @ outermost(isMap) @ argument @ body @ argument @ outermost(isToMem)

// BLIS-like (issue 30): an mr x nr block of the result in registers, computed as k
// rank-1 updates: per step of k, mr broadcast elements of a packed sliver of A times
// nr/16 vectors of 16 of a packed panel of B, accumulated by vector FMAs (the block's
// loops unrolled, so its accumulators are scalars to gcc and live in vector
// registers). B is packed into nr-wide panels (k x nr each, as `arrayPacking`) and A
// into mr-row slivers stored k-major (k x mr each: the mr elements of one step are
// consecutive; the copy runs along k with the mr elements of a step unrolled, so it
// writes consecutively), both copies in parallel. The panels are the outer loop, in parallel,
// and the slivers the inner one: a panel stays in the L2 cache while the slivers
// stream past it. Any size: the rows of A and the columns of B are padded to
// multiples of mr and nr by repeating the last one (`padMap`, as `anySize`), the
// result is computed into a padded buffer and copied out. nr a multiple of 16
// (AVX-512's f32 vectors); `blis(6, 64)` holds 24 accumulators. Not blocked for the
// caches along k (no KC): every block runs over the whole k.
//
//   shine run examples/mm.rise --def mm --strategy examples/mm.elv \
//     --apply "blis(6, 64) ; lowerToC" --target openmp --nat m=37 --nat n=65 --nat k=19 --random 1 --verify
def padBlocks(mr, nr) =
  padMap(nr) @ outermost(appliedMap) @ body @ argument @ function @ outermost(appliedMap) ;;
  layoutFission @ outermost(appliedMap) ;;
  padMap(mr) @ argument @ outermost(appliedMap)
def packPanels(nr) = storeInMemory(applied(padClamp) ; isApp(isTranspose) @ argument,
    permuteB(nr) ;;
    vectorize(16) @ innermost(appliedMap) ;;
    parallel      @ outermost(isMap) @ argument @ argument) @ inLambda
def packSlivers(mr) = storeInMemory(applied(padClamp),
    permuteB(mr) ;; parallel @ outermost(isMap) @ argument @ argument ;;
    (toMapSeq @ function @ function ;; unroll @ function @ function @ body @ argument @ function)
      @ body @ argument @ function @ argument @ argument)
// At the computation (below both packs): columns outside rows, blocks of nr columns
// and mr rows, the reduction over k outside the block's rows and columns, the
// block's rows and vectors unrolled.
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
// The body of the function a toMem passes its stored value to.
def underMem(s) = s @ body @ argument @ outermost(isToMem)
def blis(mr, nr) = baseline ;; padBlocks(mr, nr) ;; packPanels(nr) ;;
  underMem(packSlivers(mr)) ;;
  underMem(registerBlocks(mr, nr) @ argument @ outermost(isToMem)) ;;
  underMem(computeIntoPadded) ;;
  underMem(parallel @ outermost(isMap) @ argument @ body @ argument @ outermost(isToMem))
// `blis` blocked for the caches along k (issue 30): the reduction over k split into
// chunks of kc (`split`, the blocked reduction), and the loop over the chunks moved
// outside the blocks (`viewFission` takes the views of the blocks' results out of the
// loop bodies, `interchange` swaps the loops): the padded result is the accumulator
// of the chunks, in memory, updated in place; each register block copies its part
// into its own private accumulator, adds kc rank-1 updates and copies it back, both
// copies explicit loops of 16-wide vectors, unrolled (`blockCopy`), so that gcc keeps
// the accumulator in registers (a scalar copy loop becomes a memcpy through the stack
// whose vector reloads stall). Per chunk, a kc x nr part of a packed panel is reused
// by every sliver (in the L1 cache at kc = 128, nr = 64), the slivers' kc x m part
// stays in L2. The panels of a chunk in parallel. The packs are those of `blis`
// (k-major, so a chunk of a panel or a sliver is contiguous). The first chunk is
// peeled off the loop (`peelFirst`): its blocks start from zero in registers and
// store their sums, so no pass zeroes the accumulator. kc must divide k and k ≥ kc:
// other sizes are refused when they become known ("the type requires: kc divides k").
//
//   shine run examples/mm.rise --def mm --strategy examples/mm.elv \
//     --apply "blisKC(128, 6, 64) ; lowerToC" --target openmp --nat m=37 --nat n=65 --nat k=256 --random 1 --verify
def chunksOutside(kc) =
  split(kc) @ outermost(appliedReduce) ;;
  interchange(1) ;;
  repeat(viewFission @ outermost(appliedMap)) ;;
  interchange(0)
// A register block's mr x nr array copied by an explicit loop: rows unrolled, each
// row as unrolled vectors of 16.
def blockCopy = copyArray ;; copyArray @ body @ argument @ function ;;
  vectorize(16) @ innermost(appliedMap) ;;
  unroll @ function @ function @ innermost(appliedMap) ;;
  unroll @ function @ function
// The initial value of a reduction `reduce op init xs`.
def reduceInit(s) = s @ argument @ function
// The chunks of `blisKC`, each register block copied in and out, the panels in parallel.
def kcChunks(kc, mr, nr) = baseline ;; padBlocks(mr, nr) ;; packPanels(nr) ;;
  underMem(packSlivers(mr)) ;;
  underMem(registerBlocks(mr, nr) @ argument @ outermost(isToMem)) ;;
  underMem(chunksOutside(kc)) ;;
  underMem(reduceInit(blockCopy) @ innermost(appliedReduce)) ;;
  underMem(blockCopy @ innermost(appliedReduce)) ;;
  underMem(reduceOp(parallel @ outermost(isMap) @ body @ body) @ outermost(appliedReduce))
// The first chunk peeled off the loop over the chunks, its blocks started from zero.
def firstChunkFromZero =
  underMem((peelFirst ; reduceInit(betaReduction @ function ; betaReduction)) @ outermost(appliedReduce))
def blisKC(kc, mr, nr) = kcChunks(kc, mr, nr) ;; firstChunkFromZero
// `blisKC` with the accumulator of the chunks in the row-major layout of the padded
// result (`transposeAccumulator`: panels.slivers.mr.nr stored as slivers.mr.panels.nr),
// so that the result is copied out row by row (vectorized) rather than through a
// division and a remainder per element. Measured slower than `blisKC` (1 thread,
// 1152³ and 2048³): the block's rows lie a padded row apart (8 KiB at n = 2048, the
// same cache sets), which costs the kernel more than the copy saves.
def blisKCRows(kc, mr, nr) = kcChunks(kc, mr, nr) ;;
  underMem(transposeAccumulator(1) @ outermost(appliedReduce)) ;;
  underMem(transposeAccumulator(2) @ outermost(appliedReduce)) ;;
  firstChunkFromZero
