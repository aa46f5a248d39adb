# How much debug information the trees carry (issue 44: the disk footprint of a test run).
#
#   CRANK_DEBUG_INFO=lines  (the default) -g1: functions, files and line numbers, which is all
#                           that backtraces, sanitizer reports and the fuzzers' stack traces print.
#                           A quarter of -g's object size and about 40% less compile time
#                           (docs/testing.md, "Disk").
#   CRANK_DEBUG_INFO=full   -g: also types and local variables, for a debugger
#                           (-DCRANK_DEBUG_INFO=full when configuring a tree by hand).
#
# Either way the debug sections are compressed (-gz, zlib: gdb, addr2line, libbacktrace and
# llvm-symbolizer read them), in objects and in the linked binaries and plugins. Only the
# configurations that carry debug information at all (RelWithDebInfo, Debug) are touched.
set(CRANK_DEBUG_INFO "lines" CACHE STRING "Debug information: lines (-g1) or full (-g)")
set_property(CACHE CRANK_DEBUG_INFO PROPERTY STRINGS lines full)

set(crank_debug_configs "$<CONFIG:RelWithDebInfo,Debug>")
if(CRANK_DEBUG_INFO STREQUAL "lines")
    add_compile_options("$<${crank_debug_configs}:-g1>")
elseif(NOT CRANK_DEBUG_INFO STREQUAL "full")
    message(FATAL_ERROR "CRANK_DEBUG_INFO must be lines or full, not '${CRANK_DEBUG_INFO}'")
endif()
add_compile_options("$<${crank_debug_configs}:-gz>")
add_link_options("$<${crank_debug_configs}:-gz>")
