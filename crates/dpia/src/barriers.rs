//! Barrier insertion, and the rejection of barriers in divergent control flow.
//!
//! Threads of a work-group communicate through memory: one `parForLocal` writes
//! local (or global) memory that a later one reads (the next step of a tree
//! reduction, the computation after a tile was copied to local memory). Between
//! the two, every thread must wait until all have written: a barrier. A barrier
//! also separates a read from a later overwrite of the same memory (the double
//! buffers of `iterate`, the next tile of a loop over tiles).
//!
//! The pass walks every sequence of commands and keeps the memory accesses made
//! since the last barrier; when the next command *conflicts* with them — both touch
//! the same local or global memory, at least one writes it, and at least one of
//! the two accesses is spread over threads (inside a parallel loop) — a barrier
//! goes in between, with fences for the address spaces involved. A sequential loop
//! whose end conflicts with its beginning (the next iteration overwrites what this
//! one reads) gets a barrier at the end of its body. Accesses made by every thread
//! alike (outside parallel loops) need no barrier among themselves, and private
//! memory never does. Whether two accesses touch the same *element* is not
//! analysed: a barrier may be placed where an index analysis would prove it
//! unnecessary, never left out where it is needed.
//!
//! Inside an iteration of a `mapWarp` loop only the 32 lanes of one warp run, so
//! they communicate through a *warp* barrier (CUDA `__syncwarp()`, which orders their
//! memory accesses too), not a work-group one; it synchronizes nothing outside the
//! warp's iteration. Every lane must reach it, so it may not sit inside a `mapLane`
//! loop of other than 32 iterations, nor a sequential loop whose count depends on the
//! lane.
//!
//! A barrier must be reached by every thread of the work-group, the same number of
//! times, or the work-group hangs. The pass knows the launch (how many threads a
//! work-group has in each dimension) and rejects, with a message naming the loop,
//! a barrier that would sit
//! * inside a `mapLocal` loop whose number of iterations is not the number of
//!   threads of its dimension (some threads run more iterations than others);
//! * inside a `mapGlobal` loop, or inside a sequential loop whose number of
//!   iterations depends on the thread;
//! * where threads of *different* work-groups communicate (in a kernel of
//!   `mapGlobal` loops, or outside the `mapWorkGroup` loops): no barrier
//!   synchronizes them, only the end of a kernel does.

use std::collections::HashMap;

use crate::error::GpuError;
use crate::imperative::*;
use crate::query::{acc_reads, acc_root, exp_reads};
use arith::{Nat, Var};
use rise::AddrSpace;

/// What the pass knows about the kernel.
pub(crate) struct Launch<'a> {
    /// The address space of every memory identifier (missing: private).
    pub spaces: &'a HashMap<String, AddrSpace>,
    /// The kernel has `mapGlobal` loops (no work-group structure).
    pub global_loops: bool,
    /// The dimensions in which the kernel has `mapWorkGroup` loops.
    pub group_dims: [bool; 3],
    /// The number of threads of a work-group in each dimension, when it is a constant.
    pub local_sizes: [Option<i64>; 3],
}

/// Where a command sits.
#[derive(Clone, Default)]
struct Pos {
    /// Inside a `mapWorkGroup` loop of each dimension.
    in_group: [bool; 3],
    /// Why not every thread of a work-group gets here the same number of times.
    divergent: Option<String>,
    /// Loop variables whose value differs between threads of a work-group.
    thread_vars: Vec<Var>,
    /// Inside an iteration of a `mapWarp` loop: only its warp's lanes run here, and they
    /// synchronize by a warp barrier.
    in_warp: bool,
    /// Why not every lane of the warp gets here the same number of times (inside a
    /// `mapWarp` iteration).
    lane_divergent: Option<String>,
    /// The variables of the `mapWarp` loops around: the same for every lane of a warp.
    warp_vars: Vec<Var>,
}

/// How one memory is accessed by a command.
#[derive(Clone, Copy, Default, Debug)]
struct Use {
    read: bool,
    write: bool,
    /// Read inside a parallel loop (by different threads for different iterations).
    read_par: bool,
    /// Written inside a parallel loop.
    write_par: bool,
}

type Uses = HashMap<String, Use>;

