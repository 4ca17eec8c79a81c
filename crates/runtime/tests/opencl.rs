//! OpenCL runs of small hand-written kernels: PoCL on the CPU here and in CI, the NVIDIA
//! platform on the GPU machine (`SHINE_OPENCL_DEVICE=gpu`).

use runtime::{
    Buffer, DeviceSelector, GpuProgram, KernelArg, OpenClDevice, OpenClLaunch, OpenClProgram,
    RuntimeError,
};
use std::slice::from_mut;

/// The device these tests run on: the one `SHINE_OPENCL_DEVICE` names, or any.
///
/// Without any OpenCL platform this FAILS, because CI installs PoCL and a missing platform
/// means the OpenCL half of the runtime went untested; set `SHINE_SKIP_OPENCL=1` to skip
/// instead (returns `None`).
fn device() -> Option<OpenClDevice> {
    match OpenClDevice::from_env() {
        Ok(device) => {
            eprintln!("OpenCL device: {device} [{}]", device.version());
            Some(device)
        }
        Err(RuntimeError::Unavailable(message))
            if std::env::var("SHINE_SKIP_OPENCL").as_deref() == Ok("1") =>
        {
            eprintln!("skipping: {message} (SHINE_SKIP_OPENCL=1)");
            None
        }
        Err(error) => panic!(
            "no OpenCL device: {error}\nThese tests need an OpenCL platform (CI installs PoCL: \
             `apt-get install ocl-icd-libopencl1 pocl-opencl-icd`); set SHINE_SKIP_OPENCL=1 to \
             skip them"
        ),
    }
}

const VECTOR_ADD: &str = r#"
kernel void vector_add(global float *out, global const float *a, global const float *b, int n) {
    int i = get_global_id(0);
    if (i < n) out[i] = a[i] + b[i];
}
"#;

/// Two outputs (a result that is a pair of arrays): buffers 0 and 1, the input after them.
const SUM_AND_DIFFERENCE: &str = r#"
kernel void sum_diff(global float *sum, global int *diff, global const float *x, int n) {
    int i = get_global_id(0);
    if (i < n) { sum[i] = x[i] + 1.0f; diff[i] = (int)x[i] - 1; }
}
"#;

#[test]
fn two_outputs() {
    let Some(device) = device() else { return };
    let program = OpenClProgram::build(&device, SUM_AND_DIFFERENCE, "").unwrap();
    let n = 37;
    let x: Vec<f32> = (0..n).map(|i| i as f32).collect();
    let mut outputs = [Buffer::zeroed(n * 4), Buffer::zeroed(n * 4)];
    let launch = OpenClLaunch::new("sum_diff", &[64]).args([
        KernelArg::Buffer(0),
        KernelArg::Buffer(1),
        KernelArg::Buffer(2),
        KernelArg::I32(n as i32),
    ]);
    program
        .run(&[launch], &mut outputs, &[&Buffer::from_slice(&x)], &[])
        .unwrap();
    let sums: Vec<f32> = (0..n).map(|i| i as f32 + 1.0).collect();
    let diffs: Vec<i32> = (0..n).map(|i| i as i32 - 1).collect();
    assert_eq!(outputs[0].as_slice::<f32>(), &sums[..]);
    assert_eq!(outputs[1].as_slice::<i32>(), &diffs[..]);
}

#[test]
fn vector_add() {
    let Some(device) = device() else { return };
    let program = OpenClProgram::build(&device, VECTOR_ADD, "").unwrap();
    assert_eq!(program.kernel_names(), ["vector_add"]);
    let n = 1000;
    let a: Vec<f32> = (0..n).map(|i| i as f32 * 0.5).collect();
    let b: Vec<f32> = (0..n).map(|i| 3.0 - i as f32).collect();
    let (a, b) = (Buffer::from_slice(&a), Buffer::from_slice(&b));
    let mut out = Buffer::zeroed(n * 4);
    let launch = OpenClLaunch::new("vector_add", &[1024]).local(&[64]).args([
        KernelArg::Buffer(0),
        KernelArg::Buffer(1),
        KernelArg::Buffer(2),
        KernelArg::I32(n as i32),
    ]);
    program
        .run(&[launch], from_mut(&mut out), &[&a, &b], &[])
        .unwrap();
    let expected: Vec<f32> = (0..n).map(|i| i as f32 * 0.5 + 3.0 - i as f32).collect();
    assert_eq!(out.as_slice::<f32>(), &expected[..]);
}

/// A work-group tree reduction in local memory: each group sums `get_local_size(0)` elements.
const REDUCE: &str = r#"
kernel void reduce(global float *out, global const float *in, local float *scratch, int n) {
    int lid = get_local_id(0);
    int gid = get_global_id(0);
    scratch[lid] = gid < n ? in[gid] : 0.0f;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int s = get_local_size(0) / 2; s > 0; s /= 2) {
        if (lid < s) scratch[lid] += scratch[lid + s];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (lid == 0) out[get_group_id(0)] = scratch[0];
}
"#;

