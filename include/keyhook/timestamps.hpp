// keyhook: timestamps (rules T1 to T4). Instants are std::chrono time points of
// microsecond precision on the system clock; parsing and writing are direct
// (no iostreams), with date's civil-calendar arithmetic.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>

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

// The parser behind parse_timestamp: false on anything T1 does not accept.
inline bool parse_timestamp_into(std::string_view s, timestamp& out) noexcept {
    // Shortest form: "YYYY-MM-DDTHH:MM:SSZ" (20 bytes).
    if (s.size() < 20 || s.size() > 35) return false;
    const char* p = s.data();
    int year = 0, month = 0, day = 0, hour = 0, minute = 0, second = 0;
    if (!read_digits(p, 4, year) || p[4] != '-' || !read_digits(p + 5, 2, month) || p[7] != '-' ||
        !read_digits(p + 8, 2, day) || (p[10] != 'T' && p[10] != 't') || !read_digits(p + 11, 2, hour) ||
        p[13] != ':' || !read_digits(p + 14, 2, minute) || p[16] != ':' || !read_digits(p + 17, 2, second))
        return false;
    if (year < 1 || month < 1 || month > 12 || day < 1 || hour > 23 || minute > 59 || second > 60) return false;
    const date::year_month_day ymd{date::year{year}, date::month{static_cast<unsigned>(month)},
                                   date::day{static_cast<unsigned>(day)}};
    if (!ymd.ok()) return false;
    if (second == 60) second = 59;  // T2: a leap second reads as the second before it

    std::size_t i = 19;
    std::int64_t micros = 0;
    if (p[i] == '.') {
        ++i;
        int digits = 0;
        while (i < s.size() && is_digit(p[i])) {
            if (digits < 6) micros = micros * 10 + (p[i] - '0');
            ++digits;
            ++i;
        }
        if (digits < 1 || digits > 9) return false;
        for (int d = digits; d < 6; ++d) micros *= 10;  // T3: digits past the sixth are dropped
    }
    if (i >= s.size()) return false;
    std::int64_t offset_minutes = 0;
    const char zone = p[i];
    if (zone == 'Z' || zone == 'z') {
        ++i;
    } else if (zone == '+' || zone == '-') {
        int oh = 0, om = 0;
        if (s.size() - i != 6 || !read_digits(p + i + 1, 2, oh) || p[i + 3] != ':' || !read_digits(p + i + 4, 2, om) ||
            oh > 23 || om > 59)
            return false;
        offset_minutes = (oh * 60 + om) * (zone == '+' ? 1 : -1);
        i += 6;
    } else {
        return false;
    }
    if (i != s.size()) return false;

    const auto local = date::sys_days{ymd}.time_since_epoch();
    const timestamp t{std::chrono::duration_cast<microseconds>(local) +
                      std::chrono::hours{hour} + std::chrono::minutes{minute - offset_minutes} +
                      std::chrono::seconds{second} + microseconds{micros}};
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
    return error{errc::invalid_timestamp, {}, "expected an ISO 8601 timestamp, got " + detail::quote_input(text)};
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
