// The JSON form of a key's policy and usage (K12 to K14) for a host's store:
// round trips, and every refusal with its path.
#include <catch2/catch.hpp>

#include <string>

#include <nlohmann/json.hpp>

#include "helpers.hpp"
#include "keyhook/json_input.hpp"
#include "keyhook/key_policy_json.hpp"

using namespace keyhook;
using nlohmann::json;
using test_support::at;

namespace {

result<key_policy> policy_of(const std::string& text) { return try_key_policy_from_json(parse_json(text)); }

// The error of a policy text that must be refused.
error refusal(const std::string& text) {
    const auto p = policy_of(text);
    INFO(text);
    REQUIRE_FALSE(p);
    return p.error();
}

}  // namespace

TEST_CASE("policy JSON: every member read, written back the same", "[K12][K13][K14][policy]") {
    const auto p = policy_of(R"({"allowedAddresses": ["10.1.2.3/8", "2001:db8::/32", "192.0.2.7"],
                                 "rateLimit": {"limit": 3, "periodMicroseconds": 1000000, "burst": 5},
                                 "credits": {"initial": 100, "refill": {"interval": "monthly", "amount": 50, "day": 31}}})");
    REQUIRE(p);
    CHECK(p->addresses == std::vector<address_range>{parse_address_range("10.0.0.0/8"),
                                                     parse_address_range("2001:db8::/32"),
                                                     parse_address_range("192.0.2.7/32")});
    REQUIRE(p->rate);
    CHECK(*p->rate == rate_limit{3, std::chrono::seconds{1}, 5});
    CHECK(p->limited_credits);
    CHECK(p->initial_credits == 100);
    REQUIRE(p->refill);
    CHECK(*p->refill == credit_refill{refill_period::monthly, 50, 31});

    const json written = *p;
    CHECK(written == json::parse(R"({"allowedAddresses": ["10.0.0.0/8", "2001:db8::/32", "192.0.2.7/32"],
                                     "rateLimit": {"limit": 3, "periodMicroseconds": 1000000, "burst": 5},
                                     "credits": {"initial": 100,
                                                 "refill": {"interval": "monthly", "amount": 50, "day": 31}}})"));
    CHECK(written.get<key_policy>() == *p);                         // a DOM built in memory
    CHECK(key_policy_from_json(parse_json(written.dump())) == *p);  // and as text
}

TEST_CASE("policy JSON: missing members impose nothing; defaults", "[K12][K13][K14][policy]") {
    const auto none = policy_of("{}");
    REQUIRE(none);
    CHECK(*none == key_policy{});
    CHECK(json(*none) == json::object());
    CHECK(policy_of(R"({"allowedAddresses": [], "rateLimit": null, "credits": null})").value() == key_policy{});

    // burst defaults to the limit; a daily refill has no day; credits without refill.
    const auto p = policy_of(R"({"rateLimit": {"limit": 10, "periodMicroseconds": 1},
                                 "credits": {"initial": 0, "refill": {"interval": "daily", "amount": 7}}})");
    REQUIRE(p);
    CHECK(p->rate->effective_burst() == 10);
    CHECK(*p->refill == credit_refill{refill_period::daily, 7, 1});
    CHECK(json(*p)["rateLimit"]["burst"] == 10);
    CHECK_FALSE(json(*p)["credits"]["refill"].contains("day"));
    const auto plain = policy_of(R"({"credits": {"initial": 3}})");
    REQUIRE(plain);
    CHECK(plain->limited_credits);
    CHECK_FALSE(plain->refill);
}

