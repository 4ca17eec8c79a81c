#!/usr/bin/env bash
# Writes the code `shine compile` generates for every example definition
# (examples/*.rise) under every parameterless strategy of examples/*.elv (target c,
# opencl for gpu.elv) and under the default schedule of every target, one file per
# case into OUTDIR (the error message where a case does not compile). Run it before
# and after a change to the rewriting engine and `diff -r` the two folders: a change
# that must not change what strategies compute leaves them byte-identical.
#
#   scripts/examples-codegen.sh OUTDIR [SHINE]   (SHINE: the shine binary; default: on PATH)
set -euo pipefail
out=${1:?usage: examples-codegen.sh OUTDIR [SHINE]}
shine=${2:-shine}
cd "$(dirname "$0")/.."
mkdir -p "$out"

defs_of() { sed -n 's/^def \([A-Za-z_][A-Za-z0-9_]*\)[^(A-Za-z0-9_].*/\1/p; s/^def \([A-Za-z_][A-Za-z0-9_]*\)$/\1/p' "$1"; }

cases() {
  for prog in examples/*.rise; do
    for def in $(defs_of "$prog"); do
      for target in c openmp opencl cuda; do
        echo "$prog $def $target - -"
      done
      for elv in examples/*.elv; do
        target=c
        [ "$(basename "$elv")" = gpu.elv ] && target=opencl
        for s in $(defs_of "$elv"); do
          echo "$prog $def $target $elv $s"
        done
      done
    done
  done
}

one() {
  local prog=$1 def=$2 target=$3 elv=$4 s=$5
  local name
  name="$(basename "$prog" .rise).$def.$target.$(basename "$elv" .elv).$s"
  local args=(compile "$prog" --def "$def" --target "$target" -o "$out/$name.code")
  [ "$elv" != - ] && args+=(--strategy "$elv" --apply "$s")
  if ! "$shine" "${args[@]}" > "$out/$name.log" 2>&1; then
    echo "exit status non-zero" >> "$out/$name.log"
  fi
}
export -f one
export out shine
cases | xargs -P "${JOBS:-2}" -L 1 bash -c 'one "$@"' _
echo "$(ls "$out"/*.code 2>/dev/null | wc -l) compiled, $(grep -l 'exit status non-zero' "$out"/*.log | wc -l) refused"
