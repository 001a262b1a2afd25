#include <catch2/catch.hpp>

#include <set>
#include <sstream>
#include <string>
#include <type_traits>

#include "helpers.hpp"
#include "keyhook/creation.hpp"

using namespace keyhook;
using test_support::at;
using test_support::one_us;
using test_support::request;

namespace {

std::vector<std::string> paths_of(const std::vector<error>& errors) {
    std::vector<std::string> out;
    for (const auto& e : errors) out.push_back(e.path);
    return out;
}

std::string repeat(std::string_view unit, std::size_t n) {
    std::string s;
    for (std::size_t i = 0; i < n; ++i) s += unit;
    return s;
}

}  // namespace

TEST_CASE("K1: generated keys and ids are lowercase UUID v4 from the host's source", "[K1][creation]") {
    test_support::seeded_random random(42);
    const auto now = at("2024-03-10T12:00:00Z");
    std::set<std::string> seen;
    for (int i = 0; i < 200; ++i) {
        auto created = create_key(request(), tenant_kind::restricted, random, now);
        auto plaintext = created.key.take();
        REQUIRE(plaintext);
        CHECK(plaintext->size() == 36);
        CHECK(is_uuid_v4(plaintext->reveal()));
        CHECK(is_uuid_v4(created.record.id.str()));
        CHECK(seen.insert(plaintext->reveal()).second);
        CHECK(seen.insert(created.record.id.str()).second);
    }
    // 16 bytes for the key and 16 for the id, nothing else.
    CHECK(random.bytes == 200u * 32u);
}

TEST_CASE("K1: the UUID sets version 4 and the RFC variant over the drawn bytes", "[K1][creation]") {
    test_support::counting_random bytes;  // 00 01 02 ... 0f
    CHECK(generate_uuid_v4(bytes) == "00010203-0405-4607-8809-0a0b0c0d0e0f");
    // The next 16 bytes (10 .. 1f): version nibble and variant bits replace theirs.
    CHECK(generate_uuid_v4(bytes) == "10111213-1415-4617-9819-1a1b1c1d1e1f");
    CHECK(is_uuid_v4("00010203-0405-4607-8809-0a0b0c0d0e0f"));
    CHECK_FALSE(is_uuid_v4("00010203-0405-4607-8809-0A0B0C0D0E0F"));  // upper case
    CHECK_FALSE(is_uuid_v4("00010203-0405-3607-8809-0a0b0c0d0e0f"));  // version 3
    CHECK_FALSE(is_uuid_v4("00010203-0405-4607-c809-0a0b0c0d0e0f"));  // wrong variant
    CHECK_FALSE(is_uuid_v4("00010203-0405-4607-8809-0a0b0c0d0e0"));   // 35 characters
}

TEST_CASE("K1: the key is drawn before the id", "[K1][creation]") {
    test_support::counting_random bytes;
    auto created = create_key(request(), tenant_kind::restricted, bytes, at("2024-03-10T00:00:00Z"));
    CHECK(created.key.take()->reveal() == "00010203-0405-4607-8809-0a0b0c0d0e0f");
    CHECK(created.record.id.str() == "10111213-1415-4617-9819-1a1b1c1d1e1f");
}

TEST_CASE("K1: the new record's fields", "[K1][K3][creation]") {
    test_support::seeded_random random(7);
    auto r = request("  Billing integration  ");
    r.groups = {"user:pf", "user:finance"};
    const key_author author{std::string("5f0c6a1e-7d2b-4c8e-9f3a-1b2c3d4e5f60"), std::string("alice")};

    SECTION("now inside the period: Active, timestamps = now") {
        const auto now = at("2024-03-10T08:30:00.123456Z");
        auto created = create_key(r, tenant_kind::restricted, random, now, author);
        const auto& k = created.record;
        const auto plaintext = created.key.take();
        CHECK(k.name == "Billing integration");  // trimmed
        CHECK(k.description == std::optional<std::string>("Nightly batch upload"));
        CHECK(k.masked == std::optional<std::string>(mask_key(plaintext->reveal())));
        CHECK(k.status == key_status::active);
        CHECK(k.type == std::optional<std::string>("Synthetic"));
        CHECK(k.groups == r.groups);
        CHECK(k.created_at == std::optional<timestamp>(now));
        CHECK(k.updated_at == std::optional<timestamp>(now));
        CHECK(k.active_from == r.active_from);
        CHECK(k.expire_at == r.expire_at);
        CHECK(k.user_id == author.user_id);
        CHECK(k.created_by == author.created_by);
        CHECK_FALSE(k.last_used_at);
    }
    SECTION("status follows the clock at the period's edges (S1)") {
        CHECK(create_key(r, tenant_kind::restricted, random, r.active_from - one_us).record.status ==
              key_status::active_in_future);
        CHECK(create_key(r, tenant_kind::restricted, random, r.active_from).record.status == key_status::active);
        CHECK(create_key(r, tenant_kind::restricted, random, r.expire_at - one_us).record.status == key_status::active);
        CHECK(create_key(r, tenant_kind::restricted, random, r.expire_at).record.status == key_status::expired);
    }
    SECTION("an empty or blank description means none") {
        r.description = "   ";
        CHECK_FALSE(create_key(r, tenant_kind::restricted, random, r.active_from).record.description);
    }
}

