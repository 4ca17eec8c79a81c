//! Strategies over F-smooth built from the rules with the generic ELEVATE
//! combinators (thesis §5.7). [`NAMED`] lists them; [`crate::library`]
//! registers them, with the rules, for strategy expressions and `.elv` files
//! such as `normalize(buildGet <+ lenBuild <+ letPartialEval <+ letApp <+ funToLet)`.

use crate::expr::Expr;
use crate::rules;
use elevate::{fail, lchoice, named, normalize, seq, Strategy};

/// `s1 <+ s2 <+ ... <+ sn`
pub fn choice(strategies: Vec<Strategy<Expr>>) -> Strategy<Expr> {
    let mut it = strategies.into_iter().rev();
    let last = it.next().unwrap_or_else(fail);
    it.fold(last, |acc, s| lchoice(s, acc))
}

/// The strategy of thesis Figure 5.13:
/// `normalize(buildGet <+ lenBuild <+ letPartialEval <+ letApp <+ funToLet)`.
pub fn fig_5_13() -> Strategy<Expr> {
    normalize(choice(vec![
        rules::build_get(),
        rules::len_build(),
        rules::let_partial_eval(),
        rules::let_app(),
        rules::fun_to_let(),
    ]))
}

/// `fusion = buildGet <+ lenBuild <+ buildEta`
pub fn fusion() -> Strategy<Expr> {
    named("fusion", vec![], || {
        choice(vec![
            rules::build_get(),
            rules::len_build(),
            rules::build_eta(),
        ])
    })
}

/// `tuples = pairFst <+ pairSnd <+ pairEta`
pub fn tuples() -> Strategy<Expr> {
    named("tuples", vec![], || {
        choice(vec![
            rules::pair_fst(),
            rules::pair_snd(),
            rules::pair_eta(),
        ])
    })
}

/// `lets = funToLet <+ letInline <+ deadLet <+ letPairSplit <+ letApp <+ appLet`
/// (a `let` is inlined only where that duplicates no work)
pub fn lets() -> Strategy<Expr> {
    named("lets", vec![], || {
        choice(vec![
            rules::fun_to_let(),
            rules::let_inline(),
            rules::dead_let(),
            rules::let_pair_split(),
            rules::let_app(),
            rules::app_let(),
        ])
    })
}

/// `inlineLets = funToLet <+ letPartialEval <+ letApp <+ appLet` (every `let`
/// is inlined, as the F-smooth paper's partial evaluation does: this may
/// repeat work)
pub fn inline_lets() -> Strategy<Expr> {
    named("inlineLets", vec![], || {
        choice(vec![
            rules::fun_to_let(),
            rules::let_partial_eval(),
            rules::let_app(),
            rules::app_let(),
        ])
    })
}

/// `sharing = loopInvariant <+ shareCommon`
pub fn sharing() -> Strategy<Expr> {
    named("sharing", vec![], || {
        choice(vec![rules::loop_invariant(), rules::share_common()])
    })
}

/// `conditionals = ifTrue <+ ifFalse <+ ifSame <+ ifApp <+ ifPartialEval`
pub fn conditionals() -> Strategy<Expr> {
    named("conditionals", vec![], || {
        choice(vec![
            rules::if_true(),
            rules::if_false(),
            rules::if_same(),
            rules::if_app(),
            rules::if_partial_eval(),
        ])
    })
}

/// `loops = foldZero <+ foldId <+ foldConditional <+ loopFission <+ buildIndexRange <+ foldIndexRange`
pub fn loops() -> Strategy<Expr> {
    named("loops", vec![], || {
        choice(vec![
            rules::fold_zero(),
            rules::fold_id(),
            rules::fold_conditional(),
            rules::loop_fission(),
            rules::build_index_range(),
            rules::fold_index_range(),
        ])
    })
}

