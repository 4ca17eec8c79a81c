//! Lowering imperative DPIA to the C AST (RISE & Shine §V-D).
//!
//! Commands map to statements one to one, except that
//! * `LoopKind::Unroll` loops are unrolled (the loop variable is bound to each
//!   constant in turn), and loops of one iteration become their body;
//! * `New` becomes declarations: on the stack when the size is a constant of at
//!   most [`STACK_LIMIT`] bytes, on the heap (`malloc`, checked, and `free`)
//!   otherwise;
//! * `Assign` is where the views are resolved. The expression is *read* at
//!   the empty path and the acceptor *written* at the empty path; every view
//!   rewrites the path as the table in `dpia::imperative` says, until a
//!   memory identifier is reached, whose [`layout`](crate::layout) turns the
//!   path into a flat index. Indices are [`Nat`]s all the way, so `arith`
//!   simplifies them with the ranges of the loop variables.
//!
//! Variables are renamed into C-safe names through an environment that maps
//! each DPIA variable to a [`Nat`] over the C names (a renamed variable with
//! its range, or the constant of an unrolled iteration, or the index a
//! `Generate` is read at). Every `Nat` of the program goes through it.
//!
//! The lowering is one [`Lowerer`], its methods spread by concern:
//! * this module: the state, the kernel's set-up (types, parameters, sizes) and
//!   the environment;
//! * `comm`: commands, loops (sequential, parallel, unrolled, over GPU threads)
//!   and assignments;
//! * `memory`: where memory lives (stack, heap, local, a work-item's part of
//!   private memory) and how a place in it is spelled as a C expression;
//! * `views`: the read side (expressions read at a path) and the write side
//!   (acceptors written at a path) of the views;
//! * `vector`: whole vectors: loads, stores and vector operations.

mod comm;
mod fragments;
mod lookback;
mod operands;
pub(crate) use operands::reuse_operands;
mod memory;
mod unroll;
mod vector;
mod views;
mod wgmma;

use std::collections::{BTreeSet, HashMap};

use arith::{Nat, Var};
use dpia::{Comm, Ident, Program};
use rise::DataType;

use self::memory::{Mem, Role};
use self::vector::VectorMode;
use crate::ast::{self, BinOp, Expr, Scalar, Stmt, Type};
use crate::ctypes::{self, Types};
use crate::error::{unsupported, CodegenError};
use crate::intops;
use crate::layout::{self, is_flat, show_type};
use crate::names::NameSet;
use crate::nat_expr::nat_to_index;
use crate::Target;

type Res<T> = Result<T, CodegenError>;

/// Allocations of at most this many bytes (with a constant size) go on the stack.
pub const STACK_LIMIT: u64 = 64 * 1024;

