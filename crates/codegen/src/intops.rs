//! Integer arithmetic with the interpreter's semantics, in C's terms.
//!
//! ARCHITECTURE.md's "What a program means": arithmetic on an integer type yields that type and
//! wraps modulo its width, signed types included, and dividing by zero is an
//! error the user sees. C differs in three ways, each avoided here with
//! nothing but the AST (so every printer spells it in its dialect):
//! * **promotion**: `u8`, `i8`, `u16`, `i16` operands compute in `int`; the
//!   result is cast back to the operand type (`(uint16_t)(a + b)`);
//! * **signed overflow** is undefined: `+`, `-`, `*` and unary `-` on signed
//!   types (and on narrow types, whose promoted products can overflow `int`)
//!   compute in the unsigned type of at least 32 bits and convert back
//!   (`(int32_t)((uint32_t)a * (uint32_t)b)`): the conversion of an
//!   out-of-range value to a signed type is two's complement in GCC, Clang,
//!   OpenCL C and CUDA;
//! * **division**: `x / 0`, `x % 0`, `MIN / -1` and `MIN % -1` are undefined
//!   (and trap on x86). A division whose divisor is not a constant other than
//!   0 and -1 calls a helper ([`helpers`]) that sets the program's status flag
//!   to [`EntryStatus::DivisionByZero`] (or `RemainderByZero`) and yields 0 for a zero divisor, and
//!   gives the wrapped `-a` and 0 for a divisor of -1, as the interpreter does
//!   (`wrapping_div`, `wrapping_rem`). The flag is the `int *status` parameter
//!   of the kernel; the entry point returns it (C), the host reads it back (GPU).
//!
//! * **casts**: a float converted to an integer type outside its range (or NaN) is
//!   undefined in C; such a cast, and a float or a negative number cast to `natType`, has no
//!   value in the interpreter. A cast that has no value for some inputs calls a helper
//!   ([`cast_helpers`]) that checks the value before converting it and sets the status flag
//!   to [`EntryStatus::CastOutOfRange`] when it has none.
//! * **natural numbers**: `natType` `+`, `-` and `*` fail in the interpreter where the
//!   result is no natural number (beyond 2^63 - 1, or below 0); C's `int64_t` would overflow
//!   (undefined) or go negative. Each calls a helper ([`nat_helpers`]) that tests the
//!   operands before it computes (`a > INT64_MAX - b`: no builtins, which OpenCL C and CUDA
//!   lack) and sets the status flag to [`EntryStatus::NotNatural`] when there is none.
//!
//! Comparisons need nothing: promoted values keep their order. Vectors of
//! integers are computed by GCC, OpenCL and CUDA vector arithmetic in their
//! element type (no promotion; `+`, `-`, `*` wrap there in practice, but C
//! does not promise it for signed lanes); their `/` and `%` are refused
//! (computed lane by lane where `vectorize` asked for them).

use std::collections::BTreeSet;

use crate::ast::{AddrSpace, BinOp, Expr, FnKind, Function, Param, Scalar, Stmt, Type, UnOp};
use crate::error::CodegenError;
use rise::primitives::MathFn;

/// Why a generated entry point (or a GPU program's status flag) reports that
/// the program did not compute its result. One table: the number the code
/// returns and the message the user sees.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EntryStatus {
    /// The result was computed.
    Computed = 0,
    /// An integer `/` had a zero divisor.
    DivisionByZero = 1,
    /// An integer `%` had a zero divisor.
    RemainderByZero = 2,
    /// The sizes violate a constraint of the definition's type (the entry point checks
    /// each one before it computes; a comment above each check names it).
    SizeConstraint = 3,
    /// An index read from data (`gather`, `scatter`, `idx` or `natAsIndex` of a value
    /// computed at run time) was outside the range of its type ([`index_check`]).
    IndexOutOfRange = 4,
    /// `scatter` wrote two values to one position ([`claim`]).
    DuplicatePosition = 5,
    /// A cast had no value ([`checked_cast`]): a float out of the range of an integer
    /// type or NaN, a float or a negative number to `natType`.
    CastOutOfRange = 6,
    /// A `natType` `+`, `-` or `*` left the natural numbers ([`checked_nat`]): above
    /// 2^63 - 1, or below 0.
    NotNatural = 7,
    /// An integer `<<` or `>>` had an amount that is negative or not below the width of
    /// its type ([`shift`]).
    ShiftOutOfRange = 8,
}

impl EntryStatus {
    /// Every status, in number order.
    pub const ALL: [EntryStatus; 9] = [
        EntryStatus::Computed,
        EntryStatus::DivisionByZero,
        EntryStatus::RemainderByZero,
        EntryStatus::SizeConstraint,
        EntryStatus::IndexOutOfRange,
        EntryStatus::DuplicatePosition,
        EntryStatus::CastOutOfRange,
        EntryStatus::NotNatural,
        EntryStatus::ShiftOutOfRange,
    ];

    /// The number the generated code returns (or stores in its status flag).
    pub fn code(self) -> i32 {
        self as i32
    }

    /// The status of a number, if it is one of the table's.
    pub fn from_code(code: i32) -> Option<EntryStatus> {
        EntryStatus::ALL.into_iter().find(|s| s.code() == code)
    }

