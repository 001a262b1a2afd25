#include "keyhook/dispatch.hpp"
#include "keyhook/notification.hpp"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <set>
#include <sstream>
#include <string>
#include <unordered_set>
#include <vector>

using keyhook::auth_location;
using keyhook::auth_parameter;
using keyhook::delivery_id;
using keyhook::errc;
using keyhook::event_type;
using keyhook::notification;
using keyhook::secret;
using keyhook::tenant_settings;
using keyhook::validated_webhook;
using keyhook::webhook;

namespace {

const tenant_settings acme{"acme", true};

notification event(event_type type = event_type::AddProduct) {
    notification n;
    n.folder_name = "Loans";
    n.service_name = "Mortgage";
    n.entity_id = "5c3e8a2f-9d41-4b7e-a1c6-2f8d9e0b7a13";
    n.user_action = type;
    n.audit_type = "Product";
    n.file_name = "mortgage.xlsx";
    n.service_version_id = "v-17";
    n.tenant = "acme";
    n.request_time = keyhook::parse_timestamp("2026-03-14T09:26:53.589Z");
    return n;
}

webhook named_hook(std::string name, bool saved = true, keyhook::event_filter events = {}) {
    webhook w;
    w.name = std::move(name);
    w.endpoint = "https://hooks.example.com/" + w.name;
    w.saved = saved;
    w.events = std::move(events);
    return w;
}

// A saved webhook without a filter: "Orders" at https://hooks.example.com/in.
webhook named_hook() {
    webhook w;
    w.name = "Orders";
    w.endpoint = "https://hooks.example.com/in";
    w.saved = true;
    return w;
}

std::vector<std::string> names_of(const std::vector<keyhook::outbound_request>& requests) {
    std::vector<std::string> out;
    for (const auto& r : requests) out.push_back(r.webhook_name());
    return out;
}

}  // namespace

TEST_CASE("H4: fires only with the switch on, saved, and admitted by the filter", "[H4][dispatch]") {
    for (bool enabled : {false, true})
        for (bool saved : {false, true})
            for (bool filtered_out : {false, true}) {
                const tenant_settings tenant{"acme", enabled};
                const auto w =
                    keyhook::validate_webhook(named_hook("h", saved,
                                                         filtered_out ? keyhook::event_filter{event_type::DeleteProduct}
                                                                      : keyhook::event_filter{event_type::AddProduct}));
                const bool expected = enabled && saved && !filtered_out;
                INFO(enabled << saved << filtered_out);
                CHECK(keyhook::fires(tenant, w, event_type::AddProduct) == expected);
                CHECK(keyhook::dispatch(tenant, {w}, event()).size() == (expected ? 1u : 0u));
            }
}

TEST_CASE("H4: one request per firing webhook, in the order given", "[H4][dispatch]") {
    const auto webhooks = keyhook::validate_webhooks({
        named_hook("first"),
        named_hook("draft", false),
        named_hook("deletes-only", true, {event_type::DeleteProduct}),
        named_hook("adds-and-deletes", true, {event_type::AddProduct, event_type::DeleteProduct}),
        named_hook("last"),
    });
    CHECK(names_of(keyhook::dispatch(acme, webhooks, event(event_type::AddProduct))) ==
          std::vector<std::string>{"first", "adds-and-deletes", "last"});
    CHECK(names_of(keyhook::dispatch(acme, webhooks, event(event_type::DeleteProduct))) ==
          std::vector<std::string>{"first", "deletes-only", "adds-and-deletes", "last"});
    CHECK(names_of(keyhook::dispatch(acme, webhooks, event(event_type::PlatformLogin))) ==
          std::vector<std::string>{"first", "last"});
    CHECK(keyhook::dispatch({"acme", false}, webhooks, event()).empty());
    CHECK(keyhook::dispatch(acme, std::vector<validated_webhook>{}, event()).empty());
}

