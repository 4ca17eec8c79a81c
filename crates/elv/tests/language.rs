//! The meaning of strategy files: precedence, `;;`, traversals, recursion,
//! arguments, and the module API.

mod common;

use common::*;
use elevate::{lchoice, seq, top_down, Ctx, Failure, Node};
use elv::Kind;

#[test]
fn seq_binds_tighter_than_choice() {
    assert_eq!(
        expr("addZero ; mulOne <+ commute"),
        lchoice(seq(add_zero(), mul_one()), commute())
    );
    assert_eq!(
        expr("addZero <+ mulOne ; commute"),
        lchoice(add_zero(), seq(mul_one(), commute()))
    );
}

#[test]
fn seq_and_choice_are_right_associative() {
    assert_eq!(
        expr("addZero ; mulOne ; commute"),
        seq(add_zero(), seq(mul_one(), commute()))
    );
    assert_eq!(
        expr("addZero <+ mulOne <+ commute"),
        lchoice(add_zero(), lchoice(mul_one(), commute()))
    );
    assert_eq!(
        expr("(addZero ; mulOne) ; commute"),
        seq(seq(add_zero(), mul_one()), commute())
    );
}

#[test]
fn at_is_left_associative_and_binds_tighter_than_seq() {
    // `s @ t1 @ t2` is `t2(t1(s))`.
    assert_eq!(expr("addZero @ left @ topDown"), top_down(left(add_zero())));
    assert_eq!(
        expr("addZero @ left @ topDown").to_string(),
        "topDown(left(addZero))"
    );
    assert_eq!(
        expr("mulOne ; addZero @ topDown <+ id"),
        lchoice(seq(mul_one(), top_down(add_zero())), elevate::id())
    );
}

#[test]
fn nf_seq_inserts_the_normal_form() {
    assert_eq!(
        expr("addZero ;; mulOne"),
        seq(add_zero(), seq(nf(), mul_one()))
    );
    // `;` and `;;` share one right-associative level.
    assert_eq!(
        expr("addZero ;; mulOne ; commute"),
        seq(add_zero(), seq(nf(), seq(mul_one(), commute())))
    );
    assert_eq!(
        expr("addZero ; mulOne ;; commute"),
        seq(add_zero(), seq(mul_one(), seq(nf(), commute())))
    );
    assert_eq!(
        expr("addZero ;; mulOne").to_string(),
        "addZero ; normalize(addZero <+ mulOne) ; mulOne"
    );
}

#[test]
fn nf_seq_without_a_normal_form_is_an_error() {
    let src = "def x = addZero ;; mulOne";
    let errs = errors_with(src, &registry_without_nf());
    assert_eq!(errs.len(), 1);
    assert_eq!(span_text(src, &errs[0]), ";;");
    assert!(
        errs[0].message.contains("needs a normal form"),
        "{}",
        errs[0]
    );
}

#[test]
fn builtins_with_a_last_strategy_parameter_are_traversals() {
    let expected = arg_of("add", add_zero()).unwrap();
    assert_eq!(expr("addZero @ argOf(add)"), expected);
    assert_eq!(expr("argOf(add, addZero)"), expected);
    assert_eq!(expr("argOf(add)(addZero)"), expected);
    assert_eq!(expected.to_string(), "argOf(add, addZero)");
    assert_eq!(expr("addZero @ topDown"), top_down(add_zero()));
    assert_eq!(expr("topDown(addZero)"), top_down(add_zero()));
    assert_eq!(
        expr("commute @ outermost(isAdd)"),
        top_down(seq(is_add(), commute()))
    );
    let m = load("");
    assert_eq!(
        m.expression("addZero @ repeatN(2)").unwrap(),
        elevate::repeat_n(2, add_zero())
    );
}

