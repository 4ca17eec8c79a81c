//! Imperative DPIA for GPUs: the kernel/host split and the passes a kernel needs
//! (RISE & Shine §V-C and §VI; the parallel hierarchy of Listing 8's
//! `parForWorkGroup` and Listing 10's `parForLocal`).
//!
//! [`prepare`] turns a translated [`Program`] into a [`GpuProgram`]:
//! 1. **Global allocations move to the host** ([`crate::hoist`]): every global
//!    `new` becomes a *temporary* buffer the host allocates before the first
//!    kernel, expanded by the parallel loops around it.
//! 2. **Kernel/host split**: the top-level commands that remain are run one after
//!    another by the host; each one with parallel loops becomes a kernel of its
//!    own (the end of a kernel is the only point where all work-groups have
//!    finished), consecutive ones without are one single-thread kernel.
//! 3. **Launch configuration**: a kernel's loops say how it is launched. A kernel of
//!    `mapGlobal(d)` loops needs as many work-items in dimension `d` as its largest
//!    such loop has iterations ([`Launch::Global`]); a kernel of `mapWorkGroup(d)`
//!    and `mapLocal(d)` loops as many work-groups as its largest `mapWorkGroup(d)`
//!    loop and as many threads per work-group as its largest `mapLocal(d)` loop
//!    ([`Launch::Groups`]). Every loop is printed as a loop over the threads of its
//!    level (`for (i = get_local_id(0); i < n; i += get_local_size(0))`), so the
//!    code is correct with fewer threads too; only barriers rely on the exact
//!    number of threads per work-group.
//! 4. **Checks**: a kernel mixes no `mapGlobal` with `mapWorkGroup`/`mapLocal`
//!    loops, nests no level inside itself or a work-group loop inside a thread
//!    loop, and writes local or global memory only inside the loops that spread
//!    its threads (otherwise every thread would write the same memory at once).
//! 5. **Local and private allocations move to the top of the kernel**
//!    ([`crate::hoist`]): local memory (expanded by the `mapLocal` loops around
//!    it) and private arrays.
//! 6. **Barriers** ([`crate::barriers`]) where threads communicate, and the
//!    rejection of a barrier in divergent control flow.
//!
//! `mapPar` (CPU threads) in a GPU program is an error: it says to run on a CPU.
//!
//! **Warps** (CUDA): `mapWarp` loops sit inside work-group loops and outside thread
//! loops, `mapLane` loops inside `mapWarp` loops (lane `l` runs the iterations `l`,
//! `l + 32`, ...: one each for 32 iterations); a kernel
//! with them has work-groups of a constant multiple of 32 threads in dimension 0
//! only (a constant-count `mapWarp` loop asks for 32 threads per iteration). A warp
//! shuffle (`reduceWarp`) must sit inside a `mapWarp` loop and outside `mapLocal`,
//! `mapGlobal` and `mapLane` loops, so that all 32 lanes of its warp reach it
//! together. The lanes of a warp may write the same value to the same place (a warp
//! reduction's result).

use std::collections::HashMap;

use crate::barriers;
pub use crate::error::GpuError;
use crate::hoist::{hoist, Expand};
use crate::imperative::*;
use crate::limits::MAX_ITERATE_STEPS;
use crate::query::{acc_root, free_in_type, has_gpu_loop};
use crate::walk::Node;
use arith::{Nat, Var};
use rise::{AddrSpace, DataType};

/// The most threads a work-group may have (CUDA's limit; NVIDIA's OpenCL has the same).
pub const MAX_WORK_GROUP_SIZE: i64 = 1024;

/// How a kernel is launched, in terms of the program's sizes.
#[derive(Clone, Debug, PartialEq)]
pub enum Launch {
    /// One work-item (the kernel has no parallel loop).
    Single,
    /// At least this many work-items in each dimension (`mapGlobal` loops); how they
    /// are grouped is the host's choice. Unused dimensions are 1.
    Global([Nat; 3]),
    /// This many work-groups of this many threads in each dimension (`mapWorkGroup`
    /// and `mapLocal` loops). Unused dimensions are 1.
    Groups {
        /// The number of work-groups (thread blocks).
        groups: [Nat; 3],
        /// The number of threads of a work-group (a block).
        threads: [Nat; 3],
    },
}

