//! Tests of the interpreter: every primitive on small inputs (source programs,
//! type-checked), real programs against hand-written Rust loops, errors, and the
//! value conversions.

use super::*;
use crate::expr::{ExprKind, Literal};
use crate::primitives::Prim;
use crate::types::{DataType, ScalarType, Type};
use arith::Nat;
use half::f16;
use std::collections::BTreeSet;

mod poison;

// ---- helpers -------------------------------------------------------------------------

/// Checks `src`, instantiates `def` for the types of the inputs and evaluates it.
fn try_run(
    src: &str,
    def: &str,
    inputs: &[Value],
    nats: &[(&str, i64)],
) -> Result<(Value, Expr), String> {
    let prog = crate::infer::check_source(src)
        .map_err(|d| format!("type error: {}", d.render("test.rise", src)))?;
    let types: Vec<DataType> = inputs
        .iter()
        .map(|v| {
            v.data_type()
                .unwrap_or_else(|| panic!("no data type for input {v}"))
        })
        .collect();
    let nats: Vec<(String, i64)> = nats.iter().map(|(n, v)| (n.to_string(), *v)).collect();
    let inst = crate::infer::instantiate_def(&prog, def, &types, &nats)
        .map_err(|d| format!("instantiation error: {}", d.render("test.rise", src)))?;
    let f = eval(&inst.expr).map_err(|e| Diagnostic::from(e).render("test.rise", src))?;
    let out = if inputs.is_empty() {
        f
    } else {
        apply(&f, inputs.to_vec()).map_err(|e| Diagnostic::from(e).render("test.rise", src))?
    };
    if let Type::Data(d) = &inst.result {
        out.check(d)
            .map_err(|e| format!("result has the wrong type: {e}"))?;
    }
    Ok((out, inst.expr))
}

fn run(src: &str, inputs: &[Value]) -> Value {
    try_run(src, "main", inputs, &[])
        .unwrap_or_else(|e| panic!("{src}\n{e}"))
        .0
}

fn run_err(src: &str, inputs: &[Value]) -> String {
    match try_run(src, "main", inputs, &[]) {
        Ok((v, _)) => panic!("{src}\nexpected an error, got {v}"),
        Err(e) => e,
    }
}

fn f32s(xs: &[f32]) -> Value {
    Value::f32s(xs)
}

/// `scanWarp (fun a b => a - b)` of 1, 2, ..., 32, computed step by step.
fn hillis_steele_sub() -> [i32; 32] {
    let mut v: [i32; 32] = std::array::from_fn(|j| j as i32 + 1);
    for d in [1, 2, 4, 8, 16] {
        let before = v;
        for j in d..32 {
            v[j] = before[j] - before[j - d];
        }
    }
    v
}

fn ints(xs: &[i32]) -> Value {
    Value::array(xs.iter().map(|&x| Value::int(x)).collect())
}

fn idxs(xs: &[i64], bound: i64) -> Value {
    Value::array(
        xs.iter()
            .map(|&index| Value::Index { index, bound })
            .collect(),
    )
}

fn matrix(rows: &[&[f32]]) -> Value {
    Value::array(rows.iter().map(|r| f32s(r)).collect())
}

fn vecf(xs: &[f32]) -> Value {
    Value::vector(xs.iter().map(|&x| Value::f32(x)).collect())
}

/// A deterministic pseudo-random generator (no global state).
struct Lcg(u64);

impl Lcg {
    fn next_f32(&mut self) -> f32 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((self.0 >> 40) as f32 / (1u64 << 24) as f32) * 2.0 - 1.0
    }
    fn vec(&mut self, n: usize) -> Vec<f32> {
        (0..n).map(|_| self.next_f32()).collect()
    }
}

fn to_f32s(v: &Value) -> Vec<f32> {
    v.as_array()
        .expect("array")
        .iter()
        .map(|x| match x.as_scalar() {
            Some(Scalar::F32(f)) => f,
            _ => panic!("not f32: {x}"),
        })
        .collect()
}

fn prims_in(e: &Expr, out: &mut BTreeSet<Prim>) {
    match e.kind() {
        ExprKind::Prim(p) => {
            out.insert(*p);
        }
        ExprKind::Var(_) | ExprKind::Lit(_) | ExprKind::Foreign(_) => {}
        ExprKind::Lambda(_, _, b)
        | ExprKind::DepLambda(_, b)
        | ExprKind::DepApp(b, _)
        | ExprKind::Annot(b, _) => prims_in(b, out),
        ExprKind::App(f, a) => {
            prims_in(f, out);
            prims_in(a, out);
        }
    }
}

// ---- one program per primitive ---------------------------------------------------------

struct Case {
    src: String,
    inputs: Vec<Value>,
    expected: Value,
}

fn case(src: &str, inputs: Vec<Value>, expected: Value) -> Case {
    Case {
        src: format!("def main = {src}"),
        inputs,
        expected,
    }
}

