//! Imperative DPIA: the output of the acceptor and continuation translation
//! (RISE & Shine §V-C, Listings 8–9) and the input of the code generators.
//!
//! Three phrase types, as in DPIA:
//! * [`Exp`] (`exp[dt, rd]`): an expression to read. Besides scalar operations it
//!   holds **read views** (`split`, `join`, `transpose`, `zip`, `slide`, pads,
//!   `asVector`, `generate`, ...): no data is moved to build them; the code
//!   generator turns a read of a view at an index path into a read of memory
//!   at a computed index.
//! * [`Acc`] (`acc[dt]`): somewhere to write, again possibly through **write views**
//!   (`idxAcc`, `splitAcc`, `joinAcc`, `transposeAcc`, `zipAcc1/2`, `pairAcc1/2`,
//!   `asVectorAcc`, `asScalarAcc`, ...).
//! * [`Comm`] (`comm`): commands — assignment, sequencing, allocation, loops.
//!
//! Every `Exp` and `Acc` carries its data type (the type of what is read, or of
//! what the acceptor accepts). [`Comm::Assign`] only ever assigns scalars and
//! vectors: the translation expands the copy of arrays and pairs into loops and
//! component assignments.
//!
//! ## Index semantics of the views
//! Reading a view at a *path* (a list of array indices, pair components and
//! vector lanes, outermost first) reads its operand at another path. The
//! index-remapping views (`split`, `join`, `transpose`, `slide`, `take`,
//! `drop`, `asScalar`) are one construct, [`ExpKind::View`] and
//! [`AccKind::View`], whose equation is [`View::reindex`] for reads and
//! writes alike. The others, with `i` an array index and `p` the rest:
//!
//! | view (type) | read at | reads operand at |
//! | --- | --- | --- |
//! | `Idx(e, k)` | `p` | `k :: p` |
//! | `Pad(l, r, mode, e)`, `e: n.t` | `i :: p` | `i - l :: p` when `l <= i < l+n`; otherwise `Cst(c)`: `c` at `p`, `Clamp`: index `clamp(i-l, 0, n-1)`, `Mirror`: reflect, `Wrap`: `(i-l) mod n` |
//! | `Concat(a, b)`, `a: n.t` | `i :: p` | `a` at `i :: p` if `i < n`, else `b` at `i - n :: p` |
//! | `Zip(a, b)` | `i :: Fst :: p` | `a` at `i :: p` (and `Snd`: `b`) |
//! | `Pair(a, b)` | `Fst :: p` | `a` at `p` (and `Snd`: `b`) |
//! | `Fst(e)` / `Snd(e)` | `p` | `Fst :: p` / `Snd :: p` |
//! | `Generate(v, body)` | `i :: p` | `body[v := i]` at `p` |
//! | `AsVector(n, e)`: `(m*n).t → m.vec[t,n]` | `i :: p` (a whole vector) | the `n` elements `i*n .. i*n+n-1` (a vector load) |
//! | `VectorFromScalar(e)` | `Lane(l) :: p`, or the whole vector | `e` at `p` (broadcast) |
//! | `Lane(e, k)`, `e: vec[t, n]` | `p` | `Lane(k) :: p` |
//! | `MakeVector([x0, ..., x(n-1)])` | `Lane(l) :: p`, or the whole vector | `xl` at `p` (`l` known), a select on `l` otherwise |
//! | `At(e, x)`, `e: n.t`, `x: idx[n]` | `p` | `v :: p` with `v` the value `x` reads at run time |
//!
//! **Indices read from data** (`gather`, `scatter`, `idx` with a computed index,
//! `natAsIndex` of a computed value) are [`ExpKind::At`] and [`AccKind::At`]: the
//! index is an expression, read when the access runs, and the generated code checks
//! `0 <= v < n` before it reads or writes (unless told not to: `--unchecked-indices`);
//! a failed check sets the program's status (`IndexOutOfRange`) and skips the access.
//!
//! Write views follow the same equations (see [`AccKind`]); `AccKind::Map(v, a)`
//! is the write side of `Generate`: a write at `i :: p` lands in `a[v := i]` at `p`.

use crate::view::View;
use arith::{Nat, Var};
use rise::primitives::MathFn;
use rise::{AddrSpace, DataType, Literal};
use std::fmt;

