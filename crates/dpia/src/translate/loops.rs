//! Loops whose translation needs more than one step: `iterate` with its double
//! buffers and the sequential reductions with their accumulators.

use super::*;
use crate::limits::{
    unroll_advice, MAX_EXPANDED_SAME_SIZE_STEPS, MAX_ITERATE_STEPS, MAX_SLIDE_WINDOW,
    MAX_UNROLLED_ITERATIONS,
};

/// How the iterations of a sequential reduction run.
#[derive(Clone, Copy)]
pub(super) enum Steps {
    /// A loop of this kind.
    Loop(LoopKind),
    /// Pipelined, with this many stages of copies ([`Translator::pipelined`]).
    Pipelined(u8),
}

impl Translator {
    /// `iterate k f xs` written to `out`, with double buffering (RISE & Shine
    /// §VI, Listings 12–14): iteration `i` applies `f` at `l = n^(k-1-i) * m`,
    /// reading the previous iteration's result and writing into one of two
    /// buffers, alternately; the first iteration reads `xs` where it is and the
    /// last writes straight into `out`, so nothing is copied. The number of
    /// iterations must be a constant: the iterations are expanded here, which
    /// resolves Listing 12's pointer swap at compile time (iteration `i` writes
    /// buffer `i mod 2`) and gives every iteration constant sizes. A step that
    /// keeps the size (`n = 1`) repeated more than [`MAX_EXPANDED_SAME_SIZE_STEPS`]
    /// times is a loop instead ([`Translator::iterate_loop`]).
    pub(super) fn iterate(
        &self,
        e: &Expr,
        k: &Nat,
        vals: &[Expr],
        env: &Env,
        out: &Acc,
    ) -> R<Comm> {
        let (m, elem) = array_dt(&out.ty, e)?;
        let n = iterate_factor(&vals[0])?;
        let same_size = n.as_cst() == Some(1);
        match k.as_cst() {
            Some(k) if same_size && k > MAX_EXPANDED_SAME_SIZE_STEPS => {
                return self.iterate_loop(k, vals, env, out, (&m, &elem));
            }
            None if same_size => return self.iterate_run_time(k, vals, env, out, (&m, &elem)),
            _ => {}
        }
        let Some(k) = k.as_cst().filter(|k| (0..=MAX_ITERATE_STEPS).contains(k)) else {
            return Err(TranslateError::at(
                e,
                format!(
                    "`iterate {k}`: the number of iterations of a step that changes the size \
                     must be a constant between 0 and {MAX_ITERATE_STEPS}"
                ),
                Some(
                    "a count known only at run time (a size parameter) needs a step that keeps \
                     the size, `(l: nat) -> l.t -> l.t`",
                ),
            ));
        };
        if k == 0 {
            return self.tr(&vals[1], env, Out::Acc(out));
        }
        let len = |i: i64| n.pow(&Nat::cst(k - 1 - i)) * m.clone();
        self.tr(
            &vals[1],
            env,
            Out::Con(&|input| {
                let addr = self.iterate_buffer_space(&input);
                // buffer b holds the results of the iterations i with i mod 2 = b (but the last)
                let buffers: Vec<Ident> = (0..(k - 1).min(2))
                    .map(|b| Ident {
                        name: self.fresh("buf"),
                        ty: DataType::array(len(b), elem.clone()),
                    })
                    .collect();
                let mut steps = Vec::new();
                let mut current = input;
                for i in 0..k {
                    let l = len(i);
                    let slice = DataType::array(l.clone(), elem.clone());
                    let (target, result) = if i == k - 1 {
                        (out.clone(), None)
                    } else {
                        let buf = &buffers[(i % 2) as usize];
                        let write = Acc::new(AccKind::Var(buf.clone()), buf.ty.clone());
                        let read = Exp::new(ExpKind::Var(buf.clone()), buf.ty.clone());
                        (
                            Acc::new(AccKind::View(View::Take(l.clone()), write), slice.clone()),
                            Some(Exp::new(ExpKind::View(View::Take(l.clone()), read), slice)),
                        )
                    };
                    steps.push(self.call_at_nat(
                        &vals[0],
                        env,
                        &l,
                        vec![Value::Data(current.clone())],
                        Out::Acc(&target),
                    )?);
                    if let Some(r) = result {
                        current = r;
                    }
                }
                Ok(in_buffers(&buffers, &addr, Comm::Seq(steps)))
            }),
        )
    }

