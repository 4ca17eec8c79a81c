//! The log of a run (`shine explore --log`, `--resume`): JSON lines, the first a header that
//! identifies the run (program, definition, target, strategy and search space), then one
//! line per candidate. A log is resumed only by a run it identifies; a last line cut
//! short by a crash is skipped with a warning, and cut off before appending.

use crate::engine::{Error, Run};
use serde_json::{json, Value};
use std::fs::File;
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

/// The `kind` of a header record.
const LOG_KIND: &str = "shine explore log";
/// The version of the log format.
const LOG_VERSION: u64 = 1;
/// The fields of a header that must agree for a log to be resumed or appended to.
const IDENTITY: [&str; 6] = ["program", "def", "target", "strategy", "apply", "space"];

/// The header of a run: what identifies it. `apply` is the middle strategy or template
/// as given (`None`: the default), `space` describes the search space.
pub fn header(run: &Run, apply: Option<&str>, space: Value) -> Value {
    json!({
        "kind": LOG_KIND,
        "version": LOG_VERSION,
        "program": fingerprint(&run.program.text),
        "program_file": run.program.name,
        "def": run.def,
        "target": run.target.to_string(),
        "strategy": run.strategy.as_ref().map(|s| fingerprint(&s.text)),
        "apply": apply,
        "space": space,
    })
}

/// A hash of a text (FNV-1a, 64 bits) in hex: the same text, the same fingerprint on
/// every machine and build.
pub(crate) fn fingerprint(text: &str) -> String {
    let hash = text.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    });
    format!("{hash:016x}")
}

/// The candidate records of the log `path` of this run (`resume`); an error says why
/// the log cannot be resumed by this run. Warnings go to `note`.
pub fn read(path: &Path, mine: &Value, note: &mut dyn FnMut(&str)) -> Result<Vec<Value>, Error> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| Error::from(format!("cannot read `{}`: {e}", path.display())))?;
    parse(path, &text, mine, note)
}

/// The records of a log's text after its header, which must be `mine`.
fn parse(
    path: &Path,
    text: &str,
    mine: &Value,
    note: &mut dyn FnMut(&str),
) -> Result<Vec<Value>, Error> {
    let lines: Vec<(usize, &str)> = text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .collect();
    let mut records = Vec::new();
    for (k, &(i, line)) in lines.iter().enumerate() {
        let value = match serde_json::from_str::<Value>(line) {
            Ok(v) if v.is_object() => v,
            Ok(_) | Err(_) if k + 1 == lines.len() && k > 0 => {
                note(&format!(
                    "warning: {}:{}: the last line is incomplete (a run stopped while \
                     writing it?); skipped",
                    path.display(),
                    i + 1
                ));
                break;
            }
            Ok(_) => return Err(format!("{}:{}: not a JSON object", path.display(), i + 1).into()),
            Err(e) => return Err(format!("{}:{}: {e}", path.display(), i + 1).into()),
        };
        if k == 0 {
            check_header(path, &value, mine)?;
        } else {
            records.push(value);
        }
    }
    Ok(records)
}

/// Checks that a log's header is that of this run; the error says what differs.
fn check_header(path: &Path, theirs: &Value, mine: &Value) -> Result<(), Error> {
    if theirs["kind"] != LOG_KIND {
        return Err(format!(
            "`{}` has no header record (a log of an older shine, or no log of shine \
             explore): it cannot be resumed or appended to; start a new log",
            path.display()
        )
        .into());
    }
    if theirs["version"] != LOG_VERSION {
        return Err(format!(
            "`{}` is a log of version {} of shine explore, this is version {LOG_VERSION}",
            path.display(),
            theirs["version"]
        )
        .into());
    }
    let differences: Vec<String> = IDENTITY
        .iter()
        .filter(|k| theirs[**k] != mine[**k])
        .map(|k| difference(k, theirs, mine))
        .collect();
    if differences.is_empty() {
        return Ok(());
    }
    Err(format!(
        "`{}` is the log of another run: {}",
        path.display(),
        differences.join("; ")
    )
    .into())
}

