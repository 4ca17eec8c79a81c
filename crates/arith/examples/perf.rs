use arith::{Nat, Var};
use std::time::Instant;
fn main() {
    let t0 = Instant::now();
    let n = Nat::var(&Var::new("n"));
    let m = Nat::var(&Var::new("m"));
    let mut idx = Nat::cst(0);
    let mut vars = vec![];
    for l in 0..6 {
        let hi = if l % 2 == 0 {
            n.div_exact(&Nat::cst(32))
        } else {
            Nat::cst(32)
        };
        let v = Nat::var(&Var::with_range(format!("v{l}"), Nat::cst(0), hi.clone()));
        idx = idx * &hi + &v;
        vars.push(v);
    }
    println!("idx = {idx}");
    let mut x = idx.clone();
    for d in [32, 32, 7] {
        let q = x.floor_div(&Nat::cst(d));
        let r = x.modulo(&Nat::cst(d));
        println!("/{d}: {q}\n%{d}: {r}");
        x = q;
    }
    let e = idx.floor_div(&m).modulo(&n) + Nat::min(&idx, &(&n * &n)) + idx.modulo(&(&n * 3));
    println!("{e}");
    let s = e.simplify();
    println!("{}", s == e);
    println!("elapsed {:?}", t0.elapsed());
}
