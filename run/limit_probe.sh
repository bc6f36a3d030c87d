#!/usr/bin/env bash
# Measures this machine's limits for message passing (vectorised exp/log throughput, memory
# bandwidth) on 1 thread and on every core, prints them, and stores them in build/limits.txt
# for the cost model of run/cost_model.py (used by the benchmark tables).
# Usage: run/limit_probe.sh [OUTPUT]
#        run/limit_probe.sh --if-stale: only when build/limits.txt is missing or predates a
#        quantity the cost model reads (the benchmark scripts call it so)
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "${1:-}" = "--if-stale" ]; then
  grep -q '^fma_per_s_all ' build/limits.txt 2> /dev/null && exit 0
  shift
fi
output=${1:-build/limits.txt}
[ -x build/release/tests/pdsp_limit_probe ] || bash run/build.sh
echo "# machine: $(nproc) cores, $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
OMP_NUM_THREADS=$(nproc) OMP_WAIT_POLICY=passive build/release/tests/pdsp_limit_probe "$output"
echo "# stored in $output"
