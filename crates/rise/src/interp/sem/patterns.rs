//! The semantics of binding and of the patterns: the primitives that apply functions.

use super::{elem_type, PrimCall, R};
use crate::interp::machine::{apply_nat_to_nat, Machine};
use crate::interp::value::Value;
use crate::types::{DataType, Type, TypeArg};

/// `f` applied to every element of `xs`.
fn collect(m: &mut Machine, c: &PrimCall, f: &Value, xs: &[Value]) -> R<Vec<Value>> {
    if let Some(batch) = m.apply_batch(f, xs, c.span) {
        return batch;
    }
    let mut out = Vec::with_capacity(xs.len());
    for x in xs {
        out.push(m.apply1(f, x.clone(), c.span)?);
    }
    Ok(out)
}

// ---- binding and memory -----------------------------------------------------------

/// `let v f = f v`.
pub fn let_(m: &mut Machine, c: &PrimCall) -> R<Value> {
    m.apply1(c.arg(1)?, c.arg(0)?.clone(), c.span)
}

/// `toMem a v f = f v` (memory is not observable in the interpreter).
pub fn to_mem(m: &mut Machine, c: &PrimCall) -> R<Value> {
    m.apply1(c.arg(1)?, c.arg(0)?.clone(), c.span)
}

// ---- patterns ----------------------------------------------------------------------

/// `map f xs = [f x0, ..., f x(n-1)]` (every map variant).
pub fn map(m: &mut Machine, c: &PrimCall) -> R<Value> {
    let xs = c.array(1)?;
    Ok(Value::array(collect(m, c, c.arg(0)?, xs)?))
}

/// `mapVec f v`: `f` on every lane.
pub fn map_vec(m: &mut Machine, c: &PrimCall) -> R<Value> {
    let v = c.arg(1)?;
    let lanes = v
        .as_vector()
        .ok_or_else(|| c.error(format!("expected a vector, got {}", v.describe())))?;
    Ok(Value::Vector(collect(m, c, c.arg(0)?, lanes)?.into()))
}

/// `reduce f init xs` (and `reduceSeq`, `reduceSeqUnroll`): the left fold
/// `f(...f(f(init, x0), x1)..., x(n-1))`.
pub fn reduce(m: &mut Machine, c: &PrimCall) -> R<Value> {
    let f = c.arg(0)?;
    let mut acc = c.arg(1)?.clone();
    for x in c.array(2)?.iter() {
        acc = m.apply2(f, acc, x.clone(), c.span)?;
    }
    Ok(acc)
}

/// `reduceWarp f xs` (32 values): the warp reduction in butterfly order, as a
/// warp's lanes compute it with shuffles: in steps `o = 16, 8, 4, 2, 1` every value
/// `v[j]` becomes `f v[j] v[j xor o]`; the result is `v[0]` (every lane's value,
/// `f` being commutative).
pub fn reduce_warp(m: &mut Machine, c: &PrimCall) -> R<Value> {
    let f = c.arg(0)?;
    let xs = c.array(1)?;
    if xs.len() != 32 {
        return Err(c.error(format!("reduceWarp takes 32 values, got {}", xs.len())));
    }
    let mut v: Vec<Value> = xs.to_vec();
    for o in [16usize, 8, 4, 2, 1] {
        let mut next = Vec::with_capacity(32);
        for j in 0..32 {
            next.push(m.apply2(f, v[j].clone(), v[j ^ o].clone(), c.span)?);
        }
        v = next;
    }
    Ok(v.swap_remove(0))
}

