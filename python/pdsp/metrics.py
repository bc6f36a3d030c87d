"""Reading a `--metrics` JSON-lines file (docs/file-format.md, Metrics): the run header, one record
per outer iteration as columns of numpy arrays, and the end record.

A file still being written (a run in progress) reads as far as its last complete line, so the
estimator's progress display can follow it."""
import dataclasses
import json
from typing import Optional

import numpy as np


class MetricsError(ValueError):
    """One line: `path: line N: what is wrong`."""


@dataclasses.dataclass
class Metrics:
    """`run`: the header's fields; `iterations`: one dict per iteration record; `end`: the end
    record, None while the run goes on (or when it was killed)."""
    path: str
    run: dict
    iterations: list
    end: Optional[dict]

    def column(self, field):
        """One field over the iterations as float64 (NaN where null or absent: not measured,
        not finite)."""
        return np.array([np.nan if record.get(field) is None else record[field]
                         for record in self.iterations], dtype=np.float64)

    def columns(self):
        """Every numeric field of the iteration records, as arrays (strings such as `direction`
        stay lists)."""
        fields = dict.fromkeys(name for record in self.iterations for name in record)
        fields.pop("type", None)
        table = {}
        for field in fields:
            values = [record.get(field) for record in self.iterations]
            numeric = all(value is None or isinstance(value, (int, float)) for value in values)
            table[field] = self.column(field) if numeric else values
        return table

    def frame(self):
        """The iteration records as a pandas DataFrame (pandas must be installed)."""
        try:
            import pandas
        except ImportError:
            raise ImportError("Metrics.frame() needs pandas; columns() gives numpy arrays")
        return pandas.DataFrame(self.columns())


def read_metrics(path, complete_lines_only=True):
    """Parses `path`. A malformed line is a MetricsError naming it, except a last line without
    its newline when `complete_lines_only` (a run still writing it), which is left out."""
    with open(path, "rb") as source:
        text = source.read().decode("utf-8", "replace")
    lines = text.split("\n")
    if complete_lines_only and not text.endswith("\n"):
        lines = lines[:-1]
    run, iterations, end = None, [], None
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as error:
            raise MetricsError(f"{path}: line {number}: not JSON ({error.msg})") from None
        kind = record.get("type") if isinstance(record, dict) else None
        if kind == "run":
            run = record
        elif kind == "iteration":
            iterations.append(record)
        elif kind == "end":
            end = record
        else:
            raise MetricsError(f"{path}: line {number}: no type run, iteration or end")
    if run is None and (iterations or end):
        raise MetricsError(f"{path}: line 1: the run header is missing")
    return Metrics(path, run or {}, iterations, end)
