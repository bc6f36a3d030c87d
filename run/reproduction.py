#!/usr/bin/python3
"""Reproduces the experiments of Hazan & Urtasun (NIPS 2010), section 5, with pdsp.

  reproduction.py epsilon    # 32x32, bit flips p=0.2, 3 shared parameters, trained on I1, I2 and
                             # tested on I3, I4; eps in {1, 0.1, 0.01, 0.001, 0}: gap, errors
  reproduction.py parameters # 5x5: per-site parameters against 3 shared ones
  reproduction.py denoising  # 4 base images x {gaussian, bimodal}: pdsp per-site and the baselines;
                             # saved run by run, a rerun measures only the missing runs
  reproduction.py denoising-fresh  # the same, measuring every run again
  reproduction.py denoising-baselines NAME... [--settings=KEY,...]
                             # the named baselines (e.g. MF-SGD MF-BFGS) measured again on every
                             # measured setting, or on those named (e.g. bimodal-I1) in that
                             # order; the rest kept
  reproduction.py report     # figures and docs/reproduction.md from the results of the above

Each experiment writes its results as JSON to docs/reproduction-results/, which is committed: the
report reads them back, so the experiments can be rerun one at a time, in different sessions. The
data, models, predictions and metrics behind them go to out/reproduction/, which is not; a figure
whose inputs are not there is kept as it is. Uses Debian's python3 with h5py and matplotlib.
"""
import json
import os
import re
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# $PDSP names another binary, e.g. a copy that a long run keeps while the checkout is rebuilt.
PDSP = os.environ.get("PDSP") or os.path.join(ROOT, "build", "release", "pdsp")
OUT = os.path.join(ROOT, "out", "reproduction")
DOCS = os.path.join(ROOT, "docs")
RESULTS = os.path.join(DOCS, "reproduction-results")
FIGURES = os.path.join(DOCS, "figures")
MPIRUN = ["mpirun", "--oversubscribe", "--bind-to", "none", "-np", "2"]
THREADS = ["--threads", "1"]

# The baselines' unary features per noise model: 0 = linear in the pixel value, K = K bins.
UNARY_BINS = {"gaussian": 0, "bimodal": 10}
# The baselines' sweep cap per evaluation and start, by inference. Loopy BP: 200 (then up to 200
# damped ones). Mean field: 1000, since with 200 it had not converged at 19-20 of the 20 trials
# of MF-BFGS's last search on bimodal I1 and I3 and the search stopped there; with 1000, bimodal
# I1 went from 5.9% to 0.63% test error (docs/benchmarks.md, eleventh session).
INFERENCE_SWEEPS = {"lbp": 200, "mf": 1000}

# Hazan & Urtasun, Figure 2 (test error in %, Gaussian then bimodal noise, images I1..I4).
PAPER_DENOISING = {
    "LBP-SGD": [2.7344, 2.4707, 3.2275, 2.3193, 5.2905, 4.4751, 6.8164, 7.2510],
    "LBP-BFGS": [2.7417, 2.4194, 3.1299, 2.4023, 5.2148, 4.3994, 6.0278, 6.6211],
    "MF-SGD": [3.0469, 3.0762, 4.1382, 2.9053, 10.0488, 41.0718, 29.6338, 53.6035],
    "MF-BFGS": [3.0005, 2.7783, 3.6157, 2.4780, 5.2661, 4.6167, 6.4624, 7.2510],
    "Ours": [0.0488, 0.0073, 0.1294, 0.1318, 0.0537, 0.0244, 0.1221, 0.9277],
}
# The denoising study's settings, in the order of the paper's Figure 2.
DENOISING_SETTINGS = [f"{n}-I{i}" for n in ["gaussian", "bimodal"] for i in range(1, 5)]
BASELINES = {"LBP-SGD": "lbp-sgd", "LBP-BFGS": "lbp-lbfgs", "MF-SGD": "mf-sgd", "MF-BFGS": "mf-lbfgs"}


