// The input of webhook_dispatch and webhook_deliver: one JSON document holding
// a tenant, its webhooks and one event (see examples/webhook_dispatch/main.cpp).
// Shared so both programs read exactly the same input the same way. Each
// record of it is described once, by a member table (keyhook/members.hpp):
// its reader (the first fault with its JSON path), writer and equality come
// from the table; keyhook's own records in it (the tenant, a webhook, the
// whole webhook settings) are read and written by keyhook's own functions,
// through the forms below.
#pragma once

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <fstream>
#include <iostream>
#include <iterator>
#include <optional>
#include <ostream>
#include <sstream>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "keyhook/dispatch.hpp"
#include "keyhook/endpoint.hpp"
#include "keyhook/error.hpp"
#include "keyhook/events.hpp"
#include "keyhook/json_input.hpp"
#include "keyhook/members.hpp"
#include "keyhook/notification.hpp"
#include "keyhook/timestamps.hpp"
#include "keyhook/webhook_json.hpp"
#include "read_file.hpp"  // beside this file: included by relative path too

namespace examples {

// ---- forms for keyhook's records, read and written by keyhook's functions

// Copies the members of object `from` into object `into`.
template <class Json>
void merge_members(Json& into, Json&& from) {
    for (auto it = from.begin(); it != from.end(); ++it) into[it.key()] = std::move(it.value());
}

// Writes `in` by keyhook's to_json, or by its store-only serializer
// (keyhook::to_store_json, every secret in plaintext) for a store's copy.
template <class Json, class T, class Ctx>
Json keyhook_json_of(const T& in, const Ctx&) {
    Json j;
    if constexpr (std::is_same_v<Ctx, keyhook::reveal_secrets>)
        keyhook::to_store_json(j, in);
    else
        keyhook::to_json(j, in);
    return j;
}

// A tenant's settings, {"name", "webhooksEnabled"}, by keyhook's reader.
struct tenant_form {
    static constexpr keyhook::form_kind kind = keyhook::form_kind::value;
    static constexpr std::string_view expected = "an object";
    template <class Json>
    static std::optional<keyhook::error> read(const Json& v, const std::string& path, keyhook::tenant_settings& out) {
        auto t = keyhook::try_tenant_settings_from_json<Json>(v, path);
        if (!t) return t.error();
        out = std::move(*t);
        return std::nullopt;
    }
    template <class Json>
    static void write(Json& slot, const keyhook::tenant_settings& in) {
        keyhook::to_json(slot, in);
    }
};

// A webhook's own members (name, endpoint, saved, events, auth,
// signingSecret), by keyhook's reader (the shape; validation is the list's),
// beside the members of the program's record that holds it (spread).
struct webhook_config_form {
    static constexpr std::string_view names[] = {"name", "endpoint", "saved", "events", "auth", "signingSecret"};
    template <class Json>
    static std::optional<keyhook::error> read_in(const Json& j, const std::string& path, keyhook::webhook& out) {
        auto w = keyhook::try_webhook_from_json<Json>(j, path);
        if (!w) return w.error();
        out = std::move(*w);
        return std::nullopt;
    }
    template <class Json, class Ctx>
    static void write_in(Json& j, const keyhook::webhook& in, const Ctx& ctx) {
        merge_members(j, keyhook_json_of<Json>(in, ctx));
    }
};

// The whole webhook configuration, "tenant" and "webhooks" (validated with
// the reader's endpoint_policy, its context), by keyhook's reader.
struct webhook_settings_form {
    static constexpr std::string_view names[] = {"tenant", "webhooks"};
    template <class Json>
    static std::optional<keyhook::error> read_in(const Json& j, const std::string&, keyhook::webhook_settings& out,
                                                 const keyhook::endpoint_policy& policy) {
        auto s = keyhook::try_webhook_settings_from_json<Json>(j, policy);
        if (!s) return s.error();
        out = std::move(*s);
        return std::nullopt;
    }
    template <class Json, class Ctx>
    static void write_in(Json& j, const keyhook::webhook_settings& in, const Ctx& ctx) {
        merge_members(j, keyhook_json_of<Json>(in, ctx));
    }
};

// ---- the event

// An event type by its name (H3: an unknown one is refused with the closest
// known name suggested).
struct event_type_form {
    static constexpr keyhook::form_kind kind = keyhook::form_kind::string;
    static constexpr bool keeps_text = false;
    static constexpr std::string_view expected = "a string";
    static std::optional<keyhook::error> from_text(const std::string& text, keyhook::event_type& out) {
        auto type = keyhook::try_parse_event_type(text);
        if (!type) return type.error();
        out = *type;
        return std::nullopt;
    }
    static std::string write(keyhook::event_type e) { return std::string(keyhook::to_string(e)); }
    static std::size_t heap_bytes(keyhook::event_type) noexcept { return 0; }
};

// A T4 timestamp given as a string (a number is "expected a string").
struct stamp_form : keyhook::time_form {
    static constexpr std::string_view expected = "a string";
};

// One event object ("event", or an entry's "event" in "events"):
//   {"UserAction": string (required), "FolderName", "ServiceName", "EntityId",
//    "AuditType", "FileName", "ServiceVersionId": strings (optional),
//    "RequestTimeStamp": timestamp (optional)}
// Other members are ignored. The notification's Tenant is the tenant's name;
// its RequestTimeStamp the one given, else the time the program says.
struct event_input {
    keyhook::event_type user_action = keyhook::event_type::PlatformLogin;
    std::string folder_name;
    std::string service_name;
    std::string entity_id;
    std::string audit_type;
    std::string file_name;
    std::string service_version_id;
    std::optional<keyhook::timestamp> request_time;
};

}  // namespace examples

