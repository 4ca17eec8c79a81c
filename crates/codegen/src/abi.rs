//! How DPIA data lies in the buffers of generated code: the one answer the code generator,
//! the GPU host plan and every host that fills or reads a buffer share.
//!
//! An element of a buffer is *flat* data, one C value ([`crate::layout`] splits everything
//! else into buffers of such):
//! * a scalar: `bool`, `i8`/`u8` take 1 byte, `i16`/`u16`/`f16` 2, `int`/`i32`/`u32`/`f32` 4,
//!   `i64`/`u64`/`f64` 8; a `natType` is 8 bytes on every target; an index `idx[n]` is the
//!   code's index type, 4 or 8 bytes ([`IndexWidth`]: 8 in C and OpenMP, either on GPUs);
//! * a vector `vec[t, k]` of numbers (`k` a power of two): `k` lanes of `t` back to back,
//!   aligned to its size where that is at most 16 bytes (a GCC vector, OpenCL's and CUDA's
//!   `float4`); a wider vector alone takes `k` lanes, but its alignment is the C compiler's
//!   choice (GCC: 16 bytes without AVX, 32 with it, 64 with AVX-512), so no struct holding
//!   one is laid out here except by [`gpu_layout`] (OpenCL C aligns every vector to its
//!   size);
//! * a pair: a C struct `{ fst; snd; }`, each field at the next multiple of its alignment,
//!   the size rounded up to the larger alignment.
//!
//! Every scalar is stored in host byte order as the C compiler stores it ([`encode_elements`],
//! [`decode_elements`]): integers two's complement, floats IEEE 754, `bool` as one byte 0
//! or 1. Padding bytes are zero. What cannot be laid out is an [`AbiError`], never a guess.

use std::fmt;

use rise::interp::Scalar;
use rise::{DataType, ScalarType};

/// The width of the index type of generated code, which `idx[n]` data is stored in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum IndexWidth {
    /// 32-bit `int` indices (GPU runs whose sizes allow them).
    Bits32,
    /// 64-bit indices (C and OpenMP always; GPU runs whose sizes need them).
    Bits64,
}

impl IndexWidth {
    /// The bytes an index takes.
    pub fn bytes(self) -> u64 {
        match self {
            IndexWidth::Bits32 => 4,
            IndexWidth::Bits64 => 8,
        }
    }

    /// The width of indices `bytes` wide (4 or 8).
    pub fn of_bytes(bytes: usize) -> Option<IndexWidth> {
        match bytes {
            4 => Some(IndexWidth::Bits32),
            8 => Some(IndexWidth::Bits64),
            _ => None,
        }
    }

    /// The build option that selects this width in GPU code (none for 32 bits).
    pub fn build_option(self) -> Option<String> {
        match self {
            IndexWidth::Bits32 => None,
            IndexWidth::Bits64 => Some(format!("-D{}", crate::ast::INDEX_64_MACRO)),
        }
    }
}

/// The bytes of a `natType` value on every target, whatever the index width.
pub const NAT_BYTES: u64 = 8;

/// The widest vector, in bytes, whose alignment every target agrees on (its size).
pub const MAX_ALIGNED_VECTOR_BYTES: u64 = 16;

/// The size and alignment of a C value, in bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Layout {
    /// The size (a multiple of the alignment): the distance between two elements of an array.
    pub size: u64,
    /// The alignment.
    pub align: u64,
}

/// One scalar of an element: where it lies and its type.
#[derive(Clone, Debug, PartialEq)]
pub struct Field {
    /// The byte offset from the start of the element.
    pub offset: u64,
    /// A scalar type, `idx[n]` or `natType`.
    pub ty: DataType,
}

