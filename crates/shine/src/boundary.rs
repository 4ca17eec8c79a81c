//! Data at the boundary: what crosses between shine and the world (`.npy` files, the buffers
//! of compiled code, the interpreter's values).
//!
//! * An [`Array`] is what one `.npy` file or one buffer holds: a shape and elements, each a
//!   *record*: a scalar, an index `idx[n]`, a `natType`, a vector `vec[t, k]` of those, or a
//!   (nested) tuple of those. An array of tuples `n.(f32, i32)` is a NumPy structured array,
//!   and in compiled code an array of C structs (`struct { float fst; int32_t snd; }`, laid
//!   out as C lays it out). An array of vectors `n.vec[f32, 4]` is a NumPy array with one
//!   more axis of the lanes (`n x 4`), and in compiled code an array of `float4`; a vector
//!   inside a tuple is a field of shape `(4,)` in NumPy and a `float4` member of the struct.
//! * An [`Output`] is a definition's result: the result's type and its *parts*. A result
//!   whose type is a tuple is split into its components (nested tuples flattened, depth
//!   first), each an array or a scalar: `(m.f32, n.f32)` has two parts, written as two `.npy`
//!   files or the members `0.npy`, `1.npy` of one `.npz`. A result that is no tuple is one
//!   part.
//!
//! The layout of compiled code's buffers is the code generator's (`codegen`'s
//! `layout::leaves`): arrays are flat and row-major, data that is one C value (scalars,
//! vectors and tuples of those) is stored in place, and a tuple holding arrays is stored as
//! one buffer per component. How one element lies in a buffer (sizes, C's padding, the bytes
//! of each scalar) is [`codegen::abi`]'s answer, shared with the code generator; it refuses
//! vectors of a number of lanes that is not a power of two and a tuple holding a vector of
//! more than 16 bytes, which C aligns as its compiler's flags say.

use codegen::abi::{self, IndexWidth};
use rise::interp::{Flat, Scalar, Value};
use rise::{DataType, ScalarType};

/// The type of one scalar of a record.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Leaf {
    /// A scalar of this type.
    Scalar(ScalarType),
    /// An index into an array of this many elements (`idx[n]`), held as an `i64`.
    Index(i64),
    /// A natural number (`natType`), held as an `i64`.
    Nat,
}

impl Leaf {
    /// How the leaf is held in an [`Array`]'s data.
    pub fn held_as(self) -> ScalarType {
        match self {
            Leaf::Scalar(t) => t,
            Leaf::Index(_) | Leaf::Nat => ScalarType::I64,
        }
    }
}

/// The leaves of a record type, in order (`((a, b), c)`: `a`, `b`, `c`; `vec[f32, 4]`: its
/// four lanes); an error naming what is not a record (an array inside a tuple, a vector of
/// tuples or of vectors, a type variable).
pub fn leaves(elem: &DataType) -> Result<Vec<Leaf>, String> {
    let mut out = Vec::new();
    collect_leaves(elem, elem, &mut out)?;
    Ok(out)
}

fn collect_leaves(t: &DataType, whole: &DataType, out: &mut Vec<Leaf>) -> Result<(), String> {
    match t {
        DataType::Scalar(s) => out.push(Leaf::Scalar(*s)),
        DataType::NatType => out.push(Leaf::Nat),
        DataType::Index(n) => out.push(Leaf::Index(
            known_size(n).map_err(|why| format!("the size of `idx[{n}]` {why}"))?,
        )),
        DataType::Pair(a, b) => {
            collect_leaves(a, whole, out)?;
            collect_leaves(b, whole, out)?;
        }
        DataType::Vector(n, e) if is_lane(e) => {
            let lanes = lane_count(n, t)?;
            for _ in 0..lanes {
                collect_leaves(e, whole, out)?;
            }
        }
        other => {
            return Err(format!(
                "`{whole}` is not a record: a scalar, a vector of scalars or a tuple of those \
                 (it contains `{other}`)"
            ))
        }
    }
    Ok(())
}

/// Whether `t` can be the lane of a vector at the boundary: a scalar, an index or a natural.
fn is_lane(t: &DataType) -> bool {
    matches!(
        t,
        DataType::Scalar(_) | DataType::NatType | DataType::Index(_)
    )
}

