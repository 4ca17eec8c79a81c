//! The case table of `shine bench cpu` (`bench/cpu_cases.json`), the cases selected on the
//! command line, and the repository root that the table's paths are relative to.

use super::{err, CpuArgs};
use crate::bench_row::ShineSpec;
use crate::cli::CliError;
use serde_json::Value;
use std::path::{Path, PathBuf};

/// One benchmark case: a shine program (or none yet) against one anchor.
#[derive(Clone, Debug)]
pub(super) struct Case {
    pub(super) name: String,
    pub(super) group: String,
    /// The program, definition, strategy file and strategy expression; `None`: no shine
    /// program exists for this case yet (the anchor still runs).
    pub(super) shine: Option<ShineSpec>,
    pub(super) nats: Vec<(String, i64)>,
    /// The independent reference (computed by numpy in the anchor worker).
    pub(super) reference: Option<String>,
    pub(super) anchor: Option<String>,
    pub(super) quick: bool,
    pub(super) seed: u64,
    pub(super) note: Option<String>,
    /// The floating-point operations of one run, as a product of numbers and sizes
    /// (`2*m*n*k`): the row then reports shine's fraction of the machine's peak.
    pub(super) flops: Option<String>,
}

pub(super) fn load_cases(path: &Path) -> Result<Vec<Case>, CliError> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| err(format!("cannot read `{}`: {e}", path.display())))?;
    let doc: Value = serde_json::from_str(&text)
        .map_err(|e| err(format!("`{}` is not JSON: {e}", path.display())))?;
    let cases = doc
        .get("cases")
        .and_then(Value::as_array)
        .ok_or_else(|| err(format!("`{}` has no `cases` list", path.display())))?;
    cases
        .iter()
        .enumerate()
        .map(|(i, c)| parse_case(c).map_err(|m| err(format!("{}: case {i}: {m}", path.display()))))
        .collect()
}

fn parse_case(c: &Value) -> Result<Case, String> {
    let text = |key: &str| c.get(key).and_then(Value::as_str).map(str::to_string);
    let name = text("name").ok_or("no `name`")?;
    let shine = match text("program") {
        Some(program) => Some(ShineSpec {
            program,
            def: text("def").ok_or(format!("`{name}` has a program but no `def`"))?,
            strategy_file: text("strategy_file"),
            strategy: text("strategy"),
        }),
        None => None,
    };
    if let Some(s) = &shine {
        // `strategy` alone names a built-in schedule (`shine strategies`)
        if s.strategy_file.is_some() && s.strategy.is_none() {
            return Err(format!(
                "`{name}`: a `strategy_file` needs a `strategy` (or give `strategy` alone: a built-in schedule)"
            ));
        }
    }
    let mut nats = Vec::new();
    if let Some(map) = c.get("nats").and_then(Value::as_object) {
        for (k, v) in map {
            let v = v
                .as_i64()
                .filter(|v| *v >= 0)
                .ok_or(format!("`{name}`: the size `{k}` is not a natural number"))?;
            nats.push((k.clone(), v));
        }
    }
    Ok(Case {
        group: text("group").unwrap_or_default(),
        shine,
        nats,
        reference: text("reference"),
        anchor: text("anchor"),
        quick: c.get("quick").and_then(Value::as_bool).unwrap_or(false),
        seed: c.get("seed").and_then(Value::as_u64).unwrap_or(1),
        note: text("note"),
        flops: text("flops"),
        name,
    })
}

pub(super) fn select_cases(all: Vec<Case>, args: &CpuArgs) -> Result<Vec<Case>, CliError> {
    for pattern in &args.cases {
        if !all.iter().any(|c| c.name.starts_with(pattern.as_str())) {
            let names: Vec<&str> = all.iter().map(|c| c.name.as_str()).collect();
            return Err(err(format!(
                "no case matches `{pattern}`; the cases are: {}",
                names.join(", ")
            )));
        }
    }
    let mut cases: Vec<Case> = all
        .into_iter()
        .filter(|c| {
            if args.cases.is_empty() {
                !args.quick || c.quick
            } else {
                args.cases.iter().any(|p| c.name.starts_with(p.as_str()))
            }
        })
        .collect();
    for case in &mut cases {
        for (name, value) in &args.nats {
            if let Some(slot) = case.nats.iter_mut().find(|(n, _)| n == name) {
                slot.1 = *value;
            }
        }
    }
    Ok(cases)
}

/// The case of `--program P.rise --def D [--strategy S.elv] [--apply A] --nat ... [--numpy
/// EXPR]`: the program against the numpy expression as anchor and reference (none without
/// it), on random inputs from seed 1. Without --apply, the default schedule of `--target
/// openmp` applies, as `shine run` does.
pub(super) fn user_case(program: &Path, args: &CpuArgs) -> Result<Case, CliError> {
    let def = args
        .def
        .clone()
        .ok_or_else(|| err("--program needs --def NAME"))?;
    let path = |p: &Path| absolute(p.to_path_buf()).display().to_string();
    if !program.is_file() {
        return Err(err(format!(
            "cannot read `{}`: no such file",
            program.display()
        )));
    }
    let apply = args
        .apply
        .clone()
        .unwrap_or_else(|| shine::schedules::default_for(shine::Target::OpenMp).to_string());
    let numpy = args.numpy.as_ref().map(|e| format!("numpy_expr:{e}"));
    Ok(Case {
        name: def.clone(),
        group: format!("{} {def}", program.display()),
        shine: Some(ShineSpec {
            program: path(program),
            def,
            strategy_file: args.strategy.as_deref().map(path),
            strategy: Some(apply),
        }),
        nats: args.nats.clone(),
        reference: numpy.clone(),
        anchor: numpy,
        quick: true,
        seed: 1,
        note: None,
        flops: None,
    })
}

/// The repository root: `--root`, the current directory when it holds the case table, or the
/// source tree this binary was built from.
pub(super) fn find_root(arg: Option<&Path>) -> PathBuf {
    if let Some(root) = arg {
        return root.to_path_buf();
    }
    if Path::new("bench/cpu_cases.json").is_file() {
        return PathBuf::from(".");
    }
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
}

pub(super) fn absolute(path: PathBuf) -> PathBuf {
    std::fs::canonicalize(&path).unwrap_or(path)
}
#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_case_table_parses() {
        let path = Path::new(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../bench/cpu_cases.json"
        ));
        let cases = load_cases(path).expect("the case table loads");
        assert!(cases.iter().any(|c| c.name.starts_with("mm_")));
        for c in &cases {
            assert!(c.anchor.is_some() || c.shine.is_some(), "{}", c.name);
        }
    }
}
