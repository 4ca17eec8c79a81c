//! Foreign functions (issue 14, item 2) through the command line: `examples/foreign.rise`
//! type-checks, evaluates (the interpreter runs the C bodies in a child process), and runs
//! verified on C, OpenMP and OpenCL (PoCL) with a foreign function inside a map, after a
//! map inside a reduction, and as the operator of sequential and GPU tree reductions;
//! CUDA code is compiled. A foreign function that divides by zero or dereferences null is
//! a clear error in `eval` and in `run`, and so is a missing C compiler. Bodies that print
//! (`printf`, `puts`, `fputs` to stdout, `write(1, ..)`) leave the result alone, bodies that
//! `exit`, `_exit` or `abort` are errors naming the function, the time limit holds per call
//! (`SHINE_FOREIGN_TIME_LIMIT`), preprocessor lines and `_Pragma` are refused, and names of
//! C libraries and of OpenCL and CUDA builtins are renamed, in `eval` and on every target.
//!
//! Without any OpenCL platform the OpenCL runs FAIL, as the runtime's tests do; set
//! `SHINE_SKIP_OPENCL=1` to skip them.

use shine::rise::interp::Scalar;
use shine::rise::{DataType, ScalarType};
use shine::Array;
use std::path::Path;
use std::process::{Command, Output};

mod support;
use support::{skip_opencl, targets, test_gpu};

const EXAMPLE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/foreign.rise");
const CPU: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/cpu.elv");
const GPU: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/gpu.elv");

/// Foreign functions that fail: an integer division by zero, a null pointer dereference.
const FAULTS: &str = "
foreign divzero (x: i32) : i32 { volatile int32_t zero = 0; return x / zero; }
foreign nullread (x: f32) : f32 { volatile float *p = 0; return *p + x; }
def divAll = fun xs => map (fun x => divzero x) xs
def readAll = fun xs => map (fun x => nullread x) xs
";

fn shine(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_shine"))
        .args(args)
        .output()
        .expect("shine runs")
}

fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

fn write(path: &Path, elem: ScalarType, data: Vec<Scalar>) {
    let a = Array {
        elem: DataType::Scalar(elem),
        shape: vec![data.len()],
        data,
    };
    shine::npy::write(path, &a).unwrap();
}

#[test]
fn check_prints_the_signatures() {
    let out = shine(&["check", EXAMPLE]);
    let t = text(&out);
    assert!(out.status.success(), "{t}");
    assert!(t.contains("clampf : f32 -> f32 -> f32 -> f32\n"), "{t}");
    assert!(t.contains("gcd : i32 -> i32 -> i32\n"), "{t}");
    assert!(t.contains("clampAll : {n: nat} -> n.f32 -> n.f32\n"), "{t}");
}

#[test]
fn eval_runs_the_c_bodies() {
    let dir = tempfile::tempdir().unwrap();
    let xs = dir.path().join("xs.npy");
    let fs = [-2.0f32, -0.5, 0.25, 0.75, 3.0];
    write(&xs, ScalarType::F32, fs.map(Scalar::F32).to_vec());
    let is = dir.path().join("is.npy");
    write(
        &is,
        ScalarType::I32,
        [12, -18, 30, 42].map(Scalar::I32).to_vec(),
    );
    let xs = xs.to_str().unwrap();
    let is = is.to_str().unwrap();
    for (def, input, want) in [
        ("clampAll", xs, "[0.0, 0.0, 0.25, 0.75, 1.0]"),
        ("clampedSum", xs, "0.5"),
        ("gcdAll", is, "6"),
    ] {
        let out = shine(&["eval", EXAMPLE, "--def", def, "--input", input]);
        let t = text(&out);
        assert!(out.status.success(), "{def}: {t}");
        assert_eq!(t.trim(), want, "{def}");
    }
    // no C compiler: an error naming the function
    let out = shine(&[
        "eval",
        EXAMPLE,
        "--def",
        "gcdAll",
        "--input",
        is,
        "--cc",
        "/nonexistent/cc",
    ]);
    let t = text(&out);
    assert!(!out.status.success(), "{t}");
    assert!(
        t.contains("foreign function `gcd` cannot be evaluated: the C compiler `/nonexistent/cc` was not found"),
        "{t}"
    );
}

