// keyhook: webhook configuration (spec 2.2) and its validation (rules H1 to
// H3). Validation turns a `webhook` as entered into a `validated_webhook`, which
// has everything dispatch needs computed once: the endpoint parsed and checked,
// the query authentication appended to the URL, the headers built, the event
// filter as a bit mask. Also reads the configuration from JSON with path-bearing
// errors.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <ostream>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "keyhook/endpoint.hpp"
#include "keyhook/error.hpp"
#include "keyhook/events.hpp"
#include "keyhook/http.hpp"
#include "keyhook/receiving.hpp"
#include "keyhook/secret.hpp"
#include "keyhook/detail/signing_secret.hpp"
#include "keyhook/detail/json_members.hpp"
#include "keyhook/detail/signing_keys.hpp"

namespace keyhook {

// Where an authentication parameter goes in the outgoing request (H2).
enum class auth_location { header, query };

[[nodiscard]] constexpr std::string_view to_string(auth_location l) noexcept {
    return l == auth_location::header ? "header" : "query";
}
inline std::ostream& operator<<(std::ostream& os, auth_location l) { return os << to_string(l); }

// One authentication parameter: a request header or a query parameter whose
// value is a secret (the receiver's key, usually header x-api-key or query
// api_key, spec 4.4).
struct auth_parameter {
    auth_location in = auth_location::header;
    std::string name;
    secret value;

    friend bool operator==(const auth_parameter& a, const auth_parameter& b) {
        return a.in == b.in && a.name == b.name && a.value == b.value;
    }
    friend bool operator!=(const auth_parameter& a, const auth_parameter& b) { return !(a == b); }
    friend std::ostream& operator<<(std::ostream& os, const auth_parameter& p) {
        return os << p.in << ' ' << escaped(p.name) << '=' << p.value;
    }
};

// The event types a webhook fires for; empty means every type (H3).
using event_filter = std::set<event_type>;

// A webhook as configured (spec 2.2). Not yet validated: see validate_webhook.
struct webhook {
    std::string name;
    std::string endpoint;                  // the URL that receives the POST
    std::vector<auth_parameter> auth;      // sent as headers or query parameters
    event_filter events;                   // empty: every event type
    bool saved = false;                    // false: a draft, which never fires (H4)
    std::optional<secret> signing_secret;  // carried for signing (B1); core does not use it

    friend bool operator==(const webhook& a, const webhook& b) {
        return a.name == b.name && a.endpoint == b.endpoint && a.auth == b.auth && a.events == b.events &&
               a.saved == b.saved && a.signing_secret == b.signing_secret;
    }
    friend bool operator!=(const webhook& a, const webhook& b) { return !(a == b); }
    // Secrets print masked; the endpoint through redact_url (P2: no user-info,
    // no query values), names quoted (P1).
    friend std::ostream& operator<<(std::ostream& os, const webhook& w) {
        os << "webhook{name=" << detail::quote_input(w.name)
           << ", endpoint=" << detail::quote_input(redact_url(w.endpoint), 256) << ", " << (w.saved ? "saved" : "draft")
           << ", events=";
        if (w.events.empty()) os << "all";
        const char* sep = "";
        for (auto e : w.events) {
            os << sep << e;
            sep = "|";
        }
        os << ", auth=[";
        sep = "";
        for (const auto& p : w.auth) {
            os << sep << p;
            sep = ", ";
        }
        os << ']';
        if (w.signing_secret) os << ", signing secret set";  // not even its masked form: it is a key
        return os << '}';
    }
};

// The tenant's side of spec 2.2: its name and the "Enable webhooks" switch.
struct tenant_settings {
    std::string name;
    bool webhooks_enabled = false;

