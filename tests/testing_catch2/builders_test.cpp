// The framework-free builders of keyhook/testing.hpp, and Catch printing a
// timestamp through keyhook/testing/catch2.hpp.
#include "keyhook/testing/catch2.hpp"

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "keyhook/key_list.hpp"
#include "keyhook/key_list_view.hpp"
#include "keyhook/status.hpp"

using date::days;
using keyhook::key_status;
using keyhook::testing::fixed_now;
using keyhook::testing::key_builder;
using keyhook::testing::list_response_builder;

TEST_CASE("testing: fixed_now is 2026-01-15T10:00:00Z", "[T1][T4][testing]") {
    CHECK(fixed_now == keyhook::parse_timestamp("2026-01-15T10:00:00Z"));
}

TEST_CASE("testing: Catch prints timestamps as T4 text (keyhook/testing/catch2.hpp)", "[T4][testing]") {
    CHECK(Catch::Detail::stringify(fixed_now) == "2026-01-15T10:00:00.000Z");
    CHECK(Catch::Detail::stringify(fixed_now + keyhook::microseconds{1}) == "2026-01-15T10:00:00.000001Z");
}

TEST_CASE("testing: test_uuid is UUID-shaped and distinct", "[testing]") {
    CHECK(keyhook::testing::test_uuid(0) == "00000000-0000-4000-8000-000000000000");
    CHECK(keyhook::testing::test_uuid(7) == "00000000-0000-4000-8000-000000000007");
    CHECK(keyhook::testing::test_uuid(0xabcdef) == "00000000-0000-4000-8000-000000abcdef");
    CHECK(keyhook::testing::test_uuid(1).size() == 36);
    CHECK(keyhook::testing::test_uuid(1) != keyhook::testing::test_uuid(2));
}

TEST_CASE("testing: key_builder defaults give an Active 30-day key around fixed_now", "[S1][W2][testing]") {
    const auto k = key_builder().build();
    CHECK(k.id.str() == keyhook::testing::test_uuid(1));
    CHECK(k.name == "test key");
    CHECK(k.status == key_status::active);
    CHECK(k.type == "Synthetic");
    CHECK(k.groups == std::vector<std::string>{"user:pf"});
    CHECK(k.expire_at - k.active_from == days{30});
    CHECK(k.active_from < fixed_now);
    CHECK(fixed_now < k.expire_at);
    CHECK(keyhook::status_at(k, fixed_now) == key_status::active);
    // A 30-day key warns from its 24th valid day: not yet at fixed_now (day 16).
    CHECK_FALSE(keyhook::expiry_warning_at(k, fixed_now));
    // M1: masked like a 36-character key.
    REQUIRE(k.masked.has_value());
    CHECK(*k.masked == keyhook::mask_key(k.id.str()));
    CHECK(k.created_at == k.active_from);
}

TEST_CASE("testing: fluent setters", "[testing]") {
    const auto k = key_builder()
                       .id("k-1")
                       .name("billing")
                       .description(std::nullopt)
                       .groups({"user:pf", "tenant-viewer"})
                       .add_group("user:pricing")
                       .type("Other")
                       .last_used_at(fixed_now)
                       .created_by("ops@example.com")
                       .revoked()
                       .build();
    CHECK(k.id.str() == "k-1");
    CHECK(k.name == "billing");
    CHECK_FALSE(k.description);
    CHECK(k.groups == std::vector<std::string>{"user:pf", "tenant-viewer", "user:pricing"});
    CHECK(k.type == "Other");
    CHECK(k.last_used_at == fixed_now);
    CHECK(k.created_by == "ops@example.com");
    CHECK(k.status == key_status::revoked);
    CHECK(keyhook::status_at(k, fixed_now) == key_status::revoked);
}

TEST_CASE("testing: with() sets any member by its pointer", "[testing]") {
    const auto k = key_builder()
                       .with(&keyhook::api_key::type, std::string("Synthetic"))
                       .with(&keyhook::api_key::groups, std::vector<std::string>{"a"})
                       .build();
    CHECK(k.type == "Synthetic");
    CHECK(k.groups == std::vector<std::string>{"a"});
    CHECK(key_builder().build().groups != k.groups);
}

