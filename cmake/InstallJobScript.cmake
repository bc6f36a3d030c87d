# Run by `cmake --install` (cmake/Install.cmake sets the PDSP_* variables): installs
# run/slurm_train.sbatch with the installed pdsp's absolute path in place of the pdsp on PATH.
set(pdsp_line [[pdsp=${PDSP:-pdsp}]])
file(READ ${PDSP_JOB_SCRIPT} script)
string(FIND "${script}" "${pdsp_line}" position)
if(position EQUAL -1)
  message(FATAL_ERROR
          "${PDSP_JOB_SCRIPT} has no line '${pdsp_line}' to point at the installed pdsp")
endif()
# --prefix may be relative (to the directory cmake --install runs in); the job runs elsewhere.
set(installed_pdsp ${CMAKE_INSTALL_PREFIX}/${PDSP_BINDIR}/pdsp)
cmake_path(ABSOLUTE_PATH installed_pdsp NORMALIZE)
string(REPLACE "${pdsp_line}" "pdsp=\${PDSP:-\"${installed_pdsp}\"}" script "${script}")
file(WRITE ${PDSP_JOB_SCRIPT_STAGING} "${script}")
file(INSTALL ${PDSP_JOB_SCRIPT_STAGING}
     DESTINATION ${CMAKE_INSTALL_PREFIX}/${PDSP_JOB_SCRIPT_DESTINATION}
     FILE_PERMISSIONS OWNER_READ OWNER_WRITE OWNER_EXECUTE GROUP_READ GROUP_EXECUTE
                      WORLD_READ WORLD_EXECUTE)
