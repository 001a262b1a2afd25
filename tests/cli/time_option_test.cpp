// The time forms of the programs' time options (examples/shared/time_option.hpp,
// key_admin --from and --until): now, a date, a T1 timestamp, and +N with a
// unit after a base; both sides of each boundary, and what a refusal says
// (rules T1 and O1: the flag and the text, escaped as P1 requires).
#include "shared/time_option.hpp"

#include <catch2/catch.hpp>

#include <chrono>
#include <optional>
#include <string>

namespace {

using examples::cli::parse_time;
using keyhook::parse_timestamp;

const keyhook::timestamp clock_reading = parse_timestamp("2026-11-29T10:15:30.123456Z");

std::string refusal(std::string_view text, std::optional<keyhook::timestamp> base = std::nullopt) {
    auto t = parse_time(text, clock_reading, base);
    REQUIRE_FALSE(t);
    return t.error().message;
}

}  // namespace

TEST_CASE("Time options: now, a date at 00:00:00Z, and T1's timestamps", "[T1][O1]") {
    CHECK(*parse_time("now", clock_reading) == clock_reading);
    CHECK(*parse_time("NOW", clock_reading) == clock_reading);  // O1: a word in any case
    CHECK(*parse_time("Now", clock_reading) == clock_reading);
    CHECK(*parse_time("2026-12-01", clock_reading) == parse_timestamp("2026-12-01T00:00:00Z"));
    CHECK(*parse_time("2024-02-29", clock_reading) == parse_timestamp("2024-02-29T00:00:00Z"));
    CHECK(*parse_time("0001-01-01", clock_reading) == keyhook::min_timestamp);
    CHECK(*parse_time("9999-12-31", clock_reading) == parse_timestamp("9999-12-31T00:00:00Z"));
    CHECK(*parse_time("2026-12-01T10:30:00.25+01:00", clock_reading) == parse_timestamp("2026-12-01T09:30:00.25Z"));
    CHECK(*parse_time("2026-12-01t09:30:00z", clock_reading) == parse_timestamp("2026-12-01T09:30:00Z"));
    CHECK(*parse_time("9999-12-31T23:59:59Z", clock_reading) == parse_timestamp("9999-12-31T23:59:59Z"));
}

TEST_CASE("Time options: days the calendar lacks and other text are refused, quoted and escaped", "[T1][O1]") {
    CHECK(refusal("2026-02-30") == "\"2026-02-30\" is not a day of the calendar (YYYY-MM-DD)");
    CHECK(refusal("2025-02-29") == "\"2025-02-29\" is not a day of the calendar (YYYY-MM-DD)");
    CHECK(refusal("2026-13-01") == "\"2026-13-01\" is not a day of the calendar (YYYY-MM-DD)");
    CHECK(refusal("0000-12-31") == "\"0000-12-31\" is not a day of the calendar (YYYY-MM-DD)");
    // Not a date's shape: the forms are listed, the relative one only where taken.
    CHECK(refusal("2026-1-05") == "expected now, YYYY-MM-DD (00:00:00Z) or a timestamp (T1), got \"2026-1-05\"");
    CHECK(refusal("2026-12-01T09:30Z", clock_reading) ==
          "expected now, YYYY-MM-DD (00:00:00Z) or a timestamp (T1), or +N with d, h, m or s (days, hours, "
          "minutes, seconds), got \"2026-12-01T09:30Z\"");
    CHECK(refusal("") == "expected now, YYYY-MM-DD (00:00:00Z) or a timestamp (T1), got \"\"");
    CHECK(refusal(" now") == "expected now, YYYY-MM-DD (00:00:00Z) or a timestamp (T1), got \" now\"");
    CHECK(refusal("nowadays") == "expected now, YYYY-MM-DD (00:00:00Z) or a timestamp (T1), got \"nowadays\"");
    // P1: control and bidirectional characters never reach the terminal raw.
    CHECK(refusal("\x1b[2J\xe2\x80\xae") ==
          "expected now, YYYY-MM-DD (00:00:00Z) or a timestamp (T1), got \"\\x1b[2J\\u202e\"");
}

