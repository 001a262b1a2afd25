#pragma once
// keyhook: definitions of receiving.hpp.

#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <utility>

#include "keyhook/receiving.hpp"

namespace keyhook {

KEYHOOK_INLINE bool presented_key::is_equal(const presented_key& a, const presented_key& b) {
    return a.key == b.key && a.source == b.source;
}

KEYHOOK_INLINE std::ostream& presented_key::print_to(std::ostream& os, const presented_key& k) {
    return os << k.key << " from " << k.source;
}

namespace detail {

KEYHOOK_INLINE std::string_view trim_field_value(std::string_view v) noexcept {
    while (!v.empty() && (v.front() == ' ' || v.front() == '\t')) v.remove_prefix(1);
    while (!v.empty() && (v.back() == ' ' || v.back() == '\t')) v.remove_suffix(1);
    return v;
}

// The query of a URL ("https://h/p?q"), of a request target ("/p?q") or a bare
// query string ("a=1&b=2"), without any fragment.
KEYHOOK_INLINE std::string_view query_of(std::string_view url_or_query) noexcept {
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
KEYHOOK_INLINE void add_candidate(key_lookup& found, std::string value) {
    if (value.empty()) return;  // an empty key counts as no key
    if (!found.value)
        found.value = std::move(value);
    else if (!constant_time_equal(*found.value, value))
        found.conflicting = true;
}

KEYHOOK_INLINE key_lookup find_header_key(const http_headers& headers) {
    key_lookup found;
    for (const auto& h : headers)
        if (header_name_equal(h.name, api_key_header)) add_candidate(found, std::string(trim_field_value(h.value)));
    return found;
}

KEYHOOK_INLINE key_lookup find_query_key(std::string_view url_or_query) {
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

KEYHOOK_INLINE result<void> try_check_method(const http_request& request) {
    if (request.method == "POST") return {};
    return error{errc::method_not_allowed, "method", "expected POST, got " + detail::quote_input(request.method, 16)};
}

KEYHOOK_INLINE void check_method(const http_request& request) { try_check_method(request).value(); }

KEYHOOK_INLINE result<presented_key> try_extract_api_key(const http_request& request) {
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

KEYHOOK_INLINE presented_key extract_api_key(const http_request& request) {
    return try_extract_api_key(request).value();
}

KEYHOOK_INLINE result<key_source> try_check_api_key(const presented_key& presented, const secret& expected) {
    if (expected.empty())
        return error{errc::invalid_key, "expected_key", "no expected key is configured; every request is refused"};
    if (!constant_time_equal(presented.key.reveal(), expected.reveal()))
        return error{errc::unauthorized,
                     std::string(presented.source == key_source::query ? api_key_query_parameter : api_key_header),
                     "the API key does not match"};
    return presented.source;
}

KEYHOOK_INLINE key_source check_api_key(const presented_key& presented, const secret& expected) {
    return try_check_api_key(presented, expected).value();
}

KEYHOOK_INLINE result<key_source> try_authenticate(const http_request& request, const secret& expected) {
    auto presented = try_extract_api_key(request);
    if (!presented) return presented.error();
    return try_check_api_key(*presented, expected);
}

KEYHOOK_INLINE key_source authenticate(const http_request& request, const secret& expected) {
    return try_authenticate(request, expected).value();
}

}  // namespace keyhook
