#!/usr/bin/env bash
# A long fuzzing run of the shine command line (issue 18) over all cores of one machine:
# shine-clifuzz runs JOBS cases at a time, each in its own directory under a timeout and a
# memory limit, writes a reproducer for every bug into OUT/bug-*/ and the summary into
# OUT/summary.txt, and exits non-zero if there was a bug. No Rust toolchain is needed:
# copy target/release/shine, target/release/shine-clifuzz and examples/ to the machine.
#
# Usage: scripts/clifuzz-parallel.sh SHINE-CLIFUZZ SHINE EXAMPLES SEED CASES JOBS OUT [flags]
# e.g.   scripts/clifuzz-parallel.sh target/release/shine-clifuzz target/release/shine \
#          examples 1 1000000 16 target/clifuzz
# Replay one case: shine-clifuzz --shine SHINE --examples EXAMPLES --seed S --start K --cases 1
set -uo pipefail

if [ $# -lt 7 ]; then
  sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//'
  exit 2
fi
clifuzz="$1"
shine="$2"
examples="$3"
seed="$4"
cases="$5"
jobs="$6"
out="$7"
shift 7
mkdir -p "$out"
# a per-case timeout of 30 s and 4 GiB of address space (enough for gcc at -O3); C
# compilations are cached for the run (--no-cc-cache turns that off)
"$clifuzz" --shine "$shine" --examples "$examples" --seed "$seed" --cases "$cases" \
  --jobs "$jobs" --out "$out" --log "$out/cases.tsv" --progress-s 30 "$@" \
  2> >(tee "$out/progress.log" >&2)
status=$?
echo "== outcome of every case: $out/cases.tsv (index, command, quality, outcome, ms, stderr)"
exit $status
