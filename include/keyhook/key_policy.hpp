// keyhook: what a key may do besides its permissions (rules K12 to K14):
// the caller addresses it may be used from, its rate limit (rate_limit.hpp)
// and its usage credits. The policy is configuration; the usage (rate state,
// credits left, last use) is state the host keeps and authorize() returns
// changed when a call is allowed (K15).
#pragma once

#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "keyhook/config.hpp"
#include "keyhook/detail/enum_names.hpp"
#include "keyhook/error.hpp"
#include "keyhook/ip_address.hpp"
#include "keyhook/rate_limit.hpp"
#include "keyhook/result.hpp"
#include "keyhook/timestamps.hpp"

namespace keyhook {

// K12: an IPv4 or IPv6 CIDR range. The address is kept with its host bits
// cleared, so "10.1.2.3/8" and "10.0.0.0/8" are the same range; a range
// inside the IPv4-mapped block (::ffff:10.0.0.0/104) is kept as the IPv4
// range it names (10.0.0.0/8).
class address_range {
public:
    address_range() = default;  // 0.0.0.0/0
    // Errors: invalid_value for a prefix longer than the family allows.
    [[nodiscard]] static KEYHOOK_INLINE result<address_range> try_make(const ip_address& address, unsigned prefix);

    [[nodiscard]] const ip_address& network() const noexcept { return network_; }
    [[nodiscard]] unsigned prefix_length() const noexcept { return prefix_; }

    // Whether `ip` is in the range. An IPv4-mapped IPv6 address (::ffff:a.b.c.d)
    // is in an IPv4 range when the address it carries is, and in an IPv6 range
    // (such as ::/0) by its own form.
    [[nodiscard]] KEYHOOK_INLINE bool contains(const ip_address& ip) const noexcept;

    friend bool operator==(const address_range& a, const address_range& b) noexcept {
        return a.network_ == b.network_ && a.prefix_ == b.prefix_;
    }
    friend bool operator!=(const address_range& a, const address_range& b) noexcept { return !(a == b); }
    friend std::ostream& operator<<(std::ostream& os, const address_range& x) { return print_to(os, x); }

private:
    ip_address network_;
    unsigned prefix_ = 0;

    static KEYHOOK_INLINE std::ostream& print_to(std::ostream& os, const address_range& x);
};

// "a.b.c.d/n" or "v6/n"; an address without "/n" is a single address (/32,
// /128). Errors: invalid_value at path "range", naming the input.
[[nodiscard]] KEYHOOK_INLINE result<address_range> try_parse_address_range(std::string_view text);
[[nodiscard]] KEYHOOK_INLINE address_range parse_address_range(std::string_view text);
[[nodiscard]] KEYHOOK_INLINE std::string to_string(const address_range& r);

// K12: an empty list allows every address.
[[nodiscard]] KEYHOOK_INLINE bool address_allowed(const std::vector<address_range>& ranges,
                                                  const ip_address& caller) noexcept;

// K14: when credits are refilled. Daily at 00:00:00 UTC, or monthly at
// 00:00:00 UTC on `day` (1 to 31; a shorter month's last day).
enum class refill_period { daily, monthly };

namespace detail {
template <>
struct enum_names<refill_period> {
    static constexpr std::string_view values[] = {"daily", "monthly"};
};
}  // namespace detail

struct credit_refill {
    refill_period period = refill_period::daily;
    std::uint64_t amount = 0;  // what `remaining` is set to (not added to)
    unsigned day = 1;          // monthly only

    // Derived from the member table (detail/key_policy_table.hpp): day compared for monthly refills only.
    friend bool operator==(const credit_refill& a, const credit_refill& b) noexcept { return is_equal(a, b); }
    friend bool operator!=(const credit_refill& a, const credit_refill& b) noexcept { return !(a == b); }

private:
    static KEYHOOK_INLINE bool is_equal(const credit_refill& a, const credit_refill& b) noexcept;
};

// The first refill instant strictly after `t`.
[[nodiscard]] KEYHOOK_INLINE timestamp next_refill_after(const credit_refill& refill, timestamp t) noexcept;
// The last refill instant at or before `t`.
[[nodiscard]] KEYHOOK_INLINE timestamp last_refill_at_or_before(const credit_refill& refill, timestamp t) noexcept;

// The credits of a key, as the host keeps them.
struct credit_state {
    std::uint64_t remaining = 0;
    timestamp last_refill{};  // a new key's: its creation time

    friend bool operator==(const credit_state& a, const credit_state& b) noexcept {
        return a.remaining == b.remaining && a.last_refill == b.last_refill;
    }
    friend bool operator!=(const credit_state& a, const credit_state& b) noexcept { return !(a == b); }
};

struct credit_decision {
    bool allowed = false;
    credit_state state;                 // after any refill due at `now` and the spending, when allowed
    std::optional<timestamp> retry_at;  // when denied and a refill is set: the next refill instant
};

// K14: refills due after state.last_refill and not after `now` set `remaining`
// to the amount; then a cost of at most `remaining` is allowed and spent.
// Denied: nothing changes. Allocates nothing.
[[nodiscard]] KEYHOOK_INLINE credit_decision spend_credits(const std::optional<credit_refill>& refill,
                                                           const credit_state& state, std::uint64_t cost,
                                                           timestamp now) noexcept;

// A key's policy: empty members impose nothing.
struct key_policy {
    std::vector<address_range> addresses;  // K12: empty means any address
    std::optional<rate_limit> rate;        // K13
    bool limited_credits = false;          // K14: whether credits apply at all
    std::uint64_t initial_credits = 0;     //      a new key's `remaining`
    std::optional<credit_refill> refill;   //      with credits only

    friend bool operator==(const key_policy& a, const key_policy& b) noexcept { return is_equal(a, b); }
    friend bool operator!=(const key_policy& a, const key_policy& b) noexcept { return !(a == b); }

private:
    static KEYHOOK_INLINE bool is_equal(const key_policy& a, const key_policy& b) noexcept;
};

// What is wrong with a policy: paths "rate.limit", "rate.period",
// "rate.burst", "refill.day" (1 to 31), "refill" (without credits).
[[nodiscard]] KEYHOOK_INLINE std::vector<error> key_policy_problems(const key_policy& policy);

// The state a host keeps per key with a policy (K13, K14, and K15's last use).
struct key_usage {
    rate_state rate;
    credit_state credits;
    std::optional<timestamp> last_used_at;

    // A new key's usage: no calls yet, the policy's initial credits, last refill at `created_at`.
    [[nodiscard]] static key_usage fresh(const key_policy& policy, timestamp created_at) noexcept {
        key_usage u;
        u.credits.remaining = policy.limited_credits ? policy.initial_credits : 0;
        u.credits.last_refill = created_at;
        return u;
    }

    // Derived from the member table (detail/key_policy_table.hpp).
    friend bool operator==(const key_usage& a, const key_usage& b) noexcept { return is_equal(a, b); }
    friend bool operator!=(const key_usage& a, const key_usage& b) noexcept { return !(a == b); }

private:
    static KEYHOOK_INLINE bool is_equal(const key_usage& a, const key_usage& b) noexcept;
};

// A key's policy and usage together, as authorize() reads them.
struct key_limits {
    key_policy policy;
    key_usage usage;
};

}  // namespace keyhook

#if KEYHOOK_DEFINITIONS
// The member table, which includes the definitions (impl/key_policy.ipp) at its end.
#include "keyhook/detail/key_policy_table.hpp"
#endif
