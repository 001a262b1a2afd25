# Test cases, comments and docs name the concept or the rule id (docs/rules.md)
# they are about, not the review that found it: no tracker ships with the
# repository, so "issue 14 item 5" or "outside finding 10" tells a reader
# nothing. Refused, in every text file under include/, examples/, docs/,
# scripts/, benchmarks/, fuzz/ and tests/ and in README.md (CHANGELOG.md is the
# one place for history):
#   - "issue N" / "issues N", "item N" / "items N" (N a number)
#   - "finding N", "findings N", "finding FN", "outside finding",
#     "review finding", "finding hostile-N"
#   - a TEST_CASE, TEMPLATE_TEST_CASE or SECTION name that mentions a finding.
# A fuzzer's "no finding" (nothing crashed) is a different sense and passes.
#   cmake -DSOURCE_DIR=<repository> -P tests/docs/check_test_names.cmake
cmake_minimum_required(VERSION 3.21)
if(NOT SOURCE_DIR)
    message(FATAL_ERROR "usage: cmake -DSOURCE_DIR=<repository> -P ${CMAKE_CURRENT_LIST_FILE}")
endif()
get_filename_component(SOURCE_DIR "${SOURCE_DIR}" ABSOLUTE)

set(_globs)
foreach(_dir IN ITEMS include examples docs scripts benchmarks fuzz tests)
    foreach(_ext IN ITEMS hpp ipp cpp h md cmake txt py sh js)
        list(APPEND _globs "${SOURCE_DIR}/${_dir}/*.${_ext}")
    endforeach()
endforeach()
file(GLOB_RECURSE _files ${_globs})
list(APPEND _files "${SOURCE_DIR}/README.md")
list(FILTER _files EXCLUDE REGEX "/CHANGELOG\\.md$")
# This file names the patterns it refuses.
list(REMOVE_ITEM _files "${CMAKE_CURRENT_LIST_FILE}")

# CMake regular expressions have no case-insensitive mode: each letter is a class.
set(_b "(^|[^A-Za-z])")
set(_issue "[Ii][Ss][Ss][Uu][Ee][Ss]?")
set(_item "[Ii][Tt][Ee][Mm][Ss]?")
set(_finding "[Ff][Ii][Nn][Dd][Ii][Nn][Gg][Ss]?")
set(_history
    "${_b}${_issue} #?[0-9]"
    "${_b}${_item} #?[0-9]"
    "${_b}${_finding} [Ff]?[0-9]"
    "${_b}${_finding} [Hh][Oo][Ss][Tt][Ii][Ll][Ee]-"
    "${_b}[Oo][Uu][Tt][Ss][Ii][Dd][Ee] ${_finding}"
    "${_b}[Rr][Ee][Vv][Ii][Ee][Ww] ${_finding}")
list(JOIN _history "|" _history)
set(_name "(TEST_CASE|SECTION|TEMPLATE_TEST_CASE)[ ]*\\(\"[^\"]*[Ff]inding")

set(_bad)
foreach(_file IN LISTS _files)
    file(STRINGS "${_file}" _lines REGEX "${_history}|${_name}")
    foreach(_line IN LISTS _lines)
        file(RELATIVE_PATH _rel "${SOURCE_DIR}" "${_file}")
        string(STRIP "${_line}" _line)
        list(APPEND _bad "${_rel}: ${_line}")
    endforeach()
endforeach()
if(_bad)
    list(JOIN _bad "\n  " _text)
    message(FATAL_ERROR "test names, comments or docs that cite review history (\"issue N\", \"item N\", "
                        "a finding) instead of the concept or rule id:\n  ${_text}")
endif()
list(LENGTH _files _n)
message(STATUS "review history: ${_n} files, none cites an issue, an item or a finding")
