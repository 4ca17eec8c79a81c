//! NumPy `.npy` and `.npz` files in and out: the array format of the command line.
//!
//! An `.npy` file holds one array: a `dtype`, a shape and the elements in C (row-major)
//! order. A 0-d array is a scalar. The dtype is a scalar type, or a record of fields (a
//! *structured array*, `np.dtype([('x', '<f4'), ('y', '<i4')])`): shine reads those as
//! arrays of tuples ([`read_contents`]) and writes arrays of tuples as them, fields `f0`,
//! `f1`, … (nested tuples as nested records), packed as numpy packs them by default. An array
//! of vectors `n.vec[f32, 4]` is a plain array with one more axis of the lanes (`n x 4`), and a
//! vector inside a tuple a field of that shape (`('f0', '<f4', (4,))`, a numpy subarray).
//! A result with several parts ([`Output`]) is written as several `.npy` files or as one
//! `.npz` ([`write_output`]): an uncompressed zip archive of the members `0.npy`, `1.npy`, …,
//! which `np.load` reads.

use crate::boundary::{first, leaves, parts_of, Array, Leaf, Output};
use crate::{Error, Phrase, Setting};
use rise::interp::{Flat, Scalar};
use rise::{DataType, ScalarType};
use std::borrow::Cow;
use std::fs::File;
use std::io::{BufReader, BufWriter, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

/// An array read from or written to an `.npy` file (shape, element type, row-major data).
pub type NpyArray = Flat;

fn type_of_descr(descr: &str) -> Option<ScalarType> {
    let body = descr.trim_start_matches(['<', '>', '|', '=']);
    if descr.starts_with('>') && !matches!(body, "b1" | "i1" | "u1") {
        return None; // big-endian data: not supported
    }
    Some(match body {
        "b1" => ScalarType::Bool,
        "i1" => ScalarType::I8,
        "i2" => ScalarType::I16,
        "i4" => ScalarType::I32,
        "i8" => ScalarType::I64,
        "u1" => ScalarType::U8,
        "u2" => ScalarType::U16,
        "u4" => ScalarType::U32,
        "u8" => ScalarType::U64,
        "f2" => ScalarType::F16,
        // what `numpy.save` writes for `ml_dtypes.bfloat16` (numpy has no bfloat16)
        "V2" => ScalarType::Bf16,
        "f4" => ScalarType::F32,
        "f8" => ScalarType::F64,
        _ => return None,
    })
}

/// The NumPy dtype string of a scalar type (`int` is stored as `<i4`).
pub fn descr_of(t: ScalarType) -> &'static str {
    match t {
        ScalarType::Bool => "|b1",
        ScalarType::Int | ScalarType::I32 => "<i4",
        ScalarType::I8 => "|i1",
        ScalarType::I16 => "<i2",
        ScalarType::I64 => "<i8",
        ScalarType::U8 => "|u1",
        ScalarType::U16 => "<u2",
        ScalarType::U32 => "<u4",
        ScalarType::U64 => "<u8",
        ScalarType::F16 => "<f2",
        // numpy has no bfloat16: its bit patterns as uint16
        ScalarType::Bf16 => "<u2",
        ScalarType::F32 => "<f4",
        ScalarType::F64 => "<f8",
    }
}

/// The most elements an array read from `.npy` may have.
pub const MAX_ELEMENTS: u64 = 1 << 31;

/// The deepest nesting of brackets a header may have. The `.npy` reader's header parser
/// takes time exponential in it (a corrupted header nesting 20 deep took 5 s, 100 deep
/// forever); 12 allows records nested five deep and parses in milliseconds.
const MAX_HEADER_NESTING: usize = 12;

