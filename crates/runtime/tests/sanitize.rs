//! Modules built with sanitizers run as separate processes through the same API.

use runtime::{Buffer, CompilerConfig, Module, RuntimeError, Sanitizer};

/// Adds 1 to each of `sizes[0]` floats; with `BUG` it writes one element past the end.
const ADD_ONE: &str = r#"
#include <stdint.h>
int add_one(void *const *buffers, const int64_t *sizes) {
  float *out = buffers[0];
  const float *x = buffers[1];
  for (int64_t i = 0; i < sizes[0] + BUG; i++) out[i] = x[i < sizes[0] ? i : 0] + 1.0f;
  return 0;
}
"#;

fn config(sanitizer: Sanitizer) -> Option<CompilerConfig> {
    let config = CompilerConfig::default().with_sanitizer(sanitizer);
    if config.supports_sanitizer(sanitizer) {
        Some(config)
    } else {
        eprintln!(
            "note: skipped: `{}` cannot build with -fsanitize={} here",
            config.compiler,
            sanitizer.flag_name()
        );
        None
    }
}

fn add_one(config: &CompilerConfig, bug: bool) -> Result<Vec<f32>, RuntimeError> {
    let source = format!("#define BUG {}\n{ADD_ONE}", i32::from(bug));
    let module = Module::compile(&source, "add_one", config)?;
    assert!(module.is_sanitized());
    let n = 100;
    let x: Vec<f32> = (0..n).map(|i| i as f32).collect();
    let mut out = Buffer::from_slice(&vec![-1.0f32; n]);
    module.run(&mut out, &[&Buffer::from_slice(&x)], &[n as i64])?;
    Ok(out.to_vec())
}

#[test]
fn address_sanitizer_passes_clean_code() {
    let Some(config) = config(Sanitizer::Address) else {
        return;
    };
    let out = add_one(&config, false).unwrap();
    assert_eq!(out, (0..100).map(|i| i as f32 + 1.0).collect::<Vec<_>>());
}

#[test]
fn address_sanitizer_reports_out_of_bounds_write() {
    let Some(config) = config(Sanitizer::Address) else {
        return;
    };
    let err = add_one(&config, true).unwrap_err();
    let RuntimeError::SanitizerRunFailed { stderr, .. } = &err else {
        panic!("{err:?}")
    };
    assert!(
        stderr.contains("AddressSanitizer: heap-buffer-overflow"),
        "{stderr}"
    );
    assert!(
        stderr.contains("add_one"),
        "the report names the function: {stderr}"
    );
    assert!(err.to_string().contains("sanitized run"), "{err}");
}

#[test]
fn undefined_behavior_sanitizer_reports_signed_overflow() {
    let Some(config) = config(Sanitizer::UndefinedBehavior) else {
        return;
    };
    let source = r#"
    #include <stdint.h>
    int f(void *const *b, const int64_t *s) { int32_t *o = b[0]; o[0] = o[0] + (int32_t)s[0]; return 0; }"#;
    let module = Module::compile(source, "f", &config).unwrap();
    let mut out = Buffer::from_slice(&[1i32]);
    module.run(&mut out, &[], &[41]).unwrap();
    assert_eq!(out.as_slice::<i32>(), &[42]);
    let mut out = Buffer::from_slice(&[i32::MAX]);
    let err = module.run(&mut out, &[], &[1]).unwrap_err();
    let RuntimeError::SanitizerRunFailed { stderr, .. } = &err else {
        panic!("{err:?}")
    };
    assert!(stderr.contains("signed integer overflow"), "{stderr}");
}

#[test]
fn sanitized_bench_and_openmp() {
    let Some(config) = config(Sanitizer::Address) else {
        return;
    };
    let source = r#"
    #include <stdint.h>
    int sq(void *const *b, const int64_t *s) {
      double *o = b[0]; const double *x = b[1];
      #pragma omp parallel for
      for (int64_t i = 0; i < s[0]; i++) o[i] = x[i] * x[i];
      return 0;
    }"#;
    let module = Module::compile(source, "sq", &config).unwrap();
    let x = Buffer::from_slice(&[1.0f64, 2.0, 3.0]);
    let mut out = Buffer::zeroed(24);
    let t = module.bench(&mut out, &[&x], &[3], 4, 1).unwrap();
    assert_eq!((t.runs, t.samples_ms.len()), (4, 4));
    assert!(t.min_ms <= t.median_ms && t.median_ms <= t.max_ms, "{t:?}");
    assert_eq!(out.to_vec::<f64>(), vec![1.0, 4.0, 9.0]);
}
