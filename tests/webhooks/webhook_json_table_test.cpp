// The webhook configuration's records (webhook, auth_parameter,
// tenant_settings, webhook_settings) read, written and compared through their
// member tables: the readers' errors as they were written by hand, byte for
// byte; to_json and printing without a secret; the store form read back.
#include "keyhook/webhook.hpp"
#include "keyhook/webhook_json.hpp"
#include "keyhook/webhook_validation.hpp"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <sstream>
#include <string>
#include <vector>

using keyhook::errc;

namespace {

// One bad input, the reader it is given to, and the error that reader gave
// when it was written by hand (code, path, message), kept byte for byte.
// Readers: 's' try_webhook_settings_from_json, 'w' try_webhook_from_json at
// "webhooks[4]", 'v' the same at "", 't' try_tenant_settings_from_json at
// "settings.tenant", 'l' try_validated_webhooks_from_json at "hooks".
struct recorded_error {
    char reader;
    const char* json;
    errc code;
    const char* path;
    const char* message;
};

const recorded_error recorded_errors[] = {
    {'s', R"([])", errc::wrong_type, "", "expected an object, got array"},
    {'s', R"(null)", errc::wrong_type, "", "expected an object, got null"},
    {'s', R"("text")", errc::wrong_type, "", "expected an object, got string"},
    {'s', R"({})", errc::missing_member, "tenant", "required member is missing"},
    {'s', R"({"webhooks": []})", errc::missing_member, "tenant", "required member is missing"},
    {'s', R"({"tenant": null, "webhooks": []})", errc::wrong_type, "tenant", "expected an object, got null"},
    {'s', R"({"tenant": 3, "webhooks": []})", errc::wrong_type, "tenant", "expected an object, got number"},
    {'s', R"({"tenant": [], "webhooks": []})", errc::wrong_type, "tenant", "expected an object, got array"},
    {'s', R"({"tenant": {"name": "t", "webhooksEnabled": true}})", errc::missing_member, "webhooks",
     "required member is missing"},
    {'s', R"({"tenant": {"name": "t", "webhooksEnabled": true}, "webhooks": null})", errc::wrong_type, "webhooks",
     "expected an array of webhooks, got null"},
    {'s', R"({"tenant": {"name": "t", "webhooksEnabled": true}, "webhooks": {}})", errc::wrong_type, "webhooks",
     "expected an array of webhooks, got object"},
    {'s', R"({"tenant": {"name": "t", "webhooksEnabled": true}, "webhooks": "x"})", errc::wrong_type, "webhooks",
     "expected an array of webhooks, got string"},
    {'s', R"({"tenant": {"name": "t", "webhooksEnabled": "yes"}, "webhooks": []})", errc::wrong_type,
     "tenant.webhooksEnabled", "expected true or false, got string"},
    {'s', R"({"tenant": {"name": "t", "webhooksEnabled": null}, "webhooks": []})", errc::missing_member,
     "tenant.webhooksEnabled", "required member is missing"},
    {'s', R"({"tenant": {"name": "t"}, "webhooks": []})", errc::missing_member, "tenant.webhooksEnabled",
     "required member is missing"},
    {'s', R"({"tenant": {"webhooksEnabled": true}, "webhooks": []})", errc::missing_member, "tenant.name",
     "required member is missing"},
    {'s', R"({"tenant": {"name": null, "webhooksEnabled": true}, "webhooks": []})", errc::missing_member, "tenant.name",
     "required member is missing"},
    {'s', R"({"tenant": {"name": 5, "webhooksEnabled": true}, "webhooks": []})", errc::wrong_type, "tenant.name",
     "expected a string, got number"},
    {'s', R"({"tenant": {"name": ["secret-looking"], "webhooksEnabled": true}, "webhooks": []})", errc::wrong_type,
     "tenant.name", "expected a string, got array"},
    {'s', R"({"tenant": {"name": "t", "webhooksEnabled": 1}, "webhooks": {}})", errc::wrong_type,
     "tenant.webhooksEnabled", "expected true or false, got number"},
    {'s', R"({"webhooks": {}, "tenant": {"name": 1}})", errc::wrong_type, "tenant.name",
     "expected a string, got number"},
    {'s', R"({"tenant": {"name": "t", "webhooksEnabled": true}, "webhooks": [7]})", errc::wrong_type, "webhooks[0]",
     "expected an object, got number"},
    {'s', R"({"tenant": {"name": "t", "webhooksEnabled": true}, "webhooks": [null]})", errc::wrong_type, "webhooks[0]",
     "expected an object, got null"},
    {'s',
     R"({"tenant": {"name": "t", "webhooksEnabled": true}, "webhooks": [{"name": "A", "endpoint": "https://a.example.com/", "saved": true}, 7]})",
     errc::wrong_type, "webhooks[1]", "expected an object, got number"},
    {'s',
     R"({"tenant": {"name": "t", "webhooksEnabled": true}, "webhooks": [{"name": "A", "endpoint": "https://a.example.com/", "saved": true}, {"name": "B", "endpoint": "https://localhost/", "saved": true}]})",
     errc::forbidden_address, "webhooks[1].endpoint",
     "has host \"localhost\", a loopback name that a webhook may not reach"},
    {'s',
     R"({"tenant": {"name": "t", "webhooksEnabled": true}, "webhooks": [{"name": "A", "endpoint": "https://localhost/", "saved": true}, {"name": 1}]})",
     errc::forbidden_address, "webhooks[0].endpoint",
     "has host \"localhost\", a loopback name that a webhook may not reach"},
    {'s',
     R"({"tenant": {"name": "t", "webhooksEnabled": true}, "webhooks": [{"name": "A", "endpoint": "https://a.example.com/", "saved": true}, {"name": "A", "endpoint": "https://b.example.com/", "saved": true}]})",
     errc::invalid_name, "webhooks[1].name",
     "\"A\" is already the name of webhooks[0]; names identify webhooks and must be unique"},
    {'s',
     R"({"tenant": {"name": "t", "webhooksEnabled": true}, "webhooks": [{"name": "", "endpoint": "https://a.example.com/", "saved": true}]})",
     errc::invalid_name, "webhooks[0].name", "is empty; a webhook needs a name"},
    {'s',
     R"({"tenant": {"name": "t", "webhooksEnabled": true}, "webhooks": [{"name": "A", "endpoint": "http://a.example.com/", "saved": true}]})",
     errc::invalid_endpoint, "webhooks[0].endpoint",
     "uses plain http; https is required (http needs the opt-in for local development)"},
    {'s',
     R"({"tenant": {"name": "t", "webhooksEnabled": true}, "webhooks": [{"name": "A", "endpoint": "https://user:pw@a.example.com/", "saved": true}]})",
     errc::invalid_endpoint, "webhooks[0].endpoint", "has user-info ('user@'); credentials belong in auth parameters"},
    {'s',
     R"({"tenant": {"name": "t", "webhooksEnabled": true}, "webhooks": [{"name": "A", "endpoint": "https://a.example.com/", "saved": true, "signingSecret": "whsec_short"}]})",
     errc::invalid_value, "webhooks[0].signingSecret", "not whsec_ + base64: base64 text has an impossible length"},
    {'s',
     R"({"tenant": {"name": "t", "webhooksEnabled": true}, "webhooks": [{"name": "A", "endpoint": "https://a.example.com/", "saved": true, "signingSecret": "not-a-key-TopSecret123"}]})",
     errc::invalid_value, "webhooks[0].signingSecret", "not whsec_ + base64: invalid base64 character at offset 3"},
    {'s',
     R"({"tenant": {"name": "t", "webhooksEnabled": true}, "webhooks": [{"name": "A", "endpoint": "https://a.example.com/", "saved": true, "auth": [{"in": "header", "name": "x-api-key", "value": "ok-value"}, {"in": "header", "name": "Content-Length", "value": "5"}]}]})",
     errc::invalid_header, "webhooks[0].auth[1].name",
     "header \"Content-Length\" is set by the HTTP client or by keyhook; an auth parameter may not set it"},
    {'s',
     R"({"tenant": {"name": "t", "webhooksEnabled": true}, "webhooks": [{"name": "A", "endpoint": "https://a.example.com/", "saved": true, "auth": [{"in": "query", "name": "api_key", "value": "a\r\nb"}]}]})",
     errc::invalid_parameter, "webhooks[0].auth[0].value",
     "query parameter value contains a carriage return (CR) at byte 1"},
    {'s',
     R"({"tenant": {"name": "t", "webhooksEnabled": true}, "webhooks": [{"name": "A", "endpoint": "https://a.example.com/?api_key=one-secret-value", "saved": true, "auth": [{"in": "query", "name": "api_key", "value": "other-secret-value"}]}]})",
     errc::conflicting_keys, "webhooks[0].auth[0].value",
     "the query parameter api_key differs from the API key in the endpoint's query parameter api_key; the receiver "
     "refuses a request whose keys differ (H7), so every delivery would fail"},
    {'s',
     R"({"tenant": {"name": "t", "webhooksEnabled": true}, "webhooks": [{"name": "A", "endpoint": "https://a.example.com/", "saved": true, "auth": [{"in": "header", "name": "x-api-key", "value": "TopSecret-1"}, {"in": "query", "name": "api_key", "value": "TopSecret-2"}]}]})",
     errc::conflicting_keys, "webhooks[0].auth[1].value",
     "the query parameter api_key differs from the API key in the header x-api-key of webhooks[0].auth[0]; the "
     "receiver refuses a request whose keys differ (H7), so every delivery would fail"},
    {'w', R"([])", errc::wrong_type, "webhooks[4]", "expected an object, got array"},
    {'w', R"(null)", errc::wrong_type, "webhooks[4]", "expected an object, got null"},
    {'w', R"({})", errc::missing_member, "webhooks[4].name", "required member is missing"},
    {'w', R"({"name": null, "endpoint": "https://a.example.com/", "saved": true})", errc::missing_member,
     "webhooks[4].name", "required member is missing"},
    {'w', R"({"name": 1, "endpoint": "https://a.example.com/", "saved": true})", errc::wrong_type, "webhooks[4].name",
     "expected a string, got number"},
    {'w', R"({"name": "A", "saved": true})", errc::missing_member, "webhooks[4].endpoint",
     "required member is missing"},
    {'w', R"({"name": "A", "endpoint": null, "saved": true})", errc::missing_member, "webhooks[4].endpoint",
     "required member is missing"},
    {'w', R"({"name": "A", "endpoint": {}, "saved": true})", errc::wrong_type, "webhooks[4].endpoint",
     "expected a string, got object"},
    {'w', R"({"name": "A", "endpoint": "https://a.example.com/"})", errc::missing_member, "webhooks[4].saved",
     "required member is missing"},
    {'w', R"({"name": "A", "endpoint": "https://a.example.com/", "saved": null})", errc::missing_member,
     "webhooks[4].saved", "required member is missing"},
    {'w', R"({"name": "A", "endpoint": "https://a.example.com/", "saved": "true"})", errc::wrong_type,
     "webhooks[4].saved", "expected true or false, got string"},
    {'w', R"({"name": "A", "endpoint": "https://a.example.com/", "saved": 1})", errc::wrong_type, "webhooks[4].saved",
     "expected true or false, got number"},
    {'w', R"({"name": "A", "endpoint": "https://a.example.com/", "saved": true, "events": "AddProduct"})",
     errc::wrong_type, "webhooks[4].events", "expected an array of event type names, got string"},
    {'w', R"({"name": "A", "endpoint": "https://a.example.com/", "saved": true, "events": {}})", errc::wrong_type,
     "webhooks[4].events", "expected an array of event type names, got object"},
    {'w', R"({"name": "A", "endpoint": "https://a.example.com/", "saved": true, "events": [1]})", errc::wrong_type,
     "webhooks[4].events[0]", "expected an event type name, got number"},
    {'w', R"({"name": "A", "endpoint": "https://a.example.com/", "saved": true, "events": [null]})", errc::wrong_type,
     "webhooks[4].events[0]", "expected an event type name, got null"},
    {'w',
     R"({"name": "A", "endpoint": "https://a.example.com/", "saved": true, "events": ["AddProduct", "AddProdcut"]})",
     errc::unknown_event, "webhooks[4].events[1]", "unknown event type \"AddProdcut\"; did you mean \"AddProduct\"?"},
    {'w', R"({"name": "A", "endpoint": "https://a.example.com/", "saved": true, "events": [""]})", errc::unknown_event,
     "webhooks[4].events[0]", "unknown event type \"\"; did you mean \"CALogin\"?"},
    {'w', R"({"name": "A", "endpoint": "https://a.example.com/", "saved": true, "events": ["add product\u001b[31m"]})",
     errc::unknown_event, "webhooks[4].events[0]",
     "unknown event type \"add product\\x1b[31m\"; did you mean \"AddProduct\"?"},
    {'w',
     R"({"name": "A", "endpoint": "https://a.example.com/", "saved": true, "events": ["xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"]})",
     errc::unknown_event, "webhooks[4].events[0]",
     "unknown event type \"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\"...; did you mean "
     "\"TestCasesExecuted\"?"},
    {'w', R"({"name": "A", "endpoint": "https://a.example.com/", "saved": true, "auth": {}})", errc::wrong_type,
     "webhooks[4].auth", "expected an array of authentication parameters, got object"},
    {'w', R"({"name": "A", "endpoint": "https://a.example.com/", "saved": true, "auth": "x"})", errc::wrong_type,
     "webhooks[4].auth", "expected an array of authentication parameters, got string"},
    {'w', R"({"name": "A", "endpoint": "https://a.example.com/", "saved": true, "auth": [3]})", errc::wrong_type,
     "webhooks[4].auth[0]", "expected an object, got number"},
    {'w', R"({"name": "A", "endpoint": "https://a.example.com/", "saved": true, "auth": [null]})", errc::wrong_type,
     "webhooks[4].auth[0]", "expected an object, got null"},
    {'w', R"({"name": "A", "endpoint": "https://a.example.com/", "saved": true, "auth": [{}]})", errc::missing_member,
     "webhooks[4].auth[0].in", "required member is missing"},
    {'w',
     R"({"name": "A", "endpoint": "https://a.example.com/", "saved": true, "auth": [{"in": null, "name": "x", "value": "y"}]})",
     errc::missing_member, "webhooks[4].auth[0].in", "required member is missing"},
    {'w',
     R"({"name": "A", "endpoint": "https://a.example.com/", "saved": true, "auth": [{"in": 1, "name": "x", "value": "y"}]})",
     errc::wrong_type, "webhooks[4].auth[0].in", "expected a string, got number"},
    {'w',
     R"({"name": "A", "endpoint": "https://a.example.com/", "saved": true, "auth": [{"in": "body", "name": "x", "value": "y"}]})",
     errc::invalid_value, "webhooks[4].auth[0].in", "expected \"header\" or \"query\", got \"body\""},
    {'w',
     R"({"name": "A", "endpoint": "https://a.example.com/", "saved": true, "auth": [{"in": "Header", "name": "x", "value": "y"}]})",
     errc::invalid_value, "webhooks[4].auth[0].in", "expected \"header\" or \"query\", got \"Header\""},
    {'w',
     R"({"name": "A", "endpoint": "https://a.example.com/", "saved": true, "auth": [{"in": "\u001b[2J\r\nlong long long long long long long long long long long long long long long long", "name": "x", "value": "y"}]})",
     errc::invalid_value, "webhooks[4].auth[0].in",
     "expected \"header\" or \"query\", got \"\\x1b[2J\\x0d\\x0along long long long long long long long long long long "
     "lon\"..."},
    {'w',
     R"({"name": "A", "endpoint": "https://a.example.com/", "saved": true, "auth": [{"in": "header", "value": "y"}]})",
     errc::missing_member, "webhooks[4].auth[0].name", "required member is missing"},
    {'w',
     R"({"name": "A", "endpoint": "https://a.example.com/", "saved": true, "auth": [{"in": "header", "name": 4, "value": "y"}]})",
     errc::wrong_type, "webhooks[4].auth[0].name", "expected a string, got number"},
    {'w',
     R"({"name": "A", "endpoint": "https://a.example.com/", "saved": true, "auth": [{"in": "header", "name": "x"}]})",
     errc::missing_member, "webhooks[4].auth[0].value", "required member is missing"},
    {'w',
     R"({"name": "A", "endpoint": "https://a.example.com/", "saved": true, "auth": [{"in": "header", "name": "x", "value": null}]})",
     errc::missing_member, "webhooks[4].auth[0].value", "required member is missing"},
    {'w',
     R"({"name": "A", "endpoint": "https://a.example.com/", "saved": true, "auth": [{"in": "header", "name": "x", "value": ["TopSecret123"]}]})",
     errc::wrong_type, "webhooks[4].auth[0].value", "expected a string, got array"},
    {'w',
     R"({"name": "A", "endpoint": "https://a.example.com/", "saved": true, "auth": [{"in": "header", "name": "x", "value": 12345678901234}]})",
     errc::wrong_type, "webhooks[4].auth[0].value", "expected a string, got number"},
    {'w',
     R"({"name": "A", "endpoint": "https://a.example.com/", "saved": true, "auth": [{"name": "x", "value": "y"}]})",
     errc::missing_member, "webhooks[4].auth[0].in", "required member is missing"},
    {'w',
     R"({"name": "A", "endpoint": "https://a.example.com/", "saved": true, "auth": [{"in": "header", "name": "x", "value": "y"}, 5]})",
     errc::wrong_type, "webhooks[4].auth[1]", "expected an object, got number"},
    {'w', R"({"name": "A", "endpoint": "https://a.example.com/", "saved": true, "signingSecret": 12})",
     errc::wrong_type, "webhooks[4].signingSecret", "expected a string, got number"},
    {'w', R"({"name": "A", "endpoint": "https://a.example.com/", "saved": true, "signingSecret": ["whsec_TopSecret"]})",
     errc::wrong_type, "webhooks[4].signingSecret", "expected a string, got array"},
    {'w', R"({"name": "A", "endpoint": "https://a.example.com/", "saved": true, "signingSecret": {}})",
     errc::wrong_type, "webhooks[4].signingSecret", "expected a string, got object"},
    {'w', R"({"name": "A", "endpoint": 1, "saved": "x", "events": 2, "auth": 3, "signingSecret": 4})", errc::wrong_type,
     "webhooks[4].endpoint", "expected a string, got number"},
    {'w',
     R"({"name": "A", "endpoint": "https://a.example.com/", "saved": "x", "events": 2, "auth": 3, "signingSecret": 4})",
     errc::wrong_type, "webhooks[4].saved", "expected true or false, got string"},
    {'w',
     R"({"name": "A", "endpoint": "https://a.example.com/", "saved": true, "events": 2, "auth": 3, "signingSecret": 4})",
     errc::wrong_type, "webhooks[4].events", "expected an array of event type names, got number"},
    {'w',
     R"({"name": "A", "endpoint": "https://a.example.com/", "saved": true, "events": [], "auth": 3, "signingSecret": 4})",
     errc::wrong_type, "webhooks[4].auth", "expected an array of authentication parameters, got number"},
    {'w',
     R"({"name": "A", "endpoint": "https://a.example.com/", "saved": true, "events": [], "auth": [], "signingSecret": 4})",
     errc::wrong_type, "webhooks[4].signingSecret", "expected a string, got number"},
    {'w', R"({"auth": [{"in": "x"}], "events": [1], "saved": 1})", errc::missing_member, "webhooks[4].name",
     "required member is missing"},
    {'v',
     R"({"name": "A", "endpoint": "https://a.example.com/", "saved": true, "auth": [{"in": "query", "name": "x", "value": "y"}, {"in": "bad", "name": "x", "value": "y"}]})",
     errc::invalid_value, "auth[1].in", "expected \"header\" or \"query\", got \"bad\""},
    {'v', R"(7)", errc::wrong_type, "", "expected an object, got number"},
    {'v', R"({"name": "A", "endpoint": "https://a.example.com/"})", errc::missing_member, "saved",
     "required member is missing"},
    {'t', R"(7)", errc::wrong_type, "settings.tenant", "expected an object, got number"},
    {'t', R"(null)", errc::wrong_type, "settings.tenant", "expected an object, got null"},
    {'t', R"({})", errc::missing_member, "settings.tenant.name", "required member is missing"},
    {'t', R"({"name": "t", "webhooksEnabled": "no"})", errc::wrong_type, "settings.tenant.webhooksEnabled",
     "expected true or false, got string"},
    {'l', R"({})", errc::wrong_type, "hooks", "expected an array of webhooks, got object"},
    {'l', R"(null)", errc::wrong_type, "hooks", "expected an array of webhooks, got null"},
    {'l', R"([{"name": "A"}])", errc::missing_member, "hooks[0].endpoint", "required member is missing"},
    {'l',
     R"([{"name": "A", "endpoint": "https://a.example.com/", "saved": true}, {"name": "A", "endpoint": "https://a.example.com/", "saved": true}])",
     errc::invalid_name, "hooks[1].name",
     "\"A\" is already the name of hooks[0]; names identify webhooks and must be unique"},
};

keyhook::result<void> read_with(char reader, const nlohmann::json& j) {
    const auto drop = [](const auto& r) { return r ? keyhook::result<void>() : keyhook::result<void>(r.error()); };
    switch (reader) {
        case 's': return drop(keyhook::try_webhook_settings_from_json(j));
        case 'w': return drop(keyhook::try_webhook_from_json(j, "webhooks[4]"));
        case 'v': return drop(keyhook::try_webhook_from_json(j));
        case 't': return drop(keyhook::try_tenant_settings_from_json(j, "settings.tenant"));
        default: return drop(keyhook::try_validated_webhooks_from_json(j, {}, "hooks"));
    }
}

// Secrets the documents below hold; none may appear in any output.
const char* const secrets_held[] = {"key-abcdefghijk", "Header-Secret-0123", "c2VjcmV0c2VjcmV0c2VjcmV0",
                                    "typed-in-password"};

const char* const settings_with_secrets = R"({"tenant": {"name": "acme", "webhooksEnabled": true},
    "webhooks": [
        {"name": "A", "endpoint": "https://user.example.com/in?api_key=key-abcdefghijk", "saved": true,
         "events": ["DeleteProduct", "AddProduct"],
         "auth": [{"in": "query", "name": "api_key", "value": "key-abcdefghijk"},
                  {"in": "header", "name": "x-extra", "value": "Header-Secret-0123"}],
         "signingSecret": "whsec_c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0"},
        {"name": "B", "endpoint": "https://b.example.com/", "saved": false}]})";

