# Compile options shared by every jobmon target, carried by one interface
# target instead of global variables so that nothing leaks into consumers.
add_library(jobmon_build_options INTERFACE)
add_library(jobmon::build_options ALIAS jobmon_build_options)
target_compile_features(jobmon_build_options INTERFACE cxx_std_20)
target_compile_options(jobmon_build_options INTERFACE -Wall -Wextra -Wpedantic -Wshadow
  $<$<BOOL:${JOBMON_WERROR}>:-Werror>)

if(JOBMON_SANITIZE)
  target_compile_options(jobmon_build_options INTERFACE
    -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined)
  target_link_options(jobmon_build_options INTERFACE -fsanitize=address,undefined)
endif()

if(JOBMON_FUZZ)
  if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
    message(FATAL_ERROR "JOBMON_FUZZ needs clang (CXX=clang++)")
  endif()
  # Coverage instrumentation for libFuzzer in every library, plus ASan/UBSan.
  target_compile_options(jobmon_build_options INTERFACE
    -fsanitize=fuzzer-no-link,address,undefined -fno-omit-frame-pointer)
  target_link_options(jobmon_build_options INTERFACE -fsanitize=address,undefined)
endif()

# Position-independent code everywhere: common/ is linked into spank_diag.so.
set(CMAKE_POSITION_INDEPENDENT_CODE ON)
set(CMAKE_CXX_EXTENSIONS OFF)
