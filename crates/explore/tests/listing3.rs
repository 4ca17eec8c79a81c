//! Constraint generation on CC'22 Listing 3 reproduces what the paper's text derives.

use explore::constraints::{generate, satisfies, Family, Options};
use explore::strategy::{Flavor, StrategyFile};
use explore::{solve, Problem};

const SOURCE: &str = include_str!("../../../examples/explore.rise");

/// Listing 3 with the products in local memory (the paper's §4.3 example).
const LOCAL: &str = "
def listing3Local = fun (y: f32) (z: f32) xs =>
  xs |> split 8 |> map (fun chunk =>
    toMem local (chunk |> split 4 |> map (fun c => c |> map (fun x => x * y)) |> join)
      (fun t => t |> map (fun v => v + z)))
  |> join
";

fn problem(text: &str, def: &str, options: Options) -> Problem {
    let program = rise::syntax::parse_program(text).expect("parses");
    let checked = rise::infer::check_program(&program).expect("checks");
    let prepared = rise::infer::prepare_def(&checked, def).expect("prepares");
    Problem::new(
        StrategyFile::default(),
        "DFNF",
        prepared.body,
        Flavor::OpenCl,
        options,
        vec![vec![("n".into(), 4)]],
        1024,
        elevate::DEFAULT_BUDGET,
    )
    .expect("problem")
}

// Maps in program order: A (outer), B (_ + z), C (over chunks of s1), D (_ * y).
const A: usize = 0;
const B: usize = 3;
const C: usize = 1;
const D: usize = 2;

fn assign(pairs: &[(usize, i32)]) -> Vec<i32> {
    let mut a = vec![0; 4];
    for &(m, v) in pairs {
        a[m] = v;
    }
    a
}

#[test]
fn listing3_tree_has_the_papers_chains() {
    let p = problem(SOURCE, "listing3", Options::paper());
    let t = p.base_tree();
    assert_eq!(t.maps.len(), 4);
    assert_eq!(t.maps[C].parent, Some(A));
    assert_eq!(t.maps[D].parent, Some(C));
    assert_eq!(t.maps[B].parent, Some(A));
    let mut chains = t.chains.clone();
    chains.sort();
    assert_eq!(chains, vec![vec![A, C, D], vec![A, B]]);
    assert_eq!(t.nested(A), vec![C, D, B]);
    assert_eq!(t.outer(D), vec![A, C]);
}

#[test]
fn listing3_constraints_as_the_text_derives_them() {
    let p = problem(SOURCE, "listing3", Options::paper());
    let cs = generate(p.base_tree(), &Options::paper());
    let count = |f: Family| cs.iter().filter(|c| c.family == f).count();
    // (3) and (6): one per nested pair: A>C, A>D, C>D, A>B.
    assert_eq!(count(Family::DuplicateScheduling), 4);
    assert_eq!(count(Family::LocalHierarchy), 4);
    // (4), (5): one per chain; (7): one per ordered pair of chains.
    assert_eq!(count(Family::LocalDimensionality), 2);
    assert_eq!(count(Family::WorkGroupDimensionality), 2);
    assert_eq!(count(Family::ExhaustiveIndexing), 2);
    // No toMem private or local: no memory constraints.
    assert_eq!(count(Family::PrivateMemory) + count(Family::LocalMemory), 0);

    // "mapC and mapD cannot be parallelized equally".
    assert!(!satisfies(
        &cs,
        &assign(&[(A, 30), (B, 31), (C, 31), (D, 31)])
    ));
    // "permits A, B, C to be wrg(0), lcl(0), lcl(0)" ...
    assert!(satisfies(&cs, &assign(&[(A, 20), (B, 10), (C, 10)])));
    // "... but not lcl(0), wrg(0), wrg(0)".
    assert!(!satisfies(&cs, &assign(&[(A, 10), (B, 20), (C, 20)])));
    // "if A and B are wrg(0) and lcl(0), there must be a lcl(0) among C and D".
    assert!(!satisfies(&cs, &assign(&[(A, 20), (B, 10)])));
    assert!(satisfies(&cs, &assign(&[(A, 20), (B, 10), (D, 10)])));
    // Nested mapGlobal in different dimensions ...
    assert!(satisfies(&cs, &assign(&[(A, 31), (B, 30), (C, 30)])));
    // ... but exhaustive indexing (7): a dimension used in chain (A, C, D) must be
    // used in chain (A, B) too.
    assert!(!satisfies(
        &cs,
        &assign(&[(A, 32), (B, 31), (C, 31), (D, 30)])
    ));
    // A work-group map needs its local map in the same dimension (4, 5).
    assert!(!satisfies(&cs, &assign(&[(A, 20), (B, 11), (C, 11)])));
}

#[test]
fn local_memory_scoping_as_in_section_4_3() {
    let text = format!("{SOURCE}\n{LOCAL}");
    let p = problem(&text, "listing3Local", Options::paper());
    let t = p.base_tree();
    assert!(t.maps[C].uses_local && t.maps[D].uses_local && t.maps[B].uses_local);
    assert!(!t.maps[A].uses_local);
    let cs = generate(t, &Options::paper());
    assert!(cs.iter().any(|c| c.family == Family::LocalMemory));
    // Legal: mapWrgA(0)(mapLclB(0) ... mapLclC(0)(mapSeqD(toLocal ...))).
    assert!(satisfies(&cs, &assign(&[(A, 20), (B, 10), (C, 10)])));
    // Illegal: mapGlbA(1)(mapGlbB(0) ... mapGlbC(0)(mapSeqD(toLocal ...))).
    assert!(!satisfies(&cs, &assign(&[(A, 31), (B, 30), (C, 30)])));
}

#[test]
fn solver_enumerates_exactly_the_satisfying_assignments() {
    let p = problem(SOURCE, "listing3", Options::paper());
    let space = p.space(&[1, 1, 1, 1]).expect("space");
    let all = solve::all_assignments(4, &space.domain);
    let mut want: Vec<Vec<i32>> = all
        .into_iter()
        .filter(|a| satisfies(&space.constraints, a))
        .collect();
    let mut got = solve::enumerate(
        4,
        &space.domain,
        &space.constraints,
        usize::MAX,
        &mut solve::seeded_rng(7),
    );
    want.sort();
    got.sort();
    assert_eq!(got, want);
    assert!(!got.is_empty() && got.len() < 10_000);
}

#[test]
fn candidates_are_strategies_that_elv_loads_and_applies() {
    let p = problem(SOURCE, "listing3", Options::paper());
    let splits = vec![1, 1, 1, 1];
    let space = p.space(&splits).expect("space");
    let mapping = assign(&[(A, 20), (B, 10), (C, 10)]);
    let text = p.strategy(&space, &mapping, "best").expect("strategy");
    assert!(text.starts_with("def best ="), "{text}");
    assert!(
        text.contains("toMapWorkGroup(0) @ function @ function @"),
        "{text}"
    );
    let lowered = p.lower(&space, &mapping).expect("applies").to_string();
    assert!(lowered.contains("mapWorkGroup"), "{lowered}");
    assert_eq!(lowered.matches("mapLocal").count(), 2, "{lowered}");
}
