//! Views: reading an expression at a path and writing an acceptor at a path.
//! Every view rewrites the path by its equation and passes it on, until the
//! path reaches memory (a [`MemPlace`](super::memory::MemPlace)) or a computed
//! value. A new read view is one arm in [`Lowerer::read`], a new write view one
//! arm in [`Lowerer::dest`].

use arith::Nat;
use dpia::{Acc, AccKind, Exp, ExpKind, PadMode, View};
use rise::primitives::MathFn;
use rise::{DataType, Literal, ScalarType};

use super::memory::MemPlace;
use super::vector::{path_mentions, place_mentions};
use super::{canonical, Env, Lowerer, Res};
use crate::ast::{BinOp, Expr, Scalar, Type, UnOp};
use crate::ctypes::{
    lane_count, moved_half_vector, scalar, scalar_of, vector_elem_lanes, vector_shape,
};
use crate::error::{malformed, unsupported};
use crate::halfs;
use crate::intops;
use crate::layout::{show_step, show_type, PathElem};
use crate::nat_expr::nat_to_expr;
use crate::Target;

/// The result of reading an expression at a path.
pub(super) enum Read {
    /// A memory location holding the value.
    Mem(MemPlace),
    /// A computed value.
    Value(Expr),
}

/// Where a write at a path lands.
pub(super) enum Dest<'a> {
    /// A memory location.
    Mem(MemPlace),
    /// A whole vector written through `asVectorAcc`: its lanes go to elements
    /// `index*lanes + l` of `acc`, in the environment `env`.
    Vector {
        acc: &'a Acc,
        env: Env,
        index: Nat,
        lanes: u32,
    },
}

impl Lowerer {
    /// The C value of `e` read at `path`.
    pub(super) fn value(&mut self, env: &Env, e: &Exp, path: &[PathElem]) -> Res<Expr> {
        match self.read(env, e, path)? {
            Read::Mem(p) => self.place_expr(env, &p),
            Read::Value(v) => Ok(v),
        }
    }

