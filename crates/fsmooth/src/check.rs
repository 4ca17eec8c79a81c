//! The F-smooth type checker: unification-based inference, so that lambda
//! parameters need no annotations (`build n (fun i -> ...)` infers `i : Index`).
//!
//! Typing is monomorphic (a `let`-bound function has one type). Arithmetic and
//! comparisons work on both numeric types, `Double` and `Index`, with both
//! operands of the same type; a numeric type that nothing determines defaults
//! to `Double`, and any other undetermined type also defaults to `Double`.
//! [`elaborate`] returns the program with every lambda parameter annotated,
//! which is what differentiation ([`crate::diff`]) needs.

use crate::expr::{Expr, ExprKind, Name, Prim};
use crate::types::Type;
use crate::Program;
use diagnostics::{Diagnostic, Span};

/// Type-checks a program; returns the type of its body.
pub fn check_program(p: &Program) -> Result<Type, Diagnostic> {
    elaborate(p).map(|(_, t)| t)
}

/// Infers the type of `e` where the free variables have the given types.
pub fn infer_expr(env: &[(Name, Type)], e: &Expr) -> Result<Type, Diagnostic> {
    let mut inf = Infer::default();
    let mut scope: Vec<(Name, Ty)> = env.iter().map(|(x, t)| (x.clone(), Ty::from(t))).collect();
    let t = inf.infer(&mut scope, e)?;
    Ok(inf.finish(&t))
}

/// The type of `e` where the variables of `env` have the given types, if the
/// term determines it: free variables not in `env` (bound outside `e`) get
/// unknown types, and the answer is `None` when `e` is ill-typed or its type
/// still has an unknown part (no defaulting: `x - x` with `x` unknown may be
/// an `Index` or a `Double`). What rules use to learn the type of a sub-term.
pub fn infer_determined(env: &[(Name, Type)], e: &Expr) -> Option<Type> {
    let mut inf = Infer::default();
    let mut scope: Vec<(Name, Ty)> = env.iter().map(|(x, t)| (x.clone(), Ty::from(t))).collect();
    for x in e.free_vars() {
        if !env.iter().any(|(y, _)| y == x) {
            let t = inf.fresh();
            scope.push((x.clone(), t));
        }
    }
    let t = inf.infer(&mut scope, e).ok()?;
    to_type(&inf.zonk(&t))
}

fn to_type(t: &Ty) -> Option<Type> {
    Some(match t {
        Ty::Var(_) => return None,
        Ty::Double => Type::Double,
        Ty::Index => Type::Index,
        Ty::Bool => Type::Bool,
        Ty::Array(a) => Type::array(to_type(a)?),
        Ty::Pair(a, b) => Type::pair(to_type(a)?, to_type(b)?),
        Ty::Fun(a, b) => Type::fun(to_type(a)?, to_type(b)?),
    })
}

/// Type-checks a program and returns it with every lambda parameter annotated
/// with its type, together with the type of the body.
pub fn elaborate(p: &Program) -> Result<(Program, Type), Diagnostic> {
    let mut inf = Infer::default();
    let mut scope: Vec<(Name, Ty)> = p
        .inputs
        .iter()
        .map(|i| (i.name.clone(), Ty::from(&i.ty)))
        .collect();
    let t = inf.infer(&mut scope, &p.body)?;
    let t = inf.finish(&t);
    let mut k = 0;
    let body = inf.annotate(&p.body, &mut k);
    Ok((
        Program {
            inputs: p.inputs.clone(),
            body,
        },
        t,
    ))
}

/// Types during inference, with unification variables.
#[derive(Clone, Debug, PartialEq)]
enum Ty {
    Var(usize),
    Double,
    Index,
    Bool,
    Array(Box<Ty>),
    Pair(Box<Ty>, Box<Ty>),
    Fun(Box<Ty>, Box<Ty>),
}

