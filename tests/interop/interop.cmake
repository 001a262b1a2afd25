# The interop stage: keyhook's programs over real loopback HTTP,
# checked by software no one here wrote. Included from examples/CMakeLists.txt
# once the programs are defined.
#
#   interop.gateway_nginx  key_gateway behind nginx's auth_request (K16), keys
#                      made by key_admin, every code to the client and the
#                      key's identity to the upstream (O2), the log (O3):
#                      when Python 3 and /usr/sbin/nginx are found
#   interop.key_store_postgresql
#                      the key_store contract over PostgreSQL (K17, K18), on a
#                      server the test starts: when the server is installed
#   interop.gateway_postgresql
#                      three key_gateway processes on one PostgreSQL key store
#                      behind nginx (K17, K18): a revocation in every gateway
#                      within 1 s, failing closed while the database is down
#                      and recovering after, racing key_admins: when the
#                      server and nginx are installed (about 12 s)
#   interop.gateway_shared_limits
#                      shared limits (K17, K13, K14): three key_gateway
#                      processes on one PostgreSQL store behind nginx spend
#                      a key's credits exactly and keep its rate limit to one
#                      gateway's bound, with a gateway SIGKILLed and the
#                      database restarted mid-spending; --limits shared on a
#                      file store refused: with interop.gateway_postgresql
#                      (about 15 s)
#   interop.platform   key_audit --url against a fake platform (Python's
#                      standard library), and the failure paths of key_audit
#                      --url and webhook_deliver: always, when Python 3 is found
#   interop.deliver_over_time
#                      webhook_deliver's timed events, endpoint health,
#                      throttles and key sets (H10, H11, B5) over virtual days
#                      against a Python receiver, in memory and on SQLite:
#                      always, when Python 3 is found (a few seconds);
#                      interop.deliver_over_time_postgresql the same on
#                      PostgreSQL, with the store tests below
#   interop.tenancy_sqlite, interop.tenancy_postgresql
#                      rules B6 and H10: two tenants' webhooks of one name on
#                      one store: each endpoint gets only its tenant's
#                      deliveries, a 410 disables one tenant's webhook only,
#                      lines name the tenant, a version 1 store is refused
#                      (tests/interop/tenancy.py): SQLite when Python 3 is
#                      found, PostgreSQL with the store tests below
#   interop.metrics_prometheus
#                      rule O4: webhook_receiver --listen --metrics-listen
#                      key_gateway and webhook_deliver --work
#                      --metrics-listen scraped by a
#                      Prometheus server the test starts, their counts checked
#                      through the query API, their scrapes by promtool; a
#                      SQLite replay store and a key store failing and
#                      recovering (/healthz): when Python 3, Debian's
#                      prometheus (server and promtool) and prometheus-cpp
#                      are found
#   interop.deliver    webhook_deliver against a receiver on the npm package
#   interop.receiver   webhook_receiver --listen against a sender on it
#                      (standardwebhooks, pinned by package-lock.json): with
#                      -DKEYHOOK_INTEROP=ON, which needs Node.js, npm and the
#                      npm registry (.ci/run's interop stage turns it on)
#   interop.store_sqlite, interop.store_postgresql
#                      rule B6: webhook_deliver --store killed and restarted
#                      against the same receiver (tests/interop/store_crash.js);
#                      with KEYHOOK_INTEROP, when webhook_deliver has the store
#                      (and for PostgreSQL, the server is installed)
#   interop.store_worker_sqlite, interop.store_worker_postgresql
#                      rules B5 and B6: a store worker's clock and its leases
#                      (tests/interop/store_worker.js)
#   interop.receiver_store_sqlite, interop.receiver_store_postgresql
#                      rules B6 and H9: two webhook_receiver --listen --store
#                      on one store, one killed and restarted, process each
#                      webhook-id once (tests/interop/receiver_store.js)
#   interop.recovery_sqlite, interop.recovery_postgresql
#                      rule O5: an operator's --resend, --recover (racing and
#                      repeated), --enable, a changed endpoint refused, --list
#                      and --purge-before, with a worker running, against the
#                      standardwebhooks receiver (tests/interop/recovery.js)
option(KEYHOOK_INTEROP "Run the interop tests that need Node.js and the npm registry (tests/interop)" OFF)

