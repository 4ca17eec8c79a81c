//! Checking rewrites and derivatives with the interpreter on random inputs
//! (ARCHITECTURE.md, rule 3: everything is checked against the interpreter).

use crate::check::check_program;
use crate::interp::{
    axpy, difference_quotient, dual, eval_program, split_dual, zip_doubles, Value,
};
use crate::random::{random_like, random_value, Rng, ValueShape};
use crate::Program;
use std::time::{Duration, Instant};

/// The most trials one check runs: more is refused (each trial evaluates the
/// program, and for derivatives its finite differences, up to
/// [`crate::interp::DEFAULT_FUEL`] steps each). At the ~10 µs a trial of the
/// examples' simplifications takes, the limit runs in about a second; a
/// gradient check of the tanh layer takes about 1 ms a trial.
pub const MAX_TRIALS: usize = 100_000;

/// How long one check runs at most: once this much time has passed, no new
/// trial starts and the result says so ([`Checked::timed_out`]), so that a
/// program whose every evaluation is slow cannot keep a check running for
/// hours within [`MAX_TRIALS`].
pub const TIME_LIMIT: Duration = Duration::from_secs(60);

/// The shape of the random inputs of trial `t`: in odd trials every array has
/// the same length (so that, say, a matrix product's operands always fit), in
/// even ones lengths are drawn independently.
pub fn trial_shape(t: usize, rng: &mut Rng) -> ValueShape {
    let shape = ValueShape::default();
    if t % 2 == 1 {
        let n = rng.between(shape.min_len as i64, shape.max_len as i64) as usize;
        ValueShape {
            min_len: n,
            max_len: n,
            ..shape
        }
    } else {
        shape
    }
}

/// Random inputs for a program (`None` if an input has a function type).
pub fn random_inputs(p: &Program, rng: &mut Rng, shape: &ValueShape) -> Option<Vec<Value>> {
    p.inputs
        .iter()
        .map(|i| random_value(&i.ty, rng, shape))
        .collect()
}

/// Random inputs for one trial of a check.
fn trial_inputs(p: &Program, rng: &mut Rng, shape: &ValueShape) -> Result<Vec<Value>, String> {
    random_inputs(p, rng, shape)
        .ok_or_else(|| "cannot generate random values for function-typed inputs".to_string())
}

/// What a check found.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Checked {
    /// Inputs on which the results were compared.
    pub compared: usize,
    /// Inputs on which the original program failed (nothing to compare).
    pub skipped: usize,
    /// Whether the check stopped at [`TIME_LIMIT`] before running every trial
    /// asked for.
    pub timed_out: bool,
}

/// Runs `trial` `trials` times (at most [`MAX_TRIALS`]; more is an error),
/// starting no trial after `limit` has passed since the first.
fn run_trials(
    trials: usize,
    limit: Duration,
    mut trial: impl FnMut(&mut Checked) -> Result<(), String>,
) -> Result<Checked, String> {
    if trials > MAX_TRIALS {
        return Err(format!(
            "{trials} random trials asked; a check runs at most {MAX_TRIALS}"
        ));
    }
    let start = Instant::now();
    let mut checked = Checked::default();
    for t in 0..trials {
        if t > 0 && start.elapsed() >= limit {
            checked.timed_out = true;
            break;
        }
        trial(&mut checked)?;
    }
    Ok(checked)
}

/// Checks that `after` computes what `before` computes on `trials` random
/// inputs (drawn from `seed`): wherever `before` evaluates without error,
/// `after` must give an equal value (within `tolerance`, relative, if given).
pub fn check_equivalent(
    before: &Program,
    after: &Program,
    trials: usize,
    seed: u64,
    tolerance: Option<f64>,
) -> Result<Checked, String> {
    if before
        .inputs
        .iter()
        .map(|i| (&i.name, &i.ty))
        .ne(after.inputs.iter().map(|i| (&i.name, &i.ty)))
    {
        return Err("the two programs have different inputs".into());
    }
    let mut rng = Rng::new(seed);
    let shape = ValueShape::default();
    run_trials(trials, TIME_LIMIT, |checked| {
        let inputs = trial_inputs(before, &mut rng, &shape)?;
        let Ok(expected) = eval_program(before, &inputs) else {
            checked.skipped += 1;
            return Ok(());
        };
        match eval_program(after, &inputs) {
            Ok(v) if v.equals(&expected, tolerance) => {
                checked.compared += 1;
                Ok(())
            }
            Ok(v) => Err(format!(
                "different results on inputs {}: {expected} before, {v} after",
                show_inputs(before, &inputs)
            )),
            Err(e) => Err(format!(
                "the rewritten program fails on inputs {} (the original gives {expected}): {e}",
                show_inputs(before, &inputs)
            )),
        }
    })
}

