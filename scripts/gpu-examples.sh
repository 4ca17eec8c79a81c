#!/usr/bin/env bash
# The GPU examples on a GPU machine, in one call: every line of examples/gpu_cases.txt is
# compiled, run on random inputs and verified against the interpreter under OpenCL (the
# NVIDIA platform) and CUDA (NVRTC); the CUDA runs are then repeated under compute-sanitizer
# (memcheck and racecheck); finally a few benchmarks print their kernel times.
#
# Usage (on the GPU machine, from the repository root; it has no Rust toolchain, so the
# release binary is built elsewhere and carried along, e.g. in an untracked gpu-bins/):
#   scripts/gpu-examples.sh path/to/shine [--no-sanitizer] [--no-bench]
#
# Registers the NVIDIA OpenCL driver with the ICD loader when no ICD file names it and
# makes NVRTC findable, as scripts/gpu-device-check.sh does. Exits non-zero when any run
# fails or any sanitizer reports an error.
set -uo pipefail

if [ $# -lt 1 ]; then
  sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//'
  exit 2
fi
shine="$1"
shift
sanitize=1
bench=1
for arg in "$@"; do
  case "$arg" in
    --no-sanitizer) sanitize=0 ;;
    --no-bench) bench=0 ;;
    *) echo "unknown option $arg" >&2; exit 2 ;;
  esac
done
chmod +x "$shine" 2>/dev/null || true
cd "$(dirname "$0")/.."

if /sbin/ldconfig -p 2>/dev/null | grep -q 'libnvidia-opencl' &&
  ! grep -qs 'libnvidia-opencl' /etc/OpenCL/vendors/*.icd; then
  mkdir -p /etc/OpenCL/vendors
  echo libnvidia-opencl.so.1 >/etc/OpenCL/vendors/nvidia.icd
  echo "registered /etc/OpenCL/vendors/nvidia.icd"
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
sanitizer="$(command -v compute-sanitizer || ls /usr/local/cuda/bin/compute-sanitizer 2>/dev/null || true)"
command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,driver_version --format=csv,noheader

failed=0
pass=0
report() { # status, description
  if [ "$1" -eq 0 ]; then pass=$((pass + 1)); echo "ok    $2"; else failed=$((failed + 1)); echo "FAIL  $2"; fi
}

# Every case once per pass: the runs on both targets first, then the sanitizer runs.
for pass_kind in run sanitize; do
  [ "$pass_kind" = sanitize ] && [ $sanitize -eq 0 ] && continue
  [ "$pass_kind" = sanitize ] && echo "== compute-sanitizer ($sanitizer)"
while read -r prog def elv strategy sizes; do
  case "$prog" in ''|'#'*) continue ;; esac
  nats=()
  for s in $sizes; do nats+=(--nat "$s"); done
  common=(examples/"$prog" --def "$def" --strategy examples/"$elv" --apply "$strategy")
  if [ "$pass_kind" = run ]; then
  for target in opencl cuda; do
    out="$(timeout 120 "$shine" run "${common[@]}" --target "$target" "${nats[@]}" --random 7 --verify --json 2>&1)"
    status=$?
    [ $status -eq 0 ] && ! grep -q '"verified":true' <<<"$out" && status=1
    report $status "$target $def ($strategy, $sizes)"
    [ $status -ne 0 ] && echo "$out" | tail -20
  done
  fi
  if [ "$pass_kind" = sanitize ] && [ -n "$sanitizer" ]; then
    for tool in memcheck racecheck; do
      # API errors are left out: the runtime counts a kernel's parameters by asking
      # cuFuncGetParamInfo for one past the last, which answers CUDA_ERROR_INVALID_VALUE.
      opts=(--tool "$tool" --error-exitcode 3)
      [ "$tool" = memcheck ] && opts+=(--report-api-errors no)
      out="$(timeout 120 "$sanitizer" "${opts[@]}" "$shine" run "${common[@]}" \
        --target cuda "${nats[@]}" --random 7 --verify --json 2>&1)"
      status=$?
      # the run must have verified, and the sanitizer must have reported
      if [ $status -eq 0 ] && { ! grep -q '"verified":true' <<<"$out" || ! grep -q 'SUMMARY' <<<"$out"; }; then
        status=1
      fi
      report $status "compute-sanitizer --tool $tool: $def ($strategy)"
      [ $status -ne 0 ] && echo "$out" | tail -30
      grep -h 'SUMMARY' <<<"$out" | sed 's/^/        /'
    done
  fi
done <examples/gpu_cases.txt
done
[ $sanitize -eq 1 ] && [ -z "$sanitizer" ] && { echo "FAIL  compute-sanitizer not found"; failed=$((failed + 1)); }

if [ $bench -eq 1 ]; then
  echo "== benchmarks (kernel time, median of 10 runs)"
  run_bench() { # description, flops, shine args...
    local what="$1" flops="$2"
    shift 2
    local out
    out="$(timeout 120 "$shine" run "$@" --bench 10 --json 2>&1)"
    local ms
    ms="$(grep -o '"median_ms":[0-9.e+-]*' <<<"$out" | cut -d: -f2)"
    if [ -n "$ms" ]; then
      python3 -c "import sys; ms=float(sys.argv[1]); f=float(sys.argv[2]); print(f'{sys.argv[3]}: {ms:.3f} ms' + (f', {f/ms/1e9:.2f} TFLOP/s' if f > 0 else ''))" "$ms" "$flops" "$what" 2>/dev/null ||
        echo "$what: $ms ms"
    else
      echo "$what: no timing"; echo "$out" | tail -5
    fi
  }
  for target in cuda opencl; do
    run_bench "$target mmTiled 4096^3 (local-memory tiles, 4x4 register blocks)" 137438953472 \
      examples/gpu_mm.rise --def mmTiled --strategy examples/gpu.elv --apply lowered \
      --target "$target" --nat m=64 --nat n=64 --nat k=512 --random 1
    run_bench "$target mm 4096^3 (mmTiled(128, 8, 8, 16): the strategy's local tiles and 8x8 register blocks)" \
      137438953472 examples/mm.rise --def mm --strategy examples/gpu.elv \
      --apply "mmTiled(128, 8, 8, 16)" --target "$target" --nat m=4096 --nat n=4096 --nat k=4096 --random 1
    for b in 4 8; do
      run_bench "$target mm 4096^3 (mmBlocks($b))" 137438953472 examples/mm.rise --def mm \
        --strategy examples/gpu.elv --apply "mmBlocks($b)" --target "$target" \
        --nat m=4096 --nat n=4096 --nat k=4096 --random 1
    done
    run_bench "$target mv 8192x8192 (mvOpt)" 134217728 examples/mv.rise --def mv \
      --strategy examples/mv.elv --apply mvOpt --target "$target" --nat n=8192 --nat m=8192 --random 1
    run_bench "$target dotPartial 2^24 (reduceWorkGroup)" 33554432 examples/gpu_reduce.rise \
      --def dotPartial --strategy examples/gpu.elv --apply reduceWorkGroup --target "$target" \
      --nat n=65536 --random 1
    run_bench "$target heat3d 256^3 (global3d)" 0 examples/heat3d.rise --def heat3d \
      --strategy examples/gpu.elv --apply global3d --target "$target" \
      --nat o=256 --nat n=256 --nat m=256 --random 1
  done
fi

echo "== $pass passed, $failed failed"
[ $failed -eq 0 ]
