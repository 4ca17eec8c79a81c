//! Source spans and diagnostics (from the shared `diagnostics` crate).
pub use diagnostics::{Diagnostic, Span};
