#!/usr/bin/python3
"""Tables and plots for run/scaling.sh, from the metrics files (pdsp train --metrics) it wrote.

  scaling.py table STUDY MANIFEST WARMUP CORES   # prints the table of one study
  scaling.py plots MANIFEST WARMUP CORES OUTDIR   # strong.png, weak.png, uneven.png

MANIFEST has one tab-separated line per run: study, layout (RxT), ranks, threads, examples,
metrics file, the average number of cores other processes kept busy during the run. The first
WARMUP iterations of every run are discarded; every time is the median over the rest. A field
the metrics do not have (seconds_io, load_imbalance, partition_imbalance in older builds) is
printed as "-". The "limit" column is run/cost_model.py for the run's data file, its median
number of step-search trials and the cores it used, at the machine limits in build/limits.txt
(run/limit_probe.sh; "-" when that file does not exist).
"""
import json
import os
import statistics
import subprocess
import sys

LIMITS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "build", "limits.txt")
COST_MODEL = os.path.join(os.path.dirname(os.path.abspath(__file__)), "cost_model.py")

PHASES = [("messages", "seconds_messages"), ("gradient", "seconds_gradient"),
          ("allreduce", "seconds_allreduce"), ("step", "seconds_step"), ("io", "seconds_io")]


class Run:
    def __init__(self, fields, warmup, cores):
        study, layout, ranks, threads, examples, metrics, other = fields
        self.other = float(other)
        self.study, self.layout, self.metrics = study, layout, metrics
        self.ranks, self.threads, self.examples = int(ranks), int(threads), int(examples)
        rows = [json.loads(line) for line in open(metrics) if line.strip()]
        self.run = next((r for r in rows if r.get("type") == "run"), {})
        iterations = [r for r in rows if r.get("type") == "iteration"]
        if len(iterations) <= warmup:
            sys.exit(f"scaling.py: {metrics}: {len(iterations)} iteration(s), need more than "
                     f"the {warmup} warm-up iteration(s)")
        self.measured = iterations[warmup:]
        self.first_measured = iterations[warmup]["iteration"]
        self.last_measured = iterations[-1]["iteration"]
        self.ms = 1e3 * self.median("seconds")
        self.cores = min(self.ranks * self.threads, cores)  # real cores the layout can use
        self.oversubscribed = self.ranks * self.threads > cores

    def median(self, key):
        """Median of a per-iteration field over the measured iterations; None if absent."""
        values = [r[key] for r in self.measured if key in r]
        return statistics.median(values) if len(values) == len(self.measured) else None

    def comm_share(self):
        """Allreduce seconds over iteration seconds, summed over the measured iterations."""
        total = sum(r["seconds"] for r in self.measured)
        reduce = sum(r.get("seconds_allreduce", 0.0) for r in self.measured)
        return reduce / total if total > 0 else None

    def phase_ms(self):
        return [None if self.median(key) is None else 1e3 * self.median(key) for _, key in PHASES]

    def limit_ms(self):
        """The cost model's milliseconds per iteration at this machine's limits, or None."""
        data, trials = self.run.get("data"), self.median("step_trials")
        if not os.path.exists(LIMITS) or not data or not os.path.exists(data) or trials is None:
            return None
        out = subprocess.check_output(
            [sys.executable, COST_MODEL, data, LIMITS, str(trials), "--cores", str(self.cores)])
        return float(out.split()[0])


def load(manifest, warmup, cores, study=None):
    runs = []
    for line in open(manifest):
        fields = line.rstrip("\n").split("\t")
        if len(fields) == 7 and (study is None or fields[0] == study):
            runs.append(Run(fields, warmup, cores))
    return runs


def fmt(value, spec, width):
    return f"{'-':>{width}}" if value is None else f"{value:{width}{spec}}"


def pct(fraction, width):
    return f"{'-':>{width}}" if fraction is None else f"{100 * fraction:{width - 1}.1f}%"


BUSY = 0.2  # cores other processes may use during a run before its row is flagged


def note_of(run, study, cores):
    notes = []
    if study.startswith("split-"):
        notes.append(str(run.run.get("layout", "")).split(";")[0])
    if run.oversubscribed and study in ("weak", "split-strong", "split-weak"):
        notes.append(f"oversubscribed ({run.ranks} ranks on {cores} cores)")
    elif run.oversubscribed:
        notes.append(f"oversubscribed ({run.ranks * run.threads} threads on {cores} cores)")
    if run.other > BUSY:
        notes.append(f"MACHINE BUSY: other processes used {run.other:.2f} cores")
    return "; ".join(notes)


