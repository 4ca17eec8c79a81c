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
        // bf16 (which numpy lacks) is written as its bit patterns, `<u2`, and read back so
        let expected = if t == ScalarType::Bf16 {
            NpyArray {
                elem: ScalarType::U16,
                shape: vec![2, 3],
                data: vec![Scalar::U16(0); 6],
            }
        } else {
            array
        };
        assert_eq!(read(&path).unwrap(), expected, "{}", t.name());
    }
}

#[test]
fn arrays_of_tuples_are_structured_arrays() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("r.npy");
    let elem = DataType::pair(
        DataType::Scalar(ScalarType::I8),
        DataType::pair(DataType::f32(), DataType::Index(arith::Nat::cst(9))),
    );
    let array = Array {
        elem,
        shape: vec![2],
        data: vec![
            Scalar::I8(-1),
            Scalar::F32(0.5),
            Scalar::I64(8),
            Scalar::I8(2),
            Scalar::F32(-3.0),
            Scalar::I64(0),
        ],
    };
    write(&path, &array).unwrap();
    let text = String::from_utf8_lossy(&std::fs::read(&path).unwrap()[..128]).into_owned();
    assert!(
        text.contains("'descr': [('f0', '|i1'), ('f1', [('f0', '<f4'), ('f1', '<i8')])]"),
        "{text}"
    );
    let back = read_contents(&path).unwrap();
    assert_eq!(back.shape, [2]);
    assert_eq!(
        back.dtype.leaves(),
        [ScalarType::I8, ScalarType::F32, ScalarType::I64]
    );
    assert_eq!(back.data, array.data);
    // a structured array is no plain array
    assert!(read(&path).unwrap_err().contains("structured array"));
}

#[test]
fn vectors_are_one_more_axis_and_subarray_fields() {
    let dir = tempfile::tempdir().unwrap();
    // an array of vectors: a plain array with an axis of the lanes
    let path = dir.path().join("v.npy");
    let v4 = DataType::vector(DataType::f32(), 4);
    let data: Vec<Scalar> = (0..8).map(|i| Scalar::F32(i as f32)).collect();
    let array = Array {
        elem: v4.clone(),
        shape: vec![2],
        data: data.clone(),
    };
    write(&path, &array).unwrap();
    let plain = read(&path).unwrap();
    assert_eq!(
        (plain.shape.as_slice(), plain.elem),
        (&[2, 4][..], ScalarType::F32)
    );
    assert_eq!(plain.data, data);
    // a vector in a tuple: a subarray field, read back as its lanes
    let path = dir.path().join("p.npy");
    let elem = DataType::pair(
        DataType::Scalar(ScalarType::I8),
        DataType::vector(DataType::Scalar(ScalarType::F64), 2),
    );
    let array = Array {
        elem,
        shape: vec![1],
        data: vec![Scalar::I8(-2), Scalar::F64(0.5), Scalar::F64(1.5)],
    };
    write(&path, &array).unwrap();
    let text = String::from_utf8_lossy(&std::fs::read(&path).unwrap()[..128]).into_owned();
    assert!(
        text.contains("'descr': [('f0', '|i1'), ('f1', '<f8', (2,))]"),
        "{text}"
    );
    let back = read_contents(&path).unwrap();
    assert_eq!(
        back.dtype,
        Dtype::Record(vec![
            ("f0".into(), Dtype::Scalar(ScalarType::I8)),
            ("f1".into(), Dtype::Subarray(vec![2], ScalarType::F64)),
        ])
    );
    assert_eq!(
        back.dtype.to_string(),
        "[('f0', int8), ('f1', float64, (2,))]"
    );
    assert_eq!(back.dtype.fields(), 2);
    assert_eq!(back.data, array.data);
}

#[test]
fn outputs_are_one_file_per_part_or_one_npz() {
    let ty = DataType::pair(
        DataType::array(3, DataType::f32()),
        DataType::array(2, DataType::f32()),
    );
    let paths = |names: &[&str]| names.iter().map(PathBuf::from).collect::<Vec<_>>();
    assert!(check_outputs(&paths(&["a.npy", "b.npy"]), &ty).is_ok());
    assert!(check_outputs(&paths(&["r.NPZ"]), &ty).is_ok());
    assert!(check_outputs(&[], &ty).is_ok());
    // in the library's words, the setting named for a front end to spell
    let one = check_outputs(&paths(&["a.npy"]), &ty).unwrap_err();
    assert!(one.settings().contains(&&crate::Setting::OutputFiles));
    let one = one.to_string();
    assert!(
        one.contains("1 output file given") && one.contains("2 parts"),
        "{one}"
    );
    let mixed = check_outputs(&paths(&["a.npy", "r.npz"]), &ty)
        .unwrap_err()
        .to_string();
    assert!(mixed.contains("the only output;"), "{mixed}");
    let twice = check_outputs(&paths(&["a.npy", "a.npy"]), &ty)
        .unwrap_err()
        .to_string();
    assert!(twice.contains("given twice"), "{twice}");
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

/// A corrupted header nesting brackets 100 deep is refused at once (the `.npy` reader's
/// parser takes time exponential in the nesting; found by shine-clifuzz, seed 2 case 87494).
#[test]
fn deeply_nested_headers_are_refused_quickly() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("deep.npy");
    let mut header = format!(
        "{{'descr': '<f8', 'fortran_order':{} False, 'shape': (5, 2){}, }}",
        "[".repeat(100),
        "]".repeat(100)
    );
    header.push_str(&" ".repeat((64 - (10 + header.len() + 1) % 64) % 64));
    header.push('\n');
    let mut bytes = b"\x93NUMPY\x01\x00".to_vec();
    bytes.extend_from_slice(&(header.len() as u16).to_le_bytes());
    bytes.extend_from_slice(header.as_bytes());
    bytes.extend_from_slice(&[0u8; 80]);
    std::fs::write(&path, bytes).unwrap();
    let started = std::time::Instant::now();
    let err = read(&path).unwrap_err();
    assert!(err.contains("nests brackets 102 deep"), "{err}");
    assert!(started.elapsed() < std::time::Duration::from_secs(5));
}
