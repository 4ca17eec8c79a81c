//! Property tests of foreign functions (issue 14): a foreign function whose C body computes
//! a random expression of its arguments agrees with the same expression written in RISE,
//! on random inputs,
//!
//! * in the interpreter, which runs the C body compiled by the system C compiler in a
//!   child process (`shine::foreign::CEvaluator`), through the library API: the foreign
//!   map and the RISE map give equal results (floats: IEEE `==`; the helper is built
//!   without contraction, so each operation rounds as the interpreter's does);
//! * in compiled C code, through `shine run --target c --verify` (compiled code against
//!   the interpreter with its foreign evaluator), whose output must also equal the RISE
//!   map's result within `--verify`'s tolerance (the code is built with `-march=native`,
//!   where the C compiler may fuse a multiply and an add).
//!
//! Expressions: `+ - *`, a literal, `fmaxf`/`fmax`, a conditional (`c ? a : b`, `select`)
//! and a body of statements (a local, `if`, two `return`s), over `f32` and over `u32`
//! (unsigned: wrap-around is defined in C, and the interpreter wraps too). Each case
//! compiles C, so the case counts are small.

use proptest::prelude::*;
use shine::foreign::CEvaluator;
use shine::rise::interp::{self, Scalar, Value};
use shine::rise::{DataType, ScalarType, Type};
use shine::Array;
use std::path::Path;

mod support;
use support::shine_in;

/// One expression as C and as RISE text, over the arguments `x` and `y`.
#[derive(Clone, Debug)]
struct Both {
    c: String,
    rise: String,
}

/// The element type of a test: its RISE name, its C type and how literals are written.
#[derive(Clone, Copy, Debug)]
enum Elem {
    F32,
    U32,
}

impl Elem {
    fn rise(self) -> &'static str {
        match self {
            Elem::F32 => "f32",
            Elem::U32 => "u32",
        }
    }

    fn c(self) -> &'static str {
        match self {
            Elem::F32 => "float",
            Elem::U32 => "uint32_t",
        }
    }

    /// The literal `k / 4` (floats) or `k * 977` (unsigned).
    fn literal(self, k: u32) -> Both {
        match self {
            Elem::F32 => {
                let v = format!("{:?}", k as f32 / 4.0);
                Both {
                    c: format!("{v}f"),
                    rise: format!("{v}f"),
                }
            }
            Elem::U32 => Both {
                c: format!("{}u", k * 977),
                rise: format!("{}u32", k * 977),
            },
        }
    }

    /// `fmaxf(a, b)` / `fmax a b` on floats; on unsigned integers the larger one, written
    /// with a conditional in C and `max` in RISE.
    fn max(self, a: &Both, b: &Both) -> Both {
        match self {
            Elem::F32 => Both {
                c: format!("fmaxf({}, {})", a.c, b.c),
                rise: format!("(fmax {} {})", a.rise, b.rise),
            },
            Elem::U32 => Both {
                c: format!("({0} > {1} ? {0} : {1})", a.c, b.c),
                rise: format!("(max {} {})", a.rise, b.rise),
            },
        }
    }
}

fn var(name: &str, rise: &str) -> Both {
    Both {
        c: name.to_string(),
        rise: rise.to_string(),
    }
}

/// Random expressions of `x` and `y` (`fst p` and `snd p` in RISE).
fn expr(elem: Elem) -> impl Strategy<Value = Both> {
    let leaf = prop_oneof![
        Just(var("x", "(fst p)")),
        Just(var("y", "(snd p)")),
        (0u32..12).prop_map(move |k| elem.literal(k)),
    ];
    leaf.prop_recursive(3, 12, 3, move |inner| {
        prop_oneof![
            (inner.clone(), inner.clone(), 0usize..3).prop_map(|(a, b, op)| {
                let op = ["+", "-", "*"][op];
                Both {
                    c: format!("({} {op} {})", a.c, b.c),
                    rise: format!("({} {op} {})", a.rise, b.rise),
                }
            }),
            (inner.clone(), inner.clone()).prop_map(move |(a, b)| elem.max(&a, &b)),
            (inner.clone(), inner.clone(), inner.clone(), inner).prop_map(|(a, b, c, d)| Both {
                c: format!("({} < {} ? {} : {})", a.c, b.c, c.c, d.c),
                rise: format!("(select ({} < {}) {} {})", a.rise, b.rise, c.rise, d.rise),
            }),
        ]
    })
}

