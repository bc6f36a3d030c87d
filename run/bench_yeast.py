#!/usr/bin/env python3
"""yeast multi-label (14 labels, every pair of labels a factor), run through run/bench_yeast.sh.

Converts the MULAN ARFF files, chooses C on a validation split (the last 20% of the training
instances) for each epsilon asked for, retrains on the whole training set with the chosen C and
prints the test Hamming loss (pdsp's per-variable error), the iterations, the time, the stop
reason and the last primal-dual gap (relative to F); then the fixed setting eps = 1, C = 0.1 on 1
and 2 cores. pdsp's default flags throughout, but at eps = 0 the structured SVM learner
(--learner ssvm-fw, exact LP oracle) to --tol 1e-3; its validation runs stop after
VALIDATION_PASSES passes (small C needs thousands: their gap is printed)."""
import argparse
import os
import platform
import sys

from bench_common import run, train_and_predict

C_GRID = [0.01, 0.03, 0.1, 0.3, 1.0]
EPSILON_FLAGS = {"0": ["--learner", "ssvm-fw", "--tol", "1e-3"]}
VALIDATION_PASSES = {"0": 1000}


def convert(repo, source, work, validation):
    inputs = [os.path.join(source, name) for name in
              ("yeast-train.arff", "yeast-test.arff", "yeast.xml")]
    suffix = "-val" if validation else ""
    files = {s: os.path.join(work, f"yeast{suffix}-{s}.h5") for s in ("train", "test", "val")}
    command = [sys.executable, os.path.join(repo, "datasets", "convert.py"), "multilabel",
               "--input"] + inputs + ["--train", files["train"], "--test", files["test"]]
    if validation:
        command += ["--validation", files["val"], "--validation-fraction", "0.2"]
    run(command)
    return files


def train_and_test(args, train, test, name, flags, ranks=1, threads=2):
    r = train_and_predict(args.pdsp, args.mpirun, train, test, args.work, name, flags, ranks,
                          threads)
    last = r["iterations"][-1] if r["iterations"] else {}
    gap = last["gap"] / abs(last["F"]) if last and last["F"] else None
    return {"loss": r["error"], "seconds": r["seconds"], "iterations": len(r["iterations"]),
            "trained": last.get("elapsed", 0.0),
            "stop": r["end"]["stop_reason"], "gap": gap}


def gap_text(r):
    return f"{r['gap']:.3g}" if r["gap"] is not None else "-"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pdsp", required=True)
    parser.add_argument("--mpirun", default="mpirun")
    parser.add_argument("--datasets", required=True)
    parser.add_argument("--work", required=True)
    parser.add_argument("--epsilons", default="1", help="comma-separated, e.g. 1,0")
    parser.add_argument("--flags", default="", help="more pdsp train flags")
    args = parser.parse_args()
    repo = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    source = os.path.join(args.datasets, "multilabel_yeast")
    split = convert(repo, source, args.work, validation=True)
    whole = convert(repo, source, args.work, validation=False)
    common = ["--max-iters", "5000"] + args.flags.split()
    print(f"# yeast (MULAN split 1500 / 917, 14 labels, 91 label pairs), {platform.node()}, "
          f"{os.cpu_count()} cores; pdsp train {' '.join(common)}, at eps = 0 also "
          f"{' '.join(EPSILON_FLAGS['0'])}; 1 rank x 2 threads")
    print(f"{'eps':>5}{'C':>7}{'val loss %':>12}{'test loss %':>13}{'iters':>7}{'s':>8}"
          f"{'rel. gap':>11}  stop")
    for epsilon in args.epsilons.split(","):
        flags = ["--epsilon", epsilon] + EPSILON_FLAGS.get(epsilon, []) + common
        validation = list(flags)
        if epsilon in VALIDATION_PASSES:
            validation[validation.index("--max-iters") + 1] = str(VALIDATION_PASSES[epsilon])
        scores = []
        for c in C_GRID:
            r = train_and_test(args, split["train"], split["val"], f"val-{epsilon}-{c}",
                               ["--C", str(c)] + validation)
            scores.append((r["loss"], c))
            print(f"#{epsilon:>4}{c:>7}{r['loss']:>12.2f}{'(validation)':>13}"
                  f"{r['iterations']:>7}{r['seconds']:>8.2f}{gap_text(r):>11}  {r['stop']}")
        loss, best = min(scores)
        r = train_and_test(args, whole["train"], whole["test"], f"test-{epsilon}",
                           ["--C", str(best)] + flags)
        print(f"{epsilon:>5}{best:>7}{loss:>12.2f}{r['loss']:>13.2f}{r['iterations']:>7}"
              f"{r['seconds']:>8.2f}{gap_text(r):>11}  {r['stop']}")
    print("# eps = 1, C = 0.1 on the whole training set:")
    for ranks, threads in [(1, 1), (1, 2), (2, 1)]:
        r = train_and_test(args, whole["train"], whole["test"], f"fixed-{ranks}x{threads}",
                           ["--epsilon", "1", "--C", "0.1"] + common, ranks, threads)
        print(f"#   {ranks} rank(s) x {threads} thread(s): {r['trained']:.2f} s training "
              f"({r['seconds']:.2f} s for the process, MPI's start-up included), "
              f"{r['iterations']} iterations, test Hamming loss {r['loss']:.2f}%, {r['stop']}")


if __name__ == "__main__":
    main()
