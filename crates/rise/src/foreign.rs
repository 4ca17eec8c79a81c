//! Foreign functions: scalar functions written in C and called from RISE
//! (`foreignFun` of the original RISE & Shine).
//!
//! A program declares one at top level,
//!
//! ```text
//! foreign clampf (x: f32) (lo: f32) (hi: f32) : f32 {
//!   return x < lo ? lo : (x > hi ? hi : x);
//! }
//! ```
//!
//! and uses it as an ordinary curried function (`clampf : f32 -> f32 -> f32 -> f32`): an
//! [`ExprKind::Foreign`](crate::ExprKind::Foreign) node. The body is C, taken verbatim; the
//! parameter names are its C parameters. Parameters and result are scalars (`bool`, the
//! integer types, `f32`, `f64`).
//!
//! Every target emits the body as a function of its own (`static inline` in C and OpenCL,
//! `__device__` in CUDA) and calls it; the interpreter runs *the same body*, compiled by the
//! system C compiler, through a [`ForeignEvaluator`] that its caller installs (the `shine`
//! crate runs it in a child process, so that a fault of user code never ends `shine`).
//! Without one, calling a foreign function is an error saying it cannot be evaluated here.

use crate::interp::Scalar;
use crate::span::Span;
use crate::types::{DataType, Name, ScalarType, Type};
use std::fmt;

/// A foreign function: its name, typed C parameters, result type and C body. Two are equal
/// when all but their spans are.
#[derive(Clone, Debug)]
pub struct ForeignFun {
    /// The name RISE code calls it by (a C identifier, not a C keyword).
    pub name: Name,
    /// The parameters: C names (used by the body) and scalar types, in order.
    pub params: Vec<(Name, ScalarType)>,
    /// The result type.
    pub result: ScalarType,
    /// The C body, between (not including) its braces, as written.
    pub body: String,
    /// The span of the whole declaration.
    pub span: Span,
}

impl ForeignFun {
    /// Its RISE type: `p1 -> ... -> pn -> result`.
    pub fn ty(&self) -> Type {
        self.params
            .iter()
            .rev()
            .fold(Type::Data(DataType::Scalar(self.result)), |t, (_, p)| {
                Type::fun(Type::Data(DataType::Scalar(*p)), t)
            })
    }

    /// The declaration in the surface syntax (parses back to this function).
    pub fn declaration(&self) -> String {
        let params: String = self
            .params
            .iter()
            .map(|(x, t)| format!(" ({x}: {})", t.name()))
            .collect();
        format!(
            "foreign {}{params} : {} {{{}}}",
            self.name,
            self.result.name(),
            self.body
        )
    }
}

impl PartialEq for ForeignFun {
    fn eq(&self, other: &ForeignFun) -> bool {
        self.name == other.name
            && self.params == other.params
            && self.result == other.result
            && self.body == other.body
    }
}

impl fmt::Display for ForeignFun {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.declaration())
    }
}

/// The scalar types a foreign function may take and return (every scalar type but `f16`,
/// which C has no portable type for).
pub fn is_foreign_scalar(t: ScalarType) -> bool {
    t != ScalarType::F16
}

/// Runs foreign functions for the interpreter. Implemented outside this crate (the `shine`
/// crate compiles the bodies with the system C compiler and runs them out of process).
pub trait ForeignEvaluator: Send + Sync {
    /// Calls `f` once per argument list of `calls` (each as many scalars as `f` has
    /// parameters, of their types) and returns the results in order, or an error message
    /// naming the function (a crash, a time limit, a missing C compiler, ...).
    fn call(&self, f: &ForeignFun, calls: &[Vec<Scalar>]) -> Result<Vec<Scalar>, String>;
}

