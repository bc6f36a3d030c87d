#!/usr/bin/env bash
# End to end through the command line: generate, inspect, train under 1 and 2 ranks, predict,
# and check that 1 and 2 ranks give the same model and the same predictions.
set -euo pipefail
# Pipelines end in `grep > /dev/null`, not `grep -q`: grep -q exits at the first match, and
# with pipefail the writer's SIGPIPE would then fail the test at random.
pdsp=$1
mpirun=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
run2() { "$mpirun" --allow-run-as-root --oversubscribe --bind-to none -np 2 "$@"; }

"$pdsp" gen denoise --train "$work/train.h5" --test "$work/test.h5" --height 16 --width 16 \
  --train-copies 6 --test-copies 3 --seed 5
"$pdsp" info "$work/train.h5" | grep "examples            6" > /dev/null
common=(--data "$work/train.h5" --max-iters 15 --tol 0 --threads 1)
"$pdsp" train "${common[@]}" --out "$work/m1.h5" --metrics "$work/m1.jsonl" > "$work/log1"
run2 "$pdsp" train "${common[@]}" --out "$work/m2.h5" --metrics "$work/m2.jsonl" \
  --checkpoint-dir "$work/ckpt" --checkpoint-every 1 > "$work/log2"
h5diff --relative=1e-9 "$work/m1.h5" "$work/m2.h5" /theta
# --quiet: on the console only why training stopped and where the model went, on 1 and 2 ranks.
for launch in "" run2; do
  $launch "$pdsp" train --data "$work/train.h5" --max-iters 2 --threads 1 --out "$work/mq.h5" \
    --quiet > "$work/logq"
  [ "$(wc -l < "$work/logq")" -eq 2 ] || { echo "FAIL: train --quiet printed:"; cat "$work/logq"; exit 1; }
  grep '^stopped after 2 iterations: max-iters' "$work/logq" > /dev/null
  grep '^model written to' "$work/logq" > /dev/null
done
# The metrics file: a run line, one line per iteration, an end line.
head -1 "$work/m1.jsonl" | grep '"type":"run"' > /dev/null
[ "$(grep -c '"type":"iteration"' "$work/m1.jsonl")" -eq 15 ]
tail -1 "$work/m1.jsonl" | grep '"type":"end"' > /dev/null
# The timing breakdown: checkpoint writes show up in the next record, and the load imbalance
# of two ranks (the largest local compute time over the mean) is at least 1.
head -1 "$work/m2.jsonl" | grep '"partition_imbalance":' | grep '"seconds_load":' | grep '"seconds_setup":' > /dev/null
sed -n 3p "$work/m2.jsonl" | grep -E '"seconds_io":[0-9.]*[1-9]' > /dev/null
grep '"type":"iteration"' "$work/m1.jsonl" | grep '"seconds_io":0,' > /dev/null
# The end line has the whole run's checkpoint writing, the last write included.
tail -1 "$work/m2.jsonl" | grep -E '"type":"end".*"seconds_io":[0-9.]*[1-9]' > /dev/null
tail -1 "$work/m1.jsonl" | grep '"seconds_io":0}' > /dev/null
awk -F'"load_imbalance":' '/"type":"iteration"/ { split($2, v, /[,}]/); if (v[1] < 1) bad = 1 }
  END { exit bad }' "$work/m2.jsonl"
# The model carries its hyper-parameters.
h5dump -a /epsilon "$work/m1.h5" | grep "(0): 1" > /dev/null

"$pdsp" predict --data "$work/test.h5" --model "$work/m1.h5" --out "$work/p1.h5" > "$work/plog1"
run2 "$pdsp" predict --data "$work/test.h5" --model "$work/m1.h5" --out "$work/p2.h5" > "$work/plog2"
grep -q "per-variable error" "$work/plog1"
h5diff --relative=1e-8 "$work/p1.h5" "$work/p2.h5" /prediction/marginal
h5diff "$work/p1.h5" "$work/p2.h5" /prediction/label

