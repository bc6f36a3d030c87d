#pragma once
// The part of a checkpoint that pdsp train --validation keeps (TrainingState::validation): the
// best theta so far as /validation/best_theta and its bookkeeping as attributes, absent before
// the first check. The checkpoint's header checksum covers them through validation_checksum.
#include <cstdint>
#include <string>

#include "pdsp/data/hdf5_file.hpp"
#include "pdsp/learning/training_state.hpp"

namespace pdsp {

// "" before the first check.
std::string validation_checksum(const ValidationProgress& progress);
// Nothing before the first check.
void write_validation(h5::File& file, const ValidationProgress& progress);
// When the file has it: reads it, checking the best theta's length against `params` and the
// checksum (InputErrors name the file and the dataset).
void read_validation(const h5::File& file, const std::string& path, int64_t params,
                     ValidationProgress& progress);

}  // namespace pdsp