/// The number of lanes `n` of the vector type `vector`, a constant.
fn lane_count(n: &arith::Nat, vector: &DataType) -> Result<usize, String> {
    n.as_cst()
        .and_then(|c| usize::try_from(c).ok())
        .ok_or_else(|| format!("the number of lanes of `{vector}` is not known"))
}

/// Where leaf `j` of the record type `elem` is, for messages: `the elements`, `component 1
/// of the tuple`, `lane 2 of the vectors`, `lane 2 of component 0 of the tuple`.
pub fn leaf_place(elem: &DataType, j: usize) -> String {
    /// The path to leaf `j` of `t`: each step a tuple component or a lane.
    fn path(t: &DataType, j: usize, out: &mut Vec<String>) {
        match t {
            DataType::Pair(a, b) => {
                let first = leaves(a).map_or(1, |l| l.len());
                if j < first {
                    out.push("component 0".into());
                    path(a, j, out)
                } else {
                    out.push("component 1".into());
                    path(b, j - first, out)
                }
            }
            DataType::Vector(..) => out.push(format!("lane {j}")),
            _ => {}
        }
    }
    let mut steps = Vec::new();
    path(elem, j, &mut steps);
    // innermost first: `lane 2 of component 0 of the tuple`
    let Some(last) = steps.pop() else {
        return "the elements".into();
    };
    let mut text = last;
    for step in steps.iter().rev() {
        text = format!("{text} of {step}");
    }
    let of = match elem {
        DataType::Pair(..) => "of the tuple",
        _ => "of the vectors",
    };
    format!("{text} {of}")
}

/// The array dimensions of `ty` (outermost first) and its element (a vector is an element:
/// `n.vec[f32, 4]` has the dimensions `[n]`).
pub fn dims_of(ty: &DataType) -> Result<(Vec<usize>, &DataType), String> {
    let mut dims = Vec::new();
    let mut t = ty;
    while let DataType::Array(n, e) = t {
        let n = known_size(n).map_err(|why| format!("the size `{n}` of `{ty}` {why}"))?;
        dims.push(usize::try_from(n).map_err(|_| format!("negative size {n} in `{ty}`"))?);
        t = e;
    }
    Ok((dims, t))
}

/// The value of a size that should be a constant by now; else why not, to follow "the
/// size `n` of `n.f32`" in a message.
fn known_size(n: &arith::Nat) -> Result<i64, &'static str> {
    match n.as_cst() {
        Some(c) => Ok(c),
        None if n.free_vars().is_empty() => Err("does not fit in 64 bits"),
        None => Err("is not known"),
    }
}

/// An array of records: what one `.npy` file or one buffer of compiled code holds.
#[derive(Clone, Debug, PartialEq)]
pub struct Array {
    /// The element type, a record: a scalar, `idx[n]` (`n` a constant), `natType`, a vector
    /// of those, or a tuple of those.
    pub elem: DataType,
    /// The extent of each dimension, outermost first (empty for one element).
    pub shape: Vec<usize>,
    /// The leaves of the elements, row-major, each element's leaves in order
    /// ([`leaves`]); indices and naturals as `I64`.
    pub data: Vec<Scalar>,
}

impl From<Flat> for Array {
    fn from(flat: Flat) -> Array {
        Array {
            elem: DataType::Scalar(flat.elem),
            shape: flat.shape,
            data: flat.data,
        }
    }
}

impl Array {
    /// The leaves of an element ([`leaves`] of [`Array::elem`]).
    pub fn leaves(&self) -> Result<Vec<Leaf>, String> {
        leaves(&self.elem)
    }

    /// The number of elements (the product of the shape).
    pub fn len(&self) -> usize {
        self.shape.iter().product()
    }

    /// Whether the array has no elements.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The RISE data type: `shape[0].shape[1]....elem`.
    pub fn data_type(&self) -> DataType {
        self.shape
            .iter()
            .rev()
            .fold(self.elem.clone(), |t, &n| DataType::array(n as i64, t))
    }

