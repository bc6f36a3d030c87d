#!/usr/bin/env python3
"""Non-local energies (Vilnis et al., AISTATS 2015) on OCR and citations, as a user runs them:
convert, `pdsp train` (theta, then psi), `pdsp predict` (Bethe-RDA, MAP). Prints two tables:

- quality: OCR letter error for the chain, the unigram dictionary term L^u, the per-position
  term L^w and both; citations segment F1 (B and I states per tag, `convert.py citations
  --bio`) for the chain and with the learned count constraints; with the learned weights, training and prediction seconds and the oracle calls;
- oracle calls: the same models predicted with --rda-iters 0, 1, 2, 5, 10 and 20.

  /usr/bin/python3 run/nonlocal_benchmark.py --work /tmp/nonlocal --threads 2 [--data ocr]

The data come from ../shared/datasets (ocr_taskar, umass_citation).
"""
import argparse
import os
import re
import sys

import h5py
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(ROOT, "python"))
from bench_common import run  # noqa: E402
from benchmarks_public import segment_f1  # noqa: E402
from domke_table import machine  # noqa: E402
from pdsp import read_model, read_predictions  # noqa: E402

SHARED = os.path.join(ROOT, "..", "shared", "datasets")
CONVERT = [sys.executable, os.path.join(ROOT, "datasets", "convert.py")]
RDA_ITERS = (0, 1, 2, 5, 10, 20)
DEFAULT_RDA_ITERS = 10  # pdsp predict's --rda-iters


def labels_by_example(path, labels):
    with h5py.File(path, "r") as file:
        offset = file["examples/var_offset"][()]
        truth = file["vars/label"][()]
    split = lambda values: [values[a:b] for a, b in zip(offset[:-1], offset[1:])]  # noqa: E731
    return split(np.asarray(labels)), split(truth)


def quality(test, prediction, measure):
    """Letter error % or segment F1 % of a prediction file."""
    predicted, truth = labels_by_example(test, read_predictions(prediction).label)
    if measure == "error":
        wrong = sum(int((p != t).sum()) for p, t in zip(predicted, truth))
        return 100.0 * wrong / sum(len(t) for t in truth)
    return 100.0 * segment_f1(predicted, truth, bio=True)


def predict(args, model, test, out, rda_iters=None):
    """(seconds, oracle calls per example) of one pdsp predict."""
    command = [args.pdsp, "predict", "--data", test, "--model", model, "--out", out,
               "--threads", str(args.threads)]
    if rda_iters is not None:
        command += ["--rda-iters", str(rda_iters)]
    stdout, seconds = run(command)
    calls = re.search(r"(\d+) marginal inference calls", stdout)
    return seconds, int(calls.group(1)) if calls else 0


def task(args, name, files, train_flags, measure):
    """Train one model on files (train, test[, dev]); the rows of both tables."""
    model = os.path.join(args.work, f"{name}.h5")
    command = [args.pdsp, "train", "--data", files[0], "--out", model, "--quiet",
               "--threads", str(args.threads)] + train_flags
    if len(files) == 3:
        command += ["--dev-data", files[2]]
    _, train_seconds = run(command)
    out = os.path.join(args.work, f"{name}-pred.h5")
    seconds, calls = predict(args, model, files[1], out)
    value = quality(files[1], out, measure)
    psi = read_model(model).psi
    sweep = {}
    if psi is not None:
        for iters in RDA_ITERS:
            if iters == DEFAULT_RDA_ITERS:  # the prediction above
                sweep[iters] = value
                continue
            swept = os.path.join(args.work, f"{name}-rda{iters}.h5")
            predict(args, model, files[1], swept, iters)
            sweep[iters] = quality(files[1], swept, measure)
    return {"name": name, "quality": value, "train": train_seconds, "predict": seconds,
            "calls": calls, "psi": psi, "sweep": sweep}


def convert(args, name, fmt, inputs, extra, dev=False):
    paths = [os.path.join(args.work, f"{name}-{split}.h5") for split in ("train", "test", "dev")]
    command = CONVERT + [fmt, "--input", *inputs, "--train", paths[0], "--test", paths[1]]
    if dev:
        command += ["--dev", paths[2]]
    run(command + extra)
    return paths if dev else paths[:2]


def psi_text(psi):
    if psi is None:
        return "-"
    if len(psi) == 2:
        return f"psi_u {psi[0]:.3g}, psi_w {psi[1]:.3g}"
    return f"{int((psi[:-2] > 0).sum())} of {len(psi) - 2} templates > 0"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pdsp", default=os.path.join(ROOT, "build", "release", "pdsp"))
    parser.add_argument("--work", required=True, help="directory for data, models, predictions")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--citations-C", default="0.03", help="--C of the citation chain")
    parser.add_argument("--data", default="ocr,citations", help="which of ocr,citations to run")
    args = parser.parse_args()
    os.makedirs(args.work, exist_ok=True)
    ocr = [os.path.join(SHARED, "ocr_taskar", "ocr_taskar_letters.tsv.gz")]
    citations = [os.path.join(SHARED, "umass_citation", f"{name}.docs")
                 for name in ("training", "testing", "dev")]
    rows = []
    for kind in ("none", "unigram", "position", "both") if "ocr" in args.data else ():
        extra = [] if kind == "none" else ["--dictionary", kind]
        files = convert(args, f"ocr-{kind}", "ocr", ocr, extra)
        label = {"none": "chain", "unigram": "+ L^u", "position": "+ L^w",
                 "both": "+ L^u + L^w"}[kind]
        rows.append(("OCR", label, "letter error %",
                     task(args, f"ocr-{kind}", files, [], "error")))
    if "citations" in args.data:
        files = convert(args, "citations", "citations", citations, ["--bio", "--constraints"],
                        dev=True)
        result = task(args, "citations", files, ["--C", args.citations_C], "f1")
        chain = {"quality": result["sweep"][0], "train": float("nan"), "predict": float("nan"),
                 "calls": 0, "psi": None, "sweep": {}}
        rows += [("citations", "chain (the same theta, --rda-iters 0)", "segment F1 %", chain),
                 ("citations", "+ learned constraints", "segment F1 %", result)]

    print(f"# machine: {machine()}; 1 rank x {args.threads} thread(s), one run at a time")
    print(f"# pdsp train defaults (OCR), --C {args.citations_C} (citations); psi learned on the "
          f"training set (OCR) or --dev-data (citations); predict --rda-iters 10")
    print("\n| data | model | measure | value | psi | train s | predict s | oracle calls |")
    print("|---|---|---|---|---|---|---|---|")
    for data, label, measure, r in rows:
        print(f"| {data} | {label} | {measure} | {r['quality']:.2f} | {psi_text(r['psi'])} | "
              f"{r['train']:.1f} | {r['predict']:.1f} | {r['calls']} |")
    print("\n| data | model | " + " | ".join(f"--rda-iters {i}" for i in RDA_ITERS) + " |")
    print("|---|---|" + "---|" * len(RDA_ITERS))
    for data, label, measure, r in rows:
        if r["sweep"]:
            print(f"| {data} | {label} | " +
                  " | ".join(f"{r['sweep'][i]:.2f}" for i in RDA_ITERS) + " |")


if __name__ == "__main__":
    main()
