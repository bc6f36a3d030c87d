#!/usr/bin/env bash
# Size run: trains on one large data set and reports what a user needs to plan a big job: file
# size, bytes per variable (peak resident memory over variables), load and setup time, and time
# per outer iteration next to this machine's limit for it (run/cost_model.py at main-memory
# bandwidth, since the data are far larger than the caches). Default: 3,052 noisy 128x128
# images, 50,003,968 variables, per-site parameters; needs about 21 GiB of memory and 13 GB of
# disk in WORKDIR.
# Usage: run/size_run.sh [IMAGES] [SIZE] [ITERATIONS] [RANKS] [THREADS] [WORKDIR] [PARAMS]
# The data file is kept in WORKDIR (default build/size) and reused when it is already there.
set -euo pipefail
cd "$(dirname "$0")/.."
images=${1:-3052}
size=${2:-128}
iterations=${3:-5}
ranks=${4:-1}
threads=${5:-$(nproc)}
workdir=${6:-build/size}
params=${7:-per-site}
[ -x build/release/pdsp ] || bash run/build.sh
bash run/limit_probe.sh --if-stale > /dev/null
source run/mpi_env.sh
pdsp=build/release/pdsp
mkdir -p "$workdir"
data="$workdir/denoise-${images}x${size}x${size}-${params}.h5"
cores=$(nproc)

echo "# pdsp size run: $images images of ${size}x${size}, --params $params, $iterations iterations, $ranks rank(s) x $threads thread(s)"
echo "# machine: $cores cores, $(awk '/MemTotal/ {printf "%.1f GiB", $2/1048576}' /proc/meminfo), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
[ $((ranks * threads)) -gt "$cores" ] && echo "# oversubscribed: $((ranks * threads)) threads on $cores cores"
if [ ! -f "$data" ]; then
  gen_start=$SECONDS
  # pdsp writes through a temporary name, so an interrupted run leaves no partial data file.
  "$pdsp" gen denoise --train "$data" --test "$workdir/unused-test.h5" --height "$size" \
    --width "$size" --train-copies "$images" --test-copies 1 --params "$params" > /dev/null
  rm -f "$workdir/unused-test.h5"
  echo "# generated $data in $((SECONDS - gen_start)) s"
fi
echo "# command: ${MPIRUN[*]} -np $ranks $pdsp train --data $data --out $workdir/model.h5 --threads $threads --max-iters $iterations --tol 0 --metrics $workdir/size.jsonl"
"${MPIRUN[@]}" -np "$ranks" "$pdsp" train --data "$data" --out "$workdir/model.h5" --threads "$threads" \
  --max-iters "$iterations" --tol 0 --metrics "$workdir/size.jsonl" | grep -E "^pdsp train|peak"
/usr/bin/python3 - "$workdir/size.jsonl" "$data" "$((ranks * threads))" <<'PY'
import json, os, subprocess, sys
metrics, data, cores = sys.argv[1:]
rows = [json.loads(l) for l in open(metrics)]
run = rows[0]
its = [r for r in rows if r["type"] == "iteration"]
end = [r for r in rows if r["type"] == "end"][0]
later = its[1:] or its
mean = lambda k: sum(r[k] for r in later) / len(later)
variables = run["variables"]
peak = end["peak_resident_bytes"]
limit = 1e-3 * float(subprocess.check_output(
    ["/usr/bin/python3", "run/cost_model.py", data, "build/limits.txt", str(mean("step_trials")),
     "--cores", cores, "--bandwidth", "memory"]).split()[0])
print(f'{"variables":>12} {"file GB":>8} {"peak GiB/rank":>13} {"B/var":>6} {"load s":>7} {"setup s":>8} '
      f'{"s/iter":>7} {"limit s":>7} {"% limit":>7} {"sweep s":>8} {"grad s":>7} {"step s":>7} {"trials":>6}')
print(f'{variables:>12} {os.path.getsize(data) / 1e9:8.2f} {peak / 2**30:13.2f} '
      f'{peak * run["ranks"] / variables:6.0f} {run["seconds_load"]:7.1f} {run["seconds_setup"]:8.1f} '
      f'{mean("seconds"):7.2f} {limit:7.2f} {100 * limit / mean("seconds"):6.0f}% '
      f'{mean("seconds_messages"):8.2f} {mean("seconds_gradient"):7.2f} '
      f'{mean("seconds_step"):7.2f} {mean("step_trials"):6.2f}')
print("# B/var = peak resident bytes of the largest rank x ranks / variables; s/iter: mean over iterations 2..;")
print("# limit = run/cost_model.py at build/limits.txt, main-memory bandwidth, the run's cores and trials")
PY
