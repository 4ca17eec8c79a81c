//! Hand-built DPIA programs, compiled with gcc (warnings are errors, sanitizers
//! on) and run; their outputs are compared with the same computation in Rust.

mod common;

use arith::Nat;
use codegen::{generate, CodegenError, KernelParam, Target};
use common::*;
use dpia::{BinOp, Exp, ExpKind, LoopKind, PadMode};
use rise::DataType;

/// `mapSeq (fun x => x * 2)`.
#[test]
fn map_seq_scale() {
    let n = size("n");
    let x = ident("x", arr(nat(&n), f32t()));
    let out = ident("out", arr(nat(&n), f32t()));
    let i = loop_var("i", &nat(&n));
    let body = for_loop(
        &i,
        LoopKind::Seq,
        "mapSeq",
        assign(
            idx_acc(acc(&out), nat(&i)),
            mul(idx(read(&x), nat(&i)), f32_lit(2.0)),
        ),
    );
    let p = program("scale", &[&n], &out, &[&x], body);
    let xs = data(10, 1);
    let (got, src) = run(&p, Target::C, ("float", 10), &[Buf::f32(xs.clone())], &[10]);
    let want: Vec<f64> = xs.iter().map(|v| v * 2.0).collect();
    assert_close(&got, &want, &src);
    assert!(
        src.contains("void scale(float *restrict out, const float *restrict x, int64_t n) {"),
        "{src}"
    );
    assert!(
        src.contains("int scale_entry(void *const *buffers, const int64_t *sizes) {"),
        "{src}"
    );
    assert_line(&src, "// mapSeq");
    assert_line(&src, "for (int64_t i = 0; i < n; i++) {");
    assert_line(&src, "out[i] = x[i] * 2.0f;");
    assert_line(
        &src,
        "scale((float *)buffers[0], (const float *)buffers[1], sizes[0]);",
    );
}

/// A matrix transpose written through `transposeAcc`.
#[test]
fn transpose_through_acceptor() {
    let (n, m) = (size("n"), size("m"));
    let x = ident("x", arr(nat(&n), arr(nat(&m), f32t())));
    let out = ident("out", arr(nat(&m), arr(nat(&n), f32t())));
    let i = loop_var("i", &nat(&n));
    let j = loop_var("j", &nat(&m));
    let body = for_loop(
        &i,
        LoopKind::Seq,
        "mapSeq",
        for_loop(
            &j,
            LoopKind::Seq,
            "mapSeq",
            assign(
                idx2_acc(transpose_acc(acc(&out)), nat(&i), nat(&j)),
                idx2(read(&x), nat(&i), nat(&j)),
            ),
        ),
    );
    let p = program("transpose", &[&n, &m], &out, &[&x], body);
    let (rows, cols) = (3, 5);
    let xs = data(rows * cols, 2);
    let (got, src) = run(
        &p,
        Target::C,
        ("float", rows * cols),
        &[Buf::f32(xs.clone())],
        &[rows as i64, cols as i64],
    );
    let mut want = vec![0.0; rows * cols];
    for r in 0..rows {
        for c in 0..cols {
            want[c * rows + r] = xs[r * cols + c];
        }
    }
    assert_close(&got, &want, &src);
    assert_line(&src, "out[i + j * n] = x[i * m + j];");
}

/// `reduceSeq (+) 0` into a scalar output, through a `new` accumulator.
#[test]
fn reduction_with_accumulator() {
    let n = size("n");
    let x = ident("x", arr(nat(&n), f32t()));
    let out = ident("out", f32t());
    let a = ident("accum", f32t());
    let i = loop_var("i", &nat(&n));
    let body = new_mem(
        &a,
        seq(vec![
            assign(acc(&a), f32_lit(0.0)),
            for_loop(
                &i,
                LoopKind::Seq,
                "reduceSeq",
                assign(acc(&a), add(read(&a), idx(read(&x), nat(&i)))),
            ),
            assign(acc(&out), read(&a)),
        ]),
    );
    let p = program("sum", &[&n], &out, &[&x], body);
    let xs = data(37, 3);
    let (got, src) = run(&p, Target::C, ("float", 1), &[Buf::f32(xs.clone())], &[37]);
    assert_close(&got, &[xs.iter().sum()], &src);
    assert_line(&src, "float accum;");
    assert_line(&src, "accum = accum + x[i];");
    assert_line(&src, "out[0] = accum;");
}

