//! The inputs of a run: arrays given or random ones, each fitted to the type of its
//! parameter, the definition instantiated at their types, the values of its sizes (checked
//! against the constraints of the definition as lowered).
//!
//! How a file meets its parameter ([`fit_inputs`]), for a parameter `d1.d2...e` of `k` array
//! dimensions and element type `e`:
//! * `e` a scalar type: a plain array of `k` dimensions of that dtype; `int` takes `int32`
//!   files (numpy has no other name for C's `int`).
//! * `e` a tuple of scalars (`n.(f32, i32)`, nested tuples too): a numpy structured array of
//!   `k` dimensions whose fields are the tuple's components in order (their names are free;
//!   nested tuples as nested or as flat fields), or, when every component has one dtype, a
//!   plain array of `k + 1` dimensions whose last extent is the number of components
//!   (`n x 2` for `n.(f32, f32)`).
//! * `e` = `idx[n]`: any integer dtype, each value checked to be in `0..n` (`n` known from the
//!   other inputs' shapes or `--nat`); `natType`: any integer dtype, values `>= 0`.
//! * `e` a type variable: the file as it is (a structured array as nested pairs).

use crate::boundary::{self, Array, Leaf};
use crate::npy::{numpy_name, Contents, Dtype};
use crate::{limits, Artifact, Error};
use arith::Nat;
use rise::infer::{instantiate_def, Instance};
use rise::interp::{Flat, Scalar};
use rise::{DataType, ScalarType, SizeConstraint, Type};
use std::collections::HashMap;

/// An input as given: its contents and the name errors call it by (the file's path).
#[derive(Clone, Debug)]
pub struct Given {
    /// The name of the input in messages (`x.npy`).
    pub name: String,
    /// The array.
    pub contents: Contents,
}

impl Given {
    /// The input `contents` called `name` in messages.
    pub fn new(name: impl Into<String>, contents: impl Into<Contents>) -> Given {
        Given {
            name: name.into(),
            contents: contents.into(),
        }
    }
}

/// Where the inputs of a run come from.
#[derive(Clone, Debug)]
pub enum Inputs {
    /// These arrays, in the order of the definition's value parameters, each fitted to the
    /// type of its parameter ([`fit_inputs`]).
    Arrays(Vec<Given>),
    /// Random arrays from this seed (floats in [-1, 1), small integers, indices in their
    /// range); every size must be given.
    Random {
        /// The seed; the same seed gives the same inputs.
        seed: u64,
    },
}

/// The inputs of a run bound to a compiled definition.
#[derive(Clone, Debug)]
pub struct Bound {
    /// The inputs, in the order of the definition's value parameters.
    pub inputs: Vec<Array>,
    /// The definition instantiated at the inputs' types.
    pub instance: Instance,
    /// The type of the result.
    pub result: DataType,
    /// The values of the code's sizes, in the order of [`Artifact::sizes`].
    pub sizes: Vec<i64>,
}

/// Makes the inputs of `artifact` (random ones need every size in `nats`), instantiates the
/// definition at their types and the sizes `nats` gives, checks the constraints of the
/// definition as lowered.
pub fn bind(artifact: &Artifact, inputs: Inputs, nats: &[(String, i64)]) -> Result<Bound, Error> {
    let lowered = &artifact.lowered;
    let def = &lowered.def;
    let inputs: Vec<Array> = match inputs {
        Inputs::Random { seed } => {
            let params = random_param_types(&lowered.scheme, nats)?;
            let mut rng = Lcg::new(seed);
            params
                .iter()
                .map(|t| random_array(t, &mut rng))
                .collect::<Result<_, _>>()?
        }
        Inputs::Arrays(given) => fit_inputs(&lowered.scheme, def, given, nats)?,
    };
    let types: Vec<DataType> = inputs.iter().map(Array::data_type).collect();
    let instance = instantiate_def(&lowered.checked, def, &types, nats)
        .map_err(|d| lowered.program.error(d))?;
    if instance.params.len() != inputs.len() {
        return Err(format!(
            "`{def}` takes {} inputs, {} given (use --input for each, or --random SEED)",
            instance.params.len(),
            inputs.len()
        )
        .into());
    }
    check_lowered_sizes(def, &lowered.constraints, &instance, nats)?;
    let rise::Type::Data(result) = &instance.result else {
        return Err(format!("the result of `{def}` is not data").into());
    };
    let result = result.clone();
    let sizes = artifact
        .sizes()
        .iter()
        .map(|v| {
            instance
                .nats
                .iter()
                .find(|(n, _)| **n == *v.name())
                .map(|(_, x)| *x)
                .ok_or_else(|| {
                    Error::from(format!(
                        "no value for the size `{v}`; give it with --nat {v}=V"
                    ))
                })
        })
        .collect::<Result<Vec<i64>, _>>()?;
    Ok(Bound {
        inputs,
        instance,
        result,
        sizes,
    })
}