TEST_CASE("K2: an own key is kept as given", "[K2][creation]") {
    test_support::seeded_random random(1);
    auto r = request();
    r.method = own_key{secret("my-Own_key.0123456789")};
    auto created = create_key(r, tenant_kind::restricted, random, at("2024-03-10T00:00:00Z"));
    CHECK(created.key.take()->reveal() == "my-Own_key.0123456789");
    CHECK(created.record.masked == std::optional<std::string>("my-***************789"));
    CHECK(is_uuid_v4(created.record.id.str()));
    CHECK(random.bytes == 16);  // only the id was drawn
}

TEST_CASE("K2: own key length 16 to 256, characters 0x21 to 0x7E", "[K2][creation]") {
    auto check = [](std::string key) { return !own_key_problems(secret(std::move(key))).empty(); };
    CHECK(check(std::string(15, 'a')));
    CHECK_FALSE(check(std::string(16, 'a')));
    CHECK_FALSE(check(std::string(256, 'a')));
    CHECK(check(std::string(257, 'a')));
    CHECK(check(""));

    const std::string base(20, 'a');
    CHECK_FALSE(check(base + '\x21'));
    CHECK_FALSE(check(base + '\x7e'));
    CHECK(check(base + '\x20'));  // space
    CHECK(check(base + '\x7f'));  // DEL
    CHECK(check(base + '\x1f'));
    CHECK(check(base + "\xc3\xa9"));  // non-ASCII

    const auto problems = own_key_problems(secret(base + ' ' + "tail"));
    REQUIRE(problems.size() == 1);
    const auto& e = problems.front();
    CHECK(e.code == errc::invalid_key);
    CHECK(e.path == "key");
    CHECK(e.message.find("character 21") != std::string::npos);
    CHECK(e.what().find(base) == std::string::npos);
}

TEST_CASE("contracts: own_key_problems gives every problem, one per kind", "[K2][creation][contracts]") {
    // Too short and a space: both, length first; a second bad character adds nothing.
    const auto both = own_key_problems(secret("a b c"));
    REQUIRE(both.size() == 2);
    CHECK(both[0].message == "must be 16 to 256 characters, got 5");
    CHECK(both[1].message == "character 2 is not printable ASCII without space (0x21 to 0x7E)");
    // A valid key has none; one character too many, one problem.
    CHECK(own_key_problems(secret(std::string(16, '!'))).empty());
    CHECK(own_key_problems(secret(std::string(257, '~'))).size() == 1);
    // key_request_problems lists them with the request's own.
    auto r = request("");
    r.method = own_key{secret("a b")};
    const auto all = key_request_problems(r);
    REQUIRE(all.size() == 3);
    CHECK(all[0].path == "name");
    CHECK(all[1].path == "key");
    CHECK(all[2].path == "key");
}