/// A memory identifier: a C variable holding data of type `ty`.
#[derive(Clone, Debug, PartialEq)]
pub struct Ident {
    /// The name (unique in its program, a valid C identifier).
    pub name: String,
    /// The data type of the whole memory.
    pub ty: DataType,
}

/// A unary scalar (or elementwise vector) operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UnOp {
    /// Arithmetic negation.
    Neg,
    /// Boolean negation.
    Not,
    /// Bitwise complement (integers).
    BitNot,
}

/// A binary scalar (or elementwise vector) operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BinOp {
    /// `+`
    Add,
    /// `-`
    Sub,
    /// `*`
    Mul,
    /// `/` (integer division truncates)
    Div,
    /// `%`
    Mod,
    /// `>` (result `bool`)
    Gt,
    /// `<` (result `bool`)
    Lt,
    /// `==` (result `bool`)
    Eq,
    /// `<=` (result `bool`)
    Le,
    /// `>=` (result `bool`)
    Ge,
    /// `!=` (result `bool`)
    Ne,
    /// `&&` on `bool` (short-circuit: the right operand only where the left one holds)
    And,
    /// `||` on `bool` (short-circuit)
    Or,
    /// `&` (integers)
    BitAnd,
    /// `|` (integers)
    BitOr,
    /// `^` (integers)
    BitXor,
    /// `<<` (integers; wraps; an amount outside `0..width` is an error)
    Shl,
    /// `>>` (integers; arithmetic on signed types; an amount outside `0..width` is an error)
    Shr,
}

/// How a [`ExpKind::Pad`] fills the indices outside its operand.
#[derive(Clone, Debug, PartialEq)]
pub enum PadMode {
    /// A constant (an expression of the element type).
    Cst(Exp),
    /// The nearest element (`padClamp`).
    Clamp,
    /// The mirrored element (`padMirror`: `-1 -> 0`, `-2 -> 1`, `n -> n-1`).
    Mirror,
    /// The element modulo the length (`padWrap`).
    Wrap,
}

/// An expression to read (`exp[dt, rd]`): its construct and its data type.
#[derive(Clone, Debug, PartialEq)]
pub struct Exp {
    /// What it is.
    pub kind: std::sync::Arc<ExpKind>,
    /// The data type of its value.
    pub ty: DataType,
}

