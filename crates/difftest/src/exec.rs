//! Running cases: the front end the CLI uses (parse, check, strategy, DPIA, code), the
//! interpreter's reference, and compiled code in batches: many definitions in one C module
//! (one C compiler call) and many kernels in one OpenCL or CUDA program (one build).

use crate::case::{random_value, Case};
use crate::rng;
use codegen::abi::{self, IndexWidth};
use rise::interp::{self, Flat, Scalar, Value};
use rise::{DataType, ScalarType};
use std::collections::HashSet;
use std::panic::{catch_unwind, AssertUnwindSafe};

/// What happened to one case on one target.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// The compiled result equals the interpreter's.
    Pass,
    /// The generated program does not type-check (a generator defect, not shine's).
    IllTyped(String),
    /// The interpreter rejected the program or its inputs, and so did the compiled path.
    InterpRefused(String),
    /// The strategy did not apply.
    StrategyFailed(String),
    /// The compiler refused with an error (translation or code generation).
    Refused(String),
    /// The generated code does not compile.
    CodeDoesNotCompile(String),
    /// The compiled result differs from the interpreter's.
    Mismatch(String),
    /// The interpreter rejects, the compiled code computes anyway.
    Unchecked(String),
    /// The interpreter computes a result, the compiled code stops on a program error (a
    /// division by zero, an index out of range) in a value the result does not need: it
    /// computes ahead (a stored intermediate, a reduction's unused component), and the
    /// interpreter in strict mode, which stops at every failed value, stops too. Not a
    /// wrong answer: a refusal at run time.
    StoppedAhead(String),
    /// The interpreter and the compiled code both stop on a data-dependent error (a
    /// division by zero, an index or a cast out of range, a failed `scatter`): the detail
    /// names the interpreter's error and the compiled code's status. Agreement.
    BothFailed(String),
    /// A foreign function crashed or ended the process (`exit`, `abort`) in the
    /// interpreter's helper and in the compiled code: an error naming it on both sides.
    ForeignFailed(String),
    /// A foreign function's body calls a C library function the GPU target lacks (`exit`,
    /// `puts`, ...), and the GPU program does not build: the user's C, not shine's.
    ForeignCOnly(String),
    /// A panic in the compiler.
    Panic(String),
    /// The process running the code crashed (recorded by the driver).
    Crash(String),
}

impl Outcome {
    /// Whether this is a bug of shine.
    pub fn is_bug(&self) -> bool {
        matches!(
            self,
            Outcome::CodeDoesNotCompile(_)
                | Outcome::Mismatch(_)
                | Outcome::Unchecked(_)
                | Outcome::Panic(_)
                | Outcome::Crash(_)
        )
    }

    /// A short class name.
    pub fn kind(&self) -> &'static str {
        match self {
            Outcome::Pass => "pass",
            Outcome::IllTyped(_) => "ill-typed",
            Outcome::InterpRefused(_) => "interp-refused",
            Outcome::StrategyFailed(_) => "strategy-failed",
            Outcome::Refused(_) => "refused",
            Outcome::CodeDoesNotCompile(_) => "code-does-not-compile",
            Outcome::Mismatch(_) => "mismatch",
            Outcome::Unchecked(_) => "unchecked",
            Outcome::StoppedAhead(_) => "stopped-ahead",
            Outcome::BothFailed(_) => "both-failed",
            Outcome::ForeignFailed(_) => "foreign-failed",
            Outcome::ForeignCOnly(_) => "foreign-c-only",
            Outcome::Panic(_) => "panic",
            Outcome::Crash(_) => "crash",
        }
    }

    /// The detail text.
    pub fn detail(&self) -> &str {
        match self {
            Outcome::Pass => "",
            Outcome::IllTyped(s)
            | Outcome::InterpRefused(s)
            | Outcome::StrategyFailed(s)
            | Outcome::Refused(s)
            | Outcome::CodeDoesNotCompile(s)
            | Outcome::Mismatch(s)
            | Outcome::Unchecked(s)
            | Outcome::StoppedAhead(s)
            | Outcome::BothFailed(s)
            | Outcome::ForeignFailed(s)
            | Outcome::ForeignCOnly(s)
            | Outcome::Panic(s)
            | Outcome::Crash(s) => s,
        }
    }

    /// The cause class of a refusal (its first words, without names and numbers).
    pub fn cause(&self) -> String {
        let d = self.detail();
        let first = d.lines().next().unwrap_or("");
        let words: Vec<&str> = first
            .split_whitespace()
            .filter(|w| !w.contains(|c: char| c.is_ascii_digit() || c == '`'))
            .take(8)
            .collect();
        format!("{}: {}", self.kind(), words.join(" "))
    }
}

