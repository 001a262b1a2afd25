# Test cases are named after the behaviour they prove, not after the review
# that found it (issue 21 item 7): no TEST_CASE or SECTION name under tests/
# mentions a "finding". Where a test came from goes in a comment.
#   cmake -DSOURCE_DIR=<repository> -P tests/docs/check_test_names.cmake
cmake_minimum_required(VERSION 3.21)
if(NOT SOURCE_DIR)
    message(FATAL_ERROR "usage: cmake -DSOURCE_DIR=<repository> -P ${CMAKE_CURRENT_LIST_FILE}")
endif()
file(GLOB_RECURSE _sources "${SOURCE_DIR}/tests/*.cpp" "${SOURCE_DIR}/tests/*.hpp")
set(_bad)
foreach(_file IN LISTS _sources)
    file(STRINGS "${_file}" _lines REGEX "(TEST_CASE|SECTION|TEMPLATE_TEST_CASE)[ ]*\\(\"[^\"]*[Ff]inding")
    foreach(_line IN LISTS _lines)
        file(RELATIVE_PATH _rel "${SOURCE_DIR}" "${_file}")
        string(STRIP "${_line}" _line)
        list(APPEND _bad "${_rel}: ${_line}")
    endforeach()
endforeach()
if(_bad)
    list(JOIN _bad "\n  " _text)
    message(FATAL_ERROR "test names that cite review history instead of behaviour:\n  ${_text}")
endif()
list(LENGTH _sources _n)
message(STATUS "test names: ${_n} files, none names a finding")
