//! The engine on a toy language: arithmetic terms `n | a + b | a * b | -a`.

use elevate::*;
use std::fmt;
use std::sync::Arc;

#[derive(Clone, Debug, PartialEq)]
enum T {
    Num(i64),
    Add(Arc<T>, Arc<T>),
    Mul(Arc<T>, Arc<T>),
    Neg(Arc<T>),
}
use T::*;

fn num(n: i64) -> T {
    Num(n)
}
fn add(a: T, b: T) -> T {
    Add(Arc::new(a), Arc::new(b))
}
fn mul(a: T, b: T) -> T {
    Mul(Arc::new(a), Arc::new(b))
}
fn neg(a: T) -> T {
    Neg(Arc::new(a))
}

impl fmt::Display for T {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Num(n) => write!(f, "{n}"),
            Add(a, b) => write!(f, "({a} + {b})"),
            Mul(a, b) => write!(f, "({a} * {b})"),
            Neg(a) => write!(f, "-{a}"),
        }
    }
}

impl Program for T {
    type Env = ();

    fn same(&self, other: &T) -> bool {
        self == other
    }
}

impl Traversable for T {
    fn child_count(&self) -> usize {
        match self {
            Num(_) => 0,
            Neg(_) => 1,
            _ => 2,
        }
    }
    fn child(&self, i: usize) -> T {
        match (self, i) {
            (Add(a, _) | Mul(a, _), 0) => (**a).clone(),
            (Add(_, b) | Mul(_, b), _) => (**b).clone(),
            (Neg(a), _) => (**a).clone(),
            (Num(_), _) => unreachable!(),
        }
    }
    fn with_child(&self, i: usize, c: T, _: &mut ()) -> T {
        match (self, i) {
            (Add(_, b), 0) => Add(Arc::new(c), b.clone()),
            (Add(a, _), _) => Add(a.clone(), Arc::new(c)),
            (Mul(_, b), 0) => Mul(Arc::new(c), b.clone()),
            (Mul(a, _), _) => Mul(a.clone(), Arc::new(c)),
            (Neg(_), _) => Neg(Arc::new(c)),
            (Num(_), _) => self.clone(),
        }
    }
    fn child_label(&self, i: usize) -> &'static str {
        match (self, i) {
            (Neg(_), _) => "operand",
            (_, 0) => "left",
            _ => "right",
        }
    }
}

/// `a + 0 ~> a`
fn add_zero() -> Strategy<T> {
    rule("addZero", |t: &T, _| match t {
        Add(a, b) if **b == Num(0) => Ok((**a).clone()),
        _ => Err(Failure::not_applicable()),
    })
}

/// `n + m ~> (n+m)` on literals
fn fold() -> Strategy<T> {
    rule("fold", |t: &T, _| match t {
        Add(a, b) => match (&**a, &**b) {
            (Num(x), Num(y)) => Ok(Num(x + y)),
            _ => Err(Failure::not_applicable()),
        },
        _ => Err(Failure::not_applicable()),
    })
}

/// `a + b ~> b + a` (never terminates under repeat)
fn commute() -> Strategy<T> {
    rule("commute", |t: &T, _| match t {
        Add(a, b) => Ok(Add(b.clone(), a.clone())),
        _ => Err(Failure::not_applicable()),
    })
}

fn is_num() -> Strategy<T> {
    rule("isNum", |t: &T, _| match t {
        Num(_) => Ok(t.clone()),
        _ => Err(Failure::not_applicable()),
    })
}

/// The operand of a negation: a single-child, language-specific traversal.
fn operand(s: Strategy<T>) -> Strategy<T> {
    traversal("operand", true, s, |s, t: &T, ctx| match t {
        Neg(a) => Ok(neg(ctx.descend("operand", s, a)?)),
        _ => Err(Failure::not_applicable()),
    })
}

fn run(s: &Strategy<T>, t: &T) -> (RewriteResult<T>, u64) {
    let mut ctx = Ctx::default();
    let r = ctx.run(s, t);
    (r, ctx.steps())
}

#[test]
fn id_fail_seq_choice_try() {
    let t = add(num(1), num(0));
    assert_eq!(run(&id(), &t), (Ok(t.clone()), 1));
    assert!(run(&fail(), &t).0.is_err());
    assert_eq!(run(&add_zero(), &t).0, Ok(num(1)));
    assert!(run(&seq(add_zero(), add_zero()), &t).0.is_err());
    assert_eq!(
        run(&lchoice(commute(), add_zero()), &t).0,
        Ok(add(num(0), num(1)))
    );
    assert_eq!(run(&lchoice(is_num(), add_zero()), &t).0, Ok(num(1)));
    assert_eq!(run(&try_(is_num()), &t), (Ok(t.clone()), 1));
    assert_eq!(run(&not(is_num()), &t).0, Ok(t.clone()));
    assert!(run(&not(add_zero()), &t).0.is_err());
}

