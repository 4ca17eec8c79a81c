//! The semantics of array construction and access, pairs, pads and vectors.

use super::{PrimCall, R};
use crate::interp::machine::Machine;
use crate::interp::value::Value;
use std::sync::Arc;

/// `generate f = [f 0, ..., f (n-1)]`, `n` from the result type.
pub fn generate(m: &mut Machine, c: &PrimCall) -> R<Value> {
    let n = c.result_len()?;
    let f = c.arg(0)?;
    let mut out = Vec::with_capacity(n.min(1 << 16) as usize);
    for i in 0..n {
        out.push(m.apply1(f, Value::Index { index: i, bound: n }, c.span)?);
    }
    Ok(Value::array(out))
}

/// `idx i xs = xs[i]`; an index out of range (or a failed one) gives a failed element.
pub fn idx(_: &mut Machine, c: &PrimCall) -> R<Value> {
    let xs = c.array(1)?;
    match c.index(c.arg(0)?, xs.len())? {
        Ok(i) => Ok(xs[i].clone()),
        Err(e) => c.failed_value(&e, xs.first(), Some),
    }
}

fn prefix_len(c: &PrimCall, xs: &[Value]) -> R<usize> {
    let n = c.nat(0)?;
    if n as u64 > xs.len() as u64 {
        return Err(c.error(format!(
            "{n} elements requested from an array of {}",
            xs.len()
        )));
    }
    Ok(n as usize)
}

/// `take n xs`: the first `n` elements.
pub fn take(_: &mut Machine, c: &PrimCall) -> R<Value> {
    let xs = c.array(0)?;
    let n = prefix_len(c, xs)?;
    Ok(Value::Array(xs[..n].into()))
}

/// `drop n xs`: all but the first `n` elements.
pub fn drop(_: &mut Machine, c: &PrimCall) -> R<Value> {
    let xs = c.array(0)?;
    let n = prefix_len(c, xs)?;
    Ok(Value::Array(xs[n..].into()))
}

/// `concat xs ys`.
pub fn concat(_: &mut Machine, c: &PrimCall) -> R<Value> {
    let (xs, ys) = (c.array(0)?, c.array(1)?);
    Ok(Value::Array(xs.iter().chain(ys.iter()).cloned().collect()))
}

/// Chunks of `n` (arrays or vectors); `n = 0` takes the number of chunks from the type.
fn chunks(c: &PrimCall, n: i64, xs: &[Value], vector: bool) -> R<Value> {
    let wrap = |v: &[Value]| {
        if vector {
            Value::Vector(v.into())
        } else {
            Value::Array(v.into())
        }
    };
    if n == 0 {
        if !xs.is_empty() {
            return Err(c.error(format!(
                "cannot split {} elements into chunks of 0",
                xs.len()
            )));
        }
        let m = c.result_len()?;
        return Ok(Value::array((0..m).map(|_| wrap(&[])).collect()));
    }
    let n = n as usize;
    if !xs.len().is_multiple_of(n) {
        return Err(c.error(format!(
            "{} elements cannot be split into chunks of {n}",
            xs.len()
        )));
    }
    Ok(Value::array(xs.chunks(n).map(wrap).collect()))
}

/// `split n xs`: chunks of `n` consecutive elements.
pub fn split(_: &mut Machine, c: &PrimCall) -> R<Value> {
    chunks(c, c.nat(0)?, c.array(0)?, false)
}

/// `join xss`: the concatenation of the rows.
pub fn join(_: &mut Machine, c: &PrimCall) -> R<Value> {
    flatten(c, "arrays", Value::as_array)
}

/// The elements of the parts of the array argument, in order: `parts` opens a part (a row, a
/// vector) and `what` names the parts in the error about one it cannot open.
fn flatten(c: &PrimCall, what: &str, parts: fn(&Value) -> Option<&Arc<[Value]>>) -> R<Value> {
    let mut out = Vec::new();
    for part in c.array(0)?.iter() {
        match parts(part) {
            Some(elems) => out.extend(elems.iter().cloned()),
            None => {
                return Err(c.error(format!(
                    "expected an array of {what}, found {}",
                    part.describe()
                )))
            }
        }
    }
    Ok(Value::array(out))
}

