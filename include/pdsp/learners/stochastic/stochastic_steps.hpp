#pragma once
// The loop the stochastic learners share (--learner dlpw, pegasos; docs/design.md §9.2): Pegasos
// steps on theta from batches of examples visited in a seeded random order, the running weighted
// average of the iterates as the model, and the full objective at that average every few epochs.
//
// With F(theta) = (C/2) |theta|^2 + sum_n h_n(theta) over N examples, a step on the batch B at
// step t (counted over the whole run) is
//
//   theta <- (1 - 1/t) theta - N / (C t |B|) sum_{n in B} g_n,   g_n a subgradient of h_n,
//
// the stochastic subgradient step of size 1 / (C t) on F (Shalev-Shwartz et al.'s Pegasos on
// F / N, whose regulariser weight is C / N), then the projection onto the ball |theta| <= r with
// r = sqrt(2 F(0) / C), which holds the optimum since every h_n >= 0.
//
// The model is the average of the iterates with weights proportional to t
// (Lacoste-Julien et al. 2012), which keeps the rate 1/t of strongly convex objectives where the
// plain average loses a log factor.
//
// Epoch e visits a permutation of all N examples drawn from (--seed, e), the same on every rank;
// a batch is the next |B| of them, each rank computing the subgradients of those it holds, and
// one allreduce adds them. The result therefore depends on the batch and the seed, not on the
// rank count (up to the order of the sums). A checkpoint after an epoch holds the average, the
// iterate and t; the order needs nothing else.
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "pdsp/data/dataset.hpp"
#include "pdsp/learners/train_config.hpp"
#include "pdsp/learning/training_state.hpp"
#include "pdsp/parallel/communicator.hpp"

namespace pdsp {

struct StochasticConfig {
  double C = 1.0;
  int batch = 1;
  int seed = 1;
  int max_epochs = 200;
  double max_seconds = 0;   // training time, objective evaluations left out (0: no limit)
  int objective_every = 1;  // epochs between evaluations of F (0: after the last only)
  double epsilon = 0;       // the temperature the records report
};

// The run's settings of it: --C, --batch, --seed, --max-iters (epochs), --max-seconds and
// --objective-every.
StochasticConfig stochastic_config(const TrainConfig& config);

// What a stochastic learner computes: the subgradients of its examples' terms and the objective.
class BatchOracle {
 public:
  virtual ~BatchOracle() = default;
  // z += sum over `examples` (this rank's local indices, in the visiting order; maybe none) of a
  // subgradient of h_n at theta. Returns false when a value on this rank was not finite.
  virtual bool add_subgradients(std::span<const int64_t> examples, std::span<const double> theta,
                                std::span<double> z) = 0;
  // After some rank's add_subgradients returned false: every rank throws the lowest such rank's
  // explanation. Collective.
  virtual void explain_non_finite() = 0;
  // F(theta) over all ranks: exact, or an upper bound (objective_note says which). Leaves the
  // learner's own state as it was. Collective.
  virtual double objective(std::span<const double> theta) = 0;
  virtual std::string objective_note() const = 0;
};

// Trains from `start` (a checkpoint's state after an epoch, or a fresh one). Collective over the
// ranks of `comm`, each with its slice of whole examples.
TrainResult train_stochastic(BatchOracle& oracle, const Dataset& slice,
                             const StochasticConfig& config, Communicator& comm,
                             TrainingObserver& observer, TrainingState start);

// The visiting order of epoch `epoch`: a permutation of [0, examples) from (seed, epoch).
std::vector<int64_t> visiting_order(int64_t examples, int seed, int epoch);

}  // namespace pdsp
