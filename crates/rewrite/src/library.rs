//! Every RISE strategy under its paper name, for `.elv` strategy files: the
//! rules of [`crate::rules::RULES`], each under its row's name with its equation
//! as its description, and the predicates, normal forms, traversals and
//! scheduling strategies built from them.

use crate::normal_forms::*;
use crate::rules::{split_join, RuleInfo, RULES};
use crate::schedule::*;
use crate::traversals::*;
use crate::S;
use elv::{Kind, Registry, Value};
use rise::{Expr, Prim};

/// A registry entry: name, doc, constructor.
type Entry<F> = (&'static str, &'static str, F);
type SizeRule = fn(i64) -> S;
type Wrap = fn(S) -> S;

fn strat(s: S) -> Result<Value<Expr>, String> {
    Ok(Value::Strategy(s))
}

fn positive(v: &Value<Expr>, what: &str) -> Result<i64, String> {
    let n = v.as_int()?;
    if n <= 0 {
        return Err(format!("{what} must be positive, not {n}"));
    }
    Ok(n)
}

fn depth(v: &Value<Expr>) -> Result<usize, String> {
    let d = v.as_int()?;
    usize::try_from(d).map_err(|_| format!("the depth must not be negative, not {d}"))
}

fn ints(v: &Value<Expr>) -> Result<Vec<i64>, String> {
    v.as_list()?.iter().map(|x| x.as_int()).collect()
}

/// Registers a rule under its row's name, parameters and equation.
fn add_rule(r: &mut Registry<Expr>, rule: &'static RuleInfo) {
    r.add_named(rule.name, rule.params, rule.equation, move |a| {
        (rule.make)(a).map(Value::Strategy)
    });
}

/// Registers strategies without parameters.
fn add_simple(r: &mut Registry<Expr>, entries: Vec<Entry<fn() -> S>>) {
    for (name, doc, make) in entries {
        r.add(name, &[], doc, move |_| strat(make()));
    }
}