/// `c` with the barriers it needs.
pub(crate) fn insert(c: Comm, launch: &Launch) -> Result<Comm, GpuError> {
    walk(c, &Pos::default(), launch)
}

fn walk(c: Comm, pos: &Pos, launch: &Launch) -> Result<Comm, GpuError> {
    Ok(match c {
        Comm::Seq(cs) => {
            let mut items = Vec::new();
            flatten(cs, &mut items);
            let items = items
                .into_iter()
                .map(|c| walk(c, pos, launch))
                .collect::<Result<Vec<_>, _>>()?;
            Comm::Seq(separate(items, pos, launch)?)
        }
        Comm::New { ident, addr, body } => Comm::New {
            ident,
            addr,
            body: Box::new(walk(*body, pos, launch)?),
        },
        Comm::For {
            var,
            count,
            kind,
            origin,
            body,
        } => {
            let inner = enter(pos, &var, &count, kind, origin, launch);
            let mut body = walk(*body, &inner, launch)?;
            // The iterations of a sequential loop run one after another, and so do those
            // of a work-group loop that one work-group runs more than once.
            if matches!(
                kind,
                LoopKind::Seq | LoopKind::Unroll | LoopKind::Gpu(ParLevel::WorkGroup(_))
            ) {
                let items = match &body {
                    Comm::Seq(items) => items.clone(),
                    other => vec![other.clone()],
                };
                let Sync { head, tail, .. } = sync_of(&body, inner.in_warp);
                // Iterations of a map touch their own part of global memory; only the
                // local memory a work-group reuses carries over from one to the next.
                let spaces: HashMap<String, AddrSpace>;
                let spaces = if matches!(kind, LoopKind::Gpu(_)) {
                    spaces = launch
                        .spaces
                        .iter()
                        .filter(|(_, a)| **a == AddrSpace::Local)
                        .map(|(n, a)| (n.clone(), a.clone()))
                        .collect();
                    &spaces
                } else {
                    launch.spaces
                };
                if let Some(b) = conflict(&tail, &head, spaces) {
                    let what = format!(
                        "the end of one iteration of the `{origin}` loop and the beginning of the next \
                         communicate through {}",
                        b.describe()
                    );
                    check_position(&inner, launch, &what)?;
                    let mut items = items;
                    items.push(b.barrier(inner.in_warp));
                    body = Comm::Seq(items);
                }
            }
            Comm::For {
                var,
                count,
                kind,
                origin,
                body: Box::new(body),
            }
        }
        Comm::IfLess { lhs, rhs, body } => {
            let mut inner = pos.clone();
            if let Some(v) = pos
                .thread_vars
                .iter()
                .find(|v| lhs.contains_var(v) || rhs.contains_var(v))
            {
                inner.divergent.get_or_insert(format!(
                    "where `{lhs} < {rhs}`, which depends on the work-item (through `{v}`)"
                ));
            }
            Comm::IfLess {
                lhs,
                rhs,
                body: Box::new(walk(*body, &inner, launch)?),
            }
        }
        // a number every thread reads (a ticket): the same for all, so no divergence
        Comm::NatLet { var, value, body } => Comm::NatLet {
            var,
            value,
            body: Box::new(walk(*body, pos, launch)?),
        },
        // the copies of a pipelined reduction, which places its own waits and barriers
        c @ (Comm::Skip
        | Comm::Assign(..)
        | Comm::Barrier { .. }
        | Comm::AsyncCopy(_)
        | Comm::AsyncCommit
        | Comm::AsyncWait(_)) => c,
    })
}

