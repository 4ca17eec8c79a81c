//! The tensor-core primitive `mmaSync` and the fragment views of `examples/tensor.rise`
//! against each other and against a plain matrix product: the views `fragA`, `fragB`,
//! `fragC` place every tile element where `rise::fragments` (the PTX ISA's layouts) says
//! a lane holds it, `unfragC` undoes `fragC`, and `unfragC (mmaSync (fragA a) (fragB b)
//! (fragC c))` is `c + a·b` for random f16 and bf16 tiles (every product exact, the sum
//! rounded to f32 once: within an ulp of an f64 reference).

use half::{bf16, f16};
use proptest::prelude::*;
use rise::fragments::{self, K, LANES, M, N};
use rise::interp::{self, Scalar, Value};

/// The example's views, and definitions at the types tested here.
fn source() -> String {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/tensor.rise");
    let text = std::fs::read_to_string(path).expect("examples/tensor.rise");
    text + "
def tileF16 : 16.16.f16 -> 16.8.f16 -> 16.8.f32 -> 16.8.f32 = fun a b c =>
  unfragC (mmaSync (fragA a) (fragB b) (fragC c))
def tileBf16 : 16.16.bf16 -> 16.8.bf16 -> 16.8.f32 -> 16.8.f32 = fun a b c =>
  unfragC (mmaSync (fragA a) (fragB b) (fragC c))
def viewA : 16.16.int -> 32.8.int = fun x => fragA x
def viewB : 16.8.int -> 32.4.int = fun x => fragB x
def viewC : 16.8.int -> 32.4.int = fun x => fragC x
def roundTrip : 16.8.int -> 16.8.int = fun x => unfragC (fragC x)
"
}

fn run(def: &str, inputs: Vec<Value>) -> Value {
    let src = source();
    let render = |d: rise::Diagnostic| d.render("tensor.rise", &src);
    let program = rise::infer::check_source(&src).unwrap_or_else(|d| panic!("{}", render(d)));
    let types: Vec<rise::DataType> = inputs
        .iter()
        .map(|v| v.data_type().expect("data"))
        .collect();
    let instance = rise::infer::instantiate_def(&program, def, &types, &[])
        .unwrap_or_else(|d| panic!("{}", render(d)));
    let f = interp::eval(&instance.expr).unwrap_or_else(|e| panic!("{}", render(e.into())));
    interp::apply(&f, inputs).unwrap_or_else(|e| panic!("{}", render(e.into())))
}

fn matrix(rows: usize, cols: usize, f: impl Fn(usize, usize) -> Value) -> Value {
    Value::array(
        (0..rows)
            .map(|r| Value::array((0..cols).map(|c| f(r, c)).collect()))
            .collect(),
    )
}

fn scalar_at(v: &Value, r: usize, c: usize) -> Scalar {
    v.as_array().expect("rows")[r].as_array().expect("row")[c]
        .as_scalar()
        .expect("scalar")
}

/// A view's name, its tile's rows and columns, elements per lane, and its layout.
type ViewCase = (
    &'static str,
    usize,
    usize,
    usize,
    fn(usize, usize) -> (usize, usize),
);

/// Each view puts tile element `(r, c)` (the value `r * 100 + c`) where the layout says.
#[test]
fn views_follow_the_isa_layouts() {
    let tile = |rows, cols| matrix(rows, cols, |r, c| Value::int((r * 100 + c) as i32));
    let cases: [ViewCase; 3] = [
        ("viewA", M, K, fragments::A_PER_LANE, fragments::a_element),
        ("viewB", K, N, fragments::B_PER_LANE, fragments::b_element),
        ("viewC", M, N, fragments::C_PER_LANE, fragments::c_element),
    ];
    for (def, rows, cols, per_lane, layout) in cases {
        let frag = run(def, vec![tile(rows, cols)]);
        for l in 0..LANES {
            for i in 0..per_lane {
                let (r, c) = layout(l, i);
                assert_eq!(
                    scalar_at(&frag, l, i),
                    Scalar::Int((r * 100 + c) as i32),
                    "{def}: lane {l} element {i}"
                );
            }
        }
    }
    let c = tile(M, N);
    assert_eq!(run("roundTrip", vec![c.clone()]).data_eq(&c), Some(true));
}

