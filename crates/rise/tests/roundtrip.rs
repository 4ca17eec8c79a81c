//! Printing then parsing gives back the same term: `parse(print(e))` is
//! alpha-equivalent to `e` for random well-scoped terms of the surface syntax.
//!
//! Terms are generated as shapes whose variables are indices, resolved against
//! the enclosing binders when the term is built, so every generated variable is
//! bound (or deliberately free) and shrinking stays meaningful. Only terms the
//! surface syntax can represent are generated: no dependent applications and no
//! `natType` literals (those read back as applications and annotations, see
//! `rise::syntax::print`).

use proptest::prelude::*;
use rise::syntax::{parse_expr, parse_program, parse_type, print_expr, print_program};
use rise::types::Name;
use rise::{Binder, Def, Expr, ExprKind, Kind, Literal, Prim, Program, ScalarType, Span, Type};

/// Names of value binders: ordinary ones, one that shadows a primitive, a keyword
/// and a name that is no identifier (the last three must be renamed by the printer).
const BINDERS: &[&str] = &[
    "x",
    "y",
    "xs",
    "f",
    "x_0",
    "map",
    "mapGlobal",
    "add",
    "def",
    "?a",
];
/// Names of type-level binders (the parser treats them as variables in expressions).
const DEP_BINDERS: &[&str] = &["n", "m", "t", "s"];
/// Free variables: definitions and address spaces.
const FREE: &[&str] = &["dot", "private", "global", "foo", "x_1"];
const KINDS: &[Kind] = &[
    Kind::Nat,
    Kind::Data,
    Kind::AddrSpace,
    Kind::NatToNat,
    Kind::NatToData,
];
const TYPES: &[&str] = &[
    "f32",
    "n.f32",
    "(f32, i32)",
    "idx[n]",
    "vec[f32, 4]",
    "f32 -> f32",
    "{n: nat} -> n.f32 -> f32",
    "m.(n+1).(f32, bool)",
    "(l: nat) -> (l*2).t -> l.t",
];
const INFIX: &[Prim] = &[
    Prim::Add,
    Prim::Sub,
    Prim::Mul,
    Prim::Div,
    Prim::Mod,
    Prim::Lt,
    Prim::Gt,
    Prim::Equal,
];

/// A term with variables as indices.
#[derive(Clone, Debug)]
enum Shape {
    /// The `i`-th enclosing binder (modulo their number), or a free variable if none.
    Var(usize),
    Free(usize),
    Prim(usize),
    Lit(Literal),
    Lambda(usize, Option<usize>, Box<Shape>),
    DepLambda(usize, usize, Box<Shape>),
    App(Box<Shape>, Box<Shape>),
    Infix(usize, Box<Shape>, Box<Shape>),
    Unary(bool, Box<Shape>),
    Pair(Box<Shape>, Box<Shape>),
    Annot(Box<Shape>, usize),
}

fn literal() -> impl Strategy<Value = Literal> {
    let int = |t: ScalarType, lo: i64, hi: i64| (lo..=hi).prop_map(move |v| Literal::Int(v, t));
    prop_oneof![
        any::<bool>().prop_map(Literal::Bool),
        any::<i64>().prop_map(|v| Literal::Int(v, ScalarType::Int)),
        (0i64..100).prop_map(|v| Literal::Int(v, ScalarType::Int)),
        int(ScalarType::I8, i8::MIN.into(), i8::MAX.into()),
        int(ScalarType::I16, i16::MIN.into(), i16::MAX.into()),
        int(ScalarType::I32, i32::MIN.into(), i32::MAX.into()),
        int(ScalarType::I64, i64::MIN, i64::MAX),
        int(ScalarType::U8, 0, u8::MAX.into()),
        int(ScalarType::U16, 0, u16::MAX.into()),
        int(ScalarType::U32, 0, u32::MAX.into()),
        int(ScalarType::U64, 0, i64::MAX),
        any::<f64>()
            .prop_filter("finite", |v| v.is_finite())
            .prop_map(|v| Literal::Float(v, ScalarType::F64)),
        any::<f32>()
            .prop_filter("finite", |v| v.is_finite())
            .prop_map(|v| Literal::Float(f64::from(v), ScalarType::F32)),
        any::<u16>()
            .prop_map(half::f16::from_bits)
            .prop_filter("finite", |v| v.is_finite())
            .prop_map(|v| Literal::Float(v.to_f64(), ScalarType::F16)),
        prop::sample::select(vec![0.0f32, -0.0, 1.0, 0.5, 1e-7, 1e20, 123.25])
            .prop_map(|v| Literal::Float(f64::from(v), ScalarType::F32)),
    ]
}