    /// What the user is told (after the definition's name), as the interpreter says it.
    pub fn message(self) -> &'static str {
        match self {
            EntryStatus::Computed => "computed",
            EntryStatus::DivisionByZero => "integer division by zero",
            EntryStatus::RemainderByZero => "integer remainder by zero",
            EntryStatus::SizeConstraint => {
                "the sizes violate a constraint of the definition's type"
            }
            EntryStatus::IndexOutOfRange => {
                "an index read from data is outside the range of its type `idx[n]` (in a \
                 `gather`, `scatter`, `idx` or `natAsIndex`; `shine eval` names the value and \
                 where it is read)"
            }
            EntryStatus::DuplicatePosition => {
                "`scatter` writes two values to one position (positions must be distinct)"
            }
            EntryStatus::CastOutOfRange => {
                "a `cast` is undefined in C (out of range: a float beyond the range of an \
                 integer type, or NaN; a float, or a negative number, cast to natType; `shine \
                 eval` names the value and where it is cast)"
            }
            EntryStatus::NotNatural => {
                "a `natType` `+`, `-` or `*` is not a natural number (above 2^63 - 1, or \
                 below 0; `shine eval` names the values)"
            }
            EntryStatus::ShiftOutOfRange => {
                "integer shift amount out of range (negative, or not below the width of its \
                 type; `shine eval` names the value)"
            }
        }
    }
}

/// The name of the status flag: the kernels' parameter and the helpers'.
pub const STATUS: &str = "status";

/// Integer types narrower than `int`, which C promotes.
fn is_narrow(s: Scalar) -> bool {
    matches!(s, Scalar::I8 | Scalar::U8 | Scalar::I16 | Scalar::U16)
}

fn is_unsigned(s: Scalar) -> bool {
    matches!(s, Scalar::U8 | Scalar::U16 | Scalar::U32 | Scalar::U64)
}

/// Integer (not `bool`, not floating point).
pub fn is_int(s: Scalar) -> bool {
    !s.is_float() && s != Scalar::Bool
}

/// The unsigned type `s` wraps in: 64 bits for 64-bit types, else 32.
fn wrap_type(s: Scalar) -> Scalar {
    if s.bytes() == 8 {
        Scalar::U64
    } else {
        Scalar::U32
    }
}

/// `a op b` for `+`, `-`, `*` on integers of type `s`, wrapping without undefined behaviour.
pub fn wrapping(op: BinOp, s: Scalar, a: Expr, b: Expr) -> Expr {
    if !is_narrow(s) && is_unsigned(s) {
        return Expr::binary(op, a, b);
    }
    let u = Type::Scalar(wrap_type(s));
    Expr::binary(op, a.cast(u.clone()), b.cast(u)).cast(Type::Scalar(s))
}

/// `-a` on integers of type `s`, wrapping.
pub fn negate(s: Scalar, a: Expr) -> Expr {
    if !is_narrow(s) && is_unsigned(s) {
        return Expr::unary(UnOp::Neg, a);
    }
    Expr::unary(UnOp::Neg, a.cast(Type::Scalar(wrap_type(s)))).cast(Type::Scalar(s))
}

/// `abs`, `min` and `max` of integers of type `s`, as conditionals (each operand
/// is a pure expression, read twice): `abs` of the most negative value wraps to
/// itself (`a < 0 ? (int32_t)-(uint32_t)a : a`), as the interpreter's does;
/// unsigned `abs` is the operand. Other math functions take floats only.
pub fn math(f: MathFn, s: Scalar, args: Vec<Expr>) -> Result<Expr, CodegenError> {
    let mut operands = args.into_iter();
    Ok(
        match (f, operands.next(), operands.next(), operands.next()) {
            (MathFn::Abs, Some(a), None, None) if is_unsigned(s) => a,
            (MathFn::Abs, Some(a), None, None) => Expr::ternary(
                Expr::binary(BinOp::Lt, a.clone(), Expr::Int(0)),
                negate(s, a.clone()),
                a,
            ),
            (MathFn::Min | MathFn::Max, Some(a), Some(b), None) => {
                let op = if f == MathFn::Min {
                    BinOp::Lt
                } else {
                    BinOp::Gt
                };
                Expr::ternary(Expr::binary(op, a.clone(), b.clone()), a, b)
            }
            _ => {
                return crate::error::malformed(format!(
                    "`{}` of integers ({})",
                    f.name(),
                    s.c_name()
                ))
            }
        },
    )
}

/// The constant value of a divisor, when it is a literal.
fn constant(e: &Expr) -> Option<i64> {
    match e {
        Expr::Int(v) => Some(*v),
        Expr::Cast(Type::Scalar(_), inner) => constant(inner),
        _ => None,
    }
}

/// An integer operation that C leaves undefined for some operands, computed by a helper
/// that checks them and sets the status flag.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Checked {
    /// `/`
    Div,
    /// `%`
    Rem,
    /// `<<`
    Shl,
    /// `>>`
    Shr,
}

impl Checked {
    fn short_name(self) -> &'static str {
        match self {
            Checked::Div => "div",
            Checked::Rem => "rem",
            Checked::Shl => "shl",
            Checked::Shr => "shr",
        }
    }
}

/// The helpers a module's divisions and shifts call: `(type, operation)`.
pub type Helpers = BTreeSet<(Scalar, Checked)>;

/// `a & b`, `a | b`, `a ^ b` on integers of type `s` (a promoted narrow result is cast back).
pub fn bitwise(op: BinOp, s: Scalar, a: Expr, b: Expr) -> Expr {
    let e = Expr::binary(op, a, b);
    if is_narrow(s) {
        e.cast(Type::Scalar(s))
    } else {
        e
    }
}

/// `~a` on integers of type `s` (a promoted narrow result is cast back).
pub fn bit_not(s: Scalar, a: Expr) -> Expr {
    let e = Expr::unary(UnOp::BitNot, a);
    if is_narrow(s) {
        e.cast(Type::Scalar(s))
    } else {
        e
    }
}

/// The width of an integer type in bits.
fn width(s: Scalar) -> i64 {
    8 * s.bytes() as i64
}

/// `a << b` or `a >> b` (`right`) on integers of type `s`: inline where `b` is a constant
/// in `0..width`, else a call of a helper (recorded in `used`) that sets the status flag
/// to [`EntryStatus::ShiftOutOfRange`] for another amount. `<<` computes in the unsigned
/// type and converts back (two's complement wrapping); `>>` on signed types is arithmetic.
pub fn shift(right: bool, s: Scalar, a: Expr, b: Expr, used: &mut Helpers) -> Expr {
    if constant(&b).is_some_and(|k| (0..width(s)).contains(&k)) {
        return shift_in_range(right, s, a, b);
    }
    let op = if right { Checked::Shr } else { Checked::Shl };
    used.insert((s, op));
    Expr::call(&helper_name(s, op), vec![a, b, Expr::ident(STATUS)])
}

