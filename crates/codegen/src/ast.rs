//! A small C-like AST: what the lowering produces and the printers print.
//!
//! It covers the common ground of C, OpenMP C, OpenCL C and CUDA C: scalar,
//! named (typedef'd) and pointer types, expressions with C precedence, the
//! statements a kernel needs, functions and a translation unit with includes
//! and typedefs. What differs between the dialects is marked, not spelled:
//! address spaces ([`AddrSpace`]), the function kind ([`FnKind`]), loop
//! pragmas ([`Pragma`]); each printer decides how (or whether) to write them.

/// The name of the index typedef of GPU programs ([`Scalar::Index`]).
pub const INDEX_TYPE: &str = "shine_index";

/// The macro that, defined when a GPU program is built, makes [`INDEX_TYPE`] 64 bits wide.
pub const INDEX_64_MACRO: &str = "SHINE_INDEX_64";

/// A C type.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Type {
    /// `void`.
    Void,
    /// A builtin scalar type.
    Scalar(Scalar),
    /// A type named by a typedef (a vector or a struct) or a library type (`size_t`).
    Named(String),
    /// A pointer.
    Pointer {
        /// The pointed-to type.
        to: Box<Type>,
        /// `const` pointee.
        is_const: bool,
        /// `restrict` pointer.
        restrict: bool,
        /// Where the pointee lives (printed by OpenCL/CUDA printers only).
        addr: AddrSpace,
    },
}

/// The builtin scalar types.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Scalar {
    /// `bool` (`stdbool.h`).
    Bool,
    /// `int`.
    Int,
    /// The type of sizes and indices: `int64_t` in C; on GPUs [`INDEX_TYPE`], a typedef
    /// of `int` or, when the program is built with [`INDEX_64_MACRO`] defined, of a
    /// 64-bit integer (the host picks the width from the sizes of a run).
    Index,
    /// The type of `natType` values: 64 bits on every target, whatever the width of
    /// [`Scalar::Index`] (`int64_t` in C, `long` in OpenCL C, `long long` in CUDA), since
    /// its values are data, not extents.
    Nat,
    /// `int8_t`.
    I8,
    /// `int16_t`.
    I16,
    /// `int32_t`.
    I32,
    /// `int64_t`.
    I64,
    /// `uint8_t`.
    U8,
    /// `uint16_t`.
    U16,
    /// `uint32_t`.
    U32,
    /// `uint64_t`.
    U64,
    /// `float`.
    Float,
    /// `double`.
    Double,
    /// `f16`: `_Float16` in C, `half` in OpenCL, `__half` in CUDA (see [`crate::halfs`]).
    F16,
    /// `bf16`: the typedef `shine_bf16` of the bit pattern (see [`crate::halfs`]).
    Bf16,
}

impl Scalar {
    /// The C spelling.
    pub fn c_name(self) -> &'static str {
        match self {
            Scalar::Bool => "bool",
            Scalar::Int => "int",
            Scalar::Index | Scalar::Nat => "int64_t",
            Scalar::I8 => "int8_t",
            Scalar::I16 => "int16_t",
            Scalar::I32 => "int32_t",
            Scalar::I64 => "int64_t",
            Scalar::U8 => "uint8_t",
            Scalar::U16 => "uint16_t",
            Scalar::U32 => "uint32_t",
            Scalar::U64 => "uint64_t",
            Scalar::Float => "float",
            Scalar::Double => "double",
            Scalar::F16 => "_Float16",
            Scalar::Bf16 => crate::halfs::BF16_TYPE,
        }
    }

    /// Size in bytes.
    pub fn bytes(self) -> u32 {
        match self {
            Scalar::Bool | Scalar::I8 | Scalar::U8 => 1,
            Scalar::I16 | Scalar::U16 | Scalar::F16 | Scalar::Bf16 => 2,
            Scalar::Int | Scalar::I32 | Scalar::U32 | Scalar::Float => 4,
            Scalar::Index | Scalar::Nat | Scalar::I64 | Scalar::U64 | Scalar::Double => 8,
        }
    }

    /// Floating point.
    pub fn is_float(self) -> bool {
        matches!(
            self,
            Scalar::Float | Scalar::Double | Scalar::F16 | Scalar::Bf16
        )
    }

    /// A 16-bit float type, computed in `float` ([`crate::halfs`]).
    pub fn is_half(self) -> bool {
        matches!(self, Scalar::F16 | Scalar::Bf16)
    }
}