def run(command, mpi=True):
    """Runs a pdsp command (on 2 ranks unless mpi=False); returns (stdout, seconds)."""
    env = dict(os.environ, OMP_WAIT_POLICY="passive")
    if os.geteuid() == 0:
        env.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    full = (MPIRUN if mpi else []) + [PDSP] + command
    start = time.monotonic()
    done = subprocess.run(full, capture_output=True, text=True, env=env)
    seconds = time.monotonic() - start
    if done.returncode != 0:
        sys.exit("command failed: %s\n%s%s" % (" ".join(full), done.stdout, done.stderr))
    return done.stdout, seconds


def errors_of(predict_output):
    """(wrong, total) from pdsp predict's per-variable error line."""
    m = re.search(r"\((\d+) of (\d+) (?:labelled )?variables\)", predict_output)
    return int(m.group(1)), int(m.group(2))


def last_metrics(path):
    rows = [json.loads(line) for line in open(path)]
    return [r for r in rows if r["type"] == "iteration"]


def generate(name, **flags):
    args = ["gen", "denoise", "--train", f"{OUT}/{name}-train.h5", "--test", f"{OUT}/{name}-test.h5"]
    for key, value in flags.items():
        args += ["--" + key.replace("_", "-"), str(value)]
    run(args, mpi=False)
    return f"{OUT}/{name}-train.h5", f"{OUT}/{name}-test.h5"


def save(name, results):
    with open(f"{RESULTS}/{name}.json", "w") as f:
        json.dump(results, f, indent=1)
        f.write("\n")


# The epsilon study: 3 shared parameters trained on base images I1 and I2 and tested on I3 and
# I4, so that nothing is memorised; 100 test images of 32 x 32 (102,400 pixels: a binomial
# standard error below 0.1 points at the error rates seen).
EPSILONS = ["1", "0.1", "0.01", "0.001", "0"]


def epsilon_study():
    train, _ = generate("eps-train", height=32, width=32, images="1,2", train_copies=10,
                        test_copies=1, noise="flip", flip=0.2, params="shared", seed=11)
    _, test = generate("eps-test", height=32, width=32, images="3,4", train_copies=1,
                       test_copies=50, noise="flip", flip=0.2, params="shared", seed=13)
    results = {"epsilons": EPSILONS, "runs": {}}
    for eps in EPSILONS:
        model = f"{OUT}/eps-{eps}.h5"
        # At eps = 0 ten sweeps per iteration keep the certificate's bounds tight (docs/guide.md).
        sweeps = ["--sweeps", "10"] if eps == "0" else []
        out, seconds = run(["train", "--data", train, "--out", model, "--epsilon", eps,
                            "--max-iters", "2000", "--tol", "1e-9", "--max-seconds", "300",
                            "--metrics", f"{OUT}/eps-{eps}.jsonl"] + sweeps + THREADS)
        rows = [json.loads(line) for line in open(f"{OUT}/eps-{eps}.jsonl")]
        last = [r for r in rows if r["type"] == "iteration"][-1]
        end = next(r for r in rows if r["type"] == "end")
        p, _ = run(["predict", "--data", test, "--model", model, "--out", f"{OUT}/eps-pred.h5"]
                   + THREADS)
        wrong, pixels = errors_of(p)
        # The same model decoded at eps = 0 (the MAP labelling of the local polytope): separates
        # what training at eps changes from what decoding at eps changes.
        p, _ = run(["predict", "--data", test, "--model", model, "--out", f"{OUT}/eps-pred.h5",
                    "--epsilon", "0"] + THREADS)
        wrong_map, _ = errors_of(p)
        results["runs"][eps] = {"seconds": seconds, "iterations": last["iteration"],
                                "F": last["F"], "D": last["D"], "gap": last["gap"],
                                "relative_gap": last["gap"] / abs(last["F"]),
                                "gap_certified": last.get("gap_certified", False),
                                "stop": end["stop_reason"], "errors": wrong,
                                "errors_map_decoding": wrong_map, "pixels": pixels}
        print(f"eps {eps}: {seconds:.2f} s, {last['iteration']} iterations, gap "
              f"{last['gap']:.3g}, {wrong} of {pixels} test pixels wrong ({wrong_map} decoded "
              "at eps = 0)")
    save("epsilon", results)


