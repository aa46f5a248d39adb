# crank_add_plugin(<target> <sources>...): a plugin library as crankd loads it. A MODULE library
# (never linked, only loaded), hidden visibility, and a version script so that only
# crank_plugin_entry is exported.
# Inside the Crank tree it lands in build/lib/crank/plugins; elsewhere in the caller's output
# directory unless CRANK_PLUGIN_OUTPUT_DIRECTORY is set.
# A global property: a function sees its caller's variables, not those of the file it is in.
set_property(GLOBAL PROPERTY CRANK_PLUGIN_VERSION_SCRIPT "${CMAKE_CURRENT_LIST_DIR}/crank_plugin.map")

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
        get_property(CRANK_PLUGIN_VERSION_SCRIPT GLOBAL PROPERTY CRANK_PLUGIN_VERSION_SCRIPT)
        # Fail at link time, not at load time, on a symbol that nothing provides; export
        # crank_plugin_entry and nothing else (see crank_plugin.map).
        target_link_options(${target} PRIVATE "LINKER:--no-undefined"
            "LINKER:--version-script=${CRANK_PLUGIN_VERSION_SCRIPT}")
        set_property(TARGET ${target} APPEND PROPERTY LINK_DEPENDS "${CRANK_PLUGIN_VERSION_SCRIPT}")
    endif()
endfunction()