/// Rejects a header whose shape does not fit in memory, or that nests brackets too
/// deep, before the `.npy` reader sees it (it computes the element count without
/// overflow checks and parses nesting in exponential time).
fn check_declared_size(src: &mut impl Source, shown: &str) -> Result<(), String> {
    let mut head = Vec::new();
    // Unreadable files are left to the reader, which says what is wrong.
    if src.seek(SeekFrom::Start(0)).is_err() {
        return Ok(());
    }
    if (&mut *src).take(1 << 16).read_to_end(&mut head).is_err() {
        return Ok(());
    }
    let text = String::from_utf8_lossy(&head);
    let header = text.split('\n').next().unwrap_or_default();
    let (mut depth, mut deepest) = (0usize, 0usize);
    for c in header.chars() {
        match c {
            '[' | '(' | '{' => {
                depth += 1;
                deepest = deepest.max(depth);
            }
            ']' | ')' | '}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    if deepest > MAX_HEADER_NESTING {
        return Err(format!(
            "the header of `{shown}` nests brackets {deepest} deep; at most {MAX_HEADER_NESTING} \
             are supported (a malformed header, or records nested more than five deep)"
        ));
    }
    let Some(at) = text.find("'shape'") else {
        return Ok(()); // not a header we understand: the reader reports it
    };
    let rest = &text[at..];
    let (Some(open), Some(close)) = (rest.find('('), rest.find(')')) else {
        return Ok(());
    };
    if close < open {
        return Ok(());
    }
    let mut total: u64 = 1;
    for dim in rest[open + 1..close]
        .split(',')
        .map(str::trim)
        .filter(|d| !d.is_empty())
    {
        let Ok(dim) = dim.parse::<u64>() else {
            return Ok(());
        };
        total = total.saturating_mul(dim);
    }
    if total > MAX_ELEMENTS {
        return Err(format!(
            "`{shown}` declares {total} elements; at most {MAX_ELEMENTS} are supported"
        ));
    }
    Ok(())
}

/// Where the data of an `.npy` file starts (after its header), and the file's length;
/// `None` for a file too short to have a header (the reader reports it).
fn data_offset(src: &mut impl Source, shown: &str) -> Result<Option<(u64, u64)>, String> {
    let mut head = [0u8; 12];
    let len = src
        .seek(SeekFrom::End(0))
        .and_then(|len| src.seek(SeekFrom::Start(0)).map(|_| len))
        .map_err(|e| format!("cannot read `{shown}`: {e}"))?;
    if src.read_exact(&mut head).is_err() {
        return Ok(None);
    }
    let offset = match head[6] {
        1 => 10 + u64::from(u16::from_le_bytes([head[8], head[9]])),
        _ => 12 + u64::from(u32::from_le_bytes([head[8], head[9], head[10], head[11]])),
    };
    Ok(Some((offset, len)))
}

/// Fails when the file holds more bytes than its header and `shape` elements of `dtype`.
fn check_no_trailing_data(
    src: &mut impl Source,
    shown: &str,
    dtype: &npyz::DType,
    shape: &[usize],
) -> Result<(), String> {
    let Some((data_offset, len)) = data_offset(src, shown)? else {
        return Ok(());
    };
    let (Some(item), Some(count)) = (
        dtype.num_bytes(),
        shape
            .iter()
            .try_fold(1u64, |acc, &d| acc.checked_mul(d as u64)),
    ) else {
        return Ok(());
    };
    let end = count
        .checked_mul(item as u64)
        .and_then(|b| b.checked_add(data_offset));
    match end {
        Some(end) if len > end => Err(format!(
            "`{shown}` has {} bytes after its last element (the header declares shape {shape:?}); \
             it is not a well-formed .npy file",
            len - end
        )),
        _ => Ok(()),
    }
}

/// The dtype of an `.npy` file as shine reads it: a scalar type, or a record of fields.
#[derive(Clone, Debug, PartialEq)]
pub enum Dtype {
    /// A scalar type.
    Scalar(ScalarType),
    /// A record (a numpy structured dtype): its fields in order, with their names.
    Record(Vec<(String, Dtype)>),
    /// A field of a fixed shape of scalars (a numpy subarray, `('p', '<f4', (4,))`): its
    /// shape and scalar type; its elements are leaves, row-major.
    Subarray(Vec<usize>, ScalarType),
}

impl Dtype {
    /// The scalar types of the leaves, in order (nested records and subarrays flattened).
    pub fn leaves(&self) -> Vec<ScalarType> {
        match self {
            Dtype::Scalar(t) => vec![*t],
            Dtype::Record(fields) => fields.iter().flat_map(|(_, d)| d.leaves()).collect(),
            Dtype::Subarray(shape, t) => vec![*t; shape.iter().product()],
        }
    }

    /// The number of fields, nested records flattened (a subarray is one field).
    pub fn fields(&self) -> usize {
        match self {
            Dtype::Scalar(_) | Dtype::Subarray(..) => 1,
            Dtype::Record(fields) => fields.iter().map(|(_, d)| d.fields()).sum(),
        }
    }
}

/// The most scalars one record of a structured array may hold (its subarrays counted
/// element by element).
pub const MAX_RECORD_LEAVES: usize = 1 << 16;

impl std::fmt::Display for Dtype {
    /// numpy's names: `float32`, `[('x', float32), ('y', int32)]`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Dtype::Scalar(t) => f.write_str(numpy_name(*t)),
            Dtype::Record(fields) => {
                f.write_str("[")?;
                for (i, (name, d)) in fields.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    match d {
                        Dtype::Subarray(shape, t) => {
                            write!(f, "('{name}', {}, {})", numpy_name(*t), shape_text(shape))?
                        }
                        d => write!(f, "('{name}', {d})")?,
                    }
                }
                f.write_str("]")
            }
            Dtype::Subarray(shape, t) => write!(f, "({}, {})", numpy_name(*t), shape_text(shape)),
        }
    }
}