set(_interop_src "${PROJECT_SOURCE_DIR}/tests/interop")
if(NOT TARGET key_audit OR NOT TARGET webhook_deliver OR NOT TARGET webhook_receiver
   OR NOT KEYHOOK_EXAMPLES_HAVE_CURL OR NOT KEYHOOK_EXAMPLES_HAVE_BEAST)
    message(STATUS "keyhook: interop tests skipped (they need libcurl, Boost.Beast and keyhook::crypto)")
    if(KEYHOOK_INTEROP)
        message(FATAL_ERROR "KEYHOOK_INTEROP=ON, but libcurl, Boost.Beast or OpenSSL is missing: "
                            "run scripts/install-deps.sh")
    endif()
    return()
endif()

find_package(Python3 COMPONENTS Interpreter QUIET)
if(Python3_Interpreter_FOUND)
    add_test(NAME interop.platform
        COMMAND "${Python3_EXECUTABLE}" "${_interop_src}/platform_interop.py" $<TARGET_FILE:key_audit>
                $<TARGET_FILE:webhook_deliver>)
    set_tests_properties(interop.platform PROPERTIES LABELS interop TIMEOUT 120)
    # webhook_deliver over virtual days (H10, H11, B5), a few seconds.
    add_test(NAME interop.deliver_over_time
        COMMAND "${Python3_EXECUTABLE}" "${_interop_src}/deliver_over_time.py" $<TARGET_FILE:webhook_deliver>)
    set_tests_properties(interop.deliver_over_time PROPERTIES LABELS "interop;H10;H11;B5" TIMEOUT 120)
    # B6, H10: two tenants, one webhook name, one SQLite store (tenancy.py).
    if(KEYHOOK_EXAMPLES_HAVE_SQLITE)
        add_test(NAME interop.tenancy_sqlite
            COMMAND "${Python3_EXECUTABLE}" "${_interop_src}/tenancy.py" $<TARGET_FILE:webhook_deliver>)
        set_tests_properties(interop.tenancy_sqlite PROPERTIES LABELS "interop;B6;H10" TIMEOUT 120)
    endif()
    if(TARGET webhook_receiver)
        add_test(NAME interop.receiver_framing
            COMMAND "${Python3_EXECUTABLE}" "${_interop_src}/receiver_framing.py" $<TARGET_FILE:webhook_receiver>)
        set_tests_properties(interop.receiver_framing PROPERTIES LABELS interop TIMEOUT 60)
    endif()
    # O4: the programs' metrics through a real Prometheus (Debian's prometheus:
    # the server, never its packaged service, and promtool).
    if(TARGET webhook_receiver AND KEYHOOK_EXAMPLES_HAVE_METRICS AND EXISTS /usr/bin/prometheus
       AND EXISTS /usr/bin/promtool)
        set(_metrics_args)
        if(KEYHOOK_EXAMPLES_HAVE_SQLITE)
            list(APPEND _metrics_args --sqlite)
        endif()
        if(TARGET key_admin AND TARGET key_gateway)
            list(APPEND _metrics_args --gateway $<TARGET_FILE:key_admin> $<TARGET_FILE:key_gateway>)
        endif()
        if(TARGET webhook_deliver AND KEYHOOK_EXAMPLES_HAVE_SQLITE)
            list(APPEND _metrics_args --deliver $<TARGET_FILE:webhook_deliver>)
        endif()
        add_test(NAME interop.metrics_prometheus
            COMMAND "${Python3_EXECUTABLE}" "${_interop_src}/metrics_prometheus.py" /usr/bin/prometheus
                    /usr/bin/promtool $<TARGET_FILE:webhook_receiver> ${_metrics_args})
        set_tests_properties(interop.metrics_prometheus PROPERTIES LABELS "interop;O4" TIMEOUT 120)
    elseif(KEYHOOK_INTEROP)
        message(FATAL_ERROR "KEYHOOK_INTEROP=ON needs Debian's prometheus and prometheus-cpp-dev for "
                            "interop.metrics_prometheus: run scripts/install-deps.sh --interop")
    endif()
    # K11 to K16, O2, O3: key_gateway behind Debian's nginx (nginx-light), keys made by key_admin.
    if(TARGET key_admin AND TARGET key_gateway AND EXISTS /usr/sbin/nginx)
        add_test(NAME interop.gateway_nginx
            COMMAND "${Python3_EXECUTABLE}" "${_interop_src}/gateway_interop.py" /usr/sbin/nginx
                    $<TARGET_FILE:key_admin> $<TARGET_FILE:key_gateway>)
        set_tests_properties(interop.gateway_nginx PROPERTIES LABELS "interop;K16;O2;O3" TIMEOUT 120)
    elseif(KEYHOOK_INTEROP)
        message(FATAL_ERROR "KEYHOOK_INTEROP=ON needs nginx for interop.gateway_nginx: "
                            "run scripts/install-deps.sh --interop")
    endif()
    # K17, K18: three key_gateway processes on one PostgreSQL key store behind
    # nginx, key_admins racing, the database stopped and started (gateway_postgres.py).
    if(TARGET key_admin AND TARGET key_gateway AND KEYHOOK_EXAMPLES_HAVE_LIBPQ AND EXISTS /usr/sbin/nginx
       AND EXISTS /usr/lib/postgresql/15/bin/postgres)
        add_test(NAME interop.gateway_postgresql
            COMMAND "${Python3_EXECUTABLE}" "${_interop_src}/gateway_postgres.py" /usr/sbin/nginx
                    $<TARGET_FILE:key_admin> $<TARGET_FILE:key_gateway>)
        set_tests_properties(interop.gateway_postgresql PROPERTIES LABELS "interop;K17;K18;O2" TIMEOUT 120)
        # K17 with K13 and K14: shared limits, one key's rate limit and credits
        # counted in the database for all three gateways (gateway_shared_limits.py).
        add_test(NAME interop.gateway_shared_limits
            COMMAND "${Python3_EXECUTABLE}" "${_interop_src}/gateway_shared_limits.py" /usr/sbin/nginx
                    $<TARGET_FILE:key_admin> $<TARGET_FILE:key_gateway>)
        set_tests_properties(interop.gateway_shared_limits PROPERTIES LABELS "interop;K17;K13;K14" TIMEOUT 120)
    endif()
    # K17, K18: the key_store contract (tests/cli/key_store_contract_test.cpp)
    # over PostgreSQL, on a server the wrapper starts (tests/webhook_cli/with_postgresql.py).
    if(TARGET keyhook_cli_tests AND KEYHOOK_EXAMPLES_HAVE_LIBPQ AND EXISTS /usr/lib/postgresql/15/bin/postgres)
        add_test(NAME interop.key_store_postgresql
            COMMAND "${Python3_EXECUTABLE}" "${PROJECT_SOURCE_DIR}/tests/webhook_cli/with_postgresql.py"
                    $<TARGET_FILE:keyhook_cli_tests>
                    "[key_store_contract]")
        set_tests_properties(interop.key_store_postgresql PROPERTIES LABELS "interop;K17;K18" TIMEOUT 120)
    endif()
