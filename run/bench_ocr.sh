#!/usr/bin/env bash
# Taskar OCR: pdsp side by side with CRFsuite (run/bench_ocr.py prints the table).
# usage: bash run/bench_ocr.sh [CRFSUITE_PREFIX [LIBLBFGS_SOURCE CRFSUITE_SOURCE]] [-- PDSP FLAGS]
#   With the two public sources (source trees or bare git mirrors), CRFsuite is built into the
#   prefix first (run/build_crfsuite.sh); with a prefix that already holds it, it is used; with
#   none, pdsp runs alone. Reads ../shared/datasets; writes only under a temporary directory.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
flags=()
positional=()
while [ $# -gt 0 ]; do
  if [ "$1" = "--" ]; then shift; flags=("$@"); break; fi
  positional+=("$1"); shift
done
crfsuite=""
if [ ${#positional[@]} -ge 3 ]; then
  crfsuite=$(bash "$root/run/build_crfsuite.sh" "${positional[@]:0:3}")
elif [ ${#positional[@]} -ge 1 ] && [ -x "${positional[0]}/bin/crfsuite" ]; then
  crfsuite="${positional[0]}/bin/crfsuite"
fi
[ -x "$root/build/release/pdsp" ] || bash "$root/run/build.sh"
source "$root/run/mpi_env.sh"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
/usr/bin/python3 "$root/run/bench_ocr.py" --pdsp "$root/build/release/pdsp" \
  --datasets "$root/../shared/datasets" --crfsuite "$crfsuite" --work "$work" \
  --flags "${flags[*]:-}"
