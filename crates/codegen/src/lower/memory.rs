//! Memory: where each memory identifier lives and how a place in it is
//! written in C. A `new` is allocated on the stack (private memory on a GPU),
//! in local memory, or on the heap, as its size and address space say; private
//! memory of a work-group that every work-item indexes with its own local id is
//! cut down to the work-item's part. A path into a memory identifier becomes a
//! [`MemPlace`], and that a C lvalue.

use std::collections::BTreeSet;

use arith::Nat;
use dpia::{Comm, Ident, LoopKind, ParLevel};
use rise::{AddrSpace, DataType};

use super::views::show_path;
use super::{canonical, Env, Lowerer, Res, STACK_LIMIT};
use crate::abi;
use crate::ast::{self, BinOp, Decl, Expr, Scalar, Stmt, Type, UnOp};
use crate::ctypes::{moved_half_vector, scalar_of, vector_elem_lanes};
use crate::error::{malformed, unsupported, CodegenError};
use crate::layout::{self, locate, show_type, PathElem, Place};

/// The alignment of heap memory, in bytes: a cache line, and the widest vector type (AVX-512).
const HEAP_ALIGN: i64 = 64;

/// The role of a memory identifier.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Role {
    Output,
    Input,
    /// Global memory the host allocated for a GPU program's intermediate results.
    Temporary,
    Local,
}

/// How a memory identifier is stored in C.
#[derive(Clone, Debug)]
pub(super) struct Mem {
    /// The C name (leaves append their suffix).
    pub(super) cname: String,
    /// Its data type, in terms of C variables.
    pub(super) ty: DataType,
    pub(super) role: Role,
    /// Leaf suffixes that are arrays or pointers (accessed as `x[i]`); the
    /// others are single C values.
    pub(super) indexed: BTreeSet<String>,
    /// Private memory of a work-group of which every thread keeps only its part
    /// ([`Lowerer::distributable`]): the thread dimension each of the leading
    /// indices taken off stands for (fixed by the first access).
    pub(super) distributed: Option<std::cell::RefCell<Vec<Option<u8>>>>,
    /// Its arrays start at an address aligned to 16 bytes or more (GPU buffers,
    /// local-memory arrays): a vector of at most 16 bytes at an element index
    /// that is a multiple of its lanes is aligned.
    pub(super) aligned: bool,
    /// It is an array of local (CUDA shared) memory.
    pub(super) shared: bool,
}

/// A memory location: a C object and where in it.
#[derive(Clone, Debug)]
pub(super) struct MemPlace {
    pub(super) base: String,
    pub(super) indexed: bool,
    pub(super) place: Place,
    /// The array starts at a 16-byte aligned address ([`Mem::aligned`]).
    pub(super) aligned: bool,
    /// The array is in local (CUDA shared) memory ([`Mem::shared`]).
    pub(super) shared: bool,
}

impl Lowerer {
    /// Whether `name` is global memory: an input, the output or a temporary the host
    /// allocated (not memory the kernel declares).
    pub(super) fn is_global(&self, name: &str) -> bool {
        self.mems.get(name).is_some_and(|m| m.role != Role::Local)
    }

    pub(super) fn new_mem(
        &mut self,
        env: &Env,
        ident: &Ident,
        addr: &AddrSpace,
        body: &Comm,
        out: &mut Vec<Stmt>,
    ) -> Res<()> {
        match addr {
            AddrSpace::Global if self.gpu() => {
                return malformed(format!(
                    "the global memory `{}` is allocated inside a kernel (the host allocates it)",
                    ident.name
                ))
            }
            AddrSpace::Global | AddrSpace::Private => {}
            AddrSpace::Local if self.gpu() => {}
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
            let saved = (
                self.names.clone(),
                self.depth.clone(),
                self.register_indices.borrow().clone(),
            );
            let mut attempt = Vec::new();
            let part = strip_dims(&ty, k);
            match self.allocate(env, ident, addr, part, Some(k), body, &mut attempt) {
                Ok(()) => {
                    out.extend(attempt);
                    return Ok(());
                }
                Err(_) if self.undistributable.borrow().as_deref() == Some(&ident.name) => {
                    *self.undistributable.borrow_mut() = None;
                    let indices;
                    (self.names, self.depth, indices) = saved;
                    *self.register_indices.borrow_mut() = indices;
                }
                Err(e) => return Err(e),
            }
        }
        if self.gpu() && *addr == AddrSpace::Private {
            written_by_its_readers(&ident.name, body)?;
        }
        self.allocate(env, ident, addr, ty, None, body, out)
    }

