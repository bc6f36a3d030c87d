"""What every converter shares: the error a bad source raises (one line naming the file and the
line or row), the result a converter returns, and reading a text file line by line."""
import argparse
import dataclasses
import gzip
from typing import List, Optional

from pdsp import Example, NonlocalTerms, RegionType


class ConversionError(Exception):
    """A source that cannot be converted; the message is one line naming the file and where."""


# The largest parameter count pdsp takes (its parameter indices are int32).
MAX_PARAMS = 2**31 - 1


def seed(text):
    """An argparse type: a seed, a whole number >= 0 (numpy refuses negative ones)."""
    try:
        value = int(text)
    except ValueError:
        value = -1
    if value < 0:
        raise argparse.ArgumentTypeError(f"'{text}' is not a seed (a whole number >= 0)")
    return value


@dataclasses.dataclass
class Converted:
    """The examples of each split in the source's order and the parameter layout they share."""
    train: List[Example]
    test: List[Example]
    num_params: int
    var_types: Optional[List[RegionType]] = None
    factor_types: Optional[List[RegionType]] = None
    nonlocal_terms: Optional[NonlocalTerms] = None  # written into every output
    dev: Optional[List[Example]] = None  # a converter's own dev split (--dev)


def text_lines(path):
    """Yields (line number, line without its end) of a plain or gzip-compressed text file."""
    opener = gzip.open if path.endswith(".gz") else open
    try:
        with opener(path, "rt", encoding="utf-8") as lines:
            for number, line in enumerate(lines, 1):
                yield number, line.rstrip("\r\n")
    except (OSError, EOFError, UnicodeDecodeError) as error:
        raise ConversionError(f"{path}: cannot be read as text: {error}") from None


def parse_number(path, number, text, what, kind=float):
    """`text` as a `kind` (int or a finite float), or a ConversionError naming the line."""
    try:
        value = kind(text)
    except ValueError:
        raise ConversionError(f"{path}:{number}: {what} '{text}' is not a number") from None
    if kind is float and not abs(value) < float("inf"):
        raise ConversionError(f"{path}:{number}: {what} '{text}' is not finite")
    return value
