# Warnings are on for every target of the project and must stay at zero.
option(PDSP_WERROR "Treat warnings as errors" OFF)
function(pdsp_enable_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic -Wshadow -Wconversion -Wno-sign-conversion)
  if(PDSP_WERROR)
    target_compile_options(${target} PRIVATE -Werror)
  endif()
endfunction()
