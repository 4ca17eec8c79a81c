//! Compiling a C module into a shared library and calling its entry point in this process.
//!
//! [`Module`](crate::Module) runs every call in a child process (milliseconds a call: a
//! process, an exchange file); a [`SharedLibrary`] is the same C module built with `-shared
//! -fPIC`, loaded with `dlopen` and called directly (microseconds a call). What the child
//! process protects from is then the caller's to rule out: the library runs in this process,
//! so a crash of the generated code ends it, and the library's floating-point state is this
//! process's (build it without `-ffast-math`, which links `crtfastmath.o` and sets
//! flush-to-zero for the whole process), and the buffers must be as large as the sizes say
//! ([`SharedLibrary::call`] is `unsafe`). A status the entry point returns is the same
//! [`RuntimeError::ProgramStatus`] the child-process path gives.
//!
//! A library is never unloaded (OpenMP's worker threads may still be in its code). `dlopen` of
//! a path already loaded returns the library loaded first, whatever the file
//! holds now: [`SharedLibrary::compile`] builds each library under a name of its own (a fresh
//! directory), and a caller that keeps libraries ([`SharedLibrary::build`]) names each file by
//! its contents.

use std::ffi::{c_int, c_void};
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::{Buffer, CompilerConfig, RuntimeError};

/// The entry point of a generated module: `int entry(void *const *buffers, const int64_t
/// *sizes)`.
type EntryFn = unsafe extern "C" fn(*const *mut c_void, *const i64) -> c_int;

/// A C module loaded into this process: its entry point, called directly.
pub struct SharedLibrary {
    entry_fn: EntryFn,
    entry: String,
    path: PathBuf,
    /// The library, never closed: unloading OpenMP code whose worker threads are still alive
    /// crashes the process, so a library stays loaded until the process ends (the same code
    /// loaded again from the same path shares the mapping).
    _library: std::mem::ManuallyDrop<libloading::Library>,
    /// The temporary directory of a library built by [`SharedLibrary::compile`].
    _dir: Option<crate::cleanup::TempDir>,
}

impl SharedLibrary {
    /// Compiles C `source` that defines `int entry(void *const *buffers, const int64_t
    /// *sizes)` into a shared library in a fresh temporary directory and loads it.
    pub fn compile(
        source: &str,
        entry: &str,
        config: &CompilerConfig,
    ) -> Result<SharedLibrary, RuntimeError> {
        crate::cc::check_identifier(entry)?;
        let dir = crate::cleanup::TempDir::new()?;
        let path = dir.path().join("module.so");
        build_in(source, config, &path, dir.path(), false)?;
        let mut library = SharedLibrary::load(&path, entry)?;
        library._dir = Some(dir);
        Ok(library)
    }

    /// Compiles C `source` into the shared library `output` (the compiler's temporary files
    /// and the source go next to it, and the source is removed after). The caller names
    /// `output` so that no library of other contents was loaded from that path before.
    pub fn build(source: &str, config: &CompilerConfig, output: &Path) -> Result<(), RuntimeError> {
        let dir = output.parent().unwrap_or(Path::new("."));
        build_in(source, config, output, dir, true)
    }

    /// Loads the shared library at `path` and finds its entry point `entry`.
    pub fn load(path: &Path, entry: &str) -> Result<SharedLibrary, RuntimeError> {
        crate::cc::check_identifier(entry)?;
        let shown = path.display();
        check_complete(path)?;
        // SAFETY: the library is a generated module: its initialisers are the C runtime's
        // and OpenMP's, which are safe to run in this process.
        let library = unsafe { libloading::Library::new(path) }
            .map_err(|e| load_error(format!("loading the shared library {shown}"), e))?;
        // SAFETY: the generated code defines the entry point with the type `EntryFn`.
        let entry_fn: EntryFn = unsafe { library.get::<EntryFn>(entry.as_bytes()) }
            .map(|symbol| *symbol)
            .map_err(|e| load_error(format!("finding the entry point `{entry}` in {shown}"), e))?;
        Ok(SharedLibrary {
            entry_fn,
            entry: entry.to_string(),
            path: path.to_path_buf(),
            _library: std::mem::ManuallyDrop::new(library),
            _dir: None,
        })
    }

    /// The entry point's name.
    pub fn entry(&self) -> &str {
        &self.entry
    }

    /// The file the library was loaded from.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Calls the entry point once with `buffers` (the outputs, then the inputs) and `sizes`;
    /// a non-zero status is [`RuntimeError::ProgramStatus`].
    ///
    /// # Safety
    ///
    /// Each buffer must be valid for the reads and writes the code makes at these sizes: as
    /// many bytes as its array of the sizes holds, aligned for its element type, and the
    /// outputs not aliased by other buffers; `sizes` must hold every size the code reads.
    pub unsafe fn call(&self, buffers: &[*mut c_void], sizes: &[i64]) -> Result<(), RuntimeError> {
        // SAFETY: the caller's contract above.
        let status = unsafe { (self.entry_fn)(buffers.as_ptr(), sizes.as_ptr()) };
        match status {
            0 => Ok(()),
            status => Err(RuntimeError::ProgramStatus {
                entry: self.entry.clone(),
                status,
            }),
        }
    }

