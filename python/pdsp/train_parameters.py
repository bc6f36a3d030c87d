"""The settings of `pdsp train` that the Estimator passes on: flag and default of each,
in the order of pdsp's table (src/learners/train_parameters.cpp). Written by
run/train_parameters.py from `pdsp train --list-parameters`: do not edit."""

PARAMETERS = {
    "learner": {"flag": "--learner", "default": 'primal-dual'},
    "epsilon": {"flag": "--epsilon", "default": 1.0},
    "smoothing_start": {"flag": "--smoothing-start", "default": 1.0},
    "C": {"flag": "--C", "default": 1.0},
    "p": {"flag": "--p", "default": 2.0},
    "counting": {"flag": "--counting", "default": 'auto'},
    "loss_weight": {"flag": "--loss-weight", "default": 1.0},
    "sweeps": {"flag": "--sweeps", "default": 1},
    "max_iters": {"flag": "--max-iters", "default": 200},
    "tol": {"flag": "--tol", "default": 1e-06},
    "max_seconds": {"flag": "--max-seconds", "default": 0.0},
    "step": {"flag": "--step", "default": 1.0},
    "max_step_trials": {"flag": "--max-step-trials", "default": 60},
    "theta_step": {"flag": "--theta-step", "default": 'lbfgs'},
    "lbfgs_memory": {"flag": "--lbfgs-memory", "default": 10},
    "lbfgs_curvature": {"flag": "--lbfgs-curvature", "default": 'auto'},
    "threads": {"flag": "--threads", "default": 0},
    "kernels": {"flag": "--kernels", "default": 'auto'},
    "message_precision": {"flag": "--message-precision", "default": 'double'},
    "inference_sweeps": {"flag": "--inference-sweeps", "default": 200},
    "inference_tol": {"flag": "--inference-tol", "default": 1e-08},
}
