#!/usr/bin/env bash
# Kills training with SIGKILL at random moments, resumes it each time with the same command, and
# checks that the final model is bitwise identical to an uninterrupted run and that the metrics
# file has every iteration exactly once with the same numbers.
# Usage: run/crash_test.sh [KILLS] [RANKS] [PDSP]   (defaults: 20 kills, 1 rank, build/release/pdsp)
set -uo pipefail
kills_wanted=${1:-20}
ranks=${2:-1}
here=$(cd "$(dirname "$0")" && pwd)
pdsp=${3:-$here/../build/release/pdsp}
source "$here/mpi_env.sh"
work=$(mktemp -d)
trap 'pkill -9 -f "$work" 2> /dev/null; rm -rf "$work"' EXIT

"$pdsp" gen denoise --train "$work/train.h5" --height 48 --width 48 --train-copies 8 > /dev/null
launch=()
[ "$ranks" -gt 1 ] && launch=("${MPIRUN[@]}" -np "$ranks")
# --tol 0: the run always goes to --max-iters, long enough for every kill to land mid-training:
# 2500 iterations of 6-35 ms, where each run before a kill gets at most a second, of which
# start-up and resume take most (20 kills on one rank got through 23 iterations here; on an AMD
# EPYC at 6 ms, 1000 iterations ran out before the 20th kill on two ranks in 1 of 3 runs); few step
# trials keep the iterations short once the objective stops moving (each trial re-runs a sweep).
train=(train --data "$work/train.h5" --max-iters 2500 --tol 0 --max-step-trials 8 --threads 1)
"${launch[@]}" "$pdsp" "${train[@]}" --out "$work/reference.h5" --metrics "$work/reference.jsonl" > /dev/null

resumable=("${train[@]}" --out "$work/model.h5" --metrics "$work/metrics.jsonl"
           --checkpoint-dir "$work/checkpoints" --checkpoint-every 1 --resume auto)
kills=0
runs=0
while [ "$kills" -lt "$kills_wanted" ]; do
  setsid "${launch[@]}" "$pdsp" "${resumable[@]}" > "$work/run.log" 2>&1 &
  pid=$!
  runs=$((runs + 1))
  # Random moment after the start: during start-up, resume, iterations or checkpoint writes
  # (0.05-0.5 s on one rank; mpirun itself takes about 0.4 s to start, so 0.3-1.0 s there).
  if [ "$ranks" -gt 1 ]; then delay=$((RANDOM % 70 + 30)); else delay=$((RANDOM % 45 + 5)); fi
  sleep "$(printf '%d.%02d' $((delay / 100)) $((delay % 100)))"
  if kill -0 "$pid" 2> /dev/null; then
    kill -9 -- "-$pid" 2> /dev/null
    pkill -9 -f "$work/checkpoints" 2> /dev/null
    wait "$pid" 2> /dev/null
    kills=$((kills + 1))
  else
    wait "$pid"
    echo "FAIL: run $runs finished before it could be killed: only $kills kills (make training longer)"
    tail -3 "$work/run.log"
    exit 1
  fi
done
# The last resume runs to the end; it checkpoints rarely (how often is no setting a resume must
# match), since a checkpoint of every one of its remaining iterations would take most of the
# test's time and check nothing the kills did not.
"${launch[@]}" "$pdsp" "${resumable[@]}" --checkpoint-every 2500 > "$work/run.log" 2>&1 ||
  { echo "FAIL: the last resume failed"; cat "$work/run.log"; exit 1; }

failures=0
if h5diff "$work/reference.h5" "$work/model.h5" /theta > /dev/null; then
  echo "ok: theta bitwise identical to the uninterrupted run after $kills SIGKILLs ($ranks rank(s))"
else
  echo "FAIL: theta differs from the uninterrupted run"; failures=$((failures + 1))
fi
# Every iteration once, in order, with the same numbers (times excepted).
strip() { grep '"type":"iteration"' "$1" | sed 's/,"seconds".*//'; }
if diff <(strip "$work/reference.jsonl") <(strip "$work/metrics.jsonl") > "$work/metrics.diff"; then
  echo "ok: metrics identical ($(strip "$work/metrics.jsonl" | wc -l) iteration lines)"
else
  echo "FAIL: metrics differ:"; head -5 "$work/metrics.diff"; failures=$((failures + 1))
fi
ls "$work/checkpoints" | grep -q '\.tmp\.' && { echo "FAIL: temporary files left"; failures=$((failures + 1)); }
echo "crash test: $kills kills, $runs runs, $failures failure(s)"
[ "$failures" -eq 0 ]
