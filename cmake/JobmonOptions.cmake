# Compile options shared by every jobmon target, carried by one interface
# target instead of global variables so that nothing leaks into consumers.
add_library(jobmon_build_options INTERFACE)
add_library(jobmon::build_options ALIAS jobmon_build_options)
target_compile_features(jobmon_build_options INTERFACE cxx_std_20)
target_compile_options(jobmon_build_options INTERFACE -Wall -Wextra -Wpedantic -Wshadow
  $<$<BOOL:${JOBMON_WERROR}>:-Werror>)

if(JOBMON_SANITIZE OR JOBMON_FUZZ)
  target_compile_options(jobmon_build_options INTERFACE
    -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined)
  target_link_options(jobmon_build_options INTERFACE -fsanitize=address,undefined)
endif()

if(JOBMON_FUZZ)
  if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
    message(FATAL_ERROR "JOBMON_FUZZ needs clang (CXX=clang++)")
  endif()
  # Coverage instrumentation for libFuzzer in every library. Harmless to the
  # unit tests built beside the fuzzers (the ASan runtime has no-op hooks),
  # so one tree serves both (scripts/build.sh asan).
  target_compile_options(jobmon_build_options INTERFACE -fsanitize=fuzzer-no-link)
endif()

# The sanitizer tree (scripts/build.sh asan) precompiles the headers most of
# its sources parse again and again (nlohmann/json in a third of them, the
# standard library in all): once per target instead of once per source. The
# gcc trees do not, so a source that forgets an include still fails there.
option(JOBMON_PCH "Precompile the common headers once per target" OFF)
if(JOBMON_PCH)
  target_precompile_headers(jobmon_build_options INTERFACE
    "$<$<COMPILE_LANGUAGE:CXX>:<algorithm$<ANGLE-R>>"
    "$<$<COMPILE_LANGUAGE:CXX>:<chrono$<ANGLE-R>>"
    "$<$<COMPILE_LANGUAGE:CXX>:<filesystem$<ANGLE-R>>"
    "$<$<COMPILE_LANGUAGE:CXX>:<functional$<ANGLE-R>>"
    "$<$<COMPILE_LANGUAGE:CXX>:<map$<ANGLE-R>>"
    "$<$<COMPILE_LANGUAGE:CXX>:<memory$<ANGLE-R>>"
    "$<$<COMPILE_LANGUAGE:CXX>:<optional$<ANGLE-R>>"
    "$<$<COMPILE_LANGUAGE:CXX>:<string$<ANGLE-R>>"
    "$<$<COMPILE_LANGUAGE:CXX>:<vector$<ANGLE-R>>"
    "$<$<COMPILE_LANGUAGE:CXX>:<fmt/format.h$<ANGLE-R>>"
    "$<$<COMPILE_LANGUAGE:CXX>:<nlohmann/json.hpp$<ANGLE-R>>")
endif()

# No debug info where nothing reads it (the test command's release build):
# a third less compile time. Later than CMAKE_CXX_FLAGS_<CONFIG>'s -g, so it wins.
if(NOT JOBMON_DEBUG_INFO)
  target_compile_options(jobmon_build_options INTERFACE -g0)
endif()

# Position-independent code everywhere: common/ is linked into spank_diag.so.
set(CMAKE_POSITION_INDEPENDENT_CODE ON)
set(CMAKE_CXX_EXTENSIONS OFF)
