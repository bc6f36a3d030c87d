#include "pdsp/data/atomic_file.hpp"
#include "pdsp/data/dataset_io.hpp"
#include "pdsp/data/hdf5_file.hpp"

namespace pdsp {

void write_dataset(const std::string& path, const Dataset& data) {
  AtomicFile output(path);
  {
    h5::File file = h5::File::create(output.temporary_path());
    file.write_attribute("format", std::string(kDatasetFormat));
    file.write_attribute("format_version", kDatasetFormatVersion);
    file.write_attribute("num_params", data.num_params);
    file.write("/examples/var_offset", data.var_offset);
    file.write("/examples/factor_offset", data.factor_offset);
    file.write("/vars/card", data.card);
    if (data.has_labels()) file.write("/vars/label", data.label);
    file.write("/vars/feat_ptr", data.var_features.ptr);
    file.write("/vars/feat_param", data.var_features.param);
    file.write("/vars/feat_value", data.var_features.value);
    file.write("/factors/var_ptr", data.factor_var_ptr);
    file.write("/factors/vars", data.factor_vars);
    file.write("/factors/feat_ptr", data.factor_features.ptr);
    file.write("/factors/feat_param", data.factor_features.param);
    file.write("/factors/feat_value", data.factor_features.value);
    if (!data.var_counting.empty()) file.write("/vars/counting", data.var_counting);
    if (!data.factor_counting.empty()) file.write("/factors/counting", data.factor_counting);
    if (!data.var_loss.empty()) file.write("/vars/loss", data.var_loss);
  }
  output.commit();
}

}  // namespace pdsp
