//! The flags of every command and the values they take, good and bad: C compiler flags,
//! `--nat` bindings, random strategy expressions.

use super::ODD_PATHS;
use crate::mutate::EXTREME_NUMBERS;
use crate::rng::Rng;

/// Flags for the C compiler, good and bad.
pub(super) const CFLAGS: &[&str] = &[
    "-O0",
    "-O1",
    "-O2 -ffast-math",
    "'-O2",
    "-O2 '-DNOTE=\"a b\"'",
    "",
    "-Wall -Werror",
    "-std=c89",
    "-x c++",
    "-fsanitize=undefined",
    "-O3 -march=native -fopenmp",
    "--no-such-flag",
    "\"",
];

/// The kind of value a flag takes.
#[derive(Clone, Copy, Debug)]
pub(super) enum Value {
    None,
    Number,
    Nat,
    Name,
    Target,
    Strategy,
    Path,
    Text,
}

/// The flags of a subcommand (for damaged command lines).
pub(super) fn flags_of(command: &str) -> &'static [(&'static str, Value)] {
    use Value::*;
    match command {
        "check" => &[("--help", None)],
        "eval" => &[
            ("--def", Name),
            ("--nat", Nat),
            ("--input", Path),
            ("--output", Path),
        ],
        "rewrite" => &[
            ("--def", Name),
            ("--strategy", Path),
            ("--apply", Strategy),
            ("--trace", None),
            ("--stats", None),
            ("--json", None),
            ("--budget", Number),
        ],
        "compile" => &[
            ("--def", Name),
            ("--strategy", Path),
            ("--apply", Strategy),
            ("--target", Target),
            ("--budget", Number),
            ("-o", Path),
            ("--output", Path),
            ("--emit-dpia", None),
        ],
        "run" => &[
            ("--def", Name),
            ("--strategy", Path),
            ("--apply", Strategy),
            ("--target", Target),
            ("--budget", Number),
            ("--nat", Nat),
            ("--input", Path),
            ("--random", Number),
            ("--output", Path),
            ("--verify", None),
            ("--bench", Number),
            ("--json", None),
            ("--cflags", Text),
            ("--fast-math", None),
        ],
        "explore" => &[
            ("--def", Name),
            ("--target", Target),
            ("--nat", Nat),
            ("--time-nat", Nat),
            ("--time", Number),
            ("--search", Name),
            ("--seed", Number),
            ("--dims", Number),
            ("--cutoff", Number),
            ("--flops", Number),
            ("--paper-constraints", None),
            ("--log", Path),
            ("-o", Path),
        ],
        "fsmooth" => &[
            ("--strategy", Strategy),
            ("--simplify", None),
            ("--trace", None),
            ("--stats", None),
            ("--verify", Number),
            ("--budget", Number),
            ("--wrt", Name),
            ("--seed", Number),
        ],
        "bench" => &[
            ("--case", Name),
            ("--nat", Nat),
            ("--quick", None),
            ("--json", Path),
            ("--rounds", Number),
            ("--min-runs", Number),
            ("--max-runs", Number),
            ("--list", None),
        ],
        _ => &[("--help", None), ("--version", None), ("--json", None)],
    }
}

/// A random value of `kind` (no value for a switch).
pub(super) fn any_value(rng: &mut Rng, kind: Value) -> Option<String> {
    Some(match kind {
        Value::None => return Option::None,
        Value::Number => rng.pick(EXTREME_NUMBERS).to_string(),
        Value::Nat => nat_value(rng),
        Value::Name => rng
            .pick(&["mm", "dot", "x", "", "solver", "u", "-"])
            .to_string(),
        Value::Target => rng
            .pick(&["c", "openmp", "opencl", "cuda", "gpu", "C", ""])
            .to_string(),
        Value::Strategy => strategy_expr(rng, 2),
        Value::Path => rng.pick(ODD_PATHS).to_string(),
        Value::Text => rng.pick(CFLAGS).to_string(),
    })
}

/// A `--nat` value, often malformed or extreme.
pub(super) fn nat_value(rng: &mut Rng) -> String {
    let name = *rng.pick(&["n", "m", "k", "", "n ", "x", "n=n"]);
    let value = *rng.pick(EXTREME_NUMBERS);
    match rng.below(4) {
        0 => name.to_string(),
        1 => format!("={value}"),
        _ => format!("{name}={value}"),
    }
}

/// A random strategy expression over the library (depth at most `depth`).
pub fn strategy_expr(rng: &mut Rng, depth: u32) -> String {
    const ATOMS: &[&str] = &[
        "DFNF",
        "BENF",
        "lowerToC",
        "id",
        "fail",
        "mapFusion",
        "mapFission",
        "fuseReduceMap",
        "fissionReduceMap",
        "parallel",
        "unroll",
        "toMapSeq",
        "toReduceSeq",
        "betaReduction",
        "etaReduction",
        "etaAbstraction",
        "addId",
        "transposeMove",
        "splitJoin(4)",
        "split(2)",
        "split(0)",
        "vectorize(4)",
        "vectorize(3)",
        "tile(32, 32)",
        "tile(2, 2)",
        "reorder([1, 2, 3, 4])",
        "permuteB(32)",
        "blockedReduce(4)",
        "toMem(private)",
        "toMem(global)",
        "toMapGlobal(0)",
        "toMapWorkGroup(1)",
        "toMapLocal(0)",
        "joinSplit",
        "mapReduceInterchange",
        "mapMapInterchange",
        "layoutFission",
        "overlappedTiling(4)",
        "storeInMemory(isApp(isApp(isMap)), lowerToC)",
        "interchange(1, 2)",
        "splitJoinMap(2)",
        "nosuchrule",
        "tile(1)",
    ];
    const TRAVERSALS: &[&str] = &[
        "topDown",
        "bottomUp",
        "body",
        "function",
        "argument",
        "outermost(isMap)",
        "innermost(appliedReduce)",
        "outermost(mapNest(2))",
        "innermost(appliedMap)",
        "outermost(appliedMap)",
        "fmap(body)",
        "argOf(map, body)",
        "inLambda",
    ];
    if depth == 0 || rng.chance(30) {
        return rng.pick(ATOMS).to_string();
    }
    let a = strategy_expr(rng, depth - 1);
    match rng.below(9) {
        0 => format!("{a} ; {}", strategy_expr(rng, depth - 1)),
        1 => format!("{a} ;; {}", strategy_expr(rng, depth - 1)),
        2 => format!("{a} <+ {}", strategy_expr(rng, depth - 1)),
        3 | 4 => format!("{a} @ {}", rng.pick(TRAVERSALS)),
        5 => format!("try({a})"),
        6 => format!("repeat({a})"),
        7 => format!("normalize({a})"),
        _ => format!(
            "{}({a})",
            rng.pick(&["topDown", "bottomUp", "tryAll", "not", "all", "one", "some"])
        ),
    }
}
