//! Shared test support: a small builder for DPIA programs, and a harness that
//! compiles generated C with a test `main`, runs it and reads its output.
#![allow(dead_code)]

use std::path::Path;
use std::process::Command;

use arith::{Nat, Var};
use codegen::{generate, CModule, Target};
use dpia::{Acc, AccKind, BinOp, Comm, Exp, ExpKind, Ident, LoopKind, PadMode, Program, View};
use rise::{AddrSpace, DataType, Literal, ScalarType};

// ---- types ---------------------------------------------------------------------------------

pub fn f32t() -> DataType {
    DataType::f32()
}

pub fn int_t() -> DataType {
    DataType::Scalar(ScalarType::Int)
}

pub fn arr(n: impl Into<Nat>, t: DataType) -> DataType {
    DataType::array(n, t)
}

pub fn vec_t(t: DataType, n: i64) -> DataType {
    DataType::vector(t, n)
}

fn split_array(dt: &DataType) -> (Nat, DataType) {
    match dt {
        DataType::Array(n, t) => (n.clone(), (**t).clone()),
        other => panic!("test builder: expected an array type, got {other:?}"),
    }
}

// ---- naturals ------------------------------------------------------------------------------

pub fn size(name: &str) -> Var {
    Var::new(name)
}

pub fn nat(v: &Var) -> Nat {
    Nat::var(v)
}

/// A loop variable `0 <= name < count`.
pub fn loop_var(name: &str, count: &Nat) -> Var {
    Var::with_range(name, Nat::cst(0), count.clone())
}

// ---- identifiers and expressions -------------------------------------------------------------

pub fn ident(name: &str, ty: DataType) -> Ident {
    Ident {
        name: name.into(),
        ty,
    }
}

pub fn read(id: &Ident) -> Exp {
    Exp::new(ExpKind::Var(id.clone()), id.ty.clone())
}

pub fn f32_lit(v: f64) -> Exp {
    Exp::new(ExpKind::Lit(Literal::Float(v, ScalarType::F32)), f32t())
}

pub fn nat_exp(n: Nat, ty: DataType) -> Exp {
    Exp::new(ExpKind::Nat(n), ty)
}

pub fn bin(op: BinOp, a: Exp, b: Exp) -> Exp {
    let ty = match op {
        BinOp::Gt | BinOp::Lt | BinOp::Eq => DataType::Scalar(ScalarType::Bool),
        _ => a.ty.clone(),
    };
    Exp::new(ExpKind::Binary(op, a, b), ty)
}

pub fn add(a: Exp, b: Exp) -> Exp {
    bin(BinOp::Add, a, b)
}

pub fn mul(a: Exp, b: Exp) -> Exp {
    bin(BinOp::Mul, a, b)
}

pub fn select(c: Exp, a: Exp, b: Exp) -> Exp {
    let ty = a.ty.clone();
    Exp::new(ExpKind::Select(c, a, b), ty)
}

pub fn cast(e: Exp, ty: DataType) -> Exp {
    Exp::new(ExpKind::Cast(e), ty)
}

pub fn idx(e: Exp, k: impl Into<Nat>) -> Exp {
    let (_, t) = split_array(&e.ty);
    Exp::new(ExpKind::Idx(e, k.into()), t)
}

pub fn idx2(e: Exp, i: impl Into<Nat>, j: impl Into<Nat>) -> Exp {
    idx(idx(e, i), j)
}

pub fn split(n: impl Into<Nat>, e: Exp) -> Exp {
    let n = n.into();
    let (mn, t) = split_array(&e.ty);
    let ty = arr(mn.div_exact(&n), arr(n.clone(), t));
    Exp::new(ExpKind::View(View::Split(n), e), ty)
}

pub fn join(e: Exp) -> Exp {
    let (n, inner) = split_array(&e.ty);
    let (m, t) = split_array(&inner);
    Exp::new(ExpKind::View(View::Join(m.clone()), e), arr(n * m, t))
}

pub fn transpose(e: Exp) -> Exp {
    let (n, inner) = split_array(&e.ty);
    let (m, t) = split_array(&inner);
    Exp::new(ExpKind::View(View::Transpose, e), arr(m, arr(n, t)))
}

pub fn slide(sz: i64, sp: i64, e: Exp) -> Exp {
    let (n, t) = split_array(&e.ty);
    let windows = (n - sz).div_exact(&Nat::cst(sp)) + 1;
    Exp::new(
        ExpKind::View(View::Slide(Nat::cst(sz), Nat::cst(sp)), e),
        arr(windows, arr(sz, t)),
    )
}

