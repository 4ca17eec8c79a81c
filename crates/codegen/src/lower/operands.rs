//! Tensor-core operands loaded once for every multiply that uses them.
//!
//! A warp's tile of `mmaSync`s, unrolled, is a run of sibling blocks, one per multiply, each
//! declaring the lane's id and calling the multiply helper on its operands' registers (`A`'s
//! four, `B`'s two or one `ldmatrix`). Multiplies that share a fragment (the same rows of `A`
//! for every column tile) load it again: the loads are expressions of the call, and an
//! `ldmatrix` is `asm volatile`, which the CUDA compiler never merges (nor may it: that is what
//! keeps it after the barrier that makes its data visible).
//!
//! Inside a run of such blocks nothing writes memory but the multiplies' own results
//! (private accumulators), so a fragment is the same wherever the run reads it: each
//! distinct operand is loaded once, into a register declared before the first block that
//! uses it, and the blocks use the register. The blocks' lane ids all read the same lane,
//! so the operands are compared with one lane variable, declared before the run. An operand
//! that mentions anything the run writes is left where it is. The helpers are `asm volatile`
//! and stay in the order written, so each load is issued [`LOOKAHEAD`] multiplies before the
//! first one that needs it.

use std::collections::BTreeSet;

use crate::ast::{Decl, Expr, GpuIndex, Scalar, Stmt, Type};
use crate::names::NameSet;

/// The prefix of the tensor-core multiply helpers (see [`crate::tensor`]).
const MMA_HELPER: &str = "shine_mma_m16n8k16_";

/// How many multiplies ahead of the first that needs it an operand is loaded: a row of
/// column tiles, so that the next row's fragments are in flight while this row multiplies.
const LOOKAHEAD: usize = 8;

/// The number of a helper's trailing arguments that are the accumulator `C`.
const ACCUMULATOR_ARGS: usize = 4;

/// `stmts` (a kernel's body) with the operands of every run of multiplies loaded once.
pub(crate) fn reuse_operands(stmts: Vec<Stmt>, names: &mut NameSet) -> Vec<Stmt> {
    let stmts: Vec<Stmt> = stmts.into_iter().map(|s| inside(s, names)).collect();
    let mut out = Vec::with_capacity(stmts.len());
    let mut run: Vec<Stmt> = Vec::new();
    for s in stmts {
        if matches!(s, Stmt::Comment(_)) || lane_of(&s).is_some() {
            run.push(s);
            continue;
        }
        flush(&mut run, &mut out, names);
        out.push(s);
    }
    flush(&mut run, &mut out, names);
    out
}

/// The statement with the lists of statements inside it rewritten.
fn inside(s: Stmt, names: &mut NameSet) -> Stmt {
    match s {
        Stmt::Block(b) if lane_in(&b).is_none() => Stmt::Block(reuse_operands(b, names)),
        Stmt::For(mut f) => {
            f.body = reuse_operands(f.body, names);
            Stmt::For(f)
        }
        Stmt::If(c, a, b) => Stmt::If(c, reuse_operands(a, names), reuse_operands(b, names)),
        other => other,
    }
}

/// A multiply's block: `{ index lane = <lane id>; declarations and assignments, one of them
/// calling a multiply helper }`; its lane variable.
fn lane_of(s: &Stmt) -> Option<&str> {
    match s {
        Stmt::Block(items) => lane_in(items),
        _ => None,
    }
}

/// [`lane_of`] of a block's statements.
fn lane_in(items: &[Stmt]) -> Option<&str> {
    let (Stmt::Decl(lane), rest) = items.split_first()? else {
        return None;
    };
    let lane_id = matches!(lane.init, Some(Expr::Gpu(GpuIndex::LaneId, 0)))
        && lane.ty == Type::Scalar(Scalar::Index);
    let simple = rest
        .iter()
        .all(|s| matches!(s, Stmt::Decl(_) | Stmt::Assign(..) | Stmt::Comment(_)));
    let multiplies = rest.iter().any(is_mma_call);
    (lane_id && simple && multiplies).then_some(lane.name.as_str())
}

/// Whether `s` assigns the result of a multiply helper.
fn is_mma_call(s: &Stmt) -> bool {
    matches!(s, Stmt::Assign(_, Expr::Call(f, _)) if f.starts_with(MMA_HELPER))
}