/// The registry of every RISE rule, traversal, predicate, location, normal form
/// and scheduling strategy, each in its group ([`Registry::set_group`]), with
/// DFNF as the normal form of `;;`.
pub fn registry() -> Registry<Expr> {
    use Kind::{Int, List, Strategy as St, Symbol};
    let mut r = Registry::new();
    r.set_group("normal form");
    add_simple(
        &mut r,
        vec![
            ("BENF", "beta-eta normal form", benf),
            ("DFNF", "data-flow normal form", dfnf),
        ],
    );
    r.set_group("predicate");
    add_simple(
        &mut r,
        vec![
            ("isMap", "the node is map", is_map),
            ("isReduce", "the node is reduce or reduceSeq", is_reduce),
            ("isTranspose", "the node is transpose", is_transpose),
            (
                "isToMem",
                "the node is toMem applied to its arguments",
                is_to_mem,
            ),
            ("isLambda", "the node is a lambda", is_lambda),
            ("isFst", "the node is fst", is_fst),
            ("isSnd", "the node is snd", is_snd),
            ("isLoop", "an applied map or reduction", is_loop),
            ("appliedMap", "isApp(isApp(isMap))", applied_map),
            (
                "appliedReduce",
                "isApp(isApp(isApp(isReduce)))",
                applied_reduce,
            ),
        ],
    );
    r.add_named(
        "mapNest",
        &[("d", Int)],
        "a DFNF map nest of depth d",
        |a| strat(map_nest(depth(&a[0])?)),
    );
    r.add_named(
        "isApp",
        &[("p", St)],
        "an application whose function satisfies p",
        |a| strat(is_app(a[0].as_strategy()?.clone())),
    );
    r.add_named(
        "applied",
        &[("prim", Symbol)],
        "the node is the primitive applied to all its arguments",
        |a| {
            let name = a[0].as_symbol()?;
            let p =
                Prim::from_name(name).ok_or_else(|| format!("`{name}` is not a RISE primitive"))?;
            strat(applied_prim(p))
        },
    );
    r.add_named(
        "isPrim",
        &[("prim", Symbol)],
        "the node is the primitive itself, its type-level arguments applied or not",
        |a| {
            let name = a[0].as_symbol()?;
            let p =
                Prim::from_name(name).ok_or_else(|| format!("`{name}` is not a RISE primitive"))?;
            strat(is_prim(p))
        },
    );
    r.set_group("rule");
    for rule in RULES {
        add_rule(&mut r, rule);
    }
    r.set_group("scheduling");
    add_simple(
        &mut r,
        vec![(
            "lowerToC",
            "map ~> mapSeq, reduce ~> reduceSeq everywhere",
            lower_to_c,
        )],
    );
    let int_rules: Vec<Entry<SizeRule>> = vec![
        (
            "split",
            "loop blocking of a map or a reduction",
            split_strategy,
        ),
        (
            "splitJoinMap",
            "splitJoin(n) under its name in RISE & Shine Listing 3",
            split_join,
        ),
    ];
    for (name, doc, make) in int_rules {
        r.add_named(name, &[("n", Int)], doc, move |a| {
            strat(make(positive(&a[0], "the size")?))
        });
    }
    r.add_named(
        "interchange",
        &[("d", Int)],
        "swap the loops at depths d and d+1",
        |a| strat(interchange(depth(&a[0])?)),
    );
    r.add_named(
        "tile",
        &[("m", Int), ("n", Int)],
        "2-D tiling (TVM's tile)",
        |a| {
            strat(tile(
                positive(&a[0], "the tile size")?,
                positive(&a[1], "the tile size")?,
            ))
        },
    );
    r.add_named(
        "tileND",
        &[("sizes", List)],
        "tiling of as many maps as sizes given",
        |a| {
            let ns = ints(&a[0])?;
            if ns.is_empty() || ns.iter().any(|n| *n <= 0) {
                return Err("tileND needs a non-empty list of positive sizes".into());
            }
            strat(tile_nd(ns))
        },
    );
    r.add_named(
        "reorder",
        &[("permutation", List)],
        "reorder the loops of a nest (1-based)",
        |a| {
            let perm = ints(&a[0])?;
            let n = perm.len() as i64;
            let mut sorted = perm.clone();
            sorted.sort_unstable();
            if sorted != (1..=n).collect::<Vec<_>>() {
                return Err(format!("reorder needs a permutation of 1..{n}"));
            }
            strat(reorder(perm.into_iter().map(|p| p as usize).collect()))
        },
    );
    let traversals: Vec<Entry<Wrap>> = vec![
        ("body", "the body of a lambda", body),
        ("function", "the function of an application", function),
        ("argument", "the argument of an application", argument),
        ("fmap", "the body of the function a map applies", fmap),
        ("inLambda", "inside the leading lambdas", in_lambda),
    ];
    r.set_group("traversal");
    for (name, doc, make) in traversals {
        r.add_named(name, &[("s", St)], doc, move |a| {
            strat(make(a[0].as_strategy()?.clone()))
        });
    }
    r.add_named(
        "argOf",
        &[("prim", Symbol), ("s", St)],
        "the argument of a primitive",
        |a| {
            let name = a[0].as_symbol()?;
            let p =
                Prim::from_name(name).ok_or_else(|| format!("`{name}` is not a RISE primitive"))?;
            strat(arg_of(p, a[1].as_strategy()?.clone()))
        },
    );
    r.set_group("location");
    r.add_named(
        "outermost",
        &[("p", St), ("s", St)],
        "topDown(p ; s)",
        |a| {
            strat(outermost(
                a[0].as_strategy()?.clone(),
                a[1].as_strategy()?.clone(),
            ))
        },
    );
    r.add_named(
        "innermost",
        &[("p", St), ("s", St)],
        "bottomUp(p ; s)",
        |a| {
            strat(innermost(
                a[0].as_strategy()?.clone(),
                a[1].as_strategy()?.clone(),
            ))
        },
    );
    r.add_named(
        "atLoop",
        &[("d", Int), ("s", St)],
        "s on the loop at depth d",
        |a| strat(at_loop(depth(&a[0])?, a[1].as_strategy()?.clone())),
    );
    r.set_group("scheduling");
    r.add_named(
        "storeInMemory",
        &[("what", St), ("how", St)],
        "compute what as how says, in memory",
        |a| {
            strat(store_in_memory(
                a[0].as_strategy()?.clone(),
                a[1].as_strategy()?.clone(),
            ))
        },
    );
    r.set_normal_form("DFNF", dfnf());
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_rule_is_registered_with_its_row() {
        let r = registry();
        for rule in RULES {
            let (_, params, doc) = r
                .names()
                .find(|b| b.0 == rule.name)
                .unwrap_or_else(|| panic!("{} is not registered", rule.name));
            let kinds: Vec<Kind> = rule.params.iter().map(|p| p.1).collect();
            assert_eq!(params, kinds.as_slice(), "{}", rule.name);
            assert_eq!(doc, rule.equation, "{}", rule.name);
        }
    }

    #[test]
    fn every_builtin_has_a_kind_and_named_parameters() {
        let kinds = [
            "combinator",
            "traversal",
            "normal form",
            "predicate",
            "rule",
            "location",
            "scheduling",
        ];
        for e in registry().entries() {
            assert!(kinds.contains(&e.group), "{}: {}", e.name, e.group);
            assert!(e.params.iter().all(|p| !p.0.is_empty()), "{}", e.name);
        }
    }

    #[test]
    fn a_rule_prints_with_its_arguments() {
        let s = crate::rules::copy_local(2, 3);
        assert_eq!(s.to_string(), "copyLocal(2, 3)");
        assert_eq!(crate::rules::to_map_warp().to_string(), "toMapWarp");
        let sig: Vec<String> = RULES.iter().map(|r| r.signature()).collect();
        assert!(
            sig.contains(&"storeLocal(what, how)".to_string()),
            "{sig:?}"
        );
    }
}
