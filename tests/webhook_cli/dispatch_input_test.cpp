// The input document of webhook_dispatch and webhook_deliver
// (examples/shared/dispatch_input.hpp): a tenant, its webhooks and one event.
#include "../../examples/shared/dispatch_input.hpp"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <chrono>
#include <cstdint>
#include <map>
#include <string>

using keyhook::errc;
using keyhook::event_type;

TEST_CASE("reading a dispatch input from JSON", "[H3][dispatch]") {
    const auto now = keyhook::parse_timestamp("2026-01-02T03:04:05.678Z");
    const auto in = examples::dispatch_input_from_json(nlohmann::json::parse(R"({
        "tenant": {"name": "acme", "webhooksEnabled": true},
        "webhooks": [{"name": "a", "endpoint": "https://a.example.com/", "saved": true}],
        "event": {"UserAction": "DeleteProduct", "FolderName": "Loans", "FileName": null, "Extra": 1}})"),
                                                       now);
    CHECK(in.settings.tenant.name == "acme");
    CHECK(in.event.user_action == event_type::DeleteProduct);
    CHECK(in.event.folder_name == "Loans");
    CHECK(in.event.file_name.empty());
    CHECK(in.event.service_name.empty());
    CHECK(in.event.tenant == "acme");
    CHECK(in.event.request_time == now);
    CHECK(keyhook::dispatch(in.settings.tenant, in.settings.webhooks, in.event).size() == 1);

    struct bad_case {
        const char* event;
        errc code;
        const char* path;
    };
    const bad_case cases[] = {
        {"", errc::missing_member, "event"},
        {R"(, "event": [])", errc::wrong_type, "event"},
        {R"(, "event": {})", errc::missing_member, "event.UserAction"},
        {R"(, "event": {"UserAction": 3})", errc::wrong_type, "event.UserAction"},
        {R"(, "event": {"UserAction": "AddProdct"})", errc::unknown_event, "event.UserAction"},
        {R"(, "event": {"UserAction": "AddProduct", "ServiceVersionId": 12})", errc::wrong_type,
         "event.ServiceVersionId"},
    };
    for (const auto& c : cases) {
        const std::string text =
            std::string(R"({"tenant": {"name": "acme", "webhooksEnabled": true}, "webhooks": [])") + c.event + "}";
        INFO(text);
        const auto r = examples::try_dispatch_input_from_json(nlohmann::json::parse(text), now);
        REQUIRE_FALSE(r);
        CHECK(r.error().code == c.code);
        CHECK(r.error().path == c.path);
    }
    const auto typo = examples::try_dispatch_input_from_json(
        nlohmann::json::parse(R"({"tenant": {"name": "a", "webhooksEnabled": true}, "webhooks": [],
                                  "event": {"UserAction": "AddProdct"}})"),
        now);
    REQUIRE_FALSE(typo);
    CHECK(typo.error().message.find("did you mean \"AddProduct\"") != std::string::npos);
}

TEST_CASE("a dispatch input's RequestTimeStamp fixes the bodies and ids", "[B6][dispatch]") {
    const auto now = keyhook::parse_timestamp("2026-01-02T03:04:05.678Z");
    const std::string head = R"({"tenant": {"name": "acme", "webhooksEnabled": true},
        "webhooks": [{"name": "a", "endpoint": "https://a.example.com/", "saved": true}], "event": )";
    const auto given = examples::dispatch_input_from_json(
        nlohmann::json::parse(head +
                              R"({"UserAction": "AddProduct", "RequestTimeStamp": "2026-03-14T09:26:53.589Z"}})"),
        now);
    CHECK(given.event.request_time == keyhook::parse_timestamp("2026-03-14T09:26:53.589Z"));
    // Read at two instants, the same event gives the same delivery id (B6: enqueueing twice adds nothing).
    const auto later = examples::dispatch_input_from_json(
        nlohmann::json::parse(head +
                              R"({"UserAction": "AddProduct", "RequestTimeStamp": "2026-03-14T09:26:53.589Z"}})"),
        now + std::chrono::hours(1));
    CHECK(keyhook::dispatch(given.settings.tenant, given.settings.webhooks, given.event)[0].id() ==
          keyhook::dispatch(later.settings.tenant, later.settings.webhooks, later.event)[0].id());
    const auto absent =
        examples::dispatch_input_from_json(nlohmann::json::parse(head + R"({"UserAction": "AddProduct"}})"), now);
    CHECK(absent.event.request_time == now);

    for (const char* bad : {R"("")", R"("yesterday")", R"(12)", R"("2026-02-30T00:00:00Z")"}) {
        INFO(bad);
        const auto r = examples::try_dispatch_input_from_json(
            nlohmann::json::parse(head + R"({"UserAction": "AddProduct", "RequestTimeStamp": )" + bad + "}}"), now);
        REQUIRE_FALSE(r);
        CHECK(r.error().path == "event.RequestTimeStamp");
    }
}

