//! Kinds, data types and types of RISE (ICFP'20 Fig. 4; RISE & Shine Fig. 3).
//!
//! Data types are what can be stored in memory (scalars, indices, arrays, pairs,
//! vectors); types add functions and dependent functions over type-level values of
//! the kinds `nat`, `data`, `addrSpace`, `nat -> nat` and `nat -> data`. Array sizes
//! are symbolic [`Nat`]s from the `arith` crate.
//!
//! Type-level variables are plain names. Whether a name is a unification variable
//! (a metavariable) or a rigid variable is decided by the inference context, not
//! stored here.

use arith::{Nat, Var};
use std::fmt;
use std::sync::Arc;

/// A name of a variable (value-level or type-level). Cheap to clone.
pub type Name = Arc<str>;

/// The kinds of type-level values.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Kind {
    /// Natural numbers (array sizes, index bounds).
    Nat,
    /// Data types.
    Data,
    /// Address spaces (global, local, private, constant).
    AddrSpace,
    /// Functions from naturals to naturals (index functions, e.g. of `reorder`).
    NatToNat,
    /// Functions from naturals to data types.
    NatToData,
}

impl fmt::Display for Kind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Kind::Nat => "nat",
            Kind::Data => "data",
            Kind::AddrSpace => "addrSpace",
            Kind::NatToNat => "nat -> nat",
            Kind::NatToData => "nat -> data",
        })
    }
}

macro_rules! scalar_types {
    ($($variant:ident $name:literal $bits:literal),* $(,)?) => {
        /// Scalar data types.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum ScalarType { $(#[doc = $name] $variant),* }

        impl ScalarType {
            /// Every scalar type.
            pub const ALL: &'static [ScalarType] = &[$(ScalarType::$variant),*];
            /// The surface-syntax name (`f32`, `u16`, ...).
            pub fn name(self) -> &'static str {
                match self { $(ScalarType::$variant => $name),* }
            }
            /// Size in bits.
            pub fn bits(self) -> u32 {
                match self { $(ScalarType::$variant => $bits),* }
            }
            /// The scalar type with this surface-syntax name.
            pub fn from_name(name: &str) -> Option<ScalarType> {
                match name { $($name => Some(ScalarType::$variant),)* _ => None }
            }
        }
    };
}

scalar_types! {
    Bool "bool" 8, Int "int" 32,
    I8 "i8" 8, I16 "i16" 16, I32 "i32" 32, I64 "i64" 64,
    U8 "u8" 8, U16 "u16" 16, U32 "u32" 32, U64 "u64" 64,
    F16 "f16" 16, Bf16 "bf16" 16, F32 "f32" 32, F64 "f64" 64,
}

impl ScalarType {
    /// Floating-point types.
    pub fn is_float(self) -> bool {
        matches!(
            self,
            ScalarType::F16 | ScalarType::Bf16 | ScalarType::F32 | ScalarType::F64
        )
    }

    /// The 16-bit float types (`f16`, `bf16`): stored in 16 bits, computed in `f32`.
    pub fn is_half(self) -> bool {
        matches!(self, ScalarType::F16 | ScalarType::Bf16)
    }
    /// Signed integer types (including `int`).
    pub fn is_signed_int(self) -> bool {
        matches!(
            self,
            ScalarType::Int | ScalarType::I8 | ScalarType::I16 | ScalarType::I32 | ScalarType::I64
        )
    }
    /// The smallest and largest value of an integer type (`None` for others).
    pub fn int_range(self) -> Option<(i128, i128)> {
        Some(match self {
            ScalarType::Int | ScalarType::I32 => (i32::MIN.into(), i32::MAX.into()),
            ScalarType::I8 => (i8::MIN.into(), i8::MAX.into()),
            ScalarType::I16 => (i16::MIN.into(), i16::MAX.into()),
            ScalarType::I64 => (i64::MIN.into(), i64::MAX.into()),
            ScalarType::U8 => (0, u8::MAX.into()),
            ScalarType::U16 => (0, u16::MAX.into()),
            ScalarType::U32 => (0, u32::MAX.into()),
            ScalarType::U64 => (0, u64::MAX.into()),
            ScalarType::Bool
            | ScalarType::F16
            | ScalarType::Bf16
            | ScalarType::F32
            | ScalarType::F64 => return None,
        })
    }

