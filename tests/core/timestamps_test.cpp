#include "keyhook/timestamps.hpp"

#include <catch2/catch.hpp>
#include <date/date.h>

#include <chrono>
#include <limits>
#include <string>
#include <type_traits>
#include <utility>

using keyhook::format_timestamp;
using keyhook::parse_timestamp;
using keyhook::timestamp;
using keyhook::try_parse_timestamp;

namespace {
timestamp at(int y, unsigned m, unsigned d, int hh = 0, int mm = 0, int ss = 0, long long micros = 0) {
    return timestamp{date::sys_days{date::year{y} / date::month{m} / date::day{d}}.time_since_epoch() +
                     std::chrono::hours{hh} + std::chrono::minutes{mm} + std::chrono::seconds{ss} +
                     std::chrono::microseconds{micros}};
}
}  // namespace

TEST_CASE("T1: accepted forms", "[T1][timestamps]") {
    CHECK(parse_timestamp("2026-01-02T03:04:05Z") == at(2026, 1, 2, 3, 4, 5));
    CHECK(parse_timestamp("2026-01-02t03:04:05z") == at(2026, 1, 2, 3, 4, 5));
    CHECK(parse_timestamp("2026-01-02T03:04:05.1Z") == at(2026, 1, 2, 3, 4, 5, 100000));
    CHECK(parse_timestamp("2026-01-02T03:04:05.62016Z") == at(2026, 1, 2, 3, 4, 5, 620160));
    CHECK(parse_timestamp("2026-01-02T03:04:05.8538786Z") == at(2026, 1, 2, 3, 4, 5, 853878));
    CHECK(parse_timestamp("2026-01-02T03:04:05.123456789Z") == at(2026, 1, 2, 3, 4, 5, 123456));
    CHECK(parse_timestamp("2026-01-02T03:04:05+02:30") == at(2026, 1, 2, 0, 34, 5));
    CHECK(parse_timestamp("2026-01-02T03:04:05-01:00") == at(2026, 1, 2, 4, 4, 5));
    CHECK(parse_timestamp("2026-01-01T00:30:00+01:00") == at(2025, 12, 31, 23, 30, 0));
    CHECK(parse_timestamp("2024-02-29T00:00:00Z") == at(2024, 2, 29));
    CHECK(parse_timestamp("2000-02-29T00:00:00Z") == at(2000, 2, 29));
    CHECK(parse_timestamp("2026-01-02T03:04:05.5+00:00") == at(2026, 1, 2, 3, 4, 5, 500000));
}

TEST_CASE("T2: rejected forms name the input", "[T2][timestamps]") {
    for (const char* bad : {"",
                            "2026-01-02T03:04Z",
                            "2026-13-01T00:00:00Z",
                            "2026-00-01T00:00:00Z",
                            "2026-02-30T00:00:00Z",
                            "2026-02-29T00:00:00Z",
                            "1900-02-29T00:00:00Z",
                            "2026-01-02T24:00:00Z",
                            "2026-01-02T23:60:00Z",
                            "2026-01-02T23:59:61Z",
                            "2026-01-02T03:04:05",
                            "2026-01-02T03:04:05Zx",
                            "2026-01-02T03:04:05Z ",
                            "2026-01-02 03:04:05Z",
                            "2026-01-02T03:04:05.Z",
                            "2026-01-02T03:04:05.1234567890Z",
                            "2026-01-02T03:04:05+0100",
                            "2026-01-02T03:04:05+24:00",
                            "2026-01-02T03:04:05+01:60",
                            "26-01-02T03:04:05Z",
                            "2026-1-02T03:04:05Z",
                            "0000-01-01T00:00:00Z",
                            "+2026-01-02T03:04:05Z",
                            "2026-01-02T03:04:05.+01:00"}) {
        INFO(bad);
        const auto r = try_parse_timestamp(bad);
        REQUIRE_FALSE(r.has_value());
        CHECK(r.error().code == keyhook::errc::invalid_timestamp);
        CHECK(r.error().message == "expected an ISO 8601 timestamp, got \"" + std::string(bad) + "\"");
        CHECK_THROWS_AS(parse_timestamp(bad), keyhook::exception);
    }
}

