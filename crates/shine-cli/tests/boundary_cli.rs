//! Tuples, indices and vectors across the boundary (issue 14, item 4): arrays of tuples given as
//! numpy structured arrays or with one more axis, `int` from `int32` files, `idx[n]` from any
//! integer file with a range check, results that are tuples written as several `.npy` files or
//! one `.npz`, arrays of tuples written as structured arrays; arrays of vectors with one more
//! axis of the lanes (every lane type the targets have), vectors in tuples as subarray fields
//! and struct members with C's padding, and the vectors the boundary refuses (3 lanes, over 16
//! bytes in a tuple); on the interpreter (`eval`) and on compiled code (`run`, C and OpenMP,
//! OpenCL where it applies), `--verify` part by part.
//!
//! The `.npy` files are written by the project's own writer ([`shine::npy::write`]) or by
//! hand (headers numpy writes that shine never does: aligned records with padding, nested
//! records, subarrays); no numpy is needed.

use shine::npy::{self, Contents, Dtype};
use shine::rise::interp::Scalar;
use shine::rise::{DataType, ScalarType};
use shine::Array;
use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use tempfile::TempDir;

mod support;
use support::skip_opencl;

/// Runs `shine` with `args` in the repository's root.
fn shine<S: AsRef<OsStr>>(args: &[S]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_shine"))
        .current_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
        .args(args)
        .env_remove("RUST_BACKTRACE")
        .output()
        .expect("shine runs")
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Asserts success; stdout.
fn ok(o: &Output) -> String {
    assert!(o.status.success(), "shine failed:\n{}", stderr(o));
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// Asserts a clean refusal (an exit code that is not a panic's, one `error` line, nothing on
/// stdout) that mentions every phrase; the message.
fn refused(o: &Output, phrases: &[&str]) -> String {
    let err = stderr(o);
    assert!(
        matches!(o.status.code(), Some(c) if c != 0 && c != 101),
        "expected a clean failure, got {:?}:\n{err}",
        o.status
    );
    assert!(!err.contains("panicked"), "shine panicked:\n{err}");
    for p in phrases {
        assert!(err.contains(p), "stderr does not mention {p:?}:\n{err}");
    }
    let errors = err
        .lines()
        .filter(|l| l.trim_start().to_lowercase().starts_with("error"))
        .count();
    assert_eq!(errors, 1, "expected one error message:\n{err}");
    assert!(o.stdout.is_empty(), "a failed run printed on stdout");
    err
}

fn f32s(xs: &[f32]) -> Vec<Scalar> {
    xs.iter().map(|&x| Scalar::F32(x)).collect()
}

/// Writes `array` with shine's writer.
fn write(dir: &TempDir, name: &str, array: &Array) -> PathBuf {
    let path = dir.path().join(name);
    npy::write(&path, array).expect("writes the array");
    path
}

/// A plain array of `elem` scalars.
fn plain(elem: ScalarType, shape: &[usize], data: Vec<Scalar>) -> Array {
    Array {
        elem: DataType::Scalar(elem),
        shape: shape.to_vec(),
        data,
    }
}

/// A version 1.0 `.npy` file with a hand-written header.
fn write_raw(dir: &TempDir, name: &str, header: &str, data: &[u8]) -> PathBuf {
    let mut header = header.as_bytes().to_vec();
    while !(10 + header.len() + 1).is_multiple_of(64) {
        header.push(b' ');
    }
    header.push(b'\n');
    let mut bytes = b"\x93NUMPY\x01\x00".to_vec();
    bytes.extend((header.len() as u16).to_le_bytes());
    bytes.extend(header);
    bytes.extend(data);
    let path = dir.path().join(name);
    std::fs::write(&path, bytes).unwrap();
    path
}

/// A program file in `dir`.
fn program(dir: &TempDir, text: &str) -> PathBuf {
    let path = dir.path().join("p.rise");
    std::fs::write(&path, text).unwrap();
    path
}

const PROGRAM: &str = "
def pairsum : {n: nat} -> n.(f32, f32) -> n.f32 = fun xs => xs |> map (fun p => fst p + snd p)
def swap : {n: nat} -> n.(f32, i32) -> n.(i32, f32) =
  fun xs => xs |> map (fun p => makePair (snd p) (fst p))
def nested : {n: nat} -> n.((f32, i8), f64) -> n.f64 =
  fun xs => xs |> map (fun p => snd p + (cast (fst (fst p)) : f64) * 2.0 + (cast (snd (fst p)) : f64))
def inc : {n: nat} -> n.int -> n.int = fun xs => xs |> map (fun x => x + 1)
def ids : {n m: nat} -> m.idx[n] -> n.f32 -> m.natType =
  fun is xs => is |> map (fun i => indexAsNat i)
def bare : {n m: nat} -> m.idx[n] -> m.natType = fun is => is |> map (fun i => indexAsNat i)
def pick : {n m: nat} -> m.n.idx[n] -> n.f32 -> m.n.f32 =
  fun is xs => is |> map (fun row => row |> map (fun i => idx i xs))
def sums : {n: nat} -> n.f32 -> (f32, (n.f32, f32)) =
  fun xs => makePair (reduce add 0.0f xs) (makePair (xs |> map (fun x => x * 2.0f)) (reduce add 1.0f xs))
";

/// Runs `def` of `prog` compiled for `target` (the sequential CPU schedule) on `inputs`,
/// verified; stdout.
fn run_verified(prog: &Path, def: &str, target: &str, inputs: &[&Path], extra: &[&str]) -> String {
    let mut args: Vec<String> = ["run", &prog.display().to_string(), "--def", def]
        .map(String::from)
        .to_vec();
    args.extend(
        [
            "--strategy",
            "examples/cpu.elv",
            "--apply",
            "sequential",
            "--target",
            target,
        ]
        .map(String::from),
    );
    for i in inputs {
        args.extend(["--input".to_string(), i.display().to_string()]);
    }
    args.extend(extra.iter().map(|s| s.to_string()));
    args.push("--verify".into());
    let o = shine(&args);
    let out = ok(&o);
    assert!(
        stderr(&o).contains("verified against the interpreter"),
        "{}",
        stderr(&o)
    );
    out
}

/// The CPU targets, and OpenCL (PoCL here) unless `SHINE_SKIP_OPENCL=1`.
fn targets() -> Vec<&'static str> {
    let mut t = vec!["c", "openmp"];
    if !skip_opencl() {
        t.push("opencl");
    }
    t
}

#[test]
fn an_array_of_pairs_is_a_structured_array_or_has_one_more_axis() {
    let dir = TempDir::new().unwrap();
    let prog = program(&dir, PROGRAM);
    let pairs = Array {
        elem: DataType::pair(DataType::f32(), DataType::f32()),
        shape: vec![3],
        data: f32s(&[1.0, 2.0, 3.0, 4.0, 5.5, 6.0]),
    };
    let structured = write(&dir, "s.npy", &pairs);
    let axis = write(
        &dir,
        "x.npy",
        &plain(
            ScalarType::F32,
            &[3, 2],
            f32s(&[1.0, 2.0, 3.0, 4.0, 5.5, 6.0]),
        ),
    );
    // a structured array as numpy writes it with other field names
    let bytes: Vec<u8> = [1.0f32, 2.0, 3.0, 4.0, 5.5, 6.0]
        .iter()
        .flat_map(|v| v.to_le_bytes())
        .collect();
    let named = write_raw(
        &dir,
        "named.npy",
        "{'descr': [('re', '<f4'), ('im', '<f4')], 'fortran_order': False, 'shape': (3,), }",
        &bytes,
    );
    for input in [&structured, &axis, &named] {
        let o = shine(&[
            "eval".as_ref(),
            prog.as_os_str(),
            "--def".as_ref(),
            "pairsum".as_ref(),
            "--input".as_ref(),
            input.as_os_str(),
        ]);
        assert_eq!(ok(&o).trim(), "[3.0, 7.0, 11.5]");
        for target in targets() {
            let out = run_verified(&prog, "pairsum", target, &[input], &[]);
            assert_eq!(out.trim(), "[3.0, 7.0, 11.5]", "{target}");
        }
    }
}

#[test]
fn tuples_of_different_types_padding_and_nesting() {
    let dir = TempDir::new().unwrap();
    let prog = program(&dir, PROGRAM);
    // (f32, i32) records, aligned by numpy to 8 bytes with a padding field
    let mut data = Vec::new();
    for (x, k) in [(1.5f32, 7i32), (-2.0, -3)] {
        data.extend(x.to_le_bytes());
        data.extend(k.to_le_bytes());
    }
    let mixed = write_raw(
        &dir,
        "mixed.npy",
        "{'descr': [('x', '<f4'), ('k', '<i4')], 'fortran_order': False, 'shape': (2,), }",
        &data,
    );
    let out_path = dir.path().join("swapped.npy");
    for target in targets() {
        let out = run_verified(
            &prog,
            "swap",
            target,
            &[&mixed],
            &["--output", &out_path.display().to_string()],
        );
        assert!(out.is_empty(), "{out}");
        // an array of tuples is written as a structured array, fields f0, f1
        let back = npy::read_contents(&out_path).unwrap();
        assert_eq!(
            back,
            Contents {
                shape: vec![2],
                dtype: Dtype::Record(vec![
                    ("f0".into(), Dtype::Scalar(ScalarType::I32)),
                    ("f1".into(), Dtype::Scalar(ScalarType::F32)),
                ]),
                data: vec![
                    Scalar::I32(7),
                    Scalar::F32(1.5),
                    Scalar::I32(-3),
                    Scalar::F32(-2.0)
                ],
            },
            "{target}"
        );
    }
    // ((f32, i8), f64) as nested records with numpy's padding, and as flat fields
    let mut aligned = Vec::new();
    let mut flat = Vec::new();
    for (x, b, d) in [(1.5f32, 3i8, 0.25f64), (2.0, -1, 10.0)] {
        aligned.extend(x.to_le_bytes());
        aligned.push(b as u8);
        aligned.extend([0u8; 3 + 8]); // padding to the f64 at offset 16
        aligned.extend(d.to_le_bytes());
        flat.extend(x.to_le_bytes());
        flat.push(b as u8);
        flat.extend(d.to_le_bytes());
    }
    let nested = write_raw(
        &dir,
        "nested.npy",
        "{'descr': [('p', [('x', '<f4'), ('b', '|i1'), ('', '|V3')]), ('', '|V8'), ('d', '<f8')], \
         'fortran_order': False, 'shape': (2,), }",
        &aligned,
    );
    let flat = write_raw(
        &dir,
        "flat.npy",
        "{'descr': [('x', '<f4'), ('b', '|i1'), ('d', '<f8')], 'fortran_order': False, \
         'shape': (2,), }",
        &flat,
    );
    for input in [&nested, &flat] {
        for target in targets() {
            // 0.25 + 3.0 + 3 and 10 + 4 - 1
            let out = run_verified(&prog, "nested", target, &[input], &[]);
            assert_eq!(out.trim(), "[6.25, 13.0]", "{target} {}", input.display());
        }
    }
}

#[test]
fn random_inputs_of_tuples_and_indices() {
    let dir = TempDir::new().unwrap();
    let prog = program(&dir, PROGRAM);
    for target in targets() {
        for def in ["pairsum", "swap", "nested"] {
            run_verified(&prog, def, target, &[], &["--random", "5", "--nat", "n=37"]);
        }
        let out = run_verified(
            &prog,
            "ids",
            target,
            &[],
            &["--random", "5", "--nat", "n=3", "--nat", "m=40"],
        );
        // every random index is in 0..3
        let values: Vec<&str> = out.trim().trim_matches(['[', ']']).split(", ").collect();
        assert_eq!(values.len(), 40);
        assert!(
            values
                .iter()
                .all(|v| ["0:nat", "1:nat", "2:nat"].contains(v)),
            "{out}"
        );
    }
}

#[test]
fn int_takes_int32_files() {
    let dir = TempDir::new().unwrap();
    let prog = program(&dir, PROGRAM);
    let ints = write(
        &dir,
        "i.npy",
        &plain(
            ScalarType::I32,
            &[3],
            vec![Scalar::I32(1), Scalar::I32(-5), Scalar::I32(i32::MAX)],
        ),
    );
    let o = shine(&[
        "eval".as_ref(),
        prog.as_os_str(),
        "--def".as_ref(),
        "inc".as_ref(),
        "--input".as_ref(),
        ints.as_os_str(),
    ]);
    // int wraps like C's int with -fwrapv
    assert_eq!(ok(&o).trim(), "[2, -4, -2147483648]");
    for target in targets() {
        let out = run_verified(&prog, "inc", target, &[&ints], &[]);
        assert_eq!(out.trim(), "[2, -4, -2147483648]", "{target}");
    }
    // `int` is int32 in files: other integer dtypes are refused, saying what is expected
    let longs = write(
        &dir,
        "l.npy",
        &plain(ScalarType::I64, &[1], vec![Scalar::I64(1)]),
    );
    let o = shine(&[
        "eval".as_ref(),
        prog.as_os_str(),
        "--def".as_ref(),
        "inc".as_ref(),
        "--input".as_ref(),
        longs.as_os_str(),
    ]);
    refused(&o, &["l.npy", "must be int (numpy int32)", "int64"]);
}

#[test]
fn indices_of_any_integer_dtype_are_range_checked() {
    let dir = TempDir::new().unwrap();
    let prog = program(&dir, PROGRAM);
    let xs = write(
        &dir,
        "xs.npy",
        &plain(ScalarType::F32, &[3], f32s(&[10.0, 20.0, 30.0])),
    );
    let eval = |is: &Path| {
        shine(&[
            "eval".as_ref(),
            prog.as_os_str(),
            "--def".as_ref(),
            "pick".as_ref(),
            "--input".as_ref(),
            is.as_os_str(),
            "--input".as_ref(),
            xs.as_os_str(),
        ])
    };
    let u8s = write(
        &dir,
        "u8.npy",
        &plain(
            ScalarType::U8,
            &[2, 3],
            [2, 0, 1, 1, 1, 0].map(Scalar::U8).to_vec(),
        ),
    );
    let i64s = write(
        &dir,
        "i64.npy",
        &plain(
            ScalarType::I64,
            &[2, 3],
            [2, 0, 1, 1, 1, 0].map(Scalar::I64).to_vec(),
        ),
    );
    for is in [&u8s, &i64s] {
        assert_eq!(
            ok(&eval(is)).trim(),
            "[[30.0, 10.0, 20.0], [20.0, 20.0, 10.0]]"
        );
    }
    // out of range: the file, the position and the value
    let high = write(
        &dir,
        "high.npy",
        &plain(
            ScalarType::I16,
            &[2, 3],
            [2, 0, 1, 1, 3, 0].map(Scalar::I16).to_vec(),
        ),
    );
    refused(
        &eval(&high),
        &[
            "high.npy`[1, 1]",
            "is 3",
            "outside the range 0..3",
            "idx[3]",
        ],
    );
    let negative = write(
        &dir,
        "neg.npy",
        &plain(
            ScalarType::I8,
            &[2, 3],
            [0, 0, -1, 0, 0, 0].map(Scalar::I8).to_vec(),
        ),
    );
    refused(&eval(&negative), &["neg.npy`[0, 2]", "is -1"]);
    // floats are no indices
    let floats = write(
        &dir,
        "f.npy",
        &plain(ScalarType::F32, &[2, 3], f32s(&[0.0; 6])),
    );
    refused(
        &eval(&floats),
        &["f.npy", "idx[n] (any integer dtype)", "float32"],
    );
    // the bound must be known before the values are checked: from another input's shape,
    // or from --nat
    let row = write(
        &dir,
        "row.npy",
        &plain(ScalarType::I32, &[2], vec![Scalar::I32(1), Scalar::I32(0)]),
    );
    let bare = |nats: &[&str]| {
        let mut args: Vec<String> = ["eval", &prog.display().to_string(), "--def", "bare"]
            .map(String::from)
            .to_vec();
        args.extend(["--input".into(), row.display().to_string()]);
        for n in nats {
            args.extend(["--nat".into(), n.to_string()]);
        }
        shine(&args)
    };
    refused(&bare(&[]), &["bound of `idx[n]` is not known", "--nat n=V"]);
    assert_eq!(ok(&bare(&["n=2"])).trim(), "[1:nat, 0:nat]");
    refused(&bare(&["n=1"]), &["row.npy`[0]", "is 1", "0..1"]);
    let out = run_verified(&prog, "ids", "c", &[&row, &xs], &[]);
    assert_eq!(out.trim(), "[1:nat, 0:nat]");
}

#[test]
fn inputs_that_do_not_fit_say_what_was_expected_and_found() {
    let dir = TempDir::new().unwrap();
    let prog = program(&dir, PROGRAM);
    let eval = |def: &str, input: &Path| {
        shine(&[
            "eval".as_ref(),
            prog.as_os_str(),
            "--def".as_ref(),
            def.as_ref(),
            "--input".as_ref(),
            input.as_os_str(),
        ])
    };
    // a plain array whose last extent is not the number of components
    let three = write(
        &dir,
        "three.npy",
        &plain(ScalarType::F32, &[2, 3], f32s(&[0.0; 6])),
    );
    refused(
        &eval("pairsum", &three),
        &[
            "three.npy",
            "parameter 1 of `pairsum`",
            "`n.(f32, f32)`",
            "shape (2, 3)",
            "last extent is 2",
        ],
    );
    // a structured array with a field of another type, or too many fields
    let mixed = Array {
        elem: DataType::pair(DataType::f32(), DataType::Scalar(ScalarType::F64)),
        shape: vec![1],
        data: vec![Scalar::F32(1.0), Scalar::F64(2.0)],
    };
    let mixed = write(&dir, "mixed.npy", &mixed);
    refused(
        &eval("pairsum", &mixed),
        &["component 1 of the tuple must be f32", "float64 (f64)"],
    );
    refused(
        &eval("nested", &mixed),
        &["records have 2 fields", "3 components"],
    );
    // a structured array for a parameter of scalars
    refused(&eval("inc", &mixed), &["structured array", "no tuples"]);
    // one dtype for every component: (f32, i32) cannot be one plain array
    let plain2 = write(
        &dir,
        "p2.npy",
        &plain(ScalarType::F32, &[1, 2], f32s(&[0.0; 2])),
    );
    refused(
        &eval("swap", &plain2),
        &["component 1 of the tuple must be i32"],
    );
    // a subarray field is a field of several scalars (a vector): three are no pair
    let sub = write_raw(
        &dir,
        "sub.npy",
        "{'descr': [('a', '<f4'), ('s', '<f4', (2,))], 'fortran_order': False, 'shape': (1,), }",
        &[0u8; 12],
    );
    refused(
        &eval("pairsum", &sub),
        &[
            "sub.npy",
            "records hold 3 scalars",
            "('s', float32, (2,))",
            "2 components",
        ],
    );
    // a subarray of records is not read
    let sub_records = write_raw(
        &dir,
        "subrec.npy",
        "{'descr': [('s', [('x', '<f4'), ('y', '<f4')], (2,))], 'fortran_order': False, \
         'shape': (1,), }",
        &[0u8; 16],
    );
    refused(
        &eval("pairsum", &sub_records),
        &["subrec.npy", "subarray", "of records"],
    );
    // a header that declares more records than the file holds is refused before allocating
    let truncated = write_raw(
        &dir,
        "truncated.npy",
        "{'descr': [('a', '<f4'), ('b', '<f4')], 'fortran_order': False, \
         'shape': (2000000000,), }",
        &[0u8; 16],
    );
    refused(
        &eval("pairsum", &truncated),
        &["truncated.npy", "holds 16 bytes of data"],
    );
    // a tuple holding arrays cannot be given as one file
    let tuple_of_arrays = program(
        &dir,
        "def f : {n: nat} -> (n.f32, n.f32) -> n.f32 = fun p => fst p",
    );
    let xs = write(
        &dir,
        "xs.npy",
        &plain(ScalarType::F32, &[2], f32s(&[1.0, 2.0])),
    );
    let o = shine(&[
        "eval".as_ref(),
        tuple_of_arrays.as_os_str(),
        "--def".as_ref(),
        "f".as_ref(),
        "--input".as_ref(),
        xs.as_os_str(),
    ]);
    refused(&o, &["xs.npy", "not supported yet"]);
}

/// The members of a stored `.npz` file, read by hand: (name, bytes); checks each member's
/// CRC-32 and the central directory.
fn npz_members(path: &Path) -> Vec<(String, Vec<u8>)> {
    let bytes = std::fs::read(path).unwrap();
    let u16_at = |i: usize| u16::from_le_bytes([bytes[i], bytes[i + 1]]) as usize;
    let u32_at = |i: usize| u32::from_le_bytes(bytes[i..i + 4].try_into().unwrap());
    let mut members = Vec::new();
    let mut at = 0;
    while u32_at(at) == 0x0403_4b50 {
        assert_eq!(u16_at(at + 8), 0, "stored, not compressed");
        let (crc, size, name_len) = (u32_at(at + 14), u32_at(at + 18) as usize, u16_at(at + 26));
        assert_eq!(u32_at(at + 22) as usize, size);
        let name = String::from_utf8(bytes[at + 30..at + 30 + name_len].to_vec()).unwrap();
        let data = bytes[at + 30 + name_len..at + 30 + name_len + size].to_vec();
        // CRC-32 bit by bit, independent of the writer's table
        let mut c = !0u32;
        for &b in &data {
            c ^= b as u32;
            for _ in 0..8 {
                c = if c & 1 == 1 {
                    (c >> 1) ^ 0xEDB8_8320
                } else {
                    c >> 1
                };
            }
        }
        assert_eq!(!c, crc, "CRC of {name}");
        members.push((name, data));
        at += 30 + name_len + size;
    }
    // the central directory lists every member, the end record counts them
    let mut entries = 0;
    while u32_at(at) == 0x0201_4b50 {
        entries += 1;
        at += 46 + u16_at(at + 28);
    }
    assert_eq!(entries, members.len());
    assert_eq!(u32_at(at), 0x0605_4b50);
    assert_eq!(u16_at(at + 10), members.len());
    members
}

#[test]
fn a_tuple_result_is_several_files_or_one_npz() {
    let dir = TempDir::new().unwrap();
    let prog = program(&dir, PROGRAM);
    let xs = write(
        &dir,
        "xs.npy",
        &plain(ScalarType::F32, &[3], f32s(&[1.0, 2.0, 4.0])),
    );
    let (a, b, c) = (
        dir.path().join("a.npy"),
        dir.path().join("b.npy"),
        dir.path().join("c.npy"),
    );
    let npz = dir.path().join("r.npz");
    let s = |p: &Path| p.display().to_string();
    let prog_s = s(&prog);
    let xs_s = s(&xs);
    let eval = |outputs: &[&Path]| {
        let mut args = vec!["eval", &prog_s, "--def", "sums", "--input", &xs_s]
            .into_iter()
            .map(String::from)
            .collect::<Vec<_>>();
        for o in outputs {
            args.extend(["--output".to_string(), s(o)]);
        }
        shine(&args)
    };
    // printed as a tuple
    assert_eq!(ok(&eval(&[])).trim(), "(7.0, ([2.0, 4.0, 8.0], 8.0))");
    // three parts, nested tuples flattened: three files
    let o = eval(&[&a, &b, &c]);
    assert!(ok(&o).is_empty());
    assert!(stderr(&o).contains("wrote"), "{}", stderr(&o));
    let expect = [
        Contents::from(plain(ScalarType::F32, &[], f32s(&[7.0])).as_flat().unwrap()),
        Contents::from(
            plain(ScalarType::F32, &[3], f32s(&[2.0, 4.0, 8.0]))
                .as_flat()
                .unwrap(),
        ),
        Contents::from(plain(ScalarType::F32, &[], f32s(&[8.0])).as_flat().unwrap()),
    ];
    for (path, want) in [&a, &b, &c].iter().zip(&expect) {
        assert_eq!(&npy::read_contents(path).unwrap(), want);
    }
    // or one .npz of the members 0.npy, 1.npy, 2.npy
    ok(&eval(&[&npz]));
    let members = npz_members(&npz);
    let names: Vec<&str> = members.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, ["0.npy", "1.npy", "2.npy"]);
    for ((_, bytes), want) in members.iter().zip(&expect) {
        let member = dir.path().join("member.npy");
        std::fs::write(&member, bytes).unwrap();
        assert_eq!(&npy::read_contents(&member).unwrap(), want);
    }
    // the count is checked before anything is computed
    refused(
        &eval(&[&a]),
        &["1 --output file given", "3 parts", "one --output FILE.npz"],
    );
    refused(&eval(&[&a, &b]), &["2 --output files given"]);
    refused(&eval(&[&a, &npz]), &[".npz output holds every part"]);
    refused(&eval(&[&a, &b, &a]), &["given twice"]);
    // compiled code agrees, part by part, on every target (one buffer per part)
    for target in support::targets() {
        let out = run_verified(&prog, "sums", target, &[&xs], &["--output", &s(&npz)]);
        assert!(out.is_empty());
        let again = npz_members(&npz);
        assert_eq!(again, members, "{target}");
        let printed = run_verified(&prog, "sums", target, &[&xs], &[]);
        assert_eq!(printed.trim(), "(7.0, ([2.0, 4.0, 8.0], 8.0))");
    }
}

