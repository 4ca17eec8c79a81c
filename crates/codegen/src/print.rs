//! Printing the AST as C, OpenMP C, OpenCL C or CUDA C++.
//!
//! C and OpenMP differ only in loop pragmas: OpenMP writes
//! `#pragma omp parallel for` before a loop marked [`Pragma::ParallelFor`],
//! plain C writes nothing (and so compiles warning-free without `-fopenmp`).
//! The GPU dialects ([`Target::OpenCl`], [`Target::Cuda`]) spell what the AST
//! marks: kernels (`kernel`, `extern "C" __global__`), address spaces of pointers
//! and declarations (`global`, `local` / `__shared__`), thread indices
//! ([`Expr::Gpu`], warps and lanes), warp shuffles ([`Expr::Shuffle`]), barriers, scalar type names (`long`, `uchar` / `long long`),
//! `restrict` (`__restrict__` in CUDA), vector lanes ([`Expr::Lane`]) and
//! conversions ([`Expr::Convert`]).
//!
//! What other modules need spelled per target (vector type names and lanes,
//! the operators CUDA's vectors lack, foreign functions' preludes) is the
//! dialect table (`print::dialect`), one row per target.
//!
//! Expressions get the parentheses C precedence needs, plus those a reader
//! (and `gcc -Wparentheses`) expects: mixed `&&`/`||`, shifts, ternaries, and
//! `/` or `%` next to another multiplicative operator.

use crate::ast::{
    AddrSpace, BinOp, Decl, Expr, FnKind, For, Function, GpuIndex, Pragma, Scalar, Stmt, Type,
    TypeDef, UnOp, Unit, VectorAccess, INDEX_64_MACRO, INDEX_TYPE,
};
use crate::Target;
use dialect::Dialect;
use rise::primitives::MathFn;

pub(crate) mod dialect;

const INDENT: &str = "  ";

/// Precedence levels of expressions (higher binds tighter).
const P_TERNARY: u8 = 3;
const P_UNARY: u8 = 15;
const P_POSTFIX: u8 = 16;

/// The whole unit as source text in the language of `dialect`.
pub fn print_in(unit: &Unit, dialect: Target) -> String {
    let mut out = String::new();
    for line in unit.header.lines() {
        out.push_str(&format!("// {line}\n"));
    }
    for inc in &unit.includes {
        out.push_str(&format!("#include <{inc}>\n"));
    }
    for line in &unit.preamble {
        out.push_str(line);
        out.push('\n');
    }
    if let Some(wide) = match dialect {
        Target::OpenCl => Some("long"),
        Target::Cuda => Some("long long"),
        Target::C | Target::OpenMp => None,
    } {
        // The host defines the macro where some size of a run needs 64-bit indices.
        out.push_str(&format!(
            "#ifdef {INDEX_64_MACRO}\ntypedef {wide} {INDEX_TYPE};\n#else\ntypedef int {INDEX_TYPE};\n#endif\n"
        ));
    }
    if !unit.typedefs.is_empty() {
        out.push('\n');
    }
    for td in &unit.typedefs {
        out.push_str(&typedef(td, dialect));
    }
    for f in &unit.functions {
        out.push('\n');
        out.push_str(&function(f, dialect));
    }
    out
}

fn typedef(td: &TypeDef, d: Target) -> String {
    match td {
        TypeDef::Vector {
            name,
            elem,
            lanes,
            unaligned,
        } => {
            let bytes = elem.bytes() * lanes;
            let attrs = if *unaligned {
                format!("vector_size({bytes}), aligned({}), may_alias", elem.bytes())
            } else {
                format!("vector_size({bytes})")
            };
            format!(
                "typedef {} {name} __attribute__(({attrs}));\n",
                scalar_name(*elem, d)
            )
        }
        TypeDef::Struct { name, fields } => {
            let mut s = format!("typedef struct {name} {{\n");
            for f in fields {
                s.push_str(&format!("{INDENT}{};\n", declarator_in(&f.ty, &f.name, d)));
            }
            s.push_str(&format!("}} {name};\n"));
            s
        }
    }
}

fn function(f: &Function, d: Target) -> String {
    let params: Vec<String> = f
        .params
        .iter()
        .map(|p| declarator_in(&p.ty, &p.name, d))
        .collect();
    let params = if params.is_empty() {
        "void".to_string()
    } else {
        params.join(", ")
    };
    let qualifier = match (f.kind, d) {
        (FnKind::Kernel, Target::OpenCl) => "kernel ",
        (FnKind::Kernel, Target::Cuda) => "extern \"C\" __global__ ",
        (FnKind::Helper, Target::Cuda) => "static __device__ inline ",
        (FnKind::Helper, _) => "static inline ",
        // C and OpenMP have no kernel qualifier: a kernel is a plain function.
        _ => "",
    };
    let mut p = Printer {
        out: String::new(),
        dialect: d,
        parallel_depth: 0,
    };
    p.line(
        0,
        &format!(
            "{qualifier}{} {}({params}) {{",
            type_name_in(&f.ret, d),
            f.name
        ),
    );
    p.stmts(&f.body, 1);
    p.line(0, "}");
    p.out
}

