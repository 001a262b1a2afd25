// Webhook configuration and endpoints (H1, H2). The first byte chooses the
// surface (low 2 bits) and the policy (bits 2 and 3: allow http, allow
// non-global addresses); the rest is the input:
//  0: configuration JSON through webhook_settings_from_json;
//  1: an endpoint URL through validate_endpoint;
//  2: one authentication parameter (fuzzed in/name/value) on a valid webhook;
//  3: address text through try_parse_ip_address and check_address, compared
//     with inet_pton; then raw bytes as an address, and the addresses at both
//     sides of every boundary of the range table below.
// Properties: an accepted endpoint has no user-info, fragment, space or
// control character, is at most 2048 bytes, and its host is neither a refused
// address nor localhost, even as a WHATWG URL parser would read it (hex,
// octal, fewer parts); accepted header values hold no CR, LF or NUL; the
// final URL stays free of them too. Whether an address is refused is decided
// by a table of IANA's special-purpose registry entries written here, with
// longest-prefix matching, independently of the library's classifier, and
// compared both ways (two-sided).
#include <arpa/inet.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <iterator>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <fuzzer/FuzzedDataProvider.h>
#include <nlohmann/json.hpp>

#include "fuzz_common.hpp"
#include "keyhook/endpoint.hpp"
#include "keyhook/webhook.hpp"
#include "keyhook/webhook_validation.hpp"
#include "keyhook/webhook_json.hpp"

