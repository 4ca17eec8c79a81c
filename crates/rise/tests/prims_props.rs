//! Property tests of the interpreter's data-dependent and vector primitives (issue 14):
//! `gather`, `scatter`, `idx` with a run-time index, `natAsIndex` of a computed value,
//! `lane` and `makeVector`. Each program is RISE source text, parsed, type-checked,
//! instantiated at the sizes of random inputs and evaluated through the crate's public
//! API; its result is compared with the same computation written here in Rust. Sizes are
//! random (1 and odd sizes included), and so are values and indices; indices out of range,
//! repeated `scatter` positions and positions no value is written to are errors, never
//! values. (Foreign functions are tested in `crates/shine-cli/tests/foreign_props.rs`, where
//! their C evaluator lives.)

use proptest::prelude::*;
use rise::infer::CheckedProgram;
use rise::interp::{self, Scalar, Value};
use rise::{DataType, Type};
use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;

// ---- evaluation through the public API ---------------------------------------------------

thread_local! {
    /// The programs checked so far (each test checks a few sources many times).
    static CHECKED: RefCell<HashMap<String, Rc<CheckedProgram>>> = RefCell::default();
}

/// `src` type-checked (once per thread).
fn checked(src: &str) -> Result<Rc<CheckedProgram>, String> {
    if let Some(p) = CHECKED.with(|c| c.borrow().get(src).cloned()) {
        return Ok(p);
    }
    let program = Rc::new(
        rise::infer::check_source(src)
            .map_err(|d| format!("type error: {}", d.render("props.rise", src)))?,
    );
    CHECKED.with(|c| c.borrow_mut().insert(src.to_string(), program.clone()));
    Ok(program)
}

/// Type-checks `src`, instantiates `def` at the types of `inputs` (and the sizes `nats`),
/// evaluates it and applies it to `inputs`; the result is checked against the instance's
/// result type. Every failure is a rendered message.
fn eval_def(src: &str, def: &str, inputs: &[Value], nats: &[(&str, i64)]) -> Result<Value, String> {
    let program = checked(src)?;
    let types: Vec<DataType> = inputs
        .iter()
        .map(|v| v.data_type().expect("inputs have data types"))
        .collect();
    let nats: Vec<(String, i64)> = nats.iter().map(|(n, v)| (n.to_string(), *v)).collect();
    let instance = rise::infer::instantiate_def(&program, def, &types, &nats)
        .map_err(|d| format!("instantiation: {}", d.render("props.rise", src)))?;
    let render = |e: interp::EvalError| rise::Diagnostic::from(e).render("props.rise", src);
    let f = interp::eval(&instance.expr).map_err(render)?;
    let out = if inputs.is_empty() {
        f
    } else {
        interp::apply(&f, inputs.to_vec()).map_err(render)?
    };
    if let Type::Data(t) = &instance.result {
        out.check(t)
            .map_err(|e| format!("result of the wrong type: {e}"))?;
    }
    Ok(out)
}

/// [`eval_def`] that must succeed.
fn eval_ok(src: &str, def: &str, inputs: &[Value], nats: &[(&str, i64)]) -> Value {
    eval_def(src, def, inputs, nats).unwrap_or_else(|e| panic!("{src}\n{e}"))
}

/// [`eval_def`] that must fail with an error containing `what`.
fn eval_err(src: &str, def: &str, inputs: &[Value], nats: &[(&str, i64)], what: &str) {
    match eval_def(src, def, inputs, nats) {
        Ok(v) => panic!("{src}\nexpected an error ({what}), got the value {v}"),
        Err(e) => assert!(e.contains(what), "{src}\nexpected `{what}` in:\n{e}"),
    }
}

/// Whether two data values are equal (exactly; floats with IEEE `==`).
fn same(a: &Value, b: &Value) -> bool {
    a.data_eq(b) == Some(true)
}