/// Why data cannot be laid out, or a value not encoded.
#[derive(Clone, Debug, PartialEq)]
pub enum AbiError {
    /// The type is not one C value (an array, a pair holding one, a type variable).
    NotFlat(DataType),
    /// The vector's lane count is no positive constant power of two (the reason says which).
    Lanes(DataType, String),
    /// The vector's lanes are not numbers (`bool`, pairs, vectors).
    LaneType(DataType),
    /// A vector wider than [`MAX_ALIGNED_VECTOR_BYTES`] whose alignment is asked (alone,
    /// `within` is `None`) or that a pair holds (`within`, the outermost pair).
    WideVector {
        /// The vector.
        vector: DataType,
        /// The pair holding it.
        within: Option<DataType>,
    },
    /// A value that is not of the type of its field (or does not fit it).
    Value {
        /// The field's type.
        ty: DataType,
        /// The value, as the interpreter prints it.
        value: String,
    },
    /// A number of bytes or scalars that is no whole number of elements.
    Length(String),
}

impl fmt::Display for AbiError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AbiError::NotFlat(t) => write!(
                f,
                "`{t}` is not one C value (a scalar, a vector of numbers or a tuple of those)"
            ),
            AbiError::Lanes(t, why) => write!(f, "`{t}` {why}"),
            AbiError::LaneType(t) => write!(f, "`{t}`: the lanes of a vector must be numbers"),
            AbiError::WideVector {
                vector,
                within: Some(pair),
            } => write!(
                f,
                "the tuple `{pair}` holds the vector `{vector}` of more than \
                 {MAX_ALIGNED_VECTOR_BYTES} bytes, which C aligns as its compiler's flags say \
                 (GCC: a 32-byte vector to 16 bytes without AVX, to 32 with it), so shine does \
                 not lay out its struct on any target; not supported yet (an array of such \
                 vectors outside a tuple is)"
            ),
            AbiError::WideVector {
                vector,
                within: None,
            } => write!(
                f,
                "the vector `{vector}` has more than {MAX_ALIGNED_VECTOR_BYTES} bytes: C \
                 aligns it as its compiler's flags say"
            ),
            AbiError::Value { ty, value } => {
                write!(f, "the value {value} is not a value of type `{ty}` here")
            }
            AbiError::Length(why) => f.write_str(why),
        }
    }
}

impl std::error::Error for AbiError {}

/// How vectors wider than [`MAX_ALIGNED_VECTOR_BYTES`] are aligned.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum WideVectors {
    /// As the C compiler's flags say: not known here, an error.
    Refused,
    /// To their size (OpenCL C; the largest alignment any C compiler gives them).
    AlignedToSize,
}

/// The size and alignment of flat data `elem`, the same on every target: an error for a
/// vector of more than [`MAX_ALIGNED_VECTOR_BYTES`] (alone or in a pair).
pub fn layout(elem: &DataType, width: IndexWidth) -> Result<Layout, AbiError> {
    layout_in(elem, width, WideVectors::Refused)
}

/// The layout of flat data `elem` in OpenCL C and CUDA, where every vector is aligned to its
/// size. It is also the most room the value takes in C under any compiler flags (no C
/// compiler aligns a vector to more than its size).
pub fn gpu_layout(elem: &DataType, width: IndexWidth) -> Result<Layout, AbiError> {
    layout_in(elem, width, WideVectors::AlignedToSize)
}

/// The bytes one element of flat data `elem` takes in a buffer (`sizeof`): [`layout`]'s
/// size, which a vector alone has whatever its alignment.
pub fn size_of(elem: &DataType, width: IndexWidth) -> Result<u64, AbiError> {
    match elem {
        DataType::Vector(n, lane) => Ok(vector_layout(elem, n, lane, width)?.size),
        _ => Ok(layout(elem, width)?.size),
    }
}

/// The byte offsets of the fields `fst` and `snd` of the pair `pair`.
pub fn pair_offsets(pair: &DataType, width: IndexWidth) -> Result<(u64, u64), AbiError> {
    let DataType::Pair(a, b) = pair else {
        return Err(AbiError::NotFlat(pair.clone()));
    };
    pair_parts(pair, a, b, width, WideVectors::Refused).map(|(_, snd)| (0, snd))
}

/// The scalars of an element of flat data `elem` with their offsets, depth first (`((a, b),
/// c)`: `a`, `b`, `c`; `vec[f32, 4]`: its four lanes).
pub fn fields(elem: &DataType, width: IndexWidth) -> Result<Vec<Field>, AbiError> {
    size_of(elem, width)?;
    let mut out = Vec::new();
    collect_fields(elem, 0, width, &mut out)?;
    Ok(out)
}

