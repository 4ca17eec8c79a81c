#!/usr/bin/env bash
# The CLI tests that have a CUDA variant, on a GPU machine: each test binary (built elsewhere
# with `cargo test --no-run`, since the GPU machine has no Rust toolchain) runs with
# SHINE_TEST_GPU=1, which adds `--target cuda` to its targets, and with OpenCL on the GPU.
# The binaries find the shine binary and the examples at the paths of the build machine
# (CARGO_BIN_EXE_shine, CARGO_MANIFEST_DIR): this script links that checkout's path to this
# one and puts the given shine binary where the tests look for it.
#
# Usage (on the GPU machine, from the repository root):
#   scripts/gpu-tests.sh BUILD-ROOT SHINE TEST-BINARY...
# e.g. scripts/gpu-tests.sh /work/main gpu-bins/shine gpu-bins/tests/*
# SHINE_TEST_FILTER=NAME runs only the tests whose names contain NAME.
set -uo pipefail

if [ $# -lt 3 ]; then
  sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//'
  exit 2
fi
build_root="$1"
shine="$2"
shift 2
here="$(pwd)"
if [ "$(realpath "$build_root" 2>/dev/null)" != "$here" ]; then
  if [ -e "$build_root" ]; then
    echo "$build_root exists and is not this checkout" >&2
    exit 2
  fi
  mkdir -p "$(dirname "$build_root")"
  ln -s "$here" "$build_root"
fi
mkdir -p target/debug
cp "$shine" target/debug/shine
chmod +x target/debug/shine "$@"
if /sbin/ldconfig -p 2>/dev/null | grep -q 'libnvidia-opencl' &&
  ! grep -qs 'libnvidia-opencl' /etc/OpenCL/vendors/*.icd; then
  mkdir -p /etc/OpenCL/vendors
  echo libnvidia-opencl.so.1 >/etc/OpenCL/vendors/nvidia.icd
fi
export SHINE_OPENCL_DEVICE="${SHINE_OPENCL_DEVICE:-gpu}" SHINE_TEST_GPU=1
failed=0
for t in "$@"; do
  echo "== $t"
  "$t" --test-threads 4 ${SHINE_TEST_FILTER:+"$SHINE_TEST_FILTER"} >"$t.log" 2>&1
  status=$?
  grep -v '^$' "$t.log" | tail -40
  [ $status -eq 0 ] || failed=$((failed + 1))
done
echo "== $failed test binaries failed"
[ "$failed" -eq 0 ]
