#pragma once
// The part of a checkpoint that --theta-step lbfgs keeps (TrainingState::lbfgs): /lbfgs/s and
// /lbfgs/y, the pairs oldest first, pairs x params flat, and /lbfgs/step and /lbfgs/gradient, the
// pending step (empty or params long). The checkpoint's header checksum covers them through
// lbfgs_checksum.
#include <cstdint>
#include <string>

#include "pdsp/data/hdf5_file.hpp"
#include "pdsp/optim/lbfgs_memory.hpp"

namespace pdsp {

// Of the arrays as the file holds them, whatever slot of the memory's ring is the oldest.
std::string lbfgs_checksum(const LbfgsMemory& memory, int64_t params);
void write_lbfgs_memory(h5::File& file, const LbfgsMemory& memory, int64_t params);
// Checks the four datasets against `params` before any is read whole (InputErrors name the file
// and the dataset); the memory read is in order (oldest = 0), into storage reserved for at
// least `capacity` pairs, a pair at a time: no more than one pair's temporary beside it.
void read_lbfgs_memory(const h5::File& file, const std::string& path, int64_t params, int capacity,
                       LbfgsMemory& memory);

}  // namespace pdsp
