"""NumPy references for examples/lanes.rise: particles kept as float4 (x, y, z, mass),
an n x 4 array, read lane by lane (`lane k v`) and built from lanes (`makeVector`); given
as `n.4.f32` or as vectors `n.vec[f32, 4]` (the same n x 4 file), and (position, velocity)
pairs of vectors as a structured array with two fields of shape (4,) or as an n x 8 array.
Loaded by tests/numpy_check.py (`load_more_references`)."""

import numpy as np

from numpy_check import f64, rand


def cases_particles(arity):
    def cases(rng):
        for n in (1, 5, 0):
            yield f"n={n}", [rand(rng, n, 4) for _ in range(arity)], {}

    return cases


PAIR_OF_FLOAT4 = np.dtype([("pos", "<f4", (4,)), ("vel", "<f4", (4,))])


def cases_pairs(rng):
    """(position, velocity) pairs: structured arrays, and one n x 8 array."""
    for n in (1, 5, 0):
        x = np.empty(n, dtype=PAIR_OF_FLOAT4)
        x["pos"], x["vel"] = rand(rng, n, 4), rand(rng, n, 4)
        yield f"n={n} structured", [x], {}
    yield "n=3 n x 8", [rand(rng, 3, 8)], {}


def split_pairs(x):
    """The positions and velocities of a structured or an n x 8 array, as float64."""
    if x.dtype.names:
        return tuple(f64(x[name]) for name in x.dtype.names)
    return f64(x[:, :4]), f64(x[:, 4:])


def ref_advance_pairs(x):
    pos, vel = split_pairs(x)
    out = pos.copy()
    out[:, :3] += 0.01 * vel[:, :3]
    return out


def ref_kinetic(x):
    pos, vel = split_pairs(x)
    return 0.5 * pos[:, 3] * (vel[:, :3] ** 2).sum(axis=1)


def ref_sq_length(ps):
    p = f64(ps)
    return (p[:, :3] ** 2).sum(axis=1)


def ref_advance(pos, vel):
    out = f64(pos).copy()
    out[:, :3] += 0.01 * f64(vel)[:, :3]
    return out


def ref_forces(pos):
    p = f64(pos)
    d = p[None, :, :3] - p[:, None, :3]  # d[i, j] = p_j - p_i
    inv = 1.0 / ((d * d).sum(axis=2) + 0.01)
    s = p[None, :, 3] * inv * np.sqrt(inv)  # m_j / (|d|^2 + 0.01)^(3/2)
    out = np.zeros_like(p)
    out[:, :3] = (s[:, :, None] * d).sum(axis=1)
    return out


REFERENCES = {
    "sqLength": (cases_particles(1), ref_sq_length),
    "advance": (cases_particles(2), ref_advance),
    "forces": (cases_particles(1), ref_forces),
    "forcesVec": (cases_particles(1), ref_forces),
    "advanceVec": (cases_pairs, ref_advance_pairs),
    "kinetic": (cases_pairs, ref_kinetic),
}
