// keyhook: the API key record as the platform's list call returns it (spec 2.1),
// its JSON (rule L2 for required and optional members, S2 for `status`).
#pragma once

#include <cstddef>
#include <iosfwd>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "keyhook/config.hpp"
#include "keyhook/detail/enum_names.hpp"
#include "keyhook/detail/json_members.hpp"
#include "keyhook/error.hpp"
#include "keyhook/secret.hpp"
#include "keyhook/timestamps.hpp"

namespace keyhook {

// The identifier of a key record. Its own type so that an id is never passed
// where a name or a secret is expected.
class key_id {
public:
    key_id() = default;
    explicit key_id(std::string value) noexcept : value_(std::move(value)) {}

    [[nodiscard]] const std::string& str() const noexcept { return value_; }
    [[nodiscard]] bool empty() const noexcept { return value_.empty(); }

    friend bool operator==(const key_id& a, const key_id& b) noexcept { return a.value_ == b.value_; }
    friend bool operator!=(const key_id& a, const key_id& b) noexcept { return a.value_ != b.value_; }
    friend bool operator<(const key_id& a, const key_id& b) noexcept { return a.value_ < b.value_; }
    friend bool operator>(const key_id& a, const key_id& b) noexcept { return b < a; }
    friend bool operator<=(const key_id& a, const key_id& b) noexcept { return !(b < a); }
    friend bool operator>=(const key_id& a, const key_id& b) noexcept { return !(a < b); }
    // Escaped (P1): an id read from input may hold CR, LF or ESC.
    friend KEYHOOK_INLINE std::ostream& operator<<(std::ostream& os, const key_id& id);

private:
    std::string value_;
};

template <class Json>
void to_json(Json& j, const key_id& id) {
    j = id.str();
}

// The four statuses of spec 3.1, spelled as S3 by to_string.
enum class key_status { active, active_in_future, expired, revoked };

template <>
struct detail::enum_names<key_status> {
    static constexpr std::string_view values[] = {"Active", "Active in the future", "Expired", "Revoked"};
};

namespace detail {

// S2 without an error value, for the readers (the list call's SAX decoder
// reads one per record).
[[nodiscard]] KEYHOOK_INLINE std::optional<key_status> read_key_status(std::string_view text) noexcept;

// The one message for a status S2 does not know.
KEYHOOK_INLINE error unknown_key_status(std::string path, std::string_view text);

}  // namespace detail

// S2: reads a listed status case- and space-insensitively. Accepts the S3
// spellings and the aliases ActiveInFuture, Deactivated, Inactive; anything
// else is errc::invalid_value at path "status".
[[nodiscard]] KEYHOOK_INLINE result<key_status> try_parse_key_status(std::string_view text);
[[nodiscard]] KEYHOOK_INLINE key_status parse_key_status(std::string_view text);

// One record of the list call (spec 2.1). Members the platform may leave out or
// send as null (L2) are optional; `groups` reads absent or null as empty.
struct api_key {
    key_id id;                           // required
    std::optional<std::string> user_id;  // "userId"
    std::string name;                    // required
    std::optional<std::string> description;
    std::optional<std::string> masked;       // the platform's masked key
    key_status status = key_status::active;  // required; the listed status (S2)
    std::optional<std::string> type;         // "Synthetic" in responses
    std::vector<std::string> groups;
    std::optional<timestamp> created_at;    // "createdAt"
    std::optional<std::string> created_by;  // "createdBy"
    std::optional<timestamp> updated_at;    // "updatedAt"
    timestamp active_from{};                // required, "activeFrom"
    timestamp expire_at{};                  // required, "expireAt"
    std::optional<timestamp> last_used_at;  // "lastUsedAt"; absent or null: never used

