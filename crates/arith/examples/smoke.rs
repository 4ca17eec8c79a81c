use arith::{Nat, Var};
fn main() {
    let n = Var::new("n");
    let k = Var::new("k");
    let i = Var::with_range("i", Nat::cst(0), Nat::var(&n));
    let j = Var::with_range("j", Nat::cst(0), Nat::var(&k));
    let (nn, kk, ii, jj) = (Nat::var(&n), Nat::var(&k), Nat::var(&i), Nat::var(&j));
    let idx = &ii * &kk + &jj;
    println!("{idx}  c: {}", idx.to_c());
    println!("div {}", idx.floor_div(&kk));
    println!("mod {}", idx.modulo(&kk));
    println!(
        "lt {} nonneg {}",
        idx.prove_lt(&(&nn * &kk)),
        idx.prove_nonneg()
    );
    println!("{}", (&nn - 1));
    println!("{}", nn.div_exact(&Nat::cst(32)));
    println!("{}", nn.div_exact(&Nat::cst(32)) * 32);
    println!("{}", (Nat::cst(4) * &nn + 8).div_exact(&Nat::cst(4)));
    println!("{}", (&nn * &kk).div_exact(&kk));
    println!("{}", (&nn + 1) * (&nn + 1));
    println!("{}", (&nn + &kk).div_exact(&(&nn + &kk)));
    println!("{}", (&nn * &nn - 1).div_exact(&(&nn + 1)));
    let q = (&nn + 1).div_exact(&(&kk + 2));
    println!("{}  {}  back {}", q, q.to_c(), &q * (&kk + 2));
    let m = Var::new("m");
    let mm = Nat::var(&m);
    let x = Var::new("x");
    let xx = Nat::var(&x);
    let split = xx.floor_div(&mm) * &mm + xx.modulo(&mm);
    println!("split-join {split}");
    let p = Var::new("p");
    let pp = Nat::var(&p);
    let ss = (xx.floor_div(&mm).floor_div(&pp) * &pp + xx.floor_div(&mm).modulo(&pp)) * &mm
        + xx.modulo(&mm);
    println!("split split join {ss}");
    let l = Var::new("l");
    let ic = Var::with_range("ic", Nat::var(&l), &nn + Nat::var(&l));
    let clamp = Nat::min(
        &Nat::max(&(Nat::var(&ic) - Nat::var(&l)), &Nat::cst(0)),
        &(&nn - 1),
    );
    println!("clamp {clamp}");
    let ic2 = Var::with_range("ic2", Nat::cst(0), &nn + Nat::var(&l) * 2);
    let clamp2 = Nat::min(
        &Nat::max(&(Nat::var(&ic2) - Nat::var(&l)), &Nat::cst(0)),
        &(&nn - 1),
    );
    println!("clamp2 {clamp2}  c: {}", clamp2.to_c());
    println!("pow {}", Nat::cst(2).pow(&(&nn + 1)));
    println!("{:?}", (Nat::cst(i64::MAX) + 1).eval(&|_| None));
}
