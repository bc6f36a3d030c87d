#!/usr/bin/env python3
"""Mutation fuzz test of pdsp's readers.

Makes valid data (format 1 and format 2, the latter as often), model (of each format's data),
prediction and checkpoint files with the pdsp binary, derives seeded mutants from them (bytes
flipped, files truncated, and structured damage through h5py: wrong types and shapes, non-finite
values, offsets out of order, huge sizes, format 2's offsets, dims and rows set near 2^63,
attributes removed or of the wrong type), runs `pdsp info`, `train`, `predict` and `train --resume` on each (some under
`mpirun -np 2`), and requires every run to end in success with finite outputs, or in a clean
error: exit code 2 and exactly one line "pdsp: error ..." naming a file, no internal error, no
signal, no time-out, no HDF5 error dump, no MPI_ABORT banner, no output or temporary file left
by a failed run, and the input files unchanged. A crash inside libhdf5 itself on a byte mutant
is counted apart (see died_in_libhdf5). Prints a table of outcomes; exits 1 if any run failed.

Reproduce one mutant with --seed S --only I (its line in the failure list gives both; the
checkpoints' times differ from run to run, so a checkpoint mutant may come out slightly other).
"""
import argparse
import collections
import concurrent.futures
import hashlib
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile

import h5py
import numpy as np

# Serial runs never talk to another rank: Open MPI's isolated singleton with the self transport
# starts in 0.2 s instead of 0.8 s, which is most of the time of a run on these tiny files.
SERIAL_ENV = {
    "OMPI_MCA_ess_singleton_isolated": "1",
    "OMPI_MCA_btl": "self",
    "OMPI_MCA_pml": "ob1",
}
# What mpirun itself prints when a rank exits with a non-zero code: expected with exit code 2.
MPIRUN_NOTICE = re.compile(
    r"^(-{10,}|Primary job\s+terminated normally, but 1 process returned|a non-zero exit code\. "
    r"Per user-direction, the job has been aborted\.|(mpirun|mpiexec) detected that one or more processes "
    r"exited with non-zero status, thus causing|the job to be terminated\. The first process to do "
    r"so was:|\s*Process name: .*|\s*Exit code:\s*\d+|)$")
# Under AddressSanitizer, libhdf5 asking malloc for a size read from a damaged file prints this
# before it gets NULL (as from glibc in the release build) and fails cleanly.
ASAN_REFUSED_MALLOC = re.compile(r"^==\d+==WARNING: AddressSanitizer failed to allocate 0x[0-9a-f]+ "
                                 r"bytes$")
BAD_STDERR = ("internal error", "HDF5-DIAG", "MPI_ABORT", "AddressSanitizer", "runtime error",
              "Segmentation fault", "core dumped", "terminate called")


def run(command, env, timeout, cwd=None):
    """(exit code or 'timeout', stderr)."""
    try:
        done = subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                              env=env, timeout=timeout, text=True, errors="replace", cwd=cwd)
    except subprocess.TimeoutExpired as expired:
        stderr = expired.stderr or ""
        return "timeout", stderr if isinstance(stderr, str) else stderr.decode(errors="replace")
    return done.returncode, done.stderr


