// key_gateway's decisions, free of I/O (rule K16): which request a proxy is
// asking about, which route covers it, and the answer for an authorization.
// The program (main.cpp) adds the HTTP server, the store and the signals.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "keyhook/authorization.hpp"
#include "keyhook/http.hpp"
#include "keyhook/ip_address.hpp"
#include "keyhook/json_input.hpp"
#include "keyhook/key_policy.hpp"
#include "keyhook/members.hpp"
#include "keyhook/permissions.hpp"
#include "keyhook/result.hpp"

namespace gateway {

// Which proxy's headers carry the original request.
enum class proxy_kind { nginx, traefik };

struct original_request {
    std::string method;
    std::string uri;
    keyhook::ip_address caller;
};

// The original request. From a trusted proxy's connection only that proxy's
// header set is read (nginx: X-Original-Method, X-Original-URI, X-Real-IP;
// Traefik: X-Forwarded-Method, X-Forwarded-Uri and the rightmost
// X-Forwarded-For entry), and each header must be present exactly once. From
// any other connection no proxy header is read: the request is the one made
// to the gateway itself, from the socket's peer. Errors name the header.
inline keyhook::result<original_request> read_original(proxy_kind proxy, const keyhook::http_headers& headers,
                                                       std::string_view own_method, std::string_view own_target,
                                                       const keyhook::ip_address& peer,
                                                       const std::vector<keyhook::address_range>& trusted) {
    if (!keyhook::address_allowed(trusted, peer) || trusted.empty())
        return original_request{std::string(own_method), std::string(own_target), peer};
    const auto one = [&headers](std::string_view name) -> keyhook::result<std::string_view> {
        const keyhook::http_header* found = nullptr;
        for (const auto& h : headers) {
            if (!keyhook::header_name_equal(h.name, name)) continue;
            if (found)
                return keyhook::error{keyhook::errc::invalid_value, std::string(name),
                                      "the proxy sent this header more than once"};
            found = &h;
        }
        if (!found || found->value.empty())
            return keyhook::error{keyhook::errc::missing_member, std::string(name),
                                  "the proxy did not send this header"};
        return std::string_view(found->value);
    };
    const bool nginx = proxy == proxy_kind::nginx;
    const auto method = one(nginx ? "X-Original-Method" : "X-Forwarded-Method");
    if (!method) return method.error();
    const auto uri = one(nginx ? "X-Original-URI" : "X-Forwarded-Uri");
    if (!uri) return uri.error();
    const auto client_header = nginx ? std::string_view("X-Real-IP") : std::string_view("X-Forwarded-For");
    const auto client = one(client_header);
    if (!client) return client.error();
    std::string_view address = *client;
    if (!nginx) address = address.substr(address.rfind(',') == std::string_view::npos ? 0 : address.rfind(',') + 1);
    while (!address.empty() && (address.front() == ' ' || address.front() == '\t')) address.remove_prefix(1);
    while (!address.empty() && (address.back() == ' ' || address.back() == '\t')) address.remove_suffix(1);
    const auto caller = keyhook::try_parse_ip_address(address);
    if (!caller)
        return keyhook::error{keyhook::errc::invalid_value, std::string(client_header),
                              "the proxy's client address is not an IP address"};
    return original_request{std::string(*method), std::string(*uri), *caller};
}

// One line of the routes file: calls whose method matches (or "*") and whose
// path starts with `prefix` need `access` on `resource` in API family `family`.
struct route {
    std::string method;
    std::string prefix;
    keyhook::api_family family;
    keyhook::resource resource;
    keyhook::access_level access = keyhook::access_level::read;
};

// ---- the routes file's records, each described once by a member table
// (keyhook/members.hpp): the reader (the first fault with its JSON path),
// writer and equality come from the tables.

// A non-empty string.
struct name_form : keyhook::text_form {
    static constexpr std::string_view expected = "a non-empty string";
    static constexpr std::string_view list_expected = "an array of names";
    static std::optional<keyhook::error> from_text(const std::string& text, std::string& out) {
        if (text.empty()) return keyhook::error{keyhook::errc::invalid_value, {}, "expected a non-empty string"};
        out = text;
        return std::nullopt;
    }
};

// An access level a route or grant may name: read, execute, write or admin.
struct access_form {
    static constexpr keyhook::form_kind kind = keyhook::form_kind::string;
    static constexpr bool keeps_text = false;
    static constexpr std::string_view expected = "a non-empty string";
    static std::optional<keyhook::error> from_text(const std::string& text, keyhook::access_level& out) {
        for (const auto l : {keyhook::access_level::read, keyhook::access_level::execute, keyhook::access_level::write,
                             keyhook::access_level::admin})
            if (keyhook::to_string(l) == text) {
                out = l;
                return std::nullopt;
            }
        return keyhook::error{
            keyhook::errc::invalid_value, {}, "expected \"read\", \"execute\", \"write\" or \"admin\""};
    }
    static std::string write(keyhook::access_level l) { return std::string(keyhook::to_string(l)); }
    static std::size_t heap_bytes(keyhook::access_level) noexcept { return 0; }
};

// A route as the file gives it: {"method", "prefix", "family", "access",
// "folder"?, "service"?}; no other member.
struct route_entry {
    std::string method;
    std::string prefix;
    std::string family;
    keyhook::access_level access = keyhook::access_level::read;
    std::optional<std::string> folder;
    std::optional<std::string> service;
};

// A grant of a group on a folder, a service or (without "folder") everything:
// {"folder"?, "service"?, "level"}; no other member.
struct access_entry {
    std::optional<std::string> folder;
    std::optional<std::string> service;
    keyhook::access_level level = keyhook::access_level::read;
};

// A group: {"access": [access entries]?, "families": [names]?}; no other member.
struct group_entry {
    std::vector<access_entry> access;
    std::vector<std::string> families;
};

// "service" needs "folder" (a route's or an access entry's).
template <class Entry>
std::optional<keyhook::error> service_needs_folder(const Entry& e, const std::string& path) {
    if (e.service && !e.folder)
        return keyhook::error{keyhook::errc::invalid_value, keyhook::json_path_member(path, "service"),
                              "a service needs its folder"};
    return std::nullopt;
}

}  // namespace gateway

