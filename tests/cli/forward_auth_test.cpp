// key_gateway's decisions (examples/key_gateway/forward_auth.hpp): K16's
// answers, the proxy headers it trusts, and the routes.
#include <catch2/catch.hpp>

#include <algorithm>
#include <functional>
#include <iterator>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "forward_auth.hpp"
#include "keyhook/creation.hpp"
#include "keyhook/key_index.hpp"
#include "../lifecycle/helpers.hpp"

using namespace keyhook;

namespace {

const http_header* header(const gateway::answer& a, std::string_view name) {
    for (const auto& h : a.headers)
        if (header_name_equal(h.name, name)) return &h;
    return nullptr;
}

const std::vector<address_range> proxies{parse_address_range("127.0.0.1/32")};
const ip_address proxy_peer = parse_ip_address("127.0.0.1");
const ip_address stranger = parse_ip_address("198.51.100.9");

}  // namespace

TEST_CASE("K16: nginx's header set is read from a trusted proxy only, each header exactly once", "[K16][gateway]") {
    const http_headers from_nginx{{"X-Original-Method", "GET", false},
                                  {"X-Original-URI", "/api/reports?x=1", false},
                                  {"X-Real-IP", "203.0.113.7", false},
                                  {"X-Forwarded-For", "10.9.9.9", false},
                                  {"X-Forwarded-Method", "DELETE", false}};
    auto r = gateway::read_original(gateway::proxy_kind::nginx, from_nginx, "GET", "/auth", proxy_peer, proxies);
    REQUIRE(r);
    CHECK(r->method == "GET");
    CHECK(r->uri == "/api/reports?x=1");
    CHECK(r->caller == parse_ip_address("203.0.113.7"));

    // The same headers from a peer that is not a trusted proxy change nothing.
    r = gateway::read_original(gateway::proxy_kind::nginx, from_nginx, "GET", "/auth", stranger, proxies);
    REQUIRE(r);
    CHECK(r->method == "GET");
    CHECK(r->uri == "/auth");
    CHECK(r->caller == stranger);
    // No trusted proxy configured: nobody's headers are read.
    r = gateway::read_original(gateway::proxy_kind::nginx, from_nginx, "POST", "/x", proxy_peer, {});
    REQUIRE(r);
    CHECK(r->caller == proxy_peer);
    CHECK(r->method == "POST");

    // Missing or repeated: refused, naming the header.
    auto missing = from_nginx;
    missing.erase(missing.begin() + 2);
    const auto m = gateway::read_original(gateway::proxy_kind::nginx, missing, "GET", "/", proxy_peer, proxies);
    REQUIRE_FALSE(m);
    CHECK(m.error().path == "X-Real-IP");
    auto repeated = from_nginx;
    repeated.push_back({"x-original-uri", "/api/reports?x=1", false});
    const auto rep = gateway::read_original(gateway::proxy_kind::nginx, repeated, "GET", "/", proxy_peer, proxies);
    REQUIRE_FALSE(rep);
    CHECK(rep.error().path == "X-Original-URI");
    auto not_ip = from_nginx;
    not_ip[2].value = "203.0.113.7:5000";
    CHECK_FALSE(gateway::read_original(gateway::proxy_kind::nginx, not_ip, "GET", "/", proxy_peer, proxies));
}

TEST_CASE("K16: Traefik's header set, with the rightmost X-Forwarded-For entry", "[K16][gateway]") {
    const http_headers from_traefik{{"X-Forwarded-Method", "POST", false},
                                    {"X-Forwarded-Uri", "/api/run", false},
                                    {"X-Forwarded-For", "1.2.3.4, 10.0.0.1,  203.0.113.8 ", false},
                                    {"X-Original-Method", "GET", false},
                                    {"X-Real-IP", "9.9.9.9", false}};
    const auto r = gateway::read_original(gateway::proxy_kind::traefik, from_traefik, "GET", "/", proxy_peer, proxies);
    REQUIRE(r);
    CHECK(r->method == "POST");
    CHECK(r->uri == "/api/run");
    CHECK(r->caller == parse_ip_address("203.0.113.8"));
    auto no_for = from_traefik;
    no_for.erase(no_for.begin() + 2);
    const auto e = gateway::read_original(gateway::proxy_kind::traefik, no_for, "GET", "/", proxy_peer, proxies);
    REQUIRE_FALSE(e);
    CHECK(e.error().path == "X-Forwarded-For");
}

