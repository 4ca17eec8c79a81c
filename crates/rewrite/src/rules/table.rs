//! The shape of a row of the rule table ([`RuleInfo`]), the kinds of rule
//! parameters ([`Param`]), and the `rules_table!` macro that turns the rows into
//! [`super::RULES`] and one public constructor per rule.

use crate::S;
use elv::{Kind, Value};
use rise::{AddrSpace, Expr};

/// A rule's row in [`super::RULES`].
pub struct RuleInfo {
    /// The name it prints with and is called by in strategy files (`splitJoin`).
    pub name: &'static str,
    /// Its parameters: name and kind (`[("n", Kind::Int)]`).
    pub params: &'static [(&'static str, Kind)],
    /// The equation, `lhs ↦ rhs`, with side conditions in parentheses.
    pub equation: &'static str,
    /// The paper section it belongs to.
    pub section: &'static str,
    /// Whether `equation` is a pattern ([`crate::pattern::Rewrite`]) that
    /// implements the rule by itself.
    pub pattern: bool,
    /// Builds the rule from strategy-file arguments, one of each kind in `params`;
    /// a message says why an argument is refused (a size that is not positive).
    pub make: fn(&[Value<Expr>]) -> Result<S, String>,
}

impl RuleInfo {
    /// The rule as a strategy file calls it: `splitJoin(n)`, `mapFusion`.
    pub fn signature(&self) -> String {
        if self.params.is_empty() {
            return self.name.to_string();
        }
        let names: Vec<&str> = self.params.iter().map(|p| p.0).collect();
        format!("{}({})", self.name, names.join(", "))
    }
}

/// The name a rule prints with: `name`, or `name(a1, a2)` with its arguments.
pub(crate) fn printed_name(name: &str, args: &[String]) -> String {
    if args.is_empty() {
        name.to_string()
    } else {
        format!("{name}({})", args.join(", "))
    }
}

/// A kind of rule parameter: its Rust type, how strategy files write it, how an
/// argument is checked, and how it prints in the rule's name.
pub trait Param {
    /// The Rust type of the argument.
    type Value: Clone + Send + Sync + 'static;
    /// The kind of the argument in strategy files.
    const KIND: Kind;
    /// The argument from a strategy-file value, or why it is refused.
    fn read(v: &Value<Expr>) -> Result<Self::Value, String>;
    /// The argument as it prints in the rule's name.
    fn show(v: &Self::Value) -> String;
}

/// A positive size: a split factor, a vector width, a tile size.
pub struct Size;

impl Param for Size {
    type Value = i64;
    const KIND: Kind = Kind::Int;
    fn read(v: &Value<Expr>) -> Result<i64, String> {
        let n = v.as_int()?;
        if n <= 0 {
            return Err(format!("the size must be positive, not {n}"));
        }
        Ok(n)
    }
    fn show(n: &i64) -> String {
        n.to_string()
    }
}

/// A dimension of the OpenCL and CUDA thread hierarchies: 0, 1 or 2.
pub struct Dim;

impl Param for Dim {
    type Value = usize;
    const KIND: Kind = Kind::Int;
    fn read(v: &Value<Expr>) -> Result<usize, String> {
        let d = v.as_int()?;
        if !(0..=2).contains(&d) {
            return Err(format!("the dimension must be 0, 1 or 2, not {d}"));
        }
        Ok(d as usize)
    }
    fn show(d: &usize) -> String {
        d.to_string()
    }
}

/// An address space: `global`, `local`, `private` or `constant`.
pub struct Space;

impl Param for Space {
    type Value = AddrSpace;
    const KIND: Kind = Kind::Symbol;
    fn read(v: &Value<Expr>) -> Result<AddrSpace, String> {
        match v.as_symbol()? {
            "global" => Ok(AddrSpace::Global),
            "local" => Ok(AddrSpace::Local),
            "private" => Ok(AddrSpace::Private),
            "constant" => Ok(AddrSpace::Constant),
            other => Err(format!(
                "unknown address space `{other}` (global, local, private, constant)"
            )),
        }
    }
    fn show(a: &AddrSpace) -> String {
        a.to_string()
    }
}