template <>
struct keyhook::members_of<gateway::route_entry> {
    using r = gateway::route_entry;
    static constexpr bool closed = true;
    static constexpr auto rows = make_rows(row<gateway::name_form>("method", &r::method, presence::required),
                                           row<gateway::name_form>("prefix", &r::prefix, presence::required),
                                           row<gateway::name_form>("family", &r::family, presence::required),
                                           row<gateway::access_form>("access", &r::access, presence::required),
                                           row<gateway::name_form>("folder", &r::folder, presence::omitted),
                                           row<gateway::name_form>("service", &r::service, presence::omitted));
    static std::optional<keyhook::error> check(const r& e, const std::string& path) {
        if (e.prefix.front() != '/')
            return keyhook::error{keyhook::errc::invalid_value, keyhook::json_path_member(path, "prefix"),
                                  "expected a path starting with '/'"};
        return gateway::service_needs_folder(e, path);
    }
};
static_assert(keyhook::members_complete<gateway::route_entry>());

template <>
struct keyhook::members_of<gateway::access_entry> {
    using a = gateway::access_entry;
    static constexpr bool closed = true;
    static constexpr auto rows = make_rows(row<gateway::name_form>("folder", &a::folder, presence::omitted),
                                           row<gateway::name_form>("service", &a::service, presence::omitted),
                                           row<gateway::access_form>("level", &a::level, presence::required));
    static std::optional<keyhook::error> check(const a& e, const std::string& path) {
        return gateway::service_needs_folder(e, path);
    }
};
static_assert(keyhook::members_complete<gateway::access_entry>());

template <>
struct keyhook::members_of<gateway::group_entry> {
    using g = gateway::group_entry;
    static constexpr bool closed = true;
    static constexpr auto rows =
        make_rows(row<list_form<record_form<gateway::access_entry>>>("access", &g::access, presence::omitted),
                  row<list_form<gateway::name_form>>("families", &g::families, presence::omitted));
};
static_assert(keyhook::members_complete<gateway::group_entry>());

