#pragma once
// The interface of the numerical kernels of the primal-dual algorithm (design.md §2-4), over
// ranges of one example's variables and factors. Two implementations: MessagePassing, for any
// arity and cardinality, and BinaryPairwiseKernels, for graphs of binary variables in pairwise
// factors (grids above all), which the general one checks in the tests. Potentials and beliefs
// share one layout: [every (v, s) | every (a, t)]. Below, `lambda` is the message state.
#include <cstdint>
#include <span>
#include <variant>
#include <vector>

#include "pdsp/inference/factor_graph.hpp"
#include "pdsp/inference/scratch.hpp"

namespace pdsp {

// Chunk sizes of the work plans (see work_plan.hpp): large enough to amortise a loop's set-up and
// fill SIMD lanes, small enough that a chunk's scratch stays in the L1/L2 cache.
inline constexpr int64_t kChunkSlots = 2048;    // sweeps: message blocks per chunk
inline constexpr int64_t kChunkRegions = 1024;  // evaluations: variables or factors per chunk

// The messages in the form and precision the kernels keep them in (the "message state"): the
// general kernels keep FactorGraph's arena in double precision; the binary kernels one number per
// message block, in double or, on request, single precision.
using MessageState = std::variant<std::vector<double>, std::vector<float>>;
enum class MessagePrecision { Double, Single };

// Scratch memory of one thread, sized once so that hot loops never allocate, and on cache lines
// of its own.
struct Workspace {
  explicit Workspace(const FactorGraph& graph);
  ScratchVector table;  // one factor table
  ScratchVector mu;     // mu_{a->v} of every factor of one variable (or a pair's marginals)
  ScratchVector state;  // one variable's states
  ScratchVector sums;   // one variable's states again (smax_along_slot's sums)
  // Structure-of-arrays lanes of the specialised kernels: one entry per slot or region of a chunk.
  ScratchVector lane_a, lane_b, lane_c, lane_d;
};

// What the beliefs of a range of regions contribute to the logged quantities.
struct BeliefTerms {
  double objective = 0;  // the range's part of F
  double dual = 0;       // sum tau H(b) + sum b_v e_v
  double violation = 0;  // max |sum_{t \ v} b_a(t) - b_v(s)|
  void add(const BeliefTerms& other);
};

class Kernels {
 public:
  virtual ~Kernels() = default;
  // A message state of all-zero messages. Checkpoints and outputs use FactorGraph's arena in
  // double precision; export and import convert.
  virtual MessageState make_message_state() const = 0;
  virtual void export_messages(const MessageState& state, double* arena) const = 0;
  virtual void import_messages(const double* arena, MessageState& state) const = 0;
  // Runs at another positive temperature from now on (the continuation towards eps = 0 lowers
  // it during training); the message state stays valid. Only between sweeps, never during one.
  virtual void set_epsilon(double epsilon) = 0;
  // The messages of `slots` in the arena's form (FactorGraph::message_offset), appended to `out`,
  // and written back from `in` (returns the end of what was read): what a shard sends the ranks
  // that hold copies of its cut factors (halo_exchange.hpp). The arena's form lets shards whose
  // kernels differ exchange, and a float state widens and narrows back exactly.
  virtual void pack_slots(std::span<const LocalIndex> slots, const MessageState& state,
                          std::vector<double>& out) const = 0;
  virtual const double* unpack_slots(std::span<const LocalIndex> slots, const double* in,
                                     MessageState& state) const = 0;

  // Lemma 3 for every variable of `vars`, which must not share a factor with each other (one
  // colour class): each update is the exact minimiser of F over its block. Returns the largest
  // change of a message entry.
  virtual double update_variables(std::span<const LocalIndex> vars, const double* potential,
                                  MessageState& lambda, Workspace& w) const = 0;
  // The smax terms of F for factors [first, last) and for variables [first, last).
  virtual double factor_objective(int64_t first, int64_t last, const double* potential,
                                  const MessageState& lambda, Workspace& w) const = 0;
  virtual double variable_objective(int64_t first, int64_t last, const double* potential,
                                    const MessageState& lambda, Workspace& w) const = 0;
  // Beliefs of factors [first, last), written into `belief`, with their objective and entropy
  // (MessagePassing keeps those of shared-table factors in a folded form of its own instead:
  // MessagePassing::factors_with_folded_beliefs).
  virtual BeliefTerms factor_beliefs(int64_t first, int64_t last, const double* potential,
                                     const MessageState& lambda, double* belief,
                                     Workspace& w) const = 0;
  // Beliefs of variables [first, last), with their objective, entropy and loss terms. `loss`
  // holds e_v(s) per state, or is null without loss augmentation.
  virtual BeliefTerms variable_beliefs(int64_t first, int64_t last, const double* potential,
                                       const MessageState& lambda, const double* loss,
                                       double* belief, Workspace& w) const = 0;
};

}  // namespace pdsp
