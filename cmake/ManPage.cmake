# Run at build time (cmake -P, see cmake/Install.cmake): writes the man page pdsp.1 from the
# program's own help. help2man formats `pdsp --help` (name, usage, the list of commands); each
# command's `--help` follows in a COMMANDS section, verbatim, so that no change to the format of
# a help text can break the page or the build.
# Inputs: PDSP (the executable), HELP2MAN, VERSION, OUTPUT.

# One entry per command; a new command is added here.
set(commands "train" "predict" "info" "gen denoise" "gen domke" "gen chain")

# pdsp starts MPI even for --help; OpenMPI's allocations trip LeakSanitizer in sanitizer builds.
set(ENV{ASAN_OPTIONS} "detect_leaks=0")

set(sections "[COMMANDS]\n")
foreach(command IN LISTS commands)
  separate_arguments(arguments UNIX_COMMAND "${command} --help")
  execute_process(COMMAND ${PDSP} ${arguments} OUTPUT_VARIABLE help RESULT_VARIABLE failed)
  if(failed)
    message(FATAL_ERROR "pdsp ${command} --help failed (${failed})")
  endif()
  # Verbatim text in roff: backslashes and minus signs escaped, and no line may start with a
  # control character ('.' or "'"), which \& in front of every line prevents.
  string(REPLACE "\\" "\\e" help "${help}")
  string(REPLACE "-" "\\-" help "${help}")
  string(REGEX REPLACE "\n+$" "" help "${help}")
  string(REPLACE "\n" "\n\\&" help "${help}")
  string(APPEND sections ".SS \"pdsp ${command}\"\n.nf\n\\&${help}\n.fi\n")
endforeach()
get_filename_component(directory ${OUTPUT} DIRECTORY)
set(include_file ${directory}/pdsp_man_commands.h2m)
file(WRITE ${include_file} "${sections}")

# --version-string: the project's version, so the page does not depend on a --version flag.
execute_process(
  COMMAND ${HELP2MAN} --no-info --version-string=${VERSION}
          "--name=structured prediction by primal-dual message passing"
          --include=${include_file} --output=${OUTPUT} ${PDSP}
  RESULT_VARIABLE failed)
if(failed)
  message(FATAL_ERROR "help2man failed (${failed})")
endif()
