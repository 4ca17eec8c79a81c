#!/usr/bin/env bash
# The semantics cases of tests/semantics.rise (issue 13) on a GPU machine: each definition
# runs on the inputs crates/shine-cli/tests/semantics_cli.rs gives it, under CUDA and OpenCL on
# the GPU, verified against the interpreter (the printed result is checked too); the
# division-by-zero cases must stop with the interpreter's message; repeatSum at 47,000
# elements needs 64-bit indices (its loop runs 2,209,000,000 times).
#
# Usage (on the GPU machine, from the repository root; numpy is needed for the inputs):
#   scripts/gpu-semantics.sh path/to/shine [targets, default "cuda opencl"]
set -uo pipefail

if [ $# -lt 1 ]; then
  sed -n '2,9p' "$0" | sed 's/^# \{0,1\}//'
  exit 2
fi
shine="$(realpath "$1")"
targets="${2:-cuda opencl}"
chmod +x "$shine" 2>/dev/null || true
cd "$(dirname "$0")/.."
if /sbin/ldconfig -p 2>/dev/null | grep -q 'libnvidia-opencl' &&
  ! grep -qs 'libnvidia-opencl' /etc/OpenCL/vendors/*.icd; then
  mkdir -p /etc/OpenCL/vendors
  echo libnvidia-opencl.so.1 >/etc/OpenCL/vendors/nvidia.icd
fi
export SHINE_OPENCL_DEVICE="${SHINE_OPENCL_DEVICE:-gpu}"

dir="$(mktemp -d)"
trap 'rm -rf "$dir"' EXIT
python3 - "$dir" <<'EOF'
import sys
import numpy as np
d = sys.argv[1]
inputs = {
    "u16a": np.array([60000, 1, 40000], np.uint16), "u16b": np.array([60000, 3, 30000], np.uint16),
    "i8a": np.array([100, -128, 7], np.int8), "i8b": np.array([3, -1, -128], np.int8),
    "u8a": np.array([200, 1], np.uint8), "u8b": np.array([100, 1], np.uint8),
    "i32a": np.array([2**31 - 1, 65536, -3], np.int32), "i32b": np.array([2, 65536, 4], np.int32),
    "diva": np.array([7, -2**31, 5], np.int32), "divz": np.array([2, -1, 0], np.int32),
    "divb": np.array([2, -1, -5], np.int32),
    "i64a": np.array([-2**63, 7, -7], np.int64), "i64b": np.array([-1, 3, 3], np.int64),
    "i64z": np.array([-1, 0, 3], np.int64),
    "fa": np.array([-np.inf, 1, 0, np.nan], np.float32), "fb": np.array([0, 0, 0, 1], np.float32),
    "x": np.array([1.0, 0.5, 1e30], np.float32),
    "v3a": np.array([1, 2, 3], np.float32), "v3b": np.array([4, 5, 6], np.float32),
    "v4": np.array([1, 2, 3, 4], np.float32),
    "rows": np.array([[1, 2, 3], [10, 20, 30]], np.float32),
    "small": np.arange(1, 6, dtype=np.int64), "ones": np.ones(47000, np.int64),
}
for name, a in inputs.items():
    np.save(f"{d}/{name}.npy", a)
EOF

failed=0
pass=0
# case: target, definition, expected printed result (or `error: MESSAGE`), inputs...
check() {
  local target="$1" def="$2" want="$3"
  shift 3
  local args=(run tests/semantics.rise --def "$def" --strategy examples/cpu.elv --apply sequential
    --target "$target")
  local n
  n="$(python3 -c "import numpy as np; print(np.load('$dir/$1.npy').shape[0])")"
  args+=(--nat "n=$n")
  for i in "$@"; do args+=(--input "$dir/$i.npy"); done
  case "$want" in
    error:*) ;;
    # the interpreter takes minutes on 2.2e9 iterations: compare with the known sum only
    2209000000) ;;
    *) args+=(--verify) ;;
  esac
  local out status
  out="$(timeout 300 "$shine" "${args[@]}" 2>&1)"
  status=$?
  case "$want" in
    error:*)
      if [ $status -ne 0 ] && grep -qF "${want#error: }" <<<"$out"; then status=0; else status=1; fi ;;
    *)
      if [ $status -eq 0 ] && grep -qxF -- "$want" <<<"$out"; then status=0; else status=1; fi ;;
  esac
  if [ $status -eq 0 ]; then
    pass=$((pass + 1))
    echo "ok    $target $def"
  else
    failed=$((failed + 1))
    echo "FAIL  $target $def: wanted $want"
    echo "$out" | tail -8
  fi
}

for t in $targets; do
  check "$t" narrowAverage "[27232, 2, 2232]" u16a u16b
  check "$t" narrowOps "[-41, 127, 0]" i8a i8b
  check "$t" narrowLess "[true, false]" u8a u8b
  check "$t" floatEqual "[true, true, true, false]" fa
  check "$t" signedOverflow "[2147483645, 65536, -15]" i32a i32b
  check "$t" divide "error: \`divide\`: integer division by zero" diva divz
  check "$t" divide "[3, -2147483648, -1]" diva divb
  check "$t" remainder "[0, 1, -1]" i64a i64b
  check "$t" remainder "error: \`remainder\`: integer remainder by zero" i64a i64z
  check "$t" floatDivide "[-inf, inf, NaN, NaN]" fa fb
  check "$t" dot "32.0" v3a v3b
  check "$t" length "[2.0, 3.0, 4.0]" v3a
  check "$t" main "[2.0, 4.0, 6.0]" v3a
  check "$t" pairAccumulator "6.0" v4
  check "$t" rotateAccumulator "[12.0, 23.0, 31.0]" rows
  check "$t" repeatSum "75" small
  check "$t" repeatSum "2209000000" ones
done
echo "== $pass passed, $failed failed"
[ $failed -eq 0 ]
