//! Every RISE strategy under its paper name, for `.elv` strategy files.

use crate::normal_forms::*;
use crate::rules::algorithmic::*;
use crate::rules::lowering::*;
use crate::rules::movement::*;
use crate::rules::stencil::*;
use crate::schedule::*;
use crate::traversals::*;
use crate::S;
use elv::{Kind, Registry, Value};
use rise::{AddrSpace, Expr, Prim};

/// A registry entry: name, doc, constructor.
type Entry<F> = (&'static str, &'static str, F);
type SizeRule = fn(i64) -> S;
type Wrap = fn(S) -> S;

fn strat(s: S) -> Result<Value<Expr>, String> {
    Ok(Value::Strategy(s))
}

fn positive(v: &Value<Expr>, what: &str) -> Result<i64, String> {
    let n = v.as_int()?;
    if n <= 0 {
        return Err(format!("{what} must be positive, not {n}"));
    }
    Ok(n)
}

fn dim(v: &Value<Expr>) -> Result<usize, String> {
    let d = v.as_int()?;
    if !(0..=2).contains(&d) {
        return Err(format!("the dimension must be 0, 1 or 2, not {d}"));
    }
    Ok(d as usize)
}

fn depth(v: &Value<Expr>) -> Result<usize, String> {
    let d = v.as_int()?;
    usize::try_from(d).map_err(|_| format!("the depth must not be negative, not {d}"))
}

fn ints(v: &Value<Expr>) -> Result<Vec<i64>, String> {
    v.as_list()?.iter().map(|x| x.as_int()).collect()
}

