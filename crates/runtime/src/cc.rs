//! Running the system C compiler: one place that starts it and turns its failures into
//! [`RuntimeError`]s (for modules, in-process libraries and the foreign-function helper).

use std::process::Command;

use crate::RuntimeError;

/// Runs the C compiler `compiler` as `command`. A compiler that cannot be found is
/// [`RuntimeError::CompilerNotFound`], one that cannot start an I/O error, and one that fails
/// [`RuntimeError::CompilationFailed`] with the command line (quoted as a shell reads it) and
/// what the compiler printed on stderr.
pub(crate) fn run(command: &mut Command, compiler: &str) -> Result<(), RuntimeError> {
    let result = crate::cleanup::output(command).map_err(|source| match source.kind() {
        std::io::ErrorKind::NotFound => RuntimeError::CompilerNotFound {
            compiler: compiler.to_string(),
            source,
        },
        _ => RuntimeError::Io {
            context: format!("starting the C compiler `{compiler}`"),
            source,
        },
    })?;
    if result.status.success() {
        return Ok(());
    }
    Err(RuntimeError::CompilationFailed {
        command: command_line(command),
        stderr: String::from_utf8_lossy(&result.stderr).into_owned(),
        source_path: None,
    })
}

/// Checks that `name` (an entry point) is a C identifier.
pub(crate) fn check_identifier(name: &str) -> Result<(), RuntimeError> {
    let mut chars = name.chars();
    let identifier = chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_');
    if identifier {
        Ok(())
    } else {
        Err(RuntimeError::InvalidArgument(format!(
            "`{name}` is not a C identifier"
        )))
    }
}

/// `command` as a shell command line, each word quoted where it needs to be.
fn command_line(command: &Command) -> String {
    std::iter::once(command.get_program())
        .chain(command.get_args())
        .map(|a| quote(&a.to_string_lossy()))
        .collect::<Vec<_>>()
        .join(" ")
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
    fn arguments_are_quoted_only_where_a_shell_needs_it() {
        assert_eq!(quote("-O3"), "-O3");
        assert_eq!(quote("a b"), "'a b'");
        assert_eq!(quote("it's"), r"'it'\''s'");
    }

    #[test]
    fn entry_names_are_c_identifiers() {
        assert!(check_identifier("k_entry").is_ok());
        assert!(check_identifier("_k1").is_ok());
        assert!(check_identifier("1k").is_err());
        assert!(check_identifier("a-b").is_err());
        assert!(check_identifier("").is_err());
    }

    #[test]
    fn a_missing_compiler_is_named() {
        let mut command = Command::new("/nonexistent/cc");
        let err = run(&mut command, "/nonexistent/cc").unwrap_err();
        assert!(
            matches!(err, RuntimeError::CompilerNotFound { ref compiler, .. } if compiler == "/nonexistent/cc"),
            "{err}"
        );
    }
}
