#pragma once
// The identity of a training set: its sizes and a checksum of every array, computed from the
// slices the ranks hold, so it is the same for any rank count. A checkpoint stores it and a
// resume refuses data that differs.
#include <string>

#include "pdsp/data/dataset.hpp"
#include "pdsp/parallel/communicator.hpp"

namespace pdsp {

// Collective.
std::string dataset_fingerprint(const Dataset& slice, Communicator& comm);

}  // namespace pdsp
