"""Kernels called on numpy arrays: every dtype of the .npy boundary, tuples, vectors, indices,
out=, DLPack, agreement with the interpreter, errors."""

import os
from pathlib import Path

import numpy as np
import pytest

import shine

TARGETS = ["c", "openmp"]

SCHEDULES = Path(__file__).resolve().parents[2] / "crates" / "shine" / "src" / "schedules.elv"

SCALARS = {
    "bool": np.bool_, "i8": np.int8, "i16": np.int16, "i32": np.int32, "i64": np.int64,
    "u8": np.uint8, "u16": np.uint16, "u32": np.uint32, "u64": np.uint64,
    "f32": np.float32, "f64": np.float64, "int": np.int32, "f16": np.float16,
}

SAXPY = """
def saxpy : {n: nat} -> f32 -> n.f32 -> n.f32 -> n.f32 =
  fun a xs ys => zip xs ys |> map (fun p => a * fst p + snd p)
"""

PROGRAMS = """
def mv : {n m: nat} -> n.m.f32 -> m.f32 -> n.f32 =
  fun a x => a |> map (fun row => zip row x |> map (fun p => fst p * snd p) |> reduce add 0.0f)
def dot : {n: nat} -> n.f64 -> n.f64 -> f64 =
  fun xs ys => zip xs ys |> map (fun p => fst p * snd p) |> reduce add 0.0
def minmax : {n: nat} -> n.int -> (n.int, n.int) =
  fun xs => makePair (xs |> map (fun x => x * 2)) (xs |> map (fun x => x - 1))
def swap : {n: nat} -> n.(f32, i32) -> n.(i32, f32) =
  fun ps => ps |> map (fun p => makePair (snd p) (fst p))
def lanesum : {n: nat} -> n.vec[f32, 4] -> n.f32 =
  fun vs => vs |> map (fun v => lane 0 v + lane 1 v + lane 2 v + lane 3 v)
def lookup : {n m: nat} -> m.idx[n] -> n.f32 -> m.f32 =
  fun is table => is |> map (fun i => idx i table * 2.0f)
def divide : {n: nat} -> n.i32 -> n.i32 -> n.i32 =
  fun xs ys => zip xs ys |> map (fun p => fst p / snd p)
"""


def identity(t):
    return f"def ident : {{n: nat}} -> n.{t} -> n.{t} = fun xs => xs |> map (fun x => x)"


def random(shape, dtype, rng):
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return rng.integers(0, 2, size=shape).astype(np.bool_)
    if dtype.kind in "iu":
        low = 0 if dtype.kind == "u" else -50
        return rng.integers(low, 50, size=shape).astype(dtype)
    return rng.uniform(-1, 1, size=shape).astype(dtype)


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("name", sorted(SCALARS))
def test_every_scalar_dtype_in_and_out(name, target):
    k = shine.compile(identity(name), "ident", target=target)
    assert k.in_process
    x = random(7, SCALARS[name], np.random.default_rng(1))
    y = k(x)
    assert y.dtype == x.dtype and np.array_equal(y, x)
    assert np.array_equal(shine.eval(identity(name), "ident", x), x)


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("n", [1, 7, 13])
def test_results_equal_the_interpreter_on_random_data(n, target):
    rng = np.random.default_rng(n)
    cases = [
        ("mv", (random((n, n + 2), np.float32, rng), random(n + 2, np.float32, rng))),
        ("dot", (random(n, np.float64, rng), random(n, np.float64, rng))),
        ("minmax", (random(n, np.int32, rng),)),
        ("lanesum", (random((n, 4), np.float32, rng),)),
    ]
    for name, inputs in cases:
        k = shine.compile(PROGRAMS, name, target=target)
        got, want = k(*inputs), shine.eval(PROGRAMS, name, *inputs)
        if isinstance(want, tuple):
            assert isinstance(got, tuple) and len(got) == len(want)
        for g, w in zip(np.atleast_1d(got) if not isinstance(got, tuple) else got,
                        np.atleast_1d(want) if not isinstance(want, tuple) else want):
            assert g.shape == w.shape and g.dtype == w.dtype, name
            np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-5, err_msg=name)
    s = shine.compile(SAXPY, "saxpy", target=target)
    x, y = random(n, np.float32, rng), random(n, np.float32, rng)
    np.testing.assert_allclose(s(np.float32(0.5), x, y),
                               shine.eval(SAXPY, "saxpy", np.float32(0.5), x, y), rtol=1e-6)


