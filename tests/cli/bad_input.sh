#!/usr/bin/env bash
# Bad input through the command line, on 1 and 2 ranks: one clear line naming file, dataset and
# index, a non-zero exit code, no hang, and the user's files untouched.
set -uo pipefail
pdsp=$1
mpirun=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0

# expect_error CODE PATTERN RANKS -- command...: runs under a time limit, checks the exit code,
# that exactly one error line was printed, and that it matches PATTERN. The cases run
# side by side, PDSP_TEST_JOBS (default 4) at a time: most of each one's time is mpirun's start
# and the process's, not work. Each case writes its verdict to a file of its own; finish_cases
# waits for them and prints the verdicts in the order the cases were given.
cases=0
case_pids=()
expect_error() {
  cases=$((cases + 1))
  check_case "$cases" "$@" &
  case_pids+=($!)
  while [ "$(jobs -rp | wc -l)" -ge "${PDSP_TEST_JOBS:-4}" ]; do wait -n; done
}
check_case() {
  local n=$1 code=$2 pattern=$3 ranks=$4
  shift 5
  local launcher=()
  [ "$ranks" -gt 1 ] && launcher=("$mpirun" --allow-run-as-root --oversubscribe --bind-to none -np "$ranks")
  timeout 120 "${launcher[@]}" "$@" > "$work/out.$n" 2> "$work/err.$n"
  local got=$?
  local lines
  lines=$(grep -c "^pdsp: error" "$work/err.$n")
  if { [ "$code" = any ] && { [ $got -eq 0 ] || [ $got -eq 124 ]; }; } ||
     { [ "$code" != any ] && [ $got -ne "$code" ]; } || [ "$lines" -ne 1 ] ||
     ! grep -q -- "$pattern" "$work/err.$n"; then
    { echo "FAIL ($ranks rank(s)): $* -> exit $got, $lines error line(s), wanted /$pattern/"
      cat "$work/err.$n"; } > "$work/verdict.$n"
  else
    echo "ok ($ranks rank(s)): $(grep '^pdsp: error' "$work/err.$n")" > "$work/verdict.$n"
  fi
}
finished=0
finish_cases() {
  [ ${#case_pids[@]} -eq 0 ] || wait "${case_pids[@]}"
  case_pids=()
  for n in $(seq $((finished + 1)) "$cases"); do
    cat "$work/verdict.$n"
    grep -q "^FAIL" "$work/verdict.$n" && failures=$((failures + 1))
  done
  finished=$cases
}

"$pdsp" gen denoise --train "$work/train.h5" --test "$work/test.h5" --height 8 --width 8 \
  --train-copies 4 --test-copies 2 > /dev/null
"$pdsp" gen denoise --train "$work/shared.h5" --height 8 --width 8 --params shared \
  --train-copies 2 > /dev/null
# Two pixels: each in one factor, so Bethe's c_v = 0, which the binary pairwise kernels refuse.
"$pdsp" gen denoise --train "$work/pair.h5" --height 1 --width 2 --train-copies 2 > /dev/null
"$pdsp" train --data "$work/train.h5" --out "$work/model.h5" --max-iters 2 > /dev/null
# One 8x8 example, which 2 ranks split into shards; the damage lies in the second shard.
"$pdsp" gen denoise --train "$work/one.h5" --height 8 --width 8 --train-copies 1 > /dev/null
echo "not hdf5" > "$work/text.h5"
head -c 3000 "$work/train.h5" > "$work/truncated.h5"
/usr/bin/python3 - "$work" "$(dirname "$0")/../../python" <<'PY'
import shutil, sys, h5py
work = sys.argv[1]
def damaged(name, edit):
    shutil.copy(f"{work}/train.h5", f"{work}/{name}.h5")
    with h5py.File(f"{work}/{name}.h5", "r+") as f:
        edit(f)
def last_label(f):
    f["/vars/label"][-1] = 7
def nan_value(f):
    f["/vars/feat_value"][5] = float("nan")
def bad_param(f):
    f["/factors/feat_param"][3] = 10**6
def version(f):
    f.attrs["format_version"] = 99
def no_labels(f):
    del f["/vars/label"]
def huge_value(f):
    f["/vars/feat_value"][0] = 1e300
def huge_num_params(f):
    f.attrs["num_params"] = 2**31 - 1
damaged("label", last_label)
damaged("nan", nan_value)
damaged("param", bad_param)
damaged("version", version)
damaged("nolabels", no_labels)
damaged("huge", huge_value)
damaged("hugeparams", huge_num_params)
shutil.copy(f"{work}/one.h5", f"{work}/onelabel.h5")
with h5py.File(f"{work}/onelabel.h5", "r+") as f:
    f["/vars/label"][60] = 5
shutil.copy(f"{work}/one.h5", f"{work}/onenan.h5")
with h5py.File(f"{work}/onenan.h5", "r+") as f:
    f["/factors/feat_value"][len(f["/factors/feat_value"]) - 3] = float("nan")
def damaged_model(name, edit):
    shutil.copy(f"{work}/model.h5", f"{work}/{name}.h5")
    with h5py.File(f"{work}/{name}.h5", "r+") as f:
        edit(f)
def huge_factor_weight(f):
    f["/theta"][161] = 1e308  # a weight of the factors of the first image row
def infinite_epsilon(f):
    f.attrs["epsilon"] = float("inf")
damaged_model("hugetheta", huge_factor_weight)
def unknown_counting(f):
    f.attrs["counting"] = "text"
damaged_model("infepsilon", infinite_epsilon)
damaged_model("badcounting", unknown_counting)
damaged_model("badinference", lambda f: f.attrs.__setitem__("inference", "bogus"))
damaged_model("badnumparams", lambda f: f.attrs.__setitem__("num_params", 5))
damaged_model("textepsilon", lambda f: f.attrs.__setitem__("epsilon", "one"))
# Two chains of three ternary variables: data that --learner ssvm-fw (binary pairwise) refuses.
sys.path.insert(0, sys.argv[2])
import numpy as np
import pdsp
chain = pdsp.Example(card=[3, 3, 3], label=[0, 2, 1], factors=[[0, 1], [1, 2]],
                     var_features=pdsp.SparseRows(np.arange(10), np.zeros(9, dtype=np.int32),
                                                  np.ones(9)))
pdsp.write_dataset(f"{work}/ternary.h5", [chain, chain], num_params=1)
with open(f"{work}/bad.toml", "w") as f:
    f.write("epsilonn = 0.5\n")
with open(f"{work}/typo.toml", "w") as f:
    f.write("[train]\nC = '0.5x'\n")
PY
before=$(md5sum "$work/train.h5")

for ranks in 1 2; do
  # Forced splits that cannot be: into 4 on 3 ranks, into more shards than variables (on one
  # rank no example is large, and --shards N splits none).
  if [ "$ranks" = 2 ]; then
    expect_error 2 "\-\-shards 4: the large examples need 4 ranks and the run has 3" 3 -- "$pdsp" train --data "$work/one.h5" --out "$work/m.h5" --shards 4
    expect_error 2 "\-\-shards 65: example 0 has 64 variables: at most one shard per variable" 2 -- "$pdsp" train --data "$work/one.h5" --out "$work/m.h5" --shards 65
  fi
  expect_error 2 "missing.h5: file not found" $ranks -- "$pdsp" train --data "$work/missing.h5" --out "$work/m.h5"
  expect_error 2 "text.h5: not a readable HDF5 file" $ranks -- "$pdsp" train --data "$work/text.h5" --out "$work/m.h5"
  expect_error 2 "truncated.h5" $ranks -- "$pdsp" train --data "$work/truncated.h5" --out "$work/m.h5"
  expect_error 2 "label.h5: /vars/label\[255\]: label 7 is outside \[0, 2)" $ranks -- "$pdsp" train --data "$work/label.h5" --out "$work/m.h5"
  expect_error 2 "nan.h5: /vars/feat_value\[5\]: value is not finite" $ranks -- "$pdsp" train --data "$work/nan.h5" --out "$work/m.h5"
  expect_error 2 "param.h5: /factors/feat_param\[3\]: parameter index 1000000" $ranks -- "$pdsp" train --data "$work/param.h5" --out "$work/m.h5"
  expect_error 2 "version.h5: @format_version: unknown version 99" $ranks -- "$pdsp" info "$work/version.h5"
  expect_error 2 "\-\-shards: 0 is not a shard count" $ranks -- "$pdsp" info "$work/train.h5" --shards 0
  expect_error 2 "train.h5: example 0: 100000 shards for its [0-9]* variables: at most one shard per variable" $ranks -- "$pdsp" info "$work/train.h5" --shards 100000
  expect_error 2 "onelabel.h5: /vars/label\[60\]: label 5 is outside \[0, 2)" $ranks -- "$pdsp" train --data "$work/onelabel.h5" --out "$work/m.h5"
  expect_error 2 "onenan.h5: /factors/feat_value\[[0-9]*\]: value is not finite" $ranks -- "$pdsp" train --data "$work/onenan.h5" --out "$work/m.h5"
  expect_error 2 "\-\-shards: '0' is not a shard count" $ranks -- "$pdsp" train --data "$work/one.h5" --out "$work/m.h5" --shards 0
  expect_error 2 "\-\-shards: 'many' is not a shard count" $ranks -- "$pdsp" predict --data "$work/one.h5" --model "$work/model.h5" --out "$work/p.h5" --shards many
  expect_error 2 "\-\-shards 2: \-\-learner lbp-sgd needs whole examples" $ranks -- "$pdsp" train --data "$work/one.h5" --out "$work/m.h5" --shards 2 --learner lbp-sgd
  expect_error 2 "one.h5: example 0: 65 shards for its 64 variables" $ranks -- "$pdsp" info "$work/one.h5" --shards 65

  expect_error 2 "unknown flag or argument: --bogus 1" $ranks -- "$pdsp" train --data "$work/train.h5" --out "$work/m.h5" --bogus 1
  expect_error 2 "\-\-epsilon: '-1' is not 0 or a finite number >= 1e-12" $ranks -- "$pdsp" train --data "$work/train.h5" --out "$work/m.h5" --epsilon -1
  expect_error 2 "\-\-epsilon: '1e-13' is not 0 or a finite number >= 1e-12" $ranks -- "$pdsp" train --data "$work/train.h5" --out "$work/m.h5" --epsilon 1e-13
  expect_error 2 "\-\-counting: odd not in {auto,file,uniform,bethe,trw}" $ranks -- "$pdsp" train --data "$work/train.h5" --out "$work/m.h5" --counting odd
  expect_error 2 "\-\-out $work/train.h5: is the input file of \-\-data" $ranks -- "$pdsp" train --data "$work/train.h5" --out "$work/train.h5"
  expect_error 2 "has 240 parameters" $ranks -- "$pdsp" predict --data "$work/shared.h5" --model "$work/model.h5" --out "$work/p.h5"
  expect_error 2 "\-\-noise: pink not in" $ranks -- "$pdsp" gen denoise --train "$work/g.h5" --noise pink
  expect_error 2 "nolabels.h5: /vars/label: training needs ground-truth labels" $ranks -- "$pdsp" train --data "$work/nolabels.h5" --out "$work/m.h5" --loss-weight 0
  expect_error 2 "\-\-metrics $work/train.h5: is the input file of \-\-data" $ranks -- "$pdsp" train --data "$work/train.h5" --out "$work/m.h5" --metrics "$work/train.h5"
  expect_error 2 "huge.h5: training diverged at iteration 1: F = [0-9.]*, |grad| = inf; the gradient of theta\[[0-9]*\] is " $ranks -- "$pdsp" train --data "$work/huge.h5" --out "$work/m.h5"
  expect_error 2 "huge.h5: the potential of variable 0 state 1 is -*inf (its largest term is theta\[0\] = [-0-9.e+]* times /vars/feat_value\[0\] = 1e+300)" $ranks -- "$pdsp" train --data "$work/huge.h5" --out "$work/m.h5" --learner mf-sgd
  # 16 GiB per theta-sized vector: refused whatever the machine, under a 16 GiB address space.
  expect_error 2 "hugeparams.h5: @num_params: 2147483647 parameters need 128.0 GiB on every rank" $ranks -- bash -c 'ulimit -v 16777216 && exec "$@"' limited "$pdsp" train --data "$work/hugeparams.h5" --out "$work/m.h5"
  expect_error 2 "test.h5: the message between factor [0-9]* and variable [0-9]* is -*[a-z]* after the sweeps: the potentials are too large for double precision at epsilon = 1; the largest: the potential of factor [0-9]* joint state [0-9]* is 1e+308 (its largest term is theta\[161\] = 1e+308" $ranks -- "$pdsp" predict --data "$work/test.h5" --model "$work/hugetheta.h5" --out "$work/p.h5"
  expect_error 2 "test.h5: the message between factor [0-9]* and variable [0-9]* is -*[a-z]* after the sweeps" $ranks -- "$pdsp" predict --data "$work/test.h5" --model "$work/hugetheta.h5" --out "$work/p.h5" --inference lbp
  expect_error 2 "infepsilon.h5: @epsilon: is inf, not a temperature" $ranks -- "$pdsp" predict --data "$work/test.h5" --model "$work/infepsilon.h5" --out "$work/p.h5"
  expect_error 2 "badcounting.h5: @counting: is 'text', not one of auto, file, uniform, bethe, trw" $ranks -- "$pdsp" predict --data "$work/test.h5" --model "$work/badcounting.h5" --out "$work/p.h5"
  expect_error 2 "badinference.h5: @inference: is 'bogus', not one of lbp, mean-field" $ranks -- "$pdsp" predict --data "$work/test.h5" --model "$work/badinference.h5" --out "$work/p.h5"
  expect_error 2 "badnumparams.h5: @num_params: is 5, but /theta has [0-9]* values" $ranks -- "$pdsp" predict --data "$work/test.h5" --model "$work/badnumparams.h5" --out "$work/p.h5"
  expect_error 2 "badnumparams.h5: @num_params: is 5, but /theta has [0-9]* values" $ranks -- "$pdsp" info "$work/badnumparams.h5"
  expect_error 2 "\-\-height: '0' is not a whole number >= 1" $ranks -- "$pdsp" gen denoise --train "$work/g.h5" --height 0
  expect_error 2 "\-\-max-sweeps: '1.5' is not a whole number >= 1" $ranks -- "$pdsp" predict --data "$work/test.h5" --model "$work/model.h5" --out "$work/p.h5" --max-sweeps 1.5
  expect_error 2 "textepsilon.h5: @epsilon: expected a number attribute" $ranks -- "$pdsp" predict --data "$work/test.h5" --model "$work/textepsilon.h5" --out "$work/p.h5"
  expect_error 2 "\-\-epsilon 0 needs every c_v >= 0" $ranks -- "$pdsp" train --data "$work/train.h5" --out "$work/m.h5" --epsilon 0 --counting bethe
  expect_error 2 "\-\-epsilon 0 needs every c_v >= 0 (trw" $ranks -- "$pdsp" train --data "$work/train.h5" --out "$work/m.h5" --epsilon 0 --counting trw
  expect_error 2 "\-\-message-precision: half not in {double,single}" $ranks -- "$pdsp" train --data "$work/train.h5" --out "$work/m.h5" --message-precision half
  expect_error 2 "\-\-message-precision: single needs \-\-kernels auto" $ranks -- "$pdsp" train --data "$work/train.h5" --out "$work/m.h5" --message-precision single --kernels general
  expect_error 2 "pair.h5: \-\-message-precision single needs the binary pairwise kernels" $ranks -- "$pdsp" train --data "$work/pair.h5" --out "$work/m.h5" --message-precision single --counting bethe
  expect_error 2 "\-\-out $work/nowhere/m.h5: directory $work/nowhere does not exist" $ranks -- "$pdsp" train --data "$work/train.h5" --out "$work/nowhere/m.h5"
  expect_error 2 "\-\-test $work/g.h5: is also given to \-\-train" $ranks -- "$pdsp" gen denoise --train "$work/g.h5" --test "$work/g.h5"
  expect_error 2 "\-\-sizes: \-\-params per-site needs a single image size" $ranks -- "$pdsp" gen denoise --train "$work/g.h5" --sizes 8x8,16x16
  expect_error 2 "\-\-sizes: '0x8' has a height or width below 1" $ranks -- "$pdsp" gen denoise --train "$work/g.h5" --sizes 8x8,0x8 --params shared
  expect_error 2 "\-\-sizes: '8' is not HxW" $ranks -- "$pdsp" gen denoise --train "$work/g.h5" --sizes 8 --params shared
  expect_error 2 "\-\-sizes: '8xy' is not HxW with integer H and W" $ranks -- "$pdsp" gen denoise --train "$work/g.h5" --sizes 8xy --params shared
  expect_error 2 "\-\-sizes: '65536x65536' is too large" $ranks -- "$pdsp" gen denoise --train "$work/g.h5" --sizes 65536x65536 --params shared
  expect_error 2 "\-\-train-copies/\-\-test-copies: one file would hold at least" $ranks -- "$pdsp" gen denoise --train "$work/g.h5" --height 8000 --width 8000 --train-copies 9 --params shared
  # gen chain: every impossible size is refused before anything is drawn or written.
  expect_error 2 "\-\-labels: '0' is not a whole number >= 2" $ranks -- "$pdsp" gen chain --train "$work/g.h5" --labels 0
  expect_error 2 "\-\-active: 30 attributes per token is not in \[1, \-\-attributes = 20\]" $ranks -- "$pdsp" gen chain --train "$work/g.h5" --attributes 20 --active 30
  expect_error 2 "\-\-attributes/\-\-labels: 1073741824 x 2 + 2^2 = 2147483652 parameters; a model holds at most 2^31 - 1" $ranks -- "$pdsp" gen chain --train "$work/g.h5" --attributes 1073741824 --labels 2
  expect_error 2 "\-\-zipf: 'nan' is not a finite number >= 0" $ranks -- "$pdsp" gen chain --train "$work/g.h5" --zipf nan
  expect_error 2 "\-\-zipf: '-1' is not a finite number >= 0" $ranks -- "$pdsp" gen chain --train "$work/g.h5" --zipf -1
  expect_error 2 "\-\-sentences/\-\-test-sentences: 1000000 sentences would hold .* observation entries; the generator holds at most 2^31 - 1" $ranks -- "$pdsp" gen chain --train "$work/g.h5" --sentences 1000000 --attributes 20000 --active 10000
  expect_error 2 "\-\-sentences/\-\-test-sentences: 2000000000 sentences would hold .* transition table entries" $ranks -- "$pdsp" gen chain --train "$work/g.h5" --test "$work/g2.h5" --sentences 10 --test-sentences 2000000000 --labels 40 --active 1
  expect_error 2 "\-\-train $work/nowhere/g.h5: directory $work/nowhere does not exist" $ranks -- "$pdsp" gen chain --train "$work/nowhere/g.h5"
  # Outputs that cannot be written are refused before the data set is opened.
  expect_error 2 "\-\-out $work: is a directory" $ranks -- "$pdsp" train --data "$work/train.h5" --out "$work"
  expect_error 2 "\-\-out $work: is a directory" $ranks -- "$pdsp" predict --data "$work/test.h5" --model "$work/model.h5" --out "$work"
  expect_error 2 "\-\-train $work: is a directory" $ranks -- "$pdsp" gen denoise --train "$work"
  expect_error 2 "\-\-metrics $work: is a directory" $ranks -- "$pdsp" train --data "$work/train.h5" --out "$work/m.h5" --metrics "$work"
  expect_error 2 "\-\-out /proc/m.h5: cannot create files in /proc" $ranks -- "$pdsp" train --data "$work/train.h5" --out /proc/m.h5
  expect_error 2 "\-\-out /dev/null: exists and is not a regular file" $ranks -- "$pdsp" train --data "$work/train.h5" --out /dev/null
  expect_error 2 "\-\-checkpoint-dir $work/model.h5: is a file, not a directory" $ranks -- "$pdsp" train --data "$work/train.h5" --out "$work/m.h5" --checkpoint-dir "$work/model.h5"
  expect_error 2 "\-\-epsilon: \-\-learner ssvm-fw solves the structured SVM (eps = 0)" $ranks -- "$pdsp" train --data "$work/train.h5" --out "$work/m.h5" --learner ssvm-fw
  expect_error 2 "\-\-learner ssvm-fw: checkpoints are for the primal-dual, domke, dlpw and latent learners" $ranks -- "$pdsp" train --data "$work/train.h5" --out "$work/m.h5" --learner ssvm-fw --epsilon 0 --checkpoint-dir "$work"
  expect_error 2 "nolabels.h5: /vars/label: training needs ground-truth labels" $ranks -- "$pdsp" train --data "$work/nolabels.h5" --out "$work/m.h5" --learner ssvm-fw --epsilon 0
  expect_error 2 "ternary.h5: /vars/card\[0\] is 3: \-\-learner ssvm-fw needs binary variables" $ranks -- "$pdsp" train --data "$work/ternary.h5" --out "$work/m.h5" --learner ssvm-fw --epsilon 0
  # The stochastic learners: pegasos is the structured SVM on binary pairwise data; dlpw needs F
  # convex in the messages.
  expect_error 2 "\-\-epsilon: \-\-learner pegasos solves the structured SVM (eps = 0)" $ranks -- "$pdsp" train --data "$work/train.h5" --out "$work/m.h5" --learner pegasos
  expect_error 2 "ternary.h5: /vars/card\[0\] is 3: \-\-learner pegasos needs binary variables" $ranks -- "$pdsp" train --data "$work/ternary.h5" --out "$work/m.h5" --learner pegasos --epsilon 0
  expect_error 2 "\-\-learner pegasos: checkpoints are for the primal-dual, domke, dlpw and latent learners" $ranks -- "$pdsp" train --data "$work/train.h5" --out "$work/m.h5" --learner pegasos --epsilon 0 --checkpoint-dir "$work"
  expect_error 2 "\-\-learner dlpw: counting numbers bethe make F non-convex in the messages at eps > 0; use \-\-counting uniform" $ranks -- "$pdsp" train --data "$work/train.h5" --out "$work/m.h5" --learner dlpw --counting bethe
  expect_error 2 "\-\-learner domke: counting numbers trw make F non-convex in the messages at eps > 0; use \-\-counting uniform" $ranks -- "$pdsp" train --data "$work/train.h5" --out "$work/m.h5" --learner domke --epsilon 0.1 --counting trw
  expect_error 2 "\-\-batch: '0' is not" $ranks -- "$pdsp" train --data "$work/train.h5" --out "$work/m.h5" --learner dlpw --batch 0
  # Nonlinear function classes: eps > 0, the primal-dual learner, format 2's typed regions.
  expect_error 2 "\-\-unary-model mlp: nonlinear function classes train at \-\-epsilon > 0" $ranks -- "$pdsp" train --data "$work/train.h5" --out "$work/m.h5" --unary-model mlp --epsilon 0
  expect_error 2 "\-\-pairwise-model mlp: nonlinear function classes are for the primal-dual and domke learners" $ranks -- "$pdsp" train --data "$work/train.h5" --out "$work/m.h5" --pairwise-model mlp --learner lbp-lbfgs
  expect_error 2 "\-\-unary-model mlp: $work/train.h5 has no typed variables" $ranks -- "$pdsp" train --data "$work/train.h5" --out "$work/m.h5" --unary-model mlp
  expect_error 2 "\-\-unary-model trees: $work/train.h5 has no typed variables" $ranks -- "$pdsp" train --data "$work/train.h5" --out "$work/m.h5" --unary-model trees
  expect_error 2 "\-\-pairwise-model trees: nonlinear function classes are for the primal-dual and domke learners" $ranks -- "$pdsp" train --data "$work/train.h5" --out "$work/m.h5" --pairwise-model trees --learner ssvm-fw --epsilon 0
  expect_error 2 "\-\-tree-min-leaf: '0.7' is not a finite number in \[0, 0.5\]" $ranks -- "$pdsp" train --data "$work/train.h5" --out "$work/m.h5" --tree-min-leaf 0.7
  expect_error 2 "\-\-epsilon: \-\-learner domke fits at a positive temperature" $ranks -- "$pdsp" train --data "$work/train.h5" --out "$work/m.h5" --learner domke --epsilon 0
  expect_error 2 "\-\-learner: lbp-magic not in" $ranks -- "$pdsp" train --data "$work/train.h5" --out "$work/m.h5" --learner lbp-magic
  expect_error 2 "$work/none.toml: cannot read the config file" $ranks -- "$pdsp" train --config "$work/none.toml"
  expect_error 2 "$work/bad.toml: 'epsilonn' is not a setting of pdsp train" $ranks -- "$pdsp" train --data "$work/train.h5" --out "$work/m.h5" --config "$work/bad.toml"
  expect_error 2 "\-\-C: '0.5x' is not a number" $ranks -- "$pdsp" train --data "$work/train.h5" --out "$work/m.h5" --config "$work/typo.toml"
  expect_error 2 "'gen densie' is not a command (known: gen denoise, gen domke, gen chain)" $ranks -- "$pdsp" gen densie --train "$work/g.h5"
done
# A directory given as --out is refused at once: nothing is read or trained (on 1 and 2 ranks).
for ranks in 1 2; do
  launcher=()
  [ "$ranks" -gt 1 ] && launcher=("$mpirun" --allow-run-as-root --oversubscribe --bind-to none -np "$ranks")
  timeout 60 "${launcher[@]}" "$pdsp" train --data "$work/train.h5" --out "$work" > "$work/outdir" 2>&1
  if grep -q "examples\|iter\|kernels" "$work/outdir"; then
    echo "FAIL ($ranks rank(s)): --out DIR started work before refusing it"; cat "$work/outdir"
    failures=$((failures + 1))
  fi
done
# Tree-reweighted numbers come from the whole example's graph: a forced split is refused before
# any data is read (auto keeps the example whole).
for ranks in 1 2; do
  expect_error 2 "\-\-shards 2: \-\-counting trw needs whole examples; use \-\-shards 1 or auto" $ranks -- "$pdsp" train --data "$work/one.h5" --out "$work/m.h5" --counting trw --shards 2
  expect_error 2 "\-\-shards 2: \-\-counting trw needs whole examples; use \-\-shards 1 or auto" $ranks -- "$pdsp" predict --data "$work/test.h5" --model "$work/model.h5" --out "$work/p.h5" --counting trw --shards 2
done
expect_error 2 "\-\-counting file needs /vars/counting" 1 -- "$pdsp" train --data "$work/train.h5" --out "$work/m.h5" --counting file

# A file another process holds open for writing: HDF5's file lock, named as such.
cp "$work/train.h5" "$work/locked.h5"
/usr/bin/python3 -c 'import h5py, sys, time; f = h5py.File(sys.argv[1], "a"); open(sys.argv[2], "w").close(); time.sleep(300)' \
  "$work/locked.h5" "$work/locked.ready" &
holder=$!
for _ in $(seq 300); do [ -e "$work/locked.ready" ] && break; sleep 0.1; done
for ranks in 1 2; do
  expect_error 2 "locked.h5: locked by another process (HDF5 file locking); close it, or set HDF5_USE_FILE_LOCKING=FALSE on file systems without locks" $ranks -- env -u HDF5_USE_FILE_LOCKING "$pdsp" info "$work/locked.h5"
done
finish_cases
kill "$holder"
wait "$holder" 2> /dev/null

finish_cases
[ "$before" = "$(md5sum "$work/train.h5")" ] || { echo "FAIL: the input file changed"; failures=$((failures + 1)); }
[ ! -e "$work/m.h5" ] || { echo "FAIL: a failed run left a model file"; failures=$((failures + 1)); }
[ ! -e "$work/p.h5" ] || { echo "FAIL: a failed run left a prediction file"; failures=$((failures + 1)); }
[ ! -e "$work/g.h5" ] && [ ! -e "$work/g2.h5" ] || { echo "FAIL: a rejected gen denoise or gen chain wrote a data file"; failures=$((failures + 1)); }
ls "$work"/*.tmp.* 2> /dev/null && { echo "FAIL: temporary files left behind"; failures=$((failures + 1)); }
echo "bad input: $failures failure(s)"
[ $failures -eq 0 ]
