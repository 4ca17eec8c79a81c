//! Code generation for shine: imperative DPIA to C and OpenMP, and to OpenCL and
//! CUDA kernels with a host plan ([`gpu`]; RISE & Shine §V-D, Listing 11).
//!
//! [`generate`] turns a [`dpia::Program`] into a C module in three steps:
//! 1. **lowering** ([`lower`]): commands become statements; unrolled loops are
//!    unrolled; `new` becomes stack or heap allocation; every read of an
//!    expression through its views and every write through an acceptor's views
//!    becomes an access to flat, row-major memory at an index computed and
//!    simplified symbolically by `arith` (`layout` says how data lives in
//!    memory, [`abi`] how one element lies in bytes);
//! 2. **assembly**: the kernel function, its typedefs (GCC vectors, pair
//!    structs) and the uniform entry point the runtime calls;
//! 3. **printing** ([`print::print_in`]) for a [`Target`].
//!
//! The C AST ([`ast`]) marks what OpenCL and CUDA printers will need (address
//! spaces, kernel functions, parallel loops) without spelling it.
//!
//! # The calling convention
//! The kernel is `void NAME(T *restrict output, const T *restrict in1, ..., int size1, ...)`:
//! the output, then the inputs in order (arrays as `const` pointers, scalars
//! by value), then the program's sizes in order, then, when the program
//! divides integers by values that may be zero (or checks an index read from data, or a
//! cast that has no value for some inputs), the status flag `int *status`
//! (see [`EntryStatus`]). An output that is a pair holding arrays (a result
//! that is a tuple of arrays) is one pointer per array, in the order of its
//! components (`output_fst`, `output_snd`). The module also defines
//! `int NAME_entry(void *const *buffers, const int64_t *sizes)`, where
//! `buffers[0]` is the output (`buffers[0..k]` the `k` pointers of such an output),
//! the next buffers the inputs in order (a scalar
//! input is a pointer to one element) and `sizes` the sizes in order; it
//! casts and calls the kernel and returns a status: 0 when the result was
//! computed, another value when the program stopped on an error (the runtime
//! reports it as `RuntimeError::ProgramStatus`).
//!
//! # Example
//! A 3-point stencil `padClamp 1 1 |> slide 3 1 |> map (reduceSeqUnroll add 0)`
//! under `mapSeq` becomes:
//! ```c
//! void stencil(float *restrict out, const float *restrict x, int n) {
//!   // mapSeq
//!   for (int i = 0; i < n; i++) {
//!     float sum;
//!     sum = 0.0f;
//!     // reduceSeqUnroll (unrolled: 3 iterations)
//!     sum = sum + x[i - 1 > 0 ? i - 1 : 0];
//!     sum = sum + x[i];
//!     sum = sum + x[n - 1 < i + 1 ? n - 1 : i + 1];
//!     out[i] = sum;
//!   }
//! }
//! ```
//!
//! # Not supported (each an error naming it)
//! Vectors of `f16`/`bf16` (see [`halfs`]), of `bool`, of a non-constant or non-power-of-two number of
//! lanes; `%` on floating-point values; `local` and `constant` memory on CPUs
//! (GPU kernels have local memory, see [`gpu`]) and undecided address spaces; unrolling a loop whose count is not a
//! constant or of more than `dpia::limits::MAX_UNROLLED_ITERATIONS` iterations, and
//! code of more than `dpia::limits::MAX_GENERATED_NODES` nodes; inputs that are pairs holding arrays (they are not one buffer), and
//! such outputs on GPUs.
//!
//! # Adding a view
//! A new read view is one arm in `Lowerer::read` that rewrites the path as its
//! equation says; a write view one arm in `Lowerer::dest`.
#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod abi;
pub mod ast;
mod ctypes;
mod error;
mod foreign;
pub mod gpu;
pub mod halfs;
mod intops;
mod layout;
pub mod local_memory;
mod lookback;
mod lower;
mod names;
mod nat_expr;
pub mod print;
mod target;
mod tensor;
pub mod vecmath;

