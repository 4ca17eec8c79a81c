//! C types of DPIA data, and the typedefs they need.
//!
//! Scalars map to C scalars (`f32` float, `f64` double, `int` int, `i8..i64`
//! `int8_t..int64_t`, `u8..u64` `uint8_t..uint64_t`, `bool` bool; `idx[n]` is the
//! index type, `natType` a 64-bit integer on every target). A vector `vec[t, n]` is a GCC vector typedef named
//! after its element and lane count (`float4`, `int8x16`); its unaligned twin
//! (`float4_u`: element alignment, `may_alias`) serves loads and stores at any
//! element address. A pair of flat data is a struct named by its components
//! in prefix order (`pair_float_float`, `pair_float4_pair_int_int`), which is
//! unambiguous. Typedefs are registered once, components first. On GPUs a vector
//! is the dialect's builtin vector type; the printer's dialect table names vectors.

use std::collections::{BTreeSet, HashMap};

use rise::{DataType, ScalarType};

use crate::ast::{Param, Scalar, Type, TypeDef, Unit};
use crate::error::{malformed, unsupported, CodegenError};
use crate::layout::{is_flat, show_type, unresolved};
use crate::names::NameSet;
use crate::print::dialect::Dialect;
use crate::print::{print_in, type_name_in};
use crate::Target;

/// The C scalar of a RISE scalar type.
pub fn scalar(s: ScalarType) -> Result<Scalar, CodegenError> {
    Ok(match s {
        ScalarType::Bool => Scalar::Bool,
        ScalarType::Int => Scalar::Int,
        ScalarType::I8 => Scalar::I8,
        ScalarType::I16 => Scalar::I16,
        ScalarType::I32 => Scalar::I32,
        ScalarType::I64 => Scalar::I64,
        ScalarType::U8 => Scalar::U8,
        ScalarType::U16 => Scalar::U16,
        ScalarType::U32 => Scalar::U32,
        ScalarType::U64 => Scalar::U64,
        ScalarType::F32 => Scalar::Float,
        ScalarType::F64 => Scalar::Double,
        ScalarType::F16 => Scalar::F16,
        ScalarType::Bf16 => Scalar::Bf16,
    })
}

/// The C scalar of a scalar-like data type (`idx[n]` is an index, `natType` a 64-bit
/// integer: its values are data, not extents).
pub fn scalar_of(dt: &DataType) -> Result<Option<Scalar>, CodegenError> {
    Ok(match dt {
        DataType::Scalar(s) => Some(scalar(*s)?),
        DataType::NatType => Some(Scalar::Nat),
        DataType::Index(_) => Some(Scalar::Index),
        _ => None,
    })
}

/// The typedefs of a module, in dependency order.
#[derive(Debug, Default)]
pub struct Types {
    defs: Vec<TypeDef>,
    by_type: HashMap<DataType, String>,
    unaligned: HashMap<DataType, String>,
    /// Generating OpenCL or CUDA: vectors are the dialect's builtin vector
    /// types (`float4`, `int2`), which need no typedef.
    target: Target,
    /// The builtin vector types used so far (element, lanes).
    builtin: BTreeSet<(Scalar, u32)>,
}

impl Types {
    /// The typedefs registered so far, components first.
    pub fn into_defs(self) -> Vec<TypeDef> {
        self.defs
    }

    /// The typedefs registered so far.
    pub fn defs(&self) -> &[TypeDef] {
        &self.defs
    }

    /// Types for OpenCL or CUDA: vectors are the dialect's builtin vector types.
    pub fn for_gpu(target: Target) -> Types {
        Types {
            target,
            ..Types::default()
        }
    }