/// `shine run` of `def` of the example under `strategy` (file, name) for `target` at the
/// size `n` on random inputs of `seed`, which must verify against the interpreter.
fn run_verified(def: &str, (file, strategy): (&str, &str), target: &str, n: &str, seed: &str) {
    let out = shine(&[
        "run",
        EXAMPLE,
        "--def",
        def,
        "--strategy",
        file,
        "--apply",
        strategy,
        "--target",
        target,
        "--nat",
        n,
        "--random",
        seed,
        "--verify",
    ]);
    let t = text(&out);
    assert!(
        out.status.success() && t.contains("verified against the interpreter"),
        "{def} {strategy} {target}: {t}"
    );
}

#[test]
fn runs_verify_on_c_openmp_and_opencl() {
    let targets = targets();
    for (def, strategy, n) in [
        ("clampAll", "sequential", "n=33"),
        ("clampAll", "parallelOuter", "n=33"),
        ("clampedSum", "sequential", "n=40"),
        ("clampedSum", "fuseReductions", "n=40"),
        ("gcdAll", "sequential", "n=17"),
    ] {
        for target in &targets {
            if matches!(*target, "opencl" | "cuda") && strategy == "parallelOuter" {
                continue; // mapPar is for CPUs
            }
            run_verified(def, (CPU, strategy), target, n, "5");
        }
    }
    if skip_opencl() {
        eprintln!("skipping the GPU tree reduction: SHINE_SKIP_OPENCL=1");
        return;
    }
    // a foreign operator in the work-group's tree reduction (with `iterate`)
    run_verified("gcdPartial", (GPU, "reduceWorkGroup"), "opencl", "n=3", "2");
}

#[test]
fn every_target_prints_the_function_before_its_kernels() {
    for (target, head) in [
        (
            "c",
            "static inline float shine_foreign_clampf(float x, float lo, float hi) {",
        ),
        (
            "openmp",
            "static inline float shine_foreign_clampf(float x, float lo, float hi) {",
        ),
        (
            "opencl",
            "static inline float shine_foreign_clampf(float x, float lo, float hi) {",
        ),
        (
            "cuda",
            "static __device__ inline float shine_foreign_clampf(float x, float lo, float hi) {",
        ),
    ] {
        let out = shine(&[
            "compile",
            EXAMPLE,
            "--def",
            "clampAll",
            "--strategy",
            GPU,
            "--apply",
            "global1d",
            "--target",
            target,
        ]);
        let t = text(&out);
        if target == "c" || target == "openmp" {
            // global1d is a GPU schedule; the C targets refuse it, and take `lowered`
            assert!(!out.status.success(), "{t}");
            let out = shine(&[
                "compile",
                EXAMPLE,
                "--def",
                "clampAll",
                "--strategy",
                CPU,
                "--apply",
                "sequential",
                "--target",
                target,
            ]);
            let t = text(&out);
            assert!(out.status.success(), "{target}: {t}");
            assert!(
                t.contains(head) && t.contains("#include <math.h>"),
                "{target}: {t}"
            );
            assert!(t.find(head) < t.find("void clampAll("), "{target}: {t}");
            assert!(t.contains("] = shine_foreign_clampf("), "{target}: {t}");
            continue;
        }
        assert!(out.status.success(), "{target}: {t}");
        assert!(t.contains(head), "{target}: {t}");
        assert!(
            t.contains("return x < lo ? lo : (x > hi ? hi : x);"),
            "{target}: {t}"
        );
        assert!(t.contains("typedef int int32_t;"), "{target}: {t}");
        assert!(t.find(head) < t.find("clampAll("), "{target}: {t}");
    }
}