TEST_CASE("K3: name is 1 to 128 code points after trimming, no control characters", "[K3][creation]") {
    auto errors_for = [](std::string name) {
        auto r = request(std::move(name));
        return key_request_problems(r);
    };
    CHECK(errors_for("a").empty());
    CHECK(errors_for(std::string(128, 'n')).empty());
    CHECK(errors_for("  " + std::string(128, 'n') + "\t ").empty());  // spaces around do not count
    CHECK(errors_for(repeat("\xc3\xa9", 128)).empty());               // 128 code points, 256 bytes
    CHECK(errors_for(repeat("\xf0\x9f\x94\x91", 128)).empty());       // 4-byte code points

    for (const auto& bad : {std::string(129, 'n'), repeat("\xc3\xa9", 129), std::string(), std::string("   "),
                            std::string("a\x01"
                                        "b"),
                            std::string("line\nbreak"), std::string("del\x7f"), std::string("c1\xc2\x85")}) {
        const auto errors = errors_for(bad);
        REQUIRE(errors.size() == 1);
        CHECK(errors[0].code == errc::invalid_name);
        CHECK(errors[0].path == "name");
    }
    CHECK(errors_for("no\xc2\xa0"
                     "break")
              .empty());  // U+00A0 is not a control character

    const auto utf8 = errors_for("bad\xc3");
    REQUIRE(utf8.size() == 1);
    CHECK(utf8[0].code == errc::invalid_utf8);
    CHECK(utf8[0].path == "name");
    CHECK(errors_for("\xc0\xaf").at(0).code == errc::invalid_utf8);      // overlong
    CHECK(errors_for("\xed\xa0\x80").at(0).code == errc::invalid_utf8);  // surrogate
}

TEST_CASE("K3: description at most 1024 code points, no control characters", "[K3][creation]") {
    auto r = request();
    r.description = std::string(1024, 'd');
    CHECK(key_request_problems(r).empty());
    r.description = "";
    CHECK(key_request_problems(r).empty());
    r.description = std::string(1025, 'd');
    auto errors = key_request_problems(r);
    REQUIRE(errors.size() == 1);
    CHECK(errors[0].code == errc::invalid_name);
    CHECK(errors[0].path == "description");
    r.description = "two\r\nlines";
    errors = key_request_problems(r);
    REQUIRE(errors.size() == 1);
    CHECK(errors[0].path == "description");
}

TEST_CASE("K3: activeFrom must be before expireAt", "[K3][creation]") {
    auto r = request();
    r.expire_at = r.active_from + one_us;
    CHECK(key_request_problems(r).empty());
    r.expire_at = r.active_from;
    auto errors = key_request_problems(r);
    REQUIRE(errors.size() == 1);
    CHECK(errors[0].code == errc::invalid_period);
    CHECK(errors[0].path == "expireAt");
    r.expire_at = r.active_from - one_us;
    CHECK(key_request_problems(r).size() == 1);

    r.active_from = at("2024-01-01T00:00:00Z");
    r.expire_at = max_timestamp;  // "never expires"
    CHECK(key_request_problems(r).empty());
    r.expire_at = max_timestamp + one_us;
    errors = key_request_problems(r);
    REQUIRE(errors.size() == 1);
    CHECK(errors[0].path == "expireAt");
    r.active_from = min_timestamp - one_us;
    r.expire_at = at("2024-01-01T00:00:00Z");
    errors = key_request_problems(r);
    REQUIRE(errors.size() == 1);
    CHECK(errors[0].path == "activeFrom");
}

TEST_CASE("K3: at least one group; defaults or custom user: groups", "[K3][creation]") {
    auto r = request();
    r.groups = {"user:pf",
                "supervisor:pf",
                "tenant-admin",
                "tenant-moderator",
                "tenant-viewer",
                "user:finance",
                "user:" + std::string(123, 'g')};  // 128 characters in all
    CHECK(key_request_problems(r).empty());

    r.groups = {};
    auto errors = key_request_problems(r);
    REQUIRE(errors.size() == 1);
    CHECK(errors[0].code == errc::invalid_group);
    CHECK(errors[0].path == "groups");

    for (const std::string bad :
         {"user:", "User:pf", "admin", "tenant-admin ", "user:two words", "user:tab\t", "USER:PF", ""}) {
        r.groups = {"user:pf", bad};
        errors = key_request_problems(r);
        REQUIRE(errors.size() == 1);
        CHECK(errors[0].code == errc::invalid_group);
        CHECK(errors[0].path == "groups[1]");
    }
    r.groups = {"user:" + std::string(124, 'g')};  // 129 characters
    CHECK(key_request_problems(r).at(0).path == "groups[0]");

    r.groups = {"user:pf", "user:x", "user:pf"};
    errors = key_request_problems(r);
    REQUIRE(errors.size() == 1);
    CHECK(errors[0].path == "groups[2]");
}

