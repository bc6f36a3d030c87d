#!/usr/bin/env bash
# The installation as a user meets it: `cmake --install` into a temporary prefix, then a project
# built against it with find_package(pdsp) (tests/install/consumer), the installed pdsp, its man
# page, and its SLURM job script run the way sbatch runs it.
#   install_test.sh CMAKE BUILD_DIR GENERATOR CXX_COMPILER
set -euo pipefail
cmake=$1 build=$2 generator=$3 cxx=$4
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
prefix=$work/prefix
"$cmake" --install "$build" --prefix "$prefix" > "$work/install.log"

# The consumer knows pdsp only through the installed package.
"$cmake" -S "$here/consumer" -B "$work/consumer" -G "$generator" -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_CXX_COMPILER="$cxx" -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_EXPORT_COMPILE_COMMANDS=ON
"$cmake" --build "$work/consumer"
# pdsp's tuning for its build machine stays in pdsp: none of it reaches the consumer's compiler.
test -s "$work/consumer/compile_commands.json"
if grep -E -e '-march=native|-mprefer-vector-width|-fno-math-errno' \
     "$work/consumer/compile_commands.json"; then
  echo "pdsp::core passed its own code generation flags on to the consumer" >&2
  exit 1
fi
# The log-partition of the chain, log sum over its 8 labellings of exp(ones + agreements / 2).
"$work/consumer/pdsp_consumer" "$work/chain.h5" | tee "$work/consumer.out"
expected="examples 1, variables 3, factors 2, log-partition 4.612663"
grep -Fx "$expected" "$work/consumer.out" > /dev/null

# The installed executable runs, and the man page holds every command's help (its first line,
# escaped as the page escapes it).
"$prefix/bin/pdsp" --help > /dev/null
man_page=$prefix/share/man/man1/pdsp.1
for command in train predict info "gen denoise" "gen domke" "gen chain"; do
  first_line=$("$prefix/bin/pdsp" $command --help | sed -n 1p | sed 's/\\/\\e/g; s/-/\\-/g')
  grep -F -- ".SS \"pdsp $command\"" "$man_page" > /dev/null
  grep -F -- "$first_line" "$man_page" > /dev/null
done

# The installed Python package, imported from the prefix alone (not the checkout), runs the
# installed pdsp: fit and score on the data the installed pdsp generated.
"$prefix/bin/pdsp" gen denoise --train "$work/py-train.h5" --height 6 --width 6 --train-copies 2 \
  --quiet
python_dir=$(echo "$prefix"/lib/python3*/dist-packages)
(cd "$work" && unset PDSP && PYTHONPATH="$python_dir" PYTHONDONTWRITEBYTECODE=1 /usr/bin/python3 -c "
import pdsp, sys
assert pdsp.__file__.startswith('$python_dir'), pdsp.__file__
from pdsp.command import find_executable
assert find_executable() == '$prefix/bin/pdsp', find_executable()
model = pdsp.Estimator(max_iters=20, verbose=0).fit('py-train.h5')
print('installed package: accuracy', model.score('py-train.h5'))
")

# The job script as sbatch runs it: a copy in a spool directory, with stand-ins for srun (runs
# the command after its options) and squeue (30 minutes left), and on PATH a `pdsp` that fails,
# so the script must run the installed one.
mkdir "$work/stand-ins" "$work/spool"
printf '#!/bin/sh\nwhile [ "${1#-}" != "$1" ]; do shift; done\nexec "$@"\n' > "$work/stand-ins/srun"
printf '#!/bin/sh\necho 30:00\n' > "$work/stand-ins/squeue"
printf '#!/bin/sh\necho "not the installed pdsp" >&2\nexit 99\n' > "$work/stand-ins/pdsp"
chmod +x "$work/stand-ins/"*
cp "$prefix/share/pdsp/slurm_train.sbatch" "$work/spool/slurm_script"
"$prefix/bin/pdsp" gen denoise --train "$work/train.h5" --height 8 --width 8 --train-copies 2
(cd "$work/spool" && unset PDSP &&
  PATH="$work/stand-ins:$PATH" SLURM_JOB_ID=1 SLURM_CPUS_PER_TASK=1 \
  bash slurm_script "$work/train.h5" "$work/model.h5" "$work/checkpoints" --max-iters 3)
test -s "$work/model.h5"
test -s "$work/checkpoints/latest"
