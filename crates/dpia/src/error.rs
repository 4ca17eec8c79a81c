//! The error of the GPU passes ([`crate::gpu`], [`crate::hoist`], [`crate::barriers`]).

use std::fmt;

/// Why a program cannot run on a GPU as it is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GpuError {
    /// What is wrong, naming the memory or loop concerned.
    pub message: String,
    /// What would resolve it.
    pub help: Option<String>,
}

impl GpuError {
    /// An error with an optional hint.
    pub fn new(message: impl Into<String>, help: Option<&str>) -> GpuError {
        GpuError {
            message: message.into(),
            help: help.map(str::to_string),
        }
    }
}

impl fmt::Display for GpuError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)?;
        if let Some(h) = &self.help {
            write!(f, "\n  help: {h}")?;
        }
        Ok(())
    }
}

impl std::error::Error for GpuError {}
