# Every dependency comes from a Debian package (see run/install_deps.sh).
find_package(MPI REQUIRED COMPONENTS CXX)
find_package(OpenMP REQUIRED COMPONENTS CXX)
# Debian ships the serial HDF5 C library; each rank opens the file read-only and reads its slice.
find_package(HDF5 REQUIRED COMPONENTS C)
if(NOT TARGET hdf5::hdf5)
  add_library(hdf5::hdf5 INTERFACE IMPORTED)
  target_include_directories(hdf5::hdf5 INTERFACE ${HDF5_C_INCLUDE_DIRS} ${HDF5_INCLUDE_DIRS})
  target_link_libraries(hdf5::hdf5 INTERFACE ${HDF5_C_LIBRARIES} ${HDF5_LIBRARIES})
  target_compile_definitions(hdf5::hdf5 INTERFACE ${HDF5_DEFINITIONS})
endif()
# Eigen (header-only): the small dense eigenproblems of the quasi-Newton step's curvature model.
find_package(Eigen3 3.4 REQUIRED NO_MODULE)
# The command line (flags, grouped help, config files) is CLI11, header-only.
find_package(CLI11 REQUIRED CONFIG)
# Boost.MPI broadcasts rank 0's view of the run (config file, checkpoint directory) as one
# structured message, serialised in memory with Boost.Serialization (never an on-disk format).
find_package(Boost 1.74 REQUIRED COMPONENTS mpi serialization)
# METIS splits an example's interaction graph into shards (src/inference/shard_partition.cpp).
find_path(METIS_INCLUDE_DIR metis.h)
find_library(METIS_LIBRARY metis)
if(NOT METIS_INCLUDE_DIR OR NOT METIS_LIBRARY)
  message(FATAL_ERROR "METIS not found: install Debian's libmetis-dev (run/install_deps.sh)")
endif()
# XGBoost's C API induces the regression trees of the boosted function class
# (src/features/tree_ensemble.cpp); found by path, as METIS is.
find_path(XGBOOST_INCLUDE_DIR xgboost/c_api.h)
find_library(XGBOOST_LIBRARY xgboost)
if(NOT XGBOOST_INCLUDE_DIR OR NOT XGBOOST_LIBRARY)
  message(FATAL_ERROR "XGBoost not found: install Debian's libxgboost-dev (run/install_deps.sh)")
endif()