/// The shift of `a` by an amount known to be in `0..width`.
fn shift_in_range(right: bool, s: Scalar, a: Expr, b: Expr) -> Expr {
    let t = Type::Scalar(s);
    if right {
        let e = Expr::binary(BinOp::Shr, a, b);
        return if is_narrow(s) { e.cast(t) } else { e };
    }
    if !is_narrow(s) && is_unsigned(s) {
        return Expr::binary(BinOp::Shl, a, b);
    }
    Expr::binary(BinOp::Shl, a.cast(Type::Scalar(wrap_type(s))), b).cast(t)
}

/// `a / b` or `a % b` (`rem`) on integers of type `s`: plain C where the divisor is a
/// constant other than 0 and -1, else a call of a helper (recorded in `used`).
pub fn divide(rem: bool, s: Scalar, a: Expr, b: Expr, used: &mut Helpers) -> Expr {
    let op = if rem { BinOp::Mod } else { BinOp::Div };
    if constant(&b).is_some_and(|c| c != 0 && c != -1) {
        let e = Expr::binary(op, a, b);
        return if is_narrow(s) {
            e.cast(Type::Scalar(s))
        } else {
            e
        };
    }
    let checked = if rem { Checked::Rem } else { Checked::Div };
    used.insert((s, checked));
    Expr::call(&helper_name(s, checked), vec![a, b, Expr::ident(STATUS)])
}

fn helper_name(s: Scalar, op: Checked) -> String {
    format!("shine_{}_{}", op.short_name(), short_name(s))
}

/// A scalar type in the names of helpers (`i32`, `f32`, `nat`).
fn short_name(s: Scalar) -> &'static str {
    match s {
        Scalar::Int => "int",
        Scalar::Index => "index",
        Scalar::Nat => "nat",
        Scalar::I8 => "i8",
        Scalar::I16 => "i16",
        Scalar::I32 => "i32",
        Scalar::I64 => "i64",
        Scalar::U8 => "u8",
        Scalar::U16 => "u16",
        Scalar::U32 => "u32",
        Scalar::U64 => "u64",
        Scalar::Bool => "bool",
        Scalar::Float => "f32",
        Scalar::Double => "f64",
        Scalar::F16 => "f16",
        Scalar::Bf16 => "bf16",
    }
}

/// The status flag's type: a pointer to an `int` in global memory.
pub fn status_type() -> Type {
    Type::Pointer {
        to: Box::new(Type::Scalar(Scalar::Int)),
        is_const: false,
        restrict: false,
        addr: AddrSpace::Global,
    }
}

/// The definitions of the helpers in `used`:
/// ```c
/// static inline int32_t shine_div_i32(int32_t a, int32_t b, int *status) {
///   if (b == 0) { *status = 1; return 0; }
///   if (b == -1) return (int32_t)-(uint32_t)a;
///   return a / b;
/// }
/// ```
pub fn helpers(used: &Helpers) -> Vec<Function> {
    used.iter()
        .map(|&(s, op)| match op {
            Checked::Div => helper(s, false),
            Checked::Rem => helper(s, true),
            Checked::Shl => shift_helper(s, false),
            Checked::Shr => shift_helper(s, true),
        })
        .collect()
}

/// The parameters `(a, b, status)` of a helper on two operands of type `s`.
fn binary_params(s: Scalar) -> Vec<Param> {
    let t = Type::Scalar(s);
    vec![
        Param {
            ty: t.clone(),
            name: "a".into(),
        },
        Param {
            ty: t,
            name: "b".into(),
        },
        Param {
            ty: status_type(),
            name: STATUS.into(),
        },
    ]
}

/// ```c
/// static inline int32_t shine_shl_i32(int32_t a, int32_t b, int *status) {
///   if (b < 0 || b >= 32) { *status = 8; return 0; }
///   return (int32_t)((uint32_t)a << b);
/// }
/// ```
fn shift_helper(s: Scalar, right: bool) -> Function {
    let t = Type::Scalar(s);
    let (a, b) = (Expr::ident("a"), Expr::ident("b"));
    let too_far = Expr::binary(BinOp::Ge, b.clone(), Expr::Int(width(s)));
    let outside = if is_unsigned(s) {
        too_far
    } else {
        Expr::binary(
            BinOp::Or,
            Expr::binary(BinOp::Lt, b.clone(), Expr::Int(0)),
            too_far,
        )
    };
    let flag = Expr::Int(i64::from(EntryStatus::ShiftOutOfRange.code()));
    let body = vec![
        Stmt::If(
            outside,
            vec![
                Stmt::Assign(Expr::unary(UnOp::Deref, Expr::ident(STATUS)), flag),
                Stmt::Return(Some(Expr::Int(0).cast(t.clone()))),
            ],
            vec![],
        ),
        Stmt::Return(Some(shift_in_range(right, s, a, b))),
    ];
    Function {
        kind: FnKind::Helper,
        name: helper_name(s, if right { Checked::Shr } else { Checked::Shl }),
        ret: t,
        params: binary_params(s),
        body,
    }
}

