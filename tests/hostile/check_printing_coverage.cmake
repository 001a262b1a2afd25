# Printing as a class (P1, P2): every type of include/keyhook/ with an
# operator<< must be printed with hostile text by a test, or be listed below as
# printing only constants, numbers or masked values. A printable type added
# later without either fails this check, so no type escapes the stage.
#   cmake -DSOURCE_DIR=<repository> -P check_printing_coverage.cmake

# Printed filled with each hostile string by the generative stage
# (tests/hostile/generative*.cpp prints every value a surface accepts) or by
# a named test of tests/printing/ other than its table.
set(_printed_elsewhere
    key_list_page outbound_request validated_webhook ip_address retry_after delivery_id event_type
    delivery_state operational_notice
    signing_secret verified_webhook signed_delivery asymmetric_signing_key public_key result<T>)
# Enumerations and types that print only constants, numbers, times or masks.
# E is the one operator<< of every keyhook enum (detail/enum_names.hpp): it
# prints a spelling from the enum's constant table, or "unknown".
set(_constants_only
    E access_level address_class attempt_outcome auth_location delivery_attempt denial_reason errc ip_family
    key_list_mode key_list_options key_source key_status key_transition key_warning_kind notice_kind
    retry_decision rotation_policy tenant_kind warning_band escaped_text one_time_secret own_key
    # K11: masks and pepper ids, which only A-Z a-z 0-9 _ - can spell (refused otherwise)
    stored_digest pepper_set stored_key_match
    # numbers and times only (K12, H10, H11); B5 and H12 keys print as masks
    address_range endpoint_state signing_key_set delivery_id_key)

file(GLOB_RECURSE _headers "${SOURCE_DIR}/include/keyhook/*.hpp")
set(_types)
foreach(_h IN LISTS _headers)
    file(STRINGS "${_h}" _lines REGEX "operator<<\\(std::ostream& [a-z]+, (const )?[A-Za-z_:<>]+")
    foreach(_l IN LISTS _lines)
        string(REGEX MATCH "operator<<\\(std::ostream& [a-z]+, (const )?([A-Za-z_:<>]+)" _m "${_l}")
        list(APPEND _types "${CMAKE_MATCH_2}")
    endforeach()
endforeach()
list(REMOVE_DUPLICATES _types)
list(LENGTH _types _count)
if(_count LESS 40)
    message(FATAL_ERROR "found only ${_count} printable types: the pattern no longer matches the headers")
endif()

set(_tables "")
foreach(_f IN ITEMS printing/printing_test.cpp printing/printing_crypto_test.cpp)
    file(READ "${SOURCE_DIR}/tests/${_f}" _text)
    string(APPEND _tables "${_text}")
endforeach()

set(_missing)
foreach(_t IN LISTS _types)
    string(FIND "${_tables}" "{\"${_t}\"," _in_table)
    list(FIND _printed_elsewhere "${_t}" _elsewhere)
    list(FIND _constants_only "${_t}" _constant)
    if(_in_table EQUAL -1 AND _elsewhere EQUAL -1 AND _constant EQUAL -1)
        list(APPEND _missing "${_t}")
    endif()
endforeach()
if(_missing)
    message(FATAL_ERROR "printable types no test prints with hostile text: ${_missing}\n"
                        "Add each to the table of tests/printing/printing_test.cpp, or to a list of this script "
                        "with the reason.")
endif()
message(STATUS "${_count} printable types, each printed with hostile text or printing constants only")
