//! How DPIA data lives in C memory, and where a path into it lands.
//!
//! A memory identifier of data type `dt` is stored as one or more C objects,
//! its *leaves*:
//! * arrays are flat and row-major: an `n.m.t` identifier read at `[i, j]`
//!   is element `i*m + j` of one C array of `t`;
//! * scalars, vectors and pairs of such ("flat" data) are C values: a pair is
//!   a typedef'd struct with fields `fst` and `snd`, a vector a GCC vector;
//! * a pair that holds an array cannot be a C struct (its size is symbolic),
//!   so its components are stored apart (`x_fst`, `x_snd`), each keeping the
//!   enclosing array dimensions: `n.(m.f32, f32)` is `x_fst` (`n*m` floats)
//!   and `x_snd` (`n` floats).
//!
//! A path (array indices, pair components, vector lanes; outermost first)
//! into the identifier then lands at a [`Place`]: a leaf, a flat index, struct
//! fields and a lane.
//!
//! How one element of a leaf lies in bytes (its size, alignment and C's padding,
//! `idx[n]` as the index type) is [`crate::abi`]'s answer, which every host that
//! fills or reads the buffers shares.

use arith::Nat;
use rise::DataType;

use crate::error::{malformed, unsupported, CodegenError};

pub use dpia::PathElem;

/// One C object of an identifier's storage.
#[derive(Clone, Debug, PartialEq)]
pub struct Leaf {
    /// Appended to the identifier's C name (`""` for a single leaf).
    pub suffix: String,
    /// The number of elements when it is an array (`None`: a single value).
    pub count: Option<Nat>,
    /// The element: scalar, vector, or pair of such.
    pub elem: DataType,
}

/// Where a path into an identifier lands.
#[derive(Clone, Debug, PartialEq)]
pub struct Place {
    /// The leaf's suffix.
    pub leaf: String,
    /// The flat (row-major) index when the leaf is an array.
    pub flat: Option<Nat>,
    /// Struct fields to select, outermost first.
    pub fields: Vec<&'static str>,
    /// The vector lane.
    pub lane: Option<Nat>,
    /// The number of lanes of the vector [`Place::lane`] is a lane of.
    pub lanes: Option<Nat>,
    /// The data type found there.
    pub ty: DataType,
}

/// Scalars, vectors, and pairs of such: data that is one C value.
pub fn is_flat(dt: &DataType) -> bool {
    match dt {
        DataType::Scalar(_) | DataType::NatType | DataType::Index(_) | DataType::Vector(..) => true,
        DataType::Pair(a, b) => is_flat(a) && is_flat(b),
        DataType::Array(..) | DataType::Var(_) | DataType::NatToDataApp(..) => false,
    }
}

/// The leaves of an identifier of type `dt`, in a fixed order.
pub fn leaves(dt: &DataType) -> Result<Vec<Leaf>, CodegenError> {
    let mut out = Vec::new();
    collect_leaves(dt, String::new(), None, &mut out)?;
    Ok(out)
}

fn collect_leaves(
    dt: &DataType,
    suffix: String,
    count: Option<Nat>,
    out: &mut Vec<Leaf>,
) -> Result<(), CodegenError> {
    match dt {
        DataType::Array(n, t) => {
            let count = count.unwrap_or_else(|| Nat::cst(1)) * n;
            collect_leaves(t, suffix, Some(count), out)
        }
        _ if is_flat(dt) => {
            out.push(Leaf {
                suffix,
                count,
                elem: dt.clone(),
            });
            Ok(())
        }
        DataType::Pair(a, b) => {
            collect_leaves(a, format!("{suffix}_fst"), count.clone(), out)?;
            collect_leaves(b, format!("{suffix}_snd"), count, out)
        }
        _ => unresolved(dt),
    }
}

