#include "keyhook/status.hpp"

#include <catch2/catch.hpp>

#include <optional>
#include <sstream>
#include <string>

#include "keyhook/expiry_notices.hpp"
#include "keyhook/testing.hpp"

using date::days;
using keyhook::api_key;
using keyhook::key_status;
using keyhook::microseconds;
using keyhook::status_at;
using keyhook::timestamp;
using keyhook::warning_band;

namespace {

constexpr microseconds us{1};
constexpr timestamp t0 = keyhook::testing::fixed_now;

api_key key_for(timestamp from, timestamp until, key_status listed = key_status::active) {
    return keyhook::testing::key_builder().period(from, until).status(listed).build();
}

// A key of duration d starting at t0.
api_key key_lasting(microseconds d) { return key_for(t0, t0 + d); }

std::string printed(key_status s) {
    std::ostringstream os;
    os << s;
    return os.str();
}

}  // namespace

TEST_CASE("S1: the validity period is half-open [activeFrom, expireAt)", "[S1][status]") {
    const auto k = key_for(t0, t0 + days{5});
    CHECK(status_at(k, t0 - us) == key_status::active_in_future);
    CHECK(status_at(k, t0) == key_status::active);
    CHECK(status_at(k, t0 + days{5} - us) == key_status::active);
    CHECK(status_at(k, t0 + days{5}) == key_status::expired);
    CHECK(status_at(k, t0 + days{500}) == key_status::expired);
    CHECK(keyhook::is_active_at(k, t0));
    CHECK_FALSE(keyhook::is_active_at(k, t0 - us));
    CHECK_FALSE(keyhook::is_active_at(k, t0 + days{5}));
}

TEST_CASE("S1: a one-microsecond period is Active at exactly one instant", "[S1][status]") {
    const auto k = key_for(t0, t0 + us);
    CHECK(status_at(k, t0 - us) == key_status::active_in_future);
    CHECK(status_at(k, t0) == key_status::active);
    CHECK(status_at(k, t0 + us) == key_status::expired);
}

TEST_CASE("S1: an empty or inverted period is never Active", "[S1][status]") {
    SECTION("empty") {
        const auto k = key_for(t0, t0);
        CHECK(status_at(k, t0 - us) == key_status::active_in_future);
        CHECK(status_at(k, t0) == key_status::expired);
        CHECK(status_at(k, t0 + us) == key_status::expired);
    }
    SECTION("inverted") {
        const auto k = key_for(t0 + days{1}, t0);
        for (const auto now : {t0 - us, t0, t0 + us, t0 + days{1} - us, t0 + days{1}, t0 + days{1} + us}) {
            INFO(keyhook::format_timestamp(now));
            CHECK(status_at(k, now) != key_status::active);
        }
        CHECK(status_at(k, t0 + days{1} - us) == key_status::active_in_future);
        CHECK(status_at(k, t0 + days{1}) == key_status::expired);
    }
}

TEST_CASE("S1: Revoked wins over the clock", "[S1][status]") {
    const auto k = key_for(t0, t0 + days{5}, key_status::revoked);
    for (const auto now : {t0 - us, t0, t0 + days{5} - us, t0 + days{5}}) {
        INFO(keyhook::format_timestamp(now));
        CHECK(status_at(k, now) == key_status::revoked);
    }
}

TEST_CASE("S1, S2: the listed status other than Revoked does not decide", "[S1][S2][status]") {
    // The clock decides Active, Active in the future and Expired whatever the list said.
    for (const auto listed : {key_status::active, key_status::active_in_future, key_status::expired}) {
        INFO(listed);
        const auto k = key_for(t0, t0 + days{5}, listed);
        CHECK(status_at(k, t0 - us) == key_status::active_in_future);
        CHECK(status_at(k, t0) == key_status::active);
        CHECK(status_at(k, t0 + days{5}) == key_status::expired);
    }
}

TEST_CASE("S1: clock_status on a bare period agrees with status_at", "[S1][status]") {
    const auto from = t0, until = t0 + days{2};
    for (const auto now : {from - us, from, until - us, until}) {
        CHECK(keyhook::clock_status(from, until, now) == status_at(key_for(from, until), now));
    }
}

TEST_CASE("S3: the four statuses print with the spec's names", "[S3][status]") {
    CHECK(keyhook::to_string(key_status::active) == "Active");
    CHECK(keyhook::to_string(key_status::active_in_future) == "Active in the future");
    CHECK(keyhook::to_string(key_status::expired) == "Expired");
    CHECK(keyhook::to_string(key_status::revoked) == "Revoked");
    CHECK(printed(key_status::active_in_future) == "Active in the future");
    CHECK(printed(key_status::revoked) == "Revoked");
}

TEST_CASE("S2, S3: every printed status reads back as itself", "[S2][S3][status]") {
    for (const auto s : {key_status::active, key_status::active_in_future, key_status::expired, key_status::revoked}) {
        const auto back = keyhook::try_parse_key_status(keyhook::to_string(s));
        REQUIRE(back.has_value());
        CHECK(*back == s);
    }
}