namespace gateway {

// The strict reader's limits for the routes file: 1 MiB, 8 levels.
inline keyhook::result<nlohmann::json> parse_routes_file(std::string_view text) {
    return keyhook::try_parse_json(text, keyhook::json_limits{std::size_t{1} << 20, 8, 4, std::size_t{1} << 20});
}

// The resource an entry names: a service of a folder, a folder, or all.
template <class Entry>
keyhook::resource resource_of(const Entry& e) {
    if (e.service) return keyhook::resource::service(*e.folder, *e.service);
    if (e.folder) return keyhook::resource::folder(*e.folder);
    return keyhook::resource::all();
}

// Reads {"routes": [{"method", "prefix", "family", "access", "folder"?, "service"?}]}.
// A route without "folder" covers all resources; "service" needs "folder".
// Errors name the member, e.g. routes[2].access.
inline keyhook::result<std::vector<route>> parse_routes(std::string_view text) {
    auto doc = parse_routes_file(text);
    if (!doc) return doc.error();
    const auto list = doc->is_object() ? doc->find("routes") : doc->end();
    if (!doc->is_object() || list == doc->end())
        return keyhook::error{keyhook::errc::invalid_value, "routes", "expected an object with an array \"routes\""};
    std::vector<route_entry> entries;
    if (auto e = keyhook::list_form<keyhook::record_form<route_entry>>::read(*list, "routes", entries)) return *e;
    std::vector<route> out;
    for (auto& e : entries) {
        for (auto& c : e.method)
            if (c >= 'a' && c <= 'z') c = static_cast<char>(c - 32);
        out.push_back(route{std::move(e.method), std::move(e.prefix), keyhook::api_family(std::move(e.family)),
                            resource_of(e), e.access});
    }
    return out;
}

// The tenant's permission model (K9) from the routes file's optional
// "groups" member: {"groups": {"user:pf": {"access": [{"level": "read"},
// {"folder": "Finance", "service"?: "report", "level": "write"}],
// "families": ["Reports"]}}}. An access entry without "folder" grants on all
// folders and services. Without "groups" no group grants anything (every
// known key gets 403). Errors name the member, e.g. groups["user:pf"].access[0].level.
inline keyhook::result<keyhook::permission_policy> parse_groups(std::string_view text) {
    auto doc = parse_routes_file(text);
    if (!doc) return doc.error();
    keyhook::permission_policy policy;
    if (!doc->is_object() || !doc->contains("groups")) return policy;
    const auto& groups = (*doc)["groups"];
    if (!groups.is_object())
        return keyhook::error{keyhook::errc::invalid_value, "groups", "expected an object from group name to grant"};
    for (auto g = groups.begin(); g != groups.end(); ++g) {
        auto entry = keyhook::try_read_record<group_entry>(g.value(), "groups[\"" + g.key() + "\"]");
        if (!entry) return entry.error();
        keyhook::group_grant grant;
        for (const auto& a : entry->access) grant.access[resource_of(a)] = a.level;
        for (auto& f : entry->families) grant.families.insert(keyhook::api_family(std::move(f)));
        policy.groups[g.key()] = std::move(grant);
    }
    return policy;
}

// The path of a request target without its query, in one spelling: escapes
// of unreserved letters, digits, '-', '_' and '~' decoded (RFC 3986 makes
// them equivalent), other escapes kept with upper-case hex. nullopt for a
// target the service behind the proxy might read as another path: a '#', a
// '.' or '..' segment, an empty segment ("//", which proxies merge), a ';'
// (path parameters, which some servers read as part of a dot segment), a
// '\', an escaped '/', '\', '.', '%' or ';', a byte outside printable ASCII,
// or a path that is not absolute.
inline std::optional<std::string> plain_path(std::string_view target) {
    if (target.find('#') != std::string_view::npos) return std::nullopt;
    const auto path = target.substr(0, target.find('?'));
    if (path.empty() || path.front() != '/') return std::nullopt;
    const auto hex = [](char c) -> int {
        if (c >= '0' && c <= '9') return c - '0';
        if (c >= 'a' && c <= 'f') return c - 'a' + 10;
        if (c >= 'A' && c <= 'F') return c - 'A' + 10;
        return -1;
    };
    std::string out;
    out.reserve(path.size());
    for (std::size_t i = 0; i < path.size(); ++i) {
        const auto c = static_cast<unsigned char>(path[i]);
        if (c <= 0x20 || c >= 0x7f || c == '\\' || c == ';') return std::nullopt;
        if (c != '%') {
            out += static_cast<char>(c);
            continue;
        }
        if (i + 2 >= path.size()) return std::nullopt;
        const int hi = hex(path[i + 1]), lo = hex(path[i + 2]);
        if (hi < 0 || lo < 0) return std::nullopt;
        const auto decoded = static_cast<char>(hi * 16 + lo);
        i += 2;
        const bool unreserved = (decoded >= 'a' && decoded <= 'z') || (decoded >= 'A' && decoded <= 'Z') ||
                                (decoded >= '0' && decoded <= '9') || decoded == '-' || decoded == '_' ||
                                decoded == '~';
        if (unreserved) {
            out += decoded;
            continue;
        }
        if (decoded == '/' || decoded == '\\' || decoded == '.' || decoded == '%' || decoded == ';')
            return std::nullopt;
        static constexpr char digits[] = "0123456789ABCDEF";
        out += '%';
        out += digits[hi];
        out += digits[lo];
    }
    std::size_t start = 1;
    while (start <= out.size()) {
        const auto end = std::min(out.find('/', start), out.size());
        const auto segment = std::string_view(out).substr(start, end - start);
        if (segment == "." || segment == "..") return std::nullopt;
        if (segment.empty() && end != out.size()) return std::nullopt;
        start = end + 1;
    }
    return out;
}

inline bool iequal_prefix(std::string_view text, std::string_view prefix) {
    if (text.size() < prefix.size()) return false;
    for (std::size_t i = 0; i < prefix.size(); ++i) {
        const auto lower = [](char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c + 32) : c; };
        if (lower(text[i]) != lower(prefix[i])) return false;
    }
    return true;
}