/// An address space (OpenCL naming); the C printers ignore it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum AddrSpace {
    /// Not stated (plain C memory).
    #[default]
    Default,
    /// Global (device) memory.
    Global,
    /// Memory shared by a work-group.
    Local,
    /// Memory private to a thread.
    Private,
    /// Read-only constant memory.
    Constant,
}

impl Type {
    /// A pointer to `to`, without qualifiers.
    pub fn ptr(to: Type) -> Type {
        Type::Pointer {
            to: Box::new(to),
            is_const: false,
            restrict: false,
            addr: AddrSpace::Default,
        }
    }

    /// A pointer to `const to`.
    pub fn const_ptr(to: Type) -> Type {
        Type::Pointer {
            to: Box::new(to),
            is_const: true,
            restrict: false,
            addr: AddrSpace::Default,
        }
    }
}

/// A unary operator.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UnOp {
    /// `-x`
    Neg,
    /// `!x`
    Not,
    /// `~x`
    BitNot,
    /// `*p`
    Deref,
    /// `&x`
    AddrOf,
}

/// A binary operator.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BinOp {
    /// `*`
    Mul,
    /// `/`
    Div,
    /// `%`
    Mod,
    /// `+`
    Add,
    /// `-`
    Sub,
    /// `<<`
    Shl,
    /// `>>`
    Shr,
    /// `&`
    BitAnd,
    /// `^`
    BitXor,
    /// `|`
    BitOr,
    /// `<`
    Lt,
    /// `<=`
    Le,
    /// `>`
    Gt,
    /// `>=`
    Ge,
    /// `==`
    Eq,
    /// `!=`
    Ne,
    /// `&&`
    And,
    /// `||`
    Or,
}

impl BinOp {
    /// The C spelling.
    pub fn c_name(self) -> &'static str {
        match self {
            BinOp::Mul => "*",
            BinOp::Div => "/",
            BinOp::Mod => "%",
            BinOp::Add => "+",
            BinOp::Sub => "-",
            BinOp::Shl => "<<",
            BinOp::Shr => ">>",
            BinOp::BitAnd => "&",
            BinOp::BitXor => "^",
            BinOp::BitOr => "|",
            BinOp::Lt => "<",
            BinOp::Le => "<=",
            BinOp::Gt => ">",
            BinOp::Ge => ">=",
            BinOp::Eq => "==",
            BinOp::Ne => "!=",
            BinOp::And => "&&",
            BinOp::Or => "||",
        }
    }

    /// C precedence (higher binds tighter).
    pub fn precedence(self) -> u8 {
        match self {
            BinOp::Mul | BinOp::Div | BinOp::Mod => 13,
            BinOp::Add | BinOp::Sub => 12,
            BinOp::Shl | BinOp::Shr => 11,
            BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge => 10,
            BinOp::Eq | BinOp::Ne => 9,
            BinOp::BitAnd => 8,
            BinOp::BitXor => 7,
            BinOp::BitOr => 6,
            BinOp::And => 5,
            BinOp::Or => 4,
        }
    }
}

