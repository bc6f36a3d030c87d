#!/usr/bin/env bash
# Resume on another rank count: the messages are stored in global example order, so a run
# checkpointed on R ranks continues on R' ranks and ends within 1e-9 (relative) of the
# uninterrupted run. Cases 1->2, 2->1 and 2->3 (oversubscribed on a 2-core machine); then the
# same with one example that 2 and 3 ranks split (docs/guide.md "Shards"), and 2->2 split,
# which must end bitwise where the uninterrupted split run ends.
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
# resume BEFORE AFTER STOP FLAGS...: trains STOP iterations on BEFORE ranks with checkpoints,
# resumes on AFTER ranks up to 40 iterations, leaves the model in resumed.h5.
resume() {
  local before=$1 after=$2 stop=$3
  shift 3
  rm -rf "$work/ck"
  ranks "$before" "$pdsp" "$@" --max-iters "$stop" --out "$work/part.h5" --checkpoint-dir "$work/ck" > /dev/null
  ranks "$after" "$pdsp" "$@" --max-iters 40 --out "$work/resumed.h5" --checkpoint-dir "$work/ck" --resume auto > "$work/log"
  grep -q "resuming from" "$work/log"
}
common=(train --data "$work/train.h5" --tol 1e-12 --threads 1)
ranks 1 "$pdsp" "${common[@]}" --max-iters 40 --out "$work/reference.h5" > /dev/null
for pair in 1:2 2:1 2:3; do
  before=${pair%:*}
  after=${pair#*:}
  resume "$before" "$after" 15 "${common[@]}"
  h5diff --relative=1e-9 "$work/reference.h5" "$work/resumed.h5" /theta > /dev/null ||
    { echo "FAIL: $before -> $after ranks differs from the uninterrupted run"; exit 1; }
  echo "ok: checkpoint on $before rank(s), resumed on $after: theta within 1e-9"
done

# One 32x40 example: split on 2 and 3 ranks, whole on 1.
"$pdsp" gen denoise --train "$work/one.h5" --height 32 --width 40 --train-copies 1 > /dev/null
split=(train --data "$work/one.h5" --tol 1e-12 --threads 1)
ranks 1 "$pdsp" "${split[@]}" --max-iters 40 --out "$work/reference.h5" > /dev/null
ranks 2 "$pdsp" "${split[@]}" --max-iters 40 --out "$work/reference2.h5" > "$work/log"
grep -q "in 2 shards" "$work/log" || { echo "FAIL: the example was not split"; cat "$work/log"; exit 1; }
for pair in 1:2 2:1 2:3 2:2; do
  before=${pair%:*}
  after=${pair#*:}
  resume "$before" "$after" 4 "${split[@]}"
  if [ "$pair" = 2:2 ]; then
    h5diff "$work/reference2.h5" "$work/resumed.h5" /theta > /dev/null ||
      { echo "FAIL: split 2 -> 2 ranks is not bitwise the uninterrupted split run"; exit 1; }
    echo "ok: split example checkpointed and resumed on 2 ranks: theta bitwise"
    continue
  fi
  h5diff --relative=1e-9 "$work/reference.h5" "$work/resumed.h5" /theta > /dev/null ||
    { echo "FAIL: split example $before -> $after ranks differs from the uninterrupted run"; exit 1; }
  echo "ok: one example checkpointed on $before rank(s), resumed on $after: theta within 1e-9"
done

# Other settings than the checkpoints' are refused at the newest one, by name, in one line:
# not skipped for older checkpoints, which hold the same settings (a class that changes the
# parameter count: nonlinear_models.sh).
for case in "2:--C 2:C was 1 in the checkpoint and is 2 now" \
            "1:--epsilon 0.5:epsilon was 1 in the checkpoint and is 0.5 now"; do
  IFS=: read -r n flags said <<< "$case"
  set +e
  # shellcheck disable=SC2086
  ranks "$n" "$pdsp" "${split[@]}" $flags --max-iters 40 --out "$work/refused.h5" \
    --checkpoint-dir "$work/ck" --resume auto > /dev/null 2> "$work/err"
  code=$?
  set -e
  { [ $code -eq 2 ] && [ "$(grep -c "pdsp" "$work/err")" -eq 1 ] &&
    grep -q "ckpt-[0-9]*\.h5: cannot resume: $said" "$work/err" && [ ! -e "$work/refused.h5" ]; } ||
    { echo "FAIL: resuming with $flags (exit $code)"; cat "$work/err"; exit 1; }
done
echo "ok: resuming with other settings is one line naming the setting, on 1 and 2 ranks"
