#!/usr/bin/env bash
# The main job on the built-in default data: 64x64 binary denoising (base image I1, Gaussian
# noise sigma 0.3), per-site parameters (16,256 weights), 40 training and 10 test images.
# Installs the dependencies, builds, trains under `mpirun -np 2`, predicts, prints the test error.
set -euo pipefail
cd "$(dirname "$0")/.."
bash run/install_deps.sh
bash run/build.sh
source run/mpi_env.sh
pdsp=build/release/pdsp
out=${PDSP_DEMO_DIR:-out/demo}
mkdir -p "$out"
"$pdsp" gen denoise --train "$out/train.h5" --test "$out/test.h5" --height 64 --width 64 \
  --images 1 --train-copies 40 --test-copies 10 --noise gaussian --sigma 0.3 --params per-site
start=$(date +%s%N)
"${MPIRUN[@]}" -np 2 "$pdsp" train --data "$out/train.h5" --out "$out/model.h5" --threads 1 \
  --metrics "$out/metrics.jsonl"
"${MPIRUN[@]}" -np 2 "$pdsp" predict --data "$out/test.h5" --model "$out/model.h5" \
  --out "$out/prediction.h5" --threads 1
elapsed_ms=$(( ($(date +%s%N) - start) / 1000000 ))
printf 'demo: train + predict took %d.%03d s on 2 ranks; files in %s\n' $((elapsed_ms / 1000)) $((elapsed_ms % 1000)) "$out"
