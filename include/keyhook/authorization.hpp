// keyhook: deciding whether an incoming call may proceed (spec 5; rule K10).
// A check allocates nothing: it reads the headers, looks the key up in a
// key_index, and returns a small value that says allow or which check failed.
#pragma once

#include <iosfwd>
#include <optional>
#include <string>
#include <string_view>

#include "keyhook/config.hpp"
#include "keyhook/api_key.hpp"
#include "keyhook/detail/enum_names.hpp"
#include "keyhook/http.hpp"
#include "keyhook/key_index.hpp"
#include "keyhook/permissions.hpp"
#include "keyhook/status.hpp"
#include "keyhook/timestamps.hpp"

namespace keyhook {

// The request headers of spec 5 (names compare case-insensitively).
inline constexpr std::string_view synthetic_key_header = "x-synthetic-key";
inline constexpr std::string_view tenant_name_header = "x-tenant-name";

// K10's checks, in the order they are made; a denial names the first that failed.
enum class denial_reason {
    missing_key,          // no x-synthetic-key header, or an empty one
    conflicting_key,      // x-synthetic-key given twice with different values
    missing_tenant,       // no x-tenant-name header, or an empty one
    conflicting_tenant,   // x-tenant-name given twice with different values
    unknown_key,          // the key is not in the index
    wrong_tenant,         // the key belongs to another tenant
    not_active,           // the key's status is not Active (see status())
    family_not_allowed,   // the key's groups do not allow the API family
    insufficient_access,  // the key's level on the resource is below the one needed
};

template <>
struct detail::enum_names<denial_reason> {
    static constexpr std::string_view values[] = {"missing_key",        "conflicting_key",    "missing_tenant",
                                                  "conflicting_tenant", "unknown_key",        "wrong_tenant",
                                                  "not_active",         "family_not_allowed", "insufficient_access"};
};

// The outcome of a check. It holds no text and no key: message() builds a
// description on demand, naming the key by its id at most.
class authorization {
public:
    authorization() = default;  // denied: missing_key

    [[nodiscard]] bool allowed() const noexcept { return !reason_; }
    explicit operator bool() const noexcept { return allowed(); }

    // Why the call was denied; nullopt when it was allowed.
    [[nodiscard]] std::optional<denial_reason> reason() const noexcept { return reason_; }

    // The id of the key that was found (from wrong_tenant on), else nullopt: a
    // copy read from the index (which keeps each id once), so the index must
    // not have changed since the check.
    [[nodiscard]] KEYHOOK_INLINE std::optional<key_id> key() const;
    // The key's status at `now` (meaningful once the key was found).
    [[nodiscard]] key_status status() const noexcept { return status_; }
    // The level the key has on the resource, and the level the call needed
    // (meaningful from insufficient_access on).
    [[nodiscard]] access_level granted() const noexcept { return granted_; }
    [[nodiscard]] access_level required() const noexcept { return required_; }

    [[nodiscard]] KEYHOOK_INLINE std::string message() const;

    friend KEYHOOK_INLINE bool operator==(const authorization& a, const authorization& b) noexcept;
    friend bool operator!=(const authorization& a, const authorization& b) noexcept { return !(a == b); }
    friend KEYHOOK_INLINE std::ostream& operator<<(std::ostream& os, const authorization& a);

private:
    friend authorization authorize(const key_index&, std::string_view, std::string_view, const api_family&,
                                   resource_ref, access_level, timestamp) noexcept;
    friend authorization authorize(const key_index&, const http_headers&, const api_family&, resource_ref, access_level,
                                   timestamp) noexcept;

    std::optional<denial_reason> reason_ = denial_reason::missing_key;
    const key_index* index_ = nullptr;  // where entry_ is
    const key_index::entry* entry_ = nullptr;
    key_status status_ = key_status::revoked;
    access_level granted_ = access_level::none;
    access_level required_ = access_level::none;
};

// K10 from the two header values: the key must be in the index, belong to
// `tenant` (compared exactly), be Active at `now` (S1; Revoked wins), allow
// `family`, and have at least `needed` on `resource` (K9). Allocates nothing.
[[nodiscard]] KEYHOOK_INLINE authorization authorize(const key_index& index, std::string_view key,
                                                     std::string_view tenant, const api_family& family,
                                                     resource_ref resource, access_level needed,
                                                     timestamp now) noexcept;

// K10 from the call's headers: x-synthetic-key and x-tenant-name, found by
// case-insensitive name. A header given more than once must carry the same
// value each time (else conflicting_key / conflicting_tenant), so a proxy that
// reads the first and a service that reads the last never disagree. Allocates
// nothing.
[[nodiscard]] KEYHOOK_INLINE authorization authorize(const key_index& index, const http_headers& headers,
                                                     const api_family& family, resource_ref resource,
                                                     access_level needed, timestamp now) noexcept;

// An authorization reads its key's id from the index (key(), message()): a temporary index would dangle.
authorization authorize(const key_index&& index, std::string_view key, std::string_view tenant,
                        const api_family& family, resource_ref resource, access_level needed, timestamp now) = delete;
authorization authorize(const key_index&& index, const http_headers& headers, const api_family& family,
                        resource_ref resource, access_level needed, timestamp now) = delete;

}  // namespace keyhook

#if KEYHOOK_DEFINITIONS
#include "keyhook/impl/authorization.ipp"
#endif
