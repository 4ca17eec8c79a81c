//! `shine compile` and `shine run` for OpenCL and CUDA (issue 6). Every GPU example
//! (examples/gpu_cases.txt) runs on OpenCL — PoCL on the CPU here and in CI — and is
//! verified against the interpreter; CUDA compiles everywhere and runs where there
//! is a GPU (elsewhere it must fail with the runtime's clean message).
//!
//! Without any OpenCL platform the OpenCL runs FAIL, as the runtime's tests do; set
//! `SHINE_SKIP_OPENCL=1` to skip them.

use std::process::{Command, Output};

mod support;
use support::{skip_opencl, test_gpu};

fn shine() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_shine"));
    c.current_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."));
    c
}

fn run(args: &[&str]) -> Output {
    shine().args(args).output().expect("shine runs")
}

fn text(o: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

/// (program, definition, strategy file, strategy, sizes) of examples/gpu_cases.txt.
fn cases() -> Vec<(String, String, String, String, Vec<String>)> {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/gpu_cases.txt");
    let text = std::fs::read_to_string(path).expect("examples/gpu_cases.txt");
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(|l| {
            let w: Vec<String> = l.split_whitespace().map(String::from).collect();
            assert!(w.len() >= 4, "bad line in gpu_cases.txt: {l}");
            (
                w[0].clone(),
                w[1].clone(),
                w[2].clone(),
                w[3].clone(),
                w[4..].to_vec(),
            )
        })
        .collect()
}

fn case_args(
    target: &str,
    (prog, def, elv, strategy, sizes): &(String, String, String, String, Vec<String>),
) -> Vec<String> {
    let mut args: Vec<String> = [
        "run".to_string(),
        format!("examples/{prog}"),
        "--def".into(),
        def.clone(),
        "--strategy".into(),
        format!("examples/{elv}"),
        "--apply".into(),
        strategy.clone(),
        "--target".into(),
        target.into(),
        "--random".into(),
        "7".into(),
        "--verify".into(),
        "--json".into(),
    ]
    .to_vec();
    for s in sizes {
        args.push("--nat".into());
        args.push(s.clone());
    }
    args
}

#[test]
fn every_gpu_example_verifies_on_opencl() {
    if skip_opencl() {
        eprintln!("skipping: SHINE_SKIP_OPENCL=1");
        return;
    }
    for case in cases() {
        let args = case_args("opencl", &case);
        let out = shine().args(&args).output().expect("shine runs");
        let (stdout, stderr) = text(&out);
        assert!(
            out.status.success() && stdout.contains("\"verified\":true"),
            "shine {}\nstdout: {stdout}\nstderr: {stderr}",
            args.join(" ")
        );
    }
}

#[test]
fn every_gpu_example_compiles_for_cuda_and_runs_where_there_is_a_gpu() {
    for case in cases() {
        let args = case_args("cuda", &case);
        // compile
        let compile: Vec<String> = ["compile".to_string()]
            .into_iter()
            .chain(args[1..10].iter().cloned())
            .collect();
        let out = shine().args(&compile).output().expect("shine runs");
        let (stdout, stderr) = text(&out);
        assert!(out.status.success(), "{}\n{stderr}", compile.join(" "));
        assert!(stdout.contains("extern \"C\" __global__ void"), "{stdout}");
        // run: verified on a GPU, the runtime's clean error elsewhere
        let out = shine().args(&args).output().expect("shine runs");
        let (stdout, stderr) = text(&out);
        if out.status.success() {
            assert!(stdout.contains("\"verified\":true"), "{stdout}");
        } else {
            assert!(
                stderr.starts_with("error: ") && stderr.contains("CUDA"),
                "{}\n{stderr}",
                args.join(" ")
            );
            assert!(!stderr.contains("panicked"), "{stderr}");
        }
    }
}

const MV: [&str; 8] = [
    "examples/mv.rise",
    "--def",
    "mv",
    "--strategy",
    "examples/mv.elv",
    "--apply",
    "mvOpt",
    "--target",
];

fn lines(s: &str) -> Vec<&str> {
    s.lines().map(str::trim).collect()
}

#[test]
fn mv_compiles_to_the_kernel_of_listing_11() {
    let mut args = vec!["compile"];
    args.extend(MV);
    args.push("opencl");
    let out = run(&args);
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "{stderr}");
    let l = lines(&stdout);
    for want in [
        "kernel void mv(global float *restrict output, const global float *restrict mat, const global float *restrict xs, shine_index n, shine_index m) {",
        "// mapWorkGroup(0)",
        "for (shine_index wg0 = get_group_id(0); wg0 < n / 32; wg0 += get_num_groups(0)) {",
        "// mapLocal(0) (one iteration per work-item)",
        "shine_index lid0 = get_local_id(0);",
        "acc2 = 0.0f;",
        "for (shine_index i3 = 0; i3 < m; i3++) {",
        "acc2 = acc2 + mat[wg0 * m * 32 + lid0 * m + i3] * xs[i3];",
        "output[wg0 * 32 + lid0] = acc2;",
    ] {
        assert!(l.contains(&want), "missing `{want}` in\n{stdout}");
    }
    assert!(!stdout.contains("barrier"), "{stdout}");
    assert!(
        stdout
            .contains("Launch 1: mv with n / 32 work-groups (blocks) of 32 work-items (threads)."),
        "{stdout}"
    );

    let mut args = vec!["compile"];
    args.extend(MV);
    args.push("cuda");
    let (stdout, _) = text(&run(&args));
    let l = lines(&stdout);
    for want in [
        "extern \"C\" __global__ void mv(float *__restrict__ output, const float *__restrict__ mat, const float *__restrict__ xs, shine_index n, shine_index m) {",
        "for (shine_index wg0 = blockIdx.x; wg0 < n / 32; wg0 += gridDim.x) {",
        "shine_index lid0 = threadIdx.x;",
    ] {
        assert!(l.contains(&want), "missing `{want}` in\n{stdout}");
    }
}

