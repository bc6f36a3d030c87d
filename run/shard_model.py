"""The cost model of one example split across P ranks (run/shard_model.sh), from constants
measured on this machine, checked against measured runs and projected to 16,384 ranks.

One outer iteration on a G x G 4-connected grid, each rank holding n_own of its G^2 variables:

  T(P) = T1 * (G / G1)^2 / speed(P)                    compute (sweeps, beliefs, moments, trials)
       + S * K * (alpha + beta * bytes_class(P))         message exchanges after each colour class
       + E * (alpha + beta * bytes_beliefs(P))           the halo's beliefs after each evaluation
       + A * allreduce * log2(P)                         scalar and gradient reductions

  T1          ms per iteration of the whole G1 x G1 example on one rank of one thread (measured)
  speed(P)    P ranks' throughput over one: min(P, cores) here; in the projection one core
              per rank, each as fast as one here
  S, E, A     sweeps, belief exchanges and allreduces per iteration (from the 2-rank run: the
              sweeps and trials the trainer made; E = 1; A = step trials + 2)
  K           colour classes: 2 on a 4-connected grid
  alpha, beta the seconds of one exchange of 8 bytes and per byte (pdsp_bench_halo); one alpha
              per class, as the exchanges with all neighbours are posted together
  allreduce   one small allreduce on 2 ranks (pdsp_bench_halo), times log2(P) levels
  bytes       of the busiest rank per class: 16 (two doubles) per cut factor it shares, half
              of them in each class; strips (P x 1 bands: 2 neighbours, G cut factors each)
              or blocks (sqrt(P) x sqrt(P): 4 neighbours, G / sqrt(P) each); beliefs: 16 per
              cut factor after each evaluation

No overlap is credited (the sweep updates a class's interior while its boundary messages travel,
which hides the exchange when the interior takes longer) and no waiting at the per-class
synchronisation (imbalance and noise, which the model does not know), so the check against the
measured runs shows how much those matter here.
"""
import math
import os
import re
import sys

sys.path.insert(0, os.path.dirname(__file__))
from bench_common import run  # noqa: E402
from bench_shards import grid_arguments, make_grid, mpirun, train_split  # noqa: E402

CLASSES = 2
BYTES_PER_SLOT = 16  # a binary variable's message into a pairwise factor: two doubles


def cut_factors(grid, blocks):
    """The factors a G x G grid cut into rows x cols blocks cuts."""
    rows, cols = blocks
    return (rows - 1) * grid + (cols - 1) * grid


def rank_bytes(grid, blocks):
    """Bytes the busiest rank sends per colour class, and per belief exchange: its cut factors
    (up to two neighbours across each direction), half of them in each class."""
    rows, cols = blocks
    cut = min(2, rows - 1) * grid / cols + min(2, cols - 1) * grid / rows
    return cut / 2 * BYTES_PER_SLOT, cut * BYTES_PER_SLOT


def model_ms(c, grid, blocks, speed):
    """Milliseconds per iteration on rows x cols ranks; c holds the measured constants."""
    ranks = blocks[0] * blocks[1]
    per_class, beliefs = rank_bytes(grid, blocks)
    compute = c["t1_ms"] * (grid / c["grid"]) ** 2 / speed
    exchanges = 0.0 if ranks == 1 else 1e3 * (
        c["sweeps"] * CLASSES * (c["alpha"] + c["beta"] * per_class)
        + c["evaluations"] * (c["alpha"] + c["beta"] * beliefs))
    reductions = 1e3 * c["allreduces"] * c["allreduce"] * math.log2(ranks)
    return compute + exchanges + reductions, compute, exchanges, reductions


def halo_constants(bench):
    values = dict(re.findall(r"^(\w+) ([0-9.e+-]+)$", bench, re.M))
    return float(values["latency_s"]), float(values["seconds_per_byte"]), float(values["allreduce_s"])


