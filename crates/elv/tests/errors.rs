//! Every kind of load error, with the span it points at.

mod common;

use common::*;
use elv::Diagnostic;

/// The only error of loading `src`.
fn one_error(src: &str) -> Diagnostic {
    let errs = errors(src);
    assert_eq!(errs.len(), 1, "{errs:#?}");
    errs.into_iter().next().unwrap()
}

#[test]
fn unknown_names_suggest_close_ones() {
    let src = "def a = addZero @ topDwon";
    let e = one_error(src);
    assert_eq!(span_text(src, &e), "topDwon");
    assert_eq!(e.message, "unknown name `topDwon`");
    assert_eq!(e.notes, vec!["did you mean `topDown`?".to_string()]);
    // Definitions and parameters are suggested too.
    let src = "def myStrategy = id\ndef b(param) = myStrategi ; parm";
    let errs = errors(src);
    assert_eq!(errs.len(), 2);
    assert_eq!(span_text(src, &errs[0]), "myStrategi");
    assert_eq!(
        errs[0].notes,
        vec!["did you mean `myStrategy`?".to_string()]
    );
    assert_eq!(span_text(src, &errs[1]), "parm");
    assert_eq!(errs[1].notes, vec!["did you mean `param`?".to_string()]);
    // Nothing close: no suggestion.
    let src = "def a = frobnicate(id)";
    let e = one_error(src);
    assert_eq!(span_text(src, &e), "frobnicate");
    assert!(e.notes.is_empty());
}

#[test]
fn wrong_arity() {
    let src = "def a = tile(1) ; id";
    let e = one_error(src);
    assert_eq!(span_text(src, &e), "tile(1)");
    assert_eq!(
        e.message,
        "`tile` takes 2 arguments (`tile(Int, Int)`), but 1 was given"
    );
    let src = "def a = id(addZero)";
    let e = one_error(src);
    assert_eq!(span_text(src, &e), "id(addZero)");
    assert_eq!(e.message, "`id` takes no arguments, but 1 was given");
    let src = "def a = addZero @ tile";
    let e = one_error(src);
    assert_eq!(span_text(src, &e), "tile");
    assert_eq!(e.message, "`tile` needs 2 arguments: `tile(Int, Int)`");
    let src = "def f(a, b) = a ; b\ndef g = f(id, id, id)";
    let e = one_error(src);
    assert_eq!(span_text(src, &e), "f(id, id, id)");
    let src = "def a = topDown(id, id)";
    assert_eq!(span_text(src, &one_error(src)), "topDown(id, id)");
    // A builtin whose last parameter is not a strategy is no traversal.
    let src = "def a = id @ setNum";
    let e = one_error(src);
    assert_eq!(span_text(src, &e), "setNum");
    assert!(
        e.notes[0].contains("cannot be used as a traversal"),
        "{e:?}"
    );
}

#[test]
fn ill_kinded_arguments() {
    let src = "def a = repeatN(id, addZero)";
    let e = one_error(src);
    assert_eq!(span_text(src, &e), "id");
    assert_eq!(e.message, "expected an integer, found a strategy `id`");
    let src = "def a = setNum([1, 2])";
    let e = one_error(src);
    assert_eq!(span_text(src, &e), "[1, 2]");
    assert_eq!(e.message, "expected an integer, found a list `[1, 2]`");
    let src = "def a = left(3)";
    assert_eq!(span_text(src, &one_error(src)), "3");
    let src = "def a = isNumIn(4)";
    assert_eq!(span_text(src, &one_error(src)), "4");
    let src = "def a = argOf(3, id)";
    let e = one_error(src);
    assert_eq!(span_text(src, &e), "3");
    assert!(e.message.contains("name of the object language"), "{e}");
    let src = "def a = twice(id, id)";
    let e = one_error(src);
    assert_eq!(span_text(src, &e), "id");
    assert!(
        e.message
            .contains("is a strategy, but a traversal is expected"),
        "{e}"
    );
}

#[test]
fn traversals_where_strategies_are_expected() {
    let src = "def a = topDown ; id";
    let e = one_error(src);
    assert_eq!(span_text(src, &e), "topDown");
    assert_eq!(
        e.message,
        "`topDown` is a traversal; apply it to a strategy: `s @ topDown` or `topDown(s)`"
    );
    let src = "def a = id <+ argOf(add)";
    let e = one_error(src);
    assert_eq!(span_text(src, &e), "argOf(add)");
    let src = "def a = try(left)";
    assert_eq!(span_text(src, &one_error(src)), "left");
}

