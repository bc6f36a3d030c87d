"""The checks pdsp's reader applies to a data set (docs/file-format.md for version 1 and for the
compact parts of version 2), run on the arrays before they are written, so that a file this
package writes is one pdsp accepts. Every violation is a DatasetError of one line naming the
file, the dataset and the first bad index, in the reader's words where it has them."""
import numpy as np

from .nonlocal_terms import check_nonlocal

# Largest factor table pdsp accepts (src/data/dataset_reader.cpp, kMaxTableSize).
MAX_TABLE_SIZE = 2**32
MAX_NUM_PARAMS = 2**31 - 1

VERSION_1_ARRAYS = (
    "/examples/var_offset", "/examples/factor_offset", "/vars/card", "/factors/var_ptr",
    "/factors/vars")
OBSERVATION_ARRAYS = ("/examples/obs_offset", "/obs/ptr", "/obs/index")


class DatasetError(ValueError):
    """One line: `file: /dataset[index]: what is wrong`."""


def uses_compact_parts(arrays):
    """A file with observation rows or typed regions must say format_version = 2."""
    return any(name in arrays for name in ("/obs/ptr", "/vars/type", "/factors/type"))


class _Problem:
    def __init__(self, file):
        self.file = file

    def at(self, name, index, message):
        raise DatasetError(f"{self.file}: {name}[{int(index)}]: {message}")

    def whole(self, name, message):
        raise DatasetError(f"{self.file}: {name}: {message}")

    def first(self, bad, name, message_of):
        """Fails at the first True of `bad`; message_of(i) says what is wrong there."""
        where = np.flatnonzero(bad)
        if where.size:
            self.at(name, where[0], message_of(where[0]))


def check_dataset(arrays, num_params, file):
    """Raises DatasetError at the first rule `arrays` (dataset name -> numpy array) breaks."""
    problem = _Problem(file)
    if not 1 <= num_params <= MAX_NUM_PARAMS:
        problem.whole("@num_params", f"must be in [1, 2^31), got {num_params}")
    for name in VERSION_1_ARRAYS:
        if name not in arrays:
            problem.whole(name, "is missing")
    graph = _check_graph(problem, arrays)
    _check_labels(problem, arrays)
    compact = uses_compact_parts(arrays)
    _check_row_features(problem, arrays, "/vars", graph["states"], num_params, compact)
    _check_row_features(problem, arrays, "/factors", graph["table_entries"], num_params, compact)
    _check_region_numbers(problem, arrays, graph)
    row_max = _check_observations(problem, arrays, graph["examples"])
    _check_types(problem, arrays, num_params, row_max, "/vars", "/var_types", "variable",
                 graph["card"], graph["var_example"])
    _check_types(problem, arrays, num_params, row_max, "/factors", "/factor_types", "factor",
                 graph["table_size"], graph["factor_example"])
    check_nonlocal(problem, arrays, graph, _check_offsets)


def check_graph(arrays, file):
    """The checks of the examples, variables and factors alone, for a writer that must know the
    graph is sound before it sizes the rows that hang on it."""
    _check_graph(_Problem(file), arrays)


def _check_offsets(problem, name, offsets, end, nonempty=None):
    """Offsets from 0 to `end`, never decreasing; with `nonempty` (the reason, "every x needs a
    y"), every range must hold an element."""
    if offsets.size == 0:
        problem.whole(name, "is empty: offsets start with a 0")
    if offsets[0] != 0:
        problem.at(name, 0, "must start at 0")
    # Index i names the later offset of a bad pair, as the reader does.
    steps = np.concatenate(([1], np.diff(offsets)))
    if nonempty:
        problem.first(steps <= 0, name, lambda i: f"must increase ({nonempty})")
    else:
        problem.first(steps < 0, name, lambda i: "must not decrease")
    if offsets[-1] != end:
        problem.at(name, offsets.size - 1, f"is {offsets[-1]}, expected the length {end} of the "
                   "array it indexes")


def _check_length(problem, arrays, name, expected):
    if arrays[name].size != expected:
        problem.whole(name, f"has length {arrays[name].size}, expected {expected}")


def _owner(offsets, positions):
    """Index n of the range [offsets[n], offsets[n+1]) each position lies in."""
    return np.searchsorted(offsets, positions, side="right") - 1


