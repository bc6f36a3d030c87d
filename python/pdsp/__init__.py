"""pdsp's Python side: writing data sets pdsp trains on (`dataset`). Readers of models,
predictions and metrics, and an estimator, belong beside it as modules of their own."""
from .dataset import Example, RegionType, SparseRows, write_arrays, write_dataset
from .dataset_rules import DatasetError, check_dataset

__all__ = ["Example", "RegionType", "SparseRows", "write_dataset", "write_arrays", "DatasetError",
           "check_dataset"]
