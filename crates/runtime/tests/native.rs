//! Hand-written C modules that follow the generated-code contract, compiled and run natively.

use runtime::{compare, Buffer, CompilerConfig, Module, RuntimeError, Tolerance};

const VECTOR_ADD: &str = r#"
#include <stdint.h>
int vadd(void *const *buffers, const int64_t *sizes) {
  float *out = buffers[0];
  const float *x = buffers[1], *y = buffers[2];
  for (int64_t i = 0; i < sizes[0]; i++) out[i] = x[i] + y[i];
  return 0;
}
"#;

fn vector_add(module: &Module, n: usize) -> Result<(), RuntimeError> {
    let x: Vec<f32> = (0..n).map(|i| i as f32 * 0.5).collect();
    let y: Vec<f32> = (0..n).map(|i| 1.0 / (i as f32 + 1.0)).collect();
    let mut out = Buffer::zeroed(4 * n);
    module.run(
        &mut out,
        &[&Buffer::from_slice(&x), &Buffer::from_slice(&y)],
        &[n as i64],
    )?;
    let expected: Vec<f64> = x.iter().zip(&y).map(|(a, b)| f64::from(a + b)).collect();
    let actual: Vec<f64> = out
        .as_slice::<f32>()
        .iter()
        .map(|&v| f64::from(v))
        .collect();
    compare(&expected, &actual, Tolerance::exact()).unwrap();
    Ok(())
}

#[test]
fn vector_add_f32() {
    let module = Module::compile(VECTOR_ADD, "vadd", &CompilerConfig::default()).unwrap();
    assert!(!module.is_sanitized());
    assert_eq!(module.entry(), "vadd");
    vector_add(&module, 1000).unwrap();
    vector_add(&module, 3).unwrap();
}

#[test]
fn scalar_input_and_several_sizes() {
    // out[i][j] = a * x[i][j] + y[j], with sizes [rows, cols] and the scalar a as a buffer.
    let source = r#"
    #include <stdint.h>
    int axpy(void *const *b, const int64_t *s) {
      double *out = b[0]; const double *a = b[1], *x = b[2], *y = b[3];
      for (int64_t i = 0; i < s[0]; i++)
        for (int64_t j = 0; j < s[1]; j++) out[i * s[1] + j] = a[0] * x[i * s[1] + j] + y[j];
      return 0;
    }"#;
    let module = Module::compile(source, "axpy", &CompilerConfig::default()).unwrap();
    let x: Vec<f64> = (0..6).map(f64::from).collect();
    let mut out = Buffer::zeroed(6 * 8);
    let inputs = [
        &Buffer::from_slice(&[2.0f64]),
        &Buffer::from_slice(&x),
        &Buffer::from_slice(&[10.0f64, 20.0, 30.0]),
    ];
    module.run(&mut out, &inputs, &[2, 3]).unwrap();
    assert_eq!(
        out.to_vec::<f64>(),
        vec![10.0, 22.0, 34.0, 16.0, 28.0, 40.0]
    );
}

/// A result that is a tuple of arrays: one output buffer per array, before the inputs.
const SUM_AND_DIFF: &str = r#"
#include <stdint.h>
int sd(void *const *buffers, const int64_t *sizes) {
  float *sum = buffers[0];
  double *diff = buffers[1];
  const float *x = buffers[2], *y = buffers[3];
  for (int64_t i = 0; i < sizes[0]; i++) sum[i] = x[i] + y[i];
  for (int64_t i = 0; i < sizes[1]; i++) diff[i] = (double)x[i] - (double)y[i];
  return 0;
}
"#;

