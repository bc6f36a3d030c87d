#!/usr/bin/env bash
# A user's first hour: --version, a config file with command-line overrides that round-trips
# through the model's attributes, provenance in every output file and the metrics header, and a
# finished model that survives an output path broken during training.
set -euo pipefail
pdsp=$(realpath "$1")
mpirun=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
two=("$mpirun" --allow-run-as-root --oversubscribe --bind-to none -np 2)
fail() { echo "FAIL: $*"; exit 1; }

"$pdsp" --version > "$work/version"
for field in "^pdsp [0-9]" "^commit: [0-9a-f]" "^build: " "^compiler: " "^MPI: " "^HDF5: 1\."; do
  grep -q "$field" "$work/version" || fail "pdsp --version lacks /$field/"; done
echo "ok: pdsp --version: $(head -1 "$work/version"), $(grep MPI "$work/version")"

"$pdsp" gen denoise --train "$work/train.h5" --test "$work/test.h5" --height 16 --width 16 \
  --train-copies 6 --test-copies 2 > /dev/null

# Settings from a file (top level and the [train] section), one overridden on the command line.
cat > "$work/run.toml" <<TOML
# a job's settings
epsilon = 0.5
C = 2
[train]
data = "$work/train.h5"
max-iters = 6
[predict]
tol = 1e-6
TOML
"${two[@]}" "$pdsp" train --config "$work/run.toml" --C 0.5 --out "$work/model.h5" --threads 1 \
  --metrics "$work/metrics.jsonl" --checkpoint-dir "$work/ck" --checkpoint-every 3 > "$work/log"
grep -q '^C=0.5$' "$work/log" || fail "the effective settings printed at start lack the override"
"$pdsp" info "$work/model.h5" --write-config "$work/again.toml" > "$work/info"
grep -q "ranks  *2" "$work/info" || fail "pdsp info does not show 2 ranks"
grep -q "threads  *1" "$work/info" || fail "pdsp info does not show 1 thread"
grep -q "command_line .*--config $work/run.toml --C 0.5" "$work/info" || fail "no command line"
grep -q "data_fingerprint .*checksum=" "$work/info" || fail "no training-set fingerprint"
# The written settings re-run the same training (same ranks and threads: bitwise).
"${two[@]}" "$pdsp" train --config "$work/again.toml" --out "$work/rerun.h5" --metrics "" \
  --checkpoint-dir "" --checkpoint-every 0 > /dev/null
h5diff "$work/model.h5" "$work/rerun.h5" /theta > /dev/null || fail "the written config trains another model"
/usr/bin/python3 - "$work" <<'PY'
import json, sys, h5py
work = sys.argv[1]
model = h5py.File(f"{work}/model.h5", "r")
assert model.attrs["C"] == 0.5 and model.attrs["epsilon"] == 0.5, dict(model.attrs)
assert model.attrs["max_iters"] == 6 and model.attrs["max_iters"].dtype.kind == "i"
# Every output carries the provenance; pdsp writes its string attributes fixed-length.
for name in ["model.h5", "ck/ckpt-000000006.h5"]:
    f = h5py.File(f"{work}/{name}", "r")
    for key in ["pdsp_version", "pdsp_commit", "command_line", "hosts", "started_at",
                "data_fingerprint", "effective_config"]:
        assert key in f.attrs, (name, key)
        assert not h5py.check_string_dtype(f.attrs.get_id(key).dtype).length is None, (name, key)
    assert f.attrs["ranks"] == 2, name
header = json.loads(open(f"{work}/metrics.jsonl").readline())
assert header["ranks"] == 2 and header["threads"] == 1, header
assert header["epsilon"] == 0.5 and isinstance(header["max_iters"], int), header
assert header["pdsp_commit"] == model.attrs["pdsp_commit"].decode(), header
assert "C=0.5" in header["effective_config"], header
print("ok: config file + override round-trip; provenance in model, checkpoint and metrics header")
PY

"${two[@]}" "$pdsp" predict --data "$work/test.h5" --model "$work/model.h5" --out "$work/pred.h5" \
  --threads 1 > /dev/null
/usr/bin/python3 - "$work" <<'PY'
import sys, h5py
work = sys.argv[1]
pred, model = h5py.File(f"{work}/pred.h5", "r"), h5py.File(f"{work}/model.h5", "r")
assert pred.attrs["model_training_data"] == model.attrs["data_fingerprint"]
assert b"predict" in pred.attrs["command_line"] and pred.attrs["ranks"] == 2
print("ok: provenance in the prediction file, with the model's training data")
PY