/// One input of a case: its scalars, row-major, and for an array of indices (`k.idx[n]`)
/// the bound `n` (then the scalars are `i64` values in `0..n`).
#[derive(Clone, Debug)]
pub struct Input {
    /// The scalars and the shape.
    pub flat: Flat,
    /// The bound of the indices, for an array of `idx[n]`.
    pub index_bound: Option<i64>,
}

impl Input {
    /// The input's RISE type.
    pub fn data_type(&self) -> DataType {
        let mut t = match self.index_bound {
            Some(n) => DataType::Index(arith::Nat::cst(n)),
            None => DataType::Scalar(self.flat.elem),
        };
        for &n in self.flat.shape.iter().rev() {
            t = DataType::Array(arith::Nat::cst(n as i64), std::sync::Arc::new(t));
        }
        t
    }

    /// The interpreter's value of the input (indices as index values).
    pub fn value(&self) -> Result<Value, String> {
        let v = Value::from_flat(self.flat.elem, &self.flat.shape, self.flat.data.clone())
            .map_err(|e| e.message)?;
        Ok(match self.index_bound {
            Some(bound) => as_indices(&v, bound),
            None => v,
        })
    }

    /// The bytes of the input as generated code reads it ([`codegen::abi`]): indices as
    /// the code's index type, `width` wide (64 bits in C and OpenMP; 32 in the OpenCL runs).
    pub fn bytes(&self, width: IndexWidth) -> Result<Vec<u8>, String> {
        let elem = match self.index_bound {
            Some(n) => DataType::Index(arith::Nat::cst(n)),
            None => DataType::Scalar(self.flat.elem),
        };
        abi::encode_elements(&elem, &self.flat.data, width)
            .map_err(|e| format!("an input of type `{}`: {e}", self.data_type()))
    }
}

/// The `i64` scalars of `v` as indices below `bound`.
fn as_indices(v: &Value, bound: i64) -> Value {
    match v {
        Value::Array(xs) => Value::array(xs.iter().map(|x| as_indices(x, bound)).collect()),
        Value::Scalar(s) => Value::Index {
            index: s.as_i128().unwrap_or(0) as i64,
            bound,
        },
        other => other.clone(),
    }
}

/// A case through the front end and the interpreter, ready for code.
pub struct Front {
    /// The inputs.
    pub inputs: Vec<Input>,
    /// The interpreter's result (or why it refused).
    pub expected: Result<Flat, String>,
    /// The instance the interpreter ran, for [`Front::strict_error`].
    instance: rise::infer::Instance,
    /// The bytes of the result as the code writes it (from its type, so that code that
    /// runs where the interpreter refuses writes into a buffer of the right size).
    pub output_bytes: usize,
    checked: rise::infer::CheckedProgram,
}

fn panic_text(p: Box<dyn std::any::Any + Send>) -> String {
    p.downcast_ref::<String>()
        .cloned()
        .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_else(|| "a panic".into())
}

/// Runs `f`, a panic becoming [`Outcome::Panic`].
fn guarded<T>(what: &str, f: impl FnOnce() -> Result<T, Outcome>) -> Result<T, Outcome> {
    catch_unwind(AssertUnwindSafe(f))
        .unwrap_or_else(|p| Err(Outcome::Panic(format!("{what}: {}", panic_text(p)))))
}

