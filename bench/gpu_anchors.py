#!/usr/bin/env python3
"""shine's GPU kernels against the GPU anchors, side by side, in one run on a GPU machine.

Usage (scripts/gpu-bench.sh sets up OpenCL and NVRTC, builds bench/gpu_kernels.cu and calls this):

  python3 bench/gpu_anchors.py --shine PATH [--kernels PATH] [--cases bench/gpu_cases.json]
      [--case NAME]... [--quick] [--rounds R] [--runs N] [--targets cuda,opencl]
      [--add 'CASE::LABEL::PROGRAM::DEF::STRATEGY_FILE::STRATEGY']... [--json FILE]

For every case of the case file (bench/gpu_cases.json), it makes the inputs with numpy (seeded,
uniform in [-1, 1), f32, or the case's `dtype`: `float16`), writes them as .npy files and
computes the reference in float64 with
PyTorch on the GPU. Then, for `--rounds` rounds, it measures every shine program of the case on
every target and every anchor, one after the other, the order reversed every other round (ABBA):

* shine: `shine run PROG --def D --strategy S.elv --apply EXPR --target T --input X.npy...
  --bench N --json`, which reports the median of N timed runs (kernel time: CUDA events or
  OpenCL profiling events, after one untimed run); in the first round also `--output`, and the
  result is compared with the reference (relative error ||out - ref|| / ||ref||, float64);
* `cublas_sgemm` (torch.mm, TF32 off), `cublas_hgemm` (torch.mm of float16 operands with f32
  accumulation, reduced-precision reductions off; its float16 result is checked against the
  case's `anchor_tolerance`), `cublas_sgemv` (torch.mv), `cublas_sgemv_t` (torch.mv of the transpose, a view: cuBLAS's
  transposed sgemv), `torch_softmax` (torch.softmax(x, dim=1)), `torch_layer_norm`
  (torch.nn.functional.layer_norm over the last dimension, eps 1e-5), `cublas_sdot` (torch.dot),
  `torch_asum` (torch.linalg.vector_norm(x, 1): one reduction kernel, BLAS asum), `torch_sum`
  (torch.sum), `torch_cumsum` (torch.cumsum(x, 0) in the input's type),
  `cudnn_conv` (torch.nn.functional.conv2d, padding 1, NCHW, TF32 off, cudnn.benchmark on: the
  VGG cases; shine's operands are the same numbers in vgg.rise's layout, see vgg_nchw),
  `d2d_copy` (a device-to-device copy of as many elements as the case's output, `y.copy_(x)`:
  its bytes read plus written are the stencil's fewest bytes), on the case's inputs, timed with
  CUDA events around each call (3 untimed calls, then N), median;
* `cuda:KERNEL`: the hand-written CUDA kernels of bench/gpu_kernels.cu, built with nvcc by scripts/gpu-bench.sh, run as
  `gpu_kernels KERNEL SIZE N` (their own pseudo-random inputs of the case's size).

A row's figure is the median over the rounds of each round's median; TFLOP/s for cases with
`flops`, TB/s (fewest bytes: every input read once, the output written once) for cases with
`bytes`. `ratio` is the anchor's time over shine's (above 1: shine is faster). The Markdown table
goes to stdout at the end, progress to stderr; --json writes every sample.
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

TOLERANCE = {  # largest relative error ||out - ref|| / ||ref|| accepted
    "matmul": 1e-5,
    "hgemm": 1e-4,  # f16 products (exact) summed in f32 by the tensor cores, up to 8192 of them
    "mv": 1e-5,
    "mvT": 1e-4,  # a column's sum of up to 16384 products in sequence (one work-item per column)
    "softmax": 1e-5,
    "layer_norm": 1e-5,
    "dot": 1e-4,  # 2^24 products summed in f32 (partial sums, then their sum)
    "asum": 1e-4,  # likewise, absolute values
    "sum": 1e-4,  # likewise, the values themselves
    "cumsum": 1e-3,  # up to 2^28 running f32 sums (exact for int32 inputs)
    "jacobi2d5_clamped": 1e-6,
    "heat3d_clamped": 1e-6,
    "j3d7pt_clamped": 1e-6,
    "vgg_conv": 1e-5,  # up to 4,608 products per output summed in f32
}


def log(*a):
    print(*a, file=sys.stderr, flush=True)


# --- references (float64, PyTorch on the GPU) ---------------------------------------------------


def pad_edge(x, dims):
    """x with every dimension in `dims` padded by one element on each side, clamped (edge)."""
    import torch

    for d in dims:
        first = x.narrow(d, 0, 1)
        last = x.narrow(d, x.shape[d] - 1, 1)
        x = torch.cat([first, x, last], dim=d)
    return x


def reference(name, xs):
    """The reference result of `name` on the float64 GPU tensors `xs`."""
    import torch

    if name in ("matmul", "hgemm"):
        return xs[0] @ xs[1]
    if name == "mv":
        return xs[0] @ xs[1]
    if name == "mvT":
        return xs[0].t() @ xs[1]
    if name == "softmax":
        return torch.softmax(xs[0], dim=1)
    if name == "layer_norm":
        return torch.nn.functional.layer_norm(xs[0], (xs[0].shape[1],), eps=1e-5)
    if name == "dot":
        return torch.dot(xs[0], xs[1])
    if name == "asum":
        return torch.sum(torch.abs(xs[0]))
    if name == "sum":
        return torch.sum(xs[0])
    if name == "cumsum":
        return torch.cumsum(xs[0], 0)
    if name == "jacobi2d5_clamped":
        p = pad_edge(xs[0], [0, 1])
        return 0.2 * (p[:-2, 1:-1] + p[1:-1, :-2] + p[1:-1, 1:-1] + p[1:-1, 2:] + p[2:, 1:-1])
    if name == "heat3d_clamped":
        p = pad_edge(xs[0], [0, 1, 2])
        c = p[1:-1, 1:-1, 1:-1]
        s = (p[:-2, 1:-1, 1:-1] + p[2:, 1:-1, 1:-1] + p[1:-1, :-2, 1:-1] + p[1:-1, 2:, 1:-1]
             + p[1:-1, 1:-1, :-2] + p[1:-1, 1:-1, 2:])
        return 0.125 * s + 0.25 * c
    if name == "j3d7pt_clamped":
        # stencils.rise's j3d7ptClamped: E/W along the innermost axis, S/N the middle one,
        # B/F the outermost (the weights of the PPCG Jacobi 3-D 7 pt)
        p = pad_edge(xs[0], [0, 1, 2])
        return (0.161 * p[1:-1, 1:-1, 2:] + 0.162 * p[1:-1, 1:-1, :-2]
                + 0.163 * p[1:-1, 2:, 1:-1] + 0.164 * p[1:-1, :-2, 1:-1]
                + 0.165 * p[2:, 1:-1, 1:-1] + 0.166 * p[:-2, 1:-1, 1:-1]
                - 1.67 * p[1:-1, 1:-1, 1:-1])
    if name == "vgg_conv":
        x, w = vgg_nchw(xs)
        return vgg_hwc(torch.nn.functional.conv2d(x, w, padding=1))
    raise ValueError(f"unknown reference `{name}`")


def vgg_nchw(xs):
    """vgg.rise's operands (the input padded h+2 x w+2 x c with a zero border, the
    kernels HWIO as a (3*3*c) x o matrix) as PyTorch's: the unpadded 1 x c x h x w input
    and o x c x 3 x 3 kernels."""
    x, w = xs
    c = x.shape[2]
    return (x[1:-1, 1:-1, :].permute(2, 0, 1).unsqueeze(0).contiguous(),
            w.reshape(3, 3, c, w.shape[1]).permute(3, 2, 0, 1).contiguous())


def vgg_hwc(y):
    """PyTorch's 1 x o x h x w result as vgg.rise's (h*w) x o."""
    return y[0].permute(1, 2, 0).reshape(-1, y.shape[1])


def relative_error(got, ref):
    import torch

    got = got.to(torch.float64)
    if not torch.isfinite(got).all():
        return float("inf")
    den = torch.linalg.vector_norm(ref).item()
    num = torch.linalg.vector_norm(got - ref).item()
    return num / den if den > 0 else num


# --- timing -------------------------------------------------------------------------------------


def median(xs):
    s = sorted(xs)
    n = len(s)
    return s[n // 2] if n % 2 else 0.5 * (s[n // 2 - 1] + s[n // 2])


def torch_time(f, runs, warmup=3):
    """Milliseconds of each of `runs` calls of f, timed with CUDA events, after `warmup` calls."""
    import torch

    for _ in range(warmup):
        f()
    torch.cuda.synchronize()
    out = []
    for _ in range(runs):
        s = torch.cuda.Event(enable_timing=True)
        e = torch.cuda.Event(enable_timing=True)
        s.record()
        f()
        e.record()
        e.synchronize()
        out.append(s.elapsed_time(e))
    return out


class Case:
    def __init__(self, spec, tmp, args):
        import numpy as np
        import torch

        self.spec = spec
        self.name = spec["name"]
        rng = np.random.default_rng(spec.get("seed", 1))
        dtype = {"float32": np.float32, "float16": np.float16, "int32": np.int32}[
            spec.get("dtype", "float32")
        ]
        self.paths = []
        self.host = []
        for k, shape in enumerate(spec["inputs"]):
            if dtype == np.int32:  # small integers: exact sums that do not wrap
                x = rng.integers(-4, 4, size=shape).astype(dtype)
            else:
                x = rng.uniform(-1.0, 1.0, size=shape).astype(dtype)
            if k in spec.get("zero_border", []):  # a padded image: zeros around rows and columns
                x[0], x[-1], x[:, 0], x[:, -1] = 0, 0, 0, 0
            p = Path(tmp) / f"{self.name}_in{k}.npy"
            np.save(p, x)
            self.paths.append(str(p))
            self.host.append(x)
        self.dev = [torch.from_numpy(x).cuda() for x in self.host]
        with torch.no_grad():
            self.ref = reference(spec["reference"], [x.to(torch.float64) for x in self.dev])
        self.out_path = str(Path(tmp) / f"{self.name}_out.npy")
        self.tol = TOLERANCE[spec["reference"]]
        # an anchor whose result is rounded to a narrower type than shine's (cuBLAS's float16
        # product) is checked with the case's own bound
        self.anchor_tol = spec.get("anchor_tolerance", self.tol)
        self.args = args

    def figure(self, ms):
        if ms is None or ms <= 0:
            return None
        if "flops" in self.spec:
            return self.spec["flops"] / ms / 1e9  # TFLOP/s
        return self.spec["bytes"] / ms / 1e9  # TB/s

    def unit(self):
        return "TFLOP/s" if "flops" in self.spec else "TB/s"

    # -- shine --

    def shine(self, variant, target, runs, verify):
        cmd = [
            self.args.shine, "run", str(ROOT / variant["program"]), "--def", variant["def"],
            "--target", target,
        ]
        if variant.get("strategy"):
            cmd += ["--strategy", str(ROOT / variant["strategy_file"]), "--apply", variant["strategy"]]
        for p in self.paths:
            cmd += ["--input", p]
        for name, value in variant.get("nats", {}).items():  # sizes the inputs do not give
            cmd += ["--nat", f"{name}={value}"]
        cmd += ["--bench", str(runs), "--json"]
        if verify:
            cmd += ["--output", self.out_path]
        t0 = time.time()
        try:
            r = subprocess.run(cmd, capture_output=True, text=True, timeout=self.args.timeout)
        except subprocess.TimeoutExpired:
            return {"error": f"timed out after {self.args.timeout} s"}
        row = {"wall_s": round(time.time() - t0, 2)}
        if r.returncode != 0:
            row["error"] = (r.stderr.strip() or r.stdout.strip())[-600:]
            return row
        try:
            report = json.loads(r.stdout.strip().splitlines()[-1])
        except (ValueError, IndexError):
            row["error"] = f"no JSON from shine: {r.stdout[-300:]} {r.stderr[-300:]}"
            return row
        row.update(report)
        if verify:
            import numpy as np
            import torch

            got = torch.from_numpy(np.load(self.out_path)).cuda()
            if tuple(got.shape) != tuple(self.ref.shape):
                row["verified"] = False
                row["error"] = f"result shape {tuple(got.shape)}, expected {tuple(self.ref.shape)}"
            else:
                err = relative_error(got, self.ref)
                row["rel_err"] = err
                row["verified"] = err <= self.tol
            os.remove(self.out_path)
        return row

    # -- anchors --

    def anchor(self, name, runs):
        import torch

        torch.backends.cuda.matmul.allow_tf32 = False
        torch.backends.cudnn.allow_tf32 = False
        if name.startswith("cuda:"):
            if not self.args.kernels:
                return {"error": "no hand-written kernels (nvcc missing?)"}
            kernel = name.split(":", 1)[1]
            size = self.spec["inputs"][0][0]
            try:
                r = subprocess.run([self.args.kernels, kernel, str(size), str(runs)],
                                   capture_output=True, text=True, timeout=self.args.timeout)
            except subprocess.TimeoutExpired:
                return {"error": "timed out"}
            if r.returncode != 0:
                return {"error": (r.stderr + r.stdout).strip()[-400:]}
            out = json.loads(r.stdout.strip().splitlines()[-1])
            return {"median_ms": out["median_ms"], "samples_ms": out["samples_ms"]}
        with torch.no_grad():
            if name == "cublas_sgemm":
                a, b = self.dev
                c = torch.empty(a.shape[0], b.shape[1], device="cuda")
                f = lambda: torch.mm(a, b, out=c)  # noqa: E731
                check = lambda: c  # noqa: E731
            elif name == "cublas_hgemm":
                torch.backends.cuda.matmul.allow_fp16_reduced_precision_reduction = False
                a, b = self.dev
                c = torch.empty(a.shape[0], b.shape[1], device="cuda", dtype=torch.float16)
                f = lambda: torch.mm(a, b, out=c)  # noqa: E731
                check = lambda: c  # noqa: E731
            elif name == "cublas_sgemv":
                a, x = self.dev
                y = torch.empty(a.shape[0], device="cuda")
                f = lambda: torch.mv(a, x, out=y)  # noqa: E731
                check = lambda: y  # noqa: E731
            elif name == "cublas_sgemv_t":
                a, x = self.dev
                y = torch.empty(a.shape[1], device="cuda")
                f = lambda: torch.mv(a.t(), x, out=y)  # noqa: E731
                check = lambda: y  # noqa: E731
            elif name == "torch_softmax":
                (x,) = self.dev
                f = lambda: torch.softmax(x, dim=1)  # noqa: E731
                check = f
            elif name == "torch_layer_norm":
                (x,) = self.dev
                f = lambda: torch.nn.functional.layer_norm(x, (x.shape[1],), eps=1e-5)  # noqa: E731
                check = f
            elif name == "cublas_sdot":
                x, y = self.dev
                f = lambda: torch.dot(x, y)  # noqa: E731
                check = f
            elif name == "torch_asum":
                (x,) = self.dev
                f = lambda: torch.linalg.vector_norm(x, ord=1)  # noqa: E731
                check = f
            elif name == "torch_sum":
                (x,) = self.dev
                f = lambda: torch.sum(x)  # noqa: E731
                check = f
            elif name == "torch_cumsum":
                (x,) = self.dev
                f = lambda: torch.cumsum(x, 0, dtype=x.dtype)  # noqa: E731
                check = f
            elif name == "cudnn_conv":
                x, w = vgg_nchw(self.dev)
                torch.backends.cudnn.benchmark = True  # cuDNN picks its fastest algorithm
                f = lambda: torch.nn.functional.conv2d(x, w, padding=1)  # noqa: E731
                check = lambda: vgg_hwc(f())  # noqa: E731
            elif name == "d2d_copy":
                src = self.dev[0]
                dst = torch.empty_like(src)
                f = lambda: dst.copy_(src)  # noqa: E731
                check = None
            else:
                return {"error": f"unknown anchor `{name}`"}
            samples = torch_time(f, runs)
            row = {"median_ms": median(samples), "samples_ms": samples}
            if check is not None:
                row["rel_err"] = relative_error(check(), self.ref)
                row["verified"] = row["rel_err"] <= self.anchor_tol
            return row


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--shine", required=True, help="the shine binary")
    ap.add_argument("--kernels", help="bench/gpu_kernels.cu built with nvcc")
    ap.add_argument("--cases", default=str(ROOT / "bench" / "gpu_cases.json"))
    ap.add_argument("--case", action="append", default=[], help="a case name (repeatable)")
    ap.add_argument("--quick", action="store_true", help="only the quick cases, 2 rounds")
    ap.add_argument("--rounds", type=int, default=None)
    ap.add_argument("--runs", type=int, default=20, help="timed runs per measurement")
    ap.add_argument("--targets", default=None, help="override the targets (cuda,opencl)")
    ap.add_argument("--add", action="append", default=[],
                    help="an extra shine variant: CASE::LABEL::PROGRAM::DEF::STRATEGY_FILE::STRATEGY")
    ap.add_argument("--no-anchors", action="store_true")
    ap.add_argument("--timeout", type=int, default=180)
    ap.add_argument("--json", help="write every measurement here")
    args = ap.parse_args()
    rounds = args.rounds or (2 if args.quick else 3)

    import torch

    spec = json.loads(Path(args.cases).read_text())
    cases = [c for c in spec["cases"]
             if (not args.case and (c.get("quick") or not args.quick)) or c["name"] in args.case]
    for extra in args.add:
        parts = extra.split("::")
        if len(parts) != 6:
            sys.exit(f"--add needs CASE::LABEL::PROGRAM::DEF::STRATEGY_FILE::STRATEGY, not {extra}")
        for c in cases:
            if c["name"] == parts[0]:
                c["variants"].append(dict(zip(
                    ["label", "program", "def", "strategy_file", "strategy"], parts[1:])))
    env = {
        "gpu": torch.cuda.get_device_name(0),
        "torch": torch.__version__,
        "cuda": torch.version.cuda,
        "sms": torch.cuda.get_device_properties(0).multi_processor_count,
        "shine": args.shine,
        "rounds": rounds,
        "runs": args.runs,
    }
    log(f"== {env['gpu']}, torch {env['torch']} (CUDA {env['cuda']}), {rounds} rounds of {args.runs} runs")
    tmp = tempfile.mkdtemp(prefix="shine-gpu-bench-")
    results = []
    try:
        for cspec in cases:
            t0 = time.time()
            case = Case(cspec, tmp, args)
            log(f"== {cspec['title']} (inputs and reference: {time.time() - t0:.1f} s)")
            targets = args.targets.split(",") if args.targets else cspec["targets"]
            items = [
                ("shine", v, t) for v in cspec["variants"] for t in targets if t in v.get("targets", targets)
            ]
            if not args.no_anchors:
                items += [("anchor", a, None) for a in cspec["anchors"]]
            samples = {i: [] for i in range(len(items))}
            for r in range(rounds):
                order = list(range(len(items)))
                if r % 2:
                    order.reverse()
                for i in order:
                    kind, what, target = items[i]
                    label = f"shine {target} {what['label']}" if kind == "shine" else what
                    try:
                        if kind == "shine":
                            row = case.shine(what, target, args.runs, verify=(r == 0))
                        else:
                            row = case.anchor(what, args.runs)
                    except Exception as e:  # one failure must not end the whole run
                        row = {"error": f"{type(e).__name__}: {e}"}
                    samples[i].append(row)
                    ms = row.get("median_ms")
                    extra = ""
                    if "rel_err" in row:
                        extra = f", rel. error {row['rel_err']:.1e}" + ("" if row.get("verified") else " NOT VERIFIED")
                    if "error" in row:
                        log(f"   round {r + 1}: {label}: ERROR {row['error']}")
                    else:
                        fig = case.figure(ms)
                        log(f"   round {r + 1}: {label}: {ms:.4f} ms, {fig:.2f} {case.unit()}{extra}")
            for i, (kind, what, target) in enumerate(items):
                rows = samples[i]
                meds = [x["median_ms"] for x in rows if "median_ms" in x and "error" not in x]
                errors = [x["error"] for x in rows if "error" in x]
                verified = [x.get("verified") for x in rows if "verified" in x]
                results.append({
                    "case": cspec["name"],
                    "title": cspec["title"],
                    "kind": kind,
                    "target": target,
                    "label": what["label"] if kind == "shine" else what,
                    "strategy": what.get("strategy") if kind == "shine" else None,
                    "program": what.get("program") if kind == "shine" else None,
                    "def": what.get("def") if kind == "shine" else None,
                    "median_ms": median(meds) if meds else None,
                    "round_medians_ms": meds,
                    "figure": case.figure(median(meds)) if meds else None,
                    "unit": case.unit(),
                    "verified": all(verified) if verified else None,
                    "rel_err": max((x["rel_err"] for x in rows if "rel_err" in x), default=None),
                    "errors": errors,
                    "rounds": rows,
                })
            del case
            torch.cuda.empty_cache()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)

    print(table(results))
    if args.json:
        Path(args.json).write_text(json.dumps({"env": env, "results": results}, indent=1))
        log(f"wrote {args.json}")
    bad = [r for r in results if r["errors"] or r["verified"] is False]
    return 1 if bad else 0


def fmt(x, digits=3):
    return "—" if x is None else f"{x:.{digits}f}"


def table(results):
    """Markdown: one row per shine program and target against each anchor of its case."""
    lines = [
        "| case | shine (target, strategy) | shine ms | shine figure | verified | anchor | anchor ms | anchor figure | ratio |",
        "| --- | --- | ---: | ---: | --- | --- | ---: | ---: | ---: |",
    ]
    by_case = {}
    for r in results:
        by_case.setdefault(r["case"], []).append(r)
    for rows in by_case.values():
        shine = [r for r in rows if r["kind"] == "shine"]
        anchors = [r for r in rows if r["kind"] == "anchor"] or [None]
        for s in shine:
            if s["verified"] is None:
                ver = "—"
            elif s["verified"]:
                ver = f"yes ({s['rel_err']:.0e})" if s["rel_err"] is not None else "yes"
            else:
                ver = "NO"
            if s["errors"] and s["median_ms"] is None:
                ver = "error: " + s["errors"][0].splitlines()[0][:80]
            for a in anchors:
                ratio = (a["median_ms"] / s["median_ms"]
                         if a and a["median_ms"] and s["median_ms"] else None)
                lines.append(
                    f"| {s['title']} | {s['target']} `{s['label']}` | {fmt(s['median_ms'])} | "
                    f"{fmt(s['figure'], 2)} {s['unit']} | {ver} | "
                    f"{a['label'] if a else '—'} | {fmt(a['median_ms'] if a else None)} | "
                    f"{fmt(a['figure'] if a else None, 2)} {s['unit']} | {fmt(ratio, 2)} |"
                )
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