/// A foreign function's body and its RISE equal: `return e;`, or statements
/// `T t = a; if (t < b) return c; return t;` (RISE: `select (a < b) c a`).
fn body(elem: Elem) -> impl Strategy<Value = Both> {
    prop_oneof![
        3 => expr(elem).prop_map(|e| Both { c: format!("return {};", e.c), rise: e.rise }),
        1 => (expr(elem), expr(elem), expr(elem)).prop_map(move |(a, b, c)| Both {
            c: format!(
                "\n  {} t = {};\n  if (t < {}) return {};\n  return t;\n",
                elem.c(),
                a.c,
                b.c,
                c.c
            ),
            rise: format!("(select ({} < {}) {} {})", a.rise, b.rise, c.rise, a.rise),
        }),
    ]
}

/// The program: the foreign function `ff` of the body, `viaForeign` mapping it over two
/// arrays and `viaRise` mapping the RISE expression.
fn program(elem: Elem, body: &Both) -> String {
    let t = elem.rise();
    format!(
        "foreign ff (x: {t}) (y: {t}) : {t} {{{}}}\n\
         def viaForeign : {{n: nat}} -> n.{t} -> n.{t} -> n.{t} =\n  \
           fun xs ys => zip xs ys |> map (fun p => ff (fst p) (snd p))\n\
         def viaRise : {{n: nat}} -> n.{t} -> n.{t} -> n.{t} =\n  \
           fun xs ys => zip xs ys |> map (fun p => {})\n",
        body.c, body.rise
    )
}

/// Random inputs: small floats, or unsigned integers anywhere in their range (products
/// and sums wrap).
fn inputs(elem: Elem) -> impl Strategy<Value = (Vec<Scalar>, Vec<Scalar>)> {
    (1usize..10).prop_flat_map(move |n| {
        let one = match elem {
            Elem::F32 => (-32i32..32)
                .prop_map(|k| Scalar::F32(k as f32 / 8.0))
                .boxed(),
            Elem::U32 => prop_oneof![0u32..20, any::<u32>()]
                .prop_map(Scalar::U32)
                .boxed(),
        };
        (
            proptest::collection::vec(one.clone(), n),
            proptest::collection::vec(one, n),
        )
    })
}

/// `def` of `src` evaluated by the interpreter on `inputs`, foreign functions run by
/// the C evaluator (`cc`).
fn eval(src: &str, def: &str, inputs: &[Vec<Scalar>]) -> Result<Vec<Scalar>, String> {
    let program = shine::rise::infer::check_source(src).map_err(|d| d.render("p.rise", src))?;
    let values: Vec<Value> = inputs
        .iter()
        .map(|xs| Value::array(xs.iter().map(|&s| Value::Scalar(s)).collect()))
        .collect();
    let types: Vec<DataType> = values.iter().filter_map(Value::data_type).collect();
    let instance = shine::rise::infer::instantiate_def(&program, def, &types, &[])
        .map_err(|d| d.render("p.rise", src))?;
    let foreign = CEvaluator::for_expr(&instance.expr, "cc");
    let f = interp::eval_with_foreign(&instance.expr, &[], foreign).map_err(|e| e.to_string())?;
    let out = interp::apply(&f, values).map_err(|e| e.to_string())?;
    let Type::Data(t) = &instance.result else {
        return Err("the result is no data".into());
    };
    Ok(out.to_flat(t).map_err(|e| e.to_string())?.data)
}

/// Equal as the interpreter compares scalars: floats with IEEE `==`, integers exactly.
fn equal(a: &[Scalar], b: &[Scalar]) -> bool {
    a.len() == b.len()
        && a.iter().zip(b).all(|(x, y)| match (x, y) {
            (Scalar::F32(x), Scalar::F32(y)) => x == y,
            (x, y) => x == y,
        })
}

/// Equal within `--verify`'s tolerance for `f32` (relative and absolute 1e-4 here, more
/// than the last-bit differences of a fused multiply-add), integers exactly.
fn close(a: &[Scalar], b: &[Scalar]) -> bool {
    a.len() == b.len()
        && a.iter().zip(b).all(|(x, y)| match (x, y) {
            (Scalar::F32(x), Scalar::F32(y)) => (x - y).abs() <= 1e-4 + 1e-4 * y.abs(),
            (x, y) => x == y,
        })
}

fn write(path: &Path, elem: ScalarType, data: &[Scalar]) {
    let a = Array {
        elem: DataType::Scalar(elem),
        shape: vec![data.len()],
        data: data.to_vec(),
    };
    shine::npy::write(path, &a).unwrap();
}