else()
    message(STATUS "keyhook: interop.platform skipped (no Python 3)")
endif()

if(NOT KEYHOOK_INTEROP)
    message(STATUS "keyhook: the Node.js interop tests are off (-DKEYHOOK_INTEROP=ON runs them)")
    return()
endif()
find_program(KEYHOOK_NODE node)
find_program(KEYHOOK_NPM npm)
if(NOT KEYHOOK_NODE OR NOT KEYHOOK_NPM)
    message(FATAL_ERROR "KEYHOOK_INTEROP=ON needs node and npm: run scripts/install-deps.sh --interop")
endif()
# npm installs into the build tree, never into the sources.
set(_interop_bin "${CMAKE_CURRENT_BINARY_DIR}/interop")
configure_file("${_interop_src}/package.json" "${_interop_bin}/package.json" COPYONLY)
configure_file("${_interop_src}/package-lock.json" "${_interop_bin}/package-lock.json" COPYONLY)
add_test(NAME interop.npm_ci
    COMMAND "${KEYHOOK_NPM}" ci --prefix "${_interop_bin}" --no-audit --no-fund --ignore-scripts)
set_tests_properties(interop.npm_ci PROPERTIES LABELS interop FIXTURES_SETUP keyhook_npm TIMEOUT 300)
foreach(_case deliver receiver)
    set(_program webhook_${_case})
    add_test(NAME interop.${_case}
        COMMAND "${KEYHOOK_NODE}" "${_interop_src}/${_case}_interop.js" $<TARGET_FILE:${_program}>)
    set_tests_properties(interop.${_case} PROPERTIES LABELS interop FIXTURES_REQUIRED keyhook_npm TIMEOUT 60
                         ENVIRONMENT "NODE_PATH=${_interop_bin}/node_modules")
endforeach()

# B5: a rotated key set's deliveries checked by receivers holding only the
# old or only the new keys (rotation_interop.js).
add_executable(keyhook_rotation_interop "${_interop_src}/rotation_driver.cpp")
target_link_libraries(keyhook_rotation_interop PRIVATE keyhook::crypto)
keyhook_set_warnings(keyhook_rotation_interop)
add_test(NAME interop.rotation
    COMMAND "${KEYHOOK_NODE}" "${_interop_src}/rotation_interop.js" $<TARGET_FILE:keyhook_rotation_interop>)