fn layout_in(elem: &DataType, width: IndexWidth, wide: WideVectors) -> Result<Layout, AbiError> {
    match elem {
        DataType::Pair(a, b) => pair_parts(elem, a, b, width, wide).map(|(whole, _)| whole),
        DataType::Vector(n, lane) => {
            let v = vector_layout(elem, n, lane, width)?;
            if v.size > MAX_ALIGNED_VECTOR_BYTES && wide == WideVectors::Refused {
                return Err(AbiError::WideVector {
                    vector: elem.clone(),
                    within: None,
                });
            }
            Ok(v)
        }
        _ => scalar_layout(elem, width),
    }
}

/// A scalar, an index or a natural.
fn scalar_layout(t: &DataType, width: IndexWidth) -> Result<Layout, AbiError> {
    let size = match t {
        DataType::Scalar(s) => scalar_bytes(*s),
        DataType::NatType => NAT_BYTES,
        DataType::Index(_) => width.bytes(),
        _ => return Err(AbiError::NotFlat(t.clone())),
    };
    Ok(Layout { size, align: size })
}

fn scalar_bytes(s: ScalarType) -> u64 {
    u64::from(s.bits().div_ceil(8))
}

/// A vector aligned to its size.
fn vector_layout(
    vector: &DataType,
    lanes: &arith::Nat,
    lane: &DataType,
    width: IndexWidth,
) -> Result<Layout, AbiError> {
    if matches!(lane, DataType::Scalar(ScalarType::Bool)) {
        return Err(AbiError::LaneType(vector.clone()));
    }
    let lane = match lane {
        DataType::Scalar(_) | DataType::NatType | DataType::Index(_) => scalar_layout(lane, width)?,
        _ => return Err(AbiError::LaneType(vector.clone())),
    };
    let size = lane.size * lane_count(vector, lanes)?;
    Ok(Layout { size, align: size })
}

/// The constant, power-of-two number of lanes of `vector`.
fn lane_count(vector: &DataType, lanes: &arith::Nat) -> Result<u64, AbiError> {
    let lanes = lanes
        .as_cst()
        .and_then(|c| u64::try_from(c).ok())
        .filter(|&c| c > 0)
        .ok_or_else(|| {
            AbiError::Lanes(
                vector.clone(),
                "has no constant positive number of lanes".into(),
            )
        })?;
    if !lanes.is_power_of_two() {
        return Err(AbiError::Lanes(
            vector.clone(),
            format!(
                "has {lanes} lanes; compiled code has vectors of a power-of-two number of \
                 lanes only (OpenCL's 3-lane vectors take the room of 4)"
            ),
        ));
    }
    Ok(lanes)
}

/// The layout of the pair `pair` of `a` and `b`, and the offset of `b`.
fn pair_parts(
    pair: &DataType,
    a: &DataType,
    b: &DataType,
    width: IndexWidth,
    wide: WideVectors,
) -> Result<(Layout, u64), AbiError> {
    let in_pair = |e: AbiError| match e {
        AbiError::WideVector { vector, .. } => AbiError::WideVector {
            vector,
            within: Some(pair.clone()),
        },
        e => e,
    };
    let fst = layout_in(a, width, wide).map_err(in_pair)?;
    let snd = layout_in(b, width, wide).map_err(in_pair)?;
    let align = fst.align.max(snd.align);
    let offset = fst.size.next_multiple_of(snd.align);
    let size = (offset + snd.size).next_multiple_of(align);
    Ok((Layout { size, align }, offset))
}

