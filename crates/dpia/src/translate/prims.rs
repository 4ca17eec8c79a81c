//! The translation of each primitive application (the arms of `prim`).

use super::*;
use rise::primitives::{Backend, Loop, ViewShape};

impl Translator {
    pub(super) fn prim(&self, p: Prim, e: &Expr, args: &[Arg], env: &Env, out: Out) -> R<Comm> {
        use Prim::*;
        let nats = nat_args(args);
        let vals = value_args(args);
        let arity = p.value_arity();
        if p == MakeArray && vals.len() > 1 {
            return self.literal_array(e, &vals, env, out);
        }
        if p == MakeVector {
            return self.make_vector(e, &vals, env, out);
        }
        if vals.len() < arity {
            return Err(TranslateError::at(
                e,
                format!("`{}` is not applied to all its arguments", p.name()),
                None,
            ));
        }
        if vals.len() > arity {
            return Err(TranslateError::at(
                e,
                format!(
                    "`{}` returns a function here; this cannot be compiled",
                    p.name()
                ),
                None,
            ));
        }
        match p.backend() {
            Backend::Own => {}
            Backend::MapLoop(l) => return self.map_loop(p, l, e, &vals, env, out),
            Backend::ReduceLoop(l) => return self.reduce_seq(p, l, e, &vals, env, out),
            Backend::View(shape) => return self.view(shape, e, args, &vals, &nats, env, out),
            Backend::Lower(how) => {
                return Err(TranslateError::at(
                    e,
                    format!(
                        "this `{}` is not lowered: code generation does not choose how to run it",
                        p.name()
                    ),
                    Some(how),
                ))
            }
            Backend::NotYet(why) => {
                return Err(TranslateError::at(
                    e,
                    format!("`{}` cannot be compiled yet", p.name()),
                    Some(why),
                ))
            }
        }
        let ty = data_type(e)?;
        let view = |kind: ExpKind| Exp::new(kind, ty.clone());
        if let Some(f) = p.math() {
            check_math_operand(e, f, &ty)?;
            return self.data(&vals, env, out, &|xs| {
                Ok(view(ExpKind::Math(f, xs.to_vec())))
            });
        }
        match p {
            // ---- scalar operations --------------------------------------------
            Id => self.tr(&vals[0], env, out),
            Neg | Not | BitNot => self.data(&vals, env, out, &|xs| {
                let op = match p {
                    Neg => UnOp::Neg,
                    Not => UnOp::Not,
                    _ => UnOp::BitNot,
                };
                Ok(view(ExpKind::Unary(op, xs[0].clone())))
            }),
            Add | Sub | Mul | Div | Mod | Gt | Lt | Le | Ge | Equal | NotEqual | And | Or
            | BitAnd | BitOr | BitXor | Shl | Shr => self.data(&vals, env, out, &|xs| {
                let op = match p {
                    Add => BinOp::Add,
                    Sub => BinOp::Sub,
                    Mul => BinOp::Mul,
                    Div => BinOp::Div,
                    Mod => BinOp::Mod,
                    Gt => BinOp::Gt,
                    Lt => BinOp::Lt,
                    Le => BinOp::Le,
                    Ge => BinOp::Ge,
                    NotEqual => BinOp::Ne,
                    And => BinOp::And,
                    Or => BinOp::Or,
                    BitAnd => BinOp::BitAnd,
                    BitOr => BinOp::BitOr,
                    BitXor => BinOp::BitXor,
                    Shl => BinOp::Shl,
                    Shr => BinOp::Shr,
                    _ => BinOp::Eq,
                };
                Ok(view(ExpKind::Binary(op, xs[0].clone(), xs[1].clone())))
            }),
            Select => self.data(&vals, env, out, &|xs| {
                Ok(view(ExpKind::Select(
                    xs[0].clone(),
                    xs[1].clone(),
                    xs[2].clone(),
                )))
            }),
            Cast => self.data(&vals, env, out, &|xs| {
                Ok(view(ExpKind::Cast(xs[0].clone())))
            }),
            IndexAsNat => self.data(&vals, env, out, &|xs| {
                Ok(Exp::new((*xs[0].kind).clone(), ty.clone()))
            }),
            // a value known at compile time is an index as it is; one computed at run
            // time is checked: element `x` of the array `0, 1, ..., n-1`
            NatAsIndex => self.data(&vals, env, out, &|xs| match &*xs[0].kind {
                ExpKind::Nat(_) => Ok(Exp::new((*xs[0].kind).clone(), ty.clone())),
                _ => {
                    let DataType::Index(n) = &ty else {
                        return Err(TranslateError::at(e, "natAsIndex of a non-index type", None));
                    };
                    let k = self.loop_var(n);
                    let ks = Exp::new(
                        ExpKind::Generate(k.clone(), view(ExpKind::Nat(Nat::var(&k)))),
                        DataType::array(n.clone(), ty.clone()),
                    );
                    Ok(view(ExpKind::At(ks, xs[0].clone())))
                }
            }),
            VectorFromScalar => self.data(&vals, env, out, &|xs| {
                Ok(view(ExpKind::VectorFromScalar(xs[0].clone())))
            }),
            Lane => {
                let k = nats[0].clone();
                let n = match data_type(&vals[0])? {
                    DataType::Vector(n, _) => n,
                    other => {
                        return Err(TranslateError::at(
                            e,
                            format!("`lane` of a non-vector ({other})"),
                            None,
                        ))
                    }
                };
                // the type checker requires `k < n`; a program built in Rust may not
                // have been checked, and a lane outside the vector has no code
                if n.prove_le(&k) || k.prove_lt(&Nat::cst(0)) {
                    return Err(TranslateError::at(
                        e,
                        format!("lane {k} of a vector of {n} lanes"),
                        Some("a lane index is below the vector's width"),
                    ));
                }
                self.data(&vals, env, out, &|xs| {
                    Ok(view(ExpKind::Lane(xs[0].clone(), k.clone())))
                })
            }
            // ---- binding and memory ---------------------------------------------
            // `let x f` where the result is written (a command): a value that is one C
            // value is computed once into a private variable that `f` reads, so its uses
            // share it; elsewhere (an expression, an array) `f` gets the value itself
            Let => match out {
                Out::Acc(_) if is_one_value(&data_type(&vals[0])?) => {
                    let ident = Ident {
                        name: self.fresh("let"),
                        ty: data_type(&vals[0])?,
                    };
                    self.new_holding(ident, AddrSpace::Private, &vals, env, out)
                }
                _ => self.tr(
                    &vals[0],
                    env,
                    Out::Con(&|x| self.call(&vals[1], env, vec![Value::Data(x)], out)),
                ),
            },
            ToMem => {
                let addr = match args.iter().find_map(|a| match a {
                    Arg::Type(TypeArg::AddrSpace(a)) => Some(a.clone()),
                    _ => None,
                }) {
                    Some(AddrSpace::Var(_)) | None => {
                        let v = v_name(args);
                        return Err(TranslateError::at(
                            e,
                            format!("`toMem` without an address space{v}"),
                            Some("give the address space: `toMem global`, `toMem private`, ... (storeInMemory inserts `toMem global`)"),
                        ));
                    }
                    Some(a) => a,
                };
                let ident = Ident {
                    name: self.fresh("mem"),
                    ty: data_type(&vals[0])?,
                };
                self.spaces
                    .borrow_mut()
                    .insert(ident.name.clone(), addr.clone());
                self.new_holding(ident, addr, &vals, env, out)
            }
            MapVec => {
                let Some(DataType::Vector(n, _)) = Some(&ty) else {
                    return Err(TranslateError::at(e, "mapVec of a non-vector", None));
                };
                let n = n.clone();
                let f = &vals[0];
                self.data(&vals[1..], env, out, &|xs| {
                    let body = self.pure(
                        f,
                        env,
                        vec![Value::Data(xs[0].clone())],
                        "the function of mapVec",
                    )?;
                    vectorized(&body, &n).ok_or_else(|| {
                        TranslateError::at(
                            e,
                            "the function of mapVec is not a scalar function",
                            Some("vectorize only functions on scalars"),
                        )
                    })
                })
            }
            // ---- views --------------------------------------------------------------
            Map => {
                let (n, elem) = array_of(&vals[1])?;
                if let Out::Acc(a) = out {
                    // Written to memory: through the view's acceptor, element by element.
                    let i = self.loop_var(&n);
                    let (_, out_elem) = array_dt(&a.ty, e)?;
                    let o = Acc::new(AccKind::Idx(a.clone(), Nat::var(&i)), out_elem);
                    if !vals[0].is_view_function() {
                        return Err(TranslateError::at(
                            e,
                            "this `map` computes a result that is written to memory, but it is not lowered: code generation does not choose how to run it",
                            Some("lower it: mapSeq, mapPar or mapSeqUnroll (e.g. with lowerToC, parallel, unroll)"),
                        ));
                    }
                    if let Some(x_acc) = self.acceptor_of_param(&vals[0], env, &o) {
                        let acc = Acc::new(AccKind::Map(i, x_acc), data_type(&vals[1])?);
                        return self.tr(&vals[1], env, Out::Acc(&acc));
                    }
                }
                // Read: each element is computed where it is read (fused into the reader).
                let f = &vals[0];
                self.data(&vals[1..], env, out, &|xs| {
                    let i = self.loop_var(&n);
                    let x = Exp::new(ExpKind::Idx(xs[0].clone(), Nat::var(&i)), elem.clone());
                    let body = self.pure(
                        f,
                        env,
                        vec![Value::Data(x)],
                        "the function of a map that is read (computed where it is read, fused into its reader)",
                    )?;
                    Ok(view(ExpKind::Generate(i, body)))
                })
            }
            Generate => {
                let (n, _) = array_dt(&ty, e)?;
                let i = self.loop_var(&n);
                let index = Exp::new(ExpKind::Nat(Nat::var(&i)), DataType::Index(n.clone()));
                let body = self.pure(
                    &vals[0],
                    env,
                    vec![Value::Data(index)],
                    "the function of generate",
                )?;
                self.give(view(ExpKind::Generate(i, body)), out)
            }
            MakeArray => {
                let (n, _) = array_dt(&ty, e)?;
                self.data(&vals, env, out, &|xs| {
                    Ok(view(ExpKind::Generate(self.loop_var(&n), xs[0].clone())))
                })
            }
            // an index known at compile time is a view; one computed at run time is
            // read (and checked) where the element is read
            Idx => self.data(&vals, env, out, &|xs| match &*xs[0].kind {
                ExpKind::Nat(i) => Ok(view(ExpKind::Idx(xs[1].clone(), i.clone()))),
                _ => Ok(view(ExpKind::At(xs[1].clone(), xs[0].clone()))),
            }),
            // `gather is xs = map (fun i => idx i xs) is`, a view
            Gather => {
                let (m, _) = array_dt(&ty, e)?;
                let (_, ielem) = array_of(&vals[0])?;
                self.data(&vals, env, out, &|xs| {
                    let j = self.loop_var(&m);
                    let at = Exp::new(ExpKind::Idx(xs[0].clone(), Nat::var(&j)), ielem.clone());
                    let (_, elem) = array_dt(&ty, e)?;
                    let body = Exp::new(ExpKind::At(xs[1].clone(), at), elem);
                    Ok(view(ExpKind::Generate(j, body)))
                })
            }
            Scatter => self.scatter(e, &vals, env, out),
            AsVector => match out {
                Out::Acc(a) => {
                    let acc = Acc::new(
                        AccKind::View(View::AsScalar(nats[0].clone()), a.clone()),
                        data_type(&vals[0])?,
                    );
                    self.tr(&vals[0], env, Out::Acc(&acc))
                }
                Out::Con(_) => self.data(&vals, env, out, &|xs| {
                    Ok(view(ExpKind::AsVector(nats[0].clone(), xs[0].clone())))
                }),
            },
            Zip | MakePair => match out {
                Out::Acc(a) => {
                    let (first, second) = if p == Zip {
                        (AccKind::Zip1(a.clone()), AccKind::Zip2(a.clone()))
                    } else {
                        (AccKind::Pair1(a.clone()), AccKind::Pair2(a.clone()))
                    };
                    let c1 = self.tr(
                        &vals[0],
                        env,
                        Out::Acc(&Acc::new(first, data_type(&vals[0])?)),
                    )?;
                    let c2 = self.tr(
                        &vals[1],
                        env,
                        Out::Acc(&Acc::new(second, data_type(&vals[1])?)),
                    )?;
                    Ok(Comm::Seq(vec![c1, c2]))
                }
                Out::Con(_) => self.data(&vals, env, out, &|xs| {
                    let kind = if p == Zip {
                        ExpKind::Zip(xs[0].clone(), xs[1].clone())
                    } else {
                        ExpKind::Pair(xs[0].clone(), xs[1].clone())
                    };
                    Ok(view(kind))
                }),
            },
            Unzip => match out {
                Out::Acc(a) => {
                    let acc = Acc::new(AccKind::Unzip(a.clone()), data_type(&vals[0])?);
                    self.tr(&vals[0], env, Out::Acc(&acc))
                }
                Out::Con(_) => {
                    let (n, elem) = array_of(&vals[0])?;
                    let DataType::Pair(s, t) = elem.clone() else {
                        return Err(TranslateError::at(
                            e,
                            "unzip of an array of non-pairs",
                            None,
                        ));
                    };
                    self.data(&vals, env, out, &|xs| {
                        let side = |second: bool, c: &DataType| {
                            let i = self.loop_var(&n);
                            let x =
                                Exp::new(ExpKind::Idx(xs[0].clone(), Nat::var(&i)), elem.clone());
                            let part = if second {
                                ExpKind::Snd(x)
                            } else {
                                ExpKind::Fst(x)
                            };
                            Exp::new(
                                ExpKind::Generate(i, Exp::new(part, c.clone())),
                                DataType::Array(n.clone(), std::sync::Arc::new(c.clone())),
                            )
                        };
                        Ok(view(ExpKind::Pair(side(false, &s), side(true, &t))))
                    })
                }
            },
            Fst | Snd => self.data(&vals, env, out, &|xs| {
                Ok(view(if p == Fst {
                    ExpKind::Fst(xs[0].clone())
                } else {
                    ExpKind::Snd(xs[0].clone())
                }))
            }),
            MapFst | MapSnd => self.data(&vals[1..], env, out, &|xs| {
                let DataType::Pair(s, t) = &xs[0].ty else {
                    return Err(TranslateError::at(e, "expected a pair", None));
                };
                let first = Exp::new(ExpKind::Fst(xs[0].clone()), (**s).clone());
                let second = Exp::new(ExpKind::Snd(xs[0].clone()), (**t).clone());
                let what = format!("the function of {}", p.name());
                Ok(view(if p == MapFst {
                    let a = self.pure(&vals[0], env, vec![Value::Data(first)], &what)?;
                    ExpKind::Pair(a, second)
                } else {
                    let b = self.pure(&vals[0], env, vec![Value::Data(second)], &what)?;
                    ExpKind::Pair(first, b)
                }))
            }),
            Concat => self.data(&vals, env, out, &|xs| {
                Ok(view(ExpKind::Concat(xs[0].clone(), xs[1].clone())))
            }),
            PadCst => self.data(&vals, env, out, &|xs| {
                Ok(view(ExpKind::Pad(
                    nats[0].clone(),
                    nats[1].clone(),
                    PadMode::Cst(xs[0].clone()),
                    xs[1].clone(),
                )))
            }),
            PadClamp | PadMirror | PadWrap => self.data(&vals, env, out, &|xs| {
                let mode = match p {
                    PadClamp => PadMode::Clamp,
                    PadMirror => PadMode::Mirror,
                    _ => PadMode::Wrap,
                };
                Ok(view(ExpKind::Pad(
                    nats[0].clone(),
                    nats[1].clone(),
                    mode,
                    xs[0].clone(),
                )))
            }),
            ScanSeq => self.scan_seq(e, &vals, env, out),
            SlideSeq => self.slide_seq(e, &nats[0], &vals, env, out),
            ReduceWarp => self.reduce_warp(e, &vals, env, out),
            ScanWarp => self.scan_warp(e, &vals, env, out),
            ScanLookback => self.scan_lookback(e, &nats, &vals, env, out),
            MmaSync => self.mma_sync(e, &vals, env, out),
            Wgmma => self.wgmma(e, &vals, env, out),
            Iterate => {
                let Out::Acc(acc) = out else {
                    return Err(TranslateError::at(
                        e,
                        "the result of `iterate` is read but not stored anywhere",
                        Some("write it to memory first: `toMem global (...)`, e.g. with storeInMemory"),
                    ));
                };
                self.iterate(e, &nats[0], &vals, env, acc)
            }
            _ => Err(TranslateError::at(
                e,
                format!(
                    "`{}` has no translation, although its row in the primitive table says it has an arm of its own (internal error)",
                    p.name()
                ),
                None,
            )),
        }
    }