/// `join (map (map (*2)) (split 4 x))`, and reading through split/join/transpose chains.
#[test]
fn split_join_views() {
    let m = size("m");
    let len = nat(&m) * 4;
    let x = ident("x", arr(len.clone(), f32t()));
    let out = ident("out", arr(len.clone(), f32t()));
    let tmp = ident("tmp", arr(len.clone(), f32t()));
    let i = loop_var("i", &nat(&m));
    let j = loop_var("j", &Nat::cst(4));
    let k = loop_var("k", &len);
    let j2 = loop_var("j2", &Nat::cst(4));
    let i2 = loop_var("i2", &nat(&m));
    let body = new_mem(
        &tmp,
        seq(vec![
            // tmp = join (map (map (*2)) (split 4 x)), written through splitAcc
            for_loop(
                &i,
                LoopKind::Seq,
                "mapSeq",
                for_loop(
                    &j,
                    LoopKind::Seq,
                    "mapSeq",
                    assign(
                        idx2_acc(split_acc(4, acc(&tmp)), nat(&i), nat(&j)),
                        mul(idx2(split(4, read(&x)), nat(&i), nat(&j)), f32_lit(2.0)),
                    ),
                ),
            ),
            // out = transpose (split 4 tmp), joined: out[j2*m + i2] = tmp[i2*4 + j2]
            for_loop(
                &j2,
                LoopKind::Seq,
                "mapSeq",
                for_loop(
                    &i2,
                    LoopKind::Seq,
                    "mapSeq",
                    assign(
                        idx2_acc(split_acc_m(&m, acc(&out)), nat(&j2), nat(&i2)),
                        idx2(transpose(split(4, read(&tmp))), nat(&j2), nat(&i2)),
                    ),
                ),
            ),
            // out[k] += join (split 4 x) [k] (reads x[k])
            for_loop(
                &k,
                LoopKind::Seq,
                "mapSeq",
                assign(
                    idx_acc(acc(&out), nat(&k)),
                    add(
                        idx(read(&out), nat(&k)),
                        idx(join(split(4, read(&x))), nat(&k)),
                    ),
                ),
            ),
        ]),
    );
    let p = program("splitjoin", &[&m], &out, &[&x], body);
    let mm = 3;
    let xs = data(4 * mm, 4);
    let (got, src) = run(
        &p,
        Target::C,
        ("float", 4 * mm),
        &[Buf::f32(xs.clone())],
        &[mm as i64],
    );
    let mut want = vec![0.0; 4 * mm];
    for jj in 0..4 {
        for ii in 0..mm {
            want[jj * mm + ii] = 2.0 * xs[ii * 4 + jj];
        }
    }
    for (kk, w) in want.iter_mut().enumerate() {
        *w += xs[kk];
    }
    assert_close(&got, &want, &src);
    assert_line(&src, "tmp[i * 4 + j] = x[i * 4 + j] * 2.0f;");
    assert_line(&src, "out[j2 * m + i2] = tmp[j2 + i2 * 4];");
    assert_line(&src, "out[k] = out[k] + x[k];");
}

/// `splitAcc m` for a symbolic `m`.
fn split_acc_m(m: &arith::Var, a: dpia::Acc) -> dpia::Acc {
    let DataType::Array(len, t) = &a.ty else {
        unreachable!()
    };
    let ty = arr(len.div_exact(&nat(m)), arr(nat(m), (**t).clone()));
    dpia::Acc::new(dpia::AccKind::View(dpia::View::Split(nat(m)), a), ty)
}

/// A 3-point stencil over `padClamp 1 1` and over `padCst 1 1 0`, with an
/// unrolled reduction over each window.
#[test]
fn pad_clamp_and_constant_stencils() {
    for (mode, clamp) in [(PadMode::Clamp, true), (PadMode::Cst(f32_lit(0.0)), false)] {
        let n = size("n");
        let x = ident("x", arr(nat(&n), f32t()));
        let out = ident("out", arr(nat(&n), f32t()));
        let a = ident("sum", f32t());
        let i = loop_var("i", &nat(&n));
        let w = loop_var("w", &Nat::cst(3));
        let windows = slide(3, 1, pad(1, 1, mode, read(&x)));
        let body = for_loop(
            &i,
            LoopKind::Seq,
            "mapSeq",
            new_mem(
                &a,
                seq(vec![
                    assign(acc(&a), f32_lit(0.0)),
                    for_loop(
                        &w,
                        LoopKind::Unroll,
                        "reduceSeqUnroll",
                        assign(
                            acc(&a),
                            add(read(&a), idx2(windows.clone(), nat(&i), nat(&w))),
                        ),
                    ),
                    assign(idx_acc(acc(&out), nat(&i)), read(&a)),
                ]),
            ),
        );
        let p = program("stencil", &[&n], &out, &[&x], body);
        let len = 9;
        let xs = data(len, 5);
        let (got, src) = run(
            &p,
            Target::C,
            ("float", len),
            &[Buf::f32(xs.clone())],
            &[len as i64],
        );
        let at = |k: i64| {
            if clamp {
                xs[k.clamp(0, len as i64 - 1) as usize]
            } else if (0..len as i64).contains(&k) {
                xs[k as usize]
            } else {
                0.0
            }
        };
        let want: Vec<f64> = (0..len as i64)
            .map(|k| at(k - 1) + at(k) + at(k + 1))
            .collect();
        assert_close(&got, &want, &src);
        assert_line(&src, "// reduceSeqUnroll (unrolled: 3 iterations)");
        assert_line(&src, "sum = sum + x[i];");
        if clamp {
            assert_line(&src, "sum = sum + x[i - 1 > 0 ? i - 1 : 0];");
            assert_line(&src, "sum = sum + x[n - 1 < i + 1 ? n - 1 : i + 1];");
        } else {
            assert_line(&src, "sum = sum + (i >= 1 ? x[i - 1] : 0.0f);");
            assert_line(&src, "sum = sum + (i + 1 < n ? x[i + 1] : 0.0f);");
        }
    }
}

