//! Parallel scans (issue 27): a `scanSeq` over `n` elements split into `p` chunks of
//! consecutive elements that are scanned in parallel, the reduce-then-scan form of a
//! GPU prefix sum (Merrill and Garland, "Single-pass parallel prefix scan with
//! decoupled look-back", §3: *reduce-then-scan*). Its equation is its row in
//! [`super::RULES`]:
//!
//! 1. every chunk is reduced (in parallel: the chunks' sums),
//! 2. the `p` sums are scanned from the initial value, one behind (the exclusive
//!    scan: chunk `j`'s offset is the fold of the initial value and the sums of the
//!    chunks before it),
//! 3. every chunk is scanned from its offset (in parallel).
//!
//! `scanSeq f init xs` folds `acc_i = f x_i acc_(i-1)` from the left; the rule
//! regroups that fold at the chunk boundaries, so it holds only for an operator known
//! to be associative and commutative (the reductions' operators: `add`, `mul`, `min`,
//! `max`, `fmin`, `fmax`, or a lambda that is exactly one of them) whose neutral element
//! the rule knows for the element type (it pads the last chunk and starts every
//! chunk's sum). The initial value may be any value: it only starts the sums' scan.
//! Integers are exact (wrapping addition and multiplication are associative); a float
//! sum or product is regrouped, so it agrees with the interpreter within the
//! verification tolerance, as every parallel reduction does; a minimum or maximum is
//! exact. Any other operator is refused with the reason.
//!
//! **The tiled scan** (`scanTiled(b, k)` and `workGroupScan(b)`; the three-phase scan of
//! Harris, Sengupta and Owens, *GPU Gems 3* ch. 39, with Hillis and Steele's steps inside a
//! work-group) reads and writes every element coalesced:
//!
//! 1. `scanTiled(b, k)` splits the scan into tiles of `t = b·k` consecutive elements (the
//!    last padded with the neutral element), scans every tile from the neutral element,
//!    scans the tiles' totals (each scanned tile's last element) one behind from the
//!    initial value (tile `j`'s offset), and combines every element with its tile's offset
//!    (an elementwise map over the `n` results: neighbouring work-items, neighbouring
//!    elements);
//! 2. `workGroupScan(b)` scans one tile with `b` work-items in local memory: work-item `i`
//!    copies the tile's elements `i`, `i+b`, ... in, reduces its `k` consecutive elements,
//!    the `b` sums are scanned by `⌈log2 b⌉` Hillis-Steele steps (`s'_i = s_i ⊕ s_(i−d)`,
//!    `d = 1, 2, 4, ...`, each into a fresh local buffer: the barriers between the steps are
//!    the only synchronization), every work-item scans its `k` elements from its offset,
//!    and the tile is copied out as it was copied in. Where `k` is even and the tile a
//!    multiple of 32, both local copies of the tile are kept in an xor layout ([`Swizzle`]):
//!    the work-items' reads of their `k` consecutive elements fall into distinct banks.
//!
//! `scanTiles` (examples/gpu.elv) applies `scanTiled` again to the tiles' totals, so that
//! they too are scanned by work-groups (and only the `n/t²` totals of those sequentially).
//!
//! **The single-pass scan** (`singlePassScan(b, k)`; Merrill and Garland's decoupled
//! look-back, §4) reads and writes every element once: it turns the scan into the primitive
//! `scanLookback b t f init e (fun c => scanSeq f e c) xs`, whose meaning is the tiled scan
//! above (tiles of `t = b·k` elements padded with `e`, each scanned from `e`, tile `j`'s
//! offset the fold of `init` and the totals before it) and whose translation runs it in one
//! kernel: every work-group takes its tile's number from an atomic counter, scans the tile
//! (the tile's `scanSeq f e c` lowered by `workGroupScanInLocal(b)`: `workGroupScan`'s
//! steps, the scanned tile left in local memory, where the translation reads it),
//! publishes the tile's aggregate, looks back over its predecessors' published aggregates
//! and inclusive prefixes for its offset (the work-group's first warp, on CUDA 32
//! predecessors at once by votes and shuffles), publishes its own inclusive prefix and
//! writes the tile combined with its offset (`dpia::LookBack` gives the protocol). A tile's status and
//! value share one 64-bit word, so the elements must be 32-bit scalars (`i32`, `u32`,
//! `int`, `f32`).
//!
//! **The warps' tile scan** (`workGroupScanWarps(b)`, `b` a multiple of 32; CUDA only, as
//! the primitive `scanWarp` is) scans the same tile as `workGroupScanInLocal(b)` and leaves it
//! in local memory the same way, with the `b` sums scanned by warps instead of Hillis and
//! Steele's steps over local memory: each warp's lanes reduce their work-items' `k` elements
//! and scan the 32 sums by shuffles (`scanWarp`, into local memory), one warp scans the `b/32`
//! warps' totals (each warp's last scanned sum, padded to 32 with the neutral element), and
//! work-item `i`'s offset is the fold of the sums before it in its warp (its warp's scan one
//! behind) and the totals of the warps before its warp. Three local buffers and barriers in
//! place of `⌈log2 b⌉ + 2`; `scanLookbackWarp(b, k)` (examples/gpu.elv) is `singlePassScan`
//! with it. The warp scans regroup the sums as the Hillis-Steele steps do (exact for
//! integers, minima and maxima; floats within the tolerance). `workGroupScanWarpsDirect(b)`
//! makes no copy of the tile: every work-item reads its `k` consecutive elements where they
//! lie (for its sum, then again for its scan), so the scanned tile is the only one in local
//! memory (`scanLookbackWarpDirect(b, k)`: tiles of 8192 `f32` in 32 KiB).
//!
//! All of them need what `partialScan` needs (an associative, commutative operator with a
//! known neutral element); `workGroupScan` and `workGroupScanInLocal` also a scan that
//! starts from that element and a tile that is a constant multiple of `b`.

