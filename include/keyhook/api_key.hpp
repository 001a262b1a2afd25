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
#include "keyhook/detail/members.hpp"
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

// Member names of the list call, in the order of spec 2.1 (for error paths
// elsewhere; the member table below is what reads and writes them).
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

// The record's one member table (detail/members.hpp): the readers (DOM and the
// list call's SAX decoder), the writer, equality, heap accounting and the test
// builder all come from it. Its order is the order both readers check members
// in: when a record has several faults, the first in this order is reported.
// Adding a member is two edits: the struct above and its row here.
namespace detail {

// `masked` is read as text and masked again when written (P2): a well-formed
// mask is unchanged, a record that wrongly holds a full key never writes it (M3).
struct masked_text_form : text_form {
    static std::string write(const std::string& v) { return mask_key(v); }
};

inline std::string_view key_status_text(key_status s) noexcept { return to_string(s); }
using key_status_form = enum_form<key_status, read_key_status, unknown_key_status, key_status_text>;

template <>
struct members_of<api_key> {
    static constexpr auto rows = std::make_tuple(  //
        row<text_form>(member::id, &api_key::id, presence::required),
        row<text_form>(member::user_id, &api_key::user_id, presence::optional),
        row<text_form>(member::name, &api_key::name, presence::required),
        row<text_form>(member::description, &api_key::description, presence::optional),
        row<masked_text_form>(member::masked, &api_key::masked, presence::optional),
        row<key_status_form>(member::status, &api_key::status, presence::required),
        row<text_form>(member::type, &api_key::type, presence::optional),
        row<string_list_form>(member::groups, &api_key::groups, presence::optional),
        row<time_form>(member::created_at, &api_key::created_at, presence::optional),
        row<text_form>(member::created_by, &api_key::created_by, presence::optional),
        row<time_form>(member::updated_at, &api_key::updated_at, presence::optional),
        row<time_form>(member::active_from, &api_key::active_from, presence::required),
        row<time_form>(member::expire_at, &api_key::expire_at, presence::required),
        row<time_form>(member::last_used_at, &api_key::last_used_at, presence::optional));
};
static_assert(members_complete<api_key>());

// try_api_key_from_json's body. Result is a parameter so that result<api_key>
// is compiled only where a record is read, not where this header is read.
template <class Json, class Result = result<api_key>>
Result read_api_key(const Json& j, const std::string& path) {
    api_key k;
    if (auto e = read_members(j, path, k)) return std::move(*e);
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
// optional members are written as null, timestamps as T4, `masked` masked
// again (P2, M3).
template <class Json>
void to_json(Json& j, const api_key& k) {
    detail::write_members(j, k);
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
