//! Place analyses: which memory, and which part of it, an expression reads or
//! an acceptor writes, seen through views (for in-place accumulators).

use super::*;
use crate::query::acc_root;

/// Whether `step`, which writes an accumulator in memory `name` while reading it,
/// reads and writes one and the same part of it, wherever it touches it (as
/// `acc[i] = acc[i] + x[i]` does, or an inner reduction that reads `acc[i]` into
/// its own accumulator and writes it back to `acc[i]`). Then every part is read
/// before it is written and it may be updated in place; otherwise a part could be
/// read after it was overwritten (`(snd acc + x, fst acc)`, a rotation of an array).
/// A tensor-core multiply (`mmaSync`'s lane loop, `wgmma`'s warp and lane loops) reads all
/// of its lane's row before it writes any of it: the row is the one part it touches.
pub(super) fn updates_in_place_safely(step: &Comm, name: &str) -> bool {
    fn touched(c: &Comm, name: &str, out: &mut Vec<Option<Vec<PathElem>>>) {
        match c {
            Comm::Skip | Comm::Barrier { .. } | Comm::AsyncCommit | Comm::AsyncWait(_) => {}
            Comm::Seq(cs) => cs.iter().for_each(|c| touched(c, name, out)),
            Comm::For {
                var, body, origin, ..
            } if *origin == Prim::MmaSync.name() || *origin == Prim::Wgmma.name() => {
                let mut inner = Vec::new();
                touched(body, name, &mut inner);
                out.extend(lane_rows(inner, var));
            }
            Comm::New { body, .. }
            | Comm::For { body, .. }
            | Comm::IfLess { body, .. }
            | Comm::AsyncCopy(body) => touched(body, name, out),
            Comm::NatLet { value, body, .. } => {
                places_read(value, name, out);
                touched(body, name, out)
            }
            Comm::Assign(a, e) => {
                places_read(e, name, out);
                if acc_root(a) == name {
                    out.push(acc_place(a, Vec::new()).map(|(_, at)| at));
                }
            }
        }
    }
    let mut places = Vec::new();
    touched(step, name, &mut places);
    let one_place = match places.split_first() {
        None => true,
        Some((first, rest)) => first.is_some() && rest.iter().all(|p| p == first),
    };
    one_place || reads_before_writes_per_part(step, name)
}

/// Whether `c` reads every part of memory `name` it touches before it writes any of
/// it, part by part: a loop whose iterations touch disjoint parts (each place indexed
/// by the loop's variable at the same position, below the same path) is checked one
/// iteration at a time, and in a sequence no command reads the memory after one that
/// wrote it. A register block that copies its part of the accumulator into its own,
/// updates that and copies it back (`blisKC`'s blocks) is such an update.
fn reads_before_writes_per_part(c: &Comm, name: &str) -> bool {
    let (reads, writes) = reads_and_writes(c, name);
    if reads.is_empty() || writes.is_empty() {
        return true;
    }
    match c {
        Comm::New { body, .. } => reads_before_writes_per_part(body, name),
        Comm::For {
            var, body, origin, ..
        } if *origin != Prim::MmaSync.name() => {
            let places: Vec<_> = reads.into_iter().chain(writes).collect();
            iterations_touch_disjoint_parts(&places, var)
                && reads_before_writes_per_part(body, name)
        }
        Comm::Seq(cs) => {
            let mut written = false;
            for c in cs {
                let (reads, writes) = reads_and_writes(c, name);
                if written && !reads.is_empty() {
                    return false;
                }
                if !reads_before_writes_per_part(c, name) {
                    return false;
                }
                written |= !writes.is_empty();
            }
            true
        }
        _ => false,
    }
}

/// Whether every one of `places` is indexed by the loop variable `var` at the same
/// position (a place is a path of indices from the memory's outermost dimension, so
/// the same position, below the same steps, is the same dimension): then different
/// iterations touch disjoint parts, whatever the indices above it (a register
/// block's rows in a row-major accumulator are at different rows, each at the
/// block's column).
fn iterations_touch_disjoint_parts(places: &[Option<Vec<PathElem>>], var: &Var) -> bool {
    let at = |p: &Vec<PathElem>| {
        p.iter()
            .position(|s| matches!(s, PathElem::Idx(i) if i.as_var() == Some(var)))
    };
    let Some(Some(first)) = places.first() else {
        return false;
    };
    let Some(pos) = at(first) else {
        return false;
    };
    // above it, the same steps, except that indices may differ
    let same_dimension = |a: &PathElem, b: &PathElem| {
        a == b || matches!((a, b), (PathElem::Idx(_), PathElem::Idx(_)))
    };
    places.iter().all(|p| {
        p.as_ref().is_some_and(|p| {
            at(p) == Some(pos)
                && p[..pos]
                    .iter()
                    .zip(&first[..pos])
                    .all(|(a, b)| same_dimension(a, b))
        })
    })
}

