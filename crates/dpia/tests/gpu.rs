//! The GPU passes on hand-built imperative programs: kernel/host split, launch
//! configurations, hoisting, barrier insertion and the rejection of barriers in
//! divergent control flow.

use arith::{Nat, Var};
use dpia::{
    prepare, Acc, AccKind, BinOp, Comm, Exp, ExpKind, Ident, Launch, LoopKind, ParLevel, Program,
};
use rise::{AddrSpace, DataType, Literal, ScalarType};

fn f32t() -> DataType {
    DataType::f32()
}

fn ident(name: &str, ty: DataType) -> Ident {
    Ident {
        name: name.into(),
        ty,
    }
}

fn read(id: &Ident) -> Exp {
    Exp::new(ExpKind::Var(id.clone()), id.ty.clone())
}

fn write(id: &Ident) -> Acc {
    Acc::new(AccKind::Var(id.clone()), id.ty.clone())
}

fn elem(t: &DataType) -> DataType {
    match t {
        DataType::Array(_, e) => (**e).clone(),
        t => panic!("not an array: {t}"),
    }
}

fn at(e: Exp, i: Nat) -> Exp {
    let t = elem(&e.ty);
    Exp::new(ExpKind::Idx(e, i), t)
}

fn at_acc(a: Acc, i: Nat) -> Acc {
    let t = elem(&a.ty);
    Acc::new(AccKind::Idx(a, i), t)
}

fn add(a: Exp, b: Exp) -> Exp {
    let t = a.ty.clone();
    Exp::new(ExpKind::Binary(BinOp::Add, a, b), t)
}

fn one() -> Exp {
    Exp::new(ExpKind::Lit(Literal::Float(1.0, ScalarType::F32)), f32t())
}

fn lp(var: &Var, count: Nat, kind: LoopKind, origin: &'static str, body: Comm) -> Comm {
    Comm::For {
        var: var.clone(),
        count,
        kind,
        origin,
        body: Box::new(body),
    }
}

fn new(id: &Ident, addr: AddrSpace, body: Comm) -> Comm {
    Comm::New {
        ident: id.clone(),
        addr,
        body: Box::new(body),
    }
}

fn v(name: &str, count: &Nat) -> Var {
    Var::with_range(name, Nat::cst(0), count.clone())
}

const WG0: LoopKind = LoopKind::Gpu(ParLevel::WorkGroup(0));
const L0: LoopKind = LoopKind::Gpu(ParLevel::Local(0));
const L1: LoopKind = LoopKind::Gpu(ParLevel::Local(1));
const G0: LoopKind = LoopKind::Gpu(ParLevel::Global(0));
const G1: LoopKind = LoopKind::Gpu(ParLevel::Global(1));

fn program(sizes: &[&Var], out: &Ident, inputs: &[&Ident], body: Comm) -> Program {
    Program {
        name: "k".into(),
        sizes: sizes.iter().map(|v| (*v).clone()).collect(),
        output: out.clone(),
        inputs: inputs.iter().map(|i| (*i).clone()).collect(),
        body,
        constraints: Vec::new(),
    }
}

/// A work-group stores 128 values in local memory; one thread combines two of them.
fn two_steps(first: i64) -> Program {
    let n = Var::new("n");
    let nn = Nat::var(&n);
    let x = ident("x", DataType::array(nn.clone() * 128, f32t()));
    let out = ident("out", DataType::array(nn.clone(), f32t()));
    let t = ident("t", DataType::array(128, f32t()));
    let wg = v("wg", &nn);
    let l = v("l", &Nat::cst(first));
    let l2 = v("l2", &Nat::cst(1));
    let fill = lp(
        &l,
        Nat::cst(first),
        L0,
        "mapLocal(0)",
        Comm::Assign(
            at_acc(write(&t), Nat::var(&l)),
            at(read(&x), Nat::var(&wg) * 128 + Nat::var(&l)),
        ),
    );
    let combine = lp(
        &l2,
        Nat::cst(1),
        L0,
        "mapLocal(0)",
        Comm::Assign(
            at_acc(write(&out), Nat::var(&wg) + Nat::var(&l2)),
            add(at(read(&t), Nat::cst(0)), at(read(&t), Nat::cst(127))),
        ),
    );
    let body = lp(
        &wg,
        nn.clone(),
        WG0,
        "mapWorkGroup(0)",
        new(&t, AddrSpace::Local, Comm::Seq(vec![fill, combine])),
    );
    program(&[&n], &out, &[&x], body)
}