/// The inputs of a case, from its seed. An array of indices `k.idx[n]` holds values in
/// `0..n`: a permutation when it is one-dimensional and `k = n` (so that `scatter` of it
/// writes every position once), else uniform.
pub fn inputs(case: &Case) -> Result<Vec<Input>, Outcome> {
    let mut rng = rng::seeded(case.input_seed);
    case.inputs
        .iter()
        .map(|t| {
            let ty = rise::syntax::parse_type(t)
                .map_err(|d| Outcome::IllTyped(format!("input type {t}: {}", d.message)))?;
            let data = ty
                .as_data()
                .ok_or_else(|| Outcome::IllTyped(format!("input type {t} is not data")))?;
            if let Some(input) = index_input(data, &mut rng) {
                return input;
            }
            let (shape, elem) =
                interp::flat_layout(data).map_err(|e| Outcome::IllTyped(e.message))?;
            let name = t.rsplit('.').next().unwrap_or("f32");
            let s = crate::ty::Scalar::NUMERIC
                .iter()
                .map(|(s, _)| *s)
                .find(|s| s.name() == name)
                .unwrap_or(crate::ty::Scalar::F32);
            let count: usize = shape.iter().product();
            let data = (0..count)
                .map(|_| {
                    let v = random_value(&mut rng, s);
                    if elem.is_float() {
                        Scalar::from_float(elem, v)
                    } else if elem == ScalarType::U64 && v >= 9.2e18 {
                        Ok(Scalar::U64(u64::MAX))
                    } else {
                        Scalar::from_int(elem, v as i64)
                    }
                })
                .collect::<Result<Vec<_>, String>>()
                .map_err(Outcome::IllTyped)?;
            Ok(Input {
                flat: Flat { elem, shape, data },
                index_bound: None,
            })
        })
        .collect()
}

/// The input of an array of indices (see [`inputs`]); `None` for other types.
fn index_input(ty: &DataType, rng: &mut splitmix::SplitMix64) -> Option<Result<Input, Outcome>> {
    let mut shape = Vec::new();
    let mut t = ty;
    while let DataType::Array(n, e) = t {
        shape.push(n.as_cst()? as usize);
        t = e;
    }
    let DataType::Index(n) = t else { return None };
    let Some(bound) = n.as_cst().filter(|&b| b >= 1) else {
        return Some(Err(Outcome::IllTyped(format!(
            "input type {ty}: bad bound"
        ))));
    };
    let count: usize = shape.iter().product();
    let values: Vec<i64> = if shape.len() == 1 && count as i64 == bound {
        let mut p: Vec<i64> = (0..bound).collect();
        for i in (1..p.len()).rev() {
            p.swap(i, rng.range(0, i as i64) as usize);
        }
        p
    } else {
        (0..count).map(|_| rng.range(0, bound - 1)).collect()
    };
    Some(Ok(Input {
        flat: Flat {
            elem: ScalarType::I64,
            shape,
            data: values.into_iter().map(Scalar::I64).collect(),
        },
        index_bound: Some(bound),
    }))
}

/// Parses and checks a case's program, makes its inputs and runs the interpreter.
pub fn front(case: &Case) -> Result<Front, Outcome> {
    guarded("front end", || {
        let program = rise::syntax::parse_program(&case.program)
            .map_err(|d| Outcome::IllTyped(format!("parse: {}", d.message)))?;
        let checked = rise::infer::check_program(&program)
            .map_err(|d| Outcome::IllTyped(format!("{}: {:?}", d.message, d.notes)))?;
        let inputs = inputs(case)?;
        let types: Vec<DataType> = inputs.iter().map(Input::data_type).collect();
        let instance = rise::infer::instantiate_def(&checked, &case.name, &types, &case.sizes)
            .map_err(|d| Outcome::IllTyped(format!("instantiate: {}", d.message)))?;
        let expected = reference(&instance, &inputs, interp::ErrorMode::Poison);
        let output_bytes = match &instance.result {
            rise::Type::Data(t) => interp::flat_layout(t)
                .ok()
                .and_then(|(shape, elem)| {
                    let size = abi::size_of(&DataType::Scalar(elem), IndexWidth::Bits64).ok()?;
                    Some(shape.iter().product::<usize>() * usize::try_from(size).ok()?)
                })
                .unwrap_or(0),
            _ => 0,
        };
        Ok(Front {
            output_bytes,
            inputs,
            expected,
            instance,
            checked,
        })
    })
}

