// keyhook: IP addresses (rule H1). Parsing that accepts only unambiguous
// forms, the RFC 5952 text form, and the classification of an address into
// the ranges a webhook may not reach.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <iosfwd>
#include <string>
#include <string_view>

#include "keyhook/config.hpp"
#include "keyhook/detail/enum_names.hpp"
#include "keyhook/error.hpp"
#include "keyhook/result.hpp"

namespace keyhook {

enum class ip_family { v4, v6 };

// An IPv4 or IPv6 address. IPv4 uses the first 4 octets; the rest stay zero,
// so == and hashing work on the whole value.
struct ip_address {
    ip_family family = ip_family::v4;
    std::array<std::uint8_t, 16> octets{};

    [[nodiscard]] static constexpr ip_address v4(std::uint8_t a, std::uint8_t b, std::uint8_t c,
                                                 std::uint8_t d) noexcept {
        ip_address ip;
        ip.octets[0] = a;
        ip.octets[1] = b;
        ip.octets[2] = c;
        ip.octets[3] = d;
        return ip;
    }
    [[nodiscard]] static constexpr ip_address v6(const std::array<std::uint8_t, 16>& bytes) noexcept {
        ip_address ip;
        ip.family = ip_family::v6;
        ip.octets = bytes;
        return ip;
    }

    // The IPv4 value in host order (meaningful for ip_family::v4).
    [[nodiscard]] constexpr std::uint32_t v4_value() const noexcept {
        return static_cast<std::uint32_t>(octets[0]) << 24 | static_cast<std::uint32_t>(octets[1]) << 16 |
               static_cast<std::uint32_t>(octets[2]) << 8 | static_cast<std::uint32_t>(octets[3]);
    }

    friend constexpr bool operator==(const ip_address& a, const ip_address& b) noexcept {
        if (a.family != b.family) return false;
        for (std::size_t i = 0; i < 16; ++i)
            if (a.octets[i] != b.octets[i]) return false;
        return true;
    }
    friend constexpr bool operator!=(const ip_address& a, const ip_address& b) noexcept { return !(a == b); }

