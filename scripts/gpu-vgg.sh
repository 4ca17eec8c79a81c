#!/usr/bin/env bash
# Issue 16's measurement, in one call on a GPU machine: `shine explore` tunes the tiles, blocks
# and split-K chunks of examples/vgg.rise's convolution (as a matrix product) for each distinct
# layer size of VGG-16 on CUDA (solver-order, random and evolutionary search, the same time
# each), writes the best per layer as a strategy file, then bench/gpu_anchors.py times those
# strategies on CUDA and OpenCL against cuDNN, interleaved, and bench/vgg_cases.py sums the
# 13 layers.
#
# Usage (on the GPU machine; the release binary is built elsewhere and carried along):
#   scripts/gpu-vgg.sh path/to/shine OUTDIR explore [SECONDS_PER_METHOD] [bench]
#   scripts/gpu-vgg.sh path/to/shine OUTDIR explore-layer1 [BUDGET]
#   scripts/gpu-vgg.sh path/to/shine OUTDIR bench EXPLORE.json...   (the per-layer bests of runs)
# (separate calls fit the device's 10-minute limit per command). Writes into OUTDIR: explore.json
# (summary), explore.jsonl (every candidate), explore.txt (progress and per-layer table),
# plot.svg, best.elv (also bench/explore/vgg_h100_cuda_tuned.elv of the working tree, which the
# bench reads), cases.json, bench.json, bench.md, total.md.
set -uo pipefail
if [ $# -lt 3 ]; then sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//'; exit 2; fi
shine="$(realpath "$1")"; out="$(realpath "$2")"; mode="$3"; secs="${4:-150}"
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
best=bench/explore/vgg_h100_cuda_tuned.elv
sets=()
for l in 3,64,224 64,64,224 64,128,112 128,128,112 128,256,56 256,256,56 256,512,28 512,512,28 512,512,14; do
  IFS=, read -r c o s <<<"$l"; sets+=(--time-nat "h=$s,w=$s,c=$c,o=$o")
done
verify=()
for v in h=8,w=16,c=3,o=64 h=4,w=28,c=3,o=64 h=4,w=28,c=64,o=64 h=8,w=16,c=64,o=64 \
         h=1,w=112,c=128,o=64 h=1,w=128,c=128,o=64 h=1,w=112,c=256,o=64 h=1,w=128,c=256,o=64; do
  verify+=(--verify-nat "$v")
done
if [ "$mode" = explore ]; then
"$shine" explore examples/vgg.rise --def vggGemmSplitK --strategy examples/gpu.elv \
  --apply "mmSplitK(tm, tn, rm, rn, kb, wm, wn)" --target cuda \
  --param tm=14,28,56,64,112,128 --param tn=32,64 --param rm=4,7,8 --param rn=2,4,8 \
  --param kb=8,9,16,27 --param wm=tm/rm --param wn=tn/rn --param s=1,2,4,8,16 \
  --require "wm*wn>=32" --require "wm*wn<=1024" --require "(tm*kb)%(wm*wn)==0" \
  --require "(tn*kb)%(wm*wn)==0" --require "(tm+tn)*kb*4<=49152" \
  "${verify[@]}" "${sets[@]}" --time "$secs" --search solver --search random --search evolutionary \
  --seed 1 --runs 5 --flops 21444820992 --log "$out/explore.jsonl" --plot "$out/plot.svg" -o "$best" \
  >"$out/explore.json" 2>"$out/explore.txt"
echo "explore: exit $?"; tail -15 "$out/explore.txt"
cp "$best" "$out/best.elv"
[ "${5:-}" = bench ] || exit 0
fi
if [ "$mode" = explore-layer1 ]; then
  # the first layer (3 input channels: 27 products per output) only fits tiles whose copies
  # divide by 9 or 27, which the search over all layers rarely draws: searched on its own
  "$shine" explore examples/vgg.rise --def vggGemmSplitK --strategy examples/gpu.elv \
    --apply "mmSplitK(tm, tn, rm, rn, kb, wm, wn)" --target cuda \
    --param tm=32,64,112,128 --param tn=32,64 --param rm=4,7,8 --param rn=4,8 --param kb=9,27 \
    --param wm=tm/rm --param wn=tn/rn --param s=1 --require "wm*wn>=32" --require "wm*wn<=1024" \
    --require "(tm*kb)%(wm*wn)==0" --require "(tn*kb)%(wm*wn)==0" \
    --verify-nat h=8,w=16,c=3,o=64 --verify-nat h=4,w=28,c=3,o=64 --time-nat h=224,w=224,c=3,o=64 \
    --budget "${4:-10}" --search solver --search evolutionary --seed 1 --runs 5 \
    --log "$out/layer1.jsonl" >"$out/layer1.json" 2>"$out/layer1.txt"
  echo "explore layer 1: exit $?"; tail -6 "$out/layer1.txt"
  exit 0
fi
if [ "$mode" = bench ]; then  # the per-layer bests of the explore summaries given
  shift 3
  python3 bench/vgg_cases.py merge "$best" "$@" >"$out/cases.json" || exit 1
  cp "$best" "$out/best.elv"
else
  python3 bench/vgg_cases.py cases "$best" --targets cuda,opencl >"$out/cases.json" || exit 1
fi
scripts/gpu-bench.sh "$shine" --cases "$out/cases.json" --json "$out/bench.json" --rounds 3 >"$out/bench.md"
echo "bench: exit $?"; cat "$out/bench.md"
python3 bench/vgg_cases.py total "$out/bench.json" | tee "$out/total.md"
