#!/usr/bin/python3
"""A/B of two pdsp builds on the same work, in one run: a refactor must leave results alone and
time alone. For each case both builds train (alternating, REPEATS times) and predict; the table
gives the largest relative difference of theta, of F at every iteration and of the predicted
marginals between the builds (0 means bitwise equal), whether the predicted labels are equal,
and the seconds per outer iteration (the median over repeats of the mean over iterations 2..)
with their ratio B / A.

usage: /usr/bin/python3 run/bench_ab.py --a OLD_PDSP --b NEW_PDSP [--repeats 3] [--quick]
                                        [--timed-only]
Reads ../shared/datasets (OCR, yeast); writes only under a temporary directory."""
import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile

import h5py
import numpy as np

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DATASETS = os.path.join(os.path.dirname(REPO), "shared", "datasets")
MPIRUN = ["mpirun", "--allow-run-as-root", "--oversubscribe", "--bind-to", "none"]


def run(command, env=None):
    result = subprocess.run(command, capture_output=True, text=True, env=env)
    if result.returncode != 0:
        sys.exit(f"failed ({result.returncode}): {' '.join(command)}\n{result.stderr}")
    return result.stdout


def prepare(work, quick):
    """The data of every case: (name, train, test, train flags, ranks, threads, timed)."""
    size, images, iterations = (16, 4, 10) if quick else (64, 40, 40)
    denoise = {s: os.path.join(work, f"denoise-{s}.h5") for s in ("train", "test")}
    shared = {s: os.path.join(work, f"shared-{s}.h5") for s in ("train", "test")}
    ocr = {s: os.path.join(work, f"ocr-{s}.h5") for s in ("train", "test")}
    yeast = {s: os.path.join(work, f"yeast-{s}.h5") for s in ("train", "test")}
    return [
        ("gen", ["gen", "denoise", "--train", denoise["train"], "--test", denoise["test"],
                 "--height", str(size), "--width", str(size), "--train-copies", str(images),
                 "--test-copies", "10", "--params", "per-site"]),
        ("gen", ["gen", "denoise", "--train", shared["train"], "--test", shared["test"],
                 "--height", "32", "--width", "32", "--train-copies", "4", "--test-copies", "2",
                 "--params", "shared"]),
        ("convert", ["ocr", "--input", os.path.join(DATASETS, "ocr_taskar", "ocr_taskar.mat"),
                     "--train", ocr["train"], "--test", ocr["test"]]),
        ("convert", ["multilabel", "--input"] +
         [os.path.join(DATASETS, "multilabel_yeast", f)
          for f in ("yeast-train.arff", "yeast-test.arff", "yeast.xml")] +
         ["--train", yeast["train"], "--test", yeast["test"]]),
    ], [
        (f"denoise {size}x{size} per-site, 2x1", denoise,
         ["--max-iters", str(iterations), "--tol", "0"], 2, 1, True),
        ("OCR CRF (bethe, loss 0), 1x2", ocr,
         ["--epsilon", "1", "--counting", "bethe", "--loss-weight", "0", "--C", "1",
          "--max-iters", "30" if quick else "100", "--tol", "0"], 1, 2, True),
        ("yeast eps=1, 1x2", yeast, ["--max-iters", "20" if quick else "60", "--tol", "0"], 1, 2,
         False),
        ("yeast ssvm-fw eps=0, 2x1", yeast,
         ["--learner", "ssvm-fw", "--epsilon", "0", "--tol", "1e-3",
          "--max-iters", "20" if quick else "100"], 2, 1, False),
        ("yeast eps=0 primal-dual, 1x2", yeast,
         ["--epsilon", "0", "--max-iters", "15" if quick else "40"], 1, 2, False),
        ("denoise 32x32 shared, lbp-lbfgs, 2x1", shared,
         ["--learner", "lbp-lbfgs", "--max-iters", "5"], 2, 1, False),
        ("denoise 32x32 shared, mf-sgd, 1x2", shared,
         ["--learner", "mf-sgd", "--max-iters", "5"], 1, 2, False),
    ]


