"""Kernels compiled for CUDA called on CUDA arrays (PyTorch tensors, through DLPack) without
copies. The tests that run kernels skip without PyTorch or a CUDA device; the checks made before
anything runs on a device are tested everywhere with stand-ins (`pytest -k cuda` runs both)."""

import ctypes

import numpy as np
import pytest

import shine
from test_kernels import PROGRAMS, SAXPY

SIZES = [1, 7, 13, 1031]


class Claimed:
    """An array that says it is on `device` (a CUDA one) but gives the capsule of `array` as
    it is: numpy's capsules are in host memory, so a call refuses them before any launch."""

    def __init__(self, array, device=(2, 0)):
        self.array, self.device = array, device

    def __dlpack__(self, stream=None, **kwargs):
        return self.array.__dlpack__()

    def __dlpack_device__(self):
        return self.device


@pytest.fixture
def torch():
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("no CUDA device for PyTorch")
    return torch


def cuda_kernel(source, name):
    return shine.compile(source, name, target="cuda")


# --- checks before the device: run everywhere ---------------------------------------------


def test_cuda_arrays_need_a_cuda_kernel():
    k = shine.compile(SAXPY, "saxpy", target="c")
    x = np.ones(4, dtype=np.float32)
    with pytest.raises(shine.InputError, match='compile it with target="cuda"'):
        k(Claimed(np.array(2, np.float32)), Claimed(x), Claimed(x))


def test_cuda_and_host_arrays_in_one_call_are_refused():
    k = cuda_kernel(SAXPY, "saxpy")
    x = np.ones(4, dtype=np.float32)
    with pytest.raises(shine.InputError, match="input 1 is in host memory and input 2 on CUDA"):
        k(2.0, Claimed(x), Claimed(x))
    with pytest.raises(shine.InputError, match="input 3 is in host memory and input 1 on CUDA"):
        k(Claimed(np.array(2, np.float32)), Claimed(x), x)
    with pytest.raises(shine.InputError, match="out= part 0 is in host memory"):
        k(Claimed(np.array(2, np.float32)), Claimed(x), Claimed(x), out=np.zeros(4, np.float32))


def test_cuda_arrays_are_checked_against_the_parameters():
    k = cuda_kernel(SAXPY, "saxpy")
    a, x = Claimed(np.array(2, np.float32)), np.ones(6, dtype=np.float32)
    with pytest.raises(shine.InputError, match="input 2: the elements must be float32, the array has float64"):
        k(a, Claimed(x.astype(np.float64)), Claimed(x))
    with pytest.raises(shine.InputError, match="input 3: .* is not contiguous in row-major order"):
        k(a, Claimed(x[:3]), Claimed(x[::2]))
    with pytest.raises(shine.InputError, match=r"input 2 has 2 dimension\(s\), parameter 2 of `saxpy` takes an array of 1"):
        k(a, Claimed(x.reshape(2, 3)), Claimed(x))
    with pytest.raises(shine.InputError, match=r"input 3 has shape \(5,\), which does not fit .* needs n = 6"):
        k(a, Claimed(x), Claimed(x[:5]))
    with pytest.raises(shine.InputError, match="takes 3 inputs, 2 given"):
        k(a, Claimed(x))
    mv = cuda_kernel(PROGRAMS, "mv")
    with pytest.raises(shine.InputError, match=r"input 2 has shape \(4,\), which does not fit"):
        mv(Claimed(np.ones((3, 5), np.float32)), Claimed(np.ones(4, np.float32)))


def test_cuda_definitions_of_tuples_take_numpy_arrays():
    k = cuda_kernel(PROGRAMS, "swap")
    pairs = np.zeros(3, dtype=[("f0", np.float32), ("f1", np.int32)])
    with pytest.raises(shine.InputError, match="cannot take CUDA arrays: its parameters and result must be plain arrays"):
        k(Claimed(pairs))


def test_cuda_host_memory_behind_a_cuda_claim_never_runs():
    # a capsule of host memory from an array claiming CUDA: refused (after the kernels are
    # built, which needs a GPU: without one, that is the error)
    k = cuda_kernel(SAXPY, "saxpy")
    x = np.ones(4, dtype=np.float32)
    with pytest.raises(shine.Error, match="device type 1, not CUDA|CUDA|NVRTC"):
        k(Claimed(np.array(2, np.float32)), Claimed(x), Claimed(x))


# --- on a CUDA device, with PyTorch ---------------------------------------------------------


