#!/usr/bin/env bash
# Per-phase profile of one outer iteration on the denoising problem, in memory, for the general
# and the specialised kernels, on 1 thread and on every core (best of REPEATS, milliseconds):
# a sweep, the beliefs, the moments, a trial's potentials and a trial's objective.
# Usage: run/bench_kernels.sh [SIZE] [IMAGES] [REPEATS]
set -euo pipefail
cd "$(dirname "$0")/.."
[ -x build/release/tests/pdsp_kernel_bench ] || bash run/build.sh
for threads in 1 "$(nproc)"; do
  OMP_NUM_THREADS=$threads OMP_WAIT_POLICY=active build/release/tests/pdsp_kernel_bench "${1:-64}" "${2:-40}" "${3:-20}"
done