/// numpy's name of the dtype a scalar type is stored as (`int` as `int32`).
pub fn numpy_name(t: ScalarType) -> &'static str {
    match t {
        ScalarType::Bool => "bool",
        ScalarType::Int | ScalarType::I32 => "int32",
        ScalarType::I8 => "int8",
        ScalarType::I16 => "int16",
        ScalarType::I64 => "int64",
        ScalarType::U8 => "uint8",
        ScalarType::U16 => "uint16",
        ScalarType::U32 => "uint32",
        ScalarType::U64 => "uint64",
        ScalarType::F16 => "float16",
        ScalarType::Bf16 => "bfloat16",
        ScalarType::F32 => "float32",
        ScalarType::F64 => "float64",
    }
}

/// What an `.npy` file holds: a shape and elements of a [`Dtype`], their leaves in order.
#[derive(Clone, Debug, PartialEq)]
pub struct Contents {
    /// The extent of each dimension, outermost first.
    pub shape: Vec<usize>,
    /// The dtype of an element.
    pub dtype: Dtype,
    /// The leaves of the elements, row-major, each element's leaves in order.
    pub data: Vec<Scalar>,
}

impl From<Flat> for Contents {
    fn from(flat: Flat) -> Contents {
        Contents {
            shape: flat.shape,
            dtype: Dtype::Scalar(flat.elem),
            data: flat.data,
        }
    }
}

/// Reads an `.npy` file of a plain (not structured) dtype.
pub fn read(path: &Path) -> Result<NpyArray, String> {
    let contents = read_contents(path)?;
    match contents.dtype {
        Dtype::Scalar(elem) => Ok(NpyArray {
            elem,
            shape: contents.shape,
            data: contents.data,
        }),
        other => Err(format!(
            "`{}` is a structured array (dtype {other}); only plain numeric arrays are \
             supported here",
            path.display()
        )),
    }
}

/// Reads an `.npy` file: a plain array, or a structured array of scalar fields.
pub fn read_contents(path: &Path) -> Result<Contents, String> {
    let shown = path.display().to_string();
    let file = File::open(path).map_err(|e| format!("cannot open `{shown}`: {e}"))?;
    read_contents_from(&mut BufReader::new(file), &shown)
}

/// Reads the `.npy` encoding `bytes` (what `numpy.save` writes) as [`read_contents`] reads a
/// file; messages call it `name`.
pub fn read_contents_bytes(bytes: &[u8], name: &str) -> Result<Contents, String> {
    read_contents_from(&mut std::io::Cursor::new(bytes), name)
}

/// What the `.npy` reader reads from: a file or bytes in memory.
trait Source: Read + Seek {}

impl<T: Read + Seek> Source for T {}

