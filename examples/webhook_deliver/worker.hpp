// webhook_deliver's one delivery loop (work), over one delivery_store
// interface with three backends: in memory (examples/shared/memory_store.hpp,
// without --store), SQLite and PostgreSQL (--store, rule B6). A file's
// deliveries are enqueued, then the store's due deliveries worked; with a
// store they can be listed. The store keeps each delivery's tenant, webhook
// name, body and history, and each webhook's settings, all keyed by (tenant,
// webhook name); an attempt is signed with the keys its tenant's webhook has
// stored at that moment.
//
// The loop takes its clock as a parameter (run_clock, attempt.hpp): in
// memory, the run's virtual timeline (waits scaled by --time-scale, 0
// allowed); on a store, B6's timeline, the wall clock's from the epoch and
// scale the store keeps. Leases, their renewal before each attempt, the H10
// health and H11 throttle rows are the same code for every backend. Each
// attempt goes to the store's history with its duration, its transport
// error and its response's first 1 KiB, the webhook's secrets replaced
// (O5). The operator's actions on a store are in actions.hpp.
//
// O4 (with --metrics-listen): each recorded attempt is counted by the word
// of its line and timed, the store-wide gauges (pending deliveries, disabled
// webhooks) are read from the store at most once a second between attempts,
// and each failed store operation is counted and told to /healthz. A worker
// that polls for ever (--work without --until-empty) rides out a store that
// fails: it says so at most once a second with the count of repeats (O3),
// tries again four times a second, and says when the store answers again
// with the count of failed operations; its leases run out
// meanwhile, so other workers take its deliveries over.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <chrono>
#include <cstdint>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <thread>
#include <vector>

#include <unistd.h>

#include <nlohmann/json.hpp>
#include <openssl/crypto.h>

#include "attempt.hpp"
#include "delivery_input.hpp"
#include "key_sets.hpp"
#include "keyhook/crypto/random.hpp"
#include "keyhook/crypto/signed_dispatch.hpp"
#include "keyhook/delivery_state.hpp"
#include "keyhook/dispatch.hpp"
#include "keyhook/endpoint_health.hpp"
#include "keyhook/json_input.hpp"
#include "keyhook/webhook_json.hpp"
#include "keyhook/webhook_validation.hpp"
#include "shared/delivery_store.hpp"
#include "shared/dispatch_input.hpp"
#include "shared/metrics.hpp"
#include "shared/request_log.hpp"

