//! Strategies over F-smooth built from the rules with the generic ELEVATE
//! combinators (thesis §5.7), and a small reader for strategy expressions such
//! as `normalize(buildGet <+ lenBuild <+ letPartialEval <+ letApp <+ funToLet)`.
//!
//! The reader understands the generic combinators (`id`, `fail`, `try`,
//! `repeat`, `repeatN(n, s)`, `not`, `all`, `one`, `some`, `topDown`,
//! `bottomUp`, `allTopDown`, `allBottomUp`, `tryAll`, `normalize`), `;`
//! (binds tighter) and `<+` (both right-associative), parentheses, every rule
//! of [`crate::rules::RULES`] and the named strategies of [`NAMED`]. It stands
//! in for the `.elv` strategy-file language until that is shared by all
//! front ends.

use crate::expr::Expr;
use crate::rules::{self, RULES};
use diagnostics::{Diagnostic, Span};
use elevate::{
    all, all_bottom_up, all_top_down, bottom_up, fail, id, lchoice, named, normalize, not, one,
    repeat, repeat_n, seq, some, top_down, try_, try_all, Strategy,
};

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

/// The strategy a name stands for: a named strategy or a rule.
pub fn strategy_by_name(name: &str) -> Option<Strategy<Expr>> {
    NAMED
        .iter()
        .find(|n| n.name == name)
        .map(|n| (n.make)())
        .or_else(|| rules::rule_by_name(name))
}

/// A combinator that takes one strategy.
type Combinator = fn(Strategy<Expr>) -> Strategy<Expr>;

/// The combinators that take one strategy.
const UNARY: &[(&str, Combinator)] = &[
    ("try", try_),
    ("repeat", repeat),
    ("not", not),
    ("all", all),
    ("one", one),
    ("some", some),
    ("topDown", top_down),
    ("bottomUp", bottom_up),
    ("allTopDown", all_top_down),
    ("allBottomUp", all_bottom_up),
    ("tryAll", try_all),
    ("normalize", normalize),
];

/// Reads a strategy expression (see the module documentation).
pub fn parse_strategy(source: &str) -> Result<Strategy<Expr>, Diagnostic> {
    let mut p = StrategyParser {
        toks: tokenize(source)?,
        pos: 0,
        end: Span::new(source.len(), source.len()),
        depth: 0,
    };
    let s = p.choice()?;
    match p.toks.get(p.pos) {
        None => Ok(s),
        Some((t, span)) => Err(Diagnostic::new(
            *span,
            format!("expected `;`, `<+` or the end, found `{t}`"),
        )),
    }
}

fn tokenize(source: &str) -> Result<Vec<(String, Span)>, Diagnostic> {
    let mut out = Vec::new();
    let mut chars = source.char_indices().peekable();
    while let Some(&(i, c)) = chars.peek() {
        if c.is_whitespace() {
            chars.next();
        } else if c.is_ascii_alphanumeric() || c == '_' {
            let mut j = i;
            while let Some(&(k, d)) = chars.peek() {
                if d.is_ascii_alphanumeric() || d == '_' {
                    j = k + d.len_utf8();
                    chars.next();
                } else {
                    break;
                }
            }
            out.push((source[i..j].to_string(), Span::new(i, j)));
        } else if source[i..].starts_with("<+") {
            chars.next();
            chars.next();
            out.push(("<+".to_string(), Span::new(i, i + 2)));
        } else if "();,".contains(c) {
            chars.next();
            out.push((c.to_string(), Span::new(i, i + 1)));
        } else {
            return Err(Diagnostic::new(
                Span::new(i, i + c.len_utf8()),
                format!("unexpected character `{c}` in a strategy"),
            ));
        }
    }
    Ok(out)
}

struct StrategyParser {
    toks: Vec<(String, Span)>,
    pos: usize,
    end: Span,
    depth: usize,
}

impl StrategyParser {
    fn peek(&self) -> Option<&str> {
        self.toks.get(self.pos).map(|t| t.0.as_str())
    }

    fn span(&self) -> Span {
        self.toks.get(self.pos).map(|t| t.1).unwrap_or(self.end)
    }

    fn expect(&mut self, t: &str) -> Result<(), Diagnostic> {
        if self.peek() == Some(t) {
            self.pos += 1;
            Ok(())
        } else {
            Err(self.unexpected(&format!("`{t}`")))
        }
    }

