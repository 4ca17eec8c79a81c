"""NumPy references for examples/norms.rise: softmax, layer norm, RMS norm and the
cross-entropy of logits against target probabilities, row by row, in float64 from the
formulas (numpy's reductions along the last axis), not from the RISE program.
The targets of crossEntropy are rows of probabilities (non-negative, summing to 1)."""

import numpy as np

from numpy_check import F32, f64, rand

EPS = 1e-5


def cases_rows(rng):
    for m, n in ((1, 1), (3, 7), (2, 13), (4, 1)):
        yield f"{m}x{n}", [rand(rng, m, n)], {}


def cases_rows_1024(rng):
    for m in (1, 3):
        yield f"{m}x1024", [rand(rng, m, 1024)], {}


def cases_rows_of(n, ms):
    """Cases of `ms` rows of the constant length `n`."""

    def cases(rng):
        for m in ms:
            yield f"{m}x{n}", [rand(rng, m, n)], {}

    return cases


def cases_row(rng):
    for n in (1, 7, 13):
        yield f"n={n}", [rand(rng, n)], {}


def cases_logits_targets(rng):
    for m, n in ((1, 1), (3, 7), (2, 13)):
        t = rng.uniform(0.0, 1.0, size=(m, n))
        yield f"{m}x{n}", [rand(rng, m, n), (t / t.sum(axis=1, keepdims=True)).astype(F32)], {}


def ref_softmax(x):
    e = np.exp(f64(x) - f64(x).max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def ref_layer_norm(x):
    x = f64(x)
    mean = x.mean(axis=1, keepdims=True)
    return (x - mean) / np.sqrt(((x - mean) ** 2).mean(axis=1, keepdims=True) + EPS)


def ref_rms_norm(x):
    x = f64(x)
    return x / np.sqrt((x**2).mean(axis=1, keepdims=True) + EPS)


def ref_cross_entropy(logits, targets):
    x = f64(logits)
    mx = x.max(axis=1, keepdims=True)
    log_softmax = x - mx - np.log(np.exp(x - mx).sum(axis=1, keepdims=True))
    return -(f64(targets) * log_softmax).sum(axis=1)


REFERENCES = {
    "rowSum": (cases_row, lambda x: f64(x).sum()),
    "rowMax": (cases_row, lambda x: f64(x).max()),
    "rowMean": (cases_row, lambda x: f64(x).mean()),
    "softmax": (cases_rows, ref_softmax),
    "layerNorm": (cases_rows, ref_layer_norm),
    "rmsNorm": (cases_rows, ref_rms_norm),
    "crossEntropy": (cases_logits_targets, ref_cross_entropy),
    "softmax1024": (cases_rows_1024, ref_softmax),
    "layerNorm1024": (cases_rows_1024, ref_layer_norm),
    "rmsNorm1024": (cases_rows_1024, ref_rms_norm),
    # the forms with every row reduction bound once (`let`), and their fixed lengths
    "softmaxOnce": (cases_rows, ref_softmax),
    "layerNormOnce": (cases_rows, ref_layer_norm),
    "rmsNormOnce": (cases_rows, ref_rms_norm),
    "softmax8192": (cases_rows_of(8192, (1, 2)), ref_softmax),
    "layerNorm8192": (cases_rows_of(8192, (1, 2)), ref_layer_norm),
    "rmsNorm8192": (cases_rows_of(8192, (1, 2)), ref_rms_norm),
    "softmax32768": (cases_rows_of(32768, (1,)), ref_softmax),
    "layerNorm32768": (cases_rows_of(32768, (1,)), ref_layer_norm),
    "rmsNorm32768": (cases_rows_of(32768, (1,)), ref_rms_norm),
}
