//! The differentiation API as constructs inside programs (Shaikhha et al.,
//! ICFP 2019, §4: the `deriv` construct and the high-level `grad` and
//! `jacob` built on it), expanded by forward mode into plain F-smooth:
//!
//! ```text
//! deriv f x : T       (f : Double => T, T built from Double, arrays, pairs)
//!   ~> tangent_T (D⟦f⟧ (x, 1.0))
//! grad f v : Vector   (f : Vector => Double)
//!   ~> let v1 = v in let df = D⟦f⟧ in
//!      build (length v1) (fun k -> snd (df (build (length v1) (fun i -> (v1[i], if i == k then 1.0 else 0.0)))))
//! jacob f v : Matrix  (f : Vector => Vector; row i is the gradient of component i)
//!   ~> let v1 = v in let df = D⟦f⟧ in
//!      let seed = fun k -> build (length v1) (fun i -> (v1[i], if i == k then 1.0 else 0.0)) in
//!      let cols = build (length v1) (fun k -> let r = df (seed k) in build (length r) (fun i -> snd r[i])) in
//!      let m = if 0 < length v1 then length cols[0] else length (df (seed 0)) in
//!      build m (fun i -> build (length v1) (fun j -> cols[j][i]))
//! ```
//!
//! `tangent_T` takes the tangent parts of a `D⟦T⟧` value (`snd` of every
//! dual number). The gradient is one vector program: component `k` is the
//! directional derivative along the `k`-th unit vector, and simplification
//! folds the unit tangents away (`foldConditional`), as for
//! [`crate::gradient_program`]. Constructs nest (`deriv (fun x -> deriv g x) y`
//! is a second derivative): inner ones are expanded first.
//!
//! `D⟦f⟧` of a function that mentions variables bound outside it: a variable
//! of a first-order type is a constant (its tangent is zero); a `let`-bound
//! function is differentiated with its definition; a function parameter
//! (`fun (h: Double => Double) -> deriv h x`) has no definition to
//! differentiate, and is refused as unsupported.

use crate::check::{elaborate, infer_expr};
use crate::diff::{constant_dual, Differ};
use crate::expr::{subst, Env, Expr, ExprKind, Name, Prim};
use crate::types::Type;
use crate::Program;
use diagnostics::{Diagnostic, Span};
use std::collections::HashSet;

/// Whether `e` contains `deriv`, `grad` or `jacob`.
pub fn contains_derivatives(e: &Expr) -> bool {
    let mut stack = vec![e];
    while let Some(e) = stack.pop() {
        if matches!(e.kind(), ExprKind::Prim(op, _) if op.is_derivative()) {
            return true;
        }
        stack.extend(e.children());
    }
    false
}

/// `p` with every `deriv`, `grad` and `jacob` replaced by its forward-mode
/// expansion (see the module docs); `p` itself where it has none. Errors:
/// ill-typed programs, a construct whose function returns something that is
/// not built from `Double`s, and functions that call a function parameter.
pub fn expand_derivatives(p: &Program) -> Result<Program, Diagnostic> {
    if !contains_derivatives(&p.body) {
        return Ok(p.clone());
    }
    let (typed, _) = elaborate(p)?;
    let mut names: HashSet<Name> = p.inputs.iter().map(|i| i.name.clone()).collect();
    collect_names(&typed.body, &mut names);
    let mut x = Expander {
        env: Env::default(),
        names,
        scope: p
            .inputs
            .iter()
            .map(|i| Binding {
                name: i.name.clone(),
                ty: i.ty.clone(),
                def: None,
            })
            .collect(),
    };
    // Every binder gets a name of its own, so that a definition's free
    // variables mean the same wherever the definition is differentiated.
    let mut seen: HashSet<Name> = p.inputs.iter().map(|i| i.name.clone()).collect();
    let body = x.uniquify(&typed.body, &mut seen);
    let body = x.expand(&body)?;
    Ok(typed.with_body(body))
}

fn collect_names(e: &Expr, out: &mut HashSet<Name>) {
    let mut stack = vec![e];
    while let Some(e) = stack.pop() {
        match e.kind() {
            ExprKind::Var(x) | ExprKind::Lam(x, ..) | ExprKind::Let(x, ..) => {
                out.insert(x.clone());
            }
            _ => {}
        }
        stack.extend(e.children());
    }
}

/// A variable in scope during the expansion: its type and, for a `let`, its
/// (expanded) definition.
struct Binding {
    name: Name,
    ty: Type,
    def: Option<Expr>,
}

