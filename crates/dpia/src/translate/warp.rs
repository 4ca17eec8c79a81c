//! `reduceWarp f xs`: the 32 lanes of a warp combine their values by shuffles; `scanWarp f
//! xs`: they scan them.
//!
//! Every lane computes its own element of `xs` (lane `l` element `l`), into a
//! private scalar: a `mapLane` loop of the 32 lanes. When `xs` is a map (`map g ys`
//! or `mapLane g ys`), lane `l` computes `g ys[l]` itself, so that nothing is stored
//! (a warp's partial results stay in registers). Then the butterfly of the
//! interpreter, step by step (`o` = 16, 8, 4, 2, 1): `other := shuffleXor(v, o);
//! v := f v other`, lane `l` holding exactly the interpreter's `v[l]` after each
//! step; the shuffled value goes to a variable of its own first, so that the
//! shuffle is never inside a conditional that `f` may contain. Finally every lane
//! takes lane 0's value (the interpreter's result; for a commutative `f` every
//! lane has it already), and every lane writes or passes on the result.
//!
//! `scanWarp` computes its lanes' values the same way, then Hillis and Steele's steps of
//! the interpreter (`d` = 1, 2, 4, 8, 16): `other := shuffleUp(v, d)`, every lane, then in
//! a lane loop `v := f v other` where the lane is at least `d` (the shuffle outside the
//! conditional, so all 32 lanes run it); lane `l` holds exactly the interpreter's `v[l]`
//! after each step, and writes it to element `l` of the result.

use super::*;

/// The butterfly's steps, as in the interpreter (`rise::interp`'s `reduce_warp`).
const STEPS: [u32; 5] = [16, 8, 4, 2, 1];

/// The scan's steps, as in the interpreter (`rise::interp`'s `scan_warp`).
const SCAN_STEPS: [u32; 5] = [1, 2, 4, 8, 16];

impl Translator {
    /// `reduceWarp f xs` (`vals` = `[f, xs]`), `e` its application.
    pub(super) fn reduce_warp(&self, e: &Expr, vals: &[Expr], env: &Env, out: Out) -> R<Comm> {
        let t = data_type(e)?;
        check_shuffled(e, &t, Prim::ReduceWarp)?;
        let ident = Ident {
            name: self.fresh("acc"),
            ty: t.clone(),
        };
        let acc = Acc::new(AccKind::Var(ident.clone()), t.clone());
        let read = Exp::new(ExpKind::Var(ident.clone()), t.clone());
        let mut body = vec![self.lane_values(&vals[1], env, &acc, Prim::ReduceWarp)?];
        for o in STEPS {
            body.push(self.butterfly_step(&vals[0], env, &read, &acc, o)?);
        }
        let lane0 = Exp::new(ExpKind::Shuffle(read.clone(), Shuffle::From(0)), t.clone());
        body.push(self.assign(&acc, &lane0));
        body.push(match out {
            Out::Acc(a) => self.assign(a, &read),
            Out::Con(k) => k(read)?,
        });
        Ok(Comm::New {
            ident,
            addr: AddrSpace::Private,
            body: Box::new(Comm::Seq(body)),
        })
    }

    /// `scanWarp f xs` (`vals` = `[f, xs]`) written to `out`, `e` its application.
    pub(super) fn scan_warp(&self, e: &Expr, vals: &[Expr], env: &Env, out: Out) -> R<Comm> {
        let Out::Acc(out) = out else {
            return Err(TranslateError::at(
                e,
                "the result of `scanWarp` is read but not stored anywhere (every lane holds \
                 one of its 32 values)",
                Some("write it to memory first: `toMem local (...)`"),
            ));
        };
        let (_, t) = array_dt(&data_type(e)?, e)?;
        check_shuffled(e, &t, Prim::ScanWarp)?;
        let ident = Ident {
            name: self.fresh("acc"),
            ty: t.clone(),
        };
        let acc = Acc::new(AccKind::Var(ident.clone()), t.clone());
        let read = Exp::new(ExpKind::Var(ident.clone()), t.clone());
        let mut body = vec![self.lane_values(&vals[1], env, &acc, Prim::ScanWarp)?];
        for d in SCAN_STEPS {
            body.push(self.scan_step(&vals[0], env, &read, &acc, d)?);
        }
        let lane = self.loop_var(&Nat::cst(32));
        let written = Acc::new(AccKind::Idx(out.clone(), Nat::var(&lane)), t.clone());
        body.push(self.in_lanes(lane, self.assign(&written, &read)));
        Ok(Comm::New {
            ident,
            addr: AddrSpace::Private,
            body: Box::new(Comm::Seq(body)),
        })
    }