# The output path breaks while training runs: the finished model is kept and named.
"$pdsp" gen denoise --train "$work/big.h5" --height 48 --width 48 --train-copies 24 > /dev/null
# Long enough that the output breaks while the run goes on (it breaks after the first iteration).
training=(train --data "$work/big.h5" --max-iters 60 --tol 0 --threads 1)
broken_during() {  # $1: a line the run prints once under way, $2: what breaks its output, then
  # the command; the error line is in $work/err
  local started=$1 action=$2
  shift 2
  # Emptied here, not by the background redirection: the wait below could otherwise read the
  # last run's log before the new run truncates it, and break the output before the run starts.
  : > "$work/log"
  "$@" > "$work/log" 2> "$work/err" &
  local pid=$!
  for _ in $(seq 200); do grep -q "$started" "$work/log" && break; sleep 0.05; done
  eval "$action"
  local code=0
  wait "$pid" || code=$?
  [ "$code" -eq 2 ] || fail "exit $code when the output broke, wanted 2"
  [ "$(grep -c '^pdsp: error' "$work/err")" -eq 1 ] || fail "not one error line: $(cat "$work/err")"
}
# A directory appears where the model goes: the finished file stays under its temporary name.
broken_during "^ *1 " 'mkdir "$work/late.h5"' "$pdsp" "${training[@]}" --out "$work/late.h5"
line=$(cat "$work/err")
kept=$(sed -n 's/.*it is kept as \(.*\)$/\1/p' <<< "$line")
[ -n "$kept" ] && h5ls "$kept/theta" > /dev/null || fail "no kept model: $line"
echo "ok: $line"
# The output directory disappears: the model is rescued into the working directory.
mkdir "$work/gone"
(cd "$work" && broken_during "^ *1 " 'rm -rf "$work/gone"' "$pdsp" "${training[@]}" \
  --out "$work/gone/m.h5")
line=$(cat "$work/err")
rescued=$(sed -n 's/.*saved as \(.*\) instead$/\1/p' <<< "$line")
[ -n "$rescued" ] && h5ls "$rescued/theta" > /dev/null || fail "no rescued model: $line"
echo "ok: $line"
# The same for predictions written by 2 ranks: rescued whole, both ranks' slices in it.
mkdir "$work/gone"
(cd "$work" && broken_during "sweep" 'rm -rf "$work/gone"' "${two[@]}" "$pdsp" predict \
  --data "$work/big.h5" --model "$kept" --out "$work/gone/p.h5" --threads 1 --tol 0 \
  --max-sweeps 8000)
line=$(cat "$work/err")
rescued=$(sed -n 's/.*saved as \(.*\) instead$/\1/p' <<< "$line")
[ -n "$rescued" ] || fail "no rescued predictions: $line"
/usr/bin/python3 - "$rescued" <<'PY' || fail "the rescued predictions are incomplete: $line"
import sys, h5py
labels = h5py.File(sys.argv[1], "r")["/prediction/label"][:]
assert len(labels) == 48 * 48 * 24 and labels.min() >= 0, (len(labels), labels.min())
PY
echo "ok: $line"
# The checkpoint directory disappears during training: a warning, and the model is still written.
mkdir "$work/ckgone"
: > "$work/log"  # as in broken_during
"$pdsp" "${training[@]}" --checkpoint-dir "$work/ckgone" --checkpoint-every 1 \
  --out "$work/after.h5" > "$work/log" 2> "$work/err" &
pid=$!
for _ in $(seq 200); do grep -q "^ *3 " "$work/log" && break; sleep 0.05; done
until rm -rf "$work/ckgone" 2> /dev/null; do :; done  # a checkpoint may land during the removal
wait "$pid" || fail "exit $? when the checkpoint directory went away: $(cat "$work/err")"
grep -q "^pdsp: warning: checkpoint of iteration [0-9]* not written: " "$work/err" ||
  fail "no warning for the lost checkpoint directory: $(cat "$work/err")"
h5ls "$work/after.h5/theta" > /dev/null || fail "no model after the checkpoints failed"
echo "ok: $(head -1 "$work/err")"