use super::reduction::{associative_commutative, is_neutral};
use crate::term::{applied, array, finish};
use crate::S;
use arith::Nat;
use elevate::{rule, Failure};
use rise::builder::*;
use rise::types::{Name, NatToNat, TypeArg};
use rise::{AddrSpace, DataType, Expr, Literal, Prim, Type};
use std::sync::Arc;

/// `partialScan(p)`: the scan of `p` chunks of consecutive elements, each reduced, the
/// sums scanned, and each chunk scanned from its offset (module docs).
pub(super) fn partial_scan(name: String, p: i64) -> S {
    rule(name.clone(), move |e: &Expr, ctx| {
        let Some(scan) = associative_scan(&name, e)? else {
            return Err(Failure::not_applicable());
        };
        let Scan {
            f,
            init,
            n,
            neutral,
            ..
        } = &scan;
        let chunk_len = ceil_div(n, p);
        let (chunks, pad) = padded_split(&scan, chunk_len.clone(), p);
        let (c, q) = (ctx.env.fresh("chunk"), ctx.env.fresh("q"));
        let sums = app2(
            prim(Prim::Map),
            lambda(
                &c,
                apps(
                    prim(Prim::Reduce),
                    [prim(scan.op), neutral.clone(), var(&c)],
                ),
            ),
            chunks.clone(),
        );
        let offsets = app(
            take(p),
            apps(
                prim(Prim::ScanSeq),
                [
                    (*f).clone(),
                    (*init).clone(),
                    app(pad_cst(1, 0, neutral.clone()), sums),
                ],
            ),
        );
        let scanned = app2(
            prim(Prim::Map),
            lambda(
                &q,
                apps(
                    prim(Prim::ScanSeq),
                    [(*f).clone(), fst(var(&q)), snd(var(&q))],
                ),
            ),
            zip(offsets, chunks),
        );
        let joined = app(join(), scanned);
        let rhs = if pad.as_cst() == Some(0) {
            joined
        } else {
            app(take(n.clone()), joined)
        };
        finish(rhs, e)
    })
}

/// A `scanSeq f init xs` whose operator is associative and commutative with a known
/// neutral element: its parts, the operator's primitive and that element.
struct Scan<'a> {
    f: &'a Expr,
    init: &'a Expr,
    xs: &'a Expr,
    n: Nat,
    elem: DataType,
    op: Prim,
    neutral: Expr,
}