#[test]
fn faults_of_foreign_code_are_errors_in_eval_and_run() {
    let dir = tempfile::tempdir().unwrap();
    let program = dir.path().join("faults.rise");
    std::fs::write(&program, FAULTS).unwrap();
    let program = program.to_str().unwrap();
    let is = dir.path().join("is.npy");
    write(&is, ScalarType::I32, [1, 2, 3].map(Scalar::I32).to_vec());
    let xs = dir.path().join("xs.npy");
    write(&xs, ScalarType::F32, [1.0, 2.0].map(Scalar::F32).to_vec());
    for (def, input, signal, name) in [
        ("divAll", &is, "SIGFPE", "divzero"),
        ("readAll", &xs, "SIGSEGV", "nullread"),
    ] {
        let input = input.to_str().unwrap();
        let out = shine(&["eval", program, "--def", def, "--input", input]);
        let t = text(&out);
        assert!(!out.status.success(), "{def}: {t}");
        assert!(
            t.contains(&format!("foreign function `{name}` crashed")) && t.contains(signal),
            "{def}: {t}"
        );
        assert!(!t.contains("panicked"), "{t}");
        for target in ["c", "openmp"] {
            let out = shine(&[
                "run",
                program,
                "--def",
                def,
                "--strategy",
                CPU,
                "--apply",
                "sequential",
                "--target",
                target,
                "--input",
                input,
                "--verify",
            ]);
            let t = text(&out);
            assert!(!out.status.success(), "{def} {target}: {t}");
            assert!(t.contains(signal) && t.contains(def), "{def} {target}: {t}");
            // the crash names the foreign function whose code runs in the module
            assert!(
                t.contains(&format!("the module calls the foreign function `{name}`")),
                "{def} {target}: {t}"
            );
            assert!(!t.contains("panicked"), "{t}");
        }
    }
}

/// Bodies that print, end the process or hang, and functions and parameters named after
/// names of C libraries and of the OpenCL and CUDA languages.
const MISBEHAVING: &str = r#"
foreign chatty (x: i32) : i32 { printf("debug %d\n", x); return x + 1; }
foreign noisy (x: i32) : i32 {
  puts("noise"); fputs("more\n", stdout); fflush(stdout);
  long write(int, const void *, unsigned long);
  write(1, "raw\n", 4);
  return x + 1;
}
foreign quit (x: i32) : i32 { if (x > 1) exit(0); return x + 1; }
foreign quitNow (x: i32) : i32 { void _exit(int); if (x > 1) _exit(0); return x + 1; }
foreign stop (x: i32) : i32 { if (x > 1) abort(); return x + 1; }
foreign spin (x: i32) : i32 { volatile int k = 1; while (k) {} return x; }
def chattyAll = fun xs => map (fun x => chatty x) xs
def noisyAll = fun xs => map (fun x => noisy x) xs
def quitAll = fun xs => map (fun x => quit x) xs
def quitNowAll = fun xs => map (fun x => quitNow x) xs
def stopAll = fun xs => map (fun x => stop x) xs
def spinAll = fun xs => map (fun x => spin x) xs
"#;

/// `shine run` of `def` of `program` on `target` (sequential on C and OpenMP, `global1d` on
/// OpenCL and CUDA) with `--verify`, with the environment `env` set.
fn run_target(program: &str, def: &str, target: &str, input: &str) -> Output {
    let (strategy, apply) = match target {
        "c" | "openmp" => (CPU, "sequential"),
        _ => (GPU, "global1d"),
    };
    shine(&[
        "run",
        program,
        "--def",
        def,
        "--strategy",
        strategy,
        "--apply",
        apply,
        "--target",
        target,
        "--input",
        input,
        "--verify",
    ])
}

/// A program file of `text` in `dir`, and an input `[1, 2, 3]` of `i32`.
fn program_and_input(dir: &Path, text: &str) -> (String, String) {
    let program = dir.join("p.rise");
    std::fs::write(&program, text).unwrap();
    let input = dir.join("is.npy");
    write(&input, ScalarType::I32, [1, 2, 3].map(Scalar::I32).to_vec());
    let path = |p: &Path| p.to_str().unwrap().to_string();
    (path(&program), path(&input))
}