fn shape() -> impl Strategy<Value = Shape> {
    let leaf = prop_oneof![
        4 => any::<usize>().prop_map(Shape::Var),
        1 => any::<usize>().prop_map(Shape::Free),
        2 => any::<usize>().prop_map(Shape::Prim),
        2 => literal().prop_map(Shape::Lit),
    ];
    leaf.prop_recursive(6, 48, 3, |inner| {
        let b = || inner.clone().prop_map(Box::new);
        prop_oneof![
            3 => (any::<usize>(), prop::option::of(any::<usize>()), b())
                .prop_map(|(x, t, e)| Shape::Lambda(x, t, e)),
            1 => (any::<usize>(), any::<usize>(), b()).prop_map(|(x, k, e)| Shape::DepLambda(x, k, e)),
            4 => (b(), b()).prop_map(|(f, a)| Shape::App(f, a)),
            2 => (any::<usize>(), b(), b()).prop_map(|(o, a, c)| Shape::Infix(o, a, c)),
            1 => (any::<bool>(), b()).prop_map(|(neg, e)| Shape::Unary(neg, e)),
            1 => (b(), b()).prop_map(|(a, c)| Shape::Pair(a, c)),
            1 => (b(), any::<usize>()).prop_map(|(e, t)| Shape::Annot(e, t)),
        ]
    })
}

fn node(kind: ExprKind) -> Expr {
    Expr::new(kind, Span::default())
}

fn prim(p: Prim) -> Expr {
    node(ExprKind::Prim(p))
}

fn app(f: Expr, a: Expr) -> Expr {
    node(ExprKind::App(f, a))
}

fn ty(i: usize) -> Type {
    let src = TYPES[i % TYPES.len()];
    parse_type(src).unwrap_or_else(|e| panic!("{src}: {e}"))
}

/// The term of a shape, with variables resolved against `scope`.
fn build(s: &Shape, scope: &mut Vec<Name>) -> Expr {
    match s {
        Shape::Var(i) if !scope.is_empty() => node(ExprKind::Var(scope[i % scope.len()].clone())),
        Shape::Var(i) | Shape::Free(i) => node(ExprKind::Var(FREE[i % FREE.len()].into())),
        Shape::Prim(i) => prim(Prim::ALL[i % Prim::ALL.len()]),
        Shape::Lit(l) => node(ExprKind::Lit(l.clone())),
        Shape::Lambda(x, t, body) => {
            let x: Name = BINDERS[x % BINDERS.len()].into();
            scope.push(x.clone());
            let body = build(body, scope);
            scope.pop();
            node(ExprKind::Lambda(x, t.map(ty), body))
        }
        Shape::DepLambda(x, k, body) => {
            let x: Name = DEP_BINDERS[x % DEP_BINDERS.len()].into();
            scope.push(x.clone());
            let body = build(body, scope);
            scope.pop();
            node(ExprKind::DepLambda(
                Binder::new(x, KINDS[k % KINDS.len()]),
                body,
            ))
        }
        Shape::App(f, a) => app(build(f, scope), build(a, scope)),
        Shape::Infix(op, a, b) => {
            let op = prim(INFIX[op % INFIX.len()]);
            app(app(op, build(a, scope)), build(b, scope))
        }
        Shape::Unary(neg, e) => app(
            prim(if *neg { Prim::Neg } else { Prim::Not }),
            build(e, scope),
        ),
        Shape::Pair(a, b) => app(app(prim(Prim::MakePair), build(a, scope)), build(b, scope)),
        Shape::Annot(e, t) => node(ExprKind::Annot(build(e, scope), ty(*t))),
    }
}