/// The state of lowering one program.
#[derive(Debug, Default)]
pub struct Lowerer {
    /// The names of the module.
    pub names: NameSet,
    /// The typedefs of the module.
    pub types: Types,
    mems: HashMap<String, Mem>,
    /// The nesting depth of each loop variable (for printing indices outer loops first).
    depth: HashMap<String, usize>,
    /// Set while a vector is computed with vector operations ([`Lowerer::vector_op`]).
    vector_mode: Option<VectorMode>,
    /// The number of threads of a work-group in each dimension, when it is a
    /// constant (GPU kernels of work-groups).
    pub threads: [Option<i64>; 3],
    /// The C variables of `mapLocal` loops that run exactly one iteration per
    /// thread (their value is the thread's local id), with their dimension.
    thread_vars: HashMap<String, u8>,
    /// The distributed private memory an access did not fit, if any.
    undistributable: std::cell::RefCell<Option<String>>,
    /// The C variables that index a thread's part of distributed private memory (its
    /// registers): a loop of constant count over one is unrolled ([`ast::Pragma::Unroll`]).
    register_indices: std::cell::RefCell<BTreeSet<String>>,
    /// The GPU language of a GPU kernel, `None` on CPUs. A GPU kernel may have
    /// parallel loops over threads, local memory and barriers, but no heap
    /// allocation; its vectors are the dialect's builtin vector types, loaded and
    /// stored with its idioms (OpenCL `vload4`, CUDA aligned `float4` accesses),
    /// their lanes `.s0`/`.x` (GCC vectors on CPUs).
    pub target: Target,
    /// The checked division helpers the code calls (see [`crate::intops`]); not empty:
    /// the kernel takes the status flag.
    pub divisions: intops::Helpers,
    /// The checks of indices read from data the code calls (some: the kernel takes the
    /// status flag).
    pub index_checks: intops::IndexHelpers,
    /// The checked casts the code calls (see [`intops::checked_cast`]); not empty: the
    /// kernel takes the status flag.
    pub casts: intops::CastHelpers,
    /// The checked `natType` `+`, `-`, `*` the code calls (see [`intops::checked_nat`]); not
    /// empty: the kernel takes the status flag.
    pub nat_ops: intops::NatHelpers,
    /// Indices read from data are used unchecked (`--unchecked-indices`).
    pub unchecked_indices: bool,
    /// The C variables holding indices read from data for the assignment being lowered
    /// (bound around its statements by [`Lowerer::guarded`]), in the order read.
    write_indices: Vec<WriteIndex>,
    /// Whether the code calls a math function (C includes `math.h`).
    pub math: bool,
    /// The 16-bit float helpers the code calls (see [`crate::halfs`]).
    pub halfs: crate::halfs::HalfUse,
    /// The tensor-core helpers the code calls (see [`crate::tensor`]).
    pub tensor: crate::tensor::TensorUse,
    /// The look-back helpers the code calls (see [`crate::lookback`]).
    pub lookback: crate::lookback::LookbackUse,
    /// The `float` math functions the code calls that have kernels in C (see [`crate::vecmath`]).
    pub vecmath: crate::vecmath::Used,
    /// The foreign functions the program calls, with their C names (see [`crate::foreign`]).
    pub foreign: crate::foreign::Foreign,
    /// The code the unrolled loops have generated so far (see [`unroll`]).
    unroll: unroll::UnrollBudget,
    /// Whether the kernel has `mapWarp` or `mapLane` loops (warp `w` is threads
    /// `32*w .. 32*w+31`: the launch must give exactly the threads it names).
    warp_loops: bool,
    /// The lane variable of the `mmaSync` lane loop being lowered (its operands' indices
    /// mention it).
    mma_lane: Option<Var>,
    /// Set while the copies of a pipelined reduction are lowered: its assignments are
    /// asynchronous copies (`cp.async`).
    async_copies: bool,
    /// Whether the kernel being lowered has lane loops (`mapLane`, `mmaSync`): private
    /// memory with a leading dimension of 32 (or of as many warps as a work-group has, then
    /// 32) may then be kept by the warps and lanes row by row.
    lane_loops: bool,
    /// Set while the body of a `mapWarpGroup` loop is lowered: a `mapWarp` loop there runs
    /// over the group's 4 warps.
    warp_group: bool,
    /// Whether the kernel being lowered has warp-group multiplies (`wgmma`): its barriers
    /// are preceded by a proxy fence.
    wgmma_kernel: bool,
    /// The local arrays of the kernel being lowered, by C name, with their sizes in bytes
    /// (with 64-bit indices: enough for either index width), for their layout
    /// ([`crate::local_memory`]). Arrays lowered and then dropped (unused, or lowered again
    /// after an attempt failed) may be listed too: the layout takes the declarations it finds.
    pub local_arrays: HashMap<String, u64>,
    /// The sizes the program's constraints make multiples of a constant, which the code
    /// may assume (the sizes are checked before it runs).
    pub size_multiples: SizeMultiples,
}

/// The least common multiple of two positive integers.
fn lcm(a: i64, b: i64) -> i64 {
    let gcd = |mut x: i64, mut y: i64| {
        while y != 0 {
            (x, y) = (y, x % y);
        }
        x
    };
    a / gcd(a, b) * b
}

/// The sizes that a program's constraints make multiples of a constant (`32` divides `k`):
/// `k` may be read as `32·q` for an integer `q`, so that an index `k·i` is a multiple of 8.
#[derive(Debug, Default)]
pub struct SizeMultiples(HashMap<Var, Nat>);

impl SizeMultiples {
    /// Those of `constraints` whose value is a size variable and whose divisor a positive
    /// constant.
    pub fn of(constraints: &[rise::constraints::SizeConstraint]) -> SizeMultiples {
        use rise::constraints::SizeConstraint as C;
        let mut divisors: HashMap<Var, i64> = HashMap::new();
        for c in constraints {
            let C::Divides { divisor, value } = c else {
                continue;
            };
            let (Some(d), Some(v)) = (divisor.as_cst().filter(|d| *d > 1), value.as_var()) else {
                continue;
            };
            let known = divisors.entry(v.clone()).or_insert(1);
            *known = lcm(*known, d);
        }
        let map = divisors
            .into_iter()
            .map(|(v, d)| {
                // never printed: a name no C variable has
                let q = Var::new(format!("'{v}/{d}"));
                (v, Nat::cst(d) * Nat::var(&q))
            })
            .collect();
        SizeMultiples(map)
    }

