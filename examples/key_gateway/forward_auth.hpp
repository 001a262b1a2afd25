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

// Reads {"routes": [{"method", "prefix", "family", "access", "folder"?, "service"?}]}.
// A route without "folder" covers all resources; "service" needs "folder".
// Errors name the member, e.g. routes[2].access.
inline keyhook::result<std::vector<route>> parse_routes(std::string_view text) {
    auto doc = keyhook::try_parse_json(text, keyhook::json_limits{std::size_t{1} << 20, 8, 4, std::size_t{1} << 20});
    if (!doc) return doc.error();
    const auto bad = [](std::string path, std::string why) {
        return keyhook::error{keyhook::errc::invalid_value, std::move(path), std::move(why)};
    };
    if (!doc->is_object() || !doc->contains("routes") || !(*doc)["routes"].is_array())
        return bad("routes", "expected an object with an array \"routes\"");
    std::vector<route> out;
    const auto& list = (*doc)["routes"];
    for (std::size_t i = 0; i < list.size(); ++i) {
        const auto& r = list[i];
        const std::string at = "routes[" + std::to_string(i) + "]";
        if (!r.is_object()) return bad(at, "expected an object");
        const auto text_member = [&](const char* name, bool required) -> keyhook::result<std::optional<std::string>> {
            if (!r.contains(name)) {
                if (required) return keyhook::error{keyhook::errc::missing_member, at + "." + name, "is required"};
                return std::optional<std::string>();
            }
            if (!r[name].is_string() || r[name].get_ref<const std::string&>().empty())
                return bad(at + "." + name, "expected a non-empty string");
            return std::optional<std::string>(r[name].get<std::string>());
        };
        route out_route;
        for (const auto& [name, target] : {std::pair<const char*, std::string*>{"method", &out_route.method},
                                           std::pair<const char*, std::string*>{"prefix", &out_route.prefix}}) {
            auto v = text_member(name, true);
            if (!v) return v.error();
            *target = **v;
        }
        if (out_route.prefix.front() != '/') return bad(at + ".prefix", "expected a path starting with '/'");
        for (auto& c : out_route.method)
            if (c >= 'a' && c <= 'z') c = static_cast<char>(c - 32);
        auto family = text_member("family", true);
        if (!family) return family.error();
        out_route.family = keyhook::api_family(**family);
        auto access = text_member("access", true);
        if (!access) return access.error();
        std::optional<keyhook::access_level> level;
        for (const auto l : {keyhook::access_level::read, keyhook::access_level::execute, keyhook::access_level::write,
                             keyhook::access_level::admin})
            if (keyhook::to_string(l) == **access) level = l;
        if (!level) return bad(at + ".access", "expected \"read\", \"execute\", \"write\" or \"admin\"");
        out_route.access = *level;
        auto folder = text_member("folder", false);
        if (!folder) return folder.error();
        auto service = text_member("service", false);
        if (!service) return service.error();
        if (*service && !*folder) return bad(at + ".service", "a service needs its folder");
        if (*service)
            out_route.resource = keyhook::resource::service(**folder, **service);
        else if (*folder)
            out_route.resource = keyhook::resource::folder(**folder);
        for (const auto& item : r.items())
            if (item.key() != "method" && item.key() != "prefix" && item.key() != "family" && item.key() != "access" &&
                item.key() != "folder" && item.key() != "service")
                return bad(at + "." + item.key(), "is not a member of a route");
        out.push_back(std::move(out_route));
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
    auto doc = keyhook::try_parse_json(text, keyhook::json_limits{std::size_t{1} << 20, 8, 4, std::size_t{1} << 20});
    if (!doc) return doc.error();
    const auto bad = [](std::string path, std::string why) {
        return keyhook::error{keyhook::errc::invalid_value, std::move(path), std::move(why)};
    };
    keyhook::permission_policy policy;
    if (!doc->is_object() || !doc->contains("groups")) return policy;
    const auto& groups = (*doc)["groups"];
    if (!groups.is_object()) return bad("groups", "expected an object from group name to grant");
    for (const auto& g : groups.items()) {
        const std::string at = "groups[\"" + g.key() + "\"]";
        if (!g.value().is_object()) return bad(at, "expected an object");
        keyhook::group_grant grant;
        for (const auto& member : g.value().items()) {
            if (member.key() == "access") {
                if (!member.value().is_array()) return bad(at + ".access", "expected an array");
                std::size_t i = 0;
                for (const auto& a : member.value()) {
                    const std::string where = at + ".access[" + std::to_string(i++) + "]";
                    if (!a.is_object()) return bad(where, "expected an object");
                    std::string folder, service, level_text;
                    for (const auto& f : a.items()) {
                        std::string* target = f.key() == "folder"    ? &folder
                                              : f.key() == "service" ? &service
                                              : f.key() == "level"   ? &level_text
                                                                     : nullptr;
                        if (!target) return bad(where + "." + f.key(), "is not a member of an access entry");
                        if (!f.value().is_string() || f.value().get_ref<const std::string&>().empty())
                            return bad(where + "." + f.key(), "expected a non-empty string");
                        *target = f.value().get<std::string>();
                    }
                    std::optional<keyhook::access_level> level;
                    for (const auto l : {keyhook::access_level::read, keyhook::access_level::execute,
                                         keyhook::access_level::write, keyhook::access_level::admin})
                        if (keyhook::to_string(l) == level_text) level = l;
                    if (!level) return bad(where + ".level", "expected \"read\", \"execute\", \"write\" or \"admin\"");
                    if (!service.empty() && folder.empty())
                        return bad(where + ".service", "a service needs its folder");
                    const auto r = !service.empty()  ? keyhook::resource::service(folder, service)
                                   : !folder.empty() ? keyhook::resource::folder(folder)
                                                     : keyhook::resource::all();
                    grant.access[r] = *level;
                }
            } else if (member.key() == "families") {
                if (!member.value().is_array()) return bad(at + ".families", "expected an array of names");
                std::size_t i = 0;
                for (const auto& f : member.value()) {
                    if (!f.is_string() || f.get_ref<const std::string&>().empty())
                        return bad(at + ".families[" + std::to_string(i) + "]", "expected a non-empty string");
                    grant.families.insert(keyhook::api_family(f.get<std::string>()));
                    ++i;
                }
            } else {
                return bad(at + "." + member.key(), "is not a member of a group (\"access\", \"families\")");
            }
        }
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

struct answer {
    int status = 500;
    keyhook::http_headers headers;
    std::string body;
};

// K16's answer: 200 with x-key-id (and the rate and credit figures the key
// has), 401 for header and key problems (a key of another tenant answers
// exactly as an unknown one), 403 for status, address, family, access or a
// request no route covers, 429 for rate and credits with Retry-After in whole
// seconds rounded up where a retry time exists. No answer carries a key.
inline answer answer_for(const keyhook::authorization& a, keyhook::timestamp now) {
    using keyhook::denial_reason;
    answer out;
    const auto seconds_until = [now](keyhook::timestamp t) {
        const auto us = (t - now).count();
        return std::to_string(us <= 0 ? 0 : (us + 999999) / 1000000);
    };
    if (a.allowed()) {
        out.status = 200;
        out.headers.push_back({"x-key-id", a.key() ? a.key()->str() : std::string(), false});
        if (const auto left = a.rate_remaining()) {
            out.headers.push_back({"RateLimit-Remaining", std::to_string(*left), false});
            out.headers.push_back({"RateLimit-Reset", seconds_until(*a.rate_reset()), false});
        }
        if (const auto credits = a.credits_remaining())
            out.headers.push_back({"x-credits-remaining", std::to_string(*credits), false});
        return out;
    }
    switch (*a.reason()) {
        case denial_reason::missing_key:
        case denial_reason::conflicting_key:
        case denial_reason::missing_tenant:
        case denial_reason::conflicting_tenant:
        case denial_reason::unknown_key:
        case denial_reason::wrong_tenant:
            out.status = 401;
            out.body = "unauthorized\n";
            break;
        case denial_reason::not_active:
        case denial_reason::address_not_allowed:
        case denial_reason::family_not_allowed:
        case denial_reason::insufficient_access:
            out.status = 403;
            out.body = "forbidden\n";
            break;
        case denial_reason::rate_limited:
        case denial_reason::usage_exceeded:
            out.status = 429;
            out.body = *a.reason() == denial_reason::rate_limited ? "rate limited\n" : "usage exceeded\n";
            if (const auto retry = a.retry_at()) out.headers.push_back({"Retry-After", seconds_until(*retry), false});
            break;
    }
    return out;
}

// K17's refusal of a stale gateway: 503 (fails closed) while the store has
// not been read for longer than the stale period. Retry-After: 1, as the
// store is checked several times a second.
inline answer unavailable_answer() {
    answer out;
    out.status = 503;
    out.headers.push_back({"Retry-After", "1", false});
    out.body = "key store unavailable\n";
    return out;
}

}  // namespace gateway
