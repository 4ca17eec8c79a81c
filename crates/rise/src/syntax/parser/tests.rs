//! The parser's tests.

use super::expr::app;
use super::*;
use crate::expr::{ExprKind, Literal};
use crate::syntax::parse_type;
use crate::types::{Binder, Kind, ScalarType};

fn parse(src: &str) -> Expr {
    parse_expr(src).unwrap_or_else(|e| panic!("{src}: {e}"))
}

fn prim(p: Prim) -> Expr {
    Expr::new(ExprKind::Prim(p), Span::default())
}
fn var(x: &str) -> Expr {
    Expr::new(ExprKind::Var(x.into()), Span::default())
}
fn ap(f: Expr, a: Expr) -> Expr {
    app(f, a, Span::default())
}
fn ap2(f: Expr, a: Expr, b: Expr) -> Expr {
    ap(ap(f, a), b)
}
fn lam(x: &str, b: Expr) -> Expr {
    Expr::new(ExprKind::Lambda(x.into(), None, b), Span::default())
}
fn int(v: i64) -> Expr {
    Expr::new(
        ExprKind::Lit(Literal::Int(v, ScalarType::Int)),
        Span::default(),
    )
}
fn err(src: &str) -> Diagnostic {
    match parse_program(src) {
        Ok(p) => panic!("{src} parsed: {p:?}"),
        Err(e) => e,
    }
}
fn err_span(src: &str) -> (String, &str) {
    let e = err(src);
    (e.message.clone(), &src[e.span.range()])
}

const DESIGN_EXAMPLES: &str = "
def dot = fun xs ys => zip xs ys |> map (fun p => fst p * snd p) |> reduce add 0.0f

def mm : {m n k: nat} -> m.k.f32 -> k.n.f32 -> m.n.f32 =
  fun a b => a |> map (fun row => transpose b |> map (fun col => dot row col))

def jacobi3 : {n: nat} -> n.f32 -> n.f32 =
  fun xs => xs |> padClamp 1 1 |> slide 3 1 |> map (fun nbh => reduce add 0.0f nbh)
";

#[test]
fn design_examples_parse() {
    let p = parse_program(DESIGN_EXAMPLES).unwrap();
    let names: Vec<&str> = p.defs.iter().map(|d| &*d.name).collect();
    assert_eq!(names, ["dot", "mm", "jacobi3"]);
    assert!(p.defs[0].annot.is_none());
    assert_eq!(
        p.defs[1].annot,
        Some(parse_type("{m n k: nat} -> m.k.f32 -> k.n.f32 -> m.n.f32").unwrap())
    );
    // dot = fun xs ys => reduce add 0.0f (map (fun p => mul (fst p) (snd p)) (zip xs ys))
    let f32_zero = Expr::new(
        ExprKind::Lit(Literal::Float(0.0, ScalarType::F32)),
        Span::default(),
    );
    let expected = lam(
        "xs",
        lam(
            "ys",
            ap(
                ap2(prim(Prim::Reduce), prim(Prim::Add), f32_zero),
                ap(
                    ap(
                        prim(Prim::Map),
                        lam(
                            "p",
                            ap2(
                                prim(Prim::Mul),
                                ap(prim(Prim::Fst), var("p")),
                                ap(prim(Prim::Snd), var("p")),
                            ),
                        ),
                    ),
                    ap2(prim(Prim::Zip), var("xs"), var("ys")),
                ),
            ),
        ),
    );
    assert!(p.defs[0].body.alpha_eq(&expected), "{:?}", p.defs[0].body);
    // `dot` in mm is a free variable (a definition), `transpose` a primitive.
    assert_eq!(p.defs[1].body.free_vars(), vec![Name::from("dot")]);
    // spans
    let d = &p.defs[2];
    assert_eq!(&DESIGN_EXAMPLES[d.name_span.range()], "jacobi3");
    assert!(DESIGN_EXAMPLES[d.span.range()].starts_with("def jacobi3"));
    assert!(DESIGN_EXAMPLES[d.span.range()].ends_with("nbh)"));
    assert!(DESIGN_EXAMPLES[d.body.span().range()].starts_with("fun xs"));
}