#[test]
fn local_memory_reduction_in_two_launches() {
    let Some(device) = device() else { return };
    let program = OpenClProgram::build(&device, REDUCE, "").unwrap();
    let (n, group) = (256 * 64, 256);
    let groups = n / group;
    let input: Vec<f32> = (0..n).map(|i| (i % 7) as f32).collect();
    let expected: f32 = input.iter().sum();
    let input = Buffer::from_slice(&input);
    let mut out = Buffer::zeroed(4);
    // Buffer 2 is a temporary holding the partial sums between the two launches.
    let launches = [
        OpenClLaunch::new("reduce", &[n]).local(&[group]).args([
            KernelArg::Buffer(2),
            KernelArg::Buffer(1),
            KernelArg::LocalBytes(group * 4),
            KernelArg::I32(n as i32),
        ]),
        OpenClLaunch::new("reduce", &[groups])
            .local(&[groups])
            .args([
                KernelArg::Buffer(0),
                KernelArg::Buffer(2),
                KernelArg::LocalBytes(groups * 4),
                KernelArg::I32(groups as i32),
            ]),
    ];
    program
        .run(&launches, from_mut(&mut out), &[&input], &[groups * 4])
        .unwrap();
    // Integer-valued sums below 2^24 are exact in any order.
    assert_eq!(out.as_slice::<f32>(), &[expected]);
}

const TRANSPOSE: &str = r#"
kernel void transpose(global float *out, global const float *in, long rows, int cols) {
    size_t x = get_global_id(0); // column of `in`
    size_t y = get_global_id(1); // row of `in`
    if (x < cols && y < rows) out[x * rows + y] = in[y * cols + x];
}
"#;

#[test]
fn two_dimensional_launch() {
    let Some(device) = device() else { return };
    let program = OpenClProgram::build(&device, TRANSPOSE, "-cl-std=CL1.2").unwrap();
    let (rows, cols) = (19usize, 37usize);
    let input: Vec<f32> = (0..rows * cols).map(|i| i as f32).collect();
    let mut out = Buffer::zeroed(rows * cols * 4);
    let launch = OpenClLaunch::new("transpose", &[cols, rows]).args([
        KernelArg::Buffer(0),
        KernelArg::Buffer(1),
        KernelArg::I64(rows as i64),
        KernelArg::I32(cols as i32),
    ]);
    program
        .run(
            &[launch],
            from_mut(&mut out),
            &[&Buffer::from_slice(&input)],
            &[],
        )
        .unwrap();
    let out = out.as_slice::<f32>();
    for y in 0..rows {
        for x in 0..cols {
            assert_eq!(out[x * rows + y], input[y * cols + x], "at ({y}, {x})");
        }
    }
}

#[test]
fn build_error_returns_the_log() {
    let Some(device) = device() else { return };
    let source = "kernel void broken(global float *out) { out[0] = undefined_name; }";
    match OpenClProgram::build(&device, source, "") {
        Err(RuntimeError::KernelBuildFailed { compiler, log, .. }) => {
            assert_eq!(compiler, "OpenCL");
            assert!(log.contains("undefined_name"), "log: {log}");
        }
        other => panic!("expected a build failure, got {other:?}"),
    }
    // PoCL rejects unknown options; a platform that ignores them may build the program.
    match OpenClProgram::build(&device, VECTOR_ADD, "-no-such-option") {
        Err(RuntimeError::KernelBuildFailed { .. }) => {}
        Ok(_) => eprintln!("note: {} accepts unknown options", device.platform_name()),
        Err(other) => panic!("expected a build failure, got {other}"),
    }
    let error = OpenClProgram::build(&device, "a\0b", "").unwrap_err();
    assert!(matches!(error, RuntimeError::InvalidArgument(_)), "{error}");
}

#[test]
fn selector_that_matches_nothing_is_an_error() {
    let Some(_) = device() else { return };
    let wanted = DeviceSelector::Platform("no-such-platform-xyz".into());
    match OpenClDevice::select(&wanted) {
        Err(error @ RuntimeError::NoMatchingDevice { .. }) => {
            let text = error.to_string();
            assert!(text.contains("no-such-platform-xyz"), "{text}");
        }
        other => panic!("expected NoMatchingDevice, got {other:?}"),
    }
    let listed = OpenClDevice::list().unwrap();
    assert!(!listed.is_empty());
    eprintln!("OpenCL devices: {listed:?}");
}

