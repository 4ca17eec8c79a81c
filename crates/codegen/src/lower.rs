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

use std::collections::{BTreeSet, HashMap};

use arith::{Nat, Var};
use dpia::{Acc, AccKind, Comm, Exp, ExpKind, Ident, LoopKind, PadMode, ParLevel, Program};
use rise::{AddrSpace, DataType, Literal, ScalarType};

use crate::ast::{self, BinOp, Decl, Expr, For, GpuIndex, Pragma, Scalar, Stmt, Type, UnOp};
use crate::ctypes::{lane_count, scalar, scalar_of, vector_elem_lanes, vector_shape, Types};
use crate::error::{malformed, unsupported, CodegenError};
use crate::gpu::GpuTarget;
use crate::intops;
use crate::layout::{self, is_flat, locate, show_step, show_type, PathElem, Place};
use crate::names::NameSet;
use crate::nat_expr::{nat_to_expr, nat_to_index};

type Res<T> = Result<T, CodegenError>;

/// Allocations of at most this many bytes (with a constant size) go on the stack.
pub const STACK_LIMIT: u64 = 64 * 1024;

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

/// The role of a memory identifier.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Role {
    Output,
    Input,
    /// Global memory the host allocated for a GPU program's intermediate results.
    Temporary,
    Local,
}

/// How a memory identifier is stored in C.
#[derive(Clone, Debug)]
struct Mem {
    /// The C name (leaves append their suffix).
    cname: String,
    /// Its data type, in terms of C variables.
    ty: DataType,
    role: Role,
    /// Leaf suffixes that are arrays or pointers (accessed as `x[i]`); the
    /// others are single C values.
    indexed: BTreeSet<String>,
    /// Private memory of a work-group of which every thread keeps only its part
    /// ([`Lowerer::distributable`]): the thread dimension each of the leading
    /// indices taken off stands for (fixed by the first access).
    distributed: Option<std::cell::RefCell<Vec<Option<u8>>>>,
    /// Its arrays start at an address aligned to 16 bytes or more (GPU buffers,
    /// local-memory arrays): a vector of at most 16 bytes at an element index
    /// that is a multiple of its lanes is aligned.
    aligned: bool,
}

/// A memory location: a C object and where in it.
#[derive(Clone, Debug)]
struct MemPlace {
    base: String,
    indexed: bool,
    place: Place,
    /// The array starts at a 16-byte aligned address ([`Mem::aligned`]).
    aligned: bool,
}

/// The result of reading an expression at a path.
enum Read {
    /// A memory location holding the value.
    Mem(MemPlace),
    /// A computed value.
    Value(Expr),
}

/// Where a write at a path lands.
enum Dest<'a> {
    /// A memory location.
    Mem(MemPlace),
    /// A whole vector written through `asVectorAcc`: its lanes go to elements
    /// `index*lanes + l` of `acc`, in the environment `env`.
    Vector {
        acc: &'a Acc,
        env: Env,
        index: Nat,
        lanes: u32,
    },
}

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
    /// Lowering a GPU kernel: parallel loops over threads, local memory and barriers
    /// are allowed, heap allocation is not.
    pub gpu: bool,
    /// The number of threads of a work-group in each dimension, when it is a
    /// constant (GPU kernels of work-groups).
    pub threads: [Option<i64>; 3],
    /// The C variables of `mapLocal` loops that run exactly one iteration per
    /// thread (their value is the thread's local id), with their dimension.
    thread_vars: HashMap<String, u8>,
    /// The distributed private memory an access did not fit, if any.
    undistributable: std::cell::RefCell<Option<String>>,
    /// The GPU language of a GPU kernel: vectors are its builtin vector types,
    /// loaded and stored with its idioms (OpenCL `vload4`, CUDA aligned
    /// `float4` accesses), their lanes `.s0`/`.x`; `None` on CPUs (GCC vectors).
    pub target: Option<GpuTarget>,
    /// The checked division helpers the code calls (see [`crate::intops`]); not empty:
    /// the kernel takes the status flag.
    pub divisions: intops::Helpers,
}

/// The state of computing a vector with vector operations: the lane variable,
/// the vector type, whether a lane-dependent operand was loaded, and whether
/// something could not be vectorized.
#[derive(Debug)]
struct VectorMode {
    lane: Var,
    ty: DataType,
    used: bool,
    failed: bool,
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

    fn register(&mut self, dt: &DataType) -> Res<()> {
        match dt {
            DataType::Array(_, t) => self.register(t),
            DataType::Vector(n, _) if n.as_cst().is_none() => Ok(()),
            DataType::Pair(a, b) if !is_flat(dt) => {
                self.register(a)?;
                self.register(b)
            }
            DataType::Var(_) | DataType::NatToDataApp(..) => layout::unresolved(dt),
            _ => self
                .types
                .value_type(&canonical(dt), &mut self.names)
                .map(|_| ()),
        }
    }

