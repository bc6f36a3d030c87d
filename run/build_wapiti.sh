#!/usr/bin/env bash
# Builds the peer Wapiti (plain C99, libm and pthread) from its public source into a scratch
# prefix outside the repository, for run/bench_chain_peers.py. Nothing of it is committed.
# usage: bash run/build_wapiti.sh PREFIX WAPITI_SOURCE
#   WAPITI_SOURCE is a source tree or a bare git repository (a mirror: its HEAD is exported)
# Prints the path of the wapiti binary.
set -euo pipefail
source "$(dirname "$0")/peer_sources.sh"
prefix=$(realpath -m "$1")
scratch="$prefix/src"
mkdir -p "$scratch" "$prefix/bin"

if [ ! -x "$prefix/bin/wapiti" ]; then
  unpack "$2" "$scratch/wapiti"
  (cd "$scratch/wapiti" && make wapiti) > "$scratch/wapiti.log" 2>&1 ||
    { echo "wapiti failed to build; see $scratch/wapiti.log" >&2; exit 1; }
  cp "$scratch/wapiti/wapiti" "$prefix/bin/wapiti"
fi
echo "$prefix/bin/wapiti"
