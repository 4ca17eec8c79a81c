// Generic CPU schedules that apply to every example program (issue 4's
// differential tests run each example under each of them, C and OpenMP).

// Every computing map a sequential loop, every reduction a sequential one;
// maps that are only read are computed where they are read.
def sequential = DFNF ; lowerToC

// The outermost map runs in parallel (OpenMP `parallel for`), the rest sequentially.
def parallelOuter = DFNF ; parallel @ function @ function @ outermost(appliedMap) ;; lowerToC

// gemv: the matrix-vector product that the outer map reads is stored first
// (storeInMemory of the first computing map below the outermost map).
def storeArgument = DFNF ;
  storeInMemory(isApp(isApp(isMap)), lowerToC) @ argument @ outermost(appliedMap) ;;
  lowerToC

// conv: every reduction of a computed array is fused with the map that computes
// it (fuseReduceMap, as often as it applies), so nothing is stored.
def fuseReductions = DFNF ; normalize(fuseReduceMap) ;; lowerToC