fn helper(s: Scalar, rem: bool) -> Function {
    let t = Type::Scalar(s);
    let (a, b) = (Expr::ident("a"), Expr::ident("b"));
    let zero = Expr::Int(0).cast(t.clone());
    let status = if rem {
        EntryStatus::RemainderByZero
    } else {
        EntryStatus::DivisionByZero
    };
    let flag = Expr::Int(i64::from(status.code()));
    let mut body = vec![Stmt::If(
        Expr::binary(BinOp::Eq, b.clone(), Expr::Int(0)),
        vec![
            Stmt::Assign(Expr::unary(UnOp::Deref, Expr::ident(STATUS)), flag),
            Stmt::Return(Some(zero.clone())),
        ],
        vec![],
    )];
    if !is_unsigned(s) {
        let minus_one = if rem { zero } else { negate(s, a.clone()) };
        body.push(Stmt::If(
            Expr::binary(BinOp::Eq, b.clone(), Expr::Int(-1)),
            vec![Stmt::Return(Some(minus_one))],
            vec![],
        ));
    }
    let op = if rem { BinOp::Mod } else { BinOp::Div };
    let q = Expr::binary(op, a, b);
    let q = if is_narrow(s) { q.cast(t.clone()) } else { q };
    body.push(Stmt::Return(Some(q)));
    Function {
        kind: FnKind::Helper,
        name: helper_name(s, if rem { Checked::Rem } else { Checked::Div }),
        ret: t,
        params: binary_params(s),
        body,
    }
}

/// The checks of indices read from data a module's code calls ([`index_check`], [`claim`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct IndexHelpers {
    /// `shine_in_range` is called.
    pub range: bool,
    /// `shine_claim` is called.
    pub once: bool,
}

impl IndexHelpers {
    /// Whether some check is called (then the code takes the status flag).
    pub fn any(self) -> bool {
        self.range || self.once
    }
}

/// `shine_in_range(v, n, status)`: whether `0 <= v < n`; when not, it sets the status flag
/// to [`EntryStatus::IndexOutOfRange`] (the caller then skips the access).
pub fn index_check(v: Expr, n: Expr, used: &mut IndexHelpers) -> Expr {
    used.range = true;
    Expr::call("shine_in_range", vec![v, n, Expr::ident(STATUS)])
}

/// `shine_claim(mark, status)`: marks the position whose marker `mark` points to as
/// written, atomically; when it was already, it sets the status flag to
/// [`EntryStatus::DuplicatePosition`] unless another error set it (atomically) and
/// yields false (the caller skips the write).
pub fn claim(mark: Expr, used: &mut IndexHelpers) -> Expr {
    used.once = true;
    Expr::call("shine_claim", vec![mark, Expr::ident(STATUS)])
}

/// The definitions of the index checks in `used`:
/// ```c
/// static inline bool shine_in_range(int64_t v, int64_t n, int *status) {
///   if (v >= 0 && v < n) return true;
///   *status = 4;
///   return false;
/// }
/// static inline bool shine_claim(int *mark, int *status) {
///   if (__atomic_exchange_n(mark, 1, __ATOMIC_RELAXED) == 0) return true;
///   __sync_val_compare_and_swap(status, 0, 5);
///   return false;
/// }
/// ```
pub fn index_helpers(used: IndexHelpers) -> Vec<Function> {
    let fail = |s: EntryStatus| {
        vec![
            Stmt::Assign(
                Expr::unary(UnOp::Deref, Expr::ident(STATUS)),
                Expr::Int(i64::from(s.code())),
            ),
            Stmt::Return(Some(Expr::Bool(false))),
        ]
    };
    let param = |ty: Type, name: &str| Param {
        ty,
        name: name.into(),
    };
    let i64t = Type::Scalar(Scalar::I64);
    let mut out = Vec::new();
    if used.range {
        let (v, n) = (Expr::ident("v"), Expr::ident("n"));
        let inside = Expr::binary(
            BinOp::And,
            Expr::binary(BinOp::Ge, v.clone(), Expr::Int(0)),
            Expr::binary(BinOp::Lt, v, n),
        );
        let mut body = vec![Stmt::If(
            inside,
            vec![Stmt::Return(Some(Expr::Bool(true)))],
            vec![],
        )];
        body.extend(fail(EntryStatus::IndexOutOfRange));
        out.push(Function {
            kind: FnKind::Helper,
            name: "shine_in_range".into(),
            ret: Type::Scalar(Scalar::Bool),
            params: vec![
                param(i64t.clone(), "v"),
                param(i64t, "n"),
                param(status_type(), STATUS),
            ],
            body,
        });
    }
    if used.once {
        let first = Expr::binary(
            BinOp::Eq,
            Expr::AtomicExchange(Box::new(Expr::ident("mark")), Box::new(Expr::Int(1))),
            Expr::Int(0),
        );
        let mut body = vec![Stmt::If(
            first,
            vec![Stmt::Return(Some(Expr::Bool(true)))],
            vec![],
        )];
        // a duplicate is reported only where no other error was: a position that failed
        // (out of range, or computed from a failed value) is read as 0 and may repeat one
        body.push(Stmt::Expr(Expr::AtomicCompareExchange(
            Box::new(Expr::ident(STATUS)),
            Box::new(Expr::Int(0)),
            Box::new(Expr::Int(i64::from(EntryStatus::DuplicatePosition.code()))),
        )));
        body.push(Stmt::Return(Some(Expr::Bool(false))));
        out.push(Function {
            kind: FnKind::Helper,
            name: "shine_claim".into(),
            ret: Type::Scalar(Scalar::Bool),
            params: vec![param(status_type(), "mark"), param(status_type(), STATUS)],
            body,
        });
    }
    out
}

/// The checked casts a module's code calls: `(from, to)` ([`checked_cast`]).
pub type CastHelpers = BTreeSet<(Scalar, Scalar)>;

/// `(to)v` for a value `v` of type `from`, with the interpreter's semantics (the rise
/// crate's `Scalar::cast` and `cast` of `natType`): plain C where every value of `from`
/// converts; else a call of a helper (recorded in `used`) that checks the value before the
/// conversion (C leaves an out-of-range float conversion undefined) and, when it has no
/// value, sets the status flag to [`EntryStatus::CastOutOfRange`] and yields 0.
pub fn checked_cast(from: Scalar, to: Scalar, v: Expr, used: &mut CastHelpers) -> Expr {
    if !cast_is_checked(from, to) {
        return v.cast(Type::Scalar(to));
    }
    used.insert((from, to));
    Expr::call(&cast_helper_name(from, to), vec![v, Expr::ident(STATUS)])
}