// The route covering a request: the longest prefix that matches, compared
// without regard to ASCII case (a service may not distinguish /api/Finance from
// /api/finance); at equal length a route of the method beats "*". The method
// is compared in upper case, and HEAD is judged as GET (servers answer HEAD
// with their GET handler). nullptr when none matches (the gateway answers 403).
inline const route* match_route(const std::vector<route>& routes, std::string_view method, std::string_view target) {
    const auto path = plain_path(target);
    if (!path) return nullptr;
    std::string m(method);
    for (auto& c : m)
        if (c >= 'a' && c <= 'z') c = static_cast<char>(c - 32);
    if (m == "HEAD") m = "GET";
    const route* best = nullptr;
    for (const auto& r : routes) {
        const bool any = r.method == "*";
        if (!any && r.method != m) continue;
        if (!iequal_prefix(*path, r.prefix)) continue;
        if (!best || r.prefix.size() > best->prefix.size() ||
            (r.prefix.size() == best->prefix.size() && best->method == "*" && !any))
            best = &r;
    }
    return best;
}

// An API family no key can be granted (names come from the platform's
// features): a request no route covers is checked against it, so the key's
// own checks still answer first (K15: 401 before any route) and the rest is 403.
inline const keyhook::api_family& no_route_family() {
    static const keyhook::api_family f(std::string("\x01no route"));
    return f;
}

// ---- O2: the gateway's codes. Every answer has exactly one, in the
// x-keyhook-code header and in its JSON body {"code", "message"}; the status
// and the message follow from the code alone (one row each below), so two
// answers of one code differ in nothing but the figures a VALID or a
// RATE_LIMITED / USAGE_EXCEEDED answer carries.
enum class code {
    valid,
    not_found,
    revoked,
    expired,
    not_yet_active,
    address_not_allowed,
    forbidden,
    rate_limited,
    usage_exceeded,
    unavailable,
};

struct code_row {
    code value;
    std::string_view name;     // x-keyhook-code
    int status;                // the HTTP status
    std::string_view message;  // fixed text: printable ASCII without '"' or '\\' (nginx puts it in JSON as it is)
};