/// `e` as a [`Scan`]: `None` where it is no `scanSeq` of an array, the reason where its
/// operator is not known to be associative and commutative or has no known neutral element.
fn associative_scan<'a>(name: &str, e: &'a Expr) -> Result<Option<Scan<'a>>, Failure<Expr>> {
    let Some((_, args)) = applied(e, |q| q == Prim::ScanSeq, 3) else {
        return Ok(None);
    };
    let (f, init, xs) = (args[0], args[1], args[2]);
    let Some((n, elem)) = xs.ty().and_then(array) else {
        return Ok(None);
    };
    let op = associative_commutative(f).ok_or_else(|| {
        refusal(
            name,
            format!(
                "the operator `{f}` is not known to be associative and commutative (add, mul, \
                 min, max, fmin, fmax, or a lambda that is exactly one of them), so its scan \
                 cannot be regrouped in chunks"
            ),
        )
    })?;
    let neutral = neutral_element(op, elem).ok_or_else(|| {
        refusal(
            name,
            format!(
                "no neutral element of `{}` on `{elem}` is known (the last chunk is padded \
                 with it and every chunk's sum starts from it)",
                op.name()
            ),
        )
    })?;
    Ok(Some(Scan {
        f,
        init,
        xs,
        n: n.clone(),
        elem: elem.clone(),
        op,
        neutral,
    }))
}

/// `⌈n/p⌉`.
fn ceil_div(n: &Nat, p: i64) -> Nat {
    (n.clone() + Nat::cst(p - 1))
        .floor_div(&Nat::cst(p))
        .simplify()
}

/// The scanned array in `count` chunks of `len` consecutive elements (`len·count ≥ n`), the
/// last padded with the neutral element: `split len (padCst 0 pad e xs)`, and `pad`.
fn padded_split(scan: &Scan<'_>, len: Nat, count: impl Into<Nat>) -> (Expr, Nat) {
    let pad = (len.clone() * count.into() - scan.n.clone()).simplify();
    let padded = if pad.as_cst() == Some(0) {
        scan.xs.clone()
    } else {
        app(
            pad_cst(0, pad.clone(), scan.neutral.clone()),
            scan.xs.clone(),
        )
    };
    (app(split(len), padded), pad)
}

/// `scanTiled(b, k)`: the scan of tiles of `t = b·k` consecutive elements (module docs,
/// the tiled scan): every tile scanned from the neutral element, the tiles' totals (their
/// last elements) scanned one behind from the initial value, and every element combined
/// with its tile's offset.
pub(super) fn scan_tiled(name: String, b: i64, k: i64) -> S {
    rule(name.clone(), move |e: &Expr, ctx| {
        let Some(scan) = associative_scan(&name, e)? else {
            return Err(Failure::not_applicable());
        };
        let t = tile_len(&name, b, k)?;
        let tiles = ceil_div(&scan.n, t);
        let (chunks, pad) = padded_split(&scan, Nat::cst(t), tiles.clone());
        let names = TiledNames {
            scanned: ctx.env.fresh("tiles"),
            offsets: ctx.env.fresh("offsets"),
            tile: ctx.env.fresh("tile"),
            offset: ctx.env.fresh("o"),
            pair: ctx.env.fresh("p"),
            index: ctx.env.fresh("i"),
        };
        finish(tiled(&scan, &names, chunks, t, tiles, &pad), e)
    })
}

/// `singlePassScan(b, k)`: the scan as one pass over tiles of `t = b·k` elements
/// (`scanLookback b t f init e (fun c => scanSeq f e c) xs`, module docs, the single-pass
/// scan): every tile scanned from the neutral element, its offset found by decoupled
/// look-back. The descriptors a tile publishes hold its value in 32 bits, so the elements
/// must be 32-bit scalars.
pub(super) fn single_pass_scan(name: String, b: i64, k: i64) -> S {
    rule(name.clone(), move |e: &Expr, ctx| {
        let Some(scan) = associative_scan(&name, e)? else {
            return Err(Failure::not_applicable());
        };
        let t = tile_len(&name, b, k)?;
        if !fits_a_descriptor(&scan.elem) {
            return Err(refusal(
                &name,
                format!(
                    "the elements are of type `{}`: a tile's descriptor holds its status and its \
                     value in one 64-bit word written atomically, so the value must be a 32-bit \
                     scalar (i32, u32, int or f32)",
                    scan.elem
                ),
            ));
        }
        let c = ctx.env.fresh("tile");
        let tile_scan = lambda(
            &c,
            apps(
                prim(Prim::ScanSeq),
                [scan.f.clone(), scan.neutral.clone(), var(&c)],
            ),
        );
        let lookback = dep_app_nat(dep_app_nat(prim(Prim::ScanLookback), b), t);
        let rhs = apps(
            lookback,
            [
                scan.f.clone(),
                scan.init.clone(),
                scan.neutral.clone(),
                tile_scan,
                scan.xs.clone(),
            ],
        );
        finish(rhs, e)
    })
}

