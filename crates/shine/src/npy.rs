//! NumPy `.npy` files in and out: the array format of the command line.
//!
//! An `.npy` file holds one array: a scalar type (`dtype`), a shape and the
//! elements in C (row-major) order. A 0-d array is a scalar.

use npyz::WriterBuilder;
use rise::interp::{Flat, Scalar};
use rise::ScalarType;
use std::fs::File;
use std::io::{BufReader, BufWriter};
use std::path::Path;

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
        ScalarType::F32 => "<f4",
        ScalarType::F64 => "<f8",
    }
}

/// The most elements an array read from `.npy` may have.
pub const MAX_ELEMENTS: u64 = 1 << 31;

/// Rejects a header whose shape does not fit in memory before the `.npy` reader
/// sees it (it computes the element count without overflow checks).
fn check_declared_size(path: &Path) -> Result<(), String> {
    use std::io::Read;
    let mut head = Vec::new();
    // Unreadable files are left to the reader, which says what is wrong.
    let Ok(file) = File::open(path) else {
        return Ok(());
    };
    if file.take(1 << 16).read_to_end(&mut head).is_err() {
        return Ok(());
    }
    let text = String::from_utf8_lossy(&head);
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
            "`{}` declares {total} elements; at most {MAX_ELEMENTS} are supported",
            path.display()
        ));
    }
    Ok(())
}

/// Fails when the file holds more bytes than its header and `shape` elements of `dtype`.
fn check_no_trailing_data(path: &Path, dtype: &npyz::DType, shape: &[usize]) -> Result<(), String> {
    use std::io::Read;
    let shown = path.display();
    let mut head = [0u8; 12];
    let file = File::open(path).map_err(|e| format!("cannot open `{shown}`: {e}"))?;
    let len = file
        .metadata()
        .map_err(|e| format!("cannot read `{shown}`: {e}"))?
        .len();
    if file.take(12).read_exact(&mut head).is_err() {
        return Ok(()); // a short file: the reader reports it
    }
    let data_offset = match head[6] {
        1 => 10 + u64::from(u16::from_le_bytes([head[8], head[9]])),
        _ => 12 + u64::from(u32::from_le_bytes([head[8], head[9], head[10], head[11]])),
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

/// Reads an `.npy` file.
pub fn read(path: &Path) -> Result<NpyArray, String> {
    let shown = path.display();
    let file = File::open(path).map_err(|e| format!("cannot open `{shown}`: {e}"))?;
    check_declared_size(path)?;
    let npy = npyz::NpyFile::new(BufReader::new(file))
        .map_err(|e| format!("`{shown}` is not a valid .npy file: {e}"))?;
    if npy.order() == npyz::Order::Fortran {
        return Err(format!(
            "`{shown}` is stored in Fortran order; save it in C order (np.ascontiguousarray)"
        ));
    }
    let shape: Vec<usize> = npy.shape().iter().map(|&d| d as usize).collect();
    let descr = match npy.dtype() {
        npyz::DType::Plain(ts) => ts.to_string(),
        other => {
            return Err(format!(
                "`{shown}` has the structured dtype `{}`; only plain numeric arrays are supported",
                other.descr()
            ))
        }
    };
    check_no_trailing_data(path, &npy.dtype(), &shape)?;
    let elem = type_of_descr(&descr).ok_or_else(|| {
        format!("`{shown}` has dtype `{descr}`, which shine does not support (supported: bool, int8..64, uint8..64, float16/32/64, little-endian)")
    })?;
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
    Ok(NpyArray { elem, shape, data })
}

macro_rules! write_as {
    ($path:expr, $shape:expr, $data:expr, $ty:ty, $variant:ident) => {{
        let values: Vec<$ty> = $data
            .iter()
            .map(|s| match s {
                Scalar::$variant(v) => Ok(*v),
                other => Err(format!("mixed element types in output: {other:?}")),
            })
            .collect::<Result<_, _>>()?;
        write_values($path, $shape, &values)
    }};
}

fn write_values<T: npyz::AutoSerialize + Copy>(
    path: &Path,
    shape: &[u64],
    values: &[T],
) -> Result<(), String> {
    let shown = path.display();
    let err = |e: std::io::Error| format!("cannot write `{shown}`: {e}");
    let file = File::create(path).map_err(err)?;
    let mut writer = npyz::WriteOptions::<T>::new()
        .default_dtype()
        .shape(shape)
        .writer(BufWriter::new(file))
        .begin_nd()
        .map_err(err)?;
    writer.extend(values.iter().copied()).map_err(err)?;
    writer.finish().map_err(err)
}

/// Writes an `.npy` file.
pub fn write(path: &Path, array: &NpyArray) -> Result<(), String> {
    let shape: Vec<u64> = array.shape.iter().map(|&d| d as u64).collect();
    let data = &array.data;
    match array.elem {
        ScalarType::Bool => write_as!(path, &shape, data, bool, Bool),
        ScalarType::Int => write_as!(path, &shape, data, i32, Int),
        ScalarType::I8 => write_as!(path, &shape, data, i8, I8),
        ScalarType::I16 => write_as!(path, &shape, data, i16, I16),
        ScalarType::I32 => write_as!(path, &shape, data, i32, I32),
        ScalarType::I64 => write_as!(path, &shape, data, i64, I64),
        ScalarType::U8 => write_as!(path, &shape, data, u8, U8),
        ScalarType::U16 => write_as!(path, &shape, data, u16, U16),
        ScalarType::U32 => write_as!(path, &shape, data, u32, U32),
        ScalarType::U64 => write_as!(path, &shape, data, u64, U64),
        ScalarType::F16 => write_as!(path, &shape, data, half::f16, F16),
        ScalarType::F32 => write_as!(path, &shape, data, f32, F32),
        ScalarType::F64 => write_as!(path, &shape, data, f64, F64),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roundtrips_every_type() {
        let dir = tempfile::tempdir().unwrap();
        for &t in ScalarType::ALL {
            let zero = rise::interp::Scalar::zero(t);
            let array = NpyArray {
                elem: if t == ScalarType::Int {
                    ScalarType::I32
                } else {
                    t
                },
                shape: vec![2, 3],
                data: vec![
                    if t == ScalarType::Int {
                        Scalar::I32(0)
                    } else {
                        zero
                    };
                    6
                ],
            };
            let path = dir.path().join(format!("{}.npy", t.name()));
            write(&path, &array).unwrap();
            assert_eq!(read(&path).unwrap(), array, "{}", t.name());
        }
    }

    #[test]
    fn rejects_garbage() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("bad.npy");
        std::fs::write(&path, b"not numpy").unwrap();
        assert!(read(&path).unwrap_err().contains("not a valid .npy"));
        assert!(read(&dir.path().join("missing.npy"))
            .unwrap_err()
            .contains("cannot open"));
    }

    #[test]
    fn rejects_trailing_data() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.npy");
        let array = NpyArray {
            elem: ScalarType::F32,
            shape: vec![3],
            data: vec![Scalar::F32(1.0); 3],
        };
        write(&path, &array).unwrap();
        assert_eq!(read(&path).unwrap(), array);
        let mut bytes = std::fs::read(&path).unwrap();
        bytes.extend([0u8; 5]);
        std::fs::write(&path, bytes).unwrap();
        let err = read(&path).unwrap_err();
        assert!(err.contains("has 5 bytes after its last element"), "{err}");
    }
}