fn scalar_type(elem: Elem) -> ScalarType {
    match elem {
        Elem::F32 => ScalarType::F32,
        Elem::U32 => ScalarType::U32,
    }
}

/// The interpreter: the foreign map equals the RISE map.
fn agrees_in_the_interpreter(
    elem: Elem,
    body: &Both,
    (xs, ys): &(Vec<Scalar>, Vec<Scalar>),
) -> Result<(), TestCaseError> {
    let src = program(elem, body);
    let inputs = [xs.clone(), ys.clone()];
    let foreign = eval(&src, "viaForeign", &inputs).map_err(TestCaseError::fail)?;
    let rise = eval(&src, "viaRise", &inputs).map_err(TestCaseError::fail)?;
    prop_assert!(
        equal(&foreign, &rise),
        "{src}\ninputs {xs:?} {ys:?}\nforeign {foreign:?}\nRISE    {rise:?}"
    );
    Ok(())
}

/// Compiled C: `shine run --verify` passes, and its output equals the RISE map's result.
fn agrees_in_compiled_c(
    elem: Elem,
    body: &Both,
    (xs, ys): &(Vec<Scalar>, Vec<Scalar>),
) -> Result<(), TestCaseError> {
    let src = program(elem, body);
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("p.rise"), &src).unwrap();
    write(&dir.path().join("xs.npy"), scalar_type(elem), xs);
    write(&dir.path().join("ys.npy"), scalar_type(elem), ys);
    let (out, text) = shine_in(
        dir.path(),
        &[
            "run",
            "p.rise",
            "--def",
            "viaForeign",
            "--target",
            "c",
            "--input",
            "xs.npy",
            "--input",
            "ys.npy",
            "--verify",
            "--output",
            "out.npy",
        ],
    );
    prop_assert!(
        out.status.success() && text.contains("verified against the interpreter"),
        "{src}\n{text}"
    );
    let got = shine::npy::read(&dir.path().join("out.npy"))
        .map_err(TestCaseError::fail)?
        .data;
    let rise = eval(&src, "viaRise", &[xs.clone(), ys.clone()]).map_err(TestCaseError::fail)?;
    prop_assert!(
        close(&got, &rise),
        "{src}\ninputs {xs:?} {ys:?}\ncompiled {got:?}\nRISE     {rise:?}"
    );
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    /// Float bodies in the interpreter.
    #[test]
    fn f32_bodies_agree_in_the_interpreter(b in body(Elem::F32), xy in inputs(Elem::F32)) {
        agrees_in_the_interpreter(Elem::F32, &b, &xy)?;
    }

    /// Unsigned bodies (wrapping) in the interpreter.
    #[test]
    fn u32_bodies_agree_in_the_interpreter(b in body(Elem::U32), xy in inputs(Elem::U32)) {
        agrees_in_the_interpreter(Elem::U32, &b, &xy)?;
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 12, ..ProptestConfig::default() })]

    /// Float bodies compiled for C.
    #[test]
    fn f32_bodies_agree_in_compiled_c(b in body(Elem::F32), xy in inputs(Elem::F32)) {
        agrees_in_compiled_c(Elem::F32, &b, &xy)?;
    }

    /// Unsigned bodies compiled for C.
    #[test]
    fn u32_bodies_agree_in_compiled_c(b in body(Elem::U32), xy in inputs(Elem::U32)) {
        agrees_in_compiled_c(Elem::U32, &b, &xy)?;
    }
}

/// The example of the brief, fixed: `x * y + 1.0f` in both forms, on both paths.
#[test]
fn multiply_add_agrees() {
    let b = Both {
        c: "return x * y + 1.0f;".into(),
        rise: "((fst p) * (snd p) + 1.0f)".into(),
    };
    let xy = (
        [0.5f32, -1.25, 3.0].map(Scalar::F32).to_vec(),
        [2.0f32, 4.0, -0.125].map(Scalar::F32).to_vec(),
    );
    agrees_in_the_interpreter(Elem::F32, &b, &xy).unwrap();
    agrees_in_compiled_c(Elem::F32, &b, &xy).unwrap();
    // and a body that differs from its RISE twin is caught (the test can fail)
    let wrong = Both {
        c: "return x * y + 2.0f;".into(),
        rise: b.rise,
    };
    assert!(agrees_in_the_interpreter(Elem::F32, &wrong, &xy).is_err());
}