    /// Private memory of a GPU work-group whose leading dimensions have as many
    /// elements as a work-group has threads in some dimensions (or, in a kernel with
    /// lane loops, then as many as it has warps and 32, or 32: its warps and their
    /// lanes), allocated outside the `mapLocal`, `mapWarp` and `mapLane` loops: if every
    /// access indexes those dimensions with the local ids (the warp, the lane), each
    /// thread needs only its part (the accumulators of a register block, tensor-core
    /// accumulator fragments: Shine's adjustment of private allocations to the parallel
    /// loops that index them). The number of such leading dimensions.
    fn distributable(&self, env: &Env, addr: &AddrSpace, ty: &DataType) -> Option<usize> {
        if !self.gpu() || *addr != AddrSpace::Private {
            return None;
        }
        if env.scope.iter().any(|v| self.thread_vars.contains_key(v)) {
            return None;
        }
        if self.lane_loops {
            // a part per warp (a `mapWarp` of one iteration per warp indexes it with its
            // warp), then a row per lane (`mapLane` and `mmaSync` index it with their lane);
            // a work-group of one warp may keep a warp dimension of one. The lanes' own
            // dimensions after that are not threads' (a lane's 32 registers are not 32
            // threads of a one-warp work-group).
            // or a part per warp group, then per warp of the group (4), then a row per lane
            // (`wgmma`'s accumulators)
            let warps = self.threads[0].map(|t| t / 32);
            let k = match leading_sizes(ty) {
                [Some(g), Some(4), Some(32)] if Some(4 * g) == warps => 3,
                [Some(w), Some(32), _] if Some(w) == warps => 2,
                [Some(32), _, _] => 1,
                _ => 0,
            };
            if k > 0 {
                return Some(k);
            }
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
                    t if moved_half_vector(t).is_some() => Some(Expr::ZeroInit(None)),
                    DataType::Vector(..) => {
                        let (s, lanes) = vector_elem_lanes(&leaf.elem)?;
                        let zeros = Expr::VectorLit(elem.clone(), vec![zero(s); lanes as usize]);
                        Some(Expr::ZeroInit(Some(Box::new(zeros))))
                    }
                    DataType::Pair(..) => Some(Expr::ZeroInit(None)),
                    _ => None,
                };
                decls.push(Stmt::Decl(decl(elem, &name, None, init)));
                continue;
            };
            indexed.insert(leaf.suffix.clone());
            let leaf_bytes = data_bytes(&leaf.elem)?;
            let bytes = count
                .as_cst()
                .and_then(|c| u64::try_from(c).ok())
                .map(|c| (c, c.saturating_mul(leaf_bytes)));
            match bytes {
                // the kernel's local memory is laid out, and checked against the device's,
                // once the kernel is lowered (`crate::local_memory`)
                Some((c, b)) if *addr == AddrSpace::Local => {
                    decls.push(Stmt::Comment(format!("{name}: {} (local)", show_type(&ty))));
                    let mut d = decl(elem, &name, Some(c.max(1)), None);
                    d.addr = ast::AddrSpace::Local;
                    decls.push(Stmt::Decl(d));
                    self.local_arrays.insert(name.clone(), b.max(leaf_bytes));
                }
                None if *addr == AddrSpace::Local => {
                    return unsupported(format!(
                        "`{}` (local memory of type {}) needs a size known at compile time",
                        ident.name,
                        show_type(&ty)
                    ))
                }
                Some((c, b)) if b <= STACK_LIMIT => {
                    let place = if self.gpu() { "private" } else { "stack" };
                    decls.push(Stmt::Comment(format!("{name}: {} ({place})", show_type(&ty))));
                    decls.push(Stmt::Decl(decl(elem, &name, Some(c.max(1)), None)));
                }
                _ if self.gpu() => {
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
                    // Aligned to HEAP_ALIGN (malloc's 16 bytes are too few for the 32- and
                    // 64-byte vector types: their loads and stores fault), in whole multiples
                    // of it as C11 requires, never empty: (size / 64 + 1) * 64.
                    let align = Expr::Int(HEAP_ALIGN);
                    let blocks = Expr::binary(
                        BinOp::Add,
                        Expr::binary(BinOp::Div, size, align.clone()),
                        Expr::Int(1),
                    );
                    let init = Expr::call(
                        "aligned_alloc",
                        vec![align.clone(), Expr::binary(BinOp::Mul, blocks, align)],
                    );
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
            aligned: self.gpu() && *addr == AddrSpace::Local,
            shared: self.gpu() && *addr == AddrSpace::Local,
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

    pub(super) fn mem_place(&self, id: &Ident, path: &[PathElem], write: bool) -> Res<MemPlace> {
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
            shared: mem.shared,
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
            let mut indices = self.register_indices.borrow_mut();
            for step in &path[k..] {
                if let PathElem::Idx(i) = step {
                    indices.extend(i.free_vars().iter().map(|v| v.name().to_string()));
                }
            }
            Ok(&path[k..])
        } else {
            *self.undistributable.borrow_mut() = Some(name.to_string());
            unsupported(format!(
                "`{name}` is accessed at {} outside its work-item's part",
                show_path(path)
            ))
        }
    }

    pub(super) fn place_expr(&self, env: &Env, p: &MemPlace) -> Res<Expr> {
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
            if let Some(half) = scalar_of(&p.place.ty)?.filter(|s| s.is_half()) {
                // a lane of a vector of 16-bit floats (moved whole, in CUDA): its element
                // through a pointer to the vector's first
                let ptr = Type::ptr(Type::Scalar(half));
                let first = Expr::unary(ast::UnOp::AddrOf, e).cast(ptr);
                return Ok(first.index(self.nat(env, l)?));
            }
            e = match (self.target, l.as_cst()) {
                (t, _) if !t.is_gpu() => e.index(self.nat(env, l)?),
                (_, Some(k)) if (0..16).contains(&k) => e.lane(k as u32),
                _ => {
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
}

impl MemPlace {
    /// The place `k` elements further (of an indexed array).
    pub(super) fn at(&self, k: i64) -> MemPlace {
        let mut q = self.clone();
        q.place.flat = Some(q.place.flat.as_ref().map_or(Nat::cst(k), |f| f + k));
        q
    }
}

fn decl(ty: Type, name: &str, array_len: Option<u64>, init: Option<Expr>) -> Decl {
    Decl {
        ty,
        name: name.to_string(),
        array_len,
        init,
        addr: ast::AddrSpace::Default,
        align: None,
    }
}

/// The most bytes one element of flat data takes on any target (for the limits of stack and
/// local memory): its layout with vectors aligned to their size and 64-bit indices (the index
/// type of a GPU run may be 64-bit).
fn data_bytes(dt: &DataType) -> Res<u64> {
    Ok(abi::gpu_layout(dt, abi::IndexWidth::Bits64)?.size)
}

/// `ty` without its `k` outer array dimensions.
fn strip_dims(ty: &DataType, k: usize) -> DataType {
    match ty {
        DataType::Array(_, e) if k > 0 => strip_dims(e, k - 1),
        t => t.clone(),
    }
}

/// Zero of a scalar type, as a literal of that type.
pub(super) fn zero(s: Scalar) -> Expr {
    match s {
        Scalar::Float | Scalar::Double => Expr::Float {
            value: 0.0,
            single: s == Scalar::Float,
        },
        Scalar::Int => Expr::Int(0),
        s => Expr::Int(0).cast(Type::Scalar(s)),
    }
}

/// The constant sizes of the two outermost dimensions of `t` (`None` where there is none).
fn leading_sizes(t: &DataType) -> [Option<i64>; 3] {
    let mut sizes = [None; 3];
    let mut t = t;
    for size in &mut sizes {
        let DataType::Array(n, e) = t else { break };
        *size = n.as_cst();
        t = e;
    }
    sizes
}

/// Private memory that every thread of a GPU kernel keeps whole, written inside a loop whose
/// iterations are spread over threads (`mapLocal`, `mapWarp`, `mapLane`, `mapGlobal`): each
/// thread writes only the elements of its own iterations, so the memory may be read only
/// inside that loop (where the iteration reads what it wrote); read anywhere else, a thread
/// would read elements another thread wrote into *its* private memory. An error then.
fn written_by_its_readers(name: &str, body: &Comm) -> Res<()> {
    let mut uses = PrivateUses::default();
    uses.collect(name, body, &mut Vec::new());
    let Some((writer, origin)) = uses.parallel_writes.first().cloned() else {
        return Ok(());
    };
    let outside = uses.parallel_writes.iter().any(|(w, _)| *w != writer)
        || uses.reads.iter().any(|loops| !loops.contains(&writer));
    if outside {
        return unsupported(format!(
            "`{name}` (a `toMem private`) is private memory written inside a `{origin}` loop, whose iterations \
             run on different threads, each writing its own elements into its own copy, and \
             it is read outside that loop, where a thread would need elements of other \
             threads: keep it in local memory (`toMem local`) so that the threads share it, \
             or read it inside the loop that writes it"
        ));
    }
    Ok(())
}

/// The lane loops of a warp's collective operations, whose lanes end with what they read: a
/// warp reduction's butterfly leaves every lane the result, a warp scan's steps leave lane
/// `l` its element `l`, a tensor-core multiply's lane keeps its own row of the accumulator.
fn is_collective(origin: &str) -> bool {
    origin == rise::Prim::ReduceWarp.name()
        || origin == rise::Prim::ScanWarp.name()
        || origin == rise::Prim::MmaSync.name()
        || origin == rise::Prim::Wgmma.name()
}

/// Where a private memory is written and read: the thread-parallel loops around each access.
#[derive(Default)]
struct PrivateUses {
    /// The innermost thread-parallel loop (variable, primitive) around each write inside one.
    parallel_writes: Vec<(String, &'static str)>,
    /// The thread-parallel loop variables around each read.
    reads: Vec<Vec<String>>,
}

impl PrivateUses {
    fn collect(&mut self, name: &str, c: &Comm, loops: &mut Vec<(String, &'static str)>) {
        match c {
            Comm::For {
                var,
                kind: LoopKind::Gpu(level),
                origin,
                body,
                ..
            } if !matches!(level, ParLevel::WorkGroup(_)) && !is_collective(origin) => {
                loops.push((var.name().to_string(), origin));
                self.collect(name, body, loops);
                loops.pop();
            }
            Comm::For { body, .. }
            | Comm::New { body, .. }
            | Comm::IfLess { body, .. }
            | Comm::AsyncCopy(body) => self.collect(name, body, loops),
            Comm::NatLet { value, body, .. } => {
                let mut reads = Vec::new();
                dpia::query::exp_reads(value, &mut reads);
                if reads.iter().any(|r| r == name) {
                    self.reads
                        .push(loops.iter().map(|(v, _)| v.clone()).collect());
                }
                self.collect(name, body, loops)
            }
            Comm::Seq(cs) => cs.iter().for_each(|c| self.collect(name, c, loops)),
            Comm::Assign(acc, exp) => {
                let mut reads = Vec::new();
                dpia::query::exp_reads(exp, &mut reads);
                dpia::query::acc_reads(acc, &mut reads);
                if reads.iter().any(|r| r == name) {
                    self.reads
                        .push(loops.iter().map(|(v, _)| v.clone()).collect());
                }
                if dpia::query::acc_root(acc) == name {
                    if let Some(innermost) = loops.last() {
                        self.parallel_writes.push(innermost.clone());
                    }
                }
            }
            Comm::Skip | Comm::Barrier { .. } | Comm::AsyncCommit | Comm::AsyncWait(_) => {}
        }
    }
}
