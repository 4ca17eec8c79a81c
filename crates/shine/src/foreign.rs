//! The evaluator of foreign functions for the interpreter (`rise::foreign`): the bodies of
//! the program's foreign functions, compiled with the system C compiler into one helper
//! program per program and run in a child process ([`runtime::ForeignHelper`]), so that the
//! interpreter runs the very C code the targets run, and a fault of that code (a crash, a
//! hang, a division by zero, an `exit`) is an error naming the function, never the end of
//! `shine`.
//!
//! The helper is two translation units: the functions, under the names and with the
//! includes of a C module (`codegen::ForeignCNames`: `shine_foreign_NAME`, `stdbool.h
//! stdint.h stdlib.h math.h stdio.h`), and a `main` speaking the helper's protocol on its private
//! pipes, which arms a watchdog (`setitimer`) around each call. It is compiled on the first
//! call, and its process is kept for the next calls of the evaluation (a map over a foreign
//! function sends all its calls at once). Arguments and results travel in native byte
//! order, each scalar at its C size (`bool` one byte). What a body prints goes to `shine`'s
//! stderr.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use codegen::ForeignCNames;
use rise::interp::Scalar;
use rise::{Expr, ExprKind, ForeignEvaluator, ForeignFun, ScalarType};
use runtime::{CompilerConfig, ForeignHelper, RuntimeError};

/// How long one call of a foreign function may take before the helper is stopped, unless
/// [`TIME_LIMIT_VAR`] says otherwise.
pub const TIME_LIMIT: Duration = Duration::from_secs(10);

/// The environment variable that sets the time limit of a call, in seconds (a positive
/// number, e.g. `0.5`): for tests, and for bodies that are slow on purpose.
pub const TIME_LIMIT_VAR: &str = "SHINE_FOREIGN_TIME_LIMIT";

/// [`TIME_LIMIT`], or the limit [`TIME_LIMIT_VAR`] sets; an error when it is set to
/// something else than a positive number of seconds.
pub fn time_limit() -> Result<Duration, String> {
    let Ok(text) = std::env::var(TIME_LIMIT_VAR) else {
        return Ok(TIME_LIMIT);
    };
    text.trim()
        .parse::<f64>()
        .ok()
        .filter(|s| s.is_finite() && *s > 0.0 && *s < 1e9)
        .map(Duration::from_secs_f64)
        .ok_or_else(|| {
            format!("{TIME_LIMIT_VAR}=`{text}`: the time limit of a call of a foreign function must be a positive number of seconds")
        })
}

/// Runs foreign functions out of process (see the module doc).
pub struct CEvaluator {
    funs: Vec<Arc<ForeignFun>>,
    compiler: String,
    /// The time limit of one call, or why there is none.
    limit: Result<Duration, String>,
    /// The compiled helper, once a call needed it (or why it could not be compiled).
    helper: Mutex<Option<Result<ForeignHelper, String>>>,
    /// Whether a call found no C compiler `compiler` ([`CEvaluator::compiler_missing`]).
    compiler_missing: AtomicBool,
}

impl CEvaluator {
    /// An evaluator of the foreign functions `e` calls, compiled with `compiler` when first
    /// called; `None` when `e` calls none.
    pub fn for_expr(e: &Expr, compiler: &str) -> Option<Arc<dyn ForeignEvaluator>> {
        CEvaluator::shared_for_expr(e, compiler).map(|c| c as Arc<dyn ForeignEvaluator>)
    }

    /// [`CEvaluator::for_expr`], kept as a `CEvaluator` to ask it afterwards
    /// ([`CEvaluator::compiler_missing`]).
    pub fn shared_for_expr(e: &Expr, compiler: &str) -> Option<Arc<CEvaluator>> {
        let mut funs = Vec::new();
        collect(e, &mut funs);
        if funs.is_empty() {
            return None;
        }
        let mut evaluator = CEvaluator::new(funs, compiler, TIME_LIMIT);
        evaluator.limit = time_limit();
        Some(Arc::new(evaluator))
    }

    /// An evaluator of `funs`, compiled with `compiler`; each call may take `limit`.
    pub fn new(funs: Vec<Arc<ForeignFun>>, compiler: &str, limit: Duration) -> CEvaluator {
        CEvaluator {
            funs,
            compiler: compiler.to_string(),
            limit: Ok(limit),
            helper: Mutex::new(None),
            compiler_missing: AtomicBool::new(false),
        }
    }

