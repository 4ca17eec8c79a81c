//! The library facade without the command line: `compile`, `Executable` and `verify` on an
//! example, and errors as values.

use shine::{
    compile, verify, Code, Error, Executable, Inputs, Options, RunOptions, Setting, SourceFile,
    StrategySource, Target,
};
use std::path::Path;

fn example(name: &str) -> SourceFile {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../examples")
        .join(name);
    SourceFile::read(&path).expect("the example reads")
}

fn mv_parallel_outer() -> StrategySource {
    StrategySource {
        file: example("cpu.elv"),
        apply: "parallelOuter".into(),
    }
}

fn nats() -> Vec<(String, i64)> {
    vec![("n".into(), 8), ("m".into(), 6)]
}

#[test]
fn compiles_runs_and_verifies_mv_with_openmp() {
    let strategy = mv_parallel_outer();
    let artifact = compile(
        &example("mv.rise"),
        "mv",
        Some(&strategy),
        Target::OpenMp,
        &Options::default(),
    )
    .expect("mv compiles");
    assert!(matches!(artifact.code, Code::C(_)));
    assert!(artifact.code.source().contains("#pragma omp"));
    let names: Vec<String> = artifact.sizes().iter().map(|v| v.to_string()).collect();
    assert_eq!(names, ["n", "m"]);

    let options = RunOptions::default();
    let result = verify(&artifact, Inputs::Random { seed: 3 }, &nats(), &options)
        .expect("the code agrees with the interpreter");
    assert_eq!(result.parts.len(), 1);
    assert_eq!(result.parts[0].shape, [8]);

    let mut exe = Executable::new(&artifact, Inputs::Random { seed: 3 }, &nats(), &options)
        .expect("mv loads");
    assert_eq!(exe.run().expect("mv runs"), result);
    let timings = exe.bench(3, 1).expect("mv is timed");
    assert_eq!(timings.code.runs, 3);
    assert!(timings.wall.is_none());
}

#[test]
fn errors_are_values_with_their_source() {
    let broken = SourceFile::new("broken.rise", "def f : nat =");
    let error = compile(&broken, "f", None, Target::C, &Options::default()).unwrap_err();
    match error.unstaged() {
        Error::InSource { file, diagnostics } => {
            assert_eq!(file.name, "broken.rise");
            assert!(!diagnostics.is_empty());
        }
        other => panic!("a parse error is a diagnostic in the source: {other:?}"),
    }
    assert!(error.to_string().contains("broken.rise"), "{error}");

    let strategy = StrategySource {
        apply: "noSuchStrategy".into(),
        ..mv_parallel_outer()
    };
    let error = compile(
        &example("mv.rise"),
        "mv",
        Some(&strategy),
        Target::C,
        &Options::default(),
    )
    .unwrap_err();
    assert!(error.to_string().contains("noSuchStrategy"), "{error}");

    let artifact = compile(
        &example("mv.rise"),
        "mv",
        Some(&mv_parallel_outer()),
        Target::C,
        &Options::default(),
    )
    .expect("mv compiles");
    let error = verify(
        &artifact,
        Inputs::Random { seed: 1 },
        &[("n".into(), 4)],
        &RunOptions::default(),
    )
    .unwrap_err();
    // in the library's terms, the setting named for a front end to spell as its users give it
    let shown = error.to_string();
    assert!(shown.contains("give `(\"m\", V)` in `nats`"), "{shown}");
    assert!(!shown.contains("--"), "{shown}");
    assert_eq!(
        error.settings(),
        [&Setting::RandomInputs, &Setting::Size("m".into())]
    );
    let flags = error.render(&|s| match s {
        Setting::Size(n) => format!("--nat {n}=V"),
        other => other.library_name(),
    });
    assert!(flags.contains("give --nat m=V"), "{flags}");
    let sanitized = RunOptions {
        sanitize: true,
        ..RunOptions::default()
    };
    let error = sanitized.check(Target::Cuda).unwrap_err();
    assert_eq!(error.settings(), [&Setting::Sanitize]);
    let bad_flags = RunOptions {
        cflags: Some("-DX='a".into()),
        ..RunOptions::default()
    };
    let error = bad_flags.compiler_config().unwrap_err();
    assert!(
        error
            .to_string()
            .starts_with("error: `RunOptions::cflags` `-DX='a`: unbalanced quotes"),
        "{error}"
    );
    assert!(sanitized.check(Target::C).is_ok());
}

