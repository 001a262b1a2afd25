#pragma once
// keyhook: definitions of rate_limit.hpp.

#include <algorithm>
#include <string>

#include "keyhook/rate_limit.hpp"

namespace keyhook {

namespace detail {
inline bool rate_window_fits(const rate_limit& l) noexcept {
    if (l.limit == 0 || l.period.count() <= 0) return false;
    const auto t = static_cast<std::uint64_t>(l.emission_interval().count());
    return l.effective_burst() <= static_cast<std::uint64_t>(max_rate_window.count()) / t;
}
}  // namespace detail

KEYHOOK_INLINE std::vector<error> rate_limit_problems(const rate_limit& l) {
    std::vector<error> out;
    if (l.limit == 0) out.push_back({errc::invalid_value, "limit", "the limit must be at least 1 call per period"});
    if (l.period.count() <= 0)
        out.push_back({errc::invalid_value, "period", "the period must be at least 1 microsecond"});
    if (out.empty() && !detail::rate_window_fits(l))
        out.push_back({errc::invalid_value, "burst",
                       "burst x (period / limit) must be at most 100 years, got burst " +
                           std::to_string(l.effective_burst()) + " with an interval of " +
                           std::to_string(l.emission_interval().count()) + " microseconds"});
    return out;
}

KEYHOOK_INLINE rate_decision check_rate(const rate_limit& limit, const rate_state& state, std::uint64_t cost,
                                        timestamp now) noexcept {
    rate_decision d;
    d.state = state;
    if (!detail::rate_window_fits(limit)) return d;
    const std::uint64_t burst = limit.effective_burst();
    const auto t = limit.emission_interval();
    const auto window = t * static_cast<microseconds::rep>(burst);  // fits: rate_window_fits
    const timestamp base = state.tat ? std::max(*state.tat, now) : now;
    // Instants within 2 windows of the clock's ends cannot be computed on: denied, no retry time.
    constexpr auto lowest = timestamp::min() + 2 * max_rate_window;
    constexpr auto highest = timestamp::max() - 2 * max_rate_window;
    if (now < lowest || base > highest) return d;
    const bool fits = cost <= burst;
    const timestamp next = fits ? base + t * static_cast<microseconds::rep>(cost) : base;  // cost <= burst
    const timestamp allowed_at = next - window;
    d.allowed = fits && allowed_at <= now;
    const timestamp tat = d.allowed && cost != 0 ? next : base;
    // Calls of cost 1 left at `now`: how many intervals fit between tat and now + window.
    const auto room = (now + window) - tat;
    d.remaining = room.count() <= 0 ? 0 : static_cast<std::uint64_t>(room.count() / t.count());
    d.reset = std::max(tat, now);
    if (d.allowed) {
        if (cost != 0) d.state.tat = next;
    } else if (fits) {
        d.retry_at = allowed_at;
    }
    return d;
}

}  // namespace keyhook