    /// Unsigned integer types.
    pub fn is_unsigned_int(self) -> bool {
        matches!(
            self,
            ScalarType::U8 | ScalarType::U16 | ScalarType::U32 | ScalarType::U64
        )
    }
}

/// Address spaces of memory (OpenCL naming; CUDA: shared = local, registers = private).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum AddrSpace {
    /// Device/main memory.
    Global,
    /// Memory shared by a work-group (CUDA block).
    Local,
    /// Memory private to one thread (registers).
    Private,
    /// Read-only constant memory.
    Constant,
    /// An address-space variable.
    Var(Name),
}

impl AddrSpace {
    /// The address space with this surface-syntax name.
    pub fn from_name(name: &str) -> Option<AddrSpace> {
        Some(match name {
            "global" => AddrSpace::Global,
            "local" => AddrSpace::Local,
            "private" => AddrSpace::Private,
            "constant" => AddrSpace::Constant,
            _ => return None,
        })
    }
}

impl fmt::Display for AddrSpace {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AddrSpace::Global => f.write_str("global"),
            AddrSpace::Local => f.write_str("local"),
            AddrSpace::Private => f.write_str("private"),
            AddrSpace::Constant => f.write_str("constant"),
            AddrSpace::Var(n) => f.write_str(n),
        }
    }
}

/// A type-level function from naturals to naturals.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum NatToNat {
    /// A variable of kind `nat -> nat`.
    Var(Name),
    /// `fun (x: nat) => body`.
    Lambda(Var, Nat),
}

impl NatToNat {
    /// Applies the function to an argument.
    pub fn apply(&self, arg: &Nat) -> Option<Nat> {
        match self {
            NatToNat::Var(_) => None,
            NatToNat::Lambda(x, body) => Some(body.substitute(x, arg)),
        }
    }
}

/// A type-level function from naturals to data types.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum NatToData {
    /// A variable of kind `nat -> data`.
    Var(Name),
    /// `fun (x: nat) => body`.
    Lambda(Var, Arc<DataType>),
}

/// Data types: the types of values that can be stored in memory.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum DataType {
    /// A scalar.
    Scalar(ScalarType),
    /// A natural number computed at run time (`indexAsNat`, `natAsIndex`).
    NatType,
    /// An index into an array of the given size: `idx[n]`.
    Index(Nat),
    /// An array `n.t`.
    Array(Nat, Arc<DataType>),
    /// A pair `(s, t)`.
    Pair(Arc<DataType>, Arc<DataType>),
    /// A SIMD vector `vec[t, n]` of `n` scalars.
    Vector(Nat, Arc<DataType>),
    /// A data-type variable.
    Var(Name),
    /// Application of a `nat -> data` function.
    NatToDataApp(NatToData, Nat),
}

impl DataType {
    /// `n.t`
    pub fn array(n: impl Into<Nat>, t: DataType) -> DataType {
        DataType::Array(n.into(), Arc::new(t))
    }
    /// `(s, t)`
    pub fn pair(s: DataType, t: DataType) -> DataType {
        DataType::Pair(Arc::new(s), Arc::new(t))
    }
    /// `vec[t, n]`
    pub fn vector(t: DataType, n: impl Into<Nat>) -> DataType {
        DataType::Vector(n.into(), Arc::new(t))
    }
    /// `f32`
    pub fn f32() -> DataType {
        DataType::Scalar(ScalarType::F32)
    }
    /// A data-type variable.
    pub fn var(name: &str) -> DataType {
        DataType::Var(name.into())
    }
}

/// A binder of a dependent function type: a name and its kind.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Binder {
    /// The bound name.
    pub name: Name,
    /// Its kind.
    pub kind: Kind,
}

impl Binder {
    /// A binder `name: kind`.
    pub fn new(name: impl Into<Name>, kind: Kind) -> Binder {
        Binder {
            name: name.into(),
            kind,
        }
    }
}