/// Reads an `.npy` encoding from `src`, called `shown` in messages.
fn read_contents_from(src: &mut impl Source, shown: &str) -> Result<Contents, String> {
    check_declared_size(src, shown)?;
    src.seek(SeekFrom::Start(0))
        .map_err(|e| format!("cannot read `{shown}`: {e}"))?;
    let npy = npyz::NpyFile::new(&mut *src)
        .map_err(|e| format!("`{shown}` is not a valid .npy file: {e}"))?;
    if npy.order() == npyz::Order::Fortran {
        return Err(format!(
            "`{shown}` is stored in Fortran order; save it in C order (np.ascontiguousarray)"
        ));
    }
    let shape: Vec<usize> = npy.shape().iter().map(|&d| d as usize).collect();
    let descr = match npy.dtype() {
        npyz::DType::Plain(ts) => ts.to_string(),
        npyz::DType::Record(fields) => {
            let dtype = npy.dtype();
            drop(npy);
            check_no_trailing_data(src, shown, &dtype, &shape)?;
            let item = dtype.num_bytes().unwrap_or(0);
            return read_records(src, shown, &fields, item, shape);
        }
        other => {
            return Err(format!(
                "`{shown}` has the dtype `{}`, which shine does not support",
                other.descr()
            ))
        }
    };
    let dtype = npy.dtype();
    drop(npy);
    check_no_trailing_data(src, shown, &dtype, &shape)?;
    // the header again, to read the data after it
    src.seek(SeekFrom::Start(0))
        .map_err(|e| format!("cannot read `{shown}`: {e}"))?;
    let npy = npyz::NpyFile::new(&mut *src)
        .map_err(|e| format!("`{shown}` is not a valid .npy file: {e}"))?;
    let elem = type_of_descr(&descr).ok_or_else(|| {
        format!("`{shown}` has dtype `{descr}`, which shine does not support (supported: bool, int8..64, uint8..64, float16/32/64, bfloat16 as uint16 bits or ml_dtypes' `<V2`, little-endian)")
    })?;
    if elem == ScalarType::Bf16 {
        // `ml_dtypes.bfloat16` (`<V2`): the reader has no type for it, its bytes are read
        drop(npy);
        let data = read_elements(src, shown, 2, &[(0, elem)], &shape)?;
        return Ok(Contents {
            shape,
            dtype: Dtype::Scalar(elem),
            data,
        });
    }
    let bad = |e: std::io::Error| format!("cannot read the data of `{shown}`: {e}");
    let data: Vec<Scalar> = match elem {
        ScalarType::Bool => npy
            .into_vec::<bool>()
            .map_err(bad)?
            .into_iter()
            .map(Scalar::Bool)
            .collect(),
        ScalarType::I8 => npy
            .into_vec::<i8>()
            .map_err(bad)?
            .into_iter()
            .map(Scalar::I8)
            .collect(),
        ScalarType::I16 => npy
            .into_vec::<i16>()
            .map_err(bad)?
            .into_iter()
            .map(Scalar::I16)
            .collect(),
        ScalarType::I32 | ScalarType::Int => npy
            .into_vec::<i32>()
            .map_err(bad)?
            .into_iter()
            .map(Scalar::I32)
            .collect(),
        ScalarType::I64 => npy
            .into_vec::<i64>()
            .map_err(bad)?
            .into_iter()
            .map(Scalar::I64)
            .collect(),
        ScalarType::U8 => npy
            .into_vec::<u8>()
            .map_err(bad)?
            .into_iter()
            .map(Scalar::U8)
            .collect(),
        ScalarType::U16 => npy
            .into_vec::<u16>()
            .map_err(bad)?
            .into_iter()
            .map(Scalar::U16)
            .collect(),
        ScalarType::U32 => npy
            .into_vec::<u32>()
            .map_err(bad)?
            .into_iter()
            .map(Scalar::U32)
            .collect(),
        ScalarType::U64 => npy
            .into_vec::<u64>()
            .map_err(bad)?
            .into_iter()
            .map(Scalar::U64)
            .collect(),
        ScalarType::F16 => npy
            .into_vec::<half::f16>()
            .map_err(bad)?
            .into_iter()
            .map(Scalar::F16)
            .collect(),
        // read above, as bytes
        ScalarType::Bf16 => return Err(format!("cannot read `{shown}` as bfloat16")),
        ScalarType::F32 => npy
            .into_vec::<f32>()
            .map_err(bad)?
            .into_iter()
            .map(Scalar::F32)
            .collect(),
        ScalarType::F64 => npy
            .into_vec::<f64>()
            .map_err(bad)?
            .into_iter()
            .map(Scalar::F64)
            .collect(),
    };
    let expected: usize = shape.iter().product();
    if data.len() != expected {
        return Err(format!(
            "`{shown}` holds {} elements, but its shape {shape:?} needs {expected}",
            data.len()
        ));
    }
    Ok(Contents {
        shape,
        dtype: Dtype::Scalar(elem),
        data,
    })
}

/// The dtype of a record's fields and where each leaf is in an element: its byte offset and
/// scalar type. Padding fields (no name, raw bytes `|V3`) are skipped.
fn record_layout(
    shown: &str,
    fields: &[npyz::Field],
    base: usize,
    at: &mut Vec<(usize, ScalarType)>,
) -> Result<(Dtype, usize), String> {
    let mut offset = base;
    let mut out = Vec::new();
    for field in fields {
        match &field.dtype {
            npyz::DType::Plain(ts) => {
                let size = ts.num_bytes().unwrap_or(0);
                if field.name.is_empty() && ts.type_char() == npyz::TypeChar::RawData {
                    offset += size; // padding (an aligned dtype)
                    continue;
                }
                let descr = ts.to_string();
                let t = type_of_descr(&descr).ok_or_else(|| {
                    format!(
                        "`{shown}`: the field `{}` has dtype `{descr}`, which shine does not \
                         support (supported: bool, int8..64, uint8..64, float16/32/64, \
                         little-endian)",
                        field.name
                    )
                })?;
                at.push((offset, t));
                out.push((field.name.clone(), Dtype::Scalar(t)));
                offset += size;
            }
            npyz::DType::Record(inner) => {
                let (d, end) = record_layout(shown, inner, offset, at)?;
                out.push((field.name.clone(), d));
                offset = end;
            }
            npyz::DType::Array(..) => {
                let refuse = |why: &str| {
                    format!(
                        "`{shown}`: the field `{}` is a subarray (`{}`) {why}; shine reads \
                         subarrays of scalars (vectors in tuples)",
                        field.name,
                        field.dtype.descr()
                    )
                };
                let mut shape = Vec::new();
                let mut inner = &field.dtype;
                while let npyz::DType::Array(n, d) = inner {
                    shape.push(usize::try_from(*n).unwrap_or(usize::MAX));
                    inner = d;
                }
                let npyz::DType::Plain(ts) = inner else {
                    return Err(refuse("of records"));
                };
                let descr = ts.to_string();
                let t = type_of_descr(&descr).ok_or_else(|| {
                    refuse(&format!(
                        "of dtype `{descr}`, which shine does not support (supported: bool, \
                         int8..64, uint8..64, float16/32/64, little-endian)"
                    ))
                })?;
                let count = shape
                    .iter()
                    .try_fold(1usize, |acc, &d| acc.checked_mul(d))
                    .filter(|&c| at.len() + c <= MAX_RECORD_LEAVES)
                    .ok_or_else(|| {
                        refuse(&format!(
                            "that makes its records hold more than {MAX_RECORD_LEAVES} scalars"
                        ))
                    })?;
                let size = ts.num_bytes().unwrap_or(0);
                for k in 0..count {
                    at.push((offset + k * size, t));
                }
                out.push((field.name.clone(), Dtype::Subarray(shape, t)));
                offset += count * size;
            }
        }
    }
    if out.is_empty() {
        return Err(format!("`{shown}` has a structured dtype without fields"));
    }
    Ok((Dtype::Record(out), offset))
}

