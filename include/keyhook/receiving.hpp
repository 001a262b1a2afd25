// keyhook: the receiving endpoint of spec 4.4 (rule H7). Checks a request the
// host received (method, API key) and reads its notification body. The host
// does the I/O and maps the error kinds to HTTP statuses.
#pragma once

#include <cstddef>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <utility>

#include "keyhook/error.hpp"
#include "keyhook/http.hpp"
#include "keyhook/notification.hpp"
#include "keyhook/secret.hpp"

namespace keyhook {

// Where a receiver looks for the key (spec 4.4, H7).
inline constexpr std::string_view api_key_header = "x-api-key";
inline constexpr std::string_view api_key_query_parameter = "api_key";

// Where the presented key was found.
enum class key_source { header, query, header_and_query };

[[nodiscard]] constexpr std::string_view to_string(key_source s) noexcept {
    switch (s) {
        case key_source::header: return "header x-api-key";
        case key_source::query: return "query parameter api_key";
        case key_source::header_and_query: return "header x-api-key and query parameter api_key";
    }
    return "header x-api-key";
}

inline std::ostream& operator<<(std::ostream& os, key_source s) { return os << to_string(s); }

// The key a request carries, and where it was.
struct presented_key {
    secret key;
    key_source source = key_source::header;

    friend bool operator==(const presented_key& a, const presented_key& b) {
        return a.key == b.key && a.source == b.source;
    }
    friend bool operator!=(const presented_key& a, const presented_key& b) { return !(a == b); }
    friend std::ostream& operator<<(std::ostream& os, const presented_key& k) {
        return os << k.key << " from " << k.source;
    }
};

namespace detail {

inline std::string_view trim_field_value(std::string_view v) noexcept {
    while (!v.empty() && (v.front() == ' ' || v.front() == '\t')) v.remove_prefix(1);
    while (!v.empty() && (v.back() == ' ' || v.back() == '\t')) v.remove_suffix(1);
    return v;
}

// The query of a URL ("https://h/p?q"), of a request target ("/p?q") or a bare
// query string ("a=1&b=2"), without any fragment.
inline std::string_view query_of(std::string_view url_or_query) noexcept {
    std::string_view q;
    if (const auto mark = url_or_query.find('?'); mark != std::string_view::npos)
        q = url_or_query.substr(mark + 1);
    else if (url_or_query.find("://") == std::string_view::npos && (url_or_query.empty() || url_or_query[0] != '/'))
        q = url_or_query;
    if (const auto hash = q.find('#'); hash != std::string_view::npos) q = q.substr(0, hash);
    return q;
}

// One value found for a key, or several that disagree, or a malformed one.
struct key_lookup {
    std::optional<std::string> value;
    bool conflicting = false;
    bool malformed = false;
};

// Each candidate is compared in constant time with the first one found.
inline void add_candidate(key_lookup& found, std::string value) {
    if (value.empty()) return;  // an empty key counts as no key
    if (!found.value)
        found.value = std::move(value);
    else if (!constant_time_equal(*found.value, value))
        found.conflicting = true;
}

inline key_lookup find_header_key(const http_headers& headers) {
    key_lookup found;
    for (const auto& h : headers)
        if (header_name_equal(h.name, api_key_header)) add_candidate(found, std::string(trim_field_value(h.value)));
    return found;
}

inline key_lookup find_query_key(std::string_view url_or_query) {
    key_lookup found;
    auto query = query_of(url_or_query);
    while (!query.empty()) {
        const auto amp = query.find('&');
        const auto pair = query.substr(0, amp);
        const auto eq = pair.find('=');
        if (const auto name = percent_decode(pair.substr(0, eq)); name && *name == api_key_query_parameter) {
            if (eq != std::string_view::npos) {
                if (auto value = percent_decode(pair.substr(eq + 1)))
                    add_candidate(found, std::move(*value));
                else
                    found.malformed = true;
            }
        }
        if (amp == std::string_view::npos) break;
        query.remove_prefix(amp + 1);
    }
    return found;
}

}  // namespace detail

// Spec 4.4: a receiver accepts POST only (methods are case-sensitive, RFC
// 9110). Anything else is errc::method_not_allowed (path "method").
[[nodiscard]] inline result<void> try_check_method(const http_request& request) {
    if (request.method == "POST") return {};
    return error{errc::method_not_allowed, "method", "expected POST, got " + detail::quote_input(request.method, 16)};
}

inline void check_method(const http_request& request) { try_check_method(request).value(); }

// H7: the key from header x-api-key (name case-insensitive, value trimmed of
// spaces and tabs) or query parameter api_key (percent-decoded, '+' as space).
// An empty value counts as absent. Errors, none of which quotes a key:
//  - errc::conflicting_keys: the header and the query parameter are both present
//    and differ (path "api_key"), or one of them is repeated with different
//    values (path "x-api-key" or "api_key");
//  - errc::invalid_parameter: api_key's percent-encoding is malformed (path "api_key");
//  - errc::unauthorized: neither is present (path "x-api-key").
[[nodiscard]] inline result<presented_key> try_extract_api_key(const http_request& request) {
    auto header = detail::find_header_key(request.headers);
    auto query = detail::find_query_key(request.url);
    if (header.conflicting)
        return error{errc::conflicting_keys, std::string(api_key_header),
                     "the header is repeated with different values"};
    if (query.malformed)
        return error{errc::invalid_parameter, std::string(api_key_query_parameter), "malformed percent-encoding"};
    if (query.conflicting)
        return error{errc::conflicting_keys, std::string(api_key_query_parameter),
                     "the query parameter is repeated with different values"};
    if (header.value && query.value) {
        if (!constant_time_equal(*header.value, *query.value))
            return error{errc::conflicting_keys, std::string(api_key_query_parameter),
                         "differs from header x-api-key; send the key once"};
        return presented_key{secret(std::move(*header.value)), key_source::header_and_query};
    }
    if (header.value) return presented_key{secret(std::move(*header.value)), key_source::header};
    if (query.value) return presented_key{secret(std::move(*query.value)), key_source::query};
    return error{errc::unauthorized, std::string(api_key_header),
                 "no API key: expected header x-api-key or query parameter api_key"};
}

[[nodiscard]] inline presented_key extract_api_key(const http_request& request) {
    return try_extract_api_key(request).value();
}

// H7: the presented key against the expected one, in constant time (the time
// depends on the lengths only). errc::unauthorized names where the key came
// from, never the key. An empty expected key refuses everything
// (errc::invalid_key, path "expected_key"): it means the receiver is not set up.
[[nodiscard]] inline result<key_source> try_check_api_key(const presented_key& presented, const secret& expected) {
    if (expected.empty())
        return error{errc::invalid_key, "expected_key", "no expected key is configured; every request is refused"};
    if (!constant_time_equal(presented.key.reveal(), expected.reveal()))
        return error{errc::unauthorized,
                     std::string(presented.source == key_source::query ? api_key_query_parameter : api_key_header),
                     "the API key does not match"};
    return presented.source;
}

[[nodiscard]] inline key_source check_api_key(const presented_key& presented, const secret& expected) {
    return try_check_api_key(presented, expected).value();
}

// Extraction and check together.
[[nodiscard]] inline result<key_source> try_authenticate(const http_request& request, const secret& expected) {
    auto presented = try_extract_api_key(request);
    if (!presented) return presented.error();
    return try_check_api_key(*presented, expected);
}

[[nodiscard]] inline key_source authenticate(const http_request& request, const secret& expected) {
    return try_authenticate(request, expected).value();
}

// Spec 4.4 and H7 in one call, in this order: the method (POST), the key
// (extracted and checked before the body is read, so an unauthenticated caller
// never reaches the JSON parser), then the body, read tolerantly
// (try_parse_notification). The first failure is returned.
[[nodiscard]] inline result<received_notification> try_receive_notification(const http_request& request,
                                                                            const secret& expected_key,
                                                                            const body_limits& limits = {}) {
    if (auto method = try_check_method(request); !method) return method.error();
    if (auto key = try_authenticate(request, expected_key); !key) return key.error();
    return try_parse_notification(request.body, limits);
}

[[nodiscard]] inline received_notification receive_notification(const http_request& request, const secret& expected_key,
                                                                const body_limits& limits = {}) {
    return try_receive_notification(request, expected_key, limits).value();
}

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
