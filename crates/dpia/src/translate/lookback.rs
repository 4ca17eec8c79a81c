//! `scanLookback w m f init e g xs`: a single-pass scan by decoupled look-back (Merrill
//! and Garland; [`LookBack`] gives the protocol).
//!
//! Two kernels. The first zeroes the tiles' descriptors and, after them, the counter the
//! work-groups take their tickets from (global memory, `⌈n/m⌉ + 1` words of `u64`: every
//! launch starts from zero). The second is a work-group loop of `⌈n/m⌉` iterations, each:
//!
//! 1. one work-item takes a ticket, the tile's number `j` (tiles are numbered in the
//!    order the work-groups start, so every tile before `j` belongs to a work-group that
//!    is running or done), which every work-item reads ([`Comm::NatLet`]);
//! 2. `g` scans tile `j` (the elements `j·m ..`, past `n` the neutral element `e`) in
//!    local memory: `g`'s own loops (`workGroupScanInLocal`'s copy in, reductions,
//!    Hillis-Steele steps and scans), so every element is read from global memory once.
//!    The scanned tile is read where `g` leaves it when `g` can be translated in
//!    continuation mode (its value a view of its local memory), otherwise `g` writes it
//!    to local memory of its own (`workGroupScan`'s copy out);
//! 3. the work-group's first warp (its 32 lanes, where it has 32 work-items; otherwise
//!    work-item 0) finds the tile's exclusive prefix by the look-back (its aggregate is
//!    the scanned tile's last element) and puts it in local memory (the code generator
//!    spells the warp's look-back with votes and shuffles on CUDA and leaves the walk to
//!    lane 0 on OpenCL: `codegen::lower::lookback`);
//! 4. the `w` work-items write `f s[i] prefix` to the output, work-item `l` the elements
//!    `l, l + w, ...` of the tile (coalesced), the last tile only below `n`: every element
//!    written once.
//!
//! The barriers between the steps are the barrier pass's (`crate::barriers`): the ticket
//! and the prefix are written by one work-item and read by all.

use super::*;
use rise::{Literal, ScalarType};

impl Translator {
    /// `scanLookback w m f init e g xs` (`nats` = `[w, m]`, `vals` = `[f, init, e, g, xs]`)
    /// written to `out`.
    pub(super) fn scan_lookback(
        &self,
        e: &Expr,
        nats: &[Nat],
        vals: &[Expr],
        env: &Env,
        out: Out,
    ) -> R<Comm> {
        let Out::Acc(out) = out else {
            return Err(TranslateError::at(
                e,
                "the result of `scanLookback` is read but not stored anywhere",
                Some("write it to memory first: `toMem global (...)`, e.g. with storeInMemory"),
            ));
        };
        let (w, m) = work_items_and_tile(e, nats)?;
        let (n, t) = array_dt(&data_type(e)?, e)?;
        check_descriptor_value(e, &t)?;
        let tiles = (n.clone() + Nat::cst(m - 1))
            .floor_div(&Nat::cst(m))
            .simplify();
        self.values(&vals[1..], env, &|data| {
            let [Value::Data(init), Value::Data(neutral), Value::Fun(g, genv), Value::Data(xs)] =
                &data[..]
            else {
                return Err(TranslateError::at(
                    e,
                    "scanLookback of unexpected arguments",
                    None,
                ));
            };
            let parts = Parts {
                f: &vals[0],
                env,
                w,
                m,
                n: &n,
                t: &t,
                tiles: &tiles,
                init,
                neutral,
            };
            let descriptors = Ident {
                name: self.fresh("descriptors"),
                ty: DataType::array(tiles.clone() + Nat::cst(1), u64()),
            };
            let scan = self.lookback_tiles(&parts, &descriptors, (g, genv), xs, out)?;
            Ok(Comm::New {
                ident: descriptors.clone(),
                addr: AddrSpace::Global,
                body: Box::new(Comm::Seq(vec![self.zeroed(&descriptors), scan])),
            })
        })
    }

