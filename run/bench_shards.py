"""The table of run/bench_shards.sh: one SIZE x SIZE grid trained whole and split."""
import argparse
import json
import os
import re
import subprocess
import time

import h5py
import numpy as np

from bench_common import run


# Sweeps of each prediction: enough to time it, far fewer than convergence takes at 2048^2.
PREDICT_SWEEPS = 20


def mpirun(ranks, command):
    if ranks == 1:
        return command
    return ["mpirun", "--allow-run-as-root", "--oversubscribe", "--bind-to", "none",
            "-np", str(ranks)] + command


def make_grid(pdsp, work, size):
    """One SIZE x SIZE denoising grid with shared parameters; its path."""
    data = os.path.join(work, f"grid{size}.h5")
    run([pdsp, "gen", "denoise", "--train", data, "--height", str(size), "--width", str(size),
         "--train-copies", "1", "--params", "shared", "--quiet"])
    return data


def train_split(pdsp, data, work, ranks, iterations, threads=1):
    """Trains on `ranks` ranks of `threads` threads for ITERATIONS iterations (--tol 0, auto
    layout): the run's log, metrics records, ms per iteration (mean of iterations 2 on), peak
    bytes of the largest rank, theta, halo statistics and the layout it names."""
    cores = os.cpu_count() or 1
    name = f"m{ranks}x{threads}"
    env = dict(os.environ, OMP_NUM_THREADS=str(threads),
               OMP_WAIT_POLICY="passive" if ranks * threads > cores else "active")
    model, metrics = os.path.join(work, f"{name}.h5"), os.path.join(work, f"{name}.jsonl")
    out, _ = run(mpirun(ranks, [pdsp, "train", "--data", data, "--out", model, "--metrics",
                                metrics, "--max-iters", str(iterations), "--tol", "0"]), env=env)
    records = [json.loads(l) for l in open(metrics)]
    its = [r for r in records if r["type"] == "iteration"]
    end = next(r for r in records if r["type"] == "end")
    # "layout: ...; example 0: grid blocks 2x1 of 2048x2048, variables per shard ..., 2048 cut factors"
    grid = re.search(r"grid blocks (\d+)x(\d+)[^\n]*?(\d+) cut factors", out)
    other = re.search(r"example \d+: (\w+), variables per shard[^\n]*?(\d+) cut factors", out)
    return {"model": model, "env": env, "head": records[0], "iterations": its, "end": end,
            "ms": 1e3 * sum(r["seconds"] for r in its[1:]) / max(1, len(its) - 1),
            "peak": end["peak_resident_bytes"], "theta": np.asarray(h5py.File(model, "r")["theta"]),
            "halo_sweeps": end.get("halo_sweeps", 0), "halo_values": end.get("halo_values_sent", 0),
            "halo_seconds": end.get("halo_seconds", 0.0),
            "layout": (f"blocks {grid.group(1)}x{grid.group(2)}, {grid.group(3)} cut" if grid else
                       f"{other.group(1)}, {other.group(2)} cut" if other else "whole"),
            "blocks": (int(grid.group(1)), int(grid.group(2))) if grid else None,
            "oversubscribed": ranks * threads > cores}


def grid_arguments(*flags):
    """The command line of a script that trains one grid: --size, --iterations and `flags`."""
    parser = argparse.ArgumentParser()
    for flag in flags:
        parser.add_argument(flag, required=True)
    parser.add_argument("--size", type=int, required=True)
    parser.add_argument("--iterations", type=int, required=True)
    return parser.parse_args()


def main():
    a = grid_arguments("--pdsp", "--work", "--ranks")
    cores = os.cpu_count() or 1
    data = make_grid(a.pdsp, a.work, a.size)
    cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo")
                if l.startswith("model name")), "?")
    print(f"# pdsp bench_shards: one {a.size}x{a.size} grid, shared parameters, eps = 1, "
          f"{a.iterations} iterations, 1 thread per rank; predict: {PREDICT_SWEEPS} sweeps")
    print(f"# machine: {cores} cores, {cpu}")
    print(f"{'ranks':>5} {'layout':>28} {'load s':>7} {'ms/iter':>8} {'speed-up':>8} "
          f"{'peak MiB':>9} {'x 1 rank':>8} {'halo KB/sw':>10} {'halo ms/sw':>10} "
          f"{'max |dtheta|/|theta|':>21} {'predict s':>9} {'predict MiB':>11}  note")
    reference = None
    for ranks in [int(r) for r in a.ranks.split(",")]:
        note = f"oversubscribed ({ranks} ranks on {cores} cores)" if ranks > cores else ""
        t = train_split(a.pdsp, data, a.work, ranks, a.iterations)
        if reference is None:
            reference = t
        drift = np.max(np.abs(t["theta"] - reference["theta"])) / np.max(np.abs(reference["theta"]))
        sweeps = t["halo_sweeps"]
        halo_kb = 8e-3 * t["halo_values"] / sweeps if sweeps else 0.0
        halo_ms = 1e3 * t["halo_seconds"] / sweeps if sweeps else 0.0
        # /usr/bin/time under mpirun: one peak per rank, on stderr.
        started = time.perf_counter()
        predicted = subprocess.run(mpirun(ranks, [
            "/usr/bin/time", "-f", "peak %M KB", a.pdsp, "predict", "--data", data, "--model",
            t["model"], "--out", os.path.join(a.work, f"p{ranks}.h5"), "--quiet", "--max-sweeps",
            str(PREDICT_SWEEPS)]), env=t["env"],
            capture_output=True, text=True, check=True)
        predict_seconds = time.perf_counter() - started
        predict_kb = max(int(k) for k in re.findall(r"peak (\d+) KB", predicted.stderr))
        print(f"{ranks:>5} {t['layout'][:28]:>28} "
              f"{t['head']['seconds_load']:>7.2f} {t['ms']:>8.1f} {reference['ms'] / t['ms']:>8.2f} "
              f"{t['peak'] / 2**20:>9.0f} "
              f"{t['peak'] / reference['peak']:>8.3f} {halo_kb:>10.1f} "
              f"{halo_ms:>10.2f} {drift:>21.2e} {predict_seconds:>9.2f} "
              f"{predict_kb / 1024:>11.0f}  {note}")


if __name__ == "__main__":
    main()
