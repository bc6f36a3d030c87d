#include "pdsp/inference/shard_slice.hpp"

#include <algorithm>
#include <numeric>

namespace pdsp {
namespace {

// A slot to exchange: sorted by (colour of its variable, position in the file) on both sides.
struct SlotKey {
  int32_t colour;
  int64_t global_slot;
  LocalIndex local_slot;
  bool operator<(const SlotKey& other) const {
    return colour != other.colour ? colour < other.colour : global_slot < other.global_slot;
  }
};

struct NeighbourLists {
  std::vector<SlotKey> send, recv;
  std::vector<int64_t> send_vars, recv_vars;  // file order (whole-example ids)
};

// Sorted slots grouped by colour class: the class pointers and the local slots.
void group_by_class(std::vector<SlotKey>& keys, int32_t colours, std::vector<int64_t>& class_ptr,
                    std::vector<LocalIndex>& slots) {
  std::sort(keys.begin(), keys.end());
  class_ptr.assign(static_cast<size_t>(colours) + 1, 0);
  for (const SlotKey& key : keys) ++class_ptr[key.colour + 1];
  std::partial_sum(class_ptr.begin(), class_ptr.end(), class_ptr.begin());
  slots.clear();
  for (const SlotKey& key : keys) slots.push_back(key.local_slot);
}

std::vector<LocalIndex> unique_local(std::vector<int64_t>& whole_ids,
                                     const std::vector<LocalIndex>& local_of) {
  std::sort(whole_ids.begin(), whole_ids.end());
  whole_ids.erase(std::unique(whole_ids.begin(), whole_ids.end()), whole_ids.end());
  std::vector<LocalIndex> local;
  for (int64_t v : whole_ids) local.push_back(local_of[v]);
  return local;
}

// Appends the entries of rows [first, last) of `from` to `to`.
void copy_rows(const SparseRows& from, int64_t first, int64_t last, SparseRows& to) {
  for (int64_t i = first; i < last; ++i) {
    to.param.insert(to.param.end(), from.param.begin() + from.ptr[i],
                    from.param.begin() + from.ptr[i + 1]);
    to.value.insert(to.value.end(), from.value.begin() + from.ptr[i],
                    from.value.begin() + from.ptr[i + 1]);
    to.ptr.push_back(static_cast<LocalIndex>(to.param.size()));
  }
}

// The typed part of the kept regions (`regions`, whole-example ids), with observation rows
// renumbered by `row_of`.
RegionTypes copy_types(const RegionTypes& from, const std::vector<int64_t>& regions,
                       const std::vector<LocalIndex>& row_of) {
  RegionTypes to;
  to.present = from.present;
  to.param_offset = from.param_offset;
  to.dim = from.dim;
  if (!from.present) return to;
  for (int64_t r : regions) {
    to.type.push_back(from.type[r]);
    if (!from.obs_row.empty())
      to.obs_row.push_back(from.obs_row[r] < 0 ? -1 : row_of[from.obs_row[r]]);
  }
  return to;
}

// The observation rows the kept regions read, in file order; row_of maps old rows to new.
ObservationRows copy_observations(const Dataset& whole, const std::vector<int64_t>& vars,
                                  const std::vector<int64_t>& factors,
                                  std::vector<LocalIndex>& row_of) {
  const ObservationRows& from = whole.observations;
  std::vector<char> used(static_cast<size_t>(from.num_rows()), 0);
  const auto mark = [&](const RegionTypes& types, const std::vector<int64_t>& regions) {
    if (!types.present || types.obs_row.empty()) return;
    for (int64_t r : regions)
      if (types.obs_row[r] >= 0) used[types.obs_row[r]] = 1;
  };
  mark(whole.var_types, vars);
  mark(whole.factor_types, factors);
  ObservationRows to;
  to.first_row = from.first_row;
  to.first_nnz = from.first_nnz;
  row_of.assign(used.size(), -1);
  for (int64_t i = 0; i < from.num_rows(); ++i) {
    if (!used[i]) continue;
    row_of[i] = static_cast<LocalIndex>(to.num_rows());
    to.index.insert(to.index.end(), from.index.begin() + from.ptr[i],
                    from.index.begin() + from.ptr[i + 1]);
    if (!from.value.empty())
      to.value.insert(to.value.end(), from.value.begin() + from.ptr[i],
                      from.value.begin() + from.ptr[i + 1]);
    to.ptr.push_back(static_cast<LocalIndex>(to.index.size()));
  }
  return to;
}

}  // namespace

Dataset cut_shard(const Dataset& whole, const FactorGraph& graph, const Colouring& colouring,
                  const ShardPartition& partition, bool acyclic, int index, int first_rank) {
  const int64_t n_vars = whole.num_vars(), n_factors = whole.num_factors();
  const std::vector<int32_t>& shard_of = partition.shard_of;
  const auto first_var_of = [&](int64_t a) { return whole.factor_vars[whole.factor_var_ptr[a]]; };

  // Own variables, then the halo, each in file order; own factors, then the copies.
  std::vector<char> holds(static_cast<size_t>(n_factors), 0),
      in_halo(static_cast<size_t>(n_vars), 0);
  for (int64_t a = 0; a < n_factors; ++a)
    for (int64_t k = whole.factor_var_ptr[a]; k < whole.factor_var_ptr[a + 1]; ++k)
      if (shard_of[whole.factor_vars[k]] == index) holds[a] = 1;
  std::vector<int64_t> vars, factors;
  for (int64_t v = 0; v < n_vars; ++v)
    if (shard_of[v] == index) vars.push_back(v);
  const auto own_vars = static_cast<int64_t>(vars.size());
  for (int64_t a = 0; a < n_factors; ++a)
    if (holds[a] && shard_of[first_var_of(a)] == index) factors.push_back(a);
  const auto own_factors = static_cast<int64_t>(factors.size());
  for (int64_t a = 0; a < n_factors; ++a)
    if (holds[a] && shard_of[first_var_of(a)] != index) factors.push_back(a);
  for (int64_t a : factors)
    for (int64_t k = whole.factor_var_ptr[a]; k < whole.factor_var_ptr[a + 1]; ++k)
      if (shard_of[whole.factor_vars[k]] != index) in_halo[whole.factor_vars[k]] = 1;
  for (int64_t v = 0; v < n_vars; ++v)
    if (in_halo[v]) vars.push_back(v);
  std::vector<LocalIndex> local_of(static_cast<size_t>(n_vars), -1);
  for (size_t i = 0; i < vars.size(); ++i) local_of[vars[i]] = static_cast<LocalIndex>(i);

  Dataset d;
  d.num_params = whole.num_params;
  d.first_example = whole.first_example;
  d.first_var = whole.first_var;
  d.first_factor = whole.first_factor;
  d.first_state = whole.first_state;
  d.first_table_entry = whole.first_table_entry;
  d.first_slot = whole.first_slot;
  d.file_examples = whole.file_examples;
  d.labelled = whole.labelled;
  d.counted = whole.counted;
  d.file_path = whole.file_path;
  d.var_offset = {0, own_vars};
  d.factor_offset = {0, own_factors};
  d.var_features.first_nnz = whole.var_features.first_nnz;
  d.factor_features.first_nnz = whole.factor_features.first_nnz;
  for (int64_t v : vars) {
    d.card.push_back(whole.card[v]);
    if (whole.has_labels()) d.label.push_back(whole.label[v]);
    if (whole.has_counting()) d.var_counting.push_back(whole.var_counting[v]);
    if (!whole.var_loss.empty())
      d.var_loss.insert(d.var_loss.end(), whole.var_loss.begin() + whole.state_offset[v],
                        whole.var_loss.begin() + whole.state_offset[v + 1]);
    copy_rows(whole.var_features, whole.state_offset[v], whole.state_offset[v + 1], d.var_features);
  }
  for (int64_t a : factors) {
    for (int64_t k = whole.factor_var_ptr[a]; k < whole.factor_var_ptr[a + 1]; ++k)
      d.factor_vars.push_back(local_of[whole.factor_vars[k]]);
    d.factor_var_ptr.push_back(static_cast<LocalIndex>(d.factor_vars.size()));
    if (whole.has_counting()) d.factor_counting.push_back(whole.factor_counting[a]);
    copy_rows(whole.factor_features, whole.table_offset[a], whole.table_offset[a + 1],
              d.factor_features);
  }
  std::vector<LocalIndex> row_of;
  d.observations = copy_observations(whole, vars, factors, row_of);
  d.obs_offset = {0, d.observations.num_rows()};
  d.var_types = copy_types(whole.var_types, vars, row_of);
  d.factor_types = copy_types(whole.factor_types, factors, row_of);
  d.rebuild_offsets(whole.source());

  auto shard = std::make_shared<ExampleShard>();
  shard->index = index;
  shard->count = partition.shards;
  shard->first_rank = first_rank;
  shard->example = whole.first_example;
  shard->example_vars = n_vars;
  shard->cut_factors = partition.cut_factors;
  shard->shard_variables = partition.variables;
  shard->method = partition.method;
  shard->example_acyclic = acyclic;
  std::vector<int32_t> colour_of(static_cast<size_t>(n_vars), 0);
  const int64_t first_class = colouring.example_class_ptr[0];
  shard->colours = static_cast<int32_t>(colouring.num_classes(0));
  for (int64_t c = 0; c < shard->colours; ++c)
    for (LocalIndex v : colouring.members(first_class + c)) colour_of[v] = static_cast<int32_t>(c);
  for (int64_t i = 0; i < own_vars; ++i) shard->colour.push_back(colour_of[vars[i]]);
  for (size_t i = static_cast<size_t>(own_vars); i < vars.size(); ++i)
    shard->halo_degree.push_back(static_cast<int32_t>(graph.degree(vars[i])));
  for (int64_t v : vars) shard->global_var.push_back(whole.first_var + v);
  for (int64_t a : factors) shard->global_factor.push_back(whole.first_factor + a);

  // Each slot of a held factor: an own variable's goes to every other shard in the factor, a
  // halo variable's comes from its shard.
  std::vector<NeighbourLists> lists(static_cast<size_t>(partition.shards));
  std::vector<int32_t> others;
  for (size_t i = 0; i < factors.size(); ++i) {
    const int64_t a = factors[i];
    others.clear();
    for (int64_t k = whole.factor_var_ptr[a]; k < whole.factor_var_ptr[a + 1]; ++k)
      if (shard_of[whole.factor_vars[k]] != index) others.push_back(shard_of[whole.factor_vars[k]]);
    std::sort(others.begin(), others.end());
    others.erase(std::unique(others.begin(), others.end()), others.end());
    for (int64_t k = whole.factor_var_ptr[a]; k < whole.factor_var_ptr[a + 1]; ++k) {
      const int64_t v = whole.factor_vars[k];
      const SlotKey key{
          colour_of[v], whole.first_slot + k,
          static_cast<LocalIndex>(d.factor_var_ptr[i] + (k - whole.factor_var_ptr[a]))};
      if (shard_of[v] != index) {
        lists[shard_of[v]].recv.push_back(key);
        lists[shard_of[v]].recv_vars.push_back(v);
        continue;
      }
      for (int32_t r : others) {
        lists[r].send.push_back(key);
        lists[r].send_vars.push_back(v);
      }
    }
  }
  for (int r = 0; r < partition.shards; ++r) {
    NeighbourLists& l = lists[r];
    if (l.send.empty() && l.recv.empty()) continue;
    ShardNeighbour neighbour;
    neighbour.rank = first_rank + r;
    group_by_class(l.send, shard->colours, neighbour.send_class_ptr, neighbour.send_slots);
    group_by_class(l.recv, shard->colours, neighbour.recv_class_ptr, neighbour.recv_slots);
    neighbour.send_vars = unique_local(l.send_vars, local_of);
    neighbour.recv_vars = unique_local(l.recv_vars, local_of);
    shard->neighbours.push_back(std::move(neighbour));
  }
  d.shard = std::move(shard);
  return d;
}

}  // namespace pdsp
