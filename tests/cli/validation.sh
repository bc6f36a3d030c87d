#!/usr/bin/env bash
# pdsp train --validation: the checks land in the metrics every --validate-every iterations and
# after the last, the model written is the checked theta with the lowest validation error (the
# same theta as a run stopped at that iteration, and pdsp predict on the validation set reports
# that error), --patience stops training, 2 ranks agree with 1, every learner that writes a
# theta takes it, a run killed by SIGKILL resumes to the same model, and bad validation sets
# are refused in one line.
set -euo pipefail
source "$(dirname "$0")/kill_at_checkpoint.sh"
pdsp=$1
mpirun=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
two=("$mpirun" --allow-run-as-root --oversubscribe --bind-to none -np 2)
# Flip noise and 3 shared parameters: the validation error falls for a while, then stays.
"$pdsp" gen denoise --train "$work/train.h5" --test "$work/val.h5" --height 12 --width 12 \
  --train-copies 4 --test-copies 3 --params shared --noise flip --flip 0.25 --quiet
common=(train --data "$work/train.h5" --C 0.01 --tol 0 --threads 1 --counting uniform)
checks=(--validation "$work/val.h5" --validate-every 2 --patience 3)

"$pdsp" "${common[@]}" "${checks[@]}" --max-iters 200 --out "$work/m.h5" --metrics "$work/m.jsonl" > "$work/log"
best=$(grep -o "the model is theta after iteration [0-9]*" "$work/log" | grep -o "[0-9]*$") ||
  { echo "FAIL: the log does not name the model's iteration"; cat "$work/log"; exit 1; }
/usr/bin/python3 - "$work/m.jsonl" "$best" <<'PY'
import json, math, sys
records = [json.loads(line) for line in open(sys.argv[1])]
iterations = [r for r in records if r["type"] == "iteration"]
end = records[-1]
checked = {r["iteration"]: r["validation_error"] for r in iterations if r["validation_error"] is not None}
assert all(i % 2 == 0 or i == iterations[-1]["iteration"] for i in checked), checked
assert all(r["validation_loss"] is not None for r in iterations if r["iteration"] in checked)
best = int(sys.argv[2])
assert checked[best] == min(checked.values()), (best, checked)
assert end["stop_reason"].startswith("early stop: the validation error has not fallen in 3"), end
later = [i for i in checked if i > best]
assert len(later) == 3 and all(checked[i] >= checked[best] for i in later), (best, checked)
assert best > 2 and checked[2] > checked[best], ("the error must fall after the first check", checked)
print(f"ok: {len(checked)} checks, best after iteration {best} ({checked[best]:.4f}%), early stop after 3 more")
PY
# The same trajectory stopped at the best iteration gives the written model bitwise, and
# predict on the validation set reports the logged error.
"$pdsp" "${common[@]}" --max-iters "$best" --out "$work/plain.h5" > /dev/null
h5diff "$work/m.h5" "$work/plain.h5" /theta > /dev/null ||
  { echo "FAIL: the model written is not theta after iteration $best"; exit 1; }
logged=$(grep -o "the model is theta after iteration $best, validation error [0-9.]*%" "$work/log" | grep -o "[0-9.]*%$")
"$pdsp" predict --data "$work/val.h5" --model "$work/m.h5" --out "$work/p.h5" --quiet | grep -q "per-variable error: $logged" ||
  { echo "FAIL: predict does not report the validation error $logged"; exit 1; }
echo "ok: the model is theta after iteration $best; predict reports its $logged"

"${two[@]}" "$pdsp" "${common[@]}" "${checks[@]}" --max-iters 200 --out "$work/m2.h5" > "$work/log2"
grep -q "the model is theta after iteration $best," "$work/log2" &&
  h5diff -d 1e-9 "$work/m.h5" "$work/m2.h5" /theta > /dev/null ||
  { echo "FAIL: 2 ranks chose another model"; grep "the model is" "$work/log2"; exit 1; }
echo "ok: 2 ranks choose the same iteration and theta within 1e-9"

for learner in ssvm-fw lbp-lbfgs dlpw latent; do
  case $learner in
    ssvm-fw|dlpw) extra=(--epsilon 0) ;;
    *) extra=() ;;
  esac
  "$pdsp" train --data "$work/train.h5" --learner "$learner" "${extra[@]}" --max-iters 4 --threads 1 \
    --validation "$work/val.h5" --out "$work/$learner.h5" --metrics "$work/$learner.jsonl" > "$work/log_$learner"
  [ "$(grep -c '"validation_error":[0-9]' "$work/$learner.jsonl")" -ge 2 ] &&
    grep -q "the model is theta after iteration" "$work/log_$learner" ||
    { echo "FAIL: --learner $learner did not validate"; tail -5 "$work/log_$learner"; exit 1; }
done
echo "ok: ssvm-fw, lbp-lbfgs, dlpw and latent validate"

