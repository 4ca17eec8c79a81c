//! A test case: a generated definition, a schedule per target, size values and inputs,
//! all reproducible from `(seed, index)`; and its text form (the regression files).

use crate::gen::{Def, Gen};
use crate::rng;
use crate::sched::{self, Target};
use crate::size::VARS;
use crate::ty::{Scalar, Ty};
use splitmix::SplitMix64;

/// One program with its schedules and run sizes.
#[derive(Clone, Debug)]
pub struct Case {
    /// The RISE source of the definition `name`.
    pub program: String,
    /// The definition's name.
    pub name: String,
    /// The size variables the definition declares, with their values.
    pub sizes: Vec<(String, i64)>,
    /// The input types, concrete (sizes replaced by their values), in RISE syntax.
    pub inputs: Vec<String>,
    /// The seed of the input values.
    pub input_seed: u64,
    /// The schedule steps per target.
    pub steps: Vec<(Target, Vec<String>)>,
    /// The generated tree (absent for cases read from files).
    pub def: Option<Def>,
}

const SIZE_VALUES: [i64; 11] = [1, 2, 3, 4, 5, 7, 8, 13, 16, 17, 33];
const MAX_ELEMS: i64 = 6000;

impl Case {
    /// Case `index` of the run with `seed`.
    pub fn generate(seed: u64, index: u64) -> Case {
        let mut rng = rng::for_case(seed, index);
        let def = Gen::def(&mut rng);
        let mut vals = [1i64; 2];
        for _ in 0..20 {
            for v in vals.iter_mut() {
                *v = *rng.pick(&SIZE_VALUES);
            }
            if fits(&def, &vals) {
                break;
            }
            vals = [1, 1];
        }
        let steps = sched::SCHEDULED
            .iter()
            .map(|&t| (t, sched::schedule(&mut rng, t)))
            .collect();
        Case::from_def(def, &vals, rng.next_u64(), steps, &format!("dt{index}z"))
    }

    /// The case of a definition at size values `vals`.
    pub fn from_def(
        def: Def,
        vals: &[i64],
        input_seed: u64,
        steps: Vec<(Target, Vec<String>)>,
        name: &str,
    ) -> Case {
        Case {
            program: def.source(name),
            name: name.to_string(),
            sizes: def
                .vars
                .iter()
                .map(|&v| (VARS[v as usize].to_string(), vals[v as usize]))
                .collect(),
            inputs: def.inputs.iter().map(|(_, t)| concrete(t, vals)).collect(),
            input_seed,
            steps,
            def: Some(def),
        }
    }

    /// The size values, indexed like [`VARS`] (1 where not declared).
    pub fn values(&self) -> [i64; 2] {
        let mut v = [1, 1];
        for (n, x) in &self.sizes {
            if let Some(i) = VARS.iter().position(|m| m == n) {
                v[i] = *x;
            }
        }
        v
    }

    /// The schedule steps for `t`: its own, else those of the target whose schedule it
    /// runs ([`sched::schedule_of`]: OpenCL's for CUDA).
    pub fn steps_for(&self, t: Target) -> &[String] {
        let of = |t: Target| self.steps.iter().find(|(x, _)| *x == t);
        of(t)
            .or_else(|| of(sched::schedule_of(t)))
            .map(|(_, s)| s.as_slice())
            .unwrap_or(&[])
    }

    /// The `.sizes` file: sizes, inputs and the input seed, one `key = value` per line.
    pub fn sizes_file(&self, target: Target) -> String {
        let sizes: Vec<String> = self.sizes.iter().map(|(n, v)| format!("{n}={v}")).collect();
        format!(
            "def = {}\ntarget = {}\nsizes = {}\ninputs = {}\nseed = {}\n",
            self.name,
            target.name(),
            sizes.join(" "),
            self.inputs.join(" ; "),
            self.input_seed
        )
    }

    /// A case from its regression files: the program, the `.elv` (its steps are not needed)
    /// and the `.sizes` text; returns the case and its target.
    pub fn from_files(program: &str, elv: &str, sizes: &str) -> Result<(Case, Target), String> {
        let get = |key: &str| {
            sizes
                .lines()
                .find_map(|l| l.split_once('=').filter(|(k, _)| k.trim() == key))
                .map(|(_, v)| v.trim().to_string())
                .ok_or_else(|| format!("the sizes file has no `{key}`"))
        };
        let target = get("target")?;
        let target =
            sched::parse_target(&target).ok_or_else(|| format!("unknown target `{target}`"))?;
        let nats = get("sizes")?
            .split_whitespace()
            .map(|b| {
                let (n, v) = b.split_once('=').ok_or_else(|| format!("bad size `{b}`"))?;
                Ok((
                    n.to_string(),
                    v.parse().map_err(|e| format!("bad size `{b}`: {e}"))?,
                ))
            })
            .collect::<Result<Vec<_>, String>>()?;
        let inputs = get("inputs")?
            .split(" ; ")
            .filter(|s| !s.trim().is_empty())
            .map(str::to_string)
            .collect();
        Ok((
            Case {
                program: program.to_string(),
                name: get("def")?,
                sizes: nats,
                inputs,
                input_seed: get("seed")?.parse().map_err(|e| format!("bad seed: {e}"))?,
                steps: vec![(target, vec![elv.to_string()])],
                def: None,
            },
            target,
        ))
    }
}

