#!/usr/bin/env bash
# The README's format 2 example (the h5py block of "Data set, format 2") writes a file that
# pdsp info accepts as format 2 with both typed parts, and that pdsp trains on.
set -euo pipefail
pdsp=$(realpath "$1")
readme=$(realpath "$2")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
sed -n '/^import h5py, numpy as np$/,/^```$/p' "$readme" | sed '$d' > "$work/example.py"
[ -s "$work/example.py" ] || fail "no h5py example found in the README"
(cd "$work" && /usr/bin/python3 example.py)
"$pdsp" info "$work/ocr.h5" > "$work/info"
grep -q "format_version 2" "$work/info" || fail "not read as format 2: $(cat "$work/info")"
grep -q "variable features .*typed: 1 type(s) of dim 129" "$work/info" || fail "$(cat "$work/info")"
grep -q "factor features .*typed: 1 type(s) of dim 0" "$work/info" || fail "$(cat "$work/info")"
"$pdsp" train --data "$work/ocr.h5" --out "$work/m.h5" --max-iters 3 --quiet > /dev/null
echo "ok: the README's format 2 example is a valid data set pdsp trains on"
