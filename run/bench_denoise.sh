#!/usr/bin/env bash
# Benchmark: H x W binary denoising with per-site parameters (default: the 64x64, 40 training
# image problem of Hazan & Urtasun / design.md section 10), trained for a fixed number of outer
# iterations on several ranks x threads layouts. Per layout: seconds per outer iteration (mean
# over iterations 2..), the same at this machine's limit (run/cost_model.py with
# run/limit_probe.sh's measurements) and the percentage reached, the per-phase split, peak
# memory per rank, final F, train and test error. Then the training time until the test error
# reaches the authors' 0.52%.
# Usage: run/bench_denoise.sh [SIZE] [TRAIN_IMAGES] [ITERATIONS] [KERNELS: auto|general]
#                             [MESSAGE PRECISION: double|single]
set -euo pipefail
cd "$(dirname "$0")/.."
size=${1:-64}
images=${2:-40}
iterations=${3:-40}
kernels=${4:-auto}
precision=${5:-double}
[ -x build/release/pdsp ] || bash run/build.sh
bash run/limit_probe.sh --if-stale > /dev/null
source run/mpi_env.sh
pdsp=build/release/pdsp
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cores=$(nproc)

"$pdsp" gen denoise --train "$work/train.h5" --test "$work/test.h5" --height "$size" --width "$size" \
  --train-copies "$images" --test-copies 10 --params per-site > /dev/null
params=$(h5dump -a /num_params "$work/train.h5" | awk '/\(0\)/ {print $2}')

echo "# pdsp bench_denoise: ${size}x${size}, $images training images, $params parameters, eps=1, C=1, p=2, $iterations iterations, --kernels $kernels --message-precision $precision"
echo "# machine: $cores cores, $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
echo "# limit: run/cost_model.py at build/limits.txt (1 core for 1x1, all cores otherwise); ms = milliseconds per outer iteration"
printf '%-9s %8s %8s %7s %7s %7s %7s %7s %7s %9s %14s %9s %9s %s\n' "ranks x T" "ms/iter" "limit" "% limit" \
  "sweep" "grad" "reduce" "step" "trials" "peak MiB" "final F" "train err" "test err" "note"
for layout in 1x1 1x2 2x1 2x2; do
  ranks=${layout%x*}
  threads=${layout#*x}
  note=""
  # Threads that sleep at every barrier make 1x2 up to 2x slower; sleeping matters only when
  # there are more threads than cores.
  export OMP_WAIT_POLICY=active
  if [ $((ranks * threads)) -gt "$cores" ]; then
    note="oversubscribed ($((ranks * threads)) threads on $cores cores)"
    OMP_WAIT_POLICY=passive
  fi
  "${MPIRUN[@]}" -np "$ranks" "$pdsp" train --data "$work/train.h5" --out "$work/m.h5" --kernels "$kernels" \
    --message-precision "$precision" --threads "$threads" --max-iters "$iterations" --tol 0 --metrics "$work/m.jsonl" > /dev/null
  train_err=$("${MPIRUN[@]}" -np "$ranks" "$pdsp" predict --data "$work/train.h5" --model "$work/m.h5" \
    --out "$work/p.h5" --threads "$threads" | awk '/per-variable error/ {print $3}')
  test_err=$("${MPIRUN[@]}" -np "$ranks" "$pdsp" predict --data "$work/test.h5" --model "$work/m.h5" \
    --out "$work/p.h5" --threads "$threads" | awk '/per-variable error/ {print $3}')
  /usr/bin/python3 - "$work/m.jsonl" "$work/train.h5" "$((ranks * threads))" "$layout" "$train_err" "$test_err" "$note" "$precision" <<'PY'
import json, subprocess, sys
metrics, data, cores, layout, train_err, test_err, note, precision = sys.argv[1:]
rows = [json.loads(l) for l in open(metrics)]
its = [r for r in rows if r["type"] == "iteration"][1:]
end = [r for r in rows if r["type"] == "end"][0]
mean = lambda k: sum(r[k] for r in its) / len(its)
trials = mean("step_trials")
limit = float(subprocess.check_output(
    ["/usr/bin/python3", "run/cost_model.py", data, "build/limits.txt", str(trials), "--cores", cores,
     "--precision", precision]).split()[0])
ms = 1e3 * mean("seconds")
print(f'{layout:<9} {ms:8.2f} {limit:8.2f} {100 * limit / ms:6.0f}% {1e3 * mean("seconds_messages"):7.2f} '
      f'{1e3 * mean("seconds_gradient"):7.2f} {1e3 * mean("seconds_allreduce"):7.2f} {1e3 * mean("seconds_step"):7.2f} '
      f'{trials:7.2f} {end["peak_resident_bytes"] / 2**20:9.1f} {its[-1]["F_after_step"]:14.6f} {train_err:>9} {test_err:>9} {note}')
PY
done

echo "# training time until the test error is at most 0.52% (the authors' final error), 1x1 and 2x1"
printf '%-9s %11s %14s %9s\n' "ranks x T" "iterations" "training s" "test err"
for ranks in 1 2; do
  for k in 1 2 3 5 8 13 21 34 55 89; do
    "${MPIRUN[@]}" -np "$ranks" "$pdsp" train --data "$work/train.h5" --out "$work/k.h5" --kernels "$kernels" \
      --message-precision "$precision" --threads 1 --max-iters "$k" --tol 0 --metrics "$work/k.jsonl" > /dev/null
    err=$("${MPIRUN[@]}" -np "$ranks" "$pdsp" predict --data "$work/test.h5" --model "$work/k.h5" \
      --out "$work/p.h5" --threads 1 | awk '/per-variable error/ {print $3}')
    if awk -v e="${err%\%}" 'BEGIN {exit !(e <= 0.52)}'; then
      seconds=$(grep '"type":"iteration"' "$work/k.jsonl" | tail -1 | /usr/bin/python3 -c 'import json, sys; print(json.loads(sys.stdin.read())["elapsed"])')
      printf '%-9s %11s %14.3f %9s\n' "${ranks}x1" "$k" "$seconds" "$err"
      break
    fi
  done
done