TEST_CASE("K16: routes: longest prefix, method or *, no way around a prefix by path tricks", "[K16][gateway]") {
    const auto routes = gateway::parse_routes(R"({"routes": [
        {"method": "*", "prefix": "/api/", "family": "Execute", "access": "read"},
        {"method": "POST", "prefix": "/api/finance/", "family": "Execute", "access": "write", "folder": "Finance"},
        {"method": "GET", "prefix": "/api/finance/report/", "family": "Reports", "access": "read",
         "folder": "Finance", "service": "report"}]})");
    REQUIRE(routes);
    REQUIRE(routes->size() == 3);
    const auto* r = gateway::match_route(*routes, "POST", "/api/finance/x?y=1");
    REQUIRE(r);
    CHECK(r->access == access_level::write);
    CHECK(r->resource == resource::folder("Finance"));
    CHECK(gateway::match_route(*routes, "GET", "/api/finance/x") == &(*routes)[0]);
    CHECK(gateway::match_route(*routes, "GET", "/api/finance/report/1")->family == api_family("Reports"));
    CHECK(gateway::match_route(*routes, "GET", "/other") == nullptr);
    CHECK(gateway::match_route(*routes, "GET", "/api") == nullptr);  // the prefix is "/api/"
    for (const char* trick :
         {"/api/x/../finance/y", "/api/./finance", "/api/%2e%2e/admin", "/api/a%2Fb", "/api\\finance", "api/x", "",
          "/api/%2E/x", "/api/a%5cb", "/api//finance/x", "/api/x/..;/finance/y", "/api/x#/../finance/y",
          "/api/%252e%252e/finance", "/api/\xef\xbc\x8e\xef\xbc\x8e/finance", "/api/a%2", "/api/a%zz", "/api/a b"}) {
        INFO(trick);
        CHECK(gateway::match_route(*routes, "GET", trick) == nullptr);
    }
    CHECK(gateway::match_route(*routes, "GET", "/api/..x/ok") != nullptr);  // not a dot segment
    // One spelling: escaped letters, ASCII case, the method's case; HEAD is judged as GET.
    CHECK(gateway::match_route(*routes, "POST", "/api/%66inance/x")->access == access_level::write);
    CHECK(gateway::match_route(*routes, "POST", "/api/FINANCE/x")->access == access_level::write);
    CHECK(gateway::match_route(*routes, "post", "/api/finance/x")->access == access_level::write);
    CHECK(gateway::match_route(*routes, "HEAD", "/api/finance/report/1")->family == api_family("Reports"));
    CHECK(gateway::match_route(*routes, "GET", "/api/a%20b") == &(*routes)[0]);  // other escapes are kept
    CHECK(gateway::plain_path("/api/a%2fb") == std::nullopt);
    CHECK(gateway::plain_path("/api/a%7eb%20c?q=%2F") == std::string("/api/a~b%20c"));
}

TEST_CASE("K16: at one prefix length a route of the method beats *", "[K16][gateway]") {
    for (const char* text : {R"({"routes": [{"method": "*", "prefix": "/f/", "family": "Execute", "access": "read"},
                         {"method": "POST", "prefix": "/f/", "family": "Execute", "access": "write"}]})",
                             R"({"routes": [{"method": "POST", "prefix": "/f/", "family": "Execute", "access": "write"},
                         {"method": "*", "prefix": "/f/", "family": "Execute", "access": "read"}]})"}) {
        const auto routes = gateway::parse_routes(text);
        REQUIRE(routes);
        CHECK(gateway::match_route(*routes, "POST", "/f/pay")->access == access_level::write);
        CHECK(gateway::match_route(*routes, "GET", "/f/pay")->access == access_level::read);
    }
}

