# Runs an example on INPUT and fails when its output (standard output and
# error) holds a raw control character (C0 other than the LF that ends its own
# lines, DEL, C1), a bidirectional control, U+2028/U+2029, or a line that the
# input forged (one beginning "FORGED").
#   -DEXE=<program> -DINPUT=<file> -DEXPECT_EXIT=<status>
set(ENV{KEYHOOK_RECEIVER_KEY} "5b0f3c9e-2d7a-4f61-8e4b-9c2a1d0e7f36")
get_filename_component(_name "${INPUT}" NAME_WE)
set(_out_file "${CMAKE_CURRENT_BINARY_DIR}/${_name}.out")
execute_process(COMMAND "${EXE}" "${INPUT}" RESULT_VARIABLE _status OUTPUT_FILE "${_out_file}"
                ERROR_FILE "${_out_file}.err")
file(READ "${_out_file}" _text)
file(READ "${_out_file}.err" _err)
set(_report "\n--- output ---\n${_text}\n--- error ---\n${_err}")
if(NOT _status STREQUAL EXPECT_EXIT)
    message(FATAL_ERROR "exit status ${_status}, expected ${EXPECT_EXIT}${_report}")
endif()
if(_text STREQUAL "")
    message(FATAL_ERROR "no output${_report}")
endif()
foreach(_f IN ITEMS "${_out_file}" "${_out_file}.err")
    file(READ "${_f}" _hex HEX)
    # One byte per list element, so that a match is always on a byte boundary.
    string(REGEX REPLACE "(..)" "\\1;" _bytes "${_hex}")
    string(REGEX REPLACE "(..)" " \\1" _spaced "${_hex}")
    set(_spaced "${_spaced} ")
    foreach(_b IN LISTS _bytes)
        if(_b STREQUAL "")
            continue()
        endif()
        if(_b MATCHES "^[01][0-9a-f]$" AND NOT _b STREQUAL "0a")
            message(FATAL_ERROR "raw control byte 0x${_b} in ${_f}${_report}")
        endif()
        if(_b STREQUAL "7f")
            message(FATAL_ERROR "raw DEL in ${_f}${_report}")
        endif()
    endforeach()
    # C1 (c2 80 to c2 9f), U+061C, U+200E, U+200F, U+2028 to U+202E, U+2066 to U+2069.
    if(_spaced MATCHES " c2 [89][0-9a-f] " OR _spaced MATCHES " d8 9c " OR _spaced MATCHES " e2 80 (8e|8f|a[89a-e]) "
       OR _spaced MATCHES " e2 81 (a6|a7|a8|a9) ")
        message(FATAL_ERROR "raw C1 or bidirectional control in ${_f}: ${CMAKE_MATCH_0}${_report}")
    endif()
endforeach()
if(_text MATCHES "(^|\n)FORGED" OR _err MATCHES "(^|\n)FORGED")
    message(FATAL_ERROR "a line forged by the input reached the output${_report}")
endif()
if(NOT _text MATCHES "FORGED")
    message(FATAL_ERROR "the escaped input is missing from the output${_report}")
endif()
message(STATUS "no raw control in the output of ${_name}")
