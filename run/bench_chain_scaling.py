#!/usr/bin/env python3
"""pdsp's iteration and peak memory as the parameter count of a chain grows, beside the memory
formula of docs/guide.md ("Large models").

For each P it writes a `pdsp gen chain` data set with the same sentences (so the same tokens and
observation entries) and attributes = P / L - L, trains it on 1 and 2 ranks (one thread each,
the chain CRF objective: --epsilon 1 --counting bethe --loss-weight 0), and prints one table:
the parameters (of the file, and trained: those the training set reads), ranks, the mean
seconds of an iteration once the L-BFGS memory is full (iterations m + 2 to the last: the first
ones fill it), that time per million parameters trained, the
peak resident memory of the largest rank (pdsp's own VmHWM) and the formula's estimate with its
error. With 2 ranks on a 2-core machine the ranks share the cores with nothing else; with more
ranks than cores the script says it oversubscribes.

  python3 run/bench_chain_scaling.py [--params 1e5,1e6,1e7,5e7] [--ranks 1,2] [--memory 6]
      [--sentences 9000] [--labels 22] [--iters 12] [--work DIR] [--pdsp PATH]
"""
import argparse
import json
import os
import shutil
import sys
import tempfile

from bench_common import machine_facts, measured, thread_environment, under_mpirun

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# The formula (docs/guide.md "Large models"), for the primal-dual learner at eps > 0 with
# --theta-step lbfgs, a linear model and no curvature model: some vectors of the model's size on
# every rank plus bytes per token on the rank, over a fixed part (the program, the MPI runtime,
# HDF5). The vectors of the parameters trained (those the training set reads): the trainer's
# (theta, the gradient formed where the moments are reduced, direction, trial point, d), the
# engine's theta and the typed features' section copy, L-BFGS's pending step and gradient and its
# 2m pairs, and on more than one rank the buffers of MPI's allreduce of the moments (two vectors
# measured with Open MPI 4.1). At the end the trainer's four working vectors are gone and the
# theta the model file is written from, of the file's parameters, takes their place. The bytes per
# token: the data, potentials, beliefs, messages and the step search's copy of those that one
# sweep does not make exact.
FIXED_BYTES = 80 * 2**20


def vectors(memory, ranks):
    return 9 + 2 * memory + (2 if ranks > 1 else 0)


def model_bytes(trained, params, ranks, memory):
    training = vectors(memory, ranks) * trained
    writing = (5 + 2 * memory) * trained + params
    return FIXED_BYTES + 8.0 * max(training, writing)


def estimate(trained, params, tokens, ranks, memory, bytes_per_token):
    return model_bytes(trained, params, ranks, memory) + bytes_per_token * tokens / ranks


def token_bytes(row, memory):
    """The bytes a token costs in `row` = (trained, params, ranks, tokens, peak) once the fixed
    part and the vectors of the model's size are taken from its peak."""
    trained, params, ranks, tokens, peak = row
    return (peak - model_bytes(trained, params, ranks, memory)) * ranks / tokens


def generate(args, params, path):
    """A chain set of about `params` parameters: attributes = params / L - L."""
    attributes = max(int(round(params / args.labels)) - args.labels, args.active)
    measured([args.pdsp, "gen", "chain", "--train", path, "--sentences", str(args.sentences),
              "--attributes", str(attributes), "--labels", str(args.labels),
              "--active", str(args.active), "--seed", "1", "--quiet"], path + ".log")


def train(args, data, ranks, label):
    """Mean seconds of the iterations after the memory filled, the peak bytes of the largest
    rank, the tokens, the parameters trained and those of the set (trained here unless
    --reuse)."""
    metrics = os.path.join(args.work, f"{label}.jsonl")
    if not args.reuse:
        train_once(args, data, ranks, label, metrics)
    records = [json.loads(line) for line in open(metrics)]
    iterations = [r["seconds"] for r in records if r["type"] == "iteration"]
    full = iterations[args.memory + 1:] or iterations[1:]
    end = next(r for r in records if r["type"] == "end")
    run = next(r for r in records if r["type"] == "run")
    return (sum(full) / len(full), end["peak_resident_bytes"], run["variables"],
            run.get("trained_params", run["params"]), run["params"])