namespace {

using keyhook::address_class;
using keyhook::endpoint_policy;
using bytes16 = std::array<std::uint8_t, 16>;

// ---------------------------------------------------------------------------
// The reference for H1: IANA's IPv4 and IPv6 Special-Purpose Address
// Registries (entries not globally reachable are refused, the globally
// reachable ones inside them allowed), with multicast and fec0::/10. The most
// specific matching entry decides; no match means allowed.

enum class verdict { refuse, allow, embedded_v4 };

struct v4_entry {
    std::uint32_t prefix;
    unsigned bits;
    verdict v;
};
constexpr v4_entry v4_table[] = {
    {0x00000000, 8, verdict::refuse},   // 0/8 this network
    {0x0A000000, 8, verdict::refuse},   // 10/8
    {0x64400000, 10, verdict::refuse},  // 100.64/10
    {0x7F000000, 8, verdict::refuse},   // 127/8
    {0xA9FE0000, 16, verdict::refuse},  // 169.254/16
    {0xAC100000, 12, verdict::refuse},  // 172.16/12
    {0xC0000000, 24, verdict::refuse},  // 192.0.0/24 (refused whole, H1)
    {0xC0000200, 24, verdict::refuse},  // 192.0.2/24
    {0xC0586300, 24, verdict::refuse},  // 192.88.99/24
    {0xC0A80000, 16, verdict::refuse},  // 192.168/16
    {0xC6120000, 15, verdict::refuse},  // 198.18/15
    {0xC6336400, 24, verdict::refuse},  // 198.51.100/24
    {0xCB007100, 24, verdict::refuse},  // 203.0.113/24
    {0xE0000000, 4, verdict::refuse},   // 224/4 multicast
    {0xF0000000, 4, verdict::refuse},   // 240/4
    {0xFFFFFFFF, 32, verdict::refuse},  // limited broadcast
    {0xC01FC400, 24, verdict::allow},   // 192.31.196/24 AS112 (globally reachable)
    {0xC034C100, 24, verdict::allow},   // 192.52.193/24 AMT
    {0xC0AF3000, 24, verdict::allow},   // 192.175.48/24 AS112 direct delegation
};

struct v6_entry {
    bytes16 prefix;
    unsigned bits;
    verdict v;
    std::size_t v4_at;  // where the IPv4 address sits, for embedded_v4
};
const v6_entry v6_table[] = {
    {{}, 8, verdict::refuse, 0},                                                             // ::/8 (::, ::1, the rest)
    {{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF}, 96, verdict::embedded_v4, 12},              // ::ffff:0:0/96
    {{0x00, 0x64, 0xFF, 0x9B}, 96, verdict::embedded_v4, 12},                                // 64:ff9b::/96
    {{0x00, 0x64, 0xFF, 0x9B, 0x00, 0x01}, 48, verdict::refuse, 0},                          // 64:ff9b:1::/48
    {{0x01, 0x00}, 64, verdict::refuse, 0},                                                  // 100::/64 discard
    {{0x01, 0x00, 0, 0, 0, 0, 0, 0x01}, 64, verdict::refuse, 0},                             // 100:0:0:1::/64 dummy
    {{0x20, 0x01}, 23, verdict::refuse, 0},                                                  // 2001::/23
    {{0x20, 0x01, 0x00, 0x01, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1}, 128, verdict::allow, 0},  // 2001:1::1
    {{0x20, 0x01, 0x00, 0x01, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2}, 128, verdict::allow, 0},  // 2001:1::2
    {{0x20, 0x01, 0x00, 0x01, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 3}, 128, verdict::allow, 0},  // 2001:1::3
    {{0x20, 0x01, 0x00, 0x02, 0x00, 0x00}, 48, verdict::refuse, 0},                          // 2001:2::/48 benchmarking
    {{0x20, 0x01, 0x00, 0x03}, 32, verdict::allow, 0},                                       // 2001:3::/32 AMT
    {{0x20, 0x01, 0x00, 0x04, 0x01, 0x12}, 48, verdict::allow, 0},                           // 2001:4:112::/48 AS112
    {{0x20, 0x01, 0x00, 0x10}, 28, verdict::refuse, 0},                                      // 2001:10::/28 ORCHID
    {{0x20, 0x01, 0x00, 0x20}, 28, verdict::allow, 0},                                       // 2001:20::/28 ORCHIDv2
    {{0x20, 0x01, 0x00, 0x30}, 28, verdict::allow, 0},                                       // 2001:30::/28 DRIP
    {{0x20, 0x01, 0x0D, 0xB8}, 32, verdict::refuse, 0},                                      // 2001:db8::/32
    {{0x20, 0x02}, 16, verdict::embedded_v4, 2},                                             // 2002::/16 6to4
    {{0x26, 0x20, 0x00, 0x4F, 0x80, 0x00}, 48, verdict::allow, 0},                           // 2620:4f:8000::/48
    {{0x3F, 0xFF}, 20, verdict::refuse, 0},                                                  // 3fff::/20 documentation
    {{0x5F, 0x00}, 16, verdict::refuse, 0},                                                  // 5f00::/16 SRv6
    {{0xFC}, 7, verdict::refuse, 0},                                                         // fc00::/7
    {{0xFE, 0x80}, 10, verdict::refuse, 0},                                                  // fe80::/10
    {{0xFE, 0xC0}, 10, verdict::refuse, 0},                                                  // fec0::/10
    {{0xFF}, 8, verdict::refuse, 0},                                                         // ff00::/8
};

bool v4_in(std::uint32_t a, std::uint32_t prefix, unsigned bits) {
    return bits == 0 || (a >> (32 - bits)) == (prefix >> (32 - bits));
}

bool v6_bit(const bytes16& a, unsigned i) { return (a[i / 8] >> (7 - i % 8) & 1) != 0; }

bool v6_in(const bytes16& a, const bytes16& prefix, unsigned bits) {
    for (unsigned i = 0; i < bits; ++i)
        if (v6_bit(a, i) != v6_bit(prefix, i)) return false;
    return true;
}

bool reference_refuses_v4(std::uint32_t a) {
    int best = -1;
    verdict v = verdict::allow;
    for (const auto& e : v4_table)
        if (static_cast<int>(e.bits) > best && v4_in(a, e.prefix, e.bits)) {
            best = static_cast<int>(e.bits);
            v = e.v;
        }
    return v == verdict::refuse;
}

std::uint32_t be32(const bytes16& a, std::size_t at) {
    return std::uint32_t{a[at]} << 24 | std::uint32_t{a[at + 1]} << 16 | std::uint32_t{a[at + 2]} << 8 | a[at + 3];
}

bool reference_refuses(const keyhook::ip_address& ip) {
    if (ip.family == keyhook::ip_family::v4) return reference_refuses_v4(be32(ip.octets, 0));
    const v6_entry* best = nullptr;
    for (const auto& e : v6_table)
        if ((!best || e.bits > best->bits) && v6_in(ip.octets, e.prefix, e.bits)) best = &e;
    if (!best) return false;
    if (best->v == verdict::embedded_v4) return reference_refuses_v4(be32(ip.octets, best->v4_at));
    return best->v == verdict::refuse;
}

// The library's verdict against the reference, both ways.
void check_classifier(const keyhook::ip_address& ip) {
    const bool library = keyhook::classify_address(ip) != address_class::global;
    const bool reference = reference_refuses(ip);
    if (library != reference) {
        const std::string text = keyhook::to_string(ip);
        fuzz::fail(reference ? "an address the registry refuses is classified global"
                             : "a globally reachable address is refused",
                   text);
    }
}

// a + delta (delta -1 or +1) on 128 bits, wrapping.
bytes16 add(bytes16 a, int delta) {
    for (std::size_t i = 16; i-- > 0;) {
        const int v = a[i] + delta;
        a[i] = static_cast<std::uint8_t>(v & 0xFF);
        if (v >= 0 && v <= 0xFF) break;
    }
    return a;
}

// The first or last address of a prefix.
bytes16 edge(const bytes16& prefix, unsigned bits, bool last) {
    bytes16 a{};
    for (unsigned i = 0; i < 128; ++i) {
        const bool bit = i < bits ? v6_bit(prefix, i) : last;
        if (bit) a[i / 8] = static_cast<std::uint8_t>(a[i / 8] | 0x80u >> (i % 8));
    }
    return a;
}

// Raw input as addresses: the first 16 (or 4) bytes themselves, then both
// sides of both ends of the table entry the next byte picks (with the rest of
// an embedded IPv4 taken from the input), in every form that embeds IPv4.
void fuzz_raw_addresses(std::string_view raw) {
    bytes16 a{};
    for (std::size_t i = 0; i < 16 && i < raw.size(); ++i) a[i] = static_cast<std::uint8_t>(raw[i]);
    check_classifier(keyhook::ip_address::v6(a));
    check_classifier(keyhook::ip_address::v4(a[0], a[1], a[2], a[3]));
    if (raw.size() < 18) return;
    const auto pick = static_cast<std::uint8_t>(raw[16]);
    const bool last = (raw[17] & 1) != 0;
    if (pick & 0x80) {
        const auto& e = v4_table[pick % std::size(v4_table)];
        const std::uint32_t mask = e.bits == 0 ? 0 : ~std::uint32_t{0} << (32 - e.bits);
        const std::uint32_t end = last ? (e.prefix | ~mask) : (e.prefix & mask);
        for (const std::uint32_t v : {end - 1, end, end + 1}) {
            const auto ip4 =
                keyhook::ip_address::v4(static_cast<std::uint8_t>(v >> 24), static_cast<std::uint8_t>(v >> 16),
                                        static_cast<std::uint8_t>(v >> 8), static_cast<std::uint8_t>(v));
            check_classifier(ip4);
            // The same IPv4 address inside each IPv6 form that carries one.
            for (const auto& carrier : v6_table) {
                if (carrier.v != verdict::embedded_v4) continue;
                bytes16 b = carrier.prefix;
                for (std::size_t k = 0; k < 4; ++k) b[carrier.v4_at + k] = ip4.octets[k];
                check_classifier(keyhook::ip_address::v6(b));
            }
        }
    } else {
        const auto& e = v6_table[pick % std::size(v6_table)];
        const bytes16 end = edge(e.prefix, e.bits, last);
        for (const auto& b : {add(end, -1), end, add(end, 1)}) check_classifier(keyhook::ip_address::v6(b));
    }
}

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
        fuzz::check(!reference_refuses(*e.address), "an accepted endpoint's address is in a refused range",
                    keyhook::to_string(*e.address));
    if (!authority.empty() && authority[0] != '[') {
        const auto host = lower(authority.substr(0, authority.find(':')));
        if (const auto v4 = whatwg_ipv4(host)) {
            fuzz::check(
                e.address.has_value() && e.address->family == keyhook::ip_family::v4 && e.address->v4_value() == *v4,
                "a browser would read the host as another IPv4 address", host);
            fuzz::check(!reference_refuses_v4(*v4), "a browser would read the host as a refused address", host);
        }
    }
}