impl From<&Type> for Ty {
    fn from(t: &Type) -> Ty {
        match t {
            Type::Double => Ty::Double,
            Type::Index => Ty::Index,
            Type::Bool => Ty::Bool,
            Type::Array(a) => Ty::Array(Box::new(Ty::from(&**a))),
            Type::Pair(a, b) => Ty::Pair(Box::new(Ty::from(&**a)), Box::new(Ty::from(&**b))),
            Type::Fun(a, b) => Ty::Fun(Box::new(Ty::from(&**a)), Box::new(Ty::from(&**b))),
        }
    }
}

fn arr(t: Ty) -> Ty {
    Ty::Array(Box::new(t))
}
fn fun(a: Ty, b: Ty) -> Ty {
    Ty::Fun(Box::new(a), Box::new(b))
}

#[derive(Default)]
struct Infer {
    /// The binding of each variable, if any.
    bound: Vec<Option<Ty>>,
    /// Whether each variable must be a number.
    numeric: Vec<bool>,
    /// The types of lambda parameters, in the order the lambdas are met.
    params: Vec<Ty>,
}

impl Infer {
    fn fresh(&mut self) -> Ty {
        self.bound.push(None);
        self.numeric.push(false);
        Ty::Var(self.bound.len() - 1)
    }

    fn resolve(&self, t: &Ty) -> Ty {
        let mut t = t.clone();
        while let Ty::Var(v) = t {
            match &self.bound[v] {
                Some(b) => t = b.clone(),
                None => return t,
            }
        }
        t
    }

    /// The type with all bound variables replaced (for messages).
    fn zonk(&self, t: &Ty) -> Ty {
        match self.resolve(t) {
            Ty::Array(a) => arr(self.zonk(&a)),
            Ty::Pair(a, b) => Ty::Pair(Box::new(self.zonk(&a)), Box::new(self.zonk(&b))),
            Ty::Fun(a, b) => fun(self.zonk(&a), self.zonk(&b)),
            t => t,
        }
    }

    fn show(&self, t: &Ty) -> String {
        fn go(inf: &Infer, t: &Ty, out: &mut String) {
            match t {
                Ty::Var(v) if inf.numeric[*v] => out.push_str("a number"),
                Ty::Var(v) => out.push_str(&format!("'t{v}")),
                Ty::Double => out.push_str("Double"),
                Ty::Index => out.push_str("Index"),
                Ty::Bool => out.push_str("Bool"),
                Ty::Array(a) => {
                    out.push_str("Array<");
                    go(inf, a, out);
                    out.push('>');
                }
                Ty::Pair(a, b) => {
                    out.push('(');
                    go(inf, a, out);
                    out.push_str(", ");
                    go(inf, b, out);
                    out.push(')');
                }
                Ty::Fun(a, b) => {
                    let paren = matches!(**a, Ty::Fun(..));
                    if paren {
                        out.push('(');
                    }
                    go(inf, a, out);
                    if paren {
                        out.push(')');
                    }
                    out.push_str(" => ");
                    go(inf, b, out);
                }
            }
        }
        let mut s = String::new();
        go(self, &self.zonk(t), &mut s);
        s
    }

    fn occurs(&self, v: usize, t: &Ty) -> bool {
        match self.resolve(t) {
            Ty::Var(w) => v == w,
            Ty::Array(a) => self.occurs(v, &a),
            Ty::Pair(a, b) | Ty::Fun(a, b) => self.occurs(v, &a) || self.occurs(v, &b),
            _ => false,
        }
    }

    fn unify(&mut self, a: &Ty, b: &Ty) -> bool {
        let (a, b) = (self.resolve(a), self.resolve(b));
        match (&a, &b) {
            (Ty::Var(v), Ty::Var(w)) if v == w => true,
            (Ty::Var(v), t) | (t, Ty::Var(v)) => {
                if self.occurs(*v, t) {
                    return false;
                }
                if self.numeric[*v] {
                    match t {
                        Ty::Var(w) => self.numeric[*w] = true,
                        Ty::Double | Ty::Index => {}
                        _ => return false,
                    }
                }
                self.bound[*v] = Some(t.clone());
                true
            }
            (Ty::Double, Ty::Double) | (Ty::Index, Ty::Index) | (Ty::Bool, Ty::Bool) => true,
            (Ty::Array(x), Ty::Array(y)) => self.unify(x, y),
            (Ty::Pair(x1, x2), Ty::Pair(y1, y2)) | (Ty::Fun(x1, x2), Ty::Fun(y1, y2)) => {
                self.unify(x1, y1) && self.unify(x2, y2)
            }
            _ => false,
        }
    }