#[test]
fn what_a_body_prints_never_reaches_the_result() {
    let dir = tempfile::tempdir().unwrap();
    let (program, input) = program_and_input(dir.path(), MISBEHAVING);
    for (def, prints) in [("chattyAll", "debug 3"), ("noisyAll", "noise")] {
        // the interpreter: the result alone on stdout, the body's output on stderr
        let out = shine(&["eval", &program, "--def", def, "--input", &input]);
        let t = text(&out);
        assert!(out.status.success(), "{def}: {t}");
        assert_eq!(
            String::from_utf8_lossy(&out.stdout).trim(),
            "[2, 3, 4]",
            "{def}"
        );
        assert!(
            String::from_utf8_lossy(&out.stderr).contains(prints),
            "{def}: {t}"
        );
        for target in targets() {
            let out = run_target(&program, def, target, &input);
            let t = text(&out);
            if def == "noisyAll" && matches!(target, "opencl" | "cuda") {
                // `puts`, `fputs`, `write` are no functions of OpenCL C or CUDA device code
                assert!(!out.status.success(), "{def} {target}: {t}");
                assert!(t.contains("noisy"), "{def} {target}: {t}");
                continue;
            }
            assert!(
                out.status.success() && t.contains("verified against the interpreter"),
                "{def} {target}: {t}"
            );
            // the printed result alone on stdout (OpenCL on a CPU device runs in a child
            // process whose kernels print on stderr; a GPU's printf is the driver's)
            if target != "cuda" && !(target == "opencl" && test_gpu()) {
                assert_eq!(
                    String::from_utf8_lossy(&out.stdout).trim(),
                    "[2, 3, 4]",
                    "{def} {target}: {t}"
                );
            }
        }
    }
}

#[test]
fn a_body_that_ends_the_process_is_an_error_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let (program, input) = program_and_input(dir.path(), MISBEHAVING);
    for (def, name, eval_error) in [
        (
            "quitAll",
            "quit",
            "ended the process running it (exit status: 0)",
        ),
        (
            "quitNowAll",
            "quitNow",
            "ended the process running it (exit status: 0)",
        ),
        ("stopAll", "stop", "crashed: it was killed by SIGABRT"),
    ] {
        let out = shine(&["eval", &program, "--def", def, "--input", &input]);
        let t = text(&out);
        assert!(!out.status.success(), "{def}: {t}");
        assert!(
            t.contains(&format!("foreign function `{name}` {eval_error}")),
            "{def}: {t}"
        );
        for target in targets() {
            let out = run_target(&program, def, target, &input);
            let t = text(&out);
            assert!(!out.status.success(), "{def} {target}: {t}");
            assert!(
                t.contains(name) && !t.contains("panicked"),
                "{def} {target}: {t}"
            );
            if matches!(target, "c" | "openmp") && name != "stop" {
                assert!(
                    t.contains("exited (exit status: 0) before finishing")
                        && t.contains(&format!("(`{name}`)")),
                    "{def} {target}: {t}"
                );
            }
        }
    }
    // `run --bench` never times runs that did not finish
    let out = shine(&[
        "run",
        &program,
        "--def",
        "quitAll",
        "--strategy",
        CPU,
        "--apply",
        "sequential",
        "--target",
        "c",
        "--input",
        &input,
        "--bench",
        "5",
    ]);
    let t = text(&out);
    assert!(
        !out.status.success() && t.contains("before finishing"),
        "{t}"
    );
    assert!(!t.contains(" ms"), "{t}");
}

#[test]
fn the_time_limit_holds_per_call() {
    let dir = tempfile::tempdir().unwrap();
    let (program, input) = program_and_input(
        dir.path(),
        &format!(
            "{MISBEHAVING}
foreign nap (x: i32) : i32 {{ int usleep(unsigned); usleep(200000); return x + 1; }}
def napAll = fun xs => map (fun x => nap x) xs"
        ),
    );
    let eval = |def: &str, limit: &str| {
        Command::new(env!("CARGO_BIN_EXE_shine"))
            .args(["eval", &program, "--def", def, "--input", &input])
            .env("SHINE_FOREIGN_TIME_LIMIT", limit)
            .output()
            .expect("shine runs")
    };
    let start = std::time::Instant::now();
    let out = eval("spinAll", "0.3");
    let t = text(&out);
    assert!(!out.status.success(), "{t}");
    assert!(
        t.contains("foreign function `spin` did not return within 0.3 s"),
        "{t}"
    );
    assert!(start.elapsed().as_secs() < 5, "{:?}", start.elapsed());
    // three calls of 0.2 s: more than the limit together, each within it
    let out = eval("napAll", "0.3");
    let t = text(&out);
    assert!(out.status.success(), "{t}");
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "[2, 3, 4]");
    let out = eval("napAll", "soon");
    let t = text(&out);
    assert!(
        !out.status.success() && t.contains("SHINE_FOREIGN_TIME_LIMIT"),
        "{t}"
    );
}