impl Front {
    /// Where the interpreter computes a result: the error of the strict interpreter, which
    /// stops at every failed value, also one the result does not need (see
    /// [`Outcome::StoppedAhead`]). Evaluated again, so asked only where compiled code stopped.
    pub fn strict_error(&self) -> Option<String> {
        match &self.expected {
            Ok(_) => reference(&self.instance, &self.inputs, interp::ErrorMode::Strict).err(),
            Err(_) => None,
        }
    }
}

/// The interpreter's result, its data-dependent errors handled as `mode` says; foreign
/// functions run compiled by the system C compiler (`cc`), as `shine eval` runs them.
fn reference(
    instance: &rise::infer::Instance,
    inputs: &[Input],
    mode: interp::ErrorMode,
) -> Result<Flat, String> {
    let values = inputs
        .iter()
        .map(Input::value)
        .collect::<Result<Vec<_>, _>>()?;
    let foreign = shine::foreign::CEvaluator::for_expr(&instance.expr, "cc");
    let function =
        interp::eval_with_mode(&instance.expr, &[], foreign, mode).map_err(|e| e.message)?;
    let result = if values.is_empty() {
        function
    } else {
        interp::apply_with_mode(&function, values, mode).map_err(|e| e.message)?
    };
    let rise::Type::Data(t) = &instance.result else {
        return Err("the result is not data".into());
    };
    result.to_flat(t).map_err(|e| e.message)
}

/// The definition lowered by the schedule `elv` (its strategy `s`, applied through shine's
/// facade, [`shine::rewrite_body`]) and translated to DPIA, its size constraints checked
/// against the case's sizes as shine's front end checks them.
pub fn lower(case: &Case, front: &Front, elv: &str) -> Result<dpia::Program, Outcome> {
    guarded("lowering", || {
        let prepared = rise::infer::prepare_def(&front.checked, &case.name)
            .map_err(|d| Outcome::IllTyped(d.message))?;
        let lowered = apply_schedule(elv, &prepared.body)?;
        let constraints =
            rise::constraints::of_lowered(&front.checked, &case.name, &lowered, &prepared.scheme);
        let sizes: Vec<(rise::types::Name, i64)> = case
            .sizes
            .iter()
            .map(|(n, v)| (n.as_str().into(), *v))
            .collect();
        rise::constraints::check_all(&constraints, &sizes)
            .map_err(|v| Outcome::Refused(format!("size constraint: {v}")))?;
        let program = dpia::translate(&case.name, &lowered, &prepared.scheme)
            .map_err(|e| Outcome::Refused(format!("translate: {}", e.to_diagnostic().message)))?;
        // and those of the views, as shine's front end checks them
        rise::constraints::check_all(&program.constraints, &sizes)
            .map_err(|v| Outcome::Refused(format!("size constraint: {v}")))?;
        Ok(program)
    })
}

/// The strategy `s` of the schedule `elv` applied to `body` by [`shine::rewrite_body`]: a
/// schedule that does not load is the generator's defect ([`Outcome::IllTyped`]), a panic
/// in rewriting shine's ([`Outcome::Panic`]).
fn apply_schedule(elv: &str, body: &rise::Expr) -> Result<rise::Expr, Outcome> {
    let schedule = shine::StrategySource {
        file: shine::SourceFile::new("schedule.elv", elv),
        apply: "s".into(),
    };
    let options = shine::RewriteOptions::default();
    match shine::rewrite_body(&schedule, body, &options) {
        Ok(rewritten) => Ok(rewritten.body),
        Err(e) if e.stage() == shine::Stage::Internal => Err(Outcome::Panic(message(&e))),
        // the schedule is loaded again only to tell why it failed
        Err(e) if schedule.load().is_err() => {
            Err(Outcome::IllTyped(format!("elv: {}", message(&e))))
        }
        Err(e) => Err(Outcome::StrategyFailed(failure(&e))),
    }
}

