#include "keyhook/expiry_notices.hpp"

#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include <sstream>
#include <string>
#include <vector>

#include "test_keys.hpp"

using keyhook::api_key;
using keyhook::expiry_notice;
using keyhook::key_status;
using keyhook::notice_kind;
using namespace notices_test;

namespace {
const std::string uuid_key = "3f0c2a9e-5d41-4b7a-9c3e-1a2b3c4d5e6f";
const timestamp t0 = at(2026, 3, 1, 12);

template <class T>
std::string printed(const T& v) {
    std::ostringstream os;
    os << v;
    return os.str();
}
}  // namespace

TEST_CASE("a notice carries the key's id, name, masked key, the change and expireAt", "[W2][notices]") {
    const auto key =
        make_key("id-1", "billing sync", t0, t0 + days{5}, key_status::active, keyhook::mask_key(uuid_key));
    const auto notices = keyhook::notices_between(key, t0 - days{1}, t0 + days{1});
    REQUIRE(notices.size() == 2);
    const auto& n = notices[1];
    CHECK(n.id == keyhook::key_id("id-1"));
    CHECK(n.name == "billing sync");
    CHECK(n.masked == key.masked);
    CHECK(n.kind == notice_kind::warning);
    CHECK(n.at == t0 + days{1});
    CHECK(n.expire_at == key.expire_at);
    CHECK(notices[0].kind == notice_kind::activated);
    CHECK(notices[0].at == t0);

    for (const auto& t : keyhook::transitions_between(key, t0 - days{1}, t0 + days{1}))
        CHECK(keyhook::make_notice(key, t).at == t.at);
}

TEST_CASE("notice JSON: members, order, T4 timestamps", "[T4][notices]") {
    const auto key = make_key("id-1", "billing sync", t0, at(2026, 3, 6, 12, 0, 0, 250), key_status::active,
                              keyhook::mask_key(uuid_key));
    const auto n = keyhook::make_notice(key, {notice_kind::expired, key.expire_at});
    nlohmann::ordered_json j = n;
    CHECK(j.dump() ==
          R"({"id":"id-1","name":"billing sync","masked":"3f0******************************e6f","kind":"expired",)"
          R"("at":"2026-03-06T12:00:00.000250Z","expireAt":"2026-03-06T12:00:00.000250Z"})");

    // Whole milliseconds are written with 3 digits; the text parses back to the instant.
    const auto w = keyhook::make_notice(key, {notice_kind::activated, t0});
    const nlohmann::json jw = w;
    CHECK(jw.at("at") == "2026-03-01T12:00:00.000Z");
    CHECK(keyhook::parse_timestamp(jw.at("at").get<std::string>()) == w.at);
    CHECK(keyhook::parse_timestamp(j.at("expireAt").get<std::string>()) == n.expire_at);
    CHECK(jw.size() == 6);
}

TEST_CASE("notice JSON: masked is null when the record has none", "[L2][notices]") {
    const auto key = make_key("id-2", "no mask", t0, t0 + days{1});
    const auto n = keyhook::make_notice(key, {notice_kind::warning, t0});
    CHECK_FALSE(n.masked.has_value());
    const nlohmann::json j = n;
    CHECK(j.at("masked").is_null());
    CHECK(j.at("kind") == "warning");
    CHECK(printed(n).find("masked=null") != std::string::npos);
}

TEST_CASE("a notice never carries a full key, even from a record that wrongly holds one", "[M1][M2][M3][notices]") {
    SECTION("well-formed masks pass unchanged") {
        for (const auto& masked : {keyhook::mask_key(uuid_key), keyhook::mask_key("short-key"), std::string()}) {
            const auto key = make_key("id", "n", t0, t0 + days{1}, key_status::active, masked);
            CHECK(keyhook::make_notice(key, {notice_kind::activated, t0}).masked == masked);
        }
    }
    SECTION("a plaintext key in the masked member is masked") {
        const auto key = make_key("id", "n", t0, t0 + days{1}, key_status::active, uuid_key);
        const auto n = keyhook::make_notice(key, {notice_kind::activated, t0});
        CHECK(n.masked == keyhook::mask_key(uuid_key));
        CHECK(nlohmann::json(n).dump().find(uuid_key) == std::string::npos);
        CHECK(printed(n).find(uuid_key) == std::string::npos);
        const auto d = keyhook::digest_between({key}, t0 - days{1}, t0 + days{2});
        REQUIRE(d.notices.size() == 3);
        CHECK(nlohmann::json(d).dump().find(uuid_key) == std::string::npos);
        CHECK(printed(d).find(uuid_key) == std::string::npos);
    }
}

