#include "pdsp/data/dataset.hpp"

#include <limits>

#include "pdsp/util/errors.hpp"

namespace pdsp {

LocalIndex to_local_index(int64_t value, const std::string& what, const std::string& source) {
  if (value < 0 || value > std::numeric_limits<LocalIndex>::max())
    throw InputError(source + ": " + what + " reaches " + std::to_string(value) +
                     ", more than the 2^31 - 1 one rank can index: run on more ranks");
  return static_cast<LocalIndex>(value);
}

Communicator& Dataset::communicator() const {
  static SerialCommunicator whole;
  return ranks != nullptr ? *ranks : whole;
}

void Dataset::rebuild_offsets(const std::string& source) {
  state_offset.assign(card.size() + 1, 0);
  int64_t states = 0;
  for (size_t v = 0; v < card.size(); ++v)
    state_offset[v + 1] = to_local_index(states += card[v], "states", source);
  const int64_t factors = num_factors();
  table_offset.assign(static_cast<size_t>(factors) + 1, 0);
  int64_t entries = 0;
  for (int64_t a = 0; a < factors; ++a) {
    int64_t size = 1;
    for (int64_t k = factor_var_ptr[a]; k < factor_var_ptr[a + 1]; ++k)
      size *= card[factor_vars[k]];
    table_offset[a + 1] = to_local_index(entries += size, "factor table entries", source);
  }
}

}  // namespace pdsp
