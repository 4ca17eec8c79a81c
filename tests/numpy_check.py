#!/usr/bin/env python3
"""Checks `shine eval` on every example program against independent NumPy code.

Usage: python3 tests/numpy_check.py PATH_TO_SHINE

For every definition that `shine check` lists in examples/*.rise, this script
generates random inputs (fixed seeds, several shapes each, including
non-square and degenerate ones), writes them as .npy files, runs
`shine eval PROG --def NAME --input ... --output out.npy` and compares the
result with a reference written directly from the mathematics of the
definition (np.dot, a @ b, np.pad + shifted slices, explicit loops), not by
translating the RISE program. Every definition must have a reference here:
a definition without one is reported as a failure, so that new examples get
checked.

A reference that returns a tuple is a definition whose result is a tuple of
arrays: shine writes it as one .npz (`--output out.npz`, members 0.npy, 1.npy,
...) and each member is compared. Arrays of tuples go in as numpy structured
arrays (or with one more axis for the components) and come out as structured
arrays (fields f0, f1), compared field by field.

Prints one line per case (`ok  NAME SHAPE` or `FAIL NAME SHAPE: why`) and
exits with status 1 if any case fails or any shine call fails.
Only numpy and the standard library are used.
"""

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

RTOL = 1e-4
ATOL = 1e-5
ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"
F32 = np.float32


def rand(rng, *shape):
    """Random f32 data in [-2, 2): an array, or a 0-d array for a scalar."""
    return rng.uniform(-2.0, 2.0, size=shape).astype(F32)


def scalar(rng):
    return F32(rng.uniform(-2.0, 2.0))


def f64(x):
    return np.asarray(x, dtype=np.float64)


# --- References, written from the mathematics --------------------------------


def ref_dot(x, y):
    return np.dot(f64(x), f64(y))


def ref_scal(alpha, x):
    return f64(alpha) * f64(x)


def ref_abs(x):
    return np.abs(f64(x))


def ref_asum(x):
    return np.abs(f64(x)).sum()


def ref_gemv(a, x, y, alpha, beta):
    return f64(alpha) * (f64(a) @ f64(x)) + f64(beta) * f64(y)


def ref_mv(a, x):
    return f64(a) @ f64(x)


def ref_mm(a, b):
    return f64(a) @ f64(b)


def ref_jacobi3(x):
    p = np.pad(f64(x), 1, mode="edge")
    return p[:-2] + p[1:-1] + p[2:]


def ref_jacobi2d5(g):
    p = np.pad(f64(g), 1, mode="edge")
    c = p[1:-1, 1:-1]
    return 0.2 * (c + p[:-2, 1:-1] + p[2:, 1:-1] + p[1:-1, :-2] + p[1:-1, 2:])


def window_filter(img, weights, mode):
    """out[i, j] = sum(padded[i:i+k, j:j+k] * weights), by explicit loops."""
    k = weights.shape[0]
    r = k // 2
    p = np.pad(f64(img), r, mode=mode)
    n, m = img.shape
    out = np.empty((n, m))
    for i in range(n):
        for j in range(m):
            out[i, j] = np.sum(p[i : i + k, j : j + k] * weights)
    return out


def ref_jacobi2d9(g):
    return window_filter(g, np.full((3, 3), 1.0 / 9.0), "constant")


def ref_box_blur(img):
    return window_filter(img, np.full((3, 3), 1.0 / 9.0), "edge")


def ref_binomial(img):
    v = np.array([1.0, 2.0, 1.0])
    return window_filter(img, np.outer(v, v) / 16.0, "edge")


def ref_gaussian5(img):
    v = np.array([1.0, 4.0, 6.0, 4.0, 1.0])
    return window_filter(img, np.outer(v, v) / 256.0, "edge")


def ref_weights2d(w):
    return np.outer(f64(w), f64(w))


