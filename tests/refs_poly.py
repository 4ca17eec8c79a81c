"""NumPy references for the PolyBench kernels (examples/polybench.rise) and the stencils of
the CGO'18 Lift stencil paper (examples/stencils.rise), loaded by tests/numpy_check.py.

Written from the mathematics (PolyBench/C's kernels, the user functions and index
conventions of the Lift benchmarks), with numpy ops and explicit slices in float64, not by
translating the RISE programs. `dot` and `mm` of polybench.rise have the references of
numpy_check.py (same names, same meaning as in bicg.rise/gemv.rise and mm.rise).
"""

import numpy as np

from numpy_check import f64, rand, scalar

# --- PolyBench ----------------------------------------------------------------


def ref_twomm(alpha, beta, a, b, c, d):
    """2mm: D := alpha * A B C + beta * D."""
    return f64(alpha) * (f64(a) @ f64(b)) @ f64(c) + f64(beta) * f64(d)


def cases_twomm(rng):
    for ni, nj, nk, nl in ((1, 1, 1, 1), (2, 3, 4, 5), (5, 4, 3, 2), (6, 6, 6, 6), (3, 2, 0, 4)):
        label = f"ni={ni} nj={nj} nk={nk} nl={nl}"
        yield label, [
            scalar(rng),
            scalar(rng),
            rand(rng, ni, nk),
            rand(rng, nk, nj),
            rand(rng, nj, nl),
            rand(rng, ni, nl),
        ], {}


def cases_atax(rng):
    for m, n in ((1, 1), (3, 5), (6, 2), (7, 7)):
        yield f"{m}x{n}", [rand(rng, m, n), rand(rng, n)], {}


def ref_atax(a, x):
    """y := A^T (A x)."""
    return f64(a).T @ (f64(a) @ f64(x))


def cases_gesummv(rng):
    for n, m in ((1, 1), (3, 5), (6, 2), (7, 7)):
        yield f"{n}x{m}", [scalar(rng), scalar(rng), rand(rng, n, m), rand(rng, n, m), rand(rng, m)], {}


def ref_gesummv(alpha, beta, a, b, x):
    return f64(alpha) * (f64(a) @ f64(x)) + f64(beta) * (f64(b) @ f64(x))


def cases_mvt(rng):
    for n in (1, 2, 5, 8):
        yield f"n={n}", [rand(rng, n) for _ in range(4)] + [rand(rng, n, n)], {}


def ref_mvt(x1, x2, y1, y2, a):
    """x1 := x1 + A y1, x2 := x2 + A^T y2 (a pair)."""
    return (f64(x1) + f64(a) @ f64(y1), f64(x2) + f64(a).T @ f64(y2))


def cases_gemvt(rng):
    for n, m in ((1, 1), (3, 5), (6, 2), (8, 8)):
        yield f"{n}x{m}", [rand(rng, n, m), rand(rng, n), rand(rng, m), scalar(rng), scalar(rng)], {}


def ref_gemvt(a, x, y, alpha, beta):
    """y := alpha * A^T x + beta * y."""
    return f64(alpha) * (f64(a).T @ f64(x)) + f64(beta) * f64(y)


REFERENCES = {
    "twomm": (cases_twomm, ref_twomm),
    "atax": (cases_atax, ref_atax),
    "gesummv": (cases_gesummv, ref_gesummv),
    "mvt": (cases_mvt, ref_mvt),
    "gemvT": (cases_gemvt, ref_gemvt),
}