TEST_CASE("policy JSON: refusals name the member and say why", "[K12][K13][K14][policy]") {
    struct bad_case {
        const char* text;
        errc code;
        const char* path;
    };
    const bad_case cases[] = {
        {R"([])", errc::wrong_type, "policy"},
        {R"({"allowedAdresses": ["10.0.0.0/8"]})", errc::invalid_value, "policy.allowedAdresses"},
        {R"({"allowedAddresses": "10.0.0.0/8"})", errc::wrong_type, "policy.allowedAddresses"},
        {R"({"allowedAddresses": ["10.0.0.0/8", 7]})", errc::wrong_type, "policy.allowedAddresses[1]"},
        {R"({"allowedAddresses": ["10.0.0.0/8", "10.0.0.0/33"]})", errc::invalid_value, "policy.allowedAddresses[1]"},
        {R"({"rateLimit": 5})", errc::wrong_type, "policy.rateLimit"},
        {R"({"rateLimit": {"periodMicroseconds": 1}})", errc::missing_member, "policy.rateLimit.limit"},
        {R"({"rateLimit": {"limit": 1}})", errc::missing_member, "policy.rateLimit.periodMicroseconds"},
        {R"({"rateLimit": {"limit": 0, "periodMicroseconds": 1}})", errc::out_of_range, "policy.rateLimit.limit"},
        {R"({"rateLimit": {"limit": -1, "periodMicroseconds": 1}})", errc::invalid_value, "policy.rateLimit.limit"},
        {R"({"rateLimit": {"limit": 1.5, "periodMicroseconds": 1}})", errc::invalid_value, "policy.rateLimit.limit"},
        {R"({"rateLimit": {"limit": "1", "periodMicroseconds": 1}})", errc::wrong_type, "policy.rateLimit.limit"},
        {R"({"rateLimit": {"limit": 1, "periodMicroseconds": 0}})", errc::out_of_range,
         "policy.rateLimit.periodMicroseconds"},
        {R"({"rateLimit": {"limit": 1, "periodMicroseconds": 1, "burst": 0}})", errc::out_of_range,
         "policy.rateLimit.burst"},
        {R"({"rateLimit": {"limit": 1, "periodMicroseconds": 1, "per": 1}})", errc::invalid_value,
         "policy.rateLimit.per"},
        {R"({"credits": {}})", errc::missing_member, "policy.credits.initial"},
        {R"({"credits": {"initial": 1, "refill": {"amount": 1}}})", errc::missing_member,
         "policy.credits.refill.interval"},
        {R"({"credits": {"initial": 1, "refill": {"interval": "weekly", "amount": 1}}})", errc::invalid_value,
         "policy.credits.refill.interval"},
        {R"({"credits": {"initial": 1, "refill": {"interval": "daily"}}})", errc::missing_member,
         "policy.credits.refill.amount"},
        {R"({"credits": {"initial": 1, "refill": {"interval": "daily", "amount": 1, "day": 1}}})", errc::invalid_value,
         "policy.credits.refill.day"},
        {R"({"credits": {"initial": 1, "refill": {"interval": "monthly", "amount": 1}}})", errc::missing_member,
         "policy.credits.refill.day"},
        {R"({"credits": {"initial": 1, "refill": {"interval": "monthly", "amount": 1, "day": 0}}})", errc::out_of_range,
         "policy.credits.refill.day"},
        {R"({"credits": {"initial": 1, "refill": {"interval": "monthly", "amount": 1, "day": 32}}})",
         errc::out_of_range, "policy.credits.refill.day"},
    };
    for (const auto& c : cases) {
        const auto e = refusal(c.text);
        INFO(c.text << " -> " << e);
        CHECK(e.code == c.code);
        CHECK(e.path == c.path);
        CHECK_FALSE(e.message.empty());
    }
    CHECK(refusal(R"({"rateLimit": {"limit": 0, "periodMicroseconds": 1}})").message ==
          "expected a whole number from 1 to 18446744073709551615, got 0");
    CHECK(refusal(R"({"x": 1})").message ==
          R"(is not a member keyhook knows here; expected "allowedAddresses", "rateLimit", "credits")");
    CHECK_THROWS_AS(key_policy_from_json(json::array()), keyhook::exception);
    CHECK_THROWS_AS(json::parse(R"({"x": 1})").get<key_policy>(), keyhook::exception);
}