/// `padWrap` and `padMirror` against the interpreter's semantics (numpy `wrap`, `symmetric`).
#[test]
fn pad_wrap_and_mirror() {
    for (mirror, l, r) in [(false, 2, 3), (true, 2, 3), (false, 7, 1), (true, 6, 6)] {
        let n = size("n");
        let x = ident("x", arr(nat(&n), f32t()));
        let total = nat(&n) + l + r;
        let out = ident("out", arr(total.clone(), f32t()));
        let i = loop_var("i", &total);
        let mode = if mirror {
            PadMode::Mirror
        } else {
            PadMode::Wrap
        };
        let body = for_loop(
            &i,
            LoopKind::Seq,
            "mapSeq",
            assign(
                idx_acc(acc(&out), nat(&i)),
                idx(pad(l, r, mode, read(&x)), nat(&i)),
            ),
        );
        let p = program("padded", &[&n], &out, &[&x], body);
        let len = 4usize;
        let xs = data(len, 6);
        let total = len + (l + r) as usize;
        let (got, src) = run(
            &p,
            Target::C,
            ("float", total),
            &[Buf::f32(xs.clone())],
            &[len as i64],
        );
        let nn = len as i64;
        let want: Vec<f64> = (0..total as i64)
            .map(|k| {
                let x = k - l;
                let j = if mirror {
                    let j = x.rem_euclid(2 * nn);
                    if j < nn {
                        j
                    } else {
                        2 * nn - 1 - j
                    }
                } else {
                    x.rem_euclid(nn)
                };
                xs[j as usize]
            })
            .collect();
        assert_close(&got, &want, &src);
    }
}

/// `zip` of two inputs: `map (fun p => fst p * snd p) (zip a b)`; and `concat`.
#[test]
fn zip_and_concat() {
    let n = size("n");
    let a = ident("a", arr(nat(&n), f32t()));
    let b = ident("b", arr(nat(&n), f32t()));
    let total = nat(&n) * 2;
    let out = ident("out", arr(total.clone(), f32t()));
    let tmp = ident("prod", arr(nat(&n), f32t()));
    let i = loop_var("i", &nat(&n));
    let k = loop_var("k", &total);
    let (k1, k2) = (loop_var("k1", &nat(&n)), loop_var("k2", &nat(&n)));
    let z = zip(read(&a), read(&b));
    let cat = || concat(read(&tmp), read(&a));
    // where the ranges decide the side of the concatenation, no conditional is left
    let decided = |v: &arith::Var, at: Nat| {
        let at_out = || idx_acc(acc(&out), at.clone());
        for_loop(
            v,
            LoopKind::Seq,
            "mapSeq",
            assign(
                at_out(),
                add(idx(read(&out), at.clone()), idx(cat(), at.clone())),
            ),
        )
    };
    let body = new_mem(
        &tmp,
        seq(vec![
            for_loop(
                &i,
                LoopKind::Seq,
                "mapSeq",
                assign(
                    idx_acc(acc(&tmp), nat(&i)),
                    mul(fst(idx(z.clone(), nat(&i))), snd(idx(z, nat(&i)))),
                ),
            ),
            for_loop(
                &k,
                LoopKind::Seq,
                "mapSeq",
                assign(idx_acc(acc(&out), nat(&k)), idx(cat(), nat(&k))),
            ),
            decided(&k1, nat(&k1)),
            decided(&k2, nat(&n) + nat(&k2)),
        ]),
    );
    let p = program("zipconcat", &[&n], &out, &[&a, &b], body);
    let len = 7;
    let (xa, xb) = (data(len, 7), data(len, 8));
    let (got, src) = run(
        &p,
        Target::C,
        ("float", 2 * len),
        &[Buf::f32(xa.clone()), Buf::f32(xb.clone())],
        &[len as i64],
    );
    let mut want: Vec<f64> = xa.iter().zip(&xb).map(|(p, q)| 2.0 * p * q).collect();
    want.extend(xa.iter().map(|v| 2.0 * v));
    assert_close(&got, &want, &src);
    assert_line(&src, "prod[i] = a[i] * b[i];");
    assert_line(&src, "out[k] = k < n ? prod[k] : a[k - n];");
    assert_line(&src, "out[k1] = out[k1] + prod[k1];");
    assert_line(&src, "out[k2 + n] = out[k2 + n] + a[k2];");
    assert!(
        src.contains("aligned_alloc(64, ((sizeof(float) * (size_t)n) / 64 + 1) * 64)"),
        "{src}"
    );
    assert_line(&src, "free(prod);");
}

