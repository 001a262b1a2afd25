#pragma once
// keyhook: definitions of creation.hpp.

#include <ostream>
#include <string>
#include <variant>
#include <vector>

#include "keyhook/creation.hpp"
#include "keyhook/detail/utf8.hpp"

namespace keyhook::detail::keys {

// Decodes strict UTF-8 with the library's one walker (detail/utf8.hpp),
// calling f(code_point) for each; false on the first malformed sequence.
template <class F>
bool decode_utf8(std::string_view s, F&& f) {
    for (std::size_t i = 0; i < s.size();) {
        const auto u = utf8_unit_at(s, i);
        if (!u.valid) return false;
        f(static_cast<std::uint32_t>(u.code_point));
        i += u.length;
    }
    return true;
}

// C0 controls, DEL and C1 controls (the Unicode category Cc).
constexpr bool is_control(std::uint32_t cp) noexcept { return cp < 0x20 || (cp >= 0x7F && cp <= 0x9F); }

constexpr bool is_ascii_space(char c) noexcept {
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

KEYHOOK_INLINE std::string_view trim(std::string_view s) noexcept {
    while (!s.empty() && is_ascii_space(s.front())) s.remove_prefix(1);
    while (!s.empty() && is_ascii_space(s.back())) s.remove_suffix(1);
    return s;
}

KEYHOOK_INLINE void check_text(std::string_view field, std::string_view text, std::size_t min, std::size_t max,
                               errc code, std::vector<error>& errors) {
    const auto t = trim(text);
    std::size_t count = 0;
    std::optional<std::size_t> control_at;
    const bool ok = decode_utf8(t, [&](std::uint32_t cp) {
        if (!control_at && is_control(cp)) control_at = count;
        ++count;
    });
    std::string f(field);
    if (!ok) {
        errors.push_back({errc::invalid_utf8, std::move(f), "is not valid UTF-8"});
    } else if (control_at) {
        errors.push_back(
            {code, std::move(f),
             "must not contain control characters, found one at character " + std::to_string(*control_at + 1)});
    } else if (count < min) {
        errors.push_back({code, std::move(f), "must not be empty or only spaces"});
    } else if (count > max) {
        errors.push_back({code, std::move(f),
                          "must be at most " + std::to_string(max) + " characters, got " + std::to_string(count)});
    }
}

KEYHOOK_INLINE void check_period(timestamp active_from, timestamp expire_at, std::vector<error>& errors) {
    bool in_range = true;
    if (active_from < min_timestamp || active_from > max_timestamp) {
        errors.push_back(
            {errc::invalid_period, std::string(member::active_from), "must lie in the years 0001 to 9999"});
        in_range = false;
    }
    if (expire_at < min_timestamp || expire_at > max_timestamp) {
        errors.push_back({errc::invalid_period, std::string(member::expire_at), "must lie in the years 0001 to 9999"});
        in_range = false;
    }
    if (in_range && !(active_from < expire_at))
        errors.push_back({errc::invalid_period, std::string(member::expire_at),
                          "must be later than activeFrom (" + format_timestamp(active_from) + "), got " +
                              format_timestamp(expire_at)});
}

}  // namespace keyhook::detail::keys

namespace keyhook {

KEYHOOK_INLINE bool is_valid_group_name(std::string_view g) {
    if (is_default_group(g)) return true;
    if (g.size() <= custom_group_prefix.size() || g.substr(0, custom_group_prefix.size()) != custom_group_prefix)
        return false;
    std::size_t count = 0;
    bool clean = true;
    const bool ok = detail::keys::decode_utf8(g, [&](std::uint32_t cp) {
        ++count;
        if (detail::keys::is_control(cp) || cp == ' ') clean = false;
    });
    return ok && clean && count <= max_group_name_length;
}

}  // namespace keyhook

namespace keyhook::detail::keys {

KEYHOOK_INLINE void check_groups(const std::vector<std::string>& groups, std::vector<error>& errors) {
    const std::string base(member::groups);
    if (groups.empty()) {
        errors.push_back({errc::invalid_group, base, "at least one group is required"});
        return;
    }
    for (std::size_t i = 0; i < groups.size(); ++i) {
        const auto& g = groups[i];
        if (!is_valid_group_name(g)) {
            errors.push_back({errc::invalid_group, path_index(base, i),
                              "expected user:pf, supervisor:pf, tenant-admin, tenant-moderator, tenant-viewer or "
                              "a custom group beginning \"user:\", got " +
                                  quote_input(g)});
            continue;
        }
        for (std::size_t j = 0; j < i; ++j) {
            if (groups[j] == g) {
                errors.push_back({errc::invalid_group, path_index(base, i),
                                  "repeats groups[" + std::to_string(j) + "] " + quote_input(g)});
                break;
            }
        }
    }
}

}  // namespace keyhook::detail::keys

namespace keyhook {

KEYHOOK_INLINE std::vector<error> own_key_problems(const secret& key) {
    std::vector<error> problems;
    const auto& k = key.reveal();
    if (k.size() < min_own_key_length || k.size() > max_own_key_length)
        problems.push_back(error{errc::invalid_key, "key",
                                 "must be " + std::to_string(min_own_key_length) + " to " +
                                     std::to_string(max_own_key_length) + " characters, got " +
                                     std::to_string(k.size())});
    for (std::size_t i = 0; i < k.size(); ++i) {
        const auto c = static_cast<unsigned char>(k[i]);
        if (c < 0x21 || c > 0x7E) {
            problems.push_back(
                error{errc::invalid_key, "key",
                      "character " + std::to_string(i + 1) + " is not printable ASCII without space (0x21 to 0x7E)"});
            break;  // the first one: one problem per kind
        }
    }
    return problems;
}

KEYHOOK_INLINE std::ostream& one_time_secret::print_to(std::ostream& os, const one_time_secret& s) {
    return os << (s.available() ? "one_time_secret(not yet taken)" : "one_time_secret(taken)");
}

KEYHOOK_INLINE std::ostream& own_key::print_to(std::ostream& os, const own_key& k) { return os << "own_key{" << k.key << '}'; }

KEYHOOK_INLINE bool key_request::is_equal(const key_request& a, const key_request& b) {
    return a.name == b.name && a.description == b.description && a.active_from == b.active_from &&
           a.expire_at == b.expire_at && a.groups == b.groups && a.method == b.method;
}

KEYHOOK_INLINE std::ostream& key_request::print_to(std::ostream& os, const key_request& r) {
    os << "key_request{name=" << detail::quote_input(r.name, 128) << ", activeFrom=" << format_timestamp(r.active_from)
       << ", expireAt=" << format_timestamp(r.expire_at) << ", groups=[";
    for (std::size_t i = 0; i < r.groups.size(); ++i) os << (i ? "," : "") << detail::quote_input(r.groups[i]);
    os << "], method=";
    if (const auto* own = std::get_if<own_key>(&r.method))
        os << "own " << own->key;
    else
        os << "generate";
    return os << '}';
}

KEYHOOK_INLINE bool key_warning::is_equal(const key_warning& a, const key_warning& b) {
    return a.kind == b.kind && a.path == b.path && a.message == b.message;
}

KEYHOOK_INLINE std::ostream& key_warning::print_to(std::ostream& os, const key_warning& w) {
    std::string text;  // P1: the path and message may quote input
    detail::append_escaped(text, w.path);
    text += ": ";
    detail::append_escaped(text, w.message, detail::escape_style::composed);
    return os << "[keyhook.warning." << w.kind << "] " << text;
}

KEYHOOK_INLINE std::ostream& created_key::print_to(std::ostream& os, const created_key& c) {
    os << "created_key{" << c.record << ", " << c.key;
    for (const auto& w : c.warnings) os << ", " << w;
    return os << '}';
}

KEYHOOK_INLINE std::vector<error> key_request_problems(const key_request& r) {
    std::vector<error> errors;
    detail::keys::check_text(member::name, r.name, 1, max_name_length, errc::invalid_name, errors);
    detail::keys::check_text(member::description, r.description, 0, max_description_length, errc::invalid_name, errors);
    detail::keys::check_period(r.active_from, r.expire_at, errors);
    detail::keys::check_groups(r.groups, errors);
    if (const auto* own = std::get_if<own_key>(&r.method))
        for (auto& e : own_key_problems(own->key)) errors.push_back(std::move(e));
    return errors;
}

KEYHOOK_INLINE std::vector<key_warning> advise_groups(const std::vector<std::string>& groups, tenant_kind tenant) {
    std::vector<key_warning> out;
    const std::string base(member::groups);
    for (std::size_t i = 0; i < groups.size(); ++i) {
        const auto& g = groups[i];
        if (g == "supervisor:pf" || g == "tenant-admin")
            out.push_back({key_warning_kind::not_recommended_group, detail::path_index(base, i),
                           "including " + g + " in an API key is not recommended"});
        if (tenant == tenant_kind::shared && g != "user:pf")
            out.push_back({key_warning_kind::shared_tenant_group, detail::path_index(base, i),
                           "a shared tenant's key needs only the group user:pf, got " + detail::quote_input(g)});
    }
    return out;
}

}  // namespace keyhook

namespace keyhook::detail::keys {

KEYHOOK_INLINE api_key new_record(std::string id, const secret& plaintext, std::string_view name,
                                  std::string_view description, const std::vector<std::string>& groups,
                                  timestamp active_from, timestamp expire_at, const key_author& author, timestamp now) {
    api_key k;
    k.id = key_id(std::move(id));
    k.user_id = author.user_id;
    k.name = std::string(trim(name));
    const auto d = trim(description);
    if (!d.empty()) k.description = std::string(d);
    k.masked = plaintext.masked();
    k.status = clock_status(active_from, expire_at, now);
    k.type = "Synthetic";
    k.groups = groups;
    k.created_at = now;
    k.created_by = author.created_by;
    k.updated_at = now;
    k.active_from = active_from;
    k.expire_at = expire_at;
    return k;
}

KEYHOOK_INLINE std::optional<error> draw_key_and_id(random_ref random, const secret* own, secret& plaintext,
                                                    std::string& id) {
    try {
        plaintext = own ? *own : secret(generate_uuid_v4(random));
        id = generate_uuid_v4(random);
    } catch (...) {
        return current_host_error("random");
    }
    // M3: the id is printed and logged; a source that repeats itself (a
    // constant, or one that writes nothing) would make it the key.
    if (constant_time_equal(plaintext.reveal(), id))
        return error{errc::host_failure,
                     {},
                     "the random source gave the same bytes for the key and its id; refusing a record whose id "
                     "would show the key"};
    return std::nullopt;
}

KEYHOOK_INLINE result<created_key> create(const key_request& request, tenant_kind tenant, random_ref random,
                                          timestamp now, const key_author& author) {
    auto errors = key_request_problems(request);
    if (!errors.empty()) return std::move(errors.front());
    const auto* own = std::get_if<own_key>(&request.method);
    secret plaintext;
    std::string id;
    if (auto e = draw_key_and_id(random, own ? &own->key : nullptr, plaintext, id)) return std::move(*e);
    auto record = new_record(std::move(id), plaintext, request.name, request.description, request.groups,
                             request.active_from, request.expire_at, author, now);
    return created_key{std::move(record), one_time_secret(std::move(plaintext)), advise_groups(request.groups, tenant)};
}

}  // namespace keyhook::detail::keys
