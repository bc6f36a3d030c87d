"""UMass citation field extraction (umass_citation in ../shared/datasets): one chain per
citation over its tokens, the field tags as states.

--input is the training file and the test file (training.docs testing.docs; dev.docs can stand
in for either), and optionally the dev file (dev.docs), written to --dev; one citation a line, fields marked by nested tags around the tokens
(`<authors> <person> <person-first> E. </person-first> ...`). A token's state is its innermost
tag (--level leaf, 37 tags in training.docs) or its outermost (--level top: authors, title,
venue, ...); a token outside every tag is `O`. The states are the tags of the training file in
sorted order; a test tag that never occurs in training is an error. A line whose closing tags
do not match its opening ones (9 of training.docs's 1,457 lines) cannot be labelled: it is left
out and counted on stderr, or with --strict it is an error.

Encoding (docs/file-format.md "Standard maps"): one binary observation row per token, its features
hashed (CRC-32 of the feature's text, modulo 2^B, --hash-bits B, default 16) and a bias at 2^B.
A token's own features: the lower-cased word, also without its surrounding punctuation; its
shape (X upper, x lower, d digit, others kept, runs of one kind shortened to one); prefixes and
suffixes of 1-3 characters; flags (all digits, has a digit, punctuation only, an initial with a
period, a year 1900-2029, a page range, a capital first, all capitals, a hyphen, a quote, a
parenthesis, a final period or comma); lexicon classes (months, pages, volume, "in",
proceedings, journal, editor, publisher, institution, report, et al., "and", places). Beside
them: the features of the tokens one and two before and after (without their affixes, marked by
the offset; the citation's edges as such), the conjunctions of the word with the previous and
with the next word, the tenth of the citation the token lies in, and first / last. One variable
type (offset 0, dim 2^B + 1) and one factor type, the S x S transition table (t = previous * S +
next) at offset S (2^B + 1).

--bio gives each tag two states, 2k for the first token of a segment of tag k (a tag element,
or a run of tokens outside every tag) and 2k + 1 for the others; a segment then starts at a
B state or where the tag changes.

--constraints adds soft count constraints over the tags to every output, read off the training
labels and kept as the dev set can weigh them (citation_constraints.py; needs the dev file);
with --bio they count segments as well as tokens.
"""
import re
import sys
import zlib

import numpy as np

from pdsp import Example, RegionType, SparseRows

from .citation_constraints import count_constraints
from .source import ConversionError, Converted, text_lines

DEV_INPUT = True  # a third --input is the dev set, written to --dev
OUTSIDE = "O"
TOKEN = re.compile(r"<(/?)([^<>\s]+)>|([^\s<>]+)")
YEAR = re.compile(r"^\(?(19\d\d|20[0-2]\d)[a-z]?\)?[.,;:]?$")
INITIAL = re.compile(r"^[A-Z]\.$")


def add_arguments(parser):
    parser.add_argument("--level", choices=("leaf", "top"), default="leaf",
                        help="a token's state: its innermost tag (default) or its outermost")
    parser.add_argument("--hash-bits", type=int, default=16, metavar="B",
                        help="features hashed into 2^B positions (default 16)")
    parser.add_argument("--strict", action="store_true",
                        help="a line with unmatched tags is an error, not left out")
    parser.add_argument("--bio", action="store_true",
                        help="two states per tag: the first token of a segment (B) and the "
                             "others (I)")
    parser.add_argument("--constraints", action="store_true",
                        help="add soft count constraints over the tags (needs the dev file)")