/// Vectorized loops over `n = 4m`: contiguous loads and stores become single
/// unaligned vector accesses, a transposed read and a transposed write go lane by lane.
#[test]
fn vectorized_loads_and_stores() {
    let m = size("m");
    let len = nat(&m) * 4;
    let x = ident("x", arr(len.clone(), f32t()));
    let xt = ident("xt", arr(4, arr(nat(&m), f32t())));
    let out = ident("out", arr(len.clone(), f32t()));
    let tmp = ident("tr", arr(4, arr(nat(&m), f32t())));
    let i = loop_var("i", &nat(&m));
    let i2 = loop_var("i2", &nat(&m));
    let i3 = loop_var("i3", &nat(&m));
    let v4 = vec_t(f32t(), 4);
    let twice = |e: dpia::Exp| {
        let ty = v4.clone();
        dpia::Exp::new(
            dpia::ExpKind::Binary(BinOp::Mul, e, broadcast(4, f32_lit(2.0))),
            ty,
        )
    };
    // 4.m.f32 written as (m*4).vec: transposeAcc then joinAcc
    let tr_acc = as_vector_acc(4, join_acc(transpose_acc(acc(&tmp))));
    let body = new_mem(
        &tmp,
        seq(vec![
            // out = x * 2, vectorized
            for_loop(
                &i,
                LoopKind::Seq,
                "mapSeq",
                assign(
                    idx_acc(as_vector_acc(4, acc(&out)), nat(&i)),
                    twice(idx(as_vector(4, read(&x)), nat(&i))),
                ),
            ),
            // tr[l][i] = out[i*4 + l]: lane by lane store
            for_loop(
                &i2,
                LoopKind::Seq,
                "mapSeq",
                assign(
                    idx_acc(tr_acc, nat(&i2)),
                    idx(as_vector(4, read(&out)), nat(&i2)),
                ),
            ),
            // out[i*4 + l] += xt[l][i] + tr[l][i]: lane by lane loads
            for_loop(
                &i3,
                LoopKind::Seq,
                "mapSeq",
                assign(
                    idx_acc(as_vector_acc(4, acc(&out)), nat(&i3)),
                    add(
                        idx(as_vector(4, read(&out)), nat(&i3)),
                        add(
                            idx(as_vector(4, join(transpose(read(&xt)))), nat(&i3)),
                            idx(as_vector(4, join(transpose(read(&tmp)))), nat(&i3)),
                        ),
                    ),
                ),
            ),
        ]),
    );
    let p = program("vectorized", &[&m], &out, &[&x, &xt], body);
    let mm = 5;
    let (xs, xts) = (data(4 * mm, 9), data(4 * mm, 10));
    let (got, src) = run(
        &p,
        Target::C,
        ("float", 4 * mm),
        &[Buf::f32(xs.clone()), Buf::f32(xts.clone())],
        &[mm as i64],
    );
    let want: Vec<f64> = (0..4 * mm)
        .map(|k| {
            let (ii, l) = (k / 4, k % 4);
            4.0 * xs[k] + xts[l * mm + ii]
        })
        .collect();
    assert_close(&got, &want, &src);
    assert!(
        src.contains("typedef float float4 __attribute__((vector_size(16)));"),
        "{src}"
    );
    assert!(
        src.contains(
            "typedef float float4_u __attribute__((vector_size(16), aligned(4), may_alias));"
        ),
        "{src}"
    );
    assert_line(&src, "*(float4_u *)&out[i * 4] = *(const float4_u *)&x[i * 4] * (float4){2.0f, 2.0f, 2.0f, 2.0f};");
    assert_line(&src, "tr[i2 + m * 3] = out[i2 * 4 + 3];");
    assert!(
        src.contains("(float4){xt[i3], xt[i3 + m], xt[i3 + m * 2], xt[i3 + m * 3]}"),
        "{src}"
    );
    assert_line(
        &src,
        "float *tr = aligned_alloc(64, ((sizeof(float) * (size_t)(m * 4)) / 64 + 1) * 64);",
    );
}

/// `mapPar` nests: OpenMP puts one `parallel for` on the outermost, C none.
#[test]
fn parallel_loops() {
    let (n, m) = (size("n"), size("m"));
    let x = ident("x", arr(nat(&n), arr(nat(&m), f32t())));
    let out = ident("out", arr(nat(&n), arr(nat(&m), f32t())));
    let i = loop_var("i", &nat(&n));
    let j = loop_var("j", &nat(&m));
    let body = for_loop(
        &i,
        LoopKind::Par,
        "mapPar",
        for_loop(
            &j,
            LoopKind::Par,
            "mapPar",
            assign(
                idx2_acc(acc(&out), nat(&i), nat(&j)),
                add(idx2(read(&x), nat(&i), nat(&j)), f32_lit(1.0)),
            ),
        ),
    );
    let p = program("par", &[&n, &m], &out, &[&x], body);
    let (rows, cols) = (33, 7);
    let xs = data(rows * cols, 11);
    let want: Vec<f64> = xs.iter().map(|v| v + 1.0).collect();
    let (got, omp) = run(
        &p,
        Target::OpenMp,
        ("float", rows * cols),
        &[Buf::f32(xs.clone())],
        &[rows as i64, cols as i64],
    );
    assert_close(&got, &want, &omp);
    assert_eq!(omp.matches("#pragma omp parallel for").count(), 1, "{omp}");
    let pragma = omp.lines().position(|l| l.contains("#pragma")).unwrap();
    assert_eq!(
        omp.lines().nth(pragma + 1).map(str::trim),
        Some("for (int64_t i = 0; i < n; i++) {")
    );
    assert_eq!(omp.matches("// mapPar").count(), 2, "{omp}");
    let (got, c) = run(
        &p,
        Target::C,
        ("float", rows * cols),
        &[Buf::f32(xs)],
        &[rows as i64, cols as i64],
    );
    assert_close(&got, &want, &c);
    assert!(!c.contains("pragma"), "{c}");
}

