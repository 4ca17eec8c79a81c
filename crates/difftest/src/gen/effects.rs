//! Side effects at the start of a foreign function's body: printing (`printf`, `puts`),
//! ending the process (`exit`, `_exit`, `abort`) or crashing (a write through a null
//! pointer) for some arguments. The interpreter's helper and compiled code must turn the
//! last two into errors naming the function, and printing must reach no result.

use super::Gen;
use crate::ty::Scalar;

/// The C library functions of effects that OpenCL C and CUDA do not have: a body calling
/// one compiles on C and OpenMP only.
pub const C_ONLY_CALLS: &[&str] = &["puts(", "exit(", "_exit(", "abort("];

/// Whether a program's foreign functions call one of [`C_ONLY_CALLS`].
pub fn calls_c_only(program: &str) -> bool {
    program
        .lines()
        .filter(|l| l.starts_with("foreign "))
        .any(|l| C_ONLY_CALLS.iter().any(|c| l.contains(c)))
}

impl Gen<'_> {
    /// A statement for the start of the body of foreign function `name` over `x: s`, or
    /// nothing (most bodies).
    pub(super) fn foreign_effect(&mut self, name: &str, s: Scalar) -> String {
        let when = self.effect_condition(s);
        match self.rng.range(0, 19) {
            0 => format!("printf(\"{name} %d\\n\", (int)({when})); "),
            // no newline: what a body prints must not end up in a line of anything else
            1 => format!("printf(\"R\\t{name}%d\", (int)({when})); "),
            2 => format!("if ({when}) puts(\"{name}\"); "),
            3 => format!("if ({when}) exit(3); "),
            4 => format!("if ({when}) {{ extern void _exit(int); _exit(4); }} "),
            5 => format!("if ({when}) abort(); "),
            6 | 7 => format!("if ({when}) {{ volatile int *nul = 0; *nul = 1; }} "),
            _ => String::new(),
        }
    }

    /// A condition on `x` that holds for some inputs: large floats (inputs beyond ±50 are
    /// rare), or integers above half their range (the inputs hold the limits often).
    fn effect_condition(&mut self, s: Scalar) -> String {
        if s.is_float() {
            let bound = if s == Scalar::F32 { "50.0f" } else { "50.0" };
            return format!("x > {bound}");
        }
        if s == Scalar::Bool {
            return "x".into();
        }
        format!("x > {}", s.max_literal() / 2)
    }
}
