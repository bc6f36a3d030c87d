#!/usr/bin/env bash
# Every experiment of Hazan & Urtasun (NIPS 2010) section 5, then docs/reproduction.md with
# tables and figures (docs/figures/). About 3 hours on 2 cores, nearly all of it the
# likelihood baselines of the denoising study (14-30 minutes per base image and noise model).
# The results replace those in docs/reproduction-results/.
set -euo pipefail
cd "$(dirname "$0")/.."
bash run/install_deps.sh
bash run/build.sh
mkdir -p out/reproduction
date +%s > out/reproduction/started
bash run/reproduce_epsilon.sh
bash run/reproduce_parameters.sh
# Every run again, by this build; if this stops, `reproduction.py denoising` measures the rest.
/usr/bin/python3 run/reproduction.py denoising-fresh
/usr/bin/python3 run/reproduction.py report
echo "reproduction took $(( $(date +%s) - $(cat out/reproduction/started) )) s"
