// keyhook: plain HTTP request values (keyhook does no I/O: it builds what a host
// sends and reads what a host received), header-name comparison and
// percent-encoding.
#pragma once

#include <iosfwd>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "keyhook/config.hpp"
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
[[nodiscard]] KEYHOOK_INLINE bool is_credential_header_name(std::string_view name) noexcept;

// P2: a URL (absolute, scheme-relative "//host/...", a request target "/p?q",
// or anything else) as it may be printed: user-info replaced by [redacted], the
// value of every query parameter (and a parameter without '=') replaced by
// [redacted], a fragment replaced by [redacted]; scheme, host, port, path and
// query parameter names are kept. A URL with none of these prints whole. The
// result is not escaped: print it through escape_text or quote_input (P1).
[[nodiscard]] KEYHOOK_INLINE std::string redact_url(std::string_view url);

// One header. `sensitive` marks a value that is a credential (a bearer token,
// an API key): printing the header redacts it, as it does for every name of
// is_credential_header_name.
struct http_header {
    std::string name;
    std::string value;
    bool sensitive = false;

    friend bool operator==(const http_header& a, const http_header& b) { return is_equal(a, b); }
    friend bool operator!=(const http_header& a, const http_header& b) { return !(a == b); }
    // "name: value", both escaped (P1); the value redacted when it is a credential (P2).
    friend std::ostream& operator<<(std::ostream& os, const http_header& x) { return print_to(os, x); }

private:
    static KEYHOOK_INLINE bool is_equal(const http_header& a, const http_header& b);
    static KEYHOOK_INLINE std::ostream& print_to(std::ostream& os, const http_header& x);
};

using http_headers = std::vector<http_header>;

// The first header named `name` (case-insensitive), or nullptr.
[[nodiscard]] KEYHOOK_INLINE const http_header* find_header(const http_headers& headers,
                                                            std::string_view name) noexcept;
// The pointer would dangle once a temporary list is gone.
const http_header* find_header(const http_headers&& headers, std::string_view name) = delete;

// A request for the host to send (or that the host received).
struct http_request {
    std::string method;
    std::string url;
    http_headers headers;
    std::string body;

    friend bool operator==(const http_request& a, const http_request& b) { return is_equal(a, b); }
    friend bool operator!=(const http_request& a, const http_request& b) { return !(a == b); }
    // Prints method, URL and headers and the body size, never a credential:
    // the URL through redact_url, headers as http_header prints them, all
    // escaped (P1, P2).
    friend std::ostream& operator<<(std::ostream& os, const http_request& x) { return print_to(os, x); }

private:
    static KEYHOOK_INLINE bool is_equal(const http_request& a, const http_request& b);
    static KEYHOOK_INLINE std::ostream& print_to(std::ostream& os, const http_request& x);
};

namespace detail {
constexpr bool is_unreserved(unsigned char c) noexcept {
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '.' ||
           c == '_' || c == '~';
}
}  // namespace detail

// RFC 3986 percent-encoding: every byte but the unreserved characters becomes
// %XX (upper-case hex). Safe for a path segment and for a query name or value.
[[nodiscard]] KEYHOOK_INLINE std::string percent_encode(std::string_view s);

namespace detail {

// Decodes %XX escapes (and '+' as a space when `plus_is_space`, as in form
// query strings). nullopt when an escape is malformed. Internal: a nullopt
// gives no reason, and a public fallible call must (the try_ contract).
[[nodiscard]] KEYHOOK_INLINE std::optional<std::string> percent_decode(std::string_view s, bool plus_is_space = true);

// A header that must appear at most once in effect: `value` is its value (empty
// when absent), `consistent` is false when it appears again with another value.
struct single_header {
    std::string_view value;
    bool consistent = true;
};
[[nodiscard]] KEYHOOK_INLINE single_header single_header_value(const http_headers& headers,
                                                               std::string_view name) noexcept;

}  // namespace detail

// Appends name=value (both percent-encoded) to a URL's query, before any
// fragment, with '?' or '&' as the URL needs.
KEYHOOK_INLINE void append_query_parameter(std::string& url, std::string_view name, std::string_view value);

// The decoded value of the first query parameter `name` in a URL or a bare
// query string ("a=1&b=2"); nullopt when absent or malformed.
[[nodiscard]] KEYHOOK_INLINE std::optional<std::string> find_query_parameter(std::string_view url_or_query,
                                                                             std::string_view name);

}  // namespace keyhook

#if KEYHOOK_DEFINITIONS
#include "keyhook/impl/http.ipp"
#endif