def convert(inputs, options):
    if len(inputs) not in (2, 3):
        raise ConversionError(f"citations takes two or three --input files (training.docs "
                              f"testing.docs [dev.docs]), got {len(inputs)}")
    if (len(inputs) == 3) != bool(options.dev):
        raise ConversionError("a third --input (the dev file) and --dev DEV.h5 go together")
    if options.constraints and len(inputs) != 3:
        raise ConversionError("--constraints are kept as the dev set can weigh them: give the "
                              "dev file as the third --input")
    if not 1 <= options.hash_bits <= 24:
        raise ConversionError(f"--hash-bits must be in 1..24, got {options.hash_bits}")
    splits = [read_citations(path, options.level, options.strict) for path in inputs]
    tags = sorted({tag for _, _, labels, _ in splits[0] for tag in labels})
    state = {tag: s for s, tag in enumerate(tags)}
    for path, citations in zip(inputs[1:], splits[1:]):
        for number, _, labels, _ in citations:
            unknown = [tag for tag in labels if tag not in state]
            if unknown:
                raise ConversionError(f"{path}:{number}: tag <{unknown[0]}> does not occur in "
                                      f"{inputs[0]}")
    dim = (1 << options.hash_bits) + 1
    per_tag = 2 if options.bio else 1
    states = per_tag * len(tags)
    labels = [[[per_tag * state[t] + (0 if begin or not options.bio else 1)
                for t, begin in zip(tagged, begins)] for _, _, tagged, begins in citations]
              for citations in splits]

    def examples(split):
        return [citation_example(tokens, labels[split][i], states, options.hash_bits)
                for i, (_, tokens, _, _) in enumerate(splits[split])]

    return Converted(train=examples(0), test=examples(1),
                     dev=examples(2) if len(inputs) == 3 else None,
                     num_params=states * dim + states * states,
                     var_types=[RegionType(param_offset=0, dim=dim)],
                     factor_types=[RegionType(param_offset=states * dim, dim=0)],
                     nonlocal_terms=count_constraints(labels[0], labels[2], len(tags),
                                                      options.bio)
                     if options.constraints else None)


def read_citations(path, level, strict):
    """[(line number, tokens, tags)] per citation, in the file's order; lines with unmatched
    tags are left out (counted on stderr) or, when strict, an error."""
    citations, skipped = [], []
    for number, line in text_lines(path):
        if not line.strip():
            continue
        tagged = _tagged(path, number, line, level)
        if tagged is None:
            if strict:
                raise ConversionError(f"{path}:{number}: closing tags do not match the opening "
                                      f"ones")
            skipped.append(number)
            continue
        citations.append((number, *tagged))
    if skipped:
        print(f"convert.py: {path}: left out {len(skipped)} line(s) whose closing tags do not "
              f"match the opening ones (lines {', '.join(map(str, skipped[:5]))}"
              f"{', ...' if len(skipped) > 5 else ''})", file=sys.stderr)
    if not citations:
        raise ConversionError(f"{path}: holds no citation")
    return citations


def _tagged(path, number, line, level):
    """(tokens, tags, begins) of one line, or None when its tags do not nest; begins[i]: token i
    starts a segment (the first token of its tag element, or of a run outside every tag)."""
    tokens, tags, begins, open_tags, elements = [], [], [], [], []
    opened = 0  # tag elements opened so far: an element's identity
    previous = None
    for match in TOKEN.finditer(line):
        closing, tag, token = match.groups()
        if token is not None:
            tokens.append(token)
            which = -1 if not open_tags else elements[-1] if level == "leaf" else elements[0]
            tags.append(OUTSIDE if not open_tags else
                        open_tags[-1] if level == "leaf" else open_tags[0])
            begins.append(which != previous)
            previous = which
        elif closing:
            if not open_tags or open_tags[-1] != tag:
                return None
            open_tags.pop()
            elements.pop()
        else:
            open_tags.append(tag)
            opened += 1
            elements.append(opened)
    if open_tags:
        return None
    if not tokens:
        raise ConversionError(f"{path}:{number}: a citation without a token")
    return tokens, tags, begins


def citation_example(tokens, labels, states, bits):
    cache = {}
    rows = [token_features(tokens, i, bits, cache) for i in range(len(tokens))]
    ptr = np.concatenate(([0], np.cumsum([len(r) for r in rows])))
    n = len(tokens)
    return Example(card=np.full(n, states), label=np.asarray(labels, dtype=np.int64),
                   factors=np.column_stack([np.arange(n - 1), np.arange(1, n)]),
                   var_type=np.zeros(n, dtype=np.int64), var_obs=np.arange(n),
                   factor_type=np.zeros(n - 1, dtype=np.int64),
                   obs=SparseRows(ptr, np.concatenate(rows)))


def shape(token):
    """X for upper, x for lower, d for digits, other characters kept; runs of one kind as one."""
    kinds = ["X" if c.isupper() else "x" if c.islower() else "d" if c.isdigit() else c
             for c in token]
    return "".join(k for i, k in enumerate(kinds) if i == 0 or k != kinds[i - 1])


