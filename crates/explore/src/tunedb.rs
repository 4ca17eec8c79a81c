//! The tuning database (`shine explore ... --db tune.db`): what earlier tunings and mapping
//! searches found, so that a candidate is compiled, verified and timed once per machine.
//!
//! The database is a SQLite file. A **context** is what an outcome depends on besides the
//! candidate: the program (its text's fingerprint), the definition, the user's strategy
//! file (fingerprint), the template (a mapping search's: the middle strategy its mappings
//! follow), the target, the device and the versions of shine and of the C compiler. Under a
//! context, an **outcome** is keyed by the candidate (a parameter assignment, or a mapping
//! search's split sizes and choices), the stage and the size set:
//! * `verify`: compiled and verified at the tuning's verification sets (with the inputs'
//!   seed), or the failure that stopped it (a compile error, a wrong result);
//! * `time`: the median time at one time set and the timed runs it is the median of, or
//!   "not applicable" (the set breaks a size constraint of the code), or the failure.
//!
//! Failures are kept like times: a candidate that failed is not tried again. A time measured
//! with fewer runs than a tuning asks for is measured again. SQLite locks the file, so that
//! several processes may read and add to one database at once (a write waits up to
//! [`BUSY_TIMEOUT`] for another); a file that is not a database of this kind, or a corrupted
//! one, is refused when it is opened. An entry holding values of the wrong kind is read as
//! [`Entry::Unreadable`]: the search says so, measures the candidate again and replaces it.

use crate::engine::{Error, Failure};
use rusqlite::types::Value;
use rusqlite::{params, Connection, ErrorCode, OptionalExtension, TransactionBehavior};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// What the `meta` table says a database is.
pub const KIND: &str = "shine explore tuning database";
/// The version of the schema.
pub const VERSION: i64 = 1;
/// How long a statement waits for another process's write to end.
pub const BUSY_TIMEOUT: Duration = Duration::from_secs(60);

/// The schema of a new database.
const SCHEMA: &str = "
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE contexts (
    id INTEGER PRIMARY KEY,
    program TEXT NOT NULL, def TEXT NOT NULL, strategy TEXT NOT NULL, template TEXT NOT NULL,
    target TEXT NOT NULL, device TEXT NOT NULL, version TEXT NOT NULL,
    UNIQUE (program, def, strategy, template, target, device, version));
CREATE TABLE outcomes (
    context INTEGER NOT NULL REFERENCES contexts (id),
    assignment TEXT NOT NULL, stage TEXT NOT NULL, sizes TEXT NOT NULL,
    ms REAL, runs INTEGER, failure TEXT, not_applicable INTEGER NOT NULL DEFAULT 0,
    recorded TEXT NOT NULL DEFAULT (datetime('now')),
    PRIMARY KEY (context, assignment, stage, sizes));
";

/// What an outcome depends on besides the candidate and its sizes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Context {
    /// The fingerprint of the program's text.
    pub program: String,
    /// The definition tuned.
    pub def: String,
    /// The fingerprint of the user's strategy file ("" without one).
    pub strategy: String,
    /// The strategy template, as given.
    pub template: String,
    /// The target.
    pub target: String,
    /// The device candidates run on (the CPU's model and threads, or the GPU's name).
    pub device: String,
    /// shine's version and the C compiler's (`cc --version`, first line).
    pub version: String,
}

/// The outcome of a candidate at a time set.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub enum Timed {
    /// Its median time (ms) over `runs` timed runs.
    Ms {
        /// The median.
        ms: f64,
        /// The timed runs.
        runs: usize,
    },
    /// The set breaks a size constraint of the candidate's code.
    NotApplicable,
    /// It failed there.
    Failed(Failure),
}

/// What the database holds of a candidate at a stage and size set.
#[derive(Clone, Debug, PartialEq)]
pub enum Entry<T> {
    /// Nothing: the candidate was not measured there.
    Absent,
    /// Its outcome.
    Found(T),
    /// An entry that holds no outcome (a value of the wrong kind, written by something else
    /// or damaged): why, in words. A search measures the candidate again and replaces it.
    Unreadable(String),
}

