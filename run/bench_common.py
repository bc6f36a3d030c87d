"""What the benchmark scripts in run/ share: running a command, and training plus predicting
with pdsp while reading the metrics it writes."""
import json
import os
import re
import subprocess
import sys
import time


def run(command, **options):
    """Runs `command`; returns its stdout and wall seconds, or exits with its stderr."""
    started = time.perf_counter()
    result = subprocess.run(command, capture_output=True, text=True, **options)
    if result.returncode != 0:
        sys.exit(f"failed ({result.returncode}): {' '.join(command)}\n{result.stderr}")
    return result.stdout, time.perf_counter() - started


def train_and_predict(pdsp, mpirun, train, test, work, name, flags, ranks=1, threads=1):
    """pdsp train on `train` (under mpirun when ranks > 1) and predict on `test`: the iteration
    and end records of the metrics, the training wall seconds and the test per-variable error
    in percent."""
    model, metrics = os.path.join(work, f"{name}.h5"), os.path.join(work, f"{name}.jsonl")
    command = [pdsp, "train", "--data", train, "--out", model, "--metrics", metrics,
               "--threads", str(threads), "--quiet"] + flags
    if ranks > 1:
        command = [mpirun, "--allow-run-as-root", "--oversubscribe", "--bind-to", "none",
                   "-np", str(ranks)] + command
    # Spinning threads steal cores only when there are more threads than cores; below that,
    # passive waits only add the wake-up latency to every parallel region (OCR, 1 x 2 on 2
    # cores: 1.04 s passive, 0.81 s spinning).
    oversubscribed = ranks * threads > (os.cpu_count() or 1)
    env = dict(os.environ, OMP_WAIT_POLICY="passive" if oversubscribed else "active")
    _, seconds = run(command, env=env)
    records = [json.loads(line) for line in open(metrics)]
    predicted, _ = run([pdsp, "predict", "--data", test, "--model", model, "--quiet",
                        "--threads", str(threads),
                        "--out", os.path.join(work, f"{name}-pred.h5")], env=env)
    error = re.search(r"per-variable error: ([0-9.]+)%", predicted)
    return {"iterations": [r for r in records if r["type"] == "iteration"],
            "end": next(r for r in records if r["type"] == "end"), "seconds": seconds,
            "error": float(error.group(1)) if error else float("nan")}
