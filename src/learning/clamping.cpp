#include "pdsp/learning/clamping.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "pdsp/util/errors.hpp"

namespace pdsp {
namespace {

// exp(-x) is 0 in doubles (below the smallest subnormal, 4.9e-324) from x = 745 on.
constexpr double kVanishingExponent = 1000.0;

}  // namespace

std::vector<double> clamp_offset(const LocalProblem& problem, std::span<const int32_t> held,
                                 std::span<const double> theta) {
  const Dataset& data = problem.data();
  // Changing one variable's state changes its own potential and those of its factors' tables,
  // each by at most twice the largest |potential| B: a penalty above 2 B (1 + degree) makes
  // every state that breaks the clamp worse than the one that keeps it, by a margin that puts
  // its weight below the smallest double at the temperature and the largest block counting
  // number (beliefs scale potentials by 1 / (tau chat_v)).
  const double largest = problem.model().largest_term(theta);
  if (!std::isfinite(largest))
    throw InputError(data.source() +
                     ": clamping needs a bound on the model's potentials, and this model gives "
                     "none at its theta");
  double chat = 1.0;
  for (double c : problem.counting().block) chat = std::max(chat, std::abs(c));
  double penalty[1] = {2.0 * largest * (1.0 + static_cast<double>(problem.graph().max_degree)) +
                       kVanishingExponent * std::max(problem.temperature(), 1e-12) * chat};
  data.communicator().allreduce({}, std::span<double>(penalty));  // the largest: one for all
  std::vector<double> offset(static_cast<size_t>(data.num_states()), 0.0);
  for (int64_t v = 0; v < data.num_vars(); ++v) {
    if (held[v] < 0) continue;
    for (int32_t s = 0; s < data.card[v]; ++s)
      if (s != held[v]) offset[data.state_offset[v] + s] = -penalty[0];
  }
  return offset;
}

}  // namespace pdsp
