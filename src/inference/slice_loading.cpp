#include "pdsp/inference/slice_loading.hpp"

#include "pdsp/data/dataset_fingerprint.hpp"
#include "pdsp/inference/colouring.hpp"
#include "pdsp/inference/counting.hpp"
#include "pdsp/inference/shard_partition.hpp"
#include "pdsp/inference/shard_slice.hpp"

namespace pdsp {
namespace {

Dataset read_shard(const DatasetLayout& layout, const RankSlice& mine, bool root) {
  const Dataset whole = read_examples(layout, mine.first, mine.last);
  const FactorGraph graph(whole, whole.source());
  const ShardPartition partition = partition_example(whole, 0, mine.shards, whole.source());
  Dataset shard = cut_shard(whole, graph, colour_variables(whole, graph), partition,
                            is_acyclic(whole, 0), mine.shard, mine.first_rank);
  if (mine.shard == 0) {
    auto with_fingerprint = std::make_shared<ExampleShard>(*shard.shard);
    fingerprint_part(whole, root, with_fingerprint->fingerprint,
                     with_fingerprint->fingerprint_sizes);
    shard.shard = std::move(with_fingerprint);
  }
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
    on_stage("reading and checking " + std::to_string(layout.num_examples()) +
             " examples in slices of " + std::to_string(comm.size()) + " rank(s)" +
             (plan[comm.rank()].shards > 1 || plan[0].shards > 1 ? ", " + describe_rank_slices(plan)
                                                                 : ""));
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
