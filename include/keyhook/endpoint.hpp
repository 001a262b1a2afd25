// keyhook: webhook endpoint URLs and the address check (rule H1). A strict
// parser for the endpoint a webhook posts to, IP-literal parsing that accepts
// only unambiguous forms, and the classification of an address into the ranges
// a webhook may not reach, offered on its own for hosts to apply after DNS.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>

#include "keyhook/detail/ascii.hpp"
#include "keyhook/error.hpp"
#include "keyhook/http.hpp"

namespace keyhook {

// ---------------------------------------------------------------------------
// IP addresses

enum class ip_family { v4, v6 };

[[nodiscard]] constexpr std::string_view to_string(ip_family f) noexcept { return f == ip_family::v4 ? "v4" : "v6"; }
inline std::ostream& operator<<(std::ostream& os, ip_family f) { return os << to_string(f); }

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

[[nodiscard]] constexpr std::string_view to_string(address_class c) noexcept {
    switch (c) {
        case address_class::global: return "global";
        case address_class::unspecified: return "unspecified";
        case address_class::loopback: return "loopback";
        case address_class::private_network: return "private_network";
        case address_class::link_local: return "link_local";
        case address_class::carrier_grade_nat: return "carrier_grade_nat";
        case address_class::multicast: return "multicast";
        case address_class::unique_local: return "unique_local";
        case address_class::reserved: return "reserved";
        case address_class::documentation: return "documentation";
        case address_class::benchmarking: return "benchmarking";
        case address_class::special_purpose: return "special_purpose";
    }
    return "reserved";
}
inline std::ostream& operator<<(std::ostream& os, address_class c) { return os << to_string(c); }

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

namespace detail::hooks {

constexpr bool is_hex_digit(char c) noexcept {
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}
constexpr unsigned hex_value(char c) noexcept {
    if (c >= '0' && c <= '9') return static_cast<unsigned>(c - '0');
    if (c >= 'a' && c <= 'f') return static_cast<unsigned>(c - 'a' + 10);
    return static_cast<unsigned>(c - 'A' + 10);
}

// Strict dotted-quad: four decimal parts 0..255, no leading zeros (so "010"
// cannot be read as octal by anyone), nothing else.
inline std::optional<std::array<std::uint8_t, 4>> parse_ipv4_strict(std::string_view s) noexcept {
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
inline std::optional<std::array<std::uint8_t, 16>> parse_ipv6(std::string_view s) noexcept {
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

// Parses an IPv4 address (strict dotted quad) or an IPv6 address (text form,
// without brackets or zone). Refuses the forms some resolvers read differently:
// leading zeros ("0177.0.0.1"), fewer parts ("127.1"), one number
// ("2130706433"), hex parts ("0x7f.0.0.1").
// An invalid address is errc::invalid_value at path "address", naming the input.
[[nodiscard]] inline result<ip_address> try_parse_ip_address(std::string_view text) {
    if (const auto v4 = detail::hooks::parse_ipv4_strict(text))
        return ip_address::v4((*v4)[0], (*v4)[1], (*v4)[2], (*v4)[3]);
    if (text.find(':') != std::string_view::npos)
        if (const auto v6 = detail::hooks::parse_ipv6(text)) return ip_address::v6(*v6);
    return error{
        errc::invalid_value, "address",
        "expected an IPv4 address in dotted-decimal form or an IPv6 address, got " + detail::quote_input(text)};
}
[[nodiscard]] inline ip_address parse_ip_address(std::string_view text) { return try_parse_ip_address(text).value(); }

// Text form: dotted quad; IPv6 as RFC 5952 recommends (lower case, the longest
// run of two or more zero groups as "::", IPv4-mapped as ::ffff:a.b.c.d).
[[nodiscard]] inline std::string to_string(const ip_address& ip) {
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
    static constexpr char hex[] = "0123456789abcdef";
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
                s += hex[nibble];
                started = true;
            }
        }
    }
    return s;
}
inline std::ostream& operator<<(std::ostream& os, const ip_address& ip) { return os << to_string(ip); }

// ---------------------------------------------------------------------------
// Endpoint policy and the address check

// What validation permits beyond the defaults of H1. Both are for local
// development and tests; production configurations keep the defaults.
struct endpoint_policy {
    bool allow_http = false;                  // accept plain http:// endpoints
    bool allow_non_global_addresses = false;  // accept localhost and IP literals of every class

