#!/usr/bin/env bash
# Accuracy and speed of single-precision messages (--message-precision single) against double
# precision on the denoising problem of run/bench_denoise.sh, at several temperatures and with
# Bethe counting numbers (a saddle problem, where every step-search trial re-runs the sweeps).
# Per setting and precision: time per outer iteration, step-search trials, the final F, the
# largest relative difference of F from the double-precision run over all iterations, the
# iterations whose number of trials differs, this machine's limit for the iteration
# (run/cost_model.py) and the percentage reached, the final primal-dual gap and marginalisation
# violation, and the test error.
# Usage: run/precision_study.sh [SIZE] [TRAIN_IMAGES] [ITERATIONS]
set -euo pipefail
cd "$(dirname "$0")/.."
size=${1:-64}
images=${2:-40}
iterations=${3:-100}
[ -x build/release/pdsp ] || bash run/build.sh
bash run/limit_probe.sh --if-stale > /dev/null
source run/mpi_env.sh
export OMP_WAIT_POLICY=active  # one thread on one of the cores
pdsp=build/release/pdsp
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

"$pdsp" gen denoise --train "$work/train.h5" --test "$work/test.h5" --height "$size" --width "$size" \
  --train-copies "$images" --test-copies 10 --params per-site > /dev/null
echo "# pdsp precision study: ${size}x${size}, $images training images, per-site parameters, $iterations iterations (--tol 0), 1 rank x 1 thread"
echo "# machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
echo "# ms = mean milliseconds per outer iteration (iterations 2..); limit = run/cost_model.py at build/limits.txt (1 core) for the run's trials and precision (--saddle under bethe)"
echo "# max rel dF = largest |F_single - F_double| / |F_double| over all iterations"
printf '%-6s %-9s %-9s %8s %7s %7s %7s %18s %12s %10s %11s %10s %9s\n' "eps" "counting" "precision" \
  "ms/iter" "limit" "% limit" "trials" "final F" "max rel dF" "trials !=" "final gap" "final viol" "test err"
for setting in "1 uniform" "0.1 uniform" "0.01 uniform" "1 bethe"; do
  read -r eps counting <<< "$setting"
  for precision in double single; do
    "$pdsp" train --data "$work/train.h5" --out "$work/$precision.h5" --threads 1 --epsilon "$eps" \
      --counting "$counting" --message-precision "$precision" --max-iters "$iterations" --tol 0 \
      --metrics "$work/$precision.jsonl" > /dev/null
    test_err=$("$pdsp" predict --data "$work/test.h5" --model "$work/$precision.h5" --out "$work/p.h5" \
      --threads 1 | awk '/per-variable error/ {print $3}')
    /usr/bin/python3 - "$work" "$precision" "$eps" "$counting" "$test_err" <<'PY'
import json, subprocess, sys
work, precision, eps, counting, test_err = sys.argv[1:]
def iterations(name):
    return [r for r in map(json.loads, open(f"{work}/{name}.jsonl")) if r["type"] == "iteration"]
its, ref = iterations(precision), iterations("double")
mean = lambda k: sum(r[k] for r in its[1:]) / len(its[1:])
rel = max(abs(a["F"] - b["F"]) / abs(b["F"]) for a, b in zip(its, ref))
differ = sum(a["step_trials"] != b["step_trials"] for a, b in zip(its, ref))
last = its[-1]
ms, trials = 1e3 * mean("seconds"), mean("step_trials")
saddle = ["--saddle"] if counting == "bethe" else []  # each trial re-runs the sweep
limit = float(subprocess.check_output(["/usr/bin/python3", "run/cost_model.py", f"{work}/train.h5",
                                       "build/limits.txt", str(trials), "--precision", precision] + saddle).split()[0])
print(f'{eps:<6} {counting:<9} {precision:<9} {ms:8.2f} {limit:7.2f} {100 * limit / ms:6.0f}% {trials:7.2f} '
      f'{last["F_after_step"]:18.6f} {rel:12.2e} {differ:10d} {last["gap"]:11.3e} {last["violation"]:10.2e} {test_err:>9}')
PY
  done
done
