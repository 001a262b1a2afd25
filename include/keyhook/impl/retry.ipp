#pragma once
// keyhook: definitions of retry.hpp.

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "keyhook/retry.hpp"

namespace keyhook {

namespace detail {

constexpr bool is_ows(char c) noexcept { return c == ' ' || c == '\t'; }

// RFC 9110: a delta-seconds too large to represent is read as 2^31.
inline constexpr std::int64_t max_delta_seconds = std::int64_t{1} << 31;

KEYHOOK_INLINE bool parse_delta_seconds(std::string_view s, std::chrono::seconds& out) noexcept {
    if (s.empty()) return false;
    std::int64_t v = 0;
    for (const char c : s) {
        if (!is_digit(c)) return false;
        if (v < max_delta_seconds) v = v * 10 + (c - '0');
    }
    out = std::chrono::seconds{v < max_delta_seconds ? v : max_delta_seconds};
    return true;
}

// IMF-fixdate, "Sun, 06 Nov 1994 08:49:37 GMT": exactly 29 bytes, the day name
// matching the date.
KEYHOOK_INLINE bool parse_imf_fixdate(std::string_view s, timestamp& out) noexcept {
    static constexpr std::string_view days[] = {"Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"};
    static constexpr std::string_view months[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                                  "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
    if (s.size() != 29 || s.substr(3, 2) != ", " || s[7] != ' ' || s[11] != ' ' || s[16] != ' ' || s[19] != ':' ||
        s[22] != ':' || s.substr(25) != " GMT")
        return false;
    unsigned weekday = 7;
    for (unsigned i = 0; i < 7; ++i)
        if (s.substr(0, 3) == days[i]) weekday = i;
    unsigned month = 0;
    for (unsigned i = 0; i < 12; ++i)
        if (s.substr(8, 3) == months[i]) month = i + 1;
    int day = 0, year = 0, hour = 0, minute = 0, second = 0;
    const char* p = s.data();
    if (weekday == 7 || month == 0 || !read_digits(p + 5, 2, day) || !read_digits(p + 12, 4, year) ||
        !read_digits(p + 17, 2, hour) || !read_digits(p + 20, 2, minute) || !read_digits(p + 23, 2, second))
        return false;
    // GMT is UTC: a leap second only at 23:59:60 (T2, as for timestamps).
    if (year < 1 || hour > 23 || minute > 59 || second > 60 || (second == 60 && (hour != 23 || minute != 59)))
        return false;
    // The civil-calendar arithmetic of timestamps.hpp, not date.h: parsing
    // date.h would cost every translation unit that includes retry.hpp.
    const auto y = static_cast<unsigned>(year);
    if (day < 1 || static_cast<unsigned>(day) > detail::days_in_month(y, month)) return false;
    const std::int64_t day_number = detail::days_from_civil(y, month, static_cast<unsigned>(day));
    // 1970-01-01 was a Thursday (4); weekdays count from Sunday (0).
    if (static_cast<unsigned>(((day_number % 7) + 11) % 7) != weekday) return false;
    if (second == 60) second = 59;
    out = timestamp{microseconds{day_number * detail::micros_per_day} + std::chrono::hours{hour} +
                    std::chrono::minutes{minute} + std::chrono::seconds{second}};
    return true;
}

}  // namespace detail

KEYHOOK_INLINE result<retry_after> try_parse_retry_after(std::string_view value) {
    std::string_view s = value;
    while (!s.empty() && detail::is_ows(s.front())) s.remove_prefix(1);
    while (!s.empty() && detail::is_ows(s.back())) s.remove_suffix(1);
    std::chrono::seconds d{};
    if (detail::parse_delta_seconds(s, d)) return retry_after::delay(d);
    timestamp t{};
    if (detail::parse_imf_fixdate(s, t)) return retry_after::at(t);
    return error{errc::invalid_header, "Retry-After",
                 "expected delta-seconds or an IMF-fixdate, got " + detail::quote_input(value)};
}

KEYHOOK_INLINE retry_after parse_retry_after(std::string_view value) { return try_parse_retry_after(value).value(); }

KEYHOOK_INLINE std::ostream& retry_after::print_to(std::ostream& os, const retry_after& r) {
    if (!r.is_delay()) return os << "retry_after(at " << format_timestamp(r.time_value()) << ')';
    return os << "retry_after(" << r.delay_value().count() << " s)";
}

KEYHOOK_INLINE std::ostream& attempt_outcome::print_to(std::ostream& os, const attempt_outcome& o) {
    switch (o.what()) {
        case attempt_outcome::kind::http_response: return os << "HTTP " << *o.status();
        case attempt_outcome::kind::transport_failure: return os << "transport failure";
        case attempt_outcome::kind::timed_out: return os << "timed out";
    }
    return os;
}

KEYHOOK_INLINE std::ostream& delivery_attempt::print_to(std::ostream& os, const delivery_attempt& a) {
    os << "attempt(" << format_timestamp(a.sent_at) << ", " << a.outcome;
    if (a.retry_after) os << ", " << *a.retry_after;
    return os << ')';
}

KEYHOOK_INLINE std::ostream& retry_decision::print_to(std::ostream& os, const retry_decision& d) {
    switch (d.what) {
        case retry_decision::action::send:
            return os << "send attempt " << d.attempt << " at " << format_timestamp(d.send_at);
        case retry_decision::action::succeeded: return os << "succeeded on attempt " << d.attempt;
        case retry_decision::action::give_up: return os << "give up after attempt " << d.attempt;
        case retry_decision::action::disable_webhook:
            return os << "disable the webhook (410 on attempt " << d.attempt << ')';
    }
    return os;
}

namespace detail {

KEYHOOK_INLINE std::optional<error> check_retry_policy(const retry_policy& p) {
    if (p.schedule.empty()) return error{errc::invalid_value, "policy.schedule", "at least one attempt is needed"};
    for (std::size_t i = 0; i < p.schedule.size(); ++i)
        if (p.schedule[i] < retry_policy::duration::zero())
            return error{errc::out_of_range, path_index("policy.schedule", i), "a wait must not be negative"};
    if (p.max_jitter_percent > 100)
        return error{errc::out_of_range, "policy.max_jitter_percent",
                     "expected 0 to 100, got " + std::to_string(p.max_jitter_percent)};
    if (p.max_retry_after < retry_policy::duration::zero())
        return error{errc::out_of_range, "policy.max_retry_after", "must not be negative"};
    return std::nullopt;
}

KEYHOOK_INLINE result<retry_decision> plan_after_checks(const std::vector<delivery_attempt>& history, timestamp now,
                                                        const retry_policy& policy, jitter_source& jitter) {
    using action = retry_decision::action;
    for (std::size_t i = 0; i < history.size(); ++i) {
        if (history[i].outcome.succeeded()) return retry_decision{action::succeeded, {}, i + 1};
        if (history[i].outcome.gone()) return retry_decision{action::disable_webhook, {}, i + 1};
    }
    const std::size_t made = history.size();
    if (made >= policy.max_attempts()) return retry_decision{action::give_up, {}, made};

    const timestamp from = made == 0 ? now : history.back().sent_at;
    auto wait = policy.schedule[made];
    if (wait > retry_policy::duration::zero() && policy.max_jitter_percent > 0) {
        unsigned char bytes[4] = {};
        if (auto e = jitter.draw(bytes)) return std::move(*e);
        const std::uint32_t u = (std::uint32_t{bytes[0]} << 24) | (std::uint32_t{bytes[1]} << 16) |
                                (std::uint32_t{bytes[2]} << 8) | std::uint32_t{bytes[3]};
        const std::int64_t max_extra =
            wait.count() / 100 * policy.max_jitter_percent + wait.count() % 100 * policy.max_jitter_percent / 100;
        wait = add_saturating(wait, retry_policy::duration{scale_jitter(max_extra, u)});
    }
    // Saturating sums (T3, time arithmetic): a wait or a cap of duration::max()
    // means "not before the end of time", never a time in the past.
    timestamp at = add_saturating(from, wait);
    if (made > 0) {
        const auto& last = history.back();
        if (last.outcome.asks_to_wait() && last.retry_after) {
            timestamp asked = last.retry_after->resolve(last.sent_at);
            const timestamp cap = add_saturating(last.sent_at, policy.max_retry_after);
            if (asked > cap) asked = cap;
            if (asked > at) at = asked;
        }
    }
    if (at < now) at = now;
    return retry_decision{action::send, at, made + 1};
}

}  // namespace detail

KEYHOOK_INLINE bool delivery_attempt::is_equal(const delivery_attempt& a, const delivery_attempt& b) {
    return a.sent_at == b.sent_at && a.outcome == b.outcome && a.retry_after == b.retry_after;
}

KEYHOOK_INLINE bool retry_policy::is_equal(const retry_policy& a, const retry_policy& b) {
    return a.schedule == b.schedule && a.max_jitter_percent == b.max_jitter_percent &&
           a.max_retry_after == b.max_retry_after;
}

}  // namespace keyhook
