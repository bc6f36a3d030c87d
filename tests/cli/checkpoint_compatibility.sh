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
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
data="$here/../unit/data/denoise_6x5_format1.h5"
flags=(--lbfgs-memory 3 --max-iters 20 --tol 0 --threads 1 --C 0.01 --epsilon 0.5 --quiet)

"$pdsp" train --data "$data" --out "$work/resumed.h5" "${flags[@]}" \
  --resume "$here/data/checkpoint_38f5085_iteration6.h5" > "$work/log"
grep -q "resuming from .* after iteration 6" "$work/log" ||
  { echo "FAIL: the 38f5085 checkpoint was not resumed:"; cat "$work/log"; exit 1; }
reference="$here/data/model_38f5085_iteration20.h5"
if h5diff "$reference" "$work/resumed.h5" /theta > /dev/null; then
  echo "ok: a 38f5085 checkpoint resumes bitwise"
elif h5diff --relative=1e-9 "$reference" "$work/resumed.h5" /theta > /dev/null; then
  # The fixtures come from an AMD EPYC (AVX-512); another processor's vector exp and log may
  # round differently in the last bit. A misread memory moves theta far more than this.
  echo "ok: a 38f5085 checkpoint resumes within 1e-9 (not bitwise: this processor's libm rounds otherwise)"
else
  echo "FAIL: resumed from the 38f5085 checkpoint, theta differs from that build's run"
  exit 1
fi

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
