#pragma once
// How a LocalProblem is set up: its settings, and the decisions its constructor takes from the
// data (the loss, which kernels run, how threads share the work, which examples are swept along
// their trees). Kept apart from the loops that run the kernels (local_problem.cpp).
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "pdsp/data/dataset.hpp"
#include "pdsp/inference/binary_pairwise.hpp"
#include "pdsp/inference/counting.hpp"
#include "pdsp/inference/factor_graph.hpp"
#include "pdsp/inference/kernels.hpp"

namespace pdsp {

struct ProblemSettings {
  double epsilon = 1.0;
  CountingMode counting = CountingMode::Auto;
  double loss_weight = 1.0;
  bool loss_augmented = true;       // training adds e_v(s); prediction does not
  std::string source;               // data file, for error messages
  bool specialised_kernels = true;  // false: always the general kernels (for comparisons)
  // Single: the binary pairwise kernels keep their messages in float (an InputError where they
  // do not apply: the general kernels keep double).
  MessagePrecision message_precision = MessagePrecision::Double;
  // Training at eps = 0: the kernels start at this positive temperature, which the trainer
  // lowers (set_temperature) as it goes; 0: they run at eps = 0 itself (prediction).
  double smoothing = 0.0;
  // Inference to a fixed point at a fixed theta (prediction, validation, Bethe-RDA's oracle
  // calls): every example that one sweep along its trees makes exact is swept so, however
  // shallow, and one sweep leaves all of them at the fixed point. Training keeps shallow trees
  // in colour classes (sweep_along_trees).
  bool shallow_trees_along = false;
};

// The loss e_v(s) that training adds to the potentials, per state of `data`'s variables:
// loss_weight times /vars/loss, or times the Hamming loss [s != label] without it.
std::vector<double> loss_augmentation(const Dataset& data, double loss_weight);

// The loss that a problem with `settings` adds (empty without loss augmentation); training
// needs labels.
std::vector<double> training_loss(const Dataset& data, const ProblemSettings& settings);

// At eps = 0 every smax is a max and F no longer depends on the counting numbers, but they still
// weight the block update: with a negative c_v (Bethe) the weights c_a / chat_v sum to more than
// one and the update stops minimising F (design.md §3).
void require_max_product_counting(const Dataset& data, const CountingNumbers& c,
                                  const std::string& source);

// The binary pairwise kernels in the precision asked for, or null where they do not apply.
std::unique_ptr<Kernels> make_binary_pairwise_kernels(const Dataset& data, const FactorGraph& graph,
                                                      const CountingNumbers& counting,
                                                      const ProblemSettings& settings,
                                                      double temperature);

// Threads share examples colour class by colour class when whole examples cannot keep them
// busy: when the largest example holds more than a (2 x threads)-th of the work.
bool share_examples_between_threads(const Dataset& data, const FactorGraph& graph);

// The examples whose sweep runs along their trees (colour_variables): those whose messages one
// such sweep makes exact (CountingNumbers::exact), deep ones only unless `shallow_too`, where the
// general kernels update a chunk's variables one after the other (the binary pairwise kernels
// update them side by side).
// Not on a shard, whose exchanges follow the whole example's colour classes. Independent of the
// thread count: the plan keeps such a class in one chunk, which one thread runs in order.
std::vector<uint8_t> sweep_along_trees(const Dataset& data, const FactorGraph& graph,
                                       const CountingNumbers& counting, bool general_kernels,
                                       bool shallow_too);

}  // namespace pdsp
