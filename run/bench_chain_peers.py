#!/usr/bin/env python3
"""pdsp, CRFsuite and Wapiti side by side on the chain CRF objective of any pdsp chain data set.

The data set is a format-2 file whose model is a linear-chain CRF: one variable type reading a
sparse observation row per variable, one factor type of dim 0 (a K x K transition table shared
by every edge), each example a chain over its variables in order (datasets/convert.py ocr and
citations, `pdsp gen chain`). Anything else is refused in one line. The script writes the rows
as CRFsuite's and Wapiti's input (attribute j of a row is feature j), trains the three on
F = -log-likelihood + C/2 |theta|^2:

  pdsp      train --epsilon 1 --counting bethe --loss-weight 0 --C C --tol 0
            --lbfgs-memory M (under mpirun)
  CRFsuite  learn -a lbfgs -p c2=C/2 -p feature.possible_states=1
            -p feature.possible_transitions=1 -p num_memories=M (epsilon, delta tight:
            max-iters decides)
  Wapiti    train -a l-bfgs -1 0 -2 C -t 1 -e 0 -i N --histsz M

with the same number M of L-BFGS pairs (--memory, CRFsuite's default 6), and prints the machine, the command, the parameters each tool sees and ONE table: per tool (and
pdsp thread count) the seconds to the target objective (the best objective every tool reaches:
the largest of their minima), iterations to it, seconds per iteration (mean of iterations 2 to
the one that reaches the target), the first iteration, start-up (wall minus the iterations), peak resident memory, the
final objective, the run's CPU seconds over its wall seconds (below the thread count: it waited
for a core, so its times are inflated) and the ratios of time and memory to CRFsuite.

Wapiti reads binary features only; with other values it is skipped, saying so. Its input is by
default the feature lists themselves (Wapiti's pattern-less "raw" mode: a token's own columns
are its features, so rows of any length give exactly pdsp's features); --wapiti-input patterns
writes the rows as columns with one unigram pattern per column (one shared prefix) and a `B`,
padding short rows with one extra token, whose feature the table's notes count.

  python3 run/bench_chain_peers.py --data TRAIN.h5 [--C 1] [--max-iters 200] [--threads 1,2]
      [--peers crfsuite,wapiti] [--work DIR] [--pdsp PATH] [--crfsuite PATH] [--wapiti PATH]

Peers are built outside the repository with run/build_crfsuite.sh and run/build_wapiti.sh.
"""
import argparse
import dataclasses
import json
import os
import re
import shutil
import sys
import tempfile

import h5py
import numpy as np

from bench_common import (crfsuite_learn, machine_facts, measured, seconds_to,
                          thread_environment, under_mpirun)

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PEERS = ("crfsuite", "wapiti")
# Wapiti prints its objective with two decimals, so a target it defines is known to +-0.005.
WAPITI_RESOLUTION = 0.005


@dataclasses.dataclass
class Chain:
    """A chain data set: K states, each variable's observation row (CSR over the rows it reads),
    labels and the example boundaries, and where the parameters lie."""
    path: str
    states: int
    dim: int
    num_params: int
    var_offset: np.ndarray
    labels: np.ndarray
    row_ptr: np.ndarray   # per variable, its row's entries [row_ptr[v], row_ptr[v + 1])
    index: np.ndarray
    value: np.ndarray     # None: every value is 1

    def attributes_used(self):
        return len(np.unique(self.index))

    def labels_used(self):
        return len(np.unique(self.labels))

    def binary(self):
        return self.value is None or bool(np.all(self.value == 1))


@dataclasses.dataclass
class Curve:
    """One tool's run: objective and seconds per iteration, wall and CPU seconds, peak bytes."""
    name: str
    objectives: list
    step_seconds: list
    wall: float
    cpu: float
    peak_bytes: float
    params: int = None
    note: str = ""


def refuse(path, reason):
    sys.exit(f"{path}: not a pdsp chain data set: {reason}")


def arrays(f, *names):
    return [f[name][()] if name in f else None for name in names]


def check_layout(path, f):
    """Refuses a file whose parts are not those of a format-2 chain."""
    if f.attrs.get("format") not in (b"pdsp-dataset", "pdsp-dataset"):
        refuse(path, "no format = pdsp-dataset attribute")
    if int(f.attrs.get("format_version", 0)) != 2:
        refuse(path, "format_version is not 2")
    for name in ("/vars/feat_ptr", "/factors/feat_ptr", "/factors/obs_row", "/nonlocal",
                 "/examples/count_offset"):
        if name in f:
            refuse(path, f"it has {name} (feature rows, factor observations or non-local terms)")
    for name in ("/var_types/dim", "/factor_types/dim", "/vars/type", "/factors/type",
                 "/vars/obs_row", "/obs/ptr", "/obs/index"):
        if name not in f:
            refuse(path, f"{name} is missing")


