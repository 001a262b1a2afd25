// keyhook: the retry plan for a webhook delivery (rule B2). A pure function from
// the attempts made so far and `now` to what to do next: send at a time,
// stop because it succeeded, give up, or disable the webhook.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <iosfwd>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "keyhook/config.hpp"
#include "keyhook/error.hpp"
#include "keyhook/result.hpp"
#include "keyhook/timestamps.hpp"

namespace keyhook {

// A server's Retry-After (RFC 9110 10.2.3): a delay or an instant.
class retry_after {
public:
    // A negative delay is clamped to 0 (no wait), as a header cannot say one
    // and the stored form (B6) holds only delays of 0 or more.
    [[nodiscard]] static constexpr retry_after delay(std::chrono::seconds d) noexcept {
        return retry_after(d < std::chrono::seconds::zero() ? std::chrono::seconds::zero() : d, {}, false);
    }
    [[nodiscard]] static constexpr retry_after at(timestamp t) noexcept { return retry_after({}, t, true); }

    [[nodiscard]] constexpr bool is_delay() const noexcept { return !absolute_; }
    // Precondition for each: the matching form.
    [[nodiscard]] constexpr std::chrono::seconds delay_value() const noexcept { return delay_; }
    [[nodiscard]] constexpr timestamp time_value() const noexcept { return time_; }

    // The instant it names, a delay being counted from `response_time`
    // (saturating: a delay of seconds::max() is the end of time, not the past).
    [[nodiscard]] constexpr timestamp resolve(timestamp response_time) const noexcept {
        return absolute_ ? time_ : detail::add_saturating(response_time, delay_);
    }

    friend constexpr bool operator==(const retry_after& a, const retry_after& b) noexcept {
        return a.absolute_ == b.absolute_ && (a.absolute_ ? a.time_ == b.time_ : a.delay_ == b.delay_);
    }
    friend constexpr bool operator!=(const retry_after& a, const retry_after& b) noexcept { return !(a == b); }

private:
    constexpr retry_after(std::chrono::seconds d, timestamp t, bool absolute) noexcept
        : delay_(d), time_(t), absolute_(absolute) {}
    std::chrono::seconds delay_{};
    timestamp time_{};
    bool absolute_ = false;

    friend std::ostream& operator<<(std::ostream& os, const retry_after& x) { return print_to(os, x); }

    static KEYHOOK_INLINE std::ostream& print_to(std::ostream& os, const retry_after& x);
};

// Reads a Retry-After header value: delta-seconds ("120") or an IMF-fixdate
// ("Wed, 21 Oct 2015 07:28:00 GMT"), with optional surrounding spaces or tabs.
// The obsolete RFC 850 and asctime date forms are refused. Errors: errc::
// invalid_header, path "Retry-After", quoting the value.
[[nodiscard]] KEYHOOK_INLINE result<retry_after> try_parse_retry_after(std::string_view value);

[[nodiscard]] KEYHOOK_INLINE retry_after parse_retry_after(std::string_view value);

// How one attempt ended: an HTTP response with a status, or none at all.
class attempt_outcome {
public:
    enum class kind { http_response, transport_failure, timed_out };

    // A response with this status code (any code: only 2xx and 410 are special).
    [[nodiscard]] static constexpr attempt_outcome http(int status) noexcept { return {kind::http_response, status}; }
    // No response: the connection, DNS or TLS failed, or the connection dropped.
    [[nodiscard]] static constexpr attempt_outcome transport_failure() noexcept { return {kind::transport_failure, 0}; }
    // No response in the host's time limit.
    [[nodiscard]] static constexpr attempt_outcome timed_out() noexcept { return {kind::timed_out, 0}; }

    [[nodiscard]] constexpr kind what() const noexcept { return kind_; }
    [[nodiscard]] constexpr std::optional<int> status() const noexcept {
        return kind_ == kind::http_response ? std::optional<int>(status_) : std::nullopt;
    }
    [[nodiscard]] constexpr bool succeeded() const noexcept {
        return kind_ == kind::http_response && status_ >= 200 && status_ <= 299;
    }
    [[nodiscard]] constexpr bool gone() const noexcept { return kind_ == kind::http_response && status_ == 410; }
    // 429 and 503 are the statuses whose Retry-After is honoured.
    [[nodiscard]] constexpr bool asks_to_wait() const noexcept {
        return kind_ == kind::http_response && (status_ == 429 || status_ == 503);
    }

