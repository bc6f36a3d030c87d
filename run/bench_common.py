"""What the benchmark scripts in run/ share: running a command (also with its peak memory),
launching pdsp under mpirun, training plus predicting with pdsp while reading the metrics it
writes, and running the peer CRFsuite and reading its log."""
import collections
import json
import os
import platform
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


Measured = collections.namedtuple("Measured", "seconds peak_bytes cpu_seconds")
GNU_TIME = "/usr/bin/time"


def measured(command, log, env=None):
    """Runs `command` with its stdout and stderr into the file `log`: its wall seconds, peak
    resident bytes and CPU seconds (user + system, its children's included), or exits with the
    log's end."""
    # A child forked from this Python process keeps Python's resident high-water mark across
    # exec (wait4 reported 50 MiB for every peer), so GNU time, a small process, forks the
    # command and reports its peak. Without it, wait4's figure is an upper bound.
    timed = os.path.exists(GNU_TIME)
    usage_file = log + ".usage"
    if timed:
        command = [GNU_TIME, "-f", "%M %U %S", "-o", usage_file] + command
    started = time.perf_counter()
    with open(log, "w") as out:
        child = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT, env=env)
        _, status, usage = os.wait4(child.pid, 0)
    seconds = time.perf_counter() - started
    child.returncode = os.waitstatus_to_exitcode(status)  # so Popen does not wait again
    if child.returncode != 0:
        with open(log) as text:
            tail = text.read()[-2000:]
        sys.exit(f"failed ({child.returncode}): {' '.join(command)}\n{tail}")
    if not timed:  # Linux counts ru_maxrss in KiB
        return Measured(seconds, usage.ru_maxrss * 1024, usage.ru_utime + usage.ru_stime)
    with open(usage_file) as text:
        kib, user, system = text.read().split()[-3:]
    return Measured(seconds, int(kib) * 1024, float(user) + float(system))


def under_mpirun(mpirun, ranks, command):
    """`command` launched by mpirun on `ranks` ranks: allowed as root (containers, CI), not bound
    to one core (a rank runs several threads), and allowed more ranks than cores."""
    return [mpirun, "--allow-run-as-root", "--oversubscribe", "--bind-to", "none",
            "-np", str(ranks)] + command


def thread_environment(ranks, threads):
    """The environment for `ranks` x `threads` pdsp threads on this machine."""
    # Spinning threads steal cores only when there are more threads than cores; below that,
    # passive waits only add the wake-up latency to every parallel region (OCR, 1 x 2 on 2
    # cores: 1.04 s passive, 0.81 s spinning).
    oversubscribed = ranks * threads > (os.cpu_count() or 1)
    return dict(os.environ, OMP_NUM_THREADS=str(threads),
                OMP_WAIT_POLICY="passive" if oversubscribed else "active")


def machine_facts():
    """`CPU model, N cores` of this machine, for the head of a table."""
    model = platform.processor() or "unknown CPU"
    try:
        with open("/proc/cpuinfo") as cpuinfo:
            found = re.search(r"^model name\s*:\s*(.+)$", cpuinfo.read(), re.M)
        model = found.group(1).strip() if found else model
    except OSError:
        pass
    return f"{model}, {os.cpu_count()} cores, {platform.node()}"


def crfsuite_learn(crfsuite, train, model, c2, log, params=()):
    """CRFsuite's L-BFGS on `train` with the features of a pdsp chain (every attribute with
    every label, every transition), `c2` times |w|^2, and more `-p NAME=VALUE` params: its loss
    and CPU seconds per iteration (it times them with clock()), number of features, wall and
    CPU seconds and peak resident bytes."""
    command = [crfsuite, "learn", "-a", "lbfgs", "-p", f"c2={c2!r}",
               "-p", "feature.possible_states=1", "-p", "feature.possible_transitions=1",
               "-m", model]
    for param in params:
        command += ["-p", param]
    usage = measured(command + [train], log)
    with open(log) as text:
        output = text.read()
    features = re.search(r"^Number of features: (\d+)", output, re.M)
    return {"losses": [float(x) for x in re.findall(r"^Loss: ([0-9.eE+-]+)", output, re.M)],
            "step_seconds": [float(x) for x in re.findall(
                r"^Seconds required for this iteration: ([0-9.]+)", output, re.M)],
            "features": int(features.group(1)) if features else None,
            "seconds": usage.seconds, "peak_bytes": usage.peak_bytes,
            "cpu_seconds": usage.cpu_seconds}


def seconds_to(objectives, step_seconds, target):
    """The sum of the iteration times until the objective is at most `target`, and the number
    of those iterations; (nan, None) when it never is."""
    elapsed = 0.0
    for iteration, (objective, step) in enumerate(zip(objectives, step_seconds), 1):
        elapsed += step
        if objective <= target:
            return elapsed, iteration
    return float("nan"), None


def train_and_predict(pdsp, mpirun, train, test, work, name, flags, ranks=1, threads=1):
    """pdsp train on `train` (under mpirun when ranks > 1) and predict on `test`: the iteration
    and end records of the metrics, the training wall seconds and the test per-variable error
    in percent."""
    model, metrics = os.path.join(work, f"{name}.h5"), os.path.join(work, f"{name}.jsonl")
    command = [pdsp, "train", "--data", train, "--out", model, "--metrics", metrics,
               "--threads", str(threads), "--quiet"] + flags
    if ranks > 1:
        command = under_mpirun(mpirun, ranks, command)
    env = thread_environment(ranks, threads)
    _, seconds = run(command, env=env)
    records = [json.loads(line) for line in open(metrics)]
    predicted, _ = run([pdsp, "predict", "--data", test, "--model", model, "--quiet",
                        "--threads", str(threads),
                        "--out", os.path.join(work, f"{name}-pred.h5")], env=env)
    error = re.search(r"per-variable error: ([0-9.]+)%", predicted)
    return {"iterations": [r for r in records if r["type"] == "iteration"],
            "end": next(r for r in records if r["type"] == "end"), "seconds": seconds,
            "error": float(error.group(1)) if error else float("nan")}