def test_a_scalar_result_is_a_zero_dimensional_array():
    k = shine.compile(PROGRAMS, "dot")
    r = k(np.ones(3), np.arange(3.0))
    assert r.shape == () and r.dtype == np.float64 and float(r) == 3.0


def test_tuples_as_structured_arrays_and_with_one_more_axis():
    k = shine.compile(PROGRAMS, "swap", target="openmp")
    ps = np.zeros(5, dtype=[("re", "<f4"), ("k", "<i4")])
    ps["re"], ps["k"] = np.arange(5) * 0.5, np.arange(5) - 2
    out = k(ps)
    assert out.dtype.names == ("f0", "f1")
    assert np.array_equal(out["f0"], ps["k"]) and np.array_equal(out["f1"], ps["re"])
    assert np.array_equal(out, shine.eval(PROGRAMS, "swap", ps))
    # a tuple result is a tuple of arrays
    a, b = shine.compile(PROGRAMS, "minmax")(np.arange(4, dtype=np.int32))
    assert a.tolist() == [0, 2, 4, 6] and b.tolist() == [-1, 0, 1, 2]


def test_vectors_have_one_more_axis():
    k = shine.compile(PROGRAMS, "lanesum")
    v = np.arange(12, dtype=np.float32).reshape(3, 4)
    assert k(v).tolist() == [6.0, 22.0, 38.0]
    with pytest.raises(shine.InputError, match="whose last extent is 4"):
        k(np.zeros((3, 3), dtype=np.float32))


def test_indices_from_any_integer_dtype_checked_to_be_in_range():
    k = shine.compile(PROGRAMS, "lookup")
    table = np.arange(4, dtype=np.float32)
    for dtype in (np.int64, np.uint8, np.int16):
        assert k(np.array([3, 0, 1], dtype=dtype), table).tolist() == [6.0, 0.0, 2.0]
    with pytest.raises(shine.InputError, match=r"is 4, outside the range 0\.\.4 of its type"):
        k(np.array([0, 4]), table)


def test_out_is_written_and_returned():
    k = shine.compile(SAXPY, "saxpy", target="openmp")
    x, y = np.arange(6, dtype=np.float32), np.ones(6, dtype=np.float32)
    out = np.zeros(6, dtype=np.float32)
    assert k(np.float32(2), x, y, out=out) is out
    assert out.tolist() == [1, 3, 5, 7, 9, 11]
    with pytest.raises(shine.InputError, match="out=: part 0 must be a float32 array of shape"):
        k(np.float32(2), x, y, out=np.zeros(5, dtype=np.float32))
    with pytest.raises(shine.InputError, match="overlaps input 2"):
        k(np.float32(2), x, y, out=x)
    # the general path (a tuple result, arrays of tuples) writes out= too
    a, b = np.zeros(3, dtype=np.int32), np.zeros(3, dtype=np.int32)
    shine.compile(PROGRAMS, "minmax")(np.arange(3, dtype=np.int32), out=(a, b))
    assert a.tolist() == [0, 2, 4] and b.tolist() == [-1, 0, 1]


def test_strided_and_other_arrays_take_the_general_path():
    k = shine.compile(SAXPY, "saxpy")
    x = np.arange(12, dtype=np.float32)[::2]
    y = np.ones(6, dtype=np.float32)
    assert k(np.float32(2), x, y).tolist() == (2 * x + 1).tolist()
    # a Python list is converted by numpy (to float64, which the parameter refuses)
    with pytest.raises(shine.InputError, match="must be f32"):
        k(np.float32(1), [1.0] * 6, y)


