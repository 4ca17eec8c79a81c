//! The inputs of a run: arrays given or random ones, each fitted to the type of its
//! parameter, the definition instantiated at their types, the values of its sizes (checked
//! against the constraints of the definition as lowered).
//!
//! How a file meets its parameter ([`fit_inputs`]), for a parameter `d1.d2...e` of `k` array
//! dimensions and element type `e`:
//! * `e` a scalar type: a plain array of `k` dimensions of that dtype; `int` takes `int32`
//!   files (numpy has no other name for C's `int`).
//! * `e` a vector of scalars (`n.vec[f32, 4]`): a plain array of `k + 1` dimensions of that
//!   dtype whose last extent is the number of lanes (`n x 4`), as a vector result is written.
//! * `e` a tuple of scalars and vectors (`n.(f32, i32)`, `n.(vec[f32, 4], f32)`, nested tuples
//!   too): a numpy structured array of `k` dimensions whose fields are the tuple's components
//!   in order (their names are free; nested tuples as nested or as flat fields, a vector as a
//!   field of shape `(4,)` or as flat fields), or, when every scalar has one dtype, a plain
//!   array of `k + 1` dimensions whose last extent is the number of scalars of a tuple (`n x 2`
//!   for `n.(f32, f32)`, `n x 5` for `n.(vec[f32, 4], f32)`).
//! * `e` = `idx[n]`: any integer dtype, each value checked to be in `0..n` (`n` known from the
//!   other inputs' shapes or `--nat`); `natType`: any integer dtype, values `>= 0`.
//! * `e` a type variable: the file as it is (a structured array as nested pairs).

use crate::boundary::{self, Array, Leaf};
use crate::npy::{numpy_name, shape_text, Contents, Dtype, MAX_RECORD_LEAVES};
use crate::{limits, Artifact, Error, Phrase, Setting};
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
        Inputs::Random { seed } => random_inputs(&lowered.scheme, nats, seed)?,
        Inputs::Arrays(given) => fit_inputs(&lowered.scheme, def, given, nats)?,
    };
    let types: Vec<DataType> = inputs.iter().map(Array::data_type).collect();
    let instance = instantiate_def(&lowered.checked, def, &types, nats)
        .map_err(|d| lowered.program.error(d))?;
    let (result, sizes) = bind_instance(artifact, &instance, inputs.len(), nats)?;
    Ok(Bound {
        inputs,
        instance,
        result,
        sizes,
    })
}

/// What [`bind`] checks of the definition instantiated at the types of `inputs` inputs and
/// the sizes `nats`: as many inputs as it takes, the constraints of the definition as
/// lowered, a result that is data. The type of the result and the values of the code's
/// sizes, in the order of [`Artifact::sizes`].
pub(crate) fn bind_instance(
    artifact: &Artifact,
    instance: &Instance,
    inputs: usize,
    nats: &[(String, i64)],
) -> Result<(DataType, Vec<i64>), Error> {
    let lowered = &artifact.lowered;
    let def = &lowered.def;
    if instance.params.len() != inputs {
        let counts = format!(
            "`{def}` takes {} inputs, {inputs} given (use ",
            instance.params.len(),
        );
        return Err(Phrase::from(counts)
            .then(Setting::InputArrays)
            .then(" for each, or ")
            .then(Setting::RandomInputs)
            .then(" with a seed)")
            .into());
    }
    check_lowered_sizes(def, &lowered.constraints, instance, nats)?;
    let rise::Type::Data(result) = &instance.result else {
        return Err(format!("the result of `{def}` is not data").into());
    };
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
                    Error::from(
                        Phrase::from(format!("no value for the size `{v}`; give it with "))
                            .then(Setting::Size(v.to_string())),
                    )
                })
        })
        .collect::<Result<Vec<i64>, _>>()?;
    Ok((result.clone(), sizes))
}