    /// Where `iterate`'s buffers live: where its input is stored when that is local or
    /// private memory (a work-group's tree reduction stays in local memory: `toMem local`
    /// on iterate's input says so), in global memory otherwise.
    fn iterate_buffer_space(&self, input: &Exp) -> AddrSpace {
        match self.space_of(input) {
            Some(a @ (AddrSpace::Local | AddrSpace::Private)) => a,
            _ => AddrSpace::Global,
        }
    }

    /// `iterate k f xs` whose step keeps the size `m` (of `elem`s), for `k > 2`, as a
    /// run-time loop over two buffers: the first step reads `xs` and writes buffer 0,
    /// a loop of `(k - 2) / 2` iterations applies the step twice (buffer 0 into 1,
    /// then 1 into 0), an odd step left over writes buffer 1, and the last step
    /// writes `out`. The generated code holds at most five copies of the step,
    /// whatever `k`, and copies nothing.
    fn iterate_loop(
        &self,
        k: i64,
        vals: &[Expr],
        env: &Env,
        out: &Acc,
        (m, elem): (&Nat, &DataType),
    ) -> R<Comm> {
        self.ping_pong(vals, env, (m, elem), &|input, b| {
            let twice = b.twice()?;
            let mut steps = vec![
                b.step(input, &b.write(0))?,
                b.repeat(Nat::cst((k - 2) / 2), twice),
            ];
            let last = if (k - 2) % 2 == 1 {
                steps.push(b.step(&b.read(0), &b.write(1))?);
                1
            } else {
                0
            };
            steps.push(b.step(&b.read(last), out)?);
            Ok(steps)
        })
    }

    /// `iterate k f xs` whose step keeps the size `m` (of `elem`s) and whose count `k` is
    /// known only at run time (a size parameter): `xs` is copied into buffer 0, a loop of
    /// `k / 2` iterations applies the step twice (buffer 0 into 1, then 1 into 0), and a
    /// loop of `k mod 2` iterations applies the last step into `out`, or one of
    /// `1 - k mod 2` copies buffer 0 there. The code holds three copies of the step.
    fn iterate_run_time(
        &self,
        k: &Nat,
        vals: &[Expr],
        env: &Env,
        out: &Acc,
        (m, elem): (&Nat, &DataType),
    ) -> R<Comm> {
        self.ping_pong(vals, env, (m, elem), &|input, b| {
            let twice = b.twice()?;
            let odd = k.modulo(&Nat::cst(2));
            Ok(vec![
                self.assign(&b.write(0), input),
                b.repeat(k.floor_div(&Nat::cst(2)), twice),
                b.repeat(odd.clone(), b.step(&b.read(0), out)?),
                b.repeat(Nat::cst(1) - odd, self.assign(out, &b.read(0))),
            ])
        })
    }

    /// The two buffers of an `iterate` whose step keeps the size `m` (of `elem`s): the
    /// input `vals[1]` translated, then the commands `steps` makes of it and of the
    /// buffers, inside the buffers' allocations (where [`Self::iterate_buffer_space`] says).
    fn ping_pong(
        &self,
        vals: &[Expr],
        env: &Env,
        (m, elem): (&Nat, &DataType),
        steps: &dyn Fn(&Exp, &PingPong) -> R<Vec<Comm>>,
    ) -> R<Comm> {
        let ty = DataType::array(m.clone(), elem.clone());
        self.tr(
            &vals[1],
            env,
            Out::Con(&|input| {
                let addr = self.iterate_buffer_space(&input);
                let buffers = PingPong {
                    translator: self,
                    f: &vals[0],
                    env,
                    m,
                    idents: [0, 1].map(|_| Ident {
                        name: self.fresh("buf"),
                        ty: ty.clone(),
                    }),
                };
                let body = Comm::Seq(steps(&input, &buffers)?);
                Ok(in_buffers(&buffers.idents, &addr, body))
            }),
        )
    }