    /// Every descriptor, and the counter after them, set to zero by a `mapGlobal` loop.
    fn zeroed(&self, descriptors: &Ident) -> Comm {
        let DataType::Array(count, _) = &descriptors.ty else {
            return Comm::Skip;
        };
        let z = self.loop_var(count);
        let slot = Acc::new(AccKind::Idx(var_acc(descriptors), Nat::var(&z)), u64());
        Comm::For {
            var: z,
            count: count.clone(),
            kind: LoopKind::Gpu(ParLevel::Global(0)),
            origin: Prim::ScanLookback.name(),
            body: Box::new(Comm::Assign(
                slot,
                Exp::new(ExpKind::Lit(Literal::Int(0, ScalarType::U64)), u64()),
            )),
        }
    }

    /// The work-group loop over the tiles (module docs, steps 1 to 4).
    fn lookback_tiles(
        &self,
        p: &Parts,
        descriptors: &Ident,
        (g, genv): (&Expr, &Env),
        xs: &Exp,
        out: &Acc,
    ) -> R<Comm> {
        let desc = var_exp(descriptors);
        let counter = Exp::new(ExpKind::Idx(desc.clone(), p.tiles.clone()), u64());
        let ticket = Ident {
            name: self.fresh("ticket"),
            ty: DataType::array(1, u64()),
        };
        let take = self.by_one_work_item(Comm::Assign(
            Acc::new(AccKind::Idx(var_acc(&ticket), Nat::cst(0)), u64()),
            Exp::new(ExpKind::Ticket(counter), u64()),
        ));
        let tile = Var::with_range(self.fresh("tile"), Nat::cst(0), p.tiles.clone());
        let tile_in = vec![Value::Data(p.tile_of(xs, &tile))];
        // steps 3 and 4, reading the scanned tile
        let rest = |scanned: Exp| {
            let prefix = Ident {
                name: self.fresh("prefix"),
                ty: DataType::array(1, p.t.clone()),
            };
            let publish = self.look_back(p, &desc, &tile, &scanned, &prefix)?;
            let write = self.tile_out(p, &tile, &scanned, &prefix, out)?;
            Ok(Comm::New {
                ident: prefix,
                addr: AddrSpace::Local,
                body: Box::new(Comm::Seq(vec![publish, write])),
            })
        };
        // the scanned tile read where `g` leaves it (`workGroupScanInLocal`: its local
        // memory), or else written to local memory of its own
        let per_tile = match self.call(g, genv, tile_in.clone(), Out::Con(&rest)) {
            Ok(c) => c,
            Err(_) => {
                let scanned = Ident {
                    name: self.fresh("scanned"),
                    ty: DataType::array(p.m, p.t.clone()),
                };
                let fill = self.call(g, genv, tile_in, Out::Acc(&var_acc(&scanned)))?;
                Comm::New {
                    ident: scanned.clone(),
                    addr: AddrSpace::Local,
                    body: Box::new(Comm::Seq(vec![fill, rest(var_exp(&scanned))?])),
                }
            }
        };
        let numbered = Comm::NatLet {
            var: tile,
            value: Exp::new(ExpKind::Idx(var_exp(&ticket), Nat::cst(0)), u64()),
            body: Box::new(per_tile),
        };
        Ok(Comm::For {
            var: self.loop_var(p.tiles),
            count: p.tiles.clone(),
            kind: LoopKind::Gpu(ParLevel::WorkGroup(0)),
            origin: Prim::ScanLookback.name(),
            body: Box::new(Comm::New {
                ident: ticket,
                addr: AddrSpace::Local,
                body: Box::new(Comm::Seq(vec![take, numbered])),
            }),
        })
    }