#[test]
fn definitions_with_a_last_strategy_parameter_are_traversals() {
    let m = load(
        "def inLeft(s) = left(s)
         def at(t, s) = s @ t
         def app(t) = t(addZero)
         def onBoth(op, s) = argOf(op, s) ; left(s)",
    );
    let s = m.expression("addZero @ inLeft").unwrap();
    assert_eq!(s.to_string(), "inLeft(addZero)");
    assert_eq!(
        s.apply(&add(add(var("x"), num(0)), num(1))),
        Ok(add(var("x"), num(1)))
    );
    assert_eq!(m.expression("inLeft(addZero)").unwrap(), s);
    assert_eq!(
        m.expression("addZero @ inLeft @ topDown")
            .unwrap()
            .to_string(),
        "topDown(inLeft(addZero))"
    );
    assert_eq!(
        m.expression("at(topDown, addZero)").unwrap().to_string(),
        "at(topDown, addZero)"
    );
    assert_eq!(
        m.expression("app(inLeft)").unwrap().to_string(),
        "app(inLeft)"
    );
    assert_eq!(
        m.expression("app(argOf(mul))").unwrap().to_string(),
        "app(argOf(mul))"
    );
    let both = m.expression("addZero @ onBoth(add)").unwrap();
    assert_eq!(both.to_string(), "onBoth(add, addZero)");
    let p = add(add(var("x"), num(0)), add(var("y"), num(0)));
    assert_eq!(both.apply(&p), Ok(add(var("x"), var("y"))));
    assert_eq!(
        m.signature("at"),
        Some((
            vec![Some(Kind::Traversal), Some(Kind::Strategy)],
            Kind::Strategy
        ))
    );
    assert_eq!(
        m.signature("onBoth"),
        Some((
            vec![Some(Kind::Symbol), Some(Kind::Strategy)],
            Kind::Strategy
        ))
    );
}

#[test]
fn traversal_valued_definitions() {
    let m = load("def loc = argOf(add)\ndef deep = outermost(isAdd)");
    let expected = arg_of("add", add_zero()).unwrap();
    assert_eq!(m.expression("addZero @ loc").unwrap(), expected);
    assert_eq!(m.expression("loc(addZero)").unwrap(), expected);
    assert_eq!(
        m.expression("commute @ deep").unwrap(),
        top_down(seq(is_add(), commute()))
    );
    assert_eq!(m.signature("loc"), Some((vec![], Kind::Traversal)));
    let err = m.strategy("loc").unwrap_err();
    assert!(err.message.contains("is a traversal"), "{err}");
}

#[test]
fn recursive_definitions_terminate_and_rewrite() {
    let m = load(
        "def myTry(s) = s <+ id
         def myRepeat(s) = myTry(s ; myRepeat(s))      // recursion is allowed
         def simplify = myRepeat(addZero @ topDown)",
    );
    let s = m.strategy("simplify").unwrap();
    assert_eq!(s.to_string(), "simplify");
    let Node::Named(n) = s.node() else { panic!() };
    assert_eq!(n.body().to_string(), "myRepeat(topDown(addZero))");
    let p = mul(add(add(var("x"), num(0)), num(0)), add(num(0), num(0)));
    assert_eq!(s.apply(&p), Ok(mul(var("x"), num(0))));
    // Nothing to do: `myTry` falls back to `id`.
    assert_eq!(s.apply(&var("y")), Ok(var("y")));
}

#[test]
fn recursion_through_traversals() {
    // `s` at the leftmost operand that it applies to, preferring deeper ones.
    let m = load("def deepLeft(s) = left(deepLeft(s)) <+ s");
    let s = m.expression("deepLeft(setNum(7))").unwrap();
    assert_eq!(s.to_string(), "deepLeft(setNum(7))");
    let p = add(mul(num(1), var("x")), num(2));
    assert_eq!(s.apply(&p), Ok(add(mul(num(7), var("x")), num(2))));
    // Mutual recursion, and definitions used before they are defined.
    let m = load(
        "def a(s) = s <+ left(b(s))
         def b(s) = s <+ argOf(add, a(s))",
    );
    let s = m.expression("a(isNum ; setNum(5))").unwrap();
    assert_eq!(
        s.apply(&add(add(var("x"), num(3)), num(4))),
        Ok(add(add(var("x"), num(5)), num(4)))
    );
}

fn with_big_stack(f: impl FnOnce() + Send + 'static) {
    std::thread::Builder::new()
        .stack_size(256 << 20)
        .spawn(f)
        .unwrap()
        .join()
        .unwrap();
}