def check_types(path, f, states):
    """One variable type reading rows, one factor type holding a K x K table, every region
    typed, and the two parameter blocks apart. Returns (dim, block offsets)."""
    var_dim, var_offset, fac_dim, fac_offset = arrays(
        f, "/var_types/dim", "/var_types/param_offset", "/factor_types/dim",
        "/factor_types/param_offset")
    if len(var_dim) != 1 or var_dim[0] <= 0:
        refuse(path, "not exactly one variable type reading observation rows")
    if len(fac_dim) != 1 or fac_dim[0] != 0:
        refuse(path, "not exactly one factor type holding a table (dim 0)")
    if np.any(f["/vars/type"][()] != 0) or np.any(f["/factors/type"][()] != 0):
        refuse(path, "a variable or factor without the type")
    unary = (int(var_offset[0]), int(var_offset[0]) + states * int(var_dim[0]))
    table = (int(fac_offset[0]), int(fac_offset[0]) + states * states)
    if unary[0] < table[1] and table[0] < unary[1]:
        refuse(path, "the unary and transition parameter blocks overlap")
    return int(var_dim[0])


def check_edges(path, f, var_offset):
    """Every factor joins variable v to v + 1 of the same example, in that order, and each
    example's variables form one path: the chain CRFsuite and Wapiti assume."""
    var_ptr, pairs, factor_offset = arrays(f, "/factors/var_ptr", "/factors/vars",
                                           "/examples/factor_offset")
    if not np.array_equal(var_ptr, np.arange(0, len(pairs) + 1, 2)):
        refuse(path, "a factor does not join two variables")
    first, second = pairs[0::2], pairs[1::2]
    if np.any(second != first + 1):
        refuse(path, "a factor does not join a variable to the next one")
    lengths = np.diff(var_offset)
    if not np.array_equal(np.diff(factor_offset), lengths - 1):
        refuse(path, "an example does not have one factor fewer than variables")
    last = np.zeros(var_offset[-1], bool)
    last[var_offset[1:] - 1] = True
    if not np.array_equal(np.sort(first), np.flatnonzero(~last)):
        refuse(path, "an example's factors are not the path over its variables")


def variable_rows(f, obs_rows):
    """The observation rows the variables read, in variable order, as one CSR."""
    ptr, index, value = arrays(f, "/obs/ptr", "/obs/index", "/obs/value")
    starts, ends = ptr[obs_rows], ptr[obs_rows + 1]
    row_ptr = np.concatenate([[0], np.cumsum(ends - starts)])
    take = np.concatenate([np.arange(s, e, dtype=np.int64) for s, e in zip(starts, ends)])
    return row_ptr, index[take], None if value is None else value[take]


def read_chain(path):
    """The chain in `path`, or one line on stderr and exit 2 for anything else."""
    try:
        f = h5py.File(path, "r")
    except OSError as error:
        sys.exit(f"{path}: cannot be read as HDF5 ({error})")
    with f:
        check_layout(path, f)
        cards, labels, var_offset = arrays(f, "/vars/card", "/vars/label",
                                           "/examples/var_offset")
        states = int(cards[0])
        if np.any(cards != states):
            refuse(path, "the variables do not all have the same number of states")
        if np.any(labels < 0) or np.any(labels >= states):
            refuse(path, "a label is unobserved or out of range")
        dim = check_types(path, f, states)
        check_edges(path, f, var_offset)
        row_ptr, index, value = variable_rows(f, f["/vars/obs_row"][()])
        return Chain(path, states, dim, int(f.attrs["num_params"]), var_offset, labels,
                     row_ptr, index, value)


def token_attributes(chain, v, name, with_values):
    """Variable v's attributes as `name(j)` or `name(j):x_j` strings."""
    span = slice(chain.row_ptr[v], chain.row_ptr[v + 1])
    if not with_values:
        return [name(j) for j in chain.index[span]]
    return [f"{name(j)}:{x:.17g}" for j, x in zip(chain.index[span], chain.value[span])]


def write_sequences(chain, path, line):
    """One line per variable (`line(v)`), a blank line after each example."""
    with open(path, "w") as out:
        for start, end in zip(chain.var_offset[:-1], chain.var_offset[1:]):
            out.writelines(line(v) + "\n" for v in range(start, end))
            out.write("\n")