#[test]
fn traversals_visit_children_in_order() {
    // Products are traversed too: (2 * (1 + 0)).
    assert_eq!(
        run(&top_down(add_zero()), &mul(num(2), add(num(1), num(0)))).0,
        Ok(mul(num(2), num(1)))
    );
    // (0 + 0) + (1 + 0)
    let t = add(add(num(0), num(0)), add(num(1), num(0)));
    assert_eq!(
        run(&one(add_zero()), &t).0,
        Ok(add(num(0), add(num(1), num(0))))
    );
    assert_eq!(run(&all(add_zero()), &t).0, Ok(add(num(0), num(1))));
    assert_eq!(run(&some(add_zero()), &t).0, Ok(add(num(0), num(1))));
    assert!(run(&all(add_zero()), &add(num(1), add(num(2), num(0))))
        .0
        .is_err());
    assert!(run(&one(add_zero()), &num(3)).0.is_err());
    // `all` on a leaf succeeds vacuously.
    assert_eq!(run(&all(fail()), &num(3)).0, Ok(num(3)));
    // topDown rewrites the outermost match, bottomUp the innermost-leftmost.
    let u = add(add(num(2), num(0)), num(0));
    assert_eq!(run(&top_down(add_zero()), &u).0, Ok(add(num(2), num(0))));
    assert_eq!(run(&bottom_up(add_zero()), &u).0, Ok(add(num(2), num(0))));
    let v = add(add(num(2), num(0)), num(5));
    assert_eq!(run(&top_down(add_zero()), &v).0, Ok(add(num(2), num(5))));
    // normalize folds everything.
    let w = add(add(num(1), num(2)), add(num(3), num(4)));
    assert_eq!(run(&normalize(fold()), &w).0, Ok(num(10)));
    assert_eq!(run(&try_all(fold()), &w).0, Ok(num(10)));
    assert!(run(&all_top_down(fold()), &w).0.is_err());
    assert_eq!(run(&all_bottom_up(try_(fold())), &w).0, Ok(num(10)));
    assert_eq!(
        run(&repeat_n(2, commute()), &add(num(1), num(2))).0,
        Ok(add(num(1), num(2)))
    );
}

#[test]
fn steps_are_counted_as_in_the_paper() {
    // id(x) is one step; body(id)(x) two (ICFP'20 §6.2); here `operand` plays `body`.
    let t = neg(num(1));
    assert_eq!(run(&id(), &t).1, 1);
    assert_eq!(run(&operand(id()), &t).1, 2);
    assert_eq!(run(&seq(operand(id()), operand(id())), &t).1, 4);
    // one(id) = 2; topDown(isNum) on -1: isNum fails at the root, one step down, succeeds.
    assert_eq!(run(&one(id()), &t).1, 2);
    assert_eq!(run(&top_down(is_num()), &t).1, 2);
    // repeat ends with the `id` of its `try`.
    assert_eq!(
        run(&repeat(add_zero()), &add(add(num(1), num(0)), num(0))).1,
        3
    );
}

#[test]
fn failures_name_the_strategy_and_the_location() {
    let t = neg(add(num(1), num(2)));
    let s = seq(operand(fold()), operand(add_zero()));
    let err = run(&s, &t).0.unwrap_err();
    assert_eq!(err.to_string(), "`addZero` is not applicable at operand");
    let err = run(&top_down(add_zero()), &t).0.unwrap_err();
    assert_eq!(
        err.to_string(),
        "`topDown(addZero)` is not applicable at the root"
    );
    let err = run(&operand(add_zero()), &num(1)).0.unwrap_err();
    assert_eq!(
        err.to_string(),
        "`operand(addZero)` is not applicable at the root"
    );
}

/// `n ~> n + 1` on literals (never terminates under repeat, never comes back)
fn increment() -> Strategy<T> {
    rule("increment", |t: &T, _| match t {
        Num(n) => Ok(Num(n + 1)),
        _ => Err(Failure::not_applicable()),
    })
}