/// `slide sz sp xs`: the windows `xs[i*sp .. i*sp+sz]`.
pub fn slide(_: &mut Machine, c: &PrimCall) -> R<Value> {
    let (sz, sp) = (c.nat(0)?, c.nat(1)?);
    let xs = c.array(0)?;
    let len = xs.len() as i64;
    let windows = if sp == 0 {
        c.result_len()?
    } else if len < sz || (len - sz) % sp != 0 {
        return Err(c.error(format!(
            "{len} elements cannot be covered by windows of {sz} every {sp} elements"
        )));
    } else {
        (len - sz) / sp + 1
    };
    if sp == 0 && len < sz {
        return Err(c.error(format!("window of {sz} larger than the array of {len}")));
    }
    let (sz, sp) = (sz as usize, sp as usize);
    Ok(Value::array(
        (0..windows as usize)
            .map(|i| Value::Array(xs[i * sp..i * sp + sz].into()))
            .collect(),
    ))
}

/// `transpose xss`: swaps the outer two dimensions.
pub fn transpose(_: &mut Machine, c: &PrimCall) -> R<Value> {
    let xss = c.array(0)?;
    let rows: Vec<&Arc<[Value]>> = xss
        .iter()
        .map(|r| {
            r.as_array().ok_or_else(|| {
                c.error(format!(
                    "expected an array of arrays, found {}",
                    r.describe()
                ))
            })
        })
        .collect::<R<_>>()?;
    let m = match rows.first() {
        Some(r) => r.len(),
        None => c.result_len()? as usize,
    };
    if let Some(r) = rows.iter().find(|r| r.len() != m) {
        return Err(c.error(format!("rows of different lengths ({m} and {})", r.len())));
    }
    Ok(Value::array(
        (0..m)
            .map(|j| Value::array(rows.iter().map(|r| r[j].clone()).collect()))
            .collect(),
    ))
}

/// `zip xs ys`: pairs of elements at the same position.
pub fn zip(_: &mut Machine, c: &PrimCall) -> R<Value> {
    let (xs, ys) = (c.array(0)?, c.array(1)?);
    if xs.len() != ys.len() {
        return Err(c.error(format!(
            "arrays of different lengths ({} and {})",
            xs.len(),
            ys.len()
        )));
    }
    Ok(Value::array(
        xs.iter()
            .zip(ys.iter())
            .map(|(x, y)| Value::pair(x.clone(), y.clone()))
            .collect(),
    ))
}

/// `unzip ps`: a pair of arrays.
pub fn unzip(_: &mut Machine, c: &PrimCall) -> R<Value> {
    let ps = c.array(0)?;
    let mut a = Vec::with_capacity(ps.len());
    let mut b = Vec::with_capacity(ps.len());
    for p in ps.iter() {
        let (x, y) = p.as_pair().ok_or_else(|| {
            c.error(format!(
                "expected an array of pairs, found {}",
                p.describe()
            ))
        })?;
        a.push(x.clone());
        b.push(y.clone());
    }
    Ok(Value::pair(Value::array(a), Value::array(b)))
}

/// `makePair a b`.
pub fn make_pair(_: &mut Machine, c: &PrimCall) -> R<Value> {
    Ok(Value::pair(c.arg(0)?.clone(), c.arg(1)?.clone()))
}

/// `fst p`.
pub fn fst(_: &mut Machine, c: &PrimCall) -> R<Value> {
    Ok(c.pair(0)?.0.clone())
}

/// `snd p`.
pub fn snd(_: &mut Machine, c: &PrimCall) -> R<Value> {
    Ok(c.pair(0)?.1.clone())
}

/// `mapFst f (a, b) = (f a, b)`.
pub fn map_fst(m: &mut Machine, c: &PrimCall) -> R<Value> {
    let (a, b) = c.pair(1)?;
    Ok(Value::pair(
        m.apply1(c.arg(0)?, a.clone(), c.span)?,
        b.clone(),
    ))
}

/// `mapSnd f (a, b) = (a, f b)`.
pub fn map_snd(m: &mut Machine, c: &PrimCall) -> R<Value> {
    let (a, b) = c.pair(1)?;
    Ok(Value::pair(
        a.clone(),
        m.apply1(c.arg(0)?, b.clone(), c.span)?,
    ))
}

