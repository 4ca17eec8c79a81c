//! A warp group's multiply-accumulate `d := A·B + d` (`wgmma`) in CUDA: Hopper's
//! `wgmma.mma_async.m64nNk16` reads the tiles `A` (64×16) and `B` (16×N) from shared memory
//! through 64-bit *descriptors* (a start address, two strides and a swizzle mode), so the
//! tiles must lie in local memory in a layout the instruction reads. This module proves it,
//! element by element: every element's byte offset from the tile's first element must be
//! where the instruction looks for it, in 128-byte swizzled rows (the layout the copy into
//! local memory wrote through a `reorder` with `xor`), with `A` K-major (each row's 16
//! elements consecutive) and `B` K-major (stored transposed, a column's 16 elements
//! consecutive) or MN-major (a row's 64-element pieces consecutive). Anything else is
//! refused, naming the first element that is not where the instruction would read it.
//!
//! The instruction's model of a 128-byte swizzled operand: the element at unswizzled byte
//! address `u` is read at `u ^ (((u >> 7) & 7) << 4)` (bits 4–6 of the address flipped by
//! bits 7–9), with `u` = start + (row / 8)·SBO + (row % 8)·128 + (byte within the row) for
//! K-major tiles (`row` the `M` or `N` index) and `u` = start + (n / 64)·LBO + (k / 8)·SBO +
//! (k % 8)·128 + 2·(n % 64) for an MN-major `B`. The start must be a tile's first element
//! at most 128 bytes into a 1024-byte aligned atom: local arrays of 1024 bytes or more
//! start at 1024-byte boundaries in CUDA (`crate::local_memory`), which the descriptor
//! helper checks when it runs (a kernel whose array is not is stopped, `__trap`, rather
//! than read wrong elements).

use arith::{Nat, Var};
use dpia::{Acc, AccKind, Exp, ExpKind};
use rise::DataType;

use super::fragments::element;
use super::memory::MemPlace;
use super::views::{Dest, Read};
use super::{Env, Lowerer, Res};
use crate::ast::{Expr, Stmt, Type, UnOp};
use crate::ctypes::scalar_of;
use crate::error::{malformed, unsupported};
use crate::layout::PathElem;

/// Where the instruction reads a tile: a descriptor's strides and whether `B` is MN-major
/// (`tnspB`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Layout {
    lbo: i64,
    sbo: i64,
    mn_major: bool,
}

impl Lowerer {
    /// `d := wgmma(a, b, d)`: the helper updating the thread's accumulator array `d` with
    /// the descriptors of `a` and `b`.
    pub(super) fn wgmma_assign(
        &mut self,
        env: &Env,
        acc: &Acc,
        exp: &Exp,
        out: &mut Vec<Stmt>,
    ) -> Res<()> {
        if self.target != crate::Target::Cuda {
            return unsupported(
                "`wgmma` runs on the tensor cores of NVIDIA Hopper GPUs: compile for CUDA \
                 (--target cuda)",
            );
        }
        let ExpKind::Wgmma(operands) = &*exp.kind else {
            return malformed("a `wgmma` assignment without a `wgmma`");
        };
        let [a, b, d] = operands.as_slice() else {
            return malformed("`wgmma` with other than two tiles and an accumulator");
        };
        let tile = match scalar_of(&element_type(&a.ty)) {
            Ok(Some(s)) if s.is_half() => s,
            _ => return malformed("`wgmma` on tiles that are not f16 or bf16"),
        };
        let n = match &b.ty {
            DataType::Array(_, row) => match &**row {
                DataType::Array(n, _) => n.as_cst(),
                _ => None,
            },
            _ => None,
        };
        let Some(n) = n.filter(|n| n % 8 == 0 && (8..=256).contains(n)) else {
            return malformed("`wgmma` with a `B` whose columns are not 8 to 256, a multiple of 8");
        };
        let (a_first, a_layout) = self.tile_layout(env, a, 64, 16, false)?;
        let (b_first, b_layout) = self.tile_layout(env, b, 16, n, true)?;
        let da = self.descriptor(env, &a_first, a_layout)?;
        let db = self.descriptor(env, &b_first, b_layout)?;
        let accumulator = self.accumulator(env, acc, d, n / 2)?;
        self.halfs.mark(tile);
        let helper = self.tensor.wgmma(tile, n as u32, b_layout.mn_major);
        // fenced before, waited for after: the accumulators are ordinary registers again
        // (runs of multiplies into the same accumulators are fenced and waited for once:
        // `batch_waits`)
        let registers = (n / 2) as u32;
        let fence = self.tensor.wgmma_fence(registers);
        let wait = self.tensor.wgmma_wait(registers);
        out.push(Stmt::Expr(Expr::call(&fence, vec![accumulator.clone()])));
        out.push(Stmt::Expr(Expr::call(
            &helper,
            vec![accumulator.clone(), da, db],
        )));
        out.push(Stmt::Expr(Expr::call(&wait, vec![accumulator])));
        Ok(())
    }

