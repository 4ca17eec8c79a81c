//! Normal forms (ICFP'20 §4.8): the β-η normal form (BENF) and the data-flow
//! normal form (DFNF), built with ELEVATE combinators from the rules
//! `betaReduction`, `etaReduction` and `etaAbstraction` ([`crate::rules`]).

use crate::rules::{beta_reduction, eta_abstraction, eta_reduction};
use crate::term::{any_map, any_reduce, no, prim_app};
use crate::traversals::{arg_of_where, body, is_lambda, later_arg_of_where};
use crate::S;
use elevate::{lchoice, named, normalize, not, one, rule};
use rise::Expr;

/// `BENF`: `normalize(betaReduction <+ etaReduction)`, applied in one pass
/// ([`crate::benf`]: the same rewrites in the same order, in time linear in their number
/// rather than in their number times the program's depth).
pub fn benf() -> S {
    named("BENF", vec![], || {
        crate::benf::benf_pass(lchoice(beta_reduction(), eta_reduction()))
    })
}

/// `DFNF` (ICFP'20 Listing 4): BENF, then every function given to a map is a
/// lambda, every reduce operator a two-parameter lambda, every tile scan of a
/// `scanLookback` a lambda, and every map, reduce and `scanSeq` is applied to all its
/// arguments.
pub fn dfnf() -> S {
    named("DFNF", vec![], || {
        let abstract_unless_lambda = || not(is_lambda()).seq(eta_abstraction());
        let map_fn_is_lambda = normalize(arg_of_where(
            "argOf(map)",
            any_map,
            abstract_unless_lambda(),
        ));
        let reduce_op_is_lambda = normalize(arg_of_where(
            "argOf(reduce)",
            any_reduce,
            abstract_unless_lambda().or(body(abstract_unless_lambda())),
        ));
        // `scanLookback w m f init e g xs`: `g` (the tile's scan) a lambda
        let tile_scan_is_lambda = normalize(later_arg_of_where(
            "argOf(scanLookback, 4)",
            |p| p == rise::Prim::ScanLookback,
            3,
            abstract_unless_lambda(),
        ));
        let fully_applied = normalize(
            not(crate::traversals::is_app(elevate::id()))
                .seq(one(is_partial_map_or_reduce().seq(eta_abstraction()))),
        );
        // The root has no parent to apply it: a program that BENF made a
        // partial `map f` is η-abstracted there too.
        let root_applied = elevate::try_(is_partial_map_or_reduce().seq(eta_abstraction()));
        benf()
            .seq(map_fn_is_lambda)
            .seq(reduce_op_is_lambda)
            .seq(tile_scan_is_lambda)
            .seq(fully_applied)
            .seq(root_applied)
    })
}

/// `a ;; b`: `a ; DFNF ; b` (ICFP'20 §6.1).
pub fn seq_dfnf(a: S, b: S) -> S {
    a.seq(dfnf()).seq(b)
}

/// A map or `slideSeq` with its function but no array, or a reduce or `scanSeq` missing
/// arguments.
fn is_partial_map_or_reduce() -> S {
    rule("isPartialMapOrReduce", |e: &Expr, _| match prim_app(e) {
        Some(a) if any_map(a.prim) && a.args.len() == 1 => Ok(e.clone()),
        Some(a) if any_reduce(a.prim) && (1..3).contains(&a.args.len()) => Ok(e.clone()),
        Some(a) if a.prim == rise::Prim::ScanSeq && (1..3).contains(&a.args.len()) => Ok(e.clone()),
        Some(a) if a.prim == rise::Prim::SlideSeq && a.args.len() == 1 => Ok(e.clone()),
        _ => no(),
    })
}
