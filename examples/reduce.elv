// Reductions on the CPU at memory speed (issues 27 and 30): a reduction with an
// associative and commutative operator and its neutral element (`add`, `mul`, `min`,
// `max`, `fmin`, `fmax`: dot, sum, asum, a row's maximum) is split into independent
// accumulators, the lanes of a vector (vectorizeReduce), and into chunks that OpenMP
// threads reduce (partialReduce), their results combined at the end in a fixed order:
// the result does not depend on the number of threads. A sum is reassociated, so on
// floats it agrees with the interpreter's left fold within the verification
// tolerance (a maximum or minimum exactly); that is this file's choice, never the
// default schedules'. Any size: what does not fill the chunks and lanes (the last
// n mod (p*v) elements) is reduced sequentially after them (peelReduce).
//
//   shine run examples/dot.rise --def dot --strategy examples/reduce.elv \
//     --apply "reduceParVec(64, 32, 2048)" --target openmp --nat n=1000003 --random 1 --verify

// At a `reduce f z xs`: v accumulators (lanes of one vector) over the first
// n - n mod v elements, then the rest in order.
def vecReduce(v) = peelReduce(v) ; vectorizeReduce(v) @ argument @ function

// At a `reduce f z xs` of n elements: p chunks of (n - n mod pv)/p consecutive elements,
// each reduced by v lanes, the chunks in parallel (`parallel for`), their p results
// stored and reduced in chunk order; the last n mod pv elements after them, in order.
// pv must be p*v (strategies take no arithmetic). Each accumulator adds n/(p*v) terms:
// few long ones lose accuracy (reduceParVec(2, 8, 16) over 2^24 random f32 misses the
// verification tolerance; reduceParVec(64, 64, 4096) keeps every one at 4096 terms).
def parVecReduce(p, v, pv) = peelReduce(pv) ;
  (partialReduce(p) ;
   vectorizeReduce(v)  @ body @ argument @ function @ argument ;;
   parallel            @ function @ function @ argument ;;
   toMem(global)       @ argument) @ argument @ function

// The whole program's outermost reduction (sum, dot, asum), vectorized with v lanes.
def reduceVec(v) = DFNF ; vecReduce(v) @ outermost(appliedReduce) ;; lowerToC

// The same in p parallel chunks (OpenMP), pv = p*v.
def reduceParVec(p, v, pv) = DFNF ; parVecReduce(p, v, pv) @ outermost(appliedReduce) ;; lowerToC

// Every `reduce` of the program vectorized with v lanes (reductions already lowered to
// `reduceSeq`, and those whose operator is not one of the above, are left as they are).
def vectorizeReductions(v) = normalize(applied(reduce) ; vecReduce(v))

// Row-wise normalizations (softmax, RMS norm in norms.rise) with their row reductions
// vectorized: the OpenMP default schedule (storeEveryStagePar: each row's maximum and
// sum computed once, the exponentials stored, rows in parallel) with every reduction
// in v lanes.
def rowsVecPar(v) = DFNF ; generatesWithLoops ; computeOnce ; vectorizeReductions(v) ;
  lowerToC ; storeStages ; lowerToC ; outermostLoops((toMap ; parallel) @ function @ function)

// The parts of the built-in schedules (`shine strategies --show`) that rowsVecPar uses.
def needsMemory = isReduce <+ applied(scanSeq) <+ applied(iterate) <+ isToMem
def stage = applied(map) ; (needsMemory @ topDown) @ argument @ function
def generatesWithLoops = normalize((applied(generate) ; (needsMemory @ topDown) @ argument) ; generateToMap)
def storeStages = normalize(storeInMemory(stage, lowerToC))
def outermostLoops(s) = isLoop ; try(s) <+ all(outermostLoops(s))
def computeOnce = normalize(hoistInvariant) ; normalize(shareRepeated) ; normalize(storeShared)
