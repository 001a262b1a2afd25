// keyhook: a key's status derived from the clock (rules S1 to S3) and the
// expiry warning indicator (W1 to W3). Pure functions of a record and `now`.
#pragma once

#include <chrono>
#include <optional>
#include <string_view>

#include "keyhook/api_key.hpp"
#include "keyhook/detail/enum_names.hpp"
#include "keyhook/timestamps.hpp"

namespace keyhook {

// S1 for a validity period alone: [from, until) is Active; an empty or inverted
// period is never Active (before `from` it is in the future, after it expired).
[[nodiscard]] constexpr key_status clock_status(timestamp active_from, timestamp expire_at, timestamp now) noexcept {
    if (now < active_from) return key_status::active_in_future;
    if (now >= expire_at) return key_status::expired;
    return key_status::active;
}

// S1: Revoked (the listed status says the key was deactivated) wins; otherwise the clock decides.
[[nodiscard]] constexpr key_status status_at(const api_key& key, timestamp now) noexcept {
    if (key.status == key_status::revoked) return key_status::revoked;
    return clock_status(key.active_from, key.expire_at, now);
}

[[nodiscard]] constexpr bool is_active_at(const api_key& key, timestamp now) noexcept {
    return status_at(key, now) == key_status::active;
}

// The bands of W2, by the key's total duration d = expireAt - activeFrom.
enum class warning_band {
    none,             // d <= 0: the key is never Active, so it never warns
    one_day,          // d <= 1 day: always
    five_days,        // d <= 5 days: from activeFrom + 1 day
    seven_days,       // d <= 7 days: from activeFrom + 4 days
    short_month,      // 7 days < d <= 23 days: from expireAt - 8 days (W2's fallback)
    thirty_one_days,  // 23 days < d <= 31 days: from activeFrom + 23 days
    longer,           // d > 31 days (policy): from expireAt - 8 days
};

template <>
struct detail::enum_names<warning_band> {
    static constexpr std::string_view values[] = {"none",        "one_day",         "five_days", "seven_days",
                                                  "short_month", "thirty_one_days", "longer"};
};

// The final stretch during which keys of 8 to 23 days, and (policy) keys of
// more than 31 days, show the warning.
inline constexpr detail::calendar_days final_warning_stretch{8};

[[nodiscard]] constexpr warning_band warning_band_for(timestamp active_from, timestamp expire_at) noexcept {
    // Saturating: a period from near timestamp::min() to near max() does not fit (T3, saturating time arithmetic).
    const auto d = detail::difference_saturating(expire_at, active_from);
    if (d <= microseconds::zero()) return warning_band::none;
    if (d <= detail::calendar_days{1}) return warning_band::one_day;
    if (d <= detail::calendar_days{5}) return warning_band::five_days;
    if (d <= detail::calendar_days{7}) return warning_band::seven_days;
    if (d <= detail::calendar_days{23}) return warning_band::short_month;
    if (d <= detail::calendar_days{31}) return warning_band::thirty_one_days;
    return warning_band::longer;
}

[[nodiscard]] constexpr warning_band warning_band_of(const api_key& key) noexcept {
    return warning_band_for(key.active_from, key.expire_at);
}

// W1, W2: the instant from which the warning shows, whatever the status; none
// for an empty or inverted period. Valid day N begins at activeFrom + (N-1) days.
[[nodiscard]] constexpr std::optional<timestamp> warning_start_for(timestamp active_from,
                                                                   timestamp expire_at) noexcept {
    switch (warning_band_for(active_from, expire_at)) {
        case warning_band::none: return std::nullopt;
        case warning_band::one_day: return active_from;
        case warning_band::five_days: return detail::add_saturating(active_from, detail::calendar_days{1});
        case warning_band::seven_days: return detail::add_saturating(active_from, detail::calendar_days{4});
        case warning_band::thirty_one_days: return detail::add_saturating(active_from, detail::calendar_days{23});
        case warning_band::short_month:
        case warning_band::longer: return detail::sub_saturating(expire_at, final_warning_stretch);
    }
    return std::nullopt;
}

[[nodiscard]] constexpr std::optional<timestamp> warning_start(const api_key& key) noexcept {
    return warning_start_for(key.active_from, key.expire_at);
}

// W3: the indicator shows only while the key is Active, from its warning start on.
[[nodiscard]] constexpr bool expiry_warning_at(const api_key& key, timestamp now) noexcept {
    if (!is_active_at(key, now)) return false;
    const auto start = warning_start(key);
    return start && now >= *start;
}

}  // namespace keyhook
