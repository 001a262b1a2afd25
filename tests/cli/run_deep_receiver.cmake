# Input-controlled recursion: webhook_receiver crashed (signal 11) on a request whose
# body is a JSON array nested 100,000 deep: dump() recursed. Runs the program
# on such a request, the body given as a JSON value and as a string, and
# expects a refusal (exit 1, limit_exceeded), never a crash.
#   cmake -DEXE=<webhook_receiver> -DWORK=<dir> -P run_deep_receiver.cmake
string(REPEAT "[" 100000 _open)
string(REPEAT "]" 100000 _close)
file(MAKE_DIRECTORY "${WORK}")
file(WRITE "${WORK}/deep_value.json"
     "{\"method\":\"POST\",\"url\":\"/hook?api_key=k-123\",\"body\":${_open}${_close}}")
file(WRITE "${WORK}/deep_string.json"
     "{\"method\":\"POST\",\"url\":\"/hook?api_key=k-123\",\"body\":\"${_open}${_close}\"}")
foreach(_case deep_value deep_string)
    execute_process(COMMAND "${CMAKE_COMMAND}" -E env KEYHOOK_RECEIVER_KEY=k-123 "${EXE}" "${WORK}/${_case}.json"
                    RESULT_VARIABLE _code OUTPUT_VARIABLE _out ERROR_VARIABLE _err)
    if(NOT _code STREQUAL "1")
        message(FATAL_ERROR "${_case}: exit ${_code}, expected 1\nstdout: ${_out}\nstderr: ${_err}")
    endif()
    if(NOT _out MATCHES "limit_exceeded")
        message(FATAL_ERROR "${_case}: no limit_exceeded in the output\nstdout: ${_out}")
    endif()
    message(STATUS "${_case}: refused: ${_out}")
endforeach()
