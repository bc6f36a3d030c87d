#pragma once
// The MPI communicator of the multi-rank test binary, created by its main().
#include "pdsp/parallel/mpi_communicator.hpp"

namespace pdsp::testing {
MpiCommunicator& world();
}
