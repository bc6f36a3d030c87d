#!/usr/bin/env bash
# Checkpoint cost: (1) writing and reading 1 GiB of messages on 1 and 2 ranks (best of 3, the
# read includes checksum verification); (2) the training overhead of checkpointing on the 64x64
# denoising problem, at every iteration (the worst case) and at the default interval.
# Usage: run/bench_checkpoint.sh [GIGABYTES] [DIRECTORY]
set -euo pipefail
cd "$(dirname "$0")/.."
gigabytes=${1:-1}
directory=${2:-$(mktemp -d)}
[ -x build/release/tests/pdsp_bench_checkpoint ] || bash run/build.sh
source run/mpi_env.sh
echo "# checkpoint I/O: $gigabytes GiB of messages into $directory ($(df -h "$directory" | awk 'NR==2 {print $1}'))"
for ranks in 1 2; do
  "${MPIRUN[@]}" -np "$ranks" build/release/tests/pdsp_bench_checkpoint "$directory" "$gigabytes" 3
done

pdsp=build/release/pdsp
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$pdsp" gen denoise --train "$work/train.h5" --height 64 --width 64 --train-copies 40 > /dev/null
run() {  # prints the best wall time (ms) of three runs of 60 iterations on 2 ranks
  local best=0
  for _ in 1 2 3; do
    rm -rf "$work"/ck*
    local start=$(date +%s%N)
    "${MPIRUN[@]}" -np 2 "$pdsp" train --data "$work/train.h5" --out "$work/m.h5" --max-iters 60 \
      --tol 0 --threads 1 "$@" > /dev/null
    local ms=$(( ($(date +%s%N) - start) / 1000000 ))
    [ "$best" -eq 0 ] || [ "$ms" -lt "$best" ] && best=$ms
  done
  echo "$best"
}
none=$(run)
every=$(run --checkpoint-dir "$work/ck1" --checkpoint-every 1)
default=$(run --checkpoint-dir "$work/ck2")
size=$(du -k "$work/ck2"/ckpt-*.h5 | tail -1 | cut -f1)
echo "# training overhead, 64x64 x 40 images, 60 iterations, 2 ranks, best of 3 (checkpoint file ${size} KiB)"
printf '%-32s %10s %10s\n' "checkpointing" "wall ms" "overhead"
printf '%-32s %10d %10s\n' "none" "$none" "-"
printf '%-32s %10d %9.1f%%\n' "every iteration" "$every" "$(awk -v a="$every" -v b="$none" 'BEGIN {print 100 * (a - b) / b}')"
printf '%-32s %10d %9.1f%%\n' "default (every 300 s, and at the end)" "$default" "$(awk -v a="$default" -v b="$none" 'BEGIN {print 100 * (a - b) / b}')"