pub fn pad(l: i64, r: i64, mode: PadMode, e: Exp) -> Exp {
    let (n, t) = split_array(&e.ty);
    Exp::new(
        ExpKind::Pad(Nat::cst(l), Nat::cst(r), mode, e),
        arr(n + l + r, t),
    )
}

pub fn concat(a: Exp, b: Exp) -> Exp {
    let (n, t) = split_array(&a.ty);
    let (m, _) = split_array(&b.ty);
    Exp::new(ExpKind::Concat(a, b), arr(n + m, t))
}

pub fn zip(a: Exp, b: Exp) -> Exp {
    let (n, s) = split_array(&a.ty);
    let (_, t) = split_array(&b.ty);
    Exp::new(ExpKind::Zip(a, b), arr(n, DataType::pair(s, t)))
}

pub fn fst(e: Exp) -> Exp {
    let DataType::Pair(s, _) = &e.ty else {
        panic!("fst of a non-pair")
    };
    let ty = (**s).clone();
    Exp::new(ExpKind::Fst(e), ty)
}

pub fn snd(e: Exp) -> Exp {
    let DataType::Pair(_, t) = &e.ty else {
        panic!("snd of a non-pair")
    };
    let ty = (**t).clone();
    Exp::new(ExpKind::Snd(e), ty)
}

pub fn generate_view(v: &Var, n: impl Into<Nat>, body: Exp) -> Exp {
    let ty = arr(n, body.ty.clone());
    Exp::new(ExpKind::Generate(v.clone(), body), ty)
}

pub fn as_vector(n: i64, e: Exp) -> Exp {
    let (mn, t) = split_array(&e.ty);
    let ty = arr(mn.div_exact(&Nat::cst(n)), vec_t(t, n));
    Exp::new(ExpKind::AsVector(Nat::cst(n), e), ty)
}

pub fn as_scalar(e: Exp) -> Exp {
    let (m, v) = split_array(&e.ty);
    let DataType::Vector(n, t) = &v else {
        panic!("asScalar of non-vectors")
    };
    let ty = arr(m * n, (**t).clone());
    Exp::new(ExpKind::View(View::AsScalar(n.clone()), e), ty)
}

pub fn broadcast(n: i64, e: Exp) -> Exp {
    let ty = vec_t(e.ty.clone(), n);
    Exp::new(ExpKind::VectorFromScalar(e), ty)
}

// ---- acceptors -----------------------------------------------------------------------------

pub fn acc(id: &Ident) -> Acc {
    Acc::new(AccKind::Var(id.clone()), id.ty.clone())
}

pub fn idx_acc(a: Acc, k: impl Into<Nat>) -> Acc {
    let (_, t) = split_array(&a.ty);
    Acc::new(AccKind::Idx(a, k.into()), t)
}

pub fn idx2_acc(a: Acc, i: impl Into<Nat>, j: impl Into<Nat>) -> Acc {
    idx_acc(idx_acc(a, i), j)
}

/// `splitAcc n a`, `a: (m*n).t`: accepts `m.n.t`.
pub fn split_acc(n: i64, a: Acc) -> Acc {
    let (mn, t) = split_array(&a.ty);
    let ty = arr(mn.div_exact(&Nat::cst(n)), arr(n, t));
    Acc::new(AccKind::View(View::Split(Nat::cst(n)), a), ty)
}

/// `joinAcc a`, `a: n.m.t`: accepts `(n*m).t`.
pub fn join_acc(a: Acc) -> Acc {
    let (n, inner) = split_array(&a.ty);
    let (m, t) = split_array(&inner);
    Acc::new(AccKind::View(View::Join(m.clone()), a), arr(n * m, t))
}

/// `transposeAcc a`, `a: m.n.t`: accepts `n.m.t`.
pub fn transpose_acc(a: Acc) -> Acc {
    let (m, inner) = split_array(&a.ty);
    let (n, t) = split_array(&inner);
    Acc::new(AccKind::View(View::Transpose, a), arr(n, arr(m, t)))
}

pub fn zip1_acc(a: Acc) -> Acc {
    let (n, p) = split_array(&a.ty);
    let DataType::Pair(s, _) = &p else {
        panic!("zipAcc1 of non-pairs")
    };
    let ty = arr(n, (**s).clone());
    Acc::new(AccKind::Zip1(a), ty)
}