def test_sizes_no_shape_gives_are_keywords():
    src = "def fill : {n: nat} -> f32 -> n.f32 = fun x => generate (fun i => x)"
    k = shine.compile(src, "fill")
    assert k(np.float32(3), n=4).tolist() == [3.0] * 4
    with pytest.raises(shine.InputError, match="--nat n=V|n=V"):
        k(np.float32(3))
    with pytest.raises(shine.InputError, match="negative"):
        k(np.float32(3), n=-1)


class HostDLPack:
    """An array that is not numpy's, offering DLPack in host memory."""

    def __init__(self, array, device=(1, 0)):
        self.array, self.device = array, device

    def __dlpack__(self, **kwargs):
        return self.array.__dlpack__(**kwargs)

    def __dlpack_device__(self):
        return self.device


def test_dlpack_inputs_from_host_memory():
    k = shine.compile(SAXPY, "saxpy")
    x, y = np.arange(5, dtype=np.float32), np.ones(5, dtype=np.float32)
    got = k(np.float32(2), HostDLPack(x), HostDLPack(y))
    assert got.tolist() == (2 * x + 1).tolist()
    with pytest.raises(shine.InputError, match='compiled for target c: compile it with target="cuda"'):
        k(np.float32(2), HostDLPack(x, device=(2, 0)), y)
    with pytest.raises(shine.InputError, match="on device type 10 .* shine takes arrays in host"):
        k(np.float32(2), HostDLPack(x, device=(10, 0)), y)


def test_dlpack_from_torch():
    torch = pytest.importorskip("torch")
    k = shine.compile(SAXPY, "saxpy")
    x = torch.arange(5, dtype=torch.float32)
    y = torch.ones(5, dtype=torch.float32)
    assert k(np.float32(2), x, y).tolist() == [1, 3, 5, 7, 9]


def test_wrong_shapes_and_dtypes_raise_the_command_lines_messages():
    k = shine.compile(SAXPY, "saxpy")
    x = np.zeros(4, dtype=np.float32)
    with pytest.raises(shine.InputError) as e:
        k(np.float32(1), x.astype(np.float64), x)
    assert str(e.value) == (
        "error: `input 2` does not fit parameter 2 of `saxpy` (`n.f32`): the elements must be "
        "f32 (numpy float32), the file has float64 (f64)")
    with pytest.raises(shine.InputError, match="takes an array of 1 dimension"):
        k(np.float32(1), x.reshape(2, 2), x)
    with pytest.raises(shine.InputError, match="saxpy"):
        k(np.float32(1), x, np.zeros(5, dtype=np.float32))
    with pytest.raises(shine.InputError, match="takes 3 value parameter"):
        k(np.float32(1), x)


def test_errors_carry_the_source_excerpt():
    with pytest.raises(shine.CompileError) as e:
        shine.compile("def f : {n: nat} -> n.f32 -> n.f32 =\n  fun xs => xs |> map (fun x => x + y)",
                      "f")
    message = str(e.value)
    assert "fun xs => xs |> map (fun x => x + y)" in message and "<source>:2" in message
    with pytest.raises(shine.CompileError, match="unknown target"):
        shine.compile(SAXPY, "saxpy", target="fortran")
    with pytest.raises(shine.CompileError) as e:
        shine.compile(SAXPY, "saxpy", strategy="noSuchStrategy")
    assert "noSuchStrategy" in str(e.value)
    assert issubclass(shine.CompileError, shine.Error)