#[test]
fn the_tree_reduction_keeps_its_steps_in_local_memory_with_barriers_between() {
    let out = run(&[
        "compile",
        "examples/gpu_reduce.rise",
        "--def",
        "dotPartial",
        "--strategy",
        "examples/gpu.elv",
        "--apply",
        "reduceWorkGroup",
        "--target",
        "opencl",
    ]);
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "{stderr}");
    let l = lines(&stdout);
    for want in [
        "local float mem1[128]",
        "local float buf5[64]",
        "local float buf6[32]",
    ] {
        assert!(
            l.iter().any(|line| line.starts_with(want)),
            "missing `{want}` in\n{stdout}"
        );
    }
    // seven steps after the first stage, a barrier before each
    assert_eq!(
        stdout.matches("barrier(CLK_LOCAL_MEM_FENCE);").count(),
        7,
        "{stdout}"
    );
    // the local memory is declared before the work-group loop
    assert!(stdout.find("local float").unwrap() < stdout.find("get_group_id").unwrap());
}

#[test]
fn gpu_errors_are_clear() {
    // a CPU strategy for a GPU target
    let out = run(&[
        "compile",
        "examples/mv.rise",
        "--def",
        "mv",
        "--strategy",
        "examples/cpu.elv",
        "--apply",
        "parallelOuter",
        "--target",
        "opencl",
    ]);
    let (_, stderr) = text(&out);
    assert!(!out.status.success());
    assert!(stderr.contains("`mapPar` runs on CPU threads"), "{stderr}");
    // a GPU strategy for a CPU target
    let mut args = vec!["compile"];
    args.extend(MV);
    args.push("c");
    let (_, stderr) = text(&run(&args));
    assert!(
        stderr.contains("`mapWorkGroup(0)` distributes its iterations over GPU threads"),
        "{stderr}"
    );
}

