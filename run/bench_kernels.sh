#!/usr/bin/env bash
# Per-phase profile of one outer iteration on the denoising problem, in memory, for the general
# and the specialised kernels, on 1 thread and on every core (best of REPEATS, milliseconds):
# a sweep, the beliefs, the moments, a trial's potentials and a trial's objective. Under each
# table: the same phases at this machine's limit (run/cost_model.py with run/limit_probe.sh's
# measurements) and the percentage of it the binary pairwise kernels reach.
# Usage: run/bench_kernels.sh [SIZE] [IMAGES] [REPEATS]
set -euo pipefail
cd "$(dirname "$0")/.."
size=${1:-64}
images=${2:-40}
[ -x build/release/tests/pdsp_kernel_bench ] || bash run/build.sh
[ -f build/limits.txt ] || bash run/limit_probe.sh > /dev/null
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# The same problem as a file, for the cost model (the kernel bench builds it in memory).
build/release/pdsp gen denoise --train "$work/data.h5" --height "$size" --width "$size" \
  --train-copies "$images" --params per-site > /dev/null
for threads in 1 "$(nproc)"; do
  OMP_NUM_THREADS=$threads OMP_WAIT_POLICY=active build/release/tests/pdsp_kernel_bench "$size" "$images" "${3:-20}" |
    tee "$work/table"
  # cost_model.py prints: total sweep beliefs moments trial potentials objective
  read -r _ sweep beliefs moments _ potentials objective < <(/usr/bin/python3 run/cost_model.py \
    "$work/data.h5" build/limits.txt 1 --cores "$threads")
  printf '%-16s %10.3f %10.3f %10.3f %10.3f %10.3f\n' "limit" "$sweep" "$beliefs" "$moments" \
    "$potentials" "$objective"
  awk -v l="$sweep $beliefs $moments $potentials $objective" '$1 == "binary-pairwise" {
    split(l, limit, " "); printf "%-16s", "% of limit"
    for (i = 1; i <= 5; ++i) printf " %9.0f%%", 100 * limit[i] / $(i + 1); printf "\n" }' "$work/table"
done