fn primitive_cases() -> Vec<Case> {
    let x4 = || f32s(&[1.0, 2.0, 3.0, 4.0]);
    let mut cases = vec![
        case("fun x => id x", vec![Value::f32(3.5)], Value::f32(3.5)),
        case("fun x => neg x", vec![Value::int(5)], Value::int(-5)),
        case("fun (x: u8) y => x + y", vec![Value::Scalar(Scalar::U8(250)), Value::Scalar(Scalar::U8(10))], Value::Scalar(Scalar::U8(4))),
        case("fun x y => x - y", vec![Value::f32(1.5), Value::f32(4.0)], Value::f32(-2.5)),
        case("fun x y => x * y", vec![Value::int(-6), Value::int(7)], Value::int(-42)),
        case("fun x y => x / y", vec![Value::int(-7), Value::int(2)], Value::int(-3)),
        case("fun x y => x % y", vec![Value::int(-7), Value::int(2)], Value::int(-1)),
        case("fun c a b => select c a b", vec![Value::bool(false), Value::int(1), Value::int(2)], Value::int(2)),
        case("fun x y => not (gt x y)", vec![Value::f32(1.0), Value::f32(2.0)], Value::bool(true)),
        case("fun x y => lt x y", vec![Value::f64(1.0), Value::f64(2.0)], Value::bool(true)),
        case("fun x y => equal x y", vec![Value::int(3), Value::int(3)], Value::bool(true)),
        case("fun x y => le x y", vec![Value::f32(2.0), Value::f32(2.0)], Value::bool(true)),
        case("fun x y => ge x y", vec![Value::int(1), Value::int(2)], Value::bool(false)),
        case("fun x y => notEqual x y", vec![Value::f64(f64::NAN), Value::f64(f64::NAN)], Value::bool(true)),
        case("fun x y => and x y", vec![Value::bool(true), Value::bool(false)], Value::bool(false)),
        case("fun x y => or x y", vec![Value::bool(false), Value::bool(true)], Value::bool(true)),
        case("fun x y => bitAnd x y", vec![Value::int(12), Value::int(10)], Value::int(8)),
        case("fun x y => bitOr x y", vec![Value::int(12), Value::int(10)], Value::int(14)),
        case("fun x y => bitXor x y", vec![Value::int(12), Value::int(10)], Value::int(6)),
        case("fun x => bitNot x", vec![Value::int(0)], Value::int(-1)),
        case("fun x y => shl x y", vec![Value::int(-1), Value::int(31)], Value::int(i32::MIN)),
        case("fun x y => shr x y", vec![Value::int(-8), Value::int(2)], Value::int(-2)),
        case("fun (x: f32) => (cast x : int)", vec![Value::f32(-2.75)], Value::int(-2)),
        case(
            "fun (xs: 4.f32) => (generate (fun i => idx (natAsIndex 4 (indexAsNat i)) xs) : 4.f32)",
            vec![x4()],
            x4(),
        ),
        case(
            "fun x => let (x * 2.0f) (fun y => y + y)",
            vec![Value::f32(1.5)],
            Value::f32(6.0),
        ),
        case(
            "fun xs => toMem private (mapSeq (fun x => x + 1.0f) xs) (fun ys => reduceSeq add 0.0f ys)",
            vec![x4()],
            Value::f32(14.0),
        ),
        case("fun (xs: 3.f32) => take 2 xs", vec![f32s(&[1.0, 2.0, 3.0])], f32s(&[1.0, 2.0])),
        case("fun (xs: 3.f32) => drop 2 xs", vec![f32s(&[1.0, 2.0, 3.0])], f32s(&[3.0])),
        case("fun xs ys => concat xs ys", vec![f32s(&[1.0]), f32s(&[2.0, 3.0])], f32s(&[1.0, 2.0, 3.0])),
        case("fun xs => xs |> split 2 |> join", vec![x4()], x4()),
        case("fun xs => split 2 xs", vec![x4()], matrix(&[&[1.0, 2.0], &[3.0, 4.0]])),
        case(
            "fun (xs: 5.f32) => slide 3 2 xs",
            vec![f32s(&[1.0, 2.0, 3.0, 4.0, 5.0])],
            matrix(&[&[1.0, 2.0, 3.0], &[3.0, 4.0, 5.0]]),
        ),
        case(
            "fun xs => transpose xs",
            vec![matrix(&[&[1.0, 2.0, 3.0], &[4.0, 5.0, 6.0]])],
            matrix(&[&[1.0, 4.0], &[2.0, 5.0], &[3.0, 6.0]]),
        ),
        case(
            "fun xs ys => unzip (zip xs ys) |> fst",
            vec![x4(), ints(&[1, 2, 3, 4])],
            x4(),
        ),
        case(
            "fun x y => makePair x y |> mapFst (fun a => a + 1.0f) |> mapSnd (fun b => b * 2) |> snd",
            vec![Value::f32(1.0), Value::int(21)],
            Value::int(42),
        ),
        case(
            "fun (xs: 4.f32) => padCst 1 2 0.0f xs",
            vec![x4()],
            f32s(&[0.0, 1.0, 2.0, 3.0, 4.0, 0.0, 0.0]),
        ),
        case(
            "fun (xs: 4.f32) => padClamp 2 1 xs",
            vec![x4()],
            f32s(&[1.0, 1.0, 1.0, 2.0, 3.0, 4.0, 4.0]),
        ),
        case(
            "fun (xs: 4.f32) => padMirror 2 2 xs",
            vec![x4()],
            f32s(&[2.0, 1.0, 1.0, 2.0, 3.0, 4.0, 4.0, 3.0]),
        ),
        case(
            "fun (xs: 3.f32) => padWrap 2 2 xs",
            vec![f32s(&[1.0, 2.0, 3.0])],
            f32s(&[2.0, 3.0, 1.0, 2.0, 3.0, 1.0, 2.0]),
        ),
        case("fun xs => map (fun x => x * x) xs", vec![x4()], f32s(&[1.0, 4.0, 9.0, 16.0])),
        case("fun xs => reduce add 0.0f xs", vec![x4()], Value::f32(10.0)),
        case(
            "fun xs => scanSeq (fun x acc => acc * 10 + x) 0 xs",
            vec![ints(&[1, 2, 3])],
            ints(&[1, 12, 123]),
        ),
        // windows [1 2 3], [2 3 4], in order
        case(
            "fun xs => slideSeq 3 (fun w => reduceSeq (fun acc x => acc * 10 + x) 0 w) xs",
            vec![ints(&[1, 2, 3, 4])],
            ints(&[123, 234]),
        ),
        // tiles of 2: [1 2 | 3 pad], each scanned, then offset by init and the totals before
        case(
            "fun xs => scanLookback 1 2 (fun x acc => acc + x) 10 0 (fun t => scanSeq (fun x acc => acc + x) 0 t) xs",
            vec![ints(&[1, 2, 3])],
            ints(&[11, 13, 16]),
        ),
        case(
            "fun (xs: 8.f32) => iterate 2 (fun (l: nat) => fun ys => ys |> split 2 |> map (reduceSeq add 0.0f)) xs",
            vec![f32s(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0])],
            f32s(&[10.0, 26.0]),
        ),
        case(
            "fun is xs => gather is xs",
            vec![idxs(&[3, 0, 0], 4), x4()],
            f32s(&[4.0, 1.0, 1.0]),
        ),
        case(
            "fun (is: 4.idx[4]) xs => scatter is xs",
            vec![idxs(&[2, 0, 3, 1], 4), x4()],
            f32s(&[2.0, 4.0, 1.0, 3.0]),
        ),
        case(
            "fun (xs: 4.f32) => reorder (fun i => 3 - i) (fun i => 3 - i) xs",
            vec![x4()],
            f32s(&[4.0, 3.0, 2.0, 1.0]),
        ),
        case(
            "fun (xs: 8.f32) => xs |> asVector 4 |> map (fun v => v * vectorFromScalar 2.0f) |> asScalar",
            vec![f32s(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0])],
            f32s(&[2.0, 4.0, 6.0, 8.0, 10.0, 12.0, 14.0, 16.0]),
        ),
        case(
            "fun (xs: 4.f32) => asVector 2 xs",
            vec![x4()],
            Value::array(vec![vecf(&[1.0, 2.0]), vecf(&[3.0, 4.0])]),
        ),
        case(
            "fun v => mapVec (fun x => x + 1.0f) v",
            vec![vecf(&[1.0, 2.0])],
            vecf(&[2.0, 3.0]),
        ),
        case("fun v => lane 1 v", vec![vecf(&[1.0, 2.0, 3.0])], Value::f32(2.0)),
        case(
            "fun (a: f32) b => makeVector 3 a b (a + b)",
            vec![Value::f32(1.0), Value::f32(2.0)],
            vecf(&[1.0, 2.0, 3.0]),
        ),
        case(
            "fun a b c => makeArray 3 a b c",
            vec![Value::int(1), Value::int(2), Value::int(3)],
            ints(&[1, 2, 3]),
        ),
        case("fun xs => reduceSeq (fun acc x => acc * 2.0f + x) 0.0f xs", vec![x4()], Value::f32(26.0)),
        case("fun xs => reduceSeqUnroll (fun acc x => acc - x) 0.0f xs", vec![x4()], Value::f32(-10.0)),
        // pipelined: the copies run ahead in generated code, the fold is reduceSeq's
        case("fun xs => reduceSeqPipelined(2) (fun acc x => acc * 2.0f + x) 0.0f xs", vec![x4()], Value::f32(26.0)),
        case("fun xs => reduceSeqPipelined(3) (fun acc x => acc - x) 0.0f xs", vec![x4()], Value::f32(-10.0)),
        case("fun xs => reduceSeqPipelined(4) (fun acc x => acc * 3.0f - x) 0.0f xs", vec![x4()], Value::f32(-58.0)),
        // butterfly order: 1e8 meets -1e8 first, so no 1.0 is lost (a left fold gives 15)
        case(
            "fun xs => reduceWarp add xs",
            vec![f32s(&std::array::from_fn::<f32, 32, _>(|j| match j {
                0 => 1e8,
                16 => -1e8,
                _ => 1.0,
            }))],
            Value::f32(30.0),
        ),
        // Hillis and Steele's order: lane l gets x_l + ... + x_0
        case(
            "fun xs => scanWarp add xs",
            vec![ints(&std::array::from_fn::<i32, 32, _>(|j| j as i32 * 3 - 7))],
            ints(&std::array::from_fn::<i32, 32, _>(|l| {
                (0..=l as i32).map(|j| j * 3 - 7).sum()
            })),
        ),
        // for a non-associative operator the result is the steps' (v[j] := v[j] - v[j - d]),
        // not a left fold's
        case(
            "fun xs => scanWarp (fun a b => a - b) xs",
            vec![ints(&std::array::from_fn::<i32, 32, _>(|j| j as i32 + 1))],
            ints(&hillis_steele_sub()),
        ),
        // every element of D: 0.5 + 16 products 1 * 2 (the layouts: tests/fragments.rs)
        case(
            "fun a b c => mmaSync a b c",
            {
                let frag = |per_lane: usize, x: Value| {
                    Value::array(vec![Value::array(vec![x; per_lane]); 32])
                };
                let h = |x: f32| Value::Scalar(Scalar::F16(f16::from_f32(x)));
                vec![frag(8, h(1.0)), frag(4, h(2.0)), frag(4, Value::f32(0.5))]
            },
            Value::array(vec![f32s(&[32.5; 4]); 32]),
        ),
        // a warp group's: A[r][k] = r % 3, B[k][n] = n % 5 (16x16: two chunks), C = 0.5;
        // D[r][n] = 0.5 + 16 (r % 3)(n % 5), each element where group_c_element puts it
        case(
            "fun a b c => wgmma a b c",
            {
                let h = |x: usize| Value::Scalar(Scalar::F16(f16::from_f32(x as f32)));
                let a = (0..64).map(|r| Value::array(vec![h(r % 3); 16])).collect();
                let b = (0..16).map(|_| Value::array((0..16).map(|n| h(n % 5)).collect())).collect();
                let c = Value::array(vec![Value::array(vec![Value::array(vec![f32s(&[0.5; 4]); 2]); 32]); 4]);
                vec![Value::array(a), Value::array(b), c]
            },
            Value::array(
                (0..4)
                    .map(|w| {
                        Value::array(
                            (0..32)
                                .map(|l| {
                                    Value::array(
                                        (0..2)
                                            .map(|j| {
                                                let d: Vec<f32> = (0..4)
                                                    .map(|i| {
                                                        let (r, n) = crate::fragments::group_c_element(w, l, j, i);
                                                        0.5 + 16.0 * ((r % 3) * (n % 5)) as f32
                                                    })
                                                    .collect();
                                                f32s(&d)
                                            })
                                            .collect(),
                                    )
                                })
                                .collect(),
                        )
                    })
                    .collect(),
            ),
        ),
    ];
    // ---- math functions: exactly known values (and the cases that tell precisions apart)
    let f = Value::f32;
    let d = Value::f64;
    let sc = Value::Scalar;
    // 1 + 2^-12 squared is 1 + 2^-11 + 2^-24, which f32 rounds to 1 + 2^-11 (a tie,
    // to even): only a fused multiply-add keeps the 2^-24.
    let x = 1.0 + 2f32.powi(-12);
    cases.extend([
        case("fun (x: f32) => sqrt x", vec![f(2.25)], f(1.5)),
        case(
            "fun x => sqrt x",
            vec![vecf(&[4.0, 9.0])],
            vecf(&[2.0, 3.0]),
        ),
        case(
            "fun x => sqrt x",
            vec![sc(Scalar::F16(f16::from_f32(2.25)))],
            sc(Scalar::F16(f16::from_f32(1.5))),
        ),
        case("fun (x: f64) => rsqrt x", vec![d(0.25)], d(2.0)),
        case("fun (x: f32) => exp x", vec![f(0.0)], f(1.0)),
        case("fun (x: f64) => exp2 x", vec![d(-3.0)], d(0.125)),
        case("fun (x: f32) => log x", vec![f(1.0)], f(0.0)),
        case("fun (x: f64) => log2 x", vec![d(1024.0)], d(10.0)),
        case(
            "fun (x: f32) y => pow x y",
            vec![f(2.0), f(10.0)],
            f(1024.0),
        ),
        case("fun (x: f64) => sin x", vec![d(-0.0)], d(-0.0)),
        case("fun (x: f32) => cos x", vec![f(0.0)], f(1.0)),
        case("fun (x: f64) => tan x", vec![d(0.0)], d(0.0)),
        case("fun (x: f32) => tanh x", vec![f(f32::INFINITY)], f(1.0)),
        case(
            "fun (y: f64) x => atan2 y x",
            vec![d(0.0), d(-1.0)],
            d(std::f64::consts::PI),
        ),
        case("fun (x: f32) => fabs x", vec![f(-2.5)], f(2.5)),
        case("fun (x: f32) => floor x", vec![f(-1.5)], f(-2.0)),
        case("fun (x: f64) => ceil x", vec![d(-1.5)], d(-1.0)),
        case(
            "fun (x: f32) y => fmin x y",
            vec![f(f32::NAN), f(3.0)],
            f(3.0),
        ),
        case(
            "fun (x: f64) y => fmax x y",
            vec![d(-1.0), d(f64::NAN)],
            d(-1.0),
        ),
        case(
            "fun (x: f32) z => fma x x z",
            vec![f(x), f(-(1.0 + 2f32.powi(-11)))],
            f(2f32.powi(-24)),
        ),
        case(
            "fun (x: int) y => min x y",
            vec![Value::int(-3), Value::int(5)],
            Value::int(-3),
        ),
        case(
            "fun (x: u8) y => max x y",
            vec![sc(Scalar::U8(200)), sc(Scalar::U8(7))],
            sc(Scalar::U8(200)),
        ),
        case(
            "fun (x: int) => abs x",
            vec![Value::int(i32::MIN)],
            Value::int(i32::MIN),
        ),
        case(
            "fun (x: i64) => abs x",
            vec![sc(Scalar::I64(-5))],
            sc(Scalar::I64(5)),
        ),
        case("fun (x: f32) => abs x", vec![f(-0.5)], f(0.5)),
        case("fun (x: f64) => cbrt x", vec![d(-8.0)], d(-2.0)),
        case(
            "fun (x: f32) => expm1 x",
            vec![f(f32::NEG_INFINITY)],
            f(-1.0),
        ),
        case("fun (x: f64) => log10 x", vec![d(100.0)], d(2.0)),
        case(
            "fun (x: f32) => log1p x",
            vec![f(-1.0)],
            f(f32::NEG_INFINITY),
        ),
        case(
            "fun (x: f64) => asin x",
            vec![d(1.0)],
            d(std::f64::consts::FRAC_PI_2),
        ),
        case(
            "fun (x: f32) => acos x",
            vec![f(-1.0)],
            f(std::f32::consts::PI),
        ),
        case(
            "fun (x: f64) => atan x",
            vec![d(f64::INFINITY)],
            d(std::f64::consts::FRAC_PI_2),
        ),
        case("fun (x: f32) => sinh x", vec![f(0.0)], f(0.0)),
        case("fun (x: f64) => cosh x", vec![d(0.0)], d(1.0)),
        case(
            "fun (x: f32) => asinh x",
            vec![f(f32::NEG_INFINITY)],
            f(f32::NEG_INFINITY),
        ),
        case("fun (x: f32) => acosh x", vec![f(1.0)], f(0.0)),
        case(
            "fun (x: f64) => atanh x",
            vec![d(-1.0)],
            d(f64::NEG_INFINITY),
        ),
        case("fun (x: f64) => erf x", vec![d(f64::INFINITY)], d(1.0)),
        case("fun (x: f32) => erfc x", vec![f(f32::NEG_INFINITY)], f(2.0)),
        case("fun (x: f32) y => hypot x y", vec![f(3.0), f(-4.0)], f(5.0)),
        // C's rule: an infinite operand wins over a NaN
        case(
            "fun (x: f64) y => hypot x y",
            vec![d(f64::NAN), d(f64::NEG_INFINITY)],
            d(f64::INFINITY),
        ),
        // halfway cases away from zero (C's `round`, not banker's rounding), and
        // the float below 0.5, which `floor (x + 0.5)` would round up
        case(
            "fun x => round x",
            vec![vecf(&[2.5, -2.5, 0.5, 0.499_999_97])],
            vecf(&[3.0, -3.0, 1.0, 0.0]),
        ),
        case("fun (x: f64) => trunc x", vec![d(-1.75)], d(-1.0)),
        case(
            "fun (x: f32) y => copysign x y",
            vec![f(2.0), f(-0.0)],
            f(-2.0),
        ),
        case("fun (x: f64) y => fmod x y", vec![d(-7.5), d(2.0)], d(-1.5)),
    ]);
    for p in Prim::ALL.iter().filter(|p| p.is_map() && **p != Prim::Map) {
        cases.push(case(
            &format!("fun xs => {} (fun x => x * 2.0f) xs", p.name()),
            vec![x4()],
            f32s(&[2.0, 4.0, 6.0, 8.0]),
        ));
    }
    cases
}

