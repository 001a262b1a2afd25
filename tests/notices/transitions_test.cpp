#include "keyhook/expiry_notices.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <sstream>
#include <string>
#include <vector>

#include "test_keys.hpp"

using keyhook::api_key;
using keyhook::key_status;
using keyhook::key_transition;
using keyhook::key_transitions;
using keyhook::notice_kind;
using keyhook::transitions_between;
using namespace notices_test;

namespace {

const timestamp transitions_t0 = at(2026, 3, 1, 9, 30, 0, 123457);  // microsecond-odd on purpose

bool contains(const std::vector<key_transition>& v, const key_transition& t) {
    return std::find(v.begin(), v.end(), t) != v.end();
}

// One key per W2 band, each side of every band edge, with the instant its
// warning must start by W2 (and W3 for a start before activeFrom).
struct band_case {
    const char* what;
    microseconds length;
    microseconds warning_after_activation;
};

std::vector<band_case> band_cases() {
    const microseconds us{1};
    const microseconds day = days{1};
    return {
        {"1 microsecond: always", us, microseconds{0}},
        {"exactly 1 day: always", day, microseconds{0}},
        {"1 day + 1us: from day 2", day + us, day},
        {"5 days: from day 2", 5 * day, day},
        {"5 days + 1us: from day 5", 5 * day + us, 4 * day},
        {"7 days: from day 5", 7 * day, 4 * day},
        // 7 to 8 days: expireAt - 8 days lies before activeFrom, so W3 starts it at activation.
        {"7 days + 1us: fallback, clipped to activeFrom", 7 * day + us, microseconds{0}},
        {"exactly 8 days: fallback equals activeFrom", 8 * day, microseconds{0}},
        {"8 days + 1us: fallback", 8 * day + us, us},
        {"23 days: fallback", 23 * day, 15 * day},
        {"23 days + 1us: from day 24", 23 * day + us, 23 * day},
        {"31 days: from day 24", 31 * day, 23 * day},
        {"31 days + 1us: policy, last 8 days", 31 * day + us, 23 * day + us},
        {"10 years: policy, last 8 days", 3653 * day, 3645 * day},
    };
}

}  // namespace

TEST_CASE("key_transitions: activation, warning start and expiry for every W2 band", "[S1][W1][W2][W3][notices]") {
    for (const auto& c : band_cases()) {
        INFO(c.what);
        const auto key = make_key("k", "key", transitions_t0, transitions_t0 + c.length);
        const auto all = key_transitions(key);
        REQUIRE(all.size() == 3);
        CHECK(all[0] == key_transition{notice_kind::activated, transitions_t0});
        CHECK(all[1] == key_transition{notice_kind::warning, transitions_t0 + c.warning_after_activation});
        CHECK(all[2] == key_transition{notice_kind::expired, transitions_t0 + c.length});
        CHECK(std::is_sorted(all.begin(), all.end()));

        // The reported instants are where status.hpp changes its answer.
        CHECK(keyhook::status_at(key, transitions_t0 - microseconds{1}) == key_status::active_in_future);
        CHECK(keyhook::status_at(key, transitions_t0) == key_status::active);
        const auto warn = all[1].at;
        CHECK_FALSE(keyhook::expiry_warning_at(key, warn - microseconds{1}));
        CHECK(keyhook::expiry_warning_at(key, warn));
        CHECK(keyhook::expiry_warning_at(key, key.expire_at - microseconds{1}));
        CHECK_FALSE(keyhook::expiry_warning_at(key, key.expire_at));
        CHECK(keyhook::status_at(key, key.expire_at - microseconds{1}) == key_status::active);
        CHECK(keyhook::status_at(key, key.expire_at) == key_status::expired);
    }
}

TEST_CASE("simultaneous changes: activation before warning", "[W2][W3][notices]") {
    for (const auto length : {microseconds{days{1}}, microseconds{hours{1}}, microseconds{days{8}}}) {
        const auto all = key_transitions(make_key("k", "key", transitions_t0, transitions_t0 + length));
        REQUIRE(all.size() == 3);
        CHECK(all[0].at == all[1].at);
        CHECK(all[0].kind == notice_kind::activated);
        CHECK(all[1].kind == notice_kind::warning);
        // A poll whose `now` is that instant reports both, in that order.
        const auto polled = transitions_between(make_key("k", "key", transitions_t0, transitions_t0 + length),
                                                transitions_t0 - hours{1}, transitions_t0);
        CHECK(polled == std::vector<key_transition>{all[0], all[1]});
    }
}

TEST_CASE("half-open interval (since, now]: both sides of every change in every band", "[S1][W2][W3][notices]") {
    const microseconds us{1};
    for (const auto& c : band_cases()) {
        const auto key = make_key("k", "key", transitions_t0, transitions_t0 + c.length);
        for (const auto& change : key_transitions(key)) {
            INFO(c.what << ", " << change);
            const auto x = change.at;
            // Exactly at `since`: the previous poll reported it.
            CHECK_FALSE(contains(transitions_between(key, x, x + hours{1}), change));
            CHECK_FALSE(contains(transitions_between(key, x, x + us), change));
            // Exactly at `now`: reported now.
            CHECK(contains(transitions_between(key, x - hours{1}, x), change));
            CHECK(contains(transitions_between(key, x - us, x), change));
            // One microsecond inside each end.
            CHECK(contains(transitions_between(key, x - us, x + hours{1}), change));
            CHECK(contains(transitions_between(key, x - hours{1}, x + us), change));
            // One microsecond outside each end.
            CHECK_FALSE(contains(transitions_between(key, x + us, x + hours{1}), change));
            CHECK_FALSE(contains(transitions_between(key, x - hours{1}, x - us), change));
        }
    }
}

