//! `shine explore` (issue 16) on PoCL: the constraints agree with the compiler on a
//! small program (every raw assignment compiled and verified), and every mapping the
//! search emits compiles and verifies, with a fixed seed and a small budget. The best
//! strategy it writes is an ordinary `.elv` file that `shine run` applies.
//!
//! Without any OpenCL platform these FAIL, as the runtime's tests do; set
//! `SHINE_SKIP_OPENCL=1` to skip them.

use std::process::{Command, Output};

mod support;
use support::skip_opencl;

fn run(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_shine"))
        .current_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
        .args(args)
        .output()
        .expect("shine runs")
}

fn json(o: &Output) -> serde_json::Value {
    let out = String::from_utf8_lossy(&o.stdout);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "shine failed:\n{out}\n{err}");
    serde_json::from_str(out.lines().last().unwrap_or("")).expect("one JSON line")
}

#[test]
fn constraints_accept_exactly_what_compiles_and_verifies() {
    if skip_opencl() {
        return;
    }
    let o = run(&[
        "explore",
        "examples/explore.rise",
        "--def",
        "scale2d",
        "--target",
        "opencl",
        "--nat",
        "n=4",
        "--nat",
        "m=8",
        "--dims",
        "1",
        "--check-constraints",
    ]);
    let v = json(&o);
    assert_eq!(v["maps"], 2);
    assert_eq!(v["raw"], 16);
    assert_eq!(v["valid_but_failed"], serde_json::json!([]), "{v}");
    assert_eq!(v["works_but_excluded"], serde_json::json!([]), "{v}");
    assert_eq!(v["solver_valid"], v["compiled_and_verified"], "{v}");
    assert!(v["solver_valid"].as_u64().unwrap_or(0) > 1, "{v}");
}

#[test]
fn every_emitted_mapping_compiles_and_verifies() {
    if skip_opencl() {
        return;
    }
    let dir = tempfile::tempdir().expect("temp dir");
    let log = dir.path().join("run.jsonl");
    let best = dir.path().join("best.elv");
    let (log_s, best_s) = (log.to_string_lossy(), best.to_string_lossy());
    let o = run(&[
        "explore",
        "examples/explore.rise",
        "--def",
        "scale2d",
        "--target",
        "opencl",
        "--nat",
        "n=8",
        "--nat",
        "m=16",
        "--budget",
        "3",
        "--search",
        "solver",
        "--search",
        "evolutionary",
        "--seed",
        "3",
        "--runs",
        "1",
        "--log",
        &log_s,
        "-o",
        &best_s,
    ]);
    let v = json(&o);
    assert_eq!(v["methods"].as_array().map(Vec::len), Some(2), "{v}");
    let lines: Vec<serde_json::Value> = std::fs::read_to_string(&log)
        .expect("log")
        .lines()
        .map(|l| serde_json::from_str(l).expect("JSON line"))
        .collect();
    assert_eq!(lines.len(), 7, "a header and six candidates");
    assert_eq!(lines[0]["kind"], "shine explore log", "{}", lines[0]);
    for l in &lines[1..] {
        assert!(l["failure"].is_null(), "a mapping failed: {l}");
        assert!(l["ms"].as_f64().is_some_and(|t| t > 0.0), "{l}");
        // the mapping in words: a level per map, parallel exactly where the choice is not 0
        let words = l["in_words"].as_str().expect("in_words");
        let choices = l["mapping"].as_array().expect("mapping");
        let levels: Vec<&str> = words
            .split(|c: char| !c.is_alphanumeric())
            .filter(|w| w.starts_with("map"))
            .collect();
        assert_eq!(levels.len(), choices.len(), "{l}");
        for (level, choice) in levels.iter().zip(choices) {
            assert_eq!(*level == "mapSeq", choice == 0, "{l}");
        }
    }
    let table = String::from_utf8_lossy(&o.stderr);
    assert!(
        table.contains("loops (splits / choices)") && table.contains("] › map"),
        "{table}"
    );
    // The best strategy is an ordinary strategy file.
    let r = run(&[
        "run",
        "examples/explore.rise",
        "--def",
        "scale2d",
        "--strategy",
        &best_s,
        "--apply",
        "best",
        "--target",
        "opencl",
        "--nat",
        "n=8",
        "--nat",
        "m=16",
        "--random",
        "5",
        "--verify",
        "--json",
    ]);
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));

    // Resuming from the log re-runs nothing: the budget is spent.
    let o = run(&[
        "explore",
        "examples/explore.rise",
        "--def",
        "scale2d",
        "--target",
        "opencl",
        "--nat",
        "n=8",
        "--nat",
        "m=16",
        "--budget",
        "3",
        "--search",
        "solver",
        "--resume",
        &log_s,
    ]);
    let v = json(&o);
    assert_eq!(v["methods"][0]["candidates"], 0, "{v}");
}

