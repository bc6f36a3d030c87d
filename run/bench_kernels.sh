#!/usr/bin/env bash
# Per-phase profile of one outer iteration, in memory (best of REPEATS, milliseconds): a sweep,
# the beliefs, the moments, a trial's potentials and a trial's objective, on 1 thread and on
# every core. First on the denoising problem, for the general and the specialised kernels; then,
# when ../shared/datasets holds it, on Taskar OCR's training chains (26 states, the shared
# tables). Under each table: the same phases at this machine's limit (run/cost_model.py with
# run/limit_probe.sh's measurements) and the percentage of it the kernels reach.
# Usage: run/bench_kernels.sh [SIZE] [IMAGES] [REPEATS]
set -euo pipefail
cd "$(dirname "$0")/.."
size=${1:-64}
images=${2:-40}
repeats=${3:-20}
[ -x build/release/tests/pdsp_kernel_bench ] || bash run/build.sh
bash run/limit_probe.sh --if-stale > /dev/null
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# limits DATA THREADS ROW: the limit line, and the percentage line of the table's row ROW.
limits() {
  # cost_model.py prints: total sweep beliefs moments trial potentials objective
  read -r _ sweep beliefs moments _ potentials objective < <(/usr/bin/python3 run/cost_model.py \
    "$1" build/limits.txt 1 --cores "$2")
  printf '%-16s %10.3f %10.3f %10.3f %10.3f %10.3f\n' "limit" "$sweep" "$beliefs" "$moments" \
    "$potentials" "$objective"
  awk -v row="$3" -v l="$sweep $beliefs $moments $potentials $objective" '$1 == row {
    split(l, limit, " "); printf "%-16s", "% of limit"
    for (i = 1; i <= 5; ++i) printf " %9.0f%%", 100 * limit[i] / $(i + 1); printf "\n" }' \
    "$work/table"
}

# The same problem as a file, for the cost model (the kernel bench builds it in memory).
build/release/pdsp gen denoise --train "$work/data.h5" --height "$size" --width "$size" \
  --train-copies "$images" --params per-site > /dev/null
for threads in 1 "$(nproc)"; do
  OMP_NUM_THREADS=$threads OMP_WAIT_POLICY=active \
    build/release/tests/pdsp_kernel_bench "$size" "$images" "$repeats" | tee "$work/table"
  limits "$work/data.h5" "$threads" binary-pairwise
done

ocr=../shared/datasets/ocr_taskar/ocr_taskar.mat
[ -f "$ocr" ] || { echo "# $ocr not found: no OCR table"; exit 0; }
/usr/bin/python3 datasets/convert.py ocr --input "$ocr" --train "$work/ocr.h5" \
  --test "$work/ocr-test.h5" > /dev/null
for threads in 1 "$(nproc)"; do
  OMP_NUM_THREADS=$threads OMP_WAIT_POLICY=active \
    build/release/tests/pdsp_kernel_bench --data "$work/ocr.h5" "$repeats" | tee "$work/table"
  limits "$work/ocr.h5" "$threads" general
done