    /// Step 3: the look-back of the first warp (or of work-item 0 in a work-group of fewer
    /// than 32), the tile's exclusive prefix into `prefix[0]`.
    fn look_back(
        &self,
        p: &Parts,
        desc: &Exp,
        tile: &Var,
        scanned: &Exp,
        prefix: &Ident,
    ) -> R<Comm> {
        let scalar = |name: &str| Ident {
            name: self.fresh(name),
            ty: p.t.clone(),
        };
        let (other, acc) = (scalar("other"), scalar("acc"));
        let fold = self.pure(
            p.f,
            p.env,
            vec![Value::Data(var_exp(&other)), Value::Data(var_exp(&acc))],
            "the operator of `scanLookback`",
        )?;
        let aggregate = Exp::new(
            ExpKind::Idx(scanned.clone(), Nat::cst(p.m - 1)),
            p.t.clone(),
        );
        let lanes = if p.w >= i64::from(LookBack::WARP) {
            LookBack::WARP
        } else {
            1
        };
        let lane = self.loop_var(&Nat::cst(i64::from(lanes)));
        let lookback = LookBack {
            descriptors: desc.clone(),
            tile: Exp::new(ExpKind::Nat(Nat::var(tile)), DataType::NatType),
            aggregate,
            init: p.init.clone(),
            neutral: p.neutral.clone(),
            other: other.clone(),
            prefix: acc.clone(),
            fold,
            lanes,
            lane: Exp::new(ExpKind::Nat(Nat::var(&lane)), DataType::NatType),
        };
        let assign = Comm::Assign(
            Acc::new(AccKind::Idx(var_acc(prefix), Nat::cst(0)), p.t.clone()),
            Exp::new(ExpKind::LookBack(Box::new(lookback)), p.t.clone()),
        );
        let private = |ident: Ident, body: Comm| Comm::New {
            ident,
            addr: AddrSpace::Private,
            body: Box::new(body),
        };
        Ok(Comm::For {
            var: lane,
            count: Nat::cst(i64::from(lanes)),
            kind: LoopKind::Gpu(ParLevel::Local(0)),
            origin: Prim::ScanLookback.name(),
            body: Box::new(private(other, private(acc, assign))),
        })
    }

    /// Step 4: `out[j·m + i] := f scanned[i] prefix[0]`, work-item `l` of `w` at
    /// `i = l, l + w, ...`, below `m` and `n`.
    fn tile_out(&self, p: &Parts, tile: &Var, scanned: &Exp, prefix: &Ident, out: &Acc) -> R<Comm> {
        let rounds = (p.m + p.w - 1) / p.w;
        let (l, s) = (
            self.loop_var(&Nat::cst(p.w)),
            self.loop_var(&Nat::cst(rounds)),
        );
        let i = Nat::var(&s) * Nat::cst(p.w) + Nat::var(&l);
        let at = (Nat::var(tile) * Nat::cst(p.m) + i.clone()).simplify();
        let x = Exp::new(ExpKind::Idx(scanned.clone(), i.clone()), p.t.clone());
        let offset = Exp::new(ExpKind::Idx(var_exp(prefix), Nat::cst(0)), p.t.clone());
        let o = Acc::new(AccKind::Idx(out.clone(), at.clone()), p.t.clone());
        let mut body = self.call(
            p.f,
            p.env,
            vec![Value::Data(x), Value::Data(offset)],
            Out::Acc(&o),
        )?;
        if (p.tiles.clone() * Nat::cst(p.m) - p.n.clone())
            .simplify()
            .as_cst()
            != Some(0)
        {
            body = Comm::IfLess {
                lhs: at,
                rhs: p.n.clone(),
                body: Box::new(body),
            };
        }
        if p.m % p.w != 0 {
            body = Comm::IfLess {
                lhs: i,
                rhs: Nat::cst(p.m),
                body: Box::new(body),
            };
        }
        let rows = Comm::For {
            var: s,
            count: Nat::cst(rounds),
            kind: LoopKind::Seq,
            origin: Prim::ScanLookback.name(),
            body: Box::new(body),
        };
        Ok(Comm::For {
            var: l,
            count: Nat::cst(p.w),
            kind: LoopKind::Gpu(ParLevel::Local(0)),
            origin: Prim::ScanLookback.name(),
            body: Box::new(rows),
        })
    }

