#include "keyhook/crypto/random.hpp"

#include <catch2/catch.hpp>

#include <array>
#include <cstddef>
#include <functional>
#include <type_traits>

using keyhook::crypto::openssl_random;

static_assert(std::is_invocable_r_v<void, const openssl_random&, unsigned char*, std::size_t>,
              "openssl_random is a random source callable");
static_assert(std::is_convertible_v<openssl_random, std::function<void(unsigned char*, std::size_t)>>,
              "openssl_random fits a type-erased random source");

TEST_CASE("openssl_random fills exactly the bytes asked for", "[K1][random]") {
    // Guard bytes around the window must stay untouched; the window must change.
    std::array<unsigned char, 48> buf{};
    buf.fill(0xA5);
    const openssl_random rnd;
    rnd(buf.data() + 8, 32);
    for (std::size_t i = 0; i < 8; ++i) CHECK(buf[i] == 0xA5);
    for (std::size_t i = 40; i < 48; ++i) CHECK(buf[i] == 0xA5);
    bool changed = false;
    for (std::size_t i = 8; i < 40; ++i) changed = changed || buf[i] != 0xA5;
    CHECK(changed);  // 2^-256 chance of a false failure
}

TEST_CASE("openssl_random gives different bytes on each call", "[K1][random]") {
    std::array<unsigned char, 32> a{}, b{};
    const openssl_random rnd;
    rnd(a.data(), a.size());
    rnd(b.data(), b.size());
    CHECK(a != b);
}

TEST_CASE("openssl_random with zero bytes writes nothing", "[K1][random]") {
    unsigned char guard = 0x5A;
    openssl_random{}(&guard, 0);
    CHECK(guard == 0x5A);
}
