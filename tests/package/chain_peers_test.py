#!/usr/bin/env python3
"""run/bench_chain_peers.py without peers (--peers none, so CI needs neither CRFsuite nor
Wapiti): on a tiny generated chain it prints the table with a row per pdsp thread count, both
at the same final objective; the peers' input files carry the rows as written (Wapiti is skipped
on real values); a file that is not a chain is refused in one line.
    chain_peers_test.py --pdsp PDSP [--mpirun MPIRUN]"""
import argparse
import dataclasses
import os
import subprocess
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
SCRIPT = os.path.join(REPO, "run", "bench_chain_peers.py")
sys.path[:0] = [os.path.join(REPO, "python"), os.path.join(REPO, "run")]
import pdsp  # noqa: E402
import bench_chain_peers  # noqa: E402

STATES, DIM = 3, 6  # attribute DIM - 1 is the bias


def tiny_chain(path, rng, skip_edge=False):
    """12 chains of 2-5 tokens, binary rows of 1-3 random attributes and the bias, labels
    following the first attribute so that there is something to learn. With `skip_edge` the
    first chain's edge joins its first and third variable: not a chain."""
    examples = []
    for n in range(12):
        length = int(rng.integers(2, 6))
        rows = [sorted(set(rng.integers(0, DIM - 1, int(rng.integers(1, 4))).tolist())) +
                [DIM - 1] for _ in range(length)]
        edges = [(t, t + 1) for t in range(length - 1)]
        if skip_edge and n == 0:
            edges[0] = (0, 2) if length > 2 else (1, 0)
        examples.append(pdsp.Example(
            card=[STATES] * length, label=[row[0] % STATES for row in rows], factors=edges,
            var_type=[0] * length, var_obs=list(range(length)), factor_type=[0] * len(edges),
            obs=pdsp.SparseRows(np.cumsum([0] + [len(r) for r in rows]),
                                [j for r in rows for j in r])))
    pdsp.write_dataset(path, examples, STATES * DIM + STATES * STATES,
                       var_types=[pdsp.RegionType(0, DIM)],
                       factor_types=[pdsp.RegionType(STATES * DIM, 0)])


def run(args, *flags):
    return subprocess.run([sys.executable, SCRIPT, "--pdsp", args.pdsp, "--mpirun", args.mpirun]
                          + list(flags), capture_output=True, text=True)


def check_table(args, data, work):
    result = run(args, "--data", data, "--peers", "none", "--threads", "1,2", "--max-iters",
                 "30", "--work", work)
    assert result.returncode == 0, result.stderr
    rows = [line.split(" | ") for line in result.stdout.splitlines()
            if line.startswith("| pdsp")]
    assert [r[0] for r in rows] == ["| pdsp 1t", "| pdsp 2t"], result.stdout
    assert all(r[1] == f"{STATES * DIM + STATES * STATES}" for r in rows), result.stdout
    finals = [float(r[8]) for r in rows]
    assert abs(finals[0] - finals[1]) <= 1e-6 * finals[0], result.stdout
    assert "machine: " in result.stdout and "target objective F <= " in result.stdout


def check_peer_inputs(data, work):
    """The rows as CRFsuite's and Wapiti's tokens, and the pattern mode's padding."""
    chain = bench_chain_peers.read_chain(data)
    paths = {name: os.path.join(work, name) for name in ("crf", "raw", "cols", "pat")}
    bench_chain_peers.write_crfsuite(chain, paths["crf"])
    bench_chain_peers.write_wapiti_features(chain, paths["raw"])
    padding = bench_chain_peers.write_wapiti_columns(chain, paths["cols"], paths["pat"])
    first = slice(chain.row_ptr[0], chain.row_ptr[1])
    crf = open(paths["crf"]).read().split("\n")
    assert crf[0] == "\t".join([f"y{chain.labels[0]}"] +
                               [f"a{j}" for j in chain.index[first]]), crf[0]
    raw = open(paths["raw"]).read().split("\n")
    assert raw[0] == " ".join([f"u{j}" for j in chain.index[first]] +
                              ["b", f"y{chain.labels[0]}"]), raw[0]
    # One blank line after each chain, in every format.
    assert crf.count("") - 1 == raw.count("") - 1 == len(chain.var_offset) - 1
    patterns = open(paths["pat"]).read().split()
    assert patterns[-1] == "B" and all(p.startswith("U:%x[0,") for p in patterns[:-1])
    assert padding == chain.labels_used()  # the rows are ragged: one `u:_` per label
    # Real values: CRFsuite's attributes carry them; Wapiti (binary features) is skipped.
    real = dataclasses.replace(chain, value=np.full(len(chain.index), 0.5))
    bench_chain_peers.write_crfsuite(real, paths["crf"])
    assert open(paths["crf"]).readline().split("\t")[1] == f"a{chain.index[0]}:0.5"
    assert bench_chain_peers.run_wapiti(None, real) is None


def check_refusal(args, work, rng):
    bad = os.path.join(work, "not-a-chain.h5")
    tiny_chain(bad, rng, skip_edge=True)
    result = run(args, "--data", bad, "--peers", "none", "--work", work)
    assert result.returncode != 0
    assert result.stderr.count("\n") == 1, result.stderr
    assert result.stderr.startswith(f"{bad}: not a pdsp chain data set: "), result.stderr


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pdsp", required=True)
    parser.add_argument("--mpirun", default="mpirun")
    args = parser.parse_args()
    rng = np.random.default_rng(7)
    with tempfile.TemporaryDirectory() as work:
        data = os.path.join(work, "chain.h5")
        tiny_chain(data, rng)
        check_table(args, data, work)
        check_peer_inputs(data, work)
        check_refusal(args, work, rng)
    print("chain_peers_test: ok")


if __name__ == "__main__":
    main()