/// `algebra = constantFold <+ addZero <+ subZero <+ zeroSub <+ mulOne <+ mulZero
/// <+ divOne <+ negNeg <+ subSelf <+ boolSimplify <+ factorization`
pub fn algebra() -> Strategy<Expr> {
    named("algebra", vec![], || {
        choice(vec![
            rules::constant_fold(),
            rules::add_zero(),
            rules::sub_zero(),
            rules::zero_sub(),
            rules::mul_one(),
            rules::mul_zero(),
            rules::div_one(),
            rules::neg_neg(),
            rules::sub_self(),
            rules::bool_simplify(),
            rules::factorization(),
        ])
    })
}

/// The simplifications that never add work, to a normal form, then loop
/// invariants hoisted and common sub-expressions shared, then the first again:
/// `simplify = normalize(core) ; normalize(sharing) ; normalize(core)` with
/// `core = fusion <+ tuples <+ lets <+ conditionals <+ loops <+ algebra`.
pub fn simplify() -> Strategy<Expr> {
    named("simplify", vec![], || {
        let core = || {
            normalize(choice(vec![
                fusion(),
                tuples(),
                lets(),
                conditionals(),
                loops(),
                algebra(),
            ]))
        };
        seq(core(), seq(normalize(sharing()), core()))
    })
}

/// The F-smooth paper's simplification, which inlines every `let` (and so may
/// repeat work: a value used inside a loop is recomputed in every iteration),
/// followed by the sharing of [`simplify`]:
/// `inlineAll = normalize(fusion <+ tuples <+ inlineLets <+ conditionals <+ loops <+ algebra) ; simplify`.
pub fn inline_all() -> Strategy<Expr> {
    named("inlineAll", vec![], || {
        let all = normalize(choice(vec![
            fusion(),
            tuples(),
            inline_lets(),
            conditionals(),
            loops(),
            algebra(),
        ]));
        seq(all, simplify())
    })
}

/// A named strategy's entry in [`NAMED`].
pub struct NamedInfo {
    /// Its name in strategy expressions.
    pub name: &'static str,
    /// What it is.
    pub description: &'static str,
    /// Builds it.
    pub make: fn() -> Strategy<Expr>,
}

/// The named strategies.
pub const NAMED: &[NamedInfo] = &[
    NamedInfo {
        name: "simplify",
        description: "normalize(core) ; normalize(sharing) ; normalize(core) with core = fusion <+ tuples <+ lets <+ conditionals <+ loops <+ algebra (never adds work)",
        make: simplify,
    },
    NamedInfo {
        name: "inlineAll",
        description: "normalize(fusion <+ tuples <+ inlineLets <+ conditionals <+ loops <+ algebra) ; simplify (the paper's: may repeat work)",
        make: inline_all,
    },
    NamedInfo {
        name: "fig5_13",
        description: "normalize(buildGet <+ lenBuild <+ letPartialEval <+ letApp <+ funToLet) (thesis Figure 5.13)",
        make: fig_5_13,
    },
    NamedInfo {
        name: "fusion",
        description: "buildGet <+ lenBuild <+ buildEta",
        make: fusion,
    },
    NamedInfo {
        name: "tuples",
        description: "pairFst <+ pairSnd <+ pairEta",
        make: tuples,
    },
    NamedInfo {
        name: "lets",
        description: "funToLet <+ letInline <+ deadLet <+ letPairSplit <+ letApp <+ appLet",
        make: lets,
    },
    NamedInfo {
        name: "inlineLets",
        description: "funToLet <+ letPartialEval <+ letApp <+ appLet",
        make: inline_lets,
    },
    NamedInfo {
        name: "sharing",
        description: "loopInvariant <+ shareCommon",
        make: sharing,
    },
    NamedInfo {
        name: "conditionals",
        description: "ifTrue <+ ifFalse <+ ifSame <+ ifApp <+ ifPartialEval",
        make: conditionals,
    },
    NamedInfo {
        name: "loops",
        description: "foldZero <+ foldId <+ foldConditional <+ loopFission <+ buildIndexRange <+ foldIndexRange",
        make: loops,
    },
    NamedInfo {
        name: "algebra",
        description: "constantFold <+ addZero <+ subZero <+ zeroSub <+ mulOne <+ mulZero <+ divOne <+ negNeg <+ subSelf <+ boolSimplify <+ factorization",
        make: algebra,
    },
];
