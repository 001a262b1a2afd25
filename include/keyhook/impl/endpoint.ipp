#pragma once
// keyhook: definitions of endpoint.hpp.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <utility>

#include "keyhook/detail/ascii.hpp"
#include "keyhook/endpoint.hpp"

namespace keyhook {

KEYHOOK_INLINE bool endpoint_url::is_equal(const endpoint_url& a, const endpoint_url& b) {
    return a.url == b.url && a.scheme == b.scheme && a.host == b.host && a.address == b.address && a.port == b.port &&
           a.has_query == b.has_query;
}
KEYHOOK_INLINE std::ostream& endpoint_url::print_to(std::ostream& os, const endpoint_url& e) {
    return os << escaped(redact_url(e.url));
}

KEYHOOK_INLINE result<ip_address> try_check_address(std::string_view ip_text, const endpoint_policy& policy) {
    auto ip = try_parse_ip_address(ip_text);
    if (!ip) return ip;
    const auto cls = classify_address(*ip);
    if (cls != address_class::global && !policy.allow_non_global_addresses)
        return error{errc::forbidden_address, "address",
                     std::string("the address ") + detail::quote_input(ip_text) + " is " + std::string(to_string(cls)) +
                         ", which a webhook may not reach"};
    return ip;
}
KEYHOOK_INLINE ip_address check_address(std::string_view ip_text, const endpoint_policy& policy) {
    return try_check_address(ip_text, policy).value();
}

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

KEYHOOK_INLINE std::string describe_byte(char ch) {
    const auto c = static_cast<unsigned char>(ch);
    if (c > 0x20 && c < 0x7f) return std::string("'") + ch + "'";
    std::string s = "byte 0x";
    s += hex_lower[c >> 4];
    s += hex_lower[c & 0xf];
    return s;
}

// A WHATWG-style URL parser reads a host whose last label is a number (all
// digits, or "0x" and hex digits) as an IPv4 address in one of several forms.
KEYHOOK_INLINE bool ends_in_number(std::string_view host) noexcept {
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
KEYHOOK_INLINE bool is_dns_name(std::string_view host) noexcept {
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

KEYHOOK_INLINE bool is_localhost_name(std::string_view lower_host) noexcept {
    constexpr std::string_view name = "localhost";
    if (lower_host == name) return true;
    return lower_host.size() > name.size() + 1 && lower_host.substr(lower_host.size() - name.size()) == name &&
           lower_host[lower_host.size() - name.size() - 1] == '.';
}

// The endpoint parser, one function per part of the URL in the order a URL
// parser reads them (as ada's does): the text as a whole, the scheme, the
// authority, its port, its host, then the path and query. Each step returns its
// refusal (without a path, which validate_endpoint_at adds) or nothing.

KEYHOOK_INLINE std::optional<error> invalid_endpoint(std::string message) {
    return error{errc::invalid_endpoint, {}, std::move(message)};
}
KEYHOOK_INLINE std::optional<error> forbidden_endpoint(std::string message) {
    return error{errc::forbidden_address, {}, std::move(message)};
}

// The text as a whole: not empty, not too long, printable ASCII, no fragment.
// The URL is never quoted whole: its query may hold a credential.
KEYHOOK_INLINE std::optional<error> check_endpoint_text(std::string_view url) {
    if (url.empty()) return invalid_endpoint("is empty; expected an absolute https URL");
    if (url.size() > max_endpoint_length)
        return invalid_endpoint("is " + std::to_string(url.size()) + " bytes long; at most " +
                                std::to_string(max_endpoint_length) + " are allowed");
    for (std::size_t i = 0; i < url.size(); ++i) {
        const auto c = static_cast<unsigned char>(url[i]);
        if (c == ' ') return invalid_endpoint("contains a space at byte " + std::to_string(i));
        if (c < 0x20 || c == 0x7f)
            return invalid_endpoint("contains a control character (" + describe_byte(url[i]) + ") at byte " +
                                    std::to_string(i));
        if (c >= 0x80)
            return invalid_endpoint("contains a non-ASCII byte at byte " + std::to_string(i) + "; percent-encode it");
    }
    if (url.find('#') != std::string_view::npos)
        return invalid_endpoint("has a fragment ('#'); an endpoint may not have one");
    return std::nullopt;
}

// The scheme, up to the first ':': https, or http with the policy's opt-in
// (whose default port is 80). Sets out.scheme, in lower case.
KEYHOOK_INLINE std::optional<error> read_endpoint_scheme(std::string_view url, const endpoint_policy& policy,
                                                         endpoint_url& out) {
    const auto colon = url.find(':');
    const auto scheme = colon == std::string_view::npos ? std::string_view() : url.substr(0, colon);
    out.scheme = ascii_lower_copy(scheme);
    if (out.scheme == "https") return std::nullopt;
    if (out.scheme == "http") {
        if (!policy.allow_http)
            return invalid_endpoint(
                "uses plain http; https is required (http needs the opt-in for "
                "local development)");
        out.port = 80;
        return std::nullopt;
    }
    bool scheme_chars = !scheme.empty() && is_alpha(scheme[0]);
    for (char c : scheme)
        if (!(is_alpha(c) || (c >= '0' && c <= '9') || c == '+' || c == '-' || c == '.')) scheme_chars = false;
    if (colon == std::string_view::npos || !scheme_chars)
        return invalid_endpoint("is not an absolute URL; expected https://host/...");
    return invalid_endpoint("has scheme " + quote_input(scheme, 16) + "; expected https");
}

// The authority as the port and host steps read it.
struct endpoint_authority {
    std::string_view host;  // as written, without the brackets of an IPv6 literal
    std::string_view port;  // the text after the ':', when has_port
    bool has_port = false;
    bool bracketed = false;
    std::size_t end = 0;  // where the path or query begins (the URL's size when it has neither)
};

// The authority: "//" after the scheme's ':', then everything up to the first
// '/' or '?'. No user-info, no backslash; split into host and port.
KEYHOOK_INLINE std::optional<error> read_endpoint_authority(std::string_view url, const std::string& scheme,
                                                            endpoint_authority& a) {
    const std::size_t colon = scheme.size();  // the scheme step accepted url[0, colon) followed by ':'
    if (url.substr(colon + 1, 2) != "//")
        return invalid_endpoint("has no authority; expected " + scheme + "://host/...");
    const std::size_t begin = colon + 3;
    a.end = url.find_first_of("/?", begin);
    if (a.end == std::string_view::npos) a.end = url.size();
    const auto authority = url.substr(begin, a.end - begin);
    if (authority.find('@') != std::string_view::npos)
        return invalid_endpoint("has user-info ('user@'); credentials belong in auth parameters");
    if (authority.find('\\') != std::string_view::npos) return invalid_endpoint("has a backslash in its authority");

    if (!authority.empty() && authority[0] == '[') {
        const auto close = authority.find(']');
        if (close == std::string_view::npos) return invalid_endpoint("has an unclosed '[' in its host");
        a.host = authority.substr(1, close - 1);
        a.bracketed = true;
        const auto rest = authority.substr(close + 1);
        if (!rest.empty()) {
            if (rest[0] != ':') return invalid_endpoint("has unexpected characters after the ']' of its host");
            a.has_port = true;
            a.port = rest.substr(1);
        }
    } else {
        const auto pc = authority.find(':');
        a.host = authority.substr(0, pc);
        if (pc != std::string_view::npos) {
            a.has_port = true;
            a.port = authority.substr(pc + 1);
        }
    }
    if (a.host.empty()) return invalid_endpoint("has no host");
    return std::nullopt;
}

// The port, when one is given: 1 to 65535, in at most five digits.
KEYHOOK_INLINE std::optional<error> read_endpoint_port(const endpoint_authority& a, endpoint_url& out) {
    if (!a.has_port) return std::nullopt;
    unsigned long v = 0;
    bool ok = !a.port.empty() && a.port.size() <= 5;
    for (char c : a.port) {
        if (c < '0' || c > '9') {
            ok = false;
            break;
        }
        v = v * 10 + static_cast<unsigned long>(c - '0');
    }
    if (!ok || v == 0 || v > 65535)
        return invalid_endpoint("has port " + quote_input(a.port, 16) + "; expected a number from 1 to 65535");
    out.port = static_cast<std::uint16_t>(v);
    return std::nullopt;
}

// The host: an IPv6 literal in brackets, a plain dotted-decimal IPv4 address
// or a DNS name, and none that the policy refuses (loopback names, addresses
// outside the global range). Sets out.host and out.address.
KEYHOOK_INLINE std::optional<error> read_endpoint_host(const endpoint_authority& a, const endpoint_policy& policy,
                                                       endpoint_url& out) {
    if (a.bracketed) {
        const auto v6 = parse_ipv6(a.host);
        if (!v6)
            return invalid_endpoint("has host [" + quote_input(a.host) +
                                    "], which is not an IPv6 address (zones are not allowed)");
        out.address = ip_address::v6(*v6);
        out.host = to_string(*out.address);
    } else {
        std::string lower = ascii_lower_copy(a.host);
        if (lower.size() > 1 && lower.back() == '.') lower.pop_back();  // one trailing dot names the same host
        if (ends_in_number(lower)) {
            const auto v4 = parse_ipv4_strict(lower);
            if (!v4)
                return invalid_endpoint("has host " + quote_input(a.host) +
                                        ", a numeric form that is not a plain dotted-decimal IPv4 address (refused "
                                        "as ambiguous)");
            out.address = ip_address::v4((*v4)[0], (*v4)[1], (*v4)[2], (*v4)[3]);
        } else if (!is_dns_name(lower)) {
            return invalid_endpoint(
                "has host " + quote_input(a.host) +
                ", which is not a DNS name (letters, digits, '-', '_' and '.'; IDNs in ASCII form)");
        }
        if (!policy.allow_non_global_addresses && is_localhost_name(lower))
            return forbidden_endpoint("has host " + quote_input(a.host) +
                                      ", a loopback name that a webhook may not reach");
        out.host = std::move(lower);
    }
    if (out.address && !policy.allow_non_global_addresses) {
        const auto cls = classify_address(*out.address);
        if (cls != address_class::global)
            return forbidden_endpoint("has host " + quote_input(a.host) + ", a " + std::string(to_string(cls)) +
                                      " address that a webhook may not reach");
    }
    return std::nullopt;
}

// Path and query, from `begin` to the end: RFC 3986 characters only,
// well-formed escapes. Offsets, never contents, go into messages.
KEYHOOK_INLINE std::optional<error> check_endpoint_path(std::string_view url, std::size_t begin, endpoint_url& out) {
    for (std::size_t i = begin; i < url.size(); ++i) {
        const char c = url[i];
        if (!is_path_or_query_char(c))
            return invalid_endpoint("contains " + describe_byte(c) + " at byte " + std::to_string(i) +
                                    ", which a URL may not");
        if (c == '%' && (i + 2 >= url.size() || !is_hex_digit(url[i + 1]) || !is_hex_digit(url[i + 2])))
            return invalid_endpoint("has a malformed percent escape at byte " + std::to_string(i));
        if (c == '?') out.has_query = true;
    }
    return std::nullopt;
}

KEYHOOK_INLINE result<endpoint_url> validate_endpoint_at(std::string_view url, const endpoint_policy& policy,
                                                         const std::string& path) {
    endpoint_url out;
    endpoint_authority authority;
    auto fault = check_endpoint_text(url);
    if (!fault) fault = read_endpoint_scheme(url, policy, out);
    if (!fault) fault = read_endpoint_authority(url, out.scheme, authority);
    if (!fault) fault = read_endpoint_port(authority, out);
    if (!fault) fault = read_endpoint_host(authority, policy, out);
    if (!fault) fault = check_endpoint_path(url, authority.end, out);
    if (fault) {
        fault->path = path;
        return std::move(*fault);
    }
    out.url = std::string(url);
    return out;
}

}  // namespace detail::hooks

KEYHOOK_INLINE result<endpoint_url> try_validate_endpoint(std::string_view url, const endpoint_policy& policy) {
    return detail::hooks::validate_endpoint_at(url, policy, "endpoint");
}
KEYHOOK_INLINE endpoint_url validate_endpoint(std::string_view url, const endpoint_policy& policy) {
    return try_validate_endpoint(url, policy).value();
}

}  // namespace keyhook
