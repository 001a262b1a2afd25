#include "keyhook/webhook.hpp"
#include "keyhook/webhook_validation.hpp"
#include "keyhook/webhook_json.hpp"
#include "keyhook/base64.hpp"
#include "keyhook/receiving.hpp"

#include "fuzz_common.hpp"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <sstream>
#include <string>
#include <vector>

using keyhook::auth_location;
using keyhook::auth_parameter;
using keyhook::errc;
using keyhook::event_type;
using keyhook::secret;
using keyhook::try_validate_webhook;
using keyhook::webhook;
using namespace std::string_literals;

namespace {

webhook sample_webhook() {
    webhook w;
    w.name = "Orders";
    w.endpoint = "https://hooks.example.com/in";
    w.saved = true;
    return w;
}

auth_parameter header(std::string name, std::string value) {
    return auth_parameter{auth_location::header, std::move(name), secret(std::move(value))};
}
auth_parameter query(std::string name, std::string value) {
    return auth_parameter{auth_location::query, std::move(name), secret(std::move(value))};
}

// The error of validating w with one extra auth parameter p.
keyhook::error auth_error(const auth_parameter& p) {
    auto w = sample_webhook();
    w.auth.push_back(header("x-api-key", "first-key-0123456789"));
    w.auth.push_back(p);
    const auto r = try_validate_webhook(w);
    REQUIRE_FALSE(r);
    return r.error();
}

// sample_webhook() at another endpoint.
webhook hook(std::string endpoint = "https://hooks.example.com/in") {
    webhook w;
    w.name = "Orders";
    w.endpoint = std::move(endpoint);
    w.saved = true;
    return w;
}

// The error of validating w, which must fail.
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

TEST_CASE("H2: usual header and query authentication", "[H2][webhook]") {
    auto w = sample_webhook();
    // Both usual places with one key: the receiver accepts a request whose keys agree (H7).
    w.auth = {header("x-api-key", "q value/&=?"), query("api_key", "q value/&=?")};
    const auto v = keyhook::validate_webhook(w);
    CHECK(v.target_url() == "https://hooks.example.com/in?api_key=q%20value%2F%26%3D%3F");
    REQUIRE(v.headers().size() == 2);
    CHECK(v.headers()[0] == keyhook::http_header{"Content-Type", "application/json", false});
    CHECK(v.headers()[1] == keyhook::http_header{"x-api-key", "q value/&=?", true});
    CHECK(v.config() == w);
    CHECK(v.name() == "Orders");
    CHECK(v.endpoint().host == "hooks.example.com");
}

TEST_CASE("H2: query parameters join an existing query", "[H2][webhook]") {
    auto w = sample_webhook();
    w.auth = {query("api_key", "abc"), query("tenant id", "t1")};
    w.endpoint = "https://example.com/hook?source=keyhook";
    CHECK(keyhook::validate_webhook(w).target_url() ==
          "https://example.com/hook?source=keyhook&api_key=abc&tenant%20id=t1");
    w.endpoint = "https://example.com/hook?";
    CHECK(keyhook::validate_webhook(w).target_url() == "https://example.com/hook?api_key=abc&tenant%20id=t1");
    w.endpoint = "https://example.com/hook?a=1&";
    CHECK(keyhook::validate_webhook(w).target_url() == "https://example.com/hook?a=1&api_key=abc&tenant%20id=t1");
    w.endpoint = "https://example.com";
    CHECK(keyhook::validate_webhook(w).target_url() == "https://example.com?api_key=abc&tenant%20id=t1");
    w.auth.clear();
    CHECK(keyhook::validate_webhook(w).target_url() == "https://example.com");
}

TEST_CASE("H2: header names must be HTTP tokens", "[H2][webhook]") {
    auto w = sample_webhook();
    w.auth = {header("!#$%&'*+-.^_`|~09azAZ", "v")};
    CHECK(try_validate_webhook(w));
    for (const auto& bad : {"x api key"s, "x-api-key:"s, "x(api)"s, "x/y"s, "x\"y"s, "x@y"s, "x,y"s, "x;y"s, "x=y"s,
                            "x{y}"s, "x[y]"s, "x?y"s, "x\\y"s, "\xc3\xa9t\xc3\xa9"s, "x\ty"s, "x\x7fy"s}) {
        INFO(keyhook::detail::quote_input(bad));
        const auto e = auth_error(header(bad, "value"));
        CHECK(e.code == errc::invalid_header);
        CHECK(e.path == "auth[1].name");
    }
    const auto empty = auth_error(header("", "value"));
    CHECK(empty.code == errc::invalid_header);
    CHECK(empty.path == "auth[1].name");
}

TEST_CASE("H2: framing headers and signing headers are refused in any case", "[H2][webhook]") {
    for (const char* bad :
         {"Host", "host", "Content-Length", "content-length", "Content-Type", "CONTENT-TYPE", "Transfer-Encoding",
          "transfer-encoding", "Connection", "CONNECTION", "webhook-id", "Webhook-Timestamp", "WEBHOOK-SIGNATURE"}) {
        INFO(bad);
        const auto e = auth_error(header(bad, "value"));
        CHECK(e.code == errc::invalid_header);
        CHECK(e.path == "auth[1].name");
    }
    // Near misses are ordinary names.
    auto w = sample_webhook();
    w.auth = {header("Hosts", "v"), header("Content-Types", "v"), header("X-Connection", "v"),
              header("webhook-ids", "v")};
    CHECK(try_validate_webhook(w));
}

TEST_CASE("H2: CR, LF and NUL are refused in every name and value", "[H2][webhook]") {
    const std::string secret_text = "SuperSecretValue123";
    for (const auto& inject : {"\r"s, "\n"s, "\r\n"s, "\0"s}) {
        INFO(keyhook::detail::quote_input(inject));
        const auto hn = auth_error(header("x-api-key2" + inject + "Injected: yes", "value"));
        CHECK(hn.code == errc::invalid_header);
        CHECK(hn.path == "auth[1].name");
        const auto hv = auth_error(header("x-other", secret_text + inject + "Injected: yes"));
        CHECK(hv.code == errc::invalid_header);
        CHECK(hv.path == "auth[1].value");
        CHECK(hv.message.find("byte 19") != std::string::npos);
        CHECK(hv.message.find(secret_text) == std::string::npos);
        const auto qn = auth_error(query("api" + inject + "key", "value"));
        CHECK(qn.code == errc::invalid_parameter);
        CHECK(qn.path == "auth[1].name");
        const auto qv = auth_error(query("api_key", secret_text + inject));
        CHECK(qv.code == errc::invalid_parameter);
        CHECK(qv.path == "auth[1].value");
        CHECK(qv.message.find(secret_text) == std::string::npos);
    }
    const auto cr = auth_error(header("x-other", "a\rb"));
    CHECK(cr.message.find("carriage return") != std::string::npos);
    const auto lf = auth_error(query("api_key", "a\nb"));
    CHECK(lf.message.find("line feed") != std::string::npos);
    const auto nul = auth_error(query("api_key", "a\0b"s));
    CHECK(nul.message.find("NUL") != std::string::npos);
}

TEST_CASE("H2: other header value rules", "[H2][webhook]") {
    auto w = sample_webhook();
    w.auth = {header("x-api-key", "a\tb c"), header("x-utf8", "caf\xc3\xa9")};
    CHECK(try_validate_webhook(w));
    for (const auto& bad : {"a\x01z"s, "a\x1fz"s, "a\x7fz"s, " lead"s, "trail "s, "\tlead"s, "trail\t"s, ""s}) {
        INFO(keyhook::detail::quote_input(bad));
        const auto e = auth_error(header("x-other", bad));
        CHECK(e.code == errc::invalid_header);
        CHECK(e.path == "auth[1].value");
    }
    // Query values may hold anything but CR, LF and NUL: they are percent-encoded.
    w.auth = {query("api_key", " \x01 \x7f\xff")};
    const auto v = keyhook::validate_webhook(w);
    CHECK(v.target_url() == "https://hooks.example.com/in?api_key=%20%01%20%7F%FF");
    const auto empty_query_value = auth_error(query("api_key", ""));
    CHECK(empty_query_value.code == errc::invalid_parameter);
    CHECK(empty_query_value.path == "auth[1].value");
}

TEST_CASE("H2: query names are non-empty; duplicates are refused", "[H2][webhook]") {
    const auto empty = auth_error(query("", "value"));
    CHECK(empty.code == errc::invalid_parameter);
    CHECK(empty.path == "auth[1].name");

    const auto dup_header = auth_error(header("X-API-KEY", "other-value"));
    CHECK(dup_header.code == errc::invalid_header);
    CHECK(dup_header.path == "auth[1].name");
    CHECK(dup_header.message.find("auth[0]") != std::string::npos);

    auto w = sample_webhook();
    w.auth = {query("api_key", "a"), query("API_KEY", "b")};  // query names are case-sensitive
    CHECK(try_validate_webhook(w));
    w.auth = {query("api_key", "a"), header("api_key", "b")};  // different places
    CHECK(try_validate_webhook(w));
    w.auth = {query("api_key", "a"), query("api_key", "b")};
    const auto r = try_validate_webhook(w);
    REQUIRE_FALSE(r);
    CHECK(r.error().code == errc::invalid_parameter);
    CHECK(r.error().path == "auth[1].name");
}

TEST_CASE("H1: a webhook's endpoint errors carry the field path", "[H1][webhook]") {
    auto w = sample_webhook();
    w.endpoint = "https://10.0.0.8/hook";
    auto r = try_validate_webhook(w);
    REQUIRE_FALSE(r);
    CHECK(r.error().code == errc::forbidden_address);
    CHECK(r.error().path == "endpoint");
    w.endpoint = "http://example.com/";
    r = try_validate_webhook(w);
    REQUIRE_FALSE(r);
    CHECK(r.error().code == errc::invalid_endpoint);
    keyhook::endpoint_policy dev;
    dev.allow_http = true;
    CHECK(try_validate_webhook(w, dev));
    CHECK_THROWS_AS(keyhook::validate_webhook(w), keyhook::exception);
}

TEST_CASE("webhook names: 1 to 128 characters, no control characters, UTF-8", "[webhook]") {
    auto w = sample_webhook();
    std::string name;
    for (int i = 0; i < 128; ++i) name += "\xc3\xa9";  // 128 characters, 256 bytes
    w.name = name;
    CHECK(try_validate_webhook(w));
    w.name = name + "x";
    auto r = try_validate_webhook(w);
    REQUIRE_FALSE(r);
    CHECK(r.error().code == errc::invalid_name);
    CHECK(r.error().path == "name");
    CHECK(r.error().message.find("129") != std::string::npos);
    w.name = "x";
    CHECK(try_validate_webhook(w));
    for (const auto& bad : {""s, "   "s, "a\nb"s, "tab\t"s, "a\0b"s}) {
        w.name = bad;
        r = try_validate_webhook(w);
        REQUIRE_FALSE(r);
        CHECK(r.error().code == errc::invalid_name);
        CHECK(r.error().path == "name");
    }
    w.name = "bad \xc3";
    r = try_validate_webhook(w);
    REQUIRE_FALSE(r);
    CHECK(r.error().code == errc::invalid_utf8);
}

TEST_CASE("validation reports the first problem, or every problem on request", "[H1][H2][webhook]") {
    webhook w;
    w.name = "";
    w.endpoint = "https://user@example.com/";
    w.auth = {header("Host", "v"), query("ok", "v"), query("", "v")};
    w.signing_secret = secret("");
    const auto r = try_validate_webhook(w);
    REQUIRE_FALSE(r);
    CHECK(r.error().path == "name");
    CHECK_THROWS_AS(keyhook::validate_webhook(w), keyhook::exception);
    const auto all = keyhook::webhook_problems(w);
    REQUIRE(all.size() == 5);
    CHECK(all[0].path == "name");
    CHECK(all[1].path == "endpoint");
    CHECK(all[2].path == "auth[0].name");
    CHECK(all[3].path == "auth[2].name");
    CHECK(all[4].path == "signingSecret");
    CHECK(keyhook::webhook_problems(sample_webhook()).empty());
}

TEST_CASE("validating a list: paths webhooks[i], unique names", "[H1][H2][webhook]") {
    auto a = sample_webhook();
    auto b = sample_webhook();
    b.name = "Second";
    b.endpoint = "https://192.168.1.10/";
    auto c = sample_webhook();
    c.name = "Orders";
    const auto r = keyhook::try_validate_webhooks({a, b, c});
    REQUIRE_FALSE(r);
    CHECK(r.error().path == "webhooks[1].endpoint");
    CHECK(r.error().code == errc::forbidden_address);
    const auto all = keyhook::webhook_problems(std::vector<webhook>{a, b, c});
    REQUIRE(all.size() == 2);
    CHECK(all[1].path == "webhooks[2].name");
    CHECK(all[1].message.find("webhooks[0]") != std::string::npos);
    b.endpoint = "https://example.org/";
    const auto ok = keyhook::try_validate_webhooks({a, b});
    REQUIRE(ok);
    CHECK(ok->size() == 2);
    CHECK((*ok)[1].name() == "Second");
    CHECK(keyhook::try_validate_webhooks({a, b}, {}, "config.hooks").has_value());
    const auto other = keyhook::try_validate_webhooks({a, c}, {}, "config.hooks");
    REQUIRE_FALSE(other);
    CHECK(other.error().path == "config.hooks[1].name");
}

TEST_CASE("H3: the event filter: empty admits every type, otherwise only those listed", "[H3][webhook]") {
    auto w = sample_webhook();
    const auto all = keyhook::validate_webhook(w);
    for (auto e : keyhook::all_event_types()) CHECK(all.admits(e));
    w.events = {event_type::AddProduct, event_type::EventsDataRetentionFailed, event_type::PlatformLogin};
    const auto some = keyhook::validate_webhook(w);
    for (auto e : keyhook::all_event_types()) {
        INFO(to_string(e));
        CHECK(some.admits(e) == (w.events.count(e) == 1));
    }
}

TEST_CASE("H3: filters given as names; an unknown name suggests the closest", "[H3][webhook]") {
    const auto f = keyhook::parse_event_filter({"AddProduct", "DeleteProduct", "AddProduct"});
    CHECK(f == keyhook::event_filter{event_type::AddProduct, event_type::DeleteProduct});
    CHECK(keyhook::parse_event_filter({}).empty());
    const auto r = keyhook::try_parse_event_filter({"AddProduct", "addproduct"});
    REQUIRE_FALSE(r);
    CHECK(r.error().code == errc::unknown_event);
    CHECK(r.error().path == "events[1]");
    CHECK(r.error().message.find("did you mean \"AddProduct\"") != std::string::npos);
    const auto three_c = keyhook::try_parse_event_filter({"EventsDataRetentionSuccess"}, "hook.events");
    REQUIRE_FALSE(three_c);
    CHECK(three_c.error().path == "hook.events[0]");
    CHECK(three_c.error().message.find("EventsDataRetentionSucccess") != std::string::npos);
}

TEST_CASE("webhook values print without secrets", "[webhook]") {
    auto w = sample_webhook();
    w.endpoint = "https://example.com/in?token=typed-in-secret";
    w.auth = {header("x-api-key", "abcdefghijklmnop"), query("token", "qrstuvwxyz012345")};
    w.events = {event_type::AddProduct};
    w.signing_secret = secret("whsec_c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0");
    std::ostringstream os;
    os << w << keyhook::validate_webhook(w) << keyhook::tenant_settings{"acme", true};
    const auto text = os.str();
    CHECK(text.find("abcdefghijklmnop") == std::string::npos);
    CHECK(text.find("qrstuvwxyz012345") == std::string::npos);
    CHECK(text.find("typed-in-secret") == std::string::npos);
    CHECK(text.find("c2VjcmV0c2VjcmV0c2VjcmV0") == std::string::npos);
    CHECK(text.find("abc**********nop") != std::string::npos);
    CHECK(text.find("AddProduct") != std::string::npos);
    CHECK(text.find("webhooks=enabled") != std::string::npos);
}

TEST_CASE("reading webhooks from JSON: shapes and paths", "[H1][H2][H3][webhook]") {
    const auto doc = nlohmann::json::parse(R"({
        "tenant": {"name": "acme", "webhooksEnabled": true},
        "webhooks": [
            {"name": "A", "endpoint": "https://a.example.com/", "saved": true,
             "events": ["AddProduct", "DeleteProduct"],
             "auth": [{"in": "header", "name": "x-api-key", "value": "key-a-0123456789"},
                      {"in": "query", "name": "token", "value": "key-b"}],
             "signingSecret": "whsec_c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0", "comment": "unknown members are ignored"},
            {"name": "B", "endpoint": "https://b.example.com/", "saved": false, "events": null, "auth": []}
        ]})");
    const auto settings = keyhook::webhook_settings_from_json(doc);
    CHECK(settings.tenant == keyhook::tenant_settings{"acme", true});
    REQUIRE(settings.webhooks.size() == 2);
    const auto& a = settings.webhooks[0].config();
    CHECK(a.events == keyhook::event_filter{event_type::AddProduct, event_type::DeleteProduct});
    REQUIRE(a.auth.size() == 2);
    CHECK(a.auth[1] == query("token", "key-b"));
    REQUIRE(a.signing_secret);
    CHECK(a.signing_secret->reveal() == "whsec_c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0");
    CHECK(settings.webhooks[0].target_url() == "https://a.example.com/?token=key-b");
    CHECK_FALSE(settings.webhooks[1].saved());
    CHECK(settings.webhooks[1].config().events.empty());

