# Warnings and flags for the project's own targets (never applied to third-party code).
add_library(crank_compiler_options INTERFACE)
target_compile_options(crank_compiler_options INTERFACE
    -Wall -Wextra -Wpedantic -Wshadow -Wnon-virtual-dtor -Wcast-align -Woverloaded-virtual
    -Wnull-dereference -Wimplicit-fallthrough)
if(CRANK_WARNINGS_AS_ERRORS)
    target_compile_options(crank_compiler_options INTERFACE -Werror)
endif()