TEST_CASE("policy JSON: the bounds of each number, both sides", "[K13][K14][policy]") {
    // Day 1 and 31 are the ends of a monthly refill.
    CHECK(policy_of(R"({"credits": {"initial": 0, "refill": {"interval": "monthly", "amount": 0, "day": 1}}})"));
    CHECK(policy_of(R"({"credits": {"initial": 0, "refill": {"interval": "monthly", "amount": 0, "day": 31}}})"));
    // The largest counts there are.
    const auto big = policy_of(R"({"rateLimit": {"limit": 18446744073709551615, "periodMicroseconds": 1, "burst": 1},
                                   "credits": {"initial": 18446744073709551615}})");
    REQUIRE(big);
    CHECK(big->initial_credits == ~std::uint64_t{0});
    CHECK(refusal(R"({"credits": {"initial": 18446744073709551616}})").path == "policy.credits.initial");
    // The burst window: at 100 years accepted, one microsecond more refused.
    const auto years = std::to_string(max_rate_window.count());
    CHECK(policy_of(R"({"rateLimit": {"limit": 1, "periodMicroseconds": )" + years + "}}"));
    const auto longer = refusal(R"({"rateLimit": {"limit": 1, "periodMicroseconds": )" +
                                std::to_string(max_rate_window.count() + 1) + "}}");
    CHECK(longer.path == "policy.rateLimit.periodMicroseconds");
    CHECK(longer.code == errc::out_of_range);
    const auto window = refusal(R"({"rateLimit": {"limit": 1, "periodMicroseconds": )" + years + R"(, "burst": 2}})");
    CHECK(window.path == "policy.rateLimit.burst");
    CHECK(window.code == errc::invalid_value);
}

TEST_CASE("usage JSON: round trip, optional members, refusals", "[K13][K14][K15][policy]") {
    key_usage u;
    u.rate.tat = at("2024-03-15T08:00:00.000001Z");
    u.credits = {42, at("2024-03-15T00:00:00Z")};
    u.last_used_at = at("2024-03-15T07:59:59.5Z");
    const json written = u;
    CHECK(written == json::parse(R"({"rateTat": "2024-03-15T08:00:00.000001Z", "creditsRemaining": 42,
                                     "lastRefill": "2024-03-15T00:00:00.000Z",
                                     "lastUsedAt": "2024-03-15T07:59:59.500Z"})"));
    CHECK(written.get<key_usage>() == u);
    CHECK(key_usage_from_json(parse_json(written.dump())) == u);

    const auto fresh = key_usage::fresh(key_policy{}, at("2024-03-01T00:00:00Z"));
    CHECK(json(fresh) == json::parse(R"({"creditsRemaining": 0, "lastRefill": "2024-03-01T00:00:00.000Z"})"));
    CHECK(json(fresh).get<key_usage>() == fresh);

    const auto e = try_key_usage_from_json(json::parse(R"({"creditsRemaining": 1})")).error();
    CHECK(e.code == errc::missing_member);
    CHECK(e.path == "usage.lastRefill");
    const auto t =
        try_key_usage_from_json(
            json::parse(R"({"creditsRemaining": 1, "lastRefill": "2024-03-01T00:00:00Z", "rateTat": "soon"})"))
            .error();
    CHECK(t.code == errc::invalid_timestamp);
    CHECK(t.path == "usage.rateTat");
    CHECK(try_key_usage_from_json(json::parse(R"({"lastRefill": "2024-03-01T00:00:00Z"})")).error().path ==
          "usage.creditsRemaining");
    CHECK(try_key_usage_from_json(json::parse(R"({"creditsRemaining": 1, "lastRefill": "2024-03-01T00:00:00Z",
                                                   "lastUsed": "2024-03-01T00:00:00Z"})"))
              .error()
              .path == "usage.lastUsed");
    CHECK(try_key_usage_from_json(json::array(), "keys[3].usage").error().path == "keys[3].usage");
}
