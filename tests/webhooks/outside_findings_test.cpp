// Regression tests for the findings of the outside review (issue 11) on
// webhook configuration and dispatch: 7 (limits), 11 (keys H7 would refuse),
// 12 (headers an auth parameter may not set), 15 (the fuzzer's quote
// property) and 18 (the refused address ranges of H1).
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <array>
#include <set>
#include <cstdint>
#include <string>
#include <vector>

#include "fuzz_common.hpp"
#include "keyhook/dispatch.hpp"
#include "keyhook/notification.hpp"
#include "keyhook/endpoint.hpp"
#include "keyhook/receiving.hpp"
#include "keyhook/webhook.hpp"
#include "keyhook/webhook_validation.hpp"
#include "keyhook/webhook_json.hpp"

using keyhook::address_class;
using keyhook::auth_location;
using keyhook::auth_parameter;
using keyhook::errc;
using keyhook::secret;
using keyhook::webhook;
using namespace std::string_literals;

namespace {

webhook hook(std::string endpoint = "https://hooks.example.com/in") {
    webhook w;
    w.name = "Orders";
    w.endpoint = std::move(endpoint);
    w.saved = true;
    return w;
}
auth_parameter header(std::string name, std::string value) {
    return auth_parameter{auth_location::header, std::move(name), secret(std::move(value))};
}
auth_parameter query(std::string name, std::string value) {
    return auth_parameter{auth_location::query, std::move(name), secret(std::move(value))};
}
keyhook::error error_of(const webhook& w) {
    const auto r = keyhook::try_validate_webhook(w);
    REQUIRE_FALSE(r);
    return r.error();
}

// What a receiver applying H7 answers to the request a configuration sends.
keyhook::result<keyhook::presented_key> received_key(const std::string& url, const keyhook::http_headers& headers) {
    return keyhook::try_extract_api_key(keyhook::http_request{"POST", url, headers, "{}"});
}

}  // namespace

// ---------------------------------------------------------------------------
// Finding 7: H2 limits, checked before anything is built.

