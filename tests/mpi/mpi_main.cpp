// GoogleTest under mpirun: every rank runs every test; only rank 0 prints, and a failure on any
// rank fails the run.
#include <gtest/gtest.h>

#include "mpi/mpi_world.hpp"

namespace {
pdsp::MpiCommunicator* g_world = nullptr;
}

pdsp::MpiCommunicator& pdsp::testing::world() {
  return *g_world;
}

int main(int argc, char** argv) {
  pdsp::MpiCommunicator world(&argc, &argv);
  g_world = &world;
  ::testing::InitGoogleTest(&argc, argv);
  if (world.rank() != 0) {
    auto& listeners = ::testing::UnitTest::GetInstance()->listeners();
    delete listeners.Release(listeners.default_result_printer());
  }
  const int failed = RUN_ALL_TESTS();
  double any[1] = {static_cast<double>(failed != 0)};
  world.allreduce({}, any);
  return any[0] > 0 ? 1 : 0;
}