/// Constant-size allocations go on the stack, others on the heap; unrolled
/// loops declare one copy of their temporaries per iteration.
#[test]
fn stack_and_heap_allocation() {
    let n = size("n");
    let x = ident("x", arr(nat(&n), arr(4, f32t())));
    let out = ident("out", arr(nat(&n), f32t()));
    let row = ident("row", arr(4, f32t()));
    let big = ident("big", arr(100_000, f32t()));
    let i = loop_var("i", &nat(&n));
    let j = loop_var("j", &Nat::cst(4));
    let u = loop_var("u", &Nat::cst(2));
    let body = for_loop(
        &i,
        LoopKind::Seq,
        "mapSeq",
        new_mem(
            &big,
            seq(vec![
                assign(idx_acc(acc(&big), 99_999), f32_lit(1.0)),
                for_loop(
                    &u,
                    LoopKind::Unroll,
                    "mapSeqUnroll",
                    new_mem(
                        &row,
                        seq(vec![
                            for_loop(
                                &j,
                                LoopKind::Seq,
                                "mapSeq",
                                assign(
                                    idx_acc(acc(&row), nat(&j)),
                                    idx2(read(&x), nat(&i), nat(&j)),
                                ),
                            ),
                            assign(
                                idx_acc(acc(&out), nat(&i)),
                                add(
                                    mul(nat_exp(nat(&u), f32t()), idx(read(&out), nat(&i))),
                                    add(idx(read(&row), nat(&u)), idx(read(&big), 99_999)),
                                ),
                            ),
                        ]),
                    ),
                ),
            ]),
        ),
    );
    let p = program("alloc", &[&n], &out, &[&x], body);
    let rows = 3;
    let xs = data(rows * 4, 12);
    let (got, src) = run(
        &p,
        Target::C,
        ("float", rows),
        &[Buf::f32(xs.clone())],
        &[rows as i64],
    );
    // u = 0: out = row[0] + 1; u = 1: out = out + row[1] + 1
    let want: Vec<f64> = (0..rows)
        .map(|r| xs[r * 4] + 1.0 + xs[r * 4 + 1] + 1.0)
        .collect();
    assert_close(&got, &want, &src);
    assert_line(&src, "float row[4];");
    assert_line(&src, "float row_2[4];");
    assert_line(
        &src,
        "float *big = aligned_alloc(64, ((sizeof(float) * (size_t)100000) / 64 + 1) * 64);",
    );
    assert_line(&src, "if (!big) {");
    assert_line(&src, "free(big);");
    assert_line(
        &src,
        "out[i] = (float)1 * out[i] + (row_2[1] + big[99999]);",
    );
}