// H2 with H7: what an accepted configuration sends, keyhook's own receiver
// does not refuse for its keys (conflicting keys are refused when
// the configuration is validated, not on every delivery).
void check_receivable(const keyhook::validated_webhook& w) {
    const keyhook::http_request request{"POST", w.target_url(), w.headers(), "{}"};
    const auto key = keyhook::try_extract_api_key(request);
    if (!key)
        fuzz::check(key.error().code == keyhook::errc::unauthorized, "H7 refuses what an accepted webhook sends",
                    key.error().what());
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
        check_receivable(w);
        fuzz::check(w.target_url().size() <= keyhook::max_target_url_length, "a final URL is over the limit");
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
    check_receivable(*v);
}

void fuzz_address(std::string_view text, const endpoint_policy& policy) {
    const auto ip = keyhook::try_parse_ip_address(text);
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
        const auto back = keyhook::try_parse_ip_address(keyhook::to_string(*ip));
        fuzz::check(back && *back == *ip, "an address does not survive to_string", keyhook::to_string(*ip));
    }
    // After name resolution (H1): the reference decides, not the library's classifier.
    if (ip) check_classifier(*ip);
    const auto checked = keyhook::try_check_address(text, policy);
    fuzz::check(checked.has_value() == (ip && (policy.allow_non_global_addresses || !reference_refuses(*ip))),
                "check_address disagrees with the registry table");
    if (!checked)
        fuzz::check(checked.error().code == (ip ? keyhook::errc::forbidden_address : keyhook::errc::invalid_value),
                    "check_address fails with the wrong kind");
    fuzz_raw_addresses(text);
}

}  // namespace

KEYHOOK_FUZZ_TARGET(webhook) {
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
