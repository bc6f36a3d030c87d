#include "pdsp/app/build_info.hpp"
#include "pdsp/data/hdf5_file.hpp"

namespace pdsp {

std::string version_text(const Communicator& comm) {
  return std::string("pdsp ") + kVersion + "\ncommit: " + kCommit + "\nbuild: " + kBuildType +
         "\ncompiler: " + kCompiler + "\nMPI: " + comm.library_version() +
         "\nHDF5: " + h5::library_version() + "\n";
}

}  // namespace pdsp
