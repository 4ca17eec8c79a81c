//! Tests of inference: the nat solver on the papers' shapes, polymorphism,
//! elaboration, and type errors that point at the right span.

use super::*;
use crate::syntax::parse_program;

/// The type of the last definition of a program.
fn type_of(src: &str) -> String {
    let checked = check_source(src).unwrap_or_else(|e| panic!("{}", e.render("test", src)));
    checked.defs.last().expect("a definition").ty.to_string()
}

/// The error of a program that must not type-check, and the source it points at.
fn error_of(src: &str) -> (String, String) {
    let program = parse_program(src).expect("parses");
    let err = check_program(&program).expect_err("must not type-check");
    let spanned = src.get(err.span.range()).unwrap_or("").to_string();
    (err.to_string(), spanned)
}

#[test]
fn split_of_a_multiple_and_of_a_literal() {
    assert_eq!(
        type_of("def f : {n: nat} -> (n*32).f32 -> n.32.f32 = fun xs => split 32 xs"),
        "{n: nat} -> (n*32).f32 -> n.32.f32"
    );
    assert_eq!(
        type_of("def f = fun (xs: 1024.f32) => split 32 xs"),
        "1024.f32 -> 32.32.f32"
    );
    // split of a variable size: the outer size is an exact division.
    assert_eq!(
        type_of("def f : {n: nat} -> n.f32 -> (n /^ 4).4.f32 = fun xs => split 4 xs"),
        "{n: nat} -> n.f32 -> (n /^ 4).4.f32"
    );
}

#[test]
fn join_transpose_zip() {
    assert_eq!(
        type_of("def f = fun xs => join xs"),
        "{n m: nat} -> {t: data} -> n.m.t -> (m*n).t"
    );
    assert_eq!(
        type_of("def f = fun xs => transpose xs"),
        "{n m: nat} -> {t: data} -> n.m.t -> m.n.t"
    );
    assert_eq!(
        type_of("def f = fun xs ys => zip xs ys"),
        "{n: nat} -> {t s: data} -> n.t -> n.s -> n.(t, s)"
    );
    assert_eq!(
        type_of("def f = fun xs => split 8 xs |> join"),
        "{n: nat} -> {t: data} -> (n*8).t -> (n*8).t"
    );
}

#[test]
fn slide_and_pad() {
    assert_eq!(
        type_of("def f : {n: nat} -> (n+2).f32 -> n.3.f32 = fun xs => slide 3 1 xs"),
        "{n: nat} -> (n+2).f32 -> n.3.f32"
    );
    assert_eq!(
        type_of("def f : {n: nat} -> n.f32 -> (n+2).f32 = fun xs => padClamp 1 1 xs"),
        "{n: nat} -> n.f32 -> (n+2).f32"
    );
    assert_eq!(
        type_of("def f = fun xs => xs |> padClamp 1 1 |> slide 3 1"),
        "{n: nat} -> {t: data} -> n.t -> n.3.t"
    );
    assert_eq!(
        type_of("def f = fun (xs: 10.f32) => slide 4 2 xs"),
        "10.f32 -> 4.4.f32"
    );
}

#[test]
fn tiling_sizes() {
    // 2-D tiling of an (m*32).(n*32) matrix into 32x32 tiles.
    let src = "def tile : {m n: nat} -> (m*32).(n*32).f32 -> m.n.32.32.f32 =
                 fun a => a |> map (split 32) |> split 32 |> map transpose";
    assert_eq!(
        type_of(src),
        "{m n: nat} -> (m*32).(n*32).f32 -> m.n.32.32.f32"
    );
    // Overlapped tiling of a stencil: tiles of 6 every 4 elements cover n = 4*t + 2.
    let src = "def f : {t: nat} -> (4*t+2).f32 -> (4*t).f32 =
                 fun xs => xs |> slide 6 4 |> map (fun tile => tile |> slide 3 1 |> map (reduce add 0.0f)) |> join";
    assert_eq!(type_of(src), "{t: nat} -> (t*4+2).f32 -> (t*4).f32");
}