/// Reads the elements of a structured array of `item` bytes each.
fn read_records(
    src: &mut impl Source,
    shown: &str,
    fields: &[npyz::Field],
    item: usize,
    shape: Vec<usize>,
) -> Result<Contents, String> {
    let mut at = Vec::new();
    let (dtype, end) = record_layout(shown, fields, 0, &mut at)?;
    if end > item {
        return Err(format!(
            "`{shown}`: its fields overrun its {item}-byte records"
        ));
    }
    let data = read_elements(src, shown, item, &at, &shape)?;
    Ok(Contents { shape, dtype, data })
}

/// Reads `shape`'s elements of `item` bytes each after the header, each leaf at its byte
/// offset and of its type in `at`.
fn read_elements(
    src: &mut impl Source,
    shown: &str,
    item: usize,
    at: &[(usize, ScalarType)],
    shape: &[usize],
) -> Result<Vec<Scalar>, String> {
    let Some((offset, len)) = data_offset(src, shown)? else {
        return Err(format!("`{shown}` is not a valid .npy file: truncated"));
    };
    let count: usize = shape.iter().product();
    // before allocating: the file holds the data its header declares, and it fits in memory
    let need = (count as u64)
        .saturating_mul(item as u64)
        .saturating_add(offset);
    if len < need {
        return Err(format!(
            "`{shown}` holds {} bytes of data, but its shape {shape:?} of {item}-byte records \
             needs {}",
            len.saturating_sub(offset),
            need - offset
        ));
    }
    crate::limits::fits_in_memory(
        &format!("`{shown}`"),
        (count as u64).saturating_mul(at.len() as u64),
        crate::limits::RUN_BYTES_PER_ELEMENT,
    )
    .map_err(|e| match e.unstaged() {
        crate::Error::Message(m) => m.clone(),
        other => other.to_string(),
    })?;
    let bad = |e: std::io::Error| format!("cannot read the data of `{shown}`: {e}");
    src.seek(SeekFrom::Start(offset)).map_err(bad)?;
    let mut reader = BufReader::new(src);
    let mut element = vec![0u8; item];
    let mut data = Vec::with_capacity(count.saturating_mul(at.len()));
    for _ in 0..count {
        reader.read_exact(&mut element).map_err(bad)?;
        for &(o, t) in at {
            data.push(scalar_from_le(&element[o..], t));
        }
    }
    Ok(data)
}

/// The scalar of type `t` whose little-endian bytes start `bytes`.
fn scalar_from_le(c: &[u8], t: ScalarType) -> Scalar {
    match t {
        ScalarType::Bool => Scalar::Bool(c[0] != 0),
        ScalarType::Int | ScalarType::I32 => Scalar::I32(i32::from_le_bytes(first(c))),
        ScalarType::I8 => Scalar::I8(c[0] as i8),
        ScalarType::I16 => Scalar::I16(i16::from_le_bytes(first(c))),
        ScalarType::I64 => Scalar::I64(i64::from_le_bytes(first(c))),
        ScalarType::U8 => Scalar::U8(c[0]),
        ScalarType::U16 => Scalar::U16(u16::from_le_bytes(first(c))),
        ScalarType::U32 => Scalar::U32(u32::from_le_bytes(first(c))),
        ScalarType::U64 => Scalar::U64(u64::from_le_bytes(first(c))),
        ScalarType::F16 => Scalar::F16(half::f16::from_le_bytes(first(c))),
        ScalarType::Bf16 => Scalar::Bf16(half::bf16::from_le_bytes(first(c))),
        ScalarType::F32 => Scalar::F32(f32::from_le_bytes(first(c))),
        ScalarType::F64 => Scalar::F64(f64::from_le_bytes(first(c))),
    }
}

