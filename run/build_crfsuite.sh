#!/usr/bin/env bash
# Builds the peer CRFsuite (with liblbfgs) from its public sources into a scratch prefix outside
# the repository, for run/bench_ocr.sh. Nothing of it is committed or copied into pdsp.
# usage: bash run/build_crfsuite.sh PREFIX LIBLBFGS_SOURCE CRFSUITE_SOURCE
#   each SOURCE is a source tree or a bare git repository (a mirror: its HEAD is exported)
# Needs Debian's autoconf, automake and libtool. Prints the path of the crfsuite binary.
set -euo pipefail
prefix=$(realpath -m "$1")
scratch="$prefix/src"
mkdir -p "$scratch"

source "$(dirname "$0")/peer_sources.sh"

if [ ! -x "$prefix/bin/crfsuite" ]; then
  unpack "$2" "$scratch/liblbfgs"
  unpack "$3" "$scratch/crfsuite"
  (cd "$scratch/liblbfgs" && ./autogen.sh && ./configure --prefix="$prefix" --enable-sse2 &&
    make -j2 && make install) > "$scratch/liblbfgs.log" 2>&1 ||
    { echo "liblbfgs failed to build; see $scratch/liblbfgs.log" >&2; exit 1; }
  (cd "$scratch/crfsuite" && ./autogen.sh && ./configure --prefix="$prefix" \
    --with-liblbfgs="$prefix" && make -j2 && make install) > "$scratch/crfsuite.log" 2>&1 ||
    { echo "crfsuite failed to build; see $scratch/crfsuite.log" >&2; exit 1; }
fi
echo "$prefix/bin/crfsuite"
