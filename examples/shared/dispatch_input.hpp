// The input of webhook_dispatch and webhook_deliver: one JSON document holding
// a tenant, its webhooks and one event (see examples/webhook_dispatch/main.cpp).
// Shared so both programs read exactly the same input the same way.
#pragma once

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <fstream>
#include <iostream>
#include <iterator>
#include <map>
#include <optional>
#include <ostream>
#include <sstream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

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

// One event object ("event", or an entry's "event" in "events") at `path`:
// its Tenant is `tenant`, its RequestTimeStamp the one given, else `now`.
template <class Json = nlohmann::json>
[[nodiscard]] keyhook::result<keyhook::notification> try_event_from_json(
    const keyhook::detail::non_deduced_t<Json>& event, const std::string& path, const std::string& tenant,
    keyhook::timestamp now) {
    namespace kd = keyhook::detail;
    if (!event.is_object()) return kd::wrong_type(path, "an object", event);
    keyhook::notification n;
    std::string action;
    if (auto e = kd::read_member_string(event, "UserAction", path, true, action)) return *e;
    auto type = keyhook::try_parse_event_type(action);
    if (!type) return keyhook::error{type.error().code, kd::path_member(path, "UserAction"), type.error().message};
    n.user_action = *type;
    struct field {
        const char* name;
        std::string* target;
    };
    const field fields[] = {
        {"FolderName", &n.folder_name}, {"ServiceName", &n.service_name}, {"EntityId", &n.entity_id},
        {"AuditType", &n.audit_type},   {"FileName", &n.file_name},       {"ServiceVersionId", &n.service_version_id},
    };
    for (const auto& f : fields)
        if (auto e = kd::read_member_string(event, f.name, path, false, *f.target)) return *e;
    n.tenant = tenant;
    n.request_time = now;
    // Given, the event's time makes its bodies, hence its delivery ids, the
    // same on every run (B6: enqueueing a file again adds nothing).
    std::string when;
    if (auto e = kd::read_member_string(event, "RequestTimeStamp", path, false, when)) return *e;
    if (kd::json_member(event, "RequestTimeStamp") && !keyhook::detail::parse_timestamp_into(when, n.request_time))
        return keyhook::detail::timestamp_error(kd::path_member(path, "RequestTimeStamp"), when);
    return n;
}