pub use ctypes::spell as spell_c_types;
pub use error::CodegenError;
pub use foreign::CNames as ForeignCNames;
pub use gpu::{
    generate_gpu, generate_gpu_with, GpuKernel, GpuModule, KernelParam, LaunchDims, Temporary,
};
pub use intops::EntryStatus;
pub use local_memory::LocalMemory;
pub use lower::STACK_LIMIT;
pub use target::Target;

use ast::{BinOp, Expr, FnKind, Function, Param, Scalar, Stmt, Type, UnOp, Unit};
use lower::Lowerer;

/// A generated C module.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CModule {
    /// The whole C source: includes, typedefs, the kernel and the entry point.
    pub source: String,
    /// The kernel function's name.
    pub kernel: String,
    /// The entry point's name: `int ENTRY(void *const *buffers, const int64_t *sizes)`.
    pub entry: String,
}

/// A program lowered to a C translation unit, not yet printed.
#[derive(Clone, Debug, PartialEq)]
pub struct Lowered {
    /// The translation unit: typedefs, the kernel and the entry point.
    pub unit: Unit,
    /// The kernel function's name.
    pub kernel: String,
    /// The entry point's name.
    pub entry: String,
}

/// Choices of the code generator that the program does not make.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Options {
    /// Indices read from data (`gather`, `scatter`, `idx` and `natAsIndex` of values
    /// computed at run time) are used without checking their range, nor that `scatter`'s
    /// positions are distinct (`--unchecked-indices`): faster, and wrong indices read or
    /// write outside arrays.
    pub unchecked_indices: bool,
}

/// Generates the C module of `program` for `target`.
pub fn generate(program: &dpia::Program, target: Target) -> Result<CModule, CodegenError> {
    generate_with(program, target, Options::default())
}

/// [`generate`] with options.
pub fn generate_with(
    program: &dpia::Program,
    target: Target,
    options: Options,
) -> Result<CModule, CodegenError> {
    if target.is_gpu() {
        return error::unsupported(format!(
            "`{target}` is a GPU target: its kernels come from `generate_gpu`"
        ));
    }
    let lowered = lower_with(program, options)?;
    Ok(CModule {
        source: print::print_in(&lowered.unit, target),
        kernel: lowered.kernel,
        entry: lowered.entry,
    })
}

/// Lowers `program` to a C translation unit (target-independent); printing
/// it with [`print::print_in`] gives what [`generate`] returns.
pub fn lower(program: &dpia::Program) -> Result<Lowered, CodegenError> {
    lower_with(program, Options::default())
}

