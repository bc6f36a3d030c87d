#!/usr/bin/env bash
# Partly labelled data from the command line: labels -1 are read and counted (info, predict),
# refused by learners that need every label, learned with by --learner latent (1 rank against 2
# ranks within round-off; killed by SIGKILL and resumed bitwise), and predicted by
# predict --clamp with the given labels held (1 rank against 2 ranks); with Bethe numbers CCCP
# stops where F rises.
set -euo pipefail
source "$(dirname "$0")/kill_at_checkpoint.sh"
pdsp=$1
mpirun=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
two=("$mpirun" --allow-run-as-root --oversubscribe --bind-to none -np 2)
"$pdsp" gen denoise --train "$work/full.h5" --test "$work/test.h5" --height 12 --width 12 \
  --train-copies 6 --test-copies 2 --params shared --quiet
# A seeded 30% of the training labels unobserved; the test set with its first half held.
/usr/bin/python3 - "$work" <<'PY'
import shutil, sys
import h5py, numpy as np
work = sys.argv[1]
shutil.copy(f"{work}/full.h5", f"{work}/partial.h5")
with h5py.File(f"{work}/partial.h5", "r+") as f:
    label = f["/vars/label"][:]
    label[np.random.default_rng(3).random(label.size) < 0.3] = -1
    f["/vars/label"][...] = label