def face_sum(p):
    """The sum of the six face neighbours of every interior point of a padded 3-D grid."""
    return (
        p[:-2, 1:-1, 1:-1]
        + p[2:, 1:-1, 1:-1]
        + p[1:-1, :-2, 1:-1]
        + p[1:-1, 2:, 1:-1]
        + p[1:-1, 1:-1, :-2]
        + p[1:-1, 1:-1, 2:]
    )


def ref_heat3d(g):
    p = np.pad(f64(g), 1, mode="edge")
    return 0.125 * face_sum(p) + 0.25 * f64(g)


def ref_sum6(nbh):
    n = f64(nbh)
    return n[0, 1, 1] + n[2, 1, 1] + n[1, 0, 1] + n[1, 2, 1] + n[1, 1, 0] + n[1, 1, 2]


def ref_get_cf(neighbours, loss):
    return f64(loss) if neighbours < 6.0 else 1.0


def ref_acoustic(prev, cur):
    """One time step of the wave equation; at walls (fewer than 6 in-room
    neighbours) the loss coefficients 0.999 and 1.001 apply."""
    prev, cur = f64(prev), f64(cur)
    neighbours = face_sum(np.pad(np.ones_like(cur), 1, mode="constant"))
    at_wall = neighbours < 6.0
    cf1 = np.where(at_wall, 0.999, 1.0)
    cf2 = np.where(at_wall, 1.001, 1.0)
    lap = face_sum(np.pad(cur, 1, mode="constant"))
    return cf1 * ((2.0 - 0.3 * neighbours) * cur + 0.3 * lap - cf2 * prev)


def ref_conv(inp, ker):
    """out[i, j, q] = sum over the kh x kw x c window at (i, j) times kernel q."""
    h, w, _c = inp.shape
    o, kh, kw, _ = ker.shape
    inp, ker = f64(inp), f64(ker)
    out = np.empty((h - kh + 1, w - kw + 1, o))
    for i in range(h - kh + 1):
        for j in range(w - kw + 1):
            for q in range(o):
                out[i, j, q] = np.sum(inp[i : i + kh, j : j + kw, :] * ker[q])
    return out


def ref_bicg(a, r, p):
    """PolyBench bicg: s = A^T r and q = A p."""
    return (f64(a).T @ f64(r), f64(a) @ f64(p))


COMPLEX = np.dtype([("re", "<f4"), ("im", "<f4")])


def as_complex(x):
    """A structured (re, im) array or an n x 2 array as complex128."""
    if x.dtype.names:
        re, im = (x[name] for name in x.dtype.names)
    else:
        re, im = x[..., 0], x[..., 1]
    return f64(re) + 1j * f64(im)


def from_complex(z):
    """Complex numbers as the n x 2 float64 array of their (re, im) components."""
    return np.stack([z.real, z.imag], axis=-1)


def ref_cmul(x, y):
    return from_complex(as_complex(x) * as_complex(y))


def ref_cabs2(x):
    return np.abs(as_complex(x)) ** 2


# --- Cases --------------------------------------------------------------------
#
# A case is (label, inputs, nats): the inputs in the order of the definition's
# value parameters, and --nat bindings to pass (consistent with the inputs).


def cases_dot(rng):
    for n in (1, 5, 17, 64, 0):
        yield f"n={n}", [rand(rng, n), rand(rng, n)], {}
    yield "n=9 --nat n=9", [rand(rng, 9), rand(rng, 9)], {"n": 9}


def cases_scal(rng):
    for n in (1, 7, 33):
        yield f"n={n}", [scalar(rng), rand(rng, n)], {}
    yield "alpha=0", [F32(0.0), rand(rng, 4)], {}


def cases_abs(rng):
    for v in (-1.5, 0.0, 2.25, float(scalar(rng))):
        yield f"x={v:g}", [F32(v)], {}


def cases_asum(rng):
    for n in (1, 6, 50, 0):
        yield f"n={n}", [rand(rng, n)], {}