#[test]
fn every_primitive_has_tested_semantics() {
    let mut seen = BTreeSet::new();
    for c in primitive_cases() {
        let (out, expr) =
            try_run(&c.src, "main", &c.inputs, &[]).unwrap_or_else(|e| panic!("{}\n{e}", c.src));
        assert!(
            out.approx_eq(&c.expected, 0.0, 0.0),
            "{}\n  got      {out}\n  expected {}",
            c.src,
            c.expected
        );
        prims_in(&expr, &mut seen);
    }
    let missing: Vec<&str> = Prim::ALL
        .iter()
        .filter(|p| !seen.contains(p))
        .map(|p| p.name())
        .collect();
    assert!(
        missing.is_empty(),
        "primitives without a test case: {missing:?}"
    );
}

// ---- conventions -----------------------------------------------------------------------

#[test]
fn pads_follow_numpy_modes() {
    // Wider than the array: mirror and wrap keep going periodically (numpy semantics).
    let xs = f32s(&[1.0, 2.0, 3.0]);
    let out = run(
        "def main = fun (xs: 3.f32) => padMirror 4 5 xs",
        std::slice::from_ref(&xs),
    );
    // np.pad([1,2,3], (4,5), mode='symmetric')
    assert_eq!(
        to_f32s(&out),
        [3.0, 3.0, 2.0, 1.0, 1.0, 2.0, 3.0, 3.0, 2.0, 1.0, 1.0, 2.0]
    );
    let out = run(
        "def main = fun (xs: 3.f32) => padWrap 4 5 xs",
        std::slice::from_ref(&xs),
    );
    // np.pad([1,2,3], (4,5), mode='wrap')
    assert_eq!(
        to_f32s(&out),
        [3.0, 1.0, 2.0, 3.0, 1.0, 2.0, 3.0, 1.0, 2.0, 3.0, 1.0, 2.0]
    );
    let out = run(
        "def main = fun (xs: 3.f32) => padClamp 0 3 xs",
        std::slice::from_ref(&xs),
    );
    assert_eq!(to_f32s(&out), [1.0, 2.0, 3.0, 3.0, 3.0, 3.0]);
}

