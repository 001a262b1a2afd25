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

KEYHOOK_INLINE bool operator==(const endpoint_url& a, const endpoint_url& b) {
    return a.url == b.url && a.scheme == b.scheme && a.host == b.host && a.address == b.address && a.port == b.port &&
           a.has_query == b.has_query;
}
KEYHOOK_INLINE std::ostream& operator<<(std::ostream& os, const endpoint_url& e) {
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

KEYHOOK_INLINE result<endpoint_url> validate_endpoint_at(std::string_view url, const endpoint_policy& policy,
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

KEYHOOK_INLINE result<endpoint_url> try_validate_endpoint(std::string_view url, const endpoint_policy& policy) {
    return detail::hooks::validate_endpoint_at(url, policy, "endpoint");
}
KEYHOOK_INLINE endpoint_url validate_endpoint(std::string_view url, const endpoint_policy& policy) {
    return try_validate_endpoint(url, policy).value();
}

}  // namespace keyhook