    /// The loop of `reduceSeq f _ xs` (`p` and `kind` say which): every element of `xs`
    /// (`n` of `elem`) is combined by `f` with the accumulator, read as `read` and written
    /// through `acc`.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn reduce_loop(
        &self,
        p: Prim,
        steps: Steps,
        f: &Expr,
        env: &Env,
        xs: &Exp,
        (n, elem): (&Nat, &DataType),
        read: Exp,
        acc: &Acc,
    ) -> R<Comm> {
        let kind = match steps {
            Steps::Loop(kind) => kind,
            Steps::Pipelined(stages) => {
                return self.pipelined(p, stages, f, env, xs, (n, elem), read, acc)
            }
        };
        let i = self.loop_var(n);
        let x = Exp::new(ExpKind::Idx(xs.clone(), Nat::var(&i)), elem.clone());
        let args = |read: &Exp| vec![Value::Data(read.clone()), Value::Data(x.clone())];
        let step = self.update(&|o| self.call(f, env, args(&read), Out::Acc(o)), acc)?;
        Ok(Comm::For {
            var: i,
            count: n.clone(),
            kind,
            origin: p.name(),
            body: Box::new(step),
        })
    }

    /// The accumulator `acc` (read as `read`) updated to `f args(read)`: in place
    /// where the update reads each part of it before writing that part, otherwise
    /// computed aside and copied over it.
    ///
    /// `step(o)` writes the new value to `o`.
    pub(super) fn update(&self, step: &dyn Fn(&Acc) -> R<Comm>, acc: &Acc) -> R<Comm> {
        let computed = step(acc)?;
        let in_place = acc_place(acc, Vec::new())
            .is_some_and(|(name, _)| updates_in_place_safely(&computed, &name));
        if in_place {
            return Ok(computed);
        }
        let ident = Ident {
            name: self.fresh("next"),
            ty: acc.ty.clone(),
        };
        let next = Acc::new(AccKind::Var(ident.clone()), acc.ty.clone());
        let computed = step(&next)?;
        let next_read = Exp::new(ExpKind::Var(ident.clone()), acc.ty.clone());
        Ok(Comm::New {
            ident,
            addr: AddrSpace::Private,
            body: Box::new(Comm::Seq(vec![computed, self.assign(acc, &next_read)])),
        })
    }

    /// `scanSeq f init xs` written to `out`: a sequential loop over a private
    /// accumulator, `acc = f x_i acc` then `out[i] = acc` at each element.
    pub(super) fn scan_seq(&self, e: &Expr, vals: &[Expr], env: &Env, out: Out) -> R<Comm> {
        let Out::Acc(out) = out else {
            return Err(TranslateError::at(
                e,
                "the result of `scanSeq` is read but not stored anywhere",
                Some("write it to memory first: `toMem global (...)`, e.g. with storeInMemory"),
            ));
        };
        let (n, t) = array_dt(&data_type(e)?, e)?;
        let (_, elem) = array_of(&vals[2])?;
        self.values(&vals[1..], env, &|data| {
            let [Value::Data(init), Value::Data(xs)] = &data[..] else {
                return Err(TranslateError::at(e, "scanSeq of a function", None));
            };
            let ident = Ident {
                name: self.fresh("acc"),
                ty: t.clone(),
            };
            let acc = Acc::new(AccKind::Var(ident.clone()), t.clone());
            let read = Exp::new(ExpKind::Var(ident.clone()), t.clone());
            let i = self.loop_var(&n);
            let x = Exp::new(ExpKind::Idx(xs.clone(), Nat::var(&i)), elem.clone());
            let args = |read: &Exp| vec![Value::Data(x.clone()), Value::Data(read.clone())];
            let step = self.update(
                &|o| self.call(&vals[0], env, args(&read), Out::Acc(o)),
                &acc,
            )?;
            let o = Acc::new(AccKind::Idx(out.clone(), Nat::var(&i)), t.clone());
            let scan = Comm::For {
                var: i,
                count: n.clone(),
                kind: LoopKind::Seq,
                origin: Prim::ScanSeq.name(),
                body: Box::new(Comm::Seq(vec![step, self.assign(&o, &read)])),
            };
            Ok(Comm::New {
                ident,
                addr: AddrSpace::Private,
                body: Box::new(Comm::Seq(vec![self.assign(&acc, init), scan])),
            })
        })
    }

    /// `slideSeq sz f xs` written to `out`: a window of `sz` elements in private memory,
    /// its slots 1 .. sz-1 filled with `xs[0 .. sz-2]` before the loop; step `i` moves
    /// the window on by one (every slot takes the element of the next, the oldest is
    /// dropped), reads `xs[i + sz - 1]` into the last slot and writes `f window` to
    /// `out[i]`. The window's size must be a constant (its copies are unrolled, so that
    /// the code generator's compiler can keep it in registers).
    pub(super) fn slide_seq(
        &self,
        e: &Expr,
        sz: &Nat,
        vals: &[Expr],
        env: &Env,
        out: Out,
    ) -> R<Comm> {
        let Out::Acc(out) = out else {
            return Err(TranslateError::at(
                e,
                "the result of `slideSeq` is read but not stored anywhere",
                Some("write it to memory first: `toMem global (...)`, e.g. with storeInMemory"),
            ));
        };
        let Some(k) = sz.as_cst().filter(|k| (1..=MAX_SLIDE_WINDOW).contains(k)) else {
            return Err(TranslateError::at(
                e,
                format!(
                    "`slideSeq {sz}`: the window must be a constant number of elements between \
                     1 and {MAX_SLIDE_WINDOW}"
                ),
                Some("keep `mapSeq f (slide sz 1 xs)` for other windows"),
            ));
        };
        let (n, t) = array_dt(&data_type(e)?, e)?;
        let (_, elem) = array_of(&vals[1])?;
        self.values(&vals[1..], env, &|data| {
            let [Value::Data(xs)] = &data[..] else {
                return Err(TranslateError::at(e, "slideSeq of a function", None));
            };
            let ty = DataType::array(Nat::cst(k), elem.clone());
            let ident = Ident {
                name: self.fresh("window"),
                ty: ty.clone(),
            };
            let window = Acc::new(AccKind::Var(ident.clone()), ty.clone());
            let read = Exp::new(ExpKind::Var(ident.clone()), ty.clone());
            let slot = |j: i64| Acc::new(AccKind::Idx(window.clone(), Nat::cst(j)), elem.clone());
            let held = |j: i64| Exp::new(ExpKind::Idx(read.clone(), Nat::cst(j)), elem.clone());
            let x_at = |i: Nat| Exp::new(ExpKind::Idx(xs.clone(), i), elem.clone());
            let copy = |to: Acc, from: Exp| unrolled(self.assign(&to, &from));
            let mut body: Vec<Comm> = (1..k)
                .map(|j| copy(slot(j), x_at(Nat::cst(j - 1))))
                .collect();
            let i = self.loop_var(&n);
            let mut step: Vec<Comm> = (0..k - 1).map(|j| copy(slot(j), held(j + 1))).collect();
            step.push(copy(slot(k - 1), x_at(Nat::var(&i) + Nat::cst(k - 1))));
            let o = Acc::new(AccKind::Idx(out.clone(), Nat::var(&i)), t.clone());
            step.push(self.call(&vals[0], env, vec![Value::Data(read.clone())], Out::Acc(&o))?);
            body.push(Comm::For {
                var: i,
                count: n.clone(),
                kind: LoopKind::Seq,
                origin: Prim::SlideSeq.name(),
                body: Box::new(Comm::Seq(step)),
            });
            Ok(Comm::New {
                ident,
                addr: AddrSpace::Private,
                body: Box::new(Comm::Seq(body)),
            })
        })
    }

    /// `reduceSeq f init xs` whose initial value is computed by a loop, possibly seen
    /// through views (a `mapLocal` over the threads that own the parts of the
    /// accumulator, say; `transpose (mapPar ...)`): the initial
    /// value is written into the accumulator, as Listing 9's `accT(init, accumAcc)`
    /// does, rather than computed elsewhere and copied.
    pub(super) fn reduce_computed_init(
        &self,
        p: Prim,
        steps: Steps,
        vals: &[Expr],
        env: &Env,
        out: Out,
        (ty, n, elem): (&DataType, &Nat, &DataType),
    ) -> R<Comm> {
        let ident = Ident {
            name: self.fresh("acc"),
            ty: ty.clone(),
        };
        let acc = Acc::new(AccKind::Var(ident.clone()), ty.clone());
        let read = Exp::new(ExpKind::Var(ident.clone()), ty.clone());
        let init = self.tr(&vals[1], env, Out::Acc(&acc))?;
        let reduce = |k: K| {
            self.tr(
                &vals[2],
                env,
                Out::Con(&|xs| {
                    let lp = self.reduce_loop(
                        p,
                        steps,
                        &vals[0],
                        env,
                        &xs,
                        (n, elem),
                        read.clone(),
                        &acc,
                    )?;
                    Ok(Comm::Seq(vec![lp, k(read.clone())?]))
                }),
            )
        };
        let rest = match out {
            Out::Con(k) => reduce(k)?,
            Out::Acc(a) => reduce(&|r| Ok(self.assign(a, &r)))?,
        };
        Ok(Comm::New {
            ident,
            addr: AddrSpace::Private,
            body: Box::new(Comm::Seq(vec![init, rest])),
        })
    }
}

