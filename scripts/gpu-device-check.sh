#!/usr/bin/env bash
# Runs prebuilt test binaries of the runtime on the GPU machine (which has no Rust toolchain).
#
# Usage (on the GPU machine, from the repository root):
#   scripts/gpu-device-check.sh BIN...
# where each BIN is a test executable built elsewhere, e.g. found with
#   cargo test -p runtime --no-run --message-format=json \
#     | jq -r 'select(.profile.test == true and .target.kind == ["test"]) | .executable'
# and carried along (for example in an untracked gpu-bins/ folder).
#
# It registers the NVIDIA OpenCL driver with the ICD loader when no ICD file names it, makes
# NVRTC findable when the CUDA toolkit's lib64 is not on the loader path, then runs every BIN
# with SHINE_OPENCL_DEVICE=gpu (override by setting it) and the test arguments in
# SHINE_TEST_ARGS (default: --nocapture). Exits non-zero when any BIN fails.
set -uo pipefail

if [ $# -eq 0 ]; then
  sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//'
  exit 2
fi

# The NVIDIA OpenCL platform: the driver ships the library but not always the ICD file.
if ! grep -qs 'libnvidia-opencl' /etc/OpenCL/vendors/*.icd; then
  mkdir -p /etc/OpenCL/vendors
  echo libnvidia-opencl.so.1 >/etc/OpenCL/vendors/nvidia.icd
  echo "registered /etc/OpenCL/vendors/nvidia.icd"
fi

# NVRTC lives in the toolkit, which is not always on the loader path.
if ! /sbin/ldconfig -p 2>/dev/null | grep 'libnvrtc\.so' >/dev/null; then
  for dir in /usr/local/cuda/lib64 /usr/local/cuda/targets/x86_64-linux/lib; do
    if ls "$dir"/libnvrtc.so* >/dev/null 2>&1; then
      export LD_LIBRARY_PATH="$dir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
      echo "NVRTC from $dir"
      break
    fi
  done
fi

export SHINE_OPENCL_DEVICE="${SHINE_OPENCL_DEVICE:-gpu}"
read -r -a test_args <<<"${SHINE_TEST_ARGS:---nocapture}"

command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
command -v clinfo >/dev/null && clinfo -l

failed=0
for bin in "$@"; do
  echo "== $bin (SHINE_OPENCL_DEVICE=$SHINE_OPENCL_DEVICE)"
  chmod +x "$bin" 2>/dev/null || true
  if ! "$bin" "${test_args[@]}"; then
    echo "FAILED: $bin"
    failed=1
  fi
done
exit $failed