    /// `makeVector n x1 ... xn`: the vector of the `n` values.
    /// `new ident in (ident := value; f ident)` for `let`/`toMem` (`vals` = `[value, f]`):
    /// the value written into fresh memory of `addr`, which `f` reads.
    fn new_holding(
        &self,
        ident: Ident,
        addr: AddrSpace,
        vals: &[Expr],
        env: &Env,
        out: Out,
    ) -> R<Comm> {
        let t = ident.ty.clone();
        let acc = Acc::new(AccKind::Var(ident.clone()), t.clone());
        let read = Exp::new(ExpKind::Var(ident.clone()), t);
        let fill = self.tr(&vals[0], env, Out::Acc(&acc))?;
        let rest = self.call(&vals[1], env, vec![Value::Data(read)], out)?;
        Ok(Comm::New {
            ident,
            addr,
            body: Box::new(Comm::Seq(vec![fill, rest])),
        })
    }

    fn make_vector(&self, e: &Expr, vals: &[Expr], env: &Env, out: Out) -> R<Comm> {
        let ty = data_type(e)?;
        let n = match &ty {
            DataType::Vector(n, _) => n.as_cst(),
            _ => None,
        };
        if n != Some(vals.len() as i64) {
            return Err(TranslateError::at(
                e,
                format!(
                    "`makeVector` of {} values for a vector of type {ty}",
                    vals.len()
                ),
                None,
            ));
        }
        self.data(vals, env, out, &|xs| {
            Ok(Exp::new(ExpKind::MakeVector(xs.to_vec()), ty.clone()))
        })
    }

