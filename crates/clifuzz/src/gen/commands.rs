//! The commands of RISE programs: `check`, `eval`, `rewrite`, `compile`, `run` and
//! `explore`.

use super::values::CFLAGS;
use super::Gen;
use crate::mutate;

impl Gen<'_> {
    pub(super) fn check(&mut self) {
        let (p, _) = self.program_and_def();
        self.line.push(&["check"]);
        let path = self.program_file(&p);
        self.line.push(&[path]);
    }

    pub(super) fn eval(&mut self) {
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

    pub(super) fn rewrite(&mut self) {
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

    pub(super) fn compile(&mut self) {
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

    pub(super) fn run(&mut self) {
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

    pub(super) fn explore(&mut self) {
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
}
