//! The index expressions generated for chains of views read like hand-written
//! ones: `arith` simplifies `/` and `%` away using the loop variables' ranges.
//! Each case reads (or writes) a view in a loop nest and checks the one
//! assignment line; the programs are also compiled and run, so a wrong index
//! that happens to print nicely still fails.

mod common;

use arith::{Nat, Var};
use codegen::{generate, Target};
use common::*;
use dpia::{Acc, Exp, Ident, LoopKind};
use rise::DataType;

/// The dimensions of an array type.
fn dims(dt: &DataType) -> Vec<Nat> {
    match dt {
        DataType::Array(n, t) => {
            let mut d = vec![n.clone()];
            d.extend(dims(t));
            d
        }
        _ => vec![],
    }
}

/// `out[ijk...] = view[ijk...]` over a loop nest covering the whole view,
/// with loop variables named `i`, `j`, `k`.
fn copy_program(
    view: Exp,
    out_acc: impl Fn(&Ident) -> Acc,
    out_ty: DataType,
    sizes: &[&Var],
    inputs: &[&Ident],
) -> dpia::Program {
    let out = ident("out", out_ty);
    let names = ["i", "j", "k"];
    let ds = dims(&view.ty);
    let vars: Vec<Var> = ds.iter().zip(names).map(|(d, n)| loop_var(n, d)).collect();
    let (mut e, mut a) = (view, out_acc(&out));
    for v in &vars {
        e = idx(e, nat(v));
        a = idx_acc(a, nat(v));
    }
    let mut body = assign(a, e);
    for v in vars.iter().rev() {
        body = for_loop(v, LoopKind::Seq, "mapSeq", body);
    }
    program("views", sizes, &out, inputs, body)
}

/// The line assigning to `out`.
fn out_line(src: &str) -> String {
    lines(src)
        .into_iter()
        .find(|l| l.starts_with("out["))
        .unwrap_or_else(|| panic!("no assignment to out in\n{src}"))
        .to_string()
}

/// Generates, checks the printed assignment, runs the program and compares
/// with `want(flat output index) = flat input index` (the program copies).
fn check(p: &dpia::Program, line: &str, sizes: &[i64], len: usize, want: impl Fn(usize) -> usize) {
    let src = generate(p, Target::C).unwrap().source;
    assert_eq!(out_line(&src), line, "\n{src}");
    let xs: Vec<f64> = (0..len).map(|k| k as f64).collect();
    let (got, src) = run(p, Target::C, ("float", len), &[Buf::f32(xs)], sizes);
    let expected: Vec<f64> = (0..len).map(|k| want(k) as f64).collect();
    assert_close(&got, &expected, &src);
}

#[test]
fn join_of_split_is_the_identity() {
    let m = size("m");
    let x = ident("x", arr(nat(&m) * 4, f32t()));
    let p = copy_program(join(split(4, read(&x))), acc, x.ty.clone(), &[&m], &[&x]);
    check(&p, "out[i] = x[i];", &[3], 12, |k| k);
}

#[test]
fn split_of_join_is_row_major() {
    let n = size("n");
    let x = ident("x", arr(nat(&n), arr(4, f32t())));
    let p = copy_program(split(4, join(read(&x))), acc, x.ty.clone(), &[&n], &[&x]);
    check(&p, "out[i * 4 + j] = x[i * 4 + j];", &[3], 12, |k| k);
}

#[test]
fn split_of_split_multiplies_out() {
    let n = size("n");
    let x = ident("x", arr(nat(&n) * 32, f32t()));
    let v = split(4, split(8, read(&x)));
    let ty = v.ty.clone();
    let p = copy_program(v, acc, ty, &[&n], &[&x]);
    check(
        &p,
        "out[i * 32 + j * 8 + k] = x[i * 32 + j * 8 + k];",
        &[2],
        64,
        |k| k,
    );
}

#[test]
fn transpose_twice_is_the_identity() {
    let (n, m) = (size("n"), size("m"));
    let x = ident("x", arr(nat(&n), arr(nat(&m), f32t())));
    let p = copy_program(
        transpose(transpose(read(&x))),
        acc,
        x.ty.clone(),
        &[&n, &m],
        &[&x],
    );
    check(&p, "out[i * m + j] = x[i * m + j];", &[3, 5], 15, |k| k);
}

#[test]
fn join_of_transposed_split() {
    // (join (transpose (split 4 x)))[i] = x[i / m + (i % m) * 4]
    let m = size("m");
    let x = ident("x", arr(nat(&m) * 4, f32t()));
    let p = copy_program(
        join(transpose(split(4, read(&x)))),
        acc,
        x.ty.clone(),
        &[&m],
        &[&x],
    );
    let mm = 3;
    check(
        &p,
        "out[i] = x[i / m + (i % m) * 4];",
        &[mm as i64],
        12,
        |k| (k % mm) * 4 + k / mm,
    );
}

