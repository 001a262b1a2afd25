// keyhook: a delivery's state as a value a store can keep (rule B6): the
// webhook's name, the body, the delivery id, every attempt with its outcome
// and time, and when the next attempt is due. It holds no signed request and
// no key: each attempt is signed again with the keys valid then. Its JSON form
// round-trips exactly (same value back) and is read under J1 to J3.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <limits>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "keyhook/detail/enum_names.hpp"
#include "keyhook/detail/json_members.hpp"
#include "keyhook/dispatch.hpp"
#include "keyhook/error.hpp"
#include "keyhook/escape.hpp"
#include "keyhook/config.hpp"
#include "keyhook/json_input.hpp"
#include "keyhook/retry.hpp"
#include "keyhook/timestamps.hpp"

namespace keyhook {

// Where a delivery stands. Every status but `pending` is final.
enum class delivery_status {
    pending,    // an attempt is due at next_due
    delivered,  // an attempt got a 2xx
    gave_up,    // the retry plan's last attempt failed
    disabled,   // its webhook answered 410 (to this delivery or another) or was disabled
};

namespace detail {
template <>
struct enum_names<delivery_status> {
    static constexpr std::string_view values[] = {"pending", "delivered", "gave_up", "disabled"};
};
}  // namespace detail

namespace detail {
inline std::optional<delivery_status> delivery_status_from_name(std::string_view name) noexcept {
    for (std::size_t i = 0; i < std::size(enum_names<delivery_status>::values); ++i)
        if (enum_names<delivery_status>::values[i] == name) return static_cast<delivery_status>(i);
    return std::nullopt;
}
}  // namespace detail

// B6: one delivery of one notification to one webhook. Invariant (checked
// when read from JSON): next_due is set exactly when status is pending, and
// the attempts are in time order.
struct delivery_state {
    delivery_id id;
    std::string webhook;  // the webhook's name: its settings are looked up at each attempt
    std::string body;     // the request body, as dispatch wrote it (UTF-8)
    std::vector<delivery_attempt> attempts;
    delivery_status status = delivery_status::pending;
    std::optional<timestamp> next_due;