/// Whether a value of type `t` fits the 32 value bits of a look-back descriptor.
fn fits_a_descriptor(t: &DataType) -> bool {
    use rise::ScalarType as S;
    matches!(t, DataType::Scalar(S::I32 | S::U32 | S::Int | S::F32))
}

/// The variables [`tiled`] binds.
struct TiledNames {
    scanned: Name,
    offsets: Name,
    tile: Name,
    offset: Name,
    pair: Name,
    index: Name,
}

/// `let (map (fun c => scanSeq f e c) C) (fun s => let O (fun o => map (fun p => op (fst p)
/// (snd p)) (zip (take n (join s)) (take n (join (map (fun o1 => generate (fun i => o1)) o))))))`
/// with `O = scanSeq f init (padCst 1 0 e (take (g−1) (join (map (drop (t−1)) s))))`: chunk
/// `j`'s offset is the fold of the initial value and the totals of the tiles before it.
fn tiled(scan: &Scan<'_>, v: &TiledNames, chunks: Expr, t: i64, g: Nat, pad: &Nat) -> Expr {
    let e = &scan.neutral;
    let scanned = app2(
        prim(Prim::Map),
        lambda(
            &v.tile,
            apps(
                prim(Prim::ScanSeq),
                [scan.f.clone(), e.clone(), var(&v.tile)],
            ),
        ),
        chunks,
    );
    let totals = app(join(), app2(prim(Prim::Map), drop_(t - 1), var(&v.scanned)));
    let before = app(take((g.clone() - Nat::cst(1)).simplify()), totals);
    let offsets = apps(
        prim(Prim::ScanSeq),
        [
            scan.f.clone(),
            scan.init.clone(),
            app(pad_cst(1, 0, e.clone()), before),
        ],
    );
    let tile_type = Type::Data(DataType::Array(Nat::cst(t), Arc::new(scan.elem.clone())));
    let repeated = app2(
        prim(Prim::Map),
        lambda(
            &v.offset,
            annot(generate(lambda(&v.index, var(&v.offset))), tile_type),
        ),
        var(&v.offsets),
    );
    let cut = |a: Expr| {
        if pad.as_cst() == Some(0) {
            a
        } else {
            app(take(scan.n.clone()), a)
        }
    };
    let combined = app2(
        prim(Prim::Map),
        lambda(
            &v.pair,
            app2(prim(scan.op), fst(var(&v.pair)), snd(var(&v.pair))),
        ),
        zip(
            cut(app(join(), var(&v.scanned))),
            cut(app(join(), repeated)),
        ),
    );
    let with_offsets = app2(prim(Prim::Let), offsets, lambda(&v.offsets, combined));
    app2(prim(Prim::Let), scanned, lambda(&v.scanned, with_offsets))
}

/// The most work-items of a work-group (CUDA's limit; OpenCL devices report theirs).
const MAX_WORK_ITEMS: i64 = 1024;

/// The most elements of a tile: the tile and its scan live in local memory (for `f32`,
/// 4·8192 bytes are 32 KiB: one copy of the tile fits the 48 KiB of static local memory
/// CUDA allows; where a strategy keeps two, a CUDA kernel takes 64 KiB of dynamic shared
/// memory, and an OpenCL device with less local memory refuses to build or run it).
const MAX_TILE: i64 = 8192;

/// `b·k`, or why `b` and `k` make no tile.
fn tile_len(name: &str, b: i64, k: i64) -> Result<i64, Failure<Expr>> {
    if b > MAX_WORK_ITEMS {
        return Err(refusal(
            name,
            format!("a work-group of {b} work-items is more than the {MAX_WORK_ITEMS} a GPU runs"),
        ));
    }
    match b.checked_mul(k) {
        Some(t) if t <= MAX_TILE => Ok(t),
        _ => Err(refusal(
            name,
            format!(
                "a tile of {b}·{k} elements is more than {MAX_TILE} (a tile and its scan are \
                 kept in local memory)"
            ),
        )),
    }
}