    /// Lowers the program's body; names the parameters (output, inputs, sizes).
    pub fn kernel(&mut self, p: &Program) -> Res<Kernel> {
        let mut env = Env::default();
        let (mut params, mut by_pointer) = (Vec::new(), Vec::new());
        let out = self.param(&p.output, Role::Output, &env)?;
        params.push(out);
        by_pointer.push(true);
        for input in &p.inputs {
            let param = self.param(input, Role::Input, &env)?;
            by_pointer.push(matches!(param.ty, Type::Pointer { .. }));
            params.push(param);
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
        let used = dpia::gpu::memories_used(body);
        let mut env = Env::default();
        let (mut params, mut refs) = (Vec::new(), Vec::new());
        let buffers = std::iter::once((&p.output, Role::Output, K::Output))
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
                params.push(self.param(id, role, &env)?);
                refs.push(r);
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

    fn param(&mut self, id: &Ident, role: Role, env: &Env) -> Res<ast::Param> {
        let leaves = layout::leaves(&id.ty)?;
        let [leaf] = leaves.as_slice() else {
            return unsupported(format!(
                "the {} `{}` of type {}: a pair holding arrays cannot be passed as one buffer",
                if role == Role::Output {
                    "output"
                } else {
                    "input"
                },
                id.name,
                show_type(&id.ty)
            ));
        };
        let cname = self.names.fresh(&id.name);
        let elem = self
            .types
            .value_type(&canonical(&env.ty(&leaf.elem)), &mut self.names)?;
        // On a GPU every buffer is a pointer to global memory (a scalar input too).
        let pointer = role != Role::Input || leaf.count.is_some() || self.gpu;
        let ty = if pointer {
            Type::Pointer {
                to: Box::new(elem),
                is_const: role == Role::Input,
                restrict: true,
                addr: ast::AddrSpace::Global,
            }
        } else {
            elem
        };
        let mem = Mem {
            cname: cname.clone(),
            ty: id.ty.clone(),
            role,
            indexed: if pointer {
                BTreeSet::from([String::new()])
            } else {
                BTreeSet::new()
            },
            distributed: None,
            // the runtimes allocate buffers at 64-byte (OpenCL) or 256-byte (CUDA) alignment
            aligned: self.gpu && pointer,
        };
        self.mems.insert(id.name.clone(), mem);
        Ok(ast::Param { ty, name: cname })
    }

    // ---- commands ------------------------------------------------------------------------

    fn comm(&mut self, env: &Env, c: &Comm, out: &mut Vec<Stmt>) -> Res<()> {
        match c {
            Comm::Skip => Ok(()),
            Comm::Seq(cs) => cs.iter().try_for_each(|c| self.comm(env, c, out)),
            Comm::Assign(acc, exp) => self.assign(env, acc, exp, out),
            Comm::Barrier { local, global } => {
                if !self.gpu {
                    return malformed("a barrier in a program for a CPU");
                }
                out.push(Stmt::Barrier {
                    local: *local,
                    global: *global,
                });
                Ok(())
            }
            Comm::New { ident, addr, body } => self.new_mem(env, ident, addr, body, out),
            Comm::For {
                var,
                count,
                kind,
                origin,
                body,
            } => self.for_loop(env, var, count, *kind, origin, body, out),
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn for_loop(
        &mut self,
        env: &Env,
        var: &Var,
        count: &Nat,
        kind: LoopKind,
        origin: &str,
        body: &Comm,
        out: &mut Vec<Stmt>,
    ) -> Res<()> {
        let count = env.nat(count);
        if let LoopKind::Gpu(level) = kind {
            return self.gpu_loop(env, var, &count, level, origin, body, out);
        }
        if kind == LoopKind::Unroll {
            let Some(c) = count.as_cst() else {
                return Err(CodegenError::UnrollNotConstant {
                    origin: origin.to_string(),
                    count: count.to_string(),
                });
            };
            out.push(Stmt::Comment(format!(
                "{origin} (unrolled: {c} iterations)"
            )));
            for k in 0..c {
                self.comm(&env.bind(var, Nat::cst(k)), body, out)?;
            }
            return Ok(());
        }
        match count.as_cst() {
            Some(c) if c <= 0 => {
                out.push(Stmt::Comment(format!("{origin} (no iterations)")));
                return Ok(());
            }
            Some(1) => {
                out.push(Stmt::Comment(format!("{origin} (one iteration)")));
                return self.comm(&env.bind(var, Nat::cst(0)), body, out);
            }
            _ => {}
        }
        let name = self.names.fresh(var.name());
        let depth = env
            .scope
            .iter()
            .filter_map(|v| self.depth.get(v))
            .max()
            .map_or(1, |d| d + 1);
        self.depth.insert(name.clone(), depth);
        let renamed = Var::with_range(name.as_str(), Nat::cst(0), count.clone());
        let inner = env.bind(var, Nat::var(&renamed)).with_scope(&name);
        let mut stmts = Vec::new();
        self.comm(&inner, body, &mut stmts)?;
        out.push(Stmt::Comment(origin.to_string()));
        out.push(Stmt::For(For {
            var: name,
            start: Expr::Int(0),
            end: self.nat(env, &count)?,
            step: Expr::Int(1),
            body: stmts,
            pragma: (kind == LoopKind::Par).then_some(Pragma::ParallelFor),
        }));
        Ok(())
    }

    /// A loop over the threads of a level: every thread runs the iterations
    /// `id, id + size, id + 2*size, ...` below the count (Listing 11's loops).
    #[allow(clippy::too_many_arguments)]
    fn gpu_loop(
        &mut self,
        env: &Env,
        var: &Var,
        count: &Nat,
        level: ParLevel,
        origin: &str,
        body: &Comm,
        out: &mut Vec<Stmt>,
    ) -> Res<()> {
        if !self.gpu {
            return unsupported(format!(
                "`{origin}` distributes its iterations over GPU threads; compile for OpenCL or CUDA \
                 (--target opencl / cuda), or lower the map with mapSeq or mapPar"
            ));
        }
        if count.as_cst().is_some_and(|c| c <= 0) {
            out.push(Stmt::Comment(format!("{origin} (no iterations)")));
            return Ok(());
        }
        let (id, size, base) = match level {
            ParLevel::Global(_) => (GpuIndex::GlobalId, GpuIndex::GlobalSize, "gid"),
            ParLevel::WorkGroup(_) => (GpuIndex::GroupId, GpuIndex::NumGroups, "wg"),
            ParLevel::Local(_) => (GpuIndex::LocalId, GpuIndex::LocalSize, "lid"),
        };
        let dim = level.dim();
        let name = self.names.fresh(&format!("{base}{dim}"));
        let depth = env
            .scope
            .iter()
            .filter_map(|v| self.depth.get(v))
            .max()
            .map_or(1, |d| d + 1);
        self.depth.insert(name.clone(), depth);
        let renamed = Var::with_range(name.as_str(), Nat::cst(0), count.clone());
        let inner = env.bind(var, Nat::var(&renamed)).with_scope(&name);
        if let ParLevel::Local(d) = level {
            if count.as_cst().is_some() && count.as_cst() == self.threads[usize::from(d)] {
                self.thread_vars.insert(name.clone(), d);
            }
        }
        let mut stmts = Vec::new();
        self.comm(&inner, body, &mut stmts)?;
        if let ParLevel::Global(_) = level {
            // The host launches at least as many work-items as the largest `mapGlobal`
            // loop of this dimension has iterations (`GpuKernel::dims` refuses a grid
            // that cannot cover it): every work-item runs at most one iteration.
            out.push(Stmt::Comment(format!(
                "{origin} (at most one iteration per work-item)"
            )));
            let cond = Expr::binary(BinOp::Lt, Expr::ident(&name), self.nat(env, count)?);
            out.push(Stmt::Block(vec![
                Stmt::Decl(Decl {
                    ty: Type::Scalar(Scalar::Index),
                    name,
                    array_len: None,
                    init: Some(Expr::Gpu(id, dim)),
                    addr: ast::AddrSpace::Default,
                }),
                Stmt::If(cond, stmts, vec![]),
            ]));
            return Ok(());
        }
        if self.thread_vars.contains_key(&name) {
            // As many iterations as the work-group has threads in this dimension: every
            // thread runs exactly one, its own (the launch has exactly that many threads,
            // `GpuKernel::exact_threads`). No loop: fewer registers live across the body.
            out.push(Stmt::Comment(format!(
                "{origin} (one iteration per work-item)"
            )));
            let mut block = vec![Stmt::Decl(Decl {
                ty: Type::Scalar(Scalar::Index),
                name,
                array_len: None,
                init: Some(Expr::Gpu(id, dim)),
                addr: ast::AddrSpace::Default,
            })];
            block.extend(stmts);
            out.push(Stmt::Block(block));
            return Ok(());
        }
        out.push(Stmt::Comment(origin.to_string()));
        out.push(Stmt::For(For {
            var: name,
            start: Expr::Gpu(id, dim),
            end: self.nat(env, count)?,
            step: Expr::Gpu(size, dim),
            body: stmts,
            pragma: None,
        }));
        Ok(())
    }

    /// Whether some `mapLocal` loop was lowered to one iteration per work-item: the
    /// kernel must then be launched with exactly its work-group size.
    pub fn exact_threads(&self) -> bool {
        !self.thread_vars.is_empty()
    }

    fn new_mem(
        &mut self,
        env: &Env,
        ident: &Ident,
        addr: &AddrSpace,
        body: &Comm,
        out: &mut Vec<Stmt>,
    ) -> Res<()> {
        match addr {
            AddrSpace::Global if self.gpu => {
                return malformed(format!(
                    "the global memory `{}` is allocated inside a kernel (the host allocates it)",
                    ident.name
                ))
            }
            AddrSpace::Global | AddrSpace::Private => {}
            AddrSpace::Local if self.gpu => {}
            AddrSpace::Local | AddrSpace::Constant => {
                return unsupported(format!(
                    "`{}` is allocated in {addr} memory, which exists only on GPUs \
                     (OpenCL, CUDA); on a CPU use global or private memory",
                    ident.name
                ))
            }
            AddrSpace::Var(v) => {
                return unsupported(format!(
                    "the address space of `{}` is still the variable `{v}`: the program must \
                     decide where its memory lives",
                    ident.name
                ))
            }
        }
        let ty = env.ty(&ident.ty);
        if let Some(k) = self.distributable(env, addr, &ty) {
            // Try with every thread keeping only its part; if some access does not
            // fit, allocate the whole memory after all.
            let saved = (self.names.clone(), self.depth.clone());
            let mut attempt = Vec::new();
            let part = strip_dims(&ty, k);
            match self.allocate(env, ident, addr, part, Some(k), body, &mut attempt) {
                Ok(()) => {
                    out.extend(attempt);
                    return Ok(());
                }
                Err(_) if self.undistributable.borrow().as_deref() == Some(&ident.name) => {
                    *self.undistributable.borrow_mut() = None;
                    (self.names, self.depth) = saved;
                }
                Err(e) => return Err(e),
            }
        }
        self.allocate(env, ident, addr, ty, None, body, out)
    }

    /// Private memory of a GPU work-group whose leading dimensions have as many
    /// elements as a work-group has threads in some dimensions, allocated outside
    /// the `mapLocal` loops: if every access indexes those dimensions with the
    /// local ids, each thread needs only its part (the accumulators of a register
    /// block: Shine's adjustment of private allocations to the parallel loops that
    /// index them). The number of such leading dimensions.
    fn distributable(&self, env: &Env, addr: &AddrSpace, ty: &DataType) -> Option<usize> {
        if !self.gpu || *addr != AddrSpace::Private {
            return None;
        }
        if env.scope.iter().any(|v| self.thread_vars.contains_key(v)) {
            return None;
        }
        let mut counts: Vec<i64> = self
            .threads
            .iter()
            .flatten()
            .copied()
            .filter(|&t| t > 1)
            .collect();
        let mut k = 0;
        let mut t = ty;
        while let DataType::Array(n, e) = t {
            let Some(p) = n.as_cst().and_then(|c| counts.iter().position(|&t| t == c)) else {
                break;
            };
            counts.remove(p);
            k += 1;
            t = e;
        }
        (k > 0).then_some(k)
    }

    /// Allocates `ident` as `ty` (its part for every thread when `distributed` says
    /// how many leading dimensions were taken off) and lowers `body`.
    #[allow(clippy::too_many_arguments)]
    fn allocate(
        &mut self,
        env: &Env,
        ident: &Ident,
        addr: &AddrSpace,
        ty: DataType,
        distributed: Option<usize>,
        body: &Comm,
        out: &mut Vec<Stmt>,
    ) -> Res<()> {
        let cname = self.names.fresh(&ident.name);
        let (mut decls, mut frees) = (Vec::new(), Vec::new());
        let mut indexed = BTreeSet::new();
        for leaf in layout::leaves(&ty)? {
            let name = format!("{cname}{}", leaf.suffix);
            let elem = self
                .types
                .value_type(&canonical(&leaf.elem), &mut self.names)?;
            let Some(count) = leaf.count else {
                let init = match &leaf.elem {
                    DataType::Vector(..) if self.target == Some(GpuTarget::OpenCl) => {
                        let (s, lanes) = vector_elem_lanes(&leaf.elem)?;
                        Some(Expr::VectorLit(elem.clone(), vec![zero(s); lanes as usize]))
                    }
                    DataType::Vector(..) | DataType::Pair(..) => {
                        Some(Expr::InitList(vec![Expr::Int(0)]))
                    }
                    _ => None,
                };
                decls.push(Stmt::Decl(decl(elem, &name, None, init)));
                continue;
            };
            indexed.insert(leaf.suffix.clone());
            let bytes = count
                .as_cst()
                .and_then(|c| u64::try_from(c).ok())
                .map(|c| (c, c.saturating_mul(data_bytes(&leaf.elem))));
            match bytes {
                Some((c, b)) if *addr == AddrSpace::Local => {
                    let limit = 48 * 1024;
                    if b > limit {
                        return unsupported(format!(
                            "`{}` needs {b} bytes of local memory, more than the {limit} a \
                             work-group may use",
                            ident.name
                        ));
                    }
                    decls.push(Stmt::Comment(format!("{name}: {} (local)", show_type(&ty))));
                    let mut d = decl(elem, &name, Some(c.max(1)), None);
                    d.addr = ast::AddrSpace::Local;
                    decls.push(Stmt::Decl(d));
                }
                Some((c, b)) if b <= STACK_LIMIT => {
                    let place = if self.gpu { "private" } else { "stack" };
                    decls.push(Stmt::Comment(format!("{name}: {} ({place})", show_type(&ty))));
                    decls.push(Stmt::Decl(decl(elem, &name, Some(c.max(1)), None)));
                }
                _ if self.gpu => {
                    return unsupported(format!(
                        "`{}` ({addr} memory of type {}) needs a constant size of at most {STACK_LIMIT} \
                         bytes on a GPU",
                        ident.name,
                        show_type(&ty)
                    ))
                }
                _ => {
                    decls.push(Stmt::Comment(format!("{name}: {} (heap)", show_type(&ty))));
                    let size = Expr::binary(
                        BinOp::Mul,
                        Expr::SizeOf(elem.clone()),
                        self.nat(env, &count)?.cast(Type::Named("size_t".into())),
                    );
                    let init = Expr::call("malloc", vec![size]);
                    decls.push(Stmt::Decl(decl(Type::ptr(elem), &name, None, Some(init))));
                    decls.push(Stmt::If(
                        Expr::unary(UnOp::Not, Expr::ident(&name)),
                        vec![Stmt::Expr(Expr::call("abort", vec![]))],
                        vec![],
                    ));
                    frees.push(Stmt::Expr(Expr::call("free", vec![Expr::ident(&name)])));
                }
            }
        }
        if distributed.is_some() {
            decls.insert(
                0,
                Stmt::Comment(format!(
                    "{cname}: the part of {} of this work-item",
                    show_type(&env.ty(&ident.ty))
                )),
            );
        }
        let mem = Mem {
            cname,
            ty,
            role: Role::Local,
            indexed,
            distributed: distributed.map(|k| std::cell::RefCell::new(vec![None; k])),
            // local arrays are declared 16-byte aligned (see `print::decl_in`)
            aligned: self.gpu && *addr == AddrSpace::Local,
        };
        let shadowed = self.mems.insert(ident.name.clone(), mem);
        let mut stmts = Vec::new();
        let result = self.comm(env, body, &mut stmts);
        match shadowed {
            Some(m) => self.mems.insert(ident.name.clone(), m),
            None => self.mems.remove(&ident.name),
        };
        result?;
        // memory the body never touches is not allocated (`-Wunused-variable`)
        let used = ast::idents(&stmts);
        if decls
            .iter()
            .any(|d| matches!(d, Stmt::Decl(d) if used.contains(&d.name)))
        {
            out.extend(decls);
            out.extend(stmts);
            out.extend(frees);
        } else {
            out.extend(stmts);
        }
        Ok(())
    }

    fn assign(&mut self, env: &Env, acc: &Acc, exp: &Exp, out: &mut Vec<Stmt>) -> Res<()> {
        let is_value = scalar_of(&acc.ty)?.is_some() || matches!(acc.ty, DataType::Vector(..));
        if !is_value {
            return malformed(format!(
                "an assignment of data of type {} (only scalars and vectors are assigned)",
                show_type(&acc.ty)
            ));
        }
        match self.dest(env, acc, &[])? {
            Dest::Mem(p) => {
                let lhs = self.place_expr(env, &p)?;
                out.push(Stmt::Assign(lhs, self.value(env, exp, &[])?));
            }
            Dest::Vector {
                acc,
                env: aenv,
                index,
                lanes,
            } => {
                let vty = env.ty(&exp.ty);
                // One unaligned store when the lanes are contiguous in memory.
                let (lane, lenv) = self.lane_var(&aenv, lanes);
                let probe = self.dest(&lenv, acc, &[elem_index(&index, lanes, &lane)]);
                if let Ok(Dest::Mem(p)) = probe {
                    if let Some(first) = contiguous(&p, &lane) {
                        if let Some(store) = self.store_vector(&aenv, &first, &vty)? {
                            let v = self.value(env, exp, &[])?;
                            out.push(store(v));
                            return Ok(());
                        }
                    }
                }
                for k in 0..lanes {
                    let at = Nat::cst(i64::from(k));
                    let elem = PathElem::Idx(&index * i64::from(lanes) + &at);
                    let Dest::Mem(p) = self.dest(&aenv, acc, &[elem])? else {
                        return malformed("a vector written through nested `asVectorAcc`s");
                    };
                    let lhs = self.place_expr(&aenv, &p)?;
                    out.push(Stmt::Assign(
                        lhs,
                        self.value(env, exp, &[PathElem::Lane(at)])?,
                    ));
                }
            }
        }
        Ok(())
    }

    // ---- reading expressions -------------------------------------------------------------

    /// The C value of `e` read at `path`.
    fn value(&mut self, env: &Env, e: &Exp, path: &[PathElem]) -> Res<Expr> {
        match self.read(env, e, path)? {
            Read::Mem(p) => self.place_expr(env, &p),
            Read::Value(v) => Ok(v),
        }
    }

    fn read(&mut self, env: &Env, e: &Exp, path: &[PathElem]) -> Res<Read> {
        use ExpKind as K;
        let value = |v: Expr| Ok(Read::Value(v));
        if let Some(mode) = &mut self.vector_mode {
            let vectorizable = match &*e.kind {
                K::Binary(op, a, _) => match op {
                    dpia::BinOp::Add | dpia::BinOp::Sub | dpia::BinOp::Mul => true,
                    // integer division is checked lane by lane
                    dpia::BinOp::Div => !is_int_data(&a.ty),
                    _ => false,
                },
                K::Unary(op, _) => *op == dpia::UnOp::Neg,
                K::Nat(n) => !env.nat(n).contains_var(&mode.lane),
                // a clamped border: see `Lowerer::vector_pad`; other pads only
                // where the lanes read the same element
                K::Pad(_, _, PadMode::Clamp, _) => true,
                K::Pad(_, _, PadMode::Cst(_), _) => false,
                K::Pad(..) => !path_mentions(&path[..path.len().min(1)], &mode.lane),
                K::Select(..)
                | K::Cast(_)
                | K::Concat(..)
                | K::AsVector(..)
                | K::AsScalar(_)
                | K::VectorFromScalar(_) => false,
                _ => true,
            };
            if !vectorizable {
                mode.failed = true;
                return value(Expr::Int(0));
            }
        }
        match &*e.kind {
            K::Var(id) => {
                let place = self.mem_place(id, path, false)?;
                match &self.vector_mode {
                    Some(mode) if place_mentions(&place.place, &mode.lane) => {
                        self.vector_operand(env, &place).map(Read::Value)
                    }
                    _ => Ok(Read::Mem(place)),
                }
            }
            K::Lit(l) => {
                no_path(e, path)?;
                value(literal(l)?)
            }
            K::Nat(n) => {
                no_path(e, path)?;
                let v = self.nat(env, &env.nat(n))?;
                match scalar_of(&e.ty)? {
                    Some(Scalar::Index) | None => value(v),
                    Some(s) => value(v.cast(Type::Scalar(s))),
                }
            }
            K::Unary(op, a) => {
                let v = self.value(env, a, path)?;
                // vector operations compute in the element type (see `intops`)
                let scalar = scalar_of(&a.ty)?.filter(|_| self.vector_mode.is_none());
                value(match (op, scalar) {
                    (dpia::UnOp::Neg, Some(s)) if intops::is_int(s) => intops::negate(s, v),
                    (dpia::UnOp::Neg, _) => Expr::unary(UnOp::Neg, v),
                    (dpia::UnOp::Not, _) => Expr::unary(UnOp::Not, v),
                })
            }
            K::Binary(op, a, b) => {
                let cop = binop(*op, &a.ty)?;
                let (va, vb) = (self.value(env, a, path)?, self.value(env, b, path)?);
                let int =
                    scalar_of(&a.ty)?.filter(|s| intops::is_int(*s) && self.vector_mode.is_none());
                value(match (cop, int) {
                    (BinOp::Add | BinOp::Sub | BinOp::Mul, Some(s)) => {
                        intops::wrapping(cop, s, va, vb)
                    }
                    (BinOp::Div | BinOp::Mod, Some(s)) => {
                        intops::divide(cop == BinOp::Mod, s, va, vb, &mut self.divisions)
                    }
                    (BinOp::Div | BinOp::Mod, None)
                        if matches!(a.ty, DataType::Vector(..)) && is_int_data(&a.ty) =>
                    {
                        return unsupported(
                            "integer `/` or `%` on vectors (their divisors are not checked for \
                             zero): compute them lane by lane",
                        )
                    }
                    _ => Expr::binary(cop, va, vb),
                })
            }
            K::Select(c, a, b) => {
                let cpath = if matches!(c.ty, DataType::Vector(..)) {
                    path
                } else {
                    &[]
                };
                let vc = self.value(env, c, cpath)?;
                let (va, vb) = (self.value(env, a, path)?, self.value(env, b, path)?);
                value(Expr::ternary(vc, va, vb))
            }
            K::Cast(a) => {
                let v = self.value(env, a, path)?;
                match (&e.ty, path) {
                    (DataType::Vector(..), []) => {
                        let vty = canonical(&env.ty(&e.ty));
                        let t = self.types.value_type(&vty, &mut self.names)?;
                        let Type::Named(tname) = &t else {
                            return malformed(format!("the vector type {}", show_type(&vty)));
                        };
                        match self.target {
                            None => {
                                let tname = Expr::Raw(crate::print::type_name(&t));
                                value(Expr::call("__builtin_convertvector", vec![v, tname]))
                            }
                            Some(GpuTarget::OpenCl) => {
                                value(Expr::call(&format!("convert_{tname}"), vec![v]))
                            }
                            Some(GpuTarget::Cuda) => {
                                let (s, lanes) = vector_elem_lanes(&vty)?;
                                let items = (0..lanes)
                                    .map(|k| {
                                        v.clone()
                                            .member(&lane_name(GpuTarget::Cuda, k))
                                            .cast(Type::Scalar(s))
                                    })
                                    .collect();
                                value(Expr::VectorLit(t, items))
                            }
                        }
                    }
                    (t, _) => {
                        let elem = match t {
                            DataType::Vector(_, t) => &**t,
                            t => t,
                        };
                        match scalar_of(elem)? {
                            Some(s) => value(v.cast(Type::Scalar(s))),
                            None => malformed(format!("a cast to {}", show_type(elem))),
                        }
                    }
                }
            }
            K::Idx(a, k) => self.read(env, a, &cons(PathElem::Idx(env.nat(k)), path)),
            K::Split(n, a) => {
                let (i, j, rest) = two_indices(e, path)?;
                self.read(env, a, &cons(PathElem::Idx(i * env.nat(n) + j), rest))
            }
            K::Join(a) => {
                let m = inner_len(env, &a.ty)?;
                let (i, rest) = one_index(e, path)?;
                let at = [PathElem::Idx(i.floor_div(&m)), PathElem::Idx(i.modulo(&m))];
                self.read(env, a, &concat(&at, rest))
            }
            K::Transpose(a) => {
                let (i, j, rest) = two_indices(e, path)?;
                self.read(env, a, &concat(&[PathElem::Idx(j), PathElem::Idx(i)], rest))
            }
            K::Slide(_, sp, a) => {
                let (i, j, rest) = two_indices(e, path)?;
                self.read(env, a, &cons(PathElem::Idx(i * env.nat(sp) + j), rest))
            }
            K::Pad(l, _, PadMode::Clamp, a)
                if self
                    .vector_mode
                    .as_ref()
                    .is_some_and(|m| path_mentions(&path[..path.len().min(1)], &m.lane)) =>
            {
                self.vector_pad(env, e, &env.nat(l), a, path)
            }
            K::Pad(l, r, mode, a) => {
                self.read_pad(env, e, (&env.nat(l), &env.nat(r)), mode, a, path)
            }
            K::Take(_, a) => self.read(env, a, path),
            K::Drop(n, a) => {
                let (i, rest) = one_index(e, path)?;
                self.read(env, a, &cons(PathElem::Idx(i + env.nat(n)), rest))
            }
            K::Concat(a, b) => {
                let n = outer_len(env, &a.ty)?;
                let (i, rest) = one_index(e, path)?;
                match prove_lt(&i, &n) {
                    Some(true) => self.read(env, a, path),
                    Some(false) => self.read(env, b, &cons(PathElem::Idx(&i - &n), rest)),
                    None => {
                        let cond = self.compare(env, BinOp::Lt, &i, &n)?;
                        let va = self.value(env, a, path)?;
                        let vb = self.value(env, b, &cons(PathElem::Idx(&i - &n), rest))?;
                        value(Expr::ternary(cond, va, vb))
                    }
                }
            }
            K::Zip(a, b) => match path {
                [i @ PathElem::Idx(_), PathElem::Fst, rest @ ..] => {
                    self.read(env, a, &cons(i.clone(), rest))
                }
                [i @ PathElem::Idx(_), PathElem::Snd, rest @ ..] => {
                    self.read(env, b, &cons(i.clone(), rest))
                }
                _ => bad_path(e, path, "an index and a pair component"),
            },
            K::Pair(a, b) => match path {
                [PathElem::Fst, rest @ ..] => self.read(env, a, rest),
                [PathElem::Snd, rest @ ..] => self.read(env, b, rest),
                _ => bad_path(e, path, "a pair component"),
            },
            K::Fst(a) => self.read(env, a, &cons(PathElem::Fst, path)),
            K::Snd(a) => self.read(env, a, &cons(PathElem::Snd, path)),
            K::Generate(v, body) => {
                let (i, rest) = one_index(e, path)?;
                self.read(&env.bind(v, i), body, rest)
            }
            K::AsVector(n, a) => {
                let lanes = lane_count(&env.nat(n), &e.ty)?;
                match path {
                    [PathElem::Idx(i)] => self.vector_load(env, e, a, i, lanes),
                    [PathElem::Idx(i), PathElem::Lane(l), rest @ ..] => {
                        let at = PathElem::Idx(i * i64::from(lanes) + l);
                        self.read(env, a, &cons(at, rest))
                    }
                    _ => bad_path(e, path, "an index, optionally followed by a lane"),
                }
            }
            K::AsScalar(a) => {
                let n = vector_lanes(env, &a.ty, "asScalar")?;
                let (i, rest) = one_index(e, path)?;
                let at = [PathElem::Idx(i.floor_div(&n)), PathElem::Lane(i.modulo(&n))];
                self.read(env, a, &concat(&at, rest))
            }
            K::VectorFromScalar(a) => match path {
                [] => {
                    let vty = env.ty(&e.ty);
                    let (_, lanes) = vector_shape(&vty)?;
                    let t = self.types.value_type(&canonical(&vty), &mut self.names)?;
                    let s = self.value(env, a, &[])?;
                    value(self.vector_value(t, vec![s; lanes as usize]))
                }
                [PathElem::Lane(_), rest @ ..] => self.read(env, a, rest),
                _ => bad_path(e, path, "a vector lane"),
            },
        }
    }

    fn read_pad(
        &mut self,
        env: &Env,
        e: &Exp,
        (l, r): (&Nat, &Nat),
        mode: &PadMode,
        a: &Exp,
        path: &[PathElem],
    ) -> Res<Read> {
        let n = outer_len(env, &a.ty)?;
        let (i, rest) = one_index(e, path)?;
        let x = &i - l;
        let idx = match mode {
            PadMode::Clamp => {
                // only the sides the ranges do not already guarantee
                let lo = if x.prove_nonneg() {
                    x.clone()
                } else {
                    Nat::max(&x, &Nat::cst(0))
                };
                if x.prove_le(&(&n - 1)) {
                    lo
                } else {
                    Nat::min(&lo, &(&n - 1))
                }
            }
            PadMode::Wrap => {
                // `(x + c) % n` with `x + c >= 0`: `x >= -l`
                let c = if l.prove_le(&n) { n.clone() } else { l * &n };
                (&x + c).modulo(&n)
            }
            PadMode::Mirror if l.prove_le(&n) && r.prove_le(&n) => {
                // one reflection: -1 -> 0, -2 -> 1, n -> n-1
                let reflected = Nat::max(&x, &(Nat::cst(-1) - &x));
                Nat::min(&reflected, &(&n * 2 - 1 - &x))
            }
            PadMode::Mirror => {
                // periodic with period 2n: j = x mod 2n, then reflect
                let j = (&x + l * &n * 2).modulo(&(&n * 2));
                Nat::min(&j, &(&n * 2 - 1 - &j))
            }
            PadMode::Cst(c) => {
                let lo = prove_le(l, &i);
                let hi = prove_lt(&i, &(l + &n));
                let inside = cons(PathElem::Idx(x.clone()), rest);
                return match (lo, hi) {
                    (Some(true), Some(true)) => self.read(env, a, &inside),
                    (Some(false), _) | (_, Some(false)) => self.read(env, c, rest),
                    _ => {
                        let mut conds = Vec::new();
                        if lo.is_none() {
                            conds.push(self.compare(env, BinOp::Ge, &i, l)?);
                        }
                        if hi.is_none() {
                            conds.push(self.compare(env, BinOp::Lt, &i, &(l + &n))?);
                        }
                        let cond = conds
                            .into_iter()
                            .reduce(|p, q| Expr::binary(BinOp::And, p, q))
                            .unwrap_or(Expr::Bool(true));
                        let inner = self.value(env, a, &inside)?;
                        let outer = self.value(env, c, rest)?;
                        Ok(Read::Value(Expr::ternary(cond, inner, outer)))
                    }
                };
            }
        };
        self.read(env, a, &cons(PathElem::Idx(idx), rest))
    }

    /// A whole vector of `e = asVector lanes a` at index `i`: one unaligned
    /// load when its elements are contiguous in memory, the vector itself
    /// when `a` is `asScalar` of vector memory, else lane by lane.
    fn vector_load(&mut self, env: &Env, e: &Exp, a: &Exp, i: &Nat, lanes: u32) -> Res<Read> {
        let DataType::Array(_, vty) = &e.ty else {
            return malformed("`asVector` of type that is not an array");
        };
        let vty = env.ty(vty);
        let (lane, lenv) = self.lane_var(env, lanes);
        if let Ok(Read::Mem(p)) = self.read(&lenv, a, &[elem_index(i, lanes, &lane)]) {
            if let Some(first) = contiguous(&p, &lane) {
                return self.load_vector(env, &first, &vty).map(Read::Value);
            }
            if p.place.lane.as_ref() == Some(&Nat::var(&lane)) && !place_mentions(&p.place, &lane) {
                let mut whole = p;
                whole.place.lane = None;
                return Ok(Read::Mem(whole));
            }
        }
        let t = self.types.value_type(&canonical(&vty), &mut self.names)?;
        if let Some(v) = self.vector_op(&lenv, a, i, lanes, &lane, &vty, &t)? {
            return Ok(Read::Value(v));
        }
        let mut items = Vec::new();
        for k in 0..i64::from(lanes) {
            items.push(self.value(env, a, &[PathElem::Idx(i * i64::from(lanes) + k)])?);
        }
        Ok(Read::Value(self.vector_value(t, items)))
    }

    /// Elements `i*lanes ..` of `a` as one vector computed with vector
    /// operations, where `a`'s elements are a computation (`+ - * /`, negation)
    /// over memory that is either read at consecutive elements in the lanes
    /// (a vector load) or the same in every lane (a scalar, broadcast by the
    /// C vector extensions); `None` when some part is neither, and the vector
    /// is then built lane by lane.
    #[allow(clippy::too_many_arguments)]
    fn vector_op(
        &mut self,
        lenv: &Env,
        a: &Exp,
        i: &Nat,
        lanes: u32,
        lane: &Var,
        vty: &DataType,
        t: &Type,
    ) -> Res<Option<Expr>> {
        if self.vector_mode.is_some() {
            return Ok(None);
        }
        self.vector_mode = Some(VectorMode {
            lane: lane.clone(),
            ty: vty.clone(),
            used: false,
            failed: false,
        });
        let v = self.value(lenv, a, &[elem_index(i, lanes, lane)]);
        let mode = self.vector_mode.take().expect("set above");
        Ok(match v {
            Ok(v) if !mode.failed && mode.used => Some(v),
            Ok(v) if !mode.failed => Some(self.vector_value(t.clone(), vec![v; lanes as usize])),
            _ => None,
        })
    }

    /// A clamped border read by the lanes of [`Lowerer::vector_op`] at
    /// consecutive indices: where all lanes are inside the array (the interior,
    /// the common case) the array is read as it is, with vector loads; at the
    /// border the lanes are clamped one by one:
    /// `inside ? vector : (vector){lane 0, lane 1, ...}`.
    fn vector_pad(&mut self, env: &Env, e: &Exp, l: &Nat, a: &Exp, path: &[PathElem]) -> Res<Read> {
        let (mode_lane, mode_ty) = match &self.vector_mode {
            Some(m) => (m.lane.clone(), m.ty.clone()),
            None => return malformed("a vector border read outside a vector computation"),
        };
        let n = outer_len(env, &a.ty)?;
        let (i, rest) = one_index(e, path)?;
        let x = &i - l;
        let first = x.substitute(&mode_lane, &Nat::cst(0));
        let (_, lanes) = vector_shape(&env.ty(&mode_ty))?;
        if first.contains_var(&mode_lane) || &first + Nat::var(&mode_lane) != x {
            if let Some(m) = &mut self.vector_mode {
                m.failed = true;
            }
            return Ok(Read::Value(Expr::Int(0)));
        }
        let last = &first + (i64::from(lanes) - 1);
        let fast = self.value(env, a, &cons(PathElem::Idx(x), rest))?;
        let mut conds = Vec::new();
        if !first.prove_nonneg() {
            conds.push(self.compare(env, BinOp::Ge, &first, &Nat::cst(0))?);
        }
        if !last.prove_le(&(&n - 1)) {
            conds.push(self.compare(env, BinOp::Lt, &last, &n)?);
        }
        let Some(inside) = conds
            .into_iter()
            .reduce(|p, q| Expr::binary(BinOp::And, p, q))
        else {
            return Ok(Read::Value(fast));
        };
        let saved = self.vector_mode.take();
        let mut items = Vec::new();
        for k in 0..i64::from(lanes) {
            let at: Vec<PathElem> = path
                .iter()
                .map(|p| match p {
                    PathElem::Idx(n) => PathElem::Idx(n.substitute(&mode_lane, &Nat::cst(k))),
                    other => other.clone(),
                })
                .collect();
            let v = self.value(env, e, &at);
            if v.is_err() {
                self.vector_mode = saved;
                return v.map(Read::Value);
            }
            items.push(v?);
        }
        self.vector_mode = saved;
        let t = self
            .types
            .value_type(&canonical(&env.ty(&mode_ty)), &mut self.names)?;
        // the same type on both sides (a C load has the unaligned variant)
        let fast = if self.target.is_none() {
            fast.cast(t.clone())
        } else {
            fast
        };
        let slow = self.vector_value(t, items);
        Ok(Read::Value(Expr::ternary(inside, fast, slow)))
    }

    /// A memory operand of [`Lowerer::vector_op`] that differs between lanes:
    /// a vector load if the lanes are consecutive elements.
    fn vector_operand(&mut self, env: &Env, place: &MemPlace) -> Res<Expr> {
        let Some(mode) = &mut self.vector_mode else {
            return malformed("a vector operand outside a vector computation");
        };
        let Some(first) = contiguous(place, &mode.lane) else {
            mode.failed = true;
            return Ok(Expr::Int(0));
        };
        mode.used = true;
        let vty = mode.ty.clone();
        self.load_vector(env, &first, &vty)
    }

    /// A vector value lane by lane: a compound literal in C, the dialect's
    /// vector literal on a GPU ([`Expr::VectorLit`]).
    fn vector_value(&self, t: Type, items: Vec<Expr>) -> Expr {
        if self.target.is_some() {
            Expr::VectorLit(t, items)
        } else {
            Expr::Compound(t, items)
        }
    }

    /// A vector of type `vty` loaded from consecutive elements, the first at
    /// `first`: C `*(const float4_u *)&x[i]` (element alignment), OpenCL
    /// `vload4(k, x)` (any element address), CUDA `*(const float4 *)&x[i]` where
    /// that is provably aligned and `make_float4(x[i], x[i + 1], ...)` elsewhere.
    fn load_vector(&mut self, env: &Env, first: &MemPlace, vty: &DataType) -> Res<Expr> {
        let vty = canonical(vty);
        let (_, lanes) = vector_elem_lanes(&vty)?;
        match self.target {
            None => {
                let ptr = Type::const_ptr(self.types.unaligned_vector(&vty, &mut self.names)?);
                let addr = Expr::unary(UnOp::AddrOf, self.place_expr(env, first)?);
                Ok(Expr::unary(UnOp::Deref, addr.cast(ptr)))
            }
            Some(GpuTarget::OpenCl) => {
                let (offset, ptr) = self.vload_args(env, first, lanes)?;
                Ok(Expr::call(&format!("vload{lanes}"), vec![offset, ptr]))
            }
            Some(GpuTarget::Cuda) => {
                let t = self.types.value_type(&vty, &mut self.names)?;
                if vector_aligned(first, lanes) {
                    let addr = Expr::unary(UnOp::AddrOf, self.place_expr(env, first)?);
                    return Ok(Expr::unary(UnOp::Deref, addr.cast(Type::const_ptr(t))));
                }
                let mut items = Vec::new();
                for k in 0..i64::from(lanes) {
                    items.push(self.place_expr(env, &first.at(k))?);
                }
                Ok(Expr::VectorLit(t, items))
            }
        }
    }

    /// The store of a vector of type `vty` to consecutive elements, the first at
    /// `first` (as [`Lowerer::load_vector`] loads it), given the value; `None`
    /// where the target has no such store (CUDA, not provably aligned) and the
    /// lanes are stored one by one.
    #[allow(clippy::type_complexity)]
    fn store_vector(
        &mut self,
        env: &Env,
        first: &MemPlace,
        vty: &DataType,
    ) -> Res<Option<Box<dyn FnOnce(Expr) -> Stmt>>> {
        let vty = canonical(vty);
        let (_, lanes) = vector_elem_lanes(&vty)?;
        match self.target {
            None => {
                let ptr = Type::ptr(self.types.unaligned_vector(&vty, &mut self.names)?);
                let addr = Expr::unary(UnOp::AddrOf, self.place_expr(env, first)?);
                let lhs = Expr::unary(UnOp::Deref, addr.cast(ptr));
                Ok(Some(Box::new(move |v| Stmt::Assign(lhs, v))))
            }
            Some(GpuTarget::OpenCl) => {
                let (offset, ptr) = self.vload_args(env, first, lanes)?;
                let f = format!("vstore{lanes}");
                Ok(Some(Box::new(move |v| {
                    Stmt::Expr(Expr::call(&f, vec![v, offset, ptr]))
                })))
            }
            Some(GpuTarget::Cuda) if vector_aligned(first, lanes) => {
                let t = self.types.value_type(&vty, &mut self.names)?;
                let addr = Expr::unary(UnOp::AddrOf, self.place_expr(env, first)?);
                let lhs = Expr::unary(UnOp::Deref, addr.cast(Type::ptr(t)));
                Ok(Some(Box::new(move |v| Stmt::Assign(lhs, v))))
            }
            Some(GpuTarget::Cuda) => Ok(None),
        }
    }

    /// The offset and pointer arguments of OpenCL's `vloadN`/`vstoreN` for
    /// consecutive elements from `first`: `(k, x)` where the index is `k * N`,
    /// else `(0, &x[i])`.
    fn vload_args(&self, env: &Env, first: &MemPlace, lanes: u32) -> Res<(Expr, Expr)> {
        let n = Nat::cst(i64::from(lanes));
        match &first.place.flat {
            Some(flat) if flat.modulo(&n).as_cst() == Some(0) => Ok((
                self.nat(env, &flat.floor_div(&n))?,
                Expr::ident(&first.base),
            )),
            _ => Ok((
                Expr::Int(0),
                Expr::unary(UnOp::AddrOf, self.place_expr(env, first)?),
            )),
        }
    }

    // ---- writing through acceptors -------------------------------------------------------

    fn dest<'a>(&mut self, env: &Env, acc: &'a Acc, path: &[PathElem]) -> Res<Dest<'a>> {
        use AccKind as A;
        match &*acc.kind {
            A::Var(id) => self.mem_place(id, path, true).map(Dest::Mem),
            A::Idx(a, k) => self.dest(env, a, &cons(PathElem::Idx(env.nat(k)), path)),
            A::Split(n, a) => {
                let (i, j, rest) = two_acc_indices(acc, path)?;
                self.dest(env, a, &cons(PathElem::Idx(i * env.nat(n) + j), rest))
            }
            A::Join(a) => {
                let m = inner_len(env, &a.ty)?;
                let (i, rest) = one_acc_index(acc, path)?;
                let at = [PathElem::Idx(i.floor_div(&m)), PathElem::Idx(i.modulo(&m))];
                self.dest(env, a, &concat(&at, rest))
            }
            A::Transpose(a) => {
                let (i, j, rest) = two_acc_indices(acc, path)?;
                self.dest(env, a, &concat(&[PathElem::Idx(j), PathElem::Idx(i)], rest))
            }
            A::Zip1(a) | A::Zip2(a) => {
                let (i, rest) = one_acc_index(acc, path)?;
                let c = if matches!(*acc.kind, A::Zip1(_)) {
                    PathElem::Fst
                } else {
                    PathElem::Snd
                };
                self.dest(env, a, &concat(&[PathElem::Idx(i), c], rest))
            }
            A::Unzip(a) => match path {
                [i @ PathElem::Idx(_), c @ (PathElem::Fst | PathElem::Snd), rest @ ..] => {
                    self.dest(env, a, &concat(&[c.clone(), i.clone()], rest))
                }
                _ => bad_acc_path(acc, path, "an index and a pair component"),
            },
            A::Pair1(a) => self.dest(env, a, &cons(PathElem::Fst, path)),
            A::Pair2(a) => self.dest(env, a, &cons(PathElem::Snd, path)),
            A::AsVector(n, a) => {
                let DataType::Array(_, vty) = &acc.ty else {
                    return malformed("`asVectorAcc` of a type that is not an array");
                };
                let lanes = lane_count(&env.nat(n), vty)?;
                match path {
                    [PathElem::Idx(i)] => Ok(Dest::Vector {
                        acc: a,
                        env: env.clone(),
                        index: i.clone(),
                        lanes,
                    }),
                    [PathElem::Idx(i), PathElem::Lane(l), rest @ ..] => {
                        let at = PathElem::Idx(i * i64::from(lanes) + l);
                        self.dest(env, a, &cons(at, rest))
                    }
                    _ => bad_acc_path(acc, path, "an index, optionally followed by a lane"),
                }
            }
            A::AsScalar(a) => {
                let n = vector_lanes(env, &a.ty, "asScalarAcc")?;
                let (i, rest) = one_acc_index(acc, path)?;
                let at = [PathElem::Idx(i.floor_div(&n)), PathElem::Lane(i.modulo(&n))];
                self.dest(env, a, &concat(&at, rest))
            }
            A::Take(a) => self.dest(env, a, path),
            A::Map(v, a) => {
                let (i, rest) = one_acc_index(acc, path)?;
                self.dest(&env.bind(v, i), a, rest)
            }
            A::Drop(n, a) => {
                let (i, rest) = one_acc_index(acc, path)?;
                self.dest(env, a, &cons(PathElem::Idx(i + env.nat(n)), rest))
            }
        }
    }

    // ---- memory, indices -----------------------------------------------------------------

    fn mem_place(&self, id: &Ident, path: &[PathElem], write: bool) -> Res<MemPlace> {
        let Some(mem) = self.mems.get(&id.name) else {
            return malformed(format!(
                "the identifier `{}` is used outside the `new` that allocates it (or is not a parameter)",
                id.name
            ));
        };
        if write && mem.role == Role::Input {
            return Err(CodegenError::WriteToInput(id.name.clone()));
        }
        let path = match &mem.distributed {
            Some(dims) => self.own_part(&id.name, dims, path)?,
            None => path,
        };
        let place = locate(&mem.ty, path)?;
        Ok(MemPlace {
            base: format!("{}{}", mem.cname, place.leaf),
            indexed: mem.indexed.contains(&place.leaf),
            place,
            aligned: mem.aligned,
        })
    }

    /// The path into a thread's part of distributed private memory: the leading
    /// indices must be the local ids of the thread dimensions the part stands for.
    fn own_part<'p>(
        &self,
        name: &str,
        dims: &std::cell::RefCell<Vec<Option<u8>>>,
        path: &'p [PathElem],
    ) -> Res<&'p [PathElem]> {
        let mut dims = dims.borrow_mut();
        let k = dims.len();
        let fits = path.len() >= k
            && path[..k].iter().zip(dims.iter_mut()).all(|(step, dim)| {
                let d = match step {
                    PathElem::Idx(i) => i.as_var().and_then(|v| self.thread_vars.get(v.name())),
                    _ => None,
                };
                match (d, *dim) {
                    (Some(&d), None) => {
                        *dim = Some(d);
                        true
                    }
                    (Some(&d), Some(e)) => d == e,
                    (None, _) => false,
                }
            });
        if fits {
            Ok(&path[k..])
        } else {
            *self.undistributable.borrow_mut() = Some(name.to_string());
            unsupported(format!(
                "`{name}` is accessed at {} outside its work-item's part",
                show_path(path)
            ))
        }
    }

