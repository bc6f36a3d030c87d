#include "pdsp/features/parameter_memory.hpp"

#include <algorithm>

#include "pdsp/data/allocation.hpp"
#include "pdsp/util/errors.hpp"

namespace pdsp {
namespace {

// The largest parameter id in the slice's features, or -1 when it has none.
int64_t largest_parameter_used(const Dataset& data) {
  int64_t largest = -1;
  for (const SparseRows* rows : {&data.var_features, &data.factor_features})
    for (int32_t r : rows->param) largest = std::max<int64_t>(largest, r);
  // Format 2's typed blocks: a region of type k with `size` states reads up to
  // param_offset[k] + block_size - 1.
  const RegionTypes* kinds[2] = {&data.var_types, &data.factor_types};
  const std::vector<LocalIndex>* offsets[2] = {&data.state_offset, &data.table_offset};
  for (int kind = 0; kind < 2; ++kind)
    for (size_t r = 0; r < kinds[kind]->type.size(); ++r)
      if (const int32_t k = kinds[kind]->type[r]; k >= 0)
        largest = std::max(
            largest, kinds[kind]->param_offset[k] +
                         kinds[kind]->block_size(k, (*offsets[kind])[r + 1] - (*offsets[kind])[r]) -
                         1);
  return largest;
}

}  // namespace

void check_parameter_memory(const Dataset& data, const std::string& source) {
  const double bytes = kParameterVectors * static_cast<double>(sizeof(double)) *
                       static_cast<double>(data.num_params);
  const double available = available_memory_bytes();
  if (bytes <= available) return;
  const int64_t used = largest_parameter_used(data);
  throw InputError(
      source + ": @num_params: " + std::to_string(data.num_params) + " parameters need " +
      format_bytes(bytes) + " on every rank (" + std::to_string(kParameterVectors) +
      " vectors of one double per parameter), but only " + format_bytes(available) +
      " of memory is available; " +
      (used < 0
           ? std::string("the features of this rank's examples use no parameter")
           : "the features of this rank's examples use parameters up to " + std::to_string(used)));
}

}  // namespace pdsp
