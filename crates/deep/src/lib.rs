//! Deep recursion for the whole workspace.
//!
//! The passes over programs (parsing, inference, interpretation, rewriting, translation,
//! printing) recurse on the depth of the term, and inlined definitions make terms thousands of
//! levels deep. Every entry point of such a pass wraps its work in [`run`] (or [`run_caught`]),
//! which moves it to a stack segment of [`SEGMENT`] bytes when less than [`RED_ZONE`] bytes of
//! the current stack are left, and runs it in place otherwise. So the first entry point on a
//! call path allocates one segment and the entry points it calls run on that segment: stacks
//! are never nested, no thread is started, and the segment is address space that costs memory
//! only where it is touched (a process under `ulimit -v 2000000` has room for it).

use std::panic::{catch_unwind, AssertUnwindSafe};

/// Below this many bytes of stack left, [`run`] moves to a fresh segment.
pub const RED_ZONE: usize = 64 << 20;

/// The size of the segment [`run`] moves to.
pub const SEGMENT: usize = 768 << 20;

/// Runs `f` with at least [`RED_ZONE`] bytes of stack: in place when the current stack has
/// them, otherwise on a fresh segment of [`SEGMENT`] bytes. A panic in `f` propagates.
pub fn run<T>(f: impl FnOnce() -> T) -> T {
    stacker::maybe_grow(RED_ZONE, SEGMENT, f)
}

/// [`run`], with a panic in `f` turned into an error that names `what` ("the interpreter",
/// "rewriting"): `internal error: {what} panicked: {message}`.
pub fn run_caught<T>(what: &str, f: impl FnOnce() -> T) -> Result<T, String> {
    run(|| catch_unwind(AssertUnwindSafe(f))).map_err(|panic| {
        let message = panic
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| panic.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "no message".into());
        format!("internal error: {what} panicked: {message}")
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Recursion that needs about `depth` KiB of stack: far more than a test thread's 2 MiB.
    fn deep_sum(depth: u64) -> u64 {
        let pad = [depth as u8; 1024];
        if depth == 0 {
            0
        } else {
            std::hint::black_box(pad)[0] as u64 % 2 + deep_sum(depth - 1) - (depth % 2) + 1
        }
    }

    #[test]
    fn recursion_deeper_than_the_thread_stack_runs() {
        // 200,000 frames of over 1 KiB: about 200 MiB of stack
        assert_eq!(run(|| deep_sum(200_000)), 200_000);
    }

    #[test]
    fn nested_entry_points_run_on_the_first_segment() {
        let outer = run(|| {
            let here = stacker::remaining_stack().unwrap_or(0);
            let inner = run(|| stacker::remaining_stack().unwrap_or(0));
            (here, inner)
        });
        // the inner call did not move to a segment of its own: it has less stack left than the
        // outer one had, on the same segment
        assert!(outer.0 > RED_ZONE && outer.1 < outer.0, "{outer:?}");
    }

    #[test]
    fn a_panic_becomes_an_error_naming_the_pass() {
        let r: Result<(), String> = run_caught("the test pass", || panic!("boom"));
        assert_eq!(
            r.unwrap_err(),
            "internal error: the test pass panicked: boom"
        );
    }
}
