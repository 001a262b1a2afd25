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
#include "keyhook/key_policy.hpp"
#include "keyhook/permissions.hpp"
#include "keyhook/status.hpp"
#include "keyhook/timestamps.hpp"

namespace keyhook {

// The request headers of spec 5 (names compare case-insensitively).
inline constexpr std::string_view synthetic_key_header = "x-synthetic-key";
inline constexpr std::string_view tenant_name_header = "x-tenant-name";

// K10's checks and K15's, in the order they are made; a denial names the first
// that failed. The last three apply only to keys with a policy (key_policy.hpp).
enum class denial_reason {
    missing_key,          // no x-synthetic-key header, or an empty one
    conflicting_key,      // x-synthetic-key given twice with different values
    missing_tenant,       // no x-tenant-name header, or an empty one
    conflicting_tenant,   // x-tenant-name given twice with different values
    unknown_key,          // the key is not in the index
    wrong_tenant,         // the key belongs to another tenant
    not_active,           // the key's status is not Active (see status())
    address_not_allowed,  // K12: the caller's address is outside the key's ranges
    family_not_allowed,   // the key's groups do not allow the API family
    insufficient_access,  // the key's level on the resource is below the one needed
    rate_limited,         // K13: over the key's rate limit (see retry_at())
    usage_exceeded,       // K14: not enough usage credits left (see retry_at())
};

template <>
struct detail::enum_names<denial_reason> {
    static constexpr std::string_view values[] = {"missing_key",         "conflicting_key",     "missing_tenant",
                                                  "conflicting_tenant",  "unknown_key",         "wrong_tenant",
                                                  "not_active",          "address_not_allowed", "family_not_allowed",
                                                  "insufficient_access", "rate_limited",        "usage_exceeded"};
    static_assert(sizeof(values) / sizeof(values[0]) == static_cast<std::size_t>(denial_reason::usage_exceeded) + 1,
                  "one name per denial_reason");
};

namespace detail {
struct authorizer;
}

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
    // K11: the key was found through a stored digest that should be stored
    // again under the current pepper (keyhook::crypto::try_rehash_answer).
    [[nodiscard]] bool digest_outdated() const noexcept { return entry_ && index_->digest_outdated(*entry_); }
    // The key's status at `now` (meaningful once the key was found).
    [[nodiscard]] key_status status() const noexcept { return status_; }
    // The level the key has on the resource, and the level the call needed
    // (meaningful from insufficient_access on).
    [[nodiscard]] access_level granted() const noexcept { return granted_; }
    [[nodiscard]] access_level required() const noexcept { return required_; }

    // With a policy (K15): when a rate_limited or usage_exceeded call may be
    // retried, where a time exists (a cost above the burst, or credits without
    // a refill, have none).
    [[nodiscard]] std::optional<timestamp> retry_at() const noexcept { return retry_at_; }
    // The key's usage after an allowed call with a policy: the host stores it
    // (rate state, credits, lastUsedAt). nullopt when denied (nothing changed)
    // or when the call was checked without a policy.
    [[nodiscard]] const std::optional<key_usage>& usage() const noexcept { return usage_; }
    // For K16's answer headers, where the key has a rate limit: calls of cost 1
    // left now, and when the whole burst is available again.
    [[nodiscard]] std::optional<std::uint64_t> rate_remaining() const noexcept {
        return has_rate_ ? std::optional<std::uint64_t>(rate_remaining_) : std::nullopt;
    }
    [[nodiscard]] std::optional<timestamp> rate_reset() const noexcept {
        return has_rate_ ? std::optional<timestamp>(rate_reset_) : std::nullopt;
    }
    // Where the key has usage credits: what is left (after this call when allowed).
    [[nodiscard]] std::optional<std::uint64_t> credits_remaining() const noexcept { return credits_remaining_; }

    [[nodiscard]] KEYHOOK_INLINE std::string message() const;

    friend bool operator==(const authorization& a, const authorization& b) noexcept { return is_equal(a, b); }
    friend bool operator!=(const authorization& a, const authorization& b) noexcept { return !(a == b); }
    friend std::ostream& operator<<(std::ostream& os, const authorization& x) { return print_to(os, x); }

private:
    friend authorization authorize(const key_index&, std::string_view, std::string_view, const api_family&,
                                   resource_ref, access_level, timestamp) noexcept;
    friend authorization authorize(const key_index&, const http_headers&, const api_family&, resource_ref, access_level,
                                   timestamp) noexcept;
    friend struct detail::authorizer;