/// The outcome a row of a time set holds (`ms`, `runs`, `failure`, `not_applicable`), or why
/// it holds none.
fn timed_of([ms, runs, failure, not_applicable]: [Value; 4]) -> Result<Timed, String> {
    match not_applicable {
        Value::Integer(0) => {}
        Value::Integer(1) => return Ok(Timed::NotApplicable),
        other => return Err(format!("its `not_applicable` is {}", described(&other))),
    }
    match failure {
        Value::Null => {}
        Value::Text(f) => return Ok(Timed::Failed(Failure::parse(&f))),
        other => return Err(format!("its failure is {}", described(&other))),
    }
    let ms = match ms {
        Value::Real(x) if x.is_finite() && x >= 0.0 => x,
        Value::Integer(x) if x >= 0 => x as f64,
        Value::Null => return Err("it holds no time, failure or `not applicable`".into()),
        other => return Err(format!("its time is {}", described(&other))),
    };
    let runs = match runs {
        Value::Integer(r) => usize::try_from(r).map_err(|_| format!("its runs are {r}"))?,
        other => return Err(format!("its runs are {}", described(&other))),
    };
    Ok(Timed::Ms { ms, runs })
}

/// A value of a column in words (`the text "x"`, `the number -1`).
fn described(v: &Value) -> String {
    match v {
        Value::Null => "empty".to_string(),
        Value::Integer(i) => format!("the number {i}"),
        Value::Real(x) => format!("the number {x}"),
        Value::Text(t) => format!("the text {t:?}"),
        Value::Blob(b) => format!("{} bytes", b.len()),
    }
}

/// An open tuning database and the context this run reads and writes.
pub struct TuneDb {
    conn: Connection,
    path: PathBuf,
    context: i64,
}

impl TuneDb {
    /// Opens the database `path` (a new or empty file becomes one) for `context`; an error
    /// if the file is no tuning database of this version, or is corrupted.
    pub fn open(path: &Path, context: &Context) -> Result<TuneDb, Error> {
        let refuse = |why: String| refusal(path, &why);
        let mut conn = Connection::open(path).map_err(|e| refuse(e.to_string()))?;
        conn.busy_timeout(BUSY_TIMEOUT)
            .map_err(|e| refuse(e.to_string()))?;
        create_or_check(&mut conn).map_err(|e| match e {
            Opening::Sqlite(e) => refuse(sqlite_reason(&e)),
            Opening::Foreign(why) => refuse(why),
        })?;
        check_integrity(&conn).map_err(refuse)?;
        let context = context_id(&conn, context).map_err(|e| refuse(sqlite_reason(&e)))?;
        Ok(TuneDb {
            conn,
            path: path.to_path_buf(),
            context,
        })
    }

    /// The outcome of compiling and verifying `assignment` at `sets`, if it is known: `Ok`
    /// when it was verified.
    pub fn verification(
        &self,
        assignment: &str,
        sets: &str,
    ) -> Result<Entry<Result<(), Failure>>, Error> {
        let row = self
            .conn
            .query_row(
                "SELECT failure FROM outcomes WHERE context = ?1 AND assignment = ?2 \
                 AND stage = 'verify' AND sizes = ?3",
                params![self.context, assignment, sets],
                |r| r.get::<_, Value>(0),
            )
            .optional()
            .map_err(|e| self.cannot("read", &e))?;
        Ok(match row {
            None => Entry::Absent,
            Some(failure) => match failure {
                Value::Null => Entry::Found(Ok(())),
                Value::Text(f) => Entry::Found(Err(Failure::parse(&f))),
                other => Entry::Unreadable(format!("its failure is {}", described(&other))),
            },
        })
    }

    /// Keeps the outcome of compiling and verifying `assignment` at `sets`.
    pub fn record_verification(
        &self,
        assignment: &str,
        sets: &str,
        outcome: &Result<(), Failure>,
    ) -> Result<(), Error> {
        let failure = outcome.as_ref().err().map(ToString::to_string);
        self.put(assignment, ("verify", sets), (None, None, failure, false))
    }

    /// The outcome of `assignment` at the time set `set`, if it is known.
    pub fn timing(&self, assignment: &str, set: &str) -> Result<Entry<Timed>, Error> {
        let row: Option<[Value; 4]> = self
            .conn
            .query_row(
                "SELECT ms, runs, failure, not_applicable FROM outcomes WHERE context = ?1 \
                 AND assignment = ?2 AND stage = 'time' AND sizes = ?3",
                params![self.context, assignment, set],
                |r| Ok([r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?]),
            )
            .optional()
            .map_err(|e| self.cannot("read", &e))?;
        Ok(match row {
            None => Entry::Absent,
            Some(row) => match timed_of(row) {
                Ok(t) => Entry::Found(t),
                Err(why) => Entry::Unreadable(why),
            },
        })
    }

    /// Keeps the outcome of `assignment` at the time set `set`.
    pub fn record_timing(&self, assignment: &str, set: &str, timed: &Timed) -> Result<(), Error> {
        let row = match timed {
            Timed::Ms { ms, runs } => (Some(*ms), i64::try_from(*runs).ok(), None, false),
            Timed::NotApplicable => (None, None, None, true),
            Timed::Failed(f) => (None, None, Some(f.to_string()), false),
        };
        self.put(assignment, ("time", set), row)
    }