    friend constexpr bool operator==(const attempt_outcome& a, const attempt_outcome& b) noexcept {
        return a.kind_ == b.kind_ && a.status_ == b.status_;
    }
    friend constexpr bool operator!=(const attempt_outcome& a, const attempt_outcome& b) noexcept { return !(a == b); }

private:
    constexpr attempt_outcome(kind k, int status) noexcept : kind_(k), status_(status) {}
    kind kind_;
    int status_;

    friend std::ostream& operator<<(std::ostream& os, const attempt_outcome& x) { return print_to(os, x); }

    static KEYHOOK_INLINE std::ostream& print_to(std::ostream& os, const attempt_outcome& x);
};

// One attempt: when it was sent, how it ended, and the server's Retry-After if
// it gave one (read it with parse_retry_after).
struct delivery_attempt {
    timestamp sent_at;
    attempt_outcome outcome = attempt_outcome::transport_failure();
    std::optional<keyhook::retry_after> retry_after;

    friend bool operator==(const delivery_attempt& a, const delivery_attempt& b) { return is_equal(a, b); }
    friend bool operator!=(const delivery_attempt& a, const delivery_attempt& b) { return !(a == b); }
    friend std::ostream& operator<<(std::ostream& os, const delivery_attempt& x) { return print_to(os, x); }

private:
    static KEYHOOK_INLINE bool is_equal(const delivery_attempt& a, const delivery_attempt& b);
    static KEYHOOK_INLINE std::ostream& print_to(std::ostream& os, const delivery_attempt& x);
};

// B2 policy. schedule[i] is the wait before attempt i + 1, counted from when
// attempt i was sent (schedule[0], for the first attempt, is counted from
// `now`). Each wait is lengthened by a random 0 to max_jitter_percent % of
// itself: jitter only adds, so no attempt comes earlier than the schedule says.
// A Retry-After on 429 or 503 is a minimum wait, capped at max_retry_after.
struct retry_policy {
    using duration = timestamp::duration;

    std::vector<duration> schedule{std::chrono::seconds{0},  std::chrono::seconds{5}, std::chrono::minutes{5},
                                   std::chrono::minutes{30}, std::chrono::hours{2},   std::chrono::hours{5},
                                   std::chrono::hours{10},   std::chrono::hours{10}};
    std::uint32_t max_jitter_percent = 20;
    duration max_retry_after = std::chrono::hours{10};

    // Attempts in all, the first included.
    [[nodiscard]] std::size_t max_attempts() const noexcept { return schedule.size(); }

    friend bool operator==(const retry_policy& a, const retry_policy& b) { return is_equal(a, b); }
    friend bool operator!=(const retry_policy& a, const retry_policy& b) { return !(a == b); }

private:
    static KEYHOOK_INLINE bool is_equal(const retry_policy& a, const retry_policy& b);
};

// What to do next.
struct retry_decision {
    enum class action { send, succeeded, give_up, disable_webhook };

    action what = action::send;
    // For `send`: when, and which attempt it is (1 for the first). For the
    // others send_at is left at the epoch and `attempt` is the attempt that
    // decided it (the 2xx, the 410, the last failure).
    timestamp send_at{};
    std::size_t attempt = 0;

    friend bool operator==(const retry_decision& a, const retry_decision& b) {
        return a.what == b.what && a.send_at == b.send_at && a.attempt == b.attempt;
    }
    friend bool operator!=(const retry_decision& a, const retry_decision& b) { return !(a == b); }