template <>
struct keyhook::members_of<examples::event_input> {
    using e = examples::event_input;
    static constexpr auto rows =
        make_rows(row<examples::event_type_form>("UserAction", &e::user_action, presence::required),
                  row<text_form>("FolderName", &e::folder_name, presence::omitted),
                  row<text_form>("ServiceName", &e::service_name, presence::omitted),
                  row<text_form>("EntityId", &e::entity_id, presence::omitted),
                  row<text_form>("AuditType", &e::audit_type, presence::omitted),
                  row<text_form>("FileName", &e::file_name, presence::omitted),
                  row<text_form>("ServiceVersionId", &e::service_version_id, presence::omitted),
                  row<examples::stamp_form>("RequestTimeStamp", &e::request_time, presence::omitted));
};
static_assert(keyhook::members_complete<examples::event_input>());

namespace examples {

// The notification of an event read at `path`: its Tenant is `tenant`, its
// RequestTimeStamp the one given, else `now`. Given, the event's time makes
// its bodies, hence its delivery ids, the same on every run (B6: enqueueing
// a file again adds nothing).
inline keyhook::notification notification_of(event_input&& e, const std::string& tenant, keyhook::timestamp now) {
    keyhook::notification n;
    n.user_action = e.user_action;
    n.folder_name = std::move(e.folder_name);
    n.service_name = std::move(e.service_name);
    n.entity_id = std::move(e.entity_id);
    n.audit_type = std::move(e.audit_type);
    n.file_name = std::move(e.file_name);
    n.service_version_id = std::move(e.service_version_id);
    n.tenant = tenant;
    n.request_time = e.request_time.value_or(now);
    return n;
}

// ---- webhook_dispatch's document

// {"tenant": {...}, "webhooks": [...], "event": {...}}: the webhook settings as
// keyhook::webhook_settings_from_json reads them, then the event (which may
// not be null). Errors carry the JSON path ("event.UserAction",
// "webhooks[1].endpoint"), worded by keyhook's own message builders.
struct dispatch_document {
    keyhook::webhook_settings settings;
    event_input event;
};

}  // namespace examples

template <>
struct keyhook::members_of<examples::dispatch_document> {
    using d = examples::dispatch_document;
    static constexpr auto rows =
        make_rows(spread<examples::webhook_settings_form>(&d::settings),
                  row<null_refused<record_form<examples::event_input>>>("event", &d::event, presence::required));
};
static_assert(keyhook::members_complete<examples::dispatch_document>());

