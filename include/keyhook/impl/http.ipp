// keyhook: definitions of http.hpp (see config.hpp for when they are compiled).
#pragma once

#include <algorithm>
#include <cstddef>
#include <ostream>
#include <utility>

#include "keyhook/detail/ascii.hpp"
#include "keyhook/http.hpp"

namespace keyhook {

KEYHOOK_INLINE bool is_credential_header_name(std::string_view name) noexcept {
    constexpr std::string_view marks[] = {"auth", "key", "token", "secret", "passw", "cookie", "session", "credential"};
    for (const auto m : marks)
        for (std::size_t i = 0; i + m.size() <= name.size(); ++i)
            if (detail::ascii_iequal(name.substr(i, m.size()), m)) return true;
    return false;
}

KEYHOOK_INLINE std::string redact_url(std::string_view url) {
    std::string out;
    out.reserve(url.size());
    std::size_t pos = 0;
    // The authority follows "scheme://" or a leading "//".
    std::size_t authority = std::string_view::npos;
    if (const auto s = url.find("://"); s != std::string_view::npos && url.find_first_of("/?#") == s + 1)
        authority = s + 3;
    else if (url.substr(0, 2) == "//")
        authority = 2;
    if (authority != std::string_view::npos) {
        const auto end = std::min(url.find_first_of("/?#", authority), url.size());
        const auto host = url.substr(authority, end - authority);
        out.append(url.substr(0, authority));
        if (const auto at = host.rfind('@'); at != std::string_view::npos) {
            out += redacted_text;
            out += host.substr(at);
        } else {
            out += host;
        }
        pos = end;
    }
    const auto mark = std::min(url.find_first_of("?#", pos), url.size());
    out.append(url.substr(pos, mark - pos));
    pos = mark;
    if (pos < url.size() && url[pos] == '?') {
        const auto end = std::min(url.find('#', pos), url.size());
        auto query = url.substr(pos + 1, end - pos - 1);
        out += '?';
        for (bool first = true;; first = false) {
            const auto amp = query.find('&');
            const auto item = query.substr(0, amp);
            if (!first) out += '&';
            const auto eq = item.find('=');
            if (eq != std::string_view::npos) {
                out += item.substr(0, eq + 1);
                if (eq + 1 < item.size()) out += redacted_text;
            } else if (!item.empty()) {
                out += redacted_text;  // a bare item may be a token itself
            }
            if (amp == std::string_view::npos) break;
            query.remove_prefix(amp + 1);
        }
        pos = end;
    }
    if (pos < url.size()) {  // a fragment
        out += '#';
        if (pos + 1 < url.size()) out += redacted_text;
    }
    return out;
}

KEYHOOK_INLINE std::string percent_encode(std::string_view s) {
    std::string out;
    out.reserve(s.size());
    for (char ch : s) {
        const auto c = static_cast<unsigned char>(ch);
        if (detail::is_unreserved(c)) {
            out += ch;
        } else {
            out += '%';
            out += detail::hex_upper[c >> 4];
            out += detail::hex_upper[c & 0xf];
        }
    }
    return out;
}

namespace detail {

KEYHOOK_INLINE std::optional<std::string> percent_decode(std::string_view s, bool plus_is_space) {
    std::string out;
    out.reserve(s.size());
    for (std::size_t i = 0; i < s.size(); ++i) {
        if (s[i] == '%') {
            if (i + 2 >= s.size()) return std::nullopt;
            if (!is_hex_digit(s[i + 1]) || !is_hex_digit(s[i + 2])) return std::nullopt;
            out += static_cast<char>(hex_value(s[i + 1]) * 16 + hex_value(s[i + 2]));
            i += 2;
        } else if (s[i] == '+' && plus_is_space) {
            out += ' ';
        } else {
            out += s[i];
        }
    }
    return out;
}

KEYHOOK_INLINE single_header single_header_value(const http_headers& headers, std::string_view name) noexcept {
    single_header out;
    bool seen = false;
    for (const auto& h : headers) {
        if (!header_name_equal(h.name, name)) continue;
        if (!seen) {
            out.value = h.value;
            seen = true;
        } else if (out.value != h.value) {
            out.consistent = false;
            return out;
        }
    }
    return out;
}

}  // namespace detail

KEYHOOK_INLINE void append_query_parameter(std::string& url, std::string_view name, std::string_view value) {
    const auto hash = url.find('#');
    std::string fragment;
    if (hash != std::string::npos) {
        fragment = url.substr(hash);
        url.erase(hash);
    }
    const auto q = url.find('?');
    if (q == std::string::npos)
        url += '?';
    else if (q + 1 != url.size() && url.back() != '&')
        url += '&';
    url += percent_encode(name);
    url += '=';
    url += percent_encode(value);
    url += fragment;
}

KEYHOOK_INLINE std::optional<std::string> find_query_parameter(std::string_view url_or_query, std::string_view name) {
    auto query = url_or_query;
    if (const auto q = query.find('?'); q != std::string_view::npos)
        query.remove_prefix(q + 1);
    else if (query.find("://") != std::string_view::npos)
        return std::nullopt;
    if (const auto h = query.find('#'); h != std::string_view::npos) query = query.substr(0, h);
    while (!query.empty()) {
        const auto amp = query.find('&');
        const auto pair = query.substr(0, amp);
        const auto eq = pair.find('=');
        const auto raw_name = pair.substr(0, eq);
        if (const auto decoded = detail::percent_decode(raw_name); decoded && *decoded == name) {
            if (eq == std::string_view::npos) return std::string();
            return detail::percent_decode(pair.substr(eq + 1));
        }
        if (amp == std::string_view::npos) break;
        query.remove_prefix(amp + 1);
    }
    return std::nullopt;
}

KEYHOOK_INLINE bool http_header::is_equal(const http_header& a, const http_header& b) {
    return a.name == b.name && a.value == b.value && a.sensitive == b.sensitive;
}

KEYHOOK_INLINE std::ostream& http_header::print_to(std::ostream& os, const http_header& h) {
    os << escaped(h.name) << ": ";
    if (h.sensitive || is_credential_header_name(h.name)) return os << redacted_text;
    return os << escaped(h.value);
}

KEYHOOK_INLINE const http_header* find_header(const http_headers& headers, std::string_view name) noexcept {
    for (const auto& h : headers)
        if (header_name_equal(h.name, name)) return &h;
    return nullptr;
}

KEYHOOK_INLINE bool http_request::is_equal(const http_request& a, const http_request& b) {
    return a.method == b.method && a.url == b.url && a.headers == b.headers && a.body == b.body;
}

KEYHOOK_INLINE std::ostream& http_request::print_to(std::ostream& os, const http_request& r) {
    os << escaped(r.method) << ' ' << escaped(redact_url(r.url));
    for (const auto& h : r.headers) os << "\n" << h;
    return os << "\n(" << r.body.size() << " body bytes)";
}

}  // namespace keyhook
