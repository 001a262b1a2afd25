// K10: an authorization check allocates no heap memory, and (key index memory)
// the key index holds no more heap per key than a map of the keys. This file
// is the lifecycle suite's one user of the counting global allocation functions.
#include <catch2/catch.hpp>

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "../support/counting_allocator.hpp"
#include "helpers.hpp"
#include "keyhook/authorization.hpp"
#include "keyhook/key_policy.hpp"

using namespace keyhook;
using test_support::at;
using test_support::record_with_id;

TEST_CASE("the allocation counter sees allocations", "[K10][allocation]") {
    const counting_allocator::scope counter;
    auto* s = new std::string(100, 'x');  // too long for the small-string buffer: two allocations
    const auto n = counter.stop();
    delete s;
    CHECK(n.allocations == 2);
    CHECK(n.requested == sizeof(std::string) + 101);
    CHECK(n.held == static_cast<long long>(sizeof(std::string) + 101));
    CHECK(counter.stop().held == 0);
}

TEST_CASE("K10: an authorization check allocates no heap memory", "[K10][allocation]") {
    test_support::seeded_random random(31);
    key_index index(random);
    permission_policy policy;
    policy.groups["user:pf"].access[resource::all()] = access_level::read;
    policy.groups["user:folder-team-with-a-long-name"].access[resource::folder("A folder name longer than SSO")] =
        access_level::write;
    policy.groups["user:folder-team-with-a-long-name"].features = {"reporting"};
    policy.features["reporting"] = {api_family("A family name longer than the SSO buffer")};

    auto r = test_support::request();
    r.groups = {"user:pf", "user:folder-team-with-a-long-name"};
    const auto now = at("2024-03-15T00:00:00Z");
    std::string key;
    for (int i = 0; i < 1000; ++i) {
        auto created = create_key(r, tenant_kind::restricted, random, r.active_from);
        auto plaintext = created.key.take()->reveal();
        if (i == 500) key = plaintext;
        index.add("a-tenant-name-longer-than-the-sso-buffer", created.record, secret(plaintext), policy);
    }
    const http_headers allowed{{"X-Synthetic-Key", key, true},
                               {"X-Tenant-Name", "a-tenant-name-longer-than-the-sso-buffer", false}};
    const http_headers unknown{{"x-synthetic-key", "ffffffff-ffff-4fff-bfff-ffffffffffff", true},
                               {"x-tenant-name", "a-tenant-name-longer-than-the-sso-buffer", false}};
    const http_headers wrong_tenant{{"x-synthetic-key", key, true}, {"x-tenant-name", "other", false}};
    const http_headers missing{{"x-tenant-name", "t", false}};
    const api_family family("A family name longer than the SSO buffer");
    const std::string folder = "A folder name longer than SSO";
    const auto batch = api_family::batch();

    const counting_allocator::scope counter;
    const auto a = authorize(index, allowed, family, resource_ref::in_folder(folder), access_level::write, now);
    const auto b = authorize(index, unknown, family, resource_ref::in_folder(folder), access_level::write, now);
    const auto c = authorize(index, wrong_tenant, family, resource_ref::in_folder(folder), access_level::write, now);
    const auto d = authorize(index, missing, family, resource_ref::in_folder(folder), access_level::write, now);
    const auto e = authorize(index, allowed, batch, resource_ref::of_service(folder, "svc"), access_level::admin, now);
    const auto f = authorize(index, allowed, family, resource_ref::all(), access_level::read, r.expire_at);
    const auto g = authorize(index, key, "a-tenant-name-longer-than-the-sso-buffer", family, resource_ref::all(),
                             access_level::read, now);
    CHECK(counter.stop().allocations == 0);

    CHECK(a.allowed());
    CHECK(b.reason() == denial_reason::unknown_key);
    CHECK(c.reason() == denial_reason::wrong_tenant);
    CHECK(d.reason() == denial_reason::missing_key);
    CHECK(e.reason() == denial_reason::insufficient_access);
    CHECK(f.reason() == denial_reason::not_active);
    CHECK(g.allowed());
}

