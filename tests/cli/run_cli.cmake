# Runs a command line program once and checks what it did:
#   -DEXE=program -DARGS=a|b|c       arguments, separated by '|'
#   -DSTDIN=file                     standard input (else nothing)
#   -DEXIT=n                         the exit code expected
#   -DSTDOUT_FILE=file               standard output must equal this file, byte for byte
#   -DSTDOUT_REGEX=re -DSTDERR_REGEX=re   must match
#   -DSTDOUT_EMPTY=ON                nothing may be written to standard output
string(REPLACE "|" ";" _args "${ARGS}")
if(NOT STDIN)
    # An empty input, never the terminal or CI's closed standard input.
    set(STDIN "${CMAKE_CURRENT_LIST_DIR}/data/empty.txt")
endif()
execute_process(COMMAND "${EXE}" ${_args}
    INPUT_FILE "${STDIN}"
    RESULT_VARIABLE _exit
    OUTPUT_VARIABLE _out
    ERROR_VARIABLE _err)

set(_failures)
if(NOT "${_exit}" STREQUAL "${EXIT}")
    list(APPEND _failures "exit code ${_exit}, expected ${EXIT}")
endif()
if(STDOUT_FILE)
    file(READ "${STDOUT_FILE}" _expected)
    if(NOT _out STREQUAL _expected)
        list(APPEND _failures "standard output differs from ${STDOUT_FILE}")
    endif()
endif()
if(STDOUT_REGEX AND NOT _out MATCHES "${STDOUT_REGEX}")
    list(APPEND _failures "standard output does not match '${STDOUT_REGEX}'")
endif()
if(STDERR_REGEX AND NOT _err MATCHES "${STDERR_REGEX}")
    list(APPEND _failures "standard error does not match '${STDERR_REGEX}'")
endif()
if(STDOUT_EMPTY AND NOT _out STREQUAL "")
    list(APPEND _failures "standard output is not empty")
endif()

if(_failures)
    string(REPLACE ";" "\n  " _failures "${_failures}")
    message(FATAL_ERROR "${EXE} ${_args}\n  ${_failures}\n--- stdout ---\n${_out}--- stderr ---\n${_err}")
endif()