shutil.copy(f"{work}/test.h5", f"{work}/held.h5")
with h5py.File(f"{work}/held.h5", "r+") as f:
    label = f["/vars/label"][:]
    label[label.size // 2:] = -1
    f["/vars/label"][...] = label
PY
first=$(/usr/bin/python3 -c "import h5py, numpy as np; print(int(np.argmax(h5py.File('$work/partial.h5')['/vars/label'][:] < 0)))")
unobserved=$(/usr/bin/python3 -c "import h5py; print(int((h5py.File('$work/partial.h5')['/vars/label'][:] < 0).sum()))")

"$pdsp" info "$work/partial.h5" | grep -q "labels *yes, $unobserved of .* unobserved" ||
  { echo "FAIL: info does not count the unobserved labels"; "$pdsp" info "$work/partial.h5"; exit 1; }
echo "ok: info counts $unobserved unobserved labels"

for ranks in 1 2; do
  launcher=(); [ "$ranks" = 2 ] && launcher=("${two[@]}")
  set +e
  "${launcher[@]}" "$pdsp" train --data "$work/partial.h5" --out "$work/refused.h5" --quiet \
    > "$work/out" 2> "$work/err"
  code=$?
  set -e
  [ "$code" = 2 ] && [ "$(grep -c error "$work/err")" = 1 ] &&
    grep -q "partial.h5: /vars/label\[$first\] is -1 (unobserved): --learner primal-dual needs every training label" "$work/err" ||
    { echo "FAIL: primal-dual on $ranks rank(s) did not refuse -1 in one line (exit $code)"; cat "$work/err"; exit 1; }
done
echo "ok: primal-dual refuses /vars/label[$first] = -1 in one line on 1 and 2 ranks"

# With no label observed latent has nothing to complete from (D came out NaN): refused.
/usr/bin/python3 - "$work" <<'PY'
import shutil, sys, h5py
shutil.copy(f"{sys.argv[1]}/full.h5", f"{sys.argv[1]}/unlabelled.h5")
with h5py.File(f"{sys.argv[1]}/unlabelled.h5", "r+") as f:
    f["/vars/label"][...] = -1
PY
for ranks in 1 2; do
  launcher=(); [ "$ranks" = 2 ] && launcher=("${two[@]}")
  set +e
  "${launcher[@]}" "$pdsp" train --data "$work/unlabelled.h5" --learner latent \
    --out "$work/refused.h5" --quiet > "$work/out" 2> "$work/err"
  code=$?
  set -e
  [ "$code" = 2 ] && [ "$(grep -c error "$work/err")" = 1 ] && [ ! -e "$work/refused.h5" ] &&
    grep -q "unlabelled.h5: /vars/label: every label is -1 (unobserved); --learner latent needs some observed" "$work/err" ||
    { echo "FAIL: latent on $ranks rank(s) did not refuse all-unobserved labels in one line (exit $code)"; cat "$work/err"; exit 1; }
done
echo "ok: latent refuses a training set without an observed label on 1 and 2 ranks"

common=(train --data "$work/partial.h5" --learner latent --C 0.5 --inner-iters 30 --threads 1)
"$pdsp" "${common[@]}" --max-iters 8 --out "$work/one.h5" --metrics "$work/one.jsonl" > "$work/log1"
"${two[@]}" "$pdsp" "${common[@]}" --max-iters 8 --out "$work/two.h5" > /dev/null
# Each inner run stops where F's relative decrease falls below 1e-6, which fixes theta to far
# less than its last bits: the two rank counts' round-off moves those stops a little (measured
# 0.7e-8 at 38f5085, 5.7e-8 once the first step came from 2F/|g|^2), a wrong sum by far more.
h5diff -d 1e-7 "$work/one.h5" "$work/two.h5" /theta > /dev/null ||
  { echo "FAIL: latent on 2 ranks differs from 1 rank by more than 1e-7"; h5diff -d 1e-7 -r "$work/one.h5" "$work/two.h5" /theta | head; exit 1; }
grep -q "CCCP: .* the objective decreased at every step" "$work/log1" ||
  { echo "FAIL: no CCCP summary"; cat "$work/log1"; exit 1; }
grep -q "completion at epsilon 0.1;\|completion at epsilon 0.1$" "$work/log1" ||
  { echo "FAIL: the log does not give the default completion temperature (epsilon / 10)"; cat "$work/log1"; exit 1; }
echo "ok: latent on 2 ranks gives the 1-rank model within 1e-7; $(grep -o 'CCCP: .*' "$work/log1")"

# The completion at the training temperature (Schwing et al.'s objective): 2 ranks as 1, kept in
# the model, another model than the default's; a hotter completion is refused.
same=("${common[@]}" --max-iters 8 --completion-epsilon 1)
"$pdsp" "${same[@]}" --out "$work/same1.h5" > "$work/log1"
"${two[@]}" "$pdsp" "${same[@]}" --out "$work/same2.h5" > /dev/null
h5diff -d 1e-8 "$work/same1.h5" "$work/same2.h5" /theta > /dev/null ||
  { echo "FAIL: latent --completion-epsilon 1 on 2 ranks differs from 1 rank"; exit 1; }
grep -q "completion at epsilon" "$work/log1" &&
  { echo "FAIL: the log names a completion temperature equal to epsilon"; cat "$work/log1"; exit 1; }
[ "$(/usr/bin/python3 -c "import h5py; print(h5py.File('$work/same1.h5').attrs['completion_epsilon'])")" = 1.0 ] ||
  { echo "FAIL: the model does not record completion_epsilon"; exit 1; }
h5diff "$work/one.h5" "$work/same1.h5" /theta > /dev/null &&
  { echo "FAIL: the completion's temperature changed nothing"; exit 1; }
set +e
"$pdsp" "${common[@]}" --completion-epsilon 2 --out "$work/hot.h5" > /dev/null 2> "$work/err"
code=$?
set -e
[ "$code" = 2 ] && [ "$(grep -c error "$work/err")" = 1 ] && [ ! -e "$work/hot.h5" ] &&
  grep -q -- "--completion-epsilon: 2 is above --epsilon 1" "$work/err" ||
  { echo "FAIL: --completion-epsilon above --epsilon not refused in one line (exit $code)"; cat "$work/err"; exit 1; }
echo "ok: latent completes at epsilon / 10 by default; --completion-epsilon 1: 2 ranks as 1, recorded; 2 (above --epsilon) refused"

# Checkpoints after every CCCP step; killed once one is published, resumed to the same model.
"$pdsp" "${common[@]}" --max-iters 30 --tol 0 --out "$work/whole.h5" > /dev/null
kill_at_first_checkpoint "$work/ck" "$work/killed.h5" \
  "$pdsp" "${common[@]}" --max-iters 30 --tol 0 --out "$work/killed.h5" --checkpoint-dir "$work/ck" \
  --checkpoint-every 1
"$pdsp" "${common[@]}" --max-iters 30 --tol 0 --out "$work/resumed.h5" --checkpoint-dir "$work/ck" \
  --checkpoint-every 1 --resume auto > "$work/log"
grep -q "resuming from .* after iteration [0-9]*$" "$work/log" ||
  { echo "FAIL: no resume"; cat "$work/log"; exit 1; }
h5diff "$work/whole.h5" "$work/resumed.h5" /theta > /dev/null ||
  { echo "FAIL: the resumed model differs"; exit 1; }
echo "ok: latent killed by SIGKILL, resumed $(grep -o 'after iteration [0-9]*' "$work/log"): bitwise"

# Bethe's counting numbers on a grid (negative): F need not fall. Here it rises at step 2 (3,088
# to about 6,300), CCCP stops there, says why, and the model is step 1's theta.
"$pdsp" gen denoise --train "$work/grid.h5" --test "$work/grid_test.h5" --height 32 --width 32 \
  --train-copies 10 --test-copies 1 --params shared --noise flip --flip 0.25 --quiet
/usr/bin/python3 - "$work/grid.h5" <<'PY'
import sys
import h5py, numpy as np
with h5py.File(sys.argv[1], "r+") as f:
    label = f["/vars/label"][:]
    label[np.random.default_rng(2).random(label.size) < 0.3] = -1
    f["/vars/label"][...] = label
PY
bethe=(train --data "$work/grid.h5" --learner latent --epsilon 1 --C 0.01 --counting bethe
       --inner-iters 50 --threads 1)
"$pdsp" "${bethe[@]}" --max-iters 20 --out "$work/bethe.h5" > "$work/log"
grep -q "the CCCP objective rose by .* at step 2 (negative counting numbers: no guaranteed decrease); the model is the theta before it" "$work/log" &&
  grep -q "CCCP: 2 step(s); the objective rose at the last step" "$work/log" ||
  { echo "FAIL: CCCP with Bethe numbers did not stop at the rise in so many words"; cat "$work/log"; exit 1; }
"$pdsp" "${bethe[@]}" --max-iters 1 --out "$work/step1.h5" > /dev/null
h5diff "$work/bethe.h5" "$work/step1.h5" /theta > /dev/null ||
  { echo "FAIL: the model after the rise is not step 1's theta"; exit 1; }
echo "ok: with Bethe numbers CCCP stopped at the rise at step 2, the model step 1's theta"

# predict --clamp: the held labels are kept, the rest predicted; 2 ranks as 1.
"$pdsp" predict --data "$work/held.h5" --model "$work/one.h5" --out "$work/p1.h5" --clamp --quiet > "$work/pred"
grep -q "not measured: the .* predicted variables have no label (.* held at theirs)" "$work/pred" ||
  { echo "FAIL: the error line of --clamp"; cat "$work/pred"; exit 1; }
"${two[@]}" "$pdsp" predict --data "$work/held.h5" --model "$work/one.h5" --out "$work/p2.h5" --clamp --quiet > /dev/null
h5diff -d 1e-9 "$work/p1.h5" "$work/p2.h5" /prediction/marginal > /dev/null &&
  h5diff "$work/p1.h5" "$work/p2.h5" /prediction/label > /dev/null ||
  { echo "FAIL: predict --clamp on 2 ranks differs"; exit 1; }
/usr/bin/python3 - "$work" <<'PY'
import sys
import h5py, numpy as np
work = sys.argv[1]
held = h5py.File(f"{work}/held.h5")["/vars/label"][:]
predicted = h5py.File(f"{work}/p1.h5")["/prediction/label"][:]
assert np.array_equal(predicted[held >= 0], held[held >= 0]), "a held label was not kept"
PY
/usr/bin/python3 -c "import h5py; f = h5py.File('$work/test.h5', 'r+'); del f['/vars/label']"
set +e
"$pdsp" predict --data "$work/test.h5" --model "$work/one.h5" --out "$work/nolabels.h5" --clamp --quiet 2> "$work/err"
code=$?
set -e
[ "$code" = 2 ] && grep -q "\-\-clamp: .*test.h5 has no /vars/label to hold variables at" "$work/err" ||
  { echo "FAIL: --clamp without labels (exit $code)"; cat "$work/err"; exit 1; }
echo "ok: predict --clamp keeps the held labels, 2 ranks as 1, refuses data without labels"