/// Putting all chunks into one work-group (mapLocal(1) over a symbolic number of
/// chunks) would need a barrier inside that loop, which not every thread reaches.
#[test]
fn a_barrier_in_divergent_control_flow_is_rejected() {
    let dir = tempfile::tempdir().unwrap();
    let elv = dir.path().join("divergent.elv");
    std::fs::write(
        &elv,
        "def oneGroup = DFNF ;\n\
           toMapLocal(1)  @ outermost(isMap) ;;\n\
           fuseReduceMap  @ outermost(appliedReduce) ;;\n\
           toMapLocal(0)  @ outermost(isMap) ;;\n\
           toMapLocal(0)  @ outermost(isMap) ;;\n\
           toMem(local) @ argument @ outermost(function(argOf(iterate, id))) ;;\n\
           lowerToC\n",
    )
    .unwrap();
    let out = run(&[
        "compile",
        "examples/gpu_reduce.rise",
        "--def",
        "dotPartial",
        "--strategy",
        elv.to_str().unwrap(),
        "--apply",
        "oneGroup",
        "--target",
        "opencl",
    ]);
    let (stdout, stderr) = text(&out);
    assert!(!out.status.success(), "{stdout}");
    assert!(stderr.contains("`mapLocal(1)` loop"), "{stderr}");
    assert!(stderr.contains("would hang the work-group"), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
}

/// The tiled matmul: local-memory tiles, barriers around the update, and each
/// work-item's 4x4 block of the work-group's accumulator in its own registers.
#[test]
fn the_tiled_matmul_keeps_its_accumulator_block_in_registers() {
    let out = run(&[
        "compile",
        "examples/gpu_mm.rise",
        "--def",
        "mmTiled",
        "--strategy",
        "examples/gpu.elv",
        "--apply",
        "lowered",
        "--target",
        "cuda",
    ]);
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "{stderr}");
    let l = lines(&stdout);
    assert!(l.contains(&"float acc4[16];"), "{stdout}");
    assert!(
        l.contains(&"// acc4: the part of 16.16.4.4.f32 of this work-item"),
        "{stdout}"
    );
    assert_eq!(stdout.matches("__shared__ ").count(), 2, "{stdout}");
    assert_eq!(stdout.matches("__syncthreads();").count(), 2, "{stdout}");
    assert!(
        stdout.contains("n x m work-groups (blocks) of 16 x 16 work-items (threads)"),
        "{stdout}"
    );
}

/// The tiled matmul derived from `mm` by a strategy (examples/gpu.elv, `mmTiled`):
/// two local-memory tiles per step of k, written transposed (k-major) by coalesced
/// copies, barriers around the update, each work-item's 8x8 block of accumulators in
/// its own registers, the update unrolled, and no loop over the work-items.
#[test]
fn the_matmul_strategy_derives_local_tiles_and_register_blocks() {
    let out = run(&[
        "compile",
        "examples/mm.rise",
        "--def",
        "mm",
        "--strategy",
        "examples/gpu.elv",
        "--apply",
        "mmTiled(128, 8, 8, 16)",
        "--target",
        "cuda",
    ]);
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "{stderr}");
    let l = lines(&stdout);
    assert!(l.contains(&"float acc5[64];"), "{stdout}");
    assert!(
        l.contains(&"// acc5: the part of 16.16.8.8.f32 of this work-item"),
        "{stdout}"
    );
    assert_eq!(
        stdout.matches("__shared__ __align__(1024) float").count(),
        2,
        "{stdout}"
    );
    assert_eq!(stdout.matches("__syncthreads();").count(), 2, "{stdout}");
    assert!(!stdout.contains("blockDim"), "{stdout}");
    // the update reads both tiles k-major: a work-item's 8 values are consecutive
    assert!(
        l.contains(&"acc5[9] = acc5[9] + mem21[lid1_4 * 8 + 1] * mem25[lid0_4 * 8 + 1];"),
        "{stdout}"
    );
    assert!(
        stdout.contains("n / 128 x m / 128 work-groups (blocks) of 16 x 16 work-items (threads)"),
        "{stdout}"
    );
}

const JACOBI_VEC: [&str; 8] = [
    "examples/stencil2d.rise",
    "--def",
    "jacobi2d5",
    "--strategy",
    "examples/gpu.elv",
    "--apply",
    "global2dVec",
    "--target",
];