    friend bool operator==(const endpoint_policy& a, const endpoint_policy& b) noexcept {
        return a.allow_http == b.allow_http && a.allow_non_global_addresses == b.allow_non_global_addresses;
    }
    friend bool operator!=(const endpoint_policy& a, const endpoint_policy& b) noexcept { return !(a == b); }
};

// H1 after name resolution: the address the host is about to connect to, as
// text. Returns the parsed address when its class is global (or the policy
// allows every class); errc::forbidden_address names the class otherwise;
// errc::invalid_value when the text is not an address.
[[nodiscard]] inline result<ip_address> try_check_address(std::string_view ip_text,
                                                          const endpoint_policy& policy = {}) {
    auto ip = try_parse_ip_address(ip_text);
    if (!ip) return ip;
    const auto cls = classify_address(*ip);
    if (cls != address_class::global && !policy.allow_non_global_addresses)
        return error{errc::forbidden_address, "address",
                     std::string("the address ") + detail::quote_input(ip_text) + " is " + std::string(to_string(cls)) +
                         ", which a webhook may not reach"};
    return ip;
}
[[nodiscard]] inline ip_address check_address(std::string_view ip_text, const endpoint_policy& policy = {}) {
    return try_check_address(ip_text, policy).value();
}

// ---------------------------------------------------------------------------
// Endpoint URLs

inline constexpr std::size_t max_endpoint_length = 2048;

// A validated endpoint: the URL exactly as given, and its parts.
struct endpoint_url {
    std::string url;                    // as given
    std::string scheme;                 // "https" or "http", lower case
    std::string host;                   // lower case, without brackets or a trailing dot
    std::optional<ip_address> address;  // when the host is an IP literal
    std::uint16_t port = 443;           // explicit, or the scheme's default
    bool has_query = false;             // the URL already has a '?'

