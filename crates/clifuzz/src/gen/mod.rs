//! The generator: case `index` of a run with `seed`, for every subcommand of `shine`.
//!
//! Half the cases are valid invocations (known-good recipes, definitions with inputs of
//! the shapes their types ask for), so that they reach rewriting, code generation,
//! execution and the interpreter; a third are one mutation away from valid (a damaged
//! file, a wrong value, a missing or unknown flag), the rest are wild. Cases that run the C
//! compiler are a small share, so that a case costs milliseconds on average.
//!
//! Here: the mix of commands, the state of a case being generated and what every command
//! draws on (files, definitions, sizes, inputs, recipes, strategies); the commands of
//! RISE programs are in `commands`, F-smooth, the benchmarks and the rest in `tools`, flags
//! and their values in `values`.

mod commands;
mod tools;
mod values;

pub use values::strategy_expr;
use values::{any_value, flags_of, nat_value};

use crate::case::{Case, Line, Quality};
use crate::corpus::{eval_size, Corpus, Def, Param, Program, Recipe, SEMANTICS_NAME};
use crate::mutate;
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

/// The share (percent) of the cases drawing a program or recipe that take clifuzz's own
/// program ([`SEMANTICS_NAME`]).
const SEMANTICS_SHARE: u64 = 15;

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

    /// A random example program and one of its definitions; now and then clifuzz's own
    /// program (casts without a value, large `natType` values, foreign functions that print,
    /// exit or crash).
    fn program_and_def(&mut self) -> (Program, Def) {
        let corpus = self.corpus;
        let own = self.rng.chance(SEMANTICS_SHARE);
        let programs: Vec<&Program> = corpus
            .programs
            .iter()
            .filter(|p| !p.defs.is_empty() && (!own || p.name == SEMANTICS_NAME))
            .collect();
        let programs = if programs.is_empty() {
            corpus
                .programs
                .iter()
                .filter(|p| !p.defs.is_empty())
                .collect()
        } else {
            programs
        };
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
        let own = self.rng.chance(SEMANTICS_SHARE);
        let of = |own: bool| -> Vec<&Recipe> {
            self.corpus
                .recipes
                .iter()
                .filter(|r| r.gpu == gpu && (!own || r.program == SEMANTICS_NAME))
                .collect()
        };
        let fitting = match of(own) {
            none if none.is_empty() => of(false),
            some => some,
        };
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

    /// `corpus()` with clifuzz's own program, typed as `shine check` types it.
    fn corpus_with_semantics() -> Corpus {
        let mut c = corpus();
        c.programs.push(Program {
            name: SEMANTICS_NAME.into(),
            text: crate::corpus::SEMANTICS.into(),
            defs: [
                "castI64 : {n: nat} -> n.f32 -> n.i64",
                "crashing : {n: nat} -> n.f32 -> n.f32",
            ]
            .into_iter()
            .filter_map(crate::corpus::parse_signature)
            .collect(),
        });
        c
    }

    #[test]
    fn cases_draw_on_the_programs_of_the_new_semantics() {
        let c = corpus_with_semantics();
        let evals: Vec<Case> = (0..2000)
            .map(|i| generate(&c, 6, i))
            .filter(|k| k.command == "eval" && k.quality == Quality::Valid)
            .collect();
        let own = evals
            .iter()
            .filter(|k| {
                k.files.iter().any(|(n, b)| {
                    n == "prog.rise" && String::from_utf8_lossy(b).contains("ffCrash")
                })
            })
            .count();
        assert!(own * 100 >= evals.len() * 8, "{own} of {}", evals.len());
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
    fn bench_cases_never_set_up_the_anchors_nor_run_the_whole_suite() {
        let c = corpus();
        for case in (0..5000)
            .map(|i| generate(&c, 4, i))
            .filter(|k| k.command == "bench")
        {
            // the default suite takes minutes: a case lists it or gives a case table
            assert!(
                case.args.iter().any(|a| a == "--list" || a == "--cases"),
                "{:?}",
                case.args
            );
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
