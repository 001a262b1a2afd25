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
#include "keyhook/error.hpp"
#include "keyhook/result.hpp"
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
    friend std::ostream& operator<<(std::ostream& os, const key_id& x) { return print_to(os, x); }

private:
    std::string value_;

    static KEYHOOK_INLINE std::ostream& print_to(std::ostream& os, const key_id& x);
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

    friend bool operator==(const api_key& a, const api_key& b) { return is_equal(a, b); }
    friend bool operator!=(const api_key& a, const api_key& b) { return !(a == b); }

    // Readable one-line form for logs and test failures: id and masked escaped,
    // name quoted (P1), masked masked again (P2).
    friend std::ostream& operator<<(std::ostream& os, const api_key& x) { return print_to(os, x); }

private:
    static KEYHOOK_INLINE bool is_equal(const api_key& a, const api_key& b);
    static KEYHOOK_INLINE std::ostream& print_to(std::ostream& os, const api_key& x);
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

// The record's one member table lives in detail/api_key_table.hpp: the
// readers (DOM and the list call's SAX decoder), the writer, equality, heap
// accounting and the test builder all come from it. This header only declares,
// so that a program built in compiled mode does not instantiate the table in
// every translation unit; header-only mode includes the definitions at the end.

// Reads one record from a parsed JSON value; `path` names where it sits (for
// instance "data.result[3]") and prefixes every error path. A template on the
// JSON type, so only its caller needs <nlohmann/json.hpp>. In compiled mode the
// library provides it for nlohmann::json and nlohmann::ordered_json.
template <class Json = nlohmann::json>
[[nodiscard]] result<api_key> try_api_key_from_json(const detail::non_deduced_t<Json>& j, const std::string& path = {});
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
void to_json(Json& j, const api_key& k);

}  // namespace keyhook

template <>
struct std::hash<keyhook::key_id> {
    std::size_t operator()(const keyhook::key_id& id) const noexcept { return std::hash<std::string>{}(id.str()); }
};

#if KEYHOOK_DEFINITIONS
// The member table, which includes the definitions (impl/api_key.ipp) at its end.
#include "keyhook/detail/api_key_table.hpp"
#endif