/// An expression.
#[derive(Clone, Debug, PartialEq)]
pub enum Expr {
    /// A variable, parameter or function name.
    Ident(String),
    /// An integer literal (printed as written; a cast gives it another type).
    Int(i64),
    /// A floating-point literal: `2.0f` when `single`, `2.0` otherwise.
    Float {
        /// The value.
        value: f64,
        /// `float` rather than `double`.
        single: bool,
    },
    /// `true` / `false`.
    Bool(bool),
    /// `a[i]` (arrays, pointers, and lanes of vectors).
    Index(Box<Expr>, Box<Expr>),
    /// `a.field`.
    Member(Box<Expr>, String),
    /// A unary operation.
    Unary(UnOp, Box<Expr>),
    /// A binary operation.
    Binary(BinOp, Box<Expr>, Box<Expr>),
    /// `c ? a : b`.
    Ternary(Box<Expr>, Box<Expr>, Box<Expr>),
    /// `(T)e`.
    Cast(Type, Box<Expr>),
    /// `f(args)`.
    Call(String, Vec<Expr>),
    /// A floating-point math function of operands of scalar type `elem` (or, in
    /// OpenCL, vectors of it): each printer spells it in its dialect (`sqrtf(x)`
    /// in C, `sqrt(x)` in OpenCL, `rsqrtf(x)` in CUDA, `1.0f / sqrtf(x)` for
    /// `rsqrt` in C).
    Math {
        /// The function (`abs`, `min`, `max` are `fabs`, `fmin`, `fmax` here).
        f: rise::primitives::MathFn,
        /// `Float` or `Double`.
        elem: Scalar,
        /// The operands.
        args: Vec<Expr>,
    },
    /// `sizeof(T)`.
    SizeOf(Type),
    /// Zero in every lane or field, as the initial value of a declaration: `{0}`,
    /// except for a vector in OpenCL, which has no brace initialiser for vectors and
    /// takes the given vector of zeros (an [`Expr::VectorLit`]).
    ZeroInit(Option<Box<Expr>>),
    /// A vector value used as a value of its vector type `T` (beside another of
    /// that type, as in a conditional): C casts `(T)e`, since its vector loads have
    /// the unaligned variant of `T`; the GPU dialects' loads have `T` already.
    VectorValue(Type, Box<Expr>),
    /// A vector value of the GPU dialects' builtin vector types, lane by lane
    /// (`(float4){a, b, c, d}` in C, `(float4)(a, b, c, d)` in OpenCL,
    /// `make_float4(a, b, c, d)` in CUDA).
    VectorLit(Type, Vec<Expr>),
    /// Lane `k` of a vector value: C `v[k]`, OpenCL `v.s0` .. `v.sf`, CUDA
    /// `v.x` .. `v.w`.
    Lane(Box<Expr>, u32),
    /// A vector converted lane by lane to the vector type `to` of `lanes` lanes
    /// of `elem`: C `__builtin_convertvector(e, T)`, OpenCL `convert_T(e)`, CUDA
    /// (which has no conversion of vectors) `make_T((s)e.x, (s)e.y, ...)`.
    Convert {
        /// The vector type converted to.
        to: Type,
        /// Its lanes' scalar type.
        elem: Scalar,
        /// Its number of lanes.
        lanes: u32,
        /// The vector converted.
        e: Box<Expr>,
    },
    /// Consecutive elements of an array read as one vector: C and CUDA
    /// `*(const float4 *)&x[i]`, OpenCL `vload4(k, x)`.
    VectorLoad(Box<VectorAccess>),
    /// C text printed as is (always a complete, parenthesised expression).
    Raw(String),
    /// A thread index or count of a GPU launch, in dimension 0, 1 or 2 (OpenCL
    /// `get_local_id(d)`, CUDA `threadIdx.x`, ...).
    Gpu(GpuIndex, u8),
    /// The value of the scalar expression in another lane of the warp, all 32 lanes
    /// taking part (CUDA `__shfl_xor_sync(0xffffffffu, e, o)` for lane `l xor o`,
    /// `__shfl_sync(0xffffffffu, e, k)` for lane `k`, `__shfl_up_sync(0xffffffffu, e, d)`
    /// for lane `l − d`).
    Shuffle(Box<Expr>, dpia::Shuffle),
    /// Stores the value (an `int`) where the pointer points, atomically, and yields
    /// what was there (C `__atomic_exchange_n`, OpenCL `atomic_xchg`, CUDA `atomicExch`).
    AtomicExchange(Box<Expr>, Box<Expr>),
    /// Stores the third value (an `int`) where the pointer points if the second is there,
    /// atomically, and yields what was there (C `__sync_val_compare_and_swap`, OpenCL
    /// `atomic_cmpxchg`, CUDA `atomicCAS`).
    AtomicCompareExchange(Box<Expr>, Box<Expr>, Box<Expr>),
}

/// The thread indices and counts of a GPU launch ([`Expr::Gpu`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum GpuIndex {
    /// The index of the thread among all threads (`get_global_id`, `blockIdx.x * blockDim.x + threadIdx.x`).
    GlobalId,
    /// The number of all threads (`get_global_size`, `gridDim.x * blockDim.x`).
    GlobalSize,
    /// The index of the work-group (`get_group_id`, `blockIdx.x`).
    GroupId,
    /// The number of work-groups (`get_num_groups`, `gridDim.x`).
    NumGroups,
    /// The index of the thread in its work-group (`get_local_id`, `threadIdx.x`).
    LocalId,
    /// The number of threads of a work-group (`get_local_size`, `blockDim.x`).
    LocalSize,
    /// The index of the thread's warp in its block (CUDA `threadIdx.x / 32`; dimension 0).
    WarpId,
    /// The number of warps of a block (CUDA `blockDim.x / 32`; dimension 0).
    NumWarps,
    /// The thread's lane in its warp (CUDA `threadIdx.x % 32`; dimension 0).
    LaneId,
}

