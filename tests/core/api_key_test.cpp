#include "keyhook/api_key.hpp"

#include <catch2/catch.hpp>

#include <sstream>
#include <string>
#include <unordered_set>

#include <nlohmann/json.hpp>

#include "keyhook/status.hpp"
#include "keyhook/testing.hpp"

using keyhook::errc;
using keyhook::key_status;
using keyhook::try_api_key_from_json;
using nlohmann::json;

namespace {

// A record with every member of spec 2.1 set.
json full_record() {
    return json{{"id", "3f2b8c1e-7d4a-4e9b-a1c2-5d6e7f8a9b0c"},
                {"userId", "11111111-2222-4333-8444-555555555555"},
                {"name", "billing export"},
                {"description", "nightly export"},
                {"masked", "3f2******************************b0c"},
                {"status", "Active"},
                {"type", "Synthetic"},
                {"groups", {"user:pf", "tenant-viewer"}},
                {"createdAt", "2025-01-02T03:04:05.62016Z"},
                {"createdBy", "jane.doe@example.com"},
                {"updatedAt", "2025-01-03T00:00:00Z"},
                {"activeFrom", "2025-01-02T00:00:00Z"},
                {"expireAt", "2025-02-01T00:00:00.8538786Z"},
                {"lastUsedAt", "2025-01-20T12:00:00Z"}};
}

json minimal_record() {
    return json{{"id", "k1"},
                {"name", "n"},
                {"status", "Active"},
                {"activeFrom", "2025-01-02T00:00:00Z"},
                {"expireAt", "2025-02-01T00:00:00Z"}};
}

const char* const required_members[] = {"id", "name", "status", "activeFrom", "expireAt"};
const char* const optional_members[] = {"userId",    "description", "masked",    "type",      "groups",
                                        "createdAt", "createdBy",   "updatedAt", "lastUsedAt"};

}  // namespace

TEST_CASE("L2: a full record reads every member", "[L2][api_key]") {
    const auto k = keyhook::api_key_from_json(full_record());
    CHECK(k.id.str() == "3f2b8c1e-7d4a-4e9b-a1c2-5d6e7f8a9b0c");
    CHECK(k.user_id == "11111111-2222-4333-8444-555555555555");
    CHECK(k.name == "billing export");
    CHECK(k.description == "nightly export");
    CHECK(k.masked == "3f2******************************b0c");
    CHECK(k.status == key_status::active);
    CHECK(k.type == "Synthetic");
    CHECK(k.groups == std::vector<std::string>{"user:pf", "tenant-viewer"});
    CHECK(k.created_at == keyhook::parse_timestamp("2025-01-02T03:04:05.62016Z"));
    CHECK(k.created_by == "jane.doe@example.com");
    CHECK(k.updated_at == keyhook::parse_timestamp("2025-01-03T00:00:00Z"));
    CHECK(k.active_from == keyhook::parse_timestamp("2025-01-02T00:00:00Z"));
    CHECK(k.expire_at == keyhook::parse_timestamp("2025-02-01T00:00:00.853878Z"));
    CHECK(k.last_used_at == keyhook::parse_timestamp("2025-01-20T12:00:00Z"));
}

TEST_CASE("L2: each required member, missing or null, is an error naming it", "[L2][api_key]") {
    for (const char* name : required_members) {
        INFO(name);
        for (const bool as_null : {false, true}) {
            auto j = minimal_record();
            if (as_null)
                j[name] = nullptr;
            else
                j.erase(name);
            const auto r = try_api_key_from_json(j, "data.result[3]");
            REQUIRE_FALSE(r.has_value());
            CHECK(r.error().code == errc::missing_member);
            CHECK(r.error().path == std::string("data.result[3].") + name);
            CHECK(r.error().message == "required member is missing");
        }
        // The same record with the member present reads fine.
        CHECK(try_api_key_from_json(minimal_record(), "data.result[3]").has_value());
    }
}