// In `code`'s order (checked below).
inline constexpr code_row code_rows[] = {
    {code::valid, "VALID", 200, "the key allows this call"},
    {code::not_found, "NOT_FOUND", 401,
     "no key of the tenant matches: send one x-synthetic-key and one x-tenant-name header"},
    {code::revoked, "REVOKED", 403, "the key has been deactivated"},
    {code::expired, "EXPIRED", 403, "the key has expired"},
    {code::not_yet_active, "NOT_YET_ACTIVE", 403, "the key is not active yet"},
    {code::address_not_allowed, "ADDRESS_NOT_ALLOWED", 403, "the key may not be used from this address"},
    {code::forbidden, "FORBIDDEN", 403, "the key does not allow this call"},
    {code::rate_limited, "RATE_LIMITED", 429, "the key's rate limit is reached; retry later"},
    {code::usage_exceeded, "USAGE_EXCEEDED", 429, "the key's usage credits are spent"},
    {code::unavailable, "UNAVAILABLE", 503, "the key store cannot be read; retry later"},
};

constexpr bool code_rows_in_order() {
    for (std::size_t i = 0; i < sizeof(code_rows) / sizeof(code_rows[0]); ++i)
        if (static_cast<std::size_t>(code_rows[i].value) != i) return false;
    return sizeof(code_rows) / sizeof(code_rows[0]) == static_cast<std::size_t>(code::unavailable) + 1;
}
static_assert(code_rows_in_order(), "one row per code, in the enum's order");

constexpr const code_row& row_of(code c) { return code_rows[static_cast<std::size_t>(c)]; }

// The library's verdict to a code: the first row whose reason (nullopt:
// allowed) and, for not_active, the key's status match. K16: every header
// and key problem, a key of another tenant included, is one code.
struct verdict_row {
    std::optional<keyhook::denial_reason> reason;
    std::optional<keyhook::key_status> status;  // nullopt: any
    code value;
};

inline constexpr verdict_row verdict_rows[] = {
    {std::nullopt, std::nullopt, code::valid},
    {keyhook::denial_reason::missing_key, std::nullopt, code::not_found},
    {keyhook::denial_reason::conflicting_key, std::nullopt, code::not_found},
    {keyhook::denial_reason::missing_tenant, std::nullopt, code::not_found},
    {keyhook::denial_reason::conflicting_tenant, std::nullopt, code::not_found},
    {keyhook::denial_reason::unknown_key, std::nullopt, code::not_found},
    {keyhook::denial_reason::wrong_tenant, std::nullopt, code::not_found},
    {keyhook::denial_reason::not_active, keyhook::key_status::revoked, code::revoked},
    {keyhook::denial_reason::not_active, keyhook::key_status::expired, code::expired},
    {keyhook::denial_reason::not_active, keyhook::key_status::active_in_future, code::not_yet_active},
    {keyhook::denial_reason::address_not_allowed, std::nullopt, code::address_not_allowed},
    {keyhook::denial_reason::family_not_allowed, std::nullopt, code::forbidden},
    {keyhook::denial_reason::insufficient_access, std::nullopt, code::forbidden},
    {keyhook::denial_reason::rate_limited, std::nullopt, code::rate_limited},
    {keyhook::denial_reason::usage_exceeded, std::nullopt, code::usage_exceeded},
};

// The code of an authorization. A verdict no row names (none today; the
// tests check every reason and status) is FORBIDDEN: the gateway fails closed.
inline code code_of(const keyhook::authorization& a) {
    for (const auto& r : verdict_rows)
        if (r.reason == a.reason() && (!r.status || *r.status == a.status())) return r.value;
    return code::forbidden;
}

struct answer {
    code value = code::unavailable;
    int status = 503;
    keyhook::http_headers headers;
    std::string body;
};

// Who an allowed call is, for the service behind the proxy (O2): the key's
// name and tenant as the store holds them.
struct key_identity {
    std::string_view name;
    std::string_view tenant;
};

// An answer of code `c` without figures: its status, x-keyhook-code,
// x-keyhook-message (for the proxy, which cannot read a body: nginx builds the
// client's body from the two headers) and the JSON body
// {"code":"...","message":"..."} and a newline.
inline answer answer_of(code c) {
    const auto& row = row_of(c);
    answer out;
    out.value = c;
    out.status = row.status;
    out.headers.push_back({"x-keyhook-code", std::string(row.name), false});
    out.headers.push_back({"x-keyhook-message", std::string(row.message), false});
    out.headers.push_back({"Content-Type", "application/json", false});
    out.body.reserve(32 + row.name.size() + row.message.size());
    out.body.append("{\"code\":\"").append(row.name).append("\",\"message\":\"").append(row.message).append("\"}\n");
    return out;
}

