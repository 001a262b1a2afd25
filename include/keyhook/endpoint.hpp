// keyhook: webhook endpoint URLs (rule H1). A strict parser for the endpoint
// a webhook posts to, and the address check offered on its own for hosts to
// apply after DNS.
#pragma once

#include <cstddef>
#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>
#include <string_view>

#include "keyhook/config.hpp"
#include "keyhook/error.hpp"
#include "keyhook/result.hpp"
#include "keyhook/http.hpp"
#include "keyhook/ip_address.hpp"

namespace keyhook {

// ---------------------------------------------------------------------------
// Endpoint policy and the address check

// What validation permits beyond the defaults of H1. Both are for local
// development and tests; production configurations keep the defaults.
struct endpoint_policy {
    bool allow_http = false;                  // accept plain http:// endpoints
    bool allow_non_global_addresses = false;  // accept localhost and IP literals of every class

    friend bool operator==(const endpoint_policy& a, const endpoint_policy& b) noexcept {
        return a.allow_http == b.allow_http && a.allow_non_global_addresses == b.allow_non_global_addresses;
    }
    friend bool operator!=(const endpoint_policy& a, const endpoint_policy& b) noexcept { return !(a == b); }
};

// H1 after name resolution: the address the host is about to connect to, as
// text. Returns the parsed address when its class is global (or the policy
// allows every class); errc::forbidden_address names the class otherwise;
// errc::invalid_value when the text is not an address.
[[nodiscard]] KEYHOOK_INLINE result<ip_address> try_check_address(std::string_view ip_text,
                                                                  const endpoint_policy& policy = {});
[[nodiscard]] KEYHOOK_INLINE ip_address check_address(std::string_view ip_text, const endpoint_policy& policy = {});

// ---------------------------------------------------------------------------
// Endpoint URLs

inline constexpr std::size_t max_endpoint_length = 2048;

// A validated endpoint: the URL exactly as given, and its parts.
struct endpoint_url {
    std::string url;                    // as given
    std::string scheme;                 // "https" or "http", lower case
    std::string host;                   // lower case, without brackets or a trailing dot
    std::optional<ip_address> address;  // when the host is an IP literal
    std::uint16_t port = 443;           // explicit, or the scheme's default
    bool has_query = false;             // the URL already has a '?'

    friend bool operator==(const endpoint_url& a, const endpoint_url& b) { return is_equal(a, b); }
    friend bool operator!=(const endpoint_url& a, const endpoint_url& b) { return !(a == b); }
    // Prints the URL through redact_url (P2: a user may have typed a
    // credential in its query), escaped (P1).
    friend std::ostream& operator<<(std::ostream& os, const endpoint_url& x) { return print_to(os, x); }

private:
    static KEYHOOK_INLINE bool is_equal(const endpoint_url& a, const endpoint_url& b);
    static KEYHOOK_INLINE std::ostream& print_to(std::ostream& os, const endpoint_url& x);
};

// H1: validates a webhook endpoint. Errors use the path "endpoint":
// errc::invalid_endpoint for the form, errc::forbidden_address for a refused host.
[[nodiscard]] KEYHOOK_INLINE result<endpoint_url> try_validate_endpoint(std::string_view url,
                                                                        const endpoint_policy& policy = {});
[[nodiscard]] KEYHOOK_INLINE endpoint_url validate_endpoint(std::string_view url, const endpoint_policy& policy = {});

namespace detail::hooks {
// The validator behind try_validate_endpoint; `path` is the error's path.
KEYHOOK_INLINE result<endpoint_url> validate_endpoint_at(std::string_view url, const endpoint_policy& policy,
                                                         const std::string& path);
}  // namespace detail::hooks
}  // namespace keyhook

#if KEYHOOK_DEFINITIONS
#include "keyhook/impl/endpoint.ipp"
#endif
