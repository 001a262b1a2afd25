// Webhook configuration and endpoints (H1, H2). The first byte chooses the
// surface (low 2 bits) and the policy (bits 2 and 3: allow http, allow
// non-global addresses); the rest is the input:
//  0: configuration JSON through webhook_settings_from_json;
//  1: an endpoint URL through validate_endpoint;
//  2: one authentication parameter (fuzzed in/name/value) on a valid webhook;
//  3: address text through parse_ip_address_text and check_address, compared
//     with inet_pton.
// Properties: an accepted endpoint has no user-info, fragment, space or
// control character, is at most 2048 bytes, and its host is neither a refused
// address nor localhost, even as a WHATWG URL parser would read it (hex,
// octal, fewer parts); accepted header values hold no CR, LF or NUL; the
// final URL stays free of them too.
#include <arpa/inet.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <fuzzer/FuzzedDataProvider.h>
#include <nlohmann/json.hpp>

#include "fuzz_common.hpp"
#include "keyhook/endpoint.hpp"
#include "keyhook/webhook.hpp"

namespace {

using keyhook::address_class;
using keyhook::endpoint_policy;

std::string lower(std::string_view s) {
    std::string out(s);
    for (auto& c : out)
        if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    return out;
}

// The WHATWG URL standard's IPv4 parser (host parsing, "ends in a number"):
// parts may be hex (0x), octal (leading 0) or decimal, and fewer than four.
std::optional<std::uint32_t> whatwg_ipv4(std::string_view host) {
    if (!host.empty() && host.back() == '.') host.remove_suffix(1);
    std::vector<std::string_view> parts;
    std::size_t start = 0;
    for (std::size_t i = 0; i <= host.size(); ++i)
        if (i == host.size() || host[i] == '.') {
            parts.push_back(host.substr(start, i - start));
            start = i + 1;
        }
    if (parts.empty() || parts.size() > 4) return std::nullopt;
    std::vector<std::uint64_t> numbers;
    for (auto p : parts) {
        if (p.empty()) return std::nullopt;
        unsigned base = 10;
        if (p.size() >= 2 && p[0] == '0' && (p[1] == 'x' || p[1] == 'X')) {
            base = 16;
            p.remove_prefix(2);
        } else if (p.size() >= 2 && p[0] == '0') {
            base = 8;
            p.remove_prefix(1);
        }
        std::uint64_t v = 0;
        for (char c : p) {
            unsigned d = 0;
            if (c >= '0' && c <= '9')
                d = static_cast<unsigned>(c - '0');
            else if (c >= 'a' && c <= 'f')
                d = static_cast<unsigned>(c - 'a' + 10);
            else if (c >= 'A' && c <= 'F')
                d = static_cast<unsigned>(c - 'A' + 10);
            else
                return std::nullopt;
            if (d >= base) return std::nullopt;
            v = v * base + d;
            if (v > 0xFFFFFFFFull) v = 0x100000000ull;  // too large either way
        }
        numbers.push_back(v);
    }
    for (std::size_t i = 0; i + 1 < numbers.size(); ++i)
        if (numbers[i] > 255) return std::nullopt;
    const std::uint64_t last_limit = std::uint64_t{1} << (8 * (5 - numbers.size()));
    if (numbers.back() >= last_limit) return std::nullopt;
    std::uint64_t value = numbers.back();
    for (std::size_t i = 0; i + 1 < numbers.size(); ++i) value += numbers[i] << (8 * (3 - i));
    return static_cast<std::uint32_t>(value);
}

void check_accepted_endpoint(std::string_view url, const keyhook::endpoint_url& e, const endpoint_policy& policy) {
    fuzz::check(url.size() <= keyhook::max_endpoint_length, "an accepted endpoint is longer than 2048 bytes");
    fuzz::check(e.url == url, "the endpoint's url is not the input");
    for (char ch : url) {
        const auto c = static_cast<unsigned char>(ch);
        fuzz::check(c > 0x20 && c < 0x7f, "an accepted endpoint has a space, control or non-ASCII byte");
    }
    fuzz::check(url.find('#') == std::string_view::npos, "an accepted endpoint has a fragment");
    const auto scheme_end = url.find("://");
    fuzz::check(scheme_end != std::string_view::npos, "an accepted endpoint has no authority");
    const auto scheme = lower(url.substr(0, scheme_end));
    fuzz::check(scheme == "https" || (policy.allow_http && scheme == "http"),
                "an accepted endpoint has another scheme");
    const auto rest = url.substr(scheme_end + 3);
    const auto authority = rest.substr(0, rest.find_first_of("/?"));
    fuzz::check(authority.find('@') == std::string_view::npos, "an accepted endpoint has user-info");
    fuzz::check(!e.host.empty(), "an accepted endpoint has no host");
    if (policy.allow_non_global_addresses) return;
    fuzz::check(e.host != "localhost" && !(e.host.size() > 10 && e.host.substr(e.host.size() - 10) == ".localhost"),
                "an accepted endpoint names localhost");
    if (e.address)
        fuzz::check(keyhook::classify_address(*e.address) == address_class::global,
                    "an accepted endpoint's address is in a refused range");
    if (!authority.empty() && authority[0] != '[') {
        const auto host = lower(authority.substr(0, authority.find(':')));
        if (const auto v4 = whatwg_ipv4(host)) {
            fuzz::check(
                e.address.has_value() && e.address->family == keyhook::ip_family::v4 && e.address->v4_value() == *v4,
                "a browser would read the host as another IPv4 address", host);
        }
    }
}

void fuzz_config(std::string_view text, const endpoint_policy& policy) {
    nlohmann::json j;
    if (!fuzz::parse_json(text, j)) return;
    const auto settings = keyhook::try_webhook_settings_from_json(j, policy);
    if (!settings) {
        std::vector<std::string> strings;
        fuzz::collect_strings(j, strings);
        fuzz::check_no_long_quote(settings.error(), strings);
        // Authentication values are secrets: no message may quote one.
        if (j.is_object() && j.contains("webhooks") && j["webhooks"].is_array())
            for (const auto& w : j["webhooks"])
                if (w.is_object() && w.contains("auth") && w["auth"].is_array())
                    for (const auto& a : w["auth"])
                        if (a.is_object() && a.contains("value") && a["value"].is_string()) {
                            const auto& v = a["value"].get_ref<const std::string&>();
                            bool elsewhere = false;
                            for (const auto& s : strings)
                                if (s != v && s.find(v) != std::string::npos) elsewhere = true;
                            if (v.size() >= 24 && !elsewhere)
                                fuzz::check(settings.error().message.find(v) == std::string::npos,
                                            "an error message quotes an authentication value");
                        }
        return;
    }
    for (const auto& w : settings->webhooks) {
        check_accepted_endpoint(w.config().endpoint, w.endpoint(), policy);
        fuzz::check(!fuzz::has_cr_lf_nul(w.target_url()), "a final URL holds CR, LF or NUL");
        fuzz::check(!w.headers().empty() && w.headers()[0].name == "Content-Type", "Content-Type is not first");
        for (const auto& h : w.headers()) {
            fuzz::check(keyhook::is_http_token(h.name), "a header name is not a token", h.name);
            fuzz::check(!fuzz::has_cr_lf_nul(h.value), "a header value holds CR, LF or NUL");
        }
    }
}

void fuzz_endpoint(std::string_view url, const endpoint_policy& policy) {
    const auto e = keyhook::try_validate_endpoint(url, policy);
    if (!e) {
        fuzz::check(e.error().path == "endpoint", "an endpoint error names another path");
        fuzz::check(
            e.error().code == keyhook::errc::invalid_endpoint || e.error().code == keyhook::errc::forbidden_address,
            "an endpoint error of another kind");
        fuzz::check(e.error().message.size() < 400, "an endpoint error message is long");
        return;
    }
    check_accepted_endpoint(url, *e, policy);
}

constexpr std::string_view marker = "S3cr3tV4lu3";

void fuzz_auth(FuzzedDataProvider& in, const endpoint_policy& policy) {
    keyhook::webhook w;
    w.name = "hook";
    w.endpoint = in.ConsumeBool() ? "https://hooks.example.com/in" : "https://hooks.example.com/in?x=1";
    w.saved = true;
    const std::size_t count = in.ConsumeIntegralInRange<std::size_t>(1, 3);
    for (std::size_t i = 0; i < count; ++i) {
        keyhook::auth_parameter p;
        p.in = in.ConsumeBool() ? keyhook::auth_location::query : keyhook::auth_location::header;
        p.name = in.ConsumeRandomLengthString(64);
        // A marked value is easy to look for in messages.
        const bool marked = in.ConsumeBool();
        p.value = keyhook::secret((marked ? std::string(marker) : std::string()) + in.ConsumeRandomLengthString(256));
        w.auth.push_back(std::move(p));
    }
    const auto v = keyhook::try_validate_webhook(w, policy);
    if (!v) {
        const auto& e = v.error();
        fuzz::check(fuzz::starts_with(e.path, "auth["), "an auth error names another path", e.path);
        bool marker_in_name = false;
        for (const auto& p : w.auth) marker_in_name = marker_in_name || p.name.find(marker) != std::string::npos;
        if (!marker_in_name)
            fuzz::check(e.message.find(marker) == std::string::npos, "an auth error quotes a value", e.message);
        return;
    }
    for (const auto& h : v->headers()) {
        fuzz::check(keyhook::is_http_token(h.name), "an accepted header name is not a token", h.name);
        fuzz::check(!fuzz::has_cr_lf_nul(h.value), "an accepted header value holds CR, LF or NUL");
        for (char c : h.value) {
            const auto u = static_cast<unsigned char>(c);
            fuzz::check(!((u < 0x20 && c != '\t') || u == 0x7f), "an accepted header value holds a control character");
        }
    }
    const auto& url = v->target_url();
    for (char c : url) {
        const auto u = static_cast<unsigned char>(c);
        fuzz::check(u > 0x20 && u < 0x7f && c != '#', "the final URL holds a byte that breaks it");
    }
    fuzz::check(fuzz::starts_with(url, w.endpoint), "the final URL does not begin with the endpoint");
}

void fuzz_address(std::string_view text, const endpoint_policy& policy) {
    const auto ip = keyhook::parse_ip_address_text(text);
    const std::string z(text);  // NUL-terminated for inet_pton
    const bool has_nul = text.find('\0') != std::string_view::npos;
    std::array<std::uint8_t, 16> buf{};
    if (!has_nul && text.find(':') == std::string_view::npos) {
        const bool pton = inet_pton(AF_INET, z.c_str(), buf.data()) == 1;
        fuzz::check(pton == ip.has_value(), "IPv4 parsing differs from inet_pton", z);
        if (pton) fuzz::check(std::memcmp(buf.data(), ip->octets.data(), 4) == 0, "IPv4 bytes differ from inet_pton");
    } else if (ip && !has_nul) {
        fuzz::check(ip->family == keyhook::ip_family::v6, "text with ':' read as IPv4");
        fuzz::check(inet_pton(AF_INET6, z.c_str(), buf.data()) == 1, "inet_pton refuses an accepted IPv6 address", z);
        fuzz::check(std::memcmp(buf.data(), ip->octets.data(), 16) == 0, "IPv6 bytes differ from inet_pton", z);
    }
    if (ip) {
        const auto back = keyhook::parse_ip_address_text(keyhook::to_string(*ip));
        fuzz::check(back && *back == *ip, "an address does not survive to_string", keyhook::to_string(*ip));
    }
    const auto checked = keyhook::try_check_address(text, policy);
    fuzz::check(checked.has_value() == (ip && (policy.allow_non_global_addresses ||
                                               keyhook::classify_address(*ip) == address_class::global)),
                "check_address disagrees with parse and classify");
    if (!checked)
        fuzz::check(checked.error().code == (ip ? keyhook::errc::forbidden_address : keyhook::errc::invalid_value),
                    "check_address fails with the wrong kind");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size == 0) return 0;
    endpoint_policy policy;
    policy.allow_http = (data[0] & 4) != 0;
    policy.allow_non_global_addresses = (data[0] & 8) != 0;
    const std::string_view rest(reinterpret_cast<const char*>(data + 1), size - 1);
    switch (data[0] & 3) {
        case 0: fuzz_config(rest, policy); break;
        case 1: fuzz_endpoint(rest, policy); break;
        case 2: {
            FuzzedDataProvider in(data + 1, size - 1);
            fuzz_auth(in, policy);
            break;
        }
        default: fuzz_address(rest, policy); break;
    }
    return 0;
}