#[test]
fn precedence() {
    let (a, b, c) = (var("a"), var("b"), var("c"));
    let add = || prim(Prim::Add);
    let mul = || prim(Prim::Mul);
    assert_eq!(
        parse("a + b * c"),
        ap2(add(), a.clone(), ap2(mul(), b.clone(), c.clone()))
    );
    assert_eq!(
        parse("a * b + c"),
        ap2(add(), ap2(mul(), a.clone(), b.clone()), c.clone())
    );
    assert_eq!(
        parse("a - b - c"),
        ap2(
            prim(Prim::Sub),
            ap2(prim(Prim::Sub), a.clone(), b.clone()),
            c.clone()
        )
    );
    assert_eq!(
        parse("f a + g b"),
        ap2(add(), ap(var("f"), a.clone()), ap(var("g"), b.clone()))
    );
    assert_eq!(
        parse("a + b < c"),
        ap2(prim(Prim::Lt), ap2(add(), a.clone(), b.clone()), c.clone())
    );
    assert_eq!(
        parse("a == b % c"),
        ap2(
            prim(Prim::Equal),
            a.clone(),
            ap2(prim(Prim::Mod), b.clone(), c.clone())
        )
    );
    // pipes are left-associative and bind loosest
    assert_eq!(parse("x |> f |> g"), ap(var("g"), ap(var("f"), var("x"))));
    assert_eq!(
        parse("a + b |> f"),
        ap(var("f"), ap2(add(), a.clone(), b.clone()))
    );
    // application
    assert_eq!(parse("f(x) y"), ap2(var("f"), var("x"), var("y")));
    assert_eq!(parse("f (x) (y)"), ap2(var("f"), var("x"), var("y")));
    // unary
    assert_eq!(parse("-f x"), ap(prim(Prim::Neg), ap(var("f"), var("x"))));
    assert_eq!(
        parse("-x * y"),
        ap2(mul(), ap(prim(Prim::Neg), var("x")), var("y"))
    );
    assert_eq!(parse("!b"), ap(prim(Prim::Not), var("b")));
    assert_eq!(parse("-3"), int(-3));
    assert_eq!(parse("a - 3"), ap2(prim(Prim::Sub), a.clone(), int(3)));
    assert_eq!(parse("a - -3"), ap2(prim(Prim::Sub), a.clone(), int(-3)));
    // fun extends to the right, also as the last argument or operand
    assert_eq!(
        parse("fun x => x + 1 |> f"),
        lam("x", ap(var("f"), ap2(add(), var("x"), int(1))))
    );
    assert_eq!(
        parse("xs |> map fun x => x"),
        ap(ap(prim(Prim::Map), lam("x", var("x"))), var("xs"))
    );
    assert_eq!(parse("xs |> fun x => x"), ap(lam("x", var("x")), var("xs")));
    assert_eq!(parse("(fun x => x) y"), ap(lam("x", var("x")), var("y")));
}

#[test]
fn pairs_and_annotations() {
    let t = parse_type("f32").unwrap();
    let e = parse("(x : f32)");
    assert!(matches!(e.kind(), ExprKind::Annot(_, ty) if *ty == t));
    assert_eq!(
        parse("(a, b + c)"),
        ap2(
            prim(Prim::MakePair),
            var("a"),
            ap2(prim(Prim::Add), var("b"), var("c"))
        )
    );
    assert_eq!(
        parse("(fun x => x, y)"),
        ap2(prim(Prim::MakePair), lam("x", var("x")), var("y"))
    );
    let e = parse("(fun x => x : f32 -> f32)");
    assert!(matches!(e.kind(), ExprKind::Annot(l, _) if matches!(l.kind(), ExprKind::Lambda(..))));
}

