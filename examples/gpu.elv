// GPU strategies (issue 6): OpenCL and CUDA through the same lowered programs
// (mapWorkGroup/mapLocal compile to CUDA blocks/threads, mapGlobal to all threads).
//
//   shine run examples/gpu_reduce.rise --def dotPartial --strategy examples/gpu.elv \
//     --apply reduceWorkGroup --target opencl --nat n=64 --random 1 --verify

// A work-group per chunk and a tree reduction in local memory (the LIFT/Shine
// OpenCL `dot` and `asum`): the chunks become work-groups, the first stage's
// sequential reduction is fused with its map and spread over the work-items, its
// results are stored in local memory (`toMem local` on iterate's input, which also
// puts iterate's double buffers in local memory), and every step of the tree is a
// mapLocal; barriers separate the steps.
def reduceWorkGroup = DFNF ;
  toMapWorkGroup(0)  @ outermost(isMap) ;;
  fuseReduceMap      @ outermost(appliedReduce) ;;
  toMapLocal(0)      @ outermost(isMap) ;;
  toMapLocal(0)      @ outermost(isMap) ;;
  toMem(local) @ argument @ outermost(function(argOf(iterate, id))) ;;
  lowerToC

// Every point of a 2-D grid by its own work-item: the rows over dimension 1 of
// the global work-items, the columns over dimension 0 (neighbouring work-items
// read neighbouring memory). For the 5-point Jacobi stencil of stencil2d.rise.
def global2d = DFNF ;
  toMapGlobal(1) @ outermost(isMap) ;;
  toMapGlobal(0) @ outermost(isMap) ;;
  lowerToC

// Every point of a 3-D grid by its own work-item (dimensions 2, 1, 0 from the
// outermost), for the 7-point heat stencil of heat3d.rise.
def global3d = DFNF ;
  toMapGlobal(2) @ outermost(isMap) ;;
  toMapGlobal(1) @ outermost(isMap) ;;
  toMapGlobal(0) @ outermost(isMap) ;;
  lowerToC

// mv with the CUDA names of the same levels (blocks and threads): Listing 3's
// strategy, compiling to the same kernel.
def mvBlocks = DFNF ;
  splitJoinMap(32)   @ outermost(appliedMap) ;;
  toMapBlock(0)      @ outermost(isMap) ;;
  toMapThread(0)     @ outermost(isMap) ;;
  fuseReduceMap      @ outermost(appliedReduce) ;;
  lowerToC

// reduceWorkGroup for the partial results, which go to global memory; the sum of
// the partial results is a second kernel (the end of the first is where every
// work-group has finished).
def reduceTwoKernels = reduceWorkGroup ;
  toMem(global) @ argument @ outermost(appliedReduce)

// Matrix multiplication with 2-D register blocking (the register blocking of
// LIFT's CGO'17 matmul, without its local-memory tiles): the result is tiled in
// 4x4 blocks, the reduction over k moved outside the block's loops so that its
// accumulator is a 4x4 block, and every work-item computes one block, its
// accumulator in private memory (registers), the block's loops unrolled.
// For mm in mm.rise (m and n multiples of 4).
def mmRegisterBlocks = mmBlocks(4)

// The same with blocks of b x b (m and n multiples of b).
def mmBlocks(b) = DFNF ; fuseReduceMap @ topDown ;;
  tile(b, b)       @ outermost(mapNest(2)) ;;
  fissionReduceMap @ outermost(appliedReduce) ;;
  reorder([1, 2, 5, 3, 4]) ;;
  toMapGlobal(1)   @ function @ function @ atLoop(0) ;;
  toMapGlobal(0)   @ function @ function @ atLoop(1) ;;
  unroll           @ function @ function @ atLoop(3) ;;
  unroll           @ function @ function @ atLoop(4) ;;
  lowerToC

// For programs written with the GPU primitives already (gpu_mm.rise): only what is
// left, sequentially.
def lowered = lowerToC