struct Expander {
    env: Env,
    /// Every name in the program and every name made so far.
    names: HashSet<Name>,
    scope: Vec<Binding>,
}

/// Whether the derivative of a value of this type is a value of the same type
/// (a `Double`, or arrays and pairs of them).
fn differentiable(t: &Type) -> bool {
    match t {
        Type::Double => true,
        Type::Array(u) => differentiable(u),
        Type::Pair(a, b) => differentiable(a) && differentiable(b),
        _ => false,
    }
}

impl Expander {
    fn fresh(&mut self, base: &str) -> Name {
        let n = self.env.fresh(base, |n| self.names.contains(n));
        self.names.insert(n.clone());
        n
    }

    /// `e` with every binder that reuses a name bound before renamed.
    fn uniquify(&mut self, e: &Expr, seen: &mut HashSet<Name>) -> Expr {
        use ExprKind::*;
        match e.kind() {
            Var(_) | Double(_) | Index(_) | Bool(_) => e.clone(),
            Lam(x, t, b) => {
                let (x, b) = self.binder(x, b, seen);
                let b = self.uniquify(&b, seen);
                e.with_kind(Lam(x, t.clone(), b))
            }
            Let(x, e0, e1) => {
                let e0 = self.uniquify(e0, seen);
                let (x, e1) = self.binder(x, e1, seen);
                let e1 = self.uniquify(&e1, seen);
                e.with_kind(Let(x, e0, e1))
            }
            App(f, a) => {
                let f = self.uniquify(f, seen);
                e.with_kind(App(f, self.uniquify(a, seen)))
            }
            If(c, a, b) => {
                let c = self.uniquify(c, seen);
                let a = self.uniquify(a, seen);
                e.with_kind(If(c, a, self.uniquify(b, seen)))
            }
            Prim(op, args) => {
                let args = args.iter().map(|a| self.uniquify(a, seen)).collect();
                e.with_kind(Prim(*op, args))
            }
        }
    }

    fn binder(&mut self, x: &Name, body: &Expr, seen: &mut HashSet<Name>) -> (Name, Expr) {
        if seen.insert(x.clone()) {
            return (x.clone(), body.clone());
        }
        let y = self.fresh(x);
        seen.insert(y.clone());
        let body = subst(body, x, &Expr::var(y.clone()), &mut self.env);
        (y, body)
    }

    fn type_of(&self, e: &Expr) -> Result<Type, Diagnostic> {
        let scope: Vec<(Name, Type)> = self
            .scope
            .iter()
            .map(|b| (b.name.clone(), b.ty.clone()))
            .collect();
        infer_expr(&scope, e)
    }

    /// `e` with its constructs expanded, innermost first.
    fn expand(&mut self, e: &Expr) -> Result<Expr, Diagnostic> {
        use ExprKind::*;
        if !contains_derivatives(e) {
            return Ok(e.clone());
        }
        match e.kind() {
            Var(_) | Double(_) | Index(_) | Bool(_) => Ok(e.clone()),
            Lam(x, t, b) => {
                self.scope.push(Binding {
                    name: x.clone(),
                    ty: t.clone().unwrap_or(Type::Double),
                    def: None,
                });
                let b = self.expand(b);
                self.scope.pop();
                Ok(e.with_kind(Lam(x.clone(), t.clone(), b?)))
            }
            Let(x, e0, e1) => {
                let e0 = self.expand(e0)?;
                let ty = self.type_of(&e0)?;
                self.scope.push(Binding {
                    name: x.clone(),
                    ty,
                    def: Some(e0.clone()),
                });
                let e1 = self.expand(e1);
                self.scope.pop();
                Ok(e.with_kind(Let(x.clone(), e0, e1?)))
            }
            App(f, a) => {
                let f = self.expand(f)?;
                Ok(e.with_kind(App(f, self.expand(a)?)))
            }
            If(c, a, b) => {
                let c = self.expand(c)?;
                let a = self.expand(a)?;
                Ok(e.with_kind(If(c, a, self.expand(b)?)))
            }
            Prim(op, args) => {
                let args = args
                    .iter()
                    .map(|a| self.expand(a))
                    .collect::<Result<Vec<_>, _>>()?;
                if op.is_derivative() {
                    self.construct(e.span(), *op, &args[0], &args[1])
                } else {
                    Ok(e.with_kind(Prim(*op, args)))
                }
            }
        }
    }

