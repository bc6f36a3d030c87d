#!/usr/bin/env python3
"""Tests of python/pdsp's data-set writer: the files it writes (attributes, widths, version 1 or
2, the typed potentials) and its refusals: every malformed description is one ValueError line
naming the file, the dataset and the index, and leaves no file behind.

    writer_test.py [--pdsp PATH]   # with a pdsp binary, `pdsp info` must accept a v1 file too
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

from pdsp import (DatasetError, Example, RegionType, SparseRows, check_dataset,  # noqa: E402
                  write_arrays, write_dataset)
from pdsp.dataset import dataset_arrays  # noqa: E402
from pdsp.output_file import OutputError  # noqa: E402
from potentials import typed_potentials  # noqa: E402

PDSP = None  # set by --pdsp


def chain(card=(2, 3, 2), label=(0, 2, 1)):
    """A v1 chain with one feature row per state and per table entry."""
    states, entries = sum(card), sum(a * b for a, b in zip(card, card[1:]))
    factors = [(i, i + 1) for i in range(len(card) - 1)]
    return Example(card=list(card), label=list(label), factors=factors,
                   var_features=SparseRows(np.arange(states + 1), np.arange(states) % 4,
                                           np.linspace(-1, 1, states)),
                   factor_features=SparseRows(np.arange(entries + 1), 4 + np.arange(entries) % 3,
                                              np.ones(entries)))


def typed(obs=((1.0, 0.0, 2.0), (0.0, -1.0, 1.0)), var_obs=(0, 1), var_type=(0, 0)):
    """A v2 pair of 3-state variables reading dense 3-wide observation rows, one shared table."""
    return Example(card=[3, 3], label=[0, 2], factors=np.array([[0, 1]]), var_type=list(var_type),
                   var_obs=list(var_obs), factor_type=[0],
                   obs=SparseRows.from_dense(np.array(obs)))


V2_TYPES = {"var_types": [RegionType(0, 3)], "factor_types": [RegionType(9, 0)]}
V2_PARAMS = 18


class WriterTest(unittest.TestCase):
    def setUp(self):
        self.folder = tempfile.TemporaryDirectory()
        self.path = os.path.join(self.folder.name, "data.h5")

    def tearDown(self):
        self.folder.cleanup()

    def refused(self, where, write):
        """`write()` must raise one ValueError line naming the file and `where`, and leave
        the folder empty."""
        for left in os.listdir(self.folder.name):  # by a case that failed before
            os.remove(os.path.join(self.folder.name, left))
        with self.assertRaises(ValueError) as raised:
            write()
        message = str(raised.exception)
        self.assertNotIn("\n", message)
        self.assertTrue(message.startswith(self.path + ": "), message)
        self.assertIn(where, message)
        self.assertEqual(os.listdir(self.folder.name), [])
        return message

    def test_version_1_file_attributes_and_widths(self):
        write_dataset(self.path, [chain(), chain((4,), (3,))], num_params=7)
        with h5py.File(self.path, "r") as file:
            format_type = file.attrs.get_id("format").get_type()
            self.assertIsInstance(format_type, h5py.h5t.TypeStringID)
            self.assertFalse(format_type.is_variable_str())
            self.assertEqual(file.attrs["format"], b"pdsp-dataset")
            self.assertEqual(file.attrs["format_version"], 1)
            self.assertEqual(file.attrs["num_params"].dtype, np.int64)
            widths = {"examples/var_offset": np.int64, "vars/card": np.int32,
                      "vars/label": np.int32, "vars/feat_ptr": np.int64,
                      "vars/feat_param": np.int32, "factors/vars": np.int64,
                      "factors/feat_param": np.int32, "factors/feat_value": np.float64}
            for name, width in widths.items():
                self.assertEqual(file[name].dtype, width, name)
            np.testing.assert_array_equal(file["examples/var_offset"][()], [0, 3, 4])
            np.testing.assert_array_equal(file["factors/vars"][()], [0, 1, 1, 2])
            self.assertEqual(file["factors/feat_ptr"].size, 6 + 6 + 1)
            self.assertNotIn("obs", file)
        if PDSP:
            info = subprocess.run([PDSP, "info", self.path], capture_output=True, text=True)
            self.assertEqual(info.returncode, 0, info.stderr)

    def test_version_2_file_has_no_row_features_and_reproduces_potentials(self):
        examples = [typed(), typed(obs=((0.0, 3.0, 0.0),), var_obs=(0, 0))]
        write_dataset(self.path, examples, V2_PARAMS, **V2_TYPES)
        with h5py.File(self.path, "r") as file:
            self.assertEqual(file.attrs["format_version"], 2)
            self.assertNotIn("feat_ptr", file["vars"])
            self.assertNotIn("obs_row", file["factors"])  # no factor type reads a row
            np.testing.assert_array_equal(file["vars/obs_row"][()], [0, 1, 2, 2])
            np.testing.assert_array_equal(file["examples/obs_offset"][()], [0, 2, 3])
        theta = np.random.default_rng(4).normal(size=V2_PARAMS)
        unary, pairwise = typed_potentials(self.path, theta)
        rows = [[1.0, 0.0, 2.0], [0.0, -1.0, 1.0], [0.0, 3.0, 0.0], [0.0, 3.0, 0.0]]
        for v, row in enumerate(rows):  # u_v(s) = sum_j theta[s * 3 + j] x_j
            np.testing.assert_allclose(unary[v], theta[:9].reshape(3, 3) @ row)
        for u in pairwise:
            np.testing.assert_array_equal(u, theta[9:18])

    def test_binary_rows_have_no_values(self):
        example = typed(obs=((1, 0, 1), (0, 1, 1)))
        example.obs = SparseRows.from_dense(np.array([[1, 0, 1], [0, 1, 1]]), binary=True)
        write_dataset(self.path, [example], V2_PARAMS, **V2_TYPES)
        with h5py.File(self.path, "r") as file:
            self.assertNotIn("value", file["obs"])
            np.testing.assert_array_equal(file["obs/index"][()], [0, 2, 1, 2])

    def test_replaces_an_old_output_but_never_an_input(self):
        with open(self.path, "w") as old:
            old.write("old")
        write_dataset(self.path, [chain()], 7)
        self.assertTrue(h5py.is_hdf5(self.path))
        link = os.path.join(self.folder.name, "link.h5")
        os.symlink(self.path, link)
        for output in (self.path, link):
            with self.assertRaises(OutputError) as raised:
                write_dataset(output, [chain()], 7, inputs=[self.path])
            self.assertIn("refusing to overwrite the input", str(raised.exception))
        self.assertEqual(sorted(os.listdir(self.folder.name)), ["data.h5", "link.h5"])
        with self.assertRaises(OutputError):
            write_dataset(os.path.join(self.folder.name, "no", "x.h5"), [chain()], 7)

    def test_a_set_of_outputs_lands_whole_or_not_at_all(self):
        from pdsp.output_file import output_set
        with open(self.path, "w") as old:
            old.write("old")
        second = os.path.join(self.folder.name, "second.h5")
        with self.assertRaises(RuntimeError):
            with output_set() as outputs:
                write_dataset(self.path, [chain()], 7, into=outputs)
                write_dataset(second, [chain()], 7, into=outputs)
                raise RuntimeError("a third output failed")
        with open(self.path) as kept:
            self.assertEqual(kept.read(), "old")
        self.assertEqual(sorted(os.listdir(self.folder.name)), ["data.h5"])
        with output_set() as outputs:
            write_dataset(self.path, [chain()], 7, into=outputs)
            write_dataset(second, [chain()], 7, into=outputs)
            self.assertFalse(os.path.exists(second))
        self.assertTrue(h5py.is_hdf5(self.path) and h5py.is_hdf5(second))

    def test_numbers_that_are_not_whole_are_refused_not_truncated(self):
        def pair(card):
            return lambda: write_dataset(self.path, [Example(card=card, label=[0, 1],
                                                             factors=[[0, 1]])], 7)
        cases = [
            ("example 0: card[0]: 2.5 is not a whole number", pair([2.5, 3])),
            ("example 0: card[0]: nan is not a whole number", pair([float("nan"), 3])),
            ("example 0: card[1]: 'a' is not a whole number", pair([2, "a"])),
            ("example 0: factor 0[0]: 0.7 is not a whole number",
             lambda: write_dataset(self.path, [Example(card=[2, 2], label=[0, 1],
                                                       factors=[[0.7, 1]])], 7)),
            ("@num_params: 5.5 is not a whole number",
             lambda: write_dataset(self.path, [chain()], 5.5)),
        ]
        # Types as a tuple are a sequence like any other; a type that is not a RegionType is named.
        write_dataset(self.path, [typed()], 18, var_types=(RegionType(0, 3),),
                      factor_types=(RegionType(9, 0),))
        os.remove(self.path)
        with self.assertRaises(DatasetError) as raised:
            write_dataset(self.path, [typed()], 18, var_types=[None])
        self.assertEqual(str(raised.exception),
                         f"{self.path}: /var_types[0]: None is not a RegionType")
        with self.assertRaisesRegex(DatasetError, r"^SparseRows: ptr\[1\]: 1.5 is not a whole"):
            SparseRows([0, 1.5, 3], [0, 1, 2])
        for needle, write in cases:
            with self.subTest(needle=needle):
                with self.assertRaises(DatasetError) as raised:
                    write()
                self.assertEqual(str(raised.exception), f"{self.path}: {needle}")
                self.assertFalse(os.path.exists(self.path))

    # Each malformed description: the dataset and index the message must name.
    def test_refuses_bad_graphs(self):
        cases = {
            "/vars/card[1]: cardinality must be >= 1": chain(card=(2, 0, 2), label=(0, 0, 0)),
            "/vars/label[2]: label 2 is outside [0, 2) and not -1 (unobserved)":
                chain(label=(0, 0, 2)),
            "/vars/label[1]: label -2 is outside [0, 3) and not -1 (unobserved)":
                chain(label=(0, -2, 1)),
            "/factors/vars[1]: variable 3 of factor 0 is not in its example 0":
                Example(card=[2, 2, 2], factors=[(0, 3)]),
            "/factors/vars[1]: variable 0 appears twice in factor 0":
                Example(card=[2, 2], factors=[(0, 0)]),
            "/factors/var_ptr[2]: must increase (every factor needs at least one variable)":
                Example(card=[2, 2], factors=[(0, 1), ()]),
            "/factors/var_ptr[0]: factor table is too large":
                Example(card=[2**17, 2**16], factors=[(0, 1)]),
        }
        for where, example in cases.items():
            with self.subTest(where):
                self.refused(where, lambda: write_dataset(self.path, [example], 7))
        self.refused("@num_params: must be in [1, 2^31)",
                     lambda: write_dataset(self.path, [chain()], 0))
        self.refused("/examples/var_offset: the data set holds no example",
                     lambda: write_dataset(self.path, [], 7))
        self.refused("/vars/label: example 1 has none while others have",
                     lambda: write_dataset(self.path, [chain(), Example(card=[2])], 7))

    def test_unobserved_labels_are_written_as_minus_one(self):
        write_dataset(self.path, [chain(label=(0, -1, 1)), chain(label=(-1, -1, -1))], 7)
        with h5py.File(self.path, "r") as file:
            self.assertEqual(file["/vars/label"][:].tolist(), [0, -1, 1, -1, -1, -1])

    def test_refuses_bad_row_features(self):
        bad_param, bad_value, short = chain(), chain(), chain()
        bad_param.var_features.index[4] = 7
        bad_value.factor_features.value[2] = np.nan
        short.var_features = SparseRows([0, 1], [0], [1.0])
        self.refused("/vars/feat_param[4]: parameter index 7 is outside [0, 7)",
                     lambda: write_dataset(self.path, [bad_param], 7))
        self.refused("/factors/feat_value[2]: value is not finite",
                     lambda: write_dataset(self.path, [bad_value], 7))
        self.refused("/vars/feat_ptr: example 0 gives 1 rows, expected 7",
                     lambda: write_dataset(self.path, [short], 7))

    def test_refuses_bad_observations_and_types(self):
        def write(examples, num_params=V2_PARAMS, var_types=V2_TYPES["var_types"],
                  factor_types=V2_TYPES["factor_types"]):
            return lambda: write_dataset(self.path, examples, num_params, var_types, factor_types)

        infinite = typed(obs=((1.0, np.inf, 2.0), (0.0, 1.0, 1.0)))
        wide = typed(obs=((1.0, 0.0, 2.0, 5.0), (0.0, 1.0, 1.0, 0.0)))
        negative = typed()
        negative.obs.index[1] = -1
        self.refused("/obs/value[1]: value is not finite", write([infinite]))
        self.refused("/obs/index[2]: position 3 of row 0 is not below the dimension 3 of "
                     "variable type 0 (read by variable 0)", write([wide]))
        self.refused("/obs/index[1]: position -1 is negative", write([negative]))
        self.refused("/vars/obs_row[3]: row 4 of variable 3 is not one of the observation rows "
                     "[2, 4) of its example 1", write([typed(), typed(var_obs=(0, 2))]))
        self.refused("/vars/type[1]: type 1 is outside [-1, 1)", write([typed(var_type=(0, 1))]))
        self.refused("/vars/type[0]: variable 0 of type 0 with 3 states needs parameters up to 9,"
                     " but num_params is 8", write([typed()], num_params=8))
        self.refused("/factors/type[0]: factor 0 of type 0 with 9 states needs parameters up to "
                     "19", write([typed()], factor_types=[RegionType(10, 0)]))
        self.refused("/var_types/dim[0]: must be >= 0, got -2",
                     write([typed()], var_types=[RegionType(0, -2)]))
        self.refused("/var_types/param_offset[0]: must be >= 0, got -1",
                     write([typed()], var_types=[RegionType(-1, 3)]))
        # Offsets near 2^63 and huge dims, as pdsp's reader refuses them (issue 37, part 7).
        self.refused("/factor_types/param_offset[0]: is 9223372036854775807: a block of one "
                     "state, 1 parameter wide, would end past num_params = 18",
                     write([typed()], factor_types=[RegionType(2**63 - 1, 0)]))
        self.refused("/var_types/param_offset[0]: is 9223372036854775800: a block of one state, "
                     "3 parameters wide, would end past num_params = 18",
                     write([typed()], var_types=[RegionType(2**63 - 8, 3)]))
        self.refused("/var_types/dim[0]: is 2147483647: one state's block is larger than "
                     "num_params = 18", write([typed()], var_types=[RegionType(0, 2**31 - 1)]))
        self.refused("/vars/obs_row[0]: is 0, expected -1: the variable's type reads no "
                     "observation row", write([typed()], var_types=[RegionType(0, 0)]))
        self.refused("/vars/type: example 0 gives types but no /var_types were declared",
                     write([typed()], var_types=None))

    def test_refuses_bad_arrays(self):
        good = dataset_arrays(self.path, [chain(), chain((4,), (3,))])
        cases = {
            "/examples/var_offset[1]: must increase (every example needs at least one variable)": {"/examples/var_offset": [0, 0, 4]},
            "/examples/factor_offset[2]: must not decrease": {"/examples/factor_offset": [0, 3, 2]},
            "/factors/var_ptr[2]: is 3, expected the length 4": {"/factors/var_ptr": [0, 2, 3]},
            "/vars/feat_ptr: has length 3, expected 12": {"/vars/feat_ptr": [0, 1, 2]},
            "/factors/counting: is missing": {"/vars/counting": np.ones(4)},
            "/vars/loss[3]: value is not finite": {"/vars/loss": [0, 1, 1, np.nan] + [0] * 7},
            "/vars/label[1]: 4294967296 does not fit in int32": {"/vars/label": [0, 2**32, 0, 0]},
            "/obs/ptr: is missing": {"/obs/value": [1.0]},
            "/vars/card: is missing": {"/vars/card": None},
        }
        for where, change in cases.items():
            with self.subTest(where):
                arrays = dict(good)
                for name, values in change.items():
                    if values is None:
                        del arrays[name]
                    else:
                        arrays[name] = np.asarray(values)
                self.refused(where, lambda: write_arrays(self.path, arrays, 7))

    def test_damaged_arrays_are_refused_in_one_line_or_accepted(self):
        """Seeded damage to a valid v1 or v2 description (one entry changed, or an array one
        shorter or longer): never an exception other than DatasetError (an IndexError would
        mean a check reads what it has not checked yet)."""
        descriptions = [
            (dataset_arrays(self.path, [chain(), chain((4,), (3,))]), 7),
            (dataset_arrays(self.path, [typed(), typed(obs=((0.0, 3.0, 0.0),), var_obs=(0, 0)),
                                        typed()], **V2_TYPES), V2_PARAMS)]
        rng = np.random.default_rng(11)
        refused = 0
        for trial in range(600):
            good, num_params = descriptions[trial % 2]
            arrays = {name: np.array(values, dtype=np.int64 if np.asarray(values).dtype.kind == "i"
                                     else float) for name, values in good.items()}
            name = sorted(arrays)[rng.integers(len(arrays))]
            damage = rng.integers(3)
            if damage == 0 and arrays[name].size:
                arrays[name][rng.integers(arrays[name].size)] = rng.choice(
                    [-2, -1, 0, 1, 2, 3, 5, 9, 17, 2**40])
            elif damage == 1:
                arrays[name] = arrays[name][:-1]
            else:
                arrays[name] = np.append(arrays[name], rng.choice([0, 1, 3]))
            try:
                check_dataset(arrays, num_params, self.path)
            except DatasetError as error:
                refused += 1
                self.assertNotIn("\n", str(error))
        self.assertGreater(refused, 300)

    def test_check_dataset_accepts_what_it_writes(self):
        arrays = write_dataset(self.path, [typed(), typed()], V2_PARAMS, **V2_TYPES)
        check_dataset(arrays, V2_PARAMS, self.path)
        with self.assertRaises(DatasetError):
            check_dataset(arrays, 17, self.path)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--pdsp", help="a pdsp binary: `pdsp info` must accept the v1 file")
    known, rest = parser.parse_known_args()
    PDSP = known.pdsp
    unittest.main(argv=[sys.argv[0]] + rest, verbosity=2)
