#!/usr/bin/env bash
# shine's GPU kernels against the GPU anchors (cuBLAS through PyTorch with TF32 off, the
# hand-written CUDA kernels of bench/gpu_kernels.cu, a device-to-device copy), side by side and
# interleaved, in one call on a GPU machine: prints a Markdown table (case, shine median ms,
# TFLOP/s or TB/s, anchor, anchor figure, ratio) and writes every measurement as JSON.
#
# Usage (on the GPU machine, from anywhere; it has no Rust toolchain, so the release binary is
# built elsewhere and carried along, e.g. in an untracked gpu-bins/):
#   scripts/gpu-bench.sh path/to/shine [--json FILE] [--quick] [--case NAME]... [--rounds R]
#                        [--runs N] [--targets cuda,opencl] [--add 'CASE::LABEL::...']
# The options are bench/gpu_anchors.py's (see its doc string and bench/gpu_README.md). Needs
# python3 with PyTorch and numpy, and nvcc for the hand-written kernels (without nvcc, their
# rows say so). Registers the NVIDIA OpenCL driver with the ICD loader when no ICD file names
# it and makes NVRTC findable, as scripts/gpu-examples.sh does.
set -uo pipefail

if [ $# -lt 1 ]; then
  sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//'
  exit 2
fi
shine="$(realpath "$1")"
shift
chmod +x "$shine" 2>/dev/null || true
root="$(cd "$(dirname "$0")/.." && pwd)"

if /sbin/ldconfig -p 2>/dev/null | grep -q 'libnvidia-opencl' &&
  ! grep -qs 'libnvidia-opencl' /etc/OpenCL/vendors/*.icd; then
  mkdir -p /etc/OpenCL/vendors
  echo libnvidia-opencl.so.1 >/etc/OpenCL/vendors/nvidia.icd
  echo "registered /etc/OpenCL/vendors/nvidia.icd" >&2
fi
if ! /sbin/ldconfig -p 2>/dev/null | grep 'libnvrtc\.so' >/dev/null; then
  for dir in /usr/local/cuda/lib64 /usr/local/cuda/targets/x86_64-linux/lib; do
    if ls "$dir"/libnvrtc.so* >/dev/null 2>&1; then
      export LD_LIBRARY_PATH="$dir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
      break
    fi
  done
fi
export SHINE_OPENCL_DEVICE="${SHINE_OPENCL_DEVICE:-gpu}"
command -v nvidia-smi >/dev/null &&
  nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv,noheader >&2

kernels=()
nvcc="$(command -v nvcc || ls /usr/local/cuda/bin/nvcc 2>/dev/null || true)"
if [ -n "$nvcc" ]; then
  bin="$(mktemp -d)/gpu_kernels"
  arch="$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -1 | tr -d '.')"
  if "$nvcc" -O3 -arch="sm_${arch:-90}" -o "$bin" "$root/bench/gpu_kernels.cu"; then
    kernels=(--kernels "$bin")
  else
    echo "nvcc failed: the hand-written kernels are left out" >&2
  fi
else
  echo "no nvcc: the hand-written kernels are left out" >&2
fi

cd "$root" && exec python3 bench/gpu_anchors.py --shine "$shine" "${kernels[@]}" "$@"