/// The words C reserves (C11 keywords) and the type names of the headers every generated
/// module includes (`stdbool.h`, `stdint.h`, `stddef.h`): no name a user gives may be one
/// where it is printed as is (a foreign function), and the code generator's names avoid them
/// (`codegen::names`).
pub const C_RESERVED: &[&str] = &[
    // C11
    "auto",
    "break",
    "case",
    "char",
    "const",
    "continue",
    "default",
    "do",
    "double",
    "else",
    "enum",
    "extern",
    "float",
    "for",
    "goto",
    "if",
    "inline",
    "int",
    "long",
    "register",
    "restrict",
    "return",
    "short",
    "signed",
    "sizeof",
    "static",
    "struct",
    "switch",
    "typedef",
    "union",
    "unsigned",
    "void",
    "volatile",
    "while",
    "_Alignas",
    "_Alignof",
    "_Atomic",
    "_Bool",
    "_Complex",
    "_Generic",
    "_Imaginary",
    "_Noreturn",
    "_Static_assert",
    "_Thread_local",
    "bool",
    "true",
    "false",
    // stdint.h, stddef.h
    "int8_t",
    "int16_t",
    "int32_t",
    "int64_t",
    "uint8_t",
    "uint16_t",
    "uint32_t",
    "uint64_t",
    "size_t",
];

/// C++ keywords, the qualifiers and types of OpenCL C and CUDA, and the generated code's
/// index type: a foreign function, printed as is for every target, may not be named one
/// either (beside [`C_RESERVED`]).
const OTHER_LANGUAGES_RESERVED: &[&str] = &[
    // C++ (CUDA sources are C++)
    "alignas",
    "alignof",
    "asm",
    "catch",
    "class",
    "const_cast",
    "constexpr",
    "decltype",
    "delete",
    "dynamic_cast",
    "explicit",
    "export",
    "friend",
    "mutable",
    "namespace",
    "new",
    "noexcept",
    "nullptr",
    "operator",
    "private",
    "protected",
    "public",
    "reinterpret_cast",
    "static_assert",
    "static_cast",
    "template",
    "this",
    "throw",
    "try",
    "typeid",
    "typename",
    "using",
    "virtual",
    "wchar_t",
    // OpenCL C and CUDA qualifiers and types
    "kernel",
    "__kernel",
    "global",
    "__global",
    "local",
    "__local",
    "constant",
    "__constant",
    "__private",
    "half",
    "uchar",
    "ushort",
    "uint",
    "ulong",
    "__device__",
    "__global__",
    "__host__",
    "__shared__",
    "__constant__",
    // the generated code's index type
    "shine_index",
];

/// Why `name` cannot name a foreign function or one of its parameters, if it cannot.
pub fn check_c_name(name: &str) -> Result<(), String> {
    let mut chars = name.chars();
    let identifier = chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_');
    if !identifier {
        return Err(format!("`{name}` is not a C identifier"));
    }
    if C_RESERVED.contains(&name) || OTHER_LANGUAGES_RESERVED.contains(&name) {
        return Err(format!(
            "`{name}` is a keyword or type name of C, C++, OpenCL or CUDA"
        ));
    }
    if name.starts_with("shine_") || name.starts_with("__") {
        return Err(format!(
            "`{name}` is reserved: names starting with `shine_` belong to the code generator, \
             names starting with `__` to the C implementation"
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_type_is_curried_over_the_parameters() {
        let f = ForeignFun {
            name: "clampf".into(),
            params: vec![("x".into(), ScalarType::F32), ("n".into(), ScalarType::I32)],
            result: ScalarType::Bool,
            body: " return x < n; ".into(),
            span: Span::default(),
        };
        assert_eq!(f.ty().to_string(), "f32 -> i32 -> bool");
        assert_eq!(
            f.declaration(),
            "foreign clampf (x: f32) (n: i32) : bool { return x < n; }"
        );
    }

    #[test]
    fn c_names_are_checked() {
        assert!(check_c_name("clampf").is_ok());
        assert!(check_c_name("_x1").is_ok());
        assert!(check_c_name("int").unwrap_err().contains("keyword"));
        assert!(check_c_name("float4").is_ok());
        assert!(check_c_name("shine_f").unwrap_err().contains("reserved"));
        assert!(check_c_name("1x").unwrap_err().contains("identifier"));
    }
}
