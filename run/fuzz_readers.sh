#!/usr/bin/env bash
# The mutation fuzz test of the readers at length (tests/fuzz/fuzz_readers.py), on the
# AddressSanitizer + UBSan build: thousands of damaged data, model, prediction and checkpoint
# files through info, train, predict and train --resume, some under mpirun -np 2, then a table of
# outcomes and the failures with the flags that reproduce each.
# usage: run/fuzz_readers.sh [COUNT [SEED]]   (default: 3000 mutants, seed 1)
set -euo pipefail
cd "$(dirname "$0")/.."
count=${1:-3000}
seed=${2:-1}
source run/mpi_env.sh
cmake --preset asan > /dev/null
cmake --build --preset asan --target pdsp -j 2
# Open MPI never frees some of its start-up allocations: leak reports would bury real findings.
# A failed allocation must throw std::bad_alloc as in the release build, not stop the process.
export ASAN_OPTIONS=detect_leaks=0:allocator_may_return_null=1 UBSAN_OPTIONS=print_stacktrace=1
# Sanitized runs are several times slower: a longer time limit per run.
/usr/bin/python3 tests/fuzz/fuzz_readers.py --pdsp build/asan/pdsp --mpirun mpirun \
  --count "$count" --seed "$seed" --mpi-every 25 --timeout 180
