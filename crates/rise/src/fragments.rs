//! The register layouts of the warp-level matrix multiply-accumulate `mmaSync`
//! (PTX `mma.sync.aligned.m16n8k16.row.col.f32.{f16,bf16}.{f16,bf16}.f32`).
//!
//! The 32 lanes of a warp together hold a 16×16 tile `A` (row-major, m×k), a 16×8
//! tile `B` (k×n) and a 16×8 accumulator `C` (m×n), each lane a few elements of
//! each: lane `l` is the group `g = l / 4` and the lane `q = l % 4` in its group.
//! A *fragment* is the array `32.k.t` whose row `l` is what lane `l` holds, in
//! the order of its registers. The functions here give, for lane `l` and register
//! element `i`, the tile element that it is; the interpreter's `mmaSync` reads its
//! operands through them, and the views `fragA`, `fragB`, `fragC` and `unfragC` of
//! the tensor-core library are these layouts written with `split`, `transpose` and
//! `join` (a test checks that both agree).
//!
//! | fragment | elements per lane | element `i` of lane `l` |
//! | --- | --- | --- |
//! | `A` (`32.8.t` of `16.16.t`) | 8 | row `g + 8·((i/2) mod 2)`, column `2q + i mod 2 + 8·(i/4)` |
//! | `B` (`32.4.t` of `16.8.t`) | 4 | row (k) `2q + i mod 2 + 8·(i/2)`, column (n) `g` |
//! | `C`, `D` (`32.4.f32` of `16.8.f32`) | 4 | row `g + 8·(i/2)`, column `2q + i mod 2` |

/// Lanes of a warp.
pub const LANES: usize = 32;
/// Rows of `A`, `C` and `D` (the `m` of m16n8k16).
pub const M: usize = 16;
/// Columns of `B`, `C` and `D` (the `n`).
pub const N: usize = 8;
/// Columns of `A`, rows of `B` (the `k`).
pub const K: usize = 16;
/// Elements of `A` per lane.
pub const A_PER_LANE: usize = M * K / LANES;
/// Elements of `B` per lane.
pub const B_PER_LANE: usize = K * N / LANES;
/// Elements of `C` (and `D`) per lane.
pub const C_PER_LANE: usize = M * N / LANES;

/// `(group, lane in group)` of lane `l`.
fn group(l: usize) -> (usize, usize) {
    (l / 4, l % 4)
}

/// The `(row, column)` of `A` that element `i` of lane `l` holds.
pub fn a_element(l: usize, i: usize) -> (usize, usize) {
    let (g, q) = group(l);
    (g + 8 * ((i / 2) % 2), 2 * q + i % 2 + 8 * (i / 4))
}

/// The `(row, column)` (`(k, n)`) of `B` that element `i` of lane `l` holds.
pub fn b_element(l: usize, i: usize) -> (usize, usize) {
    let (g, q) = group(l);
    (2 * q + i % 2 + 8 * (i / 2), g)
}

/// The `(row, column)` of `C` (and of the result `D`) that element `i` of lane `l` holds.
pub fn c_element(l: usize, i: usize) -> (usize, usize) {
    let (g, q) = group(l);
    (g + 8 * (i / 2), 2 * q + i % 2)
}

/// Warps of a warp group (Hopper's `wgmma`: 128 threads).
pub const GROUP_WARPS: usize = 4;
/// Rows of a warp group's `A` and accumulator (the `m` of `wgmma.m64nNk16`).
pub const GROUP_M: usize = 16 * GROUP_WARPS;

/// The `(row, column)` of a warp group's accumulator (`64×8c`, `wgmma.m64nNk16` with
/// `N = 8c`) that element `i` of chunk `j` of lane `l` of warp `w` holds: warp `w` holds
/// rows `16w..16w+16` as `mmaSync`'s accumulator fragments, one per 8 columns (chunk `j`
/// is columns `8j..8j+8`), in the order of the instruction's registers (`d[4j + i]`).
pub fn group_c_element(w: usize, l: usize, j: usize, i: usize) -> (usize, usize) {
    let (r, n) = c_element(l, i);
    (16 * w + r, 8 * j + n)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    /// Every layout places each tile element in exactly one lane's register.
    #[test]
    fn layouts_are_bijections() {
        let cover = |per_lane: usize, f: fn(usize, usize) -> (usize, usize)| {
            (0..LANES)
                .flat_map(|l| (0..per_lane).map(move |i| f(l, i)))
                .collect::<BTreeSet<_>>()
        };
        let a = cover(A_PER_LANE, a_element);
        assert_eq!(a.len(), M * K);
        assert!(a.iter().all(|&(r, c)| r < M && c < K));
        let b = cover(B_PER_LANE, b_element);
        assert_eq!(b.len(), K * N);
        assert!(b.iter().all(|&(r, c)| r < K && c < N));
        let c = cover(C_PER_LANE, c_element);
        assert_eq!(c.len(), M * N);
        assert!(c.iter().all(|&(r, col)| r < M && col < N));
    }

    /// A warp group's accumulator of 64×(8c) places every element once.
    #[test]
    fn the_group_accumulator_is_a_bijection() {
        let chunks = 3;
        let cover: BTreeSet<_> = (0..GROUP_WARPS)
            .flat_map(|w| {
                (0..LANES).flat_map(move |l| {
                    (0..chunks).flat_map(move |j| {
                        (0..C_PER_LANE).map(move |i| group_c_element(w, l, j, i))
                    })
                })
            })
            .collect();
        assert_eq!(cover.len(), GROUP_M * 8 * chunks);
        assert!(cover.iter().all(|&(r, c)| r < GROUP_M && c < 8 * chunks));
        // warp 2, lane 5 (group 1, lane 1), chunk 3, element 2: row 32 + 9, column 24 + 2
        assert_eq!(group_c_element(2, 5, 3, 2), (41, 26));
    }

    /// The PTX ISA's table for lane 5 (group 1, lane 1 in the group).
    #[test]
    fn lane_five_matches_the_isa() {
        assert_eq!(a_element(5, 0), (1, 2));
        assert_eq!(a_element(5, 3), (9, 3));
        assert_eq!(a_element(5, 6), (9, 10));
        assert_eq!(b_element(5, 0), (2, 1));
        assert_eq!(b_element(5, 3), (11, 1));
        assert_eq!(c_element(5, 1), (1, 3));
        assert_eq!(c_element(5, 2), (9, 2));
    }
}