#[test]
fn bicg_returns_two_arrays_on_every_target() {
    let dir = TempDir::new().unwrap();
    // A = [[1, 2, 3], [4, 5, 6]], r = [1, -1], p = [1, 0, 2]: s = A^T r, q = A p
    let a = write(
        &dir,
        "a.npy",
        &plain(
            ScalarType::F32,
            &[2, 3],
            f32s(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]),
        ),
    );
    let r = write(
        &dir,
        "r.npy",
        &plain(ScalarType::F32, &[2], f32s(&[1.0, -1.0])),
    );
    let p = write(
        &dir,
        "p.npy",
        &plain(ScalarType::F32, &[3], f32s(&[1.0, 0.0, 2.0])),
    );
    let bicg = Path::new("examples/bicg.rise");
    let (s_path, q_path) = (dir.path().join("s.npy"), dir.path().join("q.npy"));
    let outputs = [
        "--output",
        &s_path.display().to_string(),
        "--output",
        &q_path.display().to_string(),
    ]
    .map(String::from);
    let outputs: Vec<&str> = outputs.iter().map(String::as_str).collect();
    for target in support::targets() {
        run_verified(bicg, "bicg", target, &[&a, &r, &p], &outputs);
        let s = npy::read(&s_path).unwrap();
        let q = npy::read(&q_path).unwrap();
        assert_eq!(s.data, f32s(&[-3.0, -3.0, -3.0]), "{target}");
        assert_eq!(q.data, f32s(&[7.0, 16.0]), "{target}");
        // random inputs of other sizes, verified part by part
        run_verified(
            bicg,
            "bicg",
            target,
            &[],
            &["--random", "2", "--nat", "n=41", "--nat", "m=23"],
        );
    }
}

