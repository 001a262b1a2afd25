#include <catch2/catch.hpp>

#include <sstream>
#include <string>

#include "helpers.hpp"
#include "keyhook/authorization.hpp"
#include "keyhook/lifecycle.hpp"

using namespace keyhook;
using test_support::at;
using test_support::one_us;

namespace {

permission_policy acme_policy() {
    permission_policy p;
    p.groups["user:pf"].access[resource::all()] = access_level::read;
    p.groups["user:finance"].access[resource::folder("Finance")] = access_level::write;
    p.groups["user:reports"].features = {"reporting"};
    p.features["reporting"] = {api_family("Reports")};
    return p;
}

// One tenant "acme" with one key, and another tenant "globex" with one.
struct fixture {
    test_support::seeded_random random{2024};
    key_index index{random};
    api_key record;
    std::string key;
    std::string other_key;
    timestamp from = at("2024-03-01T00:00:00Z");
    timestamp until = at("2024-04-01T00:00:00Z");
    timestamp now = at("2024-03-15T00:00:00Z");

    fixture() {
        auto r = test_support::request();
        r.active_from = from;
        r.expire_at = until;
        r.groups = {"user:pf", "user:finance"};
        auto created = create_key(r, tenant_kind::restricted, random, from);
        record = created.record;
        key = created.key.take()->reveal();
        index.add("acme", record, secret(key), acme_policy());

        auto other = create_key(r, tenant_kind::restricted, random, from);
        other_key = other.key.take()->reveal();
        index.add("globex", other.record, secret(other_key), acme_policy());
    }

    http_headers headers(std::string_view k, std::string_view tenant = "acme") const {
        return {{"x-synthetic-key", std::string(k), true}, {"x-tenant-name", std::string(tenant), false}};
    }

    authorization check(const http_headers& h, access_level needed = access_level::read,
                        resource_ref res = resource_ref::in_folder("Finance"),
                        const api_family& family = api_family::execute()) const {
        return authorize(index, h, family, res, needed, now);
    }
};

}  // namespace

TEST_CASE("K10: a known, active key of the tenant with enough access is allowed", "[K10][authorization]") {
    fixture f;
    const auto a = f.check(f.headers(f.key), access_level::write);
    CHECK(a.allowed());
    CHECK(static_cast<bool>(a));
    CHECK_FALSE(a.reason());
    REQUIRE(a.key());
    CHECK(*a.key() == f.record.id);
    CHECK(a.status() == key_status::active);
    CHECK(a.granted() == access_level::write);
    CHECK(a.message() == "allowed: key \"" + f.record.id.str() + "\" has write access");
}

TEST_CASE("K10: header names are case-insensitive; both headers are required", "[K10][authorization]") {
    fixture f;
    CHECK(f.check({{"X-Synthetic-Key", f.key, true}, {"X-TENANT-NAME", "acme", false}}).allowed());
    CHECK(f.check({{"x-tenant-name", "acme", false}, {"x-SYNTHETIC-key", f.key, true}}).allowed());

    const auto no_key = f.check({{"x-tenant-name", "acme", false}});
    CHECK(no_key.reason() == denial_reason::missing_key);
    CHECK_FALSE(no_key.key());
    CHECK(f.check({{"x-synthetic-key", "", true}, {"x-tenant-name", "acme", false}}).reason() ==
          denial_reason::missing_key);
    CHECK(f.check({{"x-api-key", f.key, true}, {"x-tenant-name", "acme", false}}).reason() ==
          denial_reason::missing_key);
    CHECK(f.check({{"x-synthetic-key", f.key, true}}).reason() == denial_reason::missing_tenant);
    CHECK(f.check(f.headers(f.key, "")).reason() == denial_reason::missing_tenant);
    CHECK(f.check({}).reason() == denial_reason::missing_key);
}

