// webhook_deliver's input (examples/webhook_deliver/delivery_input.hpp): the
// dispatch document with timed events, each webhook's maxPerSecond (H11) and
// signingKeys (B5), read by the program's member tables; the store's copy
// of a webhook, written by the same table with every secret, reads back
// equal, and so does a row in the earlier stored form (the webhook's input
// JSON); the documented 10,000 events pass J3's bound.
#include "webhook_deliver/delivery_input.hpp"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <chrono>
#include <cstdint>
#include <map>
#include <string>

using keyhook::errc;

namespace {

const char* const tenant_head = R"({"tenant": {"name": "acme", "webhooksEnabled": true}, )";

// A signing secret of 24 bytes (B1) and a key set in the stored form.
const char* const current_key = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
const char* const old_key = "whsec_dGhpcyBpcyBhIHRlc3Qga2V5IG9mIDI0IGI=";
std::string key_set_json(const char* expires = "2026-11-28T09:00:00Z") {
    return std::string(R"({"current": [")") + current_key + R"("], "oldKeys": [{"key": ")" + old_key +
           R"(", "expiresAt": ")" + expires + R"("}]})";
}

keyhook::result<deliver::delivery_input> parse(const std::string& text) {
    return deliver::parse_delivery_input(text, keyhook::parse_timestamp("2026-01-02T03:04:05.678Z"));
}

// `n` events of about 180 bytes each, one second apart.
std::string events_document(std::size_t n) {
    std::string text =
        std::string(tenant_head) +
        R"("webhooks": [{"name": "a", "endpoint": "https://a.example.com/", "saved": true}], "events": [)";
    for (std::size_t i = 0; i < n; ++i) {
        const std::string id = std::to_string(100000 + i);
        if (i != 0) text += ", ";
        text += R"({"after": )" + std::to_string(i) +
                R"(, "event": {"UserAction": "PublishEngine", )"
                R"("FolderName": "Loan-Origination", "ServiceName": "rate-engine-)" +
                id +
                R"(", )"
                R"("EntityId": "entity-0000-)" +
                id + R"(", "AuditType": "ProductEngine"}})";
    }
    return text + "]}";
}

}  // namespace

TEST_CASE("webhook_deliver's input: timed events and throttles", "[H11][dispatch]") {
    const auto start = keyhook::parse_timestamp("2026-01-02T03:04:05.678Z");
    const std::string head = std::string(tenant_head) + R"(
        "webhooks": [{"name": "a", "endpoint": "https://a.example.com/", "saved": true, "maxPerSecond": 2},
                     {"name": "b", "endpoint": "https://b.example.com/", "saved": true, "maxPerSecond": 0}])";
    // The single-event form is one event at the start.
    const auto one = parse(head + R"(, "event": {"UserAction": "AddProduct"}})");
    REQUIRE(one);
    REQUIRE(one->events.size() == 1);
    CHECK(one->events[0].after == std::chrono::microseconds{0});
    CHECK(one->events[0].event.request_time == start);
    CHECK(one->events[0].event.tenant == "acme");
    // H11: 0 is no throttle, so only "a" has one.
    CHECK(one->max_per_second == std::map<std::string, std::uint64_t>{{"a", 2}});

    // The list: ordered by time (document order among equals), stamped start + after unless given.
    const auto many = parse(head + R"(, "events": [
        {"after": 1.5, "event": {"UserAction": "AddProduct", "EntityId": "late"}},
        {"event": {"UserAction": "AddProduct", "EntityId": "first"}},
        {"after": 0, "event": {"UserAction": "AddProduct", "EntityId": "second",
                               "RequestTimeStamp": "2026-03-14T09:26:53.589Z"}}]})");
    REQUIRE(many);
    REQUIRE(many->events.size() == 3);
    CHECK(many->events[0].event.entity_id == "first");
    CHECK(many->events[0].path == "events[1].event");
    CHECK(many->events[1].event.entity_id == "second");
    CHECK(many->events[1].event.request_time == keyhook::parse_timestamp("2026-03-14T09:26:53.589Z"));
    CHECK(many->events[2].event.entity_id == "late");
    CHECK(many->events[2].event.tenant == "acme");
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
        {R"(, "events": null)", errc::wrong_type, "events"},
        {R"(, "events": [])", errc::invalid_value, "events"},
        {R"(, "events": [3])", errc::wrong_type, "events[0]"},
        {R"(, "events": [{"after": 1}])", errc::missing_member, "events[0].event"},
        {R"(, "events": [{"after": 1, "event": null}])", errc::wrong_type, "events[0].event"},
        {R"(, "events": [{"after": "1", "event": {"UserAction": "AddProduct"}}])", errc::wrong_type, "events[0].after"},
        {R"(, "events": [{"after": -0.001, "event": {"UserAction": "AddProduct"}}])", errc::out_of_range,
         "events[0].after"},
        {R"(, "events": [{"after": 315360001, "event": {"UserAction": "AddProduct"}}])", errc::out_of_range,
         "events[0].after"},
        {R"(, "events": [{"event": {"UserAction": "AddProduct"}}, {"event": {}}])", errc::missing_member,
         "events[1].event.UserAction"},
        {R"(, "events": [{"event": {"UserAction": "AddProduct", "EntityId": 7}}])", errc::wrong_type,
         "events[0].event.EntityId"},
    };
    for (const auto& c : cases) {
        const std::string text = head + c.rest + "}";
        INFO(text);
        const auto r = parse(text);
        REQUIRE_FALSE(r);
        CHECK(r.error().code == c.code);
        CHECK(r.error().path == c.path);
    }
    // The bounds of "after" are inside.
    CHECK(parse(head + R"(, "events": [{"after": 315360000, "event": {"UserAction": "AddProduct"}}]})"));
    // The settings' faults come before the events'.
    const auto both = parse(std::string(tenant_head) + R"("webhooks": [{"name": "a", "saved": true}],
                                                          "events": [{"event": {}}]})");
    REQUIRE_FALSE(both);
    CHECK(both.error().path == "webhooks[0].endpoint");
}

