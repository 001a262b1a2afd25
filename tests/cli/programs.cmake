# Tests that run key_gateway and key_admin as users run them, several steps
# each. Included from examples/CMakeLists.txt once the programs are known
# (tests/cli/CMakeLists.txt runs before the examples are added).
set(_cli_tests "${PROJECT_SOURCE_DIR}/tests/cli")
set(_cli_work "${PROJECT_BINARY_DIR}/tests/cli")

# [K16] key_gateway fails closed: --proxy without --trusted-proxy is a usage
# error that names --trusted-proxy (started, it would judge every call as the
# proxy's own subrequest from the proxy's address).
if(TARGET key_gateway)
    set(_key_gateway_args "--listen|127.0.0.1:0|--store|${_cli_work}/gateway_none.jsonl|--routes|${_cli_work}/gateway_none.json")
    foreach(_proxy nginx traefik)
        add_test(NAME key_gateway.${_proxy}_needs_trusted_proxy
            COMMAND "${CMAKE_COMMAND}" -E env "KEYHOOK_PEPPERS=p1:YWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWE="
                    "${CMAKE_COMMAND}" -DEXE=$<TARGET_FILE:key_gateway> "-DARGS=${_key_gateway_args}|--proxy|${_proxy}"
                    -DEXIT=2 -DSTDOUT_EMPTY=ON
                    "-DSTDERR_REGEX=^key_gateway: --proxy needs --trusted-proxy CIDR[^\n]*\nusage: key_gateway "
                    -P "${_cli_tests}/run_cli.cmake")
        set_tests_properties(key_gateway.${_proxy}_needs_trusted_proxy PROPERTIES LABELS "cli;K16")
    endforeach()
endif()

# key_gateway and key_admin on a store of their own (tests/cli/key_gateway_store.py):
#   key_gateway.write_back_off_request_path  [K14 K15 K16] the store's lock held: calls answered, the
#                                            write-back deferred, then written; credits exact across reloads
#   key_gateway.killed_mid_write_back        [K14 K18] SIGKILLed between its new file and the rename: the
#                                            store as it was; restarted, it serves and writes back
#   key_gateway.stale_store_fails_closed     [K17] an unreadable store: answers within the stale period,
#                                            503 past it, failures logged at most once a second
#   key_gateway.request_log                  [O2 O3] one JSON line per decision and no key in any; --log none;
#                                            an empty store warned of, a missing one exit 3; a proxy without
#                                            its forwarded headers; standard error a pipe nobody reads
#   key_gateway.unknown_pepper_counted       [K11 O1 O3] keys under a pepper KEYHOOK_PEPPERS lacks: counted,
#                                            a few lines then a count; none servable: exit 1 at start
if(TARGET key_gateway AND TARGET key_admin)
    find_package(Python3 COMPONENTS Interpreter QUIET)
    if(Python3_Interpreter_FOUND)
        foreach(_case "write_back_off_request_path|lock|cli;K14;K15;K16" "killed_mid_write_back|kill|cli;K14;K18"
                      "stale_store_fails_closed|stale|cli;K17" "request_log|log|cli;O2;O3"
                      "unknown_pepper_counted|peppers|cli;K11;O1;O3")
            string(REPLACE "|" ";" _case "${_case}")
            list(GET _case 0 _name)
            list(GET _case 1 _section)
            list(SUBLIST _case 2 -1 _labels)
            add_test(NAME key_gateway.${_name}
                COMMAND "${Python3_EXECUTABLE}" "${_cli_tests}/key_gateway_store.py" $<TARGET_FILE:key_admin>
                        $<TARGET_FILE:key_gateway> ${_section})
            set_tests_properties(key_gateway.${_name} PROPERTIES LABELS "${_labels}" TIMEOUT 120)
        endforeach()
    endif()
endif()

# key_admin in several steps on a store of its own (tests/cli/key_admin_store.py):
#   key_admin.reactivation_is_explicit  [K6]
#   key_admin.store_files               [K18] modes, no symlink followed, killed before the rename
#   key_admin.one_stored_key_per_key    [K18] an own key stored twice is refused, under any pepper or scheme
#   key_admin.list_and_show             [M1 P1 S3 K14] list's table and JSON array, show's lines and
#                                       object: statuses as of now, masked keys, policies, credits
#                                       left; text from the store escaped; an unknown --id named
#   key_admin.changes_printed           [K6 K8 O1] deactivate, update and delete print what changed,
#                                       never a key or a digest; delete without --confirm refused
#   key_admin.time_forms                [T1 O1] --from now|YYYY-MM-DD|T1, --until also +N d|h|m|s;
#                                       both sides of each boundary, refusals naming flag and text
#   key_admin.errors_name_flags         [O1 K8] every refusal names its flag, never a C++ name
#   key_admin.text_flags_checked        [P1 O1] text that is not UTF-8, a control character or empty in
#                                       any flag: exit 1 or 2 naming it; --tenant checked up front
if(TARGET key_admin)
    find_package(Python3 COMPONENTS Interpreter QUIET)
    if(Python3_Interpreter_FOUND)
        # key_admin_store_test(NAME SECTION LABELS...)
        function(key_admin_store_test name section)
            add_test(NAME key_admin.${name}
                COMMAND "${Python3_EXECUTABLE}" "${_cli_tests}/key_admin_store.py" $<TARGET_FILE:key_admin> ${section})
            set_tests_properties(key_admin.${name} PROPERTIES LABELS "cli;${ARGN}" TIMEOUT 120)
        endfunction()
        key_admin_store_test(reactivation_is_explicit k6 K6)
        key_admin_store_test(store_files files K18)
        key_admin_store_test(one_stored_key_per_key unique K18)
        key_admin_store_test(list_and_show output M1 P1 S3 K14)
        key_admin_store_test(changes_printed changes K6 K8 O1)
        key_admin_store_test(time_forms times T1 O1)
        key_admin_store_test(errors_name_flags errors O1 K8)
        key_admin_store_test(text_flags_checked text_flags P1 O1)
    endif()