TEST_CASE("T2: a leap second reads as the second before it", "[T2][timestamps]") {
    CHECK(parse_timestamp("2016-12-31T23:59:60Z") == at(2016, 12, 31, 23, 59, 59));
    // The fraction is kept: 23:59:60.5 reads as 23:59:59.5 (as java.time does).
    CHECK(parse_timestamp("2016-12-31T23:59:60.5Z") == at(2016, 12, 31, 23, 59, 59, 500000));
    CHECK(parse_timestamp("2016-12-31T23:59:60.999999999Z") == at(2016, 12, 31, 23, 59, 59, 999999));
    // So it is written as 23:59:59, and reads back to the same instant.
    CHECK(format_timestamp(parse_timestamp("2016-12-31T23:59:60.5Z")) == "2016-12-31T23:59:59.500Z");
}

// Regression test: the leap second: :60 was accepted at any minute (T2).
TEST_CASE("T2: a leap second is accepted only where the instant in UTC is 23:59:60", "[T2][timestamps]") {
    SECTION("accepted: 23:59:60 in UTC, whatever the offset that writes it") {
        CHECK(parse_timestamp("2016-12-31T23:59:60Z") == at(2016, 12, 31, 23, 59, 59));
        CHECK(parse_timestamp("2016-12-31t23:59:60z") == at(2016, 12, 31, 23, 59, 59));
        CHECK(parse_timestamp("2016-12-31T23:59:60+00:00") == at(2016, 12, 31, 23, 59, 59));
        CHECK(parse_timestamp("2016-12-31T18:59:60-05:00") == at(2016, 12, 31, 23, 59, 59));
        // The local day differs from the UTC day: the rule is on the UTC instant.
        CHECK(parse_timestamp("2017-01-01T05:29:60+05:30") == at(2016, 12, 31, 23, 59, 59));
        CHECK(parse_timestamp("2016-12-31T00:29:60+00:30") == at(2016, 12, 30, 23, 59, 59));
        CHECK(parse_timestamp("2016-12-31T23:58:60-00:01") == at(2017, 1, 1, 0, 0, 0) - std::chrono::seconds{1});
        CHECK(parse_timestamp("2016-12-31T23:59:60.5-00:00") == at(2016, 12, 31, 23, 59, 59, 500000));
        // Any day: keyhook has no table of the days that had a leap second.
        CHECK(parse_timestamp("2026-03-15T23:59:60Z") == at(2026, 3, 15, 23, 59, 59));
        CHECK(parse_timestamp("2024-02-29T23:59:60Z") == at(2024, 2, 29, 23, 59, 59));
        // At the end of the range it is still inside it (23:59:59 of 9999-12-31).
        CHECK(parse_timestamp("9999-12-31T23:59:60Z") == at(9999, 12, 31, 23, 59, 59));
        CHECK(parse_timestamp("9999-12-31T23:59:60.999999Z") == keyhook::max_timestamp);
        CHECK(parse_timestamp("9999-12-31T18:59:60-05:00") == at(9999, 12, 31, 23, 59, 59));
    }
    SECTION("refused: :60 at any other UTC minute, naming the input") {
        for (const char* bad : {"2026-01-02T12:34:60Z", "2026-01-02T00:00:60Z", "2026-01-02T23:58:60Z",
                                "2026-01-02T22:59:60Z", "2026-01-02T00:59:60Z", "2026-01-02T23:00:60Z",
                                "2026-01-02T23:59:60+05:00", "2026-01-02T23:59:60-05:00", "2026-01-02T23:59:60+00:01",
                                "2026-01-02T23:59:60-00:01", "2026-01-02T18:59:60-04:59", "2026-01-02T18:59:60-05:01",
                                "2026-01-02T18:58:60-05:00", "2026-01-02T12:34:60.5Z", "2026-01-02T00:00:60.000001Z",
                                // UTC 23:59:60 of 0000-12-31: outside the range (T3)
                                "0001-01-01T00:29:60+00:30", "2026-01-02T23:59:61Z"}) {
            INFO(bad);
            const auto r = try_parse_timestamp(bad);
            REQUIRE_FALSE(r.has_value());
            CHECK(r.error().code == keyhook::errc::invalid_timestamp);
            CHECK(r.error().message == "expected an ISO 8601 timestamp, got \"" + std::string(bad) + "\"");
        }
    }
    SECTION("both sides of each boundary") {
        const std::pair<const char*, const char*> pairs[] = {
            {"2026-01-02T23:59:60Z", "2026-01-02T23:58:60Z"},            // minute
            {"2026-01-02T23:59:60Z", "2026-01-02T22:59:60Z"},            // hour
            {"2026-01-02T23:59:60Z", "2026-01-02T23:59:61Z"},            // second
            {"2026-01-02T18:59:60-05:00", "2026-01-02T18:59:60-05:01"},  // offset minutes
            {"2026-01-02T18:59:60-05:00", "2026-01-02T18:59:60-04:59"},
            {"2026-01-02T18:59:60-05:00", "2026-01-02T18:59:60+05:00"},  // offset sign
            {"2026-01-03T05:29:60+05:30", "2026-01-03T05:29:60+05:29"},
            {"0001-01-01T23:59:60Z", "0001-01-01T00:29:60+00:30"},  // range start
            {"9999-12-31T23:59:60Z", "9999-12-31T23:59:60-00:01"},  // range end
        };
        for (const auto& [good, bad] : pairs) {
            INFO(good << " / " << bad);
            CHECK(try_parse_timestamp(good).has_value());
            CHECK_FALSE(try_parse_timestamp(bad).has_value());
        }
    }
}

