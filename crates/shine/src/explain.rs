//! What a schedule made of a definition, in words (`shine compile --explain`): the values
//! computed once and bound before the loops that read them (`let`), the arrays stored
//! (`toMem`), the padded inputs of stencils copied once and the pads left views, the short
//! reductions unrolled, the GPU loop nests over two dimensions of work-items, the matrix
//! products tiled through local memory, the CPU matrix products blocked in registers, the rows reduced by a work-group or a warp each, the
//! loops left sequential and why, and the scalar transcendental functions computed in an
//! innermost loop (once per element: the expensive part of such a loop).
//! Read from the lowered RISE program, so it says what every target's code does.

use rise::{AddrSpace, Expr, ExprKind, Prim, TypeArg};

/// One line per finding about the lowered program `e` (no line: nothing to say).
pub fn lowered_program(e: &Expr) -> Vec<String> {
    let mut facts = Facts::default();
    facts.visit(e, Context::default());
    facts.lines()
}

/// Where a node sits: inside how many loops, and inside a parallel one.
#[derive(Clone, Copy, Default)]
struct Context {
    loops: usize,
    parallel: bool,
    /// Inside a pad already counted (`padClamp2` is a pad of pads).
    in_pad: bool,
}

#[derive(Default)]
struct Facts {
    /// The values bound by `let` that hold a reduction: computed once, before their readers.
    bound_reductions: usize,
    /// The types of the arrays `toMem` stores.
    stored: Vec<String>,
    /// The types of the padded arrays copied once with their border (`storePadded`).
    stored_pads: Vec<String>,
    /// The pads read as views: clamped (or tested) at every read.
    pad_views: usize,
    /// The unrolled reductions (`reduceSeqUnroll`): no loop.
    unrolled_reductions: usize,
    /// `mapGlobal(1)` loops with a `mapGlobal(0)` loop inside: over two dimensions.
    global_nests_2d: usize,
    /// `mapWorkGroup(1)` loops with `mapWorkGroup(0)` and `mapLocal(1)` loops and a store
    /// into local memory inside: a tile of a 2-D result per work-group, a block of it per
    /// work-item, the operands' tiles in local memory.
    tiled_nests: usize,
    /// Reductions whose operator updates a block of vectors with its rows and vectors
    /// unrolled (`mapSeqUnroll` over `asVector`): the block's accumulators in registers, every
    /// step a rank-1 update (`blisProducts`).
    register_blocks: usize,
    /// Loops over work-groups whose work-items reduce each element (a row) together: by a
    /// tree in local memory, or by a warp's shuffles.
    rows_by_work_groups: usize,
    rows_by_warps: usize,
    /// Sequential loops, by reason.
    sequential_inside_parallel: usize,
    sequential_no_parallel: usize,
    sequential_reductions: usize,
    /// The transcendental functions computed in an innermost loop.
    innermost_math: Vec<&'static str>,
}

impl Facts {
    fn visit(&mut self, e: &Expr, at: Context) {
        let (head, values) = e.value_spine();
        match head.as_prim() {
            Some(p) if is_loop(p, values.len()) => return self.visit_loop(p, &values, at),
            // the whole application only (its head `let v` is a node of the spine too)
            Some(Prim::Let) if values.len() == 2 && holds_reduce(values[0]) => {
                self.bound_reductions += 1
            }
            Some(Prim::ToMem) if values.len() == 2 => {
                let ty = values[0].ty().map(|t| t.to_string()).unwrap_or_default();
                if is_padded_copy(values[0]) {
                    // the pad copied is read once per element, not by the stencil
                    self.stored_pads.push(ty);
                    self.visit(values[0], Context { in_pad: true, ..at });
                    return self.visit(values[1], at);
                }
                self.stored.push(ty);
            }
            Some(Prim::PadClamp | Prim::PadCst) if !at.in_pad => {
                self.pad_views += 1;
                let inside = Context { in_pad: true, ..at };
                return values.iter().for_each(|v| self.visit(v, inside));
            }
            _ => {}
        }
        match e.kind() {
            ExprKind::App(f, a) => {
                self.visit(f, at);
                self.visit(a, at);
            }
            ExprKind::Lambda(_, _, b) | ExprKind::DepLambda(_, b) => self.visit(b, at),
            ExprKind::DepApp(f, _) | ExprKind::Annot(f, _) => self.visit(f, at),
            _ => {}
        }
    }

