#!/usr/bin/env bash
# Resume on another rank count: the messages are stored in global example order, so a run
# checkpointed on R ranks continues on R' ranks and ends within 1e-9 (relative) of the
# uninterrupted run. Cases 1->2, 2->1 and 2->3 (oversubscribed on a 2-core machine).
set -euo pipefail
pdsp=$1
mpirun=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$pdsp" gen denoise --train "$work/train.h5" --height 24 --width 24 --train-copies 9 > /dev/null
ranks() {
  local n=$1
  shift
  if [ "$n" -eq 1 ]; then "$@"; else "$mpirun" --allow-run-as-root --oversubscribe --bind-to none -np "$n" "$@"; fi
}
common=(train --data "$work/train.h5" --tol 1e-12 --threads 1)
ranks 1 "$pdsp" "${common[@]}" --max-iters 40 --out "$work/reference.h5" > /dev/null
for pair in 1:2 2:1 2:3; do
  before=${pair%:*}
  after=${pair#*:}
  rm -rf "$work/ck"
  ranks "$before" "$pdsp" "${common[@]}" --max-iters 15 --out "$work/part.h5" --checkpoint-dir "$work/ck" > /dev/null
  ranks "$after" "$pdsp" "${common[@]}" --max-iters 40 --out "$work/resumed.h5" --checkpoint-dir "$work/ck" --resume auto > "$work/log"
  grep -q "resuming from" "$work/log"
  h5diff --relative=1e-9 "$work/reference.h5" "$work/resumed.h5" /theta > /dev/null ||
    { echo "FAIL: $before -> $after ranks differs from the uninterrupted run"; exit 1; }
  echo "ok: checkpoint on $before rank(s), resumed on $after: theta within 1e-9"
done