TEST_CASE("H11: a webhook's maxPerSecond is a member of the program's webhook record", "[H11][dispatch]") {
    const auto rate = [](const char* value) {
        return keyhook::try_read_record<deliver::deliver_webhook>(
            nlohmann::json::parse(std::string(R"({"name": "a", "endpoint": "https://a.example.com/", "saved": true,
                                                  "maxPerSecond": )") +
                                  value + "}"),
            "webhooks[3]");
    };
    CHECK(rate("1000000").value().max_per_second == 1000000);
    CHECK(rate("0").value().max_per_second == 0);
    CHECK(rate("null").value().max_per_second == 0);
    struct bad_case {
        const char* value;
        errc code;
        const char* message;
    };
    for (const auto& c :
         {bad_case{"1000001", errc::out_of_range, "expected 0 (no throttle) to 1000000"},
          bad_case{"-1", errc::out_of_range, "expected 0 (no throttle) to 1000000"},
          bad_case{"1.5", errc::wrong_type, "expected a whole number of deliveries a second, got number"},
          bad_case{"\"2\"", errc::wrong_type, "expected a whole number of deliveries a second, got string"}}) {
        INFO(c.value);
        const auto r = rate(c.value);
        REQUIRE_FALSE(r);
        CHECK(r.error().code == c.code);
        CHECK(r.error().path == "webhooks[3].maxPerSecond");
        CHECK(r.error().message == c.message);
    }
}

TEST_CASE("B5: a webhook's signingKeys: read with its path, never with a key, and not beside signingSecret",
          "[B5][dispatch]") {
    const std::string hook = R"("name": "a", "endpoint": "https://a.example.com/", "saved": true)";
    const auto read = [&](const std::string& rest) {
        return keyhook::try_read_record<deliver::deliver_webhook>(nlohmann::json::parse("{" + hook + rest + "}"),
                                                                  "webhooks[1]");
    };
    const auto good = read(", \"signingKeys\": " + key_set_json());
    REQUIRE(good);
    REQUIRE(good->key_set);
    CHECK(good->key_set->old_keys().size() == 1);
    CHECK_FALSE(good->config.signing_secret);
    CHECK_FALSE(read("").value().key_set);

    const auto bad_expiry = read(", \"signingKeys\": " + key_set_json("tomorrow"));
    REQUIRE_FALSE(bad_expiry);
    CHECK(bad_expiry.error().path == "webhooks[1].signingKeys.oldKeys[0].expiresAt");
    CHECK(bad_expiry.error().what().find("MfKQ9r8") == std::string::npos);
    const auto not_object = read(R"(, "signingKeys": ["whsec_x"])");
    REQUIRE_FALSE(not_object);
    CHECK(not_object.error().code == errc::wrong_type);
    CHECK(not_object.error().path == "webhooks[1].signingKeys");
    const auto both =
        read(std::string(R"(, "signingSecret": ")") + current_key + "\", \"signingKeys\": " + key_set_json());
    REQUIRE_FALSE(both);
    CHECK(both.error().code == errc::invalid_value);
    CHECK(both.error().path == "webhooks[1].signingKeys");
    CHECK(both.error().message == "give signingSecret or signingKeys, not both");

    // The input's key sets by webhook name.
    const auto in = parse(std::string(tenant_head) + R"("webhooks": [{)" + hook +
                          ", \"signingKeys\": " + key_set_json() + R"(}], "event": {"UserAction": "AddProduct"}})");
    REQUIRE(in);
    CHECK(in->keys.count("a") == 1);
    // Written for output, masked (B1).
    nlohmann::json shown;
    keyhook::write_record(shown, *good);
    CHECK(shown.dump().find("MfKQ9r8") == std::string::npos);
}

