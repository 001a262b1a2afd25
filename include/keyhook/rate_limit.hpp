// keyhook: a rate limit as a value (rule K13), the generic cell rate
// algorithm (GCRA). The state is one instant, the decision a pure function of
// the limit, the state, the cost and `now`, so a host may keep the state
// anywhere (in memory, or in a shared store with compare-and-set). Per-key
// limits (K13) and webhook throttling (H11, burst 1) both use it.
//
//   keyhook::rate_limit limit{10, std::chrono::seconds{1}};    // 10 a second, burst 10
//   keyhook::rate_state state;                                 // held by the host
//   auto d = keyhook::check_rate(limit, state, 1, now);
//   if (d.allowed) state = d.state; else retry_at(d.retry_at); // retry_at may be empty
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <vector>

#include "keyhook/config.hpp"
#include "keyhook/error.hpp"
#include "keyhook/result.hpp"
#include "keyhook/timestamps.hpp"

namespace keyhook {

// `limit` calls per `period`, at most `burst` at once (0: the same as `limit`).
struct rate_limit {
    std::uint64_t limit = 1;
    microseconds period{std::chrono::seconds{1}};
    std::uint64_t burst = 0;

    // T = period / limit, in whole microseconds, rounded up (K13).
    [[nodiscard]] microseconds emission_interval() const noexcept {
        if (limit == 0) return period;
        const auto p = static_cast<std::uint64_t>(period.count());
        return microseconds{static_cast<microseconds::rep>(p / limit + (p % limit != 0))};
    }
    [[nodiscard]] std::uint64_t effective_burst() const noexcept { return burst == 0 ? limit : burst; }

    friend bool operator==(const rate_limit& a, const rate_limit& b) noexcept {
        return a.limit == b.limit && a.period == b.period && a.effective_burst() == b.effective_burst();
    }
    friend bool operator!=(const rate_limit& a, const rate_limit& b) noexcept { return !(a == b); }
};

// The longest burst window (burst x T) keyhook accepts: 100 years, so that no
// instant of the arithmetic can overflow.
inline constexpr microseconds max_rate_window = std::chrono::hours{24 * 366 * 100};

// What is wrong with a limit (empty when it is usable): limit and period at
// least 1, burst x T at most max_rate_window. Paths "limit", "period", "burst".
[[nodiscard]] KEYHOOK_INLINE std::vector<error> rate_limit_problems(const rate_limit& limit);

// The host-held state: the theoretical arrival time; unset reads as `now`.
struct rate_state {
    std::optional<timestamp> tat;

    friend bool operator==(const rate_state& a, const rate_state& b) noexcept { return a.tat == b.tat; }
    friend bool operator!=(const rate_state& a, const rate_state& b) noexcept { return !(a == b); }
};

struct rate_decision {
    bool allowed = false;
    rate_state state;                   // the new state when allowed, else the old one
    std::optional<timestamp> retry_at;  // when denied: the earliest time the same call is allowed
    std::uint64_t remaining = 0;        // calls of cost 1 still allowed at `now` (after this one)
    timestamp reset{};                  // when the whole burst is available again

    friend bool operator==(const rate_decision& a, const rate_decision& b) noexcept {
        return a.allowed == b.allowed && a.state == b.state && a.retry_at == b.retry_at && a.remaining == b.remaining &&
               a.reset == b.reset;
    }
    friend bool operator!=(const rate_decision& a, const rate_decision& b) noexcept { return !(a == b); }
};

// K13: next = max(tat, now) + cost x T; allowed when next - burst x T <= now
// (then tat = next), else denied with retry_at = next - burst x T and the state
// unchanged. A cost above the burst is denied with no retry time; a cost of 0
// checks without spending. A limit with problems (rate_limit_problems) is
// denied with no retry time. Allocates nothing.
[[nodiscard]] KEYHOOK_INLINE rate_decision check_rate(const rate_limit& limit, const rate_state& state,
                                                      std::uint64_t cost, timestamp now) noexcept;

}  // namespace keyhook

#if KEYHOOK_DEFINITIONS
#include "keyhook/impl/rate_limit.ipp"
#endif
