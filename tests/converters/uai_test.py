#!/usr/bin/env python3
"""datasets/convert.py uai on small UAI models written here: pdsp predict's marginals against
enumeration of the model's text, with and without evidence, and one-line refusals of bad files."""
import subprocess
import unittest

import numpy as np

import conversion
from conversion import assert_refused, read_all, run_convert, work, write_text


UAI_TREE = ["MARKOV", "4", "2 3 2 2", "5", "1 0", "2 0 1", "2 1 2", "2 1 3", "1 3", "",
            "2", " 0.4 0.6", "6", " 1.0 2.0 0.5", " 0.3 1.0 4.0", "6", " 1 2 3 4 5 6", "6",
            " 2 1 1 2 1 0.5", "2", " 0.7 0.0"]


def uai_marginals(lines, evidence=None):
    """Exact variable marginals of a UAI model by enumeration (a separate reading of the text),
    given {variable: value}; observed variables are left out."""
    numbers = " ".join(lines[1:]).split()
    count = int(numbers[0])
    cards = [int(x) for x in numbers[1:1 + count]]
    at = 1 + count
    factors = int(numbers[at])
    at += 1
    scopes = []
    for _ in range(factors):
        arity = int(numbers[at])
        scopes.append([int(x) for x in numbers[at + 1:at + 1 + arity]])
        at += 1 + arity
    tables = []
    for scope in scopes:
        size = int(numbers[at])
        tables.append(np.array([float(x) for x in numbers[at + 1:at + 1 + size]])
                      .reshape([cards[v] for v in scope]))
        at += 1 + size
    marginals = [np.zeros(c) for c in cards]
    for labelling in np.ndindex(*cards):
        if evidence and any(labelling[v] != value for v, value in evidence.items()):
            continue
        weight = np.prod([t[tuple(labelling[v] for v in scope)] for scope, t in
                          zip(scopes, tables)])
        for v, s in enumerate(labelling):
            marginals[v][s] += weight
    return [m / m.sum() for v, m in enumerate(marginals) if not evidence or v not in evidence]


class UaiTest(unittest.TestCase):
    def convert_and_predict(self, name, lines, evidence_lines=None):
        inputs = [write_text(f"{name}.uai", lines)]
        if evidence_lines is not None:
            inputs.append(write_text(f"{name}.evid", evidence_lines))
        out, model = work(f"{name}.h5"), work(f"{name}_model.h5")
        done = run_convert("uai", "--input", *inputs, "--out", out, "--model", model)
        self.assertEqual(done.returncode, 0, done.stderr)
        if not conversion.PDSP:
            self.skipTest("no --pdsp given")
        prediction = work(f"{name}_prediction.h5")
        predicted = subprocess.run([conversion.PDSP, "predict", "--data", out, "--model", model,
                                    "--out", prediction], capture_output=True, text=True)
        self.assertEqual(predicted.returncode, 0, predicted.stderr)
        arrays, _ = read_all(prediction)
        return arrays["prediction/marginal"], out, model

    def test_tree_marginals_are_exact(self):
        marginal, out, model = self.convert_and_predict("tree", UAI_TREE)
        np.testing.assert_allclose(marginal, np.concatenate(uai_marginals(UAI_TREE)), atol=1e-9)
        arrays, _ = read_all(model)
        entries = [0.4, 0.6, 1.0, 2.0, 0.5, 0.3, 1.0, 4.0, 1, 2, 3, 4, 5, 6, 2, 1, 1, 2, 1, 0.5,
                   0.7, 1e-300]
        np.testing.assert_allclose(arrays["theta"], np.log(entries))
        data, attributes = read_all(out)
        self.assertEqual(attributes["num_params"], 22)
        np.testing.assert_array_equal(data["vars/card"], [2, 3, 2, 2])

    def test_evidence_conditions_the_variables_out(self):
        marginal, out, _ = self.convert_and_predict("evidence", UAI_TREE, ["1", "1 2"])
        np.testing.assert_allclose(marginal, np.concatenate(uai_marginals(UAI_TREE, {1: 2})),
                                   atol=1e-9)
        data, _ = read_all(out)
        np.testing.assert_array_equal(data["vars/card"], [2, 2, 2])

    def test_bad_files(self):
        lines = list(UAI_TREE)
        lines[-1] = " 0.7"
        bad = write_text("short.uai", lines)
        self.refused(["uai", "--input", bad],
                     f"{bad}:20: factor 4 needs 2 table entries, the file has 1 numbers left")
        lines = list(UAI_TREE)
        lines[5] = "2 0 7"
        bad = write_text("range.uai", lines)
        self.refused(["uai", "--input", bad], f"{bad}:6: factor 1 names variable 7, outside 0..3")
        lines = list(UAI_TREE)
        lines[0] = "MARKOF"
        bad = write_text("type.uai", lines)
        self.refused(["uai", "--input", bad], f"{bad}:1: unknown network type 'MARKOF'")
        evidence = write_text("bad.evid", ["1", "1 3"])
        self.refused(["uai", "--input", write_text("good.uai", UAI_TREE), evidence],
                     f"{evidence}: variable 1 observed at 3, outside 0..2")
        evidence = write_text("twice.evid", ["2", "1 0 1 2"])
        self.refused(["uai", "--input", write_text("good.uai", UAI_TREE), evidence],
                     f"{evidence}: variable 1 is observed twice")
        # Named by the source, not by the output whose @num_params would be 0.
        bad = write_text("nofactor.uai", ["MARKOV", "2", "2 2", "0"])
        self.refused(["uai", "--input", bad],
                     f"{bad}: the encoding takes 0 parameters; pdsp takes 1 to 2147483647")

    def refused(self, arguments, needle):
        assert_refused(self, arguments, needle, output_flags=("--out", "--model"))


if __name__ == "__main__":
    conversion.main(needs_data=False)
