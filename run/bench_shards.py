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


def main():
    parser = argparse.ArgumentParser()
    for flag in ("--pdsp", "--work", "--ranks"):
        parser.add_argument(flag, required=True)
    parser.add_argument("--size", type=int, required=True)
    parser.add_argument("--iterations", type=int, required=True)
    a = parser.parse_args()
    cores = os.cpu_count() or 1
    data = os.path.join(a.work, "grid.h5")
    run([a.pdsp, "gen", "denoise", "--train", data, "--height", str(a.size), "--width",
         str(a.size), "--train-copies", "1", "--params", "shared", "--quiet"])
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
        env = dict(os.environ, OMP_NUM_THREADS="1",
                   OMP_WAIT_POLICY="passive" if ranks > cores else "active")
        model = os.path.join(a.work, f"m{ranks}.h5")
        metrics = os.path.join(a.work, f"m{ranks}.jsonl")
        out, _ = run(mpirun(ranks, [a.pdsp, "train", "--data", data, "--out", model,
                                    "--metrics", metrics, "--max-iters", str(a.iterations),
                                    "--tol", "0"]), env=env)
        records = [json.loads(l) for l in open(metrics)]
        head = records[0]
        its = [r for r in records if r["type"] == "iteration"][1:]
        end = next(r for r in records if r["type"] == "end")
        ms = 1e3 * sum(r["seconds"] for r in its) / max(1, len(its))
        theta = np.asarray(h5py.File(model, "r")["theta"])
        if reference is None:
            reference = {"ms": ms, "peak": end["peak_resident_bytes"], "theta": theta}
        drift = np.max(np.abs(theta - reference["theta"])) / np.max(np.abs(reference["theta"]))
        sweeps = end.get("halo_sweeps", 0)
        halo_kb = 8e-3 * end.get("halo_values_sent", 0) / sweeps if sweeps else 0.0
        halo_ms = 1e3 * end.get("halo_seconds", 0) / sweeps if sweeps else 0.0
        layout = re.search(r"layout: ([^;\n]*)", out)
        # /usr/bin/time under mpirun: one peak per rank, on stderr.
        started = time.perf_counter()
        predicted = subprocess.run(mpirun(ranks, [
            "/usr/bin/time", "-f", "peak %M KB", a.pdsp, "predict", "--data", data, "--model",
            model, "--out", os.path.join(a.work, f"p{ranks}.h5"), "--quiet", "--max-sweeps",
            str(PREDICT_SWEEPS)]), env=env,
            capture_output=True, text=True, check=True)
        predict_seconds = time.perf_counter() - started
        predict_kb = max(int(k) for k in re.findall(r"peak (\d+) KB", predicted.stderr))
        print(f"{ranks:>5} {layout.group(1)[:28] if layout else '?':>28} "
              f"{head['seconds_load']:>7.2f} {ms:>8.1f} {reference['ms'] / ms:>8.2f} "
              f"{end['peak_resident_bytes'] / 2**20:>9.0f} "
              f"{end['peak_resident_bytes'] / reference['peak']:>8.3f} {halo_kb:>10.1f} "
              f"{halo_ms:>10.2f} {drift:>21.2e} {predict_seconds:>9.2f} "
              f"{predict_kb / 1024:>11.0f}  {note}")


if __name__ == "__main__":
    main()
