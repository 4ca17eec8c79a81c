use arith::{Nat, Var};
fn v(s: &str) -> Nat {
    Nat::var(&Var::new(s))
}
fn r(s: &str, lo: Nat, hi: Nat) -> Nat {
    Nat::var(&Var::with_range(s, lo, hi))
}
fn main() {
    let (n, m, d) = (v("n"), v("m"), v("d"));
    let x = v("x");
    println!("{}", Nat::cst(2).pow(&n) * Nat::cst(2).pow(&m));
    println!("{}", Nat::cst(2).pow(&(&n + &m)));
    println!(
        "{} vs {}",
        Nat::min(&Nat::min(&n, &m), &d),
        Nat::min(&n, &Nat::min(&m, &d))
    );
    println!("{}", ((&n + 1) * (&m + 1)).div_exact(&(&n + 1)));
    let q = Nat::cst(1).div_exact(&((&n + 1) * (&m + 1)));
    println!("{} ; {}", q, &q * (&n + 1));
    println!("{}", (&x - 1).floor_div(&d));
    println!("{}", x.modulo(&d));
    let i = r("i", Nat::cst(0), n.div_exact(&Nat::cst(32)));
    let ii = r("ii", Nat::cst(0), Nat::cst(32));
    let e = (&i * 32 + &ii) * &n;
    println!(
        "{}  C: {}",
        e.floor_div(&Nat::cst(32)),
        e.floor_div(&Nat::cst(32)).to_c()
    );
    println!(
        "{}",
        (n.div_exact(&Nat::cst(32)) + m.div_exact(&Nat::cst(4))).to_c()
    );
    println!("{}", (&n * 5).floor_div(&Nat::cst(4)));
    println!(
        "{}",
        Nat::solve_for(&(&n * 32), &Nat::cst(1024), &Var::new("n")).unwrap()
    );
    println!(
        "{:?}",
        Nat::solve_for(&(&n * 4), &Nat::cst(10), &Var::new("n"))
            .map(|s| (s.to_string(), s.as_cst()))
    );
    println!(
        "{:?} {:?}",
        (&n - 1).lower_bound(),
        (Nat::cst(3) - &n).upper_bound()
    );
    let j = r("j", Nat::cst(0), m.clone());
    println!("{}", (&j * &j).upper_bound().is_none());
    println!("{:?}", (&x * 2 + 1).modulo(&Nat::cst(2)));
    println!("{:?}", (&x * 2 + 1).floor_div(&Nat::cst(2)));
}