def train_and_predict(pdsp, data, flags, ranks, threads, work, tag):
    model, metrics = os.path.join(work, f"{tag}.h5"), os.path.join(work, f"{tag}.jsonl")
    predictions = os.path.join(work, f"{tag}-pred.h5")
    command = [pdsp, "train", "--data", data["train"], "--out", model, "--metrics", metrics,
               "--threads", str(threads), "--quiet"] + flags
    if ranks > 1:
        command = MPIRUN + ["-np", str(ranks)] + command
    env = dict(os.environ, OMP_WAIT_POLICY="passive" if ranks * threads > os.cpu_count() else
               "active")
    run(command, env)
    run([pdsp, "predict", "--data", data["test"], "--model", model, "--out", predictions,
         "--threads", str(threads), "--quiet"], env)
    records = [json.loads(line) for line in open(metrics)]
    iterations = [r for r in records if r["type"] == "iteration"]
    # The likelihood baselines log their objective under its own name.
    objective = "F" if not iterations or "F" in iterations[0] else "neg_log_likelihood"
    with h5py.File(model, "r") as m, h5py.File(predictions, "r") as p:
        return {"theta": np.asarray(m["theta"]), "F": np.array([r[objective] for r in iterations]),
                "labels": np.asarray(p["/prediction/label"]),
                "marginals": np.asarray(p["/prediction/marginal"]),
                "seconds": statistics.mean(r["seconds"] for r in iterations[1:])
                if len(iterations) > 1 else float("nan")}


def relative(a, b):
    if a.shape != b.shape:
        return float("inf")
    scale = np.maximum(np.maximum(np.abs(a), np.abs(b)), 1e-300)
    return float(np.max(np.abs(a - b) / scale)) if a.size else 0.0


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--a", required=True, help="pdsp executable before the change")
    parser.add_argument("--b", required=True, help="pdsp executable after the change")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--quick", action="store_true", help="small data, few iterations")
    parser.add_argument("--timed-only", action="store_true",
                        help="only the cases whose time per iteration is compared")
    args = parser.parse_args()
    if os.geteuid() == 0:
        os.environ.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    with tempfile.TemporaryDirectory(prefix="pdsp-ab-") as work:
        steps, cases = prepare(work, args.quick)
        for kind, step in steps:
            run([args.a] + step if kind == "gen" else
                [sys.executable, os.path.join(REPO, "datasets", "convert.py")] + step)
        print(f"# pdsp A/B: A = {args.a}, B = {args.b}; {platform.node()}, {os.cpu_count()} "
              f"cores; {args.repeats} alternating repeats; ranks x threads per case "
              "(oversubscribed where ranks x threads > cores)")
        print(f"| case | theta rel. diff | F rel. diff | marginals rel. diff | labels equal | "
              f"A s/iter | B s/iter | B / A |")
        print("|---|---|---|---|---|---|---|---|")
        for name, data, flags, ranks, threads, timed in cases:
            if args.timed_only and not timed:
                continue
            seconds = {"a": [], "b": []}
            results = {}
            for repeat in range(args.repeats if timed else 1):
                for side in ("a", "b") if repeat % 2 == 0 else ("b", "a"):
                    r = train_and_predict(getattr(args, side), data, flags, ranks, threads, work,
                                          f"{side}{repeat}")
                    results.setdefault(side, r)
                    seconds[side].append(r["seconds"])
            a, b = results["a"], results["b"]
            ta, tb = statistics.median(seconds["a"]), statistics.median(seconds["b"])
            timing = (f"{ta * 1e3:.2f} ms | {tb * 1e3:.2f} ms | {tb / ta:.3f}" if timed
                      else "- | - | -")
            print(f"| {name} | {relative(a['theta'], b['theta']):.3g} | "
                  f"{relative(a['F'], b['F']):.3g} | "
                  f"{relative(a['marginals'], b['marginals']):.3g} | "
                  f"{'yes' if np.array_equal(a['labels'], b['labels']) else 'NO'} | {timing} |",
                  flush=True)


if __name__ == "__main__":
    main()