#[test]
fn a_strategy_that_does_not_terminate_stops_at_the_budget() {
    let t = num(1);
    let mut ctx = Ctx::default().with_budget(10_000);
    let looping = named("spin", vec![], || repeat(increment()));
    let err = ctx.run(&looping, &t).unwrap_err();
    assert!(err.is_abort());
    let msg = err.to_string();
    assert!(
        msg.contains("`repeat(increment)` does not seem to terminate"),
        "{msg}"
    );
    assert!(msg.contains("inside spin"), "{msg}");
    // `not` does not hide an abort.
    let mut ctx = Ctx::default().with_budget(100);
    assert!(ctx
        .run(&not(repeat(increment())), &t)
        .unwrap_err()
        .is_abort());
}

/// A step that takes the program back to what it was two steps before would alternate
/// forever: it stops at once (F-smooth's `normalize(letSwap <+ sharing)` ran 300 million
/// applications in 74 s, printing 400 MB of trace; found by the command-line fuzzer).
#[test]
fn a_loop_that_goes_back_and_forth_stops_at_once() {
    for (s, t) in [
        (repeat(commute()), add(num(1), num(2))),
        (normalize(commute()), neg(add(num(1), num(2)))),
    ] {
        let mut ctx = Ctx::default();
        let err = ctx.run(&s, &t).unwrap_err();
        let msg = err.to_string();
        assert!(
            msg.contains("back to what it was two steps before"),
            "{s}: {msg}"
        );
        assert!(ctx.applications() < 20, "{s}: {}", ctx.applications());
    }
    // a loop that reaches a fixed point after changing the program goes on as before
    let t = add(add(num(1), num(0)), num(0));
    assert_eq!(run(&repeat(add_zero()), &t).0, Ok(num(1)));
}

/// A `repeat` or `normalize` whose step succeeds without applying a rule would apply it
/// forever: it stops at once with a message, whatever the budget (`normalize(repeat(addId))`
/// ran for 120 s under the default budget; found by the command-line fuzzer).
#[test]
fn a_loop_whose_step_changes_nothing_stops_at_once() {
    let t = neg(add(num(1), num(2)));
    let cases = [
        normalize(repeat(add_zero())),
        repeat(try_(add_zero())),
        repeat(id()),
        repeat(top_down(try_(fold()))),
        named("spin", vec![], || normalize(try_(add_zero()))),
    ];
    for s in cases {
        let mut ctx = Ctx::default();
        let err = ctx.run(&s, &t).unwrap_err();
        assert!(err.is_abort(), "{s}: {err}");
        let msg = err.to_string();
        assert!(
            msg.contains("succeeded without changing the program"),
            "{s}: {msg}"
        );
        assert!(ctx.applications() < 100, "{s}: {}", ctx.applications());
    }
    // the message names the loop, and the named strategies it runs inside
    let err = run(&named("spin", vec![], || repeat(id())), &t)
        .0
        .unwrap_err();
    assert!(
        err.to_string().contains("`repeat(id)` does not terminate")
            && err.to_string().contains("inside spin"),
        "{err}"
    );
    // a step that applies a rule goes on: here until the rule no longer applies
    let fold_all = repeat(top_down(fold()));
    assert_eq!(
        run(&fold_all, &add(add(num(1), num(2)), num(3))).0,
        Ok(num(6))
    );
    // a predicate applies, but leaves the program the same (`Program::same`)
    let mut ctx = Ctx::default();
    let err = ctx.run(&repeat(is_num()), &num(1)).unwrap_err();
    assert!(
        err.to_string()
            .contains("`repeat(isNum)` does not terminate"),
        "{err}"
    );
    assert!(ctx.applications() < 10, "{}", ctx.applications());
}

/// A program may grow under `repeat` to four times the depth it started from, and always
/// to 500: runaway strategies whose steps cost time in proportion to the depth stop in a
/// fraction of a second (they ran for 10 to 30 s to a depth of 20,000).
#[test]
fn growth_in_depth_is_bounded_relative_to_the_start() {
    let wrap = rule("wrap", |t: &T, _| Ok(neg(t.clone())));
    let depth_reached = |start: T| {
        let mut ctx = Ctx::default();
        let err = ctx.run(&repeat(wrap.clone()), &start).unwrap_err();
        assert!(err.is_abort(), "{err}");
        let msg = err.to_string();
        assert!(msg.contains("grew the program past a depth of"), "{msg}");
        ctx.rules_applied()
    };
    // from depth 1: stopped once past 500 (the depth is measured every few steps)
    let grown = depth_reached(num(1));
    assert!((MIN_DEPTH_LIMIT as u64..600).contains(&grown), "{grown}");
    // from depth 1,001: past 4,004
    let deep = (0..1_000).fold(num(1), |t, _| neg(t));
    let grown = depth_reached(deep);
    assert!((3_003..3_400).contains(&grown), "{grown}");
}