    /// Whether a call found no C compiler of the name given: the caller may tell the user to
    /// choose another ([`Setting::Compiler`](crate::Setting::Compiler)).
    pub fn compiler_missing(&self) -> bool {
        self.compiler_missing.load(Ordering::Relaxed)
    }

    /// The helper's C sources: the functions as a C module has them, and a `main` that
    /// answers requests (`runtime::ForeignHelper`'s protocol).
    fn sources(&self) -> [String; 2] {
        let mut functions = String::from(
            "// The foreign functions of a RISE program, run for shine's interpreter.\n\
             #include <stdbool.h>\n#include <stdint.h>\n#include <stdlib.h>\n#include <math.h>\n\
             #include <stdio.h>\n",
        );
        let mut main = String::from(HELPER_MAIN_HEAD);
        let mut cases = String::new();
        for (k, f) in self.funs.iter().enumerate() {
            let names = ForeignCNames::of(f);
            let params: Vec<String> = f
                .params
                .iter()
                .zip(&names.params)
                .map(|((_, t), x)| format!("{} {x}", c_type(*t)))
                .collect();
            let signature = format!(
                "{} {}({})",
                c_type(f.result),
                names.function,
                params.join(", ")
            );
            functions.push_str(&format!("\n{signature} {{{}}}\n", names.body(f)));
            main.push_str(&format!("{signature};\n"));
            cases.push_str(&helper_case(k, f, &names.function));
        }
        main.push_str(&HELPER_MAIN_LOOP.replace("@CASES@", &cases));
        [functions, main]
    }

    /// What went wrong, in the terms of the foreign function `f`.
    fn error(&self, f: &ForeignFun, e: RuntimeError) -> String {
        let name = &f.name;
        match e {
            RuntimeError::ProgramKilled { signal, .. } => {
                format!("foreign function `{name}` crashed: it was killed by {signal}")
            }
            RuntimeError::ExitedEarly { status, .. }
            | RuntimeError::ProgramFailed { status, .. } => {
                format!(
                    "foreign function `{name}` ended the process running it ({status}) instead \
                     of returning (`exit` and the like are not allowed in a foreign function)"
                )
            }
            RuntimeError::TimedOut { seconds, .. } => format!(
                "foreign function `{name}` did not return within {seconds} s and was stopped \
                 (the time limit of a call; {TIME_LIMIT_VAR} sets it)"
            ),
            RuntimeError::CompilerNotFound { compiler, .. } => {
                self.compiler_missing.store(true, Ordering::Relaxed);
                format!(
                    "foreign function `{name}` cannot be evaluated: the C compiler `{compiler}` \
                     was not found (the interpreter runs foreign functions compiled by it)"
                )
            }
            RuntimeError::CompilationFailed { stderr, .. } => format!(
                "foreign function `{name}` cannot be evaluated: the C compiler rejects the \
                 program's foreign functions:\n{stderr}"
            ),
            e => format!("foreign function `{name}` cannot be evaluated: {e}"),
        }
    }
}

impl ForeignEvaluator for CEvaluator {
    fn call(&self, f: &ForeignFun, calls: &[Vec<Scalar>]) -> Result<Vec<Scalar>, String> {
        let Some(index) = self.funs.iter().position(|g| g.name == f.name) else {
            return Err(format!(
                "foreign function `{}` is not one of the program's",
                f.name
            ));
        };
        let mut guard = self.helper.lock().unwrap_or_else(|p| p.into_inner());
        let helper = guard.get_or_insert_with(|| {
            let config = CompilerConfig::default().with_compiler(self.compiler.clone());
            let [functions, main] = self.sources();
            ForeignHelper::compile(&[&functions, &main], "the foreign functions", &config)
                .map_err(|e| self.error(f, e))
        });
        let helper = helper.as_mut().map_err(|e| e.clone())?;
        let limit = self.limit.clone()?;
        let result_size = c_size(f.result);
        let mut results = Vec::with_capacity(calls.len());
        // batches small enough for a `u32` count and modest buffers
        for chunk in calls.chunks(1 << 16) {
            let mut args = Vec::new();
            for call in chunk {
                call.iter().for_each(|s| put(*s, &mut args));
            }
            let bytes = helper
                .call(
                    index as u32,
                    chunk.len() as u32,
                    &args,
                    chunk.len() * result_size,
                    limit,
                )
                .map_err(|e| self.error(f, e))?;
            for b in bytes.chunks(result_size) {
                results.push(get(f.result, b));
            }
        }
        Ok(results)
    }
}

