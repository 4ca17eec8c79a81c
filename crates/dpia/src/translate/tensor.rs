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

use super::*;
use rise::fragments::{A_PER_LANE, B_PER_LANE, C_PER_LANE, LANES};

impl Translator {
    /// `mmaSync a b c` (`vals` = `[a, b, c]`), `e` its application.
    pub(super) fn mma_sync(&self, e: &Expr, vals: &[Expr], env: &Env, out: Out) -> R<Comm> {
        let ty = data_type(e)?;
        match out {
            Out::Acc(acc) => self.values(vals, env, &|xs| self.mma_lanes(e, &xs, acc)),
            Out::Con(k) => {
                let ident = Ident {
                    name: self.fresh("mma"),
                    ty: ty.clone(),
                };
                let acc = Acc::new(AccKind::Var(ident.clone()), ty.clone());
                let read = Exp::new(ExpKind::Var(ident.clone()), ty.clone());
                let compute = self.values(vals, env, &|xs| self.mma_lanes(e, &xs, &acc))?;
                Ok(Comm::New {
                    ident,
                    addr: AddrSpace::Private,
                    body: Box::new(Comm::Seq(vec![compute, k(read)?])),
                })
            }
        }
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