    friend bool operator==(const tenant_settings& a, const tenant_settings& b) {
        return a.name == b.name && a.webhooks_enabled == b.webhooks_enabled;
    }
    friend bool operator!=(const tenant_settings& a, const tenant_settings& b) { return !(a == b); }
    friend std::ostream& operator<<(std::ostream& os, const tenant_settings& t) {
        return os << "tenant{name=" << detail::quote_input(t.name)
                  << ", webhooks=" << (t.webhooks_enabled ? "enabled" : "disabled") << '}';
    }
};

// Limits keyhook sets where the spec shows none (spec 2.2: "not shown").
inline constexpr std::size_t max_webhook_name_length = 128;  // characters (code points)

// H2 policy limits on authentication parameters. They are checked before
// anything is built, so an oversized input costs no more than its own bytes.
inline constexpr std::size_t max_auth_parameters = 32;      // per webhook
inline constexpr std::size_t max_auth_name_length = 128;    // bytes
inline constexpr std::size_t max_auth_value_length = 4096;  // bytes
inline constexpr std::size_t max_target_url_length = 8192;  // the endpoint with the query parameters appended

// Headers an authentication parameter may not set (H2): HTTP framing,
// hop-by-hop and connection-control headers, and the signing headers of B1,
// including the older svix-* names that receivers also accept.
inline constexpr std::string_view reserved_header_names[] = {
    "Host",
    "Content-Length",
    "Content-Type",
    "Transfer-Encoding",
    "Connection",
    "Keep-Alive",
    "Upgrade",
    "TE",
    "Trailer",
    "Expect",
    "Proxy-Connection",
    "Proxy-Authorization",
    "webhook-id",
    "webhook-timestamp",
    "webhook-signature",
    "svix-id",
    "svix-timestamp",
    "svix-signature",
};

// RFC 9110 tchar: the characters of a header name.
[[nodiscard]] constexpr bool is_token_char(char c) noexcept {
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')) return true;
    switch (c) {
        case '!':
        case '#':
        case '$':
        case '%':
        case '&':
        case '\'':
        case '*':
        case '+':
        case '-':
        case '.':
        case '^':
        case '_':
        case '`':
        case '|':
        case '~': return true;
        default: return false;
    }
}

[[nodiscard]] constexpr bool is_http_token(std::string_view s) noexcept {
    if (s.empty()) return false;
    for (char c : s)
        if (!is_token_char(c)) return false;
    return true;
}

class validated_webhook;

namespace detail::hooks {

struct webhook_validator;
struct webhook_access;

// The library's one UTF-8 walker (detail/utf8.hpp).
inline bool valid_utf8(std::string_view s) noexcept { return is_valid_utf8(s); }

inline std::string describe_char(char ch) {
    switch (ch) {
        case '\r': return "a carriage return (CR)";
        case '\n': return "a line feed (LF)";
        case '\0': return "a NUL byte";
        default: break;
    }
    const auto c = static_cast<unsigned char>(ch);
    if (c > 0x20 && c < 0x7f) return std::string("'") + ch + "'";
    if (c == ' ') return "a space";
    static constexpr char hex[] = "0123456789abcdef";
    std::string s = "byte 0x";
    s += hex[c >> 4];
    s += hex[c & 0xf];
    return s;
}

// The first CR, LF or NUL in s, which would let a value end a header line or a
// request early (request splitting); npos when there is none.
inline std::size_t find_line_break_or_nul(std::string_view s) noexcept {
    for (std::size_t i = 0; i < s.size(); ++i)
        if (s[i] == '\r' || s[i] == '\n' || s[i] == '\0') return i;
    return std::string_view::npos;
}

// Collects problems into `out`; `first_only` tells the checks to give up
// after the first. `steps` counts the work of the checks whose cost depends on
// how many items there are (name lookups: bytes hashed and compared), so tests
// can assert J3's linear growth on counts rather than on time.
struct problem_sink {
    std::vector<error>& out;
    bool first_only;
    std::size_t steps = 0;