TEST_CASE("digest: ordered by instant, then name, then id; one key's simultaneous changes in kind order",
          "[W2][W3][notices]") {
    const std::vector<api_key> page = {
        make_key("b-1", "beta", t0, t0 + days{1}),             // activated and warning at t0
        make_key("a-2", "alpha", t0, t0 + days{5}),            // activated at t0, warning a day later
        make_key("a-1", "alpha", t0, t0 + days{30}),           // same name, smaller id
        make_key("z-9", "zulu", t0 - days{3}, t0 - hours{1}),  // expired an hour before t0
        make_key("r-1", "revoked", t0, t0 + days{1}, key_status::revoked),
        make_key("f-1", "future", t0 + days{2}, t0 + days{9}),  // nothing yet
    };
    const auto d = keyhook::digest_between(page, t0 - hours{2}, t0);
    CHECK(d.since == t0 - hours{2});
    CHECK(d.now == t0);
    std::vector<std::string> got;
    for (const auto& n : d.notices) got.push_back(n.id.str() + " " + std::string(to_string(n.kind)));
    CHECK(got ==
          std::vector<std::string>{"z-9 expired", "a-1 activated", "a-2 activated", "b-1 activated", "b-1 warning"});
    // The page's order does not matter.
    std::vector<api_key> reversed(page.rbegin(), page.rend());
    CHECK(keyhook::digest_between(reversed, t0 - hours{2}, t0) == d);
}

TEST_CASE("digest: a record listed twice gives its notices once", "[notices]") {
    const auto key = make_key("id", "twice", t0, t0 + days{1});
    const auto once = keyhook::digest_between({key}, t0 - hours{1}, t0 + days{1});
    const auto twice = keyhook::digest_between({key, key}, t0 - hours{1}, t0 + days{1});
    CHECK(once.notices.size() == 3);
    CHECK(twice == once);
    // Two records that share an id but differ are both reported in full
    // (their notices differ at least in expireAt).
    auto moved = key;
    moved.expire_at = t0 + hours{20};
    const auto both = keyhook::digest_between({key, moved}, t0 - hours{1}, t0 + days{1});
    CHECK(both.notices.size() ==
          once.notices.size() + keyhook::notices_between(moved, t0 - hours{1}, t0 + days{1}).size());
    CHECK(both.notices.size() == 6);
}

TEST_CASE("digest JSON: since, now and the notices", "[T4][notices]") {
    const auto key = make_key("id-1", "one day", t0, t0 + days{1}, key_status::active, keyhook::mask_key(uuid_key));
    const auto d = keyhook::digest_between({key}, t0 - microseconds{1}, t0);
    nlohmann::ordered_json j = d;
    CHECK(j.dump() ==
          R"({"since":"2026-03-01T11:59:59.999999Z","now":"2026-03-01T12:00:00.000Z","notices":[)"
          R"({"id":"id-1","name":"one day","masked":"3f0******************************e6f","kind":"activated",)"
          R"("at":"2026-03-01T12:00:00.000Z","expireAt":"2026-03-02T12:00:00.000Z"},)"
          R"({"id":"id-1","name":"one day","masked":"3f0******************************e6f","kind":"warning",)"
          R"("at":"2026-03-01T12:00:00.000Z","expireAt":"2026-03-02T12:00:00.000Z"}]})");
    const nlohmann::json empty = keyhook::digest_between({key}, t0, t0);
    CHECK(empty.at("notices").is_array());
    CHECK(empty.at("notices").empty());
}

TEST_CASE("notice values are regular", "[notices]") {
    const auto key = make_key("id", "n", t0, t0 + days{1});
    const auto a = keyhook::make_notice(key, {notice_kind::activated, t0});
    auto b = a;
    CHECK(a == b);
    b.kind = notice_kind::warning;
    CHECK(a != b);
    CHECK(keyhook::notice_order(a, b));
    CHECK_FALSE(keyhook::notice_order(b, a));
    CHECK(printed(a) ==
          "expiry_notice{activated at 2026-03-01T12:00:00.000Z, id=id, name=\"n\", masked=null, "
          "expireAt=2026-03-02T12:00:00.000Z}");
}