TEST_CASE("K15: a check with a policy allocates no heap memory, allowed or denied", "[K15][allocation]") {
    test_support::seeded_random random(32);
    key_index index(random);
    permission_policy permissions;
    permissions.groups["user:pf"].access[resource::all()] = access_level::read;
    auto r = test_support::request();
    r.groups = {"user:pf"};
    const auto now = at("2024-03-15T00:00:00Z");
    auto created = create_key(r, tenant_kind::restricted, random, r.active_from);
    const auto key = created.key.take()->reveal();
    index.add("acme", created.record, secret(key), permissions);

    key_policy policy;
    policy.addresses = {parse_address_range("2001:db8::/32"), parse_address_range("10.0.0.0/8")};
    policy.rate = rate_limit{1, std::chrono::seconds{1}, 1};
    policy.limited_credits = true;
    policy.initial_credits = 1;
    policy.refill = credit_refill{refill_period::monthly, 1, 31};
    std::map<std::string, key_limits, std::less<>> limits{
        {created.record.id.str(), key_limits{policy, key_usage::fresh(policy, r.active_from)}}};
    const auto find = [&limits](std::string_view id) -> const key_limits* {
        const auto it = limits.find(id);
        return it == limits.end() ? nullptr : &it->second;
    };
    const http_headers h{{"x-synthetic-key", key, true}, {"x-tenant-name", "acme", false}};
    const auto inside = parse_ip_address("::ffff:10.0.0.1");
    const auto outside = parse_ip_address("192.0.2.1");
    const auto family = api_family::execute();
    auto& usage = limits.begin()->second.usage;

    const counting_allocator::scope counter;
    const auto a = authorize(index, h, family, resource_ref::all(), access_level::read, now, {inside, 1}, find);
    const auto b = authorize(index, h, family, resource_ref::all(), access_level::read, now, {outside, 1}, find);
    if (a.usage()) usage = *a.usage();
    const auto c = authorize(index, h, family, resource_ref::all(), access_level::read, now, {inside, 1}, find);
    const auto d = authorize(index, h, family, resource_ref::all(), access_level::read, now + std::chrono::seconds{1},
                             {inside, 1}, find);
    CHECK(counter.stop().allocations == 0);

    CHECK(a.allowed());
    CHECK(b.reason() == denial_reason::address_not_allowed);
    CHECK(c.reason() == denial_reason::rate_limited);
    CHECK(d.reason() == denial_reason::usage_exceeded);
    CHECK(d.retry_at() == at("2024-03-31T00:00:00Z"));
}

// ---- key index memory: the heap the key index holds, counted exactly.

namespace {

struct plain_entry {  // what the baseline map holds per key
    std::uint32_t tenant;
    std::int64_t expire_at;
};

// n generated keys, and ids of `id_bytes` bytes (UUIDs when 36).
struct key_set {
    std::vector<std::string> ids, keys;
    key_set(std::size_t n, std::size_t id_bytes) {
        test_support::seeded_random random(n + id_bytes);
        for (std::size_t i = 0; i < n; ++i) {
            auto id = generate_uuid_v4(random);
            while (id.size() < id_bytes) id += id;
            id.resize(id_bytes);
            ids.push_back(std::move(id));
            keys.push_back(generate_uuid_v4(random));
        }
    }
};

// Heap bytes an index of the set holds once built (reserved, as a host that
// knows the count does).
long long index_heap(const key_set& s) {
    const permission_policy policy;
    std::vector<api_key> records;
    for (const auto& id : s.ids) records.push_back(record_with_id(id));
    const counting_allocator::scope heap;
    auto index = std::make_unique<key_index>(std::array<unsigned char, 16>{1, 2, 3});
    index->reserve(s.keys.size());
    for (std::size_t i = 0; i < s.keys.size(); ++i) index->add("acme", records[i], secret(s.keys[i]), policy);
    const auto held = heap.stop().held;
    REQUIRE(index->size() == s.keys.size());
    return held;
}

}  // namespace

TEST_CASE("key index memory: the key index holds no more heap per key than a map of the keys", "[K10][index]") {
    // 30,000 UUID keys fill the index's tables as 1,000,000 do (46 and 48 %).
    const key_set s(30000, 36);
    const long long index = index_heap(s);
    long long map = 0;
    {
        const counting_allocator::scope heap;
        std::unordered_map<std::string, plain_entry> m;
        m.reserve(s.keys.size());
        for (const auto& k : s.keys) m.emplace(k, plain_entry{1, 2});
        map = heap.stop().held;
    }
    INFO("index " << index << " bytes, map " << map << " bytes, for " << s.keys.size() << " keys");
    CHECK(index <= map);
    // What the design gives: a 48-byte entry, the id and its length byte, two
    // 65,536-slot tables of 4 bytes, at most one chunk's slack, and the
    // tenant's name and permission set.
    const long long designed = 30000 * (48 + 37) + 2 * 65536 * 4 + 65536 + 4096;
    CHECK(index <= designed);
    CHECK(index >= 30000 * (48 + 37));
}

TEST_CASE("key index memory: an id is stored once: 200 more bytes an id cost 200 bytes a key", "[K10][index]") {
    const std::size_t n = 4000;
    const long long short_ids = index_heap(key_set(n, 36));
    const long long long_ids = index_heap(key_set(n, 236));
    const long long growth = long_ids - short_ids;
    INFO("36-byte ids: " << short_ids << " bytes, 236-byte ids: " << long_ids);
    // Within two chunks (the last one is allocated whole) of 200 bytes a key;
    // storing ids twice would add 400 bytes a key.
    CHECK(growth >= static_cast<long long>(200 * n) - 2 * 65536);
    CHECK(growth <= static_cast<long long>(200 * n) + 2 * 65536);
}

