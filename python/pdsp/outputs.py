"""Reading what pdsp writes (docs/file-format.md): models, predictions and the
progress a checkpoint records, as numpy arrays and plain dicts of Python values.

Each reader checks the file's `format` attribute first, so a data set passed as a model is one
`OutputFileError` line naming the file, not a KeyError deep down."""
import dataclasses
import json
import os
from typing import Optional

import h5py
import numpy as np


class OutputFileError(ValueError):
    """One line: `path: what is wrong with it`."""


@dataclasses.dataclass
class BoostedTrees:
    """The trees of one region type of a trees class (docs/file-format.md, "Model"): the
    splits are XGBoost's JSON model (`booster`), the leaf values pdsp's (`leaf_value`, by tree
    from `tree_offset`, at XGBoost's node ids). Tree t adds to output t % outputs."""
    kind: str  # "variables" or "factors"
    type: int
    outputs: int
    booster: str
    tree_offset: np.ndarray
    leaf_value: np.ndarray

    def margins(self, features):
        """The trees' sum at each row of `features` ([rows, dim], the type's observation rows
        made dense, absent entries 0): [rows, outputs], what the potentials of a region with that
        row get (its first `states` outputs)."""
        features = np.asarray(features, dtype=np.float32)
        trees = json.loads(self.booster)["learner"]["gradient_booster"]["model"]["trees"] \
            if self.booster else []
        out = np.zeros((features.shape[0], self.outputs))
        rows = np.arange(features.shape[0])
        for t, tree in enumerate(trees):
            left, right = np.asarray(tree["left_children"]), np.asarray(tree["right_children"])
            feature = np.asarray(tree["split_indices"])
            threshold = np.asarray(tree["split_conditions"], dtype=np.float32)
            node = np.zeros(len(rows), dtype=np.int64)
            while True:  # every row one level down until all are at leaves
                inner = left[node] != -1
                if not inner.any():
                    break
                at = node[inner]
                goes_left = features[rows[inner], feature[at]] < threshold[at]
                node[inner] = np.where(goes_left, left[at], right[at])
            values = self.leaf_value[self.tree_offset[t]:self.tree_offset[t + 1]]
            out[:, t % self.outputs] += values[node]
        return out


@dataclasses.dataclass
class Network:
    """One region type's network of an mlp (or constant) class: f(x) = W s(U x + b) + c, s the
    logistic sigmoid (a constant: f = c, no hidden unit)."""
    kind: str  # "variables" or "factors"
    type: int
    U: np.ndarray  # [hidden, dim]
    b: np.ndarray  # [hidden]
    W: np.ndarray  # [states, hidden]
    c: np.ndarray  # [states]

    def outputs(self, features):
        """f at each row of `features` ([rows, dim], the observation rows made dense):
        [rows, states]."""
        hidden = 1.0 / (1.0 + np.exp(-(np.asarray(features) @ self.U.T + self.b)))
        return hidden @ self.W.T + self.c


@dataclasses.dataclass
class Model:
    """A trained model: `theta` and every root attribute (hyper-parameters, `iterations`,
    `stop_reason`, provenance); the boosted trees of a trees class in `trees`; the weights of
    the data's non-local terms in `psi` (templates, then psi_u and psi_w; None without)."""
    path: str
    theta: np.ndarray
    attributes: dict
    trees: list = dataclasses.field(default_factory=list)
    psi: np.ndarray = None

    def networks(self, data):
        """The networks of the mlp and constant classes, split out of `theta` by the layout of
        docs/file-format.md ("Model"), which needs the data set's types (`data`: the path of a
        file of the training set's layout) for their dimensions and states."""
        classes = {"variables": self.attributes.get("unary_model", "linear"),
                   "factors": self.attributes.get("pairwise_model", "linear")}
        hidden_units = int(self.attributes.get("hidden", 16))
        with h5py.File(data, "r") as handle:
            num_params = int(handle.attrs["num_params"])
            states = {"variables": _type_states(handle, "vars", "var_types",
                                                handle["/vars/card"][()]),
                      "factors": _type_states(handle, "factors", "factor_types",
                                              _table_sizes(handle))}
            dims = {"variables": handle["/var_types/dim"][()] if "var_types" in handle else [],
                    "factors": handle["/factor_types/dim"][()] if "factor_types" in handle
                    else []}
        networks, at = [], num_params
        for kind in ("variables", "factors"):
            if classes[kind] not in ("mlp", "constant"):
                continue
            hidden = hidden_units if classes[kind] == "mlp" else 0
            for type_, dim in enumerate(dims[kind]):
                count = states[kind][type_]
                parts = []
                for shape in ((hidden, dim), (hidden,), (count, hidden), (count,)):
                    size = int(np.prod(shape))
                    parts.append(self.theta[at:at + size].reshape(shape))
                    at += size
                networks.append(Network(kind, type_, *parts))
        if at != len(self.theta):
            raise OutputFileError(f"{self.path}: /theta has {len(self.theta)} parameters, the "
                                  f"classes on {data} take {at}")
        return networks


@dataclasses.dataclass
class Predictions:
    """Arg-max labels per variable and the marginals, one entry per (variable, state), both in
    the data set's global variable order. `marginal_offset[v]` is where variable v's states
    start when the data set's cardinalities are known (`read_predictions(..., data=...)`)."""
    path: str
    label: np.ndarray
    marginal: np.ndarray
    attributes: dict
    var_offset: Optional[np.ndarray] = None  # the data set's /examples/var_offset
    marginal_offset: Optional[np.ndarray] = None

    def labels_per_example(self):
        """The labels split by example (needs the data set)."""
        self._need_data()
        return [self.label[a:b] for a, b in zip(self.var_offset[:-1], self.var_offset[1:])]

    def marginals_of(self, variable):
        """The marginal of one global variable (needs the data set)."""
        self._need_data()
        return self.marginal[self.marginal_offset[variable]:self.marginal_offset[variable + 1]]

    def _need_data(self):
        if self.var_offset is None:
            raise ValueError(f"{self.path}: read it with data=... to split it by example")