    friend bool operator==(const delivery_state& a, const delivery_state& b) {
        return a.id == b.id && a.webhook == b.webhook && a.body == b.body && a.attempts == b.attempts &&
               a.status == b.status && a.next_due == b.next_due;
    }
    friend bool operator!=(const delivery_state& a, const delivery_state& b) { return !(a == b); }
};

// Prints the id, webhook, status, attempt count, next due time and the body's
// size, never the body (it may carry what the host did not mean to log).
inline std::ostream& operator<<(std::ostream& os, const delivery_state& s) {
    os << s.id << " to " << detail::quote_input(s.webhook) << ": " << s.status << ", " << s.attempts.size()
       << " attempt(s)";
    if (s.next_due) os << ", next at " << format_timestamp(*s.next_due);
    return os << " (" << s.body.size() << " body bytes)";
}

// A new delivery of `r`, its first attempt due at `due`.
[[nodiscard]] inline delivery_state make_delivery_state(const outbound_request& r, timestamp due) {
    return delivery_state{r.id(), r.webhook_name(), r.body(), {}, delivery_status::pending, due};
}

// Records `attempt` and what the retry plan decided after it (B2): the next
// due time for `send`, else the final status. A store writes the result in
// one transaction (B6).
inline void record_attempt(delivery_state& s, const delivery_attempt& attempt, const retry_decision& decision) {
    s.attempts.push_back(attempt);
    using action = retry_decision::action;
    s.next_due.reset();
    switch (decision.what) {
        case action::send:
            s.status = delivery_status::pending;
            s.next_due = decision.send_at;
            return;
        case action::succeeded: s.status = delivery_status::delivered; return;
        case action::give_up: s.status = delivery_status::gave_up; return;
        case action::disable_webhook: s.status = delivery_status::disabled; return;
    }
}

// ---------------------------------------------------------------------------
// JSON form (exact for times within years 0001..9999, which format_timestamp
// writes with every microsecond):
//   {"id": "msg_...", "webhook": string, "body": string,
//    "status": "pending" | "delivered" | "gave_up" | "disabled",
//    "nextDue": timestamp (pending) or null,
//    "attempts": [{"sentAt": timestamp,
//                  "outcome": "http" | "transport_failure" | "timed_out",
//                  "status": integer (for "http"),
//                  "retryAfter": {"delay": seconds >= 0} | {"at": timestamp} (optional)}]}

namespace detail {
inline std::string_view outcome_kind_name(attempt_outcome::kind k) noexcept {
    switch (k) {
        case attempt_outcome::kind::http_response: return "http";
        case attempt_outcome::kind::transport_failure: return "transport_failure";
        case attempt_outcome::kind::timed_out: return "timed_out";
    }
    return "transport_failure";
}

template <class Json>
std::optional<error> read_state_timestamp(const Json& obj, const char* name, const std::string& base, timestamp& out) {
    std::string text;
    if (auto e = read_member_string(obj, name, base, true, text)) return e;
    if (!parse_timestamp_into(text, out)) return timestamp_error(path_member(base, name), text);
    return std::nullopt;
}

// An integer member within [lo, hi] (J2: anything else, 1e400 or 2.5 included, is refused with its path).
template <class Json>
std::optional<error> read_state_integer(const Json& obj, const char* name, const std::string& base, std::int64_t lo,
                                        std::int64_t hi, std::int64_t& out) {
    const auto* m = json_member(obj, name);
    const std::string path = path_member(base, name);
    if (!m) return missing_member_error(path);
    if (!m->is_number()) return wrong_type(path, "an integer", *m);
    if (m->is_number_unsigned()) {
        const auto v = m->template get<std::uint64_t>();
        if (v > static_cast<std::uint64_t>(hi))
            return error{errc::out_of_range, path, "must be at most " + std::to_string(hi)};
        out = static_cast<std::int64_t>(v);
    } else if (m->is_number_integer()) {
        out = m->template get<std::int64_t>();
    } else {
        return error{errc::out_of_range, path,
                     "must be an integer from " + std::to_string(lo) + " to " + std::to_string(hi)};
    }
    if (out < lo || out > hi)
        return error{errc::out_of_range, path,
                     "must be an integer from " + std::to_string(lo) + " to " + std::to_string(hi)};
    return std::nullopt;
}

template <class Json>
result<delivery_attempt> attempt_from_json(const Json& j, const std::string& base) {
    if (!j.is_object()) return wrong_type(base, "an object", j);
    delivery_attempt a;
    if (auto e = read_state_timestamp(j, "sentAt", base, a.sent_at)) return *e;
    std::string kind;
    if (auto e = read_member_string(j, "outcome", base, true, kind)) return *e;
    if (kind == "http") {
        std::int64_t status = 0;
        if (auto e = read_state_integer(j, "status", base, std::numeric_limits<int>::min(),
                                        std::numeric_limits<int>::max(), status))
            return *e;
        a.outcome = attempt_outcome::http(static_cast<int>(status));
    } else if (kind == "transport_failure" || kind == "timed_out") {
        if (json_member(j, "status"))
            return error{errc::invalid_value, path_member(base, "status"), "only an \"http\" outcome has a status"};
        a.outcome = kind == "timed_out" ? attempt_outcome::timed_out() : attempt_outcome::transport_failure();
    } else {
        return error{errc::invalid_value, path_member(base, "outcome"),
                     "expected \"http\", \"transport_failure\" or \"timed_out\", got " + quote_input(kind)};
    }
    if (const auto* ra = json_member(j, "retryAfter")) {
        const std::string path = path_member(base, "retryAfter");
        if (!ra->is_object()) return wrong_type(path, "an object", *ra);
        const bool has_delay = json_member(*ra, "delay") != nullptr, has_at = json_member(*ra, "at") != nullptr;
        if (has_delay == has_at)
            return error{errc::invalid_value, path, "expected exactly one of \"delay\" and \"at\""};
        if (has_delay) {
            std::int64_t seconds = 0;
            if (auto e = read_state_integer(*ra, "delay", path, 0, std::numeric_limits<std::int64_t>::max(), seconds))
                return *e;
            a.retry_after = retry_after::delay(std::chrono::seconds{seconds});
        } else {
            timestamp at{};
            if (auto e = read_state_timestamp(*ra, "at", path, at)) return *e;
            a.retry_after = retry_after::at(at);
        }
    }
    return a;
}
}  // namespace detail

template <class Json>
void to_json(Json& j, const delivery_attempt& a) {
    j = Json::object();
    j["sentAt"] = format_timestamp(a.sent_at);
    j["outcome"] = std::string(detail::outcome_kind_name(a.outcome.what()));
    if (const auto status = a.outcome.status()) j["status"] = *status;
    if (a.retry_after) {
        Json ra = Json::object();
        if (a.retry_after->is_delay())
            ra["delay"] = static_cast<std::int64_t>(a.retry_after->delay_value().count());
        else
            ra["at"] = format_timestamp(a.retry_after->time_value());
        j["retryAfter"] = std::move(ra);
    }
}

template <class Json>
void to_json(Json& j, const delivery_state& s) {
    j = Json::object();
    j["id"] = to_string(s.id);
    j["webhook"] = s.webhook;
    j["body"] = s.body;
    j["status"] = std::string(to_string(s.status));
    j["nextDue"] = s.next_due ? Json(format_timestamp(*s.next_due)) : Json(nullptr);
    Json attempts = Json::array();
    for (const auto& a : s.attempts) attempts.push_back(Json(a));
    j["attempts"] = std::move(attempts);
}

// The state a DOM holds. Errors carry the JSON path and the reason:
// "attempts[2].sentAt" (not a timestamp, or earlier than the attempt before
// it), "status" (unknown), "nextDue" (missing for a pending delivery, or given
// for an ended one), "attempts[0].status" (J2: not an int), "id" (not "msg_"
// and 32 lower-case hex digits).
template <class Json = nlohmann::json>
[[nodiscard]] result<delivery_state> try_delivery_state_from_json(const detail::non_deduced_t<Json>& j) {
    namespace kd = detail;
    if (!j.is_object()) return kd::wrong_type("", "an object", j);
    delivery_state s;
    std::string text;
    if (auto e = kd::read_member_string(j, "id", "", true, text)) return *e;
    auto id = try_parse_delivery_id(text);
    if (!id) return error{id.error().code, "id", id.error().message};
    s.id = *id;
    if (auto e = kd::read_member_string(j, "webhook", "", true, s.webhook)) return *e;
    if (auto e = kd::read_member_string(j, "body", "", true, s.body)) return *e;
    if (auto e = kd::read_member_string(j, "status", "", true, text)) return *e;
    auto status = kd::delivery_status_from_name(text);
    if (!status)
        return error{errc::invalid_value, "status",
                     "expected \"pending\", \"delivered\", \"gave_up\" or \"disabled\", got " + kd::quote_input(text)};
    s.status = *status;
    if (kd::json_member(j, "nextDue")) {
        timestamp due{};
        if (auto e = kd::read_state_timestamp(j, "nextDue", "", due)) return *e;
        s.next_due = due;
    }
    if (s.status == delivery_status::pending && !s.next_due)
        return error{errc::missing_member, "nextDue", "a pending delivery needs the time its next attempt is due"};
    if (s.status != delivery_status::pending && s.next_due)
        return error{errc::invalid_value, "nextDue",
                     "must be null once the delivery has ended (" + std::string(to_string(s.status)) + ")"};
    const auto* attempts = kd::json_member(j, "attempts", false);
    if (!attempts) return kd::missing_member_error("attempts");
    if (!attempts->is_array()) return kd::wrong_type("attempts", "an array", *attempts);
    s.attempts.reserve(attempts->size());  // J3: the DOM already holds one object per entry
    for (std::size_t i = 0; i < attempts->size(); ++i) {
        const std::string base = kd::path_index("attempts", i);
        auto a = kd::attempt_from_json((*attempts)[i], base);
        if (!a) return a.error();
        if (!s.attempts.empty() && a->sent_at < s.attempts.back().sent_at)
            return error{errc::invalid_value, kd::path_member(base, "sentAt"), "earlier than the attempt before it"};
        s.attempts.push_back(*a);
    }
    return s;
}

template <class Json = nlohmann::json>
[[nodiscard]] delivery_state delivery_state_from_json(const detail::non_deduced_t<Json>& j) {
    return try_delivery_state_from_json<Json>(j).value();
}

// From JSON text, read strictly (J1 to J3: a repeated member, a number out of
// range, a document too large or deep is refused with its path).
[[nodiscard]] KEYHOOK_INLINE result<delivery_state> try_parse_delivery_state(std::string_view text);
[[nodiscard]] KEYHOOK_INLINE delivery_state parse_delivery_state(std::string_view text);

// Compact JSON text of `s` (what a store keeps). Precondition: the body and
// webhook name are UTF-8, as dispatch makes them (else nlohmann's type_error 316).
[[nodiscard]] KEYHOOK_INLINE std::string write_delivery_state(const delivery_state& s);

}  // namespace keyhook

#if KEYHOOK_DEFINITIONS
#include "keyhook/impl/delivery_state.ipp"
#endif
