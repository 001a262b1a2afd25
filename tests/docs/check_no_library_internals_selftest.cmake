# check_no_library_internals.cmake against planted files: each way of reaching
# keyhook's internals is refused and reported as file:line, and the forms a
# program may use (its own detail namespace, using-declarations, an alias of
# keyhook::crypto, public headers) pass.
#   cmake -DWORK_DIR=<scratch directory> -P tests/docs/check_no_library_internals_selftest.cmake
cmake_minimum_required(VERSION 3.21)
if(NOT WORK_DIR)
    message(FATAL_ERROR "usage: cmake -DWORK_DIR=<scratch directory> -P ${CMAKE_CURRENT_LIST_FILE}")
endif()
get_filename_component(_check "${CMAKE_CURRENT_LIST_DIR}/check_no_library_internals.cmake" ABSOLUTE)
set(_root "${WORK_DIR}/no_library_internals")
file(REMOVE_RECURSE "${_root}")

# Lines every planted file starts with: ';', '\', '[' and ']' that must not
# shift the line numbers the check reports (the offender is on line 6).
set(_preamble "// keyhook: a planted file\n#define TWO_LINES(x) \\\n    do { x; } while (0)\nint table[3] = {1, 2, 3};\n\n")
set(_line 6)

set(_failures)
set(_case 0)

# run_check(<name> <expected: pass|fail> <file> <text> [<file> <text>]...);
# <semi> in a text stands for ';' (which would split the argument list).
function(run_check name expected)
    set(_dir "${_root}/${name}")
    set(_args ${ARGN})
    list(LENGTH _args _n)
    math(EXPR _last "${_n} - 1")
    foreach(_i RANGE 0 ${_last} 2)
        math(EXPR _j "${_i} + 1")
        list(GET _args ${_i} _file)
        list(GET _args ${_j} _text)
        string(REPLACE "<semi>" ";" _text "${_text}")
        file(WRITE "${_dir}/${_file}" "${_preamble}${_text}\n")
    endforeach()
    execute_process(COMMAND "${CMAKE_COMMAND}" -DEXAMPLES_DIR=${_dir} -P "${_check}"
                    RESULT_VARIABLE _rc OUTPUT_VARIABLE _out ERROR_VARIABLE _err)
    set(_ok TRUE)
    if(expected STREQUAL "pass" AND NOT _rc EQUAL 0)
        set(_ok FALSE)
    elseif(expected STREQUAL "fail")
        list(GET _args 0 _first)
        if(_rc EQUAL 0 OR NOT _err MATCHES "examples/${_first}:${_line}: ")
            set(_ok FALSE)
        endif()
    endif()
    if(NOT _ok)
        set(_failures "${_failures}\n  ${name}: expected ${expected}, exit ${_rc}:\n${_out}${_err}" PARENT_SCOPE)
    endif()
endfunction()

# Each pattern refused, on line 6 of the first file.
run_check(qualified fail main.cpp "auto q = keyhook::detail::quote_input(\"x\")<semi>")
run_check(using_declaration fail main.cpp "using keyhook::detail::quote_input<semi>")
run_check(spaced_global fail main.cpp "auto q = ::keyhook :: detail :: quote_input(\"x\")<semi>")
run_check(nested_namespace fail main.cpp "keyhook::crypto::detail::something()<semi>")
run_check(alias_of_detail fail tool.hpp "namespace kd = keyhook::detail<semi>")
run_check(include_quoted fail main.cpp "#include \"keyhook/detail/utf8.hpp\"")
run_check(include_angled fail main.cpp "#  include <keyhook/crypto/detail/key_rotation_table.hpp>")
run_check(using_directive fail main.cpp "    using namespace keyhook<semi>")
run_check(using_directive_nested fail main.cpp "using namespace ::keyhook::crypto<semi>")
run_check(alias_then_detail fail main.cpp "auto w = kh::detail::secure_wipe<semi>" shared.hpp "namespace kh = keyhook<semi>")
run_check(alias_then_using fail main.cpp "using namespace kh<semi>" shared.hpp "namespace kh = ::keyhook<semi>")
run_check(in_a_comment fail main.cpp "// keyhook::detail::path_member would do")

# What a program may write.
run_check(public_only pass main.cpp
          "#include \"keyhook/escape.hpp\"
#include \"keyhook/crypto/signing.hpp\"
namespace detail { inline int own() { return 1<semi> } }
namespace kc = keyhook::crypto<semi>
namespace kh = keyhook<semi>
using keyhook::quoted_input<semi>
using kc::sign_webhook<semi>
int a = detail::own() + key_audit::detail::width()<semi>
auto b = kh::json_path_member(\"a\", \"b\")<semi>
int my_keyhook_detail = 0<semi> auto c = my_keyhook::detail::x<semi> auto d = keyhook::details<semi>
using namespace std::chrono<semi>")

if(_failures)
    message(FATAL_ERROR "check_no_library_internals.cmake did not behave:${_failures}")
endif()
message(STATUS "check_no_library_internals.cmake refuses each planted pattern and passes the public forms")
