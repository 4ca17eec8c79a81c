//! Compiling a C module, loading it (or wrapping it in a sanitized executable) and running it.

use std::ffi::c_void;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use crate::{Buffer, RuntimeError};

/// The entry point every generated module defines.
type EntryFn = unsafe extern "C" fn(*const *mut c_void, *const i64);

/// The C driver of sanitized modules; `@ENTRY@` stands for the entry point's name.
const DRIVER: &str = include_str!("driver.c");

/// A sanitizer to build a module with (which makes it run as a separate process).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Sanitizer {
    /// AddressSanitizer: out-of-bounds accesses, use after free, leaks.
    Address,
    /// UndefinedBehaviorSanitizer: overflow of signed integers, bad shifts, ...
    UndefinedBehavior,
}

impl Sanitizer {
    /// The name the compiler's `-fsanitize=` option takes.
    pub fn flag_name(self) -> &'static str {
        match self {
            Sanitizer::Address => "address",
            Sanitizer::UndefinedBehavior => "undefined",
        }
    }
}

/// How to compile modules.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CompilerConfig {
    /// The C compiler: `"gcc"`, `"clang"` or a path.
    pub compiler: String,
    /// Flags given to the compiler; the runtime adds `-shared -fPIC` (or the sanitizer flags),
    /// the output, the sources and `-lm`.
    pub flags: Vec<String>,
    /// Sanitizers; when not empty the module runs as a separate, instrumented process.
    pub sanitize: Vec<Sanitizer>,
    /// Where to keep each module's directory (source, library, driver); `None`: a temporary
    /// directory, removed with the module (and kept only when compilation fails).
    pub keep_dir: Option<PathBuf>,
}

impl Default for CompilerConfig {
    fn default() -> CompilerConfig {
        CompilerConfig {
            compiler: "gcc".into(),
            flags: ["-O3", "-march=native", "-ffast-math", "-fopenmp"]
                .map(String::from)
                .to_vec(),
            sanitize: Vec::new(),
            keep_dir: None,
        }
    }
}

impl CompilerConfig {
    /// This configuration with another compiler (`"clang"`, a path, ...).
    pub fn with_compiler(mut self, compiler: impl Into<String>) -> CompilerConfig {
        self.compiler = compiler.into();
        self
    }

    /// This configuration with `flags` instead of its flags.
    pub fn with_flags<S: Into<String>>(
        mut self,
        flags: impl IntoIterator<Item = S>,
    ) -> CompilerConfig {
        self.flags = flags.into_iter().map(Into::into).collect();
        self
    }

    /// This configuration with `flag` added to its flags.
    pub fn with_flag(mut self, flag: impl Into<String>) -> CompilerConfig {
        self.flags.push(flag.into());
        self
    }

    /// This configuration with `sanitizer` added.
    pub fn with_sanitizer(mut self, sanitizer: Sanitizer) -> CompilerConfig {
        self.sanitize.push(sanitizer);
        self
    }

    /// This configuration, keeping each module's files in a fresh directory under `dir`.
    pub fn keep_in(mut self, dir: impl Into<PathBuf>) -> CompilerConfig {
        self.keep_dir = Some(dir.into());
        self
    }

    /// Whether the compiler can build and link a program with `sanitizer` on this machine.
    pub fn supports_sanitizer(&self, sanitizer: Sanitizer) -> bool {
        let config = CompilerConfig {
            sanitize: vec![sanitizer],
            keep_dir: None,
            ..self.clone()
        };
        let source = "#include <stdint.h>\nvoid probe(void *const *b, const int64_t *s) {}\n";
        Module::compile(source, "probe", &config)
            .and_then(|m| m.run(&mut Buffer::zeroed(0), &[], &[]))
            .is_ok()
    }
}

/// The time of repeated runs of a module, in milliseconds.
#[derive(Clone, Debug, PartialEq)]
pub struct Timing {
    /// The median (of an even count: the mean of the two middle samples).
    pub median_ms: f64,
    /// The fastest run.
    pub min_ms: f64,
    /// The slowest run.
    pub max_ms: f64,
    /// The number of timed runs.
    pub runs: usize,
    /// Every timed run, in the order they ran.
    pub samples_ms: Vec<f64>,
}