fn collect_fields(
    t: &DataType,
    base: u64,
    width: IndexWidth,
    out: &mut Vec<Field>,
) -> Result<(), AbiError> {
    match t {
        DataType::Pair(a, b) => {
            let (_, snd) = pair_offsets(t, width)?;
            collect_fields(a, base, width, out)?;
            collect_fields(b, base + snd, width, out)
        }
        DataType::Vector(n, lane) => {
            let step = scalar_layout(lane, width)?.size;
            for k in 0..lane_count(t, n)? {
                collect_fields(lane, base + k * step, width, out)?;
            }
            Ok(())
        }
        _ => {
            scalar_layout(t, width)?;
            out.push(Field {
                offset: base,
                ty: t.clone(),
            });
            Ok(())
        }
    }
}

/// The bytes of a buffer of elements of flat data `elem`: `scalars` holds their scalars,
/// element by element, each element's as [`fields`] orders them (indices and naturals as
/// any integer scalar).
pub fn encode_elements(
    elem: &DataType,
    scalars: &[Scalar],
    width: IndexWidth,
) -> Result<Vec<u8>, AbiError> {
    let fields = fields(elem, width)?;
    let size = usize_of(size_of(elem, width)?)?;
    let per = fields.len().max(1);
    if scalars.len() % per != 0 {
        return Err(AbiError::Length(format!(
            "{} scalars are no whole number of elements of `{elem}` ({per} each)",
            scalars.len()
        )));
    }
    let mut bytes = vec![0u8; scalars.len() / per * size];
    for (element, out) in scalars.chunks(per).zip(bytes.chunks_exact_mut(size.max(1))) {
        for (field, &value) in fields.iter().zip(element) {
            let at = usize_of(field.offset)?;
            encode_into(&field.ty, value, width, &mut out[at..])?;
        }
    }
    Ok(bytes)
}

/// The scalars of the `count` elements of flat data `elem` in `bytes`, laid out as
/// [`encode_elements`] writes them (indices and naturals as `i64`).
pub fn decode_elements(
    elem: &DataType,
    bytes: &[u8],
    count: usize,
    width: IndexWidth,
) -> Result<Vec<Scalar>, AbiError> {
    let fields = fields(elem, width)?;
    let size = usize_of(size_of(elem, width)?)?;
    if Some(bytes.len()) != count.checked_mul(size) {
        return Err(AbiError::Length(format!(
            "{} bytes hold no {count} elements of `{elem}` ({size} bytes each)",
            bytes.len()
        )));
    }
    let mut out = Vec::with_capacity(count * fields.len());
    for element in bytes.chunks_exact(size.max(1)).take(count) {
        for field in &fields {
            out.push(decode_at(
                &field.ty,
                &element[usize_of(field.offset)?..],
                width,
            )?);
        }
    }
    Ok(out)
}

fn usize_of(n: u64) -> Result<usize, AbiError> {
    usize::try_from(n).map_err(|_| AbiError::Length(format!("{n} bytes do not fit in memory")))
}

/// Writes `value`, of the scalar, index or natural type `ty`, at the start of `out`.
fn encode_into(
    ty: &DataType,
    value: Scalar,
    width: IndexWidth,
    out: &mut [u8],
) -> Result<(), AbiError> {
    let bytes = encode(ty, value, width)?;
    match out.get_mut(..bytes.len()) {
        Some(place) => place.copy_from_slice(&bytes),
        None => return Err(AbiError::Length(format!("no room for a `{ty}`"))),
    }
    Ok(())
}

/// The bytes of `value` as a C value of the scalar, index or natural type `ty`. An index
/// or a natural may be given as any integer scalar and must fit the type; a scalar must be
/// of the type (`int` and `i32` are one C type).
pub fn encode(ty: &DataType, value: Scalar, width: IndexWidth) -> Result<Vec<u8>, AbiError> {
    let wrong = || AbiError::Value {
        ty: ty.clone(),
        value: value.to_string(),
    };
    let int = |bytes: u64| -> Result<Vec<u8>, AbiError> {
        let v = value.as_i128().ok_or_else(wrong)?;
        match bytes {
            4 => i32::try_from(v).map(|v| v.to_ne_bytes().to_vec()),
            _ => i64::try_from(v).map(|v| v.to_ne_bytes().to_vec()),
        }
        .map_err(|_| wrong())
    };
    match ty {
        DataType::Index(_) => int(width.bytes()),
        DataType::NatType => int(NAT_BYTES),
        DataType::Scalar(t) if same_c_type(*t, value.ty()) => Ok(scalar_bytes_of(value)),
        _ => Err(wrong()),
    }
}

