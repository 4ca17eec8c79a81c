"""The kernel cache: a corrupted entry is reported and rebuilt, two processes compiling the
same kernel at once both succeed, a second process finds the kernel."""

import os
import subprocess
import sys
import warnings

import numpy as np

SOURCE = """
def twice : {n: nat} -> n.f32 -> n.f32 = fun xs => xs |> map (fun x => x + x)
"""

CHILD = f"""
import numpy as np, shine, warnings, sys
warnings.simplefilter("always")
k = shine.compile({SOURCE!r}, "twice", target="openmp")
assert k(np.arange(3, dtype=np.float32)).tolist() == [0.0, 2.0, 4.0]
print("ok", k.in_process)
"""


def run_child(cache):
    env = dict(os.environ, SHINE_CACHE_DIR=str(cache))
    return subprocess.Popen([sys.executable, "-c", CHILD], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def finish(child):
    out, err = child.communicate(timeout=300)
    assert child.returncode == 0, err
    return out, err


def test_two_processes_compiling_the_same_kernel_at_once_both_succeed(tmp_path):
    children = [run_child(tmp_path) for _ in range(3)]
    for child in children:
        out, err = finish(child)
        assert out.strip() == "ok True" and "corrupted" not in err
    names = sorted(os.listdir(tmp_path))
    assert not [n for n in names if ".tmp" in n], names
    assert sum(n.endswith(".so") for n in names) == 1


def test_a_corrupted_entry_is_reported_and_rebuilt(tmp_path):
    finish(run_child(tmp_path))
    library = next(p for p in tmp_path.iterdir() if p.suffix == ".so")
    data = library.read_bytes()
    library.write_bytes(data[: len(data) // 2])
    out, err = finish(run_child(tmp_path))
    assert out.strip() == "ok True"
    assert "corrupted" in err and "rebuilt" in err
    assert library.read_bytes() == data or len(library.read_bytes()) > len(data) // 2
    # the front end's entry too
    front = next(p for p in tmp_path.iterdir() if p.suffix == ".front")
    front.write_text(front.read_text()[:-20])
    out, err = finish(run_child(tmp_path))
    assert out.strip() == "ok True" and "corrupted" in err
    out, err = finish(run_child(tmp_path))
    assert "corrupted" not in err


def test_a_cached_kernel_takes_every_path(tmp_path):
    finish(run_child(tmp_path))
    code = f"""
import numpy as np, shine
k = shine.compile({SOURCE!r}, "twice", target="openmp")
print(k.type)
print(k(np.arange(3, dtype=np.float64).astype(np.float32)[::-1].copy()).tolist())
try:
    k(np.arange(3.0))
except shine.InputError as e:
    print("refused", "does not fit parameter 1" in str(e))
"""
    env = dict(os.environ, SHINE_CACHE_DIR=str(tmp_path))
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         check=True).stdout.split("\n")
    assert out[:3] == ["{n: nat} -> n.f32 -> n.f32", "[4.0, 2.0, 0.0]", "refused True"]