/// The constructs of [`Exp`].
#[derive(Clone, Debug, PartialEq)]
pub enum ExpKind {
    /// The whole content of a memory identifier.
    Var(Ident),
    /// A scalar literal.
    Lit(Literal),
    /// A natural number as a value (of type `natType`, `idx[n]` or an integer type).
    Nat(Nat),
    /// A unary operation.
    Unary(UnOp, Exp),
    /// A binary operation.
    Binary(BinOp, Exp, Exp),
    /// `select c a b`: `a` if `c` else `b`.
    Select(Exp, Exp, Exp),
    /// A math function of its operands (scalars, or vectors lane by lane).
    Math(MathFn, Vec<Exp>),
    /// Conversion of a scalar to the scalar type of the node.
    Cast(Exp),
    /// Element `k` of an array.
    Idx(Exp, Nat),
    /// An index-remapping view of an array (`split`, `join`, `transpose`, ...).
    View(View, Exp),
    /// `padCst`, `padClamp`, `padMirror`, `padWrap` with `l` and `r` elements.
    Pad(Nat, Nat, PadMode, Exp),
    /// `concat`.
    Concat(Exp, Exp),
    /// `zip`.
    Zip(Exp, Exp),
    /// `makePair`.
    Pair(Exp, Exp),
    /// `fst`.
    Fst(Exp),
    /// `snd`.
    Snd(Exp),
    /// An array whose element `i` is `body` with the variable replaced by `i`
    /// (`generate`, and `map f` for a view function `f`). The variable ranges
    /// over `0 <= v < n`.
    Generate(Var, Exp),
    /// `asVector n`.
    AsVector(Nat, Exp),
    /// `vectorFromScalar`: every lane holds the scalar.
    VectorFromScalar(Exp),
    /// `lane k v`: lane `k` of a vector (`k` below its width).
    Lane(Exp, Nat),
    /// `makeVector n x1 ... xn`: a vector whose lane `k` is the `k`-th expression.
    MakeVector(Vec<Exp>),
    /// The element of the array (`n.t`) at the index the second expression (`idx[n]`)
    /// reads at run time (`idx i xs` with a computed `i`, `gather`): checked `0 <= v < n`.
    At(Exp, Exp),
    /// A call of a foreign function (a scalar function written in C, `rise::foreign`) on
    /// scalar arguments, one per parameter.
    Foreign(std::sync::Arc<rise::ForeignFun>, Vec<Exp>),
    /// The value another lane of the warp holds in the scalar the expression reads (a
    /// 32- or 64-bit number): CUDA `__shfl_xor_sync(0xffffffff, e, o)`,
    /// `__shfl_sync(0xffffffff, e, k)` or `__shfl_up_sync(0xffffffff, e, d)`. Every one of
    /// the warp's 32 lanes must execute it together (`reduceWarp`, `scanWarp`;
    /// [`crate::gpu::prepare`] refuses one that a divergent
    /// loop could reach).
    Shuffle(Exp, Shuffle),
    /// A warp's tensor-core multiply-accumulate (`mmaSync`, CUDA `mma.sync` m16n8k16): this
    /// lane's 8 elements of `A` and 4 of `B` (`f16` or `bf16`) and 4 of `C` (`f32`), 16
    /// operands in the order of the lane's registers (`rise::fragments`); its value is the
    /// lane's 4 elements of `D` (`vec[f32, 4]`). All 32 lanes of the warp must execute it
    /// together (inside a `mapWarp` loop, in the lane loop of its own `mmaSync`).
    Mma(Vec<Exp>),
    /// A warp group's tensor-core multiply-accumulate (`wgmma`, Hopper's
    /// `wgmma.mma_async.m64nNk16`): `[a, b, c_0, ..., c_(4c-1)]`, the whole `64×16` tile `A`
    /// and `16×8c` tile `B` (views of local memory, read by the instruction through
    /// descriptors) and this thread's `4c` accumulator elements (a private array `d` of
    /// `4c`, chunk `j`'s element `i` at `4j + i`, or the thread's row `c.4` of the
    /// accumulator); it is assigned to that same array or row (`d := A·B + d`). Every
    /// thread of the warp group runs it together (inside a `mapWarpGroup` loop, in the warp
    /// and lane loops of its own `wgmma`).
    Wgmma(Vec<Exp>),
    /// A ticket: the value of a global counter (`u64`, the element the expression reads),
    /// which is incremented atomically (CUDA `atomicAdd`, OpenCL `atom_inc`); the tickets
    /// of a kernel are `0, 1, 2, ...` in the order they are taken. Read once, by one
    /// work-item, as the right-hand side of an assignment (`scanLookback` numbers its tiles
    /// in the order the work-groups start).
    Ticket(Exp),
    /// A tile's exclusive prefix in a single-pass scan, found by decoupled look-back
    /// ([`LookBack`]). Read once, by the look-back's lanes of the tile's work-group (one
    /// work-item, or the 32 lanes of its first warp), as the right-hand side of an
    /// assignment.
    LookBack(Box<LookBack>),
}