/// Data that one `.npy` file holds: an array of scalars ([`Flat`]), an array of records
/// ([`Array`]), or a result of one part ([`Output`]).
pub trait ToNpy {
    /// The data as one array; an error when it is more than one.
    fn to_npy(&self) -> Result<Cow<'_, Array>, String>;
}

impl ToNpy for Array {
    fn to_npy(&self) -> Result<Cow<'_, Array>, String> {
        Ok(Cow::Borrowed(self))
    }
}

impl ToNpy for Flat {
    fn to_npy(&self) -> Result<Cow<'_, Array>, String> {
        Ok(Cow::Owned(Array::from(self.clone())))
    }
}

impl ToNpy for Output {
    fn to_npy(&self) -> Result<Cow<'_, Array>, String> {
        match self.parts.as_slice() {
            [one] => Ok(Cow::Borrowed(one)),
            parts => Err(format!(
                "the result `{}` has {} parts; it is written as {} .npy files or one .npz",
                self.ty,
                parts.len(),
                parts.len()
            )),
        }
    }
}

/// The numpy `descr` of an element type: `'<f4'`, or `[('f0', '<f4'), ('f1', '<i8')]` for a
/// tuple (indices and naturals as `<i8`; a vector in a tuple as a subarray field,
/// `('f0', '<f4', (4,))`).
fn descr_of_elem(elem: &DataType) -> Result<String, String> {
    let field = |name: &str, t: &DataType| -> Result<String, String> {
        Ok(match t {
            DataType::Vector(n, e) => format!("('{name}', {}, ({n},))", descr_of_elem(e)?),
            t => format!("('{name}', {})", descr_of_elem(t)?),
        })
    };
    Ok(match elem {
        DataType::Scalar(t) => format!("'{}'", descr_of(*t)),
        DataType::Index(_) | DataType::NatType => "'<i8'".into(),
        DataType::Pair(a, b) => format!("[{}, {}]", field("f0", a)?, field("f1", b)?),
        other => return Err(format!("`{other}` cannot be an element of an .npy file")),
    })
}

/// A shape as numpy writes it: `(3,)`, `(2, 3)`, `()`.
pub fn shape_text(shape: &[usize]) -> String {
    match shape {
        [n] => format!("({n},)"),
        dims => {
            let dims: Vec<String> = dims.iter().map(usize::to_string).collect();
            format!("({})", dims.join(", "))
        }
    }
}

/// The header of an `.npy` file (format version 1.0, or 2.0 for a header over 64 KiB). An
/// array of vectors is a plain array with one more axis of the lanes.
fn header(array: &Array) -> Result<Vec<u8>, String> {
    let mut shape = array.shape.clone();
    let elem = match &array.elem {
        DataType::Vector(n, e) => {
            let lanes = n
                .as_cst()
                .and_then(|c| usize::try_from(c).ok())
                .ok_or_else(|| format!("the lanes of `{}` are not known", array.elem))?;
            shape.push(lanes);
            e
        }
        e => e,
    };
    let mut text = format!(
        "{{'descr': {}, 'fortran_order': False, 'shape': {}, }}",
        descr_of_elem(elem)?,
        shape_text(&shape)
    )
    .into_bytes();
    let long = text.len() + 11 > 65535;
    let prefix = if long { 12 } else { 10 };
    while !(prefix + text.len() + 1).is_multiple_of(64) {
        text.push(b' ');
    }
    text.push(b'\n');
    let mut bytes = b"\x93NUMPY".to_vec();
    if long {
        bytes.extend([2, 0]);
        bytes.extend((text.len() as u32).to_le_bytes());
    } else {
        bytes.extend([1, 0]);
        bytes.extend((text.len() as u16).to_le_bytes());
    }
    bytes.extend(text);
    Ok(bytes)
}

/// The bytes of an element's leaves in an `.npy` file: little-endian, packed.
fn item_bytes(elem: &DataType) -> Result<usize, String> {
    Ok(leaves(elem)?
        .iter()
        .map(|l| match l {
            Leaf::Scalar(ScalarType::Bool) => 1,
            Leaf::Scalar(t) => (t.bits() / 8) as usize,
            Leaf::Index(_) | Leaf::Nat => 8,
        })
        .sum())
}

/// The length of the `.npy` encoding of `array`.
fn encoded_len(array: &Array) -> Result<u64, String> {
    Ok(header(array)?.len() as u64 + array.len() as u64 * item_bytes(&array.elem)? as u64)
}