/// Pads by an index function from `-l .. n+r` into `0 .. n`.
fn pad_by(c: &PrimCall, xs: &[Value], reindex: fn(i64, i64) -> i64) -> R<Value> {
    let (l, r) = (c.nat(0)?, c.nat(1)?);
    let n = xs.len() as i64;
    if n == 0 && l + r > 0 {
        return Err(c.error("cannot pad an empty array with its own elements"));
    }
    c.check_len(l.saturating_add(n).saturating_add(r))?;
    Ok(Value::array(
        (-l..n + r)
            .map(|i| xs[reindex(i, n) as usize].clone())
            .collect(),
    ))
}

/// `padCst l r x xs`: `l` copies of `x`, `xs`, `r` copies of `x`.
pub fn pad_cst(_: &mut Machine, c: &PrimCall) -> R<Value> {
    let (l, r) = (c.nat(0)?, c.nat(1)?);
    let x = c.arg(0)?;
    let xs = c.array(1)?;
    c.check_len(l.saturating_add(xs.len() as i64).saturating_add(r))?;
    let mut out = Vec::with_capacity((l + r) as usize + xs.len());
    out.extend((0..l).map(|_| x.clone()));
    out.extend(xs.iter().cloned());
    out.extend((0..r).map(|_| x.clone()));
    Ok(Value::array(out))
}

/// `padClamp l r xs`: repeats the boundary elements (numpy `edge`).
pub fn pad_clamp(_: &mut Machine, c: &PrimCall) -> R<Value> {
    pad_by(c, c.array(0)?, |i, n| i.clamp(0, n - 1))
}

/// `padMirror l r xs`: mirrors at the boundary, repeating the edge element
/// (numpy `symmetric`): `padMirror 2 2 [a b c d] = [b a | a b c d | d c]`.
pub fn pad_mirror(_: &mut Machine, c: &PrimCall) -> R<Value> {
    pad_by(c, c.array(0)?, |i, n| {
        let j = i.rem_euclid(2 * n);
        if j < n {
            j
        } else {
            2 * n - 1 - j
        }
    })
}

/// `padWrap l r xs`: wraps around (numpy `wrap`): `padWrap 2 2 [a b c] = [b c | a b c | a b]`.
pub fn pad_wrap(_: &mut Machine, c: &PrimCall) -> R<Value> {
    pad_by(c, c.array(0)?, |i, n| i.rem_euclid(n))
}

// ---- vectors -----------------------------------------------------------------------

/// `asVector n xs`: groups `n` consecutive scalars into a vector.
pub fn as_vector(_: &mut Machine, c: &PrimCall) -> R<Value> {
    chunks(c, c.nat(0)?, c.array(0)?, true)
}

/// `asScalar vs`: the lanes of the vectors, in order.
pub fn as_scalar(_: &mut Machine, c: &PrimCall) -> R<Value> {
    flatten(c, "vectors", Value::as_vector)
}

/// `vectorFromScalar x`: every lane is `x` (`n` from the result type).
pub fn vector_from_scalar(_: &mut Machine, c: &PrimCall) -> R<Value> {
    let n = c.result_len()?;
    let x = c.arg(0)?;
    Ok(Value::Vector((0..n).map(|_| x.clone()).collect()))
}

/// `lane k v`: lane `k` of the vector `v` (an error when `k` is not below its width).
pub fn lane(_: &mut Machine, c: &PrimCall) -> R<Value> {
    let k = c.nat(0)?;
    let v = c.arg(0)?;
    let lanes = v
        .as_vector()
        .ok_or_else(|| c.error(format!("expected a vector, got {}", v.describe())))?;
    usize::try_from(k)
        .ok()
        .and_then(|k| lanes.get(k))
        .cloned()
        .ok_or_else(|| c.error(format!("lane {k} of a vector of {} lanes", lanes.len())))
}

/// `makeVector n x1 ... xn`.
pub fn make_vector(_: &mut Machine, c: &PrimCall) -> R<Value> {
    let n = c.nat(0)?;
    if c.args.len() as i64 != n {
        return Err(c.error(format!("{} values for a vector of {n}", c.args.len())));
    }
    Ok(Value::Vector(c.args.iter().cloned().collect()))
}

/// `makeArray n x1 ... xn`.
pub fn make_array(_: &mut Machine, c: &PrimCall) -> R<Value> {
    let n = c.nat(0)?;
    if c.args.len() as i64 != n {
        return Err(c.error(format!("{} values for an array of {n}", c.args.len())));
    }
    Ok(Value::array(c.args.clone()))
}