/// The decoupled look-back of a single-pass scan (Merrill and Garland, "Single-pass
/// parallel prefix scan with decoupled look-back"; `scanLookback`). Every tile has a
/// descriptor, one `u64` of global memory, zero before the kernel: its status in the high
/// 32 bits (0: nothing yet, 1: the tile's aggregate, 2: its inclusive prefix) and the
/// value's 32 bits in the low ones, so that status and value are written in one atomic
/// store and read in one atomic load (no fence orders two writes). Tile `tile` (its
/// number a ticket, so that every tile before it belongs to a work-group that has started)
/// publishes its aggregate, then walks back over its predecessors' descriptors, waiting
/// while one says nothing yet and folding their values into `prefix`, until one holds an
/// inclusive prefix; it publishes its own inclusive prefix (`f aggregate prefix`), and the
/// expression's value is its exclusive prefix. Tile 0 starts from `init` and publishes at
/// once. A work-group waits only for tiles whose work-groups publish their aggregates
/// without waiting: no deadlock, whatever the order the GPU runs them in.
///
/// The look-back is run by [`LookBack::lanes`] work-items: one, or the 32 lanes of the
/// work-group's first warp, which on CUDA look at 32 predecessors at once (a window: lane
/// `l` at tile `tile − 32 + l`, the warp waiting while any says nothing yet, the nearest
/// inclusive prefix found by a ballot, the window's values from there folded by shuffles,
/// then the window 32 tiles further back if it held no prefix) and elsewhere leave the walk
/// to lane 0.
#[derive(Clone, Debug, PartialEq)]
pub struct LookBack {
    /// The descriptors (global `u64`, one per tile; more may follow).
    pub descriptors: Exp,
    /// This tile's number (a `natType` value).
    pub tile: Exp,
    /// The tile's aggregate (the fold of its elements from the neutral element).
    pub aggregate: Exp,
    /// The scan's initial value (tile 0's exclusive prefix).
    pub init: Exp,
    /// The operator's neutral element (where the look-back's fold starts).
    pub neutral: Exp,
    /// A private scalar holding a predecessor's value while `fold` reads it.
    pub other: Ident,
    /// The private scalar the look-back folds into.
    pub prefix: Ident,
    /// `f other prefix`, reading the two scalars: the new `prefix`.
    pub fold: Exp,
    /// How many work-items run the look-back together: 1, or [`LookBack::WARP`] (the lanes
    /// of the work-group's first warp, every one of them running it).
    pub lanes: u32,
    /// The number of the work-item running it, from 0 to `lanes − 1` (a `natType` value).
    pub lane: Exp,
}

impl LookBack {
    /// The lanes of a warp, which look back together over a window of as many tiles.
    pub const WARP: u32 = 32;

    /// The expressions it reads, in order.
    pub fn operands(&self) -> [&Exp; 7] {
        [
            &self.descriptors,
            &self.tile,
            &self.aggregate,
            &self.init,
            &self.neutral,
            &self.fold,
            &self.lane,
        ]
    }

    /// The same look-back with each operand `x` replaced by `f(x)`.
    pub fn map_operands(&self, f: &mut dyn FnMut(&Exp) -> Exp) -> LookBack {
        LookBack {
            descriptors: f(&self.descriptors),
            tile: f(&self.tile),
            aggregate: f(&self.aggregate),
            init: f(&self.init),
            neutral: f(&self.neutral),
            other: self.other.clone(),
            prefix: self.prefix.clone(),
            fold: f(&self.fold),
            lanes: self.lanes,
            lane: f(&self.lane),
        }
    }
}

/// Which lane a [`ExpKind::Shuffle`] reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shuffle {
    /// Lane `l xor o` for lane `l` (a butterfly step).
    Xor(u32),
    /// Lane `k` for every lane (a broadcast).
    From(u32),
    /// Lane `l − d` for lane `l` (its own value for `l < d`: a step of a warp's scan).
    Up(u32),
}

/// Somewhere to write data of type `ty` (`acc[dt]`).
#[derive(Clone, Debug, PartialEq)]
pub struct Acc {
    /// What it is.
    pub kind: Box<AccKind>,
    /// The data type it accepts.
    pub ty: DataType,
}

