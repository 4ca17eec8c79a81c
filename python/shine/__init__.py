"""shine: compile RISE definitions, lowered by ELEVATE strategies, to C, OpenMP, OpenCL or
CUDA, and call them on numpy arrays.

Quick start::

    import numpy as np, shine
    k = shine.compile("def scal : {n: nat} -> f32 -> n.f32 -> n.f32 = "
                      "fun a xs => xs |> map (fun x => a * x)", "scal", target="openmp")
    y = k(np.float32(2), np.arange(4, dtype=np.float32))   # array([0., 2., 4., 6.])

API
---
``compile(source_or_path, def_name, strategy=None, target="c", *, strategy_file=None,
fast_math=False, cflags=None, cc="gcc", budget=None, unchecked_indices=False) -> Kernel``
    ``source_or_path`` is program text, or a path (``os.PathLike``, or a string naming a
    ``.rise`` file). ``strategy=None`` applies the target's default schedule; otherwise it is
    an ELEVATE expression or the name of a strategy defined in ``strategy_file`` (a ``.elv``
    path or text) or, without one, of the built-in schedules (``shine strategies``), as the
    command line's ``--strategy``/``--apply`` take them. ``target`` is ``"c"``, ``"openmp"``,
    ``"opencl"`` or ``"cuda"``. ``fast_math``, ``cflags``, ``cc``, ``budget`` and
    ``unchecked_indices`` are the command line's options of those names.

``Kernel(*arrays, out=None, **sizes)``
    Runs the definition. Inputs are numpy arrays, objects with ``__dlpack__`` in host memory
    (converted by ``numpy.from_dlpack``, without a copy) or anything ``numpy.asarray`` takes.
    Sizes are inferred from the shapes; those no shape gives are keyword arguments
    (``k(x, n=8)``, the command line's ``--nat``). Returns a numpy array, or a tuple of arrays
    for a tuple. With ``out=`` (an array, or a tuple of arrays, of the result's shapes and
    dtypes) the result is written there and ``out`` returned. Dtypes are the command line's
    ``.npy`` rules: every scalar type (``int`` is int32), arrays of tuples as structured arrays
    (or with one more axis when the components share a dtype), vectors with one more axis of
    the lanes, ``idx[n]`` and ``natType`` as any integer dtype (checked to be in range), and
    results of indices or naturals as int64. The GIL is released while the code runs.

    C and OpenMP code runs in this process: plain C-contiguous arrays of the parameters'
    exact dtypes are passed without a copy (microseconds a call). Code that calls foreign
    functions, or is built with ``fast_math`` (which would set flush-to-zero in this
    process), runs in a child process; OpenCL and CUDA code on its device (numpy inputs are
    copied there and back).

    A kernel compiled for ``target="cuda"`` also takes arrays in CUDA memory (PyTorch, CuPy or
    JAX arrays: a ``__dlpack__`` of device type 2) and uses them in place, without copies:
    every input then on the device (a scalar as a 0-dimensional tensor), each a C-contiguous
    array of its parameter's exact dtype (16-bit floats included) on CUDA device 0, the
    parameters and the result plain arrays (no tuples of arrays' elements, no indices). The
    result is written to ``out=`` (CUDA arrays) or returned as ``DeviceArray`` objects. Host and
    device arrays in one call, or CUDA arrays with another target, raise ``InputError``.

``DeviceArray``
    A result in CUDA memory: ``shape``, ``dtype`` (a name, ``"float32"``), ``nbytes``,
    ``numpy()`` (a copy in host memory) and the DLPack protocol (``torch.from_dlpack(r)``
    takes it without a copy; it is freed when the last user lets it go).

``Kernel.source``, ``Kernel.type``, ``Kernel.explain()``
    The generated code, the definition's type, and the schedule that lowered it (what
    ``shine compile --explain`` prints). Also ``def_name``, ``target`` and ``in_process``.

``eval(source_or_path, def_name, *arrays, cc="gcc", **sizes)``
    The reference interpreter on the same inputs: what compiled code must agree with.

``explore(source_or_path, def_name, strategy_file, template, target="c", *, params,
require=(), verify_sizes, time_sizes=None, methods=("solver",), budget=None, time=None,
log=None, resume=None, seed=1, runs=5, db=None, jobs=1, devices=None, cluster=None)
-> ExploreResult``
    Tunes the parameters of a strategy template, as ``shine explore --param`` does:
    ``template`` is an expression over ``strategy_file``'s definitions naming the parameters
    (``"mmSplitK(tm, tn, rm, rn, kb, wm, wn)"``); ``params`` gives each a list of values, a
    value, or an expression of those before it (``{"tm": [64, 128], "rm": [4, 8], "wm":
    "tm/rm"}``; a parameter the template does not name is a size of the program);
    ``require`` lists conditions (``"wm*wn<=1024"``). Every candidate is compiled once,
    verified against the interpreter at the first of ``verify_sizes`` (a dict of sizes or a
    list of them, cheapest first) its size constraints admit, and timed (median of ``runs``)
    at every set of ``time_sizes`` (default: the first verification set) it admits.
    ``methods`` (``"solver"``, ``"random"``, ``"evolutionary"``) run in turn, each for
    ``budget`` candidates and/or ``time`` seconds (one is needed). ``log`` writes the
    command line's JSON-lines log, ``resume`` continues one. ``db`` (a tuning database kept
    across calls), ``jobs`` (CPU workers compiling and verifying) and ``devices`` (CUDA
    devices timing) are ``--db``, ``--jobs`` and ``--devices``. ``cluster`` (a
    ``dask.distributed.Client``) measures the candidates on the cluster's workers instead,
    one Dask task per candidate (workers declaring the resource ``timing`` take one at a time;
    else start them with ``--nthreads 1``); this process keeps the search, the log and
    ``db``; a candidate whose workers died fails with the cause ``"worker lost"`` and the
    run goes on; ``jobs`` and ``devices`` are refused with it (``docs/explore.md``). The GIL is
    released while it runs; Ctrl-C (``KeyboardInterrupt``) stops it between candidates. Errors in the request
    raise ``ValueError`` or ``shine.Error`` (messages name the command line's options).

``ExploreResult``
    ``best``: per time size set, the best candidate (``None`` where none ran), a dict of
    ``ms``, ``params``, ``sizes`` (the set and the size parameters), ``method`` and
    ``strategy`` (a strategy file defining ``best``); ``best_on_every_set``,
    ``sum_of_set_bests``, ``time_sizes``. ``best_kernel(i)`` compiles the best of set ``i``
    (``None``: the best on every set) as a ``Kernel``. Counts: ``candidates`` (``valid`` +
    ``failed``), ``failures_by_cause`` (failed candidates and failures at a set, by cause),
    ``raw_assignments``, ``valid_assignments``; ``methods`` (a summary per method) and
    ``records`` (every candidate, as the log has it); ``timed`` and ``from_database`` (this
    call's candidates timed now, and taken from ``db``).

Errors are ``shine.Error``, whose message is the rendered diagnostic with its source
excerpt, as the command line prints it: ``CompileError`` (program, strategy, code generation,
C compiler), ``InputError`` (inputs that do not fit the parameters, ``out=``),
``ExecutionError`` (the code or the interpreter stopped on an error, e.g. an integer division
by zero); the class follows the pipeline stage the library reports for the error.

Compiled C and OpenMP kernels are cached in ``$SHINE_CACHE_DIR`` (default ``~/.cache/shine``),
keyed by the code, the target, the compiler, its flags and version, and this package's
version; ``cache_dir()`` names the directory.
"""

from ._shine import (
    CompileError,
    Error,
    ExecutionError,
    ExploreResult,
    DeviceArray,
    InputError,
    Kernel,
    __version__,
    cache_dir,
    compile,
    eval,
    explore,
)

__all__ = [
    "CompileError",
    "Error",
    "DeviceArray",
    "ExecutionError",
    "ExploreResult",
    "InputError",
    "Kernel",
    "__version__",
    "cache_dir",
    "compile",
    "eval",
    "explore",
]