def main():
    a = grid_arguments("--pdsp", "--bench-halo", "--work")
    cores = os.cpu_count() or 1

    bench, _ = run(mpirun(2, [a.bench_halo]))
    print(bench, end="")
    alpha, beta, allreduce = halo_constants(bench)
    data = make_grid(a.pdsp, a.work, a.size)
    runs = {ranks: train_split(a.pdsp, data, a.work, ranks, a.iterations) for ranks in (1, 2, 4)}
    two = runs[2]
    iterations = len(two["iterations"])
    trials = sum(r["step_trials"] for r in two["iterations"]) / iterations
    c = {"grid": a.size, "t1_ms": runs[1]["ms"], "alpha": alpha, "beta": beta,
         "allreduce": allreduce, "sweeps": two["halo_sweeps"] / iterations, "evaluations": 1.0,
         "allreduces": trials + 2}
    print(f"# constants: T1 {c['t1_ms']:.1f} ms/iter ({a.size}^2, 1 rank, 1 thread); sweeps/iter "
          f"{c['sweeps']:.2f}; step trials/iter {trials:.2f}; alpha {1e6 * alpha:.2f} us; "
          f"1/beta {1e-9 / beta:.2f} GB/s; allreduce {1e6 * allreduce:.2f} us")

    print(f"\n# check against the measured runs ({a.size}^2, {a.iterations} iterations, the "
          f"layout each run chose; speed = min(ranks, {cores} cores))")
    print(f"{'ranks':>5} {'layout':>22} {'model ms':>9} {'compute':>8} {'halo':>7} {'reduce':>7} "
          f"{'measured':>9} {'ratio':>6} {'model halo KB/sw':>16} {'measured KB/sw':>14}  note")
    for ranks, t in runs.items():
        if ranks > 1 and t["blocks"] is None:
            sys.exit(f"shard_model.py: the {ranks}-rank run did not split the grid into blocks "
                     f"({t['layout']}); the model covers grid blocks only")
        blocks = t["blocks"] or (1, 1)
        total, compute, exchanges, reductions = model_ms(c, a.size, blocks, min(ranks, cores))
        # All ranks: each cut factor carries two messages per sweep and two beliefs per evaluation.
        model_kb = 2 * BYTES_PER_SLOT * cut_factors(a.size, blocks) * (
            1 + c["evaluations"] / c["sweeps"]) / 1e3
        measured_kb = 8e-3 * t["halo_values"] / t["halo_sweeps"] if t["halo_sweeps"] else 0.0
        note = f"oversubscribed ({ranks} ranks on {cores} cores)" if t["oversubscribed"] else ""
        print(f"{ranks:>5} {t['layout']:>22} {total:>9.1f} {compute:>8.1f} {exchanges:>7.2f} "
              f"{reductions:>7.2f} {t['ms']:>9.1f} {t['ms'] / total:>6.2f} {model_kb:>16.1f} "
              f"{measured_kb:>14.1f}  {note}")

    slow = dict(c, alpha=10 * alpha, beta=10 * beta, allreduce=10 * allreduce)
    columns = [("strips", c), ("blocks", c), ("strips x10", slow), ("blocks x10", slow)]
    for title, grid_of, weak in (
            (f"strong scaling: one {a.size} x {a.size} example", lambda p: a.size, False),
            ("weak scaling: 1024 x 1024 variables per rank", lambda p: 1024 * math.isqrt(p), True)):
        print(f"\n# projection, {title}; one core per rank as fast as one here; efficiency = "
              "T1 / (P T(P)) (weak: T(1) / T(P)); 'x10' = latency, allreduce and seconds per byte "
              "ten times this machine's (an inter-node network, assumed, not measured)")
        print(f"{'ranks':>6} {'grid':>7} " + " ".join(f"{name + ' ms':>13} {'eff':>5}"
                                                     for name, _ in columns))
        base = model_ms(c, 1024 if weak else a.size, (1, 1), 1.0)[0]
        last_above_half = {}
        for ranks in (1, 4, 16, 64, 256, 1024, 4096, 16384):
            grid = grid_of(ranks)
            cells = []
            for name, constants in columns:
                if name.startswith("strips") and ranks > grid:  # a band is at least one row
                    cells += [f"{'-':>13}", f"{'-':>5}"]
                    continue
                side = math.isqrt(ranks)
                blocks = (ranks, 1) if name.startswith("strips") else (side, side)
                ms = model_ms(constants, grid, blocks, ranks)[0]
                efficiency = base / ms if weak else base / (ranks * ms)
                if efficiency >= 0.5:
                    last_above_half[name] = ranks
                cells += [f"{ms:>13.2f}", f"{100 * efficiency:>4.0f}%"]
            print(f"{ranks:>6} {grid:>7} " + " ".join(cells))
        print("# the most ranks listed with efficiency >= 50%: " + ", ".join(
            f"{name} {last_above_half.get(name, 1)} ranks" for name, _ in columns))


if __name__ == "__main__":
    main()