    [[nodiscard]] bool done() const noexcept { return first_only && !out.empty(); }
    void add(errc code, std::string path, std::string message) {
        if (!done()) out.push_back(error{code, std::move(path), std::move(message)});
    }
};

inline void check_name(std::string_view name, const std::string& path, problem_sink& sink) {
    if (!valid_utf8(name)) return sink.add(errc::invalid_utf8, path, "is not valid UTF-8");
    bool blank = true;
    for (char c : name) {
        const auto u = static_cast<unsigned char>(c);
        if (u < 0x20 || u == 0x7f)
            return sink.add(errc::invalid_name, path, "contains a control character (" + describe_char(c) + ")");
        if (c != ' ') blank = false;
    }
    if (blank) return sink.add(errc::invalid_name, path, "is empty; a webhook needs a name");
    if (const auto n = code_point_count(name); n > max_webhook_name_length)
        sink.add(errc::invalid_name, path,
                 "has " + std::to_string(n) + " characters; at most " + std::to_string(max_webhook_name_length) +
                     " are allowed");
}

// H2 for one parameter; `others` are the parameters before it (for duplicates).
inline void check_auth_parameter(const auth_parameter& p, std::size_t index, const std::vector<auth_parameter>& all,
                                 const std::string& base, problem_sink& sink) {
    const std::string at = path_index(path_member(base, "auth"), index);
    const std::string name_path = path_member(at, "name");
    const std::string value_path = path_member(at, "value");
    const bool header = p.in == auth_location::header;
    const errc code = header ? errc::invalid_header : errc::invalid_parameter;
    const std::string_view what = header ? "header" : "query parameter";

    // Name. Names are configuration, not secrets, so they may be quoted.
    if (p.name.empty()) {
        sink.add(code, name_path, "is empty; a " + std::string(what) + " needs a name");
    } else if (p.name.size() > max_auth_name_length) {
        sink.add(errc::limit_exceeded, name_path,
                 "is " + std::to_string(p.name.size()) + " bytes long; at most " +
                     std::to_string(max_auth_name_length) + " are allowed");
    } else if (const auto bad = find_line_break_or_nul(p.name); bad != std::string_view::npos) {
        sink.add(
            code, name_path,
            std::string(what) + " name contains " + describe_char(p.name[bad]) + " at byte " + std::to_string(bad));
    } else if (header) {
        std::size_t bad_at = std::string::npos;
        for (std::size_t i = 0; i < p.name.size() && bad_at == std::string::npos; ++i)
            if (!is_token_char(p.name[i])) bad_at = i;
        if (bad_at != std::string::npos) {
            sink.add(code, name_path,
                     "header name " + quote_input(p.name) + " contains " + describe_char(p.name[bad_at]) +
                         ", which is not allowed in an HTTP token (RFC 9110)");
        } else {
            for (auto reserved : reserved_header_names)
                if (header_name_equal(p.name, reserved)) {
                    sink.add(code, name_path,
                             "header " + quote_input(p.name) +
                                 " is set by the HTTP client or by keyhook; an auth parameter may not set it");
                    break;
                }
        }
    }
    if (sink.done()) return;
    // Quadratic in the count, which validation caps at max_auth_parameters
    // before calling this: at most 32 x 31 / 2 comparisons of 128 bytes.
    for (std::size_t j = 0; j < index && !p.name.empty(); ++j) {
        const auto& q = all[j];
        if (q.in != p.in) continue;
        if (header ? header_name_equal(q.name, p.name) : q.name == p.name) {
            sink.add(code, name_path,
                     std::string(what) + " " + quote_input(p.name) + " is already set by " +
                         path_index(path_member(base, "auth"), j));
            break;
        }
    }
    if (sink.done()) return;

    // Value: a secret, so messages say what is wrong and where, never what it is.
    const std::string& v = p.value.reveal();
    if (v.empty()) return sink.add(code, value_path, "is empty; an authentication value is required");
    if (v.size() > max_auth_value_length)
        return sink.add(errc::limit_exceeded, value_path,
                        "is " + std::to_string(v.size()) + " bytes long; at most " +
                            std::to_string(max_auth_value_length) + " are allowed");
    if (const auto bad = find_line_break_or_nul(v); bad != std::string_view::npos)
        return sink.add(
            code, value_path,
            std::string(what) + " value contains " + describe_char(v[bad]) + " at byte " + std::to_string(bad));
    if (header) {
        for (std::size_t i = 0; i < v.size(); ++i) {
            const auto u = static_cast<unsigned char>(v[i]);
            if ((u < 0x20 && v[i] != '\t') || u == 0x7f)
                return sink.add(code, value_path,
                                "header value contains a control character (" + describe_char(v[i]) + ") at byte " +
                                    std::to_string(i));
        }
        const auto ws = [](char c) { return c == ' ' || c == '\t'; };
        if (ws(v.front()) || ws(v.back()))
            sink.add(code, value_path, "header value has leading or trailing whitespace, which receivers strip");
    }
}

}  // namespace detail::hooks

namespace detail::hooks {

// A 128-bit non-cryptographic hash (for delivery ids, H8). Two lanes over
// 8-byte little-endian words; every step is a bijection of the lane for a fixed
// word, so inputs of one length that differ in a single word never collide.
struct hash128 {
    std::uint64_t hi = 0;
    std::uint64_t lo = 0;
};

constexpr std::uint64_t rotl64(std::uint64_t x, unsigned r) noexcept { return x << r | x >> (64u - r); }

// A strong 64-bit finalizer (the one of splitmix64): every input bit reaches every output bit.
constexpr std::uint64_t fmix64(std::uint64_t x) noexcept {
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9u;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebu;
    x ^= x >> 31;
    return x;
}

inline hash128 hash_bytes(std::string_view s, std::uint64_t seed) noexcept {
    constexpr std::uint64_t k1 = 0x9e3779b97f4a7c15u, k2 = 0xc2b2ae3d27d4eb4fu, k3 = 0x165667b19e3779f9u;
    std::uint64_t a = seed ^ 0x243f6a8885a308d3u;
    std::uint64_t b = fmix64(seed) ^ 0x13198a2e03707344u;
    const auto* p = reinterpret_cast<const unsigned char*>(s.data());
    const std::size_t n = s.size();
    std::size_t i = 0;
    const auto step = [&a, &b](std::uint64_t w) {
        a = rotl64((a ^ w) * k1, 31) + b;
        b = rotl64((b + w) * k2, 29) ^ a;
    };
    for (; i + 8 <= n; i += 8) {
        std::uint64_t w = 0;
        for (unsigned k = 0; k < 8; ++k) w |= std::uint64_t{p[i + k]} << (8 * k);
        step(w);
    }
    std::uint64_t tail = 0;
    for (unsigned k = 0; i + k < n; ++k) tail |= std::uint64_t{p[i + k]} << (8 * k);
    step(tail ^ (std::uint64_t{n} * k3));  // the length tells zero padding from zero bytes
    a = fmix64(a ^ std::uint64_t{n});
    b = fmix64(b + a);
    a = fmix64(a + b);
    return hash128{a, b};
}

// What validation prepares once for dispatch; shared, never changed.
struct prepared_webhook {
    webhook config;
    endpoint_url endpoint;
    std::string target_url;
    http_headers headers;
    std::uint64_t event_mask = 0;
    hash128 name_hash;
};

inline constexpr std::uint64_t name_hash_seed = 0x6b657968'6f6f6b31u;  // "keyhook1"

}  // namespace detail::hooks

// A webhook that passed validation, with what dispatch needs prepared once:
// the parsed endpoint, the URL with query authentication appended, the headers
// (Content-Type and the authentication headers, marked sensitive) and the
// event filter as a bit mask. Made only by the validate functions below.
// Immutable, and cheap to copy (copies share one prepared state; a moved-from
// value stays valid, since moving copies the handle).
class validated_webhook {
public:
    validated_webhook(const validated_webhook&) noexcept = default;
    validated_webhook(validated_webhook&& other) noexcept : state_(other.state_) {}
    validated_webhook& operator=(const validated_webhook&) noexcept = default;
    validated_webhook& operator=(validated_webhook&& other) noexcept {
        state_ = other.state_;
        return *this;
    }
    ~validated_webhook() = default;

