//! Vectors: a whole vector of `asVector` read (or written through
//! `asVectorAcc`) with one load (store) where its lanes are contiguous in
//! memory, computed with vector operations where its lanes are a computation
//! over such loads and broadcast scalars, and lane by lane otherwise. A lane
//! variable that is never printed proves the lanes contiguous.

use arith::{Nat, Var};
use dpia::Exp;
use rise::DataType;

use super::memory::MemPlace;
use super::views::{cons, one_index, outer_len, Read};
use super::{canonical, Env, Lowerer, Res, SizeMultiples};
use crate::ast::{BinOp, Expr, Type, VectorAccess};
use crate::ctypes::{moved_half_vector, vector_elem_lanes, vector_shape};
use crate::error::{malformed, unsupported};
use crate::layout::show_type;
use crate::layout::{PathElem, Place};
use crate::Target;

/// The state of computing a vector with vector operations: the lane variable,
/// the vector type, whether a lane-dependent operand was loaded, and whether
/// something could not be vectorized.
#[derive(Debug)]
pub(super) struct VectorMode {
    pub(super) lane: Var,
    pub(super) ty: DataType,
    pub(super) used: bool,
    pub(super) failed: bool,
}

impl Lowerer {
    /// A whole vector of `e = asVector lanes a` at index `i`: one unaligned
    /// load when its elements are contiguous in memory, the vector itself
    /// when `a` is `asScalar` of vector memory, else lane by lane.
    pub(super) fn vector_load(
        &mut self,
        env: &Env,
        e: &Exp,
        a: &Exp,
        i: &Nat,
        lanes: u32,
    ) -> Res<Read> {
        let DataType::Array(_, vty) = &e.ty else {
            return malformed("`asVector` of type that is not an array");
        };
        let vty = env.ty(vty);
        let (lane, lenv) = self.lane_var(env, lanes);
        if let Ok(Read::Mem(p)) = self.read(&lenv, a, &[elem_index(i, lanes, &lane)]) {
            if let Some(first) = contiguous(&p, &lane) {
                return self.load_vector(env, &first, &vty).map(Read::Value);
            }
            if p.place.lane.as_ref() == Some(&Nat::var(&lane)) && !place_mentions(&p.place, &lane) {
                let mut whole = p;
                whole.place.lane = None;
                return Ok(Read::Mem(whole));
            }
        }
        let t = self.types.value_type(&canonical(&vty), &mut self.names)?;
        if let Some(v) = self.vector_op(&lenv, a, i, lanes, &lane, &vty, &t)? {
            return Ok(Read::Value(v));
        }
        let mut items = Vec::new();
        for k in 0..i64::from(lanes) {
            items.push(self.value(env, a, &[PathElem::Idx(i * i64::from(lanes) + k)])?);
        }
        Ok(Read::Value(Expr::VectorLit(t, items)))
    }

