#!/usr/bin/env bash
# Scaling study of `pdsp train` on this machine, four parts:
#   strong  fixed data (default the 64x64 x 40 per-site problem of bench_denoise.sh), layouts
#           ranks x threads 1x1 1x2 2x1 2x2;
#   weak    PER_RANK training images per rank, 1 2 4 8 ranks x 1 thread;
#   uneven  many small and a few large images (gen denoise --sizes, --params shared) on 1x1, 2x1
#           and 1x2: the load imbalance between ranks (a large image may be split into shards);
#   split   one example split across ranks (docs/guide.md "Shards"), shared parameters, 1 thread per
#           rank: strong, one SPLIT_SIZE^2 grid on 1 2 4 ranks; weak, SPLIT_PER_RANK^2 pixels per
#           rank (SxS on 1 rank, Sx2S on 2, 2Sx2S on 4).
# Every run trains a fixed number of outer iterations (--tol 0) with --metrics; the first WARMUP
# iterations are discarded and every time is the median over the rest. Prints the machine facts,
# every command it runs and one table per part (run/scaling.py); writes strong.png, weak.png and
# uneven.png to the plot directory. The machine may be shared: each run also records how many
# cores other processes kept busy meanwhile (busy time in /proc/stat minus the run's own CPU
# time); rows above 0.2 cores are flagged MACHINE BUSY and should be measured again.
# Usage: run/scaling.sh [--quick] [--only PARTS] [--work DIR] [--plots DIR] [--size N]
#                       [--images N] [--per-rank N] [--split-size N] [--split-per-rank N]
#                       [--iters N] [--warmup N] [--pdsp PATH]
#   --quick        tiny data, 8 iterations: well under a minute (the CTest smoke test)
#   --only PARTS   comma-separated subset of strong,weak,uneven,split (default all four)
#   --work DIR     data, metrics files and logs (default build/scaling)
#   --plots DIR    the PNG files (default: the work directory; e.g. docs/figures)
#   --size N       strong and weak scaling: N x N images with per-site parameters (default 64)
#   --images N     strong scaling: training images (default 40); --size 128 --images 80 is 8x
#                  the work of the default
#   --per-rank N   weak scaling: training images per rank (default 20)
#   --split-size N        split, strong: one N x N grid (default 2048)
#   --split-per-rank N    split, weak: N x N pixels per rank (default 1024)
#   --iters N      outer iterations per run (default 30)
#   --warmup N     iterations discarded from each run (default 5)
#   --pdsp PATH    the binary (default build/release/pdsp, built by run/build.sh when missing)
# The same settings as environment variables: SCALING_QUICK=1, SCALING_ONLY, SCALING_WORK,
# SCALING_PLOTS, SCALING_SIZE, SCALING_IMAGES, SCALING_PER_RANK, SCALING_SPLIT_SIZE,
# SCALING_SPLIT_PER_RANK, SCALING_ITERS, SCALING_WARMUP, PDSP.
# OMP_WAIT_POLICY is set per run: active when ranks x threads <= cores (threads that sleep at
# every barrier make 1x2 up to 2x slower), passive beyond; SCALING_WAIT_POLICY=active|passive
# forces one.
set -euo pipefail
cd "$(dirname "$0")/.."

quick=${SCALING_QUICK:-0}
only=${SCALING_ONLY:-strong,weak,uneven,split}
work=${SCALING_WORK:-build/scaling}
plots=${SCALING_PLOTS:-}
size=${SCALING_SIZE:-}
images=${SCALING_IMAGES:-}
per_rank=${SCALING_PER_RANK:-}
split_size=${SCALING_SPLIT_SIZE:-}
split_per_rank=${SCALING_SPLIT_PER_RANK:-}
iters=${SCALING_ITERS:-}
warmup=${SCALING_WARMUP:-}
pdsp=${PDSP:-}
wait_policy=${SCALING_WAIT_POLICY:-auto}
usage() { sed -n '/^# Usage:/,/^# forces one/p' "$0" | sed 's/^# \{0,1\}//' >&2; exit "${1:-2}"; }
while [ $# -gt 0 ]; do
  case $1 in
    --quick) quick=1; shift; continue ;;
    -h | --help) usage 0 ;;
    --only | --work | --plots | --size | --images | --per-rank | --split-size | --split-per-rank | \
      --iters | --warmup | --pdsp)
      [ $# -ge 2 ] || { echo "scaling.sh: $1 needs a value" >&2; exit 2; } ;;
    *) echo "scaling.sh: unknown argument $1" >&2; usage ;;
  esac
  case $1 in
    --only) only=$2 ;;
    --work) work=$2 ;;
    --plots) plots=$2 ;;
    --size) size=$2 ;;
    --images) images=$2 ;;
    --per-rank) per_rank=$2 ;;
    --split-size) split_size=$2 ;;
    --split-per-rank) split_per_rank=$2 ;;
    --iters) iters=$2 ;;
    --warmup) warmup=$2 ;;
    --pdsp) pdsp=$2 ;;
  esac
  shift 2
