//! `codegen::abi` against the C compiler: the element types of a table, spelled as the code
//! generator spells them, compiled with `sizeof`, `_Alignof` and `offsetof` by the system C
//! compiler (`$CC`, else `cc`), whose answers must be abi's. Skipped where there is no C
//! compiler.

use std::path::Path;
use std::process::Command;

use codegen::abi::{self, IndexWidth};
use codegen::{spell_c_types, Target};
use rise::{DataType, ScalarType};

fn s(t: ScalarType) -> DataType {
    DataType::Scalar(t)
}

fn pair(a: DataType, b: DataType) -> DataType {
    DataType::pair(a, b)
}

fn vec(t: DataType, lanes: i64) -> DataType {
    DataType::vector(t, lanes)
}

fn idx() -> DataType {
    DataType::Index(100.into())
}

/// Scalars, vectors and pairs of such that C and OpenMP code may hold.
fn c_table() -> Vec<DataType> {
    use ScalarType::*;
    let mut t: Vec<DataType> = [Bool, Int, I8, I16, I32, I64, U8, U16, U32, U64, F32, F64]
        .into_iter()
        .map(s)
        .collect();
    t.extend([DataType::NatType, idx()]);
    t.extend([
        vec(s(F32), 2),
        vec(s(F32), 4),
        vec(s(F64), 2),
        vec(s(I8), 16),
        vec(s(U16), 4),
        vec(s(I32), 2),
        vec(DataType::NatType, 2),
        vec(idx(), 2),
        // wider than 16 bytes: their size only (their alignment is the compiler's flags')
        vec(s(F32), 8),
        vec(s(F64), 8),
    ]);
    t.extend(pairs(&[
        s(Bool),
        s(I8),
        s(I16),
        s(F32),
        s(F64),
        DataType::NatType,
        idx(),
        vec(s(F32), 4),
        vec(s(I32), 2),
    ]));
    t
}

/// Every pair of two of `parts`, and some nested pairs.
fn pairs(parts: &[DataType]) -> Vec<DataType> {
    let mut out = Vec::new();
    for a in parts {
        for b in parts {
            out.push(pair(a.clone(), b.clone()));
        }
    }
    let (i8_, f32_, f64_) = (s(ScalarType::I8), s(ScalarType::F32), s(ScalarType::F64));
    out.extend([
        pair(pair(f32_.clone(), i8_.clone()), s(ScalarType::I16)),
        pair(i8_.clone(), pair(f64_.clone(), i8_.clone())),
        pair(pair(vec(f32_.clone(), 4), f32_.clone()), f32_.clone()),
        pair(pair(idx(), i8_.clone()), pair(i8_, idx())),
        pair(DataType::NatType, pair(idx(), f32_)),
    ]);
    out
}

/// Scalars, vectors and pairs of such that CUDA code may hold (its vectors: 2 or 4 lanes of
/// `float`, `double`, `int`, `uint`, at most 16 bytes).
fn cuda_table() -> Vec<DataType> {
    use ScalarType::*;
    let mut t = vec![
        s(I8),
        s(F32),
        s(F64),
        DataType::NatType,
        idx(),
        vec(s(F32), 2),
        vec(s(F32), 4),
        vec(s(F64), 2),
        vec(s(I32), 4),
        vec(s(U32), 2),
    ];
    t.extend(pairs(&[
        s(I8),
        s(F32),
        s(F64),
        DataType::NatType,
        idx(),
        vec(s(F32), 2),
        vec(s(F64), 2),
    ]));
    t
}

/// CUDA's vector types as `vector_types.h` defines them (a struct of the lanes aligned to
/// its size), for a C compiler.
const CUDA_VECTORS: &str = "\
typedef struct __attribute__((aligned(8))) { float x, y; } float2;
typedef struct __attribute__((aligned(16))) { float x, y, z, w; } float4;
typedef struct __attribute__((aligned(16))) { double x, y; } double2;
typedef struct __attribute__((aligned(16))) { int x, y, z, w; } int4;
typedef struct __attribute__((aligned(8))) { unsigned int x, y; } uint2;
";

/// What the C compiler says of one type: size, alignment, offset of `snd` (pairs).
#[derive(Debug, PartialEq)]
struct Answer {
    size: u64,
    align: u64,
    snd: Option<u64>,
}

