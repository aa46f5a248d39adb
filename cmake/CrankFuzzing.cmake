# The fuzzing build (CRANK_FUZZ, scripts/fuzz.sh configures it in build-fuzz/ with clang): every
# target is compiled with libFuzzer's coverage instrumentation, AddressSanitizer and
# UndefinedBehaviorSanitizer (every finding aborts, so libFuzzer saves the input), and linked with
# the sanitizer runtimes; tests/fuzz links its targets with -fsanitize=fuzzer (libFuzzer's main).
# tests/fuzz/ubsan_ignorelist.txt lists the checks left out, in third-party code only. It is
# passed as -fsanitize-blacklist (clang 14's older name), whose file ccache hashes, and relative to
# the build tree when Ninja compiles there, so that clones elsewhere share the cache.
if(CRANK_FUZZ)
    if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
        message(FATAL_ERROR "CRANK_FUZZ needs clang (libFuzzer), not ${CMAKE_CXX_COMPILER_ID}: "
                            "-DCMAKE_CXX_COMPILER=clang++-14")
    endif()
    if(NOT CRANK_SANITIZE STREQUAL "")
        message(FATAL_ERROR "CRANK_FUZZ brings its own sanitizers: leave CRANK_SANITIZE empty")
    endif()
    set(crank_fuzz_ignorelist "${PROJECT_SOURCE_DIR}/tests/fuzz/ubsan_ignorelist.txt")
    if(CMAKE_GENERATOR STREQUAL "Ninja")
        file(RELATIVE_PATH crank_fuzz_ignorelist "${PROJECT_BINARY_DIR}" "${crank_fuzz_ignorelist}")
    endif()
    add_compile_options(-fsanitize=fuzzer-no-link,address,undefined
                        -fno-sanitize-recover=undefined -fno-omit-frame-pointer
                        "-fsanitize-blacklist=${crank_fuzz_ignorelist}")
    add_link_options(-fsanitize=address,undefined)
endif()
