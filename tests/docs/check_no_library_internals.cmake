# The programs under examples/ use keyhook's public API only, as a host would:
# whatever they need from the library, a host needs too, so it is public and
# documented (or the program keeps its own small copy). Refused, in every C++
# file under examples/ (comments included), each reported as file:line:
#   - keyhook's internal namespace: `keyhook::detail` (also `::keyhook::detail`,
#     `keyhook::crypto::detail`, and a namespace alias of it such as
#     `namespace kd = keyhook::detail;`);
#   - `alias::detail` where alias names a keyhook namespace
#     (`namespace kh = keyhook;` then `kh::detail::...`);
#   - an internal header: `#include "keyhook/detail/..."` or
#     `<keyhook/.../detail/...>`;
#   - a using-directive for a keyhook namespace (`using namespace keyhook;`,
#     `using namespace keyhook::crypto;`, or for an alias of one), which lets
#     `detail::` through unqualified. Use using-declarations
#     (`using keyhook::parse_timestamp;`) or an alias (`namespace kh = keyhook;`).
# A program's own `detail` namespace (`key_audit::detail`) is not keyhook's and
# passes.
#   cmake -DSOURCE_DIR=<repository> -P tests/docs/check_no_library_internals.cmake
#   cmake -DEXAMPLES_DIR=<directory> -P tests/docs/check_no_library_internals.cmake
cmake_minimum_required(VERSION 3.21)
if(NOT EXAMPLES_DIR)
    if(NOT SOURCE_DIR)
        message(FATAL_ERROR "usage: cmake -DSOURCE_DIR=<repository> -P ${CMAKE_CURRENT_LIST_FILE}\n"
                            "   or: cmake -DEXAMPLES_DIR=<directory> -P ${CMAKE_CURRENT_LIST_FILE}")
    endif()
    set(EXAMPLES_DIR "${SOURCE_DIR}/examples")
endif()
get_filename_component(EXAMPLES_DIR "${EXAMPLES_DIR}" ABSOLUTE)
if(NOT IS_DIRECTORY "${EXAMPLES_DIR}")
    message(FATAL_ERROR "no directory ${EXAMPLES_DIR}")
endif()

set(_globs)
foreach(_ext IN ITEMS hpp cpp h hh hxx cc cxx ipp inl tpp)
    list(APPEND _globs "${EXAMPLES_DIR}/*.${_ext}")
endforeach()
file(GLOB_RECURSE _files ${_globs})
list(SORT _files)

# CMake lists split on ';' (and treat '\', '[' and ']' specially): those bytes
# are swapped for control characters while the file is cut into lines, so
# that element N of the list is line N + 1, and swapped back for the report.
string(ASCII 1 _semi)
string(ASCII 2 _backslash)
string(ASCII 3 _open)
string(ASCII 4 _close)

set(_id "[A-Za-z_][A-Za-z0-9_]*")
set(_not_id "([^A-Za-z0-9_]|$)")
set(_sep "[ \t]*::[ \t]*")
# keyhook, then any nested namespaces, then detail.
set(_qualified "(^|[^A-Za-z0-9_])keyhook(${_sep}${_id})*${_sep}detail${_not_id}")
set(_include "^[ \t]*#[ \t]*include[ \t]*[<\"]keyhook/(${_id}/)*detail/")
set(_using "using[ \t]+namespace[ \t]+(::[ \t]*)?keyhook${_not_id}")
set(_alias "namespace[ \t]+(${_id})[ \t]*=[ \t]*(::[ \t]*)?keyhook${_not_id}")

# The lines of a file, one list element each (element N is line N + 1).
function(read_lines file out)
    file(READ "${file}" _text)
    string(REPLACE "\r" "" _text "${_text}")
    string(REPLACE "\\" "${_backslash}" _text "${_text}")
    string(REPLACE ";" "${_semi}" _text "${_text}")
    string(REPLACE "[" "${_open}" _text "${_text}")
    string(REPLACE "]" "${_close}" _text "${_text}")
    string(REPLACE "\n" ";" _text "${_text}")
    set(${out} "${_text}" PARENT_SCOPE)
endfunction()

# The aliases given to keyhook's namespaces in any file (namespace kh =
# keyhook;): a header's alias reaches every file that includes it.
set(_aliases)
foreach(_file IN LISTS _files)
    read_lines("${_file}" _lines)
    foreach(_line IN LISTS _lines)
        if(_line MATCHES "${_alias}")
            list(APPEND _aliases "${CMAKE_MATCH_1}")
        endif()
    endforeach()
endforeach()
set(_via_alias)
if(_aliases)
    list(REMOVE_DUPLICATES _aliases)
    list(JOIN _aliases "|" _names)
    set(_via_alias "(^|[^A-Za-z0-9_:])(${_names})${_sep}detail${_not_id}"
                   "using[ \t]+namespace[ \t]+(${_names})[ \t]*(${_semi}|$)")
    list(JOIN _via_alias "|" _via_alias)
endif()

set(_bad)
set(_lines_read 0)
foreach(_file IN LISTS _files)
    read_lines("${_file}" _lines)
    file(RELATIVE_PATH _rel "${EXAMPLES_DIR}" "${_file}")
    set(_n 0)
    foreach(_line IN LISTS _lines)
        math(EXPR _n "${_n} + 1")
        set(_why)
        if(_line MATCHES "${_include}")
            set(_why "includes an internal header")
        elseif(_line MATCHES "${_qualified}")
            set(_why "names keyhook::detail")
        elseif(_line MATCHES "${_using}")
            set(_why "opens a keyhook namespace (using namespace)")
        elseif(_via_alias AND _line MATCHES "${_via_alias}")
            set(_why "reaches keyhook::detail through an alias")
        endif()
        if(_why)
            string(STRIP "${_line}" _shown)
            list(APPEND _bad "examples/${_rel}:${_n}: ${_why}: ${_shown}")
        endif()
    endforeach()
    math(EXPR _lines_read "${_lines_read} + ${_n}")
endforeach()

list(LENGTH _files _count)
if(_bad)
    list(LENGTH _bad _offences)
    list(JOIN _bad "\n  " _report)
    string(REPLACE "${_semi}" ";" _report "${_report}")
    string(REPLACE "${_backslash}" "\\" _report "${_report}")
    string(REPLACE "${_open}" "[" _report "${_report}")
    string(REPLACE "${_close}" "]" _report "${_report}")
    message(FATAL_ERROR "${_offences} line(s) under examples/ reach into keyhook's internals "
                        "(use the public API, or keep a small copy in the program):\n  ${_report}")
endif()
message(STATUS "examples use the public API only: ${_count} files, ${_lines_read} lines read")
