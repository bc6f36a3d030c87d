#!/usr/bin/env python3
"""Tests of datasets/convert.py on slices of the real public files (../shared/datasets): the
written files have the right counts and typed encoding, and reproduce potentials computed
directly from the source text for a random theta; bad inputs exit 2 with one line naming the
file and the line. Exits 77 (skipped) when the data folder is absent.

    converters_test.py --data DIR [--pdsp PATH]

This file: the ocr and multilabel formats, bad inputs of the shared command, the command as a
process, and (with --pdsp) `pdsp info` and a short `pdsp train` on a converted file. The other
formats have a file each (citations_test.py, ...); conversion.py holds what they share.
"""
import gzip
import os
import subprocess
import sys
import unittest

import numpy as np

import conversion
from conversion import (CONVERT, assert_refused, convert, head_lines, read_all, run_convert,
                        work, write_text)
from potentials import typed_potentials

# ---- Slices of the sources, and what they say, read here independently of the converters. ----

def ocr_slice(words_per_split=10):
    """The TSV's header and the first words of each split, as (lines, letters); a letter is
    (split, word, label number, 16 x 8 pixels)."""
    path = os.path.join(conversion.DATA, "ocr_taskar", "ocr_taskar_letters.tsv.gz")
    with gzip.open(path, "rt") as tsv:
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

    def test_dictionary_is_the_distinct_training_words_in_every_output(self):
        convert("ocr", "--input", self.tsv, "--train", work("dict_train.h5"), "--test",
                work("dict_test.h5"), "--dictionary")
        words = {}  # (split, word) -> its labels, letters in order
        for split, word, label, _ in self.letters:
            words.setdefault((split, word), []).append(label)
        expected = sorted({tuple(w) for (split, _), w in words.items() if split == "train"})
        for split in ("train", "test"):
            arrays, attributes = read_all(work(f"dict_{split}.h5"))
            self.assertEqual(attributes["nonlocal_states"], 26)
            self.assertEqual(attributes["nonlocal_dictionary"], b"unigram,position")
            ptr, state = arrays["nonlocal/word_ptr"], arrays["nonlocal/word_state"]
            written = [tuple(state[a:b]) for a, b in zip(ptr[:-1], ptr[1:])]
            self.assertEqual(written, expected)
            self.assertNotIn("nonlocal/count_b", arrays)
            if conversion.PDSP:
                info = subprocess.run([conversion.PDSP, "info", work(f"dict_{split}.h5")],
                                      capture_output=True, text=True)
                self.assertEqual(info.returncode, 0, info.stderr)
                self.assertIn(f"{len(expected)} words, unigram, position", info.stdout)
        # One term only: the same words under that kind.
        for kind in ("unigram", "position"):
            convert("ocr", "--input", self.tsv, "--train", work(f"{kind}_train.h5"), "--test",
                    work(f"{kind}_test.h5"), "--dictionary", kind)
            arrays, attributes = read_all(work(f"{kind}_train.h5"))
            self.assertEqual(attributes["nonlocal_dictionary"], kind.encode())
            self.assertEqual(len(arrays["nonlocal/word_ptr"]), len(expected) + 1)

    def test_the_mat_gives_the_same_words(self):
        mat = os.path.join(conversion.DATA, "ocr_taskar", "ocr_taskar.mat")
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
        yeast = os.path.join(conversion.DATA, "multilabel_yeast")
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
        scene = os.path.join(conversion.DATA, "multilabel_scene")
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


class BadInputTest(unittest.TestCase):
    """Each bad input: exit 2, one line on stderr naming the file and the line, no output."""

    @classmethod
    def setUpClass(cls):
        yeast = os.path.join(conversion.DATA, "multilabel_yeast")
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

    def test_repeated_arff_attribute(self):
        lines = arff_slice(self.arff, 3)
        second = next(i for i, l in enumerate(lines) if l.lower().startswith("@attribute"))
        lines[second + 1] = lines[second]
        bad = write_text("repeated.arff", lines)
        name = lines[second].split()[1]
        self.refused(["multilabel", "--input", bad, bad, self.xml],
                     f"{bad}:{second + 2}: attribute '{name}' is declared again (first at line "
                     f"{second + 1})")

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
        # Two pixel fields merged ("01") beside an empty one still make 132 columns.
        lines = list(self.tsv_lines)
        first = next(i for i, l in enumerate(lines) if not l.startswith("#"))
        fields = lines[first].split("\t")
        fields[4:6] = [fields[4] + fields[5], ""]
        lines[first] = "\t".join(fields)
        bad = write_text("merged.tsv", lines)
        self.refused(["ocr", "--input", bad],
                     f"{bad}:{first + 1}: column 5: pixel '{fields[4]}' is not 0 or 1")

    def test_damaged_mat(self):
        with open(os.path.join(conversion.DATA, "ocr_taskar", "ocr_taskar.mat"), "rb") as mat:
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

    def test_a_negative_seed_is_one_line(self):
        self.refused(["multilabel", "--input", self.svm, self.svm, "--validation", work("v.h5"),
                      "--validation-fraction", "0.5", "--seed", "-1"],
                     "'-1' is not a seed (a whole number >= 0)")

    def test_too_many_labels_are_refused_before_the_pairs_are_built(self):
        self.refused(["multilabel", "--input", self.svm, self.svm, "--num-labels", "100000"],
                     f"{self.svm}: 100000 labels of 103 features take 20020600000 parameters, "
                     "more than pdsp's 2147483647")

    def test_pairs_that_would_not_fit_in_memory_are_refused_before_they_are_built(self):
        # 30,000 labels: 1.8e9 parameters (under 2^31), 4.5e8 pairs for each of 6 instances.
        memory = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
        if memory > 6 * 449985000 * 64:
            self.skipTest("this machine would hold the pairs")
        self.refused(["multilabel", "--input", self.svm, self.svm, "--num-labels", "30000"],
                     f"{self.svm}: 6 instances of 30000 labels need 449985000 pairwise factors "
                     "each, about 161 GiB to write; this machine has")

    def test_a_folder_that_takes_no_file_is_named(self):
        self.refused(["multilabel", "--input", self.svm, self.svm, "--validation",
                      "/proc/v.h5", "--validation-fraction", "0.5"],
                     "/proc/v.h5: cannot write in /proc:")

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
        if not conversion.PDSP:
            self.skipTest("no --pdsp given")
        lines, _ = ocr_slice(3)
        tsv = write_text("pdsp_slice.tsv", lines)
        train, test = work("pdsp_train.h5"), work("pdsp_test.h5")
        convert("ocr", "--input", tsv, "--train", train, "--test", test)
        info = subprocess.run([conversion.PDSP, "info", train], capture_output=True, text=True)
        if "unknown version 2" in info.stderr:
            self.skipTest(f"this pdsp does not read format_version 2 yet: {info.stderr.strip()}")
        self.assertEqual(info.returncode, 0, info.stderr)
        trained = subprocess.run([conversion.PDSP, "train", "--data", train, "--out",
                                  work("model.h5"), "--max-iters", "3", "--quiet"], capture_output=True, text=True)
        self.assertEqual(trained.returncode, 0, trained.stderr)


if __name__ == "__main__":
    conversion.main()
