// Fireiron's decompositions (Hagedorn et al., PACT'20) as ELEVATE strategies (issue 26): a
// matrix product taken down, one scheduling step at a time, to the warp-level tensor-core
// multiply `mma.sync` (`mmaSync`, m16n8k16), from the plain product of half.rise.
//
//   shine compile examples/half.rise --def mmHalf --strategy examples/fireiron.elv \
//     --apply mmaWarps --target cuda
//   shine run examples/half.rise --def mmHalf --strategy examples/fireiron.elv \
//     --apply mmaWarps --target cuda --nat m=48 --nat n=32 --nat k=80 --random 1 --verify
//
// The vocabulary, each step at the focus (the whole definition), in the order they compose:
// the result's tiles, the warps' columns of a tile, the reduction's split, the levels that
// run the loops, the tensor-core multiply, the epilog. A product whose sizes the tiles do
// not divide is refused when it runs (`16 must divide m`); a tile the tensor cores cannot
// multiply is refused by `mma` with the reason.

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