TEST_CASE("H3, H4: a filter admits exactly its types, for every event type", "[H3][H4][dispatch]") {
    const auto webhooks = keyhook::validate_webhooks({
        named_hook("all"),
        named_hook("retention", true, {event_type::EventsDataRetentionSucccess, event_type::EventsDataRetentionFailed}),
    });
    for (auto type : keyhook::all_event_types()) {
        INFO(to_string(type));
        const bool retention =
            type == event_type::EventsDataRetentionSucccess || type == event_type::EventsDataRetentionFailed;
        CHECK(keyhook::dispatch(acme, webhooks, event(type)).size() == (retention ? 2u : 1u));
    }
}

TEST_CASE("H8: the request: POST, final URL, headers, body", "[H8][H2][dispatch]") {
    auto w = named_hook("orders");
    w.endpoint = "https://hooks.example.com/in?source=keyhook";
    w.auth = {auth_parameter{auth_location::header, "x-api-key", secret("header-key-0123456789")},
              auth_parameter{auth_location::query, "token", secret("query key/1")}};
    w.signing_secret = secret("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw");
    const auto n = event();
    const auto requests = keyhook::dispatch(acme, keyhook::validate_webhooks({w}), n);
    REQUIRE(requests.size() == 1);
    const auto& r = requests[0];
    CHECK(r.method() == "POST");
    CHECK(r.url() == "https://hooks.example.com/in?source=keyhook&token=query%20key%2F1");
    REQUIRE(r.headers().size() == 2);
    CHECK(r.headers()[0] == keyhook::http_header{"Content-Type", "application/json", false});
    CHECK(r.headers()[1] == keyhook::http_header{"x-api-key", "header-key-0123456789", true});
    CHECK(r.body() == keyhook::notification_body(n));
    const auto parsed = nlohmann::json::parse(r.body());
    CHECK(parsed.at("UserAction") == "AddProduct");
    CHECK(parsed.at("Tenant") == "acme");
    REQUIRE(r.signing_secret());
    CHECK(*r.signing_secret() == *w.signing_secret);
    CHECK(r.webhook().config() == w);

    const keyhook::http_request plain = r.request();
    CHECK(plain.method == "POST");
    CHECK(plain.url == r.url());
    CHECK(plain.headers == r.headers());
    CHECK(plain.body == r.body());
}

TEST_CASE("H8: the body is written once and shared by every request", "[H8][dispatch]") {
    std::vector<webhook> list;
    for (int i = 0; i < 5; ++i) list.push_back(named_hook("h" + std::to_string(i)));
    const auto requests = keyhook::dispatch(acme, keyhook::validate_webhooks(list), event());
    REQUIRE(requests.size() == 5);
    for (const auto& r : requests) CHECK(&r.body() == &requests[0].body());
    // Another dispatch writes its own.
    const auto again = keyhook::dispatch(acme, keyhook::validate_webhooks(list), event());
    CHECK(&again[0].body() != &requests[0].body());
    CHECK(again[0].body() == requests[0].body());
}

TEST_CASE("H8: the delivery id is stable across retries, distinct across webhooks and events", "[H8][dispatch]") {
    const auto webhooks = keyhook::validate_webhooks({named_hook("a"), named_hook("b"), named_hook("c")});
    const auto first = keyhook::dispatch(acme, webhooks, event());
    const auto retry = keyhook::dispatch(acme, webhooks, event());
    REQUIRE(first.size() == 3);
    for (std::size_t i = 0; i < first.size(); ++i) {
        CHECK(first[i].id() == retry[i].id());
        CHECK(first[i].id() == keyhook::make_delivery_id(first[i].webhook_name(), first[i].body()));
    }
    CHECK(first == retry);
    // Re-validating the same configuration (a host restart) gives the same ids.
    const auto revalidated = keyhook::dispatch(
        acme, keyhook::validate_webhooks({named_hook("a"), named_hook("b"), named_hook("c")}), event());
    CHECK(revalidated[0].id() == first[0].id());
    // Distinct across webhooks.
    CHECK(first[0].id() != first[1].id());
    CHECK(first[1].id() != first[2].id());
    CHECK(first[0].id() != first[2].id());
    // Distinct across events: another type, another time, another folder.
    auto later = event();
    later.request_time += std::chrono::milliseconds(1);
    auto other_folder = event();
    other_folder.folder_name = "Loans2";
    for (const auto& other : {event(event_type::DeleteProduct), later, other_folder}) {
        const auto r = keyhook::dispatch(acme, webhooks, other);
        for (std::size_t i = 0; i < r.size(); ++i) CHECK(r[i].id() != first[i].id());
    }
}