/// The spelling of a scalar type in `d`.
fn scalar_name(s: Scalar, d: Target) -> &'static str {
    match d {
        Target::C | Target::OpenMp => s.c_name(),
        Target::OpenCl => match s {
            Scalar::I8 => "char",
            Scalar::I16 => "short",
            Scalar::I32 => "int",
            Scalar::Index => INDEX_TYPE,
            Scalar::I64 | Scalar::Nat => "long",
            Scalar::U8 => "uchar",
            Scalar::U16 => "ushort",
            Scalar::U32 => "uint",
            Scalar::U64 => "ulong",
            Scalar::F16 => "half",
            s => s.c_name(),
        },
        Target::Cuda => match s {
            Scalar::I8 => "signed char",
            Scalar::I16 => "short",
            Scalar::I32 => "int",
            Scalar::Index => INDEX_TYPE,
            Scalar::I64 | Scalar::Nat => "long long",
            Scalar::U8 => "unsigned char",
            Scalar::U16 => "unsigned short",
            Scalar::U32 => "unsigned int",
            Scalar::U64 => "unsigned long long",
            Scalar::F16 => "__half",
            s => s.c_name(),
        },
    }
}

/// The address-space qualifier of a pointee or a declaration, with a trailing space.
fn addr_space(a: AddrSpace, d: Target, declaration: bool) -> &'static str {
    match (d, a) {
        (Target::OpenCl, AddrSpace::Global) => "global ",
        (Target::OpenCl, AddrSpace::Local) => "local ",
        (Target::OpenCl, AddrSpace::Constant) => "constant ",
        (Target::Cuda, AddrSpace::Local) if declaration => "__shared__ ",
        (Target::Cuda, AddrSpace::Constant) if declaration => "__constant__ ",
        _ => "",
    }
}

/// `T name`, with the pointer star attached to the name (`float *restrict x`).
fn declarator_in(ty: &Type, name: &str, d: Target) -> String {
    match ty {
        Type::Pointer {
            to,
            is_const,
            restrict,
            addr,
        } => {
            let r = match (restrict, d) {
                (false, _) => "",
                (true, Target::Cuda) => "__restrict__ ",
                (true, _) => "restrict ",
            };
            let space = addr_space(*addr, d, false);
            match (is_const, &**to) {
                // `void *const *buffers`: the pointee is a const pointer
                (true, Type::Pointer { .. }) => {
                    format!("{space}{}const *{r}{name}", type_name_in(to, d))
                }
                (true, _) => format!("const {space}{} *{r}{name}", type_name_in(to, d)),
                (false, _) => format!("{space}{} *{r}{name}", type_name_in(to, d)),
            }
        }
        _ => format!("{} {name}", type_name_in(ty, d)),
    }
}

/// The type as written in casts and `sizeof` (in C).
pub fn type_name(ty: &Type) -> String {
    type_name_in(ty, Target::C)
}

/// The type as written in casts and `sizeof`, in `d`.
pub fn type_name_in(ty: &Type, d: Target) -> String {
    match ty {
        Type::Void => "void".into(),
        Type::Scalar(s) => scalar_name(*s, d).into(),
        Type::Named(n) => n.clone(),
        Type::Pointer { .. } => declarator_in(ty, "", d).trim_end().to_string(),
    }
}

struct Printer {
    out: String,
    dialect: Target,
    /// How many parallel loops enclose the statement being printed.
    parallel_depth: usize,
}

impl Printer {
    fn line(&mut self, depth: usize, text: &str) {
        for _ in 0..depth {
            self.out.push_str(INDENT);
        }
        self.out.push_str(text);
        self.out.push('\n');
    }

    fn stmts(&mut self, stmts: &[Stmt], depth: usize) {
        for s in stmts {
            self.stmt(s, depth);
        }
    }

    fn stmt(&mut self, s: &Stmt, depth: usize) {
        let d = self.dialect;
        match s {
            Stmt::Comment(text) => {
                for l in text.lines() {
                    self.line(depth, &format!("// {l}"));
                }
            }
            Stmt::Raw(text) => {
                for l in text.trim_matches('\n').lines() {
                    self.out.push_str(l);
                    self.out.push('\n');
                }
            }
            Stmt::Decl(decl) => self.line(depth, &decl_in(decl, d)),
            Stmt::Assign(l, r) => {
                self.line(depth, &format!("{} = {};", expr_in(l, d), expr_in(r, d)))
            }
            Stmt::Expr(e) => self.line(depth, &format!("{};", expr_in(e, d))),
            Stmt::VectorStore(access, v) => self.stmt(&vector_store(access, v, d), depth),
            Stmt::If(c, then, els) => {
                self.line(depth, &format!("if ({}) {{", expr_in(c, d)));
                self.stmts(then, depth + 1);
                if els.is_empty() {
                    self.line(depth, "}");
                } else {
                    self.line(depth, "} else {");
                    self.stmts(els, depth + 1);
                    self.line(depth, "}");
                }
            }
            Stmt::For(f) => self.for_loop(f, depth),
            Stmt::Block(b) => {
                self.line(depth, "{");
                self.stmts(b, depth + 1);
                self.line(depth, "}");
            }
            Stmt::Loop(b) => {
                self.line(depth, "for (;;) {");
                self.stmts(b, depth + 1);
                self.line(depth, "}");
            }
            Stmt::Break => self.line(depth, "break;"),
            Stmt::Return(None) => self.line(depth, "return;"),
            Stmt::Return(Some(e)) => self.line(depth, &format!("return {};", expr_in(e, d))),
            Stmt::Barrier {
                local,
                global,
                warp,
            } => {
                let text = match d {
                    Target::Cuda if *warp => "__syncwarp();".to_string(),
                    Target::Cuda => "__syncthreads();".to_string(),
                    _ => {
                        let mut fences = Vec::new();
                        if *local || !*global {
                            fences.push("CLK_LOCAL_MEM_FENCE");
                        }
                        if *global {
                            fences.push("CLK_GLOBAL_MEM_FENCE");
                        }
                        format!("barrier({});", fences.join(" | "))
                    }
                };
                self.line(depth, &text);
            }
        }
    }

