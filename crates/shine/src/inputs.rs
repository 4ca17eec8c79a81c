//! The inputs of a run: arrays given or random ones, the definition instantiated at their
//! types, the values of its sizes (checked against the constraints of the definition as
//! lowered), and the bytes compiled code reads and writes.

use crate::{limits, Artifact, Error};
use rise::infer::{instantiate_def, Instance};
use rise::interp::{self, Flat, Scalar};
use rise::{DataType, ScalarType, SizeConstraint, Type};

/// Where the inputs of a run come from.
#[derive(Clone, Debug)]
pub enum Inputs {
    /// These arrays, in the order of the definition's value parameters.
    Arrays(Vec<Flat>),
    /// Random arrays from this seed (floats in [-1, 1), small integers); every size must be
    /// given.
    Random {
        /// The seed; the same seed gives the same inputs.
        seed: u64,
    },
}

/// The inputs of a run bound to a compiled definition.
#[derive(Clone, Debug)]
pub struct Bound {
    /// The inputs, in the order of the definition's value parameters.
    pub inputs: Vec<Flat>,
    /// The definition instantiated at the inputs' types.
    pub instance: Instance,
    /// The shape of the result.
    pub shape: Vec<usize>,
    /// The element type of the result.
    pub elem: ScalarType,
    /// The values of the code's sizes, in the order of [`Artifact::sizes`].
    pub sizes: Vec<i64>,
}

/// Makes the inputs of `artifact` (random ones need every size in `nats`), instantiates the
/// definition at their types and the sizes `nats` gives, checks the constraints of the
/// definition as lowered and lays out its result.
pub fn bind(artifact: &Artifact, inputs: Inputs, nats: &[(String, i64)]) -> Result<Bound, Error> {
    let lowered = &artifact.lowered;
    let def = &lowered.def;
    let inputs: Vec<Flat> = match inputs {
        Inputs::Random { seed } => {
            let params = random_param_types(&lowered.scheme, nats)?;
            let mut rng = Lcg::new(seed);
            params
                .iter()
                .map(|t| random_flat(t, &mut rng))
                .collect::<Result<_, _>>()?
        }
        Inputs::Arrays(arrays) => arrays,
    };
    let types: Vec<DataType> = inputs.iter().map(data_type_of).collect();
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
    let rise::Type::Data(result_type) = &instance.result else {
        return Err(format!("the result of `{def}` is not data").into());
    };
    let (shape, elem) = interp::flat_layout(result_type)
        .map_err(|e| format!("cannot lay out the result: {}", e.message))?;
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
        shape,
        elem,
        sizes,
    })
}

/// The RISE data type of an array: `shape[0].shape[1]....elem`.
pub fn data_type_of(array: &Flat) -> DataType {
    array
        .shape
        .iter()
        .rev()
        .fold(DataType::Scalar(array.elem), |t, &n| {
            DataType::array(n as i64, t)
        })
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

/// A random array of type `t`: floats in [-1, 1), integers in [-4, 4] (unsigned: [0, 4]).
fn random_flat(t: &DataType, rng: &mut Lcg) -> Result<Flat, Error> {
    let (shape, elem) = interp::flat_layout(t).map_err(|e| Error::from(e.message))?;
    let count = limits::elements(
        &format!("a random input ({t})"),
        &shape,
        limits::RUN_BYTES_PER_ELEMENT,
    )?;
    let data = (0..count)
        .map(|_| {
            let small = (rng.next() % 9) as i64 - 4;
            if elem == ScalarType::F16 {
                return Err(Error::from(
                    "f16 inputs are not supported by compiled code".to_string(),
                ));
            }
            let value = match elem {
                t if t.is_float() => Scalar::from_float(t, rng.unit()),
                ScalarType::Bool => Scalar::from_int(elem, (small > 0) as i64),
                t if t.is_unsigned_int() => Scalar::from_int(t, small.abs()),
                t => Scalar::from_int(t, small),
            };
            value.map_err(Error::from)
        })
        .collect::<Result<Vec<_>, Error>>()?;
    Ok(Flat { elem, shape, data })
}

/// The bytes of one element of type `t` in compiled code's buffers.
pub(crate) fn byte_size(t: ScalarType) -> Result<usize, Error> {
    match t {
        ScalarType::F16 => Err("f16 data is not supported by compiled code"
            .to_string()
            .into()),
        ScalarType::Bool => Ok(1),
        t => Ok((t.bits() / 8) as usize),
    }
}

/// The bytes of a flat array, as the generated code lays it out.
pub(crate) fn to_buffer(flat: &Flat) -> Result<runtime::Buffer, Error> {
    byte_size(flat.elem)?; // refuses f16
    Ok(runtime::Buffer::from_bytes(&flat.to_ne_bytes()))
}

/// A flat array from the bytes the generated code wrote.
pub(crate) fn from_buffer(
    buf: &runtime::Buffer,
    elem: ScalarType,
    shape: &[usize],
) -> Result<Flat, Error> {
    let size = byte_size(elem)?;
    let data = buf
        .as_bytes()
        .chunks_exact(size)
        .map(|c| {
            let a = |n: usize| -> [u8; 8] {
                let mut b = [0u8; 8];
                b[..n].copy_from_slice(&c[..n]);
                b
            };
            match elem {
                ScalarType::Bool => Scalar::Bool(c[0] != 0),
                ScalarType::Int => Scalar::Int(i32::from_ne_bytes([c[0], c[1], c[2], c[3]])),
                ScalarType::I32 => Scalar::I32(i32::from_ne_bytes([c[0], c[1], c[2], c[3]])),
                ScalarType::I8 => Scalar::I8(c[0] as i8),
                ScalarType::I16 => Scalar::I16(i16::from_ne_bytes([c[0], c[1]])),
                ScalarType::I64 => Scalar::I64(i64::from_ne_bytes(a(8))),
                ScalarType::U8 => Scalar::U8(c[0]),
                ScalarType::U16 => Scalar::U16(u16::from_ne_bytes([c[0], c[1]])),
                ScalarType::U32 => Scalar::U32(u32::from_ne_bytes([c[0], c[1], c[2], c[3]])),
                ScalarType::U64 => Scalar::U64(u64::from_ne_bytes(a(8))),
                ScalarType::F32 => Scalar::F32(f32::from_ne_bytes([c[0], c[1], c[2], c[3]])),
                _ => Scalar::F64(f64::from_ne_bytes(a(8))),
            }
        })
        .collect();
    Ok(Flat {
        elem,
        shape: shape.to_vec(),
        data,
    })
}