TEST_CASE("K16: a malformed routes file names the member", "[K16][gateway]") {
    const auto check = [](const char* text, const char* path) {
        const auto r = gateway::parse_routes(text);
        INFO(text);
        REQUIRE_FALSE(r);
        CHECK(r.error().path == path);
    };
    check(R"({"routes": [{"method": "GET", "prefix": "/a", "family": "Execute", "access": "root"}]})",
          "routes[0].access");
    check(R"({"routes": [{"method": "GET", "prefix": "a", "family": "Execute", "access": "read"}]})",
          "routes[0].prefix");
    check(
        R"({"routes": [{"method": "GET", "prefix": "/a", "family": "Execute", "access": "read"}, {"method": "GET"}]})",
        "routes[1].prefix");
    check(R"({"routes": [{"method": "GET", "prefix": "/a", "family": "E", "access": "read", "service": "s"}]})",
          "routes[0].service");
    check(R"({"routes": [{"method": "GET", "prefix": "/a", "family": "E", "access": "read", "extra": 1}]})",
          "routes[0].extra");
    check(R"({"routes": [{"method": "GET", "method": "PUT", "prefix": "/a", "family": "E", "access": "read"}]})",
          "routes[0].method");
    check(R"({"routes": {}})", "routes");
    check(R"([])", "routes");
}

namespace {

// A key of "acme" with a rate limit of 1 a second and 1 credit, and one of "globex".
struct gateway_fixture {
    test_support::seeded_random random{5};
    key_index index{random};
    std::string key, other_key;
    api_key record;
    std::map<std::string, key_limits, std::less<>> limits;
    timestamp now = test_support::at("2024-03-15T00:00:00Z");

    gateway_fixture() {
        permission_policy p;
        p.groups["user:pf"].access[resource::all()] = access_level::read;
        const auto request = test_support::request();
        auto created = create_key(request, tenant_kind::restricted, random, request.active_from);
        record = created.record;
        key = created.key.take()->reveal();
        index.add("acme", record, secret(key), p);
        auto other = create_key(request, tenant_kind::restricted, random, request.active_from);
        other_key = other.key.take()->reveal();
        index.add("globex", other.record, secret(other_key), p);
        key_policy policy;
        policy.rate = rate_limit{1, std::chrono::seconds{1}, 0};
        policy.limited_credits = true;
        policy.initial_credits = 1;
        limits[record.id.str()] = key_limits{policy, key_usage::fresh(policy, now)};
    }

    authorization check(std::string_view k, std::string_view tenant, const api_family& family = api_family::execute()) {
        const http_headers h{{"x-synthetic-key", std::string(k), true}, {"x-tenant-name", std::string(tenant), false}};
        const auto find = [this](std::string_view id) -> const key_limits* {
            const auto it = limits.find(id);
            return it == limits.end() ? nullptr : &it->second;
        };
        auto a = authorize(index, h, family, resource_ref::all(), access_level::read, now, call_context{}, find);
        if (a.usage()) limits.find(a.key()->str())->second.usage = *a.usage();
        return a;
    }
};

}  // namespace

TEST_CASE("K16: the answers: 200 with the key's figures, 401, 403, 429 with Retry-After", "[K16][K15][gateway]") {
    gateway_fixture f;
    const auto ok = gateway::answer_for(f.check(f.key, "acme"), f.now);
    CHECK(ok.status == 200);
    REQUIRE(header(ok, "x-key-id"));
    CHECK(header(ok, "x-key-id")->value == f.record.id.str());
    CHECK(header(ok, "RateLimit-Remaining")->value == "0");
    CHECK(header(ok, "RateLimit-Reset")->value == "1");
    CHECK(header(ok, "x-credits-remaining")->value == "0");

    // Over the rate: 429 and Retry-After rounded up to whole seconds.
    f.now += std::chrono::milliseconds{1};
    const auto limited = gateway::answer_for(f.check(f.key, "acme"), f.now);
    CHECK(limited.status == 429);
    REQUIRE(header(limited, "Retry-After"));
    CHECK(header(limited, "Retry-After")->value == "1");  // 0.999 s
    // Out of credits (no refill): 429 without Retry-After.
    f.now += std::chrono::seconds{2};
    const auto spent = gateway::answer_for(f.check(f.key, "acme"), f.now);
    CHECK(spent.status == 429);
    CHECK_FALSE(header(spent, "Retry-After"));

    // 401: unknown key and a key of another tenant answer byte for byte alike.
    const auto unknown = gateway::answer_for(f.check("no-such-key", "acme"), f.now);
    const auto foreign = gateway::answer_for(f.check(f.other_key, "acme"), f.now);
    CHECK(unknown.status == 401);
    CHECK(foreign.status == 401);
    CHECK(unknown.body == foreign.body);
    CHECK(unknown.headers == foreign.headers);
    CHECK(gateway::answer_for(f.check(f.key, ""), f.now).status == 401);

    // 403: a family the key lacks, or a request no route covers (after the key's own checks).
    CHECK(gateway::answer_for(f.check(f.key, "acme", api_family("Reports")), f.now).status == 403);
    CHECK(gateway::answer_for(f.check(f.key, "acme", gateway::no_route_family()), f.now).status == 403);
    CHECK(gateway::answer_for(f.check("no-such-key", "acme", gateway::no_route_family()), f.now).status == 401);

    // No answer carries the key.
    for (const auto& a : {ok, limited, spent, unknown, foreign}) {
        CHECK(a.body.find(f.key) == std::string::npos);
        for (const auto& h : a.headers) CHECK(h.value.find(f.key) == std::string::npos);
    }
}

