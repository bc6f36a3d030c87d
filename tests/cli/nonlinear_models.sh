#!/usr/bin/env bash
# Perceptron potentials end to end on Domke's synthetic denoising (pdsp gen domke): train with
# --unary-model and --pairwise-model mlp, predict from the model file (which records the classes
# and holds the networks' weights after the data's parameters), resume bitwise from a
# checkpoint on the same ranks, and train on 2 ranks to the 1-rank model within 1e-9; then
# Domke's alternating fits (--learner domke) lower F at every iteration and predict; and boosted
# trees (--unary-model and --pairwise-model trees): the model file holds them, and under both
# learners that grow them (domke, primal-dual) 2 ranks grow the same trees bitwise and a run
# killed by SIGKILL resumes to the uninterrupted model bitwise.
set -euo pipefail
source "$(dirname "$0")/kill_at_checkpoint.sh"
pdsp=$1
mpirun=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$pdsp" gen domke --train "$work/train.h5" --test "$work/test.h5" --height 16 --width 16 \
  --train-images 3 --test-images 2 --blur 2 > /dev/null
common=(train --data "$work/train.h5" --epsilon 0.5 --unary-model mlp --pairwise-model mlp
        --hidden 4 --tol 0 --threads 1)
"$pdsp" "${common[@]}" --max-iters 20 --out "$work/model.h5" > "$work/log"
grep -q "stopped after 20 iterations" "$work/log" || { echo "FAIL: training"; cat "$work/log"; exit 1; }
# 12 data parameters, then per network U [4 x 2], b [4], W [states x 4], c [states]: 2 and 4
# states give 22 and 32.
/usr/bin/python3 - "$work/model.h5" <<'PY'
import sys, h5py
with h5py.File(sys.argv[1], "r") as f:
    assert f["/theta"].shape == (12 + 22 + 32,), f["/theta"].shape
    assert f.attrs["unary_model"] == b"mlp" and f.attrs["pairwise_model"] == b"mlp"
    assert int(f.attrs["hidden"]) == 4
PY
echo "ok: the model file records the classes and holds 66 parameters"
"$pdsp" predict --data "$work/test.h5" --model "$work/model.h5" --out "$work/pred.h5" > "$work/log"
grep -q "per-variable error" "$work/log" || { echo "FAIL: predict"; cat "$work/log"; exit 1; }
echo "ok: predicted with the networks ($(grep -o 'per-variable error: [0-9.]*%' "$work/log"))"

"$pdsp" "${common[@]}" --max-iters 8 --out "$work/part.h5" --checkpoint-dir "$work/ck" > /dev/null
"$pdsp" "${common[@]}" --max-iters 20 --out "$work/resumed.h5" --checkpoint-dir "$work/ck" \
  --resume auto > "$work/log"
grep -q "resuming from" "$work/log" || { echo "FAIL: no resume"; cat "$work/log"; exit 1; }
h5diff "$work/model.h5" "$work/resumed.h5" /theta > /dev/null ||
  { echo "FAIL: the resumed run is not bitwise the uninterrupted one"; exit 1; }
echo "ok: checkpointed at 8 iterations and resumed: theta bitwise"

"$mpirun" --allow-run-as-root --oversubscribe --bind-to none -np 2 "$pdsp" "${common[@]}" \
  --max-iters 20 --out "$work/two.h5" > /dev/null
h5diff --relative=1e-9 "$work/model.h5" "$work/two.h5" /theta > /dev/null ||
  { echo "FAIL: 2 ranks differ from 1 by more than 1e-9"; h5diff --relative=1e-9 "$work/model.h5" "$work/two.h5" /theta | head; exit 1; }
echo "ok: 2 ranks give the 1-rank theta within 1e-9"

# Each example split over 2 ranks: a shard's copies of cut factors get the networks' and the
# trees' potentials too, so a split example trains to the whole one's model up to round-off,
# under the primal-dual learner and under domke's.
"$pdsp" gen domke --train "$work/one.h5" --height 16 --width 16 --train-images 1 --blur 2 \
  > /dev/null
for classes in "--pairwise-model mlp --hidden 4" "--unary-model trees --pairwise-model trees" \
               "--learner domke --unary-model trees --pairwise-model trees"; do
  split=(train --data "$work/one.h5" --epsilon 0.5 $classes --tol 0 --threads 1 --max-iters 6)
  "$pdsp" "${split[@]}" --out "$work/whole.h5" > /dev/null
  "$mpirun" --allow-run-as-root --oversubscribe --bind-to none -np 2 "$pdsp" "${split[@]}" \
    --shards 2 --out "$work/split.h5" > "$work/log"
  grep -q "in 2 shards" "$work/log" || { echo "FAIL: no example was split"; cat "$work/log"; exit 1; }
  for object in /theta /trees; do
    h5diff --delta=1e-9 "$work/whole.h5" "$work/split.h5" $object > /dev/null 2>&1 || {
      h5ls "$work/whole.h5/$object" > /dev/null 2>&1 || continue
      echo "FAIL: $classes: split examples differ from whole ones ($object)"; exit 1; }
  done
  echo "ok: $classes: split examples train to the whole ones' model within 1e-9"
