//! Commands and loops: a DPIA command becomes statements. Sequential and
//! parallel loops become `for` loops (unrolled where asked, dropped or inlined
//! when they run no or one iteration), loops over GPU threads the grid-stride
//! loops of the kernel's dialect, and an assignment resolves the views of both
//! sides (see [`views`](super::views)).

use arith::{Nat, Var};
use dpia::{Acc, Comm, Exp, LoopKind, ParLevel};
use rise::DataType;

use super::vector::{contiguous, elem_index};
use super::views::Dest;
use super::{Env, Lowerer, Res};
use crate::ast::{self, BinOp, Decl, Expr, For, GpuIndex, Pragma, Scalar, Stmt, Type, UnOp};
use crate::ctypes::scalar_of;
use crate::error::{malformed, unsupported};
use crate::layout::{show_type, PathElem};

/// Why C and OpenMP refuse `scanLookback`.
pub(super) const SCAN_LOOKBACK_ON_A_CPU: &str =
    "`scanLookback` is a single-pass scan of GPU work-groups that wait for one another \
     (atomics and a look-back): compile for OpenCL or CUDA (--target opencl / cuda), or scan \
     with scanSeq on a CPU";

impl Lowerer {
    pub(super) fn comm(&mut self, env: &Env, c: &Comm, out: &mut Vec<Stmt>) -> Res<()> {
        match c {
            Comm::Skip => Ok(()),
            Comm::Seq(cs) => cs.iter().try_for_each(|c| self.comm(env, c, out)),
            Comm::Assign(acc, exp) if matches!(*exp.kind, dpia::ExpKind::Wgmma(_)) => {
                self.wgmma_assign(env, acc, exp, out)
            }
            Comm::Assign(acc, exp)
                if matches!(
                    *exp.kind,
                    dpia::ExpKind::Ticket(_) | dpia::ExpKind::LookBack(_)
                ) =>
            {
                self.lookback_assign(env, acc, exp, out)
            }
            Comm::Assign(acc, exp) => self.assign(env, acc, exp, out),
            Comm::NatLet { var, value, body } => self.nat_let(env, var, value, body, out),
            Comm::Barrier {
                local,
                global,
                warp,
            } => {
                if !self.gpu() {
                    return malformed("a barrier in a program for a CPU");
                }
                if *warp && self.target != crate::Target::Cuda {
                    return malformed("a warp barrier in a program for OpenCL");
                }
                if *local && self.wgmma_kernel {
                    // what the threads wrote to local memory, seen by the warp groups'
                    // multiplies, which read it through the async proxy
                    out.push(Stmt::Expr(Expr::call(self.tensor.proxy_fence(), vec![])));
                }
                out.push(Stmt::Barrier {
                    local: *local,
                    global: *global,
                    warp: *warp,
                });
                Ok(())
            }
            Comm::New { ident, addr, body } => self.new_mem(env, ident, addr, body, out),
            Comm::IfLess { lhs, rhs, body } => self.if_less(env, (lhs, rhs), body, out),
            Comm::AsyncCopy(body) => {
                self.require_async_copies()?;
                self.async_copies = true;
                let lowered = self.comm(env, body, out);
                self.async_copies = false;
                lowered
            }
            Comm::AsyncCommit => {
                self.require_async_copies()?;
                let commit = self.tensor.cp_async_commit();
                out.push(Stmt::Expr(Expr::call(commit, Vec::new())));
                Ok(())
            }
            Comm::AsyncWait(pending) => {
                self.require_async_copies()?;
                let wait = self.tensor.cp_async_wait(*pending);
                out.push(Stmt::Expr(Expr::call(&wait, Vec::new())));
                Ok(())
            }
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
            return self.unrolled_loop(env, (var, &count), origin, body, out);
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
        let inner = self.loop_scope(env, var, &count, &name);
        let mut stmts = Vec::new();
        self.comm(&inner, body, &mut stmts)?;
        out.push(Stmt::Comment(origin.to_string()));
        let pragma = self.loop_pragma(kind, &count, &name);
        out.push(Stmt::For(For {
            var: name,
            start: Expr::Int(0),
            end: self.nat(env, &count)?,
            step: Expr::Int(1),
            body: stmts,
            pragma,
        }));
        Ok(())
    }

    /// The pragma of a sequential or parallel loop over the C variable `name`: OpenMP's for
    /// a parallel loop; on a GPU, unrolling for a loop of constant count that indexes
    /// registers (a thread's part of distributed private memory), which a dynamic index
    /// would move to local memory.
    fn loop_pragma(&self, kind: LoopKind, count: &Nat, name: &str) -> Option<Pragma> {
        if kind == LoopKind::Par {
            return Some(Pragma::ParallelFor);
        }
        let registers = self.register_indices.borrow().contains(name);
        (self.gpu() && count.as_cst().is_some() && registers).then_some(Pragma::Unroll)
    }

    /// The environment of a loop's body: the loop variable `var` renamed to the C
    /// variable `name`, ranging over `0..count`, one level deeper than the loops around it.
    pub(super) fn loop_scope(&mut self, env: &Env, var: &Var, count: &Nat, name: &str) -> Env {
        let depth = env
            .scope
            .iter()
            .filter_map(|v| self.depth.get(v))
            .max()
            .map_or(1, |d| d + 1);
        self.depth.insert(name.to_string(), depth);
        let renamed = Var::with_range(name, Nat::cst(0), count.clone());
        env.bind(var, Nat::var(&renamed)).with_scope(name)
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
        if origin == rise::Prim::MmaSync.name() && self.target != crate::Target::Cuda {
            return unsupported(format!(
                "`{origin}` runs on NVIDIA tensor cores (mma.sync): compile for CUDA (--target \
                 cuda); {} has no warp-level matrix instructions shine uses",
                self.target
            ));
        }
        if !self.gpu() && origin == rise::Prim::ScanLookback.name() {
            return unsupported(SCAN_LOOKBACK_ON_A_CPU);
        }
        if !self.gpu() {
            return unsupported(format!(
                "`{origin}` distributes its iterations over GPU threads; compile for OpenCL or CUDA \
                 (--target opencl / cuda), or lower the map with mapSeq or mapPar"
            ));
        }
        if count.as_cst().is_some_and(|c| c <= 0) {
            out.push(Stmt::Comment(format!("{origin} (no iterations)")));
            return Ok(());
        }
        if matches!(level, ParLevel::Warp | ParLevel::Lane | ParLevel::WarpGroup) {
            return self.warp_loop(env, var, count, level, origin, body, out);
        }
        let (id, size, base) = match level {
            ParLevel::Global(_) => (GpuIndex::GlobalId, GpuIndex::GlobalSize, "gid"),
            ParLevel::WorkGroup(_) => (GpuIndex::GroupId, GpuIndex::NumGroups, "wg"),
            _ => (GpuIndex::LocalId, GpuIndex::LocalSize, "lid"),
        };
        let dim = level.dim();
        let name = self.names.fresh(&format!("{base}{dim}"));
        let inner = self.loop_scope(env, var, count, &name);
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
                    align: None,
                }),
                Stmt::If(cond, stmts, vec![]),
            ]));
            return Ok(());
        }
        if self.thread_vars.contains_key(&name) {
            // As many iterations as the work-group has threads in this dimension: every
            // thread runs exactly one, its own (the launch has exactly that many threads,
            // `GpuKernel::exact_threads`). No loop: fewer registers live across the body.
            own_iteration(origin, "work-item", name, Expr::Gpu(id, dim), stmts, out);
            return Ok(());
        }
        let end = self.nat(env, count)?;
        strided(
            origin,
            name,
            (Expr::Gpu(id, dim), end, Expr::Gpu(size, dim)),
            stmts,
            out,
        );
        Ok(())
    }

    /// A loop over the warps of a work-group (`mapWarp`: warp `w` runs the iterations
    /// `w, w + warps, ...`, or exactly its own where there are as many as warps), over the
    /// 32 lanes of a warp (`mapLane`: lane `l` runs the iterations `l`, `l + 32`,
    /// ..., or exactly its own where there are 32), over the warp groups of a work-group
    /// (`mapWarpGroup`: 128 threads each), or inside a warp group over its 4 warps
    /// (`mapWarp` there). CUDA only: OpenCL would need sub-groups.
    #[allow(clippy::too_many_arguments)]
    fn warp_loop(
        &mut self,
        env: &Env,
        var: &Var,
        count: &Nat,
        level: ParLevel,
        origin: &str,
        body: &Comm,
        out: &mut Vec<Stmt>,
    ) -> Res<()> {
        if self.target != crate::Target::Cuda {
            return unsupported(format!(
                "`{origin}` runs on the warps of a CUDA block: compile for CUDA (--target cuda); \
                 OpenCL would need sub-groups (cl_khr_subgroups), which shine does not use yet"
            ));
        }
        self.warp_loops = true;
        let warps = self.threads[0].map(|t| t / 32);
        let div = |a: GpuIndex, b: i64| Expr::binary(BinOp::Div, Expr::Gpu(a, 0), Expr::Int(b));
        // the thread's id, the step, the count of one iteration per thread, the dimension
        let (base, id, step, own_count, dim) = match level {
            ParLevel::Lane => (
                "lane",
                Expr::Gpu(GpuIndex::LaneId, 0),
                Expr::Int(32),
                Some(32),
                super::LANE_DIM,
            ),
            ParLevel::WarpGroup => (
                "group",
                div(GpuIndex::LocalId, 128),
                div(GpuIndex::LocalSize, 128),
                warps.map(|w| w / 4).filter(|g| *g > 0),
                super::GROUP_DIM,
            ),
            _ if self.warp_group => (
                "warp",
                Expr::binary(BinOp::Mod, Expr::Gpu(GpuIndex::WarpId, 0), Expr::Int(4)),
                Expr::Int(4),
                Some(4),
                super::GROUP_WARP_DIM,
            ),
            _ => (
                "warp",
                Expr::Gpu(GpuIndex::WarpId, 0),
                Expr::Gpu(GpuIndex::NumWarps, 0),
                warps,
                super::WARP_DIM,
            ),
        };
        let name = self.names.fresh(base);
        let inner = self.loop_scope(env, var, count, &name);
        let own = count.as_cst().is_some() && count.as_cst() == own_count;
        if own {
            // the thread's own warp group, warp or lane: it may index its part of
            // distributed private memory
            self.thread_vars.insert(name.clone(), dim);
        }
        let mut stmts = Vec::new();
        let mma = level == ParLevel::Lane && origin == rise::Prim::MmaSync.name();
        let outer_lane = if mma {
            self.mma_lane.replace(Var::new(name.as_str()))
        } else {
            self.mma_lane.clone()
        };
        let outer_group = self.warp_group;
        self.warp_group |= level == ParLevel::WarpGroup;
        let lowered = self.comm(&inner, body, &mut stmts);
        self.mma_lane = outer_lane;
        self.warp_group = outer_group;
        lowered?;
        if own {
            own_iteration(origin, base, name, id, stmts, out);
            return Ok(());
        }
        let end = self.nat(env, count)?;
        strided(origin, name, (id, end, step), stmts, out);
        Ok(())
    }

    /// Whether some `mapLocal` loop was lowered to one iteration per work-item, or the
    /// kernel has warp loops: it must then be launched with exactly its work-group size.
    pub fn exact_threads(&self) -> bool {
        !self.thread_vars.is_empty() || self.warp_loops
    }

    /// `body` where `lhs < rhs`: as it is where that is proven, nothing where the opposite
    /// is, an `if` otherwise.
    fn if_less(
        &mut self,
        env: &Env,
        (lhs, rhs): (&Nat, &Nat),
        body: &Comm,
        out: &mut Vec<Stmt>,
    ) -> Res<()> {
        let (lhs, rhs) = (env.nat(lhs), env.nat(rhs));
        if lhs.prove_lt(&rhs) {
            return self.comm(env, body, out);
        }
        if rhs.prove_le(&lhs) {
            return Ok(());
        }
        let mut then = Vec::new();
        self.comm(env, body, &mut then)?;
        let cond = Expr::binary(BinOp::Lt, self.nat(env, &lhs)?, self.nat(env, &rhs)?);
        out.push(Stmt::If(cond, then, Vec::new()));
        Ok(())
    }

    /// Asynchronous copies are CUDA's (`cp.async`, compute capability 8.0 or newer).
    fn require_async_copies(&self) -> Res<()> {
        if self.target != crate::Target::Cuda {
            return unsupported(
                "`reduceSeqPipelined` copies to local memory asynchronously (`cp.async`): \
                 compile for CUDA (--target cuda), or use reduceSeq",
            );
        }
        Ok(())
    }

    /// `acc := exp` as one asynchronous copy of 4, 8 or 16 bytes from global to local
    /// memory: `exp` reads one element (or one aligned vector) of global memory and `acc`
    /// is local memory.
    fn async_assign(&mut self, env: &Env, acc: &Acc, exp: &Exp, out: &mut Vec<Stmt>) -> Res<()> {
        let what = |why: &str| {
            unsupported::<()>(format!(
                "`reduceSeqPipelined` copies its tiles with `cp.async`, which {why}: the copy \
                 `{acc} := {exp}` does not"
            ))
        };
        let bytes = crate::abi::size_of(&acc.ty, crate::abi::IndexWidth::Bits32).unwrap_or(0);
        if !matches!(bytes, 4 | 8 | 16) {
            return what("moves 4, 8 or 16 bytes at a time (copy vectors: asVector)");
        }
        let mut reads = Vec::new();
        dpia::query::exp_reads(exp, &mut reads);
        if reads.iter().any(|r| !self.is_global(r)) {
            return what("reads global memory");
        }
        let dest = self.dest(env, acc, &[])?;
        if !self.write_indices.is_empty() {
            self.write_indices.clear();
            return what("writes at indices known before it runs, not read from data (`scatter`)");
        }
        let Dest::Mem(place) = dest else {
            return what("writes whole elements of local memory");
        };
        if !place.shared {
            return what("writes local memory");
        }
        let source = match self.value(env, exp, &[])? {
            Expr::VectorLoad(access) if access.ty.is_some() => access.first,
            read @ Expr::Index(..) => read,
            _ => return what("reads one element or one aligned vector of global memory"),
        };
        let dest = self.place_expr(env, &place)?;
        let copy = self.tensor.cp_async(bytes);
        out.push(Stmt::Expr(Expr::call(
            copy,
            vec![
                Expr::unary(UnOp::AddrOf, dest),
                Expr::unary(UnOp::AddrOf, source),
            ],
        )));
        Ok(())
    }

    fn assign(&mut self, env: &Env, acc: &Acc, exp: &Exp, out: &mut Vec<Stmt>) -> Res<()> {
        if self.async_copies {
            return self.async_assign(env, acc, exp, out);
        }
        let is_value = scalar_of(&acc.ty)?.is_some() || matches!(acc.ty, DataType::Vector(..));
        if !is_value {
            return malformed(format!(
                "an assignment of data of type {} (only scalars and vectors are assigned)",
                show_type(&acc.ty)
            ));
        }
        let mut stmts = Vec::new();
        let vector = self.assign_to(env, acc, exp, &mut stmts)?;
        if vector && !self.write_indices.is_empty() {
            self.write_indices.clear();
            return unsupported(
                "a vector written at an index read from data (`scatter`): write it lane by lane",
            );
        }
        out.extend(self.guarded(stmts));
        Ok(())
    }

    /// The statements of `acc := exp`; whether a whole vector is written.
    fn assign_to(&mut self, env: &Env, acc: &Acc, exp: &Exp, out: &mut Vec<Stmt>) -> Res<bool> {
        match self.dest(env, acc, &[])? {
            Dest::Mem(p) => {
                let lhs = self.place_expr(env, &p)?;
                out.push(Stmt::Assign(lhs, self.value(env, exp, &[])?));
                Ok(false)
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
                        if let Some(access) = self.vector_access(&aenv, &first, &vty)? {
                            let v = self.value(env, exp, &[])?;
                            out.push(Stmt::VectorStore(access, v));
                            return Ok(true);
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
                Ok(true)
            }
        }
    }
}

/// A parallel loop of which every thread (`each`: work-item, warp, lane) runs exactly one
/// iteration, its own, the one `id` names: a block declaring the loop variable, no loop.
fn own_iteration(
    origin: &str,
    each: &str,
    name: String,
    id: Expr,
    stmts: Vec<Stmt>,
    out: &mut Vec<Stmt>,
) {
    out.push(Stmt::Comment(format!(
        "{origin} (one iteration per {each})"
    )));
    let mut block = vec![Stmt::Decl(Decl {
        ty: Type::Scalar(Scalar::Index),
        name,
        array_len: None,
        init: Some(id),
        addr: ast::AddrSpace::Default,
        align: None,
    })];
    block.extend(stmts);
    out.push(Stmt::Block(block));
}

/// A parallel loop whose thread runs the iterations `start, start + step, ...` below `end`.
fn strided(
    origin: &str,
    var: String,
    (start, end, step): (Expr, Expr, Expr),
    body: Vec<Stmt>,
    out: &mut Vec<Stmt>,
) {
    out.push(Stmt::Comment(origin.to_string()));
    out.push(Stmt::For(For {
        var,
        start,
        end,
        step,
        body,
        pragma: None,
    }));
}
