#!/usr/bin/env python3
"""Converts a public data set into pdsp data-set files:

    python3 datasets/convert.py FORMAT --input PATH... --train TRAIN.h5 --test TEST.h5
                                [--validation VAL.h5 --validation-fraction F [--seed S]]
    python3 datasets/convert.py uai --input MODEL.uai [EVIDENCE.evid] --out OUT.h5
                                --model MODEL.h5

FORMAT is one of the modules registered in converters/__init__.py. --validation moves a
fraction F of the training examples into a third file: the last ones in the source's order, or
with --seed a random choice (the same for the same seed); both files keep the source's order.
Prints one line per written file. A bad input or usage is one line on stderr and exit code 2.
"""
import argparse
import os
import sys
import time

REPOSITORY = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(REPOSITORY, "python"))

import h5py  # noqa: E402
import numpy as np  # noqa: E402

from converters import FORMATS  # noqa: E402
from converters.source import MAX_PARAMS, ConversionError, seed  # noqa: E402
from pdsp.dataset import checked_arrays, write_checked_arrays  # noqa: E402
from pdsp.dataset_rules import DatasetError  # noqa: E402
from pdsp.output_file import OutputError, atomic_output, check_output, output_set  # noqa: E402

PROGRAM = "convert.py"


class OneLineParser(argparse.ArgumentParser):
    """Usage errors in one line and exit code 2, like every other bad input."""

    def error(self, message):
        raise ConversionError(f"{message} (see {self.prog} --help)")


def writes_model(module):
    """Whether a converter writes one data set and a model (--out, --model) instead of a
    training and a test set."""
    return getattr(module, "OUTPUTS", "splits") == "model"