/// Types: data types, functions and dependent functions.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Type {
    /// A data type.
    Data(DataType),
    /// A function `a -> b`.
    Fun(Arc<Type>, Arc<Type>),
    /// A dependent function `{x: k} -> t` (implicit) or `(x: k) -> t` (explicit).
    DepFun {
        /// The bound type-level variable.
        binder: Binder,
        /// Implicit binders are instantiated by inference; explicit ones are applied.
        implicit: bool,
        /// The body.
        body: Arc<Type>,
    },
    /// A type variable (any type, including functions); only inference creates them.
    Var(Name),
}

impl Type {
    /// `a -> b`
    pub fn fun(a: Type, b: Type) -> Type {
        Type::Fun(Arc::new(a), Arc::new(b))
    }
    /// `{x: k} -> body` or `(x: k) -> body`.
    pub fn dep_fun(binder: Binder, implicit: bool, body: Type) -> Type {
        Type::DepFun {
            binder,
            implicit,
            body: Arc::new(body),
        }
    }
    /// The data type, if this is one.
    pub fn as_data(&self) -> Option<&DataType> {
        match self {
            Type::Data(d) => Some(d),
            _ => None,
        }
    }
}

impl From<DataType> for Type {
    fn from(d: DataType) -> Type {
        Type::Data(d)
    }
}

/// A type-level value: the argument of a dependent application.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum TypeArg {
    /// A natural number.
    Nat(Nat),
    /// A data type.
    Data(DataType),
    /// An address space.
    AddrSpace(AddrSpace),
    /// A `nat -> nat` function.
    NatToNat(NatToNat),
    /// A `nat -> data` function.
    NatToData(NatToData),
}

impl TypeArg {
    /// The kind of this value.
    pub fn kind(&self) -> Kind {
        match self {
            TypeArg::Nat(_) => Kind::Nat,
            TypeArg::Data(_) => Kind::Data,
            TypeArg::AddrSpace(_) => Kind::AddrSpace,
            TypeArg::NatToNat(_) => Kind::NatToNat,
            TypeArg::NatToData(_) => Kind::NatToData,
        }
    }

    /// The value a variable of `kind` named `name` stands for.
    pub fn var(name: &Name, kind: Kind) -> TypeArg {
        match kind {
            Kind::Nat => TypeArg::Nat(Nat::var(&Var::new(name.clone()))),
            Kind::Data => TypeArg::Data(DataType::Var(name.clone())),
            Kind::AddrSpace => TypeArg::AddrSpace(AddrSpace::Var(name.clone())),
            Kind::NatToNat => TypeArg::NatToNat(NatToNat::Var(name.clone())),
            Kind::NatToData => TypeArg::NatToData(NatToData::Var(name.clone())),
        }
    }
}

// ---------------------------------------------------------------------------
// Substitution of type-level variables
// ---------------------------------------------------------------------------

/// A substitution of type-level variables by values, applied structurally.
///
/// `lookup` answers the value of a variable (by name and kind) or `None` to keep
/// it. Binders of dependent function types shadow: a bound name is never replaced
/// below its binder.
pub trait TypeSubst {
    /// The replacement of a variable, if any.
    fn lookup(&self, name: &str, kind: Kind) -> Option<TypeArg>;

    /// The replacement of a type variable ([`Type::Var`], which may stand for a
    /// function type); by default the data-type replacement of that name.
    fn lookup_type(&self, name: &str) -> Option<Type> {
        match self.lookup(name, Kind::Data) {
            Some(TypeArg::Data(d)) => Some(Type::Data(d)),
            _ => None,
        }
    }
}

impl<F: Fn(&str, Kind) -> Option<TypeArg>> TypeSubst for F {
    fn lookup(&self, name: &str, kind: Kind) -> Option<TypeArg> {
        self(name, kind)
    }
}

/// A substitution with one name hidden: the view below a binder of that name.
pub(crate) struct Shadow<'a> {
    inner: &'a dyn TypeSubst,
    hidden: &'a str,
}

