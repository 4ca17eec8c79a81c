//! CUDA runs of small hand-written kernels. Without the CUDA driver and NVRTC libraries (here
//! and in CI) every test but the last prints "skipping: no CUDA driver" and returns; on the GPU
//! machine they run for real.

use runtime::{
    Buffer, CudaDevice, CudaLaunch, CudaMemory, CudaProgram, GpuProgram, KernelArg, RuntimeError,
};
use std::slice::from_mut;

/// CUDA device 0, or `None` (after saying so) when this machine cannot run CUDA.
fn device() -> Option<CudaDevice> {
    match CudaDevice::open(0) {
        Ok(device) => {
            eprintln!("CUDA device: {device}, driver {}", device.driver_version());
            Some(device)
        }
        Err(RuntimeError::Unavailable(message)) => {
            eprintln!("skipping: no CUDA driver ({message})");
            None
        }
        Err(error) => panic!("opening CUDA device 0 failed: {error}"),
    }
}

#[test]
fn open_without_cuda_is_an_error_not_a_panic() {
    let opened = std::panic::catch_unwind(|| CudaDevice::open(0).map(drop));
    let result = opened.expect("CudaDevice::open must not panic");
    if !CudaDevice::libraries_present() {
        match result {
            Err(RuntimeError::Unavailable(message)) => {
                assert!(message.contains("not found"), "{message}");
                eprintln!("as expected without CUDA: {message}");
            }
            other => panic!("expected Unavailable without the CUDA libraries, got {other:?}"),
        }
    } else if let Err(error) = result {
        eprintln!("CUDA libraries present, but: {error}");
    }
}

const VECTOR_ADD: &str = r#"
extern "C" __global__ void vector_add(float *out, const float *a, const float *b, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = a[i] + b[i];
}
"#;