# Killed once a checkpoint is published, resumed: the same best and the same model.
long=(--max-iters 60 --validate-every 1 --validation "$work/val.h5")
"$pdsp" "${common[@]}" "${long[@]}" --out "$work/whole.h5" > "$work/whole.log"
kill_at_first_checkpoint "$work/ck" "$work/killed.h5" \
  "$pdsp" "${common[@]}" "${long[@]}" --out "$work/killed.h5" --checkpoint-dir "$work/ck" \
  --checkpoint-every 1
"$pdsp" "${common[@]}" "${long[@]}" --out "$work/resumed.h5" --checkpoint-dir "$work/ck" \
  --checkpoint-every 1 --resume auto > "$work/resumed.log"
grep -q "resuming from" "$work/resumed.log" || { echo "FAIL: no resume"; exit 1; }
h5diff "$work/whole.h5" "$work/resumed.h5" /theta > /dev/null &&
  [ "$(grep -o 'the model is theta after iteration [0-9]*' "$work/whole.log")" = \
    "$(grep -o 'the model is theta after iteration [0-9]*' "$work/resumed.log")" ] ||
  { echo "FAIL: the resumed run chose another model"; exit 1; }
echo "ok: killed by SIGKILL and resumed $(grep -o 'after iteration [0-9]*$' "$work/resumed.log" | head -1): the same model"
# The best so far travels in the checkpoint: a run checkpointed just after its best iteration
# and continued to 60 keeps that best, as the uninterrupted run does.
best_long=$(grep -o "the model is theta after iteration [0-9]*" "$work/whole.log" | grep -o "[0-9]*$")
"$pdsp" "${common[@]}" "${long[@]}" --max-iters "$((best_long + 2))" --out "$work/first.h5" \
  --checkpoint-dir "$work/ck2" --checkpoint-every 1 > /dev/null
"$pdsp" "${common[@]}" "${long[@]}" --out "$work/continued.h5" --checkpoint-dir "$work/ck2" \
  --checkpoint-every 1 --resume auto > "$work/continued.log"
[ "$(grep -o 'the model is theta after iteration [0-9]*' "$work/whole.log")" = \
  "$(grep -o 'the model is theta after iteration [0-9]*' "$work/continued.log")" ] &&
  h5diff "$work/whole.h5" "$work/continued.h5" /theta > /dev/null ||
  { echo "FAIL: the continued run lost the best before its checkpoint"; grep "the model is" "$work/whole.log" "$work/continued.log"; exit 1; }
echo "ok: continued from after iteration $((best_long + 2)): $(grep -o 'the model is theta after iteration [0-9]*' "$work/continued.log")"

# The best so far was checked on the checkpoint's validation set: another one is refused.
/usr/bin/python3 -c "
import h5py, shutil
shutil.copy('$work/val.h5', '$work/val2.h5')
with h5py.File('$work/val2.h5', 'r+') as f:
    label = f['/vars/label'][:]; label[0] = 1 - label[0]; f['/vars/label'][...] = label"
set +e
"$pdsp" "${common[@]}" --validation "$work/val2.h5" --validate-every 2 --max-iters 60 \
  --out "$work/refused.h5" --checkpoint-dir "$work/ck2" --resume auto > /dev/null 2> "$work/err"
code=$?
set -e
{ [ "$code" = 2 ] && [ "$(wc -l < "$work/err")" = 1 ] && [ ! -e "$work/refused.h5" ] &&
  grep -q "cannot resume: validation_data was [0-9a-f]* in the checkpoint and is [0-9a-f]* now" "$work/err"; } ||
  { echo "FAIL: resumed with another validation set (exit $code)"; cat "$work/err"; exit 1; }
echo "ok: resuming with another validation set is refused in one line"

# Bad validation sets: one line, exit 2, before training.
"$pdsp" gen denoise --train "$work/other.h5" --height 10 --width 10 --train-copies 1 --params per-site --quiet
/usr/bin/python3 -c "
import h5py, shutil
shutil.copy('$work/val.h5', '$work/partial.h5')
with h5py.File('$work/partial.h5', 'r+') as f:
    label = f['/vars/label'][:]; label[7] = -1; f['/vars/label'][...] = label"
expect_refusal() {
  set +e
  "$pdsp" "${common[@]}" --max-iters 2 --out "$work/refused.h5" --validation "$1" > /dev/null 2> "$work/err"
  local code=$?
  set -e
  [ "$code" = 2 ] && [ "$(wc -l < "$work/err")" = 1 ] && grep -q "$2" "$work/err" ||
    { echo "FAIL: --validation $1 (exit $code)"; cat "$work/err"; exit 1; }
}
expect_refusal "$work/partial.h5" "partial.h5: /vars/label\[7\] is -1 (unobserved): a validation set needs every label"
expect_refusal "$work/other.h5" "other.h5: @num_params is [0-9]*, but the training set .* has 3"
expect_refusal "$work/absent.h5" "absent.h5"
echo "ok: validation sets with a -1 label, other parameters or no file are refused in one line"