/// Writes the `.npy` encoding of `array` (header, then the leaves little-endian).
fn encode(out: &mut impl Write, array: &Array) -> Result<(), EncodeError> {
    let leaves = array.leaves().map_err(EncodeError::Data)?;
    if array.data.len() != array.len() * leaves.len() {
        return Err(EncodeError::Data(format!(
            "{} scalars for {} elements of `{}`",
            array.data.len(),
            array.len(),
            array.elem
        )));
    }
    out.write_all(&header(array).map_err(EncodeError::Data)?)?;
    // the bytes go out in chunks of about 64 KiB
    let mut chunk: Vec<u8> = Vec::with_capacity(1 << 16);
    for (i, s) in array.data.iter().enumerate() {
        let leaf = leaves[i % leaves.len()];
        let mixed = || {
            EncodeError::Data(format!(
                "an element of type {} in an array of `{}`",
                s.ty().name(),
                array.elem
            ))
        };
        let b = &mut chunk;
        match (leaf, *s) {
            (Leaf::Index(_) | Leaf::Nat, s) => {
                b.extend((s.as_i128().ok_or_else(mixed)? as i64).to_le_bytes())
            }
            (Leaf::Scalar(t), s)
                if s.ty() != t && !(t == ScalarType::Int && s.ty() == ScalarType::I32) =>
            {
                return Err(mixed())
            }
            (_, Scalar::Bool(x)) => b.push(x as u8),
            (_, Scalar::Int(x) | Scalar::I32(x)) => b.extend(x.to_le_bytes()),
            (_, Scalar::I8(x)) => b.extend(x.to_le_bytes()),
            (_, Scalar::I16(x)) => b.extend(x.to_le_bytes()),
            (_, Scalar::I64(x)) => b.extend(x.to_le_bytes()),
            (_, Scalar::U8(x)) => b.push(x),
            (_, Scalar::U16(x)) => b.extend(x.to_le_bytes()),
            (_, Scalar::U32(x)) => b.extend(x.to_le_bytes()),
            (_, Scalar::U64(x)) => b.extend(x.to_le_bytes()),
            (_, Scalar::F16(x)) => b.extend(x.to_le_bytes()),
            (_, Scalar::Bf16(x)) => b.extend(x.to_le_bytes()),
            (_, Scalar::F32(x)) => b.extend(x.to_le_bytes()),
            (_, Scalar::F64(x)) => b.extend(x.to_le_bytes()),
        }
        if chunk.len() >= 1 << 16 {
            out.write_all(&chunk)?;
            chunk.clear();
        }
    }
    out.write_all(&chunk)?;
    Ok(())
}

/// Why an encoding failed: the data does not fit its type, or the file could not be written.
enum EncodeError {
    Data(String),
    Io(std::io::Error),
}

impl From<std::io::Error> for EncodeError {
    fn from(e: std::io::Error) -> EncodeError {
        EncodeError::Io(e)
    }
}

impl EncodeError {
    fn message(self, path: &Path) -> String {
        match self {
            EncodeError::Data(m) => format!("cannot write `{}`: {m}", path.display()),
            EncodeError::Io(e) => format!("cannot write `{}`: {e}", path.display()),
        }
    }
}

/// The `.npy` encoding of `array`, as [`write`] writes it to a file (what `numpy.load`
/// reads from bytes).
pub fn to_npy_bytes(array: &(impl ToNpy + ?Sized)) -> Result<Vec<u8>, String> {
    let array = array.to_npy()?;
    let mut out = Vec::new();
    encode(&mut out, &array).map_err(|e| match e {
        EncodeError::Data(m) => m,
        EncodeError::Io(e) => e.to_string(),
    })?;
    Ok(out)
}

/// Writes an `.npy` file: an array of scalars, or a structured array for an array of tuples.
pub fn write(path: &Path, array: &(impl ToNpy + ?Sized)) -> Result<(), String> {
    let array = array.to_npy()?;
    let err = |e: EncodeError| e.message(path);
    crate::files::write_whole_with(path, |file| {
        let mut out = BufWriter::new(file);
        encode(&mut out, &array)?;
        Ok(out.flush()?)
    })
    .map_err(err)
}

/// Writes an `.npz` file: the arrays as its members `0.npy`, `1.npy`, … in an uncompressed
/// (stored) zip archive, as `np.savez` writes them.
pub fn write_npz(path: &Path, arrays: &[&Array]) -> Result<(), String> {
    crate::files::write_whole_with(path, |file| write_npz_to(file, path, arrays)).map_err(
        |e: NpzError| match e {
            NpzError::Message(m) => m,
            NpzError::Io(e) => EncodeError::Io(e).message(path),
        },
    )
}

/// Why an `.npz` file could not be written: a message, or an error of the write.
enum NpzError {
    Message(String),
    Io(std::io::Error),
}

impl From<std::io::Error> for NpzError {
    fn from(e: std::io::Error) -> NpzError {
        NpzError::Io(e)
    }
}

