// Overlapped tiling of stencils (thesis §4.4.1), for examples/jacobi1d.rise and
// examples/stencil2d.rise.
//
//   shine rewrite examples/jacobi1d.rise --def jacobi3 --strategy examples/stencil.elv --apply tiled1d
//   shine rewrite examples/stencil2d.rise --def jacobi2d5 --strategy examples/stencil.elv --apply tiled2d

// 1-D: tiles of 34 elements (32 outputs each for a 3-point stencil).
def tiled1d = DFNF ; overlappedTiling(34) @ outermost(appliedMap) ;; lowerToC

// 2-D: tiles of 18x18 elements (16x16 outputs each for a 3x3 neighbourhood).
def tiled2d = DFNF ; overlappedTiling2(18) @ outermost(appliedMap) ;; lowerToC
