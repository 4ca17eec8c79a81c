//! `let x = e in body` computes `e` once and stores it, in the interpreter and in generated
//! code (it is the primitive `let e (fun x => body)`, which the code generator does not
//! inline into every use of `x`): a row normalization reads the sum once, not per element.

mod support;
use support::{shine_in as shine, targets};

const PROGRAM: &str = "
def norm : {n: nat} -> n.f32 -> n.f32 = fun xs =>
  let s = xs |> reduce add 0.0f in xs |> map (fun x => x / s)
def shifted : {n: nat} -> n.int -> n.int = fun xs =>
  let m = xs |> reduce (fun a b => select (a < b) b a) 0 in
  let k = m + 1 in
  xs |> map (fun x => k - x)
";

#[test]
fn let_verifies_on_every_target_and_is_computed_once() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let d = dir.path();
    std::fs::write(d.join("p.rise"), PROGRAM).expect("writes the program");
    for t in targets() {
        for def in ["norm", "shifted"] {
            for n in ["1", "7", "13"] {
                let nat = format!("n={n}");
                let (out, text) = shine(
                    d,
                    &[
                        "run", "p.rise", "--def", def, "--target", t, "--nat", &nat, "--random",
                        "3", "--verify",
                    ],
                );
                assert!(out.status.success(), "{def} on {t} at n={n}: {text}");
                assert!(text.contains("verified"), "{def} on {t} at n={n}: {text}");
            }
        }
    }
    let (out, text) = shine(d, &["compile", "p.rise", "--def", "norm", "--target", "c"]);
    assert!(out.status.success(), "{text}");
    let code = String::from_utf8_lossy(&out.stdout);
    let (sum, map) = (code.find("reduceSeq"), code.find("mapSeq"));
    assert!(
        matches!((sum, map), (Some(s), Some(m)) if s < m),
        "the sum is computed before the map, once: {code}"
    );
}
