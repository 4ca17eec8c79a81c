//! Regression corpus: index expressions produced by array views, each with
//! the simplified form it must normalise to.

use arith::{Nat, Var};

fn v(name: &str) -> Nat {
    Nat::var(&Var::new(name))
}

/// A variable ranging over `[lo, hi)`.
fn r(name: &str, lo: impl Into<Nat>, hi: impl Into<Nat>) -> Nat {
    Nat::var(&Var::with_range(name, lo.into(), hi.into()))
}

fn c(x: i64) -> Nat {
    Nat::cst(x)
}

#[test]
fn split_join() {
    let (n, m) = (v("n"), v("m"));
    let i = r("i", 0, n.clone());
    let j = r("j", 0, m.clone());
    let idx = &i * &m + &j;
    assert_eq!(idx.floor_div(&m), i);
    assert_eq!(idx.modulo(&m), j);
    assert_eq!((&i * &m + &j).floor_div(&m).to_string(), "i");
    // join (split m x) = x, for any x
    let x = r("x", 0, &n * &m);
    assert_eq!(x.floor_div(&m) * &m + x.modulo(&m), x);
    // constant split size
    let jj = r("jj", 0, 32);
    assert_eq!((&i * 32 + &jj).floor_div(&c(32)), i);
    assert_eq!((&i * 32 + &jj).modulo(&c(32)), jj);
    assert!((&i * 32 + &jj).prove_lt(&(&n * 32)));
}

#[test]
fn padded_rows() {
    // rows of a padded n x (n + 2) array
    let n = v("n");
    let w = &n + 2;
    let i = r("i", 0, n.clone());
    let j = r("j", 0, w.clone());
    let idx = &i * &w + &j;
    assert_eq!(idx.to_string(), "i*n+i*2+j");
    assert_eq!(idx.floor_div(&w), i);
    assert_eq!(idx.modulo(&w), j);
    assert!(idx.prove_lt(&(&n * &w)));
    // interior of the padding: (i + 1) * (n + 2) + (j + 1)
    let jj = r("jj", 0, n.clone());
    let inner = (&i + 1) * &w + &jj + 1;
    assert_eq!(inner.floor_div(&w), &i + 1);
    assert_eq!(inner.modulo(&w), &jj + 1);
}

#[test]
fn split_sizes() {
    let n = v("n");
    assert_eq!(n.div_exact(&c(32)) * 32, n);
    assert_eq!((&n * 32).div_exact(&c(32)), n);
    assert_eq!(c(1024).div_exact(&c(32)), c(32));
    assert_eq!((&n * 4 + 8).div_exact(&c(4)), &n + 2);
    let m = v("m");
    assert_eq!((&n * &m).div_exact(&m), n);
    assert_eq!(n.div_exact(&c(32)).div_exact(&c(4)) * 4 * 32, n);
}

#[test]
fn transpose() {
    let (n, m) = (v("n"), v("m"));
    let i = r("i", 0, n.clone());
    let j = r("j", 0, m.clone());
    // element (i, j) of the transpose of an m x n array stored row-major
    let idx = &j * &n + &i;
    assert_eq!(idx.floor_div(&n), j);
    assert_eq!(idx.modulo(&n), i);
    assert!(idx.prove_lt(&(&n * &m)));
    // transpose twice: flatten, split, swap, flatten again
    let flat = &i * &m + &j;
    let back = flat.modulo(&m) * &n + flat.floor_div(&m);
    assert_eq!(back, &j * &n + &i);
}

#[test]
fn slide() {
    let (n, sp) = (v("n"), r("sp", 1, 64));
    let sz = r("sz", 1, 64);
    // windows of size sz with step sp: i in [0, (n - sz) /^ sp + 1), j in [0, sz)
    let i = r("i", 0, (&n - &sz).div_exact(&sp) + 1);
    let j = r("j", 0, sz.clone());
    let idx = &i * &sp + &j;
    assert!(idx.prove_nonneg());
    assert!(idx.prove_lt(&n));
    // constant 3-point stencil
    let i3 = r("i3", 0, &n - 2);
    let j3 = r("j3", 0, 3);
    assert!((&i3 + &j3).prove_lt(&n));
    assert!(!(&i3 + &j3).prove_lt(&(&n - 1)));
    // non-overlapping slide (sz == sp) is a split
    let jt = r("jt", 0, sp.clone());
    assert_eq!((&i * &sp + &jt).floor_div(&sp), i);
    assert_eq!((&i * &sp + &jt).modulo(&sp), jt);
}

#[test]
fn pad_clamp() {
    let (n, l) = (v("n"), v("l"));
    let clamp = |i: &Nat| Nat::min(&Nat::max(&(i - &l), &c(0)), &(&n - 1));
    // in the interior: removable
    let inner = r("i", l.clone(), &n + &l);
    assert_eq!(clamp(&inner), &inner - &l);
    // over the whole padded range: kept
    let whole = r("w", 0, &n + &l * 2);
    assert_eq!(clamp(&whole).to_string(), "min(n-1, max(0, w-l))");
    // right part only: the max goes, the min stays
    let right = r("rt", l.clone(), &n + &l * 2);
    assert_eq!(clamp(&right).to_string(), "min(n-1, rt-l)");
    // left part only: the min stays while n may be 0 ...
    let left = r("lt", 0, &n + &l);
    assert_eq!(clamp(&left).to_string(), "min(n-1, max(0, lt-l))");
    // ... and goes once n >= 1: only the max stays
    let n1 = r("n1", 1, 1i64 << 40);
    let left1 = r("lt1", 0, &n1 + &l);
    let clamp1 = Nat::min(&Nat::max(&(&left1 - &l), &c(0)), &(&n1 - 1));
    assert_eq!(clamp1.to_string(), "max(0, lt1-l)");
    // constant padding of 1 on an interior index
    let k = r("k", 1, &n + 1);
    assert_eq!(Nat::min(&Nat::max(&(&k - 1), &c(0)), &(&n - 1)), &k - 1);
}

