// Matrix-vector multiplication for OpenCL (RISE & Shine Listing 3): rows are
// split into groups of 32 handled by a work-group, one row per work-item; the
// dot product is fused into one sequential reduction.
//
//   shine rewrite examples/mv.rise --def mv --strategy examples/mv.elv --apply mvOpt
def mvOpt = DFNF ;
  splitJoinMap(32)   @ outermost(appliedMap) ;; 
  toMapWorkGroup(0)  @ outermost(isMap) ;;
  toMapLocal(0)      @ outermost(isMap) ;;
  fuseReduceMap      @ outermost(appliedReduce) ;;
  lowerToC