fn sum_and_diff(config: &CompilerConfig) {
    let module = Module::compile(SUM_AND_DIFF, "sd", config).unwrap();
    let x = Buffer::from_slice(&[1.0f32, 2.0, 3.0]);
    let y = Buffer::from_slice(&[0.5f32, 0.25, 4.0]);
    let mut outputs = [Buffer::zeroed(3 * 4), Buffer::zeroed(2 * 8)];
    module
        .run_outputs(&mut outputs, &[&x, &y], &[3, 2])
        .unwrap();
    assert_eq!(outputs[0].to_vec::<f32>(), vec![1.5, 2.25, 7.0]);
    assert_eq!(outputs[1].to_vec::<f64>(), vec![0.5, 1.75]);
    let timing = module
        .bench_outputs(&mut outputs, &[&x, &y], &[3, 2], 2, 1)
        .unwrap();
    assert_eq!(timing.runs, 2);
    assert_eq!(outputs[1].to_vec::<f64>(), vec![0.5, 1.75]);
    let err = module.run_outputs(&mut [], &[&x, &y], &[3, 2]).unwrap_err();
    assert!(err.to_string().contains("at least one output"), "{err}");
}

#[test]
fn several_output_buffers() {
    sum_and_diff(&CompilerConfig::default());
}

#[test]
fn several_output_buffers_with_exact_buffers() {
    // sanitized modules copy each buffer to an allocation of its own and back
    let probe = CompilerConfig::default();
    if !probe.supports_sanitizer(runtime::Sanitizer::Address) {
        eprintln!("skipped: no AddressSanitizer here");
        return;
    }
    sum_and_diff(&probe.with_sanitizer(runtime::Sanitizer::Address));
}

const OPENMP: &str = r#"
#include <stdint.h>
#include <omp.h>
int sq(void *const *buffers, const int64_t *sizes) {
  int64_t *out = buffers[0];
  const int64_t *x = buffers[1];
  #pragma omp parallel for
  for (int64_t i = 1; i < sizes[0]; i++) out[i] = x[i] * x[i];
  out[0] = omp_get_max_threads();
  return 0;
}
"#;

#[test]
fn openmp_with_default_flags() {
    let n = 100_000;
    let x: Vec<i64> = (0..n as i64).collect();
    for _ in 0..3 {
        // Compiled, run and dropped repeatedly: unloading OpenMP code must not crash.
        let module = Module::compile(OPENMP, "sq", &CompilerConfig::default()).unwrap();
        let mut out = Buffer::zeroed(8 * n);
        module
            .run(&mut out, &[&Buffer::from_slice(&x)], &[n as i64])
            .unwrap();
        let out = out.as_slice::<i64>();
        assert!(out[0] >= 1, "omp_get_max_threads() = {}", out[0]);
        assert!(out[1..].iter().zip(&x[1..]).all(|(o, x)| *o == x * x));
    }
}

#[test]
fn compile_error_reports_the_compiler_message() {
    let keep = tempfile::tempdir().unwrap();
    let config = CompilerConfig::default().keep_in(keep.path());
    let source =
        "#include <stdint.h>\nint f(void *const *b, const int64_t *s) { undeclared_thing = 1; }\n";
    let Err(err) = Module::compile(source, "f", &config) else {
        panic!("compiled invalid C")
    };
    let RuntimeError::CompilationFailed {
        command,
        stderr,
        source_path,
    } = &err
    else {
        panic!("{err:?}")
    };
    assert!(stderr.contains("undeclared_thing"), "{stderr}");
    assert!(
        command.starts_with("gcc ") && command.contains("driver.c"),
        "{command}"
    );
    let source_path = source_path.as_ref().expect("kept with keep_in");
    assert_eq!(std::fs::read_to_string(source_path).unwrap(), source);
    let message = err.to_string();
    assert!(
        message.contains("compiling")
            && message.contains("undeclared_thing")
            && message.contains(command.as_str()),
        "{message}"
    );
}

