#!/usr/bin/env bash
# Installs the dependencies, builds, and runs the whole test suite (serial and `mpirun -np 2`).
set -euo pipefail
cd "$(dirname "$0")/.."
bash run/install_deps.sh
bash run/build.sh
source run/mpi_env.sh
ctest --test-dir build/release --output-on-failure -j 2 --timeout 600
