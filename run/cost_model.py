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
            every row of its part holds exactly one entry) and the beliefs; format 2's typed
            features: one multiply-add per state and observation entry of a typed region;
  trial     potentials (feature rows times theta plus the loss, written) plus the objective
            (as beliefs, no writes); with --saddle also a sweep, which a trial re-runs when some
            counting number is negative (--counting bethe on a grid).
Pairwise factors that read a table their type shares (format 2, dim 0; src/inference/
shared_tables.cpp) are bound by multiply-adds instead: a K_a x K_b matrix-vector product per
slot in a sweep and per factor in the objective, for their beliefs the products of the table
with the two incoming vectors and the outer product summed per table (the beliefs are kept
folded: 2 (K_a + K_b) numbers per factor, not a table), and no exp of their own (the table's exp
is computed once); the moments do not read their tables.
Usage: cost_model.py DATA.h5 LIMITS.txt TRIALS_PER_ITERATION [--cores N]
                     [--precision double|single] [--bandwidth cache|memory] [--saddle]
  --cores       cores the run uses (ranks x threads): 1 takes the one-core rates, more the
                all-core rates of the probe
  --precision   single: binary pairwise messages stored in float (--message-precision single)
Prints: limit_ms sweep_ms beliefs_ms moments_ms trial_ms potentials_ms objective_ms
(a trial is its potentials plus its objective, plus a sweep with --saddle)
"""
import argparse
import sys

import h5py
import numpy as np


def limits(path, cores, bandwidth):
    """The probe's rates for one core or for all cores, with the read bandwidth chosen."""
    values = dict(line.split() for line in open(path))
    key = "1" if cores == 1 else "all"
    if f"fma_per_s_{key}" not in values:
        sys.exit(f"cost_model.py: {path} predates the multiply-add rate: run run/limit_probe.sh")
    return {"exp_per_s": float(values[f"exp_per_s_{key}"]),
            "log_per_s": float(values[f"log_per_s_{key}"]),
            "read_bytes_per_s": float(values[f"{bandwidth}_read_bytes_per_s_{key}"]),
            "fma_per_s": float(values[f"fma_per_s_{key}"])}


def typed_terms(f, card, table):
    """Format 2's typed features: (multiply-adds of one pass over them, bytes they stream), and a
    mask of the factors whose table their type shares (dim 0); nothing for a format 1 file."""
    shared = np.zeros(len(table), bool)
    if "/obs/ptr" not in f:
        return 0, 0, shared
    row_nnz = np.diff(f["/obs/ptr"][...].astype(np.int64))
    multiply_adds, bytes_ = 0, 12 * int(row_nnz.sum())
    for part, sizes in (("vars", card), ("factors", table)):
        if f"/{part}/type" not in f:
            continue
        kinds = f[f"/{part}/type"][...]
        dims = f[f"/{part[:-1]}_types/dim"][...]
        rows = (f[f"/{part}/obs_row"][...] if f"/{part}/obs_row" in f
                else np.full(len(kinds), -1, np.int64))
        typed = kinds >= 0
        observed = typed & (rows >= 0)
        multiply_adds += int((sizes[observed] * row_nnz[rows[observed]]).sum())
        if part == "factors":
            shared = typed & (dims[np.where(typed, kinds, 0)] == 0)
    return multiply_adds, bytes_, shared


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
        nnz = sum(f[name].shape[0] for name in ("/vars/feat_param", "/factors/feat_param")
                  if name in f)
        # Row pointers read: none for a part whose rows hold exactly one entry each.
        pointers = sum(0 if np.all(np.diff(f[name][...]) == 1) else f[name].shape[0] - 1
                       for name in ("/vars/feat_ptr", "/factors/feat_ptr") if name in f)
        arity = np.diff(var_ptr)
        slot_card = card[factor_vars]
        table = (np.multiply.reduceat(slot_card, var_ptr[:-1]) if len(arity)
                 else np.zeros(0, np.int64))
        typed_fma, typed_bytes, shared = typed_terms(f, card, table)
    binary_pairwise = bool((card == 2).all() and (arity == 2).all())
    # The binary pairwise kernels keep tables per factor (their sweep reads a shared one once).
    shared &= (arity == 2) & (not binary_pairwise)
    states, tables, slots = card.sum(), table.sum(), len(factor_vars)
    vars_, factors = len(card), len(arity)
    # The shared tables' factors: their slots and tables leave the exp-bound terms for products.
    shared_slot = np.repeat(shared, arity)
    own_tables = int(table[~shared].sum())
    products = int(table[shared].sum())  # multiply-adds of one product per factor
    folded = 2 * int((slot_card[shared_slot]).sum())  # 2 (K_a + K_b) per factor
    if binary_pairwise:
        sweep_exp, sweep_log, message_bytes = 2 * slots, slots, (4 if single else 8) * slots
    else:
        sweep_exp = int((table * arity)[~shared].sum()) + int(slot_card[shared_slot].sum())
        sweep_log = int(slot_card.sum())
        message_bytes = 8 * int(slot_card.sum())
    region_exp, region_log = own_tables + states, factors + vars_
    potential_bytes = 8 * (states + own_tables)

    def phase(exps, logs, bytes_, multiply_adds=0):
        return max(exps / L["exp_per_s"] + logs / L["log_per_s"] + multiply_adds / L["fma_per_s"],
                   bytes_ / L["read_bytes_per_s"])

    sweep = phase(sweep_exp, sweep_log, potential_bytes + 2 * message_bytes, 2 * products)
    beliefs = phase(region_exp, region_log, 2 * potential_bytes + message_bytes + 8 * folded,
                    2 * products)
    # Feature rows in memory: 12 bytes per entry (int32 parameter, double value) and a 4-byte row
    # pointer per row of a part that needs them; the loss is one double per state.
    feature_bytes = 12 * nnz + 4 * pointers + typed_bytes
    # The features and the beliefs (no table of a shared-table factor).
    moments = phase(0, 0, feature_bytes + 8 * (states + own_tables), typed_fma)
    # + written, + the loss.
    potentials = phase(0, 0, feature_bytes + 8 * (states + own_tables) + 8 * states, typed_fma)
    objective = phase(region_exp, region_log, potential_bytes + message_bytes, products)
    trial = potentials + objective + (sweep if args.saddle else 0)
    total = sweep + beliefs + moments + trials * trial
    print(" ".join(f"{1e3 * x:.3f}" for x in
                   (total, sweep, beliefs, moments, trial, potentials, objective)))


if __name__ == "__main__":
    main()
