#!/usr/bin/env bash
# The h5py example of docs/file-format.md (the block of "Data set, format 2" that starts with
# `import h5py, numpy as np`) writes a file that pdsp info accepts as format 2 with both typed
# parts, and that pdsp trains on. Arguments: the pdsp binary and the path of docs/file-format.md.
set -euo pipefail
pdsp=$(realpath "$1")
doc=$(realpath "$2")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
sed -n '/^import h5py, numpy as np$/,/^```$/p' "$doc" | sed '$d' > "$work/example.py"
[ -s "$work/example.py" ] || fail "no h5py example found in $doc"
(cd "$work" && /usr/bin/python3 example.py)
"$pdsp" info "$work/ocr.h5" > "$work/info"
grep -q "format_version 2" "$work/info" || fail "not read as format 2: $(cat "$work/info")"
grep -q "variable features .*typed: 1 type(s) of dim 129" "$work/info" || fail "$(cat "$work/info")"
grep -q "factor features .*typed: 1 type(s) of dim 0" "$work/info" || fail "$(cat "$work/info")"
"$pdsp" train --data "$work/ocr.h5" --out "$work/m.h5" --max-iters 3 --quiet > /dev/null
echo "ok: the format 2 example of $(basename "$doc") is a valid data set pdsp trains on"