/// 16-bit floats of every finite magnitude a product stays finite for: a sign, an
/// exponent in `-14..=12` and any mantissa, as f64.
fn half_value() -> impl Strategy<Value = f64> {
    (any::<bool>(), -14i32..=12, 0u32..1024).prop_map(|(neg, e, m)| {
        (if neg { -1.0 } else { 1.0 }) * (1.0 + m as f64 / 1024.0) * 2f64.powi(e)
    })
}

fn tiles() -> impl Strategy<Value = (Vec<f64>, Vec<f64>, Vec<f32>)> {
    (
        prop::collection::vec(half_value(), M * K),
        prop::collection::vec(half_value(), K * N),
        prop::collection::vec(-1.0e3f32..1.0e3, M * N),
    )
}

/// `c + a·b` as the interpreter must give it, within an ulp of the f64 sum (products of
/// 16-bit floats are exact in f64).
fn check_product(got: &Value, a: &[f64], b: &[f64], c: &[f32]) -> Result<(), TestCaseError> {
    for r in 0..M {
        for n in 0..N {
            let terms: Vec<f64> = (0..K).map(|k| a[r * K + k] * b[k * N + n]).collect();
            let want = c[r * N + n] as f64 + terms.iter().sum::<f64>();
            let magnitude = c[r * N + n].abs() as f64 + terms.iter().map(|t| t.abs()).sum::<f64>();
            let Scalar::F32(g) = scalar_at(got, r, n) else {
                return Err(TestCaseError::fail("not an f32"));
            };
            let ulp = (want.abs() as f32).max(f32::MIN_POSITIVE) * f32::EPSILON;
            let slack = ulp as f64 + magnitude * 1e-13;
            prop_assert!(
                (g as f64 - want).abs() <= slack,
                "D[{r}][{n}] = {g}, expected {want}"
            );
        }
    }
    Ok(())
}

/// `def` (a tile multiply of 16-bit tiles) on the tiles `a`, `b` rounded to the 16-bit
/// type by `to_half`, and `c`, checked against the product.
fn tiles_multiply(
    def: &str,
    to_half: fn(f64) -> Scalar,
    (a, b, c): (Vec<f64>, Vec<f64>, Vec<f32>),
) -> Result<(), TestCaseError> {
    let rounded = |xs: &[f64]| -> Vec<f64> { xs.iter().map(|&x| to_half(x).as_f64()).collect() };
    let (a, b) = (rounded(&a), rounded(&b));
    let h = |x: f64| Value::Scalar(to_half(x));
    let got = run(
        def,
        vec![
            matrix(M, K, |r, k| h(a[r * K + k])),
            matrix(K, N, |k, n| h(b[k * N + n])),
            matrix(M, N, |r, n| Value::f32(c[r * N + n])),
        ],
    );
    check_product(&got, &a, &b, &c)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn f16_tiles_multiply_like_matrices(t in tiles()) {
        tiles_multiply("tileF16", |x| Scalar::F16(f16::from_f64(x)), t)?;
    }

    #[test]
    fn bf16_tiles_multiply_like_matrices(t in tiles()) {
        tiles_multiply("tileBf16", |x| Scalar::Bf16(bf16::from_f64(x)), t)?;
    }
}

/// `mmaSync` on f32 tiles is a type error that names the types it takes.
#[test]
fn f32_tiles_are_refused() {
    let src = format!(
        "{}\ndef bad : 16.16.f32 -> 16.8.f32 -> 16.8.f32 -> 16.8.f32 = fun a b c =>\n  \
         unfragC (mmaSync (fragA a) (fragB b) (fragC c))\n",
        source()
    );
    let err = rise::infer::check_source(&src).expect_err("refused");
    let text = err.render("tensor.rise", &src);
    assert!(
        text.contains("`mmaSync` multiplies f16 or bf16 tiles"),
        "{text}"
    );
}
