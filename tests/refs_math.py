"""NumPy references for the definitions of examples/math.rise that use C99 functions
numpy lacks (erf: the standard library's math.erf, elementwise), and GELU.
Loaded by tests/numpy_check.py (`load_more_references`)."""

import math

import numpy as np

from numpy_check import cases_clamp, f64

erf = np.vectorize(math.erf, otypes=[np.float64])


def ref_activations(xs):
    """GELU x·Φ(x) with Φ(x) = (1 + erf(x/√2))/2, softplus log(1 + eˣ) and ELU
    (x for x > 0, eˣ - 1 otherwise), as an n x 3 array."""
    x = f64(xs)
    gelu = x * 0.5 * (1.0 + erf(x / math.sqrt(2.0)))
    softplus = np.log(1.0 + np.exp(x))
    elu = np.where(x > 0.0, x, np.exp(x) - 1.0)
    return np.stack([gelu, softplus, elu], axis=-1)


def ref_gelu_tanh(xs):
    """GELU in its tanh form, x/2 (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))."""
    x = f64(xs)
    return 0.5 * x * (1.0 + np.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x**3)))


def ref_gelu_erf(xs):
    """GELU x·Φ(x), Φ(x) = (1 + erf(x/√2))/2."""
    x = f64(xs)
    return 0.5 * x * (1.0 + erf(x / math.sqrt(2.0)))


REFERENCES = {
    "activations": (cases_clamp, ref_activations),
    "geluTanh": (cases_clamp, ref_gelu_tanh),
    "geluErf": (cases_clamp, ref_gelu_erf),
}