/// Arrays of pairs are arrays of structs; a pair accumulator is a struct
/// variable; `generate` substitutes its index; `mapAcc` writes through a
/// variable bound per element.
#[test]
fn pairs_generate_and_map_acc() {
    let n = size("n");
    let x = ident("x", arr(nat(&n), f32t()));
    let out = ident("out", arr(nat(&n), DataType::pair(f32t(), f32t())));
    let mm = ident("minmax", DataType::pair(f32t(), f32t()));
    let i = loop_var("i", &nat(&n));
    let k = loop_var("k", &nat(&n));
    let v = loop_var("v", &nat(&n));
    let g = loop_var("g", &nat(&n));
    let xi = || idx(read(&x), nat(&i));
    let running = |c: fn(dpia::Exp) -> dpia::Exp, op: BinOp| {
        let cur = c(read(&mm));
        select(bin(op, xi(), cur.clone()), xi(), cur)
    };
    // out[v].fst through mapAcc: element v of zipAcc1
    let fst_out = map_acc(&v, nat(&n), idx_acc(zip1_acc(acc(&out)), nat(&v)));
    let squares = generate_view(
        &g,
        nat(&n),
        cast(nat_exp(nat(&g) * nat(&g), int_t()), f32t()),
    );
    let body = new_mem(
        &mm,
        seq(vec![
            assign(pair1_acc(acc(&mm)), idx(read(&x), 0)),
            assign(pair2_acc(acc(&mm)), idx(read(&x), 0)),
            for_loop(
                &i,
                LoopKind::Seq,
                "reduceSeq",
                seq(vec![
                    assign(pair1_acc(acc(&mm)), running(fst, BinOp::Lt)),
                    assign(pair2_acc(acc(&mm)), running(snd, BinOp::Gt)),
                    assign(
                        idx_acc(fst_out.clone(), nat(&i)),
                        add(fst(read(&mm)), idx(squares.clone(), nat(&i))),
                    ),
                    assign(idx_acc(zip2_acc(acc(&out)), nat(&i)), snd(read(&mm))),
                ]),
            ),
            for_loop(
                &k,
                LoopKind::Seq,
                "mapSeq",
                assign(
                    idx_acc(zip2_acc(acc(&out)), nat(&k)),
                    add(snd(idx(read(&out), nat(&k))), fst(read(&mm))),
                ),
            ),
        ]),
    );
    let p = program("minmax", &[&n], &out, &[&x], body);
    let len = 9;
    let xs = data(len, 13);
    let (got, src) = run(
        &p,
        Target::C,
        ("float", 2 * len),
        &[Buf::f32(xs.clone())],
        &[len as i64],
    );
    let (mut lo, mut hi) = (xs[0], xs[0]);
    let mut want = vec![0.0; 2 * len];
    for (ii, &xv) in xs.iter().enumerate() {
        lo = lo.min(xv);
        hi = hi.max(xv);
        want[2 * ii] = lo + (ii * ii) as f64;
        want[2 * ii + 1] = hi;
    }
    for ii in 0..len {
        want[2 * ii + 1] += lo;
    }
    assert_close(&got, &want, &src);
    assert!(
        src.contains(
            "typedef struct pair_float_float {\n  float fst;\n  float snd;\n} pair_float_float;"
        ),
        "{src}"
    );
    assert!(
        src.contains(
            "void minmax(pair_float_float *restrict out, const float *restrict x, int64_t n)"
        ),
        "{src}"
    );
    assert_line(&src, "pair_float_float minmax_2 = {0};");
    assert_line(
        &src,
        "minmax_2.fst = x[i] < minmax_2.fst ? x[i] : minmax_2.fst;",
    );
    assert_line(&src, "out[i].fst = minmax_2.fst + (float)(int)(i * i);");
}

/// Errors name what is unsupported; no panic.
#[test]
fn unsupported_programs_are_errors() {
    let n = size("n");
    let x = ident("x", arr(nat(&n), f32t()));
    let out = ident("out", arr(nat(&n), f32t()));
    let i = loop_var("i", &nat(&n));
    let copy = |kind| {
        for_loop(
            &i,
            kind,
            "mapSeqUnroll",
            assign(idx_acc(acc(&out), nat(&i)), idx(read(&x), nat(&i))),
        )
    };

    let p = program("unroll", &[&n], &out, &[&x], copy(LoopKind::Unroll));
    let e = generate(&p, Target::C).unwrap_err();
    assert!(matches!(e, CodegenError::UnrollNotConstant { .. }), "{e}");
    assert!(
        e.to_string()
            .contains("cannot unroll the `mapSeqUnroll` loop: its iteration count `n`"),
        "{e}"
    );

    // 16-bit floats compile one value at a time (`half_cli`); vectors of them are refused
    let f16x4 = DataType::Vector(4.into(), DataType::Scalar(rise::ScalarType::F16).into());
    let lanes = ident("v", arr(nat(&n), f16x4));
    let p = program("lanes", &[&n], &out, &[&lanes], copy(LoopKind::Seq));
    assert!(generate(&p, Target::C)
        .unwrap_err()
        .to_string()
        .contains("vectors of f16"));

    let p = program(
        "w",
        &[&n],
        &out,
        &[&x],
        for_loop(
            &i,
            LoopKind::Seq,
            "mapSeq",
            assign(idx_acc(acc(&x), nat(&i)), f32_lit(0.0)),
        ),
    );
    assert_eq!(
        generate(&p, Target::C).unwrap_err(),
        CodegenError::WriteToInput("x".into())
    );

    let loose = loop_var("q", &nat(&n));
    let p = program(
        "free",
        &[&n],
        &out,
        &[&x],
        assign(idx_acc(acc(&out), nat(&loose)), f32_lit(0.0)),
    );
    let e = generate(&p, Target::C).unwrap_err();
    assert!(
        matches!(e, CodegenError::UnboundVariable { ref name, .. } if name == "q"),
        "{e}"
    );

    let v3 = ident("v", arr(nat(&n), vec_t(f32t(), 3)));
    let p = program("v3", &[&n], &out, &[&v3], copy(LoopKind::Seq));
    assert!(generate(&p, Target::C)
        .unwrap_err()
        .to_string()
        .contains("power-of-two"));

    let local = dpia::Comm::New {
        ident: ident("t", f32t()),
        addr: rise::AddrSpace::Local,
        body: Box::new(dpia::Comm::Skip),
    };
    let p = program("loc", &[&n], &out, &[&x], local);
    assert!(generate(&p, Target::C)
        .unwrap_err()
        .to_string()
        .contains("local memory"));

    // an output that is a pair holding arrays is one pointer per component (a result that
    // is a tuple of arrays); such an input is refused
    let soa = ident("o", DataType::pair(arr(nat(&n), f32t()), f32t()));
    let p = program("soa", &[&n], &soa, &[&x], dpia::Comm::Skip);
    let c = generate(&p, Target::C).unwrap();
    assert!(
        c.source
            .contains("soa(float *restrict o_fst, float *restrict o_snd, const float *restrict x"),
        "{}",
        c.source
    );
    assert!(
        c.source
            .contains("(float *)buffers[1], (const float *)buffers[2]"),
        "{}",
        c.source
    );
    // on GPUs too, one buffer per component: output buffers 0 and 1, the inputs after them
    // (a program that launches kernels: boundary_cli.rs's bicg on OpenCL and CUDA)
    for target in [codegen::Target::OpenCl, codegen::Target::Cuda] {
        let m = codegen::generate_gpu(&p, target).unwrap();
        assert!(
            m.source.contains("(2 buffers, one per array)"),
            "{}",
            m.source
        );
    }
    assert_eq!(KernelParam::Output(1).buffer(2, 1, 0), Some(1));
    assert_eq!(KernelParam::Input(0).buffer(2, 1, 0), Some(2));
    assert_eq!(KernelParam::Status.buffer(2, 1, 3), Some(6));
    assert_eq!(KernelParam::Size(0).buffer(2, 1, 3), None);
    let p = program("soa_in", &[&n], &out, &[&soa], dpia::Comm::Skip);
    assert!(generate(&p, Target::C)
        .unwrap_err()
        .to_string()
        .contains("pair holding arrays"));
}

