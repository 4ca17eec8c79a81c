//! What the generator draws from: the example programs (with the signatures `shine check`
//! gives their definitions), the strategy files, the F-smooth programs and rules, and
//! known-good recipes (program, definition, strategy, sizes) that reach code generation.

use std::path::{Path, PathBuf};
use std::process::Command;

/// A RISE program of the examples.
#[derive(Clone, Debug)]
pub struct Program {
    /// Its file name (`mm.rise`).
    pub name: String,
    pub text: String,
    /// Its definitions, as `shine check` types them.
    pub defs: Vec<Def>,
}

/// A definition and what its type says about its inputs.
#[derive(Clone, Debug)]
pub struct Def {
    pub name: String,
    /// The names of its implicit size parameters (`{m n k: nat}`).
    pub nats: Vec<String>,
    /// Its value parameters, in order.
    pub params: Vec<Param>,
}

/// A value parameter: an array (a scalar when `dims` is empty) or a type the generator does
/// not build inputs for (pairs, vectors, functions).
#[derive(Clone, Debug)]
pub enum Param {
    Array { dims: Vec<String>, elem: String },
    Other,
}

/// A strategy file of the examples.
#[derive(Clone, Debug)]
pub struct StrategyFile {
    pub name: String,
    pub text: String,
    /// Its definitions and their number of parameters.
    pub defs: Vec<(String, usize)>,
}

/// An F-smooth program of the examples.
#[derive(Clone, Debug)]
pub struct FsmoothFile {
    pub name: String,
    pub text: String,
    /// Its inputs: name and type (`Vector`, `Matrix`, `Double`, ...).
    pub inputs: Vec<(String, String)>,
}

/// A combination known to compile: `run PROGRAM --def DEF --strategy STRATEGY --apply APPLY`
/// at sizes `nats`.
#[derive(Clone, Debug)]
pub struct Recipe {
    pub program: String,
    pub def: String,
    pub strategy: String,
    pub apply: String,
    pub nats: Vec<(String, u64)>,
    /// Whether it lowers for a GPU target (else C and OpenMP).
    pub gpu: bool,
}

/// Everything the generator draws from.
#[derive(Clone, Debug)]
pub struct Corpus {
    pub programs: Vec<Program>,
    pub strategies: Vec<StrategyFile>,
    pub fsmooth: Vec<FsmoothFile>,
    /// The F-smooth rules and named strategies (`shine fsmooth rules`).
    pub fsmooth_rules: Vec<String>,
    pub recipes: Vec<Recipe>,
    /// The `.npy` files of the examples (`examples/data`).
    pub npy: Vec<Vec<u8>>,
}

impl Corpus {
    /// Reads the examples directory, typing its programs with the `shine` binary.
    pub fn load(examples: &Path, shine: &Path) -> Result<Corpus, String> {
        let mut programs = Vec::new();
        for path in files(examples, "rise")? {
            let text = read(&path)?;
            let signatures = run_shine(shine, &["check".as_ref(), path.as_os_str()])?;
            programs.push(Program {
                name: file_name(&path),
                defs: signatures.lines().filter_map(parse_signature).collect(),
                text,
            });
        }
        programs.push(builtin_program(shine, SEMANTICS_NAME, SEMANTICS)?);
        let mut strategies = Vec::new();
        for path in files(examples, "elv")? {
            let text = read(&path)?;
            strategies.push(StrategyFile {
                name: file_name(&path),
                defs: strategy_defs(&text),
                text,
            });
        }
        let mut fsmooth = Vec::new();
        for path in files(&examples.join("fsmooth"), "fsmooth").unwrap_or_default() {
            let text = read(&path)?;
            let inputs = text
                .lines()
                .filter_map(|l| {
                    let (name, ty) = l.strip_prefix("input ")?.split_once(':')?;
                    Some((name.trim().to_string(), ty.trim().to_string()))
                })
                .collect();
            fsmooth.push(FsmoothFile {
                name: file_name(&path),
                text,
                inputs,
            });
        }
        let rules = run_shine(shine, &["fsmooth".as_ref(), "rules".as_ref()])?;
        let fsmooth_rules = rules
            .lines()
            .filter(|l| l.starts_with("    "))
            .filter_map(|l| l.split_whitespace().next().map(str::to_string))
            .collect();
        let npy = files(&examples.join("data"), "npy")
            .unwrap_or_default()
            .iter()
            .map(|p| std::fs::read(p).map_err(|e| format!("{}: {e}", p.display())))
            .collect::<Result<_, _>>()?;
        let mut recipes = cpu_recipes(&programs, &strategies);
        recipes.extend(gpu_recipes(&examples.join("gpu_cases.txt")));
        recipes.extend(semantics_gpu_recipes(&programs, &strategies));
        if programs.is_empty() || strategies.is_empty() {
            return Err(format!(
                "{}: no .rise or .elv files (is --examples right?)",
                examples.display()
            ));
        }
        Ok(Corpus {
            programs,
            strategies,
            fsmooth,
            fsmooth_rules,
            recipes,
            npy,
        })
    }

