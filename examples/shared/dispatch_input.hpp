// The input of webhook_dispatch and webhook_deliver: one JSON document holding
// a tenant, its webhooks and one event (see examples/webhook_dispatch/main.cpp).
// Shared so both programs read exactly the same input the same way.
#pragma once

#include <fstream>
#include <iostream>
#include <iterator>
#include <optional>
#include <ostream>
#include <sstream>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "keyhook/detail/json_members.hpp"
#include "keyhook/dispatch.hpp"
#include "keyhook/endpoint.hpp"
#include "keyhook/error.hpp"
#include "keyhook/events.hpp"
#include "keyhook/json_input.hpp"
#include "keyhook/notification.hpp"
#include "keyhook/timestamps.hpp"
#include "keyhook/webhook_json.hpp"

namespace examples {

// The document both programs read (not a library format: the event's Tenant
// and RequestTimeStamp are filled in by the program):
//   {"tenant": {...}, "webhooks": [...],            as keyhook::webhook_settings_from_json
//    "event": {"UserAction": string (required), "FolderName", "ServiceName",
//              "EntityId", "AuditType", "FileName", "ServiceVersionId": strings (optional),
//              "RequestTimeStamp": timestamp (optional)}}
// The notification's Tenant is the tenant's name and its RequestTimeStamp is
// the one given, else `now`. Errors carry the JSON path ("event.UserAction", "webhooks[1].endpoint"),
// worded by keyhook's own message builders.
struct dispatch_input {
    keyhook::webhook_settings settings;
    keyhook::notification event;

    friend bool operator==(const dispatch_input& a, const dispatch_input& b) {
        return a.settings == b.settings && a.event == b.event;
    }
    friend bool operator!=(const dispatch_input& a, const dispatch_input& b) { return !(a == b); }
    friend std::ostream& operator<<(std::ostream& os, const dispatch_input& d) {
        return os << d.settings << '\n' << d.event;
    }
};

template <class Json = nlohmann::json>
[[nodiscard]] keyhook::result<dispatch_input> try_dispatch_input_from_json(
    const keyhook::detail::non_deduced_t<Json>& j, keyhook::timestamp now,
    const keyhook::endpoint_policy& policy = {}) {
    namespace kd = keyhook::detail;
    auto settings = keyhook::try_webhook_settings_from_json<Json>(j, policy);
    if (!settings) return settings.error();
    const auto* event = kd::json_member(j, "event", false);
    if (!event) return kd::missing_member_error("event");
    if (!event->is_object()) return kd::wrong_type("event", "an object", *event);
    dispatch_input in{std::move(*settings), keyhook::notification{}};
    std::string action;
    if (auto e = kd::read_member_string(*event, "UserAction", "event", true, action)) return *e;
    auto type = keyhook::try_parse_event_type(action);
    if (!type) return keyhook::error{type.error().code, "event.UserAction", type.error().message};
    in.event.user_action = *type;
    struct field {
        const char* name;
        std::string* target;
    };
    const field fields[] = {
        {"FolderName", &in.event.folder_name}, {"ServiceName", &in.event.service_name},
        {"EntityId", &in.event.entity_id},     {"AuditType", &in.event.audit_type},
        {"FileName", &in.event.file_name},     {"ServiceVersionId", &in.event.service_version_id},
    };
    for (const auto& f : fields)
        if (auto e = kd::read_member_string(*event, f.name, "event", false, *f.target)) return *e;
    in.event.tenant = in.settings.tenant.name;
    in.event.request_time = now;
    // Given, the event's time makes its bodies, hence its delivery ids, the
    // same on every run (B6: enqueueing a file again adds nothing).
    std::string when;
    if (auto e = kd::read_member_string(*event, "RequestTimeStamp", "event", false, when)) return *e;
    if (kd::json_member(*event, "RequestTimeStamp") &&
        !keyhook::detail::parse_timestamp_into(when, in.event.request_time))
        return keyhook::detail::timestamp_error("event.RequestTimeStamp", when);
    return in;
}
template <class Json = nlohmann::json>
[[nodiscard]] dispatch_input dispatch_input_from_json(const keyhook::detail::non_deduced_t<Json>& j,
                                                      keyhook::timestamp now,
                                                      const keyhook::endpoint_policy& policy = {}) {
    return try_dispatch_input_from_json<Json>(j, now, policy).value();
}

// The text of FILE, of standard input for "-", or `bundled` when no file is
// given; nullopt when the file cannot be read.
inline std::optional<std::string> read_input_text(const std::optional<std::string>& file, std::string_view bundled) {
    if (!file) return std::string(bundled);
    if (*file == "-") return std::string(std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>());
    std::ifstream in(*file, std::ios::binary);
    if (!in) return std::nullopt;
    std::ostringstream text;
    text << in.rdbuf();
    if (in.bad()) return std::nullopt;
    return text.str();
}

// How error messages name the input.
inline std::string input_name(const std::optional<std::string>& file) {
    // P1: a file name is input too, printed escaped.
    return !file ? "<bundled sample>" : (*file == "-" ? "<stdin>" : keyhook::escape_text(*file));
}

// The dispatch input of `text`, the event stamped `now`. Errors: a syntax
// error with the byte offset, or the library's error with its JSON path.
inline keyhook::result<dispatch_input> parse_dispatch_input(const std::string& text, keyhook::timestamp now,
                                                            const keyhook::endpoint_policy& policy = {}) {
    // The strict reader (J1-J3): repeated names and numbers out of range are
    // refused with their path; the depth limit bounds the DOM readers' recursion.
    auto document = keyhook::try_parse_json(text);
    if (!document) {
        keyhook::error e = document.error();
        if (e.code == keyhook::errc::syntax_error) e.message = "expected one JSON object, " + e.message;
        return e;
    }
    return try_dispatch_input_from_json(*document, now, policy);
}

}  // namespace examples
