// keyhook: the receiving endpoint of spec 4.4 (rule H7). Checks a request the
// host received (method, API key); the host does the I/O and maps the error
// kinds to HTTP statuses. Reading the body (receive_notification) is in
// keyhook/received_notification.hpp, so these checks need no JSON parser.
#pragma once

#include <iosfwd>
#include <string_view>

#include "keyhook/config.hpp"
#include "keyhook/detail/enum_names.hpp"
#include "keyhook/error.hpp"
#include "keyhook/result.hpp"
#include "keyhook/http.hpp"
#include "keyhook/secret.hpp"

namespace keyhook {

// Where a receiver looks for the key (spec 4.4, H7).
inline constexpr std::string_view api_key_header = "x-api-key";
inline constexpr std::string_view api_key_query_parameter = "api_key";

// Where the presented key was found.
enum class key_source { header, query, header_and_query };

namespace detail {
template <>
struct enum_names<key_source> {
    static constexpr std::string_view values[] = {"header x-api-key", "query parameter api_key",
                                                  "header x-api-key and query parameter api_key"};
};
}  // namespace detail

// The key a request carries, and where it was.
struct presented_key {
    secret key;
    key_source source = key_source::header;

    friend bool operator==(const presented_key& a, const presented_key& b) { return is_equal(a, b); }
    friend bool operator!=(const presented_key& a, const presented_key& b) { return !(a == b); }
    friend std::ostream& operator<<(std::ostream& os, const presented_key& x) { return print_to(os, x); }

private:
    static KEYHOOK_INLINE bool is_equal(const presented_key& a, const presented_key& b);
    static KEYHOOK_INLINE std::ostream& print_to(std::ostream& os, const presented_key& x);
};

// Spec 4.4: a receiver accepts POST only (methods are case-sensitive, RFC
// 9110). Anything else is errc::method_not_allowed (path "method").
[[nodiscard]] KEYHOOK_INLINE result<void> try_check_method(const http_request& request);

KEYHOOK_INLINE void check_method(const http_request& request);

// H7: the key from header x-api-key (name case-insensitive, value trimmed of
// spaces and tabs) or query parameter api_key (percent-decoded, '+' as space).
// An empty value counts as absent. Errors, none of which quotes a key:
//  - errc::conflicting_keys: the header and the query parameter are both present
//    and differ (path "api_key"), or one of them is repeated with different
//    values (path "x-api-key" or "api_key");
//  - errc::invalid_parameter: api_key's percent-encoding is malformed (path "api_key");
//  - errc::unauthorized: neither is present (path "x-api-key").
[[nodiscard]] KEYHOOK_INLINE result<presented_key> try_extract_api_key(const http_request& request);

[[nodiscard]] KEYHOOK_INLINE presented_key extract_api_key(const http_request& request);

// H7: the presented key against the expected one, in constant time (the time
// depends on the lengths only). errc::unauthorized names where the key came
// from, never the key. An empty expected key refuses everything
// (errc::invalid_key, path "expected_key"): it means the receiver is not set up.
[[nodiscard]] KEYHOOK_INLINE result<key_source> try_check_api_key(const presented_key& presented,
                                                                  const secret& expected);

[[nodiscard]] KEYHOOK_INLINE key_source check_api_key(const presented_key& presented, const secret& expected);

// Extraction and check together.
[[nodiscard]] KEYHOOK_INLINE result<key_source> try_authenticate(const http_request& request, const secret& expected);

[[nodiscard]] KEYHOOK_INLINE key_source authenticate(const http_request& request, const secret& expected);

// A suggested HTTP status for a refusal, for hosts that want one: 405 for the
// method, 401 for a missing or wrong key, 413 for a body over the limits, 500
// for a receiver without an expected key, 400 for the rest.
[[nodiscard]] constexpr int suggested_http_status(errc e) noexcept {
    switch (e) {
        case errc::method_not_allowed: return 405;
        case errc::unauthorized: return 401;
        case errc::limit_exceeded: return 413;
        case errc::invalid_key: return 500;
        default: return 400;
    }
}

}  // namespace keyhook

#if KEYHOOK_DEFINITIONS
#include "keyhook/impl/receiving.ipp"
#endif