#[test]
fn lambdas_typed_and_dependent() {
    let e = parse("fun (x y: f32) z => x");
    let ExprKind::Lambda(x, Some(t), body) = e.kind() else {
        panic!("{e:?}")
    };
    assert_eq!((&**x, t.to_string().as_str()), ("x", "f32"));
    let ExprKind::Lambda(y, Some(_), body) = body.kind() else {
        panic!()
    };
    assert_eq!(&**y, "y");
    assert!(matches!(body.kind(), ExprKind::Lambda(z, None, _) if &**z == "z"));

    let e = parse("fun (n: nat) (a b: data) (s: addrSpace) (f: nat -> nat) (g: nat -> data) (v: n.f32) => split n v");
    let mut kinds = Vec::new();
    let mut cur = e;
    while let ExprKind::DepLambda(b, body) = cur.kind() {
        kinds.push(b.kind);
        cur = body.clone();
    }
    assert_eq!(
        kinds,
        [
            Kind::Nat,
            Kind::Data,
            Kind::Data,
            Kind::AddrSpace,
            Kind::NatToNat,
            Kind::NatToData
        ]
    );
    let ExprKind::Lambda(_, Some(t), body) = cur.kind() else {
        panic!()
    };
    assert_eq!(t.to_string(), "n.f32");
    // `n` in expression position is a variable; the checker makes it a nat argument.
    assert_eq!(*body, ap2(prim(Prim::Split), var("n"), var("v")));
    let e = err("def f = fun (n: nat -> f32) => n");
    assert!(e.message.contains("kind"), "{e}");
}

#[test]
fn dimensioned_primitives() {
    assert_eq!(
        parse("mapGlobal(0) f"),
        ap(prim(Prim::MapGlobal0), var("f"))
    );
    assert_eq!(parse("mapLocal 1 f"), ap(prim(Prim::MapLocal1), var("f")));
    assert_eq!(parse("mapThread (2)"), prim(Prim::MapThread2));
    assert_eq!(
        parse("map mapBlock(1)"),
        ap(prim(Prim::Map), prim(Prim::MapBlock1))
    );
    let (m, s) = err_span("def f = mapGlobal(3) g");
    assert!(m.contains("dimension of `mapGlobal`"), "{m}");
    assert_eq!(s, "3");
    let (m, s) = err_span("def f = mapWorkGroup g");
    assert!(m.contains("dimension"), "{m}");
    assert_eq!(s, "g");
    let (m, s) = err_span("def f = mapWorkGroup");
    assert!(m.contains("dimension"), "{m}");
    assert_eq!(s, "mapWorkGroup");
    let (_, s) = err_span("def f = mapGlobal(0 g");
    assert_eq!(s, "g");
}

#[test]
fn shadowing() {
    assert_eq!(parse("fun map => map f"), lam("m", ap(var("m"), var("f"))));
    assert_eq!(
        parse("fun mapGlobal => mapGlobal 0"),
        lam("m", ap(var("m"), int(0)))
    );
    assert_eq!(
        parse("(fun map => map) map"),
        ap(lam("m", var("m")), prim(Prim::Map))
    );
    // the scope ends with the lambda
    assert_eq!(
        parse("(fun zip => zip, zip)"),
        ap2(prim(Prim::MakePair), lam("z", var("z")), prim(Prim::Zip))
    );
    assert_eq!(parse("fun (split: nat) => split"), {
        Expr::new(
            ExprKind::DepLambda(Binder::new("s", Kind::Nat), var("s")),
            Span::default(),
        )
    });
}

#[test]
fn composition() {
    let e = parse("f >>> g >>> h");
    // (f >> g) >> h = fun b => h ((fun a => g (f a)) b)
    let inner = lam("a", ap(var("g"), ap(var("f"), var("a"))));
    assert_eq!(e, lam("b", ap(var("h"), ap(inner, var("b")))));
    // the fresh name avoids every identifier of the source
    let e = parse("fun x_0 => x_0 >>> x_1");
    let ExprKind::Lambda(_, _, body) = e.kind() else {
        panic!()
    };
    let ExprKind::Lambda(x, _, _) = body.kind() else {
        panic!()
    };
    assert_eq!(&**x, "x_2");
    // `>>` binds tighter than `|>`, looser than arithmetic
    assert_eq!(
        parse("x |> f >>> g"),
        ap(lam("a", ap(var("g"), ap(var("f"), var("a")))), var("x"))
    );
}