TEST_CASE("B6: the store keeps a webhook as its table writes it, with its secrets, and reads it back equal",
          "[B6][B5][H11][O5][dispatch]") {
    const std::string hook = std::string(R"({"name": "crm", "endpoint": "https://crm.example.com/in?key=k1",
        "saved": true, "events": ["AddProduct"], "auth": [{"in": "header", "name": "x-api-key", "value": "s3cr3t"}],
        "maxPerSecond": 2, "signingKeys": )") +
                             key_set_json() + "}";
    const auto in =
        parse(std::string(tenant_head) + R"("webhooks": [)" + hook + R"(], "event": {"UserAction": "AddProduct"}})");
    REQUIRE(in);
    const auto rows = deliver::stored_settings_of(*in);
    REQUIRE(rows.size() == 1);
    CHECK(rows[0].name == "crm");
    CHECK(rows[0].endpoint == "https://crm.example.com/in?key=k1");  // its deliveries remember it (O5)
    // The store's copy keeps what the webhook needs to be sent and signed.
    for (const char* kept : {"key=k1", "s3cr3t", "MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"}) {
        INFO(kept);
        CHECK(rows[0].settings.find(kept) != std::string::npos);
    }
    const auto back = deliver::try_read_stored_settings(rows[0].settings);
    REQUIRE(back);
    CHECK(keyhook::records_equal(*back, in->webhooks[0]));
    CHECK(back->max_per_second == 2);
    REQUIRE(back->key_set);
    CHECK(*back->key_set == *in->webhooks[0].key_set);
    // Written again, the same text.
    CHECK(deliver::stored_settings_text(*back) == rows[0].settings);

    // A row of the earlier form, the webhook's input JSON as given (unknown
    // members included), reads back as the same record.
    auto old_row = nlohmann::json::parse(hook);
    old_row["comment"] = "kept by the earlier version";
    const auto old = deliver::try_read_stored_settings(old_row.dump());
    REQUIRE(old);
    CHECK(keyhook::records_equal(*old, in->webhooks[0]));
    // A stored row that no longer reads says where.
    const auto broken = deliver::try_read_stored_settings(R"({"name": "crm", "endpoint": "https://a/", "saved": 1})");
    REQUIRE_FALSE(broken);
    CHECK(broken.error().path == "saved");
}

TEST_CASE("J3: webhook_deliver takes its documented 10,000 events of 180 bytes, and refuses the 10,001st",
          "[J3][dispatch]") {
    const std::string text = events_document(10000);
    INFO(text.size() << " bytes");
    CHECK(text.size() / 10000 >= 170);
    CHECK(text.size() / 10000 <= 200);
    const auto in = parse(text);
    REQUIRE(in);
    CHECK(in->events.size() == 10000);
    CHECK(in->events[9999].event.entity_id == "entity-0000-109999");
    CHECK(in->events[9999].after == std::chrono::seconds{9999});

    const auto over = parse(events_document(10001));
    REQUIRE_FALSE(over);
    CHECK(over.error().code == errc::limit_exceeded);
    CHECK(over.error().path == "events");
    CHECK(over.error().message == "10001 events; at most 10000");
}

TEST_CASE("J3: a document of webhook_deliver that would take more than 4 times its size is still refused",
          "[J3][dispatch]") {
    // One event whose DOM alone passes the bound: members of 5 bytes each.
    std::string members;
    for (std::size_t i = 0; members.size() < (std::size_t{1} << 20); ++i) members += ",\"" + std::to_string(i) + "\":0";
    const auto in_event =
        parse(std::string(tenant_head) + R"("webhooks": [], "events": [{"event": {"UserAction": "AddProduct")" +
              members + "}}]}");
    REQUIRE_FALSE(in_event);
    CHECK(in_event.error().code == errc::limit_exceeded);
    CHECK(in_event.error().path.rfind("events[0].event.", 0) == 0);
    CHECK(in_event.error().message == "the document would take more than 4 times its size in memory (rule J3)");
    // Outside the events, the whole DOM is held: small values are refused as before.
    std::string zeros = "0";
    while (zeros.size() < (std::size_t{1} << 21)) zeros += ",0";
    const auto in_webhooks = parse(std::string(tenant_head) + R"("extra": [)" + zeros +
                                   R"(], "webhooks": [], "event": {"UserAction": "AddProduct"}})");
    REQUIRE_FALSE(in_webhooks);
    CHECK(in_webhooks.error().code == errc::limit_exceeded);
    CHECK(in_webhooks.error().path.rfind("extra[", 0) == 0);
}
