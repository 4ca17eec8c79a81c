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

/// The scalar types a foreign function may take and return (every scalar type but `f16`
/// and `bf16`, which C has no portable type for).
pub fn is_foreign_scalar(t: ScalarType) -> bool {
    !t.is_half()
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

/// A piece of a C body that matters to shine: an identifier, or a token that starts a
/// preprocessor directive (`#`, its digraph `%:`, its trigraph `??=`). Offsets are byte
/// offsets into the body as written (line continuations included).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CPiece {
    /// An identifier (or keyword), spelled without any line continuation inside it.
    Ident {
        /// Its text.
        text: String,
        /// Where it starts and ends in the body.
        range: std::ops::Range<usize>,
    },
    /// `#`, `%:` or `??=` outside literals and comments.
    Hash(std::ops::Range<usize>),
}

/// The identifiers and `#` tokens of a C body, in order, outside string and character
/// literals and comments; line continuations (`\` or the trigraph `??/` before a newline)
/// are removed first, as C's translation phases do.
pub fn c_pieces(body: &str) -> Vec<CPiece> {
    let chars = logical_chars(body);
    let mut out = Vec::new();
    let mut i = 0;
    let at = |k: usize| chars.get(k).map(|c| c.0);
    let end_of = |k: usize| chars.get(k).map_or(body.len(), |c| c.1 + c.0.len_utf8());
    while i < chars.len() {
        let c = chars[i].0;
        let next = at(i + 1);
        if c == '/' && next == Some('/') {
            while i < chars.len() && chars[i].0 != '\n' {
                i += 1;
            }
        } else if c == '/' && next == Some('*') {
            i += 2;
            while i < chars.len() && !(chars[i].0 == '*' && at(i + 1) == Some('/')) {
                i += 1;
            }
            i += 2;
        } else if c == '"' || c == '\'' {
            i += 1;
            while i < chars.len() && chars[i].0 != c && chars[i].0 != '\n' {
                i += if chars[i].0 == '\\' { 2 } else { 1 };
            }
            i += 1;
        } else if c.is_ascii_digit() || (c == '.' && next.is_some_and(|d| d.is_ascii_digit())) {
            // a preprocessing number: `1e-5f`, `0x1p+3`, `1.5e10` (no identifier inside)
            i += 1;
            while let Some(d) = at(i) {
                let sign =
                    (d == '+' || d == '-') && matches!(chars[i - 1].0, 'e' | 'E' | 'p' | 'P');
                if !(d.is_ascii_alphanumeric() || d == '_' || d == '.' || sign) {
                    break;
                }
                i += 1;
            }
        } else if c.is_ascii_alphabetic() || c == '_' {
            let start = i;
            while at(i).is_some_and(|d| d.is_ascii_alphanumeric() || d == '_') {
                i += 1;
            }
            out.push(CPiece::Ident {
                text: chars[start..i].iter().map(|c| c.0).collect(),
                range: chars[start].1..end_of(i - 1),
            });
        } else if c == '#' {
            out.push(CPiece::Hash(chars[i].1..end_of(i)));
            i += 1;
        } else if c == '%' && next == Some(':') {
            out.push(CPiece::Hash(chars[i].1..end_of(i + 1)));
            i += 2;
        } else if c == '?' && next == Some('?') && at(i + 2) == Some('=') {
            out.push(CPiece::Hash(chars[i].1..end_of(i + 2)));
            i += 3;
        } else {
            i += 1;
        }
    }
    out
}