def test_a_division_by_zero_raises():
    k = shine.compile(PROGRAMS, "divide", target="openmp")
    xs, ys = np.array([4, 9], dtype=np.int32), np.array([2, 3], dtype=np.int32)
    assert k(xs, ys).tolist() == [2, 3]
    with pytest.raises(shine.ExecutionError, match="division by zero"):
        k(xs, np.array([2, 0], dtype=np.int32))
    # the interpreter's error is an execution error too (the library reports its stage)
    with pytest.raises(shine.ExecutionError, match="division by zero|divi"):
        shine.eval(PROGRAMS, "divide", xs, np.array([2, 0], dtype=np.int32))
    with pytest.raises(shine.InputError):
        shine.eval(PROGRAMS, "divide", xs, np.array([2, 0, 1], dtype=np.int32))
    with pytest.raises(shine.CompileError):
        shine.eval(PROGRAMS, "noSuchDefinition", xs, xs)


def test_fast_math_runs_in_a_child_process_and_agrees():
    k = shine.compile(SAXPY, "saxpy", fast_math=True)
    assert not k.in_process
    x, y = np.arange(4, dtype=np.float32), np.ones(4, dtype=np.float32)
    assert k(np.float32(2), x, y).tolist() == [1, 3, 5, 7]


def test_source_type_explain_and_strategies():
    k = shine.compile(SAXPY, "saxpy", target="openmp")
    assert "#pragma omp" in k.source and "saxpy_entry" in k.source
    assert k.type == "{n: nat} -> f32 -> n.f32 -> n.f32 -> n.f32"
    assert "default schedule for --target openmp" in k.explain()
    b = shine.compile(SAXPY, "saxpy", strategy="storeEveryStage", target="c")
    assert "built in" in b.explain() and "#pragma omp" not in b.source
    elv = SCHEDULES.read_text() + "\ndef mine = storeEveryStage\n"
    f = shine.compile(SAXPY, "saxpy", strategy="mine", strategy_file=elv)
    assert "`mine`" in f.explain()
    path = f.explain()
    assert "from `<strategy>`" in path
    g = shine.compile(SAXPY, "saxpy", strategy="storeEveryStage", strategy_file=SCHEDULES)
    assert "schedules.elv" in g.explain()
    x = np.ones(3, dtype=np.float32)
    assert f(np.float32(1), x, x).tolist() == [2, 2, 2]


def test_a_program_file_by_path(tmp_path):
    path = tmp_path / "saxpy.rise"
    path.write_text(SAXPY)
    for given in (path, str(path)):
        k = shine.compile(given, "saxpy")
        assert k(np.float32(1), np.ones(2, np.float32), np.ones(2, np.float32)).tolist() == [2, 2]


@pytest.mark.skipif(os.environ.get("SHINE_SKIP_OPENCL") == "1", reason="SHINE_SKIP_OPENCL=1")
def test_gpu_kernels_are_built_once_and_reused():
    k = shine.compile(SAXPY, "saxpy", target="opencl")
    assert not k.in_process and k.device_builds == 0 and "device" in repr(k)
    rng = np.random.default_rng(3)
    for n in (1, 7, 1000, 7):
        x, y = random(n, np.float32, rng), random(n, np.float32, rng)
        np.testing.assert_allclose(k(np.float32(2), x, y),
                                   shine.eval(SAXPY, "saxpy", np.float32(2), x, y), rtol=1e-6)
    # every size here fits 32-bit indices: one build for the four calls
    assert k.device_builds == 1


def test_bf16_as_bit_patterns_in_and_out():
    prog = "def twice : {n: nat} -> n.bf16 -> n.bf16 = fun xs => xs |> map (fun x => x + x)"
    bits = np.array([0x3F80, 0x4049, 0x0000, 0xBF00], dtype=np.uint16)  # 1.0, 3.140625, 0, -0.5
    got = shine.compile(prog, "twice", target="c")(bits)
    assert got.dtype == np.uint16
    assert np.array_equal(got, np.array([0x4000, 0x40C9, 0x0000, 0xBF80], dtype=np.uint16))
    assert np.array_equal(got, shine.eval(prog, "twice", bits))
