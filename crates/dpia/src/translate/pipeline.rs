//! `reduceSeqPipelined(s)`: a sequential reduction whose copies to local memory run ahead.
//!
//! A tiled GPU kernel's reduction over tiles (`k`-tiles of a matrix product) copies each
//! tile to local (shared) memory and then computes on it; done one after the other, the
//! work-group waits for every copy. When the step is written
//!
//! ```text
//! fun acc x => toMem local (E1 x) (fun m1 => ... toMem local (Ek x) (fun mk => B))
//! ```
//!
//! and the copies `Ei` read neither the accumulator nor each other, element `i + s - 1`'s
//! copies can be issued while element `i` is computed: each `mi` gets `s` buffers (stage
//! `i mod s` holds element `i`), the copies are asynchronous (CUDA `cp.async`), committed as
//! one group per element, and iteration `i` waits until element `i`'s group has landed:
//!
//! ```text
//! barrier                                  // the buffers' last readers are done
//! for j < s-1: (if j < n: async copies of x[j] into stage j); commit
//! for i < n:
//!   wait until at most s-2 groups are in flight; barrier
//!   (if i+s-1 < n: async copies of x[i+s-1] into stage (i+s-1) mod s); commit
//!   acc := B[acc, x[i], m1 := stage i mod s of m1, ...]
//! wait for all
//! ```
//!
//! The barrier after the wait makes every thread's copies of element `i` visible, and it
//! also separates iteration `i - 1`'s reads of stage `(i-1) mod s` from the copies into it
//! that iteration `i` issues, so one barrier per iteration suffices. The result is the
//! `reduceSeq`'s: the copies are the same, only issued earlier.

use super::*;

impl Translator {
    /// The pipelined reduction of `xs` with the step `f` into `acc` (read as `read`).
    #[allow(clippy::too_many_arguments)]
    pub(super) fn pipelined(
        &self,
        p: Prim,
        stages: u8,
        f: &Expr,
        env: &Env,
        xs: &Exp,
        (n, elem): (&Nat, &DataType),
        read: Exp,
        acc: &Acc,
    ) -> R<Comm> {
        let refuse = |why: String| {
            Err(TranslateError::at(
                f,
                format!("`{}`: {why}", p.name()),
                Some(
                    "write the step as `fun acc x => toMem local (copy of x) (fun tile => ...)`: \
                     the copies of x to local memory, which do not read the accumulator, first",
                ),
            ))
        };
        let Some(((a, x, body), fenv)) =
            function(f, env).and_then(|(step, fenv)| Some((two_params(&step)?, fenv)))
        else {
            return refuse("its step is not a function written `fun acc x => ...`".into());
        };
        let (copies, rest) = match local_copies(&body, &a) {
            Ok(found) => found,
            Err(why) => return refuse(why),
        };
        let s = i64::from(stages);
        let buffers = copies
            .iter()
            .map(|(_, e)| {
                let ident = Ident {
                    name: self.fresh("stage"),
                    ty: DataType::array(s, data_type(e)?),
                };
                self.spaces
                    .borrow_mut()
                    .insert(ident.name.clone(), AddrSpace::Local);
                Ok(ident)
            })
            .collect::<R<Vec<_>>>()?;
        let stage = |b: &Ident, at: &Nat| -> R<(Exp, Acc)> {
            let DataType::Array(_, t) = &b.ty else {
                return Err(TranslateError::at(
                    f,
                    "a stage buffer is not an array",
                    None,
                ));
            };
            let k = at.modulo(&Nat::cst(s));
            let whole = Exp::new(ExpKind::Var(b.clone()), b.ty.clone());
            let into = Acc::new(AccKind::Var(b.clone()), b.ty.clone());
            Ok((
                Exp::new(ExpKind::Idx(whole, k.clone()), (**t).clone()),
                Acc::new(AccKind::Idx(into, k), (**t).clone()),
            ))
        };
        // the copies of element `at` into its stage, issued asynchronously when `at < n`
        let prefetch = |at: Nat| -> R<Comm> {
            let element = Exp::new(ExpKind::Idx(xs.clone(), at.clone()), elem.clone());
            let copy_env = fenv.bind(&x, Value::Data(element));
            let copies = copies
                .iter()
                .zip(&buffers)
                .map(|((_, e), b)| self.tr(e, &copy_env, Out::Acc(&stage(b, &at)?.1)))
                .collect::<R<Vec<_>>>()?;
            Ok(Comm::Seq(vec![
                Comm::IfLess {
                    lhs: at,
                    rhs: n.clone(),
                    body: Box::new(Comm::AsyncCopy(Box::new(Comm::Seq(copies)))),
                },
                Comm::AsyncCommit,
            ]))
        };
        let j = Var::with_range(self.fresh("i"), Nat::cst(0), Nat::cst(s - 1));
        let prologue = Comm::For {
            var: j.clone(),
            count: Nat::cst(s - 1),
            kind: LoopKind::Unroll,
            origin: p.name(),
            body: Box::new(prefetch(Nat::var(&j))?),
        };
        let i = self.loop_var(n);
        let element = Exp::new(ExpKind::Idx(xs.clone(), Nat::var(&i)), elem.clone());
        let mut step_env = fenv
            .bind(&a, Value::Data(read))
            .bind(&x, Value::Data(element));
        for ((m, _), b) in copies.iter().zip(&buffers) {
            step_env = step_env.bind(m, Value::Data(stage(b, &Nat::var(&i))?.0));
        }
        let compute = self.update(&|o| self.tr(&rest, &step_env, Out::Acc(o)), acc)?;
        let barrier = || Comm::Barrier {
            local: true,
            global: false,
            warp: false,
        };
        let main = Comm::For {
            var: i.clone(),
            count: n.clone(),
            kind: LoopKind::Seq,
            origin: p.name(),
            body: Box::new(Comm::Seq(vec![
                Comm::AsyncWait(u32::from(stages) - 2),
                barrier(),
                prefetch(Nat::var(&i) + (s - 1))?,
                compute,
            ])),
        };
        let pipeline = Comm::Seq(vec![barrier(), prologue, main, Comm::AsyncWait(0)]);
        Ok(buffers
            .into_iter()
            .rev()
            .fold(pipeline, |body, ident| Comm::New {
                ident,
                addr: AddrSpace::Local,
                body: Box::new(body),
            }))
    }
}

