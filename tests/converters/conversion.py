"""What the converter tests share: convert.py run in this process, its summary lines, the
one-line refusal check, a temporary work folder, HDF5 and text helpers, and the command line
every test file takes:

    FILE_test.py --data DIR [--pdsp PATH]

`--data` is ../shared/datasets (a test file that reads it exits 77, skipped, when it is absent);
`--pdsp`, a pdsp binary for the end-to-end tests (skipped without it).
"""
import argparse
import contextlib
import gzip
import io
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

import h5py

HERE = os.path.dirname(os.path.abspath(__file__))
DATASETS = os.path.join(HERE, "..", "..", "datasets")
CONVERT = os.path.join(DATASETS, "convert.py")
sys.path[:0] = [HERE, DATASETS]

import convert as convert_command  # noqa: E402

SKIPPED = 77
DATA = PDSP = WORK = None  # set by main()
SUMMARY = re.compile(r"^(\S+): (\d+) examples, (\d+) variables, (\d+) factors, (\d+) parameters, "
                     r"[0-9.]+ MB, [0-9.]+ s$")


def run_convert(*arguments):
    """convert.py's main in this process (a process costs 0.5 s of imports): (exit code,
    stdout, stderr). ProcessTest runs the real command."""
    stdout, stderr = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
        code = convert_command.main(list(map(str, arguments)))
    return subprocess.CompletedProcess(arguments, code, stdout.getvalue(), stderr.getvalue())


def convert(*arguments):
    """Runs a conversion that must succeed; returns {path: (examples, variables, factors,
    parameters)} from its summary lines."""
    done = run_convert(*arguments)
    assert done.returncode == 0, done.stderr
    return summary_sizes(done)


def summary_sizes(done):
    """{path: (examples, variables, factors, parameters)} from a conversion's summary lines."""
    lines = done.stdout.splitlines()
    assert all(SUMMARY.match(line) for line in lines), done.stdout
    return {m.group(1): tuple(map(int, m.groups()[1:])) for m in map(SUMMARY.match, lines)}


def assert_refused(test, arguments, *needles, output_flags=("--train", "--test")):
    """The conversion exits 2 with one line on stderr holding every needle, and writes nothing
    (to the outputs it gets through `output_flags`)."""
    outputs = [work(f"bad{flag[1:]}.h5") for flag in output_flags]
    done = run_convert(*arguments, *[x for pair in zip(output_flags, outputs) for x in pair])
    test.assertEqual(done.returncode, 2, done.stderr)
    test.assertEqual(len(done.stderr.splitlines()), 1, done.stderr)
    test.assertTrue(done.stderr.startswith("convert.py: error: "), done.stderr)
    for needle in needles:
        test.assertIn(needle, done.stderr)
    test.assertFalse(any(os.path.exists(path) for path in outputs))


def work(name):
    return os.path.join(WORK, name)


def read_all(path):
    with h5py.File(path, "r") as file:
        arrays = {}
        file.visititems(lambda name, item: arrays.__setitem__(name, item[()])
                        if isinstance(item, h5py.Dataset) else None)
        return arrays, dict(file.attrs)


def write_text(name, lines):
    opener = gzip.open if name.endswith(".gz") else open
    with opener(work(name), "wt") as file:
        file.writelines(line + "\n" for line in lines)
    return work(name)


def head_lines(path, count):
    with open(path) as file:
        return [next(file).rstrip("\n") for _ in range(count)]


def main(needs_data=True):
    """Parses the command line, makes the work folder and runs the calling file's tests."""
    global DATA, PDSP, WORK
    parser = argparse.ArgumentParser()
    parser.add_argument("--data", required=True, help="the public data sets (../shared/datasets)")
    parser.add_argument("--pdsp", help="a pdsp binary for the end-to-end tests")
    known, rest = parser.parse_known_args()
    if needs_data and not os.path.isdir(known.data):
        print(f"skipped: no public data sets at {known.data} (they live in ../shared/datasets "
              "beside the checkout)")
        sys.exit(SKIPPED)
    DATA, PDSP = known.data, known.pdsp
    WORK = tempfile.mkdtemp(prefix="pdsp_converters_")
    try:
        unittest.main(module="__main__", argv=[sys.argv[0]] + rest, verbosity=2)
    finally:
        shutil.rmtree(WORK)