/// Appends the run of multiplies (and comments) to `out`, its operands loaded once where
/// there are at least two multiplies.
fn flush(run: &mut Vec<Stmt>, out: &mut Vec<Stmt>, names: &mut NameSet) {
    let blocks = run.iter().filter(|s| lane_of(s).is_some()).count();
    if blocks < 2 {
        out.append(run);
        return;
    }
    let written = written(run);
    let lane = names.fresh("lane");
    // the run's statements, after the shared lane's declaration where they read it
    let whole = std::mem::take(out);
    let mut loaded: Vec<(Expr, String)> = Vec::new();
    let shared = Expr::Ident(lane.clone());
    // each statement of the run with the loads its multiply is the first to need
    let mut pieces: Vec<(Option<Vec<Stmt>>, Stmt)> = Vec::with_capacity(run.len());
    for s in run.drain(..) {
        let Stmt::Block(items) = s else {
            pieces.push((None, s));
            continue;
        };
        let Some(own_lane) = lane_in(&items).map(str::to_string) else {
            pieces.push((None, Stmt::Block(items)));
            continue;
        };
        let mut loads = Vec::new();
        let mut rewritten = Vec::with_capacity(items.len());
        for item in items {
            let Stmt::Assign(lhs, Expr::Call(f, args)) = item else {
                rewritten.push(item);
                continue;
            };
            if !f.starts_with(MMA_HELPER) {
                rewritten.push(Stmt::Assign(lhs, Expr::Call(f, args)));
                continue;
            }
            let operands = args.len().saturating_sub(ACCUMULATOR_ARGS);
            let mut new_args = Vec::with_capacity(args.len());
            for (k, arg) in args.into_iter().enumerate() {
                let arg = arg.replace_ident(&own_lane, &shared);
                let reads = crate::ast::idents(&[Stmt::Expr(arg.clone())]);
                if k >= operands || !reads.is_disjoint(&written) {
                    new_args.push(arg);
                    continue;
                }
                if let Some((_, name)) = loaded.iter().find(|(e, _)| *e == arg) {
                    new_args.push(Expr::Ident(name.clone()));
                    continue;
                }
                let name = names.fresh("frag");
                loads.push(Stmt::Decl(Decl {
                    ty: operand_type(&arg),
                    name: name.clone(),
                    array_len: None,
                    init: Some(arg.clone()),
                    addr: crate::ast::AddrSpace::Default,
                    align: None,
                }));
                loaded.push((arg, name.clone()));
                new_args.push(Expr::Ident(name));
            }
            rewritten.push(Stmt::Assign(lhs, Expr::Call(f, new_args)));
        }
        // the block's own lane id, where nothing reads it any more
        if !crate::ast::idents(&rewritten[1..]).contains(&own_lane) {
            rewritten.remove(0);
        }
        pieces.push((Some(loads), Stmt::Block(rewritten)));
    }
    // the loads issued LOOKAHEAD multiplies before the one that first needs them: the
    // helpers are `asm volatile`, which keeps them in this order
    let blocks: Vec<usize> = (0..pieces.len())
        .filter(|&i| pieces[i].0.is_some())
        .collect();
    let mut before: Vec<Vec<Stmt>> = vec![Vec::new(); pieces.len()];
    for (b, &at) in blocks.iter().enumerate() {
        let early = blocks[b.saturating_sub(LOOKAHEAD)];
        let loads = pieces[at].0.take().unwrap_or_default();
        before[early].extend(loads);
    }
    for ((_, s), loads) in pieces.into_iter().zip(before) {
        out.extend(loads);
        out.push(s);
    }
    let shared_run = std::mem::replace(out, whole);
    if crate::ast::idents(&shared_run).contains(&lane) {
        out.push(Stmt::Decl(Decl {
            ty: Type::Scalar(Scalar::Index),
            name: lane,
            array_len: None,
            init: Some(Expr::Gpu(GpuIndex::LaneId, 0)),
            addr: crate::ast::AddrSpace::Default,
            align: None,
        }));
    }
    out.extend(shared_run);
}

/// The C type of an operand: the register(s) it is, `uint4` for `A` by `ldmatrix ... .x4`,
/// `uint2` for `B` by `ldmatrix ... .x2.trans`, a 32-bit register otherwise.
fn operand_type(operand: &Expr) -> Type {
    let name = match operand {
        Expr::Call(f, _) if f == "shine_ldsm_x4" => "uint4",
        Expr::Call(f, _) if f == "shine_ldsm_x2_trans" => "uint2",
        _ => "unsigned",
    };
    Type::Named(name.into())
}

/// The variables the run assigns or declares (the multiplies' results, the accumulators).
fn written(run: &[Stmt]) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for s in run {
        let Stmt::Block(items) = s else { continue };
        for item in items {
            match item {
                Stmt::Decl(d) => {
                    out.insert(d.name.clone());
                }
                Stmt::Assign(lhs, _) => out.extend(crate::ast::idents(&[Stmt::Expr(lhs.clone())])),
                _ => {}
            }
        }
    }
    out
}