    fn visit_loop(&mut self, p: Prim, args: &[&Expr], at: Context) {
        let parallel = is_parallel(p);
        self.count_gpu_nest(p, args);
        if p.is_reduce() && updates_a_register_block(args[0]) {
            self.register_blocks += 1;
        }
        if p == Prim::ReduceSeqUnroll {
            self.unrolled_reductions += 1;
        } else if !parallel {
            if p.is_reduce() {
                self.sequential_reductions += 1;
            } else if at.parallel {
                self.sequential_inside_parallel += 1;
            } else {
                self.sequential_no_parallel += 1;
            }
        }
        let inside = Context {
            loops: at.loops + 1,
            parallel: at.parallel || parallel,
            ..at
        };
        // what each iteration computes: the function, and maps fused into the input
        if args.iter().all(|a| !has_loop(a)) {
            for a in args {
                collect_math(a, &mut self.innermost_math);
            }
        }
        for a in args {
            self.visit(a, inside);
        }
    }

    /// The GPU nests `p` applied to `args` starts: two dimensions of global work-items, or a
    /// work-group (a warp) per row reducing it together.
    fn count_gpu_nest(&mut self, p: Prim, args: &[&Expr]) {
        let inside = |q: Prim| args.iter().any(|a| any_prim(a, &|r| r == q));
        if p == Prim::MapGlobal1 && inside(Prim::MapGlobal0) {
            self.global_nests_2d += 1;
        }
        let tiled = inside(Prim::MapWorkGroup0) && inside(Prim::MapLocal1);
        if p == Prim::MapWorkGroup1 && tiled && args.iter().any(|a| stores_locally(a)) {
            self.tiled_nests += 1;
        }
        if matches!(p, Prim::MapWorkGroup0) {
            if inside(Prim::ReduceWarp) {
                self.rows_by_warps += 1;
            } else if inside(Prim::MapLocal0) && inside(Prim::Iterate) {
                self.rows_by_work_groups += 1;
            }
        }
    }