const VECTORS: &str = "
def dblF32 : {n: nat} -> n.vec[f32, 4] -> n.vec[f32, 4] = fun xs => xs |> map (fun v => v + v)
def dblF64 : {n: nat} -> n.vec[f64, 2] -> n.vec[f64, 2] = fun xs => xs |> map (fun v => v + v)
def dblI32 : {n: nat} -> n.vec[i32, 4] -> n.vec[i32, 4] = fun xs => xs |> map (fun v => v + v)
def dblInt : {n: nat} -> n.vec[int, 4] -> n.vec[int, 4] = fun xs => xs |> map (fun v => v + v)
def dblU32 : {n: nat} -> n.vec[u32, 8] -> n.vec[u32, 8] = fun xs => xs |> map (fun v => v + v)
def dblI8 : {n: nat} -> n.vec[i8, 16] -> n.vec[i8, 16] = fun xs => xs |> map (fun v => v + v)
def dblU8 : {n: nat} -> n.vec[u8, 2] -> n.vec[u8, 2] = fun xs => xs |> map (fun v => v + v)
def dblI64 : {n: nat} -> n.vec[i64, 4] -> n.vec[i64, 4] = fun xs => xs |> map (fun v => v + v)
def padded : {n: nat} -> n.(i8, vec[f64, 2]) -> n.(vec[f64, 2], i8) =
  fun xs => xs |> map (fun p => makePair (snd p + snd p) (fst p))
