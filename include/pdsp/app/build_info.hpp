#pragma once
// The identity of this build, generated at build time by cmake/BuildInfo.cmake.
#include <string>

#include "pdsp/parallel/communicator.hpp"

namespace pdsp {

extern const char* const kVersion;    // the project's version, e.g. "0.1.0"
extern const char* const kCommit;     // git commit, "-dirty" with uncommitted changes
extern const char* const kBuildType;  // CMAKE_BUILD_TYPE
extern const char* const kCompiler;   // compiler id and version

// What `pdsp --version` prints: version, commit, build type, compiler, MPI and HDF5 libraries.
std::string version_text(const Communicator& comm);

}  // namespace pdsp