/// The characters of `body` with their byte offsets, without line continuations.
fn logical_chars(body: &str) -> Vec<(char, usize)> {
    let chars: Vec<(char, usize)> = body.char_indices().map(|(i, c)| (c, i)).collect();
    let at = |k: usize| chars.get(k).map(|c| c.0);
    let mut out = Vec::with_capacity(chars.len());
    let mut i = 0;
    while i < chars.len() {
        // `\` (or `??/`), optional `\r`, then a newline: a line continuation
        let slash = match chars[i].0 {
            '\\' => 1,
            '?' if at(i + 1) == Some('?') && at(i + 2) == Some('/') => 3,
            _ => 0,
        };
        if slash > 0 {
            let cr = usize::from(at(i + slash) == Some('\r'));
            if at(i + slash + cr) == Some('\n') {
                i += slash + cr + 1;
                continue;
            }
        }
        out.push(chars[i]);
        i += 1;
    }
    out
}

/// Why `body` cannot be the body of a foreign function, with the byte range (in the body)
/// of the offending token: a preprocessor directive (`#define`, `#include`, ... would
/// change the generated code around the body, or differ between targets) or `_Pragma`.
pub fn check_body(body: &str) -> Result<(), (std::ops::Range<usize>, String)> {
    for piece in c_pieces(body) {
        match piece {
            CPiece::Hash(range) => {
                return Err((
                    range,
                    "a foreign function's body may not hold preprocessor directives \
                     (`#define`, `#include`, `#if`, ...; also spelled `%:` or `??=`): they \
                     would reach the code around it"
                        .into(),
                ))
            }
            CPiece::Ident { text, range } if text == "_Pragma" => {
                return Err((
                    range,
                    "a foreign function's body may not use `_Pragma`: it would reach the code \
                     around it"
                        .into(),
                ))
            }
            CPiece::Ident { .. } => {}
        }
    }
    Ok(())
}

/// `body` with every identifier that `renames` maps replaced by its new name (outside
/// literals and comments); the rest is kept as written.
pub fn rename_in_body(body: &str, renames: &[(&str, &str)]) -> String {
    let mut out = String::with_capacity(body.len());
    let mut last = 0;
    for piece in c_pieces(body) {
        let CPiece::Ident { text, range } = piece else {
            continue;
        };
        if let Some((_, new)) = renames.iter().find(|(old, _)| *old == text) {
            out.push_str(&body[last..range.start]);
            out.push_str(new);
            last = range.end;
        }
    }
    out.push_str(&body[last..]);
    out
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

    #[test]
    fn preprocessor_lines_and_pragmas_are_refused_wherever_they_hide() {
        for (body, bad) in [
            ("return x;\n#define float double\n", "#"),
            ("  /* c */ # include <stdio.h>\n return x;", "#"),
            ("return x; \\\n#define A 1", "#"),
            ("return x;\n%:define A 1", "%:"),
            ("return x;\n%\\\n:define A 1", "%\\\n:"),
            ("return x;\n??=define A 1", "??="),
            ("_Pragma(\"omp parallel\") return x;", "_Pragma"),
            ("return x; _Pra\\\ngma(\"x\")", "_Pra\\\ngma"),
        ] {
            let (range, message) = check_body(body).unwrap_err();
            assert_eq!(&body[range], bad, "{body}");
            assert!(message.contains("may not"), "{message}");
        }
        for body in [
            "return x; // #define in a comment",
            "/* #include */ return x;",
            "const char *s = \"#define %:\"; char c = '#'; return x;",
            "return x % 2 ? 1 : 0;",
            "return 1e-5f + 0x1p+3 + x;",
        ] {
            assert!(check_body(body).is_ok(), "{body}");
        }
    }

    #[test]
    fn renaming_touches_identifiers_only() {
        let body = "return n <= 1 ? 1 : n * fact(n - 1); /* fact */ \"fact\"; facts; 1efact;";
        assert_eq!(
            rename_in_body(body, &[("fact", "shine_foreign_fact"), ("n", "m")]),
            "return m <= 1 ? 1 : m * shine_foreign_fact(m - 1); /* fact */ \"fact\"; facts; 1efact;"
        );
        assert_eq!(rename_in_body("fa\\\nct(1)", &[("fact", "g")]), "g(1)");
    }
}
