//! The run's cache of C compilations: `shine-clifuzz` started as `gcc` compiles through the
//! real compiler once, then replays what it did (status, messages, the executable) for the
//! same sources in another directory.

use std::path::Path;
use std::process::{Command, Output};

/// `gcc ARGS` through the cache installed under `work`.
fn gcc(work: &Path, args: &[&str]) -> Output {
    let env = clifuzz::cc_cache::install(work).unwrap();
    // the test binary is not shine-clifuzz: link the real one
    let link = work.join("bin").join("gcc");
    std::fs::remove_file(&link).unwrap();
    std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_shine-clifuzz"), &link).unwrap();
    Command::new(&link)
        .args(args)
        .envs(env.iter().map(|(k, v)| (k, v)))
        .output()
        .unwrap()
}

/// A module directory holding `module.c` with `source`; its path as text.
fn module_dir(work: &Path, name: &str, source: &str) -> String {
    let dir = work.join(name);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("module.c"), source).unwrap();
    dir.to_string_lossy().into_owned()
}

#[test]
fn compilations_are_replayed_in_another_directory() {
    let work = std::env::temp_dir().join(format!("clifuzz-cc-test-{}", std::process::id()));
    let w = work.as_path();
    let good = "#include <stdio.h>\nint main(void) { puts(\"hi\"); return 0; }\n";
    let bad = "int main(void) { return undeclared; }\n";
    let run = |dir: &str| {
        let exe = format!("{dir}/module");
        let src = format!("{dir}/module.c");
        let out = gcc(w, &["-O1", "-o", &exe, &src]);
        (out, exe)
    };
    for (i, name) in ["a", "b"].iter().enumerate() {
        let dir = module_dir(w, name, good);
        let (out, exe) = run(&dir);
        assert!(out.status.success(), "{out:?}");
        let ran = Command::new(&exe).output().unwrap();
        assert_eq!(ran.stdout, b"hi\n");
        let (hits, misses) = clifuzz::cc_cache::hits_and_misses(w);
        assert_eq!((hits, misses), (i as u64, 1));
    }
    // a failure is replayed with the messages naming this directory
    for (i, name) in ["c", "d"].iter().enumerate() {
        let dir = module_dir(w, name, bad);
        let (out, exe) = run(&dir);
        assert!(!out.status.success());
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            stderr.contains(&format!("{dir}/module.c")) && stderr.contains("undeclared"),
            "{stderr}"
        );
        assert!(!Path::new(&exe).exists());
        assert_eq!(clifuzz::cc_cache::hits_and_misses(w), (1 + i as u64, 2));
    }
    // another source is another compilation
    let dir = module_dir(w, "e", &good.replace("hi", "ho"));
    let (out, exe) = run(&dir);
    assert!(out.status.success(), "{out:?}");
    assert_eq!(Command::new(&exe).output().unwrap().stdout, b"ho\n");
    assert_eq!(clifuzz::cc_cache::hits_and_misses(w), (2, 3));
    std::fs::remove_dir_all(w).unwrap();
}
