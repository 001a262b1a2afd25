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
#include "keyhook/detail/ascii.hpp"

namespace keyhook {

namespace detail {

// The rest of the member table (api_key.hpp has the table itself): what
// the list call's SAX decoder needs besides it.

constexpr std::string_view list_field_name(list_field f) noexcept {
    return f == list_field::none ? std::string_view() : spec_of(f).name;
}

constexpr std::uint16_t field_bit(list_field f) noexcept {
    return static_cast<std::uint16_t>(1u << static_cast<unsigned>(f));
}

// The bits of the required members.
constexpr std::uint16_t required_field_mask() noexcept {
    std::uint16_t mask = 0;
    for (std::size_t i = 0; i < std::size(list_fields); ++i)
        if (list_fields[i].required) mask = static_cast<std::uint16_t>(mask | field_bit(static_cast<list_field>(i)));
    return mask;
}

// Member name to field without allocating: the length, then one byte that
// tells the candidates apart, then one memcmp of a constant size (inlined).
inline list_field list_field_of(std::string_view k) noexcept {
    const auto is = [k](std::string_view m, list_field f) noexcept {
        return std::memcmp(k.data(), m.data(), m.size()) == 0 ? f : list_field::none;
    };
    switch (k.size()) {
        case 2: return is(member::id, list_field::id);
        case 4: return k[0] == 'n' ? is(member::name, list_field::name) : is(member::type, list_field::type);
        case 6:
            switch (k[0]) {
                case 's': return is(member::status, list_field::status);
                case 'm': return is(member::masked, list_field::masked);
                case 'g': return is(member::groups, list_field::groups);
                default: return is(member::user_id, list_field::user_id);
            }
        case 8: return is(member::expire_at, list_field::expire_at);
        case 9:
            if (k[0] == 'u') return is(member::updated_at, list_field::updated_at);
            return k[7] == 'A' ? is(member::created_at, list_field::created_at)
                               : is(member::created_by, list_field::created_by);
        case 10:
            return k[0] == 'a' ? is(member::active_from, list_field::active_from)
                               : is(member::last_used_at, list_field::last_used_at);
        case 11: return is(member::description, list_field::description);
        default: return list_field::none;
    }
}

inline void assign_text(std::optional<std::string>& out, const std::string& text) {
    if (out)
        out->assign(text);  // reuses the buffer of a record read before
    else
        out.emplace(text);
}

KEYHOOK_INLINE std::optional<error> store_field(api_key& k, list_field f, const std::string& text) {
    std::optional<timestamp>* optional_time = nullptr;
    timestamp* required_time = nullptr;
    switch (f) {
        case list_field::id: k.id = key_id(text); return std::nullopt;
        case list_field::name: k.name.assign(text); return std::nullopt;
        case list_field::user_id: assign_text(k.user_id, text); return std::nullopt;
        case list_field::description: assign_text(k.description, text); return std::nullopt;
        case list_field::masked: assign_text(k.masked, text); return std::nullopt;
        case list_field::type: assign_text(k.type, text); return std::nullopt;
        case list_field::created_by: assign_text(k.created_by, text); return std::nullopt;
        case list_field::status:
            if (const auto s = read_key_status(text)) {
                k.status = *s;
                return std::nullopt;
            }
            return unknown_key_status({}, text);
        case list_field::created_at: optional_time = &k.created_at; break;
        case list_field::updated_at: optional_time = &k.updated_at; break;
        case list_field::last_used_at: optional_time = &k.last_used_at; break;
        case list_field::active_from: required_time = &k.active_from; break;
        case list_field::expire_at: required_time = &k.expire_at; break;
        case list_field::groups:
        case list_field::none: return std::nullopt;
    }
    timestamp t{};
    if (!parse_timestamp_into(text, t)) return timestamp_error({}, text);
    if (optional_time)
        *optional_time = t;
    else
        *required_time = t;
    return std::nullopt;
}

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

KEYHOOK_INLINE std::ostream& operator<<(std::ostream& os, const key_id& id) { return os << escaped(id.str()); }

KEYHOOK_INLINE bool operator==(const api_key& a, const api_key& b) {
    return a.id == b.id && a.user_id == b.user_id && a.name == b.name && a.description == b.description &&
           a.masked == b.masked && a.status == b.status && a.type == b.type && a.groups == b.groups &&
           a.created_at == b.created_at && a.created_by == b.created_by && a.updated_at == b.updated_at &&
           a.active_from == b.active_from && a.expire_at == b.expire_at && a.last_used_at == b.last_used_at;
}

KEYHOOK_INLINE std::ostream& operator<<(std::ostream& os, const api_key& k) {
    os << "api_key{id=" << k.id << ", name=" << detail::quote_input(k.name, 128) << ", status=" << k.status
       << ", activeFrom=" << format_timestamp(k.active_from) << ", expireAt=" << format_timestamp(k.expire_at);
    if (k.masked) os << ", masked=" << escaped(mask_key(*k.masked));
    return os << '}';
}

}  // namespace keyhook