/// One kernel: what one launch runs.
#[derive(Clone, Debug, PartialEq)]
pub struct Kernel {
    /// The kernel's name (a C identifier).
    pub name: String,
    /// Its body: local memory and private arrays allocated first (`new` at the top),
    /// then the loops, with barriers.
    pub body: Comm,
    /// How it is launched.
    pub launch: Launch,
}

/// A program split into kernels the host runs one after another.
#[derive(Clone, Debug, PartialEq)]
pub struct GpuProgram {
    /// The program's name.
    pub name: String,
    /// The sizes, in the order of the definition's binders.
    pub sizes: Vec<Var>,
    /// The output (global memory).
    pub output: Ident,
    /// The inputs (global memory, read only).
    pub inputs: Vec<Ident>,
    /// Global memory the host allocates for the kernels' intermediate results.
    pub temporaries: Vec<Ident>,
    /// The kernels, in the order they run.
    pub kernels: Vec<Kernel>,
}

/// Splits `p` into kernels and prepares each for a GPU (see the module docs).
pub fn prepare(p: &Program) -> Result<GpuProgram, GpuError> {
    reject_cpu_loops(&p.body)?;
    let (temps, body) = hoist(
        run_time_sized_private_to_global(p.body.clone()),
        &|_, a| *a == AddrSpace::Global,
        &|kind, _, _| {
            Ok(if matches!(kind, LoopKind::Gpu(_)) {
                Expand::Yes
            } else {
                Expand::No
            })
        },
    )?;
    let mut temporaries = Vec::new();
    for (ident, _) in temps {
        if let Some(v) = free_in_type(&ident.ty)
            .iter()
            .find(|v| !p.sizes.contains(v))
        {
            return Err(GpuError::new(
                format!(
                    "the size of the global memory `{}` ({}) depends on `{v}`, which the host does not know",
                    ident.name, ident.ty
                ),
                None,
            ));
        }
        temporaries.push(ident);
    }

    let mut items = Vec::new();
    flatten(body, &mut items);
    let items = expand_kernel_loops(items)?;
    let mut groups: Vec<Vec<Comm>> = Vec::new();
    let mut last_parallel = true;
    for item in items {
        let parallel = has_gpu_loop(&item);
        if parallel || last_parallel {
            groups.push(vec![item]);
        } else if let Some(g) = groups.last_mut() {
            g.push(item);
        }
        last_parallel = parallel;
    }

    let mut spaces: HashMap<String, AddrSpace> = HashMap::new();
    spaces.insert(p.output.name.clone(), AddrSpace::Global);
    for i in p.inputs.iter().chain(&temporaries) {
        spaces.insert(i.name.clone(), AddrSpace::Global);
    }
    let count = groups.len();
    let mut kernels = Vec::new();
    for (k, items) in groups.into_iter().enumerate() {
        let name = if count == 1 {
            p.name.clone()
        } else {
            format!("{}_k{k}", p.name)
        };
        let body = if items.len() == 1 {
            items.into_iter().next().unwrap_or(Comm::Skip)
        } else {
            Comm::Seq(items)
        };
        kernels.push(kernel(name, body, &p.sizes, &spaces)?);
    }
    Ok(GpuProgram {
        name: p.name.clone(),
        sizes: p.sizes.clone(),
        output: p.output.clone(),
        inputs: p.inputs.clone(),
        temporaries,
        kernels,
    })
}

/// `c` with every private array whose size is known only at run time (the accumulator of
/// a reduction over rows of `n` elements) in global memory instead: a GPU's private memory
/// needs a constant size, so the host allocates it, one part per work-item (the hoisting
/// that follows expands it by the parallel loops around it, as any global memory).
fn run_time_sized_private_to_global(c: Comm) -> Comm {
    match c {
        Comm::New { ident, addr, body } => {
            let run_time_sized = addr == AddrSpace::Private
                && matches!(ident.ty, DataType::Array(..))
                && !free_in_type(&ident.ty).is_empty();
            Comm::New {
                ident,
                addr: if run_time_sized {
                    AddrSpace::Global
                } else {
                    addr
                },
                body: Box::new(run_time_sized_private_to_global(*body)),
            }
        }
        Comm::Seq(cs) => Comm::Seq(
            cs.into_iter()
                .map(run_time_sized_private_to_global)
                .collect(),
        ),
        Comm::For {
            var,
            count,
            kind,
            origin,
            body,
        } => Comm::For {
            var,
            count,
            kind,
            origin,
            body: Box::new(run_time_sized_private_to_global(*body)),
        },
        Comm::IfLess { lhs, rhs, body } => Comm::IfLess {
            lhs,
            rhs,
            body: Box::new(run_time_sized_private_to_global(*body)),
        },
        Comm::AsyncCopy(body) => Comm::AsyncCopy(Box::new(run_time_sized_private_to_global(*body))),
        Comm::NatLet { var, value, body } => Comm::NatLet {
            var,
            value,
            body: Box::new(run_time_sized_private_to_global(*body)),
        },
        c @ (Comm::Skip
        | Comm::Assign(..)
        | Comm::Barrier { .. }
        | Comm::AsyncCommit
        | Comm::AsyncWait(_)) => c,
    }
}