TEST_CASE("T3: microsecond precision, digits past the sixth truncated", "[T3][timestamps]") {
    CHECK(parse_timestamp("2026-01-02T03:04:05.000001Z") == at(2026, 1, 2, 3, 4, 5, 1));
    CHECK(parse_timestamp("2026-01-02T03:04:05.0000009Z") == at(2026, 1, 2, 3, 4, 5, 0));
    CHECK(parse_timestamp("2026-01-02T03:04:05.9999999Z") == at(2026, 1, 2, 3, 4, 5, 999999));
}

TEST_CASE("T3: range is years 0001 to 9999", "[T3][timestamps]") {
    CHECK(parse_timestamp("9999-12-31T23:59:59Z") == at(9999, 12, 31, 23, 59, 59));
    CHECK(parse_timestamp("9999-12-31T23:59:59.999999Z") == keyhook::max_timestamp);
    CHECK(parse_timestamp("0001-01-01T00:00:00Z") == keyhook::min_timestamp);
    // An offset that would move the instant outside the range is refused.
    CHECK_FALSE(try_parse_timestamp("9999-12-31T23:59:59-01:00").has_value());
    CHECK_FALSE(try_parse_timestamp("0001-01-01T00:00:00+00:01").has_value());
    CHECK(try_parse_timestamp("0001-01-01T00:01:00+00:01").has_value());
}

TEST_CASE("T4: written in UTC with 3 or 6 fraction digits", "[T4][timestamps]") {
    CHECK(format_timestamp(at(2026, 1, 2, 3, 4, 5)) == "2026-01-02T03:04:05.000Z");
    CHECK(format_timestamp(at(2026, 1, 2, 3, 4, 5, 620000)) == "2026-01-02T03:04:05.620Z");
    CHECK(format_timestamp(at(2026, 1, 2, 3, 4, 5, 620160)) == "2026-01-02T03:04:05.620160Z");
    CHECK(format_timestamp(at(2026, 1, 2, 3, 4, 5, 1)) == "2026-01-02T03:04:05.000001Z");
    CHECK(format_timestamp(at(1969, 12, 31, 23, 59, 59, 999999)) == "1969-12-31T23:59:59.999999Z");
    CHECK(format_timestamp(keyhook::min_timestamp) == "0001-01-01T00:00:00.000Z");
    CHECK(format_timestamp(keyhook::max_timestamp) == "9999-12-31T23:59:59.999999Z");
    CHECK(keyhook::format_timestamp_millis(at(2026, 1, 2, 3, 4, 5, 620999)) == "2026-01-02T03:04:05.620Z");
}

TEST_CASE("T4: parse, write, parse gives the same instant", "[T4][timestamps]") {
    for (const char* text : {"2026-01-02T03:04:05Z", "2026-01-02T03:04:05.62016Z", "2026-01-02T03:04:05.8538786Z",
                             "2026-01-02T03:04:05.123+05:45", "1970-01-01T00:00:00Z", "9999-12-31T23:59:59Z"}) {
        INFO(text);
        const auto t = parse_timestamp(text);
        const auto written = format_timestamp(t);
        CHECK(parse_timestamp(written) == t);
        CHECK(format_timestamp(parse_timestamp(written)) == written);
    }
}

