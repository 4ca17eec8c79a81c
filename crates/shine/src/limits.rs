//! Resource limits of a run: the memory it may ask for is checked against what
//! this process can get before anything is allocated, and input files are read with a bound.

use crate::Error;

/// The bytes a run holds per element of its inputs and result: the interpreter's scalars
/// (16 bytes), the buffer and the exchange file with the module's process.
pub const RUN_BYTES_PER_ELEMENT: u64 = 24;

/// The bytes per element when the interpreter also computes a reference (`--verify`): its
/// nested values and the comparison.
pub const VERIFY_BYTES_PER_ELEMENT: u64 = 90;

/// The largest input file read (a program, a strategy): far beyond any real one, small enough
/// that `/dev/zero` or a mistaken path ends quickly.
pub const MAX_SOURCE_BYTES: u64 = 64 << 20;

/// The number of elements of `shape`, checked to fit in memory at `per_element` bytes each
/// (`what` names the array in the message).
pub fn elements(what: &str, shape: &[usize], per_element: u64) -> Result<usize, Error> {
    let count = shape
        .iter()
        .try_fold(1usize, |acc, &n| acc.checked_mul(n))
        .ok_or_else(|| {
            let dims: Vec<String> = shape.iter().map(usize::to_string).collect();
            Error::from(format!(
                "{what} of shape [{}] has more elements than this machine can address",
                dims.join(", ")
            ))
        })?;
    fits_in_memory(what, count as u64, per_element)?;
    Ok(count)
}

/// Checks that `count` elements at `per_element` bytes fit in the memory this process can get.
pub fn fits_in_memory(what: &str, count: u64, per_element: u64) -> Result<(), Error> {
    let need = count.saturating_mul(per_element);
    let Some(available) = available_memory() else {
        return Ok(());
    };
    if need <= available {
        return Ok(());
    }
    Err(Error::from(format!(
        "{what} needs about {} ({count} elements at about {per_element} bytes each), \
         but only {} of memory is available to shine",
        human(need),
        human(available)
    )))
}

/// The memory this process can still allocate: the smaller of the system's available memory
/// and what its address-space limit (`ulimit -v`) leaves; `None` when neither is known.
#[allow(unsafe_code)]
pub fn available_memory() -> Option<u64> {
    let meminfo = std::fs::read_to_string("/proc/meminfo").ok();
    let system = meminfo.as_deref().and_then(|text| {
        let line = text.lines().find(|l| l.starts_with("MemAvailable:"))?;
        let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
        Some(kib.saturating_mul(1024))
    });
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: `getrlimit` writes only the struct it is given, which lives on this stack.
    let ok = unsafe { libc::getrlimit(libc::RLIMIT_AS, &mut limit) } == 0;
    let address_space = (ok && limit.rlim_cur != libc::RLIM_INFINITY).then(|| {
        let used = std::fs::read_to_string("/proc/self/statm")
            .ok()
            .and_then(|s| s.split_whitespace().next()?.parse::<u64>().ok())
            .map_or(0, |pages| pages.saturating_mul(4096));
        limit.rlim_cur.saturating_sub(used)
    });
    match (system, address_space) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

/// Reads a text file of at most [`MAX_SOURCE_BYTES`].
pub fn read_source(path: &std::path::Path) -> Result<String, Error> {
    use std::io::Read;
    let cannot = |e: std::io::Error| Error::from(format!("cannot read `{}`: {e}", path.display()));
    let file = std::fs::File::open(path).map_err(cannot)?;
    let mut bytes = Vec::new();
    file.take(MAX_SOURCE_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(cannot)?;
    if bytes.len() as u64 > MAX_SOURCE_BYTES {
        return Err(Error::from(format!(
            "`{}` is larger than {}; it is not a program or a strategy",
            path.display(),
            human(MAX_SOURCE_BYTES)
        )));
    }
    String::from_utf8(bytes).map_err(|e| {
        Error::from(format!(
            "cannot read `{}`: not UTF-8 text (at byte {})",
            path.display(),
            e.utf8_error().valid_up_to()
        ))
    })
}

/// A byte count for people: `1.5 GiB`.
fn human(bytes: u64) -> String {
    let units = ["bytes", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"];
    let mut value = bytes as f64;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < units.len() {
        value /= 1024.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{bytes} bytes")
    } else {
        format!("{value:.1} {}", units[unit])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_beyond_memory_are_refused_before_allocating() {
        let err = elements("the input", &[usize::MAX, 2], 4).unwrap_err();
        assert!(err.to_string().contains("more elements than"), "{err}");
        let err = elements("the input", &[1 << 60], 24).unwrap_err();
        assert!(err.to_string().contains("the input needs about"), "{err}");
        assert_eq!(elements("the input", &[3, 4], 24).unwrap(), 12);
    }

    #[test]
    fn human_sizes() {
        assert_eq!(human(12), "12 bytes");
        assert_eq!(human(3 << 29), "1.5 GiB");
    }

    #[test]
    fn endless_files_are_read_with_a_bound() {
        let err = read_source(std::path::Path::new("/dev/zero")).unwrap_err();
        assert!(err.to_string().contains("larger than 64.0 MiB"), "{err}");
    }
}
