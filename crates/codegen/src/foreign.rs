//! Foreign functions (`rise::foreign`): the C functions a program calls.
//!
//! Each foreign function the program calls becomes a helper function of the module,
//! printed before the kernels (`static inline` in C, OpenMP and OpenCL, `static __device__
//! inline` in CUDA) with the user's body verbatim but for its names ([`CNames`]): the
//! function is `shine_foreign_NAME` on every target and in the interpreter's helper, so that
//! no name of a C library, OpenCL or CUDA builtin or macro (`printf`, `stdin`, `INFINITY`,
//! `main`, `get_global_id`, ...) clashes with it, and the body's calls of its own name
//! (recursion) are renamed with it; a parameter keeps its name unless that is reserved on
//! some target (`names::is_reserved_parameter`: `errno`, `M_PI`, `float4`, ...), then it is
//! `shine_param_NAME` in the signature and the body. A call in a kernel is a plain call.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use dpia::walk::Node;
use dpia::{Comm, ExpKind};
use rise::ForeignFun;

use crate::ast::{FnKind, Function, Param, Stmt, Type};
use crate::error::CodegenError;
use crate::names::NameSet;
use crate::print::dialect::Dialect;
use crate::Target;

/// The C names of a foreign function: the same on every target and in the interpreter's
/// helper (see the module doc).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CNames {
    /// The function's C name: `shine_foreign_NAME`.
    pub function: String,
    /// The parameters' C names, in order.
    pub params: Vec<String>,
}

impl CNames {
    /// The C names of `f`.
    pub fn of(f: &ForeignFun) -> CNames {
        let params = f
            .params
            .iter()
            .map(|(x, _)| {
                if crate::names::is_reserved_parameter(x) {
                    format!("shine_param_{x}")
                } else {
                    x.to_string()
                }
            })
            .collect();
        CNames {
            function: format!("shine_foreign_{}", f.name),
            params,
        }
    }

    /// The body of `f` with its names renamed to these (outside literals and comments).
    pub fn body(&self, f: &ForeignFun) -> String {
        let mut renames: Vec<(&str, &str)> = vec![(&f.name, &self.function)];
        for ((x, _), c) in f.params.iter().zip(&self.params) {
            if **x != **c {
                renames.push((x, c));
            }
        }
        rise::foreign::rename_in_body(&f.body, &renames)
    }
}

/// The foreign functions a program calls and their C names.
#[derive(Clone, Debug, Default)]
pub struct Foreign {
    /// Per RISE name: the function and its C names, in the order first called.
    funs: Vec<(Arc<ForeignFun>, CNames)>,
    by_name: BTreeMap<String, usize>,
}

impl Foreign {
    /// The foreign functions `body` calls, each named in `names` (before anything else is,
    /// so that no variable takes its name).
    pub fn collect(body: &Comm, names: &mut NameSet) -> Result<Foreign, CodegenError> {
        let mut found: Vec<Arc<ForeignFun>> = Vec::new();
        Node::Comm(body).visit(&mut |n| {
            if let Node::Exp(e) = n {
                if let ExpKind::Foreign(f, _) = &*e.kind {
                    if !found.iter().any(|g| g.name == f.name) {
                        found.push(f.clone());
                    }
                }
            }
        });
        let mut out = Foreign::default();
        for f in found {
            let cnames = CNames::of(&f);
            names.reserve(&cnames.function);
            out.by_name.insert(f.name.to_string(), out.funs.len());
            out.funs.push((f, cnames));
        }
        Ok(out)
    }

    /// The C name of the foreign function called `name` in RISE.
    pub fn c_name(&self, name: &str) -> Option<&str> {
        self.by_name
            .get(name)
            .map(|&k| self.funs[k].1.function.as_str())
    }