    /// The array as one scalar type (`None` when its elements are tuples, indices or
    /// naturals).
    pub fn as_flat(&self) -> Option<Flat> {
        match self.elem {
            DataType::Scalar(elem) => Some(Flat {
                elem,
                shape: self.shape.clone(),
                data: self.data.clone(),
            }),
            _ => None,
        }
    }

    /// The interpreter's value of the array (a record for an empty shape).
    pub fn to_value(&self) -> Result<Value, String> {
        let leaves = self.leaves()?;
        if self.data.len() != self.len() * leaves.len() {
            return Err(format!(
                "{} scalars for {} elements of {} leaves",
                self.data.len(),
                self.len(),
                leaves.len()
            ));
        }
        let per = leaves.len();
        fn build(shape: &[usize], data: &[Scalar], per: usize, elem: &DataType) -> Value {
            match shape.split_first() {
                None => {
                    let mut at = 0;
                    record_value(elem, data, &mut at)
                }
                Some((&n, rest)) => {
                    let chunk = rest.iter().product::<usize>() * per;
                    Value::array(
                        (0..n)
                            .map(|i| build(rest, &data[i * chunk..(i + 1) * chunk], per, elem))
                            .collect(),
                    )
                }
            }
        }
        Ok(build(&self.shape, &self.data, per, &self.elem))
    }

    /// The array of a value of the concrete type `ty` (arrays of records).
    pub fn from_value(value: &Value, ty: &DataType) -> Result<Array, String> {
        let (shape, elem) = dims_of(ty)?;
        let leaves = leaves(elem)?;
        value.check(ty).map_err(|e| e.message)?;
        let mut data = Vec::with_capacity(shape.iter().product::<usize>() * leaves.len());
        fn walk(v: &Value, depth: usize, out: &mut Vec<Scalar>) {
            match v {
                Value::Array(xs) if depth > 0 => xs.iter().for_each(|x| walk(x, depth - 1, out)),
                Value::Vector(lanes) => lanes.iter().for_each(|x| walk(x, 0, out)),
                Value::Pair(p) => {
                    walk(&p.0, 0, out);
                    walk(&p.1, 0, out);
                }
                Value::Scalar(s) => out.push(*s),
                Value::Index { index, .. } => out.push(Scalar::I64(*index)),
                Value::Nat(n) => out.push(Scalar::I64(*n)),
                _ => {} // excluded by `check`
            }
        }
        walk(value, shape.len(), &mut data);
        Ok(Array {
            elem: elem.clone(),
            shape,
            data,
        })
    }

    /// The component of every element at `path` (`false`: first, `true`: second component of
    /// a tuple, outermost first).
    pub fn select(&self, path: &[bool]) -> Result<Array, String> {
        if path.is_empty() {
            return Ok(self.clone());
        }
        let all = self.leaves()?;
        let (mut skip, mut elem) = (0, &self.elem);
        for &second in path {
            let DataType::Pair(a, b) = elem else {
                return Err(format!("`{}` has no tuple component here", self.elem));
            };
            if second {
                skip += leaves(a)?.len();
                elem = b;
            } else {
                elem = a;
            }
        }
        let take = leaves(elem)?.len();
        let data = self
            .data
            .chunks(all.len().max(1))
            .flat_map(|e| e[skip..skip + take].iter().copied())
            .collect();
        Ok(Array {
            elem: elem.clone(),
            shape: self.shape.clone(),
            data,
        })
    }

    /// The bytes of the array as compiled code lays it out ([`codegen::abi`]): row-major,
    /// each element as the C value of its type (a tuple as a struct with C's padding),
    /// indices as integers of the code's index `width`, naturals (`natType`) as 64-bit
    /// integers.
    pub fn to_bytes(&self, width: IndexWidth) -> Result<Vec<u8>, String> {
        let leaves = self.leaves()?;
        if self.data.len() != self.len() * leaves.len() {
            return Err(format!(
                "{} scalars for {} elements of `{}`",
                self.data.len(),
                self.len(),
                self.elem
            ));
        }
        abi::encode_elements(&self.elem, &self.data, width).map_err(|e| e.to_string())
    }