def _check_graph(problem, arrays):
    var_offset, factor_offset = arrays["/examples/var_offset"], arrays["/examples/factor_offset"]
    card, var_ptr, factor_vars = arrays["/vars/card"], arrays["/factors/var_ptr"], arrays["/factors/vars"]
    if var_offset.size < 2:
        problem.whole("/examples/var_offset", "the file holds no example")
    if factor_offset.size != var_offset.size:
        problem.whole("/examples/factor_offset", f"has length {factor_offset.size}, expected "
                      f"{var_offset.size} (the length of /examples/var_offset)")
    _check_offsets(problem, "/examples/var_offset", var_offset, card.size,
                   "every example needs at least one variable")
    _check_offsets(problem, "/examples/factor_offset", factor_offset, var_ptr.size - 1)
    problem.first(card < 1, "/vars/card", lambda v: f"cardinality must be >= 1, got {card[v]}")
    _check_offsets(problem, "/factors/var_ptr", var_ptr, factor_vars.size,
                   "every factor needs at least one variable")

    num_factors = var_ptr.size - 1
    slot_factor = _owner(var_ptr, np.arange(factor_vars.size))
    factor_example = _owner(factor_offset, np.arange(num_factors))
    slot_example = factor_example[slot_factor]
    outside = (factor_vars < var_offset[slot_example]) | (factor_vars >= var_offset[slot_example + 1])
    problem.first(outside, "/factors/vars", lambda k: (
        f"variable {factor_vars[k]} of factor {slot_factor[k]} is not in its example "
        f"{slot_example[k]} (variables {var_offset[slot_example[k]]}.."
        f"{var_offset[slot_example[k] + 1] - 1})"))
    order = np.lexsort((np.arange(factor_vars.size), factor_vars, slot_factor))
    repeated = np.zeros(factor_vars.size, dtype=bool)
    repeated[order[1:]] = ((slot_factor[order[1:]] == slot_factor[order[:-1]])
                           & (factor_vars[order[1:]] == factor_vars[order[:-1]]))
    problem.first(repeated, "/factors/vars", lambda k: (
        f"variable {factor_vars[k]} appears twice in factor {slot_factor[k]}"))

    table_size = np.ones(num_factors, dtype=np.int64)
    if num_factors:
        slot_card = card[factor_vars]
        bits = np.add.reduceat(np.log2(slot_card), var_ptr[:-1])
        problem.first(bits > np.log2(MAX_TABLE_SIZE) + 1e-9, "/factors/var_ptr",
                      lambda a: "factor table is too large")
        table_size = np.multiply.reduceat(slot_card.astype(np.int64), var_ptr[:-1])
    return {
        "examples": var_offset.size - 1,
        "card": card.astype(np.int64),
        "var_example": _owner(var_offset, np.arange(card.size)),
        "factor_example": factor_example,
        "table_size": table_size,
        "states": int(card.astype(np.int64).sum()),
        "table_entries": int(table_size.sum()),
    }


def _check_labels(problem, arrays):
    if "/vars/label" not in arrays:
        return
    _check_length(problem, arrays, "/vars/label", arrays["/vars/card"].size)
    label, card = arrays["/vars/label"], arrays["/vars/card"]
    problem.first((label < -1) | (label >= card), "/vars/label",
                  lambda v: f"label {label[v]} is outside [0, {card[v]}) and not -1 (unobserved)")


def _check_finite(problem, name, values):
    problem.first(~np.isfinite(values), name, lambda i: "value is not finite")


def _check_row_features(problem, arrays, group, rows, num_params, optional):
    names = [f"{group}/feat_ptr", f"{group}/feat_param", f"{group}/feat_value"]
    present = [name in arrays for name in names]
    if not any(present) and optional:
        return
    for name, there in zip(names, present):
        if not there:
            problem.whole(name, "is missing" + (f": the row features of {group} come together"
                                               if optional else ""))
    ptr, param, value = (arrays[name] for name in names)
    what = "states" if group == "/vars" else "factor table entries"
    if ptr.size != rows + 1:
        problem.whole(names[0], f"has length {ptr.size}, expected {rows + 1} ({what} + 1)")
    if value.size != param.size:
        problem.whole(names[2], f"has length {value.size}, expected the length {param.size} of "
                      f"{names[1]}")
    _check_offsets(problem, names[0], ptr, param.size)
    problem.first((param < 0) | (param >= num_params), names[1], lambda k: (
        f"parameter index {param[k]} is outside [0, {num_params})"))
    _check_finite(problem, names[2], value)


def _check_region_numbers(problem, arrays, graph):
    """The optional counting numbers (both or neither) and loss table: lengths and finiteness."""
    counted = ["/vars/counting" in arrays, "/factors/counting" in arrays]
    if counted[0] != counted[1]:
        missing = "/factors/counting" if counted[0] else "/vars/counting"
        problem.whole(missing, "is missing: counting numbers need both /vars/counting and "
                      "/factors/counting")
    lengths = {"/vars/counting": graph["card"].size, "/factors/counting": graph["table_size"].size,
               "/vars/loss": graph["states"]}
    for name, length in lengths.items():
        if name in arrays:
            _check_length(problem, arrays, name, length)
            _check_finite(problem, name, arrays[name])