    /// The builtin GPU vector types used so far (element and lane count), in order.
    pub fn builtin_vectors(&self) -> impl Iterator<Item = (Scalar, u32)> + '_ {
        self.builtin.iter().copied()
    }

    /// The C type of a value of flat data type `dt` (scalar, vector, pair of such).
    pub fn value_type(&mut self, dt: &DataType, names: &mut NameSet) -> Result<Type, CodegenError> {
        if let Some(s) = scalar_of(dt)? {
            return Ok(Type::Scalar(s));
        }
        if let Some(name) = self.by_type.get(dt) {
            return Ok(Type::Named(name.clone()));
        }
        if let (Target::Cuda, Some((_, lanes))) = (self.target, moved_half_vector(dt)) {
            let name = cuda_half_vector(lanes).to_string();
            self.by_type.insert(dt.clone(), name.clone());
            return Ok(Type::Named(name));
        }
        let def = match dt {
            DataType::Vector(..) if self.target.is_gpu() => {
                let (elem, lanes) = vector_elem_lanes(dt)?;
                let name = Dialect::of(self.target).builtin_vector(elem, lanes, dt)?;
                names.reserve(&name);
                // `i32` and `int` are both `int` on GPUs
                let elem = if elem == Scalar::I32 {
                    Scalar::Int
                } else {
                    elem
                };
                self.builtin.insert((elem, lanes));
                self.by_type.insert(dt.clone(), name.clone());
                return Ok(Type::Named(name));
            }
            DataType::Vector(..) => {
                let (elem, lanes) = vector_shape(dt)?;
                TypeDef::Vector {
                    name: names.own(&Dialect::typedef_vector(elem, lanes)),
                    elem,
                    lanes,
                    unaligned: false,
                }
            }
            DataType::Pair(a, b) if is_flat(dt) => {
                let (ta, tb) = (self.value_type(a, names)?, self.value_type(b, names)?);
                let wanted = format!("pair_{}_{}", short(&ta), short(&tb));
                TypeDef::Struct {
                    name: names.own(&wanted),
                    fields: vec![
                        Param {
                            ty: ta,
                            name: "fst".into(),
                        },
                        Param {
                            ty: tb,
                            name: "snd".into(),
                        },
                    ],
                }
            }
            DataType::Var(_) | DataType::NatToDataApp(..) => return unresolved(dt),
            _ => {
                return malformed(format!(
                    "data of type {} is not a single C value (arrays, and pairs holding arrays, \
                     are copied element by element)",
                    show_type(dt)
                ))
            }
        };
        let name = def.name().to_string();
        self.defs.push(def);
        self.by_type.insert(dt.clone(), name.clone());
        Ok(Type::Named(name))
    }

    /// The unaligned, aliasing twin of a vector type, for loads and stores
    /// at element addresses (`float4_u`).
    pub fn unaligned_vector(
        &mut self,
        dt: &DataType,
        names: &mut NameSet,
    ) -> Result<Type, CodegenError> {
        if let Some(name) = self.unaligned.get(dt) {
            return Ok(Type::Named(name.clone()));
        }
        if self.target.is_gpu() {
            return malformed(format!(
                "an unaligned GCC vector type for {} in GPU code",
                show_type(dt)
            ));
        }
        let (elem, lanes) = vector_shape(dt)?;
        let name = names.own(&format!("{}_u", Dialect::typedef_vector(elem, lanes)));
        self.defs.push(TypeDef::Vector {
            name: name.clone(),
            elem,
            lanes,
            unaligned: true,
        });
        self.unaligned.insert(dt.clone(), name.clone());
        Ok(Type::Named(name))
    }
}

/// How generated code in `target` spells the flat data types `elems` (scalars, vectors,
/// pairs of such): the C type of each, and the source that defines them (the typedefs, after
/// the index typedef on GPUs). The source needs `stdint.h` and `stdbool.h` in C, and the
/// builtin vector types of OpenCL C or CUDA on GPUs.
pub fn spell(elems: &[DataType], target: Target) -> Result<(Vec<String>, String), CodegenError> {
    let mut names = NameSet::default();
    let mut types = if target.is_gpu() {
        Types::for_gpu(target)
    } else {
        Types::default()
    };
    let spelled = elems
        .iter()
        .map(|t| Ok(type_name_in(&types.value_type(t, &mut names)?, target)))
        .collect::<Result<Vec<_>, CodegenError>>()?;
    let unit = Unit {
        header: String::new(),
        includes: Vec::new(),
        preamble: Vec::new(),
        typedefs: types.into_defs(),
        functions: Vec::new(),
    };
    Ok((spelled, print_in(&unit, target)))
}

/// Element and lane count of a vector type that GCC vector extensions can express.
pub fn vector_shape(dt: &DataType) -> Result<(Scalar, u32), CodegenError> {
    let (elem, lanes) = vector_elem_lanes(dt)?;
    if !lanes.is_power_of_two() {
        return unsupported(format!(
            "{}: GCC vector extensions need a power-of-two number of lanes",
            show_type(dt)
        ));
    }
    Ok((elem, lanes))
}

/// A vector of 2, 4 or 8 16-bit floats: in CUDA it is moved whole (loaded, stored, copied:
/// `unsigned`, `uint2`, `uint4` of the same 4, 8 or 16 bytes) and its lanes are read one by
/// one; it is never computed with (16-bit floats are computed one value at a time). The
/// element type and the lanes, `None` for other types.
pub fn moved_half_vector(dt: &DataType) -> Option<(Scalar, u32)> {
    let DataType::Vector(n, t) = dt else {
        return None;
    };
    let elem = scalar_of(t).ok()??;
    let lanes = u32::try_from(n.as_cst()?).ok()?;
    (elem.is_half() && matches!(lanes, 2 | 4 | 8)).then_some((elem, lanes))
}

/// The CUDA type moving a vector of `lanes` 16-bit floats ([`moved_half_vector`]).
fn cuda_half_vector(lanes: u32) -> &'static str {
    match lanes {
        2 => "unsigned",
        4 => "uint2",
        _ => "uint4",
    }
}

