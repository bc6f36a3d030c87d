#!/usr/bin/env bash
# run/benchmarks_public.py end to end on two small public data sets (--quick: one C, 20
# iterations): the page it writes has a table row per data set with a test number, the
# published column, and no converted file is left behind. Skipped (77) without ../shared.
#   results_page_test.sh PDSP DATASETS
set -euo pipefail
pdsp=$1 datasets=$2
here=$(cd "$(dirname "$0")" && pwd)
[ -d "$datasets/pystruct_snakes" ] && [ -d "$datasets/multilabel_scene" ] || exit 77
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir "$work/converted"
PDSP=$pdsp /usr/bin/python3 "$here/../../run/benchmarks_public.py" --datasets "$datasets" \
  --work "$work/converted" --out "$work/results.md" --quick --only snakes,scene > "$work/log"
grep -E '^\| scene \| [0-9.]+% error \| 1, 1 \| [0-9.]+ \| 20 \| [0-9]+ \| not verified' \
  "$work/results.md"
grep -E '^\| snakes \| [0-9.]+% accuracy \| 1, 1 \| .*\| 84.7% / 99.9% \(pystruct\)' \
  "$work/results.md"
grep -F "## snakes" "$work/results.md" > /dev/null
# A missing data folder is one line and a non-zero exit, before anything runs.
if PDSP=$pdsp /usr/bin/python3 "$here/../../run/benchmarks_public.py" --datasets "$work/none" \
     --work "$work/converted" --out "$work/again.md" --only scene 2> "$work/error"; then
  echo "a missing data folder was accepted" >&2
  exit 1
fi
grep -Fx "$work/none/multilabel_scene/scene-train.arff: not found" "$work/error"
test ! -e "$work/again.md"