    fn for_loop(&mut self, f: &For, depth: usize) {
        let d = self.dialect;
        let parallel = f.pragma == Some(Pragma::ParallelFor);
        if parallel && self.parallel_depth == 0 && d == Target::OpenMp {
            self.line(depth, omp_parallel_for(f));
        }
        if f.pragma == Some(Pragma::Unroll) && d == Target::Cuda {
            self.line(depth, "#pragma unroll");
        }
        let step = match &f.step {
            Expr::Int(1) => format!("{}++", f.var),
            s => format!("{} += {}", f.var, expr_in(s, d)),
        };
        self.line(
            depth,
            &format!(
                "for ({} {v} = {}; {v} < {}; {step}) {{",
                scalar_name(Scalar::Index, d),
                expr_in(&f.start, d),
                expr_in(&f.end, d),
                v = f.var
            ),
        );
        self.parallel_depth += usize::from(parallel);
        self.stmts(&f.body, depth + 1);
        self.parallel_depth -= usize::from(parallel);
        self.line(depth, "}");
    }
}

fn decl_in(decl: &Decl, d: Target) -> String {
    // Local-memory arrays are aligned to 16 bytes, so that the GPU compilers may read
    // consecutive elements at 16-byte aligned offsets as one vector (`LDS.128`), or to what
    // the declaration asks (see `crate::local_memory`).
    let local_array = decl.addr == AddrSpace::Local && decl.array_len.is_some();
    let align = match d {
        Target::Cuda if local_array => format!("__align__({}) ", decl.align.unwrap_or(16)),
        _ => String::new(),
    };
    let mut s = format!(
        "{}{align}{}",
        addr_space(decl.addr, d, true),
        declarator_in(&decl.ty, &decl.name, d)
    );
    if let Some(n) = decl.array_len {
        s.push_str(&format!("[{n}]"));
    }
    if local_array && d == Target::OpenCl {
        s.push_str(&format!(
            " __attribute__((aligned({})))",
            decl.align.unwrap_or(16)
        ));
    }
    if let Some(init) = &decl.init {
        s.push_str(&format!(" = {}", expr_in(init, d)));
    }
    s.push(';');
    s
}

/// An expression at the top level (no surrounding parentheses), in C.
pub fn expr(e: &Expr) -> String {
    expr_in(e, Target::C)
}

/// An argument of a call: in parentheses where it holds braces (a compound literal such as
/// `(float4){x, x, x, x}`), whose commas a function-like macro (`shine_vfmax`) would
/// otherwise take for its own argument separators.
fn call_argument(a: &Expr, d: Target) -> String {
    let text = expr_in(a, d);
    if text.contains('{') {
        format!("({text})")
    } else {
        text
    }
}

/// An expression at the top level (no surrounding parentheses), in `d`.
pub fn expr_in(e: &Expr, d: Target) -> String {
    doc(e, d).0
}

