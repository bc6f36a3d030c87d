"""Writing pdsp data sets from Python.

An `Example` describes one graph with local ids (variables 0..V-1 of the example, its own
observation rows 0..R-1); `write_dataset` lays a list of them out as the file's flat arrays,
checks them with the reader's rules (`dataset_rules`) and writes the file atomically.
`write_arrays` does the last two steps for arrays built some other way.

The file is version 1 (docs/file-format.md) unless it uses observation rows or typed regions,
then version 2 (docs/file-format.md, format 2), where row features are optional.
"""
import dataclasses
from typing import Optional, Sequence

import h5py
import numpy as np

from .nonlocal_terms import ARRAY_TYPES as NONLOCAL_ARRAY_TYPES, NonlocalTerms
from .dataset_rules import DatasetError, check_dataset, check_graph, uses_compact_parts
from .output_file import atomic_output

FORMAT = "pdsp-dataset"

# The contract's width of every array (docs/file-format.md, formats 1 and 2).
ARRAY_TYPES = {
    "/examples/var_offset": np.int64, "/examples/factor_offset": np.int64,
    "/examples/obs_offset": np.int64,
    "/vars/card": np.int32, "/vars/label": np.int32, "/vars/type": np.int32,
    "/vars/obs_row": np.int64, "/vars/feat_ptr": np.int64, "/vars/feat_param": np.int32,
    "/vars/feat_value": np.float64, "/vars/counting": np.float64, "/vars/loss": np.float64,
    "/factors/var_ptr": np.int64, "/factors/vars": np.int64, "/factors/type": np.int32,
    "/factors/obs_row": np.int64, "/factors/feat_ptr": np.int64, "/factors/feat_param": np.int32,
    "/factors/feat_value": np.float64, "/factors/counting": np.float64,
    "/obs/ptr": np.int64, "/obs/index": np.int32, "/obs/value": np.float64,
    "/var_types/param_offset": np.int64, "/var_types/dim": np.int32,
    "/factor_types/param_offset": np.int64, "/factor_types/dim": np.int32,
    **NONLOCAL_ARRAY_TYPES,
}


class SparseRows:
    """Rows of (index, value) entries in CSR form: row i is entries [ptr[i], ptr[i+1]).
    `value` None means every value is 1 (binary rows)."""

    def __init__(self, ptr, index, value=None):
        self.ptr = _whole_numbers("SparseRows", "ptr", ptr)
        self.index = np.asarray(index)
        self.value = None if value is None else np.asarray(value, dtype=np.float64)

    @classmethod
    def from_dense(cls, matrix, binary=False):
        """One row per row of `matrix`, keeping its non-zero entries; `binary` drops the values
        (the caller vouches they are all 1)."""
        matrix = np.asarray(matrix)
        rows, index = np.nonzero(matrix)
        ptr = np.concatenate(([0], np.cumsum(np.bincount(rows, minlength=matrix.shape[0]))))
        return cls(ptr, index, None if binary else matrix[rows, index])

    @property
    def num_rows(self):
        return self.ptr.size - 1


@dataclasses.dataclass
class RegionType:
    """A parameter block: region state t and observation position j use
    theta[param_offset + t * dim + j] (dim 0: theta[param_offset + t], a shared table)."""
    param_offset: int
    dim: int


@dataclasses.dataclass
class Example:
    """One example with local ids. `factors` lists each factor's variables (table row-major,
    last variable fastest). `var_obs`/`factor_obs` are rows of this example's `obs`, -1 for
    none. `var_features` has one row of (parameter, value) per (variable, state), `factor_features`
    one per factor table entry. Whatever is None is absent (types -1, no rows)."""
    card: Sequence[int]
    label: Optional[Sequence[int]] = None
    factors: Sequence[Sequence[int]] = ()
    var_type: Optional[Sequence[int]] = None
    var_obs: Optional[Sequence[int]] = None
    factor_type: Optional[Sequence[int]] = None
    factor_obs: Optional[Sequence[int]] = None
    obs: Optional[SparseRows] = None
    var_features: Optional[SparseRows] = None
    factor_features: Optional[SparseRows] = None


