// keyhook: definitions of base64.hpp (see config.hpp for when they are compiled).
#pragma once

#include <cstdint>

#include "keyhook/base64.hpp"
#include "keyhook/detail/wipe.hpp"

namespace keyhook {

namespace detail {
inline constexpr char base64_alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

// The 6-bit value of c, or -1 when c is not in the alphabet.
constexpr int base64_value(char c) noexcept {
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '+') return 62;
    if (c == '/') return 63;
    return -1;
}
}  // namespace detail

KEYHOOK_INLINE std::string base64_encode(const unsigned char* bytes, std::size_t n) {
    std::string out;
    out.reserve((n + 2) / 3 * 4);
    std::size_t i = 0;
    for (; i + 3 <= n; i += 3) {
        const std::uint32_t v = (std::uint32_t{bytes[i]} << 16) | (std::uint32_t{bytes[i + 1]} << 8) | bytes[i + 2];
        out += detail::base64_alphabet[(v >> 18) & 63];
        out += detail::base64_alphabet[(v >> 12) & 63];
        out += detail::base64_alphabet[(v >> 6) & 63];
        out += detail::base64_alphabet[v & 63];
    }
    if (n - i == 1) {
        const std::uint32_t v = std::uint32_t{bytes[i]} << 16;
        out += detail::base64_alphabet[(v >> 18) & 63];
        out += detail::base64_alphabet[(v >> 12) & 63];
        out += "==";
    } else if (n - i == 2) {
        const std::uint32_t v = (std::uint32_t{bytes[i]} << 16) | (std::uint32_t{bytes[i + 1]} << 8);
        out += detail::base64_alphabet[(v >> 18) & 63];
        out += detail::base64_alphabet[(v >> 12) & 63];
        out += detail::base64_alphabet[(v >> 6) & 63];
        out += '=';
    }
    return out;
}

KEYHOOK_INLINE result<std::string> try_base64_decode(std::string_view text) {
    std::size_t end = text.size();
    std::size_t padding = 0;
    while (end > 0 && text[end - 1] == '=' && padding < 2) {
        --end;
        ++padding;
    }
    if (padding > 0 && text.size() % 4 != 0)
        return error{errc::invalid_value, {}, "base64 padding must complete a group of 4 characters"};

    std::string out;
    out.reserve(end / 4 * 3 + 2);
    std::uint32_t acc = 0;
    int bits = 0;
    for (std::size_t i = 0; i < end; ++i) {
        const int v = detail::base64_value(text[i]);
        if (v < 0) {
            detail::wipe_string(out);  // part of a key, perhaps
            return error{errc::invalid_value,
                         {},
                         "invalid base64 character at offset " + std::to_string(i) +
                             (text[i] == '=' ? " (padding before the end)" : "")};
        }
        acc = (acc << 6) | static_cast<std::uint32_t>(v);
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            out += static_cast<char>((acc >> bits) & 0xFF);
        }
    }
    if (end % 4 == 1 || (acc & ((1u << bits) - 1u)) != 0) {
        detail::wipe_string(out);  // part of a key, perhaps
        return error{errc::invalid_value,
                     {},
                     end % 4 == 1 ? "base64 text has an impossible length"
                                  : "base64 text has non-zero bits after its last byte"};
    }
    return out;
}

KEYHOOK_INLINE std::string base64_decode(std::string_view text) { return try_base64_decode(text).value(); }

}  // namespace keyhook