/// `workGroupScan(b)`: the scan of a tile of `b·k` elements from the neutral element by a
/// work-group of `b` work-items in local memory (module docs, the tiled scan).
pub(super) fn work_group_scan(name: String, b: i64) -> S {
    work_group_scan_to(name, b, ScannedTile::CopiedOut)
}

/// `workGroupScanInLocal(b)`: `workGroupScan(b)` without the copy out: the scanned tile is
/// the local memory its work-items scanned into, read where it lies by a reader in the same
/// work-group (`scanLookback`'s look-back and combined write).
pub(super) fn work_group_scan_in_local(name: String, b: i64) -> S {
    work_group_scan_to(name, b, ScannedTile::InLocal)
}

/// `workGroupScanWarps(b)`: the scan of a tile of `b·k` elements from the neutral element by
/// a work-group of `b` work-items (`b` a multiple of 32) whose warps scan the work-items'
/// sums by shuffles (module docs, the warps' tile scan); the scanned tile is left in local
/// memory, as `workGroupScanInLocal(b)` leaves it.
pub(super) fn work_group_scan_warps(name: String, b: i64) -> S {
    work_group_scan_warps_from(name, b, TileSource::Local)
}

/// `workGroupScanWarpsDirect(b)`: `workGroupScanWarps(b)` with every work-item reading its
/// `k` consecutive elements from the tile where it lies (twice: for its sum, then for its
/// scan), not from a copy in local memory: the scanned tile is the only copy in local
/// memory.
pub(super) fn work_group_scan_warps_direct(name: String, b: i64) -> S {
    work_group_scan_warps_from(name, b, TileSource::Direct)
}

/// Where the work-items of a warps' tile scan read their elements.
#[derive(Clone, Copy, PartialEq)]
enum TileSource {
    /// A copy of the tile in local memory, made coalesced.
    Local,
    /// The tile itself, each work-item its `k` consecutive elements.
    Direct,
}

fn work_group_scan_warps_from(name: String, b: i64, source: TileSource) -> S {
    rule(name.clone(), move |e: &Expr, ctx| {
        let Some(scan) = associative_scan(&name, e)? else {
            return Err(Failure::not_applicable());
        };
        if b % WARP != 0 || !(WARP..=MAX_WORK_ITEMS).contains(&b) {
            return Err(refusal(
                &name,
                format!(
                    "{b} work-items are no whole number of warps of {WARP} from {WARP} to \
                     {MAX_WORK_ITEMS} (each warp scans {WARP} sums, one warp the warps' totals)"
                ),
            ));
        }
        let k = tile_rows(&name, &scan, b)?;
        tile_len(&name, b, k)?;
        finish(warps_scan(&scan, b, k, source, &mut ctx.env), e)
    })
}

/// The lanes of a warp.
const WARP: i64 = 32;