TEST_CASE("T2: calendar limits on both sides", "[T2][timestamps]") {
    struct pair_case {
        const char* accepted;
        const char* rejected;
    };
    const pair_case cases[] = {
        {"2026-04-30T00:00:00Z", "2026-04-31T00:00:00Z"},  // 30-day months
        {"2026-06-30T00:00:00Z", "2026-06-31T00:00:00Z"},
        {"2026-09-30T00:00:00Z", "2026-09-31T00:00:00Z"},
        {"2026-11-30T00:00:00Z", "2026-11-31T00:00:00Z"},
        {"2026-12-31T00:00:00Z", "2026-12-32T00:00:00Z"},
        {"2026-01-01T00:00:00Z", "2026-01-00T00:00:00Z"},
        {"2026-02-28T00:00:00Z", "2026-02-29T00:00:00Z"},
        {"2024-02-29T00:00:00Z", "2024-02-30T00:00:00Z"},
        {"2000-02-29T00:00:00Z", "2100-02-29T00:00:00Z"},  // divisible by 400 / by 100 only
        {"2026-12-01T00:00:00Z", "2026-13-01T00:00:00Z"},
        {"2026-01-02T23:00:00Z", "2026-01-02T24:00:00Z"},
        {"2026-01-02T00:59:00Z", "2026-01-02T00:60:00Z"},
        // T2's leap second: this pair used to accept 00:00:60; a leap second
        // exists only at 23:59:60 UTC (T2).
        {"2026-01-02T23:59:60Z", "2026-01-02T23:59:61Z"},
        {"2026-01-02T00:00:59Z", "2026-01-02T00:00:60Z"},
        {"2026-01-02T00:00:00+23:59", "2026-01-02T00:00:00+24:00"},
        {"2026-01-02T00:00:00-00:59", "2026-01-02T00:00:00-00:60"},
        {"0001-01-01T00:00:00Z", "0000-12-31T00:00:00Z"},
    };
    for (const auto& c : cases) {
        INFO(c.accepted << " / " << c.rejected);
        CHECK(try_parse_timestamp(c.accepted).has_value());
        CHECK_FALSE(try_parse_timestamp(c.rejected).has_value());
    }
}

TEST_CASE("T1, T2: fraction digits 1 to 9, and the longest accepted text", "[T1][T2][timestamps]") {
    std::string digits;
    for (int n = 1; n <= 9; ++n) {
        digits += static_cast<char>('0' + n);
        INFO(n);
        CHECK(try_parse_timestamp("2026-01-02T03:04:05." + digits + "Z").has_value());
    }
    const std::string longest = "2026-01-02T03:04:05.123456789+01:00";
    REQUIRE(longest.size() == 35);
    CHECK(parse_timestamp(longest) == at(2026, 1, 2, 2, 4, 5, 123456));
    CHECK_FALSE(try_parse_timestamp("2026-01-02T03:04:05.1234567890+01:00").has_value());
}

TEST_CASE("T2: bytes that are not ASCII digits are refused in every digit position", "[T2][timestamps]") {
    const std::string good = "2026-01-02T03:04:05.123+01:00";
    for (std::size_t i = 0; i < good.size(); ++i) {
        if (good[i] < '0' || good[i] > '9') continue;
        for (const char bad : {'/', ':', 'a', ' ', static_cast<char>(0xB0), static_cast<char>(0x10)}) {
            std::string s = good;
            s[i] = bad;
            INFO(i << ": " << keyhook::detail::quote_input(s));
            CHECK_FALSE(try_parse_timestamp(s).has_value());
        }
    }
    CHECK(try_parse_timestamp(good).has_value());
}

TEST_CASE("T1, T3, T4: every 37th day of years 0001 to 9999 agrees with date's calendar", "[T1][T3][T4][timestamps]") {
    const auto first = date::sys_days{date::year{1} / 1 / 1};
    const auto last = date::sys_days{date::year{9999} / 12 / 31};
    std::size_t checked = 0;
    for (auto d = first; d <= last; d += date::days{37}) {
        const auto text = date::format("%Y-%m-%dT12:34:56Z", d);
        const timestamp expected{d.time_since_epoch() + std::chrono::hours{12} + std::chrono::minutes{34} +
                                 std::chrono::seconds{56}};
        const auto r = try_parse_timestamp(text);
        if (!r.has_value() || *r != expected) {
            FAIL_CHECK(text << " read as " << (r.has_value() ? format_timestamp(*r) : r.error().message));
            continue;
        }
        // T4: written and read again, the same instant and the same text.
        CHECK(format_timestamp(expected) == text.substr(0, 19) + ".000Z");
        ++checked;
    }
    CHECK(checked == static_cast<std::size_t>((last - first).count() / 37 + 1));
}