def parameter_study():
    results = {}
    for params in ["per-site", "shared"]:
        train, test = generate(f"params-{params}", height=5, width=5, images=1, train_copies=10,
                               test_copies=10, noise="flip", flip=0.2, params=params, seed=21)
        model = f"{OUT}/params-{params}.h5"
        run(["train", "--data", train, "--out", model, "--max-iters", "2000", "--tol", "1e-10"] + THREADS)
        p, _ = run(["predict", "--data", test, "--model", model, "--out", f"{OUT}/params-pred.h5"] + THREADS)
        wrong, total = errors_of(p)
        count = int(subprocess.run(["h5dump", "-a", "/num_params", train], capture_output=True,
                                   text=True).stdout.split("(0):")[1].split()[0])
        results[params] = {"errors": wrong, "pixels": total, "parameters": count}
        print(f"{params}: {count} parameters, {wrong} of {total} test pixels wrong")
    save("parameters", results)


def build_identity():
    """pdsp's version line: results measured by another build are measured again."""
    return subprocess.run([PDSP, "--version"], capture_output=True, text=True).stdout.strip()


def end_record(path):
    return next(r for r in map(json.loads, open(path)) if r["type"] == "end")


def baseline_run(key, learner, shared):
    """Trains and tests one likelihood baseline; its measures, including what issue 17's
    targets ask (accepted iterates with a negative NLL, unconverged examples)."""
    iterations = "10" if learner.endswith("sgd") else "30"
    sweeps = str(INFERENCE_SWEEPS[learner.split("-")[0]])
    model, metrics = f"{OUT}/den-{key}-{learner}.h5", f"{OUT}/den-{key}-{learner}.jsonl"
    _, seconds = run(["train", "--data", shared[0], "--out", model, "--learner", learner,
                      "--max-iters", iterations, "--inference-sweeps", sweeps,
                      "--inference-tol", "1e-6", "--metrics", metrics] + THREADS)
    p, _ = run(["predict", "--data", shared[1], "--model", model, "--out", f"{OUT}/den-pred.h5",
                "--max-sweeps", sweeps, "--tol", "1e-6"] + THREADS)
    wrong, total = errors_of(p)
    return {"build": build_identity(), "error": 100.0 * wrong / total, "seconds": seconds,
            **run_summary(metrics)}


def run_summary(metrics):
    """How a baseline run ended, from its metrics: the iterations its model counts, the stop
    reason, its accepted iterates with a negative NLL on some example (an SGD epoch it undid is
    recorded after the last accepted one) and the examples whose inference did not converge,
    summed over its records."""
    rows, end = last_metrics(metrics), end_record(metrics)
    accepted = [r for r in rows if r["iteration"] <= end["iterations"]]
    return {"iterations": end["iterations"], "stop": end["stop_reason"],
            "negative_nll_iterates": sum(1 for r in accepted
                                         if (r.get("negative_nll_examples") or 0) > 0),
            "unconverged_examples": sum(r.get("unconverged_examples") or 0 for r in rows)}


def shared_data(noise, image):
    """The baselines' data: the per-site study's images (same seed, same noise) with shared
    weights: a weight and a bias on the pixel value (Gaussian noise, where the class log-odds are
    linear in it), or one weight per tenth of [0, 1] (bimodal noise, where class 0's values lie
    on both sides of class 1's); and the Ising edge weight."""
    return generate(f"den-shared-{noise}-I{image}", height=64, width=64, images=image,
                    train_copies=40, test_copies=10, noise=noise, sigma=0.3, params="shared",
                    seed=100 + image, unary_bins=UNARY_BINS[noise])