    pub(super) fn read(&mut self, env: &Env, e: &Exp, path: &[PathElem]) -> Res<Read> {
        use ExpKind as K;
        let value = |v: Expr| Ok(Read::Value(v));
        if let Some(mode) = &mut self.vector_mode {
            let vectorizable = match &*e.kind {
                // 16-bit floats are computed one value at a time
                _ if mentions_half(&e.ty) => false,
                K::Binary(op, a, _) => match op {
                    dpia::BinOp::Add | dpia::BinOp::Sub | dpia::BinOp::Mul => true,
                    // integer division is checked lane by lane
                    dpia::BinOp::Div => !is_int_data(&a.ty),
                    _ => false,
                },
                K::Unary(op, _) => *op == dpia::UnOp::Neg,
                K::Nat(n) => !env.nat(n).contains_var(&mode.lane),
                // a clamped border: see `Lowerer::vector_pad`; other pads only
                // where the lanes read the same element
                K::Pad(_, _, PadMode::Clamp, _) => true,
                K::Pad(_, _, PadMode::Cst(_), _) => false,
                K::Pad(..) => !path_mentions(&path[..path.len().min(1)], &mode.lane),
                K::Select(..)
                | K::Math(..)
                | K::Cast(_)
                | K::Concat(..)
                | K::AsVector(..)
                | K::View(View::AsScalar(_), _)
                | K::VectorFromScalar(_)
                | K::Lane(..)
                | K::MakeVector(_)
                | K::At(..)
                | K::Shuffle(..)
                | K::Mma(..)
                | K::Foreign(..) => false,
                _ => true,
            };
            if !vectorizable {
                mode.failed = true;
                return value(Expr::Int(0));
            }
        }
        if path.is_empty() && moved_half_vector(&e.ty).is_some() && computes(e) {
            return unsupported(format!(
                "{} computed with `{}`: vectors of 16-bit floats are only moved (loaded, \
                 stored, copied) and read lane by lane; compute with their elements",
                show_type(&e.ty),
                exp_name(e)
            ));
        }
        match &*e.kind {
            K::Var(id) => {
                let place = self.mem_place(id, path, false)?;
                match &self.vector_mode {
                    Some(mode) if place_mentions(&place.place, &mode.lane) => {
                        self.vector_operand(env, &place).map(Read::Value)
                    }
                    _ => Ok(Read::Mem(place)),
                }
            }
            K::Lit(l) => {
                no_path(e, path)?;
                value(literal(l, &mut self.halfs)?)
            }
            K::Nat(n) => {
                no_path(e, path)?;
                let v = self.nat(env, &env.nat(n))?;
                // a size expression is computed in the index type; a `natType` one
                // converts implicitly where it is used
                match scalar_of(&e.ty)? {
                    Some(Scalar::Index | Scalar::Nat) | None => value(v),
                    Some(s) if s.is_half() => {
                        value(halfs::from_other(Scalar::Nat, s, v, &mut self.halfs))
                    }
                    Some(s) => value(v.cast(Type::Scalar(s))),
                }
            }
            K::Unary(op, a) => {
                let v = self.value(env, a, path)?;
                // vector operations compute in the element type (see `intops`); a lane of
                // one (`path` = `[Lane(l)]`) is an operation on the lanes' scalars
                let scalar =
                    scalar_of(&operand_at(&a.ty, path))?.filter(|_| self.vector_mode.is_none());
                value(match (op, scalar) {
                    (dpia::UnOp::Neg, Some(s)) if s.is_half() => {
                        let x = halfs::widen(s, v, &mut self.halfs);
                        halfs::narrow(s, Expr::unary(UnOp::Neg, x), &mut self.halfs)
                    }
                    (dpia::UnOp::Neg, Some(s)) if intops::is_int(s) => intops::negate(s, v),
                    (dpia::UnOp::Neg, _) => Expr::unary(UnOp::Neg, v),
                    (dpia::UnOp::Not, _) => Expr::unary(UnOp::Not, v),
                    (dpia::UnOp::BitNot, Some(s)) if intops::is_int(s) => intops::bit_not(s, v),
                    (dpia::UnOp::BitNot, _) => {
                        return unsupported("`~` on values other than integer scalars")
                    }
                })
            }
            K::Binary(op, a, b) => {
                let cop = binop(*op, &a.ty)?;
                let (va, vb) = (self.value(env, a, path)?, self.value(env, b, path)?);
                let operand = scalar_of(&operand_at(&a.ty, path))?;
                if let Some(s) = operand.filter(|s| s.is_half()) {
                    return value(self.half_binary(s, cop, va, vb));
                }
                let int = operand.filter(|s| intops::is_int(*s) && self.vector_mode.is_none());
                // `natType` data: `+ - *` checked as the interpreter checks them (index
                // arithmetic on sizes and loop variables is not)
                if let (Some(op), Some(Scalar::Nat)) = (intops::NatOp::of(cop), int) {
                    let proven = sizes_and_literals(e) == Some(true)
                        && stays_natural(op, &nat_of(env, a), &nat_of(env, b));
                    if !proven {
                        return value(intops::checked_nat(op, va, vb, &mut self.nat_ops));
                    }
                }
                value(match (cop, int) {
                    (BinOp::Add | BinOp::Sub | BinOp::Mul, Some(s)) => {
                        intops::wrapping(cop, s, va, vb)
                    }
                    (BinOp::Div | BinOp::Mod, Some(s)) => {
                        intops::divide(cop == BinOp::Mod, s, va, vb, &mut self.divisions)
                    }
                    (BinOp::BitAnd | BinOp::BitOr | BinOp::BitXor, Some(s)) => {
                        intops::bitwise(cop, s, va, vb)
                    }
                    (BinOp::Shl | BinOp::Shr, Some(s)) => {
                        intops::shift(cop == BinOp::Shr, s, va, vb, &mut self.divisions)
                    }
                    (
                        BinOp::BitAnd | BinOp::BitOr | BinOp::BitXor | BinOp::Shl | BinOp::Shr,
                        None,
                    ) => {
                        return unsupported(
                            "bitwise operations and shifts on vectors: compute them lane by lane",
                        )
                    }
                    (BinOp::Div | BinOp::Mod, None)
                        if matches!(a.ty, DataType::Vector(..)) && is_int_data(&a.ty) =>
                    {
                        return unsupported(
                            "integer `/` or `%` on vectors (their divisors are not checked for \
                             zero): compute them lane by lane",
                        )
                    }
                    _ => Expr::binary(cop, va, vb),
                })
            }
            K::Math(f, xs) => self.read_math(env, e, *f, xs, path).map(Read::Value),
            K::Foreign(f, args) => {
                no_path(e, path)?;
                let Some(name) = self.foreign.c_name(&f.name).map(str::to_string) else {
                    return malformed(format!(
                        "the foreign function `{}` was not collected",
                        f.name
                    ));
                };
                let args = args
                    .iter()
                    .map(|a| self.value(env, a, &[]))
                    .collect::<Result<Vec<_>, _>>()?;
                value(Expr::call(&name, args))
            }
            K::Shuffle(a, shuffle) => {
                no_path(e, path)?;
                let v = self.value(env, a, &[])?;
                value(Expr::Shuffle(Box::new(v), *shuffle))
            }
            K::Wgmma(_) => malformed("a `wgmma` read other than as its accumulator's update"),
            K::Ticket(_) | K::LookBack(_) => {
                malformed("a ticket or a look-back read other than as an assignment's value")
            }
            K::Mma(operands) => {
                no_path(e, path)?;
                if self.target != crate::Target::Cuda {
                    return unsupported(
                        "`mmaSync` runs on NVIDIA tensor cores: compile for CUDA (--target cuda)",
                    );
                }
                let tile = match operands.first().map(|a| scalar_of(&a.ty)) {
                    Some(Ok(Some(s))) if s.is_half() => s,
                    _ => return malformed("`mmaSync` on tiles that are not f16 or bf16"),
                };
                if operands.len() != 16 {
                    return malformed("`mmaSync` with other than 8 + 4 + 4 operands");
                }
                // A and B as 32-bit registers of two 16-bit values (or B by ldmatrix), C as it is
                let mut args = self.mma_operands(env, &operands[..12], tile)?;
                for c in &operands[12..] {
                    args.push(self.value(env, c, &[])?);
                }
                // the 16-bit type's header is included (the packing helpers use it)
                self.halfs.mark(tile);
                value(Expr::call(&self.tensor.helper(tile), args))
            }
            K::Select(c, a, b) => {
                let cpath = if matches!(c.ty, DataType::Vector(..)) {
                    path
                } else {
                    &[]
                };
                let vc = self.value(env, c, cpath)?;
                // a condition known here (an element of a literal array at an unrolled
                // loop's index): only the branch it selects
                match constant_truth(&vc) {
                    Some(true) => return self.read(env, a, path),
                    Some(false) => return self.read(env, b, path),
                    None => {}
                }
                let (va, vb) = (self.value(env, a, path)?, self.value(env, b, path)?);
                value(Expr::ternary(vc, va, vb))
            }
            K::Cast(a) => {
                let v = self.value(env, a, path)?;
                match (&e.ty, path) {
                    (DataType::Vector(_, to), []) => {
                        self.unchecked_vector_cast(&a.ty, to)?;
                        let vty = canonical(&env.ty(&e.ty));
                        let t = self.types.value_type(&vty, &mut self.names)?;
                        if !matches!(t, Type::Named(_)) {
                            return malformed(format!("the vector type {}", show_type(&vty)));
                        }
                        let (elem, lanes) = vector_elem_lanes(&vty)?;
                        value(Expr::Convert {
                            to: t,
                            elem,
                            lanes,
                            e: Box::new(v),
                        })
                    }
                    (t, _) => {
                        let elem = match t {
                            DataType::Vector(_, t) => &**t,
                            t => t,
                        };
                        let from = scalar_of(&operand_at(&a.ty, path))?;
                        match (from, scalar_of(elem)?) {
                            (_, Some(Scalar::Index)) => unsupported(format!(
                                "a cast to {} (`natAsIndex n x` makes an index of a natType \
                                 value)",
                                show_type(elem)
                            )),
                            (Some(from), Some(to)) if from.is_half() || to.is_half() => {
                                value(self.half_cast(from, to, v))
                            }
                            (Some(from), Some(to)) => {
                                value(intops::checked_cast(from, to, v, &mut self.casts))
                            }
                            _ => malformed(format!("a cast to {}", show_type(elem))),
                        }
                    }
                }
            }
            K::Idx(a, k) => self.read(env, a, &cons(PathElem::Idx(env.nat(k)), path)),
            K::Lane(a, k) => self.read(env, a, &cons(PathElem::Lane(env.nat(k)), path)),
            K::MakeVector(xs) => self.read_make_vector(env, e, xs, path),
            K::View(v, a) => {
                let at = v.map_nats(|n| env.nat(n)).reindex(path);
                let at = at.or_else(|need| bad_path(e, path, need.0))?;
                self.read(env, a, &at)
            }
            K::Pad(l, _, PadMode::Clamp, a)
                if self
                    .vector_mode
                    .as_ref()
                    .is_some_and(|m| path_mentions(&path[..path.len().min(1)], &m.lane)) =>
            {
                self.vector_pad(env, e, &env.nat(l), a, path)
            }
            K::Pad(l, r, mode, a) => {
                self.read_pad(env, e, (&env.nat(l), &env.nat(r)), mode, a, path)
            }
            K::Concat(a, b) => {
                let n = outer_len(env, &a.ty)?;
                let (i, rest) = one_index(e, path)?;
                match prove_lt(&i, &n) {
                    Some(true) => self.read(env, a, path),
                    Some(false) => self.read(env, b, &cons(PathElem::Idx(&i - &n), rest)),
                    None => {
                        let cond = self.compare(env, BinOp::Lt, &i, &n)?;
                        let va = self.value(env, a, path)?;
                        let vb = self.value(env, b, &cons(PathElem::Idx(&i - &n), rest))?;
                        value(Expr::ternary(cond, va, vb))
                    }
                }
            }
            K::Zip(a, b) => match path {
                [i @ PathElem::Idx(_), PathElem::Fst, rest @ ..] => {
                    self.read(env, a, &cons(i.clone(), rest))
                }
                [i @ PathElem::Idx(_), PathElem::Snd, rest @ ..] => {
                    self.read(env, b, &cons(i.clone(), rest))
                }
                _ => bad_path(e, path, "an index and a pair component"),
            },
            K::Pair(a, b) => match path {
                [PathElem::Fst, rest @ ..] => self.read(env, a, rest),
                [PathElem::Snd, rest @ ..] => self.read(env, b, rest),
                _ => bad_path(e, path, "a pair component"),
            },
            K::Fst(a) => self.read(env, a, &cons(PathElem::Fst, path)),
            K::Snd(a) => self.read(env, a, &cons(PathElem::Snd, path)),
            K::Generate(v, body) => {
                let (i, rest) = one_index(e, path)?;
                self.read(&env.bind(v, i), body, rest)
            }
            K::AsVector(n, a) => {
                let lanes = lane_count(&env.nat(n), &e.ty)?;
                match path {
                    [PathElem::Idx(i)] => self.vector_load(env, e, a, i, lanes),
                    [PathElem::Idx(i), PathElem::Lane(l), rest @ ..] => {
                        let at = PathElem::Idx(i * i64::from(lanes) + l);
                        self.read(env, a, &cons(at, rest))
                    }
                    _ => bad_path(e, path, "an index, optionally followed by a lane"),
                }
            }
            K::At(a, i) => self.read_at(env, e, a, i, path),
            K::VectorFromScalar(a) => match path {
                [] => {
                    let vty = env.ty(&e.ty);
                    let (_, lanes) = vector_shape(&vty)?;
                    let t = self.types.value_type(&canonical(&vty), &mut self.names)?;
                    let s = self.value(env, a, &[])?;
                    value(Expr::VectorLit(t, vec![s; lanes as usize]))
                }
                [PathElem::Lane(_), rest @ ..] => self.read(env, a, rest),
                _ => bad_path(e, path, "a vector lane"),
            },
        }
    }

