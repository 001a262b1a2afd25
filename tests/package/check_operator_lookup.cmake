# Fails when a record's operator==, operator!= or operator<< is declared at
# namespace scope in keyhook instead of as a hidden friend (docs/design.md,
# "Headers"): ordinary lookup would find it, and every comparison or
# insertion in keyhook's code would weigh it. Compiles a probe that compares
# and prints a type with no operators inside namespace keyhook; the compile
# fails, and the compiler's list of candidates must name no keyhook operator
# but the two templates (named enums, result<T>).
# Arguments: CXX, INCLUDE (keyhook's include directory), WORK (a scratch directory).
file(MAKE_DIRECTORY "${WORK}")
set(_probe "${WORK}/operator_lookup_probe.cpp")
file(WRITE "${_probe}" "#include \"keyhook/keyhook.hpp\"
#include <ostream>
namespace keyhook {
struct lookup_probe {};
inline bool probe_equal(lookup_probe a) { return a == a; }
inline bool probe_unequal(lookup_probe a) { return a != a; }
inline void probe_print(std::ostream& os, lookup_probe a) { os << a; }
}  // namespace keyhook
")
execute_process(COMMAND "${CXX}" -std=c++17 -fsyntax-only "-I${INCLUDE}" "${_probe}"
                RESULT_VARIABLE _rc OUTPUT_VARIABLE _out ERROR_VARIABLE _err)
if(_rc EQUAL 0)
    message(FATAL_ERROR "the probe compiled: a keyhook operator accepts any type")
endif()
if(NOT _err MATCHES "candidate")
    message(STATUS "this compiler lists no candidates; nothing to check")
    return()
endif()
string(REPLACE "\n" ";" _lines "${_err}")
set(_visible)
foreach(_line IN LISTS _lines)
    if(_line MATCHES "candidate" AND _line MATCHES "keyhook::operator(==|!=|<<)" AND NOT _line MATCHES "template")
        list(APPEND _visible "${_line}")
    endif()
endforeach()
if(_visible)
    list(JOIN _visible "\n" _visible)
    message(FATAL_ERROR "keyhook operators found by ordinary lookup (make them hidden friends):\n${_visible}")
endif()
message(STATUS "no record operator of keyhook is found by ordinary lookup")