    /// The address of the thread's `count` accumulators that `wgmma` reads as `d` and
    /// writes through `acc`: a private array of its own, or the thread's row of a private
    /// accumulator, which must then be `count` consecutive elements of one array, the same
    /// that `acc` writes.
    fn accumulator(&mut self, env: &Env, acc: &Acc, d: &Exp, count: i64) -> Res<Expr> {
        if let (AccKind::Var(target), ExpKind::Var(source)) = (&*acc.kind, &*d.kind) {
            if target.name != source.name {
                return malformed("`wgmma` updating other than its own accumulator array");
            }
            return Ok(Expr::ident(&self.mem_place(target, &[], true)?.base));
        }
        let (read, grid) = self.symbolic_element(env, d, (count / 4, 4), "wgmma_chunk")?;
        let Read::Mem(read) = read else {
            return malformed("a `wgmma` accumulator that is computed, not in memory");
        };
        let Dest::Mem(written) = self.dest(env, acc, &grid.path())? else {
            return malformed("`wgmma`'s accumulator written as vectors");
        };
        let consecutive = |p: &MemPlace| {
            let first = element(p)?;
            let start = grid.at(&first, 0, 0);
            let all = (0..count).all(|k| {
                (&grid.at(&first, k / 4, k % 4) - &start)
                    .simplify()
                    .as_cst()
                    == Some(k)
            });
            all.then_some(start)
        };
        let plain = |p: &MemPlace| !p.shared && p.indexed && p.place.fields.is_empty();
        match (consecutive(&read), consecutive(&written)) {
            (Some(r), Some(w))
                if plain(&read) && plain(&written) && read.base == written.base && r == w =>
            {
                let first = grid.place_at(&read, 0, 0);
                Ok(Expr::unary(UnOp::AddrOf, self.place_expr(env, &first)?))
            }
            _ => unsupported(
                "`wgmma` updates its accumulator in place where a thread's row of it is \
                 consecutive elements of one private array (its part of the accumulators \
                 distributed over the warp group's threads); this accumulator is not: give \
                 it the type `4.32.c.4.f32` per warp group, allocated outside the \
                 `mapWarpGroup` loop",
            ),
        }
    }

