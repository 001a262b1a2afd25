// The forms a program's time option takes on a command line (key_admin
// --from and --until; any program may use them), read with keyhook's public
// timestamp API only:
//
//   now          the program's clock (any case: NOW, Now)
//   YYYY-MM-DD   00:00:00Z of that day (UTC); a day the calendar lacks
//                (2026-02-30, 2025-02-29) is refused
//   a timestamp  rule T1: 2026-12-01T09:30:00Z, 2026-12-01T10:30:00.25+01:00
//   +N<unit>     where the option allows it: N units after a base instant the
//                program names (key_admin: --from when given, else now).
//                Units, lower case only: d (days of 24 hours), h (hours),
//                m (minutes), s (seconds). N is a whole number from 1 (+0d
//                would make an empty period, so it is refused); a result past
//                9999-12-31T23:59:59.999999Z (T3's range) is refused, never
//                wrapped.
//
// A refusal says why and quotes the text as keyhook's own errors quote
// input (escaped, at most 64 bytes: rule P1). time_option() turns it into a
// usage error naming the flag (rule O1: exit 2).
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "keyhook/error.hpp"
#include "keyhook/escape.hpp"
#include "keyhook/result.hpp"
#include "keyhook/timestamps.hpp"
#include "shared/cli.hpp"

namespace examples::cli {

// What --help says of the forms.
inline constexpr const char* time_forms = "now, YYYY-MM-DD (00:00:00Z) or a timestamp (T1)";
inline constexpr const char* relative_time_forms = "+N with d, h, m or s (days, hours, minutes, seconds)";

namespace time_text {

inline bool is_digit(char c) noexcept { return c >= '0' && c <= '9'; }

// "YYYY-MM-DD": the shape only (the calendar is the timestamp parser's).
inline bool looks_like_date(std::string_view s) noexcept {
    if (s.size() != 10 || s[4] != '-' || s[7] != '-') return false;
    for (std::size_t i = 0; i < s.size(); ++i)
        if (i != 4 && i != 7 && !is_digit(s[i])) return false;
    return true;
}

inline keyhook::error refused(std::string why) {
    return keyhook::error{keyhook::errc::invalid_timestamp, {}, std::move(why)};
}

// The microseconds of one unit, or 0 for a letter that is none.
inline std::int64_t unit_micros(char unit) noexcept {
    switch (unit) {
        case 'd': return std::int64_t{86400} * 1000000;
        case 'h': return std::int64_t{3600} * 1000000;
        case 'm': return std::int64_t{60} * 1000000;
        case 's': return std::int64_t{1000000};
        default: return 0;
    }
}

// "+N<unit>" after `base`.
inline keyhook::result<keyhook::timestamp> relative(std::string_view text, keyhook::timestamp base) {
    const std::string shown = keyhook::quoted_input(text);
    const std::string_view digits = text.substr(1, text.size() >= 2 ? text.size() - 2 : 0);
    const std::int64_t unit = text.size() >= 3 ? unit_micros(text.back()) : 0;
    bool all_digits = !digits.empty();
    for (const char c : digits) all_digits = all_digits && is_digit(c);
    if (!all_digits || unit == 0)
        return refused(shown + ": expected +N followed by d (days), h (hours), m (minutes) or s (seconds)");
    // Whatever fits between T3's ends is at most about 3.2e17 microseconds:
    // counted only while it can still land inside them, so nothing overflows.
    const std::int64_t span = (keyhook::max_timestamp - keyhook::min_timestamp).count();
    std::int64_t n = 0;
    for (const char c : digits) {
        n = n * 10 + (c - '0');
        if (n > span / unit) return refused(shown + " ends after the year 9999");
    }
    if (n == 0) return refused(shown + ": the amount must be at least 1 (+0 would make an empty period)");
    const auto t = keyhook::add_saturating(base, std::chrono::microseconds{n * unit});
    if (t > keyhook::max_timestamp) return refused(shown + " ends after the year 9999");
    return t;
}

}  // namespace time_text

// Reads a time option's text. `now` is the program's clock; `relative_base`
// is what +N counts from, or nullopt where the option takes no relative
// form. Errors: errc::invalid_timestamp, the message quoting the text.
[[nodiscard]] inline keyhook::result<keyhook::timestamp> parse_time(
    std::string_view text, keyhook::timestamp now, std::optional<keyhook::timestamp> relative_base = std::nullopt) {
    if (lower(text) == "now") return now;
    if (!text.empty() && text.front() == '+') {
        if (!relative_base)
            return time_text::refused(keyhook::quoted_input(text) + ": a relative time (+N) is not taken here");
        return time_text::relative(text, *relative_base);
    }
    if (time_text::looks_like_date(text)) {
        auto t = keyhook::try_parse_timestamp(std::string(text) + "T00:00:00Z");
        if (!t) return time_text::refused(keyhook::quoted_input(text) + " is not a day of the calendar (YYYY-MM-DD)");
        return *t;
    }
    auto t = keyhook::try_parse_timestamp(text);
    if (t) return *t;
    return time_text::refused("expected " + std::string(time_forms) +
                              (relative_base ? ", or " + std::string(relative_time_forms) : std::string()) + ", got " +
                              keyhook::quoted_input(text));
}

// parse_time, or a usage error naming `flag`: "--until: \"+0d\": the amount ...".
[[nodiscard]] inline keyhook::timestamp time_option(std::string_view flag, std::string_view text,
                                                    keyhook::timestamp now,
                                                    std::optional<keyhook::timestamp> relative_base = std::nullopt) {
    auto t = parse_time(text, now, relative_base);
    if (!t) throw usage_error{std::string(flag) + ": " + t.error().message};
    return *t;
}

}  // namespace examples::cli
