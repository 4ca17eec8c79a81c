//! Forward-mode automatic differentiation of F-smooth programs, producing
//! F-smooth programs (Shaikhha et al., ICFP 2019, §4): every `Double` becomes a
//! dual number, represented as the pair `(value, tangent)`.
//!
//! ```text
//! D⟦Double⟧ = (Double, Double)     D⟦Index⟧ = Index    D⟦Bool⟧ = Bool
//! D⟦Array<T>⟧ = Array<D⟦T⟧>        D⟦(T, U)⟧ = (D⟦T⟧, D⟦U⟧)   D⟦T => U⟧ = D⟦T⟧ => D⟦U⟧
//!
//! D⟦x⟧ = x        D⟦r⟧ = (r, 0.0)  (a Double literal)     D⟦n⟧ = n  (Index, Bool)
//! D⟦fun x -> e⟧ = fun x -> D⟦e⟧     D⟦e0 e1⟧ = D⟦e0⟧ D⟦e1⟧
//! D⟦let x = e0 in e1⟧ = let x = D⟦e0⟧ in D⟦e1⟧
//! D⟦if c then a else b⟧ = if D⟦c⟧ then D⟦a⟧ else D⟦b⟧
//! D⟦build n f⟧ = build n D⟦f⟧   D⟦a[i]⟧ = D⟦a⟧[i]   D⟦length a⟧ = length D⟦a⟧
//! D⟦ifold f z n⟧ = ifold D⟦f⟧ D⟦z⟧ n                   (pairs, fst, snd likewise)
//! D⟦a + b⟧ = let x = D⟦a⟧ in let y = D⟦b⟧ in (fst x + fst y, snd x + snd y)
//! D⟦a * b⟧ = let x = D⟦a⟧ in let y = D⟦b⟧ in (fst x * fst y, snd x * fst y + fst x * snd y)
//! D⟦a / b⟧ = ... (fst x / fst y, (snd x * fst y - fst x * snd y) / (fst y * fst y))
//! D⟦sin a⟧ = let x = D⟦a⟧ in (sin (fst x), snd x * cos (fst x))      (cos, exp, log, sqrt likewise)
//! D⟦a < b⟧ = fst D⟦a⟧ < fst D⟦b⟧   (on Doubles; Index arithmetic is unchanged)
//! ```
//!
//! The `let`s keep the differentiated program linear in the size of the
//! original; the simplification rules ([`crate::rules`]) then inline them and
//! project the pairs away. A variable operand is used directly, without a `let`.

use crate::check::elaborate;
use crate::expr::{Env, Expr, ExprKind, Name, Prim};
use crate::types::Type;
use crate::{Input, Program};
use diagnostics::Diagnostic;

/// Differentiates a program: its inputs become dual numbers (`D⟦T⟧`) and its
/// body computes `D⟦body⟧`. Given the inputs `x` paired with tangents `dx`, the
/// result pairs `f(x)` with the directional derivative `f'(x)·dx`.
pub fn diff_program(p: &Program) -> Result<Program, Diagnostic> {
    let p = crate::derivatives::expand_derivatives(p)?;
    let (typed, _) = elaborate(&p)?;
    let mut d = Differ {
        env: Env::default(),
        scope: typed
            .inputs
            .iter()
            .map(|i| (i.name.clone(), i.ty.clone()))
            .collect(),
    };
    let (body, _) = d.diff(&typed.body);
    Ok(Program {
        inputs: typed
            .inputs
            .iter()
            .map(|i| Input {
                name: i.name.clone(),
                ty: i.ty.dual(),
                span: i.span,
            })
            .collect(),
        body,
    })
}

/// The forward-mode transformation `D⟦·⟧` of elaborated terms (every lambda
/// annotated), free of differentiation constructs.
pub(crate) struct Differ {
    env: Env,
    /// The types (before differentiation) of the variables in scope.
    scope: Vec<(Name, Type)>,
}

impl Differ {
    /// A transformation for terms whose free variables have these types
    /// (their duals are what the free variables of `D⟦e⟧` refer to).
    pub(crate) fn new(scope: Vec<(Name, Type)>) -> Differ {
        Differ {
            env: Env::default(),
            scope,
        }
    }