def cases_gemv(rng):
    for n, m in ((1, 1), (3, 5), (6, 2), (8, 8)):
        yield f"{n}x{m}", [rand(rng, n, m), rand(rng, m), rand(rng, n), scalar(rng), scalar(rng)], {}


def cases_treesum(group):
    def cases(rng):
        for m in (1, 3, 8):
            yield f"m={m}", [rand(rng, m * group)], {}
    return cases


def ref_group_sum(x, group):
    return f64(x).reshape(-1, group).sum(axis=1)


def cases_dot_f16(rng):
    for n in (1, 5, 17, 0):
        yield f"n={n}", [rand(rng, n).astype(np.float16), rand(rng, n).astype(np.float16)], {}


def bf16_bits(x):
    """bfloat16 bit patterns (the .npy form of bf16) of f32 values, truncated."""
    return (np.asarray(x, dtype=F32).view(np.uint32) >> 16).astype(np.uint16)


def bf16_values(bits):
    return (bits.astype(np.uint32) << 16).view(F32)


def cases_mm_16(to16):
    def cases(rng):
        for m, n, k in ((5, 7, 3), (1, 1, 1), (2, 9, 6)):
            yield f"m={m} n={n} k={k}", [to16(rand(rng, m, k)), to16(rand(rng, k, n))], {}
    return cases


def cases_mv(rng):
    for n, m in ((1, 4), (3, 5), (6, 2), (7, 7)):
        yield f"{n}x{m}", [rand(rng, n, m), rand(rng, m)], {}


def cases_mvT(rng):
    for m, n in ((1, 4), (3, 5), (6, 2), (7, 7)):
        yield f"{m}x{n}", [rand(rng, m, n), rand(rng, m)], {}


def cases_mm(rng):
    for m, n, k in ((5, 7, 3), (1, 1, 1), (4, 4, 4), (2, 9, 6), (8, 3, 1), (3, 3, 0)):
        yield f"m={m} n={n} k={k}", [rand(rng, m, k), rand(rng, k, n)], {}
    yield "m=3 n=2 k=4 --nat", [rand(rng, 3, 4), rand(rng, 4, 2)], {"m": 3, "n": 2, "k": 4}


def cases_jacobi3(rng):
    for n in (1, 2, 3, 10):
        yield f"n={n}", [rand(rng, n)], {}


def cases_2d(shapes):
    def cases(rng):
        for n, m in shapes:
            yield f"{n}x{m}", [rand(rng, n, m)], {}

    return cases


CASES_2D = cases_2d(((1, 1), (2, 3), (5, 8), (9, 4)))


def cases_weights2d(rng):
    for n in (1, 3, 5):
        yield f"n={n}", [rand(rng, n)], {}


def cases_3d(shapes, arity):
    def cases(rng):
        for shape in shapes:
            label = "x".join(map(str, shape))
            yield label, [rand(rng, *shape) for _ in range(arity)], {}

    return cases


def cases_sum6(rng):
    yield "3x3x3", [rand(rng, 3, 3, 3)], {}
    yield "4x3x5", [rand(rng, 4, 3, 5)], {}


def cases_get_cf(rng):
    for neighbours in (3.0, 5.0, 6.0):
        yield f"neighbours={neighbours:g}", [F32(neighbours), scalar(rng)], {}


def cases_conv(rng):
    # (h, w, c, o, kh, kw)
    for h, w, c, o, kh, kw in (
        (5, 6, 2, 3, 3, 2),
        (4, 4, 1, 1, 1, 1),
        (6, 5, 3, 2, 3, 3),
        (3, 7, 2, 4, 3, 1),
        (3, 3, 2, 2, 3, 3),
    ):
        label = f"in={h}x{w}x{c} k={o}x{kh}x{kw}"
        yield label, [rand(rng, h, w, c), rand(rng, o, kh, kw, c)], {}
    yield "in=4x5x2 k=2x2x3 --nat", [rand(rng, 4, 5, 2), rand(rng, 2, 2, 3, 2)], {
        "h": 4,
        "w": 5,
        "c": 2,
        "o": 2,
        "kh": 2,
        "kw": 3,
    }


