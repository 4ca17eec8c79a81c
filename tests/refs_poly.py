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


# --- CGO'18 stencils --------------------------------------------------------------------


def window(g, r, offsets, mode="edge"):
    """g padded by r (edge: clamped) read at the offset `offsets` (one per axis) of every point."""
    p = np.pad(f64(g), r, mode=mode)
    return p[tuple(slice(r + o, r + o + s) for o, s in zip(offsets, g.shape))]


def interior(g, r, offsets):
    """The points of g whose whole (2r+1)-wide neighbourhood is inside g, read at `offsets`."""
    return f64(g)[tuple(slice(r + o, s - r + o) for o, s in zip(offsets, g.shape))]


def pad_back_and_shift(inner, r, s):
    """The PPCG form: the interior padded back (clamped), then rotated by s along every axis."""
    return np.roll(np.pad(inner, r, mode="edge"), s, axis=tuple(range(inner.ndim)))


def ref_stencil2d_shoc(g, w):
    w = f64(w).reshape(3, 3)
    return sum(w[a, b] * interior(g, 1, (a - 1, b - 1)) for a in range(3) for b in range(3))


def ref_srad_coeff(dn, ds, dw, de, jc):
    """Rodinia SRAD's diffusion coefficient (q0sqr = 0.053787220269), clamped to [0, 1]."""
    dn, ds, dw, de, jc = (f64(v) for v in (dn, ds, dw, de, jc))
    q0 = 0.053787220269
    g2 = (dn**2 + ds**2 + dw**2 + de**2) / jc**2
    lap = (dn + ds + dw + de) / jc
    qsqr = (0.5 * g2 - lap**2 / 16.0) / (1.0 + 0.25 * lap) ** 2
    c = 1.0 / (1.0 + (qsqr - q0) / (q0 * (1.0 + q0)))
    return np.clip(c, 0.0, 1.0)


def ref_srad1(img):
    c = f64(img)
    at = lambda di, dj: window(img, 1, (di, dj))
    return ref_srad_coeff(at(-1, 0) - c, at(1, 0) - c, at(0, -1) - c, at(0, 1) - c, c)


def ref_srad2(img, coeff, dn, ds, de, dw):
    c = f64(coeff)
    south, east = window(coeff, 1, (1, 0)), window(coeff, 1, (0, 1))
    div = c * f64(dn) + south * f64(ds) + c * f64(dw) + east * f64(de)
    return f64(img) + 0.125 * div


def ref_hotspot2d(temp, power):
    """Rodinia hotspot: constants derived from the chip (16 mm square, 0.5 mm, 512 x 512)."""
    t_chip, height, width, rows, cols = 0.0005, 0.016, 0.016, 512.0, 512.0
    gh, gw = height / rows, width / cols
    cap = 0.5 * 1.75e6 * t_chip * gw * gh
    rx = gw / (2.0 * 100 * t_chip * gh)
    ry = gh / (2.0 * 100 * t_chip * gw)
    rz = t_chip / (100 * gh * gw)
    step = 0.001 / (3.0e6 / (0.5 * t_chip * 1.75e6))
    c = f64(temp)
    at = lambda di, dj: window(temp, 1, (di, dj))
    return c + step / cap * (
        f64(power)
        + (at(1, 0) + at(-1, 0) - 2 * c) / ry
        + (at(0, 1) + at(0, -1) - 2 * c) / rx
        + (80.0 - c) / rz
    )


def ref_hotspot3d(temp, power):
    """Lift's hotspot3D coefficients; top/bottom (ct) along the innermost axis."""
    cc, cn, ct, sdc = 0.86186665296554565430, 0.03413332998752593994, 0.00053333328105509281, 0.34133329987525939941
    at = lambda a, b, c: window(temp, 1, (a, b, c))
    side = at(-1, 0, 0) + at(1, 0, 0) + at(0, -1, 0) + at(0, 1, 0)
    return cc * f64(temp) + cn * side + ct * (at(0, 0, -1) + at(0, 0, 1)) + sdc * f64(power) + ct * 80.0


GAUSS = np.array([[2, 4, 5, 4, 2], [4, 9, 12, 9, 4], [5, 12, 15, 12, 5], [4, 9, 12, 9, 4], [2, 4, 5, 4, 2]]) / 159.0


def ppcg_2d(r, s, point):
    def ref(g):
        at = lambda di, dj: interior(g, r, (di, dj))
        return pad_back_and_shift(point(at), r, s)
    return ref


def ppcg_3d(r, s, point):
    def ref(g):
        at = lambda a, b, c: interior(g, r, (a, b, c))
        return pad_back_and_shift(point(at), r, s)
    return ref


def gauss_point(at):
    return sum(GAUSS[a, b] * at(a - 2, b - 2) for a in range(5) for b in range(5))


def grad_point(at):
    c = at(0, 0)
    sq = sum((c - at(di, dj)) ** 2 for di, dj in ((-1, 0), (1, 0), (0, -1), (0, 1)))
    return c + 1.0 / np.sqrt(0.0001 + sq)


def j2d5_point(at):
    return (5 * at(-1, 0) + 12 * at(0, -1) + 15 * at(0, 0) + 5 * at(1, 0) + 12 * at(0, 1)) / 118.0


J2D9 = np.array([[7, 5, 9], [12, 15, 12], [9, 5, 7]]) / 118.0


def j2d9_point(at):
    return sum(J2D9[a, b] * at(a - 1, b - 1) for a in range(3) for b in range(3))


