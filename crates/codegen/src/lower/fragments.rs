//! The operands of `mmaSync` in CUDA: a lane's 8 elements of `A` and 4 of `B` go to the
//! tensor cores as 32-bit registers, each holding two consecutive 16-bit elements of the
//! fragment (the lower half first). Where the two elements of a register are neighbours in
//! the same array of global or local memory, at an even index of an aligned array, the
//! register is read with one 32-bit load (`*(const unsigned *)&x[i]`); otherwise the two
//! values are read one by one and packed (`shine_pack_f16(x, y)`). The first is what the
//! tensor cores want from a layout that keeps a fragment's pairs together (a row-major `A`
//! tile, a `B` tile stored with `k` innermost); both compute the same value.

use arith::Nat;
use dpia::Exp;

use super::memory::MemPlace;
use super::views::Read;
use super::{Env, Lowerer, Res};
use crate::ast::{BinOp, Expr, Scalar, Type, VectorAccess};
use crate::error::CodegenError;

impl Lowerer {
    /// The operands of a tensor-core helper for `A`'s 8 and `B`'s 4 elements (`values`,
    /// of the 16-bit type `tile`): `A`'s 4 registers, then `B`'s 2 registers or, where
    /// they are not pairs of neighbours but `B`'s rows are 16 aligned bytes of local
    /// memory, one `ldmatrix ... .trans` giving both.
    pub(super) fn mma_operands(
        &mut self,
        env: &Env,
        values: &[Exp],
        tile: Scalar,
    ) -> Res<Vec<Expr>> {
        let reads = values
            .iter()
            .map(|x| self.read(env, x, &[]))
            .collect::<Res<Vec<_>>>()?;
        let (a, b) = reads.split_at(8);
        let mut args = match self.ldsm_a(env, a, tile)? {
            Some(x4) => vec![x4],
            None => self.fragment_registers(env, a, tile)?,
        };
        if !b
            .chunks(2)
            .all(|p| pair_of_neighbours(&p[0], &p[1]).is_some())
        {
            if let Some(ldsm) = self.ldsm_trans_b(env, b, tile)? {
                args.push(ldsm);
                return Ok(args);
            }
        }
        args.extend(self.fragment_registers(env, b, tile)?);
        Ok(args)
    }

    /// `ldmatrix.sync.aligned.m8n8.x4` for an `A` fragment whose rows of 8 consecutive `k`
    /// (register `r`'s 8x8 matrix: rows `8·(r mod 2)..`, columns `8·(r/2)..`) each lie as 16
    /// consecutive, 16-byte aligned bytes of local memory: lane `l` gives the address of row
    /// `l % 8` of matrix `l / 8`, the element of register `l / 8` at lane `4·(l % 8)`, and
    /// receives the 4 registers. Proven for every lane: register `r`'s pair of lane
    /// `4g + q` is `2q` elements after that of lane `4g`, which is a multiple of 8 (and the
    /// two of each pair are neighbours). `None` where not proven.
    fn ldsm_a(&mut self, env: &Env, reads: &[Read], tile: Scalar) -> Res<Option<Expr>> {
        let Some(lane) = self.mma_lane.clone() else {
            return Ok(None);
        };
        let Some(firsts) = shared_pairs(reads) else {
            return Ok(None);
        };
        let Some(elements) = firsts
            .iter()
            .map(|p| element(p))
            .collect::<Option<Vec<Nat>>>()
        else {
            return Ok(None);
        };
        let at = |e: &Nat, l: i64| e.substitute(&lane, &Nat::cst(l)).simplify();
        let cst = |n: Nat| n.simplify().as_cst();
        for e in &elements {
            for g in 0..8 {
                let row = at(e, 4 * g);
                if cst(row.modulo(&Nat::cst(8))) != Some(0) {
                    return Ok(None);
                }
                for q in 1..4 {
                    if cst(&at(e, 4 * g + q) - &row) != Some(2 * q) {
                        return Ok(None);
                    }
                }
            }
        }
        // lane l: row i = l % 8 of matrix j = l / 8, register j's pair at lane 4i
        let l = Nat::var(&lane);
        let i = l.modulo(&Nat::cst(8));
        let j = l.floor_div(&Nat::cst(8)).modulo(&Nat::cst(4));
        let row_of = |e: &Nat| e.substitute(&lane, &(&i * 4));
        let index = self.lane_choice(env, &elements, &j, &row_of, &at)?;
        let first = firsts[0];
        let half = Type::ptr(Type::Scalar(tile));
        let address = Expr::binary(BinOp::Add, Expr::ident(&first.base).cast(half), index);
        Ok(Some(Expr::call(self.tensor.ldsm_x4(), vec![address])))
    }