/// Follows `path` into data of type `dt` (the type of a whole identifier).
pub fn locate(dt: &DataType, path: &[PathElem]) -> Result<Place, CodegenError> {
    let mut place = Place {
        leaf: String::new(),
        flat: None,
        fields: Vec::new(),
        lane: None,
        lanes: None,
        ty: dt.clone(),
    };
    for step in path {
        let ty = place.ty.clone();
        match (&ty, step) {
            (DataType::Array(n, t), PathElem::Idx(i)) => {
                let outer = place.flat.take().unwrap_or_else(|| Nat::cst(0));
                place.flat = Some(outer * n + i);
                place.ty = (**t).clone();
            }
            (DataType::Pair(a, b), PathElem::Fst | PathElem::Snd) => {
                let fst = *step == PathElem::Fst;
                if is_flat(&ty) {
                    place.fields.push(if fst { "fst" } else { "snd" });
                } else {
                    place.leaf.push_str(if fst { "_fst" } else { "_snd" });
                }
                place.ty = if fst { (**a).clone() } else { (**b).clone() };
            }
            (DataType::Vector(n, t), PathElem::Lane(l)) => {
                place.lane = Some(l.clone());
                place.lanes = Some(n.clone());
                place.ty = (**t).clone();
            }
            _ => {
                return malformed(format!(
                    "the path step {} does not fit data of type {}",
                    show_step(step),
                    show_type(&ty)
                ))
            }
        }
    }
    Ok(place)
}

/// A path step for messages.
pub fn show_step(s: &PathElem) -> String {
    match s {
        PathElem::Idx(i) => format!("[{i}]"),
        PathElem::Fst => ".fst".into(),
        PathElem::Snd => ".snd".into(),
        PathElem::Lane(l) => format!("<lane {l}>"),
    }
}

/// A data type in RISE syntax, for messages.
pub fn show_type(dt: &DataType) -> String {
    match dt {
        DataType::Scalar(s) => s.name().into(),
        DataType::NatType => "natType".into(),
        DataType::Index(n) => format!("idx[{n}]"),
        DataType::Array(n, t) => format!("{}.{}", show_nat(n), show_type(t)),
        DataType::Pair(a, b) => format!("({}, {})", show_type(a), show_type(b)),
        DataType::Vector(n, t) => format!("vec[{}, {n}]", show_type(t)),
        DataType::Var(v) => v.to_string(),
        DataType::NatToDataApp(..) => "(nat -> data application)".into(),
    }
}

/// A size, parenthesised unless it is a number or a name (`(m*4).f32`).
fn show_nat(n: &Nat) -> String {
    let s = n.to_string();
    if s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
        s
    } else {
        format!("({s})")
    }
}

/// The error for a data type that is still a variable or an unapplied function.
pub fn unresolved<T>(dt: &DataType) -> Result<T, CodegenError> {
    unsupported(format!(
        "the data type `{}` is not fully known (a type variable or a `nat -> data` application)",
        show_type(dt)
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use arith::Var;

    fn f32() -> DataType {
        DataType::f32()
    }

    #[test]
    fn arrays_are_flat_and_row_major() {
        let (n, m) = (Nat::var(&Var::new("n")), Nat::var(&Var::new("m")));
        let (i, j) = (Nat::var(&Var::new("i")), Nat::var(&Var::new("j")));
        let t = DataType::array(n.clone(), DataType::array(m.clone(), f32()));
        let p = locate(&t, &[PathElem::Idx(i.clone()), PathElem::Idx(j.clone())]).unwrap();
        assert_eq!(p.flat, Some(&i * &m + &j));
        assert_eq!(p.ty, f32());
        assert_eq!(leaves(&t).unwrap()[0].count, Some(&n * &m));
    }

    #[test]
    fn pairs_of_scalars_are_structs_pairs_of_arrays_are_split() {
        let n = Nat::var(&Var::new("n"));
        let i = Nat::var(&Var::new("i"));
        let aos = DataType::array(n.clone(), DataType::pair(f32(), f32()));
        let p = locate(&aos, &[PathElem::Idx(i.clone()), PathElem::Snd]).unwrap();
        assert_eq!((p.leaf.as_str(), p.fields.clone()), ("", vec!["snd"]));
        let soa = DataType::array(n.clone(), DataType::pair(DataType::array(4, f32()), f32()));
        let ls = leaves(&soa).unwrap();
        assert_eq!(ls.len(), 2);
        assert_eq!(ls[0].suffix, "_fst");
        assert_eq!(ls[0].count, Some(&n * 4));
        let path = [
            PathElem::Idx(i.clone()),
            PathElem::Fst,
            PathElem::Idx(Nat::cst(3)),
        ];
        let p = locate(&soa, &path).unwrap();
        assert_eq!((p.leaf.as_str(), p.flat), ("_fst", Some(&i * 4 + 3)));
        assert!(locate(&soa, &[PathElem::Fst]).is_err());
    }
}