    struct bad_case {
        const char* json;
        errc code;
        const char* path;
    };
    const bad_case cases[] = {
        {R"([])", errc::wrong_type, ""},
        {R"({"webhooks": []})", errc::missing_member, "tenant"},
        {R"({"tenant": {"name": "t", "webhooksEnabled": true}})", errc::missing_member, "webhooks"},
        {R"({"tenant": {"name": "t", "webhooksEnabled": "yes"}, "webhooks": []})", errc::wrong_type,
         "tenant.webhooksEnabled"},
        {R"({"tenant": {"webhooksEnabled": true}, "webhooks": []})", errc::missing_member, "tenant.name"},
        {R"({"tenant": {"name": "t", "webhooksEnabled": true}, "webhooks": {}})", errc::wrong_type, "webhooks"},
        {R"({"tenant": {"name": "t", "webhooksEnabled": true}, "webhooks": [
            {"name": "A", "endpoint": "https://a.example.com/", "saved": true}, 7]})",
         errc::wrong_type, "webhooks[1]"},
        {R"({"tenant": {"name": "t", "webhooksEnabled": true}, "webhooks": [
            {"name": "A", "endpoint": "https://a.example.com/", "saved": true},
            {"name": "B", "endpoint": "https://localhost/", "saved": true}]})",
         errc::forbidden_address, "webhooks[1].endpoint"},
        {R"({"tenant": {"name": "t", "webhooksEnabled": true}, "webhooks": [
            {"name": "A", "endpoint": "https://a.example.com/"}]})",
         errc::missing_member, "webhooks[0].saved"},
        {R"({"tenant": {"name": "t", "webhooksEnabled": true}, "webhooks": [
            {"name": "A", "endpoint": 5, "saved": true}]})",
         errc::wrong_type, "webhooks[0].endpoint"},
        {R"({"tenant": {"name": "t", "webhooksEnabled": true}, "webhooks": [
            {"name": "A", "endpoint": "https://a.example.com/", "saved": true, "events": ["AddProduct", "AddProdcut"]}]})",
         errc::unknown_event, "webhooks[0].events[1]"},
        {R"({"tenant": {"name": "t", "webhooksEnabled": true}, "webhooks": [
            {"name": "A", "endpoint": "https://a.example.com/", "saved": true, "events": [1]}]})",
         errc::wrong_type, "webhooks[0].events[0]"},
        {R"({"tenant": {"name": "t", "webhooksEnabled": true}, "webhooks": [
            {"name": "A", "endpoint": "https://a.example.com/", "saved": true, "events": "AddProduct"}]})",
         errc::wrong_type, "webhooks[0].events"},
        {R"({"tenant": {"name": "t", "webhooksEnabled": true}, "webhooks": [
            {"name": "A", "endpoint": "https://a.example.com/", "saved": true,
             "auth": [{"in": "body", "name": "x", "value": "y"}]}]})",
         errc::invalid_value, "webhooks[0].auth[0].in"},
        {R"({"tenant": {"name": "t", "webhooksEnabled": true}, "webhooks": [
            {"name": "A", "endpoint": "https://a.example.com/", "saved": true,
             "auth": [{"in": "header", "name": "x-api-key"}]}]})",
         errc::missing_member, "webhooks[0].auth[0].value"},
        {R"({"tenant": {"name": "t", "webhooksEnabled": true}, "webhooks": [
            {"name": "A", "endpoint": "https://a.example.com/", "saved": true,
             "auth": [{"in": "header", "name": "x-api-key", "value": "ok-value"},
                      {"in": "header", "name": "Content-Length", "value": "5"}]}]})",
         errc::invalid_header, "webhooks[0].auth[1].name"},
        {R"({"tenant": {"name": "t", "webhooksEnabled": true}, "webhooks": [
            {"name": "A", "endpoint": "https://a.example.com/", "saved": true,
             "auth": [{"in": "query", "name": "api_key", "value": "a\r\nb"}]}]})",
         errc::invalid_parameter, "webhooks[0].auth[0].value"},
        {R"({"tenant": {"name": "t", "webhooksEnabled": true}, "webhooks": [
            {"name": "A", "endpoint": "https://a.example.com/", "saved": true},
            {"name": "A", "endpoint": "https://b.example.com/", "saved": true}]})",
         errc::invalid_name, "webhooks[1].name"},
        {R"({"tenant": {"name": "t", "webhooksEnabled": true}, "webhooks": [
            {"name": "A", "endpoint": "https://a.example.com/", "saved": true, "signingSecret": 12}]})",
         errc::wrong_type, "webhooks[0].signingSecret"},
    };
    for (const auto& c : cases) {
        INFO(c.json);
        const auto r = keyhook::try_webhook_settings_from_json(nlohmann::json::parse(c.json));
        REQUIRE_FALSE(r);
        CHECK(r.error().code == c.code);
        CHECK(r.error().path == c.path);
    }
    // A value of the wrong type is described by its type only, never shown.
    const auto hidden = keyhook::try_webhook_from_json(
        nlohmann::json::parse(R"({"name": "A", "endpoint": "https://a.example.com/", "saved": true,
                                  "auth": [{"in": "header", "name": "x", "value": ["TopSecret123"]}]})"));
    REQUIRE_FALSE(hidden);
    CHECK(hidden.error().path == "auth[0].value");
    CHECK(hidden.error().what().find("TopSecret123") == std::string::npos);
}

