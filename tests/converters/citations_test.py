#!/usr/bin/env python3
"""datasets/convert.py citations on slices of the UMass citation files: counts, labels and the
hashed features against an independent parse, both tag levels, unmatched and unknown tags, and
pdsp training and predicting on a converted file."""
import os
import re
import subprocess
import zlib
import unittest

import numpy as np

import conversion
from conversion import (assert_refused, convert, head_lines, read_all, run_convert, summary_sizes,
                        work, write_text)


def citation_tokens(line, level="leaf"):
    """(tokens, tags) of one tagged citation line, parsed here on its own: a tag is <name> or
    </name>, anything else between spaces is a token, "O" outside every tag."""
    tokens, tags, stack = [], [], []
    for piece in re.findall(r"</?[^<>\s]+>|[^\s<>]+", line):
        if piece.startswith("</"):
            assert stack.pop() == piece[2:-1]
        elif piece.startswith("<"):
            stack.append(piece[1:-1])
        else:
            tokens.append(piece)
            tags.append("O" if not stack else stack[-1] if level == "leaf" else stack[0])
    return tokens, tags


class CitationsTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        source = os.path.join(conversion.DATA, "umass_citation")
        # The first 120 training lines hold none with unmatched tags (line 144 is the first).
        cls.lines = {split: head_lines(os.path.join(source, f"{name}.docs"), rows)
                     for split, name, rows in (("train", "training", 120), ("test", "testing", 10))}
        cls.files = [write_text(f"cit_{split}.docs", lines) for split, lines in cls.lines.items()]
        cls.sizes = convert("citations", "--input", *cls.files, "--train", work("cit_train.h5"),
                            "--test", work("cit_test.h5"), "--hash-bits", 10)

    def test_counts_labels_and_encoding(self):
        parsed = {split: [citation_tokens(line) for line in lines]
                  for split, lines in self.lines.items()}
        tags = sorted({t for _, line_tags in parsed["train"] for t in line_tags})
        states, dim = len(tags), 1025
        for split in ("train", "test"):
            path = work(f"cit_{split}.h5")
            tokens = sum(len(t) for t, _ in parsed[split])
            self.assertEqual(self.sizes[path], (len(parsed[split]), tokens,
                                                tokens - len(parsed[split]),
                                                states * dim + states * states))
            arrays, _ = read_all(path)
            self.assertTrue((arrays["vars/card"] == states).all())
            np.testing.assert_array_equal(
                arrays["vars/label"], [tags.index(t) for _, line_tags in parsed[split]
                                       for t in line_tags])
            np.testing.assert_array_equal(arrays["var_types/dim"], [dim])
            np.testing.assert_array_equal(arrays["factor_types/param_offset"], [states * dim])
            np.testing.assert_array_equal(arrays["factor_types/dim"], [0])
            ptr, index = arrays["obs/ptr"], arrays["obs/index"]
            words = [w for t, _ in parsed[split] for w in t]
            for v, word in enumerate(words):
                row = index[ptr[v]:ptr[v + 1]]
                self.assertEqual(row[-1], 1024)  # the bias
                self.assertTrue((np.diff(row) > 0).all())
                for feature in ("w=" + word.lower(), "p1=" + word.lower()[0]):
                    self.assertIn(zlib.crc32(feature.encode()) % 1024, row, feature)

    def test_pdsp_trains_and_predicts(self):
        if not conversion.PDSP:
            self.skipTest("no --pdsp given")
        model, prediction = work("cit_model.h5"), work("cit_prediction.h5")
        trained = subprocess.run([conversion.PDSP, "train", "--data", work("cit_train.h5"),
                                  "--out", model, "--max-iters", "3", "--quiet"],
                                 capture_output=True, text=True)
        self.assertEqual(trained.returncode, 0, trained.stderr)
        predicted = subprocess.run([conversion.PDSP, "predict", "--data", work("cit_test.h5"),
                                    "--model", model, "--out", prediction],
                                   capture_output=True, text=True)
        self.assertEqual(predicted.returncode, 0, predicted.stderr)
        self.assertIn("per-variable error", predicted.stdout)

    def test_dev_file_and_count_constraints(self):
        """The third input goes to --dev; --constraints writes templates of the documented kinds
        (citation_constraints.py), each read off the training labels as its rule says, in play
        in at least 10 dev citations, at most a fifth of the dev citations' number, with one
        instance on every example of every file."""
        dev_lines = head_lines(os.path.join(conversion.DATA, "umass_citation", "dev.docs"), 60)
        dev = write_text("cit_dev.docs", dev_lines)
        outputs = {name: work(f"cons_{name}.h5") for name in ("train", "test", "dev")}
        sizes = convert("citations", "--input", *self.files, dev, "--hash-bits", 6,
                        "--constraints", *[x for name, path in outputs.items()
                                           for x in (f"--{name}", path)])
        parsed = [citation_tokens(line)[1] for line in dev_lines]
        self.assertEqual(sizes[outputs["dev"]][:2], (60, sum(len(t) for t in parsed)))
        tags = sorted({t for line in self.lines["train"] for t in citation_tokens(line)[1]})
        counts = {split: np.array([[line_tags.count(t) for t in tags] for line_tags in labels])
                  for split, labels in (("train", [citation_tokens(line)[1]
                                                   for line in self.lines["train"]]),
                                        ("dev", parsed))}
        arrays, attributes = read_all(outputs["train"])
        self.assertEqual(attributes["nonlocal_states"], len(tags))
        a = arrays["nonlocal/count_a"].reshape(-1, len(tags))
        b = arrays["nonlocal/count_b"]
        self.assertTrue(0 < len(b) <= 60 // 5)
        np.testing.assert_array_equal(arrays["nonlocal/count_shape"], 0)
        train, dev_counts = counts["train"], counts["dev"]
        for row, offset in zip(a, b):
            up, down = np.flatnonzero(row > 0), np.flatnonzero(row < 0)
            with self.subTest(row=row.tolist(), b=offset):
                if len(up) == 1 and len(down) == 0:  # at most c tokens of a tag
                    having = train[:, up[0]] > 0
                    self.assertEqual(-offset, np.ceil(np.percentile(train[having, up[0]], 99)))
                    self.assertGreaterEqual((dev_counts[:, up[0]] > 0).sum(), 10)
                elif len(up) == 0 and len(down) == 1:  # at least one
                    self.assertEqual(offset, 1.0)
                    self.assertGreaterEqual(np.mean(train[:, down[0]] > 0), 0.7)
                else:  # at most r times as many tokens of s as of t, where t comes with s
                    self.assertEqual((len(up), len(down), offset, row[up[0]]), (1, 1, 0.0, 1.0))
                    s_, t_ = up[0], down[0]
                    having, both = train[:, s_] > 0, (train[:, s_] > 0) & (train[:, t_] > 0)
                    self.assertGreaterEqual(np.mean(train[having, t_] > 0), 0.8)
                    ratio = np.percentile(train[both, s_] / train[both, t_], 99)
                    self.assertAlmostEqual(-row[t_], np.ceil(ratio * 10 - 1e-9) / 10)
                    self.assertLessEqual(-row[t_], 2.0)
                    self.assertGreaterEqual((dev_counts[:, s_] > 0).sum(), 10)
        for name, path in outputs.items():
            arrays, _ = read_all(path)
            examples = sizes[path][0]
            np.testing.assert_array_equal(arrays["examples/count_offset"],
                                          np.arange(examples + 1) * len(b), name)
            np.testing.assert_array_equal(arrays["nonlocal/count_template"],
                                          np.tile(np.arange(len(b)), examples), name)
        assert_refused(self, ["citations", "--input", *self.files, dev],
                       "a third --input (the dev file) and --dev DEV.h5 go together")
        assert_refused(self, ["citations", "--input", *self.files, "--dev", work("d.h5")],
                       "a third --input (the dev file) and --dev DEV.h5 go together")
        assert_refused(self, ["citations", "--input", *self.files, "--constraints"],
                       "--constraints are kept as the dev set can weigh them")

    def test_bio_states(self):
        """--bio: state 2k for the first token of a segment of tag k (a tag opened or closed
        since the previous token, or a run outside every tag starting), 2k + 1 for the others;
        twice the states and their parameters."""
        sizes = convert("citations", "--input", *self.files, "--train", work("bio_train.h5"),
                        "--test", work("bio_test.h5"), "--bio", "--hash-bits", 4)
        tags = sorted({t for line in self.lines["train"] for t in citation_tokens(line)[1]})
        expected = []
        for line in self.lines["train"]:
            depth, fresh, outside_run = 0, False, False
            for piece in re.findall(r"</?[^<>\s]+>|[^\s<>]+", line):
                if piece.startswith("</"):
                    depth -= 1
                    fresh = True  # back in the enclosing element: a new segment of its tag
                    outside_run = False
                elif piece.startswith("<"):
                    depth += 1
                    fresh = True
                else:
                    begins = fresh if depth else not outside_run
                    fresh, outside_run = False, depth == 0
                    expected.append(begins)
        labels = [tags.index(t) for line in self.lines["train"] for t in citation_tokens(line)[1]]
        arrays, _ = read_all(work("bio_train.h5"))
        np.testing.assert_array_equal(arrays["vars/label"],
                                      [2 * t + (0 if b else 1) for t, b in zip(labels, expected)])
        self.assertTrue((arrays["vars/card"] == 2 * len(tags)).all())
        self.assertEqual(sizes[work("bio_train.h5")][3], 2 * len(tags) * 17 + 4 * len(tags) ** 2)

    def test_top_level_states(self):
        sizes = convert("citations", "--input", *self.files, "--train", work("top_train.h5"),
                        "--test", work("top_test.h5"), "--level", "top", "--hash-bits", 4)
        tags = sorted({t for line in self.lines["train"] for t in citation_tokens(line, "top")[1]})
        arrays, _ = read_all(work("top_train.h5"))
        self.assertTrue((arrays["vars/card"] == len(tags)).all())
        self.assertEqual(sizes[work("top_train.h5")][3], len(tags) * 17 + len(tags) ** 2)

    def test_unmatched_tags_are_left_out_or_refused(self):
        lines = list(self.lines["train"])
        lines[4] = lines[4].replace("</title>", "</venue>", 1)
        bad = write_text("unmatched.docs", lines)
        done = run_convert("citations", "--input", bad, self.files[1], "--train",
                           work("u_train.h5"), "--test", work("u_test.h5"))
        self.assertEqual(done.returncode, 0, done.stderr)
        self.assertIn(f"{bad}: left out 1 line(s) whose closing tags do not match the opening "
                      "ones (lines 5)", done.stderr)
        self.assertEqual(summary_sizes(done)[work("u_train.h5")][0], 119)
        assert_refused(self, ["citations", "--input", bad, self.files[1], "--strict"],
                             f"{bad}:5: closing tags do not match the opening ones")

    def test_unknown_tag_and_empty_citation(self):
        lines = list(self.lines["test"])
        lines[2] = "<nosuchfield> x </nosuchfield> " + lines[2]
        bad = write_text("unknown.docs", lines)
        assert_refused(self, ["citations", "--input", self.files[0], bad],
                             f"{bad}:3: tag <nosuchfield> does not occur in {self.files[0]}")
        bad = write_text("empty.docs", ["<title> </title>"])
        assert_refused(self, ["citations", "--input", self.files[0], bad],
                             f"{bad}:1: a citation without a token")


if __name__ == "__main__":
    conversion.main()