/// The position inside a loop.
fn enter(pos: &Pos, var: &Var, count: &Nat, kind: LoopKind, origin: &str, launch: &Launch) -> Pos {
    let mut inner = pos.clone();
    match kind {
        LoopKind::Gpu(ParLevel::WorkGroup(d)) => inner.in_group[usize::from(d)] = true,
        LoopKind::Gpu(ParLevel::Local(d)) => {
            inner.thread_vars.push(var.clone());
            let threads = launch.local_sizes[usize::from(d)];
            if threads.is_none() || count.as_cst() != threads {
                let threads = threads.map_or("a number of".to_string(), |t| t.to_string());
                inner.diverge(format!(
                    "inside the `{origin}` loop, whose {count} iterations are spread over {threads} \
                     work-items, so that not every work-item runs the same number of iterations"
                ));
            }
        }
        LoopKind::Gpu(ParLevel::Warp) => {
            inner.thread_vars.push(var.clone());
            let warps = launch.local_sizes[0].map(|t| t / 32);
            if warps.is_none() || count.as_cst() != warps {
                let warps = warps.map_or("a number of".to_string(), |w| w.to_string());
                inner.divergent.get_or_insert(format!(
                    "inside the `{origin}` loop, whose {count} iterations are spread over {warps} \
                     warps, so that not every warp runs the same number of iterations"
                ));
            }
            // every lane of the warp runs the iteration
            inner.in_warp = true;
            inner.lane_divergent = None;
            inner.warp_vars.push(var.clone());
        }
        LoopKind::Gpu(ParLevel::WarpGroup) => {
            // a barrier of one warp group would be a named barrier of its 128 threads
            // (`bar.sync id, 128`), which shine does not emit: none inside
            inner.thread_vars.push(var.clone());
            inner.divergent.get_or_insert(format!(
                "inside the `{origin}` loop, whose iterations are spread over the warp groups \
                 (a barrier there would have to synchronize one warp group only)"
            ));
        }
        LoopKind::Gpu(ParLevel::Lane) => {
            inner.thread_vars.push(var.clone());
            if count.as_cst() != Some(32) {
                inner.diverge(format!(
                    "inside the `{origin}` loop, whose {count} iterations are spread over the 32 \
                     lanes of a warp, so that not every lane runs the same number of iterations"
                ));
            }
        }
        LoopKind::Gpu(ParLevel::Global(_)) => {
            inner.thread_vars.push(var.clone());
            inner.diverge(format!(
                "inside the `{origin}` loop, whose iterations are spread over all work-items"
            ));
        }
        LoopKind::Seq | LoopKind::Unroll | LoopKind::Par => {
            if let Some(v) = pos.thread_vars.iter().find(|v| count.contains_var(v)) {
                let reason = format!(
                    "inside the `{origin}` loop, whose number of iterations ({count}) depends on \
                     the work-item (through `{v}`)"
                );
                if pos.warp_vars.contains(v) {
                    // the same for every lane of the warp
                    inner.divergent.get_or_insert(reason);
                } else {
                    inner.diverge(reason);
                }
            }
        }
    }
    inner
}

impl Pos {
    /// Records why not every thread (and so not every lane of a warp) gets here the same
    /// number of times.
    fn diverge(&mut self, reason: String) {
        if self.in_warp {
            self.lane_divergent.get_or_insert(reason.clone());
        }
        self.divergent.get_or_insert(reason);
    }
}

/// The commands with barriers where a command conflicts with those since the last barrier.
fn separate(items: Vec<Comm>, pos: &Pos, launch: &Launch) -> Result<Vec<Comm>, GpuError> {
    let mut out = Vec::with_capacity(items.len());
    let mut pending = Uses::new();
    for item in items {
        if matches!(item, Comm::Barrier { .. }) {
            // one the translation placed (a pipelined reduction's)
            check_position(pos, launch, "a pipelined reduction synchronizes its copies")?;
            pending.clear();
            out.push(item);
            continue;
        }
        let sync = sync_of(&item, pos.in_warp);
        if let Some(b) = conflict(&pending, &sync.head, launch.spaces) {
            let what = format!("work-items communicate through {}", b.describe());
            check_position(pos, launch, &what)?;
            out.push(b.barrier(pos.in_warp));
            pending.clear();
        }
        if sync.barrier {
            pending = sync.tail;
        } else {
            merge(&mut pending, &sync.tail);
        }
        out.push(item);
    }
    Ok(out)
}