def digest(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


# ---- The valid files every mutant starts from. ----

def make_base_files(pdsp, work, env, timeout):
    base = os.path.join(work, "base")
    os.makedirs(base)
    path = lambda name: os.path.join(base, name)
    # Relative names, run in `base`: the files record them, and must not depend on `work`, so
    # that --only makes the same mutant as the run that found it.
    steps = [
        [pdsp, "gen", "denoise", "--train", "train.h5", "--test", "test.h5", "--height", "8",
         "--width", "8", "--train-copies", "4", "--test-copies", "2"],
        [pdsp, "gen", "denoise", "--train", "shared.h5", "--height", "6", "--width", "6",
         "--params", "shared", "--train-copies", "3", "--noise", "bimodal"],
        [pdsp, "train", "--data", "train.h5", "--out", "model.h5", "--max-iters", "3",
         "--checkpoint-dir", "ck", "--checkpoint-every", "1", "--keep-checkpoints", "3"],
        [pdsp, "predict", "--data", "test.h5", "--model", "model.h5", "--out", "pred.h5"],
    ]
    for command in steps:
        code, stderr = run(command, env, timeout, cwd=base)
        if code != 0:
            sys.exit(f"setting up the valid files failed: {' '.join(command)}: {stderr}")
    # Optional arrays (counting numbers and a loss table) on a copy, so their readers are fuzzed.
    shutil.copy(path("shared.h5"), path("counted.h5"))
    with h5py.File(path("counted.h5"), "r+") as f:
        variables = f["/vars/card"].shape[0]
        factors = f["/factors/var_ptr"].shape[0] - 1
        states = int(f["/vars/card"][:].sum())
        f["/vars/counting"] = np.full(variables, 0.5)
        f["/factors/counting"] = np.full(factors, 1.0)
        f["/vars/loss"] = np.linspace(0.0, 1.0, states)
    write_compact(path("compact.h5"))
    command = [pdsp, "train", "--data", "compact.h5", "--out", "compact_model.h5",
               "--max-iters", "3"]
    code, stderr = run(command, env, timeout, cwd=base)
    if code != 0:
        sys.exit(f"setting up the valid files failed: {' '.join(command)}: {stderr}")
    checkpoint = sorted(n for n in os.listdir(path("ck")) if n.startswith("ckpt-"))[-1]
    return {
        # Format 2 as often as format 1.
        "data": [path("train.h5"), path("counted.h5"), path("compact.h5"), path("compact.h5")],
        "models": {"compact.h5": path("compact_model.h5")},
        "model": [path("model.h5"), path("compact_model.h5")],
        # The data each model predicts on (the model of compact.h5 fits only it).
        "model_data": {"model.h5": path("test.h5"), "compact_model.h5": path("compact.h5")},
        "prediction": [path("pred.h5")],
        "checkpoint": [os.path.join(path("ck"), checkpoint)],
        "train": path("train.h5"),
        "test": path("test.h5"),
        "shared": path("shared.h5"),
        "valid_model": path("model.h5"),
    }


def write_compact(path):
    """A format 2 data set written with h5py to docs/file-format.md, as an outside tool would:
    chains of 3-state variables reading real-valued observation rows (dim 4), a shared
    transition table, and one variable per chain with a per-state table instead."""
    rng = np.random.default_rng(5)
    lengths = [3, 5, 2, 4]
    variables = sum(lengths)
    factors = sum(n - 1 for n in lengths)
    starts = np.cumsum([0] + lengths)
    pairs = np.array([[v, v + 1] for s, n in zip(starts, lengths) for v in range(s, s + n - 1)])
    entries = 2 * variables
    with h5py.File(path, "w") as f:
        f.attrs["format"] = np.bytes_("pdsp-dataset")
        f.attrs["format_version"] = 2
        f.attrs["num_params"] = 3 * 4 + 9 + 3
        f["/examples/var_offset"] = starts.astype(np.int64)
        f["/examples/factor_offset"] = np.cumsum([0] + [n - 1 for n in lengths]).astype(np.int64)
        f["/examples/obs_offset"] = starts.astype(np.int64)
        f["/vars/card"] = np.full(variables, 3, np.int32)
        f["/vars/label"] = rng.integers(0, 3, variables).astype(np.int32)
        f["/factors/var_ptr"] = np.arange(0, 2 * factors + 1, 2, dtype=np.int64)
        f["/factors/vars"] = pairs.reshape(-1).astype(np.int64)
        f["/obs/ptr"] = np.arange(0, entries + 1, 2, dtype=np.int64)
        f["/obs/index"] = np.tile(np.array([0, 3], np.int32), variables)
        f["/obs/value"] = rng.normal(size=entries)
        f["/var_types/param_offset"] = np.array([0, 21], np.int64)
        f["/var_types/dim"] = np.array([4, 0], np.int32)
        types = np.zeros(variables, np.int32)
        types[starts[:-1]] = 1
        f["/vars/type"] = types
        f["/vars/obs_row"] = np.where(types == 0, np.arange(variables), -1).astype(np.int64)
        f["/factor_types/param_offset"] = np.array([12], np.int64)
        f["/factor_types/dim"] = np.array([0], np.int32)
        f["/factors/type"] = np.zeros(factors, np.int32)


# ---- Mutations. Each returns a description. ----

def flip_bytes(path, rng):
    data = bytearray(open(path, "rb").read())
    places = []
    for _ in range(rng.randint(1, 8)):
        offset = rng.randrange(len(data))
        data[offset] ^= rng.randint(1, 255)
        places.append(offset)
    open(path, "wb").write(bytes(data))
    return "flip bytes at " + ",".join(map(str, sorted(places)))


def truncate(path, rng):
    size = os.path.getsize(path)
    keep = rng.randrange(size)
    with open(path, "r+b") as f:
        f.truncate(keep)
    return f"truncate to {keep} of {size} bytes"


def overwrite_run(path, rng):
    data = bytearray(open(path, "rb").read())
    start = rng.randrange(len(data))
    length = rng.randint(1, 64)
    fill = rng.choice([0x00, 0xFF])
    data[start:start + length] = bytes([fill]) * len(data[start:start + length])
    open(path, "wb").write(bytes(data))
    return f"overwrite {length} bytes at {start} with {fill:#04x}"


# Bytes are only ever changed in files pdsp wrote, and pdsp writes every string attribute
# fixed-length: no mutant damages a variable-length string's heap, which crashes libhdf5 1.10
# itself (h5dump and h5py too) and is outside what pdsp can check (docs/file-format.md). Structured
# mutants may store variable-length strings through h5py, but their bytes are never flipped.
BYTE_MUTATIONS = [flip_bytes, flip_bytes, truncate, overwrite_run]


def datasets_of(f):
    names = []
    f.visititems(lambda name, item: names.append("/" + name) if isinstance(item, h5py.Dataset)
                 else None)
    return sorted(names)


def replace(f, name, values, **options):
    del f[name]
    f.create_dataset(name, data=values, **options)


def wrong_class(f, rng):
    name = rng.choice(datasets_of(f))
    values = f[name][:]
    other = values.astype(np.float64) if values.dtype.kind in "iu" else values.astype(np.int64)
    replace(f, name, other)
    return f"{name} stored as {other.dtype}"


def narrow_or_unsigned(f, rng):
    integer = [n for n in datasets_of(f) if f[n].dtype.kind in "iu"]
    if not integer:
        return wrong_class(f, rng)
    name = rng.choice(integer)
    dtype = rng.choice([np.int8, np.uint16, np.uint32, np.uint64, np.int16])
    replace(f, name, f[name][:].astype(dtype))
    return f"{name} stored as {np.dtype(dtype)}"


def two_dimensional(f, rng):
    name = rng.choice(datasets_of(f))
    values = f[name][:]
    shape = rng.choice([(values.size, 1), (1, values.size)])
    replace(f, name, values.reshape(shape))
    return f"{name} reshaped to {shape}"


def non_finite_value(f, rng):
    floats = [n for n in datasets_of(f) if f[n].dtype.kind == "f" and f[n].size > 0]
    if not floats:
        return wrong_class(f, rng)
    name = rng.choice(floats)
    values = f[name][:]
    index = rng.randrange(values.size)
    value = rng.choice([np.nan, np.inf, -np.inf, 1e308, -1e308, 1e300, 5e-324])
    values[index] = value
    replace(f, name, values)
    return f"{name}[{index}] = {value}"


def extreme_integer(f, rng):
    integer = [n for n in datasets_of(f) if f[n].dtype.kind in "iu" and f[n].size > 0]
    if not integer:
        return non_finite_value(f, rng)
    name = rng.choice(integer)
    values = f[name][:].astype(np.int64)
    index = rng.randrange(values.size)
    value = rng.choice([-1, 0, 2**31 - 1, 2**31, 2**40, -2**63, 2**63 - 1, 2**63 - 8,
                        int(values.max()) + 1, 3, 65536])
    values[index] = value
    replace(f, name, values)
    return f"{name}[{index}] = {value}"


# Format 2's sizes and offsets, where a sum or product of values read from the file could pass
# 2^63 (issue 37, part 7: a /factor_types/param_offset of 2^63 - 1 wrapped and was let through).
# The type blocks' offsets (half of the time) and dims: offset + states * dim is made of them.
COMPACT_SIZES = ["/var_types/param_offset", "/factor_types/param_offset"] * 5 + [
                 "/var_types/dim", "/factor_types/dim"] * 2 + ["/vars/obs_row", "/factors/obs_row", "/examples/obs_offset",
                 "/obs/ptr", "/obs/index", "/vars/type", "/factors/type"]


def compact_near_overflow(f, rng):
    """An entry of a format 2 size or offset set to a huge value, near 2^63 or just past
    @num_params; a file without a compact part gets an extreme integer instead."""
    names = [n for n in COMPACT_SIZES if n in f and f[n].size > 0]
    if not names:
        return extreme_integer(f, rng)
    name = rng.choice(names)
    values = f[name][:]
    index = rng.randrange(values.size)
    limit = np.iinfo(values.dtype).max
    num_params = int(f.attrs["num_params"])
    value = rng.choice([limit, limit - 7, limit - num_params + 1, limit // 2 + 1] * 2 +
                       [limit // 4, 2**31 - 1, num_params - 1, num_params, int(values.max()) + 1,
                        np.iinfo(values.dtype).min])
    values[index] = min(value, limit)
    replace(f, name, values)
    return f"{name}[{index}] = {values[index]}"


def offsets_out_of_order(f, rng):
    offsets = [n for n in datasets_of(f) if n.endswith(("_offset", "_ptr")) and f[n].size > 2]
    if not offsets:
        return extreme_integer(f, rng)
    name = rng.choice(offsets)
    values = f[name][:]
    i = rng.randrange(values.size - 1)
    j = rng.choice([i + 1, rng.randrange(values.size)])
    values[i], values[j] = values[j], values[i]
    replace(f, name, values)
    return f"{name}: entries {i} and {j} swapped"


def length_changed(f, rng):
    name = rng.choice(datasets_of(f))
    values = f[name][:]
    change = rng.choice(["empty", "one less", "one more"])
    if change == "empty":
        values = values[:0]
    elif change == "one less":
        values = values[:-1]
    else:
        values = np.concatenate([values, values[-1:] if values.size else np.zeros(1, values.dtype)])
    replace(f, name, values)
    return f"{name} {change}"


def huge_sparse_dataset(f, rng):
    """A chunked dataset whose chunks were never written: any length in a few bytes."""
    name = rng.choice(datasets_of(f))
    dtype = f[name].dtype
    length = rng.choice([2**31, 2**40, 2**50])
    del f[name]
    f.create_dataset(name, shape=(length,), dtype=dtype, chunks=(1024,))
    return f"{name} claims {length} values"


def dataset_removed(f, rng):
    name = rng.choice(datasets_of(f))
    del f[name]
    return f"{name} removed"


def attribute_removed(f, rng):
    name = rng.choice(sorted(f.attrs.keys()))
    del f.attrs[name]
    return f"@{name} removed"


def attribute_wrong_type(f, rng):
    name = rng.choice(sorted(f.attrs.keys()))
    value = rng.choice([np.float64(2.5), np.int64(7), "text", np.array([1, 2, 3]),
                        np.array(["a", "b"], dtype=h5py.string_dtype()), np.int8(-1)])
    del f.attrs[name]
    f.attrs[name] = value
    return f"@{name} = {value!r}"


def attribute_value(f, rng):
    """A plausible-looking but wrong value of a numeric attribute, by name where it matters."""
    numeric = [n for n in sorted(f.attrs.keys())
               if np.asarray(f.attrs[n]).dtype.kind in "iuf"]
    if not numeric:
        return attribute_wrong_type(f, rng)
    name = rng.choice(numeric)
    if name == "num_params":
        value = np.int64(rng.choice([2**31 - 1, 2**31, 2**40, 2**63 - 1, 0, -1, 10**6,
                                     int(f.attrs[name]) - 1, int(f.attrs[name]) + 1]))
    elif name == "epsilon":
        value = np.float64(rng.choice([np.inf, np.nan, -1.0, 1e-300, 0.0, 1e300, 1e-12]))
    elif np.asarray(f.attrs[name]).dtype.kind == "f":
        value = np.float64(rng.choice([-1.0, 0.0, 1e308, np.nan, np.inf]))
    else:
        value = np.int64(rng.choice([-1, 0, 2**31 - 1, 2**62]))
    f.attrs[name] = value
    return f"@{name} = {value}"


def theta_entry(f, rng):
    if "/theta" not in f:
        return non_finite_value(f, rng)
    values = f["/theta"][:]
    index = rng.randrange(values.size)
    value = rng.choice([1e308, -1e308, 1e200, np.nan, np.inf])
    values[index] = value
    replace(f, "/theta", values)
    return f"/theta[{index}] = {value}"


STRUCTURED_MUTATIONS = {
    "data": [wrong_class, narrow_or_unsigned, two_dimensional, non_finite_value, extreme_integer,
             offsets_out_of_order, offsets_out_of_order, length_changed, huge_sparse_dataset,
             dataset_removed, attribute_removed, attribute_wrong_type, attribute_value,
             attribute_value, compact_near_overflow],
    "model": [theta_entry, theta_entry, wrong_class, two_dimensional, length_changed,
              huge_sparse_dataset, dataset_removed, attribute_removed, attribute_wrong_type,
              attribute_value, attribute_value],
    "prediction": [wrong_class, two_dimensional, non_finite_value, length_changed,
                   dataset_removed, attribute_removed, attribute_wrong_type],
    "checkpoint": [non_finite_value, theta_entry, wrong_class, two_dimensional, length_changed,
                   huge_sparse_dataset, dataset_removed, attribute_removed, attribute_wrong_type,
                   attribute_value],
}
TARGETS = ["data"] * 9 + ["model"] * 4 + ["checkpoint"] * 4 + ["prediction"] * 3


def mutate(base, target, directory, rng):
    """Copies a valid file of `target` into `directory` and damages it; returns (path, what)."""
    original = rng.choice(base[target])
    path = os.path.join(directory, "mutant-" + os.path.basename(original))
    shutil.copy(original, path)
    compact_data = target == "data" and "compact" in os.path.basename(original)
    if rng.random() < (0.25 if compact_data else 0.5):
        what = rng.choice(BYTE_MUTATIONS)(path, rng)
        return path, "bytes", f"{os.path.basename(original)}: {what}"
    with h5py.File(path, "r+") as f:
        # A format 2 data file's structured mutant damages its compact sizes often: few random
        # mutations reach them, and those that do seldom pick a value near 2^63.
        compact = compact_data and rng.random() < 0.6
        what = (compact_near_overflow if compact else rng.choice(STRUCTURED_MUTATIONS[target]))(
            f, rng)
    return path, "structured", f"{os.path.basename(original)}: {what}"


# Settings that send the damaged values through other kernels: the general ones (eps = 0,
# Bethe counting numbers, or asked for), the file's counting numbers, a likelihood baseline.
TRAIN_SETTINGS = [[], [], ["--epsilon", "0"], ["--counting", "bethe"], ["--kernels", "general"],
                  ["--counting", "file"], ["--learner", "lbp-lbfgs"], ["--learner", "mf-sgd"]]
PREDICT_SETTINGS = [[], [], ["--epsilon", "0"], ["--inference", "lbp"],
                    ["--inference", "mean-field"]]


def commands_for(target, mutant, base, out, pdsp, rng):
    o = lambda name: os.path.join(out, name)
    if target == "data":
        original = os.path.basename(mutant).removeprefix("mutant-")
        model_for = base["models"].get(original, base["valid_model"])
        commands = [[pdsp, "info", mutant],
                    [pdsp, "train", "--data", mutant, "--out", o("m.h5"), "--max-iters", "2"] +
                    rng.choice(TRAIN_SETTINGS)]
        if rng.random() < 0.5:
            commands.append([pdsp, "predict", "--data", mutant, "--model", model_for,
                             "--out", o("p.h5")] + rng.choice(PREDICT_SETTINGS))
        return commands
    if target == "model":
        data = base["model_data"][os.path.basename(mutant).removeprefix("mutant-")]
        return [[pdsp, "predict", "--data", data, "--model", mutant, "--out", o("p.h5")] +
                rng.choice(PREDICT_SETTINGS)]
    if target == "prediction":
        return [[pdsp, "info", mutant],
                [pdsp, "predict", "--data", base["test"], "--model", mutant, "--out", o("p.h5")]]
    resume = [pdsp, "train", "--data", base["train"], "--out", o("m.h5"), "--resume", mutant,
              "--max-iters", "4"]
    if rng.random() < 0.5:
        resume += ["--checkpoint-dir", o("ck"), "--checkpoint-every", "1"]
    return [resume]


def non_finite_outputs(out):
    """Outputs of a successful run that hold values that are not finite (NaN marginals)."""
    found = []
    for name, dataset in (("p.h5", "/prediction/marginal"), ("m.h5", "/theta")):
        path = os.path.join(out, name)
        if os.path.exists(path):
            with h5py.File(path, "r") as f:
                if not np.isfinite(f[dataset][:]).all():
                    found.append(f"{name}:{dataset}")
    return found


# Faults of libhdf5 1.10.8 itself, not of pdsp: some flipped bytes in an object header's
# attribute messages make its decoder read past its buffer inside H5Aexists or H5Aiterate.
# run/fuzz_readers.sh 3000 1 found one: mutant 496 (model.h5, bytes flipped at 1647, 1905, 4555,
# 4814), a heap-buffer-overflow in H5O__msg_iterate_real below H5Aexists; a C program that only
# opens that file and calls H5Aexists makes the same invalid read under valgrind, and the release
# build of pdsp reads past the buffer unnoticed and predicts. (Earlier runs also hit a SEGV below
# the same function.) pdsp cannot check a header before libhdf5 decodes it, so such a run counts
# as "libhdf5": listed with its seed, not a failure. Only byte mutants qualify, and only when the
# crash is in libhdf5's code: the sanitizer's first frame outside itself, or, without a stack,
# h5dump crashing on the same file.
def died_in_libhdf5(code, stderr, mutant, timeout):
    if code in ("timeout", 0, 2):
        return False
    frames = [line for line in stderr.splitlines() if re.match(r"^\s*#\d+ 0x", line)]
    # Without the sanitizer, Open MPI's own handler prints "[host:pid] [ k] library(+0x...)";
    # frame 0 is libc's signal trampoline.
    frames += [line for line in stderr.splitlines() if re.match(r"^\[[^]]*\] \[ *[1-9]\d*\] ", line)]
    own = [f for f in frames if "libsanitizer" not in f and "__interceptor_" not in f]
    if own:
        return "libhdf5" in own[0]
    h5dump, _ = run(["h5dump", "-A", mutant], dict(os.environ), timeout)
    return h5dump != "timeout" and (h5dump < 0 or h5dump > 128)


def judge(code, stderr, under_mpirun, inputs_changed, out, files_before):
    """The list of broken rules (empty: the run is fine)."""
    broken = []
    stderr = "\n".join(line for line in stderr.splitlines() if not ASAN_REFUSED_MALLOC.match(line))
    if code == "timeout":
        return ["timeout"]
    if code == 0:
        broken += ["not finite: " + name for name in non_finite_outputs(out)]
    if code != 0 and code != 2:
        broken.append(f"exit {code}" + (" (signal)" if code < 0 or code > 128 else ""))
    lines = [line for line in stderr.splitlines()]
    errors = [line for line in lines if line.startswith("pdsp: error")]
    for marker in BAD_STDERR:
        if marker in stderr:
            broken.append(marker)
    if code == 2:
        if len(errors) != 1:
            broken.append(f"{len(errors)} error lines")
        elif ".h5" not in errors[0] and "/" not in errors[0]:
            broken.append("error names no file")
        others = [line for line in lines if not line.startswith("pdsp: error")
                  and not (under_mpirun and MPIRUN_NOTICE.match(line))]
        if others:
            broken.append("other stderr output: " + others[0])
        left = sorted(set(os.listdir(out)) - files_before)
        left = [name for name in left if name != "ck" or os.listdir(os.path.join(out, "ck"))]
        if left:
            broken.append("a failed run left " + ",".join(left))
    if inputs_changed:
        broken.append("input changed: " + ",".join(inputs_changed))
    if any(".tmp." in name for name in os.listdir(out)):
        broken.append("temporary file left")
    return broken


def fuzz_one(index, args, base, work):
    rng = random.Random(args.seed * 1_000_003 + index)
    directory = os.path.join(work, f"m{index}")
    os.makedirs(directory)
    target = rng.choice(TARGETS)
    mutant, method, what = mutate(base, target, directory, rng)
    under_mpirun = args.mpirun and args.mpi_every > 0 and index % args.mpi_every == 0
    results = []
    for command in commands_for(target, mutant, base, directory, args.pdsp, rng):
        out_files = set(os.listdir(directory))
        outputs = {os.path.join(directory, name) for name in ("m.h5", "p.h5")}
        inputs = [p for p in command if p.endswith(".h5") and p not in outputs]
        before = {p: digest(p) for p in inputs}
        # Open MPI's session directory of its own: runs that start and end at once otherwise
        # race to create and remove the shared one in /tmp ("A call to mkdir was unable to
        # create the desired directory", seed 1, mutant 584).
        session = os.path.join(work, "sessions", f"m{index}")
        os.makedirs(session, exist_ok=True)
        env = dict(os.environ, OMP_NUM_THREADS="1", OMP_WAIT_POLICY="passive",
                   OMPI_MCA_orte_tmpdir_base=session)
        if under_mpirun:
            command = [args.mpirun, "--allow-run-as-root", "--oversubscribe", "--bind-to", "none",
                       "-np", "2"] + command
        else:
            env.update(SERIAL_ENV)
        code, stderr = run(command, env, args.timeout)
        changed = [os.path.basename(p) for p in inputs if digest(p) != before[p]]
        broken = judge(code, stderr, under_mpirun, changed, directory, out_files)
        outcome = "ok" if code == 0 else ("error" if code == 2 else str(code))
        if broken and method == "bytes" and died_in_libhdf5(code, stderr, mutant, args.timeout):
            outcome, broken = "libhdf5", []
        results.append({
            "index": index, "target": target, "method": method, "what": what,
            "command": command[command.index(args.pdsp) + 1], "mpirun": under_mpirun,
            "outcome": "FAIL" if broken else outcome, "broken": broken, "mutant": mutant,
            "stderr": stderr.strip().splitlines()[:6], "argv": command,
        })
        for name in ("m.h5", "p.h5"):
            if os.path.exists(os.path.join(directory, name)):
                os.remove(os.path.join(directory, name))
        shutil.rmtree(os.path.join(directory, "ck"), ignore_errors=True)
    if not any(r["broken"] or r["outcome"] == "libhdf5" for r in results) and not args.keep:
        shutil.rmtree(directory)
    shutil.rmtree(os.path.join(work, "sessions", f"m{index}"), ignore_errors=True)
    return results


def print_table(results):
    table = collections.defaultdict(collections.Counter)
    for r in results:
        row = f"{r['target']:<10} {r['method']:<10} {r['command']:<7} " + ("mpi" if r["mpirun"] else "")
        table[row][r["outcome"]] += 1
    outcomes = ["ok", "error", "libhdf5", "FAIL"]
    print(f"{'target':<10} {'mutation':<10} {'command':<12}" +
          "".join(f"{o:>8}" for o in outcomes))
    totals = collections.Counter()
    for row in sorted(table):
        print(f"{row:<34}" + "".join(f"{table[row][o]:>8}" for o in outcomes))
        totals.update(table[row])
    print(f"{'total':<34}" + "".join(f"{totals[o]:>8}" for o in outcomes))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pdsp", required=True, help="the pdsp executable")
    parser.add_argument("--mpirun", default="", help="mpirun, to run some mutants on 2 ranks")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--count", type=int, default=150, help="mutants")
    parser.add_argument("--only", type=int, default=-1, help="run mutant INDEX alone")
    parser.add_argument("--mpi-every", type=int, default=30,
                        help="every Nth mutant runs under mpirun -np 2 (0: none)")
    parser.add_argument("--workers", type=int, default=2, help="mutants run at once")
    parser.add_argument("--timeout", type=float, default=60, help="seconds per run")
    parser.add_argument("--work", default="", help="directory for the files (default: temporary)")
    parser.add_argument("--keep", action="store_true", help="keep every mutant, not only failures")
    args = parser.parse_args()
    args.pdsp = os.path.abspath(args.pdsp)  # the valid files are made in their own directory

    work = args.work or tempfile.mkdtemp(prefix="pdsp-fuzz-")
    os.makedirs(work, exist_ok=True)
    env = dict(os.environ, **SERIAL_ENV)
    base = make_base_files(args.pdsp, work, env, args.timeout)
    indices = [args.only] if args.only >= 0 else list(range(args.count))
    results = []
    with concurrent.futures.ThreadPoolExecutor(max_workers=args.workers) as pool:
        for done, batch in enumerate(pool.map(lambda i: fuzz_one(i, args, base, work), indices)):
            results.extend(batch)
            if len(indices) >= 1000 and (done + 1) % (len(indices) // 10) == 0:
                failed = sum(1 for r in results if r["broken"])
                print(f"{done + 1} of {len(indices)} mutants, {failed} runs failed", file=sys.stderr,
                      flush=True)
    print_table(results)
    for r in results:
        if r["outcome"] == "libhdf5":
            print(f"\nlibhdf5 fault, not counted (--seed {args.seed} --only {r['index']}): "
                  f"{r['what']}\n  {r['mutant']}")
    failures = [r for r in results if r["broken"]]
    for r in failures:
        print(f"\nFAIL mutant {r['index']} (--seed {args.seed} --only {r['index']}): {r['what']}")
        print(f"  {' '.join(r['argv'])}")
        print(f"  broken: {'; '.join(r['broken'])}")
        for line in r["stderr"]:
            print(f"  | {line}")
    print(f"\n{len(indices)} mutants, {len(results)} runs, {len(failures)} failed "
          f"(seed {args.seed}; files in {work})")
    if not failures and not args.work and not args.keep and not any(
            r["outcome"] == "libhdf5" for r in results):
        shutil.rmtree(work)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
