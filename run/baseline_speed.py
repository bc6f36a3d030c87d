#!/usr/bin/env python3
"""The likelihood baselines as a new user runs them (issue 42): each of lbp-sgd, lbp-lbfgs,
mf-sgd and mf-lbfgs on one denoising set (40 noisy 64x64 training images, 3 shared parameters),
`pdsp train --learner L --max-iters 50` (20 epochs for SGD) with the default inference settings
on 2 ranks x 1 thread, then predicted on the set's 10 test images. Prints one table row per
baseline: iterations, training seconds, what stopped it, the line searches every start had to
repeat, the examples left unconverged in any evaluation and the test error.

  /usr/bin/python3 run/baseline_speed.py --work /tmp/speed [--image 1] [--noise gaussian]
"""
import argparse
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_common import train_and_predict  # noqa: E402
from domke_table import machine  # noqa: E402

LEARNERS = {"lbp-sgd": 20, "lbp-lbfgs": 50, "mf-sgd": 20, "mf-lbfgs": 50}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pdsp", default="build/release/pdsp")
    parser.add_argument("--mpirun", default="mpirun")
    parser.add_argument("--work", required=True, help="directory for data, models and metrics")
    parser.add_argument("--image", type=int, default=1, help="base image 1-4 of pdsp gen denoise")
    parser.add_argument("--noise", default="gaussian", choices=["gaussian", "bimodal"])
    parser.add_argument("--learners", default=",".join(LEARNERS))
    args = parser.parse_args()
    learners = args.learners.split(",")
    if not set(learners) <= set(LEARNERS):
        sys.exit(f"--learners: each of {', '.join(LEARNERS)}")
    os.makedirs(args.work, exist_ok=True)
    # The reproduction's shared-parameter sets (run/reproduction.py shared_data).
    train, test = (os.path.join(args.work, f"{args.noise}-I{args.image}-{part}.h5")
                   for part in ("train", "test"))
    subprocess.run([args.pdsp, "gen", "denoise", "--train", train, "--test", test, "--height",
                    "64", "--width", "64", "--images", str(args.image), "--train-copies", "40",
                    "--test-copies", "10", "--noise", args.noise, "--sigma", "0.3", "--params",
                    "shared", "--seed", str(100 + args.image), "--unary-bins",
                    "10" if args.noise == "bimodal" else "0"], check=True, capture_output=True)
    rows = []
    for learner in learners:
        r = train_and_predict(args.pdsp, args.mpirun, train, test, args.work, learner,
                              ["--learner", learner, "--max-iters", str(LEARNERS[learner])],
                              ranks=2, threads=1)
        searches = sum(i.get("all_start_searches") or 0 for i in r["iterations"])
        unconverged = sum(i.get("unconverged_examples") or 0 for i in r["iterations"])
        rows.append((learner, r["end"]["iterations"], r["seconds"], r["end"]["stop_reason"],
                     searches, unconverged, r["error"]))
        print(f"# {learner}: {r['seconds']:.1f} s", file=sys.stderr, flush=True)

    print(f"# machine: {machine()}; 2 ranks x 1 thread, one run at a time")
    print(f"# {args.noise} noise, base image I{args.image}: 40 training and 10 test images of "
          "64x64, shared parameters; pdsp train --learner L --max-iters 50 (SGD: 20)")
    print("\n| baseline | iterations | train s | stopped by | all-start searches "
          "| unconverged | test error % |")
    print("|---|---|---|---|---|---|---|")
    for learner, iterations, seconds, stop, searches, unconverged, error in rows:
        print(f"| {learner} | {iterations} | {seconds:.1f} | {stop} | {searches} | "
              f"{unconverged} | {error:.3f} |")


if __name__ == "__main__":
    main()
