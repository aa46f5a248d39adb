# Sanitizer builds (scripts/sanitizers.sh configures them in build-asan/ and build-tsan/).
#
#   CRANK_SANITIZE=address  AddressSanitizer with LeakSanitizer, and UndefinedBehaviorSanitizer;
#                           every finding aborts the process (no recovery), so a test fails.
#   CRANK_SANITIZE=thread   ThreadSanitizer.
#
# The flags apply to everything the tree compiles and links (host, plugins, fixtures, tests):
# plugins are loaded into the same process, so they must share the host's runtime.
set(CRANK_SANITIZE "" CACHE STRING "Sanitizer build: empty, address or thread")
set_property(CACHE CRANK_SANITIZE PROPERTY STRINGS "" address thread)

if(CRANK_SANITIZE STREQUAL "address")
    add_compile_options(-fsanitize=address,undefined -fno-sanitize-recover=undefined
                        -fno-omit-frame-pointer)
    add_link_options(-fsanitize=address,undefined)
elseif(CRANK_SANITIZE STREQUAL "thread")
    add_compile_options(-fsanitize=thread -fno-omit-frame-pointer)
    add_link_options(-fsanitize=thread)
elseif(NOT CRANK_SANITIZE STREQUAL "")
    message(FATAL_ERROR "CRANK_SANITIZE must be empty, address or thread, not '${CRANK_SANITIZE}'")
endif()

# RapidJSON's SSE2 string scanning (RAPIDJSON_SSE2, set on crank_rapidjson by the top-level
# CMakeLists.txt) loads aligned 16-byte blocks that run up to 15 bytes past the end of the string
# it parses: harmless on real hardware (an aligned load never crosses a page), but every sanitizer
# rightly reports it (AddressSanitizer: heap-buffer-overflow in ScanCopyUnescapedString;
# ThreadSanitizer: heap-use-after-free on the freed neighbour). Sanitizer builds parse byte by
# byte instead. Deferred to the end of the top-level directory, where crank_rapidjson exists; only
# the targets that use RapidJSON see their flags change.
function(crank_sanitizers_drop_rapidjson_simd)
    get_target_property(definitions crank_rapidjson INTERFACE_COMPILE_DEFINITIONS)
    if(definitions)
        list(REMOVE_ITEM definitions RAPIDJSON_SSE2)
        set_target_properties(crank_rapidjson PROPERTIES INTERFACE_COMPILE_DEFINITIONS
                                                         "${definitions}")
    endif()
endfunction()
if(NOT CRANK_SANITIZE STREQUAL "")
    cmake_language(DEFER DIRECTORY "${CMAKE_SOURCE_DIR}" CALL crank_sanitizers_drop_rapidjson_simd)
endif()
