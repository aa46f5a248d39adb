# Rooms: a folder whose library has a public face (the headers listed) and private headers that
# only the folders named in VISIBLE_TO may include, tests/ excepted (unit tests are white-box).
# The rule is checked on every build (target crank_rooms_check, part of ALL, a dependency of each
# room's library), so that an include across the line fails the build, not a review:
#
#   crank_room(crank_mcp_modern DIR mcp/modern VISIBLE_TO host/mcp/modern
#              PUBLIC modern_transport.h protocol_era.h)
#
# DIR is the folder as includes name it (relative to host/); VISIBLE_TO are paths relative to the
# source root.

define_property(GLOBAL PROPERTY CRANK_ROOMS BRIEF_DOCS "rooms" FULL_DOCS "crank_room() entries")

function(crank_room target)
    cmake_parse_arguments(ROOM "" "DIR" "VISIBLE_TO;PUBLIC" ${ARGN})
    if(NOT ROOM_DIR OR NOT ROOM_VISIBLE_TO)
        message(FATAL_ERROR "crank_room(${target}): DIR and VISIBLE_TO are required")
    endif()
    list(JOIN ROOM_VISIBLE_TO "," visible)
    list(JOIN ROOM_PUBLIC "," public)
    set_property(GLOBAL APPEND PROPERTY CRANK_ROOMS "${target}|${ROOM_DIR}|${visible}|${public}")
    set_property(GLOBAL APPEND PROPERTY CRANK_ROOM_TARGETS "${target}")
endfunction()

# Called once, after every room is declared: writes the table and the check.
function(crank_check_rooms)
    get_property(rooms GLOBAL PROPERTY CRANK_ROOMS)
    get_property(targets GLOBAL PROPERTY CRANK_ROOM_TARGETS)
    set(table "${PROJECT_BINARY_DIR}/rooms/rooms.txt")
    list(JOIN rooms "\n" text)
    file(WRITE "${table}.in" "${text}\n")
    configure_file("${table}.in" "${table}" COPYONLY)
    file(GLOB_RECURSE sources CONFIGURE_DEPENDS RELATIVE "${PROJECT_SOURCE_DIR}"
         "${PROJECT_SOURCE_DIR}/host/*.h" "${PROJECT_SOURCE_DIR}/host/*.cpp"
         "${PROJECT_SOURCE_DIR}/plugins/*.h" "${PROJECT_SOURCE_DIR}/plugins/*.cpp"
         "${PROJECT_SOURCE_DIR}/sdk/*.h" "${PROJECT_SOURCE_DIR}/sdk/*.cpp"
         "${PROJECT_SOURCE_DIR}/bench/*.h" "${PROJECT_SOURCE_DIR}/bench/*.cpp"
         "${PROJECT_SOURCE_DIR}/examples/*.h" "${PROJECT_SOURCE_DIR}/examples/*.cpp")
    set(list_file "${PROJECT_BINARY_DIR}/rooms/sources.txt")
    list(JOIN sources "\n" source_text)
    file(WRITE "${list_file}.in" "${source_text}\n")
    configure_file("${list_file}.in" "${list_file}" COPYONLY)
    list(TRANSFORM sources PREPEND "${PROJECT_SOURCE_DIR}/" OUTPUT_VARIABLE absolute)
    set(stamp "${PROJECT_BINARY_DIR}/rooms/checked.stamp")
    add_custom_command(
        OUTPUT "${stamp}"
        COMMAND "${CMAKE_COMMAND}" "-DROOT=${PROJECT_SOURCE_DIR}" "-DTABLE=${table}"
                "-DSOURCES=${list_file}" "-DSTAMP=${stamp}"
                -P "${PROJECT_SOURCE_DIR}/cmake/check_rooms.cmake"
        DEPENDS "${PROJECT_SOURCE_DIR}/cmake/check_rooms.cmake" "${table}" "${list_file}"
                ${absolute}
        COMMENT "Checking that no file includes a room's private header"
        VERBATIM)
    add_custom_target(crank_rooms_check ALL DEPENDS "${stamp}")
    foreach(target IN LISTS targets)
        add_dependencies(${target} crank_rooms_check)
    endforeach()
endfunction()