    /// `a` at the index `i` reads at run time, then at `path`: the read of `a` at a
    /// fresh index variable (ranging over `a`'s length, so the views simplify as for a
    /// loop variable), the variable then replaced by the index's value; checked
    /// (`shine_in_range(v, n, status) ? a[v] : 0`) unless indices are unchecked.
    fn read_at(&mut self, env: &Env, e: &Exp, a: &Exp, i: &Exp, path: &[PathElem]) -> Res<Read> {
        let n = outer_len(env, &a.ty)?;
        let v = self.value(env, i, &[])?;
        let name = self.names.fresh("at");
        let at = arith::Var::with_range(name.as_str(), Nat::cst(0), n.clone());
        let inner = env.clone().with_scope(&name);
        let x = self.value(&inner, a, &cons(PathElem::Idx(Nat::var(&at)), path))?;
        // a natType value (`natAsIndex`) is 64-bit: checked as it is, then narrowed to the
        // index type of a GPU program
        let index = if self.gpu() && scalar_of(&i.ty)? == Some(Scalar::Nat) {
            v.clone().cast(Type::Scalar(Scalar::Index))
        } else {
            v.clone()
        };
        let x = x.replace_ident(&name, &index);
        if self.unchecked_indices {
            return Ok(Read::Value(x));
        }
        let zero = match type_at(&e.ty, path) {
            Some(DataType::Scalar(ScalarType::Bool)) => Expr::Bool(false),
            Some(DataType::Scalar(s)) if s.is_half() => {
                halfs::constant(scalar(s)?, 0.0, &mut self.halfs)
            }
            Some(DataType::Scalar(s)) => Expr::Int(0).cast(Type::Scalar(scalar(s)?)),
            Some(DataType::Index(_) | DataType::NatType) => Expr::Int(0),
            _ => {
                return unsupported(format!(
                    "a {} read at an index read from data: read it lane by lane",
                    show_type(&e.ty)
                ))
            }
        };
        let check = intops::index_check(v, self.nat(env, &n)?, &mut self.index_checks);
        Ok(Read::Value(Expr::ternary(check, x, zero)))
    }