    /// The array of `shape` and element type `elem` in `bytes` laid out as
    /// [`Array::to_bytes`] writes them.
    pub fn from_bytes(
        bytes: &[u8],
        elem: &DataType,
        shape: &[usize],
        width: IndexWidth,
    ) -> Result<Array, String> {
        let count: usize = shape.iter().product();
        let data = abi::decode_elements(elem, bytes, count, width).map_err(|e| e.to_string())?;
        Ok(Array {
            elem: elem.clone(),
            shape: shape.to_vec(),
            data,
        })
    }
}

/// The value of the record of type `t` whose leaves start at `data[*at]`.
fn record_value(t: &DataType, data: &[Scalar], at: &mut usize) -> Value {
    match t {
        DataType::Pair(a, b) => {
            let first = record_value(a, data, at);
            Value::pair(first, record_value(b, data, at))
        }
        DataType::Vector(n, e) => {
            let lanes = n.as_cst().unwrap_or(0);
            Value::vector((0..lanes).map(|_| record_value(e, data, at)).collect())
        }
        _ => {
            let s = data[*at];
            *at += 1;
            let int = s.as_i128().unwrap_or(0) as i64;
            match t {
                DataType::Index(n) => Value::Index {
                    index: int,
                    bound: n.as_cst().unwrap_or(0),
                },
                DataType::NatType => Value::Nat(int),
                _ => Value::Scalar(s),
            }
        }
    }
}

/// The bytes one element of the record type `elem` takes in a buffer of compiled code whose
/// indices are `width` wide ([`codegen::abi::size_of`]).
pub fn element_bytes(elem: &DataType, width: IndexWidth) -> Result<usize, String> {
    let size = abi::size_of(elem, width).map_err(|e| e.to_string())?;
    usize::try_from(size).map_err(|_| format!("`{elem}` takes {size} bytes"))
}

/// The first `N` bytes of `c` (zeros past its end: callers give whole elements).
pub(crate) fn first<const N: usize>(c: &[u8]) -> [u8; N] {
    let mut b = [0u8; N];
    let n = N.min(c.len());
    b[..n].copy_from_slice(&c[..n]);
    b
}

/// A part of a result: where it is in the result's tuple (`false`: first component,
/// `true`: second, outermost first) and its type.
#[derive(Clone, Debug, PartialEq)]
pub struct Part {
    /// The path of tuple components from the result to the part.
    pub path: Vec<bool>,
    /// The part's type: an array of records, or a record that is no tuple.
    pub ty: DataType,
}

/// The parts of a result of type `ty`: its tuple components, nested tuples flattened depth
/// first (`((a, b), c)`: `a`, `b`, `c`); a result that is no tuple is one part.
pub fn parts_of(ty: &DataType) -> Vec<Part> {
    fn walk(t: &DataType, path: &mut Vec<bool>, out: &mut Vec<Part>) {
        match t {
            DataType::Pair(a, b) => {
                path.push(false);
                walk(a, path, out);
                path.pop();
                path.push(true);
                walk(b, path, out);
                path.pop();
            }
            _ => out.push(Part {
                path: path.clone(),
                ty: t.clone(),
            }),
        }
    }
    let mut out = Vec::new();
    walk(ty, &mut Vec::new(), &mut out);
    out
}

/// A definition's result: its type and its parts ([`parts_of`]), each an [`Array`].
#[derive(Clone, Debug, PartialEq)]
pub struct Output {
    /// The result's type.
    pub ty: DataType,
    /// The parts, in the order of [`parts_of`].
    pub parts: Vec<Array>,
}

impl Output {
    /// The result `value` of type `ty` as its parts; an error when a part is not an array of
    /// records (an array of tuples holding arrays).
    pub fn from_value(value: &Value, ty: &DataType) -> Result<Output, String> {
        let parts = parts_of(ty)
            .iter()
            .map(|p| {
                let mut v = value;
                for &second in &p.path {
                    let (a, b) = v
                        .as_pair()
                        .ok_or_else(|| format!("the result is {}, not a tuple", v.describe()))?;
                    v = if second { b } else { a };
                }
                Array::from_value(v, &p.ty).map_err(|e| cannot_store(ty, &p.ty, &e))
            })
            .collect::<Result<_, _>>()?;
        Ok(Output {
            ty: ty.clone(),
            parts,
        })
    }

