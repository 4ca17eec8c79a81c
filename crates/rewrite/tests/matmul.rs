//! The seven matmul strategies of ICFP'20 §6.1 on `examples/mm.rise`.

use elevate::{top_down, Ctx};
use rewrite::normal_forms::{dfnf, seq_dfnf};
use rewrite::rules::algorithmic::{fission_reduce_map, fuse_reduce_map, split_strategy};
use rewrite::schedule::{lower_to_c, reorder, tile};
use rewrite::traversals::{applied_reduce, innermost, map_nest, outermost};
use rewrite::S;
use rise::infer::{check_program, prepare_def, Prepared};

fn mm() -> Prepared {
    let src = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../examples/mm.rise"
    ))
    .unwrap();
    let program = rise::syntax::parse_program(&src).unwrap();
    let checked = check_program(&program).unwrap();
    prepare_def(&checked, "mm").unwrap()
}

fn run(s: &S, p: &Prepared) -> (rise::Expr, u64) {
    let mut ctx = Ctx::new(rise::NameGen::avoiding(&p.body));
    let out = ctx.run(s, &p.body).unwrap_or_else(|e| panic!("{e}"));
    (out, ctx.steps())
}

fn baseline() -> S {
    dfnf().seq(top_down(fuse_reduce_map()))
}

fn blocking() -> S {
    let s = seq_dfnf(baseline(), outermost(map_nest(2), tile(32, 32)));
    let s = seq_dfnf(s, outermost(applied_reduce(), fission_reduce_map()));
    let s = seq_dfnf(s, innermost(applied_reduce(), split_strategy(4)));
    seq_dfnf(s, reorder(vec![1, 2, 5, 6, 3, 4]))
}

#[test]
fn baseline_rewrites_and_computes_the_same() {
    let p = mm();
    let (out, steps) = run(&baseline().seq(lower_to_c()), &p);
    println!("{steps} steps\n{out}");
    rewrite::check::same_results(&p.body, &out, &p.scheme, &[("m", 3), ("n", 5), ("k", 4)], 1)
        .unwrap();
}

#[test]
fn blocking_rewrites_and_computes_the_same() {
    let p = mm();
    let (out, steps) = run(&blocking().seq(lower_to_c()), &p);
    println!("{steps} steps\n{out}");
    rewrite::check::same_results(
        &p.body,
        &out,
        &p.scheme,
        &[("m", 64), ("n", 64), ("k", 8)],
        1,
    )
    .unwrap();
}
