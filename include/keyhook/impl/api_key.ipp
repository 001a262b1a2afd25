#pragma once
// keyhook: definitions of api_key.hpp (the record's readers and printer).

#include <cstddef>
#include <iterator>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "keyhook/api_key.hpp"
#include "keyhook/detail/api_key_fields.hpp"
#include "keyhook/detail/ascii.hpp"
#include "keyhook/detail/json_members.hpp"

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
