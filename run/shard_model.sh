#!/usr/bin/env bash
# The cost model of one example split across ranks (run/shard_model.py): measures the exchange
# latency, bandwidth and allreduce time (pdsp_bench_halo on 2 ranks) and a SIZE x SIZE grid
# trained on 1, 2 and 4 ranks of 1 thread (4 oversubscribed on 2 cores, said so);
# prints the model beside those runs and its projection to 64-16384 ranks, strips and blocks.
# usage: bash run/shard_model.sh [SIZE, default 2048] [ITERATIONS, default 10]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
[ -x "$root/build/release/tests/pdsp_bench_halo" ] || bash "$root/run/build.sh"
source "$root/run/mpi_env.sh"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
/usr/bin/python3 "$root/run/shard_model.py" --pdsp "$root/build/release/pdsp" \
  --bench-halo "$root/build/release/tests/pdsp_bench_halo" --work "$work" \
  --size "${1:-2048}" --iterations "${2:-10}"