#[test]
fn tiles_of_a_matrix() {
    // map (map transpose) (split 2 (map (split 2) x)): 2x2 tiles of an (2a).(2b) matrix,
    // read as tiles[ti][tj][ii][jj] through generate, i.e. x[(ti*2 + ii) * cols + tj*2 + jj]
    let (a, b) = (size("a"), size("b"));
    let cols = nat(&b) * 2;
    let x = ident("x", arr(nat(&a) * 2, arr(cols.clone(), f32t())));
    let (g, h) = (loop_var("g", &(nat(&a) * 2)), loop_var("h", &nat(&b)));
    let rows_split = generate_view(&g, nat(&a) * 2, split(2, idx(read(&x), nat(&g))));
    let tiles = split(2, rows_split); // a.2.b.2.f32
    let per_tile = generate_view(&h, nat(&a), transpose(idx(tiles, nat(&h)))); // a.b.2.2
    let view = join(per_tile); // (a*b).2.2.f32
    let ty = view.ty.clone();
    let p = copy_program(view, acc, ty, &[&a, &b], &[&x]);
    let (aa, bb) = (2usize, 3usize);
    check(
        &p,
        "out[i * 4 + j * 2 + k] = x[(i / b) * b * 4 + (i % b) * 2 + j * b * 2 + k];",
        &[aa as i64, bb as i64],
        aa * bb * 4,
        |f| {
            let (t, ii, jj) = (f / 4, (f / 2) % 2, f % 2);
            let (ta, tb) = (t / bb, t % bb);
            (ta * 2 + ii) * (bb * 2) + tb * 2 + jj
        },
    );
}

#[test]
fn slide_windows_overlap() {
    let n = size("n");
    let x = ident("x", arr(nat(&n) + 2, f32t()));
    let v = slide(3, 1, read(&x));
    let ty = v.ty.clone();
    let p = copy_program(v, acc, ty, &[&n], &[&x]);
    check(&p, "out[i * 3 + j] = x[i + j];", &[4], 12, |f| {
        f / 3 + f % 3
    });
}

#[test]
fn as_scalar_of_as_vector_is_the_identity() {
    let m = size("m");
    let x = ident("x", arr(nat(&m) * 4, f32t()));
    let p = copy_program(
        as_scalar(as_vector(4, read(&x))),
        acc,
        x.ty.clone(),
        &[&m],
        &[&x],
    );
    check(&p, "out[i] = x[i];", &[3], 12, |k| k);
}

#[test]
fn write_views_compose() {
    // out written through joinAcc (transposeAcc out'): element i of the
    // joined m*4 array lands at out[(i % 4) * m + i / 4]
    let m = size("m");
    let x = ident("x", arr(nat(&m) * 4, f32t()));
    let out_ty = arr(4, arr(nat(&m), f32t()));
    let p = copy_program(
        read(&x),
        |o| join_acc(transpose_acc(acc(o))),
        out_ty,
        &[&m],
        &[&x],
    );
    let mm = 3;
    // out[(i % 4) * m + i / 4] = x[i], i.e. out[f] = x[(f % m) * 4 + f / m]
    check(
        &p,
        "out[(i % 4) * m + i / 4] = x[i];",
        &[mm as i64],
        12,
        |f| (f % mm) * 4 + f / mm,
    );
}

#[test]
fn write_through_split_of_drop() {
    // out[2 + i*4 + j] for a (m*4).f32 written into a (m*4+2) array
    let m = size("m");
    let x = ident("x", arr(nat(&m), arr(4, f32t())));
    let out_ty = arr(nat(&m) * 4 + 2, f32t());
    let drop_acc = |o: &Ident| {
        let a = acc(o);
        let ty = arr(nat(&m) * 4, f32t());
        split_acc(
            4,
            Acc::new(dpia::AccKind::View(dpia::View::Drop(Nat::cst(2)), a), ty),
        )
    };
    let p = copy_program(read(&x), drop_acc, out_ty, &[&m], &[&x]);
    let src = generate(&p, Target::C).unwrap().source;
    assert_eq!(out_line(&src), "out[i * 4 + j + 2] = x[i * 4 + j];");
}

#[test]
fn slide_with_a_step() {
    // slide 3 2 over 2n+1 elements: n windows, window i starts at 2i
    let n = size("n");
    let x = ident("x", arr(nat(&n) * 2 + 1, f32t()));
    let v = slide(3, 2, read(&x));
    let ty = v.ty.clone();
    let p = copy_program(v, acc, ty, &[&n], &[&x]);
    check(&p, "out[i * 3 + j] = x[i * 2 + j];", &[4], 12, |f| {
        (f / 3) * 2 + f % 3
    });
}
