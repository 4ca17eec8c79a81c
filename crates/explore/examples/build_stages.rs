//! Where the build of a tuning candidate spends its time, stage by stage (issue 31): the
//! `mmSplitK` search of `scripts/gpu-tune-scaling.sh` on a few fixed assignments, at its
//! first verification set.
//!
//! `cargo run --release -p explore --example build_stages -- TARGET [REPEATS]` (TARGET
//! `opencl`, `cuda`, `c` or `openmp`; on CUDA without NVRTC and a GPU the code is printed,
//! not compiled or run).
//!
//! Prints, per stage, the median and mean milliseconds per candidate: checking the program,
//! the rewrite, the DPIA translation, printing, NVRTC (CUDA), making the random inputs,
//! binding them and building the code (the OpenCL compiler; loading NVRTC's image on CUDA),
//! one run, and the interpreter's reference (what every candidate paid before the reference
//! was shared); then the same run made from a shared reference ([`shine::Reference`]: the
//! inputs made once, the interpreter run once per size set), as a tuning runs it now, and
//! the comparison of its result with the reference.

use shine::{
    Executable, Inputs, Reference, RunOptions, SharedInputs, SourceFile, StrategySource, Target,
};
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Instant;

const TEMPLATE: &str = "mmSplitK";

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let target: Target = args
        .get(1)
        .map_or("opencl", String::as_str)
        .parse()
        .expect("a target");
    let repeats: usize = args.get(2).map_or(1, |r| r.parse().expect("a number"));
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/");
    let program = SourceFile::new(
        "vgg.rise",
        std::fs::read_to_string(format!("{root}vgg.rise")).unwrap(),
    );
    let user = std::fs::read_to_string(format!("{root}gpu.elv")).unwrap();
    let def = "vggGemmSplitK";
    // tm, tn, rm, rn, kb, s (wm = tm/rm, wn = tn/rn)
    let assignments = [
        (64, 64, 4, 4, 8, 1),
        (64, 32, 4, 2, 8, 2),
        (128, 64, 8, 4, 16, 4),
        (64, 64, 8, 8, 16, 2),
        (128, 64, 4, 4, 8, 1),
    ];
    let mut stages: Vec<(&str, Vec<f64>)> = [
        "check",
        "rewrite",
        "dpia",
        "print",
        "nvrtc",
        "inputs",
        "bind+build",
        "run",
        "reference",
        "shared: bind+build",
        "shared: run",
        "shared: compare",
    ]
    .iter()
    .map(|s| (*s, Vec::new()))
    .collect();
    let mut add = |name: &str, ms: f64| stages.iter_mut().find(|s| s.0 == name).unwrap().1.push(ms);
    let ms = |t: Instant| t.elapsed().as_secs_f64() * 1e3;
    // the shared references, by number of chunks (made before the loop: once per search)
    let mut references: BTreeMap<i64, Arc<Reference>> = BTreeMap::new();
    let mut printed_only = false;
    for _ in 0..repeats {
        for &(tm, tn, rm, rn, kb, s) in &assignments {
            let (wm, wn) = (tm / rm, tn / rn);
            let strategy = StrategySource {
                file: SourceFile::new(
                    "candidate.elv",
                    format!("{user}\ndef candidate = {TEMPLATE}({tm}, {tn}, {rm}, {rn}, {kb}, {wm}, {wn})\n"),
                ),
                apply: "candidate".into(),
            };
            let nats: Vec<(String, i64)> = [("h", 8), ("w", 16), ("c", 64), ("o", 64), ("s", s)]
                .iter()
                .map(|(k, v)| (k.to_string(), *v))
                .collect();
            let options = shine::Options::default();
            let t = Instant::now();
            let checked = program.check().unwrap();
            let prepared = rise::infer::prepare_def(&checked, def).unwrap();
            let check = ms(t);
            add("check", check);
            let t = Instant::now();
            shine::rewrite(&program, def, &strategy, &shine::RewriteOptions::default()).unwrap();
            let rewrite = ms(t);
            add("rewrite", rewrite - check);
            let t = Instant::now();
            shine::lower(&program, def, Some(&strategy), &options).unwrap();
            let lower = ms(t);
            add("dpia", lower - rewrite);
            let t = Instant::now();
            let artifact =
                shine::compile(&program, def, Some(&strategy), target, &options).unwrap();
            add("print", ms(t) - lower);
            let t = Instant::now();
            let inputs = shine::inputs::random_inputs(&prepared.scheme, &nats, 7).unwrap();
            add("inputs", ms(t));
            drop(inputs);
            if target == Target::Cuda {
                // NVRTC, where there is one (its image is kept: the run below loads it)
                let t = Instant::now();
                match shine::gpu::compile_cuda_kernels(&artifact, &nats, &RunOptions::default()) {
                    Ok(_) => add("nvrtc", ms(t)),
                    Err(e) => {
                        if !printed_only {
                            eprintln!("the CUDA code is printed, not compiled or run: {e}");
                            printed_only = true;
                        }
                        continue;
                    }
                }
            }
            let run_options = RunOptions {
                verify: true,
                ..RunOptions::default()
            };
            let t = Instant::now();
            let mut exe =
                Executable::new(&artifact, Inputs::Random { seed: 7 }, &nats, &run_options)
                    .unwrap();
            add("bind+build", ms(t));
            let t = Instant::now();
            let result = exe.run().unwrap();
            add("run", ms(t));
            let t = Instant::now();
            shine::evaluate(&program, def, Inputs::Random { seed: 7 }, &nats, "cc").unwrap();
            add("reference", ms(t));
            drop(result);
            let reference = references.entry(s).or_insert_with(|| {
                let inputs = Arc::new(SharedInputs::random(&prepared.scheme, &nats, 7).unwrap());
                let r = Reference::new(&program, def, &nats, inputs, "cc").unwrap();
                r.expected().unwrap();
                Arc::new(r)
            });
            let t = Instant::now();
            let mut exe =
                Executable::with_reference(&artifact, reference, &run_options, None).unwrap();
            add("shared: bind+build", ms(t));
            let t = Instant::now();
            let result = exe.run().unwrap();
            add("shared: run", ms(t));
            let t = Instant::now();
            exe.verify(&result).unwrap();
            add("shared: compare", ms(t));
        }
    }
    for (name, mut v) in stages {
        if v.is_empty() {
            continue;
        }
        v.sort_by(f64::total_cmp);
        let total: f64 = v.iter().sum();
        println!(
            "{name:>10}: median {:9.1} ms, mean {:9.1} ms ({} samples)",
            v[v.len() / 2],
            total / v.len() as f64,
            v.len()
        );
    }
}