pub fn zip2_acc(a: Acc) -> Acc {
    let (n, p) = split_array(&a.ty);
    let DataType::Pair(_, t) = &p else {
        panic!("zipAcc2 of non-pairs")
    };
    let ty = arr(n, (**t).clone());
    Acc::new(AccKind::Zip2(a), ty)
}

pub fn pair1_acc(a: Acc) -> Acc {
    let DataType::Pair(s, _) = &a.ty else {
        panic!("pairAcc1 of a non-pair")
    };
    let ty = (**s).clone();
    Acc::new(AccKind::Pair1(a), ty)
}

pub fn pair2_acc(a: Acc) -> Acc {
    let DataType::Pair(_, t) = &a.ty else {
        panic!("pairAcc2 of a non-pair")
    };
    let ty = (**t).clone();
    Acc::new(AccKind::Pair2(a), ty)
}

/// `asVectorAcc n a`, `a: (m*n).t`: accepts `m.vec[t, n]`.
pub fn as_vector_acc(n: i64, a: Acc) -> Acc {
    let (mn, t) = split_array(&a.ty);
    let ty = arr(mn.div_exact(&Nat::cst(n)), vec_t(t, n));
    Acc::new(AccKind::AsVector(Nat::cst(n), a), ty)
}

/// `mapAcc (v => a)` over `n` elements.
pub fn map_acc(v: &Var, n: impl Into<Nat>, a: Acc) -> Acc {
    let ty = arr(n, a.ty.clone());
    Acc::new(AccKind::Map(v.clone(), a), ty)
}

// ---- commands ------------------------------------------------------------------------------

pub fn assign(a: Acc, e: Exp) -> Comm {
    Comm::Assign(a, e)
}

pub fn seq(cs: Vec<Comm>) -> Comm {
    Comm::Seq(cs)
}

pub fn new_mem(id: &Ident, body: Comm) -> Comm {
    Comm::New {
        ident: id.clone(),
        addr: AddrSpace::Private,
        body: Box::new(body),
    }
}

pub fn for_loop(v: &Var, kind: LoopKind, origin: &'static str, body: Comm) -> Comm {
    let count = v
        .range()
        .expect("loop variables carry their range")
        .1
        .clone();
    Comm::For {
        var: v.clone(),
        count,
        kind,
        origin,
        body: Box::new(body),
    }
}

pub fn program(
    name: &str,
    sizes: &[&Var],
    output: &Ident,
    inputs: &[&Ident],
    body: Comm,
) -> Program {
    Program {
        name: name.into(),
        sizes: sizes.iter().map(|v| (*v).clone()).collect(),
        output: output.clone(),
        inputs: inputs.iter().map(|i| (*i).clone()).collect(),
        body,
        constraints: Vec::new(),
    }
}

// ---- compiling and running -------------------------------------------------------------------

/// One buffer of the test: its C element type and its values.
pub struct Buf {
    pub cty: &'static str,
    pub data: Vec<f64>,
}

impl Buf {
    pub fn f32(data: Vec<f64>) -> Buf {
        Buf { cty: "float", data }
    }
    pub fn int(data: Vec<f64>) -> Buf {
        Buf { cty: "int", data }
    }
}

/// Deterministic test data: small values exactly representable as floats.
pub fn data(len: usize, seed: u64) -> Vec<f64> {
    let mut x = seed
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    (0..len)
        .map(|_| {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((x >> 33) % 17) as f64 - 8.0
        })
        .collect()
}

/// Generates `p` for `target`, checks that the module alone compiles
/// warning-free with `-O3 -march=native -Wall -Wextra -Werror`, then builds it
/// with a `main` that fills the inputs, calls the entry point and prints the
/// `out_len` output elements (of C type `out_cty`), under `-O2 -Wall -Wextra
/// -Werror` and the address and undefined-behaviour sanitizers; returns the
/// printed values and the source.
pub fn run(
    p: &Program,
    target: Target,
    out: (&str, usize),
    inputs: &[Buf],
    sizes: &[i64],
) -> (Vec<f64>, String) {
    let m = generate(p, target).unwrap_or_else(|e| panic!("code generation failed: {e}"));
    if std::env::var_os("CODEGEN_SHOW").is_some() {
        eprintln!("===== {} ({target:?}) =====\n{}", p.name, m.source);
    }
    let values = run_module(&m, target, out, inputs, sizes);
    (values, m.source)
}

