#!/usr/bin/env python3
"""pdsp's iteration and peak memory as the parameter count of a chain grows, beside the memory
formula of docs/guide.md ("Large models").

For each P it writes a `pdsp gen chain` data set with the same sentences (so the same tokens and
observation entries) and attributes = P / L - L, trains it on 1 and 2 ranks (one thread each,
the chain CRF objective: --epsilon 1 --counting bethe --loss-weight 0), and prints one table:
the parameters, ranks, the mean seconds of an iteration once the L-BFGS memory is full
(iterations m + 2 to the last: the first ones fill it), that time per million parameters, the
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
# --theta-step lbfgs, a linear model and no curvature model: vectors of the model's size on
# every rank (theta, gradient, direction, trial point, d, the reduced moments, the pending step
# and gradient of L-BFGS, its 2m pairs, the inference engine's theta and the typed features'
# section copy), bytes per token on each rank (data, potentials, messages and their copy,
# beliefs) and a fixed part (the program, the MPI runtime, HDF5).
def vectors(memory):
    return 10 + 2 * memory


FIXED_BYTES = 80 * 2**20


def estimate(params, tokens, ranks, memory, token_bytes):
    return FIXED_BYTES + 8.0 * vectors(memory) * params + token_bytes * tokens / ranks


def generate(args, params, path):
    """A chain set of about `params` parameters: attributes = params / L - L."""
    attributes = max(int(round(params / args.labels)) - args.labels, args.active)
    measured([args.pdsp, "gen", "chain", "--train", path, "--sentences", str(args.sentences),
              "--attributes", str(attributes), "--labels", str(args.labels),
              "--active", str(args.active), "--seed", "1", "--quiet"], path + ".log")
    return attributes * args.labels + args.labels ** 2


def train(args, data, ranks, label):
    """Mean seconds of the iterations after the memory filled, the peak bytes of the largest
    rank, and the tokens of the set."""
    metrics = os.path.join(args.work, f"{label}.jsonl")
    command = under_mpirun(args.mpirun, ranks, [
        args.pdsp, "train", "--data", data, "--out", os.path.join(args.work, f"{label}.h5"),
        "--metrics", metrics, "--threads", "1", "--quiet", "--epsilon", "1", "--counting",
        "bethe", "--loss-weight", "0", "--C", "1", "--max-iters", str(args.iters), "--tol", "0",
        "--lbfgs-memory", str(args.memory)])
    measured(command, os.path.join(args.work, f"{label}.log"), thread_environment(ranks, 1))
    records = [json.loads(line) for line in open(metrics)]
    iterations = [r["seconds"] for r in records if r["type"] == "iteration"]
    full = iterations[args.memory + 1:] or iterations[1:]
    end = next(r for r in records if r["type"] == "end")
    run = next(r for r in records if r["type"] == "run")
    return sum(full) / len(full), end["peak_resident_bytes"], run.get("variables")


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
    args = parser.parse_args()
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
    print("| parameters | ranks | s / iteration | s / iteration / 1e6 params | peak MiB | "
          "formula MiB | formula error |")
    print("|---|---|---|---|---|---|---|")
    token_bytes = None
    for params in sorted(args.params):
        data = os.path.join(args.work, f"chain-{params}.h5")
        real = generate(args, params, data)
        for ranks in args.ranks:
            seconds, peak, tokens = train(args, data, ranks, f"p{params}-r{ranks}")
            if token_bytes is None:
                # The smallest model fixes the bytes a token costs (its parameters are a small
                # part of its peak); every other row tests the formula.
                token_bytes = (peak - estimate(real, 0, ranks, args.memory, 0)) * ranks / tokens
                print(f"# per token: {token_bytes:.0f} bytes (fitted on this row)")
            predicted = estimate(real, tokens, ranks, args.memory, token_bytes)
            print(f"| {real:,} | {ranks} | {seconds:.3f} | {seconds / real * 1e6:.4f} | "
                  f"{peak / 2**20:.0f} | {predicted / 2**20:.0f} | "
                  f"{100 * (predicted - peak) / peak:+.1f}% |", flush=True)
        os.remove(data)
    if temporary:
        shutil.rmtree(args.work)


if __name__ == "__main__":
    main()
