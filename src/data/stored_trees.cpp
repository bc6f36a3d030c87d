#include "pdsp/data/stored_trees.hpp"

#include <cmath>

#include "pdsp/util/errors.hpp"

namespace pdsp {
namespace {

std::string group_of(const StoredEnsemble& e) {
  return "/trees/" + e.kind + "_" + std::to_string(e.type);
}

}  // namespace

void write_ensembles(h5::File& file, const std::vector<StoredEnsemble>& ensembles) {
  if (ensembles.empty()) return;
  std::vector<int64_t> index;  // [ensembles x 3]: kind (0 variables, 1 factors), type, outputs
  for (const StoredEnsemble& e : ensembles) {
    const std::string group = group_of(e);
    file.write(group + "/booster", std::vector<uint8_t>(e.booster.begin(), e.booster.end()));
    file.write(group + "/tree_offset", e.tree_offset);
    file.write(group + "/leaf_value", e.leaf_value);
    index.insert(index.end(), {e.kind == "factors" ? 1 : 0, e.type, e.outputs});
  }
  file.write("/trees/index", index);
}

std::vector<StoredEnsemble> read_ensembles(const h5::File& file) {
  std::vector<StoredEnsemble> ensembles;
  if (!file.exists("/trees/index")) return ensembles;
  const std::vector<int64_t> index = file.read_all<int64_t>("/trees/index");
  if (index.size() % 3 != 0)
    throw_file_error(file.path(), "/trees/index",
                     "has " + std::to_string(index.size()) + " entries, not 3 per ensemble");
  for (size_t i = 0; i < index.size(); i += 3) {
    StoredEnsemble e;
    if (index[i] != 0 && index[i] != 1)
      throw_file_error(file.path(), "/trees/index", static_cast<int64_t>(i),
                       "kind is " + std::to_string(index[i]) + ", not 0 or 1");
    e.kind = index[i] == 0 ? "variables" : "factors";
    e.type = static_cast<int32_t>(index[i + 1]);
    e.outputs = static_cast<int32_t>(index[i + 2]);
    if (e.type < 0 || e.outputs < 1)
      throw_file_error(file.path(), "/trees/index", static_cast<int64_t>(i + 1),
                       "type " + std::to_string(index[i + 1]) + " or outputs " +
                           std::to_string(index[i + 2]) + " out of range");
    for (const StoredEnsemble& earlier : ensembles)
      if (earlier.kind == e.kind && earlier.type == e.type)
        throw_file_error(file.path(), "/trees/index", static_cast<int64_t>(i),
                         "names /trees/" + e.kind + "_" + std::to_string(e.type) + " twice");
    const std::string group = group_of(e);
    const std::vector<uint8_t> bytes = file.read_all<uint8_t>(group + "/booster");
    e.booster.assign(bytes.begin(), bytes.end());
    e.tree_offset = file.read_all<int64_t>(group + "/tree_offset");
    e.leaf_value = file.read_all<double>(group + "/leaf_value");
    if (e.tree_offset.empty() || e.tree_offset.front() != 0 ||
        e.tree_offset.back() != static_cast<int64_t>(e.leaf_value.size()))
      throw_file_error(file.path(), group + "/tree_offset",
                       "does not start at 0 and end at the length of leaf_value (" +
                           std::to_string(e.leaf_value.size()) + ")");
    for (size_t t = 1; t < e.tree_offset.size(); ++t)
      if (e.tree_offset[t] < e.tree_offset[t - 1])
        throw_file_error(file.path(), group + "/tree_offset", static_cast<int64_t>(t), "decreases");
    if (e.trees() % e.outputs != 0)
      throw_file_error(file.path(), group + "/tree_offset",
                       std::to_string(e.trees()) + " trees are not whole rounds of " +
                           std::to_string(e.outputs) + " outputs");
    for (size_t k = 0; k < e.leaf_value.size(); ++k)
      if (!std::isfinite(e.leaf_value[k]))
        throw_file_error(file.path(), group + "/leaf_value", static_cast<int64_t>(k),
                         "value is not finite");
    ensembles.push_back(std::move(e));
  }
  return ensembles;
}

}  // namespace pdsp
