//! `shine bench cpu-worker`: the shine side of `bench cpu`. It reads JSON-line requests on
//! its standard input (`hello`, `prepare`, `time`, `release`, `quit`) and answers each with one
//! line; prepared programs stay loaded until released.

use super::err;
use crate::cli::{emit, CliError};
use serde_json::{json, Map, Value};
use shine::{Executable, Inputs, Options, RunOptions, SourceFile, StrategySource, Target};
use std::collections::HashMap;
use std::io::BufRead;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// Answers requests until `quit` or the end of the input.
pub(super) fn run() -> Result<(), CliError> {
    let stdin = std::io::stdin();
    let mut programs: HashMap<u64, Executable> = HashMap::new();
    for line in stdin.lock().lines() {
        let line = line.map_err(|e| err(format!("reading a request: {e}")))?;
        if line.trim().is_empty() {
            continue;
        }
        let (answer, quit) = match serde_json::from_str::<Value>(&line) {
            Ok(request) => {
                let quit = request["op"] == "quit";
                let answer = match handle(&request, &mut programs) {
                    Ok(mut a) => {
                        a.insert("ok".into(), true.into());
                        Value::Object(a)
                    }
                    Err(e) => json!({"ok": false, "error": e.0}),
                };
                (answer, quit)
            }
            Err(e) => (
                json!({"ok": false, "error": format!("bad request: {e}")}),
                false,
            ),
        };
        emit(&answer.to_string());
        if quit {
            break;
        }
    }
    Ok(())
}

fn handle(
    request: &Value,
    programs: &mut HashMap<u64, Executable>,
) -> Result<Map<String, Value>, CliError> {
    let mut answer = Map::new();
    let id = request["id"].as_u64().unwrap_or(0);
    match request["op"].as_str().unwrap_or("") {
        "hello" => {
            let threads = std::env::var("OMP_NUM_THREADS").ok();
            answer.insert("omp_num_threads".into(), threads.into());
        }
        "prepare" => {
            let text = |k: &str| request[k].as_str().map(str::to_string);
            let start = Instant::now();
            let mut exe = compile_case(request)?;
            answer.insert("compile_s".into(), start.elapsed().as_secs_f64().into());
            let first = exe.bench(1, 0)?;
            answer.insert("first_ms".into(), first.code.median_ms.into());
            let result = exe.result()?;
            if let Some(dir) = text("dir") {
                let dir = PathBuf::from(dir);
                let mut inputs = Vec::new();
                for (i, input) in exe.inputs().iter().enumerate() {
                    let path = dir.join(format!("input{i}.npy"));
                    shine::npy::write(&path, input)?;
                    inputs.push(path.display().to_string());
                }
                let output = dir.join("output.npy");
                shine::npy::write(&output, &result)?;
                answer.insert("inputs".into(), inputs.into());
                answer.insert("output".into(), output.display().to_string().into());
            }
            if request["verify_interpreter"].as_bool() == Some(true) {
                match exe.verify(&result) {
                    Ok(_) => answer.insert("verified".into(), true.into()),
                    Err(e) => {
                        answer.insert("verify_error".into(), e.to_string().into());
                        answer.insert("verified".into(), false.into())
                    }
                };
            }
            programs.insert(id, exe);
        }
        "time" => {
            let exe = programs
                .get_mut(&id)
                .ok_or_else(|| err(format!("no program {id}")))?;
            let runs = request["runs"].as_u64().unwrap_or(1) as usize;
            let warmup = request["warmup"].as_u64().unwrap_or(0) as usize;
            let t = exe.bench(runs, warmup)?;
            answer.insert("samples_ms".into(), t.code.samples_ms.into());
        }
        "release" => {
            programs.remove(&id);
        }
        "quit" => {}
        other => return Err(err(format!("unknown request `{other}`"))),
    }
    Ok(answer)
}

/// The shine program of a `prepare` request, compiled for OpenMP with the request's C compiler
/// and flags and loaded on random inputs of its sizes.
fn compile_case(request: &Value) -> Result<Executable, CliError> {
    let text = |k: &str| request[k].as_str().map(str::to_string);
    let nats: Vec<(String, i64)> = request["nats"]
        .as_object()
        .map(|m| {
            m.iter()
                .filter_map(|(k, v)| Some((k.clone(), v.as_i64()?)))
                .collect()
        })
        .unwrap_or_default();
    let program = text("program").ok_or_else(|| err("no program"))?;
    let def = text("def").ok_or_else(|| err("no def"))?;
    let program = SourceFile::read(Path::new(&program))?;
    let strategy = match (text("strategy_file"), text("strategy")) {
        (Some(file), Some(apply)) => Some(StrategySource {
            file: SourceFile::read(Path::new(&file))?,
            apply,
        }),
        // a strategy without a file: a built-in schedule (`bench cpu --program --apply`)
        (None, Some(apply)) => Some(shine::schedules::strategy(&apply)),
        (_, None) => None,
    };
    let artifact = shine::compile(
        &program,
        &def,
        strategy.as_ref(),
        Target::OpenMp,
        &Options::default(),
    )?;
    let options = RunOptions {
        cc: text("cc").unwrap_or("gcc".into()),
        cflags: text("cflags"),
        fast_math: request["fast_math"].as_bool().unwrap_or(false),
        ..RunOptions::default()
    };
    let seed = request["seed"].as_u64().unwrap_or(1);
    Ok(Executable::new(
        &artifact,
        Inputs::Random { seed },
        &nats,
        &options,
    )?)
}