@pytest.mark.parametrize("n", SIZES)
def test_cuda_tensors_in_agree_with_numpy_and_torch(torch, n):
    g = torch.Generator().manual_seed(n)
    a = torch.tensor(1.5)
    x, y = torch.rand(n, generator=g), torch.rand(n, generator=g)
    m = torch.rand(n, n + 2, generator=g)
    v = torch.rand(n + 2, generator=g)
    p, q = torch.rand(n, dtype=torch.float64, generator=g), torch.rand(n, dtype=torch.float64, generator=g)
    saxpy, mv, dot = cuda_kernel(SAXPY, "saxpy"), cuda_kernel(PROGRAMS, "mv"), cuda_kernel(PROGRAMS, "dot")
    cases = [
        (saxpy, (a, x, y), a * x + y),
        (mv, (m, v), m @ v),
        (dot, (p, q), (p * q).sum()),
    ]
    for k, inputs, expected in cases:
        on_device = k(*[t.cuda() for t in inputs])
        assert isinstance(on_device, shine.DeviceArray)
        got = torch.from_dlpack(on_device)
        assert got.device.type == "cuda" and tuple(got.shape) == tuple(expected.shape)
        on_host = k(*[t.numpy() for t in inputs])  # the same kernel, through host memory
        np.testing.assert_allclose(on_device.numpy(), on_host, rtol=1e-6)
        torch.testing.assert_close(got.cpu(), expected, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("n", SIZES)
def test_cuda_out_is_written_in_place(torch, n):
    k = cuda_kernel(SAXPY, "saxpy")
    a = torch.tensor(2.0, device="cuda")
    x = torch.arange(n, dtype=torch.float32, device="cuda")
    y = torch.ones(n, device="cuda")
    out = torch.full((n,), -1.0, device="cuda")
    pointer = out.data_ptr()
    assert k(a, x, y, out=out) is out
    assert out.data_ptr() == pointer
    torch.testing.assert_close(out, 2 * x + 1)
    # a view with an offset into its storage (DLPack's byte_offset)
    big = torch.zeros(n + 3, device="cuda")
    k(a, x, y, out=big[3:])
    torch.testing.assert_close(big[3:], 2 * x + 1)
    assert big[:3].abs().sum().item() == 0
    with pytest.raises(shine.InputError, match="overlaps input 2"):
        k(a, x, y, out=x)


def test_cuda_results_of_tuples_and_out_tuples(torch):
    k = cuda_kernel(PROGRAMS, "minmax")
    xs = torch.arange(-3, 8, dtype=torch.int32, device="cuda")
    twice, less = k(xs)
    assert isinstance(twice, shine.DeviceArray) and twice.dtype == "int32" and twice.shape == (11,)
    assert torch.equal(torch.from_dlpack(twice), xs * 2)
    assert np.array_equal(less.numpy(), xs.cpu().numpy() - 1)
    outs = (torch.empty_like(xs), torch.empty_like(xs))
    assert k(xs, out=outs) is outs
    assert torch.equal(outs[0], xs * 2) and torch.equal(outs[1], xs - 1)
    with pytest.raises(shine.InputError, match="has 2 part"):
        k(xs, out=outs[0])


def test_cuda_device_arrays_chain_and_share_memory(torch):
    k = cuda_kernel(SAXPY, "saxpy")
    a = torch.tensor(3.0, device="cuda")
    x = torch.ones(5, device="cuda")
    r = k(a, x, x)
    assert "DeviceArray" in repr(r) and r.nbytes == 20 and r.__dlpack_device__() == (2, 0)
    again = k(a, r, x)  # a result is an input of the next call, still on the device
    assert again.numpy().tolist() == [13.0] * 5
    t1, t2 = torch.from_dlpack(r), torch.from_dlpack(r)
    assert t1.data_ptr() == t2.data_ptr()  # no copy: both views of the result's memory
    del r
    assert t1.tolist() == [4.0] * 5


def test_cuda_non_contiguous_tensors_are_refused(torch):
    mv = cuda_kernel(PROGRAMS, "mv")
    m = torch.rand(6, 4, device="cuda")
    with pytest.raises(shine.InputError, match=r"input 1: .* not contiguous .*`x\.contiguous\(\)`"):
        mv(m.t(), torch.rand(6, device="cuda"))
    torch.testing.assert_close(
        torch.from_dlpack(mv(m.t().contiguous(), torch.ones(6, device="cuda"))).cpu(), m.sum(0).cpu()
    )
    k = cuda_kernel(SAXPY, "saxpy")
    x = torch.rand(10, device="cuda")
    with pytest.raises(shine.InputError, match="input 2: .* not contiguous"):
        k(torch.tensor(1.0, device="cuda"), x[::2], x[:5])


class OnAnotherDevice:
    """A CUDA tensor whose DLPack tensor says CUDA device `id` (patched in the capsule)."""

    def __init__(self, tensor, id):
        self.tensor, self.id = tensor, id

    def __dlpack__(self, **kwargs):
        capsule = self.tensor.__dlpack__(**kwargs)
        get = ctypes.pythonapi.PyCapsule_GetPointer
        get.restype, get.argtypes = ctypes.c_void_p, [ctypes.py_object, ctypes.c_char_p]
        tensor = get(capsule, b"dltensor")
        ctypes.c_int32.from_address(tensor + 12).value = self.id  # DLTensor.device.device_id
        return capsule

    def __dlpack_device__(self):
        return (2, self.id)


def test_cuda_tensors_on_another_device_are_refused(torch):
    k = cuda_kernel(SAXPY, "saxpy")
    a, x = torch.tensor(1.0, device="cuda"), torch.ones(4, device="cuda")
    with pytest.raises(shine.InputError, match="input 3 is on CUDA device 1, but the kernels run on CUDA device 0"):
        k(a, x, OnAnotherDevice(x, 1))
    if torch.cuda.device_count() > 1:
        with pytest.raises(shine.InputError, match="input 2 is on CUDA device 1"):
            k(a, x.to("cuda:1"), x)


def test_cuda_sixteen_bit_floats_and_errors_of_the_code(torch):
    ident = cuda_kernel(
        "def ident : {n: nat} -> n.f16 -> n.f16 = fun xs => xs |> map (fun x => x)", "ident")
    h = torch.rand(7, device="cuda").half()
    r = ident(h)
    assert r.dtype == "float16" and torch.equal(torch.from_dlpack(r), h)
    divide = cuda_kernel(PROGRAMS, "divide")
    xs = torch.arange(5, dtype=torch.int32, device="cuda")
    with pytest.raises(shine.ExecutionError, match="division by zero"):
        divide(xs, xs)