TEST_CASE("L2: every other member may be missing or null", "[L2][api_key]") {
    for (const bool as_null : {false, true}) {
        auto j = full_record();
        for (const char* name : optional_members) {
            if (as_null)
                j[name] = nullptr;
            else
                j.erase(name);
        }
        const auto r = try_api_key_from_json(j);
        REQUIRE(r.has_value());
        CHECK_FALSE(r->user_id);
        CHECK_FALSE(r->description);
        CHECK_FALSE(r->masked);
        CHECK_FALSE(r->type);
        CHECK(r->groups.empty());
        CHECK_FALSE(r->created_at);
        CHECK_FALSE(r->created_by);
        CHECK_FALSE(r->updated_at);
        CHECK_FALSE(r->last_used_at);
    }
}

TEST_CASE("L2: unknown members are ignored", "[L2][api_key]") {
    auto j = full_record();
    const auto plain = keyhook::api_key_from_json(j);
    j["color"] = "blue";
    j["nested"] = {{"deep", {1, 2, {{"x", nullptr}}}}};
    j["Id"] = 42;  // names are case-sensitive: not "id"
    CHECK(keyhook::api_key_from_json(j) == plain);
}

TEST_CASE("L2: wrong member types are errors with their paths", "[L2][api_key]") {
    struct bad_case {
        const char* member;
        json value;
        errc code;
        std::string path;
        std::string message;
    };
    const bad_case cases[] = {
        {"id", 7, errc::wrong_type, "r.id", "expected a string, got number"},
        {"name", true, errc::wrong_type, "r.name", "expected a string, got boolean"},
        {"description", json::array(), errc::wrong_type, "r.description", "expected a string, got array"},
        {"status", json::object(), errc::wrong_type, "r.status", "expected a string, got object"},
        {"groups", "user:pf", errc::wrong_type, "r.groups", "expected an array of strings, got string"},
        {"groups", json{"user:pf", 3}, errc::wrong_type, "r.groups[1]", "expected a string, got number"},
        {"groups", json{"user:pf", nullptr}, errc::wrong_type, "r.groups[1]", "expected a string, got null"},
        {"activeFrom", 1700000000, errc::wrong_type, "r.activeFrom",
         "expected an ISO 8601 timestamp string, got number"},
        {"expireAt", "2026-02-30T00:00:00Z", errc::invalid_timestamp, "r.expireAt",
         "expected an ISO 8601 timestamp, got \"2026-02-30T00:00:00Z\""},
        {"lastUsedAt", "yesterday", errc::invalid_timestamp, "r.lastUsedAt",
         "expected an ISO 8601 timestamp, got \"yesterday\""},
    };
    for (const auto& c : cases) {
        INFO(c.member << " = " << c.value.dump());
        auto j = full_record();
        j[c.member] = c.value;
        const auto r = try_api_key_from_json(j, "r");
        REQUIRE_FALSE(r.has_value());
        CHECK(r.error().code == c.code);
        CHECK(r.error().path == c.path);
        CHECK(r.error().message == c.message);
    }
}

TEST_CASE("L2: a record must be an object", "[L2][api_key]") {
    const auto r = try_api_key_from_json(json::array(), "data.result[0]");
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error().code == errc::wrong_type);
    CHECK(r.error().path == "data.result[0]");
    CHECK(r.error().message == "expected an object, got array");
    CHECK_THROWS_AS(keyhook::api_key_from_json(json(3)), keyhook::exception);
    CHECK_THROWS_AS(json(3).get<keyhook::api_key>(), keyhook::exception);
}

TEST_CASE("S2: listed status spellings, case- and space-insensitive", "[S2][api_key]") {
    struct spelling {
        const char* text;
        key_status status;
    };
    const spelling accepted[] = {
        {"Active", key_status::active},
        {"active", key_status::active},
        {"ACTIVE", key_status::active},
        {" Active ", key_status::active},
        {"Active in the future", key_status::active_in_future},
        {"active in the future", key_status::active_in_future},
        {"ACTIVE IN THE FUTURE", key_status::active_in_future},
        {"Active  in the\tfuture", key_status::active_in_future},
        {"ActiveInTheFuture", key_status::active_in_future},
        {"ActiveInFuture", key_status::active_in_future},
        {"activeinfuture", key_status::active_in_future},
        {"Active in future", key_status::active_in_future},
        {"Expired", key_status::expired},
        {"expired", key_status::expired},
        {"Revoked", key_status::revoked},
        {"REVOKED", key_status::revoked},
        {"Deactivated", key_status::revoked},
        {"deactivated", key_status::revoked},
        {"Inactive", key_status::revoked},
        {"in active", key_status::revoked},
    };
    for (const auto& s : accepted) {
        INFO(s.text);
        auto j = minimal_record();
        j["status"] = s.text;
        const auto r = try_api_key_from_json(j, "data.result[0]");
        REQUIRE(r.has_value());
        CHECK(r->status == s.status);
    }
}

