//! `deriv`, `grad` and `jacob` as constructs in programs: on random
//! functions, the interpreter's values of the constructs (through their
//! forward-mode expansion) match central finite differences, before and after
//! the default simplification; a gradient of a scalar function is one vector
//! program, linear for dot and the sum of squares once simplified.

use fsmooth::cost::cost;
use fsmooth::random::{Rng, TermGen};
use fsmooth::verify::{check_equivalent, check_partials};
use fsmooth::{
    check_program, default_budget, expand_derivatives, gradient_program, parse_expr, parse_program,
    simplify_program, Expr, Input, Name, Program, Span, Type,
};

/// The inputs of the random programs.
fn inputs() -> Vec<(Name, Type)> {
    vec![
        ("x".into(), Type::Double),
        ("k".into(), Type::Index),
        ("v".into(), Type::vector()),
        ("M".into(), Type::matrix()),
    ]
}

fn program(body: Expr) -> Program {
    Program {
        inputs: inputs()
            .into_iter()
            .map(|(name, ty)| Input {
                name,
                ty,
                span: Span::default(),
            })
            .collect(),
        body,
    }
}

/// A random term of type `ty` over the inputs except `point`, and the
/// parameter `param : param_ty` (what the construct differentiates by).
fn random_body(seed: u64, point: &str, param: &str, param_ty: &Type, ty: &Type) -> Expr {
    let mut scope: Vec<(Name, Type)> = inputs()
        .into_iter()
        .filter(|(n, _)| n.as_ref() != point)
        .collect();
    scope.push((param.into(), param_ty.clone()));
    let mut rng = Rng::new(seed);
    TermGen::new(&mut rng, &scope).term(ty, 4)
}

/// `op (fun (param: T) -> body) point`, and the program `let param = point in
/// body` whose finite differences in `point` it must match; both checked
/// before and after the default simplification. Returns how many random
/// inputs were compared.
fn check_construct(seed: u64, op: &str, param_ty: &Type, point: &str, body: Expr) -> usize {
    let f = Expr::lam("w", Some(param_ty.clone()), body.clone());
    let construct = parse_expr(&format!("{op} f {point}")).unwrap();
    let construct = fsmooth::expr::subst(&construct, "f", &f, &mut fsmooth::Env::default());
    let d = program(construct);
    let p = program(Expr::let_("w", Expr::var(point), body));
    let what = format!("seed {seed}: {d}");
    check_program(&d).unwrap_or_else(|e| panic!("{what}: {}", e.message));
    let expanded = expand_derivatives(&d).unwrap_or_else(|e| panic!("{what}: {}", e.message));
    let s = simplify_program(&d, false, default_budget(&expanded))
        .unwrap_or_else(|e| panic!("{what}: {}", e.message))
        .rewritten
        .program;
    let c = check_partials(&p, &d, point, 4, seed, 1e-5).unwrap_or_else(|e| panic!("{what}\n{e}"));
    check_equivalent(&expanded, &s, 4, seed, Some(1e-9))
        .unwrap_or_else(|e| panic!("{what}\n  ~> {s}\n{e}"));
    check_partials(&p, &s, point, 4, seed, 1e-5)
        .unwrap_or_else(|e| panic!("{what}\n  ~> {s}\n{e}"));
    c.compared
}

#[test]
fn grad_of_random_scalar_functions_matches_finite_differences() {
    let mut compared = 0;
    for seed in 0..150 {
        let body = random_body(seed, "v", "w", &Type::vector(), &Type::Double);
        compared += check_construct(seed, "grad", &Type::vector(), "v", body);
    }
    println!("{compared} points compared");
    assert!(compared > 200, "only {compared} points compared");
}

#[test]
fn jacob_of_random_vector_functions_matches_finite_differences() {
    let mut compared = 0;
    for seed in 0..150 {
        let body = random_body(seed, "v", "w", &Type::vector(), &Type::vector());
        compared += check_construct(seed, "jacob", &Type::vector(), "v", body);
    }
    println!("{compared} points compared");
    assert!(compared > 200, "only {compared} points compared");
}

#[test]
fn deriv_of_random_functions_matches_finite_differences() {
    let mut compared = 0;
    for seed in 0..150 {
        let ty = match seed % 3 {
            0 => Type::Double,
            1 => Type::vector(),
            _ => Type::pair(Type::Double, Type::vector()),
        };
        let body = random_body(seed, "x", "w", &Type::Double, &ty);
        compared += check_construct(seed, "deriv", &Type::Double, "x", body);
    }
    println!("{compared} points compared");
    assert!(compared > 200, "only {compared} points compared");
}