/// What differs in the field `key` of two headers, in words.
fn difference(key: &str, theirs: &Value, mine: &Value) -> String {
    match key {
        "program" => format!(
            "the program differs (the log's: `{}`, this run's: `{}`, whose text differs)",
            theirs["program_file"].as_str().unwrap_or("?"),
            mine["program_file"].as_str().unwrap_or("?")
        ),
        "strategy" => "the strategy file differs".to_string(),
        "space" => format!(
            "the search space differs (the log's: {}, this run's: {})",
            theirs["space"], mine["space"]
        ),
        _ => format!(
            "the {key} differs (the log's: {}, this run's: {})",
            theirs[key], mine[key]
        ),
    }
}

/// The log being written (`--log`): every record is written whole and checked.
pub struct Log {
    file: File,
    path: PathBuf,
}

impl Log {
    /// Opens the log `path` for appending: a new or empty file gets this run's header; an
    /// existing log must be of this run, and an incomplete last line is cut off (warnings
    /// go to `note`).
    pub fn open(path: &Path, mine: &Value, note: &mut dyn FnMut(&str)) -> Result<Log, Error> {
        let cannot = |e: std::io::Error| Error::from(cannot_write(path, &e));
        let mut file = std::fs::OpenOptions::new()
            .create(true)
            .read(true)
            .append(true)
            .open(path)
            .map_err(cannot)?;
        let mut text = String::new();
        if file.metadata().is_ok_and(|m| m.is_file()) {
            file.read_to_string(&mut text)
                .map_err(|e| Error::from(format!("cannot read `{}`: {e}", path.display())))?;
        }
        let mut log = Log {
            file,
            path: path.to_path_buf(),
        };
        if text.trim().is_empty() {
            log.record(mine)?;
        } else {
            parse(path, &text, mine, note)?;
            log.cut_incomplete_line(&text, note)?;
        }
        Ok(log)
    }

    /// Cuts off a last line without its newline (a run stopped while writing it).
    fn cut_incomplete_line(&mut self, text: &str, note: &mut dyn FnMut(&str)) -> Result<(), Error> {
        if text.ends_with('\n') {
            return Ok(());
        }
        let keep = text.rfind('\n').map_or(0, |i| i + 1);
        note(&format!(
            "warning: `{}`: cutting off its incomplete last line",
            self.path.display()
        ));
        self.file
            .set_len(keep as u64)
            .and_then(|()| self.file.seek(SeekFrom::End(0)).map(drop))
            .map_err(|e| Error::from(cannot_write(&self.path, &e)))
    }

    /// Appends one record as one line.
    pub fn record(&mut self, value: &Value) -> Result<(), Error> {
        let line = format!("{value}\n");
        self.file
            .write_all(line.as_bytes())
            .and_then(|()| self.file.flush())
            .map_err(|e| {
                Error::from(format!(
                    "{}; the search stops here (the log so far is valid)",
                    cannot_write(&self.path, &e)
                ))
            })
    }
}

fn cannot_write(path: &Path, e: &std::io::Error) -> String {
    format!("cannot write the log `{}`: {e}", path.display())
}

/// Writes `record` to the log if there is one.
pub fn record(log: &mut Option<Log>, value: &Value) -> Result<(), Error> {
    match log {
        Some(log) => log.record(value),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn head(def: &str) -> Value {
        json!({"kind": LOG_KIND, "version": 1, "program": "1", "program_file": "p.rise",
               "def": def, "target": "c", "strategy": null, "apply": null, "space": {}})
    }

    #[test]
    fn a_log_of_another_run_is_refused_and_a_cut_last_line_skipped() {
        let p = Path::new("run.jsonl");
        let text = format!("{}\n{{\"ms\": 1}}\n{{\"ms\": 2}}\n{{\"ms", head("f"));
        let records = parse(p, &text, &head("f"), &mut |_| {}).expect("this run's log");
        assert_eq!(records.len(), 2);
        let e = parse(p, &text, &head("g"), &mut |_| {}).expect_err("another definition");
        assert!(e.to_string().contains("the def differs"), "{e}");
        let old = "{\"method\": \"solver\", \"ms\": 1}\n";
        let e = parse(p, old, &head("f"), &mut |_| {}).expect_err("no header");
        assert!(e.to_string().contains("no header record"), "{e}");
        let broken = format!("{}\n{{\"ms\n{{\"ms\": 2}}\n", head("f"));
        assert!(
            parse(p, &broken, &head("f"), &mut |_| {}).is_err(),
            "a broken middle line"
        );
    }

    #[test]
    fn fingerprints_are_stable() {
        assert_eq!(fingerprint(""), "cbf29ce484222325");
        assert_ne!(fingerprint("a"), fingerprint("b"));
    }
}