namespace examples {

// What webhook_dispatch works on: the settings and the event's notification.
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

// The dispatch input of document j, the event stamped `now` unless it gives its time.
[[nodiscard]] inline keyhook::result<dispatch_input> try_dispatch_input_from_json(
    const nlohmann::json& j, keyhook::timestamp now, const keyhook::endpoint_policy& policy = {}) {
    auto d = keyhook::try_read_record<dispatch_document>(j, {}, policy);
    if (!d) return d.error();
    auto event = notification_of(std::move(d->event), d->settings.tenant.name, now);
    return dispatch_input{std::move(d->settings), std::move(event)};
}
[[nodiscard]] inline dispatch_input dispatch_input_from_json(const nlohmann::json& j, keyhook::timestamp now,
                                                             const keyhook::endpoint_policy& policy = {}) {
    return try_dispatch_input_from_json(j, now, policy).value();
}

// The text of FILE, of standard input for "-", or `bundled` when no file is
// given; nullopt when the file cannot be read (a directory included), with
// `why` the system's reason when given.
inline std::optional<std::string> read_input_text(const std::optional<std::string>& file, std::string_view bundled,
                                                  std::string* why = nullptr) {
    if (!file) return std::string(bundled);
    if (*file == "-") return std::string(std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>());
    std::string reason;
    auto text = cli::read_whole_file(*file, reason);
    if (!text && why) *why = reason;
    return text;
}

// How error messages name the input.
inline std::string input_name(const std::optional<std::string>& file) {
    // P1: a file name is input too, printed escaped.
    return !file ? "<bundled sample>" : (*file == "-" ? "<stdin>" : keyhook::escape_text(*file));
}

// A syntax error of the input document said as one: "expected one JSON object, ...".
inline keyhook::error input_syntax_error(keyhook::error e) {
    if (e.code == keyhook::errc::syntax_error) e.message = "expected one JSON object, " + e.message;
    return e;
}

// The input document, read strictly (J1-J3): repeated names and numbers out
// of range are refused with their path; the depth limit bounds the DOM
// readers' recursion. Errors: a syntax error with the byte offset.
inline keyhook::result<nlohmann::json> parse_input_document(const std::string& text) {
    auto document = keyhook::try_parse_json(text);
    if (!document) return input_syntax_error(document.error());
    return document;
}

// The dispatch input of `text`, the event stamped `now`. Errors: a syntax
// error with the byte offset, or the library's error with its JSON path.
inline keyhook::result<dispatch_input> parse_dispatch_input(const std::string& text, keyhook::timestamp now,
                                                            const keyhook::endpoint_policy& policy = {}) {
    auto document = parse_input_document(text);
    if (!document) return document.error();
    return try_dispatch_input_from_json(*document, now, policy);
}

// ---- webhook_deliver's timed events

// webhook_deliver reads, instead of the one "event", a list of them:
//   "events": [{"after": seconds (number >= 0, optional, default 0),
//               "event": {... as "event" above}}, ...]
// each dispatched `after` seconds into the run (on the run's timeline:
// --time-scale compresses the wait); an event without RequestTimeStamp is
// stamped with the run's start plus `after`. At most max_timed_events.
inline constexpr std::size_t max_timed_events = 10000;
inline constexpr double max_event_after_seconds = 10.0 * 365 * 24 * 3600;  // ten years of 365 days

// Seconds from 0 to ten years, a number.
struct after_form {
    static constexpr keyhook::form_kind kind = keyhook::form_kind::value;
    static constexpr std::string_view expected = "seconds (a number)";
    template <class Json>
    static std::optional<keyhook::error> read(const Json& v, const std::string& path, double& out) {
        if (!v.is_number()) return keyhook::wrong_type(path, expected, v);
        const double after = v.template get<double>();
        if (!std::isfinite(after) || after < 0 || after > max_event_after_seconds)
            return keyhook::error{keyhook::errc::out_of_range, path, "expected 0 to 315360000 seconds"};
        out = after;
        return std::nullopt;
    }
    template <class Json>
    static void write(Json& slot, double in) {
        slot = in;
    }
};

// One entry of "events".
struct timed_event_input {
    double after = 0;
    event_input event;
};

}  // namespace examples

template <>
struct keyhook::members_of<examples::timed_event_input> {
    using t = examples::timed_event_input;
    static constexpr auto rows =
        make_rows(row<examples::after_form>("after", &t::after, presence::optional),
                  row<null_refused<record_form<examples::event_input>>>("event", &t::event, presence::required));
};
static_assert(keyhook::members_complete<examples::timed_event_input>());