TEST_CASE("T3: keyhook's civil calendar agrees with date's on every day of years 0001 to 9999", "[T3][timestamps]") {
    using keyhook::detail::civil_from_days;
    using keyhook::detail::days_from_civil;
    using keyhook::detail::days_in_month;
    static_assert(std::is_same_v<keyhook::detail::calendar_days, date::days>, "one day type with date");
    const auto first = date::sys_days{date::year{1} / 1 / 1};
    const auto last = date::sys_days{date::year{9999} / 12 / 31};
    CHECK(keyhook::min_timestamp == timestamp{first.time_since_epoch()});
    CHECK(keyhook::max_timestamp == timestamp{last.time_since_epoch() + date::days{1} - std::chrono::microseconds{1}});
    std::size_t wrong = 0;
    for (auto d = first; d <= last; d += date::days{1}) {
        const date::year_month_day ymd{d};
        const auto y = static_cast<unsigned>(static_cast<int>(ymd.year()));
        const auto m = static_cast<unsigned>(ymd.month());
        const auto day = static_cast<unsigned>(ymd.day());
        const auto c = civil_from_days(d.time_since_epoch().count());
        const auto month_length = static_cast<unsigned>((ymd.year() / ymd.month() / date::last).day());
        if (days_from_civil(y, m, day) != d.time_since_epoch().count() || c.year != y || c.month != m || c.day != day ||
            days_in_month(y, m) != month_length) {
            if (++wrong <= 5) FAIL_CHECK(date::format("%F", d));
        }
    }
    CHECK(wrong == 0);
}

// --- saturating time arithmetic (T3) -----------------------------------------

// Regression test: time arithmetic: a time plus a caller's duration overflowed (T3, saturating sums).
TEST_CASE("T3: durations convert to microseconds saturating", "[T3][timestamps][saturating]") {
    using keyhook::detail::saturating_micros;
    using std::chrono::microseconds;
    CHECK(saturating_micros(std::chrono::seconds::max()) == microseconds::max());
    CHECK(saturating_micros(std::chrono::seconds::min()) == microseconds::min());
    CHECK(saturating_micros(std::chrono::hours::max()) == microseconds::max());
    CHECK(saturating_micros(std::chrono::hours::min()) == microseconds::min());
    CHECK(saturating_micros(microseconds::max()) == microseconds::max());
    CHECK(saturating_micros(std::chrono::nanoseconds::max()) ==
          microseconds{std::chrono::nanoseconds::max().count() / 1000});
    CHECK(saturating_micros(std::chrono::nanoseconds{-1999}) == microseconds{-1});
    // Both sides of the largest whole number of seconds that fits.
    constexpr auto fits = std::numeric_limits<std::int64_t>::max() / 1000000;
    CHECK(saturating_micros(std::chrono::seconds{fits}) == microseconds{fits * 1000000});
    CHECK(saturating_micros(std::chrono::seconds{fits + 1}) == microseconds::max());
    CHECK(saturating_micros(std::chrono::seconds{-fits}) == microseconds{-fits * 1000000});
    CHECK(saturating_micros(std::chrono::seconds{-fits - 1}) == microseconds::min());
    CHECK(saturating_micros(date::days{3}) == std::chrono::hours{72});
}