    friend bool operator==(const endpoint_url& a, const endpoint_url& b) {
        return a.url == b.url && a.scheme == b.scheme && a.host == b.host && a.address == b.address &&
               a.port == b.port && a.has_query == b.has_query;
    }
    friend bool operator!=(const endpoint_url& a, const endpoint_url& b) { return !(a == b); }
    // Prints the URL through redact_url (P2: a user may have typed a
    // credential in its query), escaped (P1).
    friend std::ostream& operator<<(std::ostream& os, const endpoint_url& e) {
        return os << escaped(redact_url(e.url));
    }
};

namespace detail::hooks {

constexpr bool is_alpha(char c) noexcept { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

// RFC 3986 characters allowed in a path or query: unreserved, sub-delims,
// ':', '@', '/', '?' and '%' (escapes are checked separately).
constexpr bool is_path_or_query_char(char c) noexcept {
    if (is_alpha(c) || (c >= '0' && c <= '9')) return true;
    switch (c) {
        case '-':
        case '.':
        case '_':
        case '~':
        case '!':
        case '$':
        case '&':
        case '\'':
        case '(':
        case ')':
        case '*':
        case '+':
        case ',':
        case ';':
        case '=':
        case ':':
        case '@':
        case '/':
        case '?':
        case '%': return true;
        default: return false;
    }
}

inline std::string describe_byte(char ch) {
    const auto c = static_cast<unsigned char>(ch);
    if (c > 0x20 && c < 0x7f) return std::string("'") + ch + "'";
    static constexpr char hex[] = "0123456789abcdef";
    std::string s = "byte 0x";
    s += hex[c >> 4];
    s += hex[c & 0xf];
    return s;
}

// A WHATWG-style URL parser reads a host whose last label is a number (all
// digits, or "0x" and hex digits) as an IPv4 address in one of several forms.
inline bool ends_in_number(std::string_view host) noexcept {
    const auto dot = host.rfind('.');
    const auto last = dot == std::string_view::npos ? host : host.substr(dot + 1);
    if (last.empty()) return false;
    std::size_t i = 0;
    if (last.size() >= 2 && last[0] == '0' && (last[1] == 'x' || last[1] == 'X')) {
        for (i = 2; i < last.size(); ++i)
            if (!is_hex_digit(last[i])) return false;
        return true;
    }
    for (; i < last.size(); ++i)
        if (last[i] < '0' || last[i] > '9') return false;
    return true;
}

// A DNS name: labels of 1 to 63 letters, digits, '-' or '_', not beginning or
// ending with '-', at most 253 bytes. IDNs must be given in their ASCII form.
inline bool is_dns_name(std::string_view host) noexcept {
    if (host.empty() || host.size() > 253) return false;
    std::size_t label = 0;
    for (std::size_t i = 0; i <= host.size(); ++i) {
        if (i == host.size() || host[i] == '.') {
            if (label == 0 || label > 63 || host[i - 1] == '-' || host[i - label] == '-') return false;
            label = 0;
            continue;
        }
        const char c = host[i];
        if (!(is_alpha(c) || (c >= '0' && c <= '9') || c == '-' || c == '_')) return false;
        ++label;
    }
    return true;
}

inline bool is_localhost_name(std::string_view lower_host) noexcept {
    constexpr std::string_view name = "localhost";
    if (lower_host == name) return true;
    return lower_host.size() > name.size() + 1 && lower_host.substr(lower_host.size() - name.size()) == name &&
           lower_host[lower_host.size() - name.size() - 1] == '.';
}

// The validator behind try_validate_endpoint; `path` is the error's path.
inline result<endpoint_url> validate_endpoint_at(std::string_view url, const endpoint_policy& policy,
                                                 const std::string& path) {
    const auto fail = [&path](errc code, std::string message) { return error{code, path, std::move(message)}; };
    if (url.empty()) return fail(errc::invalid_endpoint, "is empty; expected an absolute https URL");
    if (url.size() > max_endpoint_length)
        return fail(errc::invalid_endpoint, "is " + std::to_string(url.size()) + " bytes long; at most " +
                                                std::to_string(max_endpoint_length) + " are allowed");
    // The URL is never quoted whole: its query may hold a credential.
    for (std::size_t i = 0; i < url.size(); ++i) {
        const auto c = static_cast<unsigned char>(url[i]);
        if (c == ' ') return fail(errc::invalid_endpoint, "contains a space at byte " + std::to_string(i));
        if (c < 0x20 || c == 0x7f)
            return fail(errc::invalid_endpoint,
                        "contains a control character (" + describe_byte(url[i]) + ") at byte " + std::to_string(i));
        if (c >= 0x80)
            return fail(errc::invalid_endpoint,
                        "contains a non-ASCII byte at byte " + std::to_string(i) + "; percent-encode it");
    }
    if (url.find('#') != std::string_view::npos)
        return fail(errc::invalid_endpoint, "has a fragment ('#'); an endpoint may not have one");

    endpoint_url out;
    out.url = std::string(url);
    const auto colon = url.find(':');
    const auto scheme = colon == std::string_view::npos ? std::string_view() : url.substr(0, colon);
    out.scheme = ascii_lower_copy(scheme);
    if (out.scheme == "http") {
        if (!policy.allow_http)
            return fail(errc::invalid_endpoint,
                        "uses plain http; https is required (http needs the opt-in for "
                        "local development)");
        out.port = 80;
    } else if (out.scheme != "https") {
        bool scheme_chars = !scheme.empty() && is_alpha(scheme[0]);
        for (char c : scheme)
            if (!(is_alpha(c) || (c >= '0' && c <= '9') || c == '+' || c == '-' || c == '.')) scheme_chars = false;
        if (colon == std::string_view::npos || !scheme_chars)
            return fail(errc::invalid_endpoint, "is not an absolute URL; expected https://host/...");
        return fail(errc::invalid_endpoint, "has scheme " + quote_input(scheme, 16) + "; expected https");
    }
    if (url.substr(colon + 1, 2) != "//")
        return fail(errc::invalid_endpoint, "has no authority; expected " + out.scheme + "://host/...");

    const std::size_t auth_begin = colon + 3;
    std::size_t auth_end = url.find_first_of("/?", auth_begin);
    if (auth_end == std::string_view::npos) auth_end = url.size();
    const auto authority = url.substr(auth_begin, auth_end - auth_begin);
    if (authority.find('@') != std::string_view::npos)
        return fail(errc::invalid_endpoint, "has user-info ('user@'); credentials belong in auth parameters");
    if (authority.find('\\') != std::string_view::npos)
        return fail(errc::invalid_endpoint, "has a backslash in its authority");

    std::string_view host_text;
    std::string_view port_text;
    bool has_port = false;
    bool bracketed = false;
    if (!authority.empty() && authority[0] == '[') {
        const auto close = authority.find(']');
        if (close == std::string_view::npos) return fail(errc::invalid_endpoint, "has an unclosed '[' in its host");
        host_text = authority.substr(1, close - 1);
        bracketed = true;
        const auto rest = authority.substr(close + 1);
        if (!rest.empty()) {
            if (rest[0] != ':')
                return fail(errc::invalid_endpoint, "has unexpected characters after the ']' of its host");
            has_port = true;
            port_text = rest.substr(1);
        }
    } else {
        const auto pc = authority.find(':');
        host_text = authority.substr(0, pc);
        if (pc != std::string_view::npos) {
            has_port = true;
            port_text = authority.substr(pc + 1);
        }
    }
    if (host_text.empty()) return fail(errc::invalid_endpoint, "has no host");
    if (has_port) {
        unsigned long v = 0;
        bool ok = !port_text.empty() && port_text.size() <= 5;
        for (char c : port_text) {
            if (c < '0' || c > '9') {
                ok = false;
                break;
            }
            v = v * 10 + static_cast<unsigned long>(c - '0');
        }
        if (!ok || v == 0 || v > 65535)
            return fail(errc::invalid_endpoint,
                        "has port " + quote_input(port_text, 16) + "; expected a number from 1 to 65535");
        out.port = static_cast<std::uint16_t>(v);
    }

    if (bracketed) {
        const auto v6 = parse_ipv6(host_text);
        if (!v6)
            return fail(errc::invalid_endpoint, "has host [" + quote_input(host_text) +
                                                    "], which is not an IPv6 address (zones are not allowed)");
        out.address = ip_address::v6(*v6);
        out.host = to_string(*out.address);
    } else {
        std::string lower = ascii_lower_copy(host_text);
        if (lower.size() > 1 && lower.back() == '.') lower.pop_back();  // one trailing dot names the same host
        if (ends_in_number(lower)) {
            const auto v4 = parse_ipv4_strict(lower);
            if (!v4)
                return fail(errc::invalid_endpoint,
                            "has host " + quote_input(host_text) +
                                ", a numeric form that is not a plain dotted-decimal IPv4 address (refused as "
                                "ambiguous)");
            out.address = ip_address::v4((*v4)[0], (*v4)[1], (*v4)[2], (*v4)[3]);
        } else if (!is_dns_name(lower)) {
            return fail(errc::invalid_endpoint,
                        "has host " + quote_input(host_text) +
                            ", which is not a DNS name (letters, digits, '-', '_' and '.'; IDNs in ASCII form)");
        }
        if (!policy.allow_non_global_addresses && is_localhost_name(lower))
            return fail(errc::forbidden_address,
                        "has host " + quote_input(host_text) + ", a loopback name that a webhook may not reach");
        out.host = std::move(lower);
    }
    if (out.address && !policy.allow_non_global_addresses) {
        const auto cls = classify_address(*out.address);
        if (cls != address_class::global)
            return fail(errc::forbidden_address, "has host " + quote_input(host_text) + ", a " +
                                                     std::string(to_string(cls)) +
                                                     " address that a webhook may not reach");
    }

    // Path and query: RFC 3986 characters only, well-formed escapes. Offsets,
    // never contents, go into messages.
    for (std::size_t i = auth_end; i < url.size(); ++i) {
        const char c = url[i];
        if (!is_path_or_query_char(c))
            return fail(errc::invalid_endpoint,
                        "contains " + describe_byte(c) + " at byte " + std::to_string(i) + ", which a URL may not");
        if (c == '%' && (i + 2 >= url.size() || !is_hex_digit(url[i + 1]) || !is_hex_digit(url[i + 2])))
            return fail(errc::invalid_endpoint, "has a malformed percent escape at byte " + std::to_string(i));
        if (c == '?') out.has_query = true;
    }
    return out;
}

}  // namespace detail::hooks

// H1: validates a webhook endpoint. Errors use the path "endpoint":
// errc::invalid_endpoint for the form, errc::forbidden_address for a refused host.
[[nodiscard]] inline result<endpoint_url> try_validate_endpoint(std::string_view url,
                                                                const endpoint_policy& policy = {}) {
    return detail::hooks::validate_endpoint_at(url, policy, "endpoint");
}
[[nodiscard]] inline endpoint_url validate_endpoint(std::string_view url, const endpoint_policy& policy = {}) {
    return try_validate_endpoint(url, policy).value();
}

}  // namespace keyhook

template <>
struct std::hash<keyhook::ip_address> {
    std::size_t operator()(const keyhook::ip_address& ip) const noexcept {
        std::size_t h = ip.family == keyhook::ip_family::v4 ? 0x9e37u : 0x7f4au;
        for (auto b : ip.octets) h = h * 131 + b;
        return h;
    }
};
