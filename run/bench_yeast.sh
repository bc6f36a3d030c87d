#!/usr/bin/env bash
# yeast multi-label: C chosen on a validation split per epsilon, test Hamming loss, time
# (run/bench_yeast.py prints the table). Reads ../shared/datasets; writes only under a
# temporary directory.
# usage: bash run/bench_yeast.sh [EPSILONS, e.g. 1,0] [-- PDSP TRAIN FLAGS]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
epsilons=${1:-1}
[ $# -gt 0 ] && shift
[ "${1:-}" = "--" ] && shift
[ -x "$root/build/release/pdsp" ] || bash "$root/run/build.sh"
source "$root/run/mpi_env.sh"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
/usr/bin/python3 "$root/run/bench_yeast.py" --pdsp "$root/build/release/pdsp" \
  --datasets "$root/../shared/datasets" --work "$work" --epsilons "$epsilons" --flags "$*"
