#include "pdsp/inference/slice_loading.hpp"

#include <algorithm>

#include "pdsp/data/dataset_fingerprint.hpp"
#include "pdsp/inference/colouring.hpp"
#include "pdsp/inference/counting.hpp"
#include "pdsp/inference/shard_partition.hpp"
#include "pdsp/inference/shard_slice.hpp"

namespace pdsp {
namespace {

// The shard decides its regions from the structure of its examples (one, or in the hybrid layout
// several split as one), which the ranks of its group read alike, and reads their data alone; its
// share of the data set's fingerprint it hashes from the file.
Dataset read_shard(const DatasetLayout& layout, const RankSlice& mine, bool root) {
  Checksum fingerprint;
  std::array<int64_t, 5> sizes{};
  fingerprint_example_part(layout, mine.first, mine.last, mine.shard, mine.shards, root,
                           fingerprint, sizes);
  const Dataset structure = read_structure(layout, mine.first, mine.last);
  ShardSelection selection;
  {
    const FactorGraph graph(structure, structure.source());
    const int64_t examples = structure.num_examples();
    const ShardPartition partition =
        partition_example(structure, 0, examples, mine.shards, structure.source());
    std::vector<uint8_t> acyclic(static_cast<size_t>(structure.num_vars()));
    for (int64_t n = 0; n < examples; ++n)
      std::fill(acyclic.begin() + structure.var_offset[n],
                acyclic.begin() + structure.var_offset[n + 1], is_acyclic(structure, n) ? 1 : 0);
    selection = select_shard(structure, graph, colour_variables(structure, graph), partition,
                             acyclic, mine.shard, mine.first_rank);
  }
  Dataset shard = read_example_regions(layout, structure, selection.vars, selection.own_vars,
                                       selection.factors, selection.own_factors);
  selection.shard->fingerprint = fingerprint;
  selection.shard->fingerprint_sizes = sizes;
  shard.shard = std::move(selection.shard);
  return shard;
}

}  // namespace

Dataset load_rank_slice(const std::string& path, Communicator& comm, DatasetLayout* layout_out,
                        const std::function<void(const std::string&)>& on_stage, int shards,
                        std::vector<RankSlice>* plan_out) {
  if (on_stage) on_stage("scanning " + path);
  const DatasetLayout layout = scan_dataset(path, comm);
  std::vector<int64_t> variables(static_cast<size_t>(layout.num_examples()));
  for (int64_t n = 0; n < layout.num_examples(); ++n)
    variables[n] = layout.var_offset[n + 1] - layout.var_offset[n];
  std::vector<RankSlice> plan;
  run_collectively(comm,
                   [&] { plan = plan_rank_slices(layout.cost, variables, comm.size(), shards); });
  if (on_stage)
    on_stage("reading and checking " + std::to_string(layout.num_examples()) + " examples on " +
             std::to_string(comm.size()) + " rank(s): " + describe_rank_slices(plan));
  const RankSlice& mine = plan[comm.rank()];
  Dataset slice;
  run_collectively(comm, [&] {
    slice = mine.shards > 1 ? read_shard(layout, mine, comm.is_root())
                            : read_examples(layout, mine.first, mine.last);
  });
  slice.ranks = &comm;
  if (layout_out != nullptr) *layout_out = layout;
  if (plan_out != nullptr) *plan_out = std::move(plan);
  return slice;
}

}  // namespace pdsp
