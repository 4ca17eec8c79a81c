//! Compiling a C module with its driver into an executable, and running it as a child process.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::exchange::Exchange;

use crate::{Buffer, RuntimeError};

/// The C driver of every module; `@ENTRY@` stands for the entry point's name.
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
    /// Sanitizers to instrument the module with.
    pub sanitize: Vec<Sanitizer>,
    /// Where to keep each module's directory (source, library, driver); `None`: a temporary
    /// directory, removed with the module (also when compilation fails).
    pub keep_dir: Option<PathBuf>,
}

impl Default for CompilerConfig {
    fn default() -> CompilerConfig {
        CompilerConfig {
            compiler: "gcc".into(),
            flags: ["-O3", "-march=native", "-fopenmp"]
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
        let source =
            "#include <stdint.h>\nint probe(void *const *b, const int64_t *s) { return 0; }\n";
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

/// A compiled module, ready to run: an executable around the driver (`driver.c`), run as a
/// child process for every call, so that a fault of the generated code (a signal, a sanitizer
/// report, `abort`) ends as a [`RuntimeError`] instead of ending this process, and the module's
/// floating-point state (`-ffast-math` sets flush-to-zero) never reaches this process.
pub struct Module {
    executable: PathBuf,
    sanitized: bool,
    entry: String,
    dir: Dir,
}

/// A module's directory: kept, or temporary (private, registered for removal on signals, and
/// removed with the module).
enum Dir {
    Temporary(crate::cleanup::TempDir),
    Kept(PathBuf),
}

impl Dir {
    /// A fresh directory: under `keep` and kept, or temporary.
    fn new(keep: Option<&Path>) -> Result<Dir, RuntimeError> {
        let Some(keep) = keep else {
            return Ok(Dir::Temporary(crate::cleanup::TempDir::new()?));
        };
        let context = format!("creating a directory in {}", keep.display());
        std::fs::create_dir_all(keep).map_err(RuntimeError::io(context.clone()))?;
        let dir = crate::cleanup::private_builder()
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
    /// Compiles C `source` that defines `int entry(void *const *buffers, const int64_t
    /// *sizes)` with the driver into an executable (instrumented with `config`'s sanitizers).
    pub fn compile(
        source: &str,
        entry: &str,
        config: &CompilerConfig,
    ) -> Result<Module, RuntimeError> {
        crate::cc::check_identifier(entry)?;
        let dir = Dir::new(config.keep_dir.as_deref())?;
        let write = |name: &str, text: &str| {
            let path = dir.path().join(name);
            std::fs::write(&path, text)
                .map_err(RuntimeError::io(format!("writing {}", path.display())))?;
            Ok::<_, RuntimeError>(path)
        };
        let source_path = write("module.c", source)?;
        let driver = write("driver.c", &DRIVER.replace("@ENTRY@", entry))?;
        let mut args = config.flags.clone();
        let sanitized = !config.sanitize.is_empty();
        if sanitized {
            let names: Vec<_> = config.sanitize.iter().map(|s| s.flag_name()).collect();
            args.extend(
                [
                    "-g",
                    "-fno-omit-frame-pointer",
                    "-fno-sanitize-recover=all",
                    "-DSHINE_EXACT_BUFFERS",
                ]
                .map(String::from),
            );
            args.push(format!("-fsanitize={}", names.join(",")));
        }
        let executable = dir.path().join("module");
        let mut command = Command::new(&config.compiler);
        command
            // the compiler's own temporary files go with the module's directory, even when
            // the compiler is killed (a signal, the parent ending) before it removes them
            .env("TMPDIR", dir.path())
            .args(&args)
            .arg("-o")
            .arg(&executable)
            .arg(&source_path)
            .arg(&driver)
            .arg("-lm");
        if let Err(mut error) = crate::cc::run(&mut command, &config.compiler) {
            // a temporary directory goes with everything in it (nothing is left behind);
            // a kept one keeps the source for the user to inspect
            if let (
                RuntimeError::CompilationFailed {
                    source_path: kept, ..
                },
                Dir::Kept(_),
            ) = (&mut error, &dir)
            {
                *kept = Some(source_path);
            }
            return Err(error);
        }
        Ok(Module {
            executable,
            sanitized,
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

    /// Whether the module is built with sanitizers.
    pub fn is_sanitized(&self) -> bool {
        self.sanitized
    }

    /// Runs the entry point once: `output` is `buffers[0]`, `inputs` are `buffers[1..]`.
    ///
    /// The code runs in a child process: a crash ends as [`RuntimeError::ProgramKilled`] or
    /// [`RuntimeError::ProgramFailed`]; build with a [`Sanitizer`] to check that it stays
    /// within its buffers.
    pub fn run(
        &self,
        output: &mut Buffer,
        inputs: &[&Buffer],
        sizes: &[i64],
    ) -> Result<(), RuntimeError> {
        self.run_outputs(std::slice::from_mut(output), inputs, sizes)
    }

    /// Runs the entry point once on several output buffers: `outputs` are `buffers[0..k]`,
    /// `inputs` are `buffers[k..]` (a result that is a tuple of arrays has one buffer per
    /// array). Otherwise as [`Module::run`].
    pub fn run_outputs(
        &self,
        outputs: &mut [Buffer],
        inputs: &[&Buffer],
        sizes: &[i64],
    ) -> Result<(), RuntimeError> {
        self.execute(outputs, inputs, sizes, 0, 1).map(drop)
    }

    /// Runs the entry point `warmup` times untimed, then `runs` times timed (each timed inside
    /// the child process); `output` holds the result of the last run.
    pub fn bench(
        &self,
        output: &mut Buffer,
        inputs: &[&Buffer],
        sizes: &[i64],
        runs: usize,
        warmup: usize,
    ) -> Result<Timing, RuntimeError> {
        self.bench_outputs(std::slice::from_mut(output), inputs, sizes, runs, warmup)
    }

    /// [`Module::bench`] on several output buffers, as [`Module::run_outputs`] takes them.
    pub fn bench_outputs(
        &self,
        outputs: &mut [Buffer],
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
        if runs > MAX_RUNS || warmup > MAX_RUNS {
            return Err(RuntimeError::InvalidArgument(format!(
                "at most {MAX_RUNS} runs (and as many warm-up runs) are timed at once"
            )));
        }
        let samples = self.execute(outputs, inputs, sizes, warmup, runs)?;
        Ok(Timing::from_samples(samples).expect("at least one sample"))
    }

    /// Runs `warmup + runs` times in a child process, and returns the times of the last `runs`
    /// in milliseconds.
    fn execute(
        &self,
        outputs: &mut [Buffer],
        inputs: &[&Buffer],
        sizes: &[i64],
        warmup: usize,
        runs: usize,
    ) -> Result<Vec<f64>, RuntimeError> {
        if outputs.is_empty() {
            return Err(RuntimeError::InvalidArgument(
                "a run needs at least one output buffer".into(),
            ));
        }
        let written: Vec<&Buffer> = outputs.iter().collect();
        let exchange = Exchange::write(self.dir(), &written, inputs, sizes, warmup, runs)?;
        let mut command = Command::new(&self.executable);
        command.arg(exchange.path());
        let result = crate::cleanup::output(&mut command).map_err(RuntimeError::io(format!(
            "starting {}",
            self.executable.display()
        )))?;
        self.check_exit(&result)?;
        self.check_finished(&exchange, &result)?;
        exchange.read(outputs, runs)
    }

    /// The error of a child that exited (with success, or the status exit) without the
    /// driver finishing: code of the module called `exit` (see `driver.c`, DONE); or the
    /// entry point's non-zero status.
    fn check_finished(
        &self,
        exchange: &Exchange,
        result: &std::process::Output,
    ) -> Result<(), RuntimeError> {
        match exchange.finished()? {
            Some(0) => Ok(()),
            Some(status) => Err(RuntimeError::ProgramStatus {
                entry: self.entry.clone(),
                status: status as std::ffi::c_int,
            }),
            None => Err(RuntimeError::ExitedEarly {
                entry: self.entry.clone(),
                status: result.status.to_string(),
                stderr: String::from_utf8_lossy(&result.stderr).into_owned(),
            }),
        }
    }

    /// The error of a child that was killed or failed (other than with the status exit, which
    /// [`Module::check_finished`] reads).
    fn check_exit(&self, result: &std::process::Output) -> Result<(), RuntimeError> {
        use std::os::unix::process::ExitStatusExt;
        let entry = self.entry.clone();
        let stderr = String::from_utf8_lossy(&result.stderr).into_owned();
        if let Some(signal) = result.status.signal() {
            return Err(RuntimeError::ProgramKilled {
                entry,
                signal: crate::error::signal_name(signal),
                stderr,
            });
        }
        if result.status.success() || result.status.code() == Some(STATUS_EXIT) {
            return Ok(());
        }
        if self.sanitized {
            return Err(RuntimeError::SanitizerRunFailed {
                executable: self.executable.clone(),
                status: result.status.to_string(),
                stderr,
            });
        }
        Err(RuntimeError::ProgramFailed {
            entry,
            status: result.status.to_string(),
            stderr,
        })
    }
}

/// The most runs (timed, or warm-up) of one [`Module::bench`] call: their times are kept in the
/// exchange file (8 bytes each).
pub const MAX_RUNS: usize = 100_000_000;

/// The exit code of a driver whose entry point returned a non-zero status (it writes the
/// status in the exchange file first, see `driver.c`).
const STATUS_EXIT: i32 = 3;

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
}
