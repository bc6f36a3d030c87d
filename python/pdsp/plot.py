"""Pictures of runs: `python3 -m pdsp plot run.jsonl [more.jsonl] -o run.png`.

One figure of eight panels: the objective (F or the negative log-likelihood, with D where the
learner has a dual), the gap, the step and the validation error, each against training seconds
(`elapsed`) and against iterations. Several runs are overlaid, each labelled by the settings in
which the runs differ. An axis whose values span more than two decades is logarithmic
(symmetric-logarithmic where they take both signs)."""
import math
import os

import numpy as np

from .metrics import MetricsError, read_metrics

# Settings of the run header that name a run in a legend, in this order (docs/file-format.md,
# Metrics). Only those that differ between the runs are shown; the learner always is.
LABEL_SETTINGS = ("learner", "data", "epsilon", "C", "loss_weight", "p", "counting",
                  "theta_step", "unary_model", "pairwise_model", "batch", "inner_sweeps", "seed",
                  "ranks", "threads")
DECADES_FOR_LOG = 2.0


class PlotError(ValueError):
    """One line naming the file and what is wrong with it."""


def objective_field(metrics):
    """The name of the run's objective column: the likelihood baselines log
    `neg_log_likelihood`, every other learner `F`."""
    return next((name for name in ("F", "neg_log_likelihood")
                 if any(name in record for record in metrics.iterations)), "F")


def run_labels(runs):
    """Legend labels: the learner and every header setting whose value differs between runs
    (for one run: the learner, epsilon and C); the file name when nothing differs."""
    if len(runs) == 1:
        keys = ["learner", "epsilon", "C"]
    else:
        keys = [key for key in LABEL_SETTINGS
                if key == "learner" or len({repr(r.run.get(key)) for r in runs}) > 1]
    labels = []
    for metrics in runs:
        parts = [f"{metrics.run[key]}" if key == "learner" else f"{key}={metrics.run[key]}"
                 for key in keys if key in metrics.run]
        labels.append(" ".join(parts) or os.path.basename(metrics.path))
    if len(set(labels)) < len(labels):
        labels = [f"{label} ({os.path.basename(m.path)})" for label, m in zip(labels, runs)]
    return labels


def spans_decades(columns):
    """True when the positive finite values of all columns span more than DECADES_FOR_LOG
    decades and no finite value is zero or negative: a log axis shows such a series."""
    values = np.concatenate([c[np.isfinite(c)] for c in columns]) if columns else np.array([])
    if values.size == 0 or np.any(values <= 0):
        return False
    return math.log10(values.max() / values.min()) > DECADES_FOR_LOG


def set_scale(axis, columns, set_axis_scale):
    """Log where the values are positive and span decades; where they also take the other sign
    (an early dual far below F, a gap below 0 before the messages converge) a symmetric log,
    linear within the smallest nonzero magnitude; linear otherwise."""
    if spans_decades(columns):
        set_axis_scale("log")
        return
    values = np.concatenate([c[np.isfinite(c)] for c in columns]) if columns else np.array([])
    magnitudes = np.abs(values[values != 0])
    if magnitudes.size and math.log10(magnitudes.max() / magnitudes.min()) > DECADES_FOR_LOG:
        set_axis_scale("symlog", linthresh=max(magnitudes.min(), magnitudes.max() * 1e-9))


def read_runs(paths):
    """Each file's metrics; a file that cannot be read, is malformed or has no iteration record
    is a PlotError naming it."""
    runs = []
    for path in paths:
        try:
            metrics = read_metrics(path)
        except OSError as error:
            raise PlotError(f"{path}: cannot read: {error.strerror}") from None
        except MetricsError as error:
            raise PlotError(str(error)) from None
        if not metrics.iterations:
            raise PlotError(f"{path}: no iteration records (is it a pdsp train --metrics file?)")
        runs.append(metrics)
    return runs


def plot_runs(paths, out):
    """Draws the runs in `paths` into the PNG (or any format matplotlib knows by the
    extension) `out`. Raises PlotError with one line on a bad input or an unwritable output."""
    runs = read_runs(paths)
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    labels = run_labels(runs)
    panels = [("objective", "F (solid) and D (dashed)"), ("gap", "gap F - D"),
              ("step", "step"), ("validation_error", "validation error (%)")]
    figure, axes = plt.subplots(len(panels), 2, figsize=(12, 3.2 * len(panels)), squeeze=False)
    colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for row, (quantity, title) in enumerate(panels):
        for column, (x_field, x_title) in enumerate((("elapsed", "training seconds"),
                                                     ("iteration", "iteration"))):
            axis = axes[row][column]
            drawn = []
            for index, metrics in enumerate(runs):
                colour = colours[index % len(colours)]
                x = metrics.column(x_field)
                series = [(metrics.column(objective_field(metrics)), "-"),
                          (metrics.column("D"), "--")] if quantity == "objective" else \
                    [(metrics.column(quantity), "-")]
                for y, style in series:
                    shown = np.isfinite(x) & np.isfinite(y)
                    if not shown.any():
                        continue
                    # Sparse records (validation every K iterations) get markers.
                    marker = "o" if shown.sum() < 0.5 * len(shown) or shown.sum() < 3 else None
                    axis.plot(x[shown], y[shown], style, color=colour, marker=marker,
                              markersize=3, label=labels[index] if style == "-" else None)
                    drawn.append(y[shown])
            axis.set_xlabel(x_title)
            axis.set_title(title, fontsize=10)
            if not drawn:
                axis.text(0.5, 0.5, "not in these runs", ha="center", va="center",
                          transform=axis.transAxes, color="gray")
                axis.set_xticks([])
                axis.set_yticks([])
                continue
            set_scale(axis, drawn, axis.set_yscale)
            if spans_decades([m.column(x_field) for m in runs]):
                axis.set_xscale("log")
            axis.grid(True, which="both", alpha=0.3)
    handles, names = axes[0][0].get_legend_handles_labels()
    figure.legend(handles, names, loc="upper center", ncol=min(3, max(1, len(names))),
                  fontsize=9, frameon=False)
    figure.tight_layout(rect=(0, 0, 1, 1 - 0.25 / len(panels)))
    try:
        figure.savefig(out, dpi=110)
    except (OSError, ValueError) as error:
        raise PlotError(f"{out}: cannot write the figure: "
                        f"{getattr(error, 'strerror', None) or error}") from None
    finally:
        plt.close(figure)