def denoising_baselines(args):
    """Measures the named baselines again on every setting the study has measured (or on the
    settings named by `--settings KEY,...`, in that order), keeping the rest; each baseline's
    entry records the build that measured it."""
    names = [a for a in args if not a.startswith("--settings")]
    results = measured("denoising") or {}
    chosen = [a.split("=", 1)[1].split(",") for a in args if a.startswith("--settings=")]
    keys = chosen[0] if chosen else list(results)
    if not names or any(n not in BASELINES for n in names):
        sys.exit("name the baselines to measure again, of: " + " ".join(BASELINES))
    if any(k not in results for k in keys):
        sys.exit("--settings: measured settings are " + ",".join(results))
    for key in keys:
        noise, image = key.split("-I")
        shared = shared_data(noise, int(image))
        for name in names:
            results[key][name] = baseline_run(key, BASELINES[name], shared)
            save("denoising", results)
            print(key, name, "%.3f%% (%.0f s)" % (results[key][name]["error"],
                                                  results[key][name]["seconds"]), flush=True)


def denoising_study(fresh=False):
    """Per base image and noise model, pdsp's per-site model and the four baselines, each saved
    as soon as it is measured with the build that measured it: a rerun measures only the runs
    that are missing (the whole study takes hours on 2 cores), unless `fresh`."""
    results = {} if fresh else measured("denoising") or {}
    for noise in ["gaussian", "bimodal"]:
        for image in [1, 2, 3, 4]:
            key = f"{noise}-I{image}"
            entry = results.setdefault(key, {})
            if "ours" not in entry:
                entry["ours"] = per_site_run(key, noise, image)
                save("denoising", results)
            missing = [name for name in BASELINES if name not in entry]
            shared = shared_data(noise, image) if missing else None
            for name in missing:
                entry[name] = baseline_run(key, BASELINES[name], shared)
                save("denoising", results)
            print(key, " ".join("%s %.3f%% (%.0f s)" % (n, entry[n]["error"], entry[n]["seconds"])
                                for n in ["ours"] + list(BASELINES)), flush=True)


def per_site_run(key, noise, image):
    """Trains and tests pdsp's per-site model on one setting; its metrics and predictions stay in
    out/reproduction for the figures."""
    per_site = generate(f"den-{key}", height=64, width=64, images=image, train_copies=40,
                        test_copies=10, noise=noise, sigma=0.3, params="per-site", seed=100 + image)
    model = f"{OUT}/den-{key}.h5"
    _, seconds = run(["train", "--data", per_site[0], "--out", model, "--max-iters", "200",
                      "--tol", "1e-7", "--metrics", f"{OUT}/den-{key}.jsonl"] + THREADS)
    p, _ = run(["predict", "--data", per_site[1], "--model", model,
                "--out", f"{OUT}/den-{key}-pred.h5"] + THREADS)
    wrong, total = errors_of(p)
    return {"build": build_identity(), "error": 100.0 * wrong / total, "seconds": seconds}


def epsilon_figure(eps, plt):
    """Test error and relative gap per eps (eps = 0 drawn at the left end)."""
    labels = eps["epsilons"]
    runs = [eps["runs"][e] for e in labels]
    fig, axes = plt.subplots(1, 2, figsize=(9, 3.4))
    axes[0].bar(labels, [100 * r["errors"] / r["pixels"] for r in runs])
    axes[0].set_ylabel("test error (%)")
    axes[1].bar(labels, [max(r["relative_gap"], 1e-16) for r in runs])
    axes[1].set_yscale("log")
    axes[1].set_ylabel("relative gap (F - D) / |F|")
    for ax in axes:
        ax.set_xlabel("epsilon")
    fig.tight_layout()
    fig.savefig(f"{FIGURES}/epsilon.png", dpi=110)
    plt.close(fig)