fn fits(def: &Def, vals: &[i64]) -> bool {
    let mut all = vec![&def.body.ty];
    all.extend(def.inputs.iter().map(|(_, t)| t));
    all.iter().all(|t| t.count(vals) <= MAX_ELEMS) && max_node(&def.body, vals) <= MAX_ELEMS
}

fn max_node(n: &crate::ast::Node, vals: &[i64]) -> i64 {
    n.kids
        .iter()
        .map(|k| max_node(k, vals))
        .fold(n.ty.count(vals), i64::max)
}

/// `t` with its sizes evaluated, in RISE syntax.
fn concrete(t: &Ty, vals: &[i64]) -> String {
    match t {
        Ty::S(s) => s.name().to_string(),
        Ty::Idx(n) => format!("idx[{}]", n.eval(vals)),
        Ty::Nat | Ty::Vec(..) => t.to_string(),
        Ty::Arr(n, e) => format!("{}.{}", n.eval(vals), concrete(e, vals)),
        Ty::Pair(a, b) => format!("({}, {})", concrete(a, vals), concrete(b, vals)),
    }
}

/// Random input values for the scalar type `s`: edge values that overflow narrow and wide
/// integers, 64-bit values above 2^32 (which `natType` holds), small values, floats in
/// `[-1, 1)` (sometimes scaled, now and then huge, infinite or NaN).
pub fn random_value(rng: &mut SplitMix64, s: Scalar) -> f64 {
    if s.is_float() {
        return random_float(rng);
    }
    if matches!(s, Scalar::I64 | Scalar::U64) && rng.chance(12) {
        let wide: [f64; 5] = [
            4294967296.0,
            4294967301.0,
            1099511627776.0,
            9.3e18,
            -8589934592.0,
        ];
        let v = *rng.pick(&wide);
        return if s == Scalar::U64 { v.abs() } else { v };
    }
    let max = s.max_literal() as f64;
    let signed = matches!(
        s,
        Scalar::Int | Scalar::I8 | Scalar::I16 | Scalar::I32 | Scalar::I64
    );
    let min = if signed { -max - 1.0 } else { 0.0 };
    match rng.range(0, 9) {
        0 => max,
        1 => min,
        2 => (max / 2.0).floor() + 1.0,
        3 if matches!(s, Scalar::I64 | Scalar::U64) => rng.range(0, i32::MAX as i64) as f64,
        3 => (rng.next_u64() % (max as u64).max(1)) as f64,
        _ if signed => rng.range(-9, 9) as f64,
        _ => rng.range(0, 9) as f64,
    }
}

/// A float input: in `[-1, 1)`, sometimes scaled by 100, now and then beyond the range of
/// 32-bit integers, infinite or NaN (so that casts to integers fail for some elements).
fn random_float(rng: &mut SplitMix64) -> f64 {
    match rng.range(0, 99) {
        0 => f64::NAN,
        1 => f64::INFINITY,
        2 => f64::NEG_INFINITY,
        3 | 4 => rng.float(-1.0, 1.0) * 1e10,
        5..=14 => rng.float(-1.0, 1.0) * 100.0,
        _ => rng.float(-1.0, 1.0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cuda_runs_the_opencl_schedule_and_draws_none_of_its_own() {
        let mut gpu_steps = 0;
        for i in 0..30 {
            let c = Case::generate(7, i);
            let drawn: Vec<Target> = c.steps.iter().map(|(t, _)| *t).collect();
            assert_eq!(drawn, sched::SCHEDULED);
            assert_eq!(c.steps_for(Target::Cuda), c.steps_for(Target::OpenCl));
            gpu_steps += c
                .steps_for(Target::Cuda)
                .iter()
                .filter(|s| s.contains("toMap"))
                .count();
            assert!(c.sizes_file(Target::Cuda).contains("target = cuda\n"));
        }
        assert!(gpu_steps > 0, "no GPU step in 30 cases");
    }

    #[test]
    fn a_cuda_case_reads_back_from_its_files() {
        let c = Case::generate(7, 3);
        let elv = sched::elv(c.steps_for(Target::Cuda));
        let (back, t) = Case::from_files(&c.program, &elv, &c.sizes_file(Target::Cuda))
            .expect("the files read back");
        assert_eq!(t, Target::Cuda);
        assert_eq!(back.steps_for(Target::Cuda), [elv]);
        assert_eq!(
            (back.name, back.sizes, back.inputs),
            (c.name, c.sizes, c.inputs)
        );
    }
}
