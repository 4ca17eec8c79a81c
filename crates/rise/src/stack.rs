//! Deep recursion on a thread of its own.
//!
//! The passes over programs (type inference, evaluation) recurse over the
//! expression tree. The parser bounds the depth of what it builds, and these
//! passes run on a thread with a large stack, so that every accepted program is
//! processed without exhausting the stack of the caller's thread.

/// The stack size of the worker thread (address space only; untouched pages cost nothing).
pub const STACK_SIZE: usize = 1 << 29;

/// Runs `f` on a thread with a [`STACK_SIZE`] stack and returns its result;
/// `failed` builds the error when the thread cannot start or panics.
pub(crate) fn on_big_stack<T: Send, E: Send>(
    name: &str,
    f: impl FnOnce() -> Result<T, E> + Send,
    failed: impl Fn(String) -> E,
) -> Result<T, E> {
    std::thread::scope(|s| {
        let handle = std::thread::Builder::new()
            .name(name.into())
            .stack_size(STACK_SIZE)
            .spawn_scoped(s, f)
            .map_err(|e| failed(format!("cannot start a thread for {name}: {e}")))?;
        handle
            .join()
            .unwrap_or_else(|_| Err(failed(format!("internal error: {name} panicked"))))
    })
}
