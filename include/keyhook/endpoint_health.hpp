// keyhook: what a host remembers about a webhook's endpoint across deliveries
// (rules H10 and H11). One endpoint_state per webhook holds its health (the
// failing period), the disabled flag and the throttle's GCRA state; every
// worker updates that one value (in memory under a lock, or in a shared store
// with compare-and-set), never a copy per delivery. The functions here are
// pure: state, attempt and `now` in, new state, decision and notices out.
//
//   auto d = keyhook::record_attempt(state, report, now);   // after each attempt
//   state = d.state;                                        // store it
//   for (const auto& n : d.notices) send_to_owner(nlohmann::json(n));
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <iosfwd>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "keyhook/config.hpp"
#include "keyhook/detail/std_function.hpp"
#include "keyhook/detail/enum_names.hpp"
#include "keyhook/delivery_id.hpp"
#include "keyhook/error.hpp"
#include "keyhook/rate_limit.hpp"
#include "keyhook/result.hpp"
#include "keyhook/retry.hpp"
#include "keyhook/timestamps.hpp"

namespace keyhook {

// H10 policy: the attempt of a delivery whose failure is reported as failing,
// and how long an endpoint may fail before it is disabled.
struct health_policy {
    std::size_t failing_notice_attempt = 4;
    timestamp::duration disable_after = std::chrono::hours{24 * 5};
};

// The problems of a policy, each with its member's name as path (empty: none):
// failing_notice_attempt 0 (no attempt is number 0: never notified) and a
// disable_after of 0 or less (an endpoint would be disabled at its first
// failure). record_attempt applies a policy as given.
[[nodiscard]] KEYHOOK_INLINE std::vector<error> health_policy_problems(const health_policy& policy);

// The failing period (empty while the endpoint is healthy) and the latest
// success, all by the attempts' sent_at, so that reports arriving out of
// order fold as in time order (H10).
struct endpoint_health {
    std::optional<timestamp> fail_since;       // the earliest failure known after the latest success
    std::optional<int> last_status;            // the period's latest failure's HTTP status (none: no response)
    std::optional<timestamp> last_failure_at;  // the period's latest failure (none: read as fail_since)
    std::optional<timestamp> last_success_at;  // the latest success ever reported (none: none yet)
    // The failures sent after the latest success, earliest first, at most
    // max_failures_kept (the earliest kept): what lets a success reported
    // late move the period's start to the right failure (H10).
    std::vector<timestamp> failures_after_success;
    static constexpr std::size_t max_failures_kept = 64;
    // operator== is derived from the member table (detail/endpoint_health_table.hpp).

    // The JSON forms, derived from the member tables (detail/endpoint_health_table.hpp);
    // in compiled mode the library provides them for nlohmann::json and ordered_json.
    // A notice is written (for the owner); the state is written and read back
    // (for the host's store):
    //   {"failSince": T4 or null, "lastStatus": int or null, "disabled": bool,
    //    "lastFailureAt": T4 or null, "lastSuccessAt": T4 or null,
    //    "failuresAfterSuccess": [T4, ...] (left out when empty; at most 64),
    //    "disabledAt": T4 or null, "throttleTat": T4 or null}
    friend bool operator==(const endpoint_health& a, const endpoint_health& b) noexcept { return is_equal(a, b); }
    friend bool operator!=(const endpoint_health& a, const endpoint_health& b) noexcept { return !(a == b); }

private:
    static KEYHOOK_INLINE bool is_equal(const endpoint_health& a, const endpoint_health& b) noexcept;
};

// Everything kept per webhook (H10, H11): one value, shared by every worker.
struct endpoint_state {
    endpoint_health health;
    bool disabled = false;
    std::optional<timestamp> disabled_at;
    rate_state throttle;  // H11's GCRA state (K13, burst 1)
    // operator== is derived from the member table (detail/endpoint_health_table.hpp).

