# Warning flags for keyhook's own tests, examples, benchmarks and fuzzers (never
# put on the INTERFACE targets that users link).
function(keyhook_set_warnings target)
    if(MSVC)
        target_compile_options(${target} PRIVATE /W4 /permissive-)
        if(KEYHOOK_WERROR)
            target_compile_options(${target} PRIVATE /WX)
        endif()
    else()
        target_compile_options(${target} PRIVATE
            -Wall -Wextra -Wpedantic -Wshadow -Wconversion -Wnon-virtual-dtor
            -Wold-style-cast -Woverloaded-virtual -Wimplicit-fallthrough)
        if(KEYHOOK_WERROR)
            target_compile_options(${target} PRIVATE -Werror)
        endif()
    endif()
endfunction()

# KEYHOOK_TEST_OPTIONS (the asan preset's -O0) on one of keyhook's own tests or
# programs: its own code compiles several times faster unoptimized under the
# sanitizers, while keyhook::compiled keeps the build's -O1. A function inline
# in both (nlohmann's, the standard library's) is linked once, from the object
# the linker reads first, and a target's own objects come first on the command
# line: the library then ran on their unoptimized copies. So an executable
# reads the compiled library first (--whole-archive ahead of its objects) and
# the optimized copies win. `scope` is PUBLIC for a target others build on;
# COMPILE_ONLY for one that does not link keyhook::compiled (a header-only
# driver, an object library of compile checks).
function(keyhook_apply_test_options target scope)
    cmake_parse_arguments(ARG "COMPILE_ONLY" "" "" ${ARGN})
    if(NOT KEYHOOK_TEST_OPTIONS)
        return()
    endif()
    separate_arguments(_options UNIX_COMMAND "${KEYHOOK_TEST_OPTIONS}")
    target_compile_options(${target} ${scope} ${_options})
    get_target_property(_type ${target} TYPE)
    if(NOT ARG_COMPILE_ONLY AND KEYHOOK_TEST_COMPILED AND CMAKE_CXX_COMPILER_ID MATCHES "GNU|Clang" AND NOT APPLE)
        set(_first "$<TARGET_FILE:keyhook_compiled>")
        if(TARGET keyhook_crypto_compiled)
            list(APPEND _first "$<TARGET_FILE:keyhook_crypto_compiled>")
        endif()
        if(_type STREQUAL "EXECUTABLE")
            target_link_options(${target} PRIVATE "LINKER:--whole-archive" ${_first} "LINKER:--no-whole-archive")
        elseif(scope STREQUAL "PUBLIC")
            target_link_options(${target} INTERFACE "LINKER:--whole-archive" ${_first} "LINKER:--no-whole-archive")
        endif()
    endif()
endfunction()

# keyhook::compiled, and keyhook::crypto_compiled when it is built: what a test
# or program of a KEYHOOK_TEST_COMPILED tree links instead of the header-only
# definitions.
function(keyhook_link_compiled target scope)
    target_link_libraries(${target} ${scope} keyhook::compiled)
    if(TARGET keyhook::crypto_compiled)
        target_link_libraries(${target} ${scope} keyhook::crypto_compiled)
    endif()
endfunction()