void check_no_secret(const std::string& text) {
    INFO(text);
    for (const char* s : secrets_held) CHECK(text.find(s) == std::string::npos);
}

}  // namespace

TEST_CASE("H1, H2, H3: the configuration readers' errors are the hand-written readers' byte for byte",
          "[H1][H2][H3][webhook]") {
    for (const auto& c : recorded_errors) {
        INFO(c.reader << ' ' << c.json);
        const auto r = read_with(c.reader, nlohmann::json::parse(c.json));
        REQUIRE_FALSE(r);
        CHECK(r.error().code == c.code);
        CHECK(r.error().path == c.path);
        CHECK(r.error().message == c.message);
        // M3: a value of the wrong type is named by its type, a refused secret never shown.
        CHECK(r.error().what().find("TopSecret") == std::string::npos);
    }
}

TEST_CASE("H2, J3: more than 32 authentication parameters are refused before any is read, as before",
          "[H2][J3][webhook]") {
    auto w = nlohmann::json::parse(R"({"name": "A", "endpoint": "https://a.example.com/", "saved": true})");
    w["auth"] = nlohmann::json::array();
    for (int i = 0; i < 33; ++i) w["auth"].push_back(7);  // not one is an object: the count comes first
    const auto r = keyhook::try_webhook_from_json(w, "webhooks[4]");
    REQUIRE_FALSE(r);
    CHECK(r.error().code == errc::limit_exceeded);
    CHECK(r.error().path == "webhooks[4].auth");
    CHECK(r.error().message == "has 33 authentication parameters; at most 32 are allowed");
    w["auth"].erase(0);
    const auto at_limit = keyhook::try_webhook_from_json(w, "webhooks[4]");
    REQUIRE_FALSE(at_limit);
    CHECK(at_limit.error().path == "webhooks[4].auth[0]");
}

TEST_CASE("M3, B1, P2: to_json of a webhook and of the settings masks every secret as a secret's JSON form does",
          "[M3][B1][P2][webhook]") {
    const auto settings = keyhook::webhook_settings_from_json(nlohmann::json::parse(settings_with_secrets));
    const nlohmann::json j = settings;
    check_no_secret(j.dump());
    const auto& a = j.at("webhooks").at(0);
    const auto& config = settings.webhooks[0].config();
    CHECK(a.at("auth").at(0).at("value") == nlohmann::json(config.auth[0].value));
    CHECK(a.at("auth").at(1).at("value") == config.auth[1].value.masked());
    CHECK(a.at("signingSecret") == nlohmann::json(*config.signing_secret));
    CHECK(a.at("signingSecret").get<std::string>().rfind("whsec_***", 0) == 0);
    CHECK(a.at("endpoint") == keyhook::redact_url(config.endpoint));
    CHECK(a.at("events") == nlohmann::json({"AddProduct", "DeleteProduct"}));
    CHECK(a.at("auth").at(0).at("in") == "query");
    CHECK(j.at("webhooks").at(1).at("signingSecret").is_null());
    CHECK(j.at("tenant") == nlohmann::json({{"name", "acme"}, {"webhooksEnabled", true}}));

    // The ordered form writes the table's order.
    const nlohmann::ordered_json one = config;
    std::vector<std::string> names;
    for (const auto& item : one.items()) names.push_back(item.key());
    CHECK(names == std::vector<std::string>{"name", "endpoint", "saved", "events", "auth", "signingSecret"});
    check_no_secret(one.dump());
}

TEST_CASE("M3: printing a webhook, its settings and the errors of a refused one shows no secret", "[M3][webhook]") {
    const auto settings = keyhook::webhook_settings_from_json(nlohmann::json::parse(settings_with_secrets));
    std::ostringstream os;
    os << settings << '\n' << settings.webhooks[0].config() << '\n' << settings.webhooks[0].config().auth[1];
    check_no_secret(os.str());

    // Every refusal of a document holding the secrets: the errors name where and why, never the values.
    const auto doc = nlohmann::json::parse(settings_with_secrets);
    const auto refused = [&](nlohmann::json d) {
        const auto r = keyhook::try_webhook_settings_from_json(d);
        REQUIRE_FALSE(r);
        std::ostringstream text;
        text << r.error() << ' ' << r;
        check_no_secret(text.str());
    };
    auto wrong_in = doc;
    wrong_in["webhooks"][0]["auth"][1]["in"] = "body";
    refused(wrong_in);
    auto value_not_string = doc;
    value_not_string["webhooks"][0]["auth"][1]["value"] = nlohmann::json::array({"Header-Secret-0123"});
    refused(value_not_string);
    auto secret_not_string = doc;
    secret_not_string["webhooks"][0]["signingSecret"] = {{"k", "whsec_c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0"}};
    refused(secret_not_string);
    auto bad_secret = doc;
    bad_secret["webhooks"][0]["signingSecret"] = "whsec_c2VjcmV0c2VjcmV0c2VjcmV0!";
    refused(bad_secret);
    auto conflicting = doc;
    conflicting["webhooks"][0]["auth"][0]["value"] = "Header-Secret-0123";
    refused(conflicting);
    auto user_info = doc;
    user_info["webhooks"][0]["endpoint"] = "https://u:typed-in-password@a.example.com/";
    refused(user_info);
}

TEST_CASE("B1, H2: the store form keeps every secret and reads back equal; only it does", "[B1][H2][webhook]") {
    const auto doc = nlohmann::json::parse(settings_with_secrets);
    const auto settings = keyhook::webhook_settings_from_json(doc);
    nlohmann::json stored;
    keyhook::to_store_json(stored, settings);
    const auto back = keyhook::webhook_settings_from_json(stored);
    CHECK(back == settings);
    CHECK(back.webhooks[0].target_url() == settings.webhooks[0].target_url());
    CHECK(stored.at("webhooks").at(0).at("signingSecret") == doc["webhooks"][0]["signingSecret"]);
    CHECK(stored.at("webhooks").at(0).at("endpoint") == doc["webhooks"][0]["endpoint"]);

    nlohmann::ordered_json one;
    keyhook::to_store_json(one, settings.webhooks[0].config());
    CHECK(keyhook::webhook_from_json<nlohmann::ordered_json>(one) == settings.webhooks[0].config());

    // What to_json wrote reads back with the masked values: equal only without secrets.
    const nlohmann::json shown = settings;
    CHECK(keyhook::webhook_from_json(shown.at("webhooks").at(1)) == settings.webhooks[1].config());
    CHECK(keyhook::webhook_from_json(shown.at("webhooks").at(0)) != settings.webhooks[0].config());
}

TEST_CASE("H1, H2: equality of the configuration records comes from their tables, member by member",
          "[H1][H2][webhook]") {
    const auto base = keyhook::webhook_settings_from_json(nlohmann::json::parse(settings_with_secrets));
    const auto w = base.webhooks[0].config();
    CHECK(w == base.webhooks[0].config());
    auto other = w;
    other.name = "Z";
    CHECK(other != w);
    other = w;
    other.endpoint += "x";
    CHECK(other != w);
    other = w;
    other.saved = false;
    CHECK(other != w);
    other = w;
    other.events.clear();
    CHECK(other != w);
    other = w;
    other.auth[1].in = keyhook::auth_location::query;
    CHECK(other != w);
    other = w;
    other.auth[1].value = keyhook::secret("Header-Secret-0124");
    CHECK(other != w);
    other = w;
    other.signing_secret.reset();
    CHECK(other != w);
    CHECK(keyhook::tenant_settings{"acme", true} != keyhook::tenant_settings{"acme", false});
    auto settings = base;
    settings.webhooks.pop_back();
    CHECK(settings != base);
}
