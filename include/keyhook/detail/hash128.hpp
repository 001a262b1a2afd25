// keyhook internal: the 128-bit non-cryptographic hash behind delivery ids
// (rule H8), of a webhook's name and of a body.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace keyhook::detail::hooks {

// A 128-bit non-cryptographic hash (for delivery ids, H8). Two lanes over
// 8-byte little-endian words; every step is a bijection of the lane for a fixed
// word, so inputs of one length that differ in a single word never collide.
struct hash128 {
    std::uint64_t hi = 0;
    std::uint64_t lo = 0;
};

constexpr std::uint64_t rotl64(std::uint64_t x, unsigned r) noexcept { return x << r | x >> (64u - r); }

// A strong 64-bit finalizer (the one of splitmix64): every input bit reaches every output bit.
constexpr std::uint64_t fmix64(std::uint64_t x) noexcept {
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9u;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebu;
    x ^= x >> 31;
    return x;
}

inline hash128 hash_bytes(std::string_view s, std::uint64_t seed) noexcept {
    constexpr std::uint64_t k1 = 0x9e3779b97f4a7c15u, k2 = 0xc2b2ae3d27d4eb4fu, k3 = 0x165667b19e3779f9u;
    std::uint64_t a = seed ^ 0x243f6a8885a308d3u;
    std::uint64_t b = fmix64(seed) ^ 0x13198a2e03707344u;
    const auto* p = reinterpret_cast<const unsigned char*>(s.data());
    const std::size_t n = s.size();
    std::size_t i = 0;
    const auto step = [&a, &b](std::uint64_t w) {
        a = rotl64((a ^ w) * k1, 31) + b;
        b = rotl64((b + w) * k2, 29) ^ a;
    };
    for (; i + 8 <= n; i += 8) {
        std::uint64_t w = 0;
        for (unsigned k = 0; k < 8; ++k) w |= std::uint64_t{p[i + k]} << (8 * k);
        step(w);
    }
    std::uint64_t tail = 0;
    for (unsigned k = 0; i + k < n; ++k) tail |= std::uint64_t{p[i + k]} << (8 * k);
    step(tail ^ (std::uint64_t{n} * k3));  // the length tells zero padding from zero bytes
    a = fmix64(a ^ std::uint64_t{n});
    b = fmix64(b + a);
    a = fmix64(a + b);
    return hash128{a, b};
}

}  // namespace keyhook::detail::hooks
