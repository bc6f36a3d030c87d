#!/usr/bin/env bash
# A stop signal makes every rank checkpoint at the same iteration and exit 75 ("requeue me");
# running the same command again finishes with the model an uninterrupted run gives.
set -euo pipefail
pdsp=$1
mpirun=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$pdsp" gen denoise --train "$work/train.h5" --height 48 --width 48 --train-copies 24 > /dev/null
# The signal comes once the first iteration's line is out: 60 iterations of about 0.1 s (more on
# a busy machine) leave it seconds to land before the run ends.
common=(train --data "$work/train.h5" --max-iters 60 --tol 0 --threads 1)

check_preemption() {  # $1: label, rest: launcher
  local label=$1
  shift
  rm -rf "$work/ck" "$work/model.h5"
  "$@" "$pdsp" "${common[@]}" --out "$work/reference.h5" > /dev/null
  local run=("$@" "$pdsp" "${common[@]}" --out "$work/model.h5" --checkpoint-dir "$work/ck"
             --checkpoint-every 1000 --resume auto)
  "${run[@]}" > "$work/log" 2>&1 &
  local pid=$!
  # Signal once training runs (the first iteration line is out).
  for _ in $(seq 200); do grep -q "^ *1 " "$work/log" && break; sleep 0.05; done
  kill -USR1 "$pid"
  local code=0
  wait "$pid" || code=$?
  [ "$code" -eq 75 ] || { echo "FAIL ($label): exit $code after SIGUSR1, wanted 75"; cat "$work/log"; exit 1; }
  [ ! -e "$work/model.h5" ] || { echo "FAIL ($label): a preempted run wrote the model"; exit 1; }
  "${run[@]}" > "$work/log2" 2>&1
  grep -q "resuming from" "$work/log2"
  h5diff "$work/reference.h5" "$work/model.h5" /theta > /dev/null ||
    { echo "FAIL ($label): the resumed model differs"; exit 1; }
  echo "ok ($label): SIGUSR1 -> checkpoint, exit 75; resumed to the same model"
}

check_preemption "1 rank"
check_preemption "2 ranks" "$mpirun" --allow-run-as-root --oversubscribe --bind-to none -np 2

# A learner without checkpoints (ssvm-fw) stops on SIGTERM at the end of its pass, says so,
# writes the model of the best theta so far and exits 130.
"$pdsp" train --data "$work/train.h5" --out "$work/fw.h5" --learner ssvm-fw --epsilon 0 \
  --tol 0 --max-iters 100000 --threads 1 > "$work/log" 2>&1 &
pid=$!
for _ in $(seq 200); do grep -q "^ *1 " "$work/log" && break; sleep 0.05; done
kill -TERM "$pid"
code=0
wait "$pid" || code=$?
[ "$code" -eq 130 ] || { echo "FAIL (ssvm-fw): exit $code after SIGTERM, wanted 130"; cat "$work/log"; exit 1; }
grep -q "stopped after [0-9]* iterations: stop requested by a signal" "$work/log"
h5dump -d /theta "$work/fw.h5" > /dev/null
echo "ok (ssvm-fw): SIGTERM -> model written, exit 130"