TEST_CASE("testing: period helpers", "[S1][testing]") {
    const auto p = key_builder().period(fixed_now, fixed_now + days{5}).build();
    CHECK(p.active_from == fixed_now);
    CHECK(p.expire_at == fixed_now + days{5});

    const auto e = key_builder().expires_in(days{3}).build();
    CHECK(e.expire_at == fixed_now + days{3});
    const auto gone = key_builder().expires_in(-keyhook::microseconds{1}).build();
    CHECK(keyhook::status_at(gone, fixed_now) == key_status::expired);
    const auto at_now = key_builder().expires_in(keyhook::microseconds{0}).build();
    CHECK(keyhook::status_at(at_now, fixed_now) == key_status::expired);
    const auto later = key_builder().expires_in(keyhook::microseconds{1}).build();
    CHECK(keyhook::status_at(later, fixed_now) == key_status::active);

    const auto s = key_builder().starts_at(fixed_now + days{1}).build();
    CHECK(s.active_from == fixed_now + days{1});
    CHECK(s.expire_at - s.active_from == days{30});
    CHECK(keyhook::status_at(s, fixed_now) == key_status::active_in_future);

    const auto l = key_builder().lasting(days{1}, fixed_now).build();
    CHECK(l.active_from == fixed_now);
    CHECK(l.expire_at == fixed_now + days{1});
    CHECK(keyhook::expiry_warning_at(l, fixed_now));  // W2: a 1-day key always warns
}

TEST_CASE("testing: masked_from keeps only the masked form", "[M1][M3][testing]") {
    const keyhook::secret plain("0123456789abcdefghij");
    const auto k = key_builder().masked_from(plain).build();
    CHECK(k.masked == plain.masked());
    CHECK(k.masked->find("456789abcdefg") == std::string::npos);
}

TEST_CASE("testing: numbered keys are distinct", "[testing]") {
    const auto a = key_builder::numbered(1).build();
    const auto b = key_builder::numbered(2).build();
    CHECK(a.id != b.id);
    CHECK(a.name == "test key 1");
    CHECK(b.name == "test key 2");
    CHECK(b.masked == keyhook::mask_key(b.id.str()));
}

TEST_CASE("testing: minimal() leaves only the required members", "[L2][testing]") {
    const auto k = key_builder().minimal().build();
    CHECK_FALSE(k.user_id);
    CHECK_FALSE(k.description);
    CHECK_FALSE(k.masked);
    CHECK_FALSE(k.type);
    CHECK(k.groups.empty());
    CHECK_FALSE(k.created_at);
    CHECK_FALSE(k.created_by);
    CHECK_FALSE(k.updated_at);
    CHECK_FALSE(k.last_used_at);
    CHECK_FALSE(k.id.empty());
    CHECK_FALSE(k.name.empty());
}

TEST_CASE("testing: a host's test in three lines", "[L2][L3][testing]") {
    auto key = key_builder().name("billing").expires_in(days{3}).build();
    auto body = list_response_builder().add(key).build();
    auto page = keyhook::parse_key_list(body);
    REQUIRE(page.records.size() == 1);
    CHECK(page.records[0] == key);
    CHECK(keyhook::default_view(page.records, fixed_now).size() == 1);
}

TEST_CASE("testing: list_response_builder writes the spec 4.1 envelope", "[L2][testing]") {
    list_response_builder b;
    b.add(key_builder::numbered(1)).add(key_builder::numbered(2).build()).page(2).page_size(2).count(5);
    CHECK(b.size() == 2);
    const auto j = nlohmann::json::parse(b.build());
    CHECK(j["status"] == "success");
    CHECK(j["data"]["count"] == 5);
    CHECK(j["data"]["page"] == 2);
    CHECK(j["data"]["pageSize"] == 2);
    REQUIRE(j["data"]["result"].size() == 2);
    CHECK(j["data"]["result"][1]["id"] == keyhook::testing::test_uuid(2));
    CHECK_FALSE(j.contains("message"));

    // count defaults to the number of records.
    const auto d = nlohmann::json::parse(list_response_builder().add(key_builder()).build());
    CHECK(d["data"]["count"] == 1);
    CHECK(d["data"]["page"] == 1);
    CHECK(d["data"]["pageSize"] == 100);
}

TEST_CASE("testing: raw records and failures", "[L2][testing]") {
    const auto body = list_response_builder().add(key_builder()).add_raw(R"({"id":"x"})").add_raw("7").build();
    const auto page = keyhook::parse_key_list(body);
    CHECK(page.records.size() == 1);
    REQUIRE(page.rejected.size() == 2);
    CHECK(page.rejected[0].path == "data.result[1].name");
    CHECK(page.rejected[1].path == "data.result[2]");

    const auto failed =
        keyhook::try_parse_key_list(list_response_builder().failure("quota \"exceeded\"", "E42").build());
    REQUIRE_FALSE(failed.has_value());
    CHECK(failed.error().code == keyhook::errc::not_success);
    CHECK(failed.error().message ==
          "expected \"success\", got \"error\", errorCode \"E42\", message \"quota \\\"exceeded\\\"\"");
}
