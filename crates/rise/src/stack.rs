//! Deep recursion (the workspace's `deep` crate).
//!
//! The passes over programs (type inference, evaluation) recurse over the expression tree.
//! The parser bounds the depth of what it builds, and these passes run with the stack `deep`
//! provides, so that every accepted program is processed without exhausting the stack.

/// Runs `f` with a deep stack ([`deep::run`]) and returns its result; `failed` builds the
/// error when `f` panics.
pub(crate) fn on_big_stack<T, E>(
    name: &str,
    f: impl FnOnce() -> Result<T, E>,
    failed: impl Fn(String) -> E,
) -> Result<T, E> {
    deep::run_caught(name, f).unwrap_or_else(|message| Err(failed(message)))
}