done

"$pdsp" train --data "$work/train.h5" --learner domke --epsilon 0.5 --unary-model mlp --hidden 4 \
  --max-iters 4 --fit-iters 20 --fit-sweeps 10 --tol 0 --threads 1 --out "$work/domke.h5" \
  --metrics "$work/domke.jsonl" > "$work/log"
/usr/bin/python3 - "$work/domke.jsonl" <<'PY'
import json, sys
f = [r["F"] for r in map(json.loads, open(sys.argv[1])) if r["type"] == "iteration"]
assert len(f) == 4 and all(b < a for a, b in zip(f, f[1:])), f
PY
"$pdsp" predict --data "$work/test.h5" --model "$work/domke.h5" --out "$work/pred.h5" > /dev/null
echo "ok: --learner domke lowered F at each of 4 iterations and its model predicts"

trees=(train --data "$work/train.h5" --learner domke --epsilon 0.5 --unary-model trees
       --pairwise-model trees --tol 0 --max-iters 6)
"$pdsp" "${trees[@]}" --threads 1 --out "$work/trees.h5" > "$work/log"
"$pdsp" info "$work/trees.h5" > "$work/info"
grep -q "trees: variables type 0, 6 rounds of 2 trees" "$work/info" &&
  grep -q "trees: factors type 0, 6 rounds of 4 trees" "$work/info" ||
  { echo "FAIL: the model file's trees"; cat "$work/info"; exit 1; }
"$pdsp" predict --data "$work/test.h5" --model "$work/trees.h5" --out "$work/pred.h5" > "$work/log"
echo "ok: the model file holds 6 rounds of trees per type and predicts" \
  "($(grep -o 'per-variable error: [0-9.]*%' "$work/log"))"

# A damaged leaf value, booster or index is one line naming the file and dataset, exit code 2:
# a booster of other trees than tree_offset's (the factors' under the variables'), an index
# naming one ensemble twice (the factors' then unread), or no trees at all for a trees class.
for file in nan garbled swapped twice none half linear; do cp "$work/trees.h5" "$work/$file.h5"; done
/usr/bin/python3 - "$work" <<'PY'
import sys, h5py, numpy as np
def edit(name, change):
    with h5py.File(f"{sys.argv[1]}/{name}.h5", "a") as f:
        change(f)
def garble(f):
    del f["/trees/factors_0/booster"]
    f["/trees/factors_0/booster"] = np.frombuffer(b"{garbage", dtype=np.uint8)
def swap(f):
    factors = f["/trees/factors_0/booster"][:]
    del f["/trees/variables_0/booster"]
    f["/trees/variables_0/booster"] = factors
def twice(f):
    index = f["/trees/index"][:]
    index[3:] = index[:3]
    f["/trees/index"][...] = index
edit("nan", lambda f: f["/trees/variables_0/leaf_value"].__setitem__(3, np.nan))
edit("garbled", garble)
edit("swapped", swap)
edit("twice", twice)
edit("none", lambda f: f.__delitem__("/trees"))
def half(f):
    index = f["/trees/index"][:3]
    del f["/trees/index"]
    f["/trees/index"] = index
edit("half", half)
edit("linear", lambda f: f.attrs.__setitem__("unary_model", "linear"))
PY
for case in "nan.h5:/trees/variables_0/leaf_value\[3\]: value is not finite" \
            "garbled.h5:/trees/factors_0/booster is not a model XGBoost reads" \
            "swapped.h5:/trees/variables_0/booster holds 6 rounds of 4 outputs" \
            "twice.h5:/trees/index\[3\]: names /trees/variables_0 twice" \
            "none.h5:/trees/variables_0 is missing: the data's variables of type 0 need its trees" \
            "half.h5:/trees/factors_0 is missing: the data's factors of type 0 need its trees" \
            "linear.h5:/trees/index\[0\]: an ensemble of variables, but @unary_model is not trees"; do
  file=${case%%:*}
  commands=("predict --data $work/test.h5 --model $work/$file --out $work/p.h5")
  # XGBoost reads a booster, and the trees are matched to the types, against the data, which
  # info does not have.
  case $file in garbled.h5 | swapped.h5 | none.h5 | half.h5) ;; *) commands+=("info $work/$file") ;; esac
  for command in "${commands[@]}"; do
    set +e
    # shellcheck disable=SC2086
    "$pdsp" $command > /dev/null 2> "$work/err"
    code=$?
    set -e
    { [ $code -eq 2 ] && [ "$(wc -l < "$work/err")" -eq 1 ] &&
      grep -q "$work/$file: ${case#*:}" "$work/err"; } ||
      { echo "FAIL: $file: ${command%% *} (exit $code)"; cat "$work/err"; exit 1; }
  done
done
echo "ok: damaged trees in a model file are one-line errors of predict and info"