    /// Inserts or replaces one outcome.
    fn put(
        &self,
        assignment: &str,
        (stage, sizes): (&str, &str),
        (ms, runs, failure, not_applicable): (Option<f64>, Option<i64>, Option<String>, bool),
    ) -> Result<(), Error> {
        self.conn
            .execute(
                "INSERT OR REPLACE INTO outcomes \
                 (context, assignment, stage, sizes, ms, runs, failure, not_applicable) \
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
                params![
                    self.context,
                    assignment,
                    stage,
                    sizes,
                    ms,
                    runs,
                    failure,
                    not_applicable
                ],
            )
            .map(drop)
            .map_err(|e| self.cannot("write", &e))
    }

    fn cannot(&self, what: &str, e: &rusqlite::Error) -> Error {
        Error::from(format!(
            "cannot {what} the tuning database `{}`: {}",
            self.path.display(),
            sqlite_reason(e)
        ))
    }
}

/// Why a file cannot be opened as a tuning database.
enum Opening {
    Sqlite(rusqlite::Error),
    Foreign(String),
}

impl From<rusqlite::Error> for Opening {
    fn from(e: rusqlite::Error) -> Opening {
        Opening::Sqlite(e)
    }
}

/// Creates the schema in a new database, or checks that of an existing one (one process at
/// a time: the transaction takes the write lock first).
fn create_or_check(conn: &mut Connection) -> Result<(), Opening> {
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    let tables: Vec<String> = tx
        .prepare("SELECT name FROM sqlite_master WHERE type = 'table'")?
        .query_map([], |r| r.get(0))?
        .collect::<Result<_, _>>()?;
    if tables.is_empty() {
        tx.execute_batch(SCHEMA)?;
        tx.execute(
            "INSERT INTO meta (key, value) VALUES ('kind', ?1), ('version', ?2)",
            params![KIND, VERSION.to_string()],
        )?;
    } else {
        check_meta(&tx, &tables)?;
    }
    tx.commit()?;
    Ok(())
}

/// Checks that an existing database says it is a tuning database of this version.
fn check_meta(conn: &Connection, tables: &[String]) -> Result<(), Opening> {
    let foreign = || {
        Opening::Foreign(format!(
            "it is a SQLite database of something else (tables: {})",
            tables.join(", ")
        ))
    };
    if !tables.iter().any(|t| t == "meta") {
        return Err(foreign());
    }
    let value = |key: &str| -> Result<Option<String>, rusqlite::Error> {
        conn.query_row("SELECT value FROM meta WHERE key = ?1", [key], |r| r.get(0))
            .optional()
    };
    if value("kind")?.as_deref() != Some(KIND) {
        return Err(foreign());
    }
    let version = value("version")?.unwrap_or_default();
    if version != VERSION.to_string() {
        return Err(Opening::Foreign(format!(
            "it is a tuning database of version {version}, this shine reads version {VERSION}"
        )));
    }
    Ok(())
}

/// SQLite's quick check of the file's structure.
fn check_integrity(conn: &Connection) -> Result<(), String> {
    let verdict: String = conn
        .query_row("PRAGMA quick_check", [], |r| r.get(0))
        .map_err(|e| sqlite_reason(&e))?;
    if verdict == "ok" {
        Ok(())
    } else {
        Err(format!("it is corrupted ({verdict})"))
    }
}

/// The id of `context`'s row, added if it is new.
fn context_id(conn: &Connection, c: &Context) -> Result<i64, rusqlite::Error> {
    let fields = params![c.program, c.def, c.strategy, c.template, c.target, c.device, c.version];
    conn.execute(
        "INSERT OR IGNORE INTO contexts (program, def, strategy, template, target, device, \
         version) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
        fields,
    )?;
    conn.query_row(
        "SELECT id FROM contexts WHERE program = ?1 AND def = ?2 AND strategy = ?3 \
         AND template = ?4 AND target = ?5 AND device = ?6 AND version = ?7",
        fields,
        |r| r.get(0),
    )
}

/// An error of SQLite in words (a file that is no database, or a corrupted one, said so).
fn sqlite_reason(e: &rusqlite::Error) -> String {
    match e.sqlite_error_code() {
        Some(ErrorCode::NotADatabase) => "it is not a SQLite database".to_string(),
        Some(ErrorCode::DatabaseCorrupt) => format!("it is corrupted ({e})"),
        _ => e.to_string(),
    }
}

