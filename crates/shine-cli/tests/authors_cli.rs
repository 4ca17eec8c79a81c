//! Help for strategy authors: `shine rules`, "did you mean", `shine rewrite --select`,
//! and failures that name the step that failed.

mod support;

use std::path::Path;
use support::shine_in;

fn root() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
}

/// `shine ARGS` in the repository root: success, stdout, stderr.
fn shine(args: &[&str]) -> (bool, String, String) {
    let (out, _) = shine_in(root(), args);
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn rules_lists_every_kind_with_parameters_and_equations() {
    let (ok, out, err) = shine(&["rules"]);
    assert!(ok, "{err}");
    for heading in [
        "combinators:",
        "traversals:",
        "predicates:",
        "rules:",
        "locations:",
        "scheduling strategies:",
    ] {
        assert!(
            out.contains(&format!("\n{heading}\n")) || out.starts_with(heading),
            "{heading}: {out}"
        );
    }
    assert!(
        out.contains("  splitJoin(n: Int)\n      map f ↦ split n"),
        "{out}"
    );
    assert!(
        out.contains("  storeInMemory(what: Strategy, how: Strategy)\n"),
        "{out}"
    );
    assert!(
        out.contains("  outermost(p: Strategy, s: Strategy)\n      topDown(p ; s)"),
        "{out}"
    );
}

#[test]
fn rules_filters_by_name_and_prints_json() {
    let (ok, out, err) = shine(&["rules", "fusion"]);
    assert!(ok, "{err}");
    assert!(out.contains("mapFusion"), "{out}");
    assert!(!out.contains("splitJoin"), "{out}");
    let (ok, out, err) = shine(&["rules", "tile", "--json"]);
    assert!(ok, "{err}");
    let list: serde_json::Value = serde_json::from_str(&out).expect("JSON");
    let tile = list
        .as_array()
        .and_then(|l| l.iter().find(|e| e["name"] == "tile"))
        .expect("tile is listed");
    assert_eq!(tile["kind"], "scheduling");
    assert_eq!(tile["params"][1]["name"], "n");
    assert_eq!(tile["params"][1]["kind"], "Int");
}

#[test]
fn rules_with_a_pattern_nothing_matches_suggests_names() {
    let (ok, _, err) = shine(&["rules", "mapFuson"]);
    assert!(!ok);
    assert!(
        err.contains("no rule, traversal or strategy name contains `mapFuson`"),
        "{err}"
    );
    assert!(err.contains("did you mean `mapFusion`?"), "{err}");
}

#[test]
fn unknown_names_get_the_closest_suggestions() {
    let (ok, _, err) = shine(&[
        "rewrite",
        "examples/mm.rise",
        "--def",
        "mmm",
        "--apply",
        "cpu",
    ]);
    assert!(!ok);
    assert!(err.contains("no definition named `mmm`"), "{err}");
    assert!(err.contains("did you mean `mm`?"), "{err}");
    let (ok, _, err) = shine(&[
        "rewrite",
        "examples/mm.rise",
        "--def",
        "mm",
        "--apply",
        "splitJion(4)",
    ]);
    assert!(!ok);
    assert!(err.contains("did you mean `splitJoin`?"), "{err}");
    let (ok, _, err) = shine(&["eval", "examples/mm.rise", "--def", "dto"]);
    assert!(!ok);
    assert!(err.contains("did you mean `dot`?"), "{err}");
}

const MM: [&str; 5] = ["rewrite", "examples/mm.rise", "--def", "mm", "--select"];

fn select(location: &str, more: &[&str]) -> (bool, String, String) {
    let mut args = MM.to_vec();
    args.push(location);
    args.extend(more);
    shine(&args)
}

#[test]
fn select_prints_each_picked_sub_term_with_its_path() {
    let (ok, out, err) = select("outermost(isTranspose)", &[]);
    assert!(ok, "{err}");
    assert!(
        out.starts_with("`outermost(isTranspose)` picks 1 sub-term of `mm`:\n"),
        "{out}"
    );
    assert!(
        out.contains("1. at body.body.function.argument.body.argument.function:\n   transpose"),
        "{out}"
    );
    let (ok, out, err) = select("outermost(mapNest(2))", &[]);
    assert!(ok, "{err}");
    assert!(out.contains("1. at body.body:\n   a\n"), "{out}");
}

#[test]
fn select_applies_the_strategy_first() {
    let (ok, out, err) = select("outermost(applied(map))", &[]);
    assert!(ok, "{err}");
    assert!(out.contains("1. at body.body:\n"), "{out}");
    let (ok, _, err) = select(
        "outermost(applied(map))",
        &[
            "--strategy",
            "examples/mm.elv",
            "--apply",
            "baseline ; lowerToC",
        ],
    );
    assert!(!ok, "after lowerToC no map is left");
    assert!(
        err.contains("`outermost(applied(map))` picks no sub-term of `mm`"),
        "{err}"
    );
}

#[test]
fn select_of_every_place_and_as_json() {
    let (ok, out, err) = select("allTopDown", &["--json"]);
    assert!(ok, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).expect("JSON");
    let picked = v["picked"].as_array().expect("a list");
    assert!(picked.len() > 20, "{out}");
    assert_eq!(picked[0]["path"], "the root");
    assert_eq!(picked[1]["path"], "body");
    let (ok, out, err) = select("argument @ body", &["--json"]);
    assert!(ok, "{err}");
    assert!(out.contains("\"picked\":[]"), "{out}");
}

#[test]
fn select_errors_point_into_the_location() {
    let (ok, _, err) = select("outermost(isMapp)", &[]);
    assert!(!ok);
    assert!(err.contains("<location>:1:11"), "{err}");
    assert!(err.contains("did you mean `isMap` or `isApp`?"), "{err}");
    assert!(!err.contains("__selected"), "{err}");
    let (ok, _, err) = shine(&["rewrite", "examples/mm.rise", "--def", "mm"]);
    assert!(!ok);
    assert!(err.contains("give --apply"), "{err}");
}

#[test]
fn a_failure_inside_a_rule_names_the_inner_step_and_its_term() {
    for location in ["inLambda", "body @ body"] {
        let apply = format!("storeInMemory(isApp(isTranspose), mapFusion) @ {location}");
        let (ok, _, err) = shine(&[
            "rewrite",
            "examples/mm.rise",
            "--def",
            "mm",
            "--apply",
            &apply,
        ]);
        assert!(!ok);
        assert!(
            err.contains(
                "while applying `storeInMemory(isApp(isTranspose), mapFusion)` at body.body: \
                 `mapFusion` is not applicable to `transpose b`"
            ),
            "{location}: {err}"
        );
    }
}

#[test]
fn a_failing_rule_names_the_term_it_failed_on() {
    let (ok, _, err) = shine(&[
        "rewrite",
        "examples/mm.rise",
        "--def",
        "mm",
        "--apply",
        "mapFusion @ body @ body",
    ]);
    assert!(!ok);
    assert!(
        err.contains("`mapFusion` is not applicable at body.body"),
        "{err}"
    );
    assert!(
        err.contains("`mapFusion` is not applicable to `a |> map (fun row =>"),
        "{err}"
    );
}
