// key_gateway's decisions (examples/key_gateway/forward_auth.hpp): K16's
// answers, the proxy headers it trusts, and the routes.
#include <catch2/catch.hpp>

#include <map>
#include <string>

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
