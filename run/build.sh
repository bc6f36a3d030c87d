#!/usr/bin/env bash
# Configures and builds pdsp (optimised, warnings as errors) into build/release.
set -euo pipefail
cd "$(dirname "$0")/.."
cmake --preset release > /dev/null
cmake --build --preset release -j "$(nproc)"