TEST_CASE("S2: any other status is an error with its path", "[S2][api_key]") {
    for (const char* text : {"", " ", "Activ", "Actives", "Active-in-the-future", "Active_in_future", "Suspended",
                             "Disabled", "Revoked!", "Expired yesterday", "activeinthefuturexxxxxxxxxx"}) {
        INFO(text);
        auto j = minimal_record();
        j["status"] = text;
        const auto r = try_api_key_from_json(j, "data.result[2]");
        REQUIRE_FALSE(r.has_value());
        CHECK(r.error().code == errc::invalid_value);
        CHECK(r.error().path == "data.result[2].status");
        CHECK(r.error().message ==
              "expected Active, Active in the future, Expired or Revoked, got " + keyhook::detail::quote_input(text));
    }
}

TEST_CASE("S1, S2: only the revoked family changes the derived status", "[S1][S2][api_key]") {
    const auto now = keyhook::parse_timestamp("2025-01-15T00:00:00Z");  // inside minimal_record's period
    for (const char* text : {"Active", "Expired", "ActiveInFuture"}) {
        auto j = minimal_record();
        j["status"] = text;
        CHECK(keyhook::status_at(keyhook::api_key_from_json(j), now) == key_status::active);
    }
    for (const char* text : {"Revoked", "Deactivated", "Inactive"}) {
        auto j = minimal_record();
        j["status"] = text;
        CHECK(keyhook::status_at(keyhook::api_key_from_json(j), now) == key_status::revoked);
    }
}

TEST_CASE("L2: JSON round trip keeps every member", "[L2][T4][api_key]") {
    SECTION("full") {
        const auto k = keyhook::api_key_from_json(full_record());
        const json written = k;
        CHECK(keyhook::api_key_from_json(written) == k);
        CHECK(written["status"] == "Active");
        CHECK(written["expireAt"] == "2025-02-01T00:00:00.853878Z");  // T4: 6 digits when not whole ms
        CHECK(written["activeFrom"] == "2025-01-02T00:00:00.000Z");   // T4: 3 digits on a whole ms
    }
    SECTION("minimal: absent members are written as null and read back absent") {
        const auto k = keyhook::api_key_from_json(minimal_record());
        const json written = k;
        CHECK(written["userId"].is_null());
        CHECK(written["lastUsedAt"].is_null());
        CHECK(written["groups"] == json::array());
        CHECK(keyhook::api_key_from_json(written) == k);
    }
    SECTION("every listed status survives") {
        for (const auto s :
             {key_status::active, key_status::active_in_future, key_status::expired, key_status::revoked}) {
            const auto k = keyhook::testing::key_builder().status(s).build();
            CHECK(keyhook::api_key_from_json(json(k)) == k);
        }
    }
    SECTION("ordered_json writes spec order") {
        const auto k = keyhook::api_key_from_json(full_record());
        const nlohmann::ordered_json o = k;
        std::vector<std::string> names;
        for (const auto& item : o.items()) names.push_back(item.key());
        CHECK(names == std::vector<std::string>{"id", "userId", "name", "description", "masked", "status", "type",
                                                "groups", "createdAt", "createdBy", "updatedAt", "activeFrom",
                                                "expireAt", "lastUsedAt"});
    }
}

TEST_CASE("L2: records compare by every member", "[L2][api_key]") {
    const auto a = keyhook::api_key_from_json(full_record());
    auto b = a;
    CHECK(a == b);
    b.last_used_at.reset();
    CHECK(a != b);
    b = a;
    b.groups.pop_back();
    CHECK(a != b);
}

TEST_CASE("key_id: a strong, hashable, ordered, printable type", "[L2][api_key]") {
    static_assert(!std::is_convertible_v<std::string, keyhook::key_id>, "an id is not implicitly a string");
    const keyhook::key_id a("a"), b("b");
    CHECK(a < b);
    CHECK(b > a);
    CHECK(a != b);
    CHECK(a == keyhook::key_id("a"));
    std::unordered_set<keyhook::key_id> set{a, b, keyhook::key_id("a")};
    CHECK(set.size() == 2);
    std::ostringstream os;
    os << a;
    CHECK(os.str() == "a");
}