/// Scalar inputs are passed by value; other scalar types map to their C
/// names; unused sizes are marked `(void)`.
#[test]
fn scalar_inputs_and_types() {
    use rise::{Literal, ScalarType};
    let (n, unused) = (size("n"), size("unused"));
    let f64t = DataType::Scalar(ScalarType::F64);
    let i32t = DataType::Scalar(ScalarType::I32);
    let alpha = ident("alpha", f64t.clone());
    let x = ident("x", arr(nat(&n), i32t.clone()));
    let out = ident("out", arr(nat(&n), f64t.clone()));
    let i = loop_var("i", &nat(&n));
    let three = dpia::Exp::new(
        dpia::ExpKind::Lit(Literal::Int(3, ScalarType::I32)),
        i32t.clone(),
    );
    let rem = bin(BinOp::Mod, idx(read(&x), nat(&i)), three);
    let neg = dpia::Exp::new(
        dpia::ExpKind::Unary(dpia::UnOp::Neg, cast(rem, f64t.clone())),
        f64t.clone(),
    );
    let half = dpia::Exp::new(
        dpia::ExpKind::Lit(Literal::Float(0.5, ScalarType::F64)),
        f64t.clone(),
    );
    let body = for_loop(
        &i,
        LoopKind::Seq,
        "mapSeq",
        assign(
            idx_acc(acc(&out), nat(&i)),
            add(mul(read(&alpha), neg), half),
        ),
    );
    let p = program("axpy", &[&n, &unused], &out, &[&alpha, &x], body);
    let len = 11;
    let xs = data(len, 14);
    let (got, src) = run(
        &p,
        Target::C,
        ("double", len),
        &[
            Buf {
                cty: "double",
                data: vec![1.5],
            },
            Buf {
                cty: "int32_t",
                data: xs.clone(),
            },
        ],
        &[len as i64, 99],
    );
    let want: Vec<f64> = xs
        .iter()
        .map(|v| 1.5 * -((*v as i32 % 3) as f64) + 0.5)
        .collect();
    assert_close(&got, &want, &src);
    assert!(src.contains("void axpy(double *restrict out, double alpha, const int32_t *restrict x, int64_t n, int64_t unused) {"), "{src}");
    assert_line(&src, "(void)unused;");
    assert_line(&src, "out[i] = alpha * -(double)(x[i] % (int32_t)3) + 0.5;");
    assert_line(&src, "axpy((double *)buffers[0], *(const double *)buffers[1], (const int32_t *)buffers[2], sizes[0], sizes[1]);");
}