    /// A lowered `map` (its row gives the loop): a loop writing each element of the output.
    fn map_loop(&self, p: Prim, l: Loop, e: &Expr, vals: &[Expr], env: &Env, out: Out) -> R<Comm> {
        let Out::Acc(acc) = out else {
            return Err(TranslateError::at(
                    e,
                    format!("the result of `{}` is read but not stored anywhere", p.name()),
                    Some("write it to memory first: `toMem global (...)`, e.g. with storeInMemory, or fuse it into its consumer (mapFusion, fuseReduceMap)"),
                ));
        };
        let Some(kind) = LoopKind::of(l) else {
            return Err(TranslateError::at(
                e,
                format!("`{}` cannot be compiled yet", p.name()),
                Some("distribute the map over threads with mapThread / mapLocal instead"),
            ));
        };
        let (n, elem) = array_of(&vals[1])?;
        check_unrolled(e, p, kind, &n)?;
        let f = &vals[0];
        self.tr(
            &vals[1],
            env,
            Out::Con(&|xs| {
                let i = self.loop_var(&n);
                let iv = Nat::var(&i);
                let x = Exp::new(ExpKind::Idx(xs, iv.clone()), elem.clone());
                let (_, out_elem) = array_dt(&acc.ty, e)?;
                let o = Acc::new(AccKind::Idx(acc.clone(), iv), out_elem);
                let body = self.call(f, env, vec![Value::Data(x)], Out::Acc(&o))?;
                Ok(Comm::For {
                    var: i,
                    count: n.clone(),
                    kind,
                    origin: p.name(),
                    body: Box::new(body),
                })
            }),
        )
    }

