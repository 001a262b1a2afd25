// keyhook: a delivery's state as a value a store can keep (rule B6): the
// webhook's name, the body, the delivery id, every attempt with its outcome
// and time, and when the next attempt is due. It holds no signed request and
// no key: each attempt is signed again with the keys valid then. Its JSON form
// round-trips exactly (same value back) and is read under J1 to J3.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <iosfwd>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "keyhook/detail/enum_names.hpp"
#include "keyhook/delivery_id.hpp"
#include "keyhook/detail/deferred.hpp"
#include "keyhook/error.hpp"
#include "keyhook/result.hpp"
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

    // Prints the id, webhook, status, attempt count, next due time and the body's
    // size, never the body (it may carry what the host did not mean to log).
    friend std::ostream& operator<<(std::ostream& os, const delivery_state& x) { return print_to(os, x); }
    // Derived from the member tables (detail/delivery_state_table.hpp); in
    // compiled mode the library provides the JSON forms for nlohmann::json and
    // nlohmann::ordered_json.
    friend bool operator==(const delivery_state& a, const delivery_state& b) { return is_equal(a, b); }
    friend bool operator!=(const delivery_state& a, const delivery_state& b) { return !(a == b); }

private:
    static KEYHOOK_INLINE std::ostream& print_to(std::ostream& os, const delivery_state& x);
    static KEYHOOK_INLINE bool is_equal(const delivery_state& a, const delivery_state& b);
};

class outbound_request;  // dispatch.hpp

// A new delivery of `r`, its first attempt due at `due`. A deferred
// definition (config.hpp): this header needs outbound_request declared only,
// so it does not bring dispatch.hpp; a caller has included it to hold `r`.
template <class D = void>
[[nodiscard]] KEYHOOK_INLINE delivery_state make_delivery_state(const detail::deferred_t<outbound_request, D>& r,
                                                                timestamp due);

// Records `attempt` and what the retry plan decided after it (B2): the next
// due time for `send`, else the final status. A store writes the result in
// one transaction (B6).
KEYHOOK_INLINE void record_attempt(delivery_state& s, const delivery_attempt& attempt, const retry_decision& decision);

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

template <class Json>
void to_json(Json& j, const delivery_attempt& a);

template <class Json>
void to_json(Json& j, const delivery_state& s);

// The state a DOM holds. Errors carry the JSON path and the reason:
// "attempts[2].sentAt" (not a timestamp, or earlier than the attempt before
// it), "status" (unknown), "nextDue" (missing for a pending delivery, or given
// for an ended one), "attempts[0].status" (J2: not an int), "id" (not "msg_"
// and 32 lower-case hex digits).
template <class Json = nlohmann::json>
[[nodiscard]] result<delivery_state> try_delivery_state_from_json(const detail::non_deduced_t<Json>& j);
template <class Json = nlohmann::json>
[[nodiscard]] delivery_state delivery_state_from_json(const detail::non_deduced_t<Json>& j) {
    return try_delivery_state_from_json<Json>(j).value();
}

// From JSON text, read strictly (J1 to J3: a repeated member, a number out of
// range, a document too large or deep is refused with its path).
// These three are deferred definitions (config.hpp).
template <class D = void>
[[nodiscard]] KEYHOOK_INLINE result<delivery_state> try_parse_delivery_state(std::string_view text);
template <class D = void>
[[nodiscard]] KEYHOOK_INLINE delivery_state parse_delivery_state(std::string_view text);

// Compact JSON text of `s` (what a store keeps). Precondition: the body and
// webhook name are UTF-8, as dispatch makes them (else nlohmann's type_error 316).
template <class D = void>
[[nodiscard]] KEYHOOK_INLINE std::string write_delivery_state(const delivery_state& s);

}  // namespace keyhook

#if KEYHOOK_DEFINITIONS
// The member table, which includes the definitions (impl/delivery_state.ipp) at its end.
#include "keyhook/detail/delivery_state_table.hpp"
#endif
