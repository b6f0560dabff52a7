# Run at every build (cmake -P): writes OUT, a C++ file with fabsim's version
# and the git commit of SOURCE_DIR, only when they changed (so nothing relinks
# otherwise). A tree with uncommitted changes to tracked files is "+dirty";
# a source tree without git is "unknown".
set(commit "unknown")
find_package(Git QUIET)
if(GIT_FOUND AND EXISTS "${SOURCE_DIR}/.git")
  execute_process(COMMAND "${GIT_EXECUTABLE}" -C "${SOURCE_DIR}" rev-parse --short=12 HEAD
                  OUTPUT_VARIABLE head RESULT_VARIABLE head_rc OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
  if(head_rc EQUAL 0)
    set(commit "${head}")
    execute_process(COMMAND "${GIT_EXECUTABLE}" -C "${SOURCE_DIR}" status --porcelain --untracked-files=no
                    OUTPUT_VARIABLE changes OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
    if(NOT changes STREQUAL "")
      set(commit "${commit}+dirty")
    endif()
  endif()
endif()
set(text "// Written by cmake/build_info.cmake at build time; do not edit.\n#include \"sim/core/build_info.hpp\"\n\nnamespace fabsim::core {\nstd::string fabsim_version() { return \"${VERSION}\"; }\nstd::string fabsim_commit() { return \"${commit}\"; }\n}  // namespace fabsim::core\n")
if(EXISTS "${OUT}")
  file(READ "${OUT}" old)
else()
  set(old "")
endif()
if(NOT old STREQUAL text)
  file(WRITE "${OUT}" "${text}")
endif()
