#pragma once
// keyhook: definitions of key_list_request.hpp.

#include <cstddef>
#include <string>
#include <string_view>
#include <utility>

#include <ostream>

#include "keyhook/key_list_request.hpp"

namespace keyhook {

KEYHOOK_INLINE bool key_list_query::is_equal(const key_list_query& a, const key_list_query& b) {
    return a.base_url == b.base_url && a.tenant == b.tenant && a.page == b.page && a.size == b.size &&
           a.type == b.type && a.status == b.status && a.token == b.token;
}

KEYHOOK_INLINE std::ostream& key_list_query::print_to(std::ostream& os, const key_list_query& q) {
    os << "key_list_query{base_url=" << detail::quote_input(redact_url(q.base_url), 128)
       << ", tenant=" << detail::quote_input(q.tenant) << ", page=" << q.page << ", size=" << q.size
       << ", type=" << detail::quote_input(q.type) << ", status=";
    if (q.status)
        os << detail::quote_input(*q.status);
    else
        os << "none";
    return os << ", token=" << q.token << '}';
}

KEYHOOK_INLINE result<http_request> try_list_keys_request(const key_list_query& q) {
    std::string_view base = q.base_url;
    while (!base.empty() && base.back() == '/') base.remove_suffix(1);
    std::size_t scheme = 0;
    if (detail::starts_with_ascii_nocase(base, "https://"))
        scheme = 8;
    else if (detail::starts_with_ascii_nocase(base, "http://"))
        scheme = 7;
    else
        return error{errc::invalid_value, "base_url", "expected an absolute http or https URL"};
    if (base.size() == scheme) return error{errc::invalid_value, "base_url", "expected a host after the scheme"};
    for (char ch : base) {
        const auto c = static_cast<unsigned char>(ch);
        if (c <= 0x20 || c == 0x7f)
            return error{errc::invalid_value, "base_url", "must not contain spaces or control characters"};
        if (c == '?' || c == '#')
            return error{errc::invalid_value, "base_url", "must not contain a query or a fragment"};
    }
    if (q.tenant.empty()) return error{errc::invalid_value, "tenant", "must not be empty"};
    // URL resolvers remove "." and ".." segments, encoded or not (%2E is a
    // dot to them): such a tenant would send the token to another path.
    if (q.tenant == "." || q.tenant == "..")
        return error{errc::invalid_value, "tenant",
                     "must not be \".\" or \"..\" (a URL resolver removes such a segment)"};
    if (q.page < 1) return error{errc::out_of_range, "page", "expected at least 1, got " + std::to_string(q.page)};
    if (q.size < 1) return error{errc::out_of_range, "size", "expected at least 1, got " + std::to_string(q.size)};
    if (q.token.empty()) return error{errc::invalid_value, "token", "must not be empty"};
    for (char ch : q.token.reveal()) {
        const auto c = static_cast<unsigned char>(ch);
        // A header value must not break the header block; the token itself is never quoted.
        if (c < 0x20 || c == 0x7f) return error{errc::invalid_header, "token", "must not contain control characters"};
    }

    // J3, as H2 for webhooks: the URL is measured before it is built and may
    // not pass 8192 bytes, so one long field cannot make a request of any size.
    std::size_t encoded_tenant = 0;
    for (char c : q.tenant) encoded_tenant += detail::is_unreserved(static_cast<unsigned char>(c)) ? 1 : 3;
    const std::pair<const char*, std::size_t> parts[] = {{"base_url", base.size()},
                                                         {"tenant", encoded_tenant},
                                                         {"type", q.type.size() * 3},
                                                         {"status", q.status ? q.status->size() * 3 : 0}};
    std::size_t url_bytes = 96;  // separators, path, _page and _size
    const auto* largest = &parts[0];
    for (const auto& part : parts) {
        url_bytes += part.second;
        if (part.second > largest->second) largest = &part;
    }
    if (url_bytes > max_list_url_length)
        return error{errc::limit_exceeded, largest->first,
                     "the request URL would exceed " + std::to_string(max_list_url_length) + " bytes"};
    http_request r;
    r.method = "GET";
    r.url.reserve(url_bytes);
    r.url.append(base);
    r.url += '/';
    r.url += percent_encode(q.tenant);
    r.url += "/api/v1/key/apikeys";
    append_query_parameter(r.url, "_page", std::to_string(q.page));
    append_query_parameter(r.url, "_size", std::to_string(q.size));
    if (!q.type.empty()) append_query_parameter(r.url, "type", q.type);
    if (q.status && !q.status->empty()) append_query_parameter(r.url, "status", *q.status);
    r.headers.push_back(http_header{"Authorization", "Bearer " + q.token.reveal(), true});
    r.headers.push_back(http_header{"Accept", "application/json", false});
    return r;
}

KEYHOOK_INLINE http_request list_keys_request(const key_list_query& q) { return try_list_keys_request(q).value(); }

}  // namespace keyhook