/// The RISE data type of an array: `shape[0].shape[1]....elem`.
pub fn data_type_of(array: &Flat) -> DataType {
    Array::from(array.clone()).data_type()
}

/// The value parameters of a type scheme (`None` for a parameter that is a function), its
/// size binders left as variables.
fn param_patterns(scheme: &Type) -> Vec<Option<DataType>> {
    let mut t = scheme;
    let mut out = Vec::new();
    loop {
        match t {
            Type::DepFun { body, .. } => t = body,
            Type::Fun(p, r) => {
                out.push(p.as_data().cloned());
                t = r;
            }
            _ => return out,
        }
    }
}

/// The array dimensions of a parameter type and its element.
fn peel(pattern: &DataType) -> (Vec<&Nat>, &DataType) {
    let mut dims = Vec::new();
    let mut t = pattern;
    while let DataType::Array(n, e) = t {
        dims.push(n);
        t = e;
    }
    (dims, t)
}

/// The sizes the inputs' shapes give directly (a dimension `n` of a parameter meets the
/// extent of its file), and those of `nats`.
fn known_sizes(
    patterns: &[Option<DataType>],
    given: &[Given],
    nats: &[(String, i64)],
) -> HashMap<String, i64> {
    let mut sizes: HashMap<String, i64> = nats.iter().cloned().collect();
    for (pattern, g) in patterns.iter().zip(given) {
        let Some(pattern) = pattern else { continue };
        let (dims, _) = peel(pattern);
        for (n, &extent) in dims.iter().zip(&g.contents.shape) {
            if let Some(v) = n.as_var() {
                sizes.entry(v.name().to_string()).or_insert(extent as i64);
            }
        }
    }
    sizes
}

/// What a leaf of a parameter's element type takes.
#[derive(Clone, Debug)]
enum Want {
    Scalar(ScalarType),
    Index(Nat),
    Nat,
    /// A type variable: the file's scalar type.
    Any,
}

/// The leaves of a parameter's element type; the first type that is no leaf or tuple.
fn wants(e: &DataType, out: &mut Vec<Want>) -> Result<(), DataType> {
    match e {
        DataType::Scalar(t) => out.push(Want::Scalar(*t)),
        DataType::Index(n) => out.push(Want::Index(n.clone())),
        DataType::NatType => out.push(Want::Nat),
        DataType::Var(_) => out.push(Want::Any),
        DataType::Pair(a, b) => {
            wants(a, out)?;
            wants(b, out)?;
        }
        other => return Err(other.clone()),
    }
    Ok(())
}

/// Fits the given arrays to the value parameters of the definition `def` of type `scheme`
/// (see the module's documentation); `nats` are the sizes given with `--nat`.
pub fn fit_inputs(
    scheme: &Type,
    def: &str,
    given: Vec<Given>,
    nats: &[(String, i64)],
) -> Result<Vec<Array>, Error> {
    let patterns = param_patterns(scheme);
    let sizes = known_sizes(&patterns, &given, nats);
    given
        .into_iter()
        .enumerate()
        .map(|(i, mut g)| {
            // the data moves into the array, converted in place where it must be
            let data = std::mem::take(&mut g.contents.data);
            match patterns.get(i) {
                Some(Some(p)) => Fitting {
                    def,
                    index: i + 1,
                    pattern: p,
                    given: &g,
                    sizes: &sizes,
                }
                .fit(data),
                _ => as_given(&g, data),
            }
        })
        .collect()
}

/// The array of a file (its `data` taken out) as it is: a plain array, or a structured array
/// as nested pairs (two fields per record).
fn as_given(g: &Given, data: Vec<Scalar>) -> Result<Array, Error> {
    fn elem(d: &Dtype, name: &str) -> Result<DataType, Error> {
        match d {
            Dtype::Scalar(t) => Ok(DataType::Scalar(*t)),
            Dtype::Record(fields) => match fields.as_slice() {
                [(_, a), (_, b)] => Ok(DataType::pair(elem(a, name)?, elem(b, name)?)),
                _ => Err(Error::from(format!(
                    "`{name}` is a structured array of {} fields (dtype {d}); without a \
                     tuple type to fit, each record must have two fields (a pair)",
                    fields.len()
                ))),
            },
        }
    }
    Ok(Array {
        elem: elem(&g.contents.dtype, &g.name)?,
        shape: g.contents.shape.clone(),
        data,
    })
}

