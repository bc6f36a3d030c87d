#include "pdsp/data/prediction_file.hpp"

#include <unistd.h>

#include <memory>

#include "pdsp/data/atomic_file.hpp"
#include "pdsp/data/hdf5_file.hpp"

namespace pdsp {

void write_predictions(const std::string& path, const PredictionSlice& slice, int64_t total_vars,
                       int64_t total_states, Communicator& comm) {
  // All ranks write into rank 0's temporary file; rank 0 alone moves it into place.
  int64_t tag[1] = {comm.is_root() ? static_cast<int64_t>(::getpid()) : 0};
  comm.allreduce_sum(std::span<int64_t>(tag));
  std::unique_ptr<AtomicFile> output;
  run_collectively(comm, [&] {
    if (!comm.is_root()) return;
    output = std::make_unique<AtomicFile>(path, std::to_string(tag[0]));
    h5::File file = h5::File::create(output->temporary_path());
    file.write_attribute("format", std::string("pdsp-prediction"));
    file.write_attribute("format_version", int64_t{1});
    file.create_dataset<int32_t>("/prediction/label", total_vars);
    file.create_dataset<double>("/prediction/marginal", total_states);
  });
  const std::string temporary = path + ".tmp." + std::to_string(tag[0]);
  for (int turn = 0; turn < comm.size(); ++turn) {
    run_collectively(comm, [&] {
      if (comm.rank() != turn) return;
      h5::File file = h5::File::open_write(temporary);
      file.write_slice("/prediction/label", slice.first_var, slice.label);
      file.write_slice("/prediction/marginal", slice.first_state, slice.marginal);
    });
  }
  run_collectively(comm, [&] {
    if (output) output->commit();
  });
}

}  // namespace pdsp
