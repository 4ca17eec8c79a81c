#!/usr/bin/env python3
"""Issue 4, item 8: the seven matmul versions of ICFP'20 §6.1, compiled with
`shine run --target openmp`, on the non-square size m=256 n=512 k=128 and on
1024x1024x1024, compared with NumPy (computed in float64); and the two versions
for any size (`anySize`, `anySizeParallel`) also at sizes no factor divides.

Usage: python3 tests/mm_sizes_check.py PATH_TO_SHINE [--quick]

`--quick` leaves out 1024^3 (the baseline alone runs about 7 s there).
Prints one line per case and exits with status 1 if any case fails.
"""

import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
VERSIONS = ["baseline", "blocking", "vectorization", "loopPermutation",
            "arrayPacking", "cacheBlocks", "parallelization"]
ANY_SIZE_VERSIONS = ["anySize", "anySizeParallel"]
SIZES = [(256, 512, 128), (1024, 1024, 1024)]
ODD_SIZES = [(1, 1, 1), (37, 65, 19), (1000, 1000, 1000)]
RTOL = 1e-4  # relative to the magnitude of the terms summed


def check(shine, tmp, version, m, n, k, rng):
    a = rng.uniform(-1.0, 1.0, size=(m, k)).astype(np.float32)
    b = rng.uniform(-1.0, 1.0, size=(k, n)).astype(np.float32)
    pa, pb, out = tmp / "a.npy", tmp / "b.npy", tmp / "c.npy"
    np.save(pa, a)
    np.save(pb, b)
    cmd = [shine, "run", str(ROOT / "examples/mm.rise"), "--def", "mm",
           "--strategy", str(ROOT / "examples/mm.elv"), "--apply", f"{version} ; lowerToC",
           "--target", "openmp", "--input", str(pa), "--input", str(pb), "--output", str(out)]
    start = time.time()
    done = subprocess.run(cmd, capture_output=True, text=True)
    took = time.time() - start
    if done.returncode != 0:
        return f"shine failed: {done.stderr.strip()}"
    got = np.load(out)
    want = a.astype(np.float64) @ b.astype(np.float64)
    if got.shape != want.shape or got.dtype != np.float32:
        return f"shape/dtype {got.shape} {got.dtype}, expected {want.shape} float32"
    # Each entry sums k products of magnitude <= 1: scale the tolerance by k.
    err = np.abs(got - want).max()
    if err > RTOL * k:
        return f"max abs error {err:.3g} > {RTOL * k:.3g}"
    return f"ok (max abs error {err:.2g}, {took:.2f} s)"


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    shine = sys.argv[1]
    sizes = SIZES[:1] if "--quick" in sys.argv[2:] else SIZES
    rng = np.random.default_rng(2026)
    failed = 0
    with tempfile.TemporaryDirectory() as d:
        cases = [(size, v) for size in sizes for v in VERSIONS + ANY_SIZE_VERSIONS]
        odd = ODD_SIZES[:2] if "--quick" in sys.argv[2:] else ODD_SIZES
        cases += [(size, v) for size in odd for v in ANY_SIZE_VERSIONS]
        for ((m, n, k), version) in cases:
            msg = check(shine, Path(d), version, m, n, k, rng)
            ok = msg.startswith("ok")
            failed += not ok
            print(f"{'ok  ' if ok else 'FAIL'} mm {version} m={m} n={n} k={k}: {msg}", flush=True)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
