//! The settings the library's errors name, spelled as the command line's flags (issue 29):
//! the library says `RunOptions::cflags` or a size in `nats`, the command line `--cflags` or
//! `--nat n=V`.

mod support;

const EXAMPLES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples");

/// `shine ARGS` in the examples' directory: whether it succeeded, and its output.
fn shine(args: &[&str]) -> (bool, String) {
    let (out, text) = support::shine_in(std::path::Path::new(EXAMPLES), args);
    (out.status.success(), text)
}

#[test]
fn unbalanced_cflags_name_the_flag() {
    let (ok, text) = shine(&[
        "run", "dot.rise", "--def", "dot", "--target", "c", "--nat", "n=8", "--random", "1",
        "--cflags", "'-O2",
    ]);
    assert!(!ok, "{text}");
    assert!(
        text.contains("error: --cflags `'-O2`: unbalanced quotes"),
        "{text}"
    );
    assert!(!text.contains("RunOptions"), "{text}");
}

#[test]
fn sanitizers_on_gpu_code_name_the_flag() {
    let (ok, text) = shine(&[
        "run",
        "dot.rise",
        "--def",
        "dot",
        "--target",
        "opencl",
        "--nat",
        "n=8",
        "--random",
        "1",
        "--sanitize",
    ]);
    assert!(!ok, "{text}");
    assert!(
        text.contains("error: --sanitize builds C code with ASan/UBSan"),
        "{text}"
    );
}

#[test]
fn a_missing_size_names_the_flag() {
    let (ok, text) = shine(&["run", "dot.rise", "--def", "dot", "--random", "1"]);
    assert!(!ok, "{text}");
    assert!(
        text.contains("--random needs every size: give `--nat n=V`"),
        "{text}"
    );
    assert!(!text.contains("nats"), "{text}");
}

#[test]
fn a_missing_compiler_of_foreign_functions_names_the_flag() {
    let (ok, text) = shine(&[
        "eval",
        "foreign.rise",
        "--def",
        "gcdAll",
        "--nat",
        "n=4",
        "--random",
        "1",
        "--cc",
        "/nonexistent/cc",
    ]);
    assert!(!ok, "{text}");
    assert!(
        text.contains("the C compiler `/nonexistent/cc` was not found"),
        "{text}"
    );
    assert!(
        text.contains("note: choose another C compiler with --cc"),
        "{text}"
    );
}
