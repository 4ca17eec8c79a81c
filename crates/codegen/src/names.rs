//! Deterministic, C-safe names.
//!
//! DPIA names are unique but not necessarily valid C: they may contain
//! characters C does not allow, or be C keywords or names this code generator
//! uses itself (`malloc`, `int8_t`, a typedef). [`NameSet`] turns each name
//! into a valid C identifier, unique within the module, the same way every
//! time (the first occurrence keeps the sanitized name, later ones get `_2`,
//! `_3`, ...).

use std::collections::BTreeSet;

/// C keywords and the identifiers of the headers the generated code includes.
const RESERVED: &[&str] = &[
    // C11 keywords
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
    "_Bool",
    "_Complex",
    "_Imaginary",
    "_Alignas",
    "_Alignof",
    "_Atomic",
    "_Generic",
    "_Noreturn",
    "_Static_assert",
    "_Thread_local",
    // headers: stdbool.h, stdint.h, stddef.h, stdlib.h, string.h, stdio.h
    "bool",
    "true",
    "false",
    "int8_t",
    "int16_t",
    "int32_t",
    "int64_t",
    "uint8_t",
    "uint16_t",
    "uint32_t",
    "uint64_t",
    "size_t",
    "NULL",
    "malloc",
    "calloc",
    "free",
    "abort",
    "exit",
    "memcpy",
    "memset",
    "printf",
    "main",
    "errno",
    "assert",
    // names of the entry point's parameters
    "buffers",
    "sizes",
];

/// The names of one C module: each distinct request gets a distinct,
/// valid C identifier.
#[derive(Clone, Debug, Default)]
pub struct NameSet {
    used: BTreeSet<String>,
}

impl NameSet {
    /// Marks `name` as taken (a name defined elsewhere, such as a typedef).
    pub fn reserve(&mut self, name: &str) {
        self.used.insert(name.to_string());
    }

    /// A fresh valid C identifier derived from `wanted`.
    pub fn fresh(&mut self, wanted: &str) -> String {
        let base = sanitize(wanted);
        let mut name = base.clone();
        let mut k = 2;
        while self.used.contains(&name) || RESERVED.contains(&name.as_str()) {
            name = format!("{base}_{k}");
            k += 1;
        }
        self.used.insert(name.clone());
        name
    }
}

/// `wanted` with every character C does not allow replaced by `_`, and a
/// prefix where it would otherwise start with a digit or a reserved `_X`/`__`.
pub fn sanitize(wanted: &str) -> String {
    let mut s: String = wanted
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
    let reserved_prefix = s.starts_with("__")
        || (s.starts_with('_') && s[1..].starts_with(|c: char| c.is_ascii_uppercase()));
    if s.is_empty() || s.starts_with(|c: char| c.is_ascii_digit()) || reserved_prefix {
        s.insert(0, 'v');
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_valid_unique_and_deterministic() {
        let mut ns = NameSet::default();
        assert_eq!(ns.fresh("x"), "x");
        assert_eq!(ns.fresh("x"), "x_2");
        assert_eq!(ns.fresh("int"), "int_2");
        assert_eq!(ns.fresh("a'b"), "a_b");
        assert_eq!(ns.fresh("1st"), "v1st");
        assert_eq!(ns.fresh("__x"), "v__x");
        assert_eq!(ns.fresh(""), "v");
        assert_eq!(ns.fresh("float4"), "float4");
        assert_eq!(ns.fresh("float4"), "float4_2");
    }
}