    fn lookup(&self, x: &str) -> Type {
        self.scope
            .iter()
            .rev()
            .find(|(y, _)| y.as_ref() == x)
            .map(|(_, t)| t.clone())
            // Elaborated programs have no unbound variables.
            .unwrap_or(Type::Double)
    }

    /// `D⟦e⟧` and the type of `e` (not of `D⟦e⟧`).
    pub(crate) fn diff(&mut self, e: &Expr) -> (Expr, Type) {
        use ExprKind::*;
        match e.kind() {
            Var(x) => (e.clone(), self.lookup(x)),
            Double(_) => (
                e.with_kind(Prim(
                    crate::expr::Prim::Pair,
                    vec![e.clone(), Expr::double(0.0)],
                )),
                Type::Double,
            ),
            Index(_) => (e.clone(), Type::Index),
            Bool(_) => (e.clone(), Type::Bool),
            Lam(x, t, b) => {
                let t = t.clone().unwrap_or(Type::Double);
                self.scope.push((x.clone(), t.clone()));
                let (db, tb) = self.diff(b);
                self.scope.pop();
                (
                    e.with_kind(Lam(x.clone(), Some(t.dual()), db)),
                    Type::fun(t, tb),
                )
            }
            App(f, a) => {
                let (df, tf) = self.diff(f);
                let (da, _) = self.diff(a);
                let r = match tf {
                    Type::Fun(_, r) => *r,
                    other => other,
                };
                (e.with_kind(App(df, da)), r)
            }
            Let(x, e0, e1) => {
                let (d0, t0) = self.diff(e0);
                self.scope.push((x.clone(), t0));
                let (d1, t1) = self.diff(e1);
                self.scope.pop();
                (e.with_kind(Let(x.clone(), d0, d1)), t1)
            }
            If(c, a, b) => {
                let (dc, _) = self.diff(c);
                let (da, ta) = self.diff(a);
                let (db, _) = self.diff(b);
                (e.with_kind(If(dc, da, db)), ta)
            }
            Prim(op, args) => self.diff_prim(e, *op, args),
        }
    }

    fn diff_prim(&mut self, e: &Expr, op: Prim, args: &[Expr]) -> (Expr, Type) {
        let mut ds = Vec::with_capacity(args.len());
        let mut ts = Vec::with_capacity(args.len());
        for a in args {
            let (d, t) = self.diff(a);
            ds.push(d);
            ts.push(t);
        }
        let structural = |ty: Type| (e.with_kind(ExprKind::Prim(op, ds.clone())), ty);
        match op {
            Prim::Build => {
                let elem = match &ts[1] {
                    Type::Fun(_, r) => (**r).clone(),
                    _ => Type::Double,
                };
                structural(Type::array(elem))
            }
            Prim::Get => {
                let elem = match &ts[0] {
                    Type::Array(t) => (**t).clone(),
                    _ => Type::Double,
                };
                structural(elem)
            }
            Prim::Length => structural(Type::Index),
            // Never met: `diff_program` and `derivatives` expand the
            // constructs before differentiating.
            Prim::Deriv => structural(Type::Double),
            Prim::Grad => structural(Type::vector()),
            Prim::Jacob => structural(Type::matrix()),
            Prim::IFold => structural(ts[1].clone()),
            Prim::Pair => structural(Type::pair(ts[0].clone(), ts[1].clone())),
            Prim::Fst | Prim::Snd => {
                let t = match &ts[0] {
                    Type::Pair(a, b) => (**if op == Prim::Fst { a } else { b }).clone(),
                    _ => Type::Double,
                };
                structural(t)
            }
            Prim::And | Prim::Or | Prim::Not => structural(Type::Bool),
            op if op.is_comparison() => {
                if ts[0] == Type::Double {
                    let d = Expr::bin(op, Expr::fst(ds[0].clone()), Expr::fst(ds[1].clone()));
                    (d, Type::Bool)
                } else {
                    structural(Type::Bool)
                }
            }
            op if op.is_arith() && ts[0] != Type::Double => structural(ts[0].clone()),
            Prim::ToDouble => (
                Expr::pair(e.with_kind(ExprKind::Prim(op, ds)), Expr::double(0.0)),
                Type::Double,
            ),
            Prim::Add | Prim::Sub | Prim::Mul | Prim::Div => {
                let (da, db) = (ds[0].clone(), ds[1].clone());
                let d = self.bind(da, &db, |this, x| {
                    this.bind(db.clone(), &Expr::boolean(true), |_, y| {
                        dual_binary(op, &x, &y)
                    })
                });
                (d, Type::Double)
            }
            _ => {
                // Neg and the scalar functions.
                let da = ds[0].clone();
                let d = self.bind(da, &Expr::boolean(true), |_, x| dual_unary(op, &x));
                (d, Type::Double)
            }
        }
    }