/// What failed of a schedule that did not apply: the failing step and where, as the
/// diagnostic of shine's error says it (without its head, which names the strategy `s`;
/// summaries group outcomes by their first words).
fn failure(e: &shine::Error) -> String {
    let text = match e.unstaged() {
        shine::Error::InSource { diagnostics, .. } => {
            diagnostics.first().map(|d| d.message.clone())
        }
        _ => None,
    }
    .unwrap_or_else(|| message(e));
    let head = "the strategy `s` failed on the program: ";
    text.strip_prefix(head).map_or(text.clone(), str::to_string)
}

/// The text of a shine error without its leading `error: `.
pub fn message(e: &shine::Error) -> String {
    let text = e.to_string();
    match text.strip_prefix("error: ") {
        Some(rest) => rest.to_string(),
        None => text,
    }
}

/// The bytes of a flat array as generated code lays it out ([`codegen::abi`]).
pub fn to_bytes(flat: &Flat) -> Result<Vec<u8>, String> {
    abi::encode_elements(&DataType::Scalar(flat.elem), &flat.data, IndexWidth::Bits64)
        .map_err(|e| format!("the interpreter's result: {e}"))
}

/// An output buffer of `len` bytes, filled with a marker so that unwritten elements show.
pub fn output_for(len: usize) -> runtime::Buffer {
    runtime::Buffer::from_bytes(&vec![0xA5; len.max(1)])
}

/// Compares the bytes the code wrote with the interpreter's result, element by element, by
/// shine's rule ([`shine::scalars_agree`]: floats within the tolerance `--verify` uses,
/// everything else exactly).
pub fn compare(expected: &Flat, got: &[u8]) -> Outcome {
    let want = match to_bytes(expected) {
        Ok(want) => want,
        Err(e) => return Outcome::Refused(e),
    };
    if want.len() != got.len() {
        return Outcome::Mismatch(format!(
            "{} bytes expected, {} written",
            want.len(),
            got.len()
        ));
    }
    let width = want.len() / expected.data.len().max(1);
    let element = |bytes: &[u8], i: usize| bytes[i * width..(i + 1) * width].to_vec();
    let bad: Vec<usize> = (0..expected.data.len())
        .filter(|&i| {
            let (s, g) = (expected.data[i], element(got, i));
            match decode(s, &g) {
                Some(computed) => !shine::scalars_agree(s, computed),
                // a byte of a `bool` that is neither 0 nor 1: the bytes themselves
                None => g != element(&want, i),
            }
        })
        .collect();
    if bad.is_empty() {
        return Outcome::Pass;
    }
    let show = |i: usize| -> String {
        let g = element(got, i);
        let got =
            decode(expected.data[i], &g).map_or_else(|| format!("bytes {g:?}"), |s| s.to_string());
        format!("[{i}] interpreter {:?} compiled {got}", expected.data[i])
    };
    Outcome::Mismatch(format!(
        "{} of {} elements differ: {}",
        bad.len(),
        expected.data.len(),
        bad.iter()
            .take(4)
            .map(|&i| show(i))
            .collect::<Vec<_>>()
            .join(", ")
    ))
}