#[test]
fn preprocessor_lines_and_pragmas_in_bodies_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    for (body, bad) in [
        ("return x;\n#define float double\n", "#"),
        ("#include <stdio.h>\nreturn x;", "#"),
        ("return x; \\\n#undef NAN", "#"),
        ("return x;\n%:define A 1", "%:"),
        ("return x;\n??=define A 1", "??="),
        ("_Pragma(\"GCC optimize(0)\") return x;", "_Pragma"),
    ] {
        let source = format!(
            "foreign f (x: i32) : i32 {{{body}}}\ndef fAll = fun xs => map (fun x => f x) xs\n"
        );
        let (program, input) = program_and_input(dir.path(), &source);
        let at = source.find(bad).unwrap();
        let mut outs = vec![
            shine(&["check", &program]),
            shine(&["eval", &program, "--def", "fAll", "--input", &input]),
        ];
        outs.extend(
            targets()
                .into_iter()
                .map(|t| run_target(&program, "fAll", t, &input)),
        );
        for out in outs {
            let t = text(&out);
            assert!(!out.status.success(), "{body}: {t}");
            assert!(t.contains("may not"), "{body}: {t}");
            // the error points at the line of the offending token
            let line = source[..at].matches('\n').count() + 1;
            assert!(t.contains(&format!(":{line}:")), "{body}: {t}");
        }
    }
}

/// Foreign functions and parameters named after names of the C library (macros and
/// functions of the headers modules and the interpreter's helper include), of OpenCL C
/// and of CUDA; each recursive, so that the body's calls of its own name are checked too.
const LIBRARY_NAMES: &str = r#"
foreign printf (stdin: i32) (M_PI: i32) : i32 { return stdin <= 0 ? M_PI : printf(stdin - 1, M_PI + 1); }
foreign strtod (errno: i32) : i32 { return errno + 1; }
foreign INFINITY (float4: i32) : i32 { return float4 + 1; }
foreign main (EOF: i32) : i32 { return EOF <= 0 ? 7 : main(EOF - 1); }
foreign exit (NULL: i32) : i32 { return NULL + 1; }
foreign fread (linux: i32) : i32 { return linux + 1; }
foreign write (MAXFLOAT: i32) : i32 { return MAXFLOAT + 1; }
foreign get_global_id (CLK_LOCAL_MEM_FENCE: i32) : i32 { return CLK_LOCAL_MEM_FENCE + 1; }
foreign threadIdx (INT_MAX: i32) : i32 { return INT_MAX + 1; }
foreign sqrtf (HUGE_VALF: i32) : i32 { return HUGE_VALF + 1; }
foreign fopen (stdout: i32) : i32 { return stdout < 0 ? -stdout : stdout; }
foreign isnan (RAND_MAX: i32) : i32 { return RAND_MAX + 1; }
foreign shine_like (x: i32) : i32 { return x; }
def libAll = fun xs => map (fun x =>
  printf x 1i32 |> strtod |> INFINITY |> exit |> fread |> write |> get_global_id
    |> threadIdx |> sqrtf |> fopen |> isnan |> main) xs
"#;