    /// `n` with every such size `k` written `d·q`.
    pub fn apply(&self, n: &Nat) -> Nat {
        if self.0.is_empty() {
            n.clone()
        } else {
            n.substitute_all(&self.0)
        }
    }
}

/// The "dimension" [`Lowerer::thread_vars`] records for the lane variable of a lane loop
/// (threads are dimensions 0, 1 and 2).
pub(super) const LANE_DIM: u8 = 3;
/// The "dimension" [`Lowerer::thread_vars`] records for the warp variable of a `mapWarp`
/// loop of one iteration per warp.
pub(super) const WARP_DIM: u8 = 4;
/// The "dimension" [`Lowerer::thread_vars`] records for the variable of a `mapWarpGroup`
/// loop of one iteration per warp group.
pub(super) const GROUP_DIM: u8 = 5;
/// The "dimension" [`Lowerer::thread_vars`] records for the warp variable of a `mapWarp`
/// loop inside a warp group, of one iteration per warp of the group.
pub(super) const GROUP_WARP_DIM: u8 = 6;

/// An index read from data where an assignment writes (`scatter`): the C variable
/// holding it, its value, its bound and the marker of its position, if any.
#[derive(Debug)]
struct WriteIndex {
    name: String,
    value: Expr,
    bound: Expr,
    marker: Option<Expr>,
}

/// The kernel's parameters and its lowered body.
pub struct Kernel {
    /// The parameters, in the order of the calling convention.
    pub params: Vec<ast::Param>,
    /// Whether each parameter is passed by pointer (an array, or the output).
    pub by_pointer: Vec<bool>,
    /// The body.
    pub body: Vec<Stmt>,
}

impl Lowerer {
    /// Whether the code calls a helper that reports through the status flag.
    pub fn uses_status(&self) -> bool {
        !self.divisions.is_empty()
            || self.index_checks.any()
            || !self.casts.is_empty()
            || !self.nat_ops.is_empty()
    }

    /// The helpers the code calls (checked divisions, index checks, checked casts and
    /// `natType` operations).
    pub fn helpers(&self) -> Vec<ast::Function> {
        let mut fs = intops::helpers(&self.divisions);
        fs.extend(intops::index_helpers(self.index_checks));
        fs.extend(intops::cast_helpers(&self.casts));
        fs.extend(intops::nat_helpers(&self.nat_ops));
        fs
    }

    /// `stmts` inside the bindings of the indices read from data they write at
    /// ([`Lowerer::write_indices`], taken): per index `{ long at = v; if (checks) ... }`,
    /// the checks being its range and its marker (none when unchecked).
    fn guarded(&mut self, stmts: Vec<Stmt>) -> Vec<Stmt> {
        let indices = std::mem::take(&mut self.write_indices);
        indices.into_iter().rev().fold(stmts, |inner, w| {
            let at = Expr::ident(&w.name);
            let decl = Stmt::Decl(ast::Decl {
                ty: Type::Scalar(Scalar::Index),
                name: w.name,
                array_len: None,
                init: Some(w.value),
                addr: ast::AddrSpace::Default,
                align: None,
            });
            if self.unchecked_indices {
                return vec![Stmt::Block(std::iter::once(decl).chain(inner).collect())];
            }
            let mut cond = intops::index_check(at, w.bound, &mut self.index_checks);
            if let Some(m) = w.marker {
                let claimed = intops::claim(m, &mut self.index_checks);
                cond = Expr::binary(BinOp::And, cond, claimed);
            }
            vec![Stmt::Block(vec![decl, Stmt::If(cond, inner, vec![])])]
        })
    }

    /// Whether this lowers a GPU kernel (see [`Lowerer::target`]).
    fn gpu(&self) -> bool {
        self.target.is_gpu()
    }

    /// Registers the typedefs of the program's memory and assignments, so that
    /// they get their canonical names before any variable is named (others are
    /// registered when first used).
    pub fn register_types(&mut self, p: &Program) -> Res<()> {
        let mut tys = Vec::new();
        tys.push(p.output.ty.clone());
        tys.extend(p.inputs.iter().map(|i| i.ty.clone()));
        collect_comm_types(&p.body, &mut tys);
        for t in &tys {
            self.register(t)?;
        }
        Ok(())
    }