    fn place_expr(&self, env: &Env, p: &MemPlace) -> Res<Expr> {
        let mut e = Expr::ident(&p.base);
        match (&p.place.flat, p.indexed) {
            (flat, true) => e = e.index(self.nat(env, flat.as_ref().unwrap_or(&Nat::cst(0)))?),
            (None, false) => {}
            (Some(_), false) => {
                return malformed(format!("`{}` is indexed but is not an array", p.base))
            }
        }
        for f in &p.place.fields {
            e = e.member(f);
        }
        if let Some(l) = &p.place.lane {
            e = match (self.target, l.as_cst()) {
                (None, _) => e.index(self.nat(env, l)?),
                (Some(t), Some(k)) if (0..16).contains(&k) => e.member(&lane_name(t, k as u32)),
                (Some(_), _) => {
                    return unsupported(format!(
                        "the lane `{l}` of the vector `{}` on a GPU: OpenCL and CUDA vectors \
                         are read lane by lane with constant lanes (unroll the loop over the \
                         lanes)",
                        p.base
                    ))
                }
            };
        }
        Ok(e)
    }

    /// A `Nat` over C variables as a C expression; every variable must be in scope.
    fn nat(&self, env: &Env, n: &Nat) -> Res<Expr> {
        if let Some(v) = n.free_vars().iter().find(|v| !env.scope.contains(v.name())) {
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

    /// A lane variable `0 <= l < lanes`, for proving loads and stores
    /// contiguous. It is never printed, so its name is one no C variable has.
    fn lane_var(&self, env: &Env, lanes: u32) -> (Var, Env) {
        let name = "'lane";
        let v = Var::with_range(name, Nat::cst(0), Nat::cst(i64::from(lanes)));
        (v, env.clone().with_scope(name))
    }
}

// ---- helpers -----------------------------------------------------------------------------

fn decl(ty: Type, name: &str, array_len: Option<u64>, init: Option<Expr>) -> Decl {
    Decl {
        ty,
        name: name.to_string(),
        array_len,
        init,
        addr: ast::AddrSpace::Default,
    }
}

/// The key a data type's C type is registered under (`idx[n]` and `natType` are both `int`).
fn canonical(dt: &DataType) -> DataType {
    match dt {
        DataType::Index(_) => DataType::NatType,
        DataType::Pair(a, b) => DataType::pair(canonical(a), canonical(b)),
        DataType::Vector(n, t) => DataType::vector(canonical(t), n.clone()),
        _ => dt.clone(),
    }
}

/// Approximate size in bytes of one element of flat data (for the stack limit).
fn data_bytes(dt: &DataType) -> u64 {
    match dt {
        DataType::Scalar(s) => u64::from(s.bits().div_ceil(8)),
        DataType::NatType | DataType::Index(_) => 4,
        DataType::Vector(n, t) => {
            n.as_cst().and_then(|c| u64::try_from(c).ok()).unwrap_or(1) * data_bytes(t)
        }
        DataType::Pair(a, b) => 2 * data_bytes(a).max(data_bytes(b)),
        _ => 8,
    }
}

/// The lane `k` of a GPU vector: OpenCL `s0` .. `sf`, CUDA `x` .. `w`.
fn lane_name(t: GpuTarget, k: u32) -> String {
    match t {
        GpuTarget::OpenCl => format!("s{k:x}"),
        GpuTarget::Cuda => ["x", "y", "z", "w"][k.min(3) as usize].to_string(),
    }
}

/// Zero of a scalar type, as a literal of that type.
fn zero(s: Scalar) -> Expr {
    match s {
        Scalar::Float | Scalar::Double => Expr::Float {
            value: 0.0,
            single: s == Scalar::Float,
        },
        Scalar::Int => Expr::Int(0),
        s => Expr::Int(0).cast(Type::Scalar(s)),
    }
}

/// Whether a vector of `lanes` elements from `first` is at an address aligned to
/// its size (at most 16 bytes): an aligned array, an index that is a multiple of
/// `lanes`.
fn vector_aligned(first: &MemPlace, lanes: u32) -> bool {
    let n = Nat::cst(i64::from(lanes));
    first.aligned
        && first.place.fields.is_empty()
        && first.place.lane.is_none()
        && first
            .place
            .flat
            .as_ref()
            .is_some_and(|f| f.modulo(&n).as_cst() == Some(0))
}

impl MemPlace {
    /// The place `k` elements further (of an indexed array).
    fn at(&self, k: i64) -> MemPlace {
        let mut q = self.clone();
        q.place.flat = Some(q.place.flat.as_ref().map_or(Nat::cst(k), |f| f + k));
        q
    }
}

/// Element `index*lanes + lane`.
fn elem_index(index: &Nat, lanes: u32, lane: &Var) -> PathElem {
    PathElem::Idx(index * i64::from(lanes) + Nat::var(lane))
}

/// `ty` without its `k` outer array dimensions.
fn strip_dims(ty: &DataType, k: usize) -> DataType {
    match ty {
        DataType::Array(_, e) if k > 0 => strip_dims(e, k - 1),
        t => t.clone(),
    }
}

/// The place of lane 0 when the place of lane `l` is element `base + l` of one array.
fn contiguous(p: &MemPlace, lane: &Var) -> Option<MemPlace> {
    let flat = p.place.flat.as_ref()?;
    if !p.indexed || !p.place.fields.is_empty() || p.place.lane.is_some() {
        return None;
    }
    let first = flat.substitute(lane, &Nat::cst(0));
    if first.contains_var(lane) || &first + Nat::var(lane) != *flat {
        return None;
    }
    let mut q = p.clone();
    q.place.flat = Some(first);
    Some(q)
}

/// Whether an index of the path mentions `v`.
fn path_mentions(path: &[PathElem], v: &Var) -> bool {
    path.iter()
        .any(|p| matches!(p, PathElem::Idx(n) if n.contains_var(v)))
}

fn place_mentions(p: &Place, v: &Var) -> bool {
    p.flat.as_ref().is_some_and(|f| f.contains_var(v))
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

/// `a < b`: `Some` when the ranges decide it.
fn prove_lt(a: &Nat, b: &Nat) -> Option<bool> {
    if a.prove_lt(b) {
        Some(true)
    } else if b.prove_le(a) {
        Some(false)
    } else {
        None
    }
}

/// `a <= b`: `Some` when the ranges decide it.
fn prove_le(a: &Nat, b: &Nat) -> Option<bool> {
    if a.prove_le(b) {
        Some(true)
    } else if b.prove_lt(a) {
        Some(false)
    } else {
        None
    }
}

fn literal(l: &Literal) -> Res<Expr> {
    Ok(match l {
        Literal::Bool(b) => Expr::Bool(*b),
        Literal::Int(v, ScalarType::Int) => int_literal(*v),
        Literal::Int(v, t) => int_literal(*v).cast(Type::Scalar(scalar(*t)?)),
        Literal::Float(v, t) => Expr::Float {
            value: *v,
            single: scalar(*t)? == Scalar::Float,
        },
        Literal::Nat(n) => nat_to_expr(n),
    })
}

fn int_literal(v: i64) -> Expr {
    if v == i64::MIN {
        // `-9223372036854775808` is not a C literal
        return Expr::binary(BinOp::Sub, Expr::Int(i64::MIN + 1), Expr::Int(1));
    }
    Expr::Int(v)
}

fn binop(op: dpia::BinOp, operand: &DataType) -> Res<BinOp> {
    use dpia::BinOp as B;
    let elem = match operand {
        DataType::Vector(_, t) => &**t,
        t => t,
    };
    let float = matches!(elem, DataType::Scalar(s) if s.is_float());
    Ok(match op {
        B::Add => BinOp::Add,
        B::Sub => BinOp::Sub,
        B::Mul => BinOp::Mul,
        B::Div => BinOp::Div,
        B::Mod if float => return unsupported("`%` on floating-point values"),
        B::Mod => BinOp::Mod,
        B::Gt => BinOp::Gt,
        B::Lt => BinOp::Lt,
        B::Eq => BinOp::Eq,
    })
}

/// Integer data: an integer scalar or a vector of integers.
fn is_int_data(dt: &DataType) -> bool {
    let elem = match dt {
        DataType::Vector(_, t) => &**t,
        t => t,
    };
    matches!(elem, DataType::Scalar(s) if !s.is_float() && *s != ScalarType::Bool)
}

fn cons(first: PathElem, rest: &[PathElem]) -> Vec<PathElem> {
    let mut v = Vec::with_capacity(rest.len() + 1);
    v.push(first);
    v.extend_from_slice(rest);
    v
}

fn concat(first: &[PathElem], rest: &[PathElem]) -> Vec<PathElem> {
    let mut v = first.to_vec();
    v.extend_from_slice(rest);
    v
}

/// `n` of an array type `n.t`.
fn outer_len(env: &Env, dt: &DataType) -> Res<Nat> {
    match dt {
        DataType::Array(n, _) => Ok(env.nat(n)),
        _ => malformed(format!(
            "expected an array, found data of type {}",
            show_type(dt)
        )),
    }
}

/// `n` of an array of vectors `m.vec[t, n]` (the operand of `view`).
fn vector_lanes(env: &Env, dt: &DataType, view: &str) -> Res<Nat> {
    match dt {
        DataType::Array(_, t) => match &**t {
            DataType::Vector(n, _) => Ok(env.nat(n)),
            _ => malformed(format!(
                "`{view}` of {}, an array that does not hold vectors",
                show_type(dt)
            )),
        },
        _ => malformed(format!(
            "`{view}` of {}, which is not an array",
            show_type(dt)
        )),
    }
}

/// `m` of an array type `n.m.t`.
fn inner_len(env: &Env, dt: &DataType) -> Res<Nat> {
    match dt {
        DataType::Array(_, t) => outer_len(env, t),
        _ => malformed(format!(
            "expected a 2-d array, found data of type {}",
            show_type(dt)
        )),
    }
}

fn show_path(path: &[PathElem]) -> String {
    if path.is_empty() {
        return "the empty path".into();
    }
    path.iter().map(show_step).collect()
}

fn exp_name(e: &Exp) -> &'static str {
    use ExpKind as K;
    match &*e.kind {
        K::Var(_) => "variable",
        K::Lit(_) => "literal",
        K::Nat(_) => "nat",
        K::Unary(..) | K::Binary(..) => "operation",
        K::Select(..) => "select",
        K::Cast(_) => "cast",
        K::Idx(..) => "idx",
        K::Split(..) => "split",
        K::Join(_) => "join",
        K::Transpose(_) => "transpose",
        K::Slide(..) => "slide",
        K::Pad(..) => "pad",
        K::Take(..) => "take",
        K::Drop(..) => "drop",
        K::Concat(..) => "concat",
        K::Zip(..) => "zip",
        K::Pair(..) => "makePair",
        K::Fst(_) => "fst",
        K::Snd(_) => "snd",
        K::Generate(..) => "generate",
        K::AsVector(..) => "asVector",
        K::AsScalar(_) => "asScalar",
        K::VectorFromScalar(_) => "vectorFromScalar",
    }
}

fn bad_path<T>(e: &Exp, path: &[PathElem], expected: &str) -> Res<T> {
    malformed(format!(
        "`{}` of type {} read at {} (expected {expected})",
        exp_name(e),
        show_type(&e.ty),
        show_path(path)
    ))
}

fn bad_acc_path<T>(acc: &Acc, path: &[PathElem], expected: &str) -> Res<T> {
    malformed(format!(
        "an acceptor of type {} written at {} (expected {expected})",
        show_type(&acc.ty),
        show_path(path)
    ))
}

fn no_path(e: &Exp, path: &[PathElem]) -> Res<()> {
    if path.is_empty() {
        Ok(())
    } else {
        bad_path(e, path, "a scalar read at the empty path")
    }
}

fn one_index<'p>(e: &Exp, path: &'p [PathElem]) -> Res<(Nat, &'p [PathElem])> {
    match path {
        [PathElem::Idx(i), rest @ ..] => Ok((i.clone(), rest)),
        _ => bad_path(e, path, "an array index"),
    }
}

fn two_indices<'p>(e: &Exp, path: &'p [PathElem]) -> Res<(Nat, Nat, &'p [PathElem])> {
    match path {
        [PathElem::Idx(i), PathElem::Idx(j), rest @ ..] => Ok((i.clone(), j.clone(), rest)),
        _ => bad_path(e, path, "two array indices"),
    }
}

fn one_acc_index<'p>(acc: &Acc, path: &'p [PathElem]) -> Res<(Nat, &'p [PathElem])> {
    match path {
        [PathElem::Idx(i), rest @ ..] => Ok((i.clone(), rest)),
        _ => bad_acc_path(acc, path, "an array index"),
    }
}

fn two_acc_indices<'p>(acc: &Acc, path: &'p [PathElem]) -> Res<(Nat, Nat, &'p [PathElem])> {
    match path {
        [PathElem::Idx(i), PathElem::Idx(j), rest @ ..] => Ok((i.clone(), j.clone(), rest)),
        _ => bad_acc_path(acc, path, "two array indices"),
    }
}

// ---- the data types of a program -----------------------------------------------------------

fn collect_comm_types(c: &Comm, out: &mut Vec<DataType>) {
    match c {
        Comm::Skip => {}
        Comm::Seq(cs) => cs.iter().for_each(|c| collect_comm_types(c, out)),
        Comm::Assign(a, _) => out.push(a.ty.clone()),
        Comm::New { ident, body, .. } => {
            out.push(ident.ty.clone());
            collect_comm_types(body, out);
        }
        Comm::For { body, .. } => collect_comm_types(body, out),
        Comm::Barrier { .. } => {}
    }
}
