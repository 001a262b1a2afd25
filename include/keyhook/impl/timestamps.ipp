// keyhook: definitions of timestamps.hpp (see config.hpp for when they are compiled).
#pragma once

#include "keyhook/timestamps.hpp"

namespace keyhook {
namespace detail {

KEYHOOK_INLINE bool parse_timestamp_into(std::string_view s, timestamp& out) noexcept {
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

constexpr char* write_2(char* p, unsigned v) noexcept {
    p[0] = static_cast<char>('0' + v / 10);
    p[1] = static_cast<char>('0' + v % 10);
    return p + 2;
}

KEYHOOK_INLINE char* write_timestamp(char* p, timestamp t, int fraction_digits) noexcept {
    // Floor division: instants before 1970 have a negative count.
    const std::int64_t count = t.time_since_epoch().count();
    std::int64_t day = count / micros_per_day;
    std::int64_t in_day = count % micros_per_day;
    if (in_day < 0) {
        in_day += micros_per_day;
        --day;
    }
    const civil_date civil = civil_from_days(day);
    const auto total_us = static_cast<std::uint64_t>(in_day);
    const auto secs = static_cast<unsigned>(total_us / 1000000);
    auto us = static_cast<unsigned>(total_us % 1000000);
    p = write_2(p, civil.year / 100);
    p = write_2(p, civil.year % 100);
    *p++ = '-';
    p = write_2(p, civil.month);
    *p++ = '-';
    p = write_2(p, civil.day);
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

}  // namespace detail

KEYHOOK_INLINE result<timestamp> try_parse_timestamp(std::string_view text) {
    timestamp t{};
    if (detail::parse_timestamp_into(text, t)) return t;
    return detail::timestamp_error({}, text);
}

KEYHOOK_INLINE timestamp parse_timestamp(std::string_view text) { return try_parse_timestamp(text).value(); }

KEYHOOK_INLINE std::string format_timestamp(timestamp t) {
    t = detail::clamp_to_range(t);
    char buf[detail::max_timestamp_text];
    const int digits = t.time_since_epoch().count() % 1000 == 0 ? 3 : 6;
    return std::string(buf, detail::write_timestamp(buf, t, digits));
}

KEYHOOK_INLINE std::string format_timestamp_millis(timestamp t) {
    t = detail::clamp_to_range(t);
    char buf[detail::max_timestamp_text];
    return std::string(buf, detail::write_timestamp(buf, t, 3));
}

}  // namespace keyhook