namespace examples {

struct timed_event {
    std::chrono::microseconds after{0};
    keyhook::notification event;  // its Tenant is filled in once the tenant is read
    std::string path;             // where it is in the document: "event" or "events[3].event"
};

// The events of a document whose "events" array is read one entry at a time
// (read_timed_events): each entry is read by its table as it arrives and
// kept as a timed_event, never as its DOM, so J3's bound applies to what is
// kept. Past max_timed_events, entries are only counted.
struct timed_events {
    std::vector<timed_event> events;  // document order
    std::size_t count = 0;            // entries of "events"
    std::optional<keyhook::error> first_error;

    // The memory one kept event takes (J3's accounting of what is held).
    static std::size_t heap_bytes(const std::string& s) noexcept { return s.capacity() > 15 ? s.capacity() + 1 : 0; }
    static std::size_t bytes_of(const timed_event& t) noexcept {
        const auto& n = t.event;
        return heap_bytes(n.folder_name) + heap_bytes(n.service_name) + heap_bytes(n.entity_id) +
               heap_bytes(n.audit_type) + heap_bytes(n.file_name) + heap_bytes(n.service_version_id) +
               heap_bytes(n.tenant) + heap_bytes(t.path);
    }

    // One entry of "events" (try_parse_json_each's callback): the bytes kept for it.
    keyhook::result<std::size_t> add(nlohmann::json& entry, std::size_t i, keyhook::timestamp start) {
        ++count;
        if (count > max_timed_events || first_error) return std::size_t{0};
        const auto path = keyhook::json_path_index("events", i);
        auto read = keyhook::try_read_record<timed_event_input>(entry, path);
        if (!read) {
            // Reported once the document is read: the settings' faults come first.
            first_error = read.error();
            return std::size_t{0};
        }
        const std::chrono::microseconds offset{static_cast<std::int64_t>(std::llround(read->after * 1e6))};
        const std::size_t capacity = events.capacity();
        events.push_back(timed_event{offset, notification_of(std::move(read->event), {}, start + offset),
                                     keyhook::json_path_member(path, "event")});
        return (events.capacity() - capacity) * sizeof(timed_event) + bytes_of(events.back());
    }
};

// The input document of `text` with its "events" read into `out` entry by
// entry (J3 holds for the DOM of the rest plus the events kept); run's
// start: `start`.
inline keyhook::result<nlohmann::json> read_timed_events(const std::string& text, keyhook::timestamp start,
                                                         timed_events& out) {
    auto document = keyhook::try_parse_json_each(
        text, "events", [&](nlohmann::json& entry, std::size_t i) { return out.add(entry, i, start); });
    if (!document) return input_syntax_error(document.error());
    return document;
}

// The events of document j ("event" or "events", whose entries are in
// `streamed`), for tenant `tenant`, sorted by `after` (document order among
// equals).
inline keyhook::result<std::vector<timed_event>> events_of(const nlohmann::json& j, std::optional<event_input>&& one,
                                                           timed_events&& streamed, const std::string& tenant,
                                                           keyhook::timestamp start) {
    const auto many = j.find("events");
    const bool has_many = many != j.end();  // null too: it is not an array
    if (one && has_many)
        return keyhook::error{keyhook::errc::invalid_value, "events", "give \"event\" or \"events\", not both"};
    if (!one && !has_many) return keyhook::missing_member_error("event");
    std::vector<timed_event> events;
    if (one) {
        events.push_back(
            timed_event{std::chrono::microseconds{0}, notification_of(std::move(*one), tenant, start), "event"});
        return events;
    }
    if (!many->is_array()) return keyhook::wrong_type("events", "an array of timed events", *many);
    if (streamed.count == 0) return keyhook::error{keyhook::errc::invalid_value, "events", "holds no event"};
    if (streamed.count > max_timed_events)
        return keyhook::error{keyhook::errc::limit_exceeded, "events",
                              std::to_string(streamed.count) + " events; at most " + std::to_string(max_timed_events)};
    if (streamed.first_error) return std::move(*streamed.first_error);
    events = std::move(streamed.events);
    for (auto& e : events) e.event.tenant = tenant;
    std::stable_sort(events.begin(), events.end(),
                     [](const timed_event& a, const timed_event& b) { return a.after < b.after; });
    return events;
}

}  // namespace examples