/// The work-group's scan of `xs : (b·k).t` by warps (module docs): copied to local memory
/// coalesced (in the [`Swizzle`] layout where it applies) or read where it lies (`source`),
/// each work-item's `k` consecutive elements reduced by its lane and the warps' `32` sums
/// scanned by shuffles into local memory, the warps' totals scanned by one warp, and each
/// work-item's elements scanned from the fold of the sums before it in its warp and the
/// totals of the warps before (the scanned tile left in local memory, in the layout).
fn warps_scan(
    scan: &Scan<'_>,
    b: i64,
    k: i64,
    source: TileSource,
    env: &mut rise::NameGen,
) -> Expr {
    let z = &scan.neutral;
    let op = || prim(scan.op);
    let layout = Swizzle::for_tile(b * k, k, env);
    let [tile, sums, totals, rows, w, v, r, q, p, o, i, u] = [
        "local", "sums", "totals", "rows", "w", "v", "r", "q", "p", "o", "i", "u",
    ]
    .map(|n| env.fresh(n));
    let tile_rows = || match source {
        TileSource::Local => app(split(k), layout.read(var(&tile))),
        TileSource::Direct => app(split(k), scan.xs.clone()),
    };
    let warps = b / WARP;
    // each warp's lanes: its work-items' sums, scanned
    let lane_sums = app2(
        prim(Prim::MapLane),
        lambda(&r, apps(prim(Prim::Reduce), [op(), z.clone(), var(&r)])),
        var(&w),
    );
    let warp_scans = app(
        join(),
        app2(
            prim(Prim::MapWarp),
            lambda(&w, app2(prim(Prim::ScanWarp), op(), lane_sums)),
            app(split(WARP), tile_rows()),
        ),
    );
    // the warps' totals (each warp's last scanned sum), scanned by one warp
    let warp_totals = app(
        join(),
        app2(
            prim(Prim::Map),
            drop_(WARP - 1),
            app(split(WARP), var(&sums)),
        ),
    );
    let totals_scan = app(
        join(),
        app2(
            prim(Prim::MapWarp),
            lambda(&v, app2(prim(Prim::ScanWarp), op(), var(&v))),
            app(
                split(WARP),
                app(pad_cst(0, WARP - warps, z.clone()), warp_totals),
            ),
        ),
    );
    // work-item i's offset: its warp's sums before it, then the warps' totals before its warp
    let in_warp = app(
        join(),
        app2(
            prim(Prim::Map),
            lambda(
                &u,
                app(pad_cst(1, 0, z.clone()), app(take(WARP - 1), var(&u))),
            ),
            app(split(WARP), var(&sums)),
        ),
    );
    let lane_type = Type::Data(DataType::Array(Nat::cst(WARP), Arc::new(scan.elem.clone())));
    let before_warp = app(
        join(),
        app2(
            prim(Prim::Map),
            lambda(&o, annot(generate(lambda(&i, var(&o))), lane_type)),
            app(take(warps), app(pad_cst(1, 0, z.clone()), var(&totals))),
        ),
    );
    let offsets = app2(
        prim(Prim::Map),
        lambda(&p, app2(op(), fst(var(&p)), snd(var(&p)))),
        zip(in_warp, before_warp),
    );
    let scanned = app2(
        map_local(),
        lambda(
            &q,
            apps(
                prim(Prim::ScanSeq),
                [scan.f.clone(), fst(var(&q)), snd(var(&q))],
            ),
        ),
        zip(offsets, tile_rows()),
    );
    let body = to_mem(
        AddrSpace::Local,
        layout.write(app(join(), scanned)),
        lambda(&rows, layout.read(var(&rows))),
    );
    let body = to_mem(AddrSpace::Local, totals_scan, lambda(&totals, body));
    let body = to_mem(AddrSpace::Local, warp_scans, lambda(&sums, body));
    if source == TileSource::Direct {
        return body;
    }
    let copied = layout.write(coalesced_copy(b, scan.xs.clone(), env));
    to_mem(AddrSpace::Local, copied, lambda(&tile, body))
}

/// Where a work-group's scan leaves the scanned tile.
#[derive(Clone, Copy, PartialEq)]
enum ScannedTile {
    /// Copied out by the work-items (coalesced), wherever it is written.
    CopiedOut,
    /// In the local memory it was scanned into.
    InLocal,
}

fn work_group_scan_to(name: String, b: i64, result: ScannedTile) -> S {
    rule(name.clone(), move |e: &Expr, ctx| {
        let Some(scan) = associative_scan(&name, e)? else {
            return Err(Failure::not_applicable());
        };
        let k = tile_rows(&name, &scan, b)?;
        tile_len(&name, b, k)?;
        finish(local_scan(&scan, b, k, result, &mut ctx.env), e)
    })
}

/// `k`, the elements of each of `b` work-items, where the scan starts from the neutral
/// element and its tile has `b·k` elements; the reason otherwise.
fn tile_rows(name: &str, scan: &Scan<'_>, b: i64) -> Result<i64, Failure<Expr>> {
    if !is_neutral(scan.op, scan.init) {
        return Err(refusal(
            name,
            format!(
                "the initial value `{}` is not the neutral element `{}` of `{}` (the \
                 work-items' partial scans start from it)",
                scan.init,
                scan.neutral,
                scan.op.name()
            ),
        ));
    }
    match scan.n.as_cst() {
        Some(t) if t > 0 && t % b == 0 => Ok(t / b),
        _ => Err(refusal(
            name,
            format!(
                "the tile has {} elements, not a constant multiple of the {b} work-items",
                scan.n
            ),
        )),
    }
}