    /// Elements `i*lanes ..` of `a` as one vector computed with vector
    /// operations, where `a`'s elements are a computation (`+ - * /`, negation)
    /// over memory that is either read at consecutive elements in the lanes
    /// (a vector load) or the same in every lane (a scalar, broadcast by the
    /// C vector extensions); `None` when some part is neither, and the vector
    /// is then built lane by lane.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn vector_op(
        &mut self,
        lenv: &Env,
        a: &Exp,
        i: &Nat,
        lanes: u32,
        lane: &Var,
        vty: &DataType,
        t: &Type,
    ) -> Res<Option<Expr>> {
        if self.vector_mode.is_some() {
            return Ok(None);
        }
        self.vector_mode = Some(VectorMode {
            lane: lane.clone(),
            ty: vty.clone(),
            used: false,
            failed: false,
        });
        let v = self.value(lenv, a, &[elem_index(i, lanes, lane)]);
        let mode = self.vector_mode.take().expect("set above");
        Ok(match v {
            Ok(v) if !mode.failed && mode.used => Some(v),
            Ok(v) if !mode.failed => Some(Expr::VectorLit(t.clone(), vec![v; lanes as usize])),
            _ => None,
        })
    }

    /// A memory operand of [`Lowerer::vector_op`] that differs between lanes:
    /// a vector load if the lanes are consecutive elements.
    pub(super) fn vector_operand(&mut self, env: &Env, place: &MemPlace) -> Res<Expr> {
        let Some(mode) = &mut self.vector_mode else {
            return malformed("a vector operand outside a vector computation");
        };
        let Some(first) = contiguous(place, &mode.lane) else {
            mode.failed = true;
            return Ok(Expr::Int(0));
        };
        mode.used = true;
        let vty = mode.ty.clone();
        self.load_vector(env, &first, &vty)
    }

    /// A clamped border read by the lanes of [`Lowerer::vector_op`] at
    /// consecutive indices: where all lanes are inside the array (the interior,
    /// the common case) the array is read as it is, with vector loads; at the
    /// border the lanes are clamped one by one:
    /// `inside ? vector : (vector){lane 0, lane 1, ...}`.
    pub(super) fn vector_pad(
        &mut self,
        env: &Env,
        e: &Exp,
        l: &Nat,
        a: &Exp,
        path: &[PathElem],
    ) -> Res<Read> {
        let (mode_lane, mode_ty) = match &self.vector_mode {
            Some(m) => (m.lane.clone(), m.ty.clone()),
            None => return malformed("a vector border read outside a vector computation"),
        };
        let n = outer_len(env, &a.ty)?;
        let (i, rest) = one_index(e, path)?;
        let x = &i - l;
        let first = x.substitute(&mode_lane, &Nat::cst(0));
        let (_, lanes) = vector_shape(&env.ty(&mode_ty))?;
        if first.contains_var(&mode_lane) || &first + Nat::var(&mode_lane) != x {
            if let Some(m) = &mut self.vector_mode {
                m.failed = true;
            }
            return Ok(Read::Value(Expr::Int(0)));
        }
        let last = &first + (i64::from(lanes) - 1);
        let fast = self.value(env, a, &cons(PathElem::Idx(x), rest))?;
        let mut conds = Vec::new();
        if !first.prove_nonneg() {
            conds.push(self.compare(env, BinOp::Ge, &first, &Nat::cst(0))?);
        }
        if !last.prove_le(&(&n - 1)) {
            conds.push(self.compare(env, BinOp::Lt, &last, &n)?);
        }
        let Some(inside) = conds
            .into_iter()
            .reduce(|p, q| Expr::binary(BinOp::And, p, q))
        else {
            return Ok(Read::Value(fast));
        };
        let saved = self.vector_mode.take();
        let mut items = Vec::new();
        for k in 0..i64::from(lanes) {
            let at: Vec<PathElem> = path
                .iter()
                .map(|p| match p {
                    PathElem::Idx(n) => PathElem::Idx(n.substitute(&mode_lane, &Nat::cst(k))),
                    other => other.clone(),
                })
                .collect();
            let v = self.value(env, e, &at);
            if v.is_err() {
                self.vector_mode = saved;
                return v.map(Read::Value);
            }
            items.push(v?);
        }
        self.vector_mode = saved;
        let t = self
            .types
            .value_type(&canonical(&env.ty(&mode_ty)), &mut self.names)?;
        let fast = Expr::VectorValue(t.clone(), Box::new(fast));
        let slow = Expr::VectorLit(t, items);
        Ok(Read::Value(Expr::ternary(inside, fast, slow)))
    }

    /// A vector of type `vty` loaded from consecutive elements, the first at
    /// `first`: one [`Expr::VectorLoad`] where the target has one (C at element
    /// alignment, OpenCL at any element address, CUDA where the address is
    /// provably aligned), else the elements one by one (`make_float4(x[i], ...)`).
    fn load_vector(&mut self, env: &Env, first: &MemPlace, vty: &DataType) -> Res<Expr> {
        if let Some(access) = self.vector_access(env, first, vty)? {
            return Ok(Expr::VectorLoad(Box::new(access)));
        }
        let vty = canonical(vty);
        let (_, lanes) = vector_elem_lanes(&vty)?;
        let t = self.types.value_type(&vty, &mut self.names)?;
        let mut items = Vec::new();
        for k in 0..i64::from(lanes) {
            items.push(self.place_expr(env, &first.at(k))?);
        }
        Ok(Expr::VectorLit(t, items))
    }

    /// Consecutive elements from `first` accessed as one vector of type `vty`
    /// (loaded by [`Lowerer::load_vector`], stored by an assignment); `None` where
    /// the target has no such access (CUDA, not provably aligned) and the lanes
    /// go one by one.
    pub(super) fn vector_access(
        &mut self,
        env: &Env,
        first: &MemPlace,
        vty: &DataType,
    ) -> Res<Option<VectorAccess>> {
        let vty = canonical(vty);
        let half = moved_half_vector(&vty);
        let lanes = match half {
            Some((_, lanes)) => lanes,
            None => vector_elem_lanes(&vty)?.1,
        };
        let ty = match self.target {
            Target::Cuda if vector_aligned(first, lanes, &self.size_multiples) => {
                Some(self.types.value_type(&vty, &mut self.names)?)
            }
            // vectors of 16-bit floats are moved whole or not at all
            _ if half.is_some() => return self.unmoved_half_vector(first, &vty, lanes),
            // GCC vectors through their variant of element alignment
            Target::C | Target::OpenMp => Some(self.types.unaligned_vector(&vty, &mut self.names)?),
            Target::OpenCl => None,
            Target::Cuda => return Ok(None),
        };
        let n = Nat::cst(i64::from(lanes));
        let whole = match &first.place.flat {
            Some(flat) if flat.modulo(&n).as_cst() == Some(0) => Some((
                Expr::ident(&first.base),
                self.nat(env, &flat.floor_div(&n))?,
            )),
            _ => None,
        };
        Ok(Some(VectorAccess {
            ty,
            lanes,
            first: self.place_expr(env, first)?,
            whole,
        }))
    }

    /// The refusal of a vector of 16-bit floats ([`moved_half_vector`]) that cannot be
    /// moved whole: outside CUDA, or at an address not provably aligned to its size (its
    /// lanes are not loaded one by one).
    fn unmoved_half_vector<T>(&self, first: &MemPlace, vty: &DataType, lanes: u32) -> Res<T> {
        if self.target != Target::Cuda {
            return unsupported(format!(
                "{} in {}: vectors of 16-bit floats are moved whole in CUDA only",
                show_type(vty),
                self.target.title()
            ));
        }
        unsupported(format!(
            "{} read or written at `{}[{}]`, an address not provably aligned to the \
             vector's size (an aligned array, an index that is a multiple of {lanes})",
            show_type(vty),
            first.base,
            first
                .place
                .flat
                .as_ref()
                .map_or("0".into(), |f| f.to_string())
        ))
    }

    /// A lane variable `0 <= l < lanes`, for proving loads and stores
    /// contiguous. It is never printed, so its name is one no C variable has.
    pub(super) fn lane_var(&self, env: &Env, lanes: u32) -> (Var, Env) {
        let name = "'lane";
        let v = Var::with_range(name, Nat::cst(0), Nat::cst(i64::from(lanes)));
        (v, env.clone().with_scope(name))
    }
}