    [[nodiscard]] const webhook& config() const noexcept { return state_->config; }
    [[nodiscard]] const std::string& name() const noexcept { return state_->config.name; }
    [[nodiscard]] bool saved() const noexcept { return state_->config.saved; }
    [[nodiscard]] const endpoint_url& endpoint() const noexcept { return state_->endpoint; }
    [[nodiscard]] const std::optional<secret>& signing_secret() const noexcept { return state_->config.signing_secret; }

    // The URL requests go to: the endpoint with the query parameters of H2
    // appended (percent-encoded). Holds secrets when there are any.
    [[nodiscard]] const std::string& target_url() const noexcept { return state_->target_url; }
    // Content-Type: application/json first, then the authentication headers in
    // the order configured, each marked sensitive.
    [[nodiscard]] const http_headers& headers() const noexcept { return state_->headers; }

    // H3: the filter admits e (an empty filter admits every type).
    [[nodiscard]] bool admits(event_type e) const noexcept {
        const auto bit = static_cast<unsigned>(e);
        return bit < 64 && (state_->event_mask >> bit & 1u) != 0;
    }

    friend bool operator==(const validated_webhook& a, const validated_webhook& b) {
        return a.state_ == b.state_ || a.state_->config == b.state_->config;
    }
    friend bool operator!=(const validated_webhook& a, const validated_webhook& b) { return !(a == b); }
    friend std::ostream& operator<<(std::ostream& os, const validated_webhook& w) { return os << w.state_->config; }

private:
    friend struct detail::hooks::webhook_validator;
    friend struct detail::hooks::webhook_access;
    explicit validated_webhook(std::shared_ptr<const detail::hooks::prepared_webhook> state) noexcept
        : state_(std::move(state)) {}

    std::shared_ptr<const detail::hooks::prepared_webhook> state_;  // never null
};

static_assert(event_type_count <= 64, "the event mask of validated_webhook holds one bit per type");

namespace detail::hooks {

// The names of a list's webhooks seen so far, for the uniqueness check: one
// hash lookup per name, so a list of n names sharing a long prefix costs time
// in proportion to its bytes (the pairwise comparison it replaces was
// quadratic). Holds views: the names must outlive it and stay in place.
class name_index {
public:
    static constexpr std::size_t none = static_cast<std::size_t>(-1);

    name_index(std::size_t expected, std::size_t& steps) : seen_(expected, hasher{&steps}, equal{&steps}) {}