#[test]
fn literals() {
    let lit = |src: &str| match parse(src).kind() {
        ExprKind::Lit(l) => l.clone(),
        k => panic!("{k:?}"),
    };
    assert_eq!(lit("true"), Literal::Bool(true));
    assert_eq!(lit("3u16"), Literal::Int(3, ScalarType::U16));
    assert_eq!(lit("-128i8"), Literal::Int(-128, ScalarType::I8));
    assert_eq!(lit("1.5"), Literal::Float(1.5, ScalarType::F64));
    assert_eq!(lit("1.5f"), Literal::Float(1.5, ScalarType::F32));
    assert_eq!(
        lit("0.1f32"),
        Literal::Float(f64::from(0.1f32), ScalarType::F32)
    );
    assert_eq!(lit("2e3f16"), Literal::Float(2000.0, ScalarType::F16));
    assert_eq!(lit("-2.5f64"), Literal::Float(-2.5, ScalarType::F64));
    assert_eq!(
        lit("-9223372036854775808"),
        Literal::Int(i64::MIN, ScalarType::Int)
    );
    for bad in [
        "256u8",
        "-1u32",
        "128i8",
        "9223372036854775808",
        "1e39f",
        "1e400",
        "70000f16",
        "99999999999999999999999999999999999999999u64",
    ] {
        let src = format!("def x = {bad}");
        let e = err(&src);
        assert!(e.message.contains("range"), "{bad}: {e}");
        assert_eq!(&src[e.span.range()], bad);
    }
}

#[test]
fn error_spans() {
    let cases = [
        (
            "def f = fun x -> x",
            "->",
            "expected another parameter or `=>`",
        ),
        ("def f = (a b", "", "expected `)`"),
        ("def f = a +", "", "expected an operand"),
        ("def f = a + * b", "*", "expected an operand"),
        ("def f x = x", "x", "expected `=` or `:`"),
        ("def f = g )", ")", "expected an operator, the next `def`"),
        ("def = 3", "=", "expected the name of the definition"),
        ("f = 3", "f", "expected `def`"),
        ("def f = ()", ")", "expected an expression inside"),
        ("def f = (a, b, c)", ",", "expected `)`"),
        ("def f : f32 -> = x", "=", "expected a data type"),
        ("def f = fun => x", "=>", "expected a parameter name"),
        ("def f = x $ y", "$", "unexpected character"),
        ("def f = fun (x) => x", ")", "expected `:`"),
    ];
    for (src, at, msg) in cases {
        let e = err(src);
        assert!(e.message.contains(msg), "{src}: {}", e.message);
        assert_eq!(&src[e.span.range()], at, "{src}: {}", e.message);
    }
}

#[test]
fn deep_nesting_is_an_error_not_a_crash() {
    let n = 100_000;
    for src in [
        format!("def f = {}x{}", "(".repeat(n), ")".repeat(n)),
        format!("def f = {}x", "fun x => ".repeat(n)),
        format!("def f = {}x", "-".repeat(n)),
        format!("def f = {}x", "!".repeat(n)),
        format!("def f = {}x", "f (".repeat(n)),
        format!("def f = (x : {}f32{})", "(".repeat(n), ")".repeat(n)),
        format!("def f = (x : {}f32)", "f32 -> ".repeat(n)),
        format!("def f : {}f32 = x", "idx[".repeat(n)),
        format!("def f = fun (x: {}2) => x", "2^".repeat(n)),
        // long chains build deep trees without deep recursion of the parser
        format!("def f = x{}", " + x".repeat(n)),
        format!("def f = x{}", " |> f".repeat(n)),
        format!("def f = x{}", " >>> f".repeat(n)),
        format!("def f = f{}", " x".repeat(n)),
        format!("def f = fun{} => x", " x".repeat(n)),
        format!("def f = fun x => x{}", " |> fun x => x".repeat(n)),
    ] {
        let e = err(&src);
        assert!(e.message.contains("too deeply"), "{}", e.message);
    }
    // just below the limits works
    let depth = MAX_NESTING - 2;
    parse(&format!("{}x{}", "(".repeat(depth), ")".repeat(depth)));
    parse(&format!("x{}", " + x".repeat(MAX_DEPTH / 2 - 1)));
    parse(&format!("f{}", " x".repeat(MAX_DEPTH - 1)));
}

