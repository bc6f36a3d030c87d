#!/usr/bin/env python3
"""What a nonlinear function class costs against the linear one on the same data: each pair of
classes (unary/pairwise) trained by the primal-dual learner one after another with the same
settings and threads, then predicted on the test set. Prints iterations, training seconds,
seconds per iteration, the ratio of seconds to linear/linear's, what stopped the run, and the
test error.

  /usr/bin/python3 run/nonlinear_cost.py --train T.h5 --test S.h5 --work /tmp/cost \\
      --pairs linear/linear,mlp/mlp --threads 2 --max-iters 1000

Horses: T and S from `datasets/convert.py segmentation` (default features).
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_common import train_and_predict  # noqa: E402
from domke_table import CLASSES, machine  # noqa: E402


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pdsp", default="build/release/pdsp")
    parser.add_argument("--mpirun", default="mpirun")
    parser.add_argument("--train", required=True)
    parser.add_argument("--test", required=True)
    parser.add_argument("--work", required=True, help="directory for models and metrics")
    parser.add_argument("--pairs", default="linear/linear,mlp/mlp",
                        help="unary/pairwise classes, comma-separated; the first is the reference")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--max-iters", type=int, default=1000)
    parser.add_argument("--epsilon", default="0.1")
    parser.add_argument("--loss-weight", default="0")
    parser.add_argument("--C", default="1")
    parser.add_argument("--hidden", type=int, default=16)
    parser.add_argument("--counting", default="auto", help="pdsp train --counting (e.g. trw)")
    parser.add_argument("--train-flags", default="",
                        help="more pdsp train flags for every pair, e.g. \"--sweeps 3 --tol 0\"")
    args = parser.parse_args()
    pairs = [tuple(p.split("/")) for p in args.pairs.split(",")]
    for pair in pairs:
        if len(pair) != 2 or not set(pair) <= set(CLASSES):
            sys.exit(f"--pairs: {'/'.join(pair)} is not unary/pairwise of {', '.join(CLASSES)}")
    os.makedirs(args.work, exist_ok=True)

    results = []
    for unary, pairwise in pairs:
        flags = ["--epsilon", args.epsilon, "--loss-weight", args.loss_weight, "--C", args.C,
                 "--counting", args.counting,
                 "--max-iters", str(args.max_iters), "--unary-model", unary,
                 "--pairwise-model", pairwise, "--hidden", str(args.hidden)]
        flags += args.train_flags.split()
        results.append(train_and_predict(args.pdsp, args.mpirun, args.train, args.test,
                                         args.work, f"{unary}-{pairwise}", flags,
                                         threads=args.threads))

    print(f"# machine: {machine()}; one run at a time, 1 rank x {args.threads} thread(s)")
    print(f"# {args.train} / {args.test}; primal-dual --epsilon {args.epsilon} --loss-weight "
          f"{args.loss_weight} --C {args.C} --counting {args.counting} --max-iters {args.max_iters} "
          f"--hidden {args.hidden} {args.train_flags}".rstrip())
    print("\n| unary/pairwise | iterations | seconds | s/iteration | x first | stopped by "
          "| test error % |")
    print("|---|---|---|---|---|---|---|")
    reference = results[0]["seconds"]
    for (unary, pairwise), r in zip(pairs, results):
        iterations = len(r["iterations"])
        print(f"| {unary}/{pairwise} | {iterations} | {r['seconds']:.1f} | "
              f"{r['seconds'] / max(1, iterations):.3f} | {r['seconds'] / reference:.2f} | "
              f"{r['end'].get('stop_reason', '?')} | {r['error']:.2f} |")


if __name__ == "__main__":
    main()