    /// An expression, meaning the same here as `e`'s free variables do, that
    /// evaluates to `D⟦e⟧`; and the type of `e`. Every variable `e` needs,
    /// directly or through the definitions of the functions it calls, gets
    /// its dual bound once, outermost first:
    /// `let y1' = (y1, 0.0) in let g' = D⟦def of g⟧ in ... D⟦e⟧` (so a
    /// definition called from many places is differentiated once).
    fn dual_closed(&mut self, e: &Expr, at: Span) -> Result<(Expr, Type), Diagnostic> {
        // The variables needed, with their positions in the scope.
        let mut needed: Vec<usize> = Vec::new();
        let mut work: Vec<Name> = e.free_vars().to_vec();
        while let Some(y) = work.pop() {
            let Some(k) = self.scope.iter().rposition(|b| b.name == y) else {
                return Err(Diagnostic::new(at, format!("unbound variable `{y}`")));
            };
            if needed.contains(&k) {
                continue;
            }
            needed.push(k);
            let b = &self.scope[k];
            if !b.ty.is_first_order() {
                match &b.def {
                    Some(d) => work.extend(d.free_vars().iter().cloned()),
                    None => {
                        return Err(Diagnostic::new(
                            at,
                            format!(
                                "unsupported: this differentiates a function that calls `{y}`, \
                                 a function parameter of type `{}`, whose definition is not known here",
                                b.ty
                            ),
                        )
                        .with_note(
                            "forward mode differentiates the definition of every function called: \
                             bind the function with `let`, or differentiate where it is defined",
                        ))
                    }
                }
            }
        }
        needed.sort_unstable();
        let renamed: Vec<(Name, Name, Type)> = needed
            .iter()
            .map(|&k| {
                let (y, ty) = (self.scope[k].name.clone(), self.scope[k].ty.clone());
                (y.clone(), self.fresh(&y), ty)
            })
            .collect();
        let mut lets = Vec::new();
        for (&k, (y, y2, ty)) in needed.iter().zip(&renamed) {
            let rhs = match self.scope[k].def.clone() {
                Some(d) if !ty.is_first_order() => self.dual_renamed(&d, &renamed).0,
                _ => {
                    let i = self.fresh("i");
                    // First-order: a constant with a zero tangent.
                    constant_dual(&Expr::var(y.clone()), ty, &i, 0)
                        .unwrap_or_else(|| Expr::var(y.clone()))
                }
            };
            lets.push((y2.clone(), rhs));
        }
        let (d, ty) = self.dual_renamed(e, &renamed);
        let out = lets
            .into_iter()
            .rev()
            .fold(d, |acc, (y, rhs)| Expr::let_(y, rhs, acc));
        Ok((out, ty))
    }

    /// `D⟦e⟧` with each free variable `y` of `e` renamed to its `y'` of
    /// `renamed` (which lists every free variable of `e`).
    fn dual_renamed(&mut self, e: &Expr, renamed: &[(Name, Name, Type)]) -> (Expr, Type) {
        let mut body = e.clone();
        let mut scope = Vec::new();
        for (y, y2, ty) in renamed {
            if body.has_free(y) {
                body = subst(&body, y, &Expr::var(y2.clone()), &mut self.env);
            }
            scope.push((y2.clone(), ty.clone()));
        }
        Differ::new(scope).diff(&body)
    }