@dataclasses.dataclass
class Dataset:
    """A whole data set in memory, as write_dataset takes it: what `pdsp.Estimator` accepts
    besides a file's path."""
    examples: Sequence[Example]
    num_params: int
    var_types: Optional[Sequence[RegionType]] = None
    factor_types: Optional[Sequence[RegionType]] = None
    nonlocal_terms: Optional[NonlocalTerms] = None

    def write(self, path, inputs=()):
        return write_dataset(path, self.examples, self.num_params, self.var_types,
                             self.factor_types, inputs, self.nonlocal_terms)


def write_dataset(path, examples, num_params, var_types=None, factor_types=None, inputs=(),
                  nonlocal_terms=None, into=None):
    """Writes `examples` (in order) to `path`; `var_types`/`factor_types` are lists of RegionType
    (None: the file has no typed regions of that kind); `nonlocal_terms` a NonlocalTerms (None:
    none); `into` an OutputSet (output_file.py) that lands it with the set's other files. Raises
    DatasetError (a ValueError, one line) for anything pdsp would refuse, and OutputError when
    `path` cannot be written or is one of `inputs`. Returns the arrays written."""
    arrays = dataset_arrays(path, examples, var_types, factor_types, nonlocal_terms)
    return write_checked_arrays(path, _checked(path, arrays, num_params), num_params, inputs,
                                into)


def checked_arrays(path, examples, num_params, var_types=None, factor_types=None,
                   nonlocal_terms=None):
    """The arrays write_dataset would write for `examples`, in the contract's widths and checked
    (DatasetError otherwise), without writing anything: to check several files before writing
    any."""
    return _checked(path, dataset_arrays(path, examples, var_types, factor_types, nonlocal_terms),
                    num_params)


def write_arrays(path, arrays, num_params, inputs=()):
    """Checks `arrays` (dataset name -> values, in any integer width) and writes them in the
    contract's widths; returns them in those widths."""
    return write_checked_arrays(path, _checked(path, arrays, num_params), num_params, inputs)


def _whole_numbers(path, where, values):
    """`values` as int64, or a DatasetError naming `where` and the first value that is not a
    whole number (numpy would truncate 2.5 to 2, and fail on NaN or text in its own words)."""
    try:
        array = np.asarray(values)
    except (TypeError, ValueError):
        raise DatasetError(f"{path}: {where}: not an array of whole numbers") from None
    flat = array.reshape(-1)
    if array.dtype.kind in "iub":
        return array.astype(np.int64)
    if array.dtype.kind == "f":
        bad = np.flatnonzero(~np.isfinite(flat) | (flat != np.round(flat)))
    else:  # text, None, objects; as given (numpy turns [2, "a"] into ["2", "a"])
        flat = np.asarray(values, dtype=object).reshape(-1)
        bad = [i for i, v in enumerate(flat)
               if not (isinstance(v, (int, np.integer)) and not isinstance(v, bool))]
    if len(bad):
        raise DatasetError(f"{path}: {where}[{bad[0]}]: {flat[bad[0]]!r} is not a whole number")
    return array.astype(np.int64)


def _checked(path, arrays, num_params):
    if isinstance(num_params, bool) or not isinstance(num_params, (int, np.integer)):
        raise DatasetError(f"{path}: @num_params: {num_params!r} is not a whole number")
    arrays = {name: _typed(path, name, values) for name, values in arrays.items()}
    check_dataset(arrays, num_params, path)
    return arrays


def write_checked_arrays(path, arrays, num_params, inputs=(), into=None):
    """Writes arrays that checked_arrays returned (atomically, never over an input; with `into`,
    an OutputSet, when the set commits)."""
    with atomic_output(path, inputs, into) as temporary, h5py.File(temporary, "w") as file:
        # Fixed-length strings, as pdsp writes every string attribute.
        file.attrs["format"] = np.bytes_(FORMAT)
        file.attrs["format_version"] = np.int64(2 if uses_compact_parts(arrays) else 1)
        file.attrs["num_params"] = np.int64(num_params)
        for name, values in arrays.items():
            if name.startswith("@"):  # an attribute of the file (non-local terms)
                file.attrs[name[1:]] = values[0]
            else:
                file.create_dataset(name, data=values)
    return arrays


