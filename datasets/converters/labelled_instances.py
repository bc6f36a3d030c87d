"""Instances of a multi-label source as its readers hand them over: sparse feature rows and a
0/1 label matrix, in the source's order."""
import dataclasses

import numpy as np

from pdsp import SparseRows


@dataclasses.dataclass
class LabelledInstances:
    features: SparseRows  # one row per instance, positions 0..num_features-1
    label: np.ndarray  # instances x num_labels, 0 or 1
    num_features: int
    num_labels: int


def from_rows(rows, label_sets, num_features, num_labels):
    """`rows` holds (positions, values) per instance and `label_sets` its labels' numbers.
    Zero values are left out, so a dense and a sparse source of the same data agree."""
    row = np.repeat(np.arange(len(rows)), [len(positions) for positions, _ in rows])
    index = np.concatenate([np.zeros(0, dtype=np.int64)] + [np.asarray(p, dtype=np.int64)
                                                            for p, _ in rows])
    value = np.concatenate([np.zeros(0)] + [np.asarray(v, dtype=np.float64) for _, v in rows])
    kept = value != 0
    row, index, value = row[kept], index[kept], value[kept]
    ptr = np.concatenate(([0], np.cumsum(np.bincount(row, minlength=len(rows)))))
    label = np.zeros((len(rows), num_labels), dtype=np.int64)
    for n, labels in enumerate(label_sets):
        label[n, list(labels)] = 1
    return LabelledInstances(SparseRows(ptr, index, value), label, num_features, num_labels)