/// Printed text and its precedence.
fn doc(e: &Expr, d: Target) -> (String, u8) {
    match e {
        Expr::Ident(n) => (n.clone(), P_POSTFIX),
        Expr::Int(v) if *v < 0 => (v.to_string(), P_UNARY),
        Expr::Int(v) => (v.to_string(), P_POSTFIX),
        Expr::Float { value, single } => float_literal(*value, *single, d),
        Expr::Bool(b) => (b.to_string(), P_POSTFIX),
        Expr::Raw(s) => (s.clone(), P_POSTFIX),
        Expr::Gpu(index, dim) => gpu_index(*index, *dim, d),
        Expr::AtomicExchange(p, v) => {
            let (p, v) = (expr_in(p, d), expr_in(v, d));
            let text = match d {
                Target::C | Target::OpenMp => {
                    format!("__atomic_exchange_n({p}, {v}, __ATOMIC_RELAXED)")
                }
                Target::OpenCl => format!("atomic_xchg({p}, {v})"),
                Target::Cuda => format!("atomicExch({p}, {v})"),
            };
            (text, P_POSTFIX)
        }
        Expr::AtomicCompareExchange(p, old, new) => {
            let (p, old, new) = (expr_in(p, d), expr_in(old, d), expr_in(new, d));
            let text = match d {
                Target::C | Target::OpenMp => {
                    format!("__sync_val_compare_and_swap({p}, {old}, {new})")
                }
                Target::OpenCl => format!("atomic_cmpxchg({p}, {old}, {new})"),
                Target::Cuda => format!("atomicCAS({p}, {old}, {new})"),
            };
            (text, P_POSTFIX)
        }
        Expr::Index(a, i) => (
            format!("{}[{}]", operand(a, P_POSTFIX, d), expr_in(i, d)),
            P_POSTFIX,
        ),
        Expr::Member(a, f) => (format!("{}.{f}", operand(a, P_POSTFIX, d)), P_POSTFIX),
        Expr::Shuffle(a, s) => (shuffle(&expr_in(a, d), *s, d), P_POSTFIX),
        Expr::Lane(a, k) => {
            let v = operand(a, P_POSTFIX, d);
            (format!("{v}{}", Dialect::of(d).lane(*k)), P_POSTFIX)
        }
        Expr::Convert { to, elem, lanes, e } => match d {
            Target::C | Target::OpenMp => (
                format!(
                    "__builtin_convertvector({}, {})",
                    expr_in(e, d),
                    type_name_in(to, d)
                ),
                P_POSTFIX,
            ),
            Target::OpenCl => (
                format!("convert_{}({})", type_name_in(to, d), expr_in(e, d)),
                P_POSTFIX,
            ),
            Target::Cuda => {
                let items = (0..*lanes)
                    .map(|k| (**e).clone().lane(k).cast(Type::Scalar(*elem)))
                    .collect();
                doc(&Expr::VectorLit(to.clone(), items), d)
            }
        },
        Expr::Call(f, args) => {
            let args: Vec<String> = args.iter().map(|a| call_argument(a, d)).collect();
            (format!("{f}({})", args.join(", ")), P_POSTFIX)
        }
        Expr::Math { f, elem, args } => doc(&math_call(*f, *elem, args, d), d),
        Expr::SizeOf(t) => (format!("sizeof({})", type_name_in(t, d)), P_POSTFIX),
        Expr::ZeroInit(Some(vector)) if d == Target::OpenCl => doc(vector, d),
        Expr::ZeroInit(_) => ("{0}".to_string(), P_POSTFIX),
        Expr::VectorValue(t, e) => match d {
            Target::C | Target::OpenMp => doc(&(**e).clone().cast(t.clone()), d),
            Target::OpenCl | Target::Cuda => doc(e, d),
        },
        Expr::VectorLit(t, items) => {
            let items = items
                .iter()
                .map(|a| expr_in(a, d))
                .collect::<Vec<_>>()
                .join(", ");
            let t = type_name_in(t, d);
            let text = match d {
                Target::C | Target::OpenMp => format!("({t}){{{items}}}"),
                Target::OpenCl => format!("({t})({items})"),
                Target::Cuda => format!("make_{t}({items})"),
            };
            (text, P_POSTFIX)
        }
        Expr::VectorLoad(access) => doc(&vector_load(access, d), d),
        Expr::Unary(op, a) => {
            let sym = match op {
                UnOp::Neg => "-",
                UnOp::Not => "!",
                UnOp::BitNot => "~",
                UnOp::Deref => "*",
                UnOp::AddrOf => "&",
            };
            let inner = operand(a, P_UNARY, d);
            // `- -x` and `--x` differ: keep a space between two minus signs.
            let sep = if sym == "-" && inner.starts_with('-') {
                " "
            } else {
                ""
            };
            (format!("{sym}{sep}{inner}"), P_UNARY)
        }
        Expr::Cast(t, a) => (
            format!("({}){}", type_name_in(t, d), operand(a, P_UNARY, d)),
            P_UNARY,
        ),
        Expr::Ternary(c, a, b) => (
            format!(
                "{} ? {} : {}",
                operand(c, P_TERNARY + 1, d),
                operand(a, P_TERNARY + 1, d),
                operand(b, P_TERNARY, d)
            ),
            P_TERNARY,
        ),
        Expr::Binary(op, a, b) => {
            let p = op.precedence();
            let l = child(a, *op, false, d);
            let r = child(b, *op, true, d);
            (format!("{l} {} {r}", op.c_name()), p)
        }
    }
}

/// A math function as the call that spells it in `d`: the C99 name, with the
/// suffix `f` for `float` in C and CUDA (`sqrtf`), OpenCL's overloaded builtin
/// (`sqrt`, on vectors too); `rsqrt`, which C lacks, is `1.0f / sqrtf(x)` there.
/// `abs`, `min` and `max` of floats are `fabs`, `fmin`, `fmax`. In C and OpenMP, the
/// functions of `float` with a kernel of shine's own call it (`shine_expf`, see
/// [`crate::vecmath`]).
fn math_call(f: MathFn, elem: Scalar, args: &[Expr], d: Target) -> Expr {
    let name = match f {
        MathFn::Abs => "fabs",
        MathFn::Min => "fmin",
        MathFn::Max => "fmax",
        f => f.name(),
    };
    let single = elem == Scalar::Float;
    let suffixed = |name: &str| {
        if single {
            Dialect::of(d).float_math(name)
        } else {
            name.to_string()
        }
    };
    let kernel = crate::vecmath::c_name(f).filter(|_| single);
    if let (Some(kernel), Target::C | Target::OpenMp) = (kernel, d) {
        return Expr::call(kernel, args.to_vec());
    }
    match (f, d) {
        (MathFn::Rsqrt, Target::C | Target::OpenMp) => Expr::binary(
            BinOp::Div,
            Expr::Float { value: 1.0, single },
            Expr::call(&suffixed("sqrt"), args.to_vec()),
        ),
        _ => Expr::call(&suffixed(name), args.to_vec()),
    }
}