def three : {n: nat} -> n.vec[f32, 3] -> n.f32 = fun xs => xs |> map (fun v => lane 0 v + lane 2 v)
def wide : {n: nat} -> n.(vec[f32, 8], f32) -> n.f32 = fun xs => xs |> map (fun p => lane 7 (fst p) + snd p)
def first : {n k: nat} -> n.vec[f32, k] -> n.f32 = fun xs => xs |> map (fun v => lane 0 v)
def pickv : {n: nat} -> n.vec[idx[5], 2] -> 5.f32 -> n.f32 =
  fun is xs => is |> map (fun v => idx (lane 1 v) xs)
";

/// `shine eval PROG --def DEF --input ...` and the extra arguments.
fn eval_with(prog: &Path, def: &str, inputs: &[&Path], extra: &[&str]) -> Output {
    let mut args: Vec<String> = vec!["eval".into(), prog.display().to_string()];
    args.extend(["--def".into(), def.into()]);
    for i in inputs {
        args.extend(["--input".to_string(), i.display().to_string()]);
    }
    args.extend(extra.iter().map(|s| s.to_string()));
    shine(&args)
}

#[test]
fn vectors_of_every_element_type_are_one_more_axis_in_and_out() {
    let dir = TempDir::new().unwrap();
    let prog = program(&dir, VECTORS);
    // (definition, lane type, lanes, whether OpenCL has the vector type)
    let cases = [
        ("dblF32", ScalarType::F32, 4, true),
        ("dblF64", ScalarType::F64, 2, true),
        ("dblI32", ScalarType::I32, 4, true),
        ("dblInt", ScalarType::I32, 4, true),
        ("dblU32", ScalarType::U32, 8, true),
        ("dblI8", ScalarType::I8, 16, false),
        ("dblU8", ScalarType::U8, 2, false),
        ("dblI64", ScalarType::I64, 4, false),
    ];
    let n = 3;
    for (k, (def, t, lanes, opencl)) in cases.into_iter().enumerate() {
        // values small enough to double in every type, distinct in every lane
        let value = |j: usize, times: i64| {
            let v = (j as i64 * 7) % 61 - if t.is_unsigned_int() { 0 } else { 30 };
            if t.is_float() {
                Scalar::from_float(t, (v * times) as f64 / 4.0).unwrap()
            } else {
                Scalar::from_int(t, v * times).unwrap()
            }
        };
        let input = write(
            &dir,
            &format!("{def}.npy"),
            &plain(
                t,
                &[n, lanes],
                (0..n * lanes).map(|j| value(j, 1)).collect(),
            ),
        );
        let want = plain(
            t,
            &[n, lanes],
            (0..n * lanes).map(|j| value(j, 2)).collect(),
        );
        let out = dir.path().join(format!("{def}.out.npy"));
        let out_arg = out.display().to_string();
        let check = |what: &str| {
            let got = npy::read(&out).unwrap();
            assert_eq!(Array::from(got), want, "{def} {what}");
        };
        ok(&eval_with(&prog, def, &[&input], &["--output", &out_arg]));
        check("eval");
        for target in targets().into_iter().filter(|&t| opencl || t != "opencl") {
            run_verified(&prog, def, target, &[&input], &["--output", &out_arg]);
            check(target);
        }
        // random vectors of the type, on one target each
        let target = ["c", "openmp"][k % 2];
        run_verified(&prog, def, target, &[], &["--random", "3", "--nat", "n=9"]);
    }
    // an empty array of vectors is (0, k)
    let empty = write(
        &dir,
        "empty.npy",
        &plain(ScalarType::F32, &[0, 4], Vec::new()),
    );
    assert_eq!(ok(&eval_with(&prog, "dblF32", &[&empty], &[])).trim(), "[]");
}