    /// Requires `found` (the type of the term at `span`) to be `expected`.
    fn expect(
        &mut self,
        expected: &Ty,
        found: &Ty,
        span: Span,
        what: &str,
    ) -> Result<(), Diagnostic> {
        if self.unify(expected, found) {
            return Ok(());
        }
        Err(Diagnostic::new(
            span,
            format!(
                "type mismatch: {what} should have type `{}`, but it has type `{}`",
                self.show(expected),
                self.show(found)
            ),
        ))
    }

    fn expect_numeric(&mut self, t: &Ty, span: Span, what: &str) -> Result<(), Diagnostic> {
        match self.resolve(t) {
            Ty::Var(v) => {
                self.numeric[v] = true;
                Ok(())
            }
            Ty::Double | Ty::Index => Ok(()),
            other => Err(Diagnostic::new(
                span,
                format!(
                    "type mismatch: {what} should be a number (`Double` or `Index`), but it has type `{}`",
                    self.show(&other)
                ),
            )),
        }
    }

    fn infer(&mut self, scope: &mut Vec<(Name, Ty)>, e: &Expr) -> Result<Ty, Diagnostic> {
        use ExprKind::*;
        match e.kind() {
            Var(x) => match scope.iter().rev().find(|(y, _)| y == x) {
                Some((_, t)) => Ok(t.clone()),
                None => Err(Diagnostic::new(e.span(), format!("unbound variable `{x}`"))
                    .with_note("declare the program's inputs with `input NAME : TYPE`")),
            },
            Double(_) => Ok(Ty::Double),
            Index(_) => Ok(Ty::Index),
            Bool(_) => Ok(Ty::Bool),
            Lam(x, ann, b) => {
                let t = match ann {
                    Some(t) => Ty::from(t),
                    None => self.fresh(),
                };
                self.params.push(t.clone());
                scope.push((x.clone(), t.clone()));
                let r = self.infer(scope, b);
                scope.pop();
                Ok(fun(t, r?))
            }
            App(f, a) => {
                let tf = self.infer(scope, f)?;
                let ta = self.infer(scope, a)?;
                match self.resolve(&tf) {
                    Ty::Fun(p, r) => {
                        self.expect(&p, &ta, a.span(), "the argument")?;
                        Ok(*r)
                    }
                    Ty::Var(_) => {
                        let r = self.fresh();
                        self.expect(&tf, &fun(ta, r.clone()), f.span(), "the function")?;
                        Ok(r)
                    }
                    other => Err(Diagnostic::new(
                        f.span(),
                        format!(
                            "this is applied to an argument but is not a function: it has type `{}`",
                            self.show(&other)
                        ),
                    )),
                }
            }
            Let(x, e0, e1) => {
                let t0 = self.infer(scope, e0)?;
                scope.push((x.clone(), t0));
                let r = self.infer(scope, e1);
                scope.pop();
                r
            }
            If(c, a, b) => {
                let tc = self.infer(scope, c)?;
                self.expect(&Ty::Bool, &tc, c.span(), "the condition")?;
                let ta = self.infer(scope, a)?;
                let tb = self.infer(scope, b)?;
                self.expect(&ta, &tb, b.span(), "the `else` branch")?;
                Ok(ta)
            }
            Prim(op, args) => self.infer_prim(scope, *op, args),
        }
    }