/// One input meeting its parameter.
struct Fitting<'a> {
    def: &'a str,
    /// The parameter's position, from 1.
    index: usize,
    pattern: &'a DataType,
    given: &'a Given,
    sizes: &'a HashMap<String, i64>,
}

impl Fitting<'_> {
    /// The error of this input: `x.npy` does not fit parameter 1 of `f` (`n.f32`): ...
    fn error(&self, why: impl std::fmt::Display) -> Error {
        Error::from(format!(
            "`{}` does not fit parameter {} of `{}` (`{}`): {why}",
            self.given.name, self.index, self.def, self.pattern
        ))
    }

    /// The array of the input, whose `data` (taken out of its contents) is converted and
    /// checked in place.
    fn fit(&self, mut data: Vec<Scalar>) -> Result<Array, Error> {
        let (dims, elem) = peel(self.pattern);
        if let DataType::Var(_) = elem {
            return as_given(self.given, data);
        }
        let mut want = Vec::new();
        wants(elem, &mut want).map_err(|inner| {
            self.error(format!(
                "its elements `{elem}` hold `{inner}`; only arrays of scalars and of tuples of \
                 scalars can be given as inputs (not supported yet)"
            ))
        })?;
        let c = &self.given.contents;
        let k = dims.len();
        let shape = shape_text(&c.shape);
        let file_leaves = c.dtype.leaves();
        let tuple = matches!(elem, DataType::Pair(..));
        let n = want.len();
        let outer: Vec<usize> = match &c.dtype {
            Dtype::Scalar(s) if tuple => {
                if c.shape.len() != k + 1 || c.shape[k] != n {
                    return Err(self.error(format!(
                        "it is a plain {} array of shape {shape}; an array of {n}-tuples is \
                         given as a structured array of {k} dimension(s) with {n} fields, or \
                         as a plain array of {} dimension(s) whose last extent is {n} (one \
                         more axis for the components)",
                        numpy_name(*s),
                        k + 1,
                    )));
                }
                c.shape[..k].to_vec()
            }
            Dtype::Scalar(s) => {
                if c.shape.len() != k {
                    return Err(self.error(format!(
                        "it is a {} array of shape {shape}, the parameter takes an array of \
                         {k} dimension(s)",
                        numpy_name(*s)
                    )));
                }
                c.shape.clone()
            }
            Dtype::Record(_) if !tuple => {
                return Err(self.error(format!(
                    "it is a structured array (dtype {}); the parameter's elements are no \
                     tuples",
                    c.dtype
                )))
            }
            Dtype::Record(_) => {
                if c.shape.len() != k {
                    return Err(self.error(format!(
                        "it is a structured array of shape {shape}, the parameter takes an \
                         array of {k} dimension(s) of tuples"
                    )));
                }
                if file_leaves.len() != n {
                    return Err(self.error(format!(
                        "its records have {} fields (dtype {}), the tuple has {n} components",
                        file_leaves.len(),
                        c.dtype,
                    )));
                }
                c.shape.clone()
            }
        };
        // the scalar type of each leaf in the file
        let file_leaf = |j: usize| match &c.dtype {
            Dtype::Scalar(s) => *s,
            Dtype::Record(_) => file_leaves[j],
        };
        let leaves: Vec<Leaf> = want
            .iter()
            .enumerate()
            .map(|(j, w)| self.leaf(w, file_leaf(j), j, tuple))
            .collect::<Result<_, _>>()?;
        let plain = |l: &Leaf| matches!(l, Leaf::Scalar(t) if *t != ScalarType::Int);
        if !leaves.iter().all(plain) {
            for (at, s) in data.iter_mut().enumerate() {
                let j = at % n;
                *s = self.value(leaves[j], *s, (at / n, j), tuple, &outer)?;
            }
        }
        Ok(Array {
            elem: concrete(elem, &mut leaves.iter()),
            shape: outer,
            data,
        })
    }

    /// Leaf `j` of the parameter's element, given the file's scalar type there.
    fn leaf(&self, want: &Want, file: ScalarType, j: usize, tuple: bool) -> Result<Leaf, Error> {
        let field = if tuple {
            format!("component {j} of the tuple")
        } else {
            "the elements".to_string()
        };
        let found = format!("{} ({})", numpy_name(file), file.name());
        let integer = file.int_range().is_some();
        match want {
            Want::Any => Ok(Leaf::Scalar(file)),
            Want::Scalar(t) if *t == file => Ok(Leaf::Scalar(*t)),
            Want::Scalar(ScalarType::Int) if file == ScalarType::I32 => {
                Ok(Leaf::Scalar(ScalarType::Int))
            }
            Want::Scalar(t) => Err(self.error(format!(
                "{field} must be {} (numpy {}), the file has {found}",
                t.name(),
                numpy_name(*t)
            ))),
            Want::Nat if integer => Ok(Leaf::Nat),
            Want::Nat => Err(self.error(format!(
                "{field} must be natType (any integer dtype), the file has {found}"
            ))),
            Want::Index(n) if integer => {
                let bound = n
                    .eval(&|v: &arith::Var| self.sizes.get(v.name()).copied())
                    .map_err(|_| {
                        let vars: Vec<String> = n
                            .free_vars()
                            .iter()
                            .map(|v| format!("--nat {v}=V"))
                            .collect();
                        self.error(format!(
                            "the bound of `idx[{n}]` is not known from the other inputs' \
                             shapes; give it with {}",
                            vars.join(" ")
                        ))
                    })?;
                Ok(Leaf::Index(bound))
            }
            Want::Index(n) => Err(self.error(format!(
                "{field} must be idx[{n}] (any integer dtype), the file has {found}"
            ))),
        }
    }

    /// The scalar held for leaf `j` of element `at` (row-major in `outer`), checked.
    fn value(
        &self,
        leaf: Leaf,
        s: Scalar,
        (at, j): (usize, usize),
        tuple: bool,
        outer: &[usize],
    ) -> Result<Scalar, Error> {
        let place = || {
            let mut index = Vec::with_capacity(outer.len());
            let mut rest = at;
            for &n in outer.iter().rev() {
                index.push(rest % n.max(1));
                rest /= n.max(1);
            }
            index.reverse();
            let component = if tuple {
                format!(" (component {j})")
            } else {
                String::new()
            };
            let index: Vec<String> = index.iter().map(usize::to_string).collect();
            format!("`{}`[{}]{component}", self.given.name, index.join(", "))
        };
        Ok(match leaf {
            Leaf::Scalar(ScalarType::Int) => match s {
                Scalar::I32(x) => Scalar::Int(x),
                s => s,
            },
            Leaf::Scalar(_) => s,
            Leaf::Index(n) => {
                let v = s.as_i128().unwrap_or(-1);
                if v < 0 || v >= n as i128 {
                    return Err(Error::from(format!(
                        "{} is {v}, outside the range 0..{n} of its type `idx[{n}]` \
                         (parameter {} of `{}`)",
                        place(),
                        self.index,
                        self.def
                    )));
                }
                Scalar::I64(v as i64)
            }
            Leaf::Nat => {
                let v = s.as_i128().unwrap_or(-1);
                if !(0..=i64::MAX as i128).contains(&v) {
                    return Err(Error::from(format!(
                        "{} is {v}, not a natural number (parameter {} of `{}` takes natType)",
                        place(),
                        self.index,
                        self.def
                    )));
                }
                Scalar::I64(v as i64)
            }
        })
    }
}

