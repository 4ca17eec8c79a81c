//! NumPy `.npy` files, valid and corrupted: bad magic, wrong or malformed header dicts,
//! shapes that disagree with the data, truncated and trailing data, huge and negative
//! shapes, unsupported dtypes, Fortran order.

use crate::rng::Rng;

/// The `.npy` dtype of a RISE scalar type (`f32` is `<f4`).
pub fn descr(elem: &str) -> &'static str {
    match elem {
        "f64" => "<f8",
        "f16" => "<f2",
        "bool" => "|b1",
        "i8" => "|i1",
        "u8" => "|u1",
        "i16" => "<i2",
        "u16" => "<u2",
        "i32" | "int" => "<i4",
        "u32" => "<u4",
        "i64" => "<i8",
        "u64" => "<u8",
        _ => "<f4",
    }
}

/// The bytes of one element of `descr` (`<f4` is 4).
fn width(descr: &str) -> usize {
    descr[2..].parse().unwrap_or(4)
}

/// A valid file of `shape` with elements of dtype `descr`: small values, now and then edge
/// values (NaN, infinities, floats beyond the integer ranges, 64-bit integers above 2^32) or
/// random bits (bools that are neither 0 nor 1).
pub fn valid(rng: &mut Rng, descr: &str, shape: &[u64]) -> Vec<u8> {
    let count: u64 = shape.iter().product();
    let mut bytes = header(descr, false, &shape_text(shape));
    bytes.extend(data(rng, descr, count as usize));
    bytes
}

/// The header of a version 1.0 file: magic, version, length, the padded dict.
fn header(descr: &str, fortran: bool, shape: &str) -> Vec<u8> {
    let order = if fortran { "True" } else { "False" };
    let dict = format!("{{'descr': '{descr}', 'fortran_order': {order}, 'shape': ({shape}), }}");
    frame(1, dict.as_bytes())
}

/// Magic, version `major`.0, the header length (2 bytes in 1.0, 4 after) and the header
/// padded with spaces and a newline to a multiple of 64.
fn frame(major: u8, dict: &[u8]) -> Vec<u8> {
    let prefix = if major == 1 { 10 } else { 12 };
    let mut dict = dict.to_vec();
    while !(prefix + dict.len() + 1).is_multiple_of(64) {
        dict.push(b' ');
    }
    dict.push(b'\n');
    let mut bytes = b"\x93NUMPY".to_vec();
    bytes.extend([major, 0]);
    if major == 1 {
        bytes.extend((dict.len() as u16).to_le_bytes());
    } else {
        bytes.extend((dict.len() as u32).to_le_bytes());
    }
    bytes.extend(dict);
    bytes
}

/// `(2, 3)` as `2, 3`, `(4,)` as `4,`, `()` as nothing.
fn shape_text(shape: &[u64]) -> String {
    match shape {
        [] => String::new(),
        [n] => format!("{n},"),
        _ => shape
            .iter()
            .map(u64::to_string)
            .collect::<Vec<_>>()
            .join(", "),
    }
}

/// `count` elements of `descr`, little-endian.
fn data(rng: &mut Rng, descr: &str, count: usize) -> Vec<u8> {
    let w = width(descr);
    let raw = rng.chance(5);
    let mut bytes = Vec::with_capacity(count * w);
    for _ in 0..count {
        if raw {
            bytes.extend(&rng.bits().to_le_bytes()[..w]);
            continue;
        }
        let small = rng.range(0, 200) as i64 - 100;
        let edge = rng.chance(6);
        match &descr[1..] {
            "f4" if edge => bytes.extend((*rng.pick(EDGE_FLOATS) as f32).to_le_bytes()),
            "f8" if edge => bytes.extend(rng.pick(EDGE_FLOATS).to_le_bytes()),
            "i8" | "u8" if edge => bytes.extend(rng.pick(EDGE_WIDE).to_le_bytes()),
            "f4" => bytes.extend((small as f32 / 50.0).to_le_bytes()),
            "f8" => bytes.extend((small as f64 / 50.0).to_le_bytes()),
            "b1" => bytes.push((small & 1) as u8),
            _ => bytes.extend(&small.to_le_bytes()[..w]),
        }
    }
    bytes
}