/// A vector load as the plain expression that spells it in `d`.
fn vector_load(a: &VectorAccess, d: Target) -> Expr {
    match d {
        Target::OpenCl => Expr::call(&format!("vload{}", a.lanes), opencl_vector_args(a)),
        Target::C | Target::OpenMp | Target::Cuda => {
            let addr = Expr::unary(UnOp::AddrOf, a.first.clone());
            Expr::unary(UnOp::Deref, addr.cast(Type::const_ptr(access_type(a))))
        }
    }
}

/// A vector store as the plain statement that spells it in `d`.
fn vector_store(a: &VectorAccess, v: &Expr, d: Target) -> Stmt {
    match d {
        Target::OpenCl => {
            let mut args = vec![v.clone()];
            args.extend(opencl_vector_args(a));
            Stmt::Expr(Expr::call(&format!("vstore{}", a.lanes), args))
        }
        Target::C | Target::OpenMp | Target::Cuda => {
            let addr = Expr::unary(UnOp::AddrOf, a.first.clone());
            let lhs = Expr::unary(UnOp::Deref, addr.cast(Type::ptr(access_type(a))));
            Stmt::Assign(lhs, v.clone())
        }
    }
}

/// The vector type of an access through a pointer (`void` where the lowering
/// gave none, which it does only for OpenCL).
fn access_type(a: &VectorAccess) -> Type {
    a.ty.clone().unwrap_or(Type::Void)
}

/// The offset and pointer arguments of OpenCL's `vloadN`/`vstoreN`: `(k, x)` for
/// the `k`-th vector of `x`, else `(0, &x[i])`.
fn opencl_vector_args(a: &VectorAccess) -> Vec<Expr> {
    match &a.whole {
        Some((array, index)) => vec![index.clone(), array.clone()],
        None => vec![Expr::Int(0), Expr::unary(UnOp::AddrOf, a.first.clone())],
    }
}

/// A warp shuffle of the value `v`, all 32 lanes taking part: CUDA's with the full
/// mask; OpenCL's sub-group functions (the code generator emits neither for OpenCL nor
/// C, which it refuses warps for).
fn shuffle(v: &str, s: dpia::Shuffle, d: Target) -> String {
    match (d, s) {
        (Target::Cuda, dpia::Shuffle::Xor(o)) => format!("__shfl_xor_sync(0xffffffffu, {v}, {o})"),
        (Target::Cuda, dpia::Shuffle::From(k)) => format!("__shfl_sync(0xffffffffu, {v}, {k})"),
        (Target::Cuda, dpia::Shuffle::Up(d)) => format!("__shfl_up_sync(0xffffffffu, {v}, {d})"),
        (_, dpia::Shuffle::Xor(o)) => format!("sub_group_shuffle_xor({v}, {o})"),
        (_, dpia::Shuffle::From(k)) => format!("sub_group_shuffle({v}, {k})"),
        (_, dpia::Shuffle::Up(d)) => format!("sub_group_shuffle_up({v}, {d})"),
    }
}

/// A thread index or count.
fn gpu_index(index: GpuIndex, dim: u8, d: Target) -> (String, u8) {
    if d == Target::Cuda {
        let c = ["x", "y", "z"][usize::from(dim.min(2))];
        let text = match index {
            GpuIndex::WarpId => format!("threadIdx.{c} / 32"),
            GpuIndex::NumWarps => format!("blockDim.{c} / 32"),
            GpuIndex::LaneId => format!("threadIdx.{c} % 32"),
            GpuIndex::LocalId => return (format!("threadIdx.{c}"), P_POSTFIX),
            GpuIndex::LocalSize => return (format!("blockDim.{c}"), P_POSTFIX),
            GpuIndex::GroupId => return (format!("blockIdx.{c}"), P_POSTFIX),
            GpuIndex::NumGroups => return (format!("gridDim.{c}"), P_POSTFIX),
            GpuIndex::GlobalId => format!("blockIdx.{c} * blockDim.{c} + threadIdx.{c}"),
            GpuIndex::GlobalSize => format!("gridDim.{c} * blockDim.{c}"),
        };
        let prec = match index {
            GpuIndex::GlobalId => BinOp::Add.precedence(),
            _ => BinOp::Mul.precedence(),
        };
        return (text, prec);
    }
    let f = match index {
        GpuIndex::GlobalId => "get_global_id",
        GpuIndex::GlobalSize => "get_global_size",
        GpuIndex::GroupId => "get_group_id",
        GpuIndex::NumGroups => "get_num_groups",
        GpuIndex::LocalId => "get_local_id",
        GpuIndex::LocalSize => "get_local_size",
        GpuIndex::WarpId => return ("get_sub_group_id()".into(), P_POSTFIX),
        GpuIndex::NumWarps => return ("get_num_sub_groups()".into(), P_POSTFIX),
        GpuIndex::LaneId => return ("get_sub_group_local_id()".into(), P_POSTFIX),
    };
    (format!("{f}({dim})"), P_POSTFIX)
}