/// The error of a file that cannot be used as a tuning database.
fn refusal(path: &Path, why: &str) -> Error {
    Error::from(format!(
        "`{}` cannot be used as a tuning database: {why}; give a new file, or one an earlier \
         tuning wrote",
        path.display()
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn context(device: &str) -> Context {
        Context {
            program: "p".into(),
            def: "f".into(),
            strategy: String::new(),
            template: "t(s)".into(),
            target: "c".into(),
            device: device.into(),
            version: "0.1.0".into(),
        }
    }

    #[test]
    fn outcomes_read_back_per_context() {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let path = dir.path().join("t.db");
        let db = TuneDb::open(&path, &context("cpu")).expect("a new database");
        let broken = Err(Failure::new("compile error", "x.c:1: error"));
        db.record_verification("s=2", "n=4", &Ok(()))
            .expect("written");
        db.record_verification("s=3", "n=4", &broken)
            .expect("written");
        let ms = Timed::Ms { ms: 1.5, runs: 3 };
        db.record_timing("s=2", "n=64", &ms).expect("written");
        db.record_timing("s=2", "n=8", &Timed::NotApplicable)
            .expect("written");
        drop(db);
        let db = TuneDb::open(&path, &context("cpu")).expect("reopened");
        assert_eq!(
            db.verification("s=2", "n=4").ok(),
            Some(Entry::Found(Ok(())))
        );
        assert_eq!(
            db.verification("s=3", "n=4").ok(),
            Some(Entry::Found(broken))
        );
        assert_eq!(db.verification("s=2", "n=8").ok(), Some(Entry::Absent));
        assert_eq!(db.timing("s=2", "n=64").ok(), Some(Entry::Found(ms)));
        assert_eq!(
            db.timing("s=2", "n=8").ok(),
            Some(Entry::Found(Timed::NotApplicable))
        );
        let other = TuneDb::open(&path, &context("gpu")).expect("another device");
        assert_eq!(other.verification("s=2", "n=4").ok(), Some(Entry::Absent));
    }

    /// An entry holding values of the wrong kind is unreadable, says why, and is replaced
    /// by the next outcome kept.
    #[test]
    fn damaged_entries_are_unreadable_and_replaced() {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let path = dir.path().join("t.db");
        let db = TuneDb::open(&path, &context("cpu")).expect("a new database");
        let ms = Timed::Ms { ms: 2.0, runs: 1 };
        db.record_timing("s=2", "n=64", &ms).expect("written");
        db.record_verification("s=2", "n=4", &Ok(()))
            .expect("written");
        db.conn
            .execute_batch(
                "UPDATE outcomes SET ms = 'fast' WHERE stage = 'time'; \
                 UPDATE outcomes SET failure = x'00ff' WHERE stage = 'verify';",
            )
            .expect("damaged");
        assert_eq!(
            db.timing("s=2", "n=64").ok(),
            Some(Entry::Unreadable("its time is the text \"fast\"".into()))
        );
        assert_eq!(
            db.verification("s=2", "n=4").ok(),
            Some(Entry::Unreadable("its failure is 2 bytes".into()))
        );
        db.record_timing("s=2", "n=64", &ms).expect("replaced");
        assert_eq!(db.timing("s=2", "n=64").ok(), Some(Entry::Found(ms)));
        let bad = |row: [Value; 4]| timed_of(row).err().unwrap_or_default();
        let runs_missing = [
            Value::Real(1.0),
            Value::Null,
            Value::Null,
            Value::Integer(0),
        ];
        assert_eq!(bad(runs_missing), "its runs are empty");
        let empty = [Value::Null, Value::Null, Value::Null, Value::Integer(0)];
        assert!(bad(empty).contains("no time"));
        let flag = [Value::Null, Value::Null, Value::Null, Value::Integer(7)];
        assert_eq!(bad(flag), "its `not_applicable` is the number 7");
    }

    #[test]
    fn foreign_and_broken_files_are_refused() {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let text = dir.path().join("log.jsonl");
        std::fs::write(&text, "{\"kind\": \"shine explore log\"}\n".repeat(40)).expect("w");
        let e = TuneDb::open(&text, &context("cpu"))
            .err()
            .expect("a text file");
        assert!(e.to_string().contains("not a SQLite database"), "{e}");
        let other = dir.path().join("other.db");
        Connection::open(&other)
            .and_then(|c| c.execute_batch("CREATE TABLE songs (title TEXT);"))
            .expect("another database");
        let e = TuneDb::open(&other, &context("cpu"))
            .err()
            .expect("foreign");
        assert!(
            e.to_string().contains("of something else (tables: songs)"),
            "{e}"
        );
    }
}
