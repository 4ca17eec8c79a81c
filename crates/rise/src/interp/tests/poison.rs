//! Data-dependent errors are errors of a program only where its result needs the failed
//! value ([`ErrorMode::Poison`]); [`ErrorMode::Strict`] raises them where they happen.

use super::{f32s, idxs, ints, ClampInRust, FOREIGN_SRC};
use crate::interp::*;
use crate::types::{DataType, ScalarType};
use std::sync::Arc;

/// `def` of `src` instantiated for the inputs' types and applied to them under `mode`.
fn eval_in(src: &str, def: &str, inputs: &[Value], mode: ErrorMode) -> Result<Value, EvalError> {
    let prog = crate::infer::check_source(src).unwrap_or_else(|d| panic!("{src}: {d:?}"));
    let types: Vec<DataType> = inputs.iter().map(|v| v.data_type().unwrap()).collect();
    let inst = crate::infer::instantiate_def(&prog, def, &types, &[])
        .unwrap_or_else(|d| panic!("{src}: {d:?}"));
    let f = eval_with_mode(&inst.expr, &[], None, mode)?;
    apply_with_mode(&f, inputs.to_vec(), mode)
}

/// The value under the default semantics; under strict semantics, the error it raises
/// (whose message must contain `strict_error`).
fn discarded(src: &str, inputs: &[Value], strict_error: &str) -> Value {
    let strict = eval_in(src, "main", inputs, ErrorMode::Strict)
        .expect_err("strict mode raises the discarded error");
    assert!(strict.message.contains(strict_error), "{src}: {strict}");
    eval_in(src, "main", inputs, ErrorMode::Poison).unwrap_or_else(|e| panic!("{src}: {e}"))
}

/// The error under the default semantics, which must equal the strict one (message and
/// span) and contain `message`; the source text at its span.
fn needed<'a>(src: &'a str, inputs: &[Value], message: &str) -> &'a str {
    let e = eval_in(src, "main", inputs, ErrorMode::Poison).expect_err(src);
    let strict = eval_in(src, "main", inputs, ErrorMode::Strict).expect_err(src);
    assert_eq!(e, strict, "{src}");
    assert!(e.message.contains(message), "{src}: {e}");
    let at = &src[e.span.range()];
    at.strip_prefix('(')
        .and_then(|s| s.strip_suffix(')'))
        .unwrap_or(at)
}

#[test]
fn take_and_drop_discard_failed_elements() {
    let src = "def main = fun (xs: 4.int) => take 2 (map (fun x => 100 / x) xs)";
    let v = discarded(src, &[ints(&[1, 2, 0, 4])], "integer division by zero");
    assert_eq!(v.to_string(), "[100, 50]");
    let src = "def main = fun (xs: 4.int) => drop 2 (map (fun x => 100 % x) xs)";
    let v = discarded(src, &[ints(&[0, 7, 3, 40])], "integer remainder by zero");
    assert_eq!(v.to_string(), "[1, 20]");
}

#[test]
fn select_fst_and_snd_discard_the_other_value() {
    let src = "def main = fun (x: int) (y: int) => select (y == 0) 0 (x / y)";
    let v = discarded(src, &[Value::int(7), Value::int(0)], "division by zero");
    assert_eq!(v.to_string(), "0");
    let src = "def main = fun (x: int) (y: int) => fst (makePair x (x / y))";
    let v = discarded(src, &[Value::int(7), Value::int(0)], "division by zero");
    assert_eq!(v.to_string(), "7");
    let src = "def main = fun (x: f32) => snd (makePair (cast x : u8) x)";
    let v = discarded(src, &[Value::f32(-3.0)], "undefined in C");
    assert_eq!(v.to_string(), "-3.0");
}

