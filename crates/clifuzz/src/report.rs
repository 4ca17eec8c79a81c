//! The summary of a run (cases by command, by outcome, the bugs) and the reproducer of a
//! bug: its files, a shell script that runs it again, its standard error.

use crate::case::Case;
use crate::exec::{Kind, Limits, Outcome};
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// Counts of a run.
#[derive(Default, Debug)]
pub struct Summary {
    /// Per command: cases and seconds spent.
    pub by_command: BTreeMap<&'static str, (u64, f64)>,
    pub by_kind: BTreeMap<Kind, u64>,
    pub by_command_and_kind: BTreeMap<(&'static str, Kind), u64>,
    /// Each bug: case index, command, outcome, reproducer.
    pub bugs: Vec<(u64, &'static str, Kind, PathBuf)>,
}

impl Summary {
    /// Counts one finished case.
    pub fn add(&mut self, case: &Case, outcome: &Outcome) {
        let entry = self.by_command.entry(case.command).or_default();
        entry.0 += 1;
        entry.1 += outcome.elapsed.as_secs_f64();
        *self.by_kind.entry(outcome.kind.clone()).or_default() += 1;
        *self
            .by_command_and_kind
            .entry((case.command, outcome.kind.clone()))
            .or_default() += 1;
    }

    /// The number of cases counted.
    pub fn cases(&self) -> u64 {
        self.by_kind.values().sum()
    }

    /// The report printed at the end of a run.
    pub fn text(&self, seed: u64, start: u64, elapsed: f64, jobs: usize) -> String {
        let n = self.cases();
        let mut r = String::new();
        let rate = n as f64 / elapsed.max(1e-9);
        let _ = writeln!(
            r,
            "== shine-clifuzz seed {seed}, cases {start}..{}: {n} cases in {elapsed:.0} s \
             ({rate:.1} cases/s, {:.1} per job, {jobs} jobs)",
            start + n,
            rate / jobs as f64
        );
        let _ = writeln!(r, "== by outcome");
        for (kind, count) in &self.by_kind {
            let bug = if kind.is_bug() { "  BUG" } else { "" };
            let _ = writeln!(r, "  {:16} {count:>9}{bug}", kind.name());
        }
        let _ = writeln!(r, "== by command (cases, mean ms, outcomes)");
        for (command, (count, secs)) in &self.by_command {
            let outcomes: Vec<String> = self
                .by_command_and_kind
                .iter()
                .filter(|((c, _), _)| c == command)
                .map(|((_, k), n)| format!("{} {n}", k.name()))
                .collect();
            let mean = secs * 1e3 / *count as f64;
            let _ = writeln!(
                r,
                "  {command:11} {count:>9} {mean:>8.1}  {}",
                outcomes.join(", ")
            );
        }
        let _ = writeln!(r, "== {} bugs", self.bugs.len());
        for (index, command, kind, path) in self.bugs.iter().take(100) {
            let _ = writeln!(
                r,
                "  case {index} ({command}): {} -> {}",
                kind.name(),
                path.display()
            );
        }
        r
    }
}

/// Writes the reproducer of a bug into `out/bug-SEED-INDEX-KIND/` and returns its path.
pub fn write_reproducer(
    out: &Path,
    seed: u64,
    case: &Case,
    outcome: &Outcome,
    limits: &Limits,
) -> std::io::Result<PathBuf> {
    let dir = out.join(format!("bug-{seed}-{}-{}", case.index, outcome.kind.name()));
    std::fs::create_dir_all(&dir)?;
    for (name, bytes) in &case.files {
        let path = dir.join(name);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)?;
        }
        std::fs::write(path, bytes)?;
    }
    if let Some(stdin) = &case.stdin {
        std::fs::write(dir.join("stdin.txt"), stdin)?;
    }
    std::fs::write(dir.join("cmd.sh"), script(seed, case, outcome, limits))?;
    let info = format!(
        "case {} of seed {seed} ({}, {:?}): {} after {:.2} s\nargs: {:?}\nleft in TMPDIR: {:?}\n\
         replay: shine-clifuzz --shine SHINE --examples EXAMPLES --seed {seed} --start {} --cases 1\n",
        case.index,
        case.command,
        case.quality,
        outcome.kind.name(),
        outcome.elapsed.as_secs_f64(),
        case.args,
        outcome.leftovers,
        case.index
    );
    std::fs::write(dir.join("outcome.txt"), info)?;
    std::fs::write(dir.join("stderr.txt"), &outcome.stderr_tail)?;
    Ok(dir)
}

/// A shell script that runs the case again in its reproducer directory.
pub fn script(seed: u64, case: &Case, outcome: &Outcome, limits: &Limits) -> String {
    let args: Vec<String> = case.args.iter().map(|a| quote(a)).collect();
    let stdin = if case.stdin.is_some() {
        " < stdin.txt"
    } else {
        " < /dev/null"
    };
    format!(
        "#!/bin/sh\n# shine-clifuzz seed {seed} case {}: {} ({})\n# usage: SHINE=path/to/shine sh cmd.sh\n\
         cd \"$(dirname \"$0\")\" || exit 2\nrm -rf tmp && mkdir -m 700 tmp\nulimit -v {}\n\
         TMPDIR=\"$PWD/tmp\" OMP_NUM_THREADS=1 exec \"${{SHINE:-shine}}\" {}{stdin}\n",
        case.index,
        outcome.kind.name(),
        case.command,
        limits.memory / 1024,
        args.join(" ")
    )
}

/// `word` quoted for the shell.
fn quote(word: &str) -> String {
    format!("'{}'", word.replace('\'', "'\\''"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::case::Quality;
    use std::time::Duration;

    #[test]
    fn the_script_quotes_every_argument() {
        let case = Case {
            index: 7,
            command: "run",
            quality: Quality::Near,
            args: vec!["run".into(), "--cflags".into(), "-DX='a b'".into()],
            files: Vec::new(),
            stdin: None,
        };
        let outcome = Outcome {
            kind: Kind::Panic,
            elapsed: Duration::ZERO,
            stderr_tail: String::new(),
            leftovers: Vec::new(),
        };
        let limits = Limits {
            timeout: Duration::from_secs(1),
            memory: 4 << 30,
        };
        let s = script(1, &case, &outcome, &limits);
        assert!(s.contains("'run' '--cflags' '-DX='\\''a b'\\'''"), "{s}");
        assert!(s.contains("ulimit -v 4194304"), "{s}");
    }
}
