//! The other commands: `fsmooth`, `bench cpu` and its `cpu-worker`, and the rest (no
//! subcommand, help, unknown subcommands, soups of flags).

use super::values::flags_of;
use super::{any_value, Gen};
use crate::mutate;
use crate::npy;
use crate::rng::Rng;

impl Gen<'_> {
    pub(super) fn fsmooth(&mut self) {
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

    pub(super) fn bench(&mut self) {
        self.line.pin(&["bench"]);
        self.line.pin(&["cpu"]);
        self.line.pin(&["--python", "./no-such-python"]);
        self.line.pin(&["--venv", "venv"]);
        self.line.pin(&["--no-anchors"]);
        if self.rng.chance(30) {
            // pinned, as `--cases` below: without them, the whole default suite runs
            self.line.pin(&["--list"]);
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
        // pinned: without a case table `bench cpu` runs the whole default suite, which
        // takes minutes by design (mutations that dropped `--cases` or `--list` made hangs)
        self.line.pin(&["--cases", &cases]);
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
    pub(super) fn cpu_worker(&mut self) {
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
    pub(super) fn misc(&mut self) {
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