/// The registry of every RISE rule, traversal, predicate, normal form and
/// scheduling strategy, with DFNF as the normal form of `;;`.
pub fn registry() -> Registry<Expr> {
    use Kind::{Int, List, Strategy as St, Symbol};
    let mut r = Registry::new();
    let simple: Vec<Entry<fn() -> S>> = vec![
        ("betaReduction", "(fun x => b) a ~> b[a/x]", beta_reduction),
        ("etaReduction", "fun x => f x ~> f", eta_reduction),
        ("etaAbstraction", "f ~> fun x => f x", eta_abstraction),
        ("BENF", "beta-eta normal form", benf),
        ("DFNF", "data-flow normal form", dfnf),
        ("isMap", "the node is map", is_map),
        ("isReduce", "the node is reduce or reduceSeq", is_reduce),
        ("isTranspose", "the node is transpose", is_transpose),
        (
            "isToMem",
            "the node is toMem applied to its arguments",
            is_to_mem,
        ),
        ("isLambda", "the node is a lambda", is_lambda),
        ("isLoop", "an applied map or reduction", is_loop),
        ("appliedMap", "isApp(isApp(isMap))", applied_map),
        (
            "appliedReduce",
            "isApp(isApp(isApp(isReduce)))",
            applied_reduce,
        ),
        ("addId", "e ~> id e", add_id),
        (
            "idToTranspose",
            "id e ~> transpose (transpose e)",
            id_to_transpose,
        ),
        (
            "transposeMove",
            "map (map f) (transpose e) ~> transpose (map (map f) e)",
            transpose_move,
        ),
        (
            "mapFusion",
            "map f (map g xs) ~> map (f . g) xs",
            map_fusion,
        ),
        ("mapFission", "map (f . g) ~> map g >> map f", map_fission),
        (
            "fuseReduceMap",
            "reduce op i (map f xs) ~> reduceSeq (fun a y => op a (f y)) i xs",
            fuse_reduce_map,
        ),
        (
            "fissionReduceMap",
            "the inverse of fuseReduceMap",
            fission_reduce_map,
        ),
        (
            "mapReduceInterchange",
            "map of reductions ~> reduction of arrays",
            map_reduce_interchange,
        ),
        (
            "mapMapInterchange",
            "swap two nested maps",
            map_map_interchange,
        ),
        (
            "layoutFission",
            "move a layout primitive out of a map's body",
            layout_fission,
        ),
        ("parallel", "map ~> mapPar", parallel),
        ("toMapSeq", "map ~> mapSeq", to_map_seq),
        ("toReduceSeq", "reduce ~> reduceSeq", to_reduce_seq),
        (
            "unroll",
            "map/reduce ~> mapSeqUnroll/reduceSeqUnroll",
            unroll,
        ),
        (
            "lowerToC",
            "map ~> mapSeq, reduce ~> reduceSeq everywhere",
            lower_to_c,
        ),
        (
            "transposeAfterMap",
            "transpose (map (map f) xs) ~> map (map f) (transpose xs)",
            transpose_after_map,
        ),
        (
            "splitBeforeMap",
            "map (map f) (split n xs) ~> split n (map f xs)",
            split_before_map,
        ),
        (
            "splitAfterMap",
            "split n (map f xs) ~> map (map f) (split n xs)",
            split_after_map,
        ),
        (
            "joinBeforeMap",
            "map f (join xs) ~> join (map (map f) xs)",
            join_before_map,
        ),
        (
            "joinAfterMap",
            "join (map (map f) xs) ~> map f (join xs)",
            join_after_map,
        ),
        (
            "slideBeforeMap",
            "map (map f) (slide n s xs) ~> slide n s (map f xs)",
            slide_before_map,
        ),
        (
            "slideAfterMap",
            "slide n s (map f xs) ~> map (map f) (slide n s xs)",
            slide_after_map,
        ),
    ];
    for (name, doc, make) in simple {
        r.add(name, &[], doc, move |_| strat(make()));
    }
    r.add("toMapWarp", &[], "map ~> mapWarp", |_| {
        strat(to_map_level(Level::Warp, 0).expect("dimension 0"))
    });
    r.add("toMapLane", &[], "map ~> mapLane", |_| {
        strat(to_map_level(Level::Lane, 0).expect("dimension 0"))
    });
    let int_rules: Vec<Entry<SizeRule>> = vec![
        (
            "split",
            "loop blocking of a map or a reduction",
            split_strategy,
        ),
        (
            "splitJoin",
            "map f ~> split n >> map (map f) >> join",
            split_join,
        ),
        (
            "splitJoinMap",
            "splitJoin (RISE & Shine Listing 3)",
            split_join,
        ),
        (
            "blockedReduce",
            "reduce blocked into two nested reductions",
            blocked_reduce,
        ),
        (
            "vectorize",
            "map f ~> asVector n >> map (mapVec f) >> asScalar",
            vectorize,
        ),
        (
            "overlappedTiling",
            "1-D overlapped tiling with tiles of size u",
            overlapped_tiling,
        ),
        (
            "overlappedTiling2",
            "2-D overlapped tiling with tiles of size u x u",
            overlapped_tiling_2d,
        ),
        (
            "permuteB",
            "store a 2-D array in n-wide column panels",
            permute_b,
        ),
    ];
    for (name, doc, make) in int_rules {
        r.add(name, &[Int], doc, move |a| {
            strat(make(positive(&a[0], "the size")?))
        });
    }
    r.add("mapNest", &[Int], "a DFNF map nest of depth d", |a| {
        strat(map_nest(depth(&a[0])?))
    });
    r.add(
        "interchange",
        &[Int],
        "swap the loops at depths d and d+1",
        |a| strat(interchange(depth(&a[0])?)),
    );
    r.add("tile", &[Int, Int], "2-D tiling (TVM's tile)", |a| {
        strat(tile(
            positive(&a[0], "the tile size")?,
            positive(&a[1], "the tile size")?,
        ))
    });
    r.add(
        "tileND",
        &[List],
        "tiling of as many maps as sizes given",
        |a| {
            let ns = ints(&a[0])?;
            if ns.is_empty() || ns.iter().any(|n| *n <= 0) {
                return Err("tileND needs a non-empty list of positive sizes".into());
            }
            strat(tile_nd(ns))
        },
    );
    r.add(
        "reorder",
        &[List],
        "reorder the loops of a nest (1-based)",
        |a| {
            let perm = ints(&a[0])?;
            let n = perm.len() as i64;
            let mut sorted = perm.clone();
            sorted.sort_unstable();
            if sorted != (1..=n).collect::<Vec<_>>() {
                return Err(format!("reorder needs a permutation of 1..{n}"));
            }
            strat(reorder(perm.into_iter().map(|p| p as usize).collect()))
        },
    );
    let levels = [
        ("toMapGlobal", Level::Global),
        ("toMapWorkGroup", Level::WorkGroup),
        ("toMapLocal", Level::Local),
        ("toMapBlock", Level::Block),
        ("toMapThread", Level::Thread),
    ];
    for (name, level) in levels {
        r.add(
            name,
            &[Int],
            "lower map to a parallel level in dimension d",
            move |a| strat(to_map_level(level, dim(&a[0])?).expect("dimension checked")),
        );
    }
    r.add("toMem", &[Symbol], "e ~> toMem a e (fun x => x)", |a| {
        let space = match a[0].as_symbol()? {
            "global" => AddrSpace::Global,
            "local" => AddrSpace::Local,
            "private" => AddrSpace::Private,
            "constant" => AddrSpace::Constant,
            other => {
                return Err(format!(
                    "unknown address space `{other}` (global, local, private, constant)"
                ))
            }
        };
        strat(to_mem(space))
    });
    let traversals: Vec<Entry<Wrap>> = vec![
        ("body", "the body of a lambda", body),
        ("function", "the function of an application", function),
        ("argument", "the argument of an application", argument),
        ("fmap", "the body of the function a map applies", fmap),
        ("inLambda", "inside the leading lambdas", in_lambda),
        ("isApp", "an application whose function satisfies p", is_app),
    ];
    for (name, doc, make) in traversals {
        r.add(name, &[St], doc, move |a| {
            strat(make(a[0].as_strategy()?.clone()))
        });
    }
    r.add("argOf", &[Symbol, St], "the argument of a primitive", |a| {
        let name = a[0].as_symbol()?;
        let p = Prim::from_name(name).ok_or_else(|| format!("`{name}` is not a RISE primitive"))?;
        strat(arg_of(p, a[1].as_strategy()?.clone()))
    });
    r.add("outermost", &[St, St], "topDown(p ; s)", |a| {
        strat(outermost(
            a[0].as_strategy()?.clone(),
            a[1].as_strategy()?.clone(),
        ))
    });
    r.add("innermost", &[St, St], "bottomUp(p ; s)", |a| {
        strat(innermost(
            a[0].as_strategy()?.clone(),
            a[1].as_strategy()?.clone(),
        ))
    });
    r.add("atLoop", &[Int, St], "s on the loop at depth d", |a| {
        strat(at_loop(depth(&a[0])?, a[1].as_strategy()?.clone()))
    });
    r.add(
        "storeInMemory",
        &[St, St],
        "compute what as how says, in memory",
        |a| {
            strat(store_in_memory(
                a[0].as_strategy()?.clone(),
                a[1].as_strategy()?.clone(),
            ))
        },
    );
    crate::rules::gpu::register(&mut r);
    r.set_normal_form("DFNF", dfnf());
    r
}