/// `scanWarp f xs` (32 values): the inclusive scan in Hillis and Steele's order, as a
/// warp's lanes compute it with shuffles: in steps `d = 1, 2, 4, 8, 16` every value `v[j]`
/// with `j ≥ d` becomes `f v[j] v[j − d]`; the others stay.
pub fn scan_warp(m: &mut Machine, c: &PrimCall) -> R<Value> {
    let f = c.arg(0)?;
    let xs = c.array(1)?;
    if xs.len() != 32 {
        return Err(c.error(format!("scanWarp takes 32 values, got {}", xs.len())));
    }
    let mut v: Vec<Value> = xs.to_vec();
    for d in [1usize, 2, 4, 8, 16] {
        let mut next = v[..d].to_vec();
        for j in d..32 {
            next.push(m.apply2(f, v[j].clone(), v[j - d].clone(), c.span)?);
        }
        v = next;
    }
    Ok(Value::array(v))
}

/// `scanSeq f init xs`: the inclusive scan `acc_i = f x_i acc_(i-1)`, `acc_(-1) = init`.
pub fn scan_seq(m: &mut Machine, c: &PrimCall) -> R<Value> {
    let f = c.arg(0)?;
    let mut acc = c.arg(1)?.clone();
    let xs = c.array(2)?;
    let mut out = Vec::with_capacity(xs.len());
    for x in xs.iter() {
        acc = m.apply2(f, x.clone(), acc, c.span)?;
        out.push(acc.clone());
    }
    Ok(Value::array(out))
}

/// `slideSeq sz f xs = map f (slide sz 1 xs)`: `f` on every window of `sz` consecutive
/// elements, in order.
pub fn slide_seq(m: &mut Machine, c: &PrimCall) -> R<Value> {
    let sz = c.nat(0)?;
    let xs = c.array(1)?;
    let len = xs.len() as i64;
    if len < sz {
        return Err(c.error(format!("window of {sz} larger than the array of {len}")));
    }
    let sz = sz as usize;
    let windows: Vec<Value> = (0..=xs.len() - sz)
        .map(|i| Value::Array(xs[i..i + sz].into()))
        .collect();
    Ok(Value::array(collect(m, c, c.arg(0)?, &windows)?))
}

/// `scanLookback w m f init e g xs`: the tiles of `m` consecutive elements of `xs` (the
/// last padded with `e`) each scanned by `g`; element `i` of tile `j` is `f s_j[i] o_j`,
/// with `o_0 = init` and `o_(j+1) = f s_j[m-1] o_j` (`w`, the work-items of a tile on a
/// GPU, does not change the value).
pub fn scan_lookback(m: &mut Machine, c: &PrimCall) -> R<Value> {
    let len = usize::try_from(c.nat(1)?).unwrap_or(0);
    if len == 0 {
        return Err(c.error("tiles of 0 elements"));
    }
    let (f, e, g) = (c.arg(0)?, c.arg(2)?, c.arg(3)?);
    let mut offset = c.arg(1)?.clone();
    let xs = c.array(4)?;
    let mut out = Vec::with_capacity(xs.len());
    for start in (0..xs.len()).step_by(len) {
        let tile = (start..start + len)
            .map(|i| xs.get(i).cloned().unwrap_or_else(|| e.clone()))
            .collect();
        let scanned = m.apply1(g, Value::array(tile), c.span)?;
        let scanned = match scanned.as_array() {
            Some(s) if s.len() == len => s.clone(),
            _ => {
                return Err(c.error(format!(
                    "the tile's scan is {}, not {len} values",
                    scanned.describe()
                )))
            }
        };
        for s in scanned.iter().take(xs.len() - start) {
            out.push(m.apply2(f, s.clone(), offset.clone(), c.span)?);
        }
        offset = m.apply2(f, scanned[len - 1].clone(), offset, c.span)?;
    }
    Ok(Value::array(out))
}

