//! The evaluator of foreign functions for the interpreter (`rise::foreign`): the bodies of
//! the program's foreign functions, compiled with the system C compiler into one helper
//! program per program and run in a child process ([`runtime::ForeignHelper`]), so that the
//! interpreter runs the very C code the targets run, and a fault of that code (a crash, a
//! hang, a division by zero) is an error naming the function, never the end of `shine`.
//!
//! The helper is compiled on the first call, and its process is kept for the next calls of
//! the evaluation (a map over a foreign function sends all its calls at once). Arguments and
//! results travel in native byte order, each scalar at its C size (`bool` one byte).

use std::sync::{Arc, Mutex};
use std::time::Duration;

use rise::interp::Scalar;
use rise::{Expr, ExprKind, ForeignEvaluator, ForeignFun, ScalarType};
use runtime::{CompilerConfig, ForeignHelper, RuntimeError};

/// How long one batch of calls may take before the helper is stopped.
pub const TIME_LIMIT: Duration = Duration::from_secs(10);

/// Runs foreign functions out of process (see the module doc).
pub struct CEvaluator {
    funs: Vec<Arc<ForeignFun>>,
    compiler: String,
    limit: Duration,
    /// The compiled helper, once a call needed it (or why it could not be compiled).
    helper: Mutex<Option<Result<ForeignHelper, String>>>,
}

impl CEvaluator {
    /// An evaluator of the foreign functions `e` calls, compiled with `compiler` when first
    /// called; `None` when `e` calls none.
    pub fn for_expr(e: &Expr, compiler: &str) -> Option<Arc<dyn ForeignEvaluator>> {
        let mut funs = Vec::new();
        collect(e, &mut funs);
        if funs.is_empty() {
            return None;
        }
        Some(Arc::new(CEvaluator::new(funs, compiler, TIME_LIMIT)))
    }

    /// An evaluator of `funs`, compiled with `compiler`; each batch of calls may take `limit`.
    pub fn new(funs: Vec<Arc<ForeignFun>>, compiler: &str, limit: Duration) -> CEvaluator {
        CEvaluator {
            funs,
            compiler: compiler.to_string(),
            limit,
            helper: Mutex::new(None),
        }
    }

    /// The helper's C source: the functions, and a `main` that answers requests.
    fn source(&self) -> String {
        let mut s = String::from(
            "// The foreign functions of a RISE program, run for shine's interpreter.\n\
             #include <stdbool.h>\n#include <stdint.h>\n#include <stdio.h>\n#include <math.h>\n",
        );
        for f in &self.funs {
            let params: Vec<String> = f
                .params
                .iter()
                .map(|(x, t)| format!("{} {x}", c_type(*t)))
                .collect();
            // the macro gives the function a name no library function has, and keeps calls
            // of it by its own name (recursion) working
            s.push_str(&format!(
                "\n#define {name} shine_foreign_{name}\nstatic {} {name}({}) {{{}}}\n",
                c_type(f.result),
                params.join(", "),
                f.body,
                name = f.name,
            ));
        }
        s.push_str(
            "\nint main(void) {\n  uint32_t head[2];\n  \
             while (fread(head, sizeof head[0], 2, stdin) == 2) {\n    \
             switch (head[0]) {\n",
        );
        for (k, f) in self.funs.iter().enumerate() {
            s.push_str(&format!(
                "    case {k}:\n      for (uint32_t i = 0; i < head[1]; i++) {{\n"
            ));
            let mut args = Vec::new();
            for (j, (_, t)) in f.params.iter().enumerate() {
                s.push_str(&format!(
                    "        {} a{j};\n        if (fread(&a{j}, sizeof a{j}, 1, stdin) != 1) return 2;\n",
                    c_type(*t)
                ));
                args.push(format!("a{j}"));
            }
            s.push_str(&format!(
                "        {} r = {}({});\n        fwrite(&r, sizeof r, 1, stdout);\n      }}\n      break;\n",
                c_type(f.result),
                f.name,
                args.join(", ")
            ));
        }
        s.push_str(
            "    default:\n      return 3;\n    }\n    fflush(stdout);\n  }\n  return 0;\n}\n",
        );
        s
    }

    /// What went wrong, in the terms of the foreign function `f`.
    fn error(&self, f: &ForeignFun, e: RuntimeError) -> String {
        let name = &f.name;
        match e {
            RuntimeError::ProgramKilled { signal, stderr, .. } => {
                format!(
                    "foreign function `{name}` crashed: it was killed by {signal}{}",
                    tail(&stderr)
                )
            }
            RuntimeError::ProgramFailed { status, stderr, .. } => {
                format!(
                    "foreign function `{name}` ended the process running it ({status}){}",
                    tail(&stderr)
                )
            }
            RuntimeError::TimedOut { seconds, .. } => format!(
                "foreign function `{name}` did not return within {seconds} s and was stopped"
            ),
            RuntimeError::CompilerNotFound { compiler, .. } => format!(
                "foreign function `{name}` cannot be evaluated: the C compiler `{compiler}` was \
                 not found (the interpreter runs foreign functions compiled by it; choose one \
                 with `--cc`)"
            ),
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
            ForeignHelper::compile(&self.source(), "the foreign functions", &config)
                .map_err(|e| self.error(f, e))
        });
        let helper = helper.as_mut().map_err(|e| e.clone())?;
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
                    self.limit,
                )
                .map_err(|e| self.error(f, e))?;
            for b in bytes.chunks(result_size) {
                results.push(get(f.result, b));
            }
        }
        Ok(results)
    }
}

/// The foreign functions `e` calls, once each, in the order found.
/// The names of the foreign functions `e` calls, each once.
pub(crate) fn names(e: &Expr) -> Vec<String> {
    let mut funs = Vec::new();
    collect(e, &mut funs);
    funs.iter().map(|f| f.name.to_string()).collect()
}

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
        ScalarType::F32 => Scalar::F32(f32::from_ne_bytes(arr(b))),
        ScalarType::F64 => Scalar::F64(f64::from_ne_bytes(arr(b))),
    }
}

/// The end of what a process printed on stderr, as a note (empty when it printed nothing).
fn tail(stderr: &str) -> String {
    let text = stderr.trim();
    if text.is_empty() {
        return String::new();
    }
    let start = text.char_indices().rev().nth(500).map_or(0, |(i, _)| i);
    format!("\n  stderr: {}", &text[start..])
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
             foreign spin (x: int) : int { volatile int k = 1; while (k) {} return x; }",
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