#[test]
fn vectors_in_tuples_are_subarray_fields_and_struct_members() {
    let dir = TempDir::new().unwrap();
    let prog = program(&dir, VECTORS);
    let rows = [(3i8, [0.5f64, -1.0]), (-7, [2.25, 8.0])];
    // shine's writer: packed, the vector a (2,) field
    let elem = DataType::pair(
        DataType::Scalar(ScalarType::I8),
        DataType::vector(DataType::Scalar(ScalarType::F64), 2),
    );
    let data = rows
        .iter()
        .flat_map(|(b, v)| [Scalar::I8(*b), Scalar::F64(v[0]), Scalar::F64(v[1])])
        .collect();
    let packed = write(
        &dir,
        "packed.npy",
        &Array {
            elem,
            shape: vec![2],
            data,
        },
    );
    // numpy's aligned dtype: 7 bytes of padding before the subarray
    let mut bytes = Vec::new();
    for (b, v) in rows {
        bytes.push(b as u8);
        bytes.extend([0u8; 7]);
        bytes.extend(v.iter().flat_map(|x| x.to_le_bytes()));
    }
    let aligned = write_raw(
        &dir,
        "aligned.npy",
        "{'descr': [('b', '|i1'), ('', '|V7'), ('v', '<f8', (2,))], 'fortran_order': False, \
         'shape': (2,), }",
        &bytes,
    );
    let want = Contents {
        shape: vec![2],
        dtype: Dtype::Record(vec![
            ("f0".into(), Dtype::Subarray(vec![2], ScalarType::F64)),
            ("f1".into(), Dtype::Scalar(ScalarType::I8)),
        ]),
        data: rows
            .iter()
            .flat_map(|(b, v)| {
                [
                    Scalar::F64(2.0 * v[0]),
                    Scalar::F64(2.0 * v[1]),
                    Scalar::I8(*b),
                ]
            })
            .collect(),
    };
    let out = dir.path().join("out.npy");
    let out_arg = out.display().to_string();
    for input in [&packed, &aligned] {
        let printed = ok(&eval_with(&prog, "padded", &[input], &[]));
        assert_eq!(printed.trim(), "[(<1.0, -2.0>, 3), (<4.5, 16.0>, -7)]");
        ok(&eval_with(
            &prog,
            "padded",
            &[input],
            &["--output", &out_arg],
        ));
        assert_eq!(npy::read_contents(&out).unwrap(), want, "eval");
        // compiled code: struct { int8_t; double2; } in, struct { double2; int8_t; } out
        for target in targets() {
            run_verified(&prog, "padded", target, &[input], &["--output", &out_arg]);
            assert_eq!(npy::read_contents(&out).unwrap(), want, "{target}");
        }
    }
    for target in targets() {
        run_verified(
            &prog,
            "padded",
            target,
            &[],
            &["--random", "4", "--nat", "n=11"],
        );
    }
}

