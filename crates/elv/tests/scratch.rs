mod common;
use common::*;
#[test]
fn ints() {
    let mut src: String = (0..500)
        .map(|i| format!("def n{i} = n{}\n", i + 1))
        .collect();
    src.push_str("def n500 = 3\n");
    eprintln!("start");
    let errs = errors(&src);
    eprintln!("{:?}", errs[0]);
}
#[test]
fn strats() {
    let deep = |inner: String| format!("{}{inner}{}", "try(".repeat(60), ")".repeat(60));
    let mut src: String = (0..500)
        .map(|i| format!("def s{i} = {}\n", deep(format!("s{} ; id", i + 1))))
        .collect();
    src.push_str("def s500 = setNum(9)\n");
    eprintln!("start");
    let m = load(&src);
    eprintln!("loaded");
}