TEST_CASE("K16: the routes file's groups are the tenant's permission model", "[K16][K9][gateway]") {
    const auto groups = gateway::parse_groups(R"({"routes": [], "groups": {
        "user:pf": {"access": [{"level": "read"}]},
        "user:finance": {"access": [{"folder": "Finance", "level": "write"},
                                    {"folder": "Finance", "service": "report", "level": "admin"}],
                         "families": ["Reports"]}}})");
    REQUIRE(groups);
    REQUIRE(groups->groups.size() == 2);
    CHECK(groups->groups.at("user:pf").access.at(resource::all()) == access_level::read);
    const auto& finance = groups->groups.at("user:finance");
    CHECK(finance.access.at(resource::folder("Finance")) == access_level::write);
    CHECK(finance.access.at(resource::service("Finance", "report")) == access_level::admin);
    CHECK(finance.families.count(api_family("Reports")) == 1);
    // Without "groups", no group grants anything.
    const auto none = gateway::parse_groups(R"({"routes": []})");
    REQUIRE(none);
    CHECK(none->groups.empty());

    const auto check = [](const char* text, const char* path) {
        const auto r = gateway::parse_groups(text);
        INFO(text);
        REQUIRE_FALSE(r);
        CHECK(r.error().path == path);
    };
    check(R"({"groups": []})", "groups");
    check(R"({"groups": {"user:pf": {"access": [{"level": "root"}]}}})", R"(groups["user:pf"].access[0].level)");
    check(R"({"groups": {"user:pf": {"access": [{}]}}})", R"(groups["user:pf"].access[0].level)");
    check(R"({"groups": {"user:pf": {"access": [{"service": "s", "level": "read"}]}}})",
          R"(groups["user:pf"].access[0].service)");
    check(R"({"groups": {"user:pf": {"access": [{"folder": "", "level": "read"}]}}})",
          R"(groups["user:pf"].access[0].folder)");
    check(R"({"groups": {"user:pf": {"acess": []}}})", R"(groups["user:pf"].acess)");
    check(R"({"groups": {"user:pf": {"families": ["Reports", 3]}}})", R"(groups["user:pf"].families[1])");
}

// ---- O2: one code per answer.