    /// A sequential reduction (`reduceSeq`, `reduceSeqUnroll`): a loop over an accumulator.
    fn reduce_seq(
        &self,
        p: Prim,
        l: Loop,
        e: &Expr,
        vals: &[Expr],
        env: &Env,
        out: Out,
    ) -> R<Comm> {
        let (kind, steps) = match (l, LoopKind::of(l)) {
            (rise::primitives::Loop::Pipelined(s), _) => (LoopKind::Seq, Steps::Pipelined(s)),
            (_, Some(k @ (LoopKind::Seq | LoopKind::Unroll))) => (k, Steps::Loop(k)),
            _ => {
                return Err(TranslateError::at(
                    e,
                    format!(
                        "`{}` cannot be compiled yet (a reduction loop runs sequentially)",
                        p.name()
                    ),
                    None,
                ))
            }
        };
        let ty = data_type(e)?;
        let (n, elem) = array_of(&vals[2])?;
        check_unrolled(e, p, kind, &n)?;
        let f = &vals[0];
        if is_loop_app_under_views(&vals[1]) {
            return self.reduce_computed_init(p, steps, vals, env, out, (&ty, &n, &elem));
        }
        // An array reduced in place: the initial value is read where the
        // result is written (`acc[i] = reduceSeq f acc[i] xs`), so that
        // memory is the accumulator and nothing is copied in or out.
        let in_place = match out {
            Out::Acc(a) if matches!(ty, DataType::Array(..)) => Some(a),
            _ => None,
        };
        let reduce = |k: K| {
            self.tr(
                &vals[2],
                env,
                Out::Con(&|xs| {
                    self.tr(
                        &vals[1],
                        env,
                        Out::Con(&|init| {
                            let reduce_loop = |read: Exp, acc: &Acc| {
                                self.reduce_loop(p, steps, f, env, &xs, (&n, &elem), read, acc)
                            };
                            if let Some(a) = in_place.filter(|a| same_place(&init, a)) {
                                return reduce_loop(init.clone(), a);
                            }
                            let ident = Ident {
                                name: self.fresh("acc"),
                                ty: ty.clone(),
                            };
                            let acc = Acc::new(AccKind::Var(ident.clone()), ty.clone());
                            let read = Exp::new(ExpKind::Var(ident.clone()), ty.clone());
                            let lp = reduce_loop(read.clone(), &acc)?;
                            Ok(Comm::New {
                                ident,
                                addr: AddrSpace::Private,
                                body: Box::new(Comm::Seq(vec![
                                    self.assign(&acc, &init),
                                    lp,
                                    k(read)?,
                                ])),
                            })
                        }),
                    )
                }),
            )
        };
        match out {
            Out::Con(k) => reduce(k),
            Out::Acc(a) => reduce(&|r| Ok(self.assign(a, &r))),
        }
    }