    // The index of an earlier element named `name`, or `none` after recording `index` for it.
    std::size_t add(std::string_view name, std::size_t index) {
        const auto [it, inserted] = seen_.emplace(name, index);
        return inserted ? none : it->second;
    }

private:
    struct hasher {
        std::size_t* steps;
        // Not noexcept, so that the standard library keeps each hash and
        // compares names only when their hashes are equal.
        std::size_t operator()(std::string_view s) const {
            *steps += s.size() + 1;
            return std::hash<std::string_view>{}(s);
        }
    };
    struct equal {
        std::size_t* steps;
        bool operator()(std::string_view a, std::string_view b) const noexcept {
            *steps += (a.size() < b.size() ? a.size() : b.size()) + 1;
            return a == b;
        }
    };
    std::unordered_map<std::string_view, std::size_t, hasher, equal> seen_;
};

// The bytes percent_encode(s) writes, without writing them.
inline std::size_t percent_encoded_length(std::string_view s) noexcept {
    std::size_t n = 0;
    for (char c : s) n += is_unreserved(static_cast<unsigned char>(c)) ? 1 : 3;
    return n;
}

// The separator before the first appended query parameter: '?' when the
// endpoint has no query, nothing when it ends in '?' or '&', else '&'.
inline std::string_view first_query_separator(std::string_view endpoint) noexcept {
    if (endpoint.find('?') == std::string_view::npos) return "?";
    if (endpoint.back() == '?' || endpoint.back() == '&') return "";
    return "&";
}

// The length of the final URL, computed before anything is built (H2).
inline std::size_t target_url_length(std::string_view endpoint, const std::vector<auth_parameter>& auth) noexcept {
    std::size_t n = endpoint.size();
    bool first = true;
    for (const auto& p : auth) {
        if (p.in != auth_location::query) continue;
        n += (first ? first_query_separator(endpoint).size() : 1) + percent_encoded_length(p.name) + 1 +
             percent_encoded_length(p.value.reveal());
        first = false;
    }
    return n;
}

// The endpoint (validated: no fragment) with the query parameters appended,
// percent-encoded, in one pass.
inline std::string build_target_url(std::string_view endpoint, const std::vector<auth_parameter>& auth,
                                    std::size_t length) {
    std::string url;
    url.reserve(length);
    url += endpoint;
    bool first = true;
    for (const auto& p : auth) {
        if (p.in != auth_location::query) continue;
        url += first ? first_query_separator(endpoint) : std::string_view("&");
        url += percent_encode(p.name);
        url += '=';
        url += percent_encode(p.value.reveal());
        first = false;
    }
    return url;
}

// H2 with H7: the API keys a delivery would carry must all be equal, or the
// receiver refuses every delivery. The endpoint's query is read by H7's own
// code (find_query_key: api_key percent-decoded, an empty value counts as
// absent); then each query parameter named api_key and each header named
// x-api-key of `auth` must equal the key found first. Refused with
// errc::conflicting_keys at the parameter's value (or the endpoint, when its
// own query disagrees with itself); no value is quoted.
inline void check_key_conflicts(std::string_view endpoint, const std::vector<auth_parameter>& auth,
                                const std::string& base, problem_sink& sink) {
    auto found = find_query_key(endpoint);
    if (found.conflicting)
        return sink.add(errc::conflicting_keys, path_member(base, "endpoint"),
                        "has query parameter api_key more than once with different values; the receiver refuses "
                        "a request whose keys differ (H7)");
    std::string first_where = found.value ? "the endpoint's query parameter api_key" : "";
    for (std::size_t i = 0; i < auth.size(); ++i) {
        const auto& p = auth[i];
        const bool query = p.in == auth_location::query;
        if (!(query ? p.name == api_key_query_parameter : header_name_equal(p.name, api_key_header))) continue;
        const std::string where = query ? "query parameter api_key" : "header x-api-key";
        const std::string& value = p.value.reveal();
        if (!found.value) {
            found.value = value;
            first_where = "the " + where + " of " + path_index(path_member(base, "auth"), i);
        } else if (!constant_time_equal(*found.value, value)) {
            return sink.add(errc::conflicting_keys, path_member(path_index(path_member(base, "auth"), i), "value"),
                            "the " + where + " differs from the API key in " + first_where +
                                "; the receiver refuses a request whose keys differ (H7), so every delivery "
                                "would fail");
        }
    }
}

struct webhook_validator {
    // Checks w (paths under `base`: "" for a lone webhook, "webhooks[1]" in a
    // list); returns the validated form when no problem was found.
    static std::optional<validated_webhook> run(const webhook& w, const endpoint_policy& policy,
                                                const std::string& base, problem_sink& sink) {
        const std::size_t before = sink.out.size();
        check_name(w.name, path_member(base, "name"), sink);
        if (sink.done()) return std::nullopt;
        auto ep = validate_endpoint_at(w.endpoint, policy, path_member(base, "endpoint"));
        if (!ep) sink.add(ep.error().code, ep.error().path, ep.error().message);
        if (sink.done()) return std::nullopt;
        // The count first (H2): nothing of an oversized list is looked at.
        if (w.auth.size() > max_auth_parameters)
            sink.add(errc::limit_exceeded, path_member(base, "auth"),
                     "has " + std::to_string(w.auth.size()) + " authentication parameters; at most " +
                         std::to_string(max_auth_parameters) + " are allowed");
        else
            for (std::size_t i = 0; i < w.auth.size() && !sink.done(); ++i)
                check_auth_parameter(w.auth[i], i, w.auth, base, sink);
        if (sink.done()) return std::nullopt;
        // Checks of the parameters together, once each one is sound.
        std::size_t url_length = 0;
        if (ep && sink.out.size() == before) {
            check_key_conflicts(w.endpoint, w.auth, base, sink);
            url_length = target_url_length(w.endpoint, w.auth);
            if (url_length > max_target_url_length)
                sink.add(errc::limit_exceeded, path_member(base, "auth"),
                         "makes a final URL of " + std::to_string(url_length) +
                             " bytes (the endpoint with the query parameters appended); at most " +
                             std::to_string(max_target_url_length) + " are allowed");
        }
        if (sink.done()) return std::nullopt;
        if (w.signing_secret) {
            // B1, B3: whsec_ secrets and whsk_ keys, space-separated (decoded bytes are wiped).
            if (const auto e = check_signing_keys(w.signing_secret->reveal(), path_member(base, "signingSecret")))
                sink.add(e->code, e->path, e->message);
        }
        if (sink.out.size() != before) return std::nullopt;

        auto state = std::make_shared<detail::hooks::prepared_webhook>();
        state->config = w;
        state->endpoint = std::move(*ep);
        state->target_url = build_target_url(w.endpoint, w.auth, url_length);
        state->headers.reserve(1 + w.auth.size());
        state->headers.push_back(http_header{"Content-Type", "application/json", false});
        for (const auto& p : w.auth)
            if (p.in == auth_location::header) state->headers.push_back(http_header{p.name, p.value.reveal(), true});
        if (w.events.empty()) {
            state->event_mask = ~std::uint64_t{0};
        } else {
            for (auto e : w.events) state->event_mask |= std::uint64_t{1} << static_cast<unsigned>(e);
        }
        state->name_hash = hash_bytes(w.name, name_hash_seed);
        return validated_webhook(std::move(state));
    }