    friend std::ostream& operator<<(std::ostream& os, const endpoint_state& x) { return print_to(os, x); }
    friend bool operator==(const endpoint_state& a, const endpoint_state& b) noexcept { return is_equal(a, b); }
    friend bool operator!=(const endpoint_state& a, const endpoint_state& b) noexcept { return !(a == b); }

private:
    static KEYHOOK_INLINE std::ostream& print_to(std::ostream& os, const endpoint_state& x);
    static KEYHOOK_INLINE bool is_equal(const endpoint_state& a, const endpoint_state& b) noexcept;
};

// The operational notices (H10, O5), named as Svix names its operational webhooks.
enum class notice_type { attempt_failing, attempt_exhausted, endpoint_disabled, endpoint_enabled };

namespace detail {
template <>
struct enum_names<notice_type> {
    static constexpr std::string_view values[] = {"message.attempt.failing", "message.attempt.exhausted",
                                                  "endpoint.disabled", "endpoint.enabled"};
};
}  // namespace detail

[[nodiscard]] KEYHOOK_INLINE std::string_view to_string(notice_type t) noexcept;

// A notice for the webhook's owner. JSON form (T4 timestamps):
//   {"type": "endpoint.disabled", "timestamp": "...",
//    "data": {"endpointId": name, "msgId": id (when there is one),
//             "failSince": start of the failing period,
//             "lastAttempt": {"timestamp": ..., "responseStatusCode": status or null}}}
struct operational_notice {
    notice_type type = notice_type::attempt_failing;
    timestamp at{};
    std::string webhook_name;
    std::optional<delivery_id> delivery;
    std::optional<timestamp> fail_since;
    timestamp last_attempt_at{};
    std::optional<int> last_status;

    friend bool operator==(const operational_notice& a, const operational_notice& b) { return is_equal(a, b); }
    friend bool operator!=(const operational_notice& a, const operational_notice& b) { return !(a == b); }

    friend std::ostream& operator<<(std::ostream& os, const operational_notice& x) { return print_to(os, x); }

private:
    static KEYHOOK_INLINE bool is_equal(const operational_notice& a, const operational_notice& b);
    static KEYHOOK_INLINE std::ostream& print_to(std::ostream& os, const operational_notice& x);
};

// One attempt of one delivery, as the host reports it after sending.
struct attempt_report {
    std::string webhook_name;
    delivery_id delivery;
    std::size_t attempt = 1;  // 1 for the first attempt of this delivery
    delivery_attempt result;  // when it was sent and how it ended
    bool gave_up = false;     // the retry plan gives up after it (B2's give_up)
};

// What to do about the endpoint after an attempt.
struct health_decision {
    enum class action { keep, notify_failing, disable };

    action what = action::keep;
    endpoint_state state;                     // store this
    std::vector<operational_notice> notices;  // in this order: failing, exhausted, disabled

