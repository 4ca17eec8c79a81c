"""The anchor worker of `shine bench cpu`: numpy/OpenBLAS sgemm, TVM's GEMM tutorial
schedules and Halide's 3x3 blur schedules, timed on request, plus independent numpy
references that check shine's results.

`shine bench cpu` starts one worker per thread count, with OMP_NUM_THREADS,
OPENBLAS_NUM_THREADS, TVM_NUM_THREADS and HL_NUM_THREADS set to that count, and talks to it
in JSON lines: one request per line on stdin, one answer per line on stdout. Anything a
library prints goes to stderr (stdout is kept for the protocol). Requests:

  {"op": "hello"}
      -> versions, thread settings (threadpoolctl's view of OpenBLAS), the TVM target
  {"op": "verify", "reference": R, "inputs": [X.npy...], "output": Y.npy}
      -> {"verified": bool, "max_abs_err": e, "reference": R}: shine's result against numpy
  {"op": "prepare", "id": I, "anchor": A, "inputs": [X.npy...] | null, "nats": {...},
   "reference": R | null}
      -> builds anchor A on the inputs (or on its own random inputs), runs it once, checks
         it against reference R: {"first_ms": t, "anchor_verified": bool, "info": {...}}
  {"op": "time", "id": I, "runs": n, "warmup": w}
      -> {"samples_ms": [...]}: n calls after w untimed ones, each timed with perf_counter
  {"op": "release", "id": I}
  {"op": "quit"}

Anchors:
  numpy_matmul                  np.matmul(A, B, out=C) (OpenBLAS sgemm), float32
  tvm_gemm:VERSION              the TVM tutorial "How to optimize GEMM on CPU" (bn = 32,
                                kfactor = 4), ported to TensorIR (tvm.s_tir) of apache-tvm
                                0.27; VERSION: baseline blocking vectorize loop_perm
                                array_pack write_cache parallel
  halide_blur:PIPELINE:SCHEDULE Halide's separable 3x3 blur, blur_x then blur_y, on the
                                input with repeat_edge (clamped) borders, as shine's
                                programs do; PIPELINE: box_f32 binomial_f32 binomial_u16;
                                SCHEDULE: root inline sliding_window root_vec_par
                                inline_vec_par tiled_v8 tiled_v16 strip_slide_v16
  numpy_expr:EXPR               a numpy expression over the inputs x0, x1, ... (`np` is
                                numpy), as `shine bench cpu --program ... --numpy EXPR`
                                gives it; the reference `numpy_expr:EXPR` is the same
                                expression on the inputs in float64 (exact on integers)
  halide_blur_halo:PIPELINE:SCHEDULE  the same on an input that carries its one-pixel
                                border ((n+2) x (m+2) in, n x m out, no boundary
                                condition), as Halide's blur app reads it and as
                                examples/blur.rise computes it
  numpy_blur5x5_u8              the 5x5 binomial blur ([1 4 6 4 1] x [1 4 6 4 1] / 256,
                                rounded) of an 8-bit image with clamped borders, as a
                                numpy user writes it: np.pad(mode="edge"), uint16, five
                                shifted multiply-adds along the rows, five down the columns
  halide_adams2019:blur5x5_u8   the same 25-tap filter in Halide (repeat_edge, uint16 sums),
                                scheduled by the Adams2019 autoscheduler (its plugin in the
                                halide wheel; parallelism = HL_NUM_THREADS, estimates = the
                                image's size)

References (float64 numpy, or exact integers): matmul, binomial3x3_clamped,
box3x3_clamped, binomial3x3_clamped_u16, blur5x5_u8_clamped (exact), and on bordered inputs
binomial3x3_halo, box3x3_halo, binomial3x3_halo_u16.

The anchors are the TVM CPU GEMM tutorial's schedules and Halide's 3x3 blur schedules, with
clamped borders for the blur and sizes taken from the inputs.
"""

import json
import os
import sys
import time
import traceback

# --- references ------------------------------------------------------------------------------

TOLERANCES = {  # (rtol, atol) against the float64 reference
    "matmul": (1e-4, 1e-3),
    "binomial3x3_clamped": (1e-5, 1e-5),
    "box3x3_clamped": (1e-5, 1e-5),
    "binomial3x3_halo": (1e-5, 1e-5),
    "box3x3_halo": (1e-5, 1e-5),
}


NUMPY_EXPR = "numpy_expr:"
NUMPY_EXPR_TOLERANCE = (1e-4, 1e-3)