    /// `scatter is xs` written to `out`: `xs` is written through the acceptor whose
    /// element `j` is `out[is[j]]`, each position checked to be in range and written at
    /// most once (a marker per position, zeroed first). The `n >= m` values covering the
    /// `m` positions is a size constraint ([`crate::constraints::of_views`]), so distinct
    /// positions are every position.
    fn scatter(&self, e: &Expr, vals: &[Expr], env: &Env, out: Out) -> R<Comm> {
        let Out::Acc(acc) = out else {
            return Err(TranslateError::at(
                e,
                "the result of `scatter` is read but not stored anywhere",
                Some("write it to memory first: `toMem global (...)`, e.g. with storeInMemory"),
            ));
        };
        let (n, ielem) = array_of(&vals[0])?;
        let (m, elem) = array_dt(&acc.ty, e)?;
        if n.prove_lt(&m) {
            return Err(TranslateError::at(
                e,
                format!("`scatter` of {n} values into {m} positions leaves positions unwritten"),
                Some("each of the m positions of the result is written by one of the n values: n >= m"),
            ));
        }
        let int = DataType::Scalar(rise::ScalarType::Int);
        let int_lit = |v| {
            let lit = rise::Literal::Int(v, rise::ScalarType::Int);
            Exp::new(ExpKind::Lit(lit), int.clone())
        };
        let seq_loop = |var: Var, count: &Nat, origin, body| Comm::For {
            var,
            count: count.clone(),
            kind: LoopKind::Seq,
            origin,
            body: Box::new(body),
        };
        let marker = Ident {
            name: self.fresh("written"),
            ty: DataType::array(m.clone(), int.clone()),
        };
        let marks = Acc::new(AccKind::Var(marker.clone()), marker.ty.clone());
        let k = self.loop_var(&m);
        let zero = seq_loop(
            k.clone(),
            &m,
            "scatter (no position written yet)",
            Comm::Assign(
                Acc::new(AccKind::Idx(marks.clone(), Nat::var(&k)), int.clone()),
                int_lit(0),
            ),
        );
        let write = self.tr(
            &vals[0],
            env,
            Out::Con(&|is| {
                // `is[j]`, for a fresh loop variable `j`
                let index = || {
                    let j = self.loop_var(&n);
                    let at = Exp::new(ExpKind::Idx(is.clone(), Nat::var(&j)), ielem.clone());
                    (j, at)
                };
                let (j, at) = index();
                // a scalar element is claimed where it is written; an array element is
                // written one scalar at a time, so its position is claimed first, once, by
                // a loop of its own (`marks[is[j]] := 1` through the claiming acceptor)
                let scalar = matches!(elem, DataType::Scalar(_) | DataType::Index(_));
                let claims = (!scalar).then(|| {
                    let (j, at) = index();
                    let mark = AccKind::At(marks.clone(), at, Some(marks.clone()));
                    let claim = Comm::Assign(Acc::new(mark, int.clone()), int_lit(1));
                    seq_loop(j, &n, "scatter (each position claimed once)", claim)
                });
                let target = Acc::new(
                    AccKind::At(acc.clone(), at, scalar.then(|| marks.clone())),
                    elem.clone(),
                );
                let into = Acc::new(AccKind::Map(j, target), data_type(&vals[1])?);
                let write = self.tr(&vals[1], env, Out::Acc(&into))?;
                Ok(match claims {
                    Some(c) => Comm::Seq(vec![c, write]),
                    None => write,
                })
            }),
        )?;
        Ok(Comm::New {
            ident: marker.clone(),
            addr: AddrSpace::Global,
            body: Box::new(Comm::Seq(vec![zero, write])),
        })
    }

