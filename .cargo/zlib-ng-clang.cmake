# CMake toolchain file that cmake-rs hands to every cmake build of this
# repository (.cargo/config.toml): zlib-ng (libz-ng-sys) is compiled with
# clang 19 or newer when one is installed; every other cmake build (perf/'s
# static C-Blosc2) keeps the system cc, as without this file.
#
# Why: zlib-ng 2.3.3's deflate_medium (clevels 3-6) stalls under gcc 12,
# Debian 12's compiler, on an 8-byte reload of its `struct match`
# (perf/README.md, "zlib-ng compression built by clang 19"): zng_compress2 at
# level 5 on a shuffled 32 KiB ramp takes 145 us from gcc 12, 71 us from
# clang 19, 77 us in C-Blosc2 3.3.5's own copy and 90 us in zlib-rs. The
# engine compresses ZLIB clevels 1-5 with zlib-ng only from a clang build
# (zng/build.rs tells it), with zlib-rs otherwise.
#
# cmake-rs computes CMAKE_C_FLAGS for the system cc: clang is taken only if
# it compiles and links a test program with those flags, otherwise the
# system cc stays. That keeps gcc (and the engine on zlib-rs) in cargo-fuzz's
# ASan builds, whose flags include gcc's -fno-ipa-icf-variables and need a
# sanitizer runtime clang does not have here.
#
# try_compile projects re-read this file: they inherit the compiler the
# top-level configure chose, so only an unset compiler is decided here.
if(NOT CMAKE_C_COMPILER AND CMAKE_SOURCE_DIR MATCHES "libz-ng-sys[^/]*/src/zlib-ng$")
  find_program(OXIBLOSC_ZNG_CLANG NAMES clang-21 clang-20 clang-19)
  if(OXIBLOSC_ZNG_CLANG)
    separate_arguments(oxiblosc_flag_list UNIX_COMMAND "${CMAKE_C_FLAGS}")
    set(oxiblosc_probe "${CMAKE_BINARY_DIR}/oxiblosc-clang-probe.c")
    file(WRITE "${oxiblosc_probe}" "int main(void) { return 0; }\n")
    execute_process(
      COMMAND "${OXIBLOSC_ZNG_CLANG}" ${oxiblosc_flag_list} "${oxiblosc_probe}"
              -o "${oxiblosc_probe}.out"
      RESULT_VARIABLE oxiblosc_rc OUTPUT_QUIET ERROR_QUIET)
    if(oxiblosc_rc EQUAL 0)
      set(CMAKE_C_COMPILER "${OXIBLOSC_ZNG_CLANG}")
    endif()
  endif()
endif()
