"""The cost model of one example split across P ranks (run/shard_model.sh), from constants
measured on this machine, checked against measured runs and projected to 64-1024 ranks.

One outer iteration on a G x G 4-connected grid, each rank holding n_own of its G^2 variables:

  T(P) = T1 * (G / G1)^2 / speed(P)                    compute (sweeps, beliefs, moments, trials)
       + S * K * (alpha + beta * bytes_class(P))         message exchanges after each colour class
       + E * (alpha + beta * bytes_beliefs(P))           the halo's beliefs after each evaluation
       + A * allreduce * log2(P)                         scalar and gradient reductions

  T1          ms per iteration of the whole G1 x G1 example on one rank of one thread (measured)
  speed(P)    the machine's throughput of P busy cores over one: here the speed-up of one rank
              with 2 threads on the same example (the cores share one memory system), and no
              more than the cores; in the projection one core per rank, each as fast as one here
  S, E, A     sweeps, belief exchanges and allreduces per iteration (from the 2-rank run: the
              sweeps and trials the trainer made; E = 1; A = step trials + 2)
  K           colour classes: 2 on a 4-connected grid
  alpha, beta the seconds of one exchange with a neighbour and per byte (pdsp_bench_halo)
  allreduce   one small allreduce on 2 ranks (pdsp_bench_halo), times log2(P) levels
  bytes       per rank and class: 16 bytes (two doubles) per cut factor slot the rank sends, half
              of its boundary in each class; strips (bands of rows: 2 neighbours, G slots each)
              or blocks (sqrt(P) x sqrt(P): 4 neighbours, G / sqrt(P) slots each)

No overlap is credited (the sweep updates a class's interior while its boundary messages travel,
which hides the exchange when the interior takes longer) and no waiting at the per-class
synchronisation (imbalance and noise, which the model does not know), so the check against the
measured runs shows how much those matter here.
"""
import argparse
import math
import os
import re
import sys

sys.path.insert(0, os.path.dirname(__file__))
from bench_common import run  # noqa: E402
from bench_shards import make_grid, mpirun, train_split  # noqa: E402

CLASSES = 2
BYTES_PER_SLOT = 16  # a binary variable's message into a pairwise factor: two doubles


def halo_bytes(grid, ranks, layout):
    """Bytes one interior rank sends per colour class, and per belief exchange."""
    if ranks == 1:
        return 0.0, 0.0
    if layout == "strips":
        neighbours, edge = (1 if ranks == 2 else 2), grid
    else:
        side = math.isqrt(ranks)
        neighbours, edge = (4 if side > 2 else 2), grid / side
    # Half the boundary variables are in each class; beliefs: 2 states of each boundary variable.
    return neighbours * edge / 2 * BYTES_PER_SLOT, neighbours * edge * 2 * 8