/// The `n` of `iterate`'s function `(l: nat) -> (l*n).t -> l.t`: its input length at `l = 1`.
fn iterate_factor(f: &Expr) -> R<Nat> {
    if let Some(Type::DepFun { binder, body, .. }) = f.ty() {
        if let Type::Fun(a, _) = &**body {
            if let Some(DataType::Array(len, _)) = a.as_data() {
                let name = binder.name.clone();
                let one = move |x: &str, kind: rise::Kind| {
                    (x == &*name && kind == rise::Kind::Nat).then(|| TypeArg::Nat(Nat::cst(1)))
                };
                return Ok(rise::types::subst_nat(len, &one));
            }
        }
    }
    Err(TranslateError::at(
        f,
        "the function given to `iterate` does not have the type `(l: nat) -> (l*n).t -> l.t`",
        None,
    ))
}

/// Whether `e` is a lowered map applied to its data (a loop that writes memory).
pub(super) fn is_loop_app(e: &Expr) -> bool {
    let (head, args) = e.spine();
    let ExprKind::Prim(p) = head.kind() else {
        return false;
    };
    let lowered =
        matches!(p.backend(), rise::primitives::Backend::MapLoop(l) if LoopKind::of(l).is_some());
    lowered && value_args(&args).len() == 2
}