def _typed(path, name, values):
    if name not in ARRAY_TYPES:
        raise DatasetError(f"{path}: {name}: is not a dataset of the pdsp-dataset format")
    values = np.asarray(values).reshape(-1)
    wanted = np.dtype(ARRAY_TYPES[name])
    if wanted.kind == "i" and values.size:
        if values.dtype.kind not in "iub":
            raise DatasetError(f"{path}: {name}: holds {values.dtype}, expected integers")
        limits = np.iinfo(wanted)
        outside = np.flatnonzero((values < limits.min) | (values > limits.max))
        if outside.size:
            raise DatasetError(f"{path}: {name}[{outside[0]}]: {values[outside[0]]} does not fit "
                               f"in {wanted}")
    return values.astype(wanted)


def dataset_arrays(path, examples, var_types=None, factor_types=None, nonlocal_terms=None):
    """The file's arrays for `examples` with global ids. Only additions turn local ids into
    global ones, so a local id outside its example lands outside it and check_dataset names it."""
    examples = list(examples)
    if not examples:
        raise DatasetError(f"{path}: /examples/var_offset: the data set holds no example")
    var_types = _region_types(path, "/var_types", var_types)
    factor_types = _region_types(path, "/factor_types", factor_types)
    layout = _Layout(path, examples)
    arrays = {
        "/examples/var_offset": layout.var_offset,
        "/examples/factor_offset": layout.factor_offset,
        "/vars/card": layout.card,
        "/factors/var_ptr": layout.var_ptr,
        "/factors/vars": layout.factor_vars,
    }
    check_graph(arrays, path)  # before rows are sized by the tables
    labelled = [e.label is not None for e in examples]
    if any(labelled):
        arrays["/vars/label"] = layout.per_variable("/vars/label", [e.label for e in examples])
    typed_dims = [t.dim for t in (var_types or []) + (factor_types or [])]
    if any(e.obs is not None for e in examples) or any(d > 0 for d in typed_dims):
        obs = layout.rows("/obs/ptr", [e.obs for e in examples])
        arrays["/examples/obs_offset"] = layout.obs_offset
        arrays.update({"/obs/ptr": obs.ptr, "/obs/index": obs.index})
        if obs.value is not None:
            arrays["/obs/value"] = obs.value
    layout.add_types(arrays, "/vars", "/var_types", var_types,
                     [e.var_type for e in examples], [e.var_obs for e in examples])
    layout.add_types(arrays, "/factors", "/factor_types", factor_types,
                     [e.factor_type for e in examples], [e.factor_obs for e in examples])
    # Version 1 requires the row features, version 2 lets a file without any leave them out.
    for group, rows, counts in (("/vars", [e.var_features for e in examples], layout.states),
                                ("/factors", [e.factor_features for e in examples],
                                 layout.table_entries())):
        if any(r is not None for r in rows) or not uses_compact_parts(arrays):
            features = layout.rows(f"{group}/feat_ptr", rows, counts)
            arrays[f"{group}/feat_ptr"] = features.ptr
            arrays[f"{group}/feat_param"] = features.index
            arrays[f"{group}/feat_value"] = (features.value if features.value is not None
                                             else np.ones(features.index.size))
    if nonlocal_terms is not None:
        arrays.update(nonlocal_terms.arrays(len(examples)))
    return arrays