#[test]
fn infinite_recursion_is_stopped_by_the_budget() {
    with_big_stack(|| {
        let m = load(
            "def loop(s) = s ; loop(s)
             def spin = spin
             def forever = repeat(id)",
        );
        // `repeat(id)` stops at its first step, which changes nothing
        for (name, why) in [
            ("loop(id)", "does not seem to terminate"),
            ("spin", "does not seem to terminate"),
            ("forever", "succeeded without changing the program"),
        ] {
            let s = m.expression(name).unwrap();
            let mut ctx = Ctx::default().with_budget(2_000);
            match ctx.run(&s, &num(1)) {
                Err(f @ Failure::Aborted(_)) => assert!(f.to_string().contains(why), "{f}"),
                other => panic!("{name}: {other:?}"),
            }
        }
    });
}

#[test]
fn user_definitions_print_as_calls() {
    let m = load("def myTry(s) = s <+ id\ndef both(a, b) = a ; b\ndef n = 3\ndef l = [1, 2, -3]");
    let s = m.expression("myTry(addZero ; mulOne)").unwrap();
    assert_eq!(s.to_string(), "myTry(addZero ; mulOne)");
    let s = m
        .expression("both(myTry(commute), setNum(n)) <+ isNumIn(l)")
        .unwrap();
    assert_eq!(
        s.to_string(),
        "both(myTry(commute), setNum(3)) <+ isNumIn([1, 2, -3])"
    );
}

#[test]
fn integer_and_list_arguments() {
    let m = load(
        "def n = -3
         def sizes = [1, n, 2]
         def pick = isNumIn(sizes) ; setNum(4)
         def bump(k) = repeatN(k, commute)",
    );
    let s = m.strategy("pick").unwrap();
    assert_eq!(s.apply(&num(-3)), Ok(num(4)));
    assert!(s.apply(&num(5)).is_err());
    assert_eq!(
        m.signature("bump"),
        Some((vec![Some(Kind::Int)], Kind::Strategy))
    );
    assert_eq!(m.signature("sizes"), Some((vec![], Kind::List)));
    let s = m.expression("bump(3)").unwrap();
    assert_eq!(s.apply(&add(num(1), num(2))), Ok(add(num(2), num(1))));
    assert_eq!(
        m.expression("isNumIn([])").unwrap().to_string(),
        "isNumIn([])"
    );
    // A nested list is a list; the builtin decides what it accepts.
    let src = "isNumIn([[1], 2])";
    let errs = m.expression(src).unwrap_err();
    assert_eq!(span_text(src, &errs[0]), src);
    assert_eq!(errs[0].message, "isNumIn needs a list of integers");
}

#[test]
fn comments_and_layout_are_ignored() {
    let m =
        load("// a file\n\n  def   a =   addZero // trailing\n// between\ndef b=a;a//x\n   // end");
    assert_eq!(
        m.definitions().collect::<Vec<_>>(),
        vec![("a", 0), ("b", 0)]
    );
    let b = m.strategy("b").unwrap();
    let Node::Named(n) = b.node() else { panic!() };
    assert_eq!(n.body().to_string(), "a ; a");
}

#[test]
fn symbols_name_object_language_things() {
    let m = load("def onOp(op, s) = argOf(op, s)\ndef mul = mulOne");
    assert_eq!(
        m.expression("onOp(add, addZero)").unwrap().to_string(),
        "onOp(add, addZero)"
    );
    // In a symbol position a name is a symbol even where it is defined otherwise.
    assert_eq!(
        m.expression("argOf(mul, mul)").unwrap(),
        arg_of("mul", m.strategy("mul").unwrap()).unwrap()
    );
    let src = "argOf(sub, id)";
    let errs = m.expression(src).unwrap_err();
    assert_eq!(span_text(src, &errs[0]), "argOf(sub, id)");
    assert!(errs[0].message.contains("unknown operator `sub`"));
}

