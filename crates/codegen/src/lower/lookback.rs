//! `scanLookback`'s tickets and look-back ([`dpia::LookBack`]), each the value of an
//! assignment, and the tile number every work-item reads ([`Comm::NatLet`]). The
//! look-back, for tile `j`, with `f` the scan's operator (`crate::lookback`'s helpers), by
//! one work-item (or by lane 0 of the first warp, on OpenCL):
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
//!
//! By the 32 lanes of the first warp on CUDA (Merrill and Garland's window), every lane
//! running every statement, so that the votes and shuffles see the whole warp (full masks):
//!
//! ```c
//! if (j == 0) {
//!   prefix = init;
//! } else {
//!   if (lane == 0) shine_publish_f32(&descriptors[j], 1u, aggregate);
//!   float before = neutral;                 // the tiles after the window
//!   index k = j - 32 + lane;                // this lane's predecessor in the window
//!   for (;;) {
//!     unsigned long long w = shine_await_window(descriptors, k);  // until no lane sees 0
//!     int from = shine_nearest_prefix(w);   // the highest lane holding a prefix, or -1
//!     prefix = lane >= from ? shine_value_f32(w) : neutral;
//!     other = __shfl_xor_sync(0xffffffffu, prefix, 16); prefix = f(other, prefix);
//!     ...                                   // 8, 4, 2, 1: every lane the window's fold
//!     other = prefix; prefix = before; before = f(other, prefix);
//!     if (from >= 0) break;
//!     k = k - 32;
//!   }
//!   prefix = before;
//! }
//! other = aggregate;
//! if (lane == 0) shine_publish_f32(&descriptors[j], 2u, f(other, prefix));
//! if (lane == 0) result = prefix;
//! ```
//!
//! The window's fold is a tree (the butterfly) where the walk is a chain: the operator is
//! associative and commutative (`singlePassScan` checks it), so every lane gets the same
//! value, and a float sum is regrouped as the tiles' sums already are.

use arith::{Nat, Var};
use dpia::{Acc, AccKind, Comm, Exp, ExpKind, LookBack, Shuffle};
use rise::DataType;

use super::views::Dest;
use super::{Env, Lowerer, Res};
use crate::ast::{self, BinOp, Expr, Scalar, Stmt, Type, UnOp};
use crate::ctypes::scalar_of;
use crate::error::{malformed, unsupported};
use crate::Target;