impl<'a> Shadow<'a> {
    /// `inner` without `hidden`.
    pub(crate) fn new(inner: &'a dyn TypeSubst, hidden: &'a str) -> Shadow<'a> {
        Shadow { inner, hidden }
    }
}

impl TypeSubst for Shadow<'_> {
    fn lookup(&self, name: &str, kind: Kind) -> Option<TypeArg> {
        if name == self.hidden {
            None
        } else {
            self.inner.lookup(name, kind)
        }
    }

    fn lookup_type(&self, name: &str) -> Option<Type> {
        if name == self.hidden {
            None
        } else {
            self.inner.lookup_type(name)
        }
    }
}

/// Applies a substitution to a natural number.
pub fn subst_nat(n: &Nat, s: &dyn TypeSubst) -> Nat {
    let mut map = std::collections::HashMap::new();
    for v in n.free_vars() {
        if let Some(TypeArg::Nat(by)) = s.lookup(v.name(), Kind::Nat) {
            map.insert(v, by);
        }
    }
    if map.is_empty() {
        n.clone()
    } else {
        n.substitute_all(&map)
    }
}

fn subst_addr(a: &AddrSpace, s: &dyn TypeSubst) -> AddrSpace {
    match a {
        AddrSpace::Var(n) => match s.lookup(n, Kind::AddrSpace) {
            Some(TypeArg::AddrSpace(by)) => by,
            _ => a.clone(),
        },
        _ => a.clone(),
    }
}

/// Applies a substitution to a `nat -> nat` function.
pub fn subst_n2n(f: &NatToNat, s: &dyn TypeSubst) -> NatToNat {
    match f {
        NatToNat::Var(n) => match s.lookup(n, Kind::NatToNat) {
            Some(TypeArg::NatToNat(by)) => by,
            _ => f.clone(),
        },
        NatToNat::Lambda(x, body) => {
            let inner = Shadow {
                inner: s,
                hidden: x.name(),
            };
            NatToNat::Lambda(x.clone(), subst_nat(body, &inner))
        }
    }
}

fn subst_n2d(f: &NatToData, s: &dyn TypeSubst) -> NatToData {
    match f {
        NatToData::Var(n) => match s.lookup(n, Kind::NatToData) {
            Some(TypeArg::NatToData(by)) => by,
            _ => f.clone(),
        },
        NatToData::Lambda(x, body) => {
            let inner = Shadow {
                inner: s,
                hidden: x.name(),
            };
            NatToData::Lambda(x.clone(), Arc::new(subst_data(body, &inner)))
        }
    }
}

/// Applies a substitution to a data type.
pub fn subst_data(d: &DataType, s: &dyn TypeSubst) -> DataType {
    match d {
        DataType::Scalar(_) | DataType::NatType => d.clone(),
        DataType::Index(n) => DataType::Index(subst_nat(n, s)),
        DataType::Array(n, t) => DataType::Array(subst_nat(n, s), Arc::new(subst_data(t, s))),
        DataType::Pair(a, b) => {
            DataType::Pair(Arc::new(subst_data(a, s)), Arc::new(subst_data(b, s)))
        }
        DataType::Vector(n, t) => DataType::Vector(subst_nat(n, s), Arc::new(subst_data(t, s))),
        DataType::Var(name) => match s.lookup(name, Kind::Data) {
            Some(TypeArg::Data(by)) => by,
            _ => d.clone(),
        },
        DataType::NatToDataApp(f, n) => {
            let f = subst_n2d(f, s);
            let n = subst_nat(n, s);
            match &f {
                NatToData::Lambda(x, body) => {
                    let arg = TypeArg::Nat(n);
                    let x = x.name().to_string();
                    subst_data(body, &move |name: &str, kind| {
                        (name == x && kind == Kind::Nat).then(|| arg.clone())
                    })
                }
                NatToData::Var(_) => DataType::NatToDataApp(f, n),
            }
        }
    }
}