/// The constructs of [`Acc`]: memory, and write views. Each says where a write
/// at a path lands in its operand.
#[derive(Clone, Debug, PartialEq)]
pub enum AccKind {
    /// The memory of an identifier.
    Var(Ident),
    /// `idxAcc`: element `k` of an array acceptor; a write at `p` lands at `k :: p`.
    Idx(Acc, Nat),
    /// A write view accepting the view's type: a write at `p` lands in the acceptor
    /// at [`View::reindex`]`(p)` (`splitAcc n` is `View(Split(n), a)` accepting
    /// `m.n.t` into `(m*n).t`, `joinAcc` is `View(Join(m), a)`, `takeAcc`,
    /// `dropAcc n`, `transposeAcc`, `asScalarAcc`).
    View(View, Acc),
    /// `zipAcc1`: accepts `n.s` into an acceptor of `n.(s, t)`; `i :: p` lands at `i :: Fst :: p`.
    Zip1(Acc),
    /// `zipAcc2`: accepts `n.t` into an acceptor of `n.(s, t)`; `i :: p` lands at `i :: Snd :: p`.
    Zip2(Acc),
    /// `unzipAcc`: accepts `n.(s, t)` into an acceptor of `(n.s, n.t)`; `i :: Fst :: p` lands at `Fst :: i :: p`.
    Unzip(Acc),
    /// `pairAcc1`: accepts `s` into an acceptor of `(s, t)`; `p` lands at `Fst :: p`.
    Pair1(Acc),
    /// `pairAcc2`: accepts `t` into an acceptor of `(s, t)`; `p` lands at `Snd :: p`.
    Pair2(Acc),
    /// `asVectorAcc n`: accepts `m.vec[t, n]` into an acceptor of `(m*n).t`; a vector written at `i :: p` is stored to elements `i*n .. i*n+n-1`.
    AsVector(Nat, Acc),
    /// `mapAcc`: accepts `n.s`, element by element: a write at `i :: p` lands in
    /// the acceptor (of `s`) with the variable replaced by `i`, at `p`. It is the
    /// write side of a view `map` (`map join` written to memory).
    Map(Var, Acc),
    /// The element of an array acceptor (`n.t`) at the index the expression (`idx[n]`)
    /// reads at run time (`scatter`): a write at `p` lands at `v :: p`, checked
    /// `0 <= v < n`. With a marker (an acceptor of `n.int` whose memory is zeroed before
    /// the first write), a position written twice is an error (`DuplicatePosition`).
    At(Acc, Exp, Option<Acc>),
}

/// How the iterations of a [`Comm::For`] are run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LoopKind {
    /// One after another (`mapSeq`, `reduceSeq`, copies).
    Seq,
    /// One after another, unrolled by the code generator (`mapSeqUnroll`, `reduceSeqUnroll`).
    Unroll,
    /// In parallel, on CPU threads (`mapPar`); the iterations are independent.
    Par,
    /// In parallel on a GPU, distributed over one level of the thread hierarchy
    /// (`parForGlobal`, `parForWorkGroup`, `parForLocal` of DPIA; RISE & Shine §V-C).
    Gpu(ParLevel),
}

/// A level of the GPU thread hierarchy a parallel loop is distributed over, in one
/// dimension (0, 1 or 2). OpenCL and CUDA name the same levels differently:
///
/// | level | OpenCL (RISE primitive) | CUDA (RISE primitive) |
/// | --- | --- | --- |
/// | [`ParLevel::Global`] | global work-items (`mapGlobal`) | all threads of the grid |
/// | [`ParLevel::WorkGroup`] | work-groups (`mapWorkGroup`) | blocks (`mapBlock`) |
/// | [`ParLevel::Local`] | work-items of a work-group (`mapLocal`) | threads of a block (`mapThread`) |
/// | [`ParLevel::Warp`] | — (sub-groups: not supported) | the warps of a block (`mapWarp`) |
/// | [`ParLevel::Lane`] | — (sub-groups: not supported) | the 32 lanes of a warp (`mapLane`) |
///
/// The OpenCL and the CUDA primitives of a level translate to the same loop, so a
/// program lowered with either compiles to both targets.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ParLevel {
    /// Every thread of the launch (`mapGlobal(d)`).
    Global(u8),
    /// The work-groups / thread blocks (`mapWorkGroup(d)`, `mapBlock(d)`).
    WorkGroup(u8),
    /// The threads of one work-group / block (`mapLocal(d)`, `mapThread(d)`).
    Local(u8),
    /// The warps of a block (`mapWarp`): warp `w` is the threads `32*w .. 32*w + 31` of
    /// dimension 0 (`threadIdx.x / 32`), striding when there are more iterations than
    /// warps.
    Warp,
    /// The 32 lanes of a warp (`mapLane`: lane `l = threadIdx.x % 32` runs the iterations
    /// `l`, `l + 32`, ...; exactly its own for 32 iterations).
    Lane,
    /// The warp groups of a block (`mapWarpGroup`): group `g` is the threads
    /// `128*g .. 128*g + 127` of dimension 0 (`threadIdx.x / 128`). A `mapWarp` loop inside
    /// one runs over the group's 4 warps.
    WarpGroup,
}

