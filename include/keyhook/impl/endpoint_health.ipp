#pragma once
// keyhook: definitions of endpoint_health.hpp.

#include <algorithm>
#include <ostream>
#include <string_view>
#include <utility>

#include "keyhook/endpoint_health.hpp"
#include "keyhook/detail/endpoint_health_table.hpp"
#include "keyhook/escape.hpp"

namespace keyhook {

KEYHOOK_INLINE std::string_view to_string(notice_type t) noexcept {
    return detail::enum_names<notice_type>::values[static_cast<std::size_t>(t)];
}

KEYHOOK_INLINE bool endpoint_health::is_equal(const endpoint_health& a, const endpoint_health& b) noexcept {
    return detail::members_equal(a, b);
}

KEYHOOK_INLINE bool endpoint_state::is_equal(const endpoint_state& a, const endpoint_state& b) noexcept {
    return detail::members_equal(a, b);
}

KEYHOOK_INLINE bool operational_notice::is_equal(const operational_notice& a, const operational_notice& b) {
    return detail::members_equal(a, b);
}

KEYHOOK_INLINE bool health_decision::is_equal(const health_decision& a, const health_decision& b) {
    return a.what == b.what && a.state == b.state && a.notices == b.notices;
}

namespace detail {
inline void print_time(std::ostream& os, const std::optional<timestamp>& t) {
    if (t)
        os << format_timestamp(*t);
    else
        os << '-';
}
}  // namespace detail

KEYHOOK_INLINE std::ostream& endpoint_state::print_to(std::ostream& os, const endpoint_state& s) {
    os << (s.disabled ? "disabled" : "enabled") << ", failing since ";
    detail::print_time(os, s.health.fail_since);
    os << ", last status ";
    if (s.health.last_status)
        os << *s.health.last_status;
    else
        os << '-';
    os << ", throttle tat ";
    detail::print_time(os, s.throttle.tat);
    return os;
}

KEYHOOK_INLINE std::ostream& operational_notice::print_to(std::ostream& os, const operational_notice& n) {
    os << to_string(n.type) << " at " << format_timestamp(n.at) << " for webhook "
       << detail::quote_input(n.webhook_name);
    if (n.delivery) os << ", " << *n.delivery;
    os << ", failing since ";
    detail::print_time(os, n.fail_since);
    return os;
}

KEYHOOK_INLINE std::vector<error> health_policy_problems(const health_policy& policy) {
    std::vector<error> out;
    if (policy.failing_notice_attempt == 0)
        out.push_back({errc::invalid_value, "failing_notice_attempt",
                       "attempts are numbered from 1: with 0 no failing notice is ever sent"});
    if (policy.disable_after <= timestamp::duration::zero())
        out.push_back({errc::invalid_value, "disable_after",
                       "must be more than 0: the endpoint would be disabled at its first failure"});
    return out;
}

KEYHOOK_INLINE health_decision record_attempt(const endpoint_state& state, const attempt_report& report, timestamp now,
                                              const health_policy& policy) {
    health_decision d;
    d.state = state;
    const auto& outcome = report.result.outcome;
    const timestamp sent = report.result.sent_at;
    auto& h = d.state.health;
    // Attempts may be reported out of order by several workers. The health
    // keeps the latest success and the failures sent after it (earliest
    // first, at most max_failures_kept); the failing period starts at the
    // earliest of them. Every step compares sent_at values, so while the
    // bound holds the result is the same for every order of the reports.
    // A success and a failure sent at the same instant: the success wins.
    auto& kept = h.failures_after_success;
    if (kept.empty() && h.fail_since) {
        // A state stored before the list existed: its period's two ends.
        kept.push_back(*h.fail_since);
        if (h.last_failure_at && *h.last_failure_at > *h.fail_since) kept.push_back(*h.last_failure_at);
    }
    if (outcome.succeeded()) {
        if (h.last_success_at && sent <= *h.last_success_at) return d;  // an older success changes nothing
        h.last_success_at = sent;
        kept.erase(kept.begin(), std::upper_bound(kept.begin(), kept.end(), sent));
        if (kept.empty() && h.last_failure_at && *h.last_failure_at > sent)
            kept.push_back(*h.last_failure_at);  // past the bound: the latest failure known
        if (kept.empty()) {
            h.fail_since.reset();
            h.last_status.reset();
            h.last_failure_at.reset();
        } else {
            h.fail_since = kept.front();
        }
        return d;
    }
    // Kept only when a stored state can hold it (H10's 100 to 599).
    std::optional<int> status = outcome.status();
    if (status && (*status < 100 || *status > 599)) status.reset();
    const bool before_success = h.last_success_at && sent <= *h.last_success_at;
    if (!before_success) {
        if (!h.last_failure_at || sent >= *h.last_failure_at) {
            h.last_failure_at = sent;
            h.last_status = status;
        }
        kept.insert(std::upper_bound(kept.begin(), kept.end(), sent), sent);
        if (kept.size() > endpoint_health::max_failures_kept) kept.pop_back();  // the earliest are kept
        h.fail_since = kept.front();
    }
    const auto notice = [&](notice_type type, bool with_delivery) {
        operational_notice n;
        n.type = type;
        n.at = now;
        n.webhook_name = report.webhook_name;
        if (with_delivery) n.delivery = report.delivery;
        n.fail_since = h.fail_since;
        n.last_attempt_at = sent;
        n.last_status = status;
        return n;
    };
    if (report.attempt == policy.failing_notice_attempt) {
        d.notices.push_back(notice(notice_type::attempt_failing, true));
        d.what = health_decision::action::notify_failing;
    }
    if (report.gave_up) d.notices.push_back(notice(notice_type::attempt_exhausted, true));
    if (state.disabled) return d;  // already announced
    // The period as known now, from its start to its latest failure (a
    // failure reported late may move the start back). Saturating: instants
    // the host builds may lie near the clock's ends.
    const bool too_long = h.fail_since && detail::difference_saturating(h.last_failure_at.value_or(*h.fail_since),
                                                                        *h.fail_since) >= policy.disable_after;
    if (outcome.gone() || too_long) {
        d.state.disabled = true;
        d.state.disabled_at = now;
        d.notices.push_back(notice(notice_type::endpoint_disabled, false));
        d.what = health_decision::action::disable;
    }
    return d;
}

KEYHOOK_INLINE operational_notice endpoint_enabled_notice(const endpoint_state& before, const std::string& webhook_name,
                                                          timestamp now) {
    const auto& h = before.health;
    operational_notice n;
    n.type = notice_type::endpoint_enabled;
    n.at = now;
    n.webhook_name = webhook_name;
    n.fail_since = h.fail_since;
    n.last_attempt_at = h.last_failure_at ? *h.last_failure_at
                        : h.fail_since    ? *h.fail_since
                                          : before.disabled_at.value_or(now);
    n.last_status = h.last_status;
    return n;
}

KEYHOOK_INLINE throttle_decision throttle_delivery(const endpoint_state& state, const throttle_policy& policy,
                                                   timestamp now) noexcept {
    throttle_decision d;
    d.state = state;
    if (policy.per_second == 0) {
        d.send_now = true;
        return d;
    }
    const rate_limit limit{policy.per_second, std::chrono::seconds{1}, 1};
    const auto r = check_rate(limit, state.throttle, 1, now);
    if (r.allowed) {
        d.send_now = true;
        d.state.throttle = r.state;
        return d;
    }
    // A cost of 1 never exceeds a burst of 1, so K13 always gives a retry time.
    d.send_at = r.retry_at ? *r.retry_at : now;
    return d;
}

KEYHOOK_INLINE endpoint_state endpoint_registry::state(const std::string& webhook_name) const {
    const std::lock_guard<std::mutex> lock(mutex_);
    const auto it = states_.find(webhook_name);
    return it == states_.end() ? endpoint_state{} : it->second;
}

KEYHOOK_INLINE bool endpoint_registry::is_disabled(const std::string& webhook_name) const {
    const std::lock_guard<std::mutex> lock(mutex_);
    const auto it = states_.find(webhook_name);
    return it != states_.end() && it->second.disabled;
}

KEYHOOK_INLINE health_decision endpoint_registry::record(const attempt_report& report, timestamp now,
                                                         const health_policy& policy) {
    const std::lock_guard<std::mutex> lock(mutex_);
    auto& s = states_[report.webhook_name];
    auto d = record_attempt(s, report, now, policy);
    s = d.state;
    return d;
}

KEYHOOK_INLINE throttle_decision endpoint_registry::throttle(const std::string& webhook_name,
                                                             const throttle_policy& policy, timestamp now) {
    const std::lock_guard<std::mutex> lock(mutex_);
    auto& s = states_[webhook_name];
    auto d = throttle_delivery(s, policy, now);
    s = d.state;
    return d;
}

KEYHOOK_INLINE void endpoint_registry::enable(const std::string& webhook_name) {
    const std::lock_guard<std::mutex> lock(mutex_);
    auto& s = states_[webhook_name];
    s = enable_endpoint(s);
}

KEYHOOK_INLINE void endpoint_registry::set(const std::string& webhook_name, const endpoint_state& s) {
    const std::lock_guard<std::mutex> lock(mutex_);
    states_[webhook_name] = s;
}

}  // namespace keyhook

#if defined(KEYHOOK_BUILDING_COMPILED) && !defined(KEYHOOK_BUILDING_COMPILED_CRYPTO)
// Compiled mode: the JSON forms a program's translation units only declare.
#include <nlohmann/json.hpp>
namespace keyhook {
#define KEYHOOK_ENDPOINT_JSON(Json)                                \
    template void to_json<Json>(Json&, const operational_notice&); \
    template void to_json<Json>(Json&, const endpoint_state&);     \
    template result<endpoint_state> try_endpoint_state_from_json<Json>(const Json&, std::string_view);
KEYHOOK_ENDPOINT_JSON(nlohmann::json)
KEYHOOK_ENDPOINT_JSON(nlohmann::ordered_json)
#undef KEYHOOK_ENDPOINT_JSON
}  // namespace keyhook
#endif
