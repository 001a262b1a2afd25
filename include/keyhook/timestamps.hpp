// keyhook: timestamps (rules T1 to T4). Instants are std::chrono time points of
// microsecond precision on the system clock; parsing and writing are direct
// (no iostreams), with date's civil-calendar arithmetic.
#pragma once

#include <chrono>
#include <cstdint>
#include <limits>
#include <ratio>
#include <string>
#include <string_view>
#include <type_traits>

#include <date/date.h>

#include "keyhook/error.hpp"

namespace keyhook {

using std::chrono::microseconds;

// An instant, UTC, microsecond precision (T3).
using timestamp = std::chrono::time_point<std::chrono::system_clock, microseconds>;

// The clock's reading as a timestamp, rounded down. keyhook never reads the clock
// itself: the host calls this (or builds a timestamp otherwise) and passes `now`.
[[nodiscard]] inline timestamp to_timestamp(std::chrono::system_clock::time_point tp) noexcept {
    return date::floor<microseconds>(tp);
}

// The smallest and greatest instants keyhook reads and writes (T3).
inline constexpr timestamp min_timestamp{date::sys_days{date::year{1} / 1 / 1}.time_since_epoch()};
inline constexpr timestamp max_timestamp{date::sys_days{date::year{9999} / 12 / 31}.time_since_epoch() +
                                         std::chrono::hours{24} - microseconds{1}};

namespace detail {

// --- Saturating time arithmetic ----------------------------------------------
// Every sum of a time and a duration a caller supplies (a tolerance, a retry
// delay, Retry-After, a period's length) goes through these: at the ends of
// the 64-bit microsecond range they stop there instead of overflowing (which
// is undefined behaviour and wraps to the far past). See docs/security.md.

inline constexpr std::int64_t micros_max = std::numeric_limits<std::int64_t>::max();
inline constexpr std::int64_t micros_min = std::numeric_limits<std::int64_t>::min();

// d in microseconds; a value beyond microseconds' range gives its max() or
// min(). Finer durations (nanoseconds) are truncated towards zero, as
// duration_cast does.
template <class Rep, class Period>
constexpr microseconds saturating_micros(std::chrono::duration<Rep, Period> d) noexcept {
    static_assert(std::is_integral_v<Rep> && std::is_signed_v<Rep>, "a signed integral duration");
    using factor = std::ratio_divide<Period, std::micro>;
    static_assert(factor::num == 1 || factor::den == 1, "a period that is a multiple or a fraction of 1 us");
    const auto v = static_cast<std::int64_t>(d.count());  // every signed Rep of std::chrono fits
    if constexpr (factor::den == 1) {
        if (v > micros_max / factor::num) return microseconds::max();
        if (v < micros_min / factor::num) return microseconds::min();
        return microseconds{v * factor::num};
    } else {
        return microseconds{v / factor::den};
    }
}

constexpr microseconds add_saturating(microseconds a, microseconds b) noexcept {
    const std::int64_t x = a.count(), y = b.count();
    if (y > 0 && x > micros_max - y) return microseconds::max();
    if (y < 0 && x < micros_min - y) return microseconds::min();
    return microseconds{x + y};
}

// t + sign * d, exact when it fits, else timestamp::min() or max(). A coarse d
// (seconds::max()) does not fit in microseconds, so it is added in at most
// three pieces that each fit: partial sums of one sign only move one way, so
// saturating each step gives the saturated exact sum. What is left after three
// pieces is more than 2^64 us, beyond any timestamp's reach.
template <class Rep, class Period>
constexpr timestamp shift_saturating(timestamp t, std::chrono::duration<Rep, Period> d, int sign) noexcept {
    static_assert(std::is_integral_v<Rep> && std::is_signed_v<Rep>, "a signed integral duration");
    using factor = std::ratio_divide<Period, std::micro>;
    static_assert(factor::num == 1 || factor::den == 1, "a period that is a multiple or a fraction of 1 us");
    microseconds acc = t.time_since_epoch();
    if constexpr (factor::den == 1) {
        static_assert(factor::num < micros_max / 4, "a period shorter than 2^61 us");
        constexpr std::int64_t limit = micros_max / factor::num;  // the largest count whose product fits
        auto v = static_cast<std::int64_t>(d.count());
        for (int i = 0; i < 3 && v != 0; ++i) {
            const std::int64_t piece = v > limit ? limit : (v < -limit ? -limit : v);
            acc = add_saturating(acc, microseconds{sign * piece * factor::num});
            v -= piece;
        }
        if (v != 0) return (v > 0) == (sign > 0) ? timestamp::max() : timestamp::min();
    } else {
        const auto v = static_cast<std::int64_t>(d.count()) / factor::den;  // truncated, fits
        acc = add_saturating(acc, microseconds{sign * v});
    }
    return timestamp{acc};
}

// t + d, saturating at timestamp::min() and timestamp::max().
template <class Rep, class Period>
constexpr timestamp add_saturating(timestamp t, std::chrono::duration<Rep, Period> d) noexcept {
    return shift_saturating(t, d, 1);
}

// t - d, saturating likewise (d = min() is never negated, which would overflow).
template <class Rep, class Period>
constexpr timestamp sub_saturating(timestamp t, std::chrono::duration<Rep, Period> d) noexcept {
    return shift_saturating(t, d, -1);
}

// a - b, saturating at microseconds::min() and max() (timestamps ~584,000
// years apart do not fit).
constexpr microseconds difference_saturating(timestamp a, timestamp b) noexcept {
    const std::int64_t x = a.time_since_epoch().count(), y = b.time_since_epoch().count();
    if (y < 0 && x > micros_max + y) return microseconds::max();
    if (y > 0 && x < micros_min + y) return microseconds::min();
    return microseconds{x - y};
}

// --- Text ----------------------------------------------------------------------

inline constexpr std::size_t max_timestamp_text = 32;

constexpr bool is_digit(char c) noexcept { return c >= '0' && c <= '9'; }

// Reads exactly n digits at p; false if any is not a digit.
constexpr bool read_digits(const char* p, int n, int& out) noexcept {
    int v = 0;
    for (int i = 0; i < n; ++i) {
        if (!is_digit(p[i])) return false;
        v = v * 10 + (p[i] - '0');
    }
    out = v;
    return true;
}

// The digit at p[i] as 0..9, or a value above 9 for any other byte.
constexpr unsigned digit_at(const char* p, std::size_t i) noexcept {
    return static_cast<unsigned>(static_cast<unsigned char>(p[i])) - static_cast<unsigned>('0');
}

// Two digits at p[i], p[i+1] as a number; sets `bad` when either is not a digit.
constexpr unsigned two_digits(const char* p, std::size_t i, unsigned& bad) noexcept {
    const unsigned hi = digit_at(p, i), lo = digit_at(p, i + 1);
    bad |= static_cast<unsigned>(hi > 9) | static_cast<unsigned>(lo > 9);
    return hi * 10 + lo;
}

// Civil-calendar arithmetic is date's (year_month_day to sys_days, the last
// day of a month); only the text handling around it is keyhook's own.
constexpr unsigned days_in_month(unsigned y, unsigned m) noexcept {
    return static_cast<unsigned>((date::year{static_cast<int>(y)} / date::month{m} / date::last).day());
}

constexpr std::int64_t days_from_civil(unsigned y, unsigned m, unsigned d) noexcept {
    return date::sys_days{date::year{static_cast<int>(y)} / date::month{m} / date::day{d}}.time_since_epoch().count();
}

// The parser behind parse_timestamp: false on anything T1 does not accept.
// Runs on every timestamp of every listed record, hence plain arithmetic.
inline bool parse_timestamp_into(std::string_view s, timestamp& out) noexcept {
    // Shortest form: "YYYY-MM-DDTHH:MM:SSZ" (20 bytes); longest: 9 fraction
    // digits and an offset (35 bytes).
    const std::size_t n = s.size();
    if (n < 20 || n > 35) return false;
    const char* p = s.data();
    // Every check at once, without a branch each; (c | 0x20) == 't' accepts 'T' and 't' only.
    unsigned bad = static_cast<unsigned>(p[4] != '-') | static_cast<unsigned>(p[7] != '-') |
                   static_cast<unsigned>((p[10] | 0x20) != 't') | static_cast<unsigned>(p[13] != ':') |
                   static_cast<unsigned>(p[16] != ':');
    const unsigned year = two_digits(p, 0, bad) * 100 + two_digits(p, 2, bad);
    const unsigned month = two_digits(p, 5, bad);
    const unsigned day = two_digits(p, 8, bad);
    const unsigned hour = two_digits(p, 11, bad);
    const unsigned minute = two_digits(p, 14, bad);
    unsigned second = two_digits(p, 17, bad);
    if (bad != 0) return false;
    if (year < 1 || month < 1 || month > 12 || day < 1 || day > days_in_month(year, month) || hour > 23 ||
        minute > 59 || second > 60)
        return false;

    std::size_t i = 19;
    std::int64_t micros = 0;
    if (p[i] == '.') {
        ++i;
        int digits = 0;
        while (i < n && is_digit(p[i])) {
            if (digits < 6) micros = micros * 10 + (p[i] - '0');
            ++digits;
            ++i;
        }
        if (digits < 1 || digits > 9) return false;
        for (int k = digits; k < 6; ++k) micros *= 10;  // T3: digits past the sixth are dropped
    }
    if (i >= n) return false;
    std::int64_t offset_minutes = 0;
    const char zone = p[i];
    if (zone == 'Z' || zone == 'z') {
        ++i;
    } else if (zone == '+' || zone == '-') {
        if (n - i != 6 || p[i + 3] != ':') return false;
        const unsigned oh1 = digit_at(p, i + 1), oh2 = digit_at(p, i + 2), om1 = digit_at(p, i + 4),
                       om2 = digit_at(p, i + 5);
        if (oh1 > 9 || oh2 > 9 || om1 > 9 || om2 > 9) return false;
        const unsigned oh = oh1 * 10 + oh2, om = om1 * 10 + om2;
        if (oh > 23 || om > 59) return false;
        offset_minutes = static_cast<std::int64_t>(oh * 60 + om) * (zone == '+' ? 1 : -1);
        i += 6;
    } else {
        return false;
    }
    if (i != n) return false;
    if (second == 60) {
        // T2: a leap second only where the instant in UTC is 23:59:60, on any
        // day (no table of the days that had one); it reads as 23:59:59 with
        // its fraction kept, as java.time's Instant parser does.
        const std::int64_t local_minute = static_cast<std::int64_t>(hour * 60 + minute);
        const std::int64_t utc_minute = ((local_minute - offset_minutes) % 1440 + 1440) % 1440;
        if (utc_minute != 23 * 60 + 59) return false;
        second = 59;
    }

    const std::int64_t secs = days_from_civil(year, month, day) * 86400 + static_cast<std::int64_t>(hour) * 3600 +
                              (static_cast<std::int64_t>(minute) - offset_minutes) * 60 + second;
    const timestamp t{microseconds{secs * 1000000 + micros}};
    if (t < min_timestamp || t > max_timestamp) return false;
    out = t;
    return true;
}

inline char* write_2(char* p, unsigned v) noexcept {
    p[0] = static_cast<char>('0' + v / 10);
    p[1] = static_cast<char>('0' + v % 10);
    return p + 2;
}

// Writes t as "YYYY-MM-DDTHH:MM:SS.fffZ" (fraction_digits 3, sub-millisecond
// part dropped) or with 6 fraction digits. Needs 28 bytes; returns the end.
// Precondition: t within [min_timestamp, max_timestamp].
inline char* write_timestamp(char* p, timestamp t, int fraction_digits) noexcept {
    const auto day_point = date::floor<date::days>(t);
    const date::year_month_day ymd{day_point};
    const auto in_day = t - day_point;  // non-negative
    const auto total_us = static_cast<std::uint64_t>(in_day.count());
    const auto secs = static_cast<unsigned>(total_us / 1000000);
    auto us = static_cast<unsigned>(total_us % 1000000);
    const int y = static_cast<int>(ymd.year());
    p = write_2(p, static_cast<unsigned>(y / 100));
    p = write_2(p, static_cast<unsigned>(y % 100));
    *p++ = '-';
    p = write_2(p, static_cast<unsigned>(ymd.month()));
    *p++ = '-';
    p = write_2(p, static_cast<unsigned>(ymd.day()));
    *p++ = 'T';
    p = write_2(p, secs / 3600);
    *p++ = ':';
    p = write_2(p, secs / 60 % 60);
    *p++ = ':';
    p = write_2(p, secs % 60);
    *p++ = '.';
    if (fraction_digits == 3) us /= 1000;
    for (int d = fraction_digits - 1; d >= 0; --d) {
        p[d] = static_cast<char>('0' + us % 10);
        us /= 10;
    }
    p += fraction_digits;
    *p++ = 'Z';
    return p;
}

inline timestamp clamp_to_range(timestamp t) noexcept {
    return t < min_timestamp ? min_timestamp : (t > max_timestamp ? max_timestamp : t);
}

}  // namespace detail

// T1 to T3: parses "YYYY-MM-DDTHH:MM:SS[.f{1,9}](Z|+HH:MM|-HH:MM)" into UTC.
// The error (invalid_timestamp, empty path) quotes the input; callers that know
// where the text came from put that in the path.
[[nodiscard]] inline result<timestamp> try_parse_timestamp(std::string_view text) {
    timestamp t{};
    if (detail::parse_timestamp_into(text, t)) return t;
    return detail::timestamp_error({}, text);
}

[[nodiscard]] inline timestamp parse_timestamp(std::string_view text) { return try_parse_timestamp(text).value(); }

// T4: "Z", 3 fraction digits for a whole millisecond, else 6. Instants outside
// years 0001..9999 are clamped to that range.
[[nodiscard]] inline std::string format_timestamp(timestamp t) {
    t = detail::clamp_to_range(t);
    char buf[detail::max_timestamp_text];
    const int digits = t.time_since_epoch().count() % 1000 == 0 ? 3 : 6;
    return std::string(buf, detail::write_timestamp(buf, t, digits));
}

// H6: always exactly 3 fraction digits (sub-millisecond part dropped).
[[nodiscard]] inline std::string format_timestamp_millis(timestamp t) {
    t = detail::clamp_to_range(t);
    char buf[detail::max_timestamp_text];
    return std::string(buf, detail::write_timestamp(buf, t, 3));
}

}  // namespace keyhook