# Words that mark a field whatever their case and trailing punctuation (a lexicon feature each).
LEXICON = {
    "month": {"jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "sept", "oct", "nov",
              "dec", "january", "february", "march", "april", "june", "july", "august",
              "september", "october", "november", "december"},
    "pages": {"pp", "pages", "page", "p"},
    "volume": {"vol", "volume", "no", "number", "num"},
    "in": {"in"},
    "proceedings": {"proc", "proceedings", "conference", "conf", "symposium", "workshop",
                    "meeting", "congress", "colloquium"},
    "journal": {"journal", "j", "trans", "transactions", "letters", "review", "magazine",
                "bulletin", "annals", "acta"},
    "editor": {"ed", "eds", "editor", "editors", "edited"},
    "publisher": {"press", "publishers", "publishing", "verlag", "springer", "wiley", "elsevier",
                  "academic", "kluwer", "mit", "addison-wesley", "morgan", "kaufmann"},
    "institution": {"university", "univ", "institute", "inst", "dept", "department", "laboratory",
                    "lab", "school", "college", "center", "centre", "research"},
    "report": {"tech", "technical", "report", "rep", "tr", "thesis", "dissertation", "phd",
               "ms", "memo", "manuscript"},
    "etal": {"et", "al"},
    "and": {"and", "&"},
    "location": {"ca", "ny", "ma", "usa", "uk", "germany", "france", "japan", "canada", "berlin",
                 "london", "york", "boston", "cambridge", "amsterdam", "paris", "tokyo"},
}
PAGE_RANGE = re.compile(r"^\(?\d+\s*-+\s*\d+\)?[.,;:]?$")


def lexical(token):
    """The features of one token alone: word, shape, affixes, flags, lexicon classes."""
    word = token.lower()
    bare = word.strip(".,;:()[]\"'")
    features = ["w=" + word, "shape=" + shape(token), "bare=" + bare]
    features += [f"p{k}={word[:k]}" for k in range(1, 4) if len(word) >= k]
    features += [f"s{k}={word[-k:]}" for k in range(1, 4) if len(word) >= k]
    flags = {"digits": token.isdigit(), "has-digit": any(c.isdigit() for c in token),
             "punct": not any(c.isalnum() for c in token), "initial": bool(INITIAL.match(token)),
             "year": bool(YEAR.match(token)), "capital": token[0].isupper(), "hyphen": "-" in token,
             "page-range": bool(PAGE_RANGE.match(token)), "ends-period": token.endswith("."),
             "ends-comma": token.endswith(","), "quote": '"' in token or "``" in token,
             "paren": "(" in token or ")" in token, "all-caps": token.isupper() and len(token) > 1}
    features += ["flag=" + name for name, on in flags.items() if on]
    features += ["lexicon=" + name for name, words in LEXICON.items() if bare in words]
    return features


def token_features(tokens, i, bits, cache=None):
    """The sorted distinct hashed positions of token i's features, then the bias at 2^bits: its
    own lexical features, those of its neighbours within two (marked by their offset), the
    neighbouring words' conjunctions with its own, and its place in the citation."""
    def own(k):
        if cache is not None and k in cache:
            return cache[k]
        value = lexical(tokens[k])
        if cache is not None:
            cache[k] = value
        return value

    word = tokens[i].lower()
    features = own(i)
    n = len(tokens)
    for offset in (-2, -1, 1, 2):
        k = i + offset
        if 0 <= k < n:
            features = features + [f"{offset}:{f}" for f in own(k)
                                   if not f.startswith(("p", "s1", "s2", "s3"))]
        else:
            features = features + [f"{offset}:<edge>"]
    if i > 0:
        features.append(f"prev&w={tokens[i - 1].lower()}&{word}")
    if i + 1 < n:
        features.append(f"w&next={word}&{tokens[i + 1].lower()}")
    features.append(f"tenth={10 * i // n}")
    features += ["first"] if i == 0 else []
    features += ["last"] if i == n - 1 else []
    size = 1 << bits
    hashed = {zlib.crc32(f.encode("utf-8")) % size for f in features}
    return np.array(sorted(hashed) + [size], dtype=np.int64)