    /// Refuses a cast of a whole vector of `from` to lanes of `to` whose lanes need a
    /// check ([`intops::checked_cast`]: floats to integers): they are cast lane by lane.
    fn unchecked_vector_cast(&self, from: &DataType, to: &DataType) -> Res<()> {
        let (DataType::Vector(_, f), Some(t)) = (from, scalar_of(to)?) else {
            return malformed(format!("a cast of {} to a vector", show_type(from)));
        };
        match scalar_of(f)? {
            Some(f) if intops::cast_is_checked(f, t) => unsupported(format!(
                "a cast of a whole {} to {} lanes (its lanes are checked for range one by \
                     one): cast each lane",
                show_type(from),
                show_type(to)
            )),
            _ => Ok(()),
        }
    }

    /// `makeVector x0 ... x(n-1)` read at `path`: the vector of its lanes' values, or
    /// the lane `l` asks for (`xl` when `l` is known, else a choice among them).
    fn read_make_vector(&mut self, env: &Env, e: &Exp, xs: &[Exp], path: &[PathElem]) -> Res<Read> {
        match path {
            [] => {
                let vty = env.ty(&e.ty);
                let t = self.types.value_type(&canonical(&vty), &mut self.names)?;
                let items = xs
                    .iter()
                    .map(|x| self.value(env, x, &[]))
                    .collect::<Res<Vec<_>>>()?;
                Ok(Read::Value(Expr::VectorLit(t, items)))
            }
            [PathElem::Lane(l), rest @ ..] => {
                if let Some(k) = l.as_cst() {
                    return match usize::try_from(k).ok().and_then(|k| xs.get(k)) {
                        Some(x) => self.read(env, x, rest),
                        None => bad_path(e, path, "a lane of the vector"),
                    };
                }
                // `l == 0 ? x0 : l == 1 ? x1 : ... : x(n-1)`
                let Some((last, others)) = xs.split_last() else {
                    return malformed("`makeVector` of no values");
                };
                let mut v = self.value(env, last, rest)?;
                for (k, x) in others.iter().enumerate().rev() {
                    let cond = self.compare(env, BinOp::Eq, l, &Nat::cst(k as i64))?;
                    let x = self.value(env, x, rest)?;
                    v = Expr::ternary(cond, x, v);
                }
                Ok(Read::Value(v))
            }
            _ => bad_path(e, path, "a vector lane"),
        }
    }

    /// A math function read at `path`: of scalars (or lanes), or of whole vectors,
    /// which OpenCL's builtins take as they are and C and CUDA compute lane by lane.
    fn read_math(
        &mut self,
        env: &Env,
        e: &Exp,
        f: MathFn,
        xs: &[Exp],
        path: &[PathElem],
    ) -> Res<Expr> {
        let elem = match &e.ty {
            DataType::Vector(_, t) => &**t,
            t => t,
        };
        let Some(s) = scalar_of(elem)? else {
            return malformed(format!("`{}` of {}", f.name(), show_type(&e.ty)));
        };
        let whole_vector = matches!(e.ty, DataType::Vector(..)) && path.is_empty();
        if whole_vector && matches!(s, Scalar::Float | Scalar::Double) {
            if let Some(v) = self.vector_math(env, e, f, xs)? {
                return Ok(v);
            }
        }
        if whole_vector && !(self.target == Target::OpenCl && s.is_float()) {
            let vty = env.ty(&e.ty);
            let (_, lanes) = vector_shape(&vty)?;
            let t = self.types.value_type(&canonical(&vty), &mut self.names)?;
            let mut items = Vec::new();
            for k in 0..lanes {
                let lane = [PathElem::Lane(Nat::cst(i64::from(k)))];
                items.push(self.read_math(env, e, f, xs, &lane)?);
            }
            return Ok(Expr::VectorLit(t, items));
        }
        let args = xs
            .iter()
            .map(|x| self.value(env, x, path))
            .collect::<Res<Vec<_>>>()?;
        if intops::is_int(s) {
            return intops::math(f, s, args);
        }
        self.math = true;
        if s.is_half() {
            let args = args
                .into_iter()
                .map(|a| halfs::widen(s, a, &mut self.halfs))
                .collect();
            self.vecmath.note(f);
            let single = Expr::Math {
                f,
                elem: Scalar::Float,
                args,
            };
            return Ok(halfs::narrow(s, single, &mut self.halfs));
        }
        if s == Scalar::Float {
            self.vecmath.note(f);
        }
        Ok(Expr::Math { f, elem: s, args })
    }