TEST_CASE("B1: a signing secret is checked when the webhook is validated", "[B1][H1][webhook]") {
    auto w = sample_webhook();
    const auto with_key_bytes = [&](std::size_t n, bool prefix) {
        w.signing_secret = secret((prefix ? "whsec_" : "") + keyhook::base64_encode(std::string(n, 'k')));
        return try_validate_webhook(w);
    };
    CHECK_FALSE(with_key_bytes(23, true));
    CHECK(with_key_bytes(23, true).error().code == keyhook::errc::out_of_range);
    CHECK(with_key_bytes(23, true).error().path == "signingSecret");
    CHECK(with_key_bytes(24, true));
    CHECK(with_key_bytes(24, false));
    CHECK(with_key_bytes(64, true));
    CHECK_FALSE(with_key_bytes(65, true));
    w.signing_secret = secret("whsec_not base64!");
    const auto bad = try_validate_webhook(w);
    REQUIRE_FALSE(bad);
    CHECK(bad.error().code == keyhook::errc::invalid_value);
    CHECK(bad.error().what().find("not base64!") == std::string::npos);
}

// ---------------------------------------------------------------------------
// H2's policy limits, checked before anything is built (J3).

// Regression test: quadratic work: validation cost grew faster than the configuration (J3, H2 limits).
TEST_CASE("H2: at most 32 authentication parameters, counted before any is read", "[H2][J3][webhook]") {
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

// Regression test: quadratic work: validation cost grew faster than the configuration (J3, H2 limits).
TEST_CASE("H2: a parameter name of at most 128 bytes, a value of at most 4096 bytes, never quoted",
          "[H2][J3][webhook]") {
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

// Regression test: quadratic work: validation cost grew faster than the configuration (J3, H2 limits).
TEST_CASE("H2: the final URL, as encoded, is at most 8192 bytes; headers do not count", "[H2][J3][webhook]") {
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
// H2 and H7: a configuration whose deliveries H7 would always refuse is refused.

// Regression test: conflicting keys: a configuration that validates but keyhook's receiver refuses (H2).
TEST_CASE("H2, H7: an endpoint's api_key and a different parameter key are refused, as a receiver refuses them",
          "[H2][H7][webhook]") {
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

// Regression test: conflicting keys: a configuration that validates but keyhook's receiver refuses (H2).
TEST_CASE("H2, H7: every key a delivery carries must agree, the endpoint's own included", "[H2][H7][webhook]") {
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

// Regression test: conflicting keys: a configuration that validates but keyhook's receiver refuses (H2).
TEST_CASE("H2, H8: query values are percent-encoded, join an existing query and read back as given",
          "[H2][H8][webhook]") {
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
// H2: the headers an auth parameter may not set.

// Regression test: headers an auth parameter may not set: framing, hop-by-hop, svix-* (H2).
TEST_CASE("H2: framing, hop-by-hop, connection-control and signing headers are refused in any case",
          "[H2][B1][webhook]") {
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

// Regression test: headers an auth parameter may not set: framing, hop-by-hop, svix-* (H2).
TEST_CASE("H2: CR, LF or NUL cannot smuggle a second header into a header name or value", "[H2][webhook]") {
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
// P1: errors quote at most 64 bytes of input, as the fuzzers' property reads them (fuzz_common.hpp).

// Regression test: the fuzzers' no-long-quote property, robust to escaping (P1).
TEST_CASE("P1: a long header name of backslashes is quoted shortened, and the fuzzers' whole-quote check tells so",
          "[H2][P1][webhook]") {
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
// H3: event types cast from integers outside the 53.

// Regression test: a filter value outside the 53 types shifted past the event mask (H3).
TEST_CASE("H3, H4: a filter holding a value outside the 53 types is refused, never shifted into the mask",
          "[H3][H4][webhook]") {
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