#[test]
fn strategies_where_traversals_are_expected() {
    let src = "def a = addZero @ id";
    let e = one_error(src);
    assert_eq!(span_text(src, &e), "id");
    assert_eq!(
        e.message,
        "`id` is a strategy, but a traversal is expected here"
    );
    let src = "def a = addZero @ topDown(id)";
    assert_eq!(span_text(src, &one_error(src)), "topDown(id)");
    let src = "def a = (id ; id)(addZero)";
    assert_eq!(span_text(src, &one_error(src)), "(id ; id)");
    // A parenthesized name is the name.
    let src = "def a = (mulOne)(addZero)";
    let e = one_error(src);
    assert_eq!(span_text(src, &e), "(mulOne)(addZero)");
    assert_eq!(e.message, "`mulOne` takes no arguments, but 1 was given");
}

#[test]
fn duplicate_definitions_and_parameters() {
    let src = "def a = id\ndef b = a\ndef a = fail";
    let e = one_error(src);
    assert_eq!(e.span, elv::Span::new(25, 26));
    assert_eq!(e.message, "`a` is defined twice");
    assert!(e.notes[0].contains("line 1, column 5"), "{e:?}");
    let src = "def f(s, t, s) = s ; t";
    let e = one_error(src);
    assert_eq!(e.span, elv::Span::new(12, 13));
    assert_eq!(e.message, "duplicate parameter `s`");
    let src = "def topDown(s) = s";
    let e = one_error(src);
    assert_eq!(span_text(src, &e), "topDown");
    assert_eq!(e.message, "`topDown` is already a builtin");
}

#[test]
fn parameter_kinds_must_agree() {
    // Used as a strategy, then as an integer.
    let src = "def f(x) = x ; setNum(x)";
    let e = one_error(src);
    assert_eq!(e.span, elv::Span::new(22, 23));
    assert_eq!(e.message, "expected an integer, found a strategy `x`");
    // The parameter is a strategy; the call gives an integer.
    let src = "def f(x) = x ; id\ndef g = f(3)";
    let e = one_error(src);
    assert_eq!(span_text(src, &e), "3");
    // Applied, so a traversal: not a strategy.
    let src = "def f(t) = t(id) ; t";
    let e = one_error(src);
    assert_eq!(e.span, elv::Span::new(19, 20));
    assert!(e.message.contains("is a traversal"), "{e}");
    let src = "def f(s) = s ; s(id)";
    let e = one_error(src);
    assert_eq!(e.span, elv::Span::new(15, 16));
    assert_eq!(e.message, "`s` is a strategy, not a traversal");
    // Kinds flow through calls between definitions, in any order.
    let src = "def g = f(id)\ndef f(n) = h(n)\ndef h(k) = setNum(k)";
    let e = one_error(src);
    assert_eq!(span_text(src, &e), "id");
    // The result of a definition is checked where it is used.
    let src = "def n = 3\ndef a = n ; id";
    let e = one_error(src);
    assert_eq!(e.span, elv::Span::new(18, 19));
    assert_eq!(e.message, "expected a strategy, found an integer `n`");
}

#[test]
fn only_strategies_may_be_recursive() {
    let src = "def n = [n, 1]";
    let e = one_error(src);
    assert_eq!(span_text(src, &e), "n");
    assert_eq!(e.span, elv::Span::new(4, 5));
    assert_eq!(
        e.message,
        "`n` refers to itself, but only strategies may be recursive"
    );
    let src = "def a = argOf(add) \ndef t = outermost(isAdd ; id @ t)";
    let errs = errors(src);
    assert!(
        errs.iter()
            .any(|e| e.message.contains("`t` refers to itself")),
        "{errs:?}"
    );
    // Strategies may: this one loops only when applied.
    load("def spin = spin\ndef a(s) = b(s)\ndef b(s) = a(s)");
}

#[test]
fn lexical_and_syntax_errors() {
    let src = "def a = id $ id";
    let e = one_error(src);
    assert_eq!(span_text(src, &e), "$");
    let src = "def a = ";
    let e = one_error(src);
    assert_eq!(e.span, elv::Span::new(8, 8));
    assert_eq!(
        e.message,
        "expected an expression, found the end of the input"
    );
    let src = "def f() = id";
    assert_eq!(span_text(src, &one_error(src)), "()");
    let src = "def a = f()";
    assert_eq!(span_text(src, &one_error(src)), "()");
    let src = "def a = topDown addZero";
    let e = one_error(src);
    assert_eq!(span_text(src, &e), "addZero");
    assert!(e.notes[0].contains("`f(a, b)`"), "{e:?}");
    let src = "def a = (id ; fail";
    let e = one_error(src);
    assert_eq!(e.message, "expected `)`, found the end of the input");
    let src = "def a id";
    let e = one_error(src);
    assert_eq!(span_text(src, &e), "id");
    assert_eq!(
        e.message,
        "expected `=` after `def a`, found identifier `id`"
    );
    let src = "a = id";
    let e = one_error(src);
    assert_eq!(span_text(src, &e), "a");
    let src = "def a = setNum(99999999999999999999)";
    let e = one_error(src);
    assert_eq!(span_text(src, &e), "99999999999999999999");
    assert_eq!(e.message, "integer literal out of range");
    let src = "def a = - 3";
    assert_eq!(span_text(src, &one_error(src)), "-");
    let src = "def a = [1, 2";
    assert!(one_error(src).message.contains("`,` or `]`"));
}