TEST_CASE("O2: each code's status, header, message and JSON body come from its one row", "[O2][gateway]") {
    using gateway::code;
    // The statuses O2 gives each code.
    const std::vector<std::pair<code, int>> spec{{code::valid, 200},          {code::not_found, 401},
                                                 {code::revoked, 403},        {code::expired, 403},
                                                 {code::not_yet_active, 403}, {code::address_not_allowed, 403},
                                                 {code::forbidden, 403},      {code::rate_limited, 429},
                                                 {code::usage_exceeded, 429}, {code::unavailable, 503}};
    REQUIRE(spec.size() == std::size(gateway::code_rows));
    std::set<std::string_view> names;
    for (const auto& [c, status] : spec) {
        const auto& row = gateway::row_of(c);
        INFO(row.name);
        CHECK(row.status == status);
        names.insert(row.name);
        const auto a = gateway::answer_of(c);
        CHECK(a.value == c);
        CHECK(a.status == status);
        REQUIRE(header(a, "x-keyhook-code"));
        CHECK(header(a, "x-keyhook-code")->value == row.name);
        REQUIRE(header(a, "x-keyhook-message"));
        CHECK(header(a, "x-keyhook-message")->value == row.message);
        CHECK(header(a, "Content-Type")->value == "application/json");
        // Exactly one code header.
        CHECK(std::count_if(a.headers.begin(), a.headers.end(),
                            [](const http_header& h) { return header_name_equal(h.name, "x-keyhook-code"); }) == 1);
        // The body: {"code", "message"} and a newline, compact, as nginx's configuration builds it.
        CHECK(a.body ==
              "{\"code\":\"" + std::string(row.name) + "\",\"message\":\"" + std::string(row.message) + "\"}\n");
        const auto body = nlohmann::json::parse(a.body);
        CHECK(body.size() == 2);
        CHECK(body.at("code") == row.name);
        CHECK(body.at("message") == row.message);
        // Fixed text nginx may put between JSON quotes as it is: printable ASCII, no '"' or '\'.
        for (const char ch : row.message) CHECK((ch >= 0x20 && ch <= 0x7E && ch != '"' && ch != '\\'));
        for (const char ch : row.name) CHECK(((ch >= 'A' && ch <= 'Z') || ch == '_'));
    }
    CHECK(names.size() == spec.size());
    // K17's refusal: UNAVAILABLE with Retry-After: 1.
    const auto stale = gateway::unavailable_answer();
    CHECK(stale.status == 503);
    CHECK(header(stale, "x-keyhook-code")->value == "UNAVAILABLE");
    CHECK(header(stale, "Retry-After")->value == "1");
}

TEST_CASE("O2: every denial reason of the library has a row, and not_active one per status", "[O2][gateway]") {
    for (std::size_t r = 0; r <= static_cast<std::size_t>(denial_reason::usage_exceeded); ++r) {
        const auto reason = static_cast<denial_reason>(r);
        INFO(r);
        std::size_t rows = 0;
        for (const auto& row : gateway::verdict_rows) rows += row.reason == reason;
        CHECK(rows == (reason == denial_reason::not_active ? 3u : 1u));
    }
    std::size_t allowed = 0;
    for (const auto& row : gateway::verdict_rows) allowed += !row.reason;
    CHECK(allowed == 1);
}

namespace {

// Keys of "acme" for each code, with the period 2024-03-01 to 2024-03-31
// (test_support::request), and one of "globex".
struct verdict_fixture {
    test_support::seeded_random random{11};
    key_index index{random};
    permission_policy permissions;
    std::map<std::string, key_limits, std::less<>> limits;
    std::map<std::string, std::string> keys;  // label -> plaintext
    std::map<std::string, api_key> records;
    timestamp start = test_support::at("2024-03-01T00:00:00Z");
    timestamp end = test_support::at("2024-03-31T00:00:00Z");
    timestamp mid = test_support::at("2024-03-15T00:00:00Z");

    verdict_fixture() {
        permissions.groups["user:pf"].access[resource::all()] = access_level::read;
        add("plain", "acme");
        add("revoked", "acme", [](api_key& r) { r.status = key_status::revoked; });
        add("foreign", "globex");
        key_policy ranged;
        ranged.addresses = {parse_address_range("10.0.0.0/8")};
        add("ranged", "acme", {}, ranged);
        key_policy rated;
        rated.rate = rate_limit{1, std::chrono::seconds{1}, 0};
        add("rated", "acme", {}, rated);
        key_policy credited;
        credited.limited_credits = true;
        credited.initial_credits = 1;
        add("credited", "acme", {}, credited);
    }

    void add(const std::string& label, const char* tenant, const std::function<void(api_key&)>& edit = {},
             std::optional<key_policy> policy = std::nullopt) {
        auto request = test_support::request("key " + label);
        auto created = create_key(request, tenant_kind::restricted, random, request.active_from);
        if (edit) edit(created.record);
        keys[label] = created.key.take()->reveal();
        index.add(tenant, created.record, secret(keys[label]), permissions);
        records[label] = created.record;
        if (policy) limits[created.record.id.str()] = key_limits{*policy, key_usage::fresh(*policy, start)};
    }