TEST_CASE("W1, W2: duration bands at each limit and one microsecond more", "[W1][W2][status]") {
    CHECK(keyhook::warning_band_of(key_lasting(microseconds::zero())) == warning_band::none);
    CHECK(keyhook::warning_band_of(key_lasting(us)) == warning_band::one_day);
    CHECK(keyhook::warning_band_of(key_lasting(days{1})) == warning_band::one_day);
    CHECK(keyhook::warning_band_of(key_lasting(days{1} + us)) == warning_band::five_days);
    CHECK(keyhook::warning_band_of(key_lasting(days{5})) == warning_band::five_days);
    CHECK(keyhook::warning_band_of(key_lasting(days{5} + us)) == warning_band::seven_days);
    CHECK(keyhook::warning_band_of(key_lasting(days{7})) == warning_band::seven_days);
    CHECK(keyhook::warning_band_of(key_lasting(days{7} + us)) == warning_band::short_month);
    CHECK(keyhook::warning_band_of(key_lasting(days{23})) == warning_band::short_month);
    CHECK(keyhook::warning_band_of(key_lasting(days{23} + us)) == warning_band::thirty_one_days);
    CHECK(keyhook::warning_band_of(key_lasting(days{31})) == warning_band::thirty_one_days);
    CHECK(keyhook::warning_band_of(key_lasting(days{31} + us)) == warning_band::longer);
    CHECK(keyhook::warning_band_of(key_for(t0 + days{1}, t0)) == warning_band::none);
}

namespace {
// Checks that a key of duration d starts warning exactly at `start`: not one
// microsecond before, and from then on while it is Active.
void check_warning_starts(microseconds d, timestamp start) {
    const auto k = key_lasting(d);
    INFO("duration " << d.count() << " us, start " << keyhook::format_timestamp(start));
    REQUIRE(keyhook::warning_start(k).has_value());
    CHECK(*keyhook::warning_start(k) == start);
    if (start > t0) CHECK_FALSE(keyhook::expiry_warning_at(k, start - us));
    const auto first_shown = start > t0 ? start : t0;
    CHECK(keyhook::expiry_warning_at(k, first_shown));
    CHECK(keyhook::expiry_warning_at(k, t0 + d - us));
}
}  // namespace

TEST_CASE("W2: at most 1 day: always shown while Active", "[W2][status]") {
    check_warning_starts(days{1}, t0);
    check_warning_starts(std::chrono::hours{1}, t0);
    check_warning_starts(us, t0);
}

TEST_CASE("W1, W2: at most 5 days: from the 2nd valid day (activeFrom + 1 day)", "[W1][W2][status]") {
    check_warning_starts(days{1} + us, t0 + days{1});
    check_warning_starts(days{5}, t0 + days{1});
    // The example of the brief: a 5-day key one microsecond before and at activeFrom + 1 day.
    const auto k = key_lasting(days{5});
    CHECK_FALSE(keyhook::expiry_warning_at(k, t0 + days{1} - us));
    CHECK(keyhook::expiry_warning_at(k, t0 + days{1}));
}

TEST_CASE("W1, W2: at most 7 days: from the 5th valid day (activeFrom + 4 days)", "[W1][W2][status]") {
    check_warning_starts(days{5} + us, t0 + days{4});
    check_warning_starts(days{7}, t0 + days{4});
}

TEST_CASE("W2: more than 7 and at most 23 days: from expireAt - 8 days", "[W2][status]") {
    // Just over 7 days: expireAt - 8 days lies before activeFrom, so the whole period warns.
    check_warning_starts(days{7} + us, t0 + days{7} + us - days{8});
    check_warning_starts(days{10}, t0 + days{2});
    check_warning_starts(days{23}, t0 + days{15});
}

TEST_CASE("W1, W2: at most 31 days: from the 24th valid day (activeFrom + 23 days)", "[W1][W2][status]") {
    check_warning_starts(days{23} + us, t0 + days{23});
    check_warning_starts(days{30}, t0 + days{23});
    check_warning_starts(days{31}, t0 + days{23});
}

TEST_CASE("W2: policy for more than 31 days: from expireAt - 8 days", "[W2][status]") {
    check_warning_starts(days{31} + us, t0 + days{23} + us);
    check_warning_starts(days{90}, t0 + days{82});
    check_warning_starts(days{365}, t0 + days{357});
}

TEST_CASE("W2: the final stretch is 8 days", "[W2][status]") { CHECK(keyhook::final_warning_stretch == days{8}); }