template <class Json = nlohmann::json>
[[nodiscard]] keyhook::result<dispatch_input> try_dispatch_input_from_json(
    const keyhook::detail::non_deduced_t<Json>& j, keyhook::timestamp now,
    const keyhook::endpoint_policy& policy = {}) {
    namespace kd = keyhook::detail;
    auto settings = keyhook::try_webhook_settings_from_json<Json>(j, policy);
    if (!settings) return settings.error();
    const auto* event = kd::json_member(j, "event", false);
    if (!event) return kd::missing_member_error("event");
    auto n = try_event_from_json<Json>(*event, "event", settings->tenant.name, now);
    if (!n) return n.error();
    return dispatch_input{std::move(*settings), std::move(*n)};
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

// webhook_deliver's input: the document above, with two additions only it
// reads (webhook_dispatch ignores them):
//   "events": [{"after": seconds (number >= 0, optional, default 0),
//               "event": {... as "event" above}}, ...]
//       several events, each dispatched `after` seconds into the run (on the
//       run's timeline: --time-scale compresses the wait), instead of the one
//       "event" (give one of the two); an event without RequestTimeStamp is
//       stamped with the run's start plus `after`. At most max_timed_events.
//   "webhooks"[i]."maxPerSecond": integer 0 to 1000000 (optional, 0: none)
//       H11's throttle of that webhook (burst 1).
// (webhooks[i]."signingKeys", B5's key set, needs keyhook::crypto: webhook_deliver reads it.)
struct timed_event {
    std::chrono::microseconds after{0};
    keyhook::notification event;
    std::string path;  // where it is in the document: "event" or "events[3].event"
};

inline constexpr std::size_t max_timed_events = 10000;
inline constexpr double max_event_after_seconds = 10.0 * 365 * 24 * 3600;  // ten years of 365 days
inline constexpr std::uint64_t max_per_second_limit = 1000000;             // T of at least 1 microsecond (K13)

struct delivery_input {
    keyhook::webhook_settings settings;
    std::vector<timed_event> events;                      // by `after`, in document order among equals
    std::map<std::string, std::uint64_t> max_per_second;  // by webhook name; absent or 0: no throttle
};

// A webhook object's "maxPerSecond" (0 when absent); errors name `path`."maxPerSecond".
template <class Json = nlohmann::json>
[[nodiscard]] keyhook::result<std::uint64_t> try_max_per_second(const keyhook::detail::non_deduced_t<Json>& webhook,
                                                                const std::string& path) {
    namespace kd = keyhook::detail;
    const auto* m = webhook.is_object() ? kd::json_member(webhook, "maxPerSecond") : nullptr;
    if (!m) return std::uint64_t{0};
    const auto p = kd::path_member(path, "maxPerSecond");
    if (!m->is_number_integer()) return kd::wrong_type(p, "a whole number of deliveries a second", *m);
    const bool negative = !m->is_number_unsigned() && m->template get<std::int64_t>() < 0;
    if (negative || m->template get<std::uint64_t>() > max_per_second_limit)
        return keyhook::error{keyhook::errc::out_of_range, p, "expected 0 (no throttle) to 1000000"};
    return m->template get<std::uint64_t>();
}

template <class Json = nlohmann::json>
[[nodiscard]] keyhook::result<delivery_input> try_delivery_input_from_json(
    const keyhook::detail::non_deduced_t<Json>& j, keyhook::timestamp start,
    const keyhook::endpoint_policy& policy = {}) {
    namespace kd = keyhook::detail;
    auto settings = keyhook::try_webhook_settings_from_json<Json>(j, policy);
    if (!settings) return settings.error();
    delivery_input in;
    in.settings = std::move(*settings);
    const auto& hooks = *kd::json_member(j, "webhooks", false);  // read above
    for (std::size_t i = 0; i < hooks.size(); ++i) {
        auto rate = try_max_per_second<Json>(hooks[i], kd::path_index("webhooks", i));
        if (!rate) return rate.error();
        if (*rate != 0) in.max_per_second[in.settings.webhooks[i].name()] = *rate;
    }
    const auto* one = kd::json_member(j, "event", false);
    const auto* many = kd::json_member(j, "events", false);
    if (one && many)
        return keyhook::error{keyhook::errc::invalid_value, "events", "give \"event\" or \"events\", not both"};
    if (!one && !many) return kd::missing_member_error("event");
    if (one) {
        auto n = try_event_from_json<Json>(*one, "event", in.settings.tenant.name, start);
        if (!n) return n.error();
        in.events.push_back(timed_event{std::chrono::microseconds{0}, std::move(*n), "event"});
        return in;
    }
    if (!many->is_array()) return kd::wrong_type("events", "an array of timed events", *many);
    if (many->empty()) return keyhook::error{keyhook::errc::invalid_value, "events", "holds no event"};
    if (many->size() > max_timed_events)
        return keyhook::error{keyhook::errc::limit_exceeded, "events",
                              std::to_string(many->size()) + " events; at most " + std::to_string(max_timed_events)};
    for (std::size_t i = 0; i < many->size(); ++i) {
        const auto path = kd::path_index("events", i);
        const auto& entry = (*many)[i];
        if (!entry.is_object()) return kd::wrong_type(path, "an object", entry);
        double after = 0;
        if (const auto* a = kd::json_member(entry, "after")) {
            const auto apath = kd::path_member(path, "after");
            if (!a->is_number()) return kd::wrong_type(apath, "seconds (a number)", *a);
            after = a->template get<double>();
            if (!std::isfinite(after) || after < 0 || after > max_event_after_seconds)
                return keyhook::error{keyhook::errc::out_of_range, apath, "expected 0 to 315360000 seconds"};
        }
        const auto* event = kd::json_member(entry, "event", false);
        const auto epath = kd::path_member(path, "event");
        if (!event) return kd::missing_member_error(epath);
        const std::chrono::microseconds offset{static_cast<std::int64_t>(std::llround(after * 1e6))};
        auto n = try_event_from_json<Json>(*event, epath, in.settings.tenant.name, start + offset);
        if (!n) return n.error();
        in.events.push_back(timed_event{offset, std::move(*n), epath});
    }
    std::stable_sort(in.events.begin(), in.events.end(),
                     [](const timed_event& a, const timed_event& b) { return a.after < b.after; });
    return in;
}

// parse_dispatch_input for webhook_deliver's input (the single-event form included).
inline keyhook::result<delivery_input> parse_delivery_input(const std::string& text, keyhook::timestamp start,
                                                            const keyhook::endpoint_policy& policy = {}) {
    auto document = keyhook::try_parse_json(text);
    if (!document) {
        keyhook::error e = document.error();
        if (e.code == keyhook::errc::syntax_error) e.message = "expected one JSON object, " + e.message;
        return e;
    }
    return try_delivery_input_from_json(*document, start, policy);
}

}  // namespace examples
