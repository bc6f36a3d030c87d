#!/usr/bin/env bash
# One large example split across ranks (docs/guide.md "Shards"): a SIZE x SIZE denoising grid with
# shared parameters, trained for ITERATIONS outer iterations whole on 1 rank and split on 2 and 4
# ranks (4 oversubscribed on a 2-core machine, said so), then predicted. run/bench_shards.py
# prints the table: load and training seconds, ms per iteration, peak memory per rank against
# the 1-rank run, halo bytes and seconds per sweep, theta against the 1-rank theta.
# usage: bash run/bench_shards.sh [SIZE, default 2048] [ITERATIONS, default 10] [RANKS, default 1,2,4]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
[ -x "$root/build/release/pdsp" ] || bash "$root/run/build.sh"
source "$root/run/mpi_env.sh"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
/usr/bin/python3 "$root/run/bench_shards.py" --pdsp "$root/build/release/pdsp" --work "$work" \
  --size "${1:-2048}" --iterations "${2:-10}" --ranks "${3:-1,2,4}"
