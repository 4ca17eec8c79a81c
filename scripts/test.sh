#!/usr/bin/env bash
# The whole test suite. Installs what the tests need when it is missing, then runs
# formatting, lints and every test of the workspace. Works on a fresh Debian machine.
set -euo pipefail
cd "$(dirname "$0")/.."

# --- dependencies -----------------------------------------------------------
if ! command -v cargo >/dev/null 2>&1; then
  echo "cargo is required (install Rust with rustup)" >&2
  exit 1
fi
rustup component list --installed 2>/dev/null | grep -q '^rustfmt' || rustup component add rustfmt
rustup component list --installed 2>/dev/null | grep -q '^clippy' || rustup component add clippy
# numpy is the independent reference for the example programs (tests/numpy_check.py).
if ! python3 -c 'import numpy' >/dev/null 2>&1; then
  python3 -m pip install --quiet numpy
fi
# An OpenCL platform on the CPU (PoCL) for the runtime's OpenCL tests, which fail without one
# unless SHINE_SKIP_OPENCL=1 (crates/runtime/tests/opencl.rs). PoCL does not pull in the loader.
if [ "${SHINE_SKIP_OPENCL:-}" != 1 ] &&
  { ! /sbin/ldconfig -p 2>/dev/null | grep 'libOpenCL\.so\.1' >/dev/null ||
    ! ls /etc/OpenCL/vendors/*.icd >/dev/null 2>&1; }; then
  apt-get update -qq && apt-get install -y -qq ocl-icd-libopencl1 pocl-opencl-icd
fi

# --- checks -----------------------------------------------------------------
# One build from scratch: incremental compilation would only add to the disk it takes.
export CARGO_INCREMENTAL="${CARGO_INCREMENTAL:-0}"
echo "== cargo fmt --check"
cargo fmt --all -- --check
echo "== cargo clippy -D warnings"
cargo clippy --workspace --all-targets --quiet -- -D warnings
echo "== cargo test"
cargo test --workspace --quiet
echo "== shine eval against numpy"
cargo build --release --quiet -p shine-cli
python3 tests/numpy_check.py target/release/shine
echo "== the seven matmul versions at 256x512x128 and 1024^3 against numpy"
python3 tests/mm_sizes_check.py target/release/shine
echo "== the Python package: built (release, one abi3 wheel) and tested with pytest"
python3 -m venv target/pyenv
# dask[distributed]: python/tests/test_cluster.py tunes on a local cluster of two workers
target/pyenv/bin/pip install --quiet --upgrade maturin numpy pytest "dask[distributed]"
target/pyenv/bin/pip install --quiet ./python
target/pyenv/bin/python -m pytest -q python/tests
echo "all tests passed"