TEST_CASE("key index memory: removing keys gives their memory back", "[K10][K8][index]") {
    const key_set s(20000, 36);
    const key_set few(1000, 36);
    const long long small = index_heap(few);
    const permission_policy policy;
    const key_id wanted(s.ids[5]);
    const counting_allocator::scope heap;
    {
        key_index index(std::array<unsigned char, 16>{1, 2, 3});
        for (std::size_t i = 0; i < s.keys.size(); ++i)
            index.add("acme", record_with_id(s.ids[i]), secret(s.keys[i]), policy);
        for (std::size_t i = 1000; i < s.keys.size(); ++i) REQUIRE(index.remove(key_id(s.ids[i])));
        const long long kept = heap.stop().held;
        {
            INFO("1,000 keys left of 20,000: " << kept << " bytes; 1,000 keys indexed alone: " << small);
            CHECK(kept <= 4 * small);
        }
        for (std::size_t i = 0; i < 1000; ++i) CHECK(index.find(s.keys[i]));

        // Lookups by key and by id, and reading an id, allocate nothing either.
        const counting_allocator::scope lookups;
        const auto* e = index.find(s.keys[5]);
        const auto* by_id = index.find_id(wanted);
        const auto id = index.id_of(*e);
        CHECK(lookups.stop().allocations == 0);
        CHECK(id == s.ids[5]);
        CHECK(by_id == e);

        // The last removal leaves nothing behind while the index lives on.
        for (std::size_t i = 0; i < 1000; ++i) REQUIRE(index.remove(key_id(s.ids[i])));
        CHECK(index.empty());
        CHECK(heap.stop().held == 0);
    }
}

TEST_CASE("key index memory: an index's memory follows its live tenants and permission sets", "[K10][index]") {
    // 20,000 add/remove pairs, each with a new tenant and new groups, one key
    // kept throughout: what is held afterwards is what one more key holds.
    permission_policy policy;
    for (int g = 0; g < 50; ++g)
        policy.groups["g" + std::to_string(g)].access[resource::folder("F" + std::to_string(g))] = access_level::read;
    key_index index(std::array<unsigned char, 16>{4});
    index.add("kept-tenant", record_with_id("kept"), secret("kept-key"), policy);
    const counting_allocator::scope heap;
    long long after_first = 0;
    for (int i = 0; i < 20000; ++i) {
        auto record = record_with_id("churn");
        record.groups = {"g" + std::to_string(i % 50), "g" + std::to_string((i * 7) % 50)};
        index.add("tenant-with-a-long-name-" + std::to_string(i), record, secret("churn-key"), policy);
        if (i == 0) after_first = heap.stop().held;
        REQUIRE(index.remove(key_id("churn")));
    }
    const long long held = heap.stop().held;
    INFO("held after 20,000 pairs: " << held << " bytes; after the first add: " << after_first);
    // Removed ids stay in the id chunks until they outweigh the live ones and
    // fill a 64 KiB chunk (then compacted): a bound that does not grow with
    // the churn. Keeping the 20,000 tenant names and sets would hold megabytes.
    CHECK(held <= after_first + 65536 + 4096);
    // Both sides: while a tenant is live its name is kept, and found.
    index.add("t-live", record_with_id("live"), secret("live-key"), policy);
    const auto* e = index.find("live-key");
    REQUIRE(e);
    CHECK(index.tenant_is(*e, "t-live"));
    CHECK(index.tenant_of(*index.find("kept-key")) == "kept-tenant");
    // An update to another tenant releases the old name and reuses its place.
    CHECK(index.update("t-other", record_with_id("live"), policy));
    CHECK(index.tenant_is(*index.find("live-key"), "t-other"));
}

TEST_CASE("key index memory: keys added one by one cost linear allocation, whatever the count", "[K10][index]") {
    // Each addition reserved exactly one more entry, tenant and permission set,
    // so every addition reallocated: 20,000 keys copied 200 million entries.
    // Four times the keys (each with its own tenant and its own permission
    // set) must request about four times the bytes in about four times the
    // allocations, not sixteen times.
    permission_policy policy;
    for (int g = 0; g < 8000; ++g)
        policy.groups["g" + std::to_string(g)].access[resource::folder("F" + std::to_string(g))] = access_level::read;
    const auto fill = [&](int n) {
        key_index index(std::array<unsigned char, 16>{9});
        const counting_allocator::scope heap;
        for (int i = 0; i < n; ++i) {
            auto record = record_with_id("id-" + std::to_string(i));
            record.groups = {"g" + std::to_string(i)};
            index.add("tenant-" + std::to_string(i), record, secret("key-" + std::to_string(i)), policy);
        }
        const auto u = heap.stop();
        CHECK(index.size() == static_cast<std::size_t>(n));
        return u;
    };
    const auto small = fill(2000), large = fill(8000);
    INFO("2,000 keys: " << small.requested << " bytes in " << small.allocations
                        << " allocations; 8,000 keys: " << large.requested << " bytes in " << large.allocations);
    CHECK(large.requested <= 5 * small.requested);
    CHECK(large.allocations <= 5 * small.allocations);
}
