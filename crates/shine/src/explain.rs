//! What a schedule made of a definition, in words (`shine compile --explain`): the values
//! computed once and bound before the loops that read them (`let`), the arrays stored
//! (`toMem`), the loops left sequential and why, and the scalar transcendental functions
//! computed in an innermost loop (once per element: the expensive part of such a loop).
//! Read from the lowered RISE program, so it says what every target's code does.

use rise::expr::Arg;
use rise::{Expr, ExprKind, Prim};

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
}

#[derive(Default)]
struct Facts {
    /// The values bound by `let` that hold a reduction: computed once, before their readers.
    bound_reductions: usize,
    /// The types of the arrays `toMem` stores.
    stored: Vec<String>,
    /// Sequential loops, by reason.
    sequential_inside_parallel: usize,
    sequential_no_parallel: usize,
    sequential_reductions: usize,
    /// The transcendental functions computed in an innermost loop.
    innermost_math: Vec<&'static str>,
}

impl Facts {
    fn visit(&mut self, e: &Expr, at: Context) {
        let (head, args) = e.spine();
        let values: Vec<&Expr> = args
            .iter()
            .filter_map(|a| match a {
                Arg::Value(v) => Some(*v),
                Arg::Type(_) => None,
            })
            .collect();
        match head.as_prim() {
            Some(p) if is_loop(p, values.len()) => return self.visit_loop(p, &values, at),
            // the whole application only (its head `let v` is a node of the spine too)
            Some(Prim::Let) if values.len() == 2 && holds_reduce(values[0]) => {
                self.bound_reductions += 1
            }
            Some(Prim::ToMem) if values.len() == 2 => {
                if let Some(t) = values.first().and_then(|v| v.ty()) {
                    self.stored.push(t.to_string());
                }
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
        if !parallel {
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
        let why = [
            (self.sequential_reductions, "reduction(s): sequential, their operator is not reassociated unless a strategy says so (partialReduce)"),
            (self.sequential_inside_parallel, "loop(s) inside a parallel loop: each runs sequentially within its thread or work-item"),
            (self.sequential_no_parallel, "loop(s) outside any parallel loop: sequential (the target or the schedule runs no loop in parallel there)"),
        ];
        for (n, reason) in why.iter().filter(|(n, _)| *n > 0) {
            out.push(format!("sequential: {n} {reason}"));
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

fn holds_reduce(e: &Expr) -> bool {
    any_prim(e, &|p| p.is_reduce())
}

fn has_loop(e: &Expr) -> bool {
    let (head, args) = e.spine();
    let values = args.iter().filter(|a| matches!(a, Arg::Value(_))).count();
    if head.as_prim().is_some_and(|p| is_loop(p, values)) {
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
    match e.kind() {
        ExprKind::Prim(q) => p(*q),
        ExprKind::App(f, a) => any_prim(f, p) || any_prim(a, p),
        ExprKind::Lambda(_, _, b) | ExprKind::DepLambda(_, b) => any_prim(b, p),
        ExprKind::DepApp(f, _) | ExprKind::Annot(f, _) => any_prim(f, p),
        _ => false,
    }
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
        let source = SourceFile::new("t.rise", program);
        let strategy = schedules::default_strategy(target);
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

    #[test]
    fn a_sequential_target_says_its_loops_run_outside_any_parallel_loop() {
        let lines = explained(SOFTMAX, Target::C).join("\n");
        assert!(lines.contains("outside any parallel loop"), "{lines}");
    }
}
