//! The primitive table: every RISE primitive is declared here, once.
//!
//! Each entry gives the primitive's Rust name, its surface name and its type
//! scheme written in the surface syntax of types (ICFP'20 Fig. 4, RISE & Shine
//! Listing 2, thesis §4.3 for pad/slide), exactly as in the papers: implicit
//! parameters `{n: nat}` are instantiated by inference at each use, explicit ones
//! `(n: nat)` are applied by the program (`split 32`).
//!
//! Each entry reads `Variant "name" : SCHEME => sem::function, BACKEND;`: the Rust
//! name, the surface name, the type scheme, the interpreter semantics
//! ([`Prim::semantics`], a function of [`crate::interp::sem`]) and, optionally, what
//! the back end makes of it ([`Prim::backend`]: a loop of some kind and level, an
//! index-remapping view, a pattern to lower first, or not compiled yet; a row without
//! it is translated by an arm of its own).
//!
//! # Adding a primitive
//! 1. Add an entry to the table below: doc comment, Rust name, surface name,
//!    scheme, `=> sem::function` and its [`Backend`] column.
//! 2. Write that function in [`crate::interp::sem`]: it receives a saturated
//!    [`crate::interp::PrimCall`] (explicit type-level arguments, value arguments,
//!    and on demand the node's type with every size evaluated) and returns the result
//!    or an [`crate::interp::EvalError`], never panicking on user data. A low-level
//!    primitive points at its high-level form's function ([`Prim::high_level`]
//!    follows from its backend column).
//! 3. Add a test exercising it to the table of `interp::tests`
//!    (`every_primitive_has_tested_semantics` fails until you do).
//! 4. The back end (`dpia::translate`): a loop or a view needs nothing more than its
//!    column, unless it is a new kind of loop (`Loop`) or a new view (`ViewShape`,
//!    then a `dpia::View` variant with its equation); a row translated by its own
//!    arm needs that arm in `dpia::translate::prims`; `NotYet` rows are refused with
//!    "cannot be compiled yet". Add its case to the table of
//!    `dpia/tests/every_primitive.rs` (it fails until you do).
//! 5. The code generator only if the translation needs new code shapes.
//!
//! # Adding a math function
//! A math function (`sqrt`, `pow`, `min`, ...) is one row of the table's `math`
//! section: `Variant "name" (operands) : Domain => value`, its value an expression
//! of the operands that is computed for `f32` and for `f64` ([`MathFn::eval_f32`],
//! [`MathFn::eval_f64`]; `x.via_f64(f)` computes an `f32` through a double-precision
//! function of [`crate::interp::special`] where Rust's `f32` has no accurate one). That row makes the primitive, its scheme
//! (`{t: data} -> t -> ... -> t`), its domain (checked after type inference), its
//! semantics ([`crate::interp::sem::math`]) and its DPIA node (`ExpKind::Math`).
//! The surface name is the C99 and OpenCL name; the code generator's printers
//! derive each dialect's spelling from it (`codegen::print::math_call`), so only a
//! function that C, OpenCL or CUDA spells otherwise needs a line there. Integer
//! semantics (domain `Number`) are `Scalar::math`'s and `codegen::intops::math`'s.
//! Add a case to the table of `interp::tests` and to `dpia/tests/every_primitive.rs`.

use crate::interp::sem::{self, Semantics};
use crate::interp::special::{self, ViaF64};
use crate::types::Type;
use std::sync::OnceLock;

const MAP: &str = "{n: nat} -> {s t: data} -> (s -> t) -> n.s -> n.t";
const REDUCE_SEQ: &str = "{n: nat} -> {s t: data} -> (t -> s -> t) -> t -> n.s -> t";
const UNARY: &str = "{t: data} -> t -> t";
const BINARY: &str = "{t: data} -> t -> t -> t";
const TERNARY: &str = "{t: data} -> t -> t -> t -> t";
const COMPARE: &str = "{t: data} -> t -> t -> bool";
const PAD: &str = "(l r: nat) -> {n: nat} -> {t: data} -> n.t -> (l+n+r).t";