def parse_arguments(argv):
    parser = OneLineParser(prog=PROGRAM, description=__doc__,
                           formatter_class=argparse.RawDescriptionHelpFormatter)
    formats = parser.add_subparsers(dest="format", metavar="FORMAT", required=True,
                                    parser_class=OneLineParser)
    for name, module in FORMATS.items():
        sub = formats.add_parser(name, help=" ".join(module.__doc__.split("\n\n")[0].split()),
                                 description=module.__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
        sub.add_argument("--input", nargs="+", required=True, metavar="PATH",
                         help="the source files (see above)")
        if writes_model(module):
            sub.add_argument("--out", required=True, metavar="OUT.h5", help="data set output")
            sub.add_argument("--model", required=True, metavar="MODEL.h5", help="model output")
            module.add_arguments(sub)
            continue
        sub.add_argument("--train", required=True, metavar="TRAIN.h5", help="training set output")
        sub.add_argument("--test", required=True, metavar="TEST.h5", help="test set output")
        sub.add_argument("--validation", metavar="VAL.h5",
                         help="validation set output, taken from the training examples")
        sub.add_argument("--validation-fraction", type=float, metavar="F",
                         help="the share of the training examples it takes, in (0, 1)")
        sub.add_argument("--seed", type=seed, metavar="S",
                         help="take a random choice (fixed by S), not the last ones")
        if getattr(module, "DEV_INPUT", False):
            sub.add_argument("--dev", metavar="DEV.h5", help="dev set output (see above)")
        module.add_arguments(sub)
    options = parser.parse_args(argv)
    if writes_model(FORMATS[options.format]):
        return options
    if (options.validation is None) != (options.validation_fraction is None):
        raise ConversionError("--validation and --validation-fraction go together")
    if options.seed is not None and options.validation is None:
        raise ConversionError("--seed chooses the validation examples: it needs --validation")
    if options.validation_fraction is not None and not 0 < options.validation_fraction < 1:
        raise ConversionError(f"--validation-fraction must be in (0, 1), got "
                              f"{options.validation_fraction}")
    return options


def check_files(options):
    """Before anything is read: every input a readable file or folder, every output new and
    distinct."""
    for path in options.input:
        if not os.path.exists(path) or not os.access(path, os.R_OK):
            raise ConversionError(f"{path}: no such readable file")
    outputs = [getattr(options, name, None) for name in
               ("train", "test", "validation", "dev", "out", "model")]
    outputs = [path for path in outputs if path]
    for path in outputs:
        check_output(path, options.input)
        if sum(os.path.abspath(path) == os.path.abspath(other) for other in outputs) > 1:
            raise ConversionError(f"{path}: given as two outputs")


def split_validation(examples, fraction, seed):
    """(kept, validation): round(fraction * n) examples, the last ones or, with a seed, a
    random choice; both in the source's order."""
    count = round(fraction * len(examples))
    if not 0 < count < len(examples):
        raise ConversionError(f"--validation-fraction {fraction} of {len(examples)} training "
                              f"examples leaves an empty file")
    chosen = np.zeros(len(examples), dtype=bool)
    if seed is None:
        chosen[len(examples) - count:] = True
    else:
        chosen[np.random.default_rng(seed).choice(len(examples), count, replace=False)] = True
    return ([e for e, c in zip(examples, chosen) if not c],
            [e for e, c in zip(examples, chosen) if c])


def write(path, examples, arrays, num_params, inputs, seconds, outputs):
    """Writes arrays checked_arrays returned into the OutputSet `outputs`; returns the file's
    summary line. `seconds`: what building and checking them took."""
    started = time.perf_counter() - seconds
    write_checked_arrays(path, arrays, num_params, inputs, outputs)
    return (f"{path}: {len(examples)} examples, {arrays['/vars/card'].size} variables, "
            f"{arrays['/factors/var_ptr'].size - 1} factors, {num_params} parameters, "
            f"{os.path.getsize(outputs.written(path)) / 1e6:.2f} MB, "
            f"{time.perf_counter() - started:.2f} s")


def write_model(path, theta, inputs, command_line, outputs):
    """A model file (docs/file-format.md) holding `theta`, for prediction at epsilon 1 with Bethe
    numbers, into the OutputSet `outputs`; returns its summary line."""
    with atomic_output(path, inputs, outputs) as temporary, h5py.File(temporary, "w") as file:
        file.attrs["format"] = np.bytes_("pdsp-model")
        file.attrs["format_version"] = np.int64(1)
        file.attrs["epsilon"] = np.float64(1.0)
        file.attrs["counting"] = np.bytes_("bethe")
        file.attrs["command_line"] = np.bytes_(command_line.encode("utf-8"))
        file.create_dataset("/theta", data=np.asarray(theta, dtype=np.float64))
    return f"{path}: model of {len(theta)} parameters (epsilon 1, Bethe numbers)"


def convert(argv):
    options = parse_arguments(argv)
    check_files(options)
    converted = FORMATS[options.format].convert(options.input, options)
    # Named by the sources, not by the output the writer would blame.
    if not 1 <= converted.num_params <= MAX_PARAMS:
        raise ConversionError(f"{' '.join(options.input)}: the encoding takes "
                              f"{converted.num_params} parameters; pdsp takes 1 to {MAX_PARAMS}")
    lines = []
    # Every output or none: a file already at an output path stays as it was when one fails.
    with output_set() as outputs:
        if writes_model(FORMATS[options.format]):
            started = time.perf_counter()
            arrays = checked_arrays(options.out, [converted.example], converted.num_params)
            lines.append(write(options.out, [converted.example], arrays, converted.num_params,
                               options.input, time.perf_counter() - started, outputs))
            lines.append(write_model(options.model, converted.theta, options.input,
                                     " ".join([PROGRAM] + list(argv)), outputs))
            if converted.dropped_variables:
                lines.append(f"{options.out}: observed variables {converted.dropped_variables} "
                             f"conditioned out; the others keep their order")
        else:
            lines = write_splits(options, converted, outputs)
    for line in lines:
        print(line, flush=True)


def write_splits(options, converted, outputs):
    """The training, test, validation and dev files of a converter that splits; their lines."""
    files = [(options.train, converted.train), (options.test, converted.test)]
    if options.validation:
        kept, validation = split_validation(converted.train, options.validation_fraction,
                                            options.seed)
        files = [(options.train, kept), (options.test, converted.test),
                 (options.validation, validation)]
    if converted.dev is not None:
        files.append((options.dev, converted.dev))
    for path, examples in files:
        if not examples:
            raise ConversionError(f"{' '.join(options.input)}: no examples for {path}")
    # Every file is checked before any is written, so a bad split leaves no file behind.
    checked = []
    for path, examples in files:
        started = time.perf_counter()
        arrays = checked_arrays(path, examples, converted.num_params, converted.var_types,
                                converted.factor_types, converted.nonlocal_terms)
        checked.append((path, examples, arrays, time.perf_counter() - started))
    return [write(path, examples, arrays, converted.num_params, options.input, seconds, outputs)
            for path, examples, arrays, seconds in checked]


def main(argv):
    """Runs one conversion and returns the exit code: 0, or 2 after the one line of a bad input
    or usage."""
    try:
        convert(argv)
    except (ConversionError, DatasetError, OutputError) as error:
        print(f"{PROGRAM}: error: {error}", file=sys.stderr)
        return 2
    except OSError as error:
        where = f"{error.filename}: {error.strerror}" if error.filename else str(error)
        print(f"{PROGRAM}: error: {where}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