/// Whether values of `value` are stored as C values of `field` (`int` is `int32_t`).
fn same_c_type(field: ScalarType, value: ScalarType) -> bool {
    let int32 = |t| matches!(t, ScalarType::Int | ScalarType::I32);
    field == value || (int32(field) && int32(value))
}

fn scalar_bytes_of(value: Scalar) -> Vec<u8> {
    match value {
        Scalar::Bool(b) => vec![u8::from(b)],
        Scalar::Int(x) | Scalar::I32(x) => x.to_ne_bytes().to_vec(),
        Scalar::I8(x) => x.to_ne_bytes().to_vec(),
        Scalar::I16(x) => x.to_ne_bytes().to_vec(),
        Scalar::I64(x) => x.to_ne_bytes().to_vec(),
        Scalar::U8(x) => vec![x],
        Scalar::U16(x) => x.to_ne_bytes().to_vec(),
        Scalar::U32(x) => x.to_ne_bytes().to_vec(),
        Scalar::U64(x) => x.to_ne_bytes().to_vec(),
        Scalar::F16(x) => x.to_ne_bytes().to_vec(),
        Scalar::Bf16(x) => x.to_ne_bytes().to_vec(),
        Scalar::F32(x) => x.to_ne_bytes().to_vec(),
        Scalar::F64(x) => x.to_ne_bytes().to_vec(),
    }
}

/// The value of the scalar, index or natural type `ty` at the start of `bytes` (indices
/// and naturals as `i64`).
pub fn decode(ty: &DataType, bytes: &[u8], width: IndexWidth) -> Result<Scalar, AbiError> {
    let size = usize_of(scalar_layout(ty, width)?.size)?;
    let b = bytes
        .get(..size)
        .ok_or_else(|| AbiError::Length(format!("{} bytes hold no `{ty}`", bytes.len())))?;
    decode_at(ty, b, width)
}

/// [`decode`] where `bytes` has room for the value.
fn decode_at(ty: &DataType, bytes: &[u8], width: IndexWidth) -> Result<Scalar, AbiError> {
    let short = || AbiError::Length(format!("{} bytes hold no `{ty}`", bytes.len()));
    let int = |bytes4: bool| -> Option<Scalar> {
        Some(Scalar::I64(if bytes4 {
            i64::from(i32::from_ne_bytes(first(bytes)?))
        } else {
            i64::from_ne_bytes(first(bytes)?)
        }))
    };
    let value = match ty {
        DataType::Index(_) => int(width == IndexWidth::Bits32),
        DataType::NatType => int(false),
        DataType::Scalar(t) => decode_scalar(*t, bytes),
        _ => return Err(AbiError::NotFlat(ty.clone())),
    };
    value.ok_or_else(short)
}

/// The first `N` bytes of `b`.
fn first<const N: usize>(b: &[u8]) -> Option<[u8; N]> {
    b.get(..N).and_then(|b| b.try_into().ok())
}

