// shine's built-in schedules: generic strategies that compile any well-typed RISE
// program, on every target. Without --strategy, `shine compile` and `shine run`
// apply the default of the target (c: storeEveryStage, openmp: storeEveryStagePar,
// opencl and cuda: storeEveryStageGpu); `--apply NAME` without --strategy applies
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

// OpenCL and CUDA: storeEveryStage, the padded inputs of stencils left views (a clamp is
// cheap beside a global read), with every element of the outermost loop of every stage
// and of the result computed by its own global work-item (each stage its own kernel);
// loops inside them stay sequential.
def storeEveryStageGpu = storeEveryStageAfter(id) ;
  outermostLoops((toMap ; toMapGlobal(0)) @ function @ function)
