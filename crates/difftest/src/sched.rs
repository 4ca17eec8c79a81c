//! Random schedules: sequences of scheduling-library steps, printed as an `.elv` module whose
//! definition `s` is `DFNF ; step ;; step ;; ... ;; lowerToC`.

use splitmix::SplitMix64;

/// Which code a schedule is for: the compiler's target enum.
pub use codegen::Target;

/// The targets the generator compares with the interpreter, in the order they are run
/// (CUDA needs an NVIDIA GPU and its driver; it is not among the default targets).
pub const TARGETS: [Target; 4] = [Target::C, Target::OpenMp, Target::OpenCl, Target::Cuda];

/// The targets with a random schedule of their own, in the order a case draws them (the
/// order fixes the cases of a seed). CUDA runs the OpenCL schedule ([`schedule_of`]).
pub const SCHEDULED: [Target; 3] = [Target::C, Target::OpenMp, Target::OpenCl];

/// The target whose schedule `t` runs: OpenCL's for CUDA (the GPU steps `toMapGlobal`,
/// `toMapWorkGroup` and `toMapLocal` lower to the same DPIA for both, a work-group being a
/// CUDA block), so that a seed's cases are the same with and without CUDA and its GPU
/// results compare across the two runtimes; `t` itself otherwise.
pub fn schedule_of(t: Target) -> Target {
    match t {
        Target::Cuda => Target::OpenCl,
        t => t,
    }
}

/// The compared target with this name.
pub fn parse_target(s: &str) -> Option<Target> {
    TARGETS.into_iter().find(|t| t.name() == s)
}

/// The names of the compared targets, for messages: `c, openmp, opencl, cuda`.
pub fn target_names() -> String {
    TARGETS.map(|t| t.name()).join(", ")
}

fn split_locs(r: &mut SplitMix64) -> String {
    (*r.pick(&[
        "outermost(appliedMap)",
        "innermost(appliedMap)",
        "outermost(appliedReduce)",
        "innermost(appliedReduce)",
    ]))
    .to_string()
}

/// The environment variable that, set to `1`, leaves out the blocking steps (split,
/// splitJoin, tile, vectorize), whose sizes the run sizes rarely divide (issue 13 item 7),
/// so that other defects show.
pub const NO_BLOCKING: &str = "SHINE_DIFFTEST_NO_BLOCKING";

fn blocking_allowed() -> bool {
    std::env::var(NO_BLOCKING).map_or(true, |v| v != "1")
}

/// One step usable on every target.
fn common_step(r: &mut SplitMix64) -> String {
    let k = *r.pick(&[2, 3, 4, 8, 32]);
    let lo = if blocking_allowed() { 0 } else { 5 };
    match r.range(lo, 13) {
        0 | 1 => format!("split({k}) @ {}", split_locs(r)),
        2 => format!("splitJoin({k}) @ {}", split_locs(r)),
        3 => format!(
            "tile({}, {}) @ outermost(mapNest(2))",
            r.pick(&[2, 4, 32]),
            r.pick(&[2, 4])
        ),
        4 => format!("vectorize({}) @ innermost(appliedMap)", r.pick(&[2, 4, 8])),
        5 => "unroll @ innermost(isReduce)".into(),
        6 => "unroll @ innermost(isMap)".into(),
        7 | 8 => format!(
            "storeInMemory({}, lowerToC) @ {}",
            r.pick(&["isApp(isApp(isMap))", "appliedReduce", "appliedMap"]),
            r.pick(&[
                "argument @ outermost(appliedMap)",
                "outermost(appliedMap)",
                "argument @ innermost(appliedMap)",
                "argument @ outermost(appliedReduce)",
            ])
        ),
        9 => "normalize(fuseReduceMap)".into(),
        10 => "fuseReduceMap @ outermost(appliedReduce)".into(),
        11 => format!("reorder([{}])", r.pick(&["2, 1", "1, 3, 2", "2, 1, 3"])),
        12 => "interchange(0) @ outermost(isMap)".into(),
        _ => "normalize(mapFusion)".into(),
    }
}

fn target_step(r: &mut SplitMix64, t: Target) -> String {
    match t {
        Target::C | Target::OpenMp => (*r.pick(&[
            "parallel @ outermost(isMap)",
            "parallel @ innermost(isMap)",
            "parallel @ function @ function @ outermost(appliedMap)",
        ]))
        .into(),
        Target::OpenCl | Target::Cuda => (*r.pick(&[
            "toMapGlobal(0) @ outermost(isMap)",
            "toMapGlobal(0) @ innermost(isMap)",
            "toMapGlobal(1) @ outermost(isMap) ;; toMapGlobal(0) @ outermost(isMap)",
            "toMapWorkGroup(0) @ outermost(isMap) ;; toMapLocal(0) @ outermost(isMap)",
            "toMapWorkGroup(0) @ outermost(isMap) ;; toMapLocal(0) @ innermost(isMap)",
            "splitJoinMap(4) @ outermost(appliedMap) ;; toMapWorkGroup(0) @ outermost(isMap) ;; toMapLocal(0) @ outermost(isMap)",
        ][..if blocking_allowed() { 6 } else { 5 }]))
        .into(),
    }
}

/// A random schedule for `t`: its steps (each possibly wrapped in `try`).
pub fn schedule(r: &mut SplitMix64, t: Target) -> Vec<String> {
    let mut steps = Vec::new();
    for _ in 0..r.range(0, 3) {
        let s = common_step(r);
        steps.push(if r.chance(80) { format!("try({s})") } else { s });
    }
    if r.chance(75) {
        let s = target_step(r, t);
        let at = r.range(0, steps.len() as i64) as usize;
        steps.insert(at, if r.chance(70) { format!("try({s})") } else { s });
    }
    steps
}

/// The `.elv` module of a schedule: the strategy `s`.
pub fn elv(steps: &[String]) -> String {
    let mut text = String::from("def s = DFNF");
    for (i, s) in steps.iter().enumerate() {
        text.push_str(if i == 0 { " ;\n  " } else { " ;;\n  " });
        text.push_str(s);
    }
    text.push_str(if steps.is_empty() {
        " ;\n  lowerToC\n"
    } else {
        " ;;\n  lowerToC\n"
    });
    text
}