/// The places of memory `name` that `c` reads, and those it writes.
type Places = Vec<Option<Vec<PathElem>>>;
fn reads_and_writes(c: &Comm, name: &str) -> (Places, Places) {
    fn walk(c: &Comm, name: &str, reads: &mut Places, writes: &mut Places) {
        match c {
            Comm::Skip | Comm::Barrier { .. } | Comm::AsyncCommit | Comm::AsyncWait(_) => {}
            Comm::Seq(cs) => cs.iter().for_each(|c| walk(c, name, reads, writes)),
            Comm::New { body, .. }
            | Comm::For { body, .. }
            | Comm::IfLess { body, .. }
            | Comm::AsyncCopy(body) => walk(body, name, reads, writes),
            Comm::NatLet { value, body, .. } => {
                places_read(value, name, reads);
                walk(body, name, reads, writes)
            }
            Comm::Assign(a, e) => {
                places_read(e, name, reads);
                if acc_root(a) == name {
                    writes.push(acc_place(a, Vec::new()).map(|(_, at)| at));
                }
            }
        }
    }
    let (mut reads, mut writes) = (Vec::new(), Vec::new());
    walk(c, name, &mut reads, &mut writes);
    (reads, writes)
}

/// `places` (of an `mmaSync` lane loop whose lane is `lane`) as the one row of the lane
/// they are all in, if they are (the same path down to an index that is the lane).
fn lane_rows(places: Vec<Option<Vec<PathElem>>>, lane: &Var) -> Vec<Option<Vec<PathElem>>> {
    let row = |p: &Option<Vec<PathElem>>| {
        let p = p.as_ref()?;
        let at = p
            .iter()
            .position(|s| matches!(s, PathElem::Idx(i) if i.as_var() == Some(lane)))?;
        Some(p[..=at].to_vec())
    };
    let rows: Vec<Option<Vec<PathElem>>> = places.iter().map(row).collect();
    match rows.split_first() {
        Some((Some(first), rest)) if rest.iter().all(|r| r.as_ref() == Some(first)) => {
            vec![Some(first.clone())]
        }
        _ => places,
    }
}

/// The places of memory `name` that `x` reads (`None`: a read whose place the
/// views do not show).
fn places_read(x: &Exp, name: &str, out: &mut Vec<Option<Vec<PathElem>>>) {
    reads(
        x,
        Some(Vec::new()),
        &std::collections::HashMap::new(),
        name,
        out,
    )
}