#[test]
fn a_failed_compile_removes_its_temporary_directory() {
    let source = "int f(void *const *b, const long *s) { undeclared_thing = 1; }\n";
    let Err(err) = Module::compile(source, "f", &CompilerConfig::default()) else {
        panic!("compiled invalid C")
    };
    let RuntimeError::CompilationFailed {
        command,
        stderr,
        source_path,
    } = &err
    else {
        panic!("{err:?}")
    };
    assert!(stderr.contains("undeclared_thing"), "{stderr}");
    assert_eq!(source_path, &None);
    // the command names the files of the module's directory, which is gone
    let module_c = command
        .split(' ')
        .find(|a| a.ends_with("module.c"))
        .expect("the command names module.c");
    let dir = std::path::Path::new(module_c).parent().unwrap();
    assert!(dir.is_absolute() && !dir.exists(), "{command}");
    let message = err.to_string();
    assert!(
        message.contains("temporary directory is removed") && message.contains(command.as_str()),
        "{message}"
    );
}

#[test]
fn unknown_compiler_is_not_found() {
    let config = CompilerConfig::default().with_compiler("shine-no-such-cc");
    let err = Module::compile(VECTOR_ADD, "vadd", &config)
        .err()
        .expect("no such compiler");
    assert!(
        matches!(err, RuntimeError::CompilerNotFound { .. }),
        "{err:?}"
    );
    let message = err.to_string();
    assert!(
        message.contains("`shine-no-such-cc` not found") && message.contains("--cc"),
        "{message}"
    );
}

#[test]
fn missing_symbol_and_bad_entry_name() {
    let err = Module::compile(VECTOR_ADD, "nope", &CompilerConfig::default())
        .err()
        .expect("no entry nope");
    // the driver calls the entry point: linking fails without it
    assert!(
        matches!(err, RuntimeError::CompilationFailed { ref stderr, .. } if stderr.contains("nope")),
        "{err:?}"
    );
    let err = Module::compile(VECTOR_ADD, "not an identifier", &CompilerConfig::default())
        .err()
        .unwrap();
    assert!(matches!(err, RuntimeError::InvalidArgument(_)), "{err:?}");
}

fn constant_module(value: f32) -> Module {
    let source = format!(
        "#include <stdint.h>\nint entry(void *const *b, const int64_t *s) {{ *(float *)b[0] = {value:?}f; return 0; }}\n"
    );
    Module::compile(
        &source,
        "entry",
        &CompilerConfig::default().with_flags(["-O1"]),
    )
    .unwrap()
}

fn run_constant(module: &Module) -> f32 {
    let mut out = Buffer::zeroed(4);
    module.run(&mut out, &[], &[]).unwrap();
    out.as_slice::<f32>()[0]
}

#[test]
fn same_entry_name_does_not_clash() {
    let one = constant_module(1.0);
    let two = constant_module(2.0);
    assert_ne!(one.dir(), two.dir());
    assert_eq!(
        (run_constant(&one), run_constant(&two), run_constant(&one)),
        (1.0, 2.0, 1.0)
    );
    drop(one);
    let three = constant_module(3.0);
    assert_eq!((run_constant(&two), run_constant(&three)), (2.0, 3.0));
    // Concurrent compiles in one process get distinct files too.
    let values: Vec<f32> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..4)
            .map(|i| s.spawn(move || run_constant(&constant_module(10.0 + i as f32))))
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    assert_eq!(values, vec![10.0, 11.0, 12.0, 13.0]);
}

#[test]
fn keep_dir_keeps_the_files() {
    let keep = tempfile::tempdir().unwrap();
    let module = Module::compile(
        VECTOR_ADD,
        "vadd",
        &CompilerConfig::default().keep_in(keep.path()),
    )
    .unwrap();
    let dir = module.dir().to_path_buf();
    assert!(dir.starts_with(keep.path()));
    drop(module);
    assert_eq!(
        std::fs::read_to_string(dir.join("module.c")).unwrap(),
        VECTOR_ADD
    );
    assert!(dir.join("module").exists());
}

#[test]
fn temporary_dir_is_removed() {
    let module = Module::compile(VECTOR_ADD, "vadd", &CompilerConfig::default()).unwrap();
    let dir = module.dir().to_path_buf();
    assert!(dir.join("module.c").exists());
    drop(module);
    assert!(!dir.exists());
}

