"""LIBSVM multi-label text: a line per instance, `l1,l2 idx:val idx:val ...` with 0-based labels
(none: the line starts with a feature) and 1-based, increasing feature indices."""
from .labelled_instances import from_rows
from .source import ConversionError, parse_number, text_lines


def read(inputs, num_features, num_labels):
    """(train, test) LabelledInstances from `train.svm test.svm`. D and L default to the
    largest index and label + 1 over both files, so that train and test agree."""
    if len(inputs) != 2:
        raise ConversionError(f"LIBSVM multi-label input is train.svm test.svm, got {len(inputs)} "
                              "files")
    for flag, value in (("--num-features", num_features), ("--num-labels", num_labels)):
        if value is not None and value < 1:
            raise ConversionError(f"{flag} must be >= 1, got {value}")
    parsed = [_read_file(path, num_features, num_labels) for path in inputs]
    if num_features is None:
        num_features = max((max((p[-1] for p, _ in rows if len(p)), default=-1) + 1
                            for rows, _ in parsed), default=0)
    if num_labels is None:
        num_labels = max(max((max(s) for s in sets if s), default=-1) + 1 for _, sets in parsed)
    if num_labels < 1:
        raise ConversionError(f"{inputs[0]}: no instance has a label (give --num-labels)")
    return tuple(from_rows(rows, sets, num_features, num_labels) for rows, sets in parsed)


def _read_file(path, num_features, num_labels):
    rows, label_sets = [], []
    for number, line in text_lines(path):
        tokens = line.split()
        if not tokens:
            continue
        labels = set()
        if ":" not in tokens[0]:
            labels = {_label(path, number, text, num_labels) for text in tokens.pop(0).split(",")}
        positions, values = [], []
        for token in tokens:
            index_text, _, value_text = token.partition(":")
            index = parse_number(path, number, index_text, "feature index", int)
            if index < 1 or (num_features is not None and index > num_features):
                raise ConversionError(f"{path}:{number}: feature index {index} is out of range "
                                      f"[1, {num_features or 'inf'}]")
            if positions and index - 1 <= positions[-1]:
                raise ConversionError(f"{path}:{number}: feature index {index} does not increase "
                                      f"(after {positions[-1] + 1})")
            positions.append(index - 1)
            values.append(parse_number(path, number, value_text, f"value of feature {index}"))
        rows.append((positions, values))
        label_sets.append(labels)
    return rows, label_sets


def _label(path, number, text, num_labels):
    label = parse_number(path, number, text, "label", int)
    if label < 0 or (num_labels is not None and label >= num_labels):
        raise ConversionError(f"{path}:{number}: label {label} is out of range "
                              f"[0, {num_labels - 1 if num_labels is not None else 'inf'}]")
    return label