    fn unexpected(&self, what: &str) -> Diagnostic {
        match self.peek() {
            Some(t) => Diagnostic::new(self.span(), format!("expected {what}, found `{t}`")),
            None => Diagnostic::new(self.end, format!("expected {what}, found the end")),
        }
    }

    fn choice(&mut self) -> Result<Strategy<Expr>, Diagnostic> {
        self.depth += 1;
        if self.depth > 100 {
            return Err(Diagnostic::new(
                self.span(),
                "the strategy is nested too deeply",
            ));
        }
        let left = self.seq()?;
        let r = if self.peek() == Some("<+") {
            self.pos += 1;
            Ok(lchoice(left, self.choice()?))
        } else {
            Ok(left)
        };
        self.depth -= 1;
        r
    }

    fn seq(&mut self) -> Result<Strategy<Expr>, Diagnostic> {
        let left = self.atom()?;
        if self.peek() == Some(";") {
            self.pos += 1;
            self.depth += 1;
            if self.depth > 100 {
                return Err(Diagnostic::new(
                    self.span(),
                    "the strategy is nested too deeply",
                ));
            }
            let right = self.seq()?;
            self.depth -= 1;
            return Ok(seq(left, right));
        }
        Ok(left)
    }

    fn atom(&mut self) -> Result<Strategy<Expr>, Diagnostic> {
        let span = self.span();
        let Some(name) = self.peek().map(str::to_string) else {
            return Err(self.unexpected("a strategy"));
        };
        if name == "(" {
            self.pos += 1;
            let s = self.choice()?;
            self.expect(")")?;
            return Ok(s);
        }
        if !name.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_') {
            return Err(self.unexpected("a strategy"));
        }
        self.pos += 1;
        match name.as_str() {
            "id" => return Ok(id()),
            "fail" => return Ok(fail()),
            "repeatN" => {
                self.expect("(")?;
                let nspan = self.span();
                let n: usize = match self.peek().map(str::parse) {
                    Some(Ok(n)) => n,
                    _ => {
                        return Err(Diagnostic::new(
                            nspan,
                            "`repeatN` needs a count: `repeatN(3, s)`",
                        ))
                    }
                };
                self.pos += 1;
                self.expect(",")?;
                let s = self.choice()?;
                self.expect(")")?;
                return Ok(repeat_n(n, s));
            }
            _ => {}
        }
        if let Some((_, make)) = UNARY.iter().find(|(n, _)| *n == name) {
            self.expect("(")?;
            let s = self.choice()?;
            self.expect(")")?;
            return Ok(make(s));
        }
        strategy_by_name(&name).ok_or_else(|| {
            Diagnostic::new(span, format!("unknown strategy `{name}`")).with_note(format!(
                "known: the combinators id, fail, {}, repeatN; the strategies {}; the rules {}",
                UNARY.iter().map(|u| u.0).collect::<Vec<_>>().join(", "),
                NAMED.iter().map(|n| n.name).collect::<Vec<_>>().join(", "),
                RULES.iter().map(|r| r.name).collect::<Vec<_>>().join(", ")
            ))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_and_prints_strategies() {
        let s = parse_strategy(
            "normalize(buildGet <+ lenBuild <+ letPartialEval <+ letApp <+ funToLet)",
        )
        .unwrap();
        assert_eq!(s, fig_5_13());
        assert_eq!(
            s.to_string(),
            "normalize(buildGet <+ lenBuild <+ letPartialEval <+ letApp <+ funToLet)"
        );
        let s = parse_strategy("topDown(funToLet) ; try(repeatN(2, one(id))) <+ simplify").unwrap();
        assert_eq!(
            s.to_string(),
            "topDown(funToLet) ; try(repeatN(2, one(id))) <+ simplify"
        );
    }

    #[test]
    fn reports_unknown_names_and_bad_syntax() {
        let e = parse_strategy("normalize(bogus)").unwrap_err();
        assert_eq!(e.span, Span::new(10, 15));
        assert!(e.message.contains("unknown strategy `bogus`"));
        assert!(parse_strategy("try(").is_err());
        assert!(parse_strategy("a <+").is_err());
        assert!(parse_strategy("id id").is_err());
        assert!(parse_strategy("repeatN(x, id)").is_err());
        assert!(parse_strategy("$").is_err());
        assert!(parse_strategy(&"try(".repeat(1000)).is_err());
    }
}
