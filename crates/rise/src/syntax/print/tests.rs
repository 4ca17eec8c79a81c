//! The printer's tests.

use super::*;
use crate::syntax::{parse_expr, parse_program};

fn roundtrip(src: &str) -> String {
    let e = parse_expr(src).unwrap_or_else(|err| panic!("{src}: {err}"));
    let printed = print_expr(&e);
    let back = parse_expr(&printed).unwrap_or_else(|err| panic!("{printed}: {err}"));
    assert!(e.alpha_eq(&back), "{src}\nprinted as\n{printed}");
    printed
}

#[test]
fn prints_minimal_syntax() {
    for (src, out) in [
        ("a + b * c", "a + b * c"),
        ("(a + b) * c", "(a + b) * c"),
        ("a - (b - c)", "a - (b - c)"),
        ("(a - b) - c", "a - b - c"),
        ("f (g x) y", "f (g x) y"),
        ("add a", "add a"),
        ("add", "add"),
        ("add a b c", "(a + b) c"),
        ("-f x", "-f x"),
        ("neg 3", "neg 3"),
        ("neg (3 x)", "neg (3 x)"),
        ("neg (-3)", "-(-3)"),
        ("f (-3) (-1.5f)", "f (-3) (-1.5f)"),
        ("!(a < b)", "!(a < b)"),
        ("(a, b + c)", "(a, b + c)"),
        ("(x : n.f32)", "(x : n.f32)"),
        ("fun x => fun y => x", "fun x y => x"),
        (
            "fun (x: f32) (y: f32) (n: nat) (m: nat) (a: data) => x",
            "fun (x y: f32) (n m: nat) (a: data) => x",
        ),
        ("fun (f: nat -> nat) => f", "fun (f: nat -> nat) => f"),
        ("(fun x => x) y", "(fun x => x) y"),
        ("f (fun x => x) y", "y |> f (fun x => x)"),
        ("f (g (fun x => x) y) z", "f (y |> g (fun x => x)) z"),
        ("(f x |> g) y", "g (f x) y"),
        (
            "(xs |> map f |> reduce add 0.0f) / 2.0f",
            "reduce add 0.0f (map f xs) / 2.0f",
        ),
        (
            "(xs |> map (fun x => x) |> reduce add 0.0f) / 2.0f",
            "(xs |> map (fun x => x) |> reduce add 0.0f) / 2.0f",
        ),
        (
            "xs |> split 32 |> map f |> join",
            "xs |> split 32 |> map f |> join",
        ),
        (
            "xs |> split n |> map f |> join",
            "xs |> split n |> map f |> join",
        ),
        ("map f xs", "map f xs"),
        ("fst (snd p)", "fst (snd p)"),
        ("transpose (map f xs)", "xs |> map f |> transpose"),
        ("idx (natAsIndex n i) xs", "idx (natAsIndex n i) xs"),
        ("zip (fst p) (snd p)", "zip (fst p) (snd p)"),
        ("map (map (map f))", "map (map (map f))"),
        (
            "reduce add 0.0f (map f (zip xs ys))",
            "zip xs ys |> map f |> reduce add 0.0f",
        ),
        (
            "padCst l r (generate (fun i => c)) (map (padCst l r c) xs)",
            "padCst l r (generate (fun i => c)) (map (padCst l r c) xs)",
        ),
        ("x |> (fun y => y) |> f", "f ((fun y => y) x)"),
        ("g x |> (fun y => y) |> f", "g x |> (fun y => y) |> f"),
        (
            "mapGlobal 0 (mapLocal(1) f)",
            "mapGlobal(0) (mapLocal(1) f)",
        ),
        (
            "f 1.0 2.5f 1e20f 1e-7 0.5f16 3u8 (-4i64) 7",
            "f 1.0 2.5f 1.0e20f 1.0e-7 0.5f16 3u8 (-4i64) 7",
        ),
    ] {
        assert_eq!(roundtrip(src), out, "{src}");
    }
}