# Single-precision messages: on 2 ranks, the same model as double precision up to float round-off
# and the same test labels; the run says which kernels ran.
run2 "$pdsp" train "${common[@]}" --out "$work/ms.h5" --message-precision single > "$work/logs"
grep "single-precision messages" "$work/logs" > /dev/null
h5diff --relative=1e-5 "$work/m1.h5" "$work/ms.h5" /theta
"$pdsp" predict --data "$work/test.h5" --model "$work/ms.h5" --out "$work/ps.h5" > /dev/null
h5diff "$work/p1.h5" "$work/ps.h5" /prediction/label

# One example on 2 and 3 ranks: split into shards by default (the layout line says so), and
# kept whole with --shards 1, where a rank with an empty slice takes part in every collective.
# Both train to the 1-rank theta; split predictions are the 1-rank predictions.
"$pdsp" gen denoise --train "$work/one.h5" --height 8 --width 8 --train-copies 1 --params shared > /dev/null
"$pdsp" train --data "$work/one.h5" --out "$work/one1.h5" --max-iters 10 --tol 0 > /dev/null
"$pdsp" predict --data "$work/one.h5" --model "$work/one1.h5" --out "$work/pone1.h5" > /dev/null
for ranks in 2 3; do
  "$mpirun" --allow-run-as-root --oversubscribe --bind-to none -np $ranks "$pdsp" train \
    --data "$work/one.h5" --out "$work/one$ranks.h5" --max-iters 10 --tol 0 > "$work/log"
  grep "example 0 in $ranks shards" "$work/log" > /dev/null
  h5diff --relative=1e-9 "$work/one1.h5" "$work/one$ranks.h5" /theta
  "$mpirun" --allow-run-as-root --oversubscribe --bind-to none -np $ranks "$pdsp" train \
    --data "$work/one.h5" --out "$work/whole$ranks.h5" --max-iters 10 --tol 0 --shards 1 > "$work/log"
  grep "layout: whole examples on every rank" "$work/log" > /dev/null
  h5diff --relative=1e-9 "$work/one1.h5" "$work/whole$ranks.h5" /theta
  "$mpirun" --allow-run-as-root --oversubscribe --bind-to none -np $ranks "$pdsp" predict \
    --data "$work/one.h5" --model "$work/one1.h5" --out "$work/pone$ranks.h5" > /dev/null
  h5diff "$work/pone1.h5" "$work/pone$ranks.h5" /prediction/label
  h5diff --relative=1e-8 "$work/pone1.h5" "$work/pone$ranks.h5" /prediction/marginal
done

# At eps = 0 on data without cycles predict decodes by dynamic programming (one 1 x 40 chain);
# split into shards on 2 ranks it runs max-product sweeps instead, to the same predictions.
"$pdsp" gen denoise --train "$work/chain.h5" --height 1 --width 40 --train-copies 1 --params shared > /dev/null
"$pdsp" train --data "$work/chain.h5" --out "$work/chain-m.h5" --max-iters 10 --tol 0 > /dev/null
"$pdsp" predict --data "$work/chain.h5" --model "$work/chain-m.h5" --epsilon 0 \
  --out "$work/chain-p1.h5" | grep "exact MAP labels by dynamic programming" > /dev/null
run2 "$pdsp" predict --data "$work/chain.h5" --model "$work/chain-m.h5" --epsilon 0 \
  --out "$work/chain-p2.h5" | grep "sweeps (last change" > /dev/null
h5diff "$work/chain-p1.h5" "$work/chain-p2.h5" /prediction/label
h5diff --relative=1e-8 "$work/chain-p1.h5" "$work/chain-p2.h5" /prediction/marginal