    // Element i of a list, under base[i]: as above, and its name must differ
    // from those of the elements before it. `w` must stay where it is while
    // `names` is used (names holds views of it).
    static std::optional<validated_webhook> run_item(const webhook& w, std::size_t i, const endpoint_policy& policy,
                                                     std::string_view base, name_index& names, problem_sink& sink) {
        const std::string at = path_index(base, i);
        auto v = run(w, policy, at, sink);
        if (sink.done()) return std::nullopt;
        if (const auto earlier = names.add(w.name, i); earlier != name_index::none) {
            sink.add(errc::invalid_name, path_member(at, "name"),
                     quote_input(w.name) + " is already the name of " + path_index(base, earlier) +
                         "; names identify webhooks and must be unique");
            return std::nullopt;
        }
        return v;
    }

    static std::vector<validated_webhook> run_list(const std::vector<webhook>& list, const endpoint_policy& policy,
                                                   std::string_view base, problem_sink& sink) {
        std::vector<validated_webhook> out;
        out.reserve(list.size());
        name_index names(list.size(), sink.steps);
        for (std::size_t i = 0; i < list.size() && !sink.done(); ++i)
            if (auto v = run_item(list[i], i, policy, base, names, sink)) out.push_back(std::move(*v));
        return out;
    }
};

}  // namespace detail::hooks

// H1, H2: validates one webhook. The first problem found is the error, in the
// order name, endpoint, auth[0], auth[1], ..., signingSecret; paths are field
// names ("endpoint", "auth[2].name"). Drafts are validated like saved webhooks.
[[nodiscard]] inline result<validated_webhook> try_validate_webhook(const webhook& w,
                                                                    const endpoint_policy& policy = {}) {
    std::vector<error> problems;
    detail::hooks::problem_sink sink{problems, true};
    auto v = detail::hooks::webhook_validator::run(w, policy, std::string(), sink);
    if (!problems.empty()) return std::move(problems.front());
    return std::move(*v);
}
[[nodiscard]] inline validated_webhook validate_webhook(const webhook& w, const endpoint_policy& policy = {}) {
    return try_validate_webhook(w, policy).value();
}

// A list: paths under `path` ("webhooks[1].endpoint"); names must also be
// unique within the list (they identify a webhook in delivery ids and output).
[[nodiscard]] inline result<std::vector<validated_webhook>> try_validate_webhooks(const std::vector<webhook>& list,
                                                                                  const endpoint_policy& policy = {},
                                                                                  std::string_view path = "webhooks") {
    std::vector<error> problems;
    detail::hooks::problem_sink sink{problems, true};
    auto out = detail::hooks::webhook_validator::run_list(list, policy, path, sink);
    if (!problems.empty()) return std::move(problems.front());
    return out;
}
[[nodiscard]] inline std::vector<validated_webhook> validate_webhooks(const std::vector<webhook>& list,
                                                                      const endpoint_policy& policy = {},
                                                                      std::string_view path = "webhooks") {
    return try_validate_webhooks(list, policy, path).value();
}

// Every problem rather than the first (for a form that marks all fields at
// once); empty when the webhook is valid. At most one problem per field.
[[nodiscard]] inline std::vector<error> webhook_problems(const webhook& w, const endpoint_policy& policy = {}) {
    std::vector<error> problems;
    detail::hooks::problem_sink sink{problems, false};
    (void)detail::hooks::webhook_validator::run(w, policy, std::string(), sink);
    return problems;
}
[[nodiscard]] inline std::vector<error> webhook_problems(const std::vector<webhook>& list,
                                                         const endpoint_policy& policy = {},
                                                         std::string_view path = "webhooks") {
    std::vector<error> problems;
    detail::hooks::problem_sink sink{problems, false};
    (void)detail::hooks::webhook_validator::run_list(list, policy, path, sink);
    return problems;
}

// H3: an event filter given as names. An unknown name is errc::unknown_event
// at `path[i]` with the closest known name suggested. Repeated names are
// harmless (a set).
[[nodiscard]] inline result<event_filter> try_parse_event_filter(const std::vector<std::string>& names,
                                                                 std::string_view path = "events") {
    event_filter out;
    for (std::size_t i = 0; i < names.size(); ++i) {
        auto e = try_parse_event_type(names[i]);
        if (!e) {
            error err = e.error();
            err.path = detail::path_index(path, i);
            return err;
        }
        out.insert(*e);
    }
    return out;
}
[[nodiscard]] inline event_filter parse_event_filter(const std::vector<std::string>& names,
                                                     std::string_view path = "events") {
    return try_parse_event_filter(names, path).value();
}

// ---------------------------------------------------------------------------
// Reading the configuration from JSON
//
//   tenant:  {"name": string, "webhooksEnabled": bool}
//   webhook: {"name": string, "endpoint": string, "saved": bool,
//             "events": [string...] (optional, empty or missing: every type),
//             "auth": [{"in": "header"|"query", "name": string, "value": string}] (optional),
//             "signingSecret": string (optional)}
// Unknown members are ignored; a null optional member counts as missing.
// Errors carry the JSON path ("webhooks[1].auth[0].in").

template <class Json = nlohmann::json>
[[nodiscard]] result<tenant_settings> try_tenant_settings_from_json(const detail::non_deduced_t<Json>& j,
                                                                    std::string_view path = "tenant") {
    const std::string base(path);
    if (!j.is_object()) return detail::wrong_type(base, "an object", j);
    tenant_settings t;
    if (auto e = detail::read_member_string(j, "name", base, true, t.name)) return *e;
    if (auto e = detail::read_member_bool(j, "webhooksEnabled", base, t.webhooks_enabled)) return *e;
    return t;
}
template <class Json = nlohmann::json>
[[nodiscard]] tenant_settings tenant_settings_from_json(const detail::non_deduced_t<Json>& j,
                                                        std::string_view path = "tenant") {
    return try_tenant_settings_from_json<Json>(j, path).value();
}

// The shape only (types, names of events); validate_webhook checks the rest
// (validated_webhooks_from_json does both for a list).
template <class Json = nlohmann::json>
[[nodiscard]] result<webhook> try_webhook_from_json(const detail::non_deduced_t<Json>& j, std::string_view path = "") {
    const std::string base(path);
    if (!j.is_object()) return detail::wrong_type(base, "an object", j);
    webhook w;
    if (auto e = detail::read_member_string(j, "name", base, true, w.name)) return *e;
    if (auto e = detail::read_member_string(j, "endpoint", base, true, w.endpoint)) return *e;
    if (auto e = detail::read_member_bool(j, "saved", base, w.saved)) return *e;
    if (const auto* events = detail::json_member(j, "events")) {
        const std::string events_path = detail::path_member(base, "events");
        if (!events->is_array()) return detail::wrong_type(events_path, "an array of event type names", *events);
        for (std::size_t i = 0; i < events->size(); ++i) {
            const auto& item = (*events)[i];
            const std::string item_path = detail::path_index(events_path, i);
            if (!item.is_string()) return detail::wrong_type(item_path, "an event type name", item);
            auto e = try_parse_event_type(item.template get_ref<const std::string&>());
            if (!e) return error{e.error().code, item_path, e.error().message};
            w.events.insert(*e);
        }
    }
    if (const auto* auth = detail::json_member(j, "auth")) {
        const std::string auth_path = detail::path_member(base, "auth");
        if (!auth->is_array()) return detail::wrong_type(auth_path, "an array of authentication parameters", *auth);
        if (auth->size() > max_auth_parameters)
            return error{errc::limit_exceeded, auth_path,
                         "has " + std::to_string(auth->size()) + " authentication parameters; at most " +
                             std::to_string(max_auth_parameters) + " are allowed"};
        w.auth.reserve(auth->size());
        for (std::size_t i = 0; i < auth->size(); ++i) {
            const auto& item = (*auth)[i];
            const std::string item_path = detail::path_index(auth_path, i);
            if (!item.is_object()) return detail::wrong_type(item_path, "an object", item);
            auth_parameter p;
            std::string in;
            if (auto e = detail::read_member_string(item, "in", item_path, true, in)) return *e;
            if (in == "header")
                p.in = auth_location::header;
            else if (in == "query")
                p.in = auth_location::query;
            else
                return error{errc::invalid_value, detail::path_member(item_path, "in"),
                             "expected \"header\" or \"query\", got " + detail::quote_input(in)};
            if (auto e = detail::read_member_string(item, "name", item_path, true, p.name)) return *e;
            std::string value;
            // The value is a secret: a type error must not show it, and does not (types only).
            if (auto e = detail::read_member_string(item, "value", item_path, true, value)) return *e;
            p.value = secret(std::move(value));
            w.auth.push_back(std::move(p));
        }
    }
    std::string signing;
    const bool has_signing = detail::json_member(j, "signingSecret") != nullptr;
    if (auto e = detail::read_member_string(j, "signingSecret", base, false, signing)) return *e;
    if (has_signing) w.signing_secret = secret(std::move(signing), secret_kind::signing_key);
    return w;
}
template <class Json = nlohmann::json>
[[nodiscard]] webhook webhook_from_json(const detail::non_deduced_t<Json>& j, std::string_view path = "") {
    return try_webhook_from_json<Json>(j, path).value();
}

// An array of webhooks, read and validated element by element (the first
// problem in document order is the error): paths "webhooks[1].endpoint".
// "validated_" in the name because X_from_json gives an X: webhook_from_json
// reads the shape only.
template <class Json = nlohmann::json>
[[nodiscard]] result<std::vector<validated_webhook>> try_validated_webhooks_from_json(
    const detail::non_deduced_t<Json>& j, const endpoint_policy& policy = {}, std::string_view path = "webhooks") {
    const std::string base(path);
    if (!j.is_array()) return detail::wrong_type(base, "an array of webhooks", j);
    std::vector<validated_webhook> out;
    out.reserve(j.size());
    std::vector<error> problems;
    detail::hooks::problem_sink sink{problems, true};
    detail::hooks::name_index names(j.size(), sink.steps);
    // Read and validate element by element, so the first problem in document order is the one reported.
    for (std::size_t i = 0; i < j.size(); ++i) {
        auto w = try_webhook_from_json<Json>(j[i], detail::path_index(base, i));
        if (!w) return w.error();
        auto v = detail::hooks::webhook_validator::run(*w, policy, detail::path_index(base, i), sink);
        if (!problems.empty()) return std::move(problems.front());
        // The name is looked up by a view of the validated copy, which stays in place.
        if (const auto earlier = names.add(v->name(), i); earlier != detail::hooks::name_index::none)
            return error{errc::invalid_name, detail::path_member(detail::path_index(base, i), "name"),
                         detail::quote_input(v->name()) + " is already the name of " +
                             detail::path_index(base, earlier) + "; names identify webhooks and must be unique"};
        out.push_back(std::move(*v));
    }
    return out;
}
template <class Json = nlohmann::json>
[[nodiscard]] std::vector<validated_webhook> validated_webhooks_from_json(const detail::non_deduced_t<Json>& j,
                                                                          const endpoint_policy& policy = {},
                                                                          std::string_view path = "webhooks") {
    return try_validated_webhooks_from_json<Json>(j, policy, path).value();
}

// A tenant's whole webhook configuration: {"tenant": {...}, "webhooks": [...]}.
struct webhook_settings {
    tenant_settings tenant;
    std::vector<validated_webhook> webhooks;

