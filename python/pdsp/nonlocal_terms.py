"""Non-local terms of a data set (Vilnis et al., AISTATS 2015; docs/file-format.md "Non-local
terms"): energies on the marginals of a whole example, weighted by psi >= 0 in the model.

- Count templates j: for each instance on an example, psi_j h_j(a_j . U(mu) + b_j), U(mu)_s the
  expected number of the example's variables in state s, h_j a loss shape (0 smoothed hinge,
  1 squared, 2 linear).
- A dictionary of words (state sequences): "unigram" psi_u min_i |u_i - U(mu)|_1 (u_i word i's
  state counts), "position" psi_w min_i |w_i - mu|_1 over the words of the example's length.

`NonlocalTerms.arrays` lays them out for write_dataset; `check_nonlocal` applies pdsp's reader
rules to those arrays."""
import dataclasses
from typing import Optional, Sequence

import numpy as np

DICTIONARY_KINDS = ("unigram", "position")
SHAPES = (0, 1, 2)

ARRAY_TYPES = {
    "@nonlocal_states": np.int64, "@nonlocal_dictionary": np.bytes_,
    "/nonlocal/count_a": np.float64, "/nonlocal/count_b": np.float64,
    "/nonlocal/count_shape": np.int32, "/nonlocal/count_template": np.int32,
    "/examples/count_offset": np.int64,
    "/nonlocal/word_ptr": np.int64, "/nonlocal/word_state": np.int32,
}
COUNT_ARRAYS = ("/nonlocal/count_a", "/nonlocal/count_b", "/nonlocal/count_shape",
                "/nonlocal/count_template", "/examples/count_offset")
WORD_ARRAYS = ("/nonlocal/word_ptr", "/nonlocal/word_state")


@dataclasses.dataclass
class NonlocalTerms:
    """`a` [templates x num_states], `b` and `shape` per template; `instances[n]` the templates
    of example n's instances (None or shorter than the examples: none), then one instance of
    each template in `every_example` on every example (so one description serves files of any
    size); `words` state sequences; `dictionary` the dictionary terms on every example
    ("unigram", "position")."""
    num_states: int
    a: Optional[np.ndarray] = None
    b: Optional[Sequence[float]] = None
    shape: Optional[Sequence[int]] = None
    instances: Optional[Sequence[Sequence[int]]] = None
    words: Optional[Sequence[Sequence[int]]] = None
    dictionary: Sequence[str] = ()
    every_example: Sequence[int] = ()

    def arrays(self, num_examples):
        """The file's arrays and attributes (names starting with @) for `num_examples`."""
        out = {"@nonlocal_states": self.num_states}
        if self.b is not None:
            b = np.asarray(self.b, dtype=np.float64).reshape(-1)
            instances = list(self.instances or [])
            instances += [()] * (num_examples - len(instances))
            everywhere = np.asarray(self.every_example, dtype=np.int64).reshape(-1)
            parts = [np.concatenate((np.asarray(i, dtype=np.int64).reshape(-1), everywhere))
                     for i in instances]
            out.update({
                "/nonlocal/count_a": np.asarray(self.a, dtype=np.float64).reshape(-1),
                "/nonlocal/count_b": b,
                "/nonlocal/count_shape": np.zeros(b.size, np.int64) if self.shape is None
                else np.asarray(self.shape),
                "/nonlocal/count_template": np.concatenate([np.zeros(0, np.int64)] + parts),
                "/examples/count_offset": np.concatenate(
                    ([0], np.cumsum([p.size for p in parts]))).astype(np.int64),
            })
        if self.words is not None:
            words = [np.asarray(w, dtype=np.int64).reshape(-1) for w in self.words]
            out["/nonlocal/word_ptr"] = np.concatenate(
                ([0], np.cumsum([w.size for w in words]))).astype(np.int64)
            out["/nonlocal/word_state"] = np.concatenate([np.zeros(0, np.int64)] + words)
        if self.dictionary:
            out["@nonlocal_dictionary"] = ",".join(self.dictionary)
        return out