impl Expr {
    /// A variable.
    pub fn ident(name: &str) -> Expr {
        Expr::Ident(name.to_string())
    }

    /// `self[i]`.
    pub fn index(self, i: Expr) -> Expr {
        Expr::Index(Box::new(self), Box::new(i))
    }

    /// `self.field`.
    pub fn member(self, field: &str) -> Expr {
        Expr::Member(Box::new(self), field.to_string())
    }

    /// A unary operation.
    pub fn unary(op: UnOp, e: Expr) -> Expr {
        Expr::Unary(op, Box::new(e))
    }

    /// A binary operation.
    pub fn binary(op: BinOp, a: Expr, b: Expr) -> Expr {
        Expr::Binary(op, Box::new(a), Box::new(b))
    }

    /// `c ? a : b`.
    pub fn ternary(c: Expr, a: Expr, b: Expr) -> Expr {
        Expr::Ternary(Box::new(c), Box::new(a), Box::new(b))
    }

    /// `(ty)self`.
    pub fn cast(self, ty: Type) -> Expr {
        Expr::Cast(ty, Box::new(self))
    }

    /// Lane `k` of the vector `self`.
    pub fn lane(self, k: u32) -> Expr {
        Expr::Lane(Box::new(self), k)
    }

    /// A call statement or expression.
    pub fn call(f: &str, args: Vec<Expr>) -> Expr {
        Expr::Call(f.to_string(), args)
    }
}

/// A statement.
#[derive(Clone, Debug, PartialEq)]
pub enum Stmt {
    /// `// text` (one line per line of `text`).
    Comment(String),
    /// A variable declaration.
    Decl(Decl),
    /// `lhs = rhs;`
    Assign(Expr, Expr),
    /// `e;`
    Expr(Expr),
    /// A vector stored to consecutive elements of an array: C and CUDA
    /// `*(float4 *)&x[i] = v;`, OpenCL `vstore4(v, k, x);`.
    VectorStore(VectorAccess, Expr),
    /// `if (cond) { then } else { els }` (no `else` when `els` is empty).
    If(Expr, Vec<Stmt>, Vec<Stmt>),
    /// A counted loop.
    For(For),
    /// `{ ... }`
    Block(Vec<Stmt>),
    /// `for (;;) { ... }`: repeated until a [`Stmt::Break`] in it leaves it (a look-back).
    Loop(Vec<Stmt>),
    /// `break;` (leaves the innermost [`Stmt::Loop`]).
    Break,
    /// `return e;` / `return;`
    Return(Option<Expr>),
    /// C statements printed as they are, line by line (the body of a foreign function).
    Raw(String),
    /// A work-group barrier (OpenCL `barrier(...)`, CUDA `__syncthreads()`), with
    /// memory fences for local and/or global memory, or a warp's (CUDA `__syncwarp()`).
    Barrier {
        /// Fence local (shared) memory.
        local: bool,
        /// Fence global memory.
        global: bool,
        /// Only the lanes of one warp (CUDA only).
        warp: bool,
    },
}

/// Consecutive elements of an array accessed as one vector
/// ([`Expr::VectorLoad`], [`Stmt::VectorStore`]).
#[derive(Clone, Debug, PartialEq)]
pub struct VectorAccess {
    /// The vector type the elements are accessed as through a pointer (C: the
    /// unaligned variant of a GCC vector type; CUDA: the builtin type, only where
    /// the address is aligned); `None` for OpenCL, whose `vloadN`/`vstoreN` take
    /// the element pointer (and whose builtin types do not cover every vector).
    pub ty: Option<Type>,
    /// The number of lanes.
    pub lanes: u32,
    /// The first element (`x[i]`).
    pub first: Expr,
    /// The array and the index of the vector counted in vectors (`x`, `k`), where
    /// the first element's index is a multiple of the lanes (`i = 4 * k`).
    pub whole: Option<(Expr, Expr)>,
}