#[test]
fn names_of_libraries_and_builtins_are_renamed_on_every_target() {
    let dir = tempfile::tempdir().unwrap();
    let without_reserved: String = LIBRARY_NAMES
        .lines()
        .filter(|l| !l.contains("shine_like"))
        .collect::<Vec<_>>()
        .join("\n");
    let (program, input) = program_and_input(dir.path(), &without_reserved);
    let out = shine(&["eval", &program, "--def", "libAll", "--input", &input]);
    let t = text(&out);
    assert!(out.status.success(), "{t}");
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "[7, 7, 7]");
    for target in targets() {
        let out = run_target(&program, "libAll", target, &input);
        let t = text(&out);
        assert!(
            out.status.success() && t.contains("verified against the interpreter"),
            "{target}: {t}"
        );
    }
    // names of the code generator's own are refused
    let (program, _) = program_and_input(dir.path(), LIBRARY_NAMES);
    let out = shine(&["check", &program]);
    let t = text(&out);
    assert!(
        !out.status.success() && t.contains("`shine_like` is reserved"),
        "{t}"
    );
}

/// Under `--target opencl` on a CPU platform (PoCL runs kernels on threads of the process
/// that calls it), a foreign function that dereferences null crashes the runtime's OpenCL
/// child process, not `shine`: an error naming the signal, the kernel and the function.
/// (On an NVIDIA GPU, where kernels run on the device, the driver reports the fault.)
#[test]
fn a_crashing_foreign_function_under_opencl_is_an_error() {
    if skip_opencl() {
        eprintln!("skipping: SHINE_SKIP_OPENCL=1");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let program = dir.path().join("faults.rise");
    std::fs::write(&program, FAULTS).unwrap();
    let out = shine(&[
        "run",
        program.to_str().unwrap(),
        "--def",
        "readAll",
        "--strategy",
        GPU,
        "--apply",
        "global1d",
        "--target",
        "opencl",
        "--nat",
        "n=8",
        "--random",
        "1",
    ]);
    let t = text(&out);
    if test_gpu() && !t.contains("the OpenCL process of") {
        // an NVIDIA device (runs in `shine`'s process): the driver's error, if any, but
        // never the end of `shine` by a signal
        assert!(out.status.code().is_some(), "{t}");
        return;
    }
    // an exit status of its own, not a signal's death
    assert_eq!(out.status.code(), Some(1), "{t}");
    assert!(
        t.contains("SIGSEGV") && t.contains("kernel `readAll`"),
        "{t}"
    );
    assert!(t.contains("foreign function `nullread`"), "{t}");
    assert!(!t.contains("panicked"), "{t}");
}

/// A foreign function that crashes on an element the result does not need fails that
/// element only: the interpreter computes the rest, as compiled code does (difftest seed
/// 2031, case 103 on C, OpenCL and CUDA: the interpreter refused the whole map because its
/// calls ran as one batch). Where the result needs the element, it stays an error.
#[test]
fn a_crash_on_an_element_the_result_does_not_need_fails_only_that_element() {
    let dir = tempfile::tempdir().unwrap();
    let program = dir.path().join("p.rise");
    std::fs::write(
        &program,
        "foreign crashNeg (x: i32) : i32 { if (x < 0) { volatile int *p = 0; *p = 1; } return x + 1; }\n\
         def firstOnly : 3.i32 -> 1.i32 = fun xs => xs |> map (fun x => crashNeg x) |> take 1\n\
         def all3 : 3.i32 -> 3.i32 = fun xs => xs |> map (fun x => crashNeg x)\n",
    )
    .unwrap();
    let input = dir.path().join("xs.npy");
    write(
        &input,
        ScalarType::I32,
        [5, -1, 7].map(Scalar::I32).to_vec(),
    );
    let (program, input) = (program.to_str().unwrap(), input.to_str().unwrap());
    let out = shine(&["eval", program, "--def", "firstOnly", "--input", input]);
    assert!(out.status.success(), "{}", text(&out));
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "[6]");
    let out = shine(&["eval", program, "--def", "all3", "--input", input]);
    let t = text(&out);
    assert!(
        !out.status.success() && t.contains("`crashNeg` crashed"),
        "{t}"
    );
    for target in ["c", "openmp"] {
        let out = run_target(program, "firstOnly", target, input);
        let t = text(&out);
        assert!(
            out.status.success() && t.contains("verified"),
            "{target}: {t}"
        );
    }
}
