//! The on-disk cache of compiled kernels: `$SHINE_CACHE_DIR`, or `~/.cache/shine`.
//!
//! An entry is a shared library named by the hash of what it is built from: the generated
//! code, its entry point, the target, the compiler and its flags, the compiler's identity
//! (`cc --version`, asked once per process) and the package's version. Beside it, a checksum
//! file holds the library's length and hash. An entry is written under a temporary name and
//! renamed into place (the checksum last), so that two processes building the same kernel at
//! once both succeed and a reader sees a whole entry or none; an entry whose checksum does
//! not match (a truncated file) or that fails to load is reported and rebuilt.

use runtime::{CompilerConfig, SharedLibrary};
use sha2::{Digest, Sha256};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

/// A library from the cache, with the warnings to show (a corrupted entry rebuilt).
pub struct Cached {
    /// The loaded library.
    pub library: Arc<SharedLibrary>,
    /// What went wrong on the way and was repaired.
    pub warnings: Vec<String>,
}

/// The cache's directory.
pub fn dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("SHINE_CACHE_DIR").filter(|d| !d.is_empty()) {
        return PathBuf::from(dir);
    }
    let home = std::env::var_os("HOME").map_or_else(std::env::temp_dir, PathBuf::from);
    home.join(".cache").join("shine")
}

/// The library of `source` (entry point `entry`) built with `config`: from the cache, or
/// built and stored there. Without a usable cache directory, built in a temporary one.
pub fn library(
    source: &str,
    entry: &str,
    target: &str,
    config: &CompilerConfig,
) -> Result<Cached, runtime::RuntimeError> {
    let dir = dir();
    let mut warnings = Vec::new();
    if let Err(e) = std::fs::create_dir_all(&dir) {
        warnings.push(format!(
            "the kernel cache {} cannot be created ({e}); the kernel is built without it",
            dir.display()
        ));
        let library = Arc::new(SharedLibrary::compile(source, entry, config)?);
        return Ok(Cached { library, warnings });
    }
    let key = key(source, entry, target, config);
    let entry_path = dir.join(format!("{key}.so"));
    let sum_path = dir.join(format!("{key}.sum"));
    match load(&entry_path, &sum_path, entry) {
        Ok(Some(library)) => return Ok(Cached { library, warnings }),
        Ok(None) => {}
        Err(why) => warnings.push(format!(
            "the kernel cache entry {} is corrupted ({why}); it is rebuilt",
            entry_path.display()
        )),
    }
    store(source, config, &entry_path, &sum_path)?;
    let library = Arc::new(SharedLibrary::load(&entry_path, entry)?);
    Ok(Cached { library, warnings })
}

/// The entry at `path` if it is whole (its checksum matches) and loads; `None` when there is
/// none (or its checksum is not written yet); an error saying why a present entry is bad.
fn load(path: &Path, sum_path: &Path, entry: &str) -> Result<Option<Arc<SharedLibrary>>, String> {
    let (Ok(bytes), Ok(sum)) = (std::fs::read(path), std::fs::read_to_string(sum_path)) else {
        return Ok(None);
    };
    if sum.trim() != checksum(&bytes) {
        return Err("its checksum does not match: a truncated or altered file".into());
    }
    SharedLibrary::load(path, entry)
        .map(|l| Some(Arc::new(l)))
        .map_err(|e| e.to_string())
}

/// Builds the entry under a temporary name and renames it into place, then its checksum.
fn store(
    source: &str,
    config: &CompilerConfig,
    path: &Path,
    sum_path: &Path,
) -> Result<(), runtime::RuntimeError> {
    let io = |what: &str, p: &Path| {
        let context = format!("{what} {}", p.display());
        move |source| runtime::RuntimeError::Io { context, source }
    };
    let unique = format!(
        "{}.{}",
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos())
    );
    let temporary = path.with_extension(format!("{unique}.tmp.so"));
    let built = SharedLibrary::build(source, config, &temporary).and_then(|()| {
        let bytes = std::fs::read(&temporary).map_err(io("reading", &temporary))?;
        std::fs::rename(&temporary, path).map_err(io("renaming into", path))?;
        // the checksum last: an entry without it (or with another) is rebuilt
        let sum = checksum(&bytes);
        shine::files::write_whole_with(sum_path, |file| {
            std::io::Write::write_all(file, sum.as_bytes())
        })
        .map_err(io("writing", sum_path))
    });
    if built.is_err() {
        let _ = std::fs::remove_file(&temporary);
    }
    built
}

/// The checksum of an entry's bytes: its length and SHA-256.
fn checksum(bytes: &[u8]) -> String {
    format!("{} {}", bytes.len(), hex(&Sha256::digest(bytes)))
}