def train_once(args, data, ranks, label, metrics):
    command = under_mpirun(args.mpirun, ranks, [
        args.pdsp, "train", "--data", data, "--out", os.path.join(args.work, f"{label}.h5"),
        "--metrics", metrics, "--threads", "1", "--quiet", "--epsilon", "1", "--counting",
        "bethe", "--loss-weight", "0", "--C", "1", "--max-iters", str(args.iters), "--tol", "0",
        "--lbfgs-memory", str(args.memory)])
    measured(command, os.path.join(args.work, f"{label}.log"), thread_environment(ranks, 1))


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--params", default="1e5,1e6,1e7,5e7")
    parser.add_argument("--ranks", default="1,2")
    parser.add_argument("--memory", type=int, default=6, help="L-BFGS pairs")
    parser.add_argument("--sentences", type=int, default=9000)
    parser.add_argument("--labels", type=int, default=22)
    parser.add_argument("--active", type=int, default=20)
    parser.add_argument("--iters", type=int, default=12)
    parser.add_argument("--work", help="scratch folder outside the repository")
    parser.add_argument("--pdsp", default=os.path.join(REPO, "build", "release", "pdsp"))
    parser.add_argument("--mpirun", default="mpirun")
    parser.add_argument("--reuse", action="store_true",
                        help="read the runs' metrics already in --work instead of training")
    args = parser.parse_args()
    if args.reuse and not args.work:
        parser.error("--reuse needs the --work folder of an earlier run")
    args.params = [int(float(p)) for p in args.params.split(",")]
    args.ranks = [int(r) for r in args.ranks.split(",")]
    if args.iters < args.memory + 3:
        parser.error(f"--iters must be at least --memory + 3 ({args.memory + 3}) to time full "
                     "iterations")
    if not shutil.which(args.pdsp):
        parser.error(f"--pdsp: {args.pdsp} is not an executable")
    return args


def main():
    args = parse_args()
    temporary = args.work is None
    args.work = tempfile.mkdtemp(prefix="bench-scaling-") if temporary else args.work
    if os.path.realpath(args.work).startswith(REPO + os.sep):
        sys.exit(f"--work {args.work}: inside the repository; use a scratch folder outside it")
    os.makedirs(args.work, exist_ok=True)
    cores = os.cpu_count() or 1
    print(f"machine: {machine_facts()}")
    print(f"command: {' '.join(sys.argv)}")
    if max(args.ranks) > cores:
        print(f"# oversubscribed: up to {max(args.ranks)} ranks on {cores} cores")
    print(f"# {args.sentences} sentences, {args.labels} labels, {args.active} active attributes "
          f"a token; L-BFGS memory {args.memory}; {args.iters} iterations, timed from "
          f"iteration {args.memory + 2}")
    rows = []
    for params in sorted(args.params):
        data = os.path.join(args.work, f"chain-{params}.h5")
        if not args.reuse:
            generate(args, params, data)
        for ranks in args.ranks:
            seconds, peak, tokens, trained, real = train(args, data, ranks, f"p{params}-r{ranks}")
            rows.append((trained, real, ranks, tokens, peak, seconds))
        if not args.reuse:
            os.remove(data)
    # The bytes a token from the smallest model on one rank, where the tokens, not the vectors,
    # are most of the peak; the other rows test the formula.
    one_rank = [r for r in rows if r[2] == 1] or rows
    per_token = token_bytes(one_rank[0][:5], args.memory)
    print(f"# per token: {per_token:.0f} bytes (fitted on {one_rank[0][1]:,} parameters, "
          f"{one_rank[0][2]} rank)")
    print("| parameters | trained | ranks | s / iteration | s / iteration / 1e6 trained | "
          "peak MiB | formula MiB | formula error |")
    print("|---|---|---|---|---|---|---|---|")
    for trained, real, ranks, tokens, peak, seconds in rows:
        predicted = estimate(trained, real, tokens, ranks, args.memory, per_token)
        print(f"| {real:,} | {trained:,} | {ranks} | {seconds:.3f} | "
              f"{seconds / trained * 1e6:.4f} | {peak / 2**20:.0f} | {predicted / 2**20:.0f} | "
              f"{100 * (predicted - peak) / peak:+.1f}% |")
    if temporary:
        shutil.rmtree(args.work)


if __name__ == "__main__":
    main()