def table(study, manifest, warmup, cores):
    runs = load(manifest, warmup, cores, study)
    if not runs:
        sys.exit(f"scaling.py: no {study} runs in {manifest}")
    base = runs[0]  # 1 rank x 1 thread
    first, last = base.first_measured, base.last_measured
    print(f"# times: median over iterations {first}-{last} (the first {warmup} are warm-up); "
          f"ms = milliseconds per outer iteration")
    kind = study.removeprefix("split-")  # the split studies read as the strong and weak ones
    if kind == "strong":
        print(f"# speed-up = T(1x1) / T; efficiency = T(1x1) / (p T), p = cores used = "
              f"min(ranks x threads, {cores} real cores)")
    elif kind == "weak":
        print(f"# examples grow with the ranks; efficiency = T(1 rank) / T; "
              f"core eff = ranks T(1 rank) / (min(ranks, {cores}) T): the ideal on {cores} cores")
    else:
        print("# speed-up = T(1x1) / T; partition imb = the cost model's largest part / mean part "
              "(run line)")
    print("# comm = seconds_allreduce / seconds (includes waiting for the slowest rank); "
          "load imb = max over ranks / mean of local compute seconds (messages + gradient), median")
    print("# phases: median ms of seconds_messages, _gradient, _allreduce, _step, _io "
          "(checkpoint writing); other = cores other processes kept busy during the run")
    print("# limit = run/cost_model.py at build/limits.txt for the run's data, trials and cores "
          "(all cores for more than one); % limit = limit / ms")
    head = f"{'ranks x T':<9} {'examples':>8} {'ms/iter':>8} {'limit':>7} {'% limit':>7} "
    if kind == "weak":
        head += f"{'eff':>6} {'core eff':>8} "
    else:
        head += f"{'speed-up':>8} {'eff':>6} "
    if study == "uneven":
        head += f"{'part imb':>8} "
    head += f"{'comm':>6} {'load imb':>8} " + " ".join(f"{name:>9}" for name, _ in PHASES)
    head += f" {'other':>5}"
    print(head + " note")
    for run in runs:
        speedup = base.ms / run.ms
        limit = run.limit_ms()
        row = f"{run.layout:<9} {run.examples:>8} {run.ms:8.2f} " + fmt(limit, ".2f", 7) + " "
        row += pct(None if limit is None else limit / run.ms, 7) + " "
        if kind == "weak":
            row += f"{100 * speedup:5.0f}% {100 * speedup * run.ranks / run.cores:7.0f}% "
        else:
            row += f"{speedup:8.2f} {100 * speedup / run.cores:5.0f}% "
        if study == "uneven":
            row += fmt(run.run.get("partition_imbalance"), ".3f", 8) + " "
        row += pct(run.comm_share(), 6) + " "
        row += fmt(run.median("load_imbalance"), ".3f", 8) + " "
        row += " ".join(fmt(ms, ".2f", 9) for ms in run.phase_ms())
        row += f" {run.other:5.2f}"
        print(row + " " + note_of(run, study, cores))