impl LoopKind {
    /// The loop of a lowered pattern, as its row in the primitive table gives it.
    /// `None` for a pipelined loop, which is not one loop (see `translate::pipeline`).
    pub fn of(l: rise::primitives::Loop) -> Option<LoopKind> {
        use rise::primitives::Loop;
        Some(match l {
            Loop::Pipelined(_) => return None,
            Loop::Seq => LoopKind::Seq,
            Loop::Unroll => LoopKind::Unroll,
            Loop::Par => LoopKind::Par,
            Loop::Global(d) => LoopKind::Gpu(ParLevel::Global(d)),
            Loop::WorkGroup(d) => LoopKind::Gpu(ParLevel::WorkGroup(d)),
            Loop::Local(d) => LoopKind::Gpu(ParLevel::Local(d)),
            Loop::Warp => LoopKind::Gpu(ParLevel::Warp),
            Loop::Lane => LoopKind::Gpu(ParLevel::Lane),
            Loop::WarpGroup => LoopKind::Gpu(ParLevel::WarpGroup),
        })
    }
}

impl ParLevel {
    /// The dimension (0, 1 or 2); warps and lanes divide dimension 0.
    pub fn dim(self) -> u8 {
        match self {
            ParLevel::Global(d) | ParLevel::WorkGroup(d) | ParLevel::Local(d) => d,
            ParLevel::Warp | ParLevel::Lane | ParLevel::WarpGroup => 0,
        }
    }

    /// The primitive that names the level (for messages).
    pub fn name(self) -> &'static str {
        match self {
            ParLevel::Global(_) => "mapGlobal",
            ParLevel::WorkGroup(_) => "mapWorkGroup",
            ParLevel::Local(_) => "mapLocal",
            ParLevel::Warp => "mapWarp",
            ParLevel::Lane => "mapLane",
            ParLevel::WarpGroup => "mapWarpGroup",
        }
    }

    /// Whether the iterations are spread over the threads *within* a work-group
    /// (global and local loops), so that threads communicate through memory when one
    /// iteration reads what another wrote.
    pub fn is_thread_level(self) -> bool {
        !matches!(self, ParLevel::WorkGroup(_))
    }
}

/// A command (`comm`).
#[derive(Clone, Debug, PartialEq)]
pub enum Comm {
    /// Do nothing.
    Skip,
    /// The commands one after another.
    Seq(Vec<Comm>),
    /// `acc := exp`, for a scalar or vector data type.
    Assign(Acc, Exp),
    /// Allocates memory for `ident` in `addr` for the duration of `body`.
    New {
        /// The memory (its type is the allocation's size and layout).
        ident: Ident,
        /// Where it lives.
        addr: AddrSpace,
        /// The scope.
        body: Box<Comm>,
    },
    /// A work-group barrier (OpenCL `barrier`, CUDA `__syncthreads`): every thread of
    /// a work-group waits until all have reached it, and their writes to the address
    /// spaces named are visible afterwards. Inserted by [`crate::barriers`], never by
    /// the translation.
    Barrier {
        /// Makes writes to local (shared) memory visible.
        local: bool,
        /// Makes writes to global memory visible (within the work-group).
        global: bool,
        /// Only the 32 lanes of one warp wait (CUDA `__syncwarp()`, inside a `mapWarp`
        /// iteration), ordering their memory accesses; otherwise the whole work-group.
        warp: bool,
    },
    /// The assignments of `body` issued as asynchronous copies from global to local
    /// (shared) memory (CUDA `cp.async`): they complete only at a later
    /// [`Comm::AsyncWait`], and a barrier makes them visible to the work-group. Made only
    /// by a pipelined reduction (`reduceSeqPipelined`), which places its own waits and
    /// barriers.
    AsyncCopy(Box<Comm>),
    /// Closes the group of asynchronous copies issued since the last one
    /// (`cp.async.commit_group`).
    AsyncCommit,
    /// Waits until at most this many groups of this thread's asynchronous copies are
    /// still in flight (`cp.async.wait_group`).
    AsyncWait(u32),
    /// `body` where `lhs < rhs` (the prefetches of a pipelined reduction past its end are
    /// skipped).
    IfLess {
        /// The left-hand side.
        lhs: Nat,
        /// The bound.
        rhs: Nat,
        /// What runs where the comparison holds.
        body: Box<Comm>,
    },
    /// `body` with the natural number `var` (whose range the variable carries) the value
    /// `value` reads once, at the start: a number read from memory that indices use
    /// (`scanLookback`'s tile number, a ticket every work-item of the work-group reads).
    NatLet {
        /// The variable.
        var: Var,
        /// Its value (a scalar of an integer type or `natType`, within the range).
        value: Exp,
        /// Where it is bound.
        body: Box<Comm>,
    },
    /// `for var in 0..count { body }` (the variable carries its range).
    For {
        /// The loop variable, with range `0 <= var < count`.
        var: Var,
        /// The number of iterations.
        count: Nat,
        /// Sequential, unrolled or parallel.
        kind: LoopKind,
        /// The primitive the loop comes from (`mapSeq`, `reduceSeq`, `copy`, ...), for comments.
        origin: &'static str,
        /// The body.
        body: Box<Comm>,
    },
}