impl Timing {
    /// The statistics of `samples_ms`; `None` when there are none.
    pub fn from_samples(samples_ms: Vec<f64>) -> Option<Timing> {
        let mut sorted = samples_ms.clone();
        sorted.sort_by(f64::total_cmp);
        let n = sorted.len();
        let median_ms = match n {
            0 => return None,
            _ if n % 2 == 1 => sorted[n / 2],
            _ => (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0,
        };
        Some(Timing {
            median_ms,
            min_ms: sorted[0],
            max_ms: sorted[n - 1],
            runs: n,
            samples_ms,
        })
    }
}

/// A compiled module, ready to run.
pub struct Module {
    // Declared before `dir`: the library is closed before its file is removed.
    kind: Kind,
    entry: String,
    dir: Dir,
}

enum Kind {
    /// Loaded into this process.
    Native(Loaded),
    /// A standalone executable around the driver.
    Sanitized { executable: PathBuf },
}

/// A loaded library and its entry point, kept together so that the library outlives the
/// function pointer.
struct Loaded {
    entry: EntryFn,
    _library: libloading::Library,
}

enum Dir {
    Temporary(tempfile::TempDir),
    Kept(PathBuf),
}

impl Dir {
    /// A fresh directory: under `keep` and kept, or temporary.
    fn new(keep: Option<&Path>) -> Result<Dir, RuntimeError> {
        let builder = tempfile::Builder::new().prefix("shine-module-").clone();
        let Some(keep) = keep else {
            let dir = builder.tempdir();
            return Ok(Dir::Temporary(
                dir.map_err(RuntimeError::io("creating a temporary directory"))?,
            ));
        };
        let context = format!("creating a directory in {}", keep.display());
        std::fs::create_dir_all(keep).map_err(RuntimeError::io(context.clone()))?;
        let dir = builder
            .tempdir_in(keep)
            .map_err(RuntimeError::io(context))?;
        Ok(Dir::Kept(dir.keep()))
    }

    fn path(&self) -> &Path {
        match self {
            Dir::Temporary(dir) => dir.path(),
            Dir::Kept(path) => path,
        }
    }
}

impl Module {
    /// Compiles C `source` that defines `void entry(void *const *buffers, const int64_t
    /// *sizes)`, and loads it (or, with sanitizers, builds an executable that calls it).
    pub fn compile(
        source: &str,
        entry: &str,
        config: &CompilerConfig,
    ) -> Result<Module, RuntimeError> {
        if !is_identifier(entry) {
            let message = format!("`{entry}` is not a C identifier");
            return Err(RuntimeError::InvalidArgument(message));
        }
        let dir = Dir::new(config.keep_dir.as_deref())?;
        let write = |name: &str, text: &str| {
            let path = dir.path().join(name);
            std::fs::write(&path, text)
                .map_err(RuntimeError::io(format!("writing {}", path.display())))?;
            Ok::<_, RuntimeError>(path)
        };
        let source_path = write("module.c", source)?;
        let mut args = config.flags.clone();
        let (output, sources) = if config.sanitize.is_empty() {
            args.extend(["-shared", "-fPIC"].map(String::from));
            (dir.path().join("libmodule.so"), vec![source_path.clone()])
        } else {
            let names: Vec<_> = config.sanitize.iter().map(|s| s.flag_name()).collect();
            args.extend(
                ["-g", "-fno-omit-frame-pointer", "-fno-sanitize-recover=all"].map(String::from),
            );
            args.push(format!("-fsanitize={}", names.join(",")));
            let driver = write("driver.c", &DRIVER.replace("@ENTRY@", entry))?;
            (dir.path().join("module"), vec![source_path.clone(), driver])
        };
        let mut command = Command::new(&config.compiler);
        command
            .args(&args)
            .arg("-o")
            .arg(&output)
            .args(&sources)
            .arg("-lm");
        let result = command.output();
        let result = result.map_err(|source| match source.kind() {
            std::io::ErrorKind::NotFound => {
                let compiler = config.compiler.clone();
                RuntimeError::CompilerNotFound { compiler, source }
            }
            _ => {
                let context = format!("starting the C compiler `{}`", config.compiler);
                RuntimeError::Io { context, source }
            }
        })?;
        if !result.status.success() {
            if let Dir::Temporary(tmp) = dir {
                let _ = tmp.keep(); // keep the source for the user to inspect
            }
            let program = std::iter::once(command.get_program()).chain(command.get_args());
            let command = program
                .map(|a| quote(&a.to_string_lossy()))
                .collect::<Vec<_>>()
                .join(" ");
            return Err(RuntimeError::CompilationFailed {
                command,
                stderr: String::from_utf8_lossy(&result.stderr).into_owned(),
                source_path,
            });
        }
        let kind = if config.sanitize.is_empty() {
            Kind::Native(load(&output, entry)?)
        } else {
            Kind::Sanitized { executable: output }
        };
        Ok(Module {
            kind,
            entry: entry.into(),
            dir,
        })
    }

    /// The entry point's name.
    pub fn entry(&self) -> &str {
        &self.entry
    }

    /// The directory holding the module's source and compiled files.
    pub fn dir(&self) -> &Path {
        self.dir.path()
    }

    /// Whether the module runs as a separate, sanitized process.
    pub fn is_sanitized(&self) -> bool {
        matches!(self.kind, Kind::Sanitized { .. })
    }

