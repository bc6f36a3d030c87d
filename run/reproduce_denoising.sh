#!/usr/bin/env bash
# One experiment of Hazan & Urtasun section 5 (see run/reproduction.py denoising); results go to
# docs/reproduction-results/denoising.json (committed), and run/reproduce_all.sh turns them into
# docs/reproduction.md.
set -euo pipefail
cd "$(dirname "$0")/.."
[ -x build/release/pdsp ] || bash run/build.sh
/usr/bin/python3 run/reproduction.py denoising
