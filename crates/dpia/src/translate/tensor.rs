//! `mmaSync a b c`: a warp's tensor-core multiply-accumulate.
//!
//! The operands are fragments (`32.8.t`, `32.4.t`, `32.4.f32`: row `l` is what lane `l`
//! holds, `rise::fragments`), so each lane's operands are row `l` of each, read wherever
//! they are (global, local or private memory, through any views). The translation is a
//! loop over the 32 lanes, origin `mmaSync`, in which every lane reads its 16 operands,
//! computes its 4 elements of `D` with one [`ExpKind::Mma`] into a private vector, and
//! writes them to row `l` of the output. On CUDA the lane loop is one iteration per lane,
//! so all 32 lanes execute the `mma.sync` together ([`crate::gpu::prepare`] checks that
//! the loop sits inside a `mapWarp` loop and outside loops that could leave lanes out).
//! A result that is read rather than written somewhere is stored first, in private
//! memory whose rows the lanes own (code generation keeps each lane's row only).

//!
//! `wgmma a b c`: a warp group's multiply-accumulate, translated the same way with a warp
//! loop (the group's 4 warps, origin `wgmma`) around the lane loop: each thread copies its
//! `4c` accumulator elements (row `l` of warp `w` of `c`) into a private array `d`,
//! updates it with one [`ExpKind::Wgmma`] (`d := A·B + d`; the tiles `a` and `b` stay whole
//! views, which code generation turns into shared-memory descriptors) and writes `d` to
//! its row of the output; where the output is the accumulator itself (a reduction updating
//! it in place), the multiply updates the row where it is (`row := A·B + row`).
//! [`crate::gpu::prepare`] checks that the warp loop sits directly inside a `mapWarpGroup`
//! loop.

use super::*;
use rise::fragments::{A_PER_LANE, B_PER_LANE, C_PER_LANE, GROUP_WARPS, LANES};

impl Translator {
    /// `mmaSync a b c` (`vals` = `[a, b, c]`), `e` its application.
    pub(super) fn mma_sync(&self, e: &Expr, vals: &[Expr], env: &Env, out: Out) -> R<Comm> {
        self.multiply(e, vals, env, out, "mma", &|xs, acc| {
            self.mma_lanes(e, xs, acc)
        })
    }

    /// `wgmma a b c` (`vals` = `[a, b, c]`), `e` its application.
    pub(super) fn wgmma(&self, e: &Expr, vals: &[Expr], env: &Env, out: Out) -> R<Comm> {
        self.multiply(e, vals, env, out, "wgmma", &|xs, acc| {
            self.wgmma_threads(e, xs, acc)
        })
    }

    /// A tensor-core multiply `e` of the values `vals` whose threads `threads` write it to an
    /// acceptor: written to `out`'s, or to private memory (named after `name`) that `out`'s
    /// continuation reads.
    fn multiply(
        &self,
        e: &Expr,
        vals: &[Expr],
        env: &Env,
        out: Out,
        name: &str,
        threads: &dyn Fn(&[Value], &Acc) -> R<Comm>,
    ) -> R<Comm> {
        let ty = data_type(e)?;
        match out {
            Out::Acc(acc) => self.values(vals, env, &|xs| threads(&xs, acc)),
            Out::Con(k) => {
                let ident = Ident {
                    name: self.fresh(name),
                    ty: ty.clone(),
                };
                let acc = Acc::new(AccKind::Var(ident.clone()), ty.clone());
                let read = Exp::new(ExpKind::Var(ident.clone()), ty.clone());
                let compute = self.values(vals, env, &|xs| threads(&xs, &acc))?;
                Ok(Comm::New {
                    ident,
                    addr: AddrSpace::Private,
                    body: Box::new(Comm::Seq(vec![compute, k(read)?])),
                })
            }
        }
    }

