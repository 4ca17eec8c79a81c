//! The generator: case `index` of a run with `seed`, for every subcommand of `shine`.
//!
//! Half the cases are valid invocations (known-good recipes, definitions with inputs of
//! the shapes their types ask for), so that they reach rewriting, code generation,
//! execution and the interpreter; a third are one mutation away from valid (a damaged
//! file, a wrong value, a missing or unknown flag), the rest are wild. Cases that run the C
//! compiler are a small share, so that a case costs milliseconds on average.

use crate::case::{Case, Line, Quality};
use crate::corpus::{eval_size, Corpus, Def, Param, Program, Recipe};
use crate::mutate::{self, EXTREME_NUMBERS};
use crate::npy;
use crate::rng::Rng;

/// The subcommands and their shares of the cases (per thousand).
const COMMANDS: &[(&str, u32)] = &[
    ("check", 140),
    ("eval", 170),
    ("rewrite", 200),
    ("compile", 200),
    ("run", 90),
    ("explore", 15),
    ("fsmooth", 120),
    ("bench", 15),
    ("cpu-worker", 20),
    ("misc", 30),
];

/// Case `index` of the run with `seed`.
pub fn generate(corpus: &Corpus, seed: u64, index: u64) -> Case {
    let mut rng = Rng::for_case(seed, index);
    let quality = rng.weighted(&[
        (Quality::Valid, 50),
        (Quality::Near, 35),
        (Quality::Wild, 15),
    ]);
    let command = rng.weighted(COMMANDS);
    let damage = quality.mutations(&mut rng);
    let mut g = Gen {
        rng,
        corpus,
        damage,
        files: Vec::new(),
        line: Line::default(),
        stdin: None,
    };
    match command {
        "check" => g.check(),
        "eval" => g.eval(),
        "rewrite" => g.rewrite(),
        "compile" => g.compile(),
        "run" => g.run(),
        "explore" => g.explore(),
        "fsmooth" => g.fsmooth(),
        "bench" => g.bench(),
        "cpu-worker" => g.cpu_worker(),
        _ => g.misc(),
    }
    g.finish(index, command, quality)
}

/// The state of one case being generated.
struct Gen<'a> {
    rng: Rng,
    corpus: &'a Corpus,
    /// Mutations still to apply (to files or to the command line).
    damage: u64,
    files: Vec<(String, Vec<u8>)>,
    line: Line,
    stdin: Option<Vec<u8>>,
}

/// Where a damaged path may point instead of the file meant.
const ODD_PATHS: &[&str] = &[
    "missing.file",
    ".",
    "/dev/null",
    "empty",
    "dir/",
    "no/such/dir/x",
    "",
    "-",
];

