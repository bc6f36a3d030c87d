#!/usr/bin/env python3
"""The cost model of docs/benchmarks.md: the time one outer iteration would take at this
machine's limits (run/limit_probe.sh), for a data set and a number of step-search trials.

Each phase of an iteration is bound either by transcendental throughput (exp, log) or by the
bytes it must stream at the measured read bandwidth (of a 32 MiB buffer by default, which is
what a working set of tens of MiB sees; of a 512 MiB buffer with --bandwidth memory, for data
sets far larger than the caches); its limit is the larger of the two:
  sweep     every message block: the mu of its factor (2 exp + 1 log per block for binary
            pairwise factors; |Y_a| exp and K_v log in general), reading the potentials and
            reading and writing the messages;
  beliefs   one soft-max per region (|Y_a| exp + 1 log per factor, K_v exp + 1 log per
            variable), reading potentials and messages, writing the beliefs;
  moments   one pass over the feature rows (12 bytes per entry, a 4-byte pointer per row unless
            every row of its part holds exactly one entry) and the beliefs;
  trial     potentials (feature rows times theta plus the loss, written) plus the objective
            (as beliefs, no writes); with --saddle also a sweep, which a trial re-runs when some
            counting number is negative (--counting bethe on a grid).
Usage: cost_model.py DATA.h5 LIMITS.txt TRIALS_PER_ITERATION [--cores N]
                     [--precision double|single] [--bandwidth cache|memory] [--saddle]
  --cores       cores the run uses (ranks x threads): 1 takes the one-core rates, more the
                all-core rates of the probe
  --precision   single: binary pairwise messages stored in float (--message-precision single)
Prints: limit_ms sweep_ms beliefs_ms moments_ms trial_ms potentials_ms objective_ms
(a trial is its potentials plus its objective, plus a sweep with --saddle)
"""
import argparse

import h5py
import numpy as np


def limits(path, cores, bandwidth):
    """The probe's rates for one core or for all cores, with the read bandwidth chosen."""
    values = dict(line.split() for line in open(path))
    key = "1" if cores == 1 else "all"
    return {"exp_per_s": float(values[f"exp_per_s_{key}"]),
            "log_per_s": float(values[f"log_per_s_{key}"]),
            "read_bytes_per_s": float(values[f"{bandwidth}_read_bytes_per_s_{key}"])}


def arguments():
    parser = argparse.ArgumentParser(description="Time per outer iteration at this machine's limits.")
    parser.add_argument("data")
    parser.add_argument("limits")
    parser.add_argument("trials", type=float)
    parser.add_argument("--cores", type=int, default=1)
    parser.add_argument("--precision", choices=("double", "single"), default="double")
    parser.add_argument("--bandwidth", choices=("cache", "memory"), default="cache")
    parser.add_argument("--saddle", action="store_true")
    return parser.parse_args()


def main():
    args = arguments()
    data, trials, single = args.data, args.trials, args.precision == "single"
    L = limits(args.limits, args.cores, args.bandwidth)
    with h5py.File(data, "r") as f:
        card = f["/vars/card"][...].astype(np.int64)
        var_ptr = f["/factors/var_ptr"][...].astype(np.int64)
        factor_vars = f["/factors/vars"][...].astype(np.int64)
        nnz = f["/vars/feat_param"].shape[0] + f["/factors/feat_param"].shape[0]
        # Row pointers read: none for a part whose rows hold exactly one entry each.
        pointers = sum(0 if np.all(np.diff(ptr) == 1) else len(ptr) - 1 for ptr in
                       (f["/vars/feat_ptr"][...], f["/factors/feat_ptr"][...]))
    arity = np.diff(var_ptr)
    slot_card = card[factor_vars]
    table = np.multiply.reduceat(slot_card, var_ptr[:-1]) if len(arity) else np.zeros(0, np.int64)
    states, tables, slots = card.sum(), table.sum(), len(factor_vars)
    vars_, factors = len(card), len(arity)
    binary_pairwise = bool((card == 2).all() and (arity == 2).all())
    if binary_pairwise:
        sweep_exp, sweep_log, message_bytes = 2 * slots, slots, (4 if single else 8) * slots
    else:
        sweep_exp, sweep_log = int((table * arity).sum()), int(slot_card.sum())
        message_bytes = 8 * int(slot_card.sum())
    region_exp, region_log = tables + states, factors + vars_
    potential_bytes = 8 * (states + tables)

    def phase(exps, logs, bytes_):
        return max(exps / L["exp_per_s"] + logs / L["log_per_s"],
                   bytes_ / L["read_bytes_per_s"])

    sweep = phase(sweep_exp, sweep_log, potential_bytes + 2 * message_bytes)
    beliefs = phase(region_exp, region_log, 2 * potential_bytes + message_bytes)
    # Feature rows in memory: 12 bytes per entry (int32 parameter, double value) and a 4-byte row
    # pointer per row of a part that needs them; the loss is one double per state.
    positions = states + tables
    feature_bytes = 12 * nnz + 4 * pointers
    moments = phase(0, 0, feature_bytes + 8 * positions)  # the features and the beliefs
    potentials = phase(0, 0, feature_bytes + 8 * positions + 8 * states)  # + write, + loss
    objective = phase(region_exp, region_log, potential_bytes + message_bytes)
    trial = potentials + objective + (sweep if args.saddle else 0)
    total = sweep + beliefs + moments + trials * trial
    print(" ".join(f"{1e3 * x:.3f}" for x in
                   (total, sweep, beliefs, moments, trial, potentials, objective)))


if __name__ == "__main__":
    main()