#[test]
fn vectors_that_do_not_fit_are_refused_naming_the_parameter() {
    let dir = TempDir::new().unwrap();
    let prog = program(&dir, VECTORS);
    let f32_file = |name: &str, shape: &[usize]| {
        let len = shape.iter().product::<usize>();
        let data = (0..len).map(|i| Scalar::F32(i as f32)).collect();
        write(&dir, name, &plain(ScalarType::F32, shape, data))
    };
    // a last axis that is not the lanes, a vector of one dimension
    for (name, shape) in [("x3.npy", &[2usize, 3][..]), ("x4.npy", &[4][..])] {
        let file = f32_file(name, shape);
        refused(
            &eval_with(&prog, "dblF32", &[&file], &[]),
            &[
                name,
                "parameter 1 of `dblF32` (`n.vec[f32, 4]`)",
                "last extent is 4 (one more axis for the lanes)",
            ],
        );
    }
    // another dtype
    let f64s = write(
        &dir,
        "f64.npy",
        &plain(ScalarType::F64, &[1, 4], vec![Scalar::F64(0.0); 4]),
    );
    refused(
        &eval_with(&prog, "dblF32", &[&f64s], &[]),
        &["f64.npy", "lane 0 of the vectors must be f32", "float64"],
    );
    // a structured array of another number of scalars
    let pairs = write(
        &dir,
        "pairs.npy",
        &Array {
            elem: DataType::pair(DataType::f32(), DataType::f32()),
            shape: vec![1],
            data: f32s(&[1.0, 2.0]),
        },
    );
    refused(
        &eval_with(&prog, "dblF32", &[&pairs], &[]),
        &["records have 2 fields", "`vec[f32, 4]` has 4 lanes"],
    );
    // 3 lanes: the interpreter reads them; compiled code has no 3-lane vectors (OpenCL's
    // float3 takes the room of a float4)
    let x3 = f32_file("x3.npy", &[2, 3]);
    assert_eq!(
        ok(&eval_with(&prog, "three", &[&x3], &[])).trim(),
        "[2.0, 8.0]"
    );
    for target in ["c", "opencl", "cuda"] {
        let o = shine(&[
            "run".as_ref(),
            prog.as_os_str(),
            "--def".as_ref(),
            "three".as_ref(),
            "--target".as_ref(),
            target.as_ref(),
            "--input".as_ref(),
            x3.as_os_str(),
        ]);
        refused(&o, &["vec[f32, 3]", "lanes"]);
    }
    // a vector over 16 bytes in a tuple: its alignment in C depends on the flags
    let wide_elem = DataType::pair(DataType::vector(DataType::f32(), 8), DataType::f32());
    let wide = write(
        &dir,
        "wide.npy",
        &Array {
            elem: wide_elem,
            shape: vec![1],
            data: f32s(&[0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 0.5]),
        },
    );
    assert_eq!(ok(&eval_with(&prog, "wide", &[&wide], &[])).trim(), "[7.5]");
    for target in targets() {
        let mut args = vec!["run", "--def", "wide", "--target", target];
        let (p, w) = (prog.display().to_string(), wide.display().to_string());
        args.splice(1..1, [p.as_str()]);
        args.extend(["--input", &w]);
        refused(
            &shine(&args),
            &[
                "parameter 1 of `wide`",
                "holds the vector `vec[f32, 8]` of more than 16 bytes",
                "not supported yet",
            ],
        );
    }
    // lanes that are a size: known from the file's last axis, or given
    let x4 = f32_file("x24.npy", &[2, 4]);
    assert_eq!(
        ok(&eval_with(&prog, "first", &[&x4], &[])).trim(),
        "[0.0, 4.0]"
    );
    refused(
        &eval_with(&prog, "first", &[&x4], &["--nat", "k=5"]),
        &["x24.npy", "last extent is 5"],
    );
    // vectors of indices: each lane checked against its bound, named in the message
    let xs = f32_file("xs.npy", &[5]);
    let ints = |name: &str, values: &[i64]| {
        let data = values.iter().map(|&v| Scalar::I64(v)).collect();
        write(
            &dir,
            name,
            &plain(ScalarType::I64, &[values.len() / 2, 2], data),
        )
    };
    let good = ints("is.npy", &[0, 4, 1, 2]);
    assert_eq!(
        ok(&eval_with(&prog, "pickv", &[&good, &xs], &[])).trim(),
        "[4.0, 2.0]"
    );
    let out = run_verified(&prog, "pickv", "c", &[&good, &xs], &[]);
    assert_eq!(out.trim(), "[4.0, 2.0]");
    let bad = ints("bad.npy", &[0, 4, 1, 7]);
    refused(
        &eval_with(&prog, "pickv", &[&bad, &xs], &[]),
        &[
            "bad.npy`[1] (lane 1 of the vectors) is 7",
            "0..5",
            "parameter 1 of `pickv`",
        ],
    );
}