impl Gen<'_> {
    /// Whether to spend one mutation here (some are left for the command line).
    fn spend(&mut self) -> bool {
        if self.damage > 0 && self.rng.chance(45) {
            self.damage -= 1;
            return true;
        }
        false
    }

    /// The remaining mutations go to the command line.
    fn finish(mut self, index: u64, command: &'static str, quality: Quality) -> Case {
        self.files.push(("empty".into(), Vec::new()));
        self.files.push(("dir/.keep".into(), Vec::new()));
        let flags = flags_of(command);
        let mut extra = |rng: &mut Rng| {
            let (flag, kind) = *rng.pick(flags);
            let mut words = vec![flag.to_string()];
            words.extend(any_value(rng, kind));
            words
        };
        for _ in 0..self.damage {
            self.line.mutate(&mut self.rng, &mut extra);
        }
        Case {
            index,
            command,
            quality,
            args: self.line.words(),
            files: self.files,
            stdin: self.stdin,
        }
    }

    fn file(&mut self, name: &str, bytes: Vec<u8>) -> String {
        self.files.push((name.to_string(), bytes));
        name.to_string()
    }

    /// A damaged path, now and then, instead of `path`.
    fn path(&mut self, path: String) -> String {
        if self.spend() && self.rng.chance(30) {
            return self.rng.pick(ODD_PATHS).to_string();
        }
        path
    }

    /// `prog.rise`: the program, mutated when a mutation is spent on it.
    fn program_file(&mut self, p: &Program) -> String {
        let text = if self.spend() {
            if self.rng.chance(10) {
                mutate::soup(&mut self.rng, mutate::RISE_WORDS, 60)
            } else {
                mutate::mutate(&mut self.rng, p.text.as_bytes(), mutate::RISE_WORDS)
            }
        } else {
            p.text.clone().into_bytes()
        };
        let name = self.file("prog.rise", text);
        self.path(name)
    }

    /// `strat.elv`: the strategy file, mutated when a mutation is spent on it.
    fn strategy_file(&mut self, name: &str) -> String {
        let text = self
            .corpus
            .strategy(name)
            .map(|s| s.text.clone())
            .unwrap_or_default();
        let text = if self.spend() {
            if self.rng.chance(10) {
                mutate::soup(&mut self.rng, mutate::ELV_WORDS, 30)
            } else {
                mutate::mutate(&mut self.rng, text.as_bytes(), mutate::ELV_WORDS)
            }
        } else {
            text.into_bytes()
        };
        let name = self.file("strat.elv", text);
        self.path(name)
    }

    /// A definition name: the one meant, or (damaged) another.
    fn def_name(&mut self, def: &str) -> String {
        if self.spend() {
            let other = self.rng.pick(&self.corpus.programs).clone();
            let names = ["nope", "", "map2", "dot dot", "def", "-x", "é"];
            return match (other.defs.is_empty(), self.rng.chance(50)) {
                (false, true) => self.rng.pick(&other.defs).name.clone(),
                _ => self.rng.pick(&names).to_string(),
            };
        }
        def.to_string()
    }

    /// A random example program and one of its definitions.
    fn program_and_def(&mut self) -> (Program, Def) {
        let corpus = self.corpus;
        let programs: Vec<&Program> = corpus
            .programs
            .iter()
            .filter(|p| !p.defs.is_empty())
            .collect();
        let p = (*self.rng.pick(&programs)).clone();
        let d = self.rng.pick(&p.defs).clone();
        (p, d)
    }

    /// `--nat` values for the sizes of `def`: small (valid), or damaged.
    fn nats(&mut self, def: &Def, small: u64) -> Vec<(String, u64)> {
        def.nats
            .iter()
            .map(|n| (n.clone(), self.rng.range(1, small)))
            .collect()
    }

    /// Sizes for the interpreter: small, and all 1 where the inputs would exceed 4,096
    /// elements (a definition on `(m*64).(k*8)` arrays).
    fn small_nats(&mut self, def: &Def) -> Vec<(String, u64)> {
        let nats = self.nats(def, 6);
        let elements = |p: &Param| match p {
            Param::Array { dims, .. } => dims
                .iter()
                .map(|d| eval_size(d, &nats).unwrap_or(1))
                .product::<u64>(),
            Param::Other => 1,
        };
        if def.params.iter().map(elements).max().unwrap_or(0) > 4096 {
            return def.nats.iter().map(|n| (n.clone(), 1)).collect();
        }
        nats
    }

    /// Adds `--nat n=V` for each binding, damaged when a mutation is spent.
    fn push_nats(&mut self, nats: &[(String, u64)]) {
        for (n, v) in nats {
            let value = if self.spend() {
                nat_value(&mut self.rng)
            } else {
                format!("{n}={v}")
            };
            self.line.push(&["--nat", &value]);
        }
    }

    /// An input file for `param` at sizes `nats`: valid, or corrupted when damaged.
    fn input(&mut self, i: usize, param: &Param, nats: &[(String, u64)]) -> String {
        let name = format!("in{i}.npy");
        let (descr, shape) = match param {
            Param::Array { dims, elem } => {
                let shape: Option<Vec<u64>> = dims.iter().map(|d| eval_size(d, nats)).collect();
                (npy::descr(elem), shape.unwrap_or_else(|| vec![3]))
            }
            Param::Other => ("<f4", vec![2]),
        };
        let shape = if shape.iter().product::<u64>() > 1 << 16 {
            vec![4]
        } else {
            shape
        };
        let bytes = if self.spend() {
            if self.rng.chance(20) && !self.corpus.npy.is_empty() {
                self.rng.pick(&self.corpus.npy).clone()
            } else {
                npy::corrupted(&mut self.rng, descr, &shape)
            }
        } else {
            npy::valid(&mut self.rng, descr, &shape)
        };
        let name = self.file(&name, bytes);
        self.path(name)
    }

    /// A recipe known to compile (for the C targets unless `gpu`).
    fn recipe(&mut self, gpu: bool) -> Option<Recipe> {
        let fitting: Vec<&Recipe> = self
            .corpus
            .recipes
            .iter()
            .filter(|r| r.gpu == gpu)
            .collect();
        (!fitting.is_empty()).then(|| (*self.rng.pick(&fitting)).clone())
    }

    /// `--apply`: a definition of the strategy file (with arguments), composed with
    /// lowering, or a random strategy expression.
    fn apply_text(&mut self, strategy_file: &str) -> String {
        let defs = self
            .corpus
            .strategy(strategy_file)
            .map(|s| s.defs.clone())
            .unwrap_or_default();
        let named = if defs.is_empty() {
            "DFNF".to_string()
        } else {
            let (name, arity) = self.rng.pick(&defs).clone();
            if arity == 0 {
                name
            } else {
                let args: Vec<String> = (0..arity)
                    .map(|_| {
                        self.rng
                            .pick(&["1", "2", "4", "8", "16", "32", "lowerToC"])
                            .to_string()
                    })
                    .collect();
                format!("{name}({})", args.join(", "))
            }
        };
        match self.rng.below(10) {
            0..=3 => named,
            4..=5 => format!("{named} ; lowerToC"),
            6 => format!("{named} ;; lowerToC"),
            _ => strategy_expr(&mut self.rng, 3),
        }
    }

    /// `--budget N`: mostly a bound that ends a runaway strategy in a second, pinned.
    fn push_budget(&mut self, flag: &str) {
        if self.rng.chance(90) {
            let budget = if self.rng.chance(10) {
                self.rng.pick(&["0", "1", "1000"])
            } else {
                self.rng.pick(&["100000", "300000", "1000000"])
            };
            self.line.pin(&[flag, budget]);
        }
    }

    fn check(&mut self) {
        let (p, _) = self.program_and_def();
        self.line.push(&["check"]);
        let path = self.program_file(&p);
        self.line.push(&[path]);
    }

    fn eval(&mut self) {
        let (p, d) = self.program_and_def();
        self.line.push(&["eval"]);
        let path = self.program_file(&p);
        self.line.push(&[path]);
        let def = self.def_name(&d.name);
        self.line.push(&["--def", &def]);
        let nats = self.small_nats(&d);
        if self.rng.chance(60) {
            self.push_nats(&nats);
        }
        if self.rng.chance(90) {
            for (i, param) in d.params.iter().enumerate() {
                let input = self.input(i, param, &nats);
                self.line.push(&["--input", &input]);
            }
        }
        if self.rng.chance(30) {
            let out = self.path("out.npy".into());
            self.line.push(&["--output", &out]);
        }
    }

    fn rewrite(&mut self) {
        let (p, d, strategy, apply) = self.program_strategy(false);
        self.line.push(&["rewrite"]);
        let path = self.program_file(&p);
        self.line.push(&[path]);
        let def = self.def_name(&d);
        self.line.push(&["--def", &def]);
        let file = self.strategy_file(&strategy);
        self.line.push(&["--strategy", &file]);
        self.line.push(&["--apply", &apply]);
        for flag in ["--trace", "--stats", "--json"] {
            if self.rng.chance(if flag == "--trace" { 5 } else { 20 }) {
                self.line.push(&[flag]);
            }
        }
        self.push_budget("--budget");
    }

    /// A program, a definition, a strategy file and `--apply`: a recipe's (valid) or random.
    fn program_strategy(&mut self, gpu: bool) -> (Program, String, String, String) {
        if self.rng.chance(70) {
            if let Some(r) = self.recipe(gpu) {
                if let Some(p) = self.corpus.program(&r.program) {
                    return (p.clone(), r.def, r.strategy, r.apply);
                }
            }
        }
        let (p, d) = self.program_and_def();
        let s = self.rng.pick(&self.corpus.strategies).name.clone();
        let apply = self.apply_text(&s);
        (p, d.name, s, apply)
    }

    fn compile(&mut self) {
        let gpu = self.rng.chance(25);
        let (p, d, strategy, apply) = self.program_strategy(gpu);
        self.line.push(&["compile"]);
        let path = self.program_file(&p);
        self.line.push(&[path]);
        let def = self.def_name(&d);
        self.line.push(&["--def", &def]);
        if self.rng.chance(85) {
            let file = self.strategy_file(&strategy);
            self.line.push(&["--strategy", &file]);
            self.line.push(&["--apply", &apply]);
        }
        let target = if gpu {
            *self.rng.pick(&["opencl", "cuda"])
        } else {
            *self.rng.pick(&["c", "openmp"])
        };
        self.line.push(&["--target", target]);
        if self.rng.chance(20) {
            let out = self.path("out.c".into());
            self.line.push(&["-o", &out]);
        }
        if self.rng.chance(10) {
            self.line.push(&["--emit-dpia"]);
        }
        self.push_budget("--budget");
    }

    fn run(&mut self) {
        let gpu = self.rng.chance(8);
        let recipe = self.recipe(gpu);
        let (p, d, strategy, apply, nats) = match recipe {
            Some(r) if self.rng.chance(85) => {
                let p = self.corpus.program(&r.program).cloned();
                let d = p
                    .as_ref()
                    .and_then(|p| p.defs.iter().find(|d| d.name == r.def).cloned());
                match (p, d) {
                    (Some(p), Some(d)) => (p, d, r.strategy, r.apply, r.nats),
                    _ => return self.check(),
                }
            }
            _ => {
                let (p, d) = self.program_and_def();
                let s = self.rng.pick(&self.corpus.strategies).name.clone();
                let apply = self.apply_text(&s);
                let nats = self.nats(&d, 8);
                (p, d, s, apply, nats)
            }
        };
        self.line.push(&["run"]);
        let path = self.program_file(&p);
        self.line.push(&[path]);
        let def = self.def_name(&d.name);
        self.line.push(&["--def", &def]);
        if self.rng.chance(90) {
            let file = self.strategy_file(&strategy);
            self.line.push(&["--strategy", &file]);
            self.line.push(&["--apply", &apply]);
        }
        let target = if gpu {
            *self.rng.pick(&["opencl", "cuda"])
        } else {
            *self.rng.pick(&["c", "openmp"])
        };
        self.line.push(&["--target", target]);
        self.push_nats(&nats);
        if self.rng.chance(70) {
            let seed = self.rng.range(0, 100).to_string();
            self.line.push(&["--random", &seed]);
        } else {
            for (i, param) in d.params.iter().enumerate() {
                let input = self.input(i, param, &nats);
                self.line.push(&["--input", &input]);
            }
        }
        self.run_options();
        self.push_budget("--budget");
    }

    /// The optional flags of `run`.
    fn run_options(&mut self) {
        if self.rng.chance(40) {
            self.line.push(&["--verify"]);
        }
        if self.rng.chance(15) {
            let runs = self.rng.pick(&["1", "2", "0", "3"]).to_string();
            self.line.push(&["--bench", &runs]);
        }
        if self.rng.chance(15) {
            self.line.push(&["--json"]);
        }
        if self.rng.chance(10) {
            let out = self.path("out.npy".into());
            self.line.push(&["--output", &out]);
        }
        if self.rng.chance(10) {
            let flags = *self.rng.pick(CFLAGS);
            self.line.push(&["--cflags", flags]);
        }
        if self.rng.chance(5) {
            let cc = *self
                .rng
                .pick(&["gcc", "cc", "shine-no-such-cc", "false", "true"]);
            self.line.push(&["--cc", cc]);
        }
        if self.rng.chance(5) {
            self.line.push(&["--fast-math"]);
        }
        if self.rng.chance(2) {
            self.line.push(&["--sanitize"]);
        }
    }

    fn explore(&mut self) {
        let (p, d) = match self.recipe(false) {
            Some(r) if self.rng.chance(70) => {
                let p = self.corpus.program(&r.program).cloned();
                match p.and_then(|p| {
                    Some((p.clone(), p.defs.iter().find(|d| d.name == r.def)?.clone()))
                }) {
                    Some(pd) => pd,
                    None => self.program_and_def(),
                }
            }
            _ => self.program_and_def(),
        };
        self.line.push(&["explore"]);
        let path = self.program_file(&p);
        self.line.push(&[path]);
        let def = self.def_name(&d.name);
        self.line.push(&["--def", &def]);
        let target = *self.rng.pick(&["openmp", "openmp", "c", "opencl", "cuda"]);
        self.line.push(&["--target", target]);
        let nats = self.nats(&d, 8);
        self.push_nats(&nats);
        let budget = self.rng.pick(&["1", "2", "0"]).to_string();
        self.line.pin(&["--budget", &budget]);
        self.line.pin(&["--runs", "1"]);
        self.line.pin(&["--rewrite-budget", "200000"]);
        if self.rng.chance(30) {
            let s = *self.rng.pick(&["solver", "random", "evolutionary"]);
            self.line.push(&["--search", s]);
        }
        if self.rng.chance(20) {
            let file = self.strategy_file("cpu.elv");
            self.line.push(&["--strategy", &file]);
            self.line.push(&["--apply", "DFNF"]);
        }
        for (flag, chance) in [
            ("--log", 20),
            ("-o", 20),
            ("--plot", 10),
            ("--paper-constraints", 10),
            ("--fusion-heuristic", 10),
        ] {
            if self.rng.chance(chance) {
                match flag {
                    "--log" => self.line.push(&[flag, "run.jsonl"]),
                    "-o" => self.line.push(&[flag, "best.elv"]),
                    "--plot" => self.line.push(&[flag, "plot.svg"]),
                    _ => self.line.push(&[flag]),
                }
            }
        }
        if self.rng.chance(10) {
            let log = mutate::mutate(
                &mut self.rng,
                br#"{"candidate": 0, "ms": 1.5, "strategy": "id"}"#,
                &["{", "}", "\"", ":", "1e999", "null"],
            );
            self.file("old.jsonl", log);
            self.line.push(&["--resume", "old.jsonl"]);
        }
        if self.rng.chance(10) {
            let dims = self.rng.pick(&["1", "2", "3", "0", "4"]).to_string();
            self.line.push(&["--dims", &dims]);
        }
    }

    fn fsmooth(&mut self) {
        let sub = *self.rng.pick(&[
            "simplify", "simplify", "diff", "grad", "eval", "eval", "rules",
        ]);
        self.line.push(&["fsmooth"]);
        self.line.push(&[sub]);
        if sub == "rules" || self.corpus.fsmooth.is_empty() {
            return;
        }
        let f = self.rng.pick(&self.corpus.fsmooth).clone();
        let text = if self.spend() {
            mutate::mutate(&mut self.rng, f.text.as_bytes(), mutate::FSMOOTH_WORDS)
        } else {
            f.text.clone().into_bytes()
        };
        let path = self.file("prog.fsmooth", text);
        let path = self.path(path);
        self.line.push(&[path]);
        match sub {
            "eval" => {
                if self.rng.chance(60) {
                    for (i, (_, ty)) in f.inputs.iter().enumerate() {
                        let n = self.rng.range(0, 5);
                        let shape = match ty.as_str() {
                            "Vector" => vec![n],
                            "Matrix" => vec![n, self.rng.range(0, 5)],
                            _ => vec![],
                        };
                        let bytes = if self.spend() {
                            npy::corrupted(&mut self.rng, "<f8", &shape)
                        } else {
                            npy::valid(&mut self.rng, "<f8", &shape)
                        };
                        let name = self.file(&format!("in{i}.npy"), bytes);
                        self.line.push(&[name]);
                    }
                }
                if self.rng.chance(30) {
                    let seed = self.rng.range(0, 1000).to_string();
                    self.line.push(&["--seed", &seed]);
                }
                return;
            }
            "simplify" => {
                if self.rng.chance(70) {
                    let s = self.fsmooth_strategy();
                    self.line.push(&["--strategy", &s]);
                }
            }
            _ => {
                if sub == "grad" {
                    let wrt = f
                        .inputs
                        .iter()
                        .find(|(_, t)| t == "Vector")
                        .map_or("x".to_string(), |(n, _)| n.clone());
                    self.line.push(&["--wrt", &wrt]);
                }
                if self.rng.chance(60) {
                    let s = self.fsmooth_strategy();
                    let flag = if self.rng.chance(50) {
                        "--simplify".to_string()
                    } else {
                        format!("--simplify={s}")
                    };
                    self.line.push(&[flag]);
                }
            }
        }
        for flag in ["--trace", "--stats"] {
            if self.rng.chance(15) {
                self.line.push(&[flag]);
            }
        }
        if self.rng.chance(30) {
            let n = self.rng.pick(&["1", "3", "10"]).to_string();
            self.line.push(&["--verify", &n]);
        }
        if self.rng.chance(50) {
            let b = self
                .rng
                .pick(&["10000", "100000", "1000000", "0", "1"])
                .to_string();
            self.line.pin(&["--budget", &b]);
        }
    }

    /// An F-smooth strategy: a named one, a rule, or a combination.
    fn fsmooth_strategy(&mut self) -> String {
        let rules = &self.corpus.fsmooth_rules;
        if rules.is_empty() {
            return "simplify".into();
        }
        let pick = |rng: &mut Rng| rng.pick(rules).clone();
        match self.rng.below(6) {
            0 => pick(&mut self.rng),
            1 => format!(
                "normalize({} <+ {})",
                pick(&mut self.rng),
                pick(&mut self.rng)
            ),
            2 => format!("{} ; {}", pick(&mut self.rng), pick(&mut self.rng)),
            3 => format!("repeat(topDown({}))", pick(&mut self.rng)),
            4 => format!("try({}) @ bottomUp", pick(&mut self.rng)),
            _ => String::from_utf8_lossy(&mutate::soup(&mut self.rng, mutate::ELV_WORDS, 8))
                .into_owned(),
        }
    }

    fn bench(&mut self) {
        self.line.pin(&["bench"]);
        self.line.pin(&["cpu"]);
        self.line.pin(&["--python", "./no-such-python"]);
        self.line.pin(&["--venv", "venv"]);
        self.line.pin(&["--no-anchors"]);
        if self.rng.chance(30) {
            self.line.push(&["--list"]);
            return;
        }
        let table = self.case_table();
        let table = if self.spend() {
            mutate::mutate(
                &mut self.rng,
                table.as_bytes(),
                &[
                    "{",
                    "}",
                    "[",
                    "]",
                    "\"",
                    ":",
                    ",",
                    "null",
                    "1e999",
                    "-1",
                    "\"examples/mm.rise\"",
                ],
            )
        } else {
            table.into_bytes()
        };
        let cases = self.file("cases.json", table);
        self.line.push(&["--cases", &cases]);
        self.line.push(&["--root", "."]);
        self.line.pin(&["--threads", "1"]);
        self.line.pin(&["--budget", "0.01"]);
        self.line.pin(&["--settle-ms", "0"]);
        for (flag, value) in [("--rounds", "1"), ("--min-runs", "1"), ("--max-runs", "2")] {
            self.line.push(&[flag, value]);
        }
        if self.rng.chance(30) {
            self.line.push(&["--quick"]);
        }
        if self.rng.chance(30) {
            self.line.push(&["--json", "rows.json"]);
        }
    }

    /// A case table of one recipe, its files in the case's directory.
    fn case_table(&mut self) -> String {
        let Some(r) = self.recipe(false) else {
            return "{}".into();
        };
        let Some(p) = self.corpus.program(&r.program).cloned() else {
            return "{}".into();
        };
        self.program_file(&p);
        self.strategy_file(&r.strategy);
        let nats: Vec<String> = r
            .nats
            .iter()
            .map(|(n, v)| format!("\"{n}\": {v}"))
            .collect();
        format!(
            r#"{{"cases": [{{"name": "c", "group": "g", "program": "prog.rise", "def": "{}", "strategy_file": "strat.elv", "strategy": "{}", "nats": {{{}}}, "reference": "none", "anchor": null, "quick": true}}]}}"#,
            r.def,
            r.apply,
            nats.join(", ")
        )
    }

    /// `shine bench cpu-worker` with JSON-line requests on its standard input.
    fn cpu_worker(&mut self) {
        self.line.pin(&["bench"]);
        self.line.pin(&["cpu-worker"]);
        let mut lines = vec![r#"{"op": "hello"}"#.to_string()];
        if let Some(r) = self.recipe(false) {
            if let Some(p) = self.corpus.program(&r.program).cloned() {
                self.program_file(&p);
                self.strategy_file(&r.strategy);
                let nats: Vec<String> = r
                    .nats
                    .iter()
                    .map(|(n, v)| format!("\"{n}\": {v}"))
                    .collect();
                let dir = self
                    .rng
                    .pick(&["\".\"", "\"dir\"", "\"no/such\"", "null", "3"])
                    .to_string();
                if self.rng.chance(40) {
                    lines.push(format!(
                        r#"{{"op": "prepare", "id": 1, "program": "prog.rise", "def": "{}", "strategy_file": "strat.elv", "strategy": "{}", "nats": {{{}}}, "seed": 1, "dir": {dir}, "verify_interpreter": true}}"#,
                        r.def,
                        r.apply,
                        nats.join(", ")
                    ));
                    let runs = *self.rng.pick(&[
                        "1",
                        "2",
                        "0",
                        "18446744073709551615",
                        "100000001",
                        "-1",
                        "1e3",
                    ]);
                    lines.push(format!(
                        r#"{{"op": "time", "id": 1, "runs": {runs}, "warmup": 0}}"#
                    ));
                } else {
                    lines.push(
                        r#"{"op": "prepare", "id": 2, "program": "missing.rise", "def": "f"}"#
                            .into(),
                    );
                }
            }
        }
        lines.push(r#"{"op": "time", "id": 9, "runs": 1}"#.into());
        lines.push(r#"{"op": "release", "id": 1}"#.into());
        lines.push(r#"{"op": "frobnicate"}"#.into());
        lines.push(r#"{"op": "quit"}"#.into());
        let mut text = lines.join("\n").into_bytes();
        while self.spend() {
            text = mutate::mutate(
                &mut self.rng,
                &text,
                &[
                    "{",
                    "}",
                    "\"",
                    ":",
                    ",",
                    "\n",
                    "\"op\"",
                    "\"quit\"",
                    "\"time\"",
                    "null",
                    "18446744073709551615",
                ],
            );
        }
        self.stdin = Some(text);
    }

    /// No subcommand, help and version, unknown subcommands, and soups of flags.
    fn misc(&mut self) {
        match self.rng.below(6) {
            0 => {}
            1 => self
                .line
                .push(&[*self.rng.pick(&["--help", "-h", "--version", "-V", "help"])]),
            2 => {
                let sub = *self.rng.pick(&[
                    "check", "eval", "rewrite", "compile", "run", "explore", "fsmooth", "bench",
                    "help",
                ]);
                self.line.push(&[sub, "--help"]);
            }
            3 => self.line.push(&[*self.rng.pick(&[
                "frobnicate",
                "Check",
                "",
                "-",
                "--",
                "run\u{e9}",
            ])]),
            _ => {
                let sub = *self
                    .rng
                    .pick(&["check", "eval", "rewrite", "compile", "run", "explore"]);
                self.line.push(&[sub]);
                let flags = flags_of(sub);
                for _ in 0..self.rng.range(0, 8) {
                    let (flag, kind) = *self.rng.pick(flags);
                    let mut words = vec![flag.to_string()];
                    words.extend(any_value(&mut self.rng, kind));
                    self.line.push(&words);
                }
            }
        }
    }
}

/// Flags for the C compiler, good and bad.
const CFLAGS: &[&str] = &[
    "-O0",
    "-O1",
    "-O2 -ffast-math",
    "'-O2",
    "-O2 '-DNOTE=\"a b\"'",
    "",
    "-Wall -Werror",
    "-std=c89",
    "-x c++",
    "-fsanitize=undefined",
    "-O3 -march=native -fopenmp",
    "--no-such-flag",
    "\"",
];

/// The kind of value a flag takes.
#[derive(Clone, Copy, Debug)]
enum Value {
    None,
    Number,
    Nat,
    Name,
    Target,
    Strategy,
    Path,
    Text,
}

/// The flags of a subcommand (for damaged command lines).
fn flags_of(command: &str) -> &'static [(&'static str, Value)] {
    use Value::*;
    match command {
        "check" => &[("--help", None)],
        "eval" => &[
            ("--def", Name),
            ("--nat", Nat),
            ("--input", Path),
            ("--output", Path),
        ],
        "rewrite" => &[
            ("--def", Name),
            ("--strategy", Path),
            ("--apply", Strategy),
            ("--trace", None),
            ("--stats", None),
            ("--json", None),
            ("--budget", Number),
        ],
        "compile" => &[
            ("--def", Name),
            ("--strategy", Path),
            ("--apply", Strategy),
            ("--target", Target),
            ("--budget", Number),
            ("-o", Path),
            ("--output", Path),
            ("--emit-dpia", None),
        ],
        "run" => &[
            ("--def", Name),
            ("--strategy", Path),
            ("--apply", Strategy),
            ("--target", Target),
            ("--budget", Number),
            ("--nat", Nat),
            ("--input", Path),
            ("--random", Number),
            ("--output", Path),
            ("--verify", None),
            ("--bench", Number),
            ("--json", None),
            ("--cflags", Text),
            ("--fast-math", None),
        ],
        "explore" => &[
            ("--def", Name),
            ("--target", Target),
            ("--nat", Nat),
            ("--time-nat", Nat),
            ("--time", Number),
            ("--search", Name),
            ("--seed", Number),
            ("--dims", Number),
            ("--cutoff", Number),
            ("--flops", Number),
            ("--paper-constraints", None),
            ("--log", Path),
            ("-o", Path),
        ],
        "fsmooth" => &[
            ("--strategy", Strategy),
            ("--simplify", None),
            ("--trace", None),
            ("--stats", None),
            ("--verify", Number),
            ("--budget", Number),
            ("--wrt", Name),
            ("--seed", Number),
        ],
        "bench" => &[
            ("--case", Name),
            ("--nat", Nat),
            ("--quick", None),
            ("--json", Path),
            ("--rounds", Number),
            ("--min-runs", Number),
            ("--max-runs", Number),
            ("--list", None),
        ],
        _ => &[("--help", None), ("--version", None), ("--json", None)],
    }
}

/// A random value of `kind` (no value for a switch).
fn any_value(rng: &mut Rng, kind: Value) -> Option<String> {
    Some(match kind {
        Value::None => return Option::None,
        Value::Number => rng.pick(EXTREME_NUMBERS).to_string(),
        Value::Nat => nat_value(rng),
        Value::Name => rng
            .pick(&["mm", "dot", "x", "", "solver", "u", "-"])
            .to_string(),
        Value::Target => rng
            .pick(&["c", "openmp", "opencl", "cuda", "gpu", "C", ""])
            .to_string(),
        Value::Strategy => strategy_expr(rng, 2),
        Value::Path => rng.pick(ODD_PATHS).to_string(),
        Value::Text => rng.pick(CFLAGS).to_string(),
    })
}

/// A `--nat` value, often malformed or extreme.
fn nat_value(rng: &mut Rng) -> String {
    let name = *rng.pick(&["n", "m", "k", "", "n ", "x", "n=n"]);
    let value = *rng.pick(EXTREME_NUMBERS);
    match rng.below(4) {
        0 => name.to_string(),
        1 => format!("={value}"),
        _ => format!("{name}={value}"),
    }
}

/// A random strategy expression over the library (depth at most `depth`).
pub fn strategy_expr(rng: &mut Rng, depth: u32) -> String {
    const ATOMS: &[&str] = &[
        "DFNF",
        "BENF",
        "lowerToC",
        "id",
        "fail",
        "mapFusion",
        "mapFission",
        "fuseReduceMap",
        "fissionReduceMap",
        "parallel",
        "unroll",
        "toMapSeq",
        "toReduceSeq",
        "betaReduction",
        "etaReduction",
        "etaAbstraction",
        "addId",
        "transposeMove",
        "splitJoin(4)",
        "split(2)",
        "split(0)",
        "vectorize(4)",
        "vectorize(3)",
        "tile(32, 32)",
        "tile(2, 2)",
        "reorder([1, 2, 3, 4])",
        "permuteB(32)",
        "blockedReduce(4)",
        "toMem(private)",
        "toMem(global)",
        "toMapGlobal(0)",
        "toMapWorkGroup(1)",
        "toMapLocal(0)",
        "joinSplit",
        "mapReduceInterchange",
        "mapMapInterchange",
        "layoutFission",
        "overlappedTiling(4)",
        "storeInMemory(isApp(isApp(isMap)), lowerToC)",
        "interchange(1, 2)",
        "splitJoinMap(2)",
        "nosuchrule",
        "tile(1)",
    ];
    const TRAVERSALS: &[&str] = &[
        "topDown",
        "bottomUp",
        "body",
        "function",
        "argument",
        "outermost(isMap)",
        "innermost(appliedReduce)",
        "outermost(mapNest(2))",
        "innermost(appliedMap)",
        "outermost(appliedMap)",
        "fmap(body)",
        "argOf(map, body)",
        "inLambda",
    ];
    if depth == 0 || rng.chance(30) {
        return rng.pick(ATOMS).to_string();
    }
    let a = strategy_expr(rng, depth - 1);
    match rng.below(9) {
        0 => format!("{a} ; {}", strategy_expr(rng, depth - 1)),
        1 => format!("{a} ;; {}", strategy_expr(rng, depth - 1)),
        2 => format!("{a} <+ {}", strategy_expr(rng, depth - 1)),
        3 | 4 => format!("{a} @ {}", rng.pick(TRAVERSALS)),
        5 => format!("try({a})"),
        6 => format!("repeat({a})"),
        7 => format!("normalize({a})"),
        _ => format!(
            "{}({a})",
            rng.pick(&["topDown", "bottomUp", "tryAll", "not", "all", "one", "some"])
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::corpus::StrategyFile;

    fn corpus() -> Corpus {
        let program = Program {
            name: "dot.rise".into(),
            text: "def dot = fun xs ys => zip xs ys |> map (fun p => fst p * snd p) |> reduce add 0.0f\n".into(),
            defs: vec![crate::corpus::parse_signature("dot : {n: nat} -> n.f32 -> n.f32 -> f32").unwrap()],
        };
        Corpus {
            programs: vec![program],
            strategies: vec![StrategyFile {
                name: "cpu.elv".into(),
                text: "def sequential = DFNF ; lowerToC\n".into(),
                defs: vec![("sequential".into(), 0)],
            }],
            fsmooth: Vec::new(),
            fsmooth_rules: vec!["buildGet".into()],
            recipes: vec![Recipe {
                program: "dot.rise".into(),
                def: "dot".into(),
                strategy: "cpu.elv".into(),
                apply: "sequential".into(),
                nats: vec![("n".into(), 8)],
                gpu: false,
            }],
            npy: Vec::new(),
        }
    }

    #[test]
    fn a_case_depends_on_seed_and_index_only() {
        let c = corpus();
        assert_eq!(generate(&c, 3, 17), generate(&c, 3, 17));
        let distinct: std::collections::HashSet<Vec<String>> =
            (0..50).map(|i| generate(&c, 3, i).args).collect();
        assert!(distinct.len() > 30, "{}", distinct.len());
    }

    #[test]
    fn every_command_is_generated_and_half_the_cases_are_valid() {
        let c = corpus();
        let cases: Vec<Case> = (0..3000).map(|i| generate(&c, 1, i)).collect();
        for (command, _) in COMMANDS {
            assert!(cases.iter().any(|k| k.command == *command), "{command}");
        }
        let valid = cases.iter().filter(|k| k.quality == Quality::Valid).count();
        assert!((1200..1800).contains(&valid), "{valid}");
    }

    #[test]
    fn valid_eval_cases_give_inputs_of_the_definitions_shapes() {
        let c = corpus();
        let case = (0..2000)
            .map(|i| generate(&c, 2, i))
            .find(|k| {
                k.command == "eval"
                    && k.quality == Quality::Valid
                    && k.args.contains(&"--nat".to_string())
                    && k.args.iter().filter(|a| *a == "--input").count() == 2
            })
            .expect("a valid eval case with sizes and inputs");
        let n: u64 = case
            .args
            .iter()
            .find_map(|a| a.strip_prefix("n=")?.parse().ok())
            .unwrap();
        let (_, bytes) = case
            .files
            .iter()
            .find(|(name, _)| name == "in0.npy")
            .unwrap();
        let header = String::from_utf8_lossy(&bytes[10..]);
        assert!(header.contains(&format!("'shape': ({n},)")), "{header}");
    }

    #[test]
    fn bench_cases_never_set_up_the_anchors() {
        let c = corpus();
        for case in (0..5000)
            .map(|i| generate(&c, 4, i))
            .filter(|k| k.command == "bench")
        {
            assert!(
                case.args.contains(&"--no-anchors".to_string()),
                "{:?}",
                case.args
            );
            assert!(
                case.args.contains(&"./no-such-python".to_string()),
                "{:?}",
                case.args
            );
        }
    }
}