    fn infer_prim(
        &mut self,
        scope: &mut Vec<(Name, Ty)>,
        op: Prim,
        args: &[Expr],
    ) -> Result<Ty, Diagnostic> {
        let mut ts = Vec::with_capacity(args.len());
        for a in args {
            ts.push(self.infer(scope, a)?);
        }
        let sp = |i: usize| args[i].span();
        let name = op.name();
        match op {
            Prim::Build => {
                self.expect(&Ty::Index, &ts[0], sp(0), "the size of `build`")?;
                let elem = self.fresh();
                self.expect(
                    &fun(Ty::Index, elem.clone()),
                    &ts[1],
                    sp(1),
                    "the generator of `build`",
                )?;
                Ok(arr(elem))
            }
            Prim::Get => {
                let elem = self.fresh();
                self.expect(&arr(elem.clone()), &ts[0], sp(0), "the indexed value")?;
                self.expect(&Ty::Index, &ts[1], sp(1), "the index")?;
                Ok(elem)
            }
            Prim::Length => {
                let elem = self.fresh();
                self.expect(&arr(elem), &ts[0], sp(0), "the argument of `length`")?;
                Ok(Ty::Index)
            }
            Prim::IFold => {
                let acc = ts[1].clone();
                self.expect(
                    &fun(acc.clone(), fun(Ty::Index, acc.clone())),
                    &ts[0],
                    sp(0),
                    "the step function of `ifold`",
                )?;
                self.expect(&Ty::Index, &ts[2], sp(2), "the iteration count of `ifold`")?;
                Ok(acc)
            }
            Prim::Pair => Ok(Ty::Pair(Box::new(ts[0].clone()), Box::new(ts[1].clone()))),
            Prim::Fst | Prim::Snd => {
                let (a, b) = (self.fresh(), self.fresh());
                let what = format!("the argument of `{name}`");
                self.expect(
                    &Ty::Pair(Box::new(a.clone()), Box::new(b.clone())),
                    &ts[0],
                    sp(0),
                    &what,
                )?;
                Ok(if op == Prim::Fst { a } else { b })
            }
            Prim::Add | Prim::Sub | Prim::Mul | Prim::Div => {
                self.expect_numeric(&ts[0], sp(0), &format!("the left operand of `{name}`"))?;
                self.expect(
                    &ts[0],
                    &ts[1],
                    sp(1),
                    &format!("the right operand of `{name}`"),
                )?;
                Ok(ts[0].clone())
            }
            Prim::Neg => {
                self.expect_numeric(&ts[0], sp(0), "the operand of `-`")?;
                Ok(ts[0].clone())
            }
            op if op.is_comparison() => {
                self.expect_numeric(&ts[0], sp(0), &format!("the left operand of `{name}`"))?;
                self.expect(
                    &ts[0],
                    &ts[1],
                    sp(1),
                    &format!("the right operand of `{name}`"),
                )?;
                Ok(Ty::Bool)
            }
            Prim::And | Prim::Or => {
                let what = format!("the operands of `{name}`");
                self.expect(&Ty::Bool, &ts[0], sp(0), &what)?;
                self.expect(&Ty::Bool, &ts[1], sp(1), &what)?;
                Ok(Ty::Bool)
            }
            Prim::Not => {
                self.expect(&Ty::Bool, &ts[0], sp(0), "the operand of `!`")?;
                Ok(Ty::Bool)
            }
            Prim::ToDouble => {
                self.expect(&Ty::Index, &ts[0], sp(0), "the argument of `toDouble`")?;
                Ok(Ty::Double)
            }
            Prim::Deriv | Prim::Grad | Prim::Jacob => {
                // deriv: (Double => T) -> Double -> T; grad: (Vector => Double)
                // -> Vector -> Vector; jacob: (Vector => Vector) -> Vector -> Matrix.
                let vector = || arr(Ty::Double);
                let (point, out, result) = match op {
                    Prim::Deriv => {
                        let t = self.fresh();
                        (Ty::Double, t.clone(), t)
                    }
                    Prim::Grad => (vector(), Ty::Double, vector()),
                    _ => (vector(), vector(), arr(vector())),
                };
                self.expect(
                    &fun(point.clone(), out),
                    &ts[0],
                    sp(0),
                    &format!("the function of `{name}`"),
                )?;
                self.expect(&point, &ts[1], sp(1), &format!("the point of `{name}`"))?;
                Ok(result)
            }
            _ => {
                // sin, cos, exp, log, sqrt
                self.expect(
                    &Ty::Double,
                    &ts[0],
                    sp(0),
                    &format!("the argument of `{name}`"),
                )?;
                Ok(Ty::Double)
            }
        }
    }