/// Asserts that a value (or an `Ok` value) equals the expected one, showing both.
macro_rules! prop_assert_value {
    ($got:expr, $want:expr) => {{
        let got: Value = $got;
        let want: Value = $want;
        prop_assert!(same(&got, &want), "got {}, expected {}", got, want);
    }};
}

/// The value of an evaluation that must succeed, as a test-case failure otherwise.
fn ok(result: Result<Value, String>) -> Result<Value, TestCaseError> {
    result.map_err(TestCaseError::fail)
}

fn f32s(xs: &[f32]) -> Value {
    Value::f32s(xs)
}

fn i32s(xs: &[i32]) -> Value {
    Value::array(xs.iter().map(|&x| Value::int(x)).collect())
}

fn idxs(is: &[usize], bound: usize) -> Value {
    Value::array(
        is.iter()
            .map(|&i| Value::Index {
                index: i as i64,
                bound: bound as i64,
            })
            .collect(),
    )
}

fn rows(xs: &[Vec<f32>]) -> Value {
    Value::array(xs.iter().map(|r| f32s(r)).collect())
}

fn vec_f32(xs: &[f32]) -> Value {
    Value::vector(xs.iter().map(|&x| Value::f32(x)).collect())
}

fn vec_i32(xs: &[i32]) -> Value {
    Value::vector(xs.iter().map(|&x| Value::int(x)).collect())
}

/// Floats that are exact in `f32` and small (so that sums and products of two stay exact
/// enough to compare bit for bit: the interpreter rounds as Rust does anyway).
fn float() -> impl Strategy<Value = f32> {
    (-64i32..64).prop_map(|k| k as f32 / 8.0)
}

/// Sizes of arrays: 1 to 9 (odd and even).
fn size() -> impl Strategy<Value = usize> {
    1usize..10
}

/// `n` floats.
fn floats(n: usize) -> impl Strategy<Value = Vec<f32>> {
    proptest::collection::vec(float(), n)
}

/// A random permutation of `0..n`.
fn permutation(n: usize) -> impl Strategy<Value = Vec<usize>> {
    Just((0..n).collect::<Vec<usize>>()).prop_shuffle()
}

const PROGRAMS: &str = "
def gatherAll = fun is xs => gather is xs
def gatherId : {n: nat} -> n.f32 -> n.f32 = fun xs => gather (generate (fun i => i)) xs
def scatterAll : {n: nat} -> n.idx[n] -> n.f32 -> n.f32 = fun is xs => scatter is xs
def scatterInto : {n m: nat} -> n.idx[m] -> n.f32 -> m.f32 = fun is xs => scatter is xs
def roundTrip : {n: nat} -> n.idx[n] -> n.f32 -> n.f32 = fun p xs => gather p (scatter p xs)
def scatterRows : {n m: nat} -> n.idx[n] -> n.m.f32 -> n.m.f32 = fun is xs => scatter is xs
def gatherRows : {n m k: nat} -> k.idx[n] -> n.m.f32 -> k.m.f32 = fun is xs => gather is xs
def lookup : {n: nat} -> idx[n] -> n.int -> int = fun i xs => idx i xs
def pick : {n m: nat} -> m.natType -> n.f32 -> m.f32 =
  fun ks xs => ks |> map (fun k => idx (natAsIndex n k) xs)
def spmv : {n m k: nat} -> n.k.idx[m] -> n.k.f32 -> m.f32 -> n.f32 =
  fun cols vals x => zip cols vals |> map (fun row =>
    zip (fst row) (snd row) |> map (fun p => snd p * idx (fst p) x) |> reduce add 0.0f)
";