/// Whether some value of `from` has no value as a `to` ([`checked_cast`] checks it).
pub fn cast_is_checked(from: Scalar, to: Scalar) -> bool {
    cast_condition(from, to, Expr::ident("x")).is_some()
}

fn cast_helper_name(from: Scalar, to: Scalar) -> String {
    format!("shine_cast_{}_{}", short_name(from), short_name(to))
}

/// The condition under which `x` of type `from` has a value as a `to`, `None` where
/// every value has one. A float converts to an integer type where its integral part is in
/// the type's range (`lo - 1 < x < hi + 1`; NaN fails both); to `natType` never (the
/// interpreter casts integers only to it); an integer converts to `natType` where it is
/// not negative and at most `i64::MAX`.
fn cast_condition(from: Scalar, to: Scalar, x: Expr) -> Option<Expr> {
    let is_signed_int = |s| is_int(s) && !is_unsigned(s) && !matches!(s, Scalar::Index);
    match (from.is_float(), to) {
        (true, Scalar::Nat) => Some(Expr::Bool(false)),
        (true, to) if is_int(to) => {
            let (lo, hi) = int_range(to)?;
            Some(Expr::binary(
                BinOp::And,
                float_above(from, lo, x.clone()),
                Expr::binary(BinOp::Lt, x, float(from, (hi + 1) as f64)),
            ))
        }
        (false, Scalar::Nat) if is_signed_int(from) && from != Scalar::Nat => {
            Some(Expr::binary(BinOp::Ge, x, Expr::Int(0)))
        }
        (false, Scalar::Nat) if from == Scalar::U64 => {
            Some(Expr::binary(BinOp::Le, x, Expr::Int(i64::MAX)))
        }
        _ => None,
    }
}

/// `x > lo - 1` in the float type `f`, or `x >= lo` where `lo - 1` is not a value of `f`
/// (then no value lies between them: `lo` is 0 or a power of two).
fn float_above(f: Scalar, lo: i128, x: Expr) -> Expr {
    let below = lo - 1;
    let exact = match f {
        Scalar::Float => (below as f32) as i128 == below,
        _ => (below as f64) as i128 == below,
    };
    if exact {
        Expr::binary(BinOp::Gt, x, float(f, below as f64))
    } else {
        Expr::binary(BinOp::Ge, x, float(f, lo as f64))
    }
}

fn float(f: Scalar, value: f64) -> Expr {
    Expr::Float {
        value,
        single: f == Scalar::Float,
    }
}

/// The smallest and largest value of an integer type (`natType` and indices excepted).
fn int_range(s: Scalar) -> Option<(i128, i128)> {
    let bits = i128::from(s.bytes()) * 8;
    match s {
        Scalar::Index | Scalar::Nat | Scalar::Bool => None,
        s if s.is_float() => None,
        s if is_unsigned(s) => Some((0, (1i128 << bits) - 1)),
        _ => Some((-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1)),
    }
}

/// The definitions of the checked casts in `used`:
/// ```c
/// static inline uint8_t shine_cast_f32_u8(float x, int *status) {
///   if (x > -1.0f && x < 256.0f) return (uint8_t)x;
///   *status = 6;
///   return (uint8_t)0;
/// }
/// ```
pub fn cast_helpers(used: &CastHelpers) -> Vec<Function> {
    used.iter()
        .filter_map(|&(from, to)| cast_helper(from, to))
        .collect()
}

fn cast_helper(from: Scalar, to: Scalar) -> Option<Function> {
    let x = Expr::ident("x");
    let t = Type::Scalar(to);
    let mut body = match cast_condition(from, to, x.clone())? {
        // the parameter is unused (`-Wextra`)
        Expr::Bool(false) => vec![Stmt::Expr(x.cast(Type::Void))],
        ok => vec![Stmt::If(
            ok,
            vec![Stmt::Return(Some(x.cast(t.clone())))],
            vec![],
        )],
    };
    body.push(Stmt::Assign(
        Expr::unary(UnOp::Deref, Expr::ident(STATUS)),
        Expr::Int(i64::from(EntryStatus::CastOutOfRange.code())),
    ));
    body.push(Stmt::Return(Some(Expr::Int(0).cast(t.clone()))));
    Some(Function {
        kind: FnKind::Helper,
        name: cast_helper_name(from, to),
        ret: t,
        params: vec![
            Param {
                ty: Type::Scalar(from),
                name: "x".into(),
            },
            Param {
                ty: status_type(),
                name: STATUS.into(),
            },
        ],
        body,
    })
}

/// A `natType` operation the interpreter checks (`checked_add`, `checked_sub` to a
/// result not below 0, `checked_mul`); division is [`divide`]'s.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum NatOp {
    /// `a + b`.
    Add,
    /// `a - b`.
    Sub,
    /// `a * b`.
    Mul,
}

impl NatOp {
    /// The `natType` operation of a C operator, if the interpreter checks it.
    pub fn of(op: BinOp) -> Option<NatOp> {
        match op {
            BinOp::Add => Some(NatOp::Add),
            BinOp::Sub => Some(NatOp::Sub),
            BinOp::Mul => Some(NatOp::Mul),
            _ => None,
        }
    }

    fn c_op(self) -> BinOp {
        match self {
            NatOp::Add => BinOp::Add,
            NatOp::Sub => BinOp::Sub,
            NatOp::Mul => BinOp::Mul,
        }
    }

    fn helper_name(self) -> &'static str {
        match self {
            NatOp::Add => "shine_add_nat",
            NatOp::Sub => "shine_sub_nat",
            NatOp::Mul => "shine_mul_nat",
        }
    }
}