#[test]
fn top_level_definitions_are_polymorphic() {
    let src = "def id2 = fun x => x
               def f = fun (a: 4.f32) (b: f64) => makePair (id2 a) (id2 b)";
    assert_eq!(type_of(src), "4.f32 -> f64 -> (4.f32, f64)");
}

#[test]
fn explicit_dependent_parameters_are_elaborated() {
    let src = "def f = fun (n: nat) => fun xs => xs |> take n";
    assert_eq!(
        type_of(src),
        "{m: nat} -> {t: data} -> (n: nat) -> (m+n).t -> n.t"
    );
    let checked = check_source("def g = fun (xs: 8.f32) => split (2*2) xs").expect("checks");
    let body = &checked.defs.last().expect("def").body;
    let printed = format!("{body:?}");
    assert!(printed.contains("DepApp"), "{printed}");
}

#[test]
fn iterate_and_to_mem() {
    let src = "def f = fun (xs: 16.f32) => xs |> iterate 2 (fun (l: nat) => fun ys => ys |> split 2 |> map (reduce add 0.0f))";
    assert_eq!(type_of(src), "16.f32 -> 4.f32");
    let src = "def f = fun (xs: 8.f32) => toMem private (map id xs) (fun ys => map neg ys)";
    assert_eq!(type_of(src), "8.f32 -> 8.f32");
}

/// A dependent lambda checked against an expected `(l: nat) -> ...` gets the
/// sizes of its body in terms of its own binder (no variable of the unifier
/// escapes), so that instantiating the lambda instantiates its body's types.
#[test]
fn dependent_lambda_body_types_use_its_binder() {
    for binder in ["l", "w"] {
        let src = format!(
            "def f = fun (xs: 16.f32) => xs |> iterate 2 (fun ({binder}: nat) => fun ys => ys |> split 2 |> map (reduce add 0.0f))"
        );
        let checked = check_source(&src).expect("checks");
        let body = &checked.defs.last().expect("def").body;
        let mut dep_lambda = None;
        let mut stack = vec![body.clone()];
        while let Some(e) = stack.pop() {
            match e.kind() {
                ExprKind::DepLambda(..) => dep_lambda = Some(e.clone()),
                ExprKind::Lambda(_, _, b) => stack.push(b.clone()),
                ExprKind::App(f, a) => stack.extend([f.clone(), a.clone()]),
                ExprKind::DepApp(f, _) => stack.push(f.clone()),
                _ => {}
            }
        }
        let lam = dep_lambda.expect("the function of iterate");
        let ExprKind::DepLambda(b, inner) = lam.kind() else {
            unreachable!()
        };
        assert_eq!(&*b.name, binder);
        let ty = inner.ty().expect("typed").to_string();
        assert_eq!(ty, format!("({binder}*2).f32 -> {binder}.f32"));
    }
}

#[test]
fn make_array_and_vectors() {
    assert_eq!(type_of("def w = makeArray 3 1.0f 2.0f 1.0f"), "3.f32");
    assert_eq!(
        type_of("def f = fun (xs: 16.f32) => asVector 4 xs |> map (mapVec neg) |> asScalar"),
        "16.f32 -> 16.f32"
    );
}

#[test]
fn size_mismatch_points_at_the_argument() {
    let (msg, at) = error_of("def f = fun (xs: 4.f32) (ys: 5.f32) => zip xs ys");
    assert!(msg.contains("found `5.f32`"), "{msg}");
    assert!(msg.contains("the sizes `4` and `5`"), "{msg}");
    assert_eq!(at, "ys");
}

#[test]
fn split_that_does_not_divide_is_an_error() {
    let (msg, _) = error_of("def f = fun (xs: 10.f32) => split 4 xs");
    assert!(
        msg.contains("type mismatch") || msg.contains("cannot"),
        "{msg}"
    );
}

