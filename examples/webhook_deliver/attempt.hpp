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
#include "keyhook/escape.hpp"
#include "keyhook/dispatch.hpp"
#include "keyhook/endpoint_health.hpp"
#include "keyhook/http.hpp"
#include "keyhook/retry.hpp"
#include "keyhook/timestamps.hpp"
#include "shared/curl_client.hpp"
#include "shared/delivery_store.hpp"

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

// One attempt made: what it was, what came back, how long it took, and the plan after it.
struct attempt_report {
    keyhook::delivery_attempt attempt;
    examples::http::response answer;
    std::chrono::microseconds duration{0};
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
    const auto took = std::chrono::steady_clock::now() - started;
    r.duration = std::chrono::duration_cast<std::chrono::microseconds>(took);
    clock.advance(took);
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

// O5: the texts of a webhook's secrets, from its settings as the store keeps
// them (every secret in plaintext): each authentication value as configured
// and percent-encoded (as a query parameter carries it), the signing secret
// and every key of its key set, each also without its whsec_ or whsk_
// prefix. The longest first, so that a secret holding another is replaced
// whole.
inline std::vector<std::string> secret_texts(const std::string& settings) {
    std::vector<std::string> out;
    const auto add = [&out](const nlohmann::json& v) {
        if (!v.is_string() || v.get_ref<const std::string&>().empty()) return;
        const auto& text = v.get_ref<const std::string&>();
        out.push_back(text);
        out.push_back(keyhook::percent_encode(text));
        for (const std::string_view prefix : {"whsec_", "whsk_"})
            if (text.size() > prefix.size() && text.compare(0, prefix.size(), prefix) == 0)
                out.push_back(text.substr(prefix.size()));
    };
    const auto j = nlohmann::json::parse(settings, nullptr, false);
    if (j.is_object()) {
        if (const auto auth = j.find("auth"); auth != j.end() && auth->is_array())
            for (const auto& p : *auth)
                if (p.is_object() && p.contains("value")) add(p["value"]);
        if (const auto s = j.find("signingSecret"); s != j.end()) add(*s);
        if (const auto keys = j.find("signingKeys"); keys != j.end() && keys->is_object()) {
            if (const auto current = keys->find("current"); current != keys->end() && current->is_array())
                for (const auto& k : *current) add(k);
            if (const auto old = keys->find("oldKeys"); old != keys->end() && old->is_array())
                for (const auto& k : *old)
                    if (k.is_object() && k.contains("key")) add(k["key"]);
        }
    }
    std::sort(out.begin(), out.end(), [](const std::string& a, const std::string& b) {
        return a.size() != b.size() ? a.size() > b.size() : a < b;
    });
    out.erase(std::unique(out.begin(), out.end()), out.end());
    return out;
}

// O5 (O1): `text` with every whole occurrence of each of `secrets` replaced
// by [redacted].
inline std::string redact_secrets(std::string text, const std::vector<std::string>& secrets) {
    for (const auto& s : secrets) {
        if (s.empty()) continue;
        for (auto at = text.find(s); at != std::string::npos; at = text.find(s, at + keyhook::redacted_text.size()))
            text.replace(at, s.size(), keyhook::redacted_text);
    }
    return text;
}

// O5: what a store's history keeps of a response body: its first 1 KiB.
inline constexpr std::size_t kept_response_bytes = 1024;
// The bytes of a response read for it: 1 KiB and room for the longest
// secret text (an authentication value of 4096 bytes, percent-encoded), so
// that a secret the kept part begins is replaced whole before the cut.
inline constexpr std::size_t read_response_bytes = kept_response_bytes + 3 * 4096;

// O5: an attempt as the store's history keeps it: its duration, its
// transport error and its response body's first 1 KiB, each with the
// webhook's secrets replaced (before the cut) and escaped (P1), and what
// followed it (`result`: "retry", "delivered", "gave_up", "disabled").
inline examples::store::attempt_detail detail_of(const attempt_report& r, const std::vector<std::string>& secrets,
                                                 std::string result) {
    examples::store::attempt_detail d;
    d.duration = r.duration;
    if (!r.answer.status) d.error = keyhook::escape_text(redact_secrets(r.answer.error, secrets));
    auto body = redact_secrets(r.answer.body, secrets);
    d.response_cut = r.answer.body_truncated || body.size() > kept_response_bytes;
    if (body.size() > kept_response_bytes) body.resize(kept_response_bytes);
    d.response = keyhook::escape_text(body);
    d.result = std::move(result);
    return d;
}

// One JSON line per attempt (see main.cpp), naming the tenant and its
// webhook (B6: a webhook's name is the tenant's own). `endpoint_disabled`:
// the webhook is disabled after this attempt (H10), which ends the delivery
// whatever B2 planned.
inline void print_attempt(const keyhook::delivery_id& id, const std::string& tenant, const std::string& webhook,
                          std::size_t number, const attempt_report& r, bool endpoint_disabled = false,
                          const std::vector<std::string>& secrets = {}) {
    nlohmann::ordered_json line;
    line["deliveryId"] = to_string(id);
    line["tenant"] = tenant;
    line["webhook"] = webhook;
    line["attempt"] = number;
    line["sentAt"] = keyhook::format_timestamp(r.attempt.sent_at);
    line["status"] = r.answer.status ? nlohmann::ordered_json(*r.answer.status) : nlohmann::ordered_json(nullptr);
    line["error"] = r.answer.status ? nlohmann::ordered_json(nullptr)
                                    : nlohmann::ordered_json(redact_secrets(r.answer.error, secrets));
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

// H10, O5: the line of a delivery that ended without an attempt because its
// webhook is disabled (or has no usable settings): the attempt line's
// members, "attempt" the attempts its sequence had, "sentAt" and "status"
// null, "error" saying why, "outcome" "disabled".
inline void print_ended_unsent(const keyhook::delivery_id& id, const std::string& tenant, const std::string& webhook,
                               std::size_t attempts, std::string_view why) {
    nlohmann::ordered_json line;
    line["deliveryId"] = to_string(id);
    line["tenant"] = tenant;
    line["webhook"] = webhook;
    line["attempt"] = attempts;
    line["sentAt"] = nullptr;
    line["status"] = nullptr;
    line["error"] = why;
    line["outcome"] = "disabled";
    std::cout << line.dump(-1, ' ', true, nlohmann::ordered_json::error_handler_t::replace) << std::endl;
}

// The counts of a run (O5): the deliveries this run saw end each way.
struct run_counts {
    std::size_t delivered = 0;
    std::size_t gave_up = 0;
    std::size_t disabled = 0;
    [[nodiscard]] std::size_t undelivered() const { return gave_up + disabled; }
};

// O1, O5: the last line of every run on standard output,
// {"summary": {"delivered", "gaveUp", "disabled", "pending"}}.
inline void print_summary(const run_counts& c, std::uint64_t pending) {
    nlohmann::ordered_json counts;
    counts["delivered"] = c.delivered;
    counts["gaveUp"] = c.gave_up;
    counts["disabled"] = c.disabled;
    counts["pending"] = pending;
    nlohmann::ordered_json line;
    line["summary"] = std::move(counts);
    std::cout << line.dump() << std::endl;
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
