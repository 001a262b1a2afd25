# One step of a compile-fail test, with the compiler and flags of the build
# (FLAGS_FILE) and -fsyntax-only:
#   CASE=0  the positive control, SOURCE's legal path: must compile. It proves
#           the command line and the file sound, so a typo or a missing
#           include cannot pass for a refusal (the cases depend on it).
#   CASE=n  must fail, with a diagnostic matching EXPECT: the intended refusal.
#   cmake -DCXX=... -DFLAGS_FILE=... -DSOURCE=... -DCASE=n "-DEXPECT=regex" -P run_compile_fail.cmake
#   EDITS=file.cmake (optional): a script that writes edited copies of
#           keyhook's own headers for case CASE under EDITED_INCLUDE, which is
#           searched before the include directory (tests an edit of a real
#           record, such as a member added to webhook and not to its table).
include("${FLAGS_FILE}")  # sets KEYHOOK_COMPILE_FAIL_FLAGS

set(_edited)
if(EDITS)
    get_filename_component(_stem "${SOURCE}" NAME_WE)
    set(EDITED_INCLUDE "${CMAKE_CURRENT_BINARY_DIR}/edited_include/${_stem}.${CASE}")
    set(KEYHOOK_INCLUDE "${CMAKE_CURRENT_LIST_DIR}/../../include")
    file(REMOVE_RECURSE "${EDITED_INCLUDE}")
    include("${EDITS}")
    set(_edited "-I${EDITED_INCLUDE}")
endif()

# LC_ALL=C: plain quotes in the diagnostics, whatever the locale.
execute_process(
    COMMAND "${CMAKE_COMMAND}" -E env LC_ALL=C LANG=C
            "${CXX}" ${_edited} ${KEYHOOK_COMPILE_FAIL_FLAGS} -fsyntax-only "-DKEYHOOK_COMPILE_FAIL_CASE=${CASE}" "${SOURCE}"
    RESULT_VARIABLE rc OUTPUT_VARIABLE text ERROR_VARIABLE text)

if(CASE EQUAL 0)
    if(NOT rc EQUAL 0)
        message(FATAL_ERROR "positive control: ${SOURCE} with KEYHOOK_COMPILE_FAIL_CASE=0 must compile, "
                            "but does not:\n${text}")
    endif()
    message(STATUS "the positive control compiles")
    return()
endif()
if(rc EQUAL 0)
    message(FATAL_ERROR "${SOURCE} with KEYHOOK_COMPILE_FAIL_CASE=${CASE} compiled; it must not")
endif()
if(NOT text MATCHES "${EXPECT}")
    message(FATAL_ERROR "${SOURCE} with KEYHOOK_COMPILE_FAIL_CASE=${CASE} failed, but not with the expected "
                        "diagnostic (regex: ${EXPECT}):\n${text}")
endif()
message(STATUS "case ${CASE} refused as expected")