TEST_CASE("outside finding 7: at most 32 authentication parameters", "[H2][J3]") {
    auto w = hook();
    for (int i = 0; i < 32; ++i) w.auth.push_back(header("x-p" + std::to_string(i), "v"));
    CHECK(keyhook::try_validate_webhook(w));
    w.auth.push_back(header("x-p32", "v"));
    const auto e = error_of(w);
    CHECK(e.code == errc::limit_exceeded);
    CHECK(e.path == "auth");
    CHECK(e.message.find("33") != std::string::npos);
    // 100,000 parameters: refused on the count, so no parameter is looked at
    // (a broken one far down does not change the error).
    w.auth.assign(100000, header("x-same", "v"));
    w.auth.back() = header("bad name", "v");
    const auto big = error_of(w);
    CHECK(big.code == errc::limit_exceeded);
    CHECK(big.path == "auth");
    // Read from JSON: refused before the elements are read (they are not even objects).
    auto doc = nlohmann::json::parse(R"({"name": "A", "endpoint": "https://a.example.com/", "saved": true})");
    doc["auth"] = nlohmann::json::array();
    for (int i = 0; i < 33; ++i) doc["auth"].push_back(1);
    const auto read = keyhook::try_webhook_from_json(doc);
    REQUIRE_FALSE(read);
    CHECK(read.error().code == errc::limit_exceeded);
    CHECK(read.error().path == "auth");
    doc["auth"].erase(32);
    const auto read32 = keyhook::try_webhook_from_json(doc);
    REQUIRE_FALSE(read32);
    CHECK(read32.error().code == errc::wrong_type);  // 32 elements: read, and the first is not an object
    CHECK(read32.error().path == "auth[0]");
}

TEST_CASE("outside finding 7: a name at most 128 bytes, a value at most 4096 bytes", "[H2][J3]") {
    for (const auto in : {auth_location::header, auth_location::query}) {
        INFO(keyhook::to_string(in));
        auto w = hook();
        w.auth = {auth_parameter{in, std::string(128, 'n'), secret(std::string(4096, 'v'))}};
        CHECK(keyhook::try_validate_webhook(w));
        w.auth = {auth_parameter{in, std::string(129, 'n'), secret("v")}};
        auto e = error_of(w);
        CHECK(e.code == errc::limit_exceeded);
        CHECK(e.path == "auth[0].name");
        w.auth = {auth_parameter{in, "x-key", secret(std::string(4097, 'v'))}};
        e = error_of(w);
        CHECK(e.code == errc::limit_exceeded);
        CHECK(e.path == "auth[0].value");
        CHECK(e.message.find("vvvv") == std::string::npos);  // a value is a secret: never quoted
        // 10 MB: the same error, and no 10 MB URL.
        w.auth = {auth_parameter{in, "x-key", secret(std::string(10 << 20, 'v'))}};
        e = error_of(w);
        CHECK(e.code == errc::limit_exceeded);
        CHECK(e.path == "auth[0].value");
    }
}

TEST_CASE("outside finding 7: the final URL is at most 8192 bytes", "[H2][J3]") {
    // 28 bytes of endpoint, then "?a=" + 4096 and "&b=" + the rest.
    auto w = hook();
    REQUIRE(w.endpoint.size() == 28);
    w.auth = {query("a", std::string(4096, 'x')), query("b", std::string(8192 - 28 - 6 - 4096, 'y'))};
    const auto ok = keyhook::try_validate_webhook(w);
    REQUIRE(ok);
    CHECK(ok->target_url().size() == 8192);
    w.auth[1] = query("b", std::string(8192 - 28 - 6 - 4096 + 1, 'y'));
    auto e = error_of(w);
    CHECK(e.code == errc::limit_exceeded);
    CHECK(e.path == "auth");
    CHECK(e.message.find("8193") != std::string::npos);
    // The encoded length counts: each space becomes %20.
    w.auth = {query("a", std::string(2721, ' '))};  // 28 + 3 + 8163 = 8194
    e = error_of(w);
    CHECK(e.code == errc::limit_exceeded);
    w.auth = {query("a", std::string(2720, ' '))};  // 28 + 3 + 8160 = 8191
    CHECK(keyhook::try_validate_webhook(w));
    // Headers do not count towards the URL.
    w.auth = {header("x-a", std::string(4096, 'x')), header("x-b", std::string(4096, 'y')),
              header("x-c", std::string(4096, 'z'))};
    CHECK(keyhook::try_validate_webhook(w));
}

// ---------------------------------------------------------------------------
// Finding 11: a configuration whose deliveries H7 would always refuse.

TEST_CASE("outside finding 11: an endpoint key and a different parameter key are refused", "[H2][H7]") {
    struct row {
        const char* endpoint;
        auth_parameter param;
        const char* expected_path;  // nullptr: accepted
    };
    const row rows[] = {
        // Different keys: H7 refuses every delivery, so validation refuses the configuration.
        {"https://h.example.com/in?api_key=old", query("api_key", "new"), "auth[0].value"},
        {"https://h.example.com/in?api_key=old", header("x-api-key", "new"), "auth[0].value"},
        {"https://h.example.com/in?api_key=old", header("X-API-Key", "new"), "auth[0].value"},
        {"https://h.example.com/in?a=1&api_key=old&b=2", header("x-api-key", "new"), "auth[0].value"},
        {"https://h.example.com/in?api%5Fkey=old", header("x-api-key", "new"), "auth[0].value"},  // decoded name
        {"https://h.example.com/in?api_key=a+b", header("x-api-key", "a+b"), "auth[0].value"},    // '+' is a space
        // The same key: H7 accepts both present and equal.
        {"https://h.example.com/in?api_key=same", query("api_key", "same"), nullptr},
        {"https://h.example.com/in?api_key=same", header("x-api-key", "same"), nullptr},
        {"https://h.example.com/in?api_key=a+b", header("x-api-key", "a b"), nullptr},
        {"https://h.example.com/in?api_key=%2F%20", query("api_key", "/ "), nullptr},
        // No key in the endpoint (an empty one counts as none), or other names.
        {"https://h.example.com/in?api_key=", header("x-api-key", "new"), nullptr},
        {"https://h.example.com/in?api_key", header("x-api-key", "new"), nullptr},
        {"https://h.example.com/in?API_KEY=old", query("api_key", "new"), nullptr},
        {"https://h.example.com/in?api_key=old", query("API_KEY", "new"), nullptr},
        {"https://h.example.com/in?api_key=old", header("x-api-key2", "new"), nullptr},
        {"https://h.example.com/in?api_key=old", header("api_key", "new"), nullptr},
    };
    for (const auto& r : rows) {
        INFO(r.endpoint << " + " << r.param.in << ' ' << r.param.name);
        auto w = hook(r.endpoint);
        w.auth = {r.param};
        const auto v = keyhook::try_validate_webhook(w);
        // What a receiver says about the request this configuration sends.
        std::string url = r.endpoint;
        keyhook::http_headers headers;
        if (r.param.in == auth_location::query)
            keyhook::append_query_parameter(url, r.param.name, r.param.value.reveal());
        else
            headers.push_back({r.param.name, r.param.value.reveal(), true});
        const auto received = received_key(url, headers);
        if (r.expected_path) {
            REQUIRE_FALSE(v);
            CHECK(v.error().code == errc::conflicting_keys);
            CHECK(v.error().path == r.expected_path);
            CHECK(v.error().message.find("old") == std::string::npos);  // keys are never quoted
            CHECK(v.error().message.find("new") == std::string::npos);
            REQUIRE_FALSE(received);
            CHECK(received.error().code == errc::conflicting_keys);
        } else {
            REQUIRE(v);
            CHECK(v->target_url() == url);
            CHECK(received_key(v->target_url(), v->headers()));  // what it sends is accepted
        }
    }
}

TEST_CASE("outside finding 11: every key a delivery carries must agree", "[H2][H7]") {
    // A header and a query parameter of the configuration itself.
    auto w = hook();
    w.auth = {header("x-api-key", "one"), query("api_key", "two")};
    auto e = error_of(w);
    CHECK(e.code == errc::conflicting_keys);
    CHECK(e.path == "auth[1].value");
    CHECK(e.message.find("auth[0]") != std::string::npos);
    w.auth = {header("x-api-key", "one"), query("api_key", "one")};
    const auto v = keyhook::try_validate_webhook(w);
    REQUIRE(v);
    const auto k = received_key(v->target_url(), v->headers());
    REQUIRE(k);
    CHECK(k->source == keyhook::key_source::header_and_query);
    // An endpoint whose own query disagrees with itself.
    w = hook("https://h.example.com/in?api_key=a&api_key=b");
    e = error_of(w);
    CHECK(e.code == errc::conflicting_keys);
    CHECK(e.path == "endpoint");
    CHECK(keyhook::try_validate_webhook(hook("https://h.example.com/in?api_key=a&api_key=a")));
    // In a list, the path names the element.
    auto bad = hook("https://h.example.com/in?api_key=old");
    bad.name = "second";
    bad.auth = {header("x-api-key", "new")};
    const auto list = keyhook::try_validate_webhooks({hook(), bad});
    REQUIRE_FALSE(list);
    CHECK(list.error().path == "webhooks[1].auth[0].value");
}

TEST_CASE("outside finding 11: query values are encoded and join an existing query", "[H2][H8]") {
    auto w = hook("https://h.example.com/in?source=keyhook");
    w.auth = {query("api_key", "k live/7Qz+9xY=="), query("tenant id", "a&b=c")};
    const auto v = keyhook::validate_webhook(w);
    CHECK(v.target_url() ==
          "https://h.example.com/in?source=keyhook&api_key=k%20live%2F7Qz%2B9xY%3D%3D"
          "&tenant%20id=a%26b%3Dc");
    CHECK(keyhook::find_query_parameter(v.target_url(), "source") == "keyhook"s);
    CHECK(keyhook::find_query_parameter(v.target_url(), "api_key") == "k live/7Qz+9xY=="s);
    CHECK(keyhook::find_query_parameter(v.target_url(), "tenant id") == "a&b=c"s);
    const auto k = received_key(v.target_url(), v.headers());
    REQUIRE(k);
    CHECK(k->key.reveal() == "k live/7Qz+9xY==");
}

// ---------------------------------------------------------------------------
// Finding 12: headers an auth parameter may not set.

TEST_CASE("outside finding 12: framing, hop-by-hop, connection-control and signing headers are refused", "[H2][B1]") {
    const char* const refused[] = {"Host",
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
                                   "svix-signature"};
    for (const std::string name : refused) {
        std::string lower = name, upper = name;
        for (auto& c : lower) c = static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
        for (auto& c : upper) c = static_cast<char>(c >= 'a' && c <= 'z' ? c - 'a' + 'A' : c);
        for (const auto& spelled : {name, lower, upper}) {
            INFO(spelled);
            auto w = hook();
            w.auth = {header("x-api-key", "key"), header(spelled, "h2c")};
            const auto e = error_of(w);
            CHECK(e.code == errc::invalid_header);
            CHECK(e.path == "auth[1].name");
            // A query parameter of that name is no header: allowed.
            w.auth = {query(spelled, "v")};
            CHECK(keyhook::try_validate_webhook(w));
        }
    }
    // Near misses are ordinary names.
    auto w = hook();
    w.auth = {header("TEs", "v"),         header("Upgrade-Insecure-Requests", "1"), header("X-Expect", "v"),
              header("Keep-Alive2", "v"), header("Proxy-Authorizations", "v"),      header("svix-ids", "v"),
              header("Trailers", "v"),    header("X-Forwarded-Host", "v")};
    CHECK(keyhook::try_validate_webhook(w));
}

TEST_CASE("outside finding 12: CR, LF and NUL are refused in header names and values", "[H2]") {
    for (const auto& bad : {"\r"s, "\n"s, "\0"s}) {
        auto w = hook();
        w.auth = {header("Upgrade" + bad, "h2c")};
        CHECK(error_of(w).code == errc::invalid_header);
        w.auth = {header("x-other", "a" + bad + "Upgrade: h2c")};
        CHECK(error_of(w).code == errc::invalid_header);
        w.auth = {header("x-other", "ok")};
        CHECK(keyhook::try_validate_webhook(w));
    }
}

// ---------------------------------------------------------------------------
// Finding 15: the fuzzers' quote property.

TEST_CASE("outside finding 15: a long name of backslashes is not taken for a whole quote", "[H2][P1]") {
    // fuzz_dispatch's input: a 70-byte header name of backslashes. Its quote
    // holds 64 of them, escaped as 128 bytes, which contain the raw 70.
    const std::string name(70, '\\');
    auto w = hook();
    w.auth = {header(name, "v")};
    const auto e = error_of(w);
    CHECK(e.code == errc::invalid_header);
    CHECK(e.message.find(name) != std::string::npos);  // the old property fired on this
    CHECK_FALSE(fuzz::quotes_whole(e, name));
    // The property still fires on a string quoted whole, escaped or not.
    const std::string plain(65, 'a');
    CHECK(fuzz::quotes_whole(keyhook::error{errc::invalid_value, "", "got \"" + plain + "\""}, plain));
    const std::string slashes(65, '\\');
    CHECK(fuzz::quotes_whole(
        keyhook::error{errc::invalid_value, "", "got " + keyhook::detail::quote_input(slashes, 65)}, slashes));
    CHECK_FALSE(fuzz::quotes_whole(
        keyhook::error{errc::invalid_value, "", "got " + keyhook::detail::quote_input(slashes)}, slashes));
    CHECK_FALSE(
        fuzz::quotes_whole(keyhook::error{errc::invalid_value, "", std::string(64, 'a')}, std::string(64, 'a')));
}

// ---------------------------------------------------------------------------
// Finding 18: every IANA special-purpose entry that is not globally reachable.

namespace {

address_class class_of(const char* text) { return keyhook::classify_address(keyhook::parse_ip_address(text)); }

struct range_row {
    const char* below;  // nullptr at the start of the address space
    address_class below_class;
    const char* first;
    const char* last;
    address_class range;
    const char* above;  // nullptr at the end
    address_class above_class;
};

constexpr address_class g = address_class::global;
constexpr address_class unspec = address_class::unspecified;
constexpr address_class loop = address_class::loopback;
constexpr address_class priv = address_class::private_network;
constexpr address_class link = address_class::link_local;
constexpr address_class cgn = address_class::carrier_grade_nat;
constexpr address_class mcast = address_class::multicast;
constexpr address_class ula = address_class::unique_local;
constexpr address_class rsv = address_class::reserved;
constexpr address_class doc = address_class::documentation;
constexpr address_class bench = address_class::benchmarking;
constexpr address_class special = address_class::special_purpose;

const range_row v4_rows[] = {
    {nullptr, g, "0.0.0.0", "0.255.255.255", unspec, "1.0.0.0", g},
    {"9.255.255.255", g, "10.0.0.0", "10.255.255.255", priv, "11.0.0.0", g},
    {"100.63.255.255", g, "100.64.0.0", "100.127.255.255", cgn, "100.128.0.0", g},
    {"126.255.255.255", g, "127.0.0.0", "127.255.255.255", loop, "128.0.0.0", g},
    {"169.253.255.255", g, "169.254.0.0", "169.254.255.255", link, "169.255.0.0", g},
    {"172.15.255.255", g, "172.16.0.0", "172.31.255.255", priv, "172.32.0.0", g},
    {"191.255.255.255", g, "192.0.0.0", "192.0.0.255", special, "192.0.1.0", g},
    {"192.0.1.255", g, "192.0.2.0", "192.0.2.255", doc, "192.0.3.0", g},
    {"192.88.98.255", g, "192.88.99.0", "192.88.99.255", special, "192.88.100.0", g},
    {"192.167.255.255", g, "192.168.0.0", "192.168.255.255", priv, "192.169.0.0", g},
    {"198.17.255.255", g, "198.18.0.0", "198.19.255.255", bench, "198.20.0.0", g},
    {"198.51.99.255", g, "198.51.100.0", "198.51.100.255", doc, "198.51.101.0", g},
    {"203.0.112.255", g, "203.0.113.0", "203.0.113.255", doc, "203.0.114.0", g},
    {"223.255.255.255", g, "224.0.0.0", "239.255.255.255", mcast, "240.0.0.0", rsv},
    {"239.255.255.255", mcast, "240.0.0.0", "255.255.255.254", rsv, "255.255.255.255", rsv},
    {"255.255.255.254", rsv, "255.255.255.255", "255.255.255.255", rsv, nullptr, g},
};

const range_row v6_rows[] = {
    {nullptr, g, "::", "::", unspec, "::1", loop},
    {"::", unspec, "::1", "::1", loop, "::2", rsv},
    // The rest of ::/8 (IPv4-compatible and unassigned forms).
    {"::1", loop, "::2", "ff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", rsv, "100::", special},
    {"64:ff9b:0:ffff:ffff:ffff:ffff:ffff", rsv, "64:ff9b:1::", "64:ff9b:1:ffff:ffff:ffff:ffff:ffff", special,
     "64:ff9b:2::", rsv},
    {"ff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", rsv, "100::", "100::ffff:ffff:ffff:ffff", special,
     "100:0:0:1::", special},
    {"100::ffff:ffff:ffff:ffff", special, "100:0:0:1::", "100:0:0:1:ffff:ffff:ffff:ffff", special, "100:0:0:2::", g},
    // 2001::/23 and the entries inside it.
    {"2000:ffff:ffff:ffff:ffff:ffff:ffff:ffff", g, "2001::", "2001:0:ffff:ffff:ffff:ffff:ffff:ffff", special,
     "2001:1::", special},
    {"2001:1::", special, "2001:1::1", "2001:1::3", g, "2001:1::4", special},
    {"2001:1:ffff:ffff:ffff:ffff:ffff:ffff", special, "2001:2::", "2001:2:0:ffff:ffff:ffff:ffff:ffff", bench,
     "2001:2:1::", special},
    {"2001:2:ffff:ffff:ffff:ffff:ffff:ffff", special, "2001:3::", "2001:3:ffff:ffff:ffff:ffff:ffff:ffff", g,
     "2001:4::", special},
    {"2001:4:111:ffff:ffff:ffff:ffff:ffff", special, "2001:4:112::", "2001:4:112:ffff:ffff:ffff:ffff:ffff", g,
     "2001:4:113::", special},
    {"2001:f:ffff:ffff:ffff:ffff:ffff:ffff", special, "2001:10::", "2001:1f:ffff:ffff:ffff:ffff:ffff:ffff", special,
     "2001:20::", g},  // deprecated ORCHID
    {"2001:1f:ffff:ffff:ffff:ffff:ffff:ffff", special, "2001:20::", "2001:2f:ffff:ffff:ffff:ffff:ffff:ffff", g,
     "2001:30::", g},
    {"2001:2f:ffff:ffff:ffff:ffff:ffff:ffff", g, "2001:30::", "2001:3f:ffff:ffff:ffff:ffff:ffff:ffff", g,
     "2001:40::", special},
    {"2001:3f:ffff:ffff:ffff:ffff:ffff:ffff", g, "2001:40::", "2001:1ff:ffff:ffff:ffff:ffff:ffff:ffff", special,
     "2001:200::", g},
    {"2001:db7:ffff:ffff:ffff:ffff:ffff:ffff", g, "2001:db8::", "2001:db8:ffff:ffff:ffff:ffff:ffff:ffff", doc,
     "2001:db9::", g},
    {"3ffe:ffff:ffff:ffff:ffff:ffff:ffff:ffff", g, "3fff::", "3fff:fff:ffff:ffff:ffff:ffff:ffff:ffff", doc,
     "3fff:1000::", g},
    {"5eff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", g, "5f00::", "5f00:ffff:ffff:ffff:ffff:ffff:ffff:ffff", special,
     "5f01::", g},
    {"fbff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", g, "fc00::", "fdff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", ula,
     "fe00::", g},
    {"fe7f:ffff:ffff:ffff:ffff:ffff:ffff:ffff", g, "fe80::", "febf:ffff:ffff:ffff:ffff:ffff:ffff:ffff", link,
     "fec0::", rsv},
    {"febf:ffff:ffff:ffff:ffff:ffff:ffff:ffff", link, "fec0::", "feff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", rsv,
     "ff00::", mcast},
    {"feff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", rsv, "ff00::", "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", mcast,
     nullptr, g},
};

// The verdict of every way of meeting an address: classified, checked after
// name resolution, and as an endpoint's host.
void check_everywhere(const char* text, address_class expected) {
    INFO(text);
    CHECK(class_of(text) == expected);
    const auto checked = keyhook::try_check_address(text);
    CHECK(checked.has_value() == (expected == g));
    if (!checked) {
        CHECK(checked.error().code == errc::forbidden_address);
        CHECK(checked.error().message.find(std::string(keyhook::to_string(expected))) != std::string::npos);
    }
    const std::string t = text;
    const std::string url = "https://" + (t.find(':') == std::string::npos ? t : "[" + t + "]") + "/hook";
    const auto e = keyhook::try_validate_endpoint(url);
    CHECK(e.has_value() == (expected == g));
    if (!e) CHECK(e.error().code == errc::forbidden_address);
    keyhook::endpoint_policy dev;
    dev.allow_non_global_addresses = true;
    CHECK(keyhook::try_check_address(text, dev));
    CHECK(keyhook::try_validate_endpoint(url, dev));
}

void check_rows(const range_row* rows, std::size_t n) {
    for (std::size_t i = 0; i < n; ++i) {
        const auto& r = rows[i];
        if (r.below) check_everywhere(r.below, r.below_class);
        check_everywhere(r.first, r.range);
        check_everywhere(r.last, r.range);
        if (r.above) check_everywhere(r.above, r.above_class);
    }
}

}  // namespace

TEST_CASE("outside finding 18: IPv4 special-purpose ranges, both sides of every boundary", "[H1]") {
    check_rows(v4_rows, std::size(v4_rows));
    // Globally reachable registry entries stay reachable.
    for (const char* reachable : {"192.31.196.1", "192.52.193.1", "192.175.48.1", "8.8.8.8", "1.1.1.1"})
        check_everywhere(reachable, g);
}

TEST_CASE("outside finding 18: IPv6 special-purpose ranges, both sides of every boundary", "[H1]") {
    check_rows(v6_rows, std::size(v6_rows));
    for (const char* reachable : {"2620:4f:8000::1", "2606:4700:4700::1111", "2001:4860:4860::8888"})
        check_everywhere(reachable, g);
    // IPv4-mapped ::ffff:0:0/96, NAT64 64:ff9b::/96 and 6to4 2002::/16: by the
    // embedded IPv4 address, whose first and last are refused themselves.
    for (const char* outside :
         {"::fffe:ffff:ffff", "::1:0:0:0", "64:ff9a:ffff:ffff:ffff:ffff:ffff:ffff", "64:ff9b::1:0:0"})
        check_everywhere(outside, rsv);  // the rest of ::/8
    for (const char* first : {"::ffff:0.0.0.0", "64:ff9b::", "2002::"}) check_everywhere(first, unspec);
    for (const char* last : {"::ffff:255.255.255.255", "64:ff9b::ffff:ffff", "2002:ffff:ffff:ffff:ffff:ffff:ffff:ffff"})
        check_everywhere(last, rsv);
    check_everywhere("2001:ffff:ffff:ffff:ffff:ffff:ffff:ffff", g);
    check_everywhere("2003::", g);
    check_everywhere("2001:1::2", g);         // TURN anycast
    check_everywhere("2001::1", special);     // Teredo
    check_everywhere("2001:1::5", special);   // 2001:1::/32 besides its three anycast addresses
    check_everywhere("64:ff9b::808:808", g);  // NAT64 of a public address
    check_everywhere("2002:808:808::1", g);   // 6to4 of a public address
    check_everywhere("::ffff:8.8.8.8", g);    // IPv4-mapped public address
}

TEST_CASE("outside finding 18: IPv4-mapped, NAT64 and 6to4 forms take the class of the IPv4 address", "[H1]") {
    for (const auto& r : v4_rows) {
        for (const char* text : {r.below, r.first, r.last, r.above}) {
            if (!text) continue;
            const auto v4 = keyhook::parse_ip_address(text);
            const auto expected = keyhook::classify_address(v4);
            std::array<std::uint8_t, 16> mapped{}, nat64{}, six_to_four{};
            mapped[10] = mapped[11] = 0xFF;
            nat64[1] = 0x64;
            nat64[2] = 0xFF;
            nat64[3] = 0x9B;
            six_to_four[0] = 0x20;
            six_to_four[1] = 0x02;
            for (std::size_t k = 0; k < 4; ++k) {
                mapped[12 + k] = nat64[12 + k] = v4.octets[k];
                six_to_four[2 + k] = v4.octets[k];
            }
            six_to_four[15] = 1;  // the host part does not matter
            INFO(text);
            CHECK(keyhook::classify_address(keyhook::ip_address::v6(mapped)) == expected);
            CHECK(keyhook::classify_address(keyhook::ip_address::v6(nat64)) == expected);
            CHECK(keyhook::classify_address(keyhook::ip_address::v6(six_to_four)) == expected);
            const auto as_text = keyhook::to_string(keyhook::ip_address::v6(nat64));
            CHECK(keyhook::try_check_address(as_text).has_value() == (expected == g));
        }
    }
}

// ---------------------------------------------------------------------------
// Second review: event types cast from integers outside the 53.

TEST_CASE("second review: a filter holding a value outside the 53 types is refused, never shifted into the mask",
          "[H3][H4]") {
    for (const int v : {53, 63, 64, 70, 255}) {
        auto w = hook();
        w.events = {keyhook::event_type::AddProduct, static_cast<keyhook::event_type>(v)};
        const auto e = error_of(w);
        CHECK(e.code == errc::unknown_event);
        CHECK(e.path == "events[1]");
        CHECK(e.message.find(std::to_string(v)) != std::string::npos);
    }
    // The other side: the last of the 53 is kept, and admits only itself.
    auto w = hook();
    w.events = {keyhook::event_type::EventsDataRetentionFailed};
    const auto ok = keyhook::try_validate_webhook(w);
    REQUIRE(ok);
    CHECK(ok->admits(keyhook::event_type::EventsDataRetentionFailed));
    CHECK_FALSE(ok->admits(keyhook::event_type::PlatformLogin));
    // An empty filter admits the 53 and nothing past them.
    const auto all = keyhook::try_validate_webhook(hook());
    REQUIRE(all);
    CHECK(all->admits(keyhook::event_type::EventsDataRetentionFailed));
    CHECK_FALSE(all->admits(static_cast<keyhook::event_type>(53)));
    CHECK_FALSE(all->admits(static_cast<keyhook::event_type>(64)));
}

TEST_CASE("second review: a notification whose event is outside the 53 types is neither written nor dispatched",
          "[H5][H6]") {
    keyhook::notification n;
    n.tenant = "acme";
    n.request_time = keyhook::parse_timestamp("2026-11-26T10:00:00Z");
    n.user_action = static_cast<keyhook::event_type>(53);
    const auto body = keyhook::try_notification_body(n);
    REQUIRE_FALSE(body);
    CHECK(body.error().code == errc::unknown_event);
    CHECK(body.error().path == "UserAction");
    const keyhook::tenant_settings tenant{"acme", true};
    const auto sent = keyhook::try_dispatch(tenant, std::vector<webhook>{hook()}, n);
    REQUIRE_FALSE(sent);
    CHECK(sent.error().code == errc::unknown_event);
    // The other side: the last of the 53 is written and sent.
    n.user_action = keyhook::event_type::EventsDataRetentionFailed;
    REQUIRE(keyhook::try_notification_body(n));
    const auto one = keyhook::try_dispatch(tenant, std::vector<webhook>{hook()}, n);
    REQUIRE(one);
    CHECK(one->size() == 1);
}

TEST_CASE("second review, the class closed: no JSON writer gives an event outside the 53 a name", "[H3][H6]") {
    // to_string says "unknown" for such a value (printing, P1), but a JSON
    // document with "unknown" in it would not read back: writing refuses it.
    for (const int v : {53, 64, 255}) {
        INFO(v);
        const auto bad = static_cast<keyhook::event_type>(v);
        nlohmann::json j;
        try {
            j = bad;
            FAIL("an event type value outside the 53 was written");
        } catch (const keyhook::exception& e) {
            CHECK(e.code() == errc::unknown_event);
            CHECK(std::string(e.what()).find(std::to_string(v)) != std::string::npos);
        }
        // A filter holding one, as a host might write it out itself.
        const std::set<keyhook::event_type> filter{keyhook::event_type::AddProduct, bad};
        CHECK_THROWS_AS(nlohmann::json(filter), keyhook::exception);
        keyhook::notification n;
        n.user_action = bad;
        try {
            nlohmann::ordered_json body = n;
            FAIL("a notification with an event type value outside the 53 was written");
        } catch (const keyhook::exception& e) {
            CHECK(e.code() == errc::unknown_event);
            CHECK(e.path() == "UserAction");
        }
    }
    // The other side: the first and the last of the 53 are written by name.
    CHECK(nlohmann::json(keyhook::event_type::PlatformLogin) == "PlatformLogin");
    CHECK(nlohmann::json(keyhook::event_type::EventsDataRetentionFailed) == "EventsDataRetentionFailed");
    keyhook::notification n;
    n.user_action = keyhook::event_type::EventsDataRetentionFailed;
    CHECK(nlohmann::ordered_json(n)["UserAction"] == "EventsDataRetentionFailed");
}