class _Layout:
    """Where each example's variables, factors and observation rows start in the file."""

    def __init__(self, path, examples):
        self.path = path
        self.examples = examples
        cards = [_whole_numbers(path, f"example {n}: card", e.card).reshape(-1)
                 for n, e in enumerate(examples)]
        factors = [_factor_lists(path, n, e.factors) for n, e in enumerate(examples)]
        self.card = np.concatenate(cards)
        self.var_offset = _offsets([c.size for c in cards])
        self.factor_offset = _offsets([arity.size for arity, _ in factors])
        self.var_ptr = _offsets(np.concatenate([arity for arity, _ in factors]))
        self.factor_vars = np.concatenate(
            [ids + self.var_offset[n] for n, (_, ids) in enumerate(factors)])
        self.obs_offset = _offsets([0 if e.obs is None else e.obs.num_rows for e in examples])
        self.states = [int(c.sum()) for c in cards]

    def table_entries(self):
        """Factor table entries per example; only for a graph check_graph has passed."""
        if not self.factor_vars.size:
            return np.zeros(len(self.examples), dtype=np.int64)
        table = np.multiply.reduceat(self.card[self.factor_vars], self.var_ptr[:-1])
        example = np.repeat(np.arange(len(self.examples)), np.diff(self.factor_offset))
        return np.bincount(example, weights=table, minlength=len(self.examples)).astype(np.int64)

    def per_region(self, name, offsets, values, fill):
        """Concatenates one array per example, each of the example's length (None: `fill`)."""
        parts = []
        for n, part in enumerate(values):
            count = offsets[n + 1] - offsets[n]
            part = np.full(count, fill) if part is None else np.asarray(part).reshape(-1)
            if part.size != count:
                raise DatasetError(f"{self.path}: {name}: example {n} gives {part.size} values "
                                   f"for its {count} regions")
            parts.append(part)
        return np.concatenate(parts)

    def per_variable(self, name, values):
        missing = [n for n, part in enumerate(values) if part is None]
        if missing:
            raise DatasetError(f"{self.path}: {name}: example {missing[0]} has none while "
                               "others have")
        return self.per_region(name, self.var_offset, values, 0)

    def rows(self, name, parts, counts=None):
        """Stacks each example's rows into one SparseRows; with `counts`, example n must give
        counts[n] rows (None: that many empty rows), without, None is no row."""
        ptrs, indices, values = [np.zeros(1, dtype=np.int64)], [], []
        binary = all(p is None or p.value is None for p in parts)
        end = 0
        for n, part in enumerate(parts):
            expected = 0 if counts is None else counts[n]
            if part is None:
                part = SparseRows(np.zeros(expected + 1, dtype=np.int64), np.zeros(0, np.int64))
            elif counts is not None and part.num_rows != expected:
                raise DatasetError(f"{self.path}: {name}: example {n} gives {part.num_rows} rows, "
                                   f"expected {expected}")
            ptrs.append(part.ptr[1:] - part.ptr[0] + end)
            end += int(part.ptr[-1] - part.ptr[0])
            indices.append(part.index[part.ptr[0]:part.ptr[-1]])
            if not binary:
                values.append(np.ones(indices[-1].size) if part.value is None
                              else part.value[part.ptr[0]:part.ptr[-1]])
        return SparseRows(np.concatenate(ptrs), np.concatenate(indices),
                          None if binary else np.concatenate(values))

    def add_types(self, arrays, group, type_group, types, region_types, region_obs):
        offsets = self.var_offset if group == "/vars" else self.factor_offset
        if types is None:
            given = [n for n, t in enumerate(region_types) if t is not None]
            if given:
                raise DatasetError(f"{self.path}: {group}/type: example {given[0]} gives types "
                                   f"but no {type_group} were declared")
            return
        arrays[f"{type_group}/param_offset"] = [t.param_offset for t in types]
        arrays[f"{type_group}/dim"] = [t.dim for t in types]
        arrays[f"{group}/type"] = self.per_region(f"{group}/type", offsets, region_types, -1)
        if any(t.dim > 0 for t in types) or any(r is not None for r in region_obs):
            local = self.per_region(f"{group}/obs_row", offsets, region_obs, -1).astype(np.int64)
            example = np.repeat(np.arange(len(self.examples)), np.diff(offsets))
            arrays[f"{group}/obs_row"] = np.where(local >= 0, local + self.obs_offset[example],
                                                  local)


def _region_types(path, group, types):
    """`types` as a list (None stays None), each a RegionType, or a DatasetError naming it."""
    if types is None:
        return None
    types = list(types)
    for i, t in enumerate(types):
        if not isinstance(t, RegionType):
            raise DatasetError(f"{path}: {group}[{i}]: {t!r} is not a RegionType")
    return types


def _factor_lists(path, n, factors):
    """(arity of each factor, their variables in a row) of example n: a 2-D array of equal
    arities is taken whole, a list of lists factor by factor."""
    if isinstance(factors, np.ndarray) and factors.ndim == 2:
        ids = _whole_numbers(path, f"example {n}: factors", factors)
        return np.full(ids.shape[0], ids.shape[1], dtype=np.int64), ids.reshape(-1)
    lists = [_whole_numbers(path, f"example {n}: factor {a}", f).reshape(-1)
             for a, f in enumerate(factors)]
    return (np.array([f.size for f in lists], dtype=np.int64),
            np.concatenate([np.zeros(0, dtype=np.int64)] + lists))


def _offsets(counts):
    return np.concatenate(([0], np.cumsum(counts, dtype=np.int64))).astype(np.int64)
