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

// Sequential: every loop that writes memory a sequential loop, every stage stored.
def storeEveryStage = DFNF ; generatesWithLoops ; computeOnce ; lowerToC ; storeStages ; storeReadScatters ; storeReadLoops ; lowerToC

// OpenMP: storeEveryStage with the outermost loop of every stage and of the result
// in parallel (`parallel for`); loops inside them stay sequential.
def storeEveryStagePar = storeEveryStage ;
  outermostLoops((toMap ; parallel) @ function @ function)

// OpenCL and CUDA: storeEveryStage with every element of the outermost loop of every
// stage and of the result computed by its own global work-item (each stage its own
// kernel); loops inside them stay sequential.
def storeEveryStageGpu = storeEveryStage ;
  outermostLoops((toMap ; toMapGlobal(0)) @ function @ function)