/// Random inputs for the value parameters of a definition of type `scheme` (floats in
/// [-1, 1), small integers, indices in their range), every size given in `nats`: the same
/// seed and sizes give the same inputs (`shine run --random` and `shine eval --random`).
pub fn random_inputs(
    scheme: &Type,
    nats: &[(String, i64)],
    seed: u64,
) -> Result<Vec<Array>, Error> {
    let params = random_param_types(scheme, nats)?;
    let mut rng = Lcg::new(seed);
    params.iter().map(|t| random_array(t, &mut rng)).collect()
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

/// The array dimensions of a parameter type and its element (a vector is an element).
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
        let (mut dims, elem) = peel(pattern);
        // a plain file of vectors has one more axis, of the lanes
        if let (DataType::Vector(lanes, _), Dtype::Scalar(_)) = (elem, &g.contents.dtype) {
            dims.push(lanes);
        }
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

/// The sizes of `n`, for a message asking for their values: `n` and `m` as settings, one
/// after the other.
fn sizes_of(n: &Nat) -> Phrase {
    let mut phrase = Phrase::default();
    for (i, v) in n.free_vars().iter().enumerate() {
        if i > 0 {
            phrase = phrase.then(" ");
        }
        phrase = phrase.then(Setting::Size(v.to_string()));
    }
    phrase
}

/// The leaves of a parameter's element type `e` (a vector's lanes each a leaf, their number
/// from `lanes`); an error naming what is no record.
fn wants(
    e: &DataType,
    lanes: &dyn Fn(&Nat) -> Option<i64>,
    out: &mut Vec<Want>,
) -> Result<(), Phrase> {
    match e {
        DataType::Scalar(t) => out.push(Want::Scalar(*t)),
        DataType::Index(n) => out.push(Want::Index(n.clone())),
        DataType::NatType => out.push(Want::Nat),
        DataType::Var(_) => out.push(Want::Any),
        DataType::Pair(a, b) => {
            wants(a, lanes, out)?;
            wants(b, lanes, out)?;
        }
        DataType::Vector(n, t) if is_lane(t) => {
            let k = lanes(n).ok_or_else(|| {
                Phrase::from(format!(
                    "the number of lanes of `{e}` is not known from the inputs' shapes; give it \
                     with "
                ))
                .then(sizes_of(n))
            })?;
            let k = usize::try_from(k)
                .ok()
                .filter(|&k| out.len() + k <= MAX_RECORD_LEAVES)
                .ok_or_else(|| {
                    Phrase::from(format!(
                        "`{e}` has {k} lanes; at most {MAX_RECORD_LEAVES} scalars per element \
                         are supported"
                    ))
                })?;
            for _ in 0..k {
                wants(t, lanes, out)?;
            }
        }
        other => {
            return Err(format!(
                "it holds `{other}`; only arrays of records (scalars, vectors of scalars and \
                 tuples of those) can be given as inputs (not supported yet)"
            )
            .into())
        }
    }
    Ok(())
}

/// Whether `t` can be a lane of a vector parameter: a scalar, an index, a natural or a type
/// variable (the file's dtype).
fn is_lane(t: &DataType) -> bool {
    matches!(
        t,
        DataType::Scalar(_) | DataType::Index(_) | DataType::NatType | DataType::Var(_)
    )
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
/// as nested pairs (two fields per record; a field of shape `(k,)` a vector).
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
            Dtype::Subarray(shape, t) => match shape.as_slice() {
                [k] => Ok(DataType::vector(DataType::Scalar(*t), *k as i64)),
                _ => Err(Error::from(format!(
                    "`{name}` has a field of shape {} (dtype {d}); without a type to fit, a \
                     field of one dimension is a vector, more are not supported",
                    shape_text(shape)
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
    fn error(&self, why: impl Into<Phrase>) -> Error {
        let head = format!(
            "`{}` does not fit parameter {} of `{}` (`{}`): ",
            self.given.name, self.index, self.def, self.pattern
        );
        Error::from(Phrase::from(head).then(why))
    }

    /// The array of the input, whose `data` (taken out of its contents) is converted and
    /// checked in place.
    fn fit(&self, mut data: Vec<Scalar>) -> Result<Array, Error> {
        let (dims, elem) = peel(self.pattern);
        if let DataType::Var(_) = elem {
            return as_given(self.given, data);
        }
        let lanes = |n: &Nat| {
            n.eval(&|v: &arith::Var| self.sizes.get(v.name()).copied())
                .ok()
        };
        let mut want = Vec::new();
        wants(elem, &lanes, &mut want).map_err(|why| {
            self.error(Phrase::from(format!("its elements `{elem}`: ")).then(why))
        })?;
        let c = &self.given.contents;
        let k = dims.len();
        let shape = shape_text(&c.shape);
        let file_leaves = c.dtype.leaves();
        // elements of several scalars: tuples and vectors
        let compound = matches!(elem, DataType::Pair(..) | DataType::Vector(..));
        let tuple = matches!(elem, DataType::Pair(..));
        let n = want.len();
        let outer: Vec<usize> = match &c.dtype {
            Dtype::Scalar(s) if compound => {
                if c.shape.len() != k + 1 || c.shape[k] != n {
                    let given = if tuple && !has_vector(elem) {
                        format!(
                            "an array of {n}-tuples is given as a structured array of {k} \
                             dimension(s) with {n} fields, or as a plain array of {} \
                             dimension(s) whose last extent is {n} (one more axis for the \
                             components)",
                            k + 1
                        )
                    } else if tuple {
                        format!(
                            "an array of `{elem}` is given as a structured array of {k} \
                             dimension(s) whose records hold {n} scalars (a vector as a field \
                             of its lanes), or as a plain array of {} dimension(s) whose last \
                             extent is {n} (one more axis for the scalars of a tuple)",
                            k + 1
                        )
                    } else {
                        format!(
                            "an array of `{elem}` is given as a plain array of {} dimension(s) \
                             whose last extent is {n} (one more axis for the lanes)",
                            k + 1
                        )
                    };
                    return Err(self.error(format!(
                        "it is a plain {} array of shape {shape}; {given}",
                        numpy_name(*s),
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
            Dtype::Record(_) | Dtype::Subarray(..) if !compound => {
                return Err(self.error(format!(
                    "it is a structured array (dtype {}); the parameter's elements are no \
                     tuples or vectors",
                    c.dtype
                )))
            }
            Dtype::Record(_) | Dtype::Subarray(..) => {
                if c.shape.len() != k {
                    return Err(self.error(format!(
                        "it is a structured array of shape {shape}, the parameter takes an \
                         array of {k} dimension(s) of {}",
                        if tuple { "tuples" } else { "vectors" }
                    )));
                }
                if file_leaves.len() != n {
                    let what = match elem {
                        DataType::Pair(..) if !has_vector(elem) => {
                            format!("the tuple has {n} components")
                        }
                        DataType::Pair(..) => format!("`{elem}` holds {n} scalars"),
                        _ => format!("`{elem}` has {n} lanes"),
                    };
                    // fields, or scalars where a field holds several
                    let count = if file_leaves.len() == c.dtype.fields() {
                        format!("have {} fields", file_leaves.len())
                    } else {
                        format!("hold {} scalars", file_leaves.len())
                    };
                    return Err(
                        self.error(format!("its records {count} (dtype {}), {what}", c.dtype,))
                    );
                }
                c.shape.clone()
            }
        };
        // the scalar type of each leaf in the file
        let file_leaf = |j: usize| match &c.dtype {
            Dtype::Scalar(s) => *s,
            _ => file_leaves[j],
        };
        let leaves: Vec<Leaf> = want
            .iter()
            .enumerate()
            .map(|(j, w)| self.leaf(w, file_leaf(j), elem, j))
            .collect::<Result<_, _>>()?;
        let plain = |l: &Leaf| matches!(l, Leaf::Scalar(t) if *t != ScalarType::Int && *t != ScalarType::Bf16);
        if !leaves.iter().all(plain) {
            let compound = compound.then_some(elem);
            for (at, s) in data.iter_mut().enumerate() {
                let j = at % n;
                *s = self.value(leaves[j], *s, (at / n, j), compound, &outer)?;
            }
        }
        Ok(Array {
            elem: concrete(elem, &lanes, &mut leaves.iter()).map_err(|e| self.error(e))?,
            shape: outer,
            data,
        })
    }

    /// Leaf `j` of the parameter's element `elem`, given the file's scalar type there.
    fn leaf(
        &self,
        want: &Want,
        file: ScalarType,
        elem: &DataType,
        j: usize,
    ) -> Result<Leaf, Error> {
        let field = boundary::leaf_place(elem, j);
        let found = format!("{} ({})", numpy_name(file), file.name());
        let integer = file.int_range().is_some();
        match want {
            Want::Any => Ok(Leaf::Scalar(file)),
            Want::Scalar(t) if *t == file => Ok(Leaf::Scalar(*t)),
            Want::Scalar(ScalarType::Int) if file == ScalarType::I32 => {
                Ok(Leaf::Scalar(ScalarType::Int))
            }
            // numpy has no bfloat16: its bit patterns as uint16
            Want::Scalar(ScalarType::Bf16) if file == ScalarType::U16 => {
                Ok(Leaf::Scalar(ScalarType::Bf16))
            }
            Want::Scalar(ScalarType::Bf16) => Err(self.error(format!(
                "{field} must be bf16 (numpy has no bfloat16: its bit patterns as uint16, or \
                 ml_dtypes.bfloat16, which numpy saves as `<V2`), the file has {found}"
            ))),
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
                        self.error(
                            Phrase::from(format!(
                                "the bound of `idx[{n}]` is not known from the other inputs' \
                                 shapes; give it with "
                            ))
                            .then(sizes_of(n)),
                        )
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
        compound: Option<&DataType>,
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
            let component = match compound {
                Some(elem) => format!(" ({})", boundary::leaf_place(elem, j)),
                None => String::new(),
            };
            let index: Vec<String> = index.iter().map(usize::to_string).collect();
            format!("`{}`[{}]{component}", self.given.name, index.join(", "))
        };
        Ok(match leaf {
            Leaf::Scalar(ScalarType::Int) => match s {
                Scalar::I32(x) => Scalar::Int(x),
                s => s,
            },
            Leaf::Scalar(ScalarType::Bf16) => match s {
                Scalar::U16(bits) => Scalar::Bf16(half::bf16::from_bits(bits)),
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
/// index gets its bound, a vector as many lanes as `lanes` says); an error when the lanes of a
/// vector of a type variable have different dtypes in the file.
fn concrete(
    e: &DataType,
    lanes: &dyn Fn(&Nat) -> Option<i64>,
    leaves: &mut std::slice::Iter<'_, Leaf>,
) -> Result<DataType, String> {
    let leaf = |l: Option<&Leaf>| match l {
        Some(Leaf::Scalar(t)) => DataType::Scalar(*t),
        Some(Leaf::Index(n)) => DataType::Index(Nat::cst(*n)),
        Some(Leaf::Nat) | None => DataType::NatType,
    };
    Ok(match e {
        DataType::Pair(a, b) => {
            let a = concrete(a, lanes, leaves)?;
            DataType::pair(a, concrete(b, lanes, leaves)?)
        }
        DataType::Vector(n, t) => {
            let k = lanes(n).and_then(|k| usize::try_from(k).ok()).unwrap_or(0);
            let lanes: Vec<DataType> = leaves.by_ref().take(k).map(|l| leaf(Some(l))).collect();
            if let Some(other) = lanes.iter().find(|t| **t != lanes[0]) {
                return Err(format!(
                    "the lanes of `{e}` have different dtypes in the file (`{}` and `{other}`)",
                    lanes[0]
                ));
            }
            let first = lanes.first().cloned().unwrap_or_else(|| (**t).clone());
            DataType::vector(first, lanes.len() as i64)
        }
        _ => leaf(leaves.next()),
    })
}

/// Whether the record type `e` holds a vector.
fn has_vector(e: &DataType) -> bool {
    match e {
        DataType::Vector(..) => true,
        DataType::Pair(a, b) => has_vector(a) || has_vector(b),
        _ => false,
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
pub(crate) fn random_param_types(
    scheme: &Type,
    nats: &[(String, i64)],
) -> Result<Vec<DataType>, Error> {
    let mut t = scheme.clone();
    while let Type::DepFun { binder, body, .. } = &t {
        let v = nats
            .iter()
            .find(|(n, _)| *n == *binder.name)
            .map(|(_, v)| *v)
            .ok_or_else(|| {
                Error::from(
                    Phrase::from(Setting::RandomInputs)
                        .then(" needs every size: give ")
                        .then(Setting::Size(binder.name.to_string())),
                )
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
        Error::from(
            Phrase::from(format!(
                "cannot make a random input of type `{t}`: {e}; give it with "
            ))
            .then(Setting::InputArrays),
        )
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
