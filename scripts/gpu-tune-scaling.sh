#!/usr/bin/env bash
# Issue 31's scaling figures, in one call on a GPU machine with two or more GPUs: the same
# `shine explore --param` search (examples/vgg.rise's convolution as a matrix product under
# `mmSplitK`, VGG-16's 9 distinct layer sizes, random search, a fixed number of candidates)
# timed on one GPU and on every GPU given, with the same CPU workers; then the second search
# again over the tuning database it filled (every candidate from the database).
#
# Usage (on the GPU machine; the release binary built elsewhere and carried along):
#   scripts/gpu-tune-scaling.sh path/to/shine OUTDIR DEVICES [CANDIDATES] [JOBS]
# e.g. scripts/gpu-tune-scaling.sh gpu-bins/shine out 0,1 48 16
# Prints one line per search (devices, jobs, candidates, wall seconds, candidates per second)
# and the ratios; writes each search's JSON summary, log and progress into OUTDIR.
set -uo pipefail
if [ $# -lt 3 ]; then sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//'; exit 2; fi
shine="$(realpath "$1")"; out="$(realpath -m "$2")"; devices="$3"
budget="${4:-48}"; jobs="${5:-16}"
root="$(cd "$(dirname "$0")/.." && pwd)"
mkdir -p "$out"; chmod +x "$shine" 2>/dev/null || true
if ! /sbin/ldconfig -p 2>/dev/null | grep 'libnvrtc\.so' >/dev/null; then
  for dir in /usr/local/cuda/lib64 /usr/local/cuda/targets/x86_64-linux/lib; do
    if ls "$dir"/libnvrtc.so* >/dev/null 2>&1; then
      export LD_LIBRARY_PATH="$dir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"; break
    fi
  done
fi
cd "$root" || exit 1
sets=()
for l in 3,64,224 64,64,224 64,128,112 128,128,112 128,256,56 256,256,56 256,512,28 512,512,28 512,512,14; do
  IFS=, read -r c o s <<<"$l"; sets+=(--time-nat "h=$s,w=$s,c=$c,o=$o")
done
# One search: $1 label, $2 devices, further arguments passed on. Prints the wall time.
search() {
  local label="$1" devs="$2"; shift 2
  local start end
  start=$(date +%s.%N)
  "$shine" explore examples/vgg.rise --def vggGemmSplitK --strategy examples/gpu.elv \
    --apply "mmSplitK(tm, tn, rm, rn, kb, wm, wn)" --target cuda \
    --param tm=14,28,56,64,112,128 --param tn=32,64 --param rm=4,7,8 --param rn=2,4,8 \
    --param kb=8,9,16 --param wm=tm/rm --param wn=tn/rn --param s=1,2,4,8 \
    --require "wm*wn>=32" --require "wm*wn<=1024" --require "(tm*kb)%(wm*wn)==0" \
    --require "(tn*kb)%(wm*wn)==0" --require "(tm+tn)*kb*4<=49152" \
    --verify-nat h=8,w=16,c=64,o=64 --verify-nat h=4,w=28,c=64,o=64 "${sets[@]}" \
    --search random --seed 7 --budget "$budget" --runs 5 --jobs "$jobs" --devices "$devs" \
    --log "$out/$label.jsonl" "$@" >"$out/$label.json" 2>"$out/$label.txt"
  local rc=$?
  end=$(date +%s.%N)
  python3 - "$label" "$devs" "$rc" "$start" "$end" "$out/$label.json" <<'PY'
import json, sys
label, devs, rc, start, end, path = sys.argv[1:]
wall = float(end) - float(start)
try:
    s = json.load(open(path))
    n = sum(m.get("candidates", 0) for m in s.get("methods", [])) or s.get("candidates", 0)
except Exception as e:
    n = 0
print(f"{label}: devices {devs}, exit {rc}, {n} candidates, {wall:.1f} s, {n / wall if wall else 0:.3f} candidates/s")
open(path + ".wall", "w").write(f"{wall}\n")
PY
}
nvidia-smi --query-gpu=index,name --format=csv,noheader
search one_gpu 0
search all_gpus "$devices" --db "$out/tune.db"
search all_gpus_again "$devices" --db "$out/tune.db"
python3 - "$out" <<'PY'
import sys
d = sys.argv[1]
w = {k: float(open(f"{d}/{k}.json.wall").read()) for k in ("one_gpu", "all_gpus", "all_gpus_again")}
print(f"wall one GPU / all GPUs: {w['one_gpu'] / w['all_gpus']:.2f}")
print(f"wall first run / repeated run over the database: {w['all_gpus'] / w['all_gpus_again']:.1f}")
PY
tail -5 "$out/all_gpus.txt"