#[test]
fn nesting_too_deep_is_an_error() {
    let src = format!("def a = {}id{}", "try(".repeat(100), ")".repeat(100));
    let e = one_error(&src);
    assert!(e.message.contains("nested too deeply"), "{e}");
    let src = format!("def a = {}", vec!["id"; 1000].join(" ; "));
    let e = one_error(&src);
    assert!(e.message.contains("nested too deeply"), "{e}");
    // Deep but allowed: a long chain and a deep call.
    load(&format!("def a = {}", vec!["id"; 200].join(" ; ")));
    load(&format!(
        "def a = {}id{}",
        "try(".repeat(50),
        ")".repeat(50)
    ));
}

#[test]
fn all_errors_of_a_file_are_reported_in_order() {
    let src = "def a = topDwon(id)\ndef b = repeatN(id, id)\ndef c = id @ id\ndef d = undefined";
    let errs = errors(src);
    let spans: Vec<&str> = errs.iter().map(|e| span_text(src, e)).collect();
    assert_eq!(spans, vec!["topDwon", "id", "id", "undefined"]);
    // Several syntax errors: the parser resumes at the next `def`.
    let src = "def a = (\ndef b = id id\ndef c = id";
    let errs = errors(src);
    assert_eq!(errs.len(), 2, "{errs:?}");
    let src = "def a = id ; ;\ndef b = ; id";
    assert_eq!(errors(src).len(), 2);
    // Lexical errors are all reported, alone.
    let src = "def a = id $\ndef b = id ; ; €";
    let spans: Vec<&str> = errors(src).iter().map(|e| span_text(src, e)).collect();
    assert_eq!(spans, vec!["$", "€"]);
}

#[test]
fn expression_errors_refer_to_the_expression() {
    let m = load("def myTry(s) = s <+ id");
    let src = "myTry(addZer)";
    let errs = m.expression(src).unwrap_err();
    assert_eq!(span_text(src, &errs[0]), "addZer");
    assert_eq!(errs[0].notes, vec!["did you mean `addZero`?".to_string()]);
    let src = "topDown";
    let errs = m.expression(src).unwrap_err();
    assert!(errs[0].message.contains("is a traversal"), "{}", errs[0]);
    let src = "3";
    let errs = m.expression(src).unwrap_err();
    assert_eq!(errs[0].message, "expected a strategy, found an integer `3`");
    assert!(m.expression("").is_err());
    assert!(m.expression("id id").is_err());
    assert!(m.expression("def").is_err());
}

#[test]
fn diagnostics_render_with_the_source() {
    let src = "def a = id\ndef b = addZero @ topDwon";
    let e = one_error(src);
    let text = e.render("opt.elv", src);
    assert!(text.contains("unknown name `topDwon`"), "{text}");
    assert!(text.contains("opt.elv:2:19"), "{text}");
    assert!(text.contains("did you mean `topDown`?"), "{text}");
}

#[test]
fn long_chains_of_definitions_do_not_exhaust_the_stack() {
    // An integer through 500 definitions is fine, through 3000 too deep.
    let chain = |n: usize| {
        let mut src: String = (0..n).map(|i| format!("def n{i} = n{}\n", i + 1)).collect();
        src.push_str(&format!("def n{n} = 3\n"));
        src
    };
    let m = load(&chain(500));
    assert_eq!(m.expression("setNum(n0)").unwrap().to_string(), "setNum(3)");
    let errs = errors(&chain(3000));
    assert!(errs[0].message.contains("nested too deeply"), "{errs:?}");
    assert!(errs[0].notes.len() <= 4, "{errs:?}");
    // Strategies through 500 definitions with deep bodies: built lazily beyond
    // some depth, and still correct.
    let deep = |inner: String| format!("{}{inner}{}", "try(".repeat(60), ")".repeat(60));
    let mut src: String = (0..500)
        .map(|i| format!("def s{i} = {}\n", deep(format!("s{} ; id", i + 1))))
        .collect();
    src.push_str("def s500 = setNum(9)\n");
    let m = load(&src);
    let s = m.strategy("s0").unwrap();
    assert_eq!(s.to_string(), "s0");
    // Loading and dropping need no big stack; applying does (the engine
    // recurses), and so does dropping the 30,000-level strategy it has built
    // (elevate drops strategy trees recursively).
    drop(load(&src));
    let r = std::thread::Builder::new()
        .stack_size(512 << 20)
        .spawn(move || {
            let r = s.apply(&num(1));
            drop((s, m));
            r
        })
        .unwrap()
        .join()
        .unwrap();
    assert_eq!(r, Ok(num(9)));
}
