"""Multi-label classification (yeast, scene in ../shared/datasets/multilabel_*): one example per
instance, a binary variable per label and a pairwise factor between every pair of labels.

--input is either train.svm test.svm (LIBSVM multi-label text, `l1,l2 idx:val ...`, labels
0-based, feature indices 1-based) or train.arff test.arff labels.xml (MULAN: dense ARFF, the
label attributes named in the XML; label l is the l-th label attribute in the ARFF's order).
Encoding (docs/file-format.md "Standard maps"): one observation row per instance, its D features at
0..D-1 (zeros left out) and a bias of 1 at D; label l has variable type l (offset l * 2 * (D + 1),
dim D + 1); the pair (i, j), i < j, in the order (0,1), (0,2), ..., has factor type p, a 2 x 2
table (t = s_i * 2 + s_j) at offset L * 2 * (D + 1) + 4 p.
"""
import itertools
import os

import numpy as np

from pdsp import Example, RegionType, SparseRows

from . import libsvm_files, mulan_files
from .source import MAX_PARAMS, ConversionError, Converted

# What a pairwise factor costs while the files are built and written: its two variable ids
# (int64), pointer, type and observation row in the arrays, and the copies concatenation makes.
BYTES_PER_FACTOR = 64


def add_arguments(parser):
    parser.add_argument("--num-features", type=int, metavar="D",
                        help="LIBSVM only: feature indices are 1..D (default: the largest index "
                             "in the inputs)")
    parser.add_argument("--num-labels", type=int, metavar="L",
                        help="LIBSVM only: labels are 0..L-1 (default: the largest label + 1)")


def convert(inputs, options):
    if any(path.endswith(".arff") for path in inputs):
        if options.num_features is not None or options.num_labels is not None:
            raise ConversionError("--num-features and --num-labels are for LIBSVM inputs; an "
                                  "ARFF header says both")
        train, test = mulan_files.read(inputs)
    else:
        train, test = libsvm_files.read(inputs, options.num_features, options.num_labels)
    dim = train.num_features + 1
    labels = train.num_labels
    # Refused before the pairs are built: 100,000 labels would take 5e9 of them, and 3,000
    # labels' 4.5 M pairs per instance ran the machine out of memory.
    params = labels * 2 * dim + 4 * labels * (labels - 1) // 2
    if params > MAX_PARAMS:
        raise ConversionError(f"{inputs[0]}: {labels} labels of {dim - 1} features take {params} "
                              f"parameters, more than pdsp's {MAX_PARAMS}")
    instances = train.label.shape[0] + test.label.shape[0]
    needed = instances * labels * (labels - 1) // 2 * BYTES_PER_FACTOR
    memory = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    if needed > memory:
        raise ConversionError(f"{inputs[0]}: {instances} instances of {labels} labels need "
                              f"{labels * (labels - 1) // 2} pairwise factors each, about "
                              f"{needed / 2**30:.0f} GiB to write; this machine has "
                              f"{memory / 2**30:.0f} GiB")
    pairs = np.array(list(itertools.combinations(range(labels), 2)), dtype=np.int64).reshape(-1, 2)
    var_types = [RegionType(param_offset=l * 2 * dim, dim=dim) for l in range(labels)]
    unaries = labels * 2 * dim
    factor_types = [RegionType(param_offset=unaries + 4 * p, dim=0) for p in range(len(pairs))]
    return Converted(train=_examples(train, pairs), test=_examples(test, pairs),
                     num_params=unaries + 4 * len(pairs), var_types=var_types,
                     factor_types=factor_types)


def _examples(instances, pairs):
    labels = instances.num_labels
    bias = instances.num_features
    examples = []
    for n in range(instances.label.shape[0]):
        start, end = instances.features.ptr[n], instances.features.ptr[n + 1]
        row = SparseRows([0, end - start + 1],
                         np.append(instances.features.index[start:end], bias),
                         np.append(instances.features.value[start:end], 1.0))
        examples.append(Example(card=np.full(labels, 2), label=instances.label[n],
                                factors=pairs, var_type=np.arange(labels),
                                var_obs=np.zeros(labels, dtype=np.int64),
                                factor_type=np.arange(len(pairs)), obs=row))
    return examples