#[test]
fn integer_overflow_wraps_and_f32_stays_single_precision() {
    let out = run("def main = fun (x: int) => x * x", &[Value::int(65536)]);
    assert_eq!(out.as_scalar(), Some(Scalar::Int(0)));
    let out = run(
        "def main = fun (x: i8) => neg x",
        &[Value::Scalar(Scalar::I8(-128))],
    );
    assert_eq!(out.as_scalar(), Some(Scalar::I8(-128)));
    // In f64 this sum would be 16777217, then rounded late to 16777216 + 2 = ...
    let out = run(
        "def main = fun xs => reduce add 0.0f xs",
        &[f32s(&[16777216.0, 1.0, 1.0])],
    );
    assert_eq!(out.as_scalar(), Some(Scalar::F32(16777216.0)));
    let out = run(
        "def main = fun (x: f16) => x + x",
        &[Value::Scalar(Scalar::F16(f16::from_f32(1.5)))],
    );
    assert_eq!(out.as_scalar(), Some(Scalar::F16(f16::from_f32(3.0))));
}

#[test]
fn literals_of_every_type() {
    let out = run(
        "def main = makePair 200u8 (makePair 1.5f16 (makePair 2.5 true))",
        &[],
    );
    assert_eq!(out.to_string(), "(200, (1.5, (2.5, true)))");
    let (a, rest) = out.as_pair().unwrap();
    assert_eq!(a.as_scalar(), Some(Scalar::U8(200)));
    assert_eq!(
        rest.as_pair().unwrap().0.as_scalar(),
        Some(Scalar::F16(f16::from_f32(1.5)))
    );
}

// ---- real programs against hand-written loops ------------------------------------------

const PROGRAMS: &str = "
def dot = fun xs ys => zip xs ys |> map (fun p => fst p * snd p) |> reduce add 0.0f

def mv : {m n: nat} -> m.n.f32 -> n.f32 -> m.f32 =
  fun a x => a |> map (fun row => dot row x)

def mm : {m n k: nat} -> m.k.f32 -> k.n.f32 -> m.n.f32 =
  fun a b => a |> map (fun row => transpose b |> map (fun col => dot row col))

def mmLow : {m n k: nat} -> m.k.f32 -> k.n.f32 -> m.n.f32 =
  fun a b => a |> mapPar (fun row => transpose b |> mapSeq (fun col =>
    zip row col |> reduceSeq (fun acc p => acc + fst p * snd p) 0.0f))

def tt = fun xs => xs |> transpose |> transpose

def splitJoin = fun (xs: 64.f32) => xs |> split 8 |> map (map (fun x => x + 1.0f)) |> join

def jacobi3 : {n: nat} -> n.f32 -> n.f32 =
  fun xs => xs |> padClamp 1 1 |> slide 3 1 |> map (fun nbh => reduce add 0.0f nbh)

def blur2 = fun xs => xs |> padClamp2 1 1 |> slide2 3 1
  |> map2 (fun nbh => nbh |> join |> reduce add 0.0f)

def tiled = fun (xs: 16.f32) => xs |> padCst 1 1 0.0f |> slide 6 4
  |> map (fun tile => tile |> slide 3 1 |> map (fun nbh => reduce add 0.0f nbh)) |> join

def dotVec = fun (xs: 16.f32) (ys: 16.f32) =>
  zip (asVector 4 xs) (asVector 4 ys) |> map (fun p => fst p * snd p)
  |> reduceSeq add (vectorFromScalar 0.0f) |> mapVec id |> fun v => asScalar (makeArray 1 v)
  |> reduce add 0.0f
";

fn run_def(def: &str, inputs: &[Value]) -> Value {
    try_run(PROGRAMS, def, inputs, &[])
        .unwrap_or_else(|e| panic!("{def}: {e}"))
        .0
}

fn mat_value(rows: usize, cols: usize, data: &[f32]) -> Value {
    Value::array(
        (0..rows)
            .map(|i| f32s(&data[i * cols..(i + 1) * cols]))
            .collect(),
    )
}

#[test]
fn dot_and_matrix_programs_match_loops() {
    let mut rng = Lcg(7);
    let (m, n, k) = (5, 3, 7);
    let a = rng.vec(m * k);
    let b = rng.vec(k * n);
    let x = rng.vec(k);
    // dot: sequential f32 accumulation, exactly as the left fold does.
    let mut acc = 0.0f32;
    for i in 0..k {
        acc += a[i] * x[i];
    }
    let got = run_def("dot", &[f32s(&a[..k]), f32s(&x)]);
    assert_eq!(got.as_scalar(), Some(Scalar::F32(acc)));
    // mv
    let got = run_def("mv", &[mat_value(m, k, &a), f32s(&x)]);
    let want: Vec<f32> = (0..m)
        .map(|i| (0..k).fold(0.0f32, |s, j| s + a[i * k + j] * x[j]))
        .collect();
    assert_eq!(to_f32s(&got), want);
    // mm, high- and low-level
    let mut c = vec![0.0f32; m * n];
    for i in 0..m {
        for j in 0..n {
            c[i * n + j] = (0..k).fold(0.0f32, |s, l| s + a[i * k + l] * b[l * n + j]);
        }
    }
    let want = mat_value(m, n, &c);
    for def in ["mm", "mmLow"] {
        let got = run_def(def, &[mat_value(m, k, &a), mat_value(k, n, &b)]);
        assert!(got.approx_eq(&want, 0.0, 0.0), "{def}: {got} vs {want}");
    }
}

#[test]
fn layout_programs_match_loops() {
    let mut rng = Lcg(11);
    let a = rng.vec(12);
    let xs = mat_value(3, 4, &a);
    assert!(run_def("tt", std::slice::from_ref(&xs)).approx_eq(&xs, 0.0, 0.0));
    let v = rng.vec(64);
    let got = run_def("splitJoin", &[f32s(&v)]);
    assert_eq!(to_f32s(&got), v.iter().map(|x| x + 1.0).collect::<Vec<_>>());
}

#[test]
fn stencils_match_loops() {
    let mut rng = Lcg(3);
    // Listing 4.1 of the thesis: a 3-point Jacobi stencil with clamping.
    let n = 10;
    let a = rng.vec(n);
    let want: Vec<f32> = (0..n as i64)
        .map(|i| {
            let mut sum = 0.0f32;
            for j in -1..=1 {
                let pos = (i + j).clamp(0, n as i64 - 1);
                sum += a[pos as usize];
            }
            sum
        })
        .collect();
    assert_eq!(to_f32s(&run_def("jacobi3", &[f32s(&a)])), want);

    // 2-D box blur with clamping (prelude padClamp2/slide2/map2).
    let (h, w) = (4, 5);
    let img = rng.vec(h * w);
    let got = run_def("blur2", &[mat_value(h, w, &img)]);
    for i in 0..h as i64 {
        let row = got.as_array().unwrap()[i as usize].clone();
        for j in 0..w as i64 {
            let mut sum = 0.0f32;
            for di in -1..=1 {
                for dj in -1..=1 {
                    let (y, x) = (
                        (i + di).clamp(0, h as i64 - 1),
                        (j + dj).clamp(0, w as i64 - 1),
                    );
                    sum += img[y as usize * w + x as usize];
                }
            }
            assert_eq!(
                row.as_array().unwrap()[j as usize].as_scalar(),
                Some(Scalar::F32(sum)),
                "at ({i}, {j})"
            );
        }
    }

    // Overlapped tiling (thesis §4.4) gives the same result as the plain stencil.
    let v = rng.vec(16);
    let want: Vec<f32> = (0..16i64)
        .map(|i| {
            (-1..=1).fold(0.0f32, |s, j| {
                s + if (0..16).contains(&(i + j)) {
                    v[(i + j) as usize]
                } else {
                    0.0
                }
            })
        })
        .collect();
    assert_eq!(to_f32s(&run_def("tiled", &[f32s(&v)])), want);
}

#[test]
fn vectorized_dot_matches_loop() {
    let mut rng = Lcg(5);
    let (a, b) = (rng.vec(16), rng.vec(16));
    let mut lanes = [0.0f32; 4];
    for i in 0..4 {
        for l in 0..4 {
            lanes[l] += a[4 * i + l] * b[4 * i + l];
        }
    }
    let want = lanes.iter().fold(0.0f32, |s, x| s + x);
    let got = run_def("dotVec", &[f32s(&a), f32s(&b)]);
    assert_eq!(got.as_scalar(), Some(Scalar::F32(want)));
}