/// The checked `natType` operations a module's code calls ([`checked_nat`]).
pub type NatHelpers = BTreeSet<NatOp>;

/// `a op b` on `natType` values, with the interpreter's semantics: a call of a helper
/// (recorded in `used`) that yields the result where it is a natural number, else sets the
/// status flag to [`EntryStatus::NotNatural`] and yields 0.
pub fn checked_nat(op: NatOp, a: Expr, b: Expr, used: &mut NatHelpers) -> Expr {
    used.insert(op);
    Expr::call(op.helper_name(), vec![a, b, Expr::ident(STATUS)])
}

/// `INT64_MIN`, spelled without a literal beyond `INT64_MAX`.
fn int64_min() -> Expr {
    Expr::binary(BinOp::Sub, Expr::Int(-i64::MAX), Expr::Int(1))
}

/// The condition under which `a op b` has no natural number as its result in the
/// interpreter, computed without overflowing (for every pair of 64-bit operands, negative
/// ones included, as the interpreter's `checked_*` are).
fn nat_failure(op: NatOp, a: Expr, b: Expr) -> Expr {
    let bin = Expr::binary;
    let or = |x, y| bin(BinOp::Or, x, y);
    let and = |x, y| bin(BinOp::And, x, y);
    let zero = || Expr::Int(0);
    let max = || Expr::Int(i64::MAX);
    match op {
        // (b > 0 && a > MAX - b) || (b < 0 && a < MIN - b)
        NatOp::Add => or(
            and(
                bin(BinOp::Gt, b.clone(), zero()),
                bin(BinOp::Gt, a.clone(), bin(BinOp::Sub, max(), b.clone())),
            ),
            and(
                bin(BinOp::Lt, b.clone(), zero()),
                bin(BinOp::Lt, a, bin(BinOp::Sub, int64_min(), b)),
            ),
        ),
        // a < b (below 0, or an overflow below MIN) || (b < 0 && a > MAX + b)
        NatOp::Sub => or(
            bin(BinOp::Lt, a.clone(), b.clone()),
            and(
                bin(BinOp::Lt, b.clone(), zero()),
                bin(BinOp::Gt, a, bin(BinOp::Add, max(), b)),
            ),
        ),
        // by the signs of the operands, compared with a quotient of the limit
        NatOp::Mul => {
            let (pa, na) = (
                bin(BinOp::Gt, a.clone(), zero()),
                bin(BinOp::Lt, a.clone(), zero()),
            );
            let (pb, nb) = (
                bin(BinOp::Gt, b.clone(), zero()),
                bin(BinOp::Lt, b.clone(), zero()),
            );
            let beyond = |signs: Expr, test: Expr| and(signs, test);
            or(
                or(
                    beyond(
                        and(pa.clone(), pb.clone()),
                        bin(BinOp::Gt, a.clone(), bin(BinOp::Div, max(), b.clone())),
                    ),
                    beyond(
                        and(pa, nb.clone()),
                        bin(
                            BinOp::Lt,
                            b.clone(),
                            bin(BinOp::Div, int64_min(), a.clone()),
                        ),
                    ),
                ),
                or(
                    beyond(
                        and(na.clone(), pb),
                        bin(
                            BinOp::Lt,
                            a.clone(),
                            bin(BinOp::Div, int64_min(), b.clone()),
                        ),
                    ),
                    beyond(and(na, nb), bin(BinOp::Lt, b, bin(BinOp::Div, max(), a))),
                ),
            )
        }
    }
}

/// The definitions of the checked `natType` operations in `used`:
/// ```c
/// static inline int64_t shine_add_nat(int64_t a, int64_t b, int *status) {
///   if (b > 0 && a > 9223372036854775807 - b || b < 0 && a < -9223372036854775807 - 1 - b) {
///     *status = 7;
///     return (int64_t)0;
///   }
///   return a + b;
/// }
/// ```
pub fn nat_helpers(used: &NatHelpers) -> Vec<Function> {
    used.iter().map(|&op| nat_helper(op)).collect()
}