/// The `.npz` archive of [`write_npz`], written to `file`.
fn write_npz_to(file: &mut File, path: &Path, arrays: &[&Array]) -> Result<(), NpzError> {
    let err = |e: EncodeError| NpzError::Message(e.message(path));
    let io = |e: std::io::Error| err(e.into());
    let mut central = Vec::new();
    let mut offset: u64 = 0;
    for (i, array) in arrays.iter().enumerate() {
        let name = format!("{i}.npy");
        let size = encoded_len(array).map_err(|m| err(EncodeError::Data(m)))?;
        let (Ok(size32), Ok(offset32)) = (u32::try_from(size), u32::try_from(offset)) else {
            return Err(NpzError::Message(format!(
                "cannot write `{}`: .npz files over 4 GiB are not supported; write one .npy \
                 file per part instead",
                path.display()
            )));
        };
        file.write_all(&zip::local_header(&name, 0, size32))
            .map_err(io)?;
        let mut data = zip::CrcWriter::new(BufWriter::new(&mut *file));
        encode(&mut data, array).map_err(err)?;
        let crc = data.finish().map_err(io)?;
        // the CRC is known once the member is written: patch it into the local header
        file.seek(SeekFrom::Start(offset + zip::CRC_AT))
            .map_err(io)?;
        file.write_all(&crc.to_le_bytes()).map_err(io)?;
        file.seek(SeekFrom::End(0)).map_err(io)?;
        central.extend(zip::central_header(&name, crc, size32, offset32));
        offset += zip::local_header(&name, 0, 0).len() as u64 + size;
    }
    let Ok(at) = u32::try_from(offset) else {
        return Err(NpzError::Message(format!(
            "cannot write `{}`: .npz files over 4 GiB are not supported",
            path.display()
        )));
    };
    file.write_all(&central).map_err(io)?;
    file.write_all(&zip::end_record(
        arrays.len() as u16,
        central.len() as u32,
        at,
    ))
    .map_err(io)?;
    file.flush().map_err(io)?;
    Ok(())
}

mod zip;

/// Whether `path` names an `.npz` file.
fn is_npz(path: &Path) -> bool {
    path.extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("npz"))
}

/// Checks the output files `paths` of a result of type `ty`: one `.npy` per part
/// ([`parts_of`]), in order, or one `.npz` holding every part.
pub fn check_outputs(paths: &[PathBuf], ty: &DataType) -> Result<(), Error> {
    let n = parts_of(ty).len();
    let output = || Phrase::from(Setting::OutputFiles);
    let usage = || {
        if n == 1 {
            Phrase::from(format!("the result `{ty}` is one array: give one "))
                .then(output())
                .then(" FILE.npy (or FILE.npz)")
        } else {
            Phrase::from(format!(
                "the result `{ty}` is a tuple of {n} parts: give {n} "
            ))
            .then(output())
            .then(" files (one .npy per part, in order) or one ")
            .then(output())
            .then(" FILE.npz")
        }
    };
    for (i, p) in paths.iter().enumerate() {
        if paths[..i].contains(p) {
            let twice = format!(" `{}` is given twice", p.display());
            return Err(output().then(twice).into());
        }
    }
    let plural = if paths.len() == 1 { "" } else { "s" };
    match paths {
        [] => Ok(()),
        [one] if is_npz(one) => Ok(()),
        _ if paths.iter().any(|p| is_npz(p)) => Err(Phrase::from(
            "an .npz output holds every part, so it is the only ",
        )
        .then(output())
        .then("; ")
        .then(usage())
        .into()),
        _ if paths.len() != n => Err(Phrase::from(format!("{} ", paths.len()))
            .then(output())
            .then(format!(" file{plural} given; "))
            .then(usage())
            .into()),
        _ => Ok(()),
    }
}

/// Writes a result to the output files `paths` ([`check_outputs`]): one `.npy` per part,
/// in order, or one `.npz` whose members `0.npy`, `1.npy`, … are the parts. Returns what was
/// written, for the message on stderr.
pub fn write_output(paths: &[PathBuf], output: &Output) -> Result<String, Error> {
    check_outputs(paths, &output.ty)?;
    let ty = &output.ty;
    match paths {
        [one] if is_npz(one) => {
            write_npz(one, &output.parts.iter().collect::<Vec<_>>())?;
            let members = match output.parts.len() {
                1 => "member 0.npy".to_string(),
                n => format!("members 0.npy..{}.npy", n - 1),
            };
            Ok(format!("wrote {} ({ty}; {members})", one.display()))
        }
        _ => {
            let mut written = Vec::new();
            for (path, part) in paths.iter().zip(&output.parts) {
                write(path, part)?;
                written.push(format!("{} ({})", path.display(), part.data_type()));
            }
            Ok(format!("wrote {}", written.join(", ")))
        }
    }
}

#[cfg(test)]
mod tests;