TEST_CASE("K10: a header repeated with different values is refused; repeated with the same value is one header",
          "[K10][authorization]") {
    fixture f;
    const std::string other = f.key.substr(0, f.key.size() - 1) + (f.key.back() == 'a' ? "b" : "a");
    // Same value twice (names differing in case): one header.
    CHECK(
        f.check({{"x-synthetic-key", f.key, true}, {"X-Synthetic-Key", f.key, true}, {"x-tenant-name", "acme", false}})
            .allowed());
    CHECK(
        f.check({{"x-synthetic-key", f.key, true}, {"x-tenant-name", "acme", false}, {"x-tenant-name", "acme", false}})
            .allowed());
    // Different values, in either order and whichever is valid.
    for (const auto& pair : {std::make_pair(f.key, other), std::make_pair(other, f.key),
                             std::make_pair(f.key, std::string()), std::make_pair(std::string(), f.key)}) {
        const auto a = f.check({{"x-synthetic-key", pair.first, true},
                                {"x-tenant-name", "acme", false},
                                {"X-SYNTHETIC-KEY", pair.second, true}});
        CHECK(a.reason() == denial_reason::conflicting_key);
        CHECK_FALSE(a.key());
        CHECK(a.message() == "denied: header x-synthetic-key is given more than once, with different values");
        CHECK(a.message().find(f.key) == std::string::npos);
    }
    const auto t = f.check(
        {{"x-tenant-name", "acme", false}, {"x-synthetic-key", f.key, true}, {"x-tenant-name", "other", false}});
    CHECK(t.reason() == denial_reason::conflicting_tenant);
    CHECK(t.message() == "denied: header x-tenant-name is given more than once, with different values");
    CHECK(f.check({{"x-synthetic-key", f.key, true}, {"x-tenant-name", "", false}, {"x-tenant-name", "acme", false}})
              .reason() == denial_reason::conflicting_tenant);
    // The key header is checked first (K15's order).
    CHECK(f.check({{"x-synthetic-key", f.key, true},
                   {"x-synthetic-key", other, true},
                   {"x-tenant-name", "a", false},
                   {"x-tenant-name", "b", false}})
              .reason() == denial_reason::conflicting_key);
    CHECK(f.check({{"x-tenant-name", "a", false}, {"x-tenant-name", "b", false}}).reason() ==
          denial_reason::missing_key);
}

TEST_CASE("K10: an unknown key is denied; near misses are unknown", "[K10][authorization]") {
    fixture f;
    std::string last_differs = f.key;
    last_differs.back() = last_differs.back() == 'a' ? 'b' : 'a';
    for (const auto& wrong : {last_differs, f.key.substr(0, f.key.size() - 1), f.key + "0",
                              std::string("00000000-0000-4000-8000-000000000000")}) {
        const auto a = f.check(f.headers(wrong));
        CHECK(a.reason() == denial_reason::unknown_key);
        CHECK_FALSE(a.key());
    }
}

TEST_CASE("K10: a key of another tenant is denied", "[K10][authorization]") {
    fixture f;
    const auto a = f.check(f.headers(f.other_key, "acme"));
    CHECK(a.reason() == denial_reason::wrong_tenant);
    REQUIRE(a.key());
    CHECK(f.check(f.headers(f.other_key, "globex")).allowed());
    CHECK(f.check(f.headers(f.key, "ACME")).reason() == denial_reason::wrong_tenant);  // tenant names are exact
    CHECK(a.message().find("globex") == std::string::npos);  // the key's real tenant is not revealed
}

TEST_CASE("K10: only an Active key may be used (S1 boundaries)", "[K10][S1][authorization]") {
    fixture f;
    const auto h = f.headers(f.key);
    auto at_time = [&](timestamp t) {
        return authorize(f.index, h, api_family::execute(), resource_ref::all(), access_level::read, t);
    };

    auto before = at_time(f.from - one_us);
    CHECK(before.reason() == denial_reason::not_active);
    CHECK(before.status() == key_status::active_in_future);
    CHECK(at_time(f.from).allowed());
    CHECK(at_time(f.until - one_us).allowed());
    auto after = at_time(f.until);
    CHECK(after.reason() == denial_reason::not_active);
    CHECK(after.status() == key_status::expired);
    CHECK(after.message().find("Expired") != std::string::npos);
}

