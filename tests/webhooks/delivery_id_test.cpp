// H12: delivery ids under a host-supplied key resist collisions. The old,
// unkeyed hash is kept here only, to show that a pair crafted to collide
// under it collides, and no longer does under the keyed PRF.
#include "keyhook/detail/siphash.hpp"
#include "keyhook/dispatch.hpp"
#include "keyhook/notification.hpp"

#include <catch2/catch.hpp>

#include <array>
#include <cstdint>
#include <set>
#include <sstream>
#include <string>
#include <vector>

using keyhook::delivery_id;
using keyhook::delivery_id_key;
using keyhook::errc;

namespace {

// ---- The function ids were made with before H12 (unkeyed, every step invertible).
namespace old_ids {
struct hash128 {
    std::uint64_t hi = 0, lo = 0;
};
constexpr std::uint64_t rotl64(std::uint64_t x, unsigned r) { return x << r | x >> (64u - r); }
constexpr std::uint64_t fmix64(std::uint64_t x) {
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9u;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebu;
    x ^= x >> 31;
    return x;
}
hash128 hash_bytes(std::string_view s, std::uint64_t seed) {
    constexpr std::uint64_t k1 = 0x9e3779b97f4a7c15u, k2 = 0xc2b2ae3d27d4eb4fu, k3 = 0x165667b19e3779f9u;
    std::uint64_t a = seed ^ 0x243f6a8885a308d3u;
    std::uint64_t b = fmix64(seed) ^ 0x13198a2e03707344u;
    const auto step = [&a, &b](std::uint64_t w) {
        a = rotl64((a ^ w) * k1, 31) + b;
        b = rotl64((b + w) * k2, 29) ^ a;
    };
    std::size_t i = 0;
    for (; i + 8 <= s.size(); i += 8) {
        std::uint64_t w = 0;
        for (unsigned k = 0; k < 8; ++k) w |= std::uint64_t{static_cast<unsigned char>(s[i + k])} << (8 * k);
        step(w);
    }
    std::uint64_t tail = 0;
    for (unsigned k = 0; i + k < s.size(); ++k) tail |= std::uint64_t{static_cast<unsigned char>(s[i + k])} << (8 * k);
    step(tail ^ (std::uint64_t{s.size()} * k3));
    a = fmix64(a ^ std::uint64_t{s.size()});
    b = fmix64(b + a);
    a = fmix64(a + b);
    return hash128{a, b};
}
delivery_id make(std::string_view name, std::string_view body) {
    const auto nh = hash_bytes(name, 0x6b657968'6f6f6b31u);
    const auto bh = hash_bytes(body, 0x626f6479'626f6479u);
    const std::uint64_t a = fmix64(nh.lo ^ rotl64(bh.hi, 17) ^ 0x64656c69'76657279u);
    const std::uint64_t b = fmix64(nh.hi + bh.lo + a);
    return delivery_id(fmix64(a ^ rotl64(b, 32) ^ bh.hi), fmix64(b ^ bh.lo ^ nh.lo));
}
}  // namespace old_ids

std::string word(std::uint64_t w) {
    std::string s(8, '\0');
    for (unsigned i = 0; i < 8; ++i) s[i] = static_cast<char>(w >> (8 * i) & 0xFF);
    return s;
}

// Two 106-byte bodies that differ in bytes 40 to 55 only, like the first
// crafted pair (whose bytes were not published, so this is our own). Found with a
// birthday search (Pollard's rho, about 2^32 steps, under a minute): choosing
// the second word so that it cancels the lane it is added to leaves one
// 64-bit lane to collide.
std::string colliding_body(std::uint64_t w1, std::uint64_t w2) {
    return std::string(R"({"Tenant":"acme","FolderName":"reports/q)") + word(w1) + word(w2) +
           R"(","ServiceName":"billing2","UserAction":"AddFile"})";
}

delivery_id_key test_key(unsigned char first) {
    std::array<unsigned char, 16> k{};
    for (unsigned i = 0; i < k.size(); ++i) k[i] = static_cast<unsigned char>(first + i);
    return delivery_id_key(k);
}

}  // namespace

TEST_CASE("H12: a crafted colliding pair collides under the old hash, not under the keyed PRF", "[H12][dispatch]") {
    const std::string a = colliding_body(0xdba67aa43b2e02edu, 0x2ed20d34d7db108au);
    const std::string b = colliding_body(0x9be9d9ca33c08576u, 0x936f787f44ee75a9u);
    REQUIRE(a.size() == 106);
    REQUIRE(b.size() == 106);
    std::size_t differing = 0;
    for (std::size_t i = 0; i < a.size(); ++i) differing += a[i] != b[i] ? 1 : 0;
    CHECK(differing == 16);

    // The old function: one id for two notifications, so H9 would drop the second.
    CHECK(to_string(old_ids::make("crm-sync", a)) == "msg_b188652788bba01b5e5b48832e92465b");
    CHECK(old_ids::make("crm-sync", a) == old_ids::make("crm-sync", b));

    // The keyed PRF separates them, under any key.
    for (const unsigned first : {0u, 1u, 0x80u}) {
        const auto key = test_key(static_cast<unsigned char>(first));
        CHECK(keyhook::make_delivery_id(key, "crm-sync", a) != keyhook::make_delivery_id(key, "crm-sync", b));
    }
    CHECK(keyhook::make_delivery_id("crm-sync", a) != keyhook::make_delivery_id("crm-sync", b));
}

TEST_CASE("H12: ids are a function of key, webhook and body only (stable across retries and machines)",
          "[H12][H8][dispatch]") {
    const auto key = test_key(0);
    const std::string body = R"({"Tenant":"acme"})";
    // Pinned: any machine, any run, the same key gives this id. The value was
    // computed with a separate SipHash-2-4-128 written from the paper (Python),
    // which also reproduces the reference vectors key_index_test checks.
    CHECK(to_string(keyhook::make_delivery_id(key, "crm-sync", body)) == "msg_37376011d0abb14d84403861f4e80104");
    CHECK(keyhook::make_delivery_id(key, "crm-sync", body) == keyhook::make_delivery_id(test_key(0), "crm-sync", body));
    // Another key, another id; one bit of the key is enough.
    std::array<unsigned char, 16> flipped{};
    for (unsigned i = 0; i < flipped.size(); ++i) flipped[i] = static_cast<unsigned char>(i);
    flipped[15] ^= 0x01;
    CHECK(keyhook::make_delivery_id(delivery_id_key(flipped), "crm-sync", body) !=
          keyhook::make_delivery_id(key, "crm-sync", body));
    // Name and body are told apart however the bytes are split between them.
    CHECK(keyhook::make_delivery_id(key, "ab", "c") != keyhook::make_delivery_id(key, "a", "bc"));
    CHECK(keyhook::make_delivery_id(key, "a", "b") != keyhook::make_delivery_id(key, "b", "a"));
    CHECK(keyhook::make_delivery_id(key, "", "") != keyhook::make_delivery_id(key, "", std::string(1, '\0')));
    // The per-process key is one key: the same within the process.
    CHECK(keyhook::make_delivery_id("crm-sync", body) == keyhook::make_delivery_id("crm-sync", body));
    CHECK(&delivery_id_key::per_process() == &delivery_id_key::per_process());
    // ...and random: not the all-zero key a failed read of the entropy source would leave.
    CHECK_FALSE(delivery_id_key::per_process() == delivery_id_key(std::array<unsigned char, delivery_id_key::size>{}));
}

TEST_CASE("H12: the id is SipHash-2-4-128 of the body's digest followed by the name", "[H12]") {
    // The per-webhook step hashes the digest and the name without joining
    // them; it must equal SipHash-2-4-128 of the joined bytes, whatever the
    // name's length modulo 8.
    const auto key = test_key(3);
    const auto body = keyhook::detail::siphash128(key.k0(), key.k1(), "a body");
    const std::string name_source = "crm-sync-and-more-than-sixteen";
    for (std::size_t n = 0; n <= name_source.size(); ++n) {
        const std::string_view name(name_source.data(), n);
        std::string joined = word(body.lo) + word(body.hi);
        joined.append(name);
        const auto expected = keyhook::detail::siphash128(key.k0(), key.k1(), joined);
        CHECK(keyhook::make_delivery_id(key, name, "a body") == delivery_id(expected.hi, expected.lo));
    }
}

TEST_CASE("H12: dispatch uses the host's key; without one, the per-process key", "[H12][dispatch]") {
    keyhook::notification n;
    n.tenant = "acme";
    n.user_action = keyhook::event_type::AddProduct;
    n.request_time = keyhook::parse_timestamp("2026-03-14T09:26:53.589Z");
    keyhook::webhook w;
    w.name = "crm-sync";
    w.endpoint = "https://hooks.example.com/in";
    w.saved = true;
    const auto hooks = keyhook::validate_webhooks({w});
    keyhook::dispatch_options with_key;
    with_key.id_key = test_key(7);
    const auto keyed = keyhook::dispatch({"acme", true}, hooks, n, with_key);
    REQUIRE(keyed.size() == 1);
    CHECK(keyed[0].id() == keyhook::make_delivery_id(test_key(7), "crm-sync", keyed[0].body()));
    const auto plain = keyhook::dispatch({"acme", true}, hooks, n);
    REQUIRE(plain.size() == 1);
    CHECK(plain[0].id() == keyhook::make_delivery_id("crm-sync", plain[0].body()));
    CHECK(plain[0].id() != keyed[0].id());
}

TEST_CASE("H12: a delivery id key is 16 bytes or 32 hex digits, and is never printed", "[H12]") {
    CHECK(delivery_id_key::try_from_bytes(std::string(16, 'k')).has_value());
    for (const std::size_t size : {0u, 15u, 17u, 32u}) {
        const auto r = delivery_id_key::try_from_bytes(std::string(size, 'k'));
        REQUIRE_FALSE(r.has_value());
        CHECK(r.error().code == errc::invalid_value);
        CHECK(r.error().path == "deliveryIdKey");
        CHECK(r.error().message.find(std::to_string(size)) != std::string::npos);
    }
    const auto hex = delivery_id_key::try_from_hex("000102030405060708090a0B0c0d0e0f");
    REQUIRE(hex.has_value());
    CHECK(*hex == test_key(0));
    CHECK(*hex != test_key(1));
    const std::string secret_hex = "5ec2e75ec2e75ec2e75ec2e75ec2e7zz";
    const auto bad = delivery_id_key::try_from_hex(secret_hex);
    REQUIRE_FALSE(bad.has_value());
    CHECK(bad.error().message.find("character 31") != std::string::npos);
    CHECK(bad.error().message.find("5ec2") == std::string::npos);
    CHECK_FALSE(delivery_id_key::try_from_hex(secret_hex.substr(1)).has_value());
    std::ostringstream os;
    os << test_key(0x5e);
    CHECK(os.str() == "delivery_id_key(hidden)");
}