    friend bool operator==(const webhook_settings& a, const webhook_settings& b) {
        return a.tenant == b.tenant && a.webhooks == b.webhooks;
    }
    friend bool operator!=(const webhook_settings& a, const webhook_settings& b) { return !(a == b); }
    friend std::ostream& operator<<(std::ostream& os, const webhook_settings& s) {
        os << s.tenant;
        for (const auto& w : s.webhooks) os << '\n' << w;
        return os;
    }
};

template <class Json = nlohmann::json>
[[nodiscard]] result<webhook_settings> try_webhook_settings_from_json(const detail::non_deduced_t<Json>& j,
                                                                      const endpoint_policy& policy = {}) {
    if (!j.is_object()) return detail::wrong_type("", "an object", j);
    const auto* tenant = detail::json_member(j, "tenant", false);
    if (!tenant) return detail::missing_member_error("tenant");
    auto t = try_tenant_settings_from_json<Json>(*tenant, "tenant");
    if (!t) return t.error();
    const auto* hooks = detail::json_member(j, "webhooks", false);
    if (!hooks) return detail::missing_member_error("webhooks");
    auto list = try_validated_webhooks_from_json<Json>(*hooks, policy, "webhooks");
    if (!list) return list.error();
    return webhook_settings{std::move(*t), std::move(*list)};
}
template <class Json = nlohmann::json>
[[nodiscard]] webhook_settings webhook_settings_from_json(const detail::non_deduced_t<Json>& j,
                                                          const endpoint_policy& policy = {}) {
    return try_webhook_settings_from_json<Json>(j, policy).value();
}

}  // namespace keyhook
