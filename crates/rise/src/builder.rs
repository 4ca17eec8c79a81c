//! A Rust DSL for building RISE terms (for rewrite rules, strategies and tests).
//!
//! Free functions build nodes (`map(f)`, `zip(a, b)`, `lit_f32(1.0)`); a
//! [`Builder`] owns the [`NameGen`] that gives lambdas fresh parameter names
//! (`b.fun(|b, x| ...)`); the [`BuildExt`] methods chain on any [`Expr`]
//! (`xs.pipe(map(f))` is `map f xs`).
//!
//! Conventions: array functions return the function, ready to be piped or
//! applied (`map(f)`, `split(32)`, `join()`, `reduce(op, init)`); scalar and pair
//! operations take their operands (`add(a, b)`, `fst(p)`, `zip(a, b)`).
//! Explicit type-level arguments become dependent applications
//! (`split(32)` is `DepApp(split, 32)`, the form the type checker produces from
//! the source `split 32`). Nodes carry no span and no type.
//!
//! ```
//! use rise::builder::*;
//! use rise::syntax::parse_expr;
//!
//! let mut b = Builder::new();
//! let dot = b.fun2(|b, xs, ys| {
//!     zip(xs, ys)
//!         .pipe(map(b.fun(|_, p| mul(fst(p.clone()), snd(p)))))
//!         .pipe(reduce(prim(Prim::Add), lit_f32(0.0)))
//! });
//! let parsed =
//!     parse_expr("fun xs ys => zip xs ys |> map (fun p => fst p * snd p) |> reduce add 0.0f").unwrap();
//! assert!(dot.alpha_eq(&parsed));
//! ```

pub use crate::expr::{Expr, ExprKind, Literal, NameGen};
pub use crate::primitives::Prim;
use crate::span::Span;
use crate::types::Name;
pub use crate::types::{AddrSpace, Binder, Kind, ScalarType, Type, TypeArg};
use arith::{Nat, Var};

/// Makes lambdas with fresh parameter names.
#[derive(Clone, Debug, Default)]
pub struct Builder {
    names: NameGen,
}

impl Builder {
    /// A builder with a new name generator.
    pub fn new() -> Builder {
        Builder::default()
    }

    /// A builder continuing from a name generator (to avoid names used elsewhere).
    pub fn with_names(names: NameGen) -> Builder {
        Builder { names }
    }

    /// The name generator, to continue with it elsewhere.
    pub fn into_names(self) -> NameGen {
        self.names
    }

    /// A fresh name `base_N`.
    pub fn fresh(&mut self, base: &str) -> Name {
        self.names.fresh(base)
    }

    /// `fun x => body(x)` with a fresh `x`.
    pub fn fun(&mut self, body: impl FnOnce(&mut Builder, Expr) -> Expr) -> Expr {
        self.fun_named("x", body)
    }

    /// `fun x => body(x)` with a fresh name based on `base`.
    pub fn fun_named(&mut self, base: &str, body: impl FnOnce(&mut Builder, Expr) -> Expr) -> Expr {
        let x = self.fresh(base);
        let b = body(self, var(&x));
        node(ExprKind::Lambda(x, None, b))
    }

    /// `fun (x: t) => body(x)` with a fresh `x`.
    pub fn fun_typed(&mut self, t: Type, body: impl FnOnce(&mut Builder, Expr) -> Expr) -> Expr {
        let x = self.fresh("x");
        let b = body(self, var(&x));
        node(ExprKind::Lambda(x, Some(t), b))
    }

    /// `fun x y => body(x, y)` with fresh names.
    pub fn fun2(&mut self, body: impl FnOnce(&mut Builder, Expr, Expr) -> Expr) -> Expr {
        self.fun(|b, x| b.fun(|b, y| body(b, x, y)))
    }

    /// `fun x y z => body(x, y, z)` with fresh names.
    pub fn fun3(&mut self, body: impl FnOnce(&mut Builder, Expr, Expr, Expr) -> Expr) -> Expr {
        self.fun(|b, x| b.fun(|b, y| b.fun(|b, z| body(b, x, y, z))))
    }

    /// `fun (n: kind) => body(n)` with a fresh `n`; `body` gets the variable as a type-level value.
    pub fn dep_fun(
        &mut self,
        kind: Kind,
        body: impl FnOnce(&mut Builder, TypeArg) -> Expr,
    ) -> Expr {
        let n = self.fresh("n");
        let b = body(self, TypeArg::var(&n, kind));
        node(ExprKind::DepLambda(Binder::new(n, kind), b))
    }

    /// `fun (n: nat) => body(n)` with a fresh `n`.
    pub fn nat_fun(&mut self, body: impl FnOnce(&mut Builder, Nat) -> Expr) -> Expr {
        let n = self.fresh("n");
        let b = body(self, Nat::var(&Var::new(n.clone())));
        node(ExprKind::DepLambda(Binder::new(n, Kind::Nat), b))
    }

