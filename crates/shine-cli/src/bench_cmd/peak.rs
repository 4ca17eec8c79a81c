//! The machine's peak single-precision FMA throughput, measured in the same run as the cases:
//! the built-in C kernel `peak.c` (independent chains of vector FMAs on every OpenMP thread,
//! one width per vector extension the compiler targets with `-march=native`: AVX-512, AVX2),
//! compiled once with `--cc` and run at each thread count. Cases that give their floating-point
//! operations (`"flops"` in `cpu_cases.json`, e.g. `2*m*n*k`) report shine's fraction of it.

use serde::Serialize;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The kernel's C text.
const KERNEL: &str = include_str!("peak.c");

/// The peak of one vector width at one thread count.
#[derive(Clone, Debug, Serialize)]
pub(super) struct Peak {
    /// `avx512` or `avx2`.
    pub(super) isa: String,
    /// `float` lanes per vector.
    pub(super) lanes: u32,
    /// Billions of floating-point operations per second (an FMA counts two).
    pub(super) gflops: f64,
}

/// Compiles the kernel in `dir` with `cc -O3 -march=native -fopenmp`; returns the program.
pub(super) fn build(dir: &Path, cc: &str) -> Result<PathBuf, String> {
    let source = dir.join("peak.c");
    let exe = dir.join("peak");
    std::fs::write(&source, KERNEL).map_err(|e| format!("cannot write the peak kernel: {e}"))?;
    let out = Command::new(cc)
        .args(["-O3", "-march=native", "-fopenmp"])
        .arg(&source)
        .arg("-o")
        .arg(&exe)
        .output()
        .map_err(|e| format!("cannot run `{cc}`: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "`{cc}` cannot build the peak kernel: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    Ok(exe)
}

/// Runs the kernel at `threads` threads: one peak per vector width (none on a machine
/// without AVX2 and FMA).
pub(super) fn measure(exe: &Path, threads: usize) -> Result<Vec<Peak>, String> {
    let out = Command::new(exe)
        .arg(threads.to_string())
        .output()
        .map_err(|e| format!("cannot run the peak kernel: {e}"))?;
    if !out.status.success() {
        return Err(format!("the peak kernel failed ({})", out.status));
    }
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(parse_line)
        .collect()
}

fn parse_line(line: &str) -> Result<Peak, String> {
    let v: Value =
        serde_json::from_str(line).map_err(|e| format!("the peak kernel printed `{line}`: {e}"))?;
    let field = |k: &str| {
        v.get(k)
            .ok_or(format!("the peak kernel printed no `{k}`: `{line}`"))
    };
    Ok(Peak {
        isa: field("isa")?.as_str().unwrap_or("?").to_string(),
        lanes: field("lanes")?.as_u64().unwrap_or(0) as u32,
        gflops: field("gflops")?.as_f64().unwrap_or(0.0),
    })
}

/// The widest vector's peak of `peaks` (the machine's peak).
pub(super) fn widest(peaks: &[Peak]) -> Option<&Peak> {
    peaks.iter().max_by_key(|p| p.lanes)
}

/// The value of a case's `"flops"`: a product of natural numbers and size names (`2*m*n*k`),
/// sizes from `nats`; an error names what is not one.
pub(super) fn flops(formula: &str, nats: &[(String, i64)]) -> Result<f64, String> {
    formula
        .split('*')
        .map(str::trim)
        .try_fold(1.0, |product, factor| {
            let value = match factor.parse::<u64>() {
                Ok(k) => k as f64,
                Err(_) => nats
                    .iter()
                    .find(|(n, _)| n == factor)
                    .map(|(_, v)| *v as f64)
                    .ok_or(format!(
                        "`flops`: `{factor}` is neither a number nor a size"
                    ))?,
            };
            Ok(product * value)
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flops_multiplies_numbers_and_sizes() {
        let nats = vec![("m".to_string(), 10), ("n".to_string(), 20)];
        assert_eq!(flops("2*m*n", &nats), Ok(400.0));
        assert_eq!(flops(" 3 ", &nats), Ok(3.0));
        assert!(flops("2*k", &nats).unwrap_err().contains("`k`"));
    }

    #[test]
    fn lines_parse_and_the_widest_wins() {
        let peaks: Vec<Peak> = [
            r#"{"isa": "avx512", "lanes": 16, "gflops": 100.5}"#,
            r#"{"isa": "avx2", "lanes": 8, "gflops": 60.0}"#,
        ]
        .into_iter()
        .map(parse_line)
        .collect::<Result<_, _>>()
        .unwrap();
        assert_eq!(widest(&peaks).map(|p| p.gflops), Some(100.5));
        assert!(parse_line("nonsense").is_err());
    }
}