    /// The first element of the `rows × cols` tile `x` and the layout the instruction reads
    /// it in (`b`: `B`, whose rows are `k`), proven for every element.
    fn tile_layout(
        &mut self,
        env: &Env,
        x: &Exp,
        rows: i64,
        cols: i64,
        b: bool,
    ) -> Res<(MemPlace, Layout)> {
        let name = if b { "B" } else { "A" };
        let (read, grid) = self.symbolic_element(env, x, (rows, cols), "wgmma_row")?;
        let Read::Mem(place) = read else {
            return not_proven(
                name,
                "its elements are computed, not read from local memory",
            );
        };
        let in_tile = place.shared && place.indexed && place.place.fields.is_empty();
        let Some(elem) = element(&place).filter(|_| in_tile) else {
            return not_proven(
                name,
                "its elements are not at indices of one array of local memory",
            );
        };
        let first_elem = grid.at(&elem, 0, 0);
        let first = grid.place_at(&place, 0, 0);
        let mut offsets = Vec::with_capacity((rows * cols) as usize);
        for r in 0..rows {
            for c in 0..cols {
                match (&grid.at(&elem, r, c) - &first_elem).simplify().as_cst() {
                    Some(o) => offsets.push(2 * o),
                    None => {
                        return not_proven(
                            name,
                            &format!(
                                "element ({r}, {c}) is not at a constant distance from element \
                                 (0, 0)"
                            ),
                        )
                    }
                }
            }
        }
        let start = (&first_elem * 2)
            .modulo(&Nat::cst(1024))
            .simplify()
            .as_cst();
        let Some(start) = start.filter(|s| *s < 128 && s % 16 == 0) else {
            return not_proven(
                name,
                "its first element is not proven to lie, 16-byte aligned, in the first 128 bytes \
                 of a 1024-byte block of its array",
            );
        };
        let at = |r: i64, c: i64| offsets[(r * cols + c) as usize];
        let candidates: Vec<Layout> = if b {
            let mut v = vec![Layout {
                lbo: 16,
                sbo: if cols > 8 { at(0, 8) } else { 1024 },
                mn_major: false,
            }];
            v.push(Layout {
                lbo: if cols > 64 { at(0, 64) } else { 16 },
                sbo: at(8, 0),
                mn_major: true,
            });
            v
        } else {
            vec![Layout {
                lbo: 16,
                sbo: at(8, 0),
                mn_major: false,
            }]
        };
        let mut first_miss = None;
        for layout in candidates {
            let fits_descriptor = |s: i64| s > 0 && s % 16 == 0 && s < (1 << 18);
            if !fits_descriptor(layout.sbo) || !fits_descriptor(layout.lbo) {
                continue;
            }
            let miss = (0..rows)
                .flat_map(|r| (0..cols).map(move |c| (r, c)))
                .find(|&(r, c)| at(r, c) != expected(layout, start, b, r, c));
            match miss {
                None => return Ok((first, layout)),
                Some(m) => {
                    first_miss.get_or_insert((
                        m,
                        at(m.0, m.1),
                        expected(layout, start, b, m.0, m.1),
                    ));
                }
            }
        }
        let detail = match first_miss {
            Some(((r, c), found, wanted)) => format!(
                "element ({r}, {c}) is {found} bytes after element (0, 0), where a 128-byte \
                 swizzled layout would put it {wanted} bytes after"
            ),
            None => "its rows are not at a stride the instruction's descriptor can hold".into(),
        };
        not_proven(name, &detail)
    }

    /// How element `(i, j)` of the two-dimensional `x` (`i < rows`, `j < cols`) is read,
    /// for a symbolic `i` and `j` (variables of those ranges, `what` naming the first).
    fn symbolic_element(
        &mut self,
        env: &Env,
        x: &Exp,
        (rows, cols): (i64, i64),
        what: &str,
    ) -> Res<(Read, Grid)> {
        let DataType::Array(_, row_ty) = &x.ty else {
            return malformed("a `wgmma` operand that is not an array");
        };
        let DataType::Array(_, elem_ty) = &**row_ty else {
            return malformed("a `wgmma` operand that is not an array of arrays");
        };
        let grid = Grid {
            row: Var::with_range(what, Nat::cst(0), Nat::cst(rows)),
            col: Var::with_range(format!("{what}_col"), Nat::cst(0), Nat::cst(cols)),
        };
        let r = Exp::new(
            ExpKind::Idx(x.clone(), Nat::var(&grid.row)),
            (**row_ty).clone(),
        );
        let e = Exp::new(ExpKind::Idx(r, Nat::var(&grid.col)), (**elem_ty).clone());
        Ok((self.read(env, &e, &[])?, grid))
    }

