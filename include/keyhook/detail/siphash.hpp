// keyhook internal: SipHash-2-4 with a 128-bit result (Aumasson and Bernstein),
// a keyed hash fast on short inputs. The key index stores this digest of each
// API key under a random per-index key instead of the key itself.
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
    constexpr void absorb(std::uint64_t m) noexcept {
        v3 ^= m;
        round();
        round();
        v0 ^= m;
    }
    constexpr std::uint64_t squeeze() noexcept {
        round();
        round();
        round();
        round();
        return v0 ^ v1 ^ v2 ^ v3;
    }
};

}  // namespace sip

// SipHash-2-4-128 of `data` under the 128-bit key (k0, k1), where k0 and k1 are
// the key's first and last 8 bytes read little-endian.
[[nodiscard]] inline sip_digest siphash128(std::uint64_t k0, std::uint64_t k1, std::string_view data) noexcept {
    sip::state s{k0 ^ 0x736f6d6570736575ULL, k1 ^ 0x646f72616e646f6dULL, k0 ^ 0x6c7967656e657261ULL,
                 k1 ^ 0x7465646279746573ULL};
    s.v1 ^= 0xee;  // the 128-bit variant's domain separation
    const auto* p = reinterpret_cast<const unsigned char*>(data.data());
    const std::size_t n = data.size();
    const std::size_t whole = n - n % 8;
    for (std::size_t i = 0; i < whole; i += 8) s.absorb(sip::load_block(p + i));
    s.absorb(sip::load_le(p + whole, n - whole) | (static_cast<std::uint64_t>(n & 0xff) << 56));
    s.v2 ^= 0xee;
    sip_digest d;
    d.lo = s.squeeze();
    s.v1 ^= 0xdd;
    d.hi = s.squeeze();
    return d;
}

}  // namespace keyhook::detail
