// Schedules for the separable blurs of examples/blur.rise, equivalent to the
// Halide schedules of the anchor (bench/, ICFP'20 §6.4):
//   root          blur_x.compute_root()                      breadth first
//   inline        (Halide's default)                         blur_x computed where blur_y reads it
//   tiled         blur_x computed per strip of 32 output rows (34 rows of blur_x)
// and the same with the rows (strips) in parallel and 16 columns per vector:
// rootVecPar, inlineVecPar, tiledVecPar.
//
//   shine compile examples/blur.rise --def binomialSep --strategy examples/blur.elv --apply tiledVecPar --target openmp

// Rows in parallel, the innermost loop 16 columns per vector.
def vecPar = parallel @ outermost(isMap) ;; vectorize(16) @ innermost(appliedMap)

// blur_x is the array that blur_y's `slide 3 1` reads: store it.
def storeBlurX(how) = storeInMemory(isApp(isApp(isMap)), how) @ argument @ outermost(appliedMap)

def inline       = DFNF ; lowerToC
def inlineVecPar = DFNF ; vecPar ;; lowerToC

def root       = DFNF ; storeBlurX(lowerToC) ;; lowerToC
def rootVecPar = DFNF ; storeBlurX(vecPar ;; lowerToC) ;; vecPar ;; lowerToC

// Strips of 32 output rows read 34 rows of blur_x (overlapped tiling); blur_x
// is moved into the strip (slideAfterMap, mapFusion) and stored there.
def strips = DFNF ;
  overlappedTiling(34) @ outermost(appliedMap) ;;
  slideAfterMap @ topDown ;;
  mapFusion @ topDown
def storeStripBlurX(how) =
  storeInMemory(isApp(isApp(isMap)), how) @ argument @ body @ argument @ function @ outermost(appliedMap)

def tiled       = strips ;; storeStripBlurX(lowerToC) ;; lowerToC
def tiledVecPar = strips ;;
  storeStripBlurX(vectorize(16) @ innermost(appliedMap) ;; lowerToC) ;;
  parallel @ outermost(isMap) ;;
  vectorize(16) @ innermost(appliedMap) ;;
  lowerToC