/// The stage of an error says which step of the pipeline failed, whatever its wording.
#[test]
fn errors_carry_the_stage_they_come_from() {
    use shine::Stage;
    let source = |text: &str| SourceFile::new("p.rise", text);
    let compile_c = |program: &SourceFile, def: &str, strategy: Option<&StrategySource>| {
        compile(program, def, strategy, Target::C, &Options::default())
    };
    let div = source(
        "def quot : {n: nat} -> n.i32 -> n.i32 -> n.i32 = \
         fun xs ys => zip xs ys |> map (fun p => fst p / snd p)",
    );
    let stage = |r: Result<shine::Artifact, Error>| r.err().map(|e| e.stage());

    assert_eq!(
        stage(compile_c(&source("def f : nat ="), "f", None)),
        Some(Stage::Check)
    );
    assert_eq!(stage(compile_c(&div, "nope", None)), Some(Stage::Check));
    let bad_strategy = StrategySource {
        file: SourceFile::new("s.elv", "def s = noSuchRule"),
        apply: "s".into(),
    };
    assert_eq!(
        stage(compile_c(&div, "quot", Some(&bad_strategy))),
        Some(Stage::Rewrite)
    );

    // as written, the map is not lowered: code generation refuses to choose
    assert_eq!(stage(compile_c(&div, "quot", None)), Some(Stage::Codegen));
    let default = shine::schedules::default_strategy(Target::C);
    let artifact =
        compile_c(&div, "quot", Some(&default)).expect("the default schedule compiles quot");
    let run = |given: Vec<(&str, Vec<i32>)>, options: &RunOptions| {
        let given = given
            .into_iter()
            .map(|(name, v)| {
                let flat = shine::rise::interp::Flat {
                    elem: shine::rise::ScalarType::I32,
                    shape: vec![v.len()],
                    data: v
                        .into_iter()
                        .map(shine::rise::interp::Scalar::I32)
                        .collect(),
                };
                shine::Given::new(name, flat)
            })
            .collect();
        Executable::new(&artifact, Inputs::Arrays(given), &[], options)
    };
    let wrong_count = run(vec![("xs", vec![1, 2])], &RunOptions::default());
    assert_eq!(wrong_count.err().map(|e| e.stage()), Some(Stage::Input));
    let no_compiler = RunOptions {
        cc: "/nonexistent/cc".into(),
        ..RunOptions::default()
    };
    let unbuilt = run(vec![("xs", vec![1]), ("ys", vec![1])], &no_compiler);
    assert_eq!(unbuilt.err().map(|e| e.stage()), Some(Stage::Build));
    let mut exe = run(
        vec![("xs", vec![4, 6]), ("ys", vec![2, 0])],
        &RunOptions::default(),
    )
    .expect("div builds");
    let by_zero = exe.run().expect_err("a division by zero stops the program");
    assert_eq!(by_zero.stage(), Stage::Run, "{by_zero}");
}