    /// An index-remapping view (its row says which): read as a view of its operand;
    /// written through the inverse view where it has one (`split`, `join`,
    /// `transpose`, `asScalar`), otherwise computed and copied.
    #[allow(clippy::too_many_arguments)]
    fn view(
        &self,
        shape: ViewShape,
        e: &Expr,
        args: &[Arg],
        vals: &[Expr],
        nats: &[Nat],
        env: &Env,
        out: Out,
    ) -> R<Comm> {
        let ty = data_type(e)?;
        let operand = data_type(&vals[0])?;
        let (len, elem) = array_dt(&operand, e)?;
        let inner_len = || array_dt(&elem, e).map(|(m, _)| m);
        let v = match shape {
            ViewShape::Split => View::Split(nats[0].clone()),
            ViewShape::Join => View::Join(inner_len()?),
            ViewShape::Transpose => View::Transpose,
            ViewShape::Slide => View::Slide(nats[0].clone(), nats[1].clone()),
            ViewShape::Take => View::Take(nats[0].clone()),
            ViewShape::Drop => View::Drop(nats[0].clone()),
            ViewShape::AsScalar => match &elem {
                DataType::Vector(n, _) => View::AsScalar(n.clone()),
                _ => {
                    return Err(TranslateError::at(
                        e,
                        "asScalar of a non-vector array",
                        None,
                    ))
                }
            },
            ViewShape::Reorder => reorder_function(e, args, &len)?,
        };
        if let Out::Acc(a) = out {
            let write = match &v {
                View::AsScalar(n) => Some(AccKind::AsVector(n.clone(), a.clone())),
                View::Reorder(..) => {
                    reorder_inverse(args, &len).map(|w| AccKind::View(w, a.clone()))
                }
                _ => v.inverse().map(|w| AccKind::View(w, a.clone())),
            };
            if let Some(kind) = write {
                return self.tr(&vals[0], env, Out::Acc(&Acc::new(kind, operand)));
            }
        }
        self.data(vals, env, out, &|xs| {
            Ok(Exp::new(
                ExpKind::View(v.clone(), xs[0].clone()),
                ty.clone(),
            ))
        })
    }
}

