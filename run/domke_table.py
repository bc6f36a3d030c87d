#!/usr/bin/env python3
"""Domke's Table 1 (NIPS 2013): the univariate test error of every pair of function classes,
unary by pairwise (zero, constant, linear, trees, mlp), trained by Domke's alternation
(`pdsp train --learner domke`, eps 0.1, no loss augmentation) and predicted on the test set.
Prints the test errors beside the paper's, then the training seconds and outer iterations.

Data: --dataset synthetic generates Domke's denoising (`pdsp gen domke`, 16 + 16 images of
100x100) into --work unless --train and --test name files; --dataset horses needs --train and
--test (datasets/convert.py segmentation ... --features domke).

  /usr/bin/python3 run/domke_table.py --pdsp build/release/pdsp --work /tmp/domke --iters 20
"""
import argparse
import concurrent.futures
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_common import run, train_and_predict  # noqa: E402

CLASSES = ["zero", "constant", "linear", "trees", "mlp"]
# Table 1 of the paper (test error, unary class by row, pairwise class by column).
PAPER = {
    "synthetic": [[.502, .502, .502, .511, .502], [.502, .502, .502, .510, .502],
                  [.444, .077, .059, .049, .034], [.444, .034, .015, .009, .007],
                  [.445, .032, .015, .009, .008]],
    "horses": [[.246, .246, .247, .244, .245], [.246, .246, .247, .244, .245],
               [.185, .185, .168, .154, .156], [.103, .098, .092, .084, .086],
               [.096, .094, .087, .080, .081]],
}


def machine():
    cpu = next((line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo")
                if line.startswith("model name")), "unknown CPU")
    memory = next(int(line.split()[1]) for line in open("/proc/meminfo")
                  if line.startswith("MemTotal")) / 2**20
    return f"{os.cpu_count()} cores, {memory:.1f} GiB, {cpu}"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pdsp", default="build/release/pdsp")
    parser.add_argument("--mpirun", default="mpirun")
    parser.add_argument("--dataset", choices=sorted(PAPER), default="synthetic")
    parser.add_argument("--train")
    parser.add_argument("--test")
    parser.add_argument("--work", required=True, help="directory for data, models and metrics")
    parser.add_argument("--iters", type=int, default=20, help="outer iterations (--max-iters)")
    parser.add_argument("--fit-iters", type=int, default=20)
    parser.add_argument("--hidden", type=int, default=16)
    parser.add_argument("--jobs", type=int, default=2, help="cells trained at once, 1 thread each")
    parser.add_argument("--unary", default=",".join(CLASSES), help="rows to run")
    parser.add_argument("--pairwise", default=",".join(CLASSES), help="columns to run")
    args = parser.parse_args()
    os.makedirs(args.work, exist_ok=True)
    train, test = args.train, args.test
    if args.dataset == "synthetic" and not (train and test):
        train, test = (os.path.join(args.work, f"domke-{part}.h5") for part in ("train", "test"))
        if not (os.path.exists(train) and os.path.exists(test)):
            run([args.pdsp, "gen", "domke", "--train", train, "--test", test])
    if not (train and test):
        sys.exit("--dataset horses needs --train and --test")

    cells = [(u, p) for u in args.unary.split(",") for p in args.pairwise.split(",")]
    for name in {c for cell in cells for c in cell} - set(CLASSES):
        sys.exit(f"{name}: not a function class ({', '.join(CLASSES)})")

    def train_cell(cell):
        unary, pairwise = cell
        flags = ["--learner", "domke", "--epsilon", "0.1", "--loss-weight", "0", "--tol", "0",
                 "--max-iters", str(args.iters), "--fit-iters", str(args.fit_iters),
                 "--unary-model", unary, "--pairwise-model", pairwise,
                 "--hidden", str(args.hidden)]
        return cell, train_and_predict(args.pdsp, args.mpirun, train, test, args.work,
                                       f"{args.dataset}-{unary}-{pairwise}", flags)

    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        results = dict(pool.map(train_cell, cells))

    rows = [u for u in CLASSES if u in args.unary.split(",")]
    columns = [p for p in CLASSES if p in args.pairwise.split(",")]
    print(f"# machine: {machine()}; {args.jobs} cell(s) at a time, 1 rank x 1 thread each")
    print(f"# {args.dataset}: {train} / {test}; --learner domke --epsilon 0.1 --loss-weight 0 "
          f"--max-iters {args.iters} --fit-iters {args.fit_iters} --hidden {args.hidden}")
    print("\ntest error % (Domke's Table 1 in brackets), unary by row, pairwise by column\n")
    print("| unary \\ pairwise | " + " | ".join(columns) + " |")
    print("|---" * (len(columns) + 1) + "|")
    for u in rows:
        cells_text = []
        for p in columns:
            paper = PAPER[args.dataset][CLASSES.index(u)][CLASSES.index(p)]
            cells_text.append(f"{results[(u, p)]['error']:.2f} ({100 * paper:.1f})")
        print(f"| {u} | " + " | ".join(cells_text) + " |")
    print("\ntraining seconds / outer iterations\n")
    print("| unary \\ pairwise | " + " | ".join(columns) + " |")
    print("|---" * (len(columns) + 1) + "|")
    for u in rows:
        cells_text = [f"{results[(u, p)]['seconds']:.0f} / {len(results[(u, p)]['iterations'])}"
                      for p in columns]
        print(f"| {u} | " + " | ".join(cells_text) + " |")


if __name__ == "__main__":
    main()