    /// Forward composition `f >> g`: `fun x => g (f x)`.
    pub fn compose(&mut self, f: Expr, g: Expr) -> Expr {
        self.fun(|_, x| app(g, app(f, x)))
    }
}

fn node(kind: ExprKind) -> Expr {
    Expr::new(kind, Span::default())
}

// ---- nodes --------------------------------------------------------------------

/// A variable.
pub fn var(name: &str) -> Expr {
    node(ExprKind::Var(name.into()))
}

/// A primitive.
pub fn prim(p: Prim) -> Expr {
    node(ExprKind::Prim(p))
}

/// A literal.
pub fn lit(l: Literal) -> Expr {
    node(ExprKind::Lit(l))
}

/// `true` or `false`.
pub fn lit_bool(b: bool) -> Expr {
    lit(Literal::Bool(b))
}

/// An `int` literal.
pub fn lit_int(v: i64) -> Expr {
    lit(Literal::Int(v, ScalarType::Int))
}

/// An `f32` literal.
pub fn lit_f32(v: f32) -> Expr {
    lit(Literal::Float(f64::from(v), ScalarType::F32))
}

/// An `f64` literal.
pub fn lit_f64(v: f64) -> Expr {
    lit(Literal::Float(v, ScalarType::F64))
}

/// A `natType` literal.
pub fn lit_nat(n: impl Into<Nat>) -> Expr {
    lit(Literal::Nat(n.into()))
}

/// `f a`
pub fn app(f: Expr, a: Expr) -> Expr {
    node(ExprKind::App(f, a))
}

/// `f a b`
pub fn app2(f: Expr, a: Expr, b: Expr) -> Expr {
    app(app(f, a), b)
}

/// `f a1 ... an`
pub fn apps(f: Expr, args: impl IntoIterator<Item = Expr>) -> Expr {
    args.into_iter().fold(f, app)
}

/// `fun x => body` with a given name (prefer [`Builder::fun`]).
pub fn lambda(x: &str, body: Expr) -> Expr {
    node(ExprKind::Lambda(x.into(), None, body))
}

/// Application to a type-level value.
pub fn dep_app(e: Expr, arg: TypeArg) -> Expr {
    node(ExprKind::DepApp(e, arg))
}

/// Application to a natural number (`split 32`).
pub fn dep_app_nat(e: Expr, n: impl Into<Nat>) -> Expr {
    dep_app(e, TypeArg::Nat(n.into()))
}

/// `(e : t)`
pub fn annot(e: Expr, t: Type) -> Expr {
    node(ExprKind::Annot(e, t))
}

// ---- primitives -----------------------------------------------------------------

/// `map f`
pub fn map(f: Expr) -> Expr {
    app(prim(Prim::Map), f)
}

/// `mapSeq f`
pub fn map_seq(f: Expr) -> Expr {
    app(prim(Prim::MapSeq), f)
}

/// `p f` for any map variant `p` (`mapPar`, `mapGlobal(0)`, ...).
pub fn map_with(p: Prim, f: Expr) -> Expr {
    app(prim(p), f)
}

/// `reduce op init`
pub fn reduce(op: Expr, init: Expr) -> Expr {
    app2(prim(Prim::Reduce), op, init)
}

/// `reduceSeq op init`
pub fn reduce_seq(op: Expr, init: Expr) -> Expr {
    app2(prim(Prim::ReduceSeq), op, init)
}

/// `split n`
pub fn split(n: impl Into<Nat>) -> Expr {
    dep_app_nat(prim(Prim::Split), n)
}

/// `join`
pub fn join() -> Expr {
    prim(Prim::Join)
}

/// `transpose`
pub fn transpose() -> Expr {
    prim(Prim::Transpose)
}

/// `slide sz sp`
pub fn slide(sz: impl Into<Nat>, sp: impl Into<Nat>) -> Expr {
    dep_app_nat(dep_app_nat(prim(Prim::Slide), sz), sp)
}

/// `padClamp l r`
pub fn pad_clamp(l: impl Into<Nat>, r: impl Into<Nat>) -> Expr {
    dep_app_nat(dep_app_nat(prim(Prim::PadClamp), l), r)
}

/// `padCst l r c`
pub fn pad_cst(l: impl Into<Nat>, r: impl Into<Nat>, c: Expr) -> Expr {
    app(dep_app_nat(dep_app_nat(prim(Prim::PadCst), l), r), c)
}

/// `take n`
pub fn take(n: impl Into<Nat>) -> Expr {
    dep_app_nat(prim(Prim::Take), n)
}

/// `drop n` (named so as not to shadow `std::mem::drop` under a glob import).
pub fn drop_(n: impl Into<Nat>) -> Expr {
    dep_app_nat(prim(Prim::Drop), n)
}

/// `asVector n`
pub fn as_vector(n: impl Into<Nat>) -> Expr {
    dep_app_nat(prim(Prim::AsVector), n)
}

/// `asScalar`
pub fn as_scalar() -> Expr {
    prim(Prim::AsScalar)
}