def write_crfsuite(chain, path):
    """CRFsuite's `LABEL<TAB>aJ:x...`; binary rows need no value (CRFsuite's default is 1)."""
    real = not chain.binary()
    write_sequences(chain, path, lambda v: "\t".join(
        [f"y{chain.labels[v]}"] + token_attributes(chain, v, lambda j: f"a{j}", real)))


def write_wapiti_features(chain, path):
    """Wapiti's raw mode: a token's columns are its features (`u` unigram, the `b` of every
    token the shared transition table), the label last."""
    write_sequences(chain, path, lambda v: " ".join(
        token_attributes(chain, v, lambda j: f"u{j}", False) + ["b", f"y{chain.labels[v]}"]))


def write_wapiti_columns(chain, path, pattern_path):
    """Wapiti's pattern mode: a row's attributes as columns, short rows padded with `_`, one
    unigram pattern per column with one shared prefix (so attribute j is one feature in every
    column) and `B`. Returns the parameters the padding adds (K for the feature `u:_`)."""
    width = int(np.max(np.diff(chain.row_ptr))) if len(chain.labels) else 0

    def line(v):
        columns = token_attributes(chain, v, lambda j: f"a{j}", False)
        return " ".join(columns + ["_"] * (width - len(columns)) + [f"y{chain.labels[v]}"])

    write_sequences(chain, path, line)
    with open(pattern_path, "w") as patterns:
        patterns.writelines(f"U:%x[0,{k}]\n" for k in range(width))
        patterns.write("B\n")
    padded = np.any(np.diff(chain.row_ptr) < width)
    return chain.labels_used() if padded else 0


def run_pdsp(args, threads):
    """pdsp under mpirun on one rank: its curve from the metrics (F after each step, wall
    seconds per iteration) and its own peak resident memory (the end record's VmHWM, so
    mpirun's memory is left out)."""
    name = f"pdsp-{threads}t"
    model, metrics = (os.path.join(args.work, f"{name}.{ext}") for ext in ("h5", "jsonl"))
    command = under_mpirun(args.mpirun, 1, [
        args.pdsp, "train", "--data", args.data, "--out", model, "--metrics", metrics,
        "--threads", str(threads), "--quiet", "--epsilon", "1", "--counting", "bethe",
        "--loss-weight", "0", "--C", repr(args.C), "--max-iters", str(args.max_iters),
        "--tol", "0", "--lbfgs-memory", str(args.memory)])
    usage = measured(command, os.path.join(args.work, f"{name}.log"),
                     thread_environment(1, threads))
    records = [json.loads(line) for line in open(metrics)]
    iterations = [r for r in records if r["type"] == "iteration"]
    header = next(r for r in records if r["type"] == "run")
    end = next(r for r in records if r["type"] == "end")
    # mpirun's peak (of mpirun and pdsp together) only when pdsp did not report its own.
    peak = end.get("peak_resident_bytes") or usage.peak_bytes
    return Curve(f"pdsp {threads}t", [r["F_after_step"] for r in iterations],
                 [r["seconds"] for r in iterations], usage.seconds, usage.cpu_seconds, peak,
                 header.get("params"), f"commit {header.get('pdsp_commit')}, L-BFGS memory "
                 f"{header.get('lbfgs_memory')}")


def run_crfsuite(args, chain):
    """CRFsuite's L-BFGS with stops so tight that --max-iters decides."""
    train = os.path.join(args.work, "train.crfsuite")
    write_crfsuite(chain, train)
    result = crfsuite_learn(
        args.crfsuite, train, os.path.join(args.work, "crfsuite.model"), args.C / 2,
        os.path.join(args.work, "crfsuite.log"),
        [f"max_iterations={args.max_iters}", "epsilon=1e-12", "delta=1e-12",
         f"num_memories={args.memory}"])
    return Curve("crfsuite", result["losses"], result["step_seconds"], result["seconds"],
                 result["cpu_seconds"], result["peak_bytes"], result["features"])


def parse_wapiti(log):
    """Wapiti's stderr: (objectives, seconds per iteration, number of features)."""
    with open(log) as text:
        output = text.read()
    steps = re.findall(r"^\s*\[\s*\d+\] obj=(\S+).* time=[0-9.]+s/([0-9.]+)s", output, re.M)
    features = re.search(r"nb features:\s*(\d+)", output)
    # Differences of its running totals: each printed time is rounded to 0.01 s, and summing
    # 200 rounded iteration times drifted by more than Wapiti's whole start-up.
    totals = [float(total) for _, total in steps]
    return ([float(o) if o != "NA" else float("nan") for o, _ in steps],
            list(np.diff([0.0] + totals)), int(features.group(1)) if features else None)