endif()

# Every program's --store through one opener (examples/shared/store_opener.hpp;
# tests/cli/store_addresses.py): an unknown scheme or a form the program cannot
# use is a usage error naming the accepted forms; no password on standard
# error; an unreachable PostgreSQL store named without it, in clean text.
find_package(Python3 COMPONENTS Interpreter QUIET)
if(Python3_Interpreter_FOUND)
    foreach(_program webhook_deliver webhook_receiver key_admin key_gateway)
        if(TARGET ${_program})
            add_test(NAME store_address.${_program}
                COMMAND "${Python3_EXECUTABLE}" "${_cli_tests}/store_addresses.py" ${_program}
                        $<TARGET_FILE:${_program}>)
            set_tests_properties(store_address.${_program} PROPERTIES LABELS "cli;B6;K18" TIMEOUT 120)
        endif()
    endforeach()
endif()

# [O1] Every program's command-line conventions (tests/cli/conventions.py):
# --help on standard output naming every option with its default, --version
# exactly "keyhook X.Y.Z", an unknown option a usage error (exit 2) naming it;
# key_admin's commands' own help, usage errors naming flags, the store's
# failures (3) told from its content (1); word-valued options in any case.
# The README snippets under examples/readme take no arguments: not programs here.
if(Python3_Interpreter_FOUND)
    foreach(_program key_audit webhook_dispatch webhook_deliver webhook_receiver key_admin key_gateway expiry_poll
                     key_lifecycle signing)
        if(TARGET ${_program})
            add_test(NAME cli.conventions.${_program}
                COMMAND "${Python3_EXECUTABLE}" "${_cli_tests}/conventions.py" ${_program} $<TARGET_FILE:${_program}>
                        "${PROJECT_SOURCE_DIR}/include/keyhook/version.hpp")
            set_tests_properties(cli.conventions.${_program} PROPERTIES LABELS "cli;O1" TIMEOUT 120)
        endif()
    endforeach()
endif()

# [O1] README.md's webhook pipeline, run word for word (tests/cli/readme_pipeline.py):
# webhook_deliver reads webhook_dispatch's input, not its output.
if(Python3_Interpreter_FOUND AND TARGET webhook_dispatch AND TARGET webhook_deliver AND TARGET webhook_receiver)
    add_test(NAME cli.readme_pipeline
        COMMAND "${Python3_EXECUTABLE}" "${_cli_tests}/readme_pipeline.py" "${PROJECT_SOURCE_DIR}/README.md"
                $<TARGET_FILE:webhook_dispatch> $<TARGET_FILE:webhook_deliver> $<TARGET_FILE:webhook_receiver>)
    set_tests_properties(cli.readme_pipeline PROPERTIES LABELS "cli;O1" TIMEOUT 120)
endif()

# [O4] --metrics-listen on the command line. In a build without
# prometheus-cpp's core or Boost.Beast (-DKEYHOOK_EXAMPLES_METRICS=OFF, or
# .ci/run's core-only tree) it is a usage error that says what is missing
# (exit 2), before anything listens; in a build with them, without --listen
# or with an address that is not HOST:PORT it is a usage error too.
if(TARGET webhook_receiver)
    set(_receiver_env "${CMAKE_COMMAND}" -E env "KEYHOOK_RECEIVER_KEY=the-receiver-key-1234567890")
    if(NOT KEYHOOK_EXAMPLES_HAVE_METRICS)
        add_test(NAME webhook_receiver.metrics_not_built
            COMMAND ${_receiver_env} "${CMAKE_COMMAND}" -DEXE=$<TARGET_FILE:webhook_receiver>
                    "-DARGS=--listen|127.0.0.1:0|--metrics-listen|127.0.0.1:0" -DEXIT=2 -DSTDOUT_EMPTY=ON
                    "-DSTDERR_REGEX=^webhook_receiver: --metrics-listen is not available: this build has no prometheus-cpp"
                    -P "${_cli_tests}/run_cli.cmake")
        set_tests_properties(webhook_receiver.metrics_not_built PROPERTIES LABELS "cli;O4")
    else()
        add_test(NAME webhook_receiver.metrics_needs_listen
            COMMAND ${_receiver_env} "${CMAKE_COMMAND}" -DEXE=$<TARGET_FILE:webhook_receiver>
                    "-DARGS=--metrics-listen|127.0.0.1:0" -DEXIT=2 -DSTDOUT_EMPTY=ON
                    "-DSTDERR_REGEX=^webhook_receiver: --metrics-listen goes with --listen"
                    -P "${_cli_tests}/run_cli.cmake")
        add_test(NAME webhook_receiver.metrics_address
            COMMAND ${_receiver_env} "${CMAKE_COMMAND}" -DEXE=$<TARGET_FILE:webhook_receiver>
                    "-DARGS=--listen|127.0.0.1:0|--metrics-listen|9100" -DEXIT=2 -DSTDOUT_EMPTY=ON
                    "-DSTDERR_REGEX=^webhook_receiver: --metrics-listen: expected HOST:PORT, got \"9100\""
                    -P "${_cli_tests}/run_cli.cmake")
        set_tests_properties(webhook_receiver.metrics_needs_listen webhook_receiver.metrics_address
                             PROPERTIES LABELS "cli;O4")
    endif()
