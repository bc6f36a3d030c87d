#!/usr/bin/env python3
"""Tests of datasets/convert.py on slices of the real public files (../shared/datasets): the
written files have the right counts and typed encoding, and reproduce potentials computed
directly from the source text for a random theta; bad inputs exit 2 with one line naming the
file and the line. Exits 77 (skipped) when the data folder is absent.

    converters_test.py --data DIR [--pdsp PATH]

With --pdsp, `pdsp info` and a short `pdsp train` run on a converted (version 2) file; while the
binary does not read version 2 yet that test reports itself skipped.
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
import zlib

import h5py
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
DATASETS = os.path.join(HERE, "..", "..", "datasets")
CONVERT = os.path.join(DATASETS, "convert.py")
sys.path[:0] = [HERE, DATASETS]

import convert as convert_command  # noqa: E402
from potentials import typed_potentials  # noqa: E402

SKIPPED = 77
DATA = PDSP = WORK = None  # set in __main__
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


# ---- Slices of the sources, and what they say, read here independently of the converters. ----

def ocr_slice(words_per_split=10):
    """The TSV's header and the first words of each split, as (lines, letters); a letter is
    (split, word, label number, 16 x 8 pixels)."""
    with gzip.open(os.path.join(DATA, "ocr_taskar", "ocr_taskar_letters.tsv.gz"), "rt") as tsv:
        lines = tsv.read().splitlines()
    kept, letters, words = [l for l in lines if l.startswith("#")], [], set()
    for line in lines:
        if line.startswith("#"):
            continue
        split, word, _, label, *pixels = line.split("\t")
        if (split, word) not in words:
            if sum(s == split for s, _ in words) == words_per_split:
                continue
            words.add((split, word))
        kept.append(line)
        letters.append((split, word, ord(label) - ord("a"),
                        np.array(pixels, dtype=int).reshape(16, 8)))
    return kept, letters


def svm_instances(lines):
    """(labels, {1-based index: value}) per LIBSVM line."""
    instances = []
    for line in lines:
        head, *features = line.split(" ")
        instances.append(([int(l) for l in head.split(",")] if ":" not in head else [],
                          {int(f.split(":")[0]): float(f.split(":")[1]) for f in features if f}))
    return instances


def head_lines(path, count):
    with open(path) as file:
        return [next(file).rstrip("\n") for _ in range(count)]


def arff_slice(path, rows):
    """The ARFF header up to @data and the first data rows."""
    with open(path) as file:
        lines = file.read().splitlines()
    data = next(i for i, line in enumerate(lines) if line.lower().startswith("@data"))
    return lines[:data + 1] + [l for l in lines[data + 1:] if l.strip()][:rows]


class OcrTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.lines, cls.letters = ocr_slice()
        cls.tsv = write_text("ocr_slice.tsv.gz", cls.lines)
        cls.sizes = convert("ocr", "--input", cls.tsv, "--train", work("ocr_train.h5"), "--test",
                            work("ocr_test.h5"))

    def letters_of(self, split):
        return [letter for letter in self.letters if letter[0] == split]

    def test_counts_and_encoding(self):
        for split in ("train", "test"):
            path, letters = work(f"ocr_{split}.h5"), self.letters_of(split)
            self.assertEqual(self.sizes[path], (10, len(letters), len(letters) - 10, 4030))
            arrays, attributes = read_all(path)
            self.assertEqual((attributes["format_version"], attributes["num_params"]), (2, 4030))
            np.testing.assert_array_equal(arrays["var_types/param_offset"], [0])
            np.testing.assert_array_equal(arrays["var_types/dim"], [129])
            np.testing.assert_array_equal(arrays["factor_types/param_offset"], [3354])
            np.testing.assert_array_equal(arrays["factor_types/dim"], [0])
            self.assertTrue((arrays["vars/type"] == 0).all() and (arrays["factors/type"] == 0).all())
            self.assertTrue((arrays["vars/card"] == 26).all())
            np.testing.assert_array_equal(arrays["vars/label"], [l[2] for l in letters])
            np.testing.assert_array_equal(arrays["vars/obs_row"], np.arange(len(letters)))
            self.assertNotIn("obs/value", arrays)  # binary rows
            self.assertNotIn("vars/feat_ptr", arrays)
            pairs = arrays["factors/vars"].reshape(-1, 2)
            self.assertTrue((pairs[:, 1] == pairs[:, 0] + 1).all())

    def test_potentials_match_the_pixels(self):
        theta = np.random.default_rng(1).normal(size=4030)
        weights = theta[:3354].reshape(26, 129)
        for split in ("train", "test"):
            unary, pairwise = typed_potentials(work(f"ocr_{split}.h5"), theta)
            for u, (_, _, _, pixels) in zip(unary, self.letters_of(split)):
                # pixel (r, c) is feature c * 16 + r (the .mat's order), the bias is feature 128
                expected = weights[:, 128].copy()
                for r, c in zip(*np.nonzero(pixels)):
                    expected += weights[:, c * 16 + r]
                np.testing.assert_allclose(u, expected, rtol=0, atol=1e-12)
            for u in pairwise:
                np.testing.assert_array_equal(u, theta[3354:])

    def test_the_mat_gives_the_same_words(self):
        mat = os.path.join(DATA, "ocr_taskar", "ocr_taskar.mat")
        sizes = convert("ocr", "--input", mat, "--train", work("mat_train.h5"), "--test",
                        work("mat_test.h5"))
        self.assertEqual(sizes[work("mat_train.h5")][:2], (626, 4617))
        self.assertEqual(sizes[work("mat_test.h5")][:2], (6251, 47535))
        for split in ("train", "test"):
            whole, _ = read_all(work(f"mat_{split}.h5"))
            part, _ = read_all(work(f"ocr_{split}.h5"))
            rows = part["obs/ptr"].size
            np.testing.assert_array_equal(whole["obs/ptr"][:rows], part["obs/ptr"])
            np.testing.assert_array_equal(whole["obs/index"][:part["obs/index"].size],
                                          part["obs/index"])
            np.testing.assert_array_equal(whole["vars/label"][:rows - 1], part["vars/label"])


class MultilabelTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        yeast = os.path.join(DATA, "multilabel_yeast")
        cls.svm_lines = {split: head_lines(os.path.join(yeast, f"yeast_{split}.svm"), rows)
                         for split, rows in (("train", 30), ("test", 10))}
        cls.svm = [write_text(f"yeast_{split}.svm", lines) for split, lines in cls.svm_lines.items()]
        cls.arff = [write_text(f"yeast-{split}.arff",
                               arff_slice(os.path.join(yeast, f"yeast-{split}.arff"), rows))
                    for split, rows in (("train", 30), ("test", 10))]
        cls.xml = os.path.join(yeast, "yeast.xml")
        cls.sizes = convert("multilabel", "--input", *cls.svm, "--train", work("ys_train.h5"),
                            "--test", work("ys_test.h5"), "--num-features", 103,
                            "--num-labels", 14)

    def test_counts_and_encoding(self):
        self.assertEqual(self.sizes[work("ys_train.h5")], (30, 30 * 14, 30 * 91, 3276))
        self.assertEqual(self.sizes[work("ys_test.h5")], (10, 10 * 14, 10 * 91, 3276))
        arrays, attributes = read_all(work("ys_train.h5"))
        self.assertEqual(attributes["format_version"], 2)
        np.testing.assert_array_equal(arrays["var_types/param_offset"], np.arange(14) * 208)
        np.testing.assert_array_equal(arrays["var_types/dim"], np.full(14, 104))
        np.testing.assert_array_equal(arrays["factor_types/param_offset"], 2912 + 4 * np.arange(91))
        np.testing.assert_array_equal(arrays["factor_types/dim"], np.zeros(91))
        np.testing.assert_array_equal(arrays["vars/type"], np.tile(np.arange(14), 30))
        np.testing.assert_array_equal(arrays["vars/obs_row"], np.repeat(np.arange(30), 14))
        labels = np.zeros((30, 14), dtype=int)
        for n, (label_set, _) in enumerate(svm_instances(self.svm_lines["train"])):
            labels[n, label_set] = 1
        np.testing.assert_array_equal(arrays["vars/label"], labels.reshape(-1))

    def test_potentials_match_the_svm_text(self):
        theta = np.random.default_rng(2).normal(size=3276)
        unary, pairwise = typed_potentials(work("ys_train.h5"), theta)
        pairs = [(i, j) for i in range(14) for j in range(i + 1, 14)]
        arrays, _ = read_all(work("ys_train.h5"))
        for n, (_, features) in enumerate(svm_instances(self.svm_lines["train"])):
            for l in range(14):
                for s in range(2):
                    block = l * 208 + s * 104
                    expected = theta[block + 103] + sum(theta[block + i - 1] * x
                                                        for i, x in features.items())
                    self.assertAlmostEqual(unary[n * 14 + l][s], expected, places=10)
            for p, (i, j) in enumerate(pairs):
                a = n * 91 + p
                np.testing.assert_array_equal(arrays["factors/vars"][2 * a:2 * a + 2],
                                              [n * 14 + i, n * 14 + j])
                np.testing.assert_array_equal(pairwise[a], theta[2912 + 4 * p:2916 + 4 * p])

    def test_arff_gives_the_same_file(self):
        convert("multilabel", "--input", *self.arff, self.xml, "--train", work("ya_train.h5"),
                "--test", work("ya_test.h5"))
        for split in ("train", "test"):
            svm, _ = read_all(work(f"ys_{split}.h5"))
            arff, _ = read_all(work(f"ya_{split}.h5"))
            self.assertEqual(sorted(svm), sorted(arff))
            for name in svm:
                np.testing.assert_array_equal(svm[name], arff[name], name)

    def test_sizes_default_to_the_largest_seen(self):
        instances = [i for split in self.svm_lines.values() for i in svm_instances(split)]
        features = max(max(f) for _, f in instances)
        labels = max(max(l) for l, _ in instances if l) + 1
        sizes = convert("multilabel", "--input", *self.svm, "--train", work("yi_train.h5"),
                        "--test", work("yi_test.h5"))
        unaries = labels * 2 * (features + 1)
        self.assertEqual(sizes[work("yi_train.h5")][3], unaries + 4 * labels * (labels - 1) // 2)

    def test_scene(self):
        scene = os.path.join(DATA, "multilabel_scene")
        arff = [write_text(f"scene-{split}.arff",
                           arff_slice(os.path.join(scene, f"scene-{split}.arff"), 20))
                for split in ("train", "test")]
        sizes = convert("multilabel", "--input", *arff, os.path.join(scene, "scene.xml"),
                        "--train", work("sc_train.h5"), "--test", work("sc_test.h5"))
        self.assertEqual(sizes[work("sc_train.h5")], (20, 120, 20 * 15, 6 * 2 * 295 + 4 * 15))
        arrays, _ = read_all(work("sc_train.h5"))
        rows = [line.split(",") for line in arff_slice(os.path.join(scene, "scene-train.arff"),
                                                       20)[-20:]]
        np.testing.assert_array_equal(arrays["vars/label"],
                                      [int(v) for row in rows for v in row[294:]])
        last = arrays["obs/index"][arrays["obs/ptr"][1:] - 1]
        self.assertTrue((last == 294).all())  # the bias after the 294 features

    def test_validation_split(self):
        sizes = convert("multilabel", "--input", *self.svm, "--train", work("v_train.h5"),
                        "--test", work("v_test.h5"), "--validation", work("v_val.h5"),
                        "--validation-fraction", 0.2, "--num-labels", 14)
        self.assertEqual((sizes[work("v_train.h5")][0], sizes[work("v_val.h5")][0]), (24, 6))
        whole, _ = read_all(work("ys_train.h5"))
        labels = whole["vars/label"].reshape(30, 14)
        val, _ = read_all(work("v_val.h5"))
        np.testing.assert_array_equal(val["vars/label"].reshape(6, 14), labels[24:])
        for run in ("a", "b"):
            convert("multilabel", "--input", *self.svm, "--train", work(f"s{run}_train.h5"),
                    "--test", work(f"s{run}_test.h5"), "--validation", work(f"s{run}_val.h5"),
                    "--validation-fraction", 0.2, "--seed", 5, "--num-labels", 14)
        seeded = [read_all(work(f"sa_{part}.h5"))[0]["vars/label"].reshape(-1, 14)
                  for part in ("train", "val")]
        self.assertEqual((len(seeded[0]), len(seeded[1])), (24, 6))
        self.assertFalse(np.array_equal(seeded[1], labels[24:]))
        for part in ("train", "val"):
            with open(work(f"sa_{part}.h5"), "rb") as a, open(work(f"sb_{part}.h5"), "rb") as b:
                self.assertEqual(a.read(), b.read(), part)


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
        source = os.path.join(DATA, "umass_citation")
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
        if not PDSP:
            self.skipTest("no --pdsp given")
        model, prediction = work("cit_model.h5"), work("cit_prediction.h5")
        trained = subprocess.run([PDSP, "train", "--data", work("cit_train.h5"), "--out", model,
                                  "--max-iters", "3", "--quiet"], capture_output=True, text=True)
        self.assertEqual(trained.returncode, 0, trained.stderr)
        predicted = subprocess.run([PDSP, "predict", "--data", work("cit_test.h5"), "--model",
                                    model, "--out", prediction], capture_output=True, text=True)
        self.assertEqual(predicted.returncode, 0, predicted.stderr)
        self.assertIn("per-variable error", predicted.stdout)

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


class SegmentationTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        from PIL import Image
        horses = os.path.join(DATA, "weizmann_horses")
        cls.images, cls.masks = work("gray"), work("figure_ground")
        os.makedirs(cls.images)
        os.makedirs(cls.masks)
        cls.names = sorted(os.listdir(os.path.join(horses, "gray")))[:4]
        for name in cls.names:
            shutil.copy(os.path.join(horses, "gray", name), cls.images)
            shutil.copy(os.path.join(horses, "figure_ground", name), cls.masks)
        cls.sizes = []
        for name in cls.names:
            with Image.open(os.path.join(cls.images, name)) as image:
                cls.sizes.append(image.size)
        cls.converted = convert("segmentation", "--input", cls.images, cls.masks, "--train",
                                work("h_train.h5"), "--test", work("h_test.h5"), "--max-side",
                                16)

    def test_grids_and_encoding(self):
        shapes = []
        for width, height in self.sizes:
            scale = 16 / max(width, height)
            shapes.append((max(1, round(height * scale)), max(1, round(width * scale))))
        for split, part in (("train", shapes[:2]), ("test", shapes[2:])):
            path = work(f"h_{split}.h5")
            pixels = sum(h * w for h, w in part)
            edges = sum(h * (w - 1) + w * (h - 1) for h, w in part)
            self.assertEqual(self.converted[path], (2, pixels, edges, 2 * 9 + 2 * 2 * 2))
            arrays, _ = read_all(path)
            self.assertTrue(set(np.unique(arrays["vars/label"])) <= {0, 1})
            np.testing.assert_array_equal(arrays["var_types/dim"], [9])
            np.testing.assert_array_equal(arrays["factor_types/param_offset"], [18])
            np.testing.assert_array_equal(arrays["factor_types/dim"], [2])
            ptr, index, value = arrays["obs/ptr"], arrays["obs/index"], arrays["obs/value"]
            first = ptr[arrays["vars/obs_row"][0]]
            row = dict(zip(index[first:ptr[arrays["vars/obs_row"][0] + 1]],
                           value[first:ptr[arrays["vars/obs_row"][0] + 1]]))
            self.assertEqual(row.get(8), 1.0)  # the bias
            self.assertNotIn(6, row)  # row 0 scaled: 0, left out of the sparse row
            for a in range(0, edges, 7):
                r = arrays["factors/obs_row"][a]
                entries = dict(zip(index[ptr[r]:ptr[r + 1]], value[ptr[r]:ptr[r + 1]]))
                self.assertEqual(entries[0], 1.0)
                self.assertTrue(0 < entries[1] <= 1.0)

    def test_foreground_share_survives_the_shrinking(self):
        from PIL import Image
        arrays, _ = read_all(work("h_train.h5"))
        offset = arrays["examples/var_offset"]
        for k, name in enumerate(self.names[:2]):
            with Image.open(os.path.join(self.masks, name)) as mask:
                full = np.asarray(mask.convert("L")) >= 128
            shrunk = arrays["vars/label"][offset[k]:offset[k + 1]]
            self.assertLess(abs(full.mean() - shrunk.mean()), 0.1, name)

    def test_snakes(self):
        source = os.path.join(DATA, "pystruct_snakes", "snakes_DERIVED.h5")
        sliced = work("snakes.h5")
        with h5py.File(source, "r") as whole, h5py.File(sliced, "w") as part:
            for split, count in (("train", 6), ("test", 3)):
                for i in range(count):
                    for kind in ("X", "Y"):
                        part[f"{split}/{kind}_{i:03d}"] = whole[f"{split}/{kind}_{i:03d}"][()]
            labels = [whole[f"train/Y_{i:03d}"][()] for i in range(6)]
            pixels = sum(y.size for y in labels)
        classes = max(int(y.max()) for y in labels) + 1
        sizes = convert("segmentation", "--input", sliced, "--train", work("s_train.h5"),
                        "--test", work("s_test.h5"))
        self.assertEqual(sizes[work("s_train.h5")][:2], (6, pixels))
        self.assertEqual(sizes[work("s_train.h5")][3], classes * 24 + classes * classes * 2)
        arrays, _ = read_all(work("s_train.h5"))
        np.testing.assert_array_equal(arrays["vars/label"],
                                      np.concatenate([y.reshape(-1) for y in labels]))

    def test_bad_label_file(self):
        bad = work("float_snakes.h5")
        with h5py.File(bad, "w") as file:
            file["train/X_000"] = np.zeros((3, 4, 3))
            file["train/Y_000"] = np.zeros((3, 4), dtype=np.uint8)
            file["test/X_000"] = np.zeros((3, 4, 3), dtype=np.uint8)
            file["test/Y_000"] = np.zeros((3, 4), dtype=np.uint8)
        assert_refused(self, ["segmentation", "--input", bad],
                       f"{bad}: /train/X_000 holds float64, expected uint8")
        with h5py.File(bad, "a") as file:
            del file["train/X_000"]
            file["train/X_000"] = np.zeros((3, 5, 3), dtype=np.uint8)
        assert_refused(self, ["segmentation", "--input", bad],
                       f"{bad}: /train/Y_000 is 3 x 4, its image 3 x 5 x 3")

    def test_bad_masks(self):
        from PIL import Image
        masks = work("bad_masks")
        os.makedirs(masks)
        for name in self.names[1:]:
            shutil.copy(os.path.join(self.masks, name), masks)
        assert_refused(self, ["segmentation", "--input", self.images, masks],
                       f"{os.path.join(masks, self.names[0])}: no mask for")
        Image.new("L", (5, 4)).save(os.path.join(masks, self.names[0]), "JPEG")
        assert_refused(self, ["segmentation", "--input", self.images, masks],
                       f"{os.path.join(masks, self.names[0])}: mask is 5 x 4 but its image")


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
        if not PDSP:
            self.skipTest("no --pdsp given")
        prediction = work(f"{name}_prediction.h5")
        predicted = subprocess.run([PDSP, "predict", "--data", out, "--model", model, "--out",
                                    prediction], capture_output=True, text=True)
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

    def refused(self, arguments, needle):
        assert_refused(self, arguments, needle, output_flags=("--out", "--model"))


class BadInputTest(unittest.TestCase):
    """Each bad input: exit 2, one line on stderr naming the file and the line, no output."""

    @classmethod
    def setUpClass(cls):
        yeast = os.path.join(DATA, "multilabel_yeast")
        cls.svm = write_text("good.svm", head_lines(os.path.join(yeast, "yeast_train.svm"), 3))
        cls.arff = write_text("good.arff", arff_slice(os.path.join(yeast, "yeast-train.arff"), 3))
        cls.xml = os.path.join(yeast, "yeast.xml")
        lines, _ = ocr_slice(1)
        cls.tsv_lines = lines

    def refused(self, arguments, *needles):
        assert_refused(self, arguments, *needles)

    def multilabel(self, name, lines, *flags):
        bad = write_text(name, lines)
        return ["multilabel", "--input", bad, self.svm, *flags], bad

    def test_missing_file(self):
        self.refused(["multilabel", "--input", work("absent.svm"), self.svm],
                     f"{work('absent.svm')}: no such readable file")

    def test_svm_label_out_of_range(self):
        arguments, bad = self.multilabel("label.svm", ["1 1:0.5", "0,14 1:0.5"], "--num-labels", 14)
        self.refused(arguments, f"{bad}:2: label 14 is out of range")

    def test_svm_feature_index_out_of_range(self):
        arguments, bad = self.multilabel("index.svm", ["1 104:0.5"], "--num-features", 103)
        self.refused(arguments, f"{bad}:1: feature index 104 is out of range")
        arguments, bad = self.multilabel("zero.svm", ["1 2:0.1 0:0.5"])
        self.refused(arguments, f"{bad}:1: feature index 0 is out of range")

    def test_svm_value_not_a_number(self):
        arguments, bad = self.multilabel("value.svm", ["1 1:0.5", "1 1:abc"])
        self.refused(arguments, f"{bad}:2: value of feature 1 'abc' is not a number")

    def test_ragged_arff_row(self):
        lines = arff_slice(self.arff, 3)
        lines[-2] = lines[-2].rsplit(",", 1)[0]
        bad = write_text("ragged.arff", lines)
        self.refused(["multilabel", "--input", bad, self.arff, self.xml],
                     f"{bad}:{len(lines) - 1}: the row has 116 values, expected 117")

    def test_unknown_arff_tag(self):
        lines = arff_slice(self.arff, 3)
        lines[0] = "@relatoin MultiLabelData"
        bad = write_text("tag.arff", lines)
        self.refused(["multilabel", "--input", self.arff, bad, self.xml],
                     f"{bad}:1: unknown tag '@relatoin'")

    def test_unknown_xml_tag(self):
        with open(self.xml) as xml:
            lines = xml.read().splitlines()
        lines[3] = lines[3].replace("label", "labal")
        bad = write_text("tag.xml", lines)
        self.refused(["multilabel", "--input", self.arff, self.arff, bad],
                     f"{bad}:4: unknown tag <labal>")

    def test_labels_do_not_match_the_xml(self):
        with open(self.xml) as xml:
            lines = xml.read().splitlines()
        extra = write_text("extra.xml", lines[:-1] + ['<label name="Class15"></label>', lines[-1]])
        self.refused(["multilabel", "--input", self.arff, self.arff, extra],
                     f"{extra}:{len(lines)}: label 'Class15' is not an attribute of {self.arff}")
        fewer = write_text("fewer.xml", [l for l in lines if '"Class14"' not in l])
        self.refused(["multilabel", "--input", self.arff, self.arff, fewer],
                     f"{self.arff}:119: attribute 'Class14' of type {{0,1}} is not numeric")

    def test_ragged_and_unknown_tsv_rows(self):
        lines = list(self.tsv_lines)
        line = len(lines)
        lines[-1] = lines[-1].rsplit("\t", 1)[0]
        bad = write_text("ragged.tsv", lines)
        self.refused(["ocr", "--input", bad], f"{bad}:{line}: 131 columns, expected 132")
        lines = list(self.tsv_lines)
        lines[2] = "dev" + lines[2][lines[2].index("\t"):]
        bad = write_text("split.tsv", lines)
        self.refused(["ocr", "--input", bad], f"{bad}:3: unknown split 'dev'")

    def test_damaged_mat(self):
        with open(os.path.join(DATA, "ocr_taskar", "ocr_taskar.mat"), "rb") as mat:
            head = mat.read(4096)
        bad = work("damaged.mat")
        with open(bad, "wb") as damaged:
            damaged.write(head)
        self.refused(["ocr", "--input", bad], f"{bad}: not a readable MATLAB file")

    def test_a_bad_test_split_leaves_no_file(self):
        """Every file is checked before any is written: a converter whose test examples pdsp
        would refuse (a label out of range) leaves no training file behind either."""
        import types
        from converters import FORMATS
        from converters.source import Converted
        from pdsp import Example

        def broken(inputs, options):
            return Converted(train=[Example(card=[2, 2], label=[0, 1], factors=[[0, 1]])],
                             test=[Example(card=[2, 2], label=[0, 2], factors=[[0, 1]])],
                             num_params=1)

        FORMATS["broken"] = types.SimpleNamespace(__doc__="A broken converter.",
                                                  add_arguments=lambda parser: None,
                                                  convert=broken)
        try:
            self.refused(["broken", "--input", self.svm], "/vars/label")
        finally:
            del FORMATS["broken"]

    def test_usage(self):
        self.refused(["nosuch", "--input", self.svm], "invalid choice: 'nosuch'")
        self.refused(["multilabel", "--input", self.svm, self.svm, "--validation",
                      work("v.h5"), "--validation-fraction", "1.5"], "must be in (0, 1)")
        done = run_convert("multilabel", "--input", self.svm, self.svm, "--train", self.svm,
                           "--test", work("t.h5"))
        self.assertEqual(done.returncode, 2)
        self.assertIn(f"{self.svm}: refusing to overwrite the input", done.stderr)


class ProcessTest(unittest.TestCase):
    """The command as a process: its exit codes and streams."""

    def test_success_and_a_bad_input(self):
        lines, _ = ocr_slice(2)
        tsv = write_text("process.tsv", lines)
        outputs = ["--train", work("p_train.h5"), "--test", work("p_test.h5")]
        done = subprocess.run([sys.executable, CONVERT, "ocr", "--input", tsv, *outputs],
                              capture_output=True, text=True, timeout=120)
        self.assertEqual((done.returncode, done.stderr), (0, ""))
        self.assertEqual(len(done.stdout.splitlines()), 2)
        done = subprocess.run([sys.executable, CONVERT, "ocr", "--input", tsv + ".absent",
                               *outputs], capture_output=True, text=True, timeout=120)
        self.assertEqual(done.returncode, 2)
        self.assertEqual(done.stderr, f"convert.py: error: {tsv}.absent: no such readable file\n")


class PdspTest(unittest.TestCase):
    """pdsp itself on a converted file, once it reads format_version 2."""

    def test_pdsp_reads_a_converted_file(self):
        if not PDSP:
            self.skipTest("no --pdsp given")
        lines, _ = ocr_slice(3)
        tsv = write_text("pdsp_slice.tsv", lines)
        train, test = work("pdsp_train.h5"), work("pdsp_test.h5")
        convert("ocr", "--input", tsv, "--train", train, "--test", test)
        info = subprocess.run([PDSP, "info", train], capture_output=True, text=True)
        if "unknown version 2" in info.stderr:
            self.skipTest(f"this pdsp does not read format_version 2 yet: {info.stderr.strip()}")
        self.assertEqual(info.returncode, 0, info.stderr)
        trained = subprocess.run([PDSP, "train", "--data", train, "--out", work("model.h5"),
                                  "--max-iters", "3", "--quiet"], capture_output=True, text=True)
        self.assertEqual(trained.returncode, 0, trained.stderr)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--data", required=True, help="the public data sets (../shared/datasets)")
    parser.add_argument("--pdsp", help="a pdsp binary for the end-to-end test")
    known, rest = parser.parse_known_args()
    if not os.path.isdir(known.data):
        print(f"skipped: no public data sets at {known.data} (they live in ../shared/datasets "
              "beside the checkout)")
        sys.exit(SKIPPED)
    DATA, PDSP = known.data, known.pdsp
    WORK = tempfile.mkdtemp(prefix="pdsp_converters_")
    try:
        unittest.main(argv=[sys.argv[0]] + rest, verbosity=2)
    finally:
        shutil.rmtree(WORK)