    /// `f` of whole vectors of `float` or `double` in C and OpenMP, where it has a macro of
    /// vector operations ([`crate::vecmath::vector_name`]: `max` and `min`): the call of
    /// the macro on the operands as values of the vector type; `None` elsewhere.
    fn vector_math(&mut self, env: &Env, e: &Exp, f: MathFn, xs: &[Exp]) -> Res<Option<Expr>> {
        if !matches!(self.target, Target::C | Target::OpenMp)
            || crate::vecmath::vector_name(f).is_none()
        {
            return Ok(None);
        }
        let t = self
            .types
            .value_type(&canonical(&env.ty(&e.ty)), &mut self.names)?;
        let args = xs
            .iter()
            .map(|x| {
                Ok(Expr::VectorValue(
                    t.clone(),
                    Box::new(self.value(env, x, &[])?),
                ))
            })
            .collect::<Res<Vec<_>>>()?;
        Ok(self
            .vecmath
            .note_vector(f)
            .map(|name| Expr::call(name, args)))
    }

    /// `a op b` on values of the 16-bit float type `s`: computed in `float`, an arithmetic
    /// result rounded back to `s` (a comparison's is a `bool`).
    fn half_binary(&mut self, s: Scalar, op: BinOp, a: Expr, b: Expr) -> Expr {
        let (a, b) = (
            halfs::widen(s, a, &mut self.halfs),
            halfs::widen(s, b, &mut self.halfs),
        );
        let e = Expr::binary(op, a, b);
        match op {
            BinOp::Add | BinOp::Sub | BinOp::Mul | BinOp::Div | BinOp::Mod => {
                halfs::narrow(s, e, &mut self.halfs)
            }
            _ => e,
        }
    }

    /// `(to)v` where `from` or `to` is a 16-bit float type: a 16-bit value is first made
    /// a `float` (exact), then converted as a `float` is (checked where it has no value, as
    /// [`intops::checked_cast`] checks); a 16-bit result is rounded once from the source.
    fn half_cast(&mut self, from: Scalar, to: Scalar, v: Expr) -> Expr {
        let (from, v) = if from.is_half() {
            (Scalar::Float, halfs::widen(from, v, &mut self.halfs))
        } else {
            (from, v)
        };
        if to.is_half() {
            return halfs::from_other(from, to, v, &mut self.halfs);
        }
        intops::checked_cast(from, to, v, &mut self.casts)
    }

    fn read_pad(
        &mut self,
        env: &Env,
        e: &Exp,
        (l, r): (&Nat, &Nat),
        mode: &PadMode,
        a: &Exp,
        path: &[PathElem],
    ) -> Res<Read> {
        let n = outer_len(env, &a.ty)?;
        let (i, rest) = one_index(e, path)?;
        let x = &i - l;
        let idx = match mode {
            PadMode::Clamp => {
                // only the sides the ranges do not already guarantee
                let lo = if x.prove_nonneg() {
                    x.clone()
                } else {
                    Nat::max(&x, &Nat::cst(0))
                };
                if x.prove_le(&(&n - 1)) {
                    lo
                } else {
                    Nat::min(&lo, &(&n - 1))
                }
            }
            PadMode::Wrap => {
                // `(x + c) % n` with `x + c >= 0`: `x >= -l`
                let c = if l.prove_le(&n) { n.clone() } else { l * &n };
                (&x + c).modulo(&n)
            }
            PadMode::Mirror if l.prove_le(&n) && r.prove_le(&n) => {
                // one reflection: -1 -> 0, -2 -> 1, n -> n-1
                let reflected = Nat::max(&x, &(Nat::cst(-1) - &x));
                Nat::min(&reflected, &(&n * 2 - 1 - &x))
            }
            PadMode::Mirror => {
                // periodic with period 2n: j = x mod 2n, then reflect
                let j = (&x + l * &n * 2).modulo(&(&n * 2));
                Nat::min(&j, &(&n * 2 - 1 - &j))
            }
            PadMode::Cst(c) => {
                let lo = prove_le(l, &i);
                let hi = prove_lt(&i, &(l + &n));
                let inside = cons(PathElem::Idx(x.clone()), rest);
                return match (lo, hi) {
                    (Some(true), Some(true)) => self.read(env, a, &inside),
                    (Some(false), _) | (_, Some(false)) => self.read(env, c, rest),
                    _ => {
                        let mut conds = Vec::new();
                        if lo.is_none() {
                            conds.push(self.compare(env, BinOp::Ge, &i, l)?);
                        }
                        if hi.is_none() {
                            conds.push(self.compare(env, BinOp::Lt, &i, &(l + &n))?);
                        }
                        let cond = conds
                            .into_iter()
                            .reduce(|p, q| Expr::binary(BinOp::And, p, q))
                            .unwrap_or(Expr::Bool(true));
                        let inner = self.value(env, a, &inside)?;
                        let outer = self.value(env, c, rest)?;
                        Ok(Read::Value(Expr::ternary(cond, inner, outer)))
                    }
                };
            }
        };
        self.read(env, a, &cons(PathElem::Idx(idx), rest))
    }

