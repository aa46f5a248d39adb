cmake_minimum_required(VERSION 3.25)
# cmake -P script of crank_check_rooms() (CrankRooms.cmake): fails when a source includes a
# private header of a room from outside the folders the room names.
#
# An include is resolved as the compiler would find it in this tree: a quoted one against the
# including file's folder first, then against host/ (the include root every target has), an
# angled one against host/; then normalised ("../modern/x.h", "mcp//modern/x.h" and
# <mcp/modern/x.h> all name host/mcp/modern/x.h). The file belongs to the room whose folder is
# the longest prefix of its own, so a new subfolder of a room is the room's (private unless
# listed: "detail/x.h"). The rule reads direct includes: a public header that includes a private
# one shares it with its includers, which is for the room to decide.
file(STRINGS "${TABLE}" rooms)
file(STRINGS "${SOURCES}" sources)
set(failures "")
foreach(source IN LISTS sources)
    if(source STREQUAL "")
        continue()
    endif()
    get_filename_component(source_dir "${ROOT}/${source}" DIRECTORY)
    file(STRINGS "${ROOT}/${source}" includes REGEX "^[ \t]*#[ \t]*include[ \t]*[<\"][^\">]+[\">]")
    foreach(line IN LISTS includes)
        string(REGEX REPLACE "^[ \t]*#[ \t]*include[ \t]*([<\"])([^\">]+)[\">].*$" "\\1" quote
                             "${line}")
        string(REGEX REPLACE "^[ \t]*#[ \t]*include[ \t]*([<\"])([^\">]+)[\">].*$" "\\2" header
                             "${line}")
        set(resolved "")
        if(quote STREQUAL "\"" AND EXISTS "${source_dir}/${header}")
            set(resolved "${source_dir}/${header}")
        elseif(EXISTS "${ROOT}/host/${header}")
            set(resolved "${ROOT}/host/${header}")
        endif()
        if(resolved STREQUAL "")
            continue()  # a system or SDK header
        endif()
        cmake_path(NORMAL_PATH resolved)
        file(RELATIVE_PATH path "${ROOT}/host" "${resolved}")
        if(path MATCHES "^\\.\\./")
            continue()  # outside host/: no room
        endif()
        # The room with the longest folder that holds the file.
        set(best "")
        set(best_length -1)
        foreach(room IN LISTS rooms)
            string(REPLACE "|" ";" fields "${room}")
            list(GET fields 1 room_dir)
            string(LENGTH "${room_dir}" length)
            string(FIND "${path}" "${room_dir}/" at)
            if(at EQUAL 0 AND length GREATER best_length)
                set(best "${room}")
                set(best_length ${length})
            endif()
        endforeach()
        if(best STREQUAL "")
            continue()
        endif()
        string(REPLACE "|" ";" fields "${best}")
        list(LENGTH fields count)
        list(GET fields 0 target)
        list(GET fields 1 room_dir)
        list(GET fields 2 visible_text)
        string(REPLACE "," ";" visible "${visible_text}")
        set(public "")
        if(count GREATER 3)
            list(GET fields 3 public_text)
            string(REPLACE "," ";" public "${public_text}")
        endif()
        string(LENGTH "${room_dir}/" skip)
        string(SUBSTRING "${path}" ${skip} -1 name)
        if(name IN_LIST public)
            continue()
        endif()
        set(allowed FALSE)
        foreach(prefix IN LISTS visible)
            string(FIND "${source}" "${prefix}/" at)
            if(at EQUAL 0)
                set(allowed TRUE)
            endif()
        endforeach()
        if(NOT allowed)
            list(JOIN visible ", " visible_list)
            list(JOIN public ", " public_list)
            string(APPEND failures
                   "  ${source} includes ${header} (host/${path}), private to ${target} "
                   "(visible to ${visible_list}; its public headers: ${public_list})\n")
        endif()
    endforeach()
endforeach()
if(failures)
    message(FATAL_ERROR "A room's private header is included from outside the room:\n"
                        "${failures}Include a public header, or move the code into the room.")
endif()
file(TOUCH "${STAMP}")