/// `ty name[len] = init;` (optionally in an address space).
#[derive(Clone, Debug, PartialEq)]
pub struct Decl {
    /// The (element) type.
    pub ty: Type,
    /// The name.
    pub name: String,
    /// A fixed-size array of this many elements.
    pub array_len: Option<u64>,
    /// The initial value.
    pub init: Option<Expr>,
    /// Where the variable lives.
    pub addr: AddrSpace,
    /// The alignment in bytes a local array is declared with, where it is not the usual
    /// 16 (CUDA: `__align__(1024)` for arrays of 1024 bytes or more, see
    /// `crate::local_memory`).
    pub align: Option<u64>,
}

/// `for (int var = start; var < end; var += step) body`.
#[derive(Clone, Debug, PartialEq)]
pub struct For {
    /// The loop variable (a [`Scalar::Index`]).
    pub var: String,
    /// Its first value.
    pub start: Expr,
    /// The exclusive bound.
    pub end: Expr,
    /// The increment (`1` prints as `var++`).
    pub step: Expr,
    /// The body.
    pub body: Vec<Stmt>,
    /// How the loop is to be run, if not sequentially.
    pub pragma: Option<Pragma>,
}

/// An annotation of a loop.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pragma {
    /// The iterations are independent and run on parallel threads
    /// (OpenMP: `#pragma omp parallel for`; plain C: nothing).
    ParallelFor,
    /// The loop has a constant count and indexes registers (a lane's part of distributed
    /// private memory): unrolled completely, so that every index is a constant (CUDA
    /// `#pragma unroll`; nothing elsewhere).
    Unroll,
}

/// How a function is called.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FnKind {
    /// An ordinary C function with external linkage.
    Plain,
    /// A device kernel (OpenCL `__kernel`, CUDA `__global__`); a plain function in C.
    Kernel,
    /// A function the kernels call, private to the module (`static inline`; CUDA
    /// `static __device__ inline`).
    Helper,
}

/// A function parameter.
#[derive(Clone, Debug, PartialEq)]
pub struct Param {
    /// Its type.
    pub ty: Type,
    /// Its name.
    pub name: String,
}

/// A function definition.
#[derive(Clone, Debug, PartialEq)]
pub struct Function {
    /// How it is called.
    pub kind: FnKind,
    /// Its name.
    pub name: String,
    /// Its result type.
    pub ret: Type,
    /// Its parameters.
    pub params: Vec<Param>,
    /// Its body.
    pub body: Vec<Stmt>,
}

/// A type definition.
#[derive(Clone, Debug, PartialEq)]
pub enum TypeDef {
    /// A SIMD vector of `lanes` elements (GCC vector extensions in C).
    /// `unaligned` types may point anywhere an element may (vector loads and
    /// stores at element alignment) and alias their elements.
    Vector {
        /// The typedef name.
        name: String,
        /// The element type.
        elem: Scalar,
        /// The number of lanes.
        lanes: u32,
        /// Element alignment and `may_alias`.
        unaligned: bool,
    },
    /// A struct.
    Struct {
        /// The typedef name (also the struct tag).
        name: String,
        /// The fields, in order.
        fields: Vec<Param>,
    },
}

impl TypeDef {
    /// The name the typedef introduces.
    pub fn name(&self) -> &str {
        match self {
            TypeDef::Vector { name, .. } | TypeDef::Struct { name, .. } => name,
        }
    }
}

/// A translation unit.
#[derive(Clone, Debug, PartialEq)]
pub struct Unit {
    /// A comment printed first.
    pub header: String,
    /// Headers, as in `#include <NAME>`.
    pub includes: Vec<String>,
    /// Lines printed as they are after the includes (pragmas, helper definitions).
    pub preamble: Vec<String>,
    /// Type definitions, dependencies first.
    pub typedefs: Vec<TypeDef>,
    /// Functions, callees first.
    pub functions: Vec<Function>,
}

/// The identifiers the statements mention (variables, functions, fields, and
/// the words of raw C text).
pub fn idents(stmts: &[Stmt]) -> std::collections::BTreeSet<String> {
    let mut out = std::collections::BTreeSet::new();
    stmts.iter().for_each(|s| stmt_idents(s, &mut out));
    out
}