    /// The helper functions, in the order first called.
    pub fn functions(&self) -> Result<Vec<Function>, CodegenError> {
        self.funs
            .iter()
            .map(|(f, cnames)| {
                let params = f
                    .params
                    .iter()
                    .zip(&cnames.params)
                    .map(|((_, t), x)| {
                        Ok(Param {
                            ty: Type::Scalar(crate::ctypes::scalar(*t)?),
                            name: x.clone(),
                        })
                    })
                    .collect::<Result<Vec<_>, CodegenError>>()?;
                Ok(Function {
                    kind: FnKind::Helper,
                    name: cnames.function.clone(),
                    ret: Type::Scalar(crate::ctypes::scalar(f.result)?),
                    params,
                    body: vec![
                        Stmt::Comment(format!("foreign function `{}`", f.name)),
                        Stmt::Raw(cnames.body(f)),
                    ],
                })
            })
            .collect()
    }

    /// Whether the program calls no foreign function.
    pub fn is_empty(&self) -> bool {
        self.funs.is_empty()
    }

    /// What a module with foreign functions adds before them, so that one body compiles on
    /// every target: the includes and lines of the dialect's prelude
    /// (`Dialect::foreign_prelude`: `<math.h>` in C, the fixed-width integer types and
    /// `#define fmaxf fmax` in OpenCL, ...) for the words the bodies use; nothing without
    /// foreign functions.
    pub fn prelude(&self, target: Target) -> (Vec<String>, Vec<String>) {
        if self.is_empty() {
            return (Vec::new(), Vec::new());
        }
        let words: BTreeSet<&str> = self
            .funs
            .iter()
            .flat_map(|(f, _)| {
                f.body
                    .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            })
            .collect();
        Dialect::of(target).foreign_prelude(&|w| words.contains(w))
    }

    /// Whether a foreign function takes or returns `f64`.
    pub fn uses_f64(&self) -> bool {
        self.funs.iter().any(|(f, _)| {
            f.result == rise::ScalarType::F64
                || f.params.iter().any(|(_, t)| *t == rise::ScalarType::F64)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn foreign(body: &str) -> Foreign {
        let f = ForeignFun {
            name: "g".into(),
            params: vec![("x".into(), rise::ScalarType::F32)],
            result: rise::ScalarType::F32,
            body: body.into(),
            span: Default::default(),
        };
        Foreign {
            funs: vec![(Arc::new(f.clone()), CNames::of(&f))],
            by_name: BTreeMap::new(),
        }
    }

    #[test]
    fn opencl_maps_the_float_math_names_a_body_uses() {
        // `myfabsf` is no math name, `fabs` needs no mapping
        let f = foreign("return fmaxf(sqrtf(x), 1.0f) + myfabsf(x) + fabs(x);");
        let (_, lines) = f.prelude(Target::OpenCl);
        let defines: Vec<&str> = lines
            .iter()
            .map(String::as_str)
            .filter(|l| l.starts_with("#define"))
            .collect();
        assert_eq!(defines, ["#define fmaxf fmax", "#define sqrtf sqrt"]);
        // C and CUDA have the `f` names
        for target in [Target::C, Target::OpenMp, Target::Cuda] {
            let (_, lines) = f.prelude(target);
            assert!(!lines.iter().any(|l| l.starts_with("#define")), "{target}");
        }
    }

    #[test]
    fn names_of_libraries_and_builtins_are_renamed_with_the_body() {
        let program = "foreign printf (stdin: i32) (M_PI: f32) (float4: f32) (x: f32) : f32 {
                         return stdin <= 0 ? M_PI + float4 : printf(stdin - 1, x, M_PI, x); }";
        let f = rise::syntax::parse_program(program).unwrap().foreign[0].clone();
        let names = CNames::of(&f);
        assert_eq!(names.function, "shine_foreign_printf");
        assert_eq!(
            names.params,
            [
                "shine_param_stdin",
                "shine_param_M_PI",
                "shine_param_float4",
                "x"
            ]
        );
        assert_eq!(
            names.body(&f).trim(),
            "return shine_param_stdin <= 0 ? shine_param_M_PI + shine_param_float4 : \
             shine_foreign_printf(shine_param_stdin - 1, x, shine_param_M_PI, x);"
        );
    }
}