    /// `let x = value in body(x)` with a fresh `x` that `later` (a term evaluated
    /// inside the `let`) does not mention; a variable `value` is used directly.
    fn bind(
        &mut self,
        value: Expr,
        later: &Expr,
        body: impl FnOnce(&mut Self, Expr) -> Expr,
    ) -> Expr {
        if value.as_var().is_some() {
            return body(self, value);
        }
        let x = self.env.fresh("d", |n| later.has_free(n));
        let inner = body(self, Expr::var(x.clone()));
        Expr::let_(x, value, inner)
    }
}

/// The gradient of a program with a `Double` result with respect to its
/// input `wrt` (a `Vector`), as one program with the same inputs and a
/// `Vector` result, by forward mode: component `k` is the derivative in the
/// direction of the `k`-th unit vector,
/// `build (length wrt) (fun k -> snd (let x = (x, 0) ... in let wrt = (wrt, e_k) in D⟦body⟧))`.
/// Simplified, the unit tangents fold away (`foldConditional`): the gradient
/// of a dot product becomes the other vector, linear in its length.
pub fn gradient_program(p: &Program, wrt: &str) -> Result<Program, Diagnostic> {
    let p = &crate::derivatives::expand_derivatives(p)?;
    let (typed, ty) = elaborate(p)?;
    let at = p.body.span();
    if ty != Type::Double {
        return Err(Diagnostic::new(
            at,
            format!("a gradient needs a program with a `Double` result, not `{ty}`"),
        ));
    }
    let Some(input) = typed.inputs.iter().find(|i| i.name.as_ref() == wrt) else {
        return Err(Diagnostic::new(
            at,
            format!("the program has no input `{wrt}`"),
        ));
    };
    if input.ty != Type::vector() {
        return Err(Diagnostic::new(
            input.span,
            format!(
                "a gradient is taken with respect to a `Vector`, and `{wrt}` is a `{}`",
                input.ty
            ),
        ));
    }
    let mut env = Env::default();
    let taken = |n: &str| typed.inputs.iter().any(|i| i.name.as_ref() == n);
    let k = env.fresh("k", taken);
    let i = env.fresh("i", |n| taken(n) || n == k.as_ref());
    let (d, _) = Differ {
        env,
        scope: typed.scope(),
    }
    .diff(&typed.body);
    let mut body = d;
    for inp in typed.inputs.iter().rev() {
        let x = Expr::var(inp.name.clone());
        let dual = if inp.name.as_ref() == wrt {
            let unit = Expr::if_(
                Expr::bin(Prim::Eq, Expr::var(i.clone()), Expr::var(k.clone())),
                Expr::double(1.0),
                Expr::double(0.0),
            );
            let elem = Expr::pair(Expr::get(x.clone(), Expr::var(i.clone())), unit);
            Expr::build(
                Expr::length(x),
                Expr::lam(i.clone(), Some(Type::Index), elem),
            )
        } else {
            constant_dual(&x, &inp.ty, &i, 0).ok_or_else(|| {
                Diagnostic::new(
                    inp.span,
                    format!("input `{}` is a function: no gradient", inp.name),
                )
            })?
        };
        body = Expr::let_(inp.name.clone(), dual, body);
    }
    let grad = Expr::build(
        Expr::length(Expr::var(wrt)),
        Expr::lam(k, Some(Type::Index), Expr::snd(body)),
    );
    Ok(typed.with_body(grad))
}