/// The program of a computed index `(a*i + b) mod n` (in range) or `i + b` (in range only
/// when `b = 0`), read with `idx` inside a `generate`.
fn computed_index(a: usize, b: usize, modular: bool) -> String {
    let index = if modular {
        format!("((indexAsNat i * ({a} : natType) + ({b} : natType)) % n)")
    } else {
        format!("(indexAsNat i + ({b} : natType))")
    };
    format!(
        "def computed : {{n: nat}} -> n.int -> n.int = fun xs =>\n  \
         generate (fun i => idx (natAsIndex n {index}) xs)\n"
    )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    // ---- gather ----------------------------------------------------------------------------

    /// `gather is xs` is `[xs[is[0]], ..., xs[is[m-1]]]`, for any indices (repeats, any
    /// order, fewer or more than `n`).
    #[test]
    fn gather_reads_the_given_positions(
        (xs, is) in (size(), size()).prop_flat_map(|(n, m)| {
            (floats(n), proptest::collection::vec(0..n, m))
        })
    ) {
        let got = eval_ok(PROGRAMS, "gatherAll", &[idxs(&is, xs.len()), f32s(&xs)], &[]);
        let want: Vec<f32> = is.iter().map(|&i| xs[i]).collect();
        prop_assert_value!(got, f32s(&want));
    }

    /// `gather` of rows (`n.m.f32`) reads whole rows.
    #[test]
    fn gather_reads_rows(
        (xs, is) in (size(), 1usize..5, size()).prop_flat_map(|(n, m, k)| {
            (proptest::collection::vec(floats(m), n), proptest::collection::vec(0..n, k))
        })
    ) {
        let got = eval_ok(PROGRAMS, "gatherRows", &[idxs(&is, xs.len()), rows(&xs)], &[]);
        let want: Vec<Vec<f32>> = is.iter().map(|&i| xs[i].clone()).collect();
        prop_assert_value!(got, rows(&want));
    }

    /// `gather` of the identity indices (`generate (fun i => i)`) is the array itself.
    #[test]
    fn gather_of_the_identity_is_the_array(xs in size().prop_flat_map(floats)) {
        prop_assert_value!(eval_ok(PROGRAMS, "gatherId", &[f32s(&xs)], &[]), f32s(&xs));
    }

    /// An index value outside `0..n` (an input that breaks its type `idx[n]`) is an error
    /// of `gather`, never a value.
    #[test]
    fn gather_out_of_range_is_an_error(
        (xs, mut is, at, past) in (size(), size()).prop_flat_map(|(n, m)| {
            (floats(n), proptest::collection::vec(0..n, m), 0..m, 0usize..4)
        })
    ) {
        let n = xs.len();
        is[at] = n + past;
        eval_err(
            PROGRAMS,
            "gatherAll",
            &[idxs(&is, n), f32s(&xs)],
            &[],
            &format!("index {} out of bounds for an array of {n} elements", n + past),
        );
    }

    // ---- scatter ---------------------------------------------------------------------------

    /// `scatter p xs` puts `xs[j]` at `p[j]`, and `gather p` of it gives `xs` back.
    #[test]
    fn scatter_then_gather_is_the_identity(
        (xs, p) in size().prop_flat_map(|n| (floats(n), permutation(n)))
    ) {
        let n = xs.len();
        let scattered = eval_ok(PROGRAMS, "scatterAll", &[idxs(&p, n), f32s(&xs)], &[]);
        let mut want = vec![0.0f32; n];
        for (j, &i) in p.iter().enumerate() {
            want[i] = xs[j];
        }
        prop_assert_value!(scattered, f32s(&want));
        let back = eval_ok(PROGRAMS, "roundTrip", &[idxs(&p, n), f32s(&xs)], &[]);
        prop_assert_value!(back, f32s(&xs));
    }

    /// `scatter` of rows (`n.m.f32`): row `j` goes to row `p[j]`.
    #[test]
    fn scatter_places_rows(
        (xs, p) in (size(), 1usize..5).prop_flat_map(|(n, m)| {
            (proptest::collection::vec(floats(m), n), permutation(n))
        })
    ) {
        let n = xs.len();
        let got = eval_ok(PROGRAMS, "scatterRows", &[idxs(&p, n), rows(&xs)], &[]);
        let mut want = vec![Vec::new(); n];
        for (j, &i) in p.iter().enumerate() {
            want[i] = xs[j].clone();
        }
        prop_assert_value!(got, rows(&want));
    }

    /// Two values written to one position are an error naming the position.
    #[test]
    fn scatter_of_a_repeated_position_is_an_error(
        (xs, mut p, a, b) in (2usize..10).prop_flat_map(|n| {
            (floats(n), permutation(n), 0..n, 0..n - 1)
        })
    ) {
        let n = xs.len();
        // position b of the others (skipping a) repeats position a's target
        let b = if b >= a { b + 1 } else { b };
        p[b] = p[a];
        eval_err(
            PROGRAMS,
            "scatterAll",
            &[idxs(&p, n), f32s(&xs)],
            &[],
            &format!("two values are written to position {}", p[a]),
        );
        // and so on rows
        let xs2: Vec<Vec<f32>> = xs.iter().map(|&x| vec![x, -x]).collect();
        eval_err(PROGRAMS, "scatterRows", &[idxs(&p, n), rows(&xs2)], &[], "two values are written");
    }

    /// A position outside the result is an error, never a value.
    #[test]
    fn scatter_out_of_range_is_an_error(
        (xs, mut p, at, past) in size().prop_flat_map(|n| {
            (floats(n), permutation(n), 0..n, 0usize..4)
        })
    ) {
        let n = xs.len();
        p[at] = n + past;
        eval_err(
            PROGRAMS,
            "scatterAll",
            &[idxs(&p, n), f32s(&xs)],
            &[],
            &format!("index {} out of bounds for an array of {n} elements", n + past),
        );
    }

    /// Fewer values than positions of the result: a position no value is written to is
    /// an error (the result has no value there); as many distinct ones: a permutation.
    #[test]
    fn scatter_must_cover_the_result(
        (xs, p, extra) in size().prop_flat_map(|n| (floats(n), permutation(n), 0usize..3))
    ) {
        let n = xs.len();
        let m = n + extra;
        let result = eval_def(PROGRAMS, "scatterInto", &[idxs(&p, m), f32s(&xs)], &[("m", m as i64)]);
        if extra == 0 {
            let mut want = vec![0.0f32; n];
            for (j, &i) in p.iter().enumerate() {
                want[i] = xs[j];
            }
            prop_assert_value!(ok(result)?, f32s(&want));
        } else {
            let e = result.expect_err("positions n..m are never written");
            prop_assert!(e.contains(&format!("no value is written to position {n}")), "{}", e);
        }
    }

    // ---- idx with a run-time index, natAsIndex ----------------------------------------------

    /// `idx i xs` with an index given at run time is `xs[i]`; outside `0..n` an error.
    #[test]
    fn idx_reads_the_run_time_position(
        (xs, i) in size().prop_flat_map(|n| {
            (proptest::collection::vec(any::<i32>(), n), 0..n + 3)
        })
    ) {
        let n = xs.len();
        let index = Value::Index { index: i as i64, bound: n as i64 };
        let result = eval_def(PROGRAMS, "lookup", &[index, i32s(&xs)], &[]);
        if i < n {
            prop_assert_value!(ok(result)?, Value::int(xs[i]));
        } else {
            let e = result.expect_err("out of range");
            prop_assert!(e.contains(&format!("index {i} out of bounds for an array of {n} elements")), "{}", e);
        }
    }

    /// `natAsIndex n k` of `natType` values read at run time: the element at `k` when
    /// every `k < n`, else an error naming the first bad value.
    #[test]
    fn nat_as_index_of_run_time_values(
        (xs, ks) in (size(), size()).prop_flat_map(|(n, m)| {
            (floats(n), proptest::collection::vec(0..n as i64 + 3, m))
        })
    ) {
        let n = xs.len();
        let naturals = Value::array(ks.iter().map(|&k| Value::Nat(k)).collect());
        let result = eval_def(PROGRAMS, "pick", &[naturals, f32s(&xs)], &[]);
        match ks.iter().find(|&&k| k >= n as i64) {
            None => {
                let want: Vec<f32> = ks.iter().map(|&k| xs[k as usize]).collect();
                prop_assert_value!(ok(result)?, f32s(&want));
            }
            Some(k) => {
                let e = result.expect_err("an index out of range");
                prop_assert!(e.contains(&format!("{k} is not an index into {n} elements")), "{}", e);
            }
        }
    }

    /// An index computed in the program: `(a*i + b) mod n` always reads `xs` at that
    /// position; `i + b` is an error for `b > 0` (at `i = n - b`, or the first `i` when
    /// `b >= n`).
    #[test]
    fn computed_indices(
        xs in size().prop_flat_map(|n| proptest::collection::vec(any::<i32>(), n)),
        a in 0usize..7,
        b in 0usize..5,
        modular in any::<bool>(),
    ) {
        let n = xs.len();
        let src = computed_index(a, b, modular);
        let result = eval_def(&src, "computed", &[i32s(&xs)], &[]);
        if modular || b == 0 {
            let want: Vec<i32> = (0..n)
                .map(|i| xs[if modular { (a * i + b) % n } else { i }])
                .collect();
            prop_assert_value!(ok(result)?, i32s(&want));
        } else {
            let first_bad = n.saturating_sub(b) + b;
            let e = result.expect_err("an index past the end");
            prop_assert!(e.contains(&format!("{first_bad} is not an index into {n} elements")), "{}", e);
        }
    }

    /// `idx` of run-time indices inside a reduction (a sparse matrix times a vector).
    #[test]
    fn idx_inside_a_reduction(
        (cols, vals, x) in (size(), size(), 1usize..5).prop_flat_map(|(n, m, k)| (
            proptest::collection::vec(proptest::collection::vec(0..m, k), n),
            proptest::collection::vec(floats(k), n),
            floats(m),
        ))
    ) {
        let m = x.len();
        let cols_v = Value::array(cols.iter().map(|r| idxs(r, m)).collect());
        let got = eval_ok(PROGRAMS, "spmv", &[cols_v, rows(&vals), f32s(&x)], &[]);
        let want: Vec<f32> = cols
            .iter()
            .zip(&vals)
            .map(|(c, v)| c.iter().zip(v).fold(0.0f32, |acc, (&j, &a)| acc + a * x[j]))
            .collect();
        prop_assert_value!(got, f32s(&want));
    }
}