def cases_window3(rng):
    for _ in range(3):
        yield "n=3", [rand(rng, 3)], {}


def ref_sep(img, w):
    """Separable 3-tap filter on an image that carries its border: rows, then columns."""
    a = f64(img)
    bx = w[0] * a[:, :-2] + w[1] * a[:, 1:-1] + w[2] * a[:, 2:]
    return w[0] * bx[:-2] + w[1] * bx[1:-1] + w[2] * bx[2:]


def cases_u16(shapes):
    def cases(rng):
        for shape in shapes:
            yield "x".join(map(str, shape)), [rng.integers(0, 4096, size=shape).astype(np.uint16)], {}
    return cases


def ref_binomial_u16(img):
    # the weighted sums of 12-bit data are integers below 2^53: exact in float64
    return ((ref_sep(img, (1, 2, 1)) + 8) // 16).astype(np.uint16)


BINOMIAL3 = (0.25, 0.5, 0.25)
BOX3 = (1 / 3, 1 / 3, 1 / 3)


def cases_chunks(arity):
    def cases(rng):
        for n in (1, 3):
            yield f"n={n}", [rand(rng, n * 256) for _ in range(arity)], {}
    return cases


def cases_mm_tiled(rng):
    for m, n, k in ((1, 1, 1), (2, 1, 3)):
        yield f"m={m} n={n} k={k}", [rand(rng, m * 64, k * 8), rand(rng, k * 8, n * 64)], {}


def cases_scale2d(rng):
    for n, m in ((1, 1), (3, 5), (8, 2)):
        yield f"{n}x{m}", [scalar(rng), rand(rng, n, m)], {}


def cases_listing3(rng):
    for n in (1, 2, 5):
        yield f"n={n}", [scalar(rng), scalar(rng), rand(rng, n * 8)], {}


def cases_vgg(rng):
    for h, w, c, o in ((1, 1, 1, 1), (3, 5, 2, 4), (6, 4, 3, 2)):
        yield f"{h}x{w}x{c} o={o}", [rand(rng, h + 2, w + 2, c), rand(rng, o, 3, 3, c)], {}


def cases_vgg_gemm(chunks):
    """vggGemm's operands (kernels HWIO as a (3*3*c) x o matrix); with `s` chunks."""

    def cases(rng):
        for h, w, c, o in ((1, 1, 1, 1), (3, 5, 2, 4), (6, 4, 3, 2)):
            nats = {"s": chunks} if chunks else {}
            yield f"{h}x{w}x{c} o={o}", [rand(rng, h + 2, w + 2, c), rand(rng, 9 * c, o)], nats

    return cases


def ref_vgg_gemm(inp, weights):
    c = inp.shape[2]
    ker = f64(weights).reshape(3, 3, c, -1).transpose(3, 0, 1, 2)
    out = ref_conv(inp, ker)
    return out.reshape(-1, out.shape[2])


def cases_none(rng):
    yield "no inputs", [], {}


def cases_bicg(rng):
    for n, m in ((1, 1), (3, 5), (6, 2), (8, 8), (4, 0)):
        yield f"{n}x{m}", [rand(rng, n, m), rand(rng, n), rand(rng, m)], {}


def complex_array(rng, n, structured):
    """n random complex numbers: a structured array of two float32 fields, or n x 2 float32."""
    parts = rand(rng, n, 2)
    if not structured:
        return parts
    x = np.empty(n, dtype=COMPLEX)
    x["re"], x["im"] = parts[:, 0], parts[:, 1]
    return x


def cases_complex(arity):
    def cases(rng):
        for n in (1, 4, 17, 0):
            yield f"n={n} structured", [complex_array(rng, n, True) for _ in range(arity)], {}
        yield "n=5 n x 2", [complex_array(rng, 5, False) for _ in range(arity)], {}
        if arity == 2:
            yield "n=3 mixed", [complex_array(rng, 3, True), complex_array(rng, 3, False)], {}
    return cases


def cases_lookup(rng):
    for m, n, dtype in ((5, 3, np.int64), (7, 10, np.uint8), (1, 1, np.int32), (0, 4, np.int16)):
        idx = rng.integers(0, n, size=m).astype(dtype)
        yield f"m={m} n={n} {np.dtype(dtype).name}", [idx, rand(rng, n)], {}


def cases_clamp(rng):
    for n in (1, 9, 40, 0):
        yield f"n={n}", [(rand(rng, n) * 3).astype(F32)], {}


def ints(rng, n):
    return (rng.integers(1, 7, size=n) * 6 * rng.choice([-1, 1], size=n)).astype(np.int32)


def cases_gcd(rng):
    for n in (1, 5, 30, 0):
        yield f"n={n}", [ints(rng, n)], {}


def cases_gcd_partial(rng):
    for n in (1, 2):
        yield f"n={n}", [ints(rng, n * 256)], {}


def ref_gcd_all(xs):
    return np.int32(np.gcd.reduce(np.abs(xs)) if len(xs) else 0)


def ref_gcd_partial(xs):
    parts = [ref_gcd_all(np.minimum(np.abs(c), 1000)) for c in xs.reshape(-1, 256)]
    return np.array(parts, dtype=np.int32)


def cases_permutation(rng):
    for n in (1, 2, 9, 0):
        yield f"n={n}", [rng.permutation(n).astype(np.int32), rand(rng, n)], {}


def ref_place(idx, x):
    out = np.zeros(x.shape)
    out[idx.astype(np.int64)] = f64(x)
    return out


def cases_permutation_rows(rng):
    for n, m in ((1, 1), (3, 2), (5, 4), (0, 3)):
        yield f"n={n} m={m}", [rng.permutation(n).astype(np.int32), rand(rng, n, m)], {}


def cases_gather(rng):
    for m, n in ((5, 3), (1, 1), (12, 7), (0, 4)):
        yield f"m={m} n={n}", [rng.integers(0, n, size=m).astype(np.int32), rand(rng, n)], {}


def cases_spmv(rng):
    for n, m, k in ((3, 4, 2), (1, 1, 1), (6, 9, 3)):
        cols = rng.integers(0, m, size=(n, k)).astype(np.int32)
        yield f"n={n} m={m} k={k}", [cols, rand(rng, n, k), rand(rng, m)], {}


def ref_spmv(cols, vals, x):
    return (f64(vals) * f64(x)[cols.astype(np.int64)]).sum(axis=1)


def cases_pick(rng):
    for m, n in ((5, 3), (1, 1), (8, 20)):
        yield f"m={m} n={n}", [rng.integers(0, n, size=m).astype(np.int32), rand(rng, n)], {}


def cases_vec4(arity):
    def cases(rng):
        for n in (1, 3, 0):
            yield f"n={n}", [rand(rng, 4 * n) * 4 - 2 for _ in range(arity)], {}
    return cases


def ref_polar(x, y):
    """(angle, length) pairs as an n x 2 array (how compare takes arrays of tuples)."""
    x, y = f64(x), f64(y)
    return np.stack([np.arctan2(y, x), np.sqrt(x * x + y * y)], axis=-1)


def cases_l1(rng):
    for n in (1, 6, 0):
        yield f"n={n}", [ints(rng, n), ints(rng, n)], {}


# name -> (cases, reference). A reference takes the inputs (or nothing) and
# returns the expected value as a float64 array or scalar.
REFERENCES = {
    "dot": (cases_dot, ref_dot),
    "scale2d": (cases_scale2d, lambda a, m: f64(a) * f64(m)),
    "listing3": (cases_listing3, lambda y, z, xs: f64(xs) * f64(y) + f64(z)),
    "scal": (cases_scal, ref_scal),
    "abs": (cases_abs, ref_abs),
    "asum": (cases_asum, ref_asum),
    "clampAll": (cases_clamp, lambda xs: np.clip(f64(xs), 0.0, 1.0)),
    "clampedSum": (cases_clamp, lambda xs: np.clip(f64(xs), -1.0, 1.0).sum()),
    "gcdAll": (cases_gcd, ref_gcd_all),
    "gcdPartial": (cases_gcd_partial, ref_gcd_partial),
    "gemv": (cases_gemv, ref_gemv),
    "mv": (cases_mv, ref_mv),
    "mvT": (cases_mvT, lambda a, x: f64(a).T @ f64(x)),
    "mm": (cases_mm, ref_mm),
    "jacobi3": (cases_jacobi3, ref_jacobi3),
    "jacobi2d5": (CASES_2D, ref_jacobi2d5),
    "jacobi2d9": (CASES_2D, ref_jacobi2d9),
    "weights2d": (cases_weights2d, ref_weights2d),
    "gaussian5": (cases_2d(((1, 1), (3, 2), (6, 9), (7, 5))), ref_gaussian5),
    "binomialWeights": (cases_none, lambda: np.array([1.0, 2.0, 1.0])),
    "binomial": (CASES_2D, ref_binomial),
    "boxBlur": (CASES_2D, ref_box_blur),
    "heat3d": (cases_3d(((1, 1, 1), (2, 3, 4), (5, 4, 3)), 1), ref_heat3d),
    "sum6": (cases_sum6, ref_sum6),
    "getCF": (cases_get_cf, ref_get_cf),
    "acoustic": (cases_3d(((1, 1, 1), (2, 3, 4), (4, 5, 3), (4, 5, 6)), 2), ref_acoustic),
    "conv": (cases_conv, ref_conv),
    "vggConv": (cases_vgg, ref_conv),
    "vggGemm": (cases_vgg_gemm(None), ref_vgg_gemm),
    "vggGemmSplitK": (cases_vgg_gemm(3), ref_vgg_gemm),
    "binomial3": (cases_window3, lambda w: f64(w) @ np.array(BINOMIAL3)),
    "box3": (cases_window3, lambda w: f64(w) @ np.array(BOX3)),
    "binomialSep": (cases_2d(((3, 3), (4, 7), (10, 6))), lambda x: ref_sep(x, BINOMIAL3)),
    "boxSep": (cases_2d(((3, 3), (4, 7), (10, 6))), lambda x: ref_sep(x, BOX3)),
    "binomial3u16": (cases_u16(((3,),) * 3), lambda w: np.uint16(w[0] + 2 * w[1] + w[2])),
    "binomialClamped": (CASES_2D, ref_binomial),
    "binomialU16": (cases_u16(((3, 3), (4, 7), (10, 6))), ref_binomial_u16),
    "dotPartial": (cases_chunks(2), lambda x, y: (f64(x) * f64(y)).reshape(-1, 256).sum(axis=1)),
    "asumPartial": (cases_chunks(1), lambda x: np.abs(f64(x)).reshape(-1, 256).sum(axis=1)),
    "dotTwoKernels": (cases_chunks(2), ref_dot),
    "sum": (cases_asum, lambda x: f64(x).sum()),
    "dotHalf": (cases_dot_f16, lambda x, y: ref_dot(x.astype(F32), y.astype(F32))),
    "mmHalf": (cases_mm_16(lambda a: a.astype(np.float16)),
               lambda a, b: ref_mm(a.astype(F32), b.astype(F32))),
    "mmBf16": (cases_mm_16(bf16_bits), lambda a, b: ref_mm(bf16_values(a), bf16_values(b))),
    "mmTiled": (cases_mm_tiled, ref_mm),
    "rowPrefixSums": (CASES_2D, lambda x: np.cumsum(f64(x), axis=1)),
    "treeSum": (cases_treesum(8), lambda x: ref_group_sum(x, 8)),
    "bicg": (cases_bicg, ref_bicg),
    "cmul": (cases_complex(2), ref_cmul),
    "cabs2": (cases_complex(1), ref_cabs2),
    "lookup": (cases_lookup, lambda idx, x: f64(x)[idx.astype(np.int64)]),
    "permute": (cases_gather, lambda idx, x: f64(x)[idx.astype(np.int64)]),
    "lookupScaled": (cases_gather, lambda idx, x: 2.0 * f64(x)[idx.astype(np.int64)]),
    "place": (cases_permutation, ref_place),
    "placeScaled": (cases_permutation, lambda idx, x: 2.0 * ref_place(idx, x)),
    "spmv": (cases_spmv, ref_spmv),
    "placeRows": (cases_permutation_rows, ref_place),
    "pick": (cases_pick, lambda ks, x: f64(x)[ks.astype(np.int64)]),
    "norm": (cases_clamp, lambda xs: np.sqrt((f64(xs) ** 2).sum())),
    "logistic": (cases_clamp, lambda xs: 1.0 / (1.0 + np.exp(-f64(xs)))),
    "polar": (cases_vec4(2), ref_polar),
    "l1": (cases_l1, lambda x, y: np.int32(np.abs(x.astype(np.int64) - y).sum())),
    "sumSquares16": (cases_treesum(16), lambda x: ref_group_sum(f64(x) ** 2, 16)),
}



def load_more_references():
    """Adds the references of every tests/refs_*.py module (a REFERENCES dict of its own,
    in the same form; a module may use the helpers above through `import numpy_check`).
    A name defined twice is an error."""
    import importlib.util

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    sys.modules.setdefault("numpy_check", sys.modules[__name__])
    for path in sorted(Path(__file__).resolve().parent.glob("refs_*.py")):
        spec = importlib.util.spec_from_file_location(path.stem, path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        for name, entry in module.REFERENCES.items():
            if name in REFERENCES:
                raise SystemExit(f"{path.name}: a reference for `{name}` exists already")
            REFERENCES[name] = entry


load_more_references()


# --- Driver -------------------------------------------------------------------


class Failure(Exception):
    pass


def shine_check(shine, program):
    """The definition names that `shine check` lists, in order (an indented
    `where` line under a definition states a size constraint of it)."""
    proc = subprocess.run([shine, "check", str(program)], capture_output=True, text=True)
    if proc.returncode != 0:
        raise Failure(f"`shine check` exited with {proc.returncode}: {proc.stderr.strip()}")
    names = []
    for line in proc.stdout.splitlines():
        if line.startswith("  where ") and names:
            continue
        name, sep, _ty = line.partition(" : ")
        if not sep:
            raise Failure(f"`shine check` printed a line that is not `name : type`: {line!r}")
        names.append(name)
    return names


def shine_eval(shine, program, name, inputs, nats, workdir, parts=1):
    """The result of `shine eval`: an array, or for a tuple of `parts` arrays (written as
    one .npz) the tuple of its members."""
    args = [shine, "eval", str(program), "--def", name]
    for var, value in nats.items():
        args += ["--nat", f"{var}={value}"]
    for i, x in enumerate(inputs):
        path = os.path.join(workdir, f"in{i}.npy")
        np.save(path, x)
        args += ["--input", path]
    out = os.path.join(workdir, "out.npz" if parts > 1 else "out.npy")
    if os.path.exists(out):
        os.remove(out)
    args += ["--output", out]
    proc = subprocess.run(args, capture_output=True, text=True)
    if proc.returncode != 0:
        message = " | ".join(line for line in proc.stderr.strip().splitlines()[:3])
        raise Failure(f"shine eval exited with {proc.returncode}: {message}")
    if not os.path.exists(out):
        raise Failure("shine eval succeeded but wrote no output file")
    if parts == 1:
        return np.load(out)
    with np.load(out) as npz:
        members = sorted(npz.files)
        want = [str(i) for i in range(parts)]
        if members != want:
            raise Failure(f"the .npz holds {members}, expected {want}")
        return tuple(npz[k] for k in want)


def compare(got, want):
    """Integer results (a reference given as an integer array) must be exact;
    the others are float32, compared with a tolerance. A structured result (an
    array of tuples) is compared as the array of its fields along a last axis;
    a tuple result part by part."""
    if isinstance(want, tuple):
        for i, (g, w) in enumerate(zip(got, want)):
            try:
                compare(g, w)
            except Failure as e:
                raise Failure(f"part {i}: {e}")
        return
    if got.dtype.names:
        names = list(got.dtype.names)
        if names != [f"f{i}" for i in range(len(names))]:
            raise Failure(f"structured result with fields {names}, expected f0, f1, ...")
        kinds = {got.dtype[n] for n in names}
        if len(kinds) != 1:
            raise Failure(f"fields of different dtypes {kinds}")
        got = np.stack([got[n] for n in names], axis=-1)
    if np.asarray(want).dtype.kind in "ui":
        want = np.asarray(want)
        if got.dtype != want.dtype or got.shape != want.shape:
            raise Failure(f"{got.dtype} {got.shape}, expected {want.dtype} {want.shape}")
        if not np.array_equal(got, want):
            raise Failure(f"{int(np.sum(got != want))} elements differ")
        return
    want = np.asarray(want, dtype=np.float64)
    if got.dtype != np.float32:
        raise Failure(f"dtype {got.dtype}, expected float32")
    if got.shape != want.shape:
        raise Failure(f"shape {got.shape}, expected {want.shape}")
    if not np.allclose(got, want, rtol=RTOL, atol=ATOL):
        err = np.max(np.abs(got.astype(np.float64) - want)) if got.size else 0.0
        raise Failure(f"max abs error {err:.3g}")


def main():
    if len(sys.argv) != 2:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    shine = os.path.abspath(sys.argv[1])
    if not os.access(shine, os.X_OK):
        print(f"error: `{shine}` is not an executable", file=sys.stderr)
        return 2

    start = time.monotonic()
    passed = failed = 0
    programs = sorted(EXAMPLES.glob("*.rise"))
    if not programs:
        print(f"FAIL no examples found in {EXAMPLES}")
        return 1
    with tempfile.TemporaryDirectory(prefix="shine-numpy-") as workdir:
        for program in programs:
            try:
                names = shine_check(shine, program)
            except Failure as e:
                print(f"FAIL {program.name}: {e}")
                failed += 1
                continue
            # foreign functions (`foreign NAME ...`) are listed too; they are checked
            # through the definitions that call them
            foreign = {
                line.split()[1]
                for line in program.read_text().splitlines()
                if line.startswith("foreign ")
            }
            for name in names:
                if name in foreign:
                    continue
                if name not in REFERENCES:
                    print(f"FAIL {program.name}:{name}: no numpy reference; add one to tests/numpy_check.py")
                    failed += 1
                    continue
                make_cases, reference = REFERENCES[name]
                # One seed per (program, definition), stable across runs and orderings.
                seed = sum(map(ord, f"{program.stem}:{name}"))
                for label, inputs, nats in make_cases(np.random.default_rng(seed)):
                    case = f"{name} {label} ({program.name})"
                    try:
                        want = reference(*inputs)
                        parts = len(want) if isinstance(want, tuple) else 1
                        got = shine_eval(shine, program, name, inputs, nats, workdir, parts)
                        compare(got, want)
                    except Failure as e:
                        print(f"FAIL {case}: {e}")
                        failed += 1
                    else:
                        print(f"ok   {case}")
                        passed += 1
    elapsed = time.monotonic() - start
    print(f"{passed} passed, {failed} failed in {elapsed:.1f} s")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