def figures():
    """Draws each figure whose inputs are all in out/reproduction; the others are kept as the
    run that had them drew them (the report says which)."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    os.makedirs(FIGURES, exist_ok=True)
    eps = measured("epsilon")
    if eps is not None:
        epsilon_figure(eps, plt)
    keys = DENOISING_SETTINGS
    drawn = {"convergence.png": (convergence_figure, [f"{OUT}/den-{n}-I1.jsonl"
                                                      for n in ["gaussian", "bimodal"]]),
             "denoising.png": (denoising_figure, [f"{OUT}/den-{k}-{part}.h5" for k in keys
                                                  for part in ["test", "pred"]])}
    for name, (draw, inputs) in drawn.items():
        if all(os.path.exists(i) for i in inputs):
            draw(plt)
        else:
            print(f"kept docs/figures/{name}: its inputs are not all in out/reproduction")


def convergence_figure(plt):
    """The paper's Figure 4: primal and dual objectives per iteration, image I1, both noises."""
    fig, axes = plt.subplots(1, 2, figsize=(10, 3.6))
    for ax, noise in zip(axes, ["gaussian", "bimodal"]):
        rows = last_metrics(f"{OUT}/den-{noise}-I1.jsonl")
        it = [r["iteration"] for r in rows]
        ax.plot(it, [r["F"] for r in rows], label="primal F")
        ax.plot(it, [r["D"] for r in rows], label="dual D")
        top = rows[0]["F"]
        ax.set_ylim(min(r["F"] for r in rows) - 0.02 * abs(top), top)
        ax.set_title(f"I1, {noise} noise")
        ax.set_xlabel("outer iteration")
        ax.legend()
    fig.tight_layout()
    fig.savefig(f"{FIGURES}/convergence.png", dpi=110)
    plt.close(fig)


def denoising_figure(plt):
    """The paper's Figure 3: noisy input, truth and prediction of each setting's first test
    image."""
    import h5py
    import numpy as np

    fig, axes = plt.subplots(4, 6, figsize=(9, 6.4))
    for col, noise in enumerate(["gaussian", "bimodal"]):
        for image in range(1, 5):
            key = f"{noise}-I{image}"
            with h5py.File(f"{OUT}/den-{key}-test.h5", "r") as f:
                ptr = f["/vars/feat_ptr"][:]
                value = f["/vars/feat_value"][:]
                truth = f["/vars/label"][:4096]
                # The observation is the first feature of each pixel's state-1 row.
                noisy = np.array([value[ptr[2 * i + 1]] for i in range(4096)])
            with h5py.File(f"{OUT}/den-{key}-pred.h5", "r") as f:
                predicted = f["/prediction/label"][:4096]
            for k, (picture, title) in enumerate([(noisy, "noisy"), (truth, "truth"), (predicted, "ours")]):
                ax = axes[image - 1][3 * col + k]
                ax.imshow(picture.reshape(64, 64), cmap="gray")
                ax.set_xticks([])
                ax.set_yticks([])
                if image == 1:
                    ax.set_title(f"{noise}: {title}", fontsize=9)
    fig.tight_layout()
    fig.savefig(f"{FIGURES}/denoising.png", dpi=110)
    plt.close(fig)


def measured(name):
    """An experiment's saved results, or None when it has not been run."""
    path = f"{RESULTS}/{name}.json"
    return json.load(open(path)) if os.path.exists(path) else None


NOT_MEASURED = "Not measured yet: run `python3 run/reproduction.py %s` and the report again.\n"