#[test]
fn builtin_errors_at_load_point_at_the_call() {
    let src = "def ok = id\ndef bad = tile(0, 32) @ topDown";
    let errs = errors(src);
    assert_eq!(errs.len(), 1);
    assert_eq!(span_text(src, &errs[0]), "tile(0, 32)");
    assert_eq!(errs[0].message, "tile needs positive sizes");
    let rendered = errs[0].render("s.elv", src);
    assert!(rendered.contains("tile needs positive sizes"), "{rendered}");
    assert!(rendered.contains("def bad"), "{rendered}");
}

#[test]
fn errors_inside_definitions_point_into_their_bodies() {
    let src = "def t(n) = setNum(n) ; id\ndef x = t(-1)";
    let errs = errors(src);
    assert_eq!(errs.len(), 1);
    assert_eq!(span_text(src, &errs[0]), "setNum(n)");
    assert!(
        errs[0]
            .notes
            .iter()
            .any(|n| n.contains("while building `t(-1)`")),
        "{:?}",
        errs[0]
    );
    // From an expression given separately, the error is at the call.
    let m = load("def t(n) = setNum(n) ; id");
    let e = "id ; t(-2)";
    let errs = m.expression(e).unwrap_err();
    assert_eq!(span_text(e, &errs[0]), "t(-2)");
    assert_eq!(errs[0].message, "setNum needs a non-negative number");
    assert!(
        errs[0]
            .notes
            .iter()
            .any(|n| n.contains("line 1, column 12")),
        "{:?}",
        errs[0]
    );
}

