# What `cmake --install` puts under the prefix: the pdsp executable (bin/), the libraries of the
# layers (lib/: pdsp_core, the top one, and those below it) with their headers (include/pdsp/),
# the CMake package that lets other projects find_package(pdsp) and link pdsp::core
# (lib/cmake/pdsp/), the SLURM job script (share/pdsp/),
# the man page (share/man/man1/pdsp.1) and the Python package (lib/python3.X/dist-packages/pdsp).
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

# Exported as pdsp::core (the library) and pdsp::pdsp (the executable, for projects that run it).
set_target_properties(pdsp_core PROPERTIES EXPORT_NAME core)
# Every layer's static library goes along: pdsp::core links them.
install(TARGETS pdsp ${PDSP_LAYER_TARGETS} EXPORT pdspTargets FILE_SET HEADERS)

set(PDSP_PACKAGE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/pdsp)
install(EXPORT pdspTargets NAMESPACE pdsp:: DESTINATION ${PDSP_PACKAGE_DIR})
configure_package_config_file(cmake/pdspConfig.cmake.in ${PROJECT_BINARY_DIR}/pdspConfig.cmake
                              INSTALL_DESTINATION ${PDSP_PACKAGE_DIR})
# Before 1.0 a new minor version may change the interface.
write_basic_package_version_file(${PROJECT_BINARY_DIR}/pdspConfigVersion.cmake
                                 COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/pdspConfig.cmake ${PROJECT_BINARY_DIR}/pdspConfigVersion.cmake
        DESTINATION ${PDSP_PACKAGE_DIR})

# The job script gets the installed pdsp's path written in when it is installed (the prefix is
# known only then): sbatch runs a copy of the script from its spool directory, so the script
# cannot look next to itself, and the compute nodes' PATH need not include the prefix.
install(CODE "set(PDSP_JOB_SCRIPT [[${PROJECT_SOURCE_DIR}/run/slurm_train.sbatch]])
set(PDSP_JOB_SCRIPT_STAGING [[${PROJECT_BINARY_DIR}/slurm_train.sbatch]])
set(PDSP_BINDIR [[${CMAKE_INSTALL_BINDIR}]])
set(PDSP_JOB_SCRIPT_DESTINATION [[${CMAKE_INSTALL_DATADIR}/pdsp]])")
install(SCRIPT cmake/InstallJobScript.cmake)

# The man page is pdsp's own help, every command's included, regenerated whenever pdsp is rebuilt.
find_program(PDSP_HELP2MAN help2man)
if(NOT PDSP_HELP2MAN)
  message(FATAL_ERROR "help2man not found: install Debian's help2man (run/install_deps.sh)")
endif()
set(PDSP_MAN_PAGE ${PROJECT_BINARY_DIR}/pdsp.1)
add_custom_command(
  OUTPUT ${PDSP_MAN_PAGE}
  COMMAND ${CMAKE_COMMAND} -DPDSP=$<TARGET_FILE:pdsp> -DHELP2MAN=${PDSP_HELP2MAN}
          -DVERSION=${PROJECT_VERSION} -DOUTPUT=${PDSP_MAN_PAGE}
          -P ${PROJECT_SOURCE_DIR}/cmake/ManPage.cmake
  DEPENDS pdsp ${PROJECT_SOURCE_DIR}/cmake/ManPage.cmake
  COMMENT "Writing the man page from pdsp --help")
add_custom_target(pdsp_man_page ALL DEPENDS ${PDSP_MAN_PAGE})
install(FILES ${PDSP_MAN_PAGE} DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)

# The Python package (python/pdsp) goes where the system's python3 finds it: Debian's python3
# searches lib/python3.X/dist-packages under both /usr and /usr/local. At install time it gets a
# module `_installed` naming the installed pdsp, which its Estimator runs.
find_package(Python3 COMPONENTS Interpreter)
if(Python3_Interpreter_FOUND)
  set(PDSP_PYTHON_DIR
      lib/python${Python3_VERSION_MAJOR}.${Python3_VERSION_MINOR}/dist-packages
      CACHE STRING "Where `cmake --install` puts the Python package pdsp, under the prefix")
  install(DIRECTORY python/pdsp DESTINATION ${PDSP_PYTHON_DIR} FILES_MATCHING PATTERN "*.py")
  install(CODE "set(PDSP_BINDIR [[${CMAKE_INSTALL_BINDIR}]])
set(PDSP_PYTHON_DIR [[${PDSP_PYTHON_DIR}]])")
  install(SCRIPT cmake/InstallPythonPackage.cmake)
else()
  message(WARNING "python3 not found: `cmake --install` leaves out the Python package pdsp")
endif()
