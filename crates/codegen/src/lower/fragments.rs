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
use crate::ast::{Expr, Scalar, Type, VectorAccess};

impl Lowerer {
    /// The 32-bit registers of a fragment given element by element (`values`, an even
    /// number of operands of the 16-bit type `tile`).
    pub(super) fn fragment_registers(
        &mut self,
        env: &Env,
        values: &[Exp],
        tile: Scalar,
    ) -> Res<Vec<Expr>> {
        values
            .chunks(2)
            .map(|pair| {
                let (lo, hi) = (
                    self.read(env, &pair[0], &[])?,
                    self.read(env, &pair[1], &[])?,
                );
                if let Some(load) = self.pair_load(env, &lo, &hi)? {
                    return Ok(load);
                }
                let lo = self.read_value(env, lo)?;
                let hi = self.read_value(env, hi)?;
                Ok(Expr::call(&self.tensor.pack(tile), vec![lo, hi]))
            })
            .collect()
    }

    fn read_value(&mut self, env: &Env, r: Read) -> Res<Expr> {
        match r {
            Read::Mem(p) => self.place_expr(env, &p),
            Read::Value(v) => Ok(v),
        }
    }

    /// One 32-bit load of `lo` and `hi` where they are neighbours in memory (`hi` at
    /// `lo`'s index plus one, in the same array, or the next lane of the same vector),
    /// `lo`'s index (or lane) is provably even and the array starts aligned (GPU buffers
    /// and local-memory arrays).
    fn pair_load(&mut self, env: &Env, lo: &Read, hi: &Read) -> Res<Option<Expr>> {
        let (Read::Mem(lo), Read::Mem(hi)) = (lo, hi) else {
            return Ok(None);
        };
        if !neighbours(lo, hi) {
            return Ok(None);
        }
        let first = self.place_expr(env, lo)?;
        Ok(Some(Expr::VectorLoad(Box::new(VectorAccess {
            ty: Some(Type::Named("unsigned".into())),
            lanes: 2,
            first,
            whole: None,
        }))))
    }
}

/// Whether `hi` is the element after `lo` in an aligned array, `lo` at an even index (or
/// the lane after `lo`'s in the same vector of the array, `lo`'s lane even).
fn neighbours(lo: &MemPlace, hi: &MemPlace) -> bool {
    let plain = |p: &MemPlace| p.indexed && p.aligned && p.place.fields.is_empty();
    let (Some(i), Some(j)) = (&lo.place.flat, &hi.place.flat) else {
        return false;
    };
    let next = |a: &Nat, b: &Nat| (b - a).simplify().as_cst() == Some(1);
    let even = |a: &Nat| a.modulo(&Nat::cst(2)).simplify().as_cst() == Some(0);
    let same = |a: &Nat, b: &Nat| (b - a).simplify().as_cst() == Some(0);
    if !(plain(lo) && plain(hi) && lo.base == hi.base) {
        return false;
    }
    match (&lo.place.lane, &hi.place.lane) {
        // elements of an array
        (None, None) => next(i, j) && even(i),
        // lanes of vectors of an array (vectors of 16-bit floats moved whole, aligned to
        // their size): consecutive elements counted in lanes, the first at an even lane
        (Some(k), Some(l)) => match (&lo.place.lanes, &hi.place.lanes) {
            (Some(n), Some(m)) if same(n, m) => {
                next(&(i * n + k), &(j * m + l)) && even(&(i * n + k))
            }
            _ => false,
        },
        _ => false,
    }
}
