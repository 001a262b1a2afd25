// The input document of webhook_dispatch and webhook_deliver
// (examples/shared/dispatch_input.hpp): a tenant, its webhooks and one event,
// each record read by its member table. webhook_deliver's additions are in
// delivery_input_test.cpp.
#include "../../examples/shared/dispatch_input.hpp"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <chrono>
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