    /// The element lane `l` gives the address of when it names row `row_of` of matrix
    /// `which(l)` of `elements`: one expression where the matrices' rows are a constant
    /// apart (`c1` per odd matrix, `c2` per pair), else the matrix chosen by the lane.
    fn lane_choice(
        &mut self,
        env: &Env,
        elements: &[Nat],
        which: &Nat,
        row_of: &dyn Fn(&Nat) -> Nat,
        at: &dyn Fn(&Nat, i64) -> Nat,
    ) -> Res<Expr> {
        let cst = |n: Nat| n.simplify().as_cst();
        let offsets: Option<Vec<i64>> = elements
            .iter()
            .map(|e| {
                let d: Vec<Option<i64>> = (0..32)
                    .map(|s| cst(&at(e, s) - &at(&elements[0], s)))
                    .collect();
                d.iter().all(|x| *x == d[0]).then_some(d[0]).flatten()
            })
            .collect();
        if let Some(c) = offsets.filter(|c| c.len() == 4 && c[3] == c[1] + c[2]) {
            let odd = which.modulo(&Nat::cst(2));
            let pair = which.floor_div(&Nat::cst(2));
            return self.nat(env, &(row_of(&elements[0]) + odd * c[1] + pair * c[2]));
        }
        let rows = elements
            .iter()
            .map(|e| self.nat(env, &row_of(e)))
            .collect::<Res<Vec<_>>>()?;
        let is = |this: &mut Self, n: &Nat, v: i64| {
            Ok::<_, CodegenError>(Expr::binary(BinOp::Eq, this.nat(env, n)?, Expr::Int(v)))
        };
        let mut choice = rows[rows.len() - 1].clone();
        for (k, row) in rows.iter().enumerate().rev().skip(1) {
            choice = Expr::ternary(is(self, which, k as i64)?, row.clone(), choice);
        }
        Ok(choice)
    }

    /// `ldmatrix.sync.aligned.m8n8.x2.trans` for a `B` fragment whose elements `(k, n)`
    /// lie in local memory with the 8 of each `k` (`n = 0..8`) consecutive and 16-byte
    /// aligned (`B` stored row by row, `k` outermost): lane `l` gives the address of row
    /// `l % 8` of matrix `l / 8`, which is where element `i = l % 8` of the fragment's
    /// operand `2(l / 8) + i % 2` lies for lane `i / 2`. Proven for every lane: the
    /// operand `j` of lane `4g + t` is `g` elements after that of lane `t`, and that of
    /// lane `t` is at an index that is a multiple of 8. `None` where not proven.
    fn ldsm_trans_b(&mut self, env: &Env, reads: &[Read], tile: Scalar) -> Res<Option<Expr>> {
        let Some(lane) = self.mma_lane.clone() else {
            return Ok(None);
        };
        let places: Vec<&MemPlace> = reads
            .iter()
            .filter_map(|r| match r {
                Read::Mem(p) => Some(p),
                Read::Value(_) => None,
            })
            .collect();
        let [first, ..] = places.as_slice() else {
            return Ok(None);
        };
        let in_shared = |p: &MemPlace| {
            p.shared && p.aligned && p.indexed && p.place.fields.is_empty() && p.base == first.base
        };
        if places.len() != 4 || !places.iter().all(|p| in_shared(p)) {
            return Ok(None);
        }
        let Some(elements) = places
            .iter()
            .map(|p| element(p))
            .collect::<Option<Vec<Nat>>>()
        else {
            return Ok(None);
        };
        let at = |e: &Nat, l: i64| e.substitute(&lane, &Nat::cst(l)).simplify();
        let cst = |n: Nat| n.simplify().as_cst();
        for e in &elements {
            for t in 0..4 {
                let row = at(e, t);
                if cst(row.modulo(&Nat::cst(8))) != Some(0) {
                    return Ok(None);
                }
                for g in 1..8 {
                    if cst(&at(e, 4 * g + t) - &row) != Some(g) {
                        return Ok(None);
                    }
                }
            }
        }
        // lane l: row i = l % 8 of matrix q = (l / 8) % 2, the element of operand
        // j = 2q + i % 2 at lane i / 2
        let l = Nat::var(&lane);
        let i = l.modulo(&Nat::cst(8));
        let q = l.floor_div(&Nat::cst(8)).modulo(&Nat::cst(2));
        let t = i.floor_div(&Nat::cst(2));
        let row_of = |e: &Nat| e.substitute(&lane, &t);
        let offsets: Option<Vec<i64>> = elements
            .iter()
            .map(|e| {
                let d: Vec<Option<i64>> = (0..4)
                    .map(|s| cst(&at(e, s) - &at(&elements[0], s)))
                    .collect();
                d.iter().all(|x| *x == d[0]).then_some(d[0]).flatten()
            })
            .collect();
        let index = match offsets {
            // the four operands' rows a constant apart: `c1` per odd operand, `c2` per
            // second matrix
            Some(c) if c[3] == c[1] + c[2] => self.nat(
                env,
                &(row_of(&elements[0]) + i.modulo(&Nat::cst(2)) * c[1] + q * c[2]),
            )?,
            // otherwise (a swizzled layout) the operand's row chosen by the lane
            _ => {
                let rows = elements
                    .iter()
                    .map(|e| self.nat(env, &row_of(e)))
                    .collect::<Res<Vec<_>>>()?;
                let is = |n: &Nat, v: i64| {
                    Ok::<_, CodegenError>(Expr::binary(BinOp::Eq, self.nat(env, n)?, Expr::Int(v)))
                };
                let odd = i.modulo(&Nat::cst(2));
                let first = Expr::ternary(is(&odd, 0)?, rows[0].clone(), rows[1].clone());
                let second = Expr::ternary(is(&odd, 0)?, rows[2].clone(), rows[3].clone());
                Expr::ternary(is(&q, 0)?, first, second)
            }
        };
        let half = Type::ptr(Type::Scalar(tile));
        let address = Expr::binary(BinOp::Add, Expr::ident(&first.base).cast(half), index);
        Ok(Some(Expr::call(self.tensor.ldsm_trans(), vec![address])))
    }

