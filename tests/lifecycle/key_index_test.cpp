#include <catch2/catch.hpp>

#include <algorithm>
#include <array>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "helpers.hpp"
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
    CHECK(index.id_of(*one) == key_id("id-1"));
    CHECK(index.tenant_of(*one) == "acme");
    CHECK(index.id_of(*index.find("0123456789abcdef-two")) == key_id("id-2"));
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
        } else if (e && index.id_of(*e) == key_id("id-" + std::to_string(order[n]))) {
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
