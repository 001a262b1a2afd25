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

#include <nlohmann/json.hpp>

#include "keyhook/api_key.hpp"
#include "keyhook/detail/ascii.hpp"
#include "keyhook/detail/json_members.hpp"

namespace keyhook {

namespace detail {

// The one table of the record's members (name, JSON form, required or not)
// and the one conversion of a member's text, for try_api_key_from_json and
// the list call's SAX decoder (impl/key_list_sax.ipp).

// The record's members, in the order both readers check them: when a record
// has several faults, the first in this order is the one reported.
enum class list_field : unsigned char {
    id,
    user_id,
    name,
    description,
    masked,
    status,
    type,
    groups,
    created_at,
    created_by,
    updated_at,
    active_from,
    expire_at,
    last_used_at,
    none,
};

// How a member is written in JSON.
enum class field_form : unsigned char { text, status, time, groups };

struct field_spec {
    std::string_view name;  // a string literal: name.data() is NUL-terminated
    field_form form;
    bool required;
};

inline constexpr field_spec list_fields[] = {
    {member::id, field_form::text, true},          {member::user_id, field_form::text, false},
    {member::name, field_form::text, true},        {member::description, field_form::text, false},
    {member::masked, field_form::text, false},     {member::status, field_form::status, true},
    {member::type, field_form::text, false},       {member::groups, field_form::groups, false},
    {member::created_at, field_form::time, false}, {member::created_by, field_form::text, false},
    {member::updated_at, field_form::time, false}, {member::active_from, field_form::time, true},
    {member::expire_at, field_form::time, true},   {member::last_used_at, field_form::time, false},
};
static_assert(std::size(list_fields) == static_cast<std::size_t>(list_field::none), "one row per list_field");

constexpr const field_spec& spec_of(list_field f) noexcept { return list_fields[static_cast<std::size_t>(f)]; }

constexpr std::string_view list_field_name(list_field f) noexcept {
    return f == list_field::none ? std::string_view() : spec_of(f).name;
}

// What a member of the wrong JSON type is told it should be.
constexpr std::string_view expected_for(list_field f) noexcept {
    switch (spec_of(f).form) {
        case field_form::groups: return "an array of strings";
        case field_form::time: return "an ISO 8601 timestamp string";
        case field_form::text:
        case field_form::status: break;
    }
    return "a string";
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

// Stores the text of member f (any form but groups) in k. A text that is no
// valid value gives its error, the path left empty for the caller to fill.
inline std::optional<error> store_field(api_key& k, list_field f, const std::string& text) {
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

// `groups`: an array of strings; the first element that is not one is reported.
inline std::optional<error> read_groups(const nlohmann::json& m, const std::string& path,
                                        std::vector<std::string>& out) {
    if (!m.is_array()) return wrong_type(path, "an array of strings", m);
    out.reserve(m.size());
    for (std::size_t i = 0; i < m.size(); ++i) {
        const auto& g = m[i];
        if (!g.is_string()) return wrong_type(path_index(path, i), "a string", g);
        out.push_back(g.get<std::string>());
    }
    return std::nullopt;
}

}  // namespace detail

KEYHOOK_INLINE result<key_status> try_parse_key_status(std::string_view text) {
    if (const auto s = detail::read_key_status(text)) return *s;
    return detail::unknown_key_status("status", text);
}

KEYHOOK_INLINE key_status parse_key_status(std::string_view text) { return try_parse_key_status(text).value(); }

KEYHOOK_INLINE result<api_key> try_api_key_from_json(const nlohmann::json& j, const std::string& path) {
    if (!j.is_object()) return detail::wrong_type(path, "an object", j);
    api_key k;
    for (std::size_t i = 0; i < std::size(detail::list_fields); ++i) {
        const auto f = static_cast<detail::list_field>(i);
        const auto& spec = detail::list_fields[i];
        const auto* m = detail::json_member(j, spec.name.data());
        if (!m) {
            if (spec.required) return detail::missing_member_error(detail::path_member(path, spec.name));
            continue;
        }
        if (spec.form == detail::field_form::groups) {
            if (auto e = detail::read_groups(*m, detail::path_member(path, spec.name), k.groups)) return std::move(*e);
            continue;
        }
        if (!m->is_string())
            return detail::wrong_type(detail::path_member(path, spec.name), detail::expected_for(f), *m);
        if (auto e = detail::store_field(k, f, m->get_ref<const std::string&>())) {
            e->path = detail::path_member(path, spec.name);
            return std::move(*e);
        }
    }
    return k;
}

KEYHOOK_INLINE api_key api_key_from_json(const nlohmann::json& j, const std::string& path) {
    return try_api_key_from_json(j, path).value();
}

KEYHOOK_INLINE std::ostream& operator<<(std::ostream& os, const api_key& k) {
    os << "api_key{id=" << k.id << ", name=" << detail::quote_input(k.name, 128) << ", status=" << k.status
       << ", activeFrom=" << format_timestamp(k.active_from) << ", expireAt=" << format_timestamp(k.expire_at);
    if (k.masked) os << ", masked=" << escaped(mask_key(*k.masked));
    return os << '}';
}

}  // namespace keyhook