def plots(manifest, warmup, cores, outdir):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    os.makedirs(outdir, exist_ok=True)
    written = []

    def save(fig, name):
        fig.tight_layout()
        path = os.path.join(outdir, name)
        fig.savefig(path, dpi=110)
        plt.close(fig)
        written.append(path)

    colours = ["tab:blue", "tab:orange", "tab:red", "tab:green", "tab:purple"]

    strong = load(manifest, warmup, cores, "strong")
    if strong:
        fig, (left, right) = plt.subplots(1, 2, figsize=(10, 3.8))
        x = range(len(strong))
        bottom = [0.0] * len(strong)
        for (name, _), colour in zip(PHASES, colours):
            ms = [run.phase_ms()[[n for n, _ in PHASES].index(name)] or 0.0 for run in strong]
            left.bar(x, ms, bottom=bottom, color=colour, label=name, width=0.6)
            bottom = [b + m for b, m in zip(bottom, ms)]
        for i, run in enumerate(strong):
            left.plot([i - 0.3, i + 0.3], [run.ms, run.ms], color="black", linewidth=1.5)
            if run.oversubscribed:
                left.text(i, run.ms, "oversub.", ha="center", va="bottom", fontsize=8)
        left.set_xticks(list(x), [run.layout for run in strong])
        left.set_xlabel("ranks x threads")
        left.set_ylabel("ms per iteration (median)")
        left.set_title("strong scaling: time and phases (line: total)")
        left.legend(fontsize=8)
        base = strong[0].ms
        eff = [100 * base / (run.ms * run.cores) for run in strong]
        bars = right.bar(x, eff, width=0.6, color=["tab:gray" if r.oversubscribed else "tab:blue"
                                                   for r in strong])
        for bar, run in zip(bars, strong):
            right.text(bar.get_x() + bar.get_width() / 2, bar.get_height(),
                       f"{base / run.ms:.2f}x", ha="center", va="bottom", fontsize=8)
        right.axhline(100, color="black", linestyle="--", linewidth=0.8)
        right.set_xticks(list(x), [run.layout for run in strong])
        right.set_xlabel("ranks x threads (grey: oversubscribed)")
        right.set_ylabel(f"efficiency T1 / (p Tp) [%], p <= {cores}")
        right.set_title("strong scaling: efficiency (labels: speed-up)")
        save(fig, "strong.png")

    weak = load(manifest, warmup, cores, "weak")
    if weak:
        fig, ax = plt.subplots(figsize=(5.5, 3.8))
        base = weak[0].ms
        ranks = [run.ranks for run in weak]
        inside = [run for run in weak if not run.oversubscribed]
        over = [run for run in weak if run.oversubscribed]
        ax.plot(ranks, [run.ms for run in weak], color="tab:blue", linewidth=1)
        ax.plot([r.ranks for r in inside], [r.ms for r in inside], "o", color="tab:blue",
                label=f"<= {cores} ranks")
        if over:
            ax.plot([r.ranks for r in over], [r.ms for r in over], "s", markerfacecolor="none",
                    color="tab:red", label=f"oversubscribed (> {cores} cores)")
        ax.plot(ranks, [base] * len(ranks), "--", color="black", linewidth=0.8,
                label="ideal (T1)")
        ax.plot(ranks, [base * r / min(r, cores) for r in ranks], ":", color="gray",
                label=f"ideal on {cores} cores")
        ax.set_xscale("log", base=2)
        ax.set_xticks(ranks, [str(r) for r in ranks])
        ax.set_xlabel(f"ranks (1 thread each; {weak[0].examples} examples per rank)")
        ax.set_ylabel("ms per iteration (median)")
        ax.set_title("weak scaling")
        ax.legend(fontsize=8)
        save(fig, "weak.png")

    uneven = load(manifest, warmup, cores, "uneven")
    if uneven:
        fig, (left, right) = plt.subplots(1, 2, figsize=(10, 3.6))
        x = range(len(uneven))
        left.bar(x, [run.ms for run in uneven], width=0.6, color="tab:blue")
        left.set_xticks(list(x), [run.layout for run in uneven])
        left.set_xlabel("ranks x threads")
        left.set_ylabel("ms per iteration (median)")
        left.set_title("uneven example sizes: time")
        for run in uneven:
            values = [r.get("load_imbalance") for r in run.measured]
            if run.ranks > 1 and all(v is not None for v in values):
                right.plot([r["iteration"] for r in run.measured], values, label=run.layout)
        right.axhline(1, color="black", linestyle="--", linewidth=0.8)
        right.set_xlabel("iteration")
        right.set_ylabel("load imbalance (max / mean)")
        right.set_title("uneven example sizes: load imbalance")
        if right.get_legend_handles_labels()[0]:
            right.legend(fontsize=8)
        save(fig, "uneven.png")

    split_strong = load(manifest, warmup, cores, "split-strong")
    split_weak = load(manifest, warmup, cores, "split-weak")
    if split_strong or split_weak:
        fig, (left, right) = plt.subplots(1, 2, figsize=(10, 3.6))
        for ax, runs, title in ((left, split_strong, "strong: one example"),
                                (right, split_weak, "weak: the same pixels per rank")):
            if not runs:
                continue
            ranks = [run.ranks for run in runs]
            ax.plot(ranks, [run.ms for run in runs], "o-", color="tab:blue", label="measured")
            ideal = [runs[0].ms / r if ax is left else runs[0].ms for r in ranks]
            ax.plot(ranks, ideal, "--", color="black", linewidth=0.8, label="ideal")
            for run in runs:
                if run.oversubscribed:
                    ax.text(run.ranks, run.ms, "oversub.", ha="center", va="bottom", fontsize=8)
            ax.set_xscale("log", base=2)
            ax.set_xticks(ranks, [str(r) for r in ranks])
            ax.set_xlabel("ranks (1 thread each), one example split into that many shards")
            ax.set_ylabel("ms per iteration (median)")
            ax.set_title(f"split example, {title}")
            ax.legend(fontsize=8)
        save(fig, "split.png")

    busy = [f"{run.study} {run.layout}" for run in strong + weak + uneven + split_strong + split_weak
            if run.other > BUSY]
    if busy:
        print(f"warning: other processes used more than {BUSY} cores during: " + ", ".join(busy))
    for path in written:
        if not os.path.getsize(path):
            sys.exit(f"scaling.py: {path} is empty")
        print(f"wrote {path}")


def main():
    if len(sys.argv) == 6 and sys.argv[1] == "table":
        table(sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5]))
    elif len(sys.argv) == 6 and sys.argv[1] == "plots":
        plots(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5])
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