/// `e` printed so that it binds at least as tight as `min`.
fn operand(e: &Expr, min: u8, d: Target) -> String {
    let (s, p) = doc(e, d);
    if p < min {
        format!("({s})")
    } else {
        s
    }
}

/// An operand of a binary operator: parenthesised when C needs it or a reader would want it.
fn child(e: &Expr, parent: BinOp, right: bool, d: Target) -> String {
    let (s, p) = doc(e, d);
    let needs = match e {
        Expr::Binary(op, ..) => binary_child_needs_parens(parent, *op, right),
        _ => p < parent.precedence() || (right && p == parent.precedence() && p < P_UNARY),
    };
    if needs {
        format!("({s})")
    } else {
        s
    }
}

fn binary_child_needs_parens(parent: BinOp, child: BinOp, right: bool) -> bool {
    let arith = |o: BinOp| o.precedence() >= 12;
    let cmp = |o: BinOp| (9..=10).contains(&o.precedence());
    let (pp, cp) = (parent.precedence(), child.precedence());
    if arith(parent) && arith(child) {
        if cp != pp {
            return cp < pp;
        }
        // Same level: C groups to the left, and floating-point `a + (b + c)`
        // is not `a + b + c`, so a right operand keeps its parentheses.
        // On the left, `a * b * c` and `a + b - c`, but `(i / 4) * 4`.
        return right || (pp == 13 && !(parent == BinOp::Mul && child == BinOp::Mul));
    }
    if cmp(parent) {
        return !arith(child);
    }
    if parent == BinOp::And || parent == BinOp::Or {
        // `a < b && c < d && e`; `&&` inside `||` gets parentheses
        return !(cmp(child) || child == parent);
    }
    true
}

fn float_literal(v: f64, single: bool, d: Target) -> (String, u8) {
    let suffix = if single { "f" } else { "" };
    if v.is_nan() || v.is_infinite() {
        let neg = v.is_infinite() && v < 0.0;
        let text = match (d, v.is_nan(), single) {
            (Target::C | Target::OpenMp, true, true) => "__builtin_nanf(\"\")",
            (Target::C | Target::OpenMp, true, false) => "__builtin_nan(\"\")",
            (Target::C | Target::OpenMp, false, true) => "__builtin_inff()",
            (Target::C | Target::OpenMp, false, false) => "__builtin_inf()",
            (Target::OpenCl, true, true) => "NAN",
            (Target::OpenCl, true, false) => "((double)NAN)",
            (Target::OpenCl, false, true) => "INFINITY",
            (Target::OpenCl, false, false) => "((double)INFINITY)",
            (Target::Cuda, true, true) => "__int_as_float(0x7fc00000)",
            (Target::Cuda, true, false) => "__longlong_as_double(0x7ff8000000000000LL)",
            (Target::Cuda, false, true) => "__int_as_float(0x7f800000)",
            (Target::Cuda, false, false) => "__longlong_as_double(0x7ff0000000000000LL)",
        };
        return if neg {
            (format!("-{text}"), P_UNARY)
        } else {
            (text.to_string(), P_POSTFIX)
        };
    }
    // `{:?}` always writes a `.` or an exponent, and enough digits to round-trip.
    let text = if single {
        format!("{:?}{suffix}", v as f32)
    } else {
        format!("{v:?}")
    };
    let prec = if v.is_sign_negative() {
        P_UNARY
    } else {
        P_POSTFIX
    };
    (text, prec)
}

/// Fewer iterations than this (a constant trip count) keep OpenMP's static schedule: one
/// block each, nothing to rebalance.
const FEW_ITERATIONS: i64 = 64;

