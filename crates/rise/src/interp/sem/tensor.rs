//! The semantics of the tensor-core primitives `mmaSync` (a warp's) and `wgmma` (a warp
//! group's).

use super::{PrimCall, R};
use crate::fragments::{self, A_PER_LANE, B_PER_LANE, C_PER_LANE, K, LANES, M, N};
use crate::interp::machine::Machine;
use crate::interp::scalar::Scalar;
use crate::interp::value::Value;
use crate::types::ScalarType;
use std::sync::Arc;

/// `mmaSync a b c`: the fragments `a` (`32.8.t`), `b` (`32.4.t`) and `c` (`32.4.f32`)
/// read as the tiles `A` (16×16), `B` (16×8) and `C` (16×8) through the layouts of
/// [`crate::fragments`]; the result is the fragment of `D = A·B + C`, every element the
/// sum of its 16 exact products and `C`'s element, rounded to `f32` once. A failed
/// operand element fails every element of the result.
pub fn mma_sync(_: &mut Machine, c: &PrimCall) -> R<Value> {
    let a = lanes(c, 0, A_PER_LANE)?;
    let b = lanes(c, 1, B_PER_LANE)?;
    let acc = lanes(c, 2, C_PER_LANE)?;
    if let Some(err) = [&a, &b, &acc].iter().find_map(|v| first_failure(v)) {
        return Ok(fragment(|_, _| Value::Failed(err.clone())));
    }
    let halves = |v: &[Vec<Value>]| -> R<()> {
        for x in v.iter().flatten() {
            let t = scalar(c, x)?.ty();
            if !matches!(t, ScalarType::F16 | ScalarType::Bf16) {
                return Err(c.error(format!(
                    "the operands' elements must be f16 or bf16, found {}",
                    t.name()
                )));
            }
        }
        Ok(())
    };
    halves(&a)?;
    halves(&b)?;
    let mut ta = [[0.0f64; K]; M];
    let mut tb = [[0.0f64; N]; K];
    let mut tc = [[0.0f64; N]; M];
    for (l, row) in a.iter().enumerate() {
        for (i, x) in row.iter().enumerate() {
            let (r, k) = fragments::a_element(l, i);
            ta[r][k] = scalar(c, x)?.as_f64();
        }
    }
    for (l, row) in b.iter().enumerate() {
        for (i, x) in row.iter().enumerate() {
            let (k, n) = fragments::b_element(l, i);
            tb[k][n] = scalar(c, x)?.as_f64();
        }
    }
    for (l, row) in acc.iter().enumerate() {
        for (i, x) in row.iter().enumerate() {
            let (r, n) = fragments::c_element(l, i);
            let s = scalar(c, x)?;
            if s.ty() != ScalarType::F32 {
                return Err(c.error(format!(
                    "the accumulator must be f32, found {}",
                    s.ty().name()
                )));
            }
            tc[r][n] = s.as_f64();
        }
    }
    Ok(fragment(|l, i| {
        let (r, n) = fragments::c_element(l, i);
        Value::f32(exact_dot(&ta[r], &tb, n, tc[r][n]))
    }))
}

/// `c + Σ_k a[k]·b[k][n]` rounded to `f32` once: the products of two 16-bit floats are
/// exact in `f64`, and their sum carries each addition's rounding error along (two-sum),
/// added back at the end.
fn exact_dot(a: &[f64; K], b: &[[f64; N]; K], n: usize, c: f64) -> f32 {
    exact_sum(c, (0..K).map(|k| a[k] * b[k][n]))
}

/// `c` plus the exact `products`, rounded to `f32` once (two-sum error carried along).
fn exact_sum(c: f64, products: impl Iterator<Item = f64>) -> f32 {
    let (mut s, mut err) = (c, 0.0f64);
    for p in products {
        let t = s + p;
        let bp = t - s;
        err += (s - (t - bp)) + (p - bp);
        s = t;
    }
    (s + err) as f32
}

/// Argument `i`, a fragment of 32 rows of `per_lane` elements.
fn lanes(c: &PrimCall, i: usize, per_lane: usize) -> R<Vec<Vec<Value>>> {
    let rows = c.array(i)?;
    if rows.len() != LANES {
        return Err(c.error(format!("a fragment has 32 rows, got {}", rows.len())));
    }
    rows.iter()
        .map(|row| {
            let xs = row
                .as_array()
                .ok_or_else(|| c.error(format!("expected an array, got {}", row.describe())))?;
            if xs.len() != per_lane {
                return Err(c.error(format!(
                    "a fragment row has {per_lane} elements here, got {}",
                    xs.len()
                )));
            }
            Ok(xs.to_vec())
        })
        .collect()
}

fn first_failure(v: &[Vec<Value>]) -> Option<Arc<crate::interp::EvalError>> {
    v.iter().flatten().find_map(|x| x.failure().cloned())
}