    /// The descriptor of a tile whose first element is `first`, in `layout`.
    fn descriptor(&mut self, env: &Env, first: &MemPlace, layout: Layout) -> Res<Expr> {
        let address = Expr::unary(UnOp::AddrOf, self.place_expr(env, first)?);
        let void = Type::ptr(Type::Named("void".into()));
        Ok(Expr::call(
            self.tensor.wgmma_descriptor(),
            vec![
                address.cast(void.clone()),
                Expr::Int(layout.lbo),
                Expr::Int(layout.sbo),
                Expr::ident(&first.base).cast(void),
            ],
        ))
    }
}

/// `stmts` with every run of sibling blocks that each hold one warp-group multiply into the
/// same accumulators (the unrolled steps of a reduction) fenced once before the first and
/// waited for once after the last: the instructions between touch no accumulator, so the
/// tensor cores chain the multiplies without waiting for each.
pub(super) fn batch_waits(stmts: &mut [Stmt]) {
    for s in stmts.iter_mut() {
        match s {
            Stmt::Block(b) => batch_waits(b),
            Stmt::For(f) => batch_waits(&mut f.body),
            Stmt::If(_, t, e) => {
                batch_waits(t);
                batch_waits(e);
            }
            _ => {}
        }
    }
    let mut run: Vec<usize> = Vec::new();
    let mut accumulator: Option<Expr> = None;
    let flush = |run: &mut Vec<usize>, stmts: &mut [Stmt]| {
        if run.len() > 1 {
            for (k, &i) in run.iter().enumerate() {
                let keep_fence = k == 0;
                let keep_wait = k + 1 == run.len();
                strip(&mut stmts[i], keep_fence, keep_wait);
            }
        }
        run.clear();
    };
    for i in 0..stmts.len() {
        match &stmts[i] {
            Stmt::Comment(_) => continue,
            Stmt::Block(b) => match lone_multiply(b) {
                Some(acc) if accumulator.as_ref().is_none_or(|a| *a == acc) || run.is_empty() => {
                    accumulator = Some(acc);
                    run.push(i);
                    continue;
                }
                Some(acc) => {
                    flush(&mut run, stmts);
                    accumulator = Some(acc);
                    run.push(i);
                    continue;
                }
                None => {}
            },
            _ => {}
        }
        flush(&mut run, stmts);
        accumulator = None;
    }
    flush(&mut run, stmts);
}

/// The accumulator of the one warp-group multiply `block` holds (through nested blocks),
/// with nothing else than its fence and wait, comments and the threads' ids.
fn lone_multiply(block: &[Stmt]) -> Option<Expr> {
    let mut found = None;
    for s in block {
        match s {
            Stmt::Comment(_) | Stmt::Decl(_) => {}
            Stmt::Expr(Expr::Call(f, _)) if f.starts_with(FENCE) || f.starts_with(WAIT) => {}
            Stmt::Expr(Expr::Call(f, args)) if f.starts_with(MULTIPLY) && found.is_none() => {
                found = Some(args.first()?.clone());
            }
            Stmt::Block(b) if found.is_none() => found = Some(lone_multiply(b)?),
            _ => return None,
        }
    }
    found
}

/// `s` without its fence (unless `fence`) and its wait (unless `wait`).
fn strip(s: &mut Stmt, fence: bool, wait: bool) {
    if let Stmt::Block(b) = s {
        b.retain(|s| match s {
            Stmt::Expr(Expr::Call(f, _)) if f.starts_with(FENCE) => fence,
            Stmt::Expr(Expr::Call(f, _)) if f.starts_with(WAIT) => wait,
            _ => true,
        });
        for s in b.iter_mut() {
            strip(s, fence, wait);
        }
    }
}

const FENCE: &str = "shine_wgmma_fence";
const WAIT: &str = "shine_wgmma_commit_wait";
const MULTIPLY: &str = "shine_wgmma_m64";

/// The symbolic row and column of an element of a two-dimensional operand
/// ([`Lowerer::symbolic_element`]).
struct Grid {
    row: Var,
    col: Var,
}

impl Grid {
    /// `n` at row `r`, column `c`.
    fn at(&self, n: &Nat, r: i64, c: i64) -> Nat {
        n.substitute(&self.row, &Nat::cst(r))
            .substitute(&self.col, &Nat::cst(c))
            .simplify()
    }

