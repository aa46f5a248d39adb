# crank_add_plugin(<target> <sources>...): a plugin library as crankd loads it. A MODULE library
# (never linked, only loaded), hidden visibility so that only crank_plugin_entry is exported.
# Inside the Crank tree it lands in build/lib/crank/plugins; elsewhere in the caller's output
# directory unless CRANK_PLUGIN_OUTPUT_DIRECTORY is set.
function(crank_add_plugin target)
    add_library(${target} MODULE ${ARGN})
    target_link_libraries(${target} PRIVATE crank::sdk)
    set_target_properties(${target} PROPERTIES
        C_VISIBILITY_PRESET hidden
        CXX_VISIBILITY_PRESET hidden
        VISIBILITY_INLINES_HIDDEN ON)
    if(DEFINED CRANK_PLUGIN_OUTPUT_DIRECTORY)
        set_target_properties(${target} PROPERTIES
            LIBRARY_OUTPUT_DIRECTORY "${CRANK_PLUGIN_OUTPUT_DIRECTORY}")
    endif()
    if(CMAKE_SYSTEM_NAME STREQUAL "Linux")
        # Fail at link time, not at load time, on a symbol that nothing provides.
        target_link_options(${target} PRIVATE "LINKER:--no-undefined")
    endif()
endfunction()