def report():
    figures()
    eps = measured("epsilon")
    params = measured("parameters")
    den = measured("denoising") or {}
    keys = DENOISING_SETTINGS
    lines = []
    add = lines.append
    add("# Reproduction of Hazan & Urtasun (NIPS 2010), section 5\n")
    add("Produced by `run/reproduction.py` (every experiment and this page: `bash "
        "run/reproduce_all.sh`); every number below was measured by it, the denoising study "
        "setting by setting (the builds are named there). Machine: " + machine() + ". " +
        elapsed() + "\n")
    add("## 1. The role of epsilon (32x32, bits flipped with p = 0.2, 3 shared parameters)\n")
    add("Trained on 10 noisy copies each of base images I1 and I2, tested on 50 copies each of I3 "
        "and I4 (102,400 pixels), so neither per-site parameters nor a shared base image can be "
        "memorised; C = 1, L-BFGS on theta, `--tol 1e-9`, at most 2,000 iterations or 300 s; at "
        "eps = 0 ten sweeps per iteration. The gap is the last iteration's F - D, certified (D "
        "at the beliefs made consistent, a lower bound of the optimum at any messages; at eps = 0 "
        "F is at the smoothing temperature and D the eps = 0 dual) where the column says so. "
        "Test error decoded at the training eps (max-marginals of the beliefs at eps = 1), and "
        "the same model decoded at eps = 0 (the MAP labelling).\n")
    if eps is None:
        add(NOT_MEASURED % "epsilon")
    else:
        add("| eps | seconds | iterations | gap F - D | relative gap | certified | test error % "
            "| decoded at eps = 0 % | stop |")
        add("|---|---|---|---|---|---|---|---|---|")
    for e in eps["epsilons"] if eps else []:
        r = eps["runs"][e]
        map_error = ("%.2f" % (100 * r["errors_map_decoding"] / r["pixels"])
                     if "errors_map_decoding" in r else "-")
        add(f"| {e} | {r['seconds']:.2f} | {r['iterations']} | {r['gap']:.3g} | "
            f"{r['relative_gap']:.2g} | {'yes' if r.get('gap_certified') else 'no'} | "
            f"{100 * r['errors'] / r['pixels']:.2f} | {map_error} | {r['stop']} |")
    add("\nThe paper (10x10, per-site parameters, one base image for training and test) reports "
        "2 test errors for eps = 1, 0.5 and 0.01 and 109 for eps = 0, and a final gap of 1e-5 for "
        "eps > 0 and 1.3 for eps = 0.\n")
    if eps is not None:
        add("![epsilon](figures/epsilon.png)\n")
    add("\n## 2. Many parameters against shared ones (5x5, 10 training images, p = 0.2)\n")
    if params is None:
        add(NOT_MEASURED % "parameters")
    else:
        add("| model | parameters | test errors (of %d pixels) | paper |" % params["per-site"]["pixels"])
        add("|---|---|---|---|")
        add(f"| per-site | {params['per-site']['parameters']} | {params['per-site']['errors']} | about 300 parameters: 2 errors |")
        add(f"| shared | {params['shared']['parameters']} | {params['shared']['errors']} | 4 parameters: 16 errors |")
    add("\n## 3. Denoising of the four 64x64 base images (40 training, 10 test images each)\n")
    add("Test error in %%. Rows marked *paper* are Hazan & Urtasun's Figure 2; the other rows were "
        "measured here on pdsp's built-in base images I1..I4 (the original Kumar & Hebert images "
        "are not public). Ours: per-site parameters (16,256), eps = 1, p = 2, C = 1. Baselines: "
        "shared parameters (Gaussian: a weight and a bias on the pixel value; bimodal: a weight "
        "for each of %d bins of the value, `pdsp gen denoise --unary-bins`; and the edge "
        "weight), the conditional likelihood per variable with loopy BP or mean "
        "field inside SGD (10 epochs) or L-BFGS (at most 30 iterations, strong Wolfe search, no "
        "step longer than 1 or twice the longest accepted one; an iteration that decreased L by less "
        "than the tolerance evaluates its point again with the annealed start on every image and "
        "goes on along -g, from the raised value if that raised L, or after an L-BFGS step); "
        "inference in each evaluation runs to a change below 1e-6 (loopy BP: 200 sweeps, then up "
        "to 200 damped ones while none of prediction's starts has converged; mean field: 1000 "
        "sweeps; on these grids both sweep each image by colour classes, checkerboard, with "
        "vectorised updates, and a start whose sweep and state come within 1e-4 of a fixed point "
        "that an earlier one of prediction's starts found is moved onto it); every point training keeps (each accepted L-BFGS step, each SGD epoch's end) is "
        "evaluated from the last accepted iterate's messages, "
        "from zero messages, from one start pulled towards each state and from one pulled towards "
        "each pixel's own best state, keeping the fixed point with the largest log Z; where the "
        "starts other than the warm one leave a negative NLL, also from the annealed start "
        "(inference at theta scaled by 0.1, 0.2, ..., 1, each from the last); L-BFGS's line-search "
        "trials run only the warm start and those pulled towards each state, and its search is "
        "repeated with every start when the step they accepted does not hold under every start; "
        "an evaluation with "
        "an unconverged example, or a negative NLL from the starts other than the warm one, is "
        "rejected by L-BFGS, and SGD takes an epoch that ends at one again with half the step (at "
        "most 5 times; then it undoes the epoch and stops). Predictions: the same starts but the warm one, and the annealed one for "
        "every image, the same sweeps.\n" % UNARY_BINS["bimodal"])
    def cells(name, field, fmt):
        """One row's cells; runs the study has not measured yet show as '-'."""
        return " | ".join(fmt % den[k][name][field] if name in den.get(k, {}) else "-"
                          for k in keys)

    add("| method | " + " | ".join(f"G I{i}" for i in range(1, 5)) + " | " + " | ".join(f"B I{i}" for i in range(1, 5)) + " |")
    add("|---|" + "---|" * 8)
    for name in ["LBP-SGD", "LBP-BFGS", "MF-SGD", "MF-BFGS"]:
        add(f"| {name} (pdsp) | " + cells(name, "error", "%.4f") + " |")
        add(f"| {name} *paper* | " + " | ".join("%.4f" % v for v in PAPER_DENOISING[name]) + " |")
    add("| Ours (pdsp) | " + cells("ours", "error", "%.4f") + " |")
    add("| Ours *paper* | " + " | ".join("%.4f" % v for v in PAPER_DENOISING["Ours"]) + " |")
    if any(n not in den.get(k, {}) for k in keys for n in ["ours"] + list(BASELINES)):
        add("\n\"-\": not measured yet; `python3 run/reproduction.py denoising` measures the "
            "missing runs and keeps the others.")
    add("\nThe L-BFGS baselines against LBP-SGD (test error ratio; issue 17 asks for at most 2):\n")
    add("| ratio | " + " | ".join(keys) + " |")
    add("|---|" + "---|" * 8)
    for name in ["LBP-BFGS", "MF-BFGS"]:
        add(f"| {name} / LBP-SGD | " + " | ".join(
            "%.2f" % (den[k][name]["error"] / den[k]["LBP-SGD"]["error"])
            if {name, "LBP-SGD"} <= den.get(k, {}).keys() and den[k]["LBP-SGD"]["error"] > 0
            else "-" for k in keys) + " |")
    runs = [r for k in keys for r in den.get(k, {}).values()]
    # The first two lines of `pdsp --version`: the version and the commit.
    add("\nMeasured by " + "; ".join("`%s`" % " ".join(b.splitlines()[:2])
                                     for b in sorted({r["build"] for r in runs})) + ".\n")
    add("The commit that measured each run (reruns replace one run at a time, so a table can hold "
        "runs of several builds):\n")
    add("| run | " + " | ".join(keys) + " |")
    add("|---|" + "---|" * 8)
    for name in ["ours"] + list(BASELINES):
        add(f"| {name} | " + " | ".join(
            commit_of(den[k][name]) if name in den.get(k, {}) else "-" for k in keys) + " |")
    recovered = sorted({r["recovered"] for r in runs if "recovered" in r})
    if recovered:
        add("\n\\*: the run's numbers were recovered from " + "; ".join(recovered) + ".")
    add("\nTraining time in seconds (2 MPI ranks x 1 thread):\n")
    add("| run | " + " | ".join(keys) + " |")
    add("|---|" + "---|" * 8)
    for name in ["ours"] + list(BASELINES):
        add(f"| {name} | " + cells(name, "seconds", "%.1f") + " |")
    baseline_runs = [den[k][n] for k in keys for n in BASELINES if n in den.get(k, {})]
    add(f"\nThe {len(baseline_runs)} baseline runs trained for "
        f"{sum(r['seconds'] for r in baseline_runs):.0f} s together (issue 42 asks for at most "
        "15 minutes for all 32).")
    add("\nHow each baseline run ended: the iterations its model counts, accepted iterates with a "
        "negative NLL on some example from the starts prediction uses, examples with "
        "unconverged inference summed over its records, and the stop reason:\n")
    add("| run | iterations | negative-NLL iterates | unconverged examples | stop |")
    add("|---|---|---|---|---|")
    for k in keys:
        for name in [n for n in BASELINES if n in den.get(k, {})]:
            r = den[k][name]
            add(f"| {name} {k} | {r['iterations']} | {r['negative_nll_iterates']} | "
                f"{r['unconverged_examples']} | {r['stop']} |")
    add("\n## 4. Figures\n")
    add("Primal and dual objectives per outer iteration (image I1; the paper's Figure 4):\n")
    add("![convergence](figures/convergence.png)\n")
    add("First test image of every base image and noise model: noisy input, ground truth, pdsp's "
        "prediction (the paper's Figure 3):\n")
    add("![denoising](figures/denoising.png)\n")
    add("## 5. Where we differ from the paper, and why\n")
    add(open(os.path.join(ROOT, "run", "reproduction_differences.md")).read())
    with open(os.path.join(DOCS, "reproduction.md"), "w") as f:
        f.write("\n".join(lines) + "\n")
    print("wrote docs/reproduction.md")