// Regression test: time arithmetic: a time plus a caller's duration overflowed (T3, saturating sums).
TEST_CASE("T3: a time plus a duration stops at the ends of the range", "[T3][timestamps][saturating]") {
    using keyhook::add_saturating;
    using keyhook::difference_saturating;
    using keyhook::sub_saturating;
    using std::chrono::microseconds;
    constexpr microseconds one{1};
    const timestamp hi = timestamp::max(), lo = timestamp::min();
    const timestamp t = at(2026, 1, 2, 3, 4, 5);

    // Ordinary sums are exact.
    CHECK(add_saturating(t, std::chrono::hours{1}) == t + std::chrono::hours{1});
    CHECK(add_saturating(t, -std::chrono::hours{1}) == t - std::chrono::hours{1});
    CHECK(sub_saturating(t, date::days{8}) == t - date::days{8});
    CHECK(difference_saturating(keyhook::max_timestamp, keyhook::min_timestamp) ==
          keyhook::max_timestamp - keyhook::min_timestamp);
    // Both sides of each end: the last exact sum, then saturation.
    CHECK(add_saturating(hi - one, one) == hi);
    CHECK(add_saturating(hi - one, 2 * one) == hi);
    CHECK(add_saturating(lo + one, -one) == lo);
    CHECK(add_saturating(lo + one, -2 * one) == lo);
    CHECK(sub_saturating(lo + one, one) == lo);
    CHECK(sub_saturating(lo + one, 2 * one) == lo);
    CHECK(sub_saturating(hi - one, -one) == hi);
    CHECK(sub_saturating(hi - one, -2 * one) == hi);
    // Caller-supplied extremes.
    CHECK(add_saturating(t, std::chrono::seconds::max()) == hi);
    CHECK(add_saturating(t, std::chrono::seconds::min()) == lo);
    CHECK(add_saturating(keyhook::max_timestamp, microseconds::max()) == hi);
    CHECK(add_saturating(lo, microseconds::max()) == timestamp{microseconds{-1}});
    CHECK(sub_saturating(t, microseconds::min()) == hi);  // -min() does not exist: not negated
    CHECK(sub_saturating(t, std::chrono::seconds::max()) == lo);
    CHECK(sub_saturating(hi, microseconds::max()) == timestamp{microseconds{0}});
    // A duration that does not fit in microseconds, whose sum does: exact.
    constexpr auto fits = std::numeric_limits<std::int64_t>::max() / 1000000;
    const auto beyond = std::chrono::seconds{fits + 1};
    CHECK(add_saturating(hi, -beyond) == hi - std::chrono::seconds{fits} - std::chrono::seconds{1});
    CHECK(sub_saturating(hi, beyond) == hi - std::chrono::seconds{fits} - std::chrono::seconds{1});
    CHECK(add_saturating(lo, beyond) == lo + std::chrono::seconds{fits} + std::chrono::seconds{1});
    CHECK(sub_saturating(lo, -beyond) == lo + std::chrono::seconds{fits} + std::chrono::seconds{1});
    CHECK(add_saturating(hi, std::chrono::seconds::min()) < timestamp{microseconds{0}});
    CHECK(add_saturating(hi, std::chrono::seconds::min()) == lo);
    CHECK(add_saturating(lo, std::chrono::hours::max()) == hi);
    // Differences of timestamps too far apart.
    CHECK(difference_saturating(hi, lo) == microseconds::max());
    CHECK(difference_saturating(lo, hi) == microseconds::min());
    CHECK(difference_saturating(hi, timestamp{microseconds{-1}}) == microseconds::max());
    CHECK(difference_saturating(hi, timestamp{microseconds{0}}) == microseconds::max());
    CHECK(difference_saturating(lo, timestamp{microseconds{0}}) == microseconds::min());
    CHECK(difference_saturating(lo, timestamp{microseconds{1}}) == microseconds::min());
    CHECK(difference_saturating(lo + one, timestamp{microseconds{1}}) == microseconds::min());
    CHECK(difference_saturating(lo + 2 * one, timestamp{microseconds{1}}) == microseconds::min() + one);
    // Usable in constant expressions.
    static_assert(add_saturating(timestamp::max(), std::chrono::seconds{1}) == timestamp::max());
    static_assert(sub_saturating(timestamp::min(), std::chrono::seconds{1}) == timestamp::min());
    static_assert(difference_saturating(timestamp::max(), timestamp::min()) == microseconds::max());
    constexpr std::chrono::hours an_hour{1};
    static_assert(noexcept(add_saturating(t, an_hour))&& noexcept(sub_saturating(t, an_hour)));
    // The library's own code reaches the same functions under keyhook::detail.
    static_assert(keyhook::detail::add_saturating(timestamp::max(), std::chrono::seconds{1}) == timestamp::max());
    CHECK(keyhook::detail::add_saturating(t, date::days{3}) == add_saturating(t, date::days{3}));
    CHECK(keyhook::detail::sub_saturating(lo, one) == sub_saturating(lo, one));
    CHECK(keyhook::detail::add_saturating(microseconds::max(), one) == microseconds::max());
}
