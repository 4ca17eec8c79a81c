//! Every example program parses and type-checks.

use std::path::PathBuf;

fn examples() -> Vec<PathBuf> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../examples");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("examples directory")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "rise"))
        .collect();
    files.sort();
    files
}

#[test]
fn every_example_type_checks() {
    let mut failures = Vec::new();
    for path in examples() {
        let text = std::fs::read_to_string(&path).expect("readable");
        match rise::infer::check_source(&text) {
            Ok(p) => {
                for d in p.user_defs() {
                    println!("{}: {} : {}", path.display(), d.name, d.ty);
                }
            }
            Err(e) => failures.push(e.render(&path.display().to_string(), &text)),
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
