"""Taskar OCR (ocr_taskar in ../shared/datasets): one chain per word, 26 states a letter.

--input is ocr_taskar.mat (patterns_train/labels_train and patterns_test/labels_test, 626 and
6,251 words) or the derived ocr_taskar_letters.tsv[.gz] (the same words a letter a line). Both
give the same file. Encoding (docs/file-format.md "Standard maps"): one binary observation row
per letter, its 128 pixels in the .mat's column-major order (pixel (r, c) at c * 16 + r) and a
bias at 128; one variable type (offset 0, dim 129) and one factor type, the 26 x 26 transition
table (t = previous * 26 + next) at offset 3354; 4030 parameters.

--dictionary adds the non-local dictionary terms (docs/file-format.md "Non-local terms"; Vilnis
et al., AISTATS 2015) to every output: the distinct words of the training split, sorted, as
letter sequences, under both the unigram and the per-position term (--dictionary unigram or
--dictionary position: that term only). With --validation, the words of the examples moved to the
validation file are among them.
"""
import numpy as np

from pdsp import Example, NonlocalTerms, RegionType, SparseRows

from .source import ConversionError, Converted, text_lines

LETTERS = 26
HEIGHT, WIDTH = 16, 8
PIXELS = HEIGHT * WIDTH
DIM = PIXELS + 1  # the bias
LETTER_TYPE = RegionType(param_offset=0, dim=DIM)
TRANSITION_TYPE = RegionType(param_offset=LETTERS * DIM, dim=0)
NUM_PARAMS = LETTERS * DIM + LETTERS * LETTERS
SPLITS = ("train", "test")
TSV_COLUMNS = 4 + PIXELS  # split, word index, position, label, pixels
KINDS = {"both": ("unigram", "position"), "unigram": ("unigram",), "position": ("position",)}


def add_arguments(parser):
    parser.add_argument("--dictionary", nargs="?", const="both",
                        choices=("both", "unigram", "position"),
                        help="add the training words as a dictionary to every output: the "
                             "unigram and the per-position non-local terms (both, the default), "
                             "or one of them")


def convert(inputs, options):
    if len(inputs) != 1:
        raise ConversionError(f"ocr takes one --input (ocr_taskar.mat or "
                              f"ocr_taskar_letters.tsv[.gz]), got {len(inputs)}")
    path = inputs[0]
    if path.endswith(".mat"):
        words = read_mat(path)
    elif path.endswith((".tsv", ".tsv.gz")):
        words = read_tsv(path)
    else:
        raise ConversionError(f"{path}: unknown kind of OCR file (expected .mat, .tsv or .tsv.gz)")
    dictionary = None
    if options.dictionary:
        distinct = sorted({tuple(int(s) for s in labels) for _, labels in words["train"]})
        dictionary = NonlocalTerms(num_states=LETTERS, words=distinct,
                                   dictionary=KINDS[options.dictionary])
    return Converted(train=[word_example(*w) for w in words["train"]],
                     test=[word_example(*w) for w in words["test"]], num_params=NUM_PARAMS,
                     var_types=[LETTER_TYPE], factor_types=[TRANSITION_TYPE],
                     nonlocal_terms=dictionary)


def word_example(pixels, labels):
    """A chain over the word's letters; `pixels` is letters x 128 of 0/1 in the .mat's order."""
    letters = len(labels)
    observed = np.hstack([pixels, np.ones((letters, 1), dtype=pixels.dtype)])
    return Example(card=np.full(letters, LETTERS), label=labels,
                   factors=np.column_stack([np.arange(letters - 1), np.arange(1, letters)]),
                   var_type=np.zeros(letters, dtype=np.int64), var_obs=np.arange(letters),
                   factor_type=np.zeros(letters - 1, dtype=np.int64),
                   obs=SparseRows.from_dense(observed, binary=True))


def read_mat(path):
    """{split: [(pixels, labels) per word]} from the .mat's cell arrays, checked cell by cell."""
    import scipy.io  # here: every conversion loads all converters, few need scipy's 0.3 s
    try:
        contents = scipy.io.loadmat(path)
    except Exception as error:  # scipy raises many kinds for a damaged file; all mean the same
        raise ConversionError(f"{path}: not a readable MATLAB file: {error}") from None
    words = {}
    for split in SPLITS:
        patterns, labels = (_cells(path, contents, f"{kind}_{split}")
                            for kind in ("patterns", "labels"))
        if len(patterns) != len(labels):
            raise ConversionError(f"{path}: patterns_{split} has {len(patterns)} words but "
                                  f"labels_{split} {len(labels)}")
        words[split] = [_mat_word(path, split, i + 1, np.asarray(p), np.asarray(l).reshape(-1))
                        for i, (p, l) in enumerate(zip(patterns, labels))]
    return words