    /// The 32-bit registers of a fragment given element by element (`reads`, an even
    /// number of values of the 16-bit type `tile`): one 32-bit load where the two of a
    /// register are neighbours in memory, else the two values packed.
    fn fragment_registers(&mut self, env: &Env, reads: &[Read], tile: Scalar) -> Res<Vec<Expr>> {
        reads
            .chunks(2)
            .map(|pair| {
                if let Some(lo) = pair_of_neighbours(&pair[0], &pair[1]) {
                    return Ok(Expr::VectorLoad(Box::new(VectorAccess {
                        ty: Some(Type::Named("unsigned".into())),
                        lanes: 2,
                        first: self.place_expr(env, lo)?,
                        whole: None,
                    })));
                }
                let lo = self.read_value(env, &pair[0])?;
                let hi = self.read_value(env, &pair[1])?;
                Ok(Expr::call(&self.tensor.pack(tile), vec![lo, hi]))
            })
            .collect()
    }

    fn read_value(&mut self, env: &Env, r: &Read) -> Res<Expr> {
        match r {
            Read::Mem(p) => self.place_expr(env, p),
            Read::Value(v) => Ok(v.clone()),
        }
    }
}

/// The first of `lo` and `hi` where they are neighbours in memory ([`neighbours`]): one
/// 32-bit load reads both.
fn pair_of_neighbours<'a>(lo: &'a Read, hi: &Read) -> Option<&'a MemPlace> {
    match (lo, hi) {
        (Read::Mem(lo), Read::Mem(hi)) if neighbours(lo, hi) => Some(lo),
        _ => None,
    }
}

/// The index of the 16-bit element `p` is, counted in elements of its array (a lane of a
/// vector counted after the lanes of the vectors before it).
pub(super) fn element(p: &MemPlace) -> Option<Nat> {
    let flat = p.place.flat.as_ref()?;
    match (&p.place.lane, &p.place.lanes) {
        (None, _) => Some(flat.clone()),
        (Some(k), Some(n)) => Some(flat * n + k),
        (Some(_), None) => None,
    }
}

/// Whether `hi` is the element after `lo` in an aligned array, `lo` at an even index (or
/// the lane after `lo`'s in the same vector of the array, `lo`'s lane even).
fn neighbours(lo: &MemPlace, hi: &MemPlace) -> bool {
    let plain = |p: &MemPlace| p.indexed && p.aligned && p.place.fields.is_empty();
    let (Some(i), Some(j)) = (element(lo), element(hi)) else {
        return false;
    };
    plain(lo)
        && plain(hi)
        && lo.base == hi.base
        && lo.place.lane.is_some() == hi.place.lane.is_some()
        && (&j - &i).simplify().as_cst() == Some(1)
        && i.modulo(&Nat::cst(2)).simplify().as_cst() == Some(0)
}

/// The first place of every register's pair of `reads` where each pair is two neighbours in
/// the same aligned array of local memory.
fn shared_pairs(reads: &[Read]) -> Option<Vec<&MemPlace>> {
    let firsts = reads
        .chunks(2)
        .map(|p| pair_of_neighbours(&p[0], &p[1]))
        .collect::<Option<Vec<&MemPlace>>>()?;
    let base = &firsts.first()?.base;
    firsts
        .iter()
        .all(|p| p.shared && &p.base == base)
        .then_some(firsts)
}