    friend std::ostream& operator<<(std::ostream& os, const retry_decision& x) { return print_to(os, x); }

private:
    static KEYHOOK_INLINE std::ostream& print_to(std::ostream& os, const retry_decision& x);
};

namespace detail {

// floor(max_extra * u / (2^32 - 1)), exact and without overflow: u = 0 gives
// no jitter, u = 2^32 - 1 the full max_extra.
constexpr std::int64_t scale_jitter(std::int64_t max_extra, std::uint32_t u) noexcept {
    constexpr std::uint64_t d = 0xFFFFFFFFu;
    const auto m = static_cast<std::uint64_t>(max_extra);
    const std::uint64_t q = m / d, r = m % d;
    return static_cast<std::int64_t>(q * u + r * u / d);
}

// The first problem of a policy, if any.
KEYHOOK_INLINE std::optional<error> check_retry_policy(const retry_policy& p);

// Where try_plan_next_attempt takes its 4 jitter bytes from: the host's random
// source behind an interface, so the plan itself is compiled once.
class jitter_source {
public:
    // Fills out[0..4), or returns the error the source threw.
    virtual std::optional<error> draw(unsigned char (&out)[4]) = 0;

protected:
    ~jitter_source() = default;
};

// try_plan_next_attempt once the policy is valid and the history in order.
KEYHOOK_INLINE result<retry_decision> plan_after_checks(const std::vector<delivery_attempt>& history, timestamp now,
                                                        const retry_policy& policy, jitter_source& jitter);

}  // namespace detail

// B2: the next step for a delivery, from its attempts so far (oldest first)
// and `now`:
//   - the first 2xx is success, a 410 disables the webhook (the first such
//     attempt decides; any other status, a transport failure or a time-out is
//     a failure to retry);
//   - after policy.max_attempts() failures, give up;
//   - otherwise send attempt n + 1 at sent_at(n) + schedule[n] + jitter, or
//     later if a 429 or 503 carried a Retry-After (a minimum, capped at
//     policy.max_retry_after, a delay counted from sent_at(n)); never earlier
//     than `now`.
// Jitter takes 4 bytes from `random` (a callable `void(unsigned char*,
// std::size_t)`) read big-endian as u: extra = floor(wait * max_jitter_percent
// / 100 * u / (2^32 - 1)). The same bytes give the same plan; no bytes are
// taken when the wait or the jitter percentage is zero, or nothing is sent.
// Refused: an invalid policy (path "policy..."), attempts out of order (path
// "history[i].sent_at"), an exception from `random` (returned, never thrown).
template <class RandomSource>
[[nodiscard]] result<retry_decision> try_plan_next_attempt(const std::vector<delivery_attempt>& history,
                                                           RandomSource&& random, timestamp now,
                                                           const retry_policy& policy = retry_policy{}) {
    static_assert(std::is_invocable_v<std::remove_reference_t<RandomSource>&, unsigned char*, std::size_t>,
                  "a random source is callable as void(unsigned char*, std::size_t)");
    struct source final : detail::jitter_source {
        std::remove_reference_t<RandomSource>& random;
        explicit source(std::remove_reference_t<RandomSource>& r) noexcept : random(r) {}
        std::optional<error> draw(unsigned char (&out)[4]) override {
            try {
                random(out, sizeof out);
            } catch (...) {
                return detail::current_host_error("random");
            }
            return std::nullopt;
        }
    } jitter(random);
    if (auto e = detail::check_retry_policy(policy)) return std::move(*e);
    for (std::size_t i = 1; i < history.size(); ++i)
        if (history[i].sent_at < history[i - 1].sent_at)
            return error{errc::invalid_value, detail::path_member(detail::path_index("history", i), "sent_at"),
                         "earlier than the attempt before it"};
    return detail::plan_after_checks(history, now, policy, jitter);
}

template <class RandomSource>
[[nodiscard]] retry_decision plan_next_attempt(const std::vector<delivery_attempt>& history, RandomSource&& random,
                                               timestamp now, const retry_policy& policy = retry_policy{}) {
    return try_plan_next_attempt(history, std::forward<RandomSource>(random), now, policy).value();
}

}  // namespace keyhook

#if KEYHOOK_DEFINITIONS
#include "keyhook/impl/retry.ipp"
#endif