/// Element and constant lane count of a vector type of numbers.
pub fn vector_elem_lanes(dt: &DataType) -> Result<(Scalar, u32), CodegenError> {
    let DataType::Vector(n, t) = dt else {
        return malformed(format!("{} is not a vector type", show_type(dt)));
    };
    let elem = match scalar_of(t)? {
        Some(Scalar::Bool) | None => {
            return unsupported(format!(
                "vectors of {} (vector elements must be numbers)",
                show_type(t)
            ))
        }
        Some(s) if s.is_half() => {
            return unsupported(format!(
                "vectors of {} here (16-bit floats are computed one value at a time: use an \
                 array; CUDA moves vectors of 2, 4 or 8 of them whole, without computing)",
                show_type(t)
            ))
        }
        Some(s) => s,
    };
    Ok((elem, lane_count(n, dt)?))
}

/// The constant lane count `n` of a vector type.
pub fn lane_count(n: &arith::Nat, dt: &DataType) -> Result<u32, CodegenError> {
    match n.as_cst().and_then(|c| u32::try_from(c).ok()) {
        Some(c) if c > 0 => Ok(c),
        _ => unsupported(format!(
            "{}: the number of vector lanes must be a positive constant",
            show_type(dt)
        )),
    }
}

/// A C value type as a part of a typedef name.
fn short(t: &Type) -> String {
    match t {
        Type::Scalar(s) => s.c_name().trim_end_matches("_t").to_string(),
        Type::Named(n) => n.clone(),
        Type::Void | Type::Pointer { .. } => "x".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn typedef_names_are_deterministic() {
        let mut names = NameSet::default();
        let mut types = Types::default();
        let v4 = DataType::vector(DataType::f32(), 4);
        let i8v = DataType::vector(DataType::Scalar(ScalarType::I8), 16);
        let p = DataType::pair(
            v4.clone(),
            DataType::pair(DataType::NatType, DataType::f32()),
        );
        assert_eq!(
            types.value_type(&v4, &mut names).unwrap(),
            Type::Named("float4".into())
        );
        assert_eq!(
            types.value_type(&i8v, &mut names).unwrap(),
            Type::Named("int8x16".into())
        );
        assert_eq!(
            types.value_type(&p, &mut names).unwrap(),
            Type::Named("pair_float4_pair_int64_float".into())
        );
        assert_eq!(
            types.unaligned_vector(&v4, &mut names).unwrap(),
            Type::Named("float4_u".into())
        );
        let names_in_order: Vec<&str> = types.defs.iter().map(TypeDef::name).collect();
        assert_eq!(
            names_in_order,
            [
                "float4",
                "int8x16",
                "pair_int64_float",
                "pair_float4_pair_int64_float",
                "float4_u"
            ]
        );
    }

    #[test]
    fn gpu_vectors_are_builtin_types() {
        let mut names = NameSet::default();
        let mut types = Types::for_gpu(Target::Cuda);
        let v4 = DataType::vector(DataType::f32(), 4);
        let i2 = DataType::vector(DataType::Scalar(ScalarType::I32), 2);
        assert_eq!(
            types.value_type(&v4, &mut names).unwrap(),
            Type::Named("float4".into())
        );
        assert_eq!(
            types.value_type(&i2, &mut names).unwrap(),
            Type::Named("int2".into())
        );
        assert!(types.defs().is_empty());
        assert!(types.unaligned_vector(&v4, &mut names).is_err());
        let f8 = DataType::vector(DataType::f32(), 8);
        let err = types.value_type(&f8, &mut names).unwrap_err().to_string();
        assert!(err.contains("no `float8`"), "{err}");
        let mut cl = Types::for_gpu(Target::OpenCl);
        assert_eq!(
            cl.value_type(&f8, &mut names).unwrap(),
            Type::Named("float8".into())
        );
        let u8v = DataType::vector(DataType::Scalar(ScalarType::U8), 4);
        assert!(cl.value_type(&u8v, &mut names).is_err());
    }

    #[test]
    fn unsupported_types_are_errors() {
        let mut names = NameSet::default();
        let mut types = Types::default();
        let f16 = DataType::Scalar(ScalarType::F16);
        assert_eq!(
            types.value_type(&f16, &mut names).unwrap(),
            Type::Scalar(Scalar::F16)
        );
        let bf16x4 = DataType::vector(DataType::Scalar(ScalarType::Bf16), 4);
        assert!(types
            .value_type(&bf16x4, &mut names)
            .unwrap_err()
            .to_string()
            .contains("vectors of bf16"));
        let v3 = DataType::vector(DataType::f32(), 3);
        assert!(types
            .value_type(&v3, &mut names)
            .unwrap_err()
            .to_string()
            .contains("power-of-two"));
        let arr = DataType::array(4, DataType::f32());
        assert!(types.value_type(&arr, &mut names).is_err());
    }
}