def commit_of(run):
    """The commit named by a run's `pdsp --version` text; marked * where its numbers were
    recovered rather than saved when it was measured."""
    m = re.search(r"commit: (\S+)", run["build"])
    return (m.group(1) if m else "?") + ("\\*" if "recovered" in run else "")


def elapsed():
    """The run's wall time so far, when run/reproduce_all.sh recorded its start."""
    try:
        started = int(open(f"{OUT}/started").read())
    except (OSError, ValueError):
        return ""
    return "The whole run took %.1f minutes." % ((time.time() - started) / 60.0)


def machine():
    cpu = open("/proc/cpuinfo").read()
    model = re.search(r"model name\s*:\s*(.*)", cpu).group(1)
    memory = int(re.search(r"MemTotal:\s*(\d+)", open("/proc/meminfo").read()).group(1)) // 1048576
    return f"{os.cpu_count()} cores ({model}), {memory} GiB"


if __name__ == "__main__":
    os.makedirs(OUT, exist_ok=True)
    os.makedirs(RESULTS, exist_ok=True)
    steps = {"epsilon": epsilon_study, "parameters": parameter_study,
             "denoising": lambda: denoising_study(fresh=False),
             "denoising-fresh": lambda: denoising_study(fresh=True), "report": report}
    if len(sys.argv) > 2 and sys.argv[1] == "denoising-baselines":
        denoising_baselines(sys.argv[2:])
    elif len(sys.argv) != 2 or sys.argv[1] not in steps:
        sys.exit(__doc__)
    else:
        steps[sys.argv[1]]()