#[test]
fn tiling() {
    let n = v("n");
    let tiles = n.div_exact(&c(32));
    let (i, j) = (r("i", 0, tiles.clone()), r("j", 0, tiles.clone()));
    let (ii, jj) = (r("ii", 0, 32), r("jj", 0, 32));
    let row = &i * 32 + &ii;
    let col = &j * 32 + &jj;
    let flat = &row * &n + &col;
    assert!(flat.prove_nonneg());
    assert!(flat.prove_lt(&(&n * &n)));
    assert_eq!(flat.floor_div(&n), row);
    assert_eq!(flat.modulo(&n), col);
    assert_eq!(row.floor_div(&c(32)), i);
    assert_eq!(row.modulo(&c(32)), ii);
    assert_eq!(flat.floor_div(&n).floor_div(&c(32)), i);
    assert_eq!(flat.modulo(&n).modulo(&c(32)), jj);
    // tile-major storage: ((i * tiles + j) * 32 + ii) * 32 + jj
    let tile_major = ((&i * &tiles + &j) * 32 + &ii) * 32 + &jj;
    assert!(tile_major.prove_lt(&(&n * &n)));
    assert_eq!(tile_major.modulo(&c(32)), jj);
    assert_eq!(tile_major.floor_div(&c(32)).modulo(&c(32)), ii);
    assert_eq!(tile_major.floor_div(&c(1024)), &i * &tiles + &j);
}

#[test]
fn nested_split_of_split() {
    let (n, m, p) = (v("n"), r("m", 1, 1024), r("p", 1, 1024));
    let x = r("x", 0, n.clone());
    let outer = x.floor_div(&m);
    assert_eq!(outer.floor_div(&p), x.floor_div(&(&m * &p)));
    // join . join of split . split
    let rebuilt = (outer.floor_div(&p) * &p + outer.modulo(&p)) * &m + x.modulo(&m);
    assert_eq!(rebuilt, x);
    // 3-D coordinates of a flat index, then flattened again
    let (a, b, cc) = (
        r("a", 0, n.clone()),
        r("b", 0, m.clone()),
        r("cc", 0, p.clone()),
    );
    let flat = (&a * &m + &b) * &p + &cc;
    assert_eq!(flat.floor_div(&(&m * &p)), a);
    assert_eq!(flat.floor_div(&p).modulo(&m), b);
    assert_eq!(flat.modulo(&p), cc);
    assert_eq!(flat.modulo(&(&m * &p)), &b * &p + &cc);
    assert_eq!(flat.modulo(&(&m * &p)).floor_div(&p), b);
    // split by 4 then by 8 of a constant-size array
    let y = r("y", 0, 1024);
    assert_eq!(y.floor_div(&c(4)).floor_div(&c(8)), y.floor_div(&c(32)));
    assert_eq!(y.modulo(&c(32)).modulo(&c(4)), y.modulo(&c(4)));
    assert_eq!(
        y.modulo(&c(32)).floor_div(&c(4)),
        y.floor_div(&c(4)).modulo(&c(8))
    );
}

#[test]
fn not_simplified_without_range_facts() {
    // documents what is deliberately kept: the facts are not provable
    let (n, m) = (v("n"), v("m"));
    let i = v("i");
    let j = v("j");
    assert_eq!((&i * &m + &j).floor_div(&m).to_string(), "i+j/m");
    assert_eq!((&i * &m + &j).modulo(&m).to_string(), "j%m");
    let jj = r("jj", 0, &m + 1);
    assert_eq!((&i * &m + &jj).floor_div(&m).to_string(), "i+jj/m");
    // subtraction: sign unknown
    assert_eq!((&i * &m - &j).floor_div(&m).to_string(), "(i*m-j)/m");
    assert_eq!(n.floor_div(&c(4)).to_string(), "n/4");
    // partial coefficients are not split: 5n/4 = n + n/4 is not applied
    assert_eq!((&n * 5).floor_div(&c(4)).to_string(), "n*5/4");
    // exact division by a product of sums: no factorisation
    let q = c(1).div_exact(&((&n + 1) * (&m + 1))) * (&n + 1);
    assert_eq!(q.to_string(), "(n+1) /^ (m*n+m+n+1)");
    // a divisor that may be zero or negative blocks the range rules
    let k = v("k");
    let jk = r("jk", 0, k.clone());
    assert_eq!((&i * &k + &jk).floor_div(&k), i);
    let d = r("d", 0, 8);
    assert_eq!(d.modulo(&d), c(0));
    assert_eq!((&n * &d + 1).modulo(&d).to_string(), "1%d");
}