/// The helper's `main` file up to the declarations of the functions.
const HELPER_MAIN_HEAD: &str =
    "// The protocol of shine's foreign helper (runtime::ForeignHelper): requests on
// file descriptor 3, answers on 4, a watchdog around each call.
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <unistd.h>

";

/// The rest of the helper's `main` file; `@CASES@` stands for a case per function
/// ([`helper_case`]).
const HELPER_MAIN_LOOP: &str = r#"
static int get(void *p, size_t n) {
  char *c = p;
  while (n > 0) {
    ssize_t k = read(3, c, n);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) return 0;
    c += k;
    n -= (size_t)k;
  }
  return 1;
}

static int put(const void *p, size_t n) {
  const char *c = p;
  while (n > 0) {
    ssize_t k = write(4, c, n);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) return 0;
    c += k;
    n -= (size_t)k;
  }
  return 1;
}

/* Ends the process with SIGALRM unless disarmed within `us` microseconds (0: disarms). */
static void watchdog(uint64_t us) {
  struct itimerval t;
  memset(&t, 0, sizeof t);
  t.it_value.tv_sec = (time_t)(us / 1000000);
  t.it_value.tv_usec = (suseconds_t)(us % 1000000);
  setitimer(ITIMER_REAL, &t, NULL);
}

int main(void) {
  signal(SIGALRM, SIG_DFL);
  /* what a body prints (on stdout: shine's stderr) comes out at once, even before a crash */
  setvbuf(stdout, NULL, _IONBF, 0);
  struct { uint32_t function, count; uint64_t limit_us; } head;
  while (get(&head, sizeof head)) {
    unsigned char *in = NULL, *out = NULL;
    size_t in_size = 0, out_size = 0;
    switch (head.function) {
@CASES@
    default:
      return 3;
    }
    const uint32_t end = 0x21444e45u; /* runtime::ForeignHelper, ANSWER_END */
    if (!put(out, out_size) || !put(&end, sizeof end)) return 2;
    free(in);
    free(out);
  }
  return 0;
}
"#;

/// The case of the helper's `main` that runs the `k`th function, `f`, called `cname`:
/// reads the arguments of every call, runs each call under the watchdog, and leaves the
/// results in `out`.
fn helper_case(k: usize, f: &ForeignFun, cname: &str) -> String {
    let sizes: Vec<String> = f
        .params
        .iter()
        .map(|(_, t)| format!("sizeof({})", c_type(*t)))
        .collect();
    let result = c_type(f.result);
    let mut s = format!(
        "    case {k}: {{\n      size_t per_call = {};\n      \
         in_size = per_call * head.count;\n      out_size = sizeof({result}) * head.count;\n      \
         in = malloc(in_size + 1);\n      out = malloc(out_size + 1);\n      \
         if (!in || !out || !get(in, in_size)) return 2;\n      \
         for (uint32_t i = 0; i < head.count; i++) {{\n        \
         size_t at = per_call * i;\n",
        sizes.join(" + ")
    );
    let mut args = Vec::new();
    for (j, (_, t)) in f.params.iter().enumerate() {
        s.push_str(&format!(
            "        {} a{j};\n        memcpy(&a{j}, in + at, sizeof a{j});\n        at += sizeof a{j};\n",
            c_type(*t)
        ));
        args.push(format!("a{j}"));
    }
    s.push_str(&format!(
        "        watchdog(head.limit_us);\n        {result} r = {cname}({});\n        \
         watchdog(0);\n        memcpy(out + sizeof r * i, &r, sizeof r);\n      }}\n      \
         break;\n    }}\n",
        args.join(", ")
    ));
    s
}

/// The foreign functions `e` calls, once each, in the order found.
pub fn called(e: &Expr) -> Vec<Arc<ForeignFun>> {
    let mut funs = Vec::new();
    collect(e, &mut funs);
    funs
}