def _cells(path, contents, name):
    if name not in contents:
        raise ConversionError(f"{path}: has no variable {name}")
    cells = contents[name]
    if cells.dtype != object or cells.ndim != 2 or cells.shape[0] != 1:
        raise ConversionError(f"{path}: {name} is not a 1 x N cell array")
    return cells[0]


def _mat_word(path, split, cell, pattern, labels):
    where = f"{path}: patterns_{split}{{{cell}}}"
    if pattern.ndim != 2 or pattern.shape[0] != DIM or pattern.shape[1] != labels.size:
        raise ConversionError(f"{where} is {' x '.join(map(str, pattern.shape))}, expected "
                              f"{DIM} x {labels.size} (pixels and bias x the letters of "
                              f"labels_{split}{{{cell}}})")
    if labels.size == 0:
        raise ConversionError(f"{where} holds no letter")
    if not np.isin(pattern[:PIXELS], (0, 1)).all() or not (pattern[PIXELS] == 1).all():
        raise ConversionError(f"{where} holds a pixel other than 0 or 1, or a bias other than 1")
    if not np.isin(labels, np.arange(LETTERS)).all():
        raise ConversionError(f"{path}: labels_{split}{{{cell}}} holds a label outside 0..25")
    return pattern[:PIXELS].T.astype(np.int8), labels.astype(np.int64)


def read_tsv(path):
    """{split: [(pixels, labels) per word]} from the letter-a-line TSV; a word's letters are
    consecutive lines with positions 0, 1, ...; pixels are row-major there."""
    pixels = {split: [] for split in SPLITS}
    labels = {split: [] for split in SPLITS}
    lengths = {split: [] for split in SPLITS}
    word, seen = None, set()
    for number, line in text_lines(path):
        if not line or line.startswith("#"):
            continue
        fields = line.split("\t")
        where = f"{path}:{number}"
        if len(fields) != TSV_COLUMNS:
            raise ConversionError(f"{where}: {len(fields)} columns, expected {TSV_COLUMNS} (split, "
                                  "word, position, label, 128 pixels)")
        split, word_index, position, letter = fields[:4]
        if split not in SPLITS:
            raise ConversionError(f"{where}: unknown split '{split}' (expected train or test)")
        if (split, word_index) != word:
            word = (split, word_index)
            if word in seen:
                raise ConversionError(f"{where}: word {word_index} of {split} continues after "
                                      "other words")
            seen.add(word)
            lengths[split].append(0)
        if position != str(lengths[split][-1]):
            raise ConversionError(f"{where}: position '{position}', expected "
                                  f"{lengths[split][-1]} (letters of a word in order)")
        if len(letter) != 1 or not "a" <= letter <= "z":
            raise ConversionError(f"{where}: label '{letter}' is not a letter a-z")
        for column, pixel in enumerate(fields[4:], 5):  # each field one pixel, not joined
            if pixel not in ("0", "1"):
                raise ConversionError(f"{where}: column {column}: pixel '{pixel}' is not 0 or 1")
        image = "".join(fields[4:])
        pixels[split].append(image)
        labels[split].append(ord(letter) - ord("a"))
        lengths[split][-1] += 1
    return {split: _tsv_words(pixels[split], labels[split], lengths[split]) for split in SPLITS}


def _tsv_words(images, labels, lengths):
    """Row-major 16 x 8 images to the .mat's column-major order, cut into words."""
    flat = np.frombuffer("".join(images).encode("ascii"), dtype=np.uint8) - ord("0")
    column_major = flat.reshape(-1, HEIGHT, WIDTH).transpose(0, 2, 1).reshape(-1, PIXELS)
    starts = np.cumsum([0] + lengths)
    labels = np.asarray(labels, dtype=np.int64)
    return [(column_major[a:b].astype(np.int8), labels[a:b]) for a, b in zip(starts, starts[1:])]