/// Every recursion path of the parser at its deepest, with the deepest type at
/// the bottom (`cargo test` runs tests on threads with 2 MiB of stack).
#[test]
fn nesting_just_below_the_limits_fits_on_a_test_thread_stack() {
    let k = MAX_TYPE_NESTING / 2 - 1;
    let types = [
        format!("{}f32{}", "(".repeat(2 * k), ")".repeat(2 * k)),
        format!("{}f32", "f32 -> ".repeat(2 * k)),
        format!("({}2{}).f32", "(".repeat(2 * k - 2), ")".repeat(2 * k - 2)),
        format!("idx[{}2]", "2^".repeat(2 * k - 1)),
        format!("{}f32{}", "vec[".repeat(k), ", 4]".repeat(k)),
        format!("{}f32{}", "((f32, ".repeat(k), "))".repeat(k)),
    ];
    let d = MAX_NESTING - 2;
    for ty in &types {
        let leaf = format!("(x : {ty})");
        for src in [
            format!("{}{leaf}{}", "(".repeat(d), ")".repeat(d)),
            format!("{}{leaf}", "fun x => ".repeat(d)),
            format!("{}{leaf}", "-".repeat(d)),
            format!("{}{leaf}{}", "f (".repeat(d), ")".repeat(d)),
            format!("{}{leaf}{}", "(a, ".repeat(d), ")".repeat(d)),
            format!(
                "{}{leaf}{}",
                "(a |> map fun x => g (".repeat(d / 2),
                "))".repeat(d / 2)
            ),
            format!(
                "{}{leaf}{}",
                "(a + - b * f (".repeat(d / 2),
                "))".repeat(d / 2)
            ),
        ] {
            let src = format!("def f = {src}");
            if let Err(e) = parse_program(&src) {
                assert!(e.message.contains("too deeply"), "{e}");
            }
        }
    }
}

#[test]
fn empty_program() {
    assert!(parse_program("  // nothing\n").unwrap().defs.is_empty());
    assert!(parse_expr("").is_err());
}

// ---- foreign functions ---------------------------------------------------------------

const CLAMP: &str = "foreign clampf (x: f32) (lo hi: f32) : f32 {
  /* a } in a comment */ // and }
  const char *s = \"}{\"; (void)s; (void)'}';
  return x < lo ? lo : (x > hi ? hi : x);
}
def f = fun xs => map (fun x => clampf x 0.0f 1.0f) xs
";

#[test]
fn foreign_functions_are_declared_and_called() {
    let p = parse_program(CLAMP).unwrap();
    let [f] = p.foreign.as_slice() else {
        panic!("{p:?}")
    };
    assert_eq!(&*f.name, "clampf");
    let names: Vec<&str> = f.params.iter().map(|(x, _)| &**x).collect();
    assert_eq!(names, ["x", "lo", "hi"]);
    assert!(f.params.iter().all(|(_, t)| *t == ScalarType::F32));
    assert_eq!(f.result, ScalarType::F32);
    assert!(f.body.contains("const char *s = \"}{\";") && f.body.contains("return x < lo"));
    assert_eq!(
        &CLAMP[f.span.start as usize..f.span.end as usize],
        &CLAMP[..CLAMP.find("\ndef").unwrap()]
    );
    // the call's head is the foreign function, not a variable
    let body = &p.defs[0].body;
    let printed = crate::syntax::print_program(&p);
    assert!(
        printed.starts_with("foreign clampf (x: f32) (lo: f32) (hi: f32) : f32 {"),
        "{printed}"
    );
    assert!(printed.contains("clampf x 0.0f 1.0f"), "{printed}");
    let again = parse_program(&printed).unwrap();
    assert_eq!(again.foreign, p.foreign);
    assert!(again.defs[0].body.alpha_eq(body));
    fn has_foreign(e: &Expr) -> bool {
        match e.kind() {
            ExprKind::Foreign(_) => true,
            ExprKind::App(f, a) => has_foreign(f) || has_foreign(a),
            ExprKind::Lambda(_, _, b) => has_foreign(b),
            _ => false,
        }
    }
    assert!(has_foreign(body));
    // a bound variable of that name is a variable
    let p = parse_program(&format!("{CLAMP}\ndef g = fun clampf => clampf")).unwrap();
    assert!(!has_foreign(&p.defs[1].body));
}