stopped() { grep -o 'stopped after 150 iterations: .*(F = [^)]*)' "$1"; }
# Both learners that grow trees, each on 2 ranks and resumed after SIGKILL. The primal-dual
# learner's step rounds run at trw numbers, a saddle that domke refuses, and split on a
# subsample of the rows drawn afresh each round.
for learner in domke primal-dual; do
  trees=(train --data "$work/train.h5" --learner $learner --epsilon 0.5 --unary-model trees
         --pairwise-model trees --tol 0 --max-iters 6)
  [ $learner = domke ] || trees+=(--counting trw --tree-subsample 0.5)
  "$pdsp" "${trees[@]}" --threads 1 --out "$work/trees.h5" > /dev/null
  "$mpirun" --allow-run-as-root --oversubscribe --bind-to none -np 2 "$pdsp" "${trees[@]}" \
    --threads 1 --out "$work/trees2.h5" > /dev/null
  for object in /theta /trees; do
    h5diff "$work/trees.h5" "$work/trees2.h5" $object > /dev/null ||
      { echo "FAIL: $learner: 2 ranks grew other trees ($object)"; exit 1; }
  done
  echo "ok: $learner: 2 ranks grow the 1-rank trees bitwise"

  # Checkpoints after every iteration; the run is killed once one is published, well before
  # its 150 iterations are done, and resumed to them.
  rm -rf "$work/tck" "$work/killed.h5" "$work/resumed.h5"
  "$pdsp" "${trees[@]}" --threads 1 --max-iters 150 --out "$work/trees150.h5" > "$work/log150"
  kill_at_first_checkpoint "$work/tck" "$work/killed.h5" \
    "$pdsp" "${trees[@]}" --threads 1 --max-iters 150 --out "$work/killed.h5" \
    --checkpoint-dir "$work/tck" --checkpoint-every 1
  "$pdsp" "${trees[@]}" --threads 1 --max-iters 150 --out "$work/resumed.h5" \
    --checkpoint-dir "$work/tck" --checkpoint-every 1 --resume auto > "$work/log"
  grep -q "resuming from .* after iteration [0-9]\{1,2\}$" "$work/log" ||
    { echo "FAIL: $learner: no resume from before iteration 100"; cat "$work/log"; exit 1; }
  for object in /theta /trees; do
    h5diff "$work/trees150.h5" "$work/resumed.h5" $object > /dev/null ||
      { echo "FAIL: $learner: the resumed trees differ ($object)"; exit 1; }
  done
  echo "ok: $learner: killed by SIGKILL, resumed $(grep -o 'after iteration [0-9]*' "$work/log"):" \
    "bitwise"

  # Resumed from the checkpoint of its last iteration, a run has nothing left to do: it writes
  # the model and reports the F it stopped at, not 0.
  "$pdsp" "${trees[@]}" --threads 1 --max-iters 150 --out "$work/again.h5" \
    --checkpoint-dir "$work/tck" --resume auto > "$work/log-again"
  expected=$(stopped "$work/log150")
  [ -n "$expected" ] && [ "$expected" = "$(stopped "$work/log-again")" ] ||
    { echo "FAIL: $learner: resumed at the limit: $(stopped "$work/log-again")"; exit 1; }
  echo "ok: $learner: resumed at its limit, the run reports its last F"
done

# Another function class than the checkpoints' is refused by name in one line (it had been
# reported as a parameter count, after a line skipping the newest checkpoint).
set +e
"$pdsp" train --data "$work/train.h5" --epsilon 0.5 --unary-model mlp --hidden 4 --tol 0 \
  --max-iters 150 --counting trw --threads 1 --out "$work/refused.h5" --checkpoint-dir "$work/tck" \
  --resume auto > /dev/null 2> "$work/err"
code=$?
set -e
{ [ $code -eq 2 ] && [ "$(wc -l < "$work/err")" -eq 1 ] && [ ! -e "$work/refused.h5" ] &&
  grep -q "cannot resume: unary_model was trees in the checkpoint and is mlp now" "$work/err"; } ||
  { echo "FAIL: resuming trees as mlp (exit $code)"; cat "$work/err"; exit 1; }
echo "ok: resuming with another function class is one line naming it"

# A flag that changes nothing in the run is named in a note (here the networks' size without a
# network); with a network it is not.
"$pdsp" train --data "$work/train.h5" --epsilon 0.5 --hidden 4 --max-iters 1 --threads 1 \
  --out "$work/noted.h5" > "$work/log"
grep -q "^note: --hidden is set but changes nothing with --learner primal-dual, --unary-model linear" "$work/log" ||
  { echo "FAIL: no note on --hidden without a network"; cat "$work/log"; exit 1; }
"$pdsp" train --data "$work/train.h5" --epsilon 0.5 --hidden 4 --unary-model mlp --max-iters 1 \
  --threads 1 --out "$work/noted.h5" > "$work/log"
! grep -q "^note:" "$work/log" || { echo "FAIL: a note on --hidden with a network"; cat "$work/log"; exit 1; }
echo "ok: a flag that changes nothing is named in a note"