/// The scalar of the type of `like` in `b`, the bytes of one element as generated code
/// writes it; `None` for a `bool` byte other than 0 and 1.
fn decode(like: Scalar, b: &[u8]) -> Option<Scalar> {
    let mut w = [0u8; 8];
    w[..b.len().min(8)].copy_from_slice(&b[..b.len().min(8)]);
    let four = [w[0], w[1], w[2], w[3]];
    Some(match like {
        Scalar::Bool(_) if w[0] <= 1 => Scalar::Bool(w[0] == 1),
        Scalar::Bool(_) => return None,
        Scalar::F16(_) => Scalar::F16(half::f16::from_ne_bytes([w[0], w[1]])),
        Scalar::Bf16(_) => Scalar::Bf16(half::bf16::from_ne_bytes([w[0], w[1]])),
        Scalar::F32(_) => Scalar::F32(f32::from_ne_bytes(four)),
        Scalar::F64(_) => Scalar::F64(f64::from_ne_bytes(w)),
        Scalar::I8(_) => Scalar::I8(w[0] as i8),
        Scalar::I16(_) => Scalar::I16(i16::from_ne_bytes([w[0], w[1]])),
        Scalar::Int(_) => Scalar::Int(i32::from_ne_bytes(four)),
        Scalar::I32(_) => Scalar::I32(i32::from_ne_bytes(four)),
        Scalar::I64(_) => Scalar::I64(i64::from_ne_bytes(w)),
        Scalar::U8(_) => Scalar::U8(w[0]),
        Scalar::U16(_) => Scalar::U16(u16::from_ne_bytes([w[0], w[1]])),
        Scalar::U32(_) => Scalar::U32(u32::from_ne_bytes(four)),
        Scalar::U64(_) => Scalar::U64(u64::from_ne_bytes(w)),
    })
}

