// keyhook internal: SipHash with a 128-bit result (Aumasson and Bernstein), a
// keyed hash fast on short inputs, in its 2-4 and 1-3 round counts. The key
// index stores the SipHash-1-3-128 digest of each API key under a random
// per-index key instead of the key itself (docs/lifecycle.md says why 1-3).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>

namespace keyhook::detail {

struct sip_digest {
    std::uint64_t lo = 0;
    std::uint64_t hi = 0;
};

// Equality that inspects every bit whatever the inputs (no early exit).
[[nodiscard]] inline bool digest_equal(const sip_digest& a, const sip_digest& b) noexcept {
    const std::uint64_t diff = (a.lo ^ b.lo) | (a.hi ^ b.hi);
    return diff == 0;
}

namespace sip {

constexpr std::uint64_t rotl(std::uint64_t x, int b) noexcept { return (x << b) | (x >> (64 - b)); }

constexpr std::uint64_t load_le(const unsigned char* p, std::size_t n) noexcept {
    std::uint64_t v = 0;
    for (std::size_t i = 0; i < n; ++i) v |= static_cast<std::uint64_t>(p[i]) << (8 * i);
    return v;
}

// One whole 8-byte block, little-endian: a single load where the host is.
inline std::uint64_t load_block(const unsigned char* p) noexcept {
#if defined(__BYTE_ORDER__) && defined(__ORDER_LITTLE_ENDIAN__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    std::uint64_t v;
    std::memcpy(&v, p, sizeof v);
    return v;
#else
    return load_le(p, 8);
#endif
}

// The last n % 8 bytes of p[0, n), little-endian, without a loop over them:
// from 8 bytes on, one load of the last 8 (overlapping the last whole block)
// shifted down; below, at most a 4-, a 2- and a 1-byte load. Which loads run
// depends on the length only, never on the bytes.
inline std::uint64_t load_tail(const unsigned char* p, std::size_t n) noexcept {
    const std::size_t rest = n % 8;
#if defined(__BYTE_ORDER__) && defined(__ORDER_LITTLE_ENDIAN__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    if (n >= 8) return rest == 0 ? 0 : load_block(p + n - 8) >> (64 - 8 * rest);
    const unsigned char* t = p + n - rest;
    std::uint64_t v = 0;
    std::size_t at = 0;
    if (rest & 4) {
        std::uint32_t w;
        std::memcpy(&w, t, sizeof w);
        v = w;
        at = 4;
    }
    if (rest & 2) {
        std::uint16_t w;
        std::memcpy(&w, t + at, sizeof w);
        v |= static_cast<std::uint64_t>(w) << (8 * at);
        at += 2;
    }
    if (rest & 1) v |= static_cast<std::uint64_t>(t[at]) << (8 * at);
    return v;
#else
    return load_le(p + n - rest, rest);
#endif
}

struct state {
    std::uint64_t v0, v1, v2, v3;

    constexpr void round() noexcept {
        v0 += v1;
        v1 = rotl(v1, 13);
        v1 ^= v0;
        v0 = rotl(v0, 32);
        v2 += v3;
        v3 = rotl(v3, 16);
        v3 ^= v2;
        v0 += v3;
        v3 = rotl(v3, 21);
        v3 ^= v0;
        v2 += v1;
        v1 = rotl(v1, 17);
        v1 ^= v2;
        v2 = rotl(v2, 32);
    }
    template <int Rounds>
    constexpr void absorb(std::uint64_t m) noexcept {
        v3 ^= m;
        for (int i = 0; i < Rounds; ++i) round();
        v0 ^= m;
    }
    template <int Rounds>
    constexpr std::uint64_t squeeze() noexcept {
        for (int i = 0; i < Rounds; ++i) round();
        return v0 ^ v1 ^ v2 ^ v3;
    }
};

// SipHash-C-D with a 128-bit result: C rounds per 8-byte block, D per output word.
template <int C, int D>
[[nodiscard]] inline sip_digest hash128(std::uint64_t k0, std::uint64_t k1, std::string_view data) noexcept {
    state s{k0 ^ 0x736f6d6570736575ULL, k1 ^ 0x646f72616e646f6dULL, k0 ^ 0x6c7967656e657261ULL,
            k1 ^ 0x7465646279746573ULL};
    s.v1 ^= 0xee;  // the 128-bit variant's domain separation
    const auto* p = reinterpret_cast<const unsigned char*>(data.data());
    const std::size_t n = data.size();
    const std::size_t whole = n - n % 8;
    for (std::size_t i = 0; i < whole; i += 8) s.absorb<C>(load_block(p + i));
    s.absorb<C>(load_tail(p, n) | (static_cast<std::uint64_t>(n & 0xff) << 56));
    s.v2 ^= 0xee;
    sip_digest d;
    d.lo = s.squeeze<D>();
    s.v1 ^= 0xdd;
    d.hi = s.squeeze<D>();
    return d;
}

}  // namespace sip

// SipHash-2-4-128 of `data` under the 128-bit key (k0, k1), where k0 and k1 are
// the key's first and last 8 bytes read little-endian.
[[nodiscard]] inline sip_digest siphash128(std::uint64_t k0, std::uint64_t k1, std::string_view data) noexcept {
    return sip::hash128<2, 4>(k0, k1, data);
}

// SipHash-1-3-128: the same construction with one round per block and three
// per output word (Rust's and CPython's choice for their hash tables).
[[nodiscard]] inline sip_digest siphash13_128(std::uint64_t k0, std::uint64_t k1, std::string_view data) noexcept {
    return sip::hash128<1, 3>(k0, k1, data);
}

}  // namespace keyhook::detail