/// `e` with each leaf the next of `leaves` (a variable becomes the file's scalar type, an
/// index gets its bound).
fn concrete(e: &DataType, leaves: &mut std::slice::Iter<'_, Leaf>) -> DataType {
    match e {
        DataType::Pair(a, b) => {
            let a = concrete(a, leaves);
            DataType::pair(a, concrete(b, leaves))
        }
        _ => match leaves.next() {
            Some(Leaf::Scalar(t)) => DataType::Scalar(*t),
            Some(Leaf::Index(n)) => DataType::Index(Nat::cst(*n)),
            Some(Leaf::Nat) | None => DataType::NatType,
        },
    }
}

/// A shape as numpy prints it: `(3,)`, `(2, 3)`, `()`.
fn shape_text(shape: &[usize]) -> String {
    match shape {
        [n] => format!("({n},)"),
        dims => {
            let dims: Vec<String> = dims.iter().map(usize::to_string).collect();
            format!("({})", dims.join(", "))
        }
    }
}

/// Tests the constraints of the lowered definition on the sizes of `instance` and the
/// explicit sizes `nats`, before anything runs.
fn check_lowered_sizes(
    def: &str,
    constraints: &[SizeConstraint],
    instance: &Instance,
    nats: &[(String, i64)],
) -> Result<(), Error> {
    let sizes: Vec<(rise::types::Name, i64)> = instance
        .nats
        .iter()
        .cloned()
        .chain(nats.iter().map(|(n, v)| (n.as_str().into(), *v)))
        .collect();
    rise::constraints::check_all(constraints, &sizes).map_err(|v| {
        Error::from(format!(
            "size constraint of `{def}` as lowered by the strategy does not hold: {v}\n\
             note: the code computes only on sizes that satisfy `{}`",
            v.constraint
        ))
    })
}