/// Whether a vector of `lanes` elements from `first` is at an address aligned to
/// its size (at most 16 bytes): an aligned array, an index that is a multiple of
/// `lanes`, given the sizes the program's constraints make multiples of a constant
/// (`multiples`, checked before the code runs: `k` a multiple of 32 where a `split 32`
/// of `k` elements requires it).
fn vector_aligned(first: &MemPlace, lanes: u32, multiples: &SizeMultiples) -> bool {
    let n = Nat::cst(i64::from(lanes));
    first.aligned
        && first.place.fields.is_empty()
        && first.place.lane.is_none()
        && first
            .place
            .flat
            .as_ref()
            .is_some_and(|f| multiples.apply(f).modulo(&n).as_cst() == Some(0))
}

/// Element `index*lanes + lane`.
pub(super) fn elem_index(index: &Nat, lanes: u32, lane: &Var) -> PathElem {
    PathElem::Idx(index * i64::from(lanes) + Nat::var(lane))
}

/// The place of lane 0 when the place of lane `l` is element `base + l` of one array.
pub(super) fn contiguous(p: &MemPlace, lane: &Var) -> Option<MemPlace> {
    let flat = p.place.flat.as_ref()?;
    if !p.indexed || !p.place.fields.is_empty() || p.place.lane.is_some() {
        return None;
    }
    let first = flat.substitute(lane, &Nat::cst(0));
    if first.contains_var(lane) || &first + Nat::var(lane) != *flat {
        return None;
    }
    let mut q = p.clone();
    q.place.flat = Some(first);
    Some(q)
}

/// Whether an index of the path mentions `v`.
pub(super) fn path_mentions(path: &[PathElem], v: &Var) -> bool {
    path.iter()
        .any(|p| matches!(p, PathElem::Idx(n) if n.contains_var(v)))
}

pub(super) fn place_mentions(p: &Place, v: &Var) -> bool {
    p.flat.as_ref().is_some_and(|f| f.contains_var(v))
}