#[test]
fn lazily_built_definitions_abort_the_rewrite_on_errors() {
    // `twice` applies a definition given as a traversal from Rust; its body is
    // built when the rewrite first applies it.
    let m = load("def bad(s) = setNum(-1) ; s");
    let s = m.expression("twice(bad, id)").unwrap();
    assert_eq!(s.to_string(), "bad(bad(id))");
    match s.apply(&num(1)) {
        Err(f @ Failure::Aborted(_)) => {
            let msg = f.to_string();
            assert!(msg.contains("could not build `bad(bad(id))`"), "{msg}");
            assert!(msg.contains("setNum needs a non-negative number"), "{msg}");
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn module_api() {
    let m = load("def a = id\ndef f(x, y) = x ; y\ndef topDwn(s) = topDown(s)");
    assert_eq!(
        m.definitions().collect::<Vec<_>>(),
        vec![("a", 0), ("f", 2), ("topDwn", 1)]
    );
    assert_eq!(m.strategy("a").unwrap().to_string(), "a");
    let err = m.strategy("b").unwrap_err();
    assert!(err.message.contains("no definition `b`"), "{err}");
    assert!(
        err.notes
            .iter()
            .any(|n| n.contains("a, f (2 parameters), topDwn (1 parameters)")),
        "{err}"
    );
    let err = m.strategy("topDown").unwrap_err();
    assert!(
        err.notes
            .iter()
            .any(|n| n.contains("did you mean `topDwn`?")),
        "{err}"
    );
    let err = m.strategy("f").unwrap_err();
    assert!(err.message.contains("has parameters (x, y)"), "{err}");
    assert_eq!(m.expression("f(a, a)").unwrap().to_string(), "f(a, a)");
}

#[test]
fn definitions_are_shared_by_name() {
    let m = load("def a = addZero\ndef b = a ; a");
    let b = m.strategy("b").unwrap();
    let Node::Named(n) = b.node() else { panic!() };
    let Node::Seq(x, y) = n.body().node() else {
        panic!()
    };
    assert_eq!(x, &m.strategy("a").unwrap());
    assert_eq!(x, y);
}

#[test]
fn registry_lists_builtins() {
    let r = registry();
    let names: Vec<&str> = r.names().map(|b| b.0).collect();
    for n in [
        "id",
        "fail",
        "try",
        "repeat",
        "repeatN",
        "not",
        "all",
        "one",
        "some",
        "topDown",
        "bottomUp",
        "allTopDown",
        "allBottomUp",
        "tryAll",
        "normalize",
        "seq",
        "lChoice",
        "addZero",
        "argOf",
    ] {
        assert!(names.contains(&n), "{n}");
    }
    let (_, params, doc) = r.names().find(|b| b.0 == "repeatN").unwrap();
    assert_eq!(params, &[Kind::Int, Kind::Strategy]);
    assert!(!doc.is_empty());
    assert_eq!(r.normal_form().map(|n| n.0), Some("NF"));
    assert!(registry_without_nf().normal_form().is_none());
}

#[test]
#[should_panic(expected = "registered twice")]
fn registering_a_name_twice_panics() {
    let mut r = registry();
    r.add("topDown", &[Kind::Strategy], "again", |a| Ok(a[0].clone()));
}

#[test]
fn generic_combinators_by_name() {
    let all = "id ; fail ; try(id) ; repeat(id) ; repeatN(3, id) ; not(id) ; all(id) ; one(id) ; \
               some(id) ; topDown(id) ; bottomUp(id) ; allTopDown(id) ; allBottomUp(id) ; \
               tryAll(id) ; normalize(id)";
    assert_eq!(expr(all).to_string(), all);
    assert_eq!(
        expr("seq(id, lChoice(fail, id))"),
        expr("id ; (fail <+ id)")
    );
    let errs = load("").expression("repeatN(-1, id)").unwrap_err();
    assert!(errs[0].message.contains("at least 0"), "{}", errs[0]);
}

/// The design document's example, with stand-ins for the RISE builtins.
#[test]
fn the_design_example_loads() {
    use Kind::{Int, List, Strategy as S};
    let mut r = registry_without_nf();
    let leaf = |name: &'static str| {
        move |_: &[elv::Value<E>]| {
            Ok(elv::Value::Strategy(elevate::rule(
                name,
                |p: &E, _: &mut Ctx<E>| Ok(p.clone()),
            )))
        }
    };
    for name in [
        "DFNF",
        "fuseReduceMap",
        "appliedReduce",
        "fissionReduceMap",
        "isLambda",
    ] {
        r.add(name, &[], "stand-in", leaf(name));
    }
    let shown = |name: &'static str| {
        move |a: &[elv::Value<E>]| {
            let args: Vec<String> = a.iter().map(|v| v.to_string()).collect();
            let n = format!("{name}({})", args.join(", "));
            Ok(elv::Value::Strategy(elevate::rule(
                n,
                |p: &E, _: &mut Ctx<E>| Ok(p.clone()),
            )))
        }
    };
    r.add("mapNest", &[Int], "stand-in", shown("mapNest"));
    r.add("split", &[Int], "stand-in", shown("split"));
    r.add("reorder", &[List], "stand-in", shown("reorder"));
    r.add("innermost", &[S, S], "stand-in", shown("innermost"));
    r.add("body", &[S], "stand-in", shown("body"));
    r.set_normal_form("DFNF", elevate::named("DFNF", vec![], elevate::id));
    let src = "def baseline = DFNF ; fuseReduceMap @ topDown
def blocking = baseline ;
  tile(32, 32)      @ outermost(mapNest(2)) ;;
  fissionReduceMap  @ outermost(appliedReduce) ;;
  split(4)          @ innermost(appliedReduce) ;;
  reorder([1, 2, 5, 6, 3, 4])
def myTry(s) = s <+ id
def myRepeat(s) = myTry(s ; myRepeat(s))      // recursion is allowed
def inLambda(s) = isLambda ; body(inLambda(s)) <+ s
";
    let m = match elv::load(src, &r) {
        Ok(m) => m,
        Err(e) => panic!(
            "{}",
            e.iter()
                .map(|d| d.render("d.elv", src))
                .collect::<Vec<_>>()
                .join("\n")
        ),
    };
    let blocking = m.strategy("blocking").unwrap();
    let Node::Named(n) = blocking.node() else {
        panic!()
    };
    assert_eq!(
        n.body().to_string(),
        "baseline ; topDown(mapNest(2) ; tile(32, 32)) ; DFNF ; topDown(appliedReduce ; fissionReduceMap) ; \
         DFNF ; innermost(appliedReduce, split(4)) ; DFNF ; reorder([1, 2, 5, 6, 3, 4])"
    );
    assert_eq!(
        m.expression("inLambda(id)").unwrap().to_string(),
        "inLambda(id)"
    );
}