#[test]
fn sizes_from_the_command_line_and_dependent_lambdas() {
    // `at` (prelude) uses natAsIndex with the definition's own size `n`.
    let src = "def main = fun (xs: 5.f32) => at 3 xs";
    let (v, _) = try_run(src, "main", &[f32s(&[0.0, 1.0, 2.0, 3.0, 4.0])], &[]).unwrap();
    assert_eq!(v.as_scalar(), Some(Scalar::F32(3.0)));
    // Explicit size parameters of a definition, given as nats.
    let src =
        "def main = fun (n: nat) => fun (xs: (2*n).f32) => xs |> split n |> map (reduce add 0.0f)";
    let (v, _) = try_run(
        src,
        "main",
        &[f32s(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0])],
        &[("n", 3)],
    )
    .unwrap();
    assert_eq!(to_f32s(&v), [6.0, 15.0]);
    // generate whose size comes from an implicit parameter fixed on the command line.
    let src = "def main : {n: nat} -> n.int = generate (fun i => 7)";
    let (v, _) = try_run(src, "main", &[], &[("n", 3)]).unwrap();
    assert_eq!(v.to_string(), "[7, 7, 7]");
}

// ---- errors --------------------------------------------------------------------------

#[test]
fn user_errors_are_reported_with_spans_not_panics() {
    let e = run_err(
        "def main = fun (x: int) y => x / y",
        &[Value::int(1), Value::int(0)],
    );
    assert!(e.contains("division by zero"), "{e}");
    assert!(e.contains("x / y"), "the source excerpt is shown: {e}");
    let e = run_err(
        "def main = fun (xs: 4.f32) => (generate (fun i => idx (natAsIndex 4 (indexAsNat i)) xs) : 6.f32)",
        &[f32s(&[1.0, 2.0, 3.0, 4.0])],
    );
    assert!(e.contains("is not an index into 4 elements"), "{e}");
    let e = run_err(
        "def main = fun (is: 3.idx[3]) (xs: 3.f32) => scatter is xs",
        &[idxs(&[0, 1, 1], 3), f32s(&[1.0, 2.0, 3.0])],
    );
    assert!(e.contains("two values are written to position 1"), "{e}");
    let e = run_err(
        "def main = fun (x: f32) => (cast x : u8)",
        &[Value::f32(-3.0)],
    );
    assert!(e.contains("undefined in C"), "{e}");
    let e = run_err(
        "def main = fun (xs: 4.f32) => reorder (fun i => i + 1) (fun i => i - 1) xs",
        &[f32s(&[1.0, 2.0, 3.0, 4.0])],
    );
    assert!(e.contains("outside 0..4"), "{e}");
}

#[test]
fn wrong_inputs_are_errors() {
    let f = eval(
        &crate::infer::instantiate_def(
            &crate::infer::check_source(PROGRAMS).unwrap(),
            "dot",
            &[
                DataType::array(2, DataType::f32()),
                DataType::array(2, DataType::f32()),
            ],
            &[],
        )
        .unwrap()
        .expr,
    )
    .unwrap();
    let e = apply(&f, vec![f32s(&[1.0, 2.0]), f32s(&[1.0])]).unwrap_err();
    assert!(e.message.contains("different lengths"), "{e}");
    let e = apply(&f, vec![f32s(&[1.0, 2.0]), Value::f32(1.0)]).unwrap_err();
    assert!(e.message.contains("expected an array"), "{e}");
    let e = apply(&Value::f32(1.0), vec![Value::f32(1.0)]).unwrap_err();
    assert!(e.message.contains("not a function"), "{e}");
    let d: Diagnostic = e.into();
    assert!(d.message.starts_with("evaluation failed"));
}

// ---- hand-built expressions (no type checker involved) -------------------------------------

fn ty(s: &str) -> Type {
    crate::syntax::parse_type(s).unwrap_or_else(|e| panic!("{s}: {e}"))
}

fn prim(p: Prim, t: Option<&str>) -> Expr {
    match t {
        Some(t) => Expr::typed(ExprKind::Prim(p), ty(t), Span::default()),
        None => Expr::new(ExprKind::Prim(p), Span::default()),
    }
}

fn app(f: Expr, a: Expr) -> Expr {
    Expr::new(ExprKind::App(f, a), Span::new(3, 9))
}

fn dep_nat(f: Expr, n: Nat) -> Expr {
    Expr::new(ExprKind::DepApp(f, TypeArg::Nat(n)), Span::default())
}

#[test]
fn hand_built_expressions() {
    // split 2 as a partially applied primitive value, applied through `apply_args`.
    let split = prim(Prim::Split, Some("(n: nat) -> (2*n).f32 -> 2.n.f32"));
    let f = eval(&split).unwrap();
    let out = apply_args(
        &f,
        vec![
            Argument::Type(TypeArg::Nat(Nat::cst(2))),
            Argument::Value(f32s(&[1.0, 2.0, 3.0, 4.0])),
        ],
    )
    .unwrap();
    assert_eq!(out.to_string(), "[[1.0, 2.0], [3.0, 4.0]]");
    // A size variable bound by the caller.
    let gen = prim(Prim::Generate, Some("(idx[n] -> natType) -> n.natType"));
    let ian = prim(Prim::IndexAsNat, Some("idx[n] -> natType"));
    let e = app(gen, ian);
    assert_eq!(
        eval_with_nats(&e, &[("n", 3)]).unwrap().to_string(),
        "[0:nat, 1:nat, 2:nat]"
    );
    assert!(eval(&e)
        .unwrap_err()
        .message
        .contains("cannot be evaluated"));
    // A primitive that needs its type but has none.
    let e = app(prim(Prim::Generate, None), prim(Prim::IndexAsNat, None));
    let err = eval(&e).unwrap_err();
    assert!(err.message.contains("has no type"), "{err}");
    assert_eq!(err.span, Span::new(3, 9));
    // A primitive that does not need it works without.
    let e = app(
        prim(Prim::Not, None),
        Expr::new(ExprKind::Lit(Literal::Bool(true)), Span::default()),
    );
    assert_eq!(eval(&e).unwrap().to_string(), "false");
    // Wrong kinds of arguments.
    let e = dep_nat(prim(Prim::Not, None), Nat::cst(1));
    assert!(eval(&e).unwrap_err().message.contains("expects a value"));
    // Nat literals and natType arithmetic.
    let lit = |n| Expr::new(ExprKind::Lit(Literal::Nat(Nat::cst(n))), Span::default());
    let e = app(app(prim(Prim::Sub, None), lit(2)), lit(3));
    assert!(eval(&e)
        .unwrap_err()
        .message
        .contains("not a natural number"));
    let e = app(app(prim(Prim::Add, None), lit(2)), lit(3));
    assert_eq!(eval(&e).unwrap().as_nat(), Some(5));
}

#[test]
fn deep_nesting_hits_the_depth_limit_not_the_stack() {
    let one = Expr::new(
        ExprKind::Lit(Literal::Int(1, ScalarType::Int)),
        Span::default(),
    );
    let nest = move |depth: usize| {
        let mut e = one.clone();
        for _ in 0..depth {
            e = app(prim(Prim::Id, None), e);
        }
        e
    };
    // (Built and dropped on a big stack: dropping a deep `Expr` recurses.)
    std::thread::Builder::new()
        .stack_size(256 << 20)
        .spawn(move || {
            assert_eq!(
                eval(&nest(5_000)).unwrap().as_scalar(),
                Some(Scalar::Int(1))
            );
            let err = eval(&nest(MAX_DEPTH + 10)).unwrap_err();
            assert!(err.message.contains("levels deep"), "{err}");
        })
        .unwrap()
        .join()
        .unwrap();
}

// ---- values ------------------------------------------------------------------------------

