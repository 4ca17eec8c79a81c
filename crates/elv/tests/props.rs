//! Property tests: printing and parsing back are inverse, and no input makes
//! loading (or applying what was loaded) panic.

mod common;

use common::*;
use elevate::Ctx;
use proptest::prelude::*;
use proptest::sample::select;

type S = elevate::Strategy<E>;

/// Definitions the generated strategies may use.
const DEFS: &str = "def myTry(s) = s <+ id\ndef both(a, b) = a ; b\ndef nothing = fail";

fn arb_strategy() -> impl Strategy<Value = S> {
    let leaf = prop_oneof![
        Just(elevate::id()),
        Just(elevate::fail()),
        Just(add_zero()),
        Just(mul_one()),
        Just(commute()),
        Just(is_add()),
        Just(elevate::named("nothing", vec![], elevate::fail)),
        (0i64..100).prop_map(set_num),
        prop::collection::vec(-5i64..5, 0..4).prop_map(is_num_in),
    ];
    leaf.prop_recursive(5, 48, 2, |inner| {
        let unary: [fn(S) -> S; 13] = [
            elevate::try_,
            elevate::repeat,
            elevate::not,
            elevate::all,
            elevate::one,
            elevate::some,
            elevate::top_down,
            elevate::bottom_up,
            elevate::all_top_down,
            elevate::all_bottom_up,
            elevate::try_all,
            elevate::normalize,
            left,
        ];
        prop_oneof![
            (select(unary.to_vec()), inner.clone()).prop_map(|(f, s)| f(s)),
            (inner.clone(), inner.clone()).prop_map(|(a, b)| elevate::seq(a, b)),
            (inner.clone(), inner.clone()).prop_map(|(a, b)| elevate::lchoice(a, b)),
            (0usize..4, inner.clone()).prop_map(|(n, s)| elevate::repeat_n(n, s)),
            (select(vec!["add", "mul"]), inner.clone()).prop_map(|(op, s)| arg_of(op, s).unwrap()),
            inner
                .clone()
                .prop_map(|s| elevate::named("myTry", vec![s.to_string()], elevate::id)),
            (inner.clone(), inner).prop_map(|(a, b)| elevate::named(
                "both",
                vec![a.to_string(), b.to_string()],
                elevate::id
            )),
        ]
    })
}

const VOCAB: &[&str] = &[
    "def",
    "def a =",
    "def f(s) =",
    "def g(t, s) =",
    "def n =",
    "a",
    "b",
    "f",
    "g",
    "n",
    "s",
    "t",
    "=",
    "(",
    ")",
    ",",
    ";",
    ";;",
    "<+",
    "@",
    "[",
    "]",
    "0",
    "3",
    "-2",
    "id",
    "fail",
    "topDown",
    "addZero",
    "mulOne",
    "argOf",
    "add",
    "left",
    "try",
    "repeat",
    "repeatN",
    "setNum",
    "isNumIn",
    "twice",
    "outermost",
    "isAdd",
    "//",
    "\n",
    "€",
    "$",
];

fn arb_expr() -> impl Strategy<Value = String> {
    let leaf = select(vec![
        "id",
        "fail",
        "addZero",
        "mulOne",
        "commute",
        "isAdd",
        "a",
        "b",
        "f",
        "g",
        "s",
        "t",
        "n",
        "topDown",
        "left",
        "argOf(add)",
        "3",
        "-1",
        "[1, 2]",
        "add",
        "setNum(2)",
    ])
    .prop_map(str::to_string);
    leaf.prop_recursive(4, 24, 3, |inner| {
        prop_oneof![
            (
                inner.clone(),
                select(vec![";", ";;", "<+", "@"]),
                inner.clone()
            )
                .prop_map(|(a, op, b)| format!("{a} {op} {b}")),
            (
                select(vec![
                    "f",
                    "g",
                    "a",
                    "try",
                    "topDown",
                    "left",
                    "argOf",
                    "repeatN",
                    "setNum",
                    "isNumIn",
                    "twice",
                    "outermost",
                    "s",
                    "t",
                ]),
                prop::collection::vec(inner.clone(), 1..3)
            )
                .prop_map(|(f, args)| format!("{f}({})", args.join(", "))),
            inner.clone().prop_map(|e| format!("({e})")),
            prop::collection::vec(inner, 0..3).prop_map(|es| format!("[{}]", es.join(", "))),
        ]
    })
}

fn arb_file() -> impl Strategy<Value = String> {
    let def = (
        select(vec!["a", "b", "f", "g", "n"]),
        prop::sample::subsequence(vec!["s", "t", "n"], 0..3),
        arb_expr(),
    )
        .prop_map(|(name, params, body)| {
            if params.is_empty() {
                format!("def {name} = {body}\n")
            } else {
                format!("def {name}({}) = {body}\n", params.join(", "))
            }
        });
    prop::collection::vec(def, 1..5).prop_map(|defs| defs.concat())
}

/// Loads `src`; if it loads, builds, prints and applies what it defines (with a
/// small budget) and evaluates `src` as an expression too. Nothing may panic.
fn exercise(src: &str) {
    let r = registry();
    match elv::load(src, &r) {
        Ok(m) => {
            let p = add(mul(num(1), add(var("x"), num(0))), num(1));
            let names: Vec<(String, usize)> =
                m.definitions().map(|(n, a)| (n.to_string(), a)).collect();
            for (name, arity) in names {
                let s = match arity {
                    0 => m.strategy(&name),
                    _ => m
                        .expression(&format!("{name}({})", vec!["id"; arity].join(", ")))
                        .map_err(|mut e| e.remove(0)),
                };
                if let Ok(s) = s {
                    let _ = s.to_string();
                    let _ = Ctx::default().with_budget(300).run(&s, &p);
                }
            }
            let _ = m.expression("a ; b");
        }
        Err(errors) => {
            assert!(!errors.is_empty());
            for e in errors {
                assert!(e.span.start <= e.span.end && e.span.end as usize <= src.len());
                let _ = e.render("fuzz.elv", src);
            }
        }
    }
    if let Ok(m) = elv::load(DEFS, &r) {
        if let Err(errors) = m.expression(src) {
            for e in errors {
                assert!(e.span.end as usize <= src.len());
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn printing_and_parsing_back_are_inverse(s in arb_strategy()) {
        let m = load(DEFS);
        let printed = s.to_string();
        let back = match m.expression(&printed) {
            Ok(back) => back,
            Err(e) => panic!("{printed}: {}", e[0].render("p", &printed)),
        };
        prop_assert_eq!(&back, &s, "{}", printed);
        prop_assert_eq!(back.to_string(), printed);
    }

    #[test]
    fn random_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..300)) {
        exercise(&String::from_utf8_lossy(&bytes));
    }

    #[test]
    fn token_soup_never_panics(tokens in prop::collection::vec(select(VOCAB.to_vec()), 0..40)) {
        exercise(&tokens.join(" "));
    }

    #[test]
    fn random_files_never_panic(src in arb_file()) {
        exercise(&src);
    }
}

#[test]
fn some_random_files_load() {
    // The generator of random files is useful only if some of them load.
    use proptest::strategy::ValueTree;
    use proptest::test_runner::TestRunner;
    let mut runner = TestRunner::deterministic();
    let gen = arb_file();
    let loaded = (0..500)
        .filter(|_| {
            let src = gen.new_tree(&mut runner).unwrap().current();
            elv::load(&src, &registry()).is_ok()
        })
        .count();
    assert!(loaded >= 25, "only {loaded} of 500 random files loaded");
}
