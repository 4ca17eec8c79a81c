//! A cache of C compilations shared by the cases of a run: a third of the fuzzer's time went
//! to `gcc` compiling the same generated modules again (a valid `run` case of a recipe
//! generates the same C source every time).
//!
//! The run puts `gcc` and `cc` on the cases' `PATH` as links to `shine-clifuzz` itself; so
//! invoked, it is the compiler ([`main`]): it looks the compilation up by its arguments and
//! the contents of the files they name, and replays what the real compiler did (its exit
//! status, what it printed, the file it wrote to `-o`), or runs the real compiler (found on
//! the `PATH` the run started with) and keeps what it did. The module's temporary directory
//! differs from case to case: it is written `@DIR@` in the key and in what is kept. Entries
//! are compared whole, never by hash alone; a compiler killed by a signal is not kept.
//! Reproducers do not use the cache: they run the real compiler.

use std::ffi::OsString;
use std::io::Write;
use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// The names under which `shine-clifuzz` is the compiler.
pub const COMPILERS: &[&str] = &["gcc", "cc"];

/// The environment variable with the `PATH` the run started with (where the real compiler is).
pub const REAL_PATH: &str = "CLIFUZZ_REAL_PATH";

/// The environment variable with the cache's directory.
pub const CACHE_DIR: &str = "CLIFUZZ_CC_CACHE";

/// The directory of the links (`bin/`) and the cache (`cc-cache/`) under `work`: the
/// environment a case runs with to use the cache.
pub fn install(work: &Path) -> Result<Vec<(String, OsString)>, String> {
    let me = std::env::current_exe().map_err(|e| format!("shine-clifuzz's own path: {e}"))?;
    let bin = work.join("bin");
    let cache = work.join("cc-cache");
    for dir in [&bin, &cache] {
        std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    }
    for name in COMPILERS {
        let link = bin.join(name);
        let _ = std::fs::remove_file(&link);
        std::os::unix::fs::symlink(&me, &link).map_err(|e| format!("{}: {e}", link.display()))?;
    }
    let path = std::env::var_os("PATH").unwrap_or_default();
    let mut case_path = bin.into_os_string();
    case_path.push(":");
    case_path.push(&path);
    Ok(vec![
        ("PATH".into(), case_path),
        (REAL_PATH.into(), path),
        (CACHE_DIR.into(), cache.into_os_string()),
    ])
}

/// Whether this process was started as the compiler (`argv[0]` is `gcc` or `cc`).
pub fn invoked_as_compiler() -> Option<String> {
    let first = std::env::args_os().next()?;
    let name = Path::new(&first).file_name()?.to_str()?.to_string();
    COMPILERS.contains(&name.as_str()).then_some(name)
}

/// Runs as the compiler `name` with this process's arguments; returns the exit code.
pub fn main(name: &str) -> i32 {
    let args: Vec<String> = match std::env::args_os()
        .skip(1)
        .map(|a| a.into_string())
        .collect::<Result<_, _>>()
    {
        Ok(args) => args,
        Err(_) => return exec_real(name, std::env::args_os().skip(1).collect()),
    };
    let Some(real) = find_real(name) else {
        eprintln!("shine-clifuzz: no `{name}` on ${REAL_PATH}");
        return 127;
    };
    let cache = std::env::var_os(CACHE_DIR).map(PathBuf::from);
    let output = output_path(&args);
    let (Some(cache), Some(output)) = (cache, output) else {
        return exec_real(name, args.into_iter().map(OsString::from).collect());
    };
    let dir = output
        .parent()
        .map(|d| d.to_string_lossy().into_owned())
        .unwrap_or_default();
    let key = key(name, &args, &dir);
    let entry_path = cache.join(format!("{:016x}", fnv(&key)));
    if let Some(entry) = std::fs::read(&entry_path)
        .ok()
        .and_then(|b| Entry::decode(&b))
    {
        if entry.key == key {
            count(&cache, HITS);
            return entry.replay(&output, &dir);
        }
    }
    count(&cache, MISSES);
    let ran = Command::new(&real)
        .args(&args)
        .stdin(Stdio::null())
        .output();
    let ran = match ran {
        Ok(ran) => ran,
        Err(e) => {
            eprintln!("shine-clifuzz: starting {}: {e}", real.display());
            return 127;
        }
    };
    let _ = std::io::stdout().write_all(&ran.stdout);
    let _ = std::io::stderr().write_all(&ran.stderr);
    let Some(status) = ran.status.code() else {
        return 128 + ran.status.signal().unwrap_or(0);
    };
    let entry = Entry {
        key,
        status,
        stdout: generic(&ran.stdout, &dir),
        stderr: generic(&ran.stderr, &dir),
        output: std::fs::read(&output).ok(),
    };
    let temporary = cache.join(format!(
        "{:016x}.{}.tmp",
        fnv(&entry.key),
        std::process::id()
    ));
    if std::fs::write(&temporary, entry.encode()).is_ok() {
        let _ = std::fs::rename(&temporary, &entry_path);
    }
    status
}

/// The files in the cache's directory that count hits and misses, a byte each.
const HITS: &str = "hits";
const MISSES: &str = "misses";

/// Counts a hit or a miss (appending one byte: atomic between processes).
fn count(cache: &Path, what: &str) {
    let file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(cache.join(what));
    if let Ok(mut file) = file {
        let _ = file.write_all(b".");
    }
}

/// The hits and misses of the cache under `work` so far.
pub fn hits_and_misses(work: &Path) -> (u64, u64) {
    let size =
        |name: &str| std::fs::metadata(work.join("cc-cache").join(name)).map_or(0, |m| m.len());
    (size(HITS), size(MISSES))
}

