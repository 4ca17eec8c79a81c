"""Call overhead of a small shine kernel against the same compiled library called through
ctypes, and the compile time of a first and a second process (the cache).

    python bench_overhead.py [--calls 10000] [--target openmp|c]

Prints the median time of a call (1,000 float32 elements, saxpy) through `shine` and through
ctypes (the output allocated by numpy in both, the ctypes arguments prepared once), their
ratio, and the time `shine.compile` takes in a fresh process with an empty cache and in a
second process that finds the kernel in the cache.
"""

import argparse
import ctypes
import os
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

# the installed package, not the sources beside this script (no native module there)
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path = [p for p in sys.path if os.path.abspath(p or ".") != HERE]

SOURCE = """
def saxpy : {n: nat} -> f32 -> n.f32 -> n.f32 -> n.f32 =
  fun a xs ys => zip xs ys |> map (fun p => a * fst p + snd p)
"""
N = 1000


def median_us(call, calls):
    """The median time of `call()` in microseconds, over `calls` calls (after a warm-up)."""
    for _ in range(min(calls, 1000)):
        call()
    samples = []
    clock = time.perf_counter_ns
    for _ in range(calls):
        start = clock()
        call()
        samples.append(clock() - start)
    return statistics.median(samples) / 1e3


def compile_in_fresh_process(cache, target):
    """The seconds `shine.compile` takes in a new Python process using the cache `cache`."""
    code = (
        "import time, shine\n"
        f"source = {SOURCE!r}\n"
        "start = time.perf_counter()\n"
        f"shine.compile(source, 'saxpy', target={target!r})\n"
        "print(time.perf_counter() - start)\n"
    )
    env = dict(os.environ, SHINE_CACHE_DIR=cache)
    out = subprocess.run([sys.executable, "-c", code], env=env, check=True,
                         capture_output=True, text=True)
    return float(out.stdout.strip().splitlines()[-1])


def ctypes_call(kernel, cache):
    """A call of the kernel's cached library through ctypes, doing what a call must: the
    output allocated, the buffer table filled, the entry point called."""
    import glob
    import re
    entry = re.search(r"int (\w+_entry)\(", kernel.source).group(1)
    libraries = glob.glob(os.path.join(cache, "*.so"))
    assert len(libraries) == 1, libraries
    function = getattr(ctypes.CDLL(libraries[0]), entry)
    function.restype = ctypes.c_int
    function.argtypes = [ctypes.c_void_p, ctypes.c_void_p]
    a = np.full(1, 2.0, dtype=np.float32)
    x = np.random.rand(N).astype(np.float32)
    y = np.random.rand(N).astype(np.float32)
    sizes = (ctypes.c_int64 * 1)(N)
    buffers = (ctypes.c_void_p * 4)()
    buffers[1], buffers[2], buffers[3] = a.ctypes.data, x.ctypes.data, y.ctypes.data

    def call():
        out = np.empty(N, dtype=np.float32)
        buffers[0] = out.ctypes.data
        if function(buffers, sizes) != 0:
            raise RuntimeError("status")
        return out

    return call, (a, x, y)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=10_000)
    parser.add_argument("--target", default="openmp", choices=["openmp", "c"])
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as cache:
        first = compile_in_fresh_process(cache, args.target)
        second = compile_in_fresh_process(cache, args.target)
        os.environ["SHINE_CACHE_DIR"] = cache
        import shine
        kernel = shine.compile(SOURCE, "saxpy", target=args.target)
        assert kernel.in_process
        by_ctypes, (a, x, y) = ctypes_call(kernel, cache)
        assert np.array_equal(by_ctypes(), kernel(np.float32(2), x, y))
        a0 = np.float32(2)
        shine_us = median_us(lambda: kernel(a0, x, y), args.calls)
        ctypes_us = median_us(by_ctypes, args.calls)
        out = np.empty(N, dtype=np.float32)
        out_us = median_us(lambda: kernel(a0, x, y, out=out), args.calls)
    print(f"target {args.target}, {N} float32 elements, median of {args.calls} calls")
    print(f"  shine call         {shine_us:8.2f} us")
    print(f"  shine call, out=   {out_us:8.2f} us")
    print(f"  ctypes call        {ctypes_us:8.2f} us")
    print(f"  ratio shine/ctypes {shine_us / ctypes_us:8.2f}   (goal <= 1.5, and < 10 us)")
    print(f"compile, first process  {first * 1e3:8.1f} ms (empty cache)")
    print(f"compile, second process {second * 1e3:8.1f} ms (cached)")
    print(f"  speed-up {first / second:8.1f}x   (goal >= 20x)")


if __name__ == "__main__":
    main()