/// Applies a substitution to a type.
pub fn subst_type(t: &Type, s: &dyn TypeSubst) -> Type {
    match t {
        Type::Data(d) => Type::Data(subst_data(d, s)),
        Type::Fun(a, b) => Type::fun(subst_type(a, s), subst_type(b, s)),
        Type::DepFun {
            binder,
            implicit,
            body,
        } => {
            let inner = Shadow {
                inner: s,
                hidden: &binder.name,
            };
            Type::dep_fun(binder.clone(), *implicit, subst_type(body, &inner))
        }
        Type::Var(name) => s.lookup_type(name).unwrap_or_else(|| t.clone()),
    }
}

/// Applies a substitution to a type-level argument.
pub fn subst_arg(a: &TypeArg, s: &dyn TypeSubst) -> TypeArg {
    match a {
        TypeArg::Nat(n) => TypeArg::Nat(subst_nat(n, s)),
        TypeArg::Data(d) => TypeArg::Data(subst_data(d, s)),
        TypeArg::AddrSpace(x) => TypeArg::AddrSpace(subst_addr(x, s)),
        TypeArg::NatToNat(f) => TypeArg::NatToNat(subst_n2n(f, s)),
        TypeArg::NatToData(f) => TypeArg::NatToData(subst_n2d(f, s)),
    }
}

impl Type {
    /// Replaces the variable bound by `binder` by `arg` (the body of a dependent application).
    pub fn instantiate(&self, binder: &Binder, arg: &TypeArg) -> Type {
        let name = binder.name.clone();
        let kind = binder.kind;
        subst_type(self, &move |n: &str, k: Kind| {
            (n == &*name && (k == kind || (kind == Kind::Data && k == Kind::Data)))
                .then(|| arg.clone())
        })
    }
}

// ---------------------------------------------------------------------------
// Printing (the surface syntax)
// ---------------------------------------------------------------------------

/// Prints a natural number so that it can stand before `.` in an array type.
pub struct AtomicNat<'a>(pub &'a Nat);

impl fmt::Display for AtomicNat<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0.as_cst().is_some_and(|c| c >= 0) || self.0.as_var().is_some() {
            write!(f, "{}", self.0)
        } else {
            write!(f, "({})", self.0)
        }
    }
}

impl fmt::Display for NatToNat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            NatToNat::Var(n) => f.write_str(n),
            NatToNat::Lambda(x, body) => write!(f, "(fun ({}: nat) => {})", x.name(), body),
        }
    }
}

impl fmt::Display for NatToData {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            NatToData::Var(n) => f.write_str(n),
            NatToData::Lambda(x, body) => write!(f, "(fun ({}: nat) => {})", x.name(), body),
        }
    }
}

impl fmt::Display for DataType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DataType::Scalar(s) => f.write_str(s.name()),
            DataType::NatType => f.write_str("natType"),
            DataType::Index(n) => write!(f, "idx[{n}]"),
            DataType::Array(n, t) => write!(f, "{}.{}", AtomicNat(n), t),
            DataType::Pair(a, b) => write!(f, "({a}, {b})"),
            DataType::Vector(n, t) => write!(f, "vec[{t}, {n}]"),
            DataType::Var(n) => f.write_str(n),
            DataType::NatToDataApp(g, n) => write!(f, "{g}({n})"),
        }
    }
}

impl fmt::Display for Type {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Type::Data(d) => write!(f, "{d}"),
            Type::Var(n) => f.write_str(n),
            Type::Fun(a, b) => match &**a {
                Type::Fun(..) | Type::DepFun { .. } => write!(f, "({a}) -> {b}"),
                _ => write!(f, "{a} -> {b}"),
            },
            Type::DepFun {
                binder,
                implicit,
                body,
            } => {
                // Merge consecutive binders of the same kind and implicitness: `{m n k: nat}`.
                let (open, close) = if *implicit { ('{', '}') } else { ('(', ')') };
                write!(f, "{open}{}", binder.name)?;
                let mut rest = &**body;
                while let Type::DepFun {
                    binder: b,
                    implicit: i,
                    body: next,
                } = rest
                {
                    if *i != *implicit || b.kind != binder.kind {
                        break;
                    }
                    write!(f, " {}", b.name)?;
                    rest = next;
                }
                write!(f, ": {}{close} -> {rest}", binder.kind)
            }
        }
    }
}