fn stmt_idents(s: &Stmt, out: &mut std::collections::BTreeSet<String>) {
    match s {
        Stmt::Comment(_) | Stmt::Return(None) | Stmt::Barrier { .. } => {}
        Stmt::Raw(text) => expr_idents(&Expr::Raw(text.clone()), out),
        Stmt::Decl(d) => {
            out.insert(d.name.clone());
            d.init.iter().for_each(|e| expr_idents(e, out));
        }
        Stmt::Assign(a, b) => {
            expr_idents(a, out);
            expr_idents(b, out);
        }
        Stmt::Expr(e) | Stmt::Return(Some(e)) => expr_idents(e, out),
        Stmt::VectorStore(access, v) => {
            access_idents(access, out);
            expr_idents(v, out);
        }
        Stmt::If(c, a, b) => {
            expr_idents(c, out);
            a.iter().chain(b).for_each(|s| stmt_idents(s, out));
        }
        Stmt::For(f) => {
            out.insert(f.var.clone());
            [&f.start, &f.end, &f.step]
                .into_iter()
                .for_each(|e| expr_idents(e, out));
            f.body.iter().for_each(|s| stmt_idents(s, out));
        }
        Stmt::Block(b) | Stmt::Loop(b) => b.iter().for_each(|s| stmt_idents(s, out)),
        Stmt::Break => {}
    }
}

fn expr_idents(e: &Expr, out: &mut std::collections::BTreeSet<String>) {
    match e {
        Expr::Ident(n) => {
            out.insert(n.clone());
        }
        Expr::Int(_) | Expr::Float { .. } | Expr::Bool(_) | Expr::SizeOf(_) | Expr::Gpu(..) => {}
        Expr::Raw(text) => {
            let words = text.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'));
            out.extend(words.filter(|w| !w.is_empty()).map(String::from));
        }
        Expr::Index(a, b) | Expr::Binary(_, a, b) | Expr::AtomicExchange(a, b) => {
            expr_idents(a, out);
            expr_idents(b, out);
        }
        Expr::Member(a, _)
        | Expr::Shuffle(a, _)
        | Expr::Lane(a, _)
        | Expr::Unary(_, a)
        | Expr::Cast(_, a)
        | Expr::VectorValue(_, a)
        | Expr::Convert { e: a, .. } => expr_idents(a, out),
        Expr::Ternary(a, b, c) | Expr::AtomicCompareExchange(a, b, c) => {
            [a, b, c].into_iter().for_each(|e| expr_idents(e, out))
        }
        Expr::Call(f, args) | Expr::VectorLit(Type::Named(f), args) => {
            out.insert(f.clone());
            args.iter().for_each(|e| expr_idents(e, out));
        }
        Expr::VectorLit(_, args) | Expr::Math { args, .. } => {
            args.iter().for_each(|e| expr_idents(e, out))
        }
        Expr::ZeroInit(v) => v.iter().for_each(|e| expr_idents(e, out)),
        Expr::VectorLoad(access) => access_idents(access, out),
    }
}

impl Expr {
    /// The expression with every occurrence of the identifier `name` replaced by `by`.
    pub fn replace_ident(&self, name: &str, by: &Expr) -> Expr {
        let r = |e: &Expr| Box::new(e.replace_ident(name, by));
        let all = |es: &[Expr]| es.iter().map(|e| e.replace_ident(name, by)).collect();
        match self {
            Expr::Ident(n) if n == name => by.clone(),
            Expr::Ident(_)
            | Expr::Int(_)
            | Expr::Float { .. }
            | Expr::Bool(_)
            | Expr::SizeOf(_)
            | Expr::Raw(_)
            | Expr::Gpu(..) => self.clone(),
            Expr::Index(a, b) => Expr::Index(r(a), r(b)),
            Expr::Binary(op, a, b) => Expr::Binary(*op, r(a), r(b)),
            Expr::AtomicExchange(a, b) => Expr::AtomicExchange(r(a), r(b)),
            Expr::AtomicCompareExchange(p, a, b) => Expr::AtomicCompareExchange(r(p), r(a), r(b)),
            Expr::Member(a, f) => Expr::Member(r(a), f.clone()),
            Expr::Lane(a, k) => Expr::Lane(r(a), *k),
            Expr::Shuffle(a, s) => Expr::Shuffle(r(a), *s),
            Expr::Unary(op, a) => Expr::Unary(*op, r(a)),
            Expr::Cast(t, a) => Expr::Cast(t.clone(), r(a)),
            Expr::VectorValue(t, a) => Expr::VectorValue(t.clone(), r(a)),
            Expr::Convert { to, elem, lanes, e } => Expr::Convert {
                to: to.clone(),
                elem: *elem,
                lanes: *lanes,
                e: r(e),
            },
            Expr::Ternary(c, a, b) => Expr::Ternary(r(c), r(a), r(b)),
            Expr::Call(f, args) => Expr::Call(f.clone(), all(args)),
            Expr::VectorLit(t, args) => Expr::VectorLit(t.clone(), all(args)),
            Expr::Math { f, elem, args } => Expr::Math {
                f: *f,
                elem: *elem,
                args: all(args),
            },
            Expr::ZeroInit(v) => Expr::ZeroInit(v.as_ref().map(|e| r(e))),
            Expr::VectorLoad(a) => Expr::VectorLoad(Box::new(VectorAccess {
                ty: a.ty.clone(),
                lanes: a.lanes,
                first: a.first.replace_ident(name, by),
                whole: a
                    .whole
                    .as_ref()
                    .map(|(x, i)| (x.replace_ident(name, by), i.replace_ident(name, by))),
            })),
        }
    }
}