set_tests_properties(interop.rotation PROPERTIES LABELS interop FIXTURES_REQUIRED keyhook_npm TIMEOUT 60
                     ENVIRONMENT "NODE_PATH=${_interop_bin}/node_modules")

# B6's crash tests (tests/interop/store_crash.js), a few seconds each.
set(_store_cases)
if(KEYHOOK_EXAMPLES_HAVE_SQLITE)
    list(APPEND _store_cases sqlite)
endif()
if(KEYHOOK_EXAMPLES_HAVE_LIBPQ)
    if(EXISTS /usr/lib/postgresql/15/bin/postgres)
        list(APPEND _store_cases postgresql)
    else()
        message(FATAL_ERROR "KEYHOOK_INTEROP=ON with libpq needs the PostgreSQL 15 server: "
                            "run scripts/install-deps.sh --interop")
    endif()
endif()
# The over-time runs (H10, H11, B5) on a PostgreSQL server the test starts.
if(postgresql IN_LIST _store_cases AND Python3_Interpreter_FOUND)
    add_test(NAME interop.deliver_over_time_postgresql
        COMMAND "${Python3_EXECUTABLE}" "${_interop_src}/deliver_over_time.py" $<TARGET_FILE:webhook_deliver>
                --postgresql)
    set_tests_properties(interop.deliver_over_time_postgresql PROPERTIES LABELS "interop;H10;H11;B5" TIMEOUT 120)
    add_test(NAME interop.tenancy_postgresql
        COMMAND "${Python3_EXECUTABLE}" "${_interop_src}/tenancy.py" $<TARGET_FILE:webhook_deliver> --postgresql)
    set_tests_properties(interop.tenancy_postgresql PROPERTIES LABELS "interop;B6;H10" TIMEOUT 120)
endif()
foreach(_store IN LISTS _store_cases)
    add_test(NAME interop.store_${_store}
        COMMAND "${KEYHOOK_NODE}" "${_interop_src}/store_crash.js" ${_store} $<TARGET_FILE:webhook_deliver>)
    set_tests_properties(interop.store_${_store} PROPERTIES LABELS "interop;B6" FIXTURES_REQUIRED keyhook_npm
                         TIMEOUT 120 ENVIRONMENT "NODE_PATH=${_interop_bin}/node_modules")
endforeach()

# B5 and B6: a store worker's clock is the wall clock, idle time included, and
# a delivery's lease is renewed (and held) before each attempt
# (tests/interop/store_worker.js).
foreach(_store IN LISTS _store_cases)
    add_test(NAME interop.store_worker_${_store}
        COMMAND "${KEYHOOK_NODE}" "${_interop_src}/store_worker.js" ${_store} $<TARGET_FILE:webhook_deliver>)
    set_tests_properties(interop.store_worker_${_store} PROPERTIES LABELS "interop;B5;B6" TIMEOUT 120)
endforeach()

# O5: the operator's actions on a store with a worker running, against the
# standardwebhooks receiver (recovery.js); two processes race each action.
foreach(_store IN LISTS _store_cases)
    add_test(NAME interop.recovery_${_store}
        COMMAND "${KEYHOOK_NODE}" "${_interop_src}/recovery.js" ${_store} $<TARGET_FILE:webhook_deliver>)
    set_tests_properties(interop.recovery_${_store} PROPERTIES LABELS "interop;O5;B6;H10"
                         FIXTURES_REQUIRED keyhook_npm TIMEOUT 180
                         ENVIRONMENT "NODE_PATH=${_interop_bin}/node_modules")
endforeach()

# B6 and H9, test (c): two webhook_receiver --listen --store sharing one store
# process a replayed id once, also after a restart (receiver_store.js).
foreach(_store IN LISTS _store_cases)
    add_test(NAME interop.receiver_store_${_store}
        COMMAND "${KEYHOOK_NODE}" "${_interop_src}/receiver_store.js" ${_store} $<TARGET_FILE:webhook_receiver>)
    set_tests_properties(interop.receiver_store_${_store} PROPERTIES LABELS "interop;B6;H9"
                         FIXTURES_REQUIRED keyhook_npm TIMEOUT 60
                         ENVIRONMENT "NODE_PATH=${_interop_bin}/node_modules")
endforeach()