/// [`called`], added to `out`.
fn collect(e: &Expr, out: &mut Vec<Arc<ForeignFun>>) {
    let mut stack = vec![e];
    while let Some(e) = stack.pop() {
        match e.kind() {
            ExprKind::Foreign(f) => {
                if !out.iter().any(|g| g.name == f.name) {
                    out.push(f.clone());
                }
            }
            ExprKind::App(f, a) => stack.extend([a, f]),
            ExprKind::Lambda(_, _, b)
            | ExprKind::DepLambda(_, b)
            | ExprKind::DepApp(b, _)
            | ExprKind::Annot(b, _) => stack.push(b),
            ExprKind::Var(_) | ExprKind::Lit(_) | ExprKind::Prim(_) => {}
        }
    }
}

/// The C type of a scalar type (as in the generated C code).
fn c_type(t: ScalarType) -> &'static str {
    match t {
        ScalarType::Bool => "bool",
        ScalarType::Int => "int",
        ScalarType::I8 => "int8_t",
        ScalarType::I16 => "int16_t",
        ScalarType::I32 => "int32_t",
        ScalarType::I64 => "int64_t",
        ScalarType::U8 => "uint8_t",
        ScalarType::U16 => "uint16_t",
        ScalarType::U32 => "uint32_t",
        ScalarType::U64 => "uint64_t",
        ScalarType::F16 => "_Float16",
        ScalarType::Bf16 => "uint16_t",
        ScalarType::F32 => "float",
        ScalarType::F64 => "double",
    }
}

/// Its size in bytes.
fn c_size(t: ScalarType) -> usize {
    match t {
        ScalarType::Bool => 1,
        t => t.bits() as usize / 8,
    }
}

/// Appends the scalar's bytes.
fn put(s: Scalar, out: &mut Vec<u8>) {
    match s {
        Scalar::Bool(b) => out.push(b as u8),
        Scalar::Int(x) | Scalar::I32(x) => out.extend(x.to_ne_bytes()),
        Scalar::I8(x) => out.extend(x.to_ne_bytes()),
        Scalar::I16(x) => out.extend(x.to_ne_bytes()),
        Scalar::I64(x) => out.extend(x.to_ne_bytes()),
        Scalar::U8(x) => out.push(x),
        Scalar::U16(x) => out.extend(x.to_ne_bytes()),
        Scalar::U32(x) => out.extend(x.to_ne_bytes()),
        Scalar::U64(x) => out.extend(x.to_ne_bytes()),
        Scalar::F16(x) => out.extend(x.to_ne_bytes()),
        Scalar::Bf16(x) => out.extend(x.to_ne_bytes()),
        Scalar::F32(x) => out.extend(x.to_ne_bytes()),
        Scalar::F64(x) => out.extend(x.to_ne_bytes()),
    }
}

