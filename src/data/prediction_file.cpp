#include "pdsp/data/prediction_file.hpp"

#include "pdsp/data/collective_output.hpp"

namespace pdsp {

void write_predictions(const std::string& path, const PredictionSlice& slice, int64_t total_vars,
                       int64_t total_states, const Provenance& provenance,
                       const Provenance& model_provenance, Communicator& comm) {
  write_collective_output(
      path, comm,
      [&](h5::File& file) {
        file.write_attribute("format", std::string("pdsp-prediction"));
        file.write_attribute("format_version", int64_t{1});
        write_provenance(file, provenance);
        file.write_attribute("model_commit", model_provenance.commit);
        file.write_attribute("model_started_at", model_provenance.started_at);
        file.write_attribute("model_training_data", model_provenance.data_fingerprint);
        file.create_dataset<int32_t>("/prediction/label", total_vars);
        file.create_dataset<double>("/prediction/marginal", total_states);
      },
      [&](h5::File& file) {
        for (const ArrayRun& run : slice.var_runs)
          file.write_slice<int32_t>(
              "/prediction/label", run.file,
              std::span<const int32_t>(slice.label).subspan(run.local, run.count));
        for (const ArrayRun& run : slice.state_runs)
          file.write_slice<double>(
              "/prediction/marginal", run.file,
              std::span<const double>(slice.marginal).subspan(run.local, run.count));
      });
}

}  // namespace pdsp