    /// The place `p` at row `r`, column `c`.
    fn place_at(&self, p: &MemPlace, r: i64, c: i64) -> MemPlace {
        let mut q = p.clone();
        q.place.flat = p.place.flat.as_ref().map(|f| self.at(f, r, c));
        q.place.lane = p.place.lane.as_ref().map(|l| self.at(l, r, c));
        q
    }

    /// The path to the symbolic element.
    fn path(&self) -> [PathElem; 2] {
        [
            PathElem::Idx(Nat::var(&self.row)),
            PathElem::Idx(Nat::var(&self.col)),
        ]
    }
}

/// The byte offset from the first element at which the instruction reads element `(r, c)`
/// of a tile starting `start` bytes into its 1024-byte block (`b`: of `B`, `r` is `k`).
fn expected(layout: Layout, start: i64, b: bool, r: i64, c: i64) -> i64 {
    let unswizzled = match (b, layout.mn_major) {
        // A: row r, k = c
        (false, _) => (r / 8) * layout.sbo + (r % 8) * 128 + 2 * c,
        // B K-major: its column c is a row of the stored transpose, k = r
        (true, false) => (c / 8) * layout.sbo + (c % 8) * 128 + 2 * r,
        // B MN-major: k = r rows of 64-element atoms
        (true, true) => (c / 64) * layout.lbo + (r / 8) * layout.sbo + (r % 8) * 128 + 2 * (c % 64),
    };
    swizzle_128(start + unswizzled) - swizzle_128(start)
}

/// The 128-byte swizzle of a shared-memory byte address: bits 4–6 flipped by bits 7–9.
fn swizzle_128(u: i64) -> i64 {
    u ^ (((u >> 7) & 7) << 4)
}

/// The scalar type of the elements of a tile (an array of arrays).
fn element_type(t: &DataType) -> DataType {
    match t {
        DataType::Array(_, e) => element_type(e),
        t => t.clone(),
    }
}

fn not_proven<T>(name: &str, why: &str) -> Res<T> {
    unsupported(format!(
        "`wgmma` reads its tile `{name}` from local memory in a layout its descriptor can \
         describe (128-byte swizzled rows: 16-byte chunk `c` of row `r` of each 8-row block \
         at chunk `c ^ (r % 8)`, the tile's first element in the first 128 bytes of a \
         1024-byte block); this one is not: {why}"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_swizzle_flips_chunk_bits_by_the_row_within_eight() {
        // chunk 1 of row 3 of an atom lies at chunk 1 ^ 3 = 2
        assert_eq!(swizzle_128(3 * 128 + 16), 3 * 128 + 32);
        assert_eq!(swizzle_128(0), 0);
        assert_eq!(
            swizzle_128(1024 + 5 * 128 + 7 * 16 + 2),
            1024 + 5 * 128 + 2 * 16 + 2
        );
    }

    #[test]
    fn the_expected_offsets_of_a_k_major_tile_follow_the_rows_and_atoms() {
        let l = Layout {
            lbo: 16,
            sbo: 1024,
            mn_major: false,
        };
        // the second k16 step of a 64-wide row starts 32 bytes in
        assert_eq!(expected(l, 32, false, 0, 1), 2);
        // row 1, k 0 of that step: byte 32 of row 1, chunk 2 ^ 1 = 3
        assert_eq!(expected(l, 32, false, 1, 0), 128 + 48 - 32);
        // row 8 is the next atom
        assert_eq!(expected(l, 0, false, 8, 0), 1024);
    }

    #[test]
    fn an_mn_major_b_steps_by_atoms_of_64_columns() {
        let l = Layout {
            lbo: 8192,
            sbo: 1024,
            mn_major: true,
        };
        assert_eq!(expected(l, 0, true, 0, 64), 8192);
        assert_eq!(expected(l, 0, true, 8, 0), 1024);
        // k row 1, chunk 1 of the 128-byte row: chunk 1 ^ 1 = 0
        assert_eq!(expected(l, 0, true, 1, 8), 128);
    }
}
