#pragma once
// keyhook: definitions of ip_address.hpp.

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>

#include "keyhook/detail/ascii.hpp"
#include "keyhook/ip_address.hpp"

namespace keyhook {

namespace detail::hooks {

// Strict dotted-quad: four decimal parts 0..255, no leading zeros (so "010"
// cannot be read as octal by anyone), nothing else.
KEYHOOK_INLINE std::optional<std::array<std::uint8_t, 4>> parse_ipv4_strict(std::string_view s) noexcept {
    std::array<std::uint8_t, 4> out{};
    std::size_t i = 0;
    for (std::size_t part = 0; part < 4; ++part) {
        if (part > 0) {
            if (i >= s.size() || s[i] != '.') return std::nullopt;
            ++i;
        }
        const std::size_t start = i;
        unsigned v = 0;
        while (i < s.size() && s[i] >= '0' && s[i] <= '9' && i - start < 3)
            v = v * 10 + static_cast<unsigned>(s[i++] - '0');
        const std::size_t len = i - start;
        if (len == 0 || v > 255 || (len > 1 && s[start] == '0')) return std::nullopt;
        out[part] = static_cast<std::uint8_t>(v);
    }
    if (i != s.size()) return std::nullopt;
    return out;
}

// RFC 4291 text form: up to 8 groups of 1 to 4 hex digits, at most one "::",
// optionally ending in a strict dotted quad. No zone ("%eth0"), no brackets.
KEYHOOK_INLINE std::optional<std::array<std::uint8_t, 16>> parse_ipv6(std::string_view s) noexcept {
    std::array<std::uint16_t, 8> groups{};
    std::size_t count = 0;
    std::optional<std::size_t> gap;  // index in groups where "::" stands
    std::size_t i = 0;
    if (s.size() >= 2 && s[0] == ':' && s[1] == ':') {
        gap = 0;
        i = 2;
    } else if (!s.empty() && s[0] == ':') {
        return std::nullopt;
    }
    while (i < s.size()) {
        if (count == 8) return std::nullopt;
        const std::size_t start = i;
        while (i < s.size() && is_hex_digit(s[i]) && i - start < 5) ++i;
        const std::size_t len = i - start;
        if (i < s.size() && s[i] == '.') {
            // An embedded IPv4 address ends the text and fills two groups.
            if (count > 6) return std::nullopt;
            const auto v4 = parse_ipv4_strict(s.substr(start));
            if (!v4) return std::nullopt;
            groups[count++] = static_cast<std::uint16_t>((*v4)[0] << 8 | (*v4)[1]);
            groups[count++] = static_cast<std::uint16_t>((*v4)[2] << 8 | (*v4)[3]);
            i = s.size();
            break;
        }
        if (len == 0 || len > 4) return std::nullopt;
        unsigned v = 0;
        for (std::size_t k = start; k < i; ++k) v = v * 16 + hex_value(s[k]);
        groups[count++] = static_cast<std::uint16_t>(v);
        if (i == s.size()) break;
        if (s[i] != ':') return std::nullopt;
        ++i;
        if (i < s.size() && s[i] == ':') {
            if (gap) return std::nullopt;
            gap = count;
            ++i;
        } else if (i == s.size()) {
            return std::nullopt;  // a single trailing ':'
        }
    }
    if (gap) {
        if (count >= 8) return std::nullopt;  // "::" must stand for at least one group
        const std::size_t tail = count - *gap;
        for (std::size_t k = 0; k < tail; ++k) groups[7 - k] = groups[count - 1 - k];
        for (std::size_t k = *gap; k < 8 - tail; ++k) groups[k] = 0;
    } else if (count != 8) {
        return std::nullopt;
    }
    std::array<std::uint8_t, 16> out{};
    for (std::size_t k = 0; k < 8; ++k) {
        out[2 * k] = static_cast<std::uint8_t>(groups[k] >> 8);
        out[2 * k + 1] = static_cast<std::uint8_t>(groups[k] & 0xFF);
    }
    return out;
}

}  // namespace detail::hooks

KEYHOOK_INLINE result<ip_address> try_parse_ip_address(std::string_view text) {
    if (const auto v4 = detail::hooks::parse_ipv4_strict(text))
        return ip_address::v4((*v4)[0], (*v4)[1], (*v4)[2], (*v4)[3]);
    if (text.find(':') != std::string_view::npos)
        if (const auto v6 = detail::hooks::parse_ipv6(text)) return ip_address::v6(*v6);
    return error{
        errc::invalid_value, "address",
        "expected an IPv4 address in dotted-decimal form or an IPv6 address, got " + detail::quote_input(text)};
}
KEYHOOK_INLINE ip_address parse_ip_address(std::string_view text) { return try_parse_ip_address(text).value(); }

KEYHOOK_INLINE std::string to_string(const ip_address& ip) {
    const auto& o = ip.octets;
    const auto quad = [&o](std::size_t at) {
        std::string s;
        for (std::size_t k = 0; k < 4; ++k) {
            if (k) s += '.';
            s += std::to_string(o[at + k]);
        }
        return s;
    };
    if (ip.family == ip_family::v4) return quad(0);
    bool mapped = o[10] == 0xFF && o[11] == 0xFF;
    for (std::size_t i = 0; i < 10; ++i)
        if (o[i] != 0) mapped = false;
    if (mapped) return "::ffff:" + quad(12);
    std::array<unsigned, 8> g{};
    for (std::size_t k = 0; k < 8; ++k) g[k] = static_cast<unsigned>(o[2 * k]) << 8 | o[2 * k + 1];
    std::size_t best = 8, best_len = 0;
    for (std::size_t k = 0; k < 8;) {
        if (g[k] != 0) {
            ++k;
            continue;
        }
        std::size_t e = k;
        while (e < 8 && g[e] == 0) ++e;
        if (e - k > best_len && e - k >= 2) {
            best = k;
            best_len = e - k;
        }
        k = e;
    }
    std::string s;
    for (std::size_t k = 0; k < 8; ++k) {
        if (k == best) {
            s += "::";
            k += best_len - 1;
            continue;
        }
        if (!s.empty() && s.back() != ':') s += ':';
        bool started = false;
        for (int shift = 12; shift >= 0; shift -= 4) {
            const unsigned nibble = g[k] >> shift & 0xF;
            if (nibble != 0 || started || shift == 0) {
                s += detail::hex_lower[nibble];
                started = true;
            }
        }
    }
    return s;
}

KEYHOOK_INLINE std::ostream& ip_address::print_to(std::ostream& os, const ip_address& ip) { return os << to_string(ip); }

}  // namespace keyhook