#[test]
fn npy_bytes_round_trip_and_evaluate_fits_them_as_a_run_does() {
    use shine::inputs::Given;
    use shine::{evaluate, npy, Array};
    let program = SourceFile::new(
        "p.rise",
        "def pairs : {n: nat} -> n.(f32, i32) -> n.f32 = \
         fun ps => ps |> map (fun p => fst p * 2.0f)",
    );
    let elem = rise::DataType::pair(
        rise::DataType::f32(),
        rise::DataType::Scalar(rise::ScalarType::I32),
    );
    let scalars = [1.5f32, -2.0, 0.25];
    let data = scalars
        .iter()
        .enumerate()
        .flat_map(|(i, &x)| {
            [
                rise::interp::Scalar::F32(x),
                rise::interp::Scalar::I32(i as i32),
            ]
        })
        .collect();
    let input = Array {
        elem,
        shape: vec![3],
        data,
    };
    // a structured array in .npy bytes, read back as a file is read
    let bytes = npy::to_npy_bytes(&input).unwrap();
    let contents = npy::read_contents_bytes(&bytes, "ps").unwrap();
    assert_eq!(contents.shape, [3]);
    let out = evaluate(
        &program,
        "pairs",
        Inputs::Arrays(vec![Given::new("ps", contents)]),
        &[],
        "gcc",
    )
    .unwrap();
    let want: Vec<_> = scalars
        .iter()
        .map(|x| rise::interp::Scalar::F32(x * 2.0))
        .collect();
    assert_eq!(out.parts[0].data, want);
    // the messages of a file, under the name given
    let err = npy::read_contents_bytes(&bytes[..bytes.len() - 1], "ps").unwrap_err();
    assert!(err.contains("`ps`"), "{err}");
    let plain = npy::to_npy_bytes(&out.parts[0]).unwrap();
    let err = evaluate(
        &program,
        "pairs",
        Inputs::Arrays(vec![Given::new(
            "xs",
            npy::read_contents_bytes(&plain, "xs").unwrap(),
        )]),
        &[],
        "gcc",
    )
    .unwrap_err();
    assert!(
        err.to_string()
            .contains("`xs` does not fit parameter 1 of `pairs`"),
        "{err}"
    );
    let err = evaluate(&program, "pairs", Inputs::Arrays(vec![]), &[], "gcc").unwrap_err();
    assert!(
        err.to_string()
            .contains("takes 1 value parameter(s), but 0 input(s) were given"),
        "{err}"
    );
}

#[test]
fn code_built_once_runs_on_many_inputs_in_this_process_or_a_child() {
    use shine::Built;
    use std::sync::Arc;
    let strategy = mv_parallel_outer();
    let artifact = compile(
        &example("mv.rise"),
        "mv",
        Some(&strategy),
        Target::OpenMp,
        &Options::default(),
    )
    .unwrap();
    let Code::C(module) = &artifact.code else {
        panic!("C code")
    };
    let library = runtime::SharedLibrary::compile(
        &module.source,
        &module.entry,
        &runtime::CompilerConfig::default(),
    )
    .unwrap();
    let options = RunOptions::default();
    let child = Built::module(&artifact, &options).unwrap();
    let in_process = Built::Library(Arc::new(library));
    for seed in [1, 2] {
        let want = verify(&artifact, Inputs::Random { seed }, &nats(), &options).unwrap();
        for built in [&child, &in_process] {
            let mut exe = Executable::with_built(
                &artifact,
                Inputs::Random { seed },
                &nats(),
                &options,
                Some(built.clone()),
            )
            .unwrap();
            assert_eq!(exe.run().unwrap(), want);
            assert_eq!(exe.bench(2, 1).unwrap().code.runs, 2);
        }
    }
}

/// Every pass recurses on the depth of the program: a caller on a thread with a small stack
/// (a worker of explore's pool, a Python thread) compiles what the command line compiles.
#[test]
fn compiles_on_a_thread_with_a_small_stack() {
    let program = example("md.rise");
    let strategy = StrategySource {
        file: example("cpu.elv"),
        apply: "sequential".into(),
    };
    let compiled = std::thread::Builder::new()
        .stack_size(128 << 10)
        .spawn(move || {
            compile(
                &program,
                "md",
                Some(&strategy),
                Target::C,
                &Options::default(),
            )
            .map(|a| a.code.source().len())
        })
        .expect("a thread starts")
        .join()
        .expect("the thread ends");
    assert!(compiled.expect("md compiles") > 0);
}
