#!/usr/bin/env bash
# Results on public benchmarks: converts each data set of ../shared/datasets, chooses C (and
# epsilon) on a validation split, trains under mpirun, predicts, and writes docs/results.md with
# published numbers beside pdsp's and docs/results_horses.png (run/benchmarks_public.py).
# About 1.5 hours on 2 cores. Converted files go to a temporary folder, removed at the end.
# usage: bash run/benchmarks_public.sh [--datasets DIR] [--out PAGE.md] [--only ocr,yeast,...]
#                                      [--ranks 2 --threads 1 --max-iters 500] [--quick]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
[ -x "$root/build/release/pdsp" ] || bash "$root/run/build.sh"
source "$root/run/mpi_env.sh"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export PDSP=${PDSP:-$root/build/release/pdsp}
/usr/bin/python3 "$root/run/benchmarks_public.py" --datasets "$root/../shared/datasets" \
  --out "$root/docs/results.md" --work "$work" "$@"