def run_wapiti(args, chain):
    """Wapiti's L-BFGS on one thread, -e 0 so that only -i (or its gradient test) stops it."""
    if not chain.binary():
        print("# wapiti skipped: its features are binary and this data set has other values")
        return None
    train = os.path.join(args.work, "train.wapiti")
    command = [args.wapiti, "train", "-a", "l-bfgs", "-1", "0", "-2", repr(args.C), "-t", "1",
               "-e", "0", "-i", str(args.max_iters), "--histsz", str(args.memory)]
    note, extra = "raw features", 0
    if args.wapiti_input == "patterns":
        pattern = os.path.join(args.work, "patterns.wapiti")
        extra = write_wapiti_columns(chain, train, pattern)
        command += ["-p", pattern]
        note = f"patterns; padding adds {extra} params" if extra else "patterns"
    else:
        write_wapiti_features(chain, train)
    log = os.path.join(args.work, "wapiti.log")
    usage = measured(command + [train, os.path.join(args.work, "wapiti.model")], log)
    objectives, steps, features = parse_wapiti(log)
    return Curve("wapiti", objectives, steps, usage.seconds, usage.cpu_seconds,
                 usage.peak_bytes, features, note)


def target_of(curves):
    """The best objective every tool reaches: the largest of their minima (at Wapiti's print
    resolution when it ran)."""
    target = max(min(c.objectives) for c in curves if c.objectives)
    slack = WAPITI_RESOLUTION if any(c.name == "wapiti" for c in curves) else 0.0
    return target, slack


def row_of(curve, target, reference):
    """One table row; `reference` is CRFsuite's (seconds to target, peak bytes) or None."""
    reached, iterations = seconds_to(curve.objectives, curve.step_seconds, target)
    # The iterations after the target are left out: at the optimum, line searches that find no
    # decrease (pdsp's take up to 120 trials there) would make the mean.
    later = curve.step_seconds[1:iterations or len(curve.step_seconds)]
    per_iteration = sum(later) / len(later) if later else float("nan")
    first = curve.step_seconds[0] if curve.step_seconds else float("nan")
    startup = curve.wall - sum(curve.step_seconds)
    mib = curve.peak_bytes / 2 ** 20
    ratios = ["", ""]
    if reference:
        ratios = [f"{reached / reference[0]:.2f}" if reference[0] > 0 else "",
                  f"{curve.peak_bytes / reference[1]:.2f}"]
    final = curve.objectives[-1] if curve.objectives else float("nan")
    return [curve.name, f"{curve.params:,}" if curve.params else "?",
            f"{reached:.3f}" if iterations else "not reached", str(iterations or "-"), f"{per_iteration:.4f}", f"{first:.4f}",
            f"{startup:.2f}", f"{mib:.1f}", f"{final:.6f}", str(len(curve.objectives)),
            f"{curve.cpu / curve.wall:.2f}"] + ratios


def print_table(curves):
    target, slack = target_of(curves)
    crf = next((c for c in curves if c.name == "crfsuite"), None)
    reference = None
    if crf:
        reference = (seconds_to(crf.objectives, crf.step_seconds, target + slack)[0],
                     crf.peak_bytes)
    print(f"target objective F <= {target:.6f}" + (f" + {slack}" if slack else "") +
          " (the largest of the tools' best objectives)")
    head = ["tool", "params", "s to target", "iters to target", "s/iter (2..target)", "1st iter s",
            "start-up s", "peak MiB", "final F", "iters", "CPU / wall", "time / CRFsuite",
            "memory / CRFsuite"]
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    for curve in curves:
        print("| " + " | ".join(row_of(curve, target + slack, reference)) + " |")
    notes = [f"{c.name}: {c.note}" for c in curves if c.note]
    if notes:
        print("notes: " + "; ".join(notes))