/// A C program printing `sizeof`, `_Alignof` and (for pairs) `offsetof(T, snd)` of each type.
fn probe(prelude: &str, declarations: &str, types: &[DataType], names: &[String]) -> String {
    let mut c = format!(
        "#include <stdbool.h>\n#include <stddef.h>\n#include <stdint.h>\n#include <stdio.h>\n\
         {prelude}\n{declarations}\nint main(void) {{\n"
    );
    for (t, name) in types.iter().zip(names) {
        let snd = match t {
            DataType::Pair(..) => format!("(int)offsetof({name}, snd)"),
            _ => "-1".into(),
        };
        c.push_str(&format!(
            "  printf(\"%d %d %d\\n\", (int)sizeof({name}), (int)_Alignof({name}), {snd});\n"
        ));
    }
    c.push_str("  return 0;\n}\n");
    c
}

/// The C compiler's answers for `source` built with `flags`; `None` without a C compiler.
fn compile_and_run(source: &str, flags: &[&str], dir: &Path) -> Option<Vec<Answer>> {
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".into());
    let (src, exe) = (dir.join("probe.c"), dir.join("probe"));
    std::fs::write(&src, source).expect("writing the probe");
    let built = match Command::new(&cc)
        .args(flags)
        .arg(&src)
        .arg("-o")
        .arg(&exe)
        .output()
    {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            eprintln!("skipped: no C compiler `{cc}`");
            return None;
        }
        result => result.expect("starting the C compiler"),
    };
    assert!(
        built.status.success(),
        "the probe does not compile:\n{}\n{source}",
        String::from_utf8_lossy(&built.stderr)
    );
    let run = Command::new(&exe).output().expect("running the probe");
    assert!(run.status.success());
    let text = String::from_utf8(run.stdout).expect("the probe prints text");
    Some(
        text.lines()
            .map(|line| {
                let n: Vec<i64> = line.split(' ').map(|w| w.parse().unwrap()).collect();
                Answer {
                    size: n[0] as u64,
                    align: n[1] as u64,
                    snd: u64::try_from(n[2]).ok(),
                }
            })
            .collect(),
    )
}

/// abi's answer for `t`: its size; its alignment where abi knows it (the C compiler's for a
/// vector of more than 16 bytes), else the compiler's; the offset of `snd`.
fn abi_answer(t: &DataType, width: IndexWidth, compiler: &Answer) -> Answer {
    let size = abi::size_of(t, width).unwrap_or_else(|e| panic!("{t}: {e}"));
    let align = match abi::layout(t, width) {
        Ok(l) => l.align,
        Err(abi::AbiError::WideVector { within: None, .. }) => compiler.align,
        Err(e) => panic!("{t}: {e}"),
    };
    let snd = matches!(t, DataType::Pair(..)).then(|| abi::pair_offsets(t, width).unwrap().1);
    Answer { size, align, snd }
}

fn check(types: &[DataType], width: IndexWidth, answers: &[Answer]) {
    assert_eq!(answers.len(), types.len());
    for (t, compiler) in types.iter().zip(answers) {
        assert_eq!(
            &abi_answer(t, width, compiler),
            compiler,
            "`{t}` at {width:?}"
        );
    }
}

#[test]
fn abi_agrees_with_the_c_compiler_on_c_code() {
    let types = c_table();
    let (names, declarations) = spell_c_types(&types, Target::C).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let source = probe("", &declarations, &types, &names);
    for flags in [&["-O0"][..], &["-O2", "-march=native"]] {
        let Some(answers) = compile_and_run(&source, flags, dir.path()) else {
            return;
        };
        // C indices are 64 bits wide
        check(&types, IndexWidth::Bits64, &answers);
    }
}

#[test]
fn abi_agrees_with_the_c_compiler_on_cuda_structs_at_both_index_widths() {
    let types = cuda_table();
    let (names, declarations) = spell_c_types(&types, Target::Cuda).unwrap();
    assert!(declarations.contains("shine_index"), "{declarations}");
    let dir = tempfile::tempdir().unwrap();
    let source = probe(CUDA_VECTORS, &declarations, &types, &names);
    for (width, flags) in [
        (IndexWidth::Bits32, &[][..]),
        (IndexWidth::Bits64, &["-DSHINE_INDEX_64"][..]),
    ] {
        let Some(answers) = compile_and_run(&source, flags, dir.path()) else {
            return;
        };
        check(&types, width, &answers);
    }
}
