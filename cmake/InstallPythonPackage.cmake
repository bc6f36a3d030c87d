# Run by `cmake --install` (cmake/Install.cmake sets the PDSP_* variables): writes the installed
# Python package's `_installed` module with the installed pdsp's absolute path, known only now.
set(installed_pdsp ${CMAKE_INSTALL_PREFIX}/${PDSP_BINDIR}/pdsp)
cmake_path(ABSOLUTE_PATH installed_pdsp NORMALIZE)
set(module ${CMAKE_INSTALL_PREFIX}/${PDSP_PYTHON_DIR}/pdsp/_installed.py)
cmake_path(ABSOLUTE_PATH module NORMALIZE)
message(STATUS "Installing: ${module}")
file(WRITE ${module} "\"\"\"Written by cmake --install: the pdsp this package runs.\"\"\"\n"
                     "PDSP_EXECUTABLE = \"${installed_pdsp}\"\n")