def print_mismatches(curves, chain):
    """Warnings for a peer that counts other parameters than the data touch, and for final
    objectives that disagree: either means the tools did not solve the same problem."""
    touched = chain.labels_used() * (chain.attributes_used() + chain.labels_used())
    for curve in curves:
        if not curve.name.startswith("pdsp") and curve.params not in (None, touched):
            print(f"warning: {curve.name} counts {curve.params:,} parameters, "
                  f"{curve.params - touched:+,} against the {touched:,} the data touch")
    finals = [c.objectives[-1] for c in curves if c.objectives]
    if finals and max(finals) - min(finals) > 1e-4 * abs(min(finals)) + WAPITI_RESOLUTION:
        print(f"warning: the final objectives differ by {max(finals) - min(finals):.6g} "
              "(more than 1e-4 relative): different problems, or some tools stopped early")


def print_parameters(chain):
    """What each tool should see: pdsp's theta holds every column of the type's block; the peers
    only the attributes and labels that occur in the training set."""
    used, labels = chain.attributes_used(), chain.labels_used()
    print(f"data: {chain.path}: {len(chain.var_offset) - 1:,} chains, {len(chain.labels):,} "
          f"variables, {chain.states} states, observation dim {chain.dim:,}")
    print(f"parameters: pdsp num_params {chain.num_params:,}; the data touch {labels} x "
          f"{used:,} attributes + {labels} x {labels} transitions = "
          f"{labels * used + labels * labels:,} (what CRFsuite and Wapiti should count; "
          f"pdsp's other parameters never leave 0)")
    if labels < chain.states:
        print(f"warning: {chain.states - labels} states never occur as a label; CRFsuite and "
              f"Wapiti normalise over the labels they see, pdsp over all {chain.states}, so "
              f"their objectives differ")


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", required=True, help="a pdsp chain data set (format 2)")
    parser.add_argument("--C", type=float, default=1.0)
    parser.add_argument("--max-iters", type=int, default=200)
    parser.add_argument("--threads", default="1", help="pdsp threads, or a list such as 1,2")
    parser.add_argument("--peers", default="crfsuite,wapiti", help="a list, or none")
    parser.add_argument("--work", help="scratch folder outside the repository (default: a "
                        "temporary one, removed at the end)")
    parser.add_argument("--pdsp", default=os.path.join(REPO, "build", "release", "pdsp"))
    parser.add_argument("--mpirun", default="mpirun")
    parser.add_argument("--crfsuite", default=shutil.which("crfsuite") or "crfsuite")
    parser.add_argument("--wapiti", default=shutil.which("wapiti") or "wapiti")
    parser.add_argument("--wapiti-input", choices=("features", "patterns"), default="features")
    parser.add_argument("--memory", type=int, default=6,
                        help="L-BFGS pairs of every tool (CRFsuite's default, 6)")
    args = parser.parse_args()
    args.threads = [int(t) for t in args.threads.split(",")]
    args.peers = [] if args.peers == "none" else args.peers.split(",")
    if not shutil.which(args.pdsp):
        parser.error(f"--pdsp: {args.pdsp} is not an executable (build it: cmake --preset release "
                     "&& cmake --build --preset release)")
    for peer in args.peers:
        if peer not in PEERS:
            parser.error(f"--peers: unknown peer {peer} (known: {', '.join(PEERS)}, none)")
        if not shutil.which(getattr(args, peer)):
            parser.error(f"--{peer}: {getattr(args, peer)} is not an executable (build it with "
                         f"run/build_{peer}.sh, or leave it out of --peers)")
    return args


def main():
    args = parse_args()
    chain = read_chain(args.data)
    temporary = args.work is None
    args.work = tempfile.mkdtemp(prefix="bench-chain-") if temporary else args.work
    if os.path.realpath(args.work).startswith(REPO + os.sep):
        sys.exit(f"--work {args.work}: inside the repository; use a scratch folder outside it")
    os.makedirs(args.work, exist_ok=True)
    print(f"machine: {machine_facts()}")
    print(f"command: {' '.join(sys.argv)}")
    print_parameters(chain)
    curves = []
    if "crfsuite" in args.peers:
        curves.append(run_crfsuite(args, chain))
    if "wapiti" in args.peers:
        curves.append(run_wapiti(args, chain))
    curves += [run_pdsp(args, threads) for threads in args.threads]
    print("objective: -log-likelihood + C/2 |theta|^2, C = "
          f"{args.C:g}, at most {args.max_iters} iterations; CRFsuite times its iterations "
          "with clock() (CPU seconds), pdsp and Wapiti with the wall clock (Wapiti's include "
          "its error count on the training set); CPU / wall below the thread count: the run "
          "waited for a core")
    curves = [c for c in curves if c is not None]
    print_table(curves)
    print_mismatches(curves, chain)
    if temporary:
        shutil.rmtree(args.work)


if __name__ == "__main__":
    main()