TEST_CASE("K10: a deactivated key is denied as Revoked; re-activation by update restores it",
          "[K10][K6][authorization]") {
    fixture f;
    const auto revoked = deactivate_key(f.record, f.now);
    REQUIRE(f.index.update("acme", revoked, acme_policy()));
    const auto a = f.check(f.headers(f.key));
    CHECK(a.reason() == denial_reason::not_active);
    CHECK(a.status() == key_status::revoked);
    CHECK(a.message() == "denied: key \"" + f.record.id.str() + "\" is Revoked; only an Active key may be used");

    key_update change;
    change.expire_at = f.until + std::chrono::hours(24);
    REQUIRE(f.index.update("acme", update_key(revoked, change, f.now), acme_policy()));
    CHECK(f.check(f.headers(f.key)).allowed());
}

TEST_CASE("K10: the API family must be allowed", "[K10][K9][authorization]") {
    fixture f;
    const auto h = f.headers(f.key);
    for (const auto& family : default_api_families())
        CHECK(f.check(h, access_level::read, resource_ref::all(), family).allowed());
    const auto a = f.check(h, access_level::read, resource_ref::all(), api_family("Reports"));
    CHECK(a.reason() == denial_reason::family_not_allowed);

    // A feature permission through a group widens the families.
    auto with_reports = f.record;
    with_reports.groups.push_back("user:reports");
    REQUIRE(f.index.update("acme", with_reports, acme_policy()));
    CHECK(f.check(h, access_level::read, resource_ref::all(), api_family("Reports")).allowed());
}

TEST_CASE("K10: the key needs at least the level the call needs", "[K10][K9][authorization]") {
    fixture f;
    const auto h = f.headers(f.key);
    // Finance: write (group user:finance); elsewhere: read (user:pf on all).
    CHECK(f.check(h, access_level::write, resource_ref::in_folder("Finance")).allowed());
    const auto admin = f.check(h, access_level::admin, resource_ref::in_folder("Finance"));
    CHECK(admin.reason() == denial_reason::insufficient_access);
    CHECK(admin.granted() == access_level::write);
    CHECK(admin.required() == access_level::admin);
    CHECK(admin.message() ==
          "denied: key \"" + f.record.id.str() + "\" has write access to the resource, the call needs admin");

    CHECK(f.check(h, access_level::read, resource_ref::in_folder("HR")).allowed());
    CHECK(f.check(h, access_level::execute, resource_ref::in_folder("HR")).reason() ==
          denial_reason::insufficient_access);
    CHECK(f.check(h, access_level::write, resource_ref::of_service("Finance", "Pricing")).allowed());
    CHECK(f.check(h, access_level::none, resource_ref::in_folder("HR")).allowed());
}

TEST_CASE("K10: the first failing check is the one reported", "[K10][authorization]") {
    fixture f;
    // Wrong tenant and expired: the tenant is checked first.
    const auto a =
        authorize(f.index, f.key, "globex", api_family("Nope"), resource_ref::all(), access_level::admin, f.until);
    CHECK(a.reason() == denial_reason::wrong_tenant);
    // Expired and family not allowed: status first.
    CHECK(authorize(f.index, f.key, "acme", api_family("Nope"), resource_ref::all(), access_level::admin, f.until)
              .reason() == denial_reason::not_active);
    // Family not allowed and insufficient access: family first.
    CHECK(authorize(f.index, f.key, "acme", api_family("Nope"), resource_ref::all(), access_level::admin, f.now)
              .reason() == denial_reason::family_not_allowed);
}

TEST_CASE("K10: denial values are regular and printable", "[K10][authorization]") {
    fixture f;
    const auto a = f.check(f.headers("no-such-key-000000"));
    const auto b = f.check(f.headers("another-unknown-key"));
    CHECK(a == b);
    CHECK(a != f.check(f.headers(f.key)));
    std::ostringstream os;
    os << a;
    CHECK(os.str() == "denied: the key in header x-synthetic-key is not known");
    CHECK(to_string(denial_reason::insufficient_access) == "insufficient_access");
}