/// Whether `e` is a lowered map applied to its data, seen through views
/// (`transpose (mapPar f xs)`, `map transpose (...)`): a loop that writes memory
/// re-indexed by the views' acceptors.
pub(super) fn is_loop_app_under_views(e: &Expr) -> bool {
    if is_loop_app(e) {
        return true;
    }
    let (head, args) = e.spine();
    let values = value_args(&args);
    match (head.kind(), &values[..]) {
        (ExprKind::Prim(p), [x]) if p.is_layout() => is_loop_app_under_views(x),
        (ExprKind::Prim(Prim::Map), [f, x]) => f.is_view_function() && is_loop_app_under_views(x),
        _ => false,
    }
}

/// Refuses an unrolled loop (`kind` [`LoopKind::Unroll`]) of `count` iterations,
/// a constant over [`MAX_UNROLLED_ITERATIONS`], before anything is expanded; `e` is
/// the application of the primitive `p` the loop comes from. A count that is not yet
/// a constant is checked by the code generator once it is.
/// A copy (`Translator::assign`'s loops) with its loops of constant counts of at most
/// [`MAX_SLIDE_WINDOW`] iterations unrolled.
fn unrolled(c: Comm) -> Comm {
    match c {
        Comm::For {
            var,
            count,
            kind: LoopKind::Seq,
            origin,
            body,
        } if count.as_cst().is_some_and(|c| c <= MAX_SLIDE_WINDOW) => Comm::For {
            var,
            count,
            kind: LoopKind::Unroll,
            origin,
            body: Box::new(unrolled(*body)),
        },
        Comm::For {
            var,
            count,
            kind,
            origin,
            body,
        } => Comm::For {
            var,
            count,
            kind,
            origin,
            body: Box::new(unrolled(*body)),
        },
        Comm::Seq(cs) => Comm::Seq(cs.into_iter().map(unrolled).collect()),
        other => other,
    }
}