/// `zip a b`
pub fn zip(a: Expr, b: Expr) -> Expr {
    app2(prim(Prim::Zip), a, b)
}

/// `unzip`
pub fn unzip() -> Expr {
    prim(Prim::Unzip)
}

/// `generate f`
pub fn generate(f: Expr) -> Expr {
    app(prim(Prim::Generate), f)
}

/// `idx i xs`
pub fn idx(i: Expr, xs: Expr) -> Expr {
    app2(prim(Prim::Idx), i, xs)
}

/// `(a, b)`
pub fn pair(a: Expr, b: Expr) -> Expr {
    app2(prim(Prim::MakePair), a, b)
}

/// `fst p`
pub fn fst(p: Expr) -> Expr {
    app(prim(Prim::Fst), p)
}

/// `snd p`
pub fn snd(p: Expr) -> Expr {
    app(prim(Prim::Snd), p)
}

/// `a + b`
pub fn add(a: Expr, b: Expr) -> Expr {
    app2(prim(Prim::Add), a, b)
}

/// `a - b`
pub fn sub(a: Expr, b: Expr) -> Expr {
    app2(prim(Prim::Sub), a, b)
}

/// `a * b`
pub fn mul(a: Expr, b: Expr) -> Expr {
    app2(prim(Prim::Mul), a, b)
}

/// `a / b`
pub fn div(a: Expr, b: Expr) -> Expr {
    app2(prim(Prim::Div), a, b)
}

/// `toMem a v f`: stores `v` in address space `a`, then continues with `f`.
pub fn to_mem(a: AddrSpace, v: Expr, f: Expr) -> Expr {
    app2(dep_app(prim(Prim::ToMem), TypeArg::AddrSpace(a)), v, f)
}

/// `let v f`
pub fn let_(v: Expr, f: Expr) -> Expr {
    app2(prim(Prim::Let), v, f)
}

/// Methods to chain on expressions.
pub trait BuildExt {
    /// `self |> f`, i.e. `f self`.
    fn pipe(self, f: Expr) -> Expr;
    /// `self a`
    fn app(self, a: Expr) -> Expr;
    /// `self a b`
    fn app2(self, a: Expr, b: Expr) -> Expr;
    /// `self n` for a natural number `n`.
    fn dep_nat(self, n: impl Into<Nat>) -> Expr;
    /// `(self : t)`
    fn annot(self, t: Type) -> Expr;
}

impl BuildExt for Expr {
    fn pipe(self, f: Expr) -> Expr {
        app(f, self)
    }
    fn app(self, a: Expr) -> Expr {
        app(self, a)
    }
    fn app2(self, a: Expr, b: Expr) -> Expr {
        app2(self, a, b)
    }
    fn dep_nat(self, n: impl Into<Nat>) -> Expr {
        dep_app_nat(self, n)
    }
    fn annot(self, t: Type) -> Expr {
        annot(self, t)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::syntax::{parse_expr, print_expr};

    fn parsed(src: &str) -> Expr {
        parse_expr(src).unwrap_or_else(|e| panic!("{src}: {e}"))
    }

    #[test]
    fn builds_dot() {
        let mut b = Builder::new();
        let dot = b.fun2(|b, xs, ys| {
            zip(xs, ys)
                .pipe(map(b.fun(|_, p| mul(fst(p.clone()), snd(p)))))
                .pipe(reduce(prim(Prim::Add), lit_f32(0.0)))
        });
        let src = "fun xs ys => zip xs ys |> map (fun p => fst p * snd p) |> reduce add 0.0f";
        assert!(dot.alpha_eq(&parsed(src)));
        assert_eq!(
            print_expr(&dot),
            "fun x_0 x_1 => zip x_0 x_1 |> map (fun x_2 => fst x_2 * snd x_2) |> reduce add 0.0f"
        );
    }

    #[test]
    fn fresh_names_do_not_clash() {
        let mut b = Builder::new();
        let e = b.fun(|b, x| b.fun(|_, y| app(x, y)));
        assert!(e.alpha_eq(&parsed("fun a b => a b")));
        assert!(!e.alpha_eq(&parsed("fun a b => b a")));
        let comp = b.compose(map(var("f")), join());
        assert!(comp.alpha_eq(&parsed("map f >>> join")));
    }

    #[test]
    fn dependent_arguments() {
        let mut b = Builder::new();
        let e = b.nat_fun(|_, n| {
            var("xs")
                .pipe(split(n.clone()))
                .pipe(map(var("f")))
                .pipe(join())
        });
        assert_eq!(
            print_expr(&e),
            "fun (n_0: nat) => xs |> split n_0 |> map f |> join"
        );
        let e = var("xs").pipe(slide(3, 1)).pipe(pad_clamp(1, 1));
        assert_eq!(print_expr(&e), "xs |> slide 3 1 |> padClamp 1 1");
        let e = to_mem(AddrSpace::Private, var("v"), lambda("x", var("x")));
        assert_eq!(print_expr(&e), "toMem private v (fun x => x)");
    }
}
