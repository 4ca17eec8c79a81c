"""NumPy references for examples/lanes.rise: particles kept as float4 (x, y, z, mass),
an n x 4 array, read lane by lane (`lane k v`) and built from lanes (`makeVector`).
Loaded by tests/numpy_check.py (`load_more_references`)."""

import numpy as np

from numpy_check import f64, rand


def cases_particles(arity):
    def cases(rng):
        for n in (1, 5, 0):
            yield f"n={n}", [rand(rng, n, 4) for _ in range(arity)], {}

    return cases


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
}