TEST_CASE("a key whose whole life lies inside one interval reports every change in order", "[S1][W2][notices]") {
    const auto key = make_key("k", "key", transitions_t0, transitions_t0 + days{3});
    const auto got = transitions_between(key, transitions_t0 - days{1}, transitions_t0 + days{4});
    CHECK(got == key_transitions(key));
    CHECK(got == std::vector<key_transition>{{notice_kind::activated, transitions_t0},
                                             {notice_kind::warning, transitions_t0 + days{1}},
                                             {notice_kind::expired, transitions_t0 + days{3}}});
    // The interval may end exactly at expireAt and start just before activeFrom.
    CHECK(transitions_between(key, transitions_t0 - microseconds{1}, transitions_t0 + days{3}) == got);
    // Starting exactly at activeFrom loses only the activation.
    CHECK(transitions_between(key, transitions_t0, transitions_t0 + days{3}) ==
          std::vector<key_transition>{got[1], got[2]});
}

TEST_CASE("empty and inverted intervals report nothing", "[notices]") {
    const auto key = make_key("k", "key", transitions_t0, transitions_t0 + days{1});
    CHECK(transitions_between(key, transitions_t0, transitions_t0).empty());
    CHECK(transitions_between(key, transitions_t0 + days{2}, transitions_t0 - days{2}).empty());
    CHECK(transitions_between(key, transitions_t0 + microseconds{1}, transitions_t0).empty());
    // Its mirror, the smallest interval holding transitions_t0, does report.
    CHECK(transitions_between(key, transitions_t0 - microseconds{1}, transitions_t0).size() == 2);
}

TEST_CASE("revoked keys have no clock transitions", "[S1][S2][notices]") {
    const auto key = make_key("k", "key", transitions_t0, transitions_t0 + days{3}, key_status::revoked);
    CHECK(key_transitions(key).empty());
    CHECK(transitions_between(key, transitions_t0 - days{10}, transitions_t0 + days{10}).empty());
    // Only the revoked family of the listed status matters (S2); the clock decides the rest.
    for (const auto listed : {key_status::active, key_status::active_in_future, key_status::expired}) {
        INFO(listed);
        CHECK(key_transitions(make_key("k", "key", transitions_t0, transitions_t0 + days{3}, listed)).size() == 3);
    }
}

TEST_CASE("empty and inverted validity periods: never activated or warned, expired once", "[S1][W2][W3][notices]") {
    SECTION("empty: expires at expireAt, which is activeFrom") {
        const auto key = make_key("k", "key", transitions_t0, transitions_t0);
        CHECK(key_transitions(key) == std::vector<key_transition>{{notice_kind::expired, transitions_t0}});
        CHECK(keyhook::status_at(key, transitions_t0 - microseconds{1}) == key_status::active_in_future);
        CHECK(keyhook::status_at(key, transitions_t0) == key_status::expired);
        CHECK(transitions_between(key, transitions_t0 - microseconds{1}, transitions_t0).size() == 1);
        CHECK(transitions_between(key, transitions_t0, transitions_t0 + days{1}).empty());
    }
    SECTION("inverted: S1 keeps it in the future until activeFrom, then it is Expired") {
        const auto key = make_key("k", "key", transitions_t0, transitions_t0 - days{2} - microseconds{7});
        CHECK(key_transitions(key) == std::vector<key_transition>{{notice_kind::expired, transitions_t0}});
        CHECK(keyhook::status_at(key, key.expire_at) == key_status::active_in_future);
        CHECK(keyhook::status_at(key, transitions_t0 - microseconds{1}) == key_status::active_in_future);
        CHECK(keyhook::status_at(key, transitions_t0) == key_status::expired);
        // Nothing at expireAt itself.
        CHECK(transitions_between(key, key.expire_at - hours{1}, key.expire_at + hours{1}).empty());
        CHECK(transitions_between(key, transitions_t0 - microseconds{1}, transitions_t0).size() == 1);
        CHECK(transitions_between(key, transitions_t0, transitions_t0 + days{1}).empty());
    }
    SECTION("1 microsecond is the shortest period that activates") {
        CHECK(key_transitions(make_key("k", "key", transitions_t0, transitions_t0 + microseconds{1})).size() == 3);
        CHECK(key_transitions(make_key("k", "key", transitions_t0, transitions_t0 - microseconds{1})).size() == 1);
    }
}

TEST_CASE("far-future keys: a 9999-12-31 expiry never reports expired before it", "[T3][W2][notices]") {
    const auto key = make_key("k", "key", transitions_t0, keyhook::parse_timestamp("9999-12-31T23:59:59Z"));
    const auto all = key_transitions(key);
    REQUIRE(all.size() == 3);
    CHECK(all[1].at == key.expire_at - days{8});
    CHECK(transitions_between(key, transitions_t0 - days{1}, transitions_t0 + days{365 * 100}).size() == 1);
}

TEST_CASE("printing", "[notices]") {
    std::ostringstream os;
    os << key_transition{notice_kind::warning, at(2026, 3, 2, 0, 0, 0, 5)};
    CHECK(os.str() == "warning@2026-03-02T00:00:00.000005Z");
    CHECK(keyhook::to_string(notice_kind::activated) == "activated");
    CHECK(keyhook::to_string(notice_kind::expired) == "expired");
}