    /// One of the scan's steps: `other := shuffleUp(v, d)`, then `v := f v other` in the
    /// lanes `l ≥ d`.
    fn scan_step(&self, f: &Expr, env: &Env, read: &Exp, acc: &Acc, d: u32) -> R<Comm> {
        let other = Ident {
            name: self.fresh("other"),
            ty: read.ty.clone(),
        };
        let other_acc = Acc::new(AccKind::Var(other.clone()), read.ty.clone());
        let other_read = Exp::new(ExpKind::Var(other.clone()), read.ty.clone());
        let shuffled = Exp::new(
            ExpKind::Shuffle(read.clone(), Shuffle::Up(d)),
            read.ty.clone(),
        );
        let args = vec![Value::Data(read.clone()), Value::Data(other_read)];
        let step = self.update(&|o| self.call(f, env, args.clone(), Out::Acc(o)), acc)?;
        let lane = self.loop_var(&Nat::cst(32));
        let from_d = Comm::IfLess {
            lhs: Nat::cst(i64::from(d) - 1),
            rhs: Nat::var(&lane),
            body: Box::new(step),
        };
        Ok(Comm::New {
            ident: other,
            addr: AddrSpace::Private,
            body: Box::new(Comm::Seq(vec![
                self.assign(&other_acc, &shuffled),
                self.in_lanes(lane, from_d),
            ])),
        })
    }

    /// `body` in the loop of the 32 lanes of a warp's scan, `lane` its variable.
    fn in_lanes(&self, lane: Var, body: Comm) -> Comm {
        Comm::For {
            var: lane,
            count: Nat::cst(32),
            kind: LoopKind::Gpu(ParLevel::Lane),
            origin: Prim::ScanWarp.name(),
            body: Box::new(body),
        }
    }

    /// The loop of the 32 lanes, lane `l` writing element `l` of `xs` to `acc`.
    fn lane_values(&self, xs: &Expr, env: &Env, acc: &Acc, origin: Prim) -> R<Comm> {
        let lane = self.loop_var(&Nat::cst(32));
        let at_lane = |ys: Exp| {
            let (_, elem) = array_dt(&ys.ty, xs)?;
            Ok(Exp::new(ExpKind::Idx(ys, Nat::var(&lane)), elem))
        };
        let body = match mapped(xs) {
            Some((g, ys)) => self.tr(
                ys,
                env,
                Out::Con(&|ys| self.call(g, env, vec![Value::Data(at_lane(ys)?)], Out::Acc(acc))),
            )?,
            None => self.tr(xs, env, Out::Con(&|ys| Ok(self.assign(acc, &at_lane(ys)?))))?,
        };
        Ok(Comm::For {
            var: lane,
            count: Nat::cst(32),
            kind: LoopKind::Gpu(ParLevel::Lane),
            origin: origin.name(),
            body: Box::new(body),
        })
    }

    /// One step of the butterfly: `other := shuffleXor(v, o); v := f v other`.
    fn butterfly_step(&self, f: &Expr, env: &Env, read: &Exp, acc: &Acc, o: u32) -> R<Comm> {
        let other = Ident {
            name: self.fresh("other"),
            ty: read.ty.clone(),
        };
        let other_acc = Acc::new(AccKind::Var(other.clone()), read.ty.clone());
        let other_read = Exp::new(ExpKind::Var(other.clone()), read.ty.clone());
        let shuffled = Exp::new(
            ExpKind::Shuffle(read.clone(), Shuffle::Xor(o)),
            read.ty.clone(),
        );
        let args = |v: &Exp| vec![Value::Data(v.clone()), Value::Data(other_read.clone())];
        let step = self.update(&|o| self.call(f, env, args(read), Out::Acc(o)), acc)?;
        Ok(Comm::New {
            ident: other,
            addr: AddrSpace::Private,
            body: Box::new(Comm::Seq(vec![self.assign(&other_acc, &shuffled), step])),
        })
    }
}

/// `g` and `ys` of `xs` = `map g ys` or `mapLane g ys`.
fn mapped(xs: &Expr) -> Option<(&Expr, &Expr)> {
    let (head, values) = xs.value_spine();
    let ExprKind::Prim(p) = head.kind() else {
        return None;
    };
    if !matches!(p, Prim::Map | Prim::MapLane) {
        return None;
    }
    match values[..] {
        [g, ys] => Some((g, ys)),
        _ => None,
    }
}

/// Refuses a value a shuffle cannot move (for `p`, `reduceWarp` or `scanWarp`): CUDA
/// shuffles 32- and 64-bit integers and floats.
fn check_shuffled(e: &Expr, t: &DataType, p: Prim) -> R<()> {
    use rise::ScalarType as S;
    match t {
        DataType::Scalar(S::Int | S::I32 | S::U32 | S::I64 | S::U64 | S::F32 | S::F64) => Ok(()),
        _ => Err(TranslateError::at(
            e,
            format!(
                "`{}` over values of type {t}: a warp shuffle moves 32- and 64-bit \
                 integers and floats (int, i32, u32, i64, u64, f32, f64) only",
                p.name()
            ),
            Some("reduce or scan other types sequentially, or cast the values first"),
        )),
    }
}
