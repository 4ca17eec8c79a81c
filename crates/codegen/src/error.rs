//! The errors of code generation.

use std::fmt;

/// Why a DPIA program could not be turned into C.
///
/// Every case the code generator does not support is reported here, naming
/// the construct; code generation never panics on a program.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CodegenError {
    /// A construct or a data type the C back ends cannot express.
    Unsupported(String),
    /// A `LoopKind::Unroll` loop whose iteration count is not a constant.
    UnrollNotConstant {
        /// The primitive the loop comes from.
        origin: String,
        /// The iteration count, as written in RISE syntax.
        count: String,
    },
    /// A `LoopKind::Unroll` loop of more iterations than
    /// [`dpia::limits::MAX_UNROLLED_ITERATIONS`].
    UnrollTooLong {
        /// The primitive the loop comes from.
        origin: String,
        /// The iteration count.
        count: i64,
    },
    /// The generated code would have more than [`dpia::limits::MAX_GENERATED_NODES`]
    /// nodes of the C syntax tree.
    CodeTooLarge {
        /// What expands into the code: the unrolled primitive, or the program.
        what: String,
        /// The number of nodes (estimated for an unrolled loop before it is expanded).
        nodes: usize,
    },
    /// An index or size mentions a variable that is neither a size of the
    /// program nor the variable of an enclosing loop.
    UnboundVariable {
        /// The variable.
        name: String,
        /// The expression it occurs in.
        context: String,
    },
    /// The program writes to one of its inputs.
    WriteToInput(String),
    /// The program cannot run on a GPU as it is: how its parallel loops nest,
    /// where its memory lives, where threads would communicate.
    Gpu(dpia::GpuError),
    /// The program does not fit the DPIA contract: a view applied to data
    /// of the wrong type, an index path that does not match a type, an
    /// unknown identifier. This is a bug in the translation that produced
    /// the program.
    Malformed(String),
}

impl fmt::Display for CodegenError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CodegenError::Unsupported(what) => {
                write!(f, "not supported by the code generator: {what}")
            }
            CodegenError::UnrollNotConstant { origin, count } => write!(
                f,
                "cannot unroll the `{origin}` loop: its iteration count `{count}` is not a constant \
                 (use the non-unrolled primitive, or split the loop by a constant first)"
            ),
            CodegenError::UnrollTooLong { origin, count } => write!(
                f,
                "cannot unroll the `{origin}` loop: {}",
                dpia::limits::unroll_advice(*count)
            ),
            CodegenError::CodeTooLarge { what, nodes } => write!(
                f,
                "{what} would generate about {nodes} nodes of C code, more than the limit of {} \
                 (use the non-unrolled primitives, mapSeq and reduceSeq, for the large loops, or \
                 unroll only inner loops of a few iterations)",
                dpia::limits::MAX_GENERATED_NODES
            ),
            CodegenError::UnboundVariable { name, context } => write!(
                f,
                "the index expression `{context}` mentions `{name}`, which is neither a size of \
                 the program nor the variable of an enclosing loop"
            ),
            CodegenError::WriteToInput(name) => {
                write!(f, "the program writes to its input `{name}`; inputs are read-only")
            }
            CodegenError::Malformed(what) => write!(f, "malformed DPIA program: {what}"),
            CodegenError::Gpu(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for CodegenError {}

impl From<crate::abi::AbiError> for CodegenError {
    /// Data the buffers cannot hold is a construct the code generator does not support.
    fn from(e: crate::abi::AbiError) -> CodegenError {
        CodegenError::Unsupported(e.to_string())
    }
}

/// Shorthand for [`CodegenError::Malformed`].
pub(crate) fn malformed<T>(what: impl Into<String>) -> Result<T, CodegenError> {
    Err(CodegenError::Malformed(what.into()))
}

/// Shorthand for [`CodegenError::Unsupported`].
pub(crate) fn unsupported<T>(what: impl Into<String>) -> Result<T, CodegenError> {
    Err(CodegenError::Unsupported(what.into()))
}