#[test]
fn flat_buffers_round_trip() {
    let data: Vec<Scalar> = (0..24).map(|i| Scalar::F32(i as f32)).collect();
    let v = Value::from_flat(ScalarType::F32, &[2, 3, 4], data.clone()).unwrap();
    let t = DataType::array(2, DataType::array(3, DataType::array(4, DataType::f32())));
    assert_eq!(v.data_type(), Some(t.clone()));
    let flat = v.to_flat(&t).unwrap();
    assert_eq!(
        flat,
        Flat {
            elem: ScalarType::F32,
            shape: vec![2, 3, 4],
            data
        }
    );
    // Vectors flatten as an innermost dimension; empty arrays keep their shape.
    let t = DataType::array(2, DataType::vector(DataType::f32(), 2));
    let v = Value::array(vec![vecf(&[1.0, 2.0]), vecf(&[3.0, 4.0])]);
    assert_eq!(v.to_flat(&t).unwrap().shape, vec![2, 2]);
    let t = DataType::array(0, DataType::array(3, DataType::Scalar(ScalarType::U8)));
    let flat = Value::array(vec![]).to_flat(&t).unwrap();
    assert_eq!(
        (flat.shape, flat.elem, flat.data.len()),
        (vec![0, 3], ScalarType::U8, 0)
    );
    let v = Value::from_flat(ScalarType::Int, &[2, 0], vec![]).unwrap();
    assert_eq!(v.to_string(), "[[], []]");
    // A scalar is a 0-dimensional buffer.
    let v = Value::from_flat(ScalarType::Int, &[], vec![Scalar::Int(4)]).unwrap();
    assert_eq!(v.to_string(), "4");
    // Errors.
    assert!(Value::from_flat(ScalarType::F32, &[2, 2], vec![Scalar::F32(0.0); 3]).is_err());
    assert!(Value::from_flat(ScalarType::F32, &[1], vec![Scalar::Int(0)]).is_err());
    let pair_t = DataType::pair(DataType::f32(), DataType::f32());
    assert!(Value::pair(Value::f32(1.0), Value::f32(2.0))
        .to_flat(&pair_t)
        .is_err());
}

#[test]
fn check_reports_where_a_value_differs() {
    let t = DataType::array(
        2,
        DataType::pair(DataType::f32(), DataType::Scalar(ScalarType::Int)),
    );
    let good = Value::array(vec![
        Value::pair(Value::f32(1.0), Value::int(1)),
        Value::pair(Value::f32(2.0), Value::int(2)),
    ]);
    assert!(good.check(&t).is_ok());
    let bad = Value::array(vec![
        Value::pair(Value::f32(1.0), Value::int(1)),
        Value::pair(Value::f32(2.0), Value::f32(2.0)),
    ]);
    let e = bad.check(&t).unwrap_err();
    assert!(e.message.contains("at [1].1"), "{e}");
    assert!(e.message.contains("expected int"), "{e}");
    let e = f32s(&[1.0])
        .check(&DataType::array(2, DataType::f32()))
        .unwrap_err();
    assert!(e.message.contains("1 elements, expected 2"), "{e}");
    let e = Value::Index { index: 5, bound: 4 }
        .check(&DataType::Index(Nat::cst(4)))
        .unwrap_err();
    assert!(e.message.contains("out of its range"), "{e}");
}

#[test]
fn approx_eq_and_display() {
    let a = f32s(&[1.0, 2.0]);
    let b = f32s(&[1.0, 2.000001]);
    assert!(a.approx_eq(&b, 1e-5, 0.0));
    assert!(!a.approx_eq(&b, 0.0, 0.0));
    assert!(Value::f32(f32::NAN).approx_eq(&Value::f32(f32::NAN), 0.0, 0.0));
    assert!(!Value::f32(1.0).approx_eq(&Value::f64(1.0), 1.0, 1.0));
    assert!(!a.approx_eq(&f32s(&[1.0]), 1.0, 1.0));
    let v = Value::pair(
        Value::array(vec![Value::Index { index: 1, bound: 4 }, Value::Nat(7)]),
        vecf(&[0.5, 1e20]),
    );
    assert_eq!(v.to_string(), "([1:idx[4], 7:nat], <0.5, 1e20>)");
    let f = eval(&prim(Prim::Map, None)).unwrap();
    assert_eq!(f.to_string(), "<primitive map>");
}

// ---- property tests against independent reference implementations ----------------------

fn apply_nats(p: Prim, nats: &[i64], args: Vec<Value>) -> Result<Value, EvalError> {
    let mut e = prim(p, None);
    for &n in nats {
        e = dep_nat(e, Nat::cst(n));
    }
    apply(&eval(&e)?, args)
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(64))]

    #[test]
    fn pads_match_reference(n in 1usize..6, l in 0i64..12, r in 0i64..12) {
        let xs: Vec<f32> = (0..n).map(|i| i as f32).collect();
        let nn = n as i64;
        // Reading outwards from the edge: symmetric repeats xs reversed, then xs, ...
        let fwd: Vec<f32> = xs.iter().chain(xs.iter().rev()).copied().collect();
        let bwd: Vec<f32> = xs.iter().rev().chain(xs.iter()).copied().collect();
        let mut mirror: Vec<f32> = (0..l).rev().map(|k| fwd[(k % (2 * nn)) as usize]).collect();
        mirror.extend(&xs);
        mirror.extend((0..r).map(|k| bwd[(k % (2 * nn)) as usize]));
        let mut wrap: Vec<f32> = (0..l).rev().map(|k| xs[(nn - 1 - k % nn) as usize]).collect();
        wrap.extend(&xs);
        wrap.extend((0..r).map(|k| xs[(k % nn) as usize]));
        let mut clamp: Vec<f32> = (0..l).map(|_| xs[0]).collect();
        clamp.extend(&xs);
        clamp.extend((0..r).map(|_| xs[n - 1]));
        let mut cst: Vec<f32> = (0..l).map(|_| -1.0).collect();
        cst.extend(&xs);
        cst.extend((0..r).map(|_| -1.0));
        let input = f32s(&xs);
        let got = |p| to_f32s(&apply_nats(p, &[l, r], vec![input.clone()]).unwrap());
        proptest::prop_assert_eq!(got(Prim::PadMirror), mirror);
        proptest::prop_assert_eq!(got(Prim::PadWrap), wrap);
        proptest::prop_assert_eq!(got(Prim::PadClamp), clamp);
        let c = to_f32s(&apply_nats(Prim::PadCst, &[l, r], vec![Value::f32(-1.0), input.clone()]).unwrap());
        proptest::prop_assert_eq!(c, cst);
    }

    #[test]
    fn slide_split_join_transpose_match_reference(sz in 1i64..5, sp in 1i64..4, windows in 0i64..5, cols in 1i64..4) {
        let len = sp * windows + sz;
        let xs: Vec<f32> = (0..len).map(|i| i as f32).collect();
        let got = apply_nats(Prim::Slide, &[sz, sp], vec![f32s(&xs)]).unwrap();
        let want = Value::array(
            (0..=windows).map(|i| f32s(&xs[(i * sp) as usize..(i * sp + sz) as usize])).collect(),
        );
        proptest::prop_assert!(got.approx_eq(&want, 0.0, 0.0), "{} vs {}", got, want);
        // split then join is the identity; transpose twice is the identity.
        let rows = len * cols;
        let ys: Vec<f32> = (0..rows).map(|i| i as f32).collect();
        let split = apply_nats(Prim::Split, &[cols], vec![f32s(&ys)]).unwrap();
        proptest::prop_assert_eq!(split.as_array().unwrap().len() as i64, len);
        let joined = apply_nats(Prim::Join, &[], vec![split.clone()]).unwrap();
        proptest::prop_assert_eq!(to_f32s(&joined), ys);
        let t = apply_nats(Prim::Transpose, &[], vec![split.clone()]).unwrap();
        let tt = apply_nats(Prim::Transpose, &[], vec![t.clone()]).unwrap();
        proptest::prop_assert!(tt.approx_eq(&split, 0.0, 0.0));
        for (i, row) in t.as_array().unwrap().iter().enumerate() {
            for (j, x) in to_f32s(row).into_iter().enumerate() {
                proptest::prop_assert_eq!(x, (j as i64 * cols + i as i64) as f32);
            }
        }
    }
}

#[test]
fn errors_inside_map_point_at_the_partial_application() {
    let src = "def main = fun (xs: 3.int) => map (div 6) xs";
    let e = try_run(src, "main", &[ints(&[1, 0, 2])], &[]).unwrap_err();
    assert!(e.contains("division by zero"), "{e}");
    let prog = crate::infer::check_source(src).unwrap();
    let inst = crate::infer::instantiate_def(
        &prog,
        "main",
        &[DataType::array(3, DataType::Scalar(ScalarType::Int))],
        &[],
    )
    .unwrap();
    let err = apply(&eval(&inst.expr).unwrap(), vec![ints(&[1, 0, 2])]).unwrap_err();
    assert_eq!(&src[err.span.range()], "(div 6)");
}

/// The distance in units in the last place between two f32s (0 for equal values,
/// both NaNs, or zeros of either sign).
fn ulps(a: f32, b: f32) -> u64 {
    if a.is_nan() && b.is_nan() || a == b {
        return 0;
    }
    if a.is_nan() || b.is_nan() {
        return u64::MAX;
    }
    // map the bits to a line where consecutive floats are consecutive integers
    let key = |x: f32| {
        let i = x.to_bits() as i32;
        if i < 0 {
            i64::from(i32::MIN) - i64::from(i)
        } else {
            i64::from(i)
        }
    };
    key(a).abs_diff(key(b))
}