#[test]
fn gather_discards_elements_it_does_not_read() {
    // the two programs of the brief: natAsIndex out of range, read by no element taken
    let src = "def main = fun (xs: 4.f32) (js: 4.int) =>
      take 2 (gather (map (fun j => natAsIndex 4 (cast j : natType)) js) xs)";
    let v = discarded(
        src,
        &[f32s(&[1.0, 2.0, 3.0, 4.0]), ints(&[1, 2, 9, 0])],
        "9 is not an index into 4 elements",
    );
    assert_eq!(v.to_string(), "[2.0, 3.0]");
    // a failed element of the gathered array that no index reads
    let src = "def main = fun (xs: 3.int) (is: 2.idx[3]) => gather is (map (fun x => 6 / x) xs)";
    let v = discarded(
        src,
        &[ints(&[1, 0, 3]), idxs(&[2, 0], 3)],
        "division by zero",
    );
    assert_eq!(v.to_string(), "[2, 6]");
    // run-time idx out of range, unused
    let src = "def main = fun (xs: 4.f32) (i: int) (j: int) =>
      fst (makePair (idx (natAsIndex 4 (cast i : natType)) xs) (idx (natAsIndex 4 (cast j : natType)) xs))";
    let inputs = [f32s(&[5.0, 6.0, 7.0, 8.0]), Value::int(1), Value::int(4)];
    let v = discarded(src, &inputs, "4 is not an index into 4");
    assert_eq!(v.to_string(), "6.0");
}

#[test]
fn an_unused_failed_scatter_is_no_error_a_used_one_fails_everywhere() {
    let unused = "def main = fun (is: 3.idx[3]) (xs: 3.f32) => fst (makePair xs (scatter is xs))";
    let inputs = [idxs(&[0, 1, 1], 3), f32s(&[1.0, 2.0, 3.0])];
    let v = discarded(unused, &inputs, "two values are written to position 1");
    assert_eq!(v.to_string(), "[1.0, 2.0, 3.0]");
    // position 0 is written once, yet the failed scatter fails it too
    let used = "def main = fun (is: 3.idx[3]) (xs: 3.f32) => take 1 (scatter is xs)";
    needed(used, &inputs, "two values are written to position 1");
    let e = needed(
        used,
        &[idxs(&[2, 0, 2], 3), inputs[1].clone()],
        "position 2",
    );
    assert_eq!(e, "scatter is xs");
    // a failed position fails the scatter
    let src = "def main = fun (js: 2.int) (xs: 2.f32) =>
      take 1 (scatter (map (fun j => natAsIndex 2 (cast j : natType)) js) xs)";
    needed(
        src,
        &[ints(&[0, 5]), f32s(&[1.0, 2.0])],
        "5 is not an index into 2",
    );
}

#[test]
fn results_that_need_a_failed_value_fail_with_its_message_and_span() {
    let xs = [ints(&[1, 2, 0, 4])];
    let src = "def main = fun (xs: 4.int) => map (fun x => 100 / x) xs";
    assert!(needed(src, &xs, "integer division by zero").contains("100 / x"));
    let src = "def main = fun (xs: 4.int) => reduce (fun a x => a + 100 / x) 0 xs";
    assert!(needed(src, &xs, "integer division by zero").contains("100 / x"));
    let src = "def main = fun (xs: 4.int) => reduceSeq (fun a x => max a (100 / x)) 0 xs";
    assert!(needed(src, &xs, "integer division by zero").contains("100 / x"));
    // through comparisons, casts, select's condition and natAsIndex
    let src = "def main = fun (xs: 4.int) => map (fun x => select (100 / x > 10) 1.0f 2.0f) xs";
    assert!(needed(src, &xs, "integer division by zero").contains("100 / x"));
    let src = "def main = fun (xs: 4.f32) (j: int) => idx (natAsIndex 4 (cast j : natType)) xs";
    let e = needed(
        src,
        &[f32s(&[1.0; 4]), Value::int(4)],
        "4 is not an index into 4",
    );
    assert_eq!(e, "natAsIndex 4 (cast j : natType)");
    let src = "def main = fun (x: int) => (cast (cast x : natType) : int)";
    needed(src, &[Value::int(-1)], "cannot cast -1 to natType");
}

#[test]
fn the_first_failed_value_in_row_major_order_is_the_error() {
    // element 0 fails with a remainder, element 1 with a division, each inside a pair;
    // gather swaps them: the result's first failed leaf is the division (the strict
    // semantics raises the remainder, computed first)
    let src = "def main = fun (xs: 2.int) (is: 2.idx[2]) =>
      gather is (map (fun x => makePair (x + 1) (select (x > 0) (10 / (x - 1)) (10 % x))) xs)";
    let inputs = [ints(&[0, 1]), idxs(&[1, 0], 2)];
    let e = eval_in(src, "main", &inputs, ErrorMode::Poison).unwrap_err();
    assert_eq!(e.message, "`div`: integer division by zero", "{e}");
    assert_eq!(&src[e.span.range()], "(10 / (x - 1))");
    let strict = eval_in(src, "main", &inputs, ErrorMode::Strict).unwrap_err();
    assert_eq!(&src[strict.span.range()], "(10 % x)");
    // the pair's first component before its second
    let v = Value::array(vec![
        Value::int(1),
        Value::pair(
            Value::Failed(Arc::new(EvalError::msg("first"))),
            Value::Failed(Arc::new(EvalError::msg("second"))),
        ),
        Value::Failed(Arc::new(EvalError::msg("third"))),
    ]);
    assert_eq!(v.into_result().unwrap_err().message, "first");
}

