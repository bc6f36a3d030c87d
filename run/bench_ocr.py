#!/usr/bin/env python3
"""Taskar OCR chains, pdsp side by side with CRFsuite (run it through run/bench_ocr.sh).

Converts the 626 / 6,251-word split to pdsp's format 2, trains the chain CRF objective
(--epsilon 1 --counting bethe --loss-weight 0, C = 1, exact on a chain) and CRFsuite's L-BFGS on
the same 4,030 parameters (c2 = 0.5), and prints one table: time to CRFsuite's optimum (F within
1e-6 relative), iterations, test letter error, and the ratio to CRFsuite. Then pdsp at eps = 1
with the Hamming loss (its default training), and the conversion's size and time."""
import argparse
import gzip
import os
import platform
import re
import sys

from bench_common import crfsuite_learn, run, seconds_to, train_and_predict

SOURCE = "ocr_taskar"
LETTERS = "abcdefghijklmnopqrstuvwxyz"


def write_crfsuite_files(tsv, work):
    """CRFsuite's input: one letter per line (label, pJ:1 per on pixel, bias:1), a blank line
    after each word."""
    paths = {split: os.path.join(work, f"{split}.crfsuite") for split in ("train", "test")}
    files = {split: open(path, "w") for split, path in paths.items()}
    previous = None
    with gzip.open(tsv, "rt") as source:
        for line in source:
            if line.startswith("#"):
                continue
            split, word, _, label, *pixels = line.rstrip("\n").split("\t")
            if previous is not None and previous != (split, word):
                files[previous[0]].write("\n")
            previous = (split, word)
            on = "\t".join(f"p{j}:1" for j, p in enumerate(pixels) if p == "1")
            files[split].write(f"{label}\t{on}\tbias:1\n")
    files[previous[0]].write("\n")
    for f in files.values():
        f.close()
    return paths


def crfsuite_run(crfsuite, paths, work, tight):
    model = os.path.join(work, "crf.model")
    result = crfsuite_learn(crfsuite, paths["train"], model, 0.5, os.path.join(work, "crf.log"),
                            ["epsilon=1e-9", "delta=1e-10"] if tight else [])
    tagged, _ = run([crfsuite, "tag", "-qt", "-m", model, paths["test"]])
    accuracy = re.search(r"Item accuracy: \d+ / \d+ \(([0-9.]+)\)", tagged)
    result["error"] = 100 * (1 - float(accuracy.group(1))) if accuracy else float("nan")
    return result


def pdsp_run(pdsp, mpirun, ranks, threads, data, work, name, flags):
    return train_and_predict(pdsp, mpirun, data["train"], data["test"], work, name, flags,
                             ranks, threads)


def pdsp_seconds_to(run_result, target):
    for r in run_result["iterations"]:
        after = r.get("F_after_step")
        if after is not None and after <= target:
            return r["elapsed"]
    return float("nan")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pdsp", required=True)
    parser.add_argument("--mpirun", default="mpirun")
    parser.add_argument("--datasets", required=True, help="../shared/datasets")
    parser.add_argument("--crfsuite", default="", help="the crfsuite binary (empty: pdsp alone)")
    parser.add_argument("--work", required=True)
    parser.add_argument("--flags", default="", help="more pdsp train flags, e.g. --theta-step")
    args = parser.parse_args()
    source = os.path.join(args.datasets, SOURCE)
    repo = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    data = {split: os.path.join(args.work, f"ocr-{split}.h5") for split in ("train", "test")}
    _, convert_seconds = run([sys.executable, os.path.join(repo, "datasets", "convert.py"), "ocr",
                              "--input", os.path.join(source, "ocr_taskar.mat"),
                              "--train", data["train"], "--test", data["test"]])
    megabytes = sum(os.path.getsize(p) for p in data.values()) / 1e6
    print(f"# OCR (Taskar, 626 / 6,251 words), {platform.node()}, {os.cpu_count()} cores")
    print(f"# conversion to format 2: {convert_seconds:.2f} s, train + test {megabytes:.1f} MB")

    crf = None
    if args.crfsuite:
        paths = write_crfsuite_files(os.path.join(source, "ocr_taskar_letters.tsv.gz"), args.work)
        crf = crfsuite_run(args.crfsuite, paths, args.work, tight=True)
        crf_default = crfsuite_run(args.crfsuite, paths, args.work, tight=False)
    extra = args.flags.split()
    crf_flags = ["--epsilon", "1", "--counting", "bethe", "--loss-weight", "0", "--C", "1",
                 "--max-iters", "3000", "--tol", "1e-10"] + extra
    rows = []
    for ranks, threads in [(1, 1), (1, 2), (2, 1)]:
        result = pdsp_run(args.pdsp, args.mpirun, ranks, threads, data, args.work,
                          f"crf-{ranks}x{threads}", crf_flags)
        rows.append((f"pdsp {ranks}x{threads}", result))
    optimum = min(crf["losses"]) if crf else min(r["end"]["F"] for _, r in rows)
    target = optimum * (1 + 1e-6)
    print(f"# chain CRF objective (pdsp {' '.join(crf_flags)}); optimum F* = {optimum:.6f}"
          f" ({'CRFsuite, tight stop' if crf else 'best pdsp run'}); target F <= F* (1 + 1e-6)")
    if crf:
        # CRFsuite times its iterations with clock(), the process's CPU time; pdsp's `elapsed`
        # is wall time. Equal on an idle machine; on a shared one the ratio favours CRFsuite.
        print("# s to target: CRFsuite's CPU seconds (its clock()), pdsp's wall seconds")
    print(f"{'run':<22}{'s to target':>12}{'iters':>8}{'s total':>10}{'final F':>16}"
          f"{'test err %':>12}{'ratio':>8}")
    reference = seconds_to(crf["losses"], crf["step_seconds"], target)[0] if crf else None
    if crf:
        print(f"{'crfsuite lbfgs (tight)':<22}{reference:>12.2f}{len(crf['losses']):>8}"
              f"{crf['seconds']:>10.2f}{min(crf['losses']):>16.6f}{crf['error']:>12.2f}"
              f"{1.0:>8.2f}")
        print(f"{'crfsuite lbfgs (dflt)':<22}{'':>12}{len(crf_default['losses']):>8}"
              f"{crf_default['seconds']:>10.2f}{min(crf_default['losses']):>16.6f}"
              f"{crf_default['error']:>12.2f}{'':>8}")
    for name, result in rows:
        reached = pdsp_seconds_to(result, target)
        ratio = f"{reached / reference:>8.2f}" if reference else f"{'':>8}"
        print(f"{name:<22}{reached:>12.2f}{len(result['iterations']):>8}"
              f"{result['seconds']:>10.2f}{result['end']['F']:>16.6f}{result['error']:>12.2f}"
              f"{ratio}")
    default = pdsp_run(args.pdsp, args.mpirun, 1, 2, data, args.work, "ssvm-1x2",
                       ["--epsilon", "1", "--C", "1", "--max-iters", "3000", "--tol", "1e-7"] +
                       extra)
    print(f"# eps = 1 with the Hamming loss (pdsp's default training), 1 rank x 2 threads: "
          f"{len(default['iterations'])} iterations, {default['seconds']:.2f} s, test error "
          f"{default['error']:.2f}%, stop: {default['end']['stop_reason']}")


if __name__ == "__main__":
    main()