/// The work-group's scan of `xs : (b·k).t` (module docs): copied to local memory
/// coalesced, each work-item's `k` consecutive elements reduced, the `b` sums scanned by
/// Hillis and Steele's `⌈log2 b⌉` steps, each work-item's elements scanned from its
/// offset, and the tile copied out coalesced. Both local copies of the tile are kept in
/// the [`Swizzle`] layout where it applies.
fn local_scan(
    scan: &Scan<'_>,
    b: i64,
    k: i64,
    result: ScannedTile,
    env: &mut rise::NameGen,
) -> Expr {
    let z = &scan.neutral;
    let layout = Swizzle::for_tile(b * k, k, env);
    let (tile, rows, r, q) = (
        env.fresh("local"),
        env.fresh("rows"),
        env.fresh("r"),
        env.fresh("q"),
    );
    let tile_rows = || app(split(k), layout.read(var(&tile)));
    let sums = app2(
        map_local(),
        lambda(
            &r,
            apps(prim(Prim::Reduce), [prim(scan.op), z.clone(), var(&r)]),
        ),
        tile_rows(),
    );
    // the Hillis-Steele steps: `sums_(j+1) = map op (zip sums_j (sums_j shifted by 2^j))`
    let mut stages = vec![(env.fresh("sums"), sums)];
    let mut d = 1;
    while d < b {
        let (prev, _) = &stages[stages.len() - 1];
        let step = hillis_steele_step(scan, b, d, prev, &env.fresh("p"));
        stages.push((env.fresh("sums"), step));
        d *= 2;
    }
    let (last, _) = &stages[stages.len() - 1];
    let offsets = app(pad_cst(1, 0, z.clone()), app(take(b - 1), var(last)));
    let scanned = app2(
        map_local(),
        lambda(
            &q,
            apps(
                prim(Prim::ScanSeq),
                [scan.f.clone(), fst(var(&q)), snd(var(&q))],
            ),
        ),
        zip(offsets, tile_rows()),
    );
    let copied_out = match result {
        ScannedTile::CopiedOut => coalesced_copy(b, layout.read(var(&rows)), env),
        ScannedTile::InLocal => layout.read(var(&rows)),
    };
    let mut body = to_mem(
        AddrSpace::Local,
        layout.write(app(join(), scanned)),
        lambda(&rows, copied_out),
    );
    for (name, value) in stages.into_iter().rev() {
        body = to_mem(AddrSpace::Local, value, lambda(&name, body));
    }
    let copied = layout.write(coalesced_copy(b, scan.xs.clone(), env));
    to_mem(AddrSpace::Local, copied, lambda(&tile, body))
}

/// The layout of a tile in local memory: its element `p` at `σ(p) = 32·⌊p/32⌋ + ((p mod
/// 32) xor (⌊p/32⌋ mod 32))`, a permutation of every 32 consecutive places (its own
/// inverse). Work-item `i` reads its `k` consecutive elements `k·i + j` in step `j`: in the
/// plain layout a warp's 32 reads fall into `32/k` banks (`k` even: a `k`-way conflict,
/// 16-way for `k = 16`), in this one into 32 banks for `k` a power of two up to 32; the
/// coalesced copies (a warp at 32 consecutive elements) stay conflict-free. Used where `k`
/// is even and the tile a multiple of 32; elsewhere the plain layout.
enum Swizzle {
    Plain,
    Xor(NatToNat),
}

impl Swizzle {
    fn for_tile(t: i64, k: i64, env: &mut rise::NameGen) -> Swizzle {
        if k % 2 != 0 || t % 32 != 0 {
            return Swizzle::Plain;
        }
        let p = arith::Var::new(env.fresh("p"));
        let (at, banks) = (Nat::var(&p), Nat::cst(32));
        let row = at.floor_div(&banks);
        let place = row.clone() * banks.clone() + at.modulo(&banks).xor(&row.modulo(&banks));
        Swizzle::Xor(NatToNat::Lambda(p, place))
    }

    /// `xs` stored in this layout: the array whose place `σ(p)` holds `xs`'s element `p`.
    fn write(&self, xs: Expr) -> Expr {
        self.reorder(xs)
    }