# A likelihood baseline: the same on 1 and 2 ranks, and predictions with its own inference.
"$pdsp" gen denoise --train "$work/shared.h5" --height 12 --width 12 --train-copies 4 --params shared > /dev/null
for learner in lbp-lbfgs mf-sgd; do
  "$pdsp" train --data "$work/shared.h5" --out "$work/b1.h5" --learner $learner --max-iters 5 > /dev/null
  "$mpirun" --allow-run-as-root --oversubscribe --bind-to none -np 2 "$pdsp" train \
    --data "$work/shared.h5" --out "$work/b2.h5" --learner $learner --max-iters 5 > /dev/null
  h5diff --relative=1e-9 "$work/b1.h5" "$work/b2.h5" /theta
  "$pdsp" predict --data "$work/shared.h5" --model "$work/b1.h5" --out "$work/pb.h5" | grep "to convergence" > /dev/null
done
# The structured SVM by block Frank-Wolfe: certified at eps = 0 on 1 and 2 ranks and with another
# --seed (recorded), the same optimum within the two gaps, and a model that predicts.
for ranks in 1 2; do
  launcher=()
  [ $ranks -gt 1 ] && launcher=("$mpirun" --allow-run-as-root --oversubscribe --bind-to none -np 2)
  "${launcher[@]}" "$pdsp" train --data "$work/shared.h5" --out "$work/fw$ranks.h5" --learner ssvm-fw \
    --epsilon 0 --tol 1e-3 --max-iters 2000 --metrics "$work/fw$ranks.jsonl" > "$work/log"
  grep -q "converged: primal-dual gap at eps = 0 below tol (exact LP oracle)" "$work/log"
done
"$pdsp" train --data "$work/shared.h5" --out "$work/fws.h5" --learner ssvm-fw --epsilon 0 \
  --tol 1e-3 --max-iters 2000 --seed 2 --metrics "$work/fws.jsonl" | grep -q "converged: primal"
/usr/bin/python3 - "$work/fw1.jsonl" "$work/fw2.jsonl" "$work/fws.jsonl" <<'PY'
import json, sys
runs = [[json.loads(l) for l in open(p)] for p in sys.argv[1:]]
assert [r[0]["seed"] for r in runs] == [1, 1, 2], [r[0].get("seed") for r in runs]
(f1, g1), (f2, g2), (fs, gs) = [(r[-2]["F"], r[-2]["gap"]) for r in runs]
assert abs(f1 - f2) <= g1 + g2 + 1e-12, (f1, g1, f2, g2)
assert abs(f1 - fs) <= g1 + gs + 1e-12, (f1, g1, fs, gs)
PY
"$pdsp" predict --data "$work/shared.h5" --model "$work/fw1.h5" --out "$work/pfw.h5" | grep -q "per-variable error"
# Uneven example sizes (--sizes): copies cycle through the sizes; 1 and 2 ranks agree.
"$pdsp" gen denoise --train "$work/uneven.h5" --sizes 4x4,12x12 --train-copies 5 --params shared \
  | grep "5 copies of 4x4,12x12" > /dev/null
"$pdsp" info "$work/uneven.h5" > "$work/uneven_info"
grep -q "\[16, 32)  3" "$work/uneven_info"
grep -q "\[128, 256)  2" "$work/uneven_info"
# How the largest examples would split: grid blocks, the same on 2 ranks (each holds some).
"$pdsp" info "$work/uneven.h5" --shards 4 | grep -A2 "split into 4 shards" > "$work/shards1"
grep -q "example 1: 144 variables -> 36/36/36/36, 24 of 264 factors cut (grid blocks 2x2 of 12x12)" "$work/shards1"
run2 "$pdsp" info "$work/uneven.h5" --shards 4 | grep -A2 "split into 4 shards" | diff - "$work/shards1"
"$pdsp" train --data "$work/uneven.h5" --out "$work/u1.h5" --max-iters 10 --tol 0 > /dev/null
run2 "$pdsp" train --data "$work/uneven.h5" --out "$work/u2.h5" --max-iters 10 --tol 0 > /dev/null
h5diff --relative=1e-9 "$work/u1.h5" "$work/u2.h5" /theta
echo "end-to-end: ok"
