"""pdsp's Python side: writing data sets pdsp trains on (`dataset`), reading the models,
predictions, checkpoints (`outputs`) and metrics (`metrics`) it writes, and an estimator with
fit / predict / score that runs the pdsp executable (`estimator`, `command`)."""
from .command import PdspError
from .dataset import Dataset, Example, RegionType, SparseRows, write_arrays, write_dataset
from .dataset_rules import DatasetError, check_dataset
from .nonlocal_terms import NonlocalTerms
from .estimator import Estimator
from .metrics import Metrics, MetricsError, read_metrics
from .outputs import (BoostedTrees, Model, Network, OutputFileError, Predictions,
                      read_checkpoint_progress, read_model, read_predictions)

__all__ = ["Dataset", "Example", "NonlocalTerms", "RegionType", "SparseRows", "write_dataset",
           "write_arrays", "DatasetError", "check_dataset", "Estimator", "PdspError", "Metrics", "MetricsError",
           "read_metrics", "Model", "BoostedTrees", "Network", "Predictions", "OutputFileError",
           "read_model", "read_predictions", "read_checkpoint_progress"]
