#!/usr/bin/env bash
# A long differential run spread over the cores of one machine: JOBS processes of
# shine-difftest, each over its own range of the seed's programs, then one summary of all
# of them (outcomes by target, failure signatures). Each job's output is in OUT/job-K.
#
# Usage: scripts/difftest-parallel.sh path/to/shine-difftest SEED FIRST PROGRAMS JOBS OUT
#          [targets, default c,openmp,opencl]
# e.g.   scripts/difftest-parallel.sh target/release/shine-difftest 1 0 34000 15 target/dt
set -uo pipefail

if [ $# -lt 6 ]; then
  sed -n '2,9p' "$0" | sed 's/^# \{0,1\}//'
  exit 2
fi
difftest="$(realpath "$1")"
seed="$2"
first="$3"
programs="$4"
jobs="$5"
out="$6"
targets="${7:-c,openmp,opencl}"
mkdir -p "$out"
per=$(((programs + jobs - 1) / jobs))
start_time=$(date +%s)
for ((k = 0; k < jobs; k++)); do
  from=$((first + k * per))
  count=$((per < first + programs - from ? per : first + programs - from))
  [ "$count" -le 0 ] && break
  "$difftest" run --seed "$seed" --start "$from" --cases "$count" --targets "$targets" \
    --out "$out/job-$k" >"$out/job-$k.log" 2>&1 &
done
wait
elapsed=$(($(date +%s) - start_time))

# Every job's summary.txt lists `target outcome count` lines: add them up.
cat "$out"/job-*/summary.txt | awk -v secs="$elapsed" -v progs="$programs" '
  NF == 3 && $3 ~ /^[0-9]+$/ { n[$1 " " $2] += $3; total += $3 }
  END {
    printf "== %d cases (%d programs) in %d s\n", total, progs, secs
    for (k in n) printf "  %-24s %d\n", k, n[k] | "sort"
  }'
echo "== bugs (mismatch, unchecked, crash, panic, code-does-not-compile) by job:"
grep -h "bug:" "$out"/job-*.log | sort | uniq -c | sort -rn | head -40
ls "$out"/job-*/failures 2>/dev/null | head -40