#[test]
fn bench_statistics_are_consistent() {
    let module = Module::compile(VECTOR_ADD, "vadd", &CompilerConfig::default()).unwrap();
    let n = 1 << 16;
    let x = Buffer::from_slice(&vec![1.0f32; n]);
    let mut out = Buffer::zeroed(4 * n);
    let t = module
        .bench(&mut out, &[&x, &x], &[n as i64], 7, 2)
        .unwrap();
    assert_eq!((t.runs, t.samples_ms.len()), (7, 7));
    assert!(
        t.samples_ms.iter().all(|s| s.is_finite() && *s >= 0.0),
        "{t:?}"
    );
    assert!(t.min_ms <= t.median_ms && t.median_ms <= t.max_ms, "{t:?}");
    let mut sorted = t.samples_ms.clone();
    sorted.sort_by(f64::total_cmp);
    assert_eq!(
        (t.min_ms, t.median_ms, t.max_ms),
        (sorted[0], sorted[3], sorted[6])
    );
    assert!(out.as_slice::<f32>().iter().all(|&v| v == 2.0));
    let err = module
        .bench(&mut out, &[&x, &x], &[n as i64], 0, 1)
        .unwrap_err();
    assert!(matches!(err, RuntimeError::InvalidArgument(_)), "{err:?}");
}

#[test]
fn a_nonzero_status_is_an_error() {
    let source = "#include <stdint.h>\nint stop(void *const *b, const int64_t *s) { (void)b; return (int)s[0]; }\n";
    let module = Module::compile(source, "stop", &CompilerConfig::default()).unwrap();
    let mut out = Buffer::from_slice(&[0.0f32]);
    module.run(&mut out, &[], &[0]).unwrap();
    let err = module.run(&mut out, &[], &[7]).unwrap_err();
    assert!(
        matches!(err, RuntimeError::ProgramStatus { status: 7, ref entry } if entry == "stop"),
        "{err}"
    );
}

/// A module whose entry point does `body` (with `int32_t *o = b[0]` and the sizes `s`).
fn faulty(name: &str, body: &str, flags: &[&str]) -> Module {
    let source = format!(
        "#include <stdint.h>\n#include <stdlib.h>\nint {name}(void *const *b, const int64_t *s) {{ int32_t *o = b[0]; {body} return 0; }}\n"
    );
    let mut config = CompilerConfig::default();
    if !flags.is_empty() {
        config = config.with_flags(flags.iter().copied());
    }
    Module::compile(&source, name, &config).unwrap()
}

/// Runs a faulty module and returns its error's message, checking that the directory is kept
/// until the module is dropped and then removed.
fn fault_message(module: Module, sizes: &[i64]) -> String {
    let mut out = Buffer::from_slice(&[5i32]);
    let err = module.run(&mut out, &[], sizes).unwrap_err();
    let dir = module.dir().to_path_buf();
    drop(module);
    assert!(!dir.exists(), "{} left behind", dir.display());
    err.to_string()
}

#[test]
fn crashes_of_generated_code_are_errors_naming_the_entry_and_the_signal() {
    let div = faulty("divide", "o[0] = o[0] / (int32_t)s[0];", &["-O0"]);
    let message = fault_message(div, &[0]);
    assert!(
        message.starts_with("`divide` was killed by SIGFPE"),
        "{message}"
    );
    let segv = faulty("wild", "o[s[0]] = 1;", &[]);
    let message = fault_message(segv, &[1 << 40]);
    assert!(
        message.starts_with("`wild` was killed by SIGSEGV (segmentation fault"),
        "{message}"
    );
    let abort = faulty("quit", "if (s[0]) abort();", &[]);
    let message = fault_message(abort, &[1]);
    assert!(
        message.starts_with("`quit` was killed by SIGABRT"),
        "{message}"
    );
}

