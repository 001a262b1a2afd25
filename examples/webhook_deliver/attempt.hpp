// webhook_deliver's one attempt, shared by the in-memory worker and the store
// worker: the run's clock, sending a signed request, the attempt value and the
// plan after it (B2), and the JSON line printed for it.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <iostream>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "keyhook/crypto/random.hpp"
#include "keyhook/dispatch.hpp"
#include "keyhook/endpoint_health.hpp"
#include "keyhook/http.hpp"
#include "keyhook/retry.hpp"
#include "keyhook/timestamps.hpp"
#include "shared/curl_client.hpp"

namespace deliver {

inline keyhook::timestamp clock_now() { return keyhook::to_timestamp(std::chrono::system_clock::now()); }

// The run's clock. Without a store, plans are made on a virtual timeline
// that starts at the real time; waiting for a planned instant sleeps the gap
// times the scale and then jumps there, so with --time-scale 0.001 five
// minutes pass in 0.3 s.
//
// With a store (B6) the timeline is the wall clock's, idle time and store
// time included: at scale 1 it is the wall clock; at scale F it is
// epoch + (real now - epoch) / F, the epoch being the one every worker on
// the store reads from it (kept there by the first), so all workers agree
// on due times, key expiries (B5) and failing periods (H10). Scale 0 has no
// such timeline: main refuses it with a store.
// The smallest --time-scale a store's workers may share: a timeline a
// million times faster than real time reaches the year 9999 (the last a
// timestamp holds) only after about three real days.
inline constexpr double min_store_time_scale = 1e-6;

class run_clock {
public:
    explicit run_clock(double scale) : scale_(scale), now_(clock_now()) {}
    // The store's timeline: `epoch` as the store keeps it.
    static run_clock anchored(double scale, keyhook::timestamp epoch) {
        run_clock c(scale);
        c.epoch_ = epoch;
        return c;
    }
    [[nodiscard]] keyhook::timestamp now() const {
        if (!epoch_) return now_;
        const auto real = clock_now();
        if (scale_ == 1.0) return real;
        // Saturated at the first and last instants a timestamp holds: a
        // scaled gap never overflows into a time before the epoch (B6).
        const double since = static_cast<double>((real - *epoch_).count()) / scale_;
        const double latest = static_cast<double>((keyhook::max_timestamp - *epoch_).count());
        const double earliest = static_cast<double>((keyhook::min_timestamp - *epoch_).count());
        if (since >= latest) return keyhook::max_timestamp;
        if (since <= earliest) return keyhook::min_timestamp;
        return *epoch_ + std::chrono::microseconds(static_cast<std::int64_t>(since));
    }
    void wait_until(keyhook::timestamp t) { wait_toward(t, std::chrono::microseconds::max()); }
    // Like wait_until, but sleeps at most `most` of real time (and moves the
    // timeline as far as that sleep covers): a worker polling a store still
    // sees work that others add meanwhile.
    void wait_toward(keyhook::timestamp t, std::chrono::microseconds most) {
        if (epoch_) {
            // The timeline follows the real clock: sleep the scaled gap, again
            // until it is reached (a sleep may end early or late).
            for (auto now = this->now(); now < t; now = this->now()) {
                const double real_us = static_cast<double>((t - now).count()) * scale_;
                const auto sleep = std::min<double>(std::max(real_us, 1.0), static_cast<double>(most.count()));
                std::this_thread::sleep_for(std::chrono::microseconds(static_cast<std::int64_t>(sleep)));
                if (sleep >= static_cast<double>(most.count())) return;
            }
            return;
        }
        if (t <= now_) return;
        const double gap = static_cast<double>((t - now_).count());
        const double real_us = gap * scale_;
        if (real_us > static_cast<double>(most.count())) {
            std::this_thread::sleep_for(most);
            now_ += std::chrono::microseconds(static_cast<std::int64_t>(static_cast<double>(most.count()) / scale_));
            return;
        }
        if (real_us >= 1) std::this_thread::sleep_for(std::chrono::microseconds(static_cast<std::int64_t>(real_us)));
        now_ = t;
    }
    // Time spent in a transfer counts once, unscaled (on the store's
    // timeline it has counted already, scaled as all time is).
    void advance(std::chrono::steady_clock::duration d) {
        if (!epoch_) now_ += std::chrono::duration_cast<keyhook::timestamp::duration>(d);
    }

private:
    double scale_;
    keyhook::timestamp now_;
    std::optional<keyhook::timestamp> epoch_;
};

inline std::string_view outcome_name(keyhook::retry_decision::action a) {
    using action = keyhook::retry_decision::action;
    switch (a) {
        case action::send: return "retry";
        case action::succeeded: return "delivered";
        case action::give_up: return "gave_up";
        case action::disable_webhook: return "disabled";
    }
    return "retry";
}

// One attempt made: what it was, what came back, and the plan after it.
struct attempt_report {
    keyhook::delivery_attempt attempt;
    examples::http::response answer;
    keyhook::result<keyhook::retry_decision> decision = keyhook::retry_decision{};
};

// Sends `request` (or records why it could not be made), then plans the next
// step from `history` with the attempt appended (B2). `history` is the
// delivery's attempts before this one.
inline attempt_report attempt(const keyhook::result<keyhook::http_request>& request,
                              std::vector<keyhook::delivery_attempt> history,
                              const examples::http::client_options& client, run_clock& clock) {
    attempt_report r;
    const auto started = std::chrono::steady_clock::now();
    const auto sent_at = clock.now();
    if (request) {
        r.answer = examples::http::send(*request, client);
    } else {
        r.answer.error = request.error().message;
    }
    clock.advance(std::chrono::steady_clock::now() - started);
    r.attempt = keyhook::delivery_attempt{sent_at, keyhook::attempt_outcome::transport_failure(), std::nullopt};
    if (r.answer.status)
        r.attempt.outcome = keyhook::attempt_outcome::http(*r.answer.status);
    else if (r.answer.timed_out)
        r.attempt.outcome = keyhook::attempt_outcome::timed_out();
    if (r.answer.retry_after)
        if (auto ra = keyhook::try_parse_retry_after(*r.answer.retry_after)) r.attempt.retry_after = *ra;
    history.push_back(r.attempt);
    static const keyhook::crypto::openssl_random random;
    r.decision = keyhook::try_plan_next_attempt(history, random, clock.now());
    return r;
}

// The plan's action, a planning error being the end of the delivery
// (cannot happen with the default policy and ordered attempts).
inline keyhook::retry_decision decided(const attempt_report& r) {
    if (r.decision) return *r.decision;
    return keyhook::retry_decision{keyhook::retry_decision::action::give_up, {}, 0};
}

// One JSON line per attempt (see main.cpp), naming the tenant and its
// webhook (B6: a webhook's name is the tenant's own). `endpoint_disabled`:
// the webhook is disabled after this attempt (H10), which ends the delivery
// whatever B2 planned.
inline void print_attempt(const keyhook::delivery_id& id, const std::string& tenant, const std::string& webhook,
                          std::size_t number, const attempt_report& r, bool endpoint_disabled = false) {
    nlohmann::ordered_json line;
    line["deliveryId"] = to_string(id);
    line["tenant"] = tenant;
    line["webhook"] = webhook;
    line["attempt"] = number;
    line["sentAt"] = keyhook::format_timestamp(r.attempt.sent_at);
    line["status"] = r.answer.status ? nlohmann::ordered_json(*r.answer.status) : nlohmann::ordered_json(nullptr);
    line["error"] = r.answer.status ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(r.answer.error);
    if (!r.decision) {
        line["outcome"] = "gave_up";
        line["planError"] = r.decision.error().message;
    } else if (endpoint_disabled) {
        line["outcome"] = "disabled";
    } else {
        line["outcome"] = outcome_name(r.decision->what);
        if (r.decision->what == keyhook::retry_decision::action::send)
            line["retryAt"] = keyhook::format_timestamp(r.decision->send_at);
    }
    // ensure_ascii: names cannot carry control or bidi characters to a terminal (P1).
    std::cout << line.dump(-1, ' ', true, nlohmann::ordered_json::error_handler_t::replace) << std::endl;
}

// H10: one JSON line per operational notice, {"operational": {...}}, the
// notice in the library's JSON form with the tenant first in its "data"
// (the notice names the webhook, whose name is the tenant's own: B6).
inline void print_notice(const keyhook::operational_notice& n, const std::string& tenant) {
    nlohmann::ordered_json notice = n;
    nlohmann::ordered_json data = {{"tenant", tenant}};
    for (auto& [name, value] : notice["data"].items()) data[name] = value;
    notice["data"] = std::move(data);
    nlohmann::ordered_json line;
    line["operational"] = std::move(notice);
    std::cout << line.dump(-1, ' ', true, nlohmann::ordered_json::error_handler_t::replace) << std::endl;
}

// H10: what the health fold needs of an attempt just made.
inline keyhook::attempt_report health_report(const std::string& webhook, const keyhook::delivery_id& id,
                                             std::size_t number, const attempt_report& r) {
    const auto d = decided(r);
    return keyhook::attempt_report{webhook, id, number, r.attempt, d.what == keyhook::retry_decision::action::give_up};
}

}  // namespace deliver