/// What the loops of a kernel are.
#[derive(Default)]
struct Shape {
    global: [Vec<Nat>; 3],
    group: [Vec<Nat>; 3],
    local: [Vec<Nat>; 3],
    /// The kernel has `mapWarp` or `mapLane` loops.
    warps: bool,
}

fn kernel(
    name: String,
    body: Comm,
    sizes: &[Var],
    spaces: &HashMap<String, AddrSpace>,
) -> Result<Kernel, GpuError> {
    let mut shape = Shape::default();
    levels(&body, &mut Vec::new(), sizes, &mut shape)?;
    let has = |v: &[Vec<Nat>; 3]| v.iter().any(|c| !c.is_empty());
    let max = |counts: &[Nat]| -> Nat {
        counts
            .iter()
            .cloned()
            .reduce(|a, b| Nat::max(&a, &b))
            .unwrap_or_else(|| Nat::cst(1))
    };
    let launch = if has(&shape.global) {
        if has(&shape.group) || has(&shape.local) {
            return Err(GpuError::new(
                format!(
                    "the kernel `{name}` mixes `mapGlobal` loops with `mapWorkGroup`/`mapLocal` loops"
                ),
                Some("use either mapGlobal, or mapWorkGroup with mapLocal, in one kernel"),
            ));
        }
        Launch::Global([0, 1, 2].map(|d| max(&shape.global[d])))
    } else if has(&shape.group) || has(&shape.local) {
        let threads = [0, 1, 2].map(|d| max(&shape.local[d]));
        let constant: Option<Vec<i64>> = threads.iter().map(Nat::as_cst).collect();
        if let Some(c) = constant {
            let total: i64 = c.iter().product();
            if total > MAX_WORK_GROUP_SIZE {
                return Err(GpuError::new(
                    format!(
                        "the `mapLocal` loops of the kernel `{name}` need work-groups of {} = {total} \
                         threads, more than the {MAX_WORK_GROUP_SIZE} a GPU runs",
                        c.iter().map(i64::to_string).collect::<Vec<_>>().join(" x ")
                    ),
                    Some("split the mapLocal loops so that each has fewer iterations (split n, then mapLocal and mapSeq)"),
                ));
            }
        }
        Launch::Groups {
            groups: [0, 1, 2].map(|d| max(&shape.group[d])),
            threads,
        }
    } else {
        Launch::Single
    };
    if shape.warps {
        check_whole_warps(&name, &launch)?;
    }

    // Every thread would write memory outside the loops that spread the threads.
    let thread_dims: Vec<(u8, &'static str)> = (0..3u8)
        .filter_map(|d| {
            let d_us = usize::from(d);
            if !shape.global[d_us].is_empty() {
                Some((d, "mapGlobal"))
            } else if !shape.local[d_us].is_empty() {
                Some((d, "mapLocal"))
            } else {
                None
            }
        })
        .collect();

    // Local memory and private arrays to the top of the kernel.
    let (allocs, body) = hoist(
        body,
        &|ident, addr| match addr {
            AddrSpace::Local => true,
            AddrSpace::Private => matches!(ident.ty, DataType::Array(..)),
            _ => false,
        },
        &|kind, addr, origin| match (kind, addr) {
            (
                LoopKind::Gpu(ParLevel::Local(_) | ParLevel::Warp | ParLevel::Lane),
                AddrSpace::Local,
            ) => Ok(Expand::Yes),
            (LoopKind::Gpu(ParLevel::Global(_)), AddrSpace::Local) => Err(GpuError::new(
                format!(
                    "local memory inside the `{origin}` loop: the work-items of a `mapGlobal` \
                     kernel form no work-groups that could share it"
                ),
                Some("use mapWorkGroup and mapLocal, or private or global memory"),
            )),
            _ => Ok(Expand::No),
        },
    )?;
    let mut spaces = spaces.clone();
    collect_spaces(&body, &mut spaces);
    for (ident, addr) in &allocs {
        spaces.insert(ident.name.clone(), addr.clone());
    }
    shared_writes(&body, &mut Vec::new(), &thread_dims, &spaces)?;
    let local_sizes = match &launch {
        Launch::Groups { threads, .. } => threads.clone().map(|t| t.as_cst()),
        _ => [Some(1); 3],
    };
    let body = barriers::insert(
        body,
        &barriers::Launch {
            spaces: &spaces,
            global_loops: matches!(launch, Launch::Global(_)),
            group_dims: [0, 1, 2].map(|d| !shape.group[d].is_empty()),
            local_sizes,
        },
    )?;
    let body = allocs
        .into_iter()
        .rev()
        .fold(body, |body, (ident, addr)| Comm::New {
            ident,
            addr,
            body: Box::new(body),
        });
    Ok(Kernel { name, body, launch })
}

/// Records the parallel loops of a kernel; checks how they nest.
fn levels(
    c: &Comm,
    stack: &mut Vec<(ParLevel, &'static str)>,
    sizes: &[Var],
    shape: &mut Shape,
) -> Result<(), GpuError> {
    match c {
        Comm::Assign(_, e) if has_shuffle(e) => check_collective_position(stack, shuffler(e)),
        Comm::Skip
        | Comm::Assign(..)
        | Comm::Barrier { .. }
        | Comm::AsyncCommit
        | Comm::AsyncWait(_) => Ok(()),
        Comm::Seq(cs) => cs.iter().try_for_each(|c| levels(c, stack, sizes, shape)),
        Comm::New { body, .. }
        | Comm::IfLess { body, .. }
        | Comm::AsyncCopy(body)
        | Comm::NatLet { body, .. } => levels(body, stack, sizes, shape),
        Comm::For {
            count,
            kind,
            origin,
            body,
            ..
        } => {
            let LoopKind::Gpu(level) = kind else {
                return levels(body, stack, sizes, shape);
            };
            let d = usize::from(level.dim());
            if matches!(*origin, "reduceWarp" | "scanWarp" | "mmaSync") {
                // the lane loop of a warp reduction or scan (its shuffles follow) or of a
                // tensor-core multiply (every lane runs it, together)
                check_collective_position(stack, origin)?;
            }
            if *origin == "wgmma" && *level == ParLevel::Warp {
                // the warp loop of a warp group's multiply (its 128 threads run it together)
                check_group_position(stack)?;
            }
            if let Some((_, outer)) = stack.iter().find(|(l, _)| misnested(*l, *level)) {
                return Err(GpuError::new(
                    format!("a `{origin}` loop inside a `{outer}` loop cannot be run on a GPU"),
                    Some("nest work-group loops outside thread loops, and each level and dimension once"),
                ));
            }
            if let Some(v) = count.free_vars().iter().find(|v| !sizes.contains(v)) {
                return Err(GpuError::new(
                    format!(
                        "the number of iterations of a `{origin}` loop ({count}) depends on `{v}`, \
                         so the launch cannot provide its threads"
                    ),
                    Some("parallel loops must have a number of iterations given by the program's sizes"),
                ));
            }
            let (list, threads) = match level {
                ParLevel::Global(_) => (&mut shape.global[d], Some(count.clone())),
                ParLevel::WorkGroup(_) => (&mut shape.group[d], Some(count.clone())),
                ParLevel::Local(_) => (&mut shape.local[d], Some(count.clone())),
                ParLevel::Warp | ParLevel::Lane | ParLevel::WarpGroup => {
                    shape.warps = true;
                    warp_level(*level, origin, stack)?;
                    (&mut shape.local[0], warp_threads(*level, count))
                }
            };
            if let Some(t) = threads.filter(|t| !list.contains(t)) {
                list.push(t);
            }
            stack.push((*level, origin));
            let r = levels(body, stack, sizes, shape);
            stack.pop();
            r
        }
    }
}

/// Whether a loop of `inner` may not sit inside a loop of `outer`: each level once,
/// work-groups outside threads, warps inside work-groups only, lanes inside warps.
fn misnested(outer: ParLevel, inner: ParLevel) -> bool {
    use ParLevel::*;
    outer == inner
        || matches!(
            (outer, inner),
            (Local(_) | Global(_) | Warp | Lane | WarpGroup, WorkGroup(_))
                | (Local(_) | Global(_) | Warp | Lane, WarpGroup)
                | (Local(_) | Global(_) | Lane, Warp)
                | (Local(_) | Global(_), Lane)
                | (Warp | Lane | WarpGroup, Local(_) | Global(_))
        )
}

/// Checks a `mapWarp` or `mapLane` loop: a lane loop sits inside a warp loop (but for a
/// warp reduction's, which every warp runs alike where it is outside every warp loop:
/// [`check_collective_position`]).
fn warp_level(
    level: ParLevel,
    origin: &str,
    stack: &[(ParLevel, &'static str)],
) -> Result<(), GpuError> {
    if level != ParLevel::Lane || origin == "reduceWarp" {
        return Ok(());
    }
    if !stack.iter().any(|(l, _)| *l == ParLevel::Warp) {
        return Err(GpuError::new(
            format!(
                "a `{origin}` loop outside every `mapWarp` loop: every warp of the work-group \
                 would run the same lanes"
            ),
            Some("put the lane loop inside a mapWarp loop"),
        ));
    }
    Ok(())
}

/// The threads per work-group that a `mapWarp` or `mapLane` loop of `count`
/// iterations asks for: 32 per warp (at most [`MAX_WORK_GROUP_SIZE`]) for a constant
/// count, a warp for the lanes; `None` for a warp loop of a count that is not a
/// constant (another loop of the kernel must give the work-group its size).
fn warp_threads(level: ParLevel, count: &Nat) -> Option<Nat> {
    match level {
        ParLevel::Lane => Some(Nat::cst(32)),
        ParLevel::WarpGroup => count
            .as_cst()
            .map(|c| Nat::cst((c.max(1) * 128).min(MAX_WORK_GROUP_SIZE))),
        _ => count
            .as_cst()
            .map(|c| Nat::cst((c.max(1) * 32).min(MAX_WORK_GROUP_SIZE))),
    }
}

/// Refuses a kernel with warp or lane loops whose work-groups are not whole warps
/// along dimension 0: a shuffle needs all 32 lanes of its warp, and warp `w` is the
/// threads `32*w .. 32*w + 31` of dimension 0.
fn check_whole_warps(name: &str, launch: &Launch) -> Result<(), GpuError> {
    let threads = match launch {
        Launch::Groups { threads, .. } => threads,
        _ => {
            return Err(GpuError::new(
                format!("the kernel `{name}` has `mapWarp` loops but no work-groups"),
                Some("put the mapWarp loops inside mapWorkGroup loops"),
            ))
        }
    };
    let whole = matches!(threads[0].as_cst(), Some(t) if t > 0 && t % 32 == 0)
        && threads[1].as_cst() == Some(1)
        && threads[2].as_cst() == Some(1);
    if whole {
        return Ok(());
    }
    Err(GpuError::new(
        format!(
            "the kernel `{name}` has `mapWarp`/`mapLane` loops, so its work-groups must be a \
             constant number of whole warps (a multiple of 32 threads) in dimension 0 only, but \
             they are {} x {} x {}",
            threads[0], threads[1], threads[2]
        ),
        Some("give the kernel's mapLocal(0) loops a multiple of 32 iterations, and no mapLocal(1) or mapLocal(2) loops"),
    ))
}

/// The primitive whose shuffle `e` holds: `scanWarp`'s shifts up, `reduceWarp`'s others.
fn shuffler(e: &Exp) -> &'static str {
    let mut up = false;
    Node::Exp(e).visit(&mut |n| {
        up |= matches!(n, Node::Exp(x) if matches!(*x.kind, ExpKind::Shuffle(_, Shuffle::Up(_))))
    });
    if up {
        "scanWarp"
    } else {
        "reduceWarp"
    }
}

/// Whether an expression moves values between lanes (a warp shuffle).
fn has_shuffle(e: &Exp) -> bool {
    let mut found = false;
    Node::Exp(e).visit(&mut |n| {
        found |= matches!(n, Node::Exp(x) if matches!(*x.kind, ExpKind::Shuffle(..)))
    });
    found
}

/// Refuses a warp shuffle or tensor-core multiply (`origin`: `reduceWarp`, `mmaSync`)
/// that not all 32 lanes of a warp may reach together: it must sit outside the loops
/// that spread the iterations over single threads (`mapLocal`, `mapGlobal`, `mapLane`),
/// whose bounds may leave some lanes out. A tensor-core multiply must sit inside a
/// `mapWarp` loop (whose iterations are the same for the lanes of a warp); a warp
/// reduction outside every `mapWarp` loop is every warp's (each computes the same value,
/// a work-group's all-reduce over values in local memory), and where it writes its
/// result to local or global memory, `shared_writes` refuses it.
fn check_collective_position(
    stack: &[(ParLevel, &'static str)],
    origin: &str,
) -> Result<(), GpuError> {
    let (what, help) = if origin == "mmaSync" {
        (
            "a tensor-core multiply (`mmaSync`)",
            Some(
                "put mmaSync inside a mapWarp loop, outside mapLane, mapLocal and mapGlobal loops",
            ),
        )
    } else if origin == "scanWarp" {
        (
            "a warp scan (`scanWarp`)",
            Some("put scanWarp directly inside a mapWarp loop (the workGroupScanWarps rule does)"),
        )
    } else {
        (
            "a warp reduction (`reduceWarp`)",
            Some("put reduceWarp directly inside a mapWarp loop (the reduceToWarp rule, then toMapWarp on the map around it)"),
        )
    };
    if let Some((_, outer)) = stack
        .iter()
        .find(|(l, _)| matches!(l, ParLevel::Local(_) | ParLevel::Global(_) | ParLevel::Lane))
    {
        return Err(GpuError::new(
            format!(
                "{what} inside a `{outer}` loop: it needs all 32 lanes of the warp, and that \
                 loop may run it in some lanes only"
            ),
            help,
        ));
    }
    if origin == "mmaSync" && !stack.iter().any(|(l, _)| *l == ParLevel::Warp) {
        return Err(GpuError::new(
            format!(
                "{what} outside every `mapWarp` loop: every warp of the work-group would \
                 compute it and write its result"
            ),
            help,
        ));
    }
    Ok(())
}

/// Refuses a warp group's tensor-core multiply (`wgmma`) that not all 128 threads of the
/// group may reach together: it must sit directly inside a `mapWarpGroup` loop (whose
/// iterations are the same for the threads of a group), outside the loops that spread the
/// iterations over warps or single threads.
fn check_group_position(stack: &[(ParLevel, &'static str)]) -> Result<(), GpuError> {
    let help = Some("put wgmma inside a mapWarpGroup loop, outside mapWarp, mapLane, mapLocal and mapGlobal loops");
    if let Some((_, outer)) = stack.iter().find(|(l, _)| {
        matches!(
            l,
            ParLevel::Local(_) | ParLevel::Global(_) | ParLevel::Lane | ParLevel::Warp
        )
    }) {
        return Err(GpuError::new(
            format!(
                "a warp group's tensor-core multiply (`wgmma`) inside a `{outer}` loop: it needs \
                 all 128 threads of the warp group, and that loop may run it in some only"
            ),
            help,
        ));
    }
    if !stack.iter().any(|(l, _)| *l == ParLevel::WarpGroup) {
        return Err(GpuError::new(
            "a warp group's tensor-core multiply (`wgmma`) outside every `mapWarpGroup` loop: \
             every warp group of the work-group would compute it and write its result"
                .to_string(),
            help,
        ));
    }
    Ok(())
}

/// Rejects writes to local or global memory that every thread of a dimension makes.
fn shared_writes(
    c: &Comm,
    inside: &mut Vec<u8>,
    thread_dims: &[(u8, &'static str)],
    spaces: &HashMap<String, AddrSpace>,
) -> Result<(), GpuError> {
    match c {
        Comm::Skip | Comm::Barrier { .. } | Comm::AsyncCommit | Comm::AsyncWait(_) => Ok(()),
        Comm::Seq(cs) => cs
            .iter()
            .try_for_each(|c| shared_writes(c, inside, thread_dims, spaces)),
        Comm::New { body, .. }
        | Comm::IfLess { body, .. }
        | Comm::AsyncCopy(body)
        | Comm::NatLet { body, .. } => shared_writes(body, inside, thread_dims, spaces),
        Comm::For { kind, body, .. } => {
            let dim = match kind {
                // the lanes of a warp write the same value where a warp loop's
                // iteration writes outside its lane loops (a warp reduction's result)
                LoopKind::Gpu(
                    l
                    @ (ParLevel::Global(_) | ParLevel::Local(_) | ParLevel::Warp | ParLevel::Lane),
                ) => Some(l.dim()),
                _ => None,
            };
            inside.extend(dim);
            let r = shared_writes(body, inside, thread_dims, spaces);
            if dim.is_some() {
                inside.pop();
            }
            r
        }
        Comm::Assign(a, _) => {
            let root = acc_root(a);
            let space = match spaces.get(root) {
                Some(s @ (AddrSpace::Local | AddrSpace::Global)) => s,
                _ => return Ok(()),
            };
            match thread_dims.iter().find(|(d, _)| !inside.contains(d)) {
                Some((d, prim)) => Err(GpuError::new(
                    format!(
                        "`{root}` ({space} memory) is written outside every `{prim}({d})` loop, so \
                         all work-items of dimension {d} would write it at once"
                    ),
                    Some("spread the write over the work-items: lower the map that writes it with mapLocal / mapGlobal in that dimension"),
                )),
                None => Ok(()),
            }
        }
    }
}

fn collect_spaces(c: &Comm, spaces: &mut HashMap<String, AddrSpace>) {
    Node::Comm(c).visit(&mut |n| {
        if let Node::Comm(Comm::New { ident, addr, .. }) = n {
            spaces.insert(ident.name.clone(), addr.clone());
        }
    });
}

fn reject_cpu_loops(c: &Comm) -> Result<(), GpuError> {
    let mut first = None;
    Node::Comm(c).visit(&mut |n| {
        if let Node::Comm(Comm::For {
            kind: LoopKind::Par,
            origin,
            ..
        }) = n
        {
            first.get_or_insert(*origin);
        }
    });
    match first {
        Some(origin) => Err(GpuError::new(
            format!("`{origin}` runs on CPU threads and cannot be compiled for a GPU"),
            Some("lower the map with mapGlobal, or mapWorkGroup and mapLocal (e.g. toMapGlobal(0)), or compile for --target openmp"),
        )),
        None => Ok(()),
    }
}

/// The host runs kernels one after another and has no loops: the loop of an
/// `iterate` whose step has parallel loops (one kernel per step) is expanded into
/// its steps, up to [`MAX_ITERATE_STEPS`] of them; more is an error.
fn expand_kernel_loops(items: Vec<Comm>) -> Result<Vec<Comm>, GpuError> {
    let mut out = Vec::new();
    for item in items {
        match item {
            Comm::For {
                count,
                kind: LoopKind::Seq,
                origin: "iterate",
                body,
                ..
            } if has_gpu_loop(&body) => {
                let mut steps = Vec::new();
                flatten(*body, &mut steps);
                let repeats = count
                    .as_cst()
                    .filter(|c| c.saturating_mul(steps.len() as i64) <= MAX_ITERATE_STEPS)
                    .ok_or_else(|| too_many_kernels(&count, steps.len()))?;
                for _ in 0..repeats {
                    out.extend(steps.iter().cloned());
                }
            }
            item => out.push(item),
        }
    }
    Ok(out)
}

/// The error for an `iterate` loop of `count` iterations of `steps` kernels each.
fn too_many_kernels(count: &Nat, steps: usize) -> GpuError {
    if count.as_cst().is_none() {
        return GpuError::new(
            format!(
                "`iterate` with a number of steps known only at run time ({count} iterations of \
                 {steps} steps) and parallel loops in its step cannot be compiled for OpenCL or \
                 CUDA: a GPU program launches one kernel per step and its host runs no loops"
            ),
            Some(
                "compile for c or openmp, make the count a constant of at most 64, or store the \
                 iterate's result where it is read (`map g (iterate t f xs)`: the default \
                 schedule then runs the whole loop in one kernel)",
            ),
        );
    }
    GpuError::new(
        format!(
            "`iterate` of more than {MAX_ITERATE_STEPS} steps with parallel loops in its step: a GPU \
             program launches one kernel per step and its host runs no loops ({count} iterations \
             of {steps} steps)"
        ),
        Some(
            "iterate at most 64 times on OpenCL and CUDA (split the iterations over several calls), \
             or compile for c or openmp",
        ),
    )
}

fn flatten(c: Comm, out: &mut Vec<Comm>) {
    match c {
        Comm::Seq(cs) => cs.into_iter().for_each(|c| flatten(c, out)),
        Comm::Skip => {}
        c => out.push(c),
    }
}