#[test]
fn selector_parsing() {
    assert_eq!(DeviceSelector::parse("GPU"), DeviceSelector::Gpu);
    assert_eq!(DeviceSelector::parse(" cpu "), DeviceSelector::Cpu);
    assert_eq!(DeviceSelector::parse(""), DeviceSelector::Any);
    assert_eq!(DeviceSelector::parse("any"), DeviceSelector::Any);
    assert_eq!(
        DeviceSelector::parse("NVIDIA"),
        DeviceSelector::Platform("NVIDIA".into())
    );
    assert_eq!("pocl".parse(), Ok(DeviceSelector::Platform("pocl".into())));
    assert_eq!(DeviceSelector::Gpu.to_string(), "gpu");
}

#[test]
fn selecting_by_kind_and_platform_name() {
    let Some(device) = device() else { return };
    // The chosen device's own platform name selects a device of that platform.
    let again = OpenClDevice::select(&DeviceSelector::Platform(
        device.platform_name().to_lowercase(),
    ))
    .unwrap();
    assert_eq!(again.platform_name(), device.platform_name());
    let by_kind = match device.kind() {
        runtime::DeviceKind::Gpu => Some(DeviceSelector::Gpu),
        runtime::DeviceKind::Cpu => Some(DeviceSelector::Cpu),
        _ => None,
    };
    if let Some(selector) = by_kind {
        assert_eq!(
            OpenClDevice::select(&selector).unwrap().kind(),
            device.kind()
        );
    }
    assert!(device.max_work_group_size() >= 1);
    assert!(device.local_mem_bytes() > 0);
}

#[test]
fn local_memory_beyond_the_device_is_refused() {
    let Some(device) = device() else { return };
    let limit = device.local_mem_bytes();
    assert!(device.check_local_memory("k", limit).is_ok());
    let error = device
        .check_local_memory("k", limit + 1)
        .expect_err("more than the device has");
    let message = error.to_string();
    assert!(
        message.contains(&format!(
            "kernel `k` needs {} bytes of local memory per work-group, more than the {limit}",
            limit + 1
        )) && message.contains(device.name()),
        "{message}"
    );
}

#[test]
fn bench_times_the_launch_sequence() {
    let Some(device) = device() else { return };
    let program = OpenClProgram::build(&device, VECTOR_ADD, "").unwrap();
    let n = 1 << 16;
    let a = Buffer::from_slice(&vec![1.0f32; n]);
    let b = Buffer::from_slice(&vec![2.0f32; n]);
    let mut out = Buffer::zeroed(n * 4);
    let launch = OpenClLaunch::new("vector_add", &[n]).args([
        KernelArg::Buffer(0),
        KernelArg::Buffer(1),
        KernelArg::Buffer(2),
        KernelArg::I32(n as i32),
    ]);
    let timing = program
        .bench(
            std::slice::from_ref(&launch),
            from_mut(&mut out),
            &[&a, &b],
            &[],
            5,
            2,
        )
        .unwrap();
    for t in [&timing.kernel, &timing.wall] {
        assert_eq!(t.runs, 5);
        assert!(t.min_ms <= t.median_ms && t.median_ms <= t.max_ms, "{t:?}");
        assert!(t.min_ms >= 0.0);
    }
    assert!(timing.kernel.max_ms > 0.0, "{timing:?}");
    eprintln!(
        "vector_add of {n}: kernel median {:.4} ms, wall median {:.4} ms",
        timing.kernel.median_ms, timing.wall.median_ms
    );
    assert!(out.as_slice::<f32>().iter().all(|&x| x == 3.0));
    let error = program
        .bench(&[launch], from_mut(&mut out), &[&a, &b], &[], 0, 0)
        .unwrap_err();
    assert!(matches!(error, RuntimeError::InvalidArgument(_)), "{error}");
}