pub(super) fn check_unrolled(e: &Expr, p: Prim, kind: LoopKind, count: &Nat) -> R<()> {
    match count.as_cst() {
        Some(c) if kind == LoopKind::Unroll && c > MAX_UNROLLED_ITERATIONS => {
            Err(TranslateError::at(
                e,
                format!("`{}` would be unrolled into {c} iterations", p.name()),
                Some(&unroll_advice(c)),
            ))
        }
        _ => Ok(()),
    }
}

/// `body` inside a `new` of each of `buffers` in `addr`, the first outermost.
/// The two buffers of a same-size `iterate` ([`Translator::ping_pong`]) and its step `f`.
struct PingPong<'a> {
    translator: &'a Translator,
    f: &'a Expr,
    env: &'a Env,
    /// The size the step keeps.
    m: &'a Nat,
    idents: [Ident; 2],
}

impl PingPong<'_> {
    fn read(&self, b: usize) -> Exp {
        let id = &self.idents[b];
        Exp::new(ExpKind::Var(id.clone()), id.ty.clone())
    }

    fn write(&self, b: usize) -> Acc {
        let id = &self.idents[b];
        Acc::new(AccKind::Var(id.clone()), id.ty.clone())
    }

    /// The step applied to `from`, written to `to`.
    fn step(&self, from: &Exp, to: &Acc) -> R<Comm> {
        self.translator.call_at_nat(
            self.f,
            self.env,
            self.m,
            vec![Value::Data(from.clone())],
            Out::Acc(to),
        )
    }

    /// Two steps: buffer 0 into 1, then 1 into 0.
    fn twice(&self) -> R<Comm> {
        Ok(Comm::Seq(vec![
            self.step(&self.read(0), &self.write(1))?,
            self.step(&self.read(1), &self.write(0))?,
        ]))
    }

    /// `body` repeated `count` times, sequentially.
    fn repeat(&self, count: Nat, body: Comm) -> Comm {
        Comm::For {
            var: self.translator.loop_var(&count),
            count,
            kind: LoopKind::Seq,
            origin: "iterate",
            body: Box::new(body),
        }
    }
}

fn in_buffers(buffers: &[Ident], addr: &AddrSpace, body: Comm) -> Comm {
    buffers.iter().rev().fold(body, |body, buf| Comm::New {
        ident: buf.clone(),
        addr: addr.clone(),
        body: Box::new(body),
    })
}
