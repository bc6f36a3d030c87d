#!/usr/bin/env python3
"""Tests of `python3 -m pdsp plot` (python/pdsp/plot.py): pictures of real metrics files written
by pdsp train, several runs labelled by their differing settings, log axes where values span
decades, and one-line errors (exit 1) on a damaged file, a file with no iterations and an
output that cannot be written.

    plot_test.py --pdsp PATH
"""
import argparse
import os
import shutil
import struct
import subprocess
import sys
import tempfile
import unittest

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
PYTHON_DIR = os.path.join(HERE, "..", "..", "python")
sys.path.insert(0, PYTHON_DIR)
sys.path.insert(0, HERE)

import pdsp  # noqa: E402
from package_test import chains  # noqa: E402
from pdsp.plot import run_labels, set_scale, spans_decades  # noqa: E402

PDSP = None  # set by --pdsp


def png_size(path):
    """(width, height) from a PNG's header; fails the caller's test if it is not a PNG."""
    with open(path, "rb") as picture:
        head = picture.read(24)
    assert head[:8] == b"\x89PNG\r\n\x1a\n", f"{path} is not a PNG"
    return struct.unpack(">II", head[16:24])


class PlotTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.folder = tempfile.TemporaryDirectory()
        train = os.path.join(cls.folder.name, "train.h5")
        chains(30, seed=3).write(train)
        cls.runs = []
        for C in ("0.1", "1"):
            metrics = os.path.join(cls.folder.name, f"C{C}.jsonl")
            subprocess.run([PDSP, "train", "--data", train, "--out",
                            os.path.join(cls.folder.name, f"m{C}.h5"), "--C", C, "--threads",
                            "1", "--max-iters", "30", "--metrics", metrics, "--quiet"],
                           check=True, capture_output=True)
            cls.runs.append(metrics)

    @classmethod
    def tearDownClass(cls):
        cls.folder.cleanup()

    def plot(self, *arguments):
        environment = dict(os.environ, PYTHONPATH=PYTHON_DIR)
        return subprocess.run([sys.executable, "-m", "pdsp", "plot", *arguments],
                              capture_output=True, text=True, env=environment)

    def path(self, name):
        return os.path.join(self.folder.name, name)

    def test_real_runs_make_a_png(self):
        out = self.path("runs.png")
        done = self.plot(*self.runs, "-o", out)
        self.assertEqual(done.returncode, 0, done.stderr)
        width, height = png_size(out)
        self.assertGreater(width, 500)
        self.assertGreater(height, 500)
        one = self.path("one.png")
        self.assertEqual(self.plot(self.runs[0], "-o", one).returncode, 0)
        self.assertNotEqual(open(one, "rb").read(), open(out, "rb").read())

    def test_labels_name_the_settings_that_differ(self):
        runs = [pdsp.read_metrics(path) for path in self.runs]
        self.assertEqual(run_labels(runs), ["primal-dual C=0.1", "primal-dual C=1"])
        self.assertEqual(run_labels(runs[:1]), ["primal-dual epsilon=1 C=0.1"])
        copy = shutil.copy(self.runs[0], self.path("copy.jsonl"))
        same = run_labels([runs[0], pdsp.read_metrics(copy)])
        self.assertEqual(same, ["primal-dual (C0.1.jsonl)", "primal-dual (copy.jsonl)"])

    def test_log_axes_only_where_values_span_decades(self):
        self.assertTrue(spans_decades([np.array([1e-6, 1.0, np.nan])]))
        self.assertFalse(spans_decades([np.array([1.0, 50.0])]))
        self.assertFalse(spans_decades([np.array([-1.0, 1e6])]), "no log axis under zero")
        self.assertFalse(spans_decades([np.array([np.nan])]))
        chosen = []
        record = lambda scale, **options: chosen.append((scale, options))  # noqa: E731
        set_scale(None, [np.array([-2.6e11, -1e3, 3e4, 2.9e4])], record)  # D far below F
        self.assertEqual(chosen, [("symlog", {"linthresh": 1e3})])
        chosen.clear()
        set_scale(None, [np.array([1e-4, 1.0])], record)
        set_scale(None, [np.array([-1.0, 2.0])], record)
        self.assertEqual(chosen, [("log", {})], "linear where nothing spans decades")

    def test_a_run_still_being_written_is_drawn(self):
        partial = self.path("partial.jsonl")
        text = open(self.runs[0]).read()
        with open(partial, "w") as out:
            out.write(text[:text.rindex("\n", 0, len(text) - 1) - 20])  # cut inside a line
        self.assertEqual(self.plot(partial, "-o", self.path("partial.png")).returncode, 0)

    def assert_one_line_error(self, done, *fragments):
        self.assertEqual(done.returncode, 1, done.stdout)
        lines = done.stderr.strip().splitlines()
        self.assertEqual(len(lines), 1, done.stderr)
        for fragment in fragments:
            self.assertIn(fragment, lines[0])

    def test_a_damaged_file_fails_with_one_line(self):
        damaged = self.path("damaged.jsonl")
        lines = open(self.runs[0]).read().splitlines(keepends=True)
        lines[3] = lines[3][: len(lines[3]) // 2] + "\n"
        with open(damaged, "w") as out:
            out.writelines(lines)
        out = self.path("damaged.png")
        self.assert_one_line_error(self.plot(damaged, "-o", out), "damaged.jsonl: line 4")
        self.assertFalse(os.path.exists(out))

    def test_no_iterations_missing_file_and_unwritable_output(self):
        header_only = self.path("header.jsonl")
        with open(self.runs[0]) as source, open(header_only, "w") as out:
            out.write(source.readline())
        self.assert_one_line_error(self.plot(header_only, "-o", self.path("h.png")),
                                   "header.jsonl: no iteration records")
        self.assert_one_line_error(self.plot(self.path("absent.jsonl"), "-o", self.path("a.png")),
                                   "absent.jsonl: cannot read")
        self.assert_one_line_error(self.plot(self.runs[0], "-o", self.path("no/dir/x.png")),
                                   "no/dir/x.png: cannot write")


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--pdsp", required=True)
    arguments, rest = parser.parse_known_args()
    PDSP = os.path.abspath(arguments.pdsp)
    unittest.main(argv=[sys.argv[0]] + rest)