/// The reference: the function in double precision (Rust's `f64` methods),
/// independent of the interpreter's table.
fn math_reference(f: crate::primitives::MathFn, a: &[f64]) -> f64 {
    use crate::primitives::MathFn as M;
    match (f, a) {
        (M::Sqrt, [x]) => x.sqrt(),
        (M::Rsqrt, [x]) => 1.0 / x.sqrt(),
        (M::ExpE, [x]) => x.exp(),
        (M::Exp2, [x]) => x.exp2(),
        (M::Log, [x]) => x.ln(),
        (M::Log2, [x]) => x.log2(),
        (M::Pow, [x, y]) => x.powf(*y),
        (M::Sin, [x]) => x.sin(),
        (M::Cos, [x]) => x.cos(),
        (M::Tan, [x]) => x.tan(),
        (M::Tanh, [x]) => x.tanh(),
        (M::Cbrt, [x]) => x.cbrt(),
        (M::Expm1, [x]) => x.exp_m1(),
        (M::Log10, [x]) => x.log10(),
        (M::Log1p, [x]) => x.ln_1p(),
        (M::Asin, [x]) => x.asin(),
        (M::Acos, [x]) => x.acos(),
        (M::Atan, [x]) => x.atan(),
        (M::Sinh, [x]) => x.sinh(),
        (M::Cosh, [x]) => x.cosh(),
        // std's textbook formulas: accurate enough in f64 for f32 operands
        (M::Asinh, [x]) => x.asinh(),
        (M::Acosh, [x]) => x.acosh(),
        (M::Atanh, [x]) => x.atanh(),
        (M::Erf, [x]) => erf_reference(*x),
        (M::Erfc, [x]) => erfc_reference(*x),
        (M::Hypot, [x, y]) => x.hypot(*y),
        (M::Round, [x]) => x.round(),
        (M::Trunc, [x]) => x.trunc(),
        (M::Copysign, [x, y]) => x.copysign(*y),
        (M::Fmod, [x, y]) => x % y,
        (M::Atan2, [y, x]) => y.atan2(*x),
        (M::Fabs | M::Abs, [x]) => x.abs(),
        (M::Floor, [x]) => x.floor(),
        (M::Ceil, [x]) => x.ceil(),
        (M::Fmin | M::Min, [x, y]) => x.min(*y),
        (M::Fmax | M::Max, [x, y]) => x.max(*y),
        // exact in f64 for f32 operands: the product has at most 48 bits
        (M::Fma, [x, y, z]) => x * y + z,
        _ => f64::NAN,
    }
}

/// `erf` for the reference, by other means than `interp::special`'s: below 0.5 the
/// series of positive terms `erf x = 2/sqrt(pi) e^(-x^2) sum 2^n x^(2n+1) / (1 3 ... (2n+1))`
/// (A&S 7.1.6), beyond `1 - erfc` by Craig's integral.
fn erf_reference(x: f64) -> f64 {
    if x.abs() < 0.5 {
        let (mut term, mut sum, mut n) = (x, x, 0.0);
        while term.abs() > 1e-18 * sum.abs() {
            n += 1.0;
            term *= 2.0 * x * x / (2.0 * n + 1.0);
            sum += term;
        }
        std::f64::consts::FRAC_2_SQRT_PI * (-x * x).exp() * sum
    } else {
        (1.0 - erfc_craig(x.abs())).copysign(x)
    }
}

/// `erfc` for the reference (see [`erf_reference`]).
fn erfc_reference(x: f64) -> f64 {
    if x < 0.0 {
        2.0 - erfc_reference(-x)
    } else if x < 0.5 {
        1.0 - erf_reference(x)
    } else {
        erfc_craig(x)
    }
}

/// Craig's formula, `erfc x = 2/pi` times the integral of `exp(-x^2 / sin^2 t)` for
/// `t` from 0 to `pi/2` (`x >= 0`), by the trapezoidal rule: the integrand's odd
/// derivatives vanish at both ends, so it converges geometrically (400 panels
/// suffice for `f32` from 0.5 to where `erfc` underflows).
fn erfc_craig(x: f64) -> f64 {
    const PANELS: u32 = 400;
    let h = std::f64::consts::FRAC_PI_2 / f64::from(PANELS);
    let x2 = x * x;
    let mut sum = 0.5 * (-x2).exp(); // t = pi/2; the integrand is 0 at t = 0
    for k in 1..PANELS {
        let s = (f64::from(k) * h).sin();
        sum += (-x2 / (s * s)).exp();
    }
    2.0 / std::f64::consts::PI * h * sum
}

#[test]
fn the_erf_reference_agrees_with_known_values() {
    // mpmath, 50 digits, rounded to f64
    for (x, erf, erfc) in [
        (0.1, 0.1124629160182849, 0.887537083981715),
        (0.5, 0.5204998778130465, 0.4795001221869535),
        (1.5, 0.9661051464753108, 0.033894853524689274),
        (4.0, 0.9999999845827421, 1.541725790028002e-08),
        (9.0, 1.0, 4.13703174651381e-37),
    ] {
        for (got, want) in [
            (erf_reference(x), erf),
            (erf_reference(-x), -erf),
            (erfc_reference(x), erfc),
        ] {
            assert!(
                (got - want).abs() <= 1e-12 * want.abs(),
                "{x}: {got:e}, want {want:e}"
            );
        }
    }
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(512))]

    /// Every math function on f32 agrees with double-precision math rounded to f32
    /// ([`f32_disagreement`]). Operands are any f32 bit patterns (NaN, infinities,
    /// denormals included).
    #[test]
    fn math_on_f32_agrees_with_f64_reference(bits in proptest::collection::vec(proptest::prelude::any::<u32>(), 3)) {
        for &f in crate::primitives::MathFn::ALL {
            let args: Vec<f32> = bits[..f.arity()].iter().map(|b| f32::from_bits(*b)).collect();
            if let Some(why) = f32_disagreement(f, &args) {
                proptest::prop_assert!(false, "{}", why);
            }
        }
    }
}