#[test]
fn unknown_names_and_misuse() {
    let (msg, at) = error_of("def f = fun xs => mapp id xs");
    assert!(msg.contains("unknown name `mapp`"), "{msg}");
    assert_eq!(at, "mapp");
    let (msg, at) = error_of("def f = fun (xs: 4.f32) => split xs xs");
    assert!(msg.contains("expected a natural number"), "{msg}");
    assert_eq!(at, "xs");
    let (msg, _) = error_of("def f = fun (x: f32) => x 1.0f");
    assert!(msg.contains("not a function"), "{msg}");
    let (msg, _) = error_of("def f = 1.0f\ndef f = 2.0f");
    assert!(msg.contains("defined twice"), "{msg}");
    let (msg, _) = error_of("def f : (0-1).f32 -> f32 = fun x => 1.0f");
    assert!(msg.contains("not a valid array size"), "{msg}");
    let (msg, _) = error_of("def f = fun (x: (1/^0).f32) => x");
    assert!(msg.contains("not a valid array size"), "{msg}");
    let (msg, _) = error_of("def f = fun (x: n.f32) => x");
    assert!(msg.contains("unknown type-level variable `n`"), "{msg}");
}

#[test]
fn a_missing_math_function_is_named_as_such_with_those_there_are() {
    let err = check_source("def f : f32 -> f32 = fun x => tgamma x").unwrap_err();
    let msg = format!("{err:?}");
    assert!(msg.contains("unknown name `tgamma`"), "{msg}");
    assert!(
        msg.contains("a C math function that RISE does not have"),
        "{msg}"
    );
    assert!(msg.contains("sqrt, rsqrt"), "{msg}");
}

#[test]
fn math_functions_check_their_domain_after_inference() {
    // floats, vectors of floats, and integers where the domain admits them
    for ok in [
        "def f : f32 -> f32 = fun x => sqrt x",
        "def f : f64 -> f64 -> f64 = fun x y => pow x y",
        "def f : vec[f32, 4] -> vec[f32, 4] = fun v => exp v",
        "def f : i32 -> i32 -> i32 = fun x y => max (abs x) y",
        "def f : u8 -> u8 = fun x => min x 3u8",
        "def f = fun x => sqrt x",
        "def f = fun (xs: 4.f32) => xs |> map sqrt |> reduce add 0.0f |> rsqrt",
        "def f : f64 -> f64 -> f64 = fun x y => hypot (erf x) (fmod (cbrt y) 2.0)",
        "def f : vec[f32, 4] -> vec[f32, 4] = fun v => round (atanh v)",
    ] {
        check_source(ok).unwrap_or_else(|e| panic!("{ok}: {e:?}"));
    }
    for (bad, found) in [
        (
            "def f : i32 -> i32 = fun x => sqrt x",
            "`sqrt` takes a floating-point value, found i32",
        ),
        (
            "def f = fun (x: int) => exp x",
            "`exp` takes a floating-point value, found int",
        ),
        (
            "def f = fun (v: vec[int, 4]) => floor v",
            "`floor` takes a floating-point value, found vec[int, 4]",
        ),
        (
            "def f = fun (b: bool) => abs b",
            "`abs` takes an integer or floating-point value, found bool",
        ),
        (
            "def f = fun (xs: 4.f32) => sqrt xs",
            "`sqrt` takes a floating-point value, found 4.f32",
        ),
        (
            "def f = fun (x: i32) => round x",
            "`round` takes a floating-point value, found i32",
        ),
        (
            "def f = fun (x: int) (y: int) => fmod x y",
            "`fmod` takes a floating-point value, found int",
        ),
        (
            "def f = fun (p: (f32, f32)) => fmin p p",
            "`fmin` takes a floating-point value, found (f32, f32)",
        ),
    ] {
        let (msg, _) = error_of(bad);
        assert!(msg.contains(found), "{bad}: {msg}");
    }
}

#[test]
fn a_cast_cannot_make_an_index() {
    for ok in [
        "def f : {n: nat} -> idx[n] -> i32 = fun i => cast i",
        "def f : {n: nat} -> i32 -> idx[n] = fun x => natAsIndex n (cast x)",
        "def f : f32 -> u8 = fun x => cast x",
    ] {
        check_source(ok).unwrap_or_else(|e| panic!("{ok}: {e:?}"));
    }
    for bad in [
        "def f : {n: nat} -> i32 -> idx[n] = fun x => cast x",
        "def f : {n: nat} -> n.i32 -> n.f32 -> n.f32 = \
         fun ks xs => ks |> map (fun k => idx (cast k : idx[n]) xs)",
    ] {
        let (msg, _) = error_of(bad);
        assert!(msg.contains("`cast` cannot make an index"), "{bad}: {msg}");
    }
}