/// The pragma of an OpenMP parallel loop: `schedule(guided)` where the iterations are many
/// or not known (chunks that shrink as the loop ends, so that a thread slowed by a busy core
/// leaves the rest to the others; the first chunks are as large as static's), the static
/// default for a few.
fn omp_parallel_for(f: &For) -> &'static str {
    match (&f.start, &f.end) {
        (Expr::Int(start), Expr::Int(end))
            if end.checked_sub(*start).is_some_and(|n| n < FEW_ITERATIONS) =>
        {
            "#pragma omp parallel for"
        }
        _ => "#pragma omp parallel for schedule(guided)",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(s: &str) -> Expr {
        Expr::ident(s)
    }
    fn bin(op: BinOp, a: Expr, b: Expr) -> Expr {
        Expr::binary(op, a, b)
    }

    #[test]
    fn math_functions_in_every_dialect() {
        let call = |f: MathFn, elem: Scalar, n: usize, d: Target| {
            let args = ["x", "y", "z"][..n].iter().map(|a| id(a)).collect();
            expr_in(&Expr::Math { f, elem, args }, d)
        };
        let (c, cl, cu) = (Target::C, Target::OpenCl, Target::Cuda);
        assert_eq!(call(MathFn::Sqrt, Scalar::Float, 1, c), "sqrtf(x)");
        assert_eq!(
            call(MathFn::Sqrt, Scalar::Double, 1, Target::OpenMp),
            "sqrt(x)"
        );
        assert_eq!(call(MathFn::Sqrt, Scalar::Float, 1, cl), "sqrt(x)");
        assert_eq!(call(MathFn::Sqrt, Scalar::Float, 1, cu), "sqrtf(x)");
        assert_eq!(call(MathFn::Rsqrt, Scalar::Float, 1, c), "1.0f / sqrtf(x)");
        assert_eq!(call(MathFn::Rsqrt, Scalar::Double, 1, c), "1.0 / sqrt(x)");
        assert_eq!(call(MathFn::Rsqrt, Scalar::Float, 1, cl), "rsqrt(x)");
        assert_eq!(call(MathFn::Rsqrt, Scalar::Float, 1, cu), "rsqrtf(x)");
        assert_eq!(call(MathFn::Abs, Scalar::Float, 1, c), "fabsf(x)");
        assert_eq!(call(MathFn::Min, Scalar::Double, 2, cu), "fmin(x, y)");
        assert_eq!(call(MathFn::Max, Scalar::Float, 2, cl), "fmax(x, y)");
        assert_eq!(call(MathFn::Fma, Scalar::Float, 3, c), "fmaf(x, y, z)");
        assert_eq!(call(MathFn::Atan2, Scalar::Float, 2, cu), "atan2f(x, y)");
        assert_eq!(call(MathFn::Cbrt, Scalar::Float, 1, c), "cbrtf(x)");
        assert_eq!(call(MathFn::Cbrt, Scalar::Double, 1, c), "cbrt(x)");
        assert_eq!(call(MathFn::Log1p, Scalar::Float, 1, cl), "log1p(x)");
        assert_eq!(call(MathFn::Expm1, Scalar::Float, 1, cu), "expm1f(x)");
        assert_eq!(call(MathFn::Erfc, Scalar::Double, 1, cu), "erfc(x)");
        assert_eq!(call(MathFn::Round, Scalar::Float, 1, c), "roundf(x)");
        assert_eq!(call(MathFn::Hypot, Scalar::Float, 2, cl), "hypot(x, y)");
        assert_eq!(
            call(MathFn::Copysign, Scalar::Float, 2, cu),
            "copysignf(x, y)"
        );
        assert_eq!(call(MathFn::Fmod, Scalar::Double, 2, c), "fmod(x, y)");
        // `rsqrt` in C is a division: parenthesised as an operand
        let r = Expr::Math {
            f: MathFn::Rsqrt,
            elem: Scalar::Float,
            args: vec![id("x")],
        };
        assert_eq!(expr(&bin(BinOp::Mul, id("a"), r)), "a * (1.0f / sqrtf(x))");
    }

    #[test]
    fn minimal_readable_parentheses() {
        let ij = bin(BinOp::Add, bin(BinOp::Mul, id("i"), Expr::Int(4)), id("j"));
        assert_eq!(expr(&ij), "i * 4 + j");
        let e = bin(BinOp::Mul, bin(BinOp::Add, id("i"), id("j")), Expr::Int(4));
        assert_eq!(expr(&e), "(i + j) * 4");
        let e = bin(BinOp::Sub, id("a"), bin(BinOp::Sub, id("b"), id("c")));
        assert_eq!(expr(&e), "a - (b - c)");
        let e = bin(
            BinOp::Mul,
            bin(BinOp::Div, id("i"), Expr::Int(4)),
            Expr::Int(4),
        );
        assert_eq!(expr(&e), "(i / 4) * 4");
        let e = bin(BinOp::Add, bin(BinOp::Mod, id("i"), Expr::Int(4)), id("k"));
        assert_eq!(expr(&e), "i % 4 + k");
        let c = bin(
            BinOp::And,
            bin(BinOp::Le, Expr::Int(1), id("i")),
            bin(BinOp::Lt, id("i"), bin(BinOp::Add, id("n"), Expr::Int(1))),
        );
        assert_eq!(expr(&c), "1 <= i && i < n + 1");
        let t = Expr::ternary(
            c,
            id("a"),
            Expr::Float {
                value: 0.0,
                single: true,
            },
        );
        assert_eq!(expr(&t), "1 <= i && i < n + 1 ? a : 0.0f");
        let s = bin(BinOp::Add, t, Expr::Int(1));
        assert!(expr(&s).starts_with("(1 <= i"));
        let x = id("x").index(ij).member("fst");
        assert_eq!(expr(&x), "x[i * 4 + j].fst");
        let neg = Expr::unary(UnOp::Neg, Expr::Int(-3));
        assert_eq!(expr(&neg), "- -3");
        let cast = Expr::cast(
            bin(BinOp::Add, id("a"), id("b")),
            Type::Named("float".into()),
        );
        assert_eq!(expr(&cast), "(float)(a + b)");
    }

    #[test]
    fn vector_literals_in_every_dialect() {
        let v = Expr::VectorLit(Type::Named("float4".into()), vec![id("a"); 4]);
        assert_eq!(expr_in(&v, Target::C), "(float4){a, a, a, a}");
        assert_eq!(expr_in(&v, Target::OpenCl), "(float4)(a, a, a, a)");
        assert_eq!(expr_in(&v, Target::Cuda), "make_float4(a, a, a, a)");
    }

    #[test]
    fn zero_initialisers_and_vector_values_in_every_dialect() {
        let float4 = Type::Named("float4".into());
        let zeros = Expr::VectorLit(float4.clone(), vec![Expr::Int(0); 4]);
        let vector_zero = Expr::ZeroInit(Some(Box::new(zeros)));
        assert_eq!(expr_in(&vector_zero, Target::C), "{0}");
        assert_eq!(expr_in(&vector_zero, Target::Cuda), "{0}");
        assert_eq!(
            expr_in(&vector_zero, Target::OpenCl),
            "(float4)(0, 0, 0, 0)"
        );
        assert_eq!(expr_in(&Expr::ZeroInit(None), Target::OpenCl), "{0}");
        let v = Expr::VectorValue(float4, Box::new(id("v")));
        assert_eq!(expr_in(&v, Target::C), "(float4)v");
        assert_eq!(expr_in(&v, Target::OpenMp), "(float4)v");
        assert_eq!(expr_in(&v, Target::OpenCl), "v");
        assert_eq!(expr_in(&v, Target::Cuda), "v");
    }

    #[test]
    fn a_compound_literal_argument_is_one_argument_of_a_macro() {
        let float4 = Type::Named("float4".into());
        let lit = Expr::VectorLit(float4, vec![id("x"); 4]);
        let call = Expr::call("shine_vfmin", vec![lit, id("acc")]);
        assert_eq!(
            expr_in(&call, Target::C),
            "shine_vfmin(((float4){x, x, x, x}), acc)"
        );
        assert_eq!(
            expr_in(&Expr::call("f", vec![id("a"), id("b")]), Target::C),
            "f(a, b)"
        );
    }

    #[test]
    fn vector_loads_and_stores_in_every_dialect() {
        let access = |ty: Option<&str>, whole: bool| VectorAccess {
            ty: ty.map(|t| Type::Named(t.into())),
            lanes: 4,
            first: id("x").index(id("i")),
            whole: whole.then(|| (id("x"), id("k"))),
        };
        let load = |a| Expr::VectorLoad(Box::new(a));
        assert_eq!(
            expr_in(&load(access(Some("float4_u"), true)), Target::C),
            "*(const float4_u *)&x[i]"
        );
        assert_eq!(
            expr_in(&load(access(None, true)), Target::OpenCl),
            "vload4(k, x)"
        );
        assert_eq!(
            expr_in(&load(access(None, false)), Target::OpenCl),
            "vload4(0, &x[i])"
        );
        let store = Stmt::VectorStore(access(Some("float4"), false), id("v"));
        assert_eq!(
            vector_store(&access(None, true), &id("v"), Target::OpenCl),
            Stmt::Expr(Expr::call("vstore4", vec![id("v"), id("k"), id("x")]))
        );
        let Stmt::VectorStore(a, v) = &store else {
            unreachable!()
        };
        let Stmt::Assign(lhs, _) = vector_store(a, v, Target::Cuda) else {
            panic!("a CUDA vector store is an assignment")
        };
        assert_eq!(expr_in(&lhs, Target::Cuda), "*(float4 *)&x[i]");
    }

    #[test]
    fn vector_lanes_and_conversions_in_every_dialect() {
        let lane = id("v").index(id("i")).lane(10);
        assert_eq!(expr_in(&lane, Target::C), "v[i][10]");
        assert_eq!(expr_in(&lane, Target::OpenCl), "v[i].sa");
        assert_eq!(expr_in(&id("v").lane(2), Target::Cuda), "v.z");
        let convert = Expr::Convert {
            to: Type::Named("int2".into()),
            elem: Scalar::Int,
            lanes: 2,
            e: Box::new(id("v")),
        };
        assert_eq!(
            expr_in(&convert, Target::C),
            "__builtin_convertvector(v, int2)"
        );
        assert_eq!(expr_in(&convert, Target::OpenCl), "convert_int2(v)");
        assert_eq!(
            expr_in(&convert, Target::Cuda),
            "make_int2((int)v.x, (int)v.y)"
        );
    }

    #[test]
    fn float_literals_are_valid_c() {
        assert_eq!(float_literal(2.0, true, Target::C).0, "2.0f");
        assert_eq!(float_literal(0.1, false, Target::C).0, "0.1");
        assert_eq!(float_literal(1e-7, true, Target::C).0, "1e-7f");
        assert_eq!(
            float_literal(f64::INFINITY, true, Target::C).0,
            "__builtin_inff()"
        );
    }

    #[test]
    fn an_openmp_loop_of_many_or_unknown_iterations_is_scheduled_guided() {
        let lp = |start: Expr, end: Expr| For {
            var: "i".into(),
            start,
            end,
            step: Expr::Int(1),
            body: Vec::new(),
            pragma: Some(Pragma::ParallelFor),
        };
        let few = lp(Expr::Int(0), Expr::Int(FEW_ITERATIONS - 1));
        assert_eq!(omp_parallel_for(&few), "#pragma omp parallel for");
        let many = lp(Expr::Int(0), Expr::Int(FEW_ITERATIONS));
        assert!(omp_parallel_for(&many).ends_with("schedule(guided)"));
        let unknown = lp(Expr::Int(0), id("n"));
        assert!(omp_parallel_for(&unknown).ends_with("schedule(guided)"));
    }
}