TEST_CASE("webhook_deliver's input: timed events and throttles", "[H11][dispatch]") {
    const auto start = keyhook::parse_timestamp("2026-01-02T03:04:05.678Z");
    const std::string head = R"({"tenant": {"name": "acme", "webhooksEnabled": true},
        "webhooks": [{"name": "a", "endpoint": "https://a.example.com/", "saved": true, "maxPerSecond": 2},
                     {"name": "b", "endpoint": "https://b.example.com/", "saved": true, "maxPerSecond": 0}])";
    // The single-event form is one event at the start.
    const auto one = examples::try_delivery_input_from_json(
        nlohmann::json::parse(head + R"(, "event": {"UserAction": "AddProduct"}})"), start);
    REQUIRE(one);
    REQUIRE(one->events.size() == 1);
    CHECK(one->events[0].after == std::chrono::microseconds{0});
    CHECK(one->events[0].event.request_time == start);
    // H11: 0 is no throttle, so only "a" has one.
    CHECK(one->max_per_second == std::map<std::string, std::uint64_t>{{"a", 2}});

    // The list: ordered by time (document order among equals), stamped start + after unless given.
    const auto many = examples::try_delivery_input_from_json(nlohmann::json::parse(head + R"(, "events": [
        {"after": 1.5, "event": {"UserAction": "AddProduct", "EntityId": "late"}},
        {"event": {"UserAction": "AddProduct", "EntityId": "first"}},
        {"after": 0, "event": {"UserAction": "AddProduct", "EntityId": "second",
                               "RequestTimeStamp": "2026-03-14T09:26:53.589Z"}}]})"),
                                                             start);
    REQUIRE(many);
    REQUIRE(many->events.size() == 3);
    CHECK(many->events[0].event.entity_id == "first");
    CHECK(many->events[1].event.entity_id == "second");
    CHECK(many->events[1].event.request_time == keyhook::parse_timestamp("2026-03-14T09:26:53.589Z"));
    CHECK(many->events[2].event.entity_id == "late");
    CHECK(many->events[2].after == std::chrono::microseconds{1500000});
    CHECK(many->events[2].event.request_time == start + std::chrono::microseconds{1500000});

    struct bad_case {
        const char* rest;
        errc code;
        const char* path;
    };
    const bad_case cases[] = {
        {"", errc::missing_member, "event"},
        {R"(, "event": {"UserAction": "AddProduct"}, "events": [])", errc::invalid_value, "events"},
        {R"(, "events": {})", errc::wrong_type, "events"},
        {R"(, "events": [])", errc::invalid_value, "events"},
        {R"(, "events": [3])", errc::wrong_type, "events[0]"},
        {R"(, "events": [{"after": 1}])", errc::missing_member, "events[0].event"},
        {R"(, "events": [{"after": "1", "event": {"UserAction": "AddProduct"}}])", errc::wrong_type, "events[0].after"},
        {R"(, "events": [{"after": -0.001, "event": {"UserAction": "AddProduct"}}])", errc::out_of_range,
         "events[0].after"},
        {R"(, "events": [{"after": 315360001, "event": {"UserAction": "AddProduct"}}])", errc::out_of_range,
         "events[0].after"},
        {R"(, "events": [{"event": {"UserAction": "AddProduct"}}, {"event": {}}])", errc::missing_member,
         "events[1].event.UserAction"},
    };
    for (const auto& c : cases) {
        const std::string text = head + c.rest + "}";
        INFO(text);
        const auto r = examples::try_delivery_input_from_json(nlohmann::json::parse(text), start);
        REQUIRE_FALSE(r);
        CHECK(r.error().code == c.code);
        CHECK(r.error().path == c.path);
    }
    // The bounds of "after" and "maxPerSecond" are inside.
    CHECK(examples::try_delivery_input_from_json(
        nlohmann::json::parse(head + R"(, "events": [{"after": 315360000, "event": {"UserAction": "AddProduct"}}]})"),
        start));
    const auto rate = [&](const char* value) {
        return examples::try_max_per_second(nlohmann::json::parse(std::string(R"({"maxPerSecond": )") + value + "}"),
                                            "webhooks[3]");
    };
    CHECK(rate("1000000").value() == 1000000);
    CHECK(rate("null").value() == 0);
    for (const char* bad : {"1000001", "-1", "1.5", "\"2\""}) {
        INFO(bad);
        const auto r = rate(bad);
        REQUIRE_FALSE(r);
        CHECK(r.error().path == "webhooks[3].maxPerSecond");
    }
}