/// An error unless every thread of a work-group (inside a `mapWarp` iteration: every lane
/// of the warp) reaches a barrier at `pos`.
fn check_position(pos: &Pos, launch: &Launch, what: &str) -> Result<(), GpuError> {
    if pos.in_warp {
        return check_warp_position(pos, what);
    }
    let help = "restructure the program so that the threads communicate between the parallel loops, \
                at the level of the work-group: give the `mapLocal` loops as many iterations as the \
                work-group has threads, or store the result with `toMem global` outside the kernel's \
                parallel loops";
    if launch.global_loops {
        return Err(GpuError::new(
            format!(
                "{what}, but the kernel's `mapGlobal` loops spread the work-items over \
                 independent work-groups, which no barrier synchronizes"
            ),
            Some("write the intermediate result at the top level of the program (a separate kernel), or use mapWorkGroup and mapLocal"),
        ));
    }
    if let Some(d) = (0..3).find(|&d| launch.group_dims[d] && !pos.in_group[d]) {
        return Err(GpuError::new(
            format!(
                "{what} outside the `mapWorkGroup({d})` loop, so work-items of different \
                 work-groups communicate, which no barrier synchronizes"
            ),
            Some("move the communication inside the mapWorkGroup loop, or write the intermediate result at the top level of the program (a separate kernel)"),
        ));
    }
    if let Some(reason) = &pos.divergent {
        return Err(GpuError::new(
            format!(
                "{what}: a barrier is needed there, but it would sit {reason}; a barrier that \
                 not every work-item reaches would hang the work-group"
            ),
            Some(help),
        ));
    }
    Ok(())
}

/// An error unless every lane of the warp reaches a warp barrier at `pos`.
fn check_warp_position(pos: &Pos, what: &str) -> Result<(), GpuError> {
    match &pos.lane_divergent {
        Some(reason) => Err(GpuError::new(
            format!(
                "{what}: a warp barrier is needed there, but it would sit {reason}; a warp \
                 barrier that not every lane reaches would hang the warp"
            ),
            Some(
                "give the `mapLane` loops 32 iterations, or let the lanes communicate between \
                 them, at the level of the warp",
            ),
        )),
        None => Ok(()),
    }
}

/// A needed barrier: the memories that conflict and the fences they need.
struct Needed {
    names: Vec<String>,
    local: bool,
    global: bool,
}

impl Needed {
    /// The barrier: a warp's (`warp`: inside a `mapWarp` iteration) or the work-group's.
    fn barrier(&self, warp: bool) -> Comm {
        Comm::Barrier {
            local: self.local,
            global: self.global,
            warp,
        }
    }

    fn describe(&self) -> String {
        let names: Vec<String> = self.names.iter().map(|n| format!("`{n}`")).collect();
        names.join(", ")
    }
}

/// The shared memories `later` accesses in conflict with `earlier`.
fn conflict(earlier: &Uses, later: &Uses, spaces: &HashMap<String, AddrSpace>) -> Option<Needed> {
    let mut needed = Needed {
        names: Vec::new(),
        local: false,
        global: false,
    };
    let mut names: Vec<&String> = earlier.keys().filter(|n| later.contains_key(*n)).collect();
    names.sort();
    for name in names {
        let space = match spaces.get(name) {
            Some(s @ (AddrSpace::Local | AddrSpace::Global)) => s,
            _ => continue,
        };
        let (a, b) = (earlier[name], later[name]);
        let raw = (a.write_par && b.read) || (a.write && b.read_par);
        let waw = (a.write_par && b.write) || (a.write && b.write_par);
        let war = (a.read_par && b.write) || (a.read && b.write_par);
        if raw || waw || war {
            needed.names.push(name.clone());
            match space {
                AddrSpace::Local => needed.local = true,
                _ => needed.global = true,
            }
        }
    }
    (!needed.names.is_empty()).then_some(needed)
}

fn merge(into: &mut Uses, from: &Uses) {
    for (name, u) in from {
        let e = into.entry(name.clone()).or_default();
        e.read |= u.read;
        e.write |= u.write;
        e.read_par |= u.read_par;
        e.write_par |= u.write_par;
    }
}

/// The accesses of a command before its first barrier (`head`) and after its last
/// one (`tail`); without a barrier both are all its accesses. Both over-approximate
/// when a barrier sits in a loop that may not run (its accesses then do not happen
/// either); `barrier` says whether a barrier certainly runs, which synchronizes
/// everything before the command.
struct Sync {
    head: Uses,
    tail: Uses,
    barrier: bool,
}

///
/// A warp barrier synchronizes only where the command runs inside a `mapWarp` iteration
/// (`in_warp`); seen from outside, it is no barrier at all.
fn sync_of(c: &Comm, in_warp: bool) -> Sync {
    sync_in(c, false, in_warp)
}