pub fn run_module(
    m: &CModule,
    target: Target,
    (out_cty, out_len): (&str, usize),
    inputs: &[Buf],
    sizes: &[i64],
) -> Vec<f64> {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let omp: &[&str] = if target == Target::OpenMp {
        &["-fopenmp"]
    } else {
        &[]
    };

    let module = dir.path().join("module.c");
    std::fs::write(&module, &m.source).expect("writing the module");
    gcc(
        &[
            &["-O3", "-march=native", "-Wall", "-Wextra", "-Werror", "-c"],
            omp,
            &[path(&module), "-o", path(&dir.path().join("module.o"))],
        ]
        .concat(),
        &m.source,
    );

    let mut main = String::from("#include <stdio.h>\n#include <stdlib.h>\n#include <stdint.h>\n\n");
    main.push_str(&format!(
        "void {}(void *const *buffers, const int64_t *sizes);\n\nint main(void) {{\n",
        m.entry
    ));
    main.push_str(&format!(
        "  {out_cty} *out = calloc({out_len}, sizeof({out_cty}));\n"
    ));
    let mut names = vec!["out".to_string()];
    for (k, b) in inputs.iter().enumerate() {
        let vals: Vec<String> = b.data.iter().map(|v| format!("{v:?}")).collect();
        main.push_str(&format!(
            "  static const {cty} in{k}_data[{len}] = {{{vals}}};\n  {cty} *in{k} = malloc({len} * sizeof({cty}));\n  for (int k = 0; k < {len}; k++) in{k}[k] = in{k}_data[k];\n",
            cty = b.cty,
            len = b.data.len().max(1),
            vals = vals.join(", ")
        ));
        names.push(format!("in{k}"));
    }
    main.push_str(&format!("  void *buffers[] = {{{}}};\n", names.join(", ")));
    let sz: Vec<String> = sizes.iter().map(|s| s.to_string()).collect();
    main.push_str(&format!(
        "  const int64_t sizes[] = {{{}0}};\n",
        sz.iter().map(|s| format!("{s}, ")).collect::<String>()
    ));
    main.push_str(&format!("  {}(buffers, sizes);\n", m.entry));
    main.push_str(&format!(
        "  for (int k = 0; k < {out_len}; k++) printf(\"%.9g\\n\", (double)out[k]);\n"
    ));
    for n in &names {
        main.push_str(&format!("  free({n});\n"));
    }
    main.push_str("  return 0;\n}\n");
    let main_c = dir.path().join("main.c");
    std::fs::write(&main_c, &main).expect("writing the test main");

    let exe = dir.path().join("test");
    let san = [
        "-fsanitize=address,undefined",
        "-fno-sanitize-recover=all",
        "-fno-omit-frame-pointer",
    ];
    gcc(
        &[
            &["-O2", "-Wall", "-Wextra", "-Werror"],
            omp,
            &san,
            &[path(&module), path(&main_c), "-o", path(&exe)],
        ]
        .concat(),
        &m.source,
    );
    let run = Command::new(&exe)
        .env("OMP_NUM_THREADS", "4")
        .output()
        .expect("running the test program");
    assert!(
        run.status.success(),
        "the generated program failed:\n{}\n--- source ---\n{}",
        String::from_utf8_lossy(&run.stderr),
        m.source
    );
    String::from_utf8_lossy(&run.stdout)
        .lines()
        .map(|l| {
            l.trim()
                .parse::<f64>()
                .unwrap_or_else(|_| panic!("bad output line {l:?}"))
        })
        .collect()
}

fn path(p: &Path) -> &str {
    p.to_str().expect("a UTF-8 temporary path")
}

fn gcc(args: &[&str], source: &str) {
    let out = Command::new("gcc")
        .args(args)
        .output()
        .expect("gcc is needed to run the code generation tests");
    assert!(
        out.status.success(),
        "gcc {} failed:\n{}\n--- source ---\n{source}",
        args.join(" "),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Asserts that two float vectors are equal up to a relative tolerance.
pub fn assert_close(got: &[f64], want: &[f64], source: &str) {
    assert_eq!(got.len(), want.len(), "output length\n{source}");
    for (k, (g, w)) in got.iter().zip(want).enumerate() {
        let tol = 1e-5 * w.abs().max(1.0);
        assert!(
            (g - w).abs() <= tol,
            "element {k}: got {g}, want {w}\n{source}"
        );
    }
}

/// The lines of `source` with leading whitespace removed.
pub fn lines(source: &str) -> Vec<&str> {
    source.lines().map(str::trim).collect()
}

/// Asserts that `source` has a line equal to `line` (ignoring indentation).
pub fn assert_line(source: &str, line: &str) {
    assert!(
        lines(source).contains(&line),
        "no line `{line}` in\n{source}"
    );
}