    /// The tile in its own order, read from `stored` (an array written by [`Self::write`]).
    fn read(&self, stored: Expr) -> Expr {
        self.reorder(stored)
    }

    /// `reorder σ σ xs` (σ is its own inverse).
    fn reorder(&self, xs: Expr) -> Expr {
        match self {
            Swizzle::Plain => xs,
            Swizzle::Xor(sigma) => {
                let f = TypeArg::NatToNat(sigma.clone());
                app(dep_app(dep_app(prim(Prim::Reorder), f.clone()), f), xs)
            }
        }
    }
}

/// One Hillis-Steele step over `b` values at distance `d`: `mapLocal(0) (fun p => op (fst
/// p) (snd p)) (zip s (padCst d 0 e (take (b−d) s)))`.
fn hillis_steele_step(scan: &Scan<'_>, b: i64, d: i64, s: &str, p: &str) -> Expr {
    let shifted = app(
        pad_cst(d, 0, scan.neutral.clone()),
        app(take(b - d), var(s)),
    );
    app2(
        map_local(),
        lambda(p, app2(prim(scan.op), fst(var(p)), snd(var(p)))),
        zip(var(s), shifted),
    )
}

/// `xs : (b·k).t` copied by `b` work-items, work-item `i` its elements `i`, `i+b`, ...
/// (neighbouring work-items neighbouring elements), into the same order: `join (transpose
/// (mapLocal(0) (fun c => mapSeq (fun x => x) c) (transpose (split b xs))))`.
fn coalesced_copy(b: i64, xs: Expr, env: &mut rise::NameGen) -> Expr {
    let (c, x) = (env.fresh("c"), env.fresh("x"));
    let columns = app2(
        map_local(),
        lambda(&c, app(map_seq(lambda(&x, var(&x))), var(&c))),
        app(transpose(), app(split(b), xs)),
    );
    app(join(), app(transpose(), columns))
}

fn map_local() -> Expr {
    prim(Prim::MapLocal0)
}

fn refusal(rule: &str, why: String) -> Failure<Expr> {
    Failure::not_applicable_because(format!("{rule}: {why}"))
}

/// The neutral element of the operator `op` on scalars of type `t`: `0` for `add`, `1`
/// for `mul`, `+inf`/`-inf` or the type's largest/smallest value for `min`/`max`, and
/// `+inf`/`-inf` for `fmin`/`fmax` (`None` for other types, or a bound `i64` cannot hold).
fn neutral_element(op: Prim, t: &DataType) -> Option<Expr> {
    let DataType::Scalar(s) = t else {
        return None;
    };
    let s = *s;
    if s.is_float() {
        let v = match op {
            Prim::Add => 0.0,
            Prim::Mul => 1.0,
            Prim::Min | Prim::Fmin => f64::INFINITY,
            Prim::Max | Prim::Fmax => f64::NEG_INFINITY,
            _ => return None,
        };
        return Some(lit(Literal::Float(v, s)));
    }
    let (lo, hi) = s.int_range()?;
    let v: i128 = match op {
        Prim::Add => 0,
        Prim::Mul => 1,
        Prim::Min => hi,
        Prim::Max => lo,
        _ => return None,
    };
    Some(lit(Literal::Int(i64::try_from(v).ok()?, s)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use rise::ScalarType;

    #[test]
    fn neutral_elements_are_the_identities_of_their_operators() {
        let f32 = DataType::Scalar(ScalarType::F32);
        let i32 = DataType::Scalar(ScalarType::I32);
        let u64 = DataType::Scalar(ScalarType::U64);
        let shown = |op, t| neutral_element(op, t).map(|e| e.to_string());
        assert_eq!(shown(Prim::Add, &f32).as_deref(), Some("0.0f"));
        assert_eq!(shown(Prim::Max, &i32).as_deref(), Some("-2147483648i32"));
        assert_eq!(shown(Prim::Min, &i32).as_deref(), Some("2147483647i32"));
        assert_eq!(shown(Prim::Max, &u64).as_deref(), Some("0u64"));
        assert_eq!(
            shown(Prim::Min, &u64),
            None,
            "u64's largest value is no i64"
        );
        assert_eq!(shown(Prim::Fmax, &i32), None);
    }
}