    /// The warp and lane loops of `wgmma`: thread `(w, l)` of the group copies its row
    /// `c[w][l]` into a private array, updates it by the multiply and writes it to
    /// `out[w][l]`.
    fn wgmma_threads(&self, e: &Expr, xs: &[Value], out: &Acc) -> R<Comm> {
        let [Value::Data(a), Value::Data(b), Value::Data(c)] = xs else {
            return Err(TranslateError::at(
                e,
                "`wgmma` takes two tiles and an accumulator (internal error)",
                None,
            ));
        };
        let (_, warp_ty) = array_dt(&c.ty, e)?;
        let (_, row_ty) = array_dt(&warp_ty, e)?;
        let (chunks, chunk_ty) = array_dt(&row_ty, e)?;
        let Some(chunks) = chunks.as_cst().filter(|c| (1..=32).contains(c)) else {
            return Err(TranslateError::at(
                e,
                format!(
                    "`wgmma` with a `B` of 8*{chunks} columns: the number of columns must be a \
                     constant multiple of 8 up to 256"
                ),
                None,
            ));
        };
        let (_, f32) = array_dt(&chunk_ty, e)?;
        let per_thread = 4 * chunks;
        let warp = self.loop_var(&Nat::cst(GROUP_WARPS as i64));
        let lane = self.loop_var(&Nat::cst(LANES as i64));
        let (w, l) = (Nat::var(&warp), Nat::var(&lane));
        let d_ty = DataType::Array(Nat::cst(per_thread), std::sync::Arc::new(f32.clone()));
        let d = Ident {
            name: self.fresh("d"),
            ty: d_ty.clone(),
        };
        let d_acc = Acc::new(AccKind::Var(d.clone()), d_ty.clone());
        let d_read = Exp::new(ExpKind::Var(d.clone()), d_ty.clone());
        let c_row = Exp::new(
            ExpKind::Idx(
                Exp::new(ExpKind::Idx(c.clone(), w.clone()), warp_ty.clone()),
                l.clone(),
            ),
            row_ty.clone(),
        );
        let out_row = Acc::new(
            AccKind::Idx(Acc::new(AccKind::Idx(out.clone(), w), warp_ty), l),
            row_ty,
        );
        let element = |k: i64| (Nat::cst(k / 4), Nat::cst(k % 4));
        let lanes = |body: Comm| Comm::For {
            var: lane.clone(),
            count: Nat::cst(LANES as i64),
            kind: LoopKind::Gpu(ParLevel::Lane),
            origin: Prim::Wgmma.name(),
            body: Box::new(body),
        };
        let warps = |body: Comm| Comm::For {
            var: warp.clone(),
            count: Nat::cst(GROUP_WARPS as i64),
            kind: LoopKind::Gpu(ParLevel::Warp),
            origin: Prim::Wgmma.name(),
            body: Box::new(body),
        };
        if same_place(&c_row, &out_row) {
            // the accumulator updated where it is (a reduction's): the multiply reads and
            // writes the thread's row itself, with nothing in between
            let product = Exp::new(
                ExpKind::Wgmma(vec![a.clone(), b.clone(), c_row.clone()]),
                out_row.ty.clone(),
            );
            return Ok(warps(lanes(Comm::Assign(out_row, product))));
        }
        let mut body = Vec::new();
        for k in 0..per_thread {
            let (j, i) = element(k);
            let chunk = Exp::new(ExpKind::Idx(c_row.clone(), j), chunk_ty.clone());
            let value = Exp::new(ExpKind::Idx(chunk, i), f32.clone());
            let slot = Acc::new(AccKind::Idx(d_acc.clone(), Nat::cst(k)), f32.clone());
            body.push(self.assign(&slot, &value));
        }
        let product = Exp::new(
            ExpKind::Wgmma(vec![a.clone(), b.clone(), d_read.clone()]),
            d_ty.clone(),
        );
        // one assignment of the whole array: the multiply updates it at once
        body.push(Comm::Assign(d_acc.clone(), product));
        for k in 0..per_thread {
            let (j, i) = element(k);
            let chunk = Acc::new(AccKind::Idx(out_row.clone(), j), chunk_ty.clone());
            let slot = Acc::new(AccKind::Idx(chunk, i), f32.clone());
            let value = Exp::new(ExpKind::Idx(d_read.clone(), Nat::cst(k)), f32.clone());
            body.push(self.assign(&slot, &value));
        }
        Ok(warps(lanes(Comm::New {
            ident: d,
            addr: AddrSpace::Private,
            body: Box::new(Comm::Seq(body)),
        })))
    }

    /// The lane loop: lane `l` reads row `l` of the fragments `xs`, and writes row `l` of
    /// the result to `out`.
    fn mma_lanes(&self, e: &Expr, xs: &[Value], out: &Acc) -> R<Comm> {
        let [Value::Data(a), Value::Data(b), Value::Data(c)] = xs else {
            return Err(TranslateError::at(
                e,
                "`mmaSync` takes three fragments (internal error)",
                None,
            ));
        };
        let lane = self.loop_var(&Nat::cst(LANES as i64));
        let l = Nat::var(&lane);
        let row = |x: &Exp, per_lane: usize| -> R<Vec<Exp>> {
            let (_, row_ty) = array_dt(&x.ty, e)?;
            let (_, elem) = array_dt(&row_ty, e)?;
            let r = Exp::new(ExpKind::Idx(x.clone(), l.clone()), row_ty);
            Ok((0..per_lane)
                .map(|i| Exp::new(ExpKind::Idx(r.clone(), Nat::cst(i as i64)), elem.clone()))
                .collect())
        };
        let mut operands = row(a, A_PER_LANE)?;
        operands.extend(row(b, B_PER_LANE)?);
        operands.extend(row(c, C_PER_LANE)?);
        let f32 = DataType::Scalar(rise::ScalarType::F32);
        let lanes = DataType::Vector(
            Nat::cst(C_PER_LANE as i64),
            std::sync::Arc::new(f32.clone()),
        );
        let d = Ident {
            name: self.fresh("d"),
            ty: lanes.clone(),
        };
        let d_acc = Acc::new(AccKind::Var(d.clone()), lanes.clone());
        let d_read = Exp::new(ExpKind::Var(d.clone()), lanes.clone());
        let (_, out_row) = array_dt(&out.ty, e)?;
        let out_row = Acc::new(AccKind::Idx(out.clone(), l), out_row);
        let mut body = vec![self.assign(&d_acc, &Exp::new(ExpKind::Mma(operands), lanes))];
        for i in 0..C_PER_LANE {
            let k = Nat::cst(i as i64);
            let elem = Acc::new(AccKind::Idx(out_row.clone(), k.clone()), f32.clone());
            let value = Exp::new(ExpKind::Lane(d_read.clone(), k), f32.clone());
            body.push(self.assign(&elem, &value));
        }
        Ok(Comm::For {
            var: lane,
            count: Nat::cst(LANES as i64),
            kind: LoopKind::Gpu(ParLevel::Lane),
            origin: Prim::MmaSync.name(),
            body: Box::new(Comm::New {
                ident: d,
                addr: AddrSpace::Private,
                body: Box::new(Comm::Seq(body)),
            }),
        })
    }
}
