#!/usr/bin/env bash
# Benchmark: H x W binary denoising with per-site parameters (default: the 64x64, 40 training
# image problem of Hazan & Urtasun / docs/design section 10), trained for a fixed number of outer
# iterations on several ranks x threads layouts. Prints one table row per layout: seconds per
# outer iteration (mean over iterations 2..), message updates per second, final F, train and
# test error. Usage: run/bench_denoise.sh [SIZE] [TRAIN_IMAGES] [ITERATIONS]
set -euo pipefail
cd "$(dirname "$0")/.."
size=${1:-64}
images=${2:-40}
iterations=${3:-40}
[ -x build/release/pdsp ] || bash run/build.sh
source run/mpi_env.sh
pdsp=build/release/pdsp
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cores=$(nproc)

"$pdsp" gen denoise --train "$work/train.h5" --test "$work/test.h5" --height "$size" --width "$size" \
  --train-copies "$images" --test-copies 10 --params per-site > /dev/null
params=$(h5dump -a /num_params "$work/train.h5" | awk '/\(0\)/ {print $2}')

echo "# pdsp bench_denoise: ${size}x${size}, $images training images, $params parameters, eps=1, C=1, p=2, $iterations iterations"
echo "# machine: $(nproc) cores, $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
printf '%-14s %-10s %12s %14s %14s %10s %10s %s\n' "data" "ranks x T" "s/iteration" "updates/s" "final F" "train err" "test err" "note"
for layout in 1x1 1x2 2x1 2x2; do
  ranks=${layout%x*}
  threads=${layout#*x}
  note=""
  [ $((ranks * threads)) -gt "$cores" ] && note="oversubscribed ($((ranks * threads)) threads on $cores cores)"
  "${MPIRUN[@]}" -np "$ranks" "$pdsp" train --data "$work/train.h5" --out "$work/m.h5" \
    --threads "$threads" --max-iters "$iterations" --tol 0 --metrics "$work/m.jsonl" > /dev/null
  train_err=$("${MPIRUN[@]}" -np "$ranks" "$pdsp" predict --data "$work/train.h5" --model "$work/m.h5" \
    --out "$work/p.h5" --threads "$threads" | awk '/per-variable error/ {print $3}')
  test_err=$("${MPIRUN[@]}" -np "$ranks" "$pdsp" predict --data "$work/test.h5" --model "$work/m.h5" \
    --out "$work/p.h5" --threads "$threads" | awk '/per-variable error/ {print $3}')
  read -r per_iteration rate final < <(/usr/bin/python3 - "$work/m.jsonl" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
its = [r for r in rows if r["type"] == "iteration"][1:]
print(f'{sum(r["seconds"] for r in its) / len(its):.4f}',
      f'{sum(r["message_updates_per_second"] for r in its) / len(its):.3e}',
      f'{its[-1]["F_after_step"]:.6f}')
PY
)
  printf '%-14s %-10s %12s %14s %14s %10s %10s %s\n' "${size}x${size}x$images" "$layout" "$per_iteration" \
    "$rate" "$final" "$train_err" "$test_err" "$note"
done