fn example(name: &str) -> Program {
    let path = format!(
        "{}/../../examples/fsmooth/{name}.fsmooth",
        env!("CARGO_MANIFEST_DIR")
    );
    parse_program(&std::fs::read_to_string(&path).unwrap()).unwrap()
}

fn simplified(p: &Program) -> Program {
    simplify_program(p, false, default_budget(p))
        .unwrap()
        .rewritten
        .program
}

/// The gradient construct and `gradient_program` agree on the tanh layer's
/// loss, whose function calls a `let`-bound `tanh`.
#[test]
fn grad_construct_agrees_with_gradient_program() {
    let p = parse_program(
        "input W : Matrix\ninput x : Vector\n\
         let tanh = fun (a: Double) -> let e = exp (2.0 * a) in (e - 1.0) / (e + 1.0) in\n\
         let loss = fun (z: Vector) -> \
           let y = build (length W) (fun i -> tanh (ifold (fun s j -> s + W[i][j] * z[j]) 0.0 (length z))) in \
           ifold (fun s i -> s + y[i] * y[i]) 0.0 (length y) in\n\
         grad loss x",
    )
    .unwrap();
    let g = gradient_program(&example("tanh_layer_loss"), "x").unwrap();
    let c = check_equivalent(&g, &p, 60, 3, Some(1e-9)).unwrap();
    assert!(c.compared >= 20, "{c:?}");
    let s = simplified(&p);
    let c = check_equivalent(&g, &s, 60, 4, Some(1e-9)).unwrap();
    assert!(c.compared >= 20, "{c:?}");
    // Simplified, it costs no more than the simplified gradient_program (and
    // less than the expansion).
    let (cs, cg) = (cost(&s).unwrap(), cost(&simplified(&g)).unwrap());
    let raw = cost(&p).unwrap();
    println!("grad loss x: {raw} -> {cs}; gradient_program simplified: {cg}");
    assert!(cs.no_more_than(&raw) && cs != raw, "{raw} -> {cs}");
    assert!(cs.no_more_than(&cg), "{cs} vs {cg}");
}

/// `cost(12) < 8 · cost(3)`: linear, where quadratic would be 16×.
fn linear(c: &fsmooth::cost::Cost) -> bool {
    c.at[1].1 < 8 * c.at[0].1
}

#[test]
fn grad_constructs_of_dot_and_sum_of_squares_simplify_to_linear_programs() {
    for (src, expected) in [
        (
            "input u : Vector\ninput v : Vector\n\
             grad (fun w -> ifold (fun s i -> s + w[i] * v[i]) 0.0 (length w)) u",
            "v",
        ),
        (
            "input u : Vector\ninput v : Vector\n\
             grad (fun w -> ifold (fun s i -> s + w[i] * w[i]) 0.0 (length w)) u",
            "u + u",
        ),
    ] {
        let p = parse_program(src).unwrap();
        let raw = cost(&p).unwrap();
        let s = simplified(&p);
        let c = cost(&s).unwrap();
        println!("{src}\n  ~> {}\n  {raw} -> {c}", s.body);
        assert!(
            !linear(&raw),
            "forward mode unsimplified is quadratic: {raw}"
        );
        assert!(linear(&c), "{c}: {}", s.body);
        // Element k is v[k], or u[k] + u[k].
        let body = s.body.to_string();
        let elem = if expected == "v" { "v[" } else { "u[" };
        assert!(
            body.starts_with("build (length ") && body.contains(elem),
            "{body}"
        );
    }
}

#[test]
fn a_gradient_descent_step_uses_grad_as_a_value() {
    // x - 0.1 ∇(‖x‖²) = 0.8 x.
    let p = parse_program(
        "input x : Vector\n\
         let g = grad (fun z -> ifold (fun s i -> s + z[i] * z[i]) 0.0 (length z)) x in\n\
         build (length x) (fun i -> x[i] - 0.1 * g[i])",
    )
    .unwrap();
    let expected =
        parse_program("input x : Vector\nbuild (length x) (fun i -> 0.8 * x[i])").unwrap();
    let c = check_equivalent(&expected, &p, 20, 9, Some(1e-12)).unwrap();
    assert!(c.compared >= 20);
    let c = check_equivalent(&expected, &simplified(&p), 20, 9, Some(1e-12)).unwrap();
    assert!(c.compared >= 20);
}

#[test]
fn constructs_print_and_read_back() {
    let src = "input M : Matrix\ninput x : Vector\n\
               (jacob (fun y -> build (length M) (fun i -> sin y[i])) x, deriv (fun t -> t * t) 3.0)";
    let p = parse_program(src).unwrap();
    let again = parse_program(&p.to_string()).unwrap();
    assert_eq!(again.body, p.body);
    assert_eq!(
        check_program(&p).unwrap(),
        Type::pair(Type::matrix(), Type::Double)
    );
}