def _check_observations(problem, arrays, examples):
    """Checks the observation rows and returns each row's largest position (-1: empty row), or
    None when the file has none."""
    present = [name in arrays for name in OBSERVATION_ARRAYS]
    if not any(present):
        if "/obs/value" in arrays:
            problem.whole("/obs/ptr", "is missing: /obs/value needs the observation rows")
        return None
    for name, there in zip(OBSERVATION_ARRAYS, present):
        if not there:
            problem.whole(name, "is missing: the observation rows need /examples/obs_offset, "
                          "/obs/ptr and /obs/index")
    obs_offset, ptr, index = (arrays[name] for name in OBSERVATION_ARRAYS)
    _check_length(problem, arrays, "/examples/obs_offset", examples + 1)
    _check_offsets(problem, "/obs/ptr", ptr, index.size)
    _check_offsets(problem, "/examples/obs_offset", obs_offset, ptr.size - 1)
    problem.first(index < 0, "/obs/index", lambda k: f"position {index[k]} is negative")
    if "/obs/value" in arrays:
        _check_length(problem, arrays, "/obs/value", index.size)
        _check_finite(problem, "/obs/value", arrays["/obs/value"])
    row_max = np.full(ptr.size - 1, -1, dtype=np.int64)
    filled = np.diff(ptr) > 0
    if index.size:
        row_max[filled] = np.maximum.reduceat(index, ptr[:-1][filled])
    return row_max


def _check_types(problem, arrays, num_params, row_max, group, type_group, kind, size, example):
    """The typed part of one region kind: presence, type ids, parameter bounds, observation rows
    inside the region's example and positions below the type's dimension."""
    names = [f"{type_group}/param_offset", f"{type_group}/dim", f"{group}/type"]
    present = [name in arrays for name in names]
    if not any(present):
        if f"{group}/obs_row" in arrays:
            problem.whole(f"{group}/type", f"is missing: {group}/obs_row needs typed regions")
        return
    for name, there in zip(names, present):
        if not there:
            problem.whole(name, f"is missing: {names[0]}, {names[1]} and {names[2]} come together")
    param_offset, dim, region_type = (arrays[name] for name in names)
    _check_length(problem, arrays, names[1], param_offset.size)
    _check_length(problem, arrays, names[2], size.size)
    problem.first(param_offset < 0, names[0], lambda k: f"must be >= 0, got {param_offset[k]}")
    problem.first(dim < 0, names[1], lambda k: f"must be >= 0, got {dim[k]}")
    # Every type's block of one state inside num_params, used or not, as pdsp's reader checks.
    width = np.maximum(dim, 1)
    problem.first(width > num_params, names[1], lambda k: (
        f"is {dim[k]}: one state's block is larger than num_params = {num_params}"))
    problem.first(param_offset > num_params - width, names[0], lambda k: (
        f"is {param_offset[k]}: a block of one state, {width[k]} "
        f"parameter{'' if width[k] == 1 else 's'} wide, would end past num_params = {num_params}"))
    types = param_offset.size
    problem.first((region_type < -1) | (region_type >= types), names[2], lambda r: (
        f"type {region_type[r]} is outside [-1, {types})"))

    typed = region_type >= 0
    of = np.where(typed, region_type, 0)
    # In floating point: offset + size * width can pass 2^63 in a corrupt description.
    end = param_offset[of].astype(float) + size.astype(float) * width[of].astype(float)
    problem.first(typed & (end > num_params), names[2], lambda r: (
        f"{kind} {r} of type {region_type[r]} with {size[r]} states needs parameters up to "
        f"{param_offset[of[r]] + size[r] * width[of[r]]}, but num_params is {num_params}"))

    reads = typed & (dim[of] > 0)
    row_name = f"{group}/obs_row"
    if row_name not in arrays:
        if reads.any():
            problem.whole(row_name, f"is missing: {kind} types with dim > 0 need it")
        return
    obs_row = arrays[row_name]
    _check_length(problem, arrays, row_name, size.size)
    problem.first(~reads & (obs_row != -1), row_name, lambda r: (
        f"is {obs_row[r]}, expected -1: the {kind}'s type reads no observation row"))
    if not reads.any():
        return
    if row_max is None:
        problem.whole("/obs/ptr", f"is missing: {kind} types with dim > 0 read observation rows")
    obs_offset = arrays["/examples/obs_offset"]
    lo, hi = obs_offset[example], obs_offset[example + 1]
    problem.first(reads & ((obs_row < lo) | (obs_row >= hi)), row_name, lambda r: (
        f"row {obs_row[r]} of {kind} {r} is not one of the observation rows [{lo[r]}, {hi[r]}) "
        f"of its example {example[r]}"))
    read_max = np.where(reads, row_max[np.where(reads, obs_row, 0)], -1)
    too_far = np.flatnonzero(read_max >= dim[of])
    if too_far.size:
        r = too_far[0]
        ptr, index, row, limit = arrays["/obs/ptr"], arrays["/obs/index"], obs_row[r], dim[of[r]]
        entry = ptr[row] + int(np.argmax(index[ptr[row]:ptr[row + 1]] >= limit))
        problem.at("/obs/index", entry, f"position {index[entry]} of row {row} is not below the "
                   f"dimension {limit} of {kind} type {region_type[r]} (read by {kind} {r})")