TEST_CASE("H8: delivery ids of many webhooks and events are all distinct", "[H8][dispatch]") {
    std::vector<webhook> list;
    for (int i = 0; i < 20; ++i) list.push_back(named_hook("hook-" + std::to_string(i)));
    const auto webhooks = keyhook::validate_webhooks(list);
    std::unordered_set<delivery_id> ids;
    std::size_t count = 0;
    for (auto type : keyhook::all_event_types())
        for (const auto& r : keyhook::dispatch(acme, webhooks, event(type))) {
            ids.insert(r.id());
            ++count;
        }
    CHECK(count == 20 * keyhook::event_type_count);
    CHECK(ids.size() == count);

    // Changing any single byte of the body, or the name, changes the id.
    const std::string body = keyhook::notification_body(event());
    std::set<delivery_id> flipped{keyhook::make_delivery_id("a", body)};
    for (std::size_t i = 0; i < body.size(); ++i) {
        std::string b = body;
        b[i] = static_cast<char>(b[i] ^ 0x01);
        flipped.insert(keyhook::make_delivery_id("a", b));
    }
    CHECK(flipped.size() == body.size() + 1);
    CHECK(keyhook::make_delivery_id("a", body) != keyhook::make_delivery_id("b", body));
    CHECK(keyhook::make_delivery_id("ab", "c") != keyhook::make_delivery_id("a", "bc"));
    CHECK(keyhook::make_delivery_id("", "") != keyhook::make_delivery_id("", std::string(1, '\0')));
}

TEST_CASE("H8: delivery id text: msg_ and 32 lower-case hex digits", "[H8][dispatch]") {
    const auto id = keyhook::make_delivery_id("orders", keyhook::notification_body(event()));
    const std::string text = to_string(id);
    REQUIRE(text.size() == 36);
    CHECK(text.substr(0, 4) == "msg_");
    CHECK(text.find_first_not_of("0123456789abcdef", 4) == std::string::npos);
    CHECK(keyhook::parse_delivery_id(text) == id);
    CHECK(to_string(delivery_id(0x0123456789abcdefu, 0xfedcba9876543210u)) == "msg_0123456789abcdeffedcba9876543210");
    CHECK(keyhook::parse_delivery_id("msg_0123456789abcdeffedcba9876543210") ==
          delivery_id(0x0123456789abcdefu, 0xfedcba9876543210u));
    for (const char* bad : {"", "msg_", "msg_0123456789abcdeffedcba987654321", "msg_0123456789abcdeffedcba98765432100",
                            "MSG_0123456789abcdeffedcba9876543210", "msg_0123456789ABCDEFfedcba9876543210",
                            "msg-0123456789abcdeffedcba9876543210", "msg_0123456789abcdeffedcba987654321g"}) {
        INFO(bad);
        const auto r = keyhook::try_parse_delivery_id(bad);
        REQUIRE_FALSE(r);
        CHECK(r.error().code == errc::invalid_value);
    }
    std::ostringstream os;
    os << id;
    CHECK(os.str() == text);
}

