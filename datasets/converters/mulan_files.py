"""MULAN multi-label data: dense ARFF files (train and test with the same header) and an XML file
naming the label attributes. The other attributes must be numeric: they are the features, in
the ARFF's order; the labels are the named attributes in the ARFF's order (not the XML's), with
values 0 or 1."""
import re
import xml.parsers.expat

import numpy as np

from .labelled_instances import from_rows
from .source import ConversionError, parse_number, text_lines

NUMERIC_TYPES = ("numeric", "real", "integer")
BINARY_TYPE = re.compile(r"^\{\s*0\s*,\s*1\s*\}$")
# @attribute NAME TYPE, the name bare or quoted.
ATTRIBUTE = re.compile(r"^@attribute\s+('[^']*'|\"[^\"]*\"|\S+)\s+(.+)$", re.IGNORECASE)


def read(inputs):
    """(train, test) LabelledInstances from `train.arff test.arff labels.xml`."""
    arff = [path for path in inputs if path.endswith(".arff")]
    xml_files = [path for path in inputs if path.endswith(".xml")]
    if len(arff) != 2 or len(xml_files) != 1 or len(inputs) != 3:
        raise ConversionError("MULAN input is train.arff test.arff labels.xml, got "
                              + " ".join(inputs))
    label_names = read_label_names(xml_files[0])
    train_header, train_rows = read_arff(arff[0])
    test_header, test_rows = read_arff(arff[1])
    _check_same_header(arff, train_header, test_header)
    label_columns = _label_columns(arff[0], xml_files[0], train_header, label_names)
    return tuple(_instances(path, rows, train_header, label_columns)
                 for path, rows in ((arff[0], train_rows), (arff[1], test_rows)))


def read_label_names(path):
    """{label name: line} of the XML's <label name="..."> elements (nested ones included)."""
    names = {}
    depth = [0]  # of the element being opened: the root is <labels>, all inside it <label>
    parser = xml.parsers.expat.ParserCreate(namespace_separator=" ")

    def start(tag, attributes):
        local, line = tag.split(" ")[-1], parser.CurrentLineNumber
        expected = "labels" if depth[0] == 0 else "label"
        depth[0] += 1
        if local != expected or (expected == "label" and "name" not in attributes):
            raise ConversionError(f"{path}:{line}: unknown tag <{local}> (expected <labels> "
                                  "holding <label name=\"...\"> elements)")
        if expected == "label":
            if attributes["name"] in names:
                raise ConversionError(f"{path}:{line}: label '{attributes['name']}' is named "
                                      "twice")
            names[attributes["name"]] = line

    def end(tag):
        depth[0] -= 1

    parser.StartElementHandler = start
    parser.EndElementHandler = end
    try:
        with open(path, "rb") as source:
            parser.ParseFile(source)
    except OSError as error:
        raise ConversionError(f"{path}: cannot be read: {error.strerror}") from None
    except xml.parsers.expat.ExpatError as error:
        raise ConversionError(f"{path}:{error.lineno}: not well-formed XML: "
                              f"{xml.parsers.expat.ErrorString(error.code)}") from None
    if not names:
        raise ConversionError(f"{path}: names no label")
    return names


def read_arff(path):
    """([(name, type, line) per attribute], [(line, values as text) per data row])."""
    header, rows, in_data = [], [], False
    for number, line in text_lines(path):
        text = line.strip()
        if not text or text.startswith("%"):
            continue
        if in_data:
            if text.startswith("{"):
                raise ConversionError(f"{path}:{number}: sparse ARFF rows are not supported")
            values = text.split(",")
            if len(values) != len(header):
                raise ConversionError(f"{path}:{number}: the row has {len(values)} values, "
                                      f"expected {len(header)} (one per attribute)")
            rows.append((number, values))
            continue
        tag = text.split()[0].lower()
        if tag == "@attribute":
            match = ATTRIBUTE.match(text)
            if not match:
                raise ConversionError(f"{path}:{number}: an @attribute needs a name and a type")
            name = match.group(1).strip("'\"")
            earlier = [line for known, _, line in header if known == name]
            if earlier:  # the XML names labels by attribute name: one name, one column
                raise ConversionError(f"{path}:{number}: attribute '{name}' is declared again "
                                      f"(first at line {earlier[0]})")
            header.append((name, match.group(2).strip(), number))
        elif tag == "@data":
            in_data = True
        elif tag != "@relation":
            raise ConversionError(f"{path}:{number}: unknown tag '{text.split()[0]}' (expected "
                                  "@relation, @attribute or @data)")
    if not in_data:
        raise ConversionError(f"{path}: has no @data section")
    return header, rows


def _check_same_header(arff, train_header, test_header):
    for (name, kind, _), (test_name, test_kind, line) in zip(train_header, test_header):
        if (name, kind.lower()) != (test_name, test_kind.lower()):
            raise ConversionError(f"{arff[1]}:{line}: attribute '{test_name} {test_kind}' differs "
                                  f"from {arff[0]}'s '{name} {kind}'")
    if len(train_header) != len(test_header):
        raise ConversionError(f"{arff[1]}: has {len(test_header)} attributes, {arff[0]} has "
                              f"{len(train_header)}")


def _label_columns(arff, xml_path, header, label_names):
    """The columns of the label attributes, checked against the XML and the ARFF types."""
    columns = {name: column for column, (name, _, _) in enumerate(header)}
    for name, line in label_names.items():
        if name not in columns:
            raise ConversionError(f"{xml_path}:{line}: label '{name}' is not an attribute of "
                                  f"{arff}")
    for name, kind, line in header:
        if name in label_names and not BINARY_TYPE.match(kind):
            raise ConversionError(f"{arff}:{line}: label attribute '{name}' has type {kind}, "
                                  "expected {0,1}")
        if name not in label_names and kind.lower() not in NUMERIC_TYPES:
            raise ConversionError(f"{arff}:{line}: attribute '{name}' of type {kind} is not "
                                  f"numeric and not a label of {xml_path}")
    return [column for column, (name, _, _) in enumerate(header) if name in label_names]


def _instances(path, rows, header, label_columns):
    is_label = np.zeros(len(header), dtype=bool)
    is_label[label_columns] = True
    feature_columns = np.flatnonzero(~is_label)
    sparse_rows, label_sets = [], []
    for number, values in rows:
        numbers = np.array([parse_number(path, number, values[c], f"value of {header[c][0]}")
                            for c in range(len(header))])
        labels = numbers[label_columns]
        if not np.isin(labels, (0, 1)).all():
            column = label_columns[int(np.argmax(~np.isin(labels, (0, 1))))]
            raise ConversionError(f"{path}:{number}: label {header[column][0]} is "
                                  f"'{values[column]}', expected 0 or 1")
        sparse_rows.append((np.arange(feature_columns.size), numbers[feature_columns]))
        label_sets.append(np.flatnonzero(labels))
    return from_rows(sparse_rows, label_sets, feature_columns.size, len(label_columns))