    pub(super) fn dest<'a>(&mut self, env: &Env, acc: &'a Acc, path: &[PathElem]) -> Res<Dest<'a>> {
        use AccKind as A;
        match &*acc.kind {
            A::Var(id) => self.mem_place(id, path, true).map(Dest::Mem),
            A::Idx(a, k) => self.dest(env, a, &cons(PathElem::Idx(env.nat(k)), path)),
            A::View(v, a) => {
                let at = v.map_nats(|n| env.nat(n)).reindex(path);
                let at = at.or_else(|need| bad_acc_path(acc, path, need.0))?;
                self.dest(env, a, &at)
            }
            A::Zip1(a) | A::Zip2(a) => {
                let (i, rest) = one_acc_index(acc, path)?;
                let c = if matches!(*acc.kind, A::Zip1(_)) {
                    PathElem::Fst
                } else {
                    PathElem::Snd
                };
                self.dest(env, a, &concat(&[PathElem::Idx(i), c], rest))
            }
            A::Unzip(a) => match path {
                [i @ PathElem::Idx(_), c @ (PathElem::Fst | PathElem::Snd), rest @ ..] => {
                    self.dest(env, a, &concat(&[c.clone(), i.clone()], rest))
                }
                _ => bad_acc_path(acc, path, "an index and a pair component"),
            },
            A::Pair1(a) => self.dest(env, a, &cons(PathElem::Fst, path)),
            A::Pair2(a) => self.dest(env, a, &cons(PathElem::Snd, path)),
            A::AsVector(n, a) => {
                let DataType::Array(_, vty) = &acc.ty else {
                    return malformed("`asVectorAcc` of a type that is not an array");
                };
                let lanes = lane_count(&env.nat(n), vty)?;
                match path {
                    [PathElem::Idx(i)] => Ok(Dest::Vector {
                        acc: a,
                        env: env.clone(),
                        index: i.clone(),
                        lanes,
                    }),
                    [PathElem::Idx(i), PathElem::Lane(l), rest @ ..] => {
                        let at = PathElem::Idx(i * i64::from(lanes) + l);
                        self.dest(env, a, &cons(at, rest))
                    }
                    _ => bad_acc_path(acc, path, "an index, optionally followed by a lane"),
                }
            }
            A::Map(v, a) => {
                let (i, rest) = one_acc_index(acc, path)?;
                self.dest(&env.bind(v, i), a, rest)
            }
            A::At(a, i, marker) => {
                let n = outer_len(env, &a.ty)?;
                let value = self.value(env, i, &[])?;
                let bound = self.nat(env, &n)?;
                let name = self.names.fresh("at");
                let at = PathElem::Idx(Nat::var(&arith::Var::with_range(
                    name.as_str(),
                    Nat::cst(0),
                    n,
                )));
                self.write_indices.push(super::WriteIndex {
                    name,
                    value,
                    bound,
                    marker: None,
                });
                let marker = match marker {
                    Some(m) => match self.dest(env, m, std::slice::from_ref(&at))? {
                        Dest::Mem(p) => Some(Expr::unary(UnOp::AddrOf, self.place_expr(env, &p)?)),
                        Dest::Vector { .. } => return malformed("a vector marker of `scatter`"),
                    },
                    None => None,
                };
                if let Some(w) = self.write_indices.last_mut() {
                    w.marker = marker;
                }
                self.dest(env, a, &cons(at, path))
            }
        }
    }
}

pub(super) fn literal(l: &Literal, used: &mut halfs::HalfUse) -> Res<Expr> {
    let half = match l {
        Literal::Int(_, t) | Literal::Float(_, t) if t.is_half() => Some(*t),
        _ => None,
    };
    if let Some(t) = half {
        // the literal's value in its type, as the interpreter rounds it
        let rounded = match l {
            Literal::Int(v, _) => rise::interp::Scalar::from_int(t, *v),
            Literal::Float(v, _) => rise::interp::Scalar::from_float(t, *v),
            _ => return malformed("a 16-bit float literal"),
        };
        let value = rounded.map_err(crate::error::CodegenError::Malformed)?;
        return Ok(halfs::constant(scalar(t)?, value.as_f64(), used));
    }
    Ok(match l {
        Literal::Bool(b) => Expr::Bool(*b),
        Literal::Int(v, ScalarType::Int) => int_literal(*v),
        Literal::Int(v, t) => int_literal(*v).cast(Type::Scalar(scalar(*t)?)),
        Literal::Float(v, t) => Expr::Float {
            value: *v,
            single: scalar(*t)? == Scalar::Float,
        },
        Literal::Nat(n) => nat_to_expr(n),
    })
}

fn int_literal(v: i64) -> Expr {
    if v == i64::MIN {
        // `-9223372036854775808` is not a C literal
        return Expr::binary(BinOp::Sub, Expr::Int(i64::MIN + 1), Expr::Int(1));
    }
    Expr::Int(v)
}

fn binop(op: dpia::BinOp, operand: &DataType) -> Res<BinOp> {
    use dpia::BinOp as B;
    let elem = match operand {
        DataType::Vector(_, t) => &**t,
        t => t,
    };
    let float = matches!(elem, DataType::Scalar(s) if s.is_float());
    Ok(match op {
        B::Add => BinOp::Add,
        B::Sub => BinOp::Sub,
        B::Mul => BinOp::Mul,
        B::Div => BinOp::Div,
        B::Mod if float => return unsupported("`%` on floating-point values"),
        B::Mod => BinOp::Mod,
        B::Gt => BinOp::Gt,
        B::Lt => BinOp::Lt,
        B::Eq => BinOp::Eq,
        B::Le => BinOp::Le,
        B::Ge => BinOp::Ge,
        B::Ne => BinOp::Ne,
        B::And => BinOp::And,
        B::Or => BinOp::Or,
        B::BitAnd | B::BitOr | B::BitXor | B::Shl | B::Shr if !is_int_data(operand) => {
            return unsupported("bitwise operations and shifts on values other than integers")
        }
        B::BitAnd => BinOp::BitAnd,
        B::BitOr => BinOp::BitOr,
        B::BitXor => BinOp::BitXor,
        B::Shl => BinOp::Shl,
        B::Shr => BinOp::Shr,
    })
}