fn nat_helper(op: NatOp) -> Function {
    let t = Type::Scalar(Scalar::Nat);
    let (a, b) = (Expr::ident("a"), Expr::ident("b"));
    let body = vec![
        Stmt::If(
            nat_failure(op, a.clone(), b.clone()),
            vec![
                Stmt::Assign(
                    Expr::unary(UnOp::Deref, Expr::ident(STATUS)),
                    Expr::Int(i64::from(EntryStatus::NotNatural.code())),
                ),
                Stmt::Return(Some(Expr::Int(0).cast(t.clone()))),
            ],
            vec![],
        ),
        Stmt::Return(Some(Expr::binary(op.c_op(), a, b))),
    ];
    let param = |ty: Type, name: &str| Param {
        ty,
        name: name.into(),
    };
    Function {
        kind: FnKind::Helper,
        name: op.helper_name().into(),
        ret: t.clone(),
        params: vec![
            param(t.clone(), "a"),
            param(t, "b"),
            param(status_type(), STATUS),
        ],
        body,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::print::{expr, print_in};
    use crate::Target;

    fn id(s: &str) -> Expr {
        Expr::ident(s)
    }

    #[test]
    fn integer_abs_min_max_are_conditionals_that_wrap() {
        let e = |f, s, args| expr(&math(f, s, args).unwrap());
        assert_eq!(
            e(MathFn::Abs, Scalar::I32, vec![id("a")]),
            "a < 0 ? (int32_t)-(uint32_t)a : a"
        );
        assert_eq!(
            e(MathFn::Abs, Scalar::I8, vec![id("a")]),
            "a < 0 ? (int8_t)-(uint32_t)a : a"
        );
        assert_eq!(e(MathFn::Abs, Scalar::U16, vec![id("a")]), "a");
        assert_eq!(
            e(MathFn::Min, Scalar::I64, vec![id("a"), id("b")]),
            "a < b ? a : b"
        );
        assert_eq!(
            e(MathFn::Max, Scalar::U8, vec![id("a"), id("b")]),
            "a > b ? a : b"
        );
        assert!(math(MathFn::Sqrt, Scalar::Int, vec![id("a")]).is_err());
    }

    #[test]
    fn narrow_and_signed_arithmetic_wraps_in_unsigned_types() {
        let e = wrapping(BinOp::Add, Scalar::U16, id("a"), id("b"));
        assert_eq!(expr(&e), "(uint16_t)((uint32_t)a + (uint32_t)b)");
        let e = wrapping(BinOp::Mul, Scalar::I64, id("a"), id("b"));
        assert_eq!(expr(&e), "(int64_t)((uint64_t)a * (uint64_t)b)");
        let e = wrapping(BinOp::Sub, Scalar::U32, id("a"), id("b"));
        assert_eq!(expr(&e), "a - b");
        assert_eq!(expr(&negate(Scalar::Int, id("a"))), "(int)-(uint32_t)a");
        assert_eq!(expr(&negate(Scalar::U64, id("a"))), "-a");
    }

    #[test]
    fn divisions_by_non_constants_go_through_checked_helpers() {
        let mut used = Helpers::new();
        let two = Expr::Int(2).cast(Type::Scalar(Scalar::U16));
        let e = divide(false, Scalar::U16, id("a"), two, &mut used);
        assert_eq!(expr(&e), "(uint16_t)(a / (uint16_t)2)");
        assert!(used.is_empty());
        let e = divide(true, Scalar::Int, id("a"), Expr::Int(-1), &mut used);
        assert_eq!(expr(&e), "shine_rem_int(a, -1, status)");
        let e = divide(false, Scalar::I8, id("a"), id("b"), &mut used);
        assert_eq!(expr(&e), "shine_div_i8(a, b, status)");
        let unit = crate::ast::Unit {
            header: String::new(),
            includes: vec![],
            preamble: vec![],
            typedefs: vec![],
            functions: helpers(&used),
        };
        let c = print_in(&unit, Target::C);
        assert!(c.contains("static inline int8_t shine_div_i8(int8_t a, int8_t b, int *status) {"));
        assert!(c.contains("return (int8_t)-(uint32_t)a;"), "{c}");
        assert!(c.contains("return (int8_t)(a / b);"), "{c}");
        assert!(c.contains("*status = 1;"), "{c}");
        let cl = print_in(&unit, Target::OpenCl);
        assert!(cl.contains("static inline char shine_div_i8(char a, char b, global int *status)"));
        let cu = print_in(&unit, Target::Cuda);
        assert!(
            cu.contains("static __device__ inline signed char shine_div_i8("),
            "{cu}"
        );
    }

    #[test]
    fn index_checks_set_their_status_and_claim_positions_atomically() {
        let mut used = IndexHelpers::default();
        assert!(!used.any());
        let e = index_check(id("v"), id("n"), &mut used);
        assert_eq!(expr(&e), "shine_in_range(v, n, status)");
        assert!(used.range && !used.once);
        let e = claim(Expr::unary(UnOp::AddrOf, id("m").index(id("i"))), &mut used);
        assert_eq!(expr(&e), "shine_claim(&m[i], status)");
        let unit = crate::ast::Unit {
            header: String::new(),
            includes: vec![],
            preamble: vec![],
            typedefs: vec![],
            functions: index_helpers(used),
        };
        let c = print_in(&unit, Target::C);
        assert!(c.contains("if (v >= 0 && v < n) {"), "{c}");
        assert!(c.contains("*status = 4;"), "{c}");
        assert!(
            c.contains("__atomic_exchange_n(mark, 1, __ATOMIC_RELAXED) == 0"),
            "{c}"
        );
        assert!(
            c.contains("__sync_val_compare_and_swap(status, 0, 5);"),
            "{c}"
        );
        let cl = print_in(&unit, Target::OpenCl);
        assert!(cl.contains("atomic_xchg(mark, 1) == 0"), "{cl}");
        assert!(cl.contains("atomic_cmpxchg(status, 0, 5);"), "{cl}");
        let cu = print_in(&unit, Target::Cuda);
        assert!(cu.contains("atomicExch(mark, 1) == 0"), "{cu}");
        assert!(cu.contains("atomicCAS(status, 0, 5);"), "{cu}");
        assert!(index_helpers(IndexHelpers::default()).is_empty());
    }

    fn unit_of(functions: Vec<Function>) -> crate::ast::Unit {
        crate::ast::Unit {
            header: String::new(),
            includes: vec![],
            preamble: vec![],
            typedefs: vec![],
            functions,
        }
    }

    #[test]
    fn casts_without_a_value_for_some_input_are_checked_before_converting() {
        let mut used = CastHelpers::new();
        // every value converts: plain C
        let plain = [
            (Scalar::I32, Scalar::Float),
            (Scalar::Float, Scalar::Double),
            (Scalar::Float, Scalar::Bool),
            (Scalar::I64, Scalar::U8),
            (Scalar::Nat, Scalar::I32),
            (Scalar::U32, Scalar::Nat),
            (Scalar::Index, Scalar::Nat),
        ];
        for (from, to) in plain {
            let e = checked_cast(from, to, id("x"), &mut used);
            assert_eq!(e, id("x").cast(Type::Scalar(to)), "{from:?} to {to:?}");
        }
        assert!(used.is_empty());
        let e = checked_cast(Scalar::Float, Scalar::U8, id("x"), &mut used);
        assert_eq!(expr(&e), "shine_cast_f32_u8(x, status)");
        for (from, to) in [
            (Scalar::Double, Scalar::I64),
            (Scalar::Float, Scalar::I32),
            (Scalar::Double, Scalar::I8),
            (Scalar::Float, Scalar::Nat),
            (Scalar::I16, Scalar::Nat),
            (Scalar::U64, Scalar::Nat),
        ] {
            checked_cast(from, to, id("x"), &mut used);
        }
        let c = print_in(&unit_of(cast_helpers(&used)), Target::C);
        // lo - 1 < x < hi + 1, with lo itself where lo - 1 is no value of the float type
        for condition in [
            "if (x > -1.0f && x < 256.0f) {",
            "if (x >= -9.223372036854776e18 && x < 9.223372036854776e18) {",
            "if (x >= -2147483600.0f && x < 2147483600.0f) {",
            "if (x > -129.0 && x < 128.0) {",
            "if (x >= 0) {",
            "if (x <= 9223372036854775807) {",
        ] {
            assert!(c.contains(condition), "{condition}: {c}");
        }
        assert!(
            c.contains("return (uint8_t)x;") && c.contains("*status = 6;"),
            "{c}"
        );
        // a float is never a natType value
        assert!(
            c.contains(
                "int64_t shine_cast_f32_nat(float x, int *status) {\n  (void)x;\n  *status = 6;"
            ),
            "{c}"
        );
        let cl = print_in(&unit_of(cast_helpers(&used)), Target::OpenCl);
        assert!(
            cl.contains("static inline long shine_cast_i16_nat(short x, global int *status)"),
            "{cl}"
        );
        let cu = print_in(&unit_of(cast_helpers(&used)), Target::Cuda);
        assert!(
            cu.contains("long long shine_cast_f64_i64(double x, int *status)"),
            "{cu}"
        );
    }

    /// The helpers' conditions, evaluated in Rust on 64-bit operands (with `i128`, so that
    /// an overflow of the condition itself would show), against the interpreter's checks.
    fn fails(e: &Expr, a: i64, b: i64) -> bool {
        fn eval(e: &Expr, a: i64, b: i64) -> i128 {
            let bin = |op: BinOp, x: i128, y: i128| match op {
                BinOp::Add => x + y,
                BinOp::Sub => x - y,
                BinOp::Div => x / y,
                BinOp::Gt => i128::from(x > y),
                BinOp::Lt => i128::from(x < y),
                other => panic!("not in a condition: {other:?}"),
            };
            match e {
                Expr::Int(v) => i128::from(*v),
                Expr::Ident(n) if n == "a" => i128::from(a),
                Expr::Ident(n) if n == "b" => i128::from(b),
                // C's `&&` and `||` evaluate their right operand only where needed
                Expr::Binary(BinOp::And, x, y) => {
                    i128::from(eval(x, a, b) != 0 && eval(y, a, b) != 0)
                }
                Expr::Binary(BinOp::Or, x, y) => {
                    i128::from(eval(x, a, b) != 0 || eval(y, a, b) != 0)
                }
                Expr::Binary(op, x, y) => {
                    let (x, y) = (eval(x, a, b), eval(y, a, b));
                    let r = bin(*op, x, y);
                    assert!(
                        i128::from(i64::MIN) <= r && r <= i128::from(i64::MAX),
                        "{e:?} overflows at a = {a}, b = {b}"
                    );
                    r
                }
                other => panic!("not in a condition: {other:?}"),
            }
        }
        eval(e, a, b) != 0
    }

    #[test]
    fn nat_checks_fail_exactly_where_the_interpreter_does() {
        let edges = [
            0,
            1,
            2,
            3,
            5,
            100,
            1 << 31,
            1 << 32,
            1 << 62,
            i64::MAX / 2,
            i64::MAX - 1,
            i64::MAX,
            -1,
            -2,
            -(1 << 32),
            i64::MIN / 2,
            i64::MIN + 1,
            i64::MIN,
        ];
        for op in [NatOp::Add, NatOp::Sub, NatOp::Mul] {
            let cond = nat_failure(op, id("a"), id("b"));
            for a in edges {
                for b in edges {
                    let interpreter = match op {
                        NatOp::Add => a.checked_add(b),
                        NatOp::Sub => a.checked_sub(b).filter(|r| *r >= 0),
                        NatOp::Mul => a.checked_mul(b),
                    };
                    assert_eq!(
                        fails(&cond, a, b),
                        interpreter.is_none(),
                        "{op:?} of {a} and {b}"
                    );
                }
            }
        }
    }

    #[test]
    fn nat_operations_call_helpers_that_set_their_status() {
        let mut used = NatHelpers::new();
        let e = checked_nat(NatOp::Sub, id("x"), Expr::Int(1), &mut used);
        assert_eq!(expr(&e), "shine_sub_nat(x, 1, status)");
        checked_nat(NatOp::Add, id("x"), id("y"), &mut used);
        assert_eq!(used.len(), 2);
        let c = print_in(&unit_of(nat_helpers(&used)), Target::C);
        assert!(
            c.contains("static inline int64_t shine_add_nat(int64_t a, int64_t b, int *status)"),
            "{c}"
        );
        assert!(
            c.contains("if (a < b || (b < 0 && a > 9223372036854775807 + b)) {"),
            "{c}"
        );
        assert!(
            c.contains("*status = 7;") && c.contains("return a - b;"),
            "{c}"
        );
        assert!(!c.contains("shine_mul_nat"), "{c}");
        let cl = print_in(&unit_of(nat_helpers(&used)), Target::OpenCl);
        assert!(
            cl.contains("static inline long shine_add_nat(long a, long b, global int *status)"),
            "{cl}"
        );
        let cu = print_in(&unit_of(nat_helpers(&used)), Target::Cuda);
        assert!(cu.contains("long long shine_sub_nat(long long a"), "{cu}");
    }

    #[test]
    fn statuses_have_one_number_and_message_each() {
        for s in EntryStatus::ALL {
            assert_eq!(EntryStatus::from_code(s.code()), Some(s));
        }
        assert_eq!(EntryStatus::from_code(9), None);
        assert_eq!(
            EntryStatus::DivisionByZero.message(),
            "integer division by zero"
        );
    }
}