#[test]
fn a_barrier_separates_threads_that_communicate_through_local_memory() {
    let g = prepare(&two_steps(128)).unwrap();
    assert_eq!(g.kernels.len(), 1);
    let k = &g.kernels[0];
    let text = k.body.to_string();
    // the local memory moved to the top of the kernel, the barrier between the loops
    assert!(text.starts_with("new local t: 128.f32"), "{text}");
    let fill = text.find("t[l] :=").unwrap();
    let barrier = text.find("barrier(local)").unwrap();
    let combine = text.find("out[").unwrap();
    assert!(fill < barrier && barrier < combine, "{text}");
    // and one at the end of the work-group loop: a work-group that runs several
    // iterations must not refill `t` while a thread still reads it
    assert_eq!(text.matches("barrier(local)").count(), 2, "{text}");
    assert!(text.rfind("barrier(local)").unwrap() > combine, "{text}");
    match &k.launch {
        Launch::Groups { groups, threads } => {
            assert_eq!(groups[0], Nat::var(&Var::new("n")));
            assert_eq!(threads[0], Nat::cst(128));
            assert_eq!(threads[1], Nat::cst(1));
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn threads_that_do_not_communicate_get_no_barrier() {
    // mv (Listing 10): every thread writes its own output element, nothing is read back.
    let n = Var::new("n");
    let nn = Nat::var(&n);
    let x = ident("x", DataType::array(nn.clone() * 32, f32t()));
    let out = ident("out", DataType::array(nn.clone() * 32, f32t()));
    let acc = ident("acc", f32t());
    let wg = v("wg", &nn);
    let l = v("l", &Nat::cst(32));
    let i = Nat::var(&wg) * 32 + Nat::var(&l);
    let body = lp(
        &wg,
        nn.clone(),
        WG0,
        "mapWorkGroup(0)",
        lp(
            &l,
            Nat::cst(32),
            L0,
            "mapLocal(0)",
            new(
                &acc,
                AddrSpace::Private,
                Comm::Seq(vec![
                    Comm::Assign(write(&acc), at(read(&x), i.clone())),
                    Comm::Assign(at_acc(write(&out), i), add(read(&acc), one())),
                ]),
            ),
        ),
    );
    let g = prepare(&program(&[&n], &out, &[&x], body)).unwrap();
    let text = g.kernels[0].body.to_string();
    assert!(!text.contains("barrier"), "{text}");
    // a private scalar stays where it is (a register), inside the loops
    assert!(text.contains("    new private acc: f32"), "{text}");
}

/// `first` threads fill the local memory inside a `mapLocal(1)` loop of `rows`
/// iterations; another `mapLocal(1)` loop has `other` iterations.
fn rows_program(rows: i64, other: i64) -> Program {
    let n = Var::new("n");
    let nn = Nat::var(&n);
    let x = ident("x", DataType::array(nn.clone() * 64, f32t()));
    let out = ident("out", DataType::array(nn.clone() * 64, f32t()));
    let t = ident("t", DataType::array(64, f32t()));
    let wg = v("wg", &nn);
    let r = v("r", &Nat::cst(rows));
    let r2 = v("r2", &Nat::cst(other));
    let l = v("l", &Nat::cst(64));
    let l2 = v("l2", &Nat::cst(64));
    let xi = Nat::var(&wg) * 64 + Nat::var(&l);
    let row = lp(
        &r,
        Nat::cst(rows),
        L1,
        "mapLocal(1)",
        new(
            &t,
            AddrSpace::Local,
            Comm::Seq(vec![
                lp(
                    &l,
                    Nat::cst(64),
                    L0,
                    "mapLocal(0)",
                    Comm::Assign(at_acc(write(&t), Nat::var(&l)), at(read(&x), xi)),
                ),
                lp(
                    &l2,
                    Nat::cst(64),
                    L0,
                    "mapLocal(0)",
                    Comm::Assign(
                        at_acc(write(&out), Nat::var(&wg) * 64 + Nat::var(&l2)),
                        at(read(&t), Nat::cst(63) - Nat::var(&l2)),
                    ),
                ),
            ]),
        ),
    );
    let l3 = v("l3", &Nat::cst(64));
    let others = lp(
        &r2,
        Nat::cst(other),
        L1,
        "mapLocal(1)",
        lp(
            &l3,
            Nat::cst(64),
            L0,
            "mapLocal(0)",
            Comm::Assign(
                at_acc(write(&out), Nat::var(&wg) * 64 + Nat::var(&l3)),
                one(),
            ),
        ),
    );
    let body = lp(
        &wg,
        nn.clone(),
        WG0,
        "mapWorkGroup(0)",
        Comm::Seq(vec![row, others]),
    );
    program(&[&n], &out, &[&x], body)
}

#[test]
fn local_memory_inside_a_thread_loop_is_expanded_and_its_barrier_is_reached_by_all() {
    let g = prepare(&rows_program(4, 4)).unwrap();
    let text = g.kernels[0].body.to_string();
    // one row of local memory per iteration of the mapLocal(1) loop
    assert!(text.starts_with("new local t: 4.64.f32"), "{text}");
    assert!(text.contains("t[r][l] :="), "{text}");
    assert!(text.contains("barrier(local)"), "{text}");
}

#[test]
fn a_barrier_in_divergent_control_flow_is_rejected() {
    // the work-group has 8 threads in dimension 1, the loop needing the barrier 4 iterations
    let err = prepare(&rows_program(4, 8)).unwrap_err();
    let text = err.to_string();
    assert!(text.contains("`mapLocal(1)` loop"), "{text}");
    assert!(text.contains("hang"), "{text}");
    assert!(text.contains("`t`"), "{text}");
}

#[test]
fn global_memory_moves_to_the_host_and_kernels_split_at_the_top_level() {
    // tmp[i] = x[i] + 1 (kernel 1); out[i] = tmp[n-1-i] (kernel 2)
    let n = Var::new("n");
    let nn = Nat::var(&n);
    let x = ident("x", DataType::array(nn.clone(), f32t()));
    let out = ident("out", DataType::array(nn.clone(), f32t()));
    let tmp = ident("tmp", DataType::array(nn.clone(), f32t()));
    let (i, j) = (v("i", &nn), v("j", &nn));
    let body = new(
        &tmp,
        AddrSpace::Global,
        Comm::Seq(vec![
            lp(
                &i,
                nn.clone(),
                G0,
                "mapGlobal(0)",
                Comm::Assign(
                    at_acc(write(&tmp), Nat::var(&i)),
                    add(at(read(&x), Nat::var(&i)), one()),
                ),
            ),
            lp(
                &j,
                nn.clone(),
                G0,
                "mapGlobal(0)",
                Comm::Assign(
                    at_acc(write(&out), Nat::var(&j)),
                    at(read(&tmp), nn.clone() - 1 - Nat::var(&j)),
                ),
            ),
        ]),
    );
    let g = prepare(&program(&[&n], &out, &[&x], body)).unwrap();
    assert_eq!(g.temporaries.len(), 1);
    assert_eq!(g.temporaries[0].name, "tmp");
    assert_eq!(g.kernels.len(), 2);
    assert_eq!(g.kernels[0].name, "k_k0");
    assert_eq!(g.kernels[1].name, "k_k1");
    for k in &g.kernels {
        assert_eq!(
            k.launch,
            Launch::Global([nn.clone(), Nat::cst(1), Nat::cst(1)])
        );
        assert!(!k.body.to_string().contains("barrier"));
    }
}

#[test]
fn work_groups_that_communicate_inside_a_kernel_are_rejected() {
    // inside one mapGlobal(1) loop, two mapGlobal(0) loops communicate through global memory
    let n = Var::new("n");
    let nn = Nat::var(&n);
    let x = ident("x", DataType::array(nn.clone(), f32t()));
    let out = ident(
        "out",
        DataType::array(nn.clone(), DataType::array(nn.clone(), f32t())),
    );
    let tmp = ident("tmp", DataType::array(nn.clone(), f32t()));
    let (r, i, j) = (v("r", &nn), v("i", &nn), v("j", &nn));
    let body = lp(
        &r,
        nn.clone(),
        G1,
        "mapGlobal(1)",
        new(
            &tmp,
            AddrSpace::Global,
            Comm::Seq(vec![
                lp(
                    &i,
                    nn.clone(),
                    G0,
                    "mapGlobal(0)",
                    Comm::Assign(
                        at_acc(write(&tmp), Nat::var(&i)),
                        at(read(&x), Nat::var(&i)),
                    ),
                ),
                lp(
                    &j,
                    nn.clone(),
                    G0,
                    "mapGlobal(0)",
                    Comm::Assign(
                        at_acc(at_acc(write(&out), Nat::var(&r)), Nat::var(&j)),
                        at(read(&tmp), nn.clone() - 1 - Nat::var(&j)),
                    ),
                ),
            ]),
        ),
    );
    let err = prepare(&program(&[&n], &out, &[&x], body)).unwrap_err();
    let text = err.to_string();
    assert!(text.contains("`tmp`"), "{text}");
    assert!(text.contains("no barrier"), "{text}");
}

#[test]
fn a_sequential_loop_that_reuses_local_memory_gets_a_barrier_at_its_end() {
    // for k: threads copy a tile to local memory, then read another thread's element
    let n = Var::new("n");
    let nn = Nat::var(&n);
    let x = ident("x", DataType::array(nn.clone() * 128, f32t()));
    let out = ident("out", DataType::array(nn.clone() * 32, f32t()));
    let t = ident("t", DataType::array(32, f32t()));
    let (wg, k) = (v("wg", &nn), v("k", &Nat::cst(4)));
    let (l, l2) = (v("l", &Nat::cst(32)), v("l2", &Nat::cst(32)));
    let o = Nat::var(&wg) * 32 + Nat::var(&l2);
    let body = lp(
        &wg,
        nn.clone(),
        WG0,
        "mapWorkGroup(0)",
        new(
            &t,
            AddrSpace::Local,
            lp(
                &k,
                Nat::cst(4),
                LoopKind::Seq,
                "reduceSeq",
                Comm::Seq(vec![
                    lp(
                        &l,
                        Nat::cst(32),
                        L0,
                        "mapLocal(0)",
                        Comm::Assign(
                            at_acc(write(&t), Nat::var(&l)),
                            at(
                                read(&x),
                                Nat::var(&wg) * 128 + Nat::var(&k) * 32 + Nat::var(&l),
                            ),
                        ),
                    ),
                    lp(
                        &l2,
                        Nat::cst(32),
                        L0,
                        "mapLocal(0)",
                        Comm::Assign(
                            at_acc(write(&out), o.clone()),
                            add(
                                at(read(&out), o),
                                at(read(&t), Nat::cst(31) - Nat::var(&l2)),
                            ),
                        ),
                    ),
                ]),
            ),
        ),
    );
    let g = prepare(&program(&[&n], &out, &[&x], body)).unwrap();
    let text = g.kernels[0].body.to_string();
    assert_eq!(text.matches("barrier(local)").count(), 2, "{text}");
    // the second barrier ends the loop body: the next copy overwrites what this step reads
    let end = text.find("// reduceSeq").unwrap();
    let last = text.rfind("barrier(local)").unwrap();
    assert!(last > text.rfind("out[").unwrap() && last > end, "{text}");
}

#[test]
fn memory_every_thread_writes_at_once_is_rejected() {
    let mut p = two_steps(128);
    // out[wg] := 1 outside the mapLocal loops, by every thread of the work-group
    if let Comm::For { body, var, .. } = &mut p.body {
        let wg = var.clone();
        let out = p.output.clone();
        let extra = Comm::Assign(at_acc(write(&out), Nat::var(&wg)), one());
        **body = Comm::Seq(vec![(**body).clone(), extra]);
    }
    let err = prepare(&p).unwrap_err();
    assert!(
        err.to_string().contains("outside every `mapLocal(0)` loop"),
        "{err}"
    );
}

#[test]
fn cpu_loops_and_bad_nests_are_rejected() {
    let n = Var::new("n");
    let nn = Nat::var(&n);
    let x = ident("x", DataType::array(nn.clone(), f32t()));
    let out = ident("out", DataType::array(nn.clone(), f32t()));
    let i = v("i", &nn);
    let assign = Comm::Assign(
        at_acc(write(&out), Nat::var(&i)),
        at(read(&x), Nat::var(&i)),
    );
    let par = lp(&i, nn.clone(), LoopKind::Par, "mapPar", assign.clone());
    let err = prepare(&program(&[&n], &out, &[&x], par)).unwrap_err();
    assert!(
        err.to_string().contains("`mapPar` runs on CPU threads"),
        "{err}"
    );

    let j = v("j", &Nat::cst(1));
    let nested = lp(
        &j,
        Nat::cst(1),
        L0,
        "mapLocal(0)",
        lp(&i, nn.clone(), WG0, "mapWorkGroup(0)", assign),
    );
    let err = prepare(&program(&[&n], &out, &[&x], nested)).unwrap_err();
    assert!(
        err.to_string()
            .contains("a `mapWorkGroup(0)` loop inside a `mapLocal(0)` loop"),
        "{err}"
    );
}

#[test]
fn work_groups_larger_than_a_gpu_runs_are_rejected() {
    let err = prepare(&rows_program(32, 32)).unwrap_err();
    assert!(err.to_string().contains("64 x 32 x 1 = 2048"), "{err}");
}

/// `out[i] += 1` on the GPU (one kernel), `repeats` times in an `iterate` loop.
fn iterate_loop_of_kernels(repeats: i64) -> Program {
    let n = Var::new("n");
    let nn = Nat::var(&n);
    let x = ident("x", DataType::array(nn.clone(), f32t()));
    let out = ident("out", DataType::array(nn.clone(), f32t()));
    let i = v("i", &nn);
    let step = lp(
        &i,
        nn.clone(),
        G0,
        "mapGlobal(0)",
        Comm::Assign(
            at_acc(write(&out), Nat::var(&i)),
            add(at(read(&out), Nat::var(&i)), one()),
        ),
    );
    let r = v("r", &Nat::cst(repeats));
    let body = lp(&r, Nat::cst(repeats), LoopKind::Seq, "iterate", step);
    program(&[&n], &out, &[&x], body)
}

#[test]
fn an_iterate_loop_of_kernels_is_expanded_into_kernels_up_to_64() {
    let g = prepare(&iterate_loop_of_kernels(5)).unwrap();
    assert_eq!(g.kernels.len(), 5);
    assert!(g
        .kernels
        .iter()
        .all(|k| !k.body.to_string().contains("iterate")));
    let err = prepare(&iterate_loop_of_kernels(65)).unwrap_err();
    assert!(err.to_string().contains("more than 64 steps"), "{err}");
}