def check_nonlocal(problem, arrays, graph, check_offsets):
    """The reader's rules for the non-local part of `arrays` (nothing when it has none)."""
    counts = _part_present(problem, arrays, COUNT_ARRAYS)
    words = _part_present(problem, arrays, WORD_ARRAYS)
    if not counts and not words:
        if "@nonlocal_states" in arrays or "@nonlocal_dictionary" in arrays:
            problem.whole("/nonlocal", "is missing, but the file has @nonlocal_states")
        return
    if "@nonlocal_states" not in arrays:
        problem.whole("@nonlocal_states", "required attribute is missing")
    states = int(arrays["@nonlocal_states"].reshape(-1)[0])
    if not 1 <= states < 2**31:
        problem.whole("@nonlocal_states", f"must be in [1, 2^31), got {states}")
    examples = graph["examples"]
    instances = np.zeros(examples, dtype=np.int64)
    if counts:
        b, a = arrays["/nonlocal/count_b"], arrays["/nonlocal/count_a"]
        templates = b.size
        problem.first(~np.isfinite(b), "/nonlocal/count_b", lambda i: "value is not finite")
        _length(problem, arrays, "/nonlocal/count_a", templates * states,
                f"{templates} templates x {states} states")
        problem.first(~np.isfinite(a), "/nonlocal/count_a", lambda i: "value is not finite")
        _length(problem, arrays, "/nonlocal/count_shape", templates,
                "one per template of /nonlocal/count_b")
        shape = arrays["/nonlocal/count_shape"]
        problem.first(~np.isin(shape, SHAPES), "/nonlocal/count_shape",
                      lambda i: f"{shape[i]} is not a loss shape (0 smoothed hinge, 1 squared, "
                                "2 linear)")
        _length(problem, arrays, "/examples/count_offset", examples + 1, "examples + 1")
        offsets = arrays["/examples/count_offset"]
        template = arrays["/nonlocal/count_template"]
        check_offsets(problem, "/examples/count_offset", offsets, template.size)
        problem.first((template < 0) | (template >= templates), "/nonlocal/count_template",
                      lambda i: f"{template[i]} is not a template (0..{templates - 1})")
        instances = np.diff(offsets)
    if words:
        ptr, state = arrays["/nonlocal/word_ptr"], arrays["/nonlocal/word_state"]
        check_offsets(problem, "/nonlocal/word_ptr", ptr, state.size,
                      "every entry needs at least one element")
        problem.first((state < 0) | (state >= states), "/nonlocal/word_state",
                      lambda i: f"{state[i]} is not a state (0..{states - 1})")
    kinds = _dictionary_kinds(problem, arrays)
    if kinds and (not words or arrays["/nonlocal/word_ptr"].size < 2):
        problem.whole("@nonlocal_dictionary",
                      "names dictionary terms, but /nonlocal/word_ptr holds no word")
    under = np.ones(examples, dtype=bool) if kinds else instances > 0
    card = graph["card"]
    bad = under[graph["var_example"]] & (card != states)
    problem.first(bad, "/vars/card", lambda v: f"{card[v]} states, but the non-local terms of "
                  f"example {graph['var_example'][v]} count {states} (@nonlocal_states)")


def _part_present(problem, arrays, names):
    present = [name in arrays for name in names]
    if not any(present):
        return False
    first = names[present.index(True)]
    for name, there in zip(names, present):
        if not there:
            problem.whole(name, f"is missing, but {first} of the same part is there")
    return True


def _length(problem, arrays, name, expected, what):
    if arrays[name].size != expected:
        problem.whole(name, f"has {arrays[name].size} values, expected {expected} ({what})")


def _dictionary_kinds(problem, arrays):
    if "@nonlocal_dictionary" not in arrays:
        return []
    value = arrays["@nonlocal_dictionary"].reshape(-1)[0]
    text = value.decode() if isinstance(value, bytes) else str(value)
    kinds = text.split(",") if text else []
    for i, kind in enumerate(kinds):
        if kind not in DICTIONARY_KINDS:
            problem.whole("@nonlocal_dictionary",
                          f"'{kind}' is not a dictionary term (unigram, position)")
        if kind in kinds[:i]:
            problem.whole("@nonlocal_dictionary", f"names '{kind}' twice")
    return kinds