done
if [ "$quick" = 1 ]; then
  size=${size:-16} images=${images:-8} per_rank=${per_rank:-4}
  split_size=${split_size:-48} split_per_rank=${split_per_rank:-32}
  iters=${iters:-8} warmup=${warmup:-2}
  uneven_small=8x8 uneven_big=64x64 uneven_every=8 uneven_copies=16  # 14 small, 2 large
else
  size=${size:-64} images=${images:-40} per_rank=${per_rank:-20}
  split_size=${split_size:-2048} split_per_rank=${split_per_rank:-1024}
  iters=${iters:-30} warmup=${warmup:-5}
  uneven_small=16x16 uneven_big=256x256 uneven_every=16 uneven_copies=48  # 45 small, 3 large
fi
plots=${plots:-$work}
for value in "$size" "$images" "$per_rank" "$split_size" "$split_per_rank" "$iters" "$warmup"; do
  [[ $value =~ ^[0-9]+$ ]] || { echo "scaling.sh: '$value' is not a whole number" >&2; exit 2; }
done
[ "$iters" -gt "$warmup" ] || { echo "scaling.sh: --iters must exceed --warmup" >&2; exit 2; }
for part in ${only//,/ }; do
  case $part in
    strong | weak | uneven | split) ;;
    *) echo "scaling.sh: --only: '$part' is not one of strong, weak, uneven, split" >&2; exit 2 ;;
  esac
done
wants() { [[ ",$only," == *",$1,"* ]]; }
case $wait_policy in
  auto | active | passive) ;;
  *) echo "scaling.sh: SCALING_WAIT_POLICY must be auto, active or passive" >&2; exit 2 ;;
esac
if [ -z "$pdsp" ]; then
  pdsp=build/release/pdsp
  [ -x "$pdsp" ] || bash run/build.sh
fi
[ -x "$pdsp" ] || { echo "scaling.sh: $pdsp is not an executable" >&2; exit 2; }
source run/mpi_env.sh
cores=$(nproc)
mkdir -p "$work/data" "$work/metrics" "$work/logs"
manifest=$work/manifest.tsv
: > "$manifest"

# show CMD...: prints the command as it can be pasted into a shell.
show() {
  printf '$'
  printf ' %q' "$@"
  printf '\n'
}

# run LOG CMD...: shows and runs a command, its output into LOG; on failure prints LOG and stops.
run() {
  local log=$1
  shift
  show "$@"
  if ! "$@" > "$log" 2>&1; then
    echo "scaling.sh: command failed (log $log):" >&2
    tail -20 "$log" >&2
    exit 1
  fi
}

# Busy CPU seconds of the whole machine (/proc/stat) and CPU seconds of this shell's finished
# children (bash `times`): their difference over a run is the CPU other processes took.
hz=$(getconf CLK_TCK)
machine_busy() {
  awk -v hz="$hz" '/^cpu / {printf "%.2f\n", ($2 + $3 + $4 + $7 + $8 + $9) / hz}' /proc/stat
}
# Must run in this shell, not in $(...): a subshell's `times` counts only its own children.
children_cpu() {
  times > "$work/times"
  own_cpu=$(awk 'NR == 2 {for (i = 1; i <= 2; ++i) {split($i, t, "m"); s += 60 * t[1] + t[2]}
                        printf "%.3f\n", s}' "$work/times")
}

# train STUDY RANKS THREADS EXAMPLES DATA: one timed run, recorded in the manifest with the
# average number of cores other processes kept busy meanwhile.
train() {
  local study=$1 ranks=$2 threads=$3 examples=$4 data=$5
  local name=$study-${ranks}x$threads busy0 own0 start other
  rm -f "$work/metrics/$name.jsonl"
  local policy=$wait_policy
  if [ "$policy" = auto ]; then
    policy=active
    [ $((ranks * threads)) -gt "$cores" ] && policy=passive
  fi
  children_cpu
  own0=$own_cpu busy0=$(machine_busy) start=$(date +%s.%N)
  run "$work/logs/$name.log" env OMP_NUM_THREADS="$threads" OMP_WAIT_POLICY="$policy" \
    "${MPIRUN[@]}" -np "$ranks" -x OMP_NUM_THREADS -x OMP_WAIT_POLICY "$pdsp" train \
    --data "$data" --out "$work/model.h5" --threads "$threads" --max-iters "$iters" --tol 0 \
    --metrics "$work/metrics/$name.jsonl"
  children_cpu
  other=$(awk -v b0="$busy0" -v b1="$(machine_busy)" -v c0="$own0" -v c1="$own_cpu" \
    -v t0="$start" -v t1="$(date +%s.%N)" \
    'BEGIN {o = ((b1 - b0) - (c1 - c0)) / (t1 - t0); printf "%.2f\n", o < 0 ? 0 : o}')
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$study" "${ranks}x$threads" "$ranks" "$threads" \
    "$examples" "$work/metrics/$name.jsonl" "$other" >> "$manifest"
}

