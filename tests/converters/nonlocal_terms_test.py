#!/usr/bin/env python3
"""The non-local terms of a data set (python/pdsp/nonlocal_terms.py; docs/file-format.md
"Non-local terms"): the arrays the writer lays out, `pdsp info` accepting them, `pdsp predict`
running Bethe-RDA with a model's weights, and every kind of malformed part refused in one line by
the Python checks and, in the same words, by pdsp's reader on the same arrays written without
the checks.

    nonlocal_terms_test.py --pdsp PATH
"""
import argparse
import os
import subprocess
import sys
import tempfile
import unittest

import h5py
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))

from pdsp import (DatasetError, Example, NonlocalTerms, SparseRows, write_arrays,  # noqa: E402
                  write_dataset)
from pdsp.dataset import ARRAY_TYPES, dataset_arrays  # noqa: E402

PDSP = None  # set by --pdsp


def word(card, length):
    """A chain of `length` variables of `card` states, one feature row per state and entry."""
    states, entries = card * length, card * card * (length - 1)
    return Example(card=[card] * length, label=[0] * length,
                   factors=[(i, i + 1) for i in range(length - 1)],
                   var_features=SparseRows(np.arange(states + 1), np.arange(states) % 3,
                                           np.ones(states)),
                   factor_features=SparseRows(np.arange(entries + 1), 3 + np.zeros(entries, int),
                                              np.ones(entries)))


def terms():
    """Two templates (a smoothed hinge and a squared one), instances on the first and third
    examples, the words 0 1 2 and 2 1, both dictionary terms."""
    return NonlocalTerms(num_states=3, a=np.array([[1.0, 0.0, -1.0], [0.5, 0.5, 0.5]]),
                         b=[0.5, -1.0], shape=[0, 1], instances=[[0, 1], [], [1]],
                         words=[[0, 1, 2], [2, 1]], dictionary=("unigram", "position"))


EXAMPLES = [word(3, 3), word(3, 2), word(3, 4)]


