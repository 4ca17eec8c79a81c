//! `scanLookback`'s tickets and look-back ([`dpia::LookBack`]), each the value of an
//! assignment, and the tile number every work-item reads ([`Comm::NatLet`]). The
//! look-back, for tile `j`, with `f` the scan's operator (`crate::lookback`'s helpers):
//!
//! ```c
//! if (j == 0) {
//!   prefix = init;
//! } else {
//!   shine_publish_f32(&descriptors[j], 1u, aggregate);
//!   prefix = neutral;
//!   index k = j - 1;
//!   for (;;) {
//!     unsigned long long w = shine_await(&descriptors[k]);
//!     other = shine_value_f32(w);
//!     prefix = f(other, prefix);
//!     if (shine_is_prefix(w)) break;
//!     k = k - 1;
//!   }
//! }
//! other = aggregate;
//! shine_publish_f32(&descriptors[j], 2u, f(other, prefix));
//! result = prefix;
//! ```

use arith::{Nat, Var};
use dpia::{Acc, AccKind, Comm, Exp, ExpKind, LookBack};
use rise::DataType;

use super::views::Dest;
use super::{Env, Lowerer, Res};
use crate::ast::{self, BinOp, Expr, Scalar, Stmt, Type, UnOp};
use crate::ctypes::scalar_of;
use crate::error::{malformed, unsupported};

impl Lowerer {
    /// `acc := exp` where `exp` is a ticket or a look-back.
    pub(super) fn lookback_assign(
        &mut self,
        env: &Env,
        acc: &Acc,
        exp: &Exp,
        out: &mut Vec<Stmt>,
    ) -> Res<()> {
        if !self.gpu() {
            return unsupported(super::comm::SCAN_LOOKBACK_ON_A_CPU);
        }
        let target = self.lvalue(env, acc)?;
        match &*exp.kind {
            ExpKind::Ticket(counter) => {
                let counter = self.address(env, counter)?;
                let ticket = self.lookback.ticket();
                out.push(Stmt::Assign(target, Expr::call(ticket, vec![counter])));
                Ok(())
            }
            ExpKind::LookBack(l) => {
                let result = self.look_back(env, l, &exp.ty, out)?;
                out.push(Stmt::Assign(target, result));
                Ok(())
            }
            _ => malformed("a look-back assignment of another expression"),
        }
    }