fn show_inputs(p: &Program, inputs: &[Value]) -> String {
    p.inputs
        .iter()
        .zip(inputs)
        .map(|(i, v)| format!("{} = {v}", i.name))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Checks a differentiated program `dp` (from [`crate::diff_program`] of `p`,
/// possibly simplified) on `trials` random points `x` and directions `dx`: its
/// primal part must equal `p(x)` and its tangent part must match the central
/// finite differences `(p(x + h·dx) - p(x - h·dx)) / 2h` (extrapolated from
/// two step sizes) within `tolerance`. Points where the two step sizes give
/// clearly different slopes (the program is not smooth there) are skipped.
pub fn check_derivative(
    p: &Program,
    dp: &Program,
    trials: usize,
    seed: u64,
    tolerance: f64,
) -> Result<Checked, String> {
    let out = check_program(p).map_err(|d| d.message)?;
    let mut rng = Rng::new(seed);
    let shape = ValueShape::default();
    run_trials(trials, TIME_LIMIT, |checked| {
        let x = trial_inputs(p, &mut rng, &shape)?;
        let dx: Vec<Value> = x.iter().map(|v| random_like(v, &mut rng, 1.0)).collect();
        let Ok(fx) = eval_program(p, &x) else {
            checked.skipped += 1;
            return Ok(());
        };
        let duals: Option<Vec<Value>> = p
            .inputs
            .iter()
            .zip(x.iter().zip(&dx))
            .map(|(i, (x, d))| dual(&i.ty, x, d))
            .collect();
        let duals = duals.ok_or("cannot pair the inputs with tangents")?;
        let r = eval_program(dp, &duals)
            .map_err(|e| format!("the derivative fails on inputs {}: {e}", show_inputs(p, &x)))?;
        let (Some(primal), Some(tangent)) =
            (split_dual(&out, &r, true), split_dual(&out, &r, false))
        else {
            return Err(format!(
                "the derivative's result {r} is not a dual of type `{out}`"
            ));
        };
        if !primal.equals(&fx, Some(1e-9)) {
            return Err(format!(
                "the derivative's value part {primal} differs from the program's {fx} on inputs {}",
                show_inputs(p, &x)
            ));
        }
        let Some(fd) = extrapolated_difference(p, &x, &dx) else {
            checked.skipped += 1;
            return Ok(());
        };
        if !tangent.equals(&fd, Some(tolerance)) {
            return Err(format!(
                "the tangent {tangent} differs from the finite difference {fd} on inputs {} in direction {}",
                show_inputs(p, &x),
                show_inputs(p, &dx)
            ));
        }
        checked.compared += 1;
        Ok(())
    })
}

/// The derivative of `p` at `x` in direction `dx` by central differences with
/// steps `h` and `h/2`, combined by Richardson extrapolation (truncation error
/// O(h⁴)); `None` where an evaluation fails or the two disagree (the program
/// is not smooth near `x`: a branch on a `Double` flips within the step).
fn extrapolated_difference(p: &Program, x: &[Value], dx: &[Value]) -> Option<Value> {
    let h = 1e-4;
    let coarse = central_difference(p, x, dx, h)?;
    let fine = central_difference(p, x, dx, h / 2.0)?;
    if !fine.equals(&coarse, Some(1e-3)) {
        return None;
    }
    Some(zip_doubles(&fine, &coarse, &|f, c| (4.0 * f - c) / 3.0))
}

/// `(p(x + h·dx) - p(x - h·dx)) / 2h`, if both evaluations succeed.
fn central_difference(p: &Program, x: &[Value], dx: &[Value], h: f64) -> Option<Value> {
    let plus: Vec<Value> = x.iter().zip(dx).map(|(x, d)| axpy(x, h, d)).collect();
    let minus: Vec<Value> = x.iter().zip(dx).map(|(x, d)| axpy(x, -h, d)).collect();
    let (fp, fm) = (eval_program(p, &plus).ok()?, eval_program(p, &minus).ok()?);
    Some(difference_quotient(&fp, &fm, 2.0 * h))
}

/// Checks a gradient program `g` (from [`crate::gradient_program`] of `p`
/// with respect to the `Vector` input `wrt`, or a `grad` construct, possibly
/// simplified) on `trials` random points: component `k` must match the
/// central finite difference of `p` in the direction of the `k`-th unit
/// vector of `wrt` (Richardson extrapolated) within `tolerance`. Points where
/// `p` fails or is not smooth are skipped. See [`check_partials`].
pub fn check_gradient(
    p: &Program,
    g: &Program,
    wrt: &str,
    trials: usize,
    seed: u64,
    tolerance: f64,
) -> Result<Checked, String> {
    check_partials(p, g, wrt, trials, seed, tolerance)
}

/// Checks a program `d` of partial derivatives of `p` with respect to its
/// input `wrt` against central finite differences of `p` (Richardson
/// extrapolated) on `trials` random points:
///
/// * `wrt : Double`: `d` is the derivative of `p`'s result (`deriv`);
/// * `wrt : Vector`, `p` a `Double`: `d[k]` is the derivative along the
///   `k`-th unit vector (the gradient, `grad`);
/// * `wrt : Vector`, `p` a `Vector`: `d[i][k]` is the derivative of
///   component `i` along the `k`-th unit vector (the Jacobian, `jacob`).
///
/// Points where `p` fails or is not smooth are skipped.
pub fn check_partials(
    p: &Program,
    d: &Program,
    wrt: &str,
    trials: usize,
    seed: u64,
    tolerance: f64,
) -> Result<Checked, String> {
    let which = p
        .inputs
        .iter()
        .position(|i| i.name.as_ref() == wrt)
        .ok_or_else(|| format!("the program has no input `{wrt}`"))?;
    let mut rng = Rng::new(seed);
    let shape = ValueShape::default();
    run_trials(trials, TIME_LIMIT, |checked| {
        let x = trial_inputs(p, &mut rng, &shape)?;
        if eval_program(p, &x).is_err() {
            checked.skipped += 1;
            return Ok(());
        }
        let got = eval_program(d, &x).map_err(|e| {
            format!(
                "the derivative program fails on inputs {}: {e}",
                show_inputs(p, &x)
            )
        })?;
        // The directions: the unit vectors of `wrt`, or `wrt` itself plus one.
        let directions = match &x[which] {
            Value::Array(point) => point.len(),
            Value::Double(_) => 1,
            other => {
                return Err(format!(
                    "`{wrt}` = {other} is neither a Double nor a Vector"
                ))
            }
        };
        let mut smooth = true;
        for k in 0..directions {
            let dx: Vec<Value> = x
                .iter()
                .enumerate()
                .map(|(j, v)| {
                    let zero = zip_doubles(v, v, &|_, _| 0.0);
                    match (&zero, j == which) {
                        (Value::Array(z), true) => {
                            let mut e: Vec<Value> = z.to_vec();
                            e[k] = Value::Double(1.0);
                            Value::Array(e.into())
                        }
                        (Value::Double(_), true) => Value::Double(1.0),
                        _ => zero,
                    }
                })
                .collect();
            let Some(fd) = extrapolated_difference(p, &x, &dx) else {
                smooth = false;
                break;
            };
            let part = match (&x[which], &fd) {
                (Value::Double(_), _) => Some(got.clone()),
                (_, Value::Array(_)) => column(&got, k),
                _ => match &got {
                    Value::Array(g) => g.get(k).cloned(),
                    _ => None,
                },
            };
            let Some(part) = part else {
                return Err(format!(
                    "the derivative {got} does not have the shape the finite differences need (direction {k}: {fd})"
                ));
            };
            if !part.equals(&fd, Some(tolerance)) {
                return Err(format!(
                    "the derivative along direction {k} of `{wrt}` is {part}, the finite difference {fd}, on inputs {}",
                    show_inputs(p, &x)
                ));
            }
        }
        if smooth {
            checked.compared += 1;
        } else {
            checked.skipped += 1;
        }
        Ok(())
    })
}

/// Column `k` of a matrix value (`None` if it is not one with that column).
fn column(m: &Value, k: usize) -> Option<Value> {
    let Value::Array(rows) = m else { return None };
    let col: Option<Vec<Value>> = rows
        .iter()
        .map(|r| match r {
            Value::Array(r) => r.get(k).cloned(),
            _ => None,
        })
        .collect();
    Some(Value::Array(col?.into()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trials_are_bounded_in_number_and_time() {
        let count = |trials, limit| {
            run_trials(trials, limit, |c| {
                c.compared += 1;
                Ok(())
            })
        };
        let all = count(MAX_TRIALS, TIME_LIMIT).unwrap();
        assert_eq!((all.compared, all.timed_out), (MAX_TRIALS, false));
        let err = count(MAX_TRIALS + 1, TIME_LIMIT).unwrap_err();
        assert!(err.contains("a check runs at most 100000"), "{err}");
        // Past the time limit no new trial starts, but the first always runs.
        let early = count(10, Duration::ZERO).unwrap();
        assert_eq!((early.compared, early.timed_out), (1, true));
        let p = crate::parse_program("input x : Double\nx + 1.0").unwrap();
        assert!(check_equivalent(&p, &p, MAX_TRIALS + 1, 0, None).is_err());
    }
}