/// `x : ty` as a dual with a zero tangent (`None` for functions); `i` names
/// the index of the `depth`-th nested array.
pub(crate) fn constant_dual(x: &Expr, ty: &Type, i: &Name, depth: usize) -> Option<Expr> {
    Some(match ty {
        Type::Double => Expr::pair(x.clone(), Expr::double(0.0)),
        Type::Index | Type::Bool => x.clone(),
        Type::Array(t) => {
            let mut j = format!("{i}_{depth}");
            while x.has_free(&j) {
                j.push('_');
            }
            let j: Name = j.into();
            let elem = constant_dual(&Expr::get(x.clone(), Expr::var(j.clone())), t, i, depth + 1)?;
            Expr::build(
                Expr::length(x.clone()),
                Expr::lam(j, Some(Type::Index), elem),
            )
        }
        Type::Pair(a, b) => Expr::pair(
            constant_dual(&fst(x), a, i, depth)?,
            constant_dual(&snd(x), b, i, depth)?,
        ),
        Type::Fun(..) => return None,
    })
}

fn fst(x: &Expr) -> Expr {
    Expr::fst(x.clone())
}
fn snd(x: &Expr) -> Expr {
    Expr::snd(x.clone())
}
fn add(a: Expr, b: Expr) -> Expr {
    Expr::bin(Prim::Add, a, b)
}
fn sub(a: Expr, b: Expr) -> Expr {
    Expr::bin(Prim::Sub, a, b)
}
fn mul(a: Expr, b: Expr) -> Expr {
    Expr::bin(Prim::Mul, a, b)
}
fn div(a: Expr, b: Expr) -> Expr {
    Expr::bin(Prim::Div, a, b)
}

/// The dual-number rule of a binary arithmetic operation on duals `x`, `y`.
fn dual_binary(op: Prim, x: &Expr, y: &Expr) -> Expr {
    let value = Expr::bin(op, fst(x), fst(y));
    let tangent = match op {
        Prim::Add => add(snd(x), snd(y)),
        Prim::Sub => sub(snd(x), snd(y)),
        Prim::Mul => add(mul(snd(x), fst(y)), mul(fst(x), snd(y))),
        _ => div(
            sub(mul(snd(x), fst(y)), mul(fst(x), snd(y))),
            mul(fst(y), fst(y)),
        ),
    };
    Expr::pair(value, tangent)
}

/// The dual-number rule of `-` and the scalar functions on the dual `x`.
fn dual_unary(op: Prim, x: &Expr) -> Expr {
    let value = Expr::un(op, fst(x));
    let tangent = match op {
        Prim::Neg => Expr::un(Prim::Neg, snd(x)),
        Prim::Sin => mul(snd(x), Expr::un(Prim::Cos, fst(x))),
        Prim::Cos => Expr::un(Prim::Neg, mul(snd(x), Expr::un(Prim::Sin, fst(x)))),
        Prim::Exp => mul(snd(x), Expr::un(Prim::Exp, fst(x))),
        Prim::Log => div(snd(x), fst(x)),
        _ => div(snd(x), mul(Expr::double(2.0), Expr::un(Prim::Sqrt, fst(x)))),
    };
    Expr::pair(value, tangent)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse_program;

    #[test]
    fn differentiates_products_with_lets() {
        let p = parse_program("input x : Double\ninput y : Double\nx * y + 1.0").unwrap();
        let d = diff_program(&p).unwrap();
        assert_eq!(
            d.to_string(),
            "input x : (Double, Double)\ninput y : (Double, Double)\n\
             let d1 = (fst x * fst y, snd x * fst y + fst x * snd y) in \
             let d2 = (1.0, 0.0) in (fst d1 + fst d2, snd d1 + snd d2)"
        );
        crate::check::check_program(&d).unwrap();
    }

    #[test]
    fn index_arithmetic_is_not_differentiated() {
        let p = parse_program("input v : Vector\nv[length v - 1] * 2.0").unwrap();
        let d = diff_program(&p).unwrap();
        assert_eq!(
            d.body.to_string(),
            "let d1 = v[length v - 1] in let d2 = (2.0, 0.0) in \
             (fst d1 * fst d2, snd d1 * fst d2 + fst d1 * snd d2)"
        );
    }
}
