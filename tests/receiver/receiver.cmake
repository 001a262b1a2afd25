# Tests of webhook_receiver --listen and of the server under it
# (examples/shared/http_server, rule H13; the replay table, H9). Included from
# examples/CMakeLists.txt once the programs and Boost.Beast are known.
#
#   keyhook_receiver_tests   Catch2: the raw header checks, the server over
#                            loopback sockets, the replay table (in memory;
#                            in a SQLite store when SQLite is found)
#   keyhook_metrics_tests    Catch2: the programs' metrics and health
#                            (examples/shared/metrics, O4), when prometheus-cpp
#                            was found
#   receiver.h13             the program over loopback under the attacks of
#                            H13: slow clients, header floods, framing,
#                            pipelining (Python 3)
if(NOT KEYHOOK_EXAMPLES_HAVE_BEAST OR NOT KEYHOOK_HAS_CRYPTO)
    message(STATUS "keyhook: receiver tests skipped (they need Boost.Beast and keyhook::crypto)")
    return()
endif()
set(_receiver_tests "${PROJECT_SOURCE_DIR}/tests/receiver")
keyhook_add_test_suite(keyhook_receiver_tests
    SOURCES "${_receiver_tests}/http_server_test.cpp" "${_receiver_tests}/replay_test.cpp"
    LIBRARIES keyhook_examples_http_server)
target_include_directories(keyhook_receiver_tests PRIVATE "${PROJECT_SOURCE_DIR}/examples"
                           "${PROJECT_SOURCE_DIR}/examples/webhook_receiver")
# The replay table in a SQLite store (B6), when SQLite was found.
if(KEYHOOK_EXAMPLES_HAVE_SQLITE)
    target_sources(keyhook_receiver_tests PRIVATE "${_receiver_tests}/replay_store_test.cpp")
    target_link_libraries(keyhook_receiver_tests PRIVATE PkgConfig::KEYHOOK_SQLITE)
    target_compile_definitions(keyhook_receiver_tests PRIVATE KEYHOOK_EXAMPLES_HAVE_SQLITE=1)
endif()

# O4: the registry, /healthz and the listener (a suite of its own: its
# file-local helpers would clash with the server tests' in a unity batch).
if(KEYHOOK_EXAMPLES_HAVE_METRICS)
    keyhook_add_test_suite(keyhook_metrics_tests SOURCES "${_receiver_tests}/metrics_test.cpp"
                           LIBRARIES keyhook_examples_metrics)
    target_include_directories(keyhook_metrics_tests PRIVATE "${PROJECT_SOURCE_DIR}/examples")
endif()

find_package(Python3 COMPONENTS Interpreter QUIET)
if(Python3_Interpreter_FOUND)
    add_test(NAME receiver.h13
        COMMAND "${Python3_EXECUTABLE}" "${_receiver_tests}/receiver_h13.py" $<TARGET_FILE:webhook_receiver>)
    set_tests_properties(receiver.h13 PROPERTIES TIMEOUT 120)
endif()