#[test]
fn a_module_built_with_address_sanitizer_in_the_flags_reports_cleanly() {
    let probe = CompilerConfig::default();
    if !probe.supports_sanitizer(runtime::Sanitizer::Address) {
        eprintln!("skipped: no AddressSanitizer here");
        return;
    }
    let body = "int32_t *p = malloc(4 * s[0]); p[s[0]] = 1; o[0] = p[0]; free(p);";
    let asan = faulty("overflow", body, &["-O1", "-g", "-fsanitize=address"]);
    let message = fault_message(asan, &[4]);
    assert!(
        message.starts_with("`overflow` failed (exit status: 1)")
            && message.contains("AddressSanitizer: heap-buffer-overflow"),
        "{message}"
    );
}

#[test]
fn the_module_floating_point_state_stays_in_its_process() {
    // gcc links crtfastmath.o into -ffast-math programs: flush-to-zero is on in the module.
    let source = r#"
    #include <stdint.h>
    int scale(void *const *b, const int64_t *s) {
      float *o = b[0]; const float *x = b[1];
      for (int64_t i = 0; i < s[0]; i++) o[i] = x[i] * 1e38f;
      return 0;
    }"#;
    let config = CompilerConfig::default().with_flags(["-O2", "-ffast-math"]);
    let module = Module::compile(source, "scale", &config).unwrap();
    let x = Buffer::from_slice(&[1e-40f32, 1e-39, 1.0]);
    let mut out = Buffer::zeroed(12);
    module.run(&mut out, &[&x], &[3]).unwrap();
    // this process still computes with denormals (IEEE), whatever the module did
    let tiny = std::hint::black_box(1e-40f32);
    assert!(
        tiny * 1e38 > 0.009,
        "flush-to-zero leaked into this process"
    );
}

#[test]
fn huge_run_counts_are_refused() {
    let module = Module::compile(VECTOR_ADD, "vadd", &CompilerConfig::default()).unwrap();
    let (mut out, empty) = (Buffer::zeroed(0), Buffer::zeroed(0));
    let err = module
        .bench(&mut out, &[&empty, &empty], &[0], usize::MAX, 1)
        .unwrap_err();
    assert!(matches!(err, RuntimeError::InvalidArgument(_)), "{err:?}");
}

#[test]
fn large_buffers_travel_through_the_exchange_file() {
    let module = Module::compile(VECTOR_ADD, "vadd", &CompilerConfig::default()).unwrap();
    vector_add(&module, 3_000_001).unwrap();
    vector_add(&module, 0).unwrap();
}

mod in_process {
    //! The same modules as a [`SharedLibrary`]: loaded into this process, called directly.

    use super::VECTOR_ADD;
    use runtime::{Buffer, CompilerConfig, RuntimeError, SharedLibrary};

    fn add(library: &SharedLibrary, x: &[f32], y: &[f32]) -> Result<Vec<f32>, RuntimeError> {
        let mut out = [Buffer::zeroed(4 * x.len())];
        let inputs = [&Buffer::from_slice(x), &Buffer::from_slice(y)];
        // SAFETY: every buffer holds `x.len()` floats, the size the code reads.
        unsafe { library.run_outputs(&mut out, &inputs, &[x.len() as i64]) }?;
        Ok(out[0].to_vec())
    }

    #[test]
    fn a_shared_library_computes_what_the_child_process_computes() {
        let library = SharedLibrary::compile(VECTOR_ADD, "vadd", &CompilerConfig::default())
            .expect("vadd builds as a shared library");
        assert_eq!(library.entry(), "vadd");
        let x: Vec<f32> = (0..1000).map(|i| i as f32 * 0.5).collect();
        let y: Vec<f32> = (0..1000).map(|i| 1.0 / (i as f32 + 1.0)).collect();
        let out = add(&library, &x, &y).unwrap();
        let expected: Vec<f32> = x.iter().zip(&y).map(|(a, b)| a + b).collect();
        assert_eq!(out, expected);
        // many calls, no process each
        for n in [0, 1, 7] {
            assert_eq!(add(&library, &x[..n], &y[..n]).unwrap(), expected[..n]);
        }
    }

