// Timestamps (T1-T4): never crash; whatever parses writes back to text that
// parses to the same instant; and keyhook agrees with a reference reading
// written here independently, on BOTH sides (two-sided): keyhook
// accepts exactly what the reference accepts, with the same instant. The
// reference matches T1's grammar with std::regex and checks the calendar, the
// leap-second rule of T2 and the range of T3 with its own arithmetic (a
// day count from 0001-01-01, not date's algorithm that keyhook uses).
// date::parse stays as a third, one-sided opinion on the "Z" forms.
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <regex>
#include <sstream>
#include <string>
#include <string_view>

#include <date/date.h>

#include "fuzz_common.hpp"
#include "keyhook/timestamps.hpp"

namespace {

[[noreturn]] void fail(const char* what, const std::string& text) {
    std::fprintf(stderr, "property violated: %s\n  input: %s\n", what, text.c_str());
    std::abort();
}

bool is_leap_year(std::int64_t y) { return y % 4 == 0 && (y % 100 != 0 || y % 400 == 0); }

std::int64_t month_length(std::int64_t y, std::int64_t m) {
    static constexpr std::array<std::int64_t, 12> lengths{31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    return m == 2 && is_leap_year(y) ? 29 : lengths[static_cast<std::size_t>(m - 1)];
}

// Days from 0001-01-01 to y-m-d (proleptic Gregorian), by counting.
std::int64_t days_since_0001(std::int64_t y, std::int64_t m, std::int64_t d) {
    const std::int64_t py = y - 1;
    std::int64_t days = 365 * py + py / 4 - py / 100 + py / 400;
    for (std::int64_t k = 1; k < m; ++k) days += month_length(y, k);
    return days + d - 1;
}

std::int64_t number(const std::ssub_match& m) { return std::stoll(m.str()); }

// The reference reading of T1-T3: microseconds since 1970-01-01T00:00:00Z, or
// nothing when the text is not a timestamp keyhook must accept.
std::optional<std::int64_t> reference_parse(const std::string& text) {
    static const std::regex grammar(
        R"(^([0-9]{4})-([0-9]{2})-([0-9]{2})[Tt]([0-9]{2}):([0-9]{2}):([0-9]{2})(\.([0-9]{1,9}))?([Zz]|([+-])([0-9]{2}):([0-9]{2}))$)");
    std::smatch m;
    if (!std::regex_match(text, m, grammar)) return std::nullopt;
    const std::int64_t y = number(m[1]), mo = number(m[2]), d = number(m[3]);
    const std::int64_t h = number(m[4]), mi = number(m[5]);
    std::int64_t s = number(m[6]);
    if (y < 1 || mo < 1 || mo > 12 || d < 1 || d > month_length(y, mo)) return std::nullopt;
    if (h > 23 || mi > 59 || s > 60) return std::nullopt;
    std::int64_t offset = 0;  // minutes east of UTC
    if (m[10].matched) {
        const std::int64_t oh = number(m[11]), om = number(m[12]);
        if (oh > 23 || om > 59) return std::nullopt;
        offset = (oh * 60 + om) * (m[10].str() == "+" ? 1 : -1);
    }
    std::int64_t micros = 0;
    if (m[8].matched) {
        std::string digits = m[8].str().substr(0, 6);  // T3: past the sixth, truncated
        digits.resize(6, '0');
        micros = std::stoll(digits);
    }
    // Minutes since 0001-01-01T00:00Z of the UTC instant.
    const std::int64_t utc_minutes = days_since_0001(y, mo, d) * 1440 + h * 60 + mi - offset;
    if (s == 60) {
        // T2: only where the UTC instant is 23:59:60, read as 23:59:59.
        if (((utc_minutes % 1440) + 1440) % 1440 != 1439) return std::nullopt;
        s = 59;
    }
    constexpr std::int64_t epoch_days = 719162;  // 0001-01-01 to 1970-01-01
    const std::int64_t seconds = (utc_minutes - epoch_days * 1440) * 60 + s;
    // T3: years 0001 to 9999 in UTC.
    const std::int64_t first = -epoch_days * 86400;
    const std::int64_t last = (days_since_0001(9999, 12, 31) - epoch_days) * 86400 + 86399;
    if (seconds < first || seconds > last) return std::nullopt;
    return seconds * 1000000 + micros;
}

// date::parse's reading of the "Z" forms with at most 6 fraction digits.
bool date_parse(const std::string& text, keyhook::timestamp& out) {
    if (text.size() < 20 || text.back() != 'Z' || text[10] != 'T') return false;
    std::istringstream in(text);
    date::sys_time<std::chrono::microseconds> tp;
    in >> date::parse("%FT%TZ", tp);
    if (in.fail() || in.peek() != std::char_traits<char>::eof()) return false;
    out = tp;
    return true;
}

}  // namespace

KEYHOOK_FUZZ_TARGET(timestamp) {
    const std::string text(reinterpret_cast<const char*>(data), size);
    const auto parsed = keyhook::try_parse_timestamp(text);
    const auto reference = reference_parse(text);

    // Two-sided: both accept, or both refuse.
    if (!parsed) {
        if (parsed.error().code != keyhook::errc::invalid_timestamp) fail("wrong error kind", text);
        if (reference) fail("keyhook refuses a timestamp the reference accepts", text);
        return 0;
    }
    if (!reference) fail("keyhook accepts a text the reference refuses", text);
    if (parsed->time_since_epoch().count() != *reference) fail("keyhook and the reference read other instants", text);

    const auto written = keyhook::format_timestamp(*parsed);
    const auto again = keyhook::try_parse_timestamp(written);
    if (!again || *again != *parsed) fail("parse, write, parse changed the instant", text);
    if (keyhook::format_timestamp(*again) != written) fail("writing is not stable", text);
    if (!reference_parse(written) || *reference_parse(written) != *reference)
        fail("the written form reads otherwise by the reference", written);

    keyhook::timestamp by_date{};
    const auto digits = text.find('.') == std::string::npos ? 0 : text.size() - text.find('.') - 2;
    const bool leap = text.size() > 18 && text.compare(17, 2, "60") == 0;  // date::parse refuses :60
    if (!leap && digits <= 6 && date_parse(text, by_date) && by_date != *parsed) fail("differs from date::parse", text);
    return 0;
}