/// The parameter types of the scheme with every size given by `nats`.
fn random_param_types(scheme: &Type, nats: &[(String, i64)]) -> Result<Vec<DataType>, Error> {
    let mut t = scheme.clone();
    while let Type::DepFun { binder, body, .. } = &t {
        let v = nats
            .iter()
            .find(|(n, _)| *n == *binder.name)
            .map(|(_, v)| *v)
            .ok_or_else(|| {
                Error::from(format!(
                    "--random needs every size: give `--nat {}=V`",
                    binder.name
                ))
            })?;
        if binder.kind != rise::Kind::Nat {
            return Err(format!(
                "cannot choose a value for `{}: {}`",
                binder.name, binder.kind
            )
            .into());
        }
        t = body.instantiate(binder, &rise::TypeArg::Nat(arith::Nat::cst(v)));
    }
    let mut params = Vec::new();
    while let Type::Fun(p, r) = &t {
        let d = p.as_data().ok_or_else(|| {
            Error::from("a parameter is a function; it cannot be given as data".to_string())
        })?;
        params.push(d.clone());
        t = (**r).clone();
    }
    Ok(params)
}

/// A small deterministic generator (PCG-style LCG), so that random inputs are reproducible.
struct Lcg(u64);

impl Lcg {
    /// The generator one step after `seed`.
    fn new(seed: u64) -> Lcg {
        let mut rng = Lcg(seed);
        rng.next();
        rng
    }

    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        self.0 >> 33
    }

    fn unit(&mut self) -> f64 {
        (self.next() as f64) / ((1u64 << 31) as f64) * 2.0 - 1.0
    }
}

/// A random array of type `t` (arrays of records): floats in [-1, 1), integers in [-4, 4]
/// (unsigned: [0, 4]), indices in their range, naturals in [0, 4].
fn random_array(t: &DataType, rng: &mut Lcg) -> Result<Array, Error> {
    let (shape, elem) = boundary::dims_of(t).map_err(Error::from)?;
    let leaves = boundary::leaves(elem).map_err(|e| {
        Error::from(format!(
            "cannot make a random input of type `{t}`: {e}; give it with --input"
        ))
    })?;
    let mut dims = shape.clone();
    dims.push(leaves.len());
    let count = limits::elements(
        &format!("a random input ({t})"),
        &dims,
        limits::RUN_BYTES_PER_ELEMENT,
    )?;
    let data = (0..count)
        .map(|i| {
            let small = (rng.next() % 9) as i64 - 4;
            let value = match leaves[i % leaves.len()] {
                Leaf::Scalar(ScalarType::F16) => {
                    return Err(Error::from(
                        "f16 inputs are not supported by compiled code".to_string(),
                    ))
                }
                Leaf::Scalar(t) if t.is_float() => Scalar::from_float(t, rng.unit()),
                Leaf::Scalar(ScalarType::Bool) => {
                    Scalar::from_int(ScalarType::Bool, (small > 0) as i64)
                }
                Leaf::Scalar(t) if t.is_unsigned_int() => Scalar::from_int(t, small.abs()),
                Leaf::Scalar(t) => Scalar::from_int(t, small),
                Leaf::Index(n) if n <= 0 => {
                    return Err(Error::from(format!(
                        "a random input of type `{t}` needs an index into {n} elements"
                    )))
                }
                Leaf::Index(n) => Ok(Scalar::I64((rng.next() % n as u64) as i64)),
                Leaf::Nat => Ok(Scalar::I64(small.abs())),
            };
            value.map_err(Error::from)
        })
        .collect::<Result<Vec<_>, Error>>()?;
    Ok(Array {
        elem: elem.clone(),
        shape,
        data,
    })
}