    friend bool operator==(const health_decision& a, const health_decision& b) { return is_equal(a, b); }
    friend bool operator!=(const health_decision& a, const health_decision& b) { return !(a == b); }

private:
    static KEYHOOK_INLINE bool is_equal(const health_decision& a, const health_decision& b);
};

// H10: folds one attempt into the state, by its sent_at whatever the order
// the workers report in. The health keeps the latest success and up to 64
// failures sent after it; the failing period starts at the earliest of them,
// so while at most 64 are kept every order of the reports gives the same
// health. A 2xx later than the latest success drops the failures sent at or
// before it (the period ends when none is left, or starts at the earliest
// left); a failure sent at or before the latest success changes no period.
// Past the bound the earliest 64 are kept, and a success after all of them
// starts the period at the latest failure known. Every failure yields message.attempt.failing
// when it is attempt number failing_notice_attempt and
// message.attempt.exhausted when the delivery gave up; a 410 disables the
// endpoint (B2), as does a failure coming disable_after or more after the
// period began (endpoint.disabled, with the period's start). An endpoint
// already disabled stays so and is not announced again. A status outside 100
// to 599 (libcurl's 0 for "no response") is kept as no status. `now` stamps
// the notices.
[[nodiscard]] KEYHOOK_INLINE health_decision record_attempt(const endpoint_state& state, const attempt_report& report,
                                                            timestamp now, const health_policy& policy = {});

// H10: the host enables a disabled webhook again: health and the disabled flag
// are cleared (the throttle's state is kept: it is about rate, not failure).
[[nodiscard]] inline endpoint_state enable_endpoint(const endpoint_state& state) noexcept {
    endpoint_state s;
    s.throttle = state.throttle;
    return s;
}

// H10, O5: the notice that the host enabled the webhook whose state was
// `before` (endpoint.enabled), stamped `now`: failSince is the failing
// period that enabling closed (none when there was none), lastAttempt that
// period's latest failure and its status. When the health knows no failure,
// lastAttempt's time is when the endpoint was disabled, or else `now`.
[[nodiscard]] KEYHOOK_INLINE operational_notice endpoint_enabled_notice(const endpoint_state& before,
                                                                        const std::string& webhook_name, timestamp now);

// H11 policy: at most `per_second` deliveries a second to one webhook, burst
// 1; 0 means no throttle.
struct throttle_policy {
    std::uint64_t per_second = 0;
};

struct throttle_decision {
    bool send_now = false;
    timestamp send_at{};   // when send_now is false: defer the delivery to then
    endpoint_state state;  // store this (changed only when send_now)
};

// H11: may a delivery (first attempt or retry) go to this webhook at `now`?
// K13's arithmetic with limit per_second per second and burst 1: when the
// rate would be exceeded, the delivery is deferred to the time K13 gives. A
// deferral is not an attempt: nothing is recorded in health or history.
[[nodiscard]] KEYHOOK_INLINE throttle_decision throttle_delivery(const endpoint_state& state,
                                                                 const throttle_policy& policy, timestamp now) noexcept;

// One endpoint_state per webhook, in memory, for the workers of one process:
// every call locks, reads the webhook's one state, applies the pure function
// and stores the result before unlocking, so concurrent workers never fold
// into copies. (Several processes share the state through a store with
// compare-and-set instead, using the pure functions above.)
class endpoint_registry {
public:
    // The state of `webhook_name` (a fresh one when never seen).
    [[nodiscard]] KEYHOOK_INLINE endpoint_state state(const std::string& webhook_name) const;
    [[nodiscard]] KEYHOOK_INLINE bool is_disabled(const std::string& webhook_name) const;
    // record_attempt on the webhook's state, stored.
    KEYHOOK_INLINE health_decision record(const attempt_report& report, timestamp now,
                                          const health_policy& policy = {});
    // throttle_delivery on the webhook's state, stored when the delivery may go.
    KEYHOOK_INLINE throttle_decision throttle(const std::string& webhook_name, const throttle_policy& policy,
                                              timestamp now);
    // enable_endpoint on the webhook's state.
    KEYHOOK_INLINE void enable(const std::string& webhook_name);
    // Replaces a webhook's state (loaded from the host's store).
    KEYHOOK_INLINE void set(const std::string& webhook_name, const endpoint_state& s);
    // For dispatch_options::is_disabled; the registry must outlive its use.
    [[nodiscard]] std::function<bool(const std::string&)> disabled_predicate() const {
        return [this](const std::string& name) { return is_disabled(name); };
    }

private:
    mutable std::mutex mutex_;
    std::map<std::string, endpoint_state, std::less<>> states_;
};

template <class Json>
void to_json(Json& j, const operational_notice& n);

template <class Json>
void to_json(Json& j, const endpoint_state& s);

// Reads the stored form back. Members may be missing (read as healthy,
// enabled, unthrottled; a state stored before lastFailureAt and lastSuccessAt
// existed reads as having neither); errors name the path ("endpoints.crm.failSince") and
// the reason: a wrong type, a timestamp T1 refuses, a status outside 100..599.
template <class Json = nlohmann::json>
[[nodiscard]] result<endpoint_state> try_endpoint_state_from_json(const detail::non_deduced_t<Json>& j,
                                                                  std::string_view path = "");

}  // namespace keyhook

#if KEYHOOK_DEFINITIONS
// The member table, which includes the definitions (impl/endpoint_health.ipp) at its end.
#include "keyhook/detail/endpoint_health_table.hpp"
#endif