#[test]
fn an_open_domain_is_checked_where_the_definition_is_instantiated() {
    let src = "def f = fun x => sqrt x\ndef g = fun (y: i32) => f y";
    let prog = check_source(src).expect("both are well typed as written");
    let err = instantiate_def(&prog, "g", &[DataType::Scalar(ScalarType::I32)], &[])
        .expect_err("sqrt of an i32");
    assert!(
        err.message
            .contains("`sqrt` takes a floating-point value, found i32"),
        "{}",
        err.message
    );
    let err = instantiate_def(&prog, "f", &[DataType::Scalar(ScalarType::I64)], &[])
        .expect_err("sqrt of an i64");
    assert!(err.message.contains("found i64"), "{}", err.message);
    instantiate_def(&prog, "f", &[DataType::Scalar(ScalarType::F64)], &[]).expect("f64");
}

#[test]
fn annotation_mismatch_names_both_types() {
    let (msg, _) = error_of("def f : {n: nat} -> n.f32 -> n.f32 = fun xs => xs |> padClamp 1 1");
    assert!(msg.contains("expected `n.f32`, found `(n+2).f32`"), "{msg}");
}

#[test]
fn instances_fix_every_size() {
    let checked = check_source("def mm : {m n k: nat} -> m.k.f32 -> k.n.f32 -> m.n.f32 =
        fun a b => a |> map (fun row => transpose b |> map (fun col => zip row col |> map (fun p => fst p * snd p) |> reduce add 0.0f))")
        .expect("checks");
    let a = DataType::array(2, DataType::array(3, DataType::f32()));
    let b = DataType::array(3, DataType::array(5, DataType::f32()));
    let inst = instantiate_def(&checked, "mm", &[a, b], &[]).expect("instantiates");
    assert_eq!(inst.result.to_string(), "2.5.f32");
    assert_eq!(
        inst.nats,
        vec![("m".into(), 2), ("n".into(), 5), ("k".into(), 3)]
    );
    // A size no input determines must be given.
    let checked = check_source("def ones = fun (x: f32) => generate (fun i => x)").expect("checks");
    let err = instantiate_def(&checked, "ones", &[DataType::f32()], &[]).expect_err("open size");
    assert!(err.to_string().contains("--nat n="), "{err}");
    let inst =
        instantiate_def(&checked, "ones", &[DataType::f32()], &[("n".into(), 7)]).expect("fixed");
    assert_eq!(inst.result.to_string(), "7.f32");
}

#[test]
fn design_examples_type_check() {
    let src = "def dot = fun xs ys => zip xs ys |> map (fun p => fst p * snd p) |> reduce add 0.0f

def mm : {m n k: nat} -> m.k.f32 -> k.n.f32 -> m.n.f32 =
  fun a b => a |> map (fun row => transpose b |> map (fun col => dot row col))

def jacobi3 : {n: nat} -> n.f32 -> n.f32 =
  fun xs => xs |> padClamp 1 1 |> slide 3 1 |> map (fun nbh => reduce add 0.0f nbh)";
    let checked = check_source(src).expect("the documented examples type-check");
    let types: Vec<String> = checked
        .user_defs()
        .map(|d| format!("{} : {}", d.name, d.ty))
        .collect();
    assert_eq!(
        types,
        [
            "dot : {n: nat} -> n.f32 -> n.f32 -> f32",
            "mm : {m n k: nat} -> m.k.f32 -> k.n.f32 -> m.n.f32",
            "jacobi3 : {n: nat} -> n.f32 -> n.f32",
        ]
    );
}

#[test]
fn limits_of_inference_are_reported_not_guessed() {
    // A product of two unknown sizes is solved with an exact division: the
    // definition is polymorphic in one of them.
    assert_eq!(
        type_of("def f = fun xs (ys: 12.f32) => zip (join xs) ys"),
        "{n: nat} -> {t: data} -> (12 /^ n).n.t -> 12.f32 -> 12.(t, f32)"
    );
    // A non-linear equation (`n^2 = 16`) is not solved.
    let (msg, _) = error_of(
        "def f = fun m (ys: 16.f32) => zip (join (zip m (transpose m) |> map (fun p => fst p))) ys",
    );
    assert!(
        msg.contains("cannot infer sizes from the equation"),
        "{msg}"
    );
    // Lambda-bound functions are monomorphic (polymorphism is for top-level definitions).
    let (msg, _) = error_of("def f = fun g (xs: 4.f32) (ys: 8.f32) => makePair (g xs) (g ys)");
    assert!(msg.contains("the sizes `4` and `8`"), "{msg}");
}

// ---- size constraints (issue 13, defects 4, 5, 7, 8) ------------------------------

/// The size constraints of the last definition of a program, as printed.
fn constraints_of(src: &str) -> Vec<String> {
    let checked = check_source(src).unwrap_or_else(|e| panic!("{}", e.render("test", src)));
    let def = checked.defs.last().expect("a definition");
    def.constraints.iter().map(|c| c.to_string()).collect()
}

const SPLIT32: &str = "def f : {n: nat} -> n.f32 -> n.f32 = fun xs => xs |> split 32 |> map (fun r => map (fun x => x * 2.0f) r) |> join";

const TAKE_DROP: &str = "def takeDrop = fun (k: nat) => fun old inner => zip (old |> drop 1 |> take k) inner |> map (fun p => fst p + snd p)\n";

#[test]
fn a_split_of_a_size_parameter_requires_the_factor_to_divide_it() {
    assert_eq!(constraints_of(SPLIT32), ["32 divides n"]);
    // A size that is a multiple by construction needs nothing.
    assert!(
        constraints_of("def f : {n: nat} -> (n*32).f32 -> n.32.f32 = fun xs => split 32 xs")
            .is_empty()
    );
    let (msg, _) = error_of("def f = fun (xs: 40.f32) => split 32 xs");
    assert!(msg.contains("40"), "{msg}");
}

#[test]
fn generalization_keeps_the_lower_bound_of_take_and_drop() {
    assert_eq!(constraints_of(TAKE_DROP), ["n >= k"]);
    let use_it = format!(
        "{TAKE_DROP}def useTakeDrop : 3.f32 -> 5.f32 -> 5.f32 = fun old inner => takeDrop 5 old inner"
    );
    let (msg, at) = error_of(&use_it);
    assert_eq!(at, "takeDrop");
    assert!(
        msg.contains("size constraint of `takeDrop` does not hold: 2 must be at least 5"),
        "{msg}"
    );
    // On enough elements it is fine.
    let ok = format!(
        "{TAKE_DROP}def useTakeDrop : 6.f32 -> 5.f32 -> 5.f32 = fun old inner => takeDrop 5 old inner"
    );
    assert!(constraints_of(&ok).is_empty());
    // A caller that stays generic inherits the constraint, in its own sizes.
    let generic = format!(
        "{TAKE_DROP}def g : {{n: nat}} -> (n+1).f32 -> 4.f32 -> 4.f32 = fun old inner => takeDrop 4 old inner"
    );
    assert_eq!(constraints_of(&generic), ["n >= 4"]);
}

#[test]
fn a_constant_index_is_checked_against_the_size() {
    let (msg, at) = error_of("def constantIndex : 2.f32 -> f32 = fun xs => at 3 xs");
    assert_eq!(at, "at");
    assert!(
        msg.contains("the index 3 must be below the size 2"),
        "{msg}"
    );
    assert_eq!(
        constraints_of("def at1000 : {n: nat} -> n.f32 -> f32 = fun xs => at 1000 xs"),
        ["1000 < n"]
    );
    assert!(constraints_of("def f : 4.f32 -> f32 = fun xs => at 3 xs").is_empty());
}

#[test]
fn a_lane_is_below_the_width_of_its_vector() {
    assert_eq!(
        type_of("def x = fun (v: vec[f32, 4]) => lane 3 v"),
        "vec[f32, 4] -> f32"
    );
    let (msg, at) = error_of("def bad = fun (v: vec[f32, 4]) => lane 4 v");
    assert_eq!(at, "lane 4 v");
    assert!(
        msg.contains("the index 4 must be below the size 4"),
        "{msg}"
    );
    // A width only known later: checked where the sizes are known.
    assert_eq!(
        constraints_of("def l : {n: nat} -> vec[f32, n] -> f32 = fun v => lane 2 v"),
        ["2 < n"]
    );
    assert!(
        constraints_of("def l : {n: nat} -> vec[f32, n+3] -> f32 = fun v => lane 2 v").is_empty()
    );
}

#[test]
fn make_vector_takes_n_values() {
    assert_eq!(
        type_of("def v = fun (x: f32) => makeVector 4 x 1.0f x 2.0f"),
        "f32 -> vec[f32, 4]"
    );
    assert_eq!(
        type_of("def v = fun (x: f32) => lane 1 (makeVector 2 x (x * 2.0f))"),
        "f32 -> f32"
    );
    let (msg, _) = error_of("def v = fun (x: f32) => makeVector 2 x 1");
    assert!(msg.contains("type mismatch"), "{msg}");
    let (msg, _) = error_of("def v = fun (n: nat) (x: f32) => makeVector n x");
    assert!(
        msg.contains("makeVector needs a constant number of elements"),
        "{msg}"
    );
}

#[test]
fn take_drop_slide_and_pads_bound_their_input() {
    assert_eq!(
        constraints_of("def t : {n: nat} -> n.f32 -> 10.f32 = fun xs => take 10 xs"),
        ["n >= 10"]
    );
    assert_eq!(
        constraints_of("def s : {n: nat} -> n.f32 -> (n-2).3.f32 = fun xs => slide 3 1 xs"),
        ["n >= 3"]
    );
    assert_eq!(
        constraints_of(
            "def s : {n: nat} -> n.f32 -> ((n-3) /^ 2 + 1).3.f32 = fun xs => slide 3 2 xs"
        ),
        ["n >= 3", "2 divides n-3"]
    );
    for pad in ["padClamp", "padMirror", "padWrap"] {
        assert_eq!(
            constraints_of(&format!(
                "def p : {{n: nat}} -> n.f32 -> (n+2).f32 = fun xs => {pad} 1 1 xs"
            )),
            ["n >= 1"]
        );
    }
    // Padding by nothing needs no element; a constant pad never does.
    assert!(
        constraints_of("def p : {n: nat} -> n.f32 -> n.f32 = fun xs => padClamp 0 0 xs").is_empty()
    );
    assert!(constraints_of(
        "def p : {n: nat} -> n.f32 -> (n+2).f32 = fun xs => padCst 1 1 0.0f xs"
    )
    .is_empty());
    let (msg, _) = error_of("def p : 0.f32 -> 2.f32 = fun xs => padClamp 1 1 xs");
    assert!(msg.contains("0 must be at least 1"), "{msg}");
}

#[test]
fn instantiation_checks_the_constraints_before_evaluation() {
    let checked = check_source(SPLIT32).expect("checks");
    let at = |n: usize| {
        instantiate_def(
            &checked,
            "f",
            &[DataType::array(n as i64, DataType::Scalar(ScalarType::F32))],
            &[],
        )
    };
    assert!(at(64).is_ok());
    let err = at(40).expect_err("40 is not a multiple of 32");
    assert_eq!(
        err.message,
        "size constraint of `f` does not hold: 32 must divide n, but n = 40"
    );
    let checked = check_source(TAKE_DROP).expect("checks");
    let f32s = |n: i64| DataType::array(n, DataType::Scalar(ScalarType::F32));
    let err = instantiate_def(
        &checked,
        "takeDrop",
        &[f32s(3), f32s(5)],
        &[("k".into(), 5)],
    )
    .expect_err("3 elements are too few");
    assert!(
        err.message
            .contains("n must be at least k, but k = 5, n = 2"),
        "{}",
        err.message
    );
}

/// An equation whose coefficient mentions another metavariable is not solved by dividing
/// by it: inferring the step `fun acc x => split 3 (join acc)` before `acc`'s sizes are
/// known gives `(?a*?b) /^ 3 = ?a`, which said `?a = 0` (found by the differential run,
/// seed 1 case 19443: "cannot unify the sizes `0` and `n`").
#[test]
fn a_coefficient_that_may_be_zero_is_not_divided_by() {
    assert_eq!(
        type_of(
            "def f : {n: nat} -> 5.u8 -> n.3.int -> n.3.int =\n  \
             fun xs init => xs |> reduceSeq (fun acc x => split 3 (join acc)) init"
        ),
        "{n: nat} -> 5.u8 -> n.3.int -> n.3.int"
    );
}

#[test]
fn foreign_functions_have_their_signature() {
    let src = "foreign clampf (x lo hi: f32) : f32 { return x < lo ? lo : (x > hi ? hi : x); }
def c = clampf
def unit = clampf 0.0f 1.0f
def f = fun xs => map (fun x => clampf x 0.0f 1.0f) xs";
    let p = check_source(src).unwrap_or_else(|e| panic!("{e}"));
    let ty = |name: &str| p.def(name).unwrap().ty.to_string();
    assert_eq!(ty("c"), "f32 -> f32 -> f32 -> f32");
    assert_eq!(ty("unit"), "f32 -> f32");
    assert_eq!(ty("f"), "{n: nat} -> n.f32 -> n.f32");
    assert_eq!(p.foreign.len(), 1);
    // an argument of another type is a type error
    let bad = "foreign g (x: i32) : i32 { return x; }\ndef h = g 1.0f";
    let e = check_source(bad).unwrap_err();
    assert!(
        e.to_string().contains("f32") && e.to_string().contains("i32"),
        "{e}"
    );
    // a foreign function may not take the name of a prelude definition
    let e = check_source("foreign map2 (x: f32) : f32 { return x; }").unwrap_err();
    assert!(e.to_string().contains("prelude"), "{e}");
}

/// A constant size is shown as its value, and a constant exact division that is not a whole
/// number is said to be one: `(5 /^ 2)` against `3` read as "5/2 rounded up differs from 3".
#[test]
fn a_constant_size_that_is_not_a_whole_number_is_said_to_be_one() {
    let (message, notes) = error_of(
        "def halves : {n: nat} -> n.f32 -> (n /^ 2).2.f32 = fun xs => split 2 xs\n\
         def g : 5.f32 -> 3.2.f32 = fun xs => halves xs",
    );
    let all = format!("{message}\n{notes}");
    assert!(all.contains("`5/2`, not a whole number"), "{all}");
    assert!(all.contains("`3`"), "{all}");
    assert!(!all.contains("/^"), "{all}");
}

/// A strided window's count in a type error is written as the user writes sizes, without
/// the internal exact division `/^`, with the idiom that drops the remainder.
#[test]
fn a_strided_slide_mismatch_shows_sizes_with_slash_and_the_idiom() {
    let src =
        "def pool : {n: nat} -> n.f32 -> n.f32 = fun xs => xs |> slide 3 2 |> map (reduce add 0.0f)";
    let program = parse_program(src).expect("parses");
    let err = check_program(&program).expect_err("must not type-check");
    let all = err.render("test", src);
    assert!(!all.contains("/^"), "{all}");
    assert!(all.contains("found `((n-1)/2).f32`"), "{all}");
    assert!(all.contains("take ((h-k)/s*s+k)"), "{all}");
}

/// The idiom: taking the windows' span first gives `(n-k)/s+1` windows, for any `n >= k`.
#[test]
fn strided_windows_that_drop_the_remainder_type_check() {
    let src = "def pool : {n: nat} -> n.f32 -> ((n-3)/2+1).f32 = fun xs => \
               xs |> take ((n-3)/2*2+3) |> slide 3 2 |> map (reduce add 0.0f)";
    assert_eq!(type_of(src), "{n: nat} -> n.f32 -> ((n-3)/2+1).f32");
}

#[test]
fn shown_sizes_compute_constants_and_keep_symbols() {
    use crate::infer::unify::shown_size;
    assert_eq!(
        shown_size(&(Nat::cst(2) * Nat::cst(3) + Nat::cst(4))),
        "`10`"
    );
    assert_eq!(shown_size(&Nat::cst(8).div_exact(&Nat::cst(2))), "`4`");
    let n = Nat::var(&arith::Var::new("n"));
    assert_eq!(shown_size(&n.div_exact(&Nat::cst(2))), "`n/2`");
    assert!(shown_size(&Nat::cst(7).div_exact(&Nat::cst(2))).contains("`7/2`, not a whole number"));
}

#[test]
fn shifting_functions_points_to_composition() {
    let src = "def f : {n: nat} -> n.f32 -> n.f32 = \
               fun xs => xs |> (map (fun x => x + 1.0f) >> map (fun x => x * 2.0f))";
    let program = parse_program(src).expect("parses");
    let err = check_program(&program).expect_err("functions are not shifted");
    assert!(
        err.notes
            .iter()
            .any(|n| n.contains("`f >>> g` composes functions")),
        "{:?}",
        err.notes
    );
    let src = "def g : i32 -> i32 = fun x => x >> 1.5f";
    let program = parse_program(src).expect("parses");
    let err = check_program(&program).expect_err("a float shift amount");
    assert!(
        !err.notes.iter().any(|n| n.contains(">>>")),
        "{:?}",
        err.notes
    );
}

// ---- constraints of iterate's step (issue 28) -------------------------------------

/// A step that keeps the size puts its constraints on the iterate's size, whatever the
/// count: jacobi's `padClamp 1 1 >>> slide 3 1` needs `l >= 1`, here `n >= 1`.
#[test]
fn a_same_size_step_constrains_the_iterated_size() {
    let step = "(fun (l: nat) => padClamp 1 1 >>> slide 3 1 >>> map (reduce add 0.0f))";
    for count in ["1", "100", "k"] {
        let src = format!(
            "def f : {{n k: nat}} -> n.f32 -> n.f32 = fun xs => xs |> iterate {count} {step}"
        );
        assert_eq!(constraints_of(&src), ["n >= 1"], "iterate {count}");
    }
}

/// A step that is a definition typed `(l: nat) -> l.f32 -> l.f32`: its constraint, instantiated at its use, is on the iterated size.
#[test]
fn a_step_defined_apart_constrains_the_iterated_size() {
    let src = "def step : (l: nat) -> l.f32 -> l.f32 = fun (l: nat) => padClamp 1 1 >>> slide 3 1 >>> map (reduce add 0.0f)\n\
               def f : {n: nat} -> n.f32 -> n.f32 = fun xs => xs |> iterate 20 step";
    assert_eq!(constraints_of(src), ["n >= 1"]);
}

/// A shrinking step with a constant count is constrained at each size it is applied at.
#[test]
fn a_shrinking_step_is_constrained_at_each_size() {
    let src = "def f : {n: nat} -> (n*4).f32 -> n.f32 = fun xs => xs |> iterate 2 \
               (fun (l: nat) => fun (ys: (l*2).f32) => ys |> take l |> split 3 |> join)";
    assert_eq!(constraints_of(src), ["3 divides n", "3 divides n*2"]);
}

/// A shrinking step iterated a number of times known only at run time is applied at
/// sizes no parameter names: its constraint stays an error naming its binder.
#[test]
fn a_shrinking_step_iterated_a_size_parameter_times_is_still_an_error() {
    let (msg, _) = error_of(
        "def f : {n k: nat} -> (n*2^k).f32 -> n.f32 = fun xs => xs |> iterate k \
         (fun (l: nat) => fun (ys: (l*2).f32) => ys |> take l |> split 3 |> join)",
    );
    assert!(
        msg.contains("on `l`, which is not a size parameter"),
        "{msg}"
    );
}
