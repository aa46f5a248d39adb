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