/// Float values no integer type holds (casts of them have no value), or only 64-bit ones.
const EDGE_FLOATS: &[f64] = &[
    f64::NAN,
    f64::INFINITY,
    f64::NEG_INFINITY,
    3e9,
    -3e9,
    1e19,
    -1e19,
    1e30,
    255.5,
    -129.0,
];

/// 64-bit integers above 2^32 (`natType` holds them), and the limits.
const EDGE_WIDE: &[i64] = &[
    4_294_967_296,
    4_294_967_301,
    1 << 40,
    -(1 << 33),
    i64::MAX,
    i64::MIN,
];

/// The ways a file is corrupted.
#[derive(Clone, Copy, Debug)]
enum Corruption {
    BadMagic,
    Version,
    HeaderLength,
    WrongDtype,
    FortranOrder,
    ShapeDisagrees,
    Truncated,
    Trailing,
    HugeShape,
    MalformedDict,
    Empty,
}

impl Corruption {
    /// Every corruption, in the order the generator draws from (kept: recorded seeds replay).
    const ALL: [Corruption; 11] = [
        Corruption::BadMagic,
        Corruption::Version,
        Corruption::HeaderLength,
        Corruption::WrongDtype,
        Corruption::FortranOrder,
        Corruption::ShapeDisagrees,
        Corruption::Truncated,
        Corruption::Trailing,
        Corruption::HugeShape,
        Corruption::MalformedDict,
        Corruption::Empty,
    ];
}

const DTYPES: &[&str] = &[
    "<f4", "<f8", "<f2", "|b1", "|i1", "|u1", "<i2", "<u2", "<i4", "<u4", "<i8", "<u8", ">f4",
    ">i8", "<c8", "<c16", "<U3", "|S4", "|O", "<V4", "<f3", "<i16", "", "f4", "<M8[s]",
];