    /// The expansion of `op f x` (`f` and `x` already expanded).
    fn construct(&mut self, at: Span, op: Prim, f: &Expr, x: &Expr) -> Result<Expr, Diagnostic> {
        let (df, tf) = self.dual_closed(f, at)?;
        let Type::Fun(_, out) = &tf else {
            return Err(Diagnostic::new(
                at,
                format!("the first argument of `{}` is not a function", op.name()),
            ));
        };
        match op {
            Prim::Deriv => {
                if !differentiable(out) {
                    return Err(Diagnostic::new(
                        at,
                        format!(
                            "`deriv` needs a function whose result is made of `Double`s \
                             (Double, Vector, Matrix, arrays and pairs of them); this one returns `{out}`"
                        ),
                    ));
                }
                let r = Expr::app(df, Expr::pair(x.clone(), Expr::double(1.0)));
                Ok(self.tangent(r, out))
            }
            Prim::Grad => {
                let v = self.fresh("v");
                let d = self.fresh("df");
                let k = self.fresh("k");
                let seed = self.seed(&v, &Expr::var(k.clone()));
                let component = Expr::snd(Expr::app(Expr::var(d.clone()), seed));
                let grad = Expr::build(
                    Expr::length(Expr::var(v.clone())),
                    Expr::lam(k, Some(Type::Index), component),
                );
                Ok(Expr::let_(v, x.clone(), Expr::let_(d, df, grad)))
            }
            _ => {
                let v = self.fresh("v");
                let d = self.fresh("df");
                let seed = self.fresh("seed");
                let cols = self.fresh("cols");
                let m = self.fresh("m");
                let [k, r, i, j] = ["k", "r", "i", "j"].map(|b| self.fresh(b));
                let len_v = || Expr::length(Expr::var(v.clone()));
                let at_seed = |k: Expr| {
                    Expr::app(Expr::var(d.clone()), Expr::app(Expr::var(seed.clone()), k))
                };
                let seed_fn = Expr::lam(
                    k.clone(),
                    Some(Type::Index),
                    self.seed(&v, &Expr::var(k.clone())),
                );
                let column = Expr::let_(
                    r.clone(),
                    at_seed(Expr::var(k.clone())),
                    self.tangent(Expr::var(r), &Type::vector()),
                );
                let columns = Expr::build(len_v(), Expr::lam(k, Some(Type::Index), column));
                let rows = Expr::if_(
                    Expr::bin(Prim::Lt, Expr::index(0), len_v()),
                    Expr::length(Expr::get(Expr::var(cols.clone()), Expr::index(0))),
                    Expr::length(at_seed(Expr::index(0))),
                );
                let element = Expr::get(
                    Expr::get(Expr::var(cols.clone()), Expr::var(j.clone())),
                    Expr::var(i.clone()),
                );
                let matrix = Expr::build(
                    Expr::var(m.clone()),
                    Expr::lam(
                        i,
                        Some(Type::Index),
                        Expr::build(len_v(), Expr::lam(j, Some(Type::Index), element)),
                    ),
                );
                let body = Expr::let_(
                    seed,
                    seed_fn,
                    Expr::let_(cols, columns, Expr::let_(m, rows, matrix)),
                );
                Ok(Expr::let_(v, x.clone(), Expr::let_(d, df, body)))
            }
        }
    }

    /// `build (length v) (fun i -> (v[i], if i == k then 1.0 else 0.0))`: the
    /// point `v` paired with the `k`-th unit tangent.
    fn seed(&mut self, v: &Name, k: &Expr) -> Expr {
        let i = self.fresh("i");
        let unit = Expr::if_(
            Expr::bin(Prim::Eq, Expr::var(i.clone()), k.clone()),
            Expr::double(1.0),
            Expr::double(0.0),
        );
        let elem = Expr::pair(Expr::get(Expr::var(v.clone()), Expr::var(i.clone())), unit);
        Expr::build(
            Expr::length(Expr::var(v.clone())),
            Expr::lam(i, Some(Type::Index), elem),
        )
    }

