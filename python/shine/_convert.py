"""Arrays in and out of the native module as .npy bytes (the general path): numpy encodes an
input and decodes a result, the library reads and writes them with the command line's rules."""

import io

import numpy as np


def npy_bytes(array):
    """The .npy encoding of `array` (any layout: numpy writes it in C order)."""
    buffer = io.BytesIO()
    np.lib.format.write_array(buffer, np.asarray(array), allow_pickle=False)
    return buffer.getvalue()


def from_npy_bytes(data):
    """The array of an .npy encoding."""
    return np.lib.format.read_array(io.BytesIO(data), allow_pickle=False)


def copy_into(result, out):
    """Copies `result` (an array or a tuple of arrays) into `out` of the same structure, each
    array of the same shape and dtype; a ValueError says what differs."""
    results = result if isinstance(result, tuple) else (result,)
    outs = out if isinstance(out, tuple) else (out,)
    if len(results) != len(outs):
        raise ValueError(
            f"out=: the result has {len(results)} part(s), {len(outs)} array(s) given")
    for k, (r, o) in enumerate(zip(results, outs)):
        if not isinstance(o, np.ndarray):
            raise ValueError(f"out=: part {k} is not a numpy array")
        if o.shape != r.shape or o.dtype != r.dtype:
            raise ValueError(
                f"out=: part {k} must be a {r.dtype} array of shape {r.shape}, "
                f"it is a {o.dtype} array of shape {o.shape}")
        np.copyto(o, r)
