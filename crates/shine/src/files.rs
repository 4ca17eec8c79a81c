//! Files written whole: the contents go to a temporary file in the target's directory,
//! which is then renamed over the target, so that a failed or interrupted write never
//! leaves a truncated file behind nor destroys an existing one. Every write error is
//! returned. A target that exists and is no regular file (`/dev/stdout`, a pipe) is
//! written in place: it cannot be replaced, and holds nothing to destroy.

use std::fs::File;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

/// Writes `bytes` as the whole contents of `path`; the error names the file.
pub fn write_whole(path: &Path, bytes: &[u8]) -> Result<(), String> {
    write_whole_with(path, |file| file.write_all(bytes))
        .map_err(|e| format!("cannot write `{}`: {e}", path.display()))
}

/// Writes the whole contents of `path` with `fill`, which gets the file to write
/// (positioned at its start; it may seek). On any error of `fill` or of the write the
/// target keeps what it held before.
pub fn write_whole_with<E: From<io::Error>>(
    path: &Path,
    fill: impl FnOnce(&mut File) -> Result<(), E>,
) -> Result<(), E> {
    let target = resolved(path);
    if is_special(&target) {
        let mut file = File::create(&target)?;
        fill(&mut file)?;
        return Ok(file.flush()?);
    }
    let mut temp = tempfile::Builder::new()
        .prefix(".shine-")
        .suffix(".part")
        .permissions(new_file_permissions(&target))
        .tempfile_in(directory_of(&target))?;
    fill(temp.as_file_mut())?;
    temp.as_file_mut().flush()?;
    temp.as_file().sync_all()?;
    temp.persist(&target).map_err(|e| e.error)?;
    Ok(())
}

/// Checks before a long computation that `path` can be written later: its directory
/// exists and a file can be created in it, and `path` is no directory.
pub fn check_writable(path: &Path) -> Result<(), String> {
    let cannot = |why: String| format!("cannot write `{}`: {why}", path.display());
    let target = resolved(path);
    if target.is_dir() {
        return Err(cannot("it is a directory".into()));
    }
    if is_special(&target) {
        return std::fs::OpenOptions::new()
            .write(true)
            .open(&target)
            .map(drop)
            .map_err(|e| cannot(e.to_string()));
    }
    let dir = directory_of(&target);
    if !dir.is_dir() {
        return Err(cannot(format!(
            "the directory `{}` does not exist",
            dir.display()
        )));
    }
    tempfile::Builder::new()
        .prefix(".shine-")
        .tempfile_in(&dir)
        .map(drop)
        .map_err(|e| cannot(e.to_string()))
}

/// `path` with a symbolic link at its end followed (the link stays, its target is written).
fn resolved(path: &Path) -> PathBuf {
    match std::fs::symlink_metadata(path) {
        Ok(m) if m.file_type().is_symlink() => {
            std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf())
        }
        _ => path.to_path_buf(),
    }
}

/// Whether `path` exists and is neither a regular file nor a directory.
fn is_special(path: &Path) -> bool {
    std::fs::metadata(path).is_ok_and(|m| !m.is_file() && !m.is_dir())
}

/// The directory `path` is in (`.` for a bare file name).
fn directory_of(path: &Path) -> PathBuf {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

/// The permissions of the file written: those of the file it replaces, else those of a
/// new file (read and write for all, less the umask, which `open` applies).
fn new_file_permissions(target: &Path) -> std::fs::Permissions {
    use std::os::unix::fs::PermissionsExt;
    match std::fs::metadata(target) {
        Ok(m) => m.permissions(),
        Err(_) => std::fs::Permissions::from_mode(0o666),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failed_write_keeps_the_old_contents_and_leaves_no_temporary_file() {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let path = dir.path().join("out.txt");
        write_whole(&path, b"old").expect("first write");
        let failed: Result<(), io::Error> = write_whole_with(&path, |f| {
            f.write_all(b"half")?;
            Err(io::Error::other("interrupted"))
        });
        assert!(failed.is_err());
        assert_eq!(std::fs::read(&path).expect("read"), b"old");
        let names: Vec<_> = std::fs::read_dir(dir.path())
            .expect("list")
            .map(|e| e.expect("entry").file_name())
            .collect();
        assert_eq!(names.len(), 1, "{names:?}");
        write_whole(&path, b"new").expect("second write");
        assert_eq!(std::fs::read(&path).expect("read"), b"new");
    }

    #[test]
    fn write_errors_and_unwritable_places_are_errors() {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let file = dir.path().join("plain");
        std::fs::write(&file, "x").expect("write");
        let under_file = file.join("out.txt");
        assert!(write_whole(&under_file, b"x").is_err());
        assert!(check_writable(&under_file).is_err());
        assert!(check_writable(dir.path()).is_err());
        assert!(check_writable(&dir.path().join("missing/out.txt")).is_err());
        assert!(check_writable(&dir.path().join("out.txt")).is_ok());
        if Path::new("/dev/full").exists() {
            let e = write_whole(Path::new("/dev/full"), b"x").expect_err("a full disk");
            assert!(e.contains("/dev/full"), "{e}");
        }
    }
}