def python_value(value):
    """An HDF5 attribute as a plain Python value: str for strings, int/float for scalars."""
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    if isinstance(value, np.ndarray):
        return [python_value(item) for item in value.tolist()] if value.dtype.kind in "SO" \
            else value.tolist()
    if isinstance(value, np.generic):
        return value.item()
    return value


def attributes_of(node):
    return {name: python_value(value) for name, value in node.attrs.items()}


def _open(path, expected_format):
    """The open file, after checking its `format` attribute."""
    if not os.path.isfile(path):
        raise OutputFileError(f"{path}: file not found")
    try:
        handle = h5py.File(path, "r")
    except OSError as error:
        raise OutputFileError(f"{path}: not a readable HDF5 file ({error})") from None
    found = python_value(handle.attrs.get("format", b"(none)"))
    if found != expected_format:
        handle.close()
        raise OutputFileError(f"{path}: attribute format is '{found}', expected "
                              f"'{expected_format}'")
    return handle


def _array(handle, path, name, dtype):
    if name not in handle:
        raise OutputFileError(f"{path}: dataset {name} is missing")
    return np.asarray(handle[name][()], dtype=dtype)


def _type_states(handle, regions, types, sizes):
    """The most states (or table entries) of a region of each type in the file."""
    if types not in handle:
        return []
    kind = handle[f"/{regions}/type"][()]
    most = np.zeros(len(handle[f"/{types}/dim"]), dtype=np.int64)
    np.maximum.at(most, kind[kind >= 0], np.asarray(sizes)[kind >= 0])
    return most


def _table_sizes(handle):
    card = handle["/vars/card"][()]
    ptr, members = handle["/factors/var_ptr"][()], handle["/factors/vars"][()]
    return np.multiply.reduceat(card[members], ptr[:-1]) if len(members) else np.zeros(0, int)


def _trees(handle, path):
    if "/trees/index" not in handle:
        return []
    index = _array(handle, path, "/trees/index", np.int64).reshape(-1, 3)
    trees = []
    for kind, type_, outputs in index:
        group = f"/trees/{'variables' if kind == 0 else 'factors'}_{type_}"
        trees.append(BoostedTrees(
            "variables" if kind == 0 else "factors", int(type_), int(outputs),
            _array(handle, path, group + "/booster", np.uint8).tobytes().decode("utf-8"),
            _array(handle, path, group + "/tree_offset", np.int64),
            _array(handle, path, group + "/leaf_value", np.float64)))
    return trees


def read_model(path):
    with _open(path, "pdsp-model") as handle:
        psi = (_array(handle, path, "/nonlocal/psi", np.float64) if "/nonlocal/psi" in handle
               else None)
        return Model(path, _array(handle, path, "/theta", np.float64), attributes_of(handle),
                     _trees(handle, path), psi)


def read_predictions(path, data=None):
    """The predictions in `path`; with `data` (the predicted data set) they are split by example
    and by variable."""
    with _open(path, "pdsp-prediction") as handle:
        predictions = Predictions(path, _array(handle, path, "/prediction/label", np.int32),
                                  _array(handle, path, "/prediction/marginal", np.float64),
                                  attributes_of(handle))
    if data is not None:
        with h5py.File(data, "r") as handle:
            predictions.var_offset = np.asarray(handle["/examples/var_offset"][()], np.int64)
            card = np.asarray(handle["/vars/card"][()], np.int64)
        if card.size != predictions.label.size or card.sum() != predictions.marginal.size:
            raise OutputFileError(
                f"{path}: {predictions.label.size} labels and {predictions.marginal.size} "
                f"marginals, but {data} has {card.size} variables and {card.sum()} states")
        predictions.marginal_offset = np.concatenate(([0], np.cumsum(card)))
    return predictions


# The checkpoint attributes that say how far a run got (the rest are checksums and settings).
PROGRESS_FIELDS = ("iteration", "seconds_trained", "step", "previous_objective", "stop_reason",
                   "smoothing", "dual_best", "num_params", "written_by_ranks", "started_at",
                   "pdsp_version", "pdsp_commit")


def read_checkpoint_progress(path):
    """How far the run behind a checkpoint got: a dict of PROGRESS_FIELDS plus `path` and the
    L-BFGS `lbfgs_pairs` it keeps. `path` may be a checkpoint directory: then the one its
    `latest` names."""
    if os.path.isdir(path):
        latest = os.path.join(path, "latest")
        if not os.path.isfile(latest):
            raise OutputFileError(f"{path}: no file 'latest' in this checkpoint directory")
        with open(latest) as names:
            path = os.path.join(path, names.read().strip())
    with _open(path, "pdsp-checkpoint") as handle:
        attributes = attributes_of(handle)
        progress = {field: attributes.get(field) for field in PROGRESS_FIELDS}
        progress["path"] = path
        # /lbfgs/s is flat, pairs x num_params.
        entries = handle["/lbfgs/s"].shape[0] if "/lbfgs/s" in handle else 0
        progress["lbfgs_pairs"] = entries // max(int(attributes.get("num_params", 1)), 1)
    return progress