/// Splits C, OpenCL or CUDA source into top-level items (preprocessor lines, conditional
/// blocks `#if` ... `#endif` whole, declarations, functions), dropping comments between
/// them.
fn items(source: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut depth = 0i64;
    // the lines of an open conditional block, and how many `#if`s are open in it
    let mut block: Vec<&str> = Vec::new();
    let mut open = 0usize;
    for line in source.lines() {
        let t = line.trim();
        if depth == 0 && cur.is_empty() {
            if open > 0 || t.starts_with("#if") {
                block.push(line);
                if t.starts_with("#if") {
                    open += 1;
                } else if t.starts_with("#endif") {
                    open -= 1;
                }
                if open == 0 {
                    out.push(std::mem::take(&mut block).join("\n"));
                }
                continue;
            }
            if t.is_empty() || t.starts_with("//") {
                continue;
            }
            if t.starts_with('#') {
                out.push(line.to_string());
                continue;
            }
        }
        cur.push_str(line);
        cur.push('\n');
        depth += t.matches('{').count() as i64 - t.matches('}').count() as i64;
        if depth == 0 && (t.ends_with(';') || t.ends_with('}')) {
            out.push(std::mem::take(&mut cur));
        }
    }
    if !block.is_empty() {
        out.push(block.join("\n"));
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

/// One translation unit of several generated ones: shared items (includes, typedefs of the
/// same types) once, the rest in order.
pub fn combine<'a>(sources: impl IntoIterator<Item = &'a str>) -> String {
    let mut seen = HashSet::new();
    let mut head = String::new();
    let mut body = String::new();
    for s in sources {
        for item in items(s) {
            if seen.insert(item.clone()) {
                let dst = if item.starts_with('#') {
                    &mut head
                } else {
                    &mut body
                };
                dst.push_str(&item);
                dst.push('\n');
            }
        }
    }
    head + &body
}

/// A C module of many cases' code with one entry point, `difftest_dispatch`, whose first
/// size is the case's slot and the rest the case's sizes; it returns the case's entry
/// point's status (`-1` for a slot without a case).
pub fn c_batch(modules: &[&codegen::CModule]) -> String {
    let mut text = combine(modules.iter().map(|m| m.source.as_str()));
    text.push_str("\nint difftest_dispatch(void *const *buffers, const int64_t *sizes) {\n  switch (sizes[0]) {\n");
    for (i, m) in modules.iter().enumerate() {
        text.push_str(&format!(
            "  case {i}: return {}(buffers, sizes + 1);\n",
            m.entry
        ));
    }
    text.push_str("  default: return -1;\n  }\n}\n");
    text
}

/// The environment variable that, set to `1`, builds the C modules of the runs with
/// AddressSanitizer and UndefinedBehaviorSanitizer (a report fails the run).
pub const SANITIZE: &str = "SHINE_DIFFTEST_SANITIZE";

/// The C compiler configuration of the runs: the CLI's default, with ASan and UBSan
/// where [`SANITIZE`] is `1`.
pub fn c_config() -> runtime::CompilerConfig {
    let config = runtime::CompilerConfig::default();
    if std::env::var(SANITIZE).as_deref() == Ok("1") {
        config
            .with_sanitizer(runtime::Sanitizer::Address)
            .with_sanitizer(runtime::Sanitizer::UndefinedBehavior)
    } else {
        config
    }
}

/// The values of `sizes` (the module's size variables) for `case`.
pub fn size_values(case: &Case, sizes: &[arith::Var]) -> Result<Vec<i64>, Outcome> {
    sizes
        .iter()
        .map(|v| {
            case.sizes
                .iter()
                .find(|(n, _)| **n == *v.name())
                .map(|(_, x)| *x)
                .ok_or_else(|| Outcome::Refused(format!("no value for the size `{v}`")))
        })
        .collect()
}

/// The host plan of a GPU module for the size values `values`, by shine's
/// ([`shine::gpu::plan`]: at most `max_threads` threads per work-group or block, one output
/// buffer, `inputs` input buffers; the status flag the last temporary). The batched GPU
/// programs are built for 32-bit indices (no index-width option: one build serves many
/// cases), so a module whose sizes need 64-bit ones ([`codegen::GpuModule::index_width`]) is
/// refused, and sizes are passed as `int`s.
pub fn gpu_plan<L: shine::gpu::FromLaunchDims>(
    module: &codegen::GpuModule,
    values: &[i64],
    inputs: usize,
    max_threads: usize,
) -> Result<shine::gpu::HostPlan<L>, Outcome> {
    use codegen::gpu::IndexWidth;
    if module.index_width(values) != IndexWidth::Bits32 {
        return Err(Outcome::Refused(
            "the sizes need 64-bit indices; the batched GPU programs use 32-bit ones".into(),
        ));
    }
    // one output buffer: the generator's results are no tuples of arrays
    shine::gpu::plan(
        module,
        (values, IndexWidth::Bits32),
        (1, inputs),
        max_threads,
    )
    .map_err(|e| Outcome::Refused(message(&e)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn combining_units_keeps_shared_items_once() {
        let a = "#include <stdint.h>\n// c\ntypedef struct p {\n  int a;\n} p;\n\nvoid f(void) {\n  if (1) {\n  }\n}\n";
        let b = "#include <stdint.h>\ntypedef struct p {\n  int a;\n} p;\nvoid g(void) {\n}\n";
        let c = combine([a, b]);
        assert_eq!(c.matches("#include").count(), 1);
        assert_eq!(c.matches("typedef").count(), 1);
        assert!(c.contains("void f(void)") && c.contains("void g(void)"));
    }

    #[test]
    fn combining_units_keeps_conditional_blocks_whole() {
        // the index type of GPU code: two typedefs of one name, one of them compiled
        let unit = |k: &str| {
            format!(
                "// {k}\n#ifdef W\n#if 1\ntypedef long i;\n#endif\n#else\ntypedef int i;\n#endif\n\nvoid {k}(i n) {{\n}}\n"
            )
        };
        let (a, b) = (unit("f"), unit("g"));
        let c = combine([a.as_str(), b.as_str()]);
        let block = "#ifdef W\n#if 1\ntypedef long i;\n#endif\n#else\ntypedef int i;\n#endif\n";
        assert_eq!(c.matches(block).count(), 1, "{c}");
        assert_eq!(c.matches("typedef").count(), 2, "{c}");
        assert!(c.find(block) < c.find("void f(i n)"), "{c}");
        assert!(
            c.contains("void f(i n)") && c.contains("void g(i n)"),
            "{c}"
        );
    }
}