class NonlocalTermsTest(unittest.TestCase):
    def setUp(self):
        self.folder = tempfile.TemporaryDirectory()
        self.path = os.path.join(self.folder.name, "data.h5")

    def tearDown(self):
        self.folder.cleanup()

    def info(self, path):
        return subprocess.run([PDSP, "info", path], capture_output=True, text=True)

    def test_written_terms_are_the_documented_arrays_and_pdsp_reads_them(self):
        write_dataset(self.path, EXAMPLES, 4, nonlocal_terms=terms())
        with h5py.File(self.path, "r") as file:
            self.assertEqual(file.attrs["nonlocal_states"], 3)
            self.assertEqual(file.attrs["nonlocal_dictionary"], b"unigram,position")
            np.testing.assert_array_equal(file["examples/count_offset"][()], [0, 2, 2, 3])
            np.testing.assert_array_equal(file["nonlocal/count_template"][()], [0, 1, 1])
            np.testing.assert_array_equal(file["nonlocal/count_a"][()], [1, 0, -1, .5, .5, .5])
            np.testing.assert_array_equal(file["nonlocal/word_ptr"][()], [0, 3, 5])
            self.assertEqual(file["nonlocal/count_shape"].dtype, np.int32)
            self.assertEqual(file["nonlocal/word_state"].dtype, np.int32)
        result = self.info(self.path)
        self.assertEqual(result.returncode, 0, result.stderr)

    def test_predict_runs_bethe_rda_with_the_models_weights(self):
        """pdsp predict with /nonlocal/psi in the model: a large per-position weight pulls every
        example to the dictionary word of its length; with --rda-iters 0 the prediction is the
        one without weights, with psi = 0 its marginals (the labels are then MAP's, not the
        marginals' arg-max); a psi of the wrong length or a negative one is one line."""
        dictionary = NonlocalTerms(num_states=3, words=[[0, 1, 2], [2, 1], [1, 1, 0, 2]],
                                   dictionary=("unigram", "position"))
        write_dataset(self.path, EXAMPLES, 4, nonlocal_terms=dictionary)
        model = os.path.join(self.folder.name, "model.h5")
        # The weights are set by hand below: train learns none (--psi-epochs 0).
        train = subprocess.run([PDSP, "train", "--data", self.path, "--out", model, "--quiet",
                                "--max-iters", "20", "--psi-epochs", "0"],
                               capture_output=True, text=True)
        self.assertEqual(train.returncode, 0, train.stderr)

        def predict(psi, *flags):
            weighted = os.path.join(self.folder.name, "weighted.h5")
            with h5py.File(model, "r") as source, h5py.File(weighted, "w") as copy:
                for name in source.attrs:
                    copy.attrs[name] = source.attrs[name]
                source.copy("theta", copy)
                if psi is not None:
                    copy["nonlocal/psi"] = np.asarray(psi, dtype=float)
            out = os.path.join(self.folder.name, "pred.h5")
            result = subprocess.run([PDSP, "predict", "--data", self.path, "--model", weighted,
                                     "--out", out, "--quiet", *flags],
                                    capture_output=True, text=True)
            if result.returncode != 0:
                return result, None
            with h5py.File(out, "r") as file:
                return result, (file["prediction/label"][()], file["prediction/marginal"][()])

        _, plain = predict(None)
        _, unweighted = predict([0.0, 0.0])
        np.testing.assert_allclose(unweighted[1], plain[1], atol=1e-8)
        _, left_out = predict([0.0, 5.0], "--rda-iters", "0")
        np.testing.assert_array_equal(left_out[0], plain[0])
        np.testing.assert_array_equal(left_out[1], plain[1])
        result, pulled = predict([0.0, 5.0])
        self.assertIn("Bethe-RDA with the model's non-local weights", result.stdout)
        np.testing.assert_array_equal(pulled[0], [0, 1, 2, 2, 1, 1, 1, 0, 2])
        # An example without terms may have other cardinalities: count terms on the first only.
        counted = NonlocalTerms(num_states=3, a=[[1.0, 0.0, 0.0]], b=[-1.0], instances=[[0]])
        mixed = os.path.join(self.folder.name, "mixed.h5")
        write_dataset(mixed, [word(3, 3), word(2, 2)], 4, nonlocal_terms=counted)
        mixed_model = os.path.join(self.folder.name, "mixed_model.h5")
        for command in (["train", "--data", mixed, "--out", mixed_model, "--max-iters", "5",
                         "--psi-epochs", "0"],
                        ["predict", "--data", mixed, "--model", mixed_model, "--out",
                         os.path.join(self.folder.name, "mixed_pred.h5")]):
            if command[0] == "predict":
                with h5py.File(mixed_model, "a") as file:
                    file["nonlocal/psi"] = [2.0, 0.0, 0.0]
            result = subprocess.run([PDSP, *command, "--quiet"], capture_output=True, text=True)
            self.assertEqual(result.returncode, 0, result.stderr)
        self.assertIn("Bethe-RDA", result.stdout)
        result, _ = predict([1.0, 2.0, 3.0])
        self.assertEqual(result.returncode, 2)
        self.assertIn("/nonlocal/psi has 3 weights, but the non-local terms of", result.stderr)
        result, _ = predict([1.0, -2.0])
        self.assertEqual(result.returncode, 2)
        self.assertIn("/nonlocal/psi[1]: -2 is not a weight (finite, >= 0)", result.stderr)

    def test_every_malformed_part_is_refused_in_the_same_line_by_python_and_pdsp(self):
        good = dataset_arrays(self.path, EXAMPLES, nonlocal_terms=terms())

        def changed(name, value):
            return lambda arrays: arrays.__setitem__(name, np.asarray(value))

        def removed(name):
            return lambda arrays: arrays.pop(name)

        def no_words(arrays):
            arrays["/nonlocal/word_ptr"] = np.asarray([0])
            arrays["/nonlocal/word_state"] = np.zeros(0, dtype=np.int64)

        def four_states(arrays):  # consistent terms of 4 states on variables of 3
            arrays["@nonlocal_states"] = np.asarray([4])
            arrays["/nonlocal/count_a"] = np.zeros(8)

        cases = [
            ("/nonlocal/count_a: has 5 values, expected 6 (2 templates x 3 states)",
             changed("/nonlocal/count_a", [1.0, 0, -1, .5, .5])),
            ("/nonlocal/count_b[1]: value is not finite", changed("/nonlocal/count_b", [0.5, np.nan])),
            ("/nonlocal/count_shape[1]: 7 is not a loss shape",
             changed("/nonlocal/count_shape", [0, 7])),
            ("/nonlocal/count_template[2]: 2 is not a template (0..1)",
             changed("/nonlocal/count_template", [0, 1, 2])),
            ("/examples/count_offset: has 3 values, expected 4 (examples + 1)",
             changed("/examples/count_offset", [0, 2, 3])),
            ("/examples/count_offset[2]: must not decrease",
             changed("/examples/count_offset", [0, 2, 1, 3])),
            ("/nonlocal/count_shape: is missing, but /nonlocal/count_a of the same part is there",
             removed("/nonlocal/count_shape")),
            ("/nonlocal/count_a: is missing, but /nonlocal/count_b of the same part is there",
             removed("/nonlocal/count_a")),
            ("/nonlocal/word_state[4]: 3 is not a state (0..2)",
             changed("/nonlocal/word_state", [0, 1, 2, 2, 3])),
            ("/nonlocal/word_ptr[2]: must increase", changed("/nonlocal/word_ptr", [0, 3, 3, 5])),
            ("/nonlocal/word_ptr: is empty: offsets start with a 0",
             changed("/nonlocal/word_ptr", np.zeros(0, dtype=np.int64))),
            ("@nonlocal_dictionary: 'letters' is not a dictionary term (unigram, position)",
             changed("@nonlocal_dictionary", b"unigram,letters")),
            ("@nonlocal_dictionary: names 'position' twice",
             changed("@nonlocal_dictionary", b"position,unigram,position")),
            ("@nonlocal_states: must be in [1, 2^31), got 0", changed("@nonlocal_states", [0])),
            ("@nonlocal_dictionary: names dictionary terms, but /nonlocal/word_ptr holds no word",
             no_words),
            ("/vars/card[0]: 3 states, but the non-local terms of example 0 count 4",
             four_states),
        ]
        for expected, damage in cases:
            with self.subTest(expected=expected):
                arrays = {name: np.array(values) for name, values in good.items()}
                damage(arrays)
                with self.assertRaises(DatasetError) as raised:
                    write_arrays(self.path, arrays, 4)
                message = str(raised.exception)
                self.assertNotIn("\n", message)
                self.assertIn(self.path + ": " + expected, message)
                raw = os.path.join(self.folder.name, "raw.h5")
                write_unchecked(raw, arrays)
                result = self.info(raw)
                self.assertEqual(result.returncode, 2, result.stdout)
                self.assertIn(raw + ": " + expected, result.stderr)
                self.assertEqual(len(result.stderr.strip().splitlines()), 1, result.stderr)


def write_unchecked(path, arrays):
    """The arrays as they are, in the contract's widths where they fit, without any check."""
    with h5py.File(path, "w") as file:
        file.attrs["format"] = np.bytes_("pdsp-dataset")
        file.attrs["format_version"] = np.int64(1)
        file.attrs["num_params"] = np.int64(4)
        for name, values in arrays.items():
            values = np.asarray(values).reshape(-1)
            if values.dtype.kind == "U":
                values = values.astype(np.bytes_)
            if name.startswith("@"):
                file.attrs[name[1:]] = values[0]
            else:
                file.create_dataset(name, data=values.astype(ARRAY_TYPES[name]))


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--pdsp", required=True)
    known, rest = parser.parse_known_args()
    PDSP = known.pdsp
    unittest.main(argv=[sys.argv[0]] + rest, verbosity=2)