    authorization check(const http_headers& h, timestamp now, const api_family& family = api_family::execute(),
                        access_level needed = access_level::read,
                        const ip_address& caller = parse_ip_address("192.0.2.1")) {
        const auto find = [this](std::string_view id) -> const key_limits* {
            const auto it = limits.find(id);
            return it == limits.end() ? nullptr : &it->second;
        };
        auto a = authorize(index, h, family, resource_ref::all(), needed, now, call_context{caller, 1}, find);
        if (a.usage()) limits.find(a.key()->str())->second.usage = *a.usage();
        return a;
    }
    authorization check(const std::string& label, timestamp now, const api_family& family = api_family::execute(),
                        access_level needed = access_level::read,
                        const ip_address& caller = parse_ip_address("192.0.2.1")) {
        return check(headers(keys.at(label)), now, family, needed, caller);
    }
    static http_headers headers(const std::string& key, const std::string& tenant = "acme") {
        return {{"x-synthetic-key", key, true}, {"x-tenant-name", tenant, false}};
    }
    gateway::code code(const authorization& a) const { return gateway::answer_for(a, mid).value; }
};

}  // namespace

TEST_CASE("O2: the codes of the library's verdicts, on both sides of each boundary", "[O2][K15][gateway]") {
    using gateway::code;
    verdict_fixture f;
    const auto us = test_support::one_us;

    // S1's half-open period: NOT_YET_ACTIVE before activeFrom, VALID from it, EXPIRED from expireAt.
    CHECK(f.code(f.check("plain", f.start - us)) == code::not_yet_active);
    CHECK(f.code(f.check("plain", f.start)) == code::valid);
    CHECK(f.code(f.check("plain", f.end - us)) == code::valid);
    CHECK(f.code(f.check("plain", f.end)) == code::expired);
    // Revoked wins over the period.
    CHECK(f.code(f.check("revoked", f.mid)) == code::revoked);
    CHECK(f.code(f.check("revoked", f.end)) == code::revoked);
    CHECK(f.code(f.check("revoked", f.start - us)) == code::revoked);

    // K12: the range's first and last address are in, the neighbours out.
    CHECK(f.code(f.check("ranged", f.mid, api_family::execute(), access_level::read, parse_ip_address("10.0.0.0"))) ==
          code::valid);
    CHECK(f.code(f.check("ranged", f.mid, api_family::execute(), access_level::read,
                         parse_ip_address("10.255.255.255"))) == code::valid);
    CHECK(f.code(f.check("ranged", f.mid, api_family::execute(), access_level::read, parse_ip_address("11.0.0.0"))) ==
          code::address_not_allowed);
    CHECK(f.code(f.check("ranged", f.mid, api_family::execute(), access_level::read,
                         parse_ip_address("9.255.255.255"))) == code::address_not_allowed);

    // Family, access level (read granted: read yes, execute no), no route: FORBIDDEN.
    CHECK(f.code(f.check("plain", f.mid, api_family("Reports"))) == code::forbidden);
    CHECK(f.code(f.check("plain", f.mid, api_family::execute(), access_level::read)) == code::valid);
    CHECK(f.code(f.check("plain", f.mid, api_family::execute(), access_level::execute)) == code::forbidden);
    CHECK(f.code(f.check("plain", f.mid, gateway::no_route_family())) == code::forbidden);

    // K13: 1 a second. The next call is allowed exactly one second after the first, not a microsecond before.
    const auto first = f.check("rated", f.mid);
    CHECK(f.code(first) == code::valid);
    const auto early = f.check("rated", f.mid + std::chrono::seconds{1} - us);
    CHECK(f.code(early) == code::rate_limited);
    const auto limited = gateway::answer_for(early, f.mid + std::chrono::seconds{1} - us);
    CHECK(limited.status == 429);
    CHECK(header(limited, "Retry-After")->value == "1");  // 1 us, rounded up
    CHECK(f.code(f.check("rated", f.mid + std::chrono::seconds{1})) == code::valid);

    // K14: one credit: the call that spends it is VALID, the next USAGE_EXCEEDED (no refill: no Retry-After).
    const auto spends = f.check("credited", f.mid);
    CHECK(f.code(spends) == code::valid);
    CHECK(header(gateway::answer_for(spends, f.mid), "x-credits-remaining")->value == "0");
    const auto spent = f.check("credited", f.mid);
    CHECK(f.code(spent) == code::usage_exceeded);
    CHECK_FALSE(header(gateway::answer_for(spent, f.mid), "Retry-After"));
}