// K16 and O2's answer: the code's status, headers and body; on VALID the
// key's id, and with `who` its name and tenant percent-encoded (RFC 3986:
// every byte but A-Z a-z 0-9 - . _ ~ as %XX, so any name is one ASCII header
// value), RateLimit-Remaining and RateLimit-Reset (seconds) for a key with a
// rate limit, x-credits-remaining for a key with credits (left out when the
// key has no credit limit); on RATE_LIMITED and USAGE_EXCEEDED, Retry-After in
// whole seconds rounded up where a retry time exists. NOT_FOUND answers are
// alike byte for byte, whatever the reason (a key of another tenant looks
// like an unknown one). No answer carries a key.
// The figures an answer carries besides its code (answer_for).
struct answer_figures {
    std::optional<std::uint64_t> rate_remaining;
    std::optional<keyhook::timestamp> rate_reset;
    std::optional<std::uint64_t> credits_remaining;
    std::optional<keyhook::timestamp> retry_at;
};

inline answer answer_for(code c, std::string_view key_id, const key_identity* who, const answer_figures& f,
                         keyhook::timestamp now) {
    const auto seconds_until = [now](keyhook::timestamp t) {
        const auto us = (t - now).count();
        return std::to_string(us <= 0 ? 0 : (us + 999999) / 1000000);
    };
    auto out = answer_of(c);
    if (out.value == code::valid) {
        out.headers.push_back({"x-key-id", std::string(key_id), false});
        if (who) {
            out.headers.push_back({"x-key-name", keyhook::percent_encode(who->name), false});
            out.headers.push_back({"x-tenant", keyhook::percent_encode(who->tenant), false});
        }
        if (f.rate_remaining && f.rate_reset) {
            out.headers.push_back({"RateLimit-Remaining", std::to_string(*f.rate_remaining), false});
            out.headers.push_back({"RateLimit-Reset", seconds_until(*f.rate_reset), false});
        }
        if (f.credits_remaining)
            out.headers.push_back({"x-credits-remaining", std::to_string(*f.credits_remaining), false});
    } else if (out.value == code::rate_limited || out.value == code::usage_exceeded) {
        if (f.retry_at) out.headers.push_back({"Retry-After", seconds_until(*f.retry_at), false});
    }
    return out;
}

inline answer answer_for(const keyhook::authorization& a, keyhook::timestamp now, const key_identity* who = nullptr) {
    const auto c = code_of(a);
    const std::string id = c == code::valid && a.key() ? a.key()->str() : std::string();
    return answer_for(c, id, who,
                      answer_figures{a.rate_remaining(), a.rate_reset(), a.credits_remaining(), a.retry_at()}, now);
}

// The answer to a call whose other checks passed and whose limits were
// decided elsewhere (K17: by the database, whose clock is `now`): VALID,
// RATE_LIMITED or USAGE_EXCEEDED with the same headers as answer_for's.
inline answer answer_for_limits(const keyhook::limits_decision& d, std::string_view key_id, const key_identity* who,
                                keyhook::timestamp now) {
    const auto c = !d.reason                                             ? code::valid
                   : *d.reason == keyhook::denial_reason::rate_limited   ? code::rate_limited
                   : *d.reason == keyhook::denial_reason::usage_exceeded ? code::usage_exceeded
                                                                         : code::forbidden;  // fails closed
    return answer_for(c, key_id, who, answer_figures{d.rate_remaining, d.rate_reset, d.credits_remaining, d.retry_at},
                      now);
}

// K17's refusal of a stale gateway: UNAVAILABLE, 503 (fails closed) while
// the store has not been read for longer than the stale period. Retry-After:
// 1, as the store is checked several times a second.
inline answer unavailable_answer() {
    auto out = answer_of(code::unavailable);
    out.headers.push_back({"Retry-After", "1", false});
    return out;
}

}  // namespace gateway