table() { /usr/bin/python3 run/scaling.py table "$1" "$manifest" "$warmup" "$cores"; }

commit=$(git rev-parse --short HEAD 2> /dev/null || echo unknown)
git diff --quiet HEAD 2> /dev/null || commit="$commit + uncommitted changes"
title="# pdsp scaling study"
[ "$quick" = 1 ] && title="$title (quick mode: tiny data, not for the record)"
echo "$title"
echo "# date: $(date -u '+%Y-%m-%d %H:%M UTC'), pdsp $commit ($pdsp)"
cpu_model=$(lscpu | awk -F: '/^Model name/ {sub(/^ +/, "", $2); print $2; exit}')
smt=$(lscpu | awk -F: '/^Thread\(s\) per core/ {gsub(/ /, "", $2); print $2; exit}')
memory=$(awk '/MemTotal/ {printf "%.1f GiB", $2 / 1048576}' /proc/meminfo)
policy_text=$wait_policy
[ "$wait_policy" = auto ] && policy_text="active up to $cores threads in all, passive beyond"
echo "# machine: $cores cores (nproc), $cpu_model, $smt thread(s) per core, $memory"
echo "# software: $(mpirun --version 2>&1 | head -1), launcher: ${MPIRUN[*]} -np R," \
  "OMP_WAIT_POLICY: $policy_text"
echo "# every run: $iters outer iterations (--tol 0), the first $warmup discarded as warm-up;" \
  "eps=1, C=1, p=2, 1 sweep"

if wants strong; then
  echo
  echo "## strong scaling: ${size}x$size, $images training images, per-site parameters"
  run "$work/logs/gen-strong.log" "$pdsp" gen denoise --train "$work/data/strong.h5" \
    --height "$size" --width "$size" --train-copies "$images" --params per-site
  for layout in 1x1 1x2 2x1 2x2; do
    train strong "${layout%x*}" "${layout#*x}" "$images" "$work/data/strong.h5"
  done
  table strong
fi

if wants weak; then
  echo
  echo "## weak scaling: ${size}x$size, $per_rank training images per rank, per-site parameters," \
    "1 thread per rank"
  for ranks in 1 2 4 8; do
    examples=$((per_rank * ranks))
    run "$work/logs/gen-weak-$ranks.log" "$pdsp" gen denoise --train "$work/data/weak-$ranks.h5" \
      --height "$size" --width "$size" --train-copies "$examples" --params per-site
    train weak "$ranks" 1 "$examples" "$work/data/weak-$ranks.h5"
  done
  table weak
fi

if wants uneven; then
  echo
  sizes=$(printf "$uneven_small,%.0s" $(seq 2 "$uneven_every"))$uneven_big
  big=$((uneven_copies / uneven_every))
  echo "## uneven example sizes: $((uneven_copies - big)) x $uneven_small and $big x $uneven_big" \
    "(every ${uneven_every}th), shared parameters"
  run "$work/logs/gen-uneven.log" "$pdsp" gen denoise --train "$work/data/uneven.h5" \
    --sizes "$sizes" --train-copies "$uneven_copies" --params shared
  for layout in 1x1 2x1 1x2; do
    train uneven "${layout%x*}" "${layout#*x}" "$uneven_copies" "$work/data/uneven.h5"
  done
  table uneven
fi

if wants split; then
  echo
  echo "## one example split across ranks (shared parameters, 1 thread per rank)"
  echo "### strong: one ${split_size}x$split_size grid"
  run "$work/logs/gen-split-strong.log" "$pdsp" gen denoise --train "$work/data/split-strong.h5" \
    --height "$split_size" --width "$split_size" --train-copies 1 --params shared
  for ranks in 1 2 4; do
    train split-strong "$ranks" 1 1 "$work/data/split-strong.h5"
  done
  table split-strong
  echo "### weak: ${split_per_rank}x$split_per_rank pixels per rank"
  for ranks in 1 2 4; do
    height=$split_per_rank width=$split_per_rank
    [ "$ranks" -ge 2 ] && width=$((2 * split_per_rank))
    [ "$ranks" -ge 4 ] && height=$((2 * split_per_rank))
    run "$work/logs/gen-split-weak-$ranks.log" "$pdsp" gen denoise \
      --train "$work/data/split-weak-$ranks.h5" --height "$height" --width "$width" \
      --train-copies 1 --params shared
    train split-weak "$ranks" 1 1 "$work/data/split-weak-$ranks.h5"
  done
  table split-weak
fi

echo
/usr/bin/python3 run/scaling.py plots "$manifest" "$warmup" "$cores" "$plots"
for part in ${only//,/ }; do
  [ -s "$plots/$part.png" ] || { echo "scaling.sh: $plots/$part.png was not written" >&2; exit 1; }
done
