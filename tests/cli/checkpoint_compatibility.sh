#!/usr/bin/env bash
# A checkpoint written by an earlier build resumes bitwise: the fixtures were written by pdsp
# 38f5085 (before the L-BFGS memory's ring kept its pairs in place and before the first step
# along the gradient was scaled from F) on tests/unit/data/denoise_6x5_format1.h5: a checkpoint
# after iteration 6 of the run below (its memory of 3 pairs had wrapped), and the model of the
# same run continued to iteration 20 without a stop. Resumed here, the run must end with that
# model's theta, bit for bit.
set -euo pipefail
pdsp=$1
here=$(cd "$(dirname "$0")" && pwd)
source "$here/fixture_theta.sh"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
data="$here/../unit/data/denoise_6x5_format1.h5"
flags=(--lbfgs-memory 3 --max-iters 20 --tol 0 --threads 1 --C 0.01 --epsilon 0.5 --quiet)

"$pdsp" train --data "$data" --out "$work/resumed.h5" "${flags[@]}" \
  --resume "$here/data/checkpoint_38f5085_iteration6.h5" > "$work/log"
grep -q "resuming from .* after iteration 6" "$work/log" ||
  { echo "FAIL: the 38f5085 checkpoint was not resumed:"; cat "$work/log"; exit 1; }
reference="$here/data/model_38f5085_iteration20.h5"
expect_fixture_theta "$reference" "$work/resumed.h5" "a 38f5085 checkpoint"

# A file of a later format version is refused in one line that names the version.
cp "$here/data/checkpoint_38f5085_iteration6.h5" "$work/future.h5"
/usr/bin/python3 -c "import h5py, sys; h5py.File(sys.argv[1], 'r+').attrs['format_version'] = 99" \
  "$work/future.h5"
if "$pdsp" train --data "$data" --out "$work/future_model.h5" "${flags[@]}" \
  --resume "$work/future.h5" > "$work/log" 2>&1; then
  echo "FAIL: a checkpoint of format version 99 was resumed"
  exit 1
fi
grep -q "unknown checkpoint version 99" "$work/log" ||
  { echo "FAIL: the refusal does not name the version:"; cat "$work/log"; exit 1; }
[ ! -e "$work/future_model.h5" ] || { echo "FAIL: a model was written"; exit 1; }
echo "ok: a later checkpoint version is refused by its number"
