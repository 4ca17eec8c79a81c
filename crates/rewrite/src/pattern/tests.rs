use super::*;
use rise::syntax::parse_expr;

/// The body of `def f : ty = fun p1 .. pk => body`, typed, under its `k` parameters.
fn typed(ty: &str, params: usize, body: &str) -> Expr {
    let src = format!("def f : {ty} = {body}");
    let checked = rise::infer::check_source(&src).unwrap_or_else(|e| panic!("{src}: {e}"));
    let mut e = rise::infer::prepare_def(&checked, "f").unwrap().body;
    while let ExprKind::DepLambda(_, b) = e.kind() {
        e = b.clone();
    }
    for _ in 0..params {
        let ExprKind::Lambda(_, _, b) = e.kind() else {
            panic!("{src}: fewer than {params} parameters")
        };
        e = b.clone();
    }
    e
}

fn parse(src: &str) -> Expr {
    parse_expr(src).unwrap_or_else(|e| panic!("{src}: {e}"))
}

fn pattern(src: &str) -> Pattern {
    Pattern::parse(src).unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn lambdas_match_up_to_renaming_of_their_parameters() {
    let first = pattern("fun a b => a");
    assert!(first.matches(&parse("fun x y => x")).is_some());
    assert!(first.matches(&parse("fun y x => y")).is_some());
    assert!(first.matches(&parse("fun x y => y")).is_none());
    // The inner `x` shadows the outer one.
    assert!(first.matches(&parse("fun x x => x")).is_none());
    assert!(pattern("fun a b => b")
        .matches(&parse("fun x x => x"))
        .is_some());

    let e = typed(
        "{n: nat} -> n.f32 -> n.f32",
        1,
        "fun xs => map (fun y => neg y) xs",
    );
    let b = pattern("map (fun a => f a) xs")
        .matches(&e)
        .expect("matches");
    assert_eq!(b.term("f"), Some(&parse("neg")));
    assert_eq!(b.term("xs"), Some(&parse("xs")));
}

#[test]
fn variables_cannot_match_terms_with_variables_bound_in_the_pattern() {
    let eta = pattern("fun x => f x");
    assert!(eta.matches(&parse("fun y => add y y")).is_none());
    let b = eta.matches(&parse("fun y => add z y")).expect("matches");
    assert_eq!(b.term("f"), Some(&parse("add z")));
}

#[test]
fn repeated_variables_match_equal_terms() {
    let twice = pattern("zip xs xs");
    assert!(twice.matches(&parse("zip a a")).is_some());
    assert!(twice.matches(&parse("zip a b")).is_none());
    let fused = pattern("map f (map f xs)");
    let same = parse("map (fun x => neg x) (map (fun y => neg y) xs)");
    assert!(fused.matches(&same).is_some());
    let other = parse("map (fun x => neg x) (map (fun y => y) xs)");
    assert!(fused.matches(&other).is_none());
}

#[test]
fn nat_arguments_are_variables_or_constants() {
    let e = typed(
        "{n: nat} -> (n*4).f32 -> n.4.f32",
        1,
        "fun xs => split 4 xs",
    );
    let b = pattern("split n xs").matches(&e).expect("matches");
    assert_eq!(b.type_arg("n"), Some(&TypeArg::Nat(Nat::cst(4))));
    assert!(pattern("split 4 xs").matches(&e).is_some());
    assert!(pattern("split 2 xs").matches(&e).is_none());

    let slide = |sz: i64, sp: i64| {
        let ty = format!("{{n: nat}} -> ({sp}*n+{sz}).f32 -> (n+1).{sz}.f32");
        typed(&ty, 1, &format!("fun xs => slide {sz} {sp} xs"))
    };
    let square = pattern("slide n n xs");
    assert!(square.matches(&slide(3, 3)).is_some());
    assert!(square.matches(&slide(3, 1)).is_none());
    let b = pattern("slide n s xs")
        .matches(&slide(3, 1))
        .expect("matches");
    assert_eq!(b.type_arg("s"), Some(&TypeArg::Nat(Nat::cst(1))));
}

#[test]
fn map_variables_match_every_kind_of_map() {
    let ty = "{n m: nat} -> n.m.f32 -> m.n.f32";
    let e = typed(ty, 1, "fun xs => transpose (mapPar (mapSeq neg) xs)");
    let rw = Rewrite::parse("transpose (map (map' f) xs) ↦ map (map' f) (transpose xs)")
        .expect("compiles");
    let b = rw.lhs().matches(&e).expect("matches");
    assert_eq!(
        (b.map("map"), b.map("map'")),
        (Some(Prim::MapPar), Some(Prim::MapSeq))
    );
    let out = rw.apply(&e, &mut NameGen::new()).expect("applies");
    assert_eq!(out, parse("mapPar (mapSeq neg) (transpose xs)"));

    // One variable, one kind.
    let fused = pattern("map f (map g xs)");
    let ty = "{n: nat} -> n.f32 -> n.f32";
    let same = typed(ty, 1, "fun xs => mapSeq neg (mapSeq neg xs)");
    let mixed = typed(ty, 1, "fun xs => mapSeq neg (mapPar neg xs)");
    assert_eq!(
        fused.matches(&same).and_then(|b| b.map("map")),
        Some(Prim::MapSeq)
    );
    assert!(fused.matches(&mixed).is_none());
    // Other primitives match only themselves.
    assert!(pattern("mapSeq f xs")
        .matches(&typed(ty, 1, "fun xs => map neg xs"))
        .is_none());
    assert!(pattern("map f xs")
        .matches(&typed(
            ty,
            1,
            "fun xs => reduceSeq add 0.0f xs |> fun s => generate (fun i => s)"
        ))
        .is_none());
}

#[test]
fn arguments_match_their_eta_expansion() {
    let ty = "{n m: nat} -> n.m.f32 -> n.m.f32";
    let e = typed(ty, 1, "fun xs => map (fun r => mapSeq neg r) xs");
    let b = pattern("map (map' f) xs").matches(&e).expect("matches");
    assert_eq!(b.term("f"), Some(&parse("neg")));
    assert_eq!(b.map("map'"), Some(Prim::MapSeq));
    // A variable takes the argument as it is.
    let b = pattern("map f xs").matches(&e).expect("matches");
    assert_eq!(b.term("f"), Some(&parse("fun r => mapSeq neg r")));
    // Not when the parameter is used elsewhere.
    let e = typed(
        "{n: nat} -> n.n.f32 -> n.n.f32",
        1,
        "fun xs => map (fun r => map (fun x => x) r) xs",
    );
    assert!(pattern("map (map' f) xs").matches(&e).is_some());
    let e = typed(
        "{n: nat} -> n.n.f32 -> n.n.n.f32",
        1,
        "fun xs => map (fun r => map (fun x => r) r) xs",
    );
    assert!(pattern("map (map' f) xs").matches(&e).is_none());
}

#[test]
fn type_annotations_match_the_type_of_the_term() {
    let two_d = pattern("id (e : m.n.t)");
    let e = typed("{n: nat} -> n.3.f32 -> n.3.f32", 1, "fun xs => id xs");
    let b = two_d.matches(&e).expect("matches");
    assert_eq!(b.type_arg("n"), Some(&TypeArg::Nat(Nat::cst(3))));
    assert_eq!(b.type_arg("t"), Some(&TypeArg::Data(DataType::f32())));
    let three_d = typed("{n: nat} -> n.3.2.f32 -> n.3.2.f32", 1, "fun xs => id xs");
    assert!(two_d.matches(&three_d).is_some());
    let one_d = typed("{n: nat} -> n.f32 -> n.f32", 1, "fun xs => id xs");
    assert!(two_d.matches(&one_d).is_none());
    assert!(pattern("id (e : n.f32)").matches(&one_d).is_some());
    assert!(pattern("id (e : n.i32)").matches(&one_d).is_none());
    // Untyped terms do not match an annotation.
    assert!(two_d.matches(&parse("id xs")).is_none());
}

#[test]
fn other_shapes_do_not_match() {
    let ty = "{n m: nat} -> n.m.f32 -> (n*m).f32";
    let e = typed(ty, 1, "fun xs => join xs");
    assert!(pattern("transpose xs").matches(&e).is_none());
    assert!(pattern("join (map f xs)").matches(&e).is_none());
    assert!(pattern("join xs").matches(&e).is_some());
    assert!(pattern("fun x => f x").matches(&e).is_none());
    assert!(pattern("3").matches(&parse("2")).is_none());
}

#[test]
fn right_hand_side_binders_are_fresh_and_capture_nothing() {
    let fusion = Rewrite::parse("map f (map g xs) ↦ map (fun x => f (g x)) xs").unwrap();
    let e = parse("map (fun y => add y x_0) (map neg xs)");
    let out = fusion.apply(&e, &mut NameGen::new()).expect("applies");
    // `x_0` is free in `f`: the new parameter is another name.
    let expected = parse("map (fun z => (fun y => add y x_0) (neg z)) xs");
    assert_eq!(out, expected);
    assert!(out.free_vars().iter().any(|v| &**v == "x_0"));

    let e = parse("map (fun y => add y x) (map neg xs)");
    let out = fusion.apply(&e, &mut NameGen::new()).expect("applies");
    assert_eq!(out, parse("map (fun z => (fun y => add y x) (neg z)) xs"));
    let ExprKind::App(f, _) = out.kind() else {
        panic!("{out:?}")
    };
    let ExprKind::App(_, lam) = f.kind() else {
        panic!("{out:?}")
    };
    assert!(matches!(lam.kind(), ExprKind::Lambda(x, ..) if &**x == "x_0"));
}

#[test]
fn nat_variables_are_rebuilt_as_type_level_arguments() {
    let e = typed(
        "{n: nat} -> (n*4).f32 -> n.4.f32",
        1,
        "fun xs => split 4 (map neg xs)",
    );
    let rw = Rewrite::parse("split n (map f xs) ↦ map (map f) (split n xs)").unwrap();
    let out = rw.apply(&e, &mut NameGen::new()).expect("applies");
    let expected = rise::builder::app(
        rise::builder::map(rise::builder::map(parse("neg"))),
        rise::builder::app(rise::builder::split(4), parse("xs")),
    );
    assert_eq!(out, expected);
}

#[test]
fn bad_patterns_are_reported() {
    for (text, says) in [
        ("map f xs", "lhs ↦ rhs"),
        ("f ↦ g", "`g` is not a variable of the left-hand side"),
        ("e ↦ (e : n.t)", "matched, not built"),
        ("split (n + 1) xs ↦ xs", "variable or a constant"),
        ("'f ↦ f", "prime"),
        ("split n xs ↦ n", "type-level variable, used as a term"),
        (
            "map f xs ↦ map' f xs",
            "`map'` is not a variable of the left-hand side",
        ),
        ("fun (x: f32) => x ↦ id", "has a type"),
        ("map f ↦ map (", "right-hand side `map (`: expected"),
    ] {
        let err = Rewrite::parse(text).expect_err(text);
        assert!(err.contains(says), "{text}: {err}");
    }
}

#[test]
fn every_pattern_row_of_the_rule_table_compiles() {
    let rows: Vec<_> = crate::rules::RULES.iter().filter(|r| r.pattern).collect();
    assert!(!rows.is_empty());
    for r in rows {
        assert!(r.params.is_empty(), "{}", r.name);
        if let Err(e) = Rewrite::parse(r.equation) {
            panic!("{}: {e}", r.name);
        }
    }
}