    /// The final type: unbound variables default to `Double`.
    fn finish(&self, t: &Ty) -> Type {
        match self.resolve(t) {
            Ty::Var(_) | Ty::Double => Type::Double,
            Ty::Index => Type::Index,
            Ty::Bool => Type::Bool,
            Ty::Array(a) => Type::array(self.finish(&a)),
            Ty::Pair(a, b) => Type::pair(self.finish(&a), self.finish(&b)),
            Ty::Fun(a, b) => Type::fun(self.finish(&a), self.finish(&b)),
        }
    }

    /// `e` with the lambda parameters annotated, visiting lambdas in the order
    /// [`Infer::infer`] met them.
    fn annotate(&self, e: &Expr, k: &mut usize) -> Expr {
        use ExprKind::*;
        match e.kind() {
            Var(_) | Double(_) | Index(_) | Bool(_) => e.clone(),
            Lam(x, _, b) => {
                let t = self.finish(&self.params[*k]);
                *k += 1;
                let b = self.annotate(b, k);
                e.with_kind(Lam(x.clone(), Some(t), b))
            }
            App(f, a) => {
                let f = self.annotate(f, k);
                e.with_kind(App(f, self.annotate(a, k)))
            }
            Let(x, e0, e1) => {
                let e0 = self.annotate(e0, k);
                e.with_kind(Let(x.clone(), e0, self.annotate(e1, k)))
            }
            If(c, a, b) => {
                let c = self.annotate(c, k);
                let a = self.annotate(a, k);
                e.with_kind(If(c, a, self.annotate(b, k)))
            }
            Prim(op, args) => {
                let args = args.iter().map(|a| self.annotate(a, k)).collect();
                e.with_kind(Prim(*op, args))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse_program;

    fn ty(src: &str) -> Result<String, String> {
        let p = parse_program(src).map_err(|d| d.message)?;
        check_program(&p)
            .map(|t| t.to_string())
            .map_err(|d| d.message)
    }

    #[test]
    fn infers_lambda_parameters() {
        assert_eq!(
            ty("input M : Matrix\nbuild (length M[0]) (fun i -> build (length M) (fun j -> M[j][i]))"),
            Ok("Matrix".into())
        );
        assert_eq!(
            ty("input v : Vector\nifold (fun a i -> a + v[i]) 0.0 (length v)"),
            Ok("Double".into())
        );
        assert_eq!(ty("(fun x -> x + x) 2"), Ok("Index".into()));
        assert_eq!(ty("fun x -> x"), Ok("Double => Double".into()));
    }

    #[test]
    fn elaboration_annotates_every_lambda() {
        let p =
            parse_program("input v : Vector\nbuild (length v) (fun i -> (fun x -> x * 2.0) v[i])")
                .unwrap();
        let (e, _) = elaborate(&p).unwrap();
        assert_eq!(
            e.body.to_string(),
            "build (length v) (fun (i: Index) -> (fun (x: Double) -> x * 2.0) v[i])"
        );
    }

    #[test]
    fn reports_mismatches_with_spans() {
        let src = "input v : Vector\nv[1.0]";
        let p = parse_program(src).unwrap();
        let d = check_program(&p).unwrap_err();
        assert_eq!(&src[d.span.range()], "1.0");
        assert!(d.message.contains("`Index`"), "{}", d.message);
        assert!(ty("1 + 1.0").unwrap_err().contains("right operand of `+`"));
        assert!(ty("x").unwrap_err().contains("unbound variable `x`"));
        assert!(ty("true + true").unwrap_err().contains("number"));
        assert!(ty("(fun f -> f f) (fun x -> x)").is_err());
        assert!(ty("1 2").unwrap_err().contains("not a function"));
    }
}