/// `--param`: the tiles, blocks and split-K chunks of vgg.rise's convolution as a matrix
/// product, searched by every method with a fixed seed and a small budget on two small
/// "layers". Every candidate the search keeps verified against the interpreter (a
/// failure is counted, never kept), the best per set is written as a strategy file, and
/// `shine run` applies each of them again and verifies at the set's sizes.
#[test]
fn parameter_tuning_keeps_verified_candidates_per_set() {
    if skip_opencl() {
        return;
    }
    let dir = std::env::temp_dir().join(format!("shine-explore-param-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let best = dir.join("best.elv");
    let log = dir.join("run.jsonl");
    let o = run(&[
        "explore",
        "examples/vgg.rise",
        "--def",
        "vggGemmSplitK",
        "--strategy",
        "examples/gpu.elv",
        "--apply",
        "mmSplitK(tm, tn, rm, rn, kb, wm, wn)",
        "--target",
        "opencl",
        "--param",
        "tm=7,14,28",
        "--param",
        "tn=8,16",
        "--param",
        "rm=7",
        "--param",
        "rn=2,4",
        "--param",
        "kb=4,8",
        "--param",
        "wm=tm/rm",
        "--param",
        "wn=tn/rn",
        "--param",
        "s=1,2,3",
        "--require",
        "(tm*kb)%(wm*wn)==0",
        "--require",
        "(tn*kb)%(wm*wn)==0",
        "--verify-nat",
        "h=4,w=7,c=8,o=16",
        "--time-nat",
        "h=7,w=4,c=8,o=16",
        "--time-nat",
        "h=14,w=2,c=16,o=8",
        "--budget",
        "4",
        "--runs",
        "1",
        "--seed",
        "3",
        "--search",
        "solver",
        "--search",
        "random",
        "--search",
        "evolutionary",
        "--log",
        log.to_str().unwrap(),
        "-o",
        best.to_str().unwrap(),
    ]);
    let v = json(&o);
    assert_eq!(v["raw_assignments"], "72", "{v}");
    let valid = v["valid_assignments"].as_u64().unwrap();
    assert!(valid > 4 && valid < 72, "{v}");
    assert_eq!(v["methods"].as_array().unwrap().len(), 3, "{v}");
    // the log: every candidate with a time was verified (no failure), and each
    // failure has a cause
    let lines: Vec<serde_json::Value> = std::fs::read_to_string(&log)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(
        lines.len(),
        13,
        "a header, three methods of four candidates each"
    );
    assert_eq!(lines[0]["kind"], "shine explore log", "{}", lines[0]);
    // the interpreter's reference is computed once per size set verified at (one `--verify-nat`
    // set, with the candidate's `s`), not once per candidate verified
    let verified: Vec<&serde_json::Value> = lines[1..]
        .iter()
        .filter(|l| l["failure"].is_null())
        .collect();
    let mut chunks: Vec<i64> = verified
        .iter()
        .filter_map(|l| l["params"]["s"].as_i64())
        .collect();
    chunks.sort_unstable();
    chunks.dedup();
    // (two more runs for a set whose results needed the bound for reassociated sums)
    let evaluations = v["reference_evaluations"].as_u64().unwrap() as usize;
    assert!(
        evaluations >= chunks.len() && evaluations <= 3 * chunks.len(),
        "{evaluations} for s in {chunks:?}"
    );
    assert!(
        evaluations < verified.len(),
        "{evaluations} interpreter runs for {} candidates verified",
        verified.len()
    );
    for l in &lines[1..] {
        let timed = l["ms_per_set"]
            .as_array()
            .unwrap()
            .iter()
            .any(|m| !m.is_null());
        assert_eq!(timed, l["failure"].is_null(), "{l}");
    }
    // every per-set best is a strategy `shine run` applies and verifies
    let text = std::fs::read_to_string(&best).unwrap();
    let sets: Vec<&str> = text.lines().filter(|l| l.starts_with("// set ")).collect();
    assert!(!sets.is_empty(), "{text}");
    for line in sets {
        let cmd = line.split(": shine run ").nth(1).unwrap();
        let mut args: Vec<String> = vec!["run".into()];
        args.extend(cmd.split(' ').map(|a| {
            if a == "THIS" {
                best.to_str().unwrap().to_string()
            } else {
                a.to_string()
            }
        }));
        args.extend(
            [
                "--target", "opencl", "--random", "2", "--verify", "--output",
            ]
            .map(String::from),
        );
        args.push(dir.join("out.npy").to_str().unwrap().to_string());
        let refs: Vec<&str> = args.iter().map(|s| s.as_str()).collect();
        let r = run(&refs);
        assert!(
            r.status.success()
                && String::from_utf8_lossy(&r.stderr).contains("verified against the interpreter"),
            "{line}\n{}",
            String::from_utf8_lossy(&r.stderr)
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// The strategies explore found for VGG-16's 13 layers on the H100 (the file the GPU
/// benchmark reads) compile and verify on PoCL at small sizes of the same shape (tiles,
/// chunks and copies divide them), so that the benchmark measures verified programs.
#[test]
fn the_tuned_vgg_strategies_verify_at_small_sizes() {
    if skip_opencl() {
        return;
    }
    let file = "bench/explore/vgg_h100_cuda_tuned.elv";
    let text = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../..")
            .join(file),
    )
    .unwrap();
    let out = std::env::temp_dir().join(format!("shine-vgg-tuned-{}.npy", std::process::id()));
    let mut checked = 0;
    for line in text.lines().filter(|l| l.starts_with("def best_")) {
        let name = line[4..].split_whitespace().next().unwrap();
        let args: Vec<i64> = line[line.find('(').unwrap() + 1..line.find(')').unwrap()]
            .split(',')
            .map(|a| a.trim().parse().unwrap())
            .collect();
        let (tm, tn, kb) = (args[0], args[1], args[4]);
        // one tile of pixels (h = tm, w = 1), one of output channels (o = tn), and the
        // fewest input channels c for which kb divides each of the s chunks of 9c
        let comment = text
            .lines()
            .find(|l| l.contains(&format!("--apply {name} ")))
            .unwrap();
        let s: i64 = comment
            .rsplit("--nat s=")
            .next()
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        let gcd = |mut a: i64, mut b: i64| {
            while b != 0 {
                (a, b) = (b, a % b);
            }
            a
        };
        let c = kb * s / gcd(9, kb * s);
        let nats = [
            format!("h={tm}"),
            "w=1".into(),
            format!("c={c}"),
            format!("o={tn}"),
            format!("s={s}"),
        ];
        let mut a: Vec<String> = [
            "run",
            "examples/vgg.rise",
            "--def",
            "vggGemmSplitK",
            "--strategy",
            file,
            "--apply",
            name,
        ]
        .map(String::from)
        .to_vec();
        for n in &nats {
            a.push("--nat".into());
            a.push(n.clone());
        }
        a.extend(
            [
                "--target", "opencl", "--random", "1", "--verify", "--output",
            ]
            .map(String::from),
        );
        a.push(out.to_str().unwrap().into());
        let refs: Vec<&str> = a.iter().map(|s| s.as_str()).collect();
        let r = run(&refs);
        assert!(
            r.status.success(),
            "{name} at {nats:?}:\n{}",
            String::from_utf8_lossy(&r.stderr)
        );
        checked += 1;
    }
    assert_eq!(checked, 9, "one strategy per distinct layer size");
    let _ = std::fs::remove_file(&out);
}

/// Bad parameter spaces are refused with a message before anything compiles.
#[test]
fn bad_parameter_spaces_are_refused_with_a_message() {
    let base = [
        "explore",
        "examples/vgg.rise",
        "--def",
        "vggGemm",
        "--strategy",
        "examples/gpu.elv",
        "--target",
        "opencl",
        "--nat",
        "h=4",
        "--nat",
        "w=4",
        "--nat",
        "c=8",
        "--nat",
        "o=8",
        "--budget",
        "1",
    ];
    let cases: [(&[&str], &str); 5] = [
        (&["--param", "tm=4"], "--apply"),
        (
            &[
                "--apply",
                "mmTiledRect(tm, 8, 2, 2, 8, 2, 4)",
                "--param",
                "tm=4",
                "--param",
                "tm=8",
            ],
            "given twice",
        ),
        (
            &[
                "--apply",
                "mmTiledRect(tm, 8, 2, 2, 8, 2, 4)",
                "--param",
                "tm=4",
                "--require",
                "tm>4",
            ],
            "no assignment",
        ),
        (
            &[
                "--apply",
                "mmTiledRect(tm, 8, 2, 2, 8, 2, 4)",
                "--param",
                "tm=4+",
            ],
            "ends too early",
        ),
        (
            &[
                "--apply",
                "mmTiledRect(tm, 8, 2, 2, 8, 2, 4)",
                "--param",
                "tm=4",
                "--param",
                "h=2",
            ],
            "both a tuned parameter and a size",
        ),
    ];
    for (extra, message) in cases {
        let mut args = base.to_vec();
        args.extend_from_slice(extra);
        let o = run(&args);
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(
            !o.status.success() && err.contains(message),
            "{extra:?}: {err}"
        );
        assert!(!err.contains("panicked"), "{err}");
    }
}