    std::optional<denial_reason> reason_ = denial_reason::missing_key;
    const key_index* index_ = nullptr;  // where entry_ is
    const key_index::entry* entry_ = nullptr;
    key_status status_ = key_status::revoked;
    access_level granted_ = access_level::none;
    access_level required_ = access_level::none;
    std::optional<timestamp> retry_at_;
    std::optional<key_usage> usage_;
    std::optional<std::uint64_t> credits_remaining_;
    std::uint64_t rate_remaining_ = 0;
    timestamp rate_reset_{};
    bool has_rate_ = false;

    static KEYHOOK_INLINE bool is_equal(const authorization& a, const authorization& b) noexcept;
    static KEYHOOK_INLINE std::ostream& print_to(std::ostream& os, const authorization& x);
};

// K15's last two checks on their own: K13's rate limit, then K14's credits,
// for one call of `cost` at `now` on a key's policy and usage. authorize()
// makes them once the key's other checks passed; a host that keeps the usage
// elsewhere (a database deciding for many gateways, K17) makes them there,
// with the same arithmetic. Allocates nothing.
struct limits_decision {
    std::optional<denial_reason> reason;             // nullopt, rate_limited or usage_exceeded
    key_usage usage;                                 // after the call when allowed (lastUsedAt = now), else as given
    std::optional<timestamp> retry_at;               // when denied, where a time exists (as authorization::retry_at)
    std::optional<std::uint64_t> rate_remaining;     // with a rate limit: calls of cost 1 left now
    std::optional<timestamp> rate_reset;             // with a rate limit: when the whole burst is back
    std::optional<std::uint64_t> credits_remaining;  // with credits, unless the rate limit denied first

    [[nodiscard]] bool allowed() const noexcept { return !reason; }
};
[[nodiscard]] KEYHOOK_INLINE limits_decision check_limits(const key_limits& limits, std::uint64_t cost,
                                                          timestamp now) noexcept;

// What a call brings besides its headers (K12 to K15): the caller's address,
// and its cost (K13 and K14 spend the same cost; 0 checks without spending).
struct call_context {
    ip_address caller;
    std::uint64_t cost = 1;
};

namespace detail {
// A borrowed host callable: key id -> const key_limits* (nullptr: no policy).
struct limits_lookup {
    const void* object = nullptr;
    const key_limits* (*call)(const void*, std::string_view) = nullptr;
};
struct authorizer {
    // The steps the overloads of authorize share; each sets the reason it checks.
    static KEYHOOK_INLINE bool headers_agree(authorization& a, const http_headers& headers, std::string_view& key,
                                             std::string_view& tenant) noexcept;
    static KEYHOOK_INLINE const key_index::entry* find_active(authorization& a, const key_index& index,
                                                              std::string_view key, std::string_view tenant,
                                                              timestamp now) noexcept;
    static KEYHOOK_INLINE bool permitted(authorization& a, const key_index& index, const key_index::entry& e,
                                         const api_family& family, resource_ref resource) noexcept;
    static KEYHOOK_INLINE authorization check(const key_index& index, const http_headers& headers,
                                              const api_family& family, resource_ref resource, access_level needed,
                                              timestamp now, const call_context& call, limits_lookup limits);
};
}  // namespace detail

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

// K15: K10's checks and the key's policy, in this order: headers, key of the
// tenant, Active, caller address (K12), API family, access level, rate limit
// (K13), credits (K14). `find_limits(id)` (id: std::string_view) returns a
// pointer to the host's key_limits of that key, or nullptr for a key without a
// policy; it is called once, for a key found Active and of the tenant. An
// allowed call returns the key's new usage in usage() (rate state, credits,
// lastUsedAt = now), which the host stores; a denied one changes nothing.
// Allocates nothing unless find_limits does; an exception of find_limits
// propagates.
template <class FindLimits>
[[nodiscard]] authorization authorize(const key_index& index, const http_headers& headers, const api_family& family,
                                      resource_ref resource, access_level needed, timestamp now,
                                      const call_context& call, const FindLimits& find_limits) {
    const detail::limits_lookup lookup{&find_limits, [](const void* f, std::string_view id) -> const key_limits* {
                                           return (*static_cast<const FindLimits*>(f))(id);
                                       }};
    return detail::authorizer::check(index, headers, family, resource, needed, now, call, lookup);
}

// An authorization reads its key's id from the index (key(), message()): a temporary index would dangle.
authorization authorize(const key_index&& index, std::string_view key, std::string_view tenant,
                        const api_family& family, resource_ref resource, access_level needed, timestamp now) = delete;
authorization authorize(const key_index&& index, const http_headers& headers, const api_family& family,
                        resource_ref resource, access_level needed, timestamp now) = delete;

}  // namespace keyhook

#if KEYHOOK_DEFINITIONS
#include "keyhook/impl/authorization.ipp"
#endif
