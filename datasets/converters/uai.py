"""A Markov or Bayesian network in the UAI inference competitions' format (.uai, with an .evid
file of observed values when present) as a data set of one unlabelled example and a model whose
theta holds the log-potentials, so that `pdsp predict --data OUT.h5 --model MODEL.h5` computes
approximate marginals (the model says epsilon 1 and Bethe numbers: loopy belief propagation,
exact on trees).

--input MODEL.uai [EVIDENCE.evid]; the outputs are --out OUT.h5 and --model MODEL.h5 (this
format has no training and test split). Every table entry t of factor a is one parameter with
the row (parameter, 1), in the file's order of factors and entries (last variable fastest, as
in pdsp); theta is log phi_a(t), with a zero entry as log(1e-300) (pdsp's potentials are
finite; exp(-690.8) is below any marginal it reports). A factor of one variable stays a factor.
Observed variables are conditioned out: every table is cut at their values, they leave the
data set, and the others keep their order (a factor left without variables only scales Z and
is dropped).
"""
import dataclasses
import math
from typing import List

import numpy as np

from pdsp import Example, SparseRows

from .source import ConversionError, text_lines

OUTPUTS = "model"  # convert.py: --out and --model instead of --train and --test
SMALLEST = 1e-300


@dataclasses.dataclass
class ConvertedModel:
    """One example and the theta of its log-potentials."""
    example: Example
    num_params: int
    theta: np.ndarray
    dropped_variables: List[int]


def add_arguments(parser):
    """The UAI converter has no options of its own."""


def convert(inputs, options):
    if len(inputs) not in (1, 2):
        raise ConversionError(f"uai takes MODEL.uai and optionally EVIDENCE.evid, got "
                              f"{len(inputs)} inputs")
    cards, scopes, tables = read_uai(inputs[0])
    evidence = read_evidence(inputs[1], cards) if len(inputs) == 2 else {}
    return condition(cards, scopes, tables, evidence)


class Tokens:
    """The whitespace-separated numbers of a text file, each with its line number."""

    def __init__(self, path):
        self.path = path
        self.items = [(number, token) for number, line in text_lines(path)
                      for token in line.split()]
        self.next = 0

    def take(self, what, kind=int):
        if self.next >= len(self.items):
            raise ConversionError(f"{self.path}: ends where {what} was expected")
        number, token = self.items[self.next]
        self.next += 1
        try:
            value = kind(token)
        except ValueError:
            raise ConversionError(f"{self.path}:{number}: {what} '{token}' is not "
                                  f"{'an integer' if kind is int else 'a number'}") from None
        if kind is float and not math.isfinite(value):
            raise ConversionError(f"{self.path}:{number}: {what} '{token}' is not finite")
        return value, number

    def take_at_least(self, what, minimum, problem):
        """An integer (`what`) that must be at least `minimum`; `problem` says, given the value,
        what is wrong otherwise."""
        value, number = self.take(what)
        if value < minimum:
            raise ConversionError(f"{self.path}:{number}: {problem(value)}")
        return value


def read_uai(path):
    """(cards, scopes, tables) of a .uai file, checked: the header, every scope's variables and
    every table's length and entries (finite, >= 0)."""
    tokens = Tokens(path)
    if not tokens.items:
        raise ConversionError(f"{path}: is empty")
    number, kind = tokens.items[0]
    if kind not in ("MARKOV", "BAYES"):
        raise ConversionError(f"{path}:{number}: unknown network type '{kind}' (expected MARKOV "
                              f"or BAYES)")
    tokens.next = 1
    count = tokens.take_at_least("the number of variables", 1, lambda n: f"{n} variables")
    cards = [tokens.take_at_least(f"the cardinality of variable {v}", 1,
                                  lambda c, v=v: f"variable {v} has cardinality {c}")
             for v in range(count)]
    factors = tokens.take_at_least("the number of factors", 0, lambda n: f"{n} factors")
    scopes = []
    for a in range(factors):
        arity = tokens.take_at_least(f"the arity of factor {a}", 1,
                                     lambda k, a=a: f"factor {a} has arity {k}")
        scope = []
        for _ in range(arity):
            v, line = tokens.take(f"a variable of factor {a}")
            if not 0 <= v < count:
                raise ConversionError(f"{path}:{line}: factor {a} names variable {v}, outside "
                                      f"0..{count - 1}")
            scope.append(v)
        if len(set(scope)) != arity:
            raise ConversionError(f"{path}:{line}: factor {a} names a variable twice")
        scopes.append(scope)
    tables = []
    for a, scope in enumerate(scopes):
        size = math.prod(cards[v] for v in scope)
        entries, line = tokens.take(f"the table size of factor {a}")
        if entries != size:
            raise ConversionError(f"{path}:{line}: factor {a} has {entries} table entries, its "
                                  f"variables' cardinalities give {size}")
        if size > len(tokens.items) - tokens.next:
            raise ConversionError(f"{path}:{line}: factor {a} needs {size} table entries, the "
                                  f"file has {len(tokens.items) - tokens.next} numbers left")
        table = np.empty(size)
        for t in range(size):
            table[t], line = tokens.take(f"entry {t} of factor {a}", float)
            if table[t] < 0:
                raise ConversionError(f"{path}:{line}: entry {t} of factor {a} is negative")
        tables.append(table)
    if tokens.next != len(tokens.items):
        number, token = tokens.items[tokens.next]
        raise ConversionError(f"{path}:{number}: '{token}' after the last table")
    return cards, scopes, tables


def read_evidence(path, cards):
    """{variable: value} of an .evid file: the count, then variable and value pairs (a leading
    sample count of 1, the older form, is accepted)."""
    tokens = Tokens(path)
    values = [tokens.take("a number")[0] for _ in range(len(tokens.items))]
    if len(values) >= 2 and values[0] == 1 and len(values) == 2 + 2 * values[1]:
        values = values[1:]
    if not values or len(values) != 1 + 2 * values[0]:
        raise ConversionError(f"{path}: expected a count n and n variable-value pairs")
    evidence = {}
    for v, value in zip(values[1::2], values[2::2]):
        if not 0 <= v < len(cards):
            raise ConversionError(f"{path}: observed variable {v} is outside 0..{len(cards) - 1}")
        if not 0 <= value < cards[v]:
            raise ConversionError(f"{path}: variable {v} observed at {value}, outside "
                                  f"0..{cards[v] - 1}")
        if v in evidence:
            raise ConversionError(f"{path}: variable {v} is observed twice")
        evidence[v] = value
    return evidence


def condition(cards, scopes, tables, evidence):
    kept = [v for v in range(len(cards)) if v not in evidence]
    if not kept:
        raise ConversionError("the evidence observes every variable: nothing to predict")
    new_id = {v: i for i, v in enumerate(kept)}
    factors, theta = [], []
    for scope, table in zip(scopes, tables):
        cut = table.reshape([cards[v] for v in scope])
        for axis in reversed(range(len(scope))):
            if scope[axis] in evidence:
                cut = np.take(cut, evidence[scope[axis]], axis=axis)
        free = [v for v in scope if v not in evidence]
        if not free:
            continue
        factors.append([new_id[v] for v in free])
        theta.append(np.log(np.maximum(cut.reshape(-1), SMALLEST)))
    theta = np.concatenate(theta) if theta else np.zeros(0)
    rows = SparseRows(np.arange(theta.size + 1), np.arange(theta.size), np.ones(theta.size))
    example = Example(card=[cards[v] for v in kept], factors=factors, factor_features=rows)
    return ConvertedModel(example=example, num_params=int(theta.size), theta=theta,
                          dropped_variables=sorted(evidence))