namespace deliver {

// H12's key for the ids of what is enqueued: KEYHOOK_DELIVERY_ID_KEY (32 hex
// digits) when set, which every producer of the host must share; else the
// store's own, made at random by the first enqueue and kept in the store, so
// that enqueueing a file again finds the same ids. Errors say what is wrong,
// never the key.
// KEYHOOK_DELIVERY_ID_KEY when set (with a store or without): nullopt when
// unset, else the key or what is wrong with it (O1: a usage error).
inline std::optional<keyhook::result<keyhook::delivery_id_key>> delivery_id_key_from_environment() {
    const char* env = std::getenv("KEYHOOK_DELIVERY_ID_KEY");
    if (!env) return std::nullopt;
    auto key = keyhook::delivery_id_key::try_from_hex(env);
    if (!key)
        return keyhook::result<keyhook::delivery_id_key>{
            keyhook::error{key.error().code, "KEYHOOK_DELIVERY_ID_KEY", key.error().message}};
    return key;
}

inline keyhook::result<keyhook::delivery_id_key> delivery_id_key_for(examples::store::delivery_store& store) {
    if (auto key = delivery_id_key_from_environment()) return *key;
    unsigned char random[keyhook::delivery_id_key::size];
    keyhook::crypto::openssl_random{}(random, sizeof random);
    static constexpr char hex[] = "0123456789abcdef";
    std::string candidate;
    for (const unsigned char c : random) {
        candidate += hex[c >> 4];
        candidate += hex[c & 15];
    }
    OPENSSL_cleanse(random, sizeof random);
    auto key = keyhook::delivery_id_key::try_from_hex(store.delivery_id_key(candidate));
    if (!key) return keyhook::error{key.error().code, "keyhook_settings.deliveryIdKey", key.error().message};
    return key;
}

struct work_options {
    bool until_empty = false;
    // Set (by SIGINT or SIGTERM) to stop: the worker finishes the attempt in
    // flight and returns; its leases run out for other workers.
    const std::atomic<bool>* stop = nullptr;
    std::chrono::microseconds lease = std::chrono::seconds(30);  // B6 policy
    // A transfer's overall limit (--timeout): before each attempt the
    // delivery's lease is renewed to at least now + timeout + allowance,
    // the allowance being one lease (reading the webhook's settings and
    // throttle, recording the outcome and health). After a crash another
    // worker takes over within max(lease, timeout + allowance).
    std::chrono::microseconds timeout = std::chrono::seconds(30);
    std::size_t batch = 64;
    keyhook::endpoint_policy policy;
    // Each attempt's detail (duration, error, response) to the store's
    // history (O5); off in memory, where no one can list it.
    bool keep_history = true;
    // O4, with --metrics-listen (either may be null): attempts counted and
    // timed, the store-wide gauges, the store's failures and successes.
    examples::metrics::registry* metrics = nullptr;
    examples::metrics::health* health = nullptr;
    // --work without --until-empty: a failing store is waited out, not an
    // end (the worker's exit 3).
    bool ride_out_store_failures = false;
};

inline std::int64_t real_micros() { return examples::store::micros(clock_now()); }

// A name no other worker has: the process id and 64 random bits.
inline std::string worker_name() {
    unsigned char r[8];
    keyhook::crypto::openssl_random{}(r, sizeof r);
    std::string name = "worker-" + std::to_string(static_cast<long long>(::getpid())) + "-";
    static constexpr char hex[] = "0123456789abcdef";
    for (const unsigned char c : r) {
        name += hex[c >> 4];
        name += hex[c & 15];
    }
    return name;
}

// "webhook \"NAME\" of tenant \"TENANT\"", each name JSON-quoted (ASCII, escaped), for messages.
inline std::string webhook_text(const examples::store::webhook_key& key) {
    const auto quoted = [](const std::string& s) {
        return nlohmann::json(s).dump(-1, ' ', true, nlohmann::json::error_handler_t::replace);
    };
    return "webhook " + quoted(key.name) + " of tenant " + quoted(key.tenant);
}

// A webhook as a worker uses it: its settings as stored, validated, with its
// throttle (H11) and key set (B5) and the 410 flag of the settings row.
struct stored_webhook {
    keyhook::validated_webhook webhook;
    std::uint64_t max_per_second = 0;
    std::optional<keyhook::crypto::signing_key_set> keys;
    bool disabled = false;
    std::vector<std::string> secrets;  // what is replaced in stored errors and responses (O5)
};

// The stored settings of the tenant's webhook, or nothing (said on standard
// error) when there are none or they do not read back.
inline std::optional<stored_webhook> read_webhook(examples::store::delivery_store& store,
                                                  const examples::store::webhook_key& key, const work_options& o) {
    const auto row = store.webhook(key);
    if (!row) return std::nullopt;
    auto stored = try_read_stored_settings(row->settings);
    auto valid = stored ? keyhook::try_validate_webhook(stored->config, o.policy)
                        : keyhook::result<keyhook::validated_webhook>(stored.error());
    if (!valid) {
        std::cerr << "webhook_deliver: the stored settings of " << webhook_text(key) << ": " << valid.error() << '\n';
        return std::nullopt;
    }
    return stored_webhook{std::move(*valid), stored->max_per_second, std::move(stored->key_set), row->disabled,
                          secret_texts(row->settings)};
}

// H10, H11: the webhook's one endpoint_state as stored (a fresh one when it has none).
struct endpoint_read {
    keyhook::endpoint_state state;
    std::int64_t version = 0;
};
inline endpoint_read read_endpoint(examples::store::delivery_store& store, const examples::store::webhook_key& key) {
    const auto row = store.endpoint(key);
    if (row.version == 0) return {};
    auto json = keyhook::try_parse_json(row.state);
    auto s =
        json ? keyhook::try_endpoint_state_from_json(*json) : keyhook::result<keyhook::endpoint_state>(json.error());
    if (!s)
        throw std::runtime_error("the stored state of " + webhook_text(key) +
                                 " does not read back: " + s.error().what());
    return endpoint_read{*s, row.version};
}

// Applies `f` (state in, decision with .state out) to the webhook's one
// state with compare-and-set, again from a fresh read whenever another
// worker changed it meanwhile, so no worker folds into a stale copy. Returns
// the decision whose state was stored.
template <class F>
auto update_endpoint(examples::store::delivery_store& store, const examples::store::webhook_key& key, F f) {
    for (;;) {
        const auto read = read_endpoint(store, key);
        auto decision = f(read.state);
        if (decision.state == read.state) return decision;  // nothing to write
        if (store.put_endpoint(key, nlohmann::json(decision.state).dump(), read.version)) return decision;
    }
}

// Works the store: claims due deliveries in batches (memory follows the batch,
// not the store), attempts each, records each outcome with the next due time
// in one transaction. Returns when nothing is pending (until_empty), when
// asked to stop, or never, with the counts of the deliveries this worker saw
// end: delivered, gave up (B2), or ended by their webhook's disabling (H10)
// -- the last two webhook_deliver's exit 4.
// Due deliveries are claimed the earliest first; the in-memory store breaks
// ties by enqueue order, so a run without --store sends in the order it
// always did: each event's deliveries at the event's time on the timeline,
// interleaved with the retries by their due times.
// O4: what the worker tells of its store (health, the repeated failure's
// report, O3's pace) across the loop's restarts.
class store_outcomes {
public:
    explicit store_outcomes(const work_options& o) : o_(o) {}
    void answered() {
        if (o_.health) o_.health->store_ok();
        if (const auto all = failures_.ended())
            std::cerr << "webhook_deliver: the store answers again (after " << *all << " failed operations)"
                      << std::endl;
    }
    void failed(const std::exception& e) {
        if (o_.metrics) o_.metrics->store_error(examples::metrics::store::delivery);
        if (o_.health) o_.health->store_failed();
        if (const auto repeats = failures_.occurred(std::chrono::steady_clock::now()))
            std::cerr << "webhook_deliver: the store failed: " << keyhook::escape_text(e.what())
                      << (*repeats ? " (" + std::to_string(*repeats) + " more since the last report)" : std::string())
                      << "; trying again" << std::endl;
    }

private:
    const work_options& o_;
    examples::request_log::repeated_error failures_;
};

// O4: the store-wide gauges, read from the store at most once a second.
inline void refresh_gauges(examples::store::delivery_store& store, const work_options& o,
                           std::chrono::steady_clock::time_point& last) {
    if (!o.metrics) return;
    const auto now = std::chrono::steady_clock::now();
    if (last != std::chrono::steady_clock::time_point{} && now - last < std::chrono::seconds(1)) return;
    o.metrics->deliveries_pending(static_cast<double>(store.pending()));
    o.metrics->endpoints_disabled(static_cast<double>(store.disabled_webhooks()));
    last = now;
}

// The loop of work(), until it returns or a store operation throws.
inline void work_loop(examples::store::delivery_store& store, const work_options& o,
                      const examples::http::client_options& client, run_clock& clock, run_counts& counts,
                      const std::string& owner, store_outcomes& outcomes) {
    std::chrono::steady_clock::time_point gauges_read{};
    const auto lease = o.lease.count();
    const auto stopping = [&o] { return o.stop && o.stop->load(); };
    // Idle polls: short against the lease, so a stopped worker's deliveries are taken over soon after it ends.
    const auto poll = std::chrono::microseconds(std::clamp<std::int64_t>(lease / 8, 1000, 200000));
    for (;;) {
        if (stopping()) return;
        refresh_gauges(store, o, gauges_read);
        const auto claimed_at = real_micros();
        auto batch = store.claim(examples::store::micros(clock.now()), claimed_at, claimed_at + lease, owner, o.batch);
        outcomes.answered();
        if (batch.empty()) {
            if (const auto due = store.next_due(real_micros())) {
                clock.wait_toward(examples::store::from_micros(*due), std::chrono::milliseconds(o.stop ? 200 : 1000));
                continue;
            }
            if (o.until_empty && store.pending() == 0) return;
            std::this_thread::sleep_for(poll);  // the rest is leased by other workers, or nothing is due yet
            continue;
        }
        // Settings read once a batch: a configuration stored meanwhile (a new key) applies from the next.
        std::map<examples::store::webhook_key, std::optional<stored_webhook>> webhooks;
        for (auto& d : batch) {
            if (stopping()) return;
            // B6: the batch's leases may have run out while earlier deliveries
            // were attempted (a slow endpoint) and another worker may have
            // claimed this one: it is renewed for this attempt and its
            // recording, or skipped when this worker holds it no more.
            if (!store.renew(to_string(d.id), owner, real_micros() + o.timeout.count() + lease)) {
                std::cerr << "webhook_deliver: " << d.id << ": skipped: its lease ran out before its turn and "
                          << "another worker holds it now\n";
                continue;
            }
            // B6: the delivery's own tenant's webhook, never another tenant's of the same name.
            const auto key = d.key();
            auto found = webhooks.find(key);
            if (found == webhooks.end()) found = webhooks.emplace(key, read_webhook(store, key, o)).first;
            // H10: the webhook's one state, as every worker left it.
            if (!found->second || found->second->disabled || read_endpoint(store, key).state.disabled) {
                // Disabled or no usable settings: the delivery ends without an attempt, and says so (O5).
                d.status = keyhook::delivery_status::disabled;
                d.next_due.reset();
                d.ended_at = clock.now();
                if (store.record(d, owner, false)) {
                    ++counts.disabled;
                    print_ended_unsent(d.id, d.tenant, d.webhook, d.attempts.size(),
                                       found->second ? "its webhook is disabled: ended without an attempt"
                                                     : "its webhook has no usable settings: ended without an attempt");
                }
                continue;
            }
            auto& hook = *found->second;
            clock.wait_until(*d.next_due);
            // H11: over the webhook's rate, the delivery waits (recorded as
            // its next due time); that is no attempt.
            if (hook.max_per_second != 0) {
                const auto t = update_endpoint(store, key, [&](const keyhook::endpoint_state& s) {
                    return keyhook::throttle_delivery(s, keyhook::throttle_policy{hook.max_per_second}, clock.now());
                });
                if (!t.send_now) {
                    d.next_due = t.send_at;
                    store.record(d, owner, false);
                    continue;
                }
            }
            // The signature's timestamp is real time: the receiver checks it
            // against its clock; a key set's keys are those valid now on the run's timeline.
            auto request = keyhook::crypto::try_sign_delivery(hook.webhook, d.id, d.body, clock_now());
            if (request && hook.keys)
                request = sign_with_set(*hook.keys, std::move(*request), d.id, clock.now(), clock_now());
            const auto report = attempt(request, d.attempts, client, clock);
            auto decision = decided(report);
            // H10: folded into the webhook's one state before the delivery is recorded, so
            // a delivery whose attempt disables its webhook is recorded as ended.
            const auto health = update_endpoint(store, key, [&](const keyhook::endpoint_state& s) {
                return keyhook::record_attempt(s, health_report(d.webhook, d.id, d.attempts.size() + 1, report),
                                               clock.now());
            });
            const bool disable = health.state.disabled;
            if (disable) decision.what = keyhook::retry_decision::action::disable_webhook;
            keyhook::record_attempt(d, report.attempt, decision);
            if (d.status != keyhook::delivery_status::pending) d.ended_at = report.attempt.sent_at;
            const auto detail =
                detail_of(report, hook.secrets, std::string(disable ? "disabled" : outcome_name(decision.what)));
            if (!store.record(d, owner, disable, o.keep_history ? &detail : nullptr)) {
                std::cerr << "webhook_deliver: " << d.id << ": the lease ran out during the attempt; "
                          << "another worker has the delivery\n";
                continue;
            }
            if (disable) hook.disabled = true;
            if (o.metrics) {  // O4: the word of the attempt's line, and its HTTP request's time
                const auto word = attempt_outcome_word(report, disable);
                const auto at = std::find(examples::metrics::delivery_outcome_names.begin(),
                                          examples::metrics::delivery_outcome_names.end(), word);
                o.metrics->delivery_attempt(static_cast<examples::metrics::delivery_outcome>(
                                                at - examples::metrics::delivery_outcome_names.begin()),
                                            report.duration);
            }
            if (disable)
                ++counts.disabled;
            else if (decision.what == keyhook::retry_decision::action::give_up)
                ++counts.gave_up;
            else if (decision.what == keyhook::retry_decision::action::succeeded)
                ++counts.delivered;
            print_attempt(d.id, d.tenant, d.webhook, d.attempts.size(), report, disable, hook.secrets);
            for (const auto& n : health.notices) print_notice(n, d.tenant);
        }
    }
}

inline run_counts work(examples::store::delivery_store& store, const work_options& o,
                       const examples::http::client_options& client, run_clock& clock) {
    const std::string owner = worker_name();
    run_counts counts;
    store_outcomes outcomes(o);
    const auto stopping = [&o] { return o.stop && o.stop->load(); };
    for (;;) {
        try {
            work_loop(store, o, client, clock, counts, owner, outcomes);
            return counts;
        } catch (const std::exception& e) {
            if (!o.ride_out_store_failures) throw;
            outcomes.failed(e);
        }
        // A quarter of a second before trying again (as key_gateway reads its store), cut short by a stop.
        for (int i = 0; i < 5 && !stopping(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(50));
        if (stopping()) return counts;
    }
}

}  // namespace deliver