TEST_CASE("L2: a record prints readably, without any plaintext key", "[L2][M3][api_key]") {
    const auto k = keyhook::api_key_from_json(full_record());
    std::ostringstream os;
    os << k;
    CHECK(os.str() ==
          "api_key{id=3f2b8c1e-7d4a-4e9b-a1c2-5d6e7f8a9b0c, name=\"billing export\", status=Active, "
          "activeFrom=2025-01-02T00:00:00.000Z, expireAt=2025-02-01T00:00:00.853878Z, "
          "masked=3f2******************************b0c}");
}

namespace {

std::string printed(const keyhook::api_key& k) {
    std::ostringstream os;
    os << k;
    return os.str();
}

}  // namespace

// Regression test: masking: a record holding a full key printed it unmasked (P2, M3).
TEST_CASE("P2, M3: a record whose masked member holds a full key never prints or writes it",
          "[P2][M1][M2][M3][api_key]") {
    const std::string full_key = "9c4e1a7b-2f3d-4b8e-9a6c-1d2e3f4a5b6c";
    auto k = keyhook::api_key_from_json(full_record());
    k.masked = full_key;
    const auto text = printed(k);
    CHECK(text.find(full_key) == std::string::npos);
    CHECK(text.find(full_key.substr(3, 30)) == std::string::npos);
    CHECK(text.find("masked=9c4" + std::string(30, '*') + "b6c}") != std::string::npos);
    const json j = k;
    CHECK(j["masked"] == keyhook::mask_key(full_key));
    CHECK(j.dump().find(full_key) == std::string::npos);
    const nlohmann::ordered_json o = k;
    CHECK(o["masked"] == keyhook::mask_key(full_key));
    // A short value is masked entirely (M2).
    k.masked = "short-key1";
    CHECK(printed(k).find("masked=**********}") != std::string::npos);
    CHECK(json(k)["masked"] == "**********");
}

// Regression test: masking: a record holding a full key printed it unmasked (P2, M3).
TEST_CASE("P2: a well-formed masked member is written unchanged (the other side)", "[P2][M1][api_key]") {
    const auto k = keyhook::api_key_from_json(full_record());
    REQUIRE(k.masked == "3f2******************************b0c");
    CHECK(json(k)["masked"] == *k.masked);
    CHECK(printed(k).find("masked=" + *k.masked + "}") != std::string::npos);
    CHECK(keyhook::api_key_from_json(json(k)) == k);
}

// Regression test: masking: a record holding a full key printed it unmasked (P2, M3).
TEST_CASE("P1: CR, LF and terminal controls in an id or name print escaped and cannot forge a log line",
          "[P1][api_key]") {
    auto k = keyhook::api_key_from_json(full_record());
    k.id = keyhook::key_id("k1\r\n[keyhook] forged line");
    k.name = "name\n\x1b[31mred\xC2\x9B\xE2\x80\xAE";  // LF, ESC, CSI (U+009B), RLO (U+202E)
    const auto text = printed(k);
    CHECK(text.find('\n') == std::string::npos);
    CHECK(text.find('\r') == std::string::npos);
    CHECK(text.find('\x1b') == std::string::npos);
    CHECK(text.find("\xC2\x9B") == std::string::npos);
    CHECK(text.find("\xE2\x80\xAE") == std::string::npos);
    CHECK(text.find("id=k1\\x0d\\x0a[keyhook] forged line,") != std::string::npos);
    CHECK(text.find("name=\"name\\x0a\\x1b[31mred\\u009b\\u202e\"") != std::string::npos);
    std::ostringstream os;
    os << k.id;
    CHECK(os.str() == "k1\\x0d\\x0a[keyhook] forged line");
}

TEST_CASE("P1: an id of ordinary non-ASCII letters prints as it is (the other side)", "[P1][api_key]") {
    std::ostringstream os;
    os << keyhook::key_id("cl\xC3\xA9-\xE6\x9D\xB1\xE4\xBA\xAC");  // "clé-東京"
    CHECK(os.str() == "cl\xC3\xA9-\xE6\x9D\xB1\xE4\xBA\xAC");
}