    friend std::ostream& operator<<(std::ostream& os, const ip_address& x) { return print_to(os, x); }

private:
    static KEYHOOK_INLINE std::ostream& print_to(std::ostream& os, const ip_address& x);
};

// What kind of network an address belongs to. Every class but `global` is
// refused as a webhook destination by default (H1): together they cover every
// entry of IANA's IPv4 and IPv6 Special-Purpose Address Registries that is not
// globally reachable, plus multicast and the deprecated site-local range.
enum class address_class {
    global,             // none of the below: a public address
    unspecified,        // 0.0.0.0/8, ::
    loopback,           // 127.0.0.0/8, ::1
    private_network,    // 10/8, 172.16/12, 192.168/16
    link_local,         // 169.254/16, fe80::/10
    carrier_grade_nat,  // 100.64/10 (shared address space)
    multicast,          // 224/4, ff00::/8
    unique_local,       // fc00::/7
    reserved,           // 240/4 (with 255.255.255.255), fec0::/10, the rest of ::/8
    documentation,      // 192.0.2/24, 198.51.100/24, 203.0.113/24, 2001:db8::/32, 3fff::/20
    benchmarking,       // 198.18/15, 2001:2::/48
    special_purpose,    // other registry entries that are not globally reachable: 192.0.0/24,
                        // 192.88.99/24, 64:ff9b:1::/48, 100::/64, 100:0:0:1::/64, 2001::/23
                        // (but its global entries), 5f00::/16
};

namespace detail {
template <>
struct enum_names<ip_family> {
    static constexpr std::string_view values[] = {"v4", "v6"};
};
template <>
struct enum_names<address_class> {
    static constexpr std::string_view values[] = {"global",     "unspecified",       "loopback",     "private_network",
                                                  "link_local", "carrier_grade_nat", "multicast",    "unique_local",
                                                  "reserved",   "documentation",     "benchmarking", "special_purpose"};
};
}  // namespace detail

namespace detail::hooks {

// IPv4 (H1). The IANA IPv4 Special-Purpose Address Registry entries that are
// not globally reachable, with multicast. 192.0.0.0/24 is refused whole (H1
// names it), including its two anycast /32s.
[[nodiscard]] constexpr address_class classify_v4(std::uint32_t a) noexcept {
    const auto in = [a](std::uint32_t prefix, int bits) {
        const std::uint32_t mask = bits == 0 ? 0u : ~std::uint32_t{0} << (32 - bits);
        return (a & mask) == prefix;
    };
    if (in(0x00000000u, 8)) return address_class::unspecified;  // "this network"; 0.0.0.0 itself
    if (in(0x7F000000u, 8)) return address_class::loopback;
    if (in(0x0A000000u, 8) || in(0xAC100000u, 12) || in(0xC0A80000u, 16)) return address_class::private_network;
    if (in(0xA9FE0000u, 16)) return address_class::link_local;
    if (in(0x64400000u, 10)) return address_class::carrier_grade_nat;
    if (in(0xC0000200u, 24) || in(0xC6336400u, 24) || in(0xCB007100u, 24)) return address_class::documentation;
    if (in(0xC6120000u, 15)) return address_class::benchmarking;
    if (in(0xC0000000u, 24) || in(0xC0586300u, 24)) return address_class::special_purpose;  // 192.0.0/24, 192.88.99/24
    if (in(0xE0000000u, 4)) return address_class::multicast;
    if (in(0xF0000000u, 4)) return address_class::reserved;  // with 255.255.255.255 (limited broadcast)
    return address_class::global;
}

[[nodiscard]] constexpr std::uint32_t read_be32(const std::array<std::uint8_t, 16>& o, std::size_t at) noexcept {
    return static_cast<std::uint32_t>(o[at]) << 24 | static_cast<std::uint32_t>(o[at + 1]) << 16 |
           static_cast<std::uint32_t>(o[at + 2]) << 8 | static_cast<std::uint32_t>(o[at + 3]);
}

// The first `bits` bits of o equal those of `prefix` (given as 16 bytes).
[[nodiscard]] constexpr bool in_v6(const std::array<std::uint8_t, 16>& o, const std::array<std::uint8_t, 16>& prefix,
                                   unsigned bits) noexcept {
    for (std::size_t i = 0; i < 16 && bits > 0; ++i) {
        const unsigned take = bits < 8 ? bits : 8;
        const auto mask = static_cast<std::uint8_t>(0xFFu << (8 - take));
        if ((o[i] & mask) != (prefix[i] & mask)) return false;
        bits -= take;
    }
    return true;
}

// The globally reachable entries inside 2001::/23 (IANA): 2001:1::1/128,
// 2001:1::2/128, 2001:1::3/128, 2001:3::/32, 2001:4:112::/48, 2001:20::/28,
// 2001:30::/28. Everything else in 2001::/23 (Teredo, benchmarking, ORCHID,
// unassigned) is not.
[[nodiscard]] constexpr bool global_in_2001_23(const std::array<std::uint8_t, 16>& o) noexcept {
    using b = std::array<std::uint8_t, 16>;
    for (std::uint8_t last = 1; last <= 3; ++last)
        if (in_v6(o, b{0x20, 0x01, 0x00, 0x01, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, last}, 128)) return true;
    return in_v6(o, b{0x20, 0x01, 0x00, 0x03}, 32) || in_v6(o, b{0x20, 0x01, 0x00, 0x04, 0x01, 0x12}, 48) ||
           in_v6(o, b{0x20, 0x01, 0x00, 0x20}, 28) || in_v6(o, b{0x20, 0x01, 0x00, 0x30}, 28);
}

}  // namespace detail::hooks

// The class of an address (H1). IPv6 forms that carry an IPv4 address a
// gateway would reach (IPv4-mapped ::ffff:0:0/96, NAT64 64:ff9b::/96 and 6to4
// 2002::/16) are classified by that IPv4 address.
[[nodiscard]] constexpr address_class classify_address(const ip_address& ip) noexcept {
    if (ip.family == ip_family::v4) return detail::hooks::classify_v4(ip.v4_value());
    using b = std::array<std::uint8_t, 16>;
    using detail::hooks::in_v6;
    const auto& o = ip.octets;
    if (in_v6(o, b{}, 128)) return address_class::unspecified;
    if (in_v6(o, b{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1}, 128)) return address_class::loopback;
    if (in_v6(o, b{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF}, 96) || in_v6(o, b{0x00, 0x64, 0xFF, 0x9B}, 96))
        return detail::hooks::classify_v4(detail::hooks::read_be32(o, 12));
    if (in_v6(o, b{0x20, 0x02}, 16)) return detail::hooks::classify_v4(detail::hooks::read_be32(o, 2));
    if (in_v6(o, b{0x00, 0x64, 0xFF, 0x9B, 0x00, 0x01}, 48)) return address_class::special_purpose;  // local-use NAT64
    if (o[0] == 0x00) return address_class::reserved;  // ::/8 besides the forms above (IPv4-compatible, ...)
    if (in_v6(o, b{0x01, 0x00}, 64) || in_v6(o, b{0x01, 0x00, 0, 0, 0, 0, 0, 0x01}, 64))
        return address_class::special_purpose;  // discard-only, dummy prefix
    if (in_v6(o, b{0x20, 0x01, 0x0D, 0xB8}, 32) || in_v6(o, b{0x3F, 0xFF}, 20)) return address_class::documentation;
    if (in_v6(o, b{0x20, 0x01, 0x00, 0x02, 0x00, 0x00}, 48)) return address_class::benchmarking;
    if (in_v6(o, b{0x20, 0x01}, 23) && !detail::hooks::global_in_2001_23(o)) return address_class::special_purpose;
    if (in_v6(o, b{0x5F, 0x00}, 16)) return address_class::special_purpose;  // SRv6 SIDs
    if (in_v6(o, b{0xFE, 0x80}, 10)) return address_class::link_local;
    if (in_v6(o, b{0xFE, 0xC0}, 10)) return address_class::reserved;  // deprecated site-local
    if (in_v6(o, b{0xFC}, 7)) return address_class::unique_local;
    if (in_v6(o, b{0xFF}, 8)) return address_class::multicast;
    return address_class::global;
}

// Parses an IPv4 address (strict dotted quad) or an IPv6 address (text form,
// without brackets or zone). Refuses the forms some resolvers read differently:
// leading zeros ("0177.0.0.1"), fewer parts ("127.1"), one number
// ("2130706433"), hex parts ("0x7f.0.0.1").
// An invalid address is errc::invalid_value at path "address", naming the input.
[[nodiscard]] KEYHOOK_INLINE result<ip_address> try_parse_ip_address(std::string_view text);
[[nodiscard]] KEYHOOK_INLINE ip_address parse_ip_address(std::string_view text);

// Text form: dotted quad; IPv6 as RFC 5952 recommends (lower case, the longest
// run of two or more zero groups as "::", IPv4-mapped as ::ffff:a.b.c.d).
[[nodiscard]] KEYHOOK_INLINE std::string to_string(const ip_address& ip);

}  // namespace keyhook

template <>
struct std::hash<keyhook::ip_address> {
    std::size_t operator()(const keyhook::ip_address& ip) const noexcept {
        std::size_t h = ip.family == keyhook::ip_family::v4 ? 0x9e37u : 0x7f4au;
        for (auto b : ip.octets) h = h * 131 + b;
        return h;
    }
};

#if KEYHOOK_DEFINITIONS
#include "keyhook/impl/ip_address.ipp"
#endif