/// The same comparison on moderate operands, where random bit patterns seldom fall
/// (they are mostly huge or tiny, where most functions saturate): every function on
/// -10..10 by 1/64, near ±1 (`1 ± k 2^-20`) and on pairs and triples of a coarser grid.
#[test]
fn math_on_f32_agrees_with_f64_reference_on_moderate_operands() {
    let mut xs: Vec<f32> = (-640..=640).map(|k| k as f32 / 64.0).collect();
    xs.extend((1..64).flat_map(|k| {
        let d = k as f32 * 2f32.powi(-20);
        [1.0 + d, 1.0 - d, -1.0 + d, -1.0 - d]
    }));
    let coarse: Vec<f32> = (-12..=12).map(|k| k as f32 * 0.75).collect();
    let mut wrong = Vec::new();
    for &f in crate::primitives::MathFn::ALL {
        let operands: Vec<Vec<f32>> = match f.arity() {
            1 => xs.iter().map(|x| vec![*x]).collect(),
            2 => coarse
                .iter()
                .flat_map(|x| coarse.iter().map(|y| vec![*x, *y]))
                .collect(),
            _ => coarse.iter().map(|x| vec![*x, 1.5, -*x]).collect(),
        };
        wrong.extend(operands.iter().filter_map(|args| f32_disagreement(f, args)));
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// Where the interpreter's `f` of `f32` operands is further from double-precision
/// math rounded to `f32` ([`math_reference`]) than allowed: exactly equal where C
/// specifies the result exactly (sqrt, fabs, floor, ceil, round, trunc, fmin, fmax,
/// copysign, fmod, fma, min, max, abs), within 2 ulps for the others (the
/// transcendental functions, hypot, and rsqrt with its two roundings).
fn f32_disagreement(f: crate::primitives::MathFn, args: &[f32]) -> Option<String> {
    use crate::primitives::MathFn as M;
    let got = apply(
        &eval(&prim(f.prim(), None)).unwrap(),
        args.iter().map(|x| Value::f32(*x)).collect(),
    )
    .unwrap();
    let Some(Scalar::F32(got)) = got.as_scalar() else {
        panic!("{}: not an f32: {got}", f.name());
    };
    let wide: Vec<f64> = args.iter().map(|x| f64::from(*x)).collect();
    let want = math_reference(f, &wide) as f32;
    let exact = matches!(
        f,
        M::Sqrt
            | M::Fabs
            | M::Floor
            | M::Ceil
            | M::Round
            | M::Trunc
            | M::Fmin
            | M::Fmax
            | M::Copysign
            | M::Fmod
            | M::Fma
            | M::Min
            | M::Max
            | M::Abs
    );
    let bound = if exact { 0 } else { 2 };
    (ulps(got, want) > bound).then(|| {
        format!(
            "{}{args:?}: got {got:e}, reference {want:e} ({} ulps)",
            f.name(),
            ulps(got, want)
        )
    })
}

#[test]
fn ulps_counts_floats_between() {
    assert_eq!(ulps(1.0, 1.0), 0);
    assert_eq!(ulps(0.0, -0.0), 0);
    assert_eq!(ulps(1.0, 1.0 + f32::EPSILON), 1);
    assert_eq!(ulps(-f32::from_bits(1), f32::from_bits(1)), 2);
    assert_eq!(ulps(f32::NAN, 1.0), u64::MAX);
}

// ---- foreign functions ---------------------------------------------------------------

/// A stand-in for the C evaluator of the `shine` crate: runs `clampf` in Rust and records
/// the size of every batch it is asked.
struct ClampInRust {
    batches: std::sync::Mutex<Vec<usize>>,
}

impl crate::foreign::ForeignEvaluator for ClampInRust {
    fn call(&self, f: &crate::ForeignFun, calls: &[Vec<Scalar>]) -> Result<Vec<Scalar>, String> {
        self.batches.lock().unwrap().push(calls.len());
        if &*f.name != "clampf" {
            return Err(format!("foreign function `{}` is unknown", f.name));
        }
        calls
            .iter()
            .map(|args| match args.as_slice() {
                [Scalar::F32(x), Scalar::F32(lo), Scalar::F32(hi)] => {
                    Ok(Scalar::F32(x.clamp(*lo, *hi)))
                }
                _ => Err("bad arguments".to_string()),
            })
            .collect()
    }
}

const FOREIGN_SRC: &str =
    "foreign clampf (x lo hi: f32) : f32 { return x < lo ? lo : (x > hi ? hi : x); }
def viaLambda = fun xs => map (fun x => clampf x 0.0f 1.0f) xs
def partial = fun xs => map (clampf 0.5f 0.0f) xs |> map (fun y => y + 1.0f)
def inReduce = fun xs => reduce (fun acc x => clampf (acc + x) 0.0f 2.0f) 0.0f xs
";

fn run_foreign(
    def: &str,
    xs: &[f32],
    evaluator: Option<Arc<ClampInRust>>,
) -> Result<Value, String> {
    let prog = crate::infer::check_source(FOREIGN_SRC).map_err(|d| d.to_string())?;
    let inputs = vec![Value::f32s(xs)];
    let types = vec![inputs[0].data_type().unwrap()];
    let inst = crate::infer::instantiate_def(&prog, def, &types, &[]).map_err(|d| d.to_string())?;
    let evaluator = evaluator.map(|e| e as Arc<dyn crate::foreign::ForeignEvaluator>);
    let f = eval_with_foreign(&inst.expr, &[], evaluator).map_err(|e| e.to_string())?;
    apply(&f, inputs).map_err(|e| e.to_string())
}

#[test]
fn foreign_calls_go_to_the_evaluator_in_batches() {
    let xs = [-1.0f32, 0.25, 3.0, 0.5];
    let ev = Arc::new(ClampInRust {
        batches: Default::default(),
    });
    let out = run_foreign("viaLambda", &xs, Some(ev.clone())).unwrap();
    assert_eq!(to_f32s(&out), vec![0.0, 0.25, 1.0, 0.5]);
    // one batch for the whole map
    assert_eq!(*ev.batches.lock().unwrap(), vec![4]);
    // a partial application is batched too: clampf 0.5 0.0 x
    ev.batches.lock().unwrap().clear();
    let out = run_foreign("partial", &[0.1, 0.7, 2.0], Some(ev.clone())).unwrap();
    assert_eq!(to_f32s(&out), vec![1.1, 1.5, 1.5]);
    assert_eq!(*ev.batches.lock().unwrap(), vec![3]);
    // inside a reduction each call waits for the one before
    ev.batches.lock().unwrap().clear();
    let out = run_foreign("inReduce", &[1.5, 1.0, -0.5], Some(ev.clone())).unwrap();
    assert_eq!(out.as_scalar(), Some(Scalar::F32(1.5)));
    assert_eq!(*ev.batches.lock().unwrap(), vec![1, 1, 1]);
}

#[test]
fn foreign_calls_without_an_evaluator_are_errors() {
    let err = run_foreign("viaLambda", &[1.0], None).unwrap_err();
    assert!(
        err.contains("foreign function `clampf` cannot be evaluated here"),
        "{err}"
    );
    let err = run_foreign("inReduce", &[1.0], None).unwrap_err();
    assert!(err.contains("cannot be evaluated here"), "{err}");
}

// ---- the C operators against Rust's semantics ------------------------------------------

mod operators {
    use super::*;
    use crate::interp::{BitOp, Scalar};
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn i8_bitwise_and_shifts_match_rust(x: i8, y: i8, k in 0i8..8) {
            let (sx, sy, sk) = (Scalar::I8(x), Scalar::I8(y), Scalar::I8(k));
            prop_assert_eq!(sx.bitwise(BitOp::And, sy), Ok(Scalar::I8(x & y)));
            prop_assert_eq!(sx.bitwise(BitOp::Or, sy), Ok(Scalar::I8(x | y)));
            prop_assert_eq!(sx.bitwise(BitOp::Xor, sy), Ok(Scalar::I8(x ^ y)));
            prop_assert_eq!(sx.bitwise(BitOp::Shl, sk), Ok(Scalar::I8(((x as u8) << k) as i8)));
            prop_assert_eq!(sx.bitwise(BitOp::Shr, sk), Ok(Scalar::I8(x >> k)));
            prop_assert_eq!(sx.bit_not(), Ok(Scalar::I8(!x)));
        }

        #[test]
        fn u64_shifts_match_rust_and_refuse_the_width(x: u64, k in 0u64..64, far in 64u64..) {
            prop_assert_eq!(Scalar::U64(x).bitwise(BitOp::Shl, Scalar::U64(k)), Ok(Scalar::U64(x << k)));
            prop_assert_eq!(Scalar::U64(x).bitwise(BitOp::Shr, Scalar::U64(k)), Ok(Scalar::U64(x >> k)));
            prop_assert!(Scalar::U64(x).bitwise(BitOp::Shl, Scalar::U64(far)).is_err());
        }

        #[test]
        fn i32_negative_shifts_are_errors(x: i32, k in i32::MIN..0) {
            prop_assert!(Scalar::I32(x).bitwise(BitOp::Shl, Scalar::I32(k)).is_err());
            prop_assert!(Scalar::I32(x).bitwise(BitOp::Shr, Scalar::I32(k)).is_err());
        }

        #[test]
        fn f32_comparisons_are_ieee(x in proptest::num::f32::ANY, y in proptest::num::f32::ANY) {
            let src = "fun x y => makeArray 4 (le x y) (ge x y) (notEqual x y) (and (lt x y) (or (gt x y) (equal x y)))";
            let out = run(&format!("def main = {src}"), &[Value::f32(x), Value::f32(y)]);
            let want = Value::array(vec![
                Value::bool(x <= y),
                Value::bool(x >= y),
                Value::bool(x != y),
                Value::bool(x < y && x >= y),
            ]);
            prop_assert_eq!(out.to_string(), want.to_string());
        }
    }

    #[test]
    fn and_or_discard_a_failed_right_operand_they_do_not_need() {
        let src = "def main = fun (x: i32) => makeArray 2 (and (lt x 0i32) (equal (div 1i32 x) 1i32)) (or (equal x 0i32) (equal (div 1i32 x) 1i32))";
        let out = run(src, &[Value::Scalar(Scalar::I32(0))]);
        assert_eq!(out.to_string(), "[false, true]");
    }

    #[test]
    fn a_shift_by_the_width_fails_the_value() {
        let src = "def main = fun (x: i32) => shl x 32i32";
        let err = try_run(src, "main", &[Value::Scalar(Scalar::I32(1))], &[]).unwrap_err();
        assert!(
            err.to_string()
                .contains("integer shift amount out of range"),
            "{err}"
        );
    }
}

#[test]
fn let_computes_its_value_once_for_the_body() {
    let src = "def main : {n: nat} -> n.f32 -> n.f32 = fun xs => \
               let s = xs |> reduce add 0.0f in xs |> map (fun x => x / s)";
    assert_eq!(to_f32s(&run(src, &[f32s(&[1.0, 3.0])])), vec![0.25, 0.75]);
}