    /// Lowers the program's body; names the parameters (output, inputs, sizes).
    pub fn kernel(&mut self, p: &Program) -> Res<Kernel> {
        let mut env = Env::default();
        let (mut params, mut by_pointer) = (Vec::new(), Vec::new());
        for out in self.params(&p.output, Role::Output, &env)? {
            params.push(out);
            by_pointer.push(true);
        }
        for input in &p.inputs {
            for param in self.params(input, Role::Input, &env)? {
                by_pointer.push(matches!(param.ty, Type::Pointer { .. }));
                params.push(param);
            }
        }
        for size in &p.sizes {
            params.push(self.size_param(&mut env, size));
            by_pointer.push(false);
        }
        // The parameters' types mention sizes: fix them now that sizes are bound.
        for m in self.mems.values_mut() {
            m.ty = env.ty(&m.ty);
        }
        let mut body = Vec::new();
        self.comm(&env, &p.body, &mut body)?;
        Ok(Kernel {
            params,
            by_pointer,
            body,
        })
    }

    /// Lowers one kernel of a GPU program. Its parameters are the buffers its body
    /// uses (the output always, then the inputs and the temporaries, in order; each a
    /// pointer to global memory), then every size.
    pub fn gpu_kernel(
        &mut self,
        p: &dpia::GpuProgram,
        body: &Comm,
    ) -> Res<(Vec<ast::Param>, Vec<crate::gpu::KernelParam>, Vec<Stmt>)> {
        use crate::gpu::KernelParam as K;
        self.mems.clear();
        self.depth.clear();
        self.thread_vars.clear();
        self.local_arrays.clear();
        self.lane_loops = has_lane_loops(body);
        self.wgmma_kernel = has_wgmma(body);
        self.warp_group = false;
        let used = dpia::query::memories_used(body);
        let mut env = Env::default();
        let (mut params, mut refs) = (Vec::new(), Vec::new());
        let buffers = std::iter::once((&p.output, Role::Output, K::Output(0)))
            .chain(
                p.inputs
                    .iter()
                    .enumerate()
                    .map(|(i, x)| (x, Role::Input, K::Input(i))),
            )
            .chain(
                p.temporaries
                    .iter()
                    .enumerate()
                    .map(|(i, x)| (x, Role::Temporary, K::Temporary(i))),
            );
        for (id, role, r) in buffers {
            if role == Role::Output || used.contains(&id.name) {
                for (leaf, param) in self.params(id, role, &env)?.into_iter().enumerate() {
                    params.push(param);
                    // an output that is a tuple of arrays is one buffer per array
                    refs.push(if role == Role::Output {
                        K::Output(leaf)
                    } else {
                        r
                    });
                }
            }
        }
        for (k, size) in p.sizes.iter().enumerate() {
            params.push(self.size_param(&mut env, size));
            refs.push(K::Size(k));
        }
        for m in self.mems.values_mut() {
            m.ty = env.ty(&m.ty);
        }
        let mut stmts = Vec::new();
        self.comm(&env, body, &mut stmts)?;
        if self.wgmma_kernel {
            wgmma::batch_waits(&mut stmts);
        }
        Ok((params, refs, stmts))
    }

    /// The index-typed parameter of a size of the program, bound (renamed, with its range)
    /// in `env`.
    fn size_param(&mut self, env: &mut Env, size: &Var) -> ast::Param {
        let name = self.names.fresh(size.name());
        let renamed = match size.range() {
            Some((lo, hi)) => Var::with_range(name.as_str(), env.nat(lo), env.nat(hi)),
            None => Var::new(name.as_str()),
        };
        *env = env.bind(size, Nat::var(&renamed)).with_scope(&name);
        ast::Param {
            ty: Type::Scalar(Scalar::Index),
            name,
        }
    }