#[test]
fn failed_vector_lanes_and_foreign_arguments_propagate() {
    let src = "def main = fun (x: int) (y: int) =>
      lane 0 ((vectorFromScalar x : vec[int, 2]) / makeVector 2 1 y)";
    let v = discarded(src, &[Value::int(6), Value::int(0)], "division by zero");
    assert_eq!(v.to_string(), "6");
    let src = "def main = fun (x: int) (y: int) =>
      lane 1 ((vectorFromScalar x : vec[int, 2]) / makeVector 2 1 y)";
    needed(src, &[Value::int(6), Value::int(0)], "division by zero");
    // a foreign function is not called on a failed argument; its result fails instead
    let prog = format!(
        "{FOREIGN_SRC}
def main = fun (xs: 3.int) =>
  map (fun x => (cast (6 / x) : f32)) xs |> map (fun y => clampf y 0.0f 2.5f) |> take 2
def all = fun (xs: 3.int) => map (fun x => clampf (cast (6 / x) : f32) 0.0f 2.5f) xs"
    );
    let ev = Arc::new(ClampInRust {
        batches: Default::default(),
    });
    let run = |def: &str| {
        let inst = crate::infer::instantiate_def(
            &crate::infer::check_source(&prog).unwrap(),
            def,
            &[DataType::array(3, DataType::Scalar(ScalarType::Int))],
            &[],
        )
        .unwrap();
        let foreign = ev.clone() as Arc<dyn crate::foreign::ForeignEvaluator>;
        let f = eval_with_foreign(&inst.expr, &[], Some(foreign)).unwrap();
        apply(&f, vec![ints(&[1, 3, 0])])
    };
    assert_eq!(run("main").unwrap().to_string(), "[2.5, 2.0]");
    // one batch of the two calls whose argument did not fail
    assert_eq!(*ev.batches.lock().unwrap(), vec![2]);
    assert!(run("all").unwrap_err().message.contains("division by zero"));
}

#[test]
fn failed_values_do_not_grow_values() {
    // a `Value` is moved and cloned everywhere: the failed variant is one pointer
    assert_eq!(std::mem::size_of::<Value>(), 24);
}

/// Every program of `FUSIONS` (`before`, `after`) means the same under the default
/// semantics: the rewrites generated code relies on (map/take fusion, gather of a map,
/// an unused pair component) keep a program's meaning, errors included.
const FUSIONS: &str = "
def takeMap = fun (xs: 6.int) => take 3 (map (fun x => 60 / x) xs)
def mapTake = fun (xs: 6.int) => map (fun x => 60 / x) (take 3 xs)
def gatherMap = fun (xs: 6.int) (is: 2.idx[6]) => gather is (map (fun x => 60 % x) xs)
def mapGather = fun (xs: 6.int) (is: 2.idx[6]) => map (fun x => 60 % x) (gather is xs)
def pairFst = fun (xs: 6.int) => fst (makePair (drop 4 xs) (map (fun x => 1 / x) xs))
def plainDrop = fun (xs: 6.int) => drop 4 xs
";

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(64))]

    #[test]
    fn fusions_keep_the_meaning(xs in proptest::collection::vec(-2i32..3, 6), i in 0i64..6, j in 0i64..6) {
        let xs = ints(&xs);
        let is = idxs(&[i, j], 6);
        let run = |def: &str, inputs: &[Value]| {
            eval_in(FUSIONS, def, inputs, ErrorMode::Poison).map_err(|e| e.message)
        };
        let one = [xs.clone()];
        let two = [xs, is];
        proptest::prop_assert_eq!(run("takeMap", &one).map(|v| v.to_string()), run("mapTake", &one).map(|v| v.to_string()));
        proptest::prop_assert_eq!(run("gatherMap", &two).map(|v| v.to_string()), run("mapGather", &two).map(|v| v.to_string()));
        proptest::prop_assert_eq!(run("pairFst", &one).map(|v| v.to_string()), run("plainDrop", &one).map(|v| v.to_string()));
    }
}
