#include <catch2/catch.hpp>

#include <algorithm>
#include <array>
#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "helpers.hpp"
#include "keyhook/authorization.hpp"
#include "keyhook/key_index.hpp"

using namespace keyhook;
using test_support::at;

namespace {

std::array<unsigned char, 16> fixed_hashing_key() {
    std::array<unsigned char, 16> k{};
    for (std::size_t i = 0; i < k.size(); ++i) k[i] = static_cast<unsigned char>(i);
    return k;
}

api_key record_with_id(std::string id) {
    api_key k;
    k.id = key_id(std::move(id));
    k.name = "k";
    k.active_from = at("2024-01-01T00:00:00Z");
    k.expire_at = at("2025-01-01T00:00:00Z");
    k.groups = {"user:pf"};
    return k;
}

std::string hex(const detail::sip_digest& d) {
    static constexpr char digits[] = "0123456789abcdef";
    std::string s;
    for (auto word : {d.lo, d.hi})
        for (int i = 0; i < 8; ++i) {
            const auto b = static_cast<unsigned>((word >> (8 * i)) & 0xff);
            s += digits[b >> 4];
            s += digits[b & 0xf];
        }
    return s;
}

}  // namespace

TEST_CASE("K10: the index's digest is SipHash-2-4-128 (reference vectors)", "[K10][index]") {
    // Key 00 .. 0f, messages 00 .. (n-1): the published 128-bit vectors.
    std::string message;
    for (int i = 0; i < 64; ++i) message += static_cast<char>(i);
    const std::uint64_t k0 = 0x0706050403020100ULL, k1 = 0x0f0e0d0c0b0a0908ULL;
    CHECK(hex(detail::siphash128(k0, k1, message.substr(0, 0))) == "a3817f04ba25a8e66df67214c7550293");
    CHECK(hex(detail::siphash128(k0, k1, message.substr(0, 1))) == "da87c1d86b99af44347659119b22fc45");
    CHECK(hex(detail::siphash128(k0, k1, message.substr(0, 2))) == "8177228da4a45dc7fca38bdef60affe4");
    CHECK(hex(detail::siphash128(k0, k1, message.substr(0, 3))) == "9c70b60c5267a94e5f33b6b02985ed51");
    // Lengths across block boundaries, checked against OpenSSL's SIPHASH MAC (size 16).
    CHECK(hex(detail::siphash128(k0, k1, message.substr(0, 15))) == "5493e99933b0a8117e08ec0f97cfc3d9");
    CHECK(hex(detail::siphash128(k0, k1, message.substr(0, 36))) == "3dc47d1f29c448461e9e76ed904f6711");
    CHECK(hex(detail::siphash128(k0, k1, message.substr(0, 63))) == "5150d1772f50834a503e069a973fbd7c");
}

TEST_CASE("K10: the index finds exactly the indexed keys", "[K10][index]") {
    key_index index(fixed_hashing_key());
    const permission_policy policy;
    index.add("acme", record_with_id("id-1"), secret("0123456789abcdef-one"), policy);
    index.add("acme", record_with_id("id-2"), secret("0123456789abcdef-two"), policy);
    CHECK(index.size() == 2);

    const auto* one = index.find("0123456789abcdef-one");
    REQUIRE(one);
    CHECK(index.id_of(*one) == "id-1");
    CHECK(index.tenant_of(*one) == "acme");
    CHECK(index.id_of(*index.find("0123456789abcdef-two")) == "id-2");
    CHECK_FALSE(index.find("0123456789abcdef-on"));    // a prefix
    CHECK_FALSE(index.find("0123456789abcdef-one "));  // one more character
    CHECK_FALSE(index.find("0123456789abcdef-onE"));   // last character differs
    CHECK_FALSE(index.find(""));
    CHECK(index.find_id(key_id("id-2")) == index.find("0123456789abcdef-two"));
}

TEST_CASE("K10: adding refuses empty keys and duplicates", "[K10][index]") {
    key_index index(fixed_hashing_key());
    const permission_policy policy;
    index.add("acme", record_with_id("id-1"), secret("0123456789abcdef"), policy);

    auto r = index.try_add("acme", record_with_id("id-2"), secret("0123456789abcdef"), policy);
    REQUIRE_FALSE(r);
    CHECK(r.error().code == errc::invalid_key);
    CHECK(r.error().path == "key");
    CHECK(r.error().what().find("0123456789abcdef") == std::string::npos);

    r = index.try_add("acme", record_with_id("id-1"), secret("fedcba9876543210"), policy);
    REQUIRE_FALSE(r);
    CHECK(r.error().path == "id");

    r = index.try_add("acme", record_with_id("id-3"), secret(""), policy);
    REQUIRE_FALSE(r);
    CHECK(r.error().code == errc::invalid_key);
    CHECK(index.size() == 1);
}