endif()
# webhook_deliver --metrics-listen: the same refusals; it goes with --store S --work only.
if(TARGET webhook_deliver)
    if(NOT KEYHOOK_EXAMPLES_HAVE_METRICS)
        add_test(NAME webhook_deliver.metrics_not_built
            COMMAND "${CMAKE_COMMAND}" -DEXE=$<TARGET_FILE:webhook_deliver>
                    "-DARGS=--store|sqlite:${_cli_work}/deliver_none.db|--work|--metrics-listen|127.0.0.1:0" -DEXIT=2
                    -DSTDOUT_EMPTY=ON
                    "-DSTDERR_REGEX=^webhook_deliver: --metrics-listen is not available: this build has no prometheus-cpp"
                    -P "${_cli_tests}/run_cli.cmake")
        set_tests_properties(webhook_deliver.metrics_not_built PROPERTIES LABELS "cli;O4")
    else()
        add_test(NAME webhook_deliver.metrics_needs_work
            COMMAND "${CMAKE_COMMAND}" -DEXE=$<TARGET_FILE:webhook_deliver>
                    "-DARGS=--store|sqlite:${_cli_work}/deliver_none.db|--metrics-listen|127.0.0.1:0|in.json" -DEXIT=2
                    -DSTDOUT_EMPTY=ON "-DSTDERR_REGEX=^webhook_deliver: --metrics-listen goes with --store S --work"
                    -P "${_cli_tests}/run_cli.cmake")
        add_test(NAME webhook_deliver.metrics_address
            COMMAND "${CMAKE_COMMAND}" -DEXE=$<TARGET_FILE:webhook_deliver>
                    "-DARGS=--store|sqlite:${_cli_work}/deliver_none.db|--work|--metrics-listen|9100" -DEXIT=2
                    -DSTDOUT_EMPTY=ON "-DSTDERR_REGEX=^webhook_deliver: --metrics-listen: expected HOST:PORT, got \"9100\""
                    -P "${_cli_tests}/run_cli.cmake")
        set_tests_properties(webhook_deliver.metrics_needs_work webhook_deliver.metrics_address
                             PROPERTIES LABELS "cli;O4")
    endif()
endif()
# key_gateway --metrics-listen: the same refusals, before the store or the peppers are looked at.
if(TARGET key_gateway)
    set(_gateway_args "--listen|127.0.0.1:0|--store|${_cli_work}/gateway_none.jsonl|--routes|${_cli_work}/gateway_none.json|--proxy|nginx|--trusted-proxy|127.0.0.1/32")
    if(NOT KEYHOOK_EXAMPLES_HAVE_METRICS)
        add_test(NAME key_gateway.metrics_not_built
            COMMAND "${CMAKE_COMMAND}" -DEXE=$<TARGET_FILE:key_gateway>
                    "-DARGS=${_gateway_args}|--metrics-listen|127.0.0.1:0" -DEXIT=2 -DSTDOUT_EMPTY=ON
                    "-DSTDERR_REGEX=^key_gateway: --metrics-listen is not available: this build has no prometheus-cpp"
                    -P "${_cli_tests}/run_cli.cmake")
        set_tests_properties(key_gateway.metrics_not_built PROPERTIES LABELS "cli;O4")
    else()
        add_test(NAME key_gateway.metrics_address
            COMMAND "${CMAKE_COMMAND}" -DEXE=$<TARGET_FILE:key_gateway>
                    "-DARGS=${_gateway_args}|--metrics-listen|9100" -DEXIT=2 -DSTDOUT_EMPTY=ON
                    "-DSTDERR_REGEX=^key_gateway: --metrics-listen: expected HOST:PORT, got \"9100\""
                    -P "${_cli_tests}/run_cli.cmake")
        set_tests_properties(key_gateway.metrics_address PROPERTIES LABELS "cli;O4")
    endif()
endif()