    /// The interpreter's value of the result (a tuple of the parts' values).
    pub fn to_value(&self) -> Result<Value, String> {
        fn build(t: &DataType, parts: &mut std::slice::Iter<'_, Array>) -> Result<Value, String> {
            match t {
                DataType::Pair(a, b) => Ok(Value::pair(build(a, parts)?, build(b, parts)?)),
                _ => parts
                    .next()
                    .ok_or_else(|| "fewer parts than the result's type has".to_string())?
                    .to_value(),
            }
        }
        build(&self.ty, &mut self.parts.iter())
    }

    /// The number of elements of all parts together.
    pub fn len(&self) -> usize {
        self.parts.iter().map(Array::len).sum()
    }

    /// Whether no part has an element.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// The error of a part of a result that cannot be stored as an array of records.
fn cannot_store(whole: &DataType, part: &DataType, why: &str) -> String {
    let what = if whole == part {
        format!("the result `{whole}`")
    } else {
        format!("the part `{part}` of the result `{whole}`")
    };
    format!(
        "{what} is not an array of records: scalars, vectors of scalars or tuples of those (an \
         array of tuples holding arrays is not supported yet): {why}"
    )
}

/// One buffer of compiled code: where its data is in the value it stores (a path of tuple
/// components), its shape and element type.
#[derive(Clone, Debug, PartialEq)]
pub struct BufferLayout {
    /// The tuple components from the whole value to this buffer's data.
    pub path: Vec<bool>,
    /// The array dimensions.
    pub shape: Vec<usize>,
    /// The element: a record.
    pub elem: DataType,
}

/// The buffers that compiled code stores data of type `ty` in, as the code generator lays it
/// out (`codegen`'s `layout::leaves`): a tuple holding arrays has a buffer per component,
/// anything else is one buffer.
pub fn buffers_of(ty: &DataType) -> Result<Vec<BufferLayout>, String> {
    fn is_record(t: &DataType) -> bool {
        match t {
            DataType::Scalar(_) | DataType::NatType | DataType::Index(_) => true,
            DataType::Vector(_, e) => is_lane(e),
            DataType::Pair(a, b) => is_record(a) && is_record(b),
            _ => false,
        }
    }
    // one C value for the code generator (`layout::is_flat`): vectors count too
    fn is_c_value(t: &DataType) -> bool {
        match t {
            DataType::Scalar(_) | DataType::NatType | DataType::Index(_) => true,
            DataType::Vector(..) => true,
            DataType::Pair(a, b) => is_c_value(a) && is_c_value(b),
            _ => false,
        }
    }
    fn walk(
        t: &DataType,
        path: &mut Vec<bool>,
        shape: &mut Vec<usize>,
        out: &mut Vec<BufferLayout>,
    ) -> Result<(), String> {
        match t {
            _ if is_record(t) => out.push(BufferLayout {
                path: path.clone(),
                shape: shape.clone(),
                elem: t.clone(),
            }),
            DataType::Array(..) => {
                let (dims, elem) = dims_of(t)?;
                let at = shape.len();
                shape.extend(dims);
                walk(elem, path, shape, out)?;
                shape.truncate(at);
            }
            DataType::Pair(a, b) if shape.is_empty() && !is_c_value(t) => {
                path.push(false);
                walk(a, path, shape, out)?;
                path.pop();
                path.push(true);
                walk(b, path, shape, out)?;
                path.pop();
            }
            _ => {
                return Err(format!(
                    "`{t}` is not an array of records: scalars, vectors of scalars or tuples \
                     of those (an array of tuples holding arrays is not supported yet)"
                ))
            }
        }
        Ok(())
    }
    let mut out = Vec::new();
    walk(ty, &mut Vec::new(), &mut Vec::new(), &mut out)?;
    Ok(out)
}

impl Output {
    /// The result of type `ty` from the buffers compiled code wrote, one per
    /// [`buffers_of`] `ty`, in that order.
    pub fn from_buffers(
        ty: &DataType,
        buffers: &[&[u8]],
        width: IndexWidth,
    ) -> Result<Output, String> {
        let layouts = buffers_of(ty)?;
        if layouts.len() != buffers.len() {
            return Err(format!(
                "`{ty}` is stored in {} buffers, {} given",
                layouts.len(),
                buffers.len()
            ));
        }
        let mut arrays = layouts
            .iter()
            .zip(buffers)
            .map(|(l, b)| Array::from_bytes(b, &l.elem, &l.shape, width).map(Some))
            .collect::<Result<Vec<_>, _>>()?;
        let parts = parts_of(ty)
            .iter()
            .map(|p| {
                let k = layouts
                    .iter()
                    .position(|l| p.path.starts_with(&l.path))
                    .ok_or_else(|| format!("no buffer holds the part `{}`", p.ty))?;
                let rest = &p.path[layouts[k].path.len()..];
                // a buffer that is a whole part moves into it; a tuple of scalars is split
                let array = if rest.is_empty() {
                    arrays[k].take()
                } else {
                    arrays[k].as_ref().map(|a| a.select(rest)).transpose()?
                };
                array.ok_or_else(|| format!("two parts in the buffer of `{}`", p.ty))
            })
            .collect::<Result<_, _>>()?;
        Ok(Output {
            ty: ty.clone(),
            parts,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const W32: IndexWidth = IndexWidth::Bits32;
    const W64: IndexWidth = IndexWidth::Bits64;

    fn pair(a: DataType, b: DataType) -> DataType {
        DataType::pair(a, b)
    }

    fn f32s(xs: &[f32]) -> Vec<Scalar> {
        xs.iter().map(|&x| Scalar::F32(x)).collect()
    }

    #[test]
    fn buffers_are_laid_out_as_the_code_generator_lays_them_out() {
        let t = pair(
            DataType::Scalar(ScalarType::I8),
            DataType::Scalar(ScalarType::F64),
        );
        assert_eq!(element_bytes(&t, W64).unwrap(), 16);
        // indices are the code's index type
        let t = pair(DataType::Index(5.into()), DataType::f32());
        assert_eq!(element_bytes(&t, W64).unwrap(), 16);
        assert_eq!(element_bytes(&t, W32).unwrap(), 8);
        // naturals are 64-bit whatever the index width
        let t = pair(DataType::NatType, DataType::f32());
        assert_eq!(element_bytes(&t, W32).unwrap(), 16);
        let big = Array {
            elem: DataType::NatType,
            shape: vec![1],
            data: vec![Scalar::I64(1 << 40)],
        };
        let bytes = big.to_bytes(W32).unwrap();
        assert_eq!(bytes.len(), 8);
        let back = Array::from_bytes(&bytes, &DataType::NatType, &[1], W32).unwrap();
        assert_eq!(back.data, [Scalar::I64(1 << 40)]);
        // an index that does not fit 32 bits is an error, not a truncation
        let far = Array {
            elem: DataType::Index(arith::Nat::cst(1 << 40)),
            shape: vec![1],
            data: vec![Scalar::I64(1 << 35)],
        };
        assert!(far.to_bytes(W32).is_err());
        assert_eq!(far.to_bytes(W64).unwrap(), (1i64 << 35).to_ne_bytes());
    }

    #[test]
    fn records_round_trip_through_bytes_and_values() {
        let elem = pair(
            DataType::f32(),
            pair(DataType::Scalar(ScalarType::I8), DataType::Index(4.into())),
        );
        let data = vec![
            Scalar::F32(1.5),
            Scalar::I8(-3),
            Scalar::I64(2),
            Scalar::F32(-0.25),
            Scalar::I8(7),
            Scalar::I64(3),
        ];
        let a = Array {
            elem: elem.clone(),
            shape: vec![2],
            data,
        };
        let bytes = a.to_bytes(W64).unwrap();
        // (f32, (i8, int64_t)): the inner struct is 16 bytes at offset 8
        assert_eq!(bytes.len(), 2 * 24);
        assert_eq!(Array::from_bytes(&bytes, &elem, &[2], W64).unwrap(), a);
        let v = a.to_value().unwrap();
        assert_eq!(
            v.to_string(),
            "[(1.5, (-3, 2:idx[4])), (-0.25, (7, 3:idx[4]))]"
        );
        assert_eq!(Array::from_value(&v, &a.data_type()).unwrap(), a);
        let second = a.select(&[true, false]).unwrap();
        assert_eq!(second.data, [Scalar::I8(-3), Scalar::I8(7)]);
    }

    #[test]
    fn tuple_results_split_into_parts() {
        let ty = pair(
            DataType::array(3, DataType::f32()),
            pair(DataType::f32(), DataType::array(2, DataType::f32())),
        );
        let parts = parts_of(&ty);
        assert_eq!(parts.len(), 3);
        assert_eq!(parts[1].path, [true, false]);
        let value = Value::pair(
            Value::f32s(&[1.0, 2.0, 3.0]),
            Value::pair(Value::f32(4.0), Value::f32s(&[5.0, 6.0])),
        );
        let out = Output::from_value(&value, &ty).unwrap();
        assert_eq!(out.parts[2].data, f32s(&[5.0, 6.0]));
        assert_eq!(out.parts[1].shape, Vec::<usize>::new());
        assert_eq!(out.to_value().unwrap().to_string(), value.to_string());
        // compiled code: one buffer per array, the scalar alone
        let layouts = buffers_of(&ty).unwrap();
        assert_eq!(layouts.len(), 3);
        let bytes: Vec<Vec<u8>> = out.parts.iter().map(|p| p.to_bytes(W64).unwrap()).collect();
        let slices: Vec<&[u8]> = bytes.iter().map(Vec::as_slice).collect();
        assert_eq!(Output::from_buffers(&ty, &slices, W64).unwrap(), out);
    }

    #[test]
    fn a_tuple_of_scalars_is_one_buffer_and_several_parts() {
        let ty = pair(DataType::f32(), DataType::Scalar(ScalarType::F64));
        assert_eq!(buffers_of(&ty).unwrap().len(), 1);
        let value = Value::pair(Value::f32(1.0), Value::f64(2.0));
        let out = Output::from_value(&value, &ty).unwrap();
        assert_eq!(out.parts.len(), 2);
        let whole = Array::from_value(&value, &ty).unwrap();
        let bytes = whole.to_bytes(W64).unwrap();
        assert_eq!(bytes.len(), 16);
        assert_eq!(Output::from_buffers(&ty, &[&bytes], W64).unwrap(), out);
    }

    fn vec(t: DataType, lanes: i64) -> DataType {
        DataType::vector(t, lanes)
    }

    #[test]
    fn vectors_are_laid_out_as_c_lays_out_gcc_and_opencl_vectors() {
        // struct { float4 a; float b; }: 32 bytes, b at 16 (the padding is zero)
        let elem = pair(vec(DataType::f32(), 4), DataType::f32());
        let a = Array {
            elem: elem.clone(),
            shape: vec![1],
            data: f32s(&[1.0, 2.0, 3.0, 4.0, 5.0]),
        };
        let bytes = a.to_bytes(W64).unwrap();
        assert_eq!(bytes.len(), 32);
        assert_eq!(f32::from_ne_bytes(first(&bytes[12..])), 4.0);
        assert_eq!(f32::from_ne_bytes(first(&bytes[16..])), 5.0);
        assert!(bytes[20..].iter().all(|&b| b == 0));
        assert_eq!(Array::from_bytes(&bytes, &elem, &[1], W64).unwrap(), a);
    }

    #[test]
    fn vectors_the_code_cannot_hold_as_the_boundary_would_are_refused() {
        // 3 lanes: OpenCL's float3 takes 16 bytes, the code generator has no 3-lane vectors
        let err = element_bytes(&vec(DataType::f32(), 3), W64).unwrap_err();
        assert!(err.contains("`vec[f32, 3]` has 3 lanes"), "{err}");
        // a wide vector alone is laid out (an array of them is contiguous whatever its
        // alignment), in a tuple its alignment depends on C's flags
        assert_eq!(element_bytes(&vec(DataType::f32(), 8), W64).unwrap(), 32);
        let t = pair(
            DataType::f32(),
            pair(DataType::f32(), vec(DataType::f32(), 8)),
        );
        let err = element_bytes(&t, W64).unwrap_err();
        assert!(err.contains("holds the vector `vec[f32, 8]`"), "{err}");
        // vectors of tuples or of vectors are no records
        let err = leaves(&vec(pair(DataType::f32(), DataType::f32()), 2)).unwrap_err();
        assert!(err.contains("is not a record"), "{err}");
        let err = leaves(&vec(vec(DataType::f32(), 2), 2)).unwrap_err();
        assert!(err.contains("is not a record"), "{err}");
    }

    #[test]
    fn arrays_of_vectors_round_trip_through_bytes_and_values() {
        let ty = DataType::array(2, vec(DataType::f32(), 4));
        let value = Value::array(vec![
            Value::vector((0..4).map(|i| Value::f32(i as f32)).collect()),
            Value::vector((4..8).map(|i| Value::f32(i as f32)).collect()),
        ]);
        let a = Array::from_value(&value, &ty).unwrap();
        assert_eq!(a.shape, [2]);
        assert_eq!(a.elem, vec(DataType::f32(), 4));
        assert_eq!(a.data, f32s(&[0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0]));
        assert_eq!(a.data_type(), ty);
        assert_eq!(
            a.to_value().unwrap().to_string(),
            "[<0.0, 1.0, 2.0, 3.0>, <4.0, 5.0, 6.0, 7.0>]"
        );
        let bytes = a.to_bytes(W64).unwrap();
        assert_eq!(bytes.len(), 32);
        assert_eq!(Array::from_bytes(&bytes, &a.elem, &[2], W64).unwrap(), a);
        // one buffer of float4 for compiled code
        let layouts = buffers_of(&ty).unwrap();
        assert_eq!(layouts.len(), 1);
        assert_eq!(
            (layouts[0].shape.as_slice(), &layouts[0].elem),
            (&[2][..], &a.elem)
        );
        // a vector in a tuple: the lanes, then the scalar, C's padding in the bytes
        let elem = pair(vec(DataType::f32(), 2), DataType::Scalar(ScalarType::F64));
        let v = Value::pair(
            Value::vector(vec![Value::f32(1.0), Value::f32(2.0)]),
            Value::f64(3.0),
        );
        let a =
            Array::from_value(&Value::array(vec![v]), &DataType::array(1, elem.clone())).unwrap();
        assert_eq!(a.data.len(), 3);
        let bytes = a.to_bytes(W64).unwrap();
        assert_eq!(bytes.len(), 16);
        assert_eq!(f64::from_ne_bytes(first(&bytes[8..])), 3.0);
        assert_eq!(Array::from_bytes(&bytes, &elem, &[1], W64).unwrap(), a);
        assert_eq!(a.select(&[false]).unwrap().elem, vec(DataType::f32(), 2));
        assert_eq!(a.select(&[true]).unwrap().data, [Scalar::F64(3.0)]);
    }

    #[test]
    fn a_leaf_is_named_by_its_component_and_lane() {
        let v4 = vec(DataType::f32(), 4);
        assert_eq!(leaf_place(&DataType::f32(), 0), "the elements");
        assert_eq!(leaf_place(&v4, 2), "lane 2 of the vectors");
        let t = pair(DataType::f32(), DataType::f32());
        assert_eq!(leaf_place(&t, 1), "component 1 of the tuple");
        let t = pair(DataType::f32(), pair(v4, DataType::f32()));
        assert_eq!(leaf_place(&t, 0), "component 0 of the tuple");
        assert_eq!(
            leaf_place(&t, 3),
            "lane 2 of component 0 of component 1 of the tuple"
        );
        assert_eq!(leaf_place(&t, 5), "component 1 of component 1 of the tuple");
    }

    #[test]
    fn arrays_of_tuples_holding_arrays_are_refused() {
        let ty = DataType::array(
            2,
            pair(DataType::array(3, DataType::f32()), DataType::f32()),
        );
        assert!(buffers_of(&ty)
            .unwrap_err()
            .contains("not an array of records"));
        let row = Value::pair(Value::f32s(&[1.0, 2.0, 3.0]), Value::f32(0.0));
        let value = Value::array(vec![row.clone(), row]);
        let err = Output::from_value(&value, &ty).unwrap_err();
        assert!(err.contains("not supported yet"), "{err}");
    }
}