/// The view of `reorder f finv` on `n` elements: its index function `f`, once
/// proven to map `0..n` into itself (the read side needs only `f`; `finv` is not
/// trusted, a write of the view copies through `f`).
fn reorder_function(e: &Expr, args: &[Arg], n: &Nat) -> R<View> {
    let Some((v, body)) = index_functions(args).next() else {
        return Err(TranslateError::at(
            e,
            "`reorder` needs its index function written as `fun i => ...`",
            None,
        ));
    };
    let i = Var::with_range(v.name(), Nat::cst(0), n.clone());
    let at = body.substitute(&v, &Nat::var(&i));
    if !(at.prove_nonneg() && at.prove_lt(n)) {
        return Err(TranslateError::at(
            e,
            format!("cannot prove that the index function `{v} => {body}` of `reorder` maps 0..{n} into 0..{n}"),
            Some("an index out of range would read outside the array; the interpreter checks it at run time"),
        ));
    }
    Ok(View::Reorder(v, body))
}

/// The index functions given to `reorder` as `fun i => ...`, in order (`f`, then `finv`).
fn index_functions<'a>(args: &'a [Arg<'a>]) -> impl Iterator<Item = (Var, Nat)> + 'a {
    args.iter().filter_map(|a| match a {
        Arg::Type(TypeArg::NatToNat(rise::types::NatToNat::Lambda(v, body))) => {
            Some((v.clone(), body.clone()))
        }
        _ => None,
    })
}

/// The view writing through `reorder f finv` on `n` elements: `finv`, where `n` is a
/// constant (at most 65536) and `f (finv i) = i` with `finv i` in `0..n` for every `i` of
/// `0..n`, checked one by one. Otherwise `None`, and the write copies through `f`.
fn reorder_inverse(args: &[Arg], n: &Nat) -> Option<View> {
    let mut fs = index_functions(args);
    let (f, finv) = (fs.next()?, fs.next()?);
    let len = n.as_cst().filter(|&c| (0..=65536).contains(&c))?;
    let apply = |(v, body): &(Var, Nat), i: i64| body.eval(&|w: &Var| (w == v).then_some(i)).ok();
    (0..len)
        .all(|i| {
            apply(&finv, i)
                .filter(|j| (0..len).contains(j))
                .and_then(|j| apply(&f, j))
                == Some(i)
        })
        .then_some(View::Reorder(finv.0, finv.1))
}

/// The operand type of a math function, checked again (the type checker refuses
/// others; a program built in Rust may not have been checked): a scalar of its
/// domain or a vector of them.
fn check_math_operand(e: &Expr, f: rise::primitives::MathFn, ty: &DataType) -> R<()> {
    let elem = match ty {
        DataType::Vector(_, t) => &**t,
        t => t,
    };
    match elem {
        DataType::Scalar(s) if f.domain().admits(*s) => Ok(()),
        _ => Err(TranslateError::at(
            e,
            format!("`{}` takes {}, found {ty}", f.name(), f.domain().describe()),
            None,
        )),
    }
}

/// Whether values of `t` are one C value (a scalar, an index, a vector, a tuple of those):
/// no array anywhere in it.
fn is_one_value(t: &DataType) -> bool {
    match t {
        DataType::Scalar(_) | DataType::NatType | DataType::Index(_) => true,
        DataType::Vector(_, e) => is_one_value(e),
        DataType::Pair(a, b) => is_one_value(a) && is_one_value(b),
        _ => false,
    }
}
