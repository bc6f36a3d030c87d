#pragma once
// What every learner reports and keeps: one record per iteration (for the log, the metrics and
// the observers), the state a checkpoint stores to continue exactly, and the result of a run.
#include <cmath>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "pdsp/data/dataset.hpp"
#include "pdsp/data/stored_trees.hpp"
#include "pdsp/learning/stop_reason.hpp"
#include "pdsp/optim/dual_bundle.hpp"
#include "pdsp/optim/lbfgs_memory.hpp"

namespace pdsp {

struct IterationRecord {
  int iteration = 0;
  double objective = 0;  // F at the beliefs of this iteration (before the step)
  double dual = 0;       // D at the same beliefs
  double gap = 0;        // F - D
  // D was taken at beliefs of the local polytope (made consistent; every iteration at eps = 0,
  // else where the gap decides or reports a stop), so gap bounds F - min F. Elsewhere D is that
  // of the beliefs as they are, a bound only once the messages have converged.
  bool gap_certified = false;
  // The temperature the sweeps ran at (eps, or at eps = 0 the smoothing temperature w, with D
  // the eps = 0 dual and gap the certificate F_w - D_0) and, at eps = 0, the gap F_w - D_w of the
  // problem at w (NaN elsewhere, and both NaN for the likelihood baselines; see smoothing.hpp).
  double temperature = NAN;
  double smoothed_gap = NAN;
  double violation = 0;  // largest marginalisation violation
  double grad_norm = 0;  // ||grad F||_2
  double step = 0;       // accepted step size, 0 when no step decreased F
  int step_trials = 0;   // objective evaluations of the step search
  // The direction searched last: "lbfgs" (-H g), "gradient" (-g: --theta-step gradient, or no
  // curvature pair yet) or "restart" (-g after -H g was no descent direction or no step along it
  // decreased F; the memory was dropped). Empty for the likelihood baselines.
  std::string direction;
  int lbfgs_pairs = 0;                    // curvature pairs in the memory after this iteration
  double objective_after_step = 0;        // F after the step
  double seconds = 0;                     // wall time of this iteration
  double elapsed = 0;                     // training time so far (including runs before a resume)
  double message_updates_per_second = 0;  // lambda blocks per second over all ranks
  double seconds_messages = 0, seconds_gradient = 0, seconds_allreduce = 0, seconds_step = 0;
  // Largest local compute time (messages and gradient) of any rank over the mean of all ranks:
  // 1 is perfect balance; the rest of the slowest rank's time is spent waiting in the allreduce.
  // NaN (null in the metrics) where it is not measured: the likelihood baselines.
  double load_imbalance = NAN;
  // Checkpoint writing since the previous record; filled in by the observer that writes them.
  double seconds_io = 0;
  // The likelihood baselines only (-1 and NaN, null in the metrics, elsewhere): examples whose
  // inference did not converge, summed over the iteration's evaluations (L-BFGS rejects each such
  // evaluation); examples of the accepted point whose approximate NLL is negative, and the
  // smallest example NLL there.
  int64_t unconverged_examples = -1;
  int64_t negative_nll_examples = -1;
  double lowest_nll = NAN;
  // L-BFGS baselines only (-1, null in the metrics, elsewhere): the iteration's searches that
  // every start had to repeat (crf_baselines.hpp: the cheap trials' step did not hold).
  int all_start_searches = -1;
  // pdsp train --validation, at the iterations it checks (NaN, null in the metrics, elsewhere):
  // the share of wrongly predicted validation variables (in %) and the mean per example of
  // smax_eps(scores) less the labels' score.
  double validation_error = NAN;
  double validation_loss = NAN;
};

// pdsp train --validation: the best theta on the validation set so far, the iteration it came
// from and its error (%), the checks made and those since the best. No check yet: checks 0.
struct ValidationProgress {
  std::vector<double> best_theta;
  int best_iteration = 0;
  double best_error = INFINITY;
  int checks = 0;
  int stale_checks = 0;
};

// Everything besides the messages that the next iteration depends on: a checkpoint stores it
// and train() continues from it exactly.
struct TrainingState {
  std::vector<double> theta;        // empty: start from zero
  double step = NAN;                // first trial step of the next search (NaN: --step)
  double previous_objective = NAN;  // F after the last iteration (NaN: none yet)
  int iterations_done = 0;
  double seconds_trained = 0;  // training time spent before this process
  // Why training ended at iterations_done, when it ended for good (StopReason::is_final); no
  // stop while it goes on. A learner started from such a state returns at once.
  StopReason stop;
  LbfgsMemory lbfgs;  // --theta-step lbfgs: the curvature pairs and the pending step
  // eps = 0: the temperature of the next iteration (NaN: --smoothing-start, smoothing.hpp) and
  // the dual side of the certificate (dual_bundle.hpp).
  double smoothing = NAN;
  DualBundle dual_bundle;
  // The boosted trees of a trees class (none otherwise): the part of the model theta does not
  // hold.
  std::vector<StoredEnsemble> trees;
  // The stochastic learners (learners/stochastic): theta is the weighted average of their
  // iterates, the model; this is the last iterate and `steps` the steps taken, which fix the
  // next step's size. Empty and 0 for the other learners.
  std::vector<double> iterate;
  int64_t steps = 0;
  // What a validating observer has found so far (training itself never reads it).
  ValidationProgress validation;
};

class TrainingObserver {
 public:
  virtual ~TrainingObserver() = default;
  virtual void on_iteration(const IterationRecord& record) = 0;
  // A request to stop raised on this rank (a signal); it travels in the allreduce.
  virtual bool stop_requested() const { return false; }
  // Called on every rank after each iteration with the state that would resume after it;
  // `stopping` is why training is about to end (no stop when it goes on). Returns a reason to
  // stop now (no stop to go on); every rank must return the same. An observer may add to the
  // state for the observers behind it (a validating one its progress), but leaves it as it was
  // when it returns: the state is the learner's own, passed without a copy (a large model's
  // theta and L-BFGS memory).
  virtual StopReason after_iteration(TrainingState&, const IterationRecord&,
                                     const StopReason& stopping) {
    (void)stopping;
    return no_stop();
  }
};

// The end of a learner's iteration: a final stop goes into `state`, the observer sees the state
// that would resume after `record` (its training time up to the record's `elapsed`), and the
// stop to act on is returned: `stop`, or when there is none the observer's.
inline StopReason finish_iteration(TrainingObserver& observer, TrainingState& state,
                                   const IterationRecord& record, const StopReason& stop) {
  if (stop.is_final()) state.stop = stop;
  const double trained_before = state.seconds_trained;
  state.seconds_trained = record.elapsed;
  const StopReason hook = observer.after_iteration(state, record, stop);
  state.seconds_trained = trained_before;
  return stop.stops() ? stop : hook;
}

struct TrainResult {
  TrainingState state;
  double objective = 0;
  StopReason stop;
};

// The result of a run started from a state whose training ended for good (StopReason::
// is_final): nothing to do, so that state, its stop and its last F (a resumed run with no
// iteration left reports the checkpoint's F, not 0).
inline TrainResult finished_run(const TrainingState& state) {
  return {state, state.previous_objective, state.stop};
}

// What a checkpoint stores of a learner's per-rank state besides the TrainingState: one arena
// of doubles per rank, in the file order of the rank's slice (message_runs), so that a run
// resumes on another rank count.
class CheckpointedMessages {
 public:
  virtual ~CheckpointedMessages() = default;
  virtual const Dataset& data() const = 0;
  virtual int64_t num_params() const = 0;
  virtual int64_t num_message_entries() const = 0;
  virtual std::vector<double> messages() const = 0;
  virtual void set_messages(std::span<const double> arena) = 0;
};

}  // namespace pdsp