    /// The program named `name`.
    pub fn program(&self, name: &str) -> Option<&Program> {
        self.programs.iter().find(|p| p.name == name)
    }

    /// The strategy file named `name`.
    pub fn strategy(&self, name: &str) -> Option<&StrategyFile> {
        self.strategies.iter().find(|s| s.name == name)
    }
}

/// The name of clifuzz's own program (besides the examples): casts without a value,
/// `natType` values above 2^32, foreign functions that print, exit, abort or crash.
pub const SEMANTICS_NAME: &str = "semantics.rise";

/// Its text (`programs/semantics.rise`).
pub const SEMANTICS: &str = include_str!("../programs/semantics.rise");

/// A program of clifuzz's own named `name`, typed by `shine check` (through a file in the
/// temporary directory, removed after).
fn builtin_program(shine: &Path, name: &str, text: &str) -> Result<Program, String> {
    let path = std::env::temp_dir().join(format!("clifuzz-{}-{name}", std::process::id()));
    std::fs::write(&path, text).map_err(|e| format!("{}: {e}", path.display()))?;
    let signatures = run_shine(shine, &["check".as_ref(), path.as_os_str()]);
    let _ = std::fs::remove_file(&path);
    Ok(Program {
        name: name.to_string(),
        text: text.to_string(),
        defs: signatures?.lines().filter_map(parse_signature).collect(),
    })
}

/// The files of `dir` ending in `.ext`, sorted (so that runs are deterministic).
fn files(dir: &Path, ext: &str) -> Result<Vec<PathBuf>, String> {
    let entries = std::fs::read_dir(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let mut paths: Vec<PathBuf> = entries
        .filter_map(|e| Some(e.ok()?.path()))
        .filter(|p| p.extension().is_some_and(|e| e == ext))
        .collect();
    paths.sort();
    Ok(paths)
}

fn read(path: &Path) -> Result<String, String> {
    std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))
}

