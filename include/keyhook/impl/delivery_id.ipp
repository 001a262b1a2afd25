#pragma once
// keyhook: definitions of delivery_id.hpp.

#include <array>
#include <cstddef>
#include <cstdint>
#include <ostream>
// The per-process key's randomness: the kernel's getrandom where the C library
// declares it (Linux), else std::random_device. <random> is the largest header
// a header-only translation unit would parse for this one call.
#if defined(__linux__) && defined(__has_include)
#if __has_include(<sys/random.h>)
#include <sys/random.h>
#define KEYHOOK_HAVE_GETRANDOM 1
#endif
#endif
#if defined(KEYHOOK_HAVE_GETRANDOM)
#include <cerrno>
#include <system_error>
#else
#include <random>
#endif
#include <string>
#include <string_view>

#include "keyhook/detail/ascii.hpp"
#include "keyhook/detail/siphash.hpp"
#include "keyhook/detail/wipe.hpp"
#include "keyhook/delivery_id.hpp"

namespace keyhook {

KEYHOOK_INLINE std::string to_string(const delivery_id& id) {
    std::string s(delivery_id_length, '0');
    s.replace(0, delivery_id_prefix.size(), delivery_id_prefix);
    const std::uint64_t halves[2] = {id.high(), id.low()};
    std::size_t at = delivery_id_prefix.size();
    for (const auto half : halves)
        for (int shift = 60; shift >= 0; shift -= 4) s[at++] = detail::hex_lower[half >> shift & 0xF];
    return s;
}

KEYHOOK_INLINE std::ostream& delivery_id::print_to(std::ostream& os, const delivery_id& id) { return os << to_string(id); }

KEYHOOK_INLINE result<delivery_id> try_parse_delivery_id(std::string_view text) {
    const auto fail = [&text] {
        return error{errc::invalid_value, "deliveryId",
                     "expected \"msg_\" and 32 lower-case hex digits, got " + detail::quote_input(text)};
    };
    if (text.size() != delivery_id_length || text.substr(0, delivery_id_prefix.size()) != delivery_id_prefix)
        return fail();
    std::uint64_t halves[2] = {0, 0};
    for (std::size_t i = 0; i < 32; ++i) {
        const char c = text[delivery_id_prefix.size() + i];
        if (!detail::is_hex_digit(c) || (c >= 'A' && c <= 'F')) return fail();  // lower case only
        halves[i / 16] = halves[i / 16] << 4 | detail::hex_value(c);
    }
    return delivery_id(halves[0], halves[1]);
}

KEYHOOK_INLINE delivery_id parse_delivery_id(std::string_view text) { return try_parse_delivery_id(text).value(); }

KEYHOOK_INLINE delivery_id_key::~delivery_id_key() { detail::secure_wipe(bytes_.data(), bytes_.size()); }

KEYHOOK_INLINE result<delivery_id_key> delivery_id_key::try_from_bytes(std::string_view bytes) {
    if (bytes.size() != size)
        return error{errc::invalid_value, "deliveryIdKey",
                     "a delivery id key is 16 bytes, got " + std::to_string(bytes.size())};
    std::array<unsigned char, size> k{};
    for (std::size_t i = 0; i < size; ++i) k[i] = static_cast<unsigned char>(bytes[i]);
    delivery_id_key key(k);
    detail::secure_wipe(k.data(), k.size());
    return key;
}

KEYHOOK_INLINE result<delivery_id_key> delivery_id_key::try_from_hex(std::string_view hex) {
    if (hex.size() != 2 * size)
        return error{errc::invalid_value, "deliveryIdKey",
                     "expected 32 hex digits (16 bytes), got " + std::to_string(hex.size()) + " characters"};
    std::array<unsigned char, size> k{};
    for (std::size_t i = 0; i < hex.size(); ++i) {
        if (!detail::is_hex_digit(hex[i])) {
            detail::secure_wipe(k.data(), k.size());
            return error{errc::invalid_value, "deliveryIdKey",
                         "expected 32 hex digits, character " + std::to_string(i + 1) + " is not one"};
        }
        k[i / 2] = static_cast<unsigned char>(static_cast<unsigned>(k[i / 2]) << 4U |
                                              static_cast<unsigned>(detail::hex_value(hex[i])));
    }
    delivery_id_key key(k);
    detail::secure_wipe(k.data(), k.size());
    return key;
}

KEYHOOK_INLINE const delivery_id_key& delivery_id_key::per_process() {
    static const delivery_id_key key = [] {
        std::array<unsigned char, size> k{};
#if defined(KEYHOOK_HAVE_GETRANDOM)
        for (std::size_t got = 0; got < size;) {
            const auto n = ::getrandom(k.data() + got, size - got, 0);
            if (n > 0)
                got += static_cast<std::size_t>(n);
            else if (n < 0 && errno != EINTR)
                throw std::system_error(errno, std::generic_category(), "getrandom");
        }
#else
        std::random_device device;
        for (std::size_t i = 0; i < size; i += 4) {
            const auto word = device();
            for (std::size_t j = 0; j < 4; ++j) k[i + j] = static_cast<unsigned char>(word >> (8 * j));
        }
#endif
        delivery_id_key made(k);
        detail::secure_wipe(k.data(), k.size());
        return made;
    }();
    return key;
}

KEYHOOK_INLINE bool delivery_id_key::is_equal(const delivery_id_key& a, const delivery_id_key& b) noexcept {
    unsigned diff = 0;
    for (std::size_t i = 0; i < delivery_id_key::size; ++i) diff |= static_cast<unsigned>(a.bytes_[i] ^ b.bytes_[i]);
    return diff == 0;
}

KEYHOOK_INLINE std::ostream& delivery_id_key::print_to(std::ostream& os, const delivery_id_key&) {
    return os << "delivery_id_key(hidden)";
}

KEYHOOK_INLINE std::uint64_t delivery_id_key::k0() const noexcept { return detail::sip::load_le(bytes_.data(), 8); }
KEYHOOK_INLINE std::uint64_t delivery_id_key::k1() const noexcept { return detail::sip::load_le(bytes_.data() + 8, 8); }

namespace detail::hooks {

// H12: SipHash-2-4-128 of the body, then SipHash-2-4-128 of (that 16-byte
// digest, then the webhook's name). The body is hashed once per dispatch;
// per webhook there is one short hash. The fixed-size digest first makes the
// encoding of the pair unambiguous.
KEYHOOK_INLINE sip_digest body_digest(const delivery_id_key& key, std::string_view body) noexcept {
    return siphash128(key.k0(), key.k1(), body);
}

// SipHash-2-4-128 of (lo, hi as 16 little-endian bytes) followed by `data`,
// without copying them into one buffer (so no allocation).
KEYHOOK_INLINE sip_digest siphash128_after_digest(std::uint64_t k0, std::uint64_t k1, const sip_digest& prefix,
                                                  std::string_view data) noexcept {
    sip::state s{k0 ^ 0x736f6d6570736575ULL, k1 ^ 0x646f72616e646f6dULL, k0 ^ 0x6c7967656e657261ULL,
                 k1 ^ 0x7465646279746573ULL};
    s.v1 ^= 0xee;
    s.absorb<2>(prefix.lo);
    s.absorb<2>(prefix.hi);
    const auto* p = reinterpret_cast<const unsigned char*>(data.data());
    const std::size_t n = data.size();
    const std::size_t whole = n - n % 8;
    for (std::size_t i = 0; i < whole; i += 8) s.absorb<2>(sip::load_block(p + i));
    s.absorb<2>(sip::load_tail(p, n) | (static_cast<std::uint64_t>((n + 16) & 0xff) << 56));
    s.v2 ^= 0xee;
    sip_digest d;
    d.lo = s.squeeze<4>();
    s.v1 ^= 0xdd;
    d.hi = s.squeeze<4>();
    return d;
}

KEYHOOK_INLINE delivery_id combine_delivery_id(const delivery_id_key& key, const sip_digest& body,
                                               std::string_view webhook_name) noexcept {
    const auto d = siphash128_after_digest(key.k0(), key.k1(), body, webhook_name);
    return delivery_id(d.hi, d.lo);
}

}  // namespace detail::hooks

KEYHOOK_INLINE delivery_id make_delivery_id(const delivery_id_key& key, std::string_view webhook_name,
                                            std::string_view body) noexcept {
    return detail::hooks::combine_delivery_id(key, detail::hooks::body_digest(key, body), webhook_name);
}

KEYHOOK_INLINE delivery_id make_delivery_id(std::string_view webhook_name, std::string_view body) noexcept {
    return make_delivery_id(delivery_id_key::per_process(), webhook_name, body);
}
}  // namespace keyhook