def numpy_expr(expr, inputs):
    """The value of the numpy expression `expr` over the inputs `x0, x1, ...`."""
    import numpy as np

    names = {f"x{i}": x for i, x in enumerate(inputs)}
    names["np"] = np
    return np.asarray(eval(expr, {"__builtins__": {}}, names))  # noqa: S307 (the user's own)


def reference(name, inputs):
    """The independent numpy result of reference `name` on `inputs` (float64 or exact)."""
    import numpy as np

    if name.startswith(NUMPY_EXPR):
        wide = [x.astype(np.float64) if np.issubdtype(x.dtype, np.floating) else x
                for x in inputs]
        return numpy_expr(name[len(NUMPY_EXPR):], wide)
    if name == "matmul":
        a, b = inputs
        return a.astype(np.float64) @ b.astype(np.float64)
    if name in ("binomial3x3_clamped", "box3x3_clamped", "binomial3x3_clamped_u16"):
        # the clamped border is the bordered filter on the edge-padded image
        (img,) = inputs
        return reference(name.replace("_clamped", "_halo"), [np.pad(img, 1, mode="edge")])
    if name in ("binomial3x3_halo", "box3x3_halo", "binomial3x3_halo_u16"):
        (img,) = inputs
        exact = name.endswith("_u16")
        p = img.astype(np.int64 if exact else np.float64)
        w = (1, 1, 1) if name.startswith("box") else (1, 2, 1)
        bx = w[0] * p[:, :-2] + w[1] * p[:, 1:-1] + w[2] * p[:, 2:]
        by = w[0] * bx[:-2] + w[1] * bx[1:-1] + w[2] * bx[2:]
        if exact:
            return ((by + 8) >> 4).astype(np.uint16)
        return by / 9.0 if name.startswith("box") else by / 16.0
    if name == "blur5x5_u8_clamped":
        (img,) = inputs
        return blur5x5_u8(img.astype(np.int64)).astype(np.uint8)
    raise ValueError(f"unknown reference `{name}`")


BLUR5_TAPS = (1, 4, 6, 4, 1)


def blur5x5_u8(img):
    """The separable 5x5 binomial blur with clamped borders, rounded, in img's integer type
    (uint16 holds the sums of 8-bit data: at most 255 * 256)."""
    import numpy as np

    n, m = img.shape
    p = np.pad(img, 2, mode="edge")
    rows = sum(w * p[:, k:k + m] for k, w in enumerate(BLUR5_TAPS))
    return (sum(w * rows[k:k + n] for k, w in enumerate(BLUR5_TAPS)) + 128) >> 8


def compare(name, inputs, got):
    """(verified, max_abs_err) of `got` against reference `name` on `inputs`."""
    import numpy as np

    ref = reference(name, inputs)
    if got.shape != ref.shape:
        return False, None, f"shape {list(got.shape)}, expected {list(ref.shape)}"
    exact = name.endswith("_u16") or not np.issubdtype(ref.dtype, np.floating)
    if exact:
        err = int(np.abs(got.astype(np.int64) - ref.astype(np.int64)).max()) if got.size else 0
        return err == 0, err, None
    rtol, atol = NUMPY_EXPR_TOLERANCE if name.startswith(NUMPY_EXPR) else TOLERANCES[name]
    err = float(np.abs(got.astype(np.float64) - ref).max())
    ok = bool(np.allclose(got, ref, rtol=rtol, atol=atol)) and bool(np.isfinite(got).all())
    return ok, err, None


# --- anchors ---------------------------------------------------------------------------------


class Anchor:
    """A callable benchmark: `call()` runs it once; `result()` is its output as numpy."""

    info = {}

    def call(self):
        raise NotImplementedError

    def result(self):
        raise NotImplementedError


class NumpyMatmul(Anchor):
    def __init__(self, a, b):
        import numpy as np

        self.a, self.b = a, b
        self.c = np.zeros((a.shape[0], b.shape[1]), dtype=np.float32)

    def call(self):
        import numpy as np

        np.matmul(self.a, self.b, out=self.c)

    def result(self):
        return self.c


TVM_VERSIONS = ["baseline", "blocking", "vectorize", "loop_perm", "array_pack", "write_cache",
                "parallel"]
BN = 32
KFACTOR = 4