    friend KEYHOOK_INLINE bool operator==(const api_key& a, const api_key& b);
    friend bool operator!=(const api_key& a, const api_key& b) { return !(a == b); }
};

// Member names of the list call, in the order of spec 2.1.
namespace member {
inline constexpr std::string_view id = "id";
inline constexpr std::string_view user_id = "userId";
inline constexpr std::string_view name = "name";
inline constexpr std::string_view description = "description";
inline constexpr std::string_view masked = "masked";
inline constexpr std::string_view status = "status";
inline constexpr std::string_view type = "type";
inline constexpr std::string_view groups = "groups";
inline constexpr std::string_view created_at = "createdAt";
inline constexpr std::string_view created_by = "createdBy";
inline constexpr std::string_view updated_at = "updatedAt";
inline constexpr std::string_view active_from = "activeFrom";
inline constexpr std::string_view expire_at = "expireAt";
inline constexpr std::string_view last_used_at = "lastUsedAt";
}  // namespace member

namespace detail {

template <class Json>
void put_optional_string(Json& j, std::string_view name, const std::optional<std::string>& v) {
    if (v)
        j[std::string(name)] = *v;
    else
        j[std::string(name)] = nullptr;
}

template <class Json>
void put_optional_time(Json& j, std::string_view name, const std::optional<timestamp>& v) {
    if (v)
        j[std::string(name)] = format_timestamp(*v);
    else
        j[std::string(name)] = nullptr;
}

}  // namespace detail

namespace detail {

// The one table of the record's members (name, JSON form, required or not),
// for try_api_key_from_json and the list call's SAX decoder
// (impl/key_list_sax.ipp, which also has the conversion of a member's text).

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
inline constexpr std::size_t list_field_count = static_cast<std::size_t>(list_field::none);
static_assert(sizeof list_fields / sizeof list_fields[0] == list_field_count, "one row per list_field");

constexpr const field_spec& spec_of(list_field f) noexcept { return list_fields[static_cast<std::size_t>(f)]; }

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

// Stores the text of member f (any form but groups) in k. A text that is no
// valid value gives its error, the path left empty for the caller to fill.
KEYHOOK_INLINE std::optional<error> store_field(api_key& k, list_field f, const std::string& text);

// `groups`: an array of strings; the first element that is not one is reported.
template <class Json>
std::optional<error> read_groups(const Json& m, const std::string& path, std::vector<std::string>& out) {
    if (!m.is_array()) return wrong_type(path, "an array of strings", m);
    out.reserve(m.size());
    for (std::size_t i = 0; i < m.size(); ++i) {
        const auto& g = m[i];
        if (!g.is_string()) return wrong_type(path_index(path, i), "a string", g);
        out.push_back(g.template get<std::string>());
    }
    return std::nullopt;
}

// try_api_key_from_json's body. Result is a parameter so that result<api_key>
// is compiled only where a record is read, not where this header is read.
template <class Json, class Result = result<api_key>>
Result read_api_key(const Json& j, const std::string& path) {
    if (!j.is_object()) return detail::wrong_type(path, "an object", j);
    api_key k;
    for (std::size_t i = 0; i < detail::list_field_count; ++i) {
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
        if (auto e = detail::store_field(k, f, m->template get_ref<const std::string&>())) {
            e->path = detail::path_member(path, spec.name);
            return std::move(*e);
        }
    }
    return k;
}

}  // namespace detail

// Reads one record from a parsed JSON value; `path` names where it sits (for
// instance "data.result[3]") and prefixes every error path. A template on the
// JSON type, so only its caller needs <nlohmann/json.hpp>.
template <class Json = nlohmann::json>
[[nodiscard]] result<api_key> try_api_key_from_json(const detail::non_deduced_t<Json>& j,
                                                    const std::string& path = {}) {
    return detail::read_api_key(j, path);
}
template <class Json = nlohmann::json>
[[nodiscard]] api_key api_key_from_json(const detail::non_deduced_t<Json>& j, const std::string& path = {}) {
    return try_api_key_from_json<Json>(j, path).value();
}

// nlohmann's customization point: `j.get<keyhook::api_key>()` throws keyhook::exception.
template <class Json>
void from_json(const Json& j, api_key& k) {
    k = api_key_from_json<Json>(j);
}

// Writes every member with the list call's names, in spec order; absent
// optional members are written as null, timestamps as T4. `masked` is masked
// again (P2): a well-formed mask is unchanged, a record that wrongly holds a
// full key there never writes it (M3).
template <class Json>
void to_json(Json& j, const api_key& k) {
    j = Json::object();
    j[std::string(member::id)] = k.id.str();
    detail::put_optional_string(j, member::user_id, k.user_id);
    j[std::string(member::name)] = k.name;
    detail::put_optional_string(j, member::description, k.description);
    if (k.masked)
        j[std::string(member::masked)] = mask_key(*k.masked);
    else
        j[std::string(member::masked)] = nullptr;
    j[std::string(member::status)] = std::string(to_string(k.status));
    detail::put_optional_string(j, member::type, k.type);
    j[std::string(member::groups)] = k.groups;
    detail::put_optional_time(j, member::created_at, k.created_at);
    detail::put_optional_string(j, member::created_by, k.created_by);
    detail::put_optional_time(j, member::updated_at, k.updated_at);
    j[std::string(member::active_from)] = format_timestamp(k.active_from);
    j[std::string(member::expire_at)] = format_timestamp(k.expire_at);
    detail::put_optional_time(j, member::last_used_at, k.last_used_at);
}

// Readable one-line form for logs and test failures: id and masked escaped,
// name quoted (P1), masked masked again (P2).
KEYHOOK_INLINE std::ostream& operator<<(std::ostream& os, const api_key& k);

}  // namespace keyhook

template <>
struct std::hash<keyhook::key_id> {
    std::size_t operator()(const keyhook::key_id& id) const noexcept { return std::hash<std::string>{}(id.str()); }
};

#if KEYHOOK_DEFINITIONS
#include "keyhook/impl/api_key.ipp"
#endif