    /// Runs the entry point once on [`Buffer`]s: `outputs` are `buffers[0..k]`, `inputs`
    /// `buffers[k..]`, as [`Module::run_outputs`](crate::Module::run_outputs) takes them.
    ///
    /// # Safety
    ///
    /// The buffers must be as large as the code's arrays at `sizes` ([`SharedLibrary::call`]).
    pub unsafe fn run_outputs(
        &self,
        outputs: &mut [Buffer],
        inputs: &[&Buffer],
        sizes: &[i64],
    ) -> Result<(), RuntimeError> {
        if outputs.is_empty() {
            return Err(RuntimeError::InvalidArgument(
                "a run needs at least one output buffer".into(),
            ));
        }
        let buffers: Vec<*mut c_void> = outputs
            .iter_mut()
            .map(|b| b.as_bytes_mut().as_mut_ptr().cast())
            .chain(
                inputs
                    .iter()
                    .map(|b| b.as_bytes().as_ptr().cast_mut().cast()),
            )
            .collect();
        // SAFETY: the caller's contract; the inputs are only read by generated code.
        unsafe { self.call(&buffers, sizes) }
    }
}

/// Refuses an ELF file shorter than its headers say: `dlopen` maps a truncated library and
/// the process faults (SIGBUS) on the pages past its end. Other files are left to `dlopen`.
fn check_complete(path: &Path) -> Result<(), RuntimeError> {
    let context = || format!("loading the shared library {}", path.display());
    let bytes = std::fs::read(path).map_err(RuntimeError::io(context()))?;
    match elf_extent(&bytes) {
        Some(need) if (bytes.len() as u64) < need => Err(RuntimeError::Io {
            context: context(),
            source: std::io::Error::other(format!(
                "the file is truncated ({} bytes, its headers describe {need})",
                bytes.len()
            )),
        }),
        _ => Ok(()),
    }
}

/// The bytes a little-endian ELF64 file spans by its headers: the program and section
/// header tables and every segment's contents; `None` for another kind of file.
fn elf_extent(bytes: &[u8]) -> Option<u64> {
    let u16_at = |at: usize| Some(u16::from_le_bytes(bytes.get(at..at + 2)?.try_into().ok()?));
    let u64_at = |at: usize| Some(u64::from_le_bytes(bytes.get(at..at + 8)?.try_into().ok()?));
    if bytes.get(..6)? != b"\x7fELF\x02\x01" {
        return None;
    }
    let table = |offset: u64, size: u16, count: u16| {
        offset.saturating_add(u64::from(size) * u64::from(count))
    };
    let (phoff, shoff) = (u64_at(0x20)?, u64_at(0x28)?);
    let (phentsize, phnum) = (u16_at(0x36)?, u16_at(0x38)?);
    let (shentsize, shnum) = (u16_at(0x3a)?, u16_at(0x3c)?);
    let mut extent = table(phoff, phentsize, phnum).max(table(shoff, shentsize, shnum));
    for k in 0..u64::from(phnum) {
        let header = usize::try_from(phoff + k * u64::from(phentsize)).ok()?;
        // p_offset and p_filesz; a header past the end is counted by the table's extent
        if let (Some(offset), Some(size)) = (u64_at(header + 8), u64_at(header + 32)) {
            extent = extent.max(offset.saturating_add(size));
        }
    }
    Some(extent.max(64))
}

/// The error of `dlopen` or `dlsym` while `context`.
fn load_error(context: String, e: libloading::Error) -> RuntimeError {
    RuntimeError::Io {
        context,
        source: std::io::Error::other(e),
    }
}

/// Compiles `source` into the shared library `output`, the source and the compiler's
/// temporary files in `dir`; with `remove_source`, the source is removed afterwards.
fn build_in(
    source: &str,
    config: &CompilerConfig,
    output: &Path,
    dir: &Path,
    remove_source: bool,
) -> Result<(), RuntimeError> {
    if !config.sanitize.is_empty() {
        return Err(RuntimeError::InvalidArgument(
            "a sanitized module runs as a child process (runtime::Module), not in this process"
                .into(),
        ));
    }
    let stem = output
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "module".into());
    let source_path = dir.join(format!("{stem}.c"));
    std::fs::write(&source_path, source).map_err(RuntimeError::io(format!(
        "writing {}",
        source_path.display()
    )))?;
    let mut command = Command::new(&config.compiler);
    command
        .env("TMPDIR", dir)
        .args(&config.flags)
        .args(["-shared", "-fPIC", "-o"])
        .arg(output)
        .arg(&source_path)
        .arg("-lm");
    let result = crate::cc::run(&mut command, &config.compiler);
    if remove_source {
        let _ = std::fs::remove_file(&source_path);
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn libraries_can_be_shared_between_threads() {
        fn send_sync<T: Send + Sync>() {}
        send_sync::<SharedLibrary>();
    }
}