/// Runs the real compiler in this process's place.
fn exec_real(name: &str, args: Vec<OsString>) -> i32 {
    use std::os::unix::process::CommandExt;
    let Some(real) = find_real(name) else {
        return 127;
    };
    let e = Command::new(real).args(args).exec();
    eprintln!("shine-clifuzz: {e}");
    127
}

/// The compiler `name` on the `PATH` the run started with.
fn find_real(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os(REAL_PATH)?;
    std::env::split_paths(&path)
        .map(|d| d.join(name))
        .find(|p| p.is_file())
}

/// The file after `-o`.
fn output_path(args: &[String]) -> Option<PathBuf> {
    let at = args.iter().position(|a| a == "-o")?;
    args.get(at + 1).map(PathBuf::from)
}

/// What determines a compilation: the compiler, its arguments (the module's directory
/// written `@DIR@`), and the contents of the files they name.
fn key(name: &str, args: &[String], dir: &str) -> Vec<u8> {
    let mut key = format!("{name}\n").into_bytes();
    for arg in args {
        let generic_arg = if dir.is_empty() {
            arg.clone()
        } else {
            arg.replace(dir, "@DIR@")
        };
        key.extend(format!("{}:{generic_arg}\n", generic_arg.len()).into_bytes());
        let path = Path::new(arg);
        if path.is_absolute() && path.is_file() {
            let contents = std::fs::read(path).unwrap_or_default();
            key.extend(format!("{}:", contents.len()).into_bytes());
            key.extend(contents);
            key.push(b'\n');
        }
    }
    key
}

/// `bytes` with the module's directory written `@DIR@`.
fn generic(bytes: &[u8], dir: &str) -> Vec<u8> {
    if dir.is_empty() {
        return bytes.to_vec();
    }
    String::from_utf8_lossy(bytes)
        .replace(dir, "@DIR@")
        .into_bytes()
}

/// FNV-1a: names the entry (which holds its whole key).
fn fnv(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// What the real compiler did.
#[derive(Debug, PartialEq)]
struct Entry {
    key: Vec<u8>,
    status: i32,
    stdout: Vec<u8>,
    stderr: Vec<u8>,
    /// The file written to `-o`, if any.
    output: Option<Vec<u8>>,
}

impl Entry {
    /// Does again what the compiler did, in the module's directory `dir`.
    fn replay(&self, output: &Path, dir: &str) -> i32 {
        let specific = |bytes: &[u8]| String::from_utf8_lossy(bytes).replace("@DIR@", dir);
        let _ = std::io::stdout().write_all(specific(&self.stdout).as_bytes());
        let _ = std::io::stderr().write_all(specific(&self.stderr).as_bytes());
        if let Some(bytes) = &self.output {
            let written = std::fs::write(output, bytes).and_then(|()| {
                std::fs::set_permissions(output, std::fs::Permissions::from_mode(0o755))
            });
            if let Err(e) = written {
                eprintln!("shine-clifuzz: writing {}: {e}", output.display());
                return 1;
            }
        }
        self.status
    }

    fn encode(&self) -> Vec<u8> {
        let mut out = Vec::new();
        let mut part = |bytes: &[u8]| {
            out.extend((bytes.len() as u64).to_le_bytes());
            out.extend(bytes);
        };
        part(&self.key);
        part(&self.status.to_le_bytes());
        part(&self.stdout);
        part(&self.stderr);
        match &self.output {
            Some(bytes) => {
                part(b"1");
                part(bytes);
            }
            None => part(b"0"),
        }
        out
    }

    fn decode(mut bytes: &[u8]) -> Option<Entry> {
        let mut part = || -> Option<Vec<u8>> {
            let len = u64::from_le_bytes(bytes.get(..8)?.try_into().ok()?) as usize;
            let value = bytes.get(8..8usize.checked_add(len)?)?.to_vec();
            bytes = &bytes[8 + len..];
            Some(value)
        };
        let key = part()?;
        let status = i32::from_le_bytes(part()?.try_into().ok()?);
        let stdout = part()?;
        let stderr = part()?;
        let output = match part()?.as_slice() {
            b"1" => Some(part()?),
            _ => None,
        };
        Some(Entry {
            key,
            status,
            stdout,
            stderr,
            output,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_round_trip() {
        for output in [None, Some(b"\x7fELF".to_vec())] {
            let entry = Entry {
                key: b"gcc\n2:-c\n".to_vec(),
                status: 1,
                stdout: Vec::new(),
                stderr: b"@DIR@/module.c:1:1: error".to_vec(),
                output,
            };
            assert_eq!(Entry::decode(&entry.encode()), Some(entry));
        }
        assert_eq!(Entry::decode(b"\x05\0\0"), None);
    }

    #[test]
    fn the_key_names_the_module_directory_generically_and_holds_the_sources() {
        let dir = std::env::temp_dir().join(format!("clifuzz-cc-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let source = dir.join("module.c");
        std::fs::write(&source, "int x;").unwrap();
        let d = dir.to_string_lossy().into_owned();
        let args = |out: &str| {
            vec![
                "-O2".to_string(),
                "-o".into(),
                format!("{d}/{out}"),
                format!("{d}/module.c"),
            ]
        };
        let a = String::from_utf8(key("gcc", &args("module"), &d)).unwrap();
        assert!(a.contains("@DIR@/module.c") && a.contains("int x;") && !a.contains(&d));
        assert_ne!(a.as_bytes(), key("gcc", &args("other"), &d));
        std::fs::write(&source, "int y;").unwrap();
        assert_ne!(a.as_bytes(), key("gcc", &args("module"), &d));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