    fn lines(&self) -> Vec<String> {
        let mut out = Vec::new();
        if self.bound_reductions > 0 {
            out.push(format!(
                "computed once: {} value(s) holding a reduction bound (`let`) before the loop that reads them, not recomputed per element",
                self.bound_reductions
            ));
        }
        if !self.stored.is_empty() {
            out.push(format!(
                "stored: {} array(s) written to memory once and read from there ({})",
                self.stored.len(),
                self.stored.join(", ")
            ));
        }
        if !self.stored_pads.is_empty() {
            out.push(format!(
                "stencil input: {} padded array(s) copied with their border before the stencil ({}), which reads them at plain indices, without a clamp or a test per read",
                self.stored_pads.len(),
                self.stored_pads.join(", ")
            ));
        }
        // a count and what it counts, each a line where it is not zero
        let counted = [
            (self.pad_views, "border", "pad(s) read as views, clamped or tested at every read (a pad inside a loop, of rows only, one no slide reads, or on a GPU target)"),
            (self.unrolled_reductions, "unrolled", "reduction(s) over a constant number of at most 32 elements: no loop, their indices and the elements of literal arrays they read are constants"),
            (self.global_nests_2d, "2-D", "loop nest(s) over two dimensions of global work-items, the inner loop over dimension 0 (neighbouring work-items at neighbouring elements: coalesced) and the outer over dimension 1"),
            (self.tiled_nests, "tiled", "loop nest(s) with a work-group per 2-D tile of the result and a work-item per block of it (its accumulators in registers), the tiles of the operands it reads copied into local memory by the work-group, step by step"),
            (self.register_blocks, "blocked", "reduction(s) updating a block of the result at every step, its rows and vectors of 16 unrolled (its accumulators in vector registers: each step a rank-1 update, an element of each row times the block's vectors of a row of the other operand)"),
            (self.rows_by_work_groups, "rows", "loop(s) with a work-group per row, its reduction(s) computed by all its work-items (strided partial results: coalesced reads, then a tree in local memory)"),
            (self.rows_by_warps, "rows", "loop(s) with a warp per row, its reduction(s) computed by the 32 lanes (strided partial results: coalesced reads, then shuffles)"),
            (self.sequential_reductions, "sequential", "reduction(s): sequential, their operator is not reassociated unless a strategy says so (partialReduce)"),
            (self.sequential_inside_parallel, "sequential", "loop(s) inside a parallel loop: each runs sequentially within its thread or work-item"),
            (self.sequential_no_parallel, "sequential", "loop(s) outside any parallel loop: sequential (the target or the schedule runs no loop in parallel there)"),
        ];
        for (n, what, reason) in counted.iter().filter(|(n, _, _)| *n > 0) {
            out.push(format!("{what}: {n} {reason}"));
        }
        if !self.innermost_math.is_empty() {
            out.push(format!(
                "per element: the scalar function(s) {} computed in an innermost loop, once per iteration",
                self.innermost_math
                    .iter()
                    .map(|m| format!("`{m}`"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
        out
    }
}

/// A loop of the lowered program: a lowered map or a reduction (a `map` left is computed
/// where it is read, fused into its reader's loop).
fn is_loop(p: Prim, values: usize) -> bool {
    (p.is_map() && p != Prim::Map && values == 2) || (p.is_reduce() && values == 3)
}

fn is_parallel(p: Prim) -> bool {
    p.is_map()
        && !matches!(
            p,
            Prim::Map | Prim::MapSeq | Prim::MapSeqUnroll | Prim::MapVec
        )
}

/// The copy of a pad that `storePadded` stores: maps of `fun x => x` (at any depth) over
/// `padClamp` or `padCst`.
fn is_padded_copy(e: &Expr) -> bool {
    match map_args(e) {
        Some((f, xs)) => {
            is_copy_function(f)
                && xs
                    .spine()
                    .0
                    .as_prim()
                    .is_some_and(|p| matches!(p, Prim::PadClamp | Prim::PadCst))
        }
        None => false,
    }
}

/// `fun x => x`, or `fun r => map g r` with `g` such a function.
fn is_copy_function(f: &Expr) -> bool {
    let ExprKind::Lambda(x, _, body) = f.kind() else {
        return false;
    };
    match (body.kind(), map_args(body)) {
        (ExprKind::Var(y), _) => x == y,
        (_, Some((g, r))) => matches!(r.kind(), ExprKind::Var(y) if x == y) && is_copy_function(g),
        _ => false,
    }
}

/// A map of any kind applied to its function and its input: `(f, xs)`.
fn map_args(e: &Expr) -> Option<(&Expr, &Expr)> {
    let (head, values) = e.value_spine();
    match values[..] {
        [f, xs] if head.as_prim().is_some_and(|p| p.is_map()) => Some((f, xs)),
        _ => None,
    }
}

/// Whether the operator `op` of a reduction updates a block in registers: an unrolled loop
/// (the block's rows) with an unrolled loop over vectors inside (a row's vectors).
fn updates_a_register_block(op: &Expr) -> bool {
    let unrolled_over_vectors = |e: &Expr| {
        any_prim(e, &|q| q == Prim::MapSeqUnroll) && any_prim(e, &|q| q == Prim::AsVector)
    };
    op.any(&|e| {
        let (head, values) = e.value_spine();
        head.as_prim() == Some(Prim::MapSeqUnroll)
            && values.iter().any(|v| unrolled_over_vectors(v))
    })
}

/// Whether `e` stores a value into local memory (`toMem local`).
fn stores_locally(e: &Expr) -> bool {
    e.any(&|e| {
        matches!(e.kind(), ExprKind::DepApp(f, TypeArg::AddrSpace(AddrSpace::Local))
            if f.as_prim() == Some(Prim::ToMem))
    })
}

fn holds_reduce(e: &Expr) -> bool {
    any_prim(e, &|p| p.is_reduce())
}

fn has_loop(e: &Expr) -> bool {
    let (head, values) = e.value_spine();
    if head.as_prim().is_some_and(|p| is_loop(p, values.len())) {
        return true;
    }
    match e.kind() {
        ExprKind::App(f, a) => has_loop(f) || has_loop(a),
        ExprKind::Lambda(_, _, b) | ExprKind::DepLambda(_, b) => has_loop(b),
        ExprKind::DepApp(f, _) | ExprKind::Annot(f, _) => has_loop(f),
        _ => false,
    }
}

fn any_prim(e: &Expr, p: &dyn Fn(Prim) -> bool) -> bool {
    e.any(&|e| matches!(e.kind(), ExprKind::Prim(q) if p(*q)))
}

/// The transcendental math functions (not `sqrt`, `fabs`, `fmin`...: an instruction each).
fn collect_math(e: &Expr, out: &mut Vec<&'static str>) {
    match e.kind() {
        ExprKind::Prim(p) => {
            if let Some(m) = p.math() {
                let cheap = matches!(
                    m.name(),
                    "sqrt"
                        | "rsqrt"
                        | "fabs"
                        | "floor"
                        | "ceil"
                        | "round"
                        | "trunc"
                        | "fmin"
                        | "fmax"
                        | "copysign"
                        | "fma"
                        | "min"
                        | "max"
                        | "abs"
                );
                if !cheap && !out.contains(&m.name()) {
                    out.push(m.name());
                }
            }
        }
        ExprKind::App(f, a) => {
            collect_math(f, out);
            collect_math(a, out);
        }
        ExprKind::Lambda(_, _, b) | ExprKind::DepLambda(_, b) => collect_math(b, out),
        ExprKind::DepApp(f, _) | ExprKind::Annot(f, _) => collect_math(f, out),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{schedules, Options, SourceFile, Target};

    fn explained(program: &str, target: Target) -> Vec<String> {
        explained_under(program, schedules::default_for(target))
    }

    fn explained_under(program: &str, schedule: &str) -> Vec<String> {
        let source = SourceFile::new("t.rise", program);
        let strategy = schedules::strategy(schedule);
        let lowered = crate::lower(&source, "f", Some(&strategy), &Options::default())
            .unwrap_or_else(|e| panic!("{e}"));
        lowered_program(&lowered.rise)
    }

    const SOFTMAX: &str = "def f : {m n: nat} -> m.n.f32 -> m.n.f32 = fun xs => map (fun row => map (fun e => e / reduce add 0.0f (map (fun x => exp (x - reduce fmax (-inff) row)) row)) (map (fun x => exp (x - reduce fmax (-inff) row)) row)) xs";

    #[test]
    fn softmax_under_the_default_names_its_stored_array_and_its_bound_reductions() {
        let lines = explained(SOFTMAX, Target::OpenMp).join("\n");
        assert!(lines.contains("computed once: 2 value(s)"), "{lines}");
        assert!(lines.contains("stored: 1 array(s)"), "{lines}");
        assert!(lines.contains("2 reduction(s)"), "{lines}");
        assert!(lines.contains("inside a parallel loop"), "{lines}");
        assert!(lines.contains("`exp`"), "{lines}");
    }

    const BLUR: &str = "def f : {n m: nat} -> n.m.u16 -> n.m.u16 = fun img => img |> padClamp2 1 1 |> slide2 3 1 |> map2 (fun w => reduce add 0u16 (join w))";

    #[test]
    fn a_stencil_under_the_default_names_its_copied_input_and_its_unrolled_window() {
        for target in [Target::C, Target::OpenMp] {
            let lines = explained(BLUR, target).join("\n");
            assert!(
                lines.contains("stencil input: 1 padded array(s)"),
                "{lines}"
            );
            assert!(lines.contains("((n+2).(m+2).u16)"), "{lines}");
            assert!(lines.contains("unrolled: 1 reduction(s)"), "{lines}");
            assert!(!lines.contains("border:"), "{lines}");
            assert!(!lines.contains("reduction(s): sequential"), "{lines}");
        }
        // a GPU target leaves the pad a view
        let lines = explained(BLUR, Target::OpenCl).join("\n");
        assert!(lines.contains("border: 1 pad(s) read as views"), "{lines}");
    }

    #[test]
    fn a_long_reduction_stays_a_sequential_loop() {
        let lines = explained(
            "def f : {n: nat} -> n.33.f32 -> n.f32 = fun xs => map (fun r => reduce add 0.0f r) xs",
            Target::C,
        )
        .join("\n");
        assert!(!lines.contains("unrolled"), "{lines}");
        assert!(lines.contains("sequential: 1 reduction(s)"), "{lines}");
    }

    const MM: &str = "def f : {m n k: nat} -> m.k.f32 -> k.n.f32 -> m.n.f32 = fun a b => map (fun row => map (fun col => reduce add 0.0f (map (fun p => fst p * snd p) (zip row col))) (transpose b)) a";

    #[test]
    fn a_map_of_maps_on_a_gpu_is_named_a_nest_over_two_dimensions() {
        let lines = explained(MM, Target::OpenCl).join("\n");
        assert!(lines.contains("2-D: 1 loop nest(s)"), "{lines}");
        let lines = explained(MM, Target::OpenMp).join("\n");
        assert!(!lines.contains("2-D"), "{lines}");
    }

    #[test]
    fn a_tiled_matrix_product_is_named_with_its_tiles_in_local_memory() {
        let lines = explained_under(MM, "tiledProducts").join("\n");
        assert!(lines.contains("tiled: 1 loop nest(s)"), "{lines}");
        // the copy out of the padded result
        assert!(lines.contains("2-D: 1 loop nest(s)"), "{lines}");
        let lines = explained(MM, Target::OpenCl).join("\n");
        assert!(!lines.contains("tiled:"), "{lines}");
    }

    #[test]
    fn a_blis_product_is_named_with_its_register_block() {
        for schedule in ["blisProducts", "blisProductsPar"] {
            let lines = explained_under(MM, schedule).join("\n");
            assert!(lines.contains("blocked: 1 reduction(s)"), "{lines}");
            // the packed panels of b and slivers of a, and the padded result
            assert!(lines.contains("stored: 3 array(s)"), "{lines}");
            assert!(lines.contains("((n+63)/64).k.64.f32"), "{lines}");
        }
        let lines = explained(MM, Target::C).join("\n");
        assert!(!lines.contains("blocked:"), "{lines}");
        let lines = explained_under(MM, "tiledProducts").join("\n");
        assert!(!lines.contains("blocked:"), "{lines}");
    }

    #[test]
    fn the_gpu_row_reductions_are_named_by_work_group_and_by_warp() {
        let lines = explained_under(SOFTMAX, "rowReductionsByWorkGroups").join("\n");
        assert!(
            lines.contains("rows: 1 loop(s) with a work-group per row"),
            "{lines}"
        );
        let lines = explained_under(SOFTMAX, "rowReductionsByWarps").join("\n");
        assert!(
            lines.contains("rows: 1 loop(s) with a warp per row"),
            "{lines}"
        );
        let lines = explained(SOFTMAX, Target::OpenCl).join("\n");
        assert!(!lines.contains("rows:"), "{lines}");
    }

    #[test]
    fn a_sequential_target_says_its_loops_run_outside_any_parallel_loop() {
        let lines = explained(SOFTMAX, Target::C).join("\n");
        assert!(lines.contains("outside any parallel loop"), "{lines}");
    }
}
