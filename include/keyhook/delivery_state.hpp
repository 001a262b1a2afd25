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
#include "keyhook/detail/delivery_id_form.hpp"
#include "keyhook/detail/json_members.hpp"
#include "keyhook/detail/members.hpp"
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

    // operator== is derived from the member table below.
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

// An attempt's outcome spreads over two members of the attempt: "outcome"
// (its kind) and "status" (the HTTP status, for "http" only).
struct outcome_form {
    static constexpr std::string_view names[] = {"outcome", "status"};
    using status_form = integer_form<int, std::numeric_limits<int>::min(), std::numeric_limits<int>::max()>;

    template <class Json>
    static std::optional<error> read_in(const Json& obj, const std::string& base, attempt_outcome& out) {
        std::string kind;
        if (auto e = read_member_string(obj, "outcome", base, true, kind)) return e;
        const auto* status = json_member(obj, "status");
        if (kind == "http") {
            if (!status) return missing_member_error(path_member(base, "status"));
            int code = 0;
            if (auto e = status_form::read(*status, path_member(base, "status"), code)) return e;
            out = attempt_outcome::http(code);
        } else if (kind == "transport_failure" || kind == "timed_out") {
            if (status)
                return error{errc::invalid_value, path_member(base, "status"), "only an \"http\" outcome has a status"};
            out = kind == "timed_out" ? attempt_outcome::timed_out() : attempt_outcome::transport_failure();
        } else {
            return error{errc::invalid_value, path_member(base, "outcome"),
                         "expected \"http\", \"transport_failure\" or \"timed_out\", got " + quote_input(kind)};
        }
        return std::nullopt;
    }
    template <class Json>
    static void write_in(Json& obj, const attempt_outcome& o) {
        obj["outcome"] = std::string(outcome_kind_name(o.what()));
        if (const auto status = o.status()) obj["status"] = *status;
    }
};

// {"delay": seconds >= 0} or {"at": timestamp}, exactly one.
struct retry_after_form {
    static constexpr form_kind kind = form_kind::value;
    static constexpr std::string_view expected = "an object";
    using delay_form = integer_form<std::chrono::seconds, 0, std::numeric_limits<std::int64_t>::max()>;

    template <class Json>
    static std::optional<error> read(const Json& v, const std::string& path, std::optional<retry_after>& out) {
        if (!v.is_object()) return wrong_type(path, expected, v);
        const auto* delay = json_member(v, "delay");
        const auto* at = json_member(v, "at");
        if ((delay != nullptr) == (at != nullptr))
            return error{errc::invalid_value, path, "expected exactly one of \"delay\" and \"at\""};
        if (delay) {
            std::chrono::seconds seconds{};
            if (auto e = delay_form::read(*delay, path_member(path, "delay"), seconds)) return e;
            out = retry_after::delay(seconds);
        } else {
            timestamp t{};
            if (auto e = read_value<time_form>(*at, path_member(path, "at"), t)) return e;
            out = retry_after::at(t);
        }
        return std::nullopt;
    }
    template <class Json>
    static void write(Json& slot, const retry_after& r) {
        slot = Json::object();
        if (r.is_delay())
            delay_form::write(slot["delay"], r.delay_value());
        else
            slot["at"] = format_timestamp(r.time_value());
    }
};
}  // namespace detail

// The member tables (detail/members.hpp): the JSON forms below are derived from them.
template <>
struct detail::members_of<delivery_attempt> {
    static constexpr auto rows = std::make_tuple(  //
        row<time_form>("sentAt", &delivery_attempt::sent_at, presence::required),
        spread<outcome_form>(&delivery_attempt::outcome),
        row<retry_after_form>("retryAfter", &delivery_attempt::retry_after, presence::omitted));
};
static_assert(detail::members_complete<delivery_attempt>());

template <>
struct detail::members_of<delivery_state> {
    // Read in this order: the first fault is reported.
    static constexpr auto rows = std::make_tuple(  //
        row<delivery_id_form>("id", &delivery_state::id, presence::required),
        row<text_form>("webhook", &delivery_state::webhook, presence::required),
        row<text_form>("body", &delivery_state::body, presence::required),
        row<named_enum_form<delivery_status>>("status", &delivery_state::status, presence::required),
        row<time_form>("nextDue", &delivery_state::next_due, presence::optional),
        row<list_form<record_form<delivery_attempt>>>("attempts", &delivery_state::attempts, presence::required));

    // B6's invariant: next_due set exactly while pending, attempts in time order.
    static std::optional<error> check(const delivery_state& s, const std::string& base) {
        if (s.status == delivery_status::pending && !s.next_due)
            return error{errc::missing_member, path_member(base, "nextDue"),
                         "a pending delivery needs the time its next attempt is due"};
        if (s.status != delivery_status::pending && s.next_due)
            return error{errc::invalid_value, path_member(base, "nextDue"),
                         "must be null once the delivery has ended (" + std::string(to_string(s.status)) + ")"};
        for (std::size_t i = 1; i < s.attempts.size(); ++i)
            if (s.attempts[i].sent_at < s.attempts[i - 1].sent_at)
                return error{errc::invalid_value, path_member(path_index(path_member(base, "attempts"), i), "sentAt"),
                             "earlier than the attempt before it"};
        return std::nullopt;
    }
};
static_assert(detail::members_complete<delivery_state>());

inline bool operator==(const delivery_state& a, const delivery_state& b) { return detail::members_equal(a, b); }
inline bool operator!=(const delivery_state& a, const delivery_state& b) { return !(a == b); }

template <class Json>
void to_json(Json& j, const delivery_attempt& a) {
    detail::write_members(j, a);
}

template <class Json>
void to_json(Json& j, const delivery_state& s) {
    detail::write_members(j, s);
}

// The state a DOM holds. Errors carry the JSON path and the reason:
// "attempts[2].sentAt" (not a timestamp, or earlier than the attempt before
// it), "status" (unknown), "nextDue" (missing for a pending delivery, or given
// for an ended one), "attempts[0].status" (J2: not an int), "id" (not "msg_"
// and 32 lower-case hex digits).
template <class Json = nlohmann::json>
[[nodiscard]] result<delivery_state> try_delivery_state_from_json(const detail::non_deduced_t<Json>& j) {
    delivery_state s;
    if (auto e = detail::read_members(j, std::string(), s)) return std::move(*e);
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
