//! Checking a rewrite by interpretation (ARCHITECTURE.md, rule 3): the program
//! before and after, run by the reference interpreter on the same random inputs,
//! must give equal results.

use arith::Nat;
use rise::interp::scalar::Scalar;
use rise::interp::{self, Value};
use rise::{DataType, Expr, ScalarType, Type, TypeArg};
use splitmix::SplitMix64;

/// The generator of the random inputs for `seed` (the shared [`SplitMix64`]; how the seed
/// becomes its state is this module's own).
pub fn seeded_rng(seed: u64) -> SplitMix64 {
    SplitMix64::from_state(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
}

/// The scheme's type with its implicit parameters set to `sizes` (by name);
/// parameters not named get 4.
pub fn instantiate(scheme: &Type, sizes: &[(&str, i64)]) -> Result<Type, String> {
    let mut t = scheme.clone();
    while let Type::DepFun { binder, body, .. } = &t {
        let arg = match binder.kind {
            rise::Kind::Nat => {
                let v = sizes
                    .iter()
                    .find(|(n, _)| **n == *binder.name)
                    .map_or(4, |(_, v)| *v);
                TypeArg::Nat(Nat::cst(v))
            }
            rise::Kind::Data => TypeArg::Data(DataType::Scalar(ScalarType::F32)),
            k => return Err(format!("cannot choose a value for a parameter of kind {k}")),
        };
        t = body.instantiate(binder, &arg);
    }
    Ok(t)
}

/// A random value of a concrete data type: small integers (exact in every
/// arithmetic type), so that reassociated sums compare exactly.
pub fn random_value(t: &DataType, rng: &mut SplitMix64) -> Result<Value, String> {
    Ok(match t {
        DataType::Scalar(s) => {
            let v = rng.range(-4, 4);
            let scalar = match s {
                ScalarType::Bool => Scalar::Bool(v > 0),
                s if s.is_float() => Scalar::from_float(*s, v as f64)?,
                s => Scalar::from_int(*s, v.abs())?,
            };
            Value::scalar(scalar)
        }
        DataType::Array(n, elem) => {
            let n = n
                .as_cst()
                .ok_or_else(|| format!("the size {n} is not a constant"))?;
            let elems = (0..n)
                .map(|_| random_value(elem, rng))
                .collect::<Result<Vec<_>, _>>()?;
            Value::array(elems)
        }
        DataType::Pair(a, b) => Value::pair(random_value(a, rng)?, random_value(b, rng)?),
        DataType::Vector(n, elem) => {
            let n = n
                .as_cst()
                .ok_or_else(|| format!("the size {n} is not a constant"))?;
            let lanes = (0..n)
                .map(|_| random_value(elem, rng))
                .collect::<Result<Vec<_>, _>>()?;
            Value::vector(lanes)
        }
        DataType::Index(n) => {
            let n = n
                .as_cst()
                .ok_or_else(|| format!("the size {n} is not a constant"))?;
            Value::Index {
                index: rng.range(0, (n - 1).max(0)),
                bound: n,
            }
        }
        other => return Err(format!("cannot generate values of type {other}")),
    })
}

/// A random value of a concrete data type whose floats have fractional parts: thousandths
/// in [-1, 1], rounded to their type (for f16 and bf16, every bit of the mantissa in use),
/// so that a reassociated float sum rounds differently (what the verification tolerance
/// covers); other scalars as [`random_value`] draws them.
pub fn random_fraction(t: &DataType, rng: &mut SplitMix64) -> Result<Value, String> {
    Ok(match t {
        DataType::Scalar(s) if s.is_float() => {
            let v = rng.range(-1000, 1000) as f64 / 1000.0;
            Value::scalar(Scalar::from_float(*s, v)?)
        }
        DataType::Array(n, elem) => {
            let n = n
                .as_cst()
                .ok_or_else(|| format!("the size {n} is not a constant"))?;
            let elems = (0..n)
                .map(|_| random_fraction(elem, rng))
                .collect::<Result<Vec<_>, _>>()?;
            Value::array(elems)
        }
        other => random_value(other, rng)?,
    })
}

/// Runs `before` and `after` (bodies of a definition whose type scheme is
/// `scheme`, with free size variables) on the same random inputs, with the sizes
/// set to `sizes`. `Ok(())` when the results are equal.
pub fn same_results(
    before: &Expr,
    after: &Expr,
    scheme: &Type,
    sizes: &[(&str, i64)],
    seed: u64,
) -> Result<(), String> {
    let mut rng = seeded_rng(seed);
    let inputs = parameters(scheme, sizes)?
        .iter()
        .map(|p| random_value(p, &mut rng))
        .collect::<Result<Vec<_>, _>>()?;
    same_results_on(before, after, &inputs, sizes)
}

/// The data types of the parameters of a definition whose type scheme is `scheme`, with
/// the sizes set to `sizes` (by name; 4 for those not named).
pub fn parameters(scheme: &Type, sizes: &[(&str, i64)]) -> Result<Vec<DataType>, String> {
    let t = instantiate(scheme, sizes)?;
    let mut params = Vec::new();
    let mut rest = &t;
    while let Type::Fun(p, r) = rest {
        params.push(p.as_data().ok_or("a parameter is not data")?.clone());
        rest = r;
    }
    Ok(params)
}

/// Runs `before` and `after` on `inputs`, with the sizes set to `sizes`. `Ok(())` when
/// the results are equal within the verification tolerance (relative and absolute
/// 1e-5: a reassociated float sum passes, a wrong element does not).
pub fn same_results_on(
    before: &Expr,
    after: &Expr,
    inputs: &[Value],
    sizes: &[(&str, i64)],
) -> Result<(), String> {
    let run = |e: &Expr| -> Result<Value, String> {
        let f = interp::eval_with_nats(e, sizes).map_err(|e| e.to_string())?;
        if inputs.is_empty() {
            Ok(f)
        } else {
            interp::apply(&f, inputs.to_vec()).map_err(|e| e.to_string())
        }
    };
    let a = run(before).map_err(|e| format!("before: {e}"))?;
    let b = run(after).map_err(|e| format!("after: {e}"))?;
    if a.approx_eq(&b, 1e-5, 1e-5) {
        Ok(())
    } else {
        Err(format!(
            "different results: before {}, after {}",
            a.describe(),
            b.describe()
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Recorded seeds replay: the draws behind the random inputs of a seed. (Until the move to
    /// the shared SplitMix64 this module drew from a xorshift64 generator, whose draws for
    /// seed 1 were 15860402102123842989, 7273575876580499574 and 2; no seed of it was
    /// recorded outside the tests, which check every seed they try.)
    #[test]
    fn recorded_seeds_replay() {
        let mut r = seeded_rng(1);
        let drawn = [r.next_u64(), r.next_u64(), r.range(-4, 4) as u64];
        assert_eq!(drawn, [7960286522194355700, 487617019471545679, 3]);
    }
}