/// [`lower`] with options.
pub fn lower_with(program: &dpia::Program, options: Options) -> Result<Lowered, CodegenError> {
    let mut l = Lowerer::default();
    l.unchecked_indices = options.unchecked_indices;
    l.size_multiples = lower::SizeMultiples::of(&program.constraints);
    let kname = l.names.fresh(&program.name);
    let ename = l.names.fresh(&format!("{kname}_entry"));
    l.foreign = foreign::Foreign::collect(&program.body, &mut l.names)?;
    l.register_types(program)?;
    let mut k = l.kernel(program)?;
    let status = l.uses_status();

    // Unused parameters are marked so that `-Wextra` stays quiet.
    let used = ast::idents(&k.body);
    let mut body: Vec<Stmt> = k
        .params
        .iter()
        .filter(|p| !used.contains(&p.name))
        .map(|p| Stmt::Expr(Expr::ident(&p.name).cast(Type::Void)))
        .collect();
    body.extend(k.body);

    let checks = size_checks(program, &k.params[k.params.len() - program.sizes.len()..]);
    let entry = entry_point(
        &ename,
        &kname,
        &k.params,
        &k.by_pointer,
        program.sizes.len(),
        status,
        checks,
    );
    if status {
        k.params.push(Param {
            ty: intops::status_type(),
            name: intops::STATUS.into(),
        });
    }
    let kernel = Function {
        kind: FnKind::Kernel,
        name: kname.clone(),
        ret: Type::Void,
        params: k.params,
        body,
    };
    let helpers = l.helpers();
    let unit = Unit {
        header: format!(
            "Generated by shine from the DPIA program `{}`.\nKernel: {kname}; entry point: {ename}.",
            program.name
        ),
        includes: ["stdbool.h", "stdint.h", "stdlib.h"]
            .into_iter()
            .chain(l.math.then_some("math.h"))
            .map(String::from)
            .chain(l.foreign.prelude(Target::C).0)
            .fold(Vec::new(), |mut all: Vec<String>, h| {
                if !all.contains(&h) {
                    all.push(h);
                }
                all
            }),
        preamble: halfs::prelude(Target::C, l.halfs)
            .into_iter()
            .chain(vecmath::prelude(&l.vecmath))
            .collect(),
        typedefs: l.types.into_defs(),
        functions: l
            .foreign
            .functions()?
            .into_iter()
            .chain(helpers)
            .chain([kernel, entry])
            .collect(),
    };
    check_code_size(&unit.functions)?;
    Ok(Lowered {
        unit,
        kernel: kname,
        entry: ename,
    })
}

/// Refuses generated code of more than [`dpia::limits::MAX_GENERATED_NODES`] nodes
/// (statements and expressions) in its functions, before it is printed.
pub(crate) fn check_code_size(functions: &[Function]) -> Result<(), CodegenError> {
    let nodes = functions
        .iter()
        .map(|f| ast::node_count(&f.body))
        .fold(0, usize::saturating_add);
    if nodes > dpia::limits::MAX_GENERATED_NODES {
        return Err(CodegenError::CodeTooLarge {
            what: "the program".into(),
            nodes,
        });
    }
    Ok(())
}

/// The entry point's checks of the program's size constraints: the sizes bound to
/// locals named like the kernel's size parameters (`size_params`, in the order of
/// [`dpia::Program::sizes`]), then per constraint a comment naming it and
/// `if (!(holds)) return SizeConstraint;`. Empty without constraints.
fn size_checks(program: &dpia::Program, size_params: &[Param]) -> Vec<Stmt> {
    if program.constraints.is_empty() {
        return Vec::new();
    }
    let renamed: std::collections::HashMap<arith::Var, arith::Nat> = program
        .sizes
        .iter()
        .zip(size_params)
        .map(|(v, p)| {
            (
                v.clone(),
                arith::Nat::var(&arith::Var::new(p.name.as_str())),
            )
        })
        .collect();
    let mut stmts: Vec<Stmt> = size_params
        .iter()
        .enumerate()
        .map(|(k, p)| {
            Stmt::Decl(ast::Decl {
                ty: p.ty.clone(),
                name: p.name.clone(),
                array_len: None,
                init: Some(Expr::ident("sizes").index(Expr::Int(k as i64))),
                addr: ast::AddrSpace::Default,
                align: None,
            })
        })
        .collect();
    let refused = Expr::Int(i64::from(EntryStatus::SizeConstraint.code()));
    let size = |n: &arith::Nat| nat_expr::nat_to_expr(&n.substitute_all(&renamed));
    for c in &program.constraints {
        use rise::constraints::SizeConstraint as C;
        let violated = match c {
            C::Divides { divisor, value } => {
                let rest = Expr::binary(BinOp::Mod, size(value), size(divisor));
                let rest = Expr::binary(BinOp::Ne, rest, Expr::Int(0));
                if arith::Nat::from(0).prove_lt(divisor) {
                    rest
                } else {
                    // `d == 0 ? v != 0 : v % d != 0`: only 0 is a multiple of 0
                    Expr::ternary(
                        Expr::binary(BinOp::Eq, size(divisor), Expr::Int(0)),
                        Expr::binary(BinOp::Ne, size(value), Expr::Int(0)),
                        rest,
                    )
                }
            }
            C::AtLeast { value, bound } => Expr::binary(BinOp::Lt, size(value), size(bound)),
            C::InBounds { index, size: n } => Expr::binary(BinOp::Ge, size(index), size(n)),
        };
        stmts.push(Stmt::Comment(format!("the type requires: {c}")));
        stmts.push(Stmt::If(
            violated,
            vec![Stmt::Return(Some(refused.clone()))],
            vec![],
        ));
    }
    // a size no check reads
    let read = ast::idents(&stmts[size_params.len()..]);
    for p in size_params.iter().filter(|p| !read.contains(&p.name)) {
        stmts.push(Stmt::Expr(Expr::ident(&p.name).cast(Type::Void)));
    }
    stmts
}