// ---- lane and makeVector -------------------------------------------------------------------

/// Vector widths to test.
fn width() -> impl Strategy<Value = usize> {
    prop_oneof![Just(1usize), Just(2), Just(3), Just(4), Just(8), Just(16)]
}

/// `makeVector n x0 ... x(n-1)` of the parameters `x0 ... x(n-1)`: `def build` taking
/// the scalars of type `t` and `def laneK` of it.
fn make_vector_program(n: usize, k: usize, t: &str) -> String {
    let params: Vec<String> = (0..n).map(|i| format!("(x{i}: {t})")).collect();
    let args: Vec<String> = (0..n).map(|i| format!("x{i}")).collect();
    format!(
        "def build = fun {ps} => makeVector {n} {xs}\n\
         def laneK = fun {ps} => lane {k} (makeVector {n} {xs})\n\
         def rebuild = fun (v: vec[{t}, {n}]) => makeVector {n} {lanes}\n",
        ps = params.join(" "),
        xs = args.join(" "),
        lanes = (0..n)
            .map(|i| format!("(lane {i} v)"))
            .collect::<Vec<_>>()
            .join(" "),
    )
}

/// Elementwise `a op b` on two vectors, and the same lane by lane with scalars.
fn vector_op_program(n: usize, t: &str, op: &str) -> String {
    let lanes: Vec<String> = (0..n)
        .map(|i| format!("(lane {i} a {op} lane {i} b)"))
        .collect();
    format!(
        "def whole = fun (a: vec[{t}, {n}]) (b: vec[{t}, {n}]) => a {op} b\n\
         def byLane = fun (a: vec[{t}, {n}]) (b: vec[{t}, {n}]) => makeVector {n} {}\n",
        lanes.join(" ")
    )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    /// `lane k (makeVector n x0 ... x(n-1))` is `xk`; `makeVector` of the lanes of a
    /// vector is the vector.
    #[test]
    fn lane_of_make_vector(
        (xs, k) in width().prop_flat_map(|n| (floats(n), 0..n)),
        ints in proptest::collection::vec(any::<i32>(), 16),
    ) {
        let n = xs.len();
        let src = make_vector_program(n, k, "f32");
        let args: Vec<Value> = xs.iter().map(|&x| Value::f32(x)).collect();
        prop_assert_value!(eval_ok(&src, "build", &args, &[]), vec_f32(&xs));
        prop_assert_value!(eval_ok(&src, "laneK", &args, &[]), Value::f32(xs[k]));
        prop_assert_value!(eval_ok(&src, "rebuild", &[vec_f32(&xs)], &[]), vec_f32(&xs));
        // and on integers
        let src = make_vector_program(n, k, "int");
        let args: Vec<Value> = ints[..n].iter().map(|&x| Value::int(x)).collect();
        prop_assert_value!(eval_ok(&src, "laneK", &args, &[]), Value::int(ints[k]));
        prop_assert_value!(eval_ok(&src, "rebuild", &[vec_i32(&ints[..n])], &[]), vec_i32(&ints[..n]));
    }

    /// A lane at or past a constant width is a type error (never a value).
    #[test]
    fn lane_past_the_width_is_a_type_error(n in width(), past in 0usize..3) {
        let src = format!("def f = fun (v: vec[f32, {n}]) => lane {} v\n", n + past);
        prop_assert!(rise::infer::check_source(&src).is_err(), "{}", src);
    }

    /// Elementwise vector arithmetic agrees lane by lane with scalar arithmetic, on
    /// floats (`+ - * /`) and on integers (`+ - *`, wrapping).
    #[test]
    fn vector_arithmetic_is_lane_by_lane(
        (a, b, ia, ib) in width().prop_flat_map(|n| (
            floats(n),
            floats(n),
            proptest::collection::vec(any::<i32>(), n),
            proptest::collection::vec(any::<i32>(), n),
        )),
        op in 0usize..4,
    ) {
        let n = a.len();
        let sym = ["+", "-", "*", "/"][op];
        let src = vector_op_program(n, "f32", sym);
        let inputs = [vec_f32(&a), vec_f32(&b)];
        let whole = eval_ok(&src, "whole", &inputs, &[]);
        let want: Vec<f32> = a
            .iter()
            .zip(&b)
            .map(|(&x, &y)| match op {
                0 => x + y,
                1 => x - y,
                2 => x * y,
                _ => x / y,
            })
            .collect();
        // NaN (0/0) is not equal to itself: compare bits
        let bits = |v: &Value| -> Vec<u32> {
            v.as_vector()
                .expect("a vector")
                .iter()
                .map(|l| match l.as_scalar() {
                    Some(Scalar::F32(x)) => x.to_bits(),
                    other => panic!("not an f32 lane: {other:?}"),
                })
                .collect()
        };
        prop_assert_eq!(bits(&whole), want.iter().map(|x| x.to_bits()).collect::<Vec<_>>());
        prop_assert_eq!(bits(&eval_ok(&src, "byLane", &inputs, &[])), bits(&whole));
        if op < 3 {
            let src = vector_op_program(n, "int", sym);
            let inputs = [vec_i32(&ia), vec_i32(&ib)];
            let whole = eval_ok(&src, "whole", &inputs, &[]);
            let want: Vec<i32> = ia
                .iter()
                .zip(&ib)
                .map(|(&x, &y)| match op {
                    0 => x.wrapping_add(y),
                    1 => x.wrapping_sub(y),
                    _ => x.wrapping_mul(y),
                })
                .collect();
            prop_assert_value!(whole.clone(), vec_i32(&want));
            prop_assert_value!(eval_ok(&src, "byLane", &inputs, &[]), whole);
        }
    }
}