    /// The tangent parts of `r : D⟦t⟧` (`t` [`differentiable`]).
    fn tangent(&mut self, r: Expr, t: &Type) -> Expr {
        let (name, bound) = match r.as_var() {
            Some(x) => (x.clone(), None),
            None => {
                let base = if matches!(t, Type::Array(_)) {
                    "a"
                } else {
                    "p"
                };
                (self.fresh(base), Some(r.clone()))
            }
        };
        let x = Expr::var(name.clone());
        let out = match t {
            Type::Array(u) => {
                let i = self.fresh("i");
                let elem = self.tangent(Expr::get(x.clone(), Expr::var(i.clone())), u);
                Expr::build(Expr::length(x), Expr::lam(i, Some(Type::Index), elem))
            }
            Type::Pair(a, b) => {
                let first = self.tangent(Expr::fst(x.clone()), a);
                let second = self.tangent(Expr::snd(x), b);
                Expr::pair(first, second)
            }
            _ => return Expr::snd(r),
        };
        match bound {
            Some(value) => Expr::let_(name, value, out),
            None => out,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::interp::{eval_program, Value};
    use crate::parse_program;

    fn value(src: &str) -> Result<Value, String> {
        let p = parse_program(src).map_err(|d| d.message)?;
        eval_program(&p, &[]).map_err(|e| e.message)
    }

    fn close(v: &Value, x: f64) -> bool {
        v.equals(&Value::Double(x), Some(1e-12))
    }

    #[test]
    fn derivatives_of_scalar_functions() {
        let x: f64 = 0.7;
        let v = value("deriv (fun x -> x * sin x) 0.7").unwrap();
        assert!(close(&v, x.sin() + x * x.cos()), "{v}");
        // A second derivative: d²/dx² x³ = 6x.
        let v = value("deriv (fun x -> deriv (fun y -> y * y * y) x) 2.0").unwrap();
        assert!(close(&v, 12.0), "{v}");
        // Captured variables are constants; let-bound functions are differentiated.
        let v = value(
            "let c = 3.0 in let sq = fun (y: Double) -> y * y in deriv (fun x -> c * sq x) 2.0",
        )
        .unwrap();
        assert!(close(&v, 12.0), "{v}");
        // A vector-valued function: the derivative of every component.
        let v = value("deriv (fun x -> build 3 (fun i -> toDouble i * x * x)) 1.5").unwrap();
        assert_eq!(v.to_string(), "[0.0, 3.0, 6.0]");
    }

    #[test]
    fn a_name_rebound_between_definition_and_use_keeps_its_meaning() {
        // `g` means x * 1.0; the `y` bound by the lambda is another variable.
        let v = value(
            "let y = 1.0 in let g = fun (x: Double) -> x * y in (fun (y: Double) -> deriv g y) 5.0",
        )
        .unwrap();
        assert!(close(&v, 1.0), "{v}");
    }

    #[test]
    fn gradients_and_jacobians_are_programs() {
        let p = parse_program(
            "input u : Vector\ninput v : Vector\n\
             grad (fun w -> ifold (fun s i -> s + w[i] * v[i]) 0.0 (length w)) u",
        )
        .unwrap();
        let e = expand_derivatives(&p).unwrap();
        assert!(!contains_derivatives(&e.body));
        assert_eq!(crate::check_program(&e).unwrap(), Type::vector());
        let u = Value::Array(vec![Value::Double(1.0), Value::Double(2.0)].into());
        let v = Value::Array(vec![Value::Double(-3.0), Value::Double(0.5)].into());
        assert_eq!(
            eval_program(&p, &[u.clone(), v]).unwrap().to_string(),
            "[-3.0, 0.5]"
        );
        // The Jacobian of M·x is M, m × n.
        let p = parse_program(
            "input M : Matrix\ninput x : Vector\n\
             jacob (fun y -> build (length M) (fun i -> ifold (fun s j -> s + M[i][j] * y[j]) 0.0 (length y))) x",
        )
        .unwrap();
        let m = value("build 3 (fun i -> build 2 (fun j -> toDouble (i * 2 + j)))").unwrap();
        assert_eq!(
            eval_program(&p, &[m.clone(), u]).unwrap().to_string(),
            m.to_string()
        );
    }

    /// `g0 = g1 = fun x -> x`, `g(k) = fun x -> g(k-1) x + g(k-2) x`: `g(k) x`
    /// is `F(k) · x` (Fibonacci), and each definition is differentiated once.
    fn fibonacci_functions(k: usize, at: &str) -> String {
        let mut src =
            "let g0 = fun (x: Double) -> x in let g1 = fun (x: Double) -> x in ".to_string();
        for j in 2..=k {
            src += &format!(
                "let g{j} = fun (x: Double) -> g{} x + g{} x in ",
                j - 1,
                j - 2
            );
        }
        src + &format!("deriv g{k} {at}")
    }

    #[test]
    fn definitions_called_from_many_places_are_differentiated_once() {
        let v = value(&fibonacci_functions(15, "2.0")).unwrap();
        assert!(close(&v, 987.0), "{v}");
        let p = parse_program(&fibonacci_functions(60, "2.0")).unwrap();
        let e = expand_derivatives(&p).unwrap();
        assert!(
            e.body.size() < 40 * p.body.size(),
            "{} nodes from {}",
            e.body.size(),
            p.body.size()
        );
    }

    #[test]
    fn refusals_are_clear() {
        let err = |src: &str| {
            let p = parse_program(src).unwrap();
            expand_derivatives(&p).unwrap_err().message
        };
        assert!(
            err("(fun (h: Double => Double) -> deriv h 1.0) (fun x -> x)")
                .contains("unsupported: this differentiates a function that calls `h`")
        );
        assert!(err("deriv (fun x -> x < 1.0) 2.0").contains("this one returns `Bool`"));
        let p = parse_program("grad (fun x -> x) 1.0").unwrap();
        assert!(crate::check_program(&p)
            .unwrap_err()
            .message
            .contains("the function of `grad`"));
        assert!(parse_program("input v : Vector\ngrad v")
            .unwrap_err()
            .message
            .contains("argument 2 of `grad`"));
    }
}