    /// Runs the entry point once: `output` is `buffers[0]`, `inputs` are `buffers[1..]`.
    ///
    /// The generated code is trusted to follow the contract (read and write only within the
    /// buffers' lengths); build with a [`Sanitizer`] to check that it does.
    pub fn run(
        &self,
        output: &mut Buffer,
        inputs: &[&Buffer],
        sizes: &[i64],
    ) -> Result<(), RuntimeError> {
        self.execute(output, inputs, sizes, 0, 1).map(drop)
    }

    /// Runs the entry point `warmup` times untimed, then `runs` times timed; `output` holds the
    /// result of the last run.
    pub fn bench(
        &self,
        output: &mut Buffer,
        inputs: &[&Buffer],
        sizes: &[i64],
        runs: usize,
        warmup: usize,
    ) -> Result<Timing, RuntimeError> {
        if runs == 0 {
            return Err(RuntimeError::InvalidArgument(
                "bench needs at least one run".into(),
            ));
        }
        let samples = self.execute(output, inputs, sizes, warmup, runs)?;
        Ok(Timing::from_samples(samples).expect("at least one sample"))
    }

    /// Runs `warmup + runs` times and returns the times of the last `runs` in milliseconds.
    fn execute(
        &self,
        output: &mut Buffer,
        inputs: &[&Buffer],
        sizes: &[i64],
        warmup: usize,
        runs: usize,
    ) -> Result<Vec<f64>, RuntimeError> {
        match &self.kind {
            Kind::Native(loaded) => Ok(loaded.execute(output, inputs, sizes, warmup, runs)),
            Kind::Sanitized { executable } => {
                run_driver(executable, self.dir(), output, inputs, sizes, warmup, runs)
            }
        }
    }
}

/// Runs a sanitized module's driver `executable`, passing it the buffers and sizes through a
/// request file in `dir`, and reads back the output and the times (see `driver.c`).
fn run_driver(
    executable: &Path,
    dir: &Path,
    output: &mut Buffer,
    inputs: &[&Buffer],
    sizes: &[i64],
    warmup: usize,
    runs: usize,
) -> Result<Vec<f64>, RuntimeError> {
    let mut request = Vec::new();
    request.extend((sizes.len() as u64).to_ne_bytes());
    request.extend(sizes.iter().flat_map(|s| s.to_ne_bytes()));
    request.extend((1 + inputs.len() as u64).to_ne_bytes());
    for buffer in std::iter::once(&*output).chain(inputs.iter().copied()) {
        request.extend((buffer.len() as u64).to_ne_bytes());
        request.extend(buffer.as_bytes());
    }
    let temp = |prefix: &str| {
        let context = format!("creating a file in {}", dir.display());
        tempfile::Builder::new()
            .prefix(prefix)
            .tempfile_in(dir)
            .map_err(RuntimeError::io(context))
    };
    let mut request_file = temp("request-")?;
    request_file
        .write_all(&request)
        .map_err(RuntimeError::io("writing the request"))?;
    let output_file = temp("output-")?;
    let result = Command::new(executable)
        .arg(request_file.path())
        .arg(output_file.path())
        .args([warmup.to_string(), runs.to_string()])
        .output()
        .map_err(RuntimeError::io(format!(
            "starting {}",
            executable.display()
        )))?;
    if !result.status.success() {
        return Err(RuntimeError::SanitizerRunFailed {
            executable: executable.into(),
            status: result.status.to_string(),
            stderr: String::from_utf8_lossy(&result.stderr).into_owned(),
        });
    }
    let context = format!("reading the output of {}", executable.display());
    let bytes = std::fs::read(output_file.path()).map_err(RuntimeError::io(context.clone()))?;
    let expected = output.len() + 8 * runs;
    if bytes.len() != expected {
        let message = format!("{} bytes, expected {expected}", bytes.len());
        let source = std::io::Error::new(std::io::ErrorKind::InvalidData, message);
        return Err(RuntimeError::Io { context, source });
    }
    let (result, times) = bytes.split_at(output.len());
    output.as_bytes_mut().copy_from_slice(result);
    let time = |t: &[u8]| f64::from_ne_bytes(t.try_into().expect("8 bytes"));
    Ok(times.chunks_exact(8).map(time).collect())
}

impl Loaded {
    fn execute(
        &self,
        output: &mut Buffer,
        inputs: &[&Buffer],
        sizes: &[i64],
        warmup: usize,
        runs: usize,
    ) -> Vec<f64> {
        let mut buffers: Vec<*mut c_void> = vec![output.as_mut_ptr().cast()];
        buffers.extend(
            inputs
                .iter()
                .map(|b| b.as_ptr().cast_mut().cast::<c_void>()),
        );
        let mut samples = Vec::with_capacity(runs);
        for i in 0..warmup + runs {
            let start = Instant::now();
            // SAFETY: `entry` was resolved from `_library`, which is still loaded (it lives as
            // long as `self`). The pointers come from live buffers: `output` is borrowed
            // mutably and the inputs shared for this whole call, so nothing else touches them;
            // `sizes` is a live slice. By the module contract the C code reads the inputs, writes
            // only the output, and stays within lengths consistent with `sizes`; it keeps no
            // pointer after returning.
            unsafe { (self.entry)(buffers.as_ptr(), sizes.as_ptr()) };
            if i >= warmup {
                samples.push(start.elapsed().as_secs_f64() * 1e3);
            }
        }
        samples
    }
}

/// Loads the library at `path` and resolves `entry` in it.
fn load(path: &Path, entry: &str) -> Result<Loaded, RuntimeError> {
    use libloading::os::unix::{Library, RTLD_LOCAL, RTLD_NOW};
    // SAFETY: the library is one we just compiled from a generated module; its initialisers are
    // those of the C runtime and OpenMP, which are sound to run here. RTLD_LOCAL keeps its
    // symbols out of the global namespace, so modules with the same entry name do not clash;
    // the path is unique to this module, so no older library of the same name is reused.
    let library = unsafe { Library::open(Some(path), RTLD_NOW | RTLD_LOCAL) }.map_err(|e| {
        RuntimeError::LoadFailed {
            path: path.into(),
            message: loader_message(&e),
        }
    })?;
    pin_openmp_runtime();
    let library = libloading::Library::from(library);
    // SAFETY: by the module contract the symbol `entry` is a function of type `EntryFn`. The
    // copied function pointer is stored next to the library, which outlives it.
    let entry_fn = unsafe { library.get::<EntryFn>(entry.as_bytes()) }
        .map(|symbol| *symbol)
        .map_err(|e| RuntimeError::SymbolMissing {
            entry: entry.into(),
            path: path.into(),
            message: loader_message(&e),
        })?;
    Ok(Loaded {
        entry: entry_fn,
        _library: library,
    })
}

/// Whether `name` is a C identifier.
fn is_identifier(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// The loader's error with its causes (which hold the `dlerror` text).
fn loader_message(error: &libloading::Error) -> String {
    let mut message = error.to_string();
    let mut source = std::error::Error::source(error);
    while let Some(cause) = source {
        message = format!("{message}: {cause}");
        source = cause.source();
    }
    message
}

/// OpenMP runtimes (of gcc, clang and Intel) a module may have brought into the process.
const OPENMP_RUNTIMES: [&str; 4] = ["libgomp.so.1", "libomp.so", "libomp.so.5", "libiomp5.so"];

/// Keeps a loaded OpenMP runtime in the process for good: its worker threads outlive the
/// parallel regions, so unloading it with the last module that uses it would crash them.
fn pin_openmp_runtime() {
    use libc::{RTLD_NODELETE, RTLD_NOLOAD, RTLD_NOW};
    use libloading::os::unix::Library;
    for name in OPENMP_RUNTIMES {
        // SAFETY: RTLD_NOLOAD loads nothing: it only finds a library already in the process
        // (whose initialisers have run) and marks it never to be unloaded; dropping the handle
        // then leaves it in place.
        drop(unsafe { Library::open(Some(name), RTLD_NOW | RTLD_NOLOAD | RTLD_NODELETE) });
    }
}

/// `arg`, quoted for a POSIX shell when it needs to be.
fn quote(arg: &str) -> String {
    let plain = !arg.is_empty()
        && arg
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_=./,+:@%".contains(c));
    if plain {
        arg.to_string()
    } else {
        format!("'{}'", arg.replace('\'', r"'\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timing_statistics() {
        assert_eq!(Timing::from_samples(vec![]), None);
        let odd = Timing::from_samples(vec![3.0, 1.0, 2.0]).unwrap();
        assert_eq!(
            (odd.median_ms, odd.min_ms, odd.max_ms, odd.runs),
            (2.0, 1.0, 3.0, 3)
        );
        assert_eq!(odd.samples_ms, vec![3.0, 1.0, 2.0]);
        let even = Timing::from_samples(vec![4.0, 1.0, 2.0, 10.0]).unwrap();
        assert_eq!((even.median_ms, even.min_ms, even.max_ms), (3.0, 1.0, 10.0));
    }

    #[test]
    fn modules_can_be_shared_between_threads() {
        fn send_sync<T: Send + Sync>() {}
        send_sync::<Module>();
    }

    #[test]
    fn quoting() {
        assert_eq!(quote("-O3"), "-O3");
        assert_eq!(quote("a b"), "'a b'");
        assert_eq!(quote("it's"), r"'it'\''s'");
    }
}