#[test]
fn foreign_declarations_are_checked() {
    let cases = [
        ("foreign map (x: f32) : f32 { return x; }", "primitive"),
        ("foreign int (x: f32) : f32 { return x; }", "keyword"),
        ("foreign f (float: f32) : f32 { return x; }", "keyword"),
        ("foreign f (x x: f32) : f32 { return x; }", "named twice"),
        (
            "foreign f (x: f32) : f32 { return x; } foreign f (y: f32) : f32 { return y; }",
            "declared twice",
        ),
        (
            "foreign f (x: f32) : f32 { return x; } def f = 1.0f",
            "defined and declared",
        ),
        (
            "def f = 1.0f foreign f (x: f32) : f32 { return x; }",
            "defined and declared",
        ),
        ("foreign f (x: 4.f32) : f32 { return x[0]; }", "an array"),
        ("foreign f (x: (f32, f32)) : f32 { return x; }", "a tuple"),
        ("foreign f (x: f32) : vec[f32, 4] { return x; }", "a vector"),
        ("foreign f (x: f16) : f32 { return x; }", "f16"),
        ("foreign f (x: idx[4]) : f32 { return x; }", "not a scalar"),
        ("foreign f : f32 { return 1.0f; }", "at least one parameter"),
        ("foreign f (x: f32) : f32 x", "C body"),
        ("foreign shine_f (x: f32) : f32 { return x; }", "reserved"),
    ];
    for (src, what) in cases {
        let e = err(src);
        let text = format!("{e}");
        assert!(text.contains(what), "{src}: {text}");
    }
    // an unterminated body points at its `{`
    let src = "foreign f (x: f32) : f32 { if (x > 0) { return x; }";
    let e = err(src);
    assert!(e.message.contains("unterminated"), "{e}");
    assert_eq!(e.span.start as usize, src.find('{').unwrap());
    // the type's span is reported
    let src = "foreign f (x: 4.f32) : f32 { return 0; }";
    let e = err(src);
    assert_eq!(&src[e.span.start as usize..e.span.end as usize], "4.f32");
}

#[test]
fn a_definition_shadows_a_primitive_with_a_warning() {
    let p = parse_program("def fabs = fun x => x\ndef g = fun y => fabs (-inff) < nan").unwrap();
    assert_eq!(p.warnings.len(), 1);
    assert!(p.warnings[0]
        .message
        .contains("shadows the primitive `fabs`"));
    let shown = format!("{:?}", p.defs[1].body);
    assert!(shown.contains("Var(\"fabs\")"), "{shown}");
}

#[test]
fn operators_follow_c_precedence() {
    let same = |a: &str, b: &str| {
        let (x, y) = (parse(a), parse(b));
        assert!(x.alpha_eq(&y), "{a} is not {b}");
    };
    same("a || b && c", "or a (and b c)");
    same("a | b ^ c & d", "bitOr a (bitXor b (bitAnd c d))");
    same("a & b == c", "bitAnd a (equal b c)");
    same("a != b < c", "notEqual a (lt b c)");
    same("a <= b << c + d", "le a (shl b (add c d))");
    same("a >= b >> c", "ge a (shr b c)");
    same("~a & !b", "bitAnd (bitNot a) (not b)");
    same("-inff", "(-inff)");
}

#[test]
fn let_binds_a_value_for_its_body() {
    // `let x = e in body` is the primitive `let e (fun x => body)`
    assert_eq!(
        parse("let x = 1 + 2 in x * x"),
        ap2(
            prim(Prim::Let),
            ap2(prim(Prim::Add), int(1), int(2)),
            lam("x", ap2(prim(Prim::Mul), var("x"), var("x")))
        )
    );
    // nested, and the primitive `let v f` written out is the same
    assert_eq!(
        parse("let a = 1 in let b = a in b"),
        ap2(
            prim(Prim::Let),
            int(1),
            lam("a", ap2(prim(Prim::Let), var("a"), lam("b", var("b"))))
        )
    );
    assert_eq!(
        parse("let 1 (fun v => v)"),
        ap2(prim(Prim::Let), int(1), lam("v", var("v")))
    );
    let e = err("def f = fun y => let x = y");
    assert!(e.message.contains("`in`"), "{}", e.message);
}