/// `vec[f32, 4]` is OpenCL's and CUDA's `float4`: whole vectors are loaded and
/// stored (OpenCL `vload4`/`vstore4`; CUDA a `float4` access where it is provably
/// aligned, `make_float4` of the elements where not), computed with vector
/// arithmetic (CUDA: the operators the source defines) and verified on OpenCL.
#[test]
fn the_vectorized_stencil_uses_float4_on_both_targets() {
    let mut args = vec!["compile"];
    args.extend(JACOBI_VEC);
    args.push("opencl");
    let out = run(&args);
    let (cl, stderr) = text(&out);
    assert!(out.status.success(), "{stderr}");
    assert!(!cl.contains("vector_size"), "{cl}");
    for want in [
        // the row above, the point's row and the row below: aligned, by vector index
        "vload4((gid1 * m) / 4 + gid0, grid)",
        // the left neighbours: 4 elements one off, clamped lane by lane at the border
        "gid0 * 4 - 1 >= 0 ? vload4(0, &grid[gid1 * m + gid0 * 4 - 1]) : (float4)(grid[",
        "vstore4(0.2f * (vload4(",
        "), (gid1 * m) / 4 + gid0, output);",
    ] {
        assert!(cl.contains(want), "{want}\n{cl}");
    }

    args.pop();
    args.push("cuda");
    let out = run(&args);
    let (cu, stderr) = text(&out);
    assert!(out.status.success(), "{stderr}");
    assert!(!cu.contains("vector_size"), "{cu}");
    for want in [
        "static __device__ __forceinline__ float4 operator+(float4 a, float4 b) { return \
         make_float4(a.x + b.x, a.y + b.y, a.z + b.z, a.w + b.w); }",
        "float4 operator*(float a, float4 b)",
        // aligned: a 64-byte aligned buffer at an index that is a multiple of 4
        "*(float4 *)&output[gid1 * m + gid0 * 4] = 0.2f * (*(const float4 *)&grid[",
        "*(const float4 *)&grid[gid1 * m + gid0 * 4]",
        // one off: not aligned, element by element
        "make_float4(grid[gid1 * m + gid0 * 4 - 1], grid[gid1 * m + gid0 * 4], ",
    ] {
        assert!(cu.contains(want), "{want}\n{cu}");
    }
    assert!(
        !cu.contains("(const float4 *)&grid[gid1 * m + gid0 * 4 - 1]"),
        "{cu}"
    );

    if skip_opencl() {
        return;
    }
    let mut args = vec!["run"];
    args.extend(JACOBI_VEC);
    args.extend([
        "opencl", "--nat", "n=7", "--nat", "m=12", "--random", "3", "--verify", "--json",
    ]);
    let out = run(&args);
    let (stdout, stderr) = text(&out);
    assert!(
        out.status.success() && stdout.contains("\"verified\":true"),
        "{stdout}\n{stderr}"
    );
}

/// OpenCL has `float8`; CUDA does not, and says so.
#[test]
fn eight_lanes_are_float8_in_opencl_and_an_error_in_cuda() {
    let strategy = "DFNF ; toMapGlobal(1) @ outermost(isMap) ;; \
                    vectorize(8) @ innermost(appliedMap) ;; \
                    toMapGlobal(0) @ innermost(isMap) ;; lowerToC";
    let base = [
        "examples/stencil2d.rise",
        "--def",
        "jacobi2d5",
        "--strategy",
        "examples/gpu.elv",
        "--apply",
        strategy,
        "--target",
    ];
    let mut args = vec!["compile"];
    args.extend(base);
    args.push("cuda");
    let out = run(&args);
    let (_, stderr) = text(&out);
    assert!(!out.status.success());
    assert!(
        stderr.contains("vec[f32, 8] in CUDA") && stderr.contains("no `float8`"),
        "{stderr}"
    );
    assert!(!stderr.contains("panicked"), "{stderr}");

    args.pop();
    args.push("opencl");
    let out = run(&args);
    let (cl, stderr) = text(&out);
    assert!(out.status.success(), "{stderr}");
    assert!(cl.contains("vstore8(") && cl.contains("(float8)("), "{cl}");
    if skip_opencl() {
        return;
    }
    let mut args = vec!["run"];
    args.extend(base);
    args.extend([
        "opencl", "--nat", "n=5", "--nat", "m=16", "--random", "2", "--verify", "--json",
    ]);
    let out = run(&args);
    let (stdout, stderr) = text(&out);
    assert!(
        out.status.success() && stdout.contains("\"verified\":true"),
        "{stdout}\n{stderr}"
    );
}

/// Private memory that a thread-parallel loop writes (each thread its own iterations'
/// elements, into its own copy) and that is read outside that loop would read elements no
/// thread wrote there: refused on OpenCL and CUDA, whether the loop is `mapLocal` or
/// `mapLane` (it compiled to wrong results before).
#[test]
fn private_memory_written_by_other_threads_is_refused() {
    let sum = "(es |> reduceSeq (fun a b => a + b) 0.0f)";
    let by_threads = format!(
        "def r : {{m: nat}} -> m.64.f32 -> m.64.f32 =\n  fun rows => rows |> mapWorkGroup(0) (fun row =>\n    \
         toMem private (row |> mapLocal(0) (fun x => x * 2.0f)) (fun es =>\n      \
         es |> mapLocal(0) (fun e => e + {sum})))\n"
    );
    let by_lanes = format!(
        "def r : {{m: nat}} -> m.32.f32 -> m.32.f32 =\n  fun rows => rows |> split 1 |> mapWorkGroup(0) (fun rs => rs |> mapWarp (fun row =>\n    \
         toMem private (row |> mapLane (fun x => x * 2.0f)) (fun es =>\n      \
         es |> mapLane (fun e => e + {sum})))) |> join\n"
    );
    for (program, target) in [
        (&by_threads, "opencl"),
        (&by_threads, "cuda"),
        (&by_lanes, "cuda"),
    ] {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("p.rise"), program).unwrap();
        let (out, text) = support::shine_in(
            dir.path(),
            &["compile", "p.rise", "--def", "r", "--target", target],
        );
        assert!(!out.status.success(), "{target}: compiled\n{text}");
        assert!(
            text.contains("is private memory written inside a")
                && text.contains("keep it in local memory (`toMem local`)"),
            "{target}: {text}"
        );
    }
}