macro_rules! primitives {
    (
        math { $($(#[doc = $mdoc:literal])* $mvariant:ident $mname:literal ($($marg:ident),+) : $domain:ident => $body:expr;)* }
        $($(#[doc = $doc:literal])* $variant:ident $name:literal : $scheme:expr => $sem:path $(, $backend:expr)?;)*
    ) => {
        /// A RISE primitive.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum Prim { $($(#[doc = $doc])* $variant,)* $($(#[doc = $mdoc])* $mvariant),* }

        impl Prim {
            /// Every primitive, in table order.
            pub const ALL: &'static [Prim] = &[$(Prim::$variant,)* $(Prim::$mvariant),*];

            /// The surface name (`map`, `mapGlobal(0)`, ...).
            pub fn name(self) -> &'static str {
                match self { $(Prim::$variant => $name,)* $(Prim::$mvariant => $mname),* }
            }

            /// The type scheme as written in the table.
            pub fn scheme_source(self) -> &'static str {
                match self { $(Prim::$variant => $scheme,)* $(Prim::$mvariant => MathFn::$mvariant.scheme_source()),* }
            }

            /// The interpreter semantics (a function of [`crate::interp::sem`]).
            pub fn semantics(self) -> Semantics {
                match self { $(Prim::$variant => $sem,)* $(Prim::$mvariant => sem::math),* }
            }

            /// What the back end makes of it (the table's last column; [`Backend::Own`]
            /// where the row gives none, and for the math functions).
            pub fn backend(self) -> Backend {
                #[allow(unused_imports)]
                use {Backend::*, Loop::*, ViewShape::*};
                match self { $(Prim::$variant => primitives!(@backend $($backend)?),)* $(Prim::$mvariant => Backend::Own),* }
            }

            /// The math function this primitive is, if it is one.
            pub fn math(self) -> Option<MathFn> {
                match self { $(Prim::$mvariant => Some(MathFn::$mvariant),)* _ => None }
            }
        }

        /// A math function of the C99 / OpenCL set (the `math` section of the
        /// primitive table): each is also a [`Prim`].
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum MathFn { $($(#[doc = $mdoc])* $mvariant),* }

        impl MathFn {
            /// Every math function, in table order.
            pub const ALL: &'static [MathFn] = &[$(MathFn::$mvariant),*];

            /// The surface name, which is also the C99 (`double`) and OpenCL name.
            pub fn name(self) -> &'static str {
                match self { $(MathFn::$mvariant => $mname),* }
            }

            /// The number of operands.
            pub fn arity(self) -> usize {
                match self { $(MathFn::$mvariant => [$(stringify!($marg)),+].len()),* }
            }

            /// The scalar types it takes.
            pub fn domain(self) -> Domain {
                match self { $(MathFn::$mvariant => Domain::$domain),* }
            }

            /// The primitive.
            pub fn prim(self) -> Prim {
                match self { $(MathFn::$mvariant => Prim::$mvariant),* }
            }

            /// The function on `f64` operands (`args.len()` must be the arity; NaN otherwise).
            pub fn eval_f64(self, args: &[f64]) -> f64 {
                match self {
                    $(MathFn::$mvariant => match args {
                        &[$($marg),+] => $body,
                        _ => f64::NAN,
                    }),*
                }
            }

            /// The function on `f32` operands, computed in single precision.
            pub fn eval_f32(self, args: &[f32]) -> f32 {
                match self {
                    $(MathFn::$mvariant => match args {
                        &[$($marg),+] => $body,
                        _ => f32::NAN,
                    }),*
                }
            }
        }
    };
    (@backend) => { Backend::Own };
    (@backend $backend:expr) => { $backend };
}

/// The scalar types a [`MathFn`] takes (elementwise on vectors of them).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Domain {
    /// Floating-point types only (`f16`, `bf16`, `f32`, `f64`).
    Float,
    /// Integer and floating-point types (integers wrap: `abs` of the most
    /// negative value is itself).
    Number,
}

impl Domain {
    /// Whether a scalar type is in the domain.
    pub fn admits(self, s: crate::types::ScalarType) -> bool {
        match self {
            Domain::Float => s.is_float(),
            Domain::Number => s != crate::types::ScalarType::Bool,
        }
    }

    /// What the domain takes, for messages ("a floating-point value").
    pub fn describe(self) -> &'static str {
        match self {
            Domain::Float => "a floating-point value",
            Domain::Number => "an integer or floating-point value",
        }
    }
}

impl Prim {
    /// The bitwise operations and shifts, whose `{t: data}` must be an integer type
    /// (checked after inference, as the math functions' domains are).
    pub fn integer_only(self) -> bool {
        matches!(
            self,
            Prim::BitAnd | Prim::BitOr | Prim::BitXor | Prim::BitNot | Prim::Shl | Prim::Shr
        )
    }
}

impl MathFn {
    /// The type scheme: `{t: data} -> t -> ... -> t` with one `t` per operand
    /// (the domain is checked after inference, see [`Domain`]).
    pub fn scheme_source(self) -> &'static str {
        match self.arity() {
            1 => UNARY,
            2 => BINARY,
            _ => TERNARY,
        }
    }
}

/// What the back end makes of a primitive: the last column of the table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Backend {
    /// Translated by an arm of its own (scalar operations, bindings, pairs, pads,
    /// `generate`, a `map` that is read, ...).
    Own,
    /// A lowered `map`: a loop of this kind.
    MapLoop(Loop),
    /// A lowered `reduce`: a sequential loop of this kind over an accumulator.
    ReduceLoop(Loop),
    /// An index-remapping view: reading it reads its operand elsewhere (DPIA's `View`).
    View(ViewShape),
    /// A high-level pattern that a strategy must lower first; how.
    Lower(&'static str),
    /// Not compiled yet; why.
    NotYet(&'static str),
}

/// The loop a lowered pattern runs as: its kind and its level of parallelism.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Loop {
    /// One iteration after another.
    Seq,
    /// One after another, unrolled.
    Unroll,
    /// Iterations split among CPU threads (OpenMP).
    Par,
    /// GPU: every work-item / thread of the launch, in a dimension.
    Global(u8),
    /// GPU: the work-groups / thread blocks, in a dimension.
    WorkGroup(u8),
    /// GPU: the work-items / threads of a work-group, in a dimension.
    Local(u8),
    /// CUDA: the warps of a block (of a warp group, inside a `mapWarpGroup` loop).
    Warp,
    /// CUDA: the lanes of a warp.
    Lane,
    /// CUDA: the warp groups of a block (4 consecutive warps, 128 threads: Hopper's unit
    /// of `wgmma`).
    WarpGroup,
    /// CUDA: one iteration after another, the copies of the next `s - 1` iterations'
    /// operands into shared memory in flight while this one computes (`s` stages of
    /// asynchronous copies, `cp.async`).
    Pipelined(u8),
}

/// Which index-remapping view a primitive is (its sizes come from its arguments
/// and types when it is translated).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ViewShape {
    /// `split n`.
    Split,
    /// `join`.
    Join,
    /// `transpose`.
    Transpose,
    /// `slide size step`.
    Slide,
    /// `take n`.
    Take,
    /// `drop n`.
    Drop,
    /// `asScalar`.
    AsScalar,
    /// `reorder f finv`.
    Reorder,
}

primitives! {
    // ---- math functions (C99 / OpenCL; elementwise on vectors) ------------------
    // `Variant "name" (operands) : Domain => value`: the value is computed in the
    // operands' precision (`f32` in single, `f64` in double, `f16` and `bf16` through `f32`),
    // or through `f64` and rounded once (`via_f64`) where Rust's `f32` has no
    // accurate function.
    // Integers (domain `Number`) follow `Scalar::math`. (`ExpE`, not `Exp`, which
    // would shadow DPIA's `Exp` where the variants are imported.)
    math {
        /// `sqrt x`: the square root.
        Sqrt "sqrt" (x) : Float => x.sqrt();
        /// `rsqrt x`: the reciprocal square root, `1 / sqrt x`.
        Rsqrt "rsqrt" (x) : Float => 1.0 / x.sqrt();
        /// `cbrt x`: the cube root (negative for negative `x`).
        Cbrt "cbrt" (x) : Float => x.cbrt();
        /// `exp x`: e to the power `x`.
        ExpE "exp" (x) : Float => x.exp();
        /// `exp2 x`: 2 to the power `x`.
        Exp2 "exp2" (x) : Float => x.exp2();
        /// `expm1 x`: `exp x - 1`, accurate for `x` near 0.
        Expm1 "expm1" (x) : Float => x.exp_m1();
        /// `log x`: the natural logarithm.
        Log "log" (x) : Float => x.ln();
        /// `log2 x`: the base-2 logarithm.
        Log2 "log2" (x) : Float => x.log2();
        /// `log10 x`: the base-10 logarithm.
        Log10 "log10" (x) : Float => x.log10();
        /// `log1p x`: `log (1 + x)`, accurate for `x` near 0.
        Log1p "log1p" (x) : Float => x.ln_1p();
        /// `pow x y`: `x` to the power `y`.
        Pow "pow" (x, y) : Float => x.powf(y);
        /// `sin x` (radians).
        Sin "sin" (x) : Float => x.sin();
        /// `cos x` (radians).
        Cos "cos" (x) : Float => x.cos();
        /// `tan x` (radians).
        Tan "tan" (x) : Float => x.tan();
        /// `tanh x`: the hyperbolic tangent.
        Tanh "tanh" (x) : Float => x.tanh();
        /// `asin x`: the arc sine, in `[-pi/2, pi/2]` (NaN outside `[-1, 1]`).
        Asin "asin" (x) : Float => x.asin();
        /// `acos x`: the arc cosine, in `[0, pi]` (NaN outside `[-1, 1]`).
        Acos "acos" (x) : Float => x.acos();
        /// `atan x`: the arc tangent, in `[-pi/2, pi/2]`.
        Atan "atan" (x) : Float => x.atan();
        /// `atan2 y x`: the angle of the point `(x, y)`, in `[-pi, pi]`.
        Atan2 "atan2" (y, x) : Float => y.atan2(x);
        /// `sinh x`: the hyperbolic sine.
        Sinh "sinh" (x) : Float => x.sinh();
        /// `cosh x`: the hyperbolic cosine.
        Cosh "cosh" (x) : Float => x.cosh();
        /// `asinh x`: the inverse hyperbolic sine (computed in double precision,
        /// [`special::asinh`]).
        Asinh "asinh" (x) : Float => x.via_f64(special::asinh);
        /// `acosh x`: the inverse hyperbolic cosine (NaN below 1; in double
        /// precision, [`special::acosh`]).
        Acosh "acosh" (x) : Float => x.via_f64(special::acosh);
        /// `atanh x`: the inverse hyperbolic tangent (±infinity at ±1, NaN beyond;
        /// in double precision, [`special::atanh`]).
        Atanh "atanh" (x) : Float => x.via_f64(special::atanh);
        /// `erf x`: the error function, `2/sqrt(pi)` times the integral of
        /// `exp(-t*t)` from 0 to `x` (in double precision, [`special::erf`]).
        Erf "erf" (x) : Float => x.via_f64(special::erf);
        /// `erfc x`: the complementary error function, `1 - erf x` without its
        /// cancellation (in double precision, [`special::erfc`]).
        Erfc "erfc" (x) : Float => x.via_f64(special::erfc);
        /// `hypot x y`: `sqrt (x*x + y*y)` without overflow or underflow on the way.
        Hypot "hypot" (x, y) : Float => x.hypot(y);
        /// `fabs x`: the absolute value of a float.
        Fabs "fabs" (x) : Float => x.abs();
        /// `floor x`: the largest integral value not above `x`.
        Floor "floor" (x) : Float => x.floor();
        /// `ceil x`: the smallest integral value not below `x`.
        Ceil "ceil" (x) : Float => x.ceil();
        /// `round x`: the nearest integral value, halfway cases away from zero
        /// (C's `round`: `round 2.5` is 3, `round (-2.5)` is -3; not banker's rounding).
        Round "round" (x) : Float => x.round();
        /// `trunc x`: the integral value nearest `x` not larger in magnitude.
        Trunc "trunc" (x) : Float => x.trunc();
        /// `fmin x y`: the smaller operand; a NaN operand is ignored (C's `fmin`).
        Fmin "fmin" (x, y) : Float => x.min(y);
        /// `fmax x y`: the larger operand; a NaN operand is ignored (C's `fmax`).
        Fmax "fmax" (x, y) : Float => x.max(y);
        /// `copysign x y`: the magnitude of `x` with the sign of `y`.
        Copysign "copysign" (x, y) : Float => x.copysign(y);
        /// `fmod x y`: the remainder of `x / y` truncated toward zero, with the
        /// sign of `x` (C's `fmod`, exact; NaN where `y` is 0 or `x` infinite).
        Fmod "fmod" (x, y) : Float => x % y;
        /// `fma x y z`: `x * y + z`, rounded once.
        Fma "fma" (x, y, z) : Float => x.mul_add(y, z);
        /// `min x y`: the smaller operand (`fmin` on floats).
        Min "min" (x, y) : Number => x.min(y);
        /// `max x y`: the larger operand (`fmax` on floats).
        Max "max" (x, y) : Number => x.max(y);
        /// `abs x`: the absolute value (`fabs` on floats; on integers it wraps:
        /// `abs` of the most negative value is itself).
        Abs "abs" (x) : Number => x.abs();
    }
    // ---- scalar operations -------------------------------------------------
    /// The identity.
    Id "id" : UNARY => sem::id;
    /// Negation.
    Neg "neg" : UNARY => sem::neg;
    /// Addition (`+`), elementwise on vectors.
    Add "add" : BINARY => sem::add;
    /// Subtraction (`-`).
    Sub "sub" : BINARY => sem::sub;
    /// Multiplication (`*`).
    Mul "mul" : BINARY => sem::mul;
    /// Division (`/`); integer division truncates.
    Div "div" : BINARY => sem::div;
    /// Remainder (`%`).
    Mod "mod" : BINARY => sem::modulo;
    /// `select c a b` is `a` when `c` holds, else `b`.
    Select "select" : "{t: data} -> bool -> t -> t -> t" => sem::select;
    /// Boolean negation.
    Not "not" : "bool -> bool" => sem::not;
    /// `>`
    Gt "gt" : COMPARE => sem::gt;
    /// `<`
    Lt "lt" : COMPARE => sem::lt;
    /// `<=`
    Le "le" : COMPARE => sem::le;
    /// `>=`
    Ge "ge" : COMPARE => sem::ge;
    /// `==`
    Equal "equal" : COMPARE => sem::equal;
    /// `!=` (true when a NaN is involved)
    NotEqual "notEqual" : COMPARE => sem::not_equal;
    /// `&&`: `b` only where `a` holds (a failed `b` is discarded when `a` is false).
    And "and" : "bool -> bool -> bool" => sem::and;
    /// `||`: `b` only where `a` does not hold.
    Or "or" : "bool -> bool -> bool" => sem::or;
    /// `&` on integers.
    BitAnd "bitAnd" : BINARY => sem::bit_and;
    /// `|` on integers.
    BitOr "bitOr" : BINARY => sem::bit_or;
    /// `^` on integers.
    BitXor "bitXor" : BINARY => sem::bit_xor;
    /// `~` on integers.
    BitNot "bitNot" : UNARY => sem::bit_not;
    /// `<<` on integers: wraps (two's complement); an amount outside `0..width` is an error.
    Shl "shl" : BINARY => sem::shl;
    /// `>>` on integers: arithmetic on signed types; an amount outside `0..width` is an error.
    Shr "shr" : BINARY => sem::shr;
    /// Conversion between scalar types (C semantics).
    Cast "cast" : "{s t: data} -> s -> t" => sem::cast;
    /// An index as a run-time natural number.
    IndexAsNat "indexAsNat" : "{n: nat} -> idx[n] -> natType" => sem::index_as_nat;
    /// A run-time natural number as an index (must be below `n`).
    NatAsIndex "natAsIndex" : "(n: nat) -> natType -> idx[n]" => sem::nat_as_index;
    // ---- binding and memory ------------------------------------------------
    /// `let v f` is `f v`, sharing the value `v` (no memory decision).
    Let "let" : "{s t: data} -> s -> (s -> t) -> t" => sem::let_;
    /// `toMem a v f` stores `v` in memory of address space `a`, then continues with `f`.
    ToMem "toMem" : "(a: addrSpace) -> {s t: data} -> s -> (s -> t) -> t" => sem::to_mem;
    // ---- array construction and access -----------------------------------
    /// `generate f` is the array `[f 0, ..., f (n-1)]`.
    Generate "generate" : "{n: nat} -> {t: data} -> (idx[n] -> t) -> n.t" => sem::generate;
    /// `idx i xs` is the element `xs[i]`.
    Idx "idx" : "{n: nat} -> {t: data} -> idx[n] -> n.t -> t" => sem::idx;
    /// The first `n` elements.
    Take "take" : "(n: nat) -> {m: nat} -> {t: data} -> (n+m).t -> n.t" => sem::take, View(Take);
    /// All but the first `n` elements.
    Drop "drop" : "(n: nat) -> {m: nat} -> {t: data} -> (n+m).t -> m.t" => sem::drop, View(Drop);
    /// Concatenation.
    Concat "concat" : "{n m: nat} -> {t: data} -> n.t -> m.t -> (n+m).t" => sem::concat;
    /// An array of `m*n` elements as `m` chunks of `n`.
    Split "split" : "(n: nat) -> {m: nat} -> {t: data} -> (m*n).t -> m.n.t" => sem::split, View(Split);
    /// Flattens the outer two dimensions.
    Join "join" : "{n m: nat} -> {t: data} -> n.m.t -> (n*m).t" => sem::join, View(Join);
    /// Windows of `sz` elements every `sp` elements (thesis §4.3.1).
    Slide "slide" : "(sz sp: nat) -> {n: nat} -> {t: data} -> (sp*n+sz).t -> (n+1).sz.t" => sem::slide, View(Slide);
    /// Swaps the outer two dimensions.
    Transpose "transpose" : "{n m: nat} -> {t: data} -> n.m.t -> m.n.t" => sem::transpose, View(Transpose);
    /// Pairs up two arrays of equal length.
    Zip "zip" : "{n: nat} -> {s t: data} -> n.s -> n.t -> n.(s, t)" => sem::zip;
    /// An array of pairs as a pair of arrays.
    Unzip "unzip" : "{n: nat} -> {s t: data} -> n.(s, t) -> (n.s, n.t)" => sem::unzip;
    /// Builds a pair.
    MakePair "makePair" : "{s t: data} -> s -> t -> (s, t)" => sem::make_pair;
    /// First component.
    Fst "fst" : "{s t: data} -> (s, t) -> s" => sem::fst;
    /// Second component.
    Snd "snd" : "{s t: data} -> (s, t) -> t" => sem::snd;
    /// Applies a function to the first component.
    MapFst "mapFst" : "{s1 s2 t: data} -> (s1 -> s2) -> (s1, t) -> (s2, t)" => sem::map_fst;
    /// Applies a function to the second component.
    MapSnd "mapSnd" : "{s t1 t2: data} -> (t1 -> t2) -> (s, t1) -> (s, t2)" => sem::map_snd;
    /// Pads with a constant value on both sides (thesis §4.3.2; numpy `constant`).
    PadCst "padCst" : "(l r: nat) -> {n: nat} -> {t: data} -> t -> n.t -> (l+n+r).t" => sem::pad_cst;
    /// Pads by repeating the boundary elements (numpy `edge`).
    PadClamp "padClamp" : PAD => sem::pad_clamp;
    /// Pads by mirroring at the boundary, repeating the edge element (`[b a | a b c | c b]`,
    /// numpy `symmetric`).
    PadMirror "padMirror" : PAD => sem::pad_mirror;
    /// Pads by wrapping around (`[b c | a b c | a b]`, numpy `wrap`).
    PadWrap "padWrap" : PAD => sem::pad_wrap;
    // ---- patterns ------------------------------------------------------------
    /// Applies a function to every element.
    Map "map" : MAP => sem::map;
    /// Reduces with an associative, commutative operator and its neutral element
    /// (the interpreter folds from the left: `f(...f(f(init, x0), x1)..., x(n-1))`).
    Reduce "reduce" : "{n: nat} -> {t: data} -> (t -> t -> t) -> t -> n.t -> t" => sem::reduce, Lower("lower it to reduceSeq (e.g. with lowerToC or toReduceSeq)");
    /// `reduceWarp f xs`: the 32 values of a warp's lanes (one each, inside `mapWarp`)
    /// reduced by shuffles in butterfly order (steps 16, 8, 4, 2, 1: `v[j] := f v[j]
    /// v[j xor o]`); the result is lane 0's, and every lane gets it. The
    /// `reduceToWarp` rule introduces it from `reduce` over 32 values. Compiled for
    /// CUDA only (`__shfl_xor_sync`), inside a `mapWarp` loop.
    ReduceWarp "reduceWarp" : "{t: data} -> (t -> t -> t) -> 32.t -> t" => sem::reduce_warp;
    /// `scanWarp f xs`: the inclusive scan of the 32 values of a warp's lanes (one each,
    /// inside `mapWarp`) by shuffles in Hillis and Steele's order (steps `d` = 1, 2, 4, 8,
    /// 16: `v[j] := f v[j] v[j − d]` for `j ≥ d`), lane `l` ending with element `l` (for an
    /// associative `f`, `f x_l (... (f x_1 x_0))`). The `workGroupScanWarps` rule
    /// introduces it. Compiled for CUDA only (`__shfl_up_sync`), inside a `mapWarp` loop.
    ScanWarp "scanWarp" : "{t: data} -> (t -> t -> t) -> 32.t -> 32.t" => sem::scan_warp;
    /// `mmaSync a b c`: a warp's tensor-core multiply-accumulate `D = A·B + C` of a 16×16
    /// tile `A` and a 16×8 tile `B` of `f16` or `bf16` with a 16×8 `f32` accumulator `C`,
    /// each given as its *fragment*: row `l` is what lane `l` holds (the layouts of
    /// [`crate::fragments`]; the views `fragA`, `fragB`, `fragC`, `unfragC` make and undo
    /// them). The products are exact and their sum with `C` is rounded to `f32` once in the
    /// interpreter; the tensor cores sum in an order and with roundings of their own, so
    /// compiled results agree within the `f32` tolerance. Compiled for CUDA only
    /// (`mma.sync.aligned.m16n8k16`, compute capability 8.0 or newer), inside a
    /// `mapWarp` loop and outside `mapLane` loops.
    MmaSync "mmaSync" : "{t: data} -> 32.8.t -> 32.4.t -> 32.4.f32 -> 32.4.f32" => sem::mma_sync;
    /// `wgmma a b c`: a warp group's (4 warps') tensor-core multiply-accumulate `D = A·B + C`
    /// of a 64×16 tile `A` and a 16×(8c) tile `B` of `f16` or `bf16` (plain row-major
    /// tiles) with a 64×(8c) `f32` accumulator given as the warps' fragments (`4.32.c.4`:
    /// warp `w`, lane `l`, chunk `j`, element `i` is [`crate::fragments::group_c_element`]).
    /// The products are exact and each sum is rounded to `f32` once in the interpreter.
    /// Hopper's `wgmma.mma_async.m64nNk16` reads `A` and `B` from shared memory through
    /// descriptors: compiled for CUDA on compute capability 9.0 (`sm_90a`) inside a
    /// `mapWarpGroup` loop, where `A` and `B` are views of local memory in one of the layouts
    /// the instruction reads (128-byte swizzled rows; code generation proves the layout
    /// element by element and refuses any other).
    Wgmma "wgmma" : "{c: nat} -> {t: data} -> 64.16.t -> 16.(c*8).t -> 4.32.c.4.f32 -> 4.32.c.4.f32" => sem::wgmma;
    /// Inclusive prefix scan, sequentially: `acc_i = f x_i acc_(i-1)`, `acc_(-1) = init`.
    ScanSeq "scanSeq" : "{n: nat} -> {s t: data} -> (s -> t -> t) -> t -> n.s -> n.t" => sem::scan_seq;
    /// `slideSeq sz f xs` is `map f (slide sz 1 xs)` computed in order: `f` on every window
    /// of `sz` consecutive elements, the window kept in private memory (registers) and moved
    /// on by one element per step (the oldest dropped, one new element read), so that every
    /// element of `xs` is read once (a stencil streamed along a dimension: 2.5-D blocking).
    /// The `slideSeq` rule introduces it from `mapSeq f (slide sz 1 xs)`.
    SlideSeq "slideSeq" : "(sz: nat) -> {n: nat} -> {s t: data} -> (sz.s -> t) -> (n+sz).s -> (n+1).t" => sem::slide_seq;
    /// `scanLookback w m f init e g xs`: the inclusive scan of `xs` by `f` from `init`
    /// (`scanSeq f init xs` where `f` is associative and commutative with the neutral
    /// element `e`), computed in tiles of `m` consecutive elements (the last padded with
    /// `e`): every tile is scanned by `g` (a scan from `e`), and element `i` of tile `j` is
    /// `f s_j[i] o_j`, where `o_0 = init` and `o_(j+1) = f s_j[m-1] o_j` (the tile's
    /// offset). Compiled for OpenCL and CUDA as one pass of Merrill and Garland's
    /// decoupled look-back: a work-group of `w` work-items per tile, tiles numbered in the
    /// order the work-groups start (an atomic counter), each publishing its aggregate and
    /// then its inclusive prefix in a 64-bit descriptor its successors look back on
    /// (`dpia::translate`'s `lookback` module). The `singlePassScan` rule introduces it.
    ScanLookback "scanLookback" : "(w m: nat) -> {n: nat} -> {t: data} -> (t -> t -> t) -> t -> t -> (m.t -> m.t) -> n.t -> n.t" => sem::scan_lookback;
    /// `iterate k f` applies `f` `k` times, each time shrinking the array by `n`.
    Iterate "iterate" : "{n m: nat} -> (k: nat) -> {t: data} -> ((l: nat) -> (l*n).t -> l.t) -> (m*n^k).t -> m.t" => sem::iterate;
    /// `gather is xs` is `[xs[is[0]], ...]`.
    Gather "gather" : "{n m: nat} -> {t: data} -> m.idx[n] -> n.t -> m.t" => sem::gather;
    /// `scatter is xs` writes `xs[j]` to position `is[j]` (positions must be distinct).
    Scatter "scatter" : "{n m: nat} -> {t: data} -> n.idx[m] -> n.t -> m.t" => sem::scatter;
    /// Permutes an array with an index function `f` and its inverse: element `i` of the result is `xs[f i]`.
    Reorder "reorder" : "{n: nat} -> {t: data} -> (f finv: nat -> nat) -> n.t -> n.t" => sem::reorder, View(Reorder);
    // ---- vectors ---------------------------------------------------------------
    /// Groups `n` consecutive scalars into a vector.
    AsVector "asVector" : "(n: nat) -> {m: nat} -> {t: data} -> (m*n).t -> m.vec[t, n]" => sem::as_vector;
    /// Flattens an array of vectors.
    AsScalar "asScalar" : "{n m: nat} -> {t: data} -> m.vec[t, n] -> (m*n).t" => sem::as_scalar, View(AsScalar);
    /// A vector with every lane set to the scalar.
    VectorFromScalar "vectorFromScalar" : "{n: nat} -> {t: data} -> t -> vec[t, n]" => sem::vector_from_scalar;
    /// `makeArray n x1 ... xn`: an array of `n` values (its type has `n` value parameters).
    MakeArray "makeArray" : "(n: nat) -> {t: data} -> t -> n.t" => sem::make_array;
    /// `lane k v`: lane `k` of the vector `v` (`k < n`, a size constraint: see
    /// `constraints::of_application`).
    Lane "lane" : "(k: nat) -> {n: nat} -> {t: data} -> vec[t, n] -> t" => sem::lane;
    /// `makeVector n x1 ... xn`: a vector of `n` lanes (its type has `n` value
    /// parameters, as `makeArray`'s).
    MakeVector "makeVector" : "(n: nat) -> {t: data} -> t -> vec[t, n]" => sem::make_vector;
    // ---- low-level patterns (same semantics as their high-level form) ----------
    /// A sequential loop.
    MapSeq "mapSeq" : MAP => sem::map, MapLoop(Seq);
    /// A fully unrolled sequential loop.
    MapSeqUnroll "mapSeqUnroll" : MAP => sem::map, MapLoop(Unroll);
    /// A parallel loop (OpenMP).
    MapPar "mapPar" : MAP => sem::map, MapLoop(Par);
    /// A map over the lanes of a vector.
    MapVec "mapVec" : "{n: nat} -> {s t: data} -> (s -> t) -> vec[s, n] -> vec[t, n]" => sem::map_vec;
    /// A sequential reduction loop.
    ReduceSeq "reduceSeq" : REDUCE_SEQ => sem::reduce, ReduceLoop(Seq);
    /// A fully unrolled sequential reduction.
    ReduceSeqUnroll "reduceSeqUnroll" : REDUCE_SEQ => sem::reduce, ReduceLoop(Unroll);
    /// `reduceSeq` whose step begins by copying its element to local (shared) memory
    /// (`toMem local`, not reading the accumulator): the copies run `s - 1` iterations
    /// ahead, asynchronously, into `s` buffers (CUDA `cp.async`, 2 stages).
    ReduceSeqPipelined2 "reduceSeqPipelined(2)" : REDUCE_SEQ => sem::reduce, ReduceLoop(Pipelined(2));
    /// `reduceSeqPipelined` with 3 stages.
    ReduceSeqPipelined3 "reduceSeqPipelined(3)" : REDUCE_SEQ => sem::reduce, ReduceLoop(Pipelined(3));
    /// `reduceSeqPipelined` with 4 stages.
    ReduceSeqPipelined4 "reduceSeqPipelined(4)" : REDUCE_SEQ => sem::reduce, ReduceLoop(Pipelined(4));
    /// OpenCL: over global work-items, dimension 0.
    MapGlobal0 "mapGlobal(0)" : MAP => sem::map, MapLoop(Global(0));
    /// OpenCL: over global work-items, dimension 1.
    MapGlobal1 "mapGlobal(1)" : MAP => sem::map, MapLoop(Global(1));
    /// OpenCL: over global work-items, dimension 2.
    MapGlobal2 "mapGlobal(2)" : MAP => sem::map, MapLoop(Global(2));
    /// OpenCL: over work-groups, dimension 0.
    MapWorkGroup0 "mapWorkGroup(0)" : MAP => sem::map, MapLoop(WorkGroup(0));
    /// OpenCL: over work-groups, dimension 1.
    MapWorkGroup1 "mapWorkGroup(1)" : MAP => sem::map, MapLoop(WorkGroup(1));
    /// OpenCL: over work-groups, dimension 2.
    MapWorkGroup2 "mapWorkGroup(2)" : MAP => sem::map, MapLoop(WorkGroup(2));
    /// OpenCL: over local work-items of a work-group, dimension 0.
    MapLocal0 "mapLocal(0)" : MAP => sem::map, MapLoop(Local(0));
    /// OpenCL: over local work-items of a work-group, dimension 1.
    MapLocal1 "mapLocal(1)" : MAP => sem::map, MapLoop(Local(1));
    /// OpenCL: over local work-items of a work-group, dimension 2.
    MapLocal2 "mapLocal(2)" : MAP => sem::map, MapLoop(Local(2));
    /// CUDA: over thread blocks, dimension 0.
    MapBlock0 "mapBlock(0)" : MAP => sem::map, MapLoop(WorkGroup(0));
    /// CUDA: over thread blocks, dimension 1.
    MapBlock1 "mapBlock(1)" : MAP => sem::map, MapLoop(WorkGroup(1));
    /// CUDA: over thread blocks, dimension 2.
    MapBlock2 "mapBlock(2)" : MAP => sem::map, MapLoop(WorkGroup(2));
    /// CUDA: over threads of a block, dimension 0.
    MapThread0 "mapThread(0)" : MAP => sem::map, MapLoop(Local(0));
    /// CUDA: over threads of a block, dimension 1.
    MapThread1 "mapThread(1)" : MAP => sem::map, MapLoop(Local(1));
    /// CUDA: over threads of a block, dimension 2.
    MapThread2 "mapThread(2)" : MAP => sem::map, MapLoop(Local(2));
    /// CUDA: over the warps of a block (inside a `mapWarpGroup` loop: over the 4 warps of
    /// the warp group).
    MapWarp "mapWarp" : MAP => sem::map, MapLoop(Warp);
    /// CUDA: over the warp groups of a block (warp group `g` is the threads
    /// `128*g .. 128*g + 127`; Hopper's `wgmma` runs on one).
    MapWarpGroup "mapWarpGroup" : MAP => sem::map, MapLoop(WarpGroup);
    /// CUDA: over the lanes of a warp.
    MapLane "mapLane" : MAP => sem::map, MapLoop(Lane);
}

/// Primitives whose surface name takes a dimension: `mapGlobal(0)`.
pub const DIMENSIONED: &[&str] = &[
    "mapGlobal",
    "mapWorkGroup",
    "mapLocal",
    "mapBlock",
    "mapThread",
    "reduceSeqPipelined",
];

impl Prim {
    /// The primitive with this surface name (`mapGlobal(1)` for dimensioned ones).
    pub fn from_name(name: &str) -> Option<Prim> {
        Prim::ALL.iter().copied().find(|p| p.name() == name)
    }

    /// The type scheme, parsed once from the table.
    pub fn scheme(self) -> &'static Type {
        static SCHEMES: OnceLock<Vec<Type>> = OnceLock::new();
        let all = SCHEMES.get_or_init(|| {
            Prim::ALL
                .iter()
                .map(|p| {
                    crate::syntax::parse_type(p.scheme_source())
                        .unwrap_or_else(|e| panic!("bad scheme of {}: {e}", p.name()))
                })
                .collect()
        });
        &all[self as usize]
    }

    /// The number of value parameters of its scheme (type-level ones not counted).
    pub fn value_arity(self) -> usize {
        let mut t = self.scheme();
        let mut n = 0;
        loop {
            match t {
                Type::DepFun { body, .. } => t = body,
                Type::Fun(_, b) => {
                    n += 1;
                    t = b;
                }
                _ => return n,
            }
        }
    }

    /// The name of the high-level pattern this low-level primitive implements
    /// (itself for high-level primitives).
    pub fn high_level(self) -> Prim {
        match self.backend() {
            Backend::MapLoop(_) => Prim::Map,
            Backend::ReduceLoop(_) => Prim::ReduceSeq,
            _ => self,
        }
    }

    /// Whether this is one of the `map` variants (high- or low-level, not `mapVec`).
    pub fn is_map(self) -> bool {
        self.high_level() == Prim::Map
    }

    /// Layout primitives: they only rearrange, select or pair data, so their
    /// application is a *view* of their operands that code generation turns into
    /// index arithmetic, with no loop and no computation (RISE & Shine §V-A).
    pub fn is_layout(self) -> bool {
        use Prim::*;
        matches!(
            self,
            Id | Split
                | Join
                | Slide
                | Transpose
                | Zip
                | Unzip
                | MakePair
                | Fst
                | Snd
                | Take
                | Drop
                | Concat
                | PadCst
                | PadClamp
                | PadMirror
                | PadWrap
                | AsVector
                | AsScalar
                | Idx
                | Lane
                | Reorder
        )
    }

    /// Whether this is `reduce` or one of its sequential forms.
    pub fn is_reduce(self) -> bool {
        matches!(self.high_level(), Prim::Reduce | Prim::ReduceSeq)
    }

    /// Whether its explicit size `n` is the number of its value arguments
    /// (`makeArray n x1 ... xn`, `makeVector n x1 ... xn`): its scheme shows one, the
    /// type checker gives it `n`.
    pub fn takes_n_values(self) -> bool {
        matches!(self, Prim::MakeArray | Prim::MakeVector)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_scheme_parses_and_names_are_unique() {
        let mut names = std::collections::HashSet::new();
        for p in Prim::ALL {
            assert!(names.insert(p.name()), "duplicate {}", p.name());
            let _ = p.scheme();
            assert_eq!(Prim::from_name(p.name()), Some(*p));
        }
    }
}