    #[test]
    fn a_status_is_the_error_the_child_process_gives() {
        let source = "#include <stdint.h>\nint fails(void *const *b, const int64_t *s) { \
                      return (int)s[0]; }\n";
        let library = SharedLibrary::compile(source, "fails", &CompilerConfig::default()).unwrap();
        let mut out = [Buffer::zeroed(4)];
        // SAFETY: the code touches no buffer.
        let ok = unsafe { library.run_outputs(&mut out, &[], &[0]) };
        assert!(ok.is_ok());
        let err = unsafe { library.run_outputs(&mut out, &[], &[3]) }.unwrap_err();
        assert!(
            matches!(&err, RuntimeError::ProgramStatus { entry, status: 3 } if entry == "fails"),
            "{err:?}"
        );
        let child = runtime::Module::compile(source, "fails", &CompilerConfig::default()).unwrap();
        let child_err = child.run(&mut Buffer::zeroed(4), &[], &[3]).unwrap_err();
        assert_eq!(err.to_string(), child_err.to_string());
    }

    #[test]
    fn each_library_has_its_own_file_so_new_code_is_loaded() {
        let source = |v: i32| {
            format!(
                "#include <stdint.h>\nint k(void *const *b, const int64_t *s) {{ \
                 *(int32_t *)b[0] = {v}; return 0; }}\n"
            )
        };
        let config = CompilerConfig::default();
        let first = SharedLibrary::compile(&source(1), "k", &config).unwrap();
        let second = SharedLibrary::compile(&source(2), "k", &config).unwrap();
        assert_ne!(first.path(), second.path());
        for (library, want) in [(&first, 1), (&second, 2)] {
            let mut out = [Buffer::zeroed(4)];
            unsafe { library.run_outputs(&mut out, &[], &[]) }.unwrap();
            assert_eq!(out[0].to_vec::<i32>(), [want]);
        }
    }

    #[test]
    fn build_then_load_and_refusals() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("vadd-1.so");
        SharedLibrary::build(VECTOR_ADD, &CompilerConfig::default(), &path).unwrap();
        assert!(
            !dir.path().join("vadd-1.so.c").exists(),
            "the source is removed"
        );
        let library = SharedLibrary::load(&path, "vadd").unwrap();
        assert_eq!(add(&library, &[1.0], &[2.0]).unwrap(), [3.0]);
        // a missing entry point, a truncated file, a bad name, a compile error
        let err = SharedLibrary::load(&path, "nothing")
            .err()
            .unwrap()
            .to_string();
        assert!(err.contains("entry point `nothing`"), "{err}");
        // a truncated library is refused before dlopen maps it (which would fault)
        let bytes = std::fs::read(&path).unwrap();
        for keep in [bytes.len() / 3, bytes.len() - 1] {
            let truncated = dir.path().join(format!("cut-{keep}.so"));
            std::fs::write(&truncated, &bytes[..keep]).unwrap();
            let err = SharedLibrary::load(&truncated, "vadd")
                .err()
                .unwrap()
                .to_string();
            assert!(err.contains("the file is truncated"), "{err}");
        }
        let garbage = dir.path().join("garbage.so");
        std::fs::write(&garbage, b"not a library").unwrap();
        let err = SharedLibrary::load(&garbage, "vadd")
            .err()
            .unwrap()
            .to_string();
        assert!(err.contains("loading the shared library"), "{err}");
        assert!(SharedLibrary::load(&path, "v add").is_err());
        let err = SharedLibrary::compile("int x(", "x", &CompilerConfig::default())
            .err()
            .unwrap();
        assert!(
            matches!(err, RuntimeError::CompilationFailed { .. }),
            "{err:?}"
        );
        let sanitized = CompilerConfig::default().with_sanitizer(runtime::Sanitizer::Address);
        assert!(SharedLibrary::compile(VECTOR_ADD, "vadd", &sanitized).is_err());
    }
}
