#!/usr/bin/env bash
# Checkpoint cost: (1) writing and reading 1 GiB of messages on 1 and 2 ranks (best of 3, the
# read includes checksum verification); (2) the training overhead of checkpointing on the 64x64
# denoising problem, at every iteration (the worst case) and at the default interval.
# The limit of both: what the file system gives to dd in the same directory, writing the same
# number of bytes with one fsync at the end and reading them back just after (from the page
# cache, as the checkpoint read does).
# Usage: run/bench_checkpoint.sh [GIGABYTES] [DIRECTORY]
set -euo pipefail
cd "$(dirname "$0")/.."
gigabytes=${1:-1}
directory=${2:-$(mktemp -d)}
[ -x build/release/tests/pdsp_bench_checkpoint ] || bash run/build.sh
source run/mpi_env.sh

now_ns() { date +%s%N; }
# dd's rates for the same bytes in the same directory, best of 3 like the checkpoint timings:
# sets write_limit and read_limit (MiB/s).
disk_limits() {
  local mebibytes probe start write_s read_s
  mebibytes=$(awk -v g="$gigabytes" 'BEGIN {printf "%d", g * 1024}')
  probe="$directory/dd-probe"
  write_limit=0 read_limit=0
  for _ in 1 2 3; do
    start=$(now_ns)
    dd if=/dev/zero of="$probe" bs=1M count="$mebibytes" conv=fsync status=none
    write_s=$(awk -v a="$start" -v b="$(now_ns)" 'BEGIN {print (b - a) / 1e9}')
    start=$(now_ns)
    dd if="$probe" of=/dev/null bs=1M status=none
    read_s=$(awk -v a="$start" -v b="$(now_ns)" 'BEGIN {print (b - a) / 1e9}')
    rm -f "$probe"
    write_limit=$(awk -v m="$mebibytes" -v s="$write_s" -v l="$write_limit" 'BEGIN {printf "%.0f", (m / s > l) ? m / s : l}')
    read_limit=$(awk -v m="$mebibytes" -v s="$read_s" -v l="$read_limit" 'BEGIN {printf "%.0f", (m / s > l) ? m / s : l}')
  done
}
disk_limits

echo "# checkpoint I/O: $gigabytes GiB of messages into $directory ($(df -h "$directory" | awk 'NR==2 {print $1}')), best of 3; read includes checksum verification"
echo "# limit: dd in the same directory, best of 3, $gigabytes GiB written with fsync ($write_limit MiB/s), read back from the page cache ($read_limit MiB/s)"
printf '%8s %6s %8s %9s %8s %8s %9s %8s\n' "GiB" "ranks" "write s" "MiB/s" "% limit" "read s" "MiB/s" "% limit"
for ranks in 1 2; do
  "${MPIRUN[@]}" -np "$ranks" build/release/tests/pdsp_bench_checkpoint "$directory" "$gigabytes" 3 |
    awk -v w="$write_limit" -v r="$read_limit" '{
      printf "%8.2f %6d %8.2f %9.0f %7.0f%% %8.2f %9.0f %7.0f%%\n", $1, $2, $3, $4, 100 * $4 / w, $5, $6, 100 * $6 / r }'
done

pdsp=build/release/pdsp
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$pdsp" gen denoise --train "$work/train.h5" --height 64 --width 64 --train-copies 40 > /dev/null
run() {  # prints the best wall time (ms) of three runs of 60 iterations on 2 ranks
  local best=0
  for _ in 1 2 3; do
    rm -rf "$work"/ck*
    local start=$(now_ns)
    "${MPIRUN[@]}" -np 2 "$pdsp" train --data "$work/train.h5" --out "$work/m.h5" --max-iters 60 \
      --tol 0 --threads 1 "$@" > /dev/null
    local ms=$(( ($(now_ns) - start) / 1000000 ))
    [ "$best" -eq 0 ] || [ "$ms" -lt "$best" ] && best=$ms
  done
  echo "$best"
}
none=$(run)
every=$(run --checkpoint-dir "$work/ck1" --checkpoint-every 1)
default=$(run --checkpoint-dir "$work/ck2")
size=$(du -k "$work/ck2"/ckpt-*.h5 | tail -1 | cut -f1)
echo "# training overhead, 64x64 x 40 images, 60 iterations, 2 ranks, best of 3 (checkpoint file ${size} KiB)"
echo "# ms/checkpoint = extra wall time / checkpoints written; limit = the file at dd's write rate above"
printf '%-38s %8s %9s %11s %8s %8s\n' "checkpointing" "wall ms" "overhead" "checkpoints" "ms/ckpt" "limit"
row() {  # name, wall ms, checkpoints written
  awk -v name="$1" -v ms="$2" -v n="$3" -v none="$none" -v kib="$size" -v w="$write_limit" 'BEGIN {
    if (n == 0) { printf "%-38s %8d %9s %11s %8s %8s\n", name, ms, "-", "-", "-", "-"; exit }
    printf "%-38s %8d %8.1f%% %11d %8.1f %8.1f\n", name, ms, 100 * (ms - none) / none, n,
      (ms - none) / n, 1000 * kib / 1024 / w }'
}
row "none" "$none" 0
row "every iteration" "$every" 60
row "default (every 300 s, and at the end)" "$default" 1