/// Whether `e` computes its value (rather than reading or viewing memory).
fn computes(e: &Exp) -> bool {
    use ExpKind as K;
    matches!(
        &*e.kind,
        K::Binary(..)
            | K::Unary(..)
            | K::Math(..)
            | K::Select(..)
            | K::Cast(_)
            | K::MakeVector(_)
            | K::VectorFromScalar(_)
            | K::Lit(_)
            | K::Shuffle(..)
            | K::Foreign(..)
    )
}

/// Whether data of type `dt` holds a 16-bit float.
fn mentions_half(dt: &DataType) -> bool {
    match dt {
        DataType::Scalar(s) => s.is_half(),
        DataType::Vector(_, t) | DataType::Array(_, t) => mentions_half(t),
        DataType::Pair(a, b) => mentions_half(a) || mentions_half(b),
        _ => false,
    }
}

/// Integer data: an integer scalar or a vector of integers.
fn is_int_data(dt: &DataType) -> bool {
    let elem = match dt {
        DataType::Vector(_, t) => &**t,
        t => t,
    };
    matches!(elem, DataType::Scalar(s) if !s.is_float() && *s != ScalarType::Bool)
}

/// `a < b`: `Some` when the ranges decide it.
fn prove_lt(a: &Nat, b: &Nat) -> Option<bool> {
    if a.prove_lt(b) {
        Some(true)
    } else if b.prove_le(a) {
        Some(false)
    } else {
        None
    }
}

/// `a <= b`: `Some` when the ranges decide it.
pub(super) fn prove_le(a: &Nat, b: &Nat) -> Option<bool> {
    if a.prove_le(b) {
        Some(true)
    } else if b.prove_lt(a) {
        Some(false)
    } else {
        None
    }
}

/// The type of an operand of type `dt` of an operation read at `path`: a lane of a vector
/// operation operates on the lanes (C promotes `int8_t` lanes to `int`, so they need the
/// wrapping of scalars); the type itself where the path does not fit it.
fn operand_at(dt: &DataType, path: &[PathElem]) -> DataType {
    type_at(dt, path).unwrap_or_else(|| dt.clone())
}

/// The type of data of type `dt` read at `path`.
fn type_at(dt: &DataType, path: &[PathElem]) -> Option<DataType> {
    match (dt, path) {
        (t, []) => Some(t.clone()),
        (DataType::Array(_, t), [PathElem::Idx(_), rest @ ..]) => type_at(t, rest),
        (DataType::Vector(_, t), [PathElem::Lane(_), rest @ ..]) => type_at(t, rest),
        (DataType::Pair(a, _), [PathElem::Fst, rest @ ..]) => type_at(a, rest),
        (DataType::Pair(_, b), [PathElem::Snd, rest @ ..]) => type_at(b, rest),
        _ => None,
    }
}

pub(super) fn cons(first: PathElem, rest: &[PathElem]) -> Vec<PathElem> {
    let mut v = Vec::with_capacity(rest.len() + 1);
    v.push(first);
    v.extend_from_slice(rest);
    v
}

fn concat(first: &[PathElem], rest: &[PathElem]) -> Vec<PathElem> {
    let mut v = first.to_vec();
    v.extend_from_slice(rest);
    v
}

/// `n` of an array type `n.t`.
pub(super) fn outer_len(env: &Env, dt: &DataType) -> Res<Nat> {
    match dt {
        DataType::Array(n, _) => Ok(env.nat(n)),
        _ => malformed(format!(
            "expected an array, found data of type {}",
            show_type(dt)
        )),
    }
}

pub(super) fn one_index<'p>(e: &Exp, path: &'p [PathElem]) -> Res<(Nat, &'p [PathElem])> {
    match path {
        [PathElem::Idx(i), rest @ ..] => Ok((i.clone(), rest)),
        _ => bad_path(e, path, "an array index"),
    }
}

fn one_acc_index<'p>(acc: &Acc, path: &'p [PathElem]) -> Res<(Nat, &'p [PathElem])> {
    match path {
        [PathElem::Idx(i), rest @ ..] => Ok((i.clone(), rest)),
        _ => bad_acc_path(acc, path, "an array index"),
    }
}

fn no_path(e: &Exp, path: &[PathElem]) -> Res<()> {
    if path.is_empty() {
        Ok(())
    } else {
        bad_path(e, path, "a scalar read at the empty path")
    }
}

fn bad_path<T>(e: &Exp, path: &[PathElem], expected: &str) -> Res<T> {
    malformed(format!(
        "`{}` of type {} read at {} (expected {expected})",
        exp_name(e),
        show_type(&e.ty),
        show_path(path)
    ))
}

fn bad_acc_path<T>(acc: &Acc, path: &[PathElem], expected: &str) -> Res<T> {
    malformed(format!(
        "an acceptor of type {} written at {} (expected {expected})",
        show_type(&acc.ty),
        show_path(path)
    ))
}

pub(super) fn show_path(path: &[PathElem]) -> String {
    if path.is_empty() {
        return "the empty path".into();
    }
    path.iter().map(show_step).collect()
}

