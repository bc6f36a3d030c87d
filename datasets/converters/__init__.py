"""The converters of datasets/convert.py, one module per source format. Each has
`add_arguments(parser)` (its own flags) and `convert(inputs, options)`, which returns a
`source.Converted` or raises `source.ConversionError`. A new format is one module and one line
below."""
from . import citations, multilabel, ocr, segmentation, uai

FORMATS = {
    "ocr": ocr,
    "multilabel": multilabel,
    "citations": citations,
    "segmentation": segmentation,
    "uai": uai,
}