/// A translated program: the kernel one generated C function implements.
#[derive(Clone, Debug, PartialEq)]
pub struct Program {
    /// The kernel's name (the RISE definition's name, a valid C identifier).
    pub name: String,
    /// The size variables (implicit `nat` parameters of the definition), in the order of the definition's binders.
    pub sizes: Vec<Var>,
    /// The output memory (global).
    pub output: Ident,
    /// The inputs, in the order of the definition's value parameters (global; read only).
    pub inputs: Vec<Ident>,
    /// What the kernel does: writes `output` from the inputs.
    pub body: Comm,
    /// What the definition's type requires of its sizes (`32` divides `n`), in terms of
    /// [`Program::sizes`]: the generated C entry point checks them before it computes.
    /// [`crate::translate`] finds those of the program's views
    /// ([`crate::constraints::of_views`]); the front end adds those of the definition's type.
    pub constraints: Vec<rise::constraints::SizeConstraint>,
}

impl Exp {
    /// An expression of type `ty`.
    pub fn new(kind: ExpKind, ty: DataType) -> Exp {
        Exp {
            kind: std::sync::Arc::new(kind),
            ty,
        }
    }
}

impl Acc {
    /// An acceptor of type `ty`.
    pub fn new(kind: AccKind, ty: DataType) -> Acc {
        Acc {
            kind: Box::new(kind),
            ty,
        }
    }
}

impl fmt::Display for Ident {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.name)
    }
}

impl fmt::Display for Exp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use ExpKind::*;
        match &*self.kind {
            Var(x) => write!(f, "{x}"),
            Lit(l) => write!(f, "{l:?}"),
            Nat(n) => write!(f, "{n}"),
            Unary(op, a) => write!(f, "{op:?}({a})"),
            Binary(op, a, b) => write!(f, "{op:?}({a}, {b})"),
            Select(c, a, b) => write!(f, "select({c}, {a}, {b})"),
            Math(m, xs) => {
                let xs: Vec<String> = xs.iter().map(|x| x.to_string()).collect();
                write!(f, "{}({})", m.name(), xs.join(", "))
            }
            Cast(a) => write!(f, "cast<{}>({a})", self.ty),
            Idx(a, i) => write!(f, "{a}[{i}]"),
            View(v, a) => v.fmt_applied(f, false, a),
            Pad(l, r, m, a) => write!(f, "pad({l}, {r}, {m:?}, {a})"),
            Concat(a, b) => write!(f, "concat({a}, {b})"),
            Zip(a, b) => write!(f, "zip({a}, {b})"),
            Pair(a, b) => write!(f, "pair({a}, {b})"),
            Fst(a) => write!(f, "fst({a})"),
            Snd(a) => write!(f, "snd({a})"),
            Generate(v, b) => write!(f, "generate({v} => {b})"),
            AsVector(n, a) => write!(f, "asVector({n}, {a})"),
            VectorFromScalar(a) => write!(f, "broadcast({a})"),
            Lane(a, k) => write!(f, "{a}.lane[{k}]"),
            MakeVector(xs) => {
                let xs: Vec<String> = xs.iter().map(|x| x.to_string()).collect();
                write!(f, "vector({})", xs.join(", "))
            }
            At(a, i) => write!(f, "{a}[at {i}]"),
            Foreign(fun, args) => {
                let args: Vec<String> = args.iter().map(|a| a.to_string()).collect();
                write!(f, "{}({})", fun.name, args.join(", "))
            }
            Shuffle(a, self::Shuffle::Xor(o)) => write!(f, "shuffleXor({a}, {o})"),
            Shuffle(a, self::Shuffle::From(k)) => write!(f, "shuffle({a}, {k})"),
            Shuffle(a, self::Shuffle::Up(d)) => write!(f, "shuffleUp({a}, {d})"),
            Wgmma(xs) => {
                let xs: Vec<String> = xs.iter().map(|x| x.to_string()).collect();
                write!(f, "wgmma({})", xs.join(", "))
            }
            Mma(xs) => {
                let xs: Vec<String> = xs.iter().map(|x| x.to_string()).collect();
                write!(f, "mma({})", xs.join(", "))
            }
            Ticket(c) => write!(f, "ticket({c})"),
            LookBack(l) => write!(
                f,
                "lookBack({}, tile {}, aggregate {}, init {}, neutral {}, {} := {} with {}, lane {} of {})",
                l.descriptors,
                l.tile,
                l.aggregate,
                l.init,
                l.neutral,
                l.prefix,
                l.fold,
                l.other,
                l.lane,
                l.lanes
            ),
        }
    }
}