/// A strategy.
pub struct Strat;

impl Param for Strat {
    type Value = S;
    const KIND: Kind = Kind::Strategy;
    fn read(v: &Value<Expr>) -> Result<S, String> {
        v.as_strategy().cloned()
    }
    fn show(s: &S) -> String {
        s.to_string()
    }
}

/// The next argument of a rule (the registry passes exactly one per parameter).
pub(crate) fn next_arg<'a>(
    args: &mut impl Iterator<Item = &'a Value<Expr>>,
) -> Result<&'a Value<Expr>, String> {
    args.next().ok_or_else(|| "missing argument".to_string())
}

/// `name(p1, p2)` for a rule's doc line (`name` without parameters).
macro_rules! signature {
    ($name:ident) => {
        stringify!($name)
    };
    ($name:ident $($p:ident)+) => {
        concat!(stringify!($name), "(", stringify!($($p),+), ")")
    };
}

/// The body of a rule's public constructor: the implementing module's function,
/// or for a `pattern` row the rule its equation compiles to (once per process).
macro_rules! rule_body {
    ([] $module:ident $f:ident $eq:literal, $name:ident $(, $p:ident)*) => {
        $module::$f($name $(, $p)*)
    };
    ([pattern] $module:ident $f:ident $eq:literal, $name:ident) => {{
        static REWRITE: std::sync::OnceLock<std::sync::Arc<crate::pattern::Rewrite>> =
            std::sync::OnceLock::new();
        let rw = REWRITE.get_or_init(|| {
            // The patterns are constants of this file; a test compiles every one.
            let rw = crate::pattern::Rewrite::parse($eq).unwrap_or_else(|e| panic!("{e}"));
            std::sync::Arc::new(rw)
        });
        crate::pattern::rule($name, rw.clone())
    }};
}

/// Turns rows `name = constructor(param: Kind, ...): "equation",` grouped in
/// sections `"title" in module { ... }` into
///
/// * one public constructor per row, `pub fn constructor(param: ...) -> S`,
///   documented with its equation, which calls `module::constructor` with the
///   rule's printed name (`splitJoin(4)`) and the arguments;
/// * [`RULES`](super::RULES), every row with its name, parameters, equation,
///   section and a constructor from strategy-file arguments.
///
/// A row `name = constructor(): pattern "lhs ↦ rhs",` is a rule without
/// parameters whose equation is a pattern ([`crate::pattern`]) that implements
/// it: no function in the module.
macro_rules! rules_table {
    ($( $section:literal in $module:ident {
        $( $name:ident = $f:ident ( $( $p:ident : $k:ident ),* ) : $($pat:ident)? $eq:literal, )*
    } )*) => {
        $( $(
            #[doc = concat!("`", signature!($name $($p)*), "`: `", $eq, "`")]
            #[doc = ""]
            #[doc = concat!("(", $section, ")")]
            pub fn $f($( $p: <$k as Param>::Value ),*) -> S {
                let name = printed_name(stringify!($name), &[$( <$k as Param>::show(&$p) ),*]);
                rule_body!([$($pat)?] $module $f $eq, name $(, $p)*)
            }
        )* )*

        /// Every rule, grouped by the paper section it comes from.
        pub const RULES: &[RuleInfo] = &[
            $( $( RuleInfo {
                name: stringify!($name),
                params: &[$( (stringify!($p), <$k as Param>::KIND) ),*],
                equation: $eq,
                section: $section,
                pattern: stringify!($($pat)?).len() > 0,
                make: |_args| {
                    #[allow(unused_mut, unused_variables)]
                    let mut args = _args.iter();
                    Ok($f($( <$k as Param>::read(next_arg(&mut args)?)? ),*))
                },
            }, )* )*
        ];
    };
}
