//! Messages that name settings of the pipeline.
//!
//! The library speaks of its settings by their names in its API (`RunOptions::cflags`, a
//! size in `nats`); the command line calls them by their flags (`--cflags`, `--nat n=V`) and
//! the Python package by its keywords (`cflags=`, `n=5`). A message that tells the user what
//! to give or change is a [`Phrase`]: text and [`Setting`]s, which [`Phrase::render`] spells
//! as a front end says (its `Display` uses the library's names).

use std::fmt;

/// A setting of the pipeline that a message names, so that each front end can name it as
/// its users give it.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Setting {
    /// The value of the size named here (`nats` of [`crate::evaluate`], [`crate::bind`]...):
    /// the command line's `--nat n=V`.
    ///
    /// [`crate::bind`]: crate::inputs::bind
    Size(String),
    /// Input arrays, one per parameter ([`Inputs::Arrays`](crate::Inputs::Arrays)): the
    /// command line's `--input`.
    InputArrays,
    /// Random inputs from a seed ([`Inputs::Random`](crate::Inputs::Random)): the command
    /// line's `--random`.
    RandomInputs,
    /// The C compiler's flags ([`RunOptions::cflags`](crate::RunOptions::cflags)).
    CFlags,
    /// C code built with sanitizers ([`RunOptions::sanitize`](crate::RunOptions::sanitize)).
    Sanitize,
    /// The C compiler ([`RunOptions::cc`](crate::RunOptions::cc)), which also compiles the
    /// foreign functions the interpreter runs.
    Compiler,
    /// A strategy ([`StrategySource`](crate::StrategySource)): the command line's
    /// `--strategy S.elv --apply NAME`.
    Strategy,
    /// A file a result is written to (a path of
    /// [`npy::write_output`](crate::npy::write_output)), as a noun (`1 output file given`):
    /// the command line's `--output`.
    OutputFiles,
    /// The location a selection is made at ([`select::select`](crate::select::select)).
    Selection,
    /// The most candidates a search compiles (`explore`'s `Limits::budget`): the command
    /// line's `--budget`.
    SearchBudget,
    /// The most seconds a search runs (`explore`'s `Limits::time`): `--time`.
    SearchTime,
    /// The sizes a search verifies and times candidates at (`nats` of `explore`'s requests):
    /// `--nat`.
    SearchSizes,
    /// Further size sets a tuning verifies candidates at (`Tuning::verify_nats`):
    /// `--verify-nat`.
    VerifySizes,
    /// The size sets a search times candidates at (`time_nats`): `--time-nat`.
    TimeSizes,
    /// A parameter of a tuning (`Tuning::params`), by name: `--param NAME=...`.
    Parameter(String),
    /// The strategy template a tuning fills in (`Tuning::template`): `--apply`.
    Template,
    /// Checking the mapping constraints on every raw assignment
    /// (`explore::mapping::check_constraints`): `--check-constraints`.
    CheckConstraints,
    /// The tuning database a tuning reads and adds to (`explore`'s `Run::db`): `--db`.
    TuningDatabase,
    /// The CPU workers that compile and verify candidates (`explore`'s `Run::jobs`):
    /// `--jobs`.
    Jobs,
    /// The CUDA devices candidates are timed on (`explore`'s `Run::devices`): `--devices`.
    Devices,
    /// Where the generated source can be read: the artifact's code
    /// ([`Artifact::code`](crate::Artifact::code)); the command line writes it with
    /// `shine compile ... -o FILE`.
    GeneratedSource,
}

impl Setting {
    /// The setting as the library names it: the field or type of its API.
    pub fn library_name(&self) -> String {
        match self {
            Setting::Size(n) => format!("`(\"{n}\", V)` in `nats`"),
            Setting::InputArrays => "`Inputs::Arrays`".into(),
            Setting::RandomInputs => "`Inputs::Random`".into(),
            Setting::CFlags => "`RunOptions::cflags`".into(),
            Setting::Sanitize => "`RunOptions::sanitize`".into(),
            Setting::Compiler => "`RunOptions::cc`".into(),
            Setting::Strategy => "a `StrategySource`".into(),
            Setting::OutputFiles => "output".into(),
            Setting::Selection => "the selection's location".into(),
            Setting::SearchBudget => "`Limits::budget`".into(),
            Setting::SearchTime => "`Limits::time`".into(),
            Setting::SearchSizes => "the request's `nats`".into(),
            Setting::VerifySizes => "`Tuning::verify_nats`".into(),
            Setting::TimeSizes => "the request's `time_nats`".into(),
            Setting::Parameter(n) => format!("the parameter `{n}` of `Tuning::params`"),
            Setting::Template => "`Tuning::template`".into(),
            Setting::CheckConstraints => "`explore::mapping::check_constraints`".into(),
            Setting::TuningDatabase => "`Run::db`".into(),
            Setting::Jobs => "`Run::jobs`".into(),
            Setting::Devices => "`Run::devices`".into(),
            Setting::GeneratedSource => {
                "the artifact's code (`Artifact::code`) is the generated source".into()
            }
        }
    }
}

/// A piece of a [`Phrase`].
#[derive(Clone, Debug, PartialEq, Eq)]
enum Piece {
    Text(String),
    Setting(Setting),
}

/// A message made of text and [`Setting`]s.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Phrase(Vec<Piece>);

impl Phrase {
    /// This phrase followed by `more`.
    pub fn then(mut self, more: impl Into<Phrase>) -> Phrase {
        self.0.extend(more.into().0);
        self
    }

    /// The settings the phrase names, in order.
    pub fn settings(&self) -> impl Iterator<Item = &Setting> {
        self.0.iter().filter_map(|p| match p {
            Piece::Setting(s) => Some(s),
            Piece::Text(_) => None,
        })
    }

    /// The phrase with each setting spelled by `spell`.
    pub fn render(&self, spell: &dyn Fn(&Setting) -> String) -> String {
        self.0
            .iter()
            .map(|p| match p {
                Piece::Text(t) => t.clone(),
                Piece::Setting(s) => spell(s),
            })
            .collect()
    }
}

impl From<String> for Phrase {
    fn from(text: String) -> Phrase {
        Phrase(vec![Piece::Text(text)])
    }
}

impl From<&str> for Phrase {
    fn from(text: &str) -> Phrase {
        Phrase::from(text.to_string())
    }
}

impl From<Setting> for Phrase {
    fn from(setting: Setting) -> Phrase {
        Phrase(vec![Piece::Setting(setting)])
    }
}

impl fmt::Display for Phrase {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.render(&Setting::library_name))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_phrase_spells_its_settings_as_asked() {
        let phrase =
            Phrase::from("no value for `n`; give it with ").then(Setting::Size("n".into()));
        assert_eq!(
            phrase.to_string(),
            "no value for `n`; give it with `(\"n\", V)` in `nats`"
        );
        let cli = phrase.render(&|s| match s {
            Setting::Size(n) => format!("--nat {n}=V"),
            other => other.library_name(),
        });
        assert_eq!(cli, "no value for `n`; give it with --nat n=V");
        assert_eq!(
            phrase.settings().collect::<Vec<_>>(),
            [&Setting::Size("n".into())]
        );
    }
}