    /// The C parameters of a buffer: one, or for an output that is a pair holding arrays
    /// (a result that is a tuple of arrays) one pointer per leaf (`output_fst`,
    /// `output_snd`), in the order of [`layout::leaves`].
    fn params(&mut self, id: &Ident, role: Role, env: &Env) -> Res<Vec<ast::Param>> {
        let leaves = layout::leaves(&id.ty)?;
        let several = leaves.len() != 1;
        if several && role != Role::Output {
            let what = if role == Role::Input {
                "input"
            } else {
                "temporary"
            };
            return unsupported(format!(
                "the {what} `{}` of type {}: a pair holding arrays cannot be passed as one buffer",
                id.name,
                show_type(&id.ty)
            ));
        }
        let cname = self.names.fresh(&id.name);
        let (mut params, mut indexed) = (Vec::new(), BTreeSet::new());
        for leaf in &leaves {
            let name = format!("{cname}{}", leaf.suffix);
            if several {
                self.names.reserve(&name);
            }
            let mut elem = self
                .types
                .value_type(&canonical(&env.ty(&leaf.elem)), &mut self.names)?;
            if self.target == Target::OpenCl && elem == Type::Scalar(Scalar::Bool) {
                // OpenCL kernels take no `bool` buffers: one `uchar` (0 or 1) per value, which
                // C converts to and from `bool` where it is read and written
                elem = Type::Scalar(Scalar::U8);
            }
            // On a GPU every buffer is a pointer to global memory (a scalar input too).
            let pointer = role != Role::Input || leaf.count.is_some() || self.gpu();
            let ty = if pointer {
                indexed.insert(leaf.suffix.clone());
                Type::Pointer {
                    to: Box::new(elem),
                    is_const: role == Role::Input,
                    restrict: true,
                    addr: ast::AddrSpace::Global,
                }
            } else {
                elem
            };
            params.push(ast::Param { ty, name });
        }
        let pointer = !indexed.is_empty();
        let mem = Mem {
            cname,
            ty: id.ty.clone(),
            role,
            indexed,
            distributed: None,
            // the runtimes allocate buffers at 64-byte (OpenCL) or 256-byte (CUDA) alignment
            aligned: self.gpu() && pointer,
            shared: false,
        };
        self.mems.insert(id.name.clone(), mem);
        Ok(params)
    }

    fn register(&mut self, dt: &DataType) -> Res<()> {
        match dt {
            DataType::Array(_, t) => self.register(t),
            DataType::Vector(n, _) if n.as_cst().is_none() => Ok(()),
            DataType::Pair(a, b) if !is_flat(dt) => {
                self.register(a)?;
                self.register(b)
            }
            DataType::Var(_) | DataType::NatToDataApp(..) => layout::unresolved(dt),
            _ => {
                self.mark_halves(dt)?;
                self.types
                    .value_type(&canonical(dt), &mut self.names)
                    .map(|_| ())
            }
        }
    }

    /// Records the 16-bit float types a value of type `dt` holds: code that names them,
    /// even only to move their values, needs their header or typedef.
    fn mark_halves(&mut self, dt: &DataType) -> Res<()> {
        match dt {
            DataType::Scalar(s) => {
                self.halfs.mark(ctypes::scalar(*s)?);
                Ok(())
            }
            DataType::Vector(_, t) => self.mark_halves(t),
            DataType::Pair(a, b) => {
                self.mark_halves(a)?;
                self.mark_halves(b)
            }
            _ => Ok(()),
        }
    }

    /// A `Nat` over C variables as a C expression; every variable must be in scope.
    fn nat(&self, env: &Env, n: &Nat) -> Res<Expr> {
        let bound = |name: &str| {
            env.scope.contains(name) || self.write_indices.iter().any(|w| w.name == name)
        };
        if let Some(v) = n.free_vars().iter().find(|v| !bound(v.name())) {
            return Err(CodegenError::UnboundVariable {
                name: v.name().to_string(),
                context: n.to_string(),
            });
        }
        Ok(nat_to_index(n, &|name| self.depth.get(name).copied()))
    }

    /// `a op b`, with a positive constant both sides share taken off
    /// (`i + 2 < n + 1` is printed `i + 1 < n`).
    fn compare(&self, env: &Env, op: BinOp, a: &Nat, b: &Nat) -> Res<Expr> {
        let c = constant_part(a).min(constant_part(b)).max(0);
        Ok(Expr::binary(
            op,
            self.nat(env, &(a - c))?,
            self.nat(env, &(b - c))?,
        ))
    }
}

/// Which DPIA variables mean what in C, and which C variables are in scope.
#[derive(Clone, Debug, Default)]
pub struct Env {
    map: HashMap<Var, Nat>,
    scope: BTreeSet<String>,
}

impl Env {
    /// A DPIA `Nat` in terms of C variables.
    fn nat(&self, n: &Nat) -> Nat {
        n.substitute_all(&self.map)
    }

    /// The environment with `v` standing for `by`.
    fn bind(&self, v: &Var, by: Nat) -> Env {
        let mut e = self.clone();
        e.map.insert(v.clone(), by);
        e
    }