fn file_name(path: &Path) -> String {
    path.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// The standard output of a successful `shine ARGS`.
fn run_shine(shine: &Path, args: &[&std::ffi::OsStr]) -> Result<String, String> {
    let out = Command::new(shine)
        .args(args)
        .output()
        .map_err(|e| format!("cannot run {}: {e}", shine.display()))?;
    if !out.status.success() {
        return Err(format!(
            "shine {:?} failed: {}",
            args,
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// A definition from a line of `shine check`: `mm : {m n k: nat} -> m.k.f32 -> m.n.f32`.
pub fn parse_signature(line: &str) -> Option<Def> {
    if line.starts_with(' ') {
        return None;
    }
    let (name, ty) = line.split_once(" : ")?;
    let mut parts = split_top(ty, "->");
    parts.pop(); // the result
    let mut def = Def {
        name: name.to_string(),
        nats: Vec::new(),
        params: Vec::new(),
    };
    for part in parts {
        let part = part.trim();
        if let Some(binder) = part.strip_prefix('{').and_then(|p| p.strip_suffix('}')) {
            if let Some(names) = binder.strip_suffix(": nat") {
                def.nats
                    .extend(names.split_whitespace().map(str::to_string));
            }
        } else {
            def.params.push(parse_param(part));
        }
    }
    Some(def)
}

/// `(n+2).m.f32` as dimensions and element type.
fn parse_param(text: &str) -> Param {
    let mut parts = split_top(text, ".");
    let elem = parts.pop().unwrap_or_default().trim().to_string();
    let scalar = elem.chars().all(|c| c.is_ascii_alphanumeric());
    if !scalar || elem.is_empty() {
        return Param::Other;
    }
    let dims = parts.into_iter().map(|d| d.trim().to_string()).collect();
    Param::Array { dims, elem }
}

/// `text` split at `sep` outside parentheses, brackets and braces.
fn split_top(text: &str, sep: &str) -> Vec<String> {
    let mut parts = Vec::new();
    let mut depth = 0i32;
    let mut current = String::new();
    let mut rest = text;
    while let Some(c) = rest.chars().next() {
        if depth == 0 && rest.starts_with(sep) {
            parts.push(std::mem::take(&mut current));
            rest = &rest[sep.len()..];
            continue;
        }
        match c {
            '(' | '[' | '{' => depth += 1,
            ')' | ']' | '}' => depth -= 1,
            _ => {}
        }
        current.push(c);
        rest = &rest[c.len_utf8()..];
    }
    parts.push(current);
    parts
}

/// The definitions of a strategy file and their numbers of parameters.
fn strategy_defs(text: &str) -> Vec<(String, usize)> {
    text.lines()
        .filter_map(|l| {
            let head = l.strip_prefix("def ")?.split('=').next()?.trim();
            Some(match head.split_once('(') {
                Some((name, params)) => (name.trim().to_string(), params.split(',').count()),
                None => (head.to_string(), 0),
            })
        })
        .collect()
}

/// The evaluation of a size expression (`n+2`, `m*64`, `h+1-kh`) under `nats`.
pub fn eval_size(expr: &str, nats: &[(String, u64)]) -> Option<u64> {
    let mut value: i128 = 0;
    let mut sign = 1i128;
    for term in split_terms(expr)? {
        let (op, factors) = term;
        let mut product: i128 = 1;
        for f in factors.split('*') {
            let f = f.trim().trim_start_matches('(').trim_end_matches(')');
            let v = match f.parse::<u64>() {
                Ok(v) => v,
                Err(_) => nats.iter().find(|(n, _)| n == f)?.1,
            };
            product = product.checked_mul(i128::from(v))?;
        }
        if op == '-' {
            sign = -1;
        }
        value += sign * product;
        sign = 1;
    }
    u64::try_from(value).ok()
}

/// `a+b*c-d` as signed terms `[('+', "a"), ('+', "b*c"), ('-', "d")]`; `None` for anything
/// with a division or nested operators.
fn split_terms(expr: &str) -> Option<Vec<(char, String)>> {
    let expr = expr.trim();
    let expr = expr
        .strip_prefix('(')
        .and_then(|e| e.strip_suffix(')'))
        .unwrap_or(expr);
    if expr.contains(['/', '%', '(', '^']) {
        return None;
    }
    let mut terms = Vec::new();
    let mut op = '+';
    let mut current = String::new();
    for c in expr.chars() {
        if c == '+' || c == '-' {
            terms.push((op, std::mem::take(&mut current)));
            op = c;
        } else {
            current.push(c);
        }
    }
    terms.push((op, current));
    Some(terms)
}

/// Every example definition under the generic CPU schedules of `cpu.elv`, the matmul
/// versions of `mm.elv` and the blur schedules of `blur.elv`.
fn cpu_recipes(programs: &[Program], strategies: &[StrategyFile]) -> Vec<Recipe> {
    let has = |file: &str| strategies.iter().any(|s| s.name == file);
    let mut recipes = Vec::new();
    let mut add = |p: &Program, d: &Def, strategy: &str, apply: &str| {
        let nats = d
            .nats
            .iter()
            .map(|n| (n.clone(), if d.nats.len() > 2 { 4 } else { 8 }))
            .collect();
        recipes.push(Recipe {
            program: p.name.clone(),
            def: d.name.clone(),
            strategy: strategy.into(),
            apply: apply.into(),
            nats,
            gpu: false,
        });
    };
    for p in programs.iter().filter(|p| !p.name.starts_with("gpu")) {
        for d in &p.defs {
            if d.params.is_empty() || d.params.iter().any(|p| matches!(p, Param::Other)) {
                continue;
            }
            if has("cpu.elv") {
                add(p, d, "cpu.elv", "sequential");
                add(p, d, "cpu.elv", "parallelOuter");
            }
            if p.name == "mm.rise" && d.name == "mm" && has("mm.elv") {
                for v in ["baseline", "blocking", "vectorization", "loopPermutation"] {
                    add(p, d, "mm.elv", &format!("{v} ; lowerToC"));
                }
            }
            if p.name == "blur.rise" && has("blur.elv") {
                for v in ["inline", "root", "inlineVecPar"] {
                    add(p, d, "blur.elv", v);
                }
            }
        }
    }
    // the blocked matmul and the vectorized blurs need sizes that 32 divides
    for r in recipes
        .iter_mut()
        .filter(|r| r.strategy == "mm.elv" || r.strategy == "blur.elv")
    {
        for (_, v) in r.nats.iter_mut() {
            *v = 32;
        }
    }
    recipes
}

/// The definitions of clifuzz's own program on OpenCL and CUDA: a global map
/// (`global1d` of `gpu.elv`), with sizes as small as the CPU recipes'.
fn semantics_gpu_recipes(programs: &[Program], strategies: &[StrategyFile]) -> Vec<Recipe> {
    let Some(p) = programs.iter().find(|p| p.name == SEMANTICS_NAME) else {
        return Vec::new();
    };
    if !strategies.iter().any(|s| s.name == "gpu.elv") {
        return Vec::new();
    }
    p.defs
        .iter()
        .filter(|d| !d.nats.is_empty())
        .map(|d| Recipe {
            program: p.name.clone(),
            def: d.name.clone(),
            strategy: "gpu.elv".into(),
            apply: "global1d".into(),
            nats: d.nats.iter().map(|n| (n.clone(), 8)).collect(),
            gpu: true,
        })
        .collect()
}

/// The cases of `examples/gpu_cases.txt`: `program def strategy apply n=V ...`.
fn gpu_recipes(path: &Path) -> Vec<Recipe> {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    text.lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .filter_map(|l| {
            let words: Vec<&str> = l.split_whitespace().collect();
            let [program, def, strategy, apply, sizes @ ..] = &words[..] else {
                return None;
            };
            let nats = sizes
                .iter()
                .filter_map(|s| {
                    let (n, v) = s.split_once('=')?;
                    Some((n.to_string(), v.parse().ok()?))
                })
                .collect();
            Some(Recipe {
                program: program.to_string(),
                def: def.to_string(),
                strategy: strategy.to_string(),
                apply: apply.to_string(),
                nats,
                gpu: true,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signatures_give_sizes_and_input_shapes() {
        let d = parse_signature("binomialSep : {n m: nat} -> (n+2).(m+2).f32 -> n.m.f32").unwrap();
        assert_eq!(d.name, "binomialSep");
        assert_eq!(d.nats, ["n", "m"]);
        let Param::Array { dims, elem } = &d.params[0] else {
            panic!("{d:?}")
        };
        assert_eq!(
            (dims.as_slice(), elem.as_str()),
            (&["(n+2)".to_string(), "(m+2)".to_string()][..], "f32")
        );
        assert_eq!(d.params.len(), 1);
        let s = parse_signature("scal : {t: data} -> {n: nat} -> t -> n.t -> n.t").unwrap();
        assert_eq!((s.nats.len(), s.params.len()), (1, 2));
        assert!(parse_signature("  where n >= 3").is_none());
    }

    #[test]
    fn sizes_evaluate_under_bindings() {
        let nats = [
            ("h".to_string(), 5),
            ("kh".to_string(), 3),
            ("m".to_string(), 2),
        ];
        assert_eq!(eval_size("(h+1-kh)", &nats), Some(3));
        assert_eq!(eval_size("(m*64)", &nats), Some(128));
        assert_eq!(eval_size("7", &nats), Some(7));
        assert_eq!(eval_size("n", &nats), None);
        assert_eq!(eval_size("kh-h", &nats), None);
        assert_eq!(eval_size("(n /^ 2)", &nats), None);
    }

    #[test]
    fn strategy_definitions_have_arities() {
        let defs = strategy_defs("def a = id\ndef mmTiled(t, r, kb, w) = DFNF\n  def no = x\n");
        assert_eq!(defs, [("a".into(), 0), ("mmTiled".into(), 4)]);
    }
}