fn exp_name(e: &Exp) -> &'static str {
    use ExpKind as K;
    match &*e.kind {
        K::Var(_) => "variable",
        K::Lit(_) => "literal",
        K::Nat(_) => "nat",
        K::Unary(..) | K::Binary(..) => "operation",
        K::Select(..) => "select",
        K::Math(f, _) => f.name(),
        K::Cast(_) => "cast",
        K::Idx(..) => "idx",
        K::View(v, _) => v.name(),
        K::Pad(..) => "pad",
        K::Concat(..) => "concat",
        K::Zip(..) => "zip",
        K::Pair(..) => "makePair",
        K::Fst(_) => "fst",
        K::Snd(_) => "snd",
        K::Generate(..) => "generate",
        K::AsVector(..) => "asVector",
        K::VectorFromScalar(_) => "vectorFromScalar",
        K::Lane(..) => "lane",
        K::MakeVector(_) => "makeVector",
        K::At(..) => "idx (at an index read from data)",
        K::Foreign(..) => "foreign function",
        K::Shuffle(..) => "warp shuffle",
        K::Mma(..) => "mmaSync",
        K::Wgmma(..) => "wgmma",
        K::Ticket(_) => "ticket (scanLookback)",
        K::LookBack(_) => "look-back (scanLookback)",
    }
}

/// The value of a `natType` or index expression built from sizes, loop variables (with
/// their ranges) and literals, as a natural-number expression; `None` for anything else.
fn nat_of(env: &Env, e: &Exp) -> Option<Nat> {
    let natural = |t: &DataType| matches!(t, DataType::NatType | DataType::Index(_));
    match &*e.kind {
        ExpKind::Nat(n) => Some(env.nat(n)),
        ExpKind::Lit(Literal::Nat(n)) => Some(n.clone()),
        ExpKind::Lit(Literal::Int(v, _)) if *v >= 0 => Some(Nat::cst(*v)),
        ExpKind::Cast(a) if natural(&e.ty) && natural(&a.ty) => nat_of(env, a),
        ExpKind::Binary(op, a, b) => {
            let (a, b) = (nat_of(env, a)?, nat_of(env, b)?);
            match op {
                dpia::BinOp::Add => Some(&a + &b),
                dpia::BinOp::Sub if b.prove_le(&a) => Some(&a - &b),
                dpia::BinOp::Mul => Some(&a * &b),
                dpia::BinOp::Div if b.lower_bound()? >= 1 => Some(a.floor_div(&b)),
                _ => None,
            }
        }
        _ => None,
    }
}

/// Whether `a op b` is proven to stay a natural number below 2^63 for every value of the
/// sizes and loop variables (each within its range), so that it needs no check: `-` when
/// `b <= a`, `+` and `*` when the result has a constant upper bound that fits.
fn stays_natural(op: intops::NatOp, a: &Option<Nat>, b: &Option<Nat>) -> bool {
    let (Some(a), Some(b)) = (a, b) else {
        return false;
    };
    let fits = |n: Nat| n.upper_bound().is_some() && n.prove_nonneg();
    match op {
        intops::NatOp::Sub => b.prove_le(a),
        intops::NatOp::Add => fits(a + b),
        intops::NatOp::Mul => fits(a * b),
    }
}

/// Whether `e` computes from sizes, loop variables and literals alone: `None` where it reads
/// data, else whether it mentions a size or a loop variable. `natType` arithmetic of this
/// kind is index arithmetic (`indexAsNat i + 1`, `n - 1`), computed unchecked; arithmetic
/// on data, or on literals alone, is checked ([`intops::checked_nat`]).
fn sizes_and_literals(e: &Exp) -> Option<bool> {
    match &*e.kind {
        ExpKind::Nat(n) => Some(!n.free_vars().is_empty()),
        ExpKind::Lit(_) => Some(false),
        ExpKind::Cast(a) | ExpKind::Unary(_, a) => sizes_and_literals(a),
        ExpKind::Binary(_, a, b) => Some(sizes_and_literals(a)? | sizes_and_literals(b)?),
        _ => None,
    }
}

/// The value of a condition made of integer literals compared (`2 == 0`), `None` when
/// it depends on anything else.
fn constant_truth(c: &Expr) -> Option<bool> {
    match c {
        Expr::Bool(b) => Some(*b),
        Expr::Binary(op, a, b) => {
            let (Expr::Int(a), Expr::Int(b)) = (&**a, &**b) else {
                return None;
            };
            match op {
                BinOp::Eq => Some(a == b),
                BinOp::Ne => Some(a != b),
                BinOp::Lt => Some(a < b),
                BinOp::Le => Some(a <= b),
                BinOp::Gt => Some(a > b),
                BinOp::Ge => Some(a >= b),
                _ => None,
            }
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cmp(op: BinOp, a: i64, b: i64) -> Expr {
        Expr::binary(op, Expr::Int(a), Expr::Int(b))
    }

    #[test]
    fn a_comparison_of_literals_is_known_and_anything_else_is_not() {
        assert_eq!(constant_truth(&cmp(BinOp::Eq, 2, 2)), Some(true));
        assert_eq!(constant_truth(&cmp(BinOp::Eq, 2, 0)), Some(false));
        assert_eq!(constant_truth(&cmp(BinOp::Lt, 1, 3)), Some(true));
        assert_eq!(constant_truth(&Expr::Bool(false)), Some(false));
        let i = Expr::binary(BinOp::Eq, Expr::Ident("i".into()), Expr::Int(0));
        assert_eq!(constant_truth(&i), None);
        assert_eq!(constant_truth(&cmp(BinOp::Add, 1, 1)), None);
    }
}
