//! The F-smooth examples of `examples/fsmooth/`: each one simplified,
//! differentiated, and the derivative simplified, every result checked with
//! the interpreter on random inputs (values before and after; derivatives
//! against finite differences).

use fsmooth::verify::{check_derivative, check_equivalent};
use fsmooth::{
    check_program, default_budget, diff_program, parse_program, simplify_program, Program,
};
use std::path::PathBuf;

fn examples() -> Vec<(String, Program)> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../examples/fsmooth");
    let mut out = Vec::new();
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "fsmooth") {
            let src = std::fs::read_to_string(&path).unwrap();
            let p = parse_program(&src).unwrap_or_else(|d| {
                panic!(
                    "{}: {}",
                    path.display(),
                    d.render(&path.display().to_string(), &src)
                )
            });
            out.push((path.file_stem().unwrap().to_string_lossy().into_owned(), p));
        }
    }
    out.sort_by(|a, b| a.0.cmp(&b.0));
    assert!(out.len() >= 8);
    out
}

fn example(name: &str) -> Program {
    examples().into_iter().find(|e| e.0 == name).unwrap().1
}

/// The default simplification (cost-guarded, as the command line runs it).
fn simplified(p: &Program) -> Program {
    simplify_program(p, false, default_budget(p))
        .unwrap()
        .rewritten
        .program
}

/// Enough random inputs were compared for the check to mean something.
fn enough(c: fsmooth::verify::Checked, what: &str) {
    assert!(
        c.compared >= 20,
        "{what}: only {} of the inputs were compared",
        c.compared
    );
}

#[test]
fn every_example_simplifies_without_changing_its_value() {
    for (name, p) in examples() {
        let t = check_program(&p).unwrap();
        let s = simplified(&p);
        assert_eq!(check_program(&s).unwrap(), t, "{name}: {s}");
        let c =
            check_equivalent(&p, &s, 60, 11, Some(1e-9)).unwrap_or_else(|e| panic!("{name}: {e}"));
        enough(c, &name);
        println!("{name}:\n  {}\n  ~> {}", p.body, s.body);
    }
}

#[test]
fn every_derivative_matches_finite_differences_before_and_after_simplification() {
    for (name, p) in examples() {
        let d = diff_program(&p).unwrap();
        let t = check_program(&p).unwrap();
        assert_eq!(check_program(&d).unwrap(), t.dual(), "{name}: {d}");
        let c = check_derivative(&p, &d, 60, 5, 1e-5).unwrap_or_else(|e| panic!("{name}: {e}"));
        enough(c, &name);
        let ds = simplified(&d);
        assert_eq!(check_program(&ds).unwrap(), t.dual(), "{name}: {ds}");
        check_equivalent(&d, &ds, 60, 6, Some(1e-9)).unwrap_or_else(|e| panic!("{name}: {e}"));
        let c = check_derivative(&p, &ds, 60, 7, 1e-5).unwrap_or_else(|e| panic!("{name}: {e}"));
        enough(c, &name);
        println!(
            "D[{name}] simplified ({} -> {} nodes):\n  {}",
            d.body.size(),
            ds.body.size(),
            ds.body
        );
    }
}

#[test]
fn vector_times_identity_simplifies_to_the_vector() {
    let s = simplified(&example("vector_eye"));
    assert_eq!(s.body.to_string(), "v");
}

#[test]
fn matmul_with_a_fused_transpose() {
    let s = simplified(&example("matmul"));
    assert_eq!(
        s.body.to_string(),
        "build (length A) (fun i -> build (length B[0]) (fun j -> ifold (fun s k -> s + A[i][k] * B[k][j]) 0.0 (length B)))"
    );
}

#[test]
fn derivative_of_vector_addition_adds_tangents() {
    let d = simplified(&diff_program(&example("vector_add")).unwrap());
    assert_eq!(
        d.to_string(),
        "input u : Array<(Double, Double)>\ninput v : Array<(Double, Double)>\n\
         build (length u) (fun (i: Index) -> let d1 = u[i] in let d2 = v[i] in (fst d1 + fst d2, snd d1 + snd d2))"
    );
}

#[test]
fn derivative_of_the_dot_product_is_split_into_two_loops() {
    let d = simplified(&diff_program(&example("dot")).unwrap());
    assert_eq!(
        d.body.to_string(),
        "(ifold (fun (s: Double) (i: Index) -> s + fst u[i] * fst v[i]) 0.0 (length u), \
         ifold (fun (s: Double) (i: Index) -> s + (snd u[i] * fst v[i] + fst u[i] * snd v[i])) 0.0 (length u))"
    );
}