/// The key of a kernel: the hash of everything its library depends on.
fn key(source: &str, entry: &str, target: &str, config: &CompilerConfig) -> String {
    let mut hash = Sha256::new();
    for part in [
        concat!("shine-python ", env!("CARGO_PKG_VERSION")),
        target,
        entry,
        &config.compiler,
        &config.flags.join("\u{0}"),
        &compiler_identity(&config.compiler),
        source,
    ] {
        hash.update(part.len().to_le_bytes());
        hash.update(part.as_bytes());
    }
    hex(&hash.finalize())[..32].to_string()
}

/// What `cc --version` prints (asked once per compiler and process), or why it failed.
fn compiler_identity(cc: &str) -> String {
    static KNOWN: OnceLock<Mutex<HashMap<String, String>>> = OnceLock::new();
    let known = KNOWN.get_or_init(Default::default);
    if let Some(id) = known.lock().ok().and_then(|k| k.get(cc).cloned()) {
        return id;
    }
    let id = match std::process::Command::new(cc).arg("--version").output() {
        Ok(out) => String::from_utf8_lossy(&out.stdout).into_owned(),
        Err(e) => format!("unavailable: {e}"),
    };
    if let Ok(mut k) = known.lock() {
        k.insert(cc.to_string(), id.clone());
    }
    id
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// What the front end produced for an in-process kernel, enough to load and call it without
/// running the front end again: the second process compiling a kernel skips parsing,
/// rewriting and code generation (milliseconds) as well as the C compiler.
#[derive(Clone, Debug, PartialEq)]
pub struct FrontEnd {
    /// The definition's name.
    pub def: String,
    /// The C entry point.
    pub entry: String,
    /// The size parameters of the code, in the order the entry point takes them.
    pub sizes: Vec<String>,
    /// The definition's type scheme, as RISE prints (and parses) it.
    pub scheme: String,
    /// The generated C code.
    pub source: String,
}

/// The first line of a front-end entry, before the checksum of the rest.
const FRONT_END_MAGIC: &str = "shine-front-end";

/// The key of a front end's result: the hash of what it is computed from (the program and
/// strategy texts, the definition, the target, the options), and the package's version.
pub fn front_end_key(parts: &[&str]) -> String {
    let mut hash = Sha256::new();
    hash.update(concat!(
        "shine-python front end ",
        env!("CARGO_PKG_VERSION")
    ));
    for part in parts {
        hash.update(part.len().to_le_bytes());
        hash.update(part.as_bytes());
    }
    hex(&hash.finalize())[..32].to_string()
}

/// The front end's result stored under `key`; `None` when there is none, and a warning when
/// the entry is corrupted (it is then rewritten by the caller).
pub fn read_front_end(key: &str, warnings: &mut Vec<String>) -> Option<FrontEnd> {
    let path = dir().join(format!("{key}.front"));
    let text = std::fs::read_to_string(&path).ok()?;
    let parsed = text
        .split_once('\n')
        .filter(|(head, body)| *head == format!("{FRONT_END_MAGIC} {}", checksum(body.as_bytes())))
        .and_then(|(_, body)| decode(body));
    if parsed.is_none() {
        warnings.push(format!(
            "the kernel cache entry {} is corrupted (its checksum does not match); it is rebuilt",
            path.display()
        ));
    }
    parsed
}

/// Stores the front end's result under `key` (best effort: a cache that cannot be written
/// only costs time).
pub fn write_front_end(key: &str, front: &FrontEnd) {
    let one_line = |s: &str| !s.contains('\n');
    if !(one_line(&front.scheme) && one_line(&front.def) && one_line(&front.entry)) {
        return;
    }
    let body = format!(
        "def {}\nentry {}\nsizes {}\ntype {}\nsource\n{}",
        front.def,
        front.entry,
        front.sizes.join(" "),
        front.scheme,
        front.source
    );
    let text = format!("{FRONT_END_MAGIC} {}\n{body}", checksum(body.as_bytes()));
    // best effort: a front end not cached is computed again next time
    let _ = shine::files::write_whole(&dir().join(format!("{key}.front")), text.as_bytes());
}

/// The front end's result of an entry's body (after its checksum line).
fn decode(body: &str) -> Option<FrontEnd> {
    let (head, source) = body.split_once("\nsource\n")?;
    let mut lines = head.lines();
    let mut field = |name: &str| {
        let line = lines.next()?;
        Some(
            line.strip_prefix(name)?
                .strip_prefix(' ')
                .unwrap_or("")
                .to_string(),
        )
    };
    Some(FrontEnd {
        def: field("def")?,
        entry: field("entry")?,
        sizes: field("sizes")?
            .split_whitespace()
            .map(String::from)
            .collect(),
        scheme: field("type")?,
        source: source.to_string(),
    })
}