TEST_CASE("K3: validation reports every error, in field order", "[K3][K2][creation]") {
    auto r = request("");
    r.description = std::string(2000, 'x');
    r.expire_at = r.active_from;
    r.groups = {"bogus", "user:pf"};
    r.method = own_key{secret("short")};
    const auto errors = key_request_problems(r);
    CHECK(paths_of(errors) == std::vector<std::string>{"name", "description", "expireAt", "groups[0]", "key"});

    // The creation call returns the first of them.
    test_support::seeded_random random(3);
    const auto created = try_create_key(r, tenant_kind::restricted, random, r.active_from);
    REQUIRE_FALSE(created);
    CHECK(created.error() == errors.front());
    CHECK(random.calls == 0);  // nothing drawn for an invalid request
    try {
        (void)create_key(r, tenant_kind::restricted, random, r.active_from);
        FAIL("expected keyhook::exception");
    } catch (const keyhook::exception& e) {
        CHECK(e.code() == errc::invalid_name);
        CHECK(e.path() == "name");
    }
}

TEST_CASE("K4: advisory warnings beside a successful creation", "[K4][creation]") {
    test_support::seeded_random random(5);
    const auto now = at("2024-03-10T00:00:00Z");
    auto r = request();

    SECTION("user:pf alone on a shared tenant: no warning") {
        CHECK(create_key(r, tenant_kind::shared, random, now).warnings.empty());
        CHECK(create_key(r, tenant_kind::restricted, random, now).warnings.empty());
    }
    SECTION("supervisor:pf and tenant-admin are not recommended, on any tenant") {
        r.groups = {"user:pf", "supervisor:pf", "tenant-admin"};
        auto created = create_key(r, tenant_kind::restricted, random, now);
        REQUIRE(created.warnings.size() == 2);
        CHECK(created.warnings[0].kind == key_warning_kind::not_recommended_group);
        CHECK(created.warnings[0].path == "groups[1]");
        CHECK(created.warnings[1].path == "groups[2]");
        CHECK(created.key.available());  // the key was created all the same
    }
    SECTION("a shared tenant's key with any other group") {
        r.groups = {"user:pf", "user:finance", "tenant-viewer"};
        const auto shared = create_key(r, tenant_kind::shared, random, now).warnings;
        REQUIRE(shared.size() == 2);
        CHECK(shared[0].kind == key_warning_kind::shared_tenant_group);
        CHECK(shared[0].path == "groups[1]");
        CHECK(shared[1].path == "groups[2]");
        CHECK(create_key(r, tenant_kind::restricted, random, now).warnings.empty());
    }
    SECTION("tenant-admin on a shared tenant earns both warnings") {
        r.groups = {"tenant-admin"};
        const auto w = advise_groups(r.groups, tenant_kind::shared);
        REQUIRE(w.size() == 2);
        CHECK(w[0].kind == key_warning_kind::not_recommended_group);
        CHECK(w[1].kind == key_warning_kind::shared_tenant_group);
    }
    SECTION("warnings never become errors") {
        r.groups = {"tenant-admin"};
        CHECK(key_request_problems(r).empty());
    }
}

static_assert(!std::is_copy_constructible_v<one_time_secret>, "K5: a plaintext must not be copied");
static_assert(!std::is_copy_assignable_v<one_time_secret>, "K5: a plaintext must not be copied");
static_assert(std::is_nothrow_move_constructible_v<one_time_secret>);
static_assert(!std::is_copy_constructible_v<created_key>, "K5: nor the creation result that holds it");

TEST_CASE("K5: the plaintext can be taken exactly once", "[K5][creation]") {
    test_support::seeded_random random(9);
    auto created = create_key(request(), tenant_kind::shared, random, at("2024-03-10T00:00:00Z"));
    REQUIRE(created.key.available());
    const auto first = created.key.take();
    REQUIRE(first);
    CHECK(is_uuid_v4(first->reveal()));
    CHECK_FALSE(created.key.available());
    CHECK_FALSE(created.key.take());
    CHECK_FALSE(created.key.take());
    // Afterwards only the masked form exists in the record.
    CHECK(created.record.masked == std::optional<std::string>(first->masked()));
}

TEST_CASE("K5: a moved-from one_time_secret is empty", "[K5][creation]") {
    one_time_secret a(secret("0123456789abcdef"));
    one_time_secret b(std::move(a));
    CHECK_FALSE(a.available());  // NOLINT(bugprone-use-after-move): the point of the test
    CHECK_FALSE(a.take());
    REQUIRE(b.available());

    one_time_secret c;
    CHECK_FALSE(c.available());
    c = std::move(b);
    CHECK_FALSE(b.available());  // NOLINT(bugprone-use-after-move)
    CHECK(c.take()->reveal() == "0123456789abcdef");
    CHECK_FALSE(c.take());

    std::ostringstream os;
    os << c;
    CHECK(os.str() == "one_time_secret(taken)");
}
