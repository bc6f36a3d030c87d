#!/usr/bin/env bash
# The stochastic learners from the command line: dlpw on 1 and 2 ranks at the same batch and
# seed gives the same model up to round-off; a dlpw run killed by SIGKILL resumes to the
# uninterrupted model bitwise; F is in the metrics every --objective-every epochs and at the
# end. (Their refusals are in bad_input.sh.)
set -euo pipefail
source "$(dirname "$0")/kill_at_checkpoint.sh"
pdsp=$1
mpirun=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$pdsp" gen denoise --train "$work/train.h5" --height 12 --width 12 --train-copies 6 \
  --params shared --quiet
common=(train --data "$work/train.h5" --learner dlpw --epsilon 0 --C 0.5 --batch 2 --seed 7
        --threads 1)

# 1 rank against 2 ranks: the batches are the same, only the order of the sums differs.
"$pdsp" "${common[@]}" --max-iters 40 --out "$work/one.h5" --metrics "$work/one.jsonl" > /dev/null
"$mpirun" --allow-run-as-root --oversubscribe --bind-to none -np 2 \
  "$pdsp" "${common[@]}" --max-iters 40 --out "$work/two.h5" > /dev/null
h5diff -d 1e-9 "$work/one.h5" "$work/two.h5" /theta > /dev/null ||
  { echo "FAIL: 2 ranks differ from 1 rank by more than 1e-9"; h5diff -d 1e-9 -r "$work/one.h5" "$work/two.h5" /theta | head; exit 1; }
echo "ok: dlpw on 2 ranks gives the 1-rank model within 1e-9"

# F every --objective-every epochs (here 1) and in the end record; no "converged".
grep -c '"type":"iteration"' "$work/one.jsonl" | grep -qx 40
grep '"type":"iteration"' "$work/one.jsonl" | grep -q '"F":null' &&
  { echo "FAIL: an epoch without F at --objective-every 1"; exit 1; }
tail -1 "$work/one.jsonl" | grep -q '"stop_reason":"max-iters"' ||
  { echo "FAIL: the end record"; tail -1 "$work/one.jsonl"; exit 1; }
echo "ok: F at every epoch, stop reason max-iters"

# Checkpoints after every epoch; killed once one is published, resumed to the same model.
"$pdsp" "${common[@]}" --max-iters 400 --out "$work/whole.h5" > /dev/null
kill_at_first_checkpoint "$work/ck" "$work/killed.h5" \
  "$pdsp" "${common[@]}" --max-iters 400 --out "$work/killed.h5" --checkpoint-dir "$work/ck" \
  --checkpoint-every 1
"$pdsp" "${common[@]}" --max-iters 400 --out "$work/resumed.h5" --checkpoint-dir "$work/ck" \
  --checkpoint-every 1 --resume auto > "$work/log"
grep -q "resuming from .* after iteration [0-9]*$" "$work/log" ||
  { echo "FAIL: no resume"; cat "$work/log"; exit 1; }
h5diff "$work/whole.h5" "$work/resumed.h5" /theta > /dev/null ||
  { echo "FAIL: the resumed model differs"; exit 1; }
echo "ok: killed by SIGKILL, resumed $(grep -o 'after iteration [0-9]*' "$work/log"): bitwise"
