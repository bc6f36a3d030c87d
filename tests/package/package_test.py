#!/usr/bin/env python3
"""Tests of the Python package's estimator and readers (python/pdsp) against the pdsp binary:
a fit / predict / score round trip on a written data set (checked against pdsp predict's own
report and the files), 1 against 2 MPI ranks, the readers of models, predictions, checkpoints and
metrics, and pdsp's one-line errors raised as PdspError.

    package_test.py --pdsp PATH
"""
import argparse
import inspect
import io
import json
import os
import re
import subprocess
import sys
import tempfile
import unittest

import h5py
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))

import pdsp  # noqa: E402
from pdsp.estimator import _Progress  # noqa: E402

PDSP = None  # set by --pdsp
STATES, DIM = 3, 4  # 3 labels; observations: a noisy one-hot of the label and a bias


def chains(count, seed, flip=0.25):
    """Chains of 3-state variables whose observation is the label's one-hot, flipped to another
    state with probability `flip`, and whose neighbours mostly repeat the label: learnable by
    the unary block and the shared 3 x 3 table, not perfectly by either alone."""
    rng = np.random.default_rng(seed)
    examples = []
    for _ in range(count):
        length = int(rng.integers(4, 9))
        label = [int(rng.integers(STATES))]
        for _ in range(length - 1):
            label.append(label[-1] if rng.random() < 0.8 else int(rng.integers(STATES)))
        seen = [y if rng.random() > flip else int(rng.integers(STATES)) for y in label]
        dense = np.zeros((length, DIM))
        dense[np.arange(length), seen] = 1.0
        dense[:, DIM - 1] = 1.0
        examples.append(pdsp.Example(
            card=[STATES] * length, label=label,
            factors=[(i, i + 1) for i in range(length - 1)], var_type=[0] * length,
            var_obs=list(range(length)), factor_type=[0] * (length - 1),
            obs=pdsp.SparseRows.from_dense(dense)))
    return pdsp.Dataset(examples, STATES * DIM + STATES * STATES,
                        var_types=[pdsp.RegionType(0, DIM)],
                        factor_types=[pdsp.RegionType(STATES * DIM, 0)])


class PackageTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.folder = tempfile.TemporaryDirectory()
        cls.train = os.path.join(cls.folder.name, "train.h5")
        cls.test = os.path.join(cls.folder.name, "test.h5")
        chains(40, seed=1).write(cls.train)
        chains(30, seed=2).write(cls.test)
        cls.model = pdsp.Estimator(C=0.1, max_iters=100, tol=1e-9, threads=1, pdsp=PDSP,
                                   verbose=0).fit(cls.train)

    def test_written_file_is_accepted_by_pdsp_info(self):
        info = subprocess.run([PDSP, "info", self.train], capture_output=True, text=True)
        self.assertEqual(info.returncode, 0, info.stderr)
        self.assertIn("40", info.stdout)

    def test_fit_predict_score_round_trip(self):
        model = self.model
        self.assertEqual(model.theta_.shape, (STATES * DIM + STATES * STATES,))
        np.testing.assert_array_equal(model.theta_, pdsp.read_model(model.model_path_).theta)
        self.assertEqual(model.n_iter_, len(model.metrics_.iterations))
        self.assertEqual(model.n_iter_, model.metrics_.end["iterations"])
        self.assertEqual(model.model_["C"], 0.1)
        labels = model.predict(self.test)
        with h5py.File(self.test, "r") as handle:
            offsets = handle["/examples/var_offset"][()]
            truth = handle["/vars/label"][()]
        self.assertEqual([len(y) for y in labels], list(np.diff(offsets)))
        predicted = np.concatenate(labels)
        accuracy = model.score(self.test)
        self.assertAlmostEqual(accuracy, np.mean(predicted == truth))
        # The same model run by hand: pdsp's own error report agrees with score().
        out = os.path.join(self.folder.name, "by-hand.h5")
        report = subprocess.run([PDSP, "predict", "--data", self.test, "--model",
                                 model.model_path_, "--out", out, "--threads", "1"],
                                capture_output=True, text=True, check=True).stdout
        error = float(re.search(r"per-variable error: ([0-9.]+)%", report).group(1))
        self.assertAlmostEqual(100 * (1 - accuracy), error, places=3)
        np.testing.assert_array_equal(pdsp.read_predictions(out).label, predicted)
        # Learnt: far better than the noisy observation alone (75% right) or chance.
        self.assertGreater(accuracy, 0.8)
        marginals = model.predict_marginals(self.test)
        self.assertEqual(len(marginals), len(labels))
        for example, example_labels in zip(marginals, labels):
            for marginal, label in zip(example, example_labels):
                self.assertAlmostEqual(marginal.sum(), 1.0, places=9)
                self.assertEqual(int(np.argmax(marginal)), label)

    def test_dataset_in_memory_and_from_model(self):
        data = chains(40, seed=1)
        again = pdsp.Estimator(C=0.1, max_iters=100, tol=1e-9, threads=1, pdsp=PDSP,
                               verbose=0).fit(data)
        np.testing.assert_array_equal(again.theta_, self.model.theta_)
        loaded = pdsp.Estimator.from_model(self.model.model_path_, pdsp=PDSP, verbose=0)
        self.assertEqual(loaded.score(chains(30, seed=2)), self.model.score(self.test))

    def test_two_ranks_agree_with_one(self):
        two = pdsp.Estimator(C=0.1, max_iters=100, tol=1e-9, threads=1, ranks=2, pdsp=PDSP,
                             verbose=0).fit(self.train)
        self.assertEqual(two.model_["ranks"], 2)
        # Both stop where the search on theta finds no decrease (|grad| about 1e-2, the chains'
        # messages a sweep from their fixed point), so round-off moves the stopping point: F
        # agrees to 1e-12, theta to about 2e-7.
        np.testing.assert_allclose(two.metrics_.end["F"], self.model.metrics_.end["F"],
                                   rtol=1e-11)
        np.testing.assert_allclose(two.theta_, self.model.theta_, rtol=0, atol=1e-6)
        self.assertEqual(two.score(self.test), self.model.score(self.test))

    def independent_pixels(self, unary_model, function_of):
        """Trains `unary_model` for the pixels and nothing on the edges (Domke's alternation):
        the pixels are independent, and at the fixed point each one's marginal is the soft-max
        of its potentials at temperature eps (1 + its degree) (uniform counting numbers: the
        factors' entropies count too). `function_of(model, train)` gives the pixel type's
        function evaluated in Python; the marginals pdsp predicts must follow from it."""
        with tempfile.TemporaryDirectory() as work:
            train = os.path.join(work, "domke.h5")
            subprocess.run([PDSP, "gen", "domke", "--train", train, "--height", "9", "--width",
                            "8", "--train-images", "2", "--blur", "1.5"], check=True,
                           capture_output=True)
            model = pdsp.Estimator(learner="domke", epsilon=0.1, loss_weight=0,
                                   unary_model=unary_model, pairwise_model="zero", max_iters=3,
                                   hidden=3, tol=0, threads=1, pdsp=PDSP, verbose=0).fit(train)
            with h5py.File(train, "r") as f:
                ptr, index = f["/obs/ptr"][()], f["/obs/index"][()]
                value, obs_row = f["/obs/value"][()], f["/vars/obs_row"][()]
                degree = np.bincount(f["/factors/vars"][()], minlength=len(obs_row))
            features = np.zeros((len(obs_row), 2))
            for v, row in enumerate(obs_row):
                features[v, index[ptr[row]:ptr[row + 1]]] = value[ptr[row]:ptr[row + 1]]
            scaled = function_of(model, train)(features) / (0.1 * (1 + degree[:, None]))
            expected = np.exp(scaled - scaled.max(axis=1, keepdims=True))
            expected /= expected.sum(axis=1, keepdims=True)
            marginals = np.concatenate([np.stack(example)
                                        for example in model.predict_marginals(train)])
            np.testing.assert_allclose(marginals, expected, rtol=0, atol=1e-9)

    def test_boosted_trees_evaluated_in_python_give_pdsps_marginals(self):
        def trees(model, train):
            self.assertEqual([(t.kind, t.type, t.outputs, len(t.tree_offset) - 1)
                              for t in model.trees_], [("variables", 0, 2, 6)])
            return model.trees_[0].margins
        self.independent_pixels("trees", trees)

    def test_networks_split_from_theta_give_pdsps_marginals(self):
        def network(model, train):
            networks = pdsp.read_model(model.model_path_).networks(train)
            self.assertEqual([(n.kind, n.U.shape, n.W.shape) for n in networks],
                             [("variables", (3, 2), (2, 3))])
            return networks[0].outputs
        self.independent_pixels("mlp", network)

    def test_checkpoint_progress_and_metrics(self):
        folder = os.path.join(self.folder.name, "ck")
        model = pdsp.Estimator(max_iters=6, tol=0, threads=1, pdsp=PDSP, verbose=0,
                               extra_args=["--checkpoint-dir", folder, "--checkpoint-every", 4])
        model.fit(self.train)
        progress = pdsp.read_checkpoint_progress(folder)
        self.assertEqual(progress["iteration"], 6)
        self.assertEqual(os.path.basename(progress["path"]), "ckpt-000000006.h5")
        earlier = pdsp.read_checkpoint_progress(os.path.join(folder, "ckpt-000000004.h5"))
        self.assertEqual(earlier["iteration"], 4)
        self.assertLess(earlier["seconds_trained"], progress["seconds_trained"])
        columns = model.metrics_.columns()
        self.assertEqual(list(columns["iteration"]), [1, 2, 3, 4, 5, 6])
        # The pairs each checkpoint holds are those the metrics report after its iteration.
        pairs = columns["lbfgs_pairs"]
        self.assertGreater(max(pairs), 0)
        self.assertEqual(earlier["lbfgs_pairs"], pairs[3])
        self.assertEqual(progress["lbfgs_pairs"], pairs[5])
        # Typed variable blocks: the first step is along the curvature model's -P^-1 g.
        self.assertEqual(columns["direction"][0], "curvature")
        np.testing.assert_array_equal(columns["F"], model.metrics_.column("F"))
        self.assertTrue(np.all(np.isnan(model.metrics_.column("smoothed_gap"))))  # null at eps 1

    def test_score_leaves_unobserved_labels_out(self):
        partial = chains(30, seed=2)
        for example in partial.examples:
            example.label = [-1 if k % 3 == 0 else y for k, y in enumerate(example.label)]
        full_score = self.model.score(self.test)
        labels = np.concatenate([e.label for e in partial.examples])
        predicted = np.concatenate(self.model.predict(self.test))
        truth = np.concatenate([e.label for e in chains(30, seed=2).examples])
        observed = labels >= 0
        self.assertAlmostEqual(self.model.score(partial),
                               np.mean(predicted[observed] == truth[observed]))
        self.assertAlmostEqual(full_score, np.mean(predicted == truth))

    def test_fit_with_a_validation_set(self):
        validation = chains(20, seed=5)
        model = pdsp.Estimator(C=0.1, max_iters=12, tol=0, threads=1, pdsp=PDSP, verbose=0,
                               validate_every=3).fit(self.train, validation=validation)
        errors = model.metrics_.column("validation_error")
        checked = np.flatnonzero(~np.isnan(errors)) + 1
        self.assertEqual(checked.tolist(), [3, 6, 9, 12])
        best = int(checked[np.argmin(errors[checked - 1])])
        same = pdsp.Estimator(C=0.1, max_iters=best, tol=0, threads=1, pdsp=PDSP,
                              verbose=0).fit(self.train)
        np.testing.assert_array_equal(model.theta_, same.theta_)

    def test_metrics_being_written_and_malformed(self):
        path = os.path.join(self.folder.name, "partial.jsonl")
        text = open(self.model.metrics_.path).read()
        lines = text.splitlines(keepends=True)
        with open(path, "w") as partial:
            partial.write("".join(lines[:3]) + lines[3][:10])  # a line being written
        metrics = pdsp.read_metrics(path)
        self.assertEqual(len(metrics.iterations), 2)
        self.assertIsNone(metrics.end)
        with open(path, "w") as broken:
            broken.write("".join(lines[:2]) + "{not json\n")
        with self.assertRaisesRegex(pdsp.MetricsError, r"partial.jsonl: line 3: not JSON"):
            pdsp.read_metrics(path)

    def test_progress_line_follows_the_metrics(self):
        progress = _Progress(self.model.metrics_.path, 100)
        progress.terminal, progress.printed = False, -1e9  # print now, as in a batch log
        captured, standard_error = io.StringIO(), sys.stderr
        sys.stderr = captured
        try:
            progress()
        finally:
            sys.stderr = standard_error
        last = self.model.metrics_.iterations[-1]["iteration"]
        self.assertRegex(captured.getvalue(), rf"pdsp train: iteration {last}/100  F \S+  gap ")

    def test_readers_refuse_the_wrong_file(self):
        with self.assertRaisesRegex(pdsp.OutputFileError,
                                    r"train.h5: attribute format is 'pdsp-dataset', expected "
                                    r"'pdsp-model'"):
            pdsp.read_model(self.train)
        with self.assertRaisesRegex(pdsp.OutputFileError, "nowhere.h5: file not found"):
            pdsp.read_predictions(os.path.join(self.folder.name, "nowhere.h5"))

    def test_pdsp_errors_are_raised_with_its_line(self):
        with self.assertRaises(pdsp.PdspError) as caught:
            pdsp.Estimator(epsilon=-1, pdsp=PDSP, verbose=0).fit(self.train)
        self.assertEqual(str(caught.exception),
                         "--epsilon: '-1' is not 0 or a finite number >= 1e-12 "
                         "(see pdsp train --help)")
        self.assertEqual(caught.exception.returncode, 2)
        # A label out of range, found by the ranks that read it: one line, under mpirun too.
        bad = os.path.join(self.folder.name, "bad.h5")
        chains(4, seed=3).write(bad)
        with h5py.File(bad, "r+") as handle:
            handle["/vars/label"][5] = 7
        with self.assertRaises(pdsp.PdspError) as caught:
            pdsp.Estimator(ranks=2, threads=1, pdsp=PDSP, verbose=0).fit(bad)
        self.assertRegex(str(caught.exception), r"bad.h5: /vars/label\[5\]")
        self.assertEqual(caught.exception.returncode, 2)
        with self.assertRaisesRegex(RuntimeError, "not fitted"):
            pdsp.Estimator(pdsp=PDSP).predict(self.test)
        with self.assertRaisesRegex(ValueError, "threads: 'many' is not a whole number >= 0"):
            pdsp.Estimator(threads="many", pdsp=PDSP, verbose=0).fit(self.train)
        # A pdsp named that is not there is an error, not a quiet switch to another one.
        with self.assertRaisesRegex(FileNotFoundError, "/nonexistent/pdsp: no pdsp executable"):
            pdsp.Estimator(pdsp="/nonexistent/pdsp", verbose=0).fit(self.train)

    def test_parameters_protocol(self):
        estimator = pdsp.Estimator(C=0.5)
        self.assertEqual(estimator.get_params()["C"], 0.5)
        estimator.set_params(epsilon=0.1, ranks=2)
        self.assertEqual((estimator.epsilon, estimator.ranks), (0.1, 2))
        self.assertEqual(repr(estimator), "Estimator(epsilon=0.1, C=0.5, ranks=2)")
        with self.assertRaisesRegex(ValueError, "no parameter gamma"):
            estimator.set_params(gamma=1)

    def test_every_setting_of_pdsps_table_is_a_parameter_with_its_default(self):
        listing = subprocess.run([PDSP, "train", "--list-parameters"], capture_output=True,
                                 text=True, check=True).stdout
        rows = [json.loads(line) for line in listing.splitlines()]
        table = {row["name"]: row for row in rows if row["group"] != "Files"}
        signature = inspect.signature(pdsp.Estimator).parameters
        self.assertEqual(list(table), [name for name in signature if name in table])
        self.assertEqual(set(table), set(pdsp.estimator.TRAIN_FLAGS))
        for name, row in table.items():
            self.assertEqual(pdsp.estimator.TRAIN_FLAGS[name], row["flag"])
            cast = {"int": int, "float": float, "str": str}[row["type"]]
            self.assertEqual(signature[name].default, cast(row["default"]), name)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--pdsp", required=True)
    arguments, rest = parser.parse_known_args()
    PDSP = os.path.abspath(arguments.pdsp)
    unittest.main(argv=[sys.argv[0]] + rest)