/// What both spellings of the look-back read and write, lowered.
struct Walk {
    /// The value type's helpers: publishing a descriptor, reading its value.
    publish: String,
    value_of: String,
    /// The tile's number.
    tile: Expr,
    /// `&descriptors[tile]`.
    own: Expr,
    /// The private scalars `prefix` and `other`, as places and as acceptors.
    prefix: Acc,
    other: Acc,
    prefix_lv: Expr,
    other_lv: Expr,
    /// `f other prefix`.
    fold: Expr,
    /// The tile's aggregate.
    aggregate: Expr,
    /// Tile 0's statements: `prefix = init`.
    first: Vec<Stmt>,
}

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
                let lane = self.value(env, &l.lane, &[])?;
                let lane_0 = || Expr::binary(BinOp::Eq, lane.clone(), Expr::Int(0));
                let walk = self.walk(env, l, &exp.ty)?;
                match l.lanes {
                    1 => {
                        let result = self.look_back(env, l, walk, out)?;
                        out.push(Stmt::Assign(target, result));
                    }
                    LookBack::WARP if self.target == Target::Cuda => {
                        let result = self.warp_look_back(env, l, walk, &lane, out)?;
                        out.push(Stmt::If(
                            lane_0(),
                            vec![Stmt::Assign(target, result)],
                            Vec::new(),
                        ));
                    }
                    LookBack::WARP => {
                        let mut by_lane_0 = Vec::new();
                        let result = self.look_back(env, l, walk, &mut by_lane_0)?;
                        by_lane_0.push(Stmt::Assign(target, result));
                        out.push(Stmt::If(lane_0(), by_lane_0, Vec::new()));
                    }
                    n => return malformed(format!("a look-back by {n} lanes")),
                }
                Ok(())
            }
            _ => malformed("a look-back assignment of another expression"),
        }
    }

    /// The parts of `l` both spellings share.
    fn walk(&mut self, env: &Env, l: &LookBack, ty: &DataType) -> Res<Walk> {
        let scalar = scalar_of(ty)?;
        let Some((publish, value_of)) = scalar.and_then(|s| self.lookback.value_helpers(s)) else {
            return unsupported(format!(
                "`scanLookback` over values of type {}: a descriptor holds a 32-bit value",
                crate::layout::show_type(ty)
            ));
        };
        let tile = self.value(env, &l.tile, &[])?;
        let tile_nat = nat_of_tile(env, &l.tile)?;
        let own = self.lookback_descriptor(env, l, tile_nat)?;
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
        Ok(Walk {
            publish,
            value_of,
            tile,
            own,
            prefix,
            other,
            prefix_lv,
            other_lv,
            fold: self.value(env, &l.fold, &[])?,
            aggregate: self.value(env, &l.aggregate, &[])?,
            first,
        })
    }

    /// `&descriptors[at]`.
    fn lookback_descriptor(&mut self, env: &Env, l: &LookBack, at: Nat) -> Res<Expr> {
        let elem = Exp::new(
            ExpKind::Idx(l.descriptors.clone(), at),
            DataType::Scalar(rise::ScalarType::U64),
        );
        self.address(env, &elem)
    }

    /// The statements of one work-item's look-back (module docs); the expression of its
    /// result.
    fn look_back(&mut self, env: &Env, l: &LookBack, p: Walk, out: &mut Vec<Stmt>) -> Res<Expr> {
        let DataType::Array(count, _) = &l.descriptors.ty else {
            return malformed("look-back descriptors that are no array");
        };
        // the predecessor looked at: a variable of the descriptors' range
        let k = self.names.fresh("k");
        let k_var = Var::with_range("lookback_k", Nat::cst(0), count.clone());
        let k_env = self.loop_scope(env, &k_var, count, &k);
        let mut walk = Vec::new();
        let w = self.names.fresh("w");
        let before = self.lookback_descriptor(&k_env, l, Nat::var(&k_var))?;
        walk.push(declare(
            Scalar::U64,
            &w,
            Expr::call(self.lookback.await_helper(), vec![before]),
        ));
        walk.push(Stmt::Assign(
            p.other_lv.clone(),
            Expr::call(&p.value_of, vec![Expr::Ident(w.clone())]),
        ));
        walk.push(Stmt::Assign(p.prefix_lv.clone(), p.fold.clone()));
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
            &p.publish,
            vec![p.own.clone(), Expr::Int(1), p.aggregate.clone()],
        ))];
        self.comm(
            env,
            &Comm::Assign(p.prefix.clone(), l.neutral.clone()),
            &mut later,
        )?;
        later.push(declare(
            Scalar::Index,
            &k,
            Expr::binary(BinOp::Sub, p.tile.clone(), Expr::Int(1)),
        ));
        later.push(Stmt::Loop(walk));

        out.push(Stmt::Comment(
            "scanLookback: this tile's exclusive prefix, by decoupled look-back".to_string(),
        ));
        out.push(Stmt::If(
            Expr::binary(BinOp::Eq, p.tile.clone(), Expr::Int(0)),
            p.first,
            later,
        ));
        self.comm(env, &Comm::Assign(p.other, l.aggregate.clone()), out)?;
        out.push(Stmt::Expr(Expr::call(
            &p.publish,
            vec![p.own, Expr::Int(2), p.fold],
        )));
        Ok(p.prefix_lv)
    }

    /// The statements of the first warp's look-back on CUDA (module docs), run by every
    /// lane; the expression of its result (the same in every lane).
    fn warp_look_back(
        &mut self,
        env: &Env,
        l: &LookBack,
        p: Walk,
        lane: &Expr,
        out: &mut Vec<Stmt>,
    ) -> Res<Expr> {
        let Some(elem) = scalar_of(&l.prefix.ty)? else {
            return malformed("a look-back's prefix that is no scalar");
        };
        let warp = i64::from(LookBack::WARP);
        let by_lane_0 = |s: Stmt| {
            Stmt::If(
                Expr::binary(BinOp::Eq, lane.clone(), Expr::Int(0)),
                vec![s],
                Vec::new(),
            )
        };
        let (k, w, from, before) = (
            self.names.fresh("k"),
            self.names.fresh("w"),
            self.names.fresh("from"),
            self.names.fresh("before"),
        );
        let neutral = self.value(env, &l.neutral, &[])?;
        let descriptors = self.lookback_descriptor(env, l, Nat::cst(0))?;
        let (prefix, other) = (p.prefix_lv.clone(), p.other_lv.clone());
        let (prefix_is, other_is) = (
            |e: Expr| Stmt::Assign(prefix.clone(), e),
            |e: Expr| Stmt::Assign(other.clone(), e),
        );

        let mut window = vec![
            declare(
                Scalar::U64,
                &w,
                Expr::call(
                    self.lookback.await_window_helper(),
                    vec![descriptors, Expr::Ident(k.clone())],
                ),
            ),
            declare(
                Scalar::I32,
                &from,
                Expr::call(
                    self.lookback.nearest_prefix_helper(),
                    vec![Expr::Ident(w.clone())],
                ),
            ),
            prefix_is(Expr::ternary(
                Expr::binary(BinOp::Ge, lane.clone(), Expr::Ident(from.clone())),
                Expr::call(&p.value_of, vec![Expr::Ident(w)]),
                neutral.clone(),
            )),
        ];
        let mut o = warp / 2;
        while o >= 1 {
            window.push(other_is(Expr::Shuffle(
                Box::new(prefix.clone()),
                Shuffle::Xor(o as u32),
            )));
            window.push(prefix_is(p.fold.clone()));
            o /= 2;
        }
        window.extend([
            other_is(prefix.clone()),
            prefix_is(Expr::Ident(before.clone())),
            Stmt::Assign(Expr::Ident(before.clone()), p.fold.clone()),
            Stmt::If(
                Expr::binary(BinOp::Ge, Expr::Ident(from), Expr::Int(0)),
                vec![Stmt::Break],
                Vec::new(),
            ),
            Stmt::Assign(
                Expr::Ident(k.clone()),
                Expr::binary(BinOp::Sub, Expr::Ident(k.clone()), Expr::Int(warp)),
            ),
        ]);

        let later = vec![
            by_lane_0(Stmt::Expr(Expr::call(
                &p.publish,
                vec![p.own.clone(), Expr::Int(1), p.aggregate.clone()],
            ))),
            declare(elem, &before, neutral),
            declare(
                Scalar::Index,
                &k,
                Expr::binary(
                    BinOp::Add,
                    Expr::binary(BinOp::Sub, p.tile.clone(), Expr::Int(warp)),
                    lane.clone(),
                ),
            ),
            Stmt::Loop(window),
            prefix_is(Expr::Ident(before)),
        ];
        out.push(Stmt::Comment(
            "scanLookback: this tile's exclusive prefix, by the first warp's decoupled look-back \
             over windows of 32 predecessors"
                .to_string(),
        ));
        out.push(Stmt::If(
            Expr::binary(BinOp::Eq, p.tile.clone(), Expr::Int(0)),
            p.first,
            later,
        ));
        self.comm(env, &Comm::Assign(p.other, l.aggregate.clone()), out)?;
        out.push(by_lane_0(Stmt::Expr(Expr::call(
            &p.publish,
            vec![p.own, Expr::Int(2), p.fold],
        ))));
        Ok(p.prefix_lv)
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

/// `ty name = init;`
fn declare(ty: Scalar, name: &str, init: Expr) -> Stmt {
    Stmt::Decl(ast::Decl {
        ty: Type::Scalar(ty),
        name: name.to_string(),
        array_len: None,
        init: Some(init),
        addr: ast::AddrSpace::Default,
        align: None,
    })
}

fn var_acc(id: &dpia::Ident) -> Acc {
    Acc::new(AccKind::Var(id.clone()), id.ty.clone())
}