/// The number of nodes of the statements: each statement and each expression in
/// them counts one (a measure of the size of generated code, see
/// [`dpia::limits::MAX_GENERATED_NODES`]).
pub fn node_count(stmts: &[Stmt]) -> usize {
    stmts.iter().map(stmt_nodes).sum()
}

fn stmt_nodes(s: &Stmt) -> usize {
    1 + match s {
        Stmt::Comment(_)
        | Stmt::Return(None)
        | Stmt::Barrier { .. }
        | Stmt::Raw(_)
        | Stmt::Break => 0,
        Stmt::Decl(d) => d.init.as_ref().map_or(0, expr_nodes),
        Stmt::Assign(a, b) => expr_nodes(a) + expr_nodes(b),
        Stmt::Expr(e) | Stmt::Return(Some(e)) => expr_nodes(e),
        Stmt::VectorStore(access, v) => access_nodes(access) + expr_nodes(v),
        Stmt::If(c, a, b) => expr_nodes(c) + node_count(a) + node_count(b),
        Stmt::For(f) => {
            expr_nodes(&f.start) + expr_nodes(&f.end) + expr_nodes(&f.step) + node_count(&f.body)
        }
        Stmt::Block(b) | Stmt::Loop(b) => node_count(b),
    }
}

fn expr_nodes(e: &Expr) -> usize {
    let all = |es: &[Expr]| es.iter().map(expr_nodes).sum::<usize>();
    1 + match e {
        Expr::Ident(_)
        | Expr::Int(_)
        | Expr::Float { .. }
        | Expr::Bool(_)
        | Expr::SizeOf(_)
        | Expr::Gpu(..)
        | Expr::Raw(_) => 0,
        Expr::Index(a, b) | Expr::Binary(_, a, b) | Expr::AtomicExchange(a, b) => {
            expr_nodes(a) + expr_nodes(b)
        }
        Expr::Member(a, _)
        | Expr::Shuffle(a, _)
        | Expr::Lane(a, _)
        | Expr::Unary(_, a)
        | Expr::Cast(_, a)
        | Expr::VectorValue(_, a)
        | Expr::Convert { e: a, .. } => expr_nodes(a),
        Expr::Ternary(a, b, c) | Expr::AtomicCompareExchange(a, b, c) => {
            expr_nodes(a) + expr_nodes(b) + expr_nodes(c)
        }
        Expr::Call(_, args) | Expr::VectorLit(_, args) | Expr::Math { args, .. } => all(args),
        Expr::ZeroInit(v) => v.as_deref().map_or(0, expr_nodes),
        Expr::VectorLoad(access) => access_nodes(access),
    }
}

fn access_nodes(a: &VectorAccess) -> usize {
    expr_nodes(&a.first)
        + a.whole
            .as_ref()
            .map_or(0, |(x, i)| expr_nodes(x) + expr_nodes(i))
}

fn access_idents(a: &VectorAccess, out: &mut std::collections::BTreeSet<String>) {
    expr_idents(&a.first, out);
    if let Some((array, index)) = &a.whole {
        expr_idents(array, out);
        expr_idents(index, out);
    }
}