TEST_CASE("W3: the warning shows only while the key is Active", "[W3][status]") {
    SECTION("not before activeFrom, even for a 1-day key") {
        const auto k = key_lasting(days{1});
        CHECK_FALSE(keyhook::expiry_warning_at(k, t0 - us));
        CHECK(keyhook::expiry_warning_at(k, t0));
    }
    SECTION("not once expired") {
        const auto k = key_lasting(days{5});
        CHECK(keyhook::expiry_warning_at(k, t0 + days{5} - us));
        CHECK_FALSE(keyhook::expiry_warning_at(k, t0 + days{5}));
    }
    SECTION("never when revoked") {
        const auto k = key_for(t0, t0 + days{5}, key_status::revoked);
        CHECK_FALSE(keyhook::expiry_warning_at(k, t0 + days{1}));
        CHECK_FALSE(keyhook::expiry_warning_at(k, t0 + days{5} - us));
    }
    SECTION("never for an empty or inverted period") {
        CHECK_FALSE(keyhook::warning_start(key_for(t0, t0)).has_value());
        CHECK_FALSE(keyhook::warning_start(key_for(t0 + days{1}, t0)).has_value());
        CHECK_FALSE(keyhook::expiry_warning_at(key_for(t0, t0), t0));
        CHECK_FALSE(keyhook::expiry_warning_at(key_for(t0 + days{1}, t0), t0 + std::chrono::hours{12}));
    }
}

TEST_CASE("W2: warning bands print readably", "[W2][status]") {
    std::ostringstream os;
    os << warning_band::short_month << ' ' << warning_band::none;
    CHECK(os.str() == "short_month none");
    CHECK(keyhook::to_string(warning_band::thirty_one_days) == "thirty_one_days");
}

// --- periods at the ends of the range ----------------------------------------

// Regression test: time arithmetic: a time plus a caller's duration overflowed (T3, saturating sums).
TEST_CASE("W1, W2: a period from timestamp::min() to max() has the longest band, not an overflow",
          "[W1][W2][S1][W3][status]") {
    const timestamp lo = timestamp::min(), hi = timestamp::max();
    // expireAt - activeFrom does not fit in 64 bits: it saturates (before, it
    // wrapped, and the inverted period below read as a 1-microsecond key).
    CHECK(keyhook::warning_band_for(lo, hi) == warning_band::longer);
    CHECK(keyhook::warning_band_for(hi, lo) == warning_band::none);
    CHECK(keyhook::warning_band_for(hi - us, lo) == warning_band::none);
    CHECK(keyhook::warning_start_for(hi, lo) == std::nullopt);
    const auto key = key_for(lo, hi);
    REQUIRE(keyhook::warning_start(key).has_value());
    CHECK(*keyhook::warning_start(key) == hi - days{8});
    CHECK_FALSE(keyhook::expiry_warning_at(key, hi - days{8} - us));
    CHECK(keyhook::expiry_warning_at(key, hi - days{8}));
    CHECK(status_at(key, lo) == key_status::active);
    CHECK(status_at(key, hi) == key_status::expired);
    // An inverted period across the whole range is never Active (S1) and never warns (W3).
    const auto inverted = key_for(hi, lo);
    CHECK_FALSE(keyhook::expiry_warning_at(inverted, keyhook::testing::fixed_now));
    CHECK(status_at(inverted, keyhook::testing::fixed_now) == key_status::active_in_future);
}

// Regression test: time arithmetic: a time plus a caller's duration overflowed (T3, saturating sums).
TEST_CASE("W2: warning starts of short keys at either end of the range are exact", "[W2][status]") {
    const timestamp hi = timestamp::max();
    // Each band with its period ending at the last representable instant.
    CHECK(keyhook::warning_start_for(hi - days{5}, hi) == hi - days{4});
    CHECK(keyhook::warning_start_for(hi - days{7}, hi) == hi - days{3});
    CHECK(keyhook::warning_start_for(hi - days{31}, hi) == hi - days{8});
    CHECK(keyhook::warning_start_for(hi - days{20}, hi) == hi - days{8});
    CHECK(keyhook::warning_start_for(hi - days{400}, hi) == hi - days{8});
    // And starting at the first one.
    const timestamp lo = timestamp::min();
    CHECK(keyhook::warning_start_for(lo, lo + days{5}) == lo + days{1});
    CHECK(keyhook::warning_start_for(lo, lo + days{10}) == lo + days{2});
    CHECK(keyhook::warning_start_for(lo, lo + days{31}) == lo + days{23});
}

// Regression test: time arithmetic: a time plus a caller's duration overflowed (T3, saturating sums).
TEST_CASE("W2, W3: expiry notices of a key spanning the whole range, and of its inverse", "[W2][W3][status]") {
    const timestamp lo = timestamp::min(), hi = timestamp::max();
    const auto all = keyhook::key_transitions(key_for(lo, hi));
    REQUIRE(all.size() == 3);
    CHECK(all[0] == keyhook::key_transition{keyhook::notice_kind::activated, lo});
    CHECK(all[1] == keyhook::key_transition{keyhook::notice_kind::warning, hi - days{8}});
    CHECK(all[2] == keyhook::key_transition{keyhook::notice_kind::expired, hi});
    CHECK(keyhook::transitions_between(key_for(lo, hi), lo, hi).size() == 2);  // (lo, hi]: not the activation
    const auto inverted = keyhook::key_transitions(key_for(hi, lo));
    REQUIRE(inverted.size() == 1);
    CHECK(inverted[0] == keyhook::key_transition{keyhook::notice_kind::expired, hi});
}