#[test]
fn recursive_named_strategies_unfold_lazily() {
    fn my_top_down(s: Strategy<T>) -> Strategy<T> {
        let inner = s.clone();
        named("myTopDown", vec![s.to_string()], move || {
            lchoice(inner.clone(), one(my_top_down(inner.clone())))
        })
    }
    let u = add(num(3), add(num(2), num(0)));
    let (r, steps) = run(&my_top_down(add_zero()), &u);
    assert_eq!(r, Ok(add(num(3), num(2))));
    // Same steps as the built-in topDown.
    assert_eq!(steps, run(&top_down(add_zero()), &u).1);
}

#[test]
fn the_trace_records_each_rule_with_its_location() {
    let t = neg(add(num(1), num(2)));
    let mut ctx = Ctx::default().with_trace();
    let s = named("foldAll", vec![], || normalize(fold()));
    assert_eq!(ctx.run(&s, &t), Ok(neg(num(3))));
    let trace = ctx.trace().unwrap();
    assert_eq!(trace.len(), 1);
    assert_eq!(trace[0].rule, "fold");
    assert_eq!(trace[0].within[0], "foldAll");
    assert_eq!(trace[0].location.to_string(), "operand");
    assert_eq!(
        (trace[0].before.as_str(), trace[0].after.as_str()),
        ("(1 + 2)", "3")
    );
}

#[test]
fn strategies_print_in_elv_syntax() {
    let s = seq(
        add_zero(),
        lchoice(fold(), seq(id(), operand(top_down(is_num())))),
    );
    assert_eq!(
        s.to_string(),
        "addZero ; (fold <+ id ; operand(topDown(isNum)))"
    );
    let s: Strategy<T> = lchoice(seq(seq(id(), id()), fail()), try_(repeat_n(3, id())));
    assert_eq!(s.to_string(), "(id ; id) ; fail <+ try(repeatN(3, id))");
    assert_eq!(add_zero().at(top_down).to_string(), "topDown(addZero)");
}

#[test]
fn elevate_simplifies_strategies() {
    // Thesis §6.3.2: normalize(idSimplification)(body(id) ; body(id)) == id, after bodyFusion.
    let s: Strategy<T> = seq(operand(id()), operand(id()));
    let fused = meta::body_fusion().apply(&s).unwrap();
    assert_eq!(fused.to_string(), "operand(id ; id)");
    let simplified = meta::simplify_strategies().apply(&s).unwrap();
    assert_eq!(simplified.to_string(), "id");
    // Fewer steps, same result on a negation.
    let t = neg(num(1));
    assert_eq!(run(&s, &t).0, run(&fused, &t).0);
    assert!(run(&fused, &t).1 < run(&s, &t).1);
    // `one` is not fused: one(f) ; one(g) differs from one(f ; g).
    let o: Strategy<T> = seq(one(id()), one(id()));
    assert!(meta::body_fusion().apply(&o).is_err());
}

/// `onLeft(s)`: a rule that applies `s` to the left operand of a sum itself (as
/// `storeInMemory` applies its `how`) and passes its failure on.
fn on_left(s: Strategy<T>) -> Strategy<T> {
    rule(format!("onLeft({s})"), move |t: &T, ctx| match t {
        Add(a, b) => Ok(Add(Arc::new(ctx.apply(&s, a)?), b.clone())),
        _ => Err(Failure::not_applicable()),
    })
}

#[test]
fn a_failure_is_explained_by_the_innermost_step_and_its_term() {
    // `1 * 2 + 3`: onLeft(fold) fails because fold fails on `1 * 2`; the last
    // alternative, onLeft(fold) at the root of `-(...)`, fails by itself
    let t = neg(add(mul(num(1), num(2)), num(3)));
    let s = operand(on_left(fold())).or(on_left(fold()));
    let f = run(&s, &t).0.unwrap_err();
    let why = f.explanation().expect("explained");
    assert_eq!(
        why.render(),
        "while applying `onLeft(fold)` at operand: `fold` is not applicable to `(1 * 2)`"
    );
    // a rule that fails by itself: its own term
    let f = run(&fold(), &num(4)).0.unwrap_err();
    assert_eq!(
        f.explanation().map(Explanation::render).as_deref(),
        Some("`fold` is not applicable to `4`")
    );
}
