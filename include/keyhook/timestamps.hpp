// keyhook: timestamps (rules T1 to T4). Instants are std::chrono time points of
// microsecond precision on the system clock; parsing and writing are direct
// (no iostreams), with plain civil-calendar arithmetic (no date.h needed, so
// the header stays cheap; tests check it against date's).
#pragma once

#include <chrono>
#include <cstdint>
#include <limits>
#include <ratio>
#include <string>
#include <string_view>
#include <type_traits>

#include "keyhook/config.hpp"
#include "keyhook/error.hpp"
#include "keyhook/result.hpp"

namespace keyhook {

using std::chrono::microseconds;

// An instant, UTC, microsecond precision (T3).
using timestamp = std::chrono::time_point<std::chrono::system_clock, microseconds>;

// The clock's reading as a timestamp, rounded down. keyhook never reads the clock
// itself: the host calls this (or builds a timestamp otherwise) and passes `now`.
[[nodiscard]] inline timestamp to_timestamp(std::chrono::system_clock::time_point tp) noexcept {
    return std::chrono::floor<microseconds>(tp);
}

namespace detail {

// Days, the same type as date::days.
using calendar_days = std::chrono::duration<int, std::ratio<86400>>;

inline constexpr std::int64_t micros_per_day = std::int64_t{86400} * 1000000;

// --- Civil calendar (proleptic Gregorian) --------------------------------------
// Counted in 400-year eras of 146097 days, each year starting on 1 March so
// that a leap day ends its year.

constexpr bool is_leap_year(unsigned y) noexcept { return y % 4 == 0 && (y % 100 != 0 || y % 400 == 0); }

// Precondition: 1 <= m <= 12.
constexpr unsigned days_in_month(unsigned y, unsigned m) noexcept {
    if (m == 2) return is_leap_year(y) ? 29 : 28;
    return (m == 4 || m == 6 || m == 9 || m == 11) ? 30 : 31;
}

// Days since 1970-01-01 of the date y-m-d. Precondition: y >= 1, a valid date.
constexpr std::int64_t days_from_civil(unsigned y, unsigned m, unsigned d) noexcept {
    const unsigned march_year = m > 2 ? y : y - 1;  // >= 0
    const unsigned era = march_year / 400;
    const unsigned year_of_era = march_year % 400;
    const unsigned day_of_year = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
    const unsigned day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
    return static_cast<std::int64_t>(era) * 146097 + day_of_era - 719468;  // 719468: 0000-03-01 to 1970-01-01
}

struct civil_date {
    unsigned year = 1970;
    unsigned month = 1;
    unsigned day = 1;
};

// The date of day z since 1970-01-01. Precondition: the date is in year 1 or later.
constexpr civil_date civil_from_days(std::int64_t z) noexcept {
    const auto from_march_0 = static_cast<std::uint64_t>(z + 719468);
    const auto era = static_cast<unsigned>(from_march_0 / 146097);
    const auto day_of_era = static_cast<unsigned>(from_march_0 % 146097);
    const unsigned year_of_era = (day_of_era - day_of_era / 1460 + day_of_era / 36524 - day_of_era / 146096) / 365;
    const unsigned day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    const unsigned month_from_march = (5 * day_of_year + 2) / 153;
    civil_date c;
    c.day = day_of_year - (153 * month_from_march + 2) / 5 + 1;
    c.month = month_from_march < 10 ? month_from_march + 3 : month_from_march - 9;
    c.year = era * 400 + year_of_era + (c.month <= 2 ? 1 : 0);
    return c;
}

}  // namespace detail

// The smallest and greatest instants keyhook reads and writes (T3):
// 0001-01-01T00:00:00Z and 9999-12-31T23:59:59.999999Z.
inline constexpr timestamp min_timestamp{microseconds{detail::days_from_civil(1, 1, 1) * detail::micros_per_day}};
inline constexpr timestamp max_timestamp{
    microseconds{(detail::days_from_civil(9999, 12, 31) + 1) * detail::micros_per_day - 1}};
static_assert(min_timestamp.time_since_epoch().count() == -62135596800000000, "0001-01-01T00:00:00Z");
static_assert(max_timestamp.time_since_epoch().count() == 253402300799999999, "9999-12-31T23:59:59.999999Z");

namespace detail {

// --- Saturating time arithmetic ----------------------------------------------
// Every sum of a time and a duration a caller supplies (a tolerance, a retry
// delay, Retry-After, a period's length) goes through these and the public
// add_saturating, sub_saturating and difference_saturating below: at the ends
// of the 64-bit microsecond range they stop there instead of overflowing
// (which is undefined behaviour and wraps to the far past). See
// docs/security.md.

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

}  // namespace detail

// --- Saturating time arithmetic, public -----------------------------------------
// A time plus or minus a duration that came from outside (a tolerance, a
// window, a delay read from a header, a configured period) without undefined
// behaviour: std::chrono's + and - overflow at the ends of the 64-bit
// microsecond range and wrap to the far past. Each result is exact when it
// fits and stops at timestamp::min() or timestamp::max() (microseconds::min()
// or max() for a difference) otherwise, for any signed integral duration,
// seconds::max() included. constexpr and noexcept.

// t + d, saturating at timestamp::min() and timestamp::max().
template <class Rep, class Period>
[[nodiscard]] constexpr timestamp add_saturating(timestamp t, std::chrono::duration<Rep, Period> d) noexcept {
    return detail::shift_saturating(t, d, 1);
}

// t - d, saturating likewise (d = min() is never negated, which would overflow).
template <class Rep, class Period>
[[nodiscard]] constexpr timestamp sub_saturating(timestamp t, std::chrono::duration<Rep, Period> d) noexcept {
    return detail::shift_saturating(t, d, -1);
}

// a - b, saturating at microseconds::min() and max() (timestamps ~584,000
// years apart do not fit).
[[nodiscard]] constexpr microseconds difference_saturating(timestamp a, timestamp b) noexcept {
    const std::int64_t x = a.time_since_epoch().count(), y = b.time_since_epoch().count();
    if (y < 0 && x > detail::micros_max + y) return microseconds::max();
    if (y > 0 && x < detail::micros_min + y) return microseconds::min();
    return microseconds{x - y};
}

namespace detail {

// The library's own code reaches them as detail::add_saturating (beside the
// sum of two microseconds above) and so on.
using keyhook::add_saturating;
using keyhook::difference_saturating;
using keyhook::sub_saturating;

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

// The parser behind parse_timestamp: false on anything T1 does not accept.
// Runs on every timestamp of every listed record, hence plain arithmetic.
KEYHOOK_INLINE bool parse_timestamp_into(std::string_view s, timestamp& out) noexcept;

// Writes t as "YYYY-MM-DDTHH:MM:SS.fffZ" (fraction_digits 3, sub-millisecond
// part dropped) or with 6 fraction digits. Needs 28 bytes; returns the end.
// Precondition: t within [min_timestamp, max_timestamp].
KEYHOOK_INLINE char* write_timestamp(char* p, timestamp t, int fraction_digits) noexcept;

constexpr timestamp clamp_to_range(timestamp t) noexcept {
    return t < min_timestamp ? min_timestamp : (t > max_timestamp ? max_timestamp : t);
}

}  // namespace detail

// T1 to T3: parses "YYYY-MM-DDTHH:MM:SS[.f{1,9}](Z|+HH:MM|-HH:MM)" into UTC.
// The error (invalid_timestamp, empty path) quotes the input; callers that know
// where the text came from put that in the path.
[[nodiscard]] KEYHOOK_INLINE result<timestamp> try_parse_timestamp(std::string_view text);

[[nodiscard]] KEYHOOK_INLINE timestamp parse_timestamp(std::string_view text);

// T4: "Z", 3 fraction digits for a whole millisecond, else 6. Instants outside
// years 0001..9999 are clamped to that range.
[[nodiscard]] KEYHOOK_INLINE std::string format_timestamp(timestamp t);

// H6: always exactly 3 fraction digits (sub-millisecond part dropped).
[[nodiscard]] KEYHOOK_INLINE std::string format_timestamp_millis(timestamp t);

}  // namespace keyhook

#if KEYHOOK_DEFINITIONS
#include "keyhook/impl/timestamps.ipp"
#endif