#[test]
fn renames_unreadable_binders() {
    use crate::expr::ExprKind as K;
    use crate::span::Span;
    let mk = |k| Expr::new(k, Span::default());
    // fun map => map (map) where the inner one is the primitive
    let e = mk(K::Lambda(
        "map".into(),
        None,
        mk(K::App(mk(K::Var("map".into())), mk(K::Prim(Prim::Map)))),
    ));
    assert_eq!(print_expr(&e), "fun map_0 => map_0 map");
    let e = mk(K::Lambda("?a".into(), None, mk(K::Var("?a".into()))));
    assert_eq!(print_expr(&e), "fun a_0 => a_0");
    let e = mk(K::Lambda("fun".into(), None, mk(K::Var("fun_0".into()))));
    assert_eq!(print_expr(&e), "fun fun_1 => fun_0");
    // a binder named like a primitive it does not hide keeps its name
    let e = mk(K::Lambda("map".into(), None, mk(K::Var("map".into()))));
    assert_eq!(print_expr(&e), "fun map => map");
    let body = mk(K::App(
        mk(K::Var("mapGlobal".into())),
        mk(K::Prim(Prim::MapGlobal1)),
    ));
    let e = mk(K::Lambda("mapGlobal".into(), None, body));
    assert_eq!(
        print_expr(&e),
        "fun mapGlobal_0 => mapGlobal_0 mapGlobal(1)"
    );
}

#[test]
fn omits_implicit_arguments_and_prints_explicit_ones() {
    use crate::expr::ExprKind as K;
    use crate::span::Span;
    use crate::types::{Binder, DataType, TypeArg};
    use arith::Nat;
    let poly = crate::syntax::parse_type("{t: data} -> t -> t").unwrap();
    let id2 = Expr::typed(K::Var("id2".into()), poly, Span::default());
    let inst = Expr::new(
        K::DepApp(id2, TypeArg::Data(DataType::f32())),
        Span::default(),
    );
    let e = Expr::new(
        K::App(inst, Expr::new(K::Var("a".into()), Span::default())),
        Span::default(),
    );
    assert_eq!(print_expr(&e), "id2 a");
    let mk = |k| Expr::new(k, Span::default());
    let n = Nat::var(&arith::Var::new("n"));
    let split = |arg: Nat| mk(K::DepApp(mk(K::Prim(Prim::Split)), TypeArg::Nat(arg)));
    assert_eq!(print_expr(&split(n.clone())), "split n");
    assert_eq!(print_expr(&split(Nat::cst(32))), "split 32");
    assert_eq!(print_expr(&split(n * Nat::cst(32))), "split (n*32)");
    let lam = mk(K::DepLambda(
        Binder::new("n", crate::types::Kind::Nat),
        split(Nat::cst(2)),
    ));
    assert_eq!(print_expr(&lam), "fun (n: nat) => split 2");
}

#[test]
fn breaks_long_pipelines() {
    let src = "def f = fun xs => xs |> map (fun row => row |> map (fun x => x * 2.0f + 1.0f) |> reduce add 0.0f) |> padClamp 1 1 |> slide 3 1";
    let p = parse_program(src).unwrap();
    let printed = print_program(&p);
    assert_eq!(
        printed,
        "def f =\n  fun xs => xs\n    |> map (fun row => row |> map (fun x => x * 2.0f + 1.0f) |> reduce add 0.0f)\n    |> padClamp 1 1\n    |> slide 3 1\n"
    );
    let back = parse_program(&printed).unwrap();
    assert!(back.defs[0].body.alpha_eq(&p.defs[0].body));
}

#[test]
fn design_examples_print_as_written() {
    let src = "def dot = fun xs ys => zip xs ys |> map (fun p => fst p * snd p) |> reduce add 0.0f

def mm : {m n k: nat} -> m.k.f32 -> k.n.f32 -> m.n.f32 =
  fun a b => a |> map (fun row => transpose b |> map (fun col => dot row col))

def jacobi3 : {n: nat} -> n.f32 -> n.f32 =
  fun xs => xs |> padClamp 1 1 |> slide 3 1 |> map (fun nbh => reduce add 0.0f nbh)
";
    let p = parse_program(src).unwrap();
    assert_eq!(print_program(&p), src);
}