fn scalar(c: &PrimCall, x: &Value) -> R<Scalar> {
    x.as_scalar()
        .ok_or_else(|| c.error(format!("expected a scalar, got {}", x.describe())))
}

/// The `32.4` fragment whose element `i` of lane `l` is `f(l, i)`.
fn fragment(f: impl Fn(usize, usize) -> Value) -> Value {
    Value::array(
        (0..LANES)
            .map(|l| Value::array((0..C_PER_LANE).map(|i| f(l, i)).collect()))
            .collect(),
    )
}

/// `wgmma a b c`: the tiles `a` (64×16) and `b` (16×(8c)) of `f16` or `bf16`, the
/// accumulator `c` as the warps' fragments (`4.32.c.4.f32`, element `(w, l, j, i)` at
/// [`fragments::group_c_element`]); the result is `D = A·B + C` in the accumulator's
/// layout, every element the sum of its 16 exact products and `C`'s element, rounded to
/// `f32` once. A failed operand element fails every element of the result.
pub fn wgmma(_: &mut Machine, c: &PrimCall) -> R<Value> {
    let tile = |i: usize, rows: usize| -> R<Vec<Vec<Value>>> {
        let xs = c.array(i)?;
        if xs.len() != rows {
            return Err(c.error(format!("a tile of {rows} rows, got {}", xs.len())));
        }
        xs.iter()
            .map(|row| {
                row.as_array()
                    .map(|r| r.to_vec())
                    .ok_or_else(|| c.error(format!("expected an array, got {}", row.describe())))
            })
            .collect()
    };
    let a = tile(0, fragments::GROUP_M)?;
    let b = tile(1, K)?;
    let acc = tile(2, fragments::GROUP_WARPS)?;
    let acc: Vec<Vec<Vec<Vec<Value>>>> = acc
        .iter()
        .map(|warp| {
            warp.iter()
                .map(|lane| {
                    lane.as_array()
                        .ok_or_else(|| {
                            c.error(format!("expected an array, got {}", lane.describe()))
                        })?
                        .iter()
                        .map(|chunk| {
                            chunk.as_array().map(|e| e.to_vec()).ok_or_else(|| {
                                c.error(format!("expected an array, got {}", chunk.describe()))
                            })
                        })
                        .collect::<R<Vec<_>>>()
                })
                .collect::<R<Vec<_>>>()
        })
        .collect::<R<Vec<_>>>()?;
    let chunks = b.first().map_or(0, |r| r.len() / N);
    let all = a
        .iter()
        .chain(&b)
        .flatten()
        .chain(acc.iter().flatten().flatten().flatten());
    let failed = all.clone().find_map(|x| x.failure().cloned());
    let group = |f: &dyn Fn(usize, usize, usize, usize) -> Value| {
        Value::array(
            (0..fragments::GROUP_WARPS)
                .map(|w| {
                    Value::array(
                        (0..LANES)
                            .map(|l| {
                                Value::array(
                                    (0..chunks)
                                        .map(|j| {
                                            Value::array(
                                                (0..C_PER_LANE).map(|i| f(w, l, j, i)).collect(),
                                            )
                                        })
                                        .collect(),
                                )
                            })
                            .collect(),
                    )
                })
                .collect(),
        )
    };
    if let Some(err) = failed {
        return Ok(group(&|_, _, _, _| Value::Failed(err.clone())));
    }
    let value = |x: &Value, halves: bool| -> R<f64> {
        let s = scalar(c, x)?;
        let ok = if halves {
            matches!(s.ty(), ScalarType::F16 | ScalarType::Bf16)
        } else {
            s.ty() == ScalarType::F32
        };
        if !ok {
            return Err(c.error(format!(
                "the {} must be {}, found {}",
                if halves {
                    "tiles' elements"
                } else {
                    "accumulator"
                },
                if halves { "f16 or bf16" } else { "f32" },
                s.ty().name()
            )));
        }
        Ok(s.as_f64())
    };
    let ta = a
        .iter()
        .map(|r| r.iter().map(|x| value(x, true)).collect::<R<Vec<f64>>>())
        .collect::<R<Vec<_>>>()?;
    let tb = b
        .iter()
        .map(|r| r.iter().map(|x| value(x, true)).collect::<R<Vec<f64>>>())
        .collect::<R<Vec<_>>>()?;
    let mut tc = vec![vec![0.0f64; chunks * N]; fragments::GROUP_M];
    for (w, warp) in acc.iter().enumerate() {
        for (l, lane) in warp.iter().enumerate() {
            for (j, chunk) in lane.iter().enumerate() {
                for (i, x) in chunk.iter().enumerate() {
                    let (r, n) = fragments::group_c_element(w, l, j, i);
                    tc[r][n] = value(x, false)?;
                }
            }
        }
    }
    Ok(group(&|w, l, j, i| {
        let (r, n) = fragments::group_c_element(w, l, j, i);
        Value::f32(exact_sum(tc[r][n], (0..K).map(|k| ta[r][k] * tb[k][n])))
    }))
}