def model_ms(c, grid, ranks, layout, speed):
    """Milliseconds per iteration on `ranks` ranks; c holds the measured constants."""
    per_class, beliefs = halo_bytes(grid, ranks, layout)
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
    parser = argparse.ArgumentParser()
    for flag in ("--pdsp", "--bench-halo", "--work"):
        parser.add_argument(flag, required=True)
    parser.add_argument("--size", type=int, required=True)
    parser.add_argument("--iterations", type=int, required=True)
    a = parser.parse_args()
    cores = os.cpu_count() or 1

    bench, _ = run(mpirun(2, [a.bench_halo]))
    print(bench, end="")
    alpha, beta, allreduce = halo_constants(bench)
    data = make_grid(a.pdsp, a.work, a.size)
    runs = {(1, 1): train_split(a.pdsp, data, a.work, 1, a.iterations),
            (1, 2): train_split(a.pdsp, data, a.work, 1, a.iterations, threads=2),
            (2, 1): train_split(a.pdsp, data, a.work, 2, a.iterations),
            (4, 1): train_split(a.pdsp, data, a.work, 4, a.iterations)}
    two = runs[(2, 1)]
    iterations = len(two["iterations"])
    trials = sum(r["step_trials"] for r in two["iterations"]) / iterations
    c = {"grid": a.size, "t1_ms": runs[(1, 1)]["ms"], "alpha": alpha, "beta": beta,
         "allreduce": allreduce, "sweeps": two["halo_sweeps"] / iterations, "evaluations": 1.0,
         "allreduces": trials + 2}
    two_core = runs[(1, 1)]["ms"] / runs[(1, 2)]["ms"]
    print(f"# constants: T1 {c['t1_ms']:.1f} ms/iter ({a.size}^2, 1 rank, 1 thread); speed of 2 cores "
          f"{two_core:.2f} (1 rank x 2 threads: {runs[(1, 2)]['ms']:.1f} ms/iter); sweeps/iter "
          f"{c['sweeps']:.2f}; step trials/iter {trials:.2f}; alpha {1e6 * alpha:.2f} us; "
          f"1/beta {1e-9 / beta:.2f} GB/s; allreduce {1e6 * allreduce:.2f} us")

    print(f"\n# check against the measured runs ({a.size}^2, {a.iterations} iterations, bands of rows)")
    print(f"{'ranks':>5} {'model ms':>9} {'compute':>8} {'halo':>7} {'reduce':>7} {'measured':>9} "
          f"{'ratio':>6} {'model halo KB/sw':>16} {'measured KB/sw':>14}  note")
    for ranks in (1, 2, 4):
        t = runs[(ranks, 1)]
        speed = 1.0 if ranks == 1 else two_core
        total, compute, exchanges, reductions = model_ms(c, a.size, ranks, "strips", speed)
        per_class, beliefs = halo_bytes(a.size, ranks, "strips")
        # All ranks: the two end bands send to one neighbour, the others to two.
        senders = 2 * (ranks - 1)
        one_neighbour = per_class / (1 if ranks == 2 else 2), beliefs / (1 if ranks == 2 else 2)
        model_kb = 0.0 if ranks == 1 else senders * (
            CLASSES * one_neighbour[0] + one_neighbour[1] * c["evaluations"] / c["sweeps"]) / 1e3
        measured_kb = 8e-3 * t["halo_values"] / t["halo_sweeps"] if t["halo_sweeps"] else 0.0
        note = f"oversubscribed ({ranks} ranks on {cores} cores)" if t["oversubscribed"] else ""
        print(f"{ranks:>5} {total:>9.1f} {compute:>8.1f} {exchanges:>7.2f} {reductions:>7.2f} "
              f"{t['ms']:>9.1f} {t['ms'] / total:>6.2f} {model_kb:>16.1f} {measured_kb:>14.1f}  {note}")

    slow = dict(c, alpha=10 * alpha, beta=10 * beta, allreduce=10 * allreduce)
    for title, grid_of, weak in ((f"strong scaling: one {a.size} x {a.size} example", lambda p: a.size, False),
                                 ("weak scaling: 1024 x 1024 variables per rank", lambda p: 1024 * math.isqrt(p), True)):
        print(f"\n# projection, {title}; one core per rank as fast as one here; efficiency = "
              "T1 / (P T(P)) (weak: T(1) / T(P)); 'x10' = latency, allreduce and seconds per byte "
              "ten times this machine's (an inter-node network, assumed, not measured)")
        print(f"{'ranks':>6} {'grid':>7} {'strips ms':>10} {'eff':>5} {'blocks ms':>10} {'eff':>5} "
              f"{'strips x10':>10} {'eff':>5} {'blocks x10':>10} {'eff':>5}")
        for ranks in (1, 4, 16, 64, 256, 1024, 4096, 16384):
            grid = grid_of(ranks)
            base = model_ms(c, 1024 if weak else a.size, 1, "strips", 1.0)[0]
            cells = []
            for constants in (c, slow):
                for layout in ("strips", "blocks"):
                    if layout == "strips" and ranks > grid:
                        cells += ["-", "-"]
                        continue
                    ms = model_ms(constants, grid, ranks, layout, ranks)[0]
                    efficiency = base / ms if weak else base / (ranks * ms)
                    cells += [f"{ms:.2f}", f"{100 * efficiency:.0f}%"]
            print(f"{ranks:>6} {grid:>7} " + " ".join(
                f"{cell:>{10 if i % 2 == 0 else 5}}" for i, cell in enumerate(cells)))


if __name__ == "__main__":
    main()