/// `int ENTRY(void *const *buffers, const int64_t *sizes)`: checks the sizes
/// (`checks`, from [`size_checks`]), casts the buffers and sizes, calls the kernel
/// and returns its status (0: computed; else an [`EntryStatus`]: a violated size
/// constraint, or one the kernel stored in its status flag, when `status`).
fn entry_point(
    name: &str,
    kernel: &str,
    params: &[Param],
    by_pointer: &[bool],
    sizes: usize,
    status: bool,
    checks: Vec<Stmt>,
) -> Function {
    let buffers = params.len() - sizes;
    let mut args = Vec::new();
    for (k, (p, &ptr)) in params.iter().zip(by_pointer).enumerate() {
        let arg = if k >= buffers {
            Expr::ident("sizes").index(Expr::Int((k - buffers) as i64))
        } else {
            let buf = Expr::ident("buffers").index(Expr::Int(k as i64));
            if ptr {
                buf.cast(unqualified(&p.ty))
            } else {
                // a scalar input: its buffer holds one element
                Expr::unary(UnOp::Deref, buf.cast(Type::const_ptr(p.ty.clone())))
            }
        };
        args.push(arg);
    }
    let mut body = checks;
    if sizes == 0 {
        body.push(Stmt::Expr(Expr::ident("sizes").cast(Type::Void)));
    }
    let result = if status {
        body.push(Stmt::Decl(ast::Decl {
            ty: Type::Scalar(Scalar::Int),
            name: intops::STATUS.into(),
            array_len: None,
            init: Some(Expr::Int(0)),
            addr: ast::AddrSpace::Default,
            align: None,
        }));
        args.push(Expr::unary(UnOp::AddrOf, Expr::ident(intops::STATUS)));
        Expr::ident(intops::STATUS)
    } else {
        Expr::Int(0)
    };
    body.push(Stmt::Expr(Expr::call(kernel, args)));
    body.push(Stmt::Return(Some(result)));
    let void_ptr = |is_const: bool| Type::Pointer {
        to: Box::new(Type::Void),
        is_const,
        restrict: false,
        addr: ast::AddrSpace::Default,
    };
    Function {
        kind: FnKind::Plain,
        name: name.to_string(),
        ret: Type::Scalar(Scalar::Int),
        params: vec![
            Param {
                ty: Type::Pointer {
                    to: Box::new(void_ptr(false)),
                    is_const: true,
                    restrict: false,
                    addr: ast::AddrSpace::Default,
                },
                name: "buffers".into(),
            },
            Param {
                ty: Type::const_ptr(Type::Scalar(Scalar::I64)),
                name: "sizes".into(),
            },
        ],
        body,
    }
}

/// A pointer type without `restrict` (for casts).
fn unqualified(t: &Type) -> Type {
    match t {
        Type::Pointer { to, is_const, .. } => Type::Pointer {
            to: to.clone(),
            is_const: *is_const,
            restrict: false,
            addr: ast::AddrSpace::Default,
        },
        t => t.clone(),
    }
}