    /// `body` run by work-item 0 of the work-group (a `mapLocal(0)` loop of one iteration).
    fn by_one_work_item(&self, body: Comm) -> Comm {
        Comm::For {
            var: self.loop_var(&Nat::cst(1)),
            count: Nat::cst(1),
            kind: LoopKind::Gpu(ParLevel::Local(0)),
            origin: Prim::ScanLookback.name(),
            body: Box::new(body),
        }
    }
}

/// What the steps share.
struct Parts<'a> {
    f: &'a Expr,
    env: &'a Env,
    /// The work-items of a work-group.
    w: i64,
    /// The elements of a tile.
    m: i64,
    n: &'a Nat,
    t: &'a DataType,
    tiles: &'a Nat,
    init: &'a Exp,
    neutral: &'a Exp,
}

impl Parts<'_> {
    /// Tile `j` of `xs`: `split m (padCst 0 (tiles·m − n) e xs)` at `j`.
    fn tile_of(&self, xs: &Exp, j: &Var) -> Exp {
        let padded_len = (self.tiles.clone() * Nat::cst(self.m)).simplify();
        let pad = (padded_len.clone() - self.n.clone()).simplify();
        let padded = if pad.as_cst() == Some(0) {
            xs.clone()
        } else {
            Exp::new(
                ExpKind::Pad(
                    Nat::cst(0),
                    pad,
                    PadMode::Cst(self.neutral.clone()),
                    xs.clone(),
                ),
                DataType::array(padded_len, self.t.clone()),
            )
        };
        let tile_ty = DataType::array(self.m, self.t.clone());
        let split = Exp::new(
            ExpKind::View(View::Split(Nat::cst(self.m)), padded),
            DataType::array(self.tiles.clone(), tile_ty.clone()),
        );
        Exp::new(ExpKind::Idx(split, Nat::var(j)), tile_ty)
    }
}

/// `w` and `m`: constants, `w` from 1 to [`crate::gpu::MAX_WORK_GROUP_SIZE`], `m` at least 1.
fn work_items_and_tile(e: &Expr, nats: &[Nat]) -> R<(i64, i64)> {
    match (
        nats.first().and_then(Nat::as_cst),
        nats.get(1).and_then(Nat::as_cst),
    ) {
        (Some(w), Some(m)) if (1..=crate::gpu::MAX_WORK_GROUP_SIZE).contains(&w) && m >= 1 => {
            Ok((w, m))
        }
        _ => Err(TranslateError::at(
            e,
            format!(
                "`scanLookback` needs constant numbers of work-items (1 to {}) and of elements \
                 per tile (at least 1)",
                crate::gpu::MAX_WORK_GROUP_SIZE
            ),
            Some("use the singlePassScan(b, k) rule, which gives b and b·k"),
        )),
    }
}

/// Refuses elements whose bits do not fit the 32 value bits of a descriptor.
fn check_descriptor_value(e: &Expr, t: &DataType) -> R<()> {
    use rise::ScalarType as S;
    match t {
        DataType::Scalar(S::I32 | S::U32 | S::Int | S::F32) => Ok(()),
        _ => Err(TranslateError::at(
            e,
            format!(
                "`scanLookback` over elements of type {t}: a tile's descriptor holds its status \
                 and its value in one 64-bit word written atomically, so the value must be a \
                 32-bit scalar (i32, u32, int or f32)"
            ),
            Some("scan other types with scanTiles (examples/gpu.elv), which needs no descriptors"),
        )),
    }
}

fn u64() -> DataType {
    DataType::Scalar(ScalarType::U64)
}

fn var_exp(id: &Ident) -> Exp {
    Exp::new(ExpKind::Var(id.clone()), id.ty.clone())
}

fn var_acc(id: &Ident) -> Acc {
    Acc::new(AccKind::Var(id.clone()), id.ty.clone())
}