impl fmt::Display for Acc {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use AccKind::*;
        match &*self.kind {
            Var(x) => write!(f, "{x}"),
            Idx(a, i) => write!(f, "{a}[{i}]"),
            View(v, a) => v.fmt_applied(f, true, a),
            Zip1(a) => write!(f, "zipAcc1({a})"),
            Zip2(a) => write!(f, "zipAcc2({a})"),
            Unzip(a) => write!(f, "unzipAcc({a})"),
            Pair1(a) => write!(f, "pairAcc1({a})"),
            Pair2(a) => write!(f, "pairAcc2({a})"),
            AsVector(n, a) => write!(f, "asVectorAcc({n}, {a})"),
            Map(v, a) => write!(f, "mapAcc({v} => {a})"),
            At(a, i, None) => write!(f, "{a}[at {i}]"),
            At(a, i, Some(m)) => write!(f, "{a}[at {i}, once in {m}]"),
        }
    }
}

impl Comm {
    fn write(&self, f: &mut fmt::Formatter<'_>, indent: usize) -> fmt::Result {
        let pad = "  ".repeat(indent);
        match self {
            Comm::Skip => writeln!(f, "{pad}skip"),
            Comm::Seq(cs) => cs.iter().try_for_each(|c| c.write(f, indent)),
            Comm::Assign(a, e) => writeln!(f, "{pad}{a} := {e}"),
            Comm::Barrier {
                local,
                global,
                warp,
            } => {
                let fences: Vec<&str> = [(*local, "local"), (*global, "global")]
                    .iter()
                    .filter(|(on, _)| *on)
                    .map(|(_, name)| *name)
                    .collect();
                let name = if *warp { "warpBarrier" } else { "barrier" };
                writeln!(f, "{pad}{name}({})", fences.join(", "))
            }
            Comm::AsyncCopy(body) => {
                writeln!(f, "{pad}async {{")?;
                body.write(f, indent + 1)?;
                writeln!(f, "{pad}}}")
            }
            Comm::AsyncCommit => writeln!(f, "{pad}asyncCommit"),
            Comm::AsyncWait(n) => writeln!(f, "{pad}asyncWait({n})"),
            Comm::NatLet { var, value, body } => {
                writeln!(f, "{pad}let {var} = {value} {{")?;
                body.write(f, indent + 1)?;
                writeln!(f, "{pad}}}")
            }
            Comm::IfLess { lhs, rhs, body } => {
                writeln!(f, "{pad}if {lhs} < {rhs} {{")?;
                body.write(f, indent + 1)?;
                writeln!(f, "{pad}}}")
            }
            Comm::New { ident, addr, body } => {
                writeln!(f, "{pad}new {addr} {ident}: {} {{", ident.ty)?;
                body.write(f, indent + 1)?;
                writeln!(f, "{pad}}}")
            }
            Comm::For {
                var,
                count,
                kind,
                origin,
                body,
            } => {
                writeln!(f, "{pad}for{kind:?} {var} < {count} {{ // {origin}")?;
                body.write(f, indent + 1)?;
                writeln!(f, "{pad}}}")
            }
        }
    }
}

/// The imperative program in a readable, indented form (for tests and `--emit dpia`).
impl fmt::Display for Comm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.write(f, 0)
    }
}
