// keyhook: plain HTTP request values (keyhook does no I/O: it builds what a host
// sends and reads what a host received), header-name comparison and
// percent-encoding.
#pragma once

#include <algorithm>
#include <cstddef>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "keyhook/detail/ascii.hpp"
#include "keyhook/error.hpp"

namespace keyhook {

// Header names compare ASCII case-insensitively (RFC 9110).
[[nodiscard]] constexpr bool header_name_equal(std::string_view a, std::string_view b) noexcept {
    return detail::ascii_iequal(a, b);
}

// What printing writes instead of a credential (P2).
inline constexpr std::string_view redacted_text = "[redacted]";

// P2: a header whose value printing never shows, whether or not it was marked
// sensitive (a received request's headers are not marked): a name containing,
// in any case, "auth" (Authorization, Proxy-Authorization, X-Auth-Token),
// "key" (x-api-key, x-synthetic-key), "token", "secret", "passw", "cookie",
// "session" or "credential". Erring on the side of hiding costs only a value
// in a log line.
[[nodiscard]] inline bool is_credential_header_name(std::string_view name) noexcept {
    constexpr std::string_view marks[] = {"auth", "key", "token", "secret", "passw", "cookie", "session", "credential"};
    for (const auto m : marks)
        for (std::size_t i = 0; i + m.size() <= name.size(); ++i)
            if (detail::ascii_iequal(name.substr(i, m.size()), m)) return true;
    return false;
}

// P2: a URL (absolute, scheme-relative "//host/...", a request target "/p?q",
// or anything else) as it may be printed: user-info replaced by [redacted], the
// value of every query parameter (and a parameter without '=') replaced by
// [redacted], a fragment replaced by [redacted]; scheme, host, port, path and
// query parameter names are kept. A URL with none of these prints whole. The
// result is not escaped: print it through escape_text or quote_input (P1).
[[nodiscard]] inline std::string redact_url(std::string_view url) {
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

// One header. `sensitive` marks a value that is a credential (a bearer token,
// an API key): printing the header redacts it, as it does for every name of
// is_credential_header_name.
struct http_header {
    std::string name;
    std::string value;
    bool sensitive = false;

    friend bool operator==(const http_header& a, const http_header& b) {
        return a.name == b.name && a.value == b.value && a.sensitive == b.sensitive;
    }
    friend bool operator!=(const http_header& a, const http_header& b) { return !(a == b); }
    // "name: value", both escaped (P1); the value redacted when it is a credential (P2).
    friend std::ostream& operator<<(std::ostream& os, const http_header& h) {
        os << escaped(h.name) << ": ";
        if (h.sensitive || is_credential_header_name(h.name)) return os << redacted_text;
        return os << escaped(h.value);
    }
};

using http_headers = std::vector<http_header>;

// The first header named `name` (case-insensitive), or nullptr.
[[nodiscard]] inline const http_header* find_header(const http_headers& headers, std::string_view name) noexcept {
    for (const auto& h : headers)
        if (header_name_equal(h.name, name)) return &h;
    return nullptr;
}
// The pointer would dangle once a temporary list is gone.
const http_header* find_header(const http_headers&& headers, std::string_view name) = delete;

// A request for the host to send (or that the host received).
struct http_request {
    std::string method;
    std::string url;
    http_headers headers;
    std::string body;

    friend bool operator==(const http_request& a, const http_request& b) {
        return a.method == b.method && a.url == b.url && a.headers == b.headers && a.body == b.body;
    }
    friend bool operator!=(const http_request& a, const http_request& b) { return !(a == b); }
    // Prints method, URL and headers and the body size, never a credential:
    // the URL through redact_url, headers as http_header prints them, all
    // escaped (P1, P2).
    friend std::ostream& operator<<(std::ostream& os, const http_request& r) {
        os << escaped(r.method) << ' ' << escaped(redact_url(r.url));
        for (const auto& h : r.headers) os << "\n" << h;
        return os << "\n(" << r.body.size() << " body bytes)";
    }
};

namespace detail {
constexpr bool is_unreserved(unsigned char c) noexcept {
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '.' ||
           c == '_' || c == '~';
}
}  // namespace detail

// RFC 3986 percent-encoding: every byte but the unreserved characters becomes
// %XX (upper-case hex). Safe for a path segment and for a query name or value.
[[nodiscard]] inline std::string percent_encode(std::string_view s) {
    static constexpr char hex[] = "0123456789ABCDEF";
    std::string out;
    out.reserve(s.size());
    for (char ch : s) {
        const auto c = static_cast<unsigned char>(ch);
        if (detail::is_unreserved(c)) {
            out += ch;
        } else {
            out += '%';
            out += hex[c >> 4];
            out += hex[c & 0xf];
        }
    }
    return out;
}

namespace detail {

// Decodes %XX escapes (and '+' as a space when `plus_is_space`, as in form
// query strings). nullopt when an escape is malformed. Internal: a nullopt
// gives no reason, and a public fallible call must (the try_ contract).
[[nodiscard]] inline std::optional<std::string> percent_decode(std::string_view s, bool plus_is_space = true) {
    auto hexval = [](char c) -> int {
        if (c >= '0' && c <= '9') return c - '0';
        if (c >= 'a' && c <= 'f') return c - 'a' + 10;
        if (c >= 'A' && c <= 'F') return c - 'A' + 10;
        return -1;
    };
    std::string out;
    out.reserve(s.size());
    for (std::size_t i = 0; i < s.size(); ++i) {
        if (s[i] == '%') {
            if (i + 2 >= s.size()) return std::nullopt;
            const int hi = hexval(s[i + 1]), lo = hexval(s[i + 2]);
            if (hi < 0 || lo < 0) return std::nullopt;
            out += static_cast<char>(hi * 16 + lo);
            i += 2;
        } else if (s[i] == '+' && plus_is_space) {
            out += ' ';
        } else {
            out += s[i];
        }
    }
    return out;
}

}  // namespace detail

// Appends name=value (both percent-encoded) to a URL's query, before any
// fragment, with '?' or '&' as the URL needs.
inline void append_query_parameter(std::string& url, std::string_view name, std::string_view value) {
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

// The decoded value of the first query parameter `name` in a URL or a bare
// query string ("a=1&b=2"); nullopt when absent or malformed.
[[nodiscard]] inline std::optional<std::string> find_query_parameter(std::string_view url_or_query,
                                                                     std::string_view name) {
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

}  // namespace keyhook