#[test]
fn bad_launches_are_errors() {
    let Some(device) = device() else { return };
    let program = OpenClProgram::build(&device, VECTOR_ADD, "").unwrap();
    let a = Buffer::from_slice(&[1.0f32; 4]);
    let mut out = Buffer::zeroed(16);
    let args = [
        KernelArg::Buffer(0),
        KernelArg::Buffer(1),
        KernelArg::Buffer(1),
        KernelArg::I32(4),
    ];
    let run =
        |launch: OpenClLaunch, out: &mut Buffer| program.run(&[launch], from_mut(out), &[&a], &[]);
    let cases = [
        // No such kernel.
        OpenClLaunch::new("nope", &[4]).args(args),
        // Not an identifier.
        OpenClLaunch::new("no pe", &[4]).args(args),
        // Too few arguments.
        OpenClLaunch::new("vector_add", &[4]).args(args[..3].iter().copied()),
        // A buffer index past the last buffer.
        OpenClLaunch::new("vector_add", &[4]).args([
            KernelArg::Buffer(0),
            KernelArg::Buffer(1),
            KernelArg::Buffer(5),
            KernelArg::I32(4),
        ]),
        // Four dimensions.
        OpenClLaunch::new("vector_add", &[4, 1, 1, 1]).args(args),
        // Local and global sizes of different dimensions.
        OpenClLaunch::new("vector_add", &[4])
            .local(&[2, 2])
            .args(args),
    ];
    for launch in cases {
        let error = run(launch.clone(), &mut out).unwrap_err();
        assert!(
            matches!(error, RuntimeError::InvalidArgument(_)),
            "{launch:?}: {error}"
        );
    }
    // A scalar of the wrong size is rejected by OpenCL itself.
    let wrong_size = OpenClLaunch::new("vector_add", &[4]).args([
        KernelArg::Buffer(0),
        KernelArg::Buffer(1),
        KernelArg::Buffer(1),
        KernelArg::I64(4),
    ]);
    let error = run(wrong_size, &mut out).unwrap_err();
    assert!(matches!(error, RuntimeError::Gpu { .. }), "{error}");
    // An empty output and an empty launch sequence are fine.
    program.run(&[], &mut [], &[], &[]).unwrap();
}

/// Kernels that end the process running them: a store through a wild pointer (the address
/// is an argument, so the compiler cannot see it), and a trap (what `abort` would be: PoCL
/// links kernels against its kernel library only, so they cannot call the C library's).
const CRASHES: &str = r#"
kernel void wild_store(global int *out, long address) {
    global int *wild = (global int *)address;
    wild[get_global_id(0)] = 1;
    out[get_global_id(0)] = 2;
}
kernel void traps(global int *out, int at) {
    if (get_global_id(0) == at) __builtin_trap();
    out[get_global_id(0)] = 1;
}
"#;

/// On a device other than a GPU (PoCL), a kernel that crashes ends the child process that
/// runs it, not this one: the call is an error naming the signal and the kernel, and a
/// program built before runs again afterwards (in a fresh child, rebuilt there), as does
/// the crashing one. On a GPU the driver reports faults itself: nothing to check here.
#[test]
fn crashing_kernels_are_errors_and_the_device_goes_on() {
    let Some(device) = device() else { return };
    if !device.runs_in_child() {
        assert_eq!(device.kind(), runtime::DeviceKind::Gpu);
        eprintln!("skipping: {device} runs in this process (a GPU)");
        return;
    }
    let adding = OpenClProgram::build(&device, VECTOR_ADD, "").unwrap();
    let crashing = OpenClProgram::build(&device, CRASHES, "").unwrap();
    let add = || {
        let a = Buffer::from_slice(&[1.0f32, 2.0]);
        let b = Buffer::from_slice(&[3.0f32, 4.0]);
        let mut sum = Buffer::zeroed(8);
        let launch = OpenClLaunch::new("vector_add", &[2]).args([
            KernelArg::Buffer(0),
            KernelArg::Buffer(1),
            KernelArg::Buffer(2),
            KernelArg::I32(2),
        ]);
        adding
            .run(&[launch], from_mut(&mut sum), &[&a, &b], &[])
            .unwrap();
        assert_eq!(sum.as_slice::<f32>(), &[4.0, 6.0]);
    };
    add();
    let cases = [
        (
            OpenClLaunch::new("wild_store", &[4]).args([KernelArg::Buffer(0), KernelArg::I64(16)]),
            "was killed by SIGSEGV",
        ),
        (
            OpenClLaunch::new("traps", &[1]).args([KernelArg::Buffer(0), KernelArg::I32(0)]),
            "was killed by SIGILL",
        ),
    ];
    for (launch, ended) in cases {
        let mut out = Buffer::zeroed(16);
        let error = crashing
            .run(std::slice::from_ref(&launch), from_mut(&mut out), &[], &[])
            .unwrap_err();
        let text = error.to_string();
        eprintln!("{text}");
        assert!(
            matches!(error, RuntimeError::OpenClProcessEnded { .. }),
            "{launch:?}: {text}"
        );
        assert!(text.contains(ended), "{text}");
        assert!(
            text.contains(&format!("while running kernel `{}`", launch.kernel)),
            "{text}"
        );
        assert!(text.contains(device.name()), "{text}");
        add();
    }
    // the crashing program is rebuilt too, and runs where it does not trap
    let mut out = Buffer::zeroed(16);
    let harmless =
        OpenClLaunch::new("traps", &[4]).args([KernelArg::Buffer(0), KernelArg::I32(-1)]);
    crashing
        .run(&[harmless], from_mut(&mut out), &[], &[])
        .unwrap();
    assert_eq!(out.as_slice::<i32>(), &[1, 1, 1, 1]);
}