fn expr() -> impl Strategy<Value = Expr> {
    shape().prop_map(|s| build(&s, &mut Vec::new()))
}

proptest! {
    #[test]
    fn print_then_parse_is_identity(e in expr()) {
        let printed = print_expr(&e);
        let back = parse_expr(&printed)
            .map_err(|err| TestCaseError::fail(format!("{printed}\ndoes not parse: {err}")))?;
        prop_assert!(back.alpha_eq(&e), "{:?}\nprinted as\n{}\nparsed back as\n{:?}", e, printed, back);
        // Printing is stable: the text of the term read back is the same.
        prop_assert_eq!(print_expr(&back), printed);
    }

    #[test]
    fn programs_print_then_parse(bodies in prop::collection::vec((expr(), prop::option::of(any::<usize>())), 0..4)) {
        let defs = bodies
            .into_iter()
            .enumerate()
            .map(|(i, (body, annot))| Def {
                name: format!("def{i}").into(),
                annot: annot.map(ty),
                body,
                span: Span::default(),
                name_span: Span::default(),
            })
            .collect();
        let program = Program {
            defs,
            foreign: Vec::new(),
            warnings: Vec::new(),
        };
        let printed = print_program(&program);
        let back = parse_program(&printed)
            .map_err(|err| TestCaseError::fail(format!("{printed}\ndoes not parse: {err}")))?;
        prop_assert_eq!(back.defs.len(), program.defs.len());
        for (a, b) in program.defs.iter().zip(&back.defs) {
            prop_assert_eq!(&a.name, &b.name);
            prop_assert_eq!(&a.annot, &b.annot);
            prop_assert!(a.body.alpha_eq(&b.body), "{}", printed);
        }
    }
}

#[test]
fn long_programs_are_broken_into_readable_lines() {
    let src = "def f = fun xs => xs |> map (fun row => row |> map (fun x => x * 2.0f + 1.0f) \
               |> reduce add 0.0f) |> padClamp 1 1 |> slide 3 1 |> map (fun nbh => reduce add 0.0f nbh) \
               |> join |> split 32 |> transpose";
    let printed = print_program(&parse_program(src).unwrap());
    assert!(printed.lines().all(|l| l.len() <= 100), "{printed}");
    assert!(printed.lines().count() > 3, "{printed}");
    assert!(parse_program(&printed).unwrap().defs[0]
        .body
        .alpha_eq(&parse_program(src).unwrap().defs[0].body));
}

/// Every `.rise` file of the repository (examples and the prelude) prints to text
/// that parses back to the same program, and printing that again changes nothing.
#[test]
fn repository_programs_round_trip() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = vec![root.join("src/infer/prelude.rise")];
    if let Ok(dir) = std::fs::read_dir(root.join("../../examples")) {
        files.extend(
            dir.filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.extension().is_some_and(|x| x == "rise")),
        );
    }
    for file in files {
        let Ok(src) = std::fs::read_to_string(&file) else {
            continue;
        };
        let program = parse_program(&src)
            .unwrap_or_else(|e| panic!("{}", e.render(&file.display().to_string(), &src)));
        let printed = print_program(&program);
        let back = parse_program(&printed).unwrap_or_else(|e| {
            panic!(
                "{}: printed program does not parse: {e}\n{printed}",
                file.display()
            )
        });
        assert_eq!(back.defs.len(), program.defs.len());
        for (a, b) in program.defs.iter().zip(&back.defs) {
            assert!(
                a.body.alpha_eq(&b.body) && a.annot == b.annot,
                "{}: {}\n{printed}",
                file.display(),
                a.name
            );
        }
        assert_eq!(print_program(&back), printed, "{}", file.display());
    }
}