TEST_CASE("dispatch refuses a notification of another tenant and invalid text", "[H4][H8][dispatch]") {
    const auto webhooks = keyhook::validate_webhooks({named_hook("a")});
    auto n = event();
    n.tenant = "other";
    auto r = keyhook::try_dispatch(acme, webhooks, n);
    REQUIRE_FALSE(r);
    CHECK(r.error().code == errc::invalid_value);
    CHECK(r.error().path == "Tenant");
    CHECK_THROWS_AS(keyhook::dispatch(acme, webhooks, n), keyhook::exception);
    n = event();
    n.folder_name = "bad \xff";
    r = keyhook::try_dispatch(acme, webhooks, n);
    REQUIRE_FALSE(r);
    CHECK(r.error().code == errc::invalid_utf8);
    CHECK(r.error().path == "FolderName");
}

TEST_CASE("dispatch from webhooks as configured validates them first", "[H1][H4][dispatch]") {
    auto bad = named_hook("b");
    bad.endpoint = "https://192.168.0.10/";
    const auto r = keyhook::try_dispatch(acme, std::vector<webhook>{named_hook("a"), bad}, event());
    REQUIRE_FALSE(r);
    CHECK(r.error().code == errc::forbidden_address);
    CHECK(r.error().path == "webhooks[1].endpoint");
    CHECK(keyhook::dispatch(acme, std::vector<webhook>{named_hook("a"), named_hook("c", false)}, event()).size() == 1);
    keyhook::endpoint_policy dev;
    dev.allow_non_global_addresses = true;
    CHECK(keyhook::dispatch(acme, std::vector<webhook>{bad}, event(), dev).size() == 1);
}

TEST_CASE("printing an outbound request shows no secret", "[H8][dispatch]") {
    auto w = named_hook("orders");
    w.auth = {auth_parameter{auth_location::header, "x-api-key", secret("header-key-0123456789")},
              auth_parameter{auth_location::query, "token", secret("query-key-0123456789")}};
    const auto r = keyhook::dispatch(acme, keyhook::validate_webhooks({w}), event());
    REQUIRE(r.size() == 1);
    std::ostringstream os;
    os << r[0];
    const auto text = os.str();
    CHECK(text.find("header-key-0123456789") == std::string::npos);
    CHECK(text.find("query-key-0123456789") == std::string::npos);
    // Query names show, values do not (P2).
    CHECK(text.find("POST https://hooks.example.com/orders?token=[redacted]") != std::string::npos);
    CHECK(text.find(to_string(r[0].id())) != std::string::npos);
}

TEST_CASE("validated webhooks are cheap handles that stay valid after a move", "[dispatch]") {
    auto v = keyhook::validate_webhook(named_hook("a"));
    const auto copy = v;
    const auto moved = std::move(v);
    CHECK(moved == copy);
    CHECK(v.name() == "a");  // NOLINT(bugprone-use-after-move): moving keeps the source valid by design
}

TEST_CASE("H8: a delivery id's JSON form is its written form", "[H8][dispatch]") {
    const auto id = keyhook::make_delivery_id("a", "body");
    const nlohmann::json j = id;
    CHECK(j == to_string(id));
    CHECK(j.get<delivery_id>() == id);
    CHECK_THROWS_AS(nlohmann::json("msg_nope").get<delivery_id>(), keyhook::exception);
}