    /// The statements of the look-back (module docs); the expression of its result.
    fn look_back(
        &mut self,
        env: &Env,
        l: &LookBack,
        ty: &DataType,
        out: &mut Vec<Stmt>,
    ) -> Res<Expr> {
        let scalar = scalar_of(ty)?;
        let Some((publish, value_of)) = scalar.and_then(|s| self.lookback.value_helpers(s)) else {
            return unsupported(format!(
                "`scanLookback` over values of type {}: a descriptor holds a 32-bit value",
                crate::layout::show_type(ty)
            ));
        };
        let DataType::Array(count, _) = &l.descriptors.ty else {
            return malformed("look-back descriptors that are no array");
        };
        let tile = self.value(env, &l.tile, &[])?;
        let slot = |me: &mut Lowerer, env: &Env, at: Nat| {
            let elem = Exp::new(
                ExpKind::Idx(l.descriptors.clone(), at),
                DataType::Scalar(rise::ScalarType::U64),
            );
            me.address(env, &elem)
        };
        let tile_nat = nat_of_tile(env, &l.tile)?;
        let own = slot(self, env, tile_nat.clone())?;
        let prefix = var_acc(&l.prefix);
        let other = var_acc(&l.other);
        let prefix_lv = self.lvalue(env, &prefix)?;
        let other_lv = self.lvalue(env, &other)?;

        let mut first = Vec::new();
        self.comm(
            env,
            &Comm::Assign(prefix.clone(), l.init.clone()),
            &mut first,
        )?;

        // the predecessor looked at: a variable of the descriptors' range
        let k = self.names.fresh("k");
        let k_var = Var::with_range("lookback_k", Nat::cst(0), count.clone());
        let k_env = self.loop_scope(env, &k_var, count, &k);
        let mut walk = Vec::new();
        let w = self.names.fresh("w");
        let before = slot(self, &k_env, Nat::var(&k_var))?;
        walk.push(Stmt::Decl(ast::Decl {
            ty: Type::Scalar(Scalar::U64),
            name: w.clone(),
            array_len: None,
            init: Some(Expr::call(self.lookback.await_helper(), vec![before])),
            addr: ast::AddrSpace::Default,
            align: None,
        }));
        walk.push(Stmt::Assign(
            other_lv.clone(),
            Expr::call(&value_of, vec![Expr::Ident(w.clone())]),
        ));
        let fold = self.value(env, &l.fold, &[])?;
        walk.push(Stmt::Assign(prefix_lv.clone(), fold.clone()));
        walk.push(Stmt::If(
            Expr::call(self.lookback.is_prefix_helper(), vec![Expr::Ident(w)]),
            vec![Stmt::Break],
            Vec::new(),
        ));
        walk.push(Stmt::Assign(
            Expr::Ident(k.clone()),
            Expr::binary(BinOp::Sub, Expr::Ident(k.clone()), Expr::Int(1)),
        ));

        let mut later = vec![Stmt::Expr(Expr::call(
            &publish,
            vec![
                own.clone(),
                Expr::Int(1),
                self.value(env, &l.aggregate, &[])?,
            ],
        ))];
        self.comm(
            env,
            &Comm::Assign(prefix.clone(), l.neutral.clone()),
            &mut later,
        )?;
        later.push(Stmt::Decl(ast::Decl {
            ty: Type::Scalar(Scalar::Index),
            name: k.clone(),
            array_len: None,
            init: Some(Expr::binary(BinOp::Sub, tile.clone(), Expr::Int(1))),
            addr: ast::AddrSpace::Default,
            align: None,
        }));
        later.push(Stmt::Loop(walk));

        out.push(Stmt::Comment(
            "scanLookback: this tile's exclusive prefix, by decoupled look-back".to_string(),
        ));
        out.push(Stmt::If(
            Expr::binary(BinOp::Eq, tile, Expr::Int(0)),
            first,
            later,
        ));
        self.comm(env, &Comm::Assign(other, l.aggregate.clone()), out)?;
        out.push(Stmt::Expr(Expr::call(
            &publish,
            vec![own, Expr::Int(2), fold],
        )));
        Ok(prefix_lv)
    }

    /// `body` with `var` the value `value` reads, declared as an index.
    pub(super) fn nat_let(
        &mut self,
        env: &Env,
        var: &Var,
        value: &Exp,
        body: &Comm,
        out: &mut Vec<Stmt>,
    ) -> Res<()> {
        let Some((_, hi)) = var.range() else {
            return malformed(format!(
                "the number `{}` is bound without a range",
                var.name()
            ));
        };
        let hi = env.nat(hi);
        let read = self.value(env, value, &[])?;
        let name = self.names.fresh(var.name());
        let inner = self.loop_scope(env, var, &hi, &name);
        out.push(Stmt::Decl(ast::Decl {
            ty: Type::Scalar(Scalar::Index),
            name,
            array_len: None,
            init: Some(read.cast(Type::Scalar(Scalar::Index))),
            addr: ast::AddrSpace::Default,
            align: None,
        }));
        self.comm(&inner, body, out)
    }

    /// The C lvalue `acc` writes (a scalar place of memory).
    fn lvalue(&mut self, env: &Env, acc: &Acc) -> Res<Expr> {
        match self.dest(env, acc, &[])? {
            Dest::Mem(p) => self.place_expr(env, &p),
            Dest::Vector { .. } => malformed("a look-back written as a vector"),
        }
    }

    /// `&e` for `e` reading one element of global memory.
    fn address(&mut self, env: &Env, e: &Exp) -> Res<Expr> {
        match self.value(env, e, &[])? {
            read @ Expr::Index(..) => Ok(Expr::unary(UnOp::AddrOf, read)),
            other => malformed(format!(
                "a look-back descriptor read as `{other:?}`, not as an element of memory"
            )),
        }
    }
}

/// The tile number as a natural number over the C names.
fn nat_of_tile(env: &Env, tile: &Exp) -> Res<Nat> {
    match &*tile.kind {
        ExpKind::Nat(n) => Ok(env.nat(n)),
        _ => malformed("a look-back's tile that is no natural number"),
    }
}

fn var_acc(id: &dpia::Ident) -> Acc {
    Acc::new(AccKind::Var(id.clone()), id.ty.clone())
}