/// Memory of vectors: `asScalar` reads lanes, `asVector (asScalar v)` reads whole vectors.
#[test]
fn vector_memory() {
    let m = size("m");
    let v4 = vec_t(f32t(), 4);
    let x = ident("x", arr(nat(&m), v4.clone()));
    let out = ident("out", arr(nat(&m) * 4, f32t()));
    let t = ident("t", v4.clone());
    let k = loop_var("k", &(nat(&m) * 4));
    let i = loop_var("i", &nat(&m));
    let body = seq(vec![
        for_loop(
            &k,
            LoopKind::Seq,
            "mapSeq",
            assign(
                idx_acc(acc(&out), nat(&k)),
                idx(as_scalar(read(&x)), nat(&k)),
            ),
        ),
        for_loop(
            &i,
            LoopKind::Seq,
            "mapSeq",
            new_mem(
                &t,
                seq(vec![
                    assign(acc(&t), idx(as_vector(4, as_scalar(read(&x))), nat(&i))),
                    assign(
                        idx_acc(as_vector_acc(4, acc(&out)), nat(&i)),
                        add(idx(as_vector(4, read(&out)), nat(&i)), read(&t)),
                    ),
                ]),
            ),
        ),
    ]);
    let p = program("vecmem", &[&m], &out, &[&x], body);
    let mm = 3;
    let xs = data(4 * mm, 15);
    let (got, src) = run(
        &p,
        Target::C,
        ("float", 4 * mm),
        &[Buf::f32(xs.clone())],
        &[mm as i64],
    );
    let want: Vec<f64> = xs.iter().map(|v| 2.0 * v).collect();
    assert_close(&got, &want, &src);
    assert!(src.contains("const float4 *restrict x"), "{src}");
    assert_line(&src, "out[k] = x[k / 4][k % 4];");
    assert_line(&src, "float4 t = {0};");
    assert_line(&src, "t = x[i];");
}

/// `lane k v` of a vector in memory and `makeVector` written to memory: each vector of
/// `x` reversed, its lane 1 doubled, stored through `asVectorAcc`; then read back as
/// scalars, a lane chosen at run time among the built vector's values. (The GPU
/// spellings, `.s3` and `(float4)(...)`, `.w` and `make_float4(...)`, are checked by
/// `shine`'s `lanes_cli`.)
#[test]
fn lanes_and_vectors_built_from_them() {
    let m = size("m");
    let v4 = vec_t(f32t(), 4);
    let x = ident("x", arr(nat(&m), v4.clone()));
    let out = ident("out", arr(nat(&m) * 4, f32t()));
    let lane = |v: Exp, k: i64| Exp::new(ExpKind::Lane(v, Nat::cst(k)), f32t());
    let make = |lanes: Vec<Exp>| Exp::new(ExpKind::MakeVector(lanes), v4.clone());
    let reversed = |v: Exp| {
        make(vec![
            lane(v.clone(), 3),
            lane(v.clone(), 2),
            mul(lane(v.clone(), 1), f32_lit(2.0)),
            lane(v, 0),
        ])
    };
    let i = loop_var("i", &nat(&m));
    let body = for_loop(
        &i,
        LoopKind::Seq,
        "mapSeq",
        assign(
            idx_acc(as_vector_acc(4, acc(&out)), nat(&i)),
            reversed(idx(read(&x), nat(&i))),
        ),
    );
    let stored = program("reverseLanes", &[&m], &out, &[&x], body);
    let j = loop_var("j", &nat(&m));
    let k = loop_var("k", &(nat(&m) * 4));
    let built = generate_view(&j, nat(&m), reversed(idx(read(&x), nat(&j))));
    let body = for_loop(
        &k,
        LoopKind::Seq,
        "mapSeq",
        assign(idx_acc(acc(&out), nat(&k)), idx(as_scalar(built), nat(&k))),
    );
    let chosen = program("reverseScalars", &[&m], &out, &[&x], body);
    let mm = 3;
    let xs = data(4 * mm, 21);
    let want: Vec<f64> = xs
        .chunks(4)
        .flat_map(|v| [v[3], v[2], 2.0 * v[1], v[0]])
        .collect();
    for p in [&stored, &chosen] {
        let (got, src) = run(
            p,
            Target::C,
            ("float", 4 * mm),
            &[Buf::f32(xs.clone())],
            &[mm as i64],
        );
        assert_close(&got, &want, &src);
    }
    let c = generate(&stored, Target::C).unwrap().source;
    assert!(
        c.contains("(float4){x[i][3], x[i][2], x[i][1] * 2.0f, x[i][0]}"),
        "{c}"
    );
    // a lane known only at run time: a choice among the lanes' values
    let c = generate(&chosen, Target::C).unwrap().source;
    assert!(c.contains("k % 4 == 0 ? x[k / 4][3]"), "{c}");
}

/// A program without inputs or sizes (the entry point ignores `sizes`).
#[test]
fn constant_sizes_and_no_inputs() {
    let out = ident("out", arr(8, f32t()));
    let i = loop_var("i", &Nat::cst(8));
    let body = for_loop(
        &i,
        LoopKind::Seq,
        "mapSeq",
        assign(
            idx_acc(acc(&out), nat(&i)),
            nat_exp(nat(&i) * nat(&i), f32t()),
        ),
    );
    let p = program("squares", &[], &out, &[], body);
    let (got, src) = run(&p, Target::OpenMp, ("float", 8), &[], &[]);
    let want: Vec<f64> = (0..8).map(|k| (k * k) as f64).collect();
    assert_close(&got, &want, &src);
    assert_line(&src, "out[i] = (float)(i * i);");
    assert_line(&src, "(void)sizes;");
}
