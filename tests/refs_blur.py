"""NumPy references for the 8-bit 5x5 Gaussian blur of examples/stencil2d.rise
(`gaussian5u8`, `gaussian5Weights`), written as a numpy user writes the filter: separable,
the image padded by repeating its edge (`np.pad(..., mode="edge")`), the [1 4 6 4 1] taps
along the rows and then down the columns in uint16 (at most 255·256 = 65280: exact), then
rounded and divided by 256. Exact (uint8), as numpy_check.py compares integer results.
"""

import numpy as np

from numpy_check import cases_none

TAPS = np.array([1, 4, 6, 4, 1], dtype=np.uint16)


def blur5x5_u8(img):
    """The separable 5x5 binomial blur of an 8-bit image with clamped borders."""
    p = np.pad(img, 2, mode="edge").astype(np.uint16)
    n, m = img.shape
    rows = sum(TAPS[k] * p[:, k : k + m] for k in range(5))
    blurred = sum(TAPS[k] * rows[k : k + n, :] for k in range(5))
    return ((blurred + 128) // 256).astype(np.uint8)


def cases_u8(rng):
    for n, m in ((1, 1), (1, 6), (7, 7), (13, 9), (33, 65)):
        yield f"{n}x{m}", [rng.integers(0, 256, size=(n, m)).astype(np.uint8)], {}


REFERENCES = {
    "gaussian5Weights": (cases_none, lambda: np.outer(TAPS, TAPS).astype(np.uint16)),
    "gaussian5u8": (cases_u8, blur5x5_u8),
}
