# Fails the build when a file includes a pdsp header of a layer above its own (docs/architecture.md):
# the headers and sources of each layer may include their own layer's and those listed for it.
# Run at every build by the target pdsp_layers: cmake -DSOURCE_DIR=<repo> -P LayerCheck.cmake
cmake_policy(SET CMP0057 NEW)  # if(IN_LIST) in script mode
set(below_util "")
set(below_optim util)
set(below_parallel util)
set(below_data util parallel)
set(below_gen util parallel data)
set(below_inference util parallel data)
set(below_features util parallel data inference)
set(below_learning util optim parallel data inference features)
set(below_learners util optim parallel data inference features learning)
set(below_app util optim parallel data gen inference features learning learners)

set(violations "")
foreach(layer util optim parallel data gen inference features learning learners app)
  file(GLOB_RECURSE files ${SOURCE_DIR}/include/pdsp/${layer}/*.hpp ${SOURCE_DIR}/src/${layer}/*.cpp
       ${SOURCE_DIR}/src/${layer}/*.hpp)
  foreach(path ${files})
    file(STRINGS ${path} includes REGEX "^#include \"pdsp/[a-z_]+/")
    foreach(line ${includes})
      string(REGEX REPLACE "^#include \"pdsp/([a-z_]+)/.*" "\\1" other "${line}")
      if(NOT other STREQUAL layer AND NOT other IN_LIST below_${layer})
        file(RELATIVE_PATH shown ${SOURCE_DIR} ${path})
        string(APPEND violations "\n  ${shown}: ${line} (the ${layer} layer may use: ${below_${layer}})")
      endif()
    endforeach()
  endforeach()
endforeach()
if(violations)
  message(FATAL_ERROR "includes against the direction of the layers:${violations}")
endif()