TEST_CASE("Time options: +N with a unit counts from the base; +0 and past the year 9999 are refused", "[T1][O1]") {
    const auto base = parse_timestamp("2026-01-01T00:00:00Z");
    const auto after = [&](std::string_view text) { return *parse_time(text, clock_reading, base); };
    CHECK(after("+30d") == parse_timestamp("2026-01-31T00:00:00Z"));
    CHECK(after("+12h") == parse_timestamp("2026-01-01T12:00:00Z"));
    CHECK(after("+45m") == parse_timestamp("2026-01-01T00:45:00Z"));
    CHECK(after("+90s") == parse_timestamp("2026-01-01T00:01:30Z"));
    CHECK(after("+1s") == parse_timestamp("2026-01-01T00:00:01Z"));  // the smallest amount
    CHECK(after("+007d") == parse_timestamp("2026-01-08T00:00:00Z"));
    // The base is whatever the program says (key_admin: --from, else now).
    CHECK(*parse_time("+1d", clock_reading, clock_reading) == parse_timestamp("2026-11-30T10:15:30.123456Z"));

    CHECK(refusal("+0d", base) == "\"+0d\": the amount must be at least 1 (+0 would make an empty period)");
    CHECK(refusal("+0s", base) == "\"+0s\": the amount must be at least 1 (+0 would make an empty period)");
    CHECK(refusal("+000h", base) == "\"+000h\": the amount must be at least 1 (+0 would make an empty period)");

    // T3's last instant: reached, never passed, never wrapped.
    const auto last_day = parse_timestamp("9999-12-30T00:00:00Z");
    CHECK(*parse_time("+1d", clock_reading, last_day) == parse_timestamp("9999-12-31T00:00:00Z"));
    CHECK(*parse_time("+172799s", clock_reading, last_day) == parse_timestamp("9999-12-31T23:59:59Z"));
    auto past = parse_time("+172800s", clock_reading, last_day);
    REQUIRE_FALSE(past);
    CHECK(past.error().message == "\"+172800s\" ends after the year 9999");
    CHECK(refusal("+2d", last_day) == "\"+2d\" ends after the year 9999");
    CHECK(refusal("+999999999999d", base) == "\"+999999999999d\" ends after the year 9999");
    CHECK(refusal("+99999999999999999999999999d", base) == "\"+99999999999999999999999999d\" ends after the year 9999");
    CHECK(refusal("+9223372036854775807s", base) == "\"+9223372036854775807s\" ends after the year 9999");
    // About 7,973 years of days fit after 2026, 7,974 do not.
    CHECK(parse_time("+2912000d", clock_reading, base));
    CHECK(refusal("+2913000d", base) == "\"+2913000d\" ends after the year 9999");

    const std::string units = ": expected +N followed by d (days), h (hours), m (minutes) or s (seconds)";
    for (const char* text : {"+", "+d", "+30", "+30w", "+30D", "+-1d", "+1.5h", "+ 1d", "+1d "})
        CHECK(refusal(text, base) == keyhook::quoted_input(text) + units);
}

TEST_CASE("Time options: a relative time where the option takes none is refused; the flag is named", "[T1][O1]") {
    CHECK(refusal("+1d") == "\"+1d\": a relative time (+N) is not taken here");
    try {
        (void)examples::cli::time_option("--until", "+0d", clock_reading, clock_reading);
        FAIL("a usage error was expected");
    } catch (const examples::cli::usage_error& e) {
        CHECK(e.why == "--until: \"+0d\": the amount must be at least 1 (+0 would make an empty period)");
    }
    CHECK(examples::cli::time_option("--from", "2026-12-01", clock_reading) == parse_timestamp("2026-12-01T00:00:00Z"));
}