/// The scalar of type `t` in `b` (of its size).
fn get(t: ScalarType, b: &[u8]) -> Scalar {
    fn arr<const N: usize>(b: &[u8]) -> [u8; N] {
        let mut a = [0u8; N];
        a.copy_from_slice(&b[..N]);
        a
    }
    match t {
        ScalarType::Bool => Scalar::Bool(b[0] != 0),
        ScalarType::Int => Scalar::Int(i32::from_ne_bytes(arr(b))),
        ScalarType::I32 => Scalar::I32(i32::from_ne_bytes(arr(b))),
        ScalarType::I8 => Scalar::I8(i8::from_ne_bytes(arr(b))),
        ScalarType::I16 => Scalar::I16(i16::from_ne_bytes(arr(b))),
        ScalarType::I64 => Scalar::I64(i64::from_ne_bytes(arr(b))),
        ScalarType::U8 => Scalar::U8(b[0]),
        ScalarType::U16 => Scalar::U16(u16::from_ne_bytes(arr(b))),
        ScalarType::U32 => Scalar::U32(u32::from_ne_bytes(arr(b))),
        ScalarType::U64 => Scalar::U64(u64::from_ne_bytes(arr(b))),
        ScalarType::F16 => Scalar::F16(half::f16::from_ne_bytes(arr(b))),
        ScalarType::Bf16 => Scalar::Bf16(half::bf16::from_ne_bytes(arr(b))),
        ScalarType::F32 => Scalar::F32(f32::from_ne_bytes(arr(b))),
        ScalarType::F64 => Scalar::F64(f64::from_ne_bytes(arr(b))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn funs(src: &str) -> Vec<Arc<ForeignFun>> {
        rise::syntax::parse_program(src).unwrap().foreign
    }

    #[test]
    fn runs_the_c_bodies_out_of_process() {
        let fs = funs(
            "foreign addsat (a b: u8) : u8 { int s = a + b; return s > 255 ? 255 : s; }
             foreign halve (x: f64) : f64 { return x / 2; }
             foreign fact (n: i64) : i64 { return n <= 1 ? 1 : n * fact(n - 1); }
             foreign odd (n: int) : bool { return n % 2 != 0; }
             foreign boom (x: int) : int { volatile int z = 0; return x / z; }
             foreign spin (x: int) : int { volatile int k = 1; while (k) {} return x; }
             foreign chatty (x: int) : int { printf(\"%d\\n\", x); puts(\"noise\"); fflush(stdout); \
               long write(int, const void *, unsigned long); write(1, \"abcd\", 4); return x + 1; }
             foreign quit (x: int) : int { if (x > 1) exit(0); return x; }
             foreign nap (x: int) : int { int usleep(unsigned); usleep(100000); return x; }",
        );
        let ev = CEvaluator::new(fs.clone(), "gcc", Duration::from_millis(500));
        let calls = vec![
            vec![Scalar::U8(200), Scalar::U8(100)],
            vec![Scalar::U8(1), Scalar::U8(2)],
        ];
        assert_eq!(
            ev.call(&fs[0], &calls).unwrap(),
            vec![Scalar::U8(255), Scalar::U8(3)]
        );
        assert_eq!(
            ev.call(&fs[1], &[vec![Scalar::F64(3.0)]]).unwrap(),
            vec![Scalar::F64(1.5)]
        );
        // recursion by the function's own name
        assert_eq!(
            ev.call(&fs[2], &[vec![Scalar::I64(20)]]).unwrap(),
            vec![Scalar::I64(2432902008176640000)]
        );
        assert_eq!(
            ev.call(&fs[3], &[vec![Scalar::Int(3)], vec![Scalar::Int(4)]])
                .unwrap(),
            vec![Scalar::Bool(true), Scalar::Bool(false)]
        );
        let err = ev.call(&fs[4], &[vec![Scalar::Int(1)]]).unwrap_err();
        assert!(
            err.contains("foreign function `boom` crashed") && err.contains("SIGFPE"),
            "{err}"
        );
        let err = ev.call(&fs[5], &[vec![Scalar::Int(1)]]).unwrap_err();
        assert!(err.contains("`spin` did not return within 0.5 s"), "{err}");
        // the helper starts again after a crash
        assert_eq!(
            ev.call(&fs[1], &[vec![Scalar::F64(1.0)]]).unwrap(),
            vec![Scalar::F64(0.5)]
        );
        // what a body prints goes to stderr, never into the answers
        assert_eq!(
            ev.call(&fs[6], &[vec![Scalar::Int(1)], vec![Scalar::Int(2)]])
                .unwrap(),
            vec![Scalar::Int(2), Scalar::Int(3)]
        );
        // an exit, even after calls that returned, is no answer
        let err = ev
            .call(&fs[7], &[vec![Scalar::Int(1)], vec![Scalar::Int(2)]])
            .unwrap_err();
        assert!(
            err.contains("foreign function `quit` ended the process running it (exit status: 0)"),
            "{err}"
        );
        // the limit is per call: 8 calls of 100 ms pass a limit of 0.5 s
        let naps: Vec<Vec<Scalar>> = (0..8).map(|k| vec![Scalar::Int(k)]).collect();
        assert_eq!(ev.call(&fs[8], &naps).unwrap().len(), 8);
    }

    #[test]
    fn compiler_problems_are_errors_naming_the_function() {
        let fs = funs("foreign f (x: int) : int { return x; }");
        let ev = CEvaluator::new(fs.clone(), "/nonexistent/cc", TIME_LIMIT);
        let err = ev.call(&fs[0], &[vec![Scalar::Int(1)]]).unwrap_err();
        assert!(err.contains("foreign function `f` cannot be evaluated: the C compiler `/nonexistent/cc` was not found"), "{err}");
        let fs = funs("foreign g (x: int) : int { return y; }");
        let ev = CEvaluator::new(fs.clone(), "gcc", TIME_LIMIT);
        let err = ev.call(&fs[0], &[vec![Scalar::Int(1)]]).unwrap_err();
        assert!(err.contains("rejects") && err.contains("y"), "{err}");
    }
}