/// The lambda `f` is (through annotations and names bound to functions), with its
/// environment.
fn function(f: &Expr, env: &Env) -> Option<(Expr, Env)> {
    match f.kind() {
        ExprKind::Lambda(..) => Some((f.clone(), env.clone())),
        ExprKind::Annot(inner, _) => function(inner, env),
        ExprKind::Var(x) => match env.lookup(x) {
            Some(Value::Fun(g, genv)) => function(g, genv),
            _ => None,
        },
        _ => None,
    }
}

/// `fun a x => body`: the two parameters and the body.
fn two_params(f: &Expr) -> Option<(Name, Name, Expr)> {
    let ExprKind::Lambda(a, _, inner) = f.kind() else {
        return None;
    };
    let ExprKind::Lambda(x, _, body) = unannotated(inner).kind() else {
        return None;
    };
    Some((a.clone(), x.clone(), unannotated(body).clone()))
}

fn unannotated(e: &Expr) -> &Expr {
    match e.kind() {
        ExprKind::Annot(inner, _) => unannotated(inner),
        _ => e,
    }
}

/// The leading `toMem local E (fun m => ...)` of a step (each `m` with its `E`) and what
/// follows them; an error unless there is one, or where a copy reads the accumulator
/// `acc` or an earlier copy.
fn local_copies(body: &Expr, acc: &Name) -> Result<(Vec<(Name, Expr)>, Expr), String> {
    let mut copies: Vec<(Name, Expr)> = Vec::new();
    let mut rest = body.clone();
    loop {
        let (head, args) = rest.spine();
        let is_local = args
            .iter()
            .any(|a| matches!(a, Arg::Type(TypeArg::AddrSpace(AddrSpace::Local))));
        let vals = value_args(&args);
        let next = match (head.as_prim(), vals.as_slice()) {
            (Some(Prim::ToMem), [copy, then]) if is_local => match unannotated(then).kind() {
                ExprKind::Lambda(m, _, next) => Some((m.clone(), copy.clone(), next.clone())),
                _ => None,
            },
            _ => None,
        };
        let Some((m, copy, next)) = next else { break };
        let reads = copy.free_vars();
        if let Some(v) = std::iter::once(acc)
            .chain(copies.iter().map(|(m, _)| m))
            .find(|v| reads.contains(v))
        {
            return Err(format!(
                "the copy to local memory bound to `{m}` reads `{v}`, so it cannot run ahead \
                 of the iterations before it"
            ));
        }
        copies.push((m, copy));
        rest = unannotated(&next).clone();
    }
    if copies.is_empty() {
        return Err("its step does not begin with a copy to local memory (`toMem local`)".into());
    }
    Ok((copies, rest))
}