TEST_CASE("K10: a random hashing key changes the digests, not the answers", "[K10][index]") {
    test_support::seeded_random random_a(1), random_b(2);
    key_index a(random_a), b(random_b);
    CHECK(random_a.bytes == 16);
    const permission_policy policy;
    a.add("t", record_with_id("x"), secret("0123456789abcdef"), policy);
    b.add("t", record_with_id("x"), secret("0123456789abcdef"), policy);
    CHECK(a.find("0123456789abcdef")->digest.lo != b.find("0123456789abcdef")->digest.lo);
    CHECK(a.id_of(*a.find("0123456789abcdef")) == b.id_of(*b.find("0123456789abcdef")));
}

TEST_CASE("K10: removal and updates keep every other key findable", "[K10][K6][K8][index]") {
    key_index index(fixed_hashing_key());
    const permission_policy policy;
    test_support::seeded_random random(99);
    std::vector<std::string> keys;
    for (int i = 0; i < 3000; ++i) {
        keys.push_back(generate_uuid_v4(random));
        index.add("acme", record_with_id("id-" + std::to_string(i)), secret(keys.back()), policy);
    }
    std::vector<std::size_t> order(keys.size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::mt19937 shuffle(5);
    std::shuffle(order.begin(), order.end(), shuffle);
    const std::size_t removed = 2000;
    for (std::size_t n = 0; n < removed; ++n) CHECK(index.remove(key_id("id-" + std::to_string(order[n]))));
    CHECK(index.size() == keys.size() - removed);
    CHECK_FALSE(index.remove(key_id("id-" + std::to_string(order[0]))));

    std::size_t found = 0, missing = 0;
    for (std::size_t n = 0; n < order.size(); ++n) {
        const auto* e = index.find(keys[order[n]]);
        if (n < removed) {
            missing += e == nullptr;
        } else if (e && index.id_of(*e) == "id-" + std::to_string(order[n])) {
            ++found;
        }
    }
    CHECK(missing == removed);
    CHECK(found == keys.size() - removed);

    // A lifecycle change reaches the index through update().
    const auto i = order[removed];
    auto record = record_with_id("id-" + std::to_string(i));
    const auto now = at("2024-06-01T00:00:00Z");
    CHECK(index.find(keys[i])->status_at(now) == key_status::active);
    record.status = key_status::revoked;
    CHECK(index.update("acme", record, policy));
    CHECK(index.find(keys[i])->status_at(now) == key_status::revoked);
    CHECK_FALSE(index.update("acme", record_with_id("id-none"), policy));
}

TEST_CASE("K9: keys with the same groups share one merged permission set", "[K9][K10][index]") {
    key_index index(fixed_hashing_key());
    permission_policy policy;
    policy.groups["user:pf"].access[resource::all()] = access_level::read;
    policy.groups["user:x"].access[resource::all()] = access_level::write;
    auto a = record_with_id("a");
    auto b = record_with_id("b");
    auto c = record_with_id("c");
    c.groups = {"user:pf", "user:x"};
    index.add("t", a, secret("aaaaaaaaaaaaaaaa"), policy);
    index.add("t", b, secret("bbbbbbbbbbbbbbbb"), policy);
    index.add("t", c, secret("cccccccccccccccc"), policy);
    const auto* ea = index.find("aaaaaaaaaaaaaaaa");
    const auto* eb = index.find("bbbbbbbbbbbbbbbb");
    const auto* ec = index.find("cccccccccccccccc");
    CHECK(ea->permissions == eb->permissions);
    CHECK(&index.permissions_of(*ea) == &index.permissions_of(*eb));
    CHECK(ea->permissions != ec->permissions);
    CHECK(index.permissions_of(*ec).access_to(resource_ref::all()) == access_level::write);
}

// ---- issue 14 item 5: the index at the memory of a map (ids kept once, in
// chunks; 32-bit slots with 5 tag bits). The byte counts are in allocation_test.cpp.

TEST_CASE("issue 14 item 5: ids of every length are kept once and read back whole", "[K10][index]") {
    key_index index(fixed_hashing_key());
    const permission_policy policy;
    // Each side of the one- and two-byte length prefixes, and of the 64 KiB
    // chunk: 65,533 bytes plus a 3-byte length fill a chunk exactly, 65,534 get their own.
    const std::vector<std::size_t> lengths{0, 1, 127, 128, 16383, 16384, 65533, 65534, 70000};
    std::vector<std::string> ids, keys;
    for (std::size_t i = 0; i < lengths.size(); ++i) {
        ids.push_back(std::string(lengths[i], static_cast<char>('a' + i)));
        keys.push_back("0123456789abcdef-" + std::to_string(i));
        index.add("acme", record_with_id(ids.back()), secret(keys.back()), policy);
    }
    for (std::size_t i = 0; i < ids.size(); ++i) {
        INFO("id of " << lengths[i] << " bytes");
        const auto* e = index.find(keys[i]);
        REQUIRE(e);
        CHECK(index.id_of(*e) == ids[i]);
        CHECK(index.find_id(key_id(ids[i])) == e);
    }
    // An id one byte shorter or longer is another id.
    CHECK_FALSE(index.find_id(key_id(std::string(127, 'c').substr(1))));
    CHECK_FALSE(index.find_id(key_id(std::string(129, 'd'))));
    for (std::size_t i = 0; i < ids.size(); i += 2) CHECK(index.remove(key_id(ids[i])));
    for (std::size_t i = 0; i < ids.size(); ++i) {
        INFO("id of " << lengths[i] << " bytes");
        const auto* e = index.find(keys[i]);
        CHECK((e != nullptr) == (i % 2 == 1));
        if (e) CHECK(index.id_of(*e) == ids[i]);
    }
}

TEST_CASE("issue 14 item 5: after most keys are removed the ids are compacted and the rest still found",
          "[K10][K8][index]") {
    key_index index(fixed_hashing_key());
    const permission_policy policy;
    test_support::seeded_random random(7);
    const std::size_t n = 20000;
    std::vector<std::string> ids, keys;
    for (std::size_t i = 0; i < n; ++i) {
        ids.push_back(generate_uuid_v4(random));
        keys.push_back(generate_uuid_v4(random));
        index.add("acme", record_with_id(ids.back()), secret(keys.back()), policy);
    }
    // 15,000 removed ids (540 KB) outweigh the 5,000 live ones: compaction runs.
    for (std::size_t i = 0; i < n; ++i)
        if (i % 4 != 0) REQUIRE(index.remove(key_id(ids[i])));
    CHECK(index.size() == n / 4);
    for (std::size_t i = 0; i < n; ++i) {
        const auto* e = index.find(keys[i]);
        if (i % 4 != 0) {
            CHECK_FALSE(e);
            CHECK_FALSE(index.find_id(key_id(ids[i])));
            continue;
        }
        REQUIRE(e);
        CHECK(index.id_of(*e) == ids[i]);
        CHECK(index.find_id(key_id(ids[i])) == e);
    }
    // The removed ids can be indexed again.
    for (std::size_t i = 1; i < n; i += 4) index.add("acme", record_with_id(ids[i]), secret(keys[i]), policy);
    for (std::size_t i = 1; i < n; i += 4) CHECK(index.id_of(*index.find(keys[i])) == ids[i]);
}

TEST_CASE("issue 14 item 5: a slot whose tag matches still needs the whole digest", "[K10][index]") {
    // Three keys whose digests start at the same slot of a 16-slot table and
    // carry the same 5 tag bits (the top of the digest's second word).
    const auto k = fixed_hashing_key();
    const std::uint64_t k0 = detail::sip::load_le(k.data(), 8), k1 = detail::sip::load_le(k.data() + 8, 8);
    std::vector<std::string> same;
    const auto first = detail::siphash128(k0, k1, "0123456789abcdef-0");
    for (int i = 0; same.size() < 3; ++i) {
        const std::string key = "0123456789abcdef-" + std::to_string(i);
        const auto d = detail::siphash128(k0, k1, key);
        if ((d.lo & 15) == (first.lo & 15) && (d.hi >> 59) == (first.hi >> 59)) same.push_back(key);
    }
    key_index index(k);
    const permission_policy policy;
    index.add("acme", record_with_id("first"), secret(same[0]), policy);
    index.add("acme", record_with_id("second"), secret(same[1]), policy);
    REQUIRE(index.find(same[0]));
    REQUIRE(index.find(same[1]));
    CHECK(index.id_of(*index.find(same[0])) == "first");
    CHECK(index.id_of(*index.find(same[1])) == "second");
    CHECK_FALSE(index.find(same[2]));  // same slot and tag, another digest
    CHECK(index.remove(key_id("first")));
    CHECK_FALSE(index.find(same[0]));
    CHECK(index.id_of(*index.find(same[1])) == "second");
}

TEST_CASE("issue 14 item 5: a copy of the index keeps its own ids", "[K10][index]") {
    auto original = std::make_unique<key_index>(fixed_hashing_key());
    const permission_policy policy;
    original->add("acme", record_with_id("id-1"), secret("0123456789abcdef-one"), policy);
    const key_index copy = *original;
    original.reset();
    REQUIRE(copy.find("0123456789abcdef-one"));
    CHECK(copy.id_of(*copy.find("0123456789abcdef-one")) == "id-1");
}

TEST_CASE("issue 14 item 5: authorization::key() is a copy of the found key's id", "[K10][index]") {
    auto index = std::make_unique<key_index>(fixed_hashing_key());
    const permission_policy policy;
    index->add("acme", record_with_id("id-1"), secret("0123456789abcdef-one"), policy);
    const auto now = at("2024-06-01T00:00:00Z");
    const auto found = authorize(*index, "0123456789abcdef-one", "other", api_family::batch(), resource_ref::all(),
                                 access_level::read, now);
    const auto unknown = authorize(*index, "0123456789abcdef-two", "acme", api_family::batch(), resource_ref::all(),
                                   access_level::read, now);
    CHECK(found.reason() == denial_reason::wrong_tenant);
    CHECK(found.message() == "denied: key \"id-1\" does not belong to the tenant named in header x-tenant-name");
    CHECK(unknown.reason() == denial_reason::unknown_key);
    CHECK_FALSE(unknown.key());
    const auto id = found.key();
    index.reset();
    REQUIRE(id);
    CHECK(*id == key_id("id-1"));
}