fn decode_scalar(t: ScalarType, b: &[u8]) -> Option<Scalar> {
    Some(match t {
        ScalarType::Bool => Scalar::Bool(*b.first()? != 0),
        ScalarType::Int => Scalar::Int(i32::from_ne_bytes(first(b)?)),
        ScalarType::I32 => Scalar::I32(i32::from_ne_bytes(first(b)?)),
        ScalarType::I8 => Scalar::I8(i8::from_ne_bytes(first(b)?)),
        ScalarType::I16 => Scalar::I16(i16::from_ne_bytes(first(b)?)),
        ScalarType::I64 => Scalar::I64(i64::from_ne_bytes(first(b)?)),
        ScalarType::U8 => Scalar::U8(*b.first()?),
        ScalarType::U16 => Scalar::U16(u16::from_ne_bytes(first(b)?)),
        ScalarType::U32 => Scalar::U32(u32::from_ne_bytes(first(b)?)),
        ScalarType::U64 => Scalar::U64(u64::from_ne_bytes(first(b)?)),
        ScalarType::F16 => Scalar::F16(half::f16::from_ne_bytes(first(b)?)),
        ScalarType::Bf16 => Scalar::Bf16(half::bf16::from_ne_bytes(first(b)?)),
        ScalarType::F32 => Scalar::F32(f32::from_ne_bytes(first(b)?)),
        ScalarType::F64 => Scalar::F64(f64::from_ne_bytes(first(b)?)),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use IndexWidth::{Bits32, Bits64};

    const WIDTHS: [IndexWidth; 2] = [Bits32, Bits64];

    fn s(t: ScalarType) -> DataType {
        DataType::Scalar(t)
    }

    fn pair(a: DataType, b: DataType) -> DataType {
        DataType::pair(a, b)
    }

    fn vec(t: DataType, lanes: i64) -> DataType {
        DataType::vector(t, lanes)
    }

    fn sa(t: &DataType, w: IndexWidth) -> (u64, u64) {
        let l = layout(t, w).unwrap();
        (l.size, l.align)
    }

    #[test]
    fn scalars_take_their_c_size_at_both_widths() {
        use ScalarType::*;
        let cases = [
            (Bool, 1),
            (I8, 1),
            (U8, 1),
            (I16, 2),
            (U16, 2),
            (F16, 2),
            (Bf16, 2),
            (Int, 4),
            (I32, 4),
            (U32, 4),
            (F32, 4),
            (I64, 8),
            (U64, 8),
            (F64, 8),
        ];
        for w in WIDTHS {
            for (t, bytes) in cases {
                assert_eq!(sa(&s(t), w), (bytes, bytes), "{t:?}");
                assert_eq!(size_of(&s(t), w).unwrap(), bytes);
            }
            assert_eq!(sa(&DataType::NatType, w), (8, 8));
        }
    }

    #[test]
    fn indices_take_the_index_width() {
        let idx = DataType::Index(7.into());
        assert_eq!(sa(&idx, Bits32), (4, 4));
        assert_eq!(sa(&idx, Bits64), (8, 8));
        assert_eq!(sa(&vec(idx.clone(), 2), Bits32), (8, 8));
        assert_eq!(sa(&vec(idx, 2), Bits64), (16, 16));
    }

    #[test]
    fn vectors_are_their_lanes_aligned_to_their_size() {
        for w in WIDTHS {
            assert_eq!(sa(&vec(DataType::f32(), 4), w), (16, 16));
            assert_eq!(sa(&vec(s(ScalarType::I8), 16), w), (16, 16));
            assert_eq!(sa(&vec(s(ScalarType::F64), 2), w), (16, 16));
            assert_eq!(sa(&vec(s(ScalarType::I32), 2), w), (8, 8));
            assert_eq!(sa(&vec(DataType::NatType, 2), w), (16, 16));
            // a wide vector alone: its size, not its alignment
            let f8 = vec(DataType::f32(), 8);
            assert_eq!(size_of(&f8, w).unwrap(), 32);
            assert!(matches!(
                layout(&f8, w),
                Err(AbiError::WideVector { within: None, .. })
            ));
            assert_eq!(sa_gpu(&f8, w), (32, 32));
            let offsets: Vec<u64> = fields(&f8, w).unwrap().iter().map(|f| f.offset).collect();
            assert_eq!(offsets, [0, 4, 8, 12, 16, 20, 24, 28]);
        }
    }

    fn sa_gpu(t: &DataType, w: IndexWidth) -> (u64, u64) {
        let l = gpu_layout(t, w).unwrap();
        (l.size, l.align)
    }

    #[test]
    fn vectors_the_code_has_not_are_errors() {
        let v3 = vec(DataType::f32(), 3);
        let err = layout(&v3, Bits64).unwrap_err().to_string();
        assert!(err.contains("`vec[f32, 3]` has 3 lanes"), "{err}");
        let n = arith::Nat::var(&arith::Var::new("n"));
        let vn = DataType::vector(DataType::f32(), n);
        assert!(matches!(size_of(&vn, Bits64), Err(AbiError::Lanes(..))));
        for lane in [
            s(ScalarType::Bool),
            pair(DataType::f32(), DataType::f32()),
            vec(DataType::f32(), 2),
        ] {
            let v = vec(lane, 2);
            assert!(matches!(size_of(&v, Bits64), Err(AbiError::LaneType(_))));
        }
    }

    #[test]
    fn pairs_are_c_structs_with_c_padding() {
        for w in WIDTHS {
            let t = pair(s(ScalarType::I8), s(ScalarType::F64));
            assert_eq!(sa(&t, w), (16, 8));
            assert_eq!(pair_offsets(&t, w).unwrap(), (0, 8));
            // ((f32, i8), i16): the inner struct is 8 bytes aligned to 4, the i16 at 8
            let inner = pair(DataType::f32(), s(ScalarType::I8));
            let t = pair(inner, s(ScalarType::I16));
            assert_eq!(sa(&t, w), (12, 4));
            assert_eq!(pair_offsets(&t, w).unwrap(), (0, 8));
            // struct { float4 a; float b; }: 32 bytes, b at 16
            let t = pair(vec(DataType::f32(), 4), DataType::f32());
            assert_eq!(sa(&t, w), (32, 16));
            assert_eq!(pair_offsets(&t, w).unwrap(), (0, 16));
            // struct { int8_t a; double2 v; }: v at 16
            let t = pair(s(ScalarType::I8), vec(s(ScalarType::F64), 2));
            assert_eq!((sa(&t, w), pair_offsets(&t, w).unwrap().1), ((32, 16), 16));
            // natType is 8 bytes at both widths
            let t = pair(DataType::NatType, DataType::f32());
            assert_eq!(sa(&t, w), (16, 8));
        }
        // an index: the index width decides
        let t = pair(DataType::Index(5.into()), DataType::f32());
        assert_eq!(sa(&t, Bits32), (8, 4));
        assert_eq!(sa(&t, Bits64), (16, 8));
        let t = pair(s(ScalarType::U8), DataType::Index(5.into()));
        assert_eq!(pair_offsets(&t, Bits32).unwrap(), (0, 4));
        assert_eq!(pair_offsets(&t, Bits64).unwrap(), (0, 8));
    }

    #[test]
    fn fields_are_the_scalars_in_order_with_their_offsets() {
        let t = pair(
            DataType::f32(),
            pair(s(ScalarType::I8), DataType::Index(4.into())),
        );
        for (w, want) in [(Bits32, [0, 4, 8]), (Bits64, [0, 8, 16])] {
            let f = fields(&t, w).unwrap();
            assert_eq!(f.iter().map(|f| f.offset).collect::<Vec<_>>(), want);
            assert_eq!(f[2].ty, DataType::Index(4.into()));
        }
        let t = pair(
            pair(vec(DataType::f32(), 4), DataType::f32()),
            DataType::f32(),
        );
        let f = fields(&t, Bits64).unwrap();
        assert_eq!(
            f.iter().map(|f| f.offset).collect::<Vec<_>>(),
            [0, 4, 8, 12, 16, 32]
        );
        assert_eq!(size_of(&t, Bits64).unwrap(), 48);
    }

    #[test]
    fn a_pair_holding_a_wide_vector_is_refused_except_on_gpus() {
        let f8 = vec(DataType::f32(), 8);
        let t = pair(DataType::f32(), pair(DataType::f32(), f8.clone()));
        for w in WIDTHS {
            let err = layout(&t, w).unwrap_err();
            assert_eq!(
                err,
                AbiError::WideVector {
                    vector: f8.clone(),
                    within: Some(t.clone())
                }
            );
            assert!(err.to_string().contains("holds the vector `vec[f32, 8]`"));
            assert!(size_of(&t, w).is_err() && fields(&t, w).is_err());
            // OpenCL C: struct { float a; struct { float b; float8 v; } c; }
            assert_eq!(sa_gpu(&t, w), (96, 32));
        }
    }

    #[test]
    fn what_is_no_c_value_is_an_error() {
        let n = arith::Nat::var(&arith::Var::new("n"));
        for t in [
            DataType::array(4, DataType::f32()),
            pair(DataType::array(n, DataType::f32()), DataType::f32()),
            DataType::Var("d".into()),
        ] {
            for w in WIDTHS {
                assert!(matches!(layout(&t, w), Err(AbiError::NotFlat(_))), "{t}");
                assert!(size_of(&t, w).is_err() && fields(&t, w).is_err());
            }
        }
    }

    #[test]
    fn scalars_encode_in_host_order_and_decode_back() {
        let cases = [
            (s(ScalarType::Bool), Scalar::Bool(true), vec![1u8]),
            (s(ScalarType::I8), Scalar::I8(-2), vec![0xfe]),
            (
                s(ScalarType::U16),
                Scalar::U16(0x0102),
                0x0102u16.to_ne_bytes().to_vec(),
            ),
            (s(ScalarType::Int), Scalar::I32(-1), vec![0xff; 4]),
            (
                s(ScalarType::F32),
                Scalar::F32(1.5),
                1.5f32.to_ne_bytes().to_vec(),
            ),
            (
                s(ScalarType::F64),
                Scalar::F64(-0.25),
                (-0.25f64).to_ne_bytes().to_vec(),
            ),
            (
                s(ScalarType::F16),
                Scalar::F16(half::f16::from_f32(2.0)),
                half::f16::from_f32(2.0).to_ne_bytes().to_vec(),
            ),
            (
                DataType::NatType,
                Scalar::I64(1 << 40),
                (1i64 << 40).to_ne_bytes().to_vec(),
            ),
        ];
        for w in WIDTHS {
            for (ty, value, bytes) in &cases {
                assert_eq!(&encode(ty, *value, w).unwrap(), bytes, "{ty}");
                let back = decode(ty, bytes, w).unwrap();
                let int_as_i32 = matches!(value, Scalar::I32(_)) && *ty == s(ScalarType::Int);
                if !int_as_i32 {
                    assert_eq!(back.to_string(), value.to_string(), "{ty}");
                }
            }
        }
    }

    #[test]
    fn indices_encode_at_the_index_width_and_must_fit_it() {
        let idx = DataType::Index(10.into());
        assert_eq!(
            encode(&idx, Scalar::I64(3), Bits32).unwrap(),
            3i32.to_ne_bytes()
        );
        assert_eq!(
            encode(&idx, Scalar::I64(3), Bits64).unwrap(),
            3i64.to_ne_bytes()
        );
        assert_eq!(
            decode(&idx, &(-1i32).to_ne_bytes(), Bits32).unwrap(),
            Scalar::I64(-1)
        );
        assert!(matches!(
            encode(&idx, Scalar::I64(1 << 40), Bits32),
            Err(AbiError::Value { .. })
        ));
        assert!(encode(&idx, Scalar::F32(1.0), Bits64).is_err());
        // a scalar must be of its field's type
        assert!(encode(&DataType::f32(), Scalar::F64(1.0), Bits64).is_err());
        assert!(decode(&DataType::f32(), &[0, 0], Bits64).is_err());
    }

    #[test]
    fn elements_encode_with_zero_padding_and_decode_back() {
        let t = pair(s(ScalarType::I8), DataType::Index(4.into()));
        let scalars = [
            Scalar::I8(-3),
            Scalar::I64(2),
            Scalar::I8(7),
            Scalar::I64(3),
        ];
        for w in WIDTHS {
            let bytes = encode_elements(&t, &scalars, w).unwrap();
            let size = size_of(&t, w).unwrap() as usize;
            assert_eq!(bytes.len(), 2 * size);
            assert_eq!(
                &bytes[1..w.bytes() as usize],
                vec![0; w.bytes() as usize - 1]
            );
            assert_eq!(decode_elements(&t, &bytes, 2, w).unwrap(), scalars);
            assert!(decode_elements(&t, &bytes, 3, w).is_err());
        }
        assert!(encode_elements(&t, &scalars[..3], Bits64).is_err());
    }
}
