mod common;
use common::*;
#[test]
fn ints() {
    let chain = |n: usize| {
        let mut src: String = (0..n).map(|i| format!("def n{i} = n{}\n", i + 1)).collect();
        src.push_str(&format!("def n{n} = 3\n"));
        src
    };
    for n in [500, 3000] {
        eprintln!("start {n}");
        let r = elv::load(&chain(n), &registry());
        if let Err(e) = &r {
            eprintln!("{:?}", &e[0].message);
        }
        if let Ok(m) = &r {
            eprintln!("loaded");
            let x = m.expression("setNum(n0)");
            eprintln!("expr {}", x.is_ok());
        }
    }
}