    /// The environment with the C variable `name` in scope.
    fn with_scope(mut self, name: &str) -> Env {
        self.scope.insert(name.to_string());
        self
    }

    /// A DPIA data type in terms of C variables.
    fn ty(&self, dt: &DataType) -> DataType {
        match dt {
            DataType::Array(n, t) => DataType::array(self.nat(n), self.ty(t)),
            DataType::Vector(n, t) => DataType::vector(self.ty(t), self.nat(n)),
            DataType::Pair(a, b) => DataType::pair(self.ty(a), self.ty(b)),
            DataType::Index(n) => DataType::Index(self.nat(n)),
            _ => dt.clone(),
        }
    }
}

/// The key a data type's C type is registered under (every `idx[n]` is the index type).
fn canonical(dt: &DataType) -> DataType {
    match dt {
        DataType::Index(_) => DataType::Index(Nat::cst(0)),
        DataType::Pair(a, b) => DataType::pair(canonical(a), canonical(b)),
        DataType::Vector(n, t) => DataType::vector(canonical(t), n.clone()),
        _ => dt.clone(),
    }
}

/// The value of `n` with every variable set to 0 (0 where that is undefined).
fn constant_part(n: &Nat) -> i64 {
    let zeros: HashMap<Var, Nat> = n
        .free_vars()
        .into_iter()
        .map(|v| (v, Nat::cst(0)))
        .collect();
    n.substitute_all(&zeros).as_cst().unwrap_or(0)
}

fn collect_comm_types(c: &Comm, out: &mut Vec<DataType>) {
    match c {
        Comm::Skip => {}
        Comm::Seq(cs) => cs.iter().for_each(|c| collect_comm_types(c, out)),
        Comm::Assign(a, _) => out.push(a.ty.clone()),
        Comm::New { ident, body, .. } => {
            out.push(ident.ty.clone());
            collect_comm_types(body, out);
        }
        Comm::For { body, .. }
        | Comm::IfLess { body, .. }
        | Comm::AsyncCopy(body)
        | Comm::NatLet { body, .. } => collect_comm_types(body, out),
        Comm::Barrier { .. } | Comm::AsyncCommit | Comm::AsyncWait(_) => {}
    }
}

/// Whether `body` has a warp group's multiply (`wgmma`).
fn has_wgmma(body: &Comm) -> bool {
    dpia::query::any(
        body,
        |n| matches!(n, dpia::walk::Node::Exp(e) if matches!(*e.kind, dpia::ExpKind::Wgmma(_))),
    )
}

/// Whether `body` has a loop over the lanes of a warp.
fn has_lane_loops(body: &Comm) -> bool {
    dpia::query::any(body, |n| {
        matches!(
            n,
            dpia::walk::Node::Comm(Comm::For {
                kind: dpia::LoopKind::Gpu(dpia::ParLevel::Lane),
                ..
            })
        )
    })
}

#[cfg(test)]
mod size_multiple_tests {
    use super::SizeMultiples;
    use arith::{Nat, Var};
    use rise::constraints::SizeConstraint;

    fn divides(d: i64, v: &Var) -> SizeConstraint {
        SizeConstraint::Divides {
            divisor: Nat::cst(d),
            value: Nat::var(v),
        }
    }

    #[test]
    fn a_size_that_constraints_divide_makes_its_multiples_known() {
        let (k, n, i) = (Var::new("k"), Var::new("n"), Var::new("i"));
        let eight = Nat::cst(8);
        // 32 and 12 divide k: their least common multiple, 96, does
        let known = SizeMultiples::of(&[divides(32, &k), divides(12, &k), divides(3, &n)]);
        let row = Nat::var(&k) * Nat::var(&i);
        assert_eq!(known.apply(&row).modulo(&eight).as_cst(), Some(0));
        assert_eq!(known.apply(&row).modulo(&Nat::cst(96)).as_cst(), Some(0));
        // 3 divides n: n·i need not be a multiple of 8, nor i·k + 1
        let other = Nat::var(&n) * Nat::var(&i);
        assert_eq!(known.apply(&other).modulo(&eight).as_cst(), None);
        let off = row + Nat::cst(1);
        assert_ne!(known.apply(&off).modulo(&eight).as_cst(), Some(0));
        // without constraints nothing changes
        let none = SizeMultiples::of(&[]);
        assert_eq!(none.apply(&Nat::var(&k)), Nat::var(&k));
    }
}