/// Each work-group copies its row of `len` floats to local memory (`4 * len` bytes), its
/// 256 work-items `len / 256` elements each, then adds one to every element.
fn local_row_copy(len: usize) -> String {
    let per = len / 256;
    format!(
        "def p : {{n: nat}} -> n.{len}.f32 -> n.{len}.f32 =\n  \
         fun a => a |> mapWorkGroup(0) (fun row =>\n    \
         toMem local (row |> split {per} |> mapLocal(0) (mapSeq (fun x => x)) |> join)\n      \
         (fun t => t |> split {per} |> mapLocal(0) (mapSeq (fun x => x + 1.0f)) |> join))\n"
    )
}

/// `shine ARGS` on `program`, written as `p.rise` in a temporary directory (ARGS name it).
fn shine_on(program: &str, args: &[&str]) -> (bool, String) {
    let dir = tempfile::tempdir().expect("a temporary directory");
    std::fs::write(dir.path().join("p.rise"), program).expect("written");
    let (out, text) = support::shine_in(dir.path(), args);
    (out.status.success(), text)
}

fn run_local_row_copy(len: usize, target: &str) -> (bool, String) {
    shine_on(
        &local_row_copy(len),
        &[
            "run", "p.rise", "--def", "p", "--target", target, "--nat", "n=3", "--random", "1",
            "--verify", "--output", "out.npy",
        ],
    )
}

/// Local memory is no longer limited to 48 KiB by the code generator: 64 KiB per work-group
/// runs where the device has it (PoCL: 2 MiB) and is refused before the launch, naming the
/// kernel, the bytes and the device's limit, where it has not (NVIDIA's OpenCL: 48 KiB).
#[test]
fn opencl_local_memory_is_limited_by_the_device() {
    if skip_opencl() {
        return;
    }
    let (ok, text) = run_local_row_copy(16 * 1024, "opencl");
    let refused =
        text.contains("kernel `p` needs 65536 bytes of local memory per work-group, more than the");
    assert!(
        (ok && text.contains("verified against the interpreter")) || (!ok && refused),
        "{text}"
    );
    // more than any OpenCL device has
    let (ok, text) = run_local_row_copy(4 * 1024 * 1024, "opencl");
    assert!(!ok, "{text}");
    assert!(
        text.contains(
            "kernel `p` needs 16777216 bytes of local memory per work-group, more than the"
        ),
        "{text}"
    );
}

/// On CUDA the kernel keeps more than 48 KiB in dynamic shared memory, which the launch
/// passes; more than the device has is refused before the launch.
#[test]
fn cuda_local_memory_beyond_48_kib_is_dynamic_shared_memory() {
    let (ok, text) = shine_on(
        &local_row_copy(24 * 1024),
        &["compile", "p.rise", "--def", "p", "--target", "cuda"],
    );
    assert!(ok, "{text}");
    assert!(
        text.contains("98304 bytes of dynamic shared memory")
            && text.contains("extern __shared__ __align__(1024) unsigned char shine_smem[];")
            && text.contains("float *__restrict__ mem1 = (float *)shine_smem;")
            && !text[text.find("extern \"C\"").unwrap_or(0)..].contains("__shared__"),
        "{text}"
    );
    if !test_gpu() {
        return;
    }
    let (ok, text) = run_local_row_copy(24 * 1024, "cuda");
    assert!(
        ok && text.contains("verified against the interpreter"),
        "{text}"
    );
    let (ok, text) = run_local_row_copy(4 * 1024 * 1024, "cuda");
    assert!(!ok, "{text}");
    assert!(
        text.contains("kernel `p` needs 16777216 bytes of shared memory per block, more than the"),
        "{text}"
    );
}