#[test]
fn vector_add() {
    let Some(device) = device() else { return };
    let program = CudaProgram::build(&device, VECTOR_ADD, "").unwrap();
    assert!(program
        .options()
        .contains(&format!("--gpu-architecture={}", device.arch())));
    let n = 1000;
    let a: Vec<f32> = (0..n).map(|i| i as f32 * 0.5).collect();
    let b: Vec<f32> = (0..n).map(|i| 3.0 - i as f32).collect();
    let (a, b) = (Buffer::from_slice(&a), Buffer::from_slice(&b));
    let mut out = Buffer::zeroed(n * 4);
    let launch =
        CudaLaunch::new("vector_add", [(n as u32).div_ceil(128), 1, 1], [128, 1, 1]).args([
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

/// A block tree reduction in dynamic shared memory: each block sums `blockDim.x` elements.
const REDUCE: &str = r#"
extern "C" __global__ void reduce(float *out, const float *in, int n) {
    extern __shared__ float scratch[];
    int lid = threadIdx.x;
    int gid = blockIdx.x * blockDim.x + threadIdx.x;
    scratch[lid] = gid < n ? in[gid] : 0.0f;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s /= 2) {
        if (lid < s) scratch[lid] += scratch[lid + s];
        __syncthreads();
    }
    if (lid == 0) out[blockIdx.x] = scratch[0];
}
"#;

#[test]
fn shared_memory_reduction_in_two_launches() {
    let Some(device) = device() else { return };
    let program = CudaProgram::build(&device, REDUCE, "").unwrap();
    let (n, block) = (256 * 64u32, 256u32);
    let blocks = n / block;
    let input: Vec<f32> = (0..n).map(|i| (i % 7) as f32).collect();
    let expected: f32 = input.iter().sum();
    let input = Buffer::from_slice(&input);
    let mut out = Buffer::zeroed(4);
    // Buffer 2 is a temporary holding the partial sums between the two launches.
    let launches = [
        CudaLaunch::new("reduce", [blocks, 1, 1], [block, 1, 1])
            .shared_mem(block * 4)
            .args([
                KernelArg::Buffer(2),
                KernelArg::Buffer(1),
                KernelArg::I32(n as i32),
            ]),
        CudaLaunch::new("reduce", [1, 1, 1], [blocks, 1, 1])
            .shared_mem(blocks * 4)
            .args([
                KernelArg::Buffer(0),
                KernelArg::Buffer(2),
                KernelArg::I32(blocks as i32),
            ]),
    ];
    program
        .run(
            &launches,
            from_mut(&mut out),
            &[&input],
            &[blocks as usize * 4],
        )
        .unwrap();
    // Integer-valued sums below 2^24 are exact in any order.
    assert_eq!(out.as_slice::<f32>(), &[expected]);
}

const TRANSPOSE: &str = r#"
extern "C" __global__ void transpose(float *out, const float *in, long long rows, int cols) {
    long long x = blockIdx.x * blockDim.x + threadIdx.x; // column of `in`
    long long y = blockIdx.y * blockDim.y + threadIdx.y; // row of `in`
    if (x < cols && y < rows) out[x * rows + y] = in[y * cols + x];
}
"#;

#[test]
fn two_dimensional_launch() {
    let Some(device) = device() else { return };
    let program = CudaProgram::build(&device, TRANSPOSE, "--use_fast_math").unwrap();
    let (rows, cols) = (19usize, 37usize);
    let input: Vec<f32> = (0..rows * cols).map(|i| i as f32).collect();
    let mut out = Buffer::zeroed(rows * cols * 4);
    let block = [8u32, 8, 1];
    let grid = [(cols as u32).div_ceil(8), (rows as u32).div_ceil(8), 1];
    let launch = CudaLaunch::new("transpose", grid, block).args([
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
fn a_program_built_again_loads_the_image_compiled_before() {
    let Some(device) = device() else { return };
    // A source no other test builds, so that its first build is the one that compiles.
    let source = format!("// built twice by one test\n{VECTOR_ADD}");
    let first = CudaProgram::build(&device, &source, "").unwrap();
    let again = CudaProgram::build(&device, &source, "").unwrap();
    let other_options = CudaProgram::build(&device, &source, "-DSHINE_OTHER").unwrap();
    assert!(!first.reused_image());
    assert!(again.reused_image());
    assert!(!other_options.reused_image(), "other options compile again");
    // The program built from the reused image runs.
    let x = Buffer::from_slice(&[1.0f32, 2.0, 3.0]);
    let y = Buffer::from_slice(&[10.0f32, 20.0, 30.0]);
    let mut out = [Buffer::zeroed(3 * 4)];
    let launch = CudaLaunch::new("vector_add", [1, 1, 1], [32, 1, 1]).args([
        KernelArg::Buffer(0),
        KernelArg::Buffer(1),
        KernelArg::Buffer(2),
        KernelArg::I32(3),
    ]);
    again.run(&[launch], &mut out, &[&x, &y], &[]).unwrap();
    assert_eq!(out[0].as_slice::<f32>(), &[11.0, 22.0, 33.0]);
}

#[test]
fn build_error_returns_the_log() {
    let Some(device) = device() else { return };
    let source = r#"extern "C" __global__ void broken(float *out) { out[0] = undefined_name; }"#;
    match CudaProgram::build(&device, source, "") {
        Err(RuntimeError::KernelBuildFailed { compiler, log, .. }) => {
            assert_eq!(compiler, "NVRTC");
            assert!(log.contains("undefined_name"), "log: {log}");
        }
        other => panic!("expected a build failure, got {other:?}"),
    }
    let error = CudaProgram::build(&device, VECTOR_ADD, "--no-such-option").unwrap_err();
    assert!(
        matches!(error, RuntimeError::KernelBuildFailed { .. }),
        "{error}"
    );
    // A virtual architecture gives PTX, which the driver compiles when loading.
    let arch = format!("--gpu-architecture=compute_{}", &device.arch()[3..]);
    CudaProgram::build(&device, VECTOR_ADD, &arch).unwrap();
}

#[test]
fn bad_launches_are_errors() {
    let Some(device) = device() else { return };
    assert!(matches!(
        CudaDevice::open(1 << 20),
        Err(RuntimeError::InvalidArgument(_))
    ));
    let program = CudaProgram::build(&device, VECTOR_ADD, "").unwrap();
    let a = Buffer::from_slice(&[1.0f32; 4]);
    let mut out = Buffer::zeroed(16);
    let args = [
        KernelArg::Buffer(0),
        KernelArg::Buffer(1),
        KernelArg::Buffer(1),
        KernelArg::I32(4),
    ];
    let launch = |args: &[KernelArg]| {
        CudaLaunch::new("vector_add", [1, 1, 1], [4, 1, 1]).args(args.iter().copied())
    };
    let cases = [
        // No such kernel.
        CudaLaunch::new("nope", [1, 1, 1], [4, 1, 1]).args(args),
        // A zero dimension.
        CudaLaunch::new("vector_add", [0, 1, 1], [4, 1, 1]).args(args),
        // Too few arguments.
        launch(&args[..3]),
        // An argument of the wrong size (a 64-bit integer for an `int`).
        launch(&[args[0], args[1], args[2], KernelArg::I64(4)]),
        // A scalar where a pointer goes.
        launch(&[args[0], KernelArg::F32(1.0), args[2], args[3]]),
        // A buffer index past the last buffer.
        launch(&[args[0], args[1], KernelArg::Buffer(9), args[3]]),
        // Local memory is an OpenCL argument.
        launch(&[args[0], args[1], args[2], KernelArg::LocalBytes(4)]),
    ];
    for case in cases {
        let error = program
            .run(std::slice::from_ref(&case), from_mut(&mut out), &[&a], &[])
            .unwrap_err();
        assert!(
            matches!(error, RuntimeError::InvalidArgument(_)),
            "{case:?}: {error}"
        );
    }
    // Too many threads per block is the driver's error.
    let error = program
        .run(
            &[CudaLaunch::new("vector_add", [1, 1, 1], [4096, 1, 1]).args(args)],
            from_mut(&mut out),
            &[&a],
            &[],
        )
        .unwrap_err();
    assert!(matches!(error, RuntimeError::Gpu { .. }), "{error}");
    // The device still works afterwards, and an empty output is fine.
    program
        .run(&[launch(&args)], from_mut(&mut out), &[&a], &[])
        .unwrap();
    assert_eq!(out.as_slice::<f32>(), &[2.0; 4]);
    program.run(&[], &mut [], &[], &[]).unwrap();
}

#[test]
fn bench_times_the_launch_sequence() {
    let Some(device) = device() else { return };
    let program = CudaProgram::build(&device, VECTOR_ADD, "").unwrap();
    let n = 1 << 24;
    let a = Buffer::from_slice(&vec![1.0f32; n]);
    let b = Buffer::from_slice(&vec![2.0f32; n]);
    let mut out = Buffer::zeroed(n * 4);
    let launch =
        CudaLaunch::new("vector_add", [(n as u32).div_ceil(256), 1, 1], [256, 1, 1]).args([
            KernelArg::Buffer(0),
            KernelArg::Buffer(1),
            KernelArg::Buffer(2),
            KernelArg::I32(n as i32),
        ]);
    let timing = program
        .bench(&[launch], from_mut(&mut out), &[&a, &b], &[], 10, 3)
        .unwrap();
    for t in [&timing.kernel, &timing.wall] {
        assert_eq!(t.runs, 10);
        assert!(t.min_ms <= t.median_ms && t.median_ms <= t.max_ms, "{t:?}");
        assert!(t.min_ms > 0.0, "{t:?}");
    }
    let gb_per_s = 3.0 * 4.0 * n as f64 / (timing.kernel.median_ms * 1e-3) / 1e9;
    eprintln!(
        "vector_add of {n} floats: kernel median {:.4} ms ({gb_per_s:.0} GB/s), wall median \
         {:.4} ms",
        timing.kernel.median_ms, timing.wall.median_ms
    );
    assert!(out.as_slice::<f32>().iter().all(|&x| x == 3.0));
}

/// A kernel that adds two vectors and raises the status flag where `b` is negative.
const CHECKED_ADD: &str = r#"
extern "C" __global__ void checked_add(float *out, const float *a, const float *b, int *status,
                                       int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) { out[i] = a[i] + b[i]; if (b[i] < 0.0f) *status = 7; }
}
"#;

/// A launch of `checked_add` over buffers 0 to 2 and the status flag at buffer 3.
fn checked_add_launch(n: usize) -> CudaLaunch {
    CudaLaunch::new("checked_add", [(n as u32).div_ceil(64), 1, 1], [64, 1, 1]).args([
        KernelArg::Buffer(0),
        KernelArg::Buffer(1),
        KernelArg::Buffer(2),
        KernelArg::Buffer(3),
        KernelArg::I32(n as i32),
    ])
}

/// The bytes of `memory`, copied to the host.
fn host_copy(memory: &CudaMemory) -> Vec<u8> {
    let mut bytes = vec![0u8; memory.len()];
    memory.copy_to_host(&mut bytes).unwrap();
    bytes
}

#[test]
fn run_on_device_memory_in_place() {
    let Some(device) = device() else { return };
    let program = CudaProgram::build(&device, CHECKED_ADD, "").unwrap();
    for n in [1usize, 7, 1031] {
        let a: Vec<f32> = (0..n).map(|i| i as f32).collect();
        let b: Vec<f32> = (0..n).map(|i| 0.5 * i as f32).collect();
        let on_device = |v: &[f32]| CudaMemory::from_host(&device, bytemuck::cast_slice(v));
        let (a_dev, b_dev) = (on_device(&a).unwrap(), on_device(&b).unwrap());
        let out = CudaMemory::zeroed(&device, n * 4).unwrap();
        let regions = [out.region(), a_dev.region(), b_dev.region()];
        // SAFETY: the regions are live allocations of this device of the kernel's extents.
        let status =
            unsafe { program.run_on_device(&[checked_add_launch(n)], &regions, &[4], Some(3)) };
        assert_eq!(status.unwrap(), 0);
        let expected: Vec<f32> = a.iter().zip(&b).map(|(x, y)| x + y).collect();
        assert_eq!(host_copy(&out), bytemuck::cast_slice::<f32, u8>(&expected));
        assert_eq!(host_copy(&a_dev), bytemuck::cast_slice::<f32, u8>(&a));
    }
}

#[test]
fn run_on_device_reports_the_status_flag_and_bad_arguments() {
    let Some(device) = device() else { return };
    let program = CudaProgram::build(&device, CHECKED_ADD, "").unwrap();
    let a = CudaMemory::from_host(&device, bytemuck::cast_slice(&[1.0f32, 2.0])).unwrap();
    let b = CudaMemory::from_host(&device, bytemuck::cast_slice(&[1.0f32, -2.0])).unwrap();
    let out = CudaMemory::zeroed(&device, 8).unwrap();
    let regions = [out.region(), a.region(), b.region()];
    let launch = [checked_add_launch(2)];
    // SAFETY: as above.
    let status = unsafe { program.run_on_device(&launch, &regions, &[4], Some(3)) };
    assert_eq!(status.unwrap(), 7);
    // SAFETY: refused before any launch (the flag is not a temporary).
    let error = unsafe { program.run_on_device(&launch, &regions, &[4], Some(2)) }.unwrap_err();
    assert!(error.to_string().contains("status flag"), "{error}");
    // SAFETY: refused before any launch (buffer 3 does not exist).
    let error = unsafe { program.run_on_device(&launch, &regions, &[], None) }.unwrap_err();
    assert!(error.to_string().contains("names buffer 3"), "{error}");
    let error = out.copy_to_host(&mut [0u8; 4]).unwrap_err();
    assert!(error.to_string().contains("8 bytes"), "{error}");
}

/// Every thread of one block writes its part of `n` floats of dynamic shared memory, then
/// reads back another thread's: `out[i] = i` for every `i < n`.
const DYNAMIC_SHARED: &str = r#"
extern __shared__ __align__(1024) unsigned char smem[];
extern "C" __global__ void fill(float *out, int n) {
    float *s = (float *)smem;
    for (int i = threadIdx.x; i < n; i += blockDim.x) s[n - 1 - i] = (float)(n - 1 - i);
    __syncthreads();
    for (int i = threadIdx.x; i < n; i += blockDim.x) out[i] = s[i];
}
"#;

#[test]
fn dynamic_shared_memory_beyond_48_kib_is_granted() {
    let Some(device) = device() else { return };
    let program = CudaProgram::build(&device, DYNAMIC_SHARED, "").unwrap();
    // 96 KiB: more than any kernel has without raising its limit
    let n = 24 * 1024;
    let mut out = Buffer::zeroed(n * 4);
    let launch = CudaLaunch::new("fill", [1, 1, 1], [256, 1, 1])
        .shared_mem(n as u32 * 4)
        .args([KernelArg::Buffer(0), KernelArg::I32(n as i32)]);
    program
        .run(&[launch], from_mut(&mut out), &[], &[])
        .unwrap();
    let expected: Vec<f32> = (0..n).map(|i| i as f32).collect();
    assert_eq!(out.as_slice::<f32>(), &expected[..]);
}

#[test]
fn shared_memory_beyond_the_device_is_refused_before_the_launch() {
    let Some(device) = device() else { return };
    let program = CudaProgram::build(&device, DYNAMIC_SHARED, "").unwrap();
    let limit = device.max_shared_memory_per_block();
    assert!(limit >= 48 * 1024, "{limit}");
    let bytes = limit as u32 + 16;
    let mut out = Buffer::zeroed(4);
    let launch = CudaLaunch::new("fill", [1, 1, 1], [32, 1, 1])
        .shared_mem(bytes)
        .args([KernelArg::Buffer(0), KernelArg::I32(1)]);
    let error = program
        .run(&[launch], from_mut(&mut out), &[], &[])
        .unwrap_err();
    let message = error.to_string();
    assert!(
        matches!(error, RuntimeError::LocalMemoryExceeded { needed, .. } if needed == u64::from(bytes)),
        "{message}"
    );
    assert!(
        message.contains("kernel `fill`")
            && message.contains(&format!("{bytes} bytes of shared memory per block"))
            && message.contains(&format!("more than the {limit}")),
        "{message}"
    );
}
