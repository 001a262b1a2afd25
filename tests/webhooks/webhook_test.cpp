#include "keyhook/webhook.hpp"
#include "keyhook/webhook_validation.hpp"
#include "keyhook/webhook_json.hpp"
#include "keyhook/base64.hpp"

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
