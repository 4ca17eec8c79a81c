//! A case: one invocation of `shine` (its arguments, the files it reads, its standard
//! input), generated from the run's seed and the case's index by [`crate::gen`].

use crate::mutate::EXTREME_NUMBERS;
use crate::rng::Rng;

/// One invocation of `shine`, with everything it reads.
#[derive(Clone, Debug, PartialEq)]
pub struct Case {
    pub index: u64,
    /// The subcommand it exercises (`run`, `fsmooth`, `cpu-worker`, ...), for the summary.
    pub command: &'static str,
    /// How far it is from a valid invocation.
    pub quality: Quality,
    /// The arguments after `shine`.
    pub args: Vec<String>,
    /// Files to create in its directory first: relative path and contents.
    pub files: Vec<(String, Vec<u8>)>,
    /// Its standard input (none: `/dev/null`).
    pub stdin: Option<Vec<u8>>,
}

/// How far a case is from a valid invocation: valid ones reach rewriting, code generation
/// and execution; nearly valid ones (one mutation) the error paths next to them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Quality {
    Valid,
    Near,
    Wild,
}

impl Quality {
    /// The number of mutations a case of this quality gets.
    pub fn mutations(self, rng: &mut Rng) -> u64 {
        match self {
            Quality::Valid => 0,
            Quality::Near => 1,
            Quality::Wild => rng.range(2, 6),
        }
    }
}

/// The command line being built: groups of words (a flag and its value) that mutations
/// drop, repeat, reorder or damage. Pinned groups keep the case cheap and harmless
/// (`--no-anchors`, a small `--budget`) and are never touched.
#[derive(Clone, Debug, Default)]
pub struct Line {
    groups: Vec<(Vec<String>, bool)>,
}

impl Line {
    /// Adds a group of words.
    pub fn push<S: AsRef<str>>(&mut self, words: &[S]) {
        self.groups.push((
            words.iter().map(|w| w.as_ref().to_string()).collect(),
            false,
        ));
    }

    /// Adds a group that mutations leave alone.
    pub fn pin<S: AsRef<str>>(&mut self, words: &[S]) {
        self.groups
            .push((words.iter().map(|w| w.as_ref().to_string()).collect(), true));
    }

    /// The arguments.
    pub fn words(&self) -> Vec<String> {
        self.groups.iter().flat_map(|(g, _)| g.clone()).collect()
    }

    /// One random damage to the line; `extra` gives a random flag of the command (with a
    /// value) to add.
    pub fn mutate(&mut self, rng: &mut Rng, extra: &mut dyn FnMut(&mut Rng) -> Vec<String>) {
        let free: Vec<usize> = (0..self.groups.len())
            .filter(|&i| !self.groups[i].1)
            .collect();
        if free.is_empty() {
            self.groups.push((extra(rng), false));
            return;
        }
        let which = rng.below(9);
        let pick = |rng: &mut Rng| free[rng.below(free.len())];
        match which {
            0 => {
                self.groups.remove(pick(rng));
            }
            1 => {
                let i = pick(rng);
                let g = self.groups[i].clone();
                self.groups.insert(i, g);
            }
            2 => {
                // a value replaced with an extreme or malformed number
                let i = pick(rng);
                let g = &mut self.groups[i].0;
                let last = g.len() - 1;
                g[last] = rng.pick(EXTREME_NUMBERS).to_string();
            }
            3 => {
                // a flag without its value
                let i = pick(rng);
                self.groups[i].0.truncate(1);
            }
            4 => {
                let (i, j) = (pick(rng), pick(rng));
                self.groups.swap(i, j);
            }
            5 => {
                let i = rng.below(self.groups.len() + 1);
                self.groups.insert(i, (vec![unknown_flag(rng)], false));
            }
            6 => {
                // `--flag=value` instead of `--flag value`
                let i = pick(rng);
                let g = &mut self.groups[i].0;
                if g.len() == 2 {
                    *g = vec![format!("{}={}", g[0], g[1])];
                }
            }
            _ => {
                let i = rng.below(self.groups.len() + 1);
                self.groups.insert(i, (extra(rng), false));
            }
        }
    }
}

/// A flag no command has, or a malformed one.
fn unknown_flag(rng: &mut Rng) -> String {
    rng.pick(&[
        "--frobnicate",
        "-x",
        "--",
        "---",
        "-",
        "--def=",
        "--=",
        "-\u{e9}",
        "--target=gpu",
        "--nat",
        "--help",
        "-V",
        "--input=",
    ])
    .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pinned_groups_survive_every_mutation() {
        for seed in 0..200 {
            let mut rng = Rng::new(seed);
            let mut line = Line::default();
            line.pin(&["--no-anchors"]);
            line.push(&["--def", "mm"]);
            for _ in 0..6 {
                line.mutate(&mut rng, &mut |_| vec!["--quick".into()]);
            }
            assert!(line.words().contains(&"--no-anchors".to_string()));
        }
    }

    #[test]
    fn mutations_change_the_line() {
        let mut changed = 0;
        for seed in 0..100 {
            let mut rng = Rng::new(seed);
            let mut line = Line::default();
            line.push(&["check"]);
            line.push(&["--def", "mm"]);
            let before = line.words();
            line.mutate(&mut rng, &mut |_| vec!["--stats".into()]);
            changed += usize::from(line.words() != before);
        }
        assert!(changed > 80, "{changed}");
    }
}