/// [`places_read`] below a path into `x`'s value (a stack, as in [`exp_place`];
/// `None` where it is not known), with `env` the indices `generate` variables
/// stand for.
fn reads(
    x: &Exp,
    path: Option<Vec<PathElem>>,
    env: &std::collections::HashMap<Var, Nat>,
    name: &str,
    out: &mut Vec<Option<Vec<PathElem>>>,
) {
    // pops `n` indices off a known path
    fn indices(path: &mut Option<Vec<PathElem>>, n: usize) -> Option<Vec<Nat>> {
        let p = path.as_mut()?;
        let mut is = Vec::new();
        for _ in 0..n {
            match p.pop()? {
                PathElem::Idx(i) => is.push(i),
                _ => return None,
            }
        }
        Some(is)
    }
    let mut path = path;
    let mut go = |e: &Exp, p: Option<Vec<PathElem>>| reads(e, p, env, name, out);
    let push = |mut p: Option<Vec<PathElem>>, s: PathElem| {
        if let Some(v) = p.as_mut() {
            v.push(s);
        }
        p
    };
    match &*x.kind {
        ExpKind::Var(id) if id.name == name => out.push(path.map(|mut p| {
            p.reverse();
            p
        })),
        ExpKind::Var(_) | ExpKind::Lit(_) | ExpKind::Nat(_) => {}
        ExpKind::Idx(a, i) => go(a, push(path, PathElem::Idx(i.substitute_all(env)))),
        ExpKind::Lane(a, k) => go(a, push(path, PathElem::Lane(k.substitute_all(env)))),
        // its lanes are whole scalars (every one counted, whichever lane is read)
        ExpKind::MakeVector(xs) => {
            let mut whole = path;
            if let Some(p) = whole.as_mut() {
                if matches!(p.last(), Some(PathElem::Lane(_))) {
                    p.pop();
                }
            }
            let whole = whole.filter(|p| p.is_empty());
            xs.iter().for_each(|c| go(c, whole.clone()))
        }
        ExpKind::Fst(a) => go(a, push(path, PathElem::Fst)),
        ExpKind::Snd(a) => go(a, push(path, PathElem::Snd)),
        ExpKind::Zip(a, b) | ExpKind::Pair(a, b) => {
            let zip = matches!(&*x.kind, ExpKind::Zip(..));
            let i = if zip {
                indices(&mut path, 1)
            } else {
                Some(vec![])
            };
            let component = i.and_then(|i| Some((i, path.as_mut()?.pop()?)));
            match component {
                Some((i, c @ (PathElem::Fst | PathElem::Snd))) => {
                    let p = i.into_iter().fold(path, |p, i| push(p, PathElem::Idx(i)));
                    go(if c == PathElem::Fst { a } else { b }, p)
                }
                _ => {
                    go(a, None);
                    go(b, None)
                }
            }
        }
        ExpKind::View(v, a) => go(a, path.and_then(|p| reindex_stack(v, p, env))),
        // vector j of `asVector n a` is the place of element j*n of `a` (as on the write side)
        ExpKind::AsVector(n, a) => match indices(&mut path, 1) {
            Some(j) => go(
                a,
                push(path, PathElem::Idx(j[0].clone() * n.substitute_all(env))),
            ),
            None => go(a, None),
        },
        ExpKind::Generate(v, body) => match indices(&mut path, 1) {
            Some(i) => {
                let mut env = env.clone();
                env.insert(v.clone(), i[0].clone());
                reads(body, path, &env, name, out)
            }
            None => reads(body, None, env, name, out),
        },
        // the tiles of a warp group's multiply are read element by element (at any row
        // and column: placeholders), its accumulator whole
        ExpKind::Wgmma(xs) if xs.len() == 3 => {
            let element = vec![
                PathElem::Idx(Nat::var(&Var::new("wgmma_column"))),
                PathElem::Idx(Nat::var(&Var::new("wgmma_row"))),
            ];
            go(&xs[0], Some(element.clone()));
            go(&xs[1], Some(element));
            go(&xs[2], path.filter(|p| p.is_empty()));
        }
        // operators read whole scalars (or vectors) of their operands
        ExpKind::Unary(..)
        | ExpKind::Binary(..)
        | ExpKind::Select(..)
        | ExpKind::Cast(_)
        | ExpKind::Math(..)
        | ExpKind::Shuffle(..)
        | ExpKind::Mma(..)
        | ExpKind::Wgmma(..)
        | ExpKind::Foreign(..) => {
            let whole = path.filter(|p| p.is_empty());
            exp_children(x)
                .into_iter()
                .for_each(|c| go(c, whole.clone()))
        }
        _ => exp_children(x).into_iter().for_each(|c| go(c, None)),
    }
}

/// A path kept as a stack (its top is the first step) seen through a view:
/// [`View::reindex`] with the view's sizes under `env`.
fn reindex_stack(
    v: &View,
    stack: Vec<PathElem>,
    env: &std::collections::HashMap<Var, Nat>,
) -> Option<Vec<PathElem>> {
    let mut forward = stack;
    forward.reverse();
    let mut p = v
        .map_nats(|n| n.substitute_all(env))
        .reindex(&forward)
        .ok()?;
    p.reverse();
    Some(p)
}

/// Whether the expression reads exactly the memory the acceptor writes (the
/// same identifier at the same element), as far as the views show.
pub(super) fn same_place(x: &Exp, a: &Acc) -> bool {
    let env = std::collections::HashMap::new();
    match (exp_place(x, Vec::new(), &env), acc_place(a, Vec::new())) {
        (Some((i, p)), Some((j, q))) => i == j && p == q,
        _ => false,
    }
}

