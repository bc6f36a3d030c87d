#include "pdsp/learning/checkpoint_lbfgs.hpp"

#include <algorithm>

#include "pdsp/data/checksum.hpp"
#include "pdsp/util/errors.hpp"

namespace pdsp {
namespace {

constexpr uint64_t kLbfgsTags[4] = {104, 105, 106, 107};  // among checkpoint.cpp's 101-112

// The L-BFGS memory's datasets, in the order of kLbfgsTags.
constexpr const char* kLbfgsDatasets[4] = {"/lbfgs/s", "/lbfgs/y", "/lbfgs/step",
                                           "/lbfgs/gradient"};

// The memory's vector i (const or not, as the memory).
template <class Memory>
auto& lbfgs_vector(Memory& m, int i) {
  return i == 0 ? m.s : i == 1 ? m.y : i == 2 ? m.step : m.gradient;
}

// The memory's pairs oldest first, each at its position in the file (pair_s, pair_y).
template <class Visit>
void for_each_lbfgs_pair(const LbfgsMemory& memory, int64_t params, Visit&& visit) {
  for (int p = 0; p < memory.pairs(static_cast<size_t>(params)); ++p)
    visit(p * params, memory.pair_s(p, static_cast<size_t>(params)),
          memory.pair_y(p, static_cast<size_t>(params)));
}

}  // namespace

std::string lbfgs_checksum(const LbfgsMemory& memory, int64_t params) {
  Checksum sum;
  for_each_lbfgs_pair(memory, params, [&](int64_t at, auto pair_s, auto pair_y) {
    sum.add<double>(kLbfgsTags[0], at, pair_s);
    sum.add<double>(kLbfgsTags[1], at, pair_y);
  });
  for (int i = 2; i < 4; ++i) sum.add<double>(kLbfgsTags[i], 0, lbfgs_vector(memory, i));
  return sum.hex();
}

void write_lbfgs_memory(h5::File& file, const LbfgsMemory& memory, int64_t params) {
  for (int i = 0; i < 2; ++i)
    file.create_dataset<double>(kLbfgsDatasets[i], static_cast<int64_t>(memory.s.size()));
  for_each_lbfgs_pair(memory, params, [&](int64_t at, auto pair_s, auto pair_y) {
    file.write_slice(kLbfgsDatasets[0], at, pair_s);
    file.write_slice(kLbfgsDatasets[1], at, pair_y);
  });
  for (int i = 2; i < 4; ++i) file.write(kLbfgsDatasets[i], lbfgs_vector(memory, i));
}

void read_lbfgs_memory(const h5::File& file, const std::string& path, int64_t params, int capacity,
                       LbfgsMemory& memory) {
  int64_t lengths[4];
  for (int i = 0; i < 4; ++i) lengths[i] = file.length(kLbfgsDatasets[i]);
  const bool pairs_fit =
      lengths[0] == lengths[1] && (params == 0 ? lengths[0] == 0 : lengths[0] % params == 0);
  if (!pairs_fit)
    throw_file_error(path, "/lbfgs/y",
                     "holds " + std::to_string(lengths[1]) + " values for " +
                         std::to_string(lengths[0]) + " in /lbfgs/s; both must be whole pairs of " +
                         std::to_string(params) + " parameters");
  for (int i = 2; i < 4; ++i)
    if (lengths[i] != 0 && lengths[i] != params)
      throw_file_error(
          path, kLbfgsDatasets[i],
          "holds " + std::to_string(lengths[i]) + " values, not 0 or " + std::to_string(params));
  memory.clear();
  const int pairs = params == 0 ? 0 : static_cast<int>(lengths[0] / params);
  // Nothing is reserved for a run whose steps keep no memory (capacity 0) and a file without one.
  if (capacity > 0 || pairs > 0 || lengths[2] > 0)
    memory.reserve(static_cast<size_t>(params), std::max(capacity, pairs));
  for (int i = 0; i < 2; ++i)
    for (int p = 0; p < pairs; ++p) {
      const std::vector<double> pair = file.read<double>(kLbfgsDatasets[i], p * params, params);
      lbfgs_vector(memory, i).insert(lbfgs_vector(memory, i).end(), pair.begin(), pair.end());
    }
  for (int i = 2; i < 4; ++i) {
    const std::vector<double> pending = file.read<double>(kLbfgsDatasets[i], 0, lengths[i]);
    lbfgs_vector(memory, i).assign(pending.begin(), pending.end());
  }
  memory.recompute_curvatures(static_cast<size_t>(params));
}

}  // namespace pdsp