TEST_CASE("O2: NOT_FOUND for every header and key problem, answered byte for byte alike", "[O2][K16][gateway]") {
    verdict_fixture f;
    const auto& key = f.keys.at("plain");
    const std::vector<http_headers> cases{
        {},                                                                 // no header at all
        {{"x-tenant-name", "acme", false}},                                 // no key header
        {{"x-synthetic-key", key, true}},                                   // no tenant header
        {{"x-synthetic-key", "", true}, {"x-tenant-name", "acme", false}},  // an empty key
        {{"x-synthetic-key", key, true}, {"x-tenant-name", "", false}},     // an empty tenant
        {{"x-synthetic-key", key, true}, {"x-synthetic-key", key + "x", true}, {"x-tenant-name", "acme", false}},
        {{"x-synthetic-key", key, true}, {"x-tenant-name", "acme", false}, {"X-Tenant-Name", "globex", false}},
        verdict_fixture::headers("00000000-0000-4000-8000-000000000000"),  // an unknown key
        verdict_fixture::headers(f.keys.at("foreign")),                    // a key of another tenant
        verdict_fixture::headers(key, "globex"),                           // the key, another tenant named
    };
    const auto reference = gateway::answer_for(f.check(cases.back(), f.mid), f.mid);
    CHECK(reference.value == gateway::code::not_found);
    CHECK(reference.status == 401);
    for (std::size_t i = 0; i < cases.size(); ++i) {
        INFO("case " << i);
        const auto a = gateway::answer_for(f.check(cases[i], f.mid), f.mid);
        CHECK(a.value == gateway::code::not_found);
        CHECK(a.status == reference.status);
        CHECK(a.headers == reference.headers);
        CHECK(a.body == reference.body);
        CHECK_FALSE(header(a, "x-key-id"));
    }
}

TEST_CASE("O2: a VALID answer names the key for the service; no answer carries the key", "[O2][gateway]") {
    verdict_fixture f;
    const auto a = f.check("rated", f.mid);
    const gateway::key_identity who{"Café \"batch\" #1\r\nx-evil: 1", "acme corp/ünit"};
    const auto ok = gateway::answer_for(a, f.mid, &who);
    CHECK(ok.value == gateway::code::valid);
    CHECK(header(ok, "x-key-id")->value == f.records.at("rated").id.str());
    CHECK(header(ok, "x-key-name")->value == "Caf%C3%A9%20%22batch%22%20%231%0D%0Ax-evil%3A%201");
    CHECK(header(ok, "x-tenant")->value == "acme%20corp%2F%C3%BCnit");
    CHECK(header(ok, "RateLimit-Remaining")->value == "0");
    CHECK(header(ok, "RateLimit-Reset")->value == "1");
    CHECK_FALSE(header(ok, "x-credits-remaining"));  // no credit limit: left out
    // Without an identity, only the id.
    const auto bare = gateway::answer_for(f.check("plain", f.mid), f.mid);
    CHECK(header(bare, "x-key-id"));
    CHECK_FALSE(header(bare, "x-key-name"));
    CHECK_FALSE(header(bare, "RateLimit-Remaining"));

    for (const auto& [label, key] : f.keys) {
        for (const auto& c :
             {f.check(label, f.mid), f.check(label, f.end), f.check(label, f.start - test_support::one_us)}) {
            const auto answer = gateway::answer_for(c, f.mid, &who);
            CHECK(answer.body.find(key) == std::string::npos);
            for (const auto& h : answer.headers) CHECK(h.value.find(key) == std::string::npos);
        }
    }
}