/// The memory an expression reads and where in it. `path` is a stack: its
/// top is the first step taken into the expression's value; `env` gives the
/// indices that `generate` variables stand for.
fn exp_place(
    x: &Exp,
    mut path: Vec<PathElem>,
    env: &std::collections::HashMap<Var, Nat>,
) -> Option<(String, Vec<PathElem>)> {
    let idx = |path: &mut Vec<PathElem>| match path.pop() {
        Some(PathElem::Idx(i)) => Some(i),
        _ => None,
    };
    match &*x.kind {
        ExpKind::Var(id) => {
            path.reverse();
            Some((id.name.clone(), path))
        }
        ExpKind::Idx(a, i) => {
            path.push(PathElem::Idx(i.substitute_all(env)));
            exp_place(a, path, env)
        }
        ExpKind::Lane(a, k) => {
            path.push(PathElem::Lane(k.substitute_all(env)));
            exp_place(a, path, env)
        }
        ExpKind::Fst(a) => {
            path.push(PathElem::Fst);
            exp_place(a, path, env)
        }
        ExpKind::Snd(a) => {
            path.push(PathElem::Snd);
            exp_place(a, path, env)
        }
        // component c of element i of `zip a b` is element i of a or b
        ExpKind::Zip(a, b) => {
            let i = idx(&mut path)?;
            let c = path.pop()?;
            path.push(PathElem::Idx(i));
            match c {
                PathElem::Fst => exp_place(a, path, env),
                PathElem::Snd => exp_place(b, path, env),
                PathElem::Idx(_) | PathElem::Lane(_) => None,
            }
        }
        ExpKind::Pair(a, b) => match path.pop()? {
            PathElem::Fst => exp_place(a, path, env),
            PathElem::Snd => exp_place(b, path, env),
            PathElem::Idx(_) | PathElem::Lane(_) => None,
        },
        // the whole of `generate(v => x[v])` is `x`
        ExpKind::Generate(v, body) if path.is_empty() => {
            let (id, steps) = exp_place(body, path, env)?;
            let (last, rest) = steps.split_last()?;
            let mentions = |s: &PathElem| matches!(s, PathElem::Idx(n) if n.contains_var(v));
            (*last == PathElem::Idx(Nat::var(v)) && !rest.iter().any(mentions))
                .then(|| (id, rest.to_vec()))
        }
        ExpKind::Generate(v, body) => {
            let i = idx(&mut path)?;
            let mut env = env.clone();
            env.insert(v.clone(), i);
            exp_place(body, path, &env)
        }
        ExpKind::View(v, a) => exp_place(a, reindex_stack(v, path, env)?, env),
        _ => None,
    }
}

/// The memory an acceptor writes and where in it.
pub(super) fn acc_place(a: &Acc, path: Vec<PathElem>) -> Option<(String, Vec<PathElem>)> {
    acc_place_in(a, path, &std::collections::HashMap::new())
}

/// [`acc_place`] with `env` the indices the variables of enclosing `mapAcc`s stand
/// for (a write at `i :: p` into `mapAcc(v => b)` lands in `b[v := i]` at `p`).
fn acc_place_in(
    a: &Acc,
    mut path: Vec<PathElem>,
    env: &std::collections::HashMap<Var, Nat>,
) -> Option<(String, Vec<PathElem>)> {
    match &*a.kind {
        AccKind::Var(id) => {
            path.reverse();
            Some((id.name.clone(), path))
        }
        AccKind::Idx(b, i) => {
            path.push(PathElem::Idx(i.substitute_all(env)));
            acc_place_in(b, path, env)
        }
        AccKind::Pair1(b) => {
            path.push(PathElem::Fst);
            acc_place_in(b, path, env)
        }
        AccKind::Pair2(b) => {
            path.push(PathElem::Snd);
            acc_place_in(b, path, env)
        }
        AccKind::View(v, b) => acc_place_in(b, reindex_stack(v, path, env)?, env),
        AccKind::AsVector(n, b) => match path.pop() {
            Some(PathElem::Idx(j)) => {
                path.push(PathElem::Idx(j * n.clone()));
                acc_place_in(b, path, env)
            }
            _ => None,
        },
        AccKind::Map(v, b) => match path.pop() {
            Some(PathElem::Idx(i)) => {
                let mut env = env.clone();
                env.insert(v.clone(), i);
                acc_place_in(b, path, &env)
            }
            _ => None,
        },
        _ => None,
    }
}
