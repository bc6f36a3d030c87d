#!/usr/bin/env python3
"""The cost model of docs/benchmarks.md: the time one outer iteration would take at this
machine's limits (run/limit_probe.sh), for a data set and a number of step-search trials.

Each phase of an iteration is bound either by transcendental throughput (exp, log) or by the
bytes it must stream at the last-level-cache bandwidth; its limit is the larger of the two:
  sweep     every message block: the mu of its factor (2 exp + 1 log per block for binary
            pairwise factors; |Y_a| exp and K_v log in general), reading the potentials and
            reading and writing the messages;
  beliefs   one soft-max per region (|Y_a| exp + 1 log per factor, K_v exp + 1 log per
            variable), reading potentials and messages, writing the beliefs;
  moments   one pass over the feature rows (12 bytes per entry, a 4-byte pointer per row) and
            the beliefs;
  trial     potentials (feature rows times theta plus the loss, written) plus the objective
            (as beliefs, no writes).
Usage: cost_model.py DATA.h5 LIMITS.txt TRIALS_PER_ITERATION [THREADS_KEY: 1|all]
                     [MESSAGE_PRECISION: double|single (binary pairwise messages in float)]
Prints: limit_ms sweep_ms beliefs_ms moments_ms trial_ms potentials_ms objective_ms
(a trial is its potentials plus its objective)
"""
import sys

import h5py
import numpy as np


def limits(path, key):
    values = dict(line.split() for line in open(path))
    return {name: float(values[f"{name}_{key}"]) for name in
            ("exp_per_s", "log_per_s", "cache_read_bytes_per_s")}


def main():
    data, limit_file, trials = sys.argv[1], sys.argv[2], float(sys.argv[3])
    key = sys.argv[4] if len(sys.argv) > 4 else "1"
    single = len(sys.argv) > 5 and sys.argv[5] == "single"
    L = limits(limit_file, key)
    with h5py.File(data, "r") as f:
        card = f["/vars/card"][...].astype(np.int64)
        var_ptr = f["/factors/var_ptr"][...].astype(np.int64)
        factor_vars = f["/factors/vars"][...].astype(np.int64)
        nnz = f["/vars/feat_param"].shape[0] + f["/factors/feat_param"].shape[0]
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
                   bytes_ / L["cache_read_bytes_per_s"])

    sweep = phase(sweep_exp, sweep_log, potential_bytes + 2 * message_bytes)
    beliefs = phase(region_exp, region_log, 2 * potential_bytes + message_bytes)
    # Feature rows in memory: 12 bytes per entry (int32 parameter, double value) and a 4-byte row
    # pointer per position of the layout; the loss is one double per state.
    positions = states + tables
    feature_bytes = 12 * nnz + 4 * positions
    moments = phase(0, 0, feature_bytes + 8 * positions)  # the features and the beliefs
    potentials = phase(0, 0, feature_bytes + 8 * positions + 8 * states)  # + write, + loss
    objective = phase(region_exp, region_log, potential_bytes + message_bytes)
    trial = potentials + objective
    total = sweep + beliefs + moments + trials * trial
    print(" ".join(f"{1e3 * x:.3f}" for x in
                   (total, sweep, beliefs, moments, trial, potentials, objective)))


if __name__ == "__main__":
    main()
