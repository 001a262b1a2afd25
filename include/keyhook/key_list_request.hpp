// keyhook: the list call's request (spec 4.1, rule L1): what to ask for and
// the HTTP request that asks for it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>
#include <string_view>

#include "keyhook/config.hpp"
#include "keyhook/detail/ascii.hpp"
#include "keyhook/error.hpp"
#include "keyhook/result.hpp"
#include "keyhook/detail/key_list_defaults.hpp"
#include "keyhook/http.hpp"
#include "keyhook/secret.hpp"

namespace keyhook {

// What to ask the list call for. `token` is the bearer token (a secret: it
// prints masked). An empty `type` or `status` leaves that parameter out.
struct key_list_query {
    std::string base_url;                        // the utilities host, e.g. "https://utilities.example.com"
    std::string tenant;                          // percent-encoded into the path
    std::int64_t page = default_list_page;       // `_page`, at least 1
    std::int64_t size = default_list_page_size;  // `_size`, at least 1
    std::string type = "synthetic";
    std::optional<std::string> status;  // e.g. "active"; none: every status
    secret token;

    friend bool operator==(const key_list_query& a, const key_list_query& b) { return is_equal(a, b); }
    friend bool operator!=(const key_list_query& a, const key_list_query& b) { return !(a == b); }
    friend std::ostream& operator<<(std::ostream& os, const key_list_query& x) { return print_to(os, x); }

private:
    static KEYHOOK_INLINE bool is_equal(const key_list_query& a, const key_list_query& b);
    static KEYHOOK_INLINE std::ostream& print_to(std::ostream& os, const key_list_query& x);
};

namespace detail {
// Does s begin with the lowercase `prefix`, ignoring ASCII case?
constexpr bool starts_with_ascii_nocase(std::string_view s, std::string_view prefix) noexcept {
    return s.size() >= prefix.size() && ascii_iequal(s.substr(0, prefix.size()), prefix);
}
}  // namespace detail

// The longest list-call URL try_list_keys_request builds (J3; H2's limit).
inline constexpr std::size_t max_list_url_length = 8192;

// L1: GET {base_url}/{tenant}/api/v1/key/apikeys?_page=..&_size=..&type=..[&status=..]
// with `Authorization: Bearer <token>` (marked sensitive). Trailing '/' on
// base_url are dropped. Errors name the field (page, size, base_url, tenant, token).
[[nodiscard]] KEYHOOK_INLINE result<http_request> try_list_keys_request(const key_list_query& q);
[[nodiscard]] KEYHOOK_INLINE http_request list_keys_request(const key_list_query& q);

}  // namespace keyhook

#if KEYHOOK_DEFINITIONS
#include "keyhook/impl/key_list_request.ipp"
#endif