def j3d7_point(at):
    # E/W along the innermost axis, S/N the middle one, B/F the outermost
    return (0.161 * at(0, 0, 1) + 0.162 * at(0, 0, -1) + 0.163 * at(0, 1, 0) + 0.164 * at(0, -1, 0)
            + 0.165 * at(1, 0, 0) + 0.166 * at(-1, 0, 0) - 1.67 * at(0, 0, 0))


def j3d13_point(at):
    arms = [tuple(d if ax == axis else 0 for ax in range(3)) for axis in range(3) for d in (-2, -1, 1, 2)]
    return 0.083 * sum(at(*o) for o in arms) - 0.996 * at(0, 0, 0)


def poisson_point(at):
    offsets = [(a, b, c) for a in (-1, 0, 1) for b in (-1, 0, 1) for c in (-1, 0, 1)]
    faces = [o for o in offsets if sum(map(abs, o)) == 1]
    edges = [o for o in offsets if sum(map(abs, o)) == 2]
    assert len(faces) == 6 and len(edges) == 12
    return 2.666 * at(0, 0, 0) - 0.166 * sum(at(*o) for o in faces) - 0.0833 * sum(at(*o) for o in edges)


def heat_point(at):
    c = at(0, 0, 0)
    axes = [(1, 0, 0), (0, 1, 0), (0, 0, 1)]
    return sum(0.125 * (at(*a) - 2 * c + at(*(-x for x in a))) for a in axes) + c


def cases_grids(shapes, arity=1, low=-2.0, high=2.0):
    def cases(rng):
        for shape in shapes:
            label = "x".join(map(str, shape))
            yield label, [rng.uniform(low, high, size=shape).astype(np.float32) for _ in range(arity)], {}
    return cases


def cases_shift(rng):
    for n in (2, 3, 7):
        yield f"n={n}", [rand(rng, n)], {}
    yield "5x3 rows", [rand(rng, 5, 3)], {}


def cases_stencil2d_shoc(rng):
    for n, m in ((3, 3), (4, 6), (9, 5)):
        yield f"{n}x{m}", [rand(rng, n, m), rand(rng, 9)], {}


def cases_srad_coeff(rng):
    for _ in range(4):
        jc = np.float32(rng.uniform(0.5, 1.5))
        yield f"jc={jc:.3g}", [np.float32(rng.uniform(-0.3, 0.3)) for _ in range(4)] + [jc], {}
    # a coefficient clamped to 0 and one to 1
    yield "clamped high", [np.float32(v) for v in (0.0, 0.0, 0.0, 0.0, 1.0)], {}
    yield "clamped low", [np.float32(v) for v in (0.2, 0.2, 0.2, 0.2, 1.0)], {}


SHAPES_2D = ((3, 3), (4, 7), (9, 5))
SHAPES_2D_5 = ((5, 5), (6, 9), (10, 7))
SHAPES_3D = ((3, 3, 3), (4, 5, 3), (6, 4, 5))
SHAPES_3D_5 = ((5, 5, 5), (6, 5, 7))


def cases_srad2(rng):
    for n, m in ((1, 1), (3, 4), (6, 5)):
        yield f"{n}x{m}", [rand(rng, n, m) for _ in range(6)], {}


REFERENCES = {
    "twomm": (cases_twomm, ref_twomm),
    "atax": (cases_atax, ref_atax),
    "gesummv": (cases_gesummv, ref_gesummv),
    "mvt": (cases_mvt, ref_mvt),
    "gemvT": (cases_gemvt, ref_gemvt),
    "scatterShift1": (cases_shift, lambda x: np.roll(f64(x), 1, axis=0)),
    "scatterShift2": (cases_shift, lambda x: np.roll(f64(x), 2, axis=0)),
    "stencil2dShoc": (cases_stencil2d_shoc, ref_stencil2d_shoc),
    "sradCoeff": (cases_srad_coeff, ref_srad_coeff),
    # images of positive intensities (SRAD divides by the centre pixel)
    "srad1": (cases_grids(((1, 1), (3, 4), (6, 5)), 1, 0.5, 1.5), ref_srad1),
    "srad2": (cases_srad2, ref_srad2),
    "hotspot2d": (cases_grids(((1, 1), (3, 4), (6, 5)), 2), ref_hotspot2d),
    "hotspot3d": (cases_grids(((1, 1, 1), (3, 4, 2), (4, 3, 5)), 2), ref_hotspot3d),
    "gaussianPpcg": (cases_grids(SHAPES_2D_5), ppcg_2d(2, 2, gauss_point)),
    "grad2d": (cases_grids(SHAPES_2D), ppcg_2d(1, 1, grad_point)),
    "j2d5pt": (cases_grids(SHAPES_2D), ppcg_2d(1, 1, j2d5_point)),
    "j2d9pt": (cases_grids(SHAPES_2D), ppcg_2d(1, 1, j2d9_point)),
    "j3d7pt": (cases_grids(SHAPES_3D), ppcg_3d(1, 1, j3d7_point)),
    "j3d13pt": (cases_grids(SHAPES_3D_5), ppcg_3d(2, 2, j3d13_point)),
    # Jacobi 3-D 7 pt padded (clamped) before it is slid: every point, any size
    "j3d7ptClamped": (
        cases_grids(((1, 1, 1), (3, 5, 2), (4, 3, 7), (7, 2, 5))),
        lambda g: j3d7_point(lambda a, b, c: window(g, 1, (a, b, c))),
    ),
    "poisson3d": (cases_grids(SHAPES_3D), ppcg_3d(1, 1, poisson_point)),
    "heat3dPpcg": (cases_grids(SHAPES_3D), ppcg_3d(1, 1, heat_point)),
}