/// A corrupted file meant to hold `shape` elements of `descr`.
pub fn corrupted(rng: &mut Rng, descr: &str, shape: &[u64]) -> Vec<u8> {
    use Corruption::*;
    let count: u64 = shape.iter().product();
    let mut good = valid(rng, descr, shape);
    let header_end = good.len() - count as usize * width(descr);
    let how = *rng.pick(&Corruption::ALL);
    match how {
        BadMagic => {
            let i = rng.below(8);
            good[i] ^= rng.range(1, 255) as u8;
            good
        }
        Version => {
            let dict = &good[10..header_end];
            let major = *rng.pick(&[2u8, 3, 0, 9]);
            let mut bytes = frame(major, dict);
            bytes.extend(&good[header_end..]);
            bytes
        }
        HeaderLength => {
            let old = u16::from_le_bytes([good[8], good[9]]);
            let random = rng.bits() as u16;
            let len = *rng.pick(&[0u16, 1, 63, 0xFFFF, random]);
            let len = if len == old { old.wrapping_add(1) } else { len };
            good[8..10].copy_from_slice(&len.to_le_bytes());
            good
        }
        WrongDtype => {
            let others: Vec<&str> = DTYPES.iter().copied().filter(|d| *d != descr).collect();
            let other = *rng.pick(&others);
            let mut bytes = header(other, false, &shape_text(shape));
            bytes.extend(&good[header_end..]);
            bytes
        }
        FortranOrder => {
            let mut bytes = header(descr, true, &shape_text(shape));
            bytes.extend(&good[header_end..]);
            bytes
        }
        ShapeDisagrees => {
            let mut other: Vec<u64> = shape.to_vec();
            match rng.below(3) {
                0 if !other.is_empty() => {
                    let last = other.len() - 1;
                    other.swap(0, last);
                }
                1 => other.push(rng.range(0, 5)),
                _ if !other.is_empty() => {
                    let i = rng.below(other.len());
                    other[i] = rng.range(0, 9);
                }
                _ => other = vec![rng.range(0, 9)],
            }
            if other == shape {
                other.push(2);
            }
            let mut bytes = header(descr, false, &shape_text(&other));
            bytes.extend(&good[header_end..]);
            bytes
        }
        Truncated => {
            good.truncate(rng.below(good.len()));
            good
        }
        Trailing => {
            for _ in 0..rng.range(1, 64) {
                good.push(rng.bits() as u8);
            }
            good
        }
        HugeShape => {
            let huge = *rng.pick(&[
                "1099511627776,",
                "2147483648, 2147483648",
                "18446744073709551615,",
                "4611686018427387904, 4",
                "-1,",
                "3, -2",
                "0, 1099511627776",
                "99999999999999999999999,",
                "1e9,",
            ]);
            let mut bytes = header(descr, false, huge);
            bytes.extend(&good[header_end..]);
            bytes
        }
        MalformedDict => {
            let dicts = [
                format!("{{'descr': '{descr}', 'shape': ({}), }}", shape_text(shape)),
                format!("{{'descr': '{descr}', 'fortran_order': False, }}"),
                format!("{{'descr': '{descr}', 'fortran_order': 1, 'shape': 3}}"),
                "{'descr': '<f4', 'fortran_order': False, 'shape': (2,".to_string(),
                "[1, 2, 3]".to_string(),
                "{'descr': [('a', '<f4'), ('b', '<i4')], 'fortran_order': False, 'shape': (2,), }"
                    .to_string(),
                "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), 'extra': __import__('os')}"
                    .to_string(),
                String::from_utf8_lossy(&crate::mutate::mutate(
                    rng,
                    &good[10..header_end],
                    &["'", "{", "}", "(", ")", ",", ":", "shape", "descr", "True", "-1", "\u{0}"],
                ))
                .into_owned(),
            ];
            let dict = rng.pick(&dicts).clone();
            let mut bytes = frame(1, dict.as_bytes());
            bytes.extend(&good[header_end..]);
            bytes
        }
        Empty => good[..rng.below(11)].to_vec(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_valid_file_has_an_aligned_header_and_all_its_data() {
        let mut r = Rng::new(1);
        let bytes = valid(&mut r, "<f4", &[2, 3]);
        assert_eq!(&bytes[..8], b"\x93NUMPY\x01\x00");
        let len = u16::from_le_bytes([bytes[8], bytes[9]]) as usize;
        assert_eq!((10 + len) % 64, 0);
        assert_eq!(bytes.len(), 10 + len + 6 * 4);
        let dict = String::from_utf8_lossy(&bytes[10..10 + len]);
        assert!(dict.contains("'shape': (2, 3)"), "{dict}");
        let scalar = valid(&mut r, "|b1", &[]);
        assert!(String::from_utf8_lossy(&scalar).contains("'shape': ()"));
    }

    #[test]
    fn valid_files_hold_edge_values_now_and_then() {
        let mut rng = Rng::new(3);
        let floats: Vec<f32> = (0..40)
            .flat_map(|_| {
                let bytes = valid(&mut rng, "<f4", &[64]);
                bytes[bytes.len() - 64 * 4..]
                    .chunks(4)
                    .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
                    .collect::<Vec<_>>()
            })
            .collect();
        assert!(floats.iter().any(|x| x.is_nan()));
        assert!(floats.iter().any(|x| x.is_infinite()));
        assert!(floats.iter().any(|x| x.is_finite() && x.abs() > 2e9));
        let wide: Vec<i64> = (0..40)
            .flat_map(|_| {
                let bytes = valid(&mut rng, "<i8", &[64]);
                bytes[bytes.len() - 64 * 8..]
                    .chunks(8)
                    .map(|c| i64::from_le_bytes(c.try_into().unwrap()))
                    .collect::<Vec<_>>()
            })
            .collect();
        assert!(wide.iter().any(|&x| x > 1 << 32));
    }

    #[test]
    fn corrupted_files_differ_from_the_valid_file_they_start_from() {
        let mut same = 0;
        for seed in 0..200 {
            let good = valid(&mut Rng::new(seed), "<i4", &[3]);
            if corrupted(&mut Rng::new(seed), "<i4", &[3]) == good {
                same += 1;
            }
        }
        // a mutated header dict may, rarely, come out as it was
        assert!(same <= 4, "{same} of 200 corrupted files are valid ones");
    }
}