def tvm_target():
    """An LLVM target for this CPU (SHINE_BENCH_TVM_MCPU overrides the CPU name).

    The shared anchors used "sapphirerapids" on this machine, whose model number LLVM
    reports as "rocketlake"; with AMX present we follow the anchors."""
    import tvm

    mcpu = os.environ.get("SHINE_BENCH_TVM_MCPU")
    if not mcpu:
        flags = ""
        try:
            with open("/proc/cpuinfo") as f:
                flags = next((line for line in f if line.startswith("flags")), "")
        except OSError:
            pass
        if " amx_tile" in flags and " avx512f" in flags:
            mcpu = "sapphirerapids"
        else:
            mcpu = tvm.target.codegen.llvm_get_system_cpu()
    return {"kind": "llvm", "mcpu": mcpu}


def tvm_module(m, n, k, packed):
    import tvm
    from tvm import te

    r = te.reduce_axis((0, k), "k")
    A = te.placeholder((m, k), name="A", dtype="float32")
    B = te.placeholder((k, n), name="B", dtype="float32")
    if not packed:
        C = te.compute((m, n), lambda i, j: te.sum(A[i, r] * B[r, j], axis=r), name="C")
    else:
        packedB = te.compute((n // BN, k, BN), lambda x, y, z: B[y, x * BN + z], name="packedB")
        C = te.compute((m, n),
                       lambda i, j: te.sum(A[i, r] * packedB[j // BN, r, j % BN], axis=r),
                       name="C")
    return tvm.IRModule({"main": te.create_prim_func([A, B, C])})


def tvm_schedule(version, m, n, k):
    """The tutorial's schedule `version` (the TVM GEMM tutorial's schedules)."""
    from tvm import s_tir

    packed = version in ("array_pack", "write_cache", "parallel")
    sch = s_tir.Schedule(tvm_module(m, n, k, packed))
    if packed:
        pb = sch.get_sblock("packedB")
        x, _y, z = sch.get_loops(pb)
        sch.vectorize(z)
        sch.parallel(x)
    blk = sch.get_sblock("C")
    if version == "baseline":
        _i, _j, r = sch.get_loops(blk)
        sch.decompose_reduction(blk, r)
        return sch
    if version in ("blocking", "vectorize", "loop_perm", "array_pack"):
        i, j, r = sch.get_loops(blk)
        io, ii = sch.split(i, [None, BN])
        jo, ji = sch.split(j, [None, BN])
        ro, ri = sch.split(r, [None, KFACTOR])
        if version in ("blocking", "vectorize"):
            sch.reorder(io, jo, ro, ri, ii, ji)
        else:
            sch.reorder(io, jo, ro, ii, ri, ji)
        if version != "blocking":
            sch.vectorize(ji)
        init = sch.decompose_reduction(blk, ro)
        if version != "blocking":
            sch.vectorize(sch.get_loops(init)[-1])
        return sch
    # write_cache / parallel
    wb = sch.cache_write(blk, 0, "global")
    i, j = sch.get_loops(wb)
    io, ii = sch.split(i, [None, BN])
    jo, ji = sch.split(j, [None, BN])
    sch.reorder(io, jo, ii, ji)
    sch.compute_at(blk, jo)
    ic, jc, r = sch.get_loops(blk)[-3:]
    ro, ri = sch.split(r, [None, KFACTOR])
    sch.reorder(ro, ic, ri, jc)
    sch.unroll(ri)
    sch.vectorize(jc)
    if version == "parallel":
        sch.parallel(io)  # before decompose_reduction (s_tir refuses it after)
    init = sch.decompose_reduction(blk, ro)
    sch.vectorize(sch.get_loops(init)[-1])
    return sch


class TvmGemm(Anchor):
    def __init__(self, version, a, b):
        import numpy as np
        import tvm

        if version not in TVM_VERSIONS:
            raise ValueError(f"unknown TVM version `{version}` (one of {TVM_VERSIONS})")
        m, k = a.shape
        n = b.shape[1]
        if m % BN or n % BN or k % KFACTOR:
            raise ValueError(f"TVM's tutorial schedules need m, n divisible by {BN} and k by "
                             f"{KFACTOR}; got m={m} n={n} k={k}")
        target = tvm_target()
        t0 = time.perf_counter()
        lib = tvm.compile(tvm_schedule(version, m, n, k).mod, target=tvm.target.Target(target))
        compile_s = time.perf_counter() - t0
        dev = tvm.cpu()
        self.a = tvm.runtime.tensor(a, dev)
        self.b = tvm.runtime.tensor(b, dev)
        self.c = tvm.runtime.tensor(np.zeros((m, n), dtype=np.float32), dev)
        self.f = lib["main"]
        self.info = {"tvm_target": target, "compile_s": round(compile_s, 3),
                     "tvm_num_threads": tvm.runtime.num_threads()}

    def call(self):
        self.f(self.a, self.b, self.c)

    def result(self):
        return self.c.numpy()


HALIDE_PIPELINES = ["box_f32", "binomial_f32", "binomial_u16"]
HALIDE_SCHEDULES = ["root", "inline", "sliding_window", "root_vec_par", "inline_vec_par",
                    "tiled_v8", "tiled_v16", "strip_slide_v16"]


def halide_pipeline(pipeline, schedule, inbuf, halo=False):
    """blur_y of the separable blur on `inbuf` (clamped, or read as it is when it carries
    its border: `halo`), scheduled as `schedule` (Halide's 3x3 blur schedules)."""
    import halide as hl

    x, y, xi, yi = hl.Var("x"), hl.Var("y"), hl.Var("xi"), hl.Var("yi")
    clamped = inbuf if halo else hl.BoundaryConditions.repeat_edge(inbuf)
    blur_x, blur_y = hl.Func("blur_x"), hl.Func("blur_y")
    if pipeline == "box_f32":
        third = hl.f32(1.0 / 3.0)
        blur_x[x, y] = (clamped[x - 1, y] + clamped[x, y] + clamped[x + 1, y]) * third
        blur_y[x, y] = (blur_x[x, y - 1] + blur_x[x, y] + blur_x[x, y + 1]) * third
    elif pipeline == "binomial_f32":
        blur_x[x, y] = (clamped[x - 1, y] + 2.0 * clamped[x, y] + clamped[x + 1, y]) * 0.25
        blur_y[x, y] = (blur_x[x, y - 1] + 2.0 * blur_x[x, y] + blur_x[x, y + 1]) * 0.25
    elif pipeline == "binomial_u16":
        u16 = hl.UInt(16)
        two = hl.cast(u16, 2)
        blur_x[x, y] = clamped[x - 1, y] + two * clamped[x, y] + clamped[x + 1, y]
        blur_y[x, y] = (blur_x[x, y - 1] + two * blur_x[x, y] + blur_x[x, y + 1]
                        + hl.cast(u16, 8)) >> hl.cast(u16, 4)
    else:
        raise ValueError(f"unknown Halide pipeline `{pipeline}` (one of {HALIDE_PIPELINES})")

    if schedule == "root":
        blur_x.compute_root()
    elif schedule == "inline":
        pass
    elif schedule == "sliding_window":
        blur_x.store_root().compute_at(blur_y, y)
    elif schedule == "root_vec_par":
        blur_x.compute_root().vectorize(x, 16).parallel(y)
        blur_y.vectorize(x, 16).parallel(y)
    elif schedule == "inline_vec_par":
        blur_y.vectorize(x, 16).parallel(y)
    elif schedule == "strip_slide_v16":
        blur_y.split(y, y, yi, 32).parallel(y).vectorize(x, 16)
        blur_x.store_at(blur_y, y).compute_at(blur_y, x).vectorize(x, 16)
    elif schedule in ("tiled_v8", "tiled_v16"):
        v = 8 if schedule == "tiled_v8" else 16
        blur_y.tile(x, y, xi, yi, 256, 32).vectorize(xi, v).parallel(y)
        blur_x.compute_at(blur_y, x).vectorize(x, v)
    else:
        raise ValueError(f"unknown Halide schedule `{schedule}` (one of {HALIDE_SCHEDULES})")
    return blur_y


class HalideBlur(Anchor):
    def __init__(self, pipeline, schedule, img, halo=False):
        import halide as hl
        import numpy as np

        want = np.uint16 if pipeline == "binomial_u16" else np.float32
        if img.dtype != want:
            raise ValueError(f"{pipeline} takes {np.dtype(want).name} input, got {img.dtype}")
        self.img = np.ascontiguousarray(img)
        self.inbuf = hl.Buffer(self.img)  # numpy (rows, cols) -> Halide (x = cols, y = rows)
        if halo:
            self.inbuf.set_min([-1, -1])
        self.f = halide_pipeline(pipeline, schedule, self.inbuf, halo)
        target = hl.get_jit_target_from_environment()
        t0 = time.perf_counter()
        self.f.compile_jit(target)
        compile_s = time.perf_counter() - t0
        htype = hl.UInt(16) if pipeline == "binomial_u16" else hl.Float(32)
        rows, cols = img.shape
        if halo:
            rows, cols = rows - 2, cols - 2
        self.out = hl.Buffer(htype, [cols, rows])
        self.info = {"halide_target": str(target), "compile_s": round(compile_s, 3),
                     "hl_num_threads": os.environ.get("HL_NUM_THREADS")}

    def call(self):
        self.f.realize(self.out)

    def result(self):
        import numpy as np

        return np.array(self.out)


class NumpyBlur5x5U8(Anchor):
    def __init__(self, img):
        import numpy as np

        if img.dtype != np.uint8:
            raise ValueError(f"numpy_blur5x5_u8 takes uint8 input, got {img.dtype}")
        self.img = img
        self.call()

    def call(self):
        import numpy as np

        self.out = blur5x5_u8(self.img.astype(np.uint16)).astype(np.uint8)

    def result(self):
        return self.out


class HalideAdams2019Blur5x5U8(Anchor):
    def __init__(self, img):
        import halide as hl
        import numpy as np

        if img.dtype != np.uint8:
            raise ValueError(f"halide_adams2019:blur5x5_u8 takes uint8 input, got {img.dtype}")
        plugin = os.path.join(os.path.dirname(hl.__file__), "lib64",
                              "libautoschedule_adams2019.so")
        hl.load_plugin(plugin)
        self.img = np.ascontiguousarray(img)
        self.inbuf = hl.Buffer(self.img)  # numpy (rows, cols) -> Halide (x = cols, y = rows)
        rows, cols = img.shape
        x, y = hl.Var("x"), hl.Var("y")
        clamped = hl.BoundaryConditions.repeat_edge(self.inbuf)
        u16 = hl.UInt(16)
        total = hl.cast(u16, 0)
        for a, wa in enumerate(BLUR5_TAPS):
            for b, wb in enumerate(BLUR5_TAPS):
                total = total + hl.cast(u16, wa * wb) * hl.cast(u16, clamped[x + b - 2, y + a - 2])
        blur = hl.Func("blur5x5")
        blur[x, y] = hl.cast(hl.UInt(8), (total + hl.cast(u16, 128)) >> hl.cast(u16, 8))
        blur.set_estimates([(0, cols), (0, rows)])
        self.pipeline = hl.Pipeline(blur)
        target = hl.get_jit_target_from_environment()
        threads = os.environ.get("HL_NUM_THREADS") or str(os.cpu_count())
        t0 = time.perf_counter()
        self.pipeline.apply_autoscheduler(
            target, hl.AutoschedulerParams("Adams2019", {"parallelism": threads}))
        self.pipeline.compile_jit(target)
        self.out = hl.Buffer(hl.UInt(8), [cols, rows])
        self.info = {"halide_target": str(target), "autoscheduler": "Adams2019",
                     "parallelism": threads,
                     "compile_s": round(time.perf_counter() - t0, 3)}

    def call(self):
        self.pipeline.realize(self.out)

    def result(self):
        import numpy as np

        return np.array(self.out)


def random_inputs(anchor, nats, seed=0):
    """Inputs for an anchor that has no shine inputs to share (e.g. u16 blur)."""
    import numpy as np

    rng = np.random.default_rng(seed)
    if anchor.startswith("halide_blur"):
        border = 2 if anchor.startswith("halide_blur_halo:") else 0
        shape = (int(nats["n"]) + border, int(nats["m"]) + border)
        if anchor.split(":")[1] == "binomial_u16":
            return [rng.integers(0, 4096, size=shape, dtype=np.uint16)]  # 12-bit data
        return [rng.uniform(-1, 1, size=shape).astype(np.float32)]
    m, n, k = int(nats["m"]), int(nats["n"]), int(nats["k"])
    return [rng.uniform(-1, 1, (m, k)).astype(np.float32),
            rng.uniform(-1, 1, (k, n)).astype(np.float32)]


class NumpyExpr(Anchor):
    def __init__(self, expr, inputs):
        self.expr, self.inputs = expr, inputs
        self.out = numpy_expr(expr, inputs)

    def call(self):
        self.out = numpy_expr(self.expr, self.inputs)

    def result(self):
        return self.out


def make_anchor(name, inputs):
    if name.startswith(NUMPY_EXPR):
        return NumpyExpr(name[len(NUMPY_EXPR):], inputs)
    parts = name.split(":")
    if parts == ["numpy_matmul"]:
        return NumpyMatmul(*inputs)
    if parts[0] == "tvm_gemm" and len(parts) == 2:
        return TvmGemm(parts[1], *inputs)
    if parts[0] in ("halide_blur", "halide_blur_halo") and len(parts) == 3:
        return HalideBlur(parts[1], parts[2], *inputs, halo=parts[0] == "halide_blur_halo")
    if parts == ["numpy_blur5x5_u8"]:
        return NumpyBlur5x5U8(*inputs)
    if parts == ["halide_adams2019", "blur5x5_u8"]:
        return HalideAdams2019Blur5x5U8(*inputs)
    raise ValueError(f"unknown anchor `{name}` (numpy_matmul, tvm_gemm:VERSION, "
                     "halide_blur:PIPELINE:SCHEDULE, numpy_blur5x5_u8, "
                     "halide_adams2019:blur5x5_u8, numpy_expr:EXPR)")


# --- the worker ------------------------------------------------------------------------------


def versions():
    from importlib.metadata import PackageNotFoundError, version

    out = {"python": sys.version.split()[0]}
    for pkg in ("numpy", "apache-tvm", "halide", "threadpoolctl"):
        try:
            out[pkg] = version(pkg)
        except PackageNotFoundError:
            out[pkg] = None
    return out


def thread_info():
    import numpy  # noqa: F401  (loads OpenBLAS, so threadpoolctl sees it)

    env = {k: os.environ.get(k) for k in
           ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "TVM_NUM_THREADS", "HL_NUM_THREADS")}
    pools = []
    try:
        from threadpoolctl import threadpool_info

        for p in threadpool_info():
            pools.append({k: p.get(k) for k in
                          ("internal_api", "num_threads", "version", "architecture")})
    except ImportError:
        pass
    return {"env": env, "threadpools": pools}


class Worker:
    def __init__(self):
        self.anchors = {}

    def handle(self, req):
        import numpy as np

        op = req.get("op")
        if op == "hello":
            return {"versions": versions(), "threads": thread_info(), "pid": os.getpid()}
        if op == "verify":
            inputs = [np.load(p) for p in req["inputs"]]
            got = np.load(req["output"])
            ok, err, why = compare(req["reference"], inputs, got)
            return {"verified": ok, "max_abs_err": err, "why": why,
                    "reference": req["reference"]}
        if op == "prepare":
            name = req["anchor"]
            if req.get("inputs"):
                inputs = [np.load(p) for p in req["inputs"]]
            else:
                inputs = random_inputs(name, req.get("nats") or {})
            anchor = make_anchor(name, inputs)
            t0 = time.perf_counter()
            anchor.call()
            first_ms = (time.perf_counter() - t0) * 1e3
            out = {"first_ms": first_ms, "info": anchor.info}
            if req.get("reference"):
                ok, err, why = compare(req["reference"], inputs, anchor.result())
                out.update({"anchor_verified": ok, "anchor_max_abs_err": err, "why": why})
            self.anchors[req["id"]] = anchor
            return out
        if op == "time":
            anchor = self.anchors[req["id"]]
            for _ in range(int(req.get("warmup", 0))):
                anchor.call()
            samples = []
            for _ in range(int(req["runs"])):
                t0 = time.perf_counter()
                anchor.call()
                samples.append((time.perf_counter() - t0) * 1e3)
            return {"samples_ms": samples}
        if op == "release":
            self.anchors.pop(req.get("id"), None)
            return {}
        if op == "quit":
            return {}
        raise ValueError(f"unknown request `{op}`")


def main():
    # Keep stdout for the protocol; whatever a library prints goes to stderr.
    proto = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    worker = Worker()
    for line in sys.stdin:
        line = line.strip()
        if not line:
            continue
        req = {}
        try:
            req = json.loads(line)
            answer = worker.handle(req)
            answer["ok"] = True
        except Exception as e:  # noqa: BLE001  (every failure goes back as an answer)
            answer = {"ok": False, "error": f"{type(e).__name__}: {e}",
                      "traceback": traceback.format_exc(limit=4)}
        proto.write(json.dumps(answer) + "\n")
        proto.flush()
        if req.get("op") == "quit":
            break


if __name__ == "__main__":
    main()
