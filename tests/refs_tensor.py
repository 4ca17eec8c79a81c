"""NumPy references for examples/tensor.rise: the tensor-core tile multiply-accumulate and
the matrix products built on it, c + a·b and a·b of f16 matrices in float64 (every product
of two f16 values is exact; the interpreter rounds each tile's sum to f32).
Loaded by tests/numpy_check.py (`load_more_references`)."""

import numpy as np

from numpy_check import f64, rand


def f16(rng, *shape):
    return rand(rng, *shape).astype(np.float16)


def cases_tile(rng):
    for label in ("tile 1", "tile 2"):
        yield label, [f16(rng, 16, 16), f16(rng, 16, 8), rand(rng, 16, 8)], {}


def cases_tiled(tm, tn, tk, counts):
    """Matrices of (m*tm) x (k*tk) and (k*tk) x (n*tn) for the tile counts (m, n, k)."""
    def cases(rng):
        for m, n, k in counts:
            yield f"m={m} n={n} k={k}", [f16(rng, m * tm, k * tk), f16(rng, k * tk, n * tn)], {}
    return cases


def cases_split(tm, tn, counts):
    """Split-K products: (m*tm) x (s*k*32) and (s*k*32) x (n*tn) for the counts (m, n, k, s)."""
    def cases(rng):
        for m, n, k, s in counts:
            kk = s * k * 32
            yield (f"m={m} n={n} k={k} s={s}", [f16(rng, m * tm, kk), f16(rng, kk, n * tn)],
                   {"k": k, "s": s})
    return cases


def ref_mm(a, b):
    return f64(a) @ f64(b)


REFERENCES = {
    "mmaTile": (cases_tile, lambda a, b, c: f64(c) + f64(a) @ f64(b)),
    "mmWarps": (cases_tiled(16, 32, 16, ((1, 1, 1), (2, 1, 3), (1, 2, 2))), ref_mm),
    "mmWarpTiles": (cases_tiled(64, 64, 16, ((1, 1, 1), (1, 1, 3))), ref_mm),
    "mmShared": (cases_tiled(64, 64, 32, ((1, 1, 1), (1, 2, 1))), ref_mm),
    "mmLarge": (cases_tiled(128, 128, 32, ((1, 1, 1), (1, 1, 2))), ref_mm),
    "mmWide": (cases_tiled(128, 256, 32, ((1, 1, 1), (1, 1, 2))), ref_mm),
    "mmSharedSplitK": (cases_split(64, 64, ((1, 1, 1, 3), (1, 2, 2, 2))), ref_mm),
    "mmLargeSplitK": (cases_split(128, 128, ((1, 1, 1, 2),)), ref_mm),
    "mmWideSplitK": (cases_split(128, 256, ((1, 1, 1, 2),)), ref_mm),
    "mmHopper": (cases_tiled(128, 256, 64, ((1, 1, 1), (1, 1, 2))), ref_mm),
}