/// `iterate k f xs`: applies the dependent function `f` `k` times, each time to
/// `l` = the current length divided by `n` (`n` from the type of `f`).
pub fn iterate(m: &mut Machine, c: &PrimCall) -> R<Value> {
    let k = c.nat(0)?;
    let (params, _) = c.signature()?;
    let n = match params.first() {
        Some(Type::DepFun { binder, body, .. }) => match &**body {
            Type::Fun(a, _) => match &**a {
                Type::Data(DataType::Array(len, _)) => len
                    .eval(&|v| (v.name() == &*binder.name).then_some(1))
                    .map_err(|e| {
                        c.error(format!(
                            "the size {len} of the input of `f` cannot be evaluated: {e}"
                        ))
                    })?,
                other => return Err(c.error(format!("unexpected type of `f`'s input: {other}"))),
            },
            other => return Err(c.error(format!("unexpected type of `f`: {other}"))),
        },
        other => return Err(c.error(format!("unexpected type of `f`: {other:?}"))),
    };
    let f = c.arg(0)?;
    let mut cur = c.arg(1)?.clone();
    for _ in 0..k {
        let len = cur
            .as_array()
            .ok_or_else(|| c.error(format!("expected an array, got {}", cur.describe())))?
            .len() as i64;
        if n <= 0 || len % n != 0 {
            return Err(c.error(format!(
                "an array of {len} elements cannot be divided by n = {n}"
            )));
        }
        let l = len / n;
        let g = m.apply_type(f, TypeArg::Nat(arith::Nat::cst(l)), c.span)?;
        cur = m.apply1(&g, cur, c.span)?;
    }
    Ok(cur)
}

/// `gather is xs = [xs[is 0], ...]`; an element whose index is out of range (or failed)
/// fails.
pub fn gather(_: &mut Machine, c: &PrimCall) -> R<Value> {
    let (is, xs) = (c.array(0)?, c.array(1)?);
    let mut out = Vec::with_capacity(is.len());
    for i in is.iter() {
        out.push(match c.index(i, xs.len())? {
            Ok(i) => xs[i].clone(),
            Err(e) => c.failed_value(&e, xs.first(), elem_type)?,
        });
    }
    Ok(Value::array(out))
}

/// `scatter is xs`: `result[is j] = xs[j]`; the positions must be distinct and cover
/// the result (`m` from the result type). Otherwise (or when a position failed) the
/// scatter fails as a whole: every element of its result is failed, with the first
/// error found (generated code writes every position when the scatter runs at all).
pub fn scatter(_: &mut Machine, c: &PrimCall) -> R<Value> {
    let (is, xs) = (c.array(0)?, c.array(1)?);
    if is.len() != xs.len() {
        return Err(c.error(format!("{} positions for {} values", is.len(), xs.len())));
    }
    let mlen = c.result_len()? as usize;
    let mut out: Vec<Option<Value>> = vec![None; mlen];
    let mut failure = None;
    for (j, (i, x)) in is.iter().zip(xs.iter()).enumerate() {
        let i = match c.index(i, mlen)? {
            Ok(i) => i,
            Err(e) => {
                failure = Some(e);
                break;
            }
        };
        if out[i].is_some() {
            failure = Some(c.data_error(format!(
                "two values are written to position {i} (the second from position {j})"
            ))?);
            break;
        }
        out[i] = Some(x.clone());
    }
    if failure.is_none() {
        if let Some(i) = out.iter().position(Option::is_none) {
            failure = Some(c.data_error(format!("no value is written to position {i}"))?);
        }
    }
    if let Some(e) = failure {
        let elem = c.failed_value(&e, xs.first(), elem_type)?;
        return Ok(Value::Array((0..mlen).map(|_| elem.clone()).collect()));
    }
    Ok(Value::array(out.into_iter().flatten().collect()))
}

/// `reorder f finv xs`: element `i` of the result is `xs[f i]`.
pub fn reorder(_: &mut Machine, c: &PrimCall) -> R<Value> {
    let f = c.nat_to_nat(0)?;
    let xs = c.array(0)?;
    let n = xs.len() as i64;
    let mut out = Vec::with_capacity(xs.len());
    for i in 0..n {
        let j = apply_nat_to_nat(f, i).map_err(|m| c.error(m))?;
        if !(0..n).contains(&j) {
            return Err(c.error(format!(
                "the index function maps {i} to {j}, outside 0..{n}"
            )));
        }
        out.push(xs[j as usize].clone());
    }
    Ok(Value::array(out))
}