/// [`sync_of`] for a command inside a parallel loop (`par`) or not.
fn sync_in(c: &Comm, par: bool, in_warp: bool) -> Sync {
    match c {
        Comm::Barrier { warp: true, .. } if !in_warp => Sync {
            head: Uses::new(),
            tail: Uses::new(),
            barrier: false,
        },
        Comm::Barrier { .. } => Sync {
            head: Uses::new(),
            tail: Uses::new(),
            barrier: true,
        },
        Comm::Seq(items) => {
            let (mut head, mut tail) = (Uses::new(), Uses::new());
            let mut barrier = false;
            for item in items {
                let s = sync_in(item, par, in_warp);
                if !barrier {
                    merge(&mut head, &s.head);
                }
                if s.barrier {
                    tail = s.tail;
                    barrier = true;
                } else {
                    merge(&mut tail, &s.tail);
                }
            }
            Sync {
                head,
                tail,
                barrier,
            }
        }
        Comm::New { body, .. } => sync_in(body, par, in_warp),
        // the value is read before the body runs
        Comm::NatLet { value, body, .. } => {
            let mut read = Uses::new();
            exp_uses(value, par, &mut read);
            let s = sync_in(body, par, in_warp);
            let mut head = read.clone();
            merge(&mut head, &s.head);
            let tail = if s.barrier {
                s.tail
            } else {
                merge(&mut read, &s.tail);
                read
            };
            Sync {
                head,
                tail,
                barrier: s.barrier,
            }
        }
        // A loop whose body has a barrier: the accesses before the first iteration's
        // first barrier and after the last iteration's last (none if it does not run).
        // The barrier itself runs only if the loop runs at least once.
        Comm::For {
            count, kind, body, ..
        } => {
            let s = sync_in(body, par || matches!(kind, LoopKind::Gpu(_)), in_warp);
            Sync {
                barrier: s.barrier && Nat::cst(0).prove_lt(count),
                ..s
            }
        }
        Comm::Skip
        | Comm::Assign(..)
        | Comm::IfLess { .. }
        | Comm::AsyncCopy(_)
        | Comm::AsyncCommit
        | Comm::AsyncWait(_) => {
            let mut u = Uses::new();
            collect(c, par, &mut u);
            Sync {
                head: u.clone(),
                tail: u,
                barrier: false,
            }
        }
    }
}

fn collect(c: &Comm, par: bool, uses: &mut Uses) {
    match c {
        // an asynchronous copy's writes are ordered by the waits and barriers its
        // pipelined reduction places (the buffers are its own)
        Comm::Skip
        | Comm::Barrier { .. }
        | Comm::AsyncCopy(_)
        | Comm::AsyncCommit
        | Comm::AsyncWait(_) => {}
        Comm::Seq(cs) => cs.iter().for_each(|c| collect(c, par, uses)),
        Comm::New { body, .. } | Comm::IfLess { body, .. } => collect(body, par, uses),
        Comm::For { kind, body, .. } => {
            collect(body, par || matches!(kind, LoopKind::Gpu(_)), uses)
        }
        Comm::NatLet { value, body, .. } => {
            exp_uses(value, par, uses);
            collect(body, par, uses)
        }
        Comm::Assign(a, e) => {
            exp_uses(e, par, uses);
            let mut reads = Vec::new();
            acc_reads(a, &mut reads);
            for name in reads {
                let u = uses.entry(name).or_default();
                u.read = true;
                u.read_par |= par;
            }
            let u = uses.entry(acc_root(a).to_string()).or_default();
            u.write = true;
            u.write_par |= par;
        }
    }
}

/// Records the memories `e` reads (inside a parallel loop or not). A ticket or a
/// look-back also updates global memory (the counter, the descriptors) with atomics,
/// through which work-groups talk, not the threads of one (one work-item of each touches
/// them): only their reads are recorded.
fn exp_uses(e: &Exp, par: bool, uses: &mut Uses) {
    let mut reads = Vec::new();
    exp_reads(e, &mut reads);
    for name in reads {
        let u = uses.entry(name).or_default();
        u.read = true;
        u.read_par |= par;
    }
}

fn flatten(cs: Vec<Comm>, out: &mut Vec<Comm>) {
    for c in cs {
        match c {
            Comm::Seq(inner) => flatten(inner, out),
            Comm::Skip => {}
            c => out.push(c),
        }
    }
}
