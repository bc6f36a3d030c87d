#!/usr/bin/env python3
"""`pdsp train` on data with non-local terms (learning/psi_fit.hpp): psi learned after theta on
the training set or on --dev-data, written to the model and used by predict; --psi-epochs 0
leaves it out; refusals in one line before training; two ranks agree with one; a run resumed
from a checkpoint learns the same weights bitwise.

    nonlocal_training.py --pdsp PATH --mpirun PATH
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import unittest

import h5py
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))

from pdsp import (Estimator, Example, NonlocalTerms, SparseRows, read_model,  # noqa: E402
                  write_dataset)

PDSP = MPIRUN = None  # set by the command line
WORDS = [[0, 1, 2], [2, 1], [1, 1, 0, 2], [2, 0]]
STATES = 3


def examples(seed, flip):
    """Twenty dictionary words as chains whose unary features are noisy views of the letters
    (a `flip` share of them show another letter), so that theta alone misreads some."""
    rng = np.random.default_rng(seed)
    made = []
    for i in range(20):
        letters = WORDS[i % len(WORDS)]
        length = len(letters)
        shown = [s if rng.random() > flip else int(rng.integers(STATES)) for s in letters]
        states = STATES * length
        columns = [shown[v] * STATES + s for v in range(length) for s in range(STATES)]
        entries = STATES * STATES * (length - 1)
        made.append(Example(card=[STATES] * length, label=letters,
                            factors=[(v, v + 1) for v in range(length - 1)],
                            var_features=SparseRows(np.arange(states + 1), columns,
                                                    np.ones(states)),
                            factor_features=SparseRows(np.arange(entries + 1),
                                                       9 + np.arange(entries) % 9,
                                                       np.ones(entries))))
    return made


def dictionary(words=WORDS):
    return NonlocalTerms(num_states=STATES, words=words, dictionary=("unigram", "position"))


class NonlocalTrainingTest(unittest.TestCase):
    def setUp(self):
        self.folder = tempfile.TemporaryDirectory()
        self.train = self.path("train.h5")
        write_dataset(self.train, examples(1, 0.3), 18, nonlocal_terms=dictionary())

    def tearDown(self):
        self.folder.cleanup()

    def path(self, name):
        return os.path.join(self.folder.name, name)

    def run_pdsp(self, *args, launcher=()):
        return subprocess.run([*launcher, PDSP, *args], capture_output=True, text=True)

    def fit(self, out, *flags, launcher=()):
        result = self.run_pdsp("train", "--data", self.train, "--out", out, "--max-iters", "30",
                               "--threads", "1", *flags, launcher=launcher)
        self.assertEqual(result.returncode, 0, result.stdout + result.stderr)
        with h5py.File(out, "r") as file:
            psi = file["nonlocal/psi"][()] if "nonlocal/psi" in file else None
            return result, psi, file["theta"][()]

    def test_psi_is_learned_written_and_predicted_with(self):
        metrics = self.path("run.jsonl")
        result, psi, _ = self.fit(self.path("m.h5"), "--metrics", metrics)
        self.assertIn("learning the non-local weights", result.stdout)
        self.assertRegex(result.stdout, r"non-local weights: (stopped after 50 epochs "
                         r"\(--psi-epochs\)|converged: .*); kept epoch \d+ \(-log Q [0-9.]+ "
                         r"per example on " + self.train + r"\): psi_u [0-9.e-]+, psi_w")
        self.assertEqual(psi.shape, (2,))
        self.assertTrue(np.all(psi >= 0))
        self.assertGreater(psi[1], 0.5, "the labels are dictionary words: L^w weighs")
        with open(metrics) as file:
            end = [json.loads(line) for line in file][-1]
        self.assertEqual(end["psi_data"], self.train)
        self.assertGreater(end["psi_loss"], 0)
        self.assertLessEqual(end["psi_epochs_run"], 50)
        prediction = self.path("p.h5")
        result = self.run_pdsp("predict", "--data", self.train, "--model", self.path("m.h5"),
                               "--out", prediction)
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertIn("Bethe-RDA with the model's non-local weights", result.stdout)
        self.assertIn("exact MAP labels by dynamic programming", result.stdout)  # all chains
        _, none, _ = self.fit(self.path("plain.h5"), "--psi-epochs", "0")
        self.assertIsNone(none)
        # The package reads the weights, and its Estimator passes --dev-data on.
        np.testing.assert_array_equal(read_model(self.path("m.h5")).psi, psi)
        estimator = Estimator(pdsp=PDSP, max_iters=30, threads=1, verbose=0,
                              model_path=self.path("e.h5")).fit(self.train, dev_data=self.train)
        np.testing.assert_array_equal(read_model(estimator.model_path).psi, psi)

    def test_psi_is_learned_on_the_dev_set_when_given(self):
        dev = self.path("dev.h5")
        # The dev words are read without noise: L^w is worth less there.
        write_dataset(dev, examples(2, 0.0), 18, nonlocal_terms=dictionary())
        metrics = self.path("run.jsonl")
        _, on_train, theta = self.fit(self.path("a.h5"))
        _, on_dev, dev_theta = self.fit(self.path("b.h5"), "--dev-data", dev, "--metrics",
                                        metrics)
        np.testing.assert_array_equal(theta, dev_theta)
        self.assertFalse(np.array_equal(on_train, on_dev))
        with open(metrics) as file:
            self.assertEqual([json.loads(line) for line in file][-1]["psi_data"], dev)

    def test_a_cycle_decodes_by_max_product_with_the_same_labels_elsewhere(self):
        """One example closed into a loop: every example is decoded by max-product sweeps, and
        the chains, whose Bethe-RDA is their own, get the labels dynamic programming gives."""
        self.fit(self.path("m.h5"))
        looped = examples(1, 0.3)
        first = looped[0]  # 3 letters: a factor between the first and the last closes a loop
        rows = first.factor_features
        count = len(rows.ptr) - 1
        first.factors = list(first.factors) + [(0, len(first.label) - 1)]
        first.factor_features = SparseRows(np.arange(count + STATES * STATES + 1),
                                           np.concatenate([rows.index, 9 + np.arange(9)]),
                                           np.ones(count + STATES * STATES))
        cyclic = self.path("looped.h5")
        write_dataset(cyclic, looped, 18, nonlocal_terms=dictionary())
        labels = {}
        for name, data, decoder in [("chains", self.train, "exact MAP labels by dynamic "
                                     "programming"),
                                    ("looped", cyclic, "max-product sweeps (last change")]:
            out = self.path(name + "-p.h5")
            result = self.run_pdsp("predict", "--data", data, "--model", self.path("m.h5"),
                                   "--out", out)
            self.assertEqual(result.returncode, 0, result.stderr)
            self.assertIn(decoder, result.stdout)
            with h5py.File(out, "r") as file:
                labels[name] = file["prediction/label"][()]
        self.assertIn("1 examples with a cycle", result.stdout)
        chains_from = len(WORDS[0])  # the first example's variables come first
        np.testing.assert_array_equal(labels["looped"][chains_from:],
                                      labels["chains"][chains_from:])

    def test_refusals_are_one_line_before_training(self):
        other = self.path("other.h5")
        write_dataset(other, examples(2, 0.3), 18, nonlocal_terms=dictionary(WORDS[:3]))
        plain = self.path("plain.h5")
        write_dataset(plain, examples(2, 0.3), 18)
        cases = [
            (["--data", self.train, "--dev-data", other],
             other + ": /nonlocal: its non-local terms (states, templates or dictionary) differ "
             "from those of the training set " + self.train),
            (["--data", plain, "--dev-data", self.train],
             "--dev-data " + self.train + ": the training set " + plain +
             " has no non-local terms whose weights it could learn"),
            (["--data", self.train, "--dev-data", self.path("missing.h5"), "--psi-epochs", "0"],
             "--dev-data " + self.path("missing.h5") + ": --psi-epochs 0 learns no non-local "
             "weights; drop one of the two"),
            (["--data", self.train, "--learner", "mf-lbfgs"],
             "--learner mf-lbfgs: " + self.train + " has non-local terms, whose weights are "
             "learned after the primal-dual and domke learners only; use --psi-epochs 0"),
            (["--data", self.train, "--dev-data", self.path("missing.h5")],
             self.path("missing.h5")),
        ]
        # The model may not overwrite the dev set.
        with self.subTest("--out is the dev set"):
            result = self.run_pdsp("train", "--data", self.train, "--dev-data", other, "--out",
                                   other)
            self.assertEqual(result.returncode, 2, result.stderr)
            self.assertIn("--out " + other + ": is the input file of --dev-data", result.stderr)
        for flags, expected in cases:
            with self.subTest(flags=flags):
                result = self.run_pdsp("train", *flags, "--out", self.path("m.h5"))
                self.assertEqual(result.returncode, 2, result.stdout + result.stderr)
                self.assertIn(expected, result.stderr)
                self.assertEqual(len(result.stderr.strip().splitlines()), 1, result.stderr)
                self.assertNotIn(" iter ", result.stdout)
                self.assertFalse(os.path.exists(self.path("m.h5")))

    def test_predict_says_when_the_model_and_the_data_disagree_on_terms(self):
        self.fit(self.path("m.h5"))
        self.fit(self.path("plain_model.h5"), "--psi-epochs", "0")
        plain = self.path("plain.h5")
        write_dataset(plain, examples(2, 0.3), 18)
        for model, data, said in [
                ("plain_model.h5", self.train, "; the non-local terms of " + self.train +
                 " left out (the model has no /nonlocal/psi)"),
                ("m.h5", plain, "; the model's non-local weights unused (" + plain +
                 " has no non-local terms)")]:
            with self.subTest(model=model):
                result = self.run_pdsp("predict", "--data", data, "--model", self.path(model),
                                       "--out", self.path("p.h5"))
                self.assertEqual(result.returncode, 0, result.stderr)
                self.assertIn(said, result.stdout)
        # An empty weight array is damage, not "no weights".
        with h5py.File(self.path("m.h5"), "a") as file:
            del file["nonlocal/psi"]
            file["nonlocal/psi"] = np.zeros(0)
        result = self.run_pdsp("predict", "--data", self.train, "--model", self.path("m.h5"),
                               "--out", self.path("empty.h5"))
        self.assertEqual(result.returncode, 2, result.stdout)
        self.assertEqual(result.stderr.strip().splitlines(),
                         ["pdsp: error: " + self.path("m.h5") + ": /nonlocal/psi: is empty; a "
                          "model without non-local weights has no /nonlocal/psi"])
        self.assertFalse(os.path.exists(self.path("empty.h5")))

    def test_two_ranks_agree_with_one(self):
        _, one, theta = self.fit(self.path("one.h5"))
        _, two, two_theta = self.fit(self.path("two.h5"),
                                     launcher=(MPIRUN, "-np", "2", "--oversubscribe"))
        np.testing.assert_allclose(two_theta, theta, rtol=1e-8, atol=1e-10)
        np.testing.assert_allclose(two, one, rtol=1e-8, atol=1e-10)

    def test_a_resumed_run_learns_the_same_weights_bitwise(self):
        _, straight, theta = self.fit(self.path("straight.h5"))
        checkpoints = ["--checkpoint-dir", self.path("ck"), "--checkpoint-every", "1",
                       "--resume", "auto"]
        self.fit(self.path("first.h5"), *checkpoints, "--max-iters", "6")
        _, resumed, resumed_theta = self.fit(self.path("resumed.h5"), *checkpoints)
        np.testing.assert_array_equal(resumed_theta, theta)
        np.testing.assert_array_equal(resumed, straight)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--pdsp", required=True)
    parser.add_argument("--mpirun", required=True)
    known, rest = parser.parse_known_args()
    PDSP, MPIRUN = known.pdsp, known.mpirun
    unittest.main(argv=[sys.argv[0]] + rest, verbosity=2)
