#!/usr/bin/env bash
# Training on the parameters the training set reads (data/parameter_compaction.hpp), end to end.
# The fixtures were written by pdsp 543d528, before training dropped unread positions, on
# cli/data/chain_543d528.h5 (`pdsp gen chain --sentences 20 --attributes 1200 --active 3
# --labels 3 --seed 5`: 410 of its 1,200 attributes occur): a checkpoint after iteration 3 and
# the model of the same run after 8 iterations, both in the full layout of 3,609 parameters.
set -euo pipefail
pdsp=$1
mpirun=$2
here=$(cd "$(dirname "$0")" && pwd)
source "$here/fixture_theta.sh"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
data="$here/data/chain_543d528.h5"
reference="$here/data/model_543d528_chain_iteration8.h5"
flags=(--data "$data" --max-iters 8 --tol 0 --threads 1 --lbfgs-memory 3)

fail() { echo "FAIL: $1"; [ -z "${2:-}" ] || cat "$2"; exit 1; }

# A checkpoint in the full layout resumes in it, bitwise.
"$pdsp" train "${flags[@]}" --out "$work/resumed.h5" \
  --resume "$here/data/checkpoint_543d528_chain_iteration3.h5" > "$work/log"
grep -q "resuming from .* after iteration 3" "$work/log" || fail "the 543d528 checkpoint was not resumed" "$work/log"
! grep -q "read by the training set" "$work/log" || fail "a full-layout checkpoint was resumed compact" "$work/log"
expect_fixture_theta "$reference" "$work/resumed.h5" "a 543d528 checkpoint of the full layout"

# A fresh run trains the 410 x 3 + 9 positions read and follows the full layout's trajectory; the
# model file has every parameter, zero for the attributes nothing reads.
"$pdsp" train "${flags[@]}" --out "$work/fresh.h5" --metrics "$work/fresh.jsonl" > "$work/log"
grep -q "3609 parameters (1239 read by the training set, trained alone)" "$work/log" ||
  fail "the fresh run did not say what it trains" "$work/log"
h5diff --relative=1e-9 "$reference" "$work/fresh.h5" /theta > /dev/null ||
  fail "the compact run left the full layout's trajectory"
/usr/bin/python3 - "$data" "$work/fresh.h5" "$work/fresh.jsonl" <<'EOF'
import json, sys
import h5py, numpy as np
data, model, metrics = sys.argv[1:]
with h5py.File(data, "r") as f:
    read = np.unique(f["/obs/index"][:])
    dim = int(f["/var_types/dim"][0])
with h5py.File(model, "r") as f:
    theta = f["/theta"][:]
assert theta.size == 3609, theta.size
unread = np.setdiff1d(np.arange(dim), read)
block = theta[: 3 * dim].reshape(3, dim)
assert unread.size == dim - 410 and not block[:, unread].any(), "unread attributes moved"
assert np.count_nonzero(block[:, read]) > 0.9 * block[:, read].size, "read attributes did not"
header = json.loads(open(metrics).readline())
assert header["params"] == 3609 and header["trained_params"] == 1239, header
EOF
echo "ok: a fresh run trains 1239 of 3609 parameters along the full layout's trajectory"

# Compact checkpoints resume bitwise, on one rank and on two.
for ranks in 1 2; do
  launcher=()
  [ "$ranks" -eq 1 ] || launcher=("$mpirun" -np 2)
  rm -rf "$work/ck"
  "${launcher[@]}" "$pdsp" train "${flags[@]}" --out "$work/whole.h5" --quiet > /dev/null
  "${launcher[@]}" "$pdsp" train "${flags[@]}" --max-iters 4 --out "$work/first.h5" \
    --checkpoint-dir "$work/ck" --checkpoint-every 2 --quiet > /dev/null
  "${launcher[@]}" "$pdsp" train "${flags[@]}" --out "$work/continued.h5" \
    --checkpoint-dir "$work/ck" --checkpoint-every 2 --resume auto > "$work/log"
  grep -q "resuming from .* after iteration 4" "$work/log" || fail "no resume on $ranks rank(s)" "$work/log"
  h5diff "$work/whole.h5" "$work/continued.h5" /theta > /dev/null ||
    fail "on $ranks rank(s) a resumed compact run differs from an uninterrupted one"
  [ "$(h5dump -a /num_params "$work/ck/$(cat "$work/ck/latest")" | grep -o '(0): [0-9]*')" = "(0): 1239" ] ||
    fail "the checkpoint does not hold the 1239 trained parameters"
  h5diff --relative=1e-9 "$reference" "$work/whole.h5" /theta > /dev/null ||
    fail "$ranks rank(s) left the full layout's trajectory"
  echo "ok: $ranks rank(s): a compact checkpoint resumes bitwise"
done
