#pragma once
// keyhook: definitions of api_key.hpp (the record's readers and printer).

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <iterator>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "keyhook/api_key.hpp"
#include "keyhook/detail/api_key_table.hpp"
#include "keyhook/detail/ascii.hpp"

namespace keyhook {

namespace detail {

KEYHOOK_INLINE std::optional<key_status> read_key_status(std::string_view text) noexcept {
    char folded[24];
    std::size_t n = 0;
    for (char c : text) {
        if (c == ' ' || c == '\t' || c == '\n' || c == '\r') continue;
        if (n == sizeof folded) return std::nullopt;
        folded[n++] = ascii_lower(c);
    }
    const std::string_view f(folded, n);
    if (f == "active") return key_status::active;
    if (f == "activeinthefuture" || f == "activeinfuture") return key_status::active_in_future;
    if (f == "expired") return key_status::expired;
    if (f == "revoked" || f == "deactivated" || f == "inactive") return key_status::revoked;
    return std::nullopt;
}

KEYHOOK_INLINE error unknown_key_status(std::string path, std::string_view text) {
    return error{errc::invalid_value, std::move(path),
                 "expected Active, Active in the future, Expired or Revoked, got " + quote_input(text)};
}

}  // namespace detail

KEYHOOK_INLINE result<key_status> try_parse_key_status(std::string_view text) {
    if (const auto s = detail::read_key_status(text)) return *s;
    return detail::unknown_key_status("status", text);
}

KEYHOOK_INLINE key_status parse_key_status(std::string_view text) { return try_parse_key_status(text).value(); }

KEYHOOK_INLINE std::ostream& key_id::print_to(std::ostream& os, const key_id& id) { return os << escaped(id.str()); }

KEYHOOK_INLINE bool api_key::is_equal(const api_key& a, const api_key& b) { return detail::members_equal(a, b); }

KEYHOOK_INLINE std::ostream& api_key::print_to(std::ostream& os, const api_key& k) {
    os << "api_key{id=" << k.id << ", name=" << detail::quote_input(k.name, 128) << ", status=" << k.status
       << ", activeFrom=" << format_timestamp(k.active_from) << ", expireAt=" << format_timestamp(k.expire_at);
    if (k.masked) os << ", masked=" << escaped(mask_key(*k.masked));
    return os << '}';
}

}  // namespace keyhook

#if defined(KEYHOOK_BUILDING_COMPILED) && !defined(KEYHOOK_BUILDING_COMPILED_CRYPTO)
// Compiled mode: the JSON forms a program's translation units only declare.
#include <nlohmann/json.hpp>
namespace keyhook {
#define KEYHOOK_API_KEY_JSON(Json)                                                           \
    template result<api_key> try_api_key_from_json<Json>(const Json&, const std::string&); \
    template void to_json<Json>(Json&, const api_key&);
KEYHOOK_API_KEY_JSON(nlohmann::json)
KEYHOOK_API_KEY_JSON(nlohmann::ordered_json)
#undef KEYHOOK_API_KEY_JSON
}  // namespace keyhook
#endif