// Regression test: an event type outside the 53 (H5) must not be dispatched.
TEST_CASE("H5, H6: a notification whose event is outside the 53 types is neither written nor dispatched",
          "[H5][H6][H4][dispatch]") {
    keyhook::notification n;
    n.tenant = "acme";
    n.request_time = keyhook::parse_timestamp("2026-11-26T10:00:00Z");
    n.user_action = static_cast<keyhook::event_type>(53);
    const auto body = keyhook::try_notification_body(n);
    REQUIRE_FALSE(body);
    CHECK(body.error().code == errc::unknown_event);
    CHECK(body.error().path == "UserAction");
    const keyhook::tenant_settings tenant{"acme", true};
    const auto sent = keyhook::try_dispatch(tenant, std::vector<webhook>{named_hook()}, n);
    REQUIRE_FALSE(sent);
    CHECK(sent.error().code == errc::unknown_event);
    // The other side: the last of the 53 is written and sent.
    n.user_action = keyhook::event_type::EventsDataRetentionFailed;
    REQUIRE(keyhook::try_notification_body(n));
    const auto one = keyhook::try_dispatch(tenant, std::vector<webhook>{named_hook()}, n);
    REQUIRE(one);
    CHECK(one->size() == 1);
}

// Host-built values: names identify webhooks (delivery id, health, stores),
// so two webhooks validated one at a time under one name must not get one id.
TEST_CASE("H12: dispatch refuses validated webhooks that repeat a name, as the list validator does",
          "[H12][H2][dispatch]") {
    auto a = named_hook("crm");
    auto b = named_hook("crm");
    b.endpoint = "https://b.example.org/other";
    const std::vector<validated_webhook> twice{keyhook::validate_webhook(a), keyhook::validate_webhook(named_hook("x")),
                                               keyhook::validate_webhook(b)};
    const auto r = keyhook::try_dispatch(acme, twice, event());
    REQUIRE_FALSE(r);
    CHECK(r.error().code == errc::invalid_name);
    CHECK(r.error().path == "webhooks[2].name");
    CHECK(r.error().message.find("webhooks[0]") != std::string::npos);
    // The same message and path as the list form gives.
    const auto listed = keyhook::try_validate_webhooks({a, named_hook("x"), b});
    REQUIRE_FALSE(listed);
    CHECK(listed.error().path == r.error().path);
    CHECK(listed.error().message == r.error().message);
    CHECK_THROWS_AS(keyhook::dispatch(acme, twice, event()), keyhook::exception);
    // Refused whether or not they fire: the list itself is wrong.
    CHECK_FALSE(keyhook::try_dispatch({"acme", false}, twice, event()));
    // The first repeat in list order is named, whichever name it is.
    const std::vector<validated_webhook> several{
        keyhook::validate_webhook(named_hook("p")), keyhook::validate_webhook(named_hook("q")),
        keyhook::validate_webhook(named_hook("r")), keyhook::validate_webhook(named_hook("q")),
        keyhook::validate_webhook(named_hook("p"))};
    CHECK(keyhook::try_dispatch(acme, several, event()).error().path == "webhooks[3].name");
    std::vector<validated_webhook> many;
    for (int i = 0; i < 300; ++i) many.push_back(keyhook::validate_webhook(named_hook("n" + std::to_string(i))));
    CHECK(keyhook::try_dispatch(acme, many, event()));
    many.push_back(keyhook::validate_webhook(named_hook("n150")));
    const auto late = keyhook::try_dispatch(acme, many, event());
    REQUIRE_FALSE(late);
    CHECK(late.error().path == "webhooks[300].name");
    CHECK(late.error().message.find("webhooks[150]") != std::string::npos);
    // Names differing in one byte, or only in case, are different names.
    const std::vector<validated_webhook> distinct{keyhook::validate_webhook(named_hook("crm")),
                                                  keyhook::validate_webhook(named_hook("Crm")),
                                                  keyhook::validate_webhook(named_hook("crm2"))};
    const auto ok = keyhook::try_dispatch(acme, distinct, event());
    REQUIRE(ok);
    CHECK(ok->size() == 3);
    // One webhook is fine; the same handle twice repeats its name.
    CHECK(keyhook::try_dispatch(acme, std::vector<validated_webhook>{twice[0]}, event()));
    CHECK(keyhook::try_dispatch(acme, std::vector<validated_webhook>{twice[0], twice[0]}, event()).error().path ==
          "webhooks[1].name");
}
